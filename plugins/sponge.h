/* sponge.h - the example GPU plugin's per-cell math, shared by its CPU loop
 * (sponge.c) and its GPU kernel (sponge.hip): an absorbing layer (Cerjan et
 * al., 1985) that damps a wavefield near the grid's edges, so waves leave
 * the box instead of reflecting off its fixed edges. */
#ifndef SPONGE_H
#define SPONGE_H

#include <math.h>
#include <stdint.h>

#include "gflow.h"

#if defined(__HIPCC__) || defined(__CUDACC__)
#define SPONGE_HD __host__ __device__ static inline
#else
#define SPONGE_HD static inline
#endif

typedef struct sponge_args {
  gf_array U;      /* wavefield, damped in place (read and written) */
  int64_t width;   /* cells of the layer, counted from the halo inwards */
  double strength; /* damping: the factor at depth k into the layer is exp(-(strength*k)^2) */
  gf_box box;      /* the cells this launch updates */
} sponge_args;

/* Depth of grid cell `i` into the layer along one axis (0: outside it), the
 * cells [halo, halo + width) and [n - halo - width, n - halo) of a grid of n. */
SPONGE_HD int64_t sponge_depth(int64_t i, int64_t n, int64_t halo, int64_t width) {
  int64_t from_edge = i - halo < n - halo - 1 - i ? i - halo : n - halo - 1 - i;
  return from_edge < width ? width - from_edge : 0;
}

/* The factor for a cell at depths k0, k1, k2 (the deepest counts). */
SPONGE_HD float sponge_factor(int64_t k0, int64_t k1, int64_t k2, double strength) {
  int64_t k = k0 > k1 ? k0 : k1;
  k = k > k2 ? k : k2;
  double x = strength * (double)k;
  return k ? (float)exp(-x * x) : 1.0f;
}

/* Grid cell `i` (the array's index plus origin: the layer lies at the
 * grid's edges, also on an MPI rank's block) of array `a`, depth along axis d. */
SPONGE_HD int64_t sponge_depth_of(const gf_array *a, int d, int64_t i, int64_t width) {
  if (d >= a->ndim || a->global_shape[d] == 1) return 0; /* an axis the grid lacks */
  return sponge_depth(i + a->origin[d], a->global_shape[d], a->halo, width);
}

#endif
