/* graph.c - the planner: streams, issue order, and per-step operations with
 * their synchronisation, checked for hazards with vector clocks. */
#include "graph.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

/* Event slots per stream. A wait targets the oldest record that covers the
 * operation it needs; when that slot has been re-recorded, the newer record on
 * the same stream covers it too (stream order), so reuse is always safe. */
#define EVENT_SLOTS 8

typedef struct record_slot {
  int64_t seq;    /* sequence number of the task op it follows; 0: never recorded */
  int64_t *clock; /* the stream's clock at the record */
} record_slot;

typedef struct stream_state {
  int64_t seq;    /* task operations issued so far */
  int64_t *clock; /* [s'] = last op of s' known complete before the next op here */
  record_slot slots[EVENT_SLOTS];
  int next_slot;
} stream_state;

/* One access to a region of a field instance, as the hazard check remembers it. */
typedef struct access {
  int stream; /* -1: the host, before the loop */
  int64_t seq;
  int task;
  int64_t step;
  int writes;
  gf_region region;
} access;

/* The accesses to one field instance that a later access may conflict with:
 * a write drops the accesses its region covers (anything conflicting with
 * them conflicts with it, and it is ordered after them), a read drops the
 * reads on its own stream that its region covers. */
typedef struct buffer_state {
  access *list;
  int count, cap;
} buffer_state;

/* Where an earlier instance of a task ran, for `after: task@n-k`. */
typedef struct instance {
  int64_t step; /* -1: none */
  int stream;
  int64_t seq;
} instance;

/* The last record of one of the workflow's own events (`events:`). */
typedef struct user_event {
  int64_t seq; /* of the task op it follows; 0: never recorded (waits are no-ops) */
  int stream;
  int task;
  int64_t step;
  int64_t *clock;
} user_event;

/* A scratch field's life in the step being planned. */
typedef struct scratch_life {
  int first_op, last_op; /* its first and last task operation; -1: not used this step */
  int first_task, last_task;
  int stream;     /* of the last use */
  int64_t *clock; /* that stream's clock after the last use */
} scratch_life;

typedef struct task_plan {
  instance *history; /* ring of `history_len` instances, indexed by step */
  int history_len;
  int records;    /* 1: record an event after each instance */
  int64_t active; /* instances planned so far (for the summary) */
} task_plan;

struct gf_plan {
  const gf_workflow *wf;
  const gf_schedule *schedule;
  gf_diag *diag;
  gf_sched_streams sched; /* the schedule's streams and its state */
  int nstreams;
  char **stream_names;
  int *order; /* issue order of tasks within a step */
  task_plan *tasks;
  int *field_base; /* first buffer of each field */
  int nbuffers;

  /* planning state */
  int64_t next_step;
  stream_state *streams;
  int64_t *host_clock;
  int64_t *scratch_clock;
  buffer_state *buffers;
  user_event *events;    /* the workflow's own, honoured under streams and events */
  scratch_life *scratch; /* [field], for scratch fields */

  gf_op *ops;
  int nops, ops_cap;
  int collect_edges;
  gf_edge *edges;
  int nedges, edges_cap;
  /* Set when a step's op, edge or access list could not grow: the helpers
   * that grow them return nothing, so gf_plan_step checks this once. */
  int out_of_memory;
  gf_op spare_op; /* what push_op hands out then */

  /* totals over the steps planned, for the summary */
  int64_t n_records, n_stream_waits, n_host_waits;
};

/* ---- small helpers --------------------------------------------------------- */

static void clock_join(int64_t *dst, const int64_t *src, int n) {
  for (int i = 0; i < n; i++)
    if (src[i] > dst[i]) dst[i] = src[i];
}

/* Floored modulo: the ring instance of index `i`, an integer of at most 2^53. */
static int ring_slot(double i, int ring) {
  int64_t k = (int64_t)i % ring;
  return (int)(k < 0 ? k + ring : k);
}

static gf_op *push_op(gf_plan *plan, gf_op_kind kind) {
  gf_op *op = &plan->spare_op;
  if (GF_GROW(plan->ops, plan->ops_cap, plan->nops + 1) == GF_OK)
    op = &plan->ops[plan->nops++];
  else
    plan->out_of_memory = 1;
  memset(op, 0, sizeof *op);
  op->kind = kind;
  op->stream = -1;
  op->other = -1;
  op->task = -1;
  return op;
}

static void push_edge(gf_plan *plan, gf_edge edge) {
  if (!plan->collect_edges) return;
  if (GF_GROW(plan->edges, plan->edges_cap, plan->nedges + 1) != GF_OK) {
    plan->out_of_memory = 1;
    return;
  }
  plan->edges[plan->nedges++] = edge;
}

/* ---- building the plan ----------------------------------------------------- */

/* Issue order: a topological order of the same-step `after` edges, ties broken
 * by the order the file lists the tasks. */
int gf_task_issue_order(const gf_workflow *wf, int *order) {
  int nt = wf->ntasks;
  int *pending = gf_calloc((size_t)nt, sizeof(int)); /* unmet same-step predecessors */
  char *done = gf_calloc((size_t)nt, 1);
  if (!pending || !done) {
    free(pending);
    free(done);
    return -1;
  }
  for (int t = 0; t < nt; t++)
    for (int d = 0; d < wf->tasks[t].nafter; d++)
      if (wf->tasks[t].after[d].lag == 0) pending[t]++;
  int placed = 0;
  while (placed < nt) {
    int next = -1;
    for (int t = 0; t < nt && next < 0; t++)
      if (!done[t] && pending[t] == 0) next = t;
    if (next < 0) break;
    done[next] = 1;
    order[placed++] = next;
    for (int t = 0; t < nt; t++)
      for (int d = 0; d < wf->tasks[t].nafter; d++)
        if (wf->tasks[t].after[d].lag == 0 && wf->tasks[t].after[d].task == next) pending[t]--;
  }
  free(pending);
  free(done);
  return placed;
}

static gf_status plan_order(gf_plan *plan) {
  const gf_workflow *wf = plan->wf;
  int nt = wf->ntasks;
  int placed = gf_task_issue_order(wf, plan->order);
  char *done = gf_calloc((size_t)nt, 1);
  int *seen = gf_calloc((size_t)nt, sizeof(int)); /* for a cycle */
  if (placed < 0 || !done || !seen) {
    free(done);
    free(seen);
    return gf_oom(plan->diag, "ordering the tasks");
  }
  for (int i = 0; i < placed; i++) done[plan->order[i]] = 1;
  gf_status st = GF_OK;
  if (placed < nt) {
    /* Walk predecessors from a stuck task until one repeats: that is the cycle. */
    int t = 0;
    while (done[t]) t++;
    int step = 1;
    while (!seen[t]) {
      seen[t] = step++;
      const gf_task *task = &wf->tasks[t];
      for (int d = 0; d < task->nafter; d++)
        if (task->after[d].lag == 0 && !done[task->after[d].task]) {
          t = task->after[d].task;
          break;
        }
    }
    /* t starts the cycle; list it in dependency order. */
    char path[512] = "";
    int start = t, len = 0;
    do {
      len += snprintf(path + len,
                      sizeof path - (size_t)(len < (int)sizeof path ? len : (int)sizeof path),
                      "%s -> ", wf->tasks[t].name);
      const gf_task *task = &wf->tasks[t];
      for (int d = 0; d < task->nafter; d++)
        if (task->after[d].lag == 0 && !done[task->after[d].task] && seen[task->after[d].task]) {
          t = task->after[d].task;
          break;
        }
    } while (t != start && len < (int)sizeof path - 64);
    snprintf(path + (len < (int)sizeof path ? len : (int)sizeof path - 1),
             sizeof path - (size_t)(len < (int)sizeof path ? len : (int)sizeof path - 1), "%s",
             wf->tasks[start].name);
    st = gf_diag_at(
        plan->diag, wf->tasks[start].loc, GF_INVALID,
        "dependency cycle within one step: %s (each runs after the next, with no step lag)", path);
  }
  free(seen);
  free(done);
  return st;
}

