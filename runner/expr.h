/* expr.h - the small arithmetic language of workflow files.
 *
 * Used for parameters (`dt: "cfl * min(spacing[0], spacing[1]) / vel"`),
 * conditions (`when: "n > 1 and n < nt - 1"`), ring and stream indices
 * (`U[n+2]`, `io[n % 5]`), per-step kernel arguments (`amplitude: "ricker(n)"`)
 * and initial values. An expression is compiled once into a postfix program
 * and evaluated in C: evaluation on the per-step hot path costs tens of
 * nanoseconds, not a Lua call.
 *
 * Grammar (lowest to highest precedence):
 *   or   and   not   == != < <= > >=   + -   * / // %   unary -   ^ (right assoc)
 *   primary: number | name | name[expr] | name(expr, ...) | (expr)
 * Values are doubles; comparisons and logic give 1 or 0; `%` and `//` are
 * floored (-1 % 5 == 4, as in Lua and Python). Indexing is 0-based.
 * Built-in functions: min max (1 or more args) floor ceil round abs sqrt exp log
 * sin cos tan pow atan2 (and the constant pi, which a name in the scope hides).
 */
#ifndef GF_EXPR_H
#define GF_EXPR_H

#include <stddef.h>

#include "error.h"

typedef struct gf_expr gf_expr;

typedef enum gf_symbol_kind {
  GF_SYM_CONST, /* a number known at compile time (a parameter) */
  GF_SYM_ARRAY, /* constant numbers indexed with [i] (the grid's shape, spacing) */
  GF_SYM_STEP,  /* the step index n */
  GF_SYM_VAR,   /* a value supplied at evaluation: gf_eval_ctx.vars[slot] */
  GF_SYM_HOOK,  /* a Lua hook, called as name(args...) */
} gf_symbol_kind;

typedef struct gf_symbol {
  gf_symbol_kind kind;
  double value;        /* GF_SYM_CONST */
  const double *array; /* GF_SYM_ARRAY */
  int array_len;       /* GF_SYM_ARRAY */
  int slot;            /* GF_SYM_VAR: index into vars; GF_SYM_HOOK: hook id */
} gf_symbol;

/* Resolves the names an expression may use. `lookup` returns 1 and fills
 * `out` when it knows `name` (not NUL-terminated: `len` bytes), else 0. */
typedef struct gf_scope {
  int (*lookup)(void *user, const char *name, size_t len, gf_symbol *out);
  void *user;
  int allow_step; /* 0: `n` is not defined here (load-time parameters) */
} gf_scope;

typedef struct gf_eval_ctx {
  double n;           /* the step index */
  const double *vars; /* values of GF_SYM_VAR slots */
  /* Calls hook `hook` with `nargs` arguments. On failure it has already
   * reported the problem and sets *status. */
  double (*call_hook)(void *user, int hook, const double *args, int nargs, gf_status *status);
  void *user;
} gf_eval_ctx;

/* Compiles `text`. A syntax error or an unknown name is reported through
 * `diag` at `loc` moved right by the offending column of `text`, and the
 * function returns GF_INVALID. `loc` is the position of text[0] in the file. */
gf_status gf_expr_compile(const char *text, const gf_scope *scope, gf_diag *diag, gf_loc loc,
                          gf_expr **out);

/* Evaluates. *status stays untouched on success; a failing hook sets it. */
double gf_expr_eval(const gf_expr *expr, const gf_eval_ctx *ctx, gf_status *status);

/* 1 when the value depends on nothing but constants (no n, vars or hooks). */
int gf_expr_is_constant(const gf_expr *expr);
/* 1 when the expression calls a hook. */
int gf_expr_calls_hook(const gf_expr *expr);
/* 1 when the expression calls hook `hook` with `nargs` arguments. */
int gf_expr_calls_hook_with(const gf_expr *expr, int hook, int nargs);
/* The source text it was compiled from. */
const char *gf_expr_text(const gf_expr *expr);

void gf_expr_free(gf_expr *expr);
/* A copy of `expr` (NULL stays NULL; NULL also when out of memory). */
gf_expr *gf_expr_copy(const gf_expr *expr);

/* A value for a message: "NaN" rather than printf's "-nan", else %g. Returns buf. */
const char *gf_number_text(double v, char *buf, size_t size);

/* Is `v` an integer in [0, count)? False for NaN and infinities, and decided
 * before anything converts `v` to an integer type. */
int gf_is_index(double v, double count);

#endif
