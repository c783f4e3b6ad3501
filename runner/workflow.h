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

#include "error.h"
#include "expr.h"
#include "gflow.h"
#include "hooks.h"
#include "space.h"
#include "task.h"

typedef struct gf_registry gf_registry;
typedef struct gf_schedule gf_schedule;     /* schedule.h */
typedef struct gf_eval gf_eval;             /* eval.h */
typedef struct gf_image_spec gf_image_spec; /* image.h */

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
  /* The array this process holds: the field's shape, or, for a grid-shaped
   * field of a decomposed run, this rank's block (gf_decompose: decomposed
   * 1, its cell 0 is the grid's cell wf->decomp.origin). Trailing dims 1. */
  int64_t shape[GF_MAX_DIMS];
  int decomposed;
  int64_t elems;     /* product of shape */
  size_t bytes;      /* one instance */
  int ring;          /* instances, >= 1; U[n+2] picks (n+2) mod ring */
  int declared_ring; /* the `ring:` the file gave, where gflow grew the ring for an output
                        that reads its batches from it (gf_output_read_rings); else 0 */
  gf_space space;
  int prefetch;    /* managed: prefetch to the device before the loop */
  int read_mostly; /* managed: advise read-mostly */
  int scratch;     /* 1: a temporary, allocated from the pool for each step that uses it */
  gf_init_kind init_kind;
  double init_value;  /* GF_INIT_CONST */
  gf_expr *init_expr; /* GF_INIT_EXPR: of i0..i2, x0..x2 and parameters */
  int init_hook;      /* GF_INIT_HOOK: index into hooks, called (x0,x1,x2,i0,i1,i2) */
  gf_loc loc;
} gf_field;

typedef struct gf_hook {
  char *name;          /* how expressions call it */
  char *path;          /* the Lua file, resolved against the workflow's folder */
  char *function;      /* the global function in that file */
  int pure;            /* `pure: true`: a function of its arguments only, so gflow may call
                          it ahead of time and reuse results (eval.c's tables) */
  int unary_step_call; /* a per-step expression calls it with one argument */
  gf_loc loc;
} gf_hook;

/* `io: 5` declares io[0..4]; `compute: 1` declares compute (also compute[0]). */
typedef struct gf_stream_group {
  char *name;
  int count;
  int first; /* index of its first stream among all streams */
  gf_loc loc;
} gf_stream_group;

/* A file an output-like task writes: a stack of `planes` planes of one
 * field instance each, written through the output staging buffers; or, for
 * an image task (`image` not NULL), a PNG picture per step it runs, named by
 * the pattern `name`, each through a staging buffer of `plane_bytes` (the
 * whole instance) and counted as one plane. */
typedef struct gf_file {
  char *name; /* relative to the output folder */
  int task;
  int field;
  int64_t planes;
  size_t plane_bytes;
  int format;                 /* `format:`, an index into gf_out_formats (output_format.h); 0 raw */
  const gf_image_spec *image; /* the image task's, or NULL */
  /* Planes per staging buffer (an output's `batch:`, else chosen at load
   * from the staging budget; 1: one copy per plane, as an image's): with
   * k > 1 each plane goes to a device-side ring of k planes and every k-th
   * output moves the ring to a staging buffer in one copy, or, `direct`,
   * each plane goes straight to its place in a staging buffer. */
  int batch;
  int batch_chosen; /* 1: `batch` is the loader's choice, not the output's `batch:` */
  int direct;       /* 1: batches are staged plane by plane (gf_workflow_stage_on_host) */
  /* 1: the batches are copied out of the source field's own ring, which
   * holds them one after another (gf_output_read_rings): the output's task
   * runs once a batch, at `batch_end` steps, and no plane is copied on the
   * device. Its planes are those of steps first_step .. last_step, plane
   * n's source the field's index n + index_offset. */
  int from_ring;
  int64_t first_step, last_step, index_offset;
  int dropped_after;    /* from_ring: the `after:` edges to and from its task, left to auto */
  const gf_expr *plane; /* the output task's plane expression (of n); NULL: an image's */
} gf_file;

/* Steps between two runs of the default check (no `check:` block): a scan of
 * every instance of every field a task writes costs about one step's memory
 * traffic, so 1/GF_CHECK_DEFAULT_EVERY of the run. */
#define GF_CHECK_DEFAULT_EVERY 128

/* `check:`, the numerical guard: after every `every`-th step (and after the
 * last) the time loop has the backend scan each instance of each checked
 * field (backend.h, scan_finite) and stops the run at the first value that
 * is not finite (`finite`) or exceeds `max_abs` in magnitude. A `check:`
 * block waits for its scan at the step it checks, so the run stops right
 * there; the default check (no block) reads its result some steps later,
 * when the streams are past it anyway, and so never holds them up.
 * `check: off` or `every: 0` turns it off. */
