/* gflow.h - the public interface a kernel (built in or plugin) is written against.
 *
 * A kernel declares its parameters once, as a table; the loader checks a
 * workflow's `args:` against that table and writes the resolved values into the
 * kernel's own argument struct at each parameter's offset. Adding a kernel never
 * touches the loader. Built-in kernels register through the same gf_registrar a
 * plugin's init function is handed.
 */
#ifndef GFLOW_H
#define GFLOW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: gf_array.max_abs, gf_kernel.stable; 3: origin, GF_PARAM_BOX; 4: GF_PARAM_CELLS and
 * GF_PARAM_TAPS, optional array parameters, gf_kernel.equation, boundary, flops_per_point */
#define GF_ABI_VERSION 4
#define GF_MAX_DIMS 3
#define GF_MAX_KERNEL_ARGS_SIZE 1024 /* bytes of one kernel's argument struct */

typedef enum gf_dtype { GF_F32 = 0, GF_F64 = 1 } gf_dtype;

/* A box of cells, [lo, hi) along each axis in an array's own indices
 * (trailing axes [0, 1)). */
typedef struct gf_box {
  int64_t lo[GF_MAX_DIMS], hi[GF_MAX_DIMS];
} gf_box;

/* One field instance as a kernel sees it: where it lives and its geometry. */
typedef struct gf_array {
  void *data;
  gf_dtype dtype;
  int ndim;
  int64_t shape[GF_MAX_DIMS];  /* unused trailing dims are 1 */
  double spacing[GF_MAX_DIMS]; /* grid spacing along each axis */
  int halo;                    /* cells at each edge the kernel must not write */
  /* Where the array lies in the workflow's grid: its cell 0 is the grid's
   * cell `origin`, and the grid is `global_shape`. On one process origin is
   * 0 and global_shape is shape; when the grid is split across MPI ranks,
   * `data` holds one rank's block: the cells it owns plus `halo` ghost cells
   * on each side, which gflow fills from the neighbours (or the boundary
   * condition at the grid's edges) before a kernel reads them. */
  int64_t origin[GF_MAX_DIMS];
  int64_t global_shape[GF_MAX_DIMS];
  /* For stable() at load time: the largest |value| of the field's initial
   * contents when its `init:` is a constant (the velocity of a uniform
   * medium), else NAN. Always NAN at launch. */
  double max_abs;
} gf_array;

typedef enum gf_param_type {
  GF_PARAM_ARRAY, /* a field instance: `U[n+2]`, `V` */
  GF_PARAM_REAL,  /* double; an expression, may change every step */
  GF_PARAM_INT,   /* int64_t; an expression, may change every step */
  GF_PARAM_INDEX, /* int64_t[GF_MAX_DIMS]: a grid cell, `[128, 128]` */
  GF_PARAM_BOX,   /* gf_box: the cells this launch updates; set by gflow, never in a workflow */
  GF_PARAM_CELLS, /* gf_points: grid cells with weights, `[[64, 64, 1.0], [10, 20, -0.5]]` */
  GF_PARAM_TAPS,  /* gf_points: offsets with coefficients, `[[0, 1, 0.5], {laplacian: 4}]` */
} gf_param_type;

/* One entry of a GF_PARAM_CELLS or GF_PARAM_TAPS list: a cell or an offset
 * (trailing axes 0) and its weight. */
typedef struct gf_point {
  int64_t at[GF_MAX_DIMS];
  double weight;
} gf_point;

/* A list argument: `count` entries at `point`, owned by gflow and unchanged
 * for the whole run (count 0 when the workflow gives none). */
typedef struct gf_points {
  const gf_point *point;
  int64_t count;
} gf_points;

/* How a kernel sees its grid.
 *
 * - A GF_PARAM_INDEX value arrives in the arrays' own indices (the cell the
 *   workflow names, minus origin), so on an MPI rank that does not hold the
 *   cell it lies outside the array: act on it only when it lies within the
 *   cells this launch updates.
 * - A kernel with a GF_PARAM_BOX parameter updates exactly the cells of its
 *   box and reads at most `halo` cells beyond it. gflow sets the box: the
 *   interior [halo, shape - halo) of the arrays when the call runs whole, or
 *   a part of it when a schedule splits the call (the interior away from
 *   the ghost cells while they are exchanged, then the strips next to them).
 *   check(), stable() and points() at load time see the whole interior. A
 *   kernel without a box updates the whole interior, and is never split.
 * - The cells of a GF_PARAM_CELLS list are the grid's (checked against it
 *   at load time), not the arrays': a kernel subtracts its array's `origin`
 *   and acts on those that land in its box. Each list is shared by every
 *   launch of the call, so gflow cannot shift it per rank as it does an
 *   index.
 * - The entries of a GF_PARAM_TAPS list are offsets from the cell updated,
 *   each with its coefficient: `[o0, o1, c]` as written, or a named operator
 *   expanded at load time with the grid's spacing
 *   (`{laplacian: ORDER, times: X}`, the central second differences summed
 *   over the axes, or `{derivative: ORDER, axis: D, times: X}`, the central
 *   first difference along axis D; ORDER 2, 4 or 8). Entries at the same
 *   offset are summed into one, in the order written.
 * - An array parameter that is not required and not given arrives with
 *   `ndim` 0 and `data` NULL. */

