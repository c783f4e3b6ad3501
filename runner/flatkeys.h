/* flatkeys.h - a YAML tree as dotted keys and filesystem-safe values:
 * `grid.shape` -> `256x256`, `params.cfl` -> `0.4`, `loop.tasks.0.name`.
 * The `--out` template (outdir.c) and `gflow collect` (collect.c) name runs
 * and their parameters this way. */
#ifndef GF_FLATKEYS_H
#define GF_FLATKEYS_H

#include <yaml.h>

#include "error.h"

typedef struct gf_flat_item {
  char *key, *value; /* heap strings */
} gf_flat_item;

typedef struct gf_flat {
  gf_flat_item *items; /* in document order */
  int n, cap;
} gf_flat;

/* Appends every scalar under `node` (a sequence of scalars is one value,
 * joined by 'x'), keys prefixed by `prefix` ("" at the root). GF_INTERNAL
 * when out of memory. */
gf_status gf_flat_node(yaml_document_t *doc, yaml_node_t *node, const char *prefix, gf_flat *out);

/* The same from YAML (or JSON) text; GF_INVALID when it does not parse. */
gf_status gf_flat_text(const char *text, gf_flat *out);

/* The value of `key`, or NULL. */
const char *gf_flat_get(const gf_flat *flat, const char *key);

/* `text` made safe as one path component: characters other than letters,
 * digits and `._+-=,@` become '_', a leading '.' too. Caller frees; NULL
 * when out of memory. A number is written as %.15g (0.40000000000000002 ->
 * 0.4). */
char *gf_flat_safe(const char *text);

void gf_flat_free(gf_flat *flat);

#endif
