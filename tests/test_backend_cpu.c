/* test_backend_cpu.c - the CPU backend: the backend contract
 * (tests/backend_contract.h, every rule of backend.h), then what is the CPU
 * backend's own: its error messages, the gates that show a wait or a
 * synchronise holds up no more than it must, concurrency, backpressure,
 * OpenMP threads, the executor's per-task sink and tear-down.
 *
 * The kernels here do test work (sleep, set a flag, wait for a flag) so that
 * ordering is observed through values, not through elapsed time. A kernel that
 * waits gives up after WAIT_TIMEOUT_NS and reports it, so a broken backend
 * fails a check instead of hanging the test.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"
#include "backend_contract.h"
#include "check.h"

#define WAIT_TIMEOUT_NS (5 * 1000000000LL)

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_us(int us) {
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* 1 when *counter reaches target within WAIT_TIMEOUT_NS, else 0. */
static int wait_for_count(_Atomic int *counter, int target) {
  int64_t end = now_ns() + WAIT_TIMEOUT_NS;
  while (atomic_load(counter) < target) {
    if (now_ns() > end) return 0;
    sleep_us(100);
  }
  return 1;
}

static const gf_param no_params[] = {{NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL}};

/* append: sleeps, then appends `value` to a log. */
typedef struct append_args {
  int *log;
  _Atomic int *length;
  int value;
  int sleep_us;
} append_args;

static void append_run(const void *args) {
  const append_args *a = args;
  if (a->sleep_us) sleep_us(a->sleep_us);
  a->log[atomic_fetch_add(a->length, 1)] = a->value;
}

static const gf_kernel append_kernel = {
    .name = "append", .params = no_params, .args_size = sizeof(append_args), .run_cpu = append_run};

/* set: sleeps, then stores `value` into a flag. */
typedef struct set_args {
  _Atomic int *flag;
  int value;
  int sleep_us;
} set_args;

static void set_run(const void *args) {
  const set_args *a = args;
  if (a->sleep_us) sleep_us(a->sleep_us);
  atomic_store(a->flag, a->value);
}

static const gf_kernel set_kernel = {
    .name = "set", .params = no_params, .args_size = sizeof(set_args), .run_cpu = set_run};

/* observe: records what a flag holds now, then announces it ran. */
typedef struct observe_args {
  _Atomic int *flag;
  int *seen;
  _Atomic int *ran; /* may be NULL */
} observe_args;

static void observe_run(const void *args) {
  const observe_args *a = args;
  *a->seen = atomic_load(a->flag);
  if (a->ran) atomic_store(a->ran, 1);
}

static const gf_kernel observe_kernel = {.name = "observe",
                                         .params = no_params,
                                         .args_size = sizeof(observe_args),
                                         .run_cpu = observe_run};

/* meet: adds `add` to a counter, then waits until it reaches `target`. With
 * add 0 it is a gate the host opens; with add 1 and target 2 a rendezvous. */
typedef struct meet_args {
  _Atomic int *counter;
  int add;
  int target;
  int *met; /* 1: the target was reached, 0: timed out */
} meet_args;

static void meet_run(const void *args) {
  const meet_args *a = args;
  if (a->add) atomic_fetch_add(a->counter, a->add);
  *a->met = wait_for_count(a->counter, a->target);
}

static const gf_kernel meet_kernel = {
    .name = "meet", .params = no_params, .args_size = sizeof(meet_args), .run_cpu = meet_run};

#ifdef _OPENMP
/* omp_threads: the OpenMP team size a kernel gets, and a parallel fill. */
typedef struct omp_args {
  int *max_threads;
  int *cells;
  int n;
} omp_args;

static void omp_run(const void *args) {
  const omp_args *a = args;
  *a->max_threads = omp_get_max_threads();
#pragma omp parallel for
  for (int i = 0; i < a->n; i++) a->cells[i] = 3 * i + 1;
}

static const gf_kernel omp_kernel = {
    .name = "omp", .params = no_params, .args_size = sizeof(omp_args), .run_cpu = omp_run};
#endif

