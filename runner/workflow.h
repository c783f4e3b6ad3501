/* workflow.h - a workflow file, loaded and checked: the plain model every later
 * stage reads and none writes back to.
 *
 * gf_workflow_load() reads the YAML text, applies `--set` overrides, checks
 * every key, type, range and name against the schema and the kernel registry,
 * evaluates the parameters and compiles every expression. What it returns is
 * complete: the graph builder never needs the YAML again.
 */
#ifndef GF_WORKFLOW_H
#define GF_WORKFLOW_H

#include <stdint.h>

#include "backend.h"
#include "error.h"
#include "expr.h"
#include "gflow.h"
#include "hooks.h"

typedef struct gf_registry gf_registry;

typedef enum gf_schedule {
  GF_SCHED_SYNC,    /* one stream, blocking copies (the seed's wave2d_sync) */
  GF_SCHED_STREAMS, /* cross-stream order by host stream synchronisation */
  GF_SCHED_EVENTS,  /* cross-stream order by events waited on by streams */
  GF_SCHED_AUTO,    /* dependencies from data access; gflow picks streams */
} gf_schedule;

typedef struct gf_param_value {
  char *name;
  double value;
  char *text; /* the expression as written, or NULL for a plain number */
  gf_loc loc;
} gf_param_value;

typedef enum gf_init_kind { GF_INIT_CONST, GF_INIT_EXPR, GF_INIT_HOOK } gf_init_kind;

/* Slots of gf_eval_ctx.vars while an initial value is evaluated. */
enum { GF_VAR_I0, GF_VAR_I1, GF_VAR_I2, GF_VAR_X0, GF_VAR_X1, GF_VAR_X2, GF_VAR_COUNT };

typedef struct gf_field {
  char *name;
  gf_dtype dtype;
  int ndim;
  int64_t shape[GF_MAX_DIMS]; /* trailing dims 1 */
  int64_t elems;              /* product of shape */
  size_t bytes;               /* one instance */
  int ring;                   /* instances, >= 1; U[n+2] picks (n+2) mod ring */
  gf_space space;
  int prefetch;    /* managed: prefetch to the device before the loop */
  int read_mostly; /* managed: advise read-mostly */
  gf_init_kind init_kind;
  double init_value;  /* GF_INIT_CONST */
  gf_expr *init_expr; /* GF_INIT_EXPR: of i0..i2, x0..x2 and parameters */
  int init_hook;      /* GF_INIT_HOOK: index into hooks, called (x0,x1,x2,i0,i1,i2) */
  gf_loc loc;
} gf_field;

typedef struct gf_hook {
  char *name;     /* how expressions call it */
  char *path;     /* the Lua file, resolved against the workflow's folder */
  char *function; /* the global function in that file */
  int lua_id;     /* from gf_lua_find */
  gf_loc loc;
} gf_hook;

/* `io: 5` declares io[0..4]; `compute: 1` declares compute (also compute[0]). */
typedef struct gf_stream_group {
  char *name;
  int count;
  int first; /* index of its first stream among all streams */
  gf_loc loc;
} gf_stream_group;

/* A field instance reference, `U[n+2]` or `V`. */
typedef struct gf_ref {
  int field;      /* index into fields */
  gf_expr *index; /* NULL: instance 0 */
  gf_loc loc;
} gf_ref;

/* A stream or event reference, `compute`, `io[n % 5]`, `done[(n + 2) % 5]`:
 * a group and the index of one of its members. */
typedef struct gf_stream_ref {
  int group;
  gf_expr *index; /* NULL: stream 0 of the group */
  gf_loc loc;
} gf_stream_ref;

/* One kernel argument, resolved against the kernel's parameter table. */
typedef struct gf_arg {
  const gf_param *param;
  gf_ref ref;                 /* GF_PARAM_ARRAY */
  gf_expr *value;             /* GF_PARAM_REAL, GF_PARAM_INT (default compiled as a constant) */
  int64_t index[GF_MAX_DIMS]; /* GF_PARAM_INDEX */
  gf_loc loc;
} gf_arg;

/* `after: [step@n-2]`: this task at step n follows `task` at step n - lag. */
typedef struct gf_dep {
  int task;
  int lag; /* >= 0; 0 only for a task listed earlier */
  gf_loc loc;
} gf_dep;

typedef enum gf_task_kind {
  GF_TASK_KERNEL,
  GF_TASK_COPY,
  GF_TASK_HOOK,
  GF_TASK_OUTPUT
} gf_task_kind;

