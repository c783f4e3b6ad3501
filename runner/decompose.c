/* decompose.c - one rank's share of a workflow: its block, and the tasks
 * that keep ghost cells current. */
#include "decompose.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gflow.h"
#include "schedule.h"
#include "task_halo.h"
#include "task_kernel.h"

/* ---- the decomposition ---- */

/* Ranks along each axis for `auto`: the prime factors of `ranks`, largest
 * first, each to the axis whose share is then largest (MPI_Dims_create's
 * balance, weighted by the grid's shape). */
static void auto_dims(const gf_workflow *wf, int ranks, int dims[GF_MAX_DIMS]) {
  for (int d = 0; d < GF_MAX_DIMS; d++) dims[d] = 1;
  int factors[32], count = 0;
  for (int p = 2, left = ranks; left > 1 && count < 32;) {
    if (left % p == 0) {
      factors[count++] = p;
      left /= p;
    } else {
      p++;
    }
  }
  for (int i = count - 1; i >= 0; i--) {
    int best = 0;
    double best_share = -1;
    for (int d = 0; d < wf->ndim; d++) {
      double share = (double)(wf->shape[d] - 2 * wf->halo) / dims[d];
      if (share > best_share) best_share = share, best = d;
    }
    dims[best] *= factors[i];
  }
}

/* A decomposition the run cannot take, at `decomposition:` when the file gives one. */
__attribute__((format(printf, 3, 4))) static gf_status refuse(const gf_workflow *wf, gf_diag *diag,
                                                              const char *fmt, ...) {
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  if (wf->decomp.loc.line > 0) return gf_diag_at(diag, wf->decomp.loc, GF_INVALID, "%s", message);
  return gf_diag_error(diag, GF_INVALID, "%s", message);
}

static const char *dims_text(const gf_workflow *wf, const int dims[GF_MAX_DIMS], char *buf,
                             size_t size) {
  int len = snprintf(buf, size, "[");
  for (int d = 0; d < wf->ndim; d++)
    len += snprintf(buf + len, size - (size_t)len, "%s%d", d ? ", " : "", dims[d]);
  snprintf(buf + len, size - (size_t)len, "]");
  return buf;
}

/* The seed's split of `interior` cells over `parts`: part c starts at
 * interior*c/parts (without overflowing for large grids). */
static int64_t split_at(int64_t interior, int parts, int c) {
  return (interior / parts) * c + (interior % parts) * c / parts;
}

static gf_status place_block(gf_workflow *wf, int ranks, int rank, gf_diag *diag) {
  gf_decomposition *dc = &wf->decomp;
  int dims[GF_MAX_DIMS] = {1, 1, 1};
  int given = 0;
  for (int d = 0; d < wf->ndim; d++) given |= dc->dims[d] != 0;
  if (given)
    memcpy(dims, dc->dims, sizeof dims);
  else
    auto_dims(wf, ranks, dims);
  for (int d = wf->ndim; d < GF_MAX_DIMS; d++) dims[d] = 1;
  char text[64];
  long long product = (long long)dims[0] * dims[1] * dims[2];
  if (product != ranks)
    return refuse(wf, diag,
                  "decomposition %s needs %lld ranks; this run has %d (start it with "
                  "mpirun -np %lld, or change the decomposition)",
                  dims_text(wf, dims, text, sizeof text), product, ranks, product);
  const int h = wf->halo;
  for (int d = 0; d < wf->ndim; d++) {
    int64_t interior = wf->shape[d] - 2 * h;
    int64_t smallest = interior / dims[d];
    int64_t need = h > 1 ? h : 1;
    if (dims[d] > 1 && smallest < need)
      return refuse(wf, diag,
                    "decomposition %s leaves a rank %lld cells along axis %d, fewer than the "
                    "halo of %lld: use fewer ranks along that axis",
                    dims_text(wf, dims, text, sizeof text), (long long)smallest, d,
                    (long long)need);
  }
  memcpy(dc->dims, dims, sizeof dc->dims);
  dc->ranks = ranks;
  dc->rank = rank;
  int periodic = wf->boundary.kind == GF_BOUNDARY_PERIODIC;
  int stride = 1;
  for (int d = GF_MAX_DIMS - 1; d >= 0; d--) { /* the last axis fastest, as the seed's x */
    dc->coords[d] = (rank / stride) % dims[d];
    stride *= dims[d];
  }
  stride = 1;
  for (int d = GF_MAX_DIMS - 1; d >= 0; d--) {
    int c = dc->coords[d], P = dims[d];
    if (d >= wf->ndim) {
      dc->origin[d] = 0;
      dc->shape[d] = 1;
      dc->neighbour[d][0] = dc->neighbour[d][1] = -1;
      continue;
    }
    int64_t interior = wf->shape[d] - 2 * h;
    int64_t lo = h + split_at(interior, P, c), hi = h + split_at(interior, P, c + 1);
    dc->origin[d] = lo - h;
    int64_t local = dc->shape[d] = hi - lo + 2 * h;
    dc->write_lo[d] = c == 0 ? 0 : h;
    dc->write_hi[d] = c == P - 1 ? local : local - h;
    int below = c > 0 ? rank - stride : periodic ? rank + (P - 1) * stride : -1;
    int above = c < P - 1 ? rank + stride : periodic ? rank - (P - 1) * stride : -1;
    dc->neighbour[d][0] = below;
    dc->neighbour[d][1] = above;
    stride *= P;
  }
  for (int d = wf->ndim; d < GF_MAX_DIMS; d++) dc->write_lo[d] = 0, dc->write_hi[d] = 1;
  return GF_OK;
}

