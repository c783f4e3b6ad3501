/* test_kernels.c - each built-in kernel's CPU implementation against a
 * straightforward loop written here from the kernel's definition. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "check.h"
#include "heat.h"
#include "stencil.h"
#include "wave.h"
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
  check_wave2d(64, 64, 2, 1.0, 1.0); /* unit spacing: wave2d.c's own row function */
  check_wave2d(37, 91, 2, 0.5, 2.0); /* odd, non-square, anisotropic spacing */
  check_wave2d(33, 50, 2, 1.0, 2.0); /* unit spacing along one axis only */
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

/* ---- wave, heat, stencil: 1-D to 3-D, f32 and f64 ---- */

/* A test grid: sizes along ndim axes (trailing 1), spacing and halo. */
typedef struct tgrid {
  int ndim, halo;
  int64_t n[3];
  double dx[3];
} tgrid;

static int64_t tcells(const tgrid *g) {
  return g->n[0] * g->n[1] * g->n[2];
}

static int64_t tat(const tgrid *g, int64_t i0, int64_t i1, int64_t i2) {
  return (i0 * g->n[1] + i1) * g->n[2] + i2;
}

static int tinterior(const tgrid *g, const int64_t i[3]) {
  for (int d = 0; d < g->ndim; d++)
    if (i[d] < g->halo || i[d] >= g->n[d] - g->halo) return 0;
  return 1;
}

static gf_array tarray(void *data, gf_dtype dtype, const tgrid *g) {
  gf_array a = {.data = data, .dtype = dtype, .ndim = g->ndim, .halo = g->halo, .max_abs = NAN};
  for (int d = 0; d < 3; d++) {
    a.shape[d] = a.global_shape[d] = g->n[d];
    a.spacing[d] = g->dx[d];
  }
  return a;
}

static gf_box tbox(const tgrid *g) {
  gf_box b;
  for (int d = 0; d < 3; d++) {
    b.lo[d] = d < g->ndim ? g->halo : 0;
    b.hi[d] = d < g->ndim ? g->n[d] - g->halo : 1;
  }
  return b;
}

/* `n` values in [lo, hi), representable in `dtype`. */
static double *tvalues(int64_t n, gf_dtype dtype, double lo, double hi, unsigned *seed) {
  double *v = calloc((size_t)n, sizeof *v); /* calloc: gcc cannot tell that every value is set */
  for (int64_t i = 0; i < n; i++) {
    v[i] = lo + (hi - lo) * rand_r(seed) / (double)RAND_MAX;
    if (dtype == GF_F32) v[i] = (float)v[i];
  }
  return v;
}

/* The values as the kernel's dtype (a new buffer). */
static void *tcopy(const double *v, int64_t n, gf_dtype dtype) {
  void *out = malloc((size_t)n * gf_dtype_size(dtype));
  for (int64_t i = 0; i < n; i++) {
    if (dtype == GF_F64)
      ((double *)out)[i] = v[i];
    else
      ((float *)out)[i] = (float)v[i];
  }
  return out;
}

static double tget(const void *data, gf_dtype dtype, int64_t o) {
  return dtype == GF_F64 ? ((const double *)data)[o] : ((const float *)data)[o];
}

/* The central second differences, written out from their definition:
 * c[k] for the cells k away (both sides), c[0] for the cell itself. */
static double second_difference(int order, int k) {
  static const double c2[] = {-2, 1}, c4[] = {-5.0 / 2, 4.0 / 3, -1.0 / 12},
                      c8[] = {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560};
  return order == 2 ? c2[k] : order == 4 ? c4[k] : c8[k];
}

/* sum over axes of the second difference of u at cell i, over dx^2. */
static double reference_laplacian(const double *u, const tgrid *g, const int64_t i[3], int order) {
  double sum = 0;
  for (int d = 0; d < g->ndim; d++)
    for (int k = -order / 2; k <= order / 2; k++) {
      int64_t j[3] = {i[0], i[1], i[2]};
      j[d] += k;
      sum += second_difference(order, abs(k)) * u[tat(g, j[0], j[1], j[2])] / (g->dx[d] * g->dx[d]);
    }
  return sum;
}

