/* progress.c - the progress line. */
#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"

struct gf_progress {
  FILE *out;
  int terminal;
  double interval_s;
  char name[128];
  int64_t steps;
  double dt;
  double start, last;
  int drawn; /* a terminal line is on screen */
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *gf_format_duration(double s, char *buf, size_t size) {
  if (s < 1)
    snprintf(buf, size, "%.0f ms", s * 1e3);
  else if (s < 60)
    snprintf(buf, size, "%.1f s", s);
  else if (s < 3600)
    snprintf(buf, size, "%d min %02d s", (int)(s / 60), (int)s % 60);
  else
    snprintf(buf, size, "%d h %02d min", (int)(s / 3600), (int)(s / 60) % 60);
  return buf;
}

gf_progress *gf_progress_create(FILE *out, int terminal, double interval_s, const char *name,
                                int64_t steps, double dt) {
  gf_progress *p = gf_calloc(1, sizeof *p);
  if (!p) return NULL;
  p->out = out;
  p->terminal = terminal;
  p->interval_s = terminal ? 0.25 : interval_s;
  snprintf(p->name, sizeof p->name, "%s", name);
  p->steps = steps;
  p->dt = dt;
  p->start = p->last = now_s();
  return p;
}

void gf_progress_update(gf_progress *p, int64_t done, double points, int64_t bytes) {
  double now = now_s();
  if (now - p->last < p->interval_s) return;
  p->last = now;
  double elapsed = now - p->start;
  char line[320], left[32], sim[48] = "", written[32];
  double pct = p->steps ? 100.0 * (double)done / (double)p->steps : 100;
  gf_format_duration(done ? elapsed * (double)(p->steps - done) / (double)done : 0, left,
                     sizeof left);
  if (p->dt > 0) snprintf(sim, sizeof sim, ", t = %.6g", (double)done * p->dt);
  gf_format_bytes((double)bytes, written, sizeof written);
  snprintf(line, sizeof line, "step %lld of %lld (%.1f%%)%s, %.3g GPts/s, %s to go, %s written",
           (long long)done, (long long)p->steps, pct, sim,
           elapsed > 0 ? points / elapsed / 1e9 : 0.0, left, written);
  if (p->terminal) {
    fprintf(p->out, "\r%s: %s\033[K", p->name, line);
    p->drawn = 1;
  } else {
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
    fprintf(p->out, "gflow: %s %s: %s\n", stamp, p->name, line);
  }
  fflush(p->out);
}

void gf_progress_free(gf_progress *p) {
  if (!p) return;
  if (p->drawn) {
    fputs("\r\033[K", p->out);
    fflush(p->out);
  }
  free(p);
}
