/* program.h - the time loop compiled once: typed instructions in step bodies,
 * and segments of steps that repeat them.
 *
 * The compiler drives the planner step by step and lowers each planned step
 * into instructions: launches, copies, event records and waits, host waits,
 * host calls, staging for outputs, stream-ordered alloc/free, and markers
 * around the runs of stream work that contain no host instruction (where a
 * captured graph may begin and end). A step's instructions name field
 * instances, never addresses, and leave step-dependent scalars (a per-step
 * kernel argument, an output's plane) as parameters evaluated when they are
 * issued; so steps whose instructions are the same share one body, and the
 * program is a short list of segments: `steps` steps from `first`, cycling
 * through `period` bodies. The wave2d seed is four segments of one shape
 * repeated, not 640 plans.
 *
 * Binding (at run time, once) resolves every instance to its address and
 * every kernel's argument struct; the executor then only interprets.
 */
#ifndef GF_PROGRAM_H
#define GF_PROGRAM_H

#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "error.h"
#include "eval.h"
#include "graph.h"
#include "task.h"
#include "workflow.h"

typedef enum gf_instr_kind {
  GF_I_LAUNCH,        /* stream: a kernel with its bound argument struct */
  GF_I_COPY,          /* stream: dst <- src, `bytes` */
  GF_I_RECORD,        /* stream: record event `event` (-1: the staged buffer's; with `file`,
                         the buffer of a direct file's open batch) */
  GF_I_WAIT,          /* stream: wait for event `event` */
  GF_I_HOST_WAIT,     /* host: wait for event `event` */
  GF_I_HOST_SYNC,     /* host: wait for all work issued to stream `other` */
  GF_I_HOST_CALL,     /* host: a task kind's function, in issue order */
  GF_I_STAGE,         /* host: take a free output staging buffer (waits for one); with
                         `file`, one for a direct file's open batch unless it has one */
  GF_I_WRITE,         /* host: hand the staged buffer to the writer as plane `param` of `file` */
  GF_I_ALLOC,         /* stream: temporary `temp`, `bytes` in `space`, from the run's pool */
  GF_I_FREE,          /* stream: temporary `temp` (in `space`) back to the pool */
  GF_I_CAPTURE_BEGIN, /* marker: stream work up to the matching end has no host instruction */
  GF_I_CAPTURE_END,
  GF_I_KIND_COUNT
} gf_instr_kind;

typedef enum gf_operand_kind {
  GF_OPND_INSTANCE, /* a field instance */
  GF_OPND_STAGED,   /* the staging buffer the last GF_I_STAGE took */
  GF_OPND_TEMP,     /* a temporary from GF_I_ALLOC */
  GF_OPND_BUFFER,   /* run buffer `temp` (gf_emit_buffer), from byte `offset` */
  GF_OPND_BATCH,    /* the staging buffer of file `temp`'s open batch, from byte `offset` */
} gf_operand_kind;

typedef struct gf_operand {
  gf_operand_kind kind;
  int field, inst; /* GF_OPND_INSTANCE */
  int temp;        /* GF_OPND_TEMP; GF_OPND_BUFFER: the buffer's id */
  size_t offset;   /* GF_OPND_BUFFER */
  void *bound;     /* GF_OPND_INSTANCE after binding */
} gf_operand;

/* Where a launch's argument struct holds the address of a temporary (a
 * scratch field's gf_array.data), written when the launch is issued. */
typedef struct gf_instr_temp {
  size_t offset;
  int temp;
} gf_instr_temp;

/* A scalar of a kernel's argument struct that changes with the step. */
typedef struct gf_instr_param {
  size_t offset;
  int is_int; /* int64_t, else double */
  const gf_expr *expr;
} gf_instr_param;

typedef struct gf_host_ctx gf_host_ctx; /* exec.c's, handed to host calls */
/* The run's evaluation object, for a host call that evaluates or calls a hook. */
gf_eval *gf_host_eval(gf_host_ctx *ctx);
/* For the ghost-cell exchange's host calls (task_halo.c): the run's
 * processes, the messages in flight, a buffer of the task (gf_emit_buffer),
 * and how a failure is reported (naming the task, its stream and step). */
