/* channel.c - a channel's signal and wait on the CPU: a release store and
 * acquire loads on shared memory, so the data a put wrote before a signal is
 * seen after the wait. Packets are 8-byte atomic words, 4 bytes of data
 * beside the flag, so a word that carries the flag carries its data. A wait
 * spins for 50 us, then naps 20 us between looks, so ranks sharing cores
 * (more ranks than cores) do not spin each other out. */
#include "channel.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "builtin.h"

static void signal_run_cpu(const void *args) {
  const gf_channel_slot_args *a = args;
  atomic_store_explicit((_Atomic uint64_t *)a->slot, a->value, memory_order_release);
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A wait's patience: looks without a pause for 50 us, then naps. */
typedef struct patience {
  int64_t spin_end;
} patience;

static void pause_a_little(patience *p) {
  if (p->spin_end == 0) p->spin_end = mono_ns() + 50000;
  if (mono_ns() > p->spin_end) nanosleep(&(struct timespec){0, 20000}, NULL);
}

static void wait_until(_Atomic uint64_t *slot, uint64_t value) {
  patience p = {0};
  while (atomic_load_explicit(slot, memory_order_acquire) < value) pause_a_little(&p);
}

static void wait_run_cpu(const void *args) {
  const gf_channel_slot_args *a = args;
  wait_until((_Atomic uint64_t *)a->slot, a->value);
}

/* The copy, then the signal's release store (the peer's acquiring wait sees
 * every byte), then the wait if any. */
static void put_signal_run_cpu(const void *args) {
  const gf_channel_put_signal_args *a = args;
  if (a->bytes) memcpy(a->dst, a->src, (size_t)a->bytes);
  atomic_store_explicit((_Atomic uint64_t *)a->slot, a->value, memory_order_release);
  if (a->wait_slot) wait_until((_Atomic uint64_t *)a->wait_slot, a->wait_value);
}

/* A packet's half: its data word beside the flag, one 8-byte store. */
static uint64_t packet_word(uint32_t data, uint32_t flag) {
  return (uint64_t)data | (uint64_t)flag << 32;
}

/* The put first (its packets carry the count of puts so far, plus one),
 * then the take (each packet waited for, its data copied out); the counts
 * move on after. Relaxed atomics suffice: data and flag are one word. */
static void packets_run_cpu(const void *args) {
  const gf_channel_packets_args *a = args;
  gf_channel_packet_counts *counts = a->counts;
  if (a->put_bytes) {
    const uint32_t flag = counts->puts + 1;
    _Atomic uint64_t *to = (_Atomic uint64_t *)(a->put_area + (flag & 1) * a->put_half);
    const unsigned char *src = a->src;
    for (uint64_t at = 0, i = 0; at < a->put_bytes; at += 8, i++) {
      uint32_t d[2] = {0, 0};
      memcpy(d, src + at, a->put_bytes - at < 8 ? (size_t)(a->put_bytes - at) : 8);
      atomic_store_explicit(&to[2 * i], packet_word(d[0], flag), memory_order_relaxed);
      atomic_store_explicit(&to[2 * i + 1], packet_word(d[1], flag), memory_order_relaxed);
    }
    counts->puts = flag;
  }
  if (a->take_bytes) {
    const uint32_t flag = counts->takes + 1;
    _Atomic uint64_t *from = (_Atomic uint64_t *)(a->take_area + (flag & 1) * a->take_half);
    unsigned char *dst = a->dst;
    patience p = {0};
    /* The last packet first: the put stores in order, so once it has come
     * the sweep below mostly finds the others there, and does not chase
     * the writer line by line. */
    const uint64_t last = 2 * ((a->take_bytes + 7) / 8) - 1;
    while (atomic_load_explicit(&from[last], memory_order_relaxed) >> 32 != flag)
      pause_a_little(&p);
    for (uint64_t at = 0, i = 0; at < a->take_bytes; at += 8, i++) {
      uint64_t w[2];
      for (int half = 0; half < 2; half++)
        while ((w[half] = atomic_load_explicit(&from[2 * i + half], memory_order_relaxed)) >> 32 !=
               flag)
          pause_a_little(&p);
      uint32_t d[2] = {(uint32_t)w[0], (uint32_t)w[1]};
      memcpy(dst + at, d, a->take_bytes - at < 8 ? (size_t)(a->take_bytes - at) : 8);
    }
    counts->takes = flag;
  }
}

static const gf_param channel_params[] = {{NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL}};

const gf_kernel gf_kernel_channel_signal = {
    .name = "channel_signal",
    .help = "stores a value into a channel's slot after the stream's earlier work",
    .params = channel_params,
    .args_size = sizeof(gf_channel_slot_args),
    .run_cpu = signal_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_channel_signal_launch_gpu),
};

const gf_kernel gf_kernel_channel_wait = {
    .name = "channel_wait",
    .help = "holds the stream until a channel's slot holds at least a value",
    .params = channel_params,
    .args_size = sizeof(gf_channel_slot_args),
    .run_cpu = wait_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_channel_wait_launch_gpu),
};

const gf_kernel gf_kernel_channel_put_signal = {
    .name = "channel_put_signal",
    .help =
        "copies into a channel peer's region, stores a value into its slot, and may wait for "
        "one's own",
    .params = channel_params,
    .args_size = sizeof(gf_channel_put_signal_args),
    .run_cpu = put_signal_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_channel_put_signal_launch_gpu),
};

const gf_kernel gf_kernel_channel_packets = {
    .name = "channel_packets",
    .help = "puts packets into a channel peer's area and takes the peer's from one's own",
    .params = channel_params,
    .args_size = sizeof(gf_channel_packets_args),
    .run_cpu = packets_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_channel_packets_launch_gpu),
};
