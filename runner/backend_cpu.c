/* backend_cpu.c - the CPU backend: every stream is a worker thread with a
 * bounded in-order queue, events are (stream, ticket) pairs.
 *
 * Each stream counts operations `submitted` (by the host) and `completed` (by
 * its worker). Recording an event enqueues nothing: it captures the stream's
 * submitted count, and the event is complete once the completed count reaches
 * it. A wait is a queue entry carrying that pair by value, so re-recording the
 * event later does not move a wait already issued (HIP semantics). A free on a
 * stream is a queue entry too, so it runs after the work queued before it.
 *
 * The numerical guard's scan (scan_finite) is a queue entry too: the worker
 * runs it as an OpenMP-parallel pass over the values, like a kernel.
 *
 * A graph (rule 15) is a recorded list of queue entries, event records and
 * waits: while a stream captures, what would be queued on it is appended to
 * the graph instead, and a launch of the graph issues the list again, in
 * order, to the same streams (the records and waits recorded anew, so each
 * replay orders its own work).
 *
 * Timing (options->timing and a sink installed): the worker reads
 * CLOCK_MONOTONIC around each launch and copy the sink wants timed (asked
 * when it is issued) and reports it to the sink from its own thread, before
 * the operation counts as completed.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"

#define CPU_DEFAULT_QUEUE_DEPTH 1024
#define CPU_ALLOC_ALIGNMENT 64
/* An allocation of at least this many bytes is aligned to it and asks for
 * huge pages (madvise; where transparent huge pages are left to the program,
 * Debian's and Ubuntu's default, it would otherwise get 4 KiB ones): a
 * stream through a large field then walks 512 times fewer pages. Heat 1-D
 * order 4 on 2^26 cells, one core of the build machine: 3.4 to 4.0 GPts/s
 * against 2.7 to 2.9 with 4 KiB pages; on 16 cores of the GPU machine
 * about as fast either way (scripts/bench/FINDINGS.md, "Huge pages"). */
#define CPU_HUGE_PAGE ((size_t)2 << 20)
/* Spin this long on a completed count before sleeping: most waits between
 * short operations end sooner than a condition-variable wake-up would. */
#define CPU_SPIN_NS 4000

typedef enum cpu_op_kind {
  CPU_OP_COPY,
  CPU_OP_KERNEL,
  CPU_OP_WAIT,
  CPU_OP_FREE,
  CPU_OP_SCAN
} cpu_op_kind;

typedef struct cpu_op {
  cpu_op_kind kind;
  gf_tag tag;
  int timed; /* a launch or copy the sink wants timed (decided when issued) */
  union {
    struct {
      void *dst;
      const void *src;
      size_t bytes;
    } copy;
    struct {
      const gf_kernel *kernel;
      _Alignas(max_align_t) unsigned char args[GF_MAX_KERNEL_ARGS_SIZE];
    } kernel;
    struct {
      gf_stream *stream;
      int64_t ticket;
    } wait;
    void *free_ptr;
    struct {
      const void *data;
      int64_t count;
      gf_dtype dtype;
      int finite;
      double max_abs;
      gf_scan_result *result;
    } scan;
  };
} cpu_op;

typedef struct cpu_backend cpu_backend;

/* One recorded step of a graph: a queue entry for `stream`, or an event
 * record or wait on it. */
typedef enum cpu_graph_step_kind {
  CPU_STEP_OP,
  CPU_STEP_RECORD,
  CPU_STEP_WAIT
} cpu_graph_step_kind;
typedef struct cpu_graph_step {
  cpu_graph_step_kind kind;
  gf_stream *stream;
  gf_event *event;
  cpu_op op;
} cpu_graph_step;

struct gf_graph {
  cpu_graph_step *steps;
  size_t count, capacity;
  int out_of_memory;      /* a step could not be recorded: capture_end fails */
  cpu_graph_step scratch; /* what graph_append hands out then */
};

