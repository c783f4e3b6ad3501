/* blur.hip - blur on the GPU through gf_blur_cell's arithmetic (blur.h), so
 * it gives the CPU loop's bits. Each thread computes a column of kRows
 * cells: down a column one cell's upper and lower neighbours are the next
 * cells' centres, so a tile loads kRows + 2 values of the column instead of
 * 3 * kRows, all before its first store (x and xnew are different
 * instances: the compiler cannot know that). Tiles of 32 x 4 threads x 8
 * rows, as wave2d_4o's. */
#include "blur.h"
#include "gf_hip.h"

namespace {

constexpr int kBlockX = 32, kBlockY = 4, kRows = 8;
constexpr int64_t kMaxBlocksY = 65535;

__global__ void __launch_bounds__(kBlockX *kBlockY)
    blur_kernel(const double *__restrict__ x, double *__restrict__ xnew, int64_t N1, gf_box box,
                int64_t first_column) {
  const int64_t i = first_column + (int64_t)blockIdx.x * kBlockX + threadIdx.x;
  if (i < box.lo[1] || i >= box.hi[1]) return;
  const int64_t tile_step = (int64_t)gridDim.y * kBlockY * kRows;
  for (int64_t first = box.lo[0] + ((int64_t)blockIdx.y * kBlockY + threadIdx.y) * kRows;
       first < box.hi[0]; first += tile_step) {
    const double *c = x + first * N1 + i; /* x at (first, i) */
    double *out = xnew + first * N1 + i;
    if (box.hi[0] - first >= kRows) {
      double col[kRows + 2], left[kRows], right[kRows];
#pragma unroll
      for (int k = 0; k < kRows + 2; k++) col[k] = c[(k - 1) * N1];
#pragma unroll
      for (int r = 0; r < kRows; r++) left[r] = c[r * N1 - 1], right[r] = c[r * N1 + 1];
#pragma unroll
      for (int r = 0; r < kRows; r++) /* gf_blur_cell's order of additions */
        out[r * N1] = (col[r + 1] + left[r] + right[r] + col[r] + col[r + 2]) / 5.0;
    } else {
      for (int64_t j = first; j < box.hi[0]; j++, c += N1, out += N1)
        *out = gf_blur_cell(x, j * N1 + i, N1);
    }
  }
}

}  // namespace

extern "C" int gf_blur_launch_gpu(const void *args, void *stream) {
  const gf_blur_args *a = static_cast<const gf_blur_args *>(args);
  const gf_box box = a->box;
  const int64_t rows = box.hi[0] - box.lo[0], cols = box.hi[1] - box.lo[1];
  if (rows <= 0 || cols <= 0) return hipSuccess;
  /* Warps start on a multiple of 32 columns, so their loads start on a line. */
  const int64_t first_column = box.lo[1] - box.lo[1] % kBlockX;
  int64_t blocks_y = (rows + kBlockY * kRows - 1) / (kBlockY * kRows);
  if (blocks_y > kMaxBlocksY) blocks_y = kMaxBlocksY;
  const dim3 grid((unsigned)((box.hi[1] - first_column + kBlockX - 1) / kBlockX),
                  (unsigned)blocks_y);
  hipLaunchKernelGGL(blur_kernel, grid, dim3(kBlockX, kBlockY), 0, static_cast<hipStream_t>(stream),
                     static_cast<const double *>(a->x.data), static_cast<double *>(a->xnew.data),
                     a->x.shape[1], box, first_column);
  return static_cast<int>(hipGetLastError());
}
