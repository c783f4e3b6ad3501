/* blur.hip - blur on the GPU: a thread a cell, 2-D blocks of 32 x 8 along
 * the rows, through gf_blur_cell (blur.h), so it gives the CPU loop's bits. */
#include "blur.h"
#include "gf_hip.h"

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__global__ void __launch_bounds__(kBlockX *kBlockY)
    blur_kernel(const double *x, double *xnew, int64_t N1, gf_box box) {
  const int64_t i = box.lo[1] + (int64_t)blockIdx.x * kBlockX + threadIdx.x;
  if (i >= box.hi[1]) return;
  for (int64_t j = box.lo[0] + (int64_t)blockIdx.y * kBlockY + threadIdx.y; j < box.hi[0];
       j += (int64_t)gridDim.y * kBlockY)
    xnew[j * N1 + i] = gf_blur_cell(x, j * N1 + i, N1);
}

}  // namespace

extern "C" int gf_blur_launch_gpu(const void *args, void *stream) {
  const gf_blur_args *a = static_cast<const gf_blur_args *>(args);
  const gf_box box = a->box;
  const int64_t rows = box.hi[0] - box.lo[0], cols = box.hi[1] - box.lo[1];
  if (rows <= 0 || cols <= 0) return hipSuccess;
  int64_t blocks_y = (rows + kBlockY - 1) / kBlockY;
  if (blocks_y > 65535) blocks_y = 65535;
  const dim3 grid((unsigned)((cols + kBlockX - 1) / kBlockX), (unsigned)blocks_y);
  hipLaunchKernelGGL(blur_kernel, grid, dim3(kBlockX, kBlockY), 0, static_cast<hipStream_t>(stream),
                     static_cast<const double *>(a->x.data), static_cast<double *>(a->xnew.data),
                     a->x.shape[1], box);
  return static_cast<int>(hipGetLastError());
}