gf_status gf_plan_create(const gf_workflow *wf, gf_diag *diag, gf_plan **out) {
  *out = NULL;
  gf_plan *plan = gf_calloc(1, sizeof *plan);
  if (!plan) return gf_oom(diag, "creating the plan");
  plan->wf = wf;
  plan->schedule = wf->schedule;
  plan->diag = diag;
  plan->order = gf_calloc((size_t)wf->ntasks, sizeof(int));
  plan->sched.halo_stream = -1; /* only auto gives the ghost cells a stream */
  gf_status st = plan->order ? plan->schedule->declare_streams(wf, &plan->sched) : GF_INTERNAL;
  plan->nstreams = plan->sched.count;
  plan->stream_names = plan->sched.names;
  if (st != GF_OK) goto fail_oom;
  st = plan_order(plan);
  if (st != GF_OK) goto fail;

  int S = plan->nstreams;
  plan->tasks = gf_calloc((size_t)wf->ntasks, sizeof *plan->tasks);
  if (!plan->tasks) goto fail_oom;
  for (int t = 0; t < wf->ntasks; t++) plan->tasks[t].history_len = 1;
  /* History deep enough for the longest lag pointing at each task; events
   * after every task that another may wait on. */
  for (int t = 0; t < wf->ntasks; t++)
    for (int d = 0; d < wf->tasks[t].nafter; d++) {
      const gf_dep *dep = &wf->tasks[t].after[d];
      task_plan *target = &plan->tasks[dep->task];
      if (dep->lag + 1 > target->history_len) target->history_len = dep->lag + 1;
      if (plan->schedule->flags & GF_SCHED_EVENT_WAITS) target->records = 1;
    }
  for (int t = 0; t < wf->ntasks; t++) {
    task_plan *tp = &plan->tasks[t];
    if (plan->schedule->flags & GF_SCHED_RECORD_ALL) tp->records = 1;
    if (wf->tasks[t].kind->traits & GF_KIND_ON_HOST) tp->records = 0;
    tp->history = gf_calloc((size_t)tp->history_len, sizeof *tp->history);
    if (!tp->history) goto fail_oom;
  }

  plan->field_base = gf_calloc((size_t)wf->nfields, sizeof(int));
  if (!plan->field_base) goto fail_oom;
  for (int f = 0; f < wf->nfields; f++) {
    plan->field_base[f] = plan->nbuffers;
    plan->nbuffers += wf->fields[f].ring;
  }
  plan->streams = gf_calloc((size_t)S, sizeof *plan->streams);
  if (!plan->streams) goto fail_oom;
  for (int s = 0; s < S; s++) {
    plan->streams[s].clock = gf_calloc((size_t)S, sizeof(int64_t));
    if (!plan->streams[s].clock) goto fail_oom;
    for (int k = 0; k < EVENT_SLOTS; k++) {
      plan->streams[s].slots[k].clock = gf_calloc((size_t)S, sizeof(int64_t));
      if (!plan->streams[s].slots[k].clock) goto fail_oom;
    }
  }
  plan->host_clock = gf_calloc((size_t)S, sizeof(int64_t));
  plan->scratch_clock = gf_calloc((size_t)S, sizeof(int64_t));
  plan->events = gf_calloc((size_t)(wf->nevents ? wf->nevents : 1), sizeof *plan->events);
  if (!plan->host_clock || !plan->scratch_clock || !plan->events) goto fail_oom;
  for (int e = 0; e < wf->nevents; e++) {
    plan->events[e].clock = gf_calloc((size_t)S, sizeof(int64_t));
    if (!plan->events[e].clock) goto fail_oom;
  }
  plan->buffers = gf_calloc((size_t)plan->nbuffers, sizeof *plan->buffers);
  plan->scratch = gf_calloc((size_t)wf->nfields, sizeof *plan->scratch);
  if (!plan->buffers || !plan->scratch) goto fail_oom;
  for (int f = 0; f < wf->nfields; f++)
    if (wf->fields[f].scratch && !(plan->scratch[f].clock = gf_calloc((size_t)S, sizeof(int64_t))))
      goto fail_oom;
  gf_plan_reset(plan);
  *out = plan;
  return GF_OK;

fail_oom:
  st = gf_oom(diag, "creating the plan");
fail:
  gf_plan_free(plan);
  return st;
}

void gf_plan_reset(gf_plan *plan) {
  int S = plan->nstreams;
  plan->next_step = 0;
  plan->sched.io_next = 0;
  plan->n_records = plan->n_stream_waits = plan->n_host_waits = 0;
  for (int s = 0; s < S; s++) {
    stream_state *ss = &plan->streams[s];
    ss->seq = 0;
    ss->next_slot = 0;
    memset(ss->clock, 0, (size_t)S * sizeof(int64_t));
    for (int k = 0; k < EVENT_SLOTS; k++) {
      ss->slots[k].seq = 0;
      memset(ss->slots[k].clock, 0, (size_t)S * sizeof(int64_t));
    }
  }
  memset(plan->host_clock, 0, (size_t)S * sizeof(int64_t));
  for (int e = 0; e < plan->wf->nevents; e++) plan->events[e].seq = 0;
  for (int b = 0; b < plan->nbuffers; b++) plan->buffers[b].count = 0;
  for (int t = 0; t < plan->wf->ntasks; t++) {
    task_plan *tp = &plan->tasks[t];
    tp->active = 0;
    for (int h = 0; h < tp->history_len; h++) tp->history[h].step = -1;
  }
}

void gf_plan_free(gf_plan *plan) {
  if (!plan) return;
  for (int s = 0; s < plan->nstreams; s++) free(plan->stream_names[s]);
  free(plan->stream_names);
  if (plan->streams)
    for (int s = 0; s < plan->nstreams; s++) {
      free(plan->streams[s].clock);
      for (int k = 0; k < EVENT_SLOTS; k++) free(plan->streams[s].slots[k].clock);
    }
  free(plan->streams);
  if (plan->buffers)
    for (int b = 0; b < plan->nbuffers; b++) free(plan->buffers[b].list);
  free(plan->buffers);
  if (plan->events)
    for (int e = 0; e < plan->wf->nevents; e++) free(plan->events[e].clock);
  free(plan->events);
  if (plan->scratch)
    for (int f = 0; f < plan->wf->nfields; f++) free(plan->scratch[f].clock);
  free(plan->scratch);
  if (plan->tasks)
    for (int t = 0; t < plan->wf->ntasks; t++) free(plan->tasks[t].history);
  free(plan->tasks);
  free(plan->field_base);
  free(plan->host_clock);
  free(plan->scratch_clock);
  free(plan->order);
  free(plan->ops);
  free(plan->edges);
  free(plan);
}

