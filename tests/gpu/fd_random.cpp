// fd_random.cpp - the GPU launchers of wave, heat and stencil (kernels/*.hip,
// the tiles of kernels/fd_gpu.h) against the CPU loops, bit for bit: random
// grids (rows of a multiple of 4 or not, fields aligned or one element off),
// halos, boxes (the interior or any sub-box), pattern fields, point sources,
// stencils of any taps and inputs. Built two ways:
//  - for NVIDIA (scripts/gpu/build-nvidia.sh, into .device/bin), on managed
//    memory; scripts/gpu/check.sh runs it on the GPU, where the tiles run
//    as they do in gflow (the ring's tensor copies included);
//  - on the CPU through HIP-CPU, a header-only HIP runtime that runs kernels
//    on host threads (scripts/gpu/emulate-fd.sh), so that a machine without
//    a GPU can check the tiles' indexing.
//   fd_random [TRIALS (200)]   ends with `N passed, N failed`
#ifdef GFLOW_HIP_ON_CUDA
#include "gf_hip.h"
#else
#include <hip/hip_runtime.h>
#endif
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>
extern "C" {
#include "builtin.h"
#include "heat.h"
#include "stencil.h"
#include "wave.h"
}

static std::mt19937_64 rng(12345);
static int irand(int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
static double drand() {
  return std::uniform_real_distribution<double>(-1, 1)(rng);
}

struct Field {
  std::shared_ptr<unsigned char> mem;
  gf_array a;
};
// `bytes` the kernels and the CPU loops both reach: managed memory on a GPU
static std::shared_ptr<unsigned char> allocate(size_t bytes) {
#ifdef GFLOW_HIP_ON_CUDA
  void *p = NULL;
  hipError_t err = hipMallocManaged(&p, bytes, hipMemAttachGlobal);
  if (err != hipSuccess) {
    fprintf(stderr, "fd_random: hipMallocManaged(%zu bytes): %s\n", bytes, hipGetErrorString(err));
    exit(2);
  }
  return std::shared_ptr<unsigned char>(static_cast<unsigned char *>(p),
                                        [](unsigned char *q) { (void)hipFree(q); });
#else
  return std::shared_ptr<unsigned char>(new unsigned char[bytes],
                                        std::default_delete<unsigned char[]>());
#endif
}
// shape, dtype, halo; misalign: data starts one element past a 64-byte boundary
static Field make(int ndim, const int64_t *shape, gf_dtype dt, int halo, bool misalign, bool fill) {
  Field f;
  memset(&f.a, 0, sizeof f.a);
  f.a.ndim = ndim;
  f.a.dtype = dt;
  f.a.halo = halo;
  int64_t n = 1;
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    f.a.shape[d] = d < ndim ? shape[d] : 1;
    f.a.spacing[d] = 1.0 - 0.1 * d;
    f.a.global_shape[d] = f.a.shape[d];
    n *= f.a.shape[d];
  }
  size_t es = dt == GF_F64 ? 8 : 4;
  f.mem = allocate(n * es + 128);
  uintptr_t p = (uintptr_t)f.mem.get();
  p = (p + 63) / 64 * 64 + (misalign ? es : 0);
  f.a.data = (void *)p;
  for (int64_t i = 0; i < n; i++) {
    double v = fill ? drand() : 0.5;
    if (dt == GF_F64)
      ((double *)p)[i] = v;
    else
      ((float *)p)[i] = (float)v;
  }
  return f;
}
static size_t bytes(const gf_array &a) {
  size_t n = a.dtype == GF_F64 ? 8 : 4;
  for (int d = 0; d < a.ndim; d++) n *= a.shape[d];
  return n;
}
static gf_box random_box(int ndim, const int64_t *shape, int halo, bool full) {
  gf_box b;
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    if (d >= ndim) {
      b.lo[d] = 0;
      b.hi[d] = 1;
      continue;
    }
    int64_t lo = halo, hi = shape[d] - halo;
    if (!full) {
      int64_t a = lo + irand(0, (int)(hi - lo - 1)), c = lo + irand(0, (int)(hi - lo - 1));
      if (a > c) std::swap(a, c);
      lo = a, hi = c + 1;
    }
    b.lo[d] = lo, b.hi[d] = hi;
  }
  return b;
}

