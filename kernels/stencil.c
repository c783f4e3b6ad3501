/* stencil.c - `stencil`: parameter table, checks and the CPU loop. */
#include "stencil.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "builtin.h"

static int stencil_check(const void *args, char *why, size_t why_size) {
  const gf_stencil_args *a = args;
  const gf_array *fields[1 + GF_STENCIL_INPUTS] = {&a->out};
  const char *names[1 + GF_STENCIL_INPUTS] = {"out", "in0", "in1", "in2", "in3"};
  int optional[1 + GF_STENCIL_INPUTS] = {0, 0, 1, 1, 1};
  int reach = 0;
  for (int i = 0; i < GF_STENCIL_INPUTS; i++) {
    fields[1 + i] = &a->in[i];
    int given = a->in[i].ndim != 0;
    if (given != (a->taps[i].count != 0)) {
      snprintf(why, why_size, given ? "in%d has no taps%d" : "taps%d is given without in%d", i, i);
      return 1;
    }
    if (a->taps[i].count > GF_STENCIL_MAX_TAPS) {
      snprintf(why, why_size, "taps%d has %lld taps, at most %d", i, (long long)a->taps[i].count,
               GF_STENCIL_MAX_TAPS);
      return 1;
    }
    for (int64_t t = 0; t < a->taps[i].count; t++)
      for (int d = 0; d < GF_MAX_DIMS; d++) {
        int64_t o = llabs(a->taps[i].point[t].at[d]);
        if (o > reach) reach = o > 1000000 ? 1000000 : (int)o;
      }
  }
  return gf_fd_check_fields("stencil", fields, names, optional, 1 + GF_STENCIL_INPUTS, reach, why,
                            why_size);
}

static int64_t stencil_points(const void *args) {
  return gf_fd_box_points(((const gf_stencil_args *)args)->box);
}

/* A row in pieces of kPiece cells, the terms outermost: each pass over a
 * piece adds a run of terms to every cell's sum, as an `omp simd` loop over
 * the cells; every cell's sum still takes its terms in the order of
 * gf_fd_terms on the GPU, from 0. The first pass starts from 0 rather than a
 * zeroed sum and the last writes `out`, so a stencil of one pass is one
 * loop, as a hand-written one. A pass of up to kPass taps, or the first
 * pass of a star (a tap, then pairs: a Laplacian's cell and arms) of up to
 * kStar terms, is a loop with their count a constant (fully unrolled);
 * other runs with pairs sum the plan's terms in a loop of their own. The
 * unrolled kinds are few: each is compiled for every count, type, start
 * or not, and CPU (a 3-D order-8 star is 13 terms). Such a pass first
 * copies its offsets and coefficients into locals, which no store to the
 * sum can alias: read through the plan's pointers, the 3-D order-8 star
 * ran 5 to 20% slower (scripts/bench/FINDINGS.md, "The star's offsets
 * and coefficients in locals"). */
enum { kPiece = 512, kPass = 8, kStar = 13 };
enum { kTapsPass, kStarPass, kTermsPass }; /* a pass's kind */
#define STENCIL_CASE(S, FN, K, SUM, FROM)                        \
  case K: {                                                      \
    int64_t at[K];                                               \
    term_t by[K];                                                \
    for (int t = 0; t < K; t++) at[t] = off[t], by[t] = coef[t]; \
    _Pragma("omp simd") for (int64_t j = 0; j < n; j++) SUM[j] = \
        gf_fd_##FN##_##S(FROM, u, j, K, at, by);                 \
  } break;
/* clang-format off: one case a line (clang-format reflows this list differently on each run) */
#define STENCIL_CASES_2_TO_8(S, FN, SUM, FROM) \
  STENCIL_CASE(S, FN, 2, SUM, FROM)            \
  STENCIL_CASE(S, FN, 3, SUM, FROM)            \
  STENCIL_CASE(S, FN, 4, SUM, FROM)            \
  STENCIL_CASE(S, FN, 5, SUM, FROM)            \
  STENCIL_CASE(S, FN, 6, SUM, FROM)            \
  STENCIL_CASE(S, FN, 7, SUM, FROM)            \
  STENCIL_CASE(S, FN, 8, SUM, FROM)
