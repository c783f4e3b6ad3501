/* test_output.c - the output formats through their table (output_format.h):
 * each writes whole planes as one process does, and ranks' blocks (a local
 * array with ghost cells, the part a rank owns, where it lies) as MPI ranks
 * will; the file read back (raw with pread, hdf5 with the HDF5 library)
 * holds exactly the values written, zeros where nothing was, and what its
 * metadata says. */
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "output_format.h"
#include "plan_fixture.h"

/* A 3-D f64 field (4 x 5 x 6), an output of 4 planes, `format` as asked. */
static const char *workflow_text(const char *format) {
  static char text[1024];
  snprintf(text, sizeof text,
           "gflow: 1\nname: t\ngrid: {shape: [4, 5, 6], spacing: [0.5, 1.0, 2.0]}\n"
           "params: {dt: 0.25}\nfields:\n  U: {dtype: f64, init: 0}\n"
           "loop:\n  steps: 3\n  tasks:\n    - name: out\n"
           "      output: {from: U, file: u.out, planes: 4, plane: \"n + 1\", format: %s}\n",
           format);
  return text;
}

static gf_workflow *load(const char *format) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load_text("t.yaml", workflow_text(format), &diag, &wf), GF_OK);
  return wf;
}

/* The value of cell (i, j, k) of plane p. */
static double value(int64_t p, int64_t i, int64_t j, int64_t k) {
  return (double)(p * 1000 + i * 100 + j * 10 + k) + 0.125;
}

/* Two ranks' blocks of the 4 x 5 x 6 plane, as decompose.c would make them:
 * ranks own i in [0, 2) and [2, 4); each local array has a ghost layer on
 * the shared side along axis 0 and on both sides along axis 2, which it
 * does not write. */
static const gf_comm_block rank_blocks[2] = {
    {3, GF_F64, {4, 5, 6}, {3, 5, 8}, {0, 0, 1}, {2, 5, 7}, {0, 0, -1}},
    {3, GF_F64, {4, 5, 6}, {3, 5, 8}, {1, 0, 1}, {3, 5, 7}, {1, 0, -1}},
};

/* A local array of plane p: value() in the cells of [lo, hi), -1 in the
 * ghost cells, which must never reach a file. */
static double *local_array(int64_t p, const gf_comm_block *b) {
  double *v = malloc((size_t)(b->local[0] * b->local[1] * b->local[2]) * sizeof *v), *q = v;
  for (int64_t i = 0; i < b->local[0]; i++)
    for (int64_t j = 0; j < b->local[1]; j++)
      for (int64_t k = 0; k < b->local[2]; k++) {
        int inside = i >= b->lo[0] && i < b->hi[0] && j >= b->lo[1] && j < b->hi[1] &&
                     k >= b->lo[2] && k < b->hi[2];
        *q++ = inside ? value(p, b->origin[0] + i, b->origin[1] + j, b->origin[2] + k) : -1;
      }
  return v;
}

static gf_diag quiet_diag;
static char yaml[] = "gflow: 1\n";
static const gf_run_info interrupted = {.backend = "cpu",
                                        .device = "test",
                                        .resolved_yaml = yaml,
                                        .end = GF_END_INTERRUPTED,
                                        .steps_run = 2,
                                        .stopped_by = "SIGINT"};
static const uint8_t planes_1_and_2 = 0x6;
static const gf_out_end end_of_run = {&interrupted, &planes_1_and_2, 2};

/* Opens `path` for `block`; NULL on failure. */
static void *open_file(const gf_out_format *format, gf_out_target *t, const gf_workflow *wf,
                       const char *path, const gf_comm_block *block) {
  gf_diag_init(&quiet_diag, NULL, NULL);
  quiet_diag.out = quiet();
  *t = (gf_out_target){wf, &wf->files[0], "/tmp", path, *block, NULL, &quiet_diag};
  void *state = NULL;
  CHECK_INT(format->open(t, &state), GF_OK);
  return state;
}

/* Plane 1 (the output of step 0) and plane 2 (step 1) of the block. */
static void write_planes(const gf_out_format *format, void *state, const gf_comm_block *block) {
  for (int64_t p = 1; p <= 2; p++) {
    double *data = local_array(p, block);
    CHECK_INT(format->write(state, p, p - 1, data), GF_OK);
    free(data);
  }
}

