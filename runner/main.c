/* main.c - the gflow command: run, validate, dag, kernels, view; sweep and
 * collect parse their own command lines (sweep.c, collect.c). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "checkpoint.h"
#include "collect.h"
#include "comm.h"
#include "decompose.h"
#include "error.h"
#include "eval.h"
#include "exec.h"
#include "flatkeys.h"
#include "graph.h"
#include "image.h"
#include "outdir.h"
#include "program.h"
#include "registry.h"
#include "sweep.h"
#include "task_halo.h"
#include "task_output.h"
#include "text.h"
#include "workflow.h"

/* ---- the command line: one table of commands, one of options ----------- */

enum { CMD_RUN = 1, CMD_VALIDATE = 2, CMD_DAG = 4, CMD_KERNELS = 8, CMD_ALL = 15 };
enum { CMD_LOADS = CMD_RUN | CMD_VALIDATE | CMD_DAG }; /* the commands that load a FILE */

typedef struct cli_command {
  const char *name;
  unsigned bit;
  const char *synopsis; /* after `gflow NAME` */
  const char *summary;  /* its line in `gflow help` */
  const char *about;    /* its paragraph in `gflow help NAME`, before the options */
} cli_command;

static const cli_command commands[] = {
    {"run", CMD_RUN, "FILE [options]", "load, check and run a workflow",
     "Loads and checks the workflow, compiles its steps and runs them on a backend.\n"
     "The output folder is locked for the run, and the outputs' full size is checked\n"
     "against its free space first (--force skips that check).\n"
     "SIGINT or SIGTERM stops the run at the next step boundary: the outputs so far\n"
     "are written, marked \"complete\": false, and gflow exits 130 or 143. A second\n"
     "signal changes nothing; a third ends gflow at once (nothing then appears\n"
     "under a final name). SIGUSR1 (sbatch --signal=B:USR1@120) writes a checkpoint\n"
     "at the next step boundary, then stops the same way and exits 75;\n"
     "`gflow run --restart DIR` continues from it.\n"},
    {"validate", CMD_VALIDATE, "FILE [options]",
     "load and check a workflow, plan every step, print a summary",
     "Loads and checks the workflow, plans every step under its schedule (finding\n"
     "hazards, cycles and out-of-range indices) and prints a summary: tasks per\n"
     "step, streams, synchronisation, memory per space. Runs nothing.\n"},
    {"dag", CMD_DAG, "FILE [options]", "print one step's task graph (DOT, Mermaid, SVG, PNG)",
     "Prints the task graph of one step: tasks clustered by stream, edges labelled\n"
     "with why they exist (after, reads after write, ... and the cells concerned when\n"
     "not the whole field) and how the schedule enforces them (ordered, event, host\n"
     "sync). Default step: the first at which the most tasks run. --format svg or\n"
     "png renders the DOT with Graphviz's `dot`.\n"},
    {"kernels", CMD_KERNELS, "[NAME] [options]", "list the kernels and their parameters",
     "Lists every kernel with its typed parameters, defaults, ranges and help. With\n"
     "NAME, that kernel alone, with the equation it computes, what it does at the\n"
     "grid's edges and the bytes and flops per point of the timing report.\n"},
};
enum { NCOMMANDS = (int)(sizeof commands / sizeof commands[0]) };

/* Commands with command lines of their own, for `gflow help`. */
static const struct {
  const char *usage, *summary;
} other_commands[] = {
    {"view DIR", "pictures (PNG) of the planes of a run's output files"},
    {"sweep SPEC",
     "run a workflow over a matrix of --set values (locally or as a\n"
     "                  Slurm job array)"},
    {"collect DIR...", "the runs' run.json files below folders as one table"},
};

typedef struct cli {
  const cli_command *command;
  const char *file;
  gf_override *overrides;
  int noverrides, overrides_cap;
  const char **plugins;
  int nplugins, plugins_cap;
  const char *backend;
  const char *out_dir;
  int device;
  int threads;
  int64_t step;
  int quiet;
  int timing;
  int64_t timing_sample; /* --timing-sample K; 0: the backend's default */
  int help;
  int force;          /* run even when the outputs may not fit */
  int allow_unstable; /* run kernel calls that fail their stability condition */
  const char *trace;  /* --trace FILE */
  int64_t trace_first, trace_end;
  double progress_s;      /* --progress SECONDS */
  const char *restart;    /* --restart DIR */
  int restart_if_present; /* --restart-if-present */
  const char *format;     /* dag: dot, mermaid, svg, png */
  int argc;               /* the whole command line, for run.json */
  char **argv;
  int ranks, rank; /* validate, dag: the rank whose share to plan */
  gf_comm *comm;   /* run: MPI, or one process */
} cli;

/* The one way a command line is refused: one line and where to read more.
 * Returns GF_USAGE (exit 64). */
static gf_status usage_error(const cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static gf_status usage_error(const cli *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("gflow: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (c && c->command)
    fprintf(stderr, "; see 'gflow %s --help'\n", c->command->name);
  else
    fputs("; see 'gflow help'\n", stderr);
  return GF_USAGE;
}

static int parse_int(const char *text, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end) return 0;
  *out = v;
  return 1;
}

static gf_status cli_out_of_memory(void) {
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  return gf_oom(&diag, "reading the command line");
}

/* Takes `key`, a heap string or NULL (out of memory). */
static gf_status add_override(cli *c, char *key, const char *value) {
  if (!key || GF_GROW(c->overrides, c->overrides_cap, c->noverrides + 1) != GF_OK) {
    free(key);
    return cli_out_of_memory();
  }
  c->overrides[c->noverrides++] = (gf_override){key, value};
  return GF_OK;
}

/* Each option's effect; `arg` is its value (NULL for a flag). A bad value is a
 * usage_error naming the option. */
static gf_status opt_set(cli *c, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) return usage_error(c, "--set needs KEY=VALUE, got '%s'", arg);
  return add_override(c, gf_strndup(arg, (size_t)(eq - arg)), eq + 1);
}

