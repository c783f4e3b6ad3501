/* test_pool.c - the temporaries' pool (runner/pool.c) on the CPU backend,
 * whose streams are worker threads: same-stream reuse at once, cross-stream
 * reuse only after the freeing stream's event, the naive pool's early reuse,
 * best fit, coalescing, the release threshold, the statistics, the async
 * strategy, and a free the pool cannot place. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "pool.h"

static gf_backend *open_backend(void) {
  gf_backend_options options = {.device = -1};
  gf_backend *b = NULL;
  CHECK_INT(gf_backend_cpu_create(&options, &b), GF_OK);
  return b;
}

/* A stream's worth of slow work: copies of a large buffer, tens of
 * milliseconds, against which an allocation is microseconds. */
typedef struct busy {
  void *from, *to;
  size_t bytes;
} busy;

static void busy_open(gf_backend *b, busy *w) {
  w->bytes = (size_t)32 << 20;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_HOST, w->bytes, NULL, &w->from), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_HOST, w->bytes, NULL, &w->to), GF_OK);
  memset(w->from, 1, w->bytes);
}

static void busy_issue(gf_backend *b, gf_stream *s, busy *w) {
  for (int i = 0; i < 8; i++)
    CHECK_INT(b->ops->copy_async(b, s, w->to, w->from, w->bytes, (gf_tag){-1, -1, -1}), GF_OK);
}

static void busy_close(gf_backend *b, busy *w) {
  b->ops->free(b, GF_SPACE_HOST, w->from, NULL);
  b->ops->free(b, GF_SPACE_HOST, w->to, NULL);
}

/* Two allocations share no byte. */
static int disjoint(const void *p, size_t n, const void *q, size_t m) {
  uintptr_t a = (uintptr_t)p, c = (uintptr_t)q;
  return a + n <= c || c + m <= a;
}

typedef struct rig {
  gf_backend *b;
  gf_stream *s, *t;
  busy w;
  gf_pool *pool;
} rig;

static void rig_open(rig *r, gf_pool_strategy strategy, size_t threshold) {
  r->b = open_backend();
  CHECK_INT(r->b->ops->stream_create(r->b, GF_STREAM_NORMAL, &r->s), GF_OK);
  CHECK_INT(r->b->ops->stream_create(r->b, GF_STREAM_NORMAL, &r->t), GF_OK);
  busy_open(r->b, &r->w);
  CHECK_INT(gf_pool_create(r->b, strategy, GF_SPACE_DEVICE, threshold, &r->pool), GF_OK);
}

static void rig_close(rig *r) {
  CHECK_INT(r->b->ops->synchronize(r->b), GF_OK);
  gf_pool_destroy(r->pool);
  busy_close(r->b, &r->w);
  r->b->ops->destroy(r->b);
}

/* 1000 bytes allocated on s and freed on s behind slow work: pending there
 * for tens of milliseconds. */
static void *pending_on_s(rig *r) {
  void *p = NULL;
  CHECK_INT(gf_pool_alloc(r->pool, 1000, r->s, NULL, &p), GF_OK);
  busy_issue(r->b, r->s, &r->w);
  CHECK_INT(gf_pool_free(r->pool, p, r->s), GF_OK);
  return p;
}

/* Freed on s behind slow work: s takes it back at once, stream order being
 * enough. */
static void test_same_stream_reuse(void) {
  rig r;
  rig_open(&r, GF_POOL_RESOURCE_AWARE, SIZE_MAX);
  void *p = pending_on_s(&r), *q = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.s, NULL, &q), GF_OK);
  CHECK(q == p);
  const gf_pool_stats *st = gf_pool_stats_of(r.pool);
  CHECK_INT(st->reused, 1);
  CHECK_INT(st->reused_same, 1);
  CHECK_INT(st->blocks, 1);
  CHECK_INT(gf_pool_free(r.pool, q, r.s), GF_OK);
  rig_close(&r);
}

/* A whole block freed on s behind slow work: t, finding nothing free, asks
 * s's event, gets a new block while s's work may still use the first, and
 * the first once s has passed the free. */
static void test_cross_stream_after_event(void) {
  rig r;
  rig_open(&r, GF_POOL_RESOURCE_AWARE, SIZE_MAX);
  const size_t block = (size_t)2 << 20;
  void *p = NULL, *q = NULL, *u = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, block, r.s, NULL, &p), GF_OK);
  busy_issue(r.b, r.s, &r.w);
  CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, block, r.t, NULL, &q), GF_OK);
  CHECK(q && disjoint(p, block, q, block));
  const gf_pool_stats *st = gf_pool_stats_of(r.pool);
  CHECK_INT(st->passed_pending, 1);
  CHECK_INT(st->pending, block);
  CHECK_INT(st->blocks, 2);
  CHECK_INT(r.b->ops->stream_synchronize(r.b, r.s), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, block, r.t, NULL, &u), GF_OK);
  CHECK(u == p);
  CHECK_INT(st->reused_after, 1);
  CHECK_INT(st->pending, 0);
  CHECK_INT(st->blocks, 2);
  CHECK_INT(gf_pool_free(r.pool, q, r.t), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, u, r.t), GF_OK);
  rig_close(&r);
}

