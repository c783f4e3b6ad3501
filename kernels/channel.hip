/* channel.hip - a channel's signal and wait on the GPU, one thread each.
 * The signal's fence makes the stream's earlier writes (a put's copy into
 * the peer's memory) visible system-wide before the slot's store; the wait
 * polls with volatile loads (not cached in L1) and naps between looks, so a
 * GPU time-sliced between processes wastes little of its slice. */
#include "channel.h"
#include "gf_hip.h"

namespace {

__global__ void signal_kernel(uint64_t *slot, uint64_t value) {
  __threadfence_system();
  *reinterpret_cast<volatile uint64_t *>(slot) = value;
  __threadfence_system();
}

__global__ void wait_kernel(const uint64_t *slot, uint64_t value) {
  while (*reinterpret_cast<const volatile uint64_t *>(slot) < value) {
#ifdef GFLOW_HIP_ON_CUDA
    __nanosleep(1000);
#else
    __builtin_amdgcn_s_sleep(8);
#endif
  }
  __threadfence_system();
}

}  // namespace

extern "C" int gf_channel_signal_launch_gpu(const void *args, void *stream) {
  const gf_channel_slot_args *a = static_cast<const gf_channel_slot_args *>(args);
  hipLaunchKernelGGL(signal_kernel, dim3(1), dim3(1), 0, static_cast<hipStream_t>(stream), a->slot,
                     a->value);
  return static_cast<int>(hipGetLastError());
}

extern "C" int gf_channel_wait_launch_gpu(const void *args, void *stream) {
  const gf_channel_slot_args *a = static_cast<const gf_channel_slot_args *>(args);
  hipLaunchKernelGGL(wait_kernel, dim3(1), dim3(1), 0, static_cast<hipStream_t>(stream), a->slot,
                     a->value);
  return static_cast<int>(hipGetLastError());
}
