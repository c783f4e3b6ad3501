/* fd_cell.h - the per-cell math of the wave, heat and stencil kernels for
 * one element type, included by fd.h with GF_FD_T the type and GF_FD(name)
 * the name with its suffix (_f32 or _f64). No include guard: fd.h includes
 * it once per type.
 *
 * A launcher calls these with `ndim` and `radius` known at the call (a
 * template argument, or a literal in a specialised loop), so the loops
 * below unroll; the sums run in the order written, on the CPU and the GPU
 * alike. */

/* The Laplacian's weights for one launch: the cell's own, and along each
 * axis the weight of the two cells k away (k = 1..radius), the second
 * difference's coefficients over dx^2 times `scale`. */
typedef struct GF_FD(gf_fd_lap) {
  GF_FD_T center;
  GF_FD_T w[GF_MAX_DIMS][GF_FD_MAX_RADIUS + 1];
} GF_FD(gf_fd_lap);

static inline GF_FD(gf_fd_lap) GF_FD(gf_fd_lap_of)(const gf_array *a, int radius, double scale) {
  GF_FD(gf_fd_lap) L;
  double center = 0;
  for (int d = 0; d < GF_MAX_DIMS; d++)
    for (int k = 0; k <= GF_FD_MAX_RADIUS; k++) L.w[d][k] = 0;
  for (int d = 0; d < a->ndim; d++) {
    double inv = scale / (a->spacing[d] * a->spacing[d]);
    center += gf_fd2_coeff(radius, 0) * inv;
    for (int k = 1; k <= radius; k++) L.w[d][k] = (GF_FD_T)(gf_fd2_coeff(radius, k) * inv);
  }
  L.center = (GF_FD_T)center;
  return L;
}

/* scale * Laplacian of u at element `o` (fd.h's GF_FD_LAPLACIAN_SUM):
 *   center*u[o] + sum over axes d, then k = 1..radius, of w[d][k]*(u[o+k s_d] + u[o-k s_d]). */
GF_HD GF_FD_T GF_FD(gf_fd_laplacian)(const GF_FD_T *u, int64_t o, int ndim, int radius,
                                     gf_fd_geom g, GF_FD(gf_fd_lap) L) {
  GF_FD_T sum;
#define GF_FD_AT_(d, k) u[o + (k)*g.stride[d]]
  GF_FD_LAPLACIAN_SUM(sum, L, ndim, radius, GF_FD_AT_);
#undef GF_FD_AT_
  return sum;
}

/* Acoustic wave, leapfrog in time, from the values at the cell:
 * U2 = 2 U1 - U0 + dt^2 V^2 lap, with lap the Laplacian of U1 at scale 1 and
 * dt2 = dt^2. */
GF_HD GF_FD_T GF_FD(gf_fd_wave_update)(GF_FD_T u1, GF_FD_T u0, GF_FD_T v, GF_FD_T lap,
                                       GF_FD_T dt2) {
  return (2 * u1 - u0) + (dt2 * v * v) * lap;
}

/* The wave at element `o`, with L the Laplacian's weights at scale 1. */
GF_HD GF_FD_T GF_FD(gf_fd_wave_cell)(const GF_FD_T *U0, const GF_FD_T *U1, const GF_FD_T *V,
                                     int64_t o, int ndim, int radius, gf_fd_geom g,
                                     GF_FD(gf_fd_lap) L, GF_FD_T dt2) {
  return GF_FD(gf_fd_wave_update)(U1[o], U0[o], V[o],
                                  GF_FD(gf_fd_laplacian)(U1, o, ndim, radius, g, L), dt2);
}

/* Explicit diffusion from the values at the cell: T1 = T0 + lap, with lap
 * the Laplacian of T0 at scale alpha*dt. */
GF_HD GF_FD_T GF_FD(gf_fd_heat_update)(GF_FD_T t0, GF_FD_T lap) {
  return t0 + lap;
}

/* Diffusion at element `o`, with L the Laplacian's weights at scale alpha*dt. */
GF_HD GF_FD_T GF_FD(gf_fd_heat_cell)(const GF_FD_T *T0, int64_t o, int ndim, int radius,
                                     gf_fd_geom g, GF_FD(gf_fd_lap) L) {
  return GF_FD(gf_fd_heat_update)(T0[o], GF_FD(gf_fd_laplacian)(T0, o, ndim, radius, g, L));
}

/* The forcing's spatial part at a cell: x + amplitude * pattern. */
GF_HD GF_FD_T GF_FD(gf_fd_force)(GF_FD_T x, GF_FD_T amplitude, GF_FD_T pattern) {
  return x + amplitude * pattern;
}

/* One tap of a declared stencil: acc + coef * value. */
GF_HD GF_FD_T GF_FD(gf_fd_tap)(GF_FD_T acc, GF_FD_T coef, GF_FD_T value) {
  return acc + coef * value;
}

/* A tap and its mirror image with the same coefficient, as one term:
 * acc + coef * (value + mirror), as the Laplacian sums its pairs. */
GF_HD GF_FD_T GF_FD(gf_fd_pair)(GF_FD_T acc, GF_FD_T coef, GF_FD_T value, GF_FD_T mirror) {
  return acc + coef * (value + mirror);
}

/* `acc` plus coef[t] * u[o + offset[t]] for t = 0..ntaps-1, in that order. */
GF_HD GF_FD_T GF_FD(gf_fd_taps)(GF_FD_T acc, const GF_FD_T *u, int64_t o, int ntaps,
                                const int64_t *offset, const GF_FD_T *coef) {
  for (int t = 0; t < ntaps; t++) acc = GF_FD(gf_fd_tap)(acc, coef[t], u[o + offset[t]]);
  return acc;
}

/* `acc` plus coef[t] * (u[o + offset[t]] + u[o - offset[t]]) for t = 0..npairs-1. */
GF_HD GF_FD_T GF_FD(gf_fd_pairs)(GF_FD_T acc, const GF_FD_T *u, int64_t o, int npairs,
                                 const int64_t *offset, const GF_FD_T *coef) {
  for (int t = 0; t < npairs; t++)
    acc = GF_FD(gf_fd_pair)(acc, coef[t], u[o + offset[t]], u[o - offset[t]]);
  return acc;
}

/* A tap, then npairs - 1 pairs (a star: its cell, then its arms). */
GF_HD GF_FD_T GF_FD(gf_fd_star)(GF_FD_T acc, const GF_FD_T *u, int64_t o, int nterms,
                                const int64_t *offset, const GF_FD_T *coef) {
  acc = GF_FD(gf_fd_tap)(acc, coef[0], u[o + offset[0]]);
  return GF_FD(gf_fd_pairs)(acc, u, o, nterms - 1, offset + 1, coef + 1);
}

/* One input's share of a declared stencil at element `o` (stencil.h's
 * plan): its terms in order, each a tap or, with pair[t], a pair. */
GF_HD GF_FD_T GF_FD(gf_fd_terms)(GF_FD_T acc, const GF_FD_T *u, int64_t o, int nterms,
                                 const int64_t *offset, const GF_FD_T *coef,
                                 const unsigned char *pair) {
  for (int t = 0; t < nterms; t++)
    acc = pair[t] ? GF_FD(gf_fd_pair)(acc, coef[t], u[o + offset[t]], u[o - offset[t]])
                  : GF_FD(gf_fd_tap)(acc, coef[t], u[o + offset[t]]);
  return acc;
}
