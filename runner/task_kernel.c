/* task_kernel.c - `kernel: NAME`: launches a registered kernel.
 *
 * `args:` is checked against the kernel's parameter table; one routine,
 * marshal(), writes the argument struct both for the kernel's check() at load
 * time and for every launch the program binds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fd.h"
#include "load.h"
#include "program.h"
#include "task_kernel.h"

/* The cells a launch updates when it runs whole: the interior of the first
 * field the kernel writes (else of its first field, else of the grid). */
static gf_box whole_box(const gf_workflow *wf, const gf_task *task) {
  int field = task->naccess ? task->access[0].ref.field : -1;
  for (int a = task->naccess - 1; a >= 0; a--)
    if (task->access[a].access & GF_ACCESS_WRITE) field = task->access[a].ref.field;
  gf_box box;
  for (int d = 0; d < GF_MAX_DIMS; d++) {
    int64_t size = field >= 0 ? wf->fields[field].shape[d] : wf->shape[d];
    int spans = field >= 0 ? d < wf->fields[field].ndim : d < wf->ndim;
    box.lo[d] = spans ? wf->halo : 0;
    box.hi[d] = spans ? size - wf->halo : size;
    if (box.hi[d] < box.lo[d]) box.hi[d] = box.lo[d];
  }
  return box;
}

/* The argument struct: array arguments point at data[access] (NULL when
 * data is NULL), constant scalars hold their value, and each scalar that
 * changes per step is listed in `params` (when not NULL) and holds 0. */
static gf_status marshal(const gf_workflow *wf, const gf_task *task, const gf_box *box,
                         void *const *data, void *const *buffers, void *args,
                         gf_instr_param *params, int *nparams) {
  (void)buffers;
  const gf_kernel_task *k = task->data;
  unsigned char *base = args;
  memset(base, 0, k->kernel->args_size);
  if (nparams) *nparams = 0;
  for (int i = 0; i < k->nargs; i++) {
    const gf_kernel_arg *arg = &k->args[i];
    unsigned char *at = base + arg->param->offset;
    switch (arg->param->type) {
      case GF_PARAM_ARRAY: {
        if (arg->access < 0) break; /* an optional array not given: ndim 0, data NULL */
        const gf_field *field = &wf->fields[task->access[arg->access].ref.field];
        gf_array array = {.data = data ? data[arg->access] : NULL,
                          .dtype = field->dtype,
                          .ndim = field->ndim,
                          .halo = wf->halo,
                          .max_abs = NAN};
        if (!data && field->init_kind == GF_INIT_CONST) array.max_abs = fabs(field->init_value);
        /* A grid-shaped field under MPI is this rank's block (gf_decompose). */
        int block = field->decomposed;
        for (int d = 0; d < GF_MAX_DIMS; d++) {
          array.shape[d] = field->shape[d];
          array.origin[d] = block ? wf->decomp.origin[d] : 0;
          array.global_shape[d] = block && d < wf->ndim ? wf->shape[d] : field->shape[d];
          array.spacing[d] = d < wf->ndim ? wf->spacing[d] : 1.0;
        }
        memcpy(at, &array, sizeof array);
        break;
      }
      case GF_PARAM_REAL:
      case GF_PARAM_INT: {
        int is_int = arg->param->type == GF_PARAM_INT;
        double v = 0;
        if (gf_expr_is_constant(arg->value))
          v = gf_load_constant(arg->value);
        else if (params)
          params[(*nparams)++] =
              (gf_instr_param){.offset = arg->param->offset, .is_int = is_int, .expr = arg->value};
        if (is_int) {
          int64_t i64 = (int64_t)v;
          memcpy(at, &i64, sizeof i64);
        } else {
          memcpy(at, &v, sizeof v);
        }
        break;
      }
      case GF_PARAM_INDEX: { /* in the arrays' own indices (gflow.h) */
        int64_t index[GF_MAX_DIMS];
        for (int d = 0; d < GF_MAX_DIMS; d++) index[d] = arg->index[d] - wf->decomp.origin[d];
        memcpy(at, index, sizeof index);
        break;
      }
      case GF_PARAM_BOX: {
        gf_box cells = box ? *box : whole_box(wf, task);
        memcpy(at, &cells, sizeof cells);
        break;
      }
      case GF_PARAM_CELLS:
      case GF_PARAM_TAPS: {
        gf_points points = {arg->points, arg->npoints};
        memcpy(at, &points, sizeof points);
        break;
      }
    }
  }
  return GF_OK;
}