typedef struct gf_comm gf_comm;
typedef struct gf_comm_batch gf_comm_batch;
gf_comm *gf_host_comm(gf_host_ctx *ctx);
gf_comm_batch *gf_host_batch(gf_host_ctx *ctx);
void *gf_host_buffer(gf_host_ctx *ctx, int task, int j);
gf_status gf_host_fail(gf_host_ctx *ctx, int task, int64_t n, const char *why);
typedef gf_status (*gf_host_fn)(gf_host_ctx *ctx, const gf_workflow *wf, int task, int64_t n,
                                const void *data);
/* For a host call that issues stream work itself (the exchange over a
 * channel, task_halo.c): the run's backend, and the stream of the task
 * instance whose call runs (the instruction's stream). */
typedef struct gf_backend gf_backend;
typedef struct gf_stream gf_stream;
gf_backend *gf_host_backend(gf_host_ctx *ctx);
gf_stream *gf_host_stream(gf_host_ctx *ctx, int *index);
/* A task's state for the run, made by its host calls at first use (the
 * channels of an exchange): NULL until set; `release` runs once after the
 * loop, the backend idle, in task order on every rank. */
typedef void (*gf_host_release_fn)(gf_host_ctx *ctx, int task, void *state);
void *gf_host_state(gf_host_ctx *ctx, int task);
gf_status gf_host_set_state(gf_host_ctx *ctx, int task, void *state, gf_host_release_fn release);

/* Fills a launch's argument struct from the addresses of its task's accesses
 * (in task->access order) and of its buffers (gf_emit_buffer), the cells it
 * updates (`box`; NULL: the whole interior), and lists the scalars that
 * change per step. `data` and `buffers` are NULL at load time (check()). */
typedef gf_status (*gf_bind_fn)(const gf_workflow *wf, const gf_task *task, const gf_box *box,
                                void *const *data, void *const *buffers, void *args,
                                gf_instr_param *params, int *nparams);

typedef struct gf_instr {
  gf_instr_kind kind;
  int task;             /* -1: gflow's own */
  int starts_task;      /* 1: the first instruction of a task instance (counts it) */
  int stream;           /* where it is issued; -1: the host */
  int other;            /* GF_I_HOST_SYNC: the stream waited for */
  int event;            /* GF_I_RECORD / _WAIT / _HOST_WAIT */
  gf_operand dst, src;  /* GF_I_COPY */
  size_t bytes;         /* GF_I_COPY, GF_I_ALLOC */
  gf_space space;       /* GF_I_ALLOC */
  int temp;             /* GF_I_ALLOC, GF_I_FREE */
  int file;             /* GF_I_WRITE, a direct batch's GF_I_STAGE and GF_I_RECORD: index into
                           wf->files (-1: none) */
  const gf_expr *param; /* GF_I_WRITE: the plane */
  int batch;            /* GF_I_WRITE: > 0, the staged buffer holds the planes of the task's
                           last `batch` instances (gf_program_instance), one after another */
  /* GF_I_LAUNCH: the instance of each access; the argument struct and the
   * per-step scalars once bound */
  int inst[GF_MAX_TASK_REFS];
  const gf_kernel *kernel;
  gf_bind_fn bind;
  void *args;
  gf_instr_param *params;
  int nparams;
  gf_instr_temp temps[GF_MAX_TASK_REFS]; /* the temporaries among its arrays */
  int ntemps;
  int64_t points; /* grid points the launch updates (kernel->points) */
  int has_box;    /* GF_I_LAUNCH: `box` are the cells it updates (a split call) */
  gf_box box;
  /* GF_I_HOST_CALL */
  gf_host_fn call;
  const void *call_data;
  /* When set, run once before the loop's clock starts, in body order on
   * every rank, with the call's data: set-up the call would otherwise do at
   * its first step (the channels' registration and handshake). The call
   * still works where it did not run (a task that starts later). */
  gf_host_fn prepare;
} gf_instr;

/* The instructions of one step. */
typedef struct gf_body {
  gf_instr *instrs;
  int ninstrs;
  int host_instrs; /* how many run on the host */
} gf_body;

/* Steps first .. first + steps - 1; step first + k runs body bodies[k % period]. */
typedef struct gf_segment {
  int64_t first, steps;
  int period;
  int *bodies;
  int capturable; /* 1: no body has a host instruction */
} gf_segment;

typedef struct gf_program gf_program;

/* Compiles steps [from, from + max_steps) clipped to the loop (planning them
 * in order: `from` must be where the previous compile ended, 0 at first);
 * the segments replace the previous ones, the bodies accumulate. A hazard
 * or an out-of-range index is reported at its task and returns GF_INVALID. */
