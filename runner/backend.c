/* backend.c - what every backend shares: the names of the memory spaces. */
#include "backend.h"

const char *gf_space_name(gf_space space) {
  static const char *const names[GF_SPACE_COUNT] = {"device", "managed", "pinned", "host", "pool"};
  return space >= 0 && space < GF_SPACE_COUNT ? names[space] : "unknown";
}
