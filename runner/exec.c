/* exec.c - the time loop on a backend. */
#include "exec.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

/* The host may issue at most 2 x FENCE_STEPS steps ahead of the streams: at
 * every FENCE_STEPS-th step it records a fence on every stream and waits for
 * the fences of 2 x FENCE_STEPS steps back. Enough lead to keep a device
 * busy; little enough that a stop (a signal, the check) drains in moments
 * rather than after the hundreds of steps the stream queues would hold. */
#define FENCE_STEPS 16

typedef struct task_exec {
  unsigned char args[GF_MAX_KERNEL_ARGS_SIZE]; /* kernel arguments; constants filled once */
  int ref_arg[GF_MAX_TASK_REFS];               /* field reference -> index into task->args */
  int64_t points;                              /* grid points one kernel call updates */
} task_exec;

typedef struct run {
  const gf_workflow *wf;
  gf_plan *plan;
  gf_backend *b;
  gf_diag *diag;
  void ***inst; /* [field][ring instance] */
  gf_stream **streams;
  gf_event **events;      /* [stream * slots + slot] */
  gf_event **user_events; /* the workflow's own (`events:`) */
  int nstreams, nslots;
  gf_writer *writer;
  task_exec *tasks;
  int64_t *count;         /* instances run, per task */
  gf_task_timing *timing; /* busy time per task, summed by the backend's sink */
  int64_t backend_ns;     /* host time inside backend calls during the loop */
  int64_t task_ops;
  gf_event **fences;       /* [2][stream]: the two newest fence sets */
  int fence_sets_used;     /* how many of the two hold a recording */
  void *check_buffer;      /* pinned host copy of one checked instance */
  char check_message[512]; /* why the check stopped the run */
} run;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- memory ---------------------------------------------------------------- */

/* Host-side spaces and device-side spaces draw on different memory. */
static int on_device(gf_space space) {
  return space == GF_SPACE_DEVICE || space == GF_SPACE_MANAGED || space == GF_SPACE_POOL;
}

/* Stops before allocating anything when the fields (and the output staging
 * buffers, pinned host memory) cannot fit, naming the first that does not and
 * how much is missing. Host-side and device-side spaces are counted apart. */
static gf_status check_capacity(run *r) {
  const gf_workflow *wf = r->wf;
  size_t staging_bytes = 0;
  for (int t = 0; t < wf->ntasks; t++)
    if (wf->tasks[t].kind == GF_TASK_OUTPUT &&
        wf->fields[wf->tasks[t].from.field].bytes > staging_bytes)
      staging_bytes = wf->fields[wf->tasks[t].from.field].bytes;
  for (int side = 1; side >= 0; side--) { /* the device first: it is the scarcer */
    size_t avail = r->b->ops->bytes_free(r->b, side ? GF_SPACE_DEVICE : GF_SPACE_HOST);
    if (avail == 0) continue; /* unknown */
    double need = 0;
    for (int f = 0; f <= wf->nfields; f++) {
      int staging = f == wf->nfields;
      gf_space space = staging ? GF_SPACE_PINNED : wf->fields[f].space;
      if ((on_device(space) && !r->b->can_run_kernels_on_host_memory) != side) continue;
      double bytes = staging ? (double)staging_bytes * wf->staging
                             : (double)wf->fields[f].bytes * wf->fields[f].ring;
      need += bytes;
      if (need <= (double)avail) continue;
      char a[32], b[32], c[32];
      gf_format_bytes(bytes, a, sizeof a);
      gf_format_bytes(need - (double)avail, b, sizeof b);
      gf_format_bytes((double)avail, c, sizeof c);
      if (staging)
        return gf_diag_error(r->diag, GF_INTERNAL,
                             "the %d output staging buffers (%s of pinned memory) do not fit: %s "
                             "missing, %s free; lower memory.staging",
                             wf->staging, a, b, c);
      return gf_diag_at(r->diag, wf->fields[f].loc, GF_INTERNAL,
                        "field '%s' (%s of %s memory) does not fit: %s missing, %s free",
                        wf->fields[f].name, a, gf_space_name(space), b, c);
    }
  }
  return GF_OK;
}