/* ---- loading ---- */

/* A REAL or INT kernel argument: a number or a per-step expression. */
static gf_status load_scalar_arg(loader *ld, const gf_kernel *kernel, gf_kernel_arg *arg,
                                 yaml_node_t *node) {
  const gf_param *param = arg->param;
  const char *s = gf_load_scalar(node);
  if (!s || (!*s && !gf_load_is_quoted(node)))
    return gf_load_fail_type(ld, node, "a number or an expression");
  gf_status status = gf_load_expr(ld, node, s, 0, GF_NAMES_PARAMS | GF_NAMES_GRID | GF_NAMES_HOOKS,
                                  1, &arg->value);
  if (status || !gf_expr_is_constant(arg->value)) return status;
  double v = gf_load_constant(arg->value);
  if (!isfinite(v)) return gf_load_fail(ld, node, "'%s' is not a finite number (%g)", s, v);
  if (param->type == GF_PARAM_INT && v != floor(v))
    return gf_load_fail(ld, node, "argument '%s' of %s must be an integer, got %.17g", param->name,
                        kernel->name, v);
  if (gf_param_has_range(param) && (v < param->min || v > param->max))
    return gf_load_fail(ld, node, "argument '%s' of %s must be between %g and %g, got %.17g",
                        param->name, kernel->name, param->min, param->max, v);
  return GF_OK;
}

/* A cell index the kernel will be handed, checked against the grid here so
 * that a kernel whose check() forgets cannot write outside a field. */
static gf_status check_index(loader *ld, yaml_node_t *node, const gf_kernel *kernel,
                             const gf_kernel_arg *arg, int64_t i, int d, const char *what) {
  const gf_workflow *wf = gf_load_workflow(ld);
  if (i >= 0 && i < wf->shape[d]) return GF_OK;
  return gf_load_fail(
      ld, node, "%sargument '%s' of %s: index %lld is outside the grid (0..%lld) on axis %d", what,
      arg->param->name, kernel->name, (long long)i, (long long)(wf->shape[d] - 1), d);
}

static gf_status load_index_arg(loader *ld, const gf_kernel *kernel, gf_kernel_arg *arg,
                                yaml_node_t *node) {
  int ndim = gf_load_workflow(ld)->ndim;
  if (node->type != YAML_SEQUENCE_NODE)
    return gf_load_fail_type(ld, node, "a sequence of cell indices");
  int count = (int)(node->data.sequence.items.top - node->data.sequence.items.start);
  if (count != ndim)
    return gf_load_fail(ld, node, "argument '%s' of %s needs %d entr%s (one per grid axis), got %d",
                        arg->param->name, kernel->name, ndim, ndim == 1 ? "y" : "ies", count);
  for (int d = 0; d < count; d++) {
    yaml_node_t *item = gf_load_node(ld, node->data.sequence.items.start[d]);
    gf_status status = gf_load_integer(ld, item, GF_NAMES_PARAMS | GF_NAMES_GRID, &arg->index[d]);
    if (status || (status = check_index(ld, item, kernel, arg, arg->index[d], d, "")))
      return status;
  }
  return GF_OK;
}

/* The entries of a list argument (GF_PARAM_CELLS, GF_PARAM_TAPS). */
enum { GF_MAX_LIST = 4096 };

/* Adds `weight` at `at` to arg's list; an offset already there gets it
 * summed in (taps), a cell is always a new entry (sources). */