/* Finishes as a run interrupted after 2 steps; returns the sidecar's text. */
static char *finish_file(const gf_out_format *format, void *state) {
  CHECK_INT(format->finish(state, &end_of_run), GF_OK);
  char *sidecar = format->sidecar(state, &end_of_run);
  format->close(state);
  return sidecar;
}

/* One process: the whole plane. */
static char *write_whole(const gf_out_format *format, const gf_workflow *wf, const char *path) {
  gf_out_target t;
  gf_comm_block whole = gf_out_whole_block(&wf->fields[0]);
  void *state = open_file(format, &t, wf, path, &whole);
  if (!state) return NULL;
  write_planes(format, state, &whole);
  return finish_file(format, state);
}

/* Plane p of the file matches value(), in the cells `only` (NULL: all)
 * says, zeros elsewhere. */
static void check_plane(const double *plane, int64_t p, int zeros, const gf_comm_block *only) {
  int bad = 0;
  for (int64_t c = 0; c < 120; c++) {
    int64_t i = c / 30, j = c / 6 % 5, k = c % 6;
    int inside = !only || (i >= only->origin[0] + only->lo[0] && i < only->origin[0] + only->hi[0]);
    bad += plane[c] != (zeros || !inside ? 0.0 : value(p, i, j, k));
  }
  CHECK_INT(bad, 0);
}

/* The four planes of a file: 1 and 2 as written (in `only`), 0 and 3 zeros. */
static void check_planes(double planes[4][120], const gf_comm_block *only) {
  for (int64_t p = 0; p < 4; p++) check_plane(planes[p], p, p == 0 || p == 3, only);
}

static void read_raw(const char *path, double planes[4][120]) {
  int fd = open(path, O_RDONLY);
  CHECK_INT(pread(fd, planes, 4 * 120 * sizeof(double), 0), (ssize_t)(4 * 120 * sizeof(double)));
  CHECK_INT(lseek(fd, 0, SEEK_END), (off_t)(4 * 120 * sizeof(double))); /* its full size */
  close(fd);
}

static void test_raw(void) {
  gf_workflow *wf = load("raw");
  if (!wf) return;
  char path[] = "/tmp/gflow-test-output-XXXXXX";
  close(mkstemp(path));
  char *json = write_whole(&gf_out_raw, wf, path);
  double planes[4][120];
  read_raw(path, planes);
  check_planes(planes, NULL);
  CHECK(json && strstr(json, "\"valid_planes\": [[1, 2]]"));
  CHECK(json && strstr(json, "\"complete\": false"));
  CHECK(json && strstr(json, "\"shape\": [4, 4, 5, 6]"));
  free(json);
  unlink(path);
  gf_workflow_free(wf);
}

/* Two ranks write their blocks into one raw file: the same file as one
 * process writes. */
static void test_raw_blocks(void) {
  gf_workflow *wf = load("raw");
  if (!wf) return;
  char path[] = "/tmp/gflow-test-output-XXXXXX";
  close(mkstemp(path));
  gf_out_target t[2];
  void *state[2];
  for (int r = 0; r < 2; r++) state[r] = open_file(&gf_out_raw, &t[r], wf, path, &rank_blocks[r]);
  for (int r = 0; r < 2; r++)
    if (state[r]) write_planes(&gf_out_raw, state[r], &rank_blocks[r]);
  for (int r = 0; r < 2; r++)
    if (state[r]) free(finish_file(&gf_out_raw, state[r]));
  double planes[4][120];
  read_raw(path, planes);
  check_planes(planes, NULL);
  unlink(path);
  gf_workflow_free(wf);
}

static double read_double_attr(hid_t obj, const char *name, int i) {
  double v[3] = {-1, -1, -1};
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_DOUBLE, v);
  H5Aclose(a);
  return v[i];
}

