/* fuzz_workflow.c - a libFuzzer target over the whole path from workflow bytes
 * to a planned graph: gf_workflow_load_text (YAML, schema, --set overrides,
 * expressions, Lua hooks) -> gf_plan_create -> gf_plan_step (and the program
 * compiler over the same steps) for the first
 * steps -> the DOT writer and the resolved YAML -> free everything.
 *
 * Input: the workflow text, optionally followed by a line `# --set` and then
 * one override per line, `KEY=VALUE` (the `--set` of the command line). The
 * separator is a YAML comment, so every workflow file is a valid input as is.
 *
 * Hook files resolve against a scratch folder made once per process, holding
 * links to every Lua file of the repository (GF_FUZZ_SOURCE_DIR), laid out so
 * the seeds' `lua:` paths (ricker.lua, hook_ok.lua, ../../workflows/ricker.lua)
 * find their files.
 *
 * Built with clang -fsanitize=fuzzer (scripts/fuzz.sh), or with any compiler
 * against tests/fuzz/replay.c, which feeds it files (CTest's fuzz_replay).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "eval.h"
#include "graph.h"
#include "program.h"
#include "registry.h"
#include "task_hook.h"
#include "task_kernel.h"
#include "workflow.h"

#ifndef GF_FUZZ_SOURCE_DIR
#error "define GF_FUZZ_SOURCE_DIR as the repository's root folder"
#endif

#define FUZZ_MAX_STEPS 64    /* planned steps per input: validate's 10^7 would time out */
#define FUZZ_MAX_OVERRIDES 8 /* `--set` lines honoured after the separator */
#define FUZZ_SEPARATOR "# --set\n"
#define FUZZ_MAX_HOOK_CALLS 8 /* each may run up to the instruction limit */
#define FUZZ_MAX_TABLES 2     /* pure hooks prepared (18 calls each) */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What every input shares, set up once: libFuzzer's interface has no context
 * argument, so this is the one place the harness keeps state. */
static struct {
  gf_registry *registry;
  FILE *sink;     /* /dev/null: messages are exercised, not shown */
  char root[256]; /* the scratch folder */
  char path[320]; /* the workflow's name inside it: root/w/x/fuzz.yaml */
  gf_lua_limits lua_limits;
} fuzz;

/* The scratch folder is named after the user and the repository and reused:
 * -fork jobs end by being killed, so a folder per process would never be
 * removed, and every process would fill it with the same links. */
static void make_dir(const char *path) {
  if (mkdir(path, 0700) != 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz_workflow: cannot make %s: %s\n", path, strerror(errno));
    abort();
  }
}

/* Links root/DIR/NAME to the repository's SRC. */
static void link_file(const char *dir, const char *name, const char *src) {
  char target[512], at[512];
  snprintf(target, sizeof target, "%s/%s", GF_FUZZ_SOURCE_DIR, src);
  snprintf(at, sizeof at, "%s/%s/%s", fuzz.root, dir, name);
  if (symlink(target, at) != 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz_workflow: cannot link %s: %s\n", at, strerror(errno));
    abort();
  }
}

