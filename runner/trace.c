/* trace.c - the run's timeline as Chrome trace / Perfetto JSON. */
#include "trace.h"

#include "comm.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "space.h"
#include "text.h"

typedef struct flow {
  gf_trace_key producer, consumer;
} flow;

typedef struct launch_args {
  gf_trace_key key;
  const gf_param *params; /* the kernel's table: names, in order, of the scalars in values */
  double values[GF_TRACE_MAX_ARGS];
} launch_args;

struct gf_trace {
  pthread_mutex_t lock;
  char **streams;
  int nstreams;
  char **tasks;
  char **details;
  int ntasks;
  char *process;
  int64_t first_step, end_step;
  gf_op_timing *slices;
  int nslices, slices_cap; /* at most GF_TRACE_MAX_SLICES */
  int64_t dropped;
  flow *flows;
  int nflows, flows_cap;
  launch_args *args;
  int nargs, args_cap;
  int out_of_memory;
};

static char **copy_names(const char *const *names, int count) {
  char **copy = gf_calloc((size_t)(count ? count : 1), sizeof *copy);
  for (int i = 0; copy && i < count; i++)
    if (!(copy[i] = gf_strdup(names[i]))) {
      for (int j = 0; j < i; j++) free(copy[j]);
      free(copy);
      return NULL;
    }
  return copy;
}

gf_trace *gf_trace_create(const char *const *stream_names, int nstreams,
                          const char *const *task_names, const char *const *task_details,
                          int ntasks, const char *process_name, int64_t first_step,
                          int64_t end_step) {
  gf_trace *t = gf_calloc(1, sizeof *t);
  if (!t) return NULL;
  pthread_mutex_init(&t->lock, NULL);
  t->nstreams = nstreams;
  t->ntasks = ntasks;
  t->first_step = first_step;
  t->end_step = end_step;
  t->streams = copy_names(stream_names, nstreams);
  t->tasks = copy_names(task_names, ntasks);
  t->details = copy_names(task_details, ntasks);
  t->process = gf_strdup(process_name);
  if (!t->streams || !t->tasks || !t->details || !t->process) {
    gf_trace_free(t);
    return NULL;
  }
  return t;
}

