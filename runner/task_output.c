/* task_output.c - `output: {from: REF, file: NAME, planes: N, plane: EXPR,
 * format: raw|hdf5}`: writes the instance as plane `plane` (default n) of a
 * stack of `planes` planes in one file, through the output staging buffers,
 * laid out as `format` says (output_format.h; default raw). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "load.h"
#include "output_format.h"
#include "program.h"
#include "schedule.h"
#include "task_output.h"

#define MAX_PLANES 1000000000 /* the writer keeps a bit per plane */
#define MAX_FILE_BYTES ((int64_t)1 << 62)

static const gf_key_spec output_keys[] = {{"from", 1, NULL},   {"file", 1, NULL},
                                          {"planes", 1, NULL}, {"plane", 0, NULL},
                                          {"format", 0, NULL}, {"batch", 0, NULL}};

/* An HDF5 file holds the field's dataset beside its coordinates (the scales
 * output_hdf5.c writes), so the field may not take one of their names. */
static const char *const hdf5_scale_names[] = {"time", "step", "x0", "x1", "x2"};

static gf_status load_format(loader *ld, yaml_node_t *node, const gf_field *field, int *format) {
  *format = 0;
  if (!node) return GF_OK;
  const char *names[8];
  for (int i = 0; i < gf_out_format_count; i++) names[i] = gf_out_formats[i]->name;
  gf_status status = gf_load_choice(ld, node, "format", names, gf_out_format_count, format);
  if (status || gf_out_formats[*format] != &gf_out_hdf5) return status;
  for (size_t i = 0; i < sizeof hdf5_scale_names / sizeof *hdf5_scale_names; i++)
    if (strcmp(field->name, hdf5_scale_names[i]) == 0)
      return gf_load_fail(
          ld, node,
          "field '%s' cannot be written as hdf5: its coordinate '%s' has that name; "
          "rename the field",
          field->name, field->name);
  return GF_OK;
}

gf_status gf_output_add_file(loader *ld, gf_task *task, gf_file file, int *index) {
  gf_workflow *wf = gf_load_workflow(ld);
  /* Two tasks writing one file would overwrite each other's planes. */
  for (int f = 0; f < wf->nfiles; f++)
    if (strcmp(wf->files[f].name, file.name) == 0)
      return gf_diag_at(gf_load_diag(ld), task->loc, GF_INVALID,
                        "tasks '%s' and '%s' both write '%s'", wf->tasks[wf->files[f].task].name,
                        task->name, file.name);
  file.name = gf_strdup(file.name);
  file.task = (int)(task - wf->tasks);
  gf_file *files =
      file.name ? gf_realloc(wf->files, (size_t)(wf->nfiles + 1) * sizeof *files) : NULL;
  if (!files) {
    free(file.name);
    return gf_oom(gf_load_diag(ld), "loading an output task");
  }
  wf->files = files;
  *index = wf->nfiles;
  wf->files[wf->nfiles++] = file;
  return GF_OK;
}

/* A batch's copy out: the drain stream, after event 0 of the task where the
 * instance's own stream recorded it, copies `bytes` from `src` into a
 * staging buffer and records the buffer's event. */
static void emit_copy_out(gf_emitter *e, int stream, int drain, gf_operand src, size_t bytes) {
  if (drain != stream) {
    gf_instr *wait = gf_emit(e, GF_I_WAIT);
    wait->stream = drain;
    wait->event = gf_emit_event(e, 0);
  }
  gf_emit(e, GF_I_STAGE);
  gf_instr *out = gf_emit(e, GF_I_COPY);
  out->stream = drain;
  out->src = src;
  out->dst = (gf_operand){.kind = GF_OPND_STAGED};
  out->bytes = bytes;
  gf_instr *ready = gf_emit(e, GF_I_RECORD);
  ready->stream = drain;
  ready->event = -1;
}

