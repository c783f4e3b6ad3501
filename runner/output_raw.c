/* output_raw.c - `format: raw`, the seed's array_out.dat: the planes in C
 * order, nothing else, and a JSON sidecar (NAME.json) that says the dtype,
 * the shape, which planes hold data and how the run went. Under MPI every
 * rank writes its block of each plane into the one file through MPI-IO
 * (gf_comm_file, comm.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_format.h"
#include "schedule.h"
#include "text.h"

typedef struct raw_file {
  const gf_out_target *t;
  int fd;
  gf_comm_file *shared; /* under MPI: the one file every rank writes its block of */
} raw_file;

static gf_status raw_open(const gf_out_target *t, void **state) {
  raw_file *r = gf_calloc(1, sizeof *r);
  if (!r) return gf_oom(t->diag, "opening the output files");
  r->t = t;
  r->fd = -1;
  if (gf_comm_size(t->comm) > 1) { /* collective */
    char why[256];
    if (gf_comm_file_open(t->comm, t->temp_path, &t->block, &r->shared, why, sizeof why) != GF_OK) {
      free(r);
      return gf_diag_error(t->diag, GF_CANTCREATE, "cannot create %s: %s", t->temp_path, why);
    }
    *state = r;
    return GF_OK;
  }
  r->fd = open(t->temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (r->fd < 0) {
    gf_status st = gf_diag_error(t->diag, GF_CANTCREATE, "cannot create %s: %s", t->temp_path,
                                 strerror(errno));
    free(r);
    return st;
  }
  /* The file grows as planes arrive and gets its full size at the end, so
   * a full disk (or a file size limit) shows up as the write that fails. */
  *state = r;
  return GF_OK;
}

/* This process's part of a plane: one write when it is the whole plane,
 * else one per run along the field's last dimension. */
static gf_status raw_write(void *state, int64_t plane, int64_t step, const void *data) {
  (void)step;
  raw_file *r = state;
  char why[256];
  if (r->shared && gf_comm_file_write(r->shared, plane, data, why, sizeof why) != GF_OK)
    return gf_diag_error(r->t->diag, GF_IOERR, "cannot write plane %" PRId64 " of %s/%s: %s", plane,
                         r->t->dir, r->t->file->name, why);
  if (r->shared) return GF_OK;
  const gf_comm_block *b = &r->t->block;
  const gf_field *field = &r->t->wf->fields[r->t->file->field];
  int64_t elem = field->dtype == GF_F64 ? 8 : 4, plane_bytes = gf_out_plane_bytes(b, field->dtype);
  int nd = field->ndim, whole = gf_out_block_is_whole(b);
  int64_t gstride[GF_MAX_DIMS], lstride[GF_MAX_DIMS], rows = 1;
  for (int d = nd - 1; d >= 0; d--) {
    gstride[d] = d == nd - 1 ? 1 : gstride[d + 1] * b->global[d + 1];
    lstride[d] = d == nd - 1 ? 1 : lstride[d + 1] * b->local[d + 1];
    if (d < nd - 1) rows *= b->hi[d] - b->lo[d];
  }
  size_t run = whole ? (size_t)plane_bytes : (size_t)((b->hi[nd - 1] - b->lo[nd - 1]) * elem);
  for (int64_t row = 0; row < (whole ? 1 : rows); row++) {
    /* the run's first cell, in the local array and in the plane */
    int64_t local = whole ? 0 : b->lo[nd - 1], global = whole ? 0 : b->origin[nd - 1] + local;
    for (int64_t d = nd - 2, rest = row; d >= 0 && !whole; d--) {
      int64_t i = b->lo[d] + rest % (b->hi[d] - b->lo[d]);
      rest /= b->hi[d] - b->lo[d];
      local += i * lstride[d];
      global += (b->origin[d] + i) * gstride[d];
    }
    if (gf_out_write_all(r->fd, (const char *)data + local * elem, run,
                         plane * plane_bytes + global * elem) != 0)
      return gf_diag_error(r->t->diag, GF_IOERR, "cannot write plane %" PRId64 " of %s/%s: %s",
                           plane, r->t->dir, r->t->file->name, gf_out_error_text(errno));
  }
  return GF_OK;
}

/* Consecutive whole planes: one write; a block of a plane (MPI), or a run
 * whose write failed, plane by plane (which names the plane that fails). */
static gf_status raw_write_run(void *state, int64_t plane, int count, const int64_t *steps,
                               const void *data) {
  raw_file *r = state;
  const gf_field *field = &r->t->wf->fields[r->t->file->field];
  int64_t plane_bytes = gf_out_plane_bytes(&r->t->block, field->dtype);
  if (!r->shared && gf_out_block_is_whole(&r->t->block) &&
      gf_out_write_all(r->fd, data, (size_t)(count * plane_bytes), plane * plane_bytes) == 0)
    return GF_OK;
  gf_status st = GF_OK;
  for (int i = 0; i < count && st == GF_OK; i++)
    st = raw_write(state, plane + i, steps[i], (const char *)data + (size_t)i * field->bytes);
  return st;
}

/* At its full size (planes never written read as zeros), durable, closed. */
static gf_status raw_finish(void *state, const gf_out_end *end) {
  (void)end;
  raw_file *r = state;
  const gf_out_target *t = r->t;
  gf_status st = GF_OK;
  const gf_field *field = &t->wf->fields[t->file->field];
  off_t size = (off_t)(gf_out_plane_bytes(&t->block, field->dtype) * t->file->planes);
  if (r->shared) { /* collective */
    char why[256];
    st = gf_comm_file_close(r->shared, (int64_t)size, why, sizeof why);
    r->shared = NULL;
    if (st != GF_OK)
      return gf_diag_error(t->diag, GF_IOERR, "cannot finish %s/%s: %s", t->dir, t->file->name,
                           why);
    return GF_OK;
  }
  if (ftruncate(r->fd, size) != 0)
    st = gf_diag_error(t->diag, GF_IOERR, "cannot size %s/%s to %lld bytes: %s", t->dir,
                       t->file->name, (long long)size, gf_out_error_text(errno));
  else if (fsync(r->fd) != 0)
    st = gf_diag_error(t->diag, GF_IOERR, "cannot write %s/%s: %s", t->dir, t->file->name,
                       gf_out_error_text(errno));
  if (close(r->fd) != 0 && st == GF_OK)
    st = gf_diag_error(t->diag, GF_IOERR, "cannot write %s/%s: %s", t->dir, t->file->name,
                       gf_out_error_text(errno));
  r->fd = -1;
  return st;
}

static char *raw_sidecar(void *state, const gf_out_end *end) {
  raw_file *r = state;
  const gf_workflow *wf = r->t->wf;
  const gf_file *file = r->t->file;
  const gf_run_info *info = end->info;
  const gf_task *task = &wf->tasks[file->task];
  const gf_field *field = &wf->fields[file->field];
  gf_text b = {0};
  gf_text_printf(&b, "{\n  \"format\": \"raw\",\n  \"file\": ");
  gf_text_json(&b, file->name);
  gf_text_printf(&b, ",\n  \"dtype\": \"%s\",\n  \"order\": \"C\",\n  \"shape\": [%" PRId64,
                 field->dtype == GF_F64 ? "float64" : "float32", file->planes);
  for (int d = 0; d < field->ndim; d++) gf_text_printf(&b, ", %" PRId64, r->t->block.global[d]);
  gf_text_printf(&b, "],\n  \"field\": ");
  gf_text_json(&b, field->name);
  gf_text_printf(&b, ",\n  \"task\": ");
  gf_text_json(&b, task->name);
  gf_text_printf(&b, ",\n  \"spacing\": [");
  for (int d = 0; d < wf->ndim; d++) gf_text_printf(&b, "%s%.17g", d ? ", " : "", wf->spacing[d]);
  gf_text_printf(&b, "],\n");
  double dt;
  if (gf_out_dt(wf, &dt)) gf_text_printf(&b, "  \"dt\": %.17g,\n", dt);
  gf_text_printf(&b, "  \"planes_written\": %" PRId64 ",\n  \"valid_planes\": ", end->nwritten);
  gf_out_append_ranges(&b, end, file->planes);
  gf_text_printf(&b, ",\n  \"complete\": %s,\n  \"steps_run\": %" PRId64 ",\n",
                 info->end == GF_END_COMPLETE ? "true" : "false", info->steps_run);
  if (info->end == GF_END_INTERRUPTED) {
    gf_text_printf(
        &b, "  \"interrupted_at_step\": %" PRId64 ",\n  \"interrupted_by\": ", info->steps_run);
    gf_text_json(&b, info->stopped_by ? info->stopped_by : "");
    gf_text_printf(&b, ",\n");
  } else if (info->end == GF_END_CHECK) {
    gf_text_printf(
        &b, "  \"stopped_at_step\": %" PRId64 ",\n  \"stopped_by_check\": ", info->steps_run - 1);
    gf_text_json(&b, info->stopped_by ? info->stopped_by : "");
    gf_text_printf(&b, ",\n");
  }
  gf_text_printf(&b, "  \"steps\": %" PRId64 ",\n  \"schedule\": \"%s\",\n", wf->steps,
                 wf->schedule->name);
  gf_text_printf(&b, "  \"backend\": ");
  gf_text_json(&b, info->backend);
  gf_text_printf(&b, ",\n  \"device\": ");
  gf_text_json(&b, info->device);
  gf_text_printf(&b, ",\n  \"workflow_file\": ");
  gf_text_json(&b, wf->path);
  gf_text_printf(&b, ",\n  \"gflow_version\": \"%s\",\n  \"resolved_workflow\": ", GFLOW_VERSION);
  /* A run that keeps its files always passes the resolved workflow: NULL here
   * is the copy that ran out of memory, and the sidecar must not lie. */
  if (!info->resolved_yaml) {
    gf_text_free(&b);
    return NULL;
  }
  gf_text_json(&b, info->resolved_yaml);
  gf_text_printf(&b, "\n}\n");
  return gf_text_take(&b);
}

static void raw_close(void *state) {
  raw_file *r = state;
  if (!r) return;
  if (r->fd >= 0) close(r->fd);
  gf_comm_file_abandon(r->shared); /* collective */
  free(r);
}

static gf_status raw_sync(void *state) {
  raw_file *r = state;
  if (fsync(r->fd) != 0)
    return gf_diag_error(r->t->diag, GF_IOERR, "cannot write %s: %s", r->t->temp_path,
                         gf_out_error_text(errno));
  return GF_OK;
}

static gf_status raw_adopt(void *state, const char *path) {
  raw_file *r = state;
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return gf_diag_error(r->t->diag, GF_NOINPUT, "cannot open %s: %s", path, strerror(errno));
  if (r->fd >= 0) close(r->fd);
  r->fd = fd;
  return GF_OK;
}

const gf_out_format gf_out_raw = {
    .name = "raw",
    .sidecar_suffix = ".json",
    .bytes_per_plane = 0,
    .open = raw_open,
    .write = raw_write,
    .write_run = raw_write_run,
    .finish = raw_finish,
    .sidecar = raw_sidecar,
    .close = raw_close,
    .sync = raw_sync,
    .adopt = raw_adopt,
};
