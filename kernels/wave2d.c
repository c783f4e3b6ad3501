/* wave2d.c - wave2d_4o: parameter table, checks and the CPU loop. */
#include "wave2d.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "builtin.h"

static int wave2d_check(const void *args, char *why, size_t why_size) {
  const gf_wave2d_args *a = args;
  const gf_array *fields[4] = {&a->U0, &a->U1, &a->U2, &a->V};
  const char *names[4] = {"U0", "U1", "U2", "V"};
  if (a->U1.ndim != 2) {
    snprintf(why, why_size, "wave2d_4o needs 2-D fields, U1 is %d-D", a->U1.ndim);
    return 1;
  }
  for (int i = 0; i < 4; i++) {
    if (fields[i]->shape[0] != a->U1.shape[0] || fields[i]->shape[1] != a->U1.shape[1] ||
        fields[i]->ndim != 2) {
      snprintf(why, why_size, "%s has shape [%lld, %lld], U1 has [%lld, %lld]", names[i],
               (long long)fields[i]->shape[0], (long long)fields[i]->shape[1],
               (long long)a->U1.shape[0], (long long)a->U1.shape[1]);
      return 1;
    }
  }
  if (a->U1.halo < 2) {
    snprintf(why, why_size,
             "wave2d_4o reads 2 cells beyond each cell it updates: grid.halo must be >= 2, not %d",
             a->U1.halo);
    return 1;
  }
  for (int d = 0; d < 2; d++) {
    if (a->source[d] < 0 || a->source[d] >= a->U1.shape[d]) {
      snprintf(why, why_size, "source [%lld, %lld] is outside the grid [%lld, %lld]",
               (long long)a->source[0], (long long)a->source[1], (long long)a->U1.shape[0],
               (long long)a->U1.shape[1]);
      return 1;
    }
  }
  return 0;
}

/* Von Neumann analysis of the scheme in wave2d.h: the 4th-order second
 * difference (-1, 16, -30, 16, -1)/12 has symbols in [-16/3, 0] (the extreme
 * at the Nyquist mode, cos = -1), so the Laplacian's eigenvalues lie in
 * [-16/3 (1/dx0^2 + 1/dx1^2), 0]; leapfrog in time is stable while
 * c^2 dt^2 |lambda| <= 4, that is
 *   c dt sqrt(1/dx0^2 + 1/dx1^2) <= sqrt(3)/2,
 * or c dt/dx <= sqrt(3/8) ~ 0.612 on a square grid (2nd order in space
 * would allow 1/sqrt(2)). c is the largest |V|, known at load time only
 * when V's init is a constant; otherwise nothing is judged. */
static int wave2d_stable(const void *args, char *why, size_t why_size) {
  const gf_wave2d_args *a = args;
  double c = a->V.max_abs, dx0 = a->U1.spacing[0], dx1 = a->U1.spacing[1];
  if (!(c >= 0) || !(a->dt > 0)) return 0; /* unknown velocity, or dt changes per step */
  double number = c * a->dt * sqrt(1.0 / (dx0 * dx0) + 1.0 / (dx1 * dx1));
  double bound = sqrt(3.0) / 2.0;
  if (number <= bound) return 0;
  snprintf(why, why_size,
           "|V|*dt*sqrt(1/dx0^2 + 1/dx1^2) is %.4g, above sqrt(3)/2 = %.4g, the stability "
           "limit of this scheme (4th order in space, leapfrog in time)",
           number, bound);
  return 1;
}

static int64_t wave2d_points(const void *args) {
  const gf_wave2d_args *a = args;
  return (a->box.hi[0] - a->box.lo[0]) * (a->box.hi[1] - a->box.lo[1]);
}

/* Cells [lo1, hi1) of row i0, inlined into each row function below. */
static inline __attribute__((always_inline)) void wave2d_cells(
    const float *restrict U0, const float *restrict U1, const float *restrict V, float *restrict U2,
    int64_t i0, int64_t N1, int64_t lo1, int64_t hi1, gf_wave2d_coeffs c) {
  for (int64_t i1 = lo1; i1 < hi1; i1++) {
    int64_t offset = i0 * N1 + i1;
    U2[offset] = gf_wave2d_cell(U0, U1, V, offset, N1, c);
  }
}

/* The row functions, each built for AVX-512, AVX2 and baseline x86-64 and
 * picked at load time: the same float operations either way (no contraction
 * into FMA in ISO C), more of them an instruction where the CPU allows.
 * On a grid of unit spacing (1/dx^2 == 1 along both axes, as in the seed)
 * the second differences' products with 1/dx^2 are the differences
 * themselves, bit for bit, and the compiler leaves them out when it sees the
 * constant: two multiplies of the cell's 29 operations, as in the plain loop
 * of scripts/bench/wave2d_omp.c, whose spacing is a constant. */
