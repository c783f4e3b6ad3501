/* test_expr.c - the expression language: syntax, semantics, folding, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "expr.h"

/* ---- a scope like a workflow's ------------------------------------------ */

static const double shape[] = {8, 6};
static const double spacing[] = {10, 20};

enum { HOOK_RICKER = 3, HOOK_FAIL = 4 };

typedef struct named_symbol {
  const char *name;
  gf_symbol symbol;
} named_symbol;

static const named_symbol workflow_names[] = {
    {"vel", {.kind = GF_SYM_CONST, .value = 2000}},
    {"cfl", {.kind = GF_SYM_CONST, .value = 0.5}},
    {"nt", {.kind = GF_SYM_CONST, .value = 10}},
    {"shape", {.kind = GF_SYM_ARRAY, .array = shape, .array_len = 2}},
    {"spacing", {.kind = GF_SYM_ARRAY, .array = spacing, .array_len = 2}},
    {"t", {.kind = GF_SYM_VAR, .slot = 0}},
    {"amp", {.kind = GF_SYM_VAR, .slot = 1}},
    {"ricker", {.kind = GF_SYM_HOOK, .slot = HOOK_RICKER}},
    {"fail", {.kind = GF_SYM_HOOK, .slot = HOOK_FAIL}},
    {NULL, {0}},
};

/* Names that hide built-ins. */
static const named_symbol shadowing_names[] = {
    {"pi", {.kind = GF_SYM_CONST, .value = 3}},
    {"min", {.kind = GF_SYM_CONST, .value = 7}},
    {NULL, {0}},
};

static int table_lookup(void *user, const char *name, size_t len, gf_symbol *out) {
  for (const named_symbol *s = user; s->name; s++) {
    if (strlen(s->name) == len && !memcmp(s->name, name, len)) {
      *out = s->symbol;
      return 1;
    }
  }
  return 0;
}

static const gf_scope step_scope = {table_lookup, (void *)workflow_names, 1};
static const gf_scope load_scope = {table_lookup, (void *)workflow_names, 0};
static const gf_scope shadow_scope = {table_lookup, (void *)shadowing_names, 0};

/* The fake hook returns 1000 * hook + 100 * nargs + the sum of its
 * arguments, and records what it was given. */
typedef struct hook_log {
  int calls;
  int hook;
  int nargs;
  double args[8];
} hook_log;

static double fake_call_hook(void *user, int hook, const double *args, int nargs,
                             gf_status *status) {
  hook_log *log = user;
  log->calls++;
  log->hook = hook;
  log->nargs = nargs;
  double sum = 0;
  for (int i = 0; i < nargs; i++) {
    if (i < 8) log->args[i] = args[i];
    sum += args[i];
  }
  if (hook == HOOK_FAIL) {
    *status = GF_IOERR;
    return 99;
  }
  return 1000.0 * hook + 100.0 * nargs + sum;
}

/* ---- helpers ------------------------------------------------------------- */

static const gf_loc at = {3, 10, 0};

/* Diagnostics go to a scratch file, not the terminal. */
static void diag_open(gf_diag *diag) {
  gf_diag_init(diag, "wf.yaml", NULL);
  diag->out = tmpfile();
  if (!diag->out) diag->out = stderr;
}

static void diag_close(gf_diag *diag) {
  if (diag->out != stderr) fclose(diag->out);
}

static gf_expr *compile_in(const char *text, const gf_scope *scope) {
  gf_diag diag;
  diag_open(&diag);
  gf_expr *expr = NULL;
  gf_status status = gf_expr_compile(text, scope, &diag, at, &expr);
  if (status != GF_OK) fprintf(stderr, "unexpected error for \"%s\": %s\n", text, diag.last);
  CHECK_INT(status, GF_OK);
  CHECK_INT(diag.count, 0);
  diag_close(&diag);
  return expr;
}