/* An output that reads its batches from its field's ring (gf_output_read_rings)
 * runs at the step whose plane ends a batch: its batch is the planes of steps
 * gf_output_batch_first(f, n) .. n, whose sources are consecutive instances
 * of the ring, one after another in memory. On the drain stream (after the
 * instance's own, which waited for the kernels that wrote them) one copy
 * moves them to a staging buffer; the instance's stream then waits for the
 * copy, so what the planner orders after the instance (the kernel that next
 * writes those instances) is ordered after the copy. */
static void emit_from_ring(gf_emitter *e, const gf_workflow *wf, int file, const gf_expr *plane) {
  const gf_file *f = &wf->files[file];
  int64_t n = gf_emit_step(e);
  const gf_field *field = &wf->fields[f->field];
  int64_t first = gf_output_batch_first(f, n), count = n - first + 1;
  gf_operand src = gf_emit_access(e, 0);
  int64_t slot = (first + f->index_offset) % field->ring;
  src.inst = (int)slot;
  int stream = gf_emit_stream(e), drain = gf_emit_drain_stream(e);
  if (drain != stream) gf_emit(e, GF_I_RECORD)->event = gf_emit_event(e, 0);
  emit_copy_out(e, stream, drain, src, field->bytes * (size_t)count);
  if (drain != stream) {
    gf_instr *copied = gf_emit(e, GF_I_RECORD);
    copied->stream = drain;
    copied->event = gf_emit_event(e, 1);
    gf_emit(e, GF_I_WAIT)->event = gf_emit_event(e, 1);
  }
  gf_instr *write = gf_emit(e, GF_I_WRITE);
  write->file = file;
  write->param = plane;
  write->batch = (int)count;
}

/* A batched output staged directly (file->direct, where the device is the
 * host): each instance makes sure its file has a staging buffer for the
 * open batch (taken at the batch's first instance, or at the first after a
 * flush or a restart), copies its plane into its slot, instance % k, after
 * the slot before (event 0; the copies may run on several streams), and the
 * instance at the last slot records the buffer's event and hands the writer
 * the k planes: a copy a plane, where a device-side ring would copy each
 * plane twice. A batch still open at a checkpoint or at the end is flushed
 * by the executor (exec.c). */
static void emit_direct(gf_emitter *e, const gf_workflow *wf, int file, const gf_expr *plane) {
  const gf_file *f = &wf->files[file];
  size_t bytes = wf->fields[f->field].bytes;
  int k = f->batch;
  int64_t slot = gf_emit_count_instance(e) % k;
  gf_emit(e, GF_I_STAGE)->file = file;
  if (slot > 0) gf_emit(e, GF_I_WAIT)->event = gf_emit_event(e, 0);
  gf_instr *copy = gf_emit(e, GF_I_COPY);
  copy->src = gf_emit_access(e, 0);
  copy->dst = (gf_operand){.kind = GF_OPND_BATCH, .temp = file, .offset = (size_t)slot * bytes};
  copy->bytes = bytes;
  gf_emit(e, GF_I_RECORD)->event = gf_emit_event(e, 0);
  if (slot < k - 1) return;
  gf_instr *ready = gf_emit(e, GF_I_RECORD);
  ready->event = -1;
  ready->file = file;
  gf_instr *write = gf_emit(e, GF_I_WRITE);
  write->file = file;
  write->param = plane;
  write->batch = k;
}

/* A batched output (k = file->batch > 1): each instance copies its plane
 * into slot i % 2k of a device-side ring of two halves of k planes (a run
 * buffer, so the copy has fixed addresses and a captured graph may hold
 * it), and the instance that fills a half moves the half to a staging
 * buffer in one copy and hands the writer k planes. While one half is
 * copied out, the next k instances fill the other, so the copies into the
 * ring (and the kernels that wait for them) never wait for the copy out,
 * as a hand-written double-buffered loop does. The ring's copies may run on
 * several streams: each waits for the previous slot's copy (event 0) or, at
 * a half's first slot, for that half's previous copy out (event 1 + half).
 * The copy out runs on the plan's drain stream (schedule.h) after the
 * half's last copy in (event 0), beside the next half's copies in. A batch
 * still open at a checkpoint or at the end is flushed by the executor
 * (exec.c, from half (first instance / k) % 2). */
