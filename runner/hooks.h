/* hooks.h - Lua 5.4 hooks in a sandbox.
 *
 * One Lua state per run. Hook files are loaded as text chunks into a sandbox
 * environment that holds only the base (minus load, loadfile, dofile, require,
 * collectgarbage, print goes to stderr), math, string, table and utf8 libraries
 * and a read-only table `params` with the workflow's resolved parameters. Memory
 * is capped through the allocator and instructions through a count hook; a hook
 * that exceeds either is stopped with a message naming the hook and the limit.
 *
 * Every call goes through lua_pcall with a message handler that adds a
 * traceback; a failure is reported as
 *   gflow: ricker.lua:7: attempt to ... (hook 'ricker', task 'step', step 12)
 */
#ifndef GF_HOOKS_H
#define GF_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct gf_lua gf_lua;

typedef struct gf_lua_limits {
  size_t memory_bytes;   /* 0: default (64 MiB) */
  uint64_t instructions; /* per call; 0: default (10^8) */
} gf_lua_limits;

gf_status gf_lua_open(gf_lua **out, const gf_lua_limits *limits, gf_diag *diag);
void gf_lua_close(gf_lua *lua);

/* Sets the read-only `params` table the hooks see. */
void gf_lua_set_params(gf_lua *lua, const char *const *names, const double *values, int count);

/* Loads and runs a hook file (text only). Errors, including a missing file,
 * are reported through `diag` at `loc` (where the workflow names the file). */
gf_status gf_lua_load_file(gf_lua *lua, const char *path, gf_diag *diag, gf_loc loc);

/* Looks up a global function defined by the loaded files and returns its id. */
gf_status gf_lua_find(gf_lua *lua, const char *function, int *hook_id, gf_diag *diag, gf_loc loc);

/* Calls hook `hook_id` with numeric arguments; the hook must return a number
 * (or nothing, when `result` is NULL). `hook_name` and `context` ("task 'step',
 * step 12") go into any error message. */
gf_status gf_lua_call(gf_lua *lua, int hook_id, const double *args, int nargs, double *result,
                      const char *hook_name, const char *context);

/* Calls hook `hook_id` with the integer arguments first, first + 1, ...,
 * first + count - 1 in that order, one call each (each with its own
 * instruction budget), into results[0..count). Stops at the first call that
 * fails or returns no number, and reports nothing: a pure hook's table
 * (eval.c) is filled so, and the argument that failed is called again
 * through gf_lua_call when an expression asks for it, which reports it.
 * Returns how many calls succeeded. */
int gf_lua_call_range(gf_lua *lua, int hook_id, int64_t first, int count, double *results);

/* The hooks' state, for checkpoints (checkpoint.c). The rule: hook files that
 * keep state between calls define `save_state()`, returning a value made of
 * numbers, strings, booleans and tables of them, and `restore_state(state)`,
 * which a restarted run calls with that value before its first step. Hook
 * files without `save_state` are taken to be pure functions of their
 * arguments; gflow checks that by a fingerprint of everything the hooks can
 * reach (their globals, tables, and the upvalues of their functions, the
 * state of math.random included), taken by gf_lua_state_mark before the loop
 * and compared at each checkpoint. */

/* Takes the fingerprint the checkpoints compare against. */
void gf_lua_state_mark(gf_lua *lua);

/* The hooks' state as Lua text (`return {...}`) in *text (caller frees), or
 * *text NULL when the hooks define no save_state; *changed is 1 when they
 * define none and their state differs from the mark (a restart could not
 * reproduce it). Reports through `diag` (save_state failing, returning a
 * function, or defined without restore_state). */
gf_status gf_lua_state_save(gf_lua *lua, char **text, int *changed, gf_diag *diag);

/* Calls restore_state with the value `text` (from gf_lua_state_save) builds. */
gf_status gf_lua_state_restore(gf_lua *lua, const char *text, gf_diag *diag);

/* 1 when the hook files' save_state is a Lua function that file `path` (as
 * passed to gf_lua_load_file) defines: a file whose hooks are all declared
 * pure has no state to save (workflow.c refuses it). */
int gf_lua_state_defined_in(gf_lua *lua, const char *path);

#endif
