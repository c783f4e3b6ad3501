/* pool.c - the temporaries' pool: resource-aware, the backend's stream-ordered
 * allocator, or naive (pool.h).
 *
 * Blocks come from the backend's ordinary alloc; each block is a list of
 * chunks in address order, so a chunk's neighbours are at hand for
 * coalescing. Searches are linear over the chunks: a run's temporaries are a
 * handful of fields, so there are few.
 *
 * The pending state records its event lazily. A chunk freed on S is pending
 * on S with no event yet; S takes it back without any backend call. Only when
 * another stream could use it does the pool record an event on S (it
 * captures everything issued to S so far, so also the work that used the
 * chunk) and, from then on, ask whether it has completed; and it asks only
 * when no free chunk and none of the asking stream's own fits. A stream that
 * allocates and frees in turn, or several streams that each find their own
 * chunks, therefore cost no device call at all, and the cross-stream rule
 * still holds: the event is recorded after the free.
 */
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_ALIGN 256                   /* chunk sizes and offsets */
#define POOL_BLOCK_MIN ((size_t)2 << 20) /* small temporaries share a block */
#define POOL_RECENT 8                    /* chunks in the used and pending cache */

const char *const gf_pool_strategy_names[GF_POOL_STRATEGY_COUNT] = {"resource-aware", "async",
                                                                    "naive"};

typedef enum chunk_state { CHUNK_FREE, CHUNK_USED, CHUNK_PENDING } chunk_state;

/* An event several chunks may share (a pending chunk split in two). */
typedef struct pool_event {
  gf_event *event;
  int refs;
  struct pool_event *next; /* spares */
} pool_event;

typedef struct block block;

typedef struct chunk {
  char *ptr;
  size_t size;
  chunk_state state;
  gf_stream *stream;         /* USED: the stream it was allocated for; PENDING: freed on */
  pool_event *event;         /* PENDING: recorded on `stream` after the free, NULL: not yet */
  gf_stream *freed_on;       /* the stream that last freed it (stats) */
  int used_before;           /* its bytes served a temporary already */
  block *block;              /* NULL: an async allocation */
  struct chunk *prev, *next; /* in the block by address; async: the list */
} chunk;

struct block {
  char *base;
  size_t size;
  chunk *first;
  block *next;
};

/* The recent cache: the last chunks handed out or freed on a stream, in
 * small arrays, so that a temporary freed and taken again by its stream
 * at every step (the common case) finds its chunk without walking the
 * blocks' chunk lists, whose nodes are scattered in the heap and cold in
 * the cache after the runtime's own calls. One array a field: a scan of
 * the pointers, or of the streams, reads one cache line. An entry mirrors
 * a live chunk that is used or pending (never free: settle() drops it
 * first, so a chunk that coalescing frees is never in it). */
typedef struct recent_cache {
  char *ptr[POOL_RECENT];         /* NULL: an empty entry */
  gf_stream *stream[POOL_RECENT]; /* used: allocated for; pending: freed on */
  size_t size[POOL_RECENT];
  chunk *chunk[POOL_RECENT];
  unsigned char state[POOL_RECENT]; /* CHUNK_USED or CHUNK_PENDING */
  int next;                         /* the entry to replace when none is empty */
} recent_cache;

struct gf_pool {
  gf_backend *b;
  gf_pool_strategy strategy;
  gf_space space;
  size_t release_threshold;
  block *blocks;
  chunk *direct; /* async: the allocations out */
  pool_event *spare_events;
  gf_pool_stats stats;
  recent_cache recent;
};

static gf_status pool_fail(gf_pool *p, const char *what) {
  snprintf(p->b->error, sizeof p->b->error, "out of memory: %s", what);
  return GF_INTERNAL;
}

gf_status gf_pool_create(gf_backend *b, gf_pool_strategy strategy, gf_space space,
                         size_t release_threshold, gf_pool **out) {
  *out = gf_calloc(1, sizeof **out);
  if (!*out) {
    snprintf(b->error, sizeof b->error, "out of memory: creating a pool");
    return GF_INTERNAL;
  }
  (*out)->b = b;
  (*out)->strategy = strategy;
  (*out)->space = space;
  (*out)->release_threshold = release_threshold;
  return GF_OK;
}

