/* blur.h - the GhostExchange seed's stencil: each interior cell becomes the
 * mean of itself and its four neighbours,
 *   xnew(j,i) = (x(j,i) + x(j,i-1) + x(j,i+1) + x(j-1,i) + x(j+1,i)) / 5,
 * in f64 with the seed's order of additions, shared by the CPU loop
 * (blur.c) and the GPU kernel (blur.hip). */
#ifndef GF_KERNEL_BLUR_H
#define GF_KERNEL_BLUR_H

#include <stdint.h>

#include "gf_math.h"
#include "gflow.h"

typedef struct gf_blur_args {
  gf_array x;    /* read: the cells and one neighbour on each side */
  gf_array xnew; /* written: the cells of `box` */
  gf_box box;
} gf_blur_args;

/* xnew at `offset` = (j, i) of an array with rows of `N1` cells. */
GF_HD double gf_blur_cell(const double *x, int64_t offset, int64_t N1) {
  return (x[offset] + x[offset - 1] + x[offset + 1] + x[offset - N1] + x[offset + N1]) / 5.0;
}

#ifdef __cplusplus
extern "C" {
#endif
int gf_blur_launch_gpu(const void *args, void *stream);
extern const gf_kernel gf_kernel_blur;
#ifdef __cplusplus
}
#endif

#endif
