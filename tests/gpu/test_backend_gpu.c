/* test_backend_gpu.c - the GPU backend through its ops table.
 *
 * Built without GFLOW_WITH_GPU it checks the "built without GPU support"
 * answer. Built with it, on a machine where no GPU answers, it checks the
 * "no GPU found" answer and skips the rest (`--require-gpu` makes that a
 * failure, for runs on the GPU machine). With a GPU: the backend contract
 * (tests/backend_contract.h: every rule of backend.h, as on the CPU backend),
 * then what is the GPU backend's own: its description and device selection,
 * bytes free, wave2d_4o on the GPU against the CPU loop, and the exact
 * out-of-memory and bad-launch messages.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "builtin.h"
#include "check.h"
#include "wave2d.h"

#ifndef GFLOW_WITH_GPU

static void test_built_without_gpu(void) {
  gf_backend_options options = {.device = -1};
  gf_backend *b = (gf_backend *)&options; /* must be overwritten with NULL */
  char why[256] = "";
  CHECK_INT(gf_backend_gpu_create(&options, &b, why, sizeof why), GF_INTERNAL);
  CHECK(b == NULL);
  CHECK_STR(why, "gflow was built without GPU support (configure with -DGFLOW_GPU=CUDA or HIP)");
}

int main(void) {
  RUN(test_built_without_gpu);
  return check_summary();
}

#else

#include "backend_contract.h"
#include "gf_hip.h"

#define PIB (1ull << 50)

static gf_backend *open_gpu(int timing) {
  gf_backend_options options = {.device = 0, .timing = timing};
  gf_backend *b = NULL;
  char why[256] = "";
  if (gf_backend_gpu_create(&options, &b, why, sizeof why) != GF_OK) {
    fprintf(stderr, "gf_backend_gpu_create: %s\n", why);
    return NULL;
  }
  return b;
}

static const gf_tag no_tag = {-1, -1, -1};

/* ---- creation ---------------------------------------------------------- */

static void test_no_gpu_reported(void) {
  int count = 0;
  hipError_t err = hipGetDeviceCount(&count);
  char expected[256];
  if (err != hipSuccess)
    snprintf(expected, sizeof expected, "no GPU found: hipGetDeviceCount: %s: %s",
             hipGetErrorName(err), hipGetErrorString(err));
  else
    snprintf(expected, sizeof expected, "no GPU found: hipGetDeviceCount reports 0 devices");
  gf_backend_options options = {.device = -1};
  gf_backend *b = (gf_backend *)&options;
  char why[256] = "";
  CHECK_INT(gf_backend_gpu_create(&options, &b, why, sizeof why), GF_INTERNAL);
  CHECK(b == NULL);
  CHECK_STR(why, expected);
}

static void test_description(void) {
  unsetenv("SLURM_LOCALID");
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  gf_backend_options options = {.device = -1};
  gf_backend *b = NULL;
  char why[256] = "";
  CHECK_INT(gf_backend_gpu_create(&options, &b, why, sizeof why), GF_OK);
  if (!b) return;
  /* Expected from the runtime directly; the PCI address from the bus-id
   * string, a different source than the properties the backend reads. */
  hipDeviceProp_t props;
  char bus[64] = "";
  unsigned domain = 0, bus_number = 0, slot = 0, function = 0;
  CHECK_INT(hipGetDeviceProperties(&props, 0), hipSuccess);
  CHECK_INT(hipDeviceGetPCIBusId(bus, sizeof bus, 0), hipSuccess);
  CHECK_INT(sscanf(bus, "%x:%x:%x.%x", &domain, &bus_number, &slot, &function), 4);
  char expected[256];
  snprintf(expected, sizeof expected, "GPU 0: %.160s, %.1f GiB, PCI %04x:%02x:%02x.%x", props.name,
           (double)props.totalGlobalMem / 1073741824.0, domain, bus_number, slot, function);
  CHECK_STR(b->description, expected);
  CHECK_STR(b->name, "gpu");
  CHECK_INT(b->can_run_kernels_on_host_memory, 0);
  printf("  %s (bus id %s)\n", b->description, bus);
  b->ops->destroy(b);
}

static void expect_create_fails(const gf_backend_options *options, const char *expected) {
  gf_backend *b = NULL;
  char why[256] = "";
  CHECK_INT(gf_backend_gpu_create(options, &b, why, sizeof why), GF_INTERNAL);
  CHECK(b == NULL);
  CHECK_STR(why, expected);
  if (b) b->ops->destroy(b);
}

