/* backend_gpu.c - the GPU backend: each operation of backend.h on the HIP runtime.
 *
 * A gf_stream is a non-blocking HIP stream (no implicit ordering with the null
 * stream), a gf_event a HIP event. Every HIP call goes through GPU_CHECK, which
 * writes "hipXxx: errorName: text" into the backend's error and returns
 * GF_INTERNAL; nothing here exits.
 *
 * Timing (options->timing and gf_backend.sink set): each launch and copy the
 * sink wants timed (gf_sink_times; the executor samples) is bracketed by a
 * pair of timing events; the pairs are resolved lazily, at synchronize and
 * destroy, or when GPU_TIMING_RESOLVE_AT more are pending than after the
 * last resolve (then only the finished ones, without waiting), so timing
 * adds two event records per timed operation and no host wait. Resolving
 * reports each pair to the sink, from the thread that resolves it, with the
 * timing lock held. Every other event (the schedule's, the writer's) is
 * created without timing, timing on or not: an event that keeps a timestamp
 * costs more to record and to wait for.
 *
 * Event times are relative; they reach the host's CLOCK_MONOTONIC through an
 * origin event recorded at creation on the idle device: the host reads its clock
 * before the record and after the event completes, and takes the midpoint as
 * the origin's host time (off by at most half that interval, a few
 * microseconds). start = origin + elapsed(origin, start event); end = start +
 * elapsed(start event, end event), so durations keep the events' resolution
 * (about half a microsecond). Limits: hipEventElapsedTime answers a float of
 * milliseconds, so a start's offset from the origin loses resolution as the run
 * goes on (about 1 us after 16 s, 60 us after 1000 s), and the GPU's and the
 * host's clocks may drift apart; durations are unaffected.
 *
 * Profiler ranges: built for NVIDIA, each launch and copy of a named task
 * (name_tasks) is an NVTX range in the domain "gflow", its message the task's
 * name registered once (nvtxDomainRegisterStringA) and its payload the step,
 * so Nsight Systems shows task names with no string work per operation;
 * NVTX3 is header-only and costs a few nanoseconds per range when no
 * profiler is attached. Built with hipcc where roctracer's roctx is there
 * (GFLOW_WITH_ROCTX, cmake/gpu.cmake), the same as roctx ranges for rocprof.
 *
 * Stream-ordered memory (alloc/free with a stream): GF_SPACE_POOL maps onto
 * hipMallocAsync/hipFreeAsync on that stream; the other spaces allocate as
 * usual and free after hipStreamSynchronize on the stream.
 */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GFLOW_WITH_GPU

gf_status gf_backend_gpu_create(const gf_backend_options *options, gf_backend **out, char *why,
                                size_t why_size) {
  (void)options;
  *out = NULL;
  snprintf(why, why_size,
           "gflow was built without GPU support (configure with -DGFLOW_GPU=CUDA or HIP)");
  return GF_INTERNAL;
}

#else

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "gf_hip.h"

#if defined(GFLOW_HIP_ON_CUDA)
#include <nvtx3/nvToolsExt.h>
#define GPU_RANGES_NVTX 1
#elif defined(GFLOW_WITH_ROCTX)
#include <roctracer/roctx.h>
#define GPU_RANGES_ROCTX 1
#endif

/* Timing pairs pending before the backend resolves the finished ones unasked. */
#define GPU_TIMING_RESOLVE_AT 1024

struct gf_stream {
  hipStream_t hip;
  void *
      scan_scratch; /* device memory: scan_finite's first refused index, kept at ~0 between scans */
};

/* kernels/check.hip: scans `count` values, on `stream`, and writes the result
 * into pinned `result`; `scratch` is left reset for the next scan. */
int gf_scan_finite_launch_gpu(const void *data, int64_t count, int is_f64, int finite,
                              double max_abs, void *scratch, void *result, void *stream);
_Static_assert(sizeof(gf_scan_result) == 16, "check.hip writes gf_scan_result as two 8-byte words");
/* kernels/copy.hip: `bytes` from one device allocation to another, on `stream`. */
int gf_copy_launch_gpu(void *dst, const void *src, size_t bytes, void *stream);

struct gf_event {
  hipEvent_t hip;
};

typedef struct gpu_timing_pair {
  hipEvent_t start, end;
  gf_tag tag;
  int kind;
  size_t bytes;
} gpu_timing_pair;

typedef struct gpu_backend {
  gf_backend base;
  int device;
  int timing_on;     /* options->timing: events may carry timestamps */
  hipEvent_t origin; /* timing_on: recorded at creation, the zero of event times */
  int64_t origin_ns; /* its time on the host's CLOCK_MONOTONIC */
  hipMemPool_t pool;
  char pool_error[256]; /* why the pool space is unavailable, "" when it is */

  pthread_mutex_t timing_lock; /* the executor may issue from several threads */
  gpu_timing_pair *pending;    /* recorded, not yet resolved */
  int pending_count, pending_cap;
  int resolve_at;    /* pending_count that triggers the next resolve */
  hipEvent_t *spare; /* finished timing events, reused */
  int spare_count, spare_cap;

  /* The device allocations (device and pool spaces), sorted by address: a
   * copy between two of them runs as a kernel (kernels/copy.hip). */
  pthread_mutex_t ranges_lock;
  struct gpu_range {
    uintptr_t lo, hi;
  } * ranges;
  int nranges, ranges_cap;

  /* profiler ranges (name_tasks): a registered name per task */
  int ntasks;
#ifdef GPU_RANGES_NVTX
  nvtxDomainHandle_t domain;
  nvtxStringHandle_t *task_names;
#elif defined(GPU_RANGES_ROCTX)
  char **task_names;
#endif
} gpu_backend;

static gpu_backend *gpu_of(gf_backend *b) {
  return (gpu_backend *)b;
}

