/* wave2d_graph.hip - the whole time loop captured once into a graph and replayed.
 *
 * The loop of wave2d_async_events (bench_async_loop: every step's kernel
 * with its forcing as a launch argument, and with IO every snapshot copy
 * and the events between them) is captured from the compute stream into one
 * graph, instantiated once before the first timed run, and each timed run is
 * one hipGraphLaunch between the two timing events. Capture and
 * instantiation are outside the time (printed once). --no-io: a graph of NT
 * kernel nodes, the bound for launch-bound compute-only work.
 */
#include <time.h>

#include "wave2d_common.hip"

static double host_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  bench b = bench_setup(argc, argv, " [--no-io]");
  bench_async a;
  bench_async_create(b, a);
  float **planes = bench_planes(b);
  bench_timer timer = bench_timer_create();
  bench_warm_up(b, a.U, a.compute);

  const double t0 = host_ms();
  hipGraph_t graph;
  hipGraphExec_t exec;
  BENCH_CHECK(hipStreamBeginCapture(a.compute, hipStreamCaptureModeThreadLocal));
  bench_async_loop(b, a, planes, 0);
  BENCH_CHECK(hipStreamEndCapture(a.compute, &graph));
  BENCH_CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));
  printf("capture and instantiation (untimed): %.3f ms\n", host_ms() - t0);

  for (int r = 0; r < b.repeat; r++) {
    bench_zero(b, BENCH_RING, a.U, a.compute);
    bench_timer_start(timer, a.compute);
    BENCH_CHECK(hipGraphLaunch(exec, a.compute));
    bench_report(b, "graph", bench_timer_stop(timer, a.compute));
  }
  bench_write(b, planes);
  BENCH_CHECK(hipGraphExecDestroy(exec));
  BENCH_CHECK(hipGraphDestroy(graph));
  bench_free_planes(b, planes);
  bench_timer_destroy(timer);
  bench_async_destroy(a);
  bench_finish(b);
  return 0;
}
