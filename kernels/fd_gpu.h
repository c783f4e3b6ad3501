/* fd_gpu.h - what the GPU launchers of wave, heat and stencil share (wave.hip,
 * heat.hip, stencil.hip): the thread grid over a box's rows, the per-type
 * names of fd_cell.h's functions, and the point sources.
 *
 * Threads: x along the array's last axis, counted from a multiple of 32 so
 * that a warp's loads start on a 128-byte line whenever the rows do; y over
 * the middle axis, kRows cells a thread; z over the first (3-D); y and z
 * grid-strided past the 65535 blocks a launch allows. Not measured yet
 * (scripts/bench/kernels.sh --gpu): wave2d_4o's kernel, tiled by hand, is
 * the reference for what these should reach. */
#ifndef GF_KERNEL_FD_GPU_H
#define GF_KERNEL_FD_GPU_H

#include "fd.h"
#include "gf_hip.h"

namespace gf_fd_gpu {

constexpr int kBlockX = 128;
constexpr int64_t kMaxBlocks = 65535;

/* Cells a thread updates down the middle axis (consecutive rows). */
constexpr int kRows = 4;

/* The thread grid of a box's rows; `align` threads lie before each row. */
struct Grid {
  dim3 grid, block;
  int64_t align;
};

inline Grid grid_of(const gf_fd_rows &rows, const gf_box &box, int ndim) {
  Grid g;
  g.align = box.lo[ndim - 1] % 32;
  int64_t bx = (rows.len + g.align + kBlockX - 1) / kBlockX;
  int64_t by = (rows.n_mid + kRows - 1) / kRows;
  if (by > kMaxBlocks) by = kMaxBlocks;
  int64_t bz = rows.n_outer < kMaxBlocks ? rows.n_outer : kMaxBlocks;
  /* A row too long for any grid is passed on for the runtime to reject. */
  if (bx > (int64_t)UINT32_MAX) bx = UINT32_MAX;
  g.grid = dim3((unsigned)bx, (unsigned)by, (unsigned)bz);
  g.block = dim3(kBlockX, 1, 1);
  return g;
}

/* For this thread's cells (kRows of them down the middle axis in each of
 * its tiles): store(o, value(o)). A full tile computes every value before
 * it stores any, so all its loads are in flight at once (the output is
 * never an input: the planner refuses that), as wave2d.hip's tiles do; the
 * values themselves are computed cell by cell as on the CPU. */
template <typename Value, typename Store>
__device__ __forceinline__ void for_my_cells(const gf_fd_rows &rows, int64_t align, Value value,
                                             Store store) {
  const int64_t x = (int64_t)blockIdx.x * kBlockX + threadIdx.x - align;
  if (x < 0 || x >= rows.len) return;
  const int64_t sm = rows.stride_mid;
  for (int64_t i = blockIdx.z; i < rows.n_outer; i += gridDim.z)
    for (int64_t j = (int64_t)blockIdx.y * kRows; j < rows.n_mid; j += (int64_t)gridDim.y * kRows) {
      const int64_t o = rows.base + i * rows.stride_outer + j * sm + x;
      if (j + kRows <= rows.n_mid) {
        decltype(value(o)) v[kRows];
#pragma unroll
        for (int r = 0; r < kRows; r++) v[r] = value(o + r * sm);
#pragma unroll
        for (int r = 0; r < kRows; r++) store(o + r * sm, v[r]);
      } else {
        for (int64_t r = 0; j + r < rows.n_mid; r++) store(o + r * sm, value(o + r * sm));
      }
    }
}

/* fd_cell.h's functions and types under one name for both element types. */
template <typename T>
struct Fd;
#define GF_FD_GPU_TRAITS(T, S)                                                                    \
  template <>                                                                                     \
  struct Fd<T> {                                                                                  \
    using Lap = gf_fd_lap_##S;                                                                    \
    static Lap lap_of(const gf_array *a, int radius, double scale) {                              \
      return gf_fd_lap_of_##S(a, radius, scale);                                                  \
    }                                                                                             \
    __device__ static T wave(const T *U0, const T *U1, const T *V, int64_t o, int ndim,           \
                             int radius, gf_fd_geom g, Lap L, T dt2) {                            \
      return gf_fd_wave_cell_##S(U0, U1, V, o, ndim, radius, g, L, dt2);                          \
    }                                                                                             \
    __device__ static T heat(const T *T0, int64_t o, int ndim, int radius, gf_fd_geom g, Lap L) { \
      return gf_fd_heat_cell_##S(T0, o, ndim, radius, g, L);                                      \
    }                                                                                             \
    __device__ static T force(T x, T amplitude, T pattern) {                                      \
      return gf_fd_force_##S(x, amplitude, pattern);                                              \
    }                                                                                             \
    __device__ static T taps(T acc, const T *u, int64_t o, int n, const int64_t *offset,          \
                             const T *coef) {                                                     \
      return gf_fd_taps_##S(acc, u, o, n, offset, coef);                                          \
    }                                                                                             \
  };
GF_FD_GPU_TRAITS(float, f32)
GF_FD_GPU_TRAITS(double, f64)
#undef GF_FD_GPU_TRAITS

/* Point sources, a chunk at a time, added by one thread in list order, as
 * gf_fd_add_sources does on the CPU (two sources may share a cell). */
constexpr int kSourcesPerLaunch = 64;
template <typename T>
struct Sources {
  int n;
  int64_t offset[kSourcesPerLaunch];
  T weight[kSourcesPerLaunch];
};

template <typename T>
__global__ void add_sources_kernel(T *u, Sources<T> s, T amplitude) {
  for (int k = 0; k < s.n; k++) u[s.offset[k]] += amplitude * s.weight[k];
}

/* Enqueues the sources of `forcing` that lie in `box` after the update;
 * returns the first launch's error. */
template <typename T>
int add_sources(const gf_array *u, const gf_box &box, const gf_fd_forcing &forcing,
                hipStream_t stream) {
  Sources<T> s;
  s.n = 0;
  for (int64_t k = 0; k <= forcing.sources.count; k++) {
    if (k < forcing.sources.count) {
      const gf_point *p = &forcing.sources.point[k];
      int64_t o = gf_fd_source_offset(u, box, p);
      if (o < 0) continue;
      s.offset[s.n] = o;
      s.weight[s.n++] = (T)p->weight;
    }
    if (s.n == kSourcesPerLaunch || (k == forcing.sources.count && s.n > 0)) {
      hipLaunchKernelGGL(add_sources_kernel<T>, dim3(1), dim3(1), 0, stream,
                         static_cast<T *>(u->data), s, (T)forcing.amplitude);
      hipError_t err = hipGetLastError();
      if (err != hipSuccess) return static_cast<int>(err);
      s.n = 0;
    }
  }
  return hipSuccess;
}

/* The (ndim, radius) pair of a launch as an index 0..8 into a table of
 * template instances, [ndim-1][0, 1, 2 for radius 1, 2, 4]. */
inline int variant(int ndim, int radius) {
  return (ndim - 1) * 3 + gf_fd_variant_radius(radius);
}

}  // namespace gf_fd_gpu

#endif