static void set_up(void) {
  /* GF_FUZZ_VERBOSE=1 shows the messages, for triage of a saved input. */
  const char *verbose = getenv("GF_FUZZ_VERBOSE");
  fuzz.sink = verbose && *verbose && strcmp(verbose, "0") != 0 ? stderr : fopen("/dev/null", "w");
  if (!fuzz.sink) fuzz.sink = tmpfile();
  fuzz.registry = gf_registry_create();
  if (gf_kernels_register_builtin(gf_registry_registrar(fuzz.registry)) != 0) abort();
  /* Small enough that no hook can make one input slow. */
  fuzz.lua_limits = (gf_lua_limits){.memory_bytes = (size_t)8 << 20, .instructions = 1000000};

  uint32_t hash = 2166136261u; /* FNV-1a of the repository's path */
  for (const char *c = GF_FUZZ_SOURCE_DIR; *c; c++) hash = (hash ^ (uint8_t)*c) * 16777619u;
  const char *tmp = getenv("TMPDIR");
  snprintf(fuzz.root, sizeof fuzz.root, "%s/gflow-fuzz-%u-%08x", tmp && *tmp ? tmp : "/tmp",
           (unsigned)getuid(), (unsigned)hash);
  char dir[300];
  make_dir(fuzz.root);
  struct stat st;
  if (lstat(fuzz.root, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
    fprintf(stderr, "fuzz_workflow: %s is not a folder of this user\n", fuzz.root);
    abort();
  }
  snprintf(dir, sizeof dir, "%s/w", fuzz.root);
  make_dir(dir);
  snprintf(dir, sizeof dir, "%s/w/x", fuzz.root);
  make_dir(dir);
  snprintf(dir, sizeof dir, "%s/workflows", fuzz.root);
  make_dir(dir);
  snprintf(fuzz.path, sizeof fuzz.path, "%s/w/x/fuzz.yaml", fuzz.root);

  static const char *const test_hooks[] = {"hog_load", "limits",  "load_error", "params", "returns",
                                           "runtime",  "sandbox", "spin_load",  "syntax"};
  link_file("w/x", "ricker.lua", "workflows/ricker.lua");
  link_file("workflows", "ricker.lua", "workflows/ricker.lua");
  link_file("w/x", "hook_ok.lua", "tests/bad/hook_ok.lua");
  link_file("w/x", "good_hooks.lua", "tests/good/good_hooks.lua");
  link_file("w/x", "test_ricker.lua", "tests/hooks/ricker.lua");
  for (size_t i = 0; i < sizeof test_hooks / sizeof test_hooks[0]; i++) {
    char name[64], src[96];
    snprintf(name, sizeof name, "%s.lua", test_hooks[i]);
    snprintf(src, sizeof src, "tests/hooks/%s.lua", test_hooks[i]);
    link_file("w/x", name, src);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  set_up();
  return 0;
}

/* Splits `text` (NUL-terminated, modified in place) at the separator line into
 * the workflow, whose length goes to *len, and up to FUZZ_MAX_OVERRIDES
 * `KEY=VALUE` lines. Returns the number of overrides. Without a separator
 * *len is left alone, so NUL bytes still reach the loader (which refuses them). */
static int split_overrides(char *text, size_t *len, gf_override *overrides) {
  char *sep = NULL;
  if (strncmp(text, FUZZ_SEPARATOR, strlen(FUZZ_SEPARATOR)) == 0)
    sep = text;
  else if ((sep = strstr(text, "\n" FUZZ_SEPARATOR)) != NULL)
    sep++;
  if (!sep) return 0;
  char *line = sep + strlen(FUZZ_SEPARATOR);
  *sep = '\0';
  *len = (size_t)(sep - text);
  int count = 0;
  while (*line && count < FUZZ_MAX_OVERRIDES) {
    char *end = strchr(line, '\n');
    if (end) *end = '\0';
    char *eq = strchr(line, '=');
    if (eq) {
      *eq = '\0';
      overrides[count++] = (gf_override){line, eq + 1};
    }
    if (!end) break;
    line = end + 1;
  }
  return count;
}

/* Calls the hooks the way a run does at step 0 (the planner never calls
 * them: `when`, indices and planes cannot use hooks): initial values at cell
 * 0, hook tasks, and kernel arguments that call hooks. */
static void call_hooks(const gf_workflow *wf, gf_eval *eval) {
  int calls = 0, tables = 0;
  /* The pure hooks' tables for a few steps (each fill stops at its first
   * failure), as the executor prepares them; a few hooks at most. */
  for (int h = 0; h < wf->nhooks; h++) tables += wf->hooks[h].pure && wf->hooks[h].unary_step_call;
  if (tables <= FUZZ_MAX_TABLES) gf_eval_prepare(eval, 0, 2);
  for (int f = 0; f < wf->nfields && calls < FUZZ_MAX_HOOK_CALLS; f++) {
    if (wf->fields[f].init_kind != GF_INIT_HOOK) continue;
    double args[6] = {0}, value = 0;
    gf_eval_hook(eval, wf->fields[f].init_hook, args, 6, &value, -1, 0);
    calls++;
  }
  for (int t = 0; t < wf->ntasks && calls < FUZZ_MAX_HOOK_CALLS; t++) {
    const gf_task *task = &wf->tasks[t];
    if (task->kind == &gf_task_hook_kind) {
      double n = 0;
      gf_eval_hook(eval, ((const gf_hook_task *)task->data)->hook, &n, 1, NULL, t, 0);
      calls++;
    }
    if (task->kind != &gf_task_kernel_kind) continue;
    const gf_kernel_task *k = task->data;
    for (int a = 0; a < k->nargs && calls < FUZZ_MAX_HOOK_CALLS; a++) {
      if (!k->args[a].value || !gf_expr_calls_hook(k->args[a].value)) continue;
      gf_status status = GF_OK;
      (void)gf_eval_number(eval, k->args[a].value, t, 0, &status);
      calls++;
    }
  }
}

static void plan_workflow(const gf_workflow *wf, gf_eval *eval, size_t size) {
  gf_diag diag;
  gf_workflow_diag_init(&diag, wf);
  diag.out = fuzz.sink;
  gf_plan *plan = NULL;
  if (gf_plan_create(wf, &diag, &plan) != GF_OK) {
    gf_plan_free(plan);
    return;
  }
  for (int s = 0; s < gf_plan_stream_count(plan); s++) (void)gf_plan_stream_name(plan, s);
  (void)gf_plan_order(plan);
  (void)gf_plan_event_slots(plan);

  /* The input's length picks whether edges are collected, so both paths run. */
  gf_plan_collect_edges(plan, (int)(size & 1));
  int64_t steps = wf->steps < FUZZ_MAX_STEPS ? wf->steps : FUZZ_MAX_STEPS;
  int64_t planned = 0;
  for (; planned < steps; planned++) {
    const gf_op *ops = NULL;
    int nops = 0, nedges = 0;
    if (gf_plan_step(plan, planned, &diag, &ops, &nops) != GF_OK) break;
    (void)gf_plan_edges(plan, &nedges);
  }
  /* `gflow dag` on the last step planned: replans from 0 with edges on. */
  if (planned > 0 && planned == steps)
    gf_plan_write_graph(plan, planned - 1, (gf_graph_format)(size & 2 ? 1 : 0), &diag, fuzz.sink);
  /* The program compiler over the same steps: lowering, bodies, segments. */
  gf_program *program = NULL;
  if (planned == steps && gf_program_create(wf, plan, &diag, &program) == GF_OK)
    (void)gf_program_compile(program, 0, steps, &diag);
  gf_program_free(program);
  if (wf->nhooks) call_hooks(wf, eval);
  gf_plan_free(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!fuzz.registry) set_up();
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  gf_override overrides[FUZZ_MAX_OVERRIDES];
  size_t len = size;
  int noverrides = split_overrides(text, &len, overrides);

  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  diag.out = fuzz.sink;
  gf_workflow *wf = NULL;
  gf_eval *eval = NULL;
  if (gf_workflow_load_text(fuzz.path, text, len, overrides, noverrides, fuzz.registry,
                            &fuzz.lua_limits, &diag, &wf, &eval) == GF_OK) {
    char *resolved = gf_workflow_resolved_yaml(wf);
    free(resolved);
    char name[64];
    for (int s = 0; s < wf->nstreams; s++) gf_workflow_stream_name(wf, s, name, sizeof name);
    plan_workflow(wf, eval, size);
    gf_eval_free(eval);
    gf_workflow_free(wf);
  }
  free(text);
  return 0;
}
