/* task_output.h - the payload of an output task (task_output.c). */
#ifndef GF_TASK_OUTPUT_H
#define GF_TASK_OUTPUT_H

#include "load.h"
#include "task.h"

typedef struct gf_output_task {
  int file;       /* index into wf->files */
  gf_expr *plane; /* of n */
} gf_output_task;

/* The emit and describe of a kind whose payload begins with a
 * gf_output_task (output, image): the staged write of plane `plane` of the
 * file, and the file's name. */
gf_status gf_output_task_emit(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                              const gf_task_instance *instance);
const char *gf_output_task_describe(const gf_workflow *wf, const gf_task *task);

/* For the kinds that write files (output, image): registers `file` (its
 * name, field, planes and plane bytes; the task is `task`) in wf->files
 * under *index, refusing a name another task writes. */
gf_status gf_output_add_file(loader *ld, gf_task *task, gf_file file, int *index);

/* Emits one write through a staging buffer: take a buffer, copy access 0 of
 * the task into it, record its event, hand it to the writer as plane
 * `plane` of wf->files[file]. */
void gf_output_emit(gf_emitter *e, const gf_workflow *wf, int file, const gf_expr *plane);

/* Under a schedule that orders the tasks itself (auto), where it is safe,
 * a batched output reads its batches straight from its
 * source field's ring instead of copying each plane into a ring of its own:
 * the field's ring grows to hold two batches beyond what it held
 * (field->declared_ring keeps the declared one), its instances are laid out
 * one after another, and the output's task runs once a batch, reading the
 * batch's instances (gf_file.from_ring). Once the tasks are final (after
 * gf_decompose), before the plan. */
gf_status gf_output_read_rings(gf_workflow *wf, gf_diag *diag);

/* Of an output read from its field's ring, for a step n of its range:
 * whether n's plane ends a batch (its task's `when`, compiled from the same
 * rule), and the first step of the batch n's plane belongs to. */
int gf_output_batch_ends(const gf_file *f, int64_t n);
int64_t gf_output_batch_first(const gf_file *f, int64_t n);

#endif
