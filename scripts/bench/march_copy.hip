/* march_copy.hip - what a 3-D walk down axis 0 moves, measured on a copy.
 *
 * Copies the box of an N^3 f32 field inside a halo of H cells (gflow's
 * kernel workflows: N - 2H = 400, H = 4) the way kernels/fd_gpu.h's 3-D
 * tiles walk it: a block of 16 x 16 threads owns 16 vectors of 4 cells
 * along the last axis by 16 rows along axis 1 and marches down axis 0
 * (--march planes), each thread's loads three planes ahead of its store,
 * the cells outside the box not stored. Two walks: vectors from the box's
 * first cell (16 bytes into a 32-byte sector at H = 4), and from the
 * sector below it (what launch_walk does). With --shapes, the walk from
 * the sector also with blocks that read longer runs of a row: 32 x 8,
 * 64 x 4 and 104 x 2, 4 and 8 (104 vectors: a whole row of the 400^3 box
 * from its sector, 101 vectors, in one block), so whether the length of a
 * block's runs sets what a march moves. Each is printed as GB/s (the box's
 * cells read and written) and as a fraction of a device-to-device
 * hipMemcpyAsync of the whole field in the same run, best of --reps runs
 * of 20 copies each, after a check that the walk copies the box
 * (bench_box.h); --march takes a list (45,100,400).
 *   march_copy [--n N] [--halo H] [--march M[,M...]] [--shapes] [--reps R]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_box.h"

enum { kAhead = 3, kCopies = 20, kMarches = 8 };

/* The box is [lo, hi) on every axis; vectors along the last axis start at
 * `start` (<= lo, a multiple of 4). */
struct Box {
  int64_t n, lo, hi, start;
  int march;
};

/* One 16-byte store (as fd_gpu.h's store_whole): written plainly, nvcc
 * merged it with the cell-by-cell stores of the box's edges into four
 * 4-byte stores, which ran at a third of the copy. */
__device__ __forceinline__ void store_vector(float *p, float4 v) {
#if defined(GFLOW_HIP_ON_CUDA) && defined(__CUDA_ARCH__)
  asm("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)), "f"(v.x),
      "f"(v.y), "f"(v.z), "f"(v.w)
      : "memory");
#else
  *(float4 *)p = v;
#endif
}

/* A block of kX x kY threads, a vector of 4 cells each. */
template <int kX, int kY>
__global__ void __launch_bounds__(kX *kY) march_copy(const float *in, float *out, Box b) {
  const int64_t x = b.start + 4 * ((int64_t)blockIdx.x * kX + threadIdx.x);
  const int64_t y = b.lo + (int64_t)blockIdx.y * kY + threadIdx.y;
  const int64_t i0 = b.lo + (int64_t)blockIdx.z * b.march;
  const int64_t end = i0 + b.march < b.hi ? i0 + b.march : b.hi;
  if (x >= b.hi || y >= b.hi) return;
  const int64_t plane = b.n * b.n, own = y * b.n + x;
  float4 q[kAhead + 1];
  for (int k = 0; k < kAhead; k++)
    q[k] = *(const float4 *)(in + (i0 + k < b.n ? i0 + k : b.n - 1) * plane + own);
  for (int64_t i = i0; i < end; i += kAhead + 1)
#pragma unroll
    for (int u = 0; u <= kAhead; u++) {
      const int64_t j = i + u, ahead = j + kAhead < b.n ? j + kAhead : b.n - 1;
      if (j >= end) break;
      q[(u + kAhead) % (kAhead + 1)] = *(const float4 *)(in + ahead * plane + own);
      float *to = out + j * plane + own;
      const float4 v = q[u];
      if (x >= b.lo && x + 4 <= b.hi) {
        store_vector(to, v);
      } else {
        const float cells[4] = {v.x, v.y, v.z, v.w};
        for (int c = 0; c < 4; c++)
          if (x + c >= b.lo && x + c < b.hi) to[c] = cells[c];
      }
    }
}

/* What main measures against: the field, its copy's speed, the stream. */
struct Run {
  int64_t n, halo;
  int reps;
  double copy_gbs;
  hipStream_t stream;
  const float *in;
  float *out;
  float *in_host, *out_host; /* the field as filled, and the copy read back */
};

/* The box copied by blocks of kX x kY threads marching `march` planes,
 * vectors from the sector below the box or from its first vector. */