/* Writes the failed call into b->error. Also clears the runtime's last error:
 * a launcher reports hipGetLastError(), which must not see an old failure. */
static gf_status gpu_fail(gf_backend *b, const char *api, hipError_t err) {
  snprintf(b->error, sizeof b->error, "%s: %s: %s", api, hipGetErrorName(err),
           hipGetErrorString(err));
  (void)hipGetLastError();
  return GF_INTERNAL;
}

/* The one check for every HIP call: GPU_CHECK(b, hipMalloc, (&ptr, bytes)). */
#define GPU_CHECK(b, api, args)                                       \
  do {                                                                \
    hipError_t gpu_err_ = api args;                                   \
    if (gpu_err_ != hipSuccess) return gpu_fail((b), #api, gpu_err_); \
  } while (0)

/* ---- timing ---------------------------------------------------------- */

static gf_status timing_event_get(gpu_backend *g, hipEvent_t *out) {
  if (g->spare_count > 0) {
    *out = g->spare[--g->spare_count];
    return GF_OK;
  }
  GPU_CHECK(&g->base, hipEventCreateWithFlags, (out, hipEventDefault));
  return GF_OK;
}

/* Keeps `e` for reuse; out of memory, destroys it instead. */
static void timing_event_put(gpu_backend *g, hipEvent_t e) {
  if (GF_GROW(g->spare, g->spare_cap, g->spare_count + 1) != GF_OK) {
    (void)hipEventDestroy(e);
    return;
  }
  g->spare[g->spare_count++] = e;
}

static int64_t host_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Reports the finished pairs to the sink; with `wait`, waits for all.
 * Caller holds timing_lock. */
static gf_status timing_resolve_locked(gpu_backend *g, int wait) {
  int kept = 0;
  gf_status status = GF_OK;
  for (int i = 0; i < g->pending_count; i++) {
    gpu_timing_pair p = g->pending[i];
    hipError_t err = wait ? hipEventSynchronize(p.end) : hipEventQuery(p.end);
    if (err == hipErrorNotReady) {
      g->pending[kept++] = p;
      continue;
    }
    float since_origin_ms = 0.0f, ms = 0.0f;
    if (err == hipSuccess) err = hipEventElapsedTime(&since_origin_ms, g->origin, p.start);
    if (err == hipSuccess) err = hipEventElapsedTime(&ms, p.start, p.end);
    if (err != hipSuccess && status == GF_OK)
      status = gpu_fail(&g->base, "hipEventElapsedTime", err);
    gf_op_sink sink = g->base.sink;
    if (err == hipSuccess && sink.report) {
      gf_op_timing t = {.tag = p.tag, .kind = p.kind, .bytes = p.bytes};
      t.start_ns = g->origin_ns + (int64_t)((double)since_origin_ms * 1e6);
      t.end_ns = t.start_ns + (int64_t)((double)ms * 1e6);
      sink.report(sink.user, &t);
    }
    timing_event_put(g, p.start);
    timing_event_put(g, p.end);
  }
  g->pending_count = kept;
  g->resolve_at = kept + GPU_TIMING_RESOLVE_AT;
  return status;
}

static gf_status timing_resolve(gpu_backend *g, int wait) {
  if (!g->timing_on) return GF_OK;
  pthread_mutex_lock(&g->timing_lock);
  gf_status status = timing_resolve_locked(g, wait);
  pthread_mutex_unlock(&g->timing_lock);
  return status;
}

static int timing_wanted(gpu_backend *g, gf_tag tag) {
  return g->timing_on && gf_sink_times(&g->base.sink, tag);
}

/* Records the start event of a timed operation. */
static gf_status timing_begin(gpu_backend *g, gf_stream *s, hipEvent_t *start) {
  pthread_mutex_lock(&g->timing_lock);
  gf_status status = timing_event_get(g, start);
  pthread_mutex_unlock(&g->timing_lock);
  if (status != GF_OK) return status;
  hipError_t err = hipEventRecord(*start, s->hip);
  if (err == hipSuccess) return GF_OK;
  pthread_mutex_lock(&g->timing_lock);
  timing_event_put(g, *start);
  pthread_mutex_unlock(&g->timing_lock);
  return gpu_fail(&g->base, "hipEventRecord", err);
}

/* Records the end event and queues the pair for resolve. */
static gf_status timing_end(gpu_backend *g, gf_stream *s, hipEvent_t start, gf_tag tag, int kind,
                            size_t bytes) {
  pthread_mutex_lock(&g->timing_lock);
  hipEvent_t end;
  gf_status status = timing_event_get(g, &end);
  if (status == GF_OK) {
    hipError_t err = hipEventRecord(end, s->hip);
    if (err != hipSuccess) {
      timing_event_put(g, end);
      status = gpu_fail(&g->base, "hipEventRecord", err);
    }
  }
  if (status != GF_OK) {
    timing_event_put(g, start);
    pthread_mutex_unlock(&g->timing_lock);
    return status;
  }
  if (GF_GROW(g->pending, g->pending_cap, g->pending_count + 1) != GF_OK) {
    timing_event_put(g, start);
    timing_event_put(g, end);
    pthread_mutex_unlock(&g->timing_lock);
    snprintf(g->base.error, sizeof g->base.error, "out of memory: recording a timing");
    return GF_INTERNAL;
  }
  g->pending[g->pending_count++] = (gpu_timing_pair){start, end, tag, kind, bytes};
  if (g->pending_count >= g->resolve_at) status = timing_resolve_locked(g, 0);
  pthread_mutex_unlock(&g->timing_lock);
  return status;
}

/* ---- profiler ranges --------------------------------------------------- */

static void free_task_names(gpu_backend *g) {
#ifdef GPU_RANGES_ROCTX
  for (int t = 0; t < g->ntasks; t++) free(g->task_names[t]);
#endif
#if defined(GPU_RANGES_NVTX) || defined(GPU_RANGES_ROCTX)
  free(g->task_names);
  g->task_names = NULL;
#endif
  g->ntasks = 0;
}

static void gpu_name_tasks(gf_backend *b, const char *const *names, int count) {
  gpu_backend *g = gpu_of(b);
  free_task_names(g);
#if defined(GPU_RANGES_NVTX) || defined(GPU_RANGES_ROCTX)
  g->task_names = gf_calloc((size_t)count + 1, sizeof *g->task_names);
  if (!g->task_names) return; /* no ranges: nothing else depends on them */
  for (int t = 0; t < count; t++) {
#ifdef GPU_RANGES_NVTX
    g->task_names[t] = nvtxDomainRegisterStringA(g->domain, names[t]);
#else
    g->task_names[t] = gf_strdup(names[t]);
#endif
  }
  g->ntasks = count;
#else
  (void)names;
  (void)count;
#endif
}

/* A range around one launch or copy of a named task; 1 when one was opened. */
static int range_push(gpu_backend *g, gf_tag tag, int kind) {
  if (tag.task < 0 || tag.task >= g->ntasks) return 0;
#ifdef GPU_RANGES_NVTX
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = (uint32_t)kind + 1;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = kind == GF_TIMED_LAUNCH ? 0xffd94a38u : 0xff3b7dd8u;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = tag.step;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = g->task_names[tag.task];
  nvtxDomainRangePushEx(g->domain, &a);
  return 1;
#elif defined(GPU_RANGES_ROCTX)
  (void)kind;
  if (!g->task_names[tag.task]) return 0;
  roctxRangePushA(g->task_names[tag.task]);
  return 1;
#else
  (void)kind;
  return 0;
#endif
}

static void range_pop(gpu_backend *g, int opened) {
  (void)g;
  if (!opened) return;
#ifdef GPU_RANGES_NVTX
  nvtxDomainRangePop(g->domain);
#elif defined(GPU_RANGES_ROCTX)
  roctxRangePop();
#endif
}

/* ---- streams and events ---------------------------------------------- */

static gf_status gpu_stream_create(gf_backend *b, gf_stream_priority priority, gf_stream **out) {
  *out = NULL;
  /* Lower numbers are higher priorities: `greatest` is the highest. */
  int least = 0, greatest = 0;
  GPU_CHECK(b, hipDeviceGetStreamPriorityRange, (&least, &greatest));
  gf_stream *s = gf_calloc(1, sizeof *s);
  if (!s) {
    snprintf(b->error, sizeof b->error, "out of memory: creating a stream");
    return GF_INTERNAL;
  }
  hipError_t err = hipStreamCreateWithPriority(&s->hip, hipStreamNonBlocking,
                                               priority == GF_STREAM_URGENT ? greatest : least);
  if (err != hipSuccess) {
    free(s);
    return gpu_fail(b, "hipStreamCreateWithPriority", err);
  }
  if ((err = hipMalloc(&s->scan_scratch, sizeof(gf_scan_result))) != hipSuccess ||
      (err = hipMemsetAsync(s->scan_scratch, 0xff, sizeof(gf_scan_result), s->hip)) != hipSuccess) {
    (void)hipFree(s->scan_scratch);
    (void)hipStreamDestroy(s->hip);
    free(s);
    return gpu_fail(b, "hipMalloc", err);
  }
  *out = s;
  return GF_OK;
}

static void gpu_stream_destroy(gf_backend *b, gf_stream *s) {
  (void)b;
  if (!s) return;
  (void)hipStreamDestroy(s->hip);
  (void)hipFree(s->scan_scratch);
  free(s);
}

static gf_status gpu_stream_synchronize(gf_backend *b, gf_stream *s) {
  GPU_CHECK(b, hipStreamSynchronize, (s->hip));
  return GF_OK;
}

static gf_status gpu_event_create(gf_backend *b, gf_event **out) {
  *out = NULL;
  gf_event *e = gf_calloc(1, sizeof *e);
  if (!e) {
    snprintf(b->error, sizeof b->error, "out of memory: creating an event");
    return GF_INTERNAL;
  }
  hipError_t err = hipEventCreateWithFlags(&e->hip, hipEventDisableTiming);
  if (err != hipSuccess) {
    free(e);
    *out = NULL;
    return gpu_fail(b, "hipEventCreateWithFlags", err);
  }
  *out = e;
  return GF_OK;
}

static void gpu_event_destroy(gf_backend *b, gf_event *e) {
  (void)b;
  if (!e) return;
  (void)hipEventDestroy(e->hip);
  free(e);
}

static gf_status gpu_event_record(gf_backend *b, gf_event *e, gf_stream *s) {
  GPU_CHECK(b, hipEventRecord, (e->hip, s->hip));
  return GF_OK;
}

static gf_status gpu_stream_wait_event(gf_backend *b, gf_stream *s, gf_event *e) {
  GPU_CHECK(b, hipStreamWaitEvent, (s->hip, e->hip, 0));
  return GF_OK;
}

static gf_status gpu_event_synchronize(gf_backend *b, gf_event *e) {
  GPU_CHECK(b, hipEventSynchronize, (e->hip));
  return GF_OK;
}

static gf_status gpu_event_query(gf_backend *b, gf_event *e, int *done) {
  hipError_t err = hipEventQuery(e->hip);
  *done = err == hipSuccess;
  if (err == hipSuccess || err == hipErrorNotReady) return GF_OK;
  return gpu_fail(b, "hipEventQuery", err);
}

/* ---- memory ----------------------------------------------------------- */

/* The allocations' registry; a failure to record one only means its copies
 * go through the copy engines. */
static void ranges_add(gpu_backend *g, void *ptr, size_t bytes) {
  pthread_mutex_lock(&g->ranges_lock);
  if (g->nranges == g->ranges_cap) {
    int cap = g->ranges_cap ? 2 * g->ranges_cap : 32;
    struct gpu_range *r = realloc(g->ranges, (size_t)cap * sizeof *r);
    if (!r) {
      pthread_mutex_unlock(&g->ranges_lock);
      return;
    }
    g->ranges = r, g->ranges_cap = cap;
  }
  int i = g->nranges++;
  while (i > 0 && g->ranges[i - 1].lo > (uintptr_t)ptr) g->ranges[i] = g->ranges[i - 1], i--;
  g->ranges[i] = (struct gpu_range){(uintptr_t)ptr, (uintptr_t)ptr + bytes};
  pthread_mutex_unlock(&g->ranges_lock);
}

static void ranges_remove(gpu_backend *g, void *ptr) {
  pthread_mutex_lock(&g->ranges_lock);
  for (int i = 0; i < g->nranges; i++)
    if (g->ranges[i].lo == (uintptr_t)ptr) {
      memmove(&g->ranges[i], &g->ranges[i + 1], (size_t)(g->nranges - i - 1) * sizeof *g->ranges);
      g->nranges--;
      break;
    }
  pthread_mutex_unlock(&g->ranges_lock);
}

/* Whether [ptr, ptr + bytes) lies in one device allocation. */
static int in_device_memory(gpu_backend *g, const void *ptr, size_t bytes) {
  uintptr_t p = (uintptr_t)ptr;
  int found = 0;
  pthread_mutex_lock(&g->ranges_lock);
  int lo = 0, hi = g->nranges - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (g->ranges[mid].lo > p) {
      hi = mid - 1;
    } else if (g->ranges[mid].hi <= p) {
      lo = mid + 1;
    } else {
      found = p + bytes <= g->ranges[mid].hi;
      break;
    }
  }
  pthread_mutex_unlock(&g->ranges_lock);
  return found;
}

