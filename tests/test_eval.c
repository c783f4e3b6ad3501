/* test_eval.c - the run's evaluation object: pure hooks' tables.
 *
 * A pure hook called with one integer argument from a per-step expression
 * is called once per argument (the tables gf_eval_prepare fills, and the
 * blocks filled past them), gives what the same hook gives without `pure`,
 * and fails at the step, with the message, it fails at without. Run from
 * tests/: the hooks are hooks/pure.lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "check.h"
#include "eval.h"
#include "registry.h"
#include "workflow.h"

/* The hooks in the workflow's order: what gf_eval_hook and expressions call. */
enum { WAVE, FAILS_AT_500, POSITIVE, TOTAL_CALLS, MOST_CALLS, NHOOKS };
static const char *const hook_names[NHOOKS] = {"wave", "fails_at_500", "positive", "total_calls",
                                               "most_calls"};

static const char workflow_text[] =
    "gflow: 1\n"
    "name: pure\n"
    "grid: {shape: [16, 16], halo: 2}\n"
    "fields:\n"
    "  U: {ring: 3}\n"
    "  V: {init: 1}\n"
    "hooks:\n"
    "  wave: {lua: pure.lua}\n"
    "  fails_at_500: {lua: pure.lua}\n"
    "  positive: {lua: pure.lua}\n"
    "  total_calls: {lua: pure.lua}\n"
    "  most_calls: {lua: pure.lua}\n"
    "loop:\n"
    "  steps: 1000\n"
    "  tasks:\n"
    "    - name: step\n"
    "      kernel: wave2d_4o\n"
    "      args: {U0: \"U[n]\", U1: \"U[n+1]\", U2: \"U[n+2]\", V: V, dt: 0.001,\n"
    "             amplitude: \"wave(n) + fails_at_500(n) + positive(n)\"}\n";

typedef struct loaded {
  gf_diag diag; /* the hooks report through it: it lives as long as the eval */
  gf_workflow *wf;
  gf_eval *eval;
} loaded;

/* The workflow with its first three hooks pure or not. */
static int load(loaded *l, int pure) {
  gf_registry *registry = gf_registry_create();
  CHECK_INT(gf_kernels_register_builtin(gf_registry_registrar(registry)), 0);
  gf_diag_init(&l->diag, NULL, NULL);
  l->diag.out = tmpfile();
  const char *value = pure ? "true" : "false";
  gf_override overrides[] = {{"hooks.wave.pure", value},
                             {"hooks.fails_at_500.pure", value},
                             {"hooks.positive.pure", value}};
  l->wf = NULL;
  l->eval = NULL;
  gf_status status =
      gf_workflow_load_text("hooks/pure.yaml", workflow_text, strlen(workflow_text), overrides, 3,
                            registry, NULL, &l->diag, &l->wf, &l->eval);
  gf_registry_free(registry);
  CHECK_INT(status, GF_OK);
  if (status != GF_OK) fprintf(stderr, "  %s\n", l->diag.last);
  return status == GF_OK;
}

static void unload(loaded *l) {
  gf_eval_free(l->eval);
  gf_workflow_free(l->wf);
  fclose(l->diag.out);
}

static int lookup_hook(void *user, const char *name, size_t len, gf_symbol *out) {
  (void)user;
  for (int h = 0; h < NHOOKS; h++)
    if (strlen(hook_names[h]) == len && strncmp(name, hook_names[h], len) == 0) {
      *out = (gf_symbol){.kind = GF_SYM_HOOK, .slot = h};
      return 1;
    }
  return 0;
}

/* `text`, a per-step expression of the hooks. */
static gf_expr *compile(loaded *l, const char *text) {
  gf_scope scope = {lookup_hook, NULL, 1};
  gf_expr *expr = NULL;
  CHECK_INT(gf_expr_compile(text, &scope, &l->diag, (gf_loc){1, 1, 0}, &expr), GF_OK);
  return expr;
}

/* total_calls or most_calls (`counter`) of hook `hook` (WAVE, ...). */
static double counter(loaded *l, int counter, int hook) {
  double v = -1, k = hook + 1;
  CHECK_INT(gf_eval_hook(l->eval, counter, &k, 1, &v, -1, 0), GF_OK);
  return v;
}

/* Everything the hooks reported so far. */
static void output(loaded *l, char *buf, size_t size) {
  fflush(l->diag.out);
  rewind(l->diag.out);
  size_t len = fread(buf, 1, size - 1, l->diag.out);
  buf[len] = '\0';
}

/* The steps first .. last - 1 at which `expr` fails or gives other bits with
 * the pure hook than without. */