/* The cell of a field at C-order offset i. */
static void cell_of(const gf_field *field, int64_t i, int64_t index[GF_MAX_DIMS]) {
  for (int d = field->ndim - 1; d >= 0; d--) {
    index[d] = i % field->shape[d];
    i /= field->shape[d];
  }
}

static void init_value_at(const gf_workflow *wf, const gf_field *field, int64_t i, double *vars) {
  int64_t index[GF_MAX_DIMS] = {0};
  cell_of(field, i, index);
  for (int d = 0; d < field->ndim; d++) {
    vars[GF_VAR_I0 + d] = (double)index[d];
    vars[GF_VAR_X0 + d] = (double)index[d] * wf->spacing[d];
  }
}

/* Computes a field's initial value on the host and copies it into every instance. */
static gf_status init_field(run *r, int f, gf_stream *stream) {
  const gf_workflow *wf = r->wf;
  const gf_field *field = &wf->fields[f];
  void *host = gf_xmalloc(field->bytes);
  gf_status st = GF_OK;
  double vars[GF_VAR_COUNT] = {0};
  for (int64_t i = 0; i < field->elems && st == GF_OK; i++) {
    double v = field->init_value;
    if (field->init_kind != GF_INIT_CONST) {
      init_value_at(wf, field, i, vars);
      if (field->init_kind == GF_INIT_EXPR) {
        gf_eval_ctx ctx = {.n = 0, .vars = vars};
        v = gf_expr_eval(field->init_expr, &ctx, &st);
      } else {
        double args[6] = {vars[GF_VAR_X0], vars[GF_VAR_X1], vars[GF_VAR_X2],
                          vars[GF_VAR_I0], vars[GF_VAR_I1], vars[GF_VAR_I2]};
        char context[128];
        snprintf(context, sizeof context, "initial value of field '%s'", field->name);
        st = gf_lua_call(wf->lua, wf->hooks[field->init_hook].lua_id, args, 6, &v,
                         wf->hooks[field->init_hook].name, context);
      }
    } else if (i > 0 && v == 0) {
      break; /* zeros: filled below */
    }
    if (field->dtype == GF_F64)
      ((double *)host)[i] = v;
    else
      ((float *)host)[i] = (float)v;
  }
  if (st == GF_OK && field->init_kind == GF_INIT_CONST && field->init_value == 0)
    memset(host, 0, field->bytes);
  for (int k = 0; k < field->ring && st == GF_OK; k++) {
    if (r->b->ops->copy_async(r->b, stream, r->inst[f][k], host, field->bytes,
                              (gf_tag){-1, -1, -1}) != GF_OK ||
        r->b->ops->stream_synchronize(r->b, stream) != GF_OK)
      st = gf_diag_error(r->diag, GF_INTERNAL, "initialising field '%s': %s", field->name,
                         r->b->error);
  }
  free(host);
  return st;
}

static gf_status allocate_fields(run *r) {
  const gf_workflow *wf = r->wf;
  r->inst = gf_xcalloc((size_t)wf->nfields, sizeof(void **));
  for (int f = 0; f < wf->nfields; f++) {
    const gf_field *field = &wf->fields[f];
    r->inst[f] = gf_xcalloc((size_t)field->ring, sizeof(void *));
    for (int k = 0; k < field->ring; k++)
      if (r->b->ops->alloc(r->b, field->space, field->bytes, NULL, &r->inst[f][k]) != GF_OK) {
        char a[32];
        gf_format_bytes((double)field->bytes, a, sizeof a);
        size_t free_now = r->b->ops->bytes_free(r->b, field->space);
        char c[32];
        gf_format_bytes((double)free_now, c, sizeof c);
        return gf_diag_at(r->diag, field->loc, GF_INTERNAL,
                          "cannot allocate field '%s' instance %d (%s of %s memory, %s free): %s",
                          field->name, k, a, gf_space_name(field->space), c, r->b->error);
      }
  }
  return GF_OK;
}

