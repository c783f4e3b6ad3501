/* workflow.c - YAML workflow file -> checked plain model (all validation lives here).
 *
 * The file is loaded with libyaml's document API, `--set` overrides are grafted
 * onto the document, and the document is walked with one table of keys per
 * mapping, so one place knows each key. Every problem is reported at the node
 * that causes it; nodes grafted by an override are reported against that
 * override's own text.
 */
#include "workflow.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "eval.h"
#include "load.h"
#include "registry.h"
#include "schedule.h"
#include "task_kernel.h"
#include "text.h"

#define MAX_TASKS 256
#define MAX_STREAMS 64
#define MAX_RING 64
#define MAX_STEPS 1e12
#define MAX_PLANES 1000000000              /* the writer keeps a bit per plane */
#define MAX_FIELD_BYTES ((int64_t)1 << 62) /* any byte count: an instance, a ring, a file */
#define MIN_LUA_MEMORY ((int64_t)1 << 20)
#define MAX_LUA_MEMORY ((int64_t)1 << 40)
#define MIN_LUA_INSTRUCTIONS 1000
#define MAX_LUA_INSTRUCTIONS 1000000000000000 /* 10^15 */
#define MAX_YAML_DEPTH 64                     /* libyaml's loader recurses once per level */

/* The public model plus what only the loader and free need. */
typedef struct workflow_impl {
  gf_workflow wf;              /* first: a gf_workflow * is a workflow_impl * */
  double shape_d[GF_MAX_DIMS]; /* the grid shape as `shape[i]` reads it */
  char *resolved;              /* gf_workflow_resolved_yaml() text */
  gf_diag_source *sources;     /* each `--set`: where locations in its text point */
  int nsources;
} workflow_impl;

/* One `--set KEY=VALUE`: the nodes it grafted and the diag source of its
 * text (impl->sources[source - 1], "KEY=VALUE": columns count from its start). */
typedef struct override_src {
  int source;
  int first_node, last_node;
} override_src;

/* Nodes of a hook declaration needed after the walk, when Lua is loaded. */
typedef struct hook_nodes {
  yaml_node_t *lua, *function, *pure;
} hook_nodes;

struct gf_loader {
  workflow_impl *impl;
  gf_workflow *wf;
  yaml_document_t doc;
  int have_doc;
  override_src *overrides;
  int noverrides;
  gf_diag *diag;
  const gf_registry *registry;
  const gf_lua_limits *lua_limits;
  int params_visible; /* parameters an expression may use so far */
  hook_nodes *hook_nodes;
  gf_lua *lua;               /* the hooks, loaded: becomes the run's gf_eval */
  int *hook_ids;             /* Lua id of each hook */
  yaml_node_t **task_nodes;  /* each task's mapping */
  yaml_node_t **after_nodes; /* each task's `after` value, resolved last */
  yaml_node_t *params_node;
  int managed_prefetch;      /* memory.prefetch: default for managed fields */
  int managed_read_mostly;   /* memory.read_mostly: likewise */
  yaml_node_t *staging_node; /* memory.staging, where a staging limit is reported */
  int64_t staging_planes;    /* memory.staging as a count of planes; 0: as bytes, or not given */
  yaml_node_t *init_node;    /* the `init:` of the field being loaded, NULL: none */
  int nodes;                 /* YAML nodes seen, the file's and the overrides' */
};

/* ---- names ---------------------------------------------------------------- */

static const char *const dtype_names[] = {"f32", "f64"};

/* Names an expression knows by itself, which a parameter may not hide. */
static const char *const reserved_names[] = {"n",  "shape", "spacing", "ndim", "halo", "x0",
                                             "x1", "x2",    "i0",      "i1",   "i2"};
static const char *const builtin_functions[] = {"min", "max",  "floor", "ceil", "round",
                                                "abs", "sqrt", "exp",   "log",  "sin",
                                                "cos", "tan",  "pow",   "atan2"};
static const char *const var_names[GF_VAR_COUNT] = {"i0", "i1", "i2", "x0", "x1", "x2"};

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *gf_dtype_name(gf_dtype dtype) {
  return (unsigned)dtype < (unsigned)COUNT_OF(dtype_names) ? dtype_names[dtype] : "?";
}

static int find_name(const char *const *names, int count, const char *name) {
  for (int i = 0; i < count; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

static int is_identifier(const char *s) {
  if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (s++; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return 0;
  return 1;
}

static size_t identifier_length(const char *s) {
  size_t i = 0;
  while ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || s[i] == '_' ||
         (i > 0 && s[i] >= '0' && s[i] <= '9'))
    i++;
  return i;
}

/* `out of memory: loading the workflow`, reported once where it happened. */
static gf_status load_oom(loader *ld) {
  return gf_oom(ld->diag, "loading the workflow");
}

/* "a, b, c" of names[0..count); caller frees. */
char *gf_load_join(const char *const *names, int count) {
  gf_text sb = {0};
  gf_text_puts(&sb, "");
  for (int i = 0; i < count; i++) {
    if (i) gf_text_puts(&sb, ", ");
    gf_text_puts(&sb, names[i]);
  }
  return sb.data;
}

/* The same for names at a fixed stride inside an array of structs. */
static char *join_member_names(const void *base, size_t stride, int count) {
  gf_text sb = {0};
  gf_text_puts(&sb, "");
  for (int i = 0; i < count; i++) {
    if (i) gf_text_puts(&sb, ", ");
    gf_text_puts(&sb, *(char *const *)((const char *)base + (size_t)i * stride));
  }
  return sb.data;
}

/* ---- nodes and where they came from ----------------------------------------- */

static int node_id(const loader *ld, const yaml_node_t *node) {
  return (int)(node - ld->doc.nodes.start) + 1;
}

yaml_node_t *gf_load_node(loader *ld, int id) {
  return yaml_document_get_node(&ld->doc, id);
}

static override_src *override_of(const loader *ld, const yaml_node_t *node) {
  int id = node_id(ld, node);
  for (int i = 0; i < ld->noverrides; i++)
    if (id >= ld->overrides[i].first_node && id <= ld->overrides[i].last_node)
      return &ld->overrides[i];
  return NULL;
}

/* Grafted nodes carry their column in the override's text already. */
gf_loc gf_load_loc(const loader *ld, const yaml_node_t *node) {
  const override_src *src = override_of(ld, node);
  if (src) return (gf_loc){1, (int)node->start_mark.column + 1, src->source};
  return (gf_loc){(int)node->start_mark.line + 1, (int)node->start_mark.column + 1, 0};
}

int gf_load_is_quoted(const yaml_node_t *node) {
  return node->type == YAML_SCALAR_NODE &&
         (node->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
          node->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

/* Where byte `offset` of a scalar's value sits in the source. */
gf_loc gf_load_text_loc(const loader *ld, const yaml_node_t *node, size_t offset) {
  gf_loc loc = gf_load_loc(ld, node);
  loc.col += gf_load_is_quoted(node) + (int)offset;
  return loc;
}

static gf_status vfail_loc(loader *ld, gf_loc loc, const char *fmt, va_list ap) {
  return gf_diag_verror(ld->diag, loc, GF_INVALID, fmt, ap);
}

__attribute__((format(printf, 3, 4))) gf_status gf_load_fail(loader *ld, const yaml_node_t *node,
                                                             const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gf_status status = vfail_loc(ld, gf_load_loc(ld, node), fmt, ap);
  va_end(ap);
  return status;
}

/* At byte `offset` of a scalar's value (inside its quotes). */
__attribute__((format(printf, 4, 5))) gf_status gf_load_fail_text(loader *ld,
                                                                  const yaml_node_t *node,
                                                                  size_t offset, const char *fmt,
                                                                  ...) {
  va_list ap;
  va_start(ap, fmt);
  gf_status status = vfail_loc(ld, gf_load_text_loc(ld, node, offset), fmt, ap);
  va_end(ap);
  return status;
}

const char *gf_load_scalar(const yaml_node_t *node) {
  return node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

/* How a message names what it got: 'abc', a mapping, a sequence, nothing. */
static const char *describe(const yaml_node_t *node, char *buf, size_t size) {
  if (node->type == YAML_MAPPING_NODE) return "a mapping";
  if (node->type == YAML_SEQUENCE_NODE) return "a sequence";
  const char *s = gf_load_scalar(node);
  if (!s || (!*s && !gf_load_is_quoted(node))) return "nothing";
  if (strlen(s) > 60)
    snprintf(buf, size, "'%.57s...'", s);
  else
    snprintf(buf, size, "'%s'", s);
  return buf;
}

gf_status gf_load_fail_type(loader *ld, const yaml_node_t *node, const char *expected) {
  char buf[80];
  return gf_load_fail(ld, node, "expected %s, got %s", expected, describe(node, buf, sizeof buf));
}

/* ---- scalars ---------------------------------------------------------------- */

static int parse_int_text(const char *s, int64_t *out) {
  const char *p = s;
  if (*p == '-' || *p == '+') p++;
  if (*p < '0' || *p > '9') return 0;
  for (; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno == ERANGE) return 0;
  *out = v;
  return 1;
}

/* A plain decimal number; expressions and YAML's .inf/.nan are not. */
static int parse_number_text(const char *s, double *out) {
  const char *p = s;
  if (!*p) return 0;
  for (; *p; p++)
    if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '-' ||
          *p == '+'))
      return 0;
  if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '.' || s[0] == '-' || s[0] == '+')) return 0;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || errno == ERANGE || !isfinite(v)) return 0;
  *out = v;
  return 1;
}

static gf_status get_int(loader *ld, const yaml_node_t *node, const char *what, int64_t lo,
                         int64_t hi, int64_t *out) {
  const char *s = gf_load_scalar(node);
  if (!s || !parse_int_text(s, out)) return gf_load_fail_type(ld, node, "an integer");
  if (*out < lo || *out > hi)
    return gf_load_fail(ld, node, "%s must be between %lld and %lld, got %lld", what, (long long)lo,
                        (long long)hi, (long long)*out);
  return GF_OK;
}

static gf_status get_bool(loader *ld, const yaml_node_t *node, int *out) {
  static const char *const truths[] = {"true", "True", "TRUE", "yes", "Yes", "on"};
  static const char *const lies[] = {"false", "False", "FALSE", "no", "No", "off"};
  const char *s = gf_load_scalar(node);
  if (s && !gf_load_is_quoted(node)) {
    if (find_name(truths, COUNT_OF(truths), s) >= 0) return *out = 1, GF_OK;
    if (find_name(lies, COUNT_OF(lies), s) >= 0) return *out = 0, GF_OK;
  }
  return gf_load_fail_type(ld, node, "true or false");
}

/* One of `names`; the message lists them. */
static gf_status get_choice(loader *ld, const yaml_node_t *node, const char *what,
                            const char *const *names, int count, int *out) {
  const char *s = gf_load_scalar(node);
  *out = s ? find_name(names, count, s) : -1;
  if (*out >= 0) return GF_OK;
  char *list = gf_load_join(names, count);
  if (!list) return load_oom(ld);
  char buf[80];
  gf_status status =
      s ? gf_load_fail(ld, node, "unknown %s '%s'; expected one of: %s", what, s, list)
        : gf_load_fail(ld, node, "expected a %s (one of: %s), got %s", what, list,
                       describe(node, buf, sizeof buf));
  free(list);
  return status;
}

gf_status gf_load_choice(loader *ld, const yaml_node_t *node, const char *what,
                         const char *const *names, int count, int *out) {
  return get_choice(ld, node, what, names, count, out);
}

static gf_status get_identifier(loader *ld, const yaml_node_t *node, const char *what,
                                const char **out) {
  const char *s = gf_load_scalar(node);
  if (!s) return gf_load_fail_type(ld, node, "a name");
  if (!is_identifier(s))
    return gf_load_fail(
        ld, node,
        "%s '%s' is not a valid name (letters, digits and '_', not starting with a digit)", what,
        s);
  *out = s;
  return GF_OK;
}

/* ---- mappings ---------------------------------------------------------------- */

/* The pairs of a mapping whose keys are names the workflow chooses. */
gf_status gf_load_pairs(loader *ld, yaml_node_t *node, const char *what, yaml_node_pair_t **pairs,
                        int *count) {
  if (node->type != YAML_MAPPING_NODE) {
    char buf[80];
    return gf_load_fail(ld, node, "expected a mapping for %s, got %s", what,
                        describe(node, buf, sizeof buf));
  }
  *pairs = node->data.mapping.pairs.start;
  *count = (int)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
  for (int i = 0; i < *count; i++) {
    yaml_node_t *key = gf_load_node(ld, (*pairs)[i].key);
    const char *name = gf_load_scalar(key);
    if (!name) return gf_load_fail_type(ld, key, "a name as key");
    for (int j = 0; j < i; j++)
      if (strcmp(name, gf_load_scalar(gf_load_node(ld, (*pairs)[j].key))) == 0)
        return gf_load_fail(ld, key, "duplicate key '%s'", name);
  }
  return GF_OK;
}

/* Checks a mapping's keys against `spec` (unknown, duplicate, missing), then
 * runs each present key's loader in table order. `keys`/`values`, when given,
 * receive the nodes per spec entry (NULL when absent). `what` names the
 * mapping in messages; NULL is the top level. */