/* The backend opens GPU `device` with `options`. */
static void expect_create_gpu(const gf_backend_options *options, int device) {
  gf_backend *b = NULL;
  char why[256] = "", prefix[32];
  CHECK_INT(gf_backend_gpu_create(options, &b, why, sizeof why), GF_OK);
  snprintf(prefix, sizeof prefix, "GPU %d: ", device);
  if (b) {
    CHECK(strncmp(b->description, prefix, strlen(prefix)) == 0);
    b->ops->destroy(b);
  }
}

static void test_device_selection(void) {
  int count = 0;
  CHECK_INT(hipGetDeviceCount(&count), hipSuccess);
  char text[32], expected[256];
  snprintf(text, sizeof text, "%d", count);
  unsetenv("SLURM_LOCALID");
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");

  gf_backend_options explicit_device = {.device = count};
  snprintf(expected, sizeof expected, "no GPU %d (options): hipGetDeviceCount reports %d", count,
           count);
  expect_create_fails(&explicit_device, expected);

  /* A node-local rank (Slurm's, or MPI's from comm.h) picks rank % count:
   * ranks share the GPUs there are, so rank `count` takes GPU 0. */
  gf_backend_options from_env = {.device = -1};
  gf_backend_options from_mpi = {.device = -1, .local_rank = count};
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", text, 1); /* not read: MPI's own local rank is */
  expect_create_gpu(&from_mpi, 0);
  setenv("SLURM_LOCALID", text, 1); /* Slurm's variable comes first */
  expect_create_gpu(&from_env, 0);

  setenv("SLURM_LOCALID", "1x", 1);
  expect_create_fails(&from_env, "SLURM_LOCALID=1x is not a GPU index");

  setenv("SLURM_LOCALID", "0", 1);
  expect_create_gpu(&from_env, 0);
  unsetenv("SLURM_LOCALID");
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

/* ---- memory ------------------------------------------------------------ */

static void test_bytes_free(void) {
  gf_backend *b = open_gpu(0);
  if (!b) {
    CHECK(0);
    return;
  }
  size_t device_free = 0, device_total = 0;
  CHECK_INT(hipMemGetInfo(&device_free, &device_total), hipSuccess);
  for (int x = 0; x < GF_SPACE_COUNT; x++) CHECK(b->ops->bytes_free(b, (gf_space)x) > 0);
  CHECK(b->ops->bytes_free(b, GF_SPACE_DEVICE) <= device_total);
  b->ops->destroy(b);
}

static void test_out_of_memory(void) {
  gf_backend *b = open_gpu(0);
  if (!b) {
    CHECK(0);
    return;
  }
  void *p = (void *)&p;
#ifdef GFLOW_HIP_ON_CUDA
  const char *oom = "cudaErrorMemoryAllocation: out of memory";
#else
  const char *oom = "hipErrorOutOfMemory: out of memory";
#endif
  char expected[256];
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, PIB, NULL, &p), GF_INTERNAL);
  CHECK(p == NULL);
  snprintf(expected, sizeof expected, "hipMalloc: %s", oom);
  CHECK_STR(b->error, expected);

  CHECK_INT(b->ops->alloc(b, GF_SPACE_POOL, PIB, NULL, &p), GF_INTERNAL);
  CHECK(p == NULL);
  snprintf(expected, sizeof expected, "hipMallocAsync: %s", oom);
  CHECK_STR(b->error, expected);

  CHECK_INT(b->ops->alloc(b, GF_SPACE_HOST, PIB, NULL, &p), GF_INTERNAL);
  CHECK_STR(b->error, "malloc: 1125899906842624 bytes of host memory: Cannot allocate memory");

  /* Nothing sticks: the next allocation and a launch succeed. */
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, 1 << 20, NULL, &p), GF_OK);
  CHECK(p != NULL);
  b->ops->free(b, GF_SPACE_DEVICE, p, NULL);
  CHECK_INT(hipGetLastError(), hipSuccess);
  b->ops->destroy(b);
}

/* ---- wave2d_4o on the GPU against the CPU loop --------------------------- */

/* The seed's Ricker wavelet at step n (the HIP course's wave2d_sync.cpp): t = n*dt - 2*td,
 * a = pi^2*fm^2*t^2, (1 - 2a)*exp(-a). */
static double ricker(int n) {
  const double pi = 3.141592, vmax = 343.0, dt = (float)(0.4 / 343.0);
  const double fm = vmax / 10.0, td = sqrt(6.0) / (pi * fm);
  const double t = n * dt - 2.0 * td, a = pi * pi * fm * fm * t * t;
  return (1.0 - 2.0 * a) * exp(-a);
}