static void free_fields(run *r) {
  if (!r->inst) return;
  for (int f = 0; f < r->wf->nfields; f++) {
    for (int k = 0; k < r->wf->fields[f].ring; k++)
      if (r->inst[f][k]) r->b->ops->free(r->b, r->wf->fields[f].space, r->inst[f][k], NULL);
    free(r->inst[f]);
  }
  free(r->inst);
}

/* ---- kernel arguments ------------------------------------------------------ */

static void prepare_tasks(run *r) {
  const gf_workflow *wf = r->wf;
  r->tasks = gf_xcalloc((size_t)wf->ntasks, sizeof *r->tasks);
  for (int t = 0; t < wf->ntasks; t++) {
    const gf_task *task = &wf->tasks[t];
    task_exec *te = &r->tasks[t];
    if (task->kind != GF_TASK_KERNEL) continue;
    int nref = 0;
    for (int a = 0; a < task->nargs; a++) {
      const gf_arg *arg = &task->args[a];
      unsigned char *dst = te->args + arg->param->offset;
      switch (arg->param->type) {
        case GF_PARAM_ARRAY: {
          const gf_field *field = &wf->fields[arg->ref.field];
          gf_array array = {
              .data = NULL, .dtype = field->dtype, .ndim = field->ndim, .halo = wf->halo};
          for (int d = 0; d < GF_MAX_DIMS; d++) {
            array.shape[d] = field->shape[d];
            array.spacing[d] = d < wf->ndim ? wf->spacing[d] : 1.0;
          }
          memcpy(dst, &array, sizeof array);
          te->ref_arg[nref++] = a;
          break;
        }
        case GF_PARAM_REAL:
          if (gf_expr_is_constant(arg->value)) {
            gf_status ignored = GF_OK;
            double v = gf_expr_eval(arg->value, &(gf_eval_ctx){0}, &ignored);
            memcpy(dst, &v, sizeof v);
          }
          break;
        case GF_PARAM_INT:
          if (gf_expr_is_constant(arg->value)) {
            gf_status ignored = GF_OK;
            int64_t v = (int64_t)gf_expr_eval(arg->value, &(gf_eval_ctx){0}, &ignored);
            memcpy(dst, &v, sizeof v);
          }
          break;
        case GF_PARAM_INDEX:
          memcpy(dst, arg->index, sizeof arg->index);
          break;
      }
    }
    te->points = task->kernel->points ? task->kernel->points(te->args) : 0;
  }
}

/* Fills the per-step parts of a kernel's arguments: instance pointers and
 * scalars that depend on n or call hooks. */
static gf_status step_args(run *r, int t, const gf_op *op, int64_t n) {
  const gf_task *task = &r->wf->tasks[t];
  task_exec *te = &r->tasks[t];
  int nref = 0;
  gf_status st = GF_OK;
  for (int a = 0; a < task->nargs; a++) {
    const gf_arg *arg = &task->args[a];
    unsigned char *dst = te->args + arg->param->offset;
    if (arg->param->type == GF_PARAM_ARRAY) {
      void *data = r->inst[arg->ref.field][op->inst[nref++]];
      memcpy(dst + offsetof(gf_array, data), &data, sizeof data);
    } else if ((arg->param->type == GF_PARAM_REAL || arg->param->type == GF_PARAM_INT) &&
               !gf_expr_is_constant(arg->value)) {
      double v = gf_plan_eval(r->plan, arg->value, t, n, &st);
      if (st != GF_OK) return st;
      if (arg->param->type == GF_PARAM_REAL) {
        memcpy(dst, &v, sizeof v);
      } else {
        int64_t i = (int64_t)v;
        memcpy(dst, &i, sizeof i);
      }
    }
  }
  return GF_OK;
}

/* ---- the loop -------------------------------------------------------------- */

static gf_status device_failure(run *r, const gf_op *op, int64_t n, const char *what) {
  const char *task = op->task >= 0 ? r->wf->tasks[op->task].name : "-";
  int stream = op->stream >= 0 ? op->stream : op->other;
  return gf_diag_error(r->diag, GF_INTERNAL,
                       "%s failed: task '%s', stream %s, step %" PRId64 ": %s", what, task,
                       gf_plan_stream_name(r->plan, stream), n, r->b->error);
}

