/* output_hdf5.c - `format: hdf5`: one self-describing HDF5 file per output,
 * and beside it an XDMF file (NAME.xdmf) through which ParaView and VisIt
 * open it as a time series.
 *
 * The file holds one dataset named after the field, shape (planes, N0[, N1[,
 * N2]]), one chunk per plane (a plane over 1 GiB is split along its first
 * axes: HDF5 caps a chunk below 4 GiB), planes never written reading as 0
 * like the raw file's. Its dimension 0 carries two dimension scales (H5DS):
 * `step`, the step whose output task wrote each plane (-1: none), and `time`,
 * step * dt (dt the workflow's parameter of that name; without one, the
 * step), NaN where no plane was written. `time` is attached last, so netCDF
 * readers (xarray) take it as the coordinate. Dimension d + 1 carries `xd`,
 * origin + i * spacing. Attributes: on the dataset `spacing` and `origin`,
 * `field` and `task`; on the file the gflow version, the workflow file and,
 * written at the end, the resolved workflow, the plane ranges written, the
 * steps run, how the run ended and `complete` (FALSE from creation until a
 * run that ran every step sets it).
 *
 * A whole plane goes to its chunk with H5Dwrite_chunk, no copy and no
 * selection; a block of one (MPI) through a hyperslab. The chunk cache is
 * off: each plane is written once, straight to the file. A single process's
 * chunks get their places at the dataset's creation (early allocation, no
 * fill), and when those places lie one after another in plane order (HDF5
 * places them so; each is checked) a run of consecutive planes goes to the
 * file in one write at its first chunk's place, as the raw writer's does:
 * the chunks' bytes are the planes' bytes unfiltered, and the index,
 * written at creation, already points at them. The file is in the
 * HDF5 1.10 format (readers need HDF5 1.10 or later, 2016): its index of a
 * fixed-size dataset's chunks is an array, where the 1.8 format's B-tree
 * made each plane's write measurably slower than the raw writer's.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output_format.h"
#include "schedule.h"
#include "text.h"

#define STEP_PAGE 4096 /* steps kept per page; a page exists once a plane of it is written */
#define MAX_CHUNK_BYTES ((uint64_t)1 << 30)

static const char *const scale_names[] = {"x0", "x1", "x2"};

typedef struct h5_file {
  const gf_out_target *t;
  const gf_field *field;
  hid_t file, data; /* H5I_INVALID_HID once closed */
  int rank;         /* the field's dimensions + 1 */
  hsize_t dims[GF_MAX_DIMS + 1];
  int direct;      /* a chunk is a whole plane: planes go in with H5Dwrite_chunk */
  hid_t type;      /* the values' type, native in memory and in the file */
  int64_t **steps; /* npages pages of STEP_PAGE steps, -1 where no plane was written */
  int64_t npages;
  int ranks, lead; /* under MPI: the ranks that write the file, and whether this is rank 0 */
  hid_t xfer;      /* how planes are written: H5P_DEFAULT, or collective MPI-IO */
  int fd;          /* >= 0: the file's descriptor, for runs of planes written in place */
  int64_t placed;  /* then where plane 0's chunk starts; plane p's is p planes on */
} h5_file;

/* HDF5 prints its error stack unless told not to; the setting is per thread
 * in a thread-safe HDF5, and the writer thread writes. And HDF5 would close
 * its files again at exit, which crashes on a file whose close failed (a
 * full disk): gflow closes its files itself, so the library need not, and
 * must be told before it starts. */
static void quiet(void) {
  static _Thread_local int done;
  if (done) return;
  H5dont_atexit(); /* fails, harmlessly, once the library runs */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  done = 1;
}

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data) {
  if (n == 0 && e->desc) snprintf(data, 256, "%s", e->desc);
  return 0;
}

/* Why the last HDF5 call of this thread failed, from the deepest entry of its
 * error stack: the system's words when a read or write failed ("errno = 28"
 * in HDF5's text), else HDF5's. */
static const char *h5_reason(char buf[256]) {
  buf[0] = '\0';
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, buf);
  H5Eclear2(H5E_DEFAULT);
  const char *err = strstr(buf, "errno = ");
  if (err) return gf_out_error_text(atoi(err + strlen("errno = ")));
  return buf[0] ? buf : "unknown HDF5 error";
}