void gf_output_emit(gf_emitter *e, const gf_workflow *wf, int file, const gf_expr *plane) {
  const gf_file *f = &wf->files[file];
  size_t bytes = wf->fields[f->field].bytes; /* this process's block of the plane */
  if (f->from_ring) {
    emit_from_ring(e, wf, file, plane);
    return;
  }
  if (f->direct) {
    emit_direct(e, wf, file, plane);
    return;
  }
  if (f->batch <= 1) {
    gf_emit(e, GF_I_STAGE);
    gf_instr *copy = gf_emit(e, GF_I_COPY);
    copy->src = gf_emit_access(e, 0);
    copy->dst = (gf_operand){.kind = GF_OPND_STAGED};
    copy->bytes = bytes;
    gf_emit(e, GF_I_RECORD)->event = -1;
    gf_instr *write = gf_emit(e, GF_I_WRITE);
    write->file = file;
    write->param = plane;
    return;
  }
  int k = f->batch, ring = gf_emit_temp(e, 0);
  int64_t instance = gf_emit_count_instance(e), slot = instance % k;
  int half = (int)((instance / k) % 2);
  size_t half_offset = (size_t)half * (size_t)k * bytes;
  gf_emit_buffer(e, 0, 2 * bytes * (size_t)k, GF_SPACE_DEVICE);
  if (instance > 0) gf_emit(e, GF_I_WAIT)->event = gf_emit_event(e, slot > 0 ? 0 : 1 + half);
  gf_instr *copy = gf_emit(e, GF_I_COPY);
  copy->src = gf_emit_access(e, 0);
  copy->dst = (gf_operand){
      .kind = GF_OPND_BUFFER, .temp = ring, .offset = half_offset + (size_t)slot * bytes};
  copy->bytes = bytes;
  int stream = copy->stream; /* `copy` moves with the next gf_emit */
  gf_emit(e, GF_I_RECORD)->event = gf_emit_event(e, 0);
  if (slot < k - 1) return;
  int drain = gf_emit_drain_stream(e);
  emit_copy_out(e, stream, drain,
                (gf_operand){.kind = GF_OPND_BUFFER, .temp = ring, .offset = half_offset},
                bytes * (size_t)k);
  gf_instr *drained = gf_emit(e, GF_I_RECORD);
  drained->stream = drain;
  drained->event = gf_emit_event(e, 1 + half);
  gf_instr *write = gf_emit(e, GF_I_WRITE);
  write->file = file;
  write->param = plane;
  write->batch = k;
}

/* ---- batches straight from the field's ring ---------------------------------- */

/* Loops longer than this are not scanned (every access's index is evaluated
 * at every step), and their outputs copy each plane into a ring of their own. */
#define RING_SCAN_STEPS ((int64_t)1 << 20)

int gf_output_batch_ends(const gf_file *f, int64_t n) {
  return (n + f->index_offset + 1) % f->batch == 0 || n == f->last_step;
}

int64_t gf_output_batch_first(const gf_file *f, int64_t n) {
  int64_t index = n + f->index_offset, first = n - index % f->batch;
  return first > f->first_step ? first : f->first_step;
}

/* How a task reaches one field over the loop: at every step it runs (its
 * `when`), ref index n + offset, the offset the same at every such step. */
typedef struct ring_use {
  int64_t offset, first, last; /* first, last: the steps it runs at (-1: none) */
  int contiguous;              /* 1: it runs at every step from first to last */
} ring_use;

static int scan_use(const gf_task *task, const gf_ref *ref, int64_t steps, ring_use *use) {
  *use = (ring_use){.first = -1, .last = -1, .contiguous = 1};
  for (int64_t n = 0; n < steps; n++) {
    gf_status st = GF_OK;
    gf_eval_ctx ctx = {.n = (double)n};
    if (task->when && gf_expr_eval(task->when, &ctx, &st) == 0) continue;
    double i = ref->index ? gf_expr_eval(ref->index, &ctx, &st) : 0;
    if (st != GF_OK || i != floor(i) || fabs(i) > 1e15) return 0;
    int64_t offset = (int64_t)i - n;
    if (use->first < 0) use->first = n, use->offset = offset;
    if (offset != use->offset) return 0;
    if (use->last >= 0 && use->last != n - 1) use->contiguous = 0;
    use->last = n;
  }
  return 1;
}