static gf_status add_point(loader *ld, yaml_node_t *node, const gf_kernel *kernel,
                           gf_kernel_arg *arg, const int64_t at[GF_MAX_DIMS], double weight,
                           int merge) {
  if (merge)
    for (int64_t i = 0; i < arg->npoints; i++)
      if (memcmp(arg->points[i].at, at, sizeof arg->points[i].at) == 0) {
        arg->points[i].weight += weight;
        return GF_OK;
      }
  if (arg->npoints == GF_MAX_LIST)
    return gf_load_fail(ld, node, "argument '%s' of %s has more than %d entries", arg->param->name,
                        kernel->name, GF_MAX_LIST);
  if (arg->npoints % 64 == 0) {
    gf_point *grown = realloc(arg->points, (size_t)(arg->npoints + 64) * sizeof *grown);
    if (!grown) return gf_oom(gf_load_diag(ld), "loading a list argument");
    arg->points = grown;
  }
  gf_point *p = &arg->points[arg->npoints++];
  memcpy(p->at, at, sizeof p->at);
  p->weight = weight;
  return GF_OK;
}

/* `[i0, i1, w]` or `[o0, o1, c]`: one index per grid axis, then a number
 * (optional for a cell: 1). */
static gf_status load_point(loader *ld, const gf_kernel *kernel, gf_kernel_arg *arg,
                            yaml_node_t *item, int cell) {
  const gf_workflow *wf = gf_load_workflow(ld);
  int count = (int)(item->data.sequence.items.top - item->data.sequence.items.start);
  if (count != wf->ndim + 1 && !(cell && count == wf->ndim))
    return gf_load_fail(
        ld, item, "an entry of '%s' of %s is %d %s (one per grid axis) and %s, got %d %s",
        arg->param->name, kernel->name, wf->ndim,
        cell ? (wf->ndim == 1 ? "cell index" : "cell indices")
             : (wf->ndim == 1 ? "offset" : "offsets"),
        cell ? "an optional weight" : "a coefficient", count, count == 1 ? "value" : "values");
  int64_t at[GF_MAX_DIMS] = {0, 0, 0};
  gf_status status = GF_OK;
  for (int d = 0; !status && d < wf->ndim; d++) {
    yaml_node_t *v = gf_load_node(ld, item->data.sequence.items.start[d]);
    status = gf_load_integer(ld, v, GF_NAMES_PARAMS | GF_NAMES_GRID, &at[d]);
    if (!status && cell) status = check_index(ld, v, kernel, arg, at[d], d, "");
    if (!status && !cell && (at[d] < -1000 || at[d] > 1000))
      status = gf_load_fail(ld, v, "an offset of '%s' of %s must be within -1000..1000, got %lld",
                            arg->param->name, kernel->name, (long long)at[d]);
  }
  double weight = 1;
  if (!status && count > wf->ndim)
    status = gf_load_number(ld, gf_load_node(ld, item->data.sequence.items.start[wf->ndim]),
                            GF_NAMES_PARAMS | GF_NAMES_GRID, &weight);
  return status ? status : add_point(ld, item, kernel, arg, at, weight, !cell);
}

/* `{laplacian: ORDER, times: X}` or `{derivative: ORDER, axis: D, times: X}`:
 * the central differences of fd.h over the grid's spacing, times X. */
