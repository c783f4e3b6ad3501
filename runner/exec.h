/* exec.h - the time loop: allocate and initialise the fields, then, step by
 * step, carry out the planner's operations on a backend, and report timings. */
#ifndef GF_EXEC_H
#define GF_EXEC_H

#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "error.h"
#include "graph.h"
#include "workflow.h"

typedef struct gf_run_options {
  const char *out_dir;
  int quiet; /* 1: no timing report on stderr */
} gf_run_options;

/* Runs the whole workflow. Writes outputs, NAME.json sidecars and timings.json
 * into options->out_dir; prints the timing report on stderr. A failure names
 * the task, stream and step and leaves no output under a final name. */
gf_status gf_exec_run(const gf_workflow *wf, gf_plan *plan, gf_backend *backend,
                      const gf_run_options *options, gf_diag *diag);

#endif
