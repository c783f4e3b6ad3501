/* load.h - the loader's toolkit, for the task kinds' loaders.
 *
 * workflow.c walks the YAML document; a task kind's `load` receives the nodes
 * of its own keys and uses these to read them, so every value is checked and
 * every problem reported the same way (`file:line:col: message`, also for
 * nodes an override grafted).
 */
#ifndef GF_LOAD_H
#define GF_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "error.h"
#include "expr.h"
#include "registry.h"
#include "task.h"
#include "workflow.h"

typedef struct gf_loader loader;

/* What names an expression may use. */
enum { GF_NAMES_PARAMS = 1, GF_NAMES_GRID = 2, GF_NAMES_HOOKS = 4, GF_NAMES_VARS = 8 };

typedef gf_status (*gf_key_loader)(loader *ld, yaml_node_t *key, yaml_node_t *value, void *target);

/* One key of a mapping: its name, whether it must be there and who loads it.
 * Loaders run in table order, which is why dependent keys come later. */
typedef struct gf_key_spec {
  const char *name;
  int required;
  gf_key_loader load;
} gf_key_spec;

gf_workflow *gf_load_workflow(loader *ld);
const gf_registry *gf_load_registry(const loader *ld);
gf_diag *gf_load_diag(loader *ld);

yaml_node_t *gf_load_node(loader *ld, int id);
const char *gf_load_scalar(const yaml_node_t *node);
int gf_load_is_quoted(const yaml_node_t *node);
gf_loc gf_load_loc(const loader *ld, const yaml_node_t *node);
/* Where byte `offset` of a scalar's value sits in the source. */
gf_loc gf_load_text_loc(const loader *ld, const yaml_node_t *node, size_t offset);

/* Report at a node (or at byte `offset` of its text) and return GF_INVALID. */
gf_status gf_load_fail(loader *ld, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
gf_status gf_load_fail_text(loader *ld, const yaml_node_t *node, size_t offset, const char *fmt,
                            ...) __attribute__((format(printf, 4, 5)));
/* "expected EXPECTED, got 'x'". */
gf_status gf_load_fail_type(loader *ld, const yaml_node_t *node, const char *expected);

/* The pairs of a mapping whose keys the workflow chooses (duplicates refused). */
gf_status gf_load_pairs(loader *ld, yaml_node_t *node, const char *what, yaml_node_pair_t **pairs,
                        int *count);
/* Checks a mapping's keys against `spec` (unknown, duplicate, missing) and
 * runs each present key's loader; `keys`/`values` (may be NULL) receive the
 * nodes per spec entry. `what` names the mapping; NULL: the top level. */
gf_status gf_load_mapping(loader *ld, yaml_node_t *node, const char *what, const gf_key_spec *spec,
                          int nspec, void *target, yaml_node_t **keys, yaml_node_t **values);

/* Compiles `text`, which starts at byte `offset` of `node`'s value. */
gf_status gf_load_expr(loader *ld, const yaml_node_t *node, const char *text, size_t offset,
                       unsigned names, int allow_step, gf_expr **out);
/* The value of a constant expression. */
double gf_load_constant(const gf_expr *expr);
/* A number, or a constant expression of `names`. */
gf_status gf_load_number(loader *ld, const yaml_node_t *node, unsigned names, double *out);
/* An integer, or a constant expression of `names` that is one. */
gf_status gf_load_integer(loader *ld, const yaml_node_t *node, unsigned names, int64_t *out);
/* `FIELD` or `FIELD[EXPR]`. */
gf_status gf_load_ref(loader *ld, yaml_node_t *node, gf_ref *ref);
/* One of `names` (its index in *out); else "unknown WHAT 'x'; expected one of: ...". */
gf_status gf_load_choice(loader *ld, const yaml_node_t *node, const char *what,
                         const char *const *names, int count, int *out);
/* The name of a declared hook. */
gf_status gf_load_hook(loader *ld, const yaml_node_t *node, int *out);

/* "a, b, c"; caller frees. */
char *gf_load_join(const char *const *names, int count); /* NULL when out of memory */

#endif