struct gf_stream {
  cpu_backend *backend;
  pthread_t thread;
  pthread_mutex_t lock; /* guards everything below but `completed`'s fast reads */
  pthread_cond_t work;  /* the worker: an entry arrived or it should stop */
  pthread_cond_t space; /* producers: a slot was freed */
  pthread_cond_t done;  /* waiters: `completed` reached `wake_at` */
  cpu_op *ring;
  size_t capacity, head, count;
  int64_t submitted;
  /* Who sleeps, so that the worker wakes a thread only when what it waits
   * for is there: a host waiting 32 steps back is woken once, not after
   * every operation (a futex wake and a context switch each, which took the
   * OpenMP team's cores at small grids). */
  int done_waiters, space_waiters;
  int64_t wake_at;           /* the least ticket a sleeping waiter needs; INT64_MAX when none */
  _Atomic int64_t completed; /* written under `lock`, read without it when spinning */
  int stopping;
  gf_graph *capture;      /* not NULL: entries go to this graph, not the queue */
  gf_stream *prev, *next; /* the backend's list */
};

struct gf_event {
  gf_stream *stream; /* NULL until recorded: an unrecorded event is complete */
  int64_t ticket;
  gf_graph *captured; /* recorded while this graph captures: a wait on it joins the capture */
  gf_event *prev, *next;
};

struct cpu_backend {
  gf_backend base; /* first, so a gf_backend * is a cpu_backend * */
  int threads;
  int queue_depth;
  int timing_on;        /* options->timing: report to base.sink once the caller sets it */
  pthread_mutex_t lock; /* guards the lists */
  gf_stream *streams;
  gf_event *events;
  _Atomic unsigned channels; /* registered regions so far: part of their names */
};

