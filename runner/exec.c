/* exec.c - the time loop: an interpreter over the compiled program.
 *
 * It allocates through memory.c, binds the program to the allocations, and
 * then, step by step, issues each instruction of the step's body to the
 * backend. It knows instructions, not task kinds: a host call is a function
 * a kind supplied, a launch a kernel with its bound argument struct, and
 * expressions that change per step are evaluated by the run's gf_eval.
 */
#include "exec.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "durations.h"
#include "memory.h"
#include "output.h"
#include "progress.h"
#include "runinfo.h"
#include "schedule.h"
#include "task_output.h"
#include "text.h"
#include "trace.h"

/* The host may issue at most 2 x FENCE_STEPS steps ahead of the streams: at
 * every FENCE_STEPS-th step it records a fence on every stream and waits for
 * the fences of 2 x FENCE_STEPS steps back. Enough lead to keep a device
 * busy; little enough that a stop (a signal, the check) drains in moments
 * rather than after the hundreds of steps the stream queues would hold. */
#define FENCE_STEPS 16
/* Under graph replay on a GPU a fence ends a graph: a longer stretch between
 * fences makes fewer, longer graphs (each launch costs the device a few us),
 * and the lead is still a few launches (replay_prepare). */
#define FENCE_STEPS_REPLAY 128

struct gf_host_ctx {
  gf_eval *eval;
  gf_comm *comm;
  gf_comm_batch *batch; /* the ghost-cell messages in flight */
  void **buffers;       /* the program's run buffers, by id */
  struct run *run;
  int stream; /* the stream of the host call being issued */
  void **state;
  gf_host_release_fn *release; /* per task: gf_host_set_state */
};

gf_eval *gf_host_eval(gf_host_ctx *ctx) {
  return ctx->eval;
}
gf_comm *gf_host_comm(gf_host_ctx *ctx) {
  return ctx->comm;
}
gf_comm_batch *gf_host_batch(gf_host_ctx *ctx) {
  return ctx->batch;
}
void *gf_host_buffer(gf_host_ctx *ctx, int task, int j) {
  return ctx->buffers[task * GF_MAX_TASK_TEMPS + j];
}

/* A host call's state (gf_host_state): the arrays are made at the first set. */
void *gf_host_state(gf_host_ctx *ctx, int task) {
  return ctx->state ? ctx->state[task] : NULL;
}

static void host_states_release(gf_host_ctx *ctx, int ntasks) {
  for (int t = 0; ctx->state && t < ntasks; t++)
    if (ctx->state[t] && ctx->release[t]) ctx->release[t](ctx, t, ctx->state[t]);
  free(ctx->state);
  free(ctx->release);
  ctx->state = NULL;
  ctx->release = NULL;
}

/* schedule: graph. The capturable instructions (between the program's
 * capture markers) are not issued as the loop meets them: they wait in
 * `pending` until something else must happen (a host instruction, the
 * fence, the check, a checkpoint, the end), and then the run of them is
 * launched as one graph. A run is known by what its instructions do: kind,
 * stream, event, addresses and bytes, kernel and the bytes of its argument
 * struct with this step's scalars. The graph of the same run is launched
 * again as it is; a run of the same shape (the same instructions, other
 * scalars or addresses) is captured again and updates that graph in place;
 * a new shape is captured and instantiated (at most REPLAY_CACHE graphs are
 * kept, the least recently used goes). */
#define REPLAY_CACHE 64
#define REPLAY_MAX_INSTRS 4096
/* Fewer launches between two host instructions than this, everywhere in a
 * loop: its steps are issued as under events (replay_prepare_graphs). */
#define REPLAY_MIN_LAUNCHES 4
#define GF_STR_(x) #x
#define GF_STR(x) GF_STR_(x)

typedef struct replay_graph {
  gf_graph *graph;
  unsigned char *key; /* the run's instructions (replay_defer) */
  size_t key_len;
  uint64_t hash;
  int64_t used; /* the launch count when last launched */
} replay_graph;

typedef struct replay {
  int on;
  const char *off_why; /* the schedule is graph but replay is off: why */
  struct {
    const gf_instr *in;
    int64_t n;
    size_t args; /* where its argument struct lies in `key` */
  } * pending;
  int npending, pending_cap;
  unsigned char *key;
  size_t key_len, key_cap;
  replay_graph cache[REPLAY_CACHE];
  gf_event *fork, *done; /* the capture's first record; recorded after each launch */
  gf_event **join;       /* [stream]: its part of a capture, joined back at the end */
  gf_event **catch_up;   /* [stream]: its own work, waited for before a launch */
  char *dirty;           /* [stream]: work issued since the last launch waited for it */
  char *joined;          /* [stream]: part of the capture or launch at hand */
  char *recorded_here;   /* [event]: recorded in the capture at hand */
  char *in_graph;        /* [event]: last recorded in a launched graph */
  char *eager_recorded;  /* [event]: recorded outside a graph at least once */
  int64_t launches, captures, instantiations, updates;
  int64_t prepared;  /* graphs captured and instantiated before the loop (replay_prepare_graphs) */
  double prepared_s; /* the time that took */
} replay;

/* A staging buffer taken from the writer (gf_writer_acquire), until it is
 * handed back with its planes. */
typedef struct staged_buffer {
  int slot; /* -1: none taken */
  void *buffer;
  gf_event *ready;
} staged_buffer;

typedef struct run {
  const gf_workflow *wf;
  gf_plan *plan;
  gf_program *program;
  gf_backend *b;
  gf_diag *diag;
  gf_eval *eval;
  gf_host_ctx host;
  gf_memory *memory;
  gf_stream **streams;
  gf_event **events; /* the program's flat event table */
  int nstreams, nevents;
  gf_writer *writer;
  void **temps;           /* the program's temporaries (GF_I_ALLOC) */
  void **temps_last;      /* each one's memory last time: the pool's hint */
  staged_buffer staged;   /* what the last GF_I_STAGE took, for a plane or a batch */
  staged_buffer *batches; /* [file]: a direct file's open batch (gf_file.direct) */
  int64_t *count;         /* instances run, per task */
  gf_task_timing *timing; /* busy time per task, summed by the backend's sink */
  int64_t *host_busy_ns;  /* per task: host calls of tasks that communicate (MPI) */
  void **buffers;         /* the program's run buffers (gf_emit_buffer), by id */
  gf_comm *comm;
  int stop_vote; /* under MPI: why this rank wants to stop (a signal, GF_DIVERGED) */
  /* the timing sample (gf_run_options.timing_sample): whether the backend
   * times the instance of each task being issued, and how many it timed */
  int64_t sample;
  char *timed_now;
  int64_t *timed_count;
  int64_t trace_first, trace_end;
  gf_trace *trace; /* the timeline, or NULL */
  /* for the trace's flow arrows: the last device operation issued on each
   * stream, the operation each event was recorded after, and what each
   * stream waits for before its next operation */
  gf_trace_key *last_op;      /* [stream]; task -2: none */
  gf_trace_key *recorded;     /* [event] */
  gf_trace_key (*waiting)[8]; /* [stream][i] */
  int *nwaiting;              /* [stream] */
  int64_t backend_ns;         /* host time inside backend calls during the loop */
  int64_t issued_ns;          /* from the loop's start until the host had issued its last step */
  gf_durations host_steps;    /* each step's time on the host: issuing it, and what it waited for */
  int64_t task_ops;
  double points, kernel_bytes; /* grid points updated and bytes moved by launches */
  int64_t kernel_calls;
  gf_event **fences;             /* [2][stream]: the two newest fence sets */
  int fence_sets_used;           /* how many of the two hold a recording */
  gf_scan_result *check_results; /* pinned: one per checked instance, in check order */
  gf_event *check_done;          /* recorded on stream 0 after the scans */
  gf_event **check_join;         /* [stream]: each stream's work up to the checked step */
  char *check_writer;            /* [stream]: 1 when work on it writes a checked field */
  int check_bodies;              /* program bodies check_writer has seen */
  int64_t check_pending;         /* the step whose scans are in flight, -1: none */
  char check_message[512];       /* why the check stopped the run */
  gf_checkpoint_run ck;          /* what a checkpoint saves (checkpoint.h) */
  int64_t first_step;            /* the step a restart continues from, else 0 */
  int64_t checkpoint_step;       /* the last checkpoint written, -1: none */
  int64_t *flushed_through;      /* [file]: a batched output's planes of steps up to this one are
                                    in the file (or, restarted, are the first run's) */
  int64_t *batch_planes;         /* scratch for a batch's planes and steps: 2 x the largest */
  replay replay;                 /* schedule: graph */
  int64_t fence_steps;           /* FENCE_STEPS, or FENCE_STEPS_REPLAY under replay on a GPU */
} run;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void gf_task_timing_report(void *timings, const gf_op_timing *timing) {
  if (timing->tag.task < 0 || (timing->kind != GF_TIMED_LAUNCH && timing->kind != GF_TIMED_COPY))
    return;
  gf_task_timing *t = (gf_task_timing *)timings + timing->tag.task;
  atomic_fetch_add_explicit(&t->busy_ns, timing->end_ns - timing->start_ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed);
}

/* The sink's choice of what to time: gflow's own work, and the instances of
 * the sample (decided in issue()). */
static int run_times(void *user, gf_tag tag) {
  const run *r = user;
  return tag.task < 0 || r->timed_now[tag.task];
}

/* The sink the executor installs: the per-task sums and, when asked, the trace. */
static void run_sink(void *user, const gf_op_timing *timing) {
  run *r = user;
  gf_task_timing_report(r->timing, timing);
  if (r->trace) gf_trace_report(r->trace, timing);
}

/* The trace's flow arrows, from the instructions as they are issued. */
static void trace_dependencies(run *r, const gf_instr *in, int64_t n) {
  const gf_trace_key none = {.task = -2};
  int device_op = in->kind == GF_I_LAUNCH || in->kind == GF_I_COPY;
  if (device_op) {
    gf_trace_key me = {in->task, n, in->stream,
                       in->kind == GF_I_LAUNCH ? GF_TIMED_LAUNCH : GF_TIMED_COPY};
    for (int i = 0; i < r->nwaiting[in->stream]; i++)
      gf_trace_flow(r->trace, r->waiting[in->stream][i], me);
    r->nwaiting[in->stream] = 0;
    r->last_op[in->stream] = me;
  } else if (in->kind == GF_I_RECORD && in->event >= 0) {
    r->recorded[in->event] = r->last_op[in->stream];
  } else if (in->kind == GF_I_WAIT) {
    gf_trace_key from = r->recorded[in->event];
    if (from.task != none.task && r->nwaiting[in->stream] < 8)
      r->waiting[in->stream][r->nwaiting[in->stream]++] = from;
  } else if (in->kind == GF_I_HOST_WAIT && in->event >= 0) {
    gf_trace_key from = r->recorded[in->event];
    if (from.task != none.task)
      gf_trace_flow(r->trace, from, (gf_trace_key){in->task, n, -1, GF_TIMED_HOST_WAIT});
  }
}

static gf_status start_trace(run *r, const gf_run_options *options) {
  const gf_workflow *wf = r->wf;
  const char **streams = gf_calloc((size_t)r->nstreams + 1, sizeof *streams);
  const char **tasks = gf_calloc((size_t)wf->ntasks + 1, sizeof *tasks);
  char **details = gf_calloc((size_t)wf->ntasks + 1, sizeof *details);
  char process[512];
  if (gf_comm_size(r->comm) > 1)
    snprintf(process, sizeof process, "gflow %s, rank %d (%s)", wf->name, gf_comm_rank(r->comm),
             r->b->description);
  else
    snprintf(process, sizeof process, "gflow %s (%s)", wf->name, r->b->description);
  for (int s = 0; streams && s < r->nstreams; s++) streams[s] = gf_plan_stream_name(r->plan, s);
  int ok = streams && tasks && details;
  for (int t = 0; ok && t < wf->ntasks; t++) {
    const gf_task *task = &wf->tasks[t];
    tasks[t] = task->name;
    ok = (details[t] = gf_asprintf("%s %s", task->kind->name, task->kind->describe(wf, task))) !=
         NULL;
  }
  if (ok)
    r->trace = gf_trace_create(streams, r->nstreams, tasks, (const char *const *)details,
                               wf->ntasks, process, options->trace_first, options->trace_end);
  for (int t = 0; details && t < wf->ntasks; t++) free(details[t]);
  free(streams);
  free(tasks);
  free(details);
  r->last_op = gf_calloc((size_t)r->nstreams + 1, sizeof *r->last_op);
  r->recorded = gf_calloc((size_t)r->nevents + 1, sizeof *r->recorded);
  r->waiting = gf_calloc((size_t)r->nstreams + 1, sizeof *r->waiting);
  r->nwaiting = gf_calloc((size_t)r->nstreams + 1, sizeof *r->nwaiting);
  if (!r->trace || !r->last_op || !r->recorded || !r->waiting || !r->nwaiting)
    return gf_oom(r->diag, "starting the trace");
  for (int s = 0; s < r->nstreams; s++) r->last_op[s].task = -2;
  for (int e = 0; e < r->nevents; e++) r->recorded[e].task = -2;
  return GF_OK;
}

