/* builtin.h - the kernels gflow ships with. */
#ifndef GF_KERNELS_BUILTIN_H
#define GF_KERNELS_BUILTIN_H

#include "gflow.h"

/* A kernel's GPU launcher when gflow is built with GPU support, else NULL. */
#ifdef GFLOW_WITH_GPU
#define GF_GPU_LAUNCHER(fn) fn
#else
#define GF_GPU_LAUNCHER(fn) NULL
#endif

/* GPU launchers (kernels/<family>.hip), C linkage. */
int gf_wave2d_4o_launch_gpu(const void *args, void *stream);
int gf_wave_launch_gpu(const void *args, void *stream);
int gf_heat_launch_gpu(const void *args, void *stream);
int gf_stencil_launch_gpu(const void *args, void *stream);

extern const gf_kernel gf_kernel_wave2d_4o;
extern const gf_kernel gf_kernel_blur; /* blur.h */
extern const gf_kernel gf_kernel_wave;
extern const gf_kernel gf_kernel_heat;
extern const gf_kernel gf_kernel_stencil;

#endif
