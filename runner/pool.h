/* pool.h - the pool the run's temporaries (scratch fields) come from.
 *
 * Three strategies over a backend's raw alloc/free (backend.h), picked by
 * `memory: {pool: {strategy: ...}}`:
 *
 *  resource-aware  Umpire's ResourceAwarePool (seed 002): chunks carved from
 *                  blocks the pool takes from the backend are free, used or
 *                  pending. A chunk freed on stream S is pending, tagged with
 *                  an event recorded on S at the free: S may reuse it at once
 *                  (its later work runs after the work that used the chunk),
 *                  another stream only once the event has completed, which
 *                  the pool asks without blocking (event_query), when no
 *                  free chunk and none of the stream's own fits. Best fit,
 *                  adjacent free chunks coalesce, and blocks wholly free
 *                  beyond the release threshold go back to the backend.
 *  async           the backend's own stream-ordered allocator: alloc/free
 *                  with the stream (hipMallocAsync / hipFreeAsync in the pool
 *                  space on a GPU; a queued free on the CPU backend).
 *  naive           the same chunks with no pending state: a freed chunk is
 *                  free for any stream at once, although work queued on the
 *                  freeing stream may still use it. Wrong on purpose: kept to
 *                  show the hazard the resource-aware pool avoids.
 *
 * (gf_pool_strategy and its names are in space.h, for the workflow model.)
 * A pool belongs to one memory space and one thread (the executor's); memory.c
 * owns the pools of a run.
 */
#ifndef GF_POOL_H
#define GF_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "error.h"
#include "space.h"

/* What a pool did, for the timing report and timings.json. */
typedef struct gf_pool_stats {
  int64_t allocs, frees;
  int64_t reused;           /* allocations served by a chunk used before */
  int64_t reused_same;      /* of those: pending on the asking stream, taken at once */
  int64_t reused_after;     /* of those: freed on another stream, taken once its event completed */
  int64_t passed_pending;   /* searches that passed over a chunk another stream may still use */
  int64_t blocks, released; /* blocks taken from the backend, and given back before the end */
  size_t in_use, in_use_peak;     /* bytes allocated to temporaries: now, and the high-water mark */
  size_t reserved, reserved_peak; /* bytes the pool holds from the backend */
  size_t pending, pending_peak;   /* bytes pending: now, and the most at once */
} gf_pool_stats;

typedef struct gf_pool gf_pool;

/* A pool of `space` memory on `b`. `release_threshold`: bytes of wholly free
 * blocks the pool keeps (SIZE_MAX: all, until destroyed). */
gf_status gf_pool_create(gf_backend *b, gf_pool_strategy strategy, gf_space space,
                         size_t release_threshold, gf_pool **out);

/* Takes a block of at least `bytes` now, while the pool has none, so that
 * the first allocations find it (before a loop's clock: the backend's
 * allocation is slow, a device's especially); the async strategy keeps
 * nothing. GF_INTERNAL with b->error written. */
gf_status gf_pool_reserve(gf_pool *p, size_t bytes);

/* `bytes` for work issued to `stream` from now on (other streams may use it
 * after an event recorded on `stream` after this call). `hint`: what the
 * caller had from the pool last time (NULL: nothing), taken back at once
 * when it is pending on `stream` with this size (a temporary of every step).
 * GF_INTERNAL with the backend's reason in b->error. */
gf_status gf_pool_alloc(gf_pool *p, size_t bytes, gf_stream *stream, const void *hint, void **out);

/* Gives `ptr` back after the work issued to `stream` so far (every use of it
 * must be ordered before that point). GF_INTERNAL with b->error written. */
gf_status gf_pool_free(gf_pool *p, void *ptr, gf_stream *stream);

const gf_pool_stats *gf_pool_stats_of(const gf_pool *p);

/* Frees every block; the backend must be idle. */
void gf_pool_destroy(gf_pool *p);

#endif
