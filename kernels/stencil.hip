/* stencil.hip - `stencil` on the GPU: one thread a cell (fd_gpu.h), its sum
 * through fd_cell.h's gf_fd_taps, input by input and tap by tap as the CPU
 * loop sums it; the taps travel by value in the launch's arguments. */
#include "fd_gpu.h"
#include "stencil.h"

namespace {

using namespace gf_fd_gpu;

template <typename T, typename Plan>
__global__ void __launch_bounds__(kBlockX) stencil_kernel(Plan p, gf_fd_rows rows, int64_t align) {
  for_my_cells(
      rows, align,
      [&](int64_t o) {
        T acc = 0;
        for (int i = 0; i < p.ninputs; i++)
          acc = Fd<T>::taps(acc, p.in[i], o, p.ntaps[i], p.offset[i], p.coef[i]);
        return acc;
      },
      [&](int64_t o, T acc) { p.out[o] = acc; });
}

template <typename T, typename Plan>
int launch(const gf_stencil_args *a, const Plan &plan, hipStream_t stream) {
  const gf_fd_rows rows = gf_fd_rows_of(&a->out, a->box);
  if (rows.len <= 0) return hipSuccess;
  const Grid grid = grid_of(rows, a->box, a->out.ndim);
  hipLaunchKernelGGL((stencil_kernel<T, Plan>), grid.grid, grid.block, 0, stream, plan, rows,
                     grid.align);
  return static_cast<int>(hipGetLastError());
}

}  // namespace

extern "C" int gf_stencil_launch_gpu(const void *args, void *stream) {
  const gf_stencil_args *a = static_cast<const gf_stencil_args *>(args);
  hipStream_t s = static_cast<hipStream_t>(stream);
  if (a->out.dtype == GF_F64) return launch<double>(a, gf_stencil_plan_of_f64(a), s);
  return launch<float>(a, gf_stencil_plan_of_f32(a), s);
}