int gf_plan_stream_count(const gf_plan *plan) {
  return plan->nstreams;
}
const char *gf_plan_stream_name(const gf_plan *plan, int stream) {
  return stream >= 0 && stream < plan->nstreams ? plan->stream_names[stream] : "host";
}

gf_stream_priority gf_plan_stream_priority(const gf_plan *plan, int stream) {
  return stream >= 0 && stream == plan->sched.halo_stream ? GF_STREAM_URGENT : GF_STREAM_NORMAL;
}
int gf_plan_drain_stream(const gf_plan *plan) {
  return plan->sched.drain_stream;
}
int gf_plan_event_slots(const gf_plan *plan) {
  (void)plan;
  return EVENT_SLOTS;
}
const int *gf_plan_order(const gf_plan *plan) {
  return plan->order;
}
void gf_plan_collect_edges(gf_plan *plan, int on) {
  plan->collect_edges = on;
}
const gf_edge *gf_plan_edges(const gf_plan *plan, int *count) {
  *count = plan->nedges;
  return plan->edges;
}

/* ---- planning one step ----------------------------------------------------- */

/* Is op (stream, seq) known to finish before work that starts with `clock` on `stream_here`? */
static int is_ordered(const int64_t *clock, int stream_here, int stream, int64_t seq) {
  if (stream < 0 || seq == 0) return 1; /* the host before the loop, or nothing */
  if (stream == stream_here) return 1;
  return clock[stream] >= seq;
}

/* The host waits for everything issued to `other` (hipStreamSynchronize). */
static void host_sync_stream(gf_plan *plan, int64_t *clock, int other) {
  int S = plan->nstreams;
  gf_op *op = push_op(plan, GF_OP_HOST_WAIT_STREAM);
  op->other = other;
  clock_join(plan->host_clock, plan->streams[other].clock, S);
  clock_join(clock, plan->streams[other].clock, S);
  plan->n_host_waits++;
}

/* Makes the next task on `s` (or the host, s < 0) wait for op (other, seq), with
 * the schedule's mechanism, and folds what that wait guarantees into `clock`. */
static void order_after(gf_plan *plan, int s, int64_t *clock, int other, int64_t seq) {
  int S = plan->nstreams;
  stream_state *os = &plan->streams[other];
  if (!(plan->schedule->flags & GF_SCHED_EVENT_WAITS)) {
    host_sync_stream(plan, clock, other);
    return;
  }
  /* the oldest record on `other` that covers seq */
  int best = -1;
  for (int k = 0; k < EVENT_SLOTS; k++)
    if (os->slots[k].seq >= seq && (best < 0 || os->slots[k].seq < os->slots[best].seq)) best = k;
  if (best < 0) { /* no event follows it: wait for the whole stream */
    host_sync_stream(plan, clock, other);
    return;
  }
  gf_op *op = push_op(plan, s < 0 ? GF_OP_HOST_WAIT_EVENT : GF_OP_STREAM_WAIT);
  op->stream = s;
  op->other = other;
  op->slot = best;
  clock_join(clock, os->slots[best].clock, S);
  if (s < 0) {
    clock_join(plan->host_clock, os->slots[best].clock, S);
    plan->n_host_waits++;
  } else {
    plan->n_stream_waits++;
  }
}

static gf_status report_hazard(gf_plan *plan, int t, int64_t n, int s, const gf_ref *ref, int inst,
                               gf_access mine, const access *other) {
  const gf_workflow *wf = plan->wf;
  const gf_task *task = &wf->tasks[t];
  const gf_task *peer = &wf->tasks[other->task];
  const gf_field *field = &wf->fields[ref->field];
  char where[64] = "";
  if (field->ring > 1) snprintf(where, sizeof where, " instance %d", inst);
  int64_t lag = n - other->step;
  char hint[160];
  if (lag > 0)
    snprintf(hint, sizeof hint, "add `after: [%s@n-%" PRId64 "]` to '%s', or use schedule: auto",
             peer->name, lag, task->name);
  else
    snprintf(hint, sizeof hint, "add `after: [%s]` to '%s', or use schedule: auto", peer->name,
             task->name);
  return gf_diag_at(plan->diag, task->loc, GF_INVALID,
                    "hazard: task '%s' (step %" PRId64
                    ", stream %s) %s %s%s while task '%s' "
                    "(step %" PRId64 ", stream %s) may still be %s it; %s",
                    task->name, n, gf_plan_stream_name(plan, s),
                    (mine & GF_ACCESS_WRITE) ? "writes" : "reads", field->name, where, peer->name,
                    other->step, gf_plan_stream_name(plan, other->stream),
                    other->writes ? "writing" : "reading", hint);
}

/* `wait:` (the task's stream, or the host for a host task) and `host_wait:`:
 * each wait on a recorded event orders the task after what the event
 * captured; an event never recorded is complete, as in HIP. */
static gf_status explicit_waits(gf_plan *plan, int t, int64_t n, int s, int64_t *clock) {
  const gf_workflow *wf = plan->wf;
  const gf_task *task = &wf->tasks[t];
  int S = plan->nstreams;
  for (int pass = 0; pass < 2; pass++) {
    const gf_stream_ref *refs = pass ? task->wait : task->host_wait;
    int count = pass ? task->nwait : task->nhost_wait;
    for (int i = 0; i < count; i++) {
      int e;
      gf_status st = gf_group_member(wf->event_groups, &refs[i], n, "event", plan->diag, &e);
      if (st != GF_OK) return st;
      const user_event *ev = &plan->events[e];
      if (ev->seq == 0) continue;
      int on_host = !pass || s < 0;
      gf_op *op = push_op(plan, on_host ? GF_OP_HOST_EVENT_WAIT : GF_OP_EVENT_WAIT);
      op->stream = on_host ? -1 : s;
      op->slot = e;
      clock_join(clock, ev->clock, S);
      if (on_host) {
        clock_join(plan->host_clock, ev->clock, S);
        plan->n_host_waits++;
      } else {
        plan->n_stream_waits++;
      }
      push_edge(plan, (gf_edge){ev->task, ev->step, t, n, GF_EDGE_EVENT, -1, (int)op->kind, -1});
    }
  }
  return GF_OK;
}

/* The accesses of a buffer that access (a, region) by task t conflicts with:
 * writes first, then reads in stream order. */
static int find_conflicts(const gf_plan *plan, const buffer_state *buf, gf_access a,
                          const gf_region *region, int t, int64_t n, const access **out,
                          gf_edge_kind *kinds) {
  int count = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int s = -1; s < (pass ? plan->nstreams : 0); s++)
      for (int i = 0; i < buf->count; i++) {
        const access *x = &buf->list[i];
        if (x->writes != !pass || (pass && x->stream != s)) continue;
        if (!x->writes && !(a & GF_ACCESS_WRITE)) continue; /* two reads */
        if (x->task == t && x->step == n) continue;         /* the same task reading and writing */
        if (!gf_region_overlaps(&x->region, region)) continue;
        out[count] = x;
        kinds[count++] =
            x->writes ? ((a & GF_ACCESS_WRITE) ? GF_EDGE_WAW : GF_EDGE_RAW) : GF_EDGE_WAR;
      }
  return count;
}

