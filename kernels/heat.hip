/* heat.hip - `heat` on the GPU, through fd_cell.h's gf_fd_heat_cell (so the
 * CPU loop's bits, built without contraction), one thread a cell
 * (fd_gpu.h), an instance per type, dimension and order. */
#include "fd_gpu.h"
#include "heat.h"

namespace {

using namespace gf_fd_gpu;

template <typename T, int NDIM, int R>
__global__ void __launch_bounds__(kBlockX)
    heat_kernel(const T *T0, const T *P, T *T1, gf_fd_rows rows, int64_t align, gf_fd_geom g,
                typename Fd<T>::Lap L, T amplitude) {
  for_my_cells(
      rows, align,
      [&](int64_t o) {
        T t = Fd<T>::heat(T0, o, NDIM, R, g, L);
        return P ? Fd<T>::force(t, amplitude, P[o]) : t;
      },
      [&](int64_t o, T t) { T1[o] = t; });
}

template <typename T>
int launch(const gf_heat_args *a, hipStream_t stream) {
  using Kernel =
      void (*)(const T *, const T *, T *, gf_fd_rows, int64_t, gf_fd_geom, typename Fd<T>::Lap, T);
  static const Kernel kernels[9] = {
      heat_kernel<T, 1, 1>, heat_kernel<T, 1, 2>, heat_kernel<T, 1, 4>,
      heat_kernel<T, 2, 1>, heat_kernel<T, 2, 2>, heat_kernel<T, 2, 4>,
      heat_kernel<T, 3, 1>, heat_kernel<T, 3, 2>, heat_kernel<T, 3, 4>};
  const int radius = gf_fd_radius(a->order), ndim = a->T0.ndim;
  const gf_fd_rows rows = gf_fd_rows_of(&a->T0, a->box);
  if (rows.len > 0) {
    const Grid grid = grid_of(rows, a->box, ndim);
    const T *P = a->forcing.pattern.ndim ? static_cast<const T *>(a->forcing.pattern.data) : NULL;
    hipLaunchKernelGGL(kernels[variant(ndim, radius)], grid.grid, grid.block, 0, stream,
                       static_cast<const T *>(a->T0.data), P, static_cast<T *>(a->T1.data), rows,
                       grid.align, gf_fd_geom_of(&a->T0),
                       Fd<T>::lap_of(&a->T0, radius, a->alpha * a->dt), (T)a->forcing.amplitude);
    hipError_t err = hipGetLastError();
    if (err != hipSuccess) return static_cast<int>(err);
  }
  return add_sources<T>(&a->T1, a->box, a->forcing, stream);
}

}  // namespace

extern "C" int gf_heat_launch_gpu(const void *args, void *stream) {
  const gf_heat_args *a = static_cast<const gf_heat_args *>(args);
  hipStream_t s = static_cast<hipStream_t>(stream);
  return a->T0.dtype == GF_F64 ? launch<double>(a, s) : launch<float>(a, s);
}