/* Grid-shaped fields become the block; with several ranks every field must be. */
static gf_status localize_fields(gf_workflow *wf, gf_diag *diag) {
  const gf_decomposition *dc = &wf->decomp;
  for (int f = 0; f < wf->nfields; f++) {
    gf_field *field = &wf->fields[f];
    int grid_shaped = field->ndim == wf->ndim;
    for (int d = 0; d < wf->ndim && grid_shaped; d++) grid_shaped = field->shape[d] == wf->shape[d];
    if (!grid_shaped) {
      if (dc->ranks == 1) continue;
      return gf_diag_at(diag, field->loc, GF_INVALID,
                        "field '%s' is not grid-shaped; a run split over %d ranks splits every "
                        "field along the grid",
                        field->name, dc->ranks);
    }
    field->decomposed = 1;
    field->elems = 1;
    for (int d = 0; d < wf->ndim; d++) {
      field->shape[d] = dc->shape[d];
      field->elems *= field->shape[d];
    }
    field->bytes = (size_t)field->elems * gf_dtype_size(field->dtype);
  }
  return GF_OK;
}

/* An access's region, from the grid's indices to the block's: the grid's
 * interior becomes the block's (the cells it owns), the whole field the
 * whole block, any other box is moved by the origin and clipped. */
static gf_region localize_region(const gf_workflow *wf, int field, gf_region global,
                                 const int64_t shape[GF_MAX_DIMS]) {
  gf_region whole, interior, r;
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    whole.lo[d] = 0, whole.hi[d] = d < wf->ndim ? wf->shape[d] : 1;
    interior.lo[d] = d < wf->ndim ? wf->halo : 0;
    interior.hi[d] = d < wf->ndim ? wf->shape[d] - wf->halo : 1;
  }
  if (memcmp(&global, &interior, sizeof global) == 0) return gf_region_interior(wf, field);
  if (memcmp(&global, &whole, sizeof global) == 0) return gf_region_whole(wf, field);
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    int64_t o = wf->decomp.origin[d];
    r.lo[d] = global.lo[d] - o < 0 ? 0 : global.lo[d] - o;
    r.hi[d] = global.hi[d] - o > shape[d] ? shape[d] : global.hi[d] - o;
    if (r.hi[d] < r.lo[d]) r.hi[d] = r.lo[d];
  }
  return r;
}

/* ---- the generated tasks ---- */

/* A task list being built, and where each old task went. */
typedef struct builder {
  gf_task *tasks;
  int count, cap;
  int *moved;  /* old index -> new index */
  int **extra; /* old index -> new indices of its generated tasks */
  int *nextra;
} builder;

static gf_task *append(builder *b) {
  if (GF_GROW(b->tasks, b->cap, b->count + 1) != GF_OK) return NULL;
  gf_task *t = &b->tasks[b->count++];
  memset(t, 0, sizeof *t);
  t->stream.group = -1;
  t->record.group = -1;
  return t;
}