static cpu_backend *cpu_of(gf_backend *b) {
  return (cpu_backend *)b;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static gf_status cpu_fail(gf_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static gf_status cpu_fail(gf_backend *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->error, sizeof b->error, fmt, ap);
  va_end(ap);
  return GF_INTERNAL;
}

/* ---- waiting --------------------------------------------------------- */

static int stream_reached(gf_stream *s, int64_t ticket) {
  return atomic_load_explicit(&s->completed, memory_order_acquire) >= ticket;
}

/* Blocks until `s` has completed `ticket` operations. */
static void stream_wait_ticket(gf_stream *s, int64_t ticket) {
  int64_t done = atomic_load_explicit(&s->completed, memory_order_acquire);
  if (done >= ticket) return;
  /* Spin only for the operation running now: a wait for more (the host's
   * fence, steps behind) sleeps at once rather than take a core from the
   * kernels' threads. */
  int64_t spin_end = ticket - done == 1 ? now_ns() + CPU_SPIN_NS : 0;
  while (spin_end && now_ns() < spin_end)
    if (stream_reached(s, ticket)) return;
  pthread_mutex_lock(&s->lock);
  while (atomic_load_explicit(&s->completed, memory_order_relaxed) < ticket) {
    if (ticket < s->wake_at) s->wake_at = ticket;
    s->done_waiters++;
    pthread_cond_wait(&s->done, &s->lock);
    s->done_waiters--;
  }
  pthread_mutex_unlock(&s->lock);
}

/* ---- the numerical guard's scan ---------------------------------------- */

/* Values are tested a block at a time without branching (so the loop
 * vectorises); only a block that holds a refused value is walked again. */
#define CPU_SCAN_BLOCK 4096

#ifdef _OPENMP
#define CPU_SIMD_ANY _Pragma("omp simd reduction(| : any)")
#else
#define CPU_SIMD_ANY
#endif

/* The first index in [lo, hi) whose value fails, or hi. With `finite`, x
 * fails unless |x| <= lim (NaN and Inf fail: lim is finite); without, when
 * |x| > lim (NaN passes). */
#define CPU_SCAN_RANGE(name, type, fabs_fn)                                          \
  static int64_t name(const type *x, int64_t lo, int64_t hi, int finite, type lim) { \
    for (int64_t b = lo; b < hi; b += CPU_SCAN_BLOCK) {                              \
      int64_t e = hi - b > CPU_SCAN_BLOCK ? b + CPU_SCAN_BLOCK : hi;                 \
      int any = 0;                                                                   \
      if (finite) {                                                                  \
        CPU_SIMD_ANY for (int64_t i = b; i < e; i++) any |= !(fabs_fn(x[i]) <= lim); \
      } else {                                                                       \
        CPU_SIMD_ANY for (int64_t i = b; i < e; i++) any |= fabs_fn(x[i]) > lim;     \
      }                                                                              \
      if (!any) continue;                                                            \
      for (int64_t i = b; i < e; i++)                                                \
        if (finite ? !(fabs_fn(x[i]) <= lim) : fabs_fn(x[i]) > lim) return i;        \
    }                                                                                \
    return hi;                                                                       \
  }
CPU_SCAN_RANGE(scan_range_f32, float, fabsf)
CPU_SCAN_RANGE(scan_range_f64, double, fabs)

/* The largest float <= bound, so that |x| <= it in float is |x| <= bound in double. */
static float float_at_most(double bound) {
  float f = (float)bound;
  return (double)f > bound ? nextafterf(f, 0.0f) : f;
}

static void scan_run(const cpu_op *op) {
  const int64_t count = op->scan.count;
  const int finite = op->scan.finite;
  double lim = op->scan.max_abs;
  if (finite && lim > DBL_MAX) lim = DBL_MAX;
  const float lim32 = float_at_most(lim);
  int64_t first = count;
  /* Each thread takes one contiguous share, so the least of the threads'
   * first indices is the first of all. */
#ifdef _OPENMP
#pragma omp parallel reduction(min : first)
#endif
  {
    int64_t threads = 1, t = 0;
#ifdef _OPENMP
    threads = omp_get_num_threads(), t = omp_get_thread_num();
#endif
    int64_t share = count / threads, extra = count % threads;
    int64_t lo = t * share + (t < extra ? t : extra);
    int64_t hi = lo + share + (t < extra);
    int64_t found = op->scan.dtype == GF_F64 ? scan_range_f64(op->scan.data, lo, hi, finite, lim)
                                             : scan_range_f32(op->scan.data, lo, hi, finite, lim32);
    if (found < hi) first = found;
  }
  gf_scan_result *r = op->scan.result;
  r->index = first < count ? first : -1;
  r->value = first >= count             ? 0
             : op->scan.dtype == GF_F64 ? ((const double *)op->scan.data)[first]
                                        : (double)((const float *)op->scan.data)[first];
}

/* ---- the worker ------------------------------------------------------ */

static void op_run(cpu_backend *cb, const cpu_op *op) {
  gf_op_sink sink = cb->base.sink;
  int timed = op->timed && sink.report;
  int64_t start = timed ? now_ns() : 0;
  switch (op->kind) {
    case CPU_OP_COPY:
      /* memmove: a copy of an allocation onto itself is harmless on a GPU. */
      if (op->copy.bytes) memmove(op->copy.dst, op->copy.src, op->copy.bytes);
      break;
    case CPU_OP_KERNEL:
      op->kernel.kernel->run_cpu(op->kernel.args);
      break;
    case CPU_OP_WAIT:
      stream_wait_ticket(op->wait.stream, op->wait.ticket);
      break;
    case CPU_OP_FREE:
      free(op->free_ptr);
      break;
    case CPU_OP_SCAN:
      scan_run(op);
      break;
  }
  if (timed) {
    gf_op_timing t = {.tag = op->tag, .start_ns = start, .end_ns = now_ns()};
    t.kind = op->kind == CPU_OP_COPY ? GF_TIMED_COPY : GF_TIMED_LAUNCH;
    t.bytes = op->kind == CPU_OP_COPY ? op->copy.bytes : 0;
    sink.report(sink.user, &t);
  }
}

static void *stream_worker(void *arg) {
  gf_stream *s = arg;
  cpu_backend *cb = s->backend;
#ifdef _OPENMP
  /* The OpenMP thread count is per thread: set it where the kernels run. */
  if (cb->threads > 0) omp_set_num_threads(cb->threads);
#endif
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (s->count == 0 && !s->stopping) pthread_cond_wait(&s->work, &s->lock);
    if (s->count == 0) break; /* stopping and drained */
    /* The slot stays owned by the queue until the operation has run, so
     * producers cannot overwrite it and it needs no copy. */
    const cpu_op *op = &s->ring[s->head];
    pthread_mutex_unlock(&s->lock);
    op_run(cb, op);
    pthread_mutex_lock(&s->lock);
    s->head = (s->head + 1) % s->capacity;
    s->count--;
    int64_t completed = atomic_fetch_add_explicit(&s->completed, 1, memory_order_release) + 1;
    /* A producer sleeps until the queue is half empty, so that it issues
     * in bursts instead of being woken for every slot. */
    if (s->space_waiters && s->count <= s->capacity / 2) pthread_cond_broadcast(&s->space);
    /* Every sleeper wakes; those still short of their ticket set wake_at again. */
    if (s->done_waiters && completed >= s->wake_at) {
      s->wake_at = INT64_MAX;
      pthread_cond_broadcast(&s->done);
    }
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* Appends a step to a graph; out of memory, the graph's scratch step. */
static cpu_graph_step *graph_append(gf_graph *g, cpu_graph_step_kind kind, gf_stream *s) {
  if (g->count == g->capacity) {
    size_t capacity = g->capacity ? 2 * g->capacity : 64;
    cpu_graph_step *steps = gf_realloc(g->steps, capacity * sizeof *steps);
    if (!steps) {
      g->out_of_memory = 1;
      return &g->scratch;
    }
    g->steps = steps;
    g->capacity = capacity;
  }
  cpu_graph_step *step = &g->steps[g->count++];
  step->kind = kind;
  step->stream = s;
  step->event = NULL;
  step->op.timed = 0;
  return step;
}

/* Returns a free slot with `s->lock` held, after waiting for one while the
 * queue is full (the host's backpressure), or, while `s` captures, a step
 * of its graph. Finish with stream_commit(). */
static cpu_op *stream_reserve(gf_stream *s) {
  if (s->capture) return &graph_append(s->capture, CPU_STEP_OP, s)->op;
  pthread_mutex_lock(&s->lock);
  while (s->count == s->capacity) {
    s->space_waiters++;
    pthread_cond_wait(&s->space, &s->lock);
    s->space_waiters--;
  }
  cpu_op *op = &s->ring[(s->head + s->count) % s->capacity];
  op->timed = 0;
  return op;
}

static void stream_commit(gf_stream *s) {
  if (s->capture) return;
  s->count++;
  s->submitted++;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->lock);
}

/* ---- streams --------------------------------------------------------- */

static gf_status cpu_stream_create(gf_backend *b, gf_stream_priority priority, gf_stream **out) {
  (void)priority; /* the stream threads are of equal standing */
  cpu_backend *cb = cpu_of(b);
  gf_stream *s = gf_calloc(1, sizeof *s);
  cpu_op *ring = gf_calloc((size_t)cb->queue_depth, sizeof *ring);
  if (!s || !ring) {
    free(s);
    free(ring);
    return cpu_fail(b, "out of memory: creating a stream");
  }
  s->backend = cb;
  s->capacity = (size_t)cb->queue_depth;
  s->ring = ring;
  s->wake_at = INT64_MAX;
  atomic_init(&s->completed, 0);
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->work, NULL);
  pthread_cond_init(&s->space, NULL);
  pthread_cond_init(&s->done, NULL);
  int err = pthread_create(&s->thread, NULL, stream_worker, s);
  if (err) {
    pthread_cond_destroy(&s->done);
    pthread_cond_destroy(&s->space);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
    free(s->ring);
    free(s);
    return cpu_fail(b, "cannot start a stream worker thread: pthread_create: %s", strerror(err));
  }
  pthread_mutex_lock(&cb->lock);
  s->next = cb->streams;
  if (cb->streams) cb->streams->prev = s;
  cb->streams = s;
  pthread_mutex_unlock(&cb->lock);
  *out = s;
  return GF_OK;
}

