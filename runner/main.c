/* main.c - the gflow command: run, validate, dag, kernels. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "error.h"
#include "eval.h"
#include "exec.h"
#include "graph.h"
#include "program.h"
#include "registry.h"
#include "workflow.h"

static const char usage_main[] =
    "usage: gflow COMMAND [options]\n"
    "\n"
    "Runs GPU simulation workflows described in YAML.\n"
    "\n"
    "commands:\n"
    "  run FILE        load, check and run a workflow\n"
    "  validate FILE   load and check a workflow, plan every step, print a summary\n"
    "  dag FILE        print one step's task graph as Graphviz DOT\n"
    "  kernels         list the kernels and their parameters\n"
    "\n"
    "options for every command: --help, --version\n"
    "`gflow COMMAND --help` describes a command's options.\n";

static const char usage_run[] =
    "usage: gflow run FILE [options]\n"
    "\n"
    "  --set KEY=VALUE     override a key of the file (repeatable), e.g.\n"
    "                      --set grid.shape=[512,512] --set schedule=sync\n"
    "  --backend NAME      auto (default: the GPU if one answers, else the CPU), cpu or gpu\n"
    "  --device N          GPU index (default: SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK or 0)\n"
    "  --threads N         CPU backend: OpenMP threads per kernel (default: all cores)\n"
    "  --out DIR           output folder (default: out/NAME, NAME the workflow's name)\n"
    "  --plugin FILE       load a kernel plugin (repeatable)\n"
    "  --timing            GPU backend: measure every task's busy time with events\n"
    "                      (the CPU backend always does; on a GPU it adds two events per task)\n"
    "  --lua-memory N      bytes a Lua hook state may hold (same as --set limits.lua_memory=N)\n"
    "  --lua-instructions N  instructions per hook call (--set limits.lua_instructions=N)\n"
    "  --quiet             no timing report\n"
    "  --allow-unstable    run kernel calls that fail their stability condition (CFL)\n"
    "\n"
    "SIGINT or SIGTERM stops the run at the next step boundary: the outputs so far\n"
    "are written, marked \"complete\": false, and gflow exits 130 or 143. A second\n"
    "signal ends it at once (nothing then appears under a final name).\n";

static const char usage_validate[] =
    "usage: gflow validate FILE [--set KEY=VALUE]... [--plugin FILE]...\n"
    "                      [--lua-memory N] [--lua-instructions N]\n"
    "\n"
    "Loads and checks the workflow, plans every step under its schedule (finding\n"
    "hazards, cycles and out-of-range indices) and prints a summary: tasks per\n"
    "step, streams, synchronisation, memory per space. Runs nothing.\n";

static const char usage_dag[] =
    "usage: gflow dag FILE [--set KEY=VALUE]... [--step N] [--plugin FILE]...\n"
    "\n"
    "Prints the task graph of one step as Graphviz DOT: tasks clustered by stream,\n"
    "edges labelled with why they exist (after, reads after write, ...) and how the\n"
    "schedule enforces them (ordered, event, host sync). Default step: the first at\n"
    "which the most tasks run. Render with: gflow dag FILE | dot -Tsvg > dag.svg\n";

static const char usage_kernels[] =
    "usage: gflow kernels [--plugin FILE]...\n"
    "\n"
    "Lists every kernel with its typed parameters, defaults, ranges and help.\n";

typedef struct cli {
  const char *command;
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
  int allow_unstable; /* --allow-unstable */
} cli;

