/* eval.c - expressions and hooks evaluated at run time, for the run. */
#include "eval.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* A pure hook's table: its results for integer arguments, in blocks of
 * MEMO_BLOCK consecutive arguments, block b in slot b mod MEMO_SLOTS (a block
 * that lands on a slot takes it over). A block is filled by calling the hook
 * for its arguments in order, and a fill stops at the first call that fails:
 * that argument is marked, and an expression that asks for it calls Lua as
 * if there were no table, which reports the failure as it always has. */
#define MEMO_BLOCK 4096      /* arguments a block holds */
#define MEMO_SLOTS 512       /* blocks a table holds (a power of two): 2^21 arguments */
#define MEMO_PREPARE 1048576 /* arguments gf_eval_prepare fills at most: half the slots */
#define MEMO_MARGIN 8        /* arguments prepared below the first step and past the last */
#define MEMO_MAX_ARG 0x1p52  /* a larger argument calls Lua */

enum { MEMO_EMPTY, MEMO_VALUE, MEMO_FAILED };

typedef struct memo_block {
  int64_t index;                   /* arguments index * MEMO_BLOCK + [0, MEMO_BLOCK) */
  unsigned char state[MEMO_BLOCK]; /* MEMO_EMPTY: not called yet */
  double value[MEMO_BLOCK];
} memo_block;

typedef struct memo {
  memo_block *slot[MEMO_SLOTS]; /* NULL: never used */
} memo;

struct gf_eval {
  const gf_workflow *wf;
  gf_lua *lua;
  int *hook_ids;
  int nhooks;
  memo **memos; /* per hook; NULL: calls go to Lua */
  /* what a hook called from an expression names in its message */
  int task;
  int64_t step;
};

gf_eval *gf_eval_create(const gf_workflow *wf, gf_lua *lua, const int *hook_ids) {
  gf_eval *eval = gf_calloc(1, sizeof *eval);
  int *ids = gf_calloc((size_t)wf->nhooks, sizeof(int));
  memo **memos = gf_calloc((size_t)wf->nhooks, sizeof *memos);
  int failed = !eval || !ids || !memos;
  /* A table for each pure hook that a per-step expression calls with one
   * argument (ricker(n)); a pure hook called otherwise has no use for one. */
  for (int h = 0; !failed && lua && h < wf->nhooks; h++)
    if (wf->hooks[h].pure && wf->hooks[h].unary_step_call)
      failed = !(memos[h] = gf_calloc(1, sizeof *memos[h]));
  if (failed) {
    for (int h = 0; memos && h < wf->nhooks; h++) free(memos[h]);
    free(memos);
    free(eval);
    free(ids);
    return NULL;
  }
  eval->wf = wf;
  eval->lua = lua;
  eval->hook_ids = ids;
  eval->nhooks = wf->nhooks;
  eval->memos = memos;
  if (hook_ids) memcpy(eval->hook_ids, hook_ids, (size_t)wf->nhooks * sizeof(int));
  eval->task = -1;
  return eval;
}

void gf_eval_free(gf_eval *eval) {
  if (!eval) return;
  if (eval->lua) gf_lua_close(eval->lua);
  for (int h = 0; h < eval->nhooks; h++) {
    for (int b = 0; eval->memos[h] && b < MEMO_SLOTS; b++) free(eval->memos[h]->slot[b]);
    free(eval->memos[h]);
  }
  free(eval->memos);
  free(eval->hook_ids);
  free(eval);
}

gf_lua *gf_eval_lua(const gf_eval *eval) {
  return eval ? eval->lua : NULL;
}

static void context_text(const gf_eval *eval, int task, int64_t n, char *buf, size_t size) {
  if (task >= 0)
    snprintf(buf, size, "task '%s', step %" PRId64, eval->wf->tasks[task].name, n);
  else
    snprintf(buf, size, "step %" PRId64, n);
}

gf_status gf_eval_hook(gf_eval *eval, int hook, const double *args, int nargs, double *result,
                       int task, int64_t n) {
  char context[160];
  context_text(eval, task, n, context, sizeof context);
  return gf_lua_call(eval->lua, eval->hook_ids[hook], args, nargs, result,
                     eval->wf->hooks[hook].name, context);
}

/* ---- pure hooks' tables ---- */

static int64_t block_of(int64_t arg) { /* floored */
  return arg >= 0 ? arg / MEMO_BLOCK : -((-arg - 1) / MEMO_BLOCK) - 1;
}

static memo_block **slot_of(memo *m, int64_t block) {
  return &m->slot[(uint64_t)block & (MEMO_SLOTS - 1)];
}