/* ---- attributes ------------------------------------------------------------ */

/* An attribute of `n` values (0: a scalar) of `type`, replacing one of that
 * name. */
static int put_attr(hid_t obj, const char *name, hid_t type, hsize_t n, const void *value) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return -1;
  hid_t space = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
  hid_t attr = space >= 0 ? H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
  herr_t st = attr >= 0 ? H5Awrite(attr, type, value) : -1;
  if (attr >= 0 && H5Aclose(attr) < 0) st = -1;
  if (space >= 0) H5Sclose(space);
  return st < 0 ? -1 : 0;
}

/* A variable-length UTF-8 string: stored on the global heap, so the
 * resolved workflow is not held to an object header's 64 KiB. */
static int put_string(hid_t obj, const char *name, const char *value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  int st =
      type >= 0 && H5Tset_size(type, H5T_VARIABLE) >= 0 && H5Tset_cset(type, H5T_CSET_UTF8) >= 0
          ? put_attr(obj, name, type, 0, &value)
          : -1;
  if (type >= 0) H5Tclose(type);
  return st;
}

/* A boolean as h5py writes one (an int8 enum FALSE/TRUE), read back as bool. */
static int put_bool(hid_t obj, const char *name, int value) {
  hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
  int8_t no = 0, yes = 1, v = value ? 1 : 0;
  int st = type >= 0 && H5Tenum_insert(type, "FALSE", &no) >= 0 &&
                   H5Tenum_insert(type, "TRUE", &yes) >= 0
               ? put_attr(obj, name, type, 0, &v)
               : -1;
  if (type >= 0) H5Tclose(type);
  return st;
}

static int put_i64(hid_t obj, const char *name, int64_t value) {
  return put_attr(obj, name, H5T_NATIVE_INT64, 0, &value);
}

/* What the file says from its creation on. */
static int static_attributes(h5_file *h) {
  const gf_workflow *wf = h->t->wf;
  int nd = h->field->ndim;
  double origin[GF_MAX_DIMS] = {0}, dt;
  int st = put_string(h->file, "gflow_version", GFLOW_VERSION) |
           put_string(h->file, "workflow_file", wf->path) | put_bool(h->file, "complete", 0) |
           put_attr(h->data, "spacing", H5T_NATIVE_DOUBLE, (hsize_t)nd, wf->spacing) |
           put_attr(h->data, "origin", H5T_NATIVE_DOUBLE, (hsize_t)nd, origin) |
           put_string(h->data, "field", h->field->name) |
           put_string(h->data, "task", wf->tasks[h->t->file->task].name);
  if (gf_out_dt(wf, &dt)) st |= put_attr(h->data, "dt", H5T_NATIVE_DOUBLE, 0, &dt);
  return st;
}

/* ---- the table's operations ------------------------------------------------ */

static void h5_close(void *state);

/* Whether the chunks lie in plane order, one after another (then runs of
 * planes are written in place, fd and placed set), asked of HDF5 chunk by
 * chunk: only the file's own driver (sec2) gives a descriptor. */
static void find_places(h5_file *h, uint64_t chunk_bytes) {
  h->fd = -1;
  void *handle = NULL;
  hid_t fapl = H5Fget_access_plist(h->file);
  int sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2;
  if (fapl >= 0) H5Pclose(fapl);
  if (!sec2 || H5Fget_vfd_handle(h->file, H5P_DEFAULT, &handle) < 0 || !handle) return;
  haddr_t first = HADDR_UNDEF;
  for (hsize_t p = 0; p < h->dims[0]; p++) {
    hsize_t offset[GF_MAX_DIMS + 1] = {p}, size = 0;
    unsigned filters = 0;
    haddr_t at = HADDR_UNDEF;
    if (H5Dget_chunk_info_by_coord(h->data, offset, &filters, &at, &size) < 0 ||
        at == HADDR_UNDEF || size != chunk_bytes || filters != 0)
      return;
    if (p == 0) first = at;
    if (at != first + p * chunk_bytes) return;
  }
  h->fd = *(int *)handle;
  h->placed = (int64_t)first;
}

