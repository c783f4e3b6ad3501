/* backend.h - the device layer: one table of operations per backend.
 *
 * The executor speaks only to this table (as Open MPI's accelerator framework
 * does). The CPU backend runs every stream as a worker thread with its own
 * in-order queue; the GPU backend maps each operation onto the HIP runtime.
 *
 * Semantics are those of HIP streams and events:
 *  - work on one stream runs in issue order;
 *  - event_record captures "all work issued to the stream so far"; the event
 *    completes when that work has; re-recording replaces what it captures;
 *  - stream_wait_event makes later work on the stream wait for what the event
 *    captured at the time of the call (an unrecorded event is complete);
 *  - copy_async copies `bytes` between any two allocations of this backend.
 * Every operation returns GF_OK or GF_INTERNAL; on failure the backend has
 * written the cause (API call, error name and text) into `error`, and the
 * caller adds which task, stream and step it was.
 */
#ifndef GF_BACKEND_H
#define GF_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gflow.h"
#include "space.h"

typedef struct gf_backend gf_backend;
typedef struct gf_stream gf_stream;
typedef struct gf_event gf_event;

/* What an operation belongs to, for timing and for error messages. */
typedef struct gf_tag {
  int task;     /* index into the workflow's tasks, -1 for gflow's own work */
  int64_t step; /* the time step, -1 outside the loop */
} gf_tag;

/* Busy time of one task, accumulated by the backend when timing is on. */
typedef struct gf_task_timing {
  _Atomic int64_t busy_ns;
  _Atomic int64_t count;
} gf_task_timing;

typedef struct gf_backend_ops {
  gf_status (*stream_create)(gf_backend *b, gf_stream **out);
  void (*stream_destroy)(gf_backend *b, gf_stream *s);
  gf_status (*stream_synchronize)(gf_backend *b, gf_stream *s);

  gf_status (*event_create)(gf_backend *b, gf_event **out);
  void (*event_destroy)(gf_backend *b, gf_event *e);
  gf_status (*event_record)(gf_backend *b, gf_event *e, gf_stream *s);
  gf_status (*stream_wait_event)(gf_backend *b, gf_stream *s, gf_event *e);
  gf_status (*event_synchronize)(gf_backend *b, gf_event *e);

  gf_status (*alloc)(gf_backend *b, gf_space space, size_t bytes, void **out);
  void (*free)(gf_backend *b, gf_space space, void *ptr);
  /* Bytes free in a space now (0 when unknown). */
  size_t (*bytes_free)(gf_backend *b, gf_space space);
  /* Managed memory, before the loop: advise the device as preferred location
   * (and read-mostly), and with `prefetch` move the pages there now. NULL on
   * backends where managed memory is plain host memory. */
  gf_status (*managed_prepare)(gf_backend *b, void *ptr, size_t bytes, int prefetch,
                               int read_mostly);

  gf_status (*copy_async)(gf_backend *b, gf_stream *s, void *dst, const void *src, size_t bytes,
                          gf_tag tag);
  /* `args` is copied before the call returns. */
  gf_status (*launch)(gf_backend *b, gf_stream *s, const gf_kernel *kernel, const void *args,
                      gf_tag tag);

  /* Waits for all work on all streams. */
  gf_status (*synchronize)(gf_backend *b);
  void (*destroy)(gf_backend *b);
} gf_backend_ops;

struct gf_backend {
  const gf_backend_ops *ops;
  const char *name;                   /* "cpu", "gpu" */
  char description[256];              /* one line for the start-up banner */
  char error[512];                    /* cause of the last failure */
  gf_task_timing *timing;             /* per task, or NULL: set by the executor */
  int can_run_kernels_on_host_memory; /* 1 on the CPU backend */
};

typedef struct gf_backend_options {
  int device;      /* GPU index, -1: from SLURM_LOCALID / OMPI_COMM_WORLD_LOCAL_RANK, else 0 */
  int threads;     /* CPU: OpenMP threads per kernel, 0: all cores */
  int queue_depth; /* CPU: operations a stream queue holds before enqueue blocks, 0: 1024 */
  int timing;      /* 1: per-task busy time into gf_backend.timing */
} gf_backend_options;

/* Creates the CPU backend. Always available. */
gf_status gf_backend_cpu_create(const gf_backend_options *options, gf_backend **out);

/* Creates the GPU backend; GF_INTERNAL with a reason in `why` when gflow was
 * built without GPU support or no device answers. */
gf_status gf_backend_gpu_create(const gf_backend_options *options, gf_backend **out, char *why,
                                size_t why_size);

#endif
