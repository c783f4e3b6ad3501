/* trace.c - the run's timeline as Chrome trace / Perfetto JSON. */
#include "trace.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "text.h"

typedef struct flow {
  gf_trace_key producer, consumer;
} flow;

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

static int same_key(gf_trace_key k, const gf_op_timing *s) {
  return k.task == s->tag.task && k.step == s->tag.step && k.stream == s->tag.stream &&
         k.kind == s->kind;
}

/* Slice index by key: open addressing over the slices; -1 when absent. */
typedef struct slice_index {
  int64_t *table; /* slice + 1, 0 empty */
  int64_t cap;
} slice_index;

static int build_index(slice_index *ix, const gf_trace *t) {
  ix->cap = 1;
  while (ix->cap < 2 * t->nslices + 2) ix->cap *= 2;
  ix->table = gf_calloc((size_t)ix->cap, sizeof *ix->table);
  if (!ix->table) return 0;
  for (int64_t i = 0; i < t->nslices; i++) {
    const gf_op_timing *s = &t->slices[i];
    gf_trace_key k = {s->tag.task, s->tag.step, s->tag.stream, s->kind};
    int64_t h = (int64_t)(key_hash(k) & (uint64_t)(ix->cap - 1));
    while (ix->table[h]) h = (h + 1) & (ix->cap - 1);
    ix->table[h] = i + 1;
  }
  return 1;
}

static int64_t find_slice(const slice_index *ix, const gf_trace *t, gf_trace_key k) {
  int64_t h = (int64_t)(key_hash(k) & (uint64_t)(ix->cap - 1));
  for (; ix->table[h]; h = (h + 1) & (ix->cap - 1))
    if (same_key(k, &t->slices[ix->table[h] - 1])) return ix->table[h] - 1;
  return -1;
}

static void track_name(gf_text *j, int pid, int tid, const char *name, int sort) {
  gf_text_printf(j, ",\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_name\", ", pid,
                 tid);
  gf_text_puts(j, "\"args\": {\"name\": ");
  gf_text_json(j, name);
  gf_text_printf(j, "}},\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, ", pid, tid);
  gf_text_printf(j, "\"name\": \"thread_sort_index\", \"args\": {\"sort_index\": %d}}", sort);
}

gf_status gf_trace_write(gf_trace *t, const char *path, gf_diag *diag) {
  if (t->out_of_memory) return gf_oom(diag, "recording the trace");
  int64_t base = INT64_MAX;
  for (int64_t i = 0; i < t->nslices; i++)
    if (t->slices[i].start_ns < base) base = t->slices[i].start_ns;
  if (base == INT64_MAX) base = 0;
  gf_text j = {0};
  gf_text_puts(&j, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"dropped_slices\": ");
  gf_text_printf(&j, "%" PRId64 "}, \"traceEvents\": [\n", t->dropped);
  gf_text_puts(&j, "{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": ");
  gf_text_json(&j, t->process);
  gf_text_puts(&j, "}}");
  track_name(&j, 1, 1, "host", 0);
  track_name(&j, 1, 2, "writer thread", t->nstreams + 1);
  for (int s = 0; s < t->nstreams; s++) track_name(&j, 1, track_of(s), t->streams[s], 1 + s);
  for (int64_t i = 0; i < t->nslices; i++) {
    const gf_op_timing *s = &t->slices[i];
    const char *name =
        s->tag.task >= 0 && s->tag.task < t->ntasks ? t->tasks[s->tag.task] : "gflow set-up";
    gf_text_puts(&j, ",\n{\"ph\": \"X\", \"pid\": 1, \"name\": ");
    gf_text_json(&j, name);
    gf_text_printf(&j,
                   ", \"cat\": \"%s\", \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": "
                   "{\"step\": %" PRId64 ", \"bytes\": %zu, \"operation\": \"%s\", \"task\": ",
                   kind_name(s->kind), track_of(s->tag.stream), (double)(s->start_ns - base) / 1e3,
                   (double)(s->end_ns - s->start_ns) / 1e3, s->tag.step, s->bytes,
                   kind_name(s->kind));
    gf_text_json(&j, s->tag.task >= 0 && s->tag.task < t->ntasks ? t->details[s->tag.task]
                                                                 : "initial values");
    gf_text_puts(&j, "}}");
  }
  slice_index ix = {0};
  if (t->nflows && !build_index(&ix, t)) {
    gf_text_free(&j);
    return gf_oom(diag, "writing the trace");
  }
  for (int64_t i = 0; i < t->nflows; i++) {
    int64_t p = find_slice(&ix, t, t->flows[i].producer),
            c = find_slice(&ix, t, t->flows[i].consumer);
    if (p < 0 || c < 0) continue; /* outside the window, or not timed */
    const gf_op_timing *ps = &t->slices[p], *cs = &t->slices[c];
    gf_text_printf(&j,
                   ",\n{\"ph\": \"s\", \"pid\": 1, \"tid\": %d, \"id\": %" PRId64
                   ", \"name\": \"event\", \"cat\": \"dependency\", \"ts\": %.3f}",
                   track_of(ps->tag.stream), i, (double)(ps->end_ns - base) / 1e3 - 0.001);
    gf_text_printf(&j,
                   ",\n{\"ph\": \"f\", \"bp\": \"e\", \"pid\": 1, \"tid\": %d, \"id\": %" PRId64
                   ", \"name\": \"event\", \"cat\": \"dependency\", \"ts\": %.3f}",
                   track_of(cs->tag.stream), i, (double)(cs->start_ns - base) / 1e3);
  }
  free(ix.table);
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