/* Compares a kernel's output with the reference: interior cells within
 * `tol` times the largest |reference|, every other cell still `sentinel`. */
static void check_against(const void *got, gf_dtype dtype, const double *want, const tgrid *g,
                          double tol, double sentinel, const char *what) {
  double maxdiff = 0, maxval = 0;
  int untouched = 1;
  for (int64_t i0 = 0; i0 < g->n[0]; i0++)
    for (int64_t i1 = 0; i1 < g->n[1]; i1++)
      for (int64_t i2 = 0; i2 < g->n[2]; i2++) {
        int64_t i[3] = {i0, i1, i2}, o = tat(g, i0, i1, i2);
        if (!tinterior(g, i)) {
          untouched &= tget(got, dtype, o) == sentinel;
          continue;
        }
        maxdiff = fmax(maxdiff, fabs(tget(got, dtype, o) - want[o]));
        maxval = fmax(maxval, fabs(want[o]));
      }
  if (!untouched || !(maxdiff <= tol * maxval) || !(maxval > 0))
    fprintf(stderr, "%s: max diff %g of max %g, halo untouched %d\n", what, maxdiff, maxval,
            untouched);
  CHECK(untouched);
  CHECK(maxval > 0);
  CHECK(maxdiff <= tol * maxval);
}

static const tgrid test_grids[3] = {
    {1, 4, {67, 1, 1}, {0.5, 1, 1}},
    {2, 4, {23, 31, 1}, {1.0, 0.7, 1}},
    {3, 4, {13, 11, 17}, {1.0, 1.3, 0.8}},
};

static void check_wave(const tgrid *g, int order, gf_dtype dtype, int with_pattern) {
  unsigned seed = (unsigned)(g->ndim * 100 + order * 10 + dtype);
  int64_t n = tcells(g);
  double *u0 = tvalues(n, dtype, -0.5, 0.5, &seed), *u1 = tvalues(n, dtype, -0.5, 0.5, &seed);
  double *v = tvalues(n, dtype, 300, 400, &seed), *p = tvalues(n, dtype, -1, 1, &seed);
  double *want = calloc((size_t)n, sizeof *want), sentinel = 12345;
  void *U0 = tcopy(u0, n, dtype), *U1 = tcopy(u1, n, dtype), *V = tcopy(v, n, dtype),
       *P = tcopy(p, n, dtype), *U2 = tcopy(want, n, dtype);
  for (int64_t i = 0; i < n; i++) {
    if (dtype == GF_F64)
      ((double *)U2)[i] = sentinel;
    else
      ((float *)U2)[i] = (float)sentinel;
  }
  /* two sources on one cell, one elsewhere, one in the halo ring (never lands) */
  int64_t c[3] = {g->n[0] / 2, g->n[1] / 2, g->n[2] / 2}, e[3] = {0, 0, 0};
  for (int d = 0; d < g->ndim; d++) e[d] = g->halo;
  gf_point sources[4] = {{{c[0], c[1], c[2]}, 1.5},
                         {{e[0], e[1], e[2]}, -2.0},
                         {{c[0], c[1], c[2]}, 0.25},
                         {{0, 0, 0}, 100.0}};
  gf_wave_args args = {.U0 = tarray(U0, dtype, g),
                       .U1 = tarray(U1, dtype, g),
                       .U2 = tarray(U2, dtype, g),
                       .V = tarray(V, dtype, g),
                       .dt = 0.2 / 400.0,
                       .order = order,
                       .forcing = {.amplitude = 0.75, .sources = {sources, 4}},
                       .box = tbox(g)};
  if (with_pattern) args.forcing.pattern = tarray(P, dtype, g);
  char why[256] = "";
  CHECK_INT(gf_kernel_wave.check(&args, why, sizeof why), 0);
  gf_kernel_wave.run_cpu(&args);
  for (int64_t i0 = 0; i0 < g->n[0]; i0++)
    for (int64_t i1 = 0; i1 < g->n[1]; i1++)
      for (int64_t i2 = 0; i2 < g->n[2]; i2++) {
        int64_t i[3] = {i0, i1, i2}, o = tat(g, i0, i1, i2);
        if (!tinterior(g, i)) continue;
        want[o] = 2 * u1[o] - u0[o] +
                  args.dt * args.dt * v[o] * v[o] * reference_laplacian(u1, g, i, order);
        if (with_pattern) want[o] += 0.75 * p[o];
      }
  want[tat(g, c[0], c[1], c[2])] += 0.75 * (1.5 + 0.25);
  want[tat(g, e[0], e[1], e[2])] += 0.75 * -2.0;
  char what[64];
  snprintf(what, sizeof what, "wave %d-D order %d %s", g->ndim, order, dtype ? "f64" : "f32");
  check_against(U2, dtype, want, g, dtype == GF_F64 ? 1e-12 : 2e-5, sentinel, what);
  CHECK_INT(gf_kernel_wave.points(&args), (g->n[0] - (g->ndim > 0) * 2 * g->halo) *
                                              (g->ndim > 1 ? g->n[1] - 2 * g->halo : 1) *
                                              (g->ndim > 2 ? g->n[2] - 2 * g->halo : 1));
  free(u0), free(u1), free(v), free(p), free(want);
  free(U0), free(U1), free(V), free(P), free(U2);
}