static gf_status gpu_alloc(gf_backend *b, gf_space space, size_t bytes, gf_stream *stream,
                           void **out) {
  gpu_backend *g = gpu_of(b);
  *out = NULL;
  switch (space) {
    case GF_SPACE_DEVICE:
      GPU_CHECK(b, hipMalloc, (out, bytes));
      ranges_add(g, *out, bytes);
      return GF_OK;
    case GF_SPACE_MANAGED:
      GPU_CHECK(b, hipMallocManaged, (out, bytes, hipMemAttachGlobal));
      return GF_OK;
    case GF_SPACE_PINNED:
      GPU_CHECK(b, hipHostMalloc, (out, bytes, hipHostMallocDefault));
      return GF_OK;
    case GF_SPACE_HOST:
      *out = malloc(bytes ? bytes : 1);
      if (!*out) {
        snprintf(b->error, sizeof b->error, "malloc: %zu bytes of host memory: %s", bytes,
                 strerror(errno));
        return GF_INTERNAL;
      }
      return GF_OK;
    case GF_SPACE_POOL:
      if (g->pool_error[0]) {
        snprintf(b->error, sizeof b->error, "%s", g->pool_error);
        return GF_INTERNAL;
      }
      if (stream) {
        GPU_CHECK(b, hipMallocAsync, (out, bytes, stream->hip));
        ranges_add(g, *out, bytes);
        return GF_OK;
      }
      /* Outside any stream: allocate in null-stream order and wait, so the
       * block is usable from every (non-blocking) stream at once. */
      GPU_CHECK(b, hipMallocAsync, (out, bytes, (hipStream_t)0));
      GPU_CHECK(b, hipStreamSynchronize, ((hipStream_t)0));
      ranges_add(g, *out, bytes);
      return GF_OK;
    case GF_SPACE_COUNT:
      break;
  }
  snprintf(b->error, sizeof b->error, "no memory space %d", (int)space);
  return GF_INTERNAL;
}

