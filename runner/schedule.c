/* schedule.c - the schedules: sync, streams, events, graph and auto as policy tables. */
#include "schedule.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Takes `name`, a heap string or NULL (out of memory). */
static gf_status add_stream(gf_sched_streams *streams, char *name) {
  char **names =
      name ? gf_realloc(streams->names, (size_t)(streams->count + 1) * sizeof *names) : NULL;
  if (!names) {
    free(name);
    return GF_INTERNAL;
  }
  streams->names = names;
  streams->names[streams->count++] = name;
  return GF_OK;
}

gf_status gf_group_member(const gf_stream_group *groups, const gf_stream_ref *ref, int64_t n,
                          const char *kind, gf_diag *diag, int *out) {
  const gf_stream_group *group = &groups[ref->group];
  int index = 0;
  if (ref->index) {
    gf_status st = GF_OK;
    double v = gf_expr_eval(ref->index, &(gf_eval_ctx){.n = (double)n}, &st);
    if (st != GF_OK) return st;
    if (!gf_is_index(v, group->count))
      return gf_diag_at(diag, ref->loc, GF_INVALID,
                        "%s index %s is out of range for '%s' (0..%d) at step %" PRId64, kind,
                        gf_number_text(v, (char[32]){0}, 32), group->name, group->count - 1, n);
    index = (int)v;
  }
  *out = group->first + index;
  return GF_OK;
}

/* A stream for the copies out of batched outputs' rings, when there are any. */
static gf_status add_drain_stream(const gf_workflow *wf, gf_sched_streams *streams) {
  streams->drain_stream = -1;
  for (int i = 0; i < wf->nfiles; i++)
    if (wf->files[i].batch > 1) {
      streams->drain_stream = streams->count;
      return add_stream(streams, gf_strdup("drain"));
    }
  return GF_OK;
}

/* ---- sync: one stream, the host waits for every copy ---- */

static gf_status one_stream(const gf_workflow *wf, gf_sched_streams *streams) {
  (void)wf;
  streams->drain_stream = -1;
  return add_stream(streams, gf_strdup("main"));
}

static gf_status first_stream(const gf_workflow *wf, gf_sched_streams *streams, int t, int64_t n,
                              gf_diag *diag, int *stream) {
  (void)wf, (void)streams, (void)t, (void)n, (void)diag;
  *stream = 0;
  return GF_OK;
}

static const char *main_placement(const gf_workflow *wf, const gf_task *task, char *buf,
                                  size_t size) {
  (void)wf, (void)task, (void)buf, (void)size;
  return "main";
}

static const gf_schedule sync_schedule = {
    .name = "sync",
    .summary = "one stream; the host waits after every copy (like hipMemcpy)",
    .flags = GF_SCHED_BLOCKING_COPIES,
    .declare_streams = one_stream,
    .stream_of = first_stream,
    .placement = main_placement,
};

/* ---- streams and events: the workflow's streams ---- */

static gf_status workflow_streams(const gf_workflow *wf, gf_sched_streams *streams) {
  gf_status st = GF_OK;
  for (int s = 0; s < wf->nstreams && st == GF_OK; s++) {
    char buf[128];
    st = add_stream(streams, gf_strdup(gf_workflow_stream_name(wf, s, buf, sizeof buf)));
  }
  return st == GF_OK ? add_drain_stream(wf, streams) : st;
}

static gf_status task_stream(const gf_workflow *wf, gf_sched_streams *streams, int t, int64_t n,
                             gf_diag *diag, int *stream) {
  (void)streams;
  return gf_group_member(wf->groups, &wf->tasks[t].stream, n, "stream", diag, stream);
}

static const char *stream_key_placement(const gf_workflow *wf, const gf_task *task, char *buf,
                                        size_t size) {
  const gf_stream_group *g = &wf->groups[task->stream.group];
  if (task->stream.index)
    snprintf(buf, size, "%s[%s]", g->name, gf_expr_text(task->stream.index));
  else
    snprintf(buf, size, "%s", g->name);
  return buf;
}

static const gf_schedule streams_schedule = {
    .name = "streams",
    .summary = "the tasks' own streams; the host synchronises the producer's stream",
    .flags = GF_SCHED_USER_STREAMS,
    .declare_streams = workflow_streams,
    .stream_of = task_stream,
    .placement = stream_key_placement,
};