static gf_status note_generated(builder *b, int old, int added) {
  int *list = gf_realloc(b->extra[old], (size_t)(b->nextra[old] + 1) * sizeof *list);
  if (!list) return GF_INTERNAL;
  b->extra[old] = list;
  list[b->nextra[old]++] = added;
  return GF_OK;
}

static gf_status copy_stream_ref(gf_stream_ref *dst, const gf_stream_ref *src) {
  *dst = *src;
  dst->index = gf_expr_copy(src->index);
  return !src->index || dst->index ? GF_OK : GF_INTERNAL;
}

/* A generated task reading and writing instance `ref` of its field. */
static gf_status add_access(gf_task *t, const gf_ref *ref, gf_access access, const gf_box *box,
                            const char *what) {
  if (box->hi[0] <= box->lo[0] || box->hi[1] <= box->lo[1] || box->hi[2] <= box->lo[2])
    return GF_OK; /* empty: no cell */
  gf_ref copy = *ref;
  copy.index = gf_expr_copy(ref->index);
  if (ref->index && !copy.index) return GF_INTERNAL;
  gf_region region;
  memcpy(region.lo, box->lo, sizeof region.lo);
  memcpy(region.hi, box->hi, sizeof region.hi);
  gf_task_add_access(t, copy, access, region, what);
  return GF_OK;
}

/* The extent along axis `e` of a strip of the phase along axis `d`: axes
 * done before it (faster ones, e > d) whole where it spans corners, the
 * others the cells the block owns. */
static void span(const gf_workflow *wf, const int64_t *shape, int d, int corners, gf_box *box) {
  int h = wf->halo;
  for (int e = 0; e < GF_MAX_DIMS; e++) {
    if (e == d) continue;
    if (e >= wf->ndim) {
      box->lo[e] = 0, box->hi[e] = 1;
    } else if (e > d && corners) {
      box->lo[e] = 0, box->hi[e] = shape[e];
    } else {
      box->lo[e] = h, box->hi[e] = shape[e] - h;
    }
  }
}

/* Appends the exchange (or boundary) task along `axis` for instance `ref`
 * that task `w` (an index into b->tasks) writes. */
static gf_status add_halo_task(builder *b, const gf_workflow *wf, int w, const gf_ref *ref,
                               int axis, int exchange, int name_field) {
  const gf_field *field = &wf->fields[ref->field];
  const gf_decomposition *dc = &wf->decomp;
  const int64_t *S = field->shape;
  const int h = wf->halo;
  gf_halo_task *p = gf_calloc(1, sizeof *p);
  gf_task *t = p ? append(b) : NULL; /* may move b->tasks */
  if (!t) {
    free(p);
    return GF_INTERNAL;
  }
  const gf_task *writer = &b->tasks[w];
  t->kind = exchange ? &gf_task_exchange_kind : &gf_task_boundary_kind;
  t->data = p;
  t->loc = writer->loc;
  t->name = name_field
                ? gf_asprintf("%s.%s.%s%d", writer->name, field->name,
                              exchange ? "exchange" : "boundary", axis)
                : gf_asprintf("%s.%s%d", writer->name, exchange ? "exchange" : "boundary", axis);
  if (!t->name) return GF_INTERNAL;
  if ((wf->schedule->flags & GF_SCHED_USER_STREAMS) &&
      copy_stream_ref(&t->stream, &writer->stream) != GF_OK)
    return GF_INTERNAL;
  if (writer->when && !(t->when = gf_expr_copy(writer->when))) return GF_INTERNAL;
  p->field = ref->field;
  p->axis = axis;
  gf_status st = GF_OK;
  for (int side = 0; side < 2 && st == GF_OK; side++) {
    int peer = dc->neighbour[axis][side];
    gf_box owned_strip = {{0}, {0}}, ghost = {{0}, {0}};
    ghost.lo[axis] = side ? S[axis] - h : 0;
    ghost.hi[axis] = side ? S[axis] : h;
    owned_strip.lo[axis] = side ? S[axis] - 2 * h : h;
    owned_strip.hi[axis] = side ? S[axis] - h : 2 * h;
    if (exchange) {
      p->peer[side] = peer;
      if (peer < 0) continue;
      span(wf, S, axis, dc->corners, &owned_strip);
      span(wf, S, axis, dc->corners, &ghost);
      p->send[side] = owned_strip;
      p->recv[side] = ghost;
      st = add_access(t, ref, GF_ACCESS_READ, &owned_strip, "owned strip");
      if (st == GF_OK) st = add_access(t, ref, GF_ACCESS_WRITE, &ghost, "ghost cells");
    } else {
      if (peer >= 0) continue; /* a neighbour's, not the grid's edge */
      span(wf, S, axis, 1, &ghost);
      gf_box layer = ghost;
      p->from_index[side] = side ? S[axis] - h - 1 : h;
      layer.lo[axis] = p->from_index[side];
      layer.hi[axis] = p->from_index[side] + 1;
      p->ghost[side] = ghost;
      if (wf->boundary.kind == GF_BOUNDARY_COPY)
        st = add_access(t, ref, GF_ACCESS_READ, &layer, "nearest owned layer");
      if (st == GF_OK) st = add_access(t, ref, GF_ACCESS_WRITE, &ghost, "halo at the grid's edge");
    }
  }
  return st;
}

