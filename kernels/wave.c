/* wave.c - `wave`: parameter table, checks, stability and the CPU loop. */
#include "wave.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "builtin.h"

static int wave_check(const void *args, char *why, size_t why_size) {
  const gf_wave_args *a = args;
  const gf_array *fields[5] = {&a->U1, &a->U0, &a->U2, &a->V, &a->forcing.pattern};
  const char *names[5] = {"U1", "U0", "U2", "V", "pattern"};
  const int optional[5] = {0, 0, 0, 0, 1};
  if (gf_fd_check_order("wave", a->order, why, why_size)) return 1;
  return gf_fd_check_fields("wave", fields, names, optional, 5, gf_fd_radius(a->order), why,
                            why_size);
}

/* Von Neumann analysis: the second difference of order 2R has symbols in
 * [-S, 0], S = gf_fd2_nyquist(R) (4, 16/3 and 2048/315 for orders 2, 4, 8),
 * so the Laplacian's eigenvalues lie in [-S sum_d 1/dx_d^2, 0]; leapfrog is
 * stable while c^2 dt^2 |lambda| <= 4, that is
 *   c dt sqrt(sum_d 1/dx_d^2) <= 2/sqrt(S),
 * 1, sqrt(3)/2 ~ 0.866 and sqrt(315/512) ~ 0.784 for orders 2, 4 and 8: on a
 * square grid a CFL number c dt/dx of at most 1/sqrt(D), sqrt(3/(4D)) and
 * sqrt(315/(512 D)) in D dimensions. c is the largest |V|, known at load
 * time only when V's init is a constant; otherwise nothing is judged. */
static int wave_stable(const void *args, char *why, size_t why_size) {
  const gf_wave_args *a = args;
  int radius = gf_fd_radius(a->order);
  double c = a->V.max_abs, inv2 = 0;
  if (!(c >= 0) || !(a->dt > 0) || !radius) return 0; /* unknown velocity, or dt per step */
  for (int d = 0; d < a->U1.ndim; d++) inv2 += 1.0 / (a->U1.spacing[d] * a->U1.spacing[d]);
  double number = c * a->dt * sqrt(inv2), bound = 2.0 / sqrt(gf_fd2_nyquist(radius));
  if (number <= bound) return 0;
  snprintf(why, why_size,
           "|V|*dt*sqrt(sum of 1/dx^2) is %.4g, above %.4g, the stability limit of this scheme "
           "(order %lld in space, leapfrog in time)",
           number, bound, (long long)a->order);
  return 1;
}

static int64_t wave_points(const void *args) {
  return gf_fd_box_points(((const gf_wave_args *)args)->box);
}

/* The CPU loop: one row function per type, dimension and order, so that
 * each one's loops are unrolled and vectorised. */
#define WAVE_TYPE(T, S)         \
  typedef struct wave_cpu_##S { \
    const T *U0, *U1, *V, *P;   \
    T *U2;                      \
    gf_fd_geom g;               \
    gf_fd_lap_##S L;            \
    T dt2, amplitude;           \
  } wave_cpu_##S;

#define WAVE_ROW(T, S, NDIM, R)                                                                    \
  GF_CPU_CLONES static void wave_row_##S##_##NDIM##_##R(const void *ctx, int64_t o, int64_t len) { \
    const wave_cpu_##S *a = ctx;                                                                   \
    const T *restrict U0 = a->U0, *restrict U1 = a->U1, *restrict V = a->V;                        \
    T *restrict U2 = a->U2;                                                                        \
    /* in locals: a store to U2 could otherwise change them, for all the compiler knows */         \
    const gf_fd_geom g = a->g;                                                                     \
    const gf_fd_lap_##S L = a->L;                                                                  \
    const T dt2 = a->dt2, amplitude = a->amplitude;                                                \
    _Pragma("omp simd") for (int64_t i = o; i < o + len; i++) U2[i] =                              \
        gf_fd_wave_cell_##S(U0, U1, V, i, NDIM, R, g, L, dt2);                                     \
    if (a->P)                                                                                      \
      for (int64_t i = o; i < o + len; i++) U2[i] = gf_fd_force_##S(U2[i], amplitude, a->P[i]);    \
  }

#define WAVE_ROWS(T, S)                                                         \
  WAVE_TYPE(T, S)                                                               \
  GF_FD_EACH_VARIANT(WAVE_ROW, T, S)                                            \
  static void wave_run_##S(const gf_wave_args *a, int radius) {                 \
    static const gf_fd_row_fn rows[3][3] = GF_FD_ROW_TABLE(wave_row, S);        \
    wave_cpu_##S c = {a->U0.data,                                               \
                      a->U1.data,                                               \
                      a->V.data,                                                \
                      a->forcing.pattern.ndim ? a->forcing.pattern.data : NULL, \
                      a->U2.data,                                               \
                      gf_fd_geom_of(&a->U1),                                    \
                      gf_fd_lap_of_##S(&a->U1, radius, 1.0),                    \
                      (T)(a->dt * a->dt),                                       \
                      (T)a->forcing.amplitude};                                 \
    gf_fd_for_rows(gf_fd_rows_of(&a->U1, a->box),                               \
                   rows[a->U1.ndim - 1][gf_fd_variant_radius(radius)], &c);     \
  }