static gf_status load_named_taps(loader *ld, const gf_kernel *kernel, gf_kernel_arg *arg,
                                 yaml_node_t *item) {
  static const gf_key_spec spec[] = {
      {"laplacian", 0, NULL}, {"derivative", 0, NULL}, {"axis", 0, NULL}, {"times", 0, NULL}};
  enum { LAPLACIAN, DERIVATIVE, AXIS, TIMES };
  const gf_workflow *wf = gf_load_workflow(ld);
  yaml_node_t *keys[4], *values[4];
  gf_status status = gf_load_mapping(ld, item, "a named operator", spec, 4, NULL, keys, values);
  if (status) return status;
  int which = values[LAPLACIAN] ? LAPLACIAN : DERIVATIVE;
  if (!values[LAPLACIAN] == !values[DERIVATIVE])
    return gf_load_fail(ld, item, "a named operator needs one of 'laplacian' or 'derivative'");
  if (which == LAPLACIAN && keys[AXIS])
    return gf_load_fail(ld, keys[AXIS], "'axis' goes with 'derivative', not 'laplacian'");
  if (which == DERIVATIVE && !keys[AXIS])
    return gf_load_fail(ld, item, "missing required key 'axis' in a derivative");
  int64_t order = 0, axis = 0;
  double times = 1;
  if ((status = gf_load_integer(ld, values[which], GF_NAMES_PARAMS, &order))) return status;
  int radius = gf_fd_radius(order);
  if (!radius)
    return gf_load_fail(ld, values[which], "the order of a %s must be 2, 4 or 8, got %lld",
                        spec[which].name, (long long)order);
  if (keys[AXIS]) {
    if ((status = gf_load_integer(ld, values[AXIS], GF_NAMES_PARAMS, &axis))) return status;
    if (axis < 0 || axis >= wf->ndim)
      return gf_load_fail(ld, values[AXIS], "axis must be 0..%d on this %d-D grid, got %lld",
                          wf->ndim - 1, wf->ndim, (long long)axis);
  }
  if (keys[TIMES] &&
      (status = gf_load_number(ld, values[TIMES], GF_NAMES_PARAMS | GF_NAMES_GRID, &times)))
    return status;
  for (int d = 0; d < wf->ndim; d++) {
    if (which == DERIVATIVE && d != axis) continue;
    double dx = wf->spacing[d], scale = which == LAPLACIAN ? times / (dx * dx) : times / dx;
    for (int k = which == LAPLACIAN ? 0 : 1; k <= radius; k++) {
      int64_t at[GF_MAX_DIMS] = {0, 0, 0};
      double c = which == LAPLACIAN ? gf_fd2_coeff(radius, k) : gf_fd1_coeff(radius, k);
      for (int side = k ? -1 : 1; side <= 1; side += 2) {
        at[d] = side * k;
        double w = scale * c * (which == DERIVATIVE ? side : 1);
        if ((status = add_point(ld, item, kernel, arg, at, w, 1))) return status;
      }
    }
  }
  return GF_OK;
}

/* A GF_PARAM_CELLS or GF_PARAM_TAPS argument: a list of entries. */
static gf_status load_list_arg(loader *ld, const gf_kernel *kernel, gf_kernel_arg *arg,
                               yaml_node_t *node) {
  int cell = arg->param->type == GF_PARAM_CELLS;
  if (node->type != YAML_SEQUENCE_NODE)
    return gf_load_fail_type(ld, node,
                             cell ? "a list of cells, [[i0, i1, weight], ...]"
                                  : "a list of taps, [[o0, o1, coefficient], ...]");
  gf_status status = GF_OK;
  for (yaml_node_item_t *i = node->data.sequence.items.start;
       !status && i < node->data.sequence.items.top; i++) {
    yaml_node_t *item = gf_load_node(ld, *i);
    if (item->type == YAML_SEQUENCE_NODE)
      status = load_point(ld, kernel, arg, item, cell);
    else if (!cell && item->type == YAML_MAPPING_NODE)
      status = load_named_taps(ld, kernel, arg, item);
    else
      status = gf_load_fail_type(ld, item,
                                 cell ? "a cell, [i0, i1, weight]"
                                      : "a tap, [o0, o1, coefficient], or a named operator, "
                                        "{laplacian: ORDER}");
  }
  return status;
}

