/* channel.h - the kernels of a channel's operations (runner/channel.c): a
 * signal stores a value into a slot of registered memory (the peer's) once
 * the stream's earlier work is done; a wait polls a slot (its own) until it
 * holds at least a value; a put with signal copies into the peer's region and
 * then signals, in one kernel (MSCCL++'s putWithSignal). The CPU's
 * (channel.c here) use C11 atomics on shared memory, the GPU's (channel.hip)
 * volatile accesses and system-wide fences, and the GPU's threads for the
 * copy (stores over NVLink or within the device). Internal: not in
 * `gflow kernels`.
 */
#ifndef GF_KERNEL_CHANNEL_H
#define GF_KERNEL_CHANNEL_H

#include <stdint.h>

#include "gflow.h"

typedef struct gf_channel_slot_args {
  uint64_t *slot; /* 8-byte aligned, in registered memory */
  uint64_t value;
} gf_channel_slot_args;

/* A put and its signal: `bytes` from `src` to `dst` (the peer's region), then
 * `value` into `slot` (the peer's) once every byte is visible to the peer;
 * then, when `wait_slot` is set, a wait until it (one's own) holds at least
 * `wait_value`. The GPU's blocks count themselves done in `arrivals` (4
 * bytes of the sender's own region, 0 between puts: the last block puts it
 * back), and the last one signals and waits; so a slot's puts with signal
 * are issued on one stream. */
typedef struct gf_channel_put_signal_args {
  void *dst;
  const void *src;
  uint64_t bytes;
  uint64_t *slot;
  uint64_t value;
  uint32_t *arrivals;
  const uint64_t *wait_slot; /* NULL: no wait */
  uint64_t wait_value;
} gf_channel_put_signal_args;

#ifdef __cplusplus
extern "C" {
#endif
extern const gf_kernel gf_kernel_channel_signal, gf_kernel_channel_wait,
    gf_kernel_channel_put_signal;

/* GPU launchers (channel.hip). */
int gf_channel_signal_launch_gpu(const void *args, void *stream);
int gf_channel_wait_launch_gpu(const void *args, void *stream);
int gf_channel_put_signal_launch_gpu(const void *args, void *stream);
#ifdef __cplusplus
}
#endif

#endif