static void test_wave_matches_reference(void) {
  static const int orders[3] = {2, 4, 8};
  for (int g = 0; g < 3; g++)
    for (int o = 0; o < 3; o++)
      for (int t = GF_F32; t <= GF_F64; t++) check_wave(&test_grids[g], orders[o], t, o == 1);
}

static void check_heat(const tgrid *g, int order, gf_dtype dtype, int with_pattern) {
  unsigned seed = (unsigned)(g->ndim * 100 + order * 10 + dtype + 7);
  int64_t n = tcells(g);
  double *t0 = tvalues(n, dtype, 0, 1, &seed), *p = tvalues(n, dtype, 0, 1, &seed);
  double *want = calloc((size_t)n, sizeof *want), sentinel = -7;
  void *T0 = tcopy(t0, n, dtype), *P = tcopy(p, n, dtype), *T1 = tcopy(want, n, dtype);
  for (int64_t i = 0; i < n; i++) {
    if (dtype == GF_F64)
      ((double *)T1)[i] = sentinel;
    else
      ((float *)T1)[i] = (float)sentinel;
  }
  int64_t c[3] = {g->n[0] / 2, g->n[1] / 2, g->n[2] / 2};
  gf_point source = {{c[0], c[1], c[2]}, 3.0};
  gf_heat_args args = {.T0 = tarray(T0, dtype, g),
                       .T1 = tarray(T1, dtype, g),
                       .alpha = 0.8,
                       .dt = 0.05,
                       .order = order,
                       .forcing = {.amplitude = -0.5, .sources = {&source, 1}},
                       .box = tbox(g)};
  if (with_pattern) args.forcing.pattern = tarray(P, dtype, g);
  char why[256] = "";
  CHECK_INT(gf_kernel_heat.check(&args, why, sizeof why), 0);
  gf_kernel_heat.run_cpu(&args);
  for (int64_t i0 = 0; i0 < g->n[0]; i0++)
    for (int64_t i1 = 0; i1 < g->n[1]; i1++)
      for (int64_t i2 = 0; i2 < g->n[2]; i2++) {
        int64_t i[3] = {i0, i1, i2}, o = tat(g, i0, i1, i2);
        if (!tinterior(g, i)) continue;
        want[o] = t0[o] + 0.8 * 0.05 * reference_laplacian(t0, g, i, order);
        if (with_pattern) want[o] += -0.5 * p[o];
      }
  want[tat(g, c[0], c[1], c[2])] += -0.5 * 3.0;
  char what[64];
  snprintf(what, sizeof what, "heat %d-D order %d %s", g->ndim, order, dtype ? "f64" : "f32");
  check_against(T1, dtype, want, g, dtype == GF_F64 ? 1e-12 : 2e-5, sentinel, what);
  free(t0), free(p), free(want), free(T0), free(P), free(T1);
}

static void test_heat_matches_reference(void) {
  static const int orders[3] = {2, 4, 8};
  for (int g = 0; g < 3; g++)
    for (int o = 0; o < 3; o++)
      for (int t = GF_F32; t <= GF_F64; t++) check_heat(&test_grids[g], orders[o], t, o != 1);
}

