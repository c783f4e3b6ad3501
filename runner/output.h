/* output.h - snapshot files written while the run goes on.
 *
 * Each output task owns one file: a stack of `planes` planes in C order, the
 * seed's array_out.dat layout. Planes reach the file through a fixed number of
 * staging buffers (pinned memory on a GPU, one allocation each, so no copy ever
 * targets an address inside a pinned allocation): the executor copies a field
 * instance into a free buffer on an IO stream and records the buffer's event;
 * the writer thread waits for that event, writes the plane at its offset and
 * frees the buffer. Host memory therefore does not grow with the planes.
 *
 * Files are written under a temporary name in the output folder and renamed
 * to their final names only when complete, each with a JSON sidecar
 * (NAME.json) that describes the layout and which planes hold data.
 */
#ifndef GF_OUTPUT_H
#define GF_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "error.h"
#include "workflow.h"

typedef struct gf_writer gf_writer;

/* Creates the output folder if needed, opens a temporary file per output task
 * and allocates the staging buffers. GF_CANTCREATE when the folder or a file
 * cannot be created. */
gf_status gf_writer_create(gf_backend *backend, const gf_workflow *wf, const char *out_dir,
                           gf_diag *diag, gf_writer **out);

/* Waits for a free staging buffer. Fails (GF_IOERR) once the writer thread has
 * failed, so the time loop stops at the next output. */
gf_status gf_writer_acquire(gf_writer *w, int *slot, void **buffer, gf_event **ready);

/* Hands a filled buffer to the writer thread: `task`'s plane `plane`. */
void gf_writer_submit(gf_writer *w, int slot, int task, int64_t plane);

/* GF_OK unless the writer thread has failed (it has reported why). */
gf_status gf_writer_status(gf_writer *w);

/* Metadata written into every sidecar. */
typedef struct gf_run_info {
  const char *backend; /* "cpu", "gpu" */
  const char *device;  /* backend description */
  char *resolved_yaml; /* the effective workflow */
} gf_run_info;

/* Waits for every submitted plane, makes the files durable, writes sidecars
 * and renames everything to its final name. With `ok` == 0 (the run failed)
 * the temporary files are removed instead and nothing appears. */
gf_status gf_writer_finish(gf_writer *w, int ok, const gf_run_info *info);

void gf_writer_destroy(gf_writer *w);

/* Writes `text` to DIR/NAME atomically (temporary file, fsync, rename). */
gf_status gf_write_file_atomic(const char *dir, const char *name, const char *text, gf_diag *diag);

/* Appends `s` to `buf` as a JSON string literal (quotes and escapes). */
void gf_json_string(char **buf, size_t *len, size_t *cap, const char *s);
/* printf-append to a growing buffer. */
void gf_buf_printf(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