typedef struct gf_check {
  int64_t every; /* 0: off */
  int *fields;   /* indices into fields; all of them unless `fields:` says */
  int nfields;
  int finite;     /* 1: NaN and Inf fail */
  double max_abs; /* |x| > max_abs fails; INFINITY: no bound */
  int lagged;     /* 1: the default check, read late (no `check:` block) */
  gf_loc loc;
} gf_check;

/* `grid.boundary`: what the halo cells at the grid's edges hold. */
typedef enum gf_boundary_kind {
  GF_BOUNDARY_NONE,     /* never written: they keep their initial values (a rigid wall) */
  GF_BOUNDARY_COPY,     /* each takes the nearest interior value (the GhostExchange seed's) */
  GF_BOUNDARY_PERIODIC, /* the grid wraps around: they hold the far side's interior */
  GF_BOUNDARY_FIXED,    /* each is set to `value` */
} gf_boundary_kind;

typedef struct gf_boundary {
  gf_boundary_kind kind;
  double value; /* GF_BOUNDARY_FIXED */
  gf_loc loc;
} gf_boundary;

/* `exchange.transport`: how ghost cells travel between ranks. */
typedef enum gf_transport {
  GF_TRANSPORT_MPI,     /* MPI messages from host (or GPU-aware) buffers */
  GF_TRANSPORT_CHANNEL, /* a channel of the backend (backend.h): ranks on one node */
} gf_transport;
extern const char *const gf_transport_names[2];

/* `exchange.protocol`: how strips travel through a channel (task_halo.c). */
typedef enum gf_protocol {
  GF_PROTOCOL_AUTO,    /* packets for small strips, else signals */
  GF_PROTOCOL_PACKETS, /* data beside flags, taken straight out: one kernel a side */
  GF_PROTOCOL_SIGNALS, /* a put with signal into the inbox, a wait, the inbox copied out */
} gf_protocol;
extern const char *const gf_protocol_names[3];

/* How the grid is split over the processes of an MPI run (decompose.h), and
 * how their ghost cells are exchanged. Loaded from `decomposition:` and
 * `exchange:`; the block this process holds is filled in by gf_decompose. */
typedef struct gf_decomposition {
  int dims[GF_MAX_DIMS]; /* ranks along each axis; all 0: auto */
  gf_loc loc;
  int gpu_aware; /* MPI sends from GPU memory: exchange buffers live there */
  int corners;   /* exchange.corners: the corner (diagonal) ghost cells too */
  int overlap;   /* exchange.overlap: interior work runs while ghost cells travel */
  int transport; /* exchange.transport: GF_TRANSPORT_MPI or _CHANNEL (task_halo.c) */
  gf_loc transport_loc;
  int protocol; /* exchange.protocol: a gf_protocol, for transport channel */
  gf_loc protocol_loc;
  gf_loc exchange_loc;
  /* gf_decompose: this process's block. The grid's interior (cells at
   * least `halo` from its edges) is split along each axis as the seed
   * splits it; a block is the cells it owns plus `halo` cells on each side,
   * ghost cells from a neighbour or the grid's own halo at its edges. */
  int ranks, rank;
  int coords[GF_MAX_DIMS];
  int64_t origin[GF_MAX_DIMS];   /* the grid cell of the block's cell 0 */
  int64_t shape[GF_MAX_DIMS];    /* the block: owned cells plus a halo on each side */
  int neighbour[GF_MAX_DIMS][2]; /* the rank across each side, -1: the grid's edge */
  int64_t write_lo[GF_MAX_DIMS]; /* the cells of the block this rank writes to */
  int64_t write_hi[GF_MAX_DIMS]; /* outputs: owned, and the grid's halo at its edges */
} gf_decomposition;

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

  gf_file *files; /* declared by the tasks that write files */
  int nfiles;

  int64_t steps;
  const gf_schedule *schedule;
  gf_space default_space;
  int staging;                    /* output staging buffers, each of gf_workflow_plane_bytes */
  int64_t staging_budget;         /* memory.staging: bytes of pinned staging at most */
  gf_pool_strategy pool_strategy; /* memory.pool.strategy: where scratch fields come from */
  size_t pool_release_threshold;  /* memory.pool.release_threshold; SIZE_MAX: keep all */

  gf_boundary boundary;     /* grid.boundary */
  gf_decomposition decomp;  /* decomposition:, exchange: and this process's block */
  gf_lua_limits lua_limits; /* `limits:` as applied (0: the hooks' default) */
  gf_check check;           /* `check:`, or the default check; every == 0: off */
  int64_t checkpoint_every; /* `checkpoint: {every: K}`: a checkpoint every K steps; 0: none */
} gf_workflow;