/* Two chunks of one size pending on s: the hint (what the caller had last
 * time) picks which comes back; a hint pending on another stream, of
 * another size, or unknown to the pool is passed by, as if none were
 * given. */
static void test_hint(void) {
  rig r;
  rig_open(&r, GF_POOL_RESOURCE_AWARE, SIZE_MAX);
  void *p = NULL, *q = NULL, *x = NULL, *y = NULL, *z = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.s, NULL, &p), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.s, NULL, &q), GF_OK);
  busy_issue(r.b, r.s, &r.w);
  CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, q, r.s), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.s, q, &x), GF_OK);
  CHECK(x == q);
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.s, q, &y), GF_OK); /* q is in use: p, the other */
  CHECK(y == p);
  CHECK_INT(gf_pool_free(r.pool, x, r.s), GF_OK);
  /* pending on s, asked for on t: not taken at once (t gets fresh memory) */
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.t, q, &z), GF_OK);
  CHECK(z != q && disjoint(z, 1000, q, 1000));
  CHECK_INT(gf_pool_free(r.pool, z, r.t), GF_OK);
  /* another size, then a pointer the pool never gave: the search decides */
  void *big = NULL, *w = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, 4096, r.s, q, &big), GF_OK);
  CHECK(big != q);
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.s, &r, &w), GF_OK);
  CHECK(w == q);
  const gf_pool_stats *st = gf_pool_stats_of(r.pool);
  CHECK_INT(st->reused_same, 3);
  CHECK_INT(gf_pool_free(r.pool, y, r.s), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, w, r.s), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, big, r.s), GF_OK);
  rig_close(&r);
}

/* With free memory at hand, t takes it without asking s's event, and s
 * keeps its own chunk. */
static void test_free_memory_first(void) {
  rig r;
  rig_open(&r, GF_POOL_RESOURCE_AWARE, SIZE_MAX);
  void *p = pending_on_s(&r), *q = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.t, NULL, &q), GF_OK);
  CHECK(q && disjoint(p, 1000, q, 1000));
  CHECK_INT(gf_pool_stats_of(r.pool)->passed_pending, 1);
  CHECK_INT(gf_pool_stats_of(r.pool)->blocks, 1);
  CHECK_INT(gf_pool_free(r.pool, q, r.t), GF_OK);
  rig_close(&r);
}

/* The naive pool hands t the chunk s's queued work still uses: the hazard
 * the resource-aware pool exists for. */
static void test_naive_reuses_at_once(void) {
  rig r;
  rig_open(&r, GF_POOL_NAIVE, SIZE_MAX);
  void *p = pending_on_s(&r), *q = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, 1000, r.t, NULL, &q), GF_OK);
  CHECK(q == p);
  CHECK_INT(gf_pool_stats_of(r.pool)->pending_peak, 0);
  CHECK_INT(gf_pool_free(r.pool, q, r.t), GF_OK);
  rig_close(&r);
}

/* Chunks a | b | c | d carved in order from one block; freed outside any
 * stream they are free at once. The smallest chunk that fits is taken, and
 * adjacent free chunks merge. */
static void test_best_fit_and_coalescing(void) {
  rig r;
  rig_open(&r, GF_POOL_RESOURCE_AWARE, SIZE_MAX);
  char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *x = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, 4 * 256, NULL, NULL, (void **)&a), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 8 * 256, NULL, NULL, (void **)&b), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 2 * 256, NULL, NULL, (void **)&c), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 1, NULL, NULL, (void **)&d), GF_OK);
  CHECK(b == a + 4 * 256 && c == b + 8 * 256 && d == c + 2 * 256);
  CHECK_INT(gf_pool_free(r.pool, a, NULL), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, c, NULL), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 2 * 256 - 8, NULL, NULL, (void **)&x), GF_OK);
  CHECK(x == c); /* not a, nor the rest of the block */
  CHECK_INT(gf_pool_free(r.pool, b, NULL), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 12 * 256, NULL, NULL, (void **)&b), GF_OK);
  CHECK(b == a); /* a and b merged */
  CHECK_INT(gf_pool_stats_of(r.pool)->blocks, 1);
  CHECK_INT(gf_pool_free(r.pool, b, NULL), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, x, NULL), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, d, NULL), GF_OK);
  CHECK_INT(gf_pool_stats_of(r.pool)->in_use, 0);
  rig_close(&r);
}

/* With a release threshold of 0, a block wholly free once its stream has
 * passed the free goes back to the backend; without one, it stays. */