const gf_pool_stats *gf_pool_stats_of(const gf_pool *p) {
  return &p->stats;
}

static void grow_peak(size_t *peak, size_t now) {
  if (now > *peak) *peak = now;
}

/* ---- events ---- */

static void event_put(gf_pool *p, pool_event *e) {
  if (e && --e->refs == 0) {
    e->next = p->spare_events;
    p->spare_events = e;
  }
}

/* Records a fresh event on `stream` for pending chunk `c`. */
static gf_status event_attach(gf_pool *p, chunk *c) {
  gf_backend *b = p->b;
  pool_event *e = p->spare_events;
  if (e) {
    p->spare_events = e->next;
  } else {
    if (!(e = gf_calloc(1, sizeof *e))) return pool_fail(p, "a pool event");
    if (b->ops->event_create(b, &e->event) != GF_OK) {
      free(e);
      return GF_INTERNAL;
    }
  }
  e->refs = 1;
  if (b->ops->event_record(b, e->event, c->stream) != GF_OK) {
    event_put(p, e);
    return GF_INTERNAL;
  }
  c->event = e;
  return GF_OK;
}

/* ---- the recent cache ---- */

static void recent_drop(gf_pool *p, const chunk *c) {
  recent_cache *rc = &p->recent;
  for (int i = 0; i < POOL_RECENT; i++)
    if (rc->chunk[i] == c) rc->ptr[i] = NULL, rc->chunk[i] = NULL, rc->stream[i] = NULL;
}

/* Records `c`'s state (used or pending) in its entry, or in a new one. */
static void recent_set(gf_pool *p, chunk *c) {
  recent_cache *rc = &p->recent;
  int at = -1;
  for (int i = 0; i < POOL_RECENT && at < 0; i++)
    if (rc->chunk[i] == c) at = i;
  for (int i = 0; i < POOL_RECENT && at < 0; i++)
    if (!rc->ptr[i]) at = i;
  if (at < 0) at = rc->next++ % POOL_RECENT;
  rc->ptr[at] = c->ptr, rc->stream[at] = c->stream, rc->size[at] = c->size;
  rc->chunk[at] = c, rc->state[at] = (unsigned char)c->state;
}

/* The entry of the chunk at `ptr`, or -1. */
static int recent_find(const recent_cache *rc, const void *ptr) {
  for (int i = 0; i < POOL_RECENT; i++)
    if (rc->ptr[i] == ptr) return i;
  return -1;
}

/* Whether entry `at` (-1: none) is a chunk of `size` pending on `stream`. */
static int pending_here(const recent_cache *rc, int at, const gf_stream *stream, size_t size) {
  return at >= 0 && rc->ptr[at] && rc->stream[at] == stream && rc->state[at] == CHUNK_PENDING &&
         rc->size[at] == size;
}

/* ---- chunks ---- */

/* Merges `c` with its free neighbours; returns the merged chunk. */
static chunk *coalesce(chunk *c) {
  for (chunk *n = c->next; n && n->state == CHUNK_FREE && c->state == CHUNK_FREE; n = c->next) {
    c->size += n->size;
    c->used_before |= n->used_before;
    if (n->freed_on != c->freed_on) c->freed_on = NULL;
    c->next = n->next;
    if (n->next) n->next->prev = c;
    free(n);
  }
  chunk *q = c->prev;
  if (q && q->state == CHUNK_FREE && c->state == CHUNK_FREE) {
    q->next = c->next;
    if (c->next) c->next->prev = q;
    q->size += c->size;
    q->used_before |= c->used_before;
    if (q->freed_on != c->freed_on) q->freed_on = NULL;
    free(c);
    c = q;
  }
  return c;
}

