/* wave2d_common.hip - what the hand-written wave2d programs share (included, not built alone).
 *
 * The seed workload (the HIP course's wave2d, "Optimising compute with
 * concurrent IO in HIP") as a careful GPU programmer writes it, computed by
 * gflow's own kernel (kernels/wave2d.hip, through its launcher
 * gf_wave2d_4o_launch_gpu, built as gflow builds it: no floating-point
 * contraction) with the forcing of workflows/ricker.lua computed the same
 * way, so array_out.dat is gflow's bit for bit: raw float32 of shape
 * (NT, N0, N1), plane p the field that step p-2 wrote for 1 < p < NT-1,
 * planes 0, 1 and NT-1 zero.
 *
 * What every program does alike:
 *  - the time is taken by two events (the only ones created with timing) on
 *    the stream that issues the loop, around the whole loop, plus the final
 *    synchronisation on the stop event; every other event has timing
 *    disabled and no host clock is read inside the loop;
 *  - snapshots go to pinned memory, one allocation per destination buffer
 *    and every copy to an allocation's base address (on AMD an async copy to
 *    an address inside a pinned allocation fails silently);
 *  - the forcing of every step is computed before the loop (a table), and
 *    writing the file comes after the timed part, as in gflow's total_s;
 *  - one untimed launch before the first loop loads the kernel module.
 *
 * Options (each program accepts the ones it names in its usage line):
 *   --n0 N --n1 N   grid (256 x 256)
 *   --nt N          steps (default: the seed's formula, 640 at 256 x 256)
 *   --no-io         compute only: no snapshots, no output file
 *   --out PATH      where array_out.dat goes (default ./array_out.dat)
 *   --repeat R      run the time loop R times, report each (default 1)
 *   --pageable      (wave2d_sync) copy into pageable memory instead
 *   --batch K       (wave2d_batched) planes per copy (default 16)
 * They stop at the first HIP error, naming the call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "wave2d.hip"

/* Graph capture and replay: runner/gf_hip.h maps only what gflow uses. */
#ifdef GFLOW_HIP_ON_CUDA
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define hipStreamEndCapture cudaStreamEndCapture
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
#endif

/* Instances of the wavefield ring the async programs rotate (the seed's five). */
#define BENCH_RING 5

struct bench {
  int64_t N0, N1;
  int NT, io, repeat, pageable, batch;
  const char *out_path;
  size_t cells, plane_bytes;
  double dt;        /* params.dt of workflows/wave2d.yaml */
  float *amplitude; /* the forcing of each step, ricker.lua's bits */
  float *V;         /* velocity, on the device */
  float *zero;      /* a device plane of zeros, the source of every reset */
};

static inline void bench_usage(const char *program, const char *extra) {
  fprintf(stderr, "usage: %s [--n0 N] [--n1 N] [--nt N] [--out PATH] [--repeat R]%s\n", program,
          extra);
  exit(64);
}

static inline long bench_positive(const char *program, const char *text, const char *extra) {
  char *end = NULL;
  long value = strtol(text, &end, 10);
  if (*end || value <= 0) bench_usage(program, extra);
  return value;
}

static inline float f32(double x) {
  return (float)x;
}

/* workflows/ricker.lua's ricker(n), rounding to float where it does. */
static inline float bench_ricker(double dt_param, int n) {
  const double fm_param = 343.0 / (10 * 1.0), td_param = sqrt(6.0) / (3.141592 * fm_param);
  const float pi = f32(3.141592), dt = f32(dt_param), fm = f32(fm_param), td = f32(td_param);
  const float t = f32((double)f32((double)n * dt) - 2.0 * td);
  const float a =
      f32((double)f32((double)f32((double)f32((double)f32((double)pi * pi) * fm) * fm) * t) * t);
  return f32((double)f32(1.0 - 2.0 * a) * (double)f32(exp(-(double)a)));
}

/* Options, constants (workflows/wave2d.yaml's params), the forcing table,
 * the velocity. `extra` is the program's own options for the usage line:
 * "--no-io", "--pageable" and "--batch" are accepted only when it names them. */
