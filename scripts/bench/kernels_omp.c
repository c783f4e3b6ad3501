/* kernels_omp.c - the baselines of scripts/bench/kernels.sh on the CPU: the
 * schemes of gflow's `wave` and `heat` kernels (f32, or f64 with --f64) as
 * plain C + OpenMP loops, three (wave) or two (heat) rotating buffers, no
 * runner. A 1-D or 2-D grid is a 3-D one whose leading axes have one cell.
 * Prints GPts/s over the interior points updated (halo 4, as
 * kernel-workflow.sh's grids). The rows' loops are `omp simd`, as a careful
 * hand-written loop's would be: without it the compiler leaves orders 4
 * and 8 scalar (up to 10x slower than order 2).
 *
 * Its arrays are 2 MiB aligned and ask for huge pages (madvise), as gflow's
 * CPU backend allocates a large field; --4k: plain malloc (4 KiB pages where
 * transparent huge pages are left to the program).
 *
 *   kernels_omp [--f64] [--4k] wave|heat ORDER STEPS N0 [N1 [N2]]
 */
#define _DEFAULT_SOURCE /* madvise */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HALO = 4 };

static int small_pages; /* --4k */

static void *array(size_t bytes) {
  const size_t huge = (size_t)2 << 20, rounded = (bytes + huge - 1) / huge * huge;
  void *p = small_pages ? malloc(bytes) : aligned_alloc(huge, rounded);
  if (!p) {
    fprintf(stderr, "kernels_omp: cannot allocate %zu bytes\n", bytes);
    exit(1);
  }
  /* advice: where it fails the pages are ordinary ones */
  if (!small_pages) (void)madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

/* The central second differences of order 2R: c[0], then the cells k away. */
static const double c2[] = {-2.0, 1.0};
static const double c4[] = {-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0};
static const double c8[] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0};

/* One step of either scheme in type T, with the dimension D and radius R
 * known to the compiler (as a hand-written loop for one case would have them):
 *   wave: U2 = 2 U1 - U0 + dt^2 V^2 lap(U1);  heat: U2 = U1 + r lap(U1).
 * The grid is n[0] x n[1] x n[2], its last D axes the real ones. */
#define STEP(T, D, R)                                                                            \
  static inline T cell_##T##_##D##_##R(int wave, const T *restrict U0, const T *restrict U1,     \
                                       const T *restrict V, long o, const long s[3], const T *c, \
                                       T scale) {                                                \
    T lap = 0;                                                                                   \
    for (int d = 3 - D; d < 3; d++) {                                                            \
      T axis = c[0] * U1[o];                                                                     \
      for (int k = 1; k <= R; k++) axis += c[k] * (U1[o + k * s[d]] + U1[o - k * s[d]]);         \
      lap += axis;                                                                               \
    }                                                                                            \
    return wave ? 2 * U1[o] - U0[o] + scale * V[o] * V[o] * lap : U1[o] + scale * lap;           \
  }                                                                                              \
  static void step_##T##_##D##_##R(int wave, const T *restrict U0, const T *restrict U1,         \
                                   const T *restrict V, T *restrict U2, const long n[3],         \
                                   const T *c, T scale) {                                        \
    const long s[3] = {n[1] * n[2], n[2], 1};                                                    \
    long lo[3], hi[3];                                                                           \
    for (int d = 0; d < 3; d++)                                                                  \
      lo[d] = d >= 3 - D ? HALO : 0, hi[d] = d >= 3 - D ? n[d] - HALO : 1;                       \
    if (D == 1) {                                                                                \
      _Pragma("omp parallel for simd schedule(static)") for (long o = lo[2]; o < hi[2]; o++)     \
          U2[o] = cell_##T##_##D##_##R(wave, U0, U1, V, o, s, c, scale);                         \
      return;                                                                                    \
    }                                                                                            \
    _Pragma("omp parallel for collapse(2) schedule(static)") for (long i0 = lo[0]; i0 < hi[0];   \
                                                                  i0++) for (long i1 = lo[1];    \
                                                                             i1 < hi[1]; i1++) { \
      const long row = i0 * s[0] + i1 * s[1];                                                    \
      _Pragma("omp simd") for (long i2 = lo[2]; i2 < hi[2]; i2++) U2[row + i2] =                 \
          cell_##T##_##D##_##R(wave, U0, U1, V, row + i2, s, c, scale);                          \
    }                                                                                            \
  }
