/* registry.c - the named kernels: built-ins and plugins, checked once when added. */
#include "registry.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gf_registry {
  const gf_kernel **kernels;
  int count, capacity;
  gf_registrar registrar; /* ctx points back at the registry */
};

/* Checks a kernel's table so the loader can trust offsets, sizes and names. */
static int kernel_table_ok(const gf_registry *registry, const gf_kernel *kernel) {
  if (!kernel || !kernel->name || !kernel->name[0]) {
    fprintf(stderr, "gflow: a kernel without a name cannot be registered\n");
    return 0;
  }
  const char *name = kernel->name;
  if (gf_registry_find(registry, name)) {
    fprintf(stderr, "gflow: kernel %s is registered twice\n", name);
    return 0;
  }
  if (!kernel->run_cpu) {
    fprintf(stderr, "gflow: kernel %s has no CPU implementation (run_cpu is NULL)\n", name);
    return 0;
  }
  if (kernel->args_size > GF_MAX_KERNEL_ARGS_SIZE) {
    fprintf(stderr, "gflow: kernel %s has an argument struct of %zu bytes, at most %d\n", name,
            kernel->args_size, GF_MAX_KERNEL_ARGS_SIZE);
    return 0;
  }
  if (!kernel->params) {
    fprintf(stderr, "gflow: kernel %s has no parameter table\n", name);
    return 0;
  }
  for (const gf_param *p = kernel->params; p->name; p++) {
    for (const gf_param *q = kernel->params; q != p; q++)
      if (strcmp(p->name, q->name) == 0) {
        fprintf(stderr, "gflow: kernel %s names parameter '%s' twice\n", name, p->name);
        return 0;
      }
    size_t size;
    switch (p->type) {
      case GF_PARAM_ARRAY:
        size = sizeof(gf_array);
        break;
      case GF_PARAM_REAL:
        size = sizeof(double);
        break;
      case GF_PARAM_INT:
        size = sizeof(int64_t);
        break;
      case GF_PARAM_INDEX:
        size = sizeof(int64_t) * GF_MAX_DIMS;
        break;
      default:
        fprintf(stderr, "gflow: kernel %s parameter '%s' has unknown type %d\n", name, p->name,
                (int)p->type);
        return 0;
    }
    if (p->offset > kernel->args_size || size > kernel->args_size - p->offset) {
      fprintf(stderr,
              "gflow: kernel %s parameter '%s' (offset %zu, %zu bytes) lies outside its %zu-byte "
              "argument struct\n",
              name, p->name, p->offset, size, kernel->args_size);
      return 0;
    }
    if (p->type == GF_PARAM_ARRAY && (p->dtypes & ((1u << GF_F32) | (1u << GF_F64))) == 0) {
      fprintf(stderr, "gflow: kernel %s parameter '%s' accepts no dtype\n", name, p->name);
      return 0;
    }
  }
  return 1;
}

static int registry_add_kernel(void *ctx, const gf_kernel *kernel) {
  gf_registry *registry = ctx;
  if (!kernel_table_ok(registry, kernel)) return 1;
  if (registry->count == registry->capacity) {
    registry->capacity = registry->capacity ? 2 * registry->capacity : 8;
    registry->kernels =
        gf_xrealloc(registry->kernels, (size_t)registry->capacity * sizeof *registry->kernels);
  }
  registry->kernels[registry->count++] = kernel;
  return 0;
}

gf_registry *gf_registry_create(void) {
  gf_registry *registry = gf_xcalloc(1, sizeof *registry);
  registry->registrar.ctx = registry;
  registry->registrar.add_kernel = registry_add_kernel;
  return registry;
}

/* Plugins stay loaded for the life of the process: their kernel tables live in
 * the library, and the registry may be read until exit. */
void gf_registry_free(gf_registry *registry) {
  if (!registry) return;
  free(registry->kernels);
  free(registry);
}

const gf_registrar *gf_registry_registrar(gf_registry *registry) {
  return &registry->registrar;
}

const gf_kernel *gf_registry_find(const gf_registry *registry, const char *name) {
  if (!registry) return NULL;
  for (int i = 0; i < registry->count; i++)
    if (strcmp(registry->kernels[i]->name, name) == 0) return registry->kernels[i];
  return NULL;
}

int gf_registry_count(const gf_registry *registry) {
  return registry ? registry->count : 0;
}

const gf_kernel *gf_registry_at(const gf_registry *registry, int i) {
  if (!registry || i < 0 || i >= registry->count) return NULL;
  return registry->kernels[i];
}

gf_status gf_registry_load_plugin(gf_registry *registry, const char *path, gf_diag *diag) {
  /* dlopen searches the library path for a bare name; a plugin is a file. */
  char *file = strchr(path, '/') ? gf_xstrdup(path) : gf_xasprintf("./%s", path);
  void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  free(file);
  if (!handle) return gf_diag_error(diag, GF_NOINPUT, "cannot load plugin %s: %s", path, dlerror());
  const gf_plugin *plugin = dlsym(handle, GF_PLUGIN_SYMBOL);
  if (!plugin) {
    gf_diag_error(diag, GF_INVALID, "plugin %s exports no '%s'", path, GF_PLUGIN_SYMBOL);
    goto fail_close;
  }
  if (plugin->abi != GF_ABI_VERSION) {
    gf_diag_error(diag, GF_INVALID, "plugin %s was built for gflow ABI %d, this gflow has ABI %d",
                  path, plugin->abi, GF_ABI_VERSION);
    goto fail_close;
  }
  if (!plugin->init) {
    gf_diag_error(diag, GF_INVALID, "plugin %s has no init function", path);
    goto fail_close;
  }
  int before = registry->count;
  if (plugin->init(&registry->registrar) != 0) {
    /* Kernels it added point into the library about to be closed. */
    registry->count = before;
    gf_diag_error(diag, GF_INVALID, "plugin %s (%s) failed to register its kernels", path,
                  plugin->name ? plugin->name : "unnamed");
    goto fail_close;
  }
  return GF_OK;

fail_close:
  dlclose(handle);
  return GF_INVALID;
}