void gf_trace_free(gf_trace *t) {
  if (!t) return;
  for (int i = 0; t->streams && i < t->nstreams; i++) free(t->streams[i]);
  for (int i = 0; t->tasks && i < t->ntasks; i++) free(t->tasks[i]);
  for (int i = 0; t->details && i < t->ntasks; i++) free(t->details[i]);
  free(t->streams);
  free(t->tasks);
  free(t->details);
  free(t->process);
  free(t->slices);
  free(t->flows);
  free(t->args);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

static int in_window(const gf_trace *t, int64_t step) {
  return step < 0 || (step >= t->first_step && step < t->end_step);
}

void gf_trace_report(void *user, const gf_op_timing *timing) {
  gf_trace *t = user;
  if (!in_window(t, timing->tag.step)) return;
  pthread_mutex_lock(&t->lock);
  if (t->nslices >= GF_TRACE_MAX_SLICES) {
    t->dropped++;
  } else if (GF_GROW(t->slices, t->slices_cap, t->nslices + 1) != GF_OK) {
    t->out_of_memory = 1;
    t->dropped++;
  } else {
    t->slices[t->nslices++] = *timing;
  }
  pthread_mutex_unlock(&t->lock);
}

void gf_trace_flow(gf_trace *t, gf_trace_key producer, gf_trace_key consumer) {
  if (!in_window(t, producer.step) || !in_window(t, consumer.step)) return;
  pthread_mutex_lock(&t->lock);
  if (t->nflows < GF_TRACE_MAX_SLICES && GF_GROW(t->flows, t->flows_cap, t->nflows + 1) == GF_OK)
    t->flows[t->nflows++] = (flow){producer, consumer};
  pthread_mutex_unlock(&t->lock);
}

void gf_trace_launch_args(gf_trace *t, gf_trace_key key, const gf_kernel *kernel,
                          const void *args) {
  if (!in_window(t, key.step)) return;
  launch_args a = {.key = key, .params = kernel->params};
  int n = 0;
  for (const gf_param *p = kernel->params; p->name && n < GF_TRACE_MAX_ARGS; p++) {
    const unsigned char *at = (const unsigned char *)args + p->offset;
    if (p->type == GF_PARAM_REAL) {
      memcpy(&a.values[n++], at, sizeof(double));
    } else if (p->type == GF_PARAM_INT) {
      int64_t v;
      memcpy(&v, at, sizeof v);
      a.values[n++] = (double)v;
    }
  }
  pthread_mutex_lock(&t->lock);
  if (t->nargs < GF_TRACE_MAX_SLICES && GF_GROW(t->args, t->args_cap, t->nargs + 1) == GF_OK)
    t->args[t->nargs++] = a;
  pthread_mutex_unlock(&t->lock);
}

/* ---- writing ---- */

static const char *kind_name(int kind) {
  switch (kind) {
    case GF_TIMED_LAUNCH:
      return "launch";
    case GF_TIMED_COPY:
      return "copy";
    case GF_TIMED_HOST_WAIT:
      return "host wait";
    case GF_TIMED_HOST_CALL:
      return "host call";
    case GF_TIMED_WRITE:
      return "file write";
    default:
      return "?";
  }
}

/* Track ids: 1 the host (stream -1), 2 the writer thread (-2), 3 + s stream s. */
static int track_of(int stream) {
  return stream == -2 ? 2 : stream < 0 ? 1 : 3 + stream;
}

static uint64_t key_hash(gf_trace_key k) {
  uint64_t h = 1469598103934665603ull;
  int64_t parts[4] = {k.task, k.step, k.stream, k.kind};
  for (int i = 0; i < 4; i++) h = (h ^ (uint64_t)parts[i]) * 1099511628211ull;
  return h;
}

static int same_key(gf_trace_key a, gf_trace_key b) {
  return a.task == b.task && a.step == b.step && a.stream == b.stream && a.kind == b.kind;
}

static gf_trace_key slice_key(const gf_trace *t, int64_t i) {
  const gf_op_timing *s = &t->slices[i];
  return (gf_trace_key){s->tag.task, s->tag.step, s->tag.stream, s->kind};
}

static gf_trace_key args_key(const gf_trace *t, int64_t i) {
  return t->args[i].key;
}

/* Index of records by key (slices, launch args): open addressing. */
typedef struct key_index {
  int64_t *table; /* record + 1, 0 empty */
  int64_t cap;
  gf_trace_key (*key_of)(const gf_trace *t, int64_t i);
} key_index;

static int build_index(key_index *ix, const gf_trace *t, int64_t count,
                       gf_trace_key (*key_of)(const gf_trace *t, int64_t i)) {
  ix->key_of = key_of;
  ix->cap = 1;
  while (ix->cap < 2 * count + 2) ix->cap *= 2;
  ix->table = gf_calloc((size_t)ix->cap, sizeof *ix->table);
  if (!ix->table) return 0;
  for (int64_t i = 0; i < count; i++) {
    int64_t h = (int64_t)(key_hash(key_of(t, i)) & (uint64_t)(ix->cap - 1));
    while (ix->table[h]) h = (h + 1) & (ix->cap - 1);
    ix->table[h] = i + 1;
  }
  return 1;
}

/* The record with key `k`; -1 when absent. */
static int64_t find_key(const key_index *ix, const gf_trace *t, gf_trace_key k) {
  int64_t h = (int64_t)(key_hash(k) & (uint64_t)(ix->cap - 1));
  for (; ix->table[h]; h = (h + 1) & (ix->cap - 1))
    if (same_key(k, ix->key_of(t, ix->table[h] - 1))) return ix->table[h] - 1;
  return -1;
}

static int is_counter(int kind) {
  return kind == GF_TIMED_MEMORY || kind == GF_TIMED_STAGING;
}

/* A counter sample: a counter track per memory space, one for staging. */
static void write_counter(gf_text *j, int pid, const gf_op_timing *s, int64_t base) {
  gf_text_printf(j, ",\n{\"ph\": \"C\", \"pid\": %d, \"name\": ", pid);
  if (s->kind == GF_TIMED_MEMORY) {
    char name[64];
    snprintf(name, sizeof name, "memory held: %s", gf_space_name((gf_space)s->tag.stream));
    gf_text_json(j, name);
    gf_text_printf(j, ", \"ts\": %.3f, \"args\": {\"bytes\": %zu}}",
                   (double)(s->start_ns - base) / 1e3, s->bytes);
  } else {
    gf_text_json(j, "output staging buffers in use");
    gf_text_printf(j, ", \"ts\": %.3f, \"args\": {\"buffers\": %zu}}",
                   (double)(s->start_ns - base) / 1e3, s->bytes);
  }
}

/* A launch's scalar arguments, `, "dt": 0.001, ...`. */
static void write_launch_args(gf_text *j, const launch_args *a) {
  int n = 0;
  for (const gf_param *p = a->params; p->name && n < GF_TRACE_MAX_ARGS; p++) {
    if (p->type != GF_PARAM_REAL && p->type != GF_PARAM_INT) continue;
    gf_text_puts(j, ", ");
    gf_text_json(j, p->name);
    gf_text_printf(j, ": %.17g", a->values[n++]);
  }
}

static void track_name(gf_text *j, int pid, int tid, const char *name, int sort) {
  gf_text_printf(j, ",\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_name\", ", pid,
                 tid);
  gf_text_puts(j, "\"args\": {\"name\": ");
  gf_text_json(j, name);
  gf_text_printf(j, "}},\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, ", pid, tid);
  gf_text_printf(j, "\"name\": \"thread_sort_index\", \"args\": {\"sort_index\": %d}}", sort);
}

/* This process's events, as process `pid`, times from `base`: JSON objects
 * separated by ",\n". NULL when out of memory. */
static char *events_json(gf_trace *t, int pid, int64_t base) {
  gf_text j = {0};
  gf_text_printf(
      &j, "{\"ph\": \"M\", \"pid\": %d, \"name\": \"process_name\", \"args\": {\"name\": ", pid);
  gf_text_json(&j, t->process);
  gf_text_puts(&j, "}}");
  track_name(&j, pid, 1, "host", 0);
  track_name(&j, pid, 2, "writer thread", t->nstreams + 1);
  for (int s = 0; s < t->nstreams; s++) track_name(&j, pid, track_of(s), t->streams[s], 1 + s);
  key_index args_ix = {0};
  if (t->nargs && !build_index(&args_ix, t, t->nargs, args_key)) {
    gf_text_free(&j);
    return NULL;
  }
  for (int64_t i = 0; i < t->nslices; i++) {
    const gf_op_timing *s = &t->slices[i];
    if (is_counter(s->kind)) {
      write_counter(&j, pid, s, base);
      continue;
    }
    const char *name =
        s->tag.task >= 0 && s->tag.task < t->ntasks ? t->tasks[s->tag.task] : "gflow set-up";
    gf_text_printf(&j, ",\n{\"ph\": \"X\", \"pid\": %d, \"name\": ", pid);
    gf_text_json(&j, name);
    gf_text_printf(&j,
                   ", \"cat\": \"%s\", \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": "
                   "{\"step\": %" PRId64 ", \"bytes\": %zu, \"operation\": \"%s\", \"task\": ",
                   kind_name(s->kind), track_of(s->tag.stream), (double)(s->start_ns - base) / 1e3,
                   (double)(s->end_ns - s->start_ns) / 1e3, s->tag.step, s->bytes,
                   kind_name(s->kind));
    gf_text_json(&j, s->tag.task >= 0 && s->tag.task < t->ntasks ? t->details[s->tag.task]
                                                                 : "initial values");
    int64_t a =
        s->kind == GF_TIMED_LAUNCH && t->nargs ? find_key(&args_ix, t, slice_key(t, i)) : -1;
    if (a >= 0) write_launch_args(&j, &t->args[a]);
    gf_text_puts(&j, "}}");
  }
  free(args_ix.table);
  key_index ix = {0};
  if (t->nflows && !build_index(&ix, t, t->nslices, slice_key)) {
    gf_text_free(&j);
    return NULL;
  }
  for (int64_t i = 0; i < t->nflows; i++) {
    int64_t p = find_key(&ix, t, t->flows[i].producer), c = find_key(&ix, t, t->flows[i].consumer);
    if (p < 0 || c < 0) continue; /* outside the window, or not timed */
    const gf_op_timing *ps = &t->slices[p], *cs = &t->slices[c];
    gf_text_printf(&j,
                   ",\n{\"ph\": \"s\", \"pid\": %d, \"tid\": %d, \"id\": %" PRId64
                   ", \"name\": \"event\", \"cat\": \"dependency\", \"ts\": %.3f}",
                   pid, track_of(ps->tag.stream), i, (double)(ps->end_ns - base) / 1e3 - 0.001);
    gf_text_printf(&j,
                   ",\n{\"ph\": \"f\", \"bp\": \"e\", \"pid\": %d, \"tid\": %d, \"id\": %" PRId64
                   ", \"name\": \"event\", \"cat\": \"dependency\", \"ts\": %.3f}",
                   pid, track_of(cs->tag.stream), i, (double)(cs->start_ns - base) / 1e3);
  }
  free(ix.table);
  return gf_text_take(&j);
}

gf_status gf_trace_write(gf_trace *t, const char *path, gf_comm *comm, gf_diag *diag) {
  /* Under MPI each rank is a process of the one file (pid rank + 1), on one
   * time base, the earliest operation of any rank; rank 0 writes it. */
  int failed = gf_comm_all(comm, !t->out_of_memory) == 0;
  int64_t base = INT64_MAX;
  for (int64_t i = 0; i < t->nslices; i++)
    if (t->slices[i].start_ns < base) base = t->slices[i].start_ns;
  double latest = base == INT64_MAX ? -9e18 : -(double)base;
  gf_comm_max(comm, &latest, 1);
  base = latest < -8e18 ? 0 : (int64_t)-latest;
  char *mine = failed ? NULL : events_json(t, gf_comm_rank(comm) + 1, base);
  failed |= gf_comm_all(comm, mine != NULL) == 0;
  char *events = NULL;
  if (!failed) events = gf_comm_gather_text(comm, mine, ",\n");
  free(mine);
  if (gf_comm_rank(comm) > 0) return GF_OK;
  if (failed || !events) {
    free(events);
    return gf_oom(diag, t->out_of_memory ? "recording the trace" : "writing the trace");
  }
  gf_text j = {0};
  gf_text_puts(&j, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"dropped_slices\": ");
  gf_text_printf(&j, "%" PRId64 "}, \"traceEvents\": [\n", t->dropped);
  gf_text_puts(&j, events);
  free(events);
  gf_text_puts(&j, "\n]}\n");
  char *json = gf_text_take(&j);
  char *dir = gf_strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
  gf_status st;
  if (!dir) {
    st = gf_oom(diag, "writing the trace");
  } else if (slash) {
    *slash = '\0';
    st = gf_write_file_atomic(slash == dir ? "/" : dir, slash + 1, json, diag);
  } else {
    st = gf_write_file_atomic(".", path, json, diag);
  }
  free(dir);
  free(json);
  return st;
}
