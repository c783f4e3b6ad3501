/* blur.c - blur: parameter table, check and the CPU loop. */
#include "blur.h"

#include <stddef.h>
#include <stdio.h>

#include "builtin.h"

static int blur_check(const void *args, char *why, size_t why_size) {
  const gf_blur_args *a = args;
  if (a->x.ndim != 2 || a->xnew.ndim != 2) {
    snprintf(why, why_size, "blur needs 2-D fields, x is %d-D", a->x.ndim);
    return 1;
  }
  if (a->x.shape[0] != a->xnew.shape[0] || a->x.shape[1] != a->xnew.shape[1]) {
    snprintf(why, why_size, "x has shape [%lld, %lld], xnew has [%lld, %lld]",
             (long long)a->x.shape[0], (long long)a->x.shape[1], (long long)a->xnew.shape[0],
             (long long)a->xnew.shape[1]);
    return 1;
  }
  if (a->x.halo < 1) {
    snprintf(why, why_size,
             "blur reads 1 cell beyond each cell it updates: grid.halo must be >= 1");
    return 1;
  }
  return 0;
}

static int64_t blur_points(const void *args) {
  const gf_blur_args *a = args;
  return (a->box.hi[0] - a->box.lo[0]) * (a->box.hi[1] - a->box.lo[1]);
}

static void blur_run_cpu(const void *args) {
  const gf_blur_args *a = args;
  const double *x = a->x.data;
  double *xnew = a->xnew.data;
  const int64_t N1 = a->x.shape[1];
  const gf_box box = a->box;
#pragma omp parallel for schedule(static)
  for (int64_t j = box.lo[0]; j < box.hi[0]; j++)
    for (int64_t i = box.lo[1]; i < box.hi[1]; i++)
      xnew[j * N1 + i] = gf_blur_cell(x, j * N1 + i, N1);
}

static const gf_param blur_params[] = {
    {"x", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F64, offsetof(gf_blur_args, x), 1, 0, 0, 0,
     "the field blurred (its neighbours in the halo are read)"},
    {"xnew", GF_PARAM_ARRAY, GF_ACCESS_WRITE | GF_ACCESS_INTERIOR, 1u << GF_F64,
     offsetof(gf_blur_args, xnew), 1, 0, 0, 0, "the blurred field (the halo is not written)"},
    {"box", GF_PARAM_BOX, GF_ACCESS_NONE, 0, offsetof(gf_blur_args, box), 0, 0, 0, 0,
     "cells this launch updates"},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

const gf_kernel gf_kernel_blur = {
    .name = "blur",
    .help = "5-point blur, the mean of a cell and its 4 neighbours (the GhostExchange seed's, f64)",
    .params = blur_params,
    .args_size = sizeof(gf_blur_args),
    .check = blur_check,
    .points = blur_points,
    .bytes_per_point = 16.0, /* read x, write xnew: 2 doubles */
    .run_cpu = blur_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_blur_launch_gpu),
};