/* A pending chunk whose event completed (or, naive, any freed chunk) is free. */
static chunk *settle(gf_pool *p, chunk *c) {
  recent_drop(p, c);
  if (c->state == CHUNK_PENDING) p->stats.pending -= c->size;
  event_put(p, c->event);
  c->event = NULL;
  c->state = CHUNK_FREE;
  c->stream = NULL;
  return coalesce(c);
}

/* Asks, without blocking, whether the pending chunks of streams other than
 * `stream` are done, and frees those that are. */
static gf_status settle_others(gf_pool *p, gf_stream *stream) {
  gf_backend *b = p->b;
  for (block *k = p->blocks; k; k = k->next)
    for (chunk *c = k->first; c; c = c->next) {
      if (c->state != CHUNK_PENDING || c->stream == stream) continue;
      if (!c->event) {
        /* First asked for: record now (after the free, so it covers the uses). */
        gf_status st = event_attach(p, c);
        if (st != GF_OK) return st;
      }
      int done = 0;
      if (b->ops->event_query(b, c->event->event, &done) != GF_OK) return GF_INTERNAL;
      if (done) c = settle(p, c);
    }
  return GF_OK;
}

/* Splits `c` so that it is `size` bytes, the rest a chunk in the same state. */
static gf_status split(gf_pool *p, chunk *c, size_t size) {
  if (c->size - size < POOL_ALIGN) return GF_OK;
  chunk *rest = gf_calloc(1, sizeof *rest);
  if (!rest) return pool_fail(p, "splitting a pool chunk");
  *rest = *c;
  rest->ptr = c->ptr + size;
  rest->size = c->size - size;
  rest->prev = c;
  if (rest->event) rest->event->refs++;
  if (c->next) c->next->prev = rest;
  c->next = rest;
  c->size = size;
  return GF_OK;
}

/* The best fit for `size` that `stream` may take without asking anything:
 * free, or pending on `stream` itself (naive: any freed chunk is free).
 * `*others_fit`: a chunk pending on another stream would fit. */
static chunk *best_fit(gf_pool *p, size_t size, gf_stream *stream, int *others_fit) {
  chunk *best = NULL;
  *others_fit = 0;
  for (block *k = p->blocks; k; k = k->next)
    for (chunk *c = k->first; c; c = c->next) {
      if (c->size < size || c->state == CHUNK_USED) continue;
      if (c->state == CHUNK_PENDING && c->stream != stream)
        *others_fit = 1;
      else if (!best || c->size < best->size)
        best = c;
    }
  return best;
}

static gf_status block_new(gf_pool *p, size_t size) {
  gf_backend *b = p->b;
  block *k = gf_calloc(1, sizeof *k);
  chunk *c = gf_calloc(1, sizeof *c);
  if (!k || !c) {
    free(k);
    free(c);
    return pool_fail(p, "a pool block");
  }
  k->size = size < POOL_BLOCK_MIN ? POOL_BLOCK_MIN : size;
  if (b->ops->alloc(b, p->space, k->size, NULL, (void **)&k->base) != GF_OK) {
    free(k);
    free(c);
    return GF_INTERNAL;
  }
  c->ptr = k->base;
  c->size = k->size;
  c->block = k;
  k->first = c;
  k->next = p->blocks;
  p->blocks = k;
  p->stats.blocks++;
  p->stats.reserved += k->size;
  grow_peak(&p->stats.reserved_peak, p->stats.reserved);
  return GF_OK;
}

/* Gives wholly free blocks back while the pool holds more than the threshold
 * (every block, `all`). Only settled chunks are free, so no stream uses them. */
static void release_blocks(gf_pool *p, int all) {
  block **at = &p->blocks;
  while (*at) {
    block *k = *at;
    int empty = k->first->state == CHUNK_FREE && !k->first->next;
    if (empty && (all || p->stats.reserved > p->release_threshold)) {
      *at = k->next;
      p->b->ops->free(p->b, p->space, k->base, NULL);
      p->stats.reserved -= k->size;
      if (!all) p->stats.released++;
      free(k->first);
      free(k);
    } else {
      at = &k->next;
    }
  }
}

/* Out of memory: waits for every pending chunk, frees what is free, and
 * tries once more. */