typedef struct wave_case {
  int64_t n0, n1;
  int halo, steps;
  int64_t source[2];
  int random_init; /* 0: fields 0 and V = 343; 1: pseudo-random everywhere, ring included */
} wave_case;

static uint32_t next_random(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

/* Runs the case on both and returns max |GPU - CPU| over all three ring
 * fields (the halo ring included); *max_u gets max |U| of the CPU result. */
static double run_wave_case(gf_backend *b, gf_stream *s, wave_case wc, double *max_u) {
  const size_t cells = (size_t)(wc.n0 * wc.n1), bytes = cells * sizeof(float);
  float *host[4], *device[4], *back = malloc(bytes);
  uint32_t state = 12345;
  for (int f = 0; f < 4; f++) {
    host[f] = malloc(bytes);
    for (size_t i = 0; i < cells; i++) {
      float r = (float)next_random(&state) / 16777216.0f; /* [0, 1) */
      if (f == 3)
        host[f][i] = wc.random_init ? 100.0f + 250.0f * r : 343.0f;
      else
        host[f][i] = wc.random_init ? 2.0f * r - 1.0f : 0.0f;
    }
    device[f] = NULL;
    CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, bytes, NULL, (void **)&device[f]), GF_OK);
    if (device[f]) CHECK_INT(b->ops->copy_async(b, s, device[f], host[f], bytes, no_tag), GF_OK);
  }
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK); /* before the CPU loop changes host[] */
  for (int n = 0; n < wc.steps && device[0] && device[1] && device[2] && device[3]; n++) {
    gf_wave2d_args on_cpu, on_gpu;
    memset(&on_cpu, 0, sizeof on_cpu);
    on_cpu.U0 = contract_field(host[n % 3], wc.n0, wc.n1, wc.halo);
    on_cpu.U1 = contract_field(host[(n + 1) % 3], wc.n0, wc.n1, wc.halo);
    on_cpu.U2 = contract_field(host[(n + 2) % 3], wc.n0, wc.n1, wc.halo);
    on_cpu.V = contract_field(host[3], wc.n0, wc.n1, wc.halo);
    on_cpu.dt = (float)(0.4 / 343.0);
    on_cpu.amplitude = ricker(n);
    on_cpu.source[0] = wc.source[0], on_cpu.source[1] = wc.source[1];
    on_cpu.box = (gf_box){{wc.halo, wc.halo, 0}, {wc.n0 - wc.halo, wc.n1 - wc.halo, 1}};
    on_gpu = on_cpu;
    on_gpu.U0.data = device[n % 3];
    on_gpu.U1.data = device[(n + 1) % 3];
    on_gpu.U2.data = device[(n + 2) % 3];
    on_gpu.V.data = device[3];
    gf_kernel_wave2d_4o.run_cpu(&on_cpu);
    gf_tag tag = {0, n, 0};
    CHECK_INT(b->ops->launch(b, s, &gf_kernel_wave2d_4o, &on_gpu, tag), GF_OK);
  }
  double max_diff = 0.0;
  *max_u = 0.0;
  for (int f = 0; f < 3; f++) {
    if (!device[f]) continue;
    CHECK_INT(b->ops->copy_async(b, s, back, device[f], bytes, no_tag), GF_OK);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
    for (size_t i = 0; i < cells; i++) {
      double d = fabs((double)back[i] - (double)host[f][i]);
      if (!(d <= max_diff)) max_diff = d; /* NaN sticks */
      if (fabs(host[f][i]) > *max_u) *max_u = fabs(host[f][i]);
    }
  }
  for (int f = 0; f < 4; f++) {
    b->ops->free(b, GF_SPACE_DEVICE, device[f], NULL);
    free(host[f]);
  }
  free(back);
  return max_diff;
}

static void check_wave_case(wave_case wc, int expect_nonzero) {
  gf_backend *b = open_gpu(0);
  if (!b) {
    CHECK(0);
    return;
  }
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  double max_u = 0.0;
  double diff = run_wave_case(b, s, wc, &max_u);
  printf("  %lld x %lld, halo %d, %d steps: max |U| %.6g, max |GPU - CPU| %.3g%s\n",
         (long long)wc.n0, (long long)wc.n1, wc.halo, wc.steps, max_u, diff,
         diff == 0.0 ? " (bit-identical)" : "");
  CHECK(diff <= 1e-5 * max_u);
  if (expect_nonzero) CHECK(max_u > 0.0);
  b->ops->stream_destroy(b, s);
  b->ops->destroy(b);
}

