/* checkpoint.h - checkpoint and restart: a run's whole state at a step
 * boundary, in its output folder, and a run that continues from it.
 *
 * A checkpoint at step N (steps 0 .. N-1 done, every stream drained) is, in
 * OUTDIR/checkpoint/ (format 1):
 *   step-N/rank-RRRRR.bin  rank R's instance of every field, ring instance by
 *                          ring instance, each with its size and a checksum
 *                          (each MPI rank writes its own block; one process
 *                          today, rank-00000.bin)
 *   step-N/hooks.lua       the hooks' saved state, when they save one (hooks.h)
 *   workflow.yaml          the resolved workflow the run ran
 *   checkpoint.txt         written last, by rank 0, and what makes the
 *                          checkpoint exist: the format, the step, the ranks,
 *                          the workflow's file, --set list and checksum, each
 *                          hook file's checksum, the hooks' state, each field,
 *                          each output file's planes written, a checksum of
 *                          the whole text
 * Every file is written under a temporary name, synced and renamed; the
 * previous checkpoint's step-M/ folder goes once checkpoint.txt names N. The
 * output files themselves stay where the writer writes them
 * (`.NAME.partial`, output.h): a restarted run continues writing into them.
 *
 * What needs no saving: the evaluation object keeps nothing between steps
 * but the hooks' Lua state; the compiled program is a function of the
 * workflow (the restart compiles it again and skips to step N); every event
 * of the run is unrecorded after a restart, which backend.h makes complete,
 * and the streams were drained at the checkpoint; a check still in flight
 * was read before the checkpoint (exec.c).
 *
 * Under MPI (not yet): every rank writes its rank file through the same
 * function (it reads field->bytes, the rank's block), the ranks agree on the
 * step as they agree on a stop, and rank 0 alone renames the outputs'
 * temporaries and commits checkpoint.txt after the others are done.
 */
#ifndef GF_CHECKPOINT_H
#define GF_CHECKPOINT_H

#include <stdint.h>

#include "backend.h"
#include "error.h"
#include "hooks.h"
#include "memory.h"
#include "output.h"
#include "workflow.h"

#define GF_CHECKPOINT_FORMAT 1

/* A checkpoint read back and checked against the workflow, for --restart. */
typedef struct gf_checkpoint gf_checkpoint;

/* The pieces of a run a checkpoint saves and restores. */
typedef struct gf_checkpoint_run {
  const gf_workflow *wf;
  gf_backend *backend;
  gf_memory *memory;
  gf_writer *writer;
  gf_lua *lua; /* NULL: the workflow has no hooks */
  const char *out_dir;
  const gf_override *overrides; /* the --set list, recorded for `--restart DIR` alone */
  int noverrides;
  int rank, nranks; /* 0, 1 until gflow has MPI */
  int noted;        /* the note that the hooks' state cannot be saved was printed */
} gf_checkpoint_run;

/* Reads OUTDIR/checkpoint and checks it against `wf`: *out NULL (GF_OK) when
 * the folder holds none; GF_NOINPUT when it is unreadable, corrupt or of
 * another format; GF_INVALID when `wf` is not the workflow it was taken
 * from (the resolved YAML or a hook file differs) or the hooks kept state
 * the checkpoint could not save. */
gf_status gf_checkpoint_open(const char *out_dir, const gf_workflow *wf, gf_diag *diag,
                             gf_checkpoint **out);

/* The step the run continues from (steps before it are done). */
int64_t gf_checkpoint_step(const gf_checkpoint *c);

/* 1 when the run the checkpoint belongs to completed: nothing to restart. */
int gf_checkpoint_complete(const gf_checkpoint *c);

void gf_checkpoint_free(gf_checkpoint *c);

/* The workflow file (absolute) and --set list the checkpoint in OUTDIR was
 * taken with, so that `gflow run --restart OUTDIR` needs no FILE. Each
 * override's key and value share one allocation, freed with the key. */
gf_status gf_checkpoint_origin(const char *out_dir, char **file, gf_override **overrides,
                               int *noverrides, gf_diag *diag);

/* Before the loop, with the fields allocated and the output folder locked:
 * restores `restart` (fields, output files, the hooks' state) or, without
 * one, removes a checkpoint a previous run left in the folder (a note says
 * so). Then takes the mark the hooks' state is compared against. */
gf_status gf_checkpoint_start(const gf_checkpoint_run *run, const gf_checkpoint *restart,
                              gf_diag *diag);

/* Writes the checkpoint of step `step`. The caller has drained every stream;
 * this drains the output writer. */
gf_status gf_checkpoint_write(gf_checkpoint_run *run, int64_t step, gf_diag *diag);

/* The run completed: a checkpoint in the folder is marked complete and its
 * data removed, so a later --restart says there is nothing to do. */
gf_status gf_checkpoint_finish(const gf_checkpoint_run *run, gf_diag *diag);

#endif
