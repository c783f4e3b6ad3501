/* backend_contract.h - the rules of runner/backend.h as one suite, run on
 * every backend: tests/test_backend_cpu.c on the CPU backend, and
 * tests/gpu/test_backend_gpu.c on the GPU (scripts/gpu/check.sh).
 *
 *   static gf_backend *open_mine(int timing) { ... }
 *   int failed = gf_contract_run(open_mine, "cpu");
 *
 * `open` creates a fresh backend (options.timing = `timing`) or returns NULL;
 * every case opens its own. Races are real: the slow work is a chain of
 * wave2d_4o steps long enough (CONTRACT_SLOW_NS, calibrated on the backend)
 * that work wrongly let through runs long before the chain ends, and every
 * result is compared byte for byte with the same chain run one operation at a
 * time (the backend's own kernel, so no tolerance). A case that would hang on
 * a broken backend (a wait that never ends) is stopped by a watchdog that
 * fails the whole program after CONTRACT_TIMEOUT_S.
 */
#ifndef GF_BACKEND_CONTRACT_H
#define GF_BACKEND_CONTRACT_H

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "builtin.h"
#include "check.h"
#include "wave2d.h"

#define CONTRACT_SLOW_NS (40 * 1000000LL)
#define CONTRACT_TIMEOUT_S 120
#define CONTRACT_SINK_LAUNCHES 1100 /* more than the GPU backend keeps pending */
/* Host clock window for sink reports, and the overlap one stream's reports may
 * show from rounding (GPU event times are floats of milliseconds). */
#define CONTRACT_WINDOW_NS (10 * 1000000LL)
#define CONTRACT_ROUNDING_NS 5000

typedef gf_backend *(*gf_contract_open)(int timing);

typedef struct contract_ctx {
  gf_contract_open open;
  const char *label;
  int64_t n;          /* grid edge of the slow chain */
  int steps;          /* steps in the slow chain */
  unsigned char *ref; /* the chain's three ring fields, run one operation at a time */
} contract_ctx;

static const gf_tag contract_no_tag = {-1, -1, -1};

static int64_t contract_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the watchdog ---------------------------------------------------- */

static const char *contract_case;

static void contract_timeout(int sig) {
  (void)sig;
  static const char before[] = "contract: ", after[] =
                                                 " did not finish in time (a wait that "
                                                 "never ends?)\nFAIL (watchdog)\n";
  ssize_t r = write(2, before, sizeof before - 1);
  r = write(2, contract_case, strlen(contract_case));
  r = write(2, after, sizeof after - 1);
  (void)r;
  _exit(1);
}

/* ---- the slow chain -------------------------------------------------- */

/* Three ring fields and a velocity in device memory, their initial values in
 * pinned memory. */
typedef struct contract_wave {
  int64_t n;
  size_t bytes;
  float *f[4];
  float *zeros, *velocity;
} contract_wave;

/* A 2-D f32 field of n0 x n1 cells with unit spacing (the wave2d tests'). */
static gf_array contract_field(void *data, int64_t n0, int64_t n1, int halo) {
  gf_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = GF_F32;
  a.ndim = 2;
  a.shape[0] = n0, a.shape[1] = n1, a.shape[2] = 1;
  a.spacing[0] = a.spacing[1] = a.spacing[2] = 1.0;
  a.halo = halo;
  return a;
}

static int contract_wave_open(gf_backend *b, int64_t n, contract_wave *w) {
  memset(w, 0, sizeof *w);
  w->n = n;
  w->bytes = (size_t)(n * n) * sizeof(float);
  int ok = 1;
  for (int i = 0; i < 4; i++)
    ok &= b->ops->alloc(b, GF_SPACE_DEVICE, w->bytes, NULL, (void **)&w->f[i]) == GF_OK;
  ok &= b->ops->alloc(b, GF_SPACE_PINNED, w->bytes, NULL, (void **)&w->zeros) == GF_OK;
  ok &= b->ops->alloc(b, GF_SPACE_PINNED, w->bytes, NULL, (void **)&w->velocity) == GF_OK;
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "  contract: allocating the wave fields: %s\n", b->error);
    return 0;
  }
  memset(w->zeros, 0, w->bytes);
  for (size_t i = 0; i < (size_t)(n * n); i++) w->velocity[i] = 343.0f;
  return 1;
}

static void contract_wave_close(gf_backend *b, contract_wave *w) {
  for (int i = 0; i < 4; i++) b->ops->free(b, GF_SPACE_DEVICE, w->f[i], NULL);
  b->ops->free(b, GF_SPACE_PINNED, w->zeros, NULL);
  b->ops->free(b, GF_SPACE_PINNED, w->velocity, NULL);
}