/* Copies a task (the kernel task being split): everything but its payload,
 * which gf_kernel_task_split shares. */
static gf_status clone_common(const gf_task *src, gf_task *dst) {
  if (src->when && !(dst->when = gf_expr_copy(src->when))) return GF_INTERNAL;
  if (copy_stream_ref(&dst->stream, &src->stream) != GF_OK) return GF_INTERNAL;
  if (src->nafter) {
    dst->after = gf_calloc((size_t)src->nafter, sizeof *dst->after);
    if (!dst->after) return GF_INTERNAL;
    memcpy(dst->after, src->after, (size_t)src->nafter * sizeof *src->after);
    dst->nafter = src->nafter;
  }
  for (int a = 0; a < src->naccess; a++) {
    gf_access_decl decl = src->access[a];
    decl.ref.index = gf_expr_copy(src->access[a].ref.index);
    if (src->access[a].ref.index && !decl.ref.index) return GF_INTERNAL;
    dst->access[dst->naccess++] = decl;
  }
  return GF_OK;
}

static int reads_field(const gf_task *t, const char *halo_field) {
  for (int a = 0; a < t->naccess; a++)
    if ((t->access[a].access & GF_ACCESS_READ) && halo_field[t->access[a].ref.field]) return 1;
  return 0;
}

static int has_box(const gf_task *t) {
  if (t->kind != &gf_task_kernel_kind) return 0;
  for (const gf_param *p = ((const gf_kernel_task *)t->data)->kernel->params; p->name; p++)
    if (p->type == GF_PARAM_BOX) return 1;
  return 0;
}

/* The interior of the block away from every side by 2 halos (its updates
 * read only owned cells) and the frame around it, as boxes. 0 when the
 * block is too small to have such an interior. */
static int split_boxes(const gf_workflow *wf, const int64_t *S, gf_box *inner, gf_box *frame,
                       int *nframe) {
  const int h = wf->halo;
  *nframe = 0;
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    inner->lo[d] = d < wf->ndim ? 2 * h : 0;
    inner->hi[d] = d < wf->ndim ? S[d] - 2 * h : 1;
    if (inner->hi[d] <= inner->lo[d]) return 0;
  }
  for (int d = 0; d < wf->ndim; d++)
    for (int side = 0; side < 2; side++) {
      gf_box b;
      for (int e = 0; e < GF_MAX_DIMS; e++) {
        if (e >= wf->ndim)
          b.lo[e] = 0, b.hi[e] = 1;
        else if (e < d)
          b.lo[e] = inner->lo[e], b.hi[e] = inner->hi[e];
        else
          b.lo[e] = h, b.hi[e] = S[e] - h;
      }
      b.lo[d] = side ? S[d] - 2 * h : h;
      b.hi[d] = side ? S[d] - h : 2 * h;
      frame[(*nframe)++] = b;
    }
  return 1;
}

/* What a part of a split kernel touches: it writes `box` and reads `box`
 * widened by the halo. */
static void narrow_regions(const gf_workflow *wf, gf_task *part, const gf_box *box) {
  for (int a = 0; a < part->naccess; a++) {
    gf_region *r = &part->access[a].region;
    int writes = part->access[a].access & GF_ACCESS_WRITE;
    for (int d = 0; d < wf->ndim; d++) {
      r->lo[d] = writes ? box->lo[d] : box->lo[d] - wf->halo;
      r->hi[d] = writes ? box->hi[d] : box->hi[d] + wf->halo;
    }
  }
}

