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
 * GPU-aware, so no copy stands between a kernel and MPI. With
 * `exchange.transport: channel` the strips travel through channels of the
 * backend instead (backend.h; ranks on one node), stream-ordered with no
 * host wait: pack, put into the neighbour's inbox and signal, wait for the
 * neighbour's signal, copy the inbox out and signal it may be reused,
 * unpack; or, as exchange.protocol chooses (by default for strips of up to
 * PACKETS_MAX bytes), as packets: data and flags together, taken straight
 * into the receive buffer, one kernel a side and none of the signals.
 * Neither kind is
 * written in a workflow file; their accesses are the strips they read and
 * write, so the planner orders them like any task.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
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

/* ---- the exchange over channels ---- */

/* A channel's slots: DATA counts the strips the neighbour put into this
 * end's inbox, READY the times it emptied the inbox this end puts into. */
enum { DATA, READY };

/* Under exchange.protocol auto, strips up to this size travel as packets:
 * there one kernel a side beats the put with signal, the waits and the
 * inbox's copy (channel.sh's table). */
#define PACKETS_MAX ((size_t)1 << 20)

/* An exchange task's channels, one per side with a neighbour: side s's end
 * is the inbox for recv[s]; its peer is the neighbour's end for the other
 * side, into which send[s] goes. `uses` counts the exchanges: the value of
 * each signal. `packets`: the strips go as packets (strips_go_as_packets). */
typedef struct halo_channels {
  const gf_halo_task *h;
  gf_channel *ch[2];
  uint64_t uses;
  int packets;
} halo_channels;

/* A side's strip sizes in bytes. */
static size_t strip_bytes(const gf_workflow *wf, const gf_halo_task *h, int side, int recv) {
  return (size_t)cells_of(recv ? &h->recv[side] : &h->send[side]) *
         gf_dtype_size(wf->fields[h->field].dtype);
}

/* Whether the task's strips go as packets: as exchange.protocol says; under
 * auto, when every side's strip, both ways, is small. A neighbour's task
 * for the same axis has the same strips (its send is this task's receive),
 * so it decides alike. */
static int strips_go_as_packets(const gf_workflow *wf, const gf_halo_task *h) {
  if (wf->decomp.protocol != GF_PROTOCOL_AUTO) return wf->decomp.protocol == GF_PROTOCOL_PACKETS;
  for (int side = 0; side < 2; side++)
    if (h->peer[side] >= 0 &&
        (strip_bytes(wf, h, side, 0) > PACKETS_MAX || strip_bytes(wf, h, side, 1) > PACKETS_MAX))
      return 0;
  return 1;
}

/* Sends `mine[side]` to the neighbour across each side and receives its
 * handle for the other side into `theirs[side]`, tagged as the strips are
 * (messages()), so two sides with one neighbour are not mixed up. */
static gf_status swap(gf_host_ctx *ctx, const gf_halo_task *h, void *mine, void *theirs,
                      size_t bytes, char *why, size_t why_size) {
  gf_comm_message sends[2], recvs[2];
  int count = 0;
  for (int side = 0; side < 2; side++) {
    if (h->peer[side] < 0) continue;
    int axis_tag = 2 * h->axis;
    sends[count] = (gf_comm_message){h->peer[side], axis_tag + 1 - side,
                                     (unsigned char *)mine + side * bytes, bytes};
    recvs[count] = (gf_comm_message){h->peer[side], axis_tag + side,
                                     (unsigned char *)theirs + side * bytes, bytes};
    count++;
  }
  gf_status st = gf_comm_post(gf_host_comm(ctx), gf_host_batch(ctx), recvs, count, sends, count,
                              why, why_size);
  return st == GF_OK ? gf_comm_wait(gf_host_comm(ctx), gf_host_batch(ctx), why, why_size) : st;
}

static void channels_free(halo_channels *hc) {
  for (int side = 0; side < 2; side++) gf_channel_free(hc->ch[side]);
  free(hc);
}

/* After the loop: each end's neighbour may still be signalling into it
 * until the neighbour's streams are idle too, so the ends are freed once
 * every neighbour has said so (a byte each way). */
static void channels_release(gf_host_ctx *ctx, int task, void *state) {
  (void)task;
  halo_channels *hc = state;
  char mine[2] = {1, 1}, theirs[2], why[256];
  if (swap(ctx, hc->h, mine, theirs, 1, why, sizeof why) != GF_OK)
    fprintf(stderr, "gflow: closing the ghost-cell channels: %s\n", why);
  channels_free(state);
}

