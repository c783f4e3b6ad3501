/* heat2d.c - an example kernel plugin: explicit 2-D diffusion,
 *   T1 = T0 + alpha * dt * (d2T0/dx0^2 + d2T0/dx1^2)
 * on interior cells, in f32 or f64. It includes only gflow.h, declares its
 * parameters once as a table, and registers through the gf_registrar its init
 * is handed, exactly as gflow's built-in kernels do.
 *
 *   gflow run workflow.yaml --plugin build/plugins/gflow_heat2d.so
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "gflow.h"

typedef struct heat2d_args {
  gf_array T0; /* temperature now (read) */
  gf_array T1; /* temperature after one step (written) */
  double alpha;
  double dt;
} heat2d_args;

static int heat2d_check(const void *args, char *why, size_t why_size) {
  const heat2d_args *a = args;
  if (a->T0.ndim != 2 || a->T1.ndim != 2 || a->T0.dtype != a->T1.dtype ||
      a->T0.shape[0] != a->T1.shape[0] || a->T0.shape[1] != a->T1.shape[1]) {
    snprintf(why, why_size, "heat2d needs two 2-D fields of the same shape and dtype");
    return 1;
  }
  if (a->T0.halo < 1) {
    snprintf(why, why_size,
             "heat2d reads 1 cell beyond each cell it updates: grid.halo must be >= 1");
    return 1;
  }
  return 0;
}

/* The explicit scheme damps every mode while r0 + r1 <= 1/2, with
 * r = alpha*dt/dx^2 along each axis (the checkerboard mode is the first to
 * grow). A per-step alpha or dt reads 0 here: nothing is judged. */
static int heat2d_stable(const void *args, char *why, size_t why_size) {
  const heat2d_args *a = args;
  double r =
      a->alpha * a->dt *
      (1.0 / (a->T0.spacing[0] * a->T0.spacing[0]) + 1.0 / (a->T0.spacing[1] * a->T0.spacing[1]));
  if (r <= 0.5) return 0;
  snprintf(
      why, why_size,
      "alpha*dt*(1/dx0^2 + 1/dx1^2) is %.4g, above 1/2, the stability limit of explicit diffusion",
      r);
  return 1;
}

static int64_t heat2d_points(const void *args) {
  const heat2d_args *a = args;
  int64_t h = a->T0.halo;
  return (a->T0.shape[0] - 2 * h) * (a->T0.shape[1] - 2 * h);
}

#define HEAT2D_LOOP(type)                                             \
  do {                                                                \
    const type *t0 = a->T0.data;                                      \
    type *t1 = a->T1.data;                                            \
    for (int64_t i = h; i < n0 - h; i++) {                            \
      for (int64_t j = h; j < n1 - h; j++) {                          \
        int64_t o = i * n1 + j;                                       \
        type lap = (t0[o - n1] - 2 * t0[o] + t0[o + n1]) * (type)r0 + \
                   (t0[o - 1] - 2 * t0[o] + t0[o + 1]) * (type)r1;    \
        t1[o] = t0[o] + lap;                                          \
      }                                                               \
    }                                                                 \
  } while (0)

static void heat2d_run_cpu(const void *args) {
  const heat2d_args *a = args;
  const int64_t n0 = a->T0.shape[0], n1 = a->T0.shape[1], h = a->T0.halo;
  const double r0 = a->alpha * a->dt / (a->T0.spacing[0] * a->T0.spacing[0]);
  const double r1 = a->alpha * a->dt / (a->T0.spacing[1] * a->T0.spacing[1]);
  if (a->T0.dtype == GF_F64)
    HEAT2D_LOOP(double);
  else
    HEAT2D_LOOP(float);
}

static const gf_param heat2d_params[] = {
    {"T0", GF_PARAM_ARRAY, GF_ACCESS_READ, (1u << GF_F32) | (1u << GF_F64),
     offsetof(heat2d_args, T0), 1, 0, 0, 0, "temperature now"},
    {"T1", GF_PARAM_ARRAY, GF_ACCESS_WRITE, (1u << GF_F32) | (1u << GF_F64),
     offsetof(heat2d_args, T1), 1, 0, 0, 0, "temperature after the step"},
    {"alpha", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(heat2d_args, alpha), 0, 1.0, 0, INFINITY,
     "diffusivity"},
    {"dt", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(heat2d_args, dt), 1, 0, 0, INFINITY,
     "time step (stable while alpha*dt*(1/dx0^2 + 1/dx1^2) <= 1/2)"},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

static const gf_kernel heat2d = {
    .name = "heat2d",
    .help = "explicit 2-D diffusion, 2nd order in space (an example plugin)",
    .params = heat2d_params,
    .args_size = sizeof(heat2d_args),
    .check = heat2d_check,
    .points = heat2d_points,
    .bytes_per_point = 8.0, /* f32: read T0, write T1 */
    .run_cpu = heat2d_run_cpu,
    .launch_gpu = NULL, /* CPU only: on a GPU backend gflow says so */
    .stable = heat2d_stable,
    .equation =
        "T1 = T0 + alpha*dt*((T0[i-1,j] - 2 T0 + T0[i+1,j])/dx0^2 + "
        "(T0[i,j-1] - 2 T0 + T0[i,j+1])/dx1^2)",
    .boundary =
        "updates the cells at least grid.halo from every edge (grid.halo >= 1); the "
        "halo ring is never written",
    .flops_per_point = 12.0,
};

static int heat2d_init(const gf_registrar *registrar) {
  return registrar->add_kernel(registrar->ctx, &heat2d);
}

#ifndef HEAT2D_ABI
#define HEAT2D_ABI GF_ABI_VERSION
#endif

__attribute__((visibility("default"))) const gf_plugin gflow_plugin = {
    .abi = HEAT2D_ABI, .name = "heat2d", .version = "1.0", .init = heat2d_init};