static const gf_tag no_tag = {-1, -1, -1};

static gf_backend *backend_with(int threads, int queue_depth, int timing) {
  gf_backend_options options = {
      .device = -1, .threads = threads, .queue_depth = queue_depth, .timing = timing};
  gf_backend *b = NULL;
  if (gf_backend_cpu_create(&options, &b) != GF_OK) return NULL;
  return b;
}

static gf_status launch_append(gf_backend *b, gf_stream *s, int *log, _Atomic int *length,
                               int value, int sleep, gf_tag tag) {
  append_args a = {log, length, value, sleep};
  return b->ops->launch(b, s, &append_kernel, &a, tag);
}

static void test_identity(void) {
  gf_backend *b = backend_with(3, 0, 0);
  CHECK(b != NULL);
  if (!b) return;
  CHECK_STR(b->name, "cpu");
  CHECK_INT(b->can_run_kernels_on_host_memory, 1);
  CHECK(strncmp(b->description, "CPU backend: ", 13) == 0);
  CHECK(strstr(b->description, " cores, 3 threads per kernel, ") != NULL);
  CHECK(strstr(b->description, " GiB available") != NULL);
  CHECK(b->ops->bytes_free(b, GF_SPACE_HOST) > 0);
  b->ops->destroy(b);
}

/* Beyond the contract: blocks are 64-byte aligned, and every space hands out
 * memory even for zero bytes. */
static void test_alloc_alignment_and_zero_bytes(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  for (int space = 0; space < GF_SPACE_COUNT; space++)
    for (int ordered = 0; ordered < 2; ordered++) {
      void *p = NULL, *z = NULL;
      CHECK_INT(b->ops->alloc(b, (gf_space)space, 1000, ordered ? s : NULL, &p), GF_OK);
      CHECK_INT(b->ops->alloc(b, (gf_space)space, 0, ordered ? s : NULL, &z), GF_OK);
      CHECK(p != NULL);
      CHECK(z != NULL);
      CHECK_INT((uintptr_t)p % 64, 0);
      b->ops->free(b, (gf_space)space, p, ordered ? s : NULL);
      b->ops->free(b, (gf_space)space, z, ordered ? s : NULL);
    }
  b->ops->destroy(b);
}

static void test_alloc_failure(void) {
  gf_backend *b = backend_with(0, 0, 0);
  void *p = &p;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, SIZE_MAX, NULL, &p), GF_INTERNAL);
  CHECK(p == NULL);
  char expected[128];
  snprintf(expected, sizeof expected, "cannot allocate %zu bytes of host memory for pinned space",
           (size_t)SIZE_MAX);
  CHECK_STR(b->error, expected);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_COUNT, 8, NULL, &p), GF_INTERNAL);
  CHECK_STR(b->error, "unknown memory space 5");
  b->ops->destroy(b);
}

static void test_launch_errors(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  static const gf_kernel gpu_only = {.name = "gpu_only", .params = no_params, .args_size = 8};
  static const gf_kernel too_big = {.name = "too_big",
                                    .params = no_params,
                                    .args_size = GF_MAX_KERNEL_ARGS_SIZE + 88,
                                    .run_cpu = set_run};
  char args[GF_MAX_KERNEL_ARGS_SIZE + 88] = {0};
  CHECK_INT(b->ops->launch(b, s, &gpu_only, args, no_tag), GF_INTERNAL);
  CHECK_STR(b->error, "kernel 'gpu_only' has no CPU implementation");
  CHECK_INT(b->ops->launch(b, s, &too_big, args, no_tag), GF_INTERNAL);
  CHECK_STR(b->error, "kernel 'too_big' has 1112 bytes of arguments, more than 1024");
  b->ops->destroy(b);
}

static void test_wait_on_own_stream(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *a = NULL;
  gf_event *e = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  _Atomic int flag = 0;
  int seen = -1;
  set_args set = {&flag, 1, 20000};
  CHECK_INT(b->ops->launch(b, a, &set_kernel, &set, no_tag), GF_OK);
  CHECK_INT(b->ops->event_record(b, e, a), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, a, e), GF_OK);
  observe_args observe = {&flag, &seen, NULL};
  CHECK_INT(b->ops->launch(b, a, &observe_kernel, &observe, no_tag), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, a), GF_OK);
  CHECK_INT(seen, 1);
  b->ops->destroy(b);
}