/* Block `block` of `m`: the one there, or its slot emptied and given to it
 * (NULL when a first block cannot be allocated: the table is a cache, and
 * Lua is then called as without one). */
static memo_block *take_block(memo *m, int64_t block) {
  memo_block **slot = slot_of(m, block);
  if (*slot && (*slot)->index == block) return *slot;
  if (!*slot && !(*slot = gf_malloc(sizeof **slot))) return NULL;
  (*slot)->index = block;
  memset((*slot)->state, MEMO_EMPTY, sizeof(*slot)->state);
  return *slot;
}

/* Calls the hook for the arguments of `blk` at offsets [from, to) not called
 * yet, in order; 0 when a call failed (its entry is marked, the rest of the
 * range is left uncalled). */
static int fill_block(gf_eval *eval, int hook, memo_block *blk, int from, int to) {
  for (int i = from; i < to;) {
    if (blk->state[i] != MEMO_EMPTY) {
      i++;
      continue;
    }
    int end = i;
    while (end < to && blk->state[end] == MEMO_EMPTY) end++;
    int done = gf_lua_call_range(eval->lua, eval->hook_ids[hook], blk->index * MEMO_BLOCK + i,
                                 end - i, &blk->value[i]);
    memset(&blk->state[i], MEMO_VALUE, (size_t)done);
    if (i + done < end) {
      blk->state[i + done] = MEMO_FAILED;
      return 0;
    }
    i = end;
  }
  return 1;
}

/* Fills hook `hook`'s table for the arguments [lo, hi), in order, stopping
 * at the first failing one. */
static void fill_range(gf_eval *eval, int hook, int64_t lo, int64_t hi) {
  for (int64_t arg = lo; arg < hi;) {
    int64_t block = block_of(arg), start = block * MEMO_BLOCK;
    int64_t end = hi < start + MEMO_BLOCK ? hi : start + MEMO_BLOCK;
    memo_block *blk = take_block(eval->memos[hook], block);
    if (!blk || !fill_block(eval, hook, blk, (int)(arg - start), (int)(end - start))) return;
    arg = end;
  }
}

/* A table miss for integer argument `arg`: a block that holds it but has
 * not called it yet is filled from there to its end; a block not held is
 * filled whole when the one before is held and complete (the steps go on
 * past what gf_eval_prepare filled); else (an argument far from the others,
 * or one that failed) 0: Lua is called. */
static int memo_miss(gf_eval *eval, int hook, int64_t arg, double *out) {
  memo *m = eval->memos[hook];
  int64_t block = block_of(arg);
  int offset = (int)(arg - block * MEMO_BLOCK);
  memo_block *blk = *slot_of(m, block), *before = *slot_of(m, block - 1);
  if (blk && blk->index == block) {
    if (blk->state[offset] != MEMO_EMPTY) return 0;
    fill_block(eval, hook, blk, offset, MEMO_BLOCK);
  } else {
    if (!before || before->index != block - 1 || before->state[MEMO_BLOCK - 1] != MEMO_VALUE ||
        !(blk = take_block(m, block)))
      return 0;
    fill_block(eval, hook, blk, 0, MEMO_BLOCK);
  }
  if (blk->state[offset] != MEMO_VALUE) return 0;
  *out = blk->value[offset];
  return 1;
}

/* The table's value of a pure hook for `x`; 0 when there is none to give
 * (no table, not an integer, too large, or a failing argument). */
static int memo_get(gf_eval *eval, int hook, double x, double *out) {
  if (!eval->memos[hook] || !(fabs(x) <= MEMO_MAX_ARG)) return 0; /* NaN too */
  int64_t arg = (int64_t)x;
  if ((double)arg != x) return 0;
  int64_t block = block_of(arg);
  const memo_block *blk = *slot_of(eval->memos[hook], block);
  int offset = (int)(arg - block * MEMO_BLOCK);
  if (blk && blk->index == block && blk->state[offset] == MEMO_VALUE) {
    *out = blk->value[offset];
    return 1;
  }
  return memo_miss(eval, hook, arg, out);
}

void gf_eval_prepare(gf_eval *eval, int64_t first, int64_t count) {
  if (!eval || !eval->lua || fabs((double)first) > MEMO_MAX_ARG) return;
  if (count < 0) count = 0;
  if (count > MEMO_PREPARE - MEMO_MARGIN) count = MEMO_PREPARE - MEMO_MARGIN;
  int64_t lo = first - MEMO_MARGIN, hi = first + count + MEMO_MARGIN;
  if (hi > (int64_t)MEMO_MAX_ARG + 1) hi = (int64_t)MEMO_MAX_ARG + 1;
  for (int h = 0; h < eval->nhooks; h++) {
    if (!eval->memos[h]) continue;
    /* Each part stops at its own first failure: a hook that refuses
     * negative arguments still has a table for the steps. */
    fill_range(eval, h, lo, first);
    fill_range(eval, h, first, hi);
  }
}

