/* backend.c - what every backend shares: memory space names, host memory available. */
#include "backend.h"

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
