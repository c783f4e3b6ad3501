/* output.h - snapshot files written while the run goes on.
 *
 * Each file of the workflow (wf->files, declared by the output tasks) is a stack of `planes` planes
 * in C order, the seed's array_out.dat layout. Planes reach the file through a fixed number of
 * staging buffers (pinned memory on a GPU, one allocation each, so no copy ever
 * targets an address inside a pinned allocation): the executor copies a field
 * instance into a free buffer on an IO stream and records the buffer's event;
 * the writer thread waits for that event, writes the plane at its offset and
 * frees the buffer. Host memory therefore does not grow with the planes.
 *
 * Under MPI (gf_comm of several ranks) every rank writes its block of each
 * plane into the one file (MPI-IO, the grid's layout), and rank 0 alone
 * locks the folder, checks its space, writes the sidecars and renames.
 *
 * Files are written under a temporary name in the output folder and renamed
 * to their final names only at the end, each with a JSON sidecar (NAME.json)
 * that describes the layout, which planes hold data and whether the run
 * completed.
 */
#ifndef GF_OUTPUT_H
#define GF_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "error.h"
#include "memory.h"
#include "workflow.h"

typedef struct gf_writer gf_writer;

/* Creates the output folder if needed and locks it for the run (its
 * .gflow.lock, flock'ed until gf_writer_destroy: a folder another gflow holds
 * is refused with that run's pid), checks that the outputs at full size fit
 * in the free space of its file system (unless `force`), opens a temporary
 * file per output task and allocates the staging buffers from `memory`
 * (which frees them with itself). When the backend's sink wants
 * GF_TIMED_STAGING, the writer reports the buffers in use as they change. GF_CANTCREATE when
 * the folder or a file cannot be created, is locked, or lacks the space. */
typedef struct gf_comm gf_comm;
gf_status gf_writer_create(gf_backend *backend, gf_memory *memory, const gf_workflow *wf,
                           const char *out_dir, int force, gf_comm *comm, gf_diag *diag,
                           gf_writer **out);

/* Waits for a free staging buffer. Fails (GF_IOERR) once the writer thread has
 * failed, so the time loop stops at the next output. */
gf_status gf_writer_acquire(gf_writer *w, int *slot, void **buffer, gf_event **ready);

/* Hands a filled buffer to the writer thread: plane `plane` of wf->files[file],
 * the output of step `step`. When the backend has a sink, the writer reports
 * each plane it writes to it (GF_TIMED_WRITE). */
void gf_writer_submit(gf_writer *w, int slot, int file, int64_t plane, int64_t step);

/* Hands a buffer filled with `count` planes of wf->files[file], one after
 * another (a batched output's ring, task_output.c), to the writer thread:
 * plane planes[i] (-1: leave that one out), the output of step steps[i]. */
void gf_writer_submit_batch(gf_writer *w, int slot, int file, int count, const int64_t *planes,
                            const int64_t *steps);

/* Bytes of planes written to the files so far (any thread may ask). */
int64_t gf_writer_bytes_written(gf_writer *w);

/* GF_OK unless the writer thread has failed (it has reported why). */
gf_status gf_writer_status(gf_writer *w);

/* How the time loop ended, for the sidecars. */
typedef enum gf_run_end {
  GF_END_COMPLETE,    /* every step ran */
  GF_END_INTERRUPTED, /* a signal stopped it at a step boundary */
  GF_END_CHECK,       /* the numerical check stopped it */
} gf_run_end;

/* Metadata written into every sidecar. */
typedef struct gf_run_info {
  const char *backend; /* "cpu", "gpu" */
  const char *device;  /* backend description */
  char *resolved_yaml; /* the effective workflow */
  gf_run_end end;
  int64_t steps_run;      /* steps 0 .. steps_run - 1 ran; the files hold their outputs */
  const char *stopped_by; /* GF_END_INTERRUPTED: "SIGINT"; GF_END_CHECK: the check's message */
} gf_run_info;

/* Waits for every submitted plane, checks that each temporary file is still
 * there, gives it its full size (planes never written read as zeros), makes
 * it durable, writes the sidecars and renames each file, then its sidecar,
 * to their final names. A run that stopped early (info->end) still gets its
 * files, marked `"complete": false`. With `ok` == 0 (the run failed), or when
 * any of this fails, nothing keeps a final name: temporary files are removed
 * and so are files this call already renamed. `before_rename` (may be NULL)
 * runs once the data and sidecars are durable under their temporary names and
 * before any rename (the executor writes timings.json there); its failure
 * fails the whole finish, so no output appears without it. */
gf_status gf_writer_finish(gf_writer *w, int ok, const gf_run_info *info,
                           gf_status (*before_rename)(void *user), void *user);

/* After gf_writer_finish: what the files hold, one line for a message,
 * e.g. "array_out.dat planes [[2, 56]]". Caller frees; NULL when out of
 * memory. */
char *gf_writer_summary(const gf_writer *w);

void gf_writer_destroy(gf_writer *w);

/* For checkpoints (checkpoint.c). gf_writer_checkpoint waits until every
 * plane handed over is in its file, makes the files durable and gives each
 * temporary the name a checkpoint records, `.NAME.partial` (no pid: no later
 * run's own temporary can take that name); from then on neither a failure
 * nor gf_writer_destroy removes the temporaries. GF_IOERR when the writer
 * failed or a file cannot be synced or renamed. gf_writer_file_state names
 * file `file`'s temporary (inside the folder) and its bitmap of planes
 * written (plane p at bit p % 8 of byte p / 8). gf_writer_adopt, right after
 * gf_writer_create, continues file `file` in the checkpoint's temporary
 * `temp_name` (or under its final name, which a stop after the checkpoint
 * gave it; its sidecar is then removed) with the planes `written`, so a
 * restarted run appends to what the first one wrote; GF_NOINPUT when the
 * file is gone or shorter than its planes. */
gf_status gf_writer_checkpoint(gf_writer *w);
void gf_writer_file_state(const gf_writer *w, int file, const char **temp_name,
                          const uint8_t **written);
gf_status gf_writer_adopt(gf_writer *w, int file, const char *temp_name, const uint8_t *written);

/* Creates the folder `path` and its parents as needed (mkdir -p);
 * GF_CANTCREATE, reported as `cannot create output folder PATH: why`. */
gf_status gf_make_dirs(const char *path, gf_diag *diag);

/* Removes DIR/NAME (taking back what a failed finish made stale); needs no memory. */
void gf_remove_file(const char *dir, const char *name);

/* Writes `text` to DIR/NAME atomically (temporary file, fsync, rename).
 * `text` NULL (a gf_text that ran out of memory) reports
 * `out of memory: writing NAME` and writes nothing. */
gf_status gf_write_file_atomic(const char *dir, const char *name, const char *text, gf_diag *diag);

/* A growing text buffer is three variables, `char *buf = NULL; size_t len =
 * 0, cap = 0;`. Out of memory, the buffer is freed, *buf becomes NULL and
 * stays so (further appends do nothing): the builder checks *buf once at the
 * end. */

#endif