static gf_status opt_backend(cli *c, const char *arg) {
  if (strcmp(arg, "auto") && strcmp(arg, "cpu") && strcmp(arg, "gpu"))
    return usage_error(c, "--backend must be auto, cpu or gpu, not '%s'", arg);
  c->backend = arg;
  return GF_OK;
}

static gf_status opt_device(cli *c, const char *arg) {
  int64_t v;
  if (!parse_int(arg, &v) || v < 0 || v > 4096)
    return usage_error(c, "--device takes a GPU index, not '%s'", arg);
  c->device = (int)v;
  return GF_OK;
}

static gf_status opt_threads(cli *c, const char *arg) {
  int64_t v;
  if (!parse_int(arg, &v) || v < 1 || v > 4096)
    return usage_error(c, "--threads takes a positive count, not '%s'", arg);
  c->threads = (int)v;
  return GF_OK;
}

static gf_status opt_out(cli *c, const char *arg) {
  c->out_dir = arg;
  return GF_OK;
}

static gf_status opt_plugin(cli *c, const char *arg) {
  if (GF_GROW(c->plugins, c->plugins_cap, c->nplugins + 1) != GF_OK) return cli_out_of_memory();
  c->plugins[c->nplugins++] = arg;
  return GF_OK;
}

static gf_status opt_step(cli *c, const char *arg) {
  if (!parse_int(arg, &c->step) || c->step < 0)
    return usage_error(c, "--step takes a step index, not '%s'", arg);
  return GF_OK;
}

/* One path for a limit: the option becomes an override of the file's
 * `limits:`, checked (range, message) where the file's would be. */
static gf_status lua_limit(cli *c, const char *option, const char *key, const char *arg) {
  int64_t v;
  if (!parse_int(arg, &v) || v < 1)
    return usage_error(c, "%s takes a positive integer, not '%s'", option, arg);
  return add_override(c, gf_strdup(key), arg);
}

static gf_status opt_lua_memory(cli *c, const char *arg) {
  return lua_limit(c, "--lua-memory", "limits.lua_memory", arg);
}

static gf_status opt_lua_instructions(cli *c, const char *arg) {
  return lua_limit(c, "--lua-instructions", "limits.lua_instructions", arg);
}

static gf_status opt_timing(cli *c, const char *arg) {
  (void)arg;
  c->timing = 1;
  return GF_OK;
}

static gf_status opt_timing_sample(cli *c, const char *arg) {
  int64_t k;
  if (!parse_int(arg, &k) || k < 1 || k > 1000000000)
    return usage_error(c, "--timing-sample takes a count from 1 to 10^9, not '%s'", arg);
  c->timing_sample = k;
  return GF_OK;
}

static gf_status opt_quiet(cli *c, const char *arg) {
  (void)arg;
  c->quiet = 1;
  return GF_OK;
}

static gf_status opt_force(cli *c, const char *arg) {
  (void)arg;
  c->force = 1;
  return GF_OK;
}

static gf_status opt_allow_unstable(cli *c, const char *arg) {
  (void)arg;
  c->allow_unstable = 1;
  return GF_OK;
}

static gf_status opt_trace(cli *c, const char *arg) {
  c->trace = arg;
  return GF_OK;
}

static gf_status opt_trace_steps(cli *c, const char *arg) {
  const char *colon = strchr(arg, ':');
  char first[32];
  int64_t a, b;
  if (!colon || colon - arg >= (ptrdiff_t)sizeof first)
    return usage_error(c, "--trace-steps takes A:B, not '%s'", arg);
  snprintf(first, sizeof first, "%.*s", (int)(colon - arg), arg);
  if (!parse_int(first, &a) || !parse_int(colon + 1, &b) || a < 0 || b <= a)
    return usage_error(c, "--trace-steps takes A:B with 0 <= A < B, not '%s'", arg);
  c->trace_first = a;
  c->trace_end = b;
  return GF_OK;
}

static gf_status opt_progress(cli *c, const char *arg) {
  char *end;
  double seconds = strtod(arg, &end);
  if (*end || !(seconds > 0) || seconds > 1e6)
    return usage_error(c, "--progress takes seconds between lines, not '%s'", arg);
  c->progress_s = seconds;
  return GF_OK;
}

static gf_status opt_format(cli *c, const char *arg) {
  static const char *const formats[] = {"dot", "mermaid", "svg", "png"};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(arg, formats[i]) == 0) {
      c->format = formats[i];
      return GF_OK;
    }
  return usage_error(c, "--format takes dot, mermaid, svg or png, not '%s'", arg);
}

static gf_status opt_ranks(cli *c, const char *arg) {
  int64_t v;
  if (!parse_int(arg, &v) || v < 1 || v > 1 << 20)
    return usage_error(c, "--ranks takes a rank count, not '%s'", arg);
  c->ranks = (int)v;
  return GF_OK;
}

static gf_status opt_rank(cli *c, const char *arg) {
  int64_t v;
  if (!parse_int(arg, &v) || v < 0 || v >= 1 << 20)
    return usage_error(c, "--rank takes a rank, not '%s'", arg);
  c->rank = (int)v;
  return GF_OK;
}

