/* channel.c - a channel between two streams over registered memory
 * (backend.h, rules 13 and 14), on any backend that registers memory.
 *
 * An end's region: `bytes` of data (its inbox), rounded up to 64, then
 * GF_CHANNEL_SLOTS slots of 64 bytes each (a slot's 8-byte value alone on
 * its cache line), then as many lines of arrivals, the count a put with
 * signal on that slot keeps of its GPU blocks (this end's own, never the
 * peer's), then a line of packet counts and the packet area: two halves,
 * each of a packet (16 bytes) per 8 bytes of the largest message taken as
 * packets. Put and get are the backend's copies to and from the peer's
 * region; signal and wait launch the one-thread kernels of
 * kernels/channel.h on the peer's slot and on one's own; a put with signal
 * (and wait) the kernel that copies and then signals (and waits); puts and
 * takes of packets the packets kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "channel.h"

#define SLOT_STRIDE 64

struct gf_channel {
  gf_backend *b;
  size_t bytes, region;     /* inbox bytes; the whole region with its slots */
  size_t packet_bytes;      /* the largest message this end takes as packets */
  void *local;              /* this end's region */
  gf_channel_handle handle; /* this end's */
  gf_channel_handle peer;   /* the peer's, once connected */
  void *remote;             /* the peer's region, once connected */
  size_t peer_bytes;        /* the peer's inbox */
  size_t peer_packet_bytes; /* the largest message the peer takes as packets */
};

static size_t data_of(size_t bytes) {
  return (bytes + SLOT_STRIDE - 1) / SLOT_STRIDE * SLOT_STRIDE;
}

/* Packets in each half of an area for messages of up to `packet_bytes`. */
static size_t half_of(size_t packet_bytes) {
  return (packet_bytes + 7) / 8;
}

static size_t packets_at(size_t bytes) {
  return data_of(bytes) + 2 * GF_CHANNEL_SLOTS * SLOT_STRIDE;
}

static size_t region_of(size_t bytes, size_t packet_bytes) {
  return packets_at(bytes) + SLOT_STRIDE + 2 * half_of(packet_bytes) * sizeof(gf_channel_packet);
}

static gf_channel_packet_counts *counts_at(void *region, size_t bytes) {
  return (gf_channel_packet_counts *)((unsigned char *)region + packets_at(bytes));
}

static gf_channel_packet *area_at(void *region, size_t bytes) {
  return (gf_channel_packet *)((unsigned char *)region + packets_at(bytes) + SLOT_STRIDE);
}

static uint64_t *slot_at(void *region, size_t bytes, int slot) {
  return (uint64_t *)((unsigned char *)region + data_of(bytes) + (size_t)slot * SLOT_STRIDE);
}

static uint32_t *arrivals_at(void *region, size_t bytes, int slot) {
  return (uint32_t *)((unsigned char *)region + data_of(bytes) +
                      (size_t)(GF_CHANNEL_SLOTS + slot) * SLOT_STRIDE);
}

static gf_status channel_fail(gf_backend *b, const char *what) {
  snprintf(b->error, sizeof b->error, "%s", what);
  return GF_INTERNAL;
}

gf_status gf_channel_create(gf_backend *b, size_t bytes, size_t packet_bytes, gf_channel **out,
                            gf_channel_handle *handle) {
  *out = NULL;
  if (!b->ops->channel_register)
    return channel_fail(b, "this backend has no registered memory for channels");
  gf_channel *ch = gf_calloc(1, sizeof *ch);
  if (!ch) return channel_fail(b, "out of memory: creating a channel");
  ch->b = b;
  ch->bytes = bytes;
  ch->packet_bytes = packet_bytes;
  ch->region = region_of(bytes, packet_bytes);
  gf_status st = b->ops->channel_register(b, ch->region, &ch->local, &ch->handle);
  if (st != GF_OK) {
    free(ch);
    return st;
  }
  /* What the peer gets: the inbox's size and the largest packet message,
   * then the backend's handle (GF_CHANNEL_BACKEND_HANDLE_BYTES of it). */
  memset(handle, 0, sizeof *handle);
  uint64_t sizes[2] = {bytes, packet_bytes};
  memcpy(handle->bytes, sizes, sizeof sizes);
  memcpy(handle->bytes + sizeof sizes, ch->handle.bytes, GF_CHANNEL_BACKEND_HANDLE_BYTES);
  *out = ch;
  return GF_OK;
}