/* Two inputs with taps of their own, offsets up to the halo. */
static void check_stencil(const tgrid *g, gf_dtype dtype) {
  unsigned seed = (unsigned)(g->ndim * 10 + dtype + 3);
  int64_t n = tcells(g);
  double *a = tvalues(n, dtype, -1, 1, &seed), *b = tvalues(n, dtype, -1, 1, &seed);
  double *want = calloc((size_t)n, sizeof *want), sentinel = 99;
  void *A = tcopy(a, n, dtype), *B = tcopy(b, n, dtype), *OUT = tcopy(want, n, dtype);
  for (int64_t i = 0; i < n; i++) {
    if (dtype == GF_F64)
      ((double *)OUT)[i] = sentinel;
    else
      ((float *)OUT)[i] = (float)sentinel;
  }
  gf_point ta[5], tb[2] = {{{0, 0, 0}, -1.0}, {{0, 0, 0}, 0.0}};
  for (int t = 0; t < 5; t++) {
    for (int d = 0; d < 3; d++) ta[t].at[d] = d < g->ndim ? (t * 3 + d * 5) % 9 - 4 : 0;
    ta[t].weight = 0.25 * (t + 1) - 0.6;
  }
  tb[1].at[g->ndim - 1] = 1, tb[1].weight = 2.5;
  gf_stencil_args args = {.out = tarray(OUT, dtype, g),
                          .in = {tarray(A, dtype, g), tarray(B, dtype, g)},
                          .taps = {{ta, 5}, {tb, 2}},
                          .box = tbox(g)};
  char why[256] = "";
  CHECK_INT(gf_kernel_stencil.check(&args, why, sizeof why), 0);
  gf_kernel_stencil.run_cpu(&args);
  for (int64_t i0 = 0; i0 < g->n[0]; i0++)
    for (int64_t i1 = 0; i1 < g->n[1]; i1++)
      for (int64_t i2 = 0; i2 < g->n[2]; i2++) {
        int64_t i[3] = {i0, i1, i2}, o = tat(g, i0, i1, i2);
        if (!tinterior(g, i)) continue;
        for (int t = 0; t < 5; t++)
          want[o] += ta[t].weight * a[tat(g, i0 + ta[t].at[0], i1 + ta[t].at[1], i2 + ta[t].at[2])];
        for (int t = 0; t < 2; t++)
          want[o] += tb[t].weight * b[tat(g, i0 + tb[t].at[0], i1 + tb[t].at[1], i2 + tb[t].at[2])];
      }
  char what[64];
  snprintf(what, sizeof what, "stencil %d-D %s", g->ndim, dtype ? "f64" : "f32");
  check_against(OUT, dtype, want, g, dtype == GF_F64 ? 1e-12 : 2e-6, sentinel, what);
  free(a), free(b), free(want), free(A), free(B), free(OUT);
}

/* A tap followed by its mirror image with the same coefficient is one term,
 * c * (u[+o] + u[-o]), whichever comes first; other taps one at a time:
 * bit for bit against the sum written out in the field's type. */
#define PAIRS_REFERENCE(T)                                                                 \
  static T pairs_reference_##T(const T *u, const tgrid *g, const int64_t i[3], int last) { \
    int64_t c = tat(g, i[0], i[1], i[2]);                                                  \
    int64_t s0 = tat(g, i[0] + 1, i[1], i[2]) - c;                                         \
    int64_t sl = (last == 0   ? s0                                                         \
                  : last == 1 ? tat(g, i[0], i[1] + 1, i[2]) - c                           \
                              : tat(g, i[0], i[1], i[2] + 1) - c);                         \
    T acc = 0;                                                                             \
    acc = acc + (T)0.3 * u[c];                                                             \
    acc = acc + (T)-0.7 * (u[c - s0] + u[c + s0]);                                         \
    acc = acc + (T)0.45 * u[c - sl];                                                       \
    acc = acc + (T)0.55 * u[c + sl];                                                       \
    acc = acc + (T)0.2 * (u[c + 2 * s0] + u[c - 2 * s0]);                                  \
    return acc;                                                                            \
  }
