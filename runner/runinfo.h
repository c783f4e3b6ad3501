/* runinfo.h - run.json: what a run was (version, host, command line, the
 * resolved workflow's key figures) and what it did (timings, steps run),
 * written into its output folder with the outputs, for `gflow collect`. */
#ifndef GF_RUNINFO_H
#define GF_RUNINFO_H

#include <stdint.h>

#include "error.h"
#include "workflow.h"

typedef struct gf_run_options gf_run_options; /* exec.h */

typedef struct gf_runinfo {
  const gf_workflow *wf;
  const gf_run_options *options; /* the command line, the --set list, threads */
  const char *backend, *device;
  int64_t steps_run;
  double flushed_s;         /* since the time loop started: dates the start */
  const char *timings_json; /* timings.json's text, embedded as "timings" */
  int64_t restarted_from;   /* the checkpoint's step a --restart continued from; -1: none */
  int64_t checkpoint_step;  /* the last checkpoint this run wrote; -1: none */
} gf_runinfo;

/* Writes DIR/run.json atomically (README, "run.json"). */
gf_status gf_runinfo_write(const gf_runinfo *info, const char *dir, gf_diag *diag);

#endif
