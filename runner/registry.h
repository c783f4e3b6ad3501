/* registry.h - the named kernels a workflow can call.
 *
 * Built-in kernels and plugins register through the same gf_registrar. The
 * registry checks each kernel's parameter table once, when it is added, so the
 * loader can trust it.
 */
#ifndef GF_REGISTRY_H
#define GF_REGISTRY_H

#include "error.h"
#include "gflow.h"

typedef struct gf_registry gf_registry;

/* NULL when out of memory. */
gf_registry *gf_registry_create(void);
void gf_registry_free(gf_registry *registry);

/* Where a kernel the registrar refuses (a bad parameter table, a name taken
 * twice) is reported: `diag`, or with NULL a diag of the registry's own that
 * writes to stderr (the default). While gf_registry_load_plugin runs a
 * plugin's init, its `diag` argument is used instead. */
void gf_registry_set_diag(gf_registry *registry, gf_diag *diag);

/* The callbacks a plugin's init (and the built-in set) registers through. */
const gf_registrar *gf_registry_registrar(gf_registry *registry);

const gf_kernel *gf_registry_find(const gf_registry *registry, const char *name);
int gf_registry_count(const gf_registry *registry);
const gf_kernel *gf_registry_at(const gf_registry *registry, int i);

/* dlopens a plugin and runs its init. Reports through `diag` on failure. */
gf_status gf_registry_load_plugin(gf_registry *registry, const char *path, gf_diag *diag);

/* A registry of the built-in kernels and those of `plugins`: what every
 * command that loads workflows starts from. *out is set even on failure
 * (free it with gf_registry_free). */
gf_status gf_registry_open(const char *const *plugins, int nplugins, gf_diag *diag,
                           gf_registry **out);

/* kernels/builtin.c: registers every built-in kernel. */
int gf_kernels_register_builtin(const gf_registrar *registrar);

#endif