/* Runs what is queued, then stops the worker and frees the stream. */
static void stream_drain_and_free(gf_stream *s) {
  pthread_mutex_lock(&s->lock);
  s->stopping = 1;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
  pthread_cond_destroy(&s->done);
  pthread_cond_destroy(&s->space);
  pthread_cond_destroy(&s->work);
  pthread_mutex_destroy(&s->lock);
  free(s->ring);
  free(s);
}

static void cpu_stream_destroy(gf_backend *b, gf_stream *s) {
  if (!s) return;
  cpu_backend *cb = cpu_of(b);
  pthread_mutex_lock(&cb->lock);
  if (s->prev)
    s->prev->next = s->next;
  else
    cb->streams = s->next;
  if (s->next) s->next->prev = s->prev;
  pthread_mutex_unlock(&cb->lock);
  stream_drain_and_free(s);
}

static gf_status cpu_stream_synchronize(gf_backend *b, gf_stream *s) {
  (void)b;
  pthread_mutex_lock(&s->lock);
  int64_t target = s->submitted;
  pthread_mutex_unlock(&s->lock);
  stream_wait_ticket(s, target);
  return GF_OK;
}

/* ---- events ---------------------------------------------------------- */

static gf_status cpu_event_create(gf_backend *b, gf_event **out) {
  cpu_backend *cb = cpu_of(b);
  gf_event *e = gf_calloc(1, sizeof *e);
  if (!e) return cpu_fail(b, "out of memory: creating an event");
  pthread_mutex_lock(&cb->lock);
  e->next = cb->events;
  if (cb->events) cb->events->prev = e;
  cb->events = e;
  pthread_mutex_unlock(&cb->lock);
  *out = e;
  return GF_OK;
}

