/* heat.c - `heat`: parameter table, checks, stability and the CPU loop. */
#include "heat.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "builtin.h"

static int heat_check(const void *args, char *why, size_t why_size) {
  const gf_heat_args *a = args;
  const gf_array *fields[3] = {&a->T0, &a->T1, &a->forcing.pattern};
  const char *names[3] = {"T0", "T1", "pattern"};
  const int optional[3] = {0, 0, 1};
  if (gf_fd_check_order("heat", a->order, why, why_size)) return 1;
  return gf_fd_check_fields("heat", fields, names, optional, 3, gf_fd_radius(a->order), why,
                            why_size);
}

/* Forward Euler on T' = alpha lap(T): the Laplacian's eigenvalues lie in
 * [-S sum_d 1/dx_d^2, 0] (S = gf_fd2_nyquist: 4, 16/3, 2048/315 for orders
 * 2, 4, 8), and the step damps every mode while alpha dt |lambda| <= 2:
 *   alpha dt sum_d 1/dx_d^2 <= 2/S,
 * 1/2, 3/8 and 315/1024 ~ 0.308. A per-step alpha or dt reads 0 here:
 * nothing is judged. */
static int heat_stable(const void *args, char *why, size_t why_size) {
  const gf_heat_args *a = args;
  int radius = gf_fd_radius(a->order);
  if (!radius) return 0;
  double inv2 = 0;
  for (int d = 0; d < a->T0.ndim; d++) inv2 += 1.0 / (a->T0.spacing[d] * a->T0.spacing[d]);
  double number = a->alpha * a->dt * inv2, bound = 2.0 / gf_fd2_nyquist(radius);
  if (number <= bound) return 0;
  snprintf(why, why_size,
           "alpha*dt*(sum of 1/dx^2) is %.4g, above %.4g, the stability limit of explicit "
           "diffusion of order %lld",
           number, bound, (long long)a->order);
  return 1;
}

static int64_t heat_points(const void *args) {
  return gf_fd_box_points(((const gf_heat_args *)args)->box);
}

/* The CPU loop: one row function per type, dimension and order (wave.c). */
#define HEAT_TYPE(T, S)         \
  typedef struct heat_cpu_##S { \
    const T *T0, *P;            \
    T *T1;                      \
    gf_fd_geom g;               \
    gf_fd_lap_##S L;            \
    T amplitude;                \
  } heat_cpu_##S;

#define HEAT_ROW(T, S, NDIM, R)                                                                    \
  GF_CPU_CLONES static void heat_row_##S##_##NDIM##_##R(const void *ctx, int64_t o, int64_t len) { \
    const heat_cpu_##S *a = ctx;                                                                   \
    const T *restrict T0 = a->T0;                                                                  \
    T *restrict T1 = a->T1;                                                                        \
    /* in locals: a store to T1 could otherwise change them, for all the compiler knows */         \
    const gf_fd_geom g = a->g;                                                                     \
    const gf_fd_lap_##S L = a->L;                                                                  \
    const T amplitude = a->amplitude;                                                              \
    _Pragma("omp simd") for (int64_t i = o; i < o + len; i++) T1[i] =                              \
        gf_fd_heat_cell_##S(T0, i, NDIM, R, g, L);                                                 \
    if (a->P)                                                                                      \
      for (int64_t i = o; i < o + len; i++) T1[i] = gf_fd_force_##S(T1[i], amplitude, a->P[i]);    \
  }

#define HEAT_ROWS(T, S)                                                         \
  HEAT_TYPE(T, S)                                                               \
  GF_FD_EACH_VARIANT(HEAT_ROW, T, S)                                            \
  static void heat_run_##S(const gf_heat_args *a, int radius) {                 \
    static const gf_fd_row_fn rows[3][3] = GF_FD_ROW_TABLE(heat_row, S);        \
    heat_cpu_##S c = {a->T0.data,                                               \
                      a->forcing.pattern.ndim ? a->forcing.pattern.data : NULL, \
                      a->T1.data,                                               \
                      gf_fd_geom_of(&a->T0),                                    \
                      gf_fd_lap_of_##S(&a->T0, radius, a->alpha * a->dt),       \
                      (T)a->forcing.amplitude};                                 \
    gf_fd_for_rows(gf_fd_rows_of(&a->T0, a->box),                               \
                   rows[a->T0.ndim - 1][gf_fd_variant_radius(radius)], &c);     \
  }

