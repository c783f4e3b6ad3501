/* ring_move.hip - what moving a 3-D order-8 tile's planes costs, computing
 * nothing.
 *
 * kernels/fd_gpu.h's ring (ring_kernel) copies each plane's tile with its
 * halo into a slot of shared memory (copy_async, a group a plane, Depth
 * planes ahead, a block barrier a plane), and its threads write their
 * cells. This program does only that, with the ring's own copies, slots
 * and depth, for slots of several shapes: the ring's (16 x 16 vectors and
 * a halo of 4 cells: 18 x 24 vectors in f32, 20 x 24 in f64); fewer halo
 * rows, what blocks that shared their halo rows with their neighbours
 * would read (20: pairs, 18: fours); no halo rows; no halo at all. A block
 * writes each plane's tile from its slot, so each point of the box is read
 * at least once and written once, as heat's kernel does; "and wave's"
 * also reads two fields at the cell (loaded at their plane, as the ring
 * loads wave's wavefield two steps back and velocity) and adds them to it.
 *
 * The box is N - 8 cells a side inside a field of N^3 (gflow's kernel
 * workflows: 400^3 in 408^3), its rows walked from the sector below it
 * (as launch_walk), its marches of `march` planes reading 8 planes more
 * (the ring's own: balanced_march for two blocks an SM; and 100, 400).
 * The blocks an SM holds are held to 2 (the ring's occupancy: its
 * registers) by the shared memory each asks for. Each shape is printed as
 * GB/s (the box's cells read and written once, and read from the two
 * fields where there are two) and as a fraction of a
 * device-to-device copy of the field in the same run, best of --reps runs
 * of 20 launches each, after a check that the walk copies the box
 * (bench_box.h; the two fields are 0).
 *   ring_move [--n N] [--reps R]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_box.h"
#include "fd_gpu.h"

using gf_fd_gpu::Ring;
using gf_fd_gpu::Vec;

enum { kRadius = 4, kLaunches = 20, kBlocksPerSm = 2 };

/* The field, N^3 elements, vectors of V along its rows; the box [lo, hi) on
 * every axis, walked from vector `first` (the sector below lo), `count`
 * vectors a row. */
struct Field {
  int64_t n, lo, hi, nv, first, count;
};

/* Fields read at the cell only (wave's: the wavefield two steps back and
 * the velocity), added to the cell written. */
template <typename T>
struct Points {
  const T *field[2];
};

/* A block owns X x Y vectors of a plane and marches `march` planes: each
 * plane's slot of W vectors by ROWS rows (the tile in its middle) copied
 * Depth planes ahead into a ring of Slots, then the block's tile written
 * from it. */
template <typename T, int X, int Y, int W, int ROWS, int POINTS>
__global__ void __launch_bounds__(X *Y)
    ring_move(const T *in, Points<T> points, T *out, Field f, int march) {
  enum {
    V = 16 / (int)sizeof(T),
    N = X * Y,
    CELLS = W * ROWS,
    NL = (CELLS + N - 1) / N,
    HX = (W - X) / 2,
    RY = (ROWS - Y) / 2,
    D = Ring::Depth<T>::kPlanes,
    S = Ring::Slots<T, kRadius>::kCount
  };
  typedef Vec<T, V> Vt;
  GF_FD_RING_SHARED(Vt, ring, S * CELLS)
  const int tid = threadIdx.y * X + threadIdx.x;
  const int64_t v0 = f.first + (int64_t)blockIdx.x * X, y0 = f.lo + (int64_t)blockIdx.y * Y;
  const int64_t i0 = f.lo + (int64_t)blockIdx.z * march;
  const int64_t end = i0 + march < f.hi ? i0 + march : f.hi, planes = end - i0 + 2 * kRadius;
  auto clamp = [](int64_t i, int64_t n) { return i < 0 ? 0 : i < n ? i : n - 1; };
  /* The elements of plane 0 this thread copies into a slot; -1: none, or a
   * vector only threads past the box would read (as the ring skips it) */
  int64_t from[NL];
  for (int n = 0; n < NL; n++) {
    const int e = tid + n * N;
    const int64_t row = y0 - RY + e / W, column = v0 - HX + e % W;
    const bool read = e < CELLS && row < f.hi + RY && column < f.first + f.count + HX;
    from[n] = read ? (clamp(row, f.n) * f.nv + clamp(column, f.nv)) * V : -1;
  }
  const int64_t plane = f.n * f.n;
  auto copy_plane = [&](int64_t k) {
    if (k < planes) {
      const T *p = in + clamp(i0 - kRadius + k, f.n) * plane;
      for (int n = 0; n < NL; n++)
        if (from[n] >= 0)
          gf_fd_gpu::copy_async<T, V>(ring + k % S * CELLS + tid + n * N, p + from[n]);
    }
    gf_fd_gpu::copies_commit();
  };
  for (int k = 0; k < D; k++) copy_plane(k);
  const int64_t v = v0 + threadIdx.x, y = y0 + threadIdx.y;
  const bool stores = v < f.first + f.count && y < f.hi;
  const int own = (threadIdx.y + RY) * W + threadIdx.x + HX;
  for (int64_t k = 0; k < planes; k++) {
    gf_fd_gpu::copies_wait<D - 1>();
    __syncthreads();
    copy_plane(k + D);
    const int64_t z = i0 - kRadius + k;
    if (stores && z >= i0 && z < end) {
      const int64_t at = z * plane + (y * f.nv + v) * V;
      Vt cell = ring[k % S * CELLS + own];
      for (int p = 0; p < POINTS; p++) {
        const Vt value = gf_fd_gpu::load<T, V>(points.field[p] + at);
        for (int c = 0; c < V; c++) cell.v[c] += value.v[c];
      }
      gf_fd_gpu::store_whole<T, V>(out + at, cell);
    }
  }
}