static gf_status usage_error(const char *usage, const char *fmt, const char *arg) {
  fprintf(stderr, "gflow: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n%s", usage);
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

static gf_status parse_args(int argc, char **argv, cli *c, const char **usage) {
  enum {
    OPT_TIMING = 255,
    OPT_SET = 256,
    OPT_BACKEND,
    OPT_DEVICE,
    OPT_THREADS,
    OPT_OUT,
    OPT_PLUGIN,
    OPT_STEP,
    OPT_QUIET,
    OPT_HELP,
    OPT_LUA_MEMORY,
    OPT_LUA_INSTRUCTIONS,
    OPT_ALLOW_UNSTABLE
  };
  static const struct option options[] = {
      {"set", required_argument, NULL, OPT_SET},
      {"backend", required_argument, NULL, OPT_BACKEND},
      {"device", required_argument, NULL, OPT_DEVICE},
      {"threads", required_argument, NULL, OPT_THREADS},
      {"out", required_argument, NULL, OPT_OUT},
      {"plugin", required_argument, NULL, OPT_PLUGIN},
      {"step", required_argument, NULL, OPT_STEP},
      {"quiet", no_argument, NULL, OPT_QUIET},
      {"help", no_argument, NULL, OPT_HELP},
      {"timing", no_argument, NULL, OPT_TIMING},
      {"lua-memory", required_argument, NULL, OPT_LUA_MEMORY},
      {"lua-instructions", required_argument, NULL, OPT_LUA_INSTRUCTIONS},
      {"allow-unstable", no_argument, NULL, OPT_ALLOW_UNSTABLE},
      {NULL, 0, NULL, 0}};
  const char *cmd = c->command;
  int is_run = strcmp(cmd, "run") == 0, is_dag = strcmp(cmd, "dag") == 0;
  int takes_file = strcmp(cmd, "kernels") != 0;
  optind = 2;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    int64_t v;
    gf_status st;
    switch (opt) {
      case OPT_HELP:
        fputs(*usage, stdout);
        exit(0);
      case OPT_SET: {
        if (!takes_file) return usage_error(*usage, "'%s' takes no --set", cmd);
        const char *eq = strchr(optarg, '=');
        if (!eq || eq == optarg)
          return usage_error(*usage, "--set needs KEY=VALUE, got '%s'", optarg);
        st = add_override(c, gf_strndup(optarg, (size_t)(eq - optarg)), eq + 1);
        if (st != GF_OK) return st;
        break;
      }
      case OPT_LUA_MEMORY:
      case OPT_LUA_INSTRUCTIONS: {
        /* One path for a limit: the option becomes an override of the file's
         * `limits:`, checked (range, message) where the file's would be. */
        const char *name = opt == OPT_LUA_MEMORY ? "--lua-memory" : "--lua-instructions";
        if (!takes_file) return usage_error(*usage, "'%s' loads no hooks", cmd);
        if (!parse_int(optarg, &v) || v < 1) {
          fprintf(stderr, "gflow: %s takes a positive integer, not '%s'\n%s", name, optarg, *usage);
          return GF_USAGE;
        }
        st = add_override(
            c, gf_strdup(opt == OPT_LUA_MEMORY ? "limits.lua_memory" : "limits.lua_instructions"),
            optarg);
        if (st != GF_OK) return st;
        break;
      }
      case OPT_PLUGIN:
        if (GF_GROW(c->plugins, c->plugins_cap, c->nplugins + 1) != GF_OK)
          return cli_out_of_memory();
        c->plugins[c->nplugins++] = optarg;
        break;
      case OPT_BACKEND:
        if (!is_run) return usage_error(*usage, "--backend is an option of 'run', not '%s'", cmd);
        if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "gpu"))
          return usage_error(*usage, "--backend must be auto, cpu or gpu, not '%s'", optarg);
        c->backend = optarg;
        break;
      case OPT_DEVICE:
        if (!is_run || !parse_int(optarg, &v) || v < 0)
          return usage_error(*usage, "--device takes a GPU index (run only), not '%s'", optarg);
        c->device = (int)v;
        break;
      case OPT_THREADS:
        if (!is_run || !parse_int(optarg, &v) || v < 1 || v > 4096)
          return usage_error(*usage, "--threads takes a positive count (run only), not '%s'",
                             optarg);
        c->threads = (int)v;
        break;
      case OPT_OUT:
        if (!is_run) return usage_error(*usage, "--out is an option of 'run', not '%s'", cmd);
        c->out_dir = optarg;
        break;
      case OPT_STEP:
        if (!is_dag || !parse_int(optarg, &v) || v < 0)
          return usage_error(*usage, "--step takes a step index (dag only), not '%s'", optarg);
        c->step = v;
        break;
      case OPT_TIMING:
        if (!is_run) return usage_error(*usage, "--timing is an option of 'run', not '%s'", cmd);
        c->timing = 1;
        break;
      case OPT_ALLOW_UNSTABLE:
        if (!is_run)
          return usage_error(*usage, "--allow-unstable is an option of 'run', not '%s'", cmd);
        c->allow_unstable = 1;
        break;
      case OPT_QUIET:
        if (!is_run) return usage_error(*usage, "--quiet is an option of 'run', not '%s'", cmd);
        c->quiet = 1;
        break;
      default:
        return usage_error(*usage, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (takes_file) {
    if (optind >= argc) return usage_error(*usage, "'%s' needs a workflow FILE", cmd);
    c->file = argv[optind++];
  }
  if (optind < argc) return usage_error(*usage, "unexpected argument '%s'", argv[optind]);
  return GF_OK;
}

static gf_status open_registry(const cli *c, gf_diag *diag, gf_registry **out) {
  gf_registry *registry = gf_registry_create();
  *out = registry;
  /* The built-in tables are checked by the tests: only memory can refuse them. */
  if (!registry || gf_kernels_register_builtin(gf_registry_registrar(registry)) != 0)
    return gf_oom(diag, "registering the built-in kernels");
  for (int i = 0; i < c->nplugins; i++) {
    gf_status st = gf_registry_load_plugin(registry, c->plugins[i], diag);
    if (st != GF_OK) return st;
  }
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
  }
  return "?";
}