/* Remembers an access, dropping those it makes redundant. */
static void remember(gf_plan *plan, buffer_state *buf, access me) {
  int kept = 0;
  for (int i = 0; i < buf->count; i++) {
    const access *x = &buf->list[i];
    int covered = gf_region_contains(&me.region, &x->region);
    int redundant = covered && (me.writes || (!x->writes && x->stream == me.stream));
    if (!redundant) buf->list[kept++] = *x;
  }
  buf->count = kept;
  if (GF_GROW(buf->list, buf->cap, buf->count + 1) != GF_OK) {
    plan->out_of_memory = 1;
    return;
  }
  buf->list[buf->count++] = me;
}

/* Two accesses of one task that land on the same instance at step n, one of
 * them written: the kernel would read cells it is overwriting (a stencil
 * then computes garbage), unless its table says it is made for that. */
static gf_status check_aliasing(gf_plan *plan, int t, int64_t n, const int *inst) {
  const gf_task *task = &plan->wf->tasks[t];
  for (int b = 1; b < task->naccess; b++)
    for (int a = 0; a < b; a++) {
      const gf_access_decl *x = &task->access[a], *y = &task->access[b];
      if (x->ref.field != y->ref.field || inst[a] != inst[b]) continue;
      if (!((x->access | y->access) & GF_ACCESS_WRITE) || x->in_place || y->in_place) continue;
      if (!gf_region_overlaps(&x->region, &y->region)) continue;
      const gf_access_decl *at = (y->access & GF_ACCESS_WRITE) ? y : x;
      char written[80];
      if ((x->access & GF_ACCESS_WRITE) && (y->access & GF_ACCESS_WRITE))
        snprintf(written, sizeof written, "both are written");
      else
        snprintf(written, sizeof written, "'%s' is written", at->what);
      return gf_diag_at(
          plan->diag, at->ref.loc, GF_INVALID,
          "arguments '%s' and '%s' of task '%s' are both %s instance %d at step %" PRId64
          ", and %s; a kernel may not read and write one instance unless its "
          "table declares in-place use",
          x->what, y->what, task->name, plan->wf->fields[x->ref.field].name, inst[a], n, written);
    }
  return GF_OK;
}

static gf_status check_scratch_read(gf_plan *plan, int t, int64_t n, const gf_access_decl *decl,
                                    const buffer_state *buf);

/* An access covers `span` instances, those whose indices end at its ref's. */
static int span_of(const gf_access_decl *decl) {
  return decl->span > 1 ? decl->span : 1;
}

/* The hazard state of the j-th instance back from index `i` of an access. */
static buffer_state *access_buffer(gf_plan *plan, const gf_access_decl *decl, double i, int j) {
  int field = decl->ref.field;
  return &plan->buffers[plan->field_base[field] + ring_slot(i - j, plan->wf->fields[field].ring)];
}