static gf_status run_task(run *r, const gf_op *op, int64_t n) {
  const gf_workflow *wf = r->wf;
  const gf_task *task = &wf->tasks[op->task];
  gf_backend *b = r->b;
  gf_stream *stream = op->stream >= 0 ? r->streams[op->stream] : NULL;
  gf_tag tag = {op->task, n, op->stream};
  gf_status st;
  switch (task->kind) {
    case GF_TASK_KERNEL:
      if ((st = step_args(r, op->task, op, n)) != GF_OK) return st;
      if (b->ops->launch(b, stream, task->kernel, r->tasks[op->task].args, tag) != GF_OK)
        return device_failure(r, op, n, "kernel launch");
      return GF_OK;
    case GF_TASK_COPY:
      if (b->ops->copy_async(b, stream, r->inst[task->to.field][op->inst[1]],
                             r->inst[task->from.field][op->inst[0]],
                             wf->fields[task->from.field].bytes, tag) != GF_OK)
        return device_failure(r, op, n, "copy");
      return GF_OK;
    case GF_TASK_OUTPUT: {
      int slot;
      void *buffer;
      gf_event *ready;
      if ((st = gf_writer_acquire(r->writer, &slot, &buffer, &ready)) != GF_OK) return st;
      if (b->ops->copy_async(b, stream, buffer, r->inst[task->from.field][op->inst[0]],
                             wf->fields[task->from.field].bytes, tag) != GF_OK ||
          b->ops->event_record(b, ready, stream) != GF_OK) {
        gf_writer_submit(r->writer, slot, op->task, op->plane); /* returns the buffer */
        return device_failure(r, op, n, "output copy");
      }
      gf_writer_submit(r->writer, slot, op->task, op->plane);
      return GF_OK;
    }
    case GF_TASK_HOOK: {
      char context[160];
      snprintf(context, sizeof context, "task '%s', step %" PRId64, task->name, n);
      double arg = (double)n;
      return gf_lua_call(wf->lua, wf->hooks[task->hook].lua_id, &arg, 1, NULL,
                         wf->hooks[task->hook].name, context);
    }
  }
  return GF_OK;
}

static gf_status run_op(run *r, const gf_op *op, int64_t n) {
  gf_backend *b = r->b;
  int64_t t0 = now_ns();
  gf_status st = GF_OK;
  switch (op->kind) {
    case GF_OP_TASK:
      r->task_ops++;
      r->count[op->task]++;
      st = run_task(r, op, n);
      break;
    case GF_OP_RECORD:
      if (b->ops->event_record(b, r->events[op->stream * r->nslots + op->slot],
                               r->streams[op->stream]) != GF_OK)
        st = device_failure(r, op, n, "event record");
      break;
    case GF_OP_STREAM_WAIT:
      if (b->ops->stream_wait_event(b, r->streams[op->stream],
                                    r->events[op->other * r->nslots + op->slot]) != GF_OK)
        st = device_failure(r, op, n, "stream wait");
      break;
    case GF_OP_HOST_WAIT_EVENT:
      if (b->ops->event_synchronize(b, r->events[op->other * r->nslots + op->slot]) != GF_OK)
        st = device_failure(r, op, n, "event synchronize");
      break;
    case GF_OP_HOST_WAIT_STREAM:
      if (b->ops->stream_synchronize(b, r->streams[op->other]) != GF_OK)
        st = device_failure(r, op, n, "stream synchronize");
      break;
    case GF_OP_EVENT_RECORD:
      if (b->ops->event_record(b, r->user_events[op->slot], r->streams[op->stream]) != GF_OK)
        st = device_failure(r, op, n, "event record");
      break;
    case GF_OP_EVENT_WAIT:
      if (b->ops->stream_wait_event(b, r->streams[op->stream], r->user_events[op->slot]) != GF_OK)
        st = device_failure(r, op, n, "stream wait");
      break;
    case GF_OP_HOST_EVENT_WAIT:
      if (b->ops->event_synchronize(b, r->user_events[op->slot]) != GF_OK)
        st = device_failure(r, op, n, "event synchronize");
      break;
  }
  r->backend_ns += now_ns() - t0;
  return st;
}