gf_status gf_program_compile(gf_program *program, int64_t from, int64_t max_steps, gf_diag *diag);

gf_status gf_program_create(const gf_workflow *wf, gf_plan *plan, gf_diag *diag, gf_program **out);
void gf_program_free(gf_program *program);

gf_plan *gf_program_plan(const gf_program *program);
const gf_segment *gf_program_segments(const gf_program *program, int *count);
const gf_body *gf_program_body(const gf_program *program, int body);
int gf_program_body_count(const gf_program *program);
/* Steps compiled so far: [0, end). */
int64_t gf_program_end(const gf_program *program);
/* Flat event indices the program uses: [0, count). */
int gf_program_event_count(const gf_program *program);
/* Temporaries GF_I_ALLOC may name: [0, count): the task kinds' own
 * (gf_emit_temp), then one per scratch field. */
int gf_program_temp_count(const gf_program *program);

/* Resolves instances to addresses (`instance(user, field, inst)`) and binds
 * every launch of the bodies compiled so far (and of those compiled later,
 * as they are compiled). */
typedef void *(*gf_instance_fn)(void *user, int field, int inst);
gf_status gf_program_bind(gf_program *program, gf_instance_fn instance, void *user,
                          void *const *buffers, gf_diag *diag);

const char *gf_instr_kind_name(gf_instr_kind kind);

/* One line for `validate`: steps compiled, segments, distinct bodies and
 * their instructions, and how many segments a graph could capture. */
void gf_program_write_summary(const gf_program *program, FILE *out);

/* ---- the interface a task kind's emit uses ---- */

/* Appends an instruction (kind set, the rest zero, task and stream from the
 * instance being emitted) and returns it for the caller to fill. Out of
 * memory, it returns a scratch instruction and the compiler reports the
 * failure once the step is emitted, so an emit need not check. */
gf_instr *gf_emit(gf_emitter *e, gf_instr_kind kind);
/* Temporary `j` (< GF_MAX_TASK_TEMPS) of the task being emitted, for
 * GF_I_ALLOC / GF_I_FREE and GF_OPND_TEMP operands: a buffer of the run
 * allocated and freed in stream order, so a stream-ordered pool can serve it.
 * The same task and j name the same temporary at every step. */
#define GF_MAX_TASK_TEMPS 4
int gf_emit_temp(gf_emitter *e, int j);
/* An operand for access `a` of the task being emitted: the field instance,
 * or the step's temporary when the field is scratch. */
gf_operand gf_emit_access(gf_emitter *e, int a);
/* Buffer `j` (< GF_MAX_TASK_TEMPS) of the task being emitted: `bytes` in
 * `space`, allocated once for the run before the loop (its launches get it
 * through gf_bind_fn's `buffers`, its host calls through gf_host_buffer). */
void gf_emit_buffer(gf_emitter *e, int j, size_t bytes, gf_space space);

/* A flat event of the task being emitted, `j` < GF_MAX_TASK_EVENTS, the
 * same at every step (for ordering a task's own work across its instances
 * and streams: output.c's device-side ring). */
#define GF_MAX_TASK_EVENTS 3
int gf_emit_event(gf_emitter *e, int j);
/* The stream a batched output's copy out of its ring runs on: the plan's
 * drain stream, else the instance's own. */
int gf_emit_drain_stream(gf_emitter *e);
/* The step being emitted, and the stream of the instance (-1: the host). */
int64_t gf_emit_step(const gf_emitter *e);
int gf_emit_stream(const gf_emitter *e);
/* For a task that gathers its instances into batches (outputs): records that
 * it runs at the step being emitted and returns how many instances it had
 * before (from step 0). */
int64_t gf_emit_count_instance(gf_emitter *e);

/* The step of instance `i` of task `task` (counted by
 * gf_emit_count_instance), and how many instances were counted up to step
 * `n` inclusive (the steps compiled so far). */
int64_t gf_program_instance_step(const gf_program *program, int task, int64_t i);
int64_t gf_program_instances_through(const gf_program *program, int task, int64_t n);

/* The run buffers the program declared: bytes (0: none) and space of
 * buffer `id` = task * GF_MAX_TASK_TEMPS + j, ids in [0, gf_program_temp_count). */
size_t gf_program_buffer(const gf_program *program, int id, gf_space *space);

#endif
