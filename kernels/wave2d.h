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
  gf_array U0;      /* wavefield at step n-2 (read) */
  gf_array U1;      /* wavefield at step n-1 (read; the Laplacian is taken of it) */
  gf_array U2;      /* wavefield at step n (written) */
  gf_array V;       /* velocity (read) */
  double dt;        /* time step */
  double amplitude; /* forcing added at the source cell */
  int64_t source[GF_MAX_DIMS];
} gf_wave2d_args;

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

/* U2 at `offset` (= i0*N1 + i1), an interior cell at least 2 cells from every edge. */
GF_HD float gf_wave2d_cell(const float *U0, const float *U1, const float *V, int64_t offset,
                           int64_t N1, gf_wave2d_coeffs c) {
  const float coeffs[5] = {-0.083333336f, 1.3333334f, -2.5f, 1.3333334f, -0.083333336f};
  float temp0 = 0.0f, temp1 = 0.0f;
  float tempV = V[offset];
  for (int64_t k = 0; k < 5; k++) {
    temp0 += coeffs[k] * U1[offset + k * N1 - 2 * N1]; /* along dim 0, stride N1 */
    temp1 += coeffs[k] * U1[offset + k - 2];           /* along dim 1, stride 1 */
  }
  return (2.0f * U1[offset]) - U0[offset] +
         ((c.dt2 * tempV * tempV) * (temp0 * c.inv_dx02 + temp1 * c.inv_dx12));
}

#endif