/* event_synchronize waits for the captured work and not for what follows. */
static void test_event_synchronize(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *a = NULL;
  gf_event *e = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  _Atomic int flag = 0, open = 0;
  int opened = -1;
  set_args set = {&flag, 1, 30000};
  CHECK_INT(b->ops->launch(b, a, &set_kernel, &set, no_tag), GF_OK);
  CHECK_INT(b->ops->event_record(b, e, a), GF_OK);
  meet_args gate = {&open, 0, 1, &opened};
  CHECK_INT(b->ops->launch(b, a, &meet_kernel, &gate, no_tag), GF_OK);
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);
  CHECK_INT(atomic_load(&flag), 1);
  atomic_store(&open, 1);
  CHECK_INT(b->ops->stream_synchronize(b, a), GF_OK);
  CHECK_INT(opened, 1);
  b->ops->destroy(b);
}

/* stream_synchronize waits for its stream and not for another. */
static void test_stream_synchronize(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *a = NULL, *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  _Atomic int flag = 0, open = 0;
  int opened = -1;
  meet_args gate = {&open, 0, 1, &opened};
  CHECK_INT(b->ops->launch(b, s, &meet_kernel, &gate, no_tag), GF_OK);
  set_args set = {&flag, 1, 30000};
  CHECK_INT(b->ops->launch(b, a, &set_kernel, &set, no_tag), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, a), GF_OK);
  CHECK_INT(atomic_load(&flag), 1);
  atomic_store(&open, 1);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  CHECK_INT(opened, 1);
  b->ops->destroy(b);
}

/* Each kernel returns only once the other has started: both must run at once. */
static void test_streams_run_concurrently(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *a = NULL, *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  _Atomic int arrived = 0;
  int met_a = -1, met_b = -1;
  meet_args on_a = {&arrived, 1, 2, &met_a}, on_b = {&arrived, 1, 2, &met_b};
  CHECK_INT(b->ops->launch(b, a, &meet_kernel, &on_a, no_tag), GF_OK);
  CHECK_INT(b->ops->launch(b, s, &meet_kernel, &on_b, no_tag), GF_OK);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  CHECK_INT(met_a, 1);
  CHECK_INT(met_b, 1);
  b->ops->destroy(b);
}