WAVE_ROWS(float, f32)
WAVE_ROWS(double, f64)

static void wave_run_cpu(const void *args) {
  const gf_wave_args *a = args;
  int radius = gf_fd_radius(a->order);
  if (a->U1.dtype == GF_F64)
    wave_run_f64(a, radius);
  else
    wave_run_f32(a, radius);
  gf_fd_add_sources(&a->U2, a->box, &a->forcing);
}

#define F32_F64 ((1u << GF_F32) | (1u << GF_F64))

static const gf_param wave_params[] = {
    {"U0", GF_PARAM_ARRAY, GF_ACCESS_READ, F32_F64, offsetof(gf_wave_args, U0), 1, 0, 0, 0,
     "wavefield two steps back"},
    {"U1", GF_PARAM_ARRAY, GF_ACCESS_READ, F32_F64, offsetof(gf_wave_args, U1), 1, 0, 0, 0,
     "wavefield one step back; the Laplacian is taken of it"},
    {"U2", GF_PARAM_ARRAY, GF_ACCESS_WRITE | GF_ACCESS_INTERIOR, F32_F64,
     offsetof(gf_wave_args, U2), 1, 0, 0, 0,
     "wavefield this step computes (its outer halo ring is never written)"},
    {"V", GF_PARAM_ARRAY, GF_ACCESS_READ, F32_F64, offsetof(gf_wave_args, V), 1, 0, 0, 0,
     "wave velocity"},
    {"dt", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(gf_wave_args, dt), 1, 0, 0, INFINITY,
     "time step (stable while |V|*dt*sqrt(sum of 1/dx^2) <= 1, 0.866, 0.784 for order 2, 4, 8)"},
    {"order", GF_PARAM_INT, GF_ACCESS_NONE, 0, offsetof(gf_wave_args, order), 0, 4, 2, 8,
     "order of the Laplacian in space: 2, 4 or 8 (reads order/2 cells each side)"},
    {"amplitude", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(gf_wave_args, forcing.amplitude), 0, 1,
     -INFINITY, INFINITY, "forcing of this step, times pattern and each source's weight"},
    {"sources", GF_PARAM_CELLS, GF_ACCESS_NONE, 0, offsetof(gf_wave_args, forcing.sources), 0, 0, 0,
     0, "point sources: cells with weights, [[i0, i1, w], ...] (weight 1 if left out)"},
    {"pattern", GF_PARAM_ARRAY, GF_ACCESS_READ, F32_F64, offsetof(gf_wave_args, forcing.pattern), 0,
     0, 0, 0, "optional field: forcing's spatial pattern, amplitude*pattern added everywhere"},
    {"box", GF_PARAM_BOX, GF_ACCESS_NONE, 0, offsetof(gf_wave_args, box), 0, 0, 0, 0,
     "cells this launch updates"},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

const gf_kernel gf_kernel_wave = {
    .name = "wave",
    .help = "acoustic wave equation, 1-D to 3-D, order 2, 4 or 8 in space, 2nd in time, f32|f64",
    .params = wave_params,
    .args_size = sizeof(gf_wave_args),
    .check = wave_check,
    .points = wave_points,
    .bytes_per_point = 16.0, /* read U0, U1, V, write U2: 4 values (+1 with a pattern) */
    .run_cpu = wave_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_wave_launch_gpu),
    .stable = wave_stable,
    .equation =
        "U2 = 2*U1 - U0 + dt^2 * V^2 * lap(U1) + amplitude * pattern\n"
        "then amplitude*w added at each source cell, in list order\n"
        "lap: central second differences of `order` along each axis over dx^2:\n"
        "  order 2: (1, -2, 1); 4: (-1, 16, -30, 16, -1)/12;\n"
        "  8: (-1/560, 8/315, -1/5, 8/5, -205/72, 8/5, -1/5, 8/315, -1/560)\n"
        "stable while |V|*dt*sqrt(sum of 1/dx^2) <= 2/sqrt(S), S = 4, 16/3, 2048/315\n"
        "flops per point: 3*D*order/2 + 7 in D dimensions (+2 with a pattern)",
    .boundary =
        "updates the cells at least grid.halo from every edge (grid.halo >= order/2); "
        "the halo ring is never written and keeps its values (fixed, Dirichlet)",
    .flops_per_point = 19.0, /* 2-D, order 4: 3*2*2 + 7 */
};