static gf_status h5_open(const gf_out_target *t, void **state) {
  quiet();
  h5_file *h = gf_calloc(1, sizeof *h);
  if (!h) return gf_oom(t->diag, "opening the output files");
  h->t = t;
  h->field = &t->wf->fields[t->file->field];
  h->file = h->data = H5I_INVALID_HID;
  h->xfer = H5P_DEFAULT;
  h->fd = -1;
  h->ranks = gf_comm_size(t->comm);
  h->lead = gf_comm_rank(t->comm) == 0;
  h->rank = h->field->ndim + 1;
  h->type = h->field->dtype == GF_F64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  h->npages = (t->file->planes + STEP_PAGE - 1) / STEP_PAGE;
  h->steps = gf_calloc((size_t)h->npages, sizeof *h->steps);
  if (!h->steps) {
    h5_close(h);
    return gf_oom(t->diag, "opening the output files");
  }
  hsize_t chunk[GF_MAX_DIMS + 1];
  h->dims[0] = chunk[0] = (hsize_t)t->file->planes;
  for (int d = 0; d < h->field->ndim; d++) h->dims[d + 1] = chunk[d + 1] = t->block.global[d];
  chunk[0] = 1;
  uint64_t bytes = (uint64_t)gf_out_plane_bytes(&t->block, h->field->dtype);
  for (int d = 1; d < h->rank && bytes > MAX_CHUNK_BYTES;) {
    if (chunk[d] == 1) {
      d++;
      continue;
    }
    bytes = bytes / chunk[d] * ((chunk[d] + 1) / 2);
    chunk[d] = (chunk[d] + 1) / 2;
  }
  /* one process's whole plane is one chunk, written as it is */
  h->direct = bytes == (uint64_t)gf_out_plane_bytes(&t->block, h->field->dtype) &&
              gf_out_block_is_whole(&t->block) && h->ranks == 1;

  char why[256];
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), dcpl = H5Pcreate(H5P_DATASET_CREATE),
        dapl = H5Pcreate(H5P_DATASET_ACCESS), space = H5Screate_simple(h->rank, h->dims, NULL);
  int ok = fapl >= 0 && dcpl >= 0 && dapl >= 0 && space >= 0 &&
           H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) >= 0 &&
           H5Pset_chunk(dcpl, h->rank, chunk) >= 0 && H5Pset_chunk_cache(dapl, 0, 0, 1.0) >= 0;
  if (h->ranks == 1) {
    ok = ok && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0;
    /* Every chunk's place set at creation (the index written once), none
     * filled: a new file's unwritten planes read as zeros anyway. */
    if (h->direct)
      ok = ok && H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0 &&
           H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0;
  } else { /* every rank writes its block of the one file, collectively */
#ifdef H5_HAVE_PARALLEL
    /* Parallel HDF5 allocates a dataset's chunks at its creation; filling
     * them would write every plane once more, and a new file's unwritten
     * planes read as zeros anyway. */
    const MPI_Comm *mpi = gf_comm_mpi_handle(t->comm);
    ok = ok && mpi && H5Pset_fapl_mpio(fapl, *mpi, MPI_INFO_NULL) >= 0 &&
         H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0 &&
         H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
         (h->xfer = H5Pcreate(H5P_DATASET_XFER)) >= 0 &&
         H5Pset_dxpl_mpio(h->xfer, H5FD_MPIO_COLLECTIVE) >= 0;
#else
    h5_close(h);
    if (fapl >= 0) H5Pclose(fapl);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (dapl >= 0) H5Pclose(dapl);
    if (space >= 0) H5Sclose(space);
    return gf_diag_error(t->diag, GF_CANTCREATE,
                         "cannot create %s: this gflow's HDF5 is serial, and %d ranks write one "
                         "file with parallel HDF5 (apt-get install libhdf5-openmpi-dev, rebuild)",
                         t->temp_path, h->ranks);
#endif
  }
  if (ok) ok = (h->file = H5Fcreate(t->temp_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0;
  if (ok)
    ok = (h->data = H5Dcreate2(h->file, h->field->name, h->type, space, H5P_DEFAULT, dcpl, dapl)) >=
             0 &&
         static_attributes(h) == 0;
  if (ok && h->direct && h->ranks == 1) find_places(h, bytes);
  gf_status st = ok ? GF_OK
                    : gf_diag_error(t->diag, GF_CANTCREATE, "cannot create %s: %s", t->temp_path,
                                    h5_reason(why));
  if (fapl >= 0) H5Pclose(fapl);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (dapl >= 0) H5Pclose(dapl);
  if (space >= 0) H5Sclose(space);
  if (st == GF_OK)
    *state = h;
  else
    h5_close(h);
  return st;
}

static gf_status record_step(h5_file *h, int64_t plane, int64_t step) {
  int64_t **page = &h->steps[plane / STEP_PAGE];
  if (!*page) {
    if (!(*page = gf_malloc(STEP_PAGE * sizeof **page)))
      return gf_oom(h->t->diag, "recording the steps of an HDF5 output");
    for (int i = 0; i < STEP_PAGE; i++) (*page)[i] = -1;
  }
  (*page)[plane % STEP_PAGE] = step;
  return GF_OK;
}

static gf_status h5_write(void *state, int64_t plane, int64_t step, const void *data) {
  quiet();
  h5_file *h = state;
  const gf_out_target *t = h->t;
  const gf_comm_block *b = &t->block;
  gf_status recorded = record_step(h, plane, step);
  if (recorded != GF_OK) return recorded;

  herr_t st;
  if (h->fd >= 0) { /* in place */
    size_t bytes = h->field->bytes;
    if (gf_out_write_all(h->fd, data, bytes, h->placed + plane * (int64_t)bytes) != 0)
      return gf_diag_error(t->diag, GF_IOERR, "cannot write plane %" PRId64 " of %s/%s: %s", plane,
                           t->dir, t->file->name, gf_out_error_text(errno));
    return GF_OK;
  }
  if (h->direct) {
    hsize_t offset[GF_MAX_DIMS + 1] = {(hsize_t)plane};
    st = H5Dwrite_chunk(h->data, H5P_DEFAULT, 0, offset,
                        (size_t)gf_out_plane_bytes(b, h->field->dtype), data);
  } else { /* the part [lo, hi) of the local array, to its place in the plane */
    hsize_t local[GF_MAX_DIMS], lo[GF_MAX_DIMS],
        count[GF_MAX_DIMS + 1] = {1}, start[GF_MAX_DIMS + 1] = {(hsize_t)plane};
    for (int d = 0; d < h->field->ndim; d++) {
      local[d] = (hsize_t)b->local[d];
      lo[d] = (hsize_t)b->lo[d];
      count[d + 1] = (hsize_t)(b->hi[d] - b->lo[d]);
      start[d + 1] = (hsize_t)(b->origin[d] + b->lo[d]);
    }
    hid_t file_space = H5Dget_space(h->data),
          mem_space = H5Screate_simple(h->field->ndim, local, NULL);
    st = file_space >= 0 && mem_space >= 0 &&
                 H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                 H5Sselect_hyperslab(mem_space, H5S_SELECT_SET, lo, NULL, count + 1, NULL) >= 0
             ? H5Dwrite(h->data, h->type, mem_space, file_space, h->xfer, data)
             : -1;
    if (file_space >= 0) H5Sclose(file_space);
    if (mem_space >= 0) H5Sclose(mem_space);
  }
  char why[256];
  if (st < 0)
    return gf_diag_error(t->diag, GF_IOERR, "cannot write plane %" PRId64 " of %s/%s: %s", plane,
                         t->dir, t->file->name, h5_reason(why));
  return GF_OK;
}

/* Consecutive planes: in place, one write, where the chunks lie in order;
 * else (or if that write fails, which then names its plane) plane by plane. */
static gf_status h5_write_run(void *state, int64_t plane, int count, const int64_t *steps,
                              const void *data) {
  h5_file *h = state;
  size_t bytes = h->field->bytes;
  if (h->fd >= 0 && gf_out_write_all(h->fd, data, (size_t)count * bytes,
                                     h->placed + plane * (int64_t)bytes) == 0) {
    for (int i = 0; i < count; i++) {
      gf_status st = record_step(h, plane + i, steps[i]);
      if (st != GF_OK) return st;
    }
    return GF_OK;
  }
  gf_status st = GF_OK;
  for (int i = 0; i < count && st == GF_OK; i++)
    st = h5_write(state, plane + i, steps[i], (const char *)data + (size_t)i * bytes);
  return st;
}

static int64_t step_of(const h5_file *h, int64_t plane) {
  const int64_t *page = h->steps[plane / STEP_PAGE];
  return page ? page[plane % STEP_PAGE] : -1;
}

static double time_of(const h5_file *h, int64_t step) {
  double dt;
  if (step < 0) return NAN;
  return gf_out_dt(h->t->wf, &dt) ? (double)step * dt : (double)step;
}

/* A 1-D dataset of `n` values that becomes a dimension scale of dimension
 * `dim` of the data; `fill` where nothing is written. `values(h, i0, n, buf)`
 * fills buf with entries i0 .. i0 + n - 1 and says whether to write them. */
typedef int (*scale_values)(const h5_file *h, int dim, hsize_t first, hsize_t n, void *buf);

static int put_scale(h5_file *h, const char *name, int dim, hid_t type, const void *fill,
                     const char *description, scale_values values) {
  hsize_t n = h->dims[dim], page = n < STEP_PAGE ? n : STEP_PAGE;
  hid_t space = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t scale = space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, &page) >= 0 &&
                        H5Pset_fill_value(dcpl, type, fill) >= 0
                    ? H5Dcreate2(h->file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)
                    : -1;
  void *buf = gf_malloc((size_t)page * 8);
  int st = scale >= 0 && buf ? 0 : -1;
  /* Under MPI rank 0 writes the values (independent I/O), all create the
   * dataset and its attributes (collective). */
  for (hsize_t first = 0; first < n && st == 0 && h->lead; first += page) {
    hsize_t count = n - first < page ? n - first : page;
    if (!values(h, dim, first, count, buf)) continue;
    hid_t mem = H5Screate_simple(1, &count, NULL), file = H5Scopy(space);
    st = mem >= 0 && file >= 0 &&
                 H5Sselect_hyperslab(file, H5S_SELECT_SET, &first, NULL, &count, NULL) >= 0 &&
                 H5Dwrite(scale, type, mem, file, H5P_DEFAULT, buf) >= 0
             ? 0
             : -1;
    if (mem >= 0) H5Sclose(mem);
    if (file >= 0) H5Sclose(file);
  }
  if (st == 0)
    st = put_string(scale, "description", description) == 0 && H5DSset_scale(scale, name) >= 0 &&
                 H5DSattach_scale(h->data, scale, (unsigned)dim) >= 0
             ? 0
             : -1;
  free(buf);
  if (scale >= 0 && H5Dclose(scale) < 0) st = -1;
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return st;
}