typedef struct gf_override {
  const char *key;   /* dotted path: grid.shape, loop.tasks.0.stream, schedule */
  const char *value; /* YAML flow text: [512,512], events, 0.5 */
} gf_override;

/* Limits on what the loader accepts, before and while it parses. */
#define GF_MAX_DOCUMENT_BYTES ((size_t)16 << 20) /* the file's size */
#define GF_MAX_YAML_NODES 100000                 /* scalars, sequences and mappings */

/* Loads, overrides, checks. On failure reports through `diag` and returns
 * GF_INVALID (bad content) or GF_NOINPUT (unreadable file). The hooks are
 * loaded into a Lua state to check them; with `eval` not NULL that state
 * comes back as the run's evaluation object (eval.h), else it is closed. The non-zero
 * members of `lua_limits` (may be NULL) win over the file's `limits:`, so a
 * caller such as a fuzzer can cap what any file asks for; the gflow command
 * passes NULL and turns --lua-memory / --lua-instructions into overrides. */
gf_status gf_workflow_load(const char *path, const gf_override *overrides, int noverrides,
                           const gf_registry *registry, const gf_lua_limits *lua_limits,
                           gf_diag *diag, gf_workflow **out, gf_eval **eval);

/* Same, from text already in memory (tests, fuzzing). `path` names it. */
gf_status gf_workflow_load_text(const char *path, const char *text, size_t len,
                                const gf_override *overrides, int noverrides,
                                const gf_registry *registry, const gf_lua_limits *lua_limits,
                                gf_diag *diag, gf_workflow **out, gf_eval **eval);

/* Sets `diag` up for messages about a loaded workflow: its file, and each
 * `--set` for the locations that point into one. `wf` must outlive the diag's use. */
void gf_workflow_diag_init(gf_diag *diag, const gf_workflow *wf);

/* Frees what `task` owns (a task being built, or one taken out of a
 * workflow) and zeroes it. */
void gf_task_release(gf_task *task);

void gf_workflow_free(gf_workflow *wf);

/* What to do with the kernel calls the loader judged unstable: refuse the
 * first (an error at the call, GF_INVALID; `run`), or write a `note:` line
 * for each and return GF_OK (`validate`; `run --allow-unstable`). */
typedef enum gf_unstable_policy {
  GF_UNSTABLE_REFUSE,
  GF_UNSTABLE_NOTE,
  GF_UNSTABLE_ALLOW
} gf_unstable_policy;
gf_status gf_workflow_check_stable(const gf_workflow *wf, gf_unstable_policy policy, gf_diag *diag);

/* Name of a stream by flat index: "compute", "io[3]". Returns buf. */
const char *gf_workflow_stream_name(const gf_workflow *wf, int stream, char *buf, size_t size);

const char *gf_dtype_name(gf_dtype dtype);

/* The cell of a field at C-order offset i. */
void gf_field_cell(const gf_field *field, int64_t i, int64_t index[GF_MAX_DIMS]);

/* Bytes of one output staging buffer: the largest batch (gf_file.batch
 * planes of the instance a file takes a plane from, as this process holds
 * it) of any file (0: none). */
size_t gf_workflow_plane_bytes(const gf_workflow *wf);

/* For a backend whose device memory is host memory (the CPU's), where a
 * batch saves no transfer and a device-side ring's copy out only doubles
 * the copying, before the program is compiled: a file whose batch the
 * loader chose (no `batch:`) and that does not read its batches from its
 * field's ring writes a plane at a time (a batch there held each plane
 * back until its last: on 16 cores the seed's batches of 16 took 1.24x the
 * time of a copy per plane), the staging buffers counted again; every other
 * batch not read from its field's ring (from_ring, which copies nothing
 * more) is staged directly (gf_file.direct), each plane copied once, into
 * its place in a staging buffer of the batch. 1 when a file changed. */
int gf_workflow_stage_on_host(gf_workflow *wf);

/* The first task that only the CPU backend can run: a kernel task whose kernel
 * has no GPU implementation (launch_gpu NULL), with that kernel in *kernel
 * (may be NULL). NULL when every task can run on the GPU backend; copies,
 * outputs and hooks always can. `--backend auto` asks it to choose. */
const gf_task *gf_workflow_cpu_only_task(const gf_workflow *wf, const gf_kernel **kernel);

/* The resolved workflow as YAML text (after overrides, parameters evaluated),
 * for the metadata sidecar. Caller frees; NULL when out of memory. */
char *gf_workflow_resolved_yaml(const gf_workflow *wf);

#endif