PAIRS_REFERENCE(float)
PAIRS_REFERENCE(double)

static void check_stencil_pairs(const tgrid *g, gf_dtype dtype) {
  unsigned seed = (unsigned)(g->ndim * 7 + dtype + 1);
  int64_t n = tcells(g);
  double *a = tvalues(n, dtype, -1, 1, &seed), *zero = calloc((size_t)n, sizeof *zero);
  void *A = tcopy(a, n, dtype), *OUT = tcopy(zero, n, dtype);
  int last = g->ndim - 1;
  gf_point taps[7] = {{{0, 0, 0}, 0.3},  {{-1, 0, 0}, -0.7}, {{1, 0, 0}, -0.7}, {{0, 0, 0}, 0.45},
                      {{0, 0, 0}, 0.55}, {{2, 0, 0}, 0.2},   {{-2, 0, 0}, 0.2}};
  taps[3].at[last] = -1, taps[4].at[last] = 1;
  if (dtype == GF_F32) /* the coefficients as the field's type holds them */
    for (int t = 0; t < 7; t++) taps[t].weight = (float)taps[t].weight;
  gf_stencil_args args = {.out = tarray(OUT, dtype, g),
                          .in = {tarray(A, dtype, g)},
                          .taps = {{taps, 7}},
                          .box = tbox(g)};
  char why[256] = "";
  CHECK_INT(gf_kernel_stencil.check(&args, why, sizeof why), 0);
  CHECK(gf_stencil_pair(&args.taps[0], 1) && !gf_stencil_pair(&args.taps[0], 3) &&
        gf_stencil_pair(&args.taps[0], 5) && !gf_stencil_pair(&args.taps[0], 0));
  gf_kernel_stencil.run_cpu(&args);
  int64_t wrong = 0;
  for (int64_t i0 = 0; i0 < g->n[0]; i0++)
    for (int64_t i1 = 0; i1 < g->n[1]; i1++)
      for (int64_t i2 = 0; i2 < g->n[2]; i2++) {
        int64_t i[3] = {i0, i1, i2}, o = tat(g, i0, i1, i2);
        if (!tinterior(g, i)) continue;
        if (dtype == GF_F64) {
          double want = pairs_reference_double(A, g, i, last);
          wrong += memcmp(&want, (double *)OUT + o, sizeof want) != 0;
        } else {
          float want = pairs_reference_float(A, g, i, last);
          wrong += memcmp(&want, (float *)OUT + o, sizeof want) != 0;
        }
      }
  if (wrong) fprintf(stderr, "stencil pairs %d-D: %lld cells differ\n", g->ndim, (long long)wrong);
  CHECK(wrong == 0);
  free(a), free(zero), free(A), free(OUT);
}

static void test_stencil_matches_reference(void) {
  for (int g = 0; g < 3; g++)
    for (int t = GF_F32; t <= GF_F64; t++) {
      check_stencil(&test_grids[g], t);
      check_stencil_pairs(&test_grids[g], t);
    }
}

/* A launch updates exactly its box: the interior in four pieces (split
 * along the first and the last axis) writes the same bits as one launch. */
static void check_split(const gf_kernel *kernel, void *args, gf_box *box, gf_array *out,
                        int64_t bytes) {
  void *whole = out->data, *parts = malloc((size_t)bytes);
  memcpy(parts, whole, (size_t)bytes);
  gf_box all = *box;
  kernel->run_cpu(args);
  out->data = parts;
  int last = out->ndim - 1;
  int64_t mid0 = (all.lo[0] + all.hi[0]) / 2 + 1, midl = (all.lo[last] + all.hi[last]) / 2 - 1;
  int64_t points = 0;
  for (int p = 0; p < 4; p++) {
    *box = all;
    if (p & 1)
      box->lo[0] = mid0;
    else
      box->hi[0] = mid0;
    if (last > 0) {
      if (p & 2)
        box->lo[last] = midl;
      else
        box->hi[last] = midl;
    } else if (p & 2) {
      continue;
    }
    kernel->run_cpu(args);
    points += kernel->points(args);
  }
  *box = all;
  CHECK_INT(points, kernel->points(args));
  CHECK(memcmp(whole, parts, (size_t)bytes) == 0);
  out->data = whole;
  free(parts);
}