static int step_values(const h5_file *h, int dim, hsize_t first, hsize_t n, void *buf) {
  (void)dim;
  const int64_t *page = h->steps[first / STEP_PAGE];
  if (page) memcpy(buf, page, n * sizeof *page);
  return page != NULL;
}

static int time_values(const h5_file *h, int dim, hsize_t first, hsize_t n, void *buf) {
  (void)dim;
  const int64_t *page = h->steps[first / STEP_PAGE];
  for (hsize_t i = 0; page && i < n; i++) ((double *)buf)[i] = time_of(h, page[i]);
  return page != NULL;
}

static int axis_values(const h5_file *h, int dim, hsize_t first, hsize_t n, void *buf) {
  for (hsize_t i = 0; i < n; i++)
    ((double *)buf)[i] = (double)(first + i) * h->t->wf->spacing[dim - 1];
  return 1;
}

/* What the file says once the run is over. */
static int end_attributes(h5_file *h, const gf_out_end *end) {
  const gf_run_info *info = end->info;
  const gf_workflow *wf = h->t->wf;
  /* [first, last] ranges of planes that hold data, as the raw sidecar's valid_planes */
  int64_t nranges = 0;
  for (int64_t p = 0; p < h->t->file->planes; p++)
    nranges += gf_out_plane_written(end->written, p) &&
               (p == 0 || !gf_out_plane_written(end->written, p - 1));
  int64_t *ranges = gf_malloc((size_t)(nranges ? nranges : 1) * 2 * sizeof *ranges);
  if (!ranges) return -1;
  int64_t r = 0;
  for (int64_t p = 0; p < h->t->file->planes; p++) {
    if (!gf_out_plane_written(end->written, p)) continue;
    if (p == 0 || !gf_out_plane_written(end->written, p - 1)) ranges[2 * r] = p, r++;
    ranges[2 * r - 1] = p;
  }
  hsize_t rdims[2] = {(hsize_t)nranges, 2};
  hid_t rspace = H5Screate_simple(2, rdims, NULL);
  hid_t rattr = rspace >= 0 ? H5Acreate2(h->file, "valid_planes", H5T_NATIVE_INT64, rspace,
                                         H5P_DEFAULT, H5P_DEFAULT)
                            : -1;
  int st = rattr >= 0 && H5Awrite(rattr, H5T_NATIVE_INT64, ranges) >= 0 ? 0 : -1;
  if (rattr >= 0) H5Aclose(rattr);
  if (rspace >= 0) H5Sclose(rspace);
  free(ranges);

  st |= put_i64(h->file, "planes_written", end->nwritten) |
        put_i64(h->file, "steps_run", info->steps_run) | put_i64(h->file, "steps", wf->steps) |
        put_string(h->file, "schedule", wf->schedule->name) |
        put_string(h->file, "backend", info->backend) | put_i64(h->file, "ranks", h->ranks);
  if (h->ranks == 1) /* under MPI each rank has its own, and attributes are collective */
    st |= put_string(h->file, "device", info->device ? info->device : "");
  if (info->end == GF_END_INTERRUPTED)
    st |= put_i64(h->file, "interrupted_at_step", info->steps_run) |
          put_string(h->file, "interrupted_by", info->stopped_by ? info->stopped_by : "");
  else if (info->end == GF_END_CHECK)
    st |= put_i64(h->file, "stopped_at_step", info->steps_run - 1) |
          put_string(h->file, "stopped_by_check", info->stopped_by ? info->stopped_by : "");
  /* A run that keeps its files always passes the resolved workflow: NULL is
   * the copy that ran out of memory, and the file must not lie. */
  if (!info->resolved_yaml) return -1;
  st |= put_string(h->file, "resolved_workflow", info->resolved_yaml);
  /* last: a file that says complete holds everything else */
  return st | put_bool(h->file, "complete", info->end == GF_END_COMPLETE);
}

