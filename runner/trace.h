/* trace.h - a timeline of the run, as a Chrome trace / Perfetto JSON file.
 *
 * The trace listens on the operation sink (backend.h): every launch and copy
 * a backend timed, and the host's own work the executor reports, becomes a
 * slice on the track of its stream ("compute", "io[3]") or on the host track,
 * named by its task, with the step and the bytes in its args (a launch's
 * also its kernel's scalar arguments). The executor adds the event
 * dependencies it issues (a stream waiting for an event recorded after
 * another operation) as flow arrows. Counter samples (GF_TIMED_MEMORY, the
 * bytes held in each memory space; GF_TIMED_STAGING, the output staging
 * buffers in use) become counter tracks. Times are the host's
 * CLOCK_MONOTONIC, on which the GPU backend places its event times too, so
 * device and host tracks share one time base. Open the file in
 * ui.perfetto.dev or chrome://tracing.
 *
 * Recording is thread-safe (the CPU backend reports from its stream threads)
 * and bounded: only steps in [first_step, end_step) are kept, and at most
 * GF_TRACE_MAX_SLICES slices; what was left out is said in the file.
 */
#ifndef GF_TRACE_H
#define GF_TRACE_H

#include <stdint.h>

#include "backend.h"
#include "error.h"

#define GF_TRACE_MAX_SLICES 2000000

typedef struct gf_trace gf_trace;

/* An operation as the flow arrows name it: a task's kind of operation at a
 * step on a stream. */
typedef struct gf_trace_key {
  int task;
  int64_t step;
  int stream;
  int kind; /* GF_TIMED_* */
} gf_trace_key;

/* `stream_names[count]` name the tracks; `task_names[ntasks]` the slices,
 * `task_details[ntasks]` ("kernel wave2d_4o") go into their args. */
gf_trace *gf_trace_create(const char *const *stream_names, int nstreams,
                          const char *const *task_names, const char *const *task_details,
                          int ntasks, const char *process_name, int64_t first_step,
                          int64_t end_step);
void gf_trace_free(gf_trace *trace);

/* A gf_op_sink report function; `user` is the trace. */
void gf_trace_report(void *trace, const gf_op_timing *timing);

/* `consumer` waits (through an event) for `producer`. */
void gf_trace_flow(gf_trace *trace, gf_trace_key producer, gf_trace_key consumer);

/* The launch `key` ran `kernel` with the argument struct `args`: its scalar
 * parameters (GF_PARAM_REAL, _INT; the first GF_TRACE_MAX_ARGS) go into the
 * launch's slice by name. */
#define GF_TRACE_MAX_ARGS 8
void gf_trace_launch_args(gf_trace *trace, gf_trace_key key, const gf_kernel *kernel,
                          const void *args);

/* Writes the JSON to `path` atomically. Under MPI (comm of several ranks;
 * NULL: one process) every rank calls it: each rank is a process of the one
 * file, and rank 0 writes it. */
typedef struct gf_comm gf_comm;
gf_status gf_trace_write(gf_trace *trace, const char *path, gf_comm *comm, gf_diag *diag);

#endif
