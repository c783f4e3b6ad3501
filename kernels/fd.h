/* fd.h - central finite differences, shared by the wave, heat and stencil
 * kernels (wave.c, heat.c, stencil.c and their .hip twins) and by the loader,
 * which expands a named operator of a `kernel: stencil` into its taps.
 *
 * The per-cell math is written once, in fd_cell.h, included here once per
 * element type (float: the _f32 names, double: _f64), so the CPU loops and
 * the GPU kernels compute through the same functions, in the same order:
 * built without floating-point contraction (cmake/gpu.cmake), the GPU gives
 * the CPU's bits.
 */
#ifndef GF_KERNEL_FD_H
#define GF_KERNEL_FD_H

#include <stdint.h>

#include "gf_math.h"
#include "gflow.h"

#define GF_FD_MAX_RADIUS 4 /* order 8 */

/* Cells a central difference of `order` reaches on each side: 1, 2 or 4 for
 * order 2, 4 or 8; 0 for any other order. */
static inline int gf_fd_radius(int64_t order) {
  return order == 2 ? 1 : order == 4 ? 2 : order == 8 ? 4 : 0;
}

/* c[k] of the central second difference of `radius`:
 *   d2u/dx2 ~ (c[0] u[i] + sum_{k=1..radius} c[k] (u[i+k] + u[i-k])) / dx^2 */
static inline double gf_fd2_coeff(int radius, int k) {
  static const double r1[] = {-2.0, 1.0};
  static const double r2[] = {-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0};
  static const double r4[] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0};
  return radius == 1 ? r1[k] : radius == 2 ? r2[k] : r4[k];
}

/* d[k] of the central first difference of `radius` (d[0] = 0):
 *   du/dx ~ sum_{k=1..radius} d[k] (u[i+k] - u[i-k]) / dx */
static inline double gf_fd1_coeff(int radius, int k) {
  static const double r1[] = {0.0, 1.0 / 2.0};
  static const double r2[] = {0.0, 2.0 / 3.0, -1.0 / 12.0};
  static const double r4[] = {0.0, 4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0};
  return radius == 1 ? r1[k] : radius == 2 ? r2[k] : r4[k];
}

/* The largest |symbol| of the second difference (dx = 1): its value at the
 * Nyquist mode, c[0] + 2 sum (-1)^k c[k], where these symbols, which fall
 * monotonically from 0, are largest: 4, 16/3 and 2048/315 for orders 2, 4
 * and 8. The Laplacian's eigenvalues then lie in
 * [-nyquist * sum_d 1/dx_d^2, 0], which is what the stability conditions of
 * wave.c and heat.c are made of. */
static inline double gf_fd2_nyquist(int radius) {
  double s = gf_fd2_coeff(radius, 0);
  for (int k = 1; k <= radius; k++) s += 2.0 * (k % 2 ? -1.0 : 1.0) * gf_fd2_coeff(radius, k);
  return -s;
}

/* Element strides of an array along each axis (row-major; unused trailing
 * axes have stride 0). */
typedef struct gf_fd_geom {
  int64_t stride[GF_MAX_DIMS];
} gf_fd_geom;

static inline gf_fd_geom gf_fd_geom_of(const gf_array *a) {
  gf_fd_geom g = {{0, 0, 0}};
  int64_t s = 1;
  for (int d = a->ndim - 1; d >= 0; d--) {
    g.stride[d] = s;
    s *= a->shape[d];
  }
  return g;
}

/* A box as rows along the array's last axis: rows (i, j), i < n_outer,
 * j < n_mid, each `len` contiguous cells starting at element
 * base + i*stride_outer + j*stride_mid. Axes a 1-D or 2-D array lacks count
 * one row. */
typedef struct gf_fd_rows {
  int64_t n_outer, n_mid, len;
  int64_t base, stride_outer, stride_mid;
} gf_fd_rows;

static inline gf_fd_rows gf_fd_rows_of(const gf_array *a, gf_box box) {
  gf_fd_geom g = gf_fd_geom_of(a);
  int n = a->ndim, last = n - 1;
  gf_fd_rows r = {1, 1, box.hi[last] - box.lo[last], 0, 0, 0};
  for (int d = 0; d < n; d++) r.base += box.lo[d] * g.stride[d];
  if (n >= 2) r.n_mid = box.hi[n - 2] - box.lo[n - 2], r.stride_mid = g.stride[n - 2];
  if (n >= 3) r.n_outer = box.hi[0] - box.lo[0], r.stride_outer = g.stride[0];
  if (r.len <= 0 || r.n_mid <= 0 || r.n_outer <= 0) r.len = r.n_mid = r.n_outer = 0;
  return r;
}

/* The forcing of the wave and heat kernels: amplitude * (pattern + each
 * source cell's weight), added to the new value. */