static gf_status opt_restart(cli *c, const char *arg) {
  c->restart = arg;
  return GF_OK;
}

static gf_status opt_restart_if_present(cli *c, const char *arg) {
  (void)arg;
  c->restart_if_present = 1;
  return GF_OK;
}

static gf_status opt_help(cli *c, const char *arg) {
  (void)arg;
  c->help = 1;
  return GF_OK;
}

/* Every option of every command: a new option is one entry here. `help` is
 * its text in `gflow COMMAND --help`; a '\n' in it starts a continuation line. */
typedef struct cli_option {
  const char *name;  /* without the leading -- */
  const char *value; /* how help and messages name its value; NULL: a flag */
  unsigned commands; /* CMD_* bits of the commands that take it */
  gf_status (*apply)(cli *c, const char *arg);
  const char *help;
} cli_option;

static const cli_option options[] = {
    {"set", "KEY=VALUE", CMD_LOADS, opt_set,
     "override a key of the file (repeatable), e.g.\n"
     "--set grid.shape=[512,512] --set schedule=sync"},
    {"backend", "NAME", CMD_RUN, opt_backend,
     "auto (default: the GPU if one answers and every kernel\n"
     "has a GPU implementation, else the CPU), cpu or gpu"},
    {"device", "N", CMD_RUN, opt_device,
     "GPU index (default: SLURM_LOCALID, else the node-local MPI rank,\n"
     "modulo the GPUs there are, else 0)"},
    {"threads", "N", CMD_RUN, opt_threads,
     "CPU backend: OpenMP threads per kernel (default: OMP_NUM_THREADS,\n"
     "else all cores, less two where the loop writes often and 6 or\n"
     "more stay)"},
    {"out", "DIR", CMD_RUN, opt_out, "output folder (default: out/NAME, NAME the workflow's name)"},
    {"step", "N", CMD_DAG, opt_step,
     "the step to draw (default: the first at which most tasks run)"},
    {"plugin", "FILE", CMD_ALL, opt_plugin, "load a kernel plugin (repeatable)"},
    {"timing", NULL, CMD_RUN, opt_timing,
     "GPU backend: measure every task's busy time with events\n"
     "(the CPU backend always does; on a GPU it adds two events per timed task)"},
    {"timing-sample", "K", CMD_RUN, opt_timing_sample,
     "time one in K instances of each task and scale the busy times up\n"
     "(default: 16 on a GPU, 1 (all) on the CPU; a trace times the steps it keeps)"},
    {"lua-memory", "N", CMD_LOADS, opt_lua_memory,
     "bytes a Lua hook state may hold (same as --set limits.lua_memory=N)"},
    {"lua-instructions", "N", CMD_LOADS, opt_lua_instructions,
     "instructions per hook call (--set limits.lua_instructions=N)"},
    {"quiet", NULL, CMD_RUN, opt_quiet, "no banner, no progress and no timing report: only errors"},
    {"force", NULL, CMD_RUN, opt_force, "run even when the outputs may not fit in the free space"},
    {"allow-unstable", NULL, CMD_RUN, opt_allow_unstable,
     "run kernel calls that fail their stability condition (CFL)"},
    {"trace", "FILE", CMD_RUN, opt_trace,
     "write the run's timeline as Chrome trace / Perfetto JSON\n"
     "(open it in ui.perfetto.dev); on a GPU it implies --timing"},
    {"trace-steps", "A:B", CMD_RUN, opt_trace_steps,
     "trace only steps A to B - 1 (default: every step)"},
    {"progress", "SECONDS", CMD_RUN, opt_progress,
     "when stderr is not a terminal, a progress line this often\n"
     "(default 10; on a terminal one line is redrawn)"},
    {"restart", "DIR", CMD_RUN, opt_restart,
     "continue the run in DIR from its checkpoint (FILE may be\n"
     "left out: the checkpoint names it and its --set values)"},
    {"restart-if-present", NULL, CMD_RUN, opt_restart_if_present,
     "continue from the output folder's checkpoint when it has\n"
     "one, else run afresh: one batch script for a job and its\n"
     "requeued runs"},
    {"format", "NAME", CMD_DAG, opt_format,
     "dot (default), mermaid, or svg / png (rendered by Graphviz)"},
    {"ranks", "N", CMD_VALIDATE | CMD_DAG, opt_ranks,
     "plan the share of one rank of a run over N MPI ranks\n"
     "(run takes its ranks from mpirun or srun)"},
    {"rank", "R", CMD_VALIDATE | CMD_DAG, opt_rank, "with --ranks: which rank (default 0)"},
    {"help", NULL, CMD_ALL, opt_help, "print this help"},
};
enum { NOPTIONS = (int)(sizeof options / sizeof options[0]) };