static gf_status load_array_arg(loader *ld, const gf_kernel *kernel, gf_task *task,
                                gf_kernel_arg *arg, yaml_node_t *node) {
  const gf_workflow *wf = gf_load_workflow(ld);
  gf_ref ref;
  gf_status status = gf_load_ref(ld, node, &ref);
  if (status) return status;
  gf_access_decl *decl = &task->access[arg->access];
  decl->ref = ref;
  decl->access = (gf_access)(arg->param->access & GF_ACCESS_READ_WRITE);
  decl->region = (arg->param->access & GF_ACCESS_INTERIOR) ? gf_region_interior(wf, ref.field)
                                                           : gf_region_whole(wf, ref.field);
  decl->what = arg->param->name;
  decl->in_place = (arg->param->access & GF_ACCESS_IN_PLACE) != 0;
  const gf_field *field = &wf->fields[ref.field];
  if (!(arg->param->dtypes & (1u << field->dtype))) {
    char accepted[16] = "";
    for (int t = GF_F32; t <= GF_F64; t++)
      if (arg->param->dtypes & (1u << t))
        snprintf(accepted + strlen(accepted), sizeof accepted - strlen(accepted), "%s%s",
                 accepted[0] ? " or " : "", gf_dtype_name((gf_dtype)t));
    return gf_load_fail_text(ld, node, 0, "argument '%s' of %s takes %s fields; field '%s' is %s",
                             arg->param->name, kernel->name, accepted, field->name,
                             gf_dtype_name(field->dtype));
  }
  /* A GPU kernel cannot reach pageable host memory, so a workflow that relies
   * on it is wrong on every backend alike. */
  if (field->space == GF_SPACE_HOST)
    return gf_load_fail(
        ld, node,
        "kernel argument '%s' of task '%s' is field '%s' in host (pageable) memory, "
        "which kernels cannot access on a GPU; use device, managed, pinned or pool",
        arg->param->name, task->name, field->name);
  return GF_OK;
}

/* The argument struct as the kernel's check() and stable() see it at load
 * time. An unstable call is recorded, not refused: `run` and `validate`
 * decide what it means (gf_workflow_check_stable). */
static gf_status check_gf_kernel_args(loader *ld, gf_task *task, yaml_node_t *kernel_node) {
  const gf_kernel_task *k = task->data;
  if (!k->kernel->check && !k->kernel->stable) return GF_OK;
  _Alignas(max_align_t) unsigned char args[GF_MAX_KERNEL_ARGS_SIZE];
  marshal(gf_load_workflow(ld), task, NULL, NULL, NULL, args, NULL, NULL);
  char why[256] = "";
  if (k->kernel->check && k->kernel->check(args, why, sizeof why) != 0)
    return gf_load_fail(ld, kernel_node, "kernel %s cannot run with these arguments: %s",
                        k->kernel->name, why[0] ? why : "(no reason given)");
  why[0] = '\0';
  if (k->kernel->stable && k->kernel->stable(args, why, sizeof why) != 0) {
    task->unstable = gf_asprintf("kernel %s is unstable with these arguments: %s", k->kernel->name,
                                 why[0] ? why : "(no reason given)");
    if (!task->unstable) return gf_oom(gf_load_diag(ld), "recording an unstable kernel call");
    task->unstable_loc = gf_load_loc(ld, kernel_node);
  }
  return GF_OK;
}

static gf_status unknown_kernel(loader *ld, yaml_node_t *node, const char *name) {
  const gf_registry *registry = gf_load_registry(ld);
  int count = gf_registry_count(registry);
  if (count == 0)
    return gf_load_fail(ld, node, "unknown kernel '%s'; no kernels are registered", name);
  const char **names = gf_calloc((size_t)count, sizeof *names);
  for (int i = 0; names && i < count; i++) names[i] = gf_registry_at(registry, i)->name;
  char *list = names ? gf_load_join(names, count) : NULL;
  gf_status status =
      list ? gf_load_fail(ld, node, "unknown kernel '%s'; known kernels: %s", name, list)
           : gf_oom(gf_load_diag(ld), "listing the kernels");
  free(list);
  free(names);
  return status;
}