typedef enum gf_access {
  GF_ACCESS_NONE = 0,
  GF_ACCESS_READ = 1,
  GF_ACCESS_WRITE = 2,
  GF_ACCESS_READ_WRITE = 3,
  /* With WRITE: the kernel writes only cells at least `halo` from each edge
   * of the grid, so work on the halo strips need not wait for it. */
  GF_ACCESS_INTERIOR = 4,
  /* The kernel is correct when this argument is the same field instance as
   * another argument of the call (it reads each cell before writing it, or
   * writes what it read). Without it the planner refuses such a call. */
  GF_ACCESS_IN_PLACE = 8,
} gf_access;

/* Sentinel default of a GF_PARAM_INDEX parameter: the grid's centre cell. */
#define GF_INDEX_CENTER (-1.0)

typedef struct gf_param {
  const char *name;
  gf_param_type type;
  gf_access access; /* arrays only: how the kernel touches it */
  unsigned dtypes;  /* arrays only: bit mask of accepted gf_dtype (1u << dtype) */
  size_t offset;    /* where the value goes in the kernel's argument struct */
  int required;     /* 1: the workflow must give it */
  double def;       /* default for scalars and indices */
  double min, max;  /* accepted range for scalars (checked when constant);
                     * min == max == 0, or min > max: no range */
  const char *help;
} gf_param;

typedef struct gf_kernel {
  const char *name;
  const char *help;
  const gf_param *params; /* terminated by an entry whose name is NULL */
  size_t args_size;       /* sizeof the argument struct, <= GF_MAX_KERNEL_ARGS_SIZE */
  /* Checks a fully resolved argument struct once at load time (shapes, dtypes,
   * halo). Writes a one-line reason and returns non-zero when it cannot run. */
  int (*check)(const void *args, char *why, size_t why_size);
  /* Grid points this call updates and the minimum bytes it moves per point,
   * for the GPts/s and effective GB/s figures of the timing report. */
  int64_t (*points)(const void *args);
  double bytes_per_point;
  /* Runs on the calling thread; parallel inside (OpenMP). */
  void (*run_cpu)(const void *args);
  /* Enqueues on a HIP stream (hipStream_t passed as void *); returns the
   * hipError_t of the launch as an int. NULL when gflow is built without GPU. */
  int (*launch_gpu)(const void *args, void *stream);
  /* Optional (NULL: no condition). Judges the argument struct as check()
   * sees it at load time (a scalar that changes per step reads 0) against
   * the scheme's stability condition; writes a one-line reason and returns
   * non-zero when the call is unstable. `gflow run` then refuses the
   * workflow unless --allow-unstable is given; `gflow validate` notes it. */
  int (*stable)(const void *args, char *why, size_t why_size);
  /* ABI 4. What `gflow kernels NAME` prints: the equation the kernel
   * computes (one or more lines), what it does at the grid's edges, and the
   * floating-point operations per point updated (for f32; the bytes per
   * point above are also f32's, twice that for f64 fields). NULL or 0: not
   * stated. */
  const char *equation;
  const char *boundary;
  double flops_per_point;
} gf_kernel;

typedef struct gf_registrar {
  void *ctx;
  /* Returns 0, or non-zero with a message on stderr (duplicate name, bad table). */
  int (*add_kernel)(void *ctx, const gf_kernel *kernel);
} gf_registrar;

/* What a plugin shared library exports under the symbol `gflow_plugin`. */
typedef struct gf_plugin {
  int abi; /* GF_ABI_VERSION the plugin was built against */
  const char *name;
  const char *version;
  int (*init)(const gf_registrar *registrar);
} gf_plugin;

#define GF_PLUGIN_SYMBOL "gflow_plugin"

/* 1 when a scalar parameter's table gives a range to check ([min, max]). */
static inline int gf_param_has_range(const gf_param *param) {
  return !(param->min == 0 && param->max == 0) && param->min <= param->max;
}

/* Element size of a dtype in bytes. */
static inline size_t gf_dtype_size(gf_dtype dtype) {
  return dtype == GF_F64 ? 8 : 4;
}

#ifdef __cplusplus
}
#endif
#endif