HEAT_ROWS(float, f32)
HEAT_ROWS(double, f64)

static void heat_run_cpu(const void *args) {
  const gf_heat_args *a = args;
  int radius = gf_fd_radius(a->order);
  if (a->T0.dtype == GF_F64)
    heat_run_f64(a, radius);
  else
    heat_run_f32(a, radius);
  gf_fd_add_sources(&a->T1, a->box, &a->forcing);
}

#define F32_F64 ((1u << GF_F32) | (1u << GF_F64))

static const gf_param heat_params[] = {
    {"T0", GF_PARAM_ARRAY, GF_ACCESS_READ, F32_F64, offsetof(gf_heat_args, T0), 1, 0, 0, 0,
     "temperature now"},
    {"T1", GF_PARAM_ARRAY, GF_ACCESS_WRITE | GF_ACCESS_INTERIOR, F32_F64,
     offsetof(gf_heat_args, T1), 1, 0, 0, 0,
     "temperature after the step (its outer halo ring is never written)"},
    {"alpha", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(gf_heat_args, alpha), 0, 1.0, 0, INFINITY,
     "diffusivity"},
    {"dt", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(gf_heat_args, dt), 1, 0, 0, INFINITY,
     "time step (stable while alpha*dt*(sum of 1/dx^2) <= 1/2, 3/8, 0.308 for order 2, 4, 8)"},
    {"order", GF_PARAM_INT, GF_ACCESS_NONE, 0, offsetof(gf_heat_args, order), 0, 2, 2, 8,
     "order of the Laplacian in space: 2, 4 or 8 (reads order/2 cells each side)"},
    {"amplitude", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(gf_heat_args, forcing.amplitude), 0, 1,
     -INFINITY, INFINITY, "heat added this step, times pattern and each source's weight"},
    {"sources", GF_PARAM_CELLS, GF_ACCESS_NONE, 0, offsetof(gf_heat_args, forcing.sources), 0, 0, 0,
     0, "point sources: cells with weights, [[i0, i1, w], ...] (weight 1 if left out)"},
    {"pattern", GF_PARAM_ARRAY, GF_ACCESS_READ, F32_F64, offsetof(gf_heat_args, forcing.pattern), 0,
     0, 0, 0, "optional field: the source field, amplitude*pattern added everywhere"},
    {"box", GF_PARAM_BOX, GF_ACCESS_NONE, 0, offsetof(gf_heat_args, box), 0, 0, 0, 0,
     "cells this launch updates"},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

const gf_kernel gf_kernel_heat = {
    .name = "heat",
    .help = "explicit diffusion with sources, 1-D to 3-D, order 2, 4 or 8 in space, f32|f64",
    .params = heat_params,
    .args_size = sizeof(gf_heat_args),
    .check = heat_check,
    .points = heat_points,
    .bytes_per_point = 8.0, /* read T0, write T1: 2 values (+1 with a pattern) */
    .run_cpu = heat_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_heat_launch_gpu),
    .stable = heat_stable,
    .equation =
        "T1 = T0 + alpha*dt*lap(T0) + amplitude * pattern\n"
        "then amplitude*w added at each source cell, in list order\n"
        "lap: central second differences of `order` along each axis over dx^2 (as wave)\n"
        "stable while alpha*dt*(sum of 1/dx^2) <= 2/S, S = 4, 16/3, 2048/315\n"
        "flops per point: 3*D*order/2 + 2 in D dimensions (+2 with a pattern)",
    .boundary =
        "updates the cells at least grid.halo from every edge (grid.halo >= order/2); "
        "the halo ring is never written and keeps its values (fixed, Dirichlet)",
    .flops_per_point = 8.0, /* 2-D, order 2: 3*2*1 + 2 */
};