static void cpu_event_destroy(gf_backend *b, gf_event *e) {
  if (!e) return;
  cpu_backend *cb = cpu_of(b);
  pthread_mutex_lock(&cb->lock);
  if (e->prev)
    e->prev->next = e->next;
  else
    cb->events = e->next;
  if (e->next) e->next->prev = e->prev;
  pthread_mutex_unlock(&cb->lock);
  free(e);
}

static gf_status cpu_event_record(gf_backend *b, gf_event *e, gf_stream *s) {
  (void)b;
  if (s->capture) {
    graph_append(s->capture, CPU_STEP_RECORD, s)->event = e;
    e->captured = s->capture;
    return GF_OK;
  }
  pthread_mutex_lock(&s->lock);
  int64_t ticket = s->submitted;
  pthread_mutex_unlock(&s->lock);
  e->stream = s;
  e->ticket = ticket;
  return GF_OK;
}

static gf_status cpu_stream_wait_event(gf_backend *b, gf_stream *s, gf_event *e) {
  (void)b;
  if (!s->capture && e->captured) s->capture = e->captured; /* `s` joins the capture */
  if (s->capture) {
    graph_append(s->capture, CPU_STEP_WAIT, s)->event = e;
    return GF_OK;
  }
  gf_stream *target = e->stream;
  int64_t ticket = e->ticket;
  /* In-order execution already satisfies a wait on the stream's own work. */
  if (!target || target == s || stream_reached(target, ticket)) return GF_OK;
  cpu_op *op = stream_reserve(s);
  op->kind = CPU_OP_WAIT;
  op->tag = (gf_tag){-1, -1, -1};
  op->wait.stream = target;
  op->wait.ticket = ticket;
  stream_commit(s);
  return GF_OK;
}

static gf_status cpu_event_synchronize(gf_backend *b, gf_event *e) {
  (void)b;
  if (e->stream) stream_wait_ticket(e->stream, e->ticket);
  return GF_OK;
}

static gf_status cpu_event_query(gf_backend *b, gf_event *e, int *done) {
  (void)b;
  *done = !e->stream || stream_reached(e->stream, e->ticket);
  return GF_OK;
}

/* ---- memory ---------------------------------------------------------- */

/* A stream-ordered allocation is an ordinary one here: usable at once is
 * usable in stream order. */
static gf_status cpu_alloc(gf_backend *b, gf_space space, size_t bytes, gf_stream *stream,
                           void **out) {
  (void)stream;
  *out = NULL;
  if ((unsigned)space >= GF_SPACE_COUNT) return cpu_fail(b, "unknown memory space %d", (int)space);
  /* Every space is ordinary host memory here; aligned_alloc needs a whole
   * number of alignments, and a zero-byte request still gets a pointer. */
  void *p = NULL;
  const size_t align = bytes >= CPU_HUGE_PAGE ? CPU_HUGE_PAGE : CPU_ALLOC_ALIGNMENT;
  if (bytes <= SIZE_MAX - (align - 1)) {
    size_t rounded = (bytes + align - 1) / align * align;
    p = aligned_alloc(align, rounded ? rounded : align);
#ifdef MADV_HUGEPAGE
    /* Advice: where the kernel has no huge pages it fails, and the pages
     * are ordinary ones. */
    if (p && align == CPU_HUGE_PAGE) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  }
  if (!p)
    return cpu_fail(b, "cannot allocate %zu bytes of host memory for %s space", bytes,
                    gf_space_name(space));
  *out = p;
  return GF_OK;
}

static void cpu_free(gf_backend *b, gf_space space, void *ptr, gf_stream *stream) {
  (void)b;
  (void)space;
  if (!stream || !ptr) {
    free(ptr);
    return;
  }
  cpu_op *op = stream_reserve(stream);
  op->kind = CPU_OP_FREE;
  op->tag = (gf_tag){-1, -1, -1};
  op->free_ptr = ptr;
  stream_commit(stream);
}

