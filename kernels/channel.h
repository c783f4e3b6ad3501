/* channel.h - the two one-thread kernels of a channel's signal and wait
 * (runner/channel.c): a signal stores a value into a slot of registered
 * memory (the peer's) once the stream's earlier work is done; a wait polls a
 * slot (its own) until it holds at least a value. The CPU's (channel.c here)
 * use C11 atomics on shared memory, the GPU's (channel.hip) volatile accesses
 * and a system-wide fence. Internal: not in `gflow kernels`.
 */
#ifndef GF_KERNEL_CHANNEL_H
#define GF_KERNEL_CHANNEL_H

#include <stdint.h>

#include "gflow.h"

typedef struct gf_channel_slot_args {
  uint64_t *slot; /* 8-byte aligned, in registered memory */
  uint64_t value;
} gf_channel_slot_args;

#ifdef __cplusplus
extern "C" {
#endif
extern const gf_kernel gf_kernel_channel_signal, gf_kernel_channel_wait;

/* GPU launchers (channel.hip). */
int gf_channel_signal_launch_gpu(const void *args, void *stream);
int gf_channel_wait_launch_gpu(const void *args, void *stream);
#ifdef __cplusplus
}
#endif

#endif