static gf_status load(loader *ld, gf_task *task, const gf_task_yaml *yaml) {
  const gf_workflow *wf = gf_load_workflow(ld);
  yaml_node_t *task_node = yaml->task_node, *kernel_node = yaml->value, *args_node = yaml->extra[0];
  const char *name = gf_load_scalar(kernel_node);
  if (!name) return gf_load_fail_type(ld, kernel_node, "a kernel name");
  const gf_kernel *kernel = gf_registry_find(gf_load_registry(ld), name);
  if (!kernel) return unknown_kernel(ld, kernel_node, name);
  gf_kernel_task *k = gf_calloc(1, sizeof *k);
  if (!k) return gf_oom(gf_load_diag(ld), "loading a kernel task");
  task->data = k;
  k->kernel = kernel;
  int nparams = 0;
  while (kernel->params[nparams].name) nparams++;
  k->args = gf_calloc((size_t)nparams, sizeof *k->args);
  if (!k->args) return gf_oom(gf_load_diag(ld), "loading a kernel task");
  k->nargs = nparams;
  for (int i = 0; i < nparams; i++) {
    k->args[i].param = &kernel->params[i];
    k->args[i].access = -1;
  }
  yaml_node_t **given = gf_calloc((size_t)nparams * 2, sizeof *given);
  if (!given) return gf_oom(gf_load_diag(ld), "loading a kernel task");
  yaml_node_t **keys = given + nparams; /* the keys of those given */
  yaml_node_pair_t *pairs = NULL;
  int count = 0;
  gf_status status = args_node ? gf_load_pairs(ld, args_node, "args", &pairs, &count) : GF_OK;
  for (int i = 0; !status && i < count; i++) {
    yaml_node_t *key = gf_load_node(ld, pairs[i].key);
    int p = 0;
    while (p < nparams && strcmp(kernel->params[p].name, gf_load_scalar(key)) != 0) p++;
    if (p == nparams) {
      const char **names = gf_calloc((size_t)nparams, sizeof *names);
      int listed = 0; /* those a workflow may give: not a box */
      for (int j = 0; names && j < nparams; j++)
        if (kernel->params[j].type != GF_PARAM_BOX) names[listed++] = kernel->params[j].name;
      char *list = names ? gf_load_join(names, listed) : NULL;
      status = list ? gf_load_fail(ld, key, "kernel %s has no parameter '%s'; its parameters: %s",
                                   kernel->name, gf_load_scalar(key), list)
                    : gf_oom(gf_load_diag(ld), "listing the kernel's parameters");
      free(list);
      free(names);
      break;
    }
    keys[p] = key;
    given[p] = gf_load_node(ld, pairs[i].value);
  }
  /* The array arguments given are the task's accesses, in table order. */
  for (int p = 0; !status && p < nparams; p++)
    if (kernel->params[p].type == GF_PARAM_ARRAY && given[p]) {
      if (task->naccess == GF_MAX_TASK_REFS)
        status = gf_load_fail(ld, kernel_node, "kernel %s has more than %d array parameters",
                              kernel->name, GF_MAX_TASK_REFS);
      else
        k->args[p].access = task->naccess++;
    }
  for (int p = 0; !status && p < nparams; p++) {
    if (!given[p]) continue;
    gf_kernel_arg *arg = &k->args[p];
    yaml_node_t *value = given[p];
    arg->loc = gf_load_loc(ld, value);
    switch (kernel->params[p].type) {
      case GF_PARAM_ARRAY:
        status = load_array_arg(ld, kernel, task, arg, value);
        break;
      case GF_PARAM_REAL:
      case GF_PARAM_INT:
        status = load_scalar_arg(ld, kernel, arg, value);
        break;
      case GF_PARAM_INDEX:
        status = load_index_arg(ld, kernel, arg, value);
        break;
      case GF_PARAM_CELLS:
      case GF_PARAM_TAPS:
        status = load_list_arg(ld, kernel, arg, value);
        break;
      case GF_PARAM_BOX:
        status = gf_load_fail(ld, keys[p],
                              "argument '%s' of %s is the box of cells a launch updates, which "
                              "gflow sets; remove it",
                              kernel->params[p].name, kernel->name);
        break;
    }
  }
  for (int p = 0; !status && p < nparams; p++) {
    if (given[p]) continue;
    gf_kernel_arg *arg = &k->args[p];
    const gf_param *param = arg->param;
    arg->loc = gf_load_loc(ld, task_node);
    if (param->required) {
      status =
          gf_load_fail(ld, task_node, "missing required argument '%s' of kernel %s in task '%s'",
                       param->name, kernel->name, task->name);
      break;
    }
    /* marshal sets a box; an optional array or list not given stays empty */
    if (param->type == GF_PARAM_BOX || param->type == GF_PARAM_ARRAY ||
        param->type == GF_PARAM_CELLS || param->type == GF_PARAM_TAPS)
      continue;
    if (param->type == GF_PARAM_INDEX) {
      for (int d = 0; !status && d < wf->ndim; d++) {
        arg->index[d] = param->def == GF_INDEX_CENTER ? wf->shape[d] / 2 : (int64_t)param->def;
        status = check_index(ld, task_node, kernel, arg, arg->index[d], d, "the default of ");
      }
    } else {
      char text[64];
      snprintf(text, sizeof text, "%.17g", param->def);
      gf_scope scope = {NULL, NULL, 0};
      status = gf_expr_compile(text, &scope, gf_load_diag(ld), arg->loc, &arg->value);
    }
  }
  free(given);
  if (status) return status;
  return check_gf_kernel_args(ld, task, kernel_node);
}