static int failures = 0, runs = 0;
// Compares after the launch (`launched`, its error) and the device's work.
static void compare(const char *what, int launched, const gf_array &cpu, const gf_array &gpu) {
  runs++;
  hipError_t err = hipDeviceSynchronize();
  if (launched != 0 || err != hipSuccess) {
    failures++;
    printf("FAIL %s: launch error %d, %s\n", what, launched, hipGetErrorString(err));
    return;
  }
  if (memcmp(cpu.data, gpu.data, bytes(cpu)) == 0) return;
  failures++;
  size_t es = cpu.dtype == GF_F64 ? 8 : 4, n = bytes(cpu) / es, bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp((char *)cpu.data + i * es, (char *)gpu.data + i * es, es)) {
      if (!bad) first = i;
      bad++;
    }
  double c = es == 8 ? ((double *)cpu.data)[first] : ((float *)cpu.data)[first];
  double g = es == 8 ? ((double *)gpu.data)[first] : ((float *)gpu.data)[first];
  printf("FAIL %s: %zu cells differ, first at %zu: cpu %.9g gpu %.9g\n", what, bad, first, c, g);
}

int main(int argc, char **argv) {
  int trials = argc > 1 ? atoi(argv[1]) : 200;
  std::vector<gf_point> src = {{{0, 0, 0}, 1.5}, {{0, 0, 0}, -0.5}};
  for (int trial = 0; trial < trials; trial++) {
    int ndim = 1 + trial % 3, radius = (int[]){1, 2, 4}[(trial / 3) % 3];
    gf_dtype dt = (trial / 9) % 2 ? GF_F64 : GF_F32;
    int halo = radius + (irand(0, 3) == 0 ? irand(1, 3) : 0);
    int64_t shape[3];
    bool aligned = irand(0, 1);
    for (int d = 0; d < ndim; d++) {
      int64_t lo = 2 * halo + 1, hi = ndim == 1   ? 700
                                      : ndim == 2 ? 90
                                      : d == 0    ? 60
                                      : d == 1    ? 40
                                                  : 150;
      shape[d] = irand((int)lo, (int)hi);
      if (d == ndim - 1 && aligned) shape[d] = (shape[d] + 3) / 4 * 4;
    }
    bool misalign = irand(0, 5) == 0, full = irand(0, 2) == 0, pattern = irand(0, 1);
    gf_box box = random_box(ndim, shape, halo, full);
    char what[256];
    for (int kernel = 0; kernel < 3; kernel++) {
      Field in = make(ndim, shape, dt, halo, misalign, true),
            in0 = make(ndim, shape, dt, halo, misalign, true);
      Field vel = make(ndim, shape, dt, halo, misalign, true),
            pat = make(ndim, shape, dt, halo, misalign, true);
      Field out_c = make(ndim, shape, dt, halo, misalign, false),
            out_g = make(ndim, shape, dt, halo, misalign, false);
      for (auto &s : src)
        for (int d = 0; d < 3; d++) s.at[d] = d < ndim ? (box.lo[d] + box.hi[d]) / 2 : 0;
      gf_fd_forcing forcing;
      memset(&forcing, 0, sizeof forcing);
      if (pattern) forcing.pattern = pat.a;
      forcing.amplitude = 0.7;
      forcing.sources.point = src.data();
      forcing.sources.count = (int64_t)src.size();
      int variant = irand(0, 3);
      snprintf(
          what, sizeof what,
          "%s %dD %s order %d halo %d shape %lld,%lld,%lld box [%lld,%lld)x[%lld,%lld)x[%lld,%lld) "
          "%s%s%s v%d",
          (const char *[]){"wave", "heat", "stencil"}[kernel], ndim, dt == GF_F64 ? "f64" : "f32",
          2 * radius, halo, (long long)shape[0], (long long)(ndim > 1 ? shape[1] : 1),
          (long long)(ndim > 2 ? shape[2] : 1), (long long)box.lo[0], (long long)box.hi[0],
          (long long)box.lo[1], (long long)box.hi[1], (long long)box.lo[2], (long long)box.hi[2],
          misalign ? "misaligned " : "", pattern ? "pattern " : "", full ? "full" : "sub", variant);
      std::vector<gf_point> taps[4];
      int launched = 0;
      if (kernel == 0) {
        gf_wave_args a;
        memset(&a, 0, sizeof a);
        a.U0 = in0.a, a.U1 = in.a, a.V = vel.a, a.dt = 0.1, a.order = 2 * radius,
        a.forcing = forcing, a.box = box;
        a.U2 = out_c.a;
        gf_kernel_wave.run_cpu(&a);
        a.U2 = out_g.a;
        launched = gf_wave_launch_gpu(&a, 0);
      } else if (kernel == 1) {
        gf_heat_args a;
        memset(&a, 0, sizeof a);
        a.T0 = in.a, a.alpha = 0.5, a.dt = 0.1, a.order = 2 * radius, a.forcing = forcing,
        a.box = box;
        a.T1 = out_c.a;
        gf_kernel_heat.run_cpu(&a);
        a.T1 = out_g.a;
        launched = gf_heat_launch_gpu(&a, 0);
      } else {
        gf_stencil_args a;
        memset(&a, 0, sizeof a);
        a.in[0] = in.a;
        // in0: the laplacian's order (center, axis 0 -1 +1 ..., axis 1 ...), with some taps
        // dropped (variant 1), a diagonal (variant 2: generic path) or out of order (3)
        auto add = [&](int i, int d, int k, double c) {
          gf_point p = {{0, 0, 0}, c};
          p.at[d] = k;
          taps[i].push_back(p);
        };
        // the -k and +k taps with one coefficient (a pair, one term: stencil.h): none,
        // every one (a Laplacian's star) or some of them
        add(0, 0, 0, drand());
        int pairing = irand(0, 2);
        for (int d = 0; d < ndim; d++)
          for (int k = 1; k <= radius; k++) {
            double c = drand();
            bool pair = pairing == 1 || (pairing == 2 && irand(0, 1));
            for (int side = -1; side <= 1; side += 2)
              if (variant != 1 || irand(0, 2)) add(0, d, side * k, pair ? c : drand());
          }
        if (variant == 1 && irand(0, 1)) taps[0].erase(taps[0].begin());
        if (taps[0].empty()) add(0, 0, 0, 0.5);
        if (variant == 2) {
          gf_point p = {{1, ndim > 1 ? 1 : 0, 0}, 0.25};
          taps[0].push_back(p);
        }
        if (variant == 3 && taps[0].size() > 2) std::swap(taps[0][0], taps[0][2]);
        int extra = irand(0, 3);
        Field more[3] = {make(ndim, shape, dt, halo, misalign, true),
                         make(ndim, shape, dt, halo, misalign, true),
                         make(ndim, shape, dt, halo, misalign, true)};
        for (int i = 1; i <= extra; i++) {
          a.in[i] = more[i - 1].a;
          // one tap at the cell (read by the tile) or three anywhere (a second pass)
          bool point = irand(0, 1);
          for (int t = 0; t < (point ? 1 : 3); t++) {
            gf_point p = {{0, 0, 0}, drand()};
            if (!point)
              for (int d = 0; d < ndim; d++) p.at[d] = irand(-halo, halo);
            taps[i].push_back(p);
          }
        }
        for (int i = 0; i <= extra; i++)
          a.taps[i].point = taps[i].data(), a.taps[i].count = (int64_t)taps[i].size();
        a.box = box;
        a.out = out_c.a;
        gf_kernel_stencil.run_cpu(&a);
        a.out = out_g.a;
        launched = gf_stencil_launch_gpu(&a, 0);
        compare(what, launched, out_c.a, out_g.a);
        continue;
      }
      compare(what, launched, out_c.a, out_g.a);
    }
  }
  printf("%d passed, %d failed\n", runs - failures, failures);
  return failures != 0;
}