/* The first exchange of a task: registers an inbox per side, swaps handles
 * with the neighbours, opens theirs. */
static gf_status channels_open(gf_host_ctx *ctx, const gf_workflow *wf, int task, int64_t n,
                               const gf_halo_task *h, halo_channels **out) {
  gf_backend *b = gf_host_backend(ctx);
  halo_channels *hc = gf_calloc(1, sizeof *hc);
  gf_channel_handle mine[2], theirs[2];
  memset(mine, 0, sizeof mine);
  if (!hc) return gf_host_fail(ctx, task, n, "out of memory: opening the ghost-cell channels");
  hc->h = h;
  hc->packets = strips_go_as_packets(wf, h);
  for (int side = 0; side < 2; side++) {
    if (h->peer[side] < 0) continue;
    size_t bytes = strip_bytes(wf, h, side, 1);
    if (gf_channel_create(b, bytes, hc->packets ? bytes : 0, &hc->ch[side], &mine[side]) != GF_OK) {
      channels_free(hc);
      return gf_host_fail(ctx, task, n, b->error);
    }
  }
  char why[256];
  if (swap(ctx, h, mine, theirs, sizeof mine[0], why, sizeof why) != GF_OK) {
    channels_free(hc);
    return gf_host_fail(ctx, task, n, why);
  }
  for (int side = 0; side < 2; side++) {
    if (h->peer[side] < 0) continue;
    size_t send = strip_bytes(wf, h, side, 0);
    gf_status st = gf_channel_connect(hc->ch[side], &theirs[side]);
    if (st == GF_OK && gf_channel_peer_bytes(hc->ch[side]) != send)
      snprintf(b->error, sizeof b->error,
               "rank %d's inbox holds %zu bytes, the strip sent to it %zu (internal)",
               h->peer[side], gf_channel_peer_bytes(hc->ch[side]), send),
          st = GF_INTERNAL;
    if (st != GF_OK) {
      channels_free(hc);
      return gf_host_fail(ctx, task, n, b->error);
    }
  }
  if (gf_host_set_state(ctx, task, hc, channels_release) != GF_OK) {
    channels_free(hc);
    return GF_INTERNAL;
  }
  *out = hc;
  return GF_OK;
}

/* Before the loop's clock: the channels, so that their registration and
 * handshake are not the first exchange's time. */
static gf_status channels_prepare(gf_host_ctx *ctx, const gf_workflow *wf, int task, int64_t n,
                                  const void *data) {
  halo_channels *hc = gf_host_state(ctx, task);
  return hc ? GF_OK : channels_open(ctx, wf, task, n, data, &hc);
}

/* The exchange as packets: with one neighbour an exchange (a put and a
 * take in one kernel); with two, side 0's put, side 1's exchange, side 0's
 * take. So every put comes before any take, no rank's take waits for a
 * neighbour's that waits in turn, and each end's puts and takes alternate
 * on the task's stream across exchanges (backend.h). A side with no
 * neighbour has empty strips, so side 1's start at side 0's sizes. */
static gf_status packets_exchange(const gf_workflow *wf, const gf_halo_task *h, halo_channels *hc,
                                  gf_stream *s, gf_tag tag, unsigned char *send,
                                  unsigned char *recv) {
  gf_channel *low = hc->ch[0], *high = hc->ch[1];
  const size_t send0 = strip_bytes(wf, h, 0, 0), recv0 = strip_bytes(wf, h, 0, 1);
  if (!high)
    return low ? gf_channel_exchange_packets(low, s, send, send0, recv, recv0, tag) : GF_OK;
  gf_status st = low ? gf_channel_put_packets(low, s, send, send0, tag) : GF_OK;
  if (st == GF_OK)
    st = gf_channel_exchange_packets(high, s, send + send0, strip_bytes(wf, h, 1, 0), recv + recv0,
                                     strip_bytes(wf, h, 1, 1), tag);
  if (st == GF_OK && low) st = gf_channel_take_packets(low, s, recv, recv0, tag);
  return st;
}

/* Issues the exchange on the task's stream, after its pack and before its
 * unpack: every put and signal before any wait for the neighbours', so no
 * two ranks wait for each other. */