static gf_status plan_task(gf_plan *plan, int t, int64_t n) {
  const gf_workflow *wf = plan->wf;
  const gf_task *task = &wf->tasks[t];
  const gf_schedule *sched = plan->schedule;
  task_plan *tp = &plan->tasks[t];
  int S = plan->nstreams;
  gf_status st = GF_OK;

  if (task->when) {
    double w = gf_expr_eval(task->when, &(gf_eval_ctx){.n = (double)n}, &st);
    if (st != GF_OK) return st;
    if (w == 0) return GF_OK;
  }
  int s = -1;
  if (!(task->kind->traits & GF_KIND_ON_HOST) &&
      (st = sched->stream_of(wf, &plan->sched, t, n, plan->diag, &s)) != GF_OK)
    return st;

  int inst[GF_MAX_TASK_REFS];
  double index[GF_MAX_TASK_REFS];
  for (int r = 0; r < task->naccess; r++) {
    const gf_ref *ref = &task->access[r].ref;
    double i = 0;
    if (ref->index) {
      i = gf_expr_eval(ref->index, &(gf_eval_ctx){.n = (double)n}, &st);
      if (st != GF_OK) return st;
      if (!(fabs(i) <= 9007199254740992.0 && i == floor(i)))
        return gf_diag_at(plan->diag, ref->loc, GF_INVALID,
                          "the index of field '%s' is %s at step %" PRId64
                          "; it must be an integer",
                          wf->fields[ref->field].name, gf_number_text(i, (char[32]){0}, 32), n);
    }
    index[r] = i;
    inst[r] = ring_slot(i, wf->fields[ref->field].ring);
  }
  if ((st = check_aliasing(plan, t, n, inst)) != GF_OK) return st;
  int64_t value = 0;
  if (task->kind->check_step &&
      (st = task->kind->check_step(wf, task, n, plan->diag, &value)) != GF_OK)
    return st;

  /* What this task's stream (or the host) already knows to be complete. */
  int64_t *clock = plan->scratch_clock;
  if (s >= 0) {
    memcpy(clock, plan->streams[s].clock, (size_t)S * sizeof(int64_t));
    clock_join(clock, plan->host_clock, S);
  } else {
    memcpy(clock, plan->host_clock, (size_t)S * sizeof(int64_t));
  }

  int explicit_events = (sched->flags & GF_SCHED_USER_STREAMS) != 0;
  if (explicit_events && (st = explicit_waits(plan, t, n, s, clock)) != GF_OK) return st;

  /* Explicit dependencies. */
  for (int d = 0; d < task->nafter; d++) {
    const gf_dep *dep = &task->after[d];
    int64_t m = n - dep->lag;
    if (m < 0) continue;
    const task_plan *pp = &plan->tasks[dep->task];
    const instance *prev = &pp->history[m % pp->history_len];
    if (prev->step != m) continue; /* it did not run at that step */
    int ordered = prev->stream < 0 || is_ordered(clock, s, prev->stream, prev->seq);
    if (!ordered) order_after(plan, s, clock, prev->stream, prev->seq);
    push_edge(plan, (gf_edge){dep->task, m, t, n, GF_EDGE_AFTER, -1,
                              ordered ? 0 : (int)plan->ops[plan->nops - 1].kind, -1});
  }

  /* Data dependencies: where the schedule infers order they become waits,
   * one a stream, on the record of the newest access needed there (it
   * covers the older ones); otherwise an unordered conflict is a hazard. */
  int64_t needed[GF_MAX_STREAMS] = {0}, before[GF_MAX_STREAMS];
  int wait_kind[GF_MAX_STREAMS] = {0};
  memcpy(before, clock, (size_t)S * sizeof(int64_t));
  int infers = (sched->flags & GF_SCHED_INFERS_ORDER) != 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int r = 0; r < task->naccess; r++)
      for (int j = 0; j < span_of(&task->access[r]); j++) {
        const gf_access_decl *decl = &task->access[r];
        buffer_state *buf = access_buffer(plan, decl, index[r], j);
        if (pass == 0 && wf->fields[decl->ref.field].scratch &&
            (st = check_scratch_read(plan, t, n, decl, buf)))
          return st;
        const access *conflicts[2 * GF_MAX_STREAMS + 2];
        gf_edge_kind kinds[2 * GF_MAX_STREAMS + 2];
        int nconf = find_conflicts(plan, buf, decl->access, &decl->region, t, n, conflicts, kinds);
        for (int c = 0; c < nconf; c++) {
          const access *x = conflicts[c];
          int ordered = is_ordered(before, s, x->stream, x->seq);
          if (pass == 0 && !ordered && !infers)
            return report_hazard(plan, t, n, s, &decl->ref,
                                 (int)(buf - plan->buffers) - plan->field_base[decl->ref.field],
                                 decl->access, x);
          if (pass == 0 && !ordered && x->seq > needed[x->stream]) needed[x->stream] = x->seq;
          if (pass == 1 && (!ordered || (infers && x->step != n)))
            push_edge(plan, (gf_edge){x->task, x->step, t, n, kinds[c], decl->ref.field,
                                      ordered ? 0 : wait_kind[x->stream], r});
        }
      }
    for (int o = 0; pass == 0 && o < S; o++)
      if (needed[o] && !is_ordered(clock, s, o, needed[o])) {
        order_after(plan, s, clock, o, needed[o]);
        wait_kind[o] = (int)plan->ops[plan->nops - 1].kind;
      }
  }

  /* The task itself. */
  gf_op *op = push_op(plan, GF_OP_TASK);
  op->task = t;
  op->stream = s;
  op->plane = value;
  memcpy(op->inst, inst, (size_t)task->naccess * sizeof(int));
  int task_op = plan->nops - 1;
  int64_t seq = 0;
  if (s >= 0) {
    stream_state *ss = &plan->streams[s];
    seq = ++ss->seq;
    clock[s] = seq;
    memcpy(ss->clock, clock, (size_t)S * sizeof(int64_t));
    if (tp->records) {
      gf_op *rec = push_op(plan, GF_OP_RECORD);
      rec->task = t;
      rec->stream = s;
      rec->slot = ss->next_slot;
      record_slot *slot = &ss->slots[ss->next_slot];
      ss->next_slot = (ss->next_slot + 1) % EVENT_SLOTS;
      slot->seq = seq;
      memcpy(slot->clock, clock, (size_t)S * sizeof(int64_t));
      plan->n_records++;
    }
    if (explicit_events && task->record.group >= 0) {
      int e;
      if ((st = gf_group_member(wf->event_groups, &task->record, n, "event", plan->diag, &e)) !=
          GF_OK)
        return st;
      gf_op *rec = push_op(plan, GF_OP_EVENT_RECORD);
      rec->task = t;
      rec->stream = s;
      rec->slot = e;
      user_event *ev = &plan->events[e];
      ev->seq = seq;
      ev->stream = s;
      ev->task = t;
      ev->step = n;
      memcpy(ev->clock, clock, (size_t)S * sizeof(int64_t));
      plan->n_records++;
    }
    /* Blocking copies, like hipMemcpy: the host waits for them. */
    if ((sched->flags & GF_SCHED_BLOCKING_COPIES) && (task->kind->traits & GF_KIND_MOVES_DATA))
      host_sync_stream(plan, clock, s);
  }

  /* Remember the accesses and the instance. */
  for (int r = 0; r < task->naccess; r++)
    for (int j = 0; j < span_of(&task->access[r]); j++) {
      const gf_access_decl *decl = &task->access[r];
      buffer_state *buf = access_buffer(plan, decl, index[r], j);
      if (s < 0 && !(decl->access & GF_ACCESS_WRITE)) continue;
      remember(plan, buf,
               (access){.stream = s,
                        .seq = seq,
                        .task = t,
                        .step = n,
                        .writes = (decl->access & GF_ACCESS_WRITE) != 0,
                        .region = decl->region});
    }
  for (int r = 0; r < task->naccess && s >= 0; r++) {
    scratch_life *life = &plan->scratch[task->access[r].ref.field];
    if (!wf->fields[task->access[r].ref.field].scratch) continue;
    if (life->first_op < 0) life->first_op = task_op, life->first_task = t;
    life->last_op = task_op;
    life->last_task = t;
    life->stream = s;
    memcpy(life->clock, plan->streams[s].clock, (size_t)S * sizeof(int64_t));
  }
  tp->history[n % tp->history_len] = (instance){.step = n, .stream = s, .seq = seq};
  tp->active++;
  return GF_OK;
}

/* A scratch field is new memory at every step: a task may read only cells
 * an earlier task of the same step wrote (the buffer holds this step's
 * accesses alone). */
static gf_status check_scratch_read(gf_plan *plan, int t, int64_t n, const gf_access_decl *decl,
                                    const buffer_state *buf) {
  /* A write the buffer could not remember: the step reports out of memory. */
  if (!(decl->access & GF_ACCESS_READ) || plan->out_of_memory) return GF_OK;
  for (int i = 0; i < buf->count; i++)
    if (buf->list[i].writes && gf_region_contains(&buf->list[i].region, &decl->region))
      return GF_OK;
  const gf_workflow *wf = plan->wf;
  return gf_diag_at(plan->diag, decl->ref.loc, GF_INVALID,
                    "task '%s' reads scratch field '%s' at step %" PRId64
                    " before any task of the step has written the cells it reads; a scratch "
                    "field is new memory at every step (write it earlier in the step, or drop "
                    "`scratch: true` to keep it between steps)",
                    wf->tasks[t].name, wf->fields[decl->ref.field].name, n);
}

/* Starts a step: scratch fields hold nothing yet. */
static void scratch_begin(gf_plan *plan) {
  for (int f = 0; f < plan->wf->nfields; f++) {
    if (!plan->wf->fields[f].scratch) continue;
    plan->buffers[plan->field_base[f]].count = 0;
    plan->scratch[f].first_op = plan->scratch[f].last_op = -1;
  }
}

/* Ends a step: each scratch field used goes back to the pool after its last
 * use, on that use's stream, so every other use must be ordered before it;
 * then its alloc and free join the step's operations. */