static void gpu_free(gf_backend *b, gf_space space, void *ptr, gf_stream *stream) {
  if (!ptr) return;
  if (space == GF_SPACE_DEVICE || space == GF_SPACE_POOL) ranges_remove(gpu_of(b), ptr);
  hipError_t err = hipSuccess;
  const char *api = "";
  if (stream && space == GF_SPACE_POOL) {
    err = hipFreeAsync(ptr, stream->hip);
    if (err != hipSuccess) gpu_fail(b, "hipFreeAsync", err);
    return;
  }
  /* Freed on a stream outside the pool: once the work queued on it is done
   * (hipFree may not wait for it, free() and hipHostFree of memory a queued
   * copy reads certainly do not). */
  if (stream && (err = hipStreamSynchronize(stream->hip)) != hipSuccess) {
    gpu_fail(b, "hipStreamSynchronize", err);
    return;
  }
  switch (space) {
    case GF_SPACE_DEVICE:
    case GF_SPACE_MANAGED:
      api = "hipFree", err = hipFree(ptr);
      break;
    case GF_SPACE_PINNED:
      api = "hipHostFree", err = hipHostFree(ptr);
      break;
    case GF_SPACE_HOST:
      free(ptr);
      break;
    case GF_SPACE_POOL:
      /* hipFree waits for the device; do the same so no stream still uses
       * the block, then return it to the pool (kept there, see create). */
      api = "hipDeviceSynchronize", err = hipDeviceSynchronize();
      if (err == hipSuccess) api = "hipFreeAsync", err = hipFreeAsync(ptr, (hipStream_t)0);
      if (err == hipSuccess)
        api = "hipStreamSynchronize", err = hipStreamSynchronize((hipStream_t)0);
      break;
    case GF_SPACE_COUNT:
      break;
  }
  if (err != hipSuccess) gpu_fail(b, api, err);
}