static void print_kernels(const gf_registry *registry) {
  for (int k = 0; k < gf_registry_count(registry); k++) {
    const gf_kernel *kernel = gf_registry_at(registry, k);
    printf("%s%s\n  %s\n  GPU: %s\n  parameters:\n", k ? "\n" : "", kernel->name, kernel->help,
           kernel->launch_gpu ? "yes" : "no (CPU only in this build)");
    for (const gf_param *p = kernel->params; p->name; p++) {
      char detail[160] = "";
      if (p->type == GF_PARAM_ARRAY) {
        gf_access rw = (gf_access)(p->access & GF_ACCESS_READ_WRITE);
        const char *acc = rw == GF_ACCESS_READ    ? "read"
                          : rw == GF_ACCESS_WRITE ? "written"
                                                  : "read and written";
        snprintf(detail, sizeof detail, "%s %s%s%s", acc, (p->dtypes & 1u) ? "f32" : "",
                 (p->dtypes & 3u) == 3u ? "|" : "", (p->dtypes & 2u) ? "f64" : "");
      } else if (p->required) {
        snprintf(detail, sizeof detail, "required");
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
}

/* GPU if one answers (auto), else the CPU; a forced backend that cannot run is an error. */
static gf_status open_backend(const cli *c, gf_diag *diag, gf_backend **out) {
  gf_backend_options options = {.device = c->device, .threads = c->threads, .timing = c->timing};
  const char *want = c->backend ? c->backend : "auto";
  if (strcmp(want, "cpu") != 0) {
    char why[512] = "";
    if (gf_backend_gpu_create(&options, out, why, sizeof why) == GF_OK) {
      fprintf(stderr, "gflow: backend gpu: %s\n", (*out)->description);
      return GF_OK;
    }
    if (strcmp(want, "gpu") == 0)
      return gf_diag_error(diag, GF_INTERNAL, "--backend gpu cannot run here: %s", why);
    fprintf(stderr, "gflow: no GPU backend (%s); running on the CPU backend\n", why);
  }
  options.timing = 1; /* a clock read per task: always worth it on the CPU */
  if (gf_backend_cpu_create(&options, out) != GF_OK)
    return gf_oom(diag, "starting the CPU backend"); /* its only failure */
  fprintf(stderr, "gflow: backend cpu: %s\n", (*out)->description);
  return GF_OK;
}

/* The one piece of global state: a signal handler reaches nothing else. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) {
  stop_signal = sig;
}

/* SIGINT and SIGTERM ask the time loop to stop at the next step boundary.
 * SA_RESETHAND: a second signal ends gflow at once. A SIGINT the parent set
 * to be ignored (a background job of a script) stays ignored, as in any
 * well-behaved Unix program. */
static void catch_stop_signals(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  struct sigaction old;
  if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
    sigaction(SIGINT, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
}

static gf_status run_command(cli *c) {
  const char *usage = usage_main;
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  gf_registry *registry = NULL;
  gf_workflow *wf = NULL;
  gf_plan *plan = NULL;
  gf_program *program = NULL;
  gf_eval *eval = NULL;
  gf_backend *backend = NULL;
  gf_status st = open_registry(c, &diag, &registry);

  if (st == GF_OK && strcmp(c->command, "kernels") == 0) {
    print_kernels(registry);
    gf_registry_free(registry);
    return GF_OK;
  }
  (void)usage;
  if (st == GF_OK)
    st = gf_workflow_load(c->file, c->overrides, c->noverrides, registry, NULL, &diag, &wf, &eval);
  if (st == GF_OK) {
    gf_diag_init(&diag, wf->path, wf->source);
    gf_unstable_policy unstable = strcmp(c->command, "run") != 0 ? GF_UNSTABLE_NOTE
                                  : c->allow_unstable            ? GF_UNSTABLE_ALLOW
                                                                 : GF_UNSTABLE_REFUSE;
    st = gf_workflow_check_stable(wf, unstable, &diag);
    if (st == GF_OK) st = gf_plan_create(wf, &diag, &plan);
  }
  if (st == GF_OK && strcmp(c->command, "validate") == 0) {
    /* What run would compile, checked the same way. */
    st = gf_program_create(wf, plan, &diag, &program);
    if (st == GF_OK) st = gf_program_compile(program, 0, GF_VALIDATE_MAX_STEPS, &diag);
    if (st == GF_OK) {
      gf_plan_write_summary(plan, stdout);
      gf_program_write_summary(program, stdout);
    }
  }
  if (st == GF_OK && strcmp(c->command, "dag") == 0)
    st = gf_plan_write_dot(plan, c->step, &diag, stdout);
  if (st == GF_OK && strcmp(c->command, "run") == 0) {
    /* Compiled (and so checked) before anything runs: every step up to
     * GF_VALIDATE_MAX_STEPS; the run compiles the rest as it reaches it. */
    st = gf_program_create(wf, plan, &diag, &program);
    if (st == GF_OK) st = gf_program_compile(program, 0, GF_VALIDATE_MAX_STEPS, &diag);
    char *default_out = NULL;
    if (st == GF_OK) st = open_backend(c, &diag, &backend);
    if (st == GF_OK) {
      if (!c->out_dir && !(default_out = gf_asprintf("out/%s", wf->name)))
        st = gf_oom(&diag, "naming the output folder");
    }
    if (st == GF_OK) {
      gf_run_options options = {.out_dir = c->out_dir ? c->out_dir : default_out,
                                .quiet = c->quiet,
                                .stop = &stop_signal};
      catch_stop_signals();
      st = gf_exec_run(wf, program, eval, backend, &options, &diag);
    }
    free(default_out);
  }
  if (backend) backend->ops->destroy(backend);
  gf_program_free(program);
  gf_plan_free(plan);
  gf_eval_free(eval);
  gf_workflow_free(wf);
  gf_registry_free(registry);
  return st;
}

int main(int argc, char **argv) {
  /* Past a file size limit a write then fails with EFBIG, which gflow
   * reports, instead of the signal ending the process without a word. */
  signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    fputs(usage_main, stderr);
    return GF_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    fputs(usage_main, stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("gflow %s (workflow schema 1, kernel ABI %d)\n", GFLOW_VERSION, GF_ABI_VERSION);
    return 0;
  }
  cli c = {.command = argv[1], .device = -1, .step = -1};
  const char *usage = NULL;
  if (strcmp(c.command, "run") == 0)
    usage = usage_run;
  else if (strcmp(c.command, "validate") == 0)
    usage = usage_validate;
  else if (strcmp(c.command, "dag") == 0)
    usage = usage_dag;
  else if (strcmp(c.command, "kernels") == 0)
    usage = usage_kernels;
  else {
    fprintf(stderr, "gflow: unknown command '%s'\n%s", c.command, usage_main);
    return GF_USAGE;
  }
  gf_status st = parse_args(argc, argv, &c, &usage);
  if (st == GF_OK) st = run_command(&c);
  for (int i = 0; i < c.noverrides; i++) free((char *)c.overrides[i].key);
  free(c.overrides);
  free(c.plugins);
  return (int)st;
}