/* One access of a task to the field whose ring may grow, over the loop. */
typedef struct field_access {
  int task;
  const gf_access_decl *decl;
  ring_use use;
} field_access;

/* The accesses to the field of file `f` that run at some step, each scanned
 * once; -1 when one has no constant offset, or out of memory. */
static int scan_field(const gf_workflow *wf, const gf_file *f, field_access **out) {
  field_access *list = gf_calloc((size_t)wf->ntasks * GF_MAX_TASK_REFS + 1, sizeof *list);
  int count = 0;
  for (int t = 0; list && t < wf->ntasks; t++)
    for (int a = 0; a < wf->tasks[t].naccess; a++) {
      field_access *x = &list[count];
      x->task = t;
      x->decl = &wf->tasks[t].access[a];
      if (x->decl->ref.field != f->field) continue;
      if (!scan_use(&wf->tasks[t], &x->decl->ref, wf->steps, &x->use)) {
        free(list);
        return -1;
      }
      count += x->use.first >= 0;
    }
  *out = list;
  return list ? count : -1;
}

/* Whether the output of file `f` may read its batches from its field's ring
 * grown to hold them: every value the loop reads from the field must be the
 * same under the grown ring as under the declared one. That holds when
 * every task that writes the field runs at every step, every access's index
 * is n plus a constant, writes span fewer indices than the ring, no read is
 * a ring's length or more behind the newest write (it would see a newer
 * index's values), and each read's index is written before it: by a write
 * of a higher offset (an earlier step), or of the same offset by a task
 * issued before it. (Then the last write of a read's instance is of the
 * index it names, or there is none, under both rings.) */
static int ring_is_growable(const gf_workflow *wf, const gf_file *f, const int *position,
                            ring_use *out) {
  const gf_field *field = &wf->fields[f->field];
  const gf_task *output = &wf->tasks[f->task];
  if (field->scratch || field->declared_ring || field->bytes % 256 != 0 || f->image ||
      !scan_use(output, &output->access[0].ref, wf->steps, out) || !out->contiguous ||
      out->first < 0 || out->first + out->offset < 0)
    return 0;
  field_access *list = NULL;
  int count = scan_field(wf, f, &list), growable = count > 0;
  int64_t write_lo = INT64_MAX, write_hi = INT64_MIN;
  for (int i = 0; i < count; i++) {
    if (!(list[i].decl->access & GF_ACCESS_WRITE)) continue;
    growable &= !wf->tasks[list[i].task].when;
    if (list[i].use.offset < write_lo) write_lo = list[i].use.offset;
    if (list[i].use.offset > write_hi) write_hi = list[i].use.offset;
  }
  growable &= write_lo <= write_hi && write_hi - write_lo < field->ring;
  for (int i = 0; growable && i < count; i++) {
    const field_access *read = &list[i];
    if (!(read->decl->access & GF_ACCESS_READ)) continue;
    growable &= write_hi - read->use.offset < field->ring;
    for (int j = 0; growable && j < count; j++) {
      const field_access *write = &list[j];
      if (!(write->decl->access & GF_ACCESS_WRITE) ||
          !gf_region_overlaps(&read->decl->region, &write->decl->region))
        continue;
      growable &= write->use.offset > read->use.offset ||
                  (write->use.offset == read->use.offset && write->task != read->task &&
                   position[write->task] < position[read->task]);
    }
  }
  free(list);
  return growable;
}