/* The value of a constant expression, evaluated without a context. */
static double constant(const char *text) {
  gf_expr *expr = compile_in(text, &load_scope);
  if (!expr) return NAN;
  CHECK(gf_expr_is_constant(expr));
  gf_status status = GF_OK;
  double value = gf_expr_eval(expr, NULL, &status);
  CHECK_INT(status, GF_OK);
  gf_expr_free(expr);
  return value;
}

#define CHECK_VALUE(text, expected)                                                         \
  do {                                                                                      \
    double value_ = constant(text);                                                         \
    if (value_ != (double)(expected)) {                                                     \
      fprintf(stderr, "%s:%d: \"%s\" == %.17g, expected %.17g\n", __FILE__, __LINE__, text, \
              value_, (double)(expected));                                                  \
      check_case_failed = 1;                                                                \
    }                                                                                       \
  } while (0)

/* Compiling `text` fails with exactly `message` (ORIGIN:LINE:COL: text). */
static void check_error_in(int line, const char *text, const gf_scope *scope, const char *message) {
  gf_diag diag;
  diag_open(&diag);
  gf_expr *expr = (gf_expr *)&diag; /* must be reset to NULL */
  gf_status status = gf_expr_compile(text, scope, &diag, at, &expr);
  if (status != GF_INVALID || strcmp(diag.last, message) != 0)
    fprintf(stderr, "test_expr.c:%d: for \"%s\"\n", line, text);
  CHECK_INT(status, GF_INVALID);
  CHECK(expr == NULL);
  CHECK_INT(diag.count, 1);
  CHECK_STR(diag.last, message);
  diag_close(&diag);
  if (status == GF_OK) gf_expr_free(expr);
}

#define CHECK_ERROR(text, message) check_error_in(__LINE__, text, &step_scope, message)
#define CHECK_LOAD_ERROR(text, message) check_error_in(__LINE__, text, &load_scope, message)

/* Evaluates a per-step expression at step n with vars {t, amp}. */
static double eval_step(const char *text, double n, const double *vars, hook_log *log,
                        gf_status *status) {
  gf_expr *expr = compile_in(text, &step_scope);
  if (!expr) return NAN;
  gf_eval_ctx ctx = {.n = n, .vars = vars, .call_hook = fake_call_hook, .user = log};
  double value = gf_expr_eval(expr, &ctx, status);
  gf_expr_free(expr);
  return value;
}

/* ---- cases --------------------------------------------------------------- */

static void test_precedence_and_associativity(void) {
  CHECK_VALUE("1+2*3", 7);
  CHECK_VALUE("(1+2)*3", 9);
  CHECK_VALUE("2^3^2", 512); /* right-associative: 2^(3^2) */
  CHECK_VALUE("(2^3)^2", 64);
  CHECK_VALUE("-2^2", -4); /* ^ binds tighter than unary minus */
  CHECK_VALUE("(-2)^2", 4);
  CHECK_VALUE("2^-1", 0.5);
  CHECK_VALUE("2*3^2", 18);
  CHECK_VALUE("10-4-3", 3); /* left-associative */
  CHECK_VALUE("8/4/2", 1);
  CHECK_VALUE("2 - -1", 3);
  CHECK_VALUE("--2", 2);
  CHECK_VALUE("-3 % 5", 2); /* (-3) % 5 */
  CHECK_VALUE("1 + 2 < 4", 1);
  CHECK_VALUE("not 1 == 2", 1);   /* not (1 == 2) */
  CHECK_VALUE("1 or 0 and 0", 1); /* 1 or (0 and 0) */
  CHECK_VALUE("(1 or 0) and 0", 0);
  CHECK_VALUE(" \t1 +\n 2 ", 3);
}

static void test_numbers(void) {
  CHECK_VALUE("42", 42);
  CHECK_VALUE("1.5e1", 15);
  CHECK_VALUE(".5", 0.5);
  CHECK_VALUE("1.", 1);
  CHECK_VALUE("1E+2", 100);
  CHECK_VALUE("2.5e-1", 0.25);
  CHECK_VALUE("1e-3-1", -0.999);
}

