/* test_program.c - the compiled program: each step's instructions against
 * what the workflow says that step does, shared bodies and segments, compiling
 * in stretches, capture markers, binding. Run from the tests/ folder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph.h"
#include "plan_fixture.h"
#include "program.h"
#include "registry.h"
#include "workflow.h"

typedef struct compiled {
  gf_workflow *wf;
  gf_plan *plan;
  gf_program *program;
  gf_diag diag;
} compiled;

/* Loads `path` with "key=value" overrides and compiles it in stretches of `chunk` steps. */
static int compile(const char *path, const char *const *sets, int nsets, int64_t chunk,
                   compiled *c) {
  memset(c, 0, sizeof *c);
  gf_status st = load_plan(path, sets, nsets, &c->diag, &c->wf, &c->plan);
  if (st == GF_OK) st = gf_program_create(c->wf, c->plan, &c->diag, &c->program);
  for (int64_t n = 0; st == GF_OK && n < c->wf->steps; n += chunk)
    st = gf_program_compile(c->program, n, chunk, &c->diag);
  CHECK_INT(st, GF_OK);
  return st == GF_OK;
}

static void release(compiled *c) {
  gf_program_free(c->program);
  gf_plan_free(c->plan);
  gf_workflow_free(c->wf);
}

/* The body step n runs, from the segments compiled last. */
static const gf_body *body_of(const gf_program *p, int64_t n) {
  int count;
  const gf_segment *seg = gf_program_segments(p, &count);
  for (int i = 0; i < count; i++)
    if (n >= seg[i].first && n < seg[i].first + seg[i].steps)
      return gf_program_body(p, seg[i].bodies[(n - seg[i].first) % seg[i].period]);
  return NULL;
}

static int count_kind(const gf_body *b, gf_instr_kind kind) {
  int c = 0;
  for (int i = 0; i < b->ninstrs; i++) c += b->instrs[i].kind == kind;
  return c;
}

static const gf_instr *find_kind(const gf_body *b, gf_instr_kind kind) {
  for (int i = 0; i < b->ninstrs; i++)
    if (b->instrs[i].kind == kind) return &b->instrs[i];
  return NULL;
}

/* The seed under events, a copy per plane (batch: 1): every step's
 * instructions say what the workflow says of that step, though the 640 steps
 * share a few dozen bodies. */
static const char *const unbatched[] = {"loop.tasks.1.output.batch=1"};

static void test_wave2d_steps(void) {
  compiled c;
  if (!compile("../workflows/wave2d.yaml", unbatched, 1, 1000, &c)) return;
  const gf_program *p = c.program;
  CHECK_INT(gf_program_end(p), 640);
  int nseg;
  const gf_segment *seg = gf_program_segments(p, &nseg);
  CHECK(nseg >= 2 && nseg <= 4);
  CHECK(gf_program_body_count(p) <= 50);
  /* segments tile the loop; the long one cycles ring (5) x event slots (8) */
  int64_t next = 0, longest = 0;
  int period = 0;
  for (int i = 0; i < nseg; i++) {
    CHECK_INT(seg[i].first, next);
    next += seg[i].steps;
    if (seg[i].steps > longest) longest = seg[i].steps, period = seg[i].period;
  }
  CHECK_INT(next, 640);
  CHECK(longest > 600);
  CHECK_INT(period, 40);
  for (int64_t n = 0; n < 640; n++) {
    const gf_body *b = body_of(p, n);
    CHECK(b != NULL);
    if (!b) break;
    const gf_instr *launch = find_kind(b, GF_I_LAUNCH);
    CHECK_INT(count_kind(b, GF_I_LAUNCH), 1);
    CHECK(launch && launch->starts_task && launch->task == 0);
    if (launch) {
      CHECK_INT(launch->inst[0], n % 5); /* U0: U[n] */
      CHECK_INT(launch->inst[2], (n + 2) % 5);
      CHECK_STR(gf_plan_stream_name(c.plan, launch->stream), "compute");
    }
    int snapshot = n > 1 && n < 639;
    CHECK_INT(count_kind(b, GF_I_STAGE), snapshot);
    CHECK_INT(count_kind(b, GF_I_WRITE), snapshot);
    const gf_instr *copy = find_kind(b, GF_I_COPY);
    CHECK((copy != NULL) == snapshot);
    if (copy) {
      CHECK_INT(copy->src.kind, GF_OPND_INSTANCE);
      CHECK_INT(copy->src.inst, n % 5);
      CHECK_INT(copy->dst.kind, GF_OPND_STAGED);
      CHECK_INT(copy->bytes, 256 * 256 * 4);
      char want[8];
      snprintf(want, sizeof want, "io[%d]", (int)(n % 5));
      CHECK_STR(gf_plan_stream_name(c.plan, copy->stream), want);
      const gf_instr *write = find_kind(b, GF_I_WRITE);
      gf_status st = GF_OK;
      CHECK(gf_expr_eval(write->param, &(gf_eval_ctx){.n = (double)n}, &st) == (double)n);
    }
    /* stream work is bracketed, host work never is */
    int open = 0;
    for (int i = 0; i < b->ninstrs; i++) {
      gf_instr_kind k = b->instrs[i].kind;
      if (k == GF_I_CAPTURE_BEGIN) {
        CHECK(!open);
        open = 1;
      }
      if (k == GF_I_CAPTURE_END) {
        CHECK(open);
        open = 0;
      }
      if (k == GF_I_STAGE || k == GF_I_WRITE || k == GF_I_HOST_WAIT || k == GF_I_HOST_SYNC)
        CHECK(!open);
    }
    CHECK(!open);
  }
  release(&c);
}

