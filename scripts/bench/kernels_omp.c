/* kernels_omp.c - the baselines of scripts/bench/kernels.sh on the CPU: the
 * schemes of gflow's `wave` and `heat` kernels (f32) as plain C + OpenMP
 * loops, three (wave) or two (heat) rotating buffers, no runner. A 1-D or
 * 2-D grid is a 3-D one whose leading axes have one cell. Prints GPts/s over
 * the interior points updated (halo 4, as kernel-workflow.sh's grids).
 *
 *   kernels_omp wave|heat ORDER STEPS N0 [N1 [N2]]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HALO = 4 };

/* The central second differences of order 2R: c[0], then the cells k away. */
static const float c2[] = {-2.0f, 1.0f};
static const float c4[] = {-5.0f / 2.0f, 4.0f / 3.0f, -1.0f / 12.0f};
static const float c8[] = {-205.0f / 72.0f, 8.0f / 5.0f, -1.0f / 5.0f, 8.0f / 315.0f,
                           -1.0f / 560.0f};

/* One step of either scheme, with the dimension D and radius R known to
 * the compiler (as a hand-written loop for one case would have them):
 *   wave: U2 = 2 U1 - U0 + dt^2 V^2 lap(U1);  heat: U2 = U1 + r lap(U1).
 * The grid is n[0] x n[1] x n[2], its last D axes the real ones. */
#define STEP(D, R)                                                                                 \
  static inline float cell_##D##_##R(int wave, const float *restrict U0, const float *restrict U1, \
                                     const float *restrict V, long o, const long s[3],             \
                                     const float *c, float scale) {                                \
    float lap = 0;                                                                                 \
    for (int d = 3 - D; d < 3; d++) {                                                              \
      float axis = c[0] * U1[o];                                                                   \
      for (int k = 1; k <= R; k++) axis += c[k] * (U1[o + k * s[d]] + U1[o - k * s[d]]);           \
      lap += axis;                                                                                 \
    }                                                                                              \
    return wave ? 2.0f * U1[o] - U0[o] + scale * V[o] * V[o] * lap : U1[o] + scale * lap;          \
  }                                                                                                \
  static void step_##D##_##R(int wave, const float *restrict U0, const float *restrict U1,         \
                             const float *restrict V, float *restrict U2, const long n[3],         \
                             const float *c, float scale) {                                        \
    const long s[3] = {n[1] * n[2], n[2], 1};                                                      \
    long lo[3], hi[3];                                                                             \
    for (int d = 0; d < 3; d++)                                                                    \
      lo[d] = d >= 3 - D ? HALO : 0, hi[d] = d >= 3 - D ? n[d] - HALO : 1;                         \
    if (D == 1) {                                                                                  \
      _Pragma("omp parallel for schedule(static)") for (long o = lo[2]; o < hi[2]; o++) U2[o] =    \
          cell_##D##_##R(wave, U0, U1, V, o, s, c, scale);                                         \
      return;                                                                                      \
    }                                                                                              \
    _Pragma("omp parallel for collapse(2) schedule(static)") for (long i0 = lo[0]; i0 < hi[0];     \
                                                                  i0++) for (long i1 = lo[1];      \
                                                                             i1 < hi[1];           \
                                                                             i1++) for (long i2 =  \
                                                                                            lo[2]; \
                                                                                        i2 <       \
                                                                                        hi[2];     \
                                                                                        i2++) {    \
      const long o = i0 * s[0] + i1 * s[1] + i2;                                                   \
      U2[o] = cell_##D##_##R(wave, U0, U1, V, o, s, c, scale);                                     \
    }                                                                                              \
  }
#define STEPS(D) STEP(D, 1) STEP(D, 2) STEP(D, 4)
STEPS(1)
STEPS(2)
STEPS(3)

typedef void (*step_fn)(int, const float *, const float *, const float *, float *, const long *,
                        const float *, float);
static const step_fn steps_of[3][3] = {
    {step_1_1, step_1_2, step_1_4}, {step_2_1, step_2_2, step_2_4}, {step_3_1, step_3_2, step_3_4}};

int main(int argc, char **argv) {
  if (argc < 5 || argc > 7 || (strcmp(argv[1], "wave") && strcmp(argv[1], "heat"))) {
    fprintf(stderr, "usage: kernels_omp wave|heat ORDER STEPS N0 [N1 [N2]]\n");
    return 64;
  }
  const int wave = strcmp(argv[1], "wave") == 0, order = atoi(argv[2]);
  const long steps = atol(argv[3]);
  long n[3] = {1, 1, 1};
  int ndim = argc - 4;
  for (int d = 0; d < ndim; d++) n[3 - ndim + d] = atol(argv[4 + d]);
  const float *c = order == 2 ? c2 : order == 4 ? c4 : c8;
  const long cells = n[0] * n[1] * n[2];
  float *U[3], *V = malloc((size_t)cells * sizeof(float));
  for (int k = 0; k < 3; k++) U[k] = malloc((size_t)cells * sizeof(float));
    /* Touch every page before the clock starts, as gflow initialises its
     * fields before its time loop. */
#pragma omp parallel for
  for (long i = 0; i < cells; i++) {
    V[i] = 1.0f;
    U[0][i] = U[1][i] = U[2][i] = (float)(i % 7) * 0.01f;
  }
  const float scale = 0.01f;
  double t0 = omp_get_wtime();
  for (long t = 0; t < steps; t++) {
    const float *U0 = U[t % 3], *U1 = U[(t + 1) % 3];
    float *U2 = U[(t + 2) % 3];
    steps_of[ndim - 1][order == 2 ? 0 : order == 4 ? 1 : 2](wave, U0, U1, V, U2, n, c, scale);
  }
  double seconds = omp_get_wtime() - t0, points = (double)steps;
  for (int d = 0; d < 3; d++) points *= n[d] > 1 ? (double)(n[d] - 2 * HALO) : 1.0;
  printf("%.6f s %.6f GPts/s\n", seconds, points / seconds / 1e9);
  for (int k = 0; k < 3; k++) free(U[k]);
  free(V);
  return 0;
}