/* Issues: the fields back to their initial values. */
static void contract_wave_reset(gf_backend *b, gf_stream *s, contract_wave *w) {
  for (int i = 0; i < 3; i++)
    CHECK_INT(b->ops->copy_async(b, s, w->f[i], w->zeros, w->bytes, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->copy_async(b, s, w->f[3], w->velocity, w->bytes, contract_no_tag), GF_OK);
}

/* Issues step `step` of the chain; every step forces the source cell with a
 * different amplitude, so each one changes the result. */
static void contract_wave_step(gf_backend *b, gf_stream *s, contract_wave *w, int step,
                               gf_tag tag) {
  gf_wave2d_args a;
  memset(&a, 0, sizeof a);
  a.U0 = contract_field(w->f[step % 3], w->n, w->n, 2);
  a.U1 = contract_field(w->f[(step + 1) % 3], w->n, w->n, 2);
  a.U2 = contract_field(w->f[(step + 2) % 3], w->n, w->n, 2);
  a.V = contract_field(w->f[3], w->n, w->n, 2);
  a.dt = 0.4 / 343.0;
  a.amplitude = 1.0 + step;
  a.source[0] = a.source[1] = w->n / 2;
  a.box = (gf_box){{2, 2, 0}, {w->n - 2, w->n - 2, 1}};
  CHECK_INT(b->ops->launch(b, s, &gf_kernel_wave2d_4o, &a, tag), GF_OK);
}

static void contract_wave_chain(gf_backend *b, gf_stream *s, contract_wave *w, int steps) {
  for (int i = 0; i < steps; i++) contract_wave_step(b, s, w, i, contract_no_tag);
}

/* Issues: the three ring fields into `out` (3 * bytes, host memory). */
static void contract_wave_read(gf_backend *b, gf_stream *s, contract_wave *w, void *out) {
  for (int i = 0; i < 3; i++)
    CHECK_INT(b->ops->copy_async(b, s, (unsigned char *)out + i * w->bytes, w->f[i], w->bytes,
                                 contract_no_tag),
              GF_OK);
}

static void contract_expect_ref(const contract_ctx *c, const void *out, const char *what) {
  if (memcmp(out, c->ref, 3 * (size_t)(c->n * c->n) * sizeof(float)) != 0) {
    fprintf(stderr, "  contract %s: %s: the chain's result differs from the one run in order\n",
            c->label, what);
    CHECK(0);
  }
}

/* Picks the grid (host backends run kernels far slower) and the step count
 * that makes the chain last CONTRACT_SLOW_NS, and runs the reference. */
static int contract_calibrate(contract_ctx *c) {
  gf_backend *b = c->open(0);
  CHECK(b != NULL);
  if (!b) return 0;
  c->n = b->can_run_kernels_on_host_memory ? 256 : 4096;
  gf_stream *s = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  if (!s || !contract_wave_open(b, c->n, &w)) return 0;
  contract_wave_reset(b, s, &w);
  contract_wave_chain(b, s, &w, 2); /* warm-up: first launches load code, touch pages */
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  int64_t t0 = contract_now_ns();
  contract_wave_chain(b, s, &w, 4);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  int64_t per_step = (contract_now_ns() - t0) / 4 + 1;
  int64_t steps = CONTRACT_SLOW_NS / per_step + 1;
  c->steps = steps < 8 ? 8 : steps > 4000 ? 4000 : (int)steps;
  printf("  contract %s: slow chain of %d wave2d_4o steps on %lldx%lld (%.3f ms a step)\n",
         c->label, c->steps, (long long)c->n, (long long)c->n, (double)per_step / 1e6);

  c->ref = malloc(3 * w.bytes);
  contract_wave_reset(b, s, &w);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  for (int i = 0; i < c->steps; i++) {
    contract_wave_step(b, s, &w, i, contract_no_tag);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  }
  for (int i = 0; i < 3; i++) {
    void *dst = c->ref + i * w.bytes;
    CHECK_INT(b->ops->copy_async(b, s, w.zeros, w.f[i], w.bytes, contract_no_tag), GF_OK);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
    memcpy(dst, w.zeros, w.bytes);
  }
  contract_wave_close(b, &w);
  b->ops->stream_destroy(b, s);
  b->ops->destroy(b);
  return 1;
}

/* ---- rule 1: stream order -------------------------------------------- */

/* The read after the chain must see all of it, and the overwrite after the
 * read must not reach it. */
static void contract_stream_order(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  unsigned char *out = NULL, *again = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 3 * w.bytes, NULL, (void **)&out), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, w.bytes, NULL, (void **)&again), GF_OK);
  contract_wave_reset(b, s, &w);
  contract_wave_chain(b, s, &w, c->steps);
  contract_wave_read(b, s, &w, out);
  CHECK_INT(b->ops->copy_async(b, s, w.f[0], w.velocity, w.bytes, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->copy_async(b, s, again, w.f[0], w.bytes, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  contract_expect_ref(c, out, "read after the chain on one stream");
  CHECK(memcmp(again, w.velocity, w.bytes) == 0);
  b->ops->free(b, GF_SPACE_PINNED, out, NULL);
  b->ops->free(b, GF_SPACE_PINNED, again, NULL);
  contract_wave_close(b, &w);
  b->ops->destroy(b);
}

/* ---- rule 2: event_record and event_synchronize ----------------------- */

static void contract_event_synchronize(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL;
  gf_event *e = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  unsigned char *out = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 3 * w.bytes, NULL, (void **)&out), GF_OK);
  contract_wave_reset(b, s, &w);
  contract_wave_chain(b, s, &w, c->steps);
  contract_wave_read(b, s, &w, out);
  CHECK_INT(b->ops->event_record(b, e, s), GF_OK);
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);
  contract_expect_ref(c, out, "host read after event_synchronize");
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  b->ops->free(b, GF_SPACE_PINNED, out, NULL);
  contract_wave_close(b, &w);
  b->ops->event_destroy(b, e);
  b->ops->destroy(b);
}

/* ---- rule 3: stream_wait_event --------------------------------------- */

/* Stream B reads what stream A's chain produced, ordered only by an event;
 * the host waits for B alone. Round 1 re-records the event of round 0, round
 * 2 destroys it right after the wait. B has the high priority (the ghost
 * cells' stream has it): priority changes no order. */
static void contract_wait_orders_streams(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *a = NULL, *s = NULL;
  gf_event *e = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_URGENT, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  unsigned char *out = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 3 * w.bytes, NULL, (void **)&out), GF_OK);
  for (int round = 0; round < 3; round++) {
    memset(out, 0, 3 * w.bytes);
    contract_wave_reset(b, a, &w);
    contract_wave_chain(b, a, &w, c->steps);
    CHECK_INT(b->ops->event_record(b, e, a), GF_OK);
    CHECK_INT(b->ops->stream_wait_event(b, s, e), GF_OK);
    if (round == 2) {
      b->ops->event_destroy(b, e);
      e = NULL;
    }
    contract_wave_read(b, s, &w, out);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
    char what[64];
    snprintf(what, sizeof what, "stream B after waiting for A, round %d", round);
    contract_expect_ref(c, out, what);
    CHECK_INT(b->ops->synchronize(b), GF_OK);
  }
  b->ops->free(b, GF_SPACE_PINNED, out, NULL);
  contract_wave_close(b, &w);
  b->ops->destroy(b);
}

/* ---- rule 4: re-recording does not move an earlier wait --------------- */

/* B waits for the chain and a first marker on A, then reads the flag. A then
 * waits for B's read before writing a second marker, and the event is
 * re-recorded after that. A wait that moved to the re-recorded work would
 * wait for itself: the watchdog ends it. A wait that did nothing sees 0. */
