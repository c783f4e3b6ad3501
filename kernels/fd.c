/* fd.c - what the wave, heat and stencil kernels share on the CPU side:
 * argument checks and the point sources. */
#include "fd.h"

#include <stdio.h>

int gf_fd_check_fields(const char *kernel, const gf_array *const *fields, const char *const *names,
                       const int *optional, int n, int radius, char *why, size_t why_size) {
  const gf_array *first = fields[0];
  for (int i = 0; i < n; i++) {
    const gf_array *a = fields[i];
    if (a->ndim == 0 && optional && optional[i]) continue;
    if (a->dtype != first->dtype) {
      snprintf(why, why_size, "%s is %s, %s is %s: %s needs one dtype", names[i],
               a->dtype == GF_F64 ? "f64" : "f32", names[0], first->dtype == GF_F64 ? "f64" : "f32",
               kernel);
      return 1;
    }
    int same = a->ndim == first->ndim;
    for (int d = 0; same && d < a->ndim; d++) same = a->shape[d] == first->shape[d];
    if (!same) {
      char s[2][64];
      for (int k = 0; k < 2; k++) {
        const gf_array *b = k ? first : a;
        int len = snprintf(s[k], sizeof s[k], "[");
        for (int d = 0; d < b->ndim; d++)
          len += snprintf(s[k] + len, sizeof s[k] - (size_t)len, "%s%lld", d ? ", " : "",
                          (long long)b->shape[d]);
        snprintf(s[k] + len, sizeof s[k] - (size_t)len, "]");
      }
      snprintf(why, why_size, "%s has shape %s, %s has %s", names[i], s[0], names[0], s[1]);
      return 1;
    }
  }
  if (first->halo < radius) {
    snprintf(why, why_size,
             "%s reads %d cell%s beyond each cell it updates: grid.halo must be >= %d, not %d",
             kernel, radius, radius == 1 ? "" : "s", radius, first->halo);
    return 1;
  }
  return 0;
}

int gf_fd_check_order(const char *kernel, int64_t order, char *why, size_t why_size) {
  if (gf_fd_radius(order)) return 0;
  snprintf(why, why_size, "%s: order must be 2, 4 or 8 (a constant), not %lld", kernel,
           (long long)order);
  return 1;
}

void gf_fd_add_sources(const gf_array *u, gf_box box, const gf_fd_forcing *forcing) {
  for (int64_t s = 0; s < forcing->sources.count; s++) {
    const gf_point *p = &forcing->sources.point[s];
    int64_t o = gf_fd_source_offset(u, box, p);
    if (o < 0) continue;
    if (u->dtype == GF_F64)
      ((double *)u->data)[o] += forcing->amplitude * p->weight;
    else
      ((float *)u->data)[o] += (float)forcing->amplitude * (float)p->weight;
  }
}

int64_t gf_fd_box_points(gf_box box) {
  int64_t n = 1;
  for (int d = 0; d < GF_MAX_DIMS; d++) n *= box.hi[d] > box.lo[d] ? box.hi[d] - box.lo[d] : 0;
  return n;
}

void gf_fd_for_rows(gf_fd_rows rows, void (*row)(const void *ctx, int64_t o, int64_t len),
                    const void *ctx) {
  /* Long rows (a 1-D grid is one) are cut into pieces for the threads. */
  const int64_t piece = 16384, pieces = rows.len ? (rows.len + piece - 1) / piece : 0;
  const int64_t n = rows.n_outer * rows.n_mid * pieces;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < n; t++) {
    int64_t r = t / pieces, first = (t % pieces) * piece;
    int64_t len = rows.len - first < piece ? rows.len - first : piece;
    row(ctx,
        rows.base + (r / rows.n_mid) * rows.stride_outer + (r % rows.n_mid) * rows.stride_mid +
            first,
        len);
  }
}
