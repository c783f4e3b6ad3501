/* task_halo.c - the tasks gf_decompose generates to keep a field's ghost
 * cells current after a kernel writes it, one task per axis and role:
 *
 *   exchange  the ghost cells along one axis from the neighbouring ranks:
 *             pack the owned strips next to each neighbour into a buffer
 *             (a kernel), wait for that on the host, post the MPI receives
 *             and sends, wait for them, unpack into the ghost strips;
 *   boundary  the halo at the grid's edges along one axis (grid.boundary):
 *             the nearest owned layer copied out, or a fixed value.
 *
 * The buffers are pinned host memory, or device memory when MPI is
 * GPU-aware, so no copy stands between a kernel and MPI. Neither kind is
 * written in a workflow file; their accesses are the strips they read and
 * write, so the planner orders them like any task.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "halo.h"
#include "program.h"
#include "task_halo.h"

enum { SEND, RECV }; /* the task's buffers */

/* The array argument a halo kernel works on. */
static gf_array field_array(const gf_workflow *wf, int f, void *data) {
  const gf_field *field = &wf->fields[f];
  gf_array array = {.data = data, .dtype = field->dtype, .ndim = field->ndim, .halo = wf->halo};
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    array.shape[d] = field->shape[d];
    array.origin[d] = wf->decomp.origin[d];
    array.global_shape[d] = d < wf->ndim ? wf->shape[d] : 1;
  }
  return array;
}

static int64_t cells_of(const gf_box *b) {
  return gf_box_cells(b);
}

/* The pack's or the unpack's arguments: the field, the task's send (pack)
 * or receive (unpack) buffer, and the strips in buffer order. */
static void bind_strips(const gf_workflow *wf, const gf_task *task, void *const *data,
                        void *const *buffers, int unpack, void *args, int *nparams) {
  const gf_halo_task *h = task->data;
  gf_halo_args *a = args;
  memset(a, 0, sizeof *a);
  a->array = field_array(wf, h->field, data ? data[0] : NULL);
  a->buffer = buffers ? buffers[unpack ? RECV : SEND] : NULL;
  memcpy(a->box, unpack ? h->recv : h->send, sizeof a->box);
  *nparams = 0;
}

static gf_status bind_pack(const gf_workflow *wf, const gf_task *task, const gf_box *box,
                           void *const *data, void *const *buffers, void *args,
                           gf_instr_param *params, int *nparams) {
  (void)box, (void)params;
  bind_strips(wf, task, data, buffers, 0, args, nparams);
  return GF_OK;
}

static gf_status bind_unpack(const gf_workflow *wf, const gf_task *task, const gf_box *box,
                             void *const *data, void *const *buffers, void *args,
                             gf_instr_param *params, int *nparams) {
  (void)box, (void)params;
  bind_strips(wf, task, data, buffers, 1, args, nparams);
  return GF_OK;
}

static gf_status bind_boundary(const gf_workflow *wf, const gf_task *task, const gf_box *box,
                               void *const *data, void *const *buffers, void *args,
                               gf_instr_param *params, int *nparams) {
  (void)box, (void)buffers, (void)params;
  const gf_halo_task *h = task->data;
  gf_boundary_args *a = args;
  memset(a, 0, sizeof *a);
  a->array = field_array(wf, h->field, data ? data[0] : NULL);
  a->axis = h->axis;
  a->fixed = wf->boundary.kind == GF_BOUNDARY_FIXED;
  a->value = wf->boundary.value;
  memcpy(a->box, h->ghost, sizeof a->box);
  memcpy(a->from, h->from_index, sizeof a->from);
  *nparams = 0;
  return GF_OK;
}

/* The messages of one exchange: a strip to and from each neighbour. A
 * message is tagged with the side it arrives on, so the two strips that go
 * to one rank (a periodic axis of two ranks, or of one) cannot be mixed up. */