static size_t gpu_bytes_free(gf_backend *b, gf_space space) {
  gpu_backend *g = gpu_of(b);
  size_t free_bytes = 0, total = 0;
  switch (space) {
    case GF_SPACE_DEVICE:
    case GF_SPACE_MANAGED:
      return hipMemGetInfo(&free_bytes, &total) == hipSuccess ? free_bytes : 0;
    case GF_SPACE_POOL: {
      if (g->pool_error[0] || hipMemGetInfo(&free_bytes, &total) != hipSuccess) return 0;
      /* Memory the pool holds but no allocation uses is free for the pool too. */
      uint64_t reserved = 0, used = 0;
      if (hipMemPoolGetAttribute(g->pool, hipMemPoolAttrReservedMemCurrent, &reserved) ==
              hipSuccess &&
          hipMemPoolGetAttribute(g->pool, hipMemPoolAttrUsedMemCurrent, &used) == hipSuccess &&
          reserved > used)
        free_bytes += (size_t)(reserved - used);
      return free_bytes;
    }
    case GF_SPACE_PINNED:
    case GF_SPACE_HOST:
      return gf_host_bytes_available();
    case GF_SPACE_COUNT:
      break;
  }
  return 0;
}

/* ---- work ------------------------------------------------------------- */

static gf_status gpu_copy_timed(gf_backend *b, gf_stream *s, void *dst, const void *src,
                                size_t bytes, gf_tag tag) {
  gpu_backend *g = gpu_of(b);
  int timed = timing_wanted(g, tag);
  hipEvent_t start = NULL;
  if (timed) {
    gf_status status = timing_begin(g, s, &start);
    if (status != GF_OK) return status;
  }
  int on_device = in_device_memory(g, dst, bytes) && in_device_memory(g, src, bytes);
  hipError_t err = on_device ? (hipError_t)gf_copy_launch_gpu(dst, src, bytes, (void *)s->hip)
                             : hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, s->hip);
  if (err != hipSuccess) {
    if (timed) {
      pthread_mutex_lock(&g->timing_lock);
      timing_event_put(g, start);
      pthread_mutex_unlock(&g->timing_lock);
    }
    return gpu_fail(b, on_device ? "hipLaunchKernelGGL(copy)" : "hipMemcpyAsync", err);
  }
  return timed ? timing_end(g, s, start, tag, GF_TIMED_COPY, bytes) : GF_OK;
}

static gf_status gpu_launch_timed(gf_backend *b, gf_stream *s, const gf_kernel *kernel,
                                  const void *args, gf_tag tag) {
  gpu_backend *g = gpu_of(b);
  if (!kernel->launch_gpu) {
    snprintf(b->error, sizeof b->error, "kernel %s has no GPU implementation", kernel->name);
    return GF_INTERNAL;
  }
  int timed = timing_wanted(g, tag);
  hipEvent_t start = NULL;
  if (timed) {
    gf_status status = timing_begin(g, s, &start);
    if (status != GF_OK) return status;
  }
  /* The launcher passes `args` by value into the launch, so they are copied
   * before it returns. */
  hipError_t err = (hipError_t)kernel->launch_gpu(args, (void *)s->hip);
  if (err != hipSuccess) {
    char api[128];
    snprintf(api, sizeof api, "hipLaunchKernelGGL(%s)", kernel->name);
    if (timed) {
      pthread_mutex_lock(&g->timing_lock);
      timing_event_put(g, start);
      pthread_mutex_unlock(&g->timing_lock);
    }
    return gpu_fail(b, api, err);
  }
  return timed ? timing_end(g, s, start, tag, GF_TIMED_LAUNCH, 0) : GF_OK;
}

/* Launches and copies, each in a profiler range of its task. */
static gf_status gpu_copy_async(gf_backend *b, gf_stream *s, void *dst, const void *src,
                                size_t bytes, gf_tag tag) {
  int range = range_push(gpu_of(b), tag, GF_TIMED_COPY);
  gf_status status = gpu_copy_timed(b, s, dst, src, bytes, tag);
  range_pop(gpu_of(b), range);
  return status;
}

static gf_status gpu_launch(gf_backend *b, gf_stream *s, const gf_kernel *kernel, const void *args,
                            gf_tag tag) {
  int range = range_push(gpu_of(b), tag, GF_TIMED_LAUNCH);
  gf_status status = gpu_launch_timed(b, s, kernel, args, tag);
  range_pop(gpu_of(b), range);
  return status;
}

/* A reduction kernel into the stream's device scratch, then 16 bytes to the
 * caller's pinned result, all on the stream: nothing waits on the host. */
static gf_status gpu_scan_finite(gf_backend *b, gf_stream *s, const void *data, int64_t count,
                                 gf_dtype dtype, int finite, double max_abs,
                                 gf_scan_result *result) {
  /* Two launches and no copy: the last kernel writes `result` (pinned, so
   * mapped into the device's address space) itself. */
  hipError_t err = (hipError_t)gf_scan_finite_launch_gpu(
      data, count, dtype == GF_F64, finite, max_abs, s->scan_scratch, result, (void *)s->hip);
  if (err != hipSuccess) return gpu_fail(b, "hipLaunchKernelGGL(scan_finite)", err);
  return GF_OK;
}

static gf_status gpu_synchronize(gf_backend *b) {
  GPU_CHECK(b, hipDeviceSynchronize, ());
  return timing_resolve(gpu_of(b), 0);
}

static void gpu_destroy(gf_backend *b) {
  if (!b) return;
  gpu_backend *g = gpu_of(b);
  (void)hipDeviceSynchronize();
  if (g->timing_on) {
    pthread_mutex_lock(&g->timing_lock);
    (void)timing_resolve_locked(g, 1);
    pthread_mutex_unlock(&g->timing_lock);
  }
  for (int i = 0; i < g->spare_count; i++) (void)hipEventDestroy(g->spare[i]);
  if (g->timing_on) (void)hipEventDestroy(g->origin);
  /* Give the pool's cached memory back (its release threshold keeps it). */
  if (!g->pool_error[0]) (void)hipMemPoolTrimTo(g->pool, 0);
  pthread_mutex_destroy(&g->timing_lock);
  pthread_mutex_destroy(&g->ranges_lock);
  free(g->ranges);
  free_task_names(g);
#ifdef GPU_RANGES_NVTX
  nvtxDomainDestroy(g->domain);
#endif
  free(g->spare);
  free(g->pending);
  free(g);
}