static const cli_command *find_command(const char *name) {
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

static void print_main_help(FILE *out) {
  fputs(
      "usage: gflow COMMAND [options]\n\nRuns GPU simulation workflows described in YAML.\n\n"
      "commands:\n",
      out);
  for (int i = 0; i < NCOMMANDS; i++) {
    char left[32];
    snprintf(left, sizeof left, "%s%s", commands[i].name,
             commands[i].bit & CMD_LOADS ? " FILE" : "");
    fprintf(out, "  %-16s%s\n", left, commands[i].summary);
  }
  for (size_t i = 0; i < sizeof other_commands / sizeof other_commands[0]; i++)
    fprintf(out, "  %-16s%s\n", other_commands[i].usage, other_commands[i].summary);
  fputs(
      "\noptions for every command: --help, --version\n"
      "`gflow help COMMAND` or `gflow COMMAND --help` describes a command's options.\n",
      out);
}

static void print_command_help(const cli_command *cmd, FILE *out) {
  fprintf(out, "usage: gflow %s %s\n\n%s\noptions:\n", cmd->name, cmd->synopsis, cmd->about);
  for (int i = 0; i < NOPTIONS; i++) {
    const cli_option *o = &options[i];
    if (!(o->commands & cmd->bit)) continue;
    char left[48];
    snprintf(left, sizeof left, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    /* continuation lines of the help start under its first */
    const char *h = o->help;
    fprintf(out, "  %-20s%s", left, strlen(left) < 20 ? "" : "  ");
    for (;;) {
      const char *nl = strchr(h, '\n');
      fprintf(out, "%.*s\n", (int)(nl ? nl - h : (ptrdiff_t)strlen(h)), h);
      if (!nl) break;
      h = nl + 1;
      fprintf(out, "  %-20s", "");
    }
  }
}

/* argv[2...] of `gflow COMMAND`: options anywhere, `--name value` or
 * `--name=value`, `--` ends them; names match whole (no abbreviations). */
static gf_status parse_args(int argc, char **argv, cli *c) {
  int only_operands = 0;
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i];
    if (only_operands || arg[0] != '-' || arg[1] == '\0') {
      if (!(c->command->bit & (CMD_LOADS | CMD_KERNELS)) || c->file)
        return usage_error(c, "unexpected argument '%s'", arg);
      c->file = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_operands = 1;
      continue;
    }
    const char *name = arg + 2, *eq = strchr(arg, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    const cli_option *o = NULL;
    if (strcmp(arg, "-h") == 0) {
      name = "help";
      name_len = 4;
    } else if (arg[1] != '-') {
      return usage_error(c, "unknown option '%s'", arg);
    }
    for (int k = 0; k < NOPTIONS && !o; k++)
      if (strlen(options[k].name) == name_len && strncmp(options[k].name, name, name_len) == 0)
        o = &options[k];
    if (!o) return usage_error(c, "unknown option '%.*s'", (int)(name - arg + name_len), arg);
    if (!(o->commands & c->command->bit))
      return usage_error(c, "--%s is not an option of '%s'", o->name, c->command->name);
    const char *value = NULL;
    if (o->value) {
      if (eq)
        value = eq + 1;
      else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
        value = argv[++i];
      if (!value || !*value)
        return usage_error(c, "option '--%s' needs a value (%s)", o->name, o->value);
    } else if (eq) {
      return usage_error(c, "option '--%s' takes no value", o->name);
    }
    gf_status st = o->apply(c, value);
    if (st != GF_OK) return st;
  }
  if (c->help) return GF_OK;
  if ((c->command->bit & CMD_LOADS) && !c->file && !c->restart)
    return usage_error(c, "'%s' needs a workflow FILE", c->command->name);
  if (c->restart && c->restart_if_present)
    return usage_error(c, "--restart DIR and --restart-if-present exclude each other");
  if (c->restart && c->out_dir && strcmp(c->restart, c->out_dir) != 0)
    return usage_error(c, "--restart %s continues in its own folder; leave out --out %s",
                       c->restart, c->out_dir);
  return GF_OK;
}

static const char *param_type_name(gf_param_type type) {
  switch (type) {
    case GF_PARAM_ARRAY:
      return "field";
    case GF_PARAM_REAL:
      return "real";
    case GF_PARAM_INT:
      return "int";
    case GF_PARAM_INDEX:
      return "cell";
    case GF_PARAM_BOX:
      return "box";
    case GF_PARAM_CELLS:
      return "cells";
    case GF_PARAM_TAPS:
      return "taps";
  }
  return "?";
}

/* Each line of `text` after `indent`. */
static void print_indented(const char *indent, const char *text) {
  for (const char *line = text; *line;) {
    const char *nl = strchr(line, '\n');
    int len = nl ? (int)(nl - line) : (int)strlen(line);
    printf("%s%.*s\n", indent, len, line);
    line += len + (nl != NULL);
  }
}

/* Every kernel, or only `name` (NULL: all) with what it computes. */
static gf_status print_kernels(const gf_registry *registry, const char *name, gf_diag *diag) {
  if (name && !gf_registry_find(registry, name)) {
    gf_text list = {0};
    gf_text_puts(&list, "");
    for (int k = 0; k < gf_registry_count(registry); k++)
      gf_text_printf(&list, "%s%s", k ? ", " : "", gf_registry_at(registry, k)->name);
    gf_status st = gf_diag_error(diag, GF_INVALID, "unknown kernel '%s'; known kernels: %s", name,
                                 list.data ? list.data : "?");
    free(list.data);
    return st;
  }
  int printed = 0;
  for (int k = 0; k < gf_registry_count(registry); k++) {
    const gf_kernel *kernel = gf_registry_at(registry, k);
    if (name && strcmp(kernel->name, name) != 0) continue;
    printf("%s%s\n  %s\n  GPU: %s\n", printed++ ? "\n" : "", kernel->name, kernel->help,
           kernel->launch_gpu ? "yes" : "no (CPU only in this build)");
    if (name) {
      printf("  equation:\n");
      print_indented("    ", kernel->equation ? kernel->equation : "(not stated)");
      printf("  boundary:\n");
      print_indented("    ", kernel->boundary ? kernel->boundary : "(not stated)");
      printf("  per point (timing report): %g bytes (f32 fields; f64: twice)",
             kernel->bytes_per_point);
      if (kernel->flops_per_point > 0) printf(", %g flops", kernel->flops_per_point);
      printf("\n");
    }
    printf("  parameters:\n");
    for (const gf_param *p = kernel->params; p->name; p++) {
      char detail[160] = "";
      if (p->type == GF_PARAM_ARRAY) {
        gf_access rw = (gf_access)(p->access & GF_ACCESS_READ_WRITE);
        const char *acc = rw == GF_ACCESS_READ    ? "read"
                          : rw == GF_ACCESS_WRITE ? "written"
                                                  : "read and written";
        snprintf(detail, sizeof detail, "%s %s%s%s%s", acc, (p->dtypes & 1u) ? "f32" : "",
                 (p->dtypes & 3u) == 3u ? "|" : "", (p->dtypes & 2u) ? "f64" : "",
                 p->required ? "" : ", optional");
      } else if (p->type == GF_PARAM_BOX) {
        snprintf(detail, sizeof detail, "set by gflow");
      } else if (p->required) {
        snprintf(detail, sizeof detail, "required");
      } else if (p->type == GF_PARAM_CELLS || p->type == GF_PARAM_TAPS) {
        snprintf(detail, sizeof detail, "default: none");
      } else if (p->type == GF_PARAM_INDEX && p->def == GF_INDEX_CENTER) {
        snprintf(detail, sizeof detail, "default: the grid's centre");
      } else {
        snprintf(detail, sizeof detail, "default %g", p->def);
      }
      if ((p->type == GF_PARAM_REAL || p->type == GF_PARAM_INT) && gf_param_has_range(p) &&
          (p->min > -1e300 || p->max < 1e300)) {
        size_t len = strlen(detail);
        snprintf(detail + len, sizeof detail - len, ", range [%g, %g]", p->min, p->max);
      }
      printf("    %-10s %-5s  %-36s %s\n", p->name, param_type_name(p->type), detail, p->help);
    }
  }
  return GF_OK;
}

/* 1 when this gflow was built with a GPU backend (cmake/gpu.cmake): only
 * then does a kernel's launch_gpu tell anything about the workflow. */
static int built_with_gpu(void) {
#ifdef GFLOW_WITH_GPU
  return 1;
#else
  return 0;
#endif
}

/* The backend every task of `wf` can run on: the GPU if one answers and every
 * kernel has a GPU implementation (auto), else the CPU. A forced backend that
 * cannot run the workflow is an error here, before anything runs. The banner,
 * `gflow: backend NAME: WHY; DESCRIPTION`, says which and why. */
/* OpenMP threads per kernel on the CPU backend: --threads; else 0 (the
 * OpenMP default) where OMP_NUM_THREADS says; else, for a loop that writes
 * a plane at one step in eight or more, all cores but the writer's and the
 * copies' (gf_cpu_kernel_threads). */
static int kernel_threads(const cli *c, const gf_workflow *wf) {
  if (c->threads > 0 || getenv("OMP_NUM_THREADS")) return c->threads;
  int64_t planes = 0;
  for (int f = 0; f < wf->nfiles; f++) planes += wf->files[f].planes;
  return gf_cpu_kernel_threads(gf_cpu_cores(), planes * 8 >= wf->steps && planes > 0 ? 2 : 0);
}

static gf_status open_backend(const cli *c, const gf_workflow *wf, int threads, gf_diag *diag,
                              gf_backend **out) {
  /* A GPU times its operations with events only when asked: the trace asks. */
  gf_backend_options options = {.device = c->device,
                                .local_rank = gf_comm_local_rank(c->comm),
                                .threads = threads,
                                .timing = c->timing || c->trace};
  const char *want = c->backend ? c->backend : "auto";
  char why[512] = "asked for with --backend cpu";
  if (strcmp(want, "cpu") != 0) {
    const gf_kernel *kernel = NULL;
    const gf_task *task = built_with_gpu() ? gf_workflow_cpu_only_task(wf, &kernel) : NULL;
    if (task) {
      snprintf(why, sizeof why, "kernel %s (task '%s') has no GPU implementation", kernel->name,
               task->name);
    } else if (gf_backend_gpu_create(&options, out, why, sizeof why) == GF_OK) {
      if (!c->quiet)
        fprintf(stderr, "gflow: backend gpu: %s; %s\n",
                c->backend ? "asked for with --backend gpu" : "a GPU answered",
                (*out)->description);
      return GF_OK;
    }
    if (strcmp(want, "gpu") == 0)
      return gf_diag_error(diag, GF_INTERNAL, "--backend gpu cannot run here: %s", why);
  }
  options.timing = 1; /* a clock read per task: always worth it on the CPU */
  if (gf_backend_cpu_create(&options, out) != GF_OK)
    return gf_oom(diag, "starting the CPU backend"); /* its only failure */
  if (!c->quiet) fprintf(stderr, "gflow: backend cpu: %s; %s\n", why, (*out)->description);
  return GF_OK;
}

/* The one piece of global state: a signal handler reaches nothing else. */
static volatile sig_atomic_t stop_signal; /* the first stop signal */
static volatile sig_atomic_t stop_signals_seen;

/* The first signal stops the loop; the second is taken too, so the wind-down
 * still writes what is done (`timeout` signals gflow and its process group,
 * so gflow gets two; so does a Ctrl-C typed twice); a third ends gflow at
 * once, for a wind-down that hangs. */
static void on_stop_signal(int sig) {
  if (!stop_signal) stop_signal = sig;
  if (++stop_signals_seen >= 3) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

/* SIGINT and SIGTERM ask the time loop to stop at the next step boundary,
 * SIGUSR1 to write a checkpoint there first. A
 * SIGINT the parent set to be ignored (a background job of a script) stays
 * ignored, as in any well-behaved Unix program. */
static void catch_stop_signals(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT); /* one handler at a time: the count stays exact */
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGUSR1);
  action.sa_flags = SA_RESTART;
  struct sigaction old;
  if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
    sigaction(SIGINT, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGUSR1, &action, NULL); /* checkpoint, then stop (exec.h) */
}

