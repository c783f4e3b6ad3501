/* registry.c - the named kernels: built-ins and plugins, checked once when added. */
#include "registry.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gf_registry {
  const gf_kernel **kernels;
  int count, capacity;
  gf_registrar registrar; /* ctx points back at the registry */
  gf_diag *diag;          /* where a refused kernel is reported: own_diag or the caller's */
  gf_diag own_diag;       /* stderr, until gf_registry_set_diag */
  int out_of_memory;      /* a kernel was refused for want of memory (not reported) */
};

/* Checks a kernel's table so the loader can trust offsets, sizes and names. */
static int kernel_table_ok(gf_registry *registry, const gf_kernel *kernel) {
  gf_diag *diag = registry->diag;
  if (!kernel || !kernel->name || !kernel->name[0]) {
    gf_diag_error(diag, GF_INVALID, "a kernel without a name cannot be registered");
    return 0;
  }
  const char *name = kernel->name;
  if (gf_registry_find(registry, name)) {
    gf_diag_error(diag, GF_INVALID, "kernel %s is registered twice", name);
    return 0;
  }
  if (!kernel->run_cpu) {
    gf_diag_error(diag, GF_INVALID, "kernel %s has no CPU implementation (run_cpu is NULL)", name);
    return 0;
  }
  if (kernel->args_size > GF_MAX_KERNEL_ARGS_SIZE) {
    gf_diag_error(diag, GF_INVALID, "kernel %s has an argument struct of %zu bytes, at most %d",
                  name, kernel->args_size, GF_MAX_KERNEL_ARGS_SIZE);
    return 0;
  }
  if (!kernel->params) {
    gf_diag_error(diag, GF_INVALID, "kernel %s has no parameter table", name);
    return 0;
  }
  for (const gf_param *p = kernel->params; p->name; p++) {
    for (const gf_param *q = kernel->params; q != p; q++)
      if (strcmp(p->name, q->name) == 0) {
        gf_diag_error(diag, GF_INVALID, "kernel %s names parameter '%s' twice", name, p->name);
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
      case GF_PARAM_BOX:
        size = sizeof(gf_box);
        if (p->required) {
          gf_diag_error(
              diag, GF_INVALID,
              "kernel %s parameter '%s' is a box, which gflow sets: it cannot be required", name,
              p->name);
          return 0;
        }
        break;
      case GF_PARAM_CELLS:
      case GF_PARAM_TAPS:
        size = sizeof(gf_points);
        break;
      default:
        gf_diag_error(diag, GF_INVALID, "kernel %s parameter '%s' has unknown type %d", name,
                      p->name, (int)p->type);
        return 0;
    }
    if (p->offset > kernel->args_size || size > kernel->args_size - p->offset) {
      gf_diag_error(diag, GF_INVALID,
                    "kernel %s parameter '%s' (offset %zu, %zu bytes) lies outside its %zu-byte "
                    "argument struct",
                    name, p->name, p->offset, size, kernel->args_size);
      return 0;
    }
    /* The loader checks the default cell against the grid; it must be one. */
    if (p->type == GF_PARAM_INDEX && p->def != GF_INDEX_CENTER &&
        !(p->def >= 0 && p->def <= 9007199254740992.0 && p->def == floor(p->def))) {
      gf_diag_error(diag, GF_INVALID,
                    "kernel %s parameter '%s' has default %g, which is not a cell index", name,
                    p->name, p->def);
      return 0;
    }
    if (p->type == GF_PARAM_ARRAY && (p->dtypes & ((1u << GF_F32) | (1u << GF_F64))) == 0) {
      gf_diag_error(diag, GF_INVALID, "kernel %s parameter '%s' accepts no dtype", name, p->name);
      return 0;
    }
  }
  return 1;
}

static int registry_add_kernel(void *ctx, const gf_kernel *kernel) {
  gf_registry *registry = ctx;
  if (!kernel_table_ok(registry, kernel)) return 1;
  if (GF_GROW(registry->kernels, registry->capacity, registry->count + 1) != GF_OK) {
    registry->out_of_memory = 1;
    return 1;
  }
  registry->kernels[registry->count++] = kernel;
  return 0;
}

gf_registry *gf_registry_create(void) {
  gf_registry *registry = gf_calloc(1, sizeof *registry);
  if (!registry) return NULL;
  registry->registrar.ctx = registry;
  registry->registrar.add_kernel = registry_add_kernel;
  gf_diag_init(&registry->own_diag, NULL, NULL);
  registry->diag = &registry->own_diag;
  return registry;
}

/* Plugins stay loaded for the life of the process: their kernel tables live in
 * the library, and the registry may be read until exit. */
void gf_registry_free(gf_registry *registry) {
  if (!registry) return;
  free(registry->kernels);
  free(registry);
}

void gf_registry_set_diag(gf_registry *registry, gf_diag *diag) {
  registry->diag = diag ? diag : &registry->own_diag;
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
  char *file = strchr(path, '/') ? gf_strdup(path) : gf_asprintf("./%s", path);
  if (!file) return gf_oom(diag, "loading a plugin");
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
  /* A kernel the plugin's init offers is refused through the caller's diag. */
  gf_diag *saved = registry->diag;
  registry->diag = diag;
  int failed = plugin->init(&registry->registrar) != 0;
  registry->diag = saved;
  if (failed) {
    /* Kernels it added point into the library about to be closed. */
    registry->count = before;
    if (registry->out_of_memory) {
      registry->out_of_memory = 0;
      dlclose(handle);
      return gf_oom(diag, "registering the kernels of a plugin");
    }
    gf_diag_error(diag, GF_INVALID, "plugin %s (%s) failed to register its kernels", path,
                  plugin->name ? plugin->name : "unnamed");
    goto fail_close;
  }
  return GF_OK;

fail_close:
  dlclose(handle);
  return GF_INVALID;
}

gf_status gf_registry_open(const char *const *plugins, int nplugins, gf_diag *diag,
                           gf_registry **out) {
  gf_registry *registry = gf_registry_create();
  *out = registry;
  /* The built-in tables are checked by the tests: only memory can refuse them. */
  if (!registry || gf_kernels_register_builtin(gf_registry_registrar(registry)) != 0)
    return gf_oom(diag, "registering the built-in kernels");
  for (int i = 0; i < nplugins; i++) {
    gf_status st = gf_registry_load_plugin(registry, plugins[i], diag);
    if (st != GF_OK) return st;
  }
  return GF_OK;
}