static gf_status gpu_managed_prepare(gf_backend *b, void *ptr, size_t bytes, int prefetch,
                                     int read_mostly) {
  gpu_backend *g = (gpu_backend *)b;
  hipError_t err = hipMemAdvise(ptr, bytes, hipMemAdviseSetPreferredLocation, g->device);
  if (err != hipSuccess) return gpu_fail(b, "hipMemAdvise(SetPreferredLocation)", err);
  if (read_mostly &&
      (err = hipMemAdvise(ptr, bytes, hipMemAdviseSetReadMostly, g->device)) != hipSuccess)
    return gpu_fail(b, "hipMemAdvise(SetReadMostly)", err);
  if (prefetch) {
    if ((err = hipMemPrefetchAsync(ptr, bytes, g->device, 0)) != hipSuccess)
      return gpu_fail(b, "hipMemPrefetchAsync", err);
    if ((err = hipDeviceSynchronize()) != hipSuccess)
      return gpu_fail(b, "hipDeviceSynchronize", err);
  }
  return GF_OK;
}

/* ---- registered memory (channels) -------------------------------------- */

/* Device memory from hipMalloc, zeroed, exported with hipIpcGetMemHandle.
 * Opened by another process: hipIpcOpenMemHandle (peer access enabled
 * lazily when the GPUs differ); by this process: the pointer itself, after
 * enabling peer access to the other GPU if it is another one. */
typedef struct gpu_channel_handle {
  uint64_t magic;
  uint64_t bytes;
  int64_t pid;
  int32_t device;
  int32_t pad;
  uint64_t ptr; /* the address in the registering process */
  hipIpcMemHandle_t ipc;
} gpu_channel_handle;
_Static_assert(sizeof(gpu_channel_handle) <= GF_CHANNEL_BACKEND_HANDLE_BYTES, "fits a handle");
#define GPU_CHANNEL_MAGIC 0x676663686e6c4731ull /* "gfchnlG1" */

static gf_status gpu_channel_register(gf_backend *b, size_t bytes, void **local,
                                      gf_channel_handle *handle) {
  gpu_backend *g = gpu_of(b);
  *local = NULL;
  gpu_channel_handle h = {
      .magic = GPU_CHANNEL_MAGIC, .bytes = bytes, .pid = (int64_t)getpid(), .device = g->device};
  void *p = NULL;
  GPU_CHECK(b, hipMalloc, (&p, bytes));
  /* Zero before the handle leaves: the memset is on the null stream, which
   * gflow's non-blocking streams do not wait for. */
  hipError_t err = hipMemset(p, 0, bytes);
  const char *api = "hipMemset";
  if (err == hipSuccess) api = "hipDeviceSynchronize", err = hipDeviceSynchronize();
  if (err == hipSuccess) api = "hipIpcGetMemHandle", err = hipIpcGetMemHandle(&h.ipc, p);
  if (err != hipSuccess) {
    gpu_fail(b, api, err);
    (void)hipFree(p);
    return GF_INTERNAL;
  }
  h.ptr = (uint64_t)(uintptr_t)p;
  memset(handle, 0, sizeof *handle);
  memcpy(handle->bytes, &h, sizeof h);
  *local = p;
  return GF_OK;
}

static gf_status gpu_channel_handle_read(gf_backend *b, const gf_channel_handle *handle,
                                         gpu_channel_handle *h) {
  memcpy(h, handle->bytes, sizeof *h);
  if (h->magic != GPU_CHANNEL_MAGIC) {
    snprintf(b->error, sizeof b->error,
             "a channel handle that the GPU backend did not make (another backend's?)");
    return GF_INTERNAL;
  }
  return GF_OK;
}

static gf_status gpu_channel_open(gf_backend *b, const gf_channel_handle *handle, void **remote) {
  gpu_backend *g = gpu_of(b);
  gpu_channel_handle h;
  *remote = NULL;
  if (gpu_channel_handle_read(b, handle, &h) != GF_OK) return GF_INTERNAL;
  if (h.pid == (int64_t)getpid()) { /* this process: peer access, no IPC */
    if (h.device != g->device) {
      int can = 0;
      GPU_CHECK(b, hipDeviceCanAccessPeer, (&can, g->device, h.device));
      if (!can) {
        snprintf(b->error, sizeof b->error,
                 "GPU %d cannot reach GPU %d's memory (hipDeviceCanAccessPeer says no)", g->device,
                 (int)h.device);
        return GF_INTERNAL;
      }
      hipError_t err = hipDeviceEnablePeerAccess(h.device, 0);
      if (err != hipSuccess && err != hipErrorPeerAccessAlreadyEnabled)
        return gpu_fail(b, "hipDeviceEnablePeerAccess", err);
      (void)hipGetLastError(); /* already enabled is no failure */
    }
    *remote = (void *)(uintptr_t)h.ptr;
    return GF_OK;
  }
  void *p = NULL;
  hipError_t err = hipIpcOpenMemHandle(&p, h.ipc, hipIpcMemLazyEnablePeerAccess);
  if (err != hipSuccess) {
    snprintf(b->error, sizeof b->error,
             "opening process %ld's GPU %d memory: hipIpcOpenMemHandle: %s: %s", (long)h.pid,
             (int)h.device, hipGetErrorName(err), hipGetErrorString(err));
    (void)hipGetLastError();
    return GF_INTERNAL;
  }
  *remote = p;
  return GF_OK;
}

