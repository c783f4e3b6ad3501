/* march_copy.hip - where a 3-D walk starts along its rows, measured on a copy.
 *
 * Copies the box of an N^3 f32 field inside a halo of H cells (gflow's
 * kernel workflows: N - 2H = 400, H = 4) the way kernels/fd_gpu.h's 3-D
 * tiles walk it: a block of 16 x 16 threads owns 16 vectors of 4 cells
 * along the last axis by 16 rows along axis 1 and marches down axis 0
 * (--march planes), each thread's loads three planes ahead of its store,
 * the cells outside the box not stored. Two walks: vectors from the box's
 * first cell (16 bytes into a 32-byte sector at H = 4), and from the
 * sector below it (what launch_walk does). Each is printed as GB/s
 * (the box's cells read and written) and as a fraction of a
 * device-to-device hipMemcpyAsync of the whole field in the same run, best
 * of --reps runs of 20 copies each.
 *   march_copy [--n N] [--halo H] [--march M] [--reps R]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"

enum { kX = 16, kY = 16, kAhead = 3, kCopies = 20 };

/* The box is [lo, hi) on every axis; vectors along the last axis start at
 * `start` (<= lo, a multiple of 4). */
struct Box {
  int64_t n, lo, hi, start;
  int march;
};

/* One 16-byte store (as fd_gpu.h's store_whole): written plainly, nvcc
 * merged it with the cell-by-cell stores of the box's edges into four
 * 4-byte stores, which ran at a third of the copy. */
__device__ __forceinline__ void store_vector(float *p, float4 v) {
#if defined(GFLOW_HIP_ON_CUDA) && defined(__CUDA_ARCH__)
  asm("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)), "f"(v.x),
      "f"(v.y), "f"(v.z), "f"(v.w)
      : "memory");
#else
  *(float4 *)p = v;
#endif
}

__global__ void __launch_bounds__(kX *kY) march_copy(const float *in, float *out, Box b) {
  const int64_t x = b.start + 4 * ((int64_t)blockIdx.x * kX + threadIdx.x);
  const int64_t y = b.lo + (int64_t)blockIdx.y * kY + threadIdx.y;
  const int64_t i0 = b.lo + (int64_t)blockIdx.z * b.march;
  const int64_t end = i0 + b.march < b.hi ? i0 + b.march : b.hi;
  if (x >= b.hi || y >= b.hi) return;
  const int64_t plane = b.n * b.n, own = y * b.n + x;
  float4 q[kAhead + 1];
  for (int k = 0; k < kAhead; k++)
    q[k] = *(const float4 *)(in + (i0 + k < b.n ? i0 + k : b.n - 1) * plane + own);
  for (int64_t i = i0; i < end; i += kAhead + 1)
#pragma unroll
    for (int u = 0; u <= kAhead; u++) {
      const int64_t j = i + u, ahead = j + kAhead < b.n ? j + kAhead : b.n - 1;
      if (j >= end) break;
      q[(u + kAhead) % (kAhead + 1)] = *(const float4 *)(in + ahead * plane + own);
      float *to = out + j * plane + own;
      const float4 v = q[u];
      if (x >= b.lo && x + 4 <= b.hi) {
        store_vector(to, v);
      } else {
        const float cells[4] = {v.x, v.y, v.z, v.w};
        for (int c = 0; c < 4; c++)
          if (x + c >= b.lo && x + c < b.hi) to[c] = cells[c];
      }
    }
}

int main(int argc, char **argv) {
  int64_t n = 408, halo = 4;
  int march = 49, reps = 5;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--n"))
      n = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--halo"))
      halo = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--march"))
      march = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--reps"))
      reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--n N] [--halo H] [--march M] [--reps R]\n", argv[0]);
      return 64;
    }
  }
  if (n < 8 || n % 8 || halo < 0 || 2 * halo >= n || march <= 0 || reps <= 0) {
    fprintf(stderr, "%s: N must be a multiple of 8 (rows of whole sectors), 0 <= 2H < N\n",
            argv[0]);
    return 64;
  }
  const size_t bytes = (size_t)n * n * n * sizeof(float);
  hipStream_t stream;
  BENCH_CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
  float *in = NULL, *out = NULL;
  BENCH_CHECK(hipMalloc((void **)&in, bytes));
  BENCH_CHECK(hipMalloc((void **)&out, bytes));
  BENCH_CHECK(hipMemsetAsync(in, 0, bytes, stream));
  BENCH_CHECK(hipMemsetAsync(out, 0, bytes, stream));
  auto device_copy = [&]() {
    BENCH_CHECK(hipMemcpyAsync(out, in, bytes, hipMemcpyDeviceToDevice, stream));
  };
  const double copy_gbs = 2.0 * bytes / best_ms(device_copy, kCopies, reps, stream) / 1e6;
  printf("device-to-device copy of the field (%lld^3 f32): %.1f GB/s read+written\n", (long long)n,
         copy_gbs);
  const int64_t box = n - 2 * halo;
  const double box_bytes = 2.0 * sizeof(float) * box * box * box;
  for (int from_sector = 0; from_sector < 2; from_sector++) {
    const int64_t start = halo - halo % (from_sector ? 8 : 4);
    const Box b = {n, halo, n - halo, start, march};
    const dim3 grid((unsigned)(((b.hi - b.start + 3) / 4 + kX - 1) / kX),
                    (unsigned)((b.hi - b.lo + kY - 1) / kY),
                    (unsigned)((b.hi - b.lo + b.march - 1) / b.march));
    auto walk = [&]() {
      hipLaunchKernelGGL(march_copy, grid, dim3(kX, kY), 0, stream, (const float *)in, out, b);
    };
    const double gbs = box_bytes / best_ms(walk, kCopies, reps, stream) / 1e6;
    printf(
        "march copy of the box %lld^3, march %d, vectors from cell %lld (%s): %.1f GB/s, %.3f "
        "of the copy\n",
        (long long)box, march, (long long)start,
        from_sector ? "the sector below the box" : "the box's first vector", gbs, gbs / copy_gbs);
  }
  BENCH_CHECK(hipFree(in));
  BENCH_CHECK(hipFree(out));
  BENCH_CHECK(hipStreamDestroy(stream));
  return 0;
}
