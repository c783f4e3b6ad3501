/* test_output.c - the output formats through their table (output_format.h):
 * every format writes a plane whole and another one as blocks (as MPI ranks
 * will), and the file read back (raw with pread, hdf5 with the HDF5 library)
 * holds exactly the values written, zeros where no plane was, and what its
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

/* Cells of `box` of plane p, in C order over the box. */
static double *block(int64_t p, const gf_out_box *box) {
  double *v = malloc((size_t)(box->count[0] * box->count[1] * box->count[2]) * sizeof *v), *q = v;
  for (int64_t i = 0; i < box->count[0]; i++)
    for (int64_t j = 0; j < box->count[1]; j++)
      for (int64_t k = 0; k < box->count[2]; k++)
        *q++ = value(p, box->start[0] + i, box->start[1] + j, box->start[2] + k);
  return v;
}

/* Writes plane 1 whole (as step 0), plane 2 as four blocks (step 1) and
 * plane 3 nowhere; finishes as a run interrupted after 2 steps. Returns the
 * sidecar's text. */
static char *write_file(const gf_out_format *format, const gf_workflow *wf, const char *path) {
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  diag.out = quiet();
  gf_out_target t = {wf, &wf->files[0], "/tmp", path, &diag};
  void *state = NULL;
  CHECK_INT(format->open(&t, &state), GF_OK);
  if (!state) return NULL;
  gf_out_box whole = gf_out_whole_plane(&wf->fields[0]);
  double *data = block(1, &whole);
  CHECK_INT(format->write(state, 1, 0, data, &whole), GF_OK);
  free(data);
  /* four blocks: i in [0, 3) and [3, 4), j in [0, 2) and [2, 5) */
  for (int b = 0; b < 4; b++) {
    gf_out_box box = {{b & 1 ? 3 : 0, b & 2 ? 2 : 0, 0}, {b & 1 ? 1 : 3, b & 2 ? 3 : 2, 6}};
    data = block(2, &box);
    CHECK_INT(format->write(state, 2, 1, data, &box), GF_OK);
    free(data);
  }
  uint8_t written = 0x6; /* planes 1 and 2 */
  char yaml[] = "gflow: 1\n";
  gf_run_info info = {.backend = "cpu",
                      .device = "test",
                      .resolved_yaml = yaml,
                      .end = GF_END_INTERRUPTED,
                      .steps_run = 2,
                      .stopped_by = "SIGINT"};
  gf_out_end end = {&info, &written, 2};
  CHECK_INT(format->finish(state, &end), GF_OK);
  char *sidecar = format->sidecar(state, &end);
  format->close(state);
  return sidecar;
}

/* Plane p of the file as `read` gives it matches value(), or zeros. */
static void check_plane(const double *plane, int64_t p, int zeros) {
  int bad = 0;
  for (int64_t c = 0; c < 120; c++)
    bad += plane[c] != (zeros ? 0.0 : value(p, c / 30, c / 6 % 5, c % 6));
  CHECK_INT(bad, 0);
}

static void test_raw(void) {
  gf_workflow *wf = load("raw");
  if (!wf) return;
  char path[] = "/tmp/gflow-test-output-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  char *json = write_file(&gf_out_raw, wf, path);
  fd = open(path, O_RDONLY);
  double planes[4][120];
  CHECK_INT(pread(fd, planes, sizeof planes, 0), (ssize_t)sizeof planes);
  CHECK_INT(lseek(fd, 0, SEEK_END), (off_t)sizeof planes); /* its full size */
  close(fd);
  check_plane(planes[0], 0, 1);
  check_plane(planes[1], 1, 0);
  check_plane(planes[2], 2, 0);
  check_plane(planes[3], 3, 1);
  CHECK(json && strstr(json, "\"valid_planes\": [[1, 2]]"));
  CHECK(json && strstr(json, "\"complete\": false"));
  CHECK(json && strstr(json, "\"shape\": [4, 4, 5, 6]"));
  free(json);
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
  char *xdmf = write_file(&gf_out_hdf5, wf, path);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t data = H5Dopen2(file, "U", H5P_DEFAULT);
  CHECK(data >= 0);
  double planes[4][120];
  CHECK(H5Dread(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, planes) >= 0);
  check_plane(planes[0], 0, 1);
  check_plane(planes[1], 1, 0);
  check_plane(planes[2], 2, 0);
  check_plane(planes[3], 3, 1);
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

int main(void) {
  RUN(test_raw);
  RUN(test_hdf5);
  return check_summary();
}