static gf_status h5_finish(void *state, const gf_out_end *end) {
  quiet();
  h5_file *h = state;
  const gf_out_target *t = h->t;
  int64_t none = -1;
  double nan = NAN, zero = 0;
  int st = put_scale(h, "step", 0, H5T_NATIVE_INT64, &none,
                     "the step whose output task wrote the plane; -1: none did", step_values);
  st |= put_scale(h, "time", 0, H5T_NATIVE_DOUBLE, &nan,
                  "simulated time of the plane: step * dt (dt the workflow's parameter; without "
                  "one, the step); NaN: no plane",
                  time_values);
  for (int d = 0; d < h->field->ndim && st == 0; d++)
    st |= put_scale(h, scale_names[d], d + 1, H5T_NATIVE_DOUBLE, &zero,
                    "cell position: origin + index * spacing", axis_values);
  if (st == 0) st = end_attributes(h, end);
  char why[256] = "";
  if (st != 0) h5_reason(why);
  if (H5Dclose(h->data) < 0) st = -1;
  h->data = H5I_INVALID_HID;
  if (H5Fclose(h->file) < 0) st = -1;
  h->file = H5I_INVALID_HID;
  if (st != 0)
    return gf_diag_error(t->diag, GF_IOERR, "cannot finish %s/%s: %s", t->dir, t->file->name,
                         why[0] ? why : h5_reason(why));
  /* durable before its rename, like every output */
  if (!h->lead) return GF_OK;
  int fd = open(t->temp_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    gf_status err = gf_diag_error(t->diag, GF_IOERR, "cannot write %s/%s: %s", t->dir,
                                  t->file->name, gf_out_error_text(errno));
    if (fd >= 0) close(fd);
    return err;
  }
  close(fd);
  return GF_OK;
}

