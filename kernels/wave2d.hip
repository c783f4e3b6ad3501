/* wave2d.hip - wave2d_4o on the GPU: the per-cell math of wave2d.h, one thread a cell.
 *
 * Same arithmetic as the CPU loop in wave2d.c: gf_wave2d_cell for every
 * interior cell [halo, N-halo) of both dimensions, then coeffs.forcing added
 * at the source cell when it is interior. Build it without floating-point
 * contraction (nvcc --fmad=false, hipcc -ffp-contract=off) and the GPU gives
 * the CPU backend's bits exactly; cmake/gpu.cmake and scripts/gpu do.
 *
 * Plain 2-D blocks of 32 x 8: a warp reads 32 consecutive floats of a row and
 * the neighbouring rows of the stencil come from L1/L2. Columns are counted
 * from 0, not from the halo, so a warp's accesses start on a 128-byte line
 * whenever N1 is a multiple of 32 (the seed's kernel does the same through
 * its clamped indices); the lanes left of the halo do nothing. On the H200 a
 * first version that counted from the halo ran at half the seed kernel's
 * speed at 4096^2 and 8192^2 (107 and 104 GPts/s against 194 and 204).
 * Rows beyond the grid's y limit (65535 blocks) are covered by a loop, so any
 * number of rows works.
 */
#include "gf_hip.h"
#include "wave2d.h"

#include <stdint.h>

namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int64_t kMaxBlocksY = 65535;

__global__ void __launch_bounds__(kBlockX *kBlockY)
    wave2d_4o_kernel(const float *U0, const float *U1, float *U2, const float *V, int64_t N0,
                     int64_t N1, int64_t halo, int64_t P0, int64_t P1, gf_wave2d_coeffs c) {
  const int64_t i1 = (int64_t)blockIdx.x * kBlockX + threadIdx.x;
  if (i1 < halo || i1 >= N1 - halo) return;
  const int64_t row_step = (int64_t)gridDim.y * kBlockY;
  for (int64_t i0 = halo + (int64_t)blockIdx.y * kBlockY + threadIdx.y; i0 < N0 - halo;
       i0 += row_step) {
    const int64_t offset = i0 * N1 + i1;
    float u = gf_wave2d_cell(U0, U1, V, offset, N1, c);
    if (i0 == P0 && i1 == P1) u += c.forcing; /* the CPU loop's `U2[P] += forcing` */
    U2[offset] = u;
  }
}

}  // namespace

extern "C" int gf_wave2d_4o_launch_gpu(const void *args, void *stream) {
  const gf_wave2d_args *a = static_cast<const gf_wave2d_args *>(args);
  const int64_t N0 = a->U1.shape[0], N1 = a->U1.shape[1], halo = a->U1.halo;
  const int64_t rows = N0 - 2 * halo, cols = N1 - 2 * halo;
  if (rows <= 0 || cols <= 0) return hipSuccess;          /* no interior cell: nothing to do */
  int64_t blocks_x = (N1 - halo + kBlockX - 1) / kBlockX; /* columns [0, N1 - halo) */
  int64_t blocks_y = (rows + kBlockY - 1) / kBlockY;
  if (blocks_y > kMaxBlocksY) blocks_y = kMaxBlocksY;
  /* A row too wide for any grid is passed on for the runtime to reject
   * rather than cut short by dim3's 32-bit fields. */
  if (blocks_x > (int64_t)UINT32_MAX) blocks_x = UINT32_MAX;
  const dim3 grid((unsigned)blocks_x, (unsigned)blocks_y);
  const dim3 block(kBlockX, kBlockY);
  hipLaunchKernelGGL(wave2d_4o_kernel, grid, block, 0, static_cast<hipStream_t>(stream),
                     static_cast<const float *>(a->U0.data), static_cast<const float *>(a->U1.data),
                     static_cast<float *>(a->U2.data), static_cast<const float *>(a->V.data), N0,
                     N1, halo, a->source[0], a->source[1], gf_wave2d_coeffs_of(a));
  return static_cast<int>(hipGetLastError());
}