#define STENCIL_TAPS(S, SUM, FROM)           \
  switch (k) {                               \
    STENCIL_CASE(S, taps, 1, SUM, FROM)      \
    STENCIL_CASES_2_TO_8(S, taps, SUM, FROM) \
  }
#define STENCIL_STAR(S, SUM)              \
  switch (k) {                            \
    STENCIL_CASES_2_TO_8(S, star, SUM, 0) \
    STENCIL_CASE(S, star, 9, SUM, 0)      \
    STENCIL_CASE(S, star, 10, SUM, 0)     \
    STENCIL_CASE(S, star, 11, SUM, 0)     \
    STENCIL_CASE(S, star, 12, SUM, 0)     \
    STENCIL_CASE(S, star, 13, SUM, 0)     \
  }
/* clang-format on */
#define STENCIL_TERMS(S, SUM, FROM)                            \
  _Pragma("omp simd") for (int64_t j = 0; j < n; j++) SUM[j] = \
      gf_fd_terms_##S(FROM, u, j, k, off, coef, pair);
#define STENCIL_ROW(T, S)                                                                       \
  /* k terms of u of one kind over n cells: sum = 0 + terms (start), sum += terms, */           \
  /* or out = sum + terms (last); acc is the piece's running sum. */                            \
  static inline __attribute__((always_inline)) void stencil_pass_##S(                           \
      T *restrict out, T *restrict acc, const T *restrict u, int64_t n, int k, int kind,        \
      const int64_t *off, const T *coef, const unsigned char *pair, int start, int last) {      \
    typedef T term_t; /* a coefficient, as STENCIL_CASE copies it */                            \
    T *restrict to = last ? out : acc;                                                          \
    if (kind == kTermsPass) {                                                                   \
      if (start) {                                                                              \
        STENCIL_TERMS(S, to, 0)                                                                 \
      } else if (last) {                                                                        \
        STENCIL_TERMS(S, out, acc[j])                                                           \
      } else {                                                                                  \
        STENCIL_TERMS(S, acc, acc[j])                                                           \
      }                                                                                         \
    } else if (kind == kStarPass) {                                                             \
      STENCIL_STAR(S, to)                                                                       \
    } else if (start) {                                                                         \
      STENCIL_TAPS(S, to, 0)                                                                    \
    } else if (last) {                                                                          \
      STENCIL_TAPS(S, out, acc[j])                                                              \
    } else {                                                                                    \
      STENCIL_TAPS(S, acc, acc[j])                                                              \
    }                                                                                           \
  }                                                                                             \
  GF_CPU_CLONES static void stencil_row_##S(const void *ctx, int64_t o, int64_t len) {          \
    const gf_stencil_plan_##S *p = ctx;                                                         \
    T acc[kPiece];                                                                              \
    for (int64_t first = o; first < o + len; first += kPiece) {                                 \
      const int64_t n = o + len - first < kPiece ? o + len - first : kPiece;                    \
      int start = 1;                                                                            \
      for (int i = 0; i < p->ninputs; i++)                                                      \
        for (int t = 0; t < p->nterms[i];) {                                                    \
          const unsigned char *pair = &p->pair[i][t];                                           \
          const int left = p->nterms[i] - t;                                                    \
          int kind = kTermsPass, k = 1;                                                         \
          if (start && left > 1 && !pair[0] && pair[1]) { /* a star: the tap, its pairs */      \
            kind = kStarPass;                                                                   \
            while (k < kStar && k < left && pair[k]) k++;                                       \
          } else if (!pair[0]) { /* taps */                                                     \
            kind = kTapsPass;                                                                   \
            while (k < kPass && k < left && !pair[k]) k++;                                      \
          } else { /* from a pair on: the rest of the input's terms */                          \
            k = left;                                                                           \
          }                                                                                     \
          int last = i == p->ninputs - 1 && k == left;                                          \
          stencil_pass_##S(p->out + first, acc, p->in[i] + first, n, k, kind, &p->offset[i][t], \
                           &p->coef[i][t], pair, start, last);                                  \
          start = 0;                                                                            \
          t += k;                                                                               \
        }                                                                                       \
    }                                                                                           \
  }