static gf_status scratch_end(gf_plan *plan, int64_t n) {
  const gf_workflow *wf = plan->wf;
  int extra = 0;
  for (int f = 0; f < wf->nfields; f++) {
    const scratch_life *life = &plan->scratch[f];
    if (!wf->fields[f].scratch || life->first_op < 0) continue;
    extra += 2;
    const buffer_state *buf = &plan->buffers[plan->field_base[f]];
    for (int i = 0; i < buf->count; i++) {
      const access *x = &buf->list[i];
      if (is_ordered(life->clock, life->stream, x->stream, x->seq)) continue;
      const gf_task *last = &wf->tasks[life->last_task];
      return gf_diag_at(plan->diag, last->loc, GF_INVALID,
                        "scratch field '%s' goes back to the pool after task '%s' (step %" PRId64
                        ", stream %s), while task '%s' (stream %s) may still be %s it; add "
                        "`after: [%s]` to '%s'",
                        wf->fields[f].name, last->name, n, gf_plan_stream_name(plan, life->stream),
                        wf->tasks[x->task].name, gf_plan_stream_name(plan, x->stream),
                        x->writes ? "writing" : "reading", wf->tasks[x->task].name, last->name);
    }
  }
  if (!extra) return GF_OK;
  int nops = plan->nops;
  gf_op *ops = gf_malloc((size_t)nops * sizeof *ops);
  if (!ops || GF_GROW(plan->ops, plan->ops_cap, nops + extra) != GF_OK) {
    free(ops);
    plan->out_of_memory = 1;
    return GF_OK;
  }
  memcpy(ops, plan->ops, (size_t)nops * sizeof *ops);
  plan->nops = 0;
  for (int i = 0; i < nops; i++) {
    for (int f = 0; f < wf->nfields; f++)
      if (wf->fields[f].scratch && plan->scratch[f].first_op == i) {
        gf_op *op = push_op(plan, GF_OP_ALLOC);
        op->task = plan->scratch[f].first_task;
        op->stream = ops[i].stream;
        op->other = f;
      }
    plan->ops[plan->nops++] = ops[i];
    for (int f = 0; f < wf->nfields; f++)
      if (wf->fields[f].scratch && plan->scratch[f].last_op == i) {
        gf_op *op = push_op(plan, GF_OP_FREE);
        op->task = plan->scratch[f].last_task;
        op->stream = plan->scratch[f].stream;
        op->other = f;
      }
  }
  free(ops);
  return GF_OK;
}

gf_status gf_plan_step(gf_plan *plan, int64_t n, gf_diag *diag, const gf_op **ops, int *nops) {
  plan->diag = diag;
  plan->nops = 0;
  plan->nedges = 0;
  if (n != plan->next_step)
    return gf_diag_error(diag, GF_INTERNAL, "internal: planned step %" PRId64 ", expected %" PRId64,
                         n, plan->next_step);
  scratch_begin(plan);
  for (int i = 0; i < plan->wf->ntasks; i++) {
    gf_status st = plan_task(plan, plan->order[i], n);
    if (st != GF_OK) return st;
  }
  gf_status st = plan->out_of_memory ? GF_OK : scratch_end(plan, n);
  if (st != GF_OK) return st;
  if (plan->out_of_memory) {
    plan->out_of_memory = 0;
    return gf_oom(diag, "planning a step");
  }
  plan->next_step++;
  *ops = plan->ops;
  *nops = plan->nops;
  return GF_OK;
}

/* ---- validate -------------------------------------------------------------- */

gf_status gf_plan_validate(gf_plan *plan, gf_diag *diag, FILE *out) {
  const gf_workflow *wf = plan->wf;
  gf_plan_reset(plan);
  int64_t checked = wf->steps < GF_VALIDATE_MAX_STEPS ? wf->steps : GF_VALIDATE_MAX_STEPS;
  for (int64_t n = 0; n < checked; n++) {
    const gf_op *ops = NULL;
    int nops;
    gf_status st = gf_plan_step(plan, n, diag, &ops, &nops);
    if (st != GF_OK) return st;
  }
  if (out) gf_plan_write_summary(plan, out);
  return GF_OK;
}