/* ---- running ---- */

static gf_status emit(gf_emitter *e, const gf_workflow *wf, const gf_task *task,
                      const gf_task_instance *instance) {
  (void)wf;
  const gf_kernel_task *k = task->data;
  for (int b = 0; b < (k->nboxes ? k->nboxes : 1); b++) {
    gf_instr *launch = gf_emit(e, GF_I_LAUNCH);
    memcpy(launch->inst, instance->inst, sizeof launch->inst);
    launch->kernel = k->kernel;
    launch->bind = marshal;
    launch->has_box = k->nboxes > 0;
    if (k->nboxes) launch->box = k->boxes[b];
  }
  return GF_OK;
}

gf_status gf_kernel_task_split(const gf_task *task, const char *name, const gf_box *boxes,
                               int nboxes, gf_task *out) {
  const gf_kernel_task *k = task->data;
  memset(out, 0, sizeof *out);
  gf_kernel_task *part = gf_calloc(1, sizeof *part);
  out->name = gf_strdup(name);
  if (!part || !out->name) {
    free(part);
    free(out->name);
    out->name = NULL;
    return GF_INTERNAL;
  }
  *part = *k;
  part->shares_args = 1;
  part->nboxes = nboxes;
  memcpy(part->boxes, boxes, (size_t)nboxes * sizeof *boxes);
  out->kind = task->kind;
  out->data = part;
  out->loc = task->loc;
  out->stream.group = -1;
  out->record.group = -1;
  return GF_OK;
}

static const char *describe(const gf_workflow *wf, const gf_task *task) {
  (void)wf;
  return ((const gf_kernel_task *)task->data)->kernel->name;
}

static void free_kernel(void *data) {
  gf_kernel_task *k = data;
  if (!k) return;
  if (k->shares_args) { /* a part of a split call (decompose.c): the whole call's */
    free(k);
    return;
  }
  for (int i = 0; i < k->nargs; i++) {
    gf_expr_free(k->args[i].value);
    free(k->args[i].points);
  }
  free(k->args);
  free(k);
}

static const char *const extra_keys[] = {"args", NULL};

const gf_task_kind gf_task_kernel_kind = {
    .name = "kernel",
    .extra_keys = extra_keys,
    .traits = 0,
    .load = load,
    .describe = describe,
    .emit = emit,
    .free = free_kernel,
};