typedef struct gf_task {
  char *name;
  gf_task_kind kind;
  gf_loc loc;
  gf_expr *when;        /* NULL: every step */
  gf_stream_ref stream; /* group -1: not given (sync and auto do not need one) */
  gf_dep *after;
  int nafter;

  /* Explicit events (schedules streams and events): the task's stream waits
   * for `wait` before it runs, the host waits for `host_wait` before issuing
   * it, and `record` is recorded on its stream after it. group -1: none. */
  gf_stream_ref *wait;
  int nwait;
  gf_stream_ref *host_wait;
  int nhost_wait;
  gf_stream_ref record;

  /* GF_TASK_KERNEL */
  const gf_kernel *kernel;
  gf_arg *args; /* one per kernel parameter, in table order */
  int nargs;

  /* GF_TASK_COPY: from -> to (same dtype and element count); GF_TASK_OUTPUT: from */
  gf_ref from, to;

  /* GF_TASK_HOOK: calls hook(n) on the host in issue order */
  int hook;

  /* GF_TASK_OUTPUT: plane `plane` of a stack of `planes` planes in `file` */
  char *file;     /* relative to the output folder */
  gf_expr *plane; /* default: n */
  int64_t planes;
} gf_task;

/* `check:`, the numerical guard: after every `every`-th step the time loop
 * waits for the backend, copies each instance of each checked field to the
 * host and stops the run at the first value that is not finite (`finite`) or
 * exceeds `max_abs` in magnitude. */
typedef struct gf_check {
  int64_t every; /* 0: no check block */
  int *fields;   /* indices into fields; all of them unless `fields:` says */
  int nfields;
  int finite;     /* 1: NaN and Inf fail */
  double max_abs; /* |x| > max_abs fails; INFINITY: no bound */
  gf_loc loc;
} gf_check;

typedef struct gf_workflow {
  char *path;   /* as given on the command line */
  char *dir;    /* folder of path, for hook files */
  char *source; /* the file's text */
  char *name;

  int ndim;
  int64_t shape[GF_MAX_DIMS];
  double spacing[GF_MAX_DIMS];
  int halo;

  gf_param_value *params;
  int nparams;

  gf_field *fields;
  int nfields;

  gf_hook *hooks;
  int nhooks;

  gf_stream_group *groups;
  int ngroups;
  int nstreams; /* all streams of all groups */

  gf_stream_group *event_groups; /* `events: {done: 5}` declares done[0..4] */
  int nevent_groups;
  int nevents;

  gf_task *tasks;
  int ntasks;

  int64_t steps;
  gf_schedule schedule;
  gf_space default_space;
  int staging; /* output staging buffers */

  gf_lua_limits lua_limits; /* `limits:` as applied (0: the hooks' default) */
  gf_check check;           /* `check:`; check.every == 0 when absent */

  gf_lua *lua; /* owns the hooks' Lua state */
} gf_workflow;

typedef struct gf_override {
  const char *key;   /* dotted path: grid.shape, loop.tasks.0.stream, schedule */
  const char *value; /* YAML flow text: [512,512], events, 0.5 */
} gf_override;

/* Limits on what the loader accepts, before and while it parses. */
#define GF_MAX_DOCUMENT_BYTES ((size_t)16 << 20) /* the file's size */
#define GF_MAX_YAML_NODES 100000                 /* scalars, sequences and mappings */

/* Loads, overrides, checks. On failure reports through `diag` and returns
 * GF_INVALID (bad content) or GF_NOINPUT (unreadable file). The non-zero
 * members of `lua_limits` (may be NULL) win over the file's `limits:`, so a
 * caller such as a fuzzer can cap what any file asks for; the gflow command
 * passes NULL and turns --lua-memory / --lua-instructions into overrides. */
gf_status gf_workflow_load(const char *path, const gf_override *overrides, int noverrides,
                           const gf_registry *registry, const gf_lua_limits *lua_limits,
                           gf_diag *diag, gf_workflow **out);

/* Same, from text already in memory (tests, fuzzing). `path` names it. */
gf_status gf_workflow_load_text(const char *path, const char *text, size_t len,
                                const gf_override *overrides, int noverrides,
                                const gf_registry *registry, const gf_lua_limits *lua_limits,
                                gf_diag *diag, gf_workflow **out);

void gf_workflow_free(gf_workflow *wf);

/* Name of a stream by flat index: "compute", "io[3]". Returns buf. */
const char *gf_workflow_stream_name(const gf_workflow *wf, int stream, char *buf, size_t size);

const char *gf_schedule_name(gf_schedule schedule);
const char *gf_task_kind_name(gf_task_kind kind);
const char *gf_dtype_name(gf_dtype dtype);

/* The resolved workflow as YAML text (after overrides, parameters evaluated),
 * for the metadata sidecar. Caller frees. */
char *gf_workflow_resolved_yaml(const gf_workflow *wf);

#endif