/* A kernel task split for overlap: NAME (the interior, reading only owned
 * cells), then NAME.edges[k], one per strip of the frame. The edges are
 * urgent: under schedule auto they run on the halo stream, so the next
 * step's interior waits for them and not for the ghost cells, which have a
 * whole interior's time. Each strip is a task of its own so that what it
 * touches is one box, which the planner's conflicts are counted in. The
 * interior is issued first: when it is planned, the records of the last
 * step's edges are still among the halo stream's event slots. */
static gf_status split_kernel(builder *b, const gf_workflow *wf, int old, const gf_task *task,
                              int *interior_index) {
  int first = -1;
  for (int a = 0; a < task->naccess && first < 0; a++)
    if (task->access[a].access & GF_ACCESS_WRITE) first = task->access[a].ref.field;
  if (first < 0) first = task->access[0].ref.field;
  gf_box inner, frame[2 * GF_MAX_DIMS];
  int nframe = 0;
  *interior_index = -1;
  if (!split_boxes(wf, wf->fields[first].shape, &inner, frame, &nframe)) return GF_OK;
  gf_task *interior = append(b);
  if (!interior) return GF_INTERNAL;
  *interior = *task;
  ((gf_kernel_task *)interior->data)->nboxes = 1;
  ((gf_kernel_task *)interior->data)->boxes[0] = inner;
  narrow_regions(wf, interior, &inner);
  *interior_index = b->count - 1;
  gf_status st = GF_OK;
  for (int k = 0; k < nframe && st == GF_OK; k++) {
    char *name = gf_asprintf("%s.edges[%d]", task->name, k);
    gf_task *edge = name ? append(b) : NULL; /* b->tasks may move: `interior` is stale */
    st = edge ? gf_kernel_task_split(task, name, &frame[k], 1, edge) : GF_INTERNAL;
    free(name);
    if (st == GF_OK) st = clone_common(task, edge);
    if (st != GF_OK) break;
    narrow_regions(wf, edge, &frame[k]);
    edge->urgent = 1;
    st = note_generated(b, old, b->count - 1);
  }
  return st;
}

