/* flatkeys.c - a YAML tree as dotted keys and filesystem-safe values. */
#include "flatkeys.h"

#include <stdlib.h>
#include <string.h>

char *gf_flat_safe(const char *text) {
  char number[32];
  char *end;
  double v = strtod(text, &end);
  if (end != text && *end == '\0' && text[0] != ' ') { /* a number: its shortest form */
    snprintf(number, sizeof number, "%.15g", v);
    text = number;
  }
  char *s = gf_strdup(text[0] ? text : "_");
  if (!s) return NULL;
  for (char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          strchr("._+-=,@", *p)))
      *p = '_';
  if (s[0] == '.') s[0] = '_'; /* never "..", never hidden */
  return s;
}

static gf_status add(gf_flat *out, const char *key, char *value) {
  char *k = gf_strdup(key);
  if (!k || !value || GF_GROW(out->items, out->cap, out->n + 1) != GF_OK) {
    free(k);
    free(value);
    return GF_INTERNAL;
  }
  out->items[out->n++] = (gf_flat_item){k, value};
  return GF_OK;
}

static char *scalar(const yaml_node_t *node) {
  return gf_flat_safe((const char *)node->data.scalar.value);
}

/* A sequence of scalars, joined by 'x': [256, 256] -> 256x256; NULL when
 * an item is not a scalar. `*oom` set when out of memory. */
static char *joined(yaml_document_t *doc, yaml_node_t *node, int *oom) {
  size_t len = 0;
  char *s = gf_strdup("");
  for (yaml_node_item_t *i = node->data.sequence.items.start;
       s && i < node->data.sequence.items.top; i++) {
    yaml_node_t *item = yaml_document_get_node(doc, *i);
    if (!item || item->type != YAML_SCALAR_NODE) {
      free(s);
      return NULL;
    }
    char *v = scalar(item);
    char *t = v ? gf_asprintf("%s%s%s", s, len ? "x" : "", v) : NULL;
    free(v);
    free(s);
    s = t;
    len++;
  }
  if (!s) *oom = 1;
  return s;
}

gf_status gf_flat_node(yaml_document_t *doc, yaml_node_t *node, const char *prefix, gf_flat *out) {
  gf_status st = GF_OK;
  if (!node) return GF_OK;
  if (node->type == YAML_SCALAR_NODE) return add(out, prefix, scalar(node));
  if (node->type == YAML_SEQUENCE_NODE) {
    int oom = 0;
    char *all = joined(doc, node, &oom);
    if (all || oom) return add(out, prefix, all);
    int index = 0;
    for (yaml_node_item_t *i = node->data.sequence.items.start;
         st == GF_OK && i < node->data.sequence.items.top; i++, index++) {
      char *key = gf_asprintf("%s%s%d", prefix, prefix[0] ? "." : "", index);
      st = key ? gf_flat_node(doc, yaml_document_get_node(doc, *i), key, out) : GF_INTERNAL;
      free(key);
    }
    return st;
  }
  for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
       st == GF_OK && p < node->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(doc, p->key);
    if (!k || k->type != YAML_SCALAR_NODE) continue;
    char *key = gf_asprintf("%s%s%s", prefix, prefix[0] ? "." : "", (char *)k->data.scalar.value);
    st = key ? gf_flat_node(doc, yaml_document_get_node(doc, p->value), key, out) : GF_INTERNAL;
    free(key);
  }
  return st;
}

gf_status gf_flat_text(const char *text, gf_flat *out) {
  yaml_parser_t parser;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&parser)) return GF_INTERNAL;
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
  gf_status st = GF_INVALID;
  if (yaml_parser_load(&parser, &doc)) {
    st = gf_flat_node(&doc, yaml_document_get_root_node(&doc), "", out);
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&parser);
  return st;
}

const char *gf_flat_get(const gf_flat *flat, const char *key) {
  for (int i = 0; i < flat->n; i++)
    if (strcmp(flat->items[i].key, key) == 0) return flat->items[i].value;
  return NULL;
}

void gf_flat_free(gf_flat *flat) {
  for (int i = 0; i < flat->n; i++) {
    free(flat->items[i].key);
    free(flat->items[i].value);
  }
  free(flat->items);
  *flat = (gf_flat){0};
}
