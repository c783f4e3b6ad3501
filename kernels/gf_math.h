/* gf_math.h - what per-cell kernel math needs to compile for both the CPU
 * (C11) and the GPU (hipcc or nvcc). */
#ifndef GF_MATH_H
#define GF_MATH_H

#if defined(__HIPCC__) || defined(__CUDACC__)
#define GF_HD __host__ __device__ static inline
#else
#define GF_HD static inline
#endif

#endif