/* `gflow dag`: DOT or Mermaid as written, SVG or PNG through Graphviz's dot. */
static gf_status write_dag(const cli *c, gf_plan *plan, gf_diag *diag) {
  const char *format = c->format ? c->format : "dot";
  if (strcmp(format, "mermaid") == 0)
    return gf_plan_write_graph(plan, c->step, GF_GRAPH_MERMAID, diag, stdout);
  if (strcmp(format, "dot") == 0)
    return gf_plan_write_graph(plan, c->step, GF_GRAPH_DOT, diag, stdout);
  fflush(stdout);
  char command[32];
  snprintf(command, sizeof command, "dot -T%s", format);
  FILE *dot = popen(command, "w");
  if (!dot)
    return gf_diag_error(diag, GF_INTERNAL, "cannot start Graphviz's dot: %s", strerror(errno));
  gf_status st = gf_plan_write_graph(plan, c->step, GF_GRAPH_DOT, diag, dot);
  int status = pclose(dot);
  if (st == GF_OK && status != 0)
    st = gf_diag_error(
        diag, GF_INTERNAL,
        "Graphviz's dot failed (exit %d): is it installed? (apt-get install graphviz)",
        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return st;
}

/* 1 when DIR/run.json says its run completed. */
static int run_complete(const char *dir) {
  char *path = gf_asprintf("%s/run.json", dir);
  FILE *f = path ? fopen(path, "r") : NULL;
  free(path);
  if (!f) return 0;
  char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  gf_flat flat = {0};
  const char *complete = gf_flat_text(text, &flat) == GF_OK ? gf_flat_get(&flat, "complete") : NULL;
  int yes = complete && strcmp(complete, "true") == 0;
  gf_flat_free(&flat);
  return yes;
}

/* --restart, --restart-if-present: the checkpoint in `out_dir`, checked
 * against `wf` (*checkpoint NULL: run afresh), or *nothing_to_do when the
 * run there is complete. */
static gf_status find_checkpoint(const cli *c, const gf_workflow *wf, const char *out_dir,
                                 gf_diag *diag, gf_checkpoint **checkpoint, int *nothing_to_do) {
  *nothing_to_do = 0;
  gf_status st = gf_checkpoint_open(out_dir, wf, diag, checkpoint);
  if (st != GF_OK) return st;
  if (*checkpoint && gf_checkpoint_complete(*checkpoint)) {
    gf_checkpoint_free(*checkpoint);
    *checkpoint = NULL;
    *nothing_to_do = 1;
  } else if (!*checkpoint && c->restart) {
    if (!run_complete(out_dir))
      return gf_diag_error(diag, GF_NOINPUT,
                           "%s holds no checkpoint (%s/checkpoint/checkpoint.txt): nothing to "
                           "restart from",
                           out_dir, out_dir);
    *nothing_to_do = 1;
  }
  if (*nothing_to_do) /* even with --quiet: a batch log says why nothing ran */
    fprintf(stderr, "gflow: %s: the run is complete (%" PRId64 " steps); nothing to do\n", out_dir,
            wf->steps);
  return GF_OK;
}

static gf_status run_command(cli *c) {
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  gf_registry *registry = NULL;
  gf_workflow *wf = NULL;
  gf_plan *plan = NULL;
  gf_program *program = NULL;
  gf_eval *eval = NULL;
  gf_backend *backend = NULL;
  gf_status st = gf_registry_open(c->plugins, c->nplugins, &diag, &registry);

  if (st == GF_OK && c->command->bit == CMD_KERNELS) {
    st = print_kernels(registry, c->file, &diag);
    gf_registry_free(registry);
    return st;
  }
  /* Every rank loads and plans the same file: rank 0 alone says what is wrong with it. */
  FILE *quiet_rank = c->comm && gf_comm_rank(c->comm) > 0 ? fopen("/dev/null", "w") : NULL;
  if (quiet_rank) diag.out = quiet_rank;
  /* `--restart DIR` alone: the checkpoint names the file and its --set list */
  const char *file = c->file;
  gf_override *sets = c->overrides, *origin_sets = NULL;
  int nsets = c->noverrides, norigin = 0;
  char *origin_file = NULL;
  if (st == GF_OK && c->command->bit == CMD_RUN && c->restart && !c->file) {
    st = gf_checkpoint_origin(c->restart, &origin_file, &origin_sets, &norigin, &diag);
    file = origin_file;
    sets = origin_sets;
    nsets = norigin;
  }
  if (st == GF_OK) st = gf_workflow_load(file, sets, nsets, registry, NULL, &diag, &wf, &eval);
  if (st == GF_OK) {
    gf_workflow_diag_init(&diag, wf);
    if (quiet_rank) diag.out = quiet_rank;
    gf_unstable_policy unstable = c->command->bit != CMD_RUN ? GF_UNSTABLE_NOTE
                                  : c->allow_unstable        ? GF_UNSTABLE_ALLOW
                                                             : GF_UNSTABLE_REFUSE;
    st = gf_workflow_check_stable(wf, unstable, &diag);
    /* This process's share: its block and its ghost-cell tasks (decompose.h). */
    int ranks = c->comm ? gf_comm_size(c->comm) : c->ranks ? c->ranks : 1;
    int rank = c->comm ? gf_comm_rank(c->comm) : c->rank;
    if (st == GF_OK && rank >= ranks)
      st = usage_error(c, "--rank %d is not one of the %d ranks", rank, ranks);
    if (st == GF_OK)
      st = gf_decompose(wf, ranks, rank, c->comm ? gf_comm_gpu_aware(c->comm) : 0, &diag);
    if (st == GF_OK) st = gf_halo_check_transport(wf, c->comm, NULL, &diag);
    if (st == GF_OK) st = gf_output_read_rings(wf, &diag);
    if (st == GF_OK) st = gf_plan_create(wf, &diag, &plan);
  }
  if (st == GF_OK && c->command->bit == CMD_VALIDATE) {
    /* What run would compile, checked the same way. */
    st = gf_program_create(wf, plan, &diag, &program);
    if (st == GF_OK) st = gf_program_compile(program, 0, GF_VALIDATE_MAX_STEPS, &diag);
    if (st == GF_OK) {
      gf_plan_write_summary(plan, stdout);
      gf_program_write_summary(program, stdout);
    }
  }
  if (st == GF_OK && c->command->bit == CMD_DAG) st = write_dag(c, plan, &diag);
  if (quiet_rank) { /* from here on each rank says what fails on it */
    diag.out = stderr;
    fclose(quiet_rank);
    quiet_rank = NULL;
  }
  if (st == GF_OK && c->command->bit == CMD_RUN) {
    /* Compiled (and so checked) before anything runs: every step up to
     * GF_VALIDATE_MAX_STEPS; the run compiles the rest as it reaches it. */
    st = gf_program_create(wf, plan, &diag, &program);
    if (st == GF_OK) st = gf_program_compile(program, 0, GF_VALIDATE_MAX_STEPS, &diag);
    char *out_dir = NULL;
    gf_checkpoint *checkpoint = NULL;
    int nothing_to_do = 0;
    if (st == GF_OK && c->restart) {
      if (!(out_dir = gf_strdup(c->restart))) st = gf_oom(&diag, "naming the output folder");
    } else if (st == GF_OK) {
      if (!c->out_dir && !(out_dir = gf_asprintf("out/%s", wf->name)))
        st = gf_oom(&diag, "naming the output folder");
      else if (c->out_dir) /* a template: out/{name}/{grid.shape} (outdir.c) */
        st = gf_outdir_expand(c->out_dir, wf, &diag, &out_dir);
    }
    if (st == GF_OK && (c->restart || c->restart_if_present))
      st = find_checkpoint(c, wf, out_dir, &diag, &checkpoint, &nothing_to_do);
    const int threads = kernel_threads(c, wf);
    if (st == GF_OK && !nothing_to_do) st = open_backend(c, wf, threads, &diag, &backend);
    if (st == GF_OK && !nothing_to_do && backend->can_run_kernels_on_host_memory &&
        gf_workflow_stage_on_host(wf)) { /* no chosen batch, no device-side ring */
      gf_program_free(program);
      program = NULL;
      st = gf_program_create(wf, plan, &diag, &program);
      if (st == GF_OK) st = gf_program_compile(program, 0, GF_VALIDATE_MAX_STEPS, &diag);
    }
    if (st == GF_OK && !nothing_to_do) st = gf_halo_check_transport(wf, c->comm, backend, &diag);
    if (st == GF_OK && !nothing_to_do) {
      gf_run_options options = {.out_dir = out_dir,
                                .quiet = c->quiet,
                                .stop = &stop_signal,
                                .force = c->force,
                                .trace_path = c->trace,
                                .trace_first = c->trace_first,
                                .trace_end = c->trace_end,
                                .timing_sample = c->timing_sample ? c->timing_sample
                                                 : strcmp(backend->name, "gpu") == 0
                                                     ? GF_TIMING_SAMPLE_GPU
                                                     : 1,
                                .progress_s = c->progress_s,
                                .argc = c->argc,
                                .argv = c->argv,
                                .overrides = sets,
                                .noverrides = nsets,
                                .threads = threads,
                                .comm = c->comm,
                                .restart = checkpoint};
      catch_stop_signals();
      st = gf_exec_run(wf, program, eval, backend, &options, &diag);
    }
    gf_checkpoint_free(checkpoint);
    free(out_dir);
  }
  if (backend) backend->ops->destroy(backend);
  gf_program_free(program);
  gf_plan_free(plan);
  gf_eval_free(eval);
  gf_workflow_free(wf);
  gf_registry_free(registry);
  for (int i = 0; i < norigin; i++) free((char *)origin_sets[i].key);
  free(origin_sets);
  free(origin_file);
  return st;
}

/* `gflow help [COMMAND]`: that command's help, or the commands. */
static gf_status help_command(int argc, char **argv) {
  if (argc > 3) return usage_error(NULL, "unexpected argument '%s'", argv[3]);
  if (argc < 3) {
    print_main_help(stdout);
    return GF_OK;
  }
  const cli_command *cmd = find_command(argv[2]);
  if (!cmd) return usage_error(NULL, "unknown command '%s'", argv[2]);
  print_command_help(cmd, stdout);
  return GF_OK;
}

static const char usage_view[] =
    "usage: gflow view DIR [options]\n"
    "\n"
    "Turns the output files of a run (NAME.dat with its sidecar NAME.dat.json) into\n"
    "PNG pictures, one per plane, in DIR/view/: a diverging colormap, blue below\n"
    "zero, white at zero, red above, over a range symmetric about zero.\n"
    "\n"
    "  --file NAME         only this output file (default: every one in DIR)\n"
    "  --planes A:B        planes A to B - 1 (default: all that hold data)\n"
    "  --every K           every K-th of those planes (default 1)\n"
    "  --range LO:HI       the colormap's range (default: symmetric, from the data)\n"
    "  --sheet             also a contact sheet of the pictures (NAME-sheet.png)\n";

static gf_status view_usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "gflow: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "; see 'gflow view --help'\n");
  return GF_USAGE;
}

