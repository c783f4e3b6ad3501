/* output_format.h - how an output file lies on disk: one table of
 * operations per `format:` (raw in output_raw.c, hdf5 in output_hdf5.c),
 * driven by the writer (output.c).
 *
 * The writer owns everything the formats share: the staging buffers and the
 * writer thread, the temporary name and the rename, the bit per plane that
 * says which planes hold data, and the order in which files and sidecars
 * take their final names. A format owns its file between `open` and
 * `finish`: how a plane (or a block of one) reaches it, what metadata it
 * carries, and its sidecar, the text file NAME + `sidecar_suffix` that
 * describes it.
 */
#ifndef GF_OUTPUT_FORMAT_H
#define GF_OUTPUT_FORMAT_H

#include <stdint.h>

#include "comm.h"
#include "output.h"
#include "text.h"

/* One output file as its format sees it. */
typedef struct gf_out_target {
  const gf_workflow *wf;
  const gf_file *file;   /* wf->files[i]: name, field, planes, format */
  const char *dir;       /* the output folder */
  const char *temp_path; /* DIR/.NAME.partial-PID, where it lies until finished */
  /* This process's part of each plane (comm.h): its staging buffers hold a
   * local array, of which it writes the box [lo, hi) to cells origin + lo ..
   * origin + hi - 1 of the plane. One process: the whole plane. */
  gf_comm_block block;
  gf_comm *comm; /* the run's processes; with several, every rank writes its block of one file */
  gf_diag *diag; /* for messages, from any thread */
} gf_out_target;

/* What the file holds at the end, for finish and the sidecar. */
typedef struct gf_out_end {
  const gf_run_info *info; /* how the run ended, the resolved workflow */
  const uint8_t *written;  /* a bit per plane: bit p of byte p/8, set when plane p holds data */
  int64_t nwritten;        /* planes with their bit set */
} gf_out_end;

/* Bit `plane` of a bit per plane (gf_out_end.written). */
static inline int gf_out_plane_written(const uint8_t *written, int64_t plane) {
  return (written[plane >> 3] >> (plane & 7)) & 1;
}

typedef struct gf_out_format {
  const char *name;           /* as `format:` names it */
  const char *sidecar_suffix; /* ".json": array_out.dat.json */
  double bytes_per_plane; /* on disk beyond the plane's values, sidecar included (an estimate) */
  /* Creates the temporary file t->temp_path (`t` outlives the state);
   * GF_CANTCREATE, reported, with *state untouched and nothing left open.
   * Under MPI every rank calls open, finish and close of a file together. */
  gf_status (*open)(const gf_out_target *t, void **state);
  /* On the writer thread, one call at a time: `data` (an array of
   * t->block.local cells) holds this process's part of plane `plane`, the
   * output of step `step`. GF_IOERR, reported. */
  gf_status (*write)(void *state, int64_t plane, int64_t step, const void *data);
  /* Optional (NULL: `write` per plane): `count` consecutive planes from
   * `plane` (of steps steps[0 .. count - 1]), their parts one after another
   * in `data`, in as few writes as the format can. */
  gf_status (*write_run)(void *state, int64_t plane, int count, const int64_t *steps,
                         const void *data);
  /* After the last write: the file at its full size with its metadata,
   * durable and closed, still under its temporary name. GF_IOERR, reported. */
  gf_status (*finish)(void *state, const gf_out_end *end);
  /* The sidecar's text, after finish; NULL when out of memory. Caller frees. */
  char *(*sidecar)(void *state, const gf_out_end *end);
  /* Closes what is still open (a run given up) and frees the state; never
   * removes a file, the writer does. */
  void (*close)(void *state);
  /* Checkpoints (checkpoint.c; NULL: this format cannot be checkpointed):
   * `sync` makes the planes written so far durable (the writer then renames
   * the file, which the format writes on); `adopt`, right after open, goes
   * on writing the checkpoint's file at `path` instead of the new one. */
  gf_status (*sync)(void *state);
  gf_status (*adopt)(void *state, const char *path);
} gf_out_format;

extern const gf_out_format gf_out_raw, gf_out_hdf5;

/* Every format, indexed by gf_file.format; raw, the seed's, is 0, the default. */
extern const gf_out_format *const gf_out_formats[];
extern const int gf_out_format_count;

/* Shared by the formats (output.c). */
const char *gf_out_error_text(int err); /* strerror, and what EFBIG means here */
int gf_out_write_all(int fd, const void *data, size_t bytes, int64_t offset); /* pwrite, whole */
/* One process's block: the whole plane of `field`. */
gf_comm_block gf_out_whole_block(const gf_field *field);
/* 1 when `b` is the whole plane, in one piece (one process's). */
int gf_out_block_is_whole(const gf_comm_block *b);
/* Bytes of one plane in the file: the global cells. */
int64_t gf_out_plane_bytes(const gf_comm_block *b, gf_dtype dtype);
/* The workflow's parameter `dt` in *dt: 1 when there is one, else 0. */
int gf_out_dt(const gf_workflow *wf, double *dt);
/* The planes that hold data as [first, last] ranges: `[[2, 637]]`. */
void gf_out_append_ranges(gf_text *t, const gf_out_end *end, int64_t planes);

#endif