gf_status gf_load_mapping(loader *ld, yaml_node_t *node, const char *what, const gf_key_spec *spec,
                          int nspec, void *target, yaml_node_t **keys, yaml_node_t **values) {
  yaml_node_t *found_keys[32] = {0}, *found_values[32] = {0};
  yaml_node_pair_t *pairs;
  int count;
  if (node->type != YAML_MAPPING_NODE) {
    char buf[80];
    if (!what)
      return gf_load_fail(ld, node, "expected a mapping at the top level, got %s",
                          describe(node, buf, sizeof buf));
    return gf_load_fail(ld, node, "expected a mapping for %s, got %s", what,
                        describe(node, buf, sizeof buf));
  }
  gf_status status = gf_load_pairs(ld, node, what ? what : "the workflow", &pairs, &count);
  if (status) return status;
  for (int i = 0; i < count; i++) {
    yaml_node_t *key = gf_load_node(ld, pairs[i].key);
    const char *name = gf_load_scalar(key);
    int k = 0;
    while (k < nspec && strcmp(spec[k].name, name) != 0) k++;
    if (k == nspec) {
      gf_text list = {0};
      gf_text_puts(&list, "");
      for (int j = 0; j < nspec; j++) {
        if (j) gf_text_puts(&list, ", ");
        gf_text_puts(&list, spec[j].name);
      }
      status = what
                   ? gf_load_fail(ld, key, "unknown key '%s' in %s; expected one of: %s", name,
                                  what, list.data)
                   : gf_load_fail(ld, key, "unknown key '%s' at the top level; expected one of: %s",
                                  name, list.data);
      free(list.data);
      return status;
    }
    found_keys[k] = key;
    found_values[k] = gf_load_node(ld, pairs[i].value);
  }
  for (int k = 0; k < nspec; k++)
    if (spec[k].required && !found_keys[k])
      return what ? gf_load_fail(ld, node, "missing required key '%s' in %s", spec[k].name, what)
                  : gf_load_fail(ld, node, "missing required key '%s'", spec[k].name);
  if (keys) memcpy(keys, found_keys, (size_t)nspec * sizeof *keys);
  if (values) memcpy(values, found_values, (size_t)nspec * sizeof *values);
  for (int k = 0; k < nspec; k++)
    if (found_keys[k] && spec[k].load &&
        (status = spec[k].load(ld, found_keys[k], found_values[k], target)))
      return status;
  return GF_OK;
}

/* ---- expressions ---------------------------------------------------------------- */

typedef struct name_scope {
  loader *ld;
  unsigned names;
} name_scope;

static int name_is(const char *name, size_t len, const char *s) {
  return strlen(s) == len && memcmp(name, s, len) == 0;
}

static int lookup_name(void *user, const char *name, size_t len, gf_symbol *out) {
  const name_scope *scope = user;
  gf_workflow *wf = scope->ld->wf;
  memset(out, 0, sizeof *out);
  if (scope->names & GF_NAMES_VARS)
    for (int i = 0; i < GF_VAR_COUNT; i++)
      if (name_is(name, len, var_names[i])) {
        out->kind = GF_SYM_VAR;
        out->slot = i;
        return 1;
      }
  if (scope->names & GF_NAMES_GRID) {
    if (name_is(name, len, "shape") || name_is(name, len, "spacing")) {
      out->kind = GF_SYM_ARRAY;
      out->array = name[1] == 'h' ? scope->ld->impl->shape_d : wf->spacing;
      out->array_len = wf->ndim;
      return 1;
    }
    if (name_is(name, len, "ndim") || name_is(name, len, "halo")) {
      out->kind = GF_SYM_CONST;
      out->value = name[0] == 'n' ? wf->ndim : wf->halo;
      return 1;
    }
  }
  if (scope->names & GF_NAMES_PARAMS)
    for (int i = 0; i < scope->ld->params_visible; i++)
      if (name_is(name, len, wf->params[i].name)) {
        out->kind = GF_SYM_CONST;
        out->value = wf->params[i].value;
        return 1;
      }
  if (scope->names & GF_NAMES_HOOKS)
    for (int i = 0; i < wf->nhooks; i++)
      if (name_is(name, len, wf->hooks[i].name)) {
        out->kind = GF_SYM_HOOK;
        out->slot = i;
        return 1;
      }
  return 0;
}

/* Compiles `text`, which starts at byte `offset` of `node`'s scalar value. */
gf_status gf_load_expr(loader *ld, const yaml_node_t *node, const char *text, size_t offset,
                       unsigned names, int allow_step, gf_expr **out) {
  name_scope user = {ld, names};
  gf_scope scope = {lookup_name, &user, allow_step};
  gf_status status =
      gf_expr_compile(text, &scope, ld->diag, gf_load_text_loc(ld, node, offset), out);
  /* The hooks a per-step expression calls with one argument: a pure one's
   * results are worth a table (eval.c). */
  for (int h = 0; status == GF_OK && allow_step && (names & GF_NAMES_HOOKS) && h < ld->wf->nhooks;
       h++)
    if (gf_expr_calls_hook_with(*out, h, 1)) ld->wf->hooks[h].unary_step_call = 1;
  return status;
}

double gf_load_constant(const gf_expr *expr) {
  gf_eval_ctx ctx = {0};
  gf_status status = GF_OK;
  return gf_expr_eval(expr, &ctx, &status);
}

/* A number, or an expression of `names` whose value is known now. */
static gf_status get_number(loader *ld, const yaml_node_t *node, unsigned names, double *out) {
  const char *s = gf_load_scalar(node);
  if (!s || (!*s && !gf_load_is_quoted(node)))
    return gf_load_fail_type(ld, node, "a number or an expression");
  if (parse_number_text(s, out)) return GF_OK;
  gf_expr *expr;
  gf_status status = gf_load_expr(ld, node, s, 0, names, 0, &expr);
  if (status) return status;
  *out = gf_load_constant(expr);
  gf_expr_free(expr);
  if (!isfinite(*out)) return gf_load_fail(ld, node, "'%s' is not a finite number (%g)", s, *out);
  return GF_OK;
}

gf_status gf_load_number(loader *ld, const yaml_node_t *node, unsigned names, double *out) {
  return get_number(ld, node, names, out);
}

gf_status gf_load_integer(loader *ld, const yaml_node_t *node, unsigned names, int64_t *out) {
  double v = 0;
  gf_status status = get_number(ld, node, names, &v);
  if (status) return status;
  if (v != floor(v) || fabs(v) > 9.0e18) {
    int64_t ignored = 0;
    if (parse_number_text(gf_load_scalar(node), &v) ||
        parse_int_text(gf_load_scalar(node), &ignored))
      return gf_load_fail_type(ld, node, "an integer");
    return gf_load_fail(ld, node, "expected an integer, '%s' is %.17g", gf_load_scalar(node), v);
  }
  *out = (int64_t)v;
  return GF_OK;
}

/* A sequence of 1..3 integers >= 1. */
static gf_status get_shape(loader *ld, const yaml_node_t *node, unsigned names, int *ndim,
                           int64_t shape[GF_MAX_DIMS]) {
  if (node->type != YAML_SEQUENCE_NODE)
    return gf_load_fail_type(ld, node, "a sequence of 1 to 3 sizes");
  int count = (int)(node->data.sequence.items.top - node->data.sequence.items.start);
  if (count < 1 || count > GF_MAX_DIMS)
    return gf_load_fail(ld, node, "a shape has 1 to %d entries, this one has %d", GF_MAX_DIMS,
                        count);
  for (int d = 0; d < GF_MAX_DIMS; d++) shape[d] = 1;
  for (int d = 0; d < count; d++) {
    yaml_node_t *item = gf_load_node(ld, node->data.sequence.items.start[d]);
    gf_status status = gf_load_integer(ld, item, names, &shape[d]);
    if (status) return status;
    if (shape[d] < 1)
      return gf_load_fail(ld, item, "a size must be >= 1, got %lld", (long long)shape[d]);
  }
  *ndim = count;
  return GF_OK;
}

/* ---- top level: gflow, name ------------------------------------------------- */

static gf_status load_version(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  int64_t version = 0;
  const char *s = gf_load_scalar(value);
  if (!s || !parse_int_text(s, &version)) return gf_load_fail_type(ld, value, "an integer");
  if (version != 1)
    return gf_load_fail(ld, value, "unsupported workflow version %lld; this gflow reads version 1",
                        (long long)version);
  return GF_OK;
}