static gf_status channel_exchange(gf_host_ctx *ctx, const gf_workflow *wf, int task, int64_t n,
                                  const void *data) {
  const gf_halo_task *h = data;
  halo_channels *hc = gf_host_state(ctx, task);
  if (!hc && channels_open(ctx, wf, task, n, h, &hc) != GF_OK) return GF_INTERNAL;
  gf_backend *b = gf_host_backend(ctx);
  int stream = -1;
  gf_stream *s = gf_host_stream(ctx, &stream);
  gf_tag tag = {task, n, stream};
  unsigned char *send = gf_host_buffer(ctx, task, SEND), *recv = gf_host_buffer(ctx, task, RECV);
  if (hc->packets) {
    gf_status st = packets_exchange(wf, h, hc, s, tag, send, recv);
    return st == GF_OK ? GF_OK : gf_host_fail(ctx, task, n, b->error);
  }
  const size_t send_at[2] = {0, strip_bytes(wf, h, 0, 0)},
               recv_at[2] = {0, strip_bytes(wf, h, 0, 1)};
  uint64_t use = ++hc->uses;
  gf_status st = GF_OK;
  /* The neighbour has copied out what this end put last time. */
  for (int side = 0; side < 2 && st == GF_OK && use > 1; side++)
    if (hc->ch[side]) st = gf_channel_wait(hc->ch[side], s, READY, use - 1, tag);
  for (int side = 0; side < 2 && st == GF_OK; side++) {
    if (!hc->ch[side]) continue;
    st = gf_channel_put_signal(hc->ch[side], s, 0, send + send_at[side],
                               strip_bytes(wf, h, side, 0), DATA, use, tag);
  }
  for (int side = 0; side < 2 && st == GF_OK; side++) {
    if (!hc->ch[side]) continue;
    st = gf_channel_wait(hc->ch[side], s, DATA, use, tag);
    if (st == GF_OK)
      st = b->ops->copy_async(b, s, recv + recv_at[side], gf_channel_inbox(hc->ch[side]),
                              strip_bytes(wf, h, side, 1), tag);
    if (st == GF_OK) st = gf_channel_signal(hc->ch[side], s, READY, use, tag);
  }
  return st == GF_OK ? GF_OK : gf_host_fail(ctx, task, n, b->error);
}

gf_status gf_halo_check_transport(const gf_workflow *wf, gf_comm *comm, const gf_backend *b,
                                  gf_diag *diag) {
  if (wf->decomp.transport != GF_TRANSPORT_CHANNEL) return GF_OK;
  int ranks = gf_comm_size(comm), here = gf_comm_node_size(comm);
  if (here < ranks)
    return gf_diag_at(diag, wf->decomp.transport_loc, GF_INVALID,
                      "exchange.transport channel needs every rank on one node (a channel is "
                      "memory two processes of one machine share); %d of this run's %d ranks "
                      "are on this node: use transport: mpi",
                      here, ranks);
  if (b && !b->ops->channel_register)
    return gf_diag_at(diag, wf->decomp.transport_loc, GF_INVALID,
                      "exchange.transport channel: the %s backend has no channels (registered "
                      "memory); use transport: mpi",
                      b->name);
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
  int channel = wf->decomp.transport == GF_TRANSPORT_CHANNEL;
  gf_space space = wf->decomp.gpu_aware || channel ? GF_SPACE_DEVICE : GF_SPACE_PINNED;
  gf_emit_buffer(e, SEND, send, space);
  gf_emit_buffer(e, RECV, recv, space);
  gf_instr *pack = gf_emit(e, GF_I_LAUNCH);
  memcpy(pack->inst, instance->inst, sizeof pack->inst);
  pack->kernel = &gf_kernel_halo_pack;
  pack->bind = bind_pack;
  if (channel) { /* stream-ordered: no host wait */
    gf_instr *call = gf_emit(e, GF_I_HOST_CALL);
    call->call = channel_exchange;
    call->call_data = h;
    call->prepare = channels_prepare;
  } else {
    gf_emit(e, GF_I_HOST_SYNC)->other = instance->stream; /* the strips are packed */
    gf_instr *start = gf_emit(e, GF_I_HOST_CALL);
    start->call = post;
    start->call_data = h;
    gf_instr *end = gf_emit(e, GF_I_HOST_CALL);
    end->call = wait;
    end->call_data = h;
  }
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
