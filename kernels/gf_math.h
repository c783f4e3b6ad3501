/* gf_math.h - what per-cell kernel math needs to compile for both the CPU
 * (C11) and the GPU (hipcc or nvcc). */
#ifndef GF_MATH_H
#define GF_MATH_H

#if defined(__HIPCC__) || defined(__CUDACC__)
#define GF_HD __host__ __device__ static inline
#else
#define GF_HD static inline
#endif

/* A loop the GPU compilers unroll whole (its bounds are constants there:
 * template arguments); nothing for the CPU, whose compilers decide (nvcc's
 * host pass is gcc, which knows no such pragma: __CUDA_ARCH__ is the device
 * pass; clang, hipcc's, knows it in both). */
#if defined(__HIPCC__) || defined(__CUDA_ARCH__)
#define GF_UNROLL _Pragma("unroll")
#else
#define GF_UNROLL
#endif

/* CPU loops worth vectorising wider where the processor allows: GCC builds
 * them twice and picks at load time (ifunc). Off under the sanitizers, whose
 * instrumentation does not combine with ifunc resolvers. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define GF_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GF_CPU_CLONES
#endif

#endif