template <int kX, int kY>
static void measure(const Run &r, int march, bool from_sector) {
  const int64_t start = r.halo - r.halo % (from_sector ? 8 : 4);
  const Box b = {r.n, r.halo, r.n - r.halo, start, march};
  const dim3 grid((unsigned)(((b.hi - b.start + 3) / 4 + kX - 1) / kX),
                  (unsigned)((b.hi - b.lo + kY - 1) / kY),
                  (unsigned)((b.hi - b.lo + b.march - 1) / b.march));
  auto walk = [&]() {
    hipLaunchKernelGGL((march_copy<kX, kY>), grid, dim3(kX, kY), 0, r.stream, r.in, r.out, b);
  };
  char what[64];
  snprintf(what, sizeof what, "march copy, blocks %dx%d, march %d", kX, kY, march);
  box_check(walk, what, r.stream, r.out, r.in_host, r.out_host, r.n, b.lo, b.hi);
  const int64_t box = b.hi - b.lo;
  const double gbs =
      2.0 * sizeof(float) * box * box * box / best_ms(walk, kCopies, r.reps, r.stream) / 1e6;
  printf(
      "march copy of the box %lld^3, blocks %3dx%-2d, march %3d, vectors from cell %lld (%s): "
      "%.1f GB/s, %.3f of the copy\n",
      (long long)box, kX, kY, march, (long long)start,
      from_sector ? "the sector below the box" : "the box's first vector", gbs, gbs / r.copy_gbs);
}

int main(int argc, char **argv) {
  Run r = {408, 4, 5, 0.0, NULL, NULL, NULL, NULL, NULL};
  int marches[kMarches] = {49}, count = 1;
  bool shapes = false, usage = false;
  for (int i = 1; i < argc && !usage; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--n")) {
      r.n = atoll(argv[++i]);
    } else if (i + 1 < argc && !strcmp(argv[i], "--halo")) {
      r.halo = atoll(argv[++i]);
    } else if (i + 1 < argc && !strcmp(argv[i], "--march")) {
      char *list = argv[++i];
      for (count = 0; count < kMarches && *list; count++) {
        marches[count] = (int)strtol(list, &list, 10);
        if (marches[count] <= 0 || (*list && *list++ != ',')) usage = true;
      }
      usage = usage || *list || count == 0;
    } else if (!strcmp(argv[i], "--shapes")) {
      shapes = true;
    } else if (i + 1 < argc && !strcmp(argv[i], "--reps")) {
      r.reps = atoi(argv[++i]);
    } else {
      usage = true;
    }
  }
  if (usage || r.n < 8 || r.n % 8 || r.halo < 0 || 2 * r.halo >= r.n || r.reps <= 0) {
    fprintf(stderr,
            "usage: %s [--n N] [--halo H] [--march M[,M...]] [--shapes] [--reps R]\n"
            "  N a multiple of 8 (rows of whole sectors), 0 <= 2H < N, at most %d marches\n",
            argv[0], (int)kMarches);
    return 64;
  }
  const size_t bytes = (size_t)r.n * r.n * r.n * sizeof(float);
  BENCH_CHECK(hipStreamCreateWithFlags(&r.stream, hipStreamNonBlocking));
  float *in = NULL, *out = NULL;
  BENCH_CHECK(hipMalloc((void **)&in, bytes));
  BENCH_CHECK(hipMalloc((void **)&out, bytes));
  r.in_host = (float *)box_host(bytes);
  r.out_host = (float *)box_host(bytes);
  box_fill(in, r.in_host, r.n, r.stream);
  BENCH_CHECK(hipMemsetAsync(out, 0, bytes, r.stream));
  r.in = in, r.out = out;
  auto device_copy = [&]() {
    BENCH_CHECK(hipMemcpyAsync(out, in, bytes, hipMemcpyDeviceToDevice, r.stream));
  };
  r.copy_gbs = 2.0 * bytes / best_ms(device_copy, kCopies, r.reps, r.stream) / 1e6;
  printf("device-to-device copy of the field (%lld^3 f32): %.1f GB/s read+written\n",
         (long long)r.n, r.copy_gbs);
  for (int m = 0; m < count; m++) {
    measure<16, 16>(r, marches[m], false);
    measure<16, 16>(r, marches[m], true);
    if (!shapes) continue;
    measure<32, 8>(r, marches[m], true);
    measure<64, 4>(r, marches[m], true);
    measure<104, 2>(r, marches[m], true);
    measure<104, 4>(r, marches[m], true);
    measure<104, 8>(r, marches[m], true);
  }
  BENCH_CHECK(hipFree(in));
  BENCH_CHECK(hipFree(out));
  BENCH_CHECK(hipStreamDestroy(r.stream));
  free(r.in_host);
  free(r.out_host);
  return 0;
}
