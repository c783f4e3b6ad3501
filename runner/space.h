/* space.h - the memory spaces a field can live in, named once.
 *
 * Both the model (a field's `space:`) and the backends (where alloc puts
 * bytes) speak of spaces; the names and the host's free memory live in
 * memory.c, which owns allocations and their lifetimes.
 */
#ifndef GF_SPACE_H
#define GF_SPACE_H

#include <stddef.h>

typedef enum gf_space {
  GF_SPACE_DEVICE = 0, /* explicit device memory */
  GF_SPACE_MANAGED,    /* managed (unified) memory */
  GF_SPACE_PINNED,     /* page-locked host memory */
  GF_SPACE_HOST,       /* ordinary pageable host memory */
  GF_SPACE_POOL,       /* stream-ordered pool (device memory) */
  GF_SPACE_COUNT
} gf_space;

/* Where a run's temporaries (scratch fields) come from: `memory: {pool:
 * {strategy: ...}}`; pool.h says what each one does. */
typedef enum gf_pool_strategy {
  GF_POOL_RESOURCE_AWARE = 0,
  GF_POOL_ASYNC,
  GF_POOL_NAIVE,
  GF_POOL_STRATEGY_COUNT
} gf_pool_strategy;

/* "resource-aware", "async", "naive"; indexed by gf_pool_strategy. */
extern const char *const gf_pool_strategy_names[GF_POOL_STRATEGY_COUNT];

/* "device", "managed", ...; indexed by gf_space. */
extern const char *const gf_space_names[GF_SPACE_COUNT];

const char *gf_space_name(gf_space space);

/* Host memory available now (MemAvailable), 0 when unknown. */
size_t gf_host_bytes_available(void);

#endif
