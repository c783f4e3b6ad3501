/* graph.h - from a loaded workflow to a plan: which streams exist, in which order
 * a step's tasks are issued, and, step by step, the exact operations (task,
 * event record, stream wait, host wait) that make the run correct.
 *
 * The planner is pure: it talks to no backend. `gflow validate` and `gflow dag`
 * drive it over every step without executing anything; `gflow run` drives it
 * the same way and hands each step's operations to the executor. So what
 * validate checks is exactly what run does.
 *
 * Ordering is tracked with vector clocks (one entry per stream): an operation X
 * is known to finish before task T starts when X ran on T's stream, or T's clock
 * covers X's sequence number on X's stream. Every access of every task to a
 * region of a field instance is checked against the earlier accesses whose
 * regions overlap it; an unordered conflict (two accesses, one a write, on
 * different streams) is a hazard. Under `auto` the planner turns each such
 * conflict into an event wait instead, so its schedules are hazard-free by
 * construction. A scratch field lives within a step: the planner puts its
 * alloc before its first use and its free after its last, on that use's
 * stream, and refuses a read of cells no earlier task of the step wrote and
 * a last use that other uses are not ordered before. Disjoint regions of one instance (a halo strip
 * and the interior) never conflict. The schedule (schedule.h) decides the streams and the
 * mechanisms; the task kinds (task.h) declare the accesses.
 */
#ifndef GF_GRAPH_H
#define GF_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "error.h"
#include "workflow.h"

#define GF_MAX_STREAMS 64

typedef enum gf_op_kind {
  GF_OP_TASK,             /* run task `task` on `stream` */
  GF_OP_RECORD,           /* record event slot `slot` of `stream` on `stream` */
  GF_OP_STREAM_WAIT,      /* `stream` waits for event slot `slot` of `other` */
  GF_OP_HOST_WAIT_EVENT,  /* the host waits for event slot `slot` of `other` */
  GF_OP_HOST_WAIT_STREAM, /* the host waits for all work issued to `other` */
  GF_OP_EVENT_RECORD,     /* the workflow's event `slot` is recorded on `stream` */
  GF_OP_EVENT_WAIT,       /* `stream` waits for the workflow's event `slot` */
  GF_OP_HOST_EVENT_WAIT,  /* the host waits for the workflow's event `slot` */
  GF_OP_ALLOC, /* scratch field `other` from the pool, on `stream`, before its first use */
  GF_OP_FREE,  /* scratch field `other` back to the pool, on `stream`, after its last use */
} gf_op_kind;

typedef struct gf_op {
  gf_op_kind kind;
  int task;
  int stream; /* -1: the host (hook tasks) */
  int other;
  int slot;
  /* GF_OP_TASK: the ring instance of each of the task's accesses (in
   * task->access order), and the kind's per-step value (an output's plane). */
  int inst[GF_MAX_TASK_REFS];
  int64_t plane;
} gf_op;

/* Why an operation waits: for `gflow dag`. */
typedef enum gf_edge_kind {
  GF_EDGE_AFTER, /* `after:` */
  GF_EDGE_RAW,   /* reads what the other wrote */
  GF_EDGE_WAR,   /* writes what the other read */
  GF_EDGE_WAW,   /* writes what the other wrote */
  GF_EDGE_EVENT, /* `wait:`/`host_wait:` on an event the other recorded */
} gf_edge_kind;

typedef struct gf_edge {
  int from_task;
  int64_t from_step;
  int to_task;
  int64_t to_step;
  gf_edge_kind kind;
  int field;     /* for data edges */
  int mechanism; /* 0: already ordered (same stream or earlier sync), else the gf_op_kind used */
  int access;    /* data edges: the index of the waiting task's access */
} gf_edge;

typedef struct gf_plan gf_plan;

/* The order a step issues the tasks in: declaration order, each after the
 * tasks it names with a lag of 0 (`after: [x]`). Fills `order` and returns
 * how many tasks it placed (fewer than all: a cycle), -1 out of memory. */
int gf_task_issue_order(const gf_workflow *wf, int *order);

/* Builds the plan: streams for the schedule, issue order within a step (a
 * topological order of same-step `after` edges; a cycle is reported). */
gf_status gf_plan_create(const gf_workflow *wf, gf_diag *diag, gf_plan **out);
void gf_plan_free(gf_plan *plan);

int gf_plan_stream_count(const gf_plan *plan);
const char *gf_plan_stream_name(const gf_plan *plan, int stream);
/* URGENT for the stream the ghost cells travel on (schedule.h), else NORMAL. */
gf_stream_priority gf_plan_stream_priority(const gf_plan *plan, int stream);
/* The stream batched outputs copy their rings out on (schedule.h), -1: none. */
int gf_plan_drain_stream(const gf_plan *plan);
int gf_plan_event_slots(const gf_plan *plan); /* event slots per stream */
/* Tasks in the order each step issues them. */
const int *gf_plan_order(const gf_plan *plan);

/* Plans step `n` (steps must be planned in order from 0). The operations are
 * valid until the next call. The planner evaluates only expressions that
 * cannot call a hook (conditions, indices, planes), so it never runs Lua.
 * A hazard, a stream index out of range or a plane out of range is reported
 * through `diag` at the task and returns GF_INVALID. */
gf_status gf_plan_step(gf_plan *plan, int64_t n, gf_diag *diag, const gf_op **ops, int *nops);

/* Starts planning again from step 0. */
void gf_plan_reset(gf_plan *plan);

/* Edges found while planning the last step (for `gflow dag`). */
const gf_edge *gf_plan_edges(const gf_plan *plan, int *count);
/* Collect edges while planning (off by default). */
void gf_plan_collect_edges(gf_plan *plan, int on);

/* Steps `validate` (and `run`, before it starts) plan ahead: beyond this the
 * run itself checks each step as it plans it. */
#define GF_VALIDATE_MAX_STEPS 10000000

/* Plans every step (up to GF_VALIDATE_MAX_STEPS) and, with `out`, writes
 * the summary. */
gf_status gf_plan_validate(gf_plan *plan, gf_diag *diag, FILE *out);

/* `gflow validate`'s summary of the steps planned so far: grid, streams,
 * tasks and where they run, memory per space, outputs, synchronisation. */
void gf_plan_write_summary(const gf_plan *plan, FILE *out);

typedef enum gf_graph_format { GF_GRAPH_DOT, GF_GRAPH_MERMAID } gf_graph_format;

/* `gflow dag`: plan up to step `step` (-1: the first step at which most tasks
 * run) and write that step's graph, as Graphviz DOT or a Mermaid flowchart:
 * a cluster per stream, a node per task with what it reads and writes, an
 * edge per dependency labelled with its kind, field and region (when not the
 * whole field) and mechanism; tasks of earlier steps dashed. */
gf_status gf_plan_write_graph(gf_plan *plan, int64_t step, gf_graph_format format, gf_diag *diag,
                              FILE *out);

#endif
