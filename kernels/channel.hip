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
 * (and, for a put with signal and wait, waits). Packets need no fence: each
 * 8-byte half carries its flag, and a take polls until both halves do. */
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

/* Up to 8 bytes of a message at `at`: one 8-byte access where aligned and
 * whole, else byte by byte (the message's last packet, or an unaligned end). */
__device__ uint2 load8(const unsigned char *src, int64_t at, int64_t bytes, bool aligned) {
  if (aligned && at + 8 <= bytes) return *reinterpret_cast<const uint2 *>(src + at);
  uint32_t w[2] = {0, 0};
  for (int k = 0; k < 8 && at + k < bytes; k++)
    reinterpret_cast<unsigned char *>(w)[k] = src[at + k];
  return make_uint2(w[0], w[1]);
}

__device__ void store8(unsigned char *dst, int64_t at, int64_t bytes, bool aligned, uint2 d) {
  if (aligned && at + 8 <= bytes) {
    *reinterpret_cast<uint2 *>(dst + at) = d;
    return;
  }
  const uint32_t w[2] = {d.x, d.y};
  for (int k = 0; k < 8 && at + k < bytes; k++)
    dst[at + k] = reinterpret_cast<const unsigned char *>(w)[k];
}

/* A packet's half: its data word beside the flag, one 8-byte store. */
__device__ uint64_t packet_word(uint32_t data, uint32_t flag) {
  return (uint64_t)data | (uint64_t)flag << 32;
}

/* A thread a packet (strided): the put's packets stored as two 8-byte
 * volatile stores (not held in a cache on the way), then the take's polled
 * with volatile 8-byte loads until both halves carry the flag. No fence: a
 * half that carries the flag carries its data. The last block done moves
 * the counts on; each block read them before counting itself done. */
__global__ void packets_kernel(gf_channel_packets_args a) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  volatile gf_channel_packet_counts *counts = a.counts;
  const uint32_t put_flag = counts->puts + 1, take_flag = counts->takes + 1;
  if (a.put_bytes) {
    const unsigned char *src = static_cast<const unsigned char *>(a.src);
    const bool aligned = reinterpret_cast<uintptr_t>(src) % 8 == 0;
    volatile uint64_t *to =
        reinterpret_cast<volatile uint64_t *>(a.put_area + (put_flag & 1) * a.put_half);
    const int64_t bytes = (int64_t)a.put_bytes, packets = (bytes + 7) / 8;
    for (int64_t i = first; i < packets; i += stride) {
      const uint2 d = load8(src, 8 * i, bytes, aligned);
      to[2 * i] = packet_word(d.x, put_flag);
      to[2 * i + 1] = packet_word(d.y, put_flag);
    }
  }
  if (a.take_bytes) {
    unsigned char *dst = static_cast<unsigned char *>(a.dst);
    const bool aligned = reinterpret_cast<uintptr_t>(dst) % 8 == 0;
    const volatile uint64_t *from =
        reinterpret_cast<const volatile uint64_t *>(a.take_area + (take_flag & 1) * a.take_half);
    const int64_t bytes = (int64_t)a.take_bytes, packets = (bytes + 7) / 8;
    for (int64_t i = first; i < packets; i += stride) {
      uint64_t w0 = from[2 * i], w1 = from[2 * i + 1];
      for (int looks = 0; (uint32_t)(w0 >> 32) != take_flag || (uint32_t)(w1 >> 32) != take_flag;
           looks++) {
        if (looks >= kEagerLooks) nap(256);
        w0 = from[2 * i], w1 = from[2 * i + 1];
      }
      store8(dst, 8 * i, bytes, aligned, make_uint2((uint32_t)w0, (uint32_t)w1));
    }
  }
  __syncthreads();
  uint32_t *arrivals = a.put_bytes ? &a.counts->put_arrivals : &a.counts->take_arrivals;
  if (threadIdx.x == 0 && atomicAdd(arrivals, 1u) == gridDim.x - 1) {
    *arrivals = 0; /* the next kernel counts from 0 */
    if (a.put_bytes) counts->puts = put_flag;
    if (a.take_bytes) counts->takes = take_flag;
  }
}

/* The device's multiprocessors, asked once a device (80: a guess when it
 * cannot be asked). */
int64_t multiprocessors() {
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
  return count > 0 ? count : 80;
}

/* Blocks of `threads` for `units`, at most `most`. */
unsigned blocks_for(int64_t units, unsigned threads, int64_t most) {
  const int64_t want = (units + threads - 1) / threads;
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
  /* Blocks enough to keep every multiprocessor's stores in flight. */
  const unsigned blocks = blocks_for(units, kThreads, multiprocessors() * kBlocksPerSM);
  hipLaunchKernelGGL(put_signal_kernel, dim3(blocks), dim3(kThreads), 0,
                     static_cast<hipStream_t>(stream), static_cast<unsigned char *>(a->dst),
                     static_cast<const unsigned char *>(a->src), bytes, vectors, a->slot, a->value,
                     a->arrivals, a->wait_slot, a->wait_value);
  return static_cast<int>(hipGetLastError());
}

extern "C" int gf_channel_packets_launch_gpu(const void *args, void *stream) {
  const gf_channel_packets_args *a = static_cast<const gf_channel_packets_args *>(args);
  const uint64_t bytes = a->put_bytes > a->take_bytes ? a->put_bytes : a->take_bytes;
  const int64_t packets = (int64_t)(bytes + 7) / 8;
  /* One block of a warp's multiple for a small message (its latency). A
   * take's blocks poll until the peer's put comes, which may be a kernel of
   * another stream on this device: so they take at most a quarter of the
   * device's room for blocks, and leave the rest to the work that puts. */
  const unsigned threads = packets < kThreads ? (unsigned)((packets + 31) / 32 * 32) : kThreads;
  const unsigned blocks = blocks_for(packets, threads, multiprocessors() * kBlocksPerSM / 4);
  hipLaunchKernelGGL(packets_kernel, dim3(blocks), dim3(threads), 0,
                     static_cast<hipStream_t>(stream), *a);
  return static_cast<int>(hipGetLastError());
}