static void test_hdf5(void) {
  gf_workflow *wf = load("hdf5");
  if (!wf) return;
  char path[] = "/tmp/gflow-test-output-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  char *xdmf = write_whole(&gf_out_hdf5, wf, path);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t data = H5Dopen2(file, "U", H5P_DEFAULT);
  CHECK(data >= 0);
  double planes[4][120];
  CHECK(H5Dread(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, planes) >= 0);
  check_planes(planes, NULL);
  /* dimension 0: step then time; time = step * dt, NaN where no plane */
  CHECK_INT(H5DSget_num_scales(data, 0), 2);
  int64_t steps[4];
  double times[4];
  hid_t step = H5Dopen2(file, "step", H5P_DEFAULT), time = H5Dopen2(file, "time", H5P_DEFAULT);
  CHECK(H5DSis_attached(data, step, 0) > 0 && H5DSis_attached(data, time, 0) > 0);
  H5Dread(step, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, steps);
  H5Dread(time, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, times);
  CHECK_INT(steps[0], -1);
  CHECK_INT(steps[1], 0);
  CHECK_INT(steps[2], 1);
  CHECK_INT(steps[3], -1);
  CHECK(isnan(times[0]) && times[1] == 0.0 && times[2] == 0.25 && isnan(times[3]));
  /* dimension 3: x2 = index * spacing[2] */
  hid_t x2 = H5Dopen2(file, "x2", H5P_DEFAULT);
  double x[6];
  H5Dread(x2, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
  CHECK(H5DSis_attached(data, x2, 3) > 0 && x[5] == 10.0);
  CHECK(read_double_attr(data, "spacing", 2) == 2.0 && read_double_attr(data, "origin", 1) == 0);
  int8_t complete = -1;
  hid_t a = H5Aopen(file, "complete", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT8, &complete);
  H5Aclose(a);
  CHECK_INT(complete, 0);
  int64_t ranges[2] = {-1, -1};
  a = H5Aopen(file, "valid_planes", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT64, ranges);
  H5Aclose(a);
  CHECK(ranges[0] == 1 && ranges[1] == 2);
  H5Dclose(x2);
  H5Dclose(step);
  H5Dclose(time);
  H5Dclose(data);
  H5Fclose(file);
  /* the XDMF: a grid for each plane written, at its time, from the file's dataset */
  CHECK(xdmf && strstr(xdmf,
                       "<Grid Name=\"plane 2\" GridType=\"Uniform\">\n        <Time "
                       "Value=\"0.25\"/>\n        <Topology TopologyType=\"3DCoRectMesh\" "
                       "Dimensions=\"4 5 6\"/>"));
  CHECK(xdmf && strstr(xdmf, ">0.5 1 2</DataItem>"));
  CHECK(xdmf && strstr(xdmf, "Dimensions=\"3 4\">2 0 0 0 1 1 1 1 1 4 5 6</DataItem>"));
  CHECK(xdmf && strstr(xdmf, "Precision=\"8\" Dimensions=\"4 4 5 6\">u.out:/U</DataItem>"));
  CHECK(xdmf && !strstr(xdmf, "plane 3"));
  free(xdmf);
  unlink(path);
  gf_workflow_free(wf);
}

/* One rank's block of an HDF5 file (through a hyperslab): its cells and
 * nothing else, ghost cells left out. */
static void test_hdf5_block(void) {
  gf_workflow *wf = load("hdf5");
  if (!wf) return;
  char path[] = "/tmp/gflow-test-output-XXXXXX";
  close(mkstemp(path));
  gf_out_target t;
  void *state = open_file(&gf_out_hdf5, &t, wf, path, &rank_blocks[1]);
  if (state) write_planes(&gf_out_hdf5, state, &rank_blocks[1]);
  if (state) free(finish_file(&gf_out_hdf5, state));
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t data = H5Dopen2(file, "U", H5P_DEFAULT);
  double planes[4][120];
  CHECK(H5Dread(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, planes) >= 0);
  check_planes(planes, &rank_blocks[1]);
  H5Dclose(data);
  H5Fclose(file);
  unlink(path);
  gf_workflow_free(wf);
}

int main(void) {
  RUN(test_raw);
  RUN(test_raw_blocks);
  RUN(test_hdf5);
  RUN(test_hdf5_block);
  return check_summary();
}