static gf_status load_name(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  const char *s = gf_load_scalar(value);
  if (!s) return gf_load_fail_type(ld, value, "a name");
  int ok = (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_';
  for (const char *p = s + 1; ok && *p; p++)
    ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
         *p == '_' || *p == '.' || *p == '-';
  if (!ok)
    return gf_load_fail(ld, value, "workflow name '%s' must match [A-Za-z_][A-Za-z0-9_.-]*", s);
  free(ld->wf->name);
  ld->wf->name = gf_strdup(s);
  return ld->wf->name ? GF_OK : load_oom(ld);
}

/* ---- grid ------------------------------------------------------------------- */

static gf_status load_grid_shape(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  gf_status status = get_shape(ld, value, 0, &wf->ndim, wf->shape);
  for (int d = 0; d < GF_MAX_DIMS; d++) ld->impl->shape_d[d] = (double)wf->shape[d];
  if (status) return status;
  int64_t cells = 1;
  int overflow = 0;
  for (int d = 0; d < wf->ndim; d++)
    overflow |= __builtin_mul_overflow(cells, wf->shape[d], &cells);
  if (overflow || cells > MAX_FIELD_BYTES)
    return gf_load_fail(ld, value, "the grid has more than 2^62 cells");
  return GF_OK;
}

static gf_status load_grid_spacing(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  if (value->type != YAML_SEQUENCE_NODE)
    return gf_load_fail_type(ld, value, "a sequence of numbers");
  int count = (int)(value->data.sequence.items.top - value->data.sequence.items.start);
  if (count != wf->ndim)
    return gf_load_fail(ld, value, "spacing has %d entr%s, shape has %d", count,
                        count == 1 ? "y" : "ies", wf->ndim);
  for (int d = 0; d < count; d++) {
    yaml_node_t *item = gf_load_node(ld, value->data.sequence.items.start[d]);
    gf_status status = get_number(ld, item, 0, &wf->spacing[d]);
    if (status) return status;
    if (!(wf->spacing[d] > 0))
      return gf_load_fail(ld, item, "spacing must be > 0, got %g", wf->spacing[d]);
  }
  return GF_OK;
}

static gf_status load_grid_halo(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  int64_t halo = 0;
  gf_status status = get_int(ld, value, "halo", 0, INT32_MAX / 2, &halo);
  if (status) return status;
  for (int d = 0; d < wf->ndim; d++)
    if (2 * halo >= wf->shape[d])
      return gf_load_fail(
          ld, value, "halo %lld is too big: 2*halo must be less than every size, shape[%d] is %lld",
          (long long)halo, d, (long long)wf->shape[d]);
  wf->halo = (int)halo;
  return GF_OK;
}

/* `boundary: none | copy | periodic`, or `boundary: {fixed: VALUE}`. */
static gf_status load_grid_boundary(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                    void *target) {
  (void)key, (void)target;
  gf_boundary *b = &ld->wf->boundary;
  b->loc = gf_load_loc(ld, value);
  if (value->type == YAML_MAPPING_NODE) {
    yaml_node_t *fixed = NULL;
    static const gf_key_spec fixed_keys[] = {{"fixed", 1, NULL}};
    gf_status status = gf_load_mapping(ld, value, "boundary", fixed_keys, COUNT_OF(fixed_keys),
                                       NULL, NULL, &fixed);
    if (status || (status = get_number(ld, fixed, 0, &b->value))) return status;
    b->kind = GF_BOUNDARY_FIXED;
    return GF_OK;
  }
  static const char *const kinds[] = {"none", "copy", "periodic"};
  int kind = 0;
  gf_status status = get_choice(ld, value, "boundary (or {fixed: VALUE})", kinds, 3, &kind);
  b->kind = (gf_boundary_kind)kind;
  return status;
}

static const gf_key_spec grid_keys[] = {
    {"shape", 1, load_grid_shape},
    {"spacing", 0, load_grid_spacing},
    {"halo", 0, load_grid_halo},
    {"boundary", 0, load_grid_boundary},
};

static gf_status load_grid(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  for (int d = 0; d < GF_MAX_DIMS; d++) ld->wf->spacing[d] = 1.0;
  return gf_load_mapping(ld, value, "grid", grid_keys, COUNT_OF(grid_keys), NULL, NULL, NULL);
}

/* ---- hooks (declared before params, loaded into Lua after the walk) -------------- */

static gf_status load_hook_lua(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key;
  int h = *(int *)target;
  const char *file = gf_load_scalar(value);
  if (!file || !*file) return gf_load_fail_type(ld, value, "a Lua file name");
  const char *dir = ld->wf->dir;
  ld->wf->hooks[h].path =
      (file[0] == '/' || strcmp(dir, ".") == 0) ? gf_strdup(file) : gf_asprintf("%s/%s", dir, file);
  if (!ld->wf->hooks[h].path) return load_oom(ld);
  ld->hook_nodes[h].lua = value;
  return GF_OK;
}

static gf_status load_hook_function(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                    void *target) {
  (void)key;
  int h = *(int *)target;
  const char *function = NULL;
  gf_status status = get_identifier(ld, value, "function", &function);
  if (status) return status;
  char *copy = gf_strdup(function);
  if (!copy) return load_oom(ld);
  free(ld->wf->hooks[h].function);
  ld->wf->hooks[h].function = copy;
  ld->hook_nodes[h].function = value;
  return GF_OK;
}

static gf_status load_hook_pure(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key;
  int h = *(int *)target;
  ld->hook_nodes[h].pure = value;
  return get_bool(ld, value, &ld->wf->hooks[h].pure);
}

static const gf_key_spec hook_keys[] = {
    {"lua", 1, load_hook_lua},
    {"function", 0, load_hook_function},
    {"pure", 0, load_hook_pure},
};

static gf_status load_hooks(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  yaml_node_pair_t *pairs;
  int count;
  gf_status status = gf_load_pairs(ld, value, "hooks", &pairs, &count);
  if (status) return status;
  wf->hooks = gf_calloc((size_t)count, sizeof *wf->hooks);
  ld->hook_nodes = gf_calloc((size_t)count, sizeof *ld->hook_nodes);
  if (!wf->hooks || !ld->hook_nodes) return load_oom(ld);
  wf->nhooks = count;
  for (int h = 0; h < count; h++) {
    yaml_node_t *name_node = gf_load_node(ld, pairs[h].key);
    const char *name;
    if ((status = get_identifier(ld, name_node, "hook name", &name))) return status;
    if (find_name(reserved_names, COUNT_OF(reserved_names), name) >= 0 ||
        find_name(builtin_functions, COUNT_OF(builtin_functions), name) >= 0)
      return gf_load_fail(ld, name_node, "'%s' is a built-in name and cannot name a hook", name);
    gf_hook *hook = &wf->hooks[h];
    hook->name = gf_strdup(name);
    hook->function = gf_strdup(name);
    hook->loc = gf_load_loc(ld, name_node);
    char *what = gf_asprintf("hook '%s'", name);
    if (!hook->name || !hook->function || !what) {
      free(what);
      return load_oom(ld);
    }
    status = gf_load_mapping(ld, gf_load_node(ld, pairs[h].value), what, hook_keys,
                             COUNT_OF(hook_keys), &h, NULL, NULL);
    free(what);
    if (status) return status;
  }
  return GF_OK;
}

static int find_hook(const gf_workflow *wf, const char *name) {
  for (int i = 0; i < wf->nhooks; i++)
    if (strcmp(wf->hooks[i].name, name) == 0) return i;
  return -1;
}

gf_status gf_load_hook(loader *ld, const yaml_node_t *node, int *out) {
  const char *name = gf_load_scalar(node);
  if (!name) return gf_load_fail_type(ld, node, "a hook name");
  *out = find_hook(ld->wf, name);
  if (*out >= 0) return GF_OK;
  if (ld->wf->nhooks == 0)
    return gf_load_fail(ld, node, "unknown hook '%s'; the workflow declares no hooks", name);
  char *list = join_member_names(ld->wf->hooks, sizeof(gf_hook), ld->wf->nhooks);
  if (!list) return load_oom(ld);
  gf_status status = gf_load_fail(ld, node, "unknown hook '%s'; known hooks: %s", name, list);
  free(list);
  return status;
}

/* ---- params ----------------------------------------------------------------- */

static gf_status load_params(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  yaml_node_pair_t *pairs;
  int count;
  gf_status status = gf_load_pairs(ld, value, "params", &pairs, &count);
  if (status) return status;
  ld->params_node = value;
  wf->params = gf_calloc((size_t)count, sizeof *wf->params);
  if (!wf->params) return load_oom(ld);
  wf->nparams = count;
  for (int i = 0; i < count; i++) {
    yaml_node_t *name_node = gf_load_node(ld, pairs[i].key),
                *value_node = gf_load_node(ld, pairs[i].value);
    const char *name;
    if ((status = get_identifier(ld, name_node, "parameter", &name))) return status;
    if (find_name(reserved_names, COUNT_OF(reserved_names), name) >= 0 ||
        find_name(builtin_functions, COUNT_OF(builtin_functions), name) >= 0)
      return gf_load_fail(ld, name_node, "'%s' is a built-in name and cannot be a parameter", name);
    if (find_hook(wf, name) >= 0)
      return gf_load_fail(ld, name_node, "'%s' is a hook and cannot be a parameter", name);
    gf_param_value *param = &wf->params[i];
    param->name = gf_strdup(name);
    if (!param->name) return load_oom(ld);
    param->loc = gf_load_text_loc(ld, value_node, 0);
    const char *s = gf_load_scalar(value_node);
    if (s && !parse_number_text(s, &param->value) && !(param->text = gf_strdup(s)))
      return load_oom(ld);
    if ((status = get_number(ld, value_node, GF_NAMES_PARAMS | GF_NAMES_GRID, &param->value)))
      return status;
    ld->params_visible = i + 1;
  }
  return GF_OK;
}

/* ---- memory ----------------------------------------------------------------- */

static gf_status load_memory_default(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                     void *target) {
  (void)key, (void)target;
  int space = 0;
  gf_status status = get_choice(ld, value, "memory space", gf_space_names, GF_SPACE_COUNT, &space);
  ld->wf->default_space = (gf_space)space;
  return status;
}

/* memory.staging: the pinned staging budget, as a count of the largest
 * plane (`staging: 8`) or as bytes with a binary unit (`staging: 64MiB`). */
static gf_status load_memory_staging(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                     void *target) {
  (void)key, (void)target;
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  ld->staging_node = value;
  const char *s = gf_load_scalar(value);
  int64_t planes = 0;
  if (s && parse_int_text(s, &planes))
    return get_int(ld, value, "staging", 1, 65536, &ld->staging_planes);
  char *end = NULL;
  errno = 0;
  double v = s ? strtod(s, &end) : NAN;
  while (end && *end == ' ') end++;
  int unit = end && *end ? find_name(units, COUNT_OF(units), end) : -1;
  if (!s || end == s || errno == ERANGE || unit < 0)
    return gf_load_fail_type(ld, value, "a number of planes (1 to 65536) or a size such as 256MiB");
  double bytes = v * (double)((int64_t)1 << (10 * unit));
  if (!(bytes >= 1 && bytes <= (double)MAX_FIELD_BYTES))
    return gf_load_fail(ld, value, "staging must be from 1B to 4EiB, got %s", s);
  ld->wf->staging_budget = (int64_t)bytes;
  return GF_OK;
}

static gf_status load_memory_prefetch(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                      void *target) {
  (void)key, (void)target;
  return get_bool(ld, value, &ld->managed_prefetch);
}

static gf_status load_memory_read_mostly(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                         void *target) {
  (void)key, (void)target;
  return get_bool(ld, value, &ld->managed_read_mostly);
}

static gf_status load_pool_strategy(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                    void *target) {
  (void)key, (void)target;
  int strategy = 0;
  gf_status status = get_choice(ld, value, "pool strategy", gf_pool_strategy_names,
                                GF_POOL_STRATEGY_COUNT, &strategy);
  ld->wf->pool_strategy = (gf_pool_strategy)strategy;
  return status;
}

static gf_status load_pool_release_threshold(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                             void *target) {
  (void)key, (void)target;
  double bytes = 0;
  gf_status status = get_number(ld, value, GF_NAMES_PARAMS | GF_NAMES_GRID, &bytes);
  if (status) return status;
  if (!(bytes >= 0 && bytes <= (double)MAX_FIELD_BYTES) || bytes != floor(bytes))
    return gf_load_fail(ld, value,
                        "release_threshold must be a whole number of bytes from 0 to "
                        "2^62, got %g",
                        bytes);
  ld->wf->pool_release_threshold = (size_t)bytes;
  return GF_OK;
}

static const gf_key_spec pool_keys[] = {
    {"strategy", 0, load_pool_strategy},
    {"release_threshold", 0, load_pool_release_threshold},
};

static gf_status load_memory_pool(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  return gf_load_mapping(ld, value, "memory.pool", pool_keys, COUNT_OF(pool_keys), NULL, NULL,
                         NULL);
}

static const gf_key_spec memory_keys[] = {
    {"default", 0, load_memory_default},   {"staging", 0, load_memory_staging},
    {"prefetch", 0, load_memory_prefetch}, {"read_mostly", 0, load_memory_read_mostly},
    {"pool", 0, load_memory_pool},
};

static gf_status load_memory(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  return gf_load_mapping(ld, value, "memory", memory_keys, COUNT_OF(memory_keys), NULL, NULL, NULL);
}

/* ---- fields ----------------------------------------------------------------- */

static gf_status load_field_dtype(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key;
  int dtype = 0;
  gf_status status = get_choice(ld, value, "dtype", dtype_names, COUNT_OF(dtype_names), &dtype);
  ((gf_field *)target)->dtype = (gf_dtype)dtype;
  return status;
}

static gf_status load_field_shape(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key;
  gf_field *field = target;
  return get_shape(ld, value, GF_NAMES_PARAMS | GF_NAMES_GRID, &field->ndim, field->shape);
}

static gf_status load_field_ring(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key;
  int64_t ring = 0;
  gf_status status = get_int(ld, value, "ring", 1, MAX_RING, &ring);
  ((gf_field *)target)->ring = (int)ring;
  return status;
}

static gf_status load_field_space(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key;
  int space = 0;
  gf_status status = get_choice(ld, value, "memory space", gf_space_names, GF_SPACE_COUNT, &space);
  ((gf_field *)target)->space = (gf_space)space;
  return status;
}

/* prefetch and read_mostly are advice for managed memory only. */
static gf_status load_managed_flag(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                   gf_field *field, int *flag) {
  gf_status status = get_bool(ld, value, flag);
  if (status) return status;
  if (field->space != GF_SPACE_MANAGED)
    return gf_load_fail(ld, key, "%s applies only to space managed; field '%s' is in %s",
                        gf_load_scalar(key), field->name, gf_space_name(field->space));
  return GF_OK;
}

static gf_status load_field_prefetch(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                     void *target) {
  gf_field *field = target;
  return load_managed_flag(ld, key, value, field, &field->prefetch);
}

static gf_status load_field_read_mostly(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                        void *target) {
  gf_field *field = target;
  return load_managed_flag(ld, key, value, field, &field->read_mostly);
}

static const gf_key_spec init_keys[] = {{"hook", 1, NULL}};

static gf_status load_field_init(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key;
  gf_field *field = target;
  gf_status status;
  ld->init_node = value;
  if (value->type == YAML_MAPPING_NODE) {
    yaml_node_t *values[1] = {NULL};
    if ((status = gf_load_mapping(ld, value, "init", init_keys, 1, NULL, NULL, values)))
      return status;
    field->init_kind = GF_INIT_HOOK;
    return gf_load_hook(ld, values[0], &field->init_hook);
  }
  const char *s = gf_load_scalar(value);
  if (!s || (!*s && !gf_load_is_quoted(value)))
    return gf_load_fail_type(ld, value, "a number, an expression or {hook: NAME}");
  if (parse_number_text(s, &field->init_value)) return GF_OK;
  gf_expr *expr;
  if ((status = gf_load_expr(ld, value, s, 0, GF_NAMES_PARAMS | GF_NAMES_GRID | GF_NAMES_VARS, 0,
                             &expr)))
    return status;
  if (gf_expr_is_constant(expr)) {
    field->init_value = gf_load_constant(expr);
    gf_expr_free(expr);
    if (!isfinite(field->init_value))
      return gf_load_fail(ld, value, "'%s' is not a finite number (%g)", s, field->init_value);
    return GF_OK;
  }
  field->init_kind = GF_INIT_EXPR;
  field->init_expr = expr;
  return GF_OK;
}

static gf_status load_field_scratch(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                    void *target) {
  (void)key;
  return get_bool(ld, value, &((gf_field *)target)->scratch);
}

static const gf_key_spec field_keys[] = {
    {"dtype", 0, load_field_dtype},       {"shape", 0, load_field_shape},
    {"ring", 0, load_field_ring},         {"space", 0, load_field_space},
    {"prefetch", 0, load_field_prefetch}, {"read_mostly", 0, load_field_read_mostly},
    {"init", 0, load_field_init},         {"scratch", 0, load_field_scratch},
};

/* A scratch field is new memory at every step that uses it: nothing to
 * initialise, and no ring of instances that outlive a step. */
static gf_status check_scratch(loader *ld, yaml_node_t *name_node, const gf_field *field) {
  if (!field->scratch) return GF_OK;
  if (ld->init_node)
    return gf_load_fail(ld, ld->init_node,
                        "field '%s' is scratch: it holds nothing until a task of the step "
                        "writes it, so it takes no init",
                        field->name);
  if (field->ring != 1)
    return gf_load_fail(ld, name_node,
                        "field '%s' is scratch: it lives within one step, so it has one "
                        "instance, not a ring of %d",
                        field->name, field->ring);
  return GF_OK;
}

static gf_status load_fields(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  yaml_node_pair_t *pairs;
  int count;
  gf_status status = gf_load_pairs(ld, value, "fields", &pairs, &count);
  if (status) return status;
  if (count == 0)
    return gf_load_fail(ld, value, "fields is empty; a workflow needs at least one field");
  wf->fields = gf_calloc((size_t)count, sizeof *wf->fields);
  if (!wf->fields) return load_oom(ld);
  wf->nfields = count;
  for (int i = 0; i < count; i++) {
    yaml_node_t *name_node = gf_load_node(ld, pairs[i].key);
    const char *name;
    if ((status = get_identifier(ld, name_node, "field name", &name))) return status;
    gf_field *field = &wf->fields[i];
    field->name = gf_strdup(name);
    if (!field->name) return load_oom(ld);
    field->dtype = GF_F32;
    field->ndim = wf->ndim;
    memcpy(field->shape, wf->shape, sizeof field->shape);
    field->ring = 1;
    field->space = wf->default_space;
    field->init_kind = GF_INIT_CONST;
    field->init_hook = -1;
    field->prefetch = field->read_mostly = -1; /* not given: memory.prefetch decides */
    field->loc = gf_load_loc(ld, name_node);
    char *what = gf_asprintf("field '%s'", name);
    if (!what) return load_oom(ld);
    ld->init_node = NULL;
    status = gf_load_mapping(ld, gf_load_node(ld, pairs[i].value), what, field_keys,
                             COUNT_OF(field_keys), field, NULL, NULL);
    free(what);
    if (status || (status = check_scratch(ld, name_node, field))) return status;
    int managed = field->space == GF_SPACE_MANAGED;
    if (field->prefetch < 0) field->prefetch = managed && ld->managed_prefetch;
    if (field->read_mostly < 0) field->read_mostly = managed && ld->managed_read_mostly;
    int64_t elems = 1, bytes;
    int overflow = 0;
    for (int d = 0; d < field->ndim; d++)
      overflow |= __builtin_mul_overflow(elems, field->shape[d], &elems);
    overflow |= __builtin_mul_overflow(elems, (int64_t)gf_dtype_size(field->dtype), &bytes);
    if (overflow || bytes > MAX_FIELD_BYTES)
      return gf_load_fail(ld, name_node,
                          "field '%s' is too large: more than 2^62 bytes per instance", name);
    int64_t ring_bytes;
    if (__builtin_mul_overflow(bytes, (int64_t)field->ring, &ring_bytes) ||
        ring_bytes > MAX_FIELD_BYTES)
      return gf_load_fail(
          ld, name_node,
          "field '%s' is too large: %d instances of %lld bytes are more than 2^62 bytes", name,
          field->ring, (long long)bytes);
    field->elems = elems;
    field->bytes = (size_t)bytes;
  }
  return GF_OK;
}

static int find_field(const gf_workflow *wf, const char *name, size_t len) {
  for (int i = 0; i < wf->nfields; i++)
    if (name_is(name, len, wf->fields[i].name)) return i;
  return -1;
}

/* ---- streams, schedule ---------------------------------------------------------- */

/* `name: count` pairs, for streams and events alike. */
static gf_status load_groups(loader *ld, yaml_node_t *value, const char *what,
                             gf_stream_group **groups, int *ngroups, int *total) {
  yaml_node_pair_t *pairs;
  int count;
  gf_status status = gf_load_pairs(ld, value, what, &pairs, &count);
  if (status) return status;
  *groups = gf_calloc((size_t)count, sizeof **groups);
  if (!*groups) return load_oom(ld);
  *ngroups = count;
  char kind[32];
  snprintf(kind, sizeof kind, "%.*s", (int)strlen(what) - 1, what); /* "streams" -> "stream" */
  for (int g = 0; g < count; g++) {
    yaml_node_t *name_node = gf_load_node(ld, pairs[g].key),
                *count_node = gf_load_node(ld, pairs[g].value);
    const char *name;
    int64_t n = 0;
    char label[48];
    snprintf(label, sizeof label, "%s group", kind);
    if ((status = get_identifier(ld, name_node, label, &name))) return status;
    if (!((*groups)[g].name = gf_strdup(name))) return load_oom(ld);
    (*groups)[g].loc = gf_load_loc(ld, name_node);
    snprintf(label, sizeof label, "%s count", kind);
    if ((status = get_int(ld, count_node, label, 1, MAX_STREAMS, &n))) return status;
    (*groups)[g].count = (int)n;
    (*groups)[g].first = *total;
    if (*total + n > MAX_STREAMS)
      return gf_load_fail(ld, count_node, "too many %s: %lld in all, at most %d", what,
                          (long long)(*total + n), MAX_STREAMS);
    *total += (int)n;
  }
  return GF_OK;
}

static gf_status load_streams(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  return load_groups(ld, value, "streams", &wf->groups, &wf->ngroups, &wf->nstreams);
}

static gf_status load_events(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  return load_groups(ld, value, "events", &wf->event_groups, &wf->nevent_groups, &wf->nevents);
}

static gf_status load_schedule(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  const char *names[16] = {NULL};
  for (int i = 0; i < gf_schedule_count; i++) names[i] = gf_schedules[i]->name;
  int schedule = 0;
  gf_status status = get_choice(ld, value, "schedule", names, gf_schedule_count, &schedule);
  if (status == GF_OK) ld->wf->schedule = gf_schedules[schedule];
  return status;
}

/* ---- references: FIELD[EXPR], group[EXPR] ---------------------------------------- */

/* Splits `name` or `name[expr]`; returns 0 when the text has neither form. */
static int split_ref(const char *s, size_t *name_len, size_t *expr_at, size_t *expr_len) {
  *name_len = identifier_length(s);
  if (*name_len == 0) return 0;
  if (!s[*name_len]) {
    *expr_at = *expr_len = 0;
    return 1;
  }
  size_t len = strlen(s);
  if (s[*name_len] != '[' || s[len - 1] != ']' || len < *name_len + 3) return 0;
  *expr_at = *name_len + 1;
  *expr_len = len - 1 - *expr_at;
  return 1;
}

gf_status gf_load_ref(loader *ld, yaml_node_t *node, gf_ref *ref) {
  const char *s = gf_load_scalar(node);
  size_t name_len, expr_at, expr_len;
  ref->field = -1;
  ref->index = NULL;
  if (!s || !split_ref(s, &name_len, &expr_at, &expr_len))
    return gf_load_fail_type(ld, node, "a field reference FIELD or FIELD[EXPR]");
  ref->loc = gf_load_text_loc(ld, node, 0);
  ref->field = find_field(ld->wf, s, name_len);
  if (ref->field < 0)
    return gf_load_fail_text(ld, node, 0, "unknown field '%.*s'", (int)name_len, s);
  if (!expr_len) return GF_OK;
  char *text = gf_strndup(s + expr_at, expr_len);
  if (!text) return load_oom(ld);
  gf_status status =
      gf_load_expr(ld, node, text, expr_at, GF_NAMES_PARAMS | GF_NAMES_GRID, 1, &ref->index);
  free(text);
  return status;
}

/* `group` or `group[EXPR]` among `groups` (streams or events, `kind`). */
static gf_status get_group_ref(loader *ld, yaml_node_t *node, const gf_stream_group *groups,
                               int ngroups, const char *kind, gf_stream_ref *ref) {
  const gf_workflow *wf = ld->wf;
  const char *s = gf_load_scalar(node);
  size_t name_len, expr_at, expr_len;
  char expected[64];
  snprintf(expected, sizeof expected, "a %s GROUP or GROUP[EXPR]", kind);
  if (!s || !split_ref(s, &name_len, &expr_at, &expr_len))
    return gf_load_fail_type(ld, node, expected);
  ref->loc = gf_load_text_loc(ld, node, 0);
  int g = 0;
  while (g < ngroups && !name_is(s, name_len, groups[g].name)) g++;
  if (g == ngroups) {
    if (ngroups == 0)
      return gf_load_fail_text(ld, node, 0, "unknown %s group '%.*s'; the workflow declares no %ss",
                               kind, (int)name_len, s, kind);
    char *list = join_member_names(groups, sizeof(gf_stream_group), ngroups);
    if (!list) return load_oom(ld);
    gf_status status = gf_load_fail_text(ld, node, 0, "unknown %s group '%.*s'; known groups: %s",
                                         kind, (int)name_len, s, list);
    free(list);
    return status;
  }
  ref->group = g;
  if (!expr_len) return GF_OK;
  char *text = gf_strndup(s + expr_at, expr_len);
  if (!text) return load_oom(ld);
  gf_status status =
      gf_load_expr(ld, node, text, expr_at, GF_NAMES_PARAMS | GF_NAMES_GRID, 1, &ref->index);
  free(text);
  if (status) return status;
  if (gf_expr_is_constant(ref->index)) {
    double i = gf_load_constant(ref->index);
    if (i != floor(i) || i < 0 || i >= groups[g].count)
      return gf_load_fail_text(ld, node, expr_at, "%s index %g is outside %s[0..%d]", kind, i,
                               groups[g].name, groups[g].count - 1);
  }
  (void)wf;
  return GF_OK;
}

static gf_status get_stream_ref(loader *ld, yaml_node_t *node, gf_stream_ref *ref) {
  return get_group_ref(ld, node, ld->wf->groups, ld->wf->ngroups, "stream", ref);
}

/* `wait:` and `host_wait:`: one event reference or a sequence of them. */
static gf_status get_event_refs(loader *ld, yaml_node_t *node, gf_stream_ref **refs, int *count) {
  const gf_workflow *wf = ld->wf;
  int n = node->type == YAML_SEQUENCE_NODE
              ? (int)(node->data.sequence.items.top - node->data.sequence.items.start)
              : 1;
  *refs = gf_calloc((size_t)n, sizeof **refs);
  if (!*refs) return load_oom(ld);
  *count = n;
  for (int i = 0; i < n; i++) {
    yaml_node_t *item = node->type == YAML_SEQUENCE_NODE
                            ? gf_load_node(ld, node->data.sequence.items.start[i])
                            : node;
    gf_status status =
        get_group_ref(ld, item, wf->event_groups, wf->nevent_groups, "event", &(*refs)[i]);
    if (status) return status;
  }
  return GF_OK;
}

/* ---- tasks ------------------------------------------------------------------ */

/* A task's keys: the common ones, then each kind's own key and extra keys
 * (in gf_task_kinds order), built once per load so a new kind adds its keys
 * without touching this file. */
enum { TK_NAME, TK_STREAM, TK_WHEN, TK_AFTER, TK_WAIT, TK_HOST_WAIT, TK_RECORD, TK_COMMON };
#define MAX_TASK_KEYS 32

typedef struct task_keys {
  gf_key_spec spec[MAX_TASK_KEYS];
  int count;
  int kind_key[MAX_TASK_KEYS]; /* kind whose key (or extra key) this is, -1: common */
  int is_extra[MAX_TASK_KEYS];
} task_keys;

static void build_task_keys(task_keys *k) {
  memset(k, 0, sizeof *k);
  static const char *const common[TK_COMMON] = {"name", "stream",    "when",  "after",
                                                "wait", "host_wait", "record"};
  k->count = 0;
  /* The order messages list them: name, the kinds, their extra keys, the rest. */
  k->spec[k->count] = (gf_key_spec){common[TK_NAME], 1, NULL};
  k->is_extra[k->count] = 0;
  k->kind_key[k->count++] = -1;
  for (int i = 0; i < gf_task_kind_count; i++) {
    k->spec[k->count] = (gf_key_spec){gf_task_kinds[i]->name, 0, NULL};
    k->is_extra[k->count] = 0;
    k->kind_key[k->count++] = i;
  }
  for (int i = 0; i < gf_task_kind_count; i++)
    for (const char *const *x = gf_task_kinds[i]->extra_keys; x && *x; x++) {
      k->spec[k->count] = (gf_key_spec){*x, 0, NULL};
      k->is_extra[k->count] = 1;
      k->kind_key[k->count++] = i;
    }
  for (int c = TK_STREAM; c < TK_COMMON; c++) {
    k->spec[k->count] = (gf_key_spec){common[c], 0, NULL};
    k->is_extra[k->count] = 0;
    k->kind_key[k->count++] = -1;
  }
}

/* The index in `k` of common key `c`. */
static int common_key(const task_keys *k, int c) {
  return c == TK_NAME ? 0 : k->count - (TK_COMMON - c);
}

static gf_status load_task(loader *ld, int t, yaml_node_t *node) {
  gf_workflow *wf = ld->wf;
  gf_task *task = &wf->tasks[t];
  task_keys tk;
  build_task_keys(&tk);
  yaml_node_t *keys[MAX_TASK_KEYS] = {NULL}, *values[MAX_TASK_KEYS] = {NULL};
  gf_status status;
  task->loc = gf_load_loc(ld, node);
  ld->task_nodes[t] = node;
  /* Name the task in messages about its keys when the name is readable. */
  char *what = NULL;
  if (node->type == YAML_MAPPING_NODE)
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
      const char *k = gf_load_scalar(gf_load_node(ld, p->key)),
                 *v = gf_load_scalar(gf_load_node(ld, p->value));
      if (k && v && strcmp(k, "name") == 0 && !what && !(what = gf_asprintf("task '%s'", v)))
        return load_oom(ld);
    }
  if (!what && !(what = gf_asprintf("task %d", t))) return load_oom(ld);
  status = gf_load_mapping(ld, node, what, tk.spec, tk.count, NULL, keys, values);
  free(what);
  if (status) return status;

  const char *name;
  if ((status = get_identifier(ld, values[TK_NAME], "task name", &name))) return status;
  for (int i = 0; i < t; i++)
    if (strcmp(wf->tasks[i].name, name) == 0)
      return gf_load_fail(ld, values[TK_NAME], "duplicate task name '%s'", name);
  if (!(task->name = gf_strdup(name))) return load_oom(ld);

  const char *kind_names[MAX_TASK_KEYS];
  for (int i = 0; i < gf_task_kind_count; i++) kind_names[i] = gf_task_kinds[i]->name;
  char *kinds = gf_load_join(kind_names, gf_task_kind_count);
  if (!kinds) return load_oom(ld);
  int kind = -1, kind_at = -1;
  for (int k = 0; k < tk.count && !status; k++) {
    if (!keys[k] || tk.kind_key[k] < 0 || tk.is_extra[k]) continue;
    if (kind >= 0)
      status = gf_load_fail(ld, keys[k],
                            "task '%s' has both '%s' and '%s'; a task is exactly one of: %s", name,
                            gf_task_kinds[kind]->name, gf_task_kinds[tk.kind_key[k]]->name, kinds);
    kind = tk.kind_key[k];
    kind_at = k;
  }
  if (!status && kind < 0)
    status = gf_load_fail(ld, node, "task '%s' does nothing; give it one of: %s", name, kinds);
  free(kinds);
  if (status) return status;
  task->kind = gf_task_kinds[kind];
  gf_task_yaml yaml = {.task_node = node, .value = values[kind_at]};
  int nextra = 0;
  for (int k = 0; k < tk.count; k++) {
    if (!tk.is_extra[k] || tk.kind_key[k] < 0) continue;
    if (tk.kind_key[k] == kind) {
      yaml.extra[nextra++] = values[k];
    } else if (keys[k]) {
      return gf_load_fail(ld, keys[k], "'%s' belongs to %s tasks, not to %s tasks", tk.spec[k].name,
                          gf_task_kinds[tk.kind_key[k]]->name, task->kind->name);
    }
  }
  if ((status = task->kind->load(ld, task, &yaml))) return status;

  yaml_node_t *stream = values[common_key(&tk, TK_STREAM)];
  if (stream && (status = get_stream_ref(ld, stream, &task->stream))) return status;
  /* host tasks run in issue order: they need no stream */
  if (!stream && !(task->kind->traits & GF_KIND_ON_HOST) &&
      (wf->schedule->flags & GF_SCHED_USER_STREAMS))
    return gf_load_fail(ld, node, "task '%s' has no stream; schedule %s needs one for every task",
                        name, wf->schedule->name);
  yaml_node_t *when = values[common_key(&tk, TK_WHEN)];
  if (when) {
    const char *text = gf_load_scalar(when);
    if (!text || (!*text && !gf_load_is_quoted(when)))
      return gf_load_fail_type(ld, when, "an expression");
    if ((status = gf_load_expr(ld, when, text, 0, GF_NAMES_PARAMS | GF_NAMES_GRID, 1, &task->when)))
      return status;
  }
  yaml_node_t *wait = values[common_key(&tk, TK_WAIT)];
  yaml_node_t *host_wait = values[common_key(&tk, TK_HOST_WAIT)];
  yaml_node_t *record = values[common_key(&tk, TK_RECORD)];
  if (wait && (status = get_event_refs(ld, wait, &task->wait, &task->nwait))) return status;
  if (host_wait && (status = get_event_refs(ld, host_wait, &task->host_wait, &task->nhost_wait)))
    return status;
  if (record && (status = get_group_ref(ld, record, wf->event_groups, wf->nevent_groups, "event",
                                        &task->record)))
    return status;
  ld->after_nodes[t] = values[common_key(&tk, TK_AFTER)];
  return GF_OK;
}

