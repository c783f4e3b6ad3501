/* halo.hip - pack, unpack and boundary conditions on the GPU: a thread a
 * cell of the boxes, through the same offsets as the CPU loops (halo.h). */
#include "gf_hip.h"
#include "halo.h"

namespace {

constexpr int kThreads = 256;

__global__ void move_kernel(gf_halo_args a, int to_buffer, int64_t cells0, int64_t cells) {
  const size_t elem = a.array.dtype == GF_F64 ? 8 : 4;
  for (int64_t k = (int64_t)blockIdx.x * kThreads + threadIdx.x; k < cells;
       k += (int64_t)gridDim.x * kThreads) {
    const int b = k < cells0 ? 0 : 1;
    int64_t index[GF_MAX_DIMS];
    int64_t at = gf_box_offset(&a.box[b], b ? k - cells0 : k, a.array.shape, index);
    unsigned char *cell = static_cast<unsigned char *>(a.array.data) + (size_t)at * elem;
    unsigned char *packed = static_cast<unsigned char *>(a.buffer) + (size_t)k * elem;
    if (to_buffer)
      gf_move_element(packed, cell, elem);
    else
      gf_move_element(cell, packed, elem);
  }
}

__global__ void boundary_kernel(gf_boundary_args a, int64_t cells0, int64_t cells) {
  const size_t elem = a.array.dtype == GF_F64 ? 8 : 4;
  unsigned char *data = static_cast<unsigned char *>(a.array.data);
  const int64_t *shape = a.array.shape;
  for (int64_t k = (int64_t)blockIdx.x * kThreads + threadIdx.x; k < cells;
       k += (int64_t)gridDim.x * kThreads) {
    const int b = k < cells0 ? 0 : 1;
    int64_t index[GF_MAX_DIMS];
    int64_t at = gf_box_offset(&a.box[b], b ? k - cells0 : k, shape, index);
    if (a.fixed) {
      if (a.array.dtype == GF_F64)
        reinterpret_cast<double *>(data)[at] = a.value;
      else
        reinterpret_cast<float *>(data)[at] = (float)a.value;
      continue;
    }
    index[a.axis] = a.from[b];
    int64_t from = (index[0] * shape[1] + index[1]) * shape[2] + index[2];
    gf_move_element(data + (size_t)at * elem, data + (size_t)from * elem, elem);
  }
}

unsigned blocks_for(int64_t cells) {
  int64_t blocks = (cells + kThreads - 1) / kThreads;
  return (unsigned)(blocks > 65535 ? 65535 : blocks);
}

int launch_move(const void *args, void *stream, int to_buffer) {
  const gf_halo_args *a = static_cast<const gf_halo_args *>(args);
  const int64_t cells0 = gf_box_cells(&a->box[0]), cells = cells0 + gf_box_cells(&a->box[1]);
  if (cells == 0) return hipSuccess;
  hipLaunchKernelGGL(move_kernel, dim3(blocks_for(cells)), dim3(kThreads), 0,
                     static_cast<hipStream_t>(stream), *a, to_buffer, cells0, cells);
  return static_cast<int>(hipGetLastError());
}

}  // namespace

extern "C" int gf_halo_pack_launch_gpu(const void *args, void *stream) {
  return launch_move(args, stream, 1);
}

extern "C" int gf_halo_unpack_launch_gpu(const void *args, void *stream) {
  return launch_move(args, stream, 0);
}

extern "C" int gf_halo_boundary_launch_gpu(const void *args, void *stream) {
  const gf_boundary_args *a = static_cast<const gf_boundary_args *>(args);
  const int64_t cells0 = gf_box_cells(&a->box[0]), cells = cells0 + gf_box_cells(&a->box[1]);
  if (cells == 0) return hipSuccess;
  hipLaunchKernelGGL(boundary_kernel, dim3(blocks_for(cells)), dim3(kThreads), 0,
                     static_cast<hipStream_t>(stream), *a, cells0, cells);
  return static_cast<int>(hipGetLastError());
}
