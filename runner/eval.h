/* eval.h - the run's evaluation object: expressions and Lua hooks at run time.
 *
 * The model is plain data: its expressions are compiled programs and its
 * hooks are names of files and functions. What evaluates them, the Lua state
 * with the hooks loaded, belongs to the run: the loader opens it while it
 * checks the hooks and hands it to the caller, who passes it to the executor
 * and frees it. The planner never calls Lua (the expressions it evaluates
 * cannot name a hook); the executor never does either, except through this.
 */
#ifndef GF_EVAL_H
#define GF_EVAL_H

#include <stdint.h>

#include "error.h"
#include "expr.h"
#include "hooks.h"
#include "workflow.h"

typedef struct gf_eval gf_eval;

/* Takes `lua` (may be NULL when the workflow has no hooks); `hook_ids[h]` is
 * the Lua id of wf->hooks[h] (copied). */
gf_eval *gf_eval_create(const gf_workflow *wf, gf_lua *lua, const int *hook_ids);
void gf_eval_free(gf_eval *eval);

/* The hooks' Lua state (NULL: the workflow has none), for checkpoints. */
gf_lua *gf_eval_lua(const gf_eval *eval);

/* An expression at step n; a failing hook names `task` (-1: none) and n in
 * its message and sets *status. */
double gf_eval_number(gf_eval *eval, const gf_expr *expr, int task, int64_t n, gf_status *status);

/* Fills the tables of the pure hooks that per-step expressions call with
 * one argument, for the integer arguments [first - 8, first + count + 8)
 * (at most 2^20 of them), calling each hook once per argument in order, so
 * that ricker(n) and ricker(n - 1) at steps first .. first + count - 1 cost a
 * table lookup. The executor calls it before its clock starts. A call that
 * fails here is not reported: the argument is called again, through Lua,
 * when an expression asks for it, and fails there as it would have. Past
 * the prepared arguments, tables fill a block of arguments at a time as the
 * steps reach them; other calls (not one integer argument, or a large one)
 * go to Lua each time. */
void gf_eval_prepare(gf_eval *eval, int64_t first, int64_t count);

/* Calls hook `hook` with `args`; `result` NULL: the hook returns nothing.
 * Always calls Lua (a `hook:` task, pure or not). */
gf_status gf_eval_hook(gf_eval *eval, int hook, const double *args, int nargs, double *result,
                       int task, int64_t n);

/* Field `field`'s initial value, every cell, into `host` (field->bytes). */
gf_status gf_eval_field_init(gf_eval *eval, int field, void *host);

#endif
