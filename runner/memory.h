/* memory.h - every byte a run allocates on a backend, and how long it lives.
 *
 * gf_memory_create checks that the workflow's fields and its output staging
 * fit (device-side and host-side spaces counted apart), then allocates every
 * instance of every field, prepares managed memory, and copies in the
 * initial values the caller computed. Other buffers of the run (staging, the
 * check's host copy) come from gf_memory_alloc, optionally ordered on a
 * stream, and are released with the memory unless freed earlier. So one
 * place knows what is allocated, in which space, and frees it; when the
 * backend's sink wants GF_TIMED_MEMORY (a trace), it reports the bytes held
 * in a space each time they change.
 */
#ifndef GF_MEMORY_H
#define GF_MEMORY_H

#include <stddef.h>

#include "backend.h"
#include "error.h"
#include "pool.h"
#include "space.h"
#include "workflow.h"

typedef struct gf_memory gf_memory;

/* Computes field `field`'s initial value into `host` (field->bytes). */
typedef gf_status (*gf_field_init_fn)(void *user, int field, void *host);

/* Checks capacity, allocates and initialises every field instance. Reports
 * through `diag` (a field that does not fit names itself and what is
 * missing) and returns GF_INTERNAL, or the init function's status. */
gf_status gf_memory_create(gf_backend *b, const gf_workflow *wf, gf_field_init_fn init,
                           void *init_user, gf_diag *diag, gf_memory **out);

/* The data of instance `inst` of field `field` (NULL for a scratch field). */
void *gf_memory_instance(const gf_memory *m, int field, int inst);

/* A run buffer of `bytes` in `space`; on `stream` when not NULL (ordered
 * after the work issued there so far). Freed by gf_memory_free or with the
 * memory. GF_INTERNAL with the backend's reason in b->error on failure. */
gf_status gf_memory_alloc(gf_memory *m, gf_space space, size_t bytes, gf_stream *stream,
                          void **out);
void gf_memory_free(gf_memory *m, void *ptr, gf_stream *stream);

/* A temporary of `bytes` in `space` from the run's pool, for work issued to
 * `stream` from now on; freed after the work issued to `stream` so far
 * (every use ordered before it). `hint`: the temporary's memory last time
 * (NULL: none), taken back at once if it can be (pool.h). GF_INTERNAL with
 * the reason in b->error. */
gf_status gf_memory_temp_alloc(gf_memory *m, gf_space space, size_t bytes, gf_stream *stream,
                               const void *hint, void **out);
gf_status gf_memory_temp_free(gf_memory *m, gf_space space, void *ptr, gf_stream *stream);

/* The pools' statistics, summed over the spaces; 0 when the run took no
 * temporary. */
int gf_memory_pool_stats(const gf_memory *m, gf_pool_stats *out);

/* Frees everything still allocated. The backend must be idle. */
void gf_memory_destroy(gf_memory *m);

#endif