static size_t cpu_bytes_free(gf_backend *b, gf_space space) {
  (void)b;
  (void)space;
  return gf_host_bytes_available();
}

/* ---- work ------------------------------------------------------------ */

static gf_status cpu_copy_async(gf_backend *b, gf_stream *s, void *dst, const void *src,
                                size_t bytes, gf_tag tag) {
  int timed = cpu_of(b)->timing_on && gf_sink_times(&b->sink, tag);
  cpu_op *op = stream_reserve(s);
  op->kind = CPU_OP_COPY;
  op->tag = tag;
  op->timed = timed;
  op->copy.dst = dst;
  op->copy.src = src;
  op->copy.bytes = bytes;
  stream_commit(s);
  return GF_OK;
}

static gf_status cpu_launch(gf_backend *b, gf_stream *s, const gf_kernel *kernel, const void *args,
                            gf_tag tag) {
  if (!kernel->run_cpu) return cpu_fail(b, "kernel '%s' has no CPU implementation", kernel->name);
  if (kernel->args_size > GF_MAX_KERNEL_ARGS_SIZE)
    return cpu_fail(b, "kernel '%s' has %zu bytes of arguments, more than %d", kernel->name,
                    kernel->args_size, GF_MAX_KERNEL_ARGS_SIZE);
  int timed = cpu_of(b)->timing_on && gf_sink_times(&b->sink, tag);
  cpu_op *op = stream_reserve(s);
  op->kind = CPU_OP_KERNEL;
  op->tag = tag;
  op->timed = timed;
  op->kernel.kernel = kernel;
  if (kernel->args_size) memcpy(op->kernel.args, args, kernel->args_size);
  stream_commit(s);
  return GF_OK;
}

static gf_status cpu_scan_finite(gf_backend *b, gf_stream *s, const void *data, int64_t count,
                                 gf_dtype dtype, int finite, double max_abs,
                                 gf_scan_result *result) {
  (void)b;
  cpu_op *op = stream_reserve(s);
  op->kind = CPU_OP_SCAN;
  op->tag = (gf_tag){-1, -1, -1};
  op->scan.data = data;
  op->scan.count = count;
  op->scan.dtype = dtype;
  op->scan.finite = finite;
  op->scan.max_abs = max_abs;
  op->scan.result = result;
  stream_commit(s);
  return GF_OK;
}

static gf_status cpu_synchronize(gf_backend *b) {
  cpu_backend *cb = cpu_of(b);
  pthread_mutex_lock(&cb->lock);
  for (gf_stream *s = cb->streams; s; s = s->next) cpu_stream_synchronize(b, s);
  pthread_mutex_unlock(&cb->lock);
  return GF_OK;
}

static void cpu_destroy(gf_backend *b) {
  if (!b) return;
  cpu_backend *cb = cpu_of(b);
  /* Drain every stream before freeing any: a queued wait may refer to another. */
  for (gf_stream *s = cb->streams; s; s = s->next) cpu_stream_synchronize(b, s);
  while (cb->streams) {
    gf_stream *s = cb->streams;
    cb->streams = s->next;
    stream_drain_and_free(s);
  }
  while (cb->events) {
    gf_event *e = cb->events;
    cb->events = e->next;
    free(e);
  }
  pthread_mutex_destroy(&cb->lock);
  free(cb);
}

/* ---- graphs ------------------------------------------------------------ */

static gf_status cpu_graph_capture_begin(gf_backend *b, gf_stream *origin) {
  if (origin->capture) return cpu_fail(b, "graph capture: the stream is capturing already");
  gf_graph *g = gf_calloc(1, sizeof *g);
  if (!g) return cpu_fail(b, "out of memory: starting a graph capture");
  origin->capture = g;
  return GF_OK;
}

static void cpu_graph_destroy(gf_backend *b, gf_graph *g) {
  (void)b;
  if (!g) return;
  free(g->steps);
  free(g);
}

