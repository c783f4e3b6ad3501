/* heat.h - `heat`: explicit diffusion on 1-D, 2-D or 3-D grids, order 2, 4
 * or 8 in space, f32 or f64, with a source field and point sources (heat.c,
 * heat.hip). The per-cell math is fd_cell.h's gf_fd_heat_cell. */
#ifndef GF_KERNEL_HEAT_H
#define GF_KERNEL_HEAT_H

#include "fd.h"

typedef struct gf_heat_args {
  gf_array T0;           /* temperature now (read) */
  gf_array T1;           /* temperature after the step (written) */
  double alpha;          /* diffusivity */
  double dt;             /* time step */
  int64_t order;         /* 2, 4 or 8: order of the Laplacian */
  gf_fd_forcing forcing; /* amplitude, sources, pattern */
  gf_box box;            /* the cells this launch updates */
} gf_heat_args;

#endif