STENCIL_ROW(float, f32)
STENCIL_ROW(double, f64)

static void stencil_run_cpu(const void *args) {
  const gf_stencil_args *a = args;
  gf_fd_rows rows = gf_fd_rows_of(&a->out, a->box);
  if (a->out.dtype == GF_F64) {
    gf_stencil_plan_f64 p = gf_stencil_plan_of_f64(a);
    gf_fd_for_rows(rows, stencil_row_f64, &p);
  } else {
    gf_stencil_plan_f32 p = gf_stencil_plan_of_f32(a);
    gf_fd_for_rows(rows, stencil_row_f32, &p);
  }
}

#define F32_F64 ((1u << GF_F32) | (1u << GF_F64))
#define STENCIL_INPUT(i, required)                                                                \
  {"in" #i,                                                                                       \
   GF_PARAM_ARRAY,                                                                                \
   GF_ACCESS_READ,                                                                                \
   F32_F64,                                                                                       \
   offsetof(gf_stencil_args, in[i]),                                                              \
   required,                                                                                      \
   0,                                                                                             \
   0,                                                                                             \
   0,                                                                                             \
   "input field " #i},                                                                            \
  {                                                                                               \
    "taps" #i, GF_PARAM_TAPS, GF_ACCESS_NONE, 0, offsetof(gf_stencil_args, taps[i]), required, 0, \
        0, 0, "in" #i "'s taps: [[o0, o1, c], ...], {laplacian: ORDER, times: X}, ..."            \
  }

static const gf_param stencil_params[] = {
    {"out", GF_PARAM_ARRAY, GF_ACCESS_WRITE | GF_ACCESS_INTERIOR, F32_F64,
     offsetof(gf_stencil_args, out), 1, 0, 0, 0,
     "field written (its outer halo ring is never written)"},
    STENCIL_INPUT(0, 1),
    STENCIL_INPUT(1, 0),
    STENCIL_INPUT(2, 0),
    STENCIL_INPUT(3, 0),
    {"box", GF_PARAM_BOX, GF_ACCESS_NONE, 0, offsetof(gf_stencil_args, box), 0, 0, 0, 0,
     "cells this launch updates"},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

const gf_kernel gf_kernel_stencil = {
    .name = "stencil",
    .help =
        "a linear stencil declared in the workflow, on 1 to 4 input fields, 1-D to 3-D, f32|f64",
    .params = stencil_params,
    .args_size = sizeof(gf_stencil_args),
    .check = stencil_check,
    .points = stencil_points,
    .bytes_per_point = 8.0, /* one input, f32: read it, write out; +4 per further input */
    .run_cpu = stencil_run_cpu,
    .launch_gpu = GF_GPU_LAUNCHER(gf_stencil_launch_gpu),
    .stable = NULL,
    .equation =
        "out = sum over i of sum over (offset, c) in taps<i>: c * in<i>[cell + offset]\n"
        "summed in that order, from 0, a tap followed by its mirror image with the same\n"
        "c as one term, c * (in<i>[cell + offset] + in<i>[cell - offset]);\n"
        "a tap is [o0, o1, c] (one offset per grid axis),\n"
        "or a named operator expanded with the grid's spacing and summed into the taps:\n"
        "  {laplacian: ORDER, times: X}: X * central second differences over dx^2\n"
        "  {derivative: ORDER, axis: D, times: X}: X * central d/dx_D (ORDER 2, 4, 8)\n"
        "flops per point: 2 per tap, 3 per pair",
    .boundary =
        "updates the cells at least grid.halo from every edge (grid.halo >= the "
        "largest |offset|); the halo ring is never written and keeps its values",
    .flops_per_point = 10.0, /* a 2-D 5-point stencil */
};