static double call_from_expr(void *user, int hook, const double *args, int nargs,
                             gf_status *status) {
  gf_eval *eval = user;
  double result = 0;
  if (nargs == 1 && memo_get(eval, hook, args[0], &result)) return result;
  gf_status st = gf_eval_hook(eval, hook, args, nargs, &result, eval->task, eval->step);
  if (st != GF_OK) *status = st;
  return result;
}

double gf_eval_number(gf_eval *eval, const gf_expr *expr, int task, int64_t n, gf_status *status) {
  eval->task = task;
  eval->step = n;
  gf_eval_ctx ctx = {.n = (double)n, .vars = NULL, .call_hook = call_from_expr, .user = eval};
  return gf_expr_eval(expr, &ctx, status);
}

/* The grid's indices and coordinates of cell i of a field, into vars. */
static void cell_vars(const gf_workflow *wf, const gf_field *field, int64_t i, double *vars) {
  int64_t index[GF_MAX_DIMS] = {0};
  gf_field_cell(field, i, index);
  for (int d = 0; d < field->ndim; d++) {
    if (field->decomposed) index[d] += wf->decomp.origin[d]; /* the grid's cell */
    vars[GF_VAR_I0 + d] = (double)index[d];
    vars[GF_VAR_X0 + d] = (double)index[d] * wf->spacing[d];
  }
}

/* Gives back the OpenMP threads a parallel region on this (the host's)
 * thread started. libgomp keeps a team per thread that ever ran one and
 * counts its idle threads against the cores: with the host's team and a
 * stream worker's both alive there are more than cores, and libgomp then
 * spins only ~100 times in every barrier before sleeping on a futex, so
 * each kernel launch paid a wake-up (256^2 on 2 threads ran 4x slower than
 * a plain loop). The host runs no other parallel region. */
static void release_openmp_team(void) {
#if defined(_OPENMP) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
  omp_pause_resource(omp_pause_soft, omp_get_initial_device());
#endif
}

static void store(const gf_field *field, void *host, int64_t i, double v) {
  if (field->dtype == GF_F64)
    ((double *)host)[i] = v;
  else
    ((float *)host)[i] = (float)v;
}

gf_status gf_eval_field_init(gf_eval *eval, int f, void *host) {
  const gf_workflow *wf = eval->wf;
  const gf_field *field = &wf->fields[f];
  if (field->init_kind == GF_INIT_CONST && field->init_value == 0) {
    memset(host, 0, field->bytes);
    return GF_OK;
  }
  if (field->init_kind != GF_INIT_HOOK) {
    /* A constant or an expression (which cannot call a hook here): every
     * cell on its own, on every core; a grid of 10^8 cells takes seconds. */
    int failed = 0;
#pragma omp parallel for schedule(static) reduction(| : failed)
    for (int64_t i = 0; i < field->elems; i++) {
      double vars[GF_VAR_COUNT] = {0}, v = field->init_value;
      if (field->init_kind == GF_INIT_EXPR) {
        gf_status st = GF_OK;
        cell_vars(wf, field, i, vars);
        v = gf_expr_eval(field->init_expr, &(gf_eval_ctx){.n = 0, .vars = vars}, &st);
        failed |= st != GF_OK;
      }
      store(field, host, i, v);
    }
    release_openmp_team();
    return failed ? GF_INTERNAL : GF_OK;
  }
  char context[128];
  snprintf(context, sizeof context, "initial value of field '%s'", field->name);
  double vars[GF_VAR_COUNT] = {0};
  gf_status st = GF_OK;
  for (int64_t i = 0; i < field->elems && st == GF_OK; i++) {
    double v = 0;
    cell_vars(wf, field, i, vars);
    double args[6] = {vars[GF_VAR_X0], vars[GF_VAR_X1], vars[GF_VAR_X2],
                      vars[GF_VAR_I0], vars[GF_VAR_I1], vars[GF_VAR_I2]};
    st = gf_lua_call(eval->lua, eval->hook_ids[field->init_hook], args, 6, &v,
                     wf->hooks[field->init_hook].name, context);
    store(field, host, i, v);
  }
  return st;
}