static inline bench bench_setup(int argc, char **argv, const char *extra) {
  bench b;
  memset(&b, 0, sizeof b);
  b.N0 = 256, b.N1 = 256, b.NT = -1, b.io = 1, b.repeat = 1, b.batch = 16;
  b.out_path = "array_out.dat";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--no-io") && strstr(extra, "--no-io"))
      b.io = 0;
    else if (!strcmp(a, "--pageable") && strstr(extra, "--pageable"))
      b.pageable = 1;
    else if (i + 1 < argc && !strcmp(a, "--batch") && strstr(extra, "--batch"))
      b.batch = (int)bench_positive(argv[0], argv[++i], extra);
    else if (i + 1 < argc && !strcmp(a, "--n0"))
      b.N0 = bench_positive(argv[0], argv[++i], extra);
    else if (i + 1 < argc && !strcmp(a, "--n1"))
      b.N1 = bench_positive(argv[0], argv[++i], extra);
    else if (i + 1 < argc && !strcmp(a, "--nt"))
      b.NT = (int)bench_positive(argv[0], argv[++i], extra);
    else if (i + 1 < argc && !strcmp(a, "--repeat"))
      b.repeat = (int)bench_positive(argv[0], argv[++i], extra);
    else if (i + 1 < argc && !strcmp(a, "--out"))
      b.out_path = argv[++i];
    else
      bench_usage(argv[0], extra);
  }
  if (b.N0 < 5 || b.N1 < 5) bench_usage(argv[0], extra);
  b.dt = 0.4 * 1.0 / 343.0;
  if (b.NT < 0) b.NT = (int)floor(fmax(1.0 * b.N0, 1.0 * b.N1) / (b.dt * 343.0));
  if (b.NT < 4) bench_usage(argv[0], extra);
  b.cells = (size_t)(b.N0 * b.N1), b.plane_bytes = b.cells * sizeof(float);
  b.amplitude = (float *)malloc(b.NT * sizeof(float));
  for (int n = 0; n < b.NT; n++) b.amplitude[n] = bench_ricker(b.dt, n);
  float *host = (float *)malloc(b.plane_bytes);
  for (size_t i = 0; i < b.cells; i++) host[i] = 343.0f;
  BENCH_CHECK(hipMalloc((void **)&b.V, b.plane_bytes));
  BENCH_CHECK(hipMemcpy(b.V, host, b.plane_bytes, hipMemcpyHostToDevice));
  memset(host, 0, b.plane_bytes);
  BENCH_CHECK(hipMalloc((void **)&b.zero, b.plane_bytes));
  BENCH_CHECK(hipMemcpy(b.zero, host, b.plane_bytes, hipMemcpyHostToDevice));
  free(host);
  printf("grid %lld x %lld, NT=%d%s\n", (long long)b.N0, (long long)b.N1, b.NT,
         b.io ? (b.pageable ? ", pageable output" : ", pinned output") : ", compute only");
  return b;
}

static inline gf_array bench_field(const bench &b, float *data) {
  gf_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = GF_F32;
  a.ndim = 2;
  a.shape[0] = b.N0, a.shape[1] = b.N1, a.shape[2] = 1;
  a.spacing[0] = a.spacing[1] = a.spacing[2] = 1.0;
  a.halo = 2;
  return a;
}

/* Step n on `stream`: gflow's kernel, U2 from U0 and U1. */
static inline void bench_step(const bench &b, int n, float *U0, float *U1, float *U2,
                              hipStream_t stream) {
  gf_wave2d_args args;
  memset(&args, 0, sizeof args);
  args.U0 = bench_field(b, U0), args.U1 = bench_field(b, U1), args.U2 = bench_field(b, U2);
  args.V = bench_field(b, b.V);
  args.dt = b.dt;
  args.amplitude = b.amplitude[n];
  args.source[0] = b.N0 / 2, args.source[1] = b.N1 / 2;
  args.box.lo[0] = args.box.lo[1] = 2, args.box.lo[2] = 0;
  args.box.hi[0] = b.N0 - 2, args.box.hi[1] = b.N1 - 2, args.box.hi[2] = 1;
  BENCH_CHECK((hipError_t)gf_wave2d_4o_launch_gpu(&args, stream));
}

/* `count` fields of one plane each, zeroed; `contiguous` puts them in one
 * allocation (fields[0] is its base). */