static void test_wave2d_seed_grid(void) {
  check_wave_case((wave_case){256, 256, 2, 50, {128, 128}, 0}, 1);
}

static void test_wave2d_odd_shape(void) {
  /* Neither dimension a multiple of the block; a wider halo; random data in
   * the ring, which must come back unchanged. */
  check_wave_case((wave_case){37, 71, 3, 5, {5, 60}, 1}, 1);
}

static void test_wave2d_source_in_halo(void) {
  check_wave_case((wave_case){40, 40, 2, 3, {1, 1}, 0}, 0);
}

static void test_wave2d_more_rows_than_one_grid(void) {
  /* 600000 rows: more than 65535 blocks of 8 rows, so rows loop. */
  check_wave_case((wave_case){600000, 9, 2, 3, {599990, 4}, 1}, 1);
}

static void test_wave2d_no_interior(void) {
  check_wave_case((wave_case){4, 9, 2, 2, {2, 2}, 1}, 1);
}

/* ---- failures ---------------------------------------------------------- */

static void test_bad_launches_reported(void) {
  gf_backend *b = open_gpu(0);
  if (!b) {
    CHECK(0);
    return;
  }
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  float *cells = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, 64 * sizeof(float), NULL, (void **)&cells), GF_OK);

  gf_kernel cpu_only = gf_kernel_wave2d_4o;
  cpu_only.name = "cpu_only";
  cpu_only.launch_gpu = NULL;
  gf_wave2d_args args;
  memset(&args, 0, sizeof args);
  args.U0 = args.U1 = args.U2 = args.V = contract_field(cells, 8, 8, 2);
  args.dt = 0.001;
  args.source[0] = args.source[1] = 4;
  args.box = (gf_box){{2, 2, 0}, {6, 6, 1}};
  CHECK_INT(b->ops->launch(b, s, &cpu_only, &args, no_tag), GF_INTERNAL);
  CHECK_STR(b->error, "kernel cpu_only has no GPU implementation");

  /* Rows of 2^40 cells need more blocks than a grid has: the runtime must
   * refuse the launch (nothing runs, nothing reads the 8x8 buffer). CUDA 13
   * answers a grid.x above 2^31-1 with "invalid argument" (seen on the H200). */
  gf_wave2d_args huge = args;
  huge.U0.shape[1] = huge.U1.shape[1] = huge.U2.shape[1] = huge.V.shape[1] = (1ll << 40) + 4;
  huge.box.hi[1] = (1ll << 40) + 2;
  CHECK_INT(b->ops->launch(b, s, &gf_kernel_wave2d_4o, &huge, no_tag), GF_INTERNAL);
#ifdef GFLOW_HIP_ON_CUDA
  CHECK_STR(b->error, "hipLaunchKernelGGL(wave2d_4o): cudaErrorInvalidValue: invalid argument");
#else
  const char *prefix = "hipLaunchKernelGGL(wave2d_4o): hipError"; /* not run on AMD yet */
  CHECK(strncmp(b->error, prefix, strlen(prefix)) == 0);
#endif
  /* Reported, not hung, and the backend still works. */
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  CHECK_INT(b->ops->launch(b, s, &gf_kernel_wave2d_4o, &args, no_tag), GF_OK);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  b->ops->free(b, GF_SPACE_DEVICE, cells, NULL);
  b->ops->stream_destroy(b, s);
  b->ops->destroy(b);
}

static int gpu_answers(void) {
  int count = 0;
  hipError_t err = hipGetDeviceCount(&count);
  if (err != hipSuccess) (void)hipGetLastError();
  return err == hipSuccess && count > 0;
}

int main(int argc, char **argv) {
  int require_gpu = argc > 1 && strcmp(argv[1], "--require-gpu") == 0;
  if (!gpu_answers()) {
    RUN(test_no_gpu_reported);
    printf("no GPU answers: GPU cases skipped\n");
    if (require_gpu) check_cases_failed++;
    return check_summary();
  }
  RUN(test_description);
  RUN(test_device_selection);
  gf_contract_run(open_gpu, "gpu");
  RUN(test_bytes_free);
  RUN(test_out_of_memory);
  RUN(test_wave2d_seed_grid);
  RUN(test_wave2d_odd_shape);
  RUN(test_wave2d_source_in_halo);
  RUN(test_wave2d_more_rows_than_one_grid);
  RUN(test_wave2d_no_interior);
  RUN(test_bad_launches_reported);
  return check_summary();
}

#endif
