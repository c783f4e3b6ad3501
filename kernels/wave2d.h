/* wave2d.h - the seed's wave2d_4o stencil: 4th order in space, 2nd in time.
 *
 * One definition of the per-cell math, shared by the CPU loop (wave2d.c) and
 * the GPU kernel (wave2d.hip). The float operations and their order are the
 * seed's, so both reproduce its array_out.dat.
 */
#ifndef GF_KERNEL_WAVE2D_H
#define GF_KERNEL_WAVE2D_H

#include <stdint.h>

#include "gf_math.h"
#include "gflow.h"

typedef struct gf_wave2d_args {
  gf_array U0;                 /* wavefield at step n-2 (read) */
  gf_array U1;                 /* wavefield at step n-1 (read; the Laplacian is taken of it) */
  gf_array U2;                 /* wavefield at step n (written) */
  gf_array V;                  /* velocity (read) */
  double dt;                   /* time step */
  double amplitude;            /* forcing added at the source cell */
  int64_t source[GF_MAX_DIMS]; /* in the arrays' own indices (gflow.h) */
  gf_box box;                  /* the cells this launch updates */
} gf_wave2d_args;

/* 1 when the source cell is one this launch updates. */
static inline int gf_wave2d_source_in_box(const gf_wave2d_args *a) {
  for (int d = 0; d < 2; d++)
    if (a->source[d] < a->box.lo[d] || a->source[d] >= a->box.hi[d]) return 0;
  return 1;
}

/* Scalars of one launch, computed once on the host in float as the seed does. */
typedef struct gf_wave2d_coeffs {
  float dt2;      /* dt*dt */
  float inv_dx02; /* 1/(D0*D0) */
  float inv_dx12; /* 1/(D1*D1) */
  float forcing;  /* added at the source cell */
} gf_wave2d_coeffs;

static inline gf_wave2d_coeffs gf_wave2d_coeffs_of(const gf_wave2d_args *a) {
  gf_wave2d_coeffs c;
  float dt = (float)a->dt;
  c.dt2 = dt * dt;
  c.inv_dx02 = (float)(1.0 / (a->U1.spacing[0] * a->U1.spacing[0]));
  c.inv_dx12 = (float)(1.0 / (a->U1.spacing[1] * a->U1.spacing[1]));
  c.forcing = (float)a->amplitude;
  return c;
}

/* The seed's update of one cell from the values it reads: u0 = U0 and v = V
 * at the cell, d0[k] = U1 at (i0 + k - 2, i1) and d1[k] = U1 at (i0, i1 + k - 2)
 * (so d0[2] == d1[2] is U1 at the cell). Every launcher, CPU or GPU, computes
 * through this function, so the float operations and their order are the
 * same everywhere. */
GF_HD float gf_wave2d_update(float u0, float v, const float d0[5], const float d1[5],
                             gf_wave2d_coeffs c) {
  const float coeffs[5] = {-0.083333336f, 1.3333334f, -2.5f, 1.3333334f, -0.083333336f};
  float temp0 = 0.0f, temp1 = 0.0f;
  for (int k = 0; k < 5; k++) {
    temp0 += coeffs[k] * d0[k];
    temp1 += coeffs[k] * d1[k];
  }
  return (2.0f * d1[2]) - u0 + ((c.dt2 * v * v) * (temp0 * c.inv_dx02 + temp1 * c.inv_dx12));
}

/* U2 at `offset` (= i0*N1 + i1), an interior cell at least 2 cells from every edge. */
GF_HD float gf_wave2d_cell(const float *U0, const float *U1, const float *V, int64_t offset,
                           int64_t N1, gf_wave2d_coeffs c) {
  const float *u = U1 + offset;
  const float d0[5] = {u[-2 * N1], u[-N1], u[0], u[N1], u[2 * N1]};
  const float d1[5] = {u[-2], u[-1], u[0], u[1], u[2]};
  return gf_wave2d_update(U0[offset], V[offset], d0, d1, c);
}

#endif
