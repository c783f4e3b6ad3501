/* wave2d_async_events.hip - the seed's concurrent IO with event synchronisation
 * (the HIP course's wave2d_async_events.cpp).
 *
 * Five wavefields, five IO streams, one compute stream, five events, pinned
 * output. Per step n: the compute stream waits on events (n+2)%5, (n+1)%5,
 * n%5; launch; record event n%5 on the compute stream; if n > 2, with
 * c = n-1: the host waits on event c%5, copies U[c%5] to plane c on IO stream
 * c%5 and records event c%5 there.
 *
 * Copies go straight to the plane's address with hipMemcpyAsync (see
 * wave2d_async_streams.hip for why not hipMemcpy3DAsync). With --no-io the
 * whole `n > 2` block is left out: kernels back to back on one stream.
 */
#include "wave2d_common.hip"

int main(int argc, char **argv) {
  seed_setup s = seed_setup_from_args(argc, argv);
  const int nscratch = 5;
  float_type *U_ds[nscratch], *V_d = NULL;
  seed_fields(s, nscratch, U_ds, &V_d);
  const size_t nbytes_U = s.N0 * s.N1 * sizeof(float_type);
  float_type *out_h = NULL;
  if (s.io) {
    const size_t out_bytes = (size_t)s.NT * nbytes_U;
    BENCH_CHECK(hipHostMalloc((void **)&out_h, out_bytes, hipHostMallocDefault));
    memset(out_h, 0, out_bytes);
  }
  hipStream_t compute_stream, streams[nscratch];
  hipEvent_t events[nscratch];
  BENCH_CHECK(hipStreamCreateWithFlags(&compute_stream, hipStreamNonBlocking));
  for (int i = 0; i < nscratch; i++) {
    BENCH_CHECK(hipStreamCreateWithFlags(&streams[i], hipStreamNonBlocking));
    BENCH_CHECK(hipEventCreateWithFlags(&events[i], hipEventDefault));
  }

  for (int r = 0; r < s.repeat; r++) {
    seed_zero_fields(s, nscratch, U_ds);
    double start = now_ms();
    for (int n = 0; n < s.NT; n++) {
      BENCH_CHECK(hipStreamWaitEvent(compute_stream, events[(n + 2) % nscratch], 0));
      BENCH_CHECK(hipStreamWaitEvent(compute_stream, events[(n + 1) % nscratch], 0));
      BENCH_CHECK(hipStreamWaitEvent(compute_stream, events[n % nscratch], 0));
      float_type *U0_d = U_ds[n % nscratch];
      float_type *U1_d = U_ds[(n + 1) % nscratch];
      float_type *U2_d = U_ds[(n + 2) % nscratch];
      hipLaunchKernelGGL(wave2d_4o, s.grid, s.block, 0, compute_stream, U0_d, U1_d, U2_d, V_d, s.N0,
                         s.N1, s.dt2, s.inv_dx02, s.inv_dx12, s.P0, s.P1, seed_pi2fm2t2(s, n));
      BENCH_CHECK(hipGetLastError());
      BENCH_CHECK(hipEventRecord(events[n % nscratch], compute_stream));
      if (s.io && n > 2) {
        const size_t copy_index = (size_t)n - 1;
        BENCH_CHECK(hipEventSynchronize(events[copy_index % nscratch]));
        BENCH_CHECK(hipMemcpyAsync((void *)&out_h[copy_index * s.N0 * s.N1],
                                   U_ds[copy_index % nscratch], nbytes_U, hipMemcpyDeviceToHost,
                                   streams[copy_index % nscratch]));
        BENCH_CHECK(hipEventRecord(events[copy_index % nscratch], streams[copy_index % nscratch]));
      }
    }
    BENCH_CHECK(hipDeviceSynchronize());
    seed_report(s, "asynchronous", now_ms() - start);
  }
  seed_write(s, out_h);
  for (int i = 0; i < nscratch; i++) {
    BENCH_CHECK(hipEventDestroy(events[i]));
    BENCH_CHECK(hipStreamDestroy(streams[i]));
    BENCH_CHECK(hipFree(U_ds[i]));
  }
  BENCH_CHECK(hipStreamDestroy(compute_stream));
  BENCH_CHECK(hipFree(V_d));
  if (out_h) BENCH_CHECK(hipHostFree(out_h));
  return 0;
}