/* ---- the XDMF sidecar -------------------------------------------------------- */

/* A temporal collection of one uniform grid per plane written, each a 2-D
 * or 3-D CoRectMesh (a 1-D field is a 1 x N mesh) whose values are that
 * plane of the dataset, as a hyperslab. */
static char *h5_sidecar(void *state, const gf_out_end *end) {
  h5_file *h = state;
  const gf_workflow *wf = h->t->wf;
  const gf_field *field = h->field;
  int nd = field->ndim, md = nd < 2 ? 2 : nd;
  int64_t shape[GF_MAX_DIMS];
  double spacing[GF_MAX_DIMS];
  for (int d = 0; d < md; d++) {
    int from = d - (md - nd); /* a 1-D field's axis is the mesh's last */
    shape[d] = from < 0 ? 1 : h->t->block.global[from];
    spacing[d] = from < 0 ? 1.0 : wf->spacing[from];
  }
  char dims[96] = "", origin[64] = "", steps[160] = "", data_dims[128] = "";
  for (int d = 0, n = 0, o = 0, s = 0; d < md; d++) {
    n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%" PRId64, d ? " " : "", shape[d]);
    o += snprintf(origin + o, sizeof origin - (size_t)o, "%s0", d ? " " : "");
    s += snprintf(steps + s, sizeof steps - (size_t)s, "%s%.17g", d ? " " : "", spacing[d]);
  }
  snprintf(data_dims, sizeof data_dims, "%" PRId64, h->t->file->planes);
  for (int d = 0; d < nd; d++)
    snprintf(data_dims + strlen(data_dims), sizeof data_dims - strlen(data_dims), " %" PRId64,
             h->t->block.global[d]);
  int precision = field->dtype == GF_F64 ? 8 : 4;

  gf_text b = {0};
  gf_text_puts(&b,
               "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
               "<Xdmf Version=\"2.0\">\n  <Domain>\n    <Grid Name=\"");
  gf_text_xml(&b, field->name);
  gf_text_puts(&b, "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
  for (int64_t p = 0; p < h->t->file->planes; p++) {
    if (!gf_out_plane_written(end->written, p)) continue;
    gf_text_printf(&b,
                   "      <Grid Name=\"plane %" PRId64
                   "\" GridType=\"Uniform\">\n"
                   "        <Time Value=\"%.17g\"/>\n"
                   "        <Topology TopologyType=\"%dDCoRectMesh\" Dimensions=\"%s\"/>\n"
                   "        <Geometry GeometryType=\"%s\">\n"
                   "          <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" "
                   "Dimensions=\"%d\">%s</DataItem>\n"
                   "          <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" "
                   "Dimensions=\"%d\">%s</DataItem>\n"
                   "        </Geometry>\n"
                   "        <Attribute Name=\"",
                   p, time_of(h, step_of(h, p)), md, dims,
                   md == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY", md, origin, md, steps);
    gf_text_xml(&b, field->name);
    gf_text_printf(&b,
                   "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
                   "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%s\">\n"
                   "            <DataItem Format=\"XML\" NumberType=\"Int\" Dimensions=\"3 %d\">",
                   dims, nd + 1);
    gf_text_printf(&b, "%" PRId64, p); /* start */
    for (int d = 0; d < nd; d++) gf_text_puts(&b, " 0");
    for (int d = 0; d <= nd; d++) gf_text_puts(&b, " 1"); /* stride */
    gf_text_puts(&b, " 1");                               /* count */
    for (int d = 0; d < nd; d++) gf_text_printf(&b, " %" PRId64, h->t->block.global[d]);
    gf_text_printf(&b,
                   "</DataItem>\n"
                   "            <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"%d\" "
                   "Dimensions=\"%s\">",
                   precision, data_dims);
    gf_text_xml(&b, h->t->file->name);
    gf_text_puts(&b, ":/");
    gf_text_xml(&b, field->name);
    gf_text_puts(&b, "</DataItem>\n          </DataItem>\n        </Attribute>\n      </Grid>\n");
  }
  gf_text_puts(&b, "    </Grid>\n  </Domain>\n</Xdmf>\n");
  return gf_text_take(&b);
}

static void h5_close(void *state) {
  h5_file *h = state;
  if (!h) return;
  quiet();
  if (h->data >= 0) H5Dclose(h->data);
  if (h->file >= 0) H5Fclose(h->file);
  if (h->xfer != H5P_DEFAULT && h->xfer >= 0) H5Pclose(h->xfer);
  for (int64_t i = 0; h->steps && i < h->npages; i++) free(h->steps[i]);
  free(h->steps);
  free(h);
}

const gf_out_format gf_out_hdf5 = {
    .name = "hdf5",
    .sidecar_suffix = ".xdmf",
    .bytes_per_plane = 1200, /* the XDMF's grid (~1 KiB), the chunk index, step and time */
    .open = h5_open,
    .write = h5_write,
    .write_run = h5_write_run,
    .finish = h5_finish,
    .sidecar = h5_sidecar,
    .close = h5_close,
};