static const gf_schedule events_schedule = {
    .name = "events",
    .summary = "the tasks' own streams; the consumer's stream waits on an event",
    .flags = GF_SCHED_USER_STREAMS | GF_SCHED_EVENT_WAITS,
    .declare_streams = workflow_streams,
    .stream_of = task_stream,
    .placement = stream_key_placement,
};

/* Events' plan, issued from graphs: each run of stream work between two host
 * instructions (at most until the host's next fence) is captured, and
 * launched again where it repeats (exec.c, graph replay). */
static const gf_schedule graph_schedule = {
    .name = "graph",
    .summary = "the events schedule, its stream work captured into graphs and replayed",
    .flags = GF_SCHED_USER_STREAMS | GF_SCHED_EVENT_WAITS | GF_SCHED_GRAPHS,
    .declare_streams = workflow_streams,
    .stream_of = task_stream,
    .placement = stream_key_placement,
};

/* ---- auto: a compute stream and one IO stream per ring instance ---- */

/* Ghost cells, and the edges they are cut from (urgent), travel on a
 * stream of their own, so the interior can be updated meanwhile. */
static int on_halo_stream(const gf_task *task) {
  return (task->kind->traits & GF_KIND_HALO) || task->urgent;
}

/* One IO stream per instance of the deepest ring a copy reads (at most 8),
 * so each copy of a rotating field can proceed on its own. */
static gf_status auto_streams(const gf_workflow *wf, gf_sched_streams *streams) {
  int io = 0, deepest = 1;
  for (int t = 0; t < wf->ntasks; t++) {
    const gf_task *task = &wf->tasks[t];
    if (!(task->kind->traits & GF_KIND_MOVES_DATA) || task->drains) continue;
    io = 1;
    for (int a = 0; a < task->naccess; a++)
      if (task->access[a].access == GF_ACCESS_READ &&
          wf->fields[task->access[a].ref.field].ring > deepest)
        deepest = wf->fields[task->access[a].ref.field].ring;
  }
  gf_status st = add_stream(streams, gf_strdup("compute"));
  streams->io_streams = io ? (deepest < 8 ? deepest : 8) : 0;
  for (int k = 0; k < streams->io_streams && st == GF_OK; k++)
    st = add_stream(streams, gf_asprintf("io[%d]", k));
  for (int t = 0; t < wf->ntasks && st == GF_OK && streams->halo_stream < 0; t++)
    if (on_halo_stream(&wf->tasks[t])) {
      streams->halo_stream = streams->count;
      st = add_stream(streams, gf_strdup("halo"));
    }
  return st == GF_OK ? add_drain_stream(wf, streams) : st;
}

static gf_status auto_stream(const gf_workflow *wf, gf_sched_streams *streams, int t, int64_t n,
                             gf_diag *diag, int *stream) {
  (void)n, (void)diag;
  if (on_halo_stream(&wf->tasks[t]))
    *stream = streams->halo_stream;
  else if (wf->tasks[t].drains && streams->drain_stream >= 0)
    *stream = streams->drain_stream;
  else if (!(wf->tasks[t].kind->traits & GF_KIND_MOVES_DATA) || streams->io_streams == 0)
    *stream = 0;
  else
    *stream = 1 + (int)(streams->io_next++ % streams->io_streams);
  return GF_OK;
}

static const char *auto_placement(const gf_workflow *wf, const gf_task *task, char *buf,
                                  size_t size) {
  (void)wf, (void)buf, (void)size;
  return on_halo_stream(task)                      ? "halo"
         : task->drains                            ? "drain"
         : task->kind->traits & GF_KIND_MOVES_DATA ? "io[*]"
                                                   : "compute";
}

static const gf_schedule auto_schedule = {
    .name = "auto",
    .summary = "gflow's streams; every dependency inferred from what tasks read and write",
    .flags = GF_SCHED_INFERS_ORDER | GF_SCHED_EVENT_WAITS | GF_SCHED_RECORD_ALL,
    .declare_streams = auto_streams,
    .stream_of = auto_stream,
    .placement = auto_placement,
};

const gf_schedule *const gf_schedules[] = {&sync_schedule, &streams_schedule, &events_schedule,
                                           &graph_schedule, &auto_schedule};
const int gf_schedule_count = (int)(sizeof gf_schedules / sizeof gf_schedules[0]);

const gf_schedule *gf_schedule_find(const char *name) {
  for (int i = 0; i < gf_schedule_count; i++)
    if (strcmp(gf_schedules[i]->name, name) == 0) return gf_schedules[i];
  return NULL;
}
