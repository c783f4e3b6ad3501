/* memory.c - memory spaces, and every allocation of a run with its lifetime. */
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const gf_space_names[GF_SPACE_COUNT] = {"device", "managed", "pinned", "host", "pool"};

const char *gf_space_name(gf_space space) {
  return space >= 0 && space < GF_SPACE_COUNT ? gf_space_names[space] : "unknown";
}

size_t gf_host_bytes_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  fclose(f);
  return (size_t)kib * 1024;
}

typedef struct allocation {
  void *ptr;
  gf_space space;
  gf_stream *stream; /* ordered on it, or NULL */
  size_t bytes;
} allocation;

struct gf_memory {
  gf_backend *b;
  const gf_workflow *wf;
  void ***inst;      /* [field][ring instance] */
  allocation *extra; /* gf_memory_alloc's, NULL ptr: freed */
  int nextra, extra_cap;
  gf_pool *pools[GF_SPACE_COUNT]; /* the temporaries', created at first use */
  int64_t held[GF_SPACE_COUNT];   /* bytes allocated now, per space */
};

/* Counts an allocation (bytes > 0) or a free (< 0) in its space and, when the
 * sink listens (a trace), reports the space's new total as a counter. A free
 * on a stream counts when issued, though the stream may use the block a while. */
static void count_bytes(gf_memory *m, gf_space space, int64_t bytes) {
  m->held[space] += bytes;
  const gf_op_sink *sink = &m->b->sink;
  if (!gf_sink_wants(sink, GF_TIMED_MEMORY)) return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  sink->report(sink->user, &(gf_op_timing){.tag = {-1, -1, (int)space},
                                           .kind = GF_TIMED_MEMORY,
                                           .bytes = (size_t)m->held[space],
                                           .start_ns = now,
                                           .end_ns = now});
}

/* Host-side spaces and device-side spaces draw on different memory. */
static int on_device(gf_space space) {
  return space == GF_SPACE_DEVICE || space == GF_SPACE_MANAGED || space == GF_SPACE_POOL;
}

/* Stops before allocating anything when the fields (and the output staging
 * buffers, pinned host memory) cannot fit, naming the first that does not and
 * how much is missing. Host-side and device-side spaces are counted apart. */
static gf_status check_capacity(gf_backend *b, const gf_workflow *wf, gf_diag *diag) {
  size_t staging_bytes = gf_workflow_plane_bytes(wf);
  for (int side = 1; side >= 0; side--) { /* the device first: it is the scarcer */
    size_t avail = b->ops->bytes_free(b, side ? GF_SPACE_DEVICE : GF_SPACE_HOST);
    if (avail == 0) continue; /* unknown */
    double need = 0;
    for (int f = 0; f <= wf->nfields; f++) {
      int staging = f == wf->nfields;
      if (!staging && wf->fields[f].scratch) continue; /* from the pool, while a step runs */
      gf_space space = staging ? GF_SPACE_PINNED : wf->fields[f].space;
      if ((on_device(space) && !b->can_run_kernels_on_host_memory) != side) continue;
      double bytes = staging ? (double)staging_bytes * wf->staging
                             : (double)wf->fields[f].bytes * wf->fields[f].ring;
      need += bytes;
      if (need <= (double)avail) continue;
      char a[32], m[32], c[32];
      gf_format_bytes(bytes, a, sizeof a);
      gf_format_bytes(need - (double)avail, m, sizeof m);
      gf_format_bytes((double)avail, c, sizeof c);
      if (staging)
        return gf_diag_error(diag, GF_INTERNAL,
                             "the %d output staging buffers (%s of pinned memory) do not fit: %s "
                             "missing, %s free; lower memory.staging",
                             wf->staging, a, m, c);
      return gf_diag_at(diag, wf->fields[f].loc, GF_INTERNAL,
                        "field '%s' (%s of %s memory) does not fit: %s missing, %s free",
                        wf->fields[f].name, a, gf_space_name(space), m, c);
    }
  }
  return GF_OK;
}

static gf_status allocate_fields(gf_memory *m, gf_diag *diag) {
  const gf_workflow *wf = m->wf;
  gf_backend *b = m->b;
  m->inst = gf_calloc((size_t)wf->nfields, sizeof(void **));
  if (!m->inst) return gf_oom(diag, "allocating the fields");
  for (int f = 0; f < wf->nfields; f++) {
    const gf_field *field = &wf->fields[f];
    m->inst[f] = gf_calloc((size_t)field->ring, sizeof(void *));
    if (!m->inst[f]) return gf_oom(diag, "allocating the fields");
    /* A grown ring (task_output.c: batches read from it) is one block, its
     * instances one after another; otherwise each instance is its own. */
    int together = field->declared_ring > 0, allocations = together ? 1 : field->ring;
    size_t bytes = field->bytes * (size_t)(together ? field->ring : 1);
    for (int k = 0; k < allocations && !field->scratch; k++) {
      if (b->ops->alloc(b, field->space, bytes, NULL, &m->inst[f][k]) != GF_OK) {
        char a[32], c[32];
        gf_format_bytes((double)bytes, a, sizeof a);
        gf_format_bytes((double)b->ops->bytes_free(b, field->space), c, sizeof c);
        return gf_diag_at(diag, field->loc, GF_INTERNAL,
                          "cannot allocate field '%s' instance %d (%s of %s memory, %s free): %s",
                          field->name, k, a, gf_space_name(field->space), c, b->error);
      }
      count_bytes(m, field->space, (int64_t)bytes);
    }
    for (int k = 1; together && !field->scratch && k < field->ring; k++)
      m->inst[f][k] = (char *)m->inst[f][0] + (size_t)k * field->bytes;
  }
  return GF_OK;
}

