/* pool_bench.c - allocations per second of the temporaries' pool
 * (runner/pool.c) against the backend's own allocators, in one run:
 *
 *   per-step    alloc(device) + free with no stream: hipMalloc / hipFree on a
 *               GPU (what a per-step temporary costs without a pool)
 *   async       the stream-ordered allocator: hipMallocAsync / hipFreeAsync
 *               in the pool space, on the stream (gflow's `async` strategy)
 *   resource-aware, naive   gflow's pool on device memory
 *
 * Each pattern allocates `bytes`, issues nothing, and frees it on the same
 * stream; `streams` > 1 takes the streams in turn, so each allocation may
 * reuse what another stream freed (the resource-aware pool then asks that
 * stream's event). A rate is pairs (alloc + free) per second, best of
 * `repeat`, timed until the streams are idle again.
 *
 *   pool_bench [--backend cpu|gpu] [--bytes N] [--pairs N] [--streams K] [--repeat R]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "pool.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef enum mode { PER_STEP, ASYNC, RESOURCE_AWARE, NAIVE, MODES } mode;
static const char *const mode_names[MODES] = {
    "per-step (hipMalloc/hipFree)", "async (hipMallocAsync)", "pool resource-aware", "pool naive"};

static int fail(gf_backend *b, const char *what) {
  fprintf(stderr, "pool_bench: %s: %s\n", what, b->error);
  return 1;
}

/* Pairs per second of one mode, or -1 on failure. */
static double rate(gf_backend *b, gf_stream **s, int streams, mode m, size_t bytes, long pairs) {
  gf_pool *pool = NULL;
  if ((m == RESOURCE_AWARE || m == NAIVE) &&
      gf_pool_create(b, m == NAIVE ? GF_POOL_NAIVE : GF_POOL_RESOURCE_AWARE, GF_SPACE_DEVICE,
                     SIZE_MAX, &pool) != GF_OK)
    return fail(b, "creating the pool"), -1;
  double t0 = 0;
  for (long i = -streams; i < pairs; i++) { /* the first round warms up */
    if (i == 0) {
      if (b->ops->synchronize(b) != GF_OK) return fail(b, "synchronize"), -1;
      t0 = now_s();
    }
    gf_stream *st = s[(i + streams) % streams];
    void *p = NULL;
    gf_status ok = GF_OK;
    switch (m) {
      case PER_STEP:
        ok = b->ops->alloc(b, GF_SPACE_DEVICE, bytes, NULL, &p);
        if (ok == GF_OK) b->ops->free(b, GF_SPACE_DEVICE, p, NULL);
        break;
      case ASYNC:
        ok = b->ops->alloc(b, GF_SPACE_POOL, bytes, st, &p);
        if (ok == GF_OK) b->ops->free(b, GF_SPACE_POOL, p, st);
        break;
      default:
        ok = gf_pool_alloc(pool, bytes, st, NULL, &p);
        if (ok == GF_OK) ok = gf_pool_free(pool, p, st);
        break;
    }
    if (ok != GF_OK) return fail(b, mode_names[m]), -1;
  }
  if (b->ops->synchronize(b) != GF_OK) return fail(b, "synchronize"), -1;
  double seconds = now_s() - t0;
  if (pool) {
    const gf_pool_stats *st = gf_pool_stats_of(pool);
    if (st->blocks != 1)
      fprintf(stderr, "pool_bench: %s took %lld blocks\n", mode_names[m], (long long)st->blocks);
    gf_pool_destroy(pool);
  }
  return (double)pairs / seconds;
}

int main(int argc, char **argv) {
  const char *backend = "gpu";
  size_t bytes = (size_t)1 << 20;
  long pairs = 100000;
  int streams = 1, repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--backend"))
      backend = argv[i + 1];
    else if (!strcmp(argv[i], "--bytes"))
      bytes = (size_t)strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--pairs"))
      pairs = strtol(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--streams"))
      streams = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--repeat"))
      repeat = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "pool_bench: unknown option %s\n", argv[i]);
      return 64;
    }
  }
  if (pairs < 1 || streams < 1 || streams > 8 || repeat < 1) {
    fprintf(stderr, "pool_bench: --pairs >= 1, --streams 1..8, --repeat >= 1\n");
    return 64;
  }
  gf_backend_options options = {.device = -1};
  gf_backend *b = NULL;
  char why[256] = "";
  gf_status st = strcmp(backend, "cpu") == 0 ? gf_backend_cpu_create(&options, &b)
                                             : gf_backend_gpu_create(&options, &b, why, sizeof why);
  if (st != GF_OK) {
    fprintf(stderr, "pool_bench: no %s backend: %s\n", backend, why);
    return 70;
  }
  gf_stream *s[8] = {NULL};
  for (int i = 0; i < streams; i++)
    if (b->ops->stream_create(b, GF_STREAM_NORMAL, &s[i]) != GF_OK)
      return fail(b, "creating a stream");
  printf("%s\n%zu bytes, %d stream%s, %ld pairs (alloc + free), best of %d\n", b->description,
         bytes, streams, streams == 1 ? "" : "s", pairs, repeat);
  printf("%-30s %14s %14s %14s\n", "allocator", "pairs/s", "vs per-step", "vs async");
  double best[MODES] = {0};
  for (int m = 0; m < MODES; m++) {
    /* hipMalloc/hipFree synchronise the device: far fewer pairs do. */
    long n = m == PER_STEP ? (pairs / 100 > 100 ? pairs / 100 : 100) : pairs;
    for (int r = 0; r < repeat; r++) {
      double x = rate(b, s, streams, (mode)m, bytes, n);
      if (x < 0) return 1;
      if (x > best[m]) best[m] = x;
    }
  }
  for (int m = 0; m < MODES; m++)
    printf("%-30s %14.0f %14.2f %14.2f\n", mode_names[m], best[m], best[m] / best[PER_STEP],
           best[m] / best[ASYNC]);
  for (int i = 0; i < streams; i++) b->ops->stream_destroy(b, s[i]);
  b->ops->destroy(b);
  return 0;
}