gf_status gf_channel_connect(gf_channel *ch, const gf_channel_handle *peer) {
  gf_backend *b = ch->b;
  if (ch->remote) return channel_fail(b, "internal: the channel is connected already");
  uint64_t sizes[2];
  memcpy(sizes, peer->bytes, sizeof sizes);
  memset(&ch->peer, 0, sizeof ch->peer);
  memcpy(ch->peer.bytes, peer->bytes + sizeof sizes, GF_CHANNEL_BACKEND_HANDLE_BYTES);
  gf_status st = b->ops->channel_open(b, &ch->peer, &ch->remote);
  if (st != GF_OK) return st;
  ch->peer_bytes = (size_t)sizes[0];
  ch->peer_packet_bytes = (size_t)sizes[1];
  return GF_OK;
}

void *gf_channel_inbox(const gf_channel *ch) {
  return ch->local;
}

size_t gf_channel_peer_bytes(const gf_channel *ch) {
  return ch->peer_bytes;
}

static gf_status check_region(gf_channel *ch, size_t offset, size_t bytes, const char *op) {
  if (!ch->remote) {
    snprintf(ch->b->error, sizeof ch->b->error, "channel %s before the channel is connected", op);
    return GF_INTERNAL;
  }
  if (offset > ch->peer_bytes || bytes > ch->peer_bytes - offset) {
    snprintf(ch->b->error, sizeof ch->b->error,
             "channel %s of %zu bytes at offset %zu: the peer's region holds %zu", op, bytes,
             offset, ch->peer_bytes);
    return GF_INTERNAL;
  }
  return GF_OK;
}

gf_status gf_channel_put(gf_channel *ch, gf_stream *s, size_t offset, const void *src, size_t bytes,
                         gf_tag tag) {
  gf_status st = check_region(ch, offset, bytes, "put");
  if (st != GF_OK || bytes == 0) return st;
  return ch->b->ops->copy_async(ch->b, s, (unsigned char *)ch->remote + offset, src, bytes, tag);
}

gf_status gf_channel_get(gf_channel *ch, gf_stream *s, void *dst, size_t offset, size_t bytes,
                         gf_tag tag) {
  gf_status st = check_region(ch, offset, bytes, "get");
  if (st != GF_OK || bytes == 0) return st;
  return ch->b->ops->copy_async(ch->b, s, dst, (unsigned char *)ch->remote + offset, bytes, tag);
}

static gf_status check_slot(gf_channel *ch, int slot) {
  if (slot >= 0 && slot < GF_CHANNEL_SLOTS) return GF_OK;
  snprintf(ch->b->error, sizeof ch->b->error, "channel slot %d is not one of 0 to %d", slot,
           GF_CHANNEL_SLOTS - 1);
  return GF_INTERNAL;
}

static gf_status slot_op(gf_channel *ch, gf_stream *s, int slot, uint64_t value, gf_tag tag,
                         int signal) {
  if (check_slot(ch, slot) != GF_OK) return GF_INTERNAL;
  if (signal && !ch->remote)
    return channel_fail(ch->b, "channel signal before the channel is connected");
  gf_channel_slot_args args = {
      signal ? slot_at(ch->remote, ch->peer_bytes, slot) : slot_at(ch->local, ch->bytes, slot),
      value};
  return ch->b->ops->launch(ch->b, s, signal ? &gf_kernel_channel_signal : &gf_kernel_channel_wait,
                            &args, tag);
}

gf_status gf_channel_signal(gf_channel *ch, gf_stream *s, int slot, uint64_t value, gf_tag tag) {
  return slot_op(ch, s, slot, value, tag, 1);
}

