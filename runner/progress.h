/* progress.h - where the run is, while it runs.
 *
 * On a terminal, one line redrawn a few times a second: the step and the
 * steps to go, the simulated time, the kernels' GPts/s so far, the time left
 * and the output written. Elsewhere (a Slurm log, a pipe), the same as a
 * timestamped line every `interval_s` seconds. Nothing with --quiet.
 */
#ifndef GF_PROGRESS_H
#define GF_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

typedef struct gf_progress gf_progress;

/* `dt`: simulated time per step (0: unknown). NULL when out of memory. */
gf_progress *gf_progress_create(FILE *out, int terminal, double interval_s, const char *name,
                                int64_t steps, double dt);
/* After each step: `done` steps run, `points` grid points updated, `bytes`
 * written to the outputs. Prints only when it is time to. */
void gf_progress_update(gf_progress *p, int64_t done, double points, int64_t bytes);
/* Clears a terminal's line. */
void gf_progress_free(gf_progress *p);

/* A duration for people: "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min". Returns buf. */
const char *gf_format_duration(double seconds, char *buf, size_t size);

#endif
