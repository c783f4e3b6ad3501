/* wave2d_sync.hip - the synchronous schedule (the HIP course's wave2d_sync.cpp), done well.
 *
 * Three rotating fields on one stream. Each step launches gflow's kernel,
 * then, for 1 < n < NT-1, copies U0 (the field step n-2 wrote) into plane n
 * and the host waits for the copy (hipMemcpyAsync + hipStreamSynchronize: a
 * blocking copy, as the seed's hipMemcpy). Planes are pinned, one allocation
 * each; --pageable copies into one malloc'd array instead, as the seed does
 * (labelled "synchronous, pageable"). --no-io: the kernels back to back.
 */
#include "wave2d_common.hip"

int main(int argc, char **argv) {
  bench b = bench_setup(argc, argv, " [--no-io] [--pageable]");
  float *U[3];
  bench_fields(b, 3, U, 0);
  float **planes = bench_planes(b);
  hipStream_t stream;
  BENCH_CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
  bench_timer timer = bench_timer_create();
  bench_warm_up(b, U, stream);
  for (int r = 0; r < b.repeat; r++) {
    bench_zero(b, 3, U, stream);
    bench_timer_start(timer, stream);
    for (int n = 0; n < b.NT; n++) {
      bench_step(b, n, U[n % 3], U[(n + 1) % 3], U[(n + 2) % 3], stream);
      if (!bench_snapshot(b, n)) continue;
      BENCH_CHECK(
          hipMemcpyAsync(planes[n], U[n % 3], b.plane_bytes, hipMemcpyDeviceToHost, stream));
      BENCH_CHECK(hipStreamSynchronize(stream));
    }
    bench_report(b, b.pageable ? "synchronous, pageable" : "synchronous",
                 bench_timer_stop(timer, stream));
  }
  bench_write(b, planes);
  bench_free_planes(b, planes);
  bench_timer_destroy(timer);
  for (int i = 0; i < 3; i++) BENCH_CHECK(hipFree(U[i]));
  BENCH_CHECK(hipStreamDestroy(stream));
  bench_finish(b);
  return 0;
}
