/* sponge.c - an example kernel plugin with a GPU launcher: an absorbing
 * layer for a wavefield (sponge.h), f32, 1-D to 3-D. The parameter table,
 * checks and CPU loop are here; the GPU launcher is sponge.hip, compiled
 * by nvcc or hipcc when the plugin is built with SPONGE_GPU (CMake does so
 * when gflow is built with a GPU; `gflow-config --help` says how outside
 * the tree).
 *
 *   gflow run plugins/sponge.yaml --plugin build/plugins/gflow_sponge.so
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "sponge.h"

#ifdef SPONGE_GPU
int sponge_launch_gpu(const void *args, void *stream); /* sponge.hip */
#define SPONGE_LAUNCHER sponge_launch_gpu
#else
#define SPONGE_LAUNCHER NULL
#endif

static int sponge_check(const void *args, char *why, size_t why_size) {
  const sponge_args *a = args;
  for (int d = 0; d < a->U.ndim; d++)
    if (2 * (a->width + a->U.halo) > a->U.global_shape[d]) {
      snprintf(why, why_size, "a layer of %lld cells does not fit twice in axis %d of %lld cells",
               (long long)a->width, d, (long long)a->U.global_shape[d]);
      return 1;
    }
  return 0;
}

static int64_t sponge_points(const void *args) {
  const sponge_args *a = args;
  int64_t n = 1;
  for (int d = 0; d < GF_MAX_DIMS; d++) n *= a->box.hi[d] - a->box.lo[d];
  return n;
}

static void sponge_run_cpu(const void *args) {
  const sponge_args *a = args;
  float *u = a->U.data;
  const int64_t n1 = a->U.shape[1], n2 = a->U.shape[2];
  const gf_box b = a->box;
  /* Serial, as an example plugin (the README says when a plugin may use OpenMP). */
  for (int64_t i0 = b.lo[0]; i0 < b.hi[0]; i0++) {
    int64_t k0 = sponge_depth_of(&a->U, 0, i0, a->width);
    for (int64_t i1 = b.lo[1]; i1 < b.hi[1]; i1++) {
      int64_t k1 = sponge_depth_of(&a->U, 1, i1, a->width);
      for (int64_t i2 = b.lo[2]; i2 < b.hi[2]; i2++) {
        float f = sponge_factor(k0, k1, sponge_depth_of(&a->U, 2, i2, a->width), a->strength);
        u[(i0 * n1 + i1) * n2 + i2] *= f;
      }
    }
  }
}

static const gf_param sponge_params[] = {
    {"U", GF_PARAM_ARRAY, GF_ACCESS_READ_WRITE | GF_ACCESS_INTERIOR, 1u << GF_F32,
     offsetof(sponge_args, U), 1, 0, 0, 0, "wavefield, damped in place"},
    {"width", GF_PARAM_INT, GF_ACCESS_NONE, 0, offsetof(sponge_args, width), 0, 20, 1, 1e6,
     "cells of the layer at each edge"},
    {"strength", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(sponge_args, strength), 0, 0.015, 0, 1,
     "damping per cell of depth"},
    {"box", GF_PARAM_BOX, GF_ACCESS_NONE, 0, offsetof(sponge_args, box), 0, 0, 0, 0,
     "cells this launch updates"},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

static const gf_kernel sponge = {
    .name = "sponge",
    .help = "absorbing layer: damps a wavefield near the grid's edges (an example GPU plugin)",
    .params = sponge_params,
    .args_size = sizeof(sponge_args),
    .check = sponge_check,
    .points = sponge_points,
    .bytes_per_point = 8.0, /* read and write U */
    .run_cpu = sponge_run_cpu,
    .launch_gpu = SPONGE_LAUNCHER,
    .stable = NULL,
    .equation =
        "U *= exp(-(strength*k)^2), k the depth of the cell into the layer (0 outside):\n"
        "width - distance to the nearest edge of the interior, the deepest axis counts",
    .boundary = "damps the interior's outer `width` cells; the halo ring is never written",
    .flops_per_point = 4.0,
};

static int sponge_init(const gf_registrar *registrar) {
  return registrar->add_kernel(registrar->ctx, &sponge);
}

__attribute__((visibility("default"))) const gf_plugin gflow_plugin = {
    .abi = GF_ABI_VERSION, .name = "sponge", .version = "1.0", .init = sponge_init};