static void gpu_channel_close(gf_backend *b, const gf_channel_handle *handle, void *remote) {
  gpu_channel_handle h;
  if (!remote || gpu_channel_handle_read(b, handle, &h) != GF_OK) return;
  if (h.pid != (int64_t)getpid() && hipIpcCloseMemHandle(remote) != hipSuccess)
    (void)hipGetLastError();
}

static void gpu_channel_unregister(gf_backend *b, const gf_channel_handle *handle, void *local) {
  (void)handle;
  if (local && hipFree(local) != hipSuccess) (void)hipGetLastError();
  (void)b;
}

/* ---- graphs ------------------------------------------------------------ */

/* Graphs need external event waits in captures (HIP 5.3 on, CUDA 11.3 on):
 * without them (Debian's HIP 5.2) the backend has no graphs. */
#if defined(GFLOW_HIP_ON_CUDA) || defined(hipEventWaitExternal)
#define GPU_GRAPHS 1
#endif
#ifdef GPU_GRAPHS

/* Thread-local capture: the writer thread's calls (event waits, copies of
 * its own) go on while the executor captures. */
struct gf_graph {
  hipGraphExec_t exec;
};

static gf_status gpu_graph_capture_begin(gf_backend *b, gf_stream *origin) {
  GPU_CHECK(b, hipStreamBeginCapture, (origin->hip, hipStreamCaptureModeThreadLocal));
  return GF_OK;
}

static void gpu_graph_destroy(gf_backend *b, gf_graph *g) {
  (void)b;
  if (!g) return;
  (void)hipGraphExecDestroy(g->exec);
  free(g);
}

static gf_status gpu_graph_capture_end(gf_backend *b, gf_stream *origin, gf_graph *reuse,
                                       gf_graph **out) {
  *out = NULL;
  hipGraph_t graph = NULL;
  GPU_CHECK(b, hipStreamEndCapture, (origin->hip, &graph));
  if (reuse) {
    hipGraphNode_t failed_node = NULL;
    hipGraphExecUpdateResult result;
    if (hipGraphExecUpdate(reuse->exec, graph, &failed_node, &result) == hipSuccess) {
      (void)hipGraphDestroy(graph);
      *out = reuse;
      return GF_OK;
    }
    (void)hipGetLastError(); /* another shape: instantiate it */
  }
  gf_graph *g = gf_calloc(1, sizeof *g);
  const char *api = "hipGraphInstantiateWithFlags";
  hipError_t err = g ? hipGraphInstantiateWithFlags(&g->exec, graph, 0) : hipErrorOutOfMemory;
  if (err == hipSuccess) api = "hipGraphUpload", err = hipGraphUpload(g->exec, origin->hip);
  (void)hipGraphDestroy(graph);
  if (err != hipSuccess) {
    if (g && g->exec) (void)hipGraphExecDestroy(g->exec);
    free(g);
    return gpu_fail(b, api, err);
  }
  *out = g;
  return GF_OK;
}

static gf_status gpu_graph_wait_external(gf_backend *b, gf_stream *s, gf_event *e) {
  GPU_CHECK(b, hipStreamWaitEvent, (s->hip, e->hip, hipEventWaitExternal));
  return GF_OK;
}

static gf_status gpu_graph_launch(gf_backend *b, gf_graph *g, gf_stream *s) {
  GPU_CHECK(b, hipGraphLaunch, (g->exec, s->hip));
  return GF_OK;
}

/* backend.h's load_kernel: a launch captured on a stream of its own and
 * instantiated, which loads its module; nothing runs. Its failures are not
 * the run's (the loop's own launch reports them), so they are cleared. */
static void gpu_load_kernel(gf_backend *b, const gf_kernel *kernel, const void *args) {
  (void)b;
  hipStream_t stream = NULL;
  hipGraph_t graph = NULL;
  hipGraphExec_t exec = NULL;
  if (!kernel->launch_gpu ||
      hipStreamCreateWithFlags(&stream, hipStreamNonBlocking) != hipSuccess) {
    (void)hipGetLastError();
    return;
  }
  if (hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal) == hipSuccess) {
    (void)kernel->launch_gpu(args, (void *)stream);
    if (hipStreamEndCapture(stream, &graph) == hipSuccess && graph)
      (void)hipGraphInstantiateWithFlags(&exec, graph, 0);
  }
  if (exec) (void)hipGraphExecDestroy(exec);
  if (graph) (void)hipGraphDestroy(graph);
  (void)hipStreamDestroy(stream);
  (void)hipGetLastError();
}

#endif /* GPU_GRAPHS */

static const gf_backend_ops gpu_ops = {
    .stream_create = gpu_stream_create,
    .stream_destroy = gpu_stream_destroy,
    .stream_synchronize = gpu_stream_synchronize,
    .event_create = gpu_event_create,
    .event_destroy = gpu_event_destroy,
    .event_record = gpu_event_record,
    .stream_wait_event = gpu_stream_wait_event,
    .event_synchronize = gpu_event_synchronize,
    .event_query = gpu_event_query,
    .alloc = gpu_alloc,
    .free = gpu_free,
    .bytes_free = gpu_bytes_free,
    .managed_prepare = gpu_managed_prepare,
    .copy_async = gpu_copy_async,
    .launch = gpu_launch,
    .scan_finite = gpu_scan_finite,
    .synchronize = gpu_synchronize,
    .destroy = gpu_destroy,
    .name_tasks = gpu_name_tasks,
    .channel_register = gpu_channel_register,
    .channel_open = gpu_channel_open,
    .channel_close = gpu_channel_close,
    .channel_unregister = gpu_channel_unregister,
#ifdef GPU_GRAPHS
    .graph_capture_begin = gpu_graph_capture_begin,
    .graph_capture_end = gpu_graph_capture_end,
    .graph_launch = gpu_graph_launch,
    .graph_destroy = gpu_graph_destroy,
    .graph_wait_external = gpu_graph_wait_external,
    .load_kernel = gpu_load_kernel,
#endif
};

