/* halo.h - the kernels of the ghost-cell exchange and the boundary
 * conditions (runner/task_halo.c emits them): pack owned strips of a field
 * into a buffer, unpack a buffer into ghost strips, and fill the halo at
 * the grid's edges. One per-cell definition for the CPU loops (halo.c) and
 * the GPU kernels (halo.hip); they move values, never compute with them, so
 * every backend gives the same bits. Internal: not in `gflow kernels`.
 */
#ifndef GF_KERNEL_HALO_H
#define GF_KERNEL_HALO_H

#include <stdint.h>
#include <string.h>

#include "gf_math.h"
#include "gflow.h"

#define GF_HALO_BOXES 2 /* the strips of one exchange phase: one per side */

/* pack: the cells of box[0], then of box[1], in C order, into `buffer`;
 * unpack: the same order out of `buffer` into the boxes. */
typedef struct gf_halo_args {
  gf_array array;
  void *buffer;
  gf_box box[GF_HALO_BOXES]; /* empty boxes hold nothing */
} gf_halo_args;

/* The boundary condition along one axis: the ghost cells of box[side] take
 * the value of the cell `from[side]` along `axis` (the nearest owned layer),
 * or `value` when `fixed`. */
typedef struct gf_boundary_args {
  gf_array array;
  int axis;
  int fixed;
  double value;
  gf_box box[GF_HALO_BOXES];
  int64_t from[GF_HALO_BOXES];
} gf_boundary_args;

GF_HD int64_t gf_box_cells(const gf_box *b) {
  int64_t n = 1;
  for (int d = 0; d < GF_MAX_DIMS; d++) n *= b->hi[d] > b->lo[d] ? b->hi[d] - b->lo[d] : 0;
  return n;
}

/* The C-order offset in an array of `shape` of the k-th cell of box `b`;
 * `index` receives the cell. */
GF_HD int64_t gf_box_offset(const gf_box *b, int64_t k, const int64_t shape[GF_MAX_DIMS],
                            int64_t index[GF_MAX_DIMS]) {
  for (int d = GF_MAX_DIMS - 1; d >= 0; d--) {
    int64_t size = b->hi[d] - b->lo[d];
    index[d] = b->lo[d] + k % size;
    k /= size;
  }
  return (index[0] * shape[1] + index[1]) * shape[2] + index[2];
}

/* Moves one element of `size` bytes (4 or 8). */
GF_HD void gf_move_element(void *dst, const void *src, size_t size) {
  if (size == 8)
    *(uint64_t *)dst = *(const uint64_t *)src;
  else
    *(uint32_t *)dst = *(const uint32_t *)src;
}

#ifdef __cplusplus
extern "C" {
#endif
extern const gf_kernel gf_kernel_halo_pack, gf_kernel_halo_unpack, gf_kernel_halo_boundary;

/* GPU launchers (halo.hip). */
int gf_halo_pack_launch_gpu(const void *args, void *stream);
int gf_halo_unpack_launch_gpu(const void *args, void *stream);
int gf_halo_boundary_launch_gpu(const void *args, void *stream);
#ifdef __cplusplus
}
#endif

#endif
