/* schedule.h - how a schedule orders work: one policy table per schedule.
 *
 * The planner asks the workflow's schedule which streams exist, which stream
 * a task instance runs on, and how one stream (or the host) waits for work on
 * another; the flags say what else the schedule does. Adding a schedule is
 * one table in schedule.c and one line in gf_schedules.
 */
#ifndef GF_SCHEDULE_H
#define GF_SCHEDULE_H

#include <stdint.h>

#include "error.h"
#include "workflow.h"

enum {
  /* Tasks name their streams (`stream:` is required) and explicit events
   * (`wait`, `host_wait`, `record`) are honoured. */
  GF_SCHED_USER_STREAMS = 1,
  /* A conflicting access that nothing orders becomes a wait, not a hazard. */
  GF_SCHED_INFERS_ORDER = 2,
  /* The host waits for each copy (hipMemcpy). */
  GF_SCHED_BLOCKING_COPIES = 4,
  /* Cross-stream order by events the waiting stream waits on (else the host
   * synchronises the producer's stream). */
  GF_SCHED_EVENT_WAITS = 8,
  /* An event is recorded after every stream task (else only after the tasks
   * another task names in `after:`). */
  GF_SCHED_RECORD_ALL = 16,
  /* The executor captures the runs of stream work between host instructions
   * into graphs and replays them (on a backend with graphs, exec.c). */
  GF_SCHED_GRAPHS = 32,
};

/* The streams a schedule declares, and its per-plan state. */
typedef struct gf_sched_streams {
  char **names;
  int count;
  int io_streams;  /* auto: IO streams after the compute stream */
  int64_t io_next; /* auto: round robin over them */
  int halo_stream; /* auto: the stream of the ghost-cell tasks (task_halo.c), -1: none;
                      it runs at high priority (gf_plan_stream_priority) */
  /* Where a batched output's device-side ring is copied out (task_output.c),
   * so that the copy out runs beside the copies into the ring; -1: on the
   * output's own stream (sync, or no batched output). */
  int drain_stream;
} gf_sched_streams;

struct gf_schedule {
  const char *name;
  const char *summary; /* one line for messages and documentation */
  unsigned flags;
  /* Appends the streams of this schedule for `wf` (names are heap strings);
   * GF_INTERNAL, unreported, when out of memory. */
  gf_status (*declare_streams)(const gf_workflow *wf, gf_sched_streams *streams);
  /* The stream task t runs on at step n; GF_INVALID with a message when a
   * stream index is out of range. Not called for host tasks. */
  gf_status (*stream_of)(const gf_workflow *wf, gf_sched_streams *streams, int t, int64_t n,
                         gf_diag *diag, int *stream);
  /* How `validate` shows where a task runs: "main", "io[*]", the task's key. */
  const char *(*placement)(const gf_workflow *wf, const gf_task *task, char *buf, size_t size);
};

extern const gf_schedule *const gf_schedules[];
extern const int gf_schedule_count;

/* The schedule named `name`, or NULL. */
const gf_schedule *gf_schedule_find(const char *name);

/* Member `ref` of `groups` at step n (flat index); an index that is not an
 * integer in range is reported at the reference, naming `kind`. */
gf_status gf_group_member(const gf_stream_group *groups, const gf_stream_ref *ref, int64_t n,
                          const char *kind, gf_diag *diag, int *out);

#endif