static gf_status cpu_graph_capture_end(gf_backend *b, gf_stream *origin, gf_graph *reuse,
                                       gf_graph **out) {
  cpu_backend *cb = cpu_of(b);
  gf_graph *g = origin->capture;
  *out = NULL;
  if (!g) return cpu_fail(b, "graph capture: the stream is not capturing");
  pthread_mutex_lock(&cb->lock);
  for (gf_stream *s = cb->streams; s; s = s->next)
    if (s->capture == g) s->capture = NULL;
  for (gf_event *e = cb->events; e; e = e->next)
    if (e->captured == g) e->captured = NULL;
  pthread_mutex_unlock(&cb->lock);
  if (g->out_of_memory) {
    cpu_graph_destroy(b, g);
    return cpu_fail(b, "out of memory: recording a graph");
  }
  if (reuse) { /* the same operations with other arguments: take the new list */
    free(reuse->steps);
    reuse->steps = g->steps;
    reuse->count = g->count;
    reuse->capacity = g->capacity;
    free(g);
    g = reuse;
  }
  *out = g;
  return GF_OK;
}

static gf_status cpu_graph_launch(gf_backend *b, gf_graph *g, gf_stream *s) {
  (void)s; /* the steps name their streams, the first the capture's origin */
  for (size_t i = 0; i < g->count; i++) {
    const cpu_graph_step *step = &g->steps[i];
    switch (step->kind) {
      case CPU_STEP_OP: {
        cpu_op *op = stream_reserve(step->stream);
        size_t size = step->op.kind == CPU_OP_KERNEL
                          ? offsetof(cpu_op, kernel.args) + step->op.kernel.kernel->args_size
                          : sizeof *op;
        memcpy(op, &step->op, size);
        stream_commit(step->stream);
        break;
      }
      case CPU_STEP_RECORD:
        cpu_event_record(b, step->event, step->stream);
        break;
      case CPU_STEP_WAIT:
        cpu_stream_wait_event(b, step->stream, step->event);
        break;
    }
  }
  return GF_OK;
}

/* ---- registered memory (channels) -------------------------------------- */

/* A region is a POSIX shared memory object, /gflow-chan-PID-N, mapped shared.
 * Its one opener removes the name once it has mapped it, and unregister
 * removes it too (for a region nobody opened), so no name outlives a run
 * that ends normally. */
typedef struct cpu_channel_handle {
  uint64_t magic;
  uint64_t bytes;
  int64_t pid;
  char name[64];
} cpu_channel_handle;
_Static_assert(sizeof(cpu_channel_handle) <= GF_CHANNEL_BACKEND_HANDLE_BYTES, "fits a handle");
#define CPU_CHANNEL_MAGIC 0x676663686e6c3031ull /* "gfchnl01" */

static gf_status cpu_channel_register(gf_backend *b, size_t bytes, void **local,
                                      gf_channel_handle *handle) {
  cpu_backend *cb = cpu_of(b);
  cpu_channel_handle h = {.magic = CPU_CHANNEL_MAGIC, .bytes = bytes, .pid = (int64_t)getpid()};
  snprintf(h.name, sizeof h.name, "/gflow-chan-%ld-%u", (long)getpid(),
           atomic_fetch_add(&cb->channels, 1));
  *local = NULL;
  int fd = shm_open(h.name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return cpu_fail(b, "shm_open %s: %s", h.name, strerror(errno));
  void *p = MAP_FAILED;
  if (ftruncate(fd, (off_t)bytes) == 0)
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(h.name);
    return cpu_fail(b, "registering %zu bytes of shared memory (%s): %s", bytes, h.name,
                    strerror(err));
  }
  memset(handle, 0, sizeof *handle);
  memcpy(handle->bytes, &h, sizeof h);
  *local = p;
  return GF_OK;
}

static gf_status cpu_channel_handle_read(gf_backend *b, const gf_channel_handle *handle,
                                         cpu_channel_handle *h) {
  memcpy(h, handle->bytes, sizeof *h);
  h->name[sizeof h->name - 1] = '\0';
  if (h->magic != CPU_CHANNEL_MAGIC)
    return cpu_fail(b, "a channel handle that the CPU backend did not make (another backend's?)");
  return GF_OK;
}