static void test_release_threshold(void) {
  for (int keep = 0; keep < 2; keep++) {
    rig r;
    rig_open(&r, GF_POOL_RESOURCE_AWARE, keep ? SIZE_MAX : 0);
    void *p = NULL;
    CHECK_INT(gf_pool_alloc(r.pool, (size_t)3 << 20, r.s, NULL, &p), GF_OK);
    CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_OK); /* s is idle: its event completes */
    const gf_pool_stats *st = gf_pool_stats_of(r.pool);
    CHECK_INT(st->released, keep ? 0 : 1);
    CHECK_INT(st->reserved, keep ? (size_t)3 << 20 : 0);
    CHECK_INT(st->reserved_peak, (size_t)3 << 20);
    rig_close(&r);
  }
}

/* High-water marks: in use, held, pending. */
static void test_statistics(void) {
  rig r;
  rig_open(&r, GF_POOL_RESOURCE_AWARE, SIZE_MAX);
  void *p = NULL, *q = NULL;
  CHECK_INT(gf_pool_alloc(r.pool, 1024, r.s, NULL, &p), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 1024, r.t, NULL, &q), GF_OK);
  busy_issue(r.b, r.s, &r.w);
  CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_OK);
  CHECK_INT(gf_pool_free(r.pool, q, r.t), GF_OK);
  CHECK_INT(gf_pool_alloc(r.pool, 512, r.s, NULL, &p), GF_OK);
  const gf_pool_stats *st = gf_pool_stats_of(r.pool);
  CHECK_INT(st->allocs, 3);
  CHECK_INT(st->frees, 2);
  CHECK_INT(st->in_use, 512);
  CHECK_INT(st->in_use_peak, 2048);
  CHECK_INT(st->pending_peak, 2048);
  CHECK_INT(st->reserved_peak, (size_t)2 << 20);
  CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_OK);
  rig_close(&r);
}

/* The backend's stream-ordered allocator: memory that works, in stream order. */
static void test_async(void) {
  rig r;
  rig_open(&r, GF_POOL_ASYNC, SIZE_MAX);
  enum { N = 4096 };
  unsigned char *host = NULL, *back = NULL;
  void *p = NULL;
  CHECK_INT(r.b->ops->alloc(r.b, GF_SPACE_PINNED, N, NULL, (void **)&host), GF_OK);
  CHECK_INT(r.b->ops->alloc(r.b, GF_SPACE_PINNED, N, NULL, (void **)&back), GF_OK);
  for (int i = 0; i < N; i++) host[i] = (unsigned char)(i * 13 + 1), back[i] = 0;
  for (int round = 0; round < 3; round++) {
    CHECK_INT(gf_pool_alloc(r.pool, N, r.s, NULL, &p), GF_OK);
    CHECK_INT(r.b->ops->copy_async(r.b, r.s, p, host, N, (gf_tag){-1, -1, -1}), GF_OK);
    CHECK_INT(r.b->ops->copy_async(r.b, r.s, back, p, N, (gf_tag){-1, -1, -1}), GF_OK);
    CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_OK);
  }
  CHECK_INT(r.b->ops->synchronize(r.b), GF_OK);
  CHECK(memcmp(host, back, N) == 0);
  const gf_pool_stats *st = gf_pool_stats_of(r.pool);
  CHECK_INT(st->allocs, 3);
  CHECK_INT(st->frees, 3);
  CHECK_INT(st->in_use, 0);
  CHECK_INT(st->in_use_peak, N);
  CHECK_INT(st->blocks, 0);
  r.b->ops->free(r.b, GF_SPACE_PINNED, host, NULL);
  r.b->ops->free(r.b, GF_SPACE_PINNED, back, NULL);
  rig_close(&r);
}

/* A pointer the pool did not hand out, or one freed twice. */
static void test_bad_free(void) {
  for (int strategy = 0; strategy < GF_POOL_STRATEGY_COUNT; strategy++) {
    rig r;
    rig_open(&r, (gf_pool_strategy)strategy, SIZE_MAX);
    void *p = NULL;
    char elsewhere;
    CHECK_INT(gf_pool_free(r.pool, &elsewhere, r.s), GF_INTERNAL);
    CHECK(strstr(r.b->error, "did not allocate") != NULL);
    CHECK_INT(gf_pool_alloc(r.pool, 64, r.s, NULL, &p), GF_OK);
    CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_OK);
    CHECK_INT(gf_pool_free(r.pool, p, r.s), GF_INTERNAL);
    CHECK_INT(gf_pool_stats_of(r.pool)->frees, 1);
    rig_close(&r);
  }
}

int main(void) {
  RUN(test_same_stream_reuse);
  RUN(test_cross_stream_after_event);
  RUN(test_hint);
  RUN(test_free_memory_first);
  RUN(test_naive_reuses_at_once);
  RUN(test_best_fit_and_coalescing);
  RUN(test_release_threshold);
  RUN(test_statistics);
  RUN(test_async);
  RUN(test_bad_free);
  return check_summary();
}