/* `TASK`, `TASK@n` or `TASK@n-K`, once every task's name is known. */
static gf_status load_after(loader *ld, int t, yaml_node_t *node) {
  gf_workflow *wf = ld->wf;
  gf_task *task = &wf->tasks[t];
  if (node->type != YAML_SEQUENCE_NODE) return gf_load_fail_type(ld, node, "a sequence of tasks");
  int count = (int)(node->data.sequence.items.top - node->data.sequence.items.start);
  task->after = gf_calloc((size_t)count, sizeof *task->after);
  if (!task->after) return load_oom(ld);
  for (int i = 0; i < count; i++) {
    yaml_node_t *item = gf_load_node(ld, node->data.sequence.items.start[i]);
    const char *s = gf_load_scalar(item);
    if (!s) return gf_load_fail_type(ld, item, "TASK, TASK@n or TASK@n-K");
    size_t name_len = identifier_length(s);
    int64_t lag = 0;
    const char *at = s + name_len;
    int ok = name_len > 0 && (!*at || *at == '@');
    if (ok && *at == '@') {
      if (strcmp(at, "@n") == 0)
        lag = 0;
      else if (strncmp(at, "@n-", 3) == 0 && at[3] >= '0' && at[3] <= '9' &&
               parse_int_text(at + 3, &lag) && lag >= 1 && lag <= INT32_MAX)
        ;
      else
        ok = 0;
    }
    if (!ok)
      return gf_load_fail(ld, item, "expected TASK, TASK@n or TASK@n-K (K >= 1), got '%s'", s);
    int dep = 0;
    while (dep < wf->ntasks && !name_is(s, name_len, wf->tasks[dep].name)) dep++;
    if (dep == wf->ntasks)
      return gf_load_fail_text(ld, item, 0, "unknown task '%.*s' in after", (int)name_len, s);
    if (lag == 0 && dep == t)
      return gf_load_fail_text(ld, item, 0, "task '%s' cannot follow itself in the same step",
                               task->name);
    task->after[i] = (gf_dep){dep, (int)lag, gf_load_text_loc(ld, item, 0)};
    task->nafter = i + 1;
  }
  return GF_OK;
}