GF_CPU_CLONES static void wave2d_row(const float *restrict U0, const float *restrict U1,
                                     const float *restrict V, float *restrict U2, int64_t i0,
                                     int64_t N1, int64_t lo1, int64_t hi1, gf_wave2d_coeffs c) {
  wave2d_cells(U0, U1, V, U2, i0, N1, lo1, hi1, c);
}

GF_CPU_CLONES static void wave2d_row_unit(const float *restrict U0, const float *restrict U1,
                                          const float *restrict V, float *restrict U2, int64_t i0,
                                          int64_t N1, int64_t lo1, int64_t hi1,
                                          gf_wave2d_coeffs c) {
  c.inv_dx02 = c.inv_dx12 = 1.0f;
  wave2d_cells(U0, U1, V, U2, i0, N1, lo1, hi1, c);
}

static void wave2d_run_cpu(const void *args) {
  const gf_wave2d_args *a = args;
  const float *U0 = a->U0.data, *U1 = a->U1.data, *V = a->V.data;
  float *U2 = a->U2.data;
  const int64_t N1 = a->U1.shape[1];
  const gf_box box = a->box;
  const gf_wave2d_coeffs c = gf_wave2d_coeffs_of(a);
  const int unit = c.inv_dx02 == 1.0f && c.inv_dx12 == 1.0f;
#pragma omp parallel for schedule(static)
  for (int64_t i0 = box.lo[0]; i0 < box.hi[0]; i0++)
    (unit ? wave2d_row_unit : wave2d_row)(U0, U1, V, U2, i0, N1, box.lo[1], box.hi[1], c);
  if (gf_wave2d_source_in_box(a)) U2[a->source[0] * N1 + a->source[1]] += c.forcing;
}

static const gf_param wave2d_params[] = {
    {"U0", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F32, offsetof(gf_wave2d_args, U0), 1, 0, 0, 0,
     "wavefield two steps back"},
    {"U1", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F32, offsetof(gf_wave2d_args, U1), 1, 0, 0, 0,
     "wavefield one step back; the Laplacian is taken of it"},
    {"U2", GF_PARAM_ARRAY, GF_ACCESS_WRITE | GF_ACCESS_INTERIOR, 1u << GF_F32,
     offsetof(gf_wave2d_args, U2), 1, 0, 0, 0,
     "wavefield this step computes (its outer halo ring is never written)"},
    {"V", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F32, offsetof(gf_wave2d_args, V), 1, 0, 0, 0,
     "wave velocity"},
    {"dt", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(gf_wave2d_args, dt), 1, 0, 0, INFINITY,
     "time step (stable while |V|*dt*sqrt(1/dx0^2 + 1/dx1^2) <= sqrt(3)/2)"},
    {"amplitude", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(gf_wave2d_args, amplitude), 0, 0,
     -INFINITY, INFINITY, "forcing added at the source cell (not scaled by dt^2)"},
    {"source", GF_PARAM_INDEX, GF_ACCESS_NONE, 0, offsetof(gf_wave2d_args, source), 0,
     GF_INDEX_CENTER, 0, 0, "cell the forcing is added to; default the grid's centre"},
    {"box", GF_PARAM_BOX, GF_ACCESS_NONE, 0, offsetof(gf_wave2d_args, box), 0, 0, 0, 0,
     "cells this launch updates"},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

const gf_kernel gf_kernel_wave2d_4o = {
    .name = "wave2d_4o",
    .help = "2-D scalar wave equation, 4th order in space, 2nd in time (the seed's kernel)",
    .params = wave2d_params,
    .args_size = sizeof(gf_wave2d_args),
    .check = wave2d_check,
    .points = wave2d_points,
    .bytes_per_point = 16.0, /* read U0, U1, V, write U2: 4 floats */
    .run_cpu = wave2d_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_wave2d_4o_launch_gpu),
    .stable = wave2d_stable,
    .equation =
        "U2 = 2*U1 - U0 + dt^2 * V^2 * (d0/dx0^2 + d1/dx1^2) (the seed's float operations)\n"
        "d0, d1: (-1, 16, -30, 16, -1)/12 along each axis; amplitude added at `source`\n"
        "stable while |V|*dt*sqrt(1/dx0^2 + 1/dx1^2) <= sqrt(3)/2",
    .boundary =
        "updates the cells at least grid.halo from every edge (grid.halo >= 2); the "
        "halo ring is never written and keeps its values",
    .flops_per_point = 29.0, /* 2 x (5 mul + 5 add), 2*U1 - U0, dt2*v*v, 2 mul 1 add, mul, add */
};