struct Run {
  int64_t n;
  int reps;
  int sms;
  size_t smem_per_sm; /* the shared memory an SM has, for kBlocksPerSm */
  double copy_gbs;
  hipStream_t stream;
  void *in, *out, *points[2];
  void *in_host, *out_host; /* in as filled (f32 or f64), and out read back */
};

enum { kRingMarch = 0 }; /* a march of measure(): the ring's (balanced_march) */

template <typename T, int X, int Y, int W, int ROWS, int POINTS = 0>
static void measure(const Run &r, const char *slot, int march) {
  enum { V = 16 / (int)sizeof(T), SECTOR = 32 / (int)sizeof(T) };
  const int64_t lo = kRadius, hi = r.n - kRadius, start = lo - lo % SECTOR;
  const Field f = {r.n, lo, hi, r.n / V, start / V, (hi - start + V - 1) / V};
  const size_t ring_bytes = (size_t)Ring::Slots<T, kRadius>::kCount * W * ROWS * sizeof(Vec<T, V>);
  const size_t held = r.smem_per_sm / kBlocksPerSm - 1024; /* two blocks an SM, as the ring */
  const size_t bytes = ring_bytes > held ? ring_bytes : held;
  auto kernel = ring_move<T, X, Y, W, ROWS, POINTS>;
  const Points<T> points = {{(const T *)r.points[0], (const T *)r.points[1]}};
  BENCH_CHECK(hipFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                                  hipFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  int per_sm = 0;
  BENCH_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, X * Y, bytes));
  const unsigned bx = (unsigned)((f.count + X - 1) / X), by = (unsigned)((hi - lo + Y - 1) / Y);
  if (march == kRingMarch)
    march =
        (int)gf_fd_gpu::balanced_march(hi - lo, (int64_t)bx * by, (int64_t)per_sm * r.sms,
                                       Ring::March<T>::kMost, kRadius + Ring::Depth<T>::kPlanes);
  const dim3 grid(bx, by, (unsigned)((hi - lo + march - 1) / march));
  auto launch = [&]() {
    hipLaunchKernelGGL(kernel, grid, dim3(X, Y), bytes, r.stream, (const T *)r.in, points,
                       (T *)r.out, f, march);
  };
  char what[96];
  snprintf(what, sizeof what, "ring_move, %s, slot %dx%d (%s), march %d",
           sizeof(T) == 4 ? "f32" : "f64", W, ROWS, slot, march);
  box_check(launch, what, r.stream, (T *)r.out, (const T *)r.in_host, (T *)r.out_host, r.n, lo, hi);
  const double box = (double)(hi - lo) * (hi - lo) * (hi - lo);
  const double gbs =
      (2.0 + POINTS) * sizeof(T) * box / best_ms(launch, kLaunches, r.reps, r.stream) / 1e6;
  printf(
      "%s %2dx%-2d vectors, slot %2dx%-2d (%-22s), march %3d, %d blocks/SM: %7.1f GB/s, %.3f of "
      "the copy\n",
      sizeof(T) == 4 ? "f32" : "f64", X, Y, W, ROWS, slot, march, per_sm, gbs, gbs / r.copy_gbs);
}