static void test_floored_division(void) {
  CHECK_VALUE("-1 % 5", 4);
  CHECK_VALUE("1 % -5", -4);
  CHECK_VALUE("7 % 5", 2);
  CHECK_VALUE("-7 % -5", -2);
  CHECK_VALUE("5.5 % 2", 1.5);
  CHECK_VALUE("-5.5 % 2", 0.5);
  CHECK_VALUE("-6 % 3", 0);
  CHECK_VALUE("-7 // 2", -4);
  CHECK_VALUE("7 // 2", 3);
  CHECK_VALUE("7 // -2", -4);
  CHECK_VALUE("7 / 2", 3.5);
  CHECK(isnan(constant("1 % 0")));
}

static void test_comparisons_and_logic(void) {
  CHECK_VALUE("3 == 3", 1);
  CHECK_VALUE("3 != 3", 0);
  CHECK_VALUE("2 < 3", 1);
  CHECK_VALUE("3 < 3", 0);
  CHECK_VALUE("3 <= 3", 1);
  CHECK_VALUE("4 > 5", 0);
  CHECK_VALUE("5 >= 5", 1);
  CHECK_VALUE("(1 < 2) < 3", 1);
  CHECK_VALUE("2 and 3", 1);
  CHECK_VALUE("0 and 3", 0);
  CHECK_VALUE("-0.5 and 0", 0);
  CHECK_VALUE("0 or 0", 0);
  CHECK_VALUE("0 or -2", 1);
  CHECK_VALUE("7 or 0", 1);
  CHECK_VALUE("not 0", 1);
  CHECK_VALUE("not 7", 0);
  CHECK_VALUE("not not 7", 1);
  CHECK_VALUE("1 and 0 or 1", 1);
}

static void test_builtins(void) {
  CHECK_VALUE("min(3, 1, 2)", 1);
  CHECK_VALUE("max(3)", 3);
  CHECK_VALUE("max(1, 5, 2)", 5);
  CHECK_VALUE("min(4, -1)", -1);
  CHECK_VALUE("floor(-1.5)", -2);
  CHECK_VALUE("ceil(-1.5)", -1);
  CHECK_VALUE("round(2.5)", 3);
  CHECK_VALUE("round(-2.5)", -3);
  CHECK_VALUE("round(2.4)", 2);
  CHECK_VALUE("abs(-3)", 3);
  CHECK_VALUE("sqrt(16)", 4);
  CHECK_VALUE("exp(0)", 1);
  CHECK_VALUE("pow(2, 10)", 1024);
  CHECK_VALUE("pi", 3.14159265358979323846);
  CHECK_NEAR(constant("log(exp(2))"), 2, 1e-15);
  CHECK_NEAR(constant("sin(pi / 2)"), 1, 1e-15);
  CHECK_NEAR(constant("cos(pi)"), -1, 1e-15);
  CHECK_NEAR(constant("tan(pi / 4)"), 1, 1e-15);
  CHECK_NEAR(constant("atan2(1, -1)"), 3 * 0.78539816339744831, 1e-15);
  CHECK(isnan(constant("max(1, 0/0)")));
  CHECK(isnan(constant("min(0/0, 1)")));
}

static void test_scope_hides_builtins(void) {
  gf_expr *expr = compile_in("pi * min", &shadow_scope);
  if (expr) {
    gf_status status = GF_OK;
    CHECK_INT(gf_expr_eval(expr, NULL, &status), 21);
    gf_expr_free(expr);
  }
  check_error_in(__LINE__, "min(1, 2)", &shadow_scope, "wf.yaml:3:10: 'min' is not a function");
  expr = compile_in("max(1, 2) + 0 * pi", &shadow_scope); /* max is not hidden */
  if (expr) {
    gf_status status = GF_OK;
    CHECK_INT(gf_expr_eval(expr, NULL, &status), 2);
    gf_expr_free(expr);
  }
}

