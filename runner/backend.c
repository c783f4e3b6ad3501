/* backend.c - what every backend shares: memory space names, host memory
 * available, the per-task sink. */
#include "backend.h"

#include <stdatomic.h>
#include <stdio.h>

const char *gf_space_name(gf_space space) {
  static const char *const names[GF_SPACE_COUNT] = {"device", "managed", "pinned", "host", "pool"};
  return space >= 0 && space < GF_SPACE_COUNT ? names[space] : "unknown";
}

size_t gf_host_bytes_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  fclose(f);
  return (size_t)kib * 1024;
}

void gf_task_timing_report(void *timings, const gf_op_timing *timing) {
  if (timing->tag.task < 0) return;
  gf_task_timing *t = (gf_task_timing *)timings + timing->tag.task;
  atomic_fetch_add_explicit(&t->busy_ns, timing->end_ns - timing->start_ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed);
}