static inline void bench_fields(const bench &b, int count, float **fields, int contiguous) {
  if (contiguous) {
    BENCH_CHECK(hipMalloc((void **)&fields[0], (size_t)count * b.plane_bytes));
    for (int i = 1; i < count; i++) fields[i] = fields[0] + (size_t)i * b.cells;
  } else {
    for (int i = 0; i < count; i++) BENCH_CHECK(hipMalloc((void **)&fields[i], b.plane_bytes));
  }
}

/* Every field back to zero before a run (outside the timed part), so each
 * --repeat run computes what the first did. */
static inline void bench_zero(const bench &b, int count, float **fields, hipStream_t stream) {
  for (int i = 0; i < count; i++)
    BENCH_CHECK(hipMemcpyAsync(fields[i], b.zero, b.plane_bytes, hipMemcpyDeviceToDevice, stream));
  BENCH_CHECK(hipStreamSynchronize(stream));
}

/* One untimed launch: the module load (CUDA loads modules lazily). */
static inline void bench_warm_up(const bench &b, float **fields, hipStream_t stream) {
  bench_step(b, 0, fields[0], fields[1], fields[2], stream);
  BENCH_CHECK(hipStreamSynchronize(stream));
}

/* Whether step n's snapshot plane p (the field step p-2 wrote) is written out. */
static inline int bench_snapshot(const bench &b, int p) {
  return b.io && p > 1 && p < b.NT - 1;
}

/* The destination of every plane 1 < p < NT-1 (NULL elsewhere): one pinned
 * allocation each, or, with --pageable, addresses in one malloc'd array
 * (touched first, so the copies do not pay its page faults). */
static inline float **bench_planes(const bench &b) {
  float **planes = (float **)calloc(b.NT, sizeof(float *));
  if (!b.io) return planes;
  if (b.pageable) {
    float *all = (float *)malloc((size_t)b.NT * b.plane_bytes);
    memset(all, 0, (size_t)b.NT * b.plane_bytes);
    for (int p = 2; p < b.NT - 1; p++) planes[p] = all + (size_t)p * b.cells;
    return planes;
  }
  for (int p = 2; p < b.NT - 1; p++) {
    BENCH_CHECK(hipHostMalloc((void **)&planes[p], b.plane_bytes, hipHostMallocDefault));
    memset(planes[p], 0, b.plane_bytes);
  }
  return planes;
}

static inline void bench_free_planes(const bench &b, float **planes) {
  if (b.io && b.pageable) free(planes[2] - 2 * b.cells); /* the array's base */
  if (b.io && !b.pageable)
    for (int p = 2; p < b.NT - 1; p++) BENCH_CHECK(hipHostFree(planes[p]));
  free(planes);
}

/* The two timing events around a loop on `stream`. */
struct bench_timer {
  hipEvent_t start, stop;
};

static inline bench_timer bench_timer_create(void) {
  bench_timer t;
  BENCH_CHECK(hipEventCreateWithFlags(&t.start, hipEventDefault));
  BENCH_CHECK(hipEventCreateWithFlags(&t.stop, hipEventDefault));
  return t;
}

static inline void bench_timer_start(bench_timer &t, hipStream_t stream) {
  BENCH_CHECK(hipEventRecord(t.start, stream));
}

/* The stop event after everything issued on `stream`; waits for it. */
static inline float bench_timer_stop(bench_timer &t, hipStream_t stream) {
  BENCH_CHECK(hipEventRecord(t.stop, stream));
  BENCH_CHECK(hipEventSynchronize(t.stop));
  float ms = 0.0f;
  BENCH_CHECK(hipEventElapsedTime(&ms, t.start, t.stop));
  return ms;
}

static inline void bench_timer_destroy(bench_timer &t) {
  BENCH_CHECK(hipEventDestroy(t.start));
  BENCH_CHECK(hipEventDestroy(t.stop));
}

static inline void bench_report(const bench &b, const char *kind, double ms) {
  printf("The %s calculation took %f milliseconds.\n", kind, ms);
  if (!b.io) {
    const double points = (double)(b.N0 - 4) * (double)(b.N1 - 4) * b.NT;
    printf("  %.1f GPts/s, %.1f GB/s effective at 16 B/cell, %.3f us/step\n", points / ms / 1e6,
           points * 16.0 / ms / 1e6, ms * 1e3 / b.NT);
  }
}

/* array_out.dat from the planes (NULL: a zero plane), written to a temporary
 * name and renamed, after the timed part. */
