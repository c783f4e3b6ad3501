/* eval.c - expressions and hooks evaluated at run time, for the run. */
#include "eval.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

struct gf_eval {
  const gf_workflow *wf;
  gf_lua *lua;
  int *hook_ids;
  /* what a hook called from an expression names in its message */
  int task;
  int64_t step;
};

gf_eval *gf_eval_create(const gf_workflow *wf, gf_lua *lua, const int *hook_ids) {
  gf_eval *eval = gf_calloc(1, sizeof *eval);
  int *ids = gf_calloc((size_t)wf->nhooks, sizeof(int));
  if (!eval || !ids) {
    free(eval);
    free(ids);
    return NULL;
  }
  eval->wf = wf;
  eval->lua = lua;
  eval->hook_ids = ids;
  if (hook_ids) memcpy(eval->hook_ids, hook_ids, (size_t)wf->nhooks * sizeof(int));
  eval->task = -1;
  return eval;
}

void gf_eval_free(gf_eval *eval) {
  if (!eval) return;
  if (eval->lua) gf_lua_close(eval->lua);
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

static double call_from_expr(void *user, int hook, const double *args, int nargs,
                             gf_status *status) {
  gf_eval *eval = user;
  double result = 0;
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