/* What the pool of `space` holds from the backend: its blocks, or under
 * async the temporaries themselves. */
static int64_t pool_held(const gf_memory *m, gf_space space) {
  const gf_pool_stats *st = gf_pool_stats_of(m->pools[space]);
  return (int64_t)(m->wf->pool_strategy == GF_POOL_ASYNC ? st->in_use : st->reserved);
}

/* The pool of `space`, created now unless it is. GF_INTERNAL with the
 * backend's error written. */
static gf_status create_pool(gf_memory *m, gf_space space) {
  if (m->pools[space]) return GF_OK;
  return gf_pool_create(m->b, m->wf->pool_strategy, space, m->wf->pool_release_threshold,
                        &m->pools[space]);
}

/* The pool of each space that has scratch fields, created with a block for
 * one step's worth of them (their sizes added up) before the loop: taken at
 * the first scratch field's first use, inside the loop, the block's
 * allocation (a device's is slow) counted in the loop's time. */
static gf_status reserve_pools(gf_memory *m, gf_diag *diag) {
  const gf_workflow *wf = m->wf;
  for (int s = 0; s < GF_SPACE_COUNT; s++) {
    size_t bytes = 0;
    for (int f = 0; f < wf->nfields; f++)
      if (wf->fields[f].scratch && wf->fields[f].space == (gf_space)s) bytes += wf->fields[f].bytes;
    if (bytes == 0) continue;
    gf_status st = create_pool(m, (gf_space)s);
    if (st == GF_OK) st = gf_pool_reserve(m->pools[s], bytes);
    if (st != GF_OK) {
      char a[32];
      gf_format_bytes((double)bytes, a, sizeof a);
      return gf_diag_error(diag, GF_INTERNAL,
                           "cannot reserve the scratch fields' pool (%s of %s memory): %s", a,
                           gf_space_name((gf_space)s), m->b->error);
    }
    count_bytes(m, (gf_space)s, pool_held(m, (gf_space)s));
  }
  return GF_OK;
}

/* Managed memory, before the loop: advice and, where asked, prefetch. */
static gf_status prepare_managed(gf_memory *m, gf_diag *diag) {
  const gf_workflow *wf = m->wf;
  gf_backend *b = m->b;
  for (int f = 0; f < wf->nfields; f++) {
    const gf_field *field = &wf->fields[f];
    if (field->space != GF_SPACE_MANAGED || field->scratch || !b->ops->managed_prepare) continue;
    for (int k = 0; k < field->ring; k++)
      if (b->ops->managed_prepare(b, m->inst[f][k], field->bytes, field->prefetch,
                                  field->read_mostly) != GF_OK)
        return gf_diag_at(diag, field->loc, GF_INTERNAL, "preparing managed field '%s': %s",
                          field->name, b->error);
  }
  return GF_OK;
}

/* Computes each field's initial value on the host and copies it into every
 * instance, through a stream of its own. */
static gf_status initialise_fields(gf_memory *m, gf_field_init_fn init, void *user, gf_diag *diag) {
  const gf_workflow *wf = m->wf;
  gf_backend *b = m->b;
  gf_stream *stream = NULL;
  if (b->ops->stream_create(b, GF_STREAM_NORMAL, &stream) != GF_OK)
    return gf_diag_error(diag, GF_INTERNAL, "cannot create a stream to initialise the fields: %s",
                         b->error);
  gf_status st = GF_OK;
  for (int f = 0; f < wf->nfields && st == GF_OK; f++) {
    const gf_field *field = &wf->fields[f];
    if (field->scratch) continue;
    void *host = gf_malloc(field->bytes);
    st = host ? init(user, f, host) : gf_oom(diag, "initialising the fields");
    for (int k = 0; k < field->ring && st == GF_OK; k++)
      if (b->ops->copy_async(b, stream, m->inst[f][k], host, field->bytes, (gf_tag){-1, -1, -1}) !=
              GF_OK ||
          b->ops->stream_synchronize(b, stream) != GF_OK)
        st = gf_diag_error(diag, GF_INTERNAL, "initialising field '%s': %s", field->name, b->error);
    free(host);
  }
  b->ops->stream_destroy(b, stream);
  return st;
}