static gf_status put_signal(gf_channel *ch, gf_stream *s, size_t offset, const void *src,
                            size_t bytes, int slot, uint64_t value, int wait, gf_tag tag) {
  gf_status st = check_slot(ch, slot);
  if (st == GF_OK)
    st = check_region(ch, offset, bytes, wait ? "put with signal and wait" : "put with signal");
  if (st != GF_OK) return st;
  gf_channel_put_signal_args args = {
      .dst = (unsigned char *)ch->remote + offset,
      .src = src,
      .bytes = bytes,
      .slot = slot_at(ch->remote, ch->peer_bytes, slot),
      .value = value,
      .arrivals = arrivals_at(ch->local, ch->bytes, slot),
      .wait_slot = wait ? slot_at(ch->local, ch->bytes, slot) : NULL,
      .wait_value = value,
  };
  return ch->b->ops->launch(ch->b, s, &gf_kernel_channel_put_signal, &args, tag);
}

gf_status gf_channel_put_signal(gf_channel *ch, gf_stream *s, size_t offset, const void *src,
                                size_t bytes, int slot, uint64_t value, gf_tag tag) {
  return put_signal(ch, s, offset, src, bytes, slot, value, 0, tag);
}

gf_status gf_channel_put_signal_wait(gf_channel *ch, gf_stream *s, size_t offset, const void *src,
                                     size_t bytes, int slot, uint64_t value, gf_tag tag) {
  return put_signal(ch, s, offset, src, bytes, slot, value, 1, tag);
}

gf_status gf_channel_wait(gf_channel *ch, gf_stream *s, int slot, uint64_t value, gf_tag tag) {
  return slot_op(ch, s, slot, value, tag, 0);
}

/* A put of `put_bytes` from `src` and a take of `take_bytes` into `dst`,
 * each checked against the largest message its area holds. */
static gf_status packets(gf_channel *ch, gf_stream *s, const void *src, size_t put_bytes, void *dst,
                         size_t take_bytes, gf_tag tag) {
  if (put_bytes && !ch->remote)
    return channel_fail(ch->b, "channel put of packets before the channel is connected");
  if (put_bytes > ch->peer_packet_bytes || take_bytes > ch->packet_bytes) {
    int put = put_bytes > ch->peer_packet_bytes;
    snprintf(ch->b->error, sizeof ch->b->error,
             "channel %s of %zu bytes as packets: the %s packet area holds messages of up to %zu",
             put ? "put" : "take", put ? put_bytes : take_bytes, put ? "peer's" : "channel's",
             put ? ch->peer_packet_bytes : ch->packet_bytes);
    return GF_INTERNAL;
  }
  if (put_bytes == 0 && take_bytes == 0) return GF_OK;
  gf_channel_packets_args args = {
      .src = src,
      .put_bytes = put_bytes,
      .put_area = put_bytes ? area_at(ch->remote, ch->peer_bytes) : NULL,
      .put_half = half_of(ch->peer_packet_bytes),
      .dst = dst,
      .take_bytes = take_bytes,
      .take_area = area_at(ch->local, ch->bytes),
      .take_half = half_of(ch->packet_bytes),
      .counts = counts_at(ch->local, ch->bytes),
  };
  return ch->b->ops->launch(ch->b, s, &gf_kernel_channel_packets, &args, tag);
}

gf_status gf_channel_put_packets(gf_channel *ch, gf_stream *s, const void *src, size_t bytes,
                                 gf_tag tag) {
  return packets(ch, s, src, bytes, NULL, 0, tag);
}

gf_status gf_channel_take_packets(gf_channel *ch, gf_stream *s, void *dst, size_t bytes,
                                  gf_tag tag) {
  return packets(ch, s, NULL, 0, dst, bytes, tag);
}

gf_status gf_channel_exchange_packets(gf_channel *ch, gf_stream *s, const void *src,
                                      size_t put_bytes, void *dst, size_t take_bytes, gf_tag tag) {
  return packets(ch, s, src, put_bytes, dst, take_bytes, tag);
}

void gf_channel_free(gf_channel *ch) {
  if (!ch) return;
  gf_backend *b = ch->b;
  if (ch->remote) b->ops->channel_close(b, &ch->peer, ch->remote);
  b->ops->channel_unregister(b, &ch->handle, ch->local);
  free(ch);
}