#define STEPS(T, D) \
  STEP(T, D, 1)     \
  STEP(T, D, 2)     \
  STEP(T, D, 4)
#define TYPE(T)                                                                                   \
  STEPS(T, 1)                                                                                     \
  STEPS(T, 2)                                                                                     \
  STEPS(T, 3)                                                                                     \
  typedef void (*step_fn_##T)(int, const T *, const T *, const T *, T *, const long *, const T *, \
                              T);                                                                 \
  static const step_fn_##T steps_##T[3][3] = {{step_##T##_1_1, step_##T##_1_2, step_##T##_1_4},   \
                                              {step_##T##_2_1, step_##T##_2_2, step_##T##_2_4},   \
                                              {step_##T##_3_1, step_##T##_3_2, step_##T##_3_4}};  \
  /* Seconds for `steps` steps on fresh buffers, touched before the clock starts */               \
  /* as gflow initialises its fields before its time loop. */                                     \
  static double run_##T(int wave, int ndim, int order, long steps, const long n[3]) {             \
    const double *c64 = order == 2 ? c2 : order == 4 ? c4 : c8;                                   \
    T c[5];                                                                                       \
    for (int k = 0; k <= order / 2; k++) c[k] = (T)c64[k];                                        \
    const long cells = n[0] * n[1] * n[2];                                                        \
    T *U[3], *V = array((size_t)cells * sizeof(T));                                               \
    for (int k = 0; k < 3; k++) U[k] = array((size_t)cells * sizeof(T));                          \
    _Pragma("omp parallel for") for (long i = 0; i < cells; i++) {                                \
      V[i] = 1;                                                                                   \
      U[0][i] = U[1][i] = U[2][i] = (T)(i % 7) * (T)0.01;                                         \
    }                                                                                             \
    const T scale = (T)0.01;                                                                      \
    const step_fn_##T step = steps_##T[ndim - 1][order == 2 ? 0 : order == 4 ? 1 : 2];            \
    double t0 = omp_get_wtime();                                                                  \
    for (long t = 0; t < steps; t++)                                                              \
      step(wave, U[t % 3], U[(t + 1) % 3], V, U[(t + 2) % 3], n, c, scale);                       \
    double seconds = omp_get_wtime() - t0;                                                        \
    for (int k = 0; k < 3; k++) free(U[k]);                                                       \
    free(V);                                                                                      \
    return seconds;                                                                               \
  }
TYPE(float)
TYPE(double)

int main(int argc, char **argv) {
  int f64 = argc > 1 && strcmp(argv[1], "--f64") == 0;
  argc -= f64, argv += f64;
  small_pages = argc > 1 && strcmp(argv[1], "--4k") == 0;
  argc -= small_pages, argv += small_pages;
  if (argc < 5 || argc > 7 || (strcmp(argv[1], "wave") && strcmp(argv[1], "heat"))) {
    fprintf(stderr, "usage: kernels_omp [--f64] [--4k] wave|heat ORDER STEPS N0 [N1 [N2]]\n");
    return 64;
  }
  const int wave = strcmp(argv[1], "wave") == 0, order = atoi(argv[2]);
  const long steps = atol(argv[3]);
  long n[3] = {1, 1, 1};
  int ndim = argc - 4;
  for (int d = 0; d < ndim; d++) n[3 - ndim + d] = atol(argv[4 + d]);
  double seconds =
      f64 ? run_double(wave, ndim, order, steps, n) : run_float(wave, ndim, order, steps, n);
  double points = (double)steps;
  for (int d = 0; d < 3; d++) points *= n[d] > 1 ? (double)(n[d] - 2 * HALO) : 1.0;
  printf("%.6f s %.6f GPts/s\n", seconds, points / seconds / 1e9);
  return 0;
}