static void test_constant_folding(void) {
  const char *text = "cfl * min(spacing[0], spacing[1]) / vel";
  gf_expr *expr = compile_in(text, &load_scope);
  if (!expr) return;
  CHECK(gf_expr_is_constant(expr));
  CHECK(!gf_expr_calls_hook(expr));
  CHECK_STR(gf_expr_text(expr), text);
  CHECK(gf_expr_text(expr) != text); /* an owned copy */
  gf_status status = GF_OK;
  CHECK_NEAR(gf_expr_eval(expr, NULL, &status), 0.5 * 10 / 2000, 1e-18);
  CHECK_INT(status, GF_OK);
  gf_expr_free(expr);

  struct {
    const char *text;
    int is_constant, calls_hook;
  } cases[] = {
      {"floor(max(spacing[0] * shape[0], spacing[1] * shape[1]) / (0.001 * vel))", 1, 0},
      {"n + 1", 0, 0},
      {"1 + 2 * n", 0, 0},
      {"t * 2", 0, 0},
      {"ricker(1)", 0, 1},
      {"0 and ricker(n)", 0, 1},
      {"(1 < 2) and not 0", 1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    expr = compile_in(cases[i].text, &step_scope);
    if (!expr) continue;
    if (gf_expr_is_constant(expr) != cases[i].is_constant) fprintf(stderr, "%s\n", cases[i].text);
    CHECK_INT(gf_expr_is_constant(expr), cases[i].is_constant);
    CHECK_INT(gf_expr_calls_hook(expr), cases[i].calls_hook);
    gf_expr_free(expr);
  }
  CHECK_VALUE("floor(max(spacing[0] * shape[0], spacing[1] * shape[1]) / (0.001 * vel))", 60);
}

static void test_per_step(void) {
  const double vars[] = {1.5, 4};
  hook_log log = {0};
  gf_status status = GF_OK;
  CHECK_INT(eval_step("n % 5", 7, vars, &log, &status), 2);
  CHECK_INT(eval_step("(n + 2) % 3", 7, vars, &log, &status), 0);
  CHECK_NEAR(eval_step("t * 2 + amp", 0, vars, &log, &status), 7, 0);
  CHECK_NEAR(eval_step("-t^2", 0, vars, &log, &status), -2.25, 0);
  CHECK_INT(eval_step("n > 1 and n < nt - 1", 1, vars, &log, &status), 0);
  CHECK_INT(eval_step("n > 1 and n < nt - 1", 5, vars, &log, &status), 1);
  CHECK_INT(eval_step("n > 1 and n < nt - 1", 9, vars, &log, &status), 0);
  CHECK_INT(status, GF_OK);
  CHECK_INT(log.calls, 0);

  /* One compiled program, evaluated at many steps. */
  gf_expr *expr = compile_in("(n + 1) * amp - t", &step_scope);
  if (expr) {
    for (int n = 0; n < 100; n++) {
      gf_eval_ctx ctx = {.n = n, .vars = vars};
      CHECK_NEAR(gf_expr_eval(expr, &ctx, &status), (n + 1) * 4.0 - 1.5, 0);
    }
    gf_expr_free(expr);
  }
}

static void test_hooks(void) {
  const double vars[] = {1.5, 4};
  hook_log log = {0};
  gf_status status = GF_USAGE; /* success must leave it untouched */
  CHECK_NEAR(eval_step("ricker(n)", 5, vars, &log, &status), 3105, 0);
  CHECK_INT(log.calls, 1);
  CHECK_INT(log.hook, HOOK_RICKER);
  CHECK_INT(log.nargs, 1);
  CHECK_NEAR(log.args[0], 5, 0);

  log = (hook_log){0};
  CHECK_NEAR(eval_step("2 * ricker(n, t, amp + 1)", 5, vars, &log, &status),
             2 * (3000 + 300 + 5 + 1.5 + 5), 0);
  CHECK_INT(log.nargs, 3);
  CHECK_NEAR(log.args[0], 5, 0);
  CHECK_NEAR(log.args[1], 1.5, 0);
  CHECK_NEAR(log.args[2], 5, 0);

  log = (hook_log){0};
  CHECK_NEAR(eval_step("ricker(1, 2, 3, 4, 5, 6, 7, 8) + ricker()", 0, vars, &log, &status),
             (3000 + 800 + 36) + 3000, 0);
  CHECK_INT(log.calls, 2);
  CHECK_INT(log.nargs, 0);

  log = (hook_log){0};
  CHECK_NEAR(eval_step("ricker(1, 2, 3, 4, 5, 6, 7, 8)", 0, vars, &log, &status), 3836, 0);
  for (int i = 0; i < 8; i++) CHECK_NEAR(log.args[i], i + 1, 0);
  CHECK_INT(status, GF_USAGE);

  /* Arguments leave the stack when the hook returns: ten calls of eight
   * arguments each never need more than nine slots. */
  log = (hook_log){0};
  char sum[400] = "0";
  for (int i = 0; i < 10; i++) strcat(sum, " + ricker(1, 2, 3, 4, 5, 6, 7, 8)");
  CHECK_NEAR(eval_step(sum, 0, vars, &log, &status), 10 * 3836, 0);
  CHECK_INT(log.calls, 10);

  /* and/or do not call the right side when the left decides. */
  log = (hook_log){0};
  CHECK_INT(eval_step("n > 3 and ricker(n)", 2, vars, &log, &status), 0);
  CHECK_INT(eval_step("n > 1 or ricker(n)", 2, vars, &log, &status), 1);
  CHECK_INT(log.calls, 0);
  CHECK_INT(eval_step("n > 1 and ricker(n)", 2, vars, &log, &status), 1);
  CHECK_INT(log.calls, 1);
  CHECK_INT(status, GF_USAGE);

  /* A failing hook stops the evaluation: 0, its status, nothing after it. */
  log = (hook_log){0};
  status = GF_OK;
  CHECK_NEAR(eval_step("1 + fail(n) + ricker(n)", 4, vars, &log, &status), 0, 0);
  CHECK_INT(status, GF_IOERR);
  CHECK_INT(log.calls, 1);
  CHECK_INT(log.hook, HOOK_FAIL);

  /* Without a call_hook the evaluation fails instead of crashing. */
  gf_expr *expr = compile_in("ricker(n)", &step_scope);
  if (expr) {
    gf_eval_ctx ctx = {.n = 1};
    status = GF_OK;
    CHECK_NEAR(gf_expr_eval(expr, &ctx, &status), 0, 0);
    CHECK_INT(status, GF_INTERNAL);
    gf_expr_free(expr);
  }
}

static void test_arrays(void) {
  CHECK_VALUE("shape[0]", 8);
  CHECK_VALUE("shape[1]", 6);
  CHECK_VALUE("spacing[1 + 0]", 20);
  CHECK_VALUE("shape[2 - 1] * spacing[0]", 60);
  CHECK_VALUE("spacing[shape[0] // 8]", 20);
  CHECK_VALUE("spacing[-0]", 10);
}

static void test_step_index_scope(void) {
  const double vars[] = {0, 0};
  gf_status status = GF_OK;
  CHECK_INT(eval_step("n", 12, vars, NULL, &status), 12);
  CHECK_LOAD_ERROR("vel * n", "wf.yaml:3:16: 'n' (the step index) cannot be used here");
  CHECK_ERROR("n2", "wf.yaml:3:10: unknown name 'n2'");
}

static void test_syntax_errors(void) {
  CHECK_ERROR("", "wf.yaml:3:10: empty expression");
  CHECK_ERROR("   ", "wf.yaml:3:10: empty expression");
  CHECK_ERROR("1 +", "wf.yaml:3:13: unexpected end of expression");
  CHECK_ERROR("-", "wf.yaml:3:11: unexpected end of expression");
  CHECK_ERROR("1 2", "wf.yaml:3:12: unexpected '2'; expected an operator or the end");
  CHECK_ERROR("1 $ 2", "wf.yaml:3:12: unexpected '$'; expected an operator or the end");
  CHECK_ERROR("n = 2", "wf.yaml:3:12: unexpected '='; expected an operator or the end");
  CHECK_ERROR("1 ! 2", "wf.yaml:3:12: unexpected '!'; expected an operator or the end");
  CHECK_ERROR("(1 2)", "wf.yaml:3:13: expected ')'");
  CHECK_ERROR("(1", "wf.yaml:3:12: expected ')'");
  CHECK_ERROR("1 + * 2", "wf.yaml:3:14: unexpected '*'; expected a number, a name or '('");
  CHECK_ERROR("()", "wf.yaml:3:11: unexpected ')'; expected a number, a name or '('");
  CHECK_ERROR("1 + not 0", "wf.yaml:3:14: unexpected 'not'; expected a number, a name or '('");
  CHECK_ERROR("1 + \xc3\xa9",
              "wf.yaml:3:14: unexpected '\xc3\xa9'; expected a number, a name or '('");
  CHECK_ERROR("+1", "wf.yaml:3:10: unexpected '+'; expected a number, a name or '('");
  CHECK_ERROR("max(1 2)", "wf.yaml:3:16: expected ',' or ')'");
  CHECK_ERROR("max(1,)", "wf.yaml:3:16: unexpected ')'; expected a number, a name or '('");
  CHECK_ERROR("max(1", "wf.yaml:3:15: expected ',' or ')'");
  CHECK_ERROR("spacing[0", "wf.yaml:3:19: expected ']'");
  CHECK_ERROR("1 < 2 < 3",
              "wf.yaml:3:16: comparisons cannot be chained; join them with 'and', as in a < b and "
              "b < c");
}

static void test_number_errors(void) {
  CHECK_ERROR("1e + 2", "wf.yaml:3:10: invalid number '1e'");
  CHECK_ERROR("2 * 1e", "wf.yaml:3:14: invalid number '1e'");
  CHECK_ERROR("1e+", "wf.yaml:3:10: invalid number '1e+'");
  CHECK_ERROR("1.2.3", "wf.yaml:3:10: invalid number '1.2.3'");
  CHECK_ERROR("3x + 1", "wf.yaml:3:10: invalid number '3x'");
  CHECK_ERROR("0x10", "wf.yaml:3:10: invalid number '0x10'");
  CHECK_ERROR("1 2e", "wf.yaml:3:12: invalid number '2e'");
  CHECK_ERROR("(1 2e)", "wf.yaml:3:13: invalid number '2e'");
  CHECK_ERROR("1e999", "wf.yaml:3:10: number '1e999' is too large");
}

static void test_name_errors(void) {
  CHECK_ERROR("foo + 1", "wf.yaml:3:10: unknown name 'foo'");
  CHECK_ERROR("1 + foo", "wf.yaml:3:14: unknown name 'foo'");
  CHECK_ERROR("foo(1)", "wf.yaml:3:10: unknown function 'foo'");
  CHECK_ERROR("shape + 1", "wf.yaml:3:10: 'shape' needs an index, as in shape[0]");
  CHECK_ERROR("spacing[2]", "wf.yaml:3:18: index 2 is out of range for 'spacing' (0..1)");
  CHECK_ERROR("spacing[ -1]", "wf.yaml:3:19: index -1 is out of range for 'spacing' (0..1)");
  CHECK_ERROR("spacing[0.5]", "wf.yaml:3:18: index 0.5 of 'spacing' is not an integer");
  CHECK_ERROR("spacing[n]", "wf.yaml:3:18: the index of 'spacing' must be a constant");
  CHECK_ERROR("spacing[t]", "wf.yaml:3:18: the index of 'spacing' must be a constant");
  CHECK_ERROR("vel[0]", "wf.yaml:3:10: 'vel' is not an array");
  CHECK_ERROR("1 + n[0]", "wf.yaml:3:14: 'n' is not an array");
  CHECK_ERROR("pi[0]", "wf.yaml:3:10: 'pi' is not an array");
  CHECK_ERROR("ricker + 1", "wf.yaml:3:10: hook 'ricker' must be called, as in ricker(n)");
  CHECK_ERROR("vel(1)", "wf.yaml:3:10: 'vel' is not a function");
  CHECK_ERROR("shape(1)", "wf.yaml:3:10: 'shape' is not a function");
  CHECK_ERROR("pi(1)", "wf.yaml:3:10: 'pi' is not a function");
  CHECK_ERROR("sqrt", "wf.yaml:3:10: function 'sqrt' must be called, as in sqrt(x)");
  CHECK_ERROR("sqrt(1, 2)", "wf.yaml:3:10: function 'sqrt' takes 1 argument, got 2");
  CHECK_ERROR("1 + pow(2)", "wf.yaml:3:14: function 'pow' takes 2 arguments, got 1");
  CHECK_ERROR("atan2(1, 2, 3)", "wf.yaml:3:10: function 'atan2' takes 2 arguments, got 3");
  CHECK_ERROR("floor()", "wf.yaml:3:10: function 'floor' takes 1 argument, got 0");
  CHECK_ERROR("min()", "wf.yaml:3:10: function 'min' takes at least 1 argument, got 0");
  CHECK_ERROR("ricker(1, 2, 3, 4, 5, 6, 7, 8, 9)",
              "wf.yaml:3:10: hook 'ricker' takes at most 8 arguments, got 9");
}

/* `open` copies of `(`, then `middle`, then `close` copies of `)`. */
static char *nested(int open, const char *opener, const char *middle) {
  size_t size = (size_t)open * strlen(opener) + strlen(middle) + (size_t)open + 1;
  char *s = malloc(size);
  s[0] = '\0';
  for (int i = 0; i < open; i++) strcat(s, opener);
  strcat(s, middle);
  for (int i = 0; i < open; i++) strcat(s, ")");
  return s;
}

static void test_nesting_limit(void) {
  char *text = nested(64, "(", "7");
  CHECK_VALUE(text, 7);
  free(text);
  text = nested(65, "(", "7"); /* the 65th '(' is at offset 64 */
  CHECK_ERROR(text, "wf.yaml:3:74: expression is nested too deeply");
  free(text);

  /* 64 minus signs nest 64 deep; the 65th is too many. */
  char minus[80];
  memset(minus, '-', 64);
  strcpy(minus + 64, "1");
  CHECK_VALUE(minus, 1);
  memset(minus, '-', 65);
  strcpy(minus + 65, "1");
  CHECK_ERROR(minus, "wf.yaml:3:74: expression is nested too deeply");

  /* n+(n+(...(n)...)) keeps one value waiting per level: 63 levels need 64
   * stack slots, 64 levels would need 65. */
  const double vars[] = {0, 0};
  gf_status status = GF_OK;
  text = nested(63, "n+(", "n");
  CHECK_NEAR(eval_step(text, 3, vars, NULL, &status), 64 * 3, 0);
  free(text);
  text = nested(64, "n+(", "n"); /* the innermost n is at offset 3 * 64 */
  CHECK_ERROR(text, "wf.yaml:3:202: expression is nested too deeply");
  free(text);
}

int main(void) {
  RUN(test_precedence_and_associativity);
  RUN(test_numbers);
  RUN(test_floored_division);
  RUN(test_comparisons_and_logic);
  RUN(test_builtins);
  RUN(test_scope_hides_builtins);
  RUN(test_constant_folding);
  RUN(test_per_step);
  RUN(test_hooks);
  RUN(test_arrays);
  RUN(test_step_index_scope);
  RUN(test_syntax_errors);
  RUN(test_number_errors);
  RUN(test_name_errors);
  RUN(test_nesting_limit);
  return check_summary();
}
