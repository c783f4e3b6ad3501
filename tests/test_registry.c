/* test_registry.c - kernels registered and refused; where refusals are reported. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "registry.h"

static void test_builtins_register(void) {
  gf_registry *registry = gf_registry_create();
  CHECK_INT(gf_kernels_register_builtin(gf_registry_registrar(registry)), 0);
  CHECK(gf_registry_count(registry) > 0);
  const gf_kernel *first = gf_registry_at(registry, 0);
  CHECK(first && gf_registry_find(registry, first->name) == first);
  gf_registry_free(registry);
}

static void test_refusals_go_to_the_diag(void) {
  gf_registry *registry = gf_registry_create();
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  diag.out = tmpfile();
  gf_registry_set_diag(registry, &diag);
  const gf_registrar *registrar = gf_registry_registrar(registry);
  CHECK_INT(gf_kernels_register_builtin(registrar), 0);
  CHECK_INT(diag.count, 0);

  const gf_kernel *first = gf_registry_at(registry, 0);
  CHECK_INT(registrar->add_kernel(registrar->ctx, first), 1);
  CHECK_INT(diag.count, 1);
  char expect[256];
  snprintf(expect, sizeof expect, "kernel %s is registered twice", first->name);
  CHECK_STR(diag.last, expect);

  gf_kernel unnamed = {0};
  CHECK_INT(registrar->add_kernel(registrar->ctx, &unnamed), 1);
  CHECK_STR(diag.last, "a kernel without a name cannot be registered");
  gf_kernel no_cpu = {.name = "no_cpu"};
  CHECK_INT(registrar->add_kernel(registrar->ctx, &no_cpu), 1);
  CHECK_STR(diag.last, "kernel no_cpu has no CPU implementation (run_cpu is NULL)");
  CHECK_INT(diag.count, 3);

  /* The words the user sees on the diag's stream. */
  char text[512] = {0};
  rewind(diag.out);
  CHECK(fread(text, 1, sizeof text - 1, diag.out) > 0);
  CHECK(strstr(text, "gflow: a kernel without a name cannot be registered\n") != NULL);
  fclose(diag.out);
  gf_registry_free(registry);
}

int main(void) {
  RUN(test_builtins_register);
  RUN(test_refusals_go_to_the_diag);
  return check_summary();
}
