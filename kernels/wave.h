/* wave.h - `wave`: the acoustic wave equation, 2nd order in time, order 2, 4
 * or 8 in space, on 1-D, 2-D or 3-D grids, f32 or f64 (wave.c, wave.hip). The
 * per-cell math is fd_cell.h's gf_fd_wave_cell. */
#ifndef GF_KERNEL_WAVE_H
#define GF_KERNEL_WAVE_H

#include "fd.h"

typedef struct gf_wave_args {
  gf_array U0;           /* wavefield at step n-2 (read) */
  gf_array U1;           /* wavefield at step n-1 (read; the Laplacian is taken of it) */
  gf_array U2;           /* wavefield at step n (written) */
  gf_array V;            /* velocity (read) */
  double dt;             /* time step */
  int64_t order;         /* 2, 4 or 8: order of the Laplacian */
  gf_fd_forcing forcing; /* amplitude, sources, pattern */
  gf_box box;            /* the cells this launch updates */
} gf_wave_args;

#endif