static void contract_rerecord_keeps_wait(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *a = NULL, *s = NULL;
  gf_event *e = NULL, *read = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  CHECK_INT(b->ops->event_create(b, &read), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  enum { SMALL = 4096 };
  unsigned char *marker1 = NULL, *marker2 = NULL, *seen = NULL, *final = NULL, *flag = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, SMALL, NULL, (void **)&marker1), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, SMALL, NULL, (void **)&marker2), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, SMALL, NULL, (void **)&seen), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, SMALL, NULL, (void **)&final), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, SMALL, NULL, (void **)&flag), GF_OK);
  memset(marker1, 0x11, SMALL);
  memset(marker2, 0x22, SMALL);
  memset(seen, 0, SMALL);
  CHECK_INT(b->ops->copy_async(b, a, flag, seen, SMALL, contract_no_tag), GF_OK);
  contract_wave_reset(b, a, &w);
  CHECK_INT(b->ops->synchronize(b), GF_OK);

  contract_wave_chain(b, a, &w, c->steps);
  CHECK_INT(b->ops->copy_async(b, a, flag, marker1, SMALL, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->event_record(b, e, a), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, s, e), GF_OK);
  CHECK_INT(b->ops->copy_async(b, s, seen, flag, SMALL, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->event_record(b, read, s), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, a, read), GF_OK);
  CHECK_INT(b->ops->copy_async(b, a, flag, marker2, SMALL, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->event_record(b, e, a), GF_OK); /* while the chain still runs */
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  CHECK(memcmp(seen, marker1, SMALL) == 0);
  CHECK_INT(b->ops->copy_async(b, s, final, flag, SMALL, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  CHECK(memcmp(final, marker2, SMALL) == 0);
  /* The re-recorded event covers the second marker. */
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);

  b->ops->free(b, GF_SPACE_PINNED, marker1, NULL);
  b->ops->free(b, GF_SPACE_PINNED, marker2, NULL);
  b->ops->free(b, GF_SPACE_PINNED, seen, NULL);
  b->ops->free(b, GF_SPACE_PINNED, final, NULL);
  b->ops->free(b, GF_SPACE_DEVICE, flag, NULL);
  contract_wave_close(b, &w);
  b->ops->event_destroy(b, e);
  b->ops->event_destroy(b, read);
  b->ops->destroy(b);
}

/* ---- rule 5: an unrecorded event is complete -------------------------- */

static void contract_unrecorded_event(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL;
  gf_event *e = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  enum { SMALL = 4096 };
  unsigned char *from = NULL, *to = NULL, *dev = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, SMALL, NULL, (void **)&from), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, SMALL, NULL, (void **)&to), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, SMALL, NULL, (void **)&dev), GF_OK);
  if (!from || !to || !dev) return;
  for (int i = 0; i < SMALL; i++) from[i] = (unsigned char)(i * 7 + 3), to[i] = 0;
  int64_t t0 = contract_now_ns();
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, s, e), GF_OK);
  CHECK_INT(b->ops->copy_async(b, s, dev, from, SMALL, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->copy_async(b, s, to, dev, SMALL, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  CHECK(memcmp(to, from, SMALL) == 0);
  int64_t waited_ns = contract_now_ns() - t0;
  if (waited_ns > 1000000000LL) {
    fprintf(stderr, "  contract %s: waiting on an unrecorded event took %.3f s\n", c->label,
            (double)waited_ns / 1e9);
    CHECK(0);
  }
  /* Once recorded it is an ordinary event. */
  CHECK_INT(b->ops->event_record(b, e, s), GF_OK);
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);
  b->ops->free(b, GF_SPACE_PINNED, from, NULL);
  b->ops->free(b, GF_SPACE_PINNED, to, NULL);
  b->ops->free(b, GF_SPACE_DEVICE, dev, NULL);
  b->ops->event_destroy(b, e);
  b->ops->stream_destroy(b, s);
  b->ops->destroy(b);
}

/* ---- rule 6: copies between every pair of spaces ----------------------- */

/* Pattern -> an ordinary block in space x -> a stream-ordered block in space
 * y -> result, on one stream; x's block is freed on the stream before the
 * host waits (rule 7), y's after, ordinarily. */
static void contract_copy_every_space(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  const size_t bytes = (1u << 20) + 12; /* not a multiple of any copy granule */
  unsigned char *pattern = NULL, *result = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_HOST, bytes, NULL, (void **)&pattern), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_HOST, bytes, NULL, (void **)&result), GF_OK);
  if (!pattern || !result) return;
  for (int x = 0; x < GF_SPACE_COUNT; x++)
    for (int y = 0; y < GF_SPACE_COUNT; y++) {
      for (size_t i = 0; i < bytes; i++) pattern[i] = (unsigned char)(i * 131u + x * 7u + y);
      memset(result, 0, bytes);
      void *src = NULL, *dst = NULL;
      CHECK_INT(b->ops->alloc(b, (gf_space)x, bytes, NULL, &src), GF_OK);
      CHECK_INT(b->ops->alloc(b, (gf_space)y, bytes, s, &dst), GF_OK);
      if (!src || !dst) {
        fprintf(stderr, "  contract %s: alloc %s/%s: %s\n", c->label, gf_space_name((gf_space)x),
                gf_space_name((gf_space)y), b->error);
        continue;
      }
      CHECK_INT(b->ops->copy_async(b, s, src, pattern, bytes, contract_no_tag), GF_OK);
      CHECK_INT(b->ops->copy_async(b, s, dst, src, bytes, contract_no_tag), GF_OK);
      b->ops->free(b, (gf_space)x, src, s);
      CHECK_INT(b->ops->copy_async(b, s, result, dst, bytes, contract_no_tag), GF_OK);
      CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
      if (memcmp(result, pattern, bytes) != 0) {
        fprintf(stderr, "  contract %s: copy %s -> %s changed the data\n", c->label,
                gf_space_name((gf_space)x), gf_space_name((gf_space)y));
        CHECK(0);
      }
      b->ops->free(b, (gf_space)y, dst, NULL);
    }
  b->ops->free(b, GF_SPACE_HOST, pattern, NULL);
  b->ops->free(b, GF_SPACE_HOST, result, NULL);
  b->ops->destroy(b);
}

/* ---- rule 7: stream-ordered alloc and free ----------------------------- */

/* In every space: a block allocated on a stream behind the slow chain, used
 * by copies queued behind it and freed on the stream at once; another stream
 * then allocates the same size and scribbles over it. A free that released
 * the block early hands it to the scribbler (or, under AddressSanitizer, is
 * reported as a use after free). */
static void contract_stream_ordered_free(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL, *t = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &t), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  const size_t bytes = 1u << 16;
  unsigned char *pattern = NULL, *junk = NULL, *result = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, bytes, NULL, (void **)&pattern), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, bytes, NULL, (void **)&junk), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, GF_SPACE_COUNT * bytes, NULL, (void **)&result),
            GF_OK);
  if (!pattern || !junk || !result) return;
  for (size_t i = 0; i < bytes; i++) pattern[i] = (unsigned char)(i * 29u + 5u);
  memset(junk, 0xEE, bytes);
  memset(result, 0, GF_SPACE_COUNT * bytes);
  contract_wave_reset(b, s, &w);
  contract_wave_chain(b, s, &w, c->steps);
  for (int x = 0; x < GF_SPACE_COUNT; x++) {
    void *p = NULL, *q = NULL;
    CHECK_INT(b->ops->alloc(b, (gf_space)x, bytes, s, &p), GF_OK);
    if (!p) continue;
    CHECK_INT(b->ops->copy_async(b, s, p, pattern, bytes, contract_no_tag), GF_OK);
    CHECK_INT(b->ops->copy_async(b, s, result + x * bytes, p, bytes, contract_no_tag), GF_OK);
    b->ops->free(b, (gf_space)x, p, s);
    CHECK_INT(b->ops->alloc(b, (gf_space)x, bytes, t, &q), GF_OK);
    if (!q) continue;
    CHECK_INT(b->ops->copy_async(b, t, q, junk, bytes, contract_no_tag), GF_OK);
    b->ops->free(b, (gf_space)x, q, t);
  }
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  for (int x = 0; x < GF_SPACE_COUNT; x++)
    if (memcmp(result + x * bytes, pattern, bytes) != 0) {
      fprintf(stderr, "  contract %s: %s block freed on its stream before its copies ran\n",
              c->label, gf_space_name((gf_space)x));
      CHECK(0);
    }
  b->ops->free(b, GF_SPACE_PINNED, pattern, NULL);
  b->ops->free(b, GF_SPACE_PINNED, junk, NULL);
  b->ops->free(b, GF_SPACE_PINNED, result, NULL);
  contract_wave_close(b, &w);
  b->ops->destroy(b);
}

/* ---- rule 8: synchronize waits for every stream ------------------------ */

static void contract_synchronize_all(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s[3] = {NULL, NULL, NULL};
  contract_wave w[2];
  unsigned char *out[2] = {NULL, NULL};
  for (int i = 0; i < 3; i++) CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s[i]), GF_OK);
  for (int i = 0; i < 2; i++) {
    if (!contract_wave_open(b, c->n, &w[i])) return;
    CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 3 * w[i].bytes, NULL, (void **)&out[i]), GF_OK);
  }
  for (int i = 0; i < 2; i++) {
    contract_wave_reset(b, s[i], &w[i]);
    contract_wave_chain(b, s[i], &w[i], c->steps);
    contract_wave_read(b, s[i], &w[i], out[i]);
  }
  CHECK_INT(b->ops->synchronize(b), GF_OK); /* s[2] has nothing to do */
  contract_expect_ref(c, out[0], "first stream after synchronize");
  contract_expect_ref(c, out[1], "second stream after synchronize");
  for (int i = 0; i < 2; i++) {
    b->ops->free(b, GF_SPACE_PINNED, out[i], NULL);
    contract_wave_close(b, &w[i]);
  }
  b->ops->destroy(b);
}