static gf_status block_new_or_drain(gf_pool *p, size_t size) {
  if (block_new(p, size) == GF_OK) return GF_OK;
  gf_backend *b = p->b;
  for (block *k = p->blocks; k; k = k->next)
    for (chunk *c = k->first; c; c = c->next) {
      if (c->state != CHUNK_PENDING) continue;
      if (!c->event && event_attach(p, c) != GF_OK) return GF_INTERNAL;
      if (b->ops->event_synchronize(b, c->event->event) != GF_OK) return GF_INTERNAL;
      c = settle(p, c);
    }
  release_blocks(p, 1);
  return block_new(p, size);
}

/* ---- the interface ---- */

/* The async strategy: the backend's stream-ordered allocator, in the pool
 * space when the memory is the device's. */
static gf_space async_space(gf_space space) {
  return space == GF_SPACE_DEVICE ? GF_SPACE_POOL : space;
}

static void count_alloc(gf_pool *p, size_t size) {
  p->stats.allocs++;
  p->stats.in_use += size;
  grow_peak(&p->stats.in_use_peak, p->stats.in_use);
}

static gf_status alloc_async(gf_pool *p, size_t bytes, gf_stream *stream, void **out) {
  chunk *c = gf_calloc(1, sizeof *c);
  if (!c) return pool_fail(p, "recording an allocation");
  if (p->b->ops->alloc(p->b, async_space(p->space), bytes, stream, out) != GF_OK) {
    free(c);
    return GF_INTERNAL;
  }
  c->ptr = *out;
  c->size = bytes;
  c->state = CHUNK_USED;
  c->next = p->direct;
  if (p->direct) p->direct->prev = c;
  p->direct = c;
  count_alloc(p, bytes);
  return GF_OK;
}

