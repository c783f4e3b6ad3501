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
  /* A call gf_decompose split around a ghost-cell exchange: each launch of
   * the task updates one of these boxes (0 boxes: the whole interior). */
  gf_box boxes[2 * GF_MAX_DIMS];
  int nboxes;
  int shares_args; /* 1: `args` belong to the task this one was split from */
} gf_kernel_task;

/* The part of `task` (a kernel task) that updates `boxes`: a new task
 * named `name` with the same kernel and arguments, for gf_decompose. The
 * caller owns it (gf_task_free_copy); NULL when out of memory. */
gf_status gf_kernel_task_split(const gf_task *task, const char *name, const gf_box *boxes,
                               int nboxes, gf_task *out);

#endif
