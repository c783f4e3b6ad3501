/* wave2d.hip - wave2d_4o on the GPU, through the per-cell math of wave2d.h
 * (gf_wave2d_update), so it computes the CPU loop's bits exactly when built
 * without floating-point contraction (nvcc --fmad=false, hipcc
 * -ffp-contract=off; cmake/gpu.cmake and scripts/gpu do).
 *
 * Each thread computes a column of kRows cells. Down a column the dim-0
 * stencil of one cell shares four of its five U1 values with the next, so a
 * tile loads kRows + 4 values of U1 along dim 0 instead of 5 * kRows, and all
 * its loads are issued before the first store. Tiles of 32 x 4 threads x 8
 * rows measured best of six shapes on the H200 (8192^2: 240 GPts/s, 3.84 TB/s
 * at 16 B/cell, 0.90 of a device-to-device copy; the seed's kernel: 203). A
 * warp covers 32 consecutive columns counted from a multiple of 32 (not from
 * the box's first column) so its loads start on a 128-byte line whenever N1
 * is a multiple of 32; lanes left of the box do nothing. The first version, one
 * thread a cell, ran at half the seed kernel's speed on the H200 (100 against
 * 205 GPts/s at 8192^2): with contraction off it issued too many instructions
 * per cell to keep up with the memory.
 */
#include "gf_hip.h"
#include "wave2d.h"

#include <stdint.h>

namespace {

#ifndef GF_WAVE2D_ROWS
#define GF_WAVE2D_ROWS 8
#endif
#ifndef GF_WAVE2D_BLOCK_Y
#define GF_WAVE2D_BLOCK_Y 4
#endif
constexpr int kBlockX = 32;
constexpr int kBlockY = GF_WAVE2D_BLOCK_Y;
constexpr int kRows = GF_WAVE2D_ROWS; /* cells per thread, down a column */
constexpr int64_t kMaxBlocksY = 65535;

/* One cell: the CPU loop's `U2[P] += forcing` at the source (P0 = -1: the
 * source is not in this launch's box). */
__device__ __forceinline__ void store_cell(float *u2, float x, int64_t i0, int64_t i1, int64_t P0,
                                           int64_t P1, float forcing) {
  if (i0 == P0 && i1 == P1) x += forcing;
  *u2 = x;
}

__global__ void __launch_bounds__(kBlockX *kBlockY)
    wave2d_4o_kernel(const float *U0, const float *U1, float *U2, const float *V, int64_t N1,
                     gf_box box, int64_t first_column, int64_t P0, int64_t P1, gf_wave2d_coeffs c) {
  const int64_t i1 = first_column + (int64_t)blockIdx.x * kBlockX + threadIdx.x;
  if (i1 < box.lo[1] || i1 >= box.hi[1]) return;
  const int64_t last_row = box.hi[0]; /* exclusive */
  const int64_t tile_step = (int64_t)gridDim.y * kBlockY * kRows;
  for (int64_t first = box.lo[0] + ((int64_t)blockIdx.y * kBlockY + threadIdx.y) * kRows;
       first < last_row; first += tile_step) {
    const float *u = U1 + first * N1 + i1; /* U1 at (first, i1) */
    const float *u0 = U0 + first * N1 + i1, *v = V + first * N1 + i1;
    float *u2 = U2 + first * N1 + i1;
    if (last_row - first >= kRows) {
      /* A full tile: every load first, so they are all in flight at once
       * (U2 may be U0's instance, so the compiler could not move loads of
       * later rows above earlier stores by itself). */
      float col[kRows + 4], left2[kRows], left1[kRows], right1[kRows], right2[kRows];
      float a[kRows], vel[kRows];
#pragma unroll
      for (int k = 0; k < kRows + 4; k++) col[k] = u[(k - 2) * N1];
#pragma unroll
      for (int r = 0; r < kRows; r++) {
        const float *p = u + r * N1;
        left2[r] = p[-2], left1[r] = p[-1], right1[r] = p[1], right2[r] = p[2];
        a[r] = u0[r * N1], vel[r] = v[r * N1];
      }
#pragma unroll
      for (int r = 0; r < kRows; r++) {
        const float d0[5] = {col[r], col[r + 1], col[r + 2], col[r + 3], col[r + 4]};
        const float d1[5] = {left2[r], left1[r], col[r + 2], right1[r], right2[r]};
        store_cell(u2 + r * N1, gf_wave2d_update(a[r], vel[r], d0, d1, c), first + r, i1, P0, P1,
                   c.forcing);
      }
    } else {
      /* The last rows of the grid: one cell at a time. */
      for (int64_t i0 = first; i0 < last_row; i0++, u += N1, u0 += N1, v += N1, u2 += N1) {
        const float d0[5] = {u[-2 * N1], u[-N1], u[0], u[N1], u[2 * N1]};
        const float d1[5] = {u[-2], u[-1], u[0], u[1], u[2]};
        store_cell(u2, gf_wave2d_update(*u0, *v, d0, d1, c), i0, i1, P0, P1, c.forcing);
      }
    }
  }
}

}  // namespace

extern "C" int gf_wave2d_4o_launch_gpu(const void *args, void *stream) {
  const gf_wave2d_args *a = static_cast<const gf_wave2d_args *>(args);
  const gf_box box = a->box;
  const int64_t N1 = a->U1.shape[1];
  const int64_t rows = box.hi[0] - box.lo[0], cols = box.hi[1] - box.lo[1];
  if (rows <= 0 || cols <= 0) return hipSuccess; /* no cell to update */
  const int64_t first_column = box.lo[1] - box.lo[1] % kBlockX;
  int64_t blocks_x = (box.hi[1] - first_column + kBlockX - 1) / kBlockX;
  int64_t blocks_y = (rows + kBlockY * kRows - 1) / (kBlockY * kRows);
  if (blocks_y > kMaxBlocksY) blocks_y = kMaxBlocksY;
  /* A row too wide for any grid is passed on for the runtime to reject
   * rather than cut short by dim3's 32-bit fields. */
  if (blocks_x > (int64_t)UINT32_MAX) blocks_x = UINT32_MAX;
  const dim3 grid((unsigned)blocks_x, (unsigned)blocks_y);
  const dim3 block(kBlockX, kBlockY);
  const int in_box = gf_wave2d_source_in_box(a);
  hipLaunchKernelGGL(wave2d_4o_kernel, grid, block, 0, static_cast<hipStream_t>(stream),
                     static_cast<const float *>(a->U0.data), static_cast<const float *>(a->U1.data),
                     static_cast<float *>(a->U2.data), static_cast<const float *>(a->V.data), N1,
                     box, first_column, in_box ? a->source[0] : -1, a->source[1],
                     gf_wave2d_coeffs_of(a));
  return static_cast<int>(hipGetLastError());
}
