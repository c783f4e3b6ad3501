/* test_kernels.c - each built-in kernel's CPU implementation against a
 * straightforward loop written here from the kernel's definition. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "check.h"
#include "wave2d.h"

static gf_array array2d(float *data, int64_t n0, int64_t n1, double d0, double d1, int halo) {
  gf_array a = {.data = data, .dtype = GF_F32, .ndim = 2, .halo = halo};
  a.shape[0] = n0;
  a.shape[1] = n1;
  a.shape[2] = 1;
  a.spacing[0] = d0;
  a.spacing[1] = d1;
  a.spacing[2] = 1;
  return a;
}

/* The seed's wave2d_4o (the HIP course's wave2d_sync.cpp), written out cell by
 * cell: U2 = 2*U1 - U0 + dt^2*V^2*(lap0/D0^2 + lap1/D1^2), lap* the 5-point
 * second differences {-1/12, 4/3, -5/2, 4/3, -1/12}; `forcing` added at (P0, P1). */
static void reference_wave2d(const float *U0, const float *U1, float *U2, const float *V,
                             int64_t N0, int64_t N1, int h, float dt, double D0, double D1,
                             int64_t P0, int64_t P1, float forcing) {
  const float c[5] = {-1.0f / 12.0f, 4.0f / 3.0f, -2.5f, 4.0f / 3.0f, -1.0f / 12.0f};
  for (int64_t i = h; i < N0 - h; i++)
    for (int64_t j = h; j < N1 - h; j++) {
      float lap0 = 0, lap1 = 0;
      for (int k = -2; k <= 2; k++) {
        lap0 += c[k + 2] * U1[(i + k) * N1 + j];
        lap1 += c[k + 2] * U1[i * N1 + j + k];
      }
      float v = V[i * N1 + j];
      U2[i * N1 + j] =
          2.0f * U1[i * N1 + j] - U0[i * N1 + j] +
          (dt * dt * v * v) * (lap0 * (float)(1.0 / (D0 * D0)) + lap1 * (float)(1.0 / (D1 * D1)));
      if (i == P0 && j == P1) U2[i * N1 + j] += forcing;
    }
}

static void fill_random(float *a, int64_t n, unsigned *seed) {
  for (int64_t i = 0; i < n; i++) a[i] = (float)rand_r(seed) / (float)RAND_MAX - 0.5f;
}

static void check_wave2d(int64_t N0, int64_t N1, int halo, double D0, double D1) {
  int64_t n = N0 * N1;
  float *U0 = malloc((size_t)n * 4), *U1 = malloc((size_t)n * 4), *V = malloc((size_t)n * 4);
  float *got = malloc((size_t)n * 4), *want = malloc((size_t)n * 4);
  unsigned seed = (unsigned)(N0 * 131 + N1);
  fill_random(U0, n, &seed);
  fill_random(U1, n, &seed);
  for (int64_t i = 0; i < n; i++) V[i] = 300.0f + 100.0f * ((float)rand_r(&seed) / (float)RAND_MAX);
  /* cells the kernel must not write keep a sentinel */
  for (int64_t i = 0; i < n; i++) got[i] = want[i] = 12345.0f;

  gf_wave2d_args args = {.U0 = array2d(U0, N0, N1, D0, D1, halo),
                         .U1 = array2d(U1, N0, N1, D0, D1, halo),
                         .U2 = array2d(got, N0, N1, D0, D1, halo),
                         .V = array2d(V, N0, N1, D0, D1, halo),
                         .dt = 0.4 / 343.0,
                         .amplitude = 0.75,
                         .source = {N0 / 2, N1 / 3, 0},
                         .box = {{halo, halo, 0}, {N0 - halo, N1 - halo, 1}}};
  char why[256];
  CHECK_INT(gf_kernel_wave2d_4o.check(&args, why, sizeof why), 0);
  gf_kernel_wave2d_4o.run_cpu(&args);
  reference_wave2d(U0, U1, want, V, N0, N1, halo, (float)args.dt, D0, D1, N0 / 2, N1 / 3, 0.75f);

  double maxdiff = 0, maxval = 0;
  int untouched_ok = 1;
  for (int64_t i = 0; i < N0; i++)
    for (int64_t j = 0; j < N1; j++) {
      int64_t o = i * N1 + j;
      int inside = i >= halo && i < N0 - halo && j >= halo && j < N1 - halo;
      if (!inside) {
        untouched_ok &= got[o] == 12345.0f;
        continue;
      }
      maxdiff = fmax(maxdiff, fabs((double)got[o] - want[o]));
      maxval = fmax(maxval, fabs((double)want[o]));
    }
  CHECK(untouched_ok);
  /* The coefficients are the same floats; only the summation order of the
   * two Laplacians may differ by rounding. */
  CHECK(maxdiff <= 1e-6 * maxval);
  CHECK_INT(gf_kernel_wave2d_4o.points(&args), (N0 - 2 * halo) * (N1 - 2 * halo));
  free(U0), free(U1), free(V), free(got), free(want);
}

