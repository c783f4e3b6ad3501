/* channel.c - a channel's signal and wait on the CPU: a release store and
 * acquire loads on shared memory, so the data a put wrote before a signal is
 * seen after the wait. A wait spins for 50 us, then naps 20 us between
 * looks, so ranks sharing cores (more ranks than cores) do not spin each
 * other out. */
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

static void wait_until(_Atomic uint64_t *slot, uint64_t value) {
  if (atomic_load_explicit(slot, memory_order_acquire) >= value) return;
  const int64_t spin_end = mono_ns() + 50000;
  const struct timespec nap = {0, 20000};
  while (atomic_load_explicit(slot, memory_order_acquire) < value)
    if (mono_ns() > spin_end) nanosleep(&nap, NULL);
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
