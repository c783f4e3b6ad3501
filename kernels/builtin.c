/* builtin.c - registers the built-in kernels, through the same call a plugin uses. */
#include "builtin.h"

#include "blur.h"

#include "registry.h"

int gf_kernels_register_builtin(const gf_registrar *registrar) {
  static const gf_kernel *const builtin[] = {&gf_kernel_wave2d_4o, &gf_kernel_blur, &gf_kernel_wave,
                                             &gf_kernel_heat, &gf_kernel_stencil};
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
    if (registrar->add_kernel(registrar->ctx, builtin[i]) != 0) return 1;
  return 0;
}