/* ---- rule 9: failures ---------------------------------------------------- */

static void contract_expect_failure(gf_backend *b, gf_status st, const char *what) {
  CHECK_INT(st, GF_INTERNAL);
  if (st == GF_INTERNAL && !b->error[0]) {
    fprintf(stderr, "  contract %s: %s failed without a cause in b->error\n", b->name, what);
    CHECK(0);
  }
}

static void contract_failures_reported(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  for (int x = 0; x <= GF_SPACE_COUNT; x++)
    for (int ordered = 0; ordered < 2; ordered++) {
      size_t bytes = x == GF_SPACE_COUNT ? 64 : SIZE_MAX; /* no such space / no such memory */
      void *p = &p;
      b->error[0] = '\0';
      contract_expect_failure(b, b->ops->alloc(b, (gf_space)x, bytes, ordered ? s : NULL, &p),
                              "alloc");
      CHECK(p == NULL);
    }
  gf_kernel none = gf_kernel_wave2d_4o;
  none.name = "contract_none";
  none.run_cpu = NULL;
  none.launch_gpu = NULL;
  contract_wave w;
  if (!contract_wave_open(b, 16, &w)) return;
  gf_wave2d_args args;
  memset(&args, 0, sizeof args);
  args.U0 = args.U1 = args.U2 = args.V = contract_field(w.f[0], 16, 16, 2);
  b->error[0] = '\0';
  contract_expect_failure(b, b->ops->launch(b, s, &none, &args, contract_no_tag), "launch");
  /* Nothing sticks: the backend still runs work. */
  contract_wave_reset(b, s, &w);
  contract_wave_chain(b, s, &w, 3);
  CHECK_INT(b->ops->copy_async(b, s, w.zeros, w.f[3], w.bytes, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  CHECK(memcmp(w.zeros, w.velocity, w.bytes) == 0);
  contract_wave_close(b, &w);
  b->ops->destroy(b);
}

/* ---- rule 10: the operation sink ------------------------------------------ */

typedef struct contract_sink {
  pthread_mutex_t lock;
  gf_op_timing *reports;
  int count, cap;
} contract_sink;

static void contract_sink_report(void *user, const gf_op_timing *timing) {
  contract_sink *k = user;
  pthread_mutex_lock(&k->lock);
  if (k->count == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 1024;
    k->reports = realloc(k->reports, (size_t)k->cap * sizeof *k->reports);
  }
  k->reports[k->count++] = *timing;
  pthread_mutex_unlock(&k->lock);
}

/* A sampling sink's choice: every third operation, by step. */
static int contract_sink_times(void *user, gf_tag tag) {
  (void)user;
  return tag.step % 3 == 0;
}

/* The work: on stream 0 launches (task 0), on stream 1 copies of distinct
 * sizes (task 1) and one of gflow's own (task -1); step numbers are unique.
 * Returns how many operations it issued, their descriptions in `expected`. */
static int contract_sink_work(gf_backend *b, gf_stream *s[2], contract_wave *w, unsigned char *host,
                              gf_op_timing *expected) {
  int n = 0;
  for (int i = 0; i < CONTRACT_SINK_LAUNCHES; i++, n++) {
    expected[n] = (gf_op_timing){.tag = {0, n, 0}, .kind = GF_TIMED_LAUNCH, .bytes = 0};
    contract_wave_step(b, s[0], w, i, expected[n].tag);
  }
  for (int i = 0; i < 4; i++, n++) {
    size_t bytes = w->bytes - 4 * (size_t)i;
    gf_tag tag = {i < 3 ? 1 : -1, n, 1};
    expected[n] = (gf_op_timing){.tag = tag, .kind = GF_TIMED_COPY, .bytes = bytes};
    CHECK_INT(b->ops->copy_async(b, s[1], host, w->f[3], bytes, tag), GF_OK);
  }
  return n;
}

/* A backend for the sink's work: two streams, the fields, a pinned buffer;
 * NULL when the fields cannot be made. */
static gf_backend *contract_sink_open(const contract_ctx *c, int timing, gf_stream *s[2],
                                      contract_wave *w, unsigned char **host) {
  gf_backend *b = c->open(timing);
  for (int i = 0; i < 2; i++) CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s[i]), GF_OK);
  if (!contract_wave_open(b, 16, w)) return NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, w->bytes, NULL, (void **)host), GF_OK);
  return b;
}

static void contract_sink_close(gf_backend *b, contract_wave *w, unsigned char *host) {
  b->sink = (gf_op_sink){NULL, NULL, 0, NULL};
  b->ops->free(b, GF_SPACE_PINNED, host, NULL);
  contract_wave_close(b, w);
  b->ops->destroy(b);
}

static void contract_sink_reports(const contract_ctx *c) {
  contract_sink k = {.lock = PTHREAD_MUTEX_INITIALIZER};
  gf_op_timing *expected = calloc(CONTRACT_SINK_LAUNCHES + 4, sizeof *expected);
  for (int timing = 1; timing >= 0; timing--) {
    gf_stream *s[2] = {NULL, NULL};
    contract_wave w;
    unsigned char *host = NULL;
    gf_backend *b = contract_sink_open(c, timing, s, &w, &host);
    if (!b) return;
    /* Set-up work before the sink is installed is not reported. */
    contract_wave_reset(b, s[0], &w);
    CHECK_INT(b->ops->synchronize(b), GF_OK);
    b->sink = (gf_op_sink){contract_sink_report, &k, 0, NULL};
    k.count = 0;
    int64_t before = contract_now_ns();
    int n = contract_sink_work(b, s, &w, host, expected);
    CHECK_INT(b->ops->synchronize(b), GF_OK);
    int64_t after = contract_now_ns();
    pthread_mutex_lock(&k.lock);
    int count = k.count;
    gf_op_timing *got = k.reports;
    pthread_mutex_unlock(&k.lock);
    if (!timing) {
      CHECK_INT(count, 0); /* a sink but no options.timing: nothing measured */
    } else {
      CHECK_INT(count, n);
      int *seen = calloc((size_t)n, sizeof *seen), bad = 0;
      int64_t last_end[2] = {0, 0};
      int started[2] = {0, 0};
      for (int i = 0; i < count; i++) {
        const gf_op_timing *r = &got[i];
        int64_t step = r->tag.step;
        if (step < 0 || step >= n || seen[step]++) {
          bad++;
          continue;
        }
        const gf_op_timing *x = &expected[step];
        if (r->tag.task != x->tag.task || r->tag.stream != x->tag.stream || r->kind != x->kind ||
            r->bytes != x->bytes || !(r->start_ns <= r->end_ns) ||
            r->start_ns < before - CONTRACT_WINDOW_NS || r->end_ns > after + CONTRACT_WINDOW_NS)
          bad++;
      }
      for (int i = 0; i < n; i++)
        if (seen[i] != 1) bad++;
      /* One stream's operations in issue order, one after another. */
      gf_op_timing *by_step = calloc((size_t)n, sizeof *by_step);
      for (int i = 0; i < count; i++)
        if (got[i].tag.step >= 0 && got[i].tag.step < n) by_step[got[i].tag.step] = got[i];
      for (int i = 0; i < n; i++) {
        int st = expected[i].tag.stream;
        if (started[st] && by_step[i].start_ns < last_end[st] - CONTRACT_ROUNDING_NS) bad++;
        last_end[st] = by_step[i].end_ns;
        started[st] = 1;
      }
      if (bad) {
        fprintf(stderr,
                "  contract %s: %d sink reports wrong, missing, repeated, out of order or "
                "outside [%lld, %lld]\n",
                c->label, bad, (long long)before, (long long)after);
        CHECK(0);
      }
      free(by_step);
      free(seen);
    }
    contract_sink_close(b, &w, host);
  }
  /* A sink that samples: exactly the operations it accepts are reported. */
  {
    gf_stream *s[2] = {NULL, NULL};
    contract_wave w;
    unsigned char *host = NULL;
    gf_backend *b = contract_sink_open(c, 1, s, &w, &host);
    if (!b) return;
    b->sink = (gf_op_sink){contract_sink_report, &k, 0, contract_sink_times};
    k.count = 0;
    int n = contract_sink_work(b, s, &w, host, expected);
    CHECK_INT(b->ops->synchronize(b), GF_OK);
    pthread_mutex_lock(&k.lock);
    int count = k.count, bad = 0;
    for (int i = 0; i < count; i++)
      if (k.reports[i].tag.step % 3 != 0 ||
          k.reports[i].kind != expected[k.reports[i].tag.step].kind)
        bad++;
    pthread_mutex_unlock(&k.lock);
    CHECK_INT(count, (n + 2) / 3);
    CHECK_INT(bad, 0);
    contract_sink_close(b, &w, host);
    k.count = 0;
  }
  /* Timing on and no sink: nothing to report to, the work still runs. */
  gf_backend *b = c->open(1);
  gf_stream *s = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  if (contract_wave_open(b, 16, &w)) {
    contract_wave_reset(b, s, &w);
    contract_wave_chain(b, s, &w, 3);
    CHECK_INT(b->ops->synchronize(b), GF_OK);
    contract_wave_close(b, &w);
  }
  b->ops->destroy(b);
  CHECK_INT(k.count, 0);
  free(k.reports);
  free(expected);
}

