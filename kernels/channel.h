/* channel.h - the kernels of a channel's operations (runner/channel.c): a
 * signal stores a value into a slot of registered memory (the peer's) once
 * the stream's earlier work is done; a wait polls a slot (its own) until it
 * holds at least a value; a put with signal copies into the peer's region and
 * then signals, in one kernel (MSCCL++'s putWithSignal); a put of packets
 * writes data and flags together into the peer's packet area, and a take of
 * packets polls its own until every packet carries the expected flag and
 * copies the data out (MSCCL++'s LL packets: no fence, no signal). The CPU's
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

/* A packet: 8 bytes of data in two 4-byte words, each beside its own copy
 * of the flag in an 8-byte half written with one store, so a half that
 * carries the expected flag carries its data too, in whatever order the
 * halves arrive. */
typedef struct gf_channel_packet {
  uint32_t data0, flag0, data1, flag1;
} gf_channel_packet;

/* The counts of a channel end's puts and takes of packets (its own region):
 * a put's flag is its put count plus one, and the packets go to that flag's
 * half of the peer's area (flag & 1); a take expects its take count plus
 * one in that half of its own. Counted on the device, by the last block of
 * each kernel (arrivals), so a graph replays them correctly. */
typedef struct gf_channel_packet_counts {
  uint32_t puts, takes, put_arrivals, take_arrivals;
} gf_channel_packet_counts;

/* A put and a take of packets, either of which may be absent (0 bytes): the
 * put sends `put_bytes` of `src` into `put_area` (the peer's, two halves of
 * `put_half` packets each), the take waits for `take_bytes` in `take_area`
 * (one's own, halves of `take_half`) and writes them to `dst`. The put is
 * issued first, so a put and a take in one kernel is a symmetric exchange. */
typedef struct gf_channel_packets_args {
  const void *src;
  uint64_t put_bytes;
  gf_channel_packet *put_area;
  uint64_t put_half;
  void *dst;
  uint64_t take_bytes;
  const gf_channel_packet *take_area;
  uint64_t take_half;
  gf_channel_packet_counts *counts; /* this end's */
} gf_channel_packets_args;

#ifdef __cplusplus
extern "C" {
#endif
extern const gf_kernel gf_kernel_channel_signal, gf_kernel_channel_wait,
    gf_kernel_channel_put_signal, gf_kernel_channel_packets;

/* GPU launchers (channel.hip). */
int gf_channel_signal_launch_gpu(const void *args, void *stream);
int gf_channel_wait_launch_gpu(const void *args, void *stream);
int gf_channel_put_signal_launch_gpu(const void *args, void *stream);
int gf_channel_packets_launch_gpu(const void *args, void *stream);
#ifdef __cplusplus
}
#endif

#endif
