/* task_output.h - the payload of an output task (task_output.c). */
#ifndef GF_TASK_OUTPUT_H
#define GF_TASK_OUTPUT_H

#include "task.h"

typedef struct gf_output_task {
  int file;       /* index into wf->files */
  gf_expr *plane; /* of n */
} gf_output_task;

#endif