static inline void bench_write(const bench &b, float *const *planes) {
  if (!b.io) return;
  const size_t len = strlen(b.out_path) + 8;
  char *tmp = (char *)malloc(len);
  snprintf(tmp, len, "%s.tmp", b.out_path);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    perror(tmp);
    exit(73);
  }
  float *zeros = (float *)calloc(b.cells, sizeof(float));
  for (int p = 0; p < b.NT; p++)
    if (fwrite(planes[p] ? planes[p] : zeros, sizeof(float), b.cells, f) != b.cells) {
      perror(tmp);
      exit(74);
    }
  if (fclose(f) != 0 || rename(tmp, b.out_path) != 0) {
    perror(b.out_path);
    exit(74);
  }
  free(zeros);
  free(tmp);
}

static inline void bench_finish(bench &b) {
  BENCH_CHECK(hipFree(b.V));
  BENCH_CHECK(hipFree(b.zero));
  free(b.amplitude);
}

/* The per-step-copy loop of the concurrent programs, five rotating fields:
 * step n on the compute stream writes field (n+2)%5, then IO stream (n+2)%5
 * waits for it (event written[]) and copies it into plane n+2. Before step n
 * overwrites field w = (n+2)%5, the copy of its previous content (plane
 * n-3) must be done: with host_sync the host waits for IO stream w
 * (hipStreamSynchronize, gflow's `streams`), else the compute stream waits
 * on event copied[w] (hipStreamWaitEvent, gflow's `events`; the host never
 * blocks, so the loop can also be captured into a graph). At the end the
 * compute stream waits for every copy, so an event recorded on it after
 * the loop covers them. Waits only on events recorded in this loop. */
struct bench_async {
  float *U[BENCH_RING];
  hipStream_t compute, io[BENCH_RING];
  hipEvent_t written[BENCH_RING], copied[BENCH_RING];
};

static inline void bench_async_create(const bench &b, bench_async &a) {
  bench_fields(b, BENCH_RING, a.U, 0);
  BENCH_CHECK(hipStreamCreateWithFlags(&a.compute, hipStreamNonBlocking));
  for (int i = 0; i < BENCH_RING; i++) {
    BENCH_CHECK(hipStreamCreateWithFlags(&a.io[i], hipStreamNonBlocking));
    BENCH_CHECK(hipEventCreateWithFlags(&a.written[i], hipEventDisableTiming));
    BENCH_CHECK(hipEventCreateWithFlags(&a.copied[i], hipEventDisableTiming));
  }
}

static inline void bench_async_loop(const bench &b, bench_async &a, float *const *planes,
                                    int host_sync) {
  int pending[BENCH_RING] = {0};
  for (int n = 0; n < b.NT; n++) {
    const int w = (n + 2) % BENCH_RING;
    if (pending[w] && host_sync) BENCH_CHECK(hipStreamSynchronize(a.io[w]));
    if (pending[w] && !host_sync) BENCH_CHECK(hipStreamWaitEvent(a.compute, a.copied[w], 0));
    pending[w] = 0;
    bench_step(b, n, a.U[n % BENCH_RING], a.U[(n + 1) % BENCH_RING], a.U[w], a.compute);
    if (!bench_snapshot(b, n + 2)) continue;
    BENCH_CHECK(hipEventRecord(a.written[w], a.compute));
    BENCH_CHECK(hipStreamWaitEvent(a.io[w], a.written[w], 0));
    BENCH_CHECK(
        hipMemcpyAsync(planes[n + 2], a.U[w], b.plane_bytes, hipMemcpyDeviceToHost, a.io[w]));
    BENCH_CHECK(hipEventRecord(a.copied[w], a.io[w]));
    pending[w] = 1;
  }
  for (int i = 0; i < BENCH_RING; i++)
    if (pending[i]) BENCH_CHECK(hipStreamWaitEvent(a.compute, a.copied[i], 0));
}

static inline void bench_async_destroy(bench_async &a) {
  for (int i = 0; i < BENCH_RING; i++) {
    BENCH_CHECK(hipEventDestroy(a.written[i]));
    BENCH_CHECK(hipEventDestroy(a.copied[i]));
    BENCH_CHECK(hipStreamDestroy(a.io[i]));
    BENCH_CHECK(hipFree(a.U[i]));
  }
  BENCH_CHECK(hipStreamDestroy(a.compute));
}