static gf_status cpu_channel_open(gf_backend *b, const gf_channel_handle *handle, void **remote) {
  cpu_channel_handle h;
  *remote = NULL;
  if (cpu_channel_handle_read(b, handle, &h) != GF_OK) return GF_INTERNAL;
  int fd = shm_open(h.name, O_RDWR, 0);
  if (fd < 0)
    return cpu_fail(b,
                    "opening process %ld's shared memory %s: shm_open: %s (not on this "
                    "machine, or opened already)",
                    (long)h.pid, h.name, strerror(errno));
  void *p = mmap(NULL, (size_t)h.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED)
    return cpu_fail(b, "mapping process %ld's shared memory %s: mmap: %s", (long)h.pid, h.name,
                    strerror(err));
  shm_unlink(h.name); /* opened once: the name is no longer needed */
  *remote = p;
  return GF_OK;
}

static void cpu_channel_close(gf_backend *b, const gf_channel_handle *handle, void *remote) {
  cpu_channel_handle h;
  if (!remote || cpu_channel_handle_read(b, handle, &h) != GF_OK) return;
  munmap(remote, (size_t)h.bytes);
}

static void cpu_channel_unregister(gf_backend *b, const gf_channel_handle *handle, void *local) {
  cpu_channel_handle h;
  if (!local || cpu_channel_handle_read(b, handle, &h) != GF_OK) return;
  munmap(local, (size_t)h.bytes);
  shm_unlink(h.name); /* ENOENT when the peer opened it: fine */
}

static const gf_backend_ops cpu_ops = {
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .stream_synchronize = cpu_stream_synchronize,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .stream_wait_event = cpu_stream_wait_event,
    .event_synchronize = cpu_event_synchronize,
    .event_query = cpu_event_query,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .bytes_free = cpu_bytes_free,
    .copy_async = cpu_copy_async,
    .launch = cpu_launch,
    .scan_finite = cpu_scan_finite,
    .synchronize = cpu_synchronize,
    .destroy = cpu_destroy,
    .channel_register = cpu_channel_register,
    .channel_open = cpu_channel_open,
    .channel_close = cpu_channel_close,
    .channel_unregister = cpu_channel_unregister,
    .graph_capture_begin = cpu_graph_capture_begin,
    .graph_capture_end = cpu_graph_capture_end,
    .graph_launch = cpu_graph_launch,
    .graph_destroy = cpu_graph_destroy,
    .graph_wait_external = cpu_stream_wait_event, /* a replayed wait reads the event anew */
};

/* "4.5" for the _OPENMP date the compiler defines. */
static const char *openmp_version(void) {
#ifdef _OPENMP
  static const struct {
    long date;
    const char *version;
  } versions[] = {{202111, "5.2"}, {202011, "5.1"}, {201811, "5.0"}, {201511, "4.5"},
                  {201307, "4.0"}, {201107, "3.1"}, {200805, "3.0"}};
  for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
    if (_OPENMP >= versions[i].date) return versions[i].version;
  return "2.5";
#else
  return NULL;
#endif
}

int gf_cpu_cores(void) {
#ifdef _OPENMP
  return omp_get_num_procs();
#else
  return (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
}

int gf_cpu_kernel_threads(int cores, int runner_threads) {
  return runner_threads > 0 && cores - runner_threads >= 6 ? cores - runner_threads : 0;
}

gf_status gf_backend_cpu_create(const gf_backend_options *options, gf_backend **out) {
  *out = NULL;
  cpu_backend *cb = gf_calloc(1, sizeof *cb);
  if (!cb) return GF_INTERNAL; /* the caller says: out of memory */
  cb->base.ops = &cpu_ops;
  cb->base.name = "cpu";
  cb->base.can_run_kernels_on_host_memory = 1;
  cb->base.graphs = 1;
  cb->threads = options ? options->threads : 0;
  cb->queue_depth =
      options && options->queue_depth > 0 ? options->queue_depth : CPU_DEFAULT_QUEUE_DEPTH;
  cb->timing_on = options ? options->timing : 0;
  pthread_mutex_init(&cb->lock, NULL);

  int cores = gf_cpu_cores();
  const char *omp = openmp_version();
  double gib = (double)cpu_bytes_free(&cb->base, GF_SPACE_HOST) / (1024.0 * 1024.0 * 1024.0);
  char threads[48] = "";
  if (cb->threads > 0) snprintf(threads, sizeof threads, ", %d threads per kernel", cb->threads);
  snprintf(cb->base.description, sizeof cb->base.description,
           "CPU backend: %d cores%s, %s%s, %.1f GiB available", cores, threads,
           omp ? "OpenMP " : "no OpenMP", omp ? omp : "", gib);
  *out = &cb->base;
  return GF_OK;
}