static void test_backpressure_keeps_order(void) {
  gf_backend *b = backend_with(0, 2, 0);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  int log[100] = {0};
  _Atomic int length = 0;
  CHECK_INT(launch_append(b, s, log, &length, 0, 20000, no_tag), GF_OK);
  for (int i = 1; i < 100; i++) CHECK_INT(launch_append(b, s, log, &length, i, 0, no_tag), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  CHECK_INT(atomic_load(&length), 100);
  int in_order = 1;
  for (int i = 0; i < 100; i++)
    if (log[i] != i) in_order = 0;
  CHECK(in_order);
  b->ops->destroy(b);
}

typedef struct producer {
  gf_backend *b;
  gf_stream *s;
  int *log;
  _Atomic int *length;
  _Atomic int issued;
} producer;

static void *produce(void *arg) {
  producer *p = arg;
  for (int i = 0; i < 10; i++) {
    launch_append(p->b, p->s, p->log, p->length, i, 0, no_tag);
    atomic_fetch_add(&p->issued, 1);
  }
  return NULL;
}

/* With a queue of 2 behind a closed gate, the second enqueue must block. */
static void test_enqueue_blocks_when_full(void) {
  gf_backend *b = backend_with(0, 2, 0);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  _Atomic int open = 0, length = 0;
  int opened = -1, log[10] = {0};
  meet_args gate = {&open, 0, 1, &opened};
  CHECK_INT(b->ops->launch(b, s, &meet_kernel, &gate, no_tag), GF_OK);
  producer p = {b, s, log, &length, 0};
  pthread_t thread;
  CHECK_INT(pthread_create(&thread, NULL, produce, &p), 0);
  CHECK(wait_for_count(&p.issued, 1));
  /* Only a failure can be timing-dependent here: a non-blocking queue would
   * have taken all ten long before this. */
  sleep_us(50000);
  CHECK_INT(atomic_load(&p.issued), 1);
  CHECK_INT(atomic_load(&length), 0);
  atomic_store(&open, 1);
  pthread_join(thread, NULL);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  CHECK_INT(opened, 1);
  CHECK_INT(atomic_load(&p.issued), 10);
  CHECK_INT(atomic_load(&length), 10);
  for (int i = 0; i < 10; i++) CHECK_INT(log[i], i);
  b->ops->destroy(b);
}

typedef struct event_waiter {
  gf_backend *b;
  gf_event *e;
  _Atomic int done;
} event_waiter;

static void *wait_event(void *arg) {
  event_waiter *w = arg;
  w->b->ops->event_synchronize(w->b, w->e);
  atomic_store(&w->done, 1);
  return NULL;
}

/* The worker wakes a sleeping waiter when its ticket is done, not after
 * every operation: two threads asleep on one stream for different tickets
 * (the later one asleep first) each wake when their own work is done, and
 * only then. */
static void test_waiters_wake_at_their_ticket(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *s = NULL;
  gf_event *first = NULL, *second = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &first), GF_OK);
  CHECK_INT(b->ops->event_create(b, &second), GF_OK);
  _Atomic int open1 = 0, open2 = 0;
  int opened1 = -1, opened2 = -1;
  meet_args gate1 = {&open1, 0, 1, &opened1}, gate2 = {&open2, 0, 1, &opened2};
  CHECK_INT(b->ops->launch(b, s, &meet_kernel, &gate1, no_tag), GF_OK);
  CHECK_INT(b->ops->event_record(b, first, s), GF_OK);
  CHECK_INT(b->ops->launch(b, s, &meet_kernel, &gate2, no_tag), GF_OK);
  CHECK_INT(b->ops->event_record(b, second, s), GF_OK);
  event_waiter late = {b, second, 0}, early = {b, first, 0};
  pthread_t late_thread, early_thread;
  CHECK_INT(pthread_create(&late_thread, NULL, wait_event, &late), 0);
  sleep_us(20000);
  CHECK_INT(pthread_create(&early_thread, NULL, wait_event, &early), 0);
  sleep_us(20000); /* both asleep, or at worst still spinning: either must hold */
  CHECK_INT(atomic_load(&early.done) + atomic_load(&late.done), 0);
  atomic_store(&open1, 1);
  CHECK(wait_for_count(&early.done, 1));
  sleep_us(20000);
  CHECK_INT(atomic_load(&late.done), 0);
  atomic_store(&open2, 1);
  CHECK(wait_for_count(&late.done, 1));
  pthread_join(early_thread, NULL);
  pthread_join(late_thread, NULL);
  CHECK_INT(opened1 + opened2, 2);
  b->ops->destroy(b);
}

/* The executor's sink (gf_task_timing_report) sums busy time and count per
 * task and leaves gflow's own work (task -1) out; what every sink receives is
 * the contract's (contract_sink_reports). */