typedef struct gf_fd_forcing {
  gf_array pattern;  /* optional field (ndim 0: none) */
  double amplitude;  /* per step */
  gf_points sources; /* grid cells with weights */
} gf_fd_forcing;

/* The element offset of source `p` in `a` when it lies in `box`, else -1. */
static inline int64_t gf_fd_source_offset(const gf_array *a, gf_box box, const gf_point *p) {
  gf_fd_geom g = gf_fd_geom_of(a);
  int64_t offset = 0;
  for (int d = 0; d < a->ndim; d++) {
    int64_t i = p->at[d] - a->origin[d];
    if (i < box.lo[d] || i >= box.hi[d]) return -1;
    offset += i * g.stride[d];
  }
  return offset;
}

/* The Laplacian's sum, in the one order every caller keeps (the CPU loops
 * through fd_cell.h's gf_fd_laplacian, the GPU tiles of fd_gpu.h from their
 * registers): `sum` = center*AT(0, 0), then along each axis d = 0..ndim-1,
 * for k = 1..radius, sum += w[d][k]*(AT(d, k) + AT(d, -k)), where AT(d, k)
 * is the value k cells from the cell along axis d. */
/* clang-format off */
#define GF_FD_LAPLACIAN_SUM(sum, L, ndim, radius, AT)                             \
  do {                                                                            \
    (sum) = (L).center * AT(0, 0);                                                \
    GF_UNROLL for (int gf_d_ = 0; gf_d_ < (ndim); gf_d_++)                        \
      GF_UNROLL for (int gf_k_ = 1; gf_k_ <= (radius); gf_k_++)                   \
        (sum) += (L).w[gf_d_][gf_k_] * (AT(gf_d_, gf_k_) + AT(gf_d_, -gf_k_));    \
  } while (0)
/* clang-format on */

#define GF_FD_T float
#define GF_FD(name) name##_f32
#include "fd_cell.h"
#undef GF_FD_T
#undef GF_FD
#define GF_FD_T double
#define GF_FD(name) name##_f64
#include "fd_cell.h"
#undef GF_FD_T
#undef GF_FD

/* ---- shared by the CPU side of the kernels (fd.c) ---- */

/* A CPU row function per dimension and radius: ROW(T, S, NDIM, R) defines
 * PREFIX_S_NDIM_R, and GF_FD_ROW_TABLE(PREFIX, S) is the table of them,
 * indexed [ndim - 1][gf_fd_variant_radius(radius)]. */
/* clang-format off */
#define GF_FD_EACH_VARIANT(ROW, T, S) \
  ROW(T, S, 1, 1) ROW(T, S, 1, 2) ROW(T, S, 1, 4) \
  ROW(T, S, 2, 1) ROW(T, S, 2, 2) ROW(T, S, 2, 4) \
  ROW(T, S, 3, 1) ROW(T, S, 3, 2) ROW(T, S, 3, 4)
/* clang-format on */
#define GF_FD_ROW_TABLE(PREFIX, S)                                      \
  {                                                                     \
    {PREFIX##_##S##_1_1, PREFIX##_##S##_1_2, PREFIX##_##S##_1_4},       \
        {PREFIX##_##S##_2_1, PREFIX##_##S##_2_2, PREFIX##_##S##_2_4}, { \
      PREFIX##_##S##_3_1, PREFIX##_##S##_3_2, PREFIX##_##S##_3_4        \
    }                                                                   \
  }
static inline int gf_fd_variant_radius(int radius) {
  return radius == 4 ? 2 : radius - 1;
}
typedef void (*gf_fd_row_fn)(const void *ctx, int64_t o, int64_t len);

/* Checks that `n` fields (names[i], absent when ndim is 0 and optional[i])
 * have one shape and dtype and that the grid's halo covers `radius`; the
 * reason starts with `kernel`. Returns non-zero with a reason when not. */
int gf_fd_check_fields(const char *kernel, const gf_array *const *fields, const char *const *names,
                       const int *optional, int n, int radius, char *why, size_t why_size);
/* Checks `order` (2, 4 or 8). */
int gf_fd_check_order(const char *kernel, int64_t order, char *why, size_t why_size);
/* Adds amplitude * weight at each source cell of `forcing` that lies in
 * `box`, in list order (the CPU side; fd_gpu.h has the GPU's). */
void gf_fd_add_sources(const gf_array *u, gf_box box, const gf_fd_forcing *forcing);
/* Calls row(ctx, first element, length) for every row of `rows`, the rows
 * spread over the OpenMP threads. */
void gf_fd_for_rows(gf_fd_rows rows, void (*row)(const void *ctx, int64_t o, int64_t len),
                    const void *ctx);
/* Grid points of `box`. */
int64_t gf_fd_box_points(gf_box box);

#endif