void gf_plan_write_summary(const gf_plan *plan, FILE *out) {
  const gf_workflow *wf = plan->wf;
  int64_t checked = plan->next_step;
  char buf[160], b2[64];
  fprintf(out, "%s: workflow '%s' is valid\n", wf->path, wf->name);
  fprintf(out, "  grid      ");
  for (int d = 0; d < wf->ndim; d++) fprintf(out, "%s%" PRId64, d ? " x " : "", wf->shape[d]);
  fprintf(out, ", spacing ");
  for (int d = 0; d < wf->ndim; d++) fprintf(out, "%s%g", d ? " x " : "", wf->spacing[d]);
  fprintf(out, ", halo %d\n", wf->halo);
  fprintf(out, "  steps     %" PRId64 ", schedule %s\n", wf->steps, wf->schedule->name);
  const gf_decomposition *dc = &wf->decomp;
  if (dc->ranks > 1) { /* the share of one rank (validate --ranks, or a rank of a run) */
    fprintf(out, "  ranks     %d as [", dc->ranks);
    for (int d = 0; d < wf->ndim; d++) fprintf(out, "%s%d", d ? ", " : "", dc->dims[d]);
    fprintf(out, "], the plan of rank %d, at [", dc->rank);
    for (int d = 0; d < wf->ndim; d++) fprintf(out, "%s%d", d ? ", " : "", dc->coords[d]);
    fprintf(out, "]; ghost cells over %s", gf_transport_names[dc->transport]);
    if (dc->transport == GF_TRANSPORT_CHANNEL)
      fprintf(out, " (protocol %s)", gf_protocol_names[dc->protocol]);
    fprintf(out, ", corners %s, overlap %s\n", dc->corners ? "on" : "off",
            dc->overlap && (wf->schedule->flags & GF_SCHED_INFERS_ORDER) ? "on" : "off");
  }
  if (checked < wf->steps)
    fprintf(out,
            "  note      planned and checked the first %" PRId64
            " steps; `run` checks the rest "
            "as it reaches them\n",
            checked);
  fprintf(out, "  streams   %d:", plan->nstreams);
  for (int s = 0; s < plan->nstreams; s++)
    fprintf(out, " %s%s", plan->stream_names[s],
            gf_plan_stream_priority(plan, s) == GF_STREAM_URGENT ? " (high priority)" : "");
  if (wf->nevents) {
    fprintf(out, "\n  events    %d:", wf->nevents);
    for (int g = 0; g < wf->nevent_groups; g++) {
      const gf_stream_group *eg = &wf->event_groups[g];
      if (eg->count == 1)
        fprintf(out, " %s", eg->name);
      else
        fprintf(out, " %s[0..%d]", eg->name, eg->count - 1);
    }
  }
  fprintf(out, "\n  params   ");
  for (int p = 0; p < wf->nparams; p++)
    fprintf(out, " %s=%.9g", wf->params[p].name, wf->params[p].value);
  if (wf->nhooks) fprintf(out, "\n  hooks    ");
  for (int h = 0; h < wf->nhooks; h++) /* pure: called ahead of time, results reused */
    fprintf(out, " %s (%s%s)", wf->hooks[h].name, wf->hooks[h].path,
            wf->hooks[h].pure ? ", pure" : "");
  fprintf(out, "\n  tasks per step, in issue order:\n");
  int name_width = 12, kind_width = 6; /* columns as wide as their longest */
  for (int t = 0; t < wf->ntasks; t++) {
    if ((int)strlen(wf->tasks[t].name) > name_width) name_width = (int)strlen(wf->tasks[t].name);
    if ((int)strlen(wf->tasks[t].kind->name) > kind_width)
      kind_width = (int)strlen(wf->tasks[t].kind->name);
  }
  for (int i = 0; i < wf->ntasks; i++) {
    const gf_task *task = &wf->tasks[plan->order[i]];
    const char *where = task->kind->traits & GF_KIND_ON_HOST
                            ? "host"
                            : plan->schedule->placement(wf, task, buf, sizeof buf);
    fprintf(out, "    %-*s %-*s %-14s on %-12s runs at %" PRId64 " of %" PRId64 " steps\n",
            name_width, task->name, kind_width, task->kind->name, task->kind->describe(wf, task),
            where, plan->tasks[plan->order[i]].active, wf->steps);
  }
  fprintf(out, "  memory per space:\n");
  for (int sp = 0; sp < GF_SPACE_COUNT; sp++) {
    double total = 0;
    for (int f = 0; f < wf->nfields; f++)
      if (wf->fields[f].space == (gf_space)sp)
        total += (double)wf->fields[f].bytes * wf->fields[f].ring;
    double staging = sp == GF_SPACE_PINNED ? (double)gf_workflow_plane_bytes(wf) * wf->staging : 0;
    if (total + staging == 0) continue;
    gf_format_bytes(total + staging, b2, sizeof b2);
    fprintf(out, "    %-8s %10s ", gf_space_name((gf_space)sp), b2);
    const char *sep = "(";
    for (int f = 0; f < wf->nfields; f++) {
      if (wf->fields[f].space != (gf_space)sp) continue;
      gf_format_bytes((double)wf->fields[f].bytes, buf, sizeof buf);
      if (wf->fields[f].ring > 1)
        fprintf(out, "%s%s %d x %s", sep, wf->fields[f].name, wf->fields[f].ring, buf);
      else
        fprintf(out, "%s%s %s%s", sep, wf->fields[f].name, buf,
                wf->fields[f].scratch ? " scratch" : "");
      sep = ", ";
    }
    if (staging > 0) {
      gf_format_bytes(staging / wf->staging, buf, sizeof buf);
      fprintf(out, "%s%d output staging buffers x %s", sep, wf->staging, buf);
    }
    fprintf(out, ")\n");
  }
  int scratch = 0;
  for (int f = 0; f < wf->nfields; f++) scratch += wf->fields[f].scratch;
  if (scratch) {
    fprintf(out, "  scratch   ");
    for (int f = 0, k = 0; f < wf->nfields; f++)
      if (wf->fields[f].scratch) fprintf(out, "%s%s", k++ ? ", " : "", wf->fields[f].name);
    fprintf(
        out,
        ": taken at the first use in each step and given back after the last, from the %s pool\n",
        gf_pool_strategy_names[wf->pool_strategy]);
    if (wf->pool_strategy == GF_POOL_NAIVE)
      fprintf(out,
              "  note      the naive pool hands a chunk freed on one stream to the next allocation "
              "at once, on any stream, while work queued on the freeing stream may still use "
              "it: a race, kept to demonstrate it; use resource-aware\n");
  }
  for (int i = 0; i < wf->nfiles; i++) {
    const gf_file *file = &wf->files[i];
    const gf_field *f = &wf->fields[file->field];
    if (file->image) {
      fprintf(out, "  image     %s: %" PRId64 " pictures of %s\n", file->name,
              plan->tasks[file->task].active, f->name);
      continue;
    }
    gf_format_bytes((double)file->plane_bytes * (double)file->planes, b2, sizeof b2);
    fprintf(out, "  output    %s: %" PRId64 " planes x", file->name, file->planes);
    for (int d = 0; d < f->ndim; d++) fprintf(out, "%s%" PRId64, d ? " x " : " ", f->shape[d]);
    int64_t planned_to =
        plan->next_step - 1 < file->last_step ? plan->next_step - 1 : file->last_step;
    int64_t written = !file->from_ring                 ? plan->tasks[file->task].active
                      : planned_to >= file->first_step ? planned_to - file->first_step + 1
                                                       : 0;
    fprintf(out, " %s = %s, %" PRId64 " planes written", gf_dtype_name(f->dtype), b2, written);
    if (file->batch > 1) { /* through a device-side ring, or straight from the field's */
      gf_format_bytes((double)f->bytes * file->batch, buf, sizeof buf);
      fprintf(out, " in batches of %d planes (%s copies)", file->batch, buf);
      if (file->batch_chosen && !file->from_ring)
        fprintf(out, " on a GPU (where the device is the host, a plane at a time)");
    }
    if (file->from_ring)
      fprintf(out, " straight from %s's ring (%d instances, grown from %d)", f->name, f->ring,
              f->declared_ring);
    if (file->dropped_after)
      fprintf(
          out,
          "\n  note      the %d `after:` edges to and from '%s' ordered its copies for a ring of "
          "%d; schedule auto orders its batches by what they read",
          file->dropped_after, wf->tasks[file->task].name, f->declared_ring);
    fprintf(out, "\n");
  }
  fprintf(out,
          "  sync      over all steps: %" PRId64 " event records, %" PRId64
          " stream waits, %" PRId64 " host waits\n",
          plan->n_records, plan->n_stream_waits, plan->n_host_waits);
  int places_itself = !(plan->schedule->flags & GF_SCHED_USER_STREAMS);
  if (places_itself)
    for (int t = 0; t < wf->ntasks; t++)
      if (wf->tasks[t].stream.group >= 0) {
        fprintf(
            out,
            "  note      schedule %s places tasks itself; the tasks' `stream:` keys are not used\n",
            wf->schedule->name);
        break;
      }
  if (places_itself)
    for (int t = 0; t < wf->ntasks; t++)
      if (wf->tasks[t].nwait || wf->tasks[t].nhost_wait || wf->tasks[t].record.group >= 0) {
        fprintf(out,
                "  note      schedule %s orders tasks itself; the tasks' `wait:`, `host_wait:` and "
                "`record:` keys are not used\n",
                wf->schedule->name);
        break;
      }
  if (!(plan->schedule->flags & GF_SCHED_BLOCKING_COPIES))
    for (int t = 0; t < wf->ntasks; t++) {
      const gf_task *task = &wf->tasks[t];
      int pageable = 0;
      for (int a = 0; a < task->naccess; a++)
        pageable |= wf->fields[task->access[a].ref.field].space == GF_SPACE_HOST;
      if ((task->kind->traits & GF_KIND_MOVES_DATA) && pageable)
        fprintf(out,
                "  note      task '%s' copies pageable host memory: on a GPU such copies are "
                "synchronous, so schedule %s cannot overlap them with compute\n",
                task->name, wf->schedule->name);
    }
}

/* ---- dag ------------------------------------------------------------------- */

static const char *edge_kind_name(gf_edge_kind kind) {
  switch (kind) {
    case GF_EDGE_AFTER:
      return "after";
    case GF_EDGE_RAW:
      return "reads after write";
    case GF_EDGE_WAR:
      return "writes after read";
    case GF_EDGE_WAW:
      return "writes after write";
    case GF_EDGE_EVENT:
      return "waits on event";
  }
  return "";
}

static const char *mechanism_name(int mechanism) {
  switch (mechanism) {
    case 0:
      return "ordered";
    case GF_OP_STREAM_WAIT:
      return "event";
    case GF_OP_HOST_WAIT_EVENT:
      return "host waits event";
    case GF_OP_HOST_WAIT_STREAM:
      return "host syncs stream";
    case GF_OP_EVENT_WAIT:
      return "stream waits";
    case GF_OP_HOST_EVENT_WAIT:
      return "host waits";
    default:
      return "";
  }
}

