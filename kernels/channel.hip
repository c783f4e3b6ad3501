/* channel.hip - a channel's signal, wait and put with signal on the GPU.
 * A signal's fence makes the stream's earlier writes (a put's copy into the
 * peer's memory) visible system-wide before the slot's store; a wait polls
 * with volatile loads (not cached in L1), first without a nap, then napping
 * a little longer after each look up to a microsecond, so that a value that
 * arrives soon is seen soon and a GPU time-sliced between processes wastes
 * little of its slice. A put
 * with signal copies with the GPU's threads (16-byte loads and stores where
 * both ends and the size allow, four in flight a thread: into another GPU's
 * memory these are stores over NVLink), and the last block done signals
 * (and, for a put with signal and wait, waits). */
#include <atomic>

#include "channel.h"
#include "gf_hip.h"

namespace {

constexpr int kThreads = 512;
constexpr int kBlocksPerSM = 4;
constexpr int kMaxDevices = 64;
constexpr int kEagerLooks = 64; /* a wait's looks before its first nap */

struct alignas(16) chunk {
  uint32_t w[4];
};

__device__ void nap(unsigned ns) {
#ifdef GFLOW_HIP_ON_CUDA
  __nanosleep(ns);
#else
  if (ns >= 512)
    __builtin_amdgcn_s_sleep(8); /* its argument must be a constant */
  else
    __builtin_amdgcn_s_sleep(1);
#endif
}

__global__ void signal_kernel(uint64_t *slot, uint64_t value) {
  __threadfence_system();
  *reinterpret_cast<volatile uint64_t *>(slot) = value;
  __threadfence_system();
}

/* Looks without a nap first (a value a peer is about to store arrives in a
 * few microseconds, and a look is a load from the device's own memory), then
 * naps a little longer after each look. */
__device__ void wait_until(const uint64_t *slot, uint64_t value) {
  const volatile uint64_t *v = reinterpret_cast<const volatile uint64_t *>(slot);
  unsigned ns = 0;
  for (int looks = 0; *v < value; looks++) {
    if (looks < kEagerLooks) continue;
    ns = ns == 0 ? 32 : ns < 1024 ? 2 * ns : ns;
    nap(ns);
  }
  __threadfence_system();
}

__global__ void wait_kernel(const uint64_t *slot, uint64_t value) {
  wait_until(slot, value);
}

/* Chunks where `vectors`, then the bytes past them; every thread fences its
 * stores system-wide before its block counts itself done, and the block
 * that finds all others done signals, then waits if asked (the kernel, and
 * so the stream, goes on only after). */
__global__ void put_signal_kernel(unsigned char *dst, const unsigned char *src, int64_t bytes,
                                  bool vectors, uint64_t *slot, uint64_t value, uint32_t *arrivals,
                                  const uint64_t *wait_slot, uint64_t wait_value) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t from = 0;
  if (vectors) {
    const int64_t n = bytes / (int64_t)sizeof(chunk);
    chunk *d = reinterpret_cast<chunk *>(dst);
    const chunk *s = reinterpret_cast<const chunk *>(src);
    int64_t i = first;
    for (; i + 3 * stride < n; i += 4 * stride) {
      const chunk a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];
      d[i] = a, d[i + stride] = b, d[i + 2 * stride] = c, d[i + 3 * stride] = e;
    }
    for (; i < n; i += stride) d[i] = s[i];
    from = n * (int64_t)sizeof(chunk);
  }
  for (int64_t i = from + first; i < bytes; i += stride) dst[i] = src[i];
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(arrivals, 1u) == gridDim.x - 1) {
    *arrivals = 0; /* the next put on this slot, a later kernel, counts from 0 */
    __threadfence_system();
    *reinterpret_cast<volatile uint64_t *>(slot) = value;
    /* no fence after: the wait need not hold until the store has landed */
    if (wait_slot)
      wait_until(wait_slot, wait_value);
    else
      __threadfence_system();
  }
}

/* Blocks enough to keep every multiprocessor's stores in flight; the count
 * of multiprocessors asked once a device. */
unsigned put_blocks(int64_t units) {
  static std::atomic<int> sms[kMaxDevices];
  int device = 0, count = 0;
  if (hipGetDevice(&device) != hipSuccess || device < 0 || device >= kMaxDevices) {
    (void)hipGetLastError(); /* a guess below, not a failure */
  } else if ((count = sms[device].load(std::memory_order_relaxed)) == 0) {
    if (hipDeviceGetAttribute(&count, hipDeviceAttributeMultiprocessorCount, device) == hipSuccess)
      sms[device].store(count, std::memory_order_relaxed);
    else
      count = 0, (void)hipGetLastError();
  }
  const int64_t most = (int64_t)(count > 0 ? count : 80) * kBlocksPerSM;
  const int64_t want = (units + kThreads - 1) / kThreads;
  return (unsigned)(want < 1 ? 1 : want > most ? most : want);
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

extern "C" int gf_channel_put_signal_launch_gpu(const void *args, void *stream) {
  const gf_channel_put_signal_args *a = static_cast<const gf_channel_put_signal_args *>(args);
  const int64_t bytes = (int64_t)a->bytes;
  const bool vectors = (((uintptr_t)a->dst | (uintptr_t)a->src) % sizeof(chunk)) == 0;
  const int64_t units =
      vectors ? bytes / (int64_t)sizeof(chunk) + bytes % (int64_t)sizeof(chunk) : bytes;
  hipLaunchKernelGGL(put_signal_kernel, dim3(put_blocks(units)), dim3(kThreads), 0,
                     static_cast<hipStream_t>(stream), static_cast<unsigned char *>(a->dst),
                     static_cast<const unsigned char *>(a->src), bytes, vectors, a->slot, a->value,
                     a->arrivals, a->wait_slot, a->wait_value);
  return static_cast<int>(hipGetLastError());
}
