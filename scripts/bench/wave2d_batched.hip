/* wave2d_batched.hip - snapshots gathered on the device, moved K planes per copy.
 *
 * The wavefield itself rotates over a device ring of 2K planes in one
 * allocation, so the fields written by K consecutive steps (planes
 * bK .. bK+K-1, the snapshots of block b) lie side by side in one half of
 * the ring without any device-to-device copy: step n reads ring planes n%2K
 * and (n+1)%2K and writes (n+2)%2K. When a block's last plane is written an
 * event is recorded and the IO stream copies the block (its planes with
 * 1 < p < NT-1) in one hipMemcpyAsync to the base of its own pinned
 * allocation, while the compute stream fills the other half. Before a step
 * starts a half again, the compute stream waits on the event recorded after
 * that half's last copy. The host never blocks inside the loop. Memory: 2K
 * device planes (--batch K, default 16: 8 MiB at 256^2) and NT/K pinned
 * allocations.
 */
#include "wave2d_common.hip"

int main(int argc, char **argv) {
  bench b = bench_setup(argc, argv, " [--batch K]");
  const int K = b.batch, M = 2 * K;
  if (K < 2) bench_usage(argv[0], " [--batch K] (K >= 2)");
  float **ring = (float **)malloc(M * sizeof(float *));
  bench_fields(b, M, ring, 1);
  /* Block q holds planes lo(q) .. hi(q)-1, in one pinned allocation. */
  const int blocks = (b.NT + K - 1) / K;
  float **block = (float **)calloc(blocks, sizeof(float *));
  float **planes = (float **)calloc(b.NT, sizeof(float *));
  int *lo = (int *)malloc(blocks * sizeof(int)), *hi = (int *)malloc(blocks * sizeof(int));
  for (int q = 0; q < blocks; q++) {
    lo[q] = q * K < 2 ? 2 : q * K;
    hi[q] = q * K + K < b.NT - 1 ? q * K + K : b.NT - 1;
    if (hi[q] <= lo[q]) continue;
    const size_t bytes = (size_t)(hi[q] - lo[q]) * b.plane_bytes;
    BENCH_CHECK(hipHostMalloc((void **)&block[q], bytes, hipHostMallocDefault));
    memset(block[q], 0, bytes);
    for (int p = lo[q]; p < hi[q]; p++) planes[p] = block[q] + (size_t)(p - lo[q]) * b.cells;
  }
  hipStream_t compute, io;
  hipEvent_t written[2], copied[2];
  BENCH_CHECK(hipStreamCreateWithFlags(&compute, hipStreamNonBlocking));
  BENCH_CHECK(hipStreamCreateWithFlags(&io, hipStreamNonBlocking));
  for (int h = 0; h < 2; h++) {
    BENCH_CHECK(hipEventCreateWithFlags(&written[h], hipEventDisableTiming));
    BENCH_CHECK(hipEventCreateWithFlags(&copied[h], hipEventDisableTiming));
  }
  bench_timer timer = bench_timer_create();
  bench_warm_up(b, ring, compute);

  for (int r = 0; r < b.repeat; r++) {
    bench_zero(b, M, ring, compute);
    int pending[2] = {0, 0};
    bench_timer_start(timer, compute);
    for (int n = 0; n < b.NT; n++) {
      const int p = n + 2, q = p / K, h = q % 2; /* step n writes plane p of block q */
      if (pending[h]) BENCH_CHECK(hipStreamWaitEvent(compute, copied[h], 0));
      pending[h] = 0;
      bench_step(b, n, ring[n % M], ring[(n + 1) % M], ring[p % M], compute);
      if (q >= blocks || p != hi[q] - 1 || hi[q] <= lo[q]) continue;
      /* plane p completes block q: one copy of its planes lo .. hi-1 */
      BENCH_CHECK(hipEventRecord(written[h], compute));
      BENCH_CHECK(hipStreamWaitEvent(io, written[h], 0));
      BENCH_CHECK(hipMemcpyAsync(block[q], ring[lo[q] % M], (size_t)(hi[q] - lo[q]) * b.plane_bytes,
                                 hipMemcpyDeviceToHost, io));
      BENCH_CHECK(hipEventRecord(copied[h], io));
      pending[h] = 1;
    }
    for (int h = 0; h < 2; h++)
      if (pending[h]) BENCH_CHECK(hipStreamWaitEvent(compute, copied[h], 0));
    char kind[64];
    snprintf(kind, sizeof kind, "batched (K=%d)", K);
    bench_report(b, kind, bench_timer_stop(timer, compute));
  }
  bench_write(b, planes);

  bench_timer_destroy(timer);
  for (int h = 0; h < 2; h++) {
    BENCH_CHECK(hipEventDestroy(written[h]));
    BENCH_CHECK(hipEventDestroy(copied[h]));
  }
  BENCH_CHECK(hipStreamDestroy(compute));
  BENCH_CHECK(hipStreamDestroy(io));
  for (int q = 0; q < blocks; q++)
    if (block[q]) BENCH_CHECK(hipHostFree(block[q]));
  BENCH_CHECK(hipFree(ring[0]));
  free(ring), free(block), free(planes), free(lo), free(hi);
  bench_finish(b);
  return 0;
}
