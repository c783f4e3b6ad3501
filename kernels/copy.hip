/* copy.hip - a copy between two device allocations by the GPU's threads,
 * for the GPU backend's device-to-device copies (backend_gpu.c): the copy
 * engines stay free for the copies to and from the host that run beside
 * them (a batched output's ring is copied out while the next snapshots are
 * copied in), and a copy of a few hundred KiB costs a kernel's launch
 * rather than an engine's. 16-byte loads and stores where both ends and the
 * size allow, bytes otherwise. */
#include <stdint.h>

#include "gf_hip.h"

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

struct alignas(16) chunk {
  uint32_t w[4];
};

__global__ void copy_chunks(chunk *dst, const chunk *src, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * kThreads)
    dst[i] = src[i];
}

__global__ void copy_bytes(unsigned char *dst, const unsigned char *src, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * kThreads)
    dst[i] = src[i];
}

unsigned blocks_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return (unsigned)(blocks > kMaxBlocks ? kMaxBlocks : blocks < 1 ? 1 : blocks);
}

}  // namespace

extern "C" int gf_copy_launch_gpu(void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes == 0) return hipSuccess;
  hipStream_t s = static_cast<hipStream_t>(stream);
  if (((uintptr_t)dst | (uintptr_t)src | bytes) % sizeof(chunk) == 0) {
    const int64_t n = (int64_t)(bytes / sizeof(chunk));
    hipLaunchKernelGGL(copy_chunks, dim3(blocks_for(n)), dim3(kThreads), 0, s,
                       static_cast<chunk *>(dst), static_cast<const chunk *>(src), n);
  } else {
    hipLaunchKernelGGL(copy_bytes, dim3(blocks_for((int64_t)bytes)), dim3(kThreads), 0, s,
                       static_cast<unsigned char *>(dst), static_cast<const unsigned char *>(src),
                       (int64_t)bytes);
  }
  return static_cast<int>(hipGetLastError());
}