static int differing(loaded *pure, loaded *plain, gf_expr *expr, int64_t first, int64_t last) {
  int differ = 0;
  for (int64_t n = first; n < last; n++) {
    gf_status a = GF_OK, b = GF_OK;
    double x = gf_eval_number(pure->eval, expr, 0, n, &a);
    double y = gf_eval_number(plain->eval, expr, 0, n, &b);
    differ += a != GF_OK || b != GF_OK || memcmp(&x, &y, sizeof x) != 0;
  }
  return differ;
}

/* The loader marks the hooks per-step expressions call with one argument,
 * and `pure:` as given. */
static void test_model(void) {
  loaded l;
  if (!load(&l, 1)) return;
  CHECK_INT(l.wf->nhooks, NHOOKS);
  for (int h = 0; h < NHOOKS; h++) {
    CHECK_STR(l.wf->hooks[h].name, hook_names[h]);
    CHECK_INT(l.wf->hooks[h].pure, h < TOTAL_CALLS);
    CHECK_INT(l.wf->hooks[h].unary_step_call, h < TOTAL_CALLS);
  }
  unload(&l);
}

/* Prepared for the run's steps: once per argument (the steps and 8 either
 * side), and nothing in the loop; the same values as without `pure`. */
static void test_called_once_per_argument(void) {
  loaded pure, plain;
  if (!load(&pure, 1) || !load(&plain, 0)) return;
  gf_expr *expr = compile(&pure, "wave(n) + 2 * wave(n - 1)");
  gf_eval_prepare(pure.eval, 0, 1000);
  gf_eval_prepare(plain.eval, 0, 1000); /* nothing to prepare: no pure hook */
  CHECK(counter(&pure, TOTAL_CALLS, WAVE) == 1016);
  CHECK(counter(&plain, TOTAL_CALLS, WAVE) == 0);
  int differ = differing(&pure, &plain, expr, 0, 1000);
  CHECK_INT(differ, 0);
  CHECK(counter(&pure, TOTAL_CALLS, WAVE) == 1016); /* all from the table */
  CHECK(counter(&pure, MOST_CALLS, WAVE) == 1);
  CHECK(counter(&plain, TOTAL_CALLS, WAVE) == 2000);
  CHECK_INT(pure.diag.count + plain.diag.count, 0);
  gf_expr_free(expr);
  unload(&pure);
  unload(&plain);
}

/* Past what was prepared, blocks are filled as the steps reach them, still
 * once per argument; a restart prepares from its own first step. */
static void test_past_the_prepared_steps(void) {
  loaded pure, plain;
  if (!load(&pure, 1) || !load(&plain, 0)) return;
  gf_expr *expr = compile(&pure, "wave(n) - wave(n - 1)");
  gf_eval_prepare(pure.eval, 0, 100);
  int differ = differing(&pure, &plain, expr, 0, 20000);
  CHECK_INT(differ, 0);
  CHECK(counter(&pure, MOST_CALLS, WAVE) == 1);
  double total = counter(&pure, TOTAL_CALLS, WAVE);
  CHECK(total >= 20008 && total < 20008 + 2 * 4096); /* whole blocks, ahead of the steps */
  unload(&pure);

  if (!load(&pure, 1)) return;
  gf_eval_prepare(pure.eval, 12345, 100);
  double before = counter(&pure, TOTAL_CALLS, WAVE);
  CHECK(before == 116);
  differ += differing(&pure, &plain, expr, 12345, 12445);
  CHECK_INT(differ, 0);
  CHECK(counter(&pure, TOTAL_CALLS, WAVE) == before);
  gf_expr_free(expr);
  unload(&pure);
  unload(&plain);
}

/* Not one integer argument, or a large one: Lua every time, as without
 * `pure`, with the same values. */
static void test_other_calls_go_to_lua(void) {
  const char *texts[] = {"wave(n + 0.5)", "wave(n, 1)", "wave(n + 2^53)", "wave(0 / 0)"};
  for (int i = 0; i < 4; i++) {
    loaded pure, plain;
    if (!load(&pure, 1) || !load(&plain, 0)) return;
    gf_expr *expr = compile(&pure, texts[i]);
    gf_eval_prepare(pure.eval, 0, 10);
    double before = counter(&pure, TOTAL_CALLS, WAVE);
    int differ = 0;
    for (int64_t n = 0; n < 10; n++)
      for (int twice = 0; twice < 2; twice++) differ += differing(&pure, &plain, expr, n, n + 1);
    if (differ) fprintf(stderr, "  %s\n", texts[i]);
    CHECK_INT(differ, 0);
    CHECK(counter(&pure, TOTAL_CALLS, WAVE) - before == 20);
    gf_expr_free(expr);
    unload(&pure);
    unload(&plain);
  }
}

/* A hook that fails at 500 fails at step 500, not before, with the message
 * and traceback it gives without `pure`. */
