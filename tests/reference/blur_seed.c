/* blur_seed.c - an independent reference for gflow's decomposed runs: the
 * GhostExchange seed's blur on one whole grid, in plain C (no gflow code),
 * with tests/mpi/blur.yaml's initial field, its boundary condition after
 * every step (left/right columns, then bottom/top rows across the whole
 * width), and every step's field written as a plane.
 *
 *   blur_seed OUT.dat N0 N1 HALO STEPS copy|periodic|fixed:VALUE
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: blur_seed OUT.dat N0 N1 HALO STEPS copy|periodic|fixed:VALUE\n");
    return 2;
  }
  long N0 = atol(argv[2]), N1 = atol(argv[3]), h = atol(argv[4]), steps = atol(argv[5]);
  const char *bc = argv[6];
  double fixed = strncmp(bc, "fixed:", 6) == 0 ? atof(bc + 6) : 0;
  double *x = malloc(sizeof(double) * N0 * N1), *xn = malloc(sizeof(double) * N0 * N1);
  FILE *out = fopen(argv[1], "wb");
  if (!x || !xn || !out) return 1;
  for (long j = 0; j < N0; j++)
    for (long i = 0; i < N1; i++) x[j * N1 + i] = sin(0.37 * j) * cos(0.23 * i) + 0.001 * j * i;
  memcpy(xn, x, sizeof(double) * N0 * N1);
#define X(a, j, i) a[(j)*N1 + (i)]
  for (long n = 0; n < steps; n++) {
    for (long j = h; j < N0 - h; j++)
      for (long i = h; i < N1 - h; i++)
        X(xn, j, i) =
            (X(x, j, i) + X(x, j, i - 1) + X(x, j, i + 1) + X(x, j - 1, i) + X(x, j + 1, i)) / 5.0;
    /* the halo at the grid's edges: columns (owned rows), then rows (every column) */
    for (long j = h; j < N0 - h; j++)
      for (long k = 0; k < h; k++) {
        if (bc[0] == 'c') {
          X(xn, j, k) = X(xn, j, h);
          X(xn, j, N1 - 1 - k) = X(xn, j, N1 - 1 - h);
        } else if (bc[0] == 'p') {
          X(xn, j, k) = X(xn, j, N1 - 2 * h + k);
          X(xn, j, N1 - h + k) = X(xn, j, h + k);
        } else {
          X(xn, j, k) = X(xn, j, N1 - 1 - k) = fixed;
        }
      }
    for (long k = 0; k < h; k++)
      for (long i = 0; i < N1; i++) {
        if (bc[0] == 'c') {
          X(xn, k, i) = X(xn, h, i);
          X(xn, N0 - 1 - k, i) = X(xn, N0 - 1 - h, i);
        } else if (bc[0] == 'p') {
          X(xn, k, i) = X(xn, N0 - 2 * h + k, i);
          X(xn, N0 - h + k, i) = X(xn, h + k, i);
        } else {
          X(xn, k, i) = X(xn, N0 - 1 - k, i) = fixed;
        }
      }
    fwrite(xn, sizeof(double), (size_t)(N0 * N1), out);
    double *t = x;
    x = xn;
    xn = t;
  }
  fclose(out);
  free(x);
  free(xn);
  return 0;
}