static int messages(const gf_halo_task *h, size_t elem, void *send, void *recv,
                    gf_comm_message *sends, gf_comm_message *recvs) {
  int n = 0;
  size_t send_at = 0, recv_at = 0;
  for (int side = 0; side < 2; side++) {
    if (h->peer[side] < 0) continue;
    size_t send_bytes = (size_t)cells_of(&h->send[side]) * elem;
    size_t recv_bytes = (size_t)cells_of(&h->recv[side]) * elem;
    int axis_tag = 2 * h->axis;
    sends[n] = (gf_comm_message){h->peer[side], axis_tag + 1 - side,
                                 (unsigned char *)send + send_at, send_bytes};
    recvs[n] = (gf_comm_message){h->peer[side], axis_tag + side, (unsigned char *)recv + recv_at,
                                 recv_bytes};
    send_at += send_bytes;
    recv_at += recv_bytes;
    n++;
  }
  return n;
}

static gf_status post(gf_host_ctx *ctx, const gf_workflow *wf, int task, int64_t n,
                      const void *data) {
  const gf_halo_task *h = data;
  gf_comm_message sends[2], recvs[2];
  int count =
      messages(h, gf_dtype_size(wf->fields[h->field].dtype), gf_host_buffer(ctx, task, SEND),
               gf_host_buffer(ctx, task, RECV), sends, recvs);
  char why[256];
  if (gf_comm_post(gf_host_comm(ctx), gf_host_batch(ctx), recvs, count, sends, count, why,
                   sizeof why) != GF_OK)
    return gf_host_fail(ctx, task, n, why);
  return GF_OK;
}

static gf_status wait(gf_host_ctx *ctx, const gf_workflow *wf, int task, int64_t n,
                      const void *data) {
  (void)wf, (void)data;
  char why[256];
  if (gf_comm_wait(gf_host_comm(ctx), gf_host_batch(ctx), why, sizeof why) != GF_OK)
    return gf_host_fail(ctx, task, n, why);
  return GF_OK;
}

static gf_status emit_exchange(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                               const gf_task_instance *instance) {
  const gf_halo_task *h = task->data;
  if (h->peer[0] < 0 && h->peer[1] < 0) return GF_OK;
  size_t elem = gf_dtype_size(wf->fields[h->field].dtype), send = 0, recv = 0;
  for (int side = 0; side < 2; side++) {
    send += (size_t)cells_of(&h->send[side]) * elem;
    recv += (size_t)cells_of(&h->recv[side]) * elem;
  }
  gf_space space = wf->decomp.gpu_aware ? GF_SPACE_DEVICE : GF_SPACE_PINNED;
  gf_emit_buffer(e, SEND, send, space);
  gf_emit_buffer(e, RECV, recv, space);
  gf_instr *pack = gf_emit(e, GF_I_LAUNCH);
  memcpy(pack->inst, instance->inst, sizeof pack->inst);
  pack->kernel = &gf_kernel_halo_pack;
  pack->bind = bind_pack;
  gf_emit(e, GF_I_HOST_SYNC)->other = instance->stream; /* the strips are packed */
  gf_instr *start = gf_emit(e, GF_I_HOST_CALL);
  start->call = post;
  start->call_data = h;
  gf_instr *end = gf_emit(e, GF_I_HOST_CALL);
  end->call = wait;
  end->call_data = h;
  gf_instr *unpack = gf_emit(e, GF_I_LAUNCH);
  memcpy(unpack->inst, instance->inst, sizeof unpack->inst);
  unpack->kernel = &gf_kernel_halo_unpack;
  unpack->bind = bind_unpack;
  return GF_OK;
}

static gf_status emit_boundary(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                               const gf_task_instance *instance) {
  (void)wf;
  const gf_halo_task *h = task->data;
  if (cells_of(&h->ghost[0]) + cells_of(&h->ghost[1]) == 0) return GF_OK;
  gf_instr *launch = gf_emit(e, GF_I_LAUNCH);
  memcpy(launch->inst, instance->inst, sizeof launch->inst);
  launch->kernel = &gf_kernel_halo_boundary;
  launch->bind = bind_boundary;
  return GF_OK;
}

static const char *describe(const gf_workflow *wf, const gf_task *task) {
  return wf->fields[((const gf_halo_task *)task->data)->field].name;
}

const gf_task_kind gf_task_exchange_kind = {
    .name = "exchange",
    .traits = GF_KIND_HALO,
    .describe = describe,
    .emit = emit_exchange,
    .free = free,
};

const gf_task_kind gf_task_boundary_kind = {
    .name = "boundary",
    .traits = GF_KIND_HALO,
    .describe = describe,
    .emit = emit_boundary,
    .free = free,
};