/* The seed with batches of 16 planes: each snapshot (steps 2 .. 638, its
 * instance i = n - 2) copies U[n] into slot i % 16 of half (i / 16) % 2 of
 * the ring on its own stream, ordered after the previous slot's copy
 * (event 0) or, at a half's first slot, that half's previous copy out
 * (event 1 + half); only every 16th instance has host work: take a staging
 * buffer, copy the half out in one copy on the drain stream (after event
 * 0), hand it over. */
static void test_wave2d_batched(void) {
  const char *sets[] = {"loop.tasks.1.output.batch=16"};
  compiled c;
  if (!compile("../workflows/wave2d.yaml", sets, 1, 1000, &c)) return;
  const gf_program *p = c.program;
  const size_t plane = 256 * 256 * 4;
  int ev_slot = -1, ev_batch[2] = {-1, -1}, host_steps = 0;
  for (int64_t n = 0; n < 640; n++) {
    const gf_body *b = body_of(p, n);
    CHECK(b != NULL);
    if (!b) break;
    int snapshot = n > 1 && n < 639;
    int64_t i = n - 2;
    int closes = snapshot && i % 16 == 15;
    host_steps += b->host_instrs > 0;
    CHECK_INT(b->host_instrs, closes ? 2 : 0); /* stage, write */
    CHECK_INT(count_kind(b, GF_I_COPY), snapshot + closes);
    if (!snapshot) continue;
    const gf_instr *ring = find_kind(b, GF_I_COPY);
    CHECK_INT(ring->src.kind, GF_OPND_INSTANCE);
    CHECK_INT(ring->src.inst, n % 5);
    CHECK_INT(ring->dst.kind, GF_OPND_BUFFER);
    /* two halves of 16 planes: batch i / 16 fills half (i / 16) % 2 */
    CHECK_INT(ring->dst.offset, (size_t)((i / 16) % 2 * 16 + i % 16) * plane);
    CHECK_INT(ring->bytes, plane);
    /* the ring's own wait comes right before its copy (the planner's waits first) */
    const gf_instr *before = ring - 1;
    if (i > 0) {
      CHECK_INT(before->kind, GF_I_WAIT);
      int *ev = i % 16 ? &ev_slot : &ev_batch[(i / 16) % 2];
      if (*ev < 0) *ev = before->event;
      CHECK_INT(before->event, *ev);
      CHECK_INT(before->stream, ring->stream);
    }
    CHECK_INT(ring[1].kind, GF_I_RECORD);
    CHECK_INT(ring[1].event, ev_slot < 0 ? ring[1].event : ev_slot);
    if (!closes) continue;
    /* the copy out, on the drain stream after the half's last copy in */
    const gf_instr *out = ring + 1;
    while (out->kind != GF_I_COPY) out++;
    CHECK_INT(out->src.kind, GF_OPND_BUFFER);
    CHECK_INT(out->src.offset, (size_t)((i / 16) % 2 * 16) * plane);
    CHECK_INT(out->dst.kind, GF_OPND_STAGED);
    CHECK_INT(out->bytes, 16 * plane);
    CHECK_INT(out->stream, gf_plan_drain_stream(gf_program_plan(p)));
    CHECK(out->stream != ring->stream);
    CHECK_INT(ring[2].kind, GF_I_WAIT);
    CHECK_INT(ring[2].stream, out->stream);
    CHECK_INT(ring[2].event, ring[1].event);
    const gf_instr *write = find_kind(b, GF_I_WRITE);
    CHECK_INT(write->batch, 16);
    CHECK_INT(gf_program_instances_through(p, 1, n), i + 1);
    CHECK_INT(gf_program_instance_step(p, 1, i - 15), n - 15);
  }
  CHECK_INT(host_steps, 637 / 16);
  CHECK(ev_slot >= 0 && ev_batch[0] >= 0 && ev_batch[1] >= 0 && ev_slot != ev_batch[0] &&
        ev_slot != ev_batch[1] && ev_batch[0] != ev_batch[1]);
  release(&c);
}

