/* wave2d_common.hip - what the three seed schedules share (included, not built alone).
 *
 * The set-up, kernel and output of the HIP course's wave2d_sync.cpp,
 * wave2d_async_streams.cpp and wave2d_async_events.cpp ("Optimising compute
 * with concurrent IO in HIP"), exactly: float variables from double constants, uniform
 * velocity 343, the kernel with its clamped indices and on-device Ricker
 * term, array_out.dat of shape (NT, N0, N1). Options:
 *   --n0 N --n1 N   grid (256 x 256)
 *   --nt N          steps (default: the seed's formula, 640 at 256 x 256)
 *   --no-io         compute only: no snapshots, no output file
 *   --out PATH      where array_out.dat goes (default ./array_out.dat)
 *   --repeat R      run the time loop R times, report each (default 1)
 * As standalone programs they stop at the first HIP error, as the seed's
 * H_ERRCHK does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gf_hip.h"

#define BENCH_CHECK(call)                                                  \
  do {                                                                     \
    hipError_t bench_err_ = (call);                                        \
    if (bench_err_ != hipSuccess) {                                        \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,    \
              hipGetErrorName(bench_err_), hipGetErrorString(bench_err_)); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

typedef float float_type;

// Kernel to solve the wave equation with fourth-order accuracy in space (the seed's).
__global__ void wave2d_4o(float_type *U0, float_type *U1, float_type *U2, float_type *V, size_t N0,
                          size_t N1, float dt2, float inv_dx02, float inv_dx12, size_t P0,
                          size_t P1, float pi2fm2t2) {
  size_t i0 = blockIdx.y * blockDim.y + threadIdx.y;
  size_t i1 = blockIdx.x * blockDim.x + threadIdx.x;
  const int pad_l = 2, pad_r = 2, ncoeffs = 5;
  float coeffs[ncoeffs] = {-0.083333336f, 1.3333334f, -2.5f, 1.3333334f, -0.083333336f};
  i0 = min(i0, (size_t)(N0 - 1 - pad_r));
  i1 = min(i1, (size_t)(N1 - 1 - pad_r));
  i0 = max((size_t)pad_l, i0);
  i1 = max((size_t)pad_l, i1);
  long offset = i0 * N1 + i1;
  float temp0 = 0.0f, temp1 = 0.0f;
  float tempV = V[offset];
  for (long n = 0; n < ncoeffs; n++) {
    temp0 += coeffs[n] * U1[offset + (n * (long)N1) - (pad_l * (long)N1)];
    temp1 += coeffs[n] * U1[offset + n - pad_l];
  }
  U2[offset] = (2.0f * U1[offset]) - U0[offset] +
               ((dt2 * tempV * tempV) * (temp0 * inv_dx02 + temp1 * inv_dx12));
  if ((i0 == P0) && (i1 == P1)) {
    U2[offset] += (1.0f - 2.0f * pi2fm2t2) * exp(-pi2fm2t2);
  }
}

struct seed_setup {
  size_t N0, N1;
  int NT;
  int io;
  int repeat;
  const char *out_path;
  float dt, dt2, inv_dx02, inv_dx12, fm, td, pi;
  size_t P0, P1;
  dim3 block, grid;
};

static void usage(const char *program) {
  fprintf(stderr, "usage: %s [--n0 N] [--n1 N] [--nt N] [--no-io] [--out PATH] [--repeat R]\n",
          program);
  exit(64);
}

static long parse_positive(const char *program, const char *text) {
  char *end = NULL;
  long value = strtol(text, &end, 10);
  if (*end || value <= 0) usage(program);
  return value;
}

/* The seed's constants; its header defines them as double literals. */
static seed_setup seed_setup_from_args(int argc, char **argv) {
  seed_setup s = {};
  s.N0 = 256, s.N1 = 256, s.NT = -1, s.io = 1, s.repeat = 1, s.out_path = "array_out.dat";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-io"))
      s.io = 0;
    else if (i + 1 < argc && !strcmp(argv[i], "--n0"))
      s.N0 = (size_t)parse_positive(argv[0], argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--n1"))
      s.N1 = (size_t)parse_positive(argv[0], argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--nt"))
      s.NT = (int)parse_positive(argv[0], argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--repeat"))
      s.repeat = (int)parse_positive(argv[0], argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--out"))
      s.out_path = argv[++i];
    else
      usage(argv[0]);
  }
  if (s.N0 < 5 || s.N1 < 5) usage(argv[0]);
  const double D0 = 1.0, D1 = 1.0, CFL = 0.4;
  const float Vmax = 343.0f;
  s.pi = 3.141592f;
  s.dt = (float)(CFL * fmin(D0, D1) / Vmax);
  if (s.NT < 0) s.NT = (int)(fmax(D0 * s.N0, D1 * s.N1) / (s.dt * Vmax));
  s.fm = (float)(Vmax / (10.0 * fmax(D0, D1)));
  s.td = (float)(sqrt(6.0) / (s.pi * s.fm));
  s.dt2 = s.dt * s.dt;
  s.inv_dx02 = (float)(1.0 / (D0 * D0));
  s.inv_dx12 = (float)(1.0 / (D1 * D1));
  s.P0 = s.N0 / 2, s.P1 = s.N1 / 2;
  s.block = dim3(32, 8);
  s.grid = dim3((unsigned)((s.N1 + s.block.x - 1) / s.block.x),
                (unsigned)((s.N0 + s.block.y - 1) / s.block.y));
  printf("dt=%f, Vmax=%f\n", s.dt, Vmax);
  printf("dt=%g, fm=%g, Vmax=%g, dt2=%g, grid %zu x %zu, NT=%d%s\n", s.dt, s.fm, Vmax, s.dt2, s.N0,
         s.N1, s.NT, s.io ? "" : ", compute only");
  return s;
}

/* Shifted time and the Ricker argument of step n, in the seed's float arithmetic. */
static float seed_pi2fm2t2(const seed_setup &s, int n) {
  float t = n * s.dt - 2.0 * s.td;
  return s.pi * s.pi * s.fm * s.fm * t * t;
}

/* Every wavefield back to zero: before each run of the time loop, so a
 * --repeat run computes what the first did (outside the timed part). */
static void seed_zero_fields(const seed_setup &s, int nscratch, float_type **U_ds) {
  const size_t nbytes = s.N0 * s.N1 * sizeof(float_type);
  float_type *zeros = (float_type *)calloc(s.N0 * s.N1, sizeof(float_type));
  for (int i = 0; i < nscratch; i++)
    BENCH_CHECK(hipMemcpy(U_ds[i], zeros, nbytes, hipMemcpyHostToDevice));
  BENCH_CHECK(hipDeviceSynchronize());
  free(zeros);
}

/* nscratch wavefields and the velocity; one untimed launch so the timed loop
 * does not pay the module load (CUDA loads modules lazily). */
static void seed_fields(const seed_setup &s, int nscratch, float_type **U_ds, float_type **V_d) {
  const size_t nbytes = s.N0 * s.N1 * sizeof(float_type);
  float_type *host = (float_type *)malloc(nbytes);
  for (size_t i = 0; i < s.N0 * s.N1; i++) host[i] = 343.0f;
  BENCH_CHECK(hipMalloc((void **)V_d, nbytes));
  BENCH_CHECK(hipMemcpy(*V_d, host, nbytes, hipMemcpyHostToDevice));
  free(host);
  for (int i = 0; i < nscratch; i++) BENCH_CHECK(hipMalloc((void **)&U_ds[i], nbytes));
  seed_zero_fields(s, nscratch, U_ds);
  hipLaunchKernelGGL(wave2d_4o, s.grid, s.block, 0, 0, U_ds[0], U_ds[1], U_ds[2], *V_d, s.N0, s.N1,
                     s.dt2, s.inv_dx02, s.inv_dx12, s.P0, s.P1, seed_pi2fm2t2(s, 0));
  BENCH_CHECK(hipGetLastError());
  BENCH_CHECK(hipDeviceSynchronize());
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void seed_report(const seed_setup &s, const char *kind, double ms) {
  printf("The %s calculation took %f milliseconds.\n", kind, ms);
  if (!s.io) {
    const double points = (double)(s.N0 - 4) * (double)(s.N1 - 4) * s.NT;
    printf("  %.1f GPts/s, %.1f GB/s effective at 16 B/cell, %.2f us/step\n", points / ms / 1e6,
           points * 16.0 / ms / 1e6, ms * 1e3 / s.NT);
  }
}

static void seed_write(const seed_setup &s, const float_type *out_h) {
  if (!s.io) return;
  FILE *f = fopen(s.out_path, "wb");
  if (!f) {
    perror(s.out_path);
    exit(73);
  }
  const size_t count = (size_t)s.NT * s.N0 * s.N1;
  if (fwrite(out_h, sizeof(float_type), count, f) != count || fclose(f) != 0) {
    perror(s.out_path);
    exit(74);
  }
}