static void test_task_timing_sink(void) {
  gf_backend *b = backend_with(0, 0, 1);
  gf_task_timing timings[3];
  for (int i = 0; i < 3; i++) {
    atomic_init(&timings[i].busy_ns, 0);
    atomic_init(&timings[i].count, 0);
  }
  b->sink = (gf_op_sink){gf_task_timing_report, timings, 0, NULL};
  gf_stream *a = NULL, *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  int log[16] = {0};
  _Atomic int length = 0;
  char from[64] = "abc", to[64] = {0};
  for (int i = 0; i < 5; i++)
    CHECK_INT(launch_append(b, a, log, &length, i, 0, (gf_tag){0, i, 0}), GF_OK);
  CHECK_INT(launch_append(b, s, log, &length, 5, 0, no_tag), GF_OK);
  CHECK_INT(b->ops->copy_async(b, s, to, from, sizeof from, no_tag), GF_OK);
  for (int i = 0; i < 3; i++)
    CHECK_INT(b->ops->copy_async(b, s, to, from, sizeof from, (gf_tag){1, i, 1}), GF_OK);
  CHECK_INT(launch_append(b, a, log, &length, 6, 2000, (gf_tag){2, 0, 0}), GF_OK);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  CHECK_INT(atomic_load(&length), 7);
  CHECK_INT(atomic_load(&timings[0].count), 5);
  CHECK_INT(atomic_load(&timings[1].count), 3);
  CHECK_INT(atomic_load(&timings[2].count), 1);
  /* The kernel slept 2 ms, so at least that much was measured. */
  CHECK(atomic_load(&timings[2].busy_ns) >= 2000000);
  CHECK_STR(to, "abc");
  b->ops->destroy(b);
}

static void test_destroy_drains_queued_work(void) {
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *a = NULL, *s = NULL, *c = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &c), GF_OK);
  int log_a[5] = {0}, log_b[5] = {0}, log_c[5] = {0};
  _Atomic int length_a = 0, length_b = 0, length_c = 0;
  for (int i = 0; i < 5; i++) {
    CHECK_INT(launch_append(b, a, log_a, &length_a, i, 2000, no_tag), GF_OK);
    CHECK_INT(launch_append(b, s, log_b, &length_b, 10 + i, 2000, no_tag), GF_OK);
    CHECK_INT(launch_append(b, c, log_c, &length_c, 20 + i, 2000, no_tag), GF_OK);
  }
  b->ops->stream_destroy(b, c);
  CHECK_INT(atomic_load(&length_c), 5);
  /* A free queued behind work, and an event never destroyed: both released
   * with the backend (AddressSanitizer's leak check sees to it). */
  void *block = NULL;
  gf_event *e = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_POOL, 4096, a, &block), GF_OK);
  b->ops->free(b, GF_SPACE_POOL, block, a);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  CHECK_INT(b->ops->event_record(b, e, s), GF_OK);
  b->ops->destroy(b);
  CHECK_INT(atomic_load(&length_a), 5);
  CHECK_INT(atomic_load(&length_b), 5);
  for (int i = 0; i < 5; i++) {
    CHECK_INT(log_a[i], i);
    CHECK_INT(log_b[i], 10 + i);
    CHECK_INT(log_c[i], 20 + i);
  }
}