/* Compiling in stretches of 7 steps gives every step the same instructions
 * as compiling the loop at once. */
static void test_stretches(void) {
  const char *sets[] = {"schedule=auto"};
  compiled whole;
  if (!compile("../workflows/wave2d.yaml", sets, 1, 1000, &whole)) return;
  /* A stretch's segments cover only that stretch: compare as it goes. */
  compiled again;
  memset(&again, 0, sizeof again);
  CHECK_INT(load_plan("../workflows/wave2d.yaml", sets, 1, &again.diag, &again.wf, &again.plan),
            GF_OK);
  CHECK_INT(gf_program_create(again.wf, again.plan, &again.diag, &again.program), GF_OK);
  CHECK_INT(gf_program_compile(again.program, 5, 7, &again.diag), GF_INTERNAL); /* not from 0 */
  for (int64_t n = 0; n < 640; n += 7) {
    CHECK_INT(gf_program_compile(again.program, n, 7, &again.diag), GF_OK);
    for (int64_t k = n; k < n + 7 && k < 640; k++) {
      const gf_body *a = body_of(whole.program, k), *b = body_of(again.program, k);
      CHECK(a && b && a->ninstrs == b->ninstrs);
      if (!a || !b || a->ninstrs != b->ninstrs) continue;
      for (int i = 0; i < a->ninstrs; i++) {
        CHECK_INT(a->instrs[i].kind, b->instrs[i].kind);
        CHECK_INT(a->instrs[i].stream, b->instrs[i].stream);
        CHECK_INT(a->instrs[i].event, b->instrs[i].event);
        CHECK_INT(a->instrs[i].other, b->instrs[i].other);
      }
    }
  }
  release(&again);
  release(&whole);
}

/* Compute only: every step but the last has no host work, so the long
 * segment could be captured as a graph. */
static void test_capturable(void) {
  compiled c;
  if (!compile("../workflows/wave2d_compute.yaml", NULL, 0, 1000, &c)) return;
  int nseg;
  const gf_segment *seg = gf_program_segments(c.program, &nseg);
  CHECK_INT(nseg, 2);
  if (nseg == 2) {
    CHECK_INT(seg[0].steps, 99);
    CHECK_INT(seg[0].capturable, 1);
    CHECK_INT(seg[1].capturable, 0); /* the final output */
    const gf_body *b = gf_program_body(c.program, seg[0].bodies[0]);
    CHECK_INT(b->host_instrs, 0);
    CHECK_INT(b->instrs[0].kind, GF_I_CAPTURE_BEGIN);
    CHECK_INT(b->instrs[b->ninstrs - 1].kind, GF_I_CAPTURE_END);
  }
  release(&c);
}

static void *fake_address(void *user, int field, int inst) {
  (void)user;
  return (void *)(uintptr_t)(0x10000 * (field + 1) + 0x100 * inst);
}

/* Binding fills each launch's argument struct once: instance addresses and
 * constants, and lists the scalars evaluated per step. */
static void test_binding(void) {
  compiled c;
  if (!compile("../workflows/wave2d.yaml", unbatched, 1, 1000, &c)) return;
  CHECK_INT(gf_program_bind(c.program, fake_address, NULL, NULL, &c.diag), GF_OK);
  const gf_body *b = body_of(c.program, 7);
  const gf_instr *launch = find_kind(b, GF_I_LAUNCH);
  const gf_array *U0 =
      (const gf_array *)((const char *)launch->args + launch->kernel->params[0].offset);
  const gf_array *U2 =
      (const gf_array *)((const char *)launch->args + launch->kernel->params[2].offset);
  CHECK(U0->data == fake_address(NULL, 0, 7 % 5));
  CHECK(U2->data == fake_address(NULL, 0, 9 % 5));
  CHECK_INT(U0->shape[0], 256);
  CHECK_INT(launch->nparams, 1); /* amplitude: ricker(n) */
  CHECK_INT(launch->points, 252 * 252);
  const gf_instr *copy = find_kind(b, GF_I_COPY);
  CHECK(copy->src.bound == fake_address(NULL, 0, 7 % 5));
  release(&c);
}

int main(void) {
  RUN(test_wave2d_steps);
  RUN(test_wave2d_batched);
  RUN(test_stretches);
  RUN(test_capturable);
  RUN(test_binding);
  return check_summary();
}