/* ---- creation --------------------------------------------------------- */

/* The GPU index: options, else the node-local rank of a Slurm launch, else
 * the rank among this node's MPI processes (MPI_COMM_TYPE_SHARED, which
 * follows world rank order), else 0. A node-local rank picks GPU
 * rank % count, so ranks share the GPUs there are (4 ranks on one GPU, or
 * Slurm's one visible GPU per task). Returns 0, or 1 with `why` written. */
static int choose_device(const gf_backend_options *options, int count, int *device, char *source,
                         size_t source_size, char *why, size_t why_size) {
  if (options && options->device >= 0) {
    *device = options->device;
    snprintf(source, source_size, "options");
    return 0;
  }
  const char *text = getenv("SLURM_LOCALID");
  if (text && *text) {
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || *end || value < 0 || value > INT32_MAX) {
      snprintf(why, why_size, "SLURM_LOCALID=%s is not a GPU index", text);
      return 1;
    }
    *device = (int)(value % count);
    snprintf(source, source_size, "SLURM_LOCALID=%s", text);
    return 0;
  }
  if (options && options->local_rank > 0) {
    *device = options->local_rank % count;
    snprintf(source, source_size, "node-local MPI rank %d", options->local_rank);
    return 0;
  }
  *device = 0;
  snprintf(source, source_size, "default");
  return 0;
}

/* Keeps freed pool memory cached: with the default release threshold (0) the
 * pool hands unused memory back to the driver at every synchronisation, and
 * the next hipMallocAsync in the time loop pays a full hipMalloc again, which
 * is what a pool is meant to avoid. Failure only disables the pool space. */
static void pool_setup(gpu_backend *g) {
  hipError_t err = hipDeviceGetDefaultMemPool(&g->pool, g->device);
  const char *api = "hipDeviceGetDefaultMemPool";
  if (err == hipSuccess) {
    uint64_t threshold = UINT64_MAX;
    api = "hipMemPoolSetAttribute";
    err = hipMemPoolSetAttribute(g->pool, hipMemPoolAttrReleaseThreshold, &threshold);
  }
  if (err != hipSuccess) {
    snprintf(g->pool_error, sizeof g->pool_error, "%s: %s: %s", api, hipGetErrorName(err),
             hipGetErrorString(err));
    (void)hipGetLastError();
  }
}

gf_status gf_backend_gpu_create(const gf_backend_options *options, gf_backend **out, char *why,
                                size_t why_size) {
  *out = NULL;
  int count = 0;
  hipError_t err = hipGetDeviceCount(&count);
  if (err != hipSuccess) {
    snprintf(why, why_size, "no GPU found: hipGetDeviceCount: %s: %s", hipGetErrorName(err),
             hipGetErrorString(err));
    (void)hipGetLastError();
    return GF_INTERNAL;
  }
  if (count <= 0) {
    snprintf(why, why_size, "no GPU found: hipGetDeviceCount reports 0 devices");
    return GF_INTERNAL;
  }
  int device = 0;
  char source[96];
  if (choose_device(options, count, &device, source, sizeof source, why, why_size))
    return GF_INTERNAL;
  if (device >= count) {
    snprintf(why, why_size, "no GPU %d (%s): hipGetDeviceCount reports %d", device, source, count);
    return GF_INTERNAL;
  }

  gpu_backend *g = gf_calloc(1, sizeof *g);
  if (!g) {
    snprintf(why, why_size, "out of memory: creating the GPU backend");
    return GF_INTERNAL;
  }
  g->device = device;
  g->timing_on = options && options->timing;
  g->resolve_at = GPU_TIMING_RESOLVE_AT;
  hipDeviceProp_t props;
  const char *api = "hipSetDevice";
  err = hipSetDevice(device);
  if (err == hipSuccess)
    api = "hipGetDeviceProperties", err = hipGetDeviceProperties(&props, device);
  if (err != hipSuccess) {
    snprintf(why, why_size, "GPU %d: %s: %s: %s", device, api, hipGetErrorName(err),
             hipGetErrorString(err));
    (void)hipGetLastError();
    free(g);
    return GF_INTERNAL;
  }
  pool_setup(g);
  if (g->timing_on) {
    /* The origin of event times (see the top of this file). */
    int64_t before = 0;
    api = "hipEventCreateWithFlags", err = hipEventCreateWithFlags(&g->origin, hipEventDefault);
    if (err == hipSuccess)
      before = host_now_ns(), api = "hipEventRecord",
      err = hipEventRecord(g->origin, (hipStream_t)0);
    if (err == hipSuccess) api = "hipEventSynchronize", err = hipEventSynchronize(g->origin);
    if (err != hipSuccess) {
      snprintf(why, why_size, "GPU %d: %s: %s: %s", device, api, hipGetErrorName(err),
               hipGetErrorString(err));
      (void)hipGetLastError();
      if (g->origin) (void)hipEventDestroy(g->origin);
      free(g);
      return GF_INTERNAL;
    }
    g->origin_ns = before + (host_now_ns() - before) / 2;
  }
  pthread_mutex_init(&g->timing_lock, NULL);
  pthread_mutex_init(&g->ranges_lock, NULL);
#ifdef GPU_RANGES_NVTX
  g->domain = nvtxDomainCreateA("gflow");
#endif

  g->base.ops = &gpu_ops;
  g->base.name = "gpu";
  g->base.graphs = !g->timing_on;
  g->base.can_run_kernels_on_host_memory = 0;
  snprintf(g->base.description, sizeof g->base.description,
           "GPU %d: %.160s, %.1f GiB, PCI %04x:%02x:%02x.0", device, props.name,
           (double)props.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), (unsigned)props.pciDomainID,
           (unsigned)props.pciBusID, (unsigned)props.pciDeviceID);
  *out = &g->base;
  return GF_OK;
}

#endif