static void test_box_split(void) {
  for (int gi = 0; gi < 3; gi++) {
    const tgrid *g = &test_grids[gi];
    unsigned seed = 11;
    int64_t n = tcells(g), bytes = n * 4;
    double *x = tvalues(n, GF_F32, -1, 1, &seed), *v = tvalues(n, GF_F32, 1, 2, &seed);
    void *X = tcopy(x, n, GF_F32), *Y = tcopy(x, n, GF_F32), *V = tcopy(v, n, GF_F32),
         *OUT = tcopy(v, n, GF_F32);
    int64_t c[3] = {g->halo, g->n[1] - g->halo - 1, g->n[2] / 2};
    gf_point sources[2] = {{{c[0], c[1], c[2]}, 1.0}, {{g->n[0] / 2, g->n[1] / 2, g->n[2] / 2}, 2}};
    gf_wave_args w = {
        .U0 = tarray(X, GF_F32, g),
        .U1 = tarray(Y, GF_F32, g),
        .U2 = tarray(OUT, GF_F32, g),
        .V = tarray(V, GF_F32, g),
        .dt = 0.01,
        .order = 8,
        .forcing = {.pattern = tarray(V, GF_F32, g), .amplitude = 3, .sources = {sources, 2}},
        .box = tbox(g)};
    check_split(&gf_kernel_wave, &w, &w.box, &w.U2, bytes);
    gf_heat_args h = {.T0 = tarray(X, GF_F32, g),
                      .T1 = tarray(OUT, GF_F32, g),
                      .alpha = 1,
                      .dt = 0.01,
                      .order = 4,
                      .forcing = {.amplitude = 3, .sources = {sources, 2}},
                      .box = tbox(g)};
    check_split(&gf_kernel_heat, &h, &h.box, &h.T1, bytes);
    gf_point taps[3] = {{{0, 0, 0}, -2}, {{1, 0, 0}, 1}, {{-1, 0, 0}, 1}};
    gf_stencil_args s = {.out = tarray(OUT, GF_F32, g),
                         .in = {tarray(X, GF_F32, g), {0}, tarray(Y, GF_F32, g)},
                         .taps = {{taps, 3}, {NULL, 0}, {taps, 1}},
                         .box = tbox(g)};
    check_split(&gf_kernel_stencil, &s, &s.box, &s.out, bytes);
    free(x), free(v), free(X), free(Y), free(V), free(OUT);
  }
}

/* The stability bounds rest on the second difference's symbol
 * c0 + 2 sum c_k cos(k theta) being largest in magnitude at theta = pi:
 * found here by sampling it. */
static void test_fd_nyquist(void) {
  static const int orders[3] = {2, 4, 8};
  static const double closed_form[3] = {4.0, 16.0 / 3.0, 2048.0 / 315.0};
  for (int o = 0; o < 3; o++) {
    double largest = 0;
    for (int s = 0; s <= 10000; s++) {
      double theta = 3.14159265358979323846 * s / 10000, symbol = second_difference(orders[o], 0);
      for (int k = 1; k <= orders[o] / 2; k++)
        symbol += 2 * second_difference(orders[o], k) * cos(k * theta);
      CHECK(symbol <= 1e-12);
      largest = fmax(largest, -symbol);
    }
    CHECK_NEAR(gf_fd2_nyquist(gf_fd_radius(orders[o])), largest, 1e-12);
    CHECK_NEAR(gf_fd2_nyquist(gf_fd_radius(orders[o])), closed_form[o], 1e-12);
  }
}