/* `gflow view DIR ...`. */
static int view_command(int argc, char **argv) {
  enum { OPT_FILE = 256, OPT_PLANES, OPT_EVERY, OPT_RANGE, OPT_SHEET, OPT_HELP };
  static const struct option options[] = {{"file", required_argument, NULL, OPT_FILE},
                                          {"planes", required_argument, NULL, OPT_PLANES},
                                          {"every", required_argument, NULL, OPT_EVERY},
                                          {"range", required_argument, NULL, OPT_RANGE},
                                          {"sheet", no_argument, NULL, OPT_SHEET},
                                          {"help", no_argument, NULL, OPT_HELP},
                                          {NULL, 0, NULL, 0}};
  gf_view_options v = {.end = -1, .every = 1};
  optind = 2;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    int64_t a, b;
    char *colon = optarg ? strchr(optarg, ':') : NULL;
    switch (opt) {
      case OPT_FILE:
        v.file = optarg;
        break;
      case OPT_PLANES:
        if (!colon) return view_usage_error("--planes takes A:B, not '%s'", optarg);
        *colon = '\0';
        if (!parse_int(optarg, &a) || !parse_int(colon + 1, &b) || a < 0 || b <= a) {
          *colon = ':';
          return view_usage_error("--planes takes A:B with 0 <= A < B, not '%s'", optarg);
        }
        v.first = a;
        v.end = b;
        break;
      case OPT_EVERY:
        if (!parse_int(optarg, &a) || a < 1)
          return view_usage_error("--every takes a count >= 1, not '%s'", optarg);
        v.every = a;
        break;
      case OPT_RANGE: {
        char *end;
        v.lo = colon ? strtod(optarg, &end) : 0;
        if (!colon || end != colon || (v.hi = strtod(colon + 1, &end), *end) || !(v.lo < v.hi))
          return view_usage_error("--range takes LO:HI with LO < HI, not '%s'", optarg);
        v.fixed_range = 1;
        break;
      }
      case OPT_SHEET:
        v.sheet = 1;
        break;
      case OPT_HELP:
        fputs(usage_view, stdout);
        return 0;
      default:
        return view_usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return view_usage_error("'view' needs one output folder%s", "");
  v.dir = argv[optind];
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  return (int)gf_view(&v, &diag, stdout);
}

int main(int argc, char **argv) {
  /* Past a file size limit a write then fails with EFBIG, which gflow
   * reports, instead of the signal ending the process without a word. */
  signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    print_main_help(stderr);
    return GF_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)
    return (int)help_command(argc, argv);
  if (strcmp(argv[1], "--version") == 0) {
    printf("gflow %s (workflow schema 1, kernel ABI %d)\n", GFLOW_VERSION, GF_ABI_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "view") == 0) return view_command(argc, argv);
  if (strcmp(argv[1], "sweep") == 0) return gf_sweep_main(argc, argv);             /* sweep.c */
  if (strcmp(argv[1], "collect") == 0) return gf_collect_main(argc - 1, argv + 1); /* collect.c */
  cli c = {.command = find_command(argv[1]), .device = -1, .step = -1, .trace_end = INT64_MAX};
  if (!c.command) return (int)usage_error(NULL, "unknown command '%s'", argv[1]);
  /* run.json records the command line as typed */
  c.argc = argc;
  if (!(c.argv = gf_calloc((size_t)argc + 1, sizeof *c.argv))) return (int)cli_out_of_memory();
  memcpy(c.argv, argv, (size_t)argc * sizeof *argv);
  gf_status st = parse_args(argc, argv, &c);
  if (st == GF_OK && c.help) {
    print_command_help(c.command, stdout);
  } else if (st == GF_OK && c.command->bit == CMD_RUN) {
    /* Under mpirun or srun: one rank of a job (comm.h). Rank 0 speaks for
     * the job; the others report only their errors, named by rank. */
    gf_diag diag;
    gf_diag_init(&diag, NULL, NULL);
    st = gf_comm_create(&argc, &argv, &diag, &c.comm);
    if (st == GF_OK) {
      gf_diag_set_rank(gf_comm_rank(c.comm), gf_comm_size(c.comm));
      if (gf_comm_rank(c.comm) > 0) c.quiet = 1;
      st = run_command(&c);
      /* A rank whose device failed before the loop ends the job, so none
       * waits on it; the others' failures (the workflow) are every rank's. */
      if (st == GF_INTERNAL) gf_comm_abort(c.comm, (int)st);
    }
    gf_comm_free(c.comm);
  } else if (st == GF_OK) {
    st = run_command(&c);
  }
  for (int i = 0; i < c.noverrides; i++) free((char *)c.overrides[i].key);
  free(c.overrides);
  free(c.plugins);
  free(c.argv);
  return (int)st;
}