/* After step n: every FENCE_STEPS steps, waits until the streams have done
 * the work of 2 x FENCE_STEPS steps back, then records new fences. */
static gf_status fence_step(run *r, int64_t n) {
  if ((n + 1) % FENCE_STEPS != 0) return GF_OK;
  gf_backend *b = r->b;
  int64_t t0 = now_ns();
  int set = (int)(((n + 1) / FENCE_STEPS) % 2);
  gf_event **fences = r->fences + (size_t)set * (size_t)r->nstreams;
  gf_status st = GF_OK;
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

/* Index of the first value the check refuses, or -1. */
static int64_t first_bad_value(const gf_field *field, const void *data, const gf_check *check,
                               double *value) {
  const double bound = check->max_abs;
  const int finite = check->finite;
  if (field->dtype == GF_F64) {
    const double *x = data;
    for (int64_t i = 0; i < field->elems; i++)
      if ((finite && !isfinite(x[i])) || fabs(x[i]) > bound) {
        *value = x[i];
        return i;
      }
  } else {
    const float *x = data;
    for (int64_t i = 0; i < field->elems; i++)
      if ((finite && !isfinite(x[i])) || fabsf(x[i]) > bound) {
        *value = x[i];
        return i;
      }
  }
  return -1;
}

/* After step n: waits for the backend, copies every instance of every checked
 * field to the host through the backend (the same path on every backend) and
 * scans it. GF_DIVERGED, with the message in r->check_message, at the first
 * value that is not finite or beyond max_abs. */
static gf_status check_fields(run *r, int64_t n) {
  const gf_workflow *wf = r->wf;
  const gf_check *check = &wf->check;
  gf_backend *b = r->b;
  gf_stream *stream = r->streams[0]; /* idle once the backend has synchronised */
  if (b->ops->synchronize(b) != GF_OK)
    return gf_diag_error(r->diag, GF_INTERNAL, "check at step %" PRId64 ": %s", n, b->error);
  for (int c = 0; c < check->nfields; c++) {
    int f = check->fields[c];
    const gf_field *field = &wf->fields[f];
    for (int k = 0; k < field->ring; k++) {
      if (b->ops->copy_async(b, stream, r->check_buffer, r->inst[f][k], field->bytes,
                             (gf_tag){-1, n, 0}) != GF_OK ||
          b->ops->stream_synchronize(b, stream) != GF_OK)
        return gf_diag_error(r->diag, GF_INTERNAL,
                             "check at step %" PRId64 ": copying field '%s' instance %d: %s", n,
                             field->name, k, b->error);
      double value = 0;
      int64_t at = first_bad_value(field, r->check_buffer, check, &value);
      if (at < 0) continue;
      char cell[96] = "";
      int64_t index[GF_MAX_DIMS] = {0};
      cell_of(field, at, index);
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

static gf_status allocate_check_buffer(run *r) {
  const gf_check *check = &r->wf->check;
  size_t bytes = 0;
  for (int c = 0; c < check->nfields; c++)
    if (r->wf->fields[check->fields[c]].bytes > bytes)
      bytes = r->wf->fields[check->fields[c]].bytes;
  if (!check->every || bytes == 0) return GF_OK;
  if (r->b->ops->alloc(r->b, GF_SPACE_PINNED, bytes, NULL, &r->check_buffer) != GF_OK)
    return gf_diag_at(r->diag, check->loc, GF_INTERNAL,
                      "cannot allocate the check's host buffer (%zu bytes): %s", bytes,
                      r->b->error);
  return GF_OK;
}

/* ---- report ---------------------------------------------------------------- */

/* wall_s: the time loop, until every kernel and copy has finished; flushed_s:
 * until the outputs are durable under their final names. */
static gf_status report(run *r, int64_t steps_run, double wall_s, double flushed_s,
                        const gf_run_options *options) {
  const gf_workflow *wf = r->wf;
  gf_backend *b = r->b;
  double points = 0, bytes = 0;
  int64_t kernel_calls = 0;
  for (int t = 0; t < wf->ntasks; t++) {
    if (wf->tasks[t].kind != GF_TASK_KERNEL) continue;
    int64_t count = r->count[t];
    points += (double)r->tasks[t].points * (double)count;
    bytes += (double)r->tasks[t].points * (double)count * wf->tasks[t].kernel->bytes_per_point;
    kernel_calls += count;
  }
  double overhead_us =
      r->task_ops ? ((double)(wall_s * 1e9) - (double)r->backend_ns) / 1e3 / (double)r->task_ops
                  : 0;
  if (overhead_us < 0) overhead_us = 0;

  char *j = NULL;
  size_t len = 0, cap = 0;
  gf_buf_printf(&j, &len, &cap, "{\n  \"workflow\": ");
  gf_json_string(&j, &len, &cap, wf->name);
  gf_buf_printf(&j, &len, &cap, ",\n  \"backend\": ");
  gf_json_string(&j, &len, &cap, b->name);
  gf_buf_printf(&j, &len, &cap, ",\n  \"device\": ");
  gf_json_string(&j, &len, &cap, b->description);
  gf_buf_printf(&j, &len, &cap,
                ",\n  \"schedule\": \"%s\",\n  \"steps\": %" PRId64
                ",\n  \"complete\": %s"
                ",\n  \"total_s\": %.9f,\n  \"flushed_s\": %.9f,\n"
                "  \"gpts_per_s\": %.6f,\n  \"effective_gb_per_s\": %.6f,\n"
                "  \"runner_overhead_us_per_task\": %.4f,\n  \"tasks\": [",
                gf_schedule_name(wf->schedule), steps_run,
                steps_run == wf->steps ? "true" : "false", wall_s, flushed_s, points / wall_s / 1e9,
                bytes / wall_s / 1e9, overhead_us);
  if (!options->quiet) {
    char of[48] = "";
    if (steps_run != wf->steps) snprintf(of, sizeof of, " of %" PRId64, wf->steps);
    fprintf(stderr, "gflow: %s: %" PRId64 "%s steps in %.3f ms on the %s backend (schedule %s)\n",
            wf->name, steps_run, of, wall_s * 1e3, b->name, gf_schedule_name(wf->schedule));
    fprintf(stderr, "  %-14s %-7s %9s %12s %10s\n", "task", "kind", "count", "busy ms", "mean us");
  }
  for (int i = 0; i < wf->ntasks; i++) {
    int t = gf_plan_order(r->plan)[i];
    const gf_task *task = &wf->tasks[t];
    int64_t count = r->count[t];
    /* busy time as the backend measured it; -1 where it did not */
    int timed = r->timing[t].count > 0;
    double busy_ms = timed ? (double)r->timing[t].busy_ns / 1e6 : -1;
    gf_buf_printf(&j, &len, &cap, "%s\n    {\"name\": ", i ? "," : "");
    gf_json_string(&j, &len, &cap, task->name);
    gf_buf_printf(&j, &len, &cap, ", \"kind\": \"%s\", \"count\": %" PRId64 ", \"busy_ms\": %.6f}",
                  gf_task_kind_name(task->kind), count, busy_ms);
    if (!options->quiet && timed)
      fprintf(stderr, "  %-14s %-7s %9" PRId64 " %12.3f %10.2f\n", task->name,
              gf_task_kind_name(task->kind), count, busy_ms, busy_ms * 1e3 / (double)count);
    else if (!options->quiet)
      fprintf(stderr, "  %-14s %-7s %9" PRId64 " %12s %10s\n", task->name,
              gf_task_kind_name(task->kind), count, "-", "-");
  }
  gf_buf_printf(&j, &len, &cap, "\n  ]\n}\n");
  if (!options->quiet) {
    if (kernel_calls)
      fprintf(stderr, "  kernels: %.4g GPts/s, %.4g GB/s effective (%.3g points updated)\n",
              points / wall_s / 1e9, bytes / wall_s / 1e9, points);
    fprintf(stderr, "  runner overhead: %.2f us per task (host time outside backend calls)\n",
            overhead_us);
    fprintf(stderr, "  outputs in %s/, complete %.3f ms after the loop started\n", options->out_dir,
            flushed_s * 1e3);
  }
  gf_status st = gf_write_file_atomic(options->out_dir, "timings.json", j, r->diag);
  free(j);
  return st;
}

/* ---- entry ----------------------------------------------------------------- */

gf_status gf_exec_run(const gf_workflow *wf, gf_plan *plan, gf_backend *b,
                      const gf_run_options *options, gf_diag *diag) {
  run r = {.wf = wf, .plan = plan, .b = b, .diag = diag};
  r.nstreams = gf_plan_stream_count(plan);
  r.nslots = gf_plan_event_slots(plan);
  r.timing = gf_xcalloc((size_t)wf->ntasks, sizeof *r.timing);
  b->sink = (gf_op_sink){gf_task_timing_report, r.timing};
  r.count = gf_xcalloc((size_t)wf->ntasks, sizeof *r.count);
  gf_status st = check_capacity(&r);
  if (st == GF_OK) st = allocate_fields(&r);

  r.streams = gf_xcalloc((size_t)r.nstreams, sizeof *r.streams);
  r.events = gf_xcalloc((size_t)(r.nstreams * r.nslots), sizeof *r.events);
  for (int s = 0; s < r.nstreams && st == GF_OK; s++)
    if (b->ops->stream_create(b, &r.streams[s]) != GF_OK)
      st = gf_diag_error(diag, GF_INTERNAL, "cannot create stream %s: %s",
                         gf_plan_stream_name(plan, s), b->error);
  for (int e = 0; e < r.nstreams * r.nslots && st == GF_OK; e++)
    if (b->ops->event_create(b, &r.events[e]) != GF_OK)
      st = gf_diag_error(diag, GF_INTERNAL, "cannot create an event: %s", b->error);
  r.fences = gf_xcalloc((size_t)(2 * r.nstreams) + 1, sizeof *r.fences);
  for (int e = 0; e < 2 * r.nstreams && st == GF_OK; e++)
    if (b->ops->event_create(b, &r.fences[e]) != GF_OK)
      st = gf_diag_error(diag, GF_INTERNAL, "cannot create an event: %s", b->error);
  r.user_events = gf_xcalloc((size_t)(wf->nevents ? wf->nevents : 1), sizeof *r.user_events);
  for (int e = 0; e < wf->nevents && st == GF_OK; e++)
    if (b->ops->event_create(b, &r.user_events[e]) != GF_OK)
      st = gf_diag_error(diag, GF_INTERNAL, "cannot create an event: %s", b->error);
  for (int f = 0; f < wf->nfields && st == GF_OK; f++) st = init_field(&r, f, r.streams[0]);
  for (int f = 0; f < wf->nfields && st == GF_OK; f++) {
    const gf_field *field = &wf->fields[f];
    if (field->space != GF_SPACE_MANAGED || !b->ops->managed_prepare) continue;
    for (int k = 0; k < field->ring && st == GF_OK; k++)
      if (b->ops->managed_prepare(b, r.inst[f][k], field->bytes, field->prefetch,
                                  field->read_mostly) != GF_OK)
        st = gf_diag_at(diag, field->loc, GF_INTERNAL, "preparing managed field '%s': %s",
                        field->name, b->error);
  }
  if (st == GF_OK) st = gf_writer_create(b, wf, options->out_dir, diag, &r.writer);
  if (st == GF_OK) st = allocate_check_buffer(&r);
  if (st == GF_OK) prepare_tasks(&r);

  double wall_s = 0, flushed_s = 0;
  int64_t t0 = now_ns(), steps_run = 0;
  int stop_signal = 0; /* the signal that stopped the loop */
  if (st == GF_OK) {
    gf_plan_reset(plan);
    t0 = now_ns();
    for (int64_t n = 0; n < wf->steps && st == GF_OK; n++) {
      if (options->stop && *options->stop) { /* a step boundary: stop here */
        stop_signal = (int)*options->stop;
        break;
      }
      const gf_op *ops;
      int nops;
      st = gf_plan_step(plan, n, diag, &ops, &nops);
      for (int i = 0; i < nops && st == GF_OK; i++) st = run_op(&r, &ops[i], n);
      if (st == GF_OK) steps_run = n + 1;
      if (st == GF_OK) st = fence_step(&r, n);
      if (st == GF_OK && wf->check.every && (n + 1) % wf->check.every == 0)
        st = check_fields(&r, n);
    }
  }
  /* A stopped run keeps its files; a failed one does not. */
  int keep = st == GF_OK || st == GF_DIVERGED;
  int64_t sync_start = now_ns();
  if (keep && b->ops->synchronize(b) != GF_OK)
    st = gf_diag_error(diag, GF_INTERNAL, "finishing the time loop: %s", b->error);
  else if (!keep)
    b->ops->synchronize(b); /* let queued work drain before freeing */
  keep = st == GF_OK || st == GF_DIVERGED;
  r.backend_ns += now_ns() - sync_start;
  wall_s = (double)(now_ns() - t0) / 1e9;

  const char *signal_name = stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
  if (r.writer) {
    gf_run_info info = {.backend = b->name,
                        .device = b->description,
                        .resolved_yaml = keep ? gf_workflow_resolved_yaml(wf) : NULL,
                        .end = stop_signal         ? GF_END_INTERRUPTED
                               : st == GF_DIVERGED ? GF_END_CHECK
                                                   : GF_END_COMPLETE,
                        .steps_run = steps_run,
                        .stopped_by = stop_signal ? signal_name : r.check_message};
    gf_status fin = gf_writer_finish(r.writer, keep, &info);
    free(info.resolved_yaml);
    if (keep && fin != GF_OK) st = fin; /* outputs that cannot be written say so first */
  }
  flushed_s = (double)(now_ns() - t0) / 1e9;
  if (st == GF_OK || st == GF_DIVERGED) {
    gf_status rep = report(&r, steps_run, wall_s, flushed_s, options);
    if (rep != GF_OK) st = rep;
  }
  if (r.writer && (st == GF_DIVERGED || (st == GF_OK && stop_signal))) {
    char *summary = gf_writer_summary(r.writer);
    char holds[96] = "outputs hold no steps";
    if (steps_run > 0)
      snprintf(holds, sizeof holds, "outputs hold steps 0 to %" PRId64 "%s", steps_run - 1,
               summary[0] ? ": " : "");
    if (steps_run == 0) summary[0] = '\0';
    if (stop_signal)
      st = gf_diag_error(diag, stop_signal == SIGINT ? GF_INTERRUPTED : GF_TERMINATED,
                         "interrupted by %s at step %" PRId64 "; %s%s", signal_name, steps_run,
                         holds, summary);
    else
      gf_diag_error(diag, GF_DIVERGED, "stopped by the check after step %" PRId64 "; %s%s",
                    steps_run - 1, holds, summary);
    free(summary);
  }

  gf_writer_destroy(r.writer);
  for (int e = 0; e < r.nstreams * r.nslots; e++)
    if (r.events[e]) b->ops->event_destroy(b, r.events[e]);
  for (int e = 0; e < wf->nevents; e++)
    if (r.user_events[e]) b->ops->event_destroy(b, r.user_events[e]);
  free(r.user_events);
  for (int e = 0; e < 2 * r.nstreams; e++)
    if (r.fences[e]) b->ops->event_destroy(b, r.fences[e]);
  free(r.fences);
  for (int s = 0; s < r.nstreams; s++)
    if (r.streams[s]) b->ops->stream_destroy(b, r.streams[s]);
  free(r.events);
  free(r.streams);
  if (r.check_buffer) b->ops->free(b, GF_SPACE_PINNED, r.check_buffer, NULL);
  free_fields(&r);
  free(r.tasks);
  free(r.count);
  b->sink = (gf_op_sink){NULL, NULL};
  free(r.timing);
  return st;
}
