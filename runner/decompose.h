/* decompose.h - a loaded workflow made into one rank's share of it.
 *
 * gf_decompose runs after the loader and before the planner, on every run
 * (one process is a decomposition of one rank). It splits the grid's
 * interior over the ranks as the GhostExchange seed does (`decomposition:`
 * or a balanced `auto`), gives every grid-shaped field this rank's block
 * (the cells it owns and `halo` ghost cells on each side), and adds the
 * tasks that keep ghost cells current (task_halo.c): after each kernel task
 * that writes a field some kernel reads, per axis from the last (fastest)
 * to the first, the exchange with the neighbours across that axis and the
 * boundary condition at the grid's edges, each spanning the axes done
 * before it so corners arrive too. Under a schedule that infers order
 * (auto), with `exchange.overlap`, a kernel task with a box that reads such
 * a field is split into its edge strips (`NAME.edges`, first) and the
 * interior (NAME), so the interior runs while the ghost cells travel.
 *
 * Everything later (planner, program, executor, writer) sees a plain
 * workflow whose fields have the block's shape; wf->decomp says where the
 * block lies.
 */
#ifndef GF_DECOMPOSE_H
#define GF_DECOMPOSE_H

#include "error.h"
#include "workflow.h"

/* Makes `wf` rank `rank`'s of `ranks`. A decomposition that does not match
 * the rank count, or leaves a rank fewer cells than the halo along an axis,
 * is reported at `decomposition:` (GF_INVALID). */
gf_status gf_decompose(gf_workflow *wf, int ranks, int rank, int gpu_aware, gf_diag *diag);

#endif