static gf_status generate(gf_workflow *wf, gf_diag *diag) {
  const gf_decomposition *dc = &wf->decomp;
  const int old_count = wf->ntasks;
  int exchange_axes = 0,
      boundary = wf->boundary.kind == GF_BOUNDARY_COPY || wf->boundary.kind == GF_BOUNDARY_FIXED;
  for (int d = 0; d < wf->ndim; d++)
    exchange_axes |= (dc->dims[d] > 1 || wf->boundary.kind == GF_BOUNDARY_PERIODIC) << d;
  if ((!exchange_axes && !boundary) || wf->halo == 0) return GF_OK;
  /* The fields whose ghost cells a kernel reads. */
  char *halo_field = gf_calloc((size_t)wf->nfields + 1, 1);
  builder b = {0};
  b.moved = gf_calloc((size_t)wf->ntasks + 1, sizeof *b.moved);
  b.extra = gf_calloc((size_t)wf->ntasks + 1, sizeof *b.extra);
  b.nextra = gf_calloc((size_t)wf->ntasks + 1, sizeof *b.nextra);
  gf_status st = halo_field && b.moved && b.extra && b.nextra ? GF_OK : GF_INTERNAL;
  for (int t = 0; t < wf->ntasks && st == GF_OK; t++) {
    const gf_task *task = &wf->tasks[t];
    if (task->kind != &gf_task_kernel_kind) continue;
    for (int a = 0; a < task->naccess; a++)
      if (task->access[a].access & GF_ACCESS_READ) halo_field[task->access[a].ref.field] = 1;
  }
  int overlap = dc->overlap && exchange_axes && (wf->schedule->flags & GF_SCHED_INFERS_ORDER);
  for (int t = 0; t < wf->ntasks && st == GF_OK; t++) {
    gf_task *task = &wf->tasks[t];
    int writes_halo = 0, nwrites = 0;
    for (int a = 0; a < task->naccess; a++)
      if (task->access[a].access & GF_ACCESS_WRITE) {
        nwrites++;
        writes_halo |= halo_field[task->access[a].ref.field];
      }
    if (task->kind != &gf_task_kernel_kind) writes_halo = 0;
    int interior = -1;
    if (overlap && has_box(task) && reads_field(task, halo_field))
      st = split_kernel(&b, wf, t, task, &interior);
    if (st == GF_OK && interior < 0) {
      gf_task *moved = append(&b);
      if (moved)
        *moved = *task, interior = b.count - 1;
      else
        st = GF_INTERNAL;
    }
    if (interior >= 0) { /* moved (even where a strip then failed): b.tasks owns it */
      b.moved[t] = interior;
      memset(task, 0, sizeof *task);
    }
    if (st != GF_OK) break;
    if (!writes_halo) continue;
    for (int a = 0; a < b.tasks[interior].naccess && st == GF_OK; a++) {
      gf_access_decl acc = b.tasks[interior].access[a]; /* b.tasks moves as tasks are added */
      if (!(acc.access & GF_ACCESS_WRITE) || !halo_field[acc.ref.field]) continue;
      for (int d = wf->ndim - 1; d >= 0 && st == GF_OK; d--) {
        for (int role = 1; role >= 0 && st == GF_OK; role--) {
          if ((role && !(exchange_axes >> d & 1)) || (!role && !boundary)) continue;
          st = add_halo_task(&b, wf, interior, &acc.ref, d, role, nwrites > 1);
          if (st == GF_OK) st = note_generated(&b, t, b.count - 1);
        }
      }
    }
  }
  if (st == GF_OK) {
    /* Dependencies on a task are on its generated tasks too; indices move. */
    for (int i = 0; i < b.count && st == GF_OK; i++) {
      gf_task *task = &b.tasks[i];
      int total = 0;
      for (int k = 0; k < task->nafter; k++) total += 1 + b.nextra[task->after[k].task];
      if (total == task->nafter) {
        for (int k = 0; k < task->nafter; k++) task->after[k].task = b.moved[task->after[k].task];
        continue;
      }
      gf_dep *after = gf_calloc((size_t)total, sizeof *after);
      if (!after) {
        st = GF_INTERNAL;
        break;
      }
      int n = 0;
      for (int k = 0; k < task->nafter; k++) {
        gf_dep dep = task->after[k];
        int old = dep.task;
        after[n] = dep;
        after[n++].task = b.moved[old];
        for (int g = 0; g < b.nextra[old]; g++) {
          after[n] = dep;
          after[n++].task = b.extra[old][g];
        }
      }
      free(task->after);
      task->after = after;
      task->nafter = n;
    }
    for (int f = 0; f < wf->nfiles; f++) wf->files[f].task = b.moved[wf->files[f].task];
    free(wf->tasks);
    wf->tasks = b.tasks;
    wf->ntasks = b.count;
    b.tasks = NULL;
  }
  for (int i = 0; b.extra && i < old_count; i++) free(b.extra[i]);
  free(b.extra);
  free(b.nextra);
  free(b.moved);
  free(halo_field);
  if (st != GF_OK) {
    /* The old slots were zeroed as their tasks moved: b.tasks owns them now. */
    for (int i = 0; i < b.count; i++) gf_task_release(&b.tasks[i]);
    free(b.tasks);
    return gf_oom(diag, "adding the ghost-cell exchange");
  }
  return GF_OK;
}

gf_status gf_decompose(gf_workflow *wf, int ranks, int rank, int gpu_aware, gf_diag *diag) {
  gf_status st = place_block(wf, ranks, rank, diag);
  if (st != GF_OK) return st;
  wf->decomp.gpu_aware = gpu_aware;
  for (int f = 0; f < wf->nfiles && ranks > 1; f++)
    if (wf->files[f].image) /* a picture needs the whole plane, a rank holds its block */
      return gf_diag_at(diag, wf->tasks[wf->files[f].task].loc, GF_INVALID,
                        "task '%s': image outputs are not written by a run split over %d ranks "
                        "yet; write the field with an output task and draw it with `gflow view`",
                        wf->tasks[wf->files[f].task].name, ranks);
  /* The regions of the tasks' accesses in the grid, before the fields shrink. */
  if ((st = localize_fields(wf, diag)) != GF_OK) return st;
  for (int t = 0; t < wf->ntasks; t++)
    for (int a = 0; a < wf->tasks[t].naccess; a++) {
      gf_access_decl *acc = &wf->tasks[t].access[a];
      acc->region =
          localize_region(wf, acc->ref.field, acc->region, wf->fields[acc->ref.field].shape);
    }
  return generate(wf, diag);
}