static void test_stability_conditions(void) {
  static float buf[8];
  tgrid g = {2, 4, {16, 16, 1}, {1, 1, 1}};
  gf_wave_args w = {.U0 = tarray(buf, GF_F32, &g),
                    .U1 = tarray(buf, GF_F32, &g),
                    .U2 = tarray(buf, GF_F32, &g),
                    .V = tarray(buf, GF_F32, &g),
                    .order = 8};
  char why[256] = "";
  w.V.max_abs = 1;
  /* order 8, 2-D, dx = 1: c dt sqrt(2) <= sqrt(315/512) */
  double limit = sqrt(315.0 / 512.0) / sqrt(2.0);
  w.dt = limit * 0.999;
  CHECK_INT(gf_kernel_wave.stable(&w, why, sizeof why), 0);
  w.dt = limit * 1.001;
  CHECK(gf_kernel_wave.stable(&w, why, sizeof why) != 0);
  CHECK(strstr(why, "above 0.7844") != NULL);
  w.V.max_abs = NAN; /* velocity unknown at load time: nothing judged */
  CHECK_INT(gf_kernel_wave.stable(&w, why, sizeof why), 0);
  gf_heat_args h = {.T0 = tarray(buf, GF_F32, &g), .alpha = 1, .order = 2};
  h.dt = 0.25; /* alpha dt (1 + 1) = 1/2: on the limit */
  CHECK_INT(gf_kernel_heat.stable(&h, why, sizeof why), 0);
  h.order = 4; /* limit 3/8 */
  CHECK(gf_kernel_heat.stable(&h, why, sizeof why) != 0);
  CHECK_STR(why,
            "alpha*dt*(sum of 1/dx^2) is 0.5, above 0.375, the stability limit of explicit "
            "diffusion of order 4");
}

static void test_fd_check_rejects(void) {
  static float buf[8];
  tgrid g = {3, 2, {16, 16, 16}, {1, 1, 1}};
  gf_wave_args w = {.U0 = tarray(buf, GF_F32, &g),
                    .U1 = tarray(buf, GF_F32, &g),
                    .U2 = tarray(buf, GF_F32, &g),
                    .V = tarray(buf, GF_F32, &g),
                    .dt = 0.01,
                    .order = 8};
  char why[256];
  CHECK(gf_kernel_wave.check(&w, why, sizeof why) != 0);
  CHECK_STR(why, "wave reads 4 cells beyond each cell it updates: grid.halo must be >= 4, not 2");
  w.order = 3;
  CHECK(gf_kernel_wave.check(&w, why, sizeof why) != 0);
  CHECK_STR(why, "wave: order must be 2, 4 or 8 (a constant), not 3");
  w.order = 4;
  w.V.shape[2] = 15;
  CHECK(gf_kernel_wave.check(&w, why, sizeof why) != 0);
  CHECK_STR(why, "V has shape [16, 16, 15], U1 has [16, 16, 16]");
  w.V.shape[2] = 16;
  w.U0.dtype = GF_F64;
  CHECK(gf_kernel_wave.check(&w, why, sizeof why) != 0);
  CHECK_STR(why, "U0 is f64, U1 is f32: wave needs one dtype");
  gf_point tap = {{3, 0, 0}, 1};
  gf_stencil_args s = {.out = tarray(buf, GF_F32, &g), .in = {tarray(buf, GF_F32, &g)}};
  CHECK(gf_kernel_stencil.check(&s, why, sizeof why) != 0);
  CHECK_STR(why, "in0 has no taps0");
  s.taps[0] = (gf_points){&tap, 1};
  CHECK(gf_kernel_stencil.check(&s, why, sizeof why) != 0);
  CHECK_STR(why,
            "stencil reads 3 cells beyond each cell it updates: grid.halo must be >= 3, not 2");
  tap.at[0] = -2;
  CHECK_INT(gf_kernel_stencil.check(&s, why, sizeof why), 0);
  s.taps[3] = (gf_points){&tap, 1};
  CHECK(gf_kernel_stencil.check(&s, why, sizeof why) != 0);
  CHECK_STR(why, "taps3 is given without in3");
}

int main(void) {
  RUN(test_wave2d_matches_reference);
  RUN(test_wave2d_box_split);
  RUN(test_wave2d_check_rejects);
  RUN(test_wave_matches_reference);
  RUN(test_heat_matches_reference);
  RUN(test_stencil_matches_reference);
  RUN(test_box_split);
  RUN(test_fd_nyquist);
  RUN(test_stability_conditions);
  RUN(test_fd_check_rejects);
  return check_summary();
}
