/* wave2d_async_events.hip - concurrent IO with event synchronisation
 * (the HIP course's wave2d_async_events.cpp), done well.
 *
 * Five rotating fields, a compute stream, five IO streams. Step n writes
 * field (n+2)%5; IO stream (n+2)%5 waits for it on an event and copies it
 * into plane n+2 (pinned, one allocation each); before step n overwrites a
 * field, the compute stream waits on the event recorded after its last copy.
 * The host never blocks inside the loop (the seed's waited on an event every
 * step) and every event has timing disabled. --no-io: kernels back to back
 * on one stream. The loop is bench_async_loop of wave2d_common.hip, the one
 * wave2d_graph captures.
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
    bench_async_loop(b, a, planes, 0);
    bench_report(b, "asynchronous (events)", bench_timer_stop(timer, a.compute));
  }
  bench_write(b, planes);
  bench_free_planes(b, planes);
  bench_timer_destroy(timer);
  bench_async_destroy(a);
  bench_finish(b);
  return 0;
}
