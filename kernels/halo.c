/* halo.c - pack, unpack and boundary conditions on the CPU. */
#include "halo.h"

#include "builtin.h"

/* Rows of a box along the last axis are contiguous in the array: one memcpy
 * each. `to_buffer` 1: array -> buffer (pack), 0: buffer -> array (unpack). */
static void move_strips(const gf_halo_args *a, int to_buffer) {
  const size_t elem = gf_dtype_size(a->array.dtype);
  const int64_t *shape = a->array.shape;
  unsigned char *buffer = a->buffer, *data = a->array.data;
  for (int b = 0; b < GF_HALO_BOXES; b++) {
    const gf_box *box = &a->box[b];
    int64_t cells = gf_box_cells(box);
    if (cells == 0) continue;
    int64_t row = box->hi[2] - box->lo[2], rows = cells / row;
#pragma omp parallel for schedule(static) if (cells > 65536)
    for (int64_t r = 0; r < rows; r++) {
      int64_t index[GF_MAX_DIMS];
      int64_t at = gf_box_offset(box, r * row, shape, index);
      unsigned char *cell = data + (size_t)at * elem, *packed = buffer + (size_t)(r * row) * elem;
      if (to_buffer)
        memcpy(packed, cell, (size_t)row * elem);
      else
        memcpy(cell, packed, (size_t)row * elem);
    }
    buffer += (size_t)cells * elem;
  }
}

static void pack_run_cpu(const void *args) {
  move_strips(args, 1);
}

static void unpack_run_cpu(const void *args) {
  move_strips(args, 0);
}

static void boundary_run_cpu(const void *args) {
  const gf_boundary_args *a = args;
  const size_t elem = gf_dtype_size(a->array.dtype);
  const int64_t *shape = a->array.shape;
  unsigned char *data = a->array.data;
  for (int b = 0; b < GF_HALO_BOXES; b++) {
    const gf_box *box = &a->box[b];
    int64_t cells = gf_box_cells(box);
#pragma omp parallel for schedule(static) if (cells > 65536)
    for (int64_t k = 0; k < cells; k++) {
      int64_t index[GF_MAX_DIMS];
      int64_t at = gf_box_offset(box, k, shape, index);
      if (a->fixed) {
        if (a->array.dtype == GF_F64)
          ((double *)data)[at] = a->value;
        else
          ((float *)data)[at] = (float)a->value;
        continue;
      }
      index[a->axis] = a->from[b];
      int64_t from = (index[0] * shape[1] + index[1]) * shape[2] + index[2];
      gf_move_element(data + (size_t)at * elem, data + (size_t)from * elem, elem);
    }
  }
}

static const gf_param halo_params[] = {{NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL}};

const gf_kernel gf_kernel_halo_pack = {
    .name = "halo_pack",
    .help = "packs owned strips of a field into a buffer (ghost-cell exchange)",
    .params = halo_params,
    .args_size = sizeof(gf_halo_args),
    .run_cpu = pack_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_halo_pack_launch_gpu),
};

const gf_kernel gf_kernel_halo_unpack = {
    .name = "halo_unpack",
    .help = "unpacks a buffer into the ghost strips of a field (ghost-cell exchange)",
    .params = halo_params,
    .args_size = sizeof(gf_halo_args),
    .run_cpu = unpack_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_halo_unpack_launch_gpu),
};

const gf_kernel gf_kernel_halo_boundary = {
    .name = "halo_boundary",
    .help = "fills the halo at the grid's edges (grid.boundary)",
    .params = halo_params,
    .args_size = sizeof(gf_boundary_args),
    .run_cpu = boundary_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_halo_boundary_launch_gpu),
};
