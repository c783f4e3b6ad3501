/* check.hip - the numerical guard's scan on the GPU (backend.h, scan_finite).
 *
 * One pass over a field instance: each thread walks a grid-stride share and
 * keeps the first index it refuses; a block takes the least of its threads'
 * and, when it found one, folds it into the scratch's index with atomicMin,
 * so the scratch ends with the first refused index of all (or stays at
 * UINT64_MAX, -1 as an int64). A one-thread kernel then writes {index,
 * value} (gf_scan_result's layout) into the pinned result on the host, which
 * the device reaches through its mapping, and resets the scratch for the next
 * scan: two launches a scan, no copy, no memset.
 */
#include "gf_hip.h"

#include <stdint.h>

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

template <typename T>
__device__ __forceinline__ bool refused(T x, int finite, double max_abs) {
  const double a = fabs(static_cast<double>(x));
  return (finite && !(a <= 1.7976931348623157e308)) || a > max_abs;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    scan_kernel(const T *x, int64_t count, int finite, double max_abs, unsigned long long *first) {
  __shared__ unsigned long long best[kThreads];
  unsigned long long mine = ~0ull;
  const int64_t stride = (int64_t)gridDim.x * kThreads;
  for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < count; i += stride)
    if (refused(x[i], finite, max_abs)) {
      mine = (unsigned long long)i;
      break;
    }
  best[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half && best[threadIdx.x + half] < best[threadIdx.x])
      best[threadIdx.x] = best[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0 && best[0] != ~0ull) atomicMin(first, best[0]);
}

template <typename T>
__global__ void value_kernel(const T *x, unsigned long long *scratch, unsigned long long *result) {
  const unsigned long long at = scratch[0];
  double value = at == ~0ull ? 0.0 : static_cast<double>(x[at]);
  result[0] = at; /* ~0: -1, none */
  result[1] = *reinterpret_cast<unsigned long long *>(&value);
  scratch[0] = ~0ull;
  __threadfence_system();
}

template <typename T>
int scan(const void *data, int64_t count, int finite, double max_abs, void *scratch, void *result,
         hipStream_t stream) {
  const T *x = static_cast<const T *>(data);
  unsigned long long *s = static_cast<unsigned long long *>(scratch);
  int64_t blocks = (count + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks > 0)
    hipLaunchKernelGGL(scan_kernel<T>, dim3((unsigned)blocks), dim3(kThreads), 0, stream, x, count,
                       finite, max_abs, s);
  hipError_t err = hipGetLastError();
  if (err != hipSuccess) return static_cast<int>(err);
  hipLaunchKernelGGL(value_kernel<T>, dim3(1), dim3(1), 0, stream, x, s,
                     static_cast<unsigned long long *>(result));
  return static_cast<int>(hipGetLastError());
}

}  // namespace

/* Scans on `stream`; {index, value} lands in pinned `result`, `scratch` (kept
 * at ~0 between scans) is reset again. Returns a hipError_t. */
extern "C" int gf_scan_finite_launch_gpu(const void *data, int64_t count, int is_f64, int finite,
                                         double max_abs, void *scratch, void *result,
                                         void *stream) {
  hipStream_t s = static_cast<hipStream_t>(stream);
  return is_f64 ? scan<double>(data, count, finite, max_abs, scratch, result, s)
                : scan<float>(data, count, finite, max_abs, scratch, result, s);
}