#ifdef _OPENMP
static void test_openmp_threads_per_kernel(void) {
  gf_backend *b = backend_with(3, 0, 0);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  int max_threads = -1, cells[100] = {0};
  omp_args args = {&max_threads, cells, 100};
  CHECK_INT(b->ops->launch(b, s, &omp_kernel, &args, no_tag), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  CHECK_INT(max_threads, 3);
  int filled = 1;
  for (int i = 0; i < 100; i++)
    if (cells[i] != 3 * i + 1) filled = 0;
  CHECK(filled);
  b->ops->destroy(b);
}
#endif

/* The default threads per kernel: every core, less one for each of the
 * runner's busy threads where at least 6 stay; 0 (the OpenMP default)
 * otherwise. */
static void test_kernel_threads_default(void) {
  CHECK_INT(gf_cpu_kernel_threads(16, 2), 14);
  CHECK_INT(gf_cpu_kernel_threads(8, 2), 6);
  CHECK_INT(gf_cpu_kernel_threads(7, 2), 0); /* 5 would stay */
  CHECK_INT(gf_cpu_kernel_threads(2, 2), 0);
  CHECK_INT(gf_cpu_kernel_threads(64, 0), 0); /* nothing writes often */
  CHECK(gf_cpu_cores() >= 1);
}

/* Rule 13 across processes: a forked child (before this process has any
 * thread) and the parent each register an inbox, swap handles through
 * pipes, put a pattern into the other's inbox, signal, wait for the other's
 * signal and read their own: each sees the other's pattern. Waits that never
 * end are ended by alarm(). */
static void channel_side(int in, int out, uint32_t mine, uint32_t theirs, int *ok) {
  enum { N = 4096 };
  const size_t bytes = N * sizeof(uint32_t);
  gf_backend *b = backend_with(0, 0, 0);
  gf_stream *s = NULL;
  gf_channel *ch = NULL;
  gf_channel_handle h, peer;
  uint32_t *src = NULL, *dst = NULL;
  *ok = b && b->ops->stream_create(b, GF_STREAM_NORMAL, &s) == GF_OK &&
        b->ops->alloc(b, GF_SPACE_PINNED, bytes, NULL, (void **)&src) == GF_OK &&
        b->ops->alloc(b, GF_SPACE_PINNED, bytes, NULL, (void **)&dst) == GF_OK &&
        gf_channel_create(b, bytes, 0, &ch, &h) == GF_OK &&
        write(out, &h, sizeof h) == (ssize_t)sizeof h &&
        read(in, &peer, sizeof peer) == (ssize_t)sizeof peer &&
        gf_channel_connect(ch, &peer) == GF_OK;
  if (*ok) {
    for (int i = 0; i < N; i++) src[i] = mine * (uint32_t)(i + 1);
    gf_tag tag = {-1, -1, -1};
    *ok = gf_channel_put(ch, s, 0, src, bytes, tag) == GF_OK &&
          gf_channel_signal(ch, s, 1, 1, tag) == GF_OK &&
          gf_channel_wait(ch, s, 1, 1, tag) == GF_OK &&
          b->ops->copy_async(b, s, dst, gf_channel_inbox(ch), bytes, tag) == GF_OK &&
          b->ops->stream_synchronize(b, s) == GF_OK;
    for (int i = 0; *ok && i < N; i++) *ok = dst[i] == theirs * (uint32_t)(i + 1);
  }
  if (!*ok && b) fprintf(stderr, "  channel between processes: %s\n", b->error);
  /* The other side's put into this inbox came before its signal, which this
   * side waited for; this side's put into the other's, before its own. */
  char done = 1;
  if (write(out, &done, 1) != 1 || read(in, &done, 1) != 1) *ok = 0;
  gf_channel_free(ch);
  if (b) {
    b->ops->free(b, GF_SPACE_PINNED, src, NULL);
    b->ops->free(b, GF_SPACE_PINNED, dst, NULL);
    b->ops->destroy(b);
  }
}

static void test_channel_between_processes(void) {
  int to_child[2], to_parent[2];
  CHECK(pipe(to_child) == 0 && pipe(to_parent) == 0);
  alarm(60);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int ok = 0;
    channel_side(to_child[0], to_parent[1], 0x9e3779b9u, 0x85ebca6bu, &ok);
    _exit(ok ? 0 : 1);
  }
  int ok = 0, status = 0;
  channel_side(to_parent[0], to_child[1], 0x85ebca6bu, 0x9e3779b9u, &ok);
  CHECK(ok);
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  alarm(0);
  for (int i = 0; i < 2; i++) close(to_child[i]), close(to_parent[i]);
}

static gf_backend *open_cpu(int timing) {
  return backend_with(0, 0, timing);
}

int main(void) {
  RUN(test_channel_between_processes); /* first: fork before any thread exists */
  RUN(test_identity);
  RUN(test_alloc_alignment_and_zero_bytes);
  RUN(test_alloc_failure);
  RUN(test_launch_errors);
  RUN(test_wait_on_own_stream);
  RUN(test_event_synchronize);
  RUN(test_stream_synchronize);
  RUN(test_streams_run_concurrently);
  RUN(test_backpressure_keeps_order);
  RUN(test_enqueue_blocks_when_full);
  RUN(test_waiters_wake_at_their_ticket);
  RUN(test_task_timing_sink);
  RUN(test_destroy_drains_queued_work);
  RUN(test_kernel_threads_default);
#ifdef _OPENMP
  RUN(test_openmp_threads_per_kernel);
#endif
  gf_contract_run(open_cpu, "cpu");
  return check_summary();
}
