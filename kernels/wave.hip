/* wave.hip - `wave` on the GPU, through fd_cell.h's gf_fd_wave_cell (so the
 * CPU loop's bits, built without contraction), one thread a cell
 * (fd_gpu.h), an instance per type, dimension and order. */
#include "fd_gpu.h"
#include "wave.h"

namespace {

using namespace gf_fd_gpu;

template <typename T, int NDIM, int R>
__global__ void __launch_bounds__(kBlockX)
    wave_kernel(const T *U0, const T *U1, const T *V, const T *P, T *U2, gf_fd_rows rows,
                int64_t align, gf_fd_geom g, typename Fd<T>::Lap L, T dt2, T amplitude) {
  for_my_cells(
      rows, align,
      [&](int64_t o) {
        T u = Fd<T>::wave(U0, U1, V, o, NDIM, R, g, L, dt2);
        return P ? Fd<T>::force(u, amplitude, P[o]) : u;
      },
      [&](int64_t o, T u) { U2[o] = u; });
}

template <typename T>
int launch(const gf_wave_args *a, hipStream_t stream) {
  using Kernel = void (*)(const T *, const T *, const T *, const T *, T *, gf_fd_rows, int64_t,
                          gf_fd_geom, typename Fd<T>::Lap, T, T);
  static const Kernel kernels[9] = {
      wave_kernel<T, 1, 1>, wave_kernel<T, 1, 2>, wave_kernel<T, 1, 4>,
      wave_kernel<T, 2, 1>, wave_kernel<T, 2, 2>, wave_kernel<T, 2, 4>,
      wave_kernel<T, 3, 1>, wave_kernel<T, 3, 2>, wave_kernel<T, 3, 4>};
  const int radius = gf_fd_radius(a->order), ndim = a->U1.ndim;
  const gf_fd_rows rows = gf_fd_rows_of(&a->U1, a->box);
  if (rows.len > 0) {
    const Grid grid = grid_of(rows, a->box, ndim);
    const T *P = a->forcing.pattern.ndim ? static_cast<const T *>(a->forcing.pattern.data) : NULL;
    hipLaunchKernelGGL(kernels[variant(ndim, radius)], grid.grid, grid.block, 0, stream,
                       static_cast<const T *>(a->U0.data), static_cast<const T *>(a->U1.data),
                       static_cast<const T *>(a->V.data), P, static_cast<T *>(a->U2.data), rows,
                       grid.align, gf_fd_geom_of(&a->U1), Fd<T>::lap_of(&a->U1, radius, 1.0),
                       (T)(a->dt * a->dt), (T)a->forcing.amplitude);
    hipError_t err = hipGetLastError();
    if (err != hipSuccess) return static_cast<int>(err);
  }
  return add_sources<T>(&a->U2, a->box, a->forcing, stream);
}

}  // namespace

extern "C" int gf_wave_launch_gpu(const void *args, void *stream) {
  const gf_wave_args *a = static_cast<const gf_wave_args *>(args);
  hipStream_t s = static_cast<hipStream_t>(stream);
  return a->U1.dtype == GF_F64 ? launch<double>(a, s) : launch<float>(a, s);
}
