/* bench_box.h - the 3-D baselines' check (march_copy, ring_move): a walk
 * of the box [lo, hi)^3 of an n^3 field copies each of its cells, checked
 * once, cell by cell, before it is timed. */
#ifndef GF_BENCH_BOX_H
#define GF_BENCH_BOX_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"

/* A host buffer of `bytes` for box_check (the field as filled, or the
 * copy read back); exits when the host has no such memory. */
static void *box_host(size_t bytes) {
  void *p = malloc(bytes);
  if (!p) {
    fprintf(stderr, "out of host memory for a field of %zu bytes\n", bytes);
    exit(1);
  }
  return p;
}

/* Fills the n^3 field `device` and its host copy `host` with values of T,
 * each exact in f32 and none 0. */
template <typename T>
static void box_fill(T *device, T *host, int64_t n, hipStream_t stream) {
  for (int64_t e = 0; e < n * n * n; e++) host[e] = (T)(e % 1000003 + 1);
  BENCH_CHECK(
      hipMemcpyAsync(device, host, (size_t)(n * n * n) * sizeof(T), hipMemcpyHostToDevice, stream));
}

/* Runs `walk` (on `stream`) once into `out`, zeroed first, and exits
 * naming the first wrong cell unless each cell of the box holds in's value
 * and each cell outside holds 0 or in's own (a whole vector's store at the
 * box's edge). `in_host` holds what `in` was filled with; `out_host`, n^3
 * of T, takes the copy read back. */
template <typename T, typename Walk>
static void box_check(Walk walk, const char *what, hipStream_t stream, T *out, const T *in_host,
                      T *out_host, int64_t n, int64_t lo, int64_t hi) {
  const size_t bytes = (size_t)(n * n * n) * sizeof(T);
  BENCH_CHECK(hipMemsetAsync(out, 0, bytes, stream));
  walk();
  BENCH_CHECK(hipGetLastError());
  BENCH_CHECK(hipMemcpyAsync(out_host, out, bytes, hipMemcpyDeviceToHost, stream));
  BENCH_CHECK(hipStreamSynchronize(stream));
  for (int64_t e = 0; e < n * n * n; e++) {
    const int64_t i = e / (n * n), y = e / n % n, x = e % n;
    const bool inside = i >= lo && i < hi && y >= lo && y < hi && x >= lo && x < hi;
    if (out_host[e] != in_host[e] && (inside || out_host[e] != 0)) {
      fprintf(stderr, "%s: cell (%lld, %lld, %lld) %s is %g, not %g%s\n", what, (long long)i,
              (long long)y, (long long)x, inside ? "of the box" : "outside the box",
              (double)out_host[e], (double)in_host[e], inside ? "" : " or 0");
      exit(1);
    }
  }
}

#endif
