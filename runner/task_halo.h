/* task_halo.h - the payload of the tasks gf_decompose generates to keep
 * ghost cells current (task_halo.c). Boxes are in the block's own indices;
 * index 0 is the low side along `axis`, 1 the high side. */
#ifndef GF_TASK_HALO_H
#define GF_TASK_HALO_H

#include "task.h"

typedef struct gf_halo_task {
  int field;
  int axis;
  /* exchange: the owned strip sent to, and the ghost strip filled from,
   * the rank across each side (peer -1: none; its boxes are empty) */
  int peer[2];
  gf_box send[2], recv[2];
  /* boundary: the ghost cells at the grid's edge on each side (empty where
   * the side is no edge), and the layer along `axis` a copy takes */
  gf_box ghost[2];
  int64_t from_index[2];
} gf_halo_task;

extern const gf_task_kind gf_task_exchange_kind, gf_task_boundary_kind;

/* `exchange.transport: channel` refused, at the key, when the run's ranks
 * are not all on one node or the backend (when given) has no channels. */
typedef struct gf_comm gf_comm;
typedef struct gf_backend gf_backend;
gf_status gf_halo_check_transport(const gf_workflow *wf, gf_comm *comm, const gf_backend *b,
                                  gf_diag *diag);

#endif
