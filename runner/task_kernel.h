/* task_kernel.h - the payload of a kernel task (task_kernel.c), for tools
 * and tests that look inside a loaded workflow. */
#ifndef GF_TASK_KERNEL_H
#define GF_TASK_KERNEL_H

#include "task.h"

/* One kernel argument, resolved against the kernel's parameter table. */
typedef struct gf_kernel_arg {
  const gf_param *param;
  int access;                 /* GF_PARAM_ARRAY: index into task->access; -1: not given */
  gf_expr *value;             /* GF_PARAM_REAL, GF_PARAM_INT (a default compiled as a constant) */
  int64_t index[GF_MAX_DIMS]; /* GF_PARAM_INDEX */
  gf_point *points;           /* GF_PARAM_CELLS, GF_PARAM_TAPS: `npoints` entries */
  int64_t npoints;
  gf_loc loc;
} gf_kernel_arg;

typedef struct gf_kernel_task {
  const gf_kernel *kernel;
  gf_kernel_arg *args; /* one per kernel parameter, in table order */
  int nargs;
} gf_kernel_task;

#endif