static gf_status load_steps(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_status status = gf_load_integer(ld, value, GF_NAMES_PARAMS | GF_NAMES_GRID, &ld->wf->steps);
  if (status) return status;
  if (ld->wf->steps < 0 || ld->wf->steps > (int64_t)MAX_STEPS)
    return gf_load_fail(ld, value, "steps must be between 0 and 10^12, got %lld",
                        (long long)ld->wf->steps);
  return GF_OK;
}

static gf_status load_tasks(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  if (value->type != YAML_SEQUENCE_NODE) return gf_load_fail_type(ld, value, "a sequence of tasks");
  int count = (int)(value->data.sequence.items.top - value->data.sequence.items.start);
  if (count == 0) return gf_load_fail(ld, value, "tasks is empty; a loop needs at least one task");
  if (count > MAX_TASKS)
    return gf_load_fail(ld, value, "too many tasks: %d, at most %d", count, MAX_TASKS);
  wf->tasks = gf_calloc((size_t)count, sizeof *wf->tasks);
  ld->task_nodes = gf_calloc((size_t)count, sizeof *ld->task_nodes);
  ld->after_nodes = gf_calloc((size_t)count, sizeof *ld->after_nodes);
  if (!wf->tasks || !ld->task_nodes || !ld->after_nodes) return load_oom(ld);
  wf->ntasks = count;
  for (int t = 0; t < count; t++) {
    gf_task *task = &wf->tasks[t];
    task->stream.group = -1;
    task->record.group = -1;
  }
  gf_status status;
  for (int t = 0; t < count; t++)
    if ((status = load_task(ld, t, gf_load_node(ld, value->data.sequence.items.start[t]))))
      return status;
  for (int t = 0; t < count; t++)
    if (ld->after_nodes[t] && (status = load_after(ld, t, ld->after_nodes[t]))) return status;
  return GF_OK;
}

static const gf_key_spec loop_keys[] = {
    {"steps", 1, load_steps},
    {"tasks", 1, load_tasks},
};

static gf_status load_loop(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  return gf_load_mapping(ld, value, "loop", loop_keys, COUNT_OF(loop_keys), NULL, NULL, NULL);
}

/* ---- limits, check ----------------------------------------------------------- */

/* An integer, or a constant expression such as 64 * 2^20, in [lo, hi]. */
static gf_status get_count(loader *ld, const yaml_node_t *node, const char *what, int64_t lo,
                           int64_t hi, int64_t *out) {
  gf_status status = gf_load_integer(ld, node, GF_NAMES_PARAMS | GF_NAMES_GRID, out);
  if (status) return status;
  if (*out < lo || *out > hi)
    return gf_load_fail(ld, node, "%s must be between %lld and %lld, got %lld", what, (long long)lo,
                        (long long)hi, (long long)*out);
  return GF_OK;
}

static gf_status load_limits_lua_memory(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                        void *target) {
  (void)key, (void)target;
  int64_t bytes = 0;
  gf_status status = get_count(ld, value, "lua_memory", MIN_LUA_MEMORY, MAX_LUA_MEMORY, &bytes);
  ld->wf->lua_limits.memory_bytes = (size_t)bytes;
  return status;
}

static gf_status load_limits_lua_instructions(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                              void *target) {
  (void)key, (void)target;
  int64_t count = 0;
  gf_status status =
      get_count(ld, value, "lua_instructions", MIN_LUA_INSTRUCTIONS, MAX_LUA_INSTRUCTIONS, &count);
  ld->wf->lua_limits.instructions = (uint64_t)count;
  return status;
}

static const gf_key_spec limits_keys[] = {
    {"lua_memory", 0, load_limits_lua_memory},
    {"lua_instructions", 0, load_limits_lua_instructions},
};

static gf_status load_limits(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  return gf_load_mapping(ld, value, "limits", limits_keys, COUNT_OF(limits_keys), NULL, NULL, NULL);
}

static gf_status load_check_every(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  return get_count(ld, value, "every", 0, (int64_t)MAX_STEPS, &ld->wf->check.every);
}

static gf_status load_check_fields(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_workflow *wf = ld->wf;
  gf_check *check = &wf->check;
  if (value->type != YAML_SEQUENCE_NODE)
    return gf_load_fail_type(ld, value, "a sequence of field names");
  int count = (int)(value->data.sequence.items.top - value->data.sequence.items.start);
  if (count == 0)
    return gf_load_fail(ld, value, "check.fields is empty; leave it out to check every field");
  check->fields = gf_calloc((size_t)count, sizeof *check->fields);
  if (!check->fields) return load_oom(ld);
  for (int i = 0; i < count; i++) {
    yaml_node_t *item = gf_load_node(ld, value->data.sequence.items.start[i]);
    const char *name = gf_load_scalar(item);
    if (!name) return gf_load_fail_type(ld, item, "a field name");
    int f = find_field(wf, name, strlen(name));
    if (f < 0) {
      char *list = join_member_names(wf->fields, sizeof(gf_field), wf->nfields);
      if (!list) return load_oom(ld);
      gf_status status =
          gf_load_fail(ld, item, "unknown field '%s' in check; fields: %s", name, list);
      free(list);
      return status;
    }
    for (int j = 0; j < check->nfields; j++)
      if (check->fields[j] == f)
        return gf_load_fail(ld, item, "field '%s' is listed twice in check", name);
    if (wf->fields[f].scratch)
      return gf_load_fail(ld, item,
                          "field '%s' is scratch: it holds nothing between steps, so the check "
                          "cannot scan it",
                          name);
    check->fields[check->nfields++] = f;
  }
  return GF_OK;
}

static gf_status load_check_finite(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  return get_bool(ld, value, &ld->wf->check.finite);
}

static gf_status load_check_max_abs(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                    void *target) {
  (void)key, (void)target;
  double bound = 0;
  gf_status status = get_number(ld, value, GF_NAMES_PARAMS | GF_NAMES_GRID, &bound);
  if (status) return status;
  if (!(bound > 0)) return gf_load_fail(ld, value, "max_abs must be > 0, got %g", bound);
  ld->wf->check.max_abs = bound;
  return GF_OK;
}

static const gf_key_spec check_keys[] = {
    {"every", 0, load_check_every},
    {"fields", 0, load_check_fields},
    {"finite", 0, load_check_finite},
    {"max_abs", 0, load_check_max_abs},
};

static gf_status load_check(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)target;
  gf_workflow *wf = ld->wf;
  gf_check *check = &wf->check;
  check->every = 1; /* every step unless told: a blow-up is caught where it starts */
  check->finite = 1;
  check->max_abs = INFINITY;
  check->loc = gf_load_loc(ld, key);
  if (value->type == YAML_SCALAR_NODE) { /* `check: off` */
    int on = 0;
    if (get_bool(ld, value, &on) != GF_OK || on)
      return gf_load_fail(ld, value, "check takes a mapping of its keys, or off");
    check->every = 0;
    return GF_OK;
  }
  gf_status status =
      gf_load_mapping(ld, value, "check", check_keys, COUNT_OF(check_keys), NULL, NULL, NULL);
  if (status) return status;
  if (!check->finite && isinf(check->max_abs))
    return gf_load_fail(ld, key,
                        "check has finite: false and no max_abs, so it would check nothing");
  if (!check->fields) {
    check->fields = gf_calloc((size_t)wf->nfields, sizeof *check->fields);
    if (!check->fields) return load_oom(ld);
    for (int f = 0; f < wf->nfields; f++)
      if (!wf->fields[f].scratch) check->fields[check->nfields++] = f;
  }
  return GF_OK;
}

static gf_status load_checkpoint_every(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                       void *target) {
  (void)key, (void)target;
  return get_count(ld, value, "every", 0, (int64_t)MAX_STEPS, &ld->wf->checkpoint_every);
}

static const gf_key_spec checkpoint_keys[] = {
    {"every", 1, load_checkpoint_every},
};

/* `checkpoint: {every: K}`: checkpoint.c writes one every K steps. */
static gf_status load_checkpoint(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  return gf_load_mapping(ld, value, "checkpoint", checkpoint_keys, COUNT_OF(checkpoint_keys), NULL,
                         NULL, NULL);
}

/* No `check:` block: every instance of every field a task writes, for NaN
 * and Inf, every GF_CHECK_DEFAULT_EVERY steps, read lagged. */