/* ---- rule 11: scan_finite ----------------------------------------------- */

/* Issues: `count` values from `host` to `dev`, then a scan of them. */
static void contract_scan(gf_backend *b, gf_stream *s, void *dev, const void *host, int64_t count,
                          gf_dtype dtype, int finite, double max_abs, gf_scan_result *result) {
  size_t bytes = (size_t)count * gf_dtype_size(dtype);
  CHECK_INT(b->ops->copy_async(b, s, dev, host, bytes, contract_no_tag), GF_OK);
  CHECK_INT(b->ops->scan_finite(b, s, dev, count, dtype, finite, max_abs, result), GF_OK);
}

/* The first refused value of several, in float and double, with and without
 * `finite` and a bound; and a scan issued after a slow chain and a copy that
 * cleans the field sees the clean field, not what was there when issued. */
static void contract_scan_finite(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL;
  gf_event *e = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  const int64_t n = 3 * 1000 * 1000 + 7; /* more than one share, block, grid */
  float *f32 = NULL;
  double *f64 = NULL;
  void *dev = NULL;
  gf_scan_result *r = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, (size_t)n * sizeof *f32, NULL, (void **)&f32), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, (size_t)n * sizeof *f64, NULL, (void **)&f64), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, (size_t)n * sizeof *f64, NULL, &dev), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 8 * sizeof *r, NULL, (void **)&r), GF_OK);
  contract_wave w;
  if (!f32 || !f64 || !dev || !r || !contract_wave_open(b, c->n, &w)) return;
  for (int64_t i = 0; i < n; i++) f32[i] = (float)(i % 1000) - 500.0f, f64[i] = f32[i];
  /* Bad values late, in the middle and early: the early ones win. */
  const int64_t at_nan = n - 1, at_inf = n / 2 + 3, at_big = 1234567 - 1000000;
  f32[at_nan] = NAN, f64[at_nan] = NAN;
  f32[at_inf] = -INFINITY, f64[at_inf] = INFINITY;
  f32[at_big] = 2.5e6f, f64[at_big] = 2.5e6;
  contract_scan(b, s, dev, f32, n, GF_F32, 1, INFINITY, &r[0]);
  contract_scan(b, s, dev, f32, n, GF_F32, 1, 1e6, &r[1]);
  contract_scan(b, s, dev, f32, n, GF_F32, 0, INFINITY, &r[2]);
  contract_scan(b, s, dev, f64, n, GF_F64, 1, INFINITY, &r[3]);
  contract_scan(b, s, dev, f64, n, GF_F64, 0, 1e6, &r[4]);
  contract_scan(b, s, dev, f64, n, GF_F64, 1, 1e6, &r[5]);
  CHECK_INT(b->ops->event_record(b, e, s), GF_OK);
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);
  CHECK_INT(r[0].index, at_inf);
  CHECK(isinf(r[0].value) && r[0].value < 0);
  CHECK_INT(r[1].index, at_big);
  CHECK(r[1].value == 2.5e6);
  CHECK_INT(r[2].index, -1); /* without finite and a bound nothing fails */
  CHECK_INT(r[3].index, at_inf);
  CHECK_INT(r[4].index, at_big); /* Inf is beyond the bound too, NaN is not */
  CHECK_INT(r[5].index, at_big);
  /* Order: a dirty field, a slow chain, a clean copy over it, the scan. */
  f32[7] = NAN;
  contract_wave_reset(b, s, &w);
  contract_scan(b, s, dev, f32, n, GF_F32, 1, INFINITY, &r[6]);
  contract_wave_chain(b, s, &w, c->steps);
  /* (the wave's field may be larger than `dev`: a GPU's chain is 4096^2) */
  size_t clean = w.bytes < (size_t)n * sizeof *f32 ? w.bytes : (size_t)n * sizeof *f32;
  CHECK_INT(b->ops->copy_async(b, s, dev, w.zeros, clean, contract_no_tag), GF_OK);
  CHECK_INT(
      b->ops->scan_finite(b, s, dev, (int64_t)(clean / sizeof(float)), GF_F32, 1, INFINITY, &r[7]),
      GF_OK);
  CHECK_INT(b->ops->event_record(b, e, s), GF_OK);
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);
  CHECK_INT(r[6].index, 7);
  CHECK_INT(r[7].index, -1);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  contract_wave_close(b, &w);
  b->ops->free(b, GF_SPACE_PINNED, f32, NULL);
  b->ops->free(b, GF_SPACE_PINNED, f64, NULL);
  b->ops->free(b, GF_SPACE_PINNED, r, NULL);
  b->ops->free(b, GF_SPACE_DEVICE, dev, NULL);
  b->ops->event_destroy(b, e);
  b->ops->destroy(b);
}

/* ---- rule 12: event_query, without blocking ------------------------------ */

/* An event recorded behind the slow chain is not complete at once, and
 * asking says so in far less time than the chain takes; after
 * event_synchronize it is, and stays so; an unrecorded event is complete. */