/* Removes every `after:` edge from or to task `o`; returns how many. */
static int drop_after(gf_workflow *wf, int o) {
  int dropped = wf->tasks[o].nafter;
  wf->tasks[o].nafter = 0;
  for (int t = 0; t < wf->ntasks; t++) {
    gf_task *task = &wf->tasks[t];
    int kept = 0;
    for (int d = 0; d < task->nafter; d++)
      if (task->after[d].task != o) task->after[kept++] = task->after[d];
    dropped += task->nafter - kept;
    task->nafter = kept;
  }
  return dropped;
}

gf_status gf_output_read_rings(gf_workflow *wf, gf_diag *diag) {
  /* Only where gflow orders the tasks itself: a workflow that says how its
   * streams synchronise says so for the ring it declared. */
  if (!(wf->schedule->flags & GF_SCHED_INFERS_ORDER) || wf->steps > RING_SCAN_STEPS ||
      wf->ntasks == 0)
    return GF_OK;
  int *order = gf_calloc((size_t)wf->ntasks, 2 * sizeof *order), *position = order + wf->ntasks;
  if (!order) return gf_oom(diag, "planning the outputs");
  if (gf_task_issue_order(wf, order) != wf->ntasks) { /* a cycle: the plan reports it */
    free(order);
    return GF_OK;
  }
  for (int i = 0; i < wf->ntasks; i++) position[order[i]] = i;
  gf_status st = GF_OK;
  for (int i = 0; i < wf->nfiles && st == GF_OK; i++) {
    gf_file *f = &wf->files[i];
    ring_use out;
    if (f->batch <= 1 || !ring_is_growable(wf, f, position, &out)) continue;
    gf_field *field = &wf->fields[f->field];
    gf_task *task = &wf->tasks[f->task];
    int k = f->batch, held = field->ring > k ? field->ring : k;
    char *when = gf_asprintf("n >= %" PRId64 " and n <= %" PRId64 " and ((n + %" PRId64
                             ") %% %d == %d or n == %" PRId64 ")",
                             out.first, out.last, out.offset, k, k - 1, out.last);
    gf_expr *expr = NULL;
    gf_scope scope = {NULL, NULL, 1};
    if (!when)
      st = gf_oom(diag, "planning the outputs");
    else
      st = gf_expr_compile(when, &scope, diag, task->loc, &expr);
    free(when);
    if (st != GF_OK) break;
    gf_expr_free(task->when);
    task->when = expr;
    /* `after:` edges to and from the output ordered its copies against the
     * writes of the ring it declared; the grown ring's batches are ordered
     * by what they read, as auto orders everything else. */
    f->dropped_after = drop_after(wf, f->task);
    task->drains = 1;
    task->access[0].span = k;
    field->declared_ring = field->ring;
    field->ring = (held + k + k - 1) / k * k;
    f->from_ring = 1;
    f->first_step = out.first;
    f->last_step = out.last;
    f->index_offset = out.offset;
  }
  free(order);
  return st;
}