static gf_status default_check(loader *ld) {
  gf_workflow *wf = ld->wf;
  gf_check *check = &wf->check;
  if (check->loc.line) return GF_OK; /* the file (or --set) said */
  check->fields = gf_calloc((size_t)wf->nfields + 1, sizeof *check->fields);
  if (!check->fields) return load_oom(ld);
  for (int f = 0; f < wf->nfields; f++) {
    int written = wf->fields[f].scratch ? -1 : 0; /* a scratch field is not kept: not checked */
    for (int t = 0; t < wf->ntasks && !written; t++)
      for (int a = 0; a < wf->tasks[t].naccess; a++)
        if (wf->tasks[t].access[a].ref.field == f &&
            wf->tasks[t].access[a].access != GF_ACCESS_READ)
          written = 1;
    if (written > 0) check->fields[check->nfields++] = f;
  }
  check->every = check->nfields ? GF_CHECK_DEFAULT_EVERY : 0;
  check->finite = 1;
  check->max_abs = INFINITY;
  check->lagged = 1;
  return GF_OK;
}

/* ---- decomposition and exchange (MPI) --------------------------------------- */

/* `decomposition: [P0, P1]` (ranks along each grid axis) or `auto`. */
static gf_status load_decomposition(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                    void *target) {
  (void)key, (void)target;
  gf_decomposition *dc = &ld->wf->decomp;
  dc->loc = gf_load_loc(ld, value);
  const char *s = gf_load_scalar(value);
  if (s && strcmp(s, "auto") == 0) return GF_OK;
  if (value->type != YAML_SEQUENCE_NODE)
    return gf_load_fail_type(ld, value, "auto or a sequence of rank counts, one per grid axis");
  int count = (int)(value->data.sequence.items.top - value->data.sequence.items.start);
  if (count != ld->wf->ndim)
    return gf_load_fail(ld, value, "decomposition has %d entr%s, the grid has %d axes", count,
                        count == 1 ? "y" : "ies", ld->wf->ndim);
  for (int d = 0; d < count; d++) {
    int64_t ranks = 0;
    gf_status status = get_int(ld, gf_load_node(ld, value->data.sequence.items.start[d]),
                               "ranks along an axis", 1, 65536, &ranks);
    if (status) return status;
    dc->dims[d] = (int)ranks;
  }
  return GF_OK;
}

static gf_status load_exchange_corners(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                       void *target) {
  (void)key, (void)target;
  return get_bool(ld, value, &ld->wf->decomp.corners);
}

static gf_status load_exchange_overlap(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                       void *target) {
  (void)key, (void)target;
  return get_bool(ld, value, &ld->wf->decomp.overlap);
}

const char *const gf_transport_names[2] = {"mpi", "channel"};

/* Whether the run can use a channel is judged once the ranks and the
 * backend are known (gf_halo_check_transport). */
static gf_status load_exchange_transport(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                         void *target) {
  (void)key, (void)target;
  ld->wf->decomp.transport_loc = gf_load_loc(ld, value);
  return get_choice(ld, value, "transport", gf_transport_names, 2, &ld->wf->decomp.transport);
}

const char *const gf_protocol_names[3] = {"auto", "packets", "signals"};

static gf_status load_exchange_protocol(loader *ld, yaml_node_t *key, yaml_node_t *value,
                                        void *target) {
  (void)key, (void)target;
  ld->wf->decomp.protocol_loc = gf_load_loc(ld, value);
  return get_choice(ld, value, "protocol", gf_protocol_names, 3, &ld->wf->decomp.protocol);
}

static const gf_key_spec exchange_keys[] = {
    {"corners", 0, load_exchange_corners},
    {"overlap", 0, load_exchange_overlap},
    {"transport", 0, load_exchange_transport},
    {"protocol", 0, load_exchange_protocol},
};

static gf_status load_exchange(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target) {
  (void)key, (void)target;
  gf_decomposition *dc = &ld->wf->decomp;
  dc->exchange_loc = gf_load_loc(ld, value);
  gf_status status = gf_load_mapping(ld, value, "exchange", exchange_keys, COUNT_OF(exchange_keys),
                                     NULL, NULL, NULL);
  if (status == GF_OK && dc->protocol != GF_PROTOCOL_AUTO && dc->transport != GF_TRANSPORT_CHANNEL)
    return gf_diag_at(ld->diag, dc->protocol_loc, GF_INVALID,
                      "exchange.protocol %s is how strips travel through a channel; this "
                      "exchange's transport is %s (add transport: channel, or drop protocol)",
                      gf_protocol_names[dc->protocol], gf_transport_names[dc->transport]);
  return status;
}

/* In the order they load: each may use what the ones above it defined. */
static const gf_key_spec top_keys[] = {
    {"gflow", 1, load_version},
    {"name", 1, load_name},
    {"grid", 1, load_grid},
    {"hooks", 0, load_hooks},
    {"params", 0, load_params},
    {"memory", 0, load_memory},
    {"fields", 1, load_fields},
    {"streams", 0, load_streams},
    {"events", 0, load_events},
    {"schedule", 0, load_schedule},
    {"loop", 1, load_loop},
    {"limits", 0, load_limits},
    {"check", 0, load_check},
    {"checkpoint", 0, load_checkpoint},
    {"decomposition", 0, load_decomposition},
    {"exchange", 0, load_exchange},
};

/* ---- Lua -------------------------------------------------------------------- */

/* Loads the hook files into a Lua state and finds each hook's function:
 * the state becomes the run's evaluation object (ld->lua, ld->hook_ids). */
static gf_status load_lua(loader *ld) {
  gf_workflow *wf = ld->wf;
  gf_status status;
  const gf_lua_limits *caller = ld->lua_limits;
  if (caller && caller->memory_bytes) wf->lua_limits.memory_bytes = caller->memory_bytes;
  if (caller && caller->instructions) wf->lua_limits.instructions = caller->instructions;
  if (wf->nhooks == 0) return GF_OK;
  if ((status = gf_lua_open(&ld->lua, &wf->lua_limits, ld->diag))) return status;
  ld->hook_ids = gf_calloc((size_t)wf->nhooks, sizeof(int));
  const char **names = gf_calloc((size_t)wf->nparams, sizeof *names);
  double *values = gf_calloc((size_t)wf->nparams, sizeof *values);
  if (!ld->hook_ids || !names || !values) {
    free(names);
    free(values);
    return load_oom(ld);
  }
  for (int i = 0; i < wf->nparams; i++) {
    names[i] = wf->params[i].name;
    values[i] = wf->params[i].value;
  }
  gf_lua_set_params(ld->lua, names, values, wf->nparams);
  free(names);
  free(values);
  for (int h = 0; h < wf->nhooks; h++) {
    int loaded = 0;
    for (int e = 0; e < h && !loaded; e++)
      loaded = strcmp(wf->hooks[e].path, wf->hooks[h].path) == 0;
    if (loaded) continue;
    yaml_node_t *node = ld->hook_nodes[h].lua;
    status = gf_lua_load_file(ld->lua, wf->hooks[h].path, ld->diag, gf_load_text_loc(ld, node, 0));
    if (status) return status;
  }
  for (int h = 0; h < wf->nhooks; h++) {
    yaml_node_t *node = ld->hook_nodes[h].function;
    gf_loc loc = node ? gf_load_text_loc(ld, node, 0) : wf->hooks[h].loc;
    status = gf_lua_find(ld->lua, wf->hooks[h].function, &ld->hook_ids[h], ld->diag, loc);
    if (status) return status;
  }
  /* A file whose hooks are all pure has no state between calls to save: its
   * save_state() says that one of them keeps some after all. (A file that
   * also gives a hook not declared pure may define it, for that one.) */
  for (int h = 0; h < wf->nhooks; h++) {
    int first = 1, all_pure = 1;
    for (int e = 0; e < wf->nhooks; e++)
      if (strcmp(wf->hooks[e].path, wf->hooks[h].path) == 0) {
        first &= e >= h;
        all_pure &= wf->hooks[e].pure;
      }
    if (first && all_pure && gf_lua_state_defined_in(ld->lua, wf->hooks[h].path))
      return gf_load_fail(ld, ld->hook_nodes[h].pure,
                          "hook '%s' is declared pure, but %s defines save_state(), which is for "
                          "hooks that keep state between calls; a pure hook keeps none",
                          wf->hooks[h].name, wf->hooks[h].path);
  }
  return GF_OK;
}

/* ---- YAML syntax and overrides ------------------------------------------------ */

static const struct {
  const char *problem;
  const char *hint;
} syntax_hints[] = {
    {"did not find expected key", "check the indentation of this line and the one above"},
    {"mapping values are not allowed in this context",
     "a value containing ': ' needs quotes, or a key is indented too far"},
    {"did not find expected node content", "a value is missing, or a bracket is not closed"},
    {"found unexpected end of stream", "a quote or bracket is not closed"},
};

/* Parses `text` as events once, before the document is built, to report
 * libyaml's errors with hints and to refuse anchors, aliases and extra
 * documents. Columns are moved right by `col_offset` (an override's value);
 * `source` is the text's diag source (0: the workflow file). */
static gf_status check_yaml_events(loader *ld, const char *text, size_t len, int col_offset,
                                   int source) {
  gf_diag *diag = ld->diag;
  yaml_parser_t parser;
  yaml_event_t event;
  gf_status status = GF_OK;
  int documents = 0, have_anchor = 0, depth = 0;
  yaml_mark_t first_anchor = {0, 0, 0};
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  for (;;) {
    if (!yaml_parser_parse(&parser, &event)) {
      gf_loc loc = {(int)parser.problem_mark.line + 1,
                    (int)parser.problem_mark.column + 1 + col_offset, source};
      /* An override is one line: libyaml's end of stream sits on a line after it. */
      if (col_offset > 0 && loc.line > 1) loc = (gf_loc){1, (int)len + 1 + col_offset, source};
      const char *problem = parser.problem ? parser.problem : "invalid YAML";
      const char *hint = NULL;
      size_t at = parser.problem_mark.index;
      if (at < len && text[at] == '\t') hint = "tabs are not allowed for indentation";
      for (int i = 0; !hint && i < COUNT_OF(syntax_hints); i++)
        if (strcmp(problem, syntax_hints[i].problem) == 0) hint = syntax_hints[i].hint;
      if (hint)
        gf_diag_at(diag, loc, GF_INVALID, "%s; %s", problem, hint);
      else
        gf_diag_at(diag, loc, GF_INVALID, "%s", problem);
      status = GF_INVALID;
      break;
    }
    yaml_mark_t mark = event.start_mark;
    const char *refused = NULL;
    const yaml_char_t *anchor = NULL;
    /* The document API builds every node in memory: count them first. */
    if ((event.type == YAML_SCALAR_EVENT || event.type == YAML_SEQUENCE_START_EVENT ||
         event.type == YAML_MAPPING_START_EVENT) &&
        ++ld->nodes > GF_MAX_YAML_NODES)
      refused = "the workflow has more than 100000 YAML nodes";
    switch (event.type) {
      case YAML_ALIAS_EVENT:
        refused = "aliases are not supported";
        break;
      case YAML_SCALAR_EVENT:
        anchor = event.data.scalar.anchor;
        break;
      case YAML_SEQUENCE_START_EVENT:
        anchor = event.data.sequence_start.anchor;
        if (++depth > MAX_YAML_DEPTH) refused = "the YAML is nested too deeply";
        break;
      case YAML_MAPPING_START_EVENT:
        anchor = event.data.mapping_start.anchor;
        if (++depth > MAX_YAML_DEPTH) refused = "the YAML is nested too deeply";
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        depth--;
        break;
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > 1) refused = "a workflow holds one YAML document, this is a second";
        break;
      default:
        break;
    }
    /* An alias is the real danger (expansion); report it over its anchor. */
    if (anchor && !have_anchor) {
      first_anchor = mark;
      have_anchor = 1;
    }
    int done = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
    if (!refused && done && have_anchor) {
      refused = "anchors and aliases are not supported";
      mark = first_anchor;
    }
    if (refused) {
      status =
          gf_diag_at(diag, (gf_loc){(int)mark.line + 1, (int)mark.column + 1 + col_offset, source},
                     GF_INVALID, "%s", refused);
      break;
    }
    if (done) break;
  }
  yaml_parser_delete(&parser);
  return status;
}

/* Copies node `id` of `from` into the workflow document; returns its new id.
 * Marks become columns in the override's text. */
static int graft_node(loader *ld, yaml_document_t *from, int id, int col_offset) {
  yaml_node_t *src = yaml_document_get_node(from, id);
  yaml_mark_t mark = src->start_mark;
  int copy = 0;
  switch (src->type) {
    case YAML_SCALAR_NODE:
      copy = yaml_document_add_scalar(&ld->doc, src->tag, src->data.scalar.value,
                                      (int)src->data.scalar.length, src->data.scalar.style);
      break;
    case YAML_SEQUENCE_NODE:
      copy = yaml_document_add_sequence(&ld->doc, src->tag, src->data.sequence.style);
      for (int i = 0; copy && src->data.sequence.items.start + i < src->data.sequence.items.top;
           i++) {
        int item = graft_node(ld, from, src->data.sequence.items.start[i], col_offset);
        if (!item || !yaml_document_append_sequence_item(&ld->doc, copy, item)) return 0;
        src = yaml_document_get_node(from, id);
      }
      break;
    case YAML_MAPPING_NODE:
      copy = yaml_document_add_mapping(&ld->doc, src->tag, src->data.mapping.style);
      for (int i = 0; copy && src->data.mapping.pairs.start + i < src->data.mapping.pairs.top;
           i++) {
        int key = graft_node(ld, from, src->data.mapping.pairs.start[i].key, col_offset);
        int value = graft_node(ld, from, src->data.mapping.pairs.start[i].value, col_offset);
        if (!key || !value || !yaml_document_append_mapping_pair(&ld->doc, copy, key, value))
          return 0;
      }
      break;
    default:
      return 0;
  }
  if (copy) {
    yaml_node_t *node = gf_load_node(ld, copy);
    node->start_mark.line = 0;
    node->start_mark.column = mark.column + (size_t)col_offset;
    node->end_mark = node->start_mark;
  }
  return copy;
}

