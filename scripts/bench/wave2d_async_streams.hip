/* wave2d_async_streams.hip - concurrent IO, the host synchronising streams
 * (the HIP course's wave2d_async_streams.cpp), done well.
 *
 * Five rotating fields, a compute stream, five IO streams. Step n writes
 * field (n+2)%5; IO stream (n+2)%5 waits for it on an event and copies it
 * into plane n+2 (pinned, one allocation each). Before step n overwrites a
 * field, the host synchronises the one IO stream still copying it (the seed
 * synchronised three IO streams and the compute stream every step). Events
 * have timing disabled; the loop is bench_async_loop of wave2d_common.hip.
 */
#include "wave2d_common.hip"

int main(int argc, char **argv) {
  bench b = bench_setup(argc, argv, " [--no-io]");
  bench_async a;
  bench_async_create(b, a);
  float **planes = bench_planes(b);
  bench_timer timer = bench_timer_create();
  bench_warm_up(b, a.U, a.compute);
  for (int r = 0; r < b.repeat; r++) {
    bench_zero(b, BENCH_RING, a.U, a.compute);
    bench_timer_start(timer, a.compute);
    bench_async_loop(b, a, planes, 1);
    bench_report(b, "asynchronous (streams)", bench_timer_stop(timer, a.compute));
  }
  bench_write(b, planes);
  bench_free_planes(b, planes);
  bench_timer_destroy(timer);
  bench_async_destroy(a);
  bench_finish(b);
  return 0;
}
