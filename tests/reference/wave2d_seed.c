/* wave2d_seed.c - an independent reference for gflow's wave2d: the seed's
 * synchronous program (the HIP course's wave2d_sync.cpp) transliterated to plain C, with
 * its float arithmetic, its index clamping and its own Ricker wavelet. Shares
 * no code with gflow.
 *
 *   wave2d_seed OUT.dat [N0 N1]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D0 1.0
#define D1 1.0
#define CFL 0.4
#define VMAX 343.0

static size_t clampz(size_t v, size_t lo, size_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static void wave2d_4o(const float *U0, const float *U1, float *U2, const float *V, size_t N0,
                      size_t N1, float dt2, float inv_dx02, float inv_dx12, size_t P0, size_t P1,
                      float pi2fm2t2) {
  const int pad_l = 2, pad_r = 2, ncoeffs = 5;
  const float coeffs[5] = {-0.083333336f, 1.3333334f, -2.5f, 1.3333334f, -0.083333336f};
  /* Every "thread" of the seed's launch, clamped into the interior as the seed does. */
  for (size_t t0 = 0; t0 < N0; t0++)
    for (size_t t1 = 0; t1 < N1; t1++) {
      size_t i0 = clampz(t0, (size_t)pad_l, N0 - 1 - pad_r);
      size_t i1 = clampz(t1, (size_t)pad_l, N1 - 1 - pad_r);
      long offset = (long)(i0 * N1 + i1);
      float temp0 = 0.0f, temp1 = 0.0f;
      float tempV = V[offset];
      for (long n = 0; n < ncoeffs; n++) {
        temp0 += coeffs[n] * U1[offset + (n * (long)N1) - (pad_l * (long)N1)];
        temp1 += coeffs[n] * U1[offset + n - pad_l];
      }
      U2[offset] = (2.0f * U1[offset]) - U0[offset] +
                   ((dt2 * tempV * tempV) * (temp0 * inv_dx02 + temp1 * inv_dx12));
      if (i0 == P0 && i1 == P1 && t0 == i0 && t1 == i1)
        U2[offset] += (1.0f - 2.0f * pi2fm2t2) * expf(-pi2fm2t2);
    }
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 4) {
    fprintf(stderr, "usage: wave2d_seed OUT.dat [N0 N1]\n");
    return 64;
  }
  size_t N0 = argc == 4 ? (size_t)atol(argv[2]) : 256, N1 = argc == 4 ? (size_t)atol(argv[3]) : 256;
  float dt = (float)(CFL * fmin(D0, D1) / VMAX);
  int NT = (int)((int)fmax(D0 * N0, D1 * N1) / (dt * VMAX));
  float fm = (float)(VMAX / (10 * fmax(D0, D1)));
  float pi = 3.141592f;
  float td = (float)(sqrt(6.0) / (pi * fm));
  float dt2 = dt * dt, inv_dx02 = (float)(1.0 / (D0 * D0)), inv_dx12 = (float)(1.0 / (D1 * D1));
  size_t P0 = N0 / 2, P1 = N1 / 2, cells = N0 * N1;
  const int nscratch = 3;
  float *U[3], *V = malloc(cells * sizeof(float));
  for (int i = 0; i < nscratch; i++) U[i] = calloc(cells, sizeof(float));
  for (size_t i = 0; i < cells; i++) V[i] = (float)VMAX;
  FILE *out = fopen(argv[1], "wb");
  if (!out) {
    perror(argv[1]);
    return 73;
  }
  float *zero = calloc(cells, sizeof(float));
  for (int n = 0; n < NT; n++) {
    float *U0 = U[n % nscratch], *U1 = U[(n + 1) % nscratch], *U2 = U[(n + 2) % nscratch];
    float t = n * dt - 2.0 * td;
    float pi2fm2t2 = pi * pi * fm * fm * t * t;
    wave2d_4o(U0, U1, U2, V, N0, N1, dt2, inv_dx02, inv_dx12, P0, P1, pi2fm2t2);
    /* plane n holds U0 for 1 < n < NT-1, zeros otherwise */
    fwrite((n > 1 && n < NT - 1) ? U0 : zero, sizeof(float), cells, out);
  }
  fclose(out);
  for (int i = 0; i < nscratch; i++) free(U[i]);
  free(V);
  free(zero);
  printf("NT=%d dt=%.9g fm=%.9g td=%.9g\n", NT, dt, fm, td);
  return 0;
}