__attribute__((format(printf, 4, 5))) gf_status fail_override(loader *ld, override_src *src,
                                                              int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gf_status status = vfail_loc(ld, (gf_loc){1, col + 1, src->source}, fmt, ap);
  va_end(ap);
  return status;
}

/* Applies `--set key=value` to the document. */
static gf_status apply_override(loader *ld, override_src *src, const gf_override *ov) {
  const char *key = ov->key;
  size_t key_len = strlen(key);
  int value_col = (int)key_len + 1;
  src->first_node = (int)(ld->doc.nodes.top - ld->doc.nodes.start) + 1;
  src->last_node = src->first_node - 1;
  gf_status status = check_yaml_events(ld, ov->value, strlen(ov->value), value_col, src->source);
  if (status) return status;

  /* Walk the path to the parent of the last component. */
  int parent = 1, start = 0;
  char *parent_path = gf_strdup("");
  if (!parent_path) return load_oom(ld);
  for (;;) {
    size_t end = (size_t)start;
    while (end < key_len && key[end] != '.') end++;
    if (end == (size_t)start) {
      free(parent_path);
      return fail_override(ld, src, start, "empty name in the key '%s'", key);
    }
    if (end == key_len) break;
    yaml_node_t *node = gf_load_node(ld, parent);
    int next = 0;
    char *part = gf_strndup(key + start, end - (size_t)start);
    if (!part) {
      free(parent_path);
      return load_oom(ld);
    }
    if (node->type == YAML_MAPPING_NODE) {
      for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
           !next && p < node->data.mapping.pairs.top; p++) {
        const char *k = gf_load_scalar(gf_load_node(ld, p->key));
        if (k && strcmp(k, part) == 0) next = p->value;
      }
    } else if (node->type == YAML_SEQUENCE_NODE) {
      int64_t i = 0;
      int count = (int)(node->data.sequence.items.top - node->data.sequence.items.start);
      if (parse_int_text(part, &i) && i >= 0 && i < count)
        next = node->data.sequence.items.start[i];
    }
    if (!next && node->type == YAML_MAPPING_NODE) {
      /* A mapping missing on the way is created (`--set check.every=5` on a
       * file without `check:`); the schema then judges its key as any other. */
      int key_id = yaml_document_add_scalar(&ld->doc, NULL, (yaml_char_t *)part, -1,
                                            YAML_PLAIN_SCALAR_STYLE);
      int map_id = key_id ? yaml_document_add_mapping(&ld->doc, NULL, YAML_BLOCK_MAPPING_STYLE) : 0;
      if (map_id && yaml_document_append_mapping_pair(&ld->doc, parent, key_id, map_id)) {
        yaml_mark_t mark = {0, 0, (size_t)start};
        gf_load_node(ld, key_id)->start_mark = gf_load_node(ld, key_id)->end_mark = mark;
        gf_load_node(ld, map_id)->start_mark = gf_load_node(ld, map_id)->end_mark = mark;
        next = map_id;
      }
    }
    if (!next) {
      status = fail_override(ld, src, start, "no key '%s' in %s to set", part,
                             parent_path[0] ? parent_path : "the workflow");
      free(part);
      free(parent_path);
      return status;
    }
    char *longer = parent_path[0] ? gf_asprintf("%s.%s", parent_path, part) : gf_strdup(part);
    free(parent_path);
    free(part);
    if (!longer) return load_oom(ld);
    parent_path = longer;
    parent = next;
    start = (int)end + 1;
  }

  /* The value, grafted; an empty value is an empty scalar. */
  yaml_parser_t parser;
  yaml_document_t value_doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)ov->value, strlen(ov->value));
  int value_id = 0;
  if (yaml_parser_load(&parser, &value_doc)) {
    if (yaml_document_get_root_node(&value_doc))
      value_id = graft_node(ld, &value_doc, 1, value_col);
    else
      value_id =
          yaml_document_add_scalar(&ld->doc, NULL, (yaml_char_t *)"", 0, YAML_PLAIN_SCALAR_STYLE);
    if (value_id && !yaml_document_get_root_node(&value_doc))
      gf_load_node(ld, value_id)->start_mark.column = (size_t)value_col;
    yaml_document_delete(&value_doc);
  }
  yaml_parser_delete(&parser);
  if (!value_id) {
    free(parent_path);
    return fail_override(ld, src, value_col, "cannot read the value '%s'", ov->value);
  }

  const char *last = key + start;
  yaml_node_t *node = gf_load_node(ld, parent);
  status = GF_OK;
  if (node->type == YAML_MAPPING_NODE) {
    yaml_node_pair_t *pair = NULL;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
         !pair && p < node->data.mapping.pairs.top; p++) {
      const char *k = gf_load_scalar(gf_load_node(ld, p->key));
      if (k && strcmp(k, last) == 0) pair = p;
    }
    if (pair) {
      pair->value = value_id;
    } else {
      int key_id = yaml_document_add_scalar(&ld->doc, NULL, (yaml_char_t *)last, -1,
                                            YAML_PLAIN_SCALAR_STYLE);
      if (!key_id) { /* libyaml refuses a key that is not UTF-8 */
        free(parent_path);
        return fail_override(ld, src, start, "the key '%s' is not valid UTF-8", last);
      }
      gf_load_node(ld, key_id)->start_mark.line = 0;
      gf_load_node(ld, key_id)->start_mark.column = (size_t)start;
      yaml_document_append_mapping_pair(&ld->doc, parent, key_id, value_id);
    }
  } else if (node->type == YAML_SEQUENCE_NODE) {
    int64_t i = 0;
    int count = (int)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (parse_int_text(last, &i) && i >= 0 && i < count)
      node->data.sequence.items.start[i] = value_id;
    else
      status = fail_override(ld, src, start, "no entry '%s' in %s to set (it has %d)", last,
                             parent_path[0] ? parent_path : "the workflow", count);
  } else {
    status = fail_override(ld, src, start, "no key '%s' in %s to set", last,
                           parent_path[0] ? parent_path : "the workflow");
  }
  free(parent_path);
  src->last_node = (int)(ld->doc.nodes.top - ld->doc.nodes.start);
  return status;
}

/* ---- resolved YAML ------------------------------------------------------------ */

static int emit_to_text(void *data, unsigned char *buffer, size_t size) {
  gf_text *sb = data;
  gf_text_append(sb, (const char *)buffer, size);
  return !sb->failed;
}

/* Replaces each parameter's value with its number and emits the document,
 * which the emitter consumes. NULL on failure, with *out_of_memory set when
 * that was the cause. */
static char *emit_resolved(loader *ld, int *out_of_memory) {
  if (ld->params_node) {
    int params_id = node_id(ld, ld->params_node);
    for (int i = 0; i < ld->wf->nparams; i++) {
      char number[64];
      snprintf(number, sizeof number, "%.17g", ld->wf->params[i].value);
      int value = yaml_document_add_scalar(&ld->doc, NULL, (yaml_char_t *)number, -1,
                                           YAML_PLAIN_SCALAR_STYLE);
      if (value) gf_load_node(ld, params_id)->data.mapping.pairs.start[i].value = value;
    }
  }
  gf_text sb = {0};
  gf_text_puts(&sb, "");
  yaml_emitter_t emitter;
  yaml_emitter_initialize(&emitter);
  yaml_emitter_set_output(&emitter, emit_to_text, &sb);
  yaml_emitter_set_unicode(&emitter, 1);
  yaml_emitter_set_width(&emitter, 100);
  int ok = yaml_emitter_open(&emitter);
  ok = yaml_emitter_dump(&emitter, &ld->doc) && ok;
  ld->have_doc = 0; /* the emitter has freed it */
  ok = ok && yaml_emitter_close(&emitter) && yaml_emitter_flush(&emitter);
  yaml_emitter_delete(&emitter);
  if (ok && sb.len && sb.data[sb.len - 1] != '\n') gf_text_puts(&sb, "\n");
  *out_of_memory = sb.failed;
  if (!ok || sb.failed) {
    free(sb.data);
    return NULL;
  }
  return sb.data;
}

/* ---- load ----------------------------------------------------------------------- */

/* Output staging, from the budget (memory.staging; default 256 MiB, or two
 * of the largest planes when those are more): each file's batch (its
 * `batch:`, else enough planes for a copy of STAGING_COPY bytes, at most a
 * quarter of the budget's planes and MAX_BATCH), then as many buffers of the
 * largest batch as the budget holds, no more than the batches the outputs
 * write. The pinned memory never exceeds the budget; a budget that holds no
 * batch is refused (a plane is not copied in pieces). */
#define STAGING_DEFAULT ((int64_t)256 << 20)
#define STAGING_COPY ((int64_t)4 << 20)
#define MAX_BATCH 64

/* As many staging buffers of the largest batch as the budget holds, no
 * more than the batches the outputs write (the batches fit the budget). */
static void count_staging(gf_workflow *wf) {
  int64_t buffer = 1, batches = 0;
  for (int f = 0; f < wf->nfiles; f++) {
    const gf_file *file = &wf->files[f];
    if ((int64_t)file->plane_bytes * file->batch > buffer)
      buffer = (int64_t)file->plane_bytes * file->batch;
    batches += (file->planes + file->batch - 1) / file->batch;
  }
  int64_t count = wf->staging_budget / buffer;
  if (count > batches) count = batches;
  if (count > 65536) count = 65536;
  wf->staging = count < 1 ? 1 : (int)count;
}

static gf_status plan_staging(loader *ld) {
  gf_workflow *wf = ld->wf;
  int64_t plane = 0;
  int largest = -1;
  for (int f = 0; f < wf->nfiles; f++)
    if ((int64_t)wf->files[f].plane_bytes > plane) {
      plane = (int64_t)wf->files[f].plane_bytes;
      largest = f;
    }
  if (largest < 0) {
    wf->staging = 0;
    if (!wf->staging_budget) wf->staging_budget = STAGING_DEFAULT;
    return GF_OK;
  }
  yaml_node_t *at = ld->staging_node ? ld->staging_node : ld->task_nodes[wf->files[largest].task];
  if (ld->staging_planes && __builtin_mul_overflow(plane, ld->staging_planes, &wf->staging_budget))
    wf->staging_budget = INT64_MAX;
  if (!ld->staging_node)
    wf->staging_budget = plane <= STAGING_DEFAULT / 2 ? STAGING_DEFAULT
                         : plane <= INT64_MAX / 2     ? 2 * plane
                                                      : INT64_MAX;
  if (wf->staging_budget > MAX_FIELD_BYTES)
    return gf_load_fail(ld, at,
                        "the output staging of %lld planes of %lld bytes each is more than 2^62 "
                        "bytes; lower memory.staging",
                        (long long)(ld->staging_planes ? ld->staging_planes : 2), (long long)plane);
  for (int f = 0; f < wf->nfiles; f++) {
    gf_file *file = &wf->files[f];
    int64_t p = (int64_t)file->plane_bytes, fit = wf->staging_budget / p;
    if (!file->batch) {
      int64_t k = (STAGING_COPY + p - 1) / p;
      if (k > fit / 4) k = fit / 4;
      if (k > MAX_BATCH) k = MAX_BATCH;
      if (k > file->planes) k = file->planes;
      file->batch = file->image || k < 1 ? 1 : (int)k;
      file->batch_chosen = 1;
    }
    if (file->batch > fit) {
      char b[32], q[32];
      gf_format_bytes((double)wf->staging_budget, b, sizeof b);
      gf_format_bytes((double)p * file->batch, q, sizeof q);
      return gf_load_fail(
          ld, ld->staging_node ? at : ld->task_nodes[file->task],
          "the output staging budget (%s) holds no batch of '%s' (%d plane%s, "
          "%s); raise memory.staging%s",
          b, file->name, file->batch, file->batch == 1 ? "" : "s", q,
          file->batch > 1 ? " or lower the output's batch" : " (a plane is not copied in pieces)");
    }
  }
  count_staging(wf);
  return GF_OK;
}

int gf_workflow_stage_on_host(gf_workflow *wf) {
  int changed = 0;
  for (int f = 0; f < wf->nfiles; f++) { /* a batch gflow chose: none */
    gf_file *file = &wf->files[f];
    if (!file->batch_chosen || file->from_ring || file->batch <= 1) continue;
    file->batch = 1;
    changed = 1;
  }
  if (changed) count_staging(wf);
  /* A batch given is staged directly. Each direct file holds a staging
   * buffer through its open batch, so they are no more than the buffers,
   * and fewer by one when another file (a plane at a time, from a ring, or
   * batched through a ring where direct files would hold every buffer)
   * takes one at each of its copies: a buffer must free itself without the
   * loop going on. */
  int others = 0, batched = 0;
  for (int f = 0; f < wf->nfiles; f++) {
    int single = wf->files[f].batch <= 1 || wf->files[f].from_ring;
    others |= single;
    batched += !single;
  }
  int room = batched + others <= wf->staging ? batched : wf->staging - 1;
  for (int f = 0; f < wf->nfiles; f++) {
    gf_file *file = &wf->files[f];
    if (file->batch <= 1 || file->from_ring || file->direct || room <= 0) continue;
    file->direct = changed = 1;
    room--;
  }
  return changed;
}