gf_status gf_pool_reserve(gf_pool *p, size_t bytes) {
  if (p->strategy == GF_POOL_ASYNC || p->blocks || bytes == 0) return GF_OK;
  if (bytes > SIZE_MAX - POOL_BLOCK_MIN) {
    snprintf(p->b->error, sizeof p->b->error, "a pool of %zu bytes is too large", bytes);
    return GF_INTERNAL;
  }
  return block_new(p, (bytes + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN);
}

gf_status gf_pool_alloc(gf_pool *p, size_t bytes, gf_stream *stream, const void *hint, void **out) {
  *out = NULL;
  if (p->strategy == GF_POOL_ASYNC) return alloc_async(p, bytes, stream, out);
  if (bytes > SIZE_MAX - POOL_BLOCK_MIN) {
    snprintf(p->b->error, sizeof p->b->error, "a temporary of %zu bytes is too large", bytes);
    return GF_INTERNAL;
  }
  size_t size = (bytes + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
  if (!size) size = POOL_ALIGN;
  /* A chunk of exactly this size pending on this stream is a best fit that
   * stream order lets it take at once, with no search: the caller's last
   * (`hint`), else one in the recent cache. (The naive pool has none
   * pending.) */
  recent_cache *rc = &p->recent;
  int at = hint ? recent_find(rc, hint) : -1;
  if (!pending_here(rc, at, stream, size))
    for (at = 0; at < POOL_RECENT && !pending_here(rc, at, stream, size); at++) continue;
  if (at < POOL_RECENT) {
    chunk *c = rc->chunk[at];
    p->stats.reused++;
    p->stats.reused_same++;
    p->stats.pending -= c->size;
    event_put(p, c->event);
    c->event = NULL;
    c->state = CHUNK_USED;
    rc->state[at] = CHUNK_USED;
    count_alloc(p, c->size);
    *out = c->ptr;
    return GF_OK;
  }
  /* Only when nothing else fits does the pool ask (without waiting) whether
   * other streams are done with what they freed: a stream that finds its own
   * or free memory costs no device call. */
  int others_fit = 0;
  chunk *c = best_fit(p, size, stream, &others_fit);
  if (!c && others_fit) {
    gf_status st = settle_others(p, stream);
    if (st != GF_OK) return st;
    c = best_fit(p, size, stream, &others_fit);
  }
  p->stats.passed_pending += others_fit;
  if (!c) {
    gf_status st = block_new_or_drain(p, size);
    if (st != GF_OK) return st;
    c = p->blocks->first;
  }
  if (c->used_before) {
    p->stats.reused++;
    if (c->state == CHUNK_PENDING)
      p->stats.reused_same++;
    else if (c->freed_on && c->freed_on != stream)
      p->stats.reused_after++;
  }
  gf_status st = split(p, c, size);
  if (st != GF_OK) return st;
  if (c->state == CHUNK_PENDING) p->stats.pending -= c->size;
  event_put(p, c->event);
  c->event = NULL;
  c->state = CHUNK_USED;
  c->stream = stream;
  c->used_before = 1;
  count_alloc(p, c->size);
  recent_set(p, c);
  *out = c->ptr;
  return GF_OK;
}

/* The used chunk at `ptr`, or NULL; *at: its recent entry, or -1. */
static chunk *find_used(gf_pool *p, void *ptr, int *at) {
  *at = recent_find(&p->recent, ptr);
  if (*at >= 0 && p->recent.state[*at] == CHUNK_USED) return p->recent.chunk[*at];
  *at = -1;
  if (p->strategy == GF_POOL_ASYNC) {
    for (chunk *c = p->direct; c; c = c->next)
      if (c->ptr == ptr) return c;
    return NULL;
  }
  for (block *k = p->blocks; k; k = k->next)
    if ((char *)ptr >= k->base && (char *)ptr < k->base + k->size)
      for (chunk *c = k->first; c; c = c->next)
        if (c->ptr == ptr) return c->state == CHUNK_USED ? c : NULL;
  return NULL;
}

gf_status gf_pool_free(gf_pool *p, void *ptr, gf_stream *stream) {
  int at;
  chunk *c = find_used(p, ptr, &at);
  if (!c) {
    snprintf(p->b->error, sizeof p->b->error,
             "internal: freeing %p, which the pool did not allocate (or freed already)", ptr);
    return GF_INTERNAL;
  }
  p->stats.frees++;
  p->stats.in_use -= c->size;
  if (p->strategy == GF_POOL_ASYNC) {
    p->b->ops->free(p->b, async_space(p->space), ptr, stream);
    if (c->prev)
      c->prev->next = c->next;
    else
      p->direct = c->next;
    if (c->next) c->next->prev = c->prev;
    free(c);
    return GF_OK;
  }
  c->freed_on = stream;
  if (p->strategy == GF_POOL_NAIVE || !stream) {
    settle(p, c);
    return GF_OK;
  }
  c->state = CHUNK_PENDING;
  c->stream = stream;
  if (at >= 0) /* its entry: the same chunk, now pending on `stream` */
    p->recent.state[at] = CHUNK_PENDING, p->recent.stream[at] = stream;
  else
    recent_set(p, c);
  p->stats.pending += c->size;
  grow_peak(&p->stats.pending_peak, p->stats.pending);
  if (p->stats.reserved > p->release_threshold) {
    gf_status st = settle_others(p, NULL);
    if (st != GF_OK) return st;
    release_blocks(p, 0);
  }
  return GF_OK;
}

void gf_pool_destroy(gf_pool *p) {
  if (!p) return;
  gf_backend *b = p->b;
  while (p->direct) {
    chunk *c = p->direct;
    p->direct = c->next;
    b->ops->free(b, async_space(p->space), c->ptr, NULL);
    free(c);
  }
  while (p->blocks) {
    block *k = p->blocks;
    p->blocks = k->next;
    for (chunk *c = k->first, *next; c; c = next) {
      next = c->next;
      event_put(p, c->event);
      free(c);
    }
    b->ops->free(b, p->space, k->base, NULL);
    free(k);
  }
  while (p->spare_events) {
    pool_event *e = p->spare_events;
    p->spare_events = e->next;
    b->ops->event_destroy(b, e->event);
    free(e);
  }
  free(p);
}