static gf_status load(loader *ld, gf_task *task, const gf_task_yaml *yaml) {
  gf_workflow *wf = gf_load_workflow(ld);
  yaml_node_t *node = yaml->value, *values[6] = {NULL};
  gf_output_task *o = gf_calloc(1, sizeof *o);
  if (!o) return gf_oom(gf_load_diag(ld), "loading an output task");
  task->data = o;
  o->file = -1;
  gf_ref from;
  gf_status status = gf_load_mapping(ld, node, "output", output_keys, 6, NULL, NULL, values);
  if (status || (status = gf_load_ref(ld, values[0], &from))) return status;
  gf_task_add_access(task, from, GF_ACCESS_READ, gf_region_whole(wf, from.field), "output source");
  int format;
  if ((status = load_format(ld, values[4], &wf->fields[from.field], &format))) return status;
  const char *file = gf_load_scalar(values[1]);
  if (!file) return gf_load_fail_type(ld, values[1], "a file name");
  if (!*file || strchr(file, '/') || strcmp(file, ".") == 0 || strcmp(file, "..") == 0)
    return gf_load_fail(ld, values[1],
                        "output file '%s' must be a plain file name (no '/', not . or ..)", file);
  int64_t planes;
  if ((status = gf_load_integer(ld, values[2], GF_NAMES_PARAMS | GF_NAMES_GRID, &planes)))
    return status;
  if (planes < 1)
    return gf_load_fail(ld, values[2], "planes must be >= 1, got %lld", (long long)planes);
  if (planes > MAX_PLANES)
    return gf_load_fail(ld, values[2], "planes must be at most 10^9, got %lld", (long long)planes);
  int64_t plane_bytes = (int64_t)wf->fields[from.field].bytes, file_bytes;
  if (__builtin_mul_overflow(planes, plane_bytes, &file_bytes) || file_bytes > MAX_FILE_BYTES)
    return gf_load_fail(
        ld, values[2],
        "output file '%s' is too large: %lld planes of %lld bytes are more than 2^62 bytes", file,
        (long long)planes, (long long)plane_bytes);
  int64_t batch = 0; /* 0: chosen from the staging budget (workflow.c) */
  if (values[5] && (status = gf_load_integer(ld, values[5], GF_NAMES_PARAMS, &batch)))
    return status;
  if (values[5] && (batch < 1 || batch > 65536))
    return gf_load_fail(ld, values[5], "batch must be between 1 and 65536, got %lld",
                        (long long)batch);
  gf_status added = gf_output_add_file(ld, task,
                                       (gf_file){.name = (char *)file,
                                                 .field = from.field,
                                                 .planes = planes,
                                                 .plane_bytes = (size_t)plane_bytes,
                                                 .format = format,
                                                 .batch = (int)batch},
                                       &o->file);
  if (added) return added;
  if (!values[3]) {
    gf_scope scope = {NULL, NULL, 1};
    status = gf_expr_compile("n", &scope, gf_load_diag(ld), task->loc, &o->plane);
  } else {
    const char *plane = gf_load_scalar(values[3]);
    if (!plane || (!*plane && !gf_load_is_quoted(values[3])))
      return gf_load_fail_type(ld, values[3], "an expression of n");
    status = gf_load_expr(ld, values[3], plane, 0, GF_NAMES_PARAMS | GF_NAMES_GRID, 1, &o->plane);
  }
  wf->files[o->file].plane = o->plane;
  return status;
}

static gf_status check_step(const gf_workflow *wf, const gf_task *task, int64_t n, gf_diag *diag,
                            int64_t *value) {
  const gf_output_task *o = task->data;
  const gf_file *file = &wf->files[o->file];
  /* A batch read from the ring: the planes of every step it holds. */
  for (int64_t m = file->from_ring ? gf_output_batch_first(file, n) : n; m <= n; m++) {
    gf_status st = GF_OK;
    double p = gf_expr_eval(o->plane, &(gf_eval_ctx){.n = (double)m}, &st);
    if (st != GF_OK) return st;
    if (!gf_is_index(p, (double)file->planes))
      return gf_diag_at(diag, task->loc, GF_INVALID,
                        "output plane %s is out of range for '%s' (planes 0..%" PRId64
                        ") at step %" PRId64,
                        gf_number_text(p, (char[32]){0}, 32), file->name, file->planes - 1, m);
    *value = (int64_t)p;
  }
  return GF_OK;
}

gf_status gf_output_task_emit(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                              const gf_task_instance *instance) {
  (void)instance;
  const gf_output_task *o = task->data;
  gf_output_emit(e, wf, o->file, o->plane);
  return GF_OK;
}

const char *gf_output_task_describe(const gf_workflow *wf, const gf_task *task) {
  return wf->files[((const gf_output_task *)task->data)->file].name;
}

static void free_output(void *data) {
  gf_output_task *o = data;
  if (!o) return;
  gf_expr_free(o->plane);
  free(o);
}

const gf_task_kind gf_task_output_kind = {
    .name = "output",
    .traits = GF_KIND_MOVES_DATA,
    .load = load,
    .check_step = check_step,
    .describe = gf_output_task_describe,
    .emit = gf_output_task_emit,
    .free = free_output,
};