size_t gf_workflow_plane_bytes(const gf_workflow *wf) {
  size_t plane = 0;
  for (int f = 0; f < wf->nfiles; f++) { /* what this process holds of a plane: its block */
    size_t batch = wf->fields[wf->files[f].field].bytes * (size_t)wf->files[f].batch;
    if (batch > plane) plane = batch;
  }
  return plane;
}

const gf_task *gf_workflow_cpu_only_task(const gf_workflow *wf, const gf_kernel **kernel) {
  for (int t = 0; t < wf->ntasks; t++) {
    const gf_task *task = &wf->tasks[t];
    if (task->kind != &gf_task_kernel_kind) continue; /* copies, outputs, hooks run anywhere */
    const gf_kernel_task *k = task->data;
    if (!k->kernel->launch_gpu) {
      if (kernel) *kernel = k->kernel;
      return task;
    }
  }
  if (kernel) *kernel = NULL;
  return NULL;
}

static gf_status load_document(loader *ld, const gf_override *overrides, int noverrides) {
  gf_workflow *wf = ld->wf;
  gf_status status = check_yaml_events(ld, wf->source, strlen(wf->source), 0, 0);
  if (status) return status;
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)wf->source, strlen(wf->source));
  int loaded = yaml_parser_load(&parser, &ld->doc);
  yaml_parser_delete(&parser);
  if (!loaded) return gf_diag_at(ld->diag, (gf_loc){1, 1, 0}, GF_INVALID, "cannot read the YAML");
  ld->have_doc = 1;
  if (!yaml_document_get_root_node(&ld->doc))
    return gf_diag_at(ld->diag, (gf_loc){1, 1, 0}, GF_INVALID, "the workflow file is empty");

  ld->overrides = gf_calloc((size_t)noverrides, sizeof *ld->overrides);
  ld->impl->sources = gf_calloc((size_t)noverrides, sizeof *ld->impl->sources);
  if (!ld->overrides || !ld->impl->sources) return load_oom(ld);
  for (int i = 0; i < noverrides; i++) {
    gf_diag_source *text = &ld->impl->sources[i];
    text->origin = gf_asprintf("--set %s=%s", overrides[i].key, overrides[i].value);
    text->text = gf_asprintf("%s=%s", overrides[i].key, overrides[i].value);
    ld->impl->nsources = i + 1;
    if (!text->origin || !text->text) return load_oom(ld);
    gf_diag_set_sources(ld->diag, ld->impl->sources, ld->impl->nsources);
    override_src *src = &ld->overrides[i];
    src->source = i + 1;
    src->first_node = 1; /* an empty range until applied */
    src->last_node = 0;
    ld->noverrides = i + 1;
    if ((status = apply_override(ld, src, &overrides[i]))) return status;
  }

  wf->default_space = GF_SPACE_DEVICE;
  wf->staging = 0; /* plan_staging() */
  wf->pool_strategy = GF_POOL_RESOURCE_AWARE;
  wf->pool_release_threshold = SIZE_MAX;
  wf->schedule = gf_schedule_find("auto");
  wf->decomp.corners = 1;
  wf->decomp.overlap = 1;
  wf->decomp.ranks = 1;
  if ((status = gf_load_mapping(ld, yaml_document_get_root_node(&ld->doc), NULL, top_keys,
                                COUNT_OF(top_keys), NULL, NULL, NULL)))
    return status;
  if ((status = plan_staging(ld)) || (status = default_check(ld)) || (status = load_lua(ld)))
    return status;
  int out_of_memory = 0;
  ld->impl->resolved = emit_resolved(ld, &out_of_memory);
  if (out_of_memory) return load_oom(ld);
  if (!ld->impl->resolved)
    return gf_diag_error(ld->diag, GF_INTERNAL, "cannot emit the resolved workflow as YAML");
  return GF_OK;
}

/* Refused before parsing: libyaml holds the whole document in memory. */
static gf_status too_big(const char *path, size_t len, gf_diag *diag) {
  return gf_diag_error(diag, GF_INVALID,
                       "%s: workflow file is %zu bytes, more than the limit of 16 MiB", path, len);
}

gf_status gf_workflow_load_text(const char *path, const char *text, size_t len,
                                const gf_override *overrides, int noverrides,
                                const gf_registry *registry, const gf_lua_limits *lua_limits,
                                gf_diag *diag, gf_workflow **out, gf_eval **eval) {
  *out = NULL;
  if (eval) *eval = NULL;
  if (len > GF_MAX_DOCUMENT_BYTES) return too_big(path, len, diag);
  workflow_impl *impl = gf_calloc(1, sizeof *impl);
  if (!impl) return gf_oom(diag, "loading the workflow");
  gf_workflow *wf = &impl->wf;
  wf->path = gf_strdup(path);
  const char *slash = strrchr(path, '/');
  wf->dir = slash ? gf_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : gf_strdup(".");
  wf->source = gf_strndup(text, len);
  if (!wf->path || !wf->dir || !wf->source) {
    gf_workflow_free(wf);
    return gf_oom(diag, "loading the workflow");
  }

  loader ld = {
      .impl = impl, .wf = wf, .diag = diag, .registry = registry, .lua_limits = lua_limits};
  /* Messages name the file and quote its lines; the caller's diag is restored after. */
  const char *saved_origin = diag->origin, *saved_text = diag->text;
  const gf_diag_source *saved_sources = diag->sources;
  int saved_nsources = diag->nsources;
  diag->origin = wf->path;
  diag->text = wf->source;
  gf_diag_set_sources(diag, NULL, 0);
  gf_status status;
  if (strlen(wf->source) != len)
    status =
        gf_diag_at(diag, (gf_loc){1, 1, 0}, GF_INVALID, "the workflow file contains a NUL byte");
  else
    status = load_document(&ld, overrides, noverrides);
  diag->origin = saved_origin;
  diag->text = saved_text;
  gf_diag_set_sources(diag, saved_sources, saved_nsources);

  if (ld.have_doc) yaml_document_delete(&ld.doc);
  free(ld.overrides);
  free(ld.hook_nodes);
  free(ld.task_nodes);
  free(ld.after_nodes);
  if (status) {
    if (ld.lua) gf_lua_close(ld.lua);
    free(ld.hook_ids);
    gf_workflow_free(wf);
    return status;
  }
  if (eval && !(*eval = gf_eval_create(wf, ld.lua, ld.hook_ids))) {
    if (ld.lua) gf_lua_close(ld.lua);
    free(ld.hook_ids);
    gf_workflow_free(wf);
    return gf_oom(diag, "loading the workflow");
  }
  if (!eval && ld.lua) gf_lua_close(ld.lua);
  free(ld.hook_ids);
  *out = wf;
  return GF_OK;
}

gf_status gf_workflow_load(const char *path, const gf_override *overrides, int noverrides,
                           const gf_registry *registry, const gf_lua_limits *lua_limits,
                           gf_diag *diag, gf_workflow **out, gf_eval **eval) {
  *out = NULL;
  if (eval) *eval = NULL;
  FILE *file = fopen(path, "rb");
  if (!file) return gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", path, strerror(errno));
  struct stat info;
  if (fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode) &&
      (uint64_t)info.st_size > GF_MAX_DOCUMENT_BYTES) {
    fclose(file);
    return too_big(path, (size_t)info.st_size, diag);
  }
  gf_text sb = {0};
  gf_text_puts(&sb, "");
  char chunk[65536];
  size_t n;
  /* A pipe has no size to ask for: read one byte past the limit at most. */
  while (!sb.failed && sb.len <= GF_MAX_DOCUMENT_BYTES &&
         (n = fread(chunk, 1, sizeof chunk, file)) > 0)
    gf_text_append(&sb, chunk, n);
  int failed = ferror(file);
  int saved_errno = errno;
  fclose(file);
  if (sb.failed) return gf_oom(diag, "reading the workflow file");
  if (failed) {
    free(sb.data);
    return gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", path, strerror(saved_errno));
  }
  if (sb.len > GF_MAX_DOCUMENT_BYTES) {
    free(sb.data);
    return gf_diag_error(diag, GF_INVALID,
                         "%s: workflow file is more than 16777216 bytes, the limit of 16 MiB",
                         path);
  }
  gf_status status = gf_workflow_load_text(path, sb.data, sb.len, overrides, noverrides, registry,
                                           lua_limits, diag, out, eval);
  free(sb.data);
  return status;
}

static void free_ref(gf_ref *ref) {
  gf_expr_free(ref->index);
}

void gf_task_release(gf_task *task) {
  free(task->name);
  free(task->unstable);
  gf_expr_free(task->when);
  gf_expr_free(task->stream.index);
  free(task->after);
  for (int i = 0; i < task->nwait; i++) gf_expr_free(task->wait[i].index);
  free(task->wait);
  for (int i = 0; i < task->nhost_wait; i++) gf_expr_free(task->host_wait[i].index);
  free(task->host_wait);
  gf_expr_free(task->record.index);
  for (int i = 0; i < task->naccess; i++) free_ref(&task->access[i].ref);
  if (task->kind && task->kind->free) task->kind->free(task->data);
  memset(task, 0, sizeof *task);
}

void gf_workflow_diag_init(gf_diag *diag, const gf_workflow *wf) {
  const workflow_impl *impl = (const workflow_impl *)wf;
  gf_diag_init(diag, wf->path, wf->source);
  gf_diag_set_sources(diag, impl->sources, impl->nsources);
}

void gf_workflow_free(gf_workflow *wf) {
  if (!wf) return;
  workflow_impl *impl = (workflow_impl *)wf;
  for (int i = 0; i < impl->nsources; i++) {
    free((char *)impl->sources[i].origin);
    free((char *)impl->sources[i].text);
  }
  free(impl->sources);
  for (int i = 0; i < wf->nparams; i++) {
    free(wf->params[i].name);
    free(wf->params[i].text);
  }
  free(wf->params);
  for (int i = 0; i < wf->nfields; i++) {
    free(wf->fields[i].name);
    gf_expr_free(wf->fields[i].init_expr);
  }
  free(wf->fields);
  for (int i = 0; i < wf->nhooks; i++) {
    free(wf->hooks[i].name);
    free(wf->hooks[i].path);
    free(wf->hooks[i].function);
  }
  free(wf->hooks);
  for (int i = 0; i < wf->ngroups; i++) free(wf->groups[i].name);
  free(wf->groups);
  for (int i = 0; i < wf->nevent_groups; i++) free(wf->event_groups[i].name);
  free(wf->event_groups);
  for (int t = 0; t < wf->ntasks; t++) gf_task_release(&wf->tasks[t]);
  free(wf->tasks);
  for (int f = 0; f < wf->nfiles; f++) free(wf->files[f].name);
  free(wf->files);
  free(wf->check.fields);
  free(wf->path);
  free(wf->dir);
  free(wf->source);
  free(wf->name);
  free(impl->resolved);
  free(impl);
}

const char *gf_workflow_stream_name(const gf_workflow *wf, int stream, char *buf, size_t size) {
  for (int g = 0; g < wf->ngroups; g++) {
    const gf_stream_group *group = &wf->groups[g];
    if (stream < group->first || stream >= group->first + group->count) continue;
    if (group->count == 1)
      snprintf(buf, size, "%s", group->name);
    else
      snprintf(buf, size, "%s[%d]", group->name, stream - group->first);
    return buf;
  }
  snprintf(buf, size, "stream %d", stream);
  return buf;
}

char *gf_workflow_resolved_yaml(const gf_workflow *wf) {
  const workflow_impl *impl = (const workflow_impl *)wf;
  return gf_strdup(impl->resolved ? impl->resolved : "");
}

void gf_field_cell(const gf_field *field, int64_t i, int64_t index[GF_MAX_DIMS]) {
  for (int d = field->ndim - 1; d >= 0; d--) {
    index[d] = i % field->shape[d];
    i /= field->shape[d];
  }
}

/* ---- the loader's toolkit (load.h) ---- */

gf_workflow *gf_load_workflow(loader *ld) {
  return ld->wf;
}

const gf_registry *gf_load_registry(const loader *ld) {
  return ld->registry;
}

gf_diag *gf_load_diag(loader *ld) {
  return ld->diag;
}

gf_status gf_workflow_check_stable(const gf_workflow *wf, gf_unstable_policy policy,
                                   gf_diag *diag) {
  for (int t = 0; t < wf->ntasks; t++) {
    const gf_task *task = &wf->tasks[t];
    if (!task->unstable) continue;
    if (policy == GF_UNSTABLE_REFUSE)
      return gf_diag_at(diag, task->unstable_loc, GF_INVALID,
                        "task '%s': %s; pass --allow-unstable to run it anyway", task->name,
                        task->unstable);
    gf_diag_at(diag, task->unstable_loc, GF_OK, "note: task '%s': %s; %s", task->name,
               task->unstable,
               policy == GF_UNSTABLE_NOTE ? "gflow run refuses it without --allow-unstable"
                                          : "running it anyway (--allow-unstable)");
  }
  return GF_OK;
}
