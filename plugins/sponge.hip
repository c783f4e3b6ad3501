/* sponge.hip - the sponge plugin's GPU launcher (nvcc or hipcc), through
 * the per-cell math of sponge.h: one thread a cell, x along the last axis. */
#include "gf_hip.h"
#include "sponge.h"

namespace {

__global__ void sponge_kernel(sponge_args a) {
  const gf_box b = a.box;
  const int64_t i2 = b.lo[2] + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t i1 = b.lo[1] + blockIdx.y, i0 = b.lo[0] + blockIdx.z;
  if (i2 >= b.hi[2] || i1 >= b.hi[1] || i0 >= b.hi[0]) return;
  float f =
      sponge_factor(sponge_depth_of(&a.U, 0, i0, a.width), sponge_depth_of(&a.U, 1, i1, a.width),
                    sponge_depth_of(&a.U, 2, i2, a.width), a.strength);
  static_cast<float *>(a.U.data)[(i0 * a.U.shape[1] + i1) * a.U.shape[2] + i2] *= f;
}

}  // namespace

/* A 1-D or 2-D array's last axis is axis 0 or 1: view it as 3-D with the
 * leading axes of size 1, so x always runs along the contiguous axis. */
extern "C" int sponge_launch_gpu(const void *args, void *stream) {
  sponge_args a = *static_cast<const sponge_args *>(args);
  const int shift = 3 - a.U.ndim;
  for (int d = 2; d >= 0; d--) {
    int from = d - shift;
    a.box.lo[d] = from >= 0 ? a.box.lo[from] : 0;
    a.box.hi[d] = from >= 0 ? a.box.hi[from] : 1;
    a.U.shape[d] = from >= 0 ? a.U.shape[from] : 1;
    a.U.global_shape[d] = from >= 0 ? a.U.global_shape[from] : 1;
    a.U.origin[d] = from >= 0 ? a.U.origin[from] : 0;
  }
  a.U.ndim = 3;
  int64_t rows = a.box.hi[1] - a.box.lo[1], planes = a.box.hi[0] - a.box.lo[0];
  int64_t len = a.box.hi[2] - a.box.lo[2];
  if (len <= 0 || rows <= 0 || planes <= 0) return hipSuccess;
  if (rows > 65535 || planes > 65535) return hipErrorInvalidValue; /* an example: no grid stride */
  hipLaunchKernelGGL(sponge_kernel,
                     dim3((unsigned)((len + 127) / 128), (unsigned)rows, (unsigned)planes),
                     dim3(128), 0, static_cast<hipStream_t>(stream), a);
  return static_cast<int>(hipGetLastError());
}
