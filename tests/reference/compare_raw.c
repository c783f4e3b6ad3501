/* compare_raw.c - compares two raw float32 (or, with --f64, float64) stacks
 * of planes.
 *
 *   compare_raw A.dat B.dat PLANE_ELEMS REL_TOL [--f64] [--zero-planes LIST] [--nonzero FIRST LAST]
 *
 * Passes when both files have the same size and max |A-B| <= REL_TOL * max |B|.
 * --zero-planes 0,1,639: those planes of A must be all zeros.
 * --nonzero F L: every plane F..L of A must hold a non-zero value.
 * Prints the figures either way; exit 0 on pass, 1 on fail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *load(const char *path, int f64, long *count) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *raw = malloc((size_t)bytes + 8);
  if (fread(raw, 1, (size_t)bytes, f) != (size_t)bytes) {
    perror(path);
    exit(2);
  }
  fclose(f);
  *count = bytes / (f64 ? 8 : 4);
  double *data = malloc((size_t)*count * sizeof *data + 8);
  for (long i = 0; i < *count; i++) {
    if (f64) {
      memcpy(&data[i], raw + 8 * i, 8);
    } else {
      float x;
      memcpy(&x, raw + 4 * i, 4);
      data[i] = x;
    }
  }
  free(raw);
  return data;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr,
            "usage: compare_raw A.dat B.dat PLANE_ELEMS REL_TOL [--f64] [--zero-planes LIST] "
            "[--nonzero F L]\n");
    return 2;
  }
  long na, nb, plane = atol(argv[3]);
  double tol = atof(argv[4]);
  int f64 = 0;
  for (int i = 5; i < argc; i++) f64 |= strcmp(argv[i], "--f64") == 0;
  double *a = load(argv[1], f64, &na), *b = load(argv[2], f64, &nb);
  int ok = 1;
  if (na != nb) {
    printf("sizes differ: %ld vs %ld values\n", na, nb);
    free(a);
    free(b);
    return 1;
  }
  double maxdiff = 0, maxref = 0;
  for (long i = 0; i < na; i++) {
    double d = fabs(a[i] - b[i]);
    if (!(d <= maxdiff)) maxdiff = d; /* NaN propagates */
    if (fabs(b[i]) > maxref) maxref = fabs(b[i]);
  }
  printf("max |diff| = %.9g, max |ref| = %.9g, ratio = %.3g (tolerance %.3g)\n", maxdiff, maxref,
         maxref > 0 ? maxdiff / maxref : maxdiff, tol);
  if (!(maxdiff <= tol * maxref)) ok = 0;
  for (int i = 5; i < argc; i++) {
    if (strcmp(argv[i], "--zero-planes") == 0 && i + 1 < argc) {
      char *list = strdup(argv[++i]);
      for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        long p = atol(tok);
        for (long k = 0; k < plane; k++)
          if (a[p * plane + k] != 0.0) {
            printf("plane %ld should be zero, element %ld is %g\n", p, k, a[p * plane + k]);
            ok = 0;
            break;
          }
      }
      free(list);
    } else if (strcmp(argv[i], "--nonzero") == 0 && i + 2 < argc) {
      long first = atol(argv[i + 1]), last = atol(argv[i + 2]);
      i += 2;
      for (long p = first; p <= last; p++) {
        int any = 0;
        for (long k = 0; k < plane && !any; k++) any = a[p * plane + k] != 0.0;
        if (!any) {
          printf("plane %ld should hold data but is all zeros\n", p);
          ok = 0;
          break;
        }
      }
    }
  }
  printf("%s\n", ok ? "PASS" : "FAIL");
  free(a);
  free(b);
  return ok ? 0 : 1;
}