static void contract_event_query(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  gf_stream *s = NULL;
  gf_event *e = NULL, *never = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &e), GF_OK);
  CHECK_INT(b->ops->event_create(b, &never), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  int done = -1;
  CHECK_INT(b->ops->event_query(b, never, &done), GF_OK);
  CHECK_INT(done, 1);
  contract_wave_reset(b, s, &w);
  contract_wave_chain(b, s, &w, c->steps);
  CHECK_INT(b->ops->event_record(b, e, s), GF_OK);
  int64_t t0 = contract_now_ns();
  done = -1;
  CHECK_INT(b->ops->event_query(b, e, &done), GF_OK);
  int64_t asked_ns = contract_now_ns() - t0;
  CHECK_INT(done, 0);
  if (asked_ns > CONTRACT_SLOW_NS / 4) {
    fprintf(stderr, "  contract %s: event_query took %.3f ms: it waited\n", c->label,
            (double)asked_ns / 1e6);
    CHECK(0);
  }
  CHECK_INT(b->ops->event_synchronize(b, e), GF_OK);
  for (int i = 0; i < 2; i++) {
    done = -1;
    CHECK_INT(b->ops->event_query(b, e, &done), GF_OK);
    CHECK_INT(done, 1);
  }
  contract_wave_close(b, &w);
  b->ops->event_destroy(b, e);
  b->ops->event_destroy(b, never);
  b->ops->destroy(b);
}

/* ---- rule 13: registered memory --------------------------------------- */

/* Two ends of a channel in this process (another process's: mpi.sh and
 * check.sh's runs with `exchange: {transport: channel}`). */
static int contract_channel_pair(gf_backend *b, size_t bytes, size_t packet_bytes,
                                 gf_channel *ends[2]) {
  gf_channel_handle h[2];
  ends[0] = ends[1] = NULL;
  for (int i = 0; i < 2; i++) {
    gf_status st = gf_channel_create(b, bytes, packet_bytes, &ends[i], &h[i]);
    CHECK_INT(st, GF_OK);
    if (st != GF_OK) {
      fprintf(stderr, "  contract: registering a channel's memory: %s\n", b->error);
      return 0;
    }
  }
  for (int i = 0; i < 2; i++) {
    gf_status st = gf_channel_connect(ends[i], &h[1 - i]);
    CHECK_INT(st, GF_OK);
    if (st != GF_OK) {
      fprintf(stderr, "  contract: opening the peer's memory: %s\n", b->error);
      return 0;
    }
  }
  CHECK(gf_channel_peer_bytes(ends[0]) == bytes);
  return 1;
}

/* Zero-filled; a value written into one end's region is read through the
 * other's mapping (get) and a put lands in the peer's region; a put past the
 * peer's region is refused with its sizes. */
static void contract_channel_memory(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  if (!b->ops->channel_register) { /* a backend without channels keeps rule 13 trivially */
    printf("  contract %s: no channels on this backend\n", c->label);
    b->ops->destroy(b);
    return;
  }
  enum { N = 1000 };
  const size_t bytes = N * sizeof(uint32_t);
  gf_stream *s = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  gf_channel *ch[2];
  uint32_t *in = NULL, *out = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, bytes, NULL, (void **)&in), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, bytes, NULL, (void **)&out), GF_OK);
  if (contract_channel_pair(b, bytes, 0, ch) && in && out) {
    memset(out, 0xff, bytes);
    CHECK_INT(b->ops->copy_async(b, s, out, gf_channel_inbox(ch[0]), bytes, contract_no_tag),
              GF_OK);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
    int zero = 1;
    for (int i = 0; i < N; i++) zero &= out[i] == 0;
    CHECK(zero);
    for (int i = 0; i < N; i++) in[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    CHECK_INT(b->ops->copy_async(b, s, gf_channel_inbox(ch[0]), in, bytes, contract_no_tag), GF_OK);
    CHECK_INT(gf_channel_get(ch[1], s, out, 0, bytes, contract_no_tag), GF_OK);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
    CHECK(memcmp(in, out, bytes) == 0); /* end 1 reads end 0's region */
    for (int i = 0; i < N; i++) in[i] = ~in[i];
    CHECK_INT(gf_channel_put(ch[1], s, 8, in, bytes - 8, contract_no_tag), GF_OK);
    CHECK_INT(b->ops->copy_async(b, s, out, gf_channel_inbox(ch[0]), bytes, contract_no_tag),
              GF_OK);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
    CHECK(memcmp((unsigned char *)out + 8, in, bytes - 8) == 0); /* end 1's put, in end 0 */
    CHECK(out[0] == ~in[0] && out[1] == ~in[1]);                 /* before the offset: kept */
    b->error[0] = '\0';
    CHECK_INT(gf_channel_put(ch[1], s, 8, in, bytes, contract_no_tag), GF_INTERNAL);
    CHECK(strstr(b->error, "peer's region holds") != NULL);
  }
  gf_channel_free(ch[0]);
  gf_channel_free(ch[1]);
  b->ops->free(b, GF_SPACE_PINNED, in, NULL);
  b->ops->free(b, GF_SPACE_PINNED, out, NULL);
  b->ops->destroy(b);
}

/* ---- rule 14: put, signal, wait ------------------------------------- */

/* Stream A runs the slow chain, puts its ring fields into B's region and
 * signals; stream B waits for the signal and reads its region. B issues its
 * wait and read at once, while A's chain still runs: a wait that held
 * nothing up reads the zeros the region was cleared to. Three rounds, the
 * slot's value growing. */
/* A round's start: B's inbox and `out` zeroed, A's chain run again. */
static void contract_channel_round(const contract_ctx *c, gf_backend *b, gf_stream *a, gf_stream *s,
                                   gf_channel *inbox_end, contract_wave *w, unsigned char *out) {
  for (int i = 0; i < 3; i++)
    CHECK_INT(b->ops->copy_async(b, s, (unsigned char *)gf_channel_inbox(inbox_end) + i * w->bytes,
                                 w->zeros, w->bytes, contract_no_tag),
              GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
  memset(out, 0, 3 * w->bytes);
  contract_wave_reset(b, a, w);
  contract_wave_chain(b, a, w, c->steps);
}

static void contract_channel_put_signal_wait(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  if (!b->ops->channel_register) {
    b->ops->destroy(b);
    return;
  }
  gf_stream *a = NULL, *s = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  unsigned char *out = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 3 * w.bytes, NULL, (void **)&out), GF_OK);
  gf_channel *ch[2];
  if (out && contract_channel_pair(b, 3 * w.bytes, 0, ch)) {
    /* Rounds 1 to 3 put and then signal; 4 and 5 put with signal, each
     * field with its own signal on slot 3, the wait for the last one. */
    for (int round = 1; round <= 5; round++) {
      int fused = round > 3;
      contract_channel_round(c, b, a, s, ch[1], &w, out);
      for (int i = 0; i < 3; i++)
        CHECK_INT(fused ? gf_channel_put_signal(ch[0], a, i * w.bytes, w.f[i], w.bytes, 3,
                                                (uint64_t)(3 * round + i), contract_no_tag)
                        : gf_channel_put(ch[0], a, i * w.bytes, w.f[i], w.bytes, contract_no_tag),
                  GF_OK);
      if (fused) {
        CHECK_INT(gf_channel_wait(ch[1], s, 3, (uint64_t)(3 * round + 2), contract_no_tag), GF_OK);
      } else {
        CHECK_INT(gf_channel_signal(ch[0], a, 2, (uint64_t)round, contract_no_tag), GF_OK);
        CHECK_INT(gf_channel_wait(ch[1], s, 2, (uint64_t)round, contract_no_tag), GF_OK);
      }
      CHECK_INT(
          b->ops->copy_async(b, s, out, gf_channel_inbox(ch[1]), 3 * w.bytes, contract_no_tag),
          GF_OK);
      CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
      char what[80];
      snprintf(what, sizeof what, "B's region after waiting for A's signal, round %d", round);
      contract_expect_ref(c, out, what);
      CHECK_INT(b->ops->synchronize(b), GF_OK);
    }
    /* The symmetric step: A puts its fields and B zeros, each a put with
     * signal and wait on slot 4; B's last waits for A's last signal. */
    contract_channel_round(c, b, a, s, ch[1], &w, out);
    for (int i = 0; i < 3; i++) {
      CHECK_INT(gf_channel_put_signal_wait(ch[0], a, i * w.bytes, w.f[i], w.bytes, 4,
                                           (uint64_t)(i + 1), contract_no_tag),
                GF_OK);
      CHECK_INT(gf_channel_put_signal_wait(ch[1], s, i * w.bytes, w.zeros, w.bytes, 4,
                                           (uint64_t)(i + 1), contract_no_tag),
                GF_OK);
    }
    CHECK_INT(b->ops->copy_async(b, s, out, gf_channel_inbox(ch[1]), 3 * w.bytes, contract_no_tag),
              GF_OK);
    CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
    contract_expect_ref(c, out, "B's region after the symmetric put with signal and wait");
    CHECK_INT(b->ops->synchronize(b), GF_OK);
    b->error[0] = '\0';
    CHECK_INT(gf_channel_signal(ch[0], a, GF_CHANNEL_SLOTS, 1, contract_no_tag), GF_INTERNAL);
    CHECK(strstr(b->error, "slot") != NULL);
    b->error[0] = '\0';
    CHECK_INT(gf_channel_put_signal(ch[0], a, 1, w.f[0], 3 * w.bytes, 3, 99, contract_no_tag),
              GF_INTERNAL);
    CHECK(strstr(b->error, "put with signal of") != NULL);
  }
  gf_channel_free(ch[0]);
  gf_channel_free(ch[1]);
  b->ops->free(b, GF_SPACE_PINNED, out, NULL);
  contract_wave_close(b, &w);
  b->ops->destroy(b);
}

