/* copy_bw.hip - device-to-device copy bandwidth: the ceiling for compute-only wave2d.
 *
 * hipMemcpyAsync of a big buffer (default 4 GiB) on one stream, timed with
 * events, best of --reps (default 10) after a warm-up. Prints GB/s counting
 * bytes read plus written (the convention for effective bandwidth that
 * gflow's GB/s figures use: minimum traffic, so wave2d counts 16 B/cell), and
 * the one-direction figure. Also the pinned device-to-host rate of one
 * 256 KiB plane and of 1 GiB, the bound of the snapshot IO.
 *   copy_bw [--mib N] [--reps R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"

/* Best time in ms of `reps` copies of `bytes` (each copy timed alone). */
static float best_copy_ms(void *dst, const void *src, size_t bytes, int reps, hipStream_t stream) {
  auto copy = [&]() { BENCH_CHECK(hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, stream)); };
  return best_ms(copy, 1, reps, stream);
}

int main(int argc, char **argv) {
  size_t mib = 4096;
  int reps = 10;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--mib"))
      mib = strtoull(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--reps"))
      reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--mib N] [--reps R]\n", argv[0]);
      return 64;
    }
  }
  if (mib == 0 || reps <= 0) return 64;
  const size_t bytes = mib << 20;
  hipStream_t stream;
  BENCH_CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
  void *a = NULL, *b = NULL, *host = NULL;
  BENCH_CHECK(hipMalloc(&a, bytes));
  BENCH_CHECK(hipMalloc(&b, bytes));
  BENCH_CHECK(hipMemcpyAsync(a, b, bytes, hipMemcpyDeviceToDevice, stream)); /* touch both */
  float ms = best_copy_ms(b, a, bytes, reps, stream);
  printf(
      "device-to-device copy, %zu MiB, best of %d: %.3f ms, %.1f GB/s read+written (%.1f GB/s "
      "one way)\n",
      mib, reps, ms, 2.0 * bytes / ms / 1e6, bytes / ms / 1e6);

  const size_t host_bytes = (size_t)1 << 30, plane = (size_t)256 * 256 * sizeof(float);
  BENCH_CHECK(hipHostMalloc(&host, host_bytes, hipHostMallocDefault));
  memset(host, 0, host_bytes);
  ms = best_copy_ms(host, a, host_bytes, reps, stream);
  printf("pinned device-to-host, 1 GiB, best of %d: %.3f ms, %.1f GB/s\n", reps, ms,
         host_bytes / ms / 1e6);
  ms = best_copy_ms(host, a, plane, 10 * reps, stream);
  printf(
      "pinned device-to-host, one 256x256 float plane (256 KiB), best of %d: %.1f us, %.1f "
      "GB/s\n",
      10 * reps, ms * 1e3, plane / ms / 1e6);
  BENCH_CHECK(hipHostFree(host));
  BENCH_CHECK(hipFree(a));
  BENCH_CHECK(hipFree(b));
  BENCH_CHECK(hipStreamDestroy(stream));
  return 0;
}