gf_status gf_plan_write_graph(gf_plan *plan, int64_t step, gf_graph_format format, gf_diag *diag,
                              FILE *out) {
  const gf_workflow *wf = plan->wf;
  gf_status st;
  if (step < 0) {
    /* A steady-state step: the most tasks run, and far enough in that the
     * earlier instances its `after:` lags name have run too. */
    int max_lag = 0;
    for (int t = 0; t < wf->ntasks; t++)
      for (int d = 0; d < wf->tasks[t].nafter; d++)
        if (wf->tasks[t].after[d].lag > max_lag) max_lag = wf->tasks[t].after[d].lag;
    int64_t first_best = -1, best = 0;
    int best_count = -1;
    gf_plan_reset(plan);
    for (int64_t n = 0; n < wf->steps; n++) {
      const gf_op *ops = NULL;
      int nops = 0, count = 0;
      if ((st = gf_plan_step(plan, n, diag, &ops, &nops)) != GF_OK) return st;
      for (int i = 0; i < nops; i++) count += ops[i].kind == GF_OP_TASK;
      if (count > best_count) {
        best_count = count;
        first_best = best = n;
      } else if (count == best_count && best < first_best + max_lag) {
        best = n;
      }
    }
    step = best;
  }
  if (step >= wf->steps)
    return gf_diag_error(diag, GF_USAGE, "step %" PRId64 " is past the last step (%" PRId64 ")",
                         step, wf->steps - 1);
  gf_plan_reset(plan);
  const gf_op *ops = NULL;
  int nops = 0;
  for (int64_t n = 0; n <= step; n++) {
    gf_plan_collect_edges(plan, n == step);
    if ((st = gf_plan_step(plan, n, diag, &ops, &nops)) != GF_OK) return st;
  }
  gf_plan_collect_edges(plan, 0);

  int mermaid = format == GF_GRAPH_MERMAID;
  if (mermaid)
    fprintf(out, "---\ntitle: \"%s: step n = %" PRId64 ", schedule %s\"\n---\nflowchart LR\n",
            wf->name, step, wf->schedule->name);
  else
    fprintf(out,
            "digraph \"%s\" {\n  label=\"%s: step n = %" PRId64
            ", schedule %s\";\n"
            "  rankdir=LR; node [shape=box, fontname=\"Helvetica\"]; compound=true;\n",
            wf->name, wf->name, step, wf->schedule->name);
  const char *br = mermaid ? "<br/>" : "\\n";
  /* This step's tasks, clustered by stream. */
  for (int s = -1; s < plan->nstreams; s++) {
    int any = 0;
    for (int i = 0; i < nops; i++)
      if (ops[i].kind == GF_OP_TASK && ops[i].stream == s) any = 1;
    if (!any) continue;
    const char *stream = gf_plan_stream_name(plan, s);
    if (mermaid)
      fprintf(out, "  subgraph s%d [\"stream %s\"]\n", s + 1, stream);
    else
      fprintf(out, "  subgraph \"cluster_%s\" {\n    label=\"stream %s\"; style=rounded;\n", stream,
              stream);
    for (int i = 0; i < nops; i++) {
      if (ops[i].kind != GF_OP_TASK || ops[i].stream != s) continue;
      const gf_task *task = &wf->tasks[ops[i].task];
      if (mermaid)
        fprintf(out, "    t%d_0[\"%s%s%s %s", ops[i].task, task->name, br, task->kind->name,
                task->kind->describe(wf, task));
      else
        fprintf(out, "    \"%s@n\" [label=\"%s%s%s %s", task->name, task->name, br,
                task->kind->name, task->kind->describe(wf, task));
      if (task->kind->check_step) fprintf(out, "[%" PRId64 "]", ops[i].plane);
      for (int r = 0; r < task->naccess; r++) {
        const gf_field *field = &wf->fields[task->access[r].ref.field];
        fprintf(out, "%s%s %s[", br,
                (task->access[r].access & GF_ACCESS_WRITE) ? "writes" : "reads", field->name);
        if (span_of(&task->access[r]) > 1) /* a batch: the instances up to this one */
          fprintf(out, "%d..",
                  ring_slot(ops[i].inst[r] - span_of(&task->access[r]) + 1, field->ring));
        fprintf(out, "%d]", ops[i].inst[r]);
      }
      fprintf(out, mermaid ? "\"]\n" : "\"];\n");
    }
    fprintf(out, mermaid ? "  end\n" : "  }\n");
  }
  int nedges;
  const gf_edge *edges = gf_plan_edges(plan, &nedges);
  for (int e = 0; e < nedges; e++) {
    const gf_edge *edge = &edges[e];
    const gf_task *from_task = &wf->tasks[edge->from_task], *to_task = &wf->tasks[edge->to_task];
    int64_t lag = step - edge->from_step;
    /* what the dependency is about: the field, and the cells when not all of them */
    char about[160] = "";
    if (edge->field >= 0) {
      snprintf(about, sizeof about, " %s", wf->fields[edge->field].name);
      const gf_region *region = &to_task->access[edge->access].region;
      gf_region whole = gf_region_whole(wf, edge->field);
      if (!gf_region_contains(region, &whole)) {
        size_t len = strlen(about);
        snprintf(about + len, sizeof about - len, "[");
        for (int d = 0; d < wf->fields[edge->field].ndim; d++) {
          len = strlen(about);
          snprintf(about + len, sizeof about - len, "%s%" PRId64 ":%" PRId64, d ? ", " : "",
                   region->lo[d], region->hi[d]);
        }
        len = strlen(about);
        snprintf(about + len, sizeof about - len, "]");
      }
    }
    char label[256];
    snprintf(label, sizeof label, "%s%s (%s)", edge_kind_name(edge->kind), about,
             mechanism_name(edge->mechanism));
    int declared = 0; /* an earlier step's node already drawn */
    for (int f = 0; f < e; f++)
      declared |= edges[f].from_task == edge->from_task && edges[f].from_step == edge->from_step;
    if (mermaid) {
      if (lag > 0 && !declared)
        fprintf(out,
                "  t%d_%" PRId64 "[\"%s@n-%" PRId64 "\"]\n  style t%d_%" PRId64
                " stroke-dasharray: 5 5\n",
                edge->from_task, lag, from_task->name, lag, edge->from_task, lag);
      fprintf(out, "  t%d_%" PRId64 " %s|\"%s\"| t%d_0\n", edge->from_task, lag,
              lag > 0 ? "-.->" : "-->", label, edge->to_task);
      continue;
    }
    char from[160];
    if (lag == 0)
      snprintf(from, sizeof from, "%s@n", from_task->name);
    else
      snprintf(from, sizeof from, "%s@n-%" PRId64, from_task->name, lag);
    if (lag > 0 && !declared) fprintf(out, "  \"%s\" [style=dashed];\n", from);
    fprintf(out, "  \"%s\" -> \"%s@n\" [label=\"%s\"%s];\n", from, to_task->name, label,
            edge->mechanism == GF_OP_STREAM_WAIT ? ", color=blue" : "");
  }
  if (!mermaid) fprintf(out, "}\n");
  return GF_OK;
}