static void free_trace(run *r) {
  gf_trace_free(r->trace);
  free(r->last_op);
  free(r->recorded);
  free(r->waiting);
  free(r->nwaiting);
}

static gf_status init_field(void *user, int field, void *host) {
  return gf_eval_field_init(user, field, host);
}

static void *instance_address(void *user, int field, int inst) {
  return gf_memory_instance(user, field, inst);
}

/* ---- the interpreter ------------------------------------------------------- */

gf_backend *gf_host_backend(gf_host_ctx *ctx) {
  return ctx->run->b;
}

gf_stream *gf_host_stream(gf_host_ctx *ctx, int *index) {
  if (index) *index = ctx->stream;
  return ctx->stream >= 0 ? ctx->run->streams[ctx->stream] : NULL;
}

gf_status gf_host_set_state(gf_host_ctx *ctx, int task, void *state, gf_host_release_fn release) {
  run *r = ctx->run;
  if (!ctx->state) {
    ctx->state = gf_calloc((size_t)r->wf->ntasks, sizeof *ctx->state);
    ctx->release = gf_calloc((size_t)r->wf->ntasks, sizeof *ctx->release);
    if (!ctx->state || !ctx->release) {
      free(ctx->state);
      free(ctx->release);
      ctx->state = NULL;
      ctx->release = NULL;
      return gf_oom(r->diag, "keeping a task's state");
    }
  }
  ctx->state[task] = state;
  ctx->release[task] = release;
  return GF_OK;
}

gf_status gf_host_fail(gf_host_ctx *ctx, int task, int64_t n, const char *why) {
  run *r = ctx->run;
  return gf_diag_error(r->diag, GF_INTERNAL,
                       "ghost-cell exchange failed: task '%s', stream %s, step %" PRId64 ": %s",
                       task >= 0 ? r->wf->tasks[task].name : "-",
                       gf_plan_stream_name(r->plan, ctx->stream), n, why);
}

static gf_status device_failure(run *r, const gf_instr *in, int64_t n, const char *what) {
  const char *task = in->task >= 0 ? r->wf->tasks[in->task].name : "-";
  int stream = in->stream >= 0 ? in->stream : in->other;
  return gf_diag_error(r->diag, GF_INTERNAL,
                       "%s failed: task '%s', stream %s, step %" PRId64 ": %s", what, task,
                       gf_plan_stream_name(r->plan, stream), n, r->b->error);
}

/* Writes the per-step scalars of a launch into its argument struct. */
static gf_status set_params(run *r, const gf_instr *in, int64_t n) {
  for (int i = 0; i < in->nparams; i++) {
    const gf_instr_param *p = &in->params[i];
    gf_status st = GF_OK;
    double v = gf_eval_number(r->eval, p->expr, in->task, n, &st);
    if (st != GF_OK) return st;
    unsigned char *at = (unsigned char *)in->args + p->offset;
    if (p->is_int) {
      int64_t i64 = (int64_t)v;
      memcpy(at, &i64, sizeof i64);
    } else {
      memcpy(at, &v, sizeof v);
    }
  }
  return GF_OK;
}

static void *operand_address(run *r, const gf_operand *o) {
  switch (o->kind) {
    case GF_OPND_STAGED:
      return r->staged.buffer;
    case GF_OPND_TEMP:
      return r->temps[o->temp];
    case GF_OPND_BUFFER:
      return (char *)r->buffers[o->temp] + o->offset;
    case GF_OPND_BATCH:
      return (char *)r->batches[o->temp].buffer + o->offset;
    default:
      return o->bound;
  }
}

/* The staging buffer that file `file`'s next copy fills: its open batch's
 * if it is staged directly, else the one the last GF_I_STAGE took. */
static staged_buffer *staged_for(run *r, int file) {
  return file >= 0 && r->wf->files[file].direct ? &r->batches[file] : &r->staged;
}

/* Hands the writer the batch of file `file` in `buffer`: the planes of its
 * task's instances first .. first + count - 1 (ring slots 0 .. count - 1)
 * or, for an output read from its field's ring, of steps first .. first +
 * count - 1, leaving out those a flush already wrote (plane -1). The next
 * copy takes a buffer. */
static gf_status submit_batch(run *r, int file, staged_buffer *buffer, int64_t first, int count) {
  const gf_file *f = &r->wf->files[file];
  int64_t *planes = r->batch_planes, *steps = r->batch_planes + f->batch;
  for (int i = 0; i < count; i++) {
    gf_status st = GF_OK;
    steps[i] = f->from_ring ? first + i : gf_program_instance_step(r->program, f->task, first + i);
    planes[i] = -1;
    if (steps[i] <= r->flushed_through[file]) continue;
    double plane = gf_eval_number(r->eval, f->plane, f->task, steps[i], &st);
    if (st != GF_OK) return st;
    planes[i] = (int64_t)plane;
  }
  gf_writer_submit_batch(r->writer, buffer->slot, file, count, planes, steps);
  *buffer = (staged_buffer){.slot = -1};
  return GF_OK;
}

/* A batched output's open batch at step n: how many planes, from which
 * instance (of its task; for an output read from its field's ring, from
 * which step), and where they lie. 0: none open. */
static int open_batch(const run *r, const gf_file *f, int64_t n, int64_t *first,
                      const void **from) {
  const gf_workflow *wf = r->wf;
  size_t bytes = wf->fields[f->field].bytes;
  if (f->from_ring) {
    int64_t last = n < f->last_step ? n : f->last_step;
    if (last < f->first_step || gf_output_batch_ends(f, last))
      return 0; /* none yet, or its batch is complete and on its way */
    *first = gf_output_batch_first(f, last);
    const gf_field *field = &wf->fields[f->field];
    *from =
        gf_memory_instance(r->memory, f->field, (int)((*first + f->index_offset) % field->ring));
    return (int)(last - *first + 1);
  }
  int64_t count = gf_program_instances_through(r->program, f->task, n);
  int open = (int)(count % f->batch);
  *first = count - open;
  if (f->direct) return open;           /* in its staging buffer already */
  int id = f->task * GF_MAX_TASK_TEMPS; /* the ring: the output's buffer 0, two halves */
  *from = (char *)r->buffers[id] + (size_t)((*first / f->batch) % 2) * (size_t)f->batch * bytes;
  return open;
}

static gf_status flush_failed(run *r, const gf_file *f, int64_t n) {
  return gf_diag_error(r->diag, GF_INTERNAL, "output copy failed: task '%s', step %" PRId64 ": %s",
                       r->wf->tasks[f->task].name, n, r->b->error);
}

/* With every stream drained: the planes of each batched output's open
 * batch (its instances through step n since its last full batch) go from
 * the device-side ring to the writer, before a checkpoint or at the end. */
static gf_status flush_batches(run *r, int64_t n) {
  const gf_workflow *wf = r->wf;
  gf_backend *b = r->b;
  for (int i = 0; i < wf->nfiles; i++) {
    const gf_file *f = &wf->files[i];
    if (f->batch <= 1) continue;
    int64_t first = 0;
    const void *from = NULL;
    int open = open_batch(r, f, n, &first, &from);
    int64_t last_step = open == 0 ? -1
                        : f->from_ring
                            ? first + open - 1
                            : gf_program_instance_step(r->program, f->task, first + open - 1);
    if (open == 0 || last_step <= r->flushed_through[i]) {
      r->flushed_through[i] = n > r->flushed_through[i] ? n : r->flushed_through[i];
      continue;
    }
    /* out of the ring into a buffer (a direct file's planes are in its own),
     * then, the streams drained, the buffer to the writer */
    staged_buffer *buffer = staged_for(r, i);
    if (!f->direct) {
      gf_status st = gf_writer_acquire(r->writer, &buffer->slot, &buffer->buffer, &buffer->ready);
      if (st != GF_OK) return st;
      if (b->ops->copy_async(b, r->streams[0], buffer->buffer, from,
                             (size_t)open * wf->fields[f->field].bytes,
                             (gf_tag){f->task, n, 0}) != GF_OK)
        return flush_failed(r, f, n);
    }
    if (b->ops->event_record(b, buffer->ready, r->streams[0]) != GF_OK)
      return flush_failed(r, f, n);
    gf_status st = submit_batch(r, i, buffer, first, open);
    if (st != GF_OK) return st;
    r->flushed_through[i] = n;
  }
  return GF_OK;
}

/* What the report counts of an instruction issued or replayed. */
static void count_instr(run *r, const gf_instr *in, int64_t n) {
  if (in->starts_task) {
    r->task_ops++;
    if (r->sample > 1) {
      /* the second instance of every `sample`, not the first: a first
       * launch may load the kernel's code (CUDA loads modules lazily) */
      int timed = r->count[in->task] % r->sample == 1 ||
                  (r->trace && n >= r->trace_first && n < r->trace_end);
      r->timed_now[in->task] = (char)timed;
      r->timed_count[in->task] += timed;
    }
    r->count[in->task]++;
  }
  if (in->kind == GF_I_LAUNCH) {
    r->kernel_calls++;
    r->points += (double)in->points;
    r->kernel_bytes += (double)in->points * in->kernel->bytes_per_point;
  }
}

/* A temporary's alloc or free (GF_I_ALLOC, GF_I_FREE), from the run's pool. */
static gf_status issue_temp(run *r, const gf_instr *in, int64_t n) {
  gf_stream *stream = in->stream >= 0 ? r->streams[in->stream] : NULL;
  if (in->kind == GF_I_ALLOC)
    return gf_memory_temp_alloc(r->memory, in->space, in->bytes, stream, r->temps_last[in->temp],
                                &r->temps[in->temp]) == GF_OK
               ? GF_OK
               : device_failure(r, in, n, "allocating a temporary");
  gf_status st = gf_memory_temp_free(r->memory, in->space, r->temps[in->temp], stream);
  r->temps_last[in->temp] = r->temps[in->temp];
  r->temps[in->temp] = NULL;
  return st == GF_OK ? GF_OK : device_failure(r, in, n, "freeing a temporary");
}

/* Carries out an instruction whose launch arguments are set. */
static gf_status issue_op(run *r, const gf_instr *in, int64_t n) {
  gf_backend *b = r->b;
  gf_stream *stream = in->stream >= 0 ? r->streams[in->stream] : NULL;
  gf_tag tag = {in->task, n, in->stream};
  gf_status st;
  switch (in->kind) {
    case GF_I_LAUNCH:
      for (int i = 0; i < in->ntemps; i++) /* this step's scratch fields */
        memcpy((unsigned char *)in->args + in->temps[i].offset, &r->temps[in->temps[i].temp],
               sizeof(void *));
      if (r->trace)
        gf_trace_launch_args(r->trace, (gf_trace_key){in->task, n, in->stream, GF_TIMED_LAUNCH},
                             in->kernel, in->args);
      if (b->ops->launch(b, stream, in->kernel, in->args, tag) != GF_OK)
        return device_failure(r, in, n, "kernel launch");
      return GF_OK;
    case GF_I_COPY:
      if (b->ops->copy_async(b, stream, operand_address(r, &in->dst), operand_address(r, &in->src),
                             in->bytes, tag) != GF_OK)
        return device_failure(r, in, n, in->dst.kind == GF_OPND_STAGED ? "output copy" : "copy");
      return GF_OK;
    case GF_I_RECORD:
      if (in->event < 0) {
        if (b->ops->event_record(b, staged_for(r, in->file)->ready, stream) != GF_OK)
          return device_failure(r, in, n, "output copy");
      } else if (b->ops->event_record(b, r->events[in->event], stream) != GF_OK) {
        return device_failure(r, in, n, "event record");
      }
      return GF_OK;
    case GF_I_WAIT:
      if (b->ops->stream_wait_event(b, stream, r->events[in->event]) != GF_OK)
        return device_failure(r, in, n, "stream wait");
      return GF_OK;
    case GF_I_HOST_WAIT:
      if (b->ops->event_synchronize(b, r->events[in->event]) != GF_OK)
        return device_failure(r, in, n, "event synchronize");
      return GF_OK;
    case GF_I_HOST_SYNC:
      if (b->ops->stream_synchronize(b, r->streams[in->other]) != GF_OK)
        return device_failure(r, in, n, "stream synchronize");
      return GF_OK;
    case GF_I_HOST_CALL:
      r->host.stream = in->stream;
      return in->call(&r->host, r->wf, in->task, n, in->call_data);
    case GF_I_STAGE: { /* a buffer, unless the one to fill has one (a direct batch's) */
      staged_buffer *buffer = staged_for(r, in->file);
      return buffer->slot >= 0
                 ? GF_OK
                 : gf_writer_acquire(r->writer, &buffer->slot, &buffer->buffer, &buffer->ready);
    }
    case GF_I_WRITE: {
      if (in->batch > 0) { /* the task's last `batch` instances, or steps */
        int64_t last = r->wf->files[in->file].from_ring
                           ? n + 1
                           : gf_program_instances_through(r->program, in->task, n);
        return submit_batch(r, in->file, staged_for(r, in->file), last - in->batch, in->batch);
      }
      st = GF_OK;
      double plane = gf_eval_number(r->eval, in->param, in->task, n, &st);
      if (st != GF_OK) return st;
      gf_writer_submit(r->writer, r->staged.slot, in->file, (int64_t)plane, n);
      r->staged = (staged_buffer){.slot = -1};
      return GF_OK;
    }
    case GF_I_ALLOC:
    case GF_I_FREE:
      return issue_temp(r, in, n);
    case GF_I_CAPTURE_BEGIN:
    case GF_I_CAPTURE_END:
    case GF_I_KIND_COUNT:
      return GF_OK;
  }
  return GF_OK;
}

