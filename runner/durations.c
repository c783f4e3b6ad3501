/* durations.c - a log-scale histogram of durations (durations.h).
 *
 * A duration v >= 1 ns falls in octave e = floor(log2 v) and, within it, in
 * sub-bucket m, the 8 bits of v after its leading one: bucket e * 256 + m
 * spans [(256 + m) 2^e / 256, (257 + m) 2^e / 256), 1/256 to 1/512 of its
 * values wide. */
#include "durations.h"

#include <stdlib.h>

#include "error.h" /* gf_calloc */

#define SUB_BITS 8
#define SUB (1 << SUB_BITS)
#define OCTAVES 41 /* 1 ns .. 2^40 ns */
#define BUCKETS (OCTAVES * SUB)

void gf_durations_init(gf_durations *d) {
  d->n = 0;
  d->counts = gf_calloc(BUCKETS, sizeof *d->counts);
}

static int bucket_of(int64_t ns) {
  uint64_t v = ns < 1 ? 1 : ns > ((int64_t)1 << 40) ? (uint64_t)1 << 40 : (uint64_t)ns;
  int e = 63 - __builtin_clzll(v);
  int m = e >= SUB_BITS ? (int)((v >> (e - SUB_BITS)) & (SUB - 1))
                        : (int)((v << (SUB_BITS - e)) & (SUB - 1));
  return e * SUB + m;
}

void gf_durations_add(gf_durations *d, int64_t ns) {
  d->counts[bucket_of(ns)]++;
  d->n++;
}

double gf_durations_quantile(const gf_durations *d, double q) {
  if (d->n == 0) return 0;
  /* the rank of the duration asked for, 1 .. n */
  int64_t rank = (int64_t)(q * (double)(d->n - 1)) + 1, seen = 0;
  int b = 0;
  while (b < BUCKETS - 1 && (seen += d->counts[b]) < rank) b++;
  int e = b / SUB, m = b % SUB;
  return ((double)(SUB + m) + 0.5) / SUB * (double)((int64_t)1 << e);
}

void gf_durations_free(gf_durations *d) {
  free(d->counts);
  d->counts = NULL;
  d->n = 0;
}