/* ---- rule 14: packets ------------------------------------------------ */

/* Stream A runs the slow chain and exchanges packets with stream B: A puts
 * each ring field and takes B's 13 bytes, B takes the field and puts its
 * bytes, B's operations issued at once, while A's chain still runs. Rounds
 * alternate an exchange in one kernel with a put and a take in two (B takes
 * first there), so the areas' halves are used in turn across kernels of
 * both kinds; B's bytes go from an odd address to an odd address, the last
 * packet partly filled. */
static void contract_channel_packets(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  if (!b->ops->channel_register) {
    b->ops->destroy(b);
    return;
  }
  enum { TOKEN = 13 };
  gf_stream *a = NULL, *s = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  unsigned char *out = NULL, *got = NULL, *token = NULL, *token_in = NULL, *token_out = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 3 * w.bytes, NULL, (void **)&out), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, 3 * w.bytes, NULL, (void **)&got), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 64, NULL, (void **)&token), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, 64, NULL, (void **)&token_in), GF_OK);
  CHECK_INT(b->ops->alloc(b, GF_SPACE_DEVICE, 64, NULL, (void **)&token_out), GF_OK);
  gf_channel *ch[2];
  if (out && got && token && token_in && token_out && contract_channel_pair(b, 64, w.bytes, ch)) {
    for (int round = 1; round <= 4; round++) {
      int fused = round % 2;
      memset(out, 0, 3 * w.bytes);
      contract_wave_reset(b, a, &w);
      contract_wave_chain(b, a, &w, c->steps);
      for (int i = 0; i < 64; i++) token[i] = (unsigned char)(round * 37 + i);
      CHECK_INT(b->ops->copy_async(b, s, token_in, token, 64, contract_no_tag), GF_OK);
      CHECK_INT(b->ops->copy_async(b, s, token_out, w.zeros, 64, contract_no_tag), GF_OK);
      CHECK_INT(b->ops->copy_async(b, s, got, out, 3 * w.bytes, contract_no_tag), GF_OK);
      for (int i = 0; i < 3; i++) {
        unsigned char *field = got + i * w.bytes;
        if (fused) {
          CHECK_INT(gf_channel_exchange_packets(ch[0], a, w.f[i], w.bytes, token_out + 1, TOKEN,
                                                contract_no_tag),
                    GF_OK);
          CHECK_INT(gf_channel_exchange_packets(ch[1], s, token_in + 3, TOKEN, field, w.bytes,
                                                contract_no_tag),
                    GF_OK);
        } else {
          CHECK_INT(gf_channel_put_packets(ch[0], a, w.f[i], w.bytes, contract_no_tag), GF_OK);
          CHECK_INT(gf_channel_take_packets(ch[0], a, token_out + 1, TOKEN, contract_no_tag),
                    GF_OK);
          CHECK_INT(gf_channel_take_packets(ch[1], s, field, w.bytes, contract_no_tag), GF_OK);
          CHECK_INT(gf_channel_put_packets(ch[1], s, token_in + 3, TOKEN, contract_no_tag), GF_OK);
        }
      }
      CHECK_INT(b->ops->copy_async(b, s, out, got, 3 * w.bytes, contract_no_tag), GF_OK);
      CHECK_INT(b->ops->stream_synchronize(b, s), GF_OK);
      char what[80];
      snprintf(what, sizeof what, "B's fields taken as packets from A, round %d", round);
      contract_expect_ref(c, out, what);
      unsigned char back[64];
      CHECK_INT(b->ops->copy_async(b, a, back, token_out, 64, contract_no_tag), GF_OK);
      CHECK_INT(b->ops->stream_synchronize(b, a), GF_OK);
      int token_ok = back[0] == 0 && back[TOKEN + 1] == 0;
      for (int i = 0; i < TOKEN; i++) token_ok &= back[1 + i] == token[3 + i];
      if (!token_ok)
        fprintf(stderr, "  contract %s: A's 13 bytes taken from B, round %d, differ\n", c->label,
                round);
      CHECK(token_ok);
      CHECK_INT(b->ops->synchronize(b), GF_OK);
    }
    b->error[0] = '\0';
    CHECK_INT(gf_channel_put_packets(ch[0], a, w.f[0], w.bytes + 1, contract_no_tag), GF_INTERNAL);
    CHECK(strstr(b->error, "packet area holds messages of up to") != NULL);
  }
  gf_channel_free(ch[0]);
  gf_channel_free(ch[1]);
  b->ops->free(b, GF_SPACE_PINNED, out, NULL);
  b->ops->free(b, GF_SPACE_DEVICE, got, NULL);
  b->ops->free(b, GF_SPACE_PINNED, token, NULL);
  b->ops->free(b, GF_SPACE_DEVICE, token_in, NULL);
  b->ops->free(b, GF_SPACE_DEVICE, token_out, NULL);
  contract_wave_close(b, &w);
  b->ops->destroy(b);
}

/* ---- the suite ------------------------------------------------------------ */

