/* outdir.c - the output folder from a `--out` template: the keys are those
 * of the resolved workflow (what the sidecar records), so a sweep names each
 * run's folder by what it varies: out/{name}/{grid.shape}-{schedule}. */
#include "outdir.h"

#include <stdlib.h>
#include <string.h>

#include "flatkeys.h"
#include "text.h"

static gf_status unknown_key(const char *key, size_t len, const gf_flat *keys, gf_diag *diag) {
  gf_text known = {0};
  for (int i = 0; i < keys->n; i++)
    gf_text_printf(&known, "%s%s", i ? ", " : "", keys->items[i].key);
  char *list = gf_text_take(&known);
  if (!list) return gf_oom(diag, "expanding --out");
  gf_status st =
      gf_diag_error(diag, GF_USAGE, "--out: unknown key '{%.*s}'; the workflow's keys are: %s",
                    (int)len, key, list);
  free(list);
  return st;
}

gf_status gf_outdir_expand(const char *tmpl, const gf_workflow *wf, gf_diag *diag, char **out) {
  *out = NULL;
  if (!strchr(tmpl, '{')) {
    *out = gf_strdup(tmpl);
    return *out ? GF_OK : gf_oom(diag, "expanding --out");
  }
  gf_flat keys = {0};
  char *yaml = gf_workflow_resolved_yaml(wf);
  gf_status st = yaml ? gf_flat_text(yaml, &keys) : GF_INTERNAL;
  free(yaml);
  if (st != GF_OK) {
    gf_flat_free(&keys);
    return st == GF_INTERNAL
               ? gf_oom(diag, "expanding --out")
               : gf_diag_error(diag, GF_INTERNAL, "internal: the resolved workflow does not parse");
  }
  gf_text path = {0};
  const char *p = tmpl;
  while (st == GF_OK && *p) {
    const char *open = strchr(p, '{');
    const char *close = open ? strchr(open, '}') : NULL;
    if (!open || !close) {
      gf_text_puts(&path, p);
      break;
    }
    gf_text_append(&path, p, (size_t)(open - p));
    const char *key = open + 1;
    size_t len = (size_t)(close - key);
    const char *value = NULL;
    for (int i = 0; i < keys.n && !value; i++)
      if (strlen(keys.items[i].key) == len && strncmp(keys.items[i].key, key, len) == 0)
        value = keys.items[i].value;
    if (len == 4 && strncmp(key, "rank", 4) == 0)
      st = gf_diag_error(diag, GF_USAGE, "--out: '{rank}' is reserved for runs of several ranks");
    else if (!value)
      st = unknown_key(key, len, &keys, diag);
    else
      gf_text_puts(&path, value);
    p = close + 1;
  }
  gf_flat_free(&keys);
  char *s = gf_text_take(&path);
  if (st != GF_OK) {
    free(s);
    return st;
  }
  if (!s) return gf_oom(diag, "expanding --out");
  *out = s;
  return GF_OK;
}