static gf_status issue(run *r, const gf_instr *in, int64_t n) {
  count_instr(r, in, n);
  if (r->trace) trace_dependencies(r, in, n);
  gf_status st = in->kind == GF_I_LAUNCH ? set_params(r, in, n) : GF_OK;
  return st == GF_OK ? issue_op(r, in, n) : st;
}

/* ---- graph replay (schedule: graph) ------------------------------------------ */

static gf_status replay_fail(run *r, const char *what) {
  return gf_diag_error(r->diag, GF_INTERNAL, "schedule graph: %s: %s", what, r->b->error);
}

/* Before the loop: whether runs are replayed, and their events. */
static gf_status replay_prepare(run *r, const gf_run_options *options) {
  replay *rp = &r->replay;
  gf_backend *b = r->b;
  if (!(r->wf->schedule->flags & GF_SCHED_GRAPHS)) return GF_OK;
  rp->off_why = !b->ops->graph_capture_begin ? "the backend has no graphs"
                : !b->graphs                 ? "--timing times each operation with events"
                : options->trace_path        ? "--trace follows each operation"
                                             : NULL;
  if (rp->off_why) return GF_OK;
  size_t ns = (size_t)r->nstreams, ne = (size_t)(r->nevents ? r->nevents : 1);
  rp->join = gf_calloc(ns, sizeof *rp->join);
  rp->catch_up = gf_calloc(ns, sizeof *rp->catch_up);
  rp->dirty = gf_calloc(ns, 1);
  rp->joined = gf_calloc(ns, 1);
  rp->recorded_here = gf_calloc(ne, 1);
  rp->in_graph = gf_calloc(ne, 1);
  rp->eager_recorded = gf_calloc(ne, 1);
  if (!rp->join || !rp->catch_up || !rp->dirty || !rp->joined || !rp->recorded_here ||
      !rp->in_graph || !rp->eager_recorded)
    return gf_oom(r->diag, "preparing the graphs");
  gf_status st = GF_OK;
  /* catch_up[s] is recorded on its stream before any capture waits for it */
  for (size_t s = 0; s < ns && st == GF_OK; s++)
    if (b->ops->event_create(b, &rp->join[s]) != GF_OK ||
        b->ops->event_create(b, &rp->catch_up[s]) != GF_OK ||
        b->ops->event_record(b, rp->catch_up[s], r->streams[s]) != GF_OK)
      st = replay_fail(r, "creating an event");
  if (st == GF_OK &&
      (b->ops->event_create(b, &rp->fork) != GF_OK || b->ops->event_create(b, &rp->done) != GF_OK))
    st = replay_fail(r, "creating an event");
  rp->on = st == GF_OK;
  /* Where the device is the host (the CPU backend), a graph's launch issues
   * its queue entries one by one, as events does: a longer graph saves
   * nothing there, and the longer lead only lets the host take staging
   * buffers further ahead (each batch in flight holds one, whose pages are
   * faulted in at first use) and queue more work to contend for the cores. */
  if (rp->on && !b->can_run_kernels_on_host_memory) r->fence_steps = FENCE_STEPS_REPLAY;
  return st;
}

static void replay_release(run *r) {
  replay *rp = &r->replay;
  gf_backend *b = r->b;
  for (int i = 0; i < REPLAY_CACHE; i++) {
    if (rp->cache[i].graph) b->ops->graph_destroy(b, rp->cache[i].graph);
    free(rp->cache[i].key);
  }
  for (int s = 0; s < r->nstreams; s++) {
    if (rp->join && rp->join[s]) b->ops->event_destroy(b, rp->join[s]);
    if (rp->catch_up && rp->catch_up[s]) b->ops->event_destroy(b, rp->catch_up[s]);
  }
  if (rp->fork) b->ops->event_destroy(b, rp->fork);
  if (rp->done) b->ops->event_destroy(b, rp->done);
  free(rp->join), free(rp->catch_up), free(rp->dirty), free(rp->joined);
  free(rp->recorded_here), free(rp->in_graph), free(rp->eager_recorded);
  free(rp->pending), free(rp->key);
}

/* What identifies an instruction in a run's key; its argument struct follows. */
typedef struct replay_instr_key {
  int kind, stream, event;
  unsigned args_size;
  size_t bytes;
  const void *dst, *src;
  const gf_kernel *kernel;
} replay_instr_key;

static size_t replay_key_size(const replay_instr_key *k) {
  return sizeof *k + (k->args_size + 7u) / 8u * 8u;
}

/* Holds back an instruction at step n: its launch's per-step scalars are
 * evaluated now, in issue order as issue() would, into its argument
 * struct, and the struct is kept in the run's key. */
static gf_status replay_defer(run *r, const gf_instr *in, int64_t n) {
  replay *rp = &r->replay;
  gf_status st = in->kind == GF_I_LAUNCH ? set_params(r, in, n) : GF_OK;
  if (st != GF_OK) return st;
  replay_instr_key k;
  memset(&k, 0, sizeof k); /* the padding too: keys are compared as bytes */
  k.kind = in->kind, k.stream = in->stream, k.event = in->event;
  if (in->kind == GF_I_WAIT) /* waited for at launch when last recorded outside a graph */
    k.bytes = !rp->in_graph[in->event] && rp->eager_recorded[in->event];
  if (in->kind == GF_I_LAUNCH) k.kernel = in->kernel, k.args_size = (unsigned)in->kernel->args_size;
  if (in->kind == GF_I_COPY) {
    k.bytes = in->bytes;
    k.dst = operand_address(r, &in->dst);
    k.src = operand_address(r, &in->src);
  }
  size_t size = replay_key_size(&k);
  if (GF_GROW(rp->pending, rp->pending_cap, rp->npending + 1) != GF_OK)
    return gf_oom(r->diag, "holding back a graph's work");
  if (rp->key_len + size > rp->key_cap) {
    size_t cap = rp->key_cap ? 2 * rp->key_cap : 4096;
    while (cap < rp->key_len + size) cap *= 2;
    unsigned char *key = gf_realloc(rp->key, cap);
    if (!key) return gf_oom(r->diag, "holding back a graph's work");
    rp->key = key, rp->key_cap = cap;
  }
  unsigned char *at = rp->key + rp->key_len;
  memset(at, 0, size);
  memcpy(at, &k, sizeof k);
  if (k.args_size) memcpy(at + sizeof k, in->args, k.args_size);
  rp->pending[rp->npending].in = in;
  rp->pending[rp->npending].n = n;
  rp->pending[rp->npending].args = rp->key_len + sizeof k;
  rp->npending++;
  rp->key_len += size;
  return GF_OK;
}