#define CONTRACT_RUN(fn, ctx)                                       \
  do {                                                              \
    contract_case = #fn;                                            \
    alarm(CONTRACT_TIMEOUT_S);                                      \
    check_case_failed = 0;                                          \
    fn(ctx);                                                        \
    alarm(0);                                                       \
    if (check_case_failed) {                                        \
      check_cases_failed++;                                         \
      failed++;                                                     \
      fprintf(stderr, "FAIL %s (%s backend)\n", #fn, (ctx)->label); \
    } else {                                                        \
      check_cases_passed++;                                         \
    }                                                               \
  } while (0)

/* Rule 15: stream A captures the chain and stream B, joined through an
 * event, reads its result; nothing runs before the launch. The first graph
 * forces the source with other amplitudes (a different result), a second
 * capture of the right chain updates it in place, and two launches of it
 * each give the chain's result on the host after A alone is synchronised. */
static void contract_graph_capture(gf_backend *b, gf_stream *a, gf_stream *s, gf_event *fork,
                                   gf_event *join, contract_wave *w, int steps, int first,
                                   void *out) {
  CHECK_INT(b->ops->graph_capture_begin(b, a), GF_OK);
  CHECK_INT(b->ops->event_record(b, fork, a), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, s, fork), GF_OK);
  for (int i = 0; i < steps; i++) contract_wave_step(b, a, w, first + i, contract_no_tag);
  CHECK_INT(b->ops->event_record(b, fork, a), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, s, fork), GF_OK);
  contract_wave_read(b, s, w, out);
  CHECK_INT(b->ops->event_record(b, join, s), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, a, join), GF_OK);
}

static void contract_graph_replay(const contract_ctx *c) {
  gf_backend *b = c->open(0);
  if (!b->ops->graph_capture_begin) { /* a backend without graphs keeps rule 15 trivially */
    printf("  contract %s: no graphs on this backend\n", c->label);
    b->ops->destroy(b);
    return;
  }
  gf_stream *a = NULL, *s = NULL;
  gf_event *fork = NULL, *join = NULL;
  contract_wave w;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &a), GF_OK);
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &s), GF_OK);
  CHECK_INT(b->ops->event_create(b, &fork), GF_OK);
  CHECK_INT(b->ops->event_create(b, &join), GF_OK);
  if (!contract_wave_open(b, c->n, &w)) return;
  unsigned char *out = NULL;
  CHECK_INT(b->ops->alloc(b, GF_SPACE_PINNED, 3 * w.bytes, NULL, (void **)&out), GF_OK);
  memset(out, 0, 3 * w.bytes);
  contract_wave_reset(b, a, &w);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  /* other amplitudes (steps 300 on: the same ring positions) */
  gf_graph *wrong = NULL, *right = NULL;
  contract_graph_capture(b, a, s, fork, join, &w, c->steps, 300, out);
  CHECK_INT(b->ops->graph_capture_end(b, a, NULL, &wrong), GF_OK);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  int untouched = 1;
  for (size_t i = 0; i < 3 * w.bytes; i++) untouched &= out[i] == 0;
  if (!untouched) fprintf(stderr, "  contract %s: captured work ran before a launch\n", c->label);
  CHECK(untouched);
  CHECK_INT(b->ops->graph_launch(b, wrong, a), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, a), GF_OK);
  CHECK(memcmp(out, c->ref, 3 * w.bytes) != 0); /* it ran, with its own amplitudes */
  contract_graph_capture(b, a, s, fork, join, &w, c->steps, 0, out);
  CHECK_INT(b->ops->graph_capture_end(b, a, wrong, &right), GF_OK);
  CHECK(right == wrong); /* the same operations: updated in place */
  for (int round = 0; round < 2 && right; round++) {
    memset(out, 0, 3 * w.bytes);
    contract_wave_reset(b, a, &w);
    CHECK_INT(b->ops->graph_launch(b, right, a), GF_OK);
    CHECK_INT(b->ops->stream_synchronize(b, a), GF_OK);
    char what[64];
    snprintf(what, sizeof what, "the updated graph's launch %d", round + 1);
    contract_expect_ref(c, out, what);
  }
  /* A read that waits, at launch, for a chain recorded after the capture. */
  gf_stream *x = NULL;
  gf_event *external = NULL;
  gf_graph *read = NULL;
  CHECK_INT(b->ops->stream_create(b, GF_STREAM_NORMAL, &x), GF_OK);
  CHECK_INT(b->ops->event_create(b, &external), GF_OK);
  CHECK_INT(b->ops->event_record(b, external, x), GF_OK);
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  CHECK_INT(b->ops->graph_capture_begin(b, a), GF_OK);
  CHECK_INT(b->ops->event_record(b, fork, a), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, s, fork), GF_OK);
  CHECK_INT(b->ops->graph_wait_external(b, s, external), GF_OK);
  contract_wave_read(b, s, &w, out);
  CHECK_INT(b->ops->event_record(b, join, s), GF_OK);
  CHECK_INT(b->ops->stream_wait_event(b, a, join), GF_OK);
  CHECK_INT(b->ops->graph_capture_end(b, a, NULL, &read), GF_OK);
  memset(out, 0, 3 * w.bytes);
  contract_wave_reset(b, x, &w);
  contract_wave_chain(b, x, &w, c->steps);
  CHECK_INT(b->ops->event_record(b, external, x), GF_OK);
  if (read) CHECK_INT(b->ops->graph_launch(b, read, a), GF_OK);
  CHECK_INT(b->ops->stream_synchronize(b, a), GF_OK);
  contract_expect_ref(c, out, "a graph's external wait for a chain recorded after its capture");
  CHECK_INT(b->ops->synchronize(b), GF_OK);
  if (read) b->ops->graph_destroy(b, read);
  b->ops->event_destroy(b, external);
  b->ops->stream_destroy(b, x);
  if (right != wrong) b->ops->graph_destroy(b, right);
  b->ops->graph_destroy(b, wrong);
  b->ops->free(b, GF_SPACE_PINNED, out, NULL);
  b->ops->event_destroy(b, fork);
  b->ops->event_destroy(b, join);
  contract_wave_close(b, &w);
  b->ops->destroy(b);
}

/* Runs every rule's test on backends from `open`; returns the number of
 * failed cases (also counted into check.h's summary). */
static int gf_contract_run(gf_contract_open open, const char *label) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = contract_timeout;
  sigaction(SIGALRM, &sa, NULL);
  contract_ctx ctx = {.open = open, .label = label};
  int failed = 0;
  contract_case = "contract_calibrate";
  alarm(CONTRACT_TIMEOUT_S);
  check_case_failed = 0;
  int calibrated = contract_calibrate(&ctx);
  alarm(0);
  if (!calibrated || check_case_failed) {
    fprintf(stderr, "FAIL contract_calibrate (%s backend): %s\n", label,
            calibrated ? "the reference run failed" : "no backend");
    check_cases_failed++;
    free(ctx.ref);
    return 1;
  }
  CONTRACT_RUN(contract_stream_order, &ctx);
  CONTRACT_RUN(contract_event_synchronize, &ctx);
  CONTRACT_RUN(contract_wait_orders_streams, &ctx);
  CONTRACT_RUN(contract_rerecord_keeps_wait, &ctx);
  CONTRACT_RUN(contract_unrecorded_event, &ctx);
  CONTRACT_RUN(contract_copy_every_space, &ctx);
  CONTRACT_RUN(contract_stream_ordered_free, &ctx);
  CONTRACT_RUN(contract_synchronize_all, &ctx);
  CONTRACT_RUN(contract_failures_reported, &ctx);
  CONTRACT_RUN(contract_sink_reports, &ctx);
  CONTRACT_RUN(contract_scan_finite, &ctx);
  CONTRACT_RUN(contract_event_query, &ctx);
  CONTRACT_RUN(contract_channel_memory, &ctx);
  CONTRACT_RUN(contract_channel_put_signal_wait, &ctx);
  CONTRACT_RUN(contract_channel_packets, &ctx);
  CONTRACT_RUN(contract_graph_replay, &ctx);
  printf("  contract %s: %d of 15 rules broken\n", label, failed);
  free(ctx.ref);
  return failed;
}

#endif
