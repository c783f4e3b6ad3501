/* test_durations.c - quantiles of durations (runner/durations.c) against
 * the exact order statistics of the same durations, sorted. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "durations.h"

static int by_value(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The value of rank floor(q (n - 1)) + 1 among n sorted values: what
 * gf_durations_quantile estimates. */
static int64_t exact(const int64_t *sorted, int64_t n, double q) {
  return sorted[(int64_t)(q * (double)(n - 1))];
}

/* Every quantile asked within half a bucket (1/512) of the exact one. */
static void check_against_sorted(int64_t *values, int64_t n) {
  gf_durations d;
  gf_durations_init(&d);
  CHECK(d.counts != NULL);
  if (!d.counts) return;
  for (int64_t i = 0; i < n; i++) gf_durations_add(&d, values[i]);
  CHECK_INT(d.n, n);
  qsort(values, (size_t)n, sizeof *values, by_value);
  const double qs[] = {0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.99, 1};
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    double want = (double)exact(values, n, qs[i]);
    CHECK_NEAR(gf_durations_quantile(&d, qs[i]), want, want / 512.0);
  }
  gf_durations_free(&d);
  CHECK(d.counts == NULL);
}

static void test_none(void) {
  gf_durations d;
  gf_durations_init(&d);
  CHECK(d.counts != NULL);
  CHECK_NEAR(gf_durations_quantile(&d, 0.5), 0, 0);
  gf_durations_free(&d);
}

/* A loop's steps: most near 18 us, some waiting far longer. */
static void test_steps(void) {
  enum { N = 20000 };
  int64_t *values = malloc(N * sizeof *values);
  CHECK(values != NULL);
  if (!values) return;
  uint64_t x = 88172645463325252u; /* xorshift64 */
  for (int i = 0; i < N; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int64_t jitter = (int64_t)(x % 4000);
    values[i] = i % 16 == 15 ? 200000 + jitter * 50 : 17000 + jitter;
  }
  check_against_sorted(values, N);
  free(values);
}

/* Every octave from 1 ns to 2^40 ns (18 minutes), the short ones below 256
 * too. */
static void test_every_scale(void) {
  enum { N = 40 * 7 };
  int64_t values[N];
  int k = 0;
  for (int e = 0; e < 40; e++)
    for (int j = 0; j < 7; j++) {
      int64_t base = (int64_t)1 << e;
      values[k++] = base + (base - 1) * j / 7;
    }
  check_against_sorted(values, N);
  /* Each value alone is its own median. */
  for (int i = 0; i < N; i++) {
    gf_durations d;
    gf_durations_init(&d);
    gf_durations_add(&d, values[i]);
    CHECK_NEAR(gf_durations_quantile(&d, 0.5), (double)values[i], (double)values[i] / 512.0);
    gf_durations_free(&d);
  }
}

/* Below 1 ns counts as 1, beyond 2^40 ns as 2^40. */
static void test_clamped(void) {
  gf_durations d;
  gf_durations_init(&d);
  gf_durations_add(&d, 0);
  gf_durations_add(&d, -5);
  CHECK_NEAR(gf_durations_quantile(&d, 1), 1, 1.0 / 256);
  gf_durations_add(&d, INT64_MAX);
  CHECK_NEAR(gf_durations_quantile(&d, 1), ldexp(1, 40), ldexp(1, 40) / 256);
  CHECK_INT(d.n, 3);
  gf_durations_free(&d);
}

int main(void) {
  RUN(test_none);
  RUN(test_steps);
  RUN(test_every_scale);
  RUN(test_clamped);
  return check_summary();
}