/* A hash of a key, eight bytes at a time (its length is a multiple of 8). */
static uint64_t replay_hash(const unsigned char *key, size_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
  for (size_t i = 0; i < len; i += 8) {
    uint64_t w;
    memcpy(&w, key + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return h;
}

/* Whether two runs have one shape: the same kinds, streams, events and
 * kernels, in the same order; their graphs then differ only in their
 * nodes' parameters (addresses, arguments), which an update can change. */
static int replay_same_shape(const unsigned char *a, size_t alen, const unsigned char *b,
                             size_t blen) {
  size_t i = 0, j = 0;
  while (i < alen && j < blen) {
    replay_instr_key ka, kb;
    memcpy(&ka, a + i, sizeof ka);
    memcpy(&kb, b + j, sizeof kb);
    if (ka.kind != kb.kind || ka.stream != kb.stream || ka.event != kb.event ||
        ka.kernel != kb.kernel)
      return 0;
    i += replay_key_size(&ka);
    j += replay_key_size(&kb);
  }
  return i == alen && j == blen;
}

/* Captures the pending run into a graph on stream 0: every other stream it
 * uses joins the capture through `fork`, waits (at each launch) for the work
 * issued to it outside the graphs before (catch_up), and rejoins stream 0
 * at the end. A wait for an event recorded before the run waits, at each
 * launch, for its last record outside a graph; one last recorded in an
 * earlier graph is left out, as graphs run one after another. */
static gf_status replay_capture(run *r, gf_graph *reuse, gf_graph **out) {
  replay *rp = &r->replay;
  gf_backend *b = r->b;
  gf_stream *origin = r->streams[0];
  gf_status st = GF_OK;
  if (b->ops->graph_capture_begin(b, origin) != GF_OK) return replay_fail(r, "beginning a capture");
  memset(rp->joined, 0, (size_t)r->nstreams);
  memset(rp->recorded_here, 0, (size_t)(r->nevents ? r->nevents : 1));
  rp->joined[0] = 1;
  if (b->ops->event_record(b, rp->fork, origin) != GF_OK) st = replay_fail(r, "capturing");
  for (int i = 0; i < rp->npending && st == GF_OK; i++) {
    const gf_instr *in = rp->pending[i].in;
    int64_t n = rp->pending[i].n;
    gf_stream *s = r->streams[in->stream];
    if (!rp->joined[in->stream]) {
      rp->joined[in->stream] = 1;
      if (b->ops->stream_wait_event(b, s, rp->fork) != GF_OK ||
          b->ops->graph_wait_external(b, s, rp->catch_up[in->stream]) != GF_OK) {
        st = replay_fail(r, "capturing");
        break;
      }
    }
    if (in->kind == GF_I_WAIT && !rp->recorded_here[in->event]) {
      if (!rp->in_graph[in->event] && rp->eager_recorded[in->event] &&
          b->ops->graph_wait_external(b, s, r->events[in->event]) != GF_OK)
        st = device_failure(r, in, n, "stream wait");
      continue;
    }
    if (in->kind == GF_I_RECORD) rp->recorded_here[in->event] = 1;
    if (in->kind == GF_I_LAUNCH) /* this step's scalars (the struct may serve several steps) */
      memcpy(in->args, rp->key + rp->pending[i].args, in->kernel->args_size);
    st = issue_op(r, in, n);
  }
  for (int s = 1; s < r->nstreams && st == GF_OK; s++)
    if (rp->joined[s] && (b->ops->event_record(b, rp->join[s], r->streams[s]) != GF_OK ||
                          b->ops->stream_wait_event(b, origin, rp->join[s]) != GF_OK))
      st = replay_fail(r, "capturing");
  gf_graph *graph = NULL;
  if (b->ops->graph_capture_end(b, origin, reuse, &graph) != GF_OK) {
    if (st == GF_OK) st = replay_fail(r, "ending a capture");
  } else if (st != GF_OK) {
    if (graph != reuse) b->ops->graph_destroy(b, graph);
    graph = NULL;
  }
  rp->captures++;
  *out = graph;
  return st;
}

/* The cached graph of the pending run (its key), or NULL. */
static replay_graph *replay_find(replay *rp, uint64_t hash) {
  for (int i = 0; i < REPLAY_CACHE; i++) {
    replay_graph *g = &rp->cache[i];
    if (g->graph && g->hash == hash && g->key_len == rp->key_len &&
        !memcmp(g->key, rp->key, rp->key_len))
      return g;
  }
  return NULL;
}

/* Launches the pending run: the graph of the same run as it is, else the
 * run captured again, updating the graph of its shape (or the least
 * recently used one) in place where the backend can. Each stream the run
 * uses records its own work since the last launch first (catch_up, which
 * the graph waits for); after the launch those streams wait for the graph,
 * and the events it recorded stand for it. */
static gf_status replay_flush(run *r) {
  replay *rp = &r->replay;
  if (!rp->npending) return GF_OK;
  gf_backend *b = r->b;
  gf_stream *origin = r->streams[0];
  uint64_t hash = replay_hash(rp->key, rp->key_len);
  /* The graph of this run; else a free place; else the least recently
   * used graph of this shape (an update), else of any. Shapes are compared
   * only on a miss: a hit, the common case, costs the hash and one memcmp. */
  replay_graph *same = replay_find(rp, hash), *free_slot = NULL, *shape = NULL, *oldest = NULL;
  for (int i = 0; i < REPLAY_CACHE && !same; i++) {
    replay_graph *g = &rp->cache[i];
    if (!g->graph) {
      if (!free_slot) free_slot = g;
      continue;
    }
    if ((!shape || g->used < shape->used) &&
        replay_same_shape(g->key, g->key_len, rp->key, rp->key_len))
      shape = g;
    if (!oldest || g->used < oldest->used) oldest = g;
  }
  int64_t t0 = now_ns();
  gf_status st = GF_OK;
  /* the streams the run uses (a capture joins the same ones): their own
   * work since the last launch first */
  memset(rp->joined, 0, (size_t)r->nstreams);
  for (int i = 0; i < rp->npending; i++) rp->joined[rp->pending[i].in->stream] = 1;
  for (int s = 1; s < r->nstreams && st == GF_OK; s++)
    if (rp->joined[s] && rp->dirty[s]) {
      rp->dirty[s] = 0;
      if (b->ops->event_record(b, rp->catch_up[s], r->streams[s]) != GF_OK)
        st = replay_fail(r, "ordering a graph after the streams' work");
    }
  if (st == GF_OK && !same) {
    replay_graph *g = free_slot ? free_slot : shape ? shape : oldest;
    gf_graph *graph = NULL;
    unsigned char *key = gf_malloc(rp->key_len);
    st = key ? replay_capture(r, g->graph, &graph) : gf_oom(r->diag, "keeping a graph");
    if (st == GF_OK) {
      if (graph == g->graph) {
        rp->updates++;
      } else {
        if (g->graph) b->ops->graph_destroy(b, g->graph);
        g->graph = graph;
        rp->instantiations++;
      }
      memcpy(key, rp->key, rp->key_len);
      free(g->key);
      g->key = key;
      g->key_len = rp->key_len;
      g->hash = hash;
      same = g;
    } else {
      free(key);
    }
  }
  if (st == GF_OK) {
    same->used = ++rp->launches;
    if (b->ops->graph_launch(b, same->graph, origin) != GF_OK ||
        b->ops->event_record(b, rp->done, origin) != GF_OK)
      st = replay_fail(r, "launching a graph");
  }
  for (int i = 0; i < rp->npending; i++) {
    const gf_instr *in = rp->pending[i].in;
    count_instr(r, in, rp->pending[i].n);
    if (in->kind == GF_I_RECORD) rp->in_graph[in->event] = 1;
  }
  for (int s = 1; s < r->nstreams && st == GF_OK; s++)
    if (rp->joined[s] && b->ops->stream_wait_event(b, r->streams[s], rp->done) != GF_OK)
      st = replay_fail(r, "ordering the streams after a graph");
  r->backend_ns += now_ns() - t0;
  rp->npending = 0;
  rp->key_len = 0;
  return st;
}

/* An instruction issued as it comes while runs are replayed: the stream it
 * runs on has work a later launch must wait for, and a wait for an event
 * recorded inside a launched graph waits for that graph instead. */
static gf_status issue_eager(run *r, const gf_instr *in, int64_t n) {
  replay *rp = &r->replay;
  if (!rp->on) return issue(r, in, n);
  gf_backend *b = r->b;
  if (in->stream >= 0) rp->dirty[in->stream] = 1;
  if (in->event >= 0 && (in->kind == GF_I_WAIT || in->kind == GF_I_HOST_WAIT) &&
      rp->in_graph[in->event]) {
    count_instr(r, in, n);
    gf_status st = in->kind == GF_I_WAIT
                       ? b->ops->stream_wait_event(b, r->streams[in->stream], rp->done)
                       : b->ops->event_synchronize(b, rp->done);
    return st == GF_OK ? GF_OK
                       : device_failure(
                             r, in, n, in->kind == GF_I_WAIT ? "stream wait" : "event synchronize");
  }
  if (in->kind == GF_I_RECORD && in->event >= 0)
    rp->in_graph[in->event] = 0, rp->eager_recorded[in->event] = 1;
  return issue(r, in, n);
}

/* What the sink hears of an instruction the host itself carries out. */
static int host_timed_kind(gf_instr_kind kind) {
  switch (kind) {
    case GF_I_HOST_WAIT:
    case GF_I_HOST_SYNC:
    case GF_I_STAGE: /* waits for a free staging buffer */
      return GF_TIMED_HOST_WAIT;
    case GF_I_HOST_CALL:
    case GF_I_WRITE:
      return GF_TIMED_HOST_CALL;
    default:
      return -1;
  }
}

/* A temporary's alloc or free from gflow's own pools (every strategy but
 * `async`) is the runner's own work, not a backend call: it is not timed as
 * one. (Two clock reads around each were a measurable part of what per-step
 * temporaries cost a launch-bound loop.) */
static int runner_work(const run *r, const gf_instr *in) {
  return (in->kind == GF_I_ALLOC || in->kind == GF_I_FREE) && r->wf->pool_strategy != GF_POOL_ASYNC;
}

/* Issues a step's body; the time spent inside each instruction counts as
 * backend time, what is left of the loop is the runner's own overhead. The
 * host's own work goes to the sink the backend reports its operations to. */
static gf_status run_body(run *r, int body_id, int64_t n) {
  gf_status st = GF_OK;
  const gf_op_sink *sink = &r->b->sink;
  const gf_body *body = gf_program_body(r->program, body_id);
  int capturing = 0; /* between a body's capture markers */
  for (int i = 0; i < body->ninstrs && st == GF_OK; i++) {
    const gf_instr *in = &body->instrs[i];
    if (in->kind == GF_I_CAPTURE_BEGIN || in->kind == GF_I_CAPTURE_END) { /* markers */
      capturing = in->kind == GF_I_CAPTURE_BEGIN;
      continue;
    }
    if (r->replay.on && capturing) {
      st = r->replay.npending < REPLAY_MAX_INSTRS ? GF_OK : replay_flush(r);
      if (st == GF_OK) st = replay_defer(r, in, n);
      continue;
    }
    if (r->replay.on && (st = replay_flush(r)) != GF_OK) break;
    if (runner_work(r, in)) { /* not timed; nothing to replay or trace: straight to the pool */
      if (r->replay.on || r->trace) {
        st = issue_eager(r, in, n);
      } else {
        count_instr(r, in, n);
        st = issue_temp(r, in, n);
      }
      continue;
    }
    int64_t t0 = now_ns();
    st = issue_eager(r, in, n);
    int64_t t1 = now_ns();
    r->backend_ns += t1 - t0;
    if (in->kind == GF_I_HOST_CALL && in->task >= 0 &&
        (r->wf->tasks[in->task].kind->traits & GF_KIND_HALO))
      r->host_busy_ns[in->task] += t1 - t0; /* MPI's time is the exchange's */
    int kind = host_timed_kind(in->kind);
    if (kind >= 0 && gf_sink_wants(sink, kind))
      sink->report(
          sink->user,
          &(gf_op_timing){.tag = {in->task, n, -1}, .kind = kind, .start_ns = t0, .end_ns = t1});
  }
  return st;
}

/* After step n: every FENCE_STEPS steps, waits until the streams have done
 * the work of 2 x FENCE_STEPS steps back, then records new fences. */
static gf_status fence_step(run *r, int64_t n) {
  if ((n + 1) % r->fence_steps != 0) return GF_OK;
  gf_status st = replay_flush(r);
  if (st != GF_OK) return st;
  gf_backend *b = r->b;
  int64_t t0 = now_ns();
  int set = (int)(((n + 1) / r->fence_steps) % 2);
  gf_event **fences = r->fences + (size_t)set * (size_t)r->nstreams;
  for (int s = 0; s < r->nstreams && st == GF_OK; s++) {
    if (r->fence_sets_used == 2 && b->ops->event_synchronize(b, fences[s]) != GF_OK)
      st = gf_diag_error(r->diag, GF_INTERNAL, "waiting for stream %s at step %" PRId64 ": %s",
                         gf_plan_stream_name(r->plan, s), n, b->error);
    else if (b->ops->event_record(b, fences[s], r->streams[s]) != GF_OK)
      st = gf_diag_error(r->diag, GF_INTERNAL, "event record on stream %s at step %" PRId64 ": %s",
                         gf_plan_stream_name(r->plan, s), n, b->error);
  }
  if (r->fence_sets_used < 2) r->fence_sets_used++;
  r->backend_ns += now_ns() - t0;
  return st;
}

/* ---- the numerical guard ----------------------------------------------------- */

/* Steps a lagged check's result waits before the host reads it. The scans
 * are issued after step n's fence; the next fence (recorded within
 * FENCE_STEPS steps) follows them, and the host waits for that fence
 * 2 x FENCE_STEPS steps after recording it. So after 3 x FENCE_STEPS steps the
 * scans are known done and reading their result never stalls the host (a
 * stall would drain the streams' queues: a bubble each check). */
#define CHECK_LAG(r) (3 * (r)->fence_steps)

/* Which streams write a checked field: only their work must be joined
 * before a scan (to see step n's values) and wait for it after (not to
 * overwrite what it reads); streams that only read the fields, such as the
 * snapshots' copies, go on untouched. From the program's bodies, looked at
 * again when a later stretch added bodies. */
static void find_check_writers(run *r) {
  const gf_workflow *wf = r->wf;
  int nbodies = gf_program_body_count(r->program);
  for (; r->check_bodies < nbodies; r->check_bodies++) {
    const gf_body *body = gf_program_body(r->program, r->check_bodies);
    for (int i = 0; i < body->ninstrs; i++) {
      const gf_instr *in = &body->instrs[i];
      if (in->stream < 0) continue;
      for (int c = 0; c < wf->check.nfields; c++) {
        int f = wf->check.fields[c], writes = 0;
        if (in->kind == GF_I_COPY && in->dst.kind == GF_OPND_INSTANCE) writes = in->dst.field == f;
        if (in->kind == GF_I_LAUNCH) {
          const gf_task *task = &wf->tasks[in->task];
          for (int a = 0; a < task->naccess; a++)
            writes |= task->access[a].ref.field == f && (task->access[a].access & GF_ACCESS_WRITE);
        }
        if (writes) r->check_writer[in->stream] = 1;
      }
    }
  }
}

/* The scans of a checked field: one an instance, or one over a grown ring
 * (task_output.c), whose instances lie one after another. */
static int check_scans(const gf_field *field) {
  return field->declared_ring ? 1 : field->ring;
}

/* After step n: the scans run on the (first) stream that writes the checked
 * fields, after the other writing streams' work so far; those wait for the
 * scans before their next work. A scan so sees exactly the fields as step n
 * left them, and nothing waits on the host. */
static gf_status check_issue(run *r, int64_t n) {
  const gf_workflow *wf = r->wf;
  const gf_check *check = &wf->check;
  gf_backend *b = r->b;
  find_check_writers(r);
  int scan_on = 0;
  while (scan_on < r->nstreams - 1 && !r->check_writer[scan_on]) scan_on++;
  if (!r->check_writer[scan_on]) scan_on = 0;
  gf_stream *scan = r->streams[scan_on];
  for (int s = 0; s < r->nstreams; s++)
    if (s != scan_on && r->check_writer[s] &&
        (b->ops->event_record(b, r->check_join[s], r->streams[s]) != GF_OK ||
         b->ops->stream_wait_event(b, scan, r->check_join[s]) != GF_OK))
      return gf_diag_error(r->diag, GF_INTERNAL, "check at step %" PRId64 ": stream %s: %s", n,
                           gf_plan_stream_name(r->plan, s), b->error);
  int i = 0;
  for (int c = 0; c < check->nfields; c++) {
    int f = check->fields[c];
    const gf_field *field = &wf->fields[f];
    int64_t elems = field->elems * (field->declared_ring ? field->ring : 1);
    for (int k = 0; k < check_scans(field); k++, i++)
      if (b->ops->scan_finite(b, scan, gf_memory_instance(r->memory, f, k), elems, field->dtype,
                              check->finite, check->max_abs, &r->check_results[i]) != GF_OK)
        return gf_diag_error(r->diag, GF_INTERNAL,
                             "check at step %" PRId64 ": scanning field '%s' instance %d: %s", n,
                             field->name, k, b->error);
  }
  if (b->ops->event_record(b, r->check_done, scan) != GF_OK)
    return gf_diag_error(r->diag, GF_INTERNAL, "check at step %" PRId64 ": %s", n, b->error);
  for (int s = 0; s < r->nstreams; s++)
    if (s != scan_on && r->check_writer[s] &&
        b->ops->stream_wait_event(b, r->streams[s], r->check_done) != GF_OK)
      return gf_diag_error(r->diag, GF_INTERNAL, "check at step %" PRId64 ": stream %s: %s", n,
                           gf_plan_stream_name(r->plan, s), b->error);
  r->check_pending = n;
  return GF_OK;
}

/* Waits for the pending scans (if any) and reads their results. GF_DIVERGED,
 * with the message in r->check_message, at the first value refused. */
static gf_status check_resolve(run *r) {
  const gf_workflow *wf = r->wf;
  const gf_check *check = &wf->check;
  gf_backend *b = r->b;
  int64_t n = r->check_pending;
  if (n < 0) return GF_OK;
  r->check_pending = -1;
  if (b->ops->event_synchronize(b, r->check_done) != GF_OK)
    return gf_diag_error(r->diag, GF_INTERNAL, "check at step %" PRId64 ": %s", n, b->error);
  int i = 0;
  for (int c = 0; c < check->nfields; c++) {
    const gf_field *field = &wf->fields[check->fields[c]];
    for (int scan = 0; scan < check_scans(field); scan++, i++) {
      int64_t at = r->check_results[i].index;
      double value = r->check_results[i].value;
      if (at < 0) continue;
      int k = field->declared_ring ? (int)(at / field->elems) : scan;
      at %= field->elems;
      char cell[96] = "";
      int64_t index[GF_MAX_DIMS] = {0};
      gf_field_cell(field, at, index);
      for (int d = 0; field->decomposed && d < field->ndim; d++) index[d] += wf->decomp.origin[d];
      for (int d = 0; d < field->ndim; d++)
        snprintf(cell + strlen(cell), sizeof cell - strlen(cell), "%s%" PRId64, d ? ", " : "",
                 index[d]);
      int beyond = !(check->finite && !isfinite(value));
      char shown[32]; /* a NaN's sign bit differs between CPUs and says nothing */
      snprintf(shown, sizeof shown, "%g", isnan(value) ? NAN : value);
      snprintf(r->check_message, sizeof r->check_message,
               "check failed at step %" PRId64 ": field '%s' instance %d holds %s at cell [%s]%s",
               n, field->name, k, shown, cell, beyond ? ", beyond max_abs" : "");
      if (beyond) {
        size_t len = strlen(r->check_message);
        snprintf(r->check_message + len, sizeof r->check_message - len, " %g", check->max_abs);
      }
      return gf_diag_error(r->diag, GF_DIVERGED, "%s", r->check_message);
    }
  }
  return GF_OK;
}

/* After step n, with the scans of step `pending` in flight (-1: none):
 * whether their result is read now (*resolve) and whether new scans are due
 * (*due). The loop (check_step) and the walk before it (replay_walk) ask. */
static void check_when(const run *r, int64_t n, int64_t pending, int *resolve, int *due) {
  const gf_check *check = &r->wf->check;
  *resolve = check->lagged && pending >= 0 && n - pending >= CHECK_LAG(r);
  *due = (n + 1) % check->every == 0 || (check->lagged && n + 1 == r->wf->steps);
}

/* After step n: a `check:` block scans every `every` steps and waits for the
 * result at once; the default check scans every `every` steps and after the
 * last, and reads each result CHECK_LAG steps later (or at the end). */
static gf_status check_step(run *r, int64_t n) {
  const gf_check *check = &r->wf->check;
  int resolve, due;
  check_when(r, n, r->check_pending, &resolve, &due);
  gf_status st = resolve || due ? replay_flush(r) : GF_OK;
  if (st == GF_OK && resolve) st = check_resolve(r);
  if (st != GF_OK || !due) return st;
  if ((st = check_resolve(r)) != GF_OK || (st = check_issue(r, n)) != GF_OK) return st;
  if (r->replay.on) memset(r->replay.dirty, 1, (size_t)r->nstreams); /* the scans */
  return check->lagged ? GF_OK : check_resolve(r);
}

/* The pinned results and the events of the check. */
static gf_status check_prepare(run *r) {
  const gf_workflow *wf = r->wf;
  const gf_check *check = &wf->check;
  gf_backend *b = r->b;
  r->check_pending = -1;
  if (!check->every || !check->nfields) return GF_OK;
  size_t count = 0;
  for (int c = 0; c < check->nfields; c++)
    count += (size_t)check_scans(&wf->fields[check->fields[c]]);
  if (gf_memory_alloc(r->memory, GF_SPACE_PINNED, count * sizeof *r->check_results, NULL,
                      (void **)&r->check_results) != GF_OK)
    return gf_diag_at(r->diag, check->loc, GF_INTERNAL,
                      "cannot allocate the check's host buffer (%zu bytes): %s",
                      count * sizeof *r->check_results, b->error);
  r->check_join = gf_calloc((size_t)r->nstreams, sizeof *r->check_join);
  r->check_writer = gf_calloc((size_t)r->nstreams, 1);
  if (!r->check_join || !r->check_writer) return gf_oom(r->diag, "preparing the check");
  for (int s = 0; s <= r->nstreams; s++)
    if (b->ops->event_create(b, s < r->nstreams ? &r->check_join[s] : &r->check_done) != GF_OK)
      return gf_diag_error(r->diag, GF_INTERNAL, "cannot create an event: %s", b->error);
  /* One scan before the loop: a GPU loads a kernel's code at its first
   * launch, which would otherwise land inside the timed loop. */
  int f = check->fields[0];
  if (b->ops->scan_finite(b, r->streams[0], gf_memory_instance(r->memory, f, 0), 1,
                          wf->fields[f].dtype, check->finite, check->max_abs,
                          &r->check_results[0]) != GF_OK ||
      b->ops->stream_synchronize(b, r->streams[0]) != GF_OK)
    return gf_diag_error(r->diag, GF_INTERNAL, "preparing the check: %s", b->error);
  return GF_OK;
}

static void check_release(run *r) {
  gf_backend *b = r->b;
  for (int s = 0; r->check_join && s < r->nstreams; s++)
    if (r->check_join[s]) b->ops->event_destroy(b, r->check_join[s]);
  if (r->check_done) b->ops->event_destroy(b, r->check_done);
  free(r->check_join);
  free(r->check_writer);
}

/* ---- report ---------------------------------------------------------------- */

/* The seed's timers from the busy times of one rank's tasks: kernels
 * (stencil), boundary conditions and ghost-cell exchanges (task_halo.c). */
static void seed_timers(const gf_workflow *wf, const double *busy_ms, double timers[3]) {
  timers[0] = timers[1] = timers[2] = 0;
  for (int t = 0; t < wf->ntasks; t++) {
    const char *kind = wf->tasks[t].kind->name;
    int which = strcmp(kind, "kernel") == 0     ? 0
                : strcmp(kind, "boundary") == 0 ? 1
                : strcmp(kind, "exchange") == 0 ? 2
                                                : -1;
    if (which >= 0 && busy_ms[t] > 0) timers[which] += busy_ms[t] / 1e3;
  }
}

static int has_halo_tasks(const gf_workflow *wf) {
  for (int t = 0; t < wf->ntasks; t++)
    if (wf->tasks[t].kind->traits & GF_KIND_HALO) return 1;
  return 0;
}

/* wall_s: the time loop, until every kernel and copy has finished; flushed_s:
 * until the outputs are durable (written and synced; the renames to their
 * final names follow at once). timings.json's issued_s (this rank's): until
 * the host had issued the last step; near total_s, the loop was bound by
 * the host's issue rather than by the device. Its host_step_us (this
 * rank's): the median and 90th percentile of a step's time on the host;
 * in a loop bound by the host, steps times the median is its time without
 * the host's hiccups. */
static gf_status report(run *r, int64_t steps_run, double wall_s, double flushed_s,
                        const gf_run_options *options) {
  const gf_workflow *wf = r->wf;
  gf_backend *b = r->b;
  const int ranks = gf_comm_size(r->comm), lead = gf_comm_rank(r->comm) == 0;
  double points = r->points, bytes = r->kernel_bytes;
  int64_t kernel_calls = r->kernel_calls;
  double overhead_us =
      r->task_ops ? ((double)(wall_s * 1e9) - (double)r->backend_ns) / 1e3 / (double)r->task_ops
                  : 0;
  if (overhead_us < 0) overhead_us = 0;
  /* Per task: busy ms (-1: not measured), then the seed's timers and the
   * loop's time: this rank's, and under MPI the maximum over the ranks and
   * every rank's (rank 0). */
  const int nvalues = wf->ntasks + 4;
  double *mine = gf_calloc((size_t)nvalues, sizeof *mine);
  double *most = gf_calloc((size_t)nvalues, sizeof *most);
  double *all = lead ? gf_calloc((size_t)nvalues * (size_t)ranks, sizeof *all) : NULL;
  if (!mine || !most || (lead && !all)) {
    free(mine), free(most), free(all);
    return gf_oom(r->diag, "writing the report");
  }
  for (int t = 0; t < wf->ntasks; t++) {
    /* busy time as the backend measured it, scaled up from the instances it
     * timed when it timed a sample, plus the host's part of a ghost-cell
     * exchange (MPI); -1 where nothing was timed */
    int64_t timed_count = r->sample > 1 ? r->timed_count[t] : r->count[t];
    int timed = r->timing[t].count > 0 && timed_count > 0;
    double device_ms =
        timed ? (double)r->timing[t].busy_ns / 1e6 * (double)r->count[t] / (double)timed_count : 0;
    timed |= r->host_busy_ns[t] > 0;
    mine[t] = timed ? device_ms + (double)r->host_busy_ns[t] / 1e6 : -1;
  }
  seed_timers(wf, mine, mine + wf->ntasks);
  mine[wf->ntasks + 3] = wall_s;
  memcpy(most, mine, (size_t)nvalues * sizeof *mine);
  gf_comm_max(r->comm, most, nvalues);
  gf_comm_gather(r->comm, mine, nvalues, all);
  double total_points = r->points, total_bytes = r->kernel_bytes;
  double sums[2] = {r->points, r->kernel_bytes};
  if (ranks > 1) {
    /* the grid's points: the sum over the ranks */
    double *each = lead ? gf_calloc((size_t)ranks * 2, sizeof *each) : NULL;
    gf_comm_gather(r->comm, sums, 2, each);
    if (each) {
      total_points = total_bytes = 0;
      for (int k = 0; k < ranks; k++) total_points += each[2 * k], total_bytes += each[2 * k + 1];
      free(each);
    }
  }
  wall_s = most[wf->ntasks + 3];
  if (!lead) {
    free(mine), free(most);
    return GF_OK;
  }
  points = total_points, bytes = total_bytes;

  gf_text j = {0};
  gf_text_printf(&j, "{\n  \"workflow\": ");
  gf_text_json(&j, wf->name);
  gf_text_printf(&j, ",\n  \"backend\": ");
  gf_text_json(&j, b->name);
  gf_text_printf(&j, ",\n  \"device\": ");
  gf_text_json(&j, b->description);
  gf_text_printf(&j,
                 ",\n  \"schedule\": \"%s\",\n  \"steps\": %" PRId64
                 ",\n  \"complete\": %s"
                 ",\n  \"ranks\": %d"
                 ",\n  \"total_s\": %.9f,\n  \"issued_s\": %.9f,\n  \"flushed_s\": %.9f,\n"
                 "  \"host_step_us\": {\"median\": %.3f, \"p90\": %.3f},\n"
                 "  \"gpts_per_s\": %.6f,\n  \"effective_gb_per_s\": %.6f,\n"
                 "  \"runner_overhead_us_per_task\": %.4f,\n",
                 wf->schedule->name, steps_run, steps_run == wf->steps ? "true" : "false", ranks,
                 wall_s, (double)r->issued_ns / 1e9, flushed_s,
                 gf_durations_quantile(&r->host_steps, 0.5) / 1e3,
                 gf_durations_quantile(&r->host_steps, 0.9) / 1e3, points / wall_s / 1e9,
                 bytes / wall_s / 1e9, overhead_us);
  const replay *rp = &r->replay;
  if (wf->schedule->flags & GF_SCHED_GRAPHS)
    gf_text_printf(&j,
                   "  \"graphs\": {\"on\": %s, \"launches\": %" PRId64 ", \"captures\": %" PRId64
                   ", \"instantiations\": %" PRId64 ", \"updates\": %" PRId64
                   ", \"prepared\": %" PRId64 ", \"prepared_s\": %.6f},\n",
                   rp->on ? "true" : "false", rp->launches, rp->captures, rp->instantiations,
                   rp->updates, rp->prepared, rp->prepared_s);
  gf_text_printf(&j, "  \"tasks\": [");
  if (!options->quiet) {
    char of[48] = "", over[48] = "";
    if (steps_run != wf->steps) snprintf(of, sizeof of, " of %" PRId64, wf->steps);
    if (ranks > 1) snprintf(over, sizeof over, " (%d ranks; the slowest's busy times)", ranks);
    fprintf(stderr, "gflow: %s: %" PRId64 "%s steps in %.3f ms on the %s backend (schedule %s)%s\n",
            wf->name, steps_run, of, wall_s * 1e3, b->name, wf->schedule->name, over);
    if (rp->on && rp->prepared)
      fprintf(stderr,
              "gflow: graphs: %" PRId64 " launches of %" PRId64
              " graphs prepared before the loop (in %.1f ms) and %" PRId64
              " captures in it (%" PRId64 " instantiated, %" PRId64 " updated in place)\n",
              rp->launches, rp->prepared, rp->prepared_s * 1e3, rp->captures, rp->instantiations,
              rp->updates);
    else if (rp->on)
      fprintf(stderr,
              "gflow: graphs: %" PRId64 " launches of %" PRId64 " captures (%" PRId64
              " instantiated, %" PRId64 " updated in place)\n",
              rp->launches, rp->captures, rp->instantiations, rp->updates);
    else if (rp->off_why)
      fprintf(stderr, "gflow: graphs: off (%s); the steps were issued as under events\n",
              rp->off_why);
    if (options->restart)
      fprintf(stderr, "  restarted from the checkpoint at step %" PRId64 "\n", r->first_step);
    fprintf(stderr, "  %-14s %-7s %9s %12s %10s\n", "task", "kind", "count", "busy ms", "mean us");
  }
  for (int i = 0; i < wf->ntasks; i++) {
    int t = gf_plan_order(r->plan)[i];
    const gf_task *task = &wf->tasks[t];
    int64_t count = r->count[t];
    double busy_ms = most[t]; /* as measured (scaled up from a sample); -1 where not */
    int timed = busy_ms >= 0;
    int64_t timed_count = r->sample > 1 ? r->timed_count[t] : count;
    gf_text_printf(&j, "%s\n    {\"name\": ", i ? "," : "");
    gf_text_json(&j, task->name);
    gf_text_printf(&j,
                   ", \"kind\": \"%s\", \"count\": %" PRId64 ", \"timed\": %" PRId64
                   ", \"busy_ms\": %.6f}",
                   task->kind->name, count, timed ? timed_count : 0, busy_ms);
    if (!options->quiet && timed)
      fprintf(stderr, "  %-14s %-7s %9" PRId64 " %12.3f %10.2f\n", task->name, task->kind->name,
              count, busy_ms, count ? busy_ms * 1e3 / (double)count : 0);
    else if (!options->quiet)
      fprintf(stderr, "  %-14s %-7s %9" PRId64 " %12s %10s\n", task->name, task->kind->name, count,
              "-", "-");
  }
  gf_text_printf(&j, "\n  ]");
  gf_pool_stats pool;
  if (gf_memory_pool_stats(r->memory, &pool)) {
    const char *strategy = gf_pool_strategy_names[wf->pool_strategy];
    gf_text_printf(&j,
                   ",\n  \"pool\": {\"strategy\": \"%s\", \"allocations\": %" PRId64
                   ", \"frees\": %" PRId64 ", \"reused\": %" PRId64
                   ", \"reused_same_stream\": %" PRId64 ", \"reused_after_event\": %" PRId64
                   ", \"passed_pending\": %" PRId64 ", \"blocks\": %" PRId64
                   ", \"released_blocks\": %" PRId64
                   ", \"in_use_peak_bytes\": %zu, \"reserved_peak_bytes\": %zu"
                   ", \"pending_peak_bytes\": %zu}",
                   strategy, pool.allocs, pool.frees, pool.reused, pool.reused_same,
                   pool.reused_after, pool.passed_pending, pool.blocks, pool.released,
                   pool.in_use_peak, pool.reserved_peak, pool.pending_peak);
    if (!options->quiet) {
      char in_use[32], reserved[32], pending[32];
      gf_format_bytes((double)pool.in_use_peak, in_use, sizeof in_use);
      gf_format_bytes((double)pool.reserved_peak, reserved, sizeof reserved);
      gf_format_bytes((double)pool.pending_peak, pending, sizeof pending);
      fprintf(stderr,
              "  pool (%s): %" PRId64 " temporaries, %" PRId64 " reused (%" PRId64
              " on their stream at once, %" PRId64 " after another stream's event), %" PRId64
              " block%s; high-water %s in use, %s held, %s pending at most\n",
              strategy, pool.allocs, pool.reused, pool.reused_same, pool.reused_after, pool.blocks,
              pool.blocks == 1 ? "" : "s", in_use, reserved, pending);
      if (wf->pool_strategy == GF_POOL_NAIVE && pool.reused)
        fprintf(stderr,
                "  pool: the naive pool handed chunks freed on one stream to the next "
                "allocation at once, while work queued on the freeing stream may still use "
                "them: outputs may hold another temporary's data\n");
    }
  }
  const double *timers = most + wf->ntasks;
  if (has_halo_tasks(wf) || ranks > 1) {
    gf_text_printf(&j,
                   ",\n  \"timers\": {\"stencil_s\": %.6f, \"boundary_condition_s\": %.6f, "
                   "\"ghost_cell_s\": %.6f, \"total_s\": %.6f},\n  \"per_rank\": [",
                   timers[0], timers[1], timers[2], timers[3]);
    for (int k = 0; k < ranks; k++) {
      const double *v = all + (size_t)k * (size_t)nvalues + wf->ntasks;
      gf_text_printf(&j,
                     "%s\n    {\"rank\": %d, \"stencil_s\": %.6f, \"boundary_condition_s\": "
                     "%.6f, \"ghost_cell_s\": %.6f, \"total_s\": %.6f}",
                     k ? "," : "", k, v[0], v[1], v[2], v[3]);
    }
    gf_text_printf(&j, "\n  ]");
  }
  gf_text_printf(&j, "\n}\n");
  if (!options->quiet) {
    if (kernel_calls)
      fprintf(stderr, "  kernels: %.4g GPts/s, %.4g GB/s effective (%.3g points updated)\n",
              points / wall_s / 1e9, bytes / wall_s / 1e9, points);
    if (has_halo_tasks(wf) || ranks > 1)
      fprintf(stderr,
              "  timing is stencil %.6f boundary condition %.6f ghost cell %.6f total %.6f "
              "(seconds; busy times, the maximum over %d rank%s)\n",
              timers[0], timers[1], timers[2], timers[3], ranks, ranks == 1 ? "" : "s");
    if (r->sample > 1)
      fprintf(stderr,
              "  busy times: measured on 1 in %" PRId64
              " instances of each task, scaled up (--timing-sample 1: all)\n",
              r->sample);
    fprintf(stderr, "  runner overhead: %.2f us per task (host time outside backend calls)\n",
            overhead_us);
    fprintf(stderr, "  outputs in %s/, complete %.3f ms after the loop started\n", options->out_dir,
            flushed_s * 1e3);
  }
  free(mine), free(most), free(all);
  char *json = gf_text_take(&j);
  gf_status st = gf_write_file_atomic(options->out_dir, "timings.json", json, r->diag);
  /* run.json: the same figures and what the run was (runinfo.c) */
  gf_runinfo info = {wf,
                     options,
                     b->name,
                     b->description,
                     steps_run,
                     flushed_s,
                     json,
                     options->restart ? r->first_step : -1,
                     r->checkpoint_step};
  if (st == GF_OK && (st = gf_runinfo_write(&info, options->out_dir, r->diag)) != GF_OK)
    gf_remove_file(options->out_dir, "timings.json");
  free(json);
  return st;
}

/* What the report needs once the outputs are durable. */
typedef struct run_end {
  run *r;
  const gf_run_options *options;
  int64_t steps_run;
  double wall_s;
  int64_t t0;
  int reported; /* timings.json was written */
} run_end;

/* Before the outputs take their final names: the report and timings.json,
 * so that no run's outputs appear without it. */
static gf_status write_report(void *user) {
  run_end *end = user;
  double flushed_s = (double)(now_ns() - end->t0) / 1e9;
  gf_status st = report(end->r, end->steps_run, end->wall_s, flushed_s, end->options);
  end->reported = st == GF_OK;
  return st;
}

/* ---- entry ----------------------------------------------------------------- */

/* The run buffers the program declared (the ghost-cell exchange's). */
static gf_status allocate_buffers(run *r) {
  for (int id = 0; id < gf_program_temp_count(r->program); id++) {
    gf_space space = GF_SPACE_PINNED;
    size_t bytes = gf_program_buffer(r->program, id, &space);
    if (bytes && gf_memory_alloc(r->memory, space, bytes, NULL, &r->buffers[id]) != GF_OK)
      return gf_diag_error(r->diag, GF_INTERNAL,
                           "cannot allocate a buffer of task '%s' (%zu bytes of %s memory): %s",
                           r->wf->tasks[id / GF_MAX_TASK_TEMPS].name, bytes, gf_space_name(space),
                           r->b->error);
  }
  return GF_OK;
}

static gf_status create_streams_and_events(run *r) {
  gf_backend *b = r->b;
  gf_status st = GF_OK;
  r->streams = gf_calloc((size_t)r->nstreams, sizeof *r->streams);
  r->events = gf_calloc((size_t)(r->nevents ? r->nevents : 1), sizeof *r->events);
  r->fences = gf_calloc((size_t)(2 * r->nstreams) + 1, sizeof *r->fences);
  if (!r->streams || !r->events || !r->fences)
    return gf_oom(r->diag, "creating the streams and events");
  for (int s = 0; s < r->nstreams && st == GF_OK; s++)
    if (b->ops->stream_create(b, gf_plan_stream_priority(r->plan, s), &r->streams[s]) != GF_OK)
      st = gf_diag_error(r->diag, GF_INTERNAL, "cannot create stream %s: %s",
                         gf_plan_stream_name(r->plan, s), b->error);
  for (int e = 0; e < r->nevents && st == GF_OK; e++)
    if (b->ops->event_create(b, &r->events[e]) != GF_OK)
      st = gf_diag_error(r->diag, GF_INTERNAL, "cannot create an event: %s", b->error);
  for (int e = 0; e < 2 * r->nstreams && st == GF_OK; e++)
    if (b->ops->event_create(b, &r->fences[e]) != GF_OK)
      st = gf_diag_error(r->diag, GF_INTERNAL, "cannot create an event: %s", b->error);
  return st;
}

static void destroy_streams_and_events(run *r) {
  gf_backend *b = r->b;
  for (int e = 0; e < r->nevents; e++)
    if (r->events && r->events[e]) b->ops->event_destroy(b, r->events[e]);
  for (int e = 0; e < 2 * r->nstreams; e++)
    if (r->fences && r->fences[e]) b->ops->event_destroy(b, r->fences[e]);
  for (int s = 0; s < r->nstreams; s++)
    if (r->streams && r->streams[s]) b->ops->stream_destroy(b, r->streams[s]);
  free(r->events);
  free(r->fences);
  free(r->streams);
}

/* The tasks' names for a profiler's ranges (NVTX, roctx), given once. */
static gf_status name_tasks(run *r) {
  const char **names = gf_calloc((size_t)r->wf->ntasks + 1, sizeof *names);
  if (!names) return gf_oom(r->diag, "naming the tasks");
  for (int t = 0; t < r->wf->ntasks; t++) names[t] = r->wf->tasks[t].name;
  r->b->ops->name_tasks(r->b, names, r->wf->ntasks);
  free(names);
  return GF_OK;
}

/* The progress line, on stderr; NULL (no progress) when out of memory. */
static gf_progress *start_progress(run *r, const gf_run_options *options) {
  double dt = 0;
  for (int p = 0; p < r->wf->nparams; p++)
    if (strcmp(r->wf->params[p].name, "dt") == 0) dt = r->wf->params[p].value;
  return gf_progress_create(stderr, isatty(fileno(stderr)),
                            options->progress_s > 0 ? options->progress_s : 10, r->wf->name,
                            r->wf->steps, dt);
}

/* Under MPI, at every FENCE_STEPS-th step: reads the vote posted at the
 * previous one (a maximum over the ranks of why each wants to stop) and
 * posts this rank's. Every rank reads the same result at the same step, so
 * a signal or a failed check on any rank stops them all at one step
 * boundary (*stop 1). */
static gf_status vote(run *r, int64_t n, int *stop, int *stop_signal) {
  int value = 0, from = 0;
  if (gf_comm_vote_pending(r->comm) && gf_comm_vote_result(r->comm, &value, &from) != GF_OK)
    return gf_diag_error(r->diag, GF_INTERNAL, "the ranks' stop vote at step %" PRId64 " failed",
                         n);
  if (value == GF_DIVERGED) {
    *stop = 1;
    if (from != gf_comm_rank(r->comm))
      snprintf(r->check_message, sizeof r->check_message,
               "the check failed on rank %d (its message names the field and cell)", from);
    return GF_DIVERGED;
  }
  if (value) {
    *stop = 1;
    *stop_signal = value;
    return GF_OK;
  }
  if (gf_comm_vote_post(r->comm, r->stop_vote) != GF_OK)
    return gf_diag_error(r->diag, GF_INTERNAL, "the ranks' stop vote at step %" PRId64 " failed",
                         n);
  return GF_OK;
}

/* A checkpoint at the boundary before step n: every stream drained, a check
 * still in flight read first (a blown-up field is never checkpointed). */
static gf_status take_checkpoint(run *r, int64_t n) {
  gf_backend *b = r->b;
  gf_status st = replay_flush(r);
  int64_t t0 = now_ns();
  if (st == GF_OK && b->ops->synchronize(b) != GF_OK)
    st = gf_diag_error(r->diag, GF_INTERNAL, "checkpoint at step %" PRId64 ": %s", n, b->error);
  if (st == GF_OK) st = check_resolve(r);
  if (st == GF_OK) st = flush_batches(r, n - 1);
  for (int t = 0; st == GF_OK && t < gf_program_temp_count(r->program); t++)
    if (r->temps[t]) /* no task kind keeps one across steps today */
      st = gf_diag_error(r->diag, GF_INTERNAL,
                         "checkpoint at step %" PRId64 ": a temporary lives across the step", n);
  if (st == GF_OK) st = gf_checkpoint_write(&r->ck, n, r->diag);
  if (st == GF_OK) r->checkpoint_step = n;
  r->backend_ns += now_ns() - t0;
  return st;
}

/* The loop: every step of every segment, compiling the next stretch of
 * steps when the program ends before the loop does. Stops at a signal (at a
 * step boundary) or at the first failure; *steps_run counts the steps done. */
static gf_status run_steps(run *r, const gf_run_options *options, int64_t *steps_run,
                           int *stop_signal, gf_progress *progress) {
  const gf_workflow *wf = r->wf;
  gf_status st = GF_OK;
  int64_t n = 0, every = wf->checkpoint_every, step_start = now_ns();
  while (n < wf->steps && st == GF_OK) {
    if (n == gf_program_end(r->program) &&
        (st = gf_program_compile(r->program, n, GF_VALIDATE_MAX_STEPS, r->diag)) != GF_OK)
      break;
    int nsegments;
    const gf_segment *segments = gf_program_segments(r->program, &nsegments);
    for (int s = 0; s < nsegments && st == GF_OK; s++) {
      const gf_segment *seg = &segments[s];
      for (int64_t k = 0; k < seg->steps && st == GF_OK; k++, n++) {
        if (n < r->first_step) continue;       /* a restart: done before the checkpoint */
        if (options->stop && *options->stop) { /* a step boundary: stop here */
          if (!r->stop_vote && gf_comm_size(r->comm) > 1) r->stop_vote = (int)*options->stop;
          if (gf_comm_size(r->comm) == 1) {
            *stop_signal = (int)*options->stop;
            if (*stop_signal == SIGUSR1 && (st = take_checkpoint(r, n)) != GF_OK) *stop_signal = 0;
            return st;
          }
        }
        if (every && n > r->first_step && n % every == 0 && (st = take_checkpoint(r, n)) != GF_OK)
          break;
        st = run_body(r, seg->bodies[k % seg->period], n);
        if (st == GF_OK) *steps_run = n + 1;
        if (st == GF_OK) st = fence_step(r, n);
        if (st == GF_OK && r->check_results && r->stop_vote != GF_DIVERGED) st = check_step(r, n);
        if (st == GF_DIVERGED && gf_comm_size(r->comm) > 1) { /* the ranks stop together */
          r->stop_vote = GF_DIVERGED;
          st = GF_OK;
        }
        if (st == GF_OK && gf_comm_size(r->comm) > 1 && (n + 1) % FENCE_STEPS == 0) {
          int stop = 0;
          st = vote(r, n, &stop, stop_signal);
          if (stop) return st;
        }
        if (progress)
          gf_progress_update(progress, n + 1, r->points, gf_writer_bytes_written(r->writer));
        int64_t step_end = now_ns();
        gf_durations_add(&r->host_steps, step_end - step_start);
        step_start = step_end;
      }
    }
  }
  return st;
}

/* replay_walk's end of a run: with `capture`, captured into a free place of
 * the cache unless there already (*full once no place is left); without,
 * only its launches counted into *longest. */
static gf_status replay_prepare_run(run *r, int capture, int *full, int *longest) {
  replay *rp = &r->replay;
  int launches = 0;
  for (int i = 0; i < rp->npending; i++) launches += rp->pending[i].in->kind == GF_I_LAUNCH;
  if (launches > *longest) *longest = launches;
  if (!capture) rp->npending = 0, rp->key_len = 0;
  if (!rp->npending || *full) return GF_OK;
  uint64_t hash = replay_hash(rp->key, rp->key_len);
  replay_graph *g = replay_find(rp, hash);
  for (int i = 0; i < REPLAY_CACHE && !g; i++)
    if (!rp->cache[i].graph) g = &rp->cache[i];
  gf_status st = GF_OK;
  if (!g) {
    *full = 1;
  } else if (!g->graph) {
    unsigned char *key = gf_malloc(rp->key_len);
    st = key ? replay_capture(r, NULL, &g->graph) : gf_oom(r->diag, "preparing a graph");
    if (st == GF_OK) {
      memcpy(key, rp->key, rp->key_len);
      g->key = key, g->key_len = rp->key_len, g->hash = hash;
      rp->prepared++;
    } else {
      free(key);
    }
  }
  for (int i = 0; i < rp->npending; i++) /* as a launch would leave them */
    if (rp->pending[i].in->kind == GF_I_RECORD) rp->in_graph[rp->pending[i].in->event] = 1;
  rp->npending = 0, rp->key_len = 0;
  return st;
}

/* Whether the walk before the loop may hold back an instruction of a
 * capture region: not one whose addresses the loop only knows when it gets
 * there (a staging buffer, its event, a temporary of the pool). */
static int walkable(const gf_instr *in) {
  if (in->kind == GF_I_ALLOC || in->kind == GF_I_FREE || (in->kind == GF_I_RECORD && in->event < 0))
    return 0;
  if (in->kind == GF_I_LAUNCH) return in->ntemps == 0;
  if (in->kind == GF_I_COPY)
    return in->src.kind != GF_OPND_STAGED && in->dst.kind != GF_OPND_STAGED &&
           in->src.kind != GF_OPND_BATCH && in->dst.kind != GF_OPND_BATCH &&
           in->src.kind != GF_OPND_TEMP && in->dst.kind != GF_OPND_TEMP;
  return 1;
}

/* Walks the steps as the loop will, holding back the instructions of
 * capture regions and ending runs where the loop does (a host instruction,
 * the fences, the check's scans and readings), carrying nothing out; with
 * `capture`, each distinct run's graph is captured and instantiated without
 * being launched (replay_prepare_run), and *longest is the most launches
 * of a run. */
static gf_status replay_walk(run *r, int capture, int *longest) {
  replay *rp = &r->replay;
  const gf_workflow *wf = r->wf;
  int nsegments;
  const gf_segment *segments = gf_program_segments(r->program, &nsegments);
  int64_t n = 0, check_pending = -1;
  gf_status st = GF_OK;
  int full = 0;
  for (int s = 0; s < nsegments && st == GF_OK && !full; s++)
    for (int64_t k = 0; k < segments[s].steps && st == GF_OK && !full; k++, n++) {
      if (n < r->first_step) continue;
      const gf_body *body = gf_program_body(r->program, segments[s].bodies[k % segments[s].period]);
      int capturing = 0;
      for (int i = 0; i < body->ninstrs && st == GF_OK; i++) {
        const gf_instr *in = &body->instrs[i];
        if (in->kind == GF_I_CAPTURE_BEGIN || in->kind == GF_I_CAPTURE_END) {
          capturing = in->kind == GF_I_CAPTURE_BEGIN;
          continue;
        }
        if (capturing && walkable(in)) {
          st = rp->npending < REPLAY_MAX_INSTRS ? GF_OK
                                                : replay_prepare_run(r, capture, &full, longest);
          if (st == GF_OK) st = replay_defer(r, in, n);
          continue;
        }
        st = replay_prepare_run(r, capture, &full, longest); /* issued as it comes: run ends */
        if (in->kind == GF_I_RECORD && in->event >= 0)       /* as issue_eager leaves them */
          rp->in_graph[in->event] = 0, rp->eager_recorded[in->event] = 1;
      }
      /* where the loop ends a run: fence_step, then check_step */
      int ends = (n + 1) % r->fence_steps == 0;
      if (r->check_results) {
        int resolve, due;
        check_when(r, n, check_pending, &resolve, &due);
        if (resolve) check_pending = -1;
        if (due) check_pending = wf->check.lagged ? n : -1;
        ends |= resolve || due;
      }
      if (ends && st == GF_OK) st = replay_prepare_run(r, capture, &full, longest);
    }
  if (st == GF_OK) st = replay_prepare_run(r, capture, &full, longest);
  rp->npending = 0, rp->key_len = 0;
  memset(rp->in_graph, 0, (size_t)(r->nevents ? r->nevents : 1));
  memset(rp->eager_recorded, 0, (size_t)(r->nevents ? r->nevents : 1));
  return st;
}

/* Whether a launch's scalars may be evaluated before the loop reaches its
 * step: it asks no hook, or every hook of the workflow is pure (answered
 * from gf_eval_prepare's table). */
static int scalars_known_ahead(const gf_workflow *wf, const gf_instr *in) {
  int asks_hook = 0, impure = 0;
  for (int p = 0; p < in->nparams; p++) asks_hook |= gf_expr_calls_hook(in->params[p].expr);
  for (int h = 0; asks_hook && h < wf->nhooks; h++) impure |= !wf->hooks[h].pure;
  return !impure;
}

/* Before the loop's clock, where the steps' scalars are known ahead (no
 * launch asks an impure hook) and every step is compiled, without
 * checkpoints: a first walk (replay_walk) measures the runs. Where none
 * holds REPLAY_MIN_LAUNCHES launches (the seed with a copy a plane: one
 * kernel between two hand-offs), a graph's launch and the events around it
 * would cost more than the launches they save, and the steps are issued as
 * under events. Otherwise a second walk captures and instantiates the
 * graph of each distinct run, up to REPLAY_CACHE, and the loop finds them
 * in the cache, as a hand-written graph loop is instantiated before its
 * timer. A run the walk could not see (one holding a staging buffer, a
 * stop, a graph the cache could not hold) is captured in the loop as
 * before: a graph is only ever launched for a run with its exact key. */
static gf_status replay_prepare_graphs(run *r) {
  replay *rp = &r->replay;
  const gf_workflow *wf = r->wf;
  if (!rp->on || wf->checkpoint_every || gf_program_end(r->program) < wf->steps) return GF_OK;
  for (int i = 0; i < gf_program_body_count(r->program); i++) {
    const gf_body *body = gf_program_body(r->program, i);
    for (int k = 0; k < body->ninstrs; k++)
      if (body->instrs[k].kind == GF_I_LAUNCH && !scalars_known_ahead(wf, &body->instrs[k]))
        return GF_OK;
  }
  int64_t t0 = now_ns();
  int longest = 0;
  gf_status st = replay_walk(r, 0, &longest);
  if (st == GF_OK && longest < REPLAY_MIN_LAUNCHES) {
    rp->on = 0;
    rp->off_why = "no run between two host instructions holds " GF_STR(
        REPLAY_MIN_LAUNCHES) " launches, which a graph would not speed up";
    r->fence_steps = FENCE_STEPS;
    return GF_OK;
  }
  if (st == GF_OK) st = replay_walk(r, 1, &longest);
  rp->prepared_s = (double)(now_ns() - t0) / 1e9;
  rp->captures = 0; /* the loop's own, from here */
  return st;
}

/* The kernels' code, loaded before the loop's clock (backend.h's
 * load_kernel), as a hand-written program launches its kernels once before
 * its timer: each launch of each body with the scalars of the first step
 * that runs the body, and the step's scratch fields, not taken yet, as
 * NULL (loading captures a launch and runs nothing, so nothing reads them;
 * left out, a run with per-step temporaries loaded its kernel in the
 * loop). A launch whose scalars are not known ahead (scalars_known_ahead)
 * loads at its first launch. */
static void load_kernels(run *r) {
  gf_backend *b = r->b;
  if (!b->ops->load_kernel) return;
  int nsegments;
  const gf_segment *segments = gf_program_segments(r->program, &nsegments);
  char *loaded = gf_calloc((size_t)gf_program_body_count(r->program) + 1, 1);
  for (int s = 0; s < nsegments; s++) {
    const gf_segment *g = &segments[s];
    const int64_t from = r->first_step > g->first ? r->first_step - g->first : 0;
    for (int64_t k = from; k < g->steps && k < from + g->period; k++) {
      const int at = g->bodies[k % g->period];
      if (loaded[at]) continue;
      loaded[at] = 1;
      const gf_body *body = gf_program_body(r->program, at);
      const int64_t n = g->first + k;
      for (int i = 0; i < body->ninstrs; i++) {
        const gf_instr *in = &body->instrs[i];
        if (in->kind != GF_I_LAUNCH || !scalars_known_ahead(r->wf, in)) continue;
        for (int t = 0; t < in->ntemps; t++)
          memset((unsigned char *)in->args + in->temps[t].offset, 0, sizeof(void *));
        if (set_params(r, in, n) == GF_OK) b->ops->load_kernel(b, in->kernel, in->args);
      }
    }
  }
  free(loaded);
}

/* The host calls' set-up (gf_instr.prepare), in body order. */
static gf_status prepare_host_calls(run *r) {
  gf_status st = GF_OK;
  for (int b = 0; b < gf_program_body_count(r->program) && st == GF_OK; b++) {
    const gf_body *body = gf_program_body(r->program, b);
    for (int i = 0; i < body->ninstrs && st == GF_OK; i++) {
      const gf_instr *in = &body->instrs[i];
      if (in->kind != GF_I_HOST_CALL || !in->prepare) continue;
      r->host.stream = in->stream;
      st = in->prepare(&r->host, r->wf, in->task, r->first_step, in->call_data);
    }
  }
  return st;
}

/* The steps, then what a graph still holds back. */
static gf_status run_loop(run *r, const gf_run_options *options, int64_t *steps_run,
                          int *stop_signal, gf_progress *progress) {
  gf_status st = run_steps(r, options, steps_run, stop_signal, progress);
  gf_status flushed = replay_flush(r);
  return st != GF_OK ? st : flushed;
}

gf_status gf_exec_run(const gf_workflow *wf, gf_program *program, gf_eval *eval, gf_backend *b,
                      const gf_run_options *options, gf_diag *diag) {
  run r = {.wf = wf,
           .program = program,
           .b = b,
           .diag = diag,
           .eval = eval,
           .staged = {.slot = -1},
           .check_pending = -1,
           .checkpoint_step = -1,
           .fence_steps = FENCE_STEPS};
  r.plan = gf_program_plan(program);
  r.comm = options->comm;
  r.host.eval = eval;
  r.host.comm = options->comm;
  r.host.run = &r;
  r.host.stream = -1;
  r.nstreams = gf_plan_stream_count(r.plan);
  r.nevents = gf_program_event_count(program);
  r.timing = gf_calloc((size_t)wf->ntasks, sizeof *r.timing);
  r.count = gf_calloc((size_t)wf->ntasks, sizeof *r.count);
  r.temps = gf_calloc((size_t)gf_program_temp_count(program) + 1, sizeof *r.temps);
  r.temps_last = gf_calloc((size_t)gf_program_temp_count(program) + 1, sizeof *r.temps_last);
  r.buffers = gf_calloc((size_t)gf_program_temp_count(program) + 1, sizeof *r.buffers);
  r.host_busy_ns = gf_calloc((size_t)wf->ntasks + 1, sizeof *r.host_busy_ns);
  r.host.buffers = r.buffers;
  r.sample = options->timing_sample > 1 ? options->timing_sample : 1;
  r.timed_now = gf_calloc((size_t)wf->ntasks + 1, 1);
  r.timed_count = gf_calloc((size_t)wf->ntasks + 1, sizeof *r.timed_count);
  gf_durations_init(&r.host_steps);
  r.trace_first = options->trace_first;
  r.trace_end = options->trace_end;
  /* The host's own work is timed for the trace alone. */
  unsigned host_kinds = (1u << GF_TIMED_HOST_WAIT) | (1u << GF_TIMED_HOST_CALL) |
                        (1u << GF_TIMED_WRITE) | (1u << GF_TIMED_MEMORY) | (1u << GF_TIMED_STAGING);
  b->sink = (gf_op_sink){run_sink, &r, options->trace_path ? host_kinds : 0,
                         r.sample > 1 ? run_times : NULL};
  gf_status st = r.timing && r.count && r.temps && r.temps_last && r.timed_now && r.timed_count &&
                         r.buffers && r.host_busy_ns && r.host_steps.counts &&
                         gf_comm_batch_create(4, &r.host.batch) == GF_OK
                     ? GF_OK
                     : gf_oom(diag, "starting the run");
  int largest_batch = 1;
  for (int i = 0; i < wf->nfiles; i++)
    if (wf->files[i].batch > largest_batch) largest_batch = wf->files[i].batch;
  r.flushed_through = gf_calloc((size_t)wf->nfiles + 1, sizeof *r.flushed_through);
  r.batches = gf_calloc((size_t)wf->nfiles + 1, sizeof *r.batches);
  for (int i = 0; r.batches && i < wf->nfiles; i++) r.batches[i].slot = -1;
  r.batch_planes = gf_calloc(2 * (size_t)largest_batch, sizeof *r.batch_planes);
  if (st == GF_OK && (!r.flushed_through || !r.batch_planes || !r.batches))
    st = gf_oom(diag, "starting the run");
  if (st == GF_OK && options->trace_path) st = start_trace(&r, options);
  if (st == GF_OK) st = gf_memory_create(b, wf, init_field, eval, diag, &r.memory);
  if (st == GF_OK) st = create_streams_and_events(&r);
  if (st == GF_OK && b->ops->name_tasks) st = name_tasks(&r);
  if (st == GF_OK)
    st = gf_writer_create(b, r.memory, wf, options->out_dir, options->force, r.comm, diag,
                          &r.writer);
  r.ck = (gf_checkpoint_run){.wf = wf,
                             .backend = b,
                             .memory = r.memory,
                             .writer = r.writer,
                             .lua = gf_eval_lua(eval),
                             .out_dir = options->out_dir,
                             .overrides = options->overrides,
                             .noverrides = options->noverrides,
                             .rank = gf_comm_rank(r.comm),
                             .nranks = gf_comm_size(r.comm)};
  if (st == GF_OK && gf_comm_size(r.comm) > 1 && (wf->checkpoint_every || options->restart))
    st = gf_diag_error(diag, GF_USAGE,
                       "a run split over %d ranks does not checkpoint or restart yet: run "
                       "checkpointed jobs on one process",
                       gf_comm_size(r.comm));
  if (options->restart) r.first_step = gf_checkpoint_step(options->restart);
  for (int i = 0; r.flushed_through && i < wf->nfiles; i++) /* the first run wrote those */
    r.flushed_through[i] = r.first_step - 1;
  if (st == GF_OK) st = gf_checkpoint_start(&r.ck, options->restart, diag);
  if (st == GF_OK) st = check_prepare(&r);
  if (st == GF_OK) st = replay_prepare(&r, options);
  if (st == GF_OK) st = allocate_buffers(&r);
  if (st == GF_OK) st = gf_program_bind(program, instance_address, r.memory, r.buffers, diag);

  double wall_s = 0;
  int64_t t0 = now_ns(), steps_run = 0;
  int stop_signal = 0; /* the signal that stopped the loop */
  steps_run = r.first_step;
  /* The steps are planned before the clock starts, as a hand-written loop
   * is compiled before its timer (about 1 us a step on the host: 5% of a
   * 256^2 step on two cores); a run past GF_VALIDATE_MAX_STEPS plans the
   * rest in its loop. */
  if (st == GF_OK && gf_program_end(program) == 0)
    st = gf_program_compile(program, 0, GF_VALIDATE_MAX_STEPS, diag);
  /* Likewise the pure hooks' results for the steps (ricker(n)): a table
   * lookup in the loop instead of a Lua call. */
  if (st == GF_OK) gf_eval_prepare(eval, r.first_step, wf->steps - r.first_step);
  if (st == GF_OK) st = prepare_host_calls(&r);
  if (st == GF_OK) load_kernels(&r);
  if (st == GF_OK) st = replay_prepare_graphs(&r);
  /* The ranks start their clocks together: what set-up took on one rank
   * more than on another is not the loop's time of its neighbours. */
  if (st == GF_OK && gf_comm_size(r.comm) > 1) gf_comm_barrier(r.comm);
  if (st == GF_OK) {
    t0 = now_ns();
    gf_progress *progress = options->quiet ? NULL : start_progress(&r, options);
    st = run_loop(&r, options, &steps_run, &stop_signal, progress);
    r.issued_ns = now_ns() - t0;
    gf_progress_free(progress);
  }
  /* A stopped run keeps its files; a failed one does not. */
  int keep = st == GF_OK || st == GF_DIVERGED;
  int64_t sync_start = now_ns();
  /* The batches still in the device-side rings, inside the loop's time:
   * copying the snapshots out is part of it. */
  if (keep && r.writer) {
    gf_status flushed = GF_OK;
    if (b->ops->synchronize(b) != GF_OK)
      st = gf_diag_error(diag, GF_INTERNAL, "finishing the time loop: %s", b->error);
    else if ((flushed = flush_batches(&r, steps_run - 1)) != GF_OK)
      st = flushed;
    keep = st == GF_OK || st == GF_DIVERGED;
  }
  if (keep && b->ops->synchronize(b) != GF_OK)
    st = gf_diag_error(diag, GF_INTERNAL, "finishing the time loop: %s", b->error);
  else if (!keep)
    b->ops->synchronize(b); /* let queued work drain before freeing */
  keep = st == GF_OK || st == GF_DIVERGED;
  /* A lagged check still in flight: its verdict counts, over a signal's. */
  gf_status verdict = keep ? check_resolve(&r) : GF_OK;
  if (gf_comm_size(r.comm) > 1) {
    /* A rank that failed has said why; it ends the job rather than leave
     * the others waiting in a collective. */
    if (!keep) gf_comm_abort(r.comm, (int)st);
    int fine = verdict == GF_OK && st == GF_OK;
    if (!gf_comm_all(r.comm, fine) && fine) { /* another rank's last check failed */
      verdict = GF_DIVERGED;
      snprintf(r.check_message, sizeof r.check_message,
               "the check failed on another rank (its message names the field and cell)");
    }
  }
  if (verdict != GF_OK) {
    st = verdict;
    if (st == GF_DIVERGED) stop_signal = 0;
    keep = st == GF_DIVERGED;
  }
  r.backend_ns += now_ns() - sync_start;
  wall_s = (double)(now_ns() - t0) / 1e9;

  const char *signal_name = stop_signal == SIGINT    ? "SIGINT"
                            : stop_signal == SIGUSR1 ? "SIGUSR1"
                                                     : "SIGTERM";
  if (r.writer) {
    gf_run_info info = {.backend = b->name,
                        .device = b->description,
                        .resolved_yaml = keep ? gf_workflow_resolved_yaml(wf) : NULL,
                        .end = stop_signal         ? GF_END_INTERRUPTED
                               : st == GF_DIVERGED ? GF_END_CHECK
                                                   : GF_END_COMPLETE,
                        .steps_run = steps_run,
                        .stopped_by = stop_signal ? signal_name : r.check_message};
    run_end end = {&r, options, steps_run, wall_s, t0, 0};
    gf_status fin = gf_writer_finish(r.writer, keep, &info, write_report, &end);
    free(info.resolved_yaml);
    if (fin != GF_OK && end.reported) { /* the outputs they describe were taken back */
      gf_remove_file(options->out_dir, "timings.json");
      gf_remove_file(options->out_dir, "run.json");
    }
    if (keep && fin != GF_OK) st = fin; /* outputs that cannot be written say so first */
    if (st == GF_OK && !stop_signal && steps_run == wf->steps)
      st = gf_checkpoint_finish(&r.ck, diag); /* a checkpoint left has nothing to continue */
  }
  if (r.writer && (st == GF_DIVERGED || (st == GF_OK && stop_signal))) {
    char *summary = gf_writer_summary(r.writer); /* NULL: out of memory, said without it */
    const char *what = summary && steps_run > 0 ? summary : "";
    char holds[96] = "outputs hold no steps";
    if (steps_run > 0)
      snprintf(holds, sizeof holds, "outputs hold steps 0 to %" PRId64 "%s", steps_run - 1,
               what[0] ? ": " : "");
    /* Rank 0 says it for the job; every rank exits with the same status. */
    int lead = gf_comm_rank(r.comm) == 0;
    if (stop_signal == SIGUSR1 && gf_comm_size(r.comm) == 1)
      st = gf_diag_error(diag, GF_CHECKPOINTED,
                         "checkpointed at step %" PRId64
                         " (SIGUSR1) and stopped; %s%s; continue with --restart %s",
                         steps_run, holds, what, options->out_dir);
    else if (stop_signal) {
      st = stop_signal == SIGINT ? GF_INTERRUPTED : GF_TERMINATED;
      if (lead)
        gf_diag_error(diag, st, "interrupted by %s at step %" PRId64 "; %s%s", signal_name,
                      steps_run, holds, what);
    } else if (lead)
      gf_diag_error(diag, GF_DIVERGED, "stopped by the check after step %" PRId64 "; %s%s",
                    steps_run - 1, holds, what);
    free(summary);
  }

  if (r.trace) { /* the backend is idle: every operation has been reported */
    gf_status written = gf_trace_write(r.trace, options->trace_path, r.comm, diag);
    if (st == GF_OK) st = written;
  }
  host_states_release(&r.host, wf->ntasks); /* the backend is idle */
  gf_writer_destroy(r.writer);
  check_release(&r);
  replay_release(&r);
  destroy_streams_and_events(&r);
  gf_memory_destroy(r.memory);
  free(r.count);
  gf_durations_free(&r.host_steps);
  free(r.flushed_through);
  free(r.batches);
  free(r.batch_planes);
  free(r.temps);
  free(r.temps_last);
  free(r.buffers); /* their memory goes with r.memory */
  free(r.host_busy_ns);
  gf_comm_batch_free(r.host.batch);
  free(r.timed_now);
  free(r.timed_count);
  b->sink = (gf_op_sink){NULL, NULL, 0, NULL};
  free_trace(&r);
  free(r.timing);
  return st;
}