gf_status gf_memory_create(gf_backend *b, const gf_workflow *wf, gf_field_init_fn init,
                           void *init_user, gf_diag *diag, gf_memory **out) {
  *out = NULL;
  gf_memory *m = gf_calloc(1, sizeof *m);
  if (!m) return gf_oom(diag, "allocating the fields");
  m->b = b;
  m->wf = wf;
  *out = m;
  gf_status st = check_capacity(b, wf, diag);
  if (st == GF_OK) st = allocate_fields(m, diag);
  if (st == GF_OK) st = reserve_pools(m, diag);
  if (st == GF_OK) st = initialise_fields(m, init, init_user, diag);
  if (st == GF_OK) st = prepare_managed(m, diag);
  return st;
}

void *gf_memory_instance(const gf_memory *m, int field, int inst) {
  return m->inst[field][inst];
}

gf_status gf_memory_alloc(gf_memory *m, gf_space space, size_t bytes, gf_stream *stream,
                          void **out) {
  gf_backend *b = m->b;
  /* Room first: an allocation that could not be recorded would leak. */
  if (GF_GROW(m->extra, m->extra_cap, m->nextra + 1) != GF_OK) {
    snprintf(b->error, sizeof b->error, "out of memory: recording an allocation");
    return GF_INTERNAL;
  }
  if (b->ops->alloc(b, space, bytes, stream, out) != GF_OK) return GF_INTERNAL;
  m->extra[m->nextra++] = (allocation){*out, space, stream, bytes};
  count_bytes(m, space, (int64_t)bytes);
  return GF_OK;
}

void gf_memory_free(gf_memory *m, void *ptr, gf_stream *stream) {
  for (int i = m->nextra - 1; i >= 0; i--)
    if (m->extra[i].ptr == ptr) {
      m->b->ops->free(m->b, m->extra[i].space, ptr, stream);
      m->extra[i].ptr = NULL;
      count_bytes(m, m->extra[i].space, -(int64_t)m->extra[i].bytes);
      return;
    }
}

gf_status gf_memory_temp_alloc(gf_memory *m, gf_space space, size_t bytes, gf_stream *stream,
                               const void *hint, void **out) {
  *out = NULL;
  if (create_pool(m, space) != GF_OK) return GF_INTERNAL;
  int64_t held = pool_held(m, space);
  gf_status st = gf_pool_alloc(m->pools[space], bytes, stream, hint, out);
  int64_t now = pool_held(m, space);
  if (now != held) count_bytes(m, space, now - held);
  return st;
}

gf_status gf_memory_temp_free(gf_memory *m, gf_space space, void *ptr, gf_stream *stream) {
  if (!m->pools[space]) {
    snprintf(m->b->error, sizeof m->b->error, "internal: freeing a temporary of no pool");
    return GF_INTERNAL;
  }
  int64_t held = pool_held(m, space);
  gf_status st = gf_pool_free(m->pools[space], ptr, stream);
  int64_t now = pool_held(m, space);
  if (now != held) count_bytes(m, space, now - held);
  return st;
}

int gf_memory_pool_stats(const gf_memory *m, gf_pool_stats *out) {
  memset(out, 0, sizeof *out);
  int any = 0;
  for (int s = 0; s < GF_SPACE_COUNT; s++) {
    if (!m->pools[s]) continue;
    const gf_pool_stats *p = gf_pool_stats_of(m->pools[s]);
    any |= p->allocs > 0;
    out->allocs += p->allocs, out->frees += p->frees, out->reused += p->reused;
    out->reused_same += p->reused_same, out->reused_after += p->reused_after;
    out->passed_pending += p->passed_pending;
    out->blocks += p->blocks, out->released += p->released;
    /* Peaks of different spaces may not coincide: their sum bounds the total. */
    out->in_use += p->in_use, out->in_use_peak += p->in_use_peak;
    out->reserved += p->reserved, out->reserved_peak += p->reserved_peak;
    out->pending += p->pending, out->pending_peak += p->pending_peak;
  }
  return any;
}

void gf_memory_destroy(gf_memory *m) {
  if (!m) return;
  for (int s = 0; s < GF_SPACE_COUNT; s++) gf_pool_destroy(m->pools[s]);
  for (int i = 0; i < m->nextra; i++)
    if (m->extra[i].ptr) m->b->ops->free(m->b, m->extra[i].space, m->extra[i].ptr, NULL);
  free(m->extra);
  if (m->inst)
    for (int f = 0; f < m->wf->nfields && m->inst[f]; f++) {
      for (int k = 0; k < (m->wf->fields[f].declared_ring ? 1 : m->wf->fields[f].ring); k++)
        if (m->inst[f][k]) m->b->ops->free(m->b, m->wf->fields[f].space, m->inst[f][k], NULL);
      free(m->inst[f]);
    }
  free(m->inst);
  free(m);
}
