/* stencil.hip - `stencil` on the GPU. in0's taps from fd_gpu.h's tile when
 * they lie on the axes, within 4 cells, in the tile's order (below), and
 * with them the inputs after in0 that are one tap at the cell; then the
 * remaining inputs' taps (and any list the tile does not take) from memory
 * cell by cell, added to `out` (a partial sum stored and read back is the
 * same value). Either way each cell's sum runs through fd_cell.h's
 * gf_fd_tap and gf_fd_pair, input by input and term by term (a tap, or a
 * tap and its mirror image with the same coefficient: stencil.h), as the
 * CPU loop sums it; the taps travel by value in the launch's arguments. */
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
 * with one tap at the cell, up to P of them. The places -k and +k along an
 * axis are one term where `pairs` has the bit of -k's place. With kAll, in0
 * has a tap at every place of the tile's radius and every -k, +k is a pair
 * (a Laplacian's star, the common case), so no tap is tested: tested, each
 * tap of each cell cost a select beside its multiply and add (the PTX of
 * 2-D order 8: 320 of each a thread's batch), and the stencil ran at 0.79
 * of the copy where heat ran at 0.87. */
template <typename T, bool kAll, int P>
struct StencilScheme {
  typedef T Type;
  /* as heat (heat.hip); taps tested, capped registers spill (f64 2-D order 8: 348 bytes) */
  enum { kPoints = P, kSlotBarriers = 0, kCapMarch = kAll, kShortMarch = 0 };
  const T *in;             /* in0 */
  const T *point[kPoints]; /* the inputs after it with one tap at the cell (NULL: no more) */
  T point_coef[kPoints];   /* and their coefficients */
  T *out;
  uint32_t places; /* the places in0 has a tap at */
  uint32_t pairs;  /* the places -k whose tap and +k's are one term */
  T coef[kPlaces]; /* and their coefficients */

  /* The register march, as measured on an H100 (scripts/bench/fd-tiles.sh,
   * of the copy): with taps tested, 2-D order 2 0.90 against the point
   * tile's 0.74, 3-D order 2 0.67 against 0.49; the shared-memory tile was
   * slower (order 8 2-D 0.57 against 0.79, 3-D 0.41 against 0.56). The
   * star at 3-D order 8 takes the ring, as heat does (0.632 against the
   * march's 0.603 in f32); with taps tested nvcc spills the ring's
   * registers in f64. At 3-D order 2 in f32 the star took the point tile,
   * as heat did, until the march ran heat faster there on an H200. */
  static Tile tile(int ndim, int radius) {
    return kAll && ndim == 3 && radius == 4 ? kRingTile : kMarchTile;
  }

  /* no input after in0 (fd_gpu.h walks apart then: GF_FD_SPLIT) */
  __device__ bool plain() const {
    bool none = true;
    GF_UNROLL for (int i = 0; i < kPoints; i++) none = none && !point[i];
    return none;
  }

  template <int NDIM, int R, typename At>
  __device__ __forceinline__ T cell(At at, const T *p) const {
    T acc = 0;
    if (kAll || places & 1u) acc = Fd<T>::tap(acc, coef[0], at(0, 0));
    GF_UNROLL for (int d = 0; d < NDIM; d++) GF_UNROLL for (int k = 1; k <= R; k++) {
      const int minus = place_of(d, -k, R), plus = minus + 1;
      if (kAll || pairs >> minus & 1u) {
        acc = Fd<T>::pair(acc, coef[minus], at(d, -k), at(d, k));
      } else {
        if (places >> minus & 1u) acc = Fd<T>::tap(acc, coef[minus], at(d, -k));
        if (places >> plus & 1u) acc = Fd<T>::tap(acc, coef[plus], at(d, k));
      }
    }
    GF_UNROLL for (int i = 0; i < kPoints; i++) if (point[i]) acc =
        Fd<T>::tap(acc, point_coef[i], p[i]);
    return acc;
  }
};

/* in0's taps as places of a tile of radius *radius; false when one lies off
 * the axes, more than 4 cells away or out of the tile's order. */
template <typename T, bool kAll, int P>
bool tile_places(const gf_stencil_args *a, StencilScheme<T, kAll, P> *s, int *radius) {
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
  s->pairs = 0;
  int last = -1, paired = 0; /* paired: tap t is the second of a pair */
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
    /* a pair in the list's order is -k then +k here: the order above */
    if (!paired && gf_stencil_pair(taps, t)) {
      s->pairs |= 1u << p;
      paired = 1;
    } else {
      paired = 0;
    }
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
          acc = Fd<T>::terms(acc, p.in[i], o, p.nterms[i], p.offset[i], p.coef[i], p.pair[i]);
        return acc;
      },
      [&](int64_t o, T acc) { p.out[o] = acc; });
}

/* The inputs after in0 that the tile takes: from in1 on, those with one
 * tap at the cell. */
template <typename Plan>
int points_of(const Plan &plan) {
  int points = 0;
  while (1 + points < plan.ninputs && points < GF_STENCIL_INPUTS - 1 &&
         plan.nterms[1 + points] == 1 && plan.offset[1 + points][0] == 0)
    points++;
  return points;
}

/* The tile's part of the stencil, as scheme S: *from, the first input it
 * leaves to stencil_kernel. */
template <typename S, typename Plan>
hipError_t launch_tile(const gf_stencil_args *a, const Plan &plan, S &s, int radius, int points,
                       int *from, hipStream_t stream) {
  s.in = plan.in[0];
  s.out = plan.out;
  for (int i = 0; i < S::kPoints; i++) {
    s.point[i] = i < points ? plan.in[1 + i] : NULL;
    s.point_coef[i] = i < points ? plan.coef[1 + i][0] : 0;
  }
  *from = 1 + points;
  return launch_tiles(s, radius, &a->out, a->box, stream);
}

template <typename T, typename Plan>
int launch(const gf_stencil_args *a, const Plan &plan, hipStream_t stream) {
  const gf_fd_rows rows = gf_fd_rows_of(&a->out, a->box);
  if (rows.len <= 0) return hipSuccess;
  StencilScheme<T, false, GF_STENCIL_INPUTS - 1> s;
  int radius = 0, from = 0;
  if (tile_places(a, &s, &radius)) {
    const int points = points_of(plan);
    const uint32_t all = (2u << (2 * a->out.ndim * radius)) - 1; /* places 0 .. 2 ndim R */
    const uint32_t all_pairs = all & 0xAAAAAAAAu;                /* the places -k: 1, 3, ... */
    hipError_t err;
    if (s.places == all && s.pairs == all_pairs && points <= 1) {
      StencilScheme<T, true, 1> star;
      star.places = s.places;
      star.pairs = s.pairs;
      memcpy(star.coef, s.coef, sizeof star.coef);
      err = launch_tile(a, plan, star, radius, points, &from, stream);
    } else {
      err = launch_tile(a, plan, s, radius, points, &from, stream);
    }
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
