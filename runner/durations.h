/* durations.h - quantiles of many durations (the loop's steps) in bounded
 * memory: a histogram of 256 buckets an octave, so a quantile is within
 * 0.2% of the exact one, whatever the number of durations.
 *
 *   gf_durations d;
 *   gf_durations_init(&d);           (d.counts NULL: out of memory)
 *   gf_durations_add(&d, ns);        per duration, O(1)
 *   gf_durations_quantile(&d, 0.5);  the median, in ns (0: none added)
 *   gf_durations_free(&d);
 */
#ifndef GF_DURATIONS_H
#define GF_DURATIONS_H

#include <stdint.h>

typedef struct gf_durations {
  int64_t *counts; /* per bucket (durations.c) */
  int64_t n;       /* durations added */
} gf_durations;

void gf_durations_init(gf_durations *d);
/* `ns` below 1 counts as 1; above 2^40 (18 minutes) as 2^40. */
void gf_durations_add(gf_durations *d, int64_t ns);
/* The duration below which a fraction q (0..1) of those added lie: the
 * middle of its bucket. 0 when none was added. */
double gf_durations_quantile(const gf_durations *d, double q);
void gf_durations_free(gf_durations *d);

#endif
