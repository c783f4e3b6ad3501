/* wave2d_gflow_kernel.hip - gflow's own wave2d_4o GPU kernel alone, compute only.
 *
 * kernels/wave2d.hip's launcher (gf_wave2d_4o_launch_gpu) NT times back to
 * back on one stream, three rotating fields as in the sync schedule, the
 * Ricker amplitude of each step computed on the host. The same loop as
 * `wave2d_sync --no-io` with gflow's kernel in place of the seed's, so the
 * two compare kernel against kernel. Build it as gflow builds the kernel
 * (--fmad=false). Options: --n0 N --n1 N --nt N --repeat R.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wave2d.hip"

#define BENCH_CHECK(call)                                                  \
  do {                                                                     \
    hipError_t bench_err_ = (call);                                        \
    if (bench_err_ != hipSuccess) {                                        \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,    \
              hipGetErrorName(bench_err_), hipGetErrorString(bench_err_)); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static gf_array field_of(float *data, int64_t n0, int64_t n1) {
  gf_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = GF_F32;
  a.ndim = 2;
  a.shape[0] = n0, a.shape[1] = n1, a.shape[2] = 1;
  a.spacing[0] = a.spacing[1] = a.spacing[2] = 1.0;
  a.halo = 2;
  return a;
}

int main(int argc, char **argv) {
  int64_t n0 = 256, n1 = 256;
  int nt = 640, repeat = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--n0"))
      n0 = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--n1"))
      n1 = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--nt"))
      nt = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--repeat"))
      repeat = atoi(argv[i + 1]);
    else
      break;
  }
  if (argc % 2 == 0 || n0 < 5 || n1 < 5 || nt <= 0 || repeat <= 0) {
    fprintf(stderr, "usage: %s [--n0 N] [--n1 N] [--nt N] [--repeat R]\n", argv[0]);
    return 64;
  }
  const size_t cells = (size_t)(n0 * n1), bytes = cells * sizeof(float);
  float *U[3], *V = NULL, *host = (float *)malloc(bytes);
  for (size_t i = 0; i < cells; i++) host[i] = 343.0f;
  BENCH_CHECK(hipMalloc((void **)&V, bytes));
  BENCH_CHECK(hipMemcpy(V, host, bytes, hipMemcpyHostToDevice));
  memset(host, 0, bytes);
  for (int i = 0; i < 3; i++) BENCH_CHECK(hipMalloc((void **)&U[i], bytes));
  hipStream_t stream;
  BENCH_CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
  const double pi = 3.141592, vmax = 343.0, dt = (float)(0.4 / 343.0);
  const double fm = vmax / 10.0, td = sqrt(6.0) / (pi * fm);
  gf_wave2d_args args;
  memset(&args, 0, sizeof args);
  args.V = field_of(V, n0, n1);
  args.dt = dt;
  args.source[0] = n0 / 2, args.source[1] = n1 / 2;
  args.box.lo[0] = args.box.lo[1] = 2, args.box.lo[2] = 0;
  args.box.hi[0] = n0 - 2, args.box.hi[1] = n1 - 2, args.box.hi[2] = 1;
  for (int r = -1; r < repeat; r++) { /* r = -1: untimed warm-up run */
    for (int i = 0; i < 3; i++) BENCH_CHECK(hipMemcpy(U[i], host, bytes, hipMemcpyHostToDevice));
    BENCH_CHECK(hipDeviceSynchronize());
    const double start = now_ms();
    for (int n = 0; n < (r < 0 ? 1 : nt); n++) {
      const double t = n * dt - 2.0 * td, a = pi * pi * fm * fm * t * t;
      args.U0 = field_of(U[n % 3], n0, n1);
      args.U1 = field_of(U[(n + 1) % 3], n0, n1);
      args.U2 = field_of(U[(n + 2) % 3], n0, n1);
      args.amplitude = (1.0 - 2.0 * a) * exp(-a);
      BENCH_CHECK((hipError_t)gf_wave2d_4o_launch_gpu(&args, stream));
    }
    BENCH_CHECK(hipStreamSynchronize(stream));
    const double ms = now_ms() - start;
    if (r < 0) continue;
    const double points = (double)(n0 - 4) * (double)(n1 - 4) * nt;
    printf(
        "gflow kernel, %lld x %lld, %d steps: %f ms, %.1f GPts/s, %.1f GB/s effective at 16 "
        "B/cell, %.2f us/step\n",
        (long long)n0, (long long)n1, nt, ms, points / ms / 1e6, points * 16.0 / ms / 1e6,
        ms * 1e3 / nt);
  }
  for (int i = 0; i < 3; i++) BENCH_CHECK(hipFree(U[i]));
  BENCH_CHECK(hipFree(V));
  BENCH_CHECK(hipStreamDestroy(stream));
  free(host);
  return 0;
}