static void test_failure_at_its_step(void) {
  char reported[2][4096], last[2][sizeof((gf_diag *)0)->last];
  int64_t failed_at[2] = {-1, -1};
  for (int pure = 0; pure < 2; pure++) {
    loaded l;
    if (!load(&l, pure)) return;
    gf_expr *expr = compile(&l, "1 + fails_at_500(n)");
    gf_eval_prepare(l.eval, 0, 1000);
    CHECK_INT(l.diag.count, 0); /* the fill met the failure and said nothing */
    for (int64_t n = 0; n < 1000; n++) {
      gf_status st = GF_OK;
      double v = gf_eval_number(l.eval, expr, 0, n, &st);
      if (st != GF_OK) {
        CHECK_INT(st, GF_INTERNAL);
        failed_at[pure] = n;
        break;
      }
      CHECK(v == 1 + n * 0.5);
    }
    CHECK_INT(l.diag.count, 1);
    snprintf(last[pure], sizeof last[pure], "%s", l.diag.last);
    output(&l, reported[pure], sizeof reported[pure]);
    gf_expr_free(expr);
    unload(&l);
  }
  CHECK_INT(failed_at[0], 500);
  CHECK_INT(failed_at[1], 500);
  CHECK_STR(last[1],
            "hooks/pure.lua:21: no value at 500 (hook 'fails_at_500', task 'step', step 500)");
  CHECK_STR(last[1], last[0]);
  CHECK_STR(reported[1], reported[0]);
  CHECK(strstr(reported[1], "stack traceback:") != NULL);
}

/* A hook that refuses negative arguments: the prepared steps still come from
 * its table, and positive(n - 1) at step 0 fails there, as without `pure`. */
static void test_refused_margin(void) {
  loaded l;
  if (!load(&l, 1)) return;
  gf_expr *expr = compile(&l, "positive(n)"), *before = compile(&l, "positive(n - 1)");
  gf_eval_prepare(l.eval, 0, 100);
  CHECK(counter(&l, TOTAL_CALLS, POSITIVE) == 1 + 108); /* -8 failed, then 0 .. 107 */
  int wrong = 0;
  for (int64_t n = 0; n < 100; n++) {
    gf_status st = GF_OK;
    wrong += gf_eval_number(l.eval, expr, 0, n, &st) != n + 0.25 || st != GF_OK;
  }
  CHECK_INT(wrong, 0);
  CHECK(counter(&l, TOTAL_CALLS, POSITIVE) == 109);
  gf_status st = GF_OK;
  gf_eval_number(l.eval, before, 0, 0, &st);
  CHECK_INT(st, GF_INTERNAL);
  CHECK_STR(l.diag.last,
            "hooks/pure.lua:29: a negative argument (hook 'positive', task 'step', step 0)");
  gf_expr_free(expr);
  gf_expr_free(before);
  unload(&l);
}

/* save_state() in a file of pure hooks is refused (tests/bad), but one
 * that also gives a hook not declared pure may keep state for that one. */
static void test_pure_next_to_state(void) {
  static const char text[] =
      "gflow: 1\n"
      "name: state\n"
      "grid: {shape: [16, 16], halo: 2}\n"
      "fields: {U: {ring: 3}, V: {init: 1}}\n"
      "hooks:\n"
      "  pulse: {lua: hook_pure_state.lua, pure: true}\n"
      "  calls_so_far: {lua: hook_pure_state.lua}\n"
      "loop:\n"
      "  steps: 4\n"
      "  tasks:\n"
      "    - name: step\n"
      "      kernel: wave2d_4o\n"
      "      args: {U0: \"U[n]\", U1: \"U[n+1]\", U2: \"U[n+2]\", V: V, dt: 0.001,\n"
      "             amplitude: \"pulse(n) + calls_so_far()\"}\n";
  gf_registry *registry = gf_registry_create();
  CHECK_INT(gf_kernels_register_builtin(gf_registry_registrar(registry)), 0);
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  diag.out = tmpfile();
  gf_workflow *wf = NULL;
  gf_eval *eval = NULL;
  CHECK_INT(gf_workflow_load_text("bad/state.yaml", text, strlen(text), NULL, 0, registry, NULL,
                                  &diag, &wf, &eval),
            GF_OK);
  CHECK(wf && wf->hooks[0].pure && !wf->hooks[1].pure);
  gf_eval_free(eval);
  gf_workflow_free(wf);
  gf_registry_free(registry);
  fclose(diag.out);
}

int main(void) {
  RUN(test_model);
  RUN(test_called_once_per_argument);
  RUN(test_past_the_prepared_steps);
  RUN(test_other_calls_go_to_lua);
  RUN(test_failure_at_its_step);
  RUN(test_refused_margin);
  RUN(test_pure_next_to_state);
  return check_summary();
}
