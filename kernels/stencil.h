/* stencil.h - `stencil`: a linear stencil declared in the workflow,
 *   out = sum over inputs i of sum over taps (o, c) of taps_i: c * in_i[cell + o],
 * on 1-D to 3-D grids, f32 or f64 (stencil.c, stencil.hip), summed input by
 * input and tap by tap in the order given, except that a tap followed by its
 * mirror image with the same coefficient is one term, c * (in[cell + o] +
 * in[cell - o]) (gf_stencil_pair): a named Laplacian's taps come so, -k
 * then +k, and are summed as the heat kernel sums them. The per-cell math
 * is fd_cell.h's gf_fd_terms. */
#ifndef GF_KERNEL_STENCIL_H
#define GF_KERNEL_STENCIL_H

#include "fd.h"

#define GF_STENCIL_INPUTS 4    /* in0 .. in3 */
#define GF_STENCIL_MAX_TAPS 32 /* per input: a 3-D order-8 Laplacian has 25 */

typedef struct gf_stencil_args {
  gf_array out;                      /* written */
  gf_array in[GF_STENCIL_INPUTS];    /* read; in1.. optional (ndim 0) */
  gf_points taps[GF_STENCIL_INPUTS]; /* offsets and coefficients per input */
  gf_box box;                        /* the cells this launch updates */
} gf_stencil_args;

/* Whether taps t and t + 1 of `taps` form one term: mirror images (not
 * the cell itself) with the same coefficient. */
static inline int gf_stencil_pair(const gf_points *taps, int64_t t) {
  if (t + 1 >= taps->count || taps->point[t].weight != taps->point[t + 1].weight) return 0;
  int nonzero = 0;
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    if (taps->point[t + 1].at[d] != -taps->point[t].at[d]) return 0;
    nonzero |= taps->point[t].at[d] != 0;
  }
  return nonzero;
}

/* One launch's terms as element offsets and coefficients of the fields'
 * type, the same for the CPU loop and the GPU kernel: term t of input i is
 * coef * in[o + offset], or with pair[t] coef * (in[o + offset] + in[o - offset]). */
#define GF_STENCIL_PLAN(T, S)                                   \
  typedef struct gf_stencil_plan_##S {                          \
    const T *in[GF_STENCIL_INPUTS];                             \
    T *out;                                                     \
    int ninputs;                                                \
    int nterms[GF_STENCIL_INPUTS];                              \
    int64_t offset[GF_STENCIL_INPUTS][GF_STENCIL_MAX_TAPS];     \
    T coef[GF_STENCIL_INPUTS][GF_STENCIL_MAX_TAPS];             \
    unsigned char pair[GF_STENCIL_INPUTS][GF_STENCIL_MAX_TAPS]; \
  } gf_stencil_plan_##S;
GF_STENCIL_PLAN(float, f32)
GF_STENCIL_PLAN(double, f64)
#undef GF_STENCIL_PLAN

#define GF_STENCIL_PLAN_OF(T, S)                                                          \
  static inline gf_stencil_plan_##S gf_stencil_plan_of_##S(const gf_stencil_args *a) {    \
    gf_stencil_plan_##S p;                                                                \
    gf_fd_geom g = gf_fd_geom_of(&a->out);                                                \
    p.out = (T *)a->out.data;                                                             \
    p.ninputs = 0;                                                                        \
    for (int i = 0; i < GF_STENCIL_INPUTS; i++) {                                         \
      if (a->in[i].ndim == 0) continue;                                                   \
      int n = p.ninputs++, k = 0;                                                         \
      p.in[n] = (const T *)a->in[i].data;                                                 \
      for (int64_t t = 0; t < a->taps[i].count; t++, k++) {                               \
        const gf_point *tap = &a->taps[i].point[t];                                       \
        p.offset[n][k] = 0;                                                               \
        for (int d = 0; d < a->out.ndim; d++) p.offset[n][k] += tap->at[d] * g.stride[d]; \
        p.coef[n][k] = (T)tap->weight;                                                    \
        p.pair[n][k] = (unsigned char)gf_stencil_pair(&a->taps[i], t);                    \
        t += p.pair[n][k];                                                                \
      }                                                                                   \
      p.nterms[n] = k;                                                                    \
    }                                                                                     \
    return p;                                                                             \
  }
GF_STENCIL_PLAN_OF(float, f32)
GF_STENCIL_PLAN_OF(double, f64)
#undef GF_STENCIL_PLAN_OF

#endif