static void test_wave2d_matches_reference(void) {
  check_wave2d(64, 64, 2, 1.0, 1.0);
  check_wave2d(37, 91, 2, 0.5, 2.0); /* odd, non-square, anisotropic spacing */
  check_wave2d(40, 24, 3, 1.0, 1.0); /* a wider halo updates fewer cells */
}

/* A launch updates exactly its box: the interior launched as a centre and
 * four strips around it (as a schedule splits it around a ghost exchange)
 * writes the same bits as one launch over the whole interior, and leaves
 * every other cell alone; the source lands once, in the part holding it. */
static void test_wave2d_box_split(void) {
  const int64_t N0 = 40, N1 = 52, h = 2, n = N0 * N1;
  float *U0 = malloc((size_t)n * 4), *U1 = malloc((size_t)n * 4), *V = malloc((size_t)n * 4);
  float *whole = malloc((size_t)n * 4), *parts = malloc((size_t)n * 4);
  unsigned seed = 7;
  fill_random(U0, n, &seed);
  fill_random(U1, n, &seed);
  for (int64_t i = 0; i < n; i++) V[i] = 343.0f, whole[i] = parts[i] = -1.0f;
  gf_wave2d_args args = {.U0 = array2d(U0, N0, N1, 1, 1, h),
                         .U1 = array2d(U1, N0, N1, 1, 1, h),
                         .U2 = array2d(whole, N0, N1, 1, 1, h),
                         .V = array2d(V, N0, N1, 1, 1, h),
                         .dt = 0.4 / 343.0,
                         .amplitude = 2.5,
                         .source = {h, N1 - h - 1, 0}, /* in the top-right strip */
                         .box = {{h, h, 0}, {N0 - h, N1 - h, 1}}};
  gf_kernel_wave2d_4o.run_cpu(&args);
  const gf_box pieces[5] = {
      {{2 * h, 2 * h, 0}, {N0 - 2 * h, N1 - 2 * h, 1}}, /* centre */
      {{h, h, 0}, {2 * h, N1 - h, 1}},                  /* top rows */
      {{N0 - 2 * h, h, 0}, {N0 - h, N1 - h, 1}},        /* bottom rows */
      {{2 * h, h, 0}, {N0 - 2 * h, 2 * h, 1}},          /* left columns */
      {{2 * h, N1 - 2 * h, 0}, {N0 - 2 * h, N1 - h, 1}} /* right columns */
  };
  args.U2.data = parts;
  int64_t points = 0;
  for (int p = 0; p < 5; p++) {
    args.box = pieces[p];
    gf_kernel_wave2d_4o.run_cpu(&args);
    points += gf_kernel_wave2d_4o.points(&args);
  }
  CHECK_INT(points, (N0 - 2 * h) * (N1 - 2 * h));
  CHECK(memcmp(whole, parts, (size_t)n * 4) == 0);
  CHECK(whole[0] == -1.0f && whole[(h - 1) * N1 + N1 / 2] == -1.0f);
  /* One box without the source cell does not add it. */
  for (int64_t i = 0; i < n; i++) parts[i] = -1.0f;
  args.box = pieces[0];
  gf_kernel_wave2d_4o.run_cpu(&args);
  CHECK(parts[h * N1 + N1 - h - 1] == -1.0f);
  free(U0), free(U1), free(V), free(whole), free(parts);
}

static void test_wave2d_check_rejects(void) {
  float buf[16 * 16];
  gf_wave2d_args args = {.U0 = array2d(buf, 16, 16, 1, 1, 1),
                         .U1 = array2d(buf, 16, 16, 1, 1, 1),
                         .U2 = array2d(buf, 16, 16, 1, 1, 1),
                         .V = array2d(buf, 16, 16, 1, 1, 1),
                         .dt = 0.001,
                         .source = {8, 8, 0}};
  char why[256];
  CHECK(gf_kernel_wave2d_4o.check(&args, why, sizeof why) != 0);
  CHECK_STR(why,
            "wave2d_4o reads 2 cells beyond each cell it updates: grid.halo must be >= 2, not 1");
  args.U0.halo = args.U1.halo = args.U2.halo = args.V.halo = 2;
  args.V.shape[1] = 15;
  CHECK(gf_kernel_wave2d_4o.check(&args, why, sizeof why) != 0);
  CHECK_STR(why, "V has shape [16, 15], U1 has [16, 16]");
  args.V.shape[1] = 16;
  args.source[1] = 16;
  CHECK(gf_kernel_wave2d_4o.check(&args, why, sizeof why) != 0);
  CHECK_STR(why, "source [8, 16] is outside the grid [16, 16]");
}

int main(void) {
  RUN(test_wave2d_matches_reference);
  RUN(test_wave2d_box_split);
  RUN(test_wave2d_check_rejects);
  return check_summary();
}