int main(int argc, char **argv) {
  Run r = {408, 5, 0, 0, 0.0, NULL, NULL, NULL, {NULL, NULL}, NULL, NULL};
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--n"))
      r.n = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--reps"))
      r.reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--n N] [--reps R]\n", argv[0]);
      return 64;
    }
  }
  if (r.n < 16 || r.n % 8 || r.reps <= 0) {
    fprintf(stderr, "%s: N must be a multiple of 8 (rows of whole sectors), 16 or more\n", argv[0]);
    return 64;
  }
  int device = 0, smem_per_sm = 0;
  BENCH_CHECK(hipGetDevice(&device));
  BENCH_CHECK(hipDeviceGetAttribute(&smem_per_sm,
                                    hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, device));
  r.smem_per_sm = (size_t)smem_per_sm;
  BENCH_CHECK(hipDeviceGetAttribute(&r.sms, hipDeviceAttributeMultiprocessorCount, device));
  BENCH_CHECK(hipStreamCreateWithFlags(&r.stream, hipStreamNonBlocking));
  const size_t bytes = (size_t)r.n * r.n * r.n * sizeof(double);
  BENCH_CHECK(hipMalloc(&r.in, bytes));
  BENCH_CHECK(hipMalloc(&r.out, bytes));
  r.in_host = box_host(bytes);
  r.out_host = box_host(bytes);
  BENCH_CHECK(hipMemsetAsync(r.in, 0, bytes, r.stream));
  BENCH_CHECK(hipMemsetAsync(r.out, 0, bytes, r.stream));
  for (void *&field : r.points) {
    BENCH_CHECK(hipMalloc(&field, bytes));
    BENCH_CHECK(hipMemsetAsync(field, 0, bytes, r.stream));
  }
  const size_t f32_bytes = bytes / 2;
  auto device_copy = [&]() {
    BENCH_CHECK(hipMemcpyAsync(r.out, r.in, f32_bytes, hipMemcpyDeviceToDevice, r.stream));
  };
  r.copy_gbs = 2.0 * f32_bytes / best_ms(device_copy, kLaunches, r.reps, r.stream) / 1e6;
  printf("device-to-device copy of the field (%lld^3 f32): %.1f GB/s read+written\n",
         (long long)r.n, r.copy_gbs);
  box_fill((float *)r.in, (float *)r.in_host, r.n, r.stream); /* the points stay 0 */
  for (int march : {(int)kRingMarch, 100, 400}) {
    measure<float, 16, 16, 18, 24>(r, "the ring's", march);
    measure<float, 16, 16, 18, 20>(r, "20 rows: pairs share", march);
    measure<float, 16, 16, 18, 18>(r, "18 rows: fours share", march);
    measure<float, 16, 16, 18, 16>(r, "no halo rows", march);
    measure<float, 16, 16, 16, 16>(r, "no halo", march);
  }
  measure<float, 16, 16, 18, 24, 2>(r, "the ring's, and wave's", kRingMarch);
  measure<float, 16, 16, 16, 16, 2>(r, "no halo, and wave's", kRingMarch);
  box_fill((double *)r.in, (double *)r.in_host, r.n, r.stream);
  for (int march : {(int)kRingMarch, 400}) {
    measure<double, 16, 16, 20, 24>(r, "the ring's", march);
    measure<double, 16, 16, 20, 18>(r, "18 rows: fours share", march);
    measure<double, 16, 16, 20, 16>(r, "no halo rows", march);
    measure<double, 16, 16, 16, 16>(r, "no halo", march);
  }
  measure<double, 16, 16, 20, 24, 2>(r, "the ring's, and wave's", kRingMarch);
  measure<double, 16, 16, 16, 16, 2>(r, "no halo, and wave's", kRingMarch);
  BENCH_CHECK(hipFree(r.in));
  BENCH_CHECK(hipFree(r.out));
  for (void *field : r.points) BENCH_CHECK(hipFree(field));
  BENCH_CHECK(hipStreamDestroy(r.stream));
  free(r.in_host);
  free(r.out_host);
  return 0;
}
