/* bench_timing.h - what the hand-written baselines (scripts/bench/, NAME.hip)
 * share: a checked HIP call, and the timer. */
#ifndef GF_BENCH_TIMING_H
#define GF_BENCH_TIMING_H

#include <stdio.h>
#include <stdlib.h>

#include "gf_hip.h"

#define BENCH_CHECK(call)                                                  \
  do {                                                                     \
    hipError_t bench_err_ = (call);                                        \
    if (bench_err_ != hipSuccess) {                                        \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,    \
              hipGetErrorName(bench_err_), hipGetErrorString(bench_err_)); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

/* Best ms a call of `run` (which issues its work on `stream`) takes: one
 * event pair, the only events created, around each of `reps` runs of
 * `calls` calls, after one such run as a warm-up. */
template <typename Run>
static float best_ms(Run run, int calls, int reps, hipStream_t stream) {
  hipEvent_t start, stop;
  BENCH_CHECK(hipEventCreateWithFlags(&start, hipEventDefault));
  BENCH_CHECK(hipEventCreateWithFlags(&stop, hipEventDefault));
  float best = 1e30f;
  for (int r = 0; r <= reps; r++) {
    BENCH_CHECK(hipEventRecord(start, stream));
    for (int c = 0; c < calls; c++) run();
    BENCH_CHECK(hipGetLastError());
    BENCH_CHECK(hipEventRecord(stop, stream));
    BENCH_CHECK(hipEventSynchronize(stop));
    float ms = 0.0f;
    BENCH_CHECK(hipEventElapsedTime(&ms, start, stop));
    if (r > 0 && ms < best) best = ms;
  }
  BENCH_CHECK(hipEventDestroy(start));
  BENCH_CHECK(hipEventDestroy(stop));
  return best / calls;
}

#endif
