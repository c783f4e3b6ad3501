/* exec.h - the time loop: allocate and initialise the fields, bind the
 * compiled program, interpret it on a backend step by step, and report. */
#ifndef GF_EXEC_H
#define GF_EXEC_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "comm.h"
#include "error.h"
#include "eval.h"
#include "program.h"
#include "workflow.h"

typedef struct gf_checkpoint gf_checkpoint; /* checkpoint.h */

typedef struct gf_run_options {
  const char *out_dir;
  int quiet; /* 1: no timing report on stderr */
  int force; /* 1: write even when the outputs look larger than the free space */
  /* Set to a signal number (SIGINT, SIGTERM, SIGUSR1) by the caller's
   * handler; the loop reads it at each step boundary (SIGUSR1: it writes a
   * checkpoint there, then stops). NULL: never stop early. */
  const volatile sig_atomic_t *stop;
  /* Not NULL: write the run's timeline there (trace.h), for the steps in
   * [trace_first, trace_end). */
  const char *trace_path;
  int64_t trace_first, trace_end;
  /* Busy times per task from a sample: the backend times the second of
   * every timing_sample instances of each task (instances 1, K + 1, ...: a
   * first launch may include loading the kernel) and every one the trace
   * keeps, and the report scales the sum up by instances / timed; a task
   * that ran once is not timed. 0 or 1: time every one. What --timing costs
   * on a GPU, where each timed operation records two events. */
  int64_t timing_sample;
#define GF_TIMING_SAMPLE_GPU 16 /* the GPU's default: 2 event records per 16 instances */
  /* Unless quiet: progress on stderr, redrawn on a terminal, else a line
   * every progress_s seconds (0: 10). */
  double progress_s;
  /* What run.json records (runinfo.h): the command line, the --set list as
   * given, and --threads (0: the default). */
  int argc;
  char *const *argv;
  const gf_override *overrides;
  int noverrides;
  int threads;
  /* The run's processes (comm.h): under MPI the ranks stop together, write
   * one set of outputs and one report. NULL: one process. */
  gf_comm *comm;
  /* Not NULL: continue from this checkpoint (gf_checkpoint_open checked it
   * against the workflow); NULL: a fresh run, which removes any checkpoint
   * the output folder holds. */
  const gf_checkpoint *restart;
} gf_run_options;

/* Runs the whole workflow: `program` holds the steps compiled so far (the
 * caller compiles the first stretch, so nothing runs before it checks out);
 * the rest is compiled as the loop reaches it. Writes outputs, NAME.json sidecars and timings.json
 * into options->out_dir; prints the timing report on stderr. A failure names
 * the task, stream and step and leaves no output under a final name.
 *
 * Stopping early keeps what is done: when *options->stop is set, or when the
 * workflow's `check:` finds a bad value, the loop issues no further step,
 * drains the queued work, and writes the outputs under their final names
 * with `"complete": false` in their sidecars; the result is GF_INTERRUPTED
 * (SIGINT), GF_TERMINATED (SIGTERM) or GF_DIVERGED (the check), unless the
 * outputs themselves cannot be written (GF_IOERR). SIGUSR1 stops the same
 * way after writing a checkpoint at that step boundary: GF_CHECKPOINTED.
 * The workflow's `checkpoint: {every: K}` writes one every K steps and goes
 * on (checkpoint.h). */
gf_status gf_exec_run(const gf_workflow *wf, gf_program *program, gf_eval *eval,
                      gf_backend *backend, const gf_run_options *options, gf_diag *diag);

#endif
