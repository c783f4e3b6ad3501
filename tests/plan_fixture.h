/* plan_fixture.h - for the planner's and the program's tests: a workflow
 * loaded with `--set`-style overrides and its plan, messages kept quiet. */
#ifndef GF_TEST_PLAN_FIXTURE_H
#define GF_TEST_PLAN_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "registry.h"
#include "workflow.h"

static inline FILE *quiet(void) {
  static FILE *sink;
  if (!sink) sink = tmpfile();
  return sink;
}

/* Loads workflow `text` (named `path` in messages) with the built-in kernels;
 * `diag` then reports against it, quietly. */
static inline gf_status load_text(const char *path, const char *text, gf_diag *diag,
                                  gf_workflow **wf) {
  gf_registry *registry = gf_registry_create();
  gf_kernels_register_builtin(gf_registry_registrar(registry));
  gf_diag_init(diag, NULL, NULL);
  diag->out = quiet();
  *wf = NULL;
  gf_status st =
      gf_workflow_load_text(path, text, strlen(text), NULL, 0, registry, NULL, diag, wf, NULL);
  gf_registry_free(registry);
  if (st != GF_OK) return st;
  gf_workflow_diag_init(diag, *wf);
  diag->out = quiet();
  return GF_OK;
}

/* Loads `path` with overrides ("key=value" strings) and builds its plan. */
static inline gf_status load_plan(const char *path, const char *const *sets, int nsets,
                                  gf_diag *diag, gf_workflow **wf, gf_plan **plan) {
  gf_registry *registry = gf_registry_create();
  gf_kernels_register_builtin(gf_registry_registrar(registry));
  gf_override overrides[8];
  char keys[8][64];
  for (int i = 0; i < nsets; i++) {
    const char *eq = strchr(sets[i], '=');
    snprintf(keys[i], sizeof keys[i], "%.*s", (int)(eq - sets[i]), sets[i]);
    overrides[i] = (gf_override){keys[i], eq + 1};
  }
  gf_diag_init(diag, NULL, NULL);
  diag->out = quiet();
  *plan = NULL;
  gf_status st = gf_workflow_load(path, overrides, nsets, registry, NULL, diag, wf, NULL);
  gf_registry_free(registry);
  if (st != GF_OK) return st;
  gf_workflow_diag_init(diag, *wf);
  diag->out = quiet();
  return gf_plan_create(*wf, diag, plan);
}

#endif
