/* stencil.hip - `stencil` on the GPU. in0's taps from fd_gpu.h's tile when
 * they lie on the axes, within 4 cells, in the tile's order (below), and
 * with them the inputs after in0 that are one tap at the cell; then the
 * remaining inputs' taps (and any list the tile does not take) from memory
 * cell by cell, added to `out` (a partial sum stored and read back is the
 * same value). Either way each cell's sum runs through fd_cell.h's
 * gf_fd_tap, input by input and tap by tap, as the CPU loop sums it; the
 * taps travel by value in the launch's arguments. */
#include "fd_gpu.h"
#include "stencil.h"

namespace {

using namespace gf_fd_gpu;

/* The tile's places for in0's taps, the order it sums them in: the cell,
 * then along axis 0 the cells -1, +1, -2, +2, ... R away, then axis 1, ...
 * (the order in which the loader expands {laplacian} and {derivative}, so a
 * list of named operators, and a leading [0, .., 0, c], is in that order). */
enum { kPlaces = 1 + 2 * GF_MAX_DIMS * GF_FD_MAX_RADIUS };
__host__ __device__ inline int place_of(int axis, int k, int radius) {
  return k == 0 ? 0 : 1 + axis * 2 * radius + 2 * ((k < 0 ? -k : k) - 1) + (k > 0);
}

/* out = in0's taps from the tile, then those of the inputs that follow it
 * with one tap at the cell. */
template <typename T>
struct StencilScheme {
  typedef T Type;
  enum { kPoints = GF_STENCIL_INPUTS - 1 };
  const T *in;             /* in0 */
  const T *point[kPoints]; /* the inputs after it with one tap at the cell (NULL: no more) */
  T point_coef[kPoints];   /* and their coefficients */
  T *out;
  uint32_t places; /* the places in0 has a tap at */
  T coef[kPlaces]; /* and their coefficients */

  /* The register march everywhere, as measured on an H100
   * (scripts/bench/fd-tiles.sh, of the copy): 2-D order 2 0.90 against
   * the point tile's 0.74, 3-D order 2 0.67 against 0.49; the
   * shared-memory tile was slower (order 8 2-D 0.57 against 0.79, 3-D 0.41
   * against 0.56). */
  static Tile tile(int, int) { return kMarchTile; }

  template <int NDIM, int R, typename At>
  __device__ __forceinline__ T cell(At at, const T *p) const {
    T acc = 0;
    if (places & 1u) acc = Fd<T>::tap(acc, coef[0], at(0, 0));
    GF_UNROLL for (int d = 0; d < NDIM; d++) GF_UNROLL for (int k = 1; k <= R; k++)
        GF_UNROLL for (int side = -1; side <= 1; side += 2) {
      const int place = place_of(d, side * k, R);
      if (places >> place & 1u) acc = Fd<T>::tap(acc, coef[place], at(d, side * k));
    }
    GF_UNROLL for (int i = 0; i < kPoints; i++) if (point[i]) acc =
        Fd<T>::tap(acc, point_coef[i], p[i]);
    return acc;
  }
};

/* in0's taps as places of a tile of radius *radius; false when one lies off
 * the axes, more than 4 cells away or out of the tile's order. */
template <typename T>
bool tile_places(const gf_stencil_args *a, StencilScheme<T> *s, int *radius) {
  const gf_points *taps = &a->taps[0];
  int64_t reach = 0;
  for (int64_t t = 0; t < taps->count; t++)
    for (int d = 0; d < a->out.ndim; d++) {
      const int64_t k = taps->point[t].at[d] < 0 ? -taps->point[t].at[d] : taps->point[t].at[d];
      reach = k > reach ? k : reach;
    }
  if (reach > GF_FD_MAX_RADIUS) return false;
  *radius = reach <= 1 ? 1 : reach <= 2 ? 2 : 4;
  s->places = 0;
  int last = -1;
  for (int64_t t = 0; t < taps->count; t++) {
    const gf_point *tap = &taps->point[t];
    int axis = 0, axes = 0;
    for (int d = 0; d < a->out.ndim; d++)
      if (tap->at[d]) axis = d, axes++;
    const int p = place_of(axis, (int)tap->at[axis], *radius);
    if (axes > 1 || p <= last) return false;
    s->places |= 1u << p;
    s->coef[p] = (T)tap->weight;
    last = p;
  }
  return true;
}

/* Inputs `from`.. of the plan, one thread a cell (fd_gpu.h's for_my_cells),
 * added to 0 (from 0) or to what `out` holds. */
template <typename T, typename Plan>
__global__ void __launch_bounds__(kBlockX)
    stencil_kernel(Plan p, int from, gf_fd_rows rows, int64_t align) {
  for_my_cells(
      rows, align,
      [&](int64_t o) {
        T acc = from ? p.out[o] : 0;
        for (int i = from; i < p.ninputs; i++)
          acc = Fd<T>::taps(acc, p.in[i], o, p.ntaps[i], p.offset[i], p.coef[i]);
        return acc;
      },
      [&](int64_t o, T acc) { p.out[o] = acc; });
}

template <typename T, typename Plan>
int launch(const gf_stencil_args *a, const Plan &plan, hipStream_t stream) {
  const gf_fd_rows rows = gf_fd_rows_of(&a->out, a->box);
  if (rows.len <= 0) return hipSuccess;
  StencilScheme<T> s;
  int radius = 0, from = 0;
  if (tile_places(a, &s, &radius)) {
    s.in = plan.in[0];
    s.out = plan.out;
    for (from = 1; from < plan.ninputs && from <= StencilScheme<T>::kPoints &&
                   plan.ntaps[from] == 1 && plan.offset[from][0] == 0;
         from++)
      s.point[from - 1] = plan.in[from], s.point_coef[from - 1] = plan.coef[from][0];
    for (int i = from; i <= StencilScheme<T>::kPoints; i++) s.point[i - 1] = NULL;
    hipError_t err = launch_tiles(s, radius, &a->out, a->box, stream);
    if (err != hipSuccess || from == plan.ninputs) return static_cast<int>(err);
  }
  const Grid grid = grid_of(rows, a->box, a->out.ndim);
  hipLaunchKernelGGL((stencil_kernel<T, Plan>), grid.grid, grid.block, 0, stream, plan, from, rows,
                     grid.align);
  return static_cast<int>(hipGetLastError());
}

}  // namespace

extern "C" int gf_stencil_launch_gpu(const void *args, void *stream) {
  const gf_stencil_args *a = static_cast<const gf_stencil_args *>(args);
  hipStream_t s = static_cast<hipStream_t>(stream);
  if (a->out.dtype == GF_F64) return launch<double>(a, gf_stencil_plan_of_f64(a), s);
  return launch<float>(a, gf_stencil_plan_of_f32(a), s);
}
