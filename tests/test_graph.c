/* test_graph.c - the planner: issue order and cycles, ring-index resolution,
 * how each schedule orders cross-stream work, hazards, and the plan-level
 * bad-input corpus (tests/bad_plan/NAME.yaml, first line `# expect: ...`).
 * Run from the tests/ folder. */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph.h"
#include "registry.h"
#include "workflow.h"

#include "plan_fixture.h"

static int task_index(const gf_workflow *wf, const char *name) {
  for (int t = 0; t < wf->ntasks; t++)
    if (strcmp(wf->tasks[t].name, name) == 0) return t;
  return -1;
}

/* Plans steps 0..n and returns step n's operations. */
static const gf_op *plan_to(gf_plan *plan, int64_t n, gf_diag *diag, int *nops) {
  const gf_op *ops = NULL;
  gf_plan_reset(plan);
  for (int64_t k = 0; k <= n; k++)
    if (gf_plan_step(plan, k, diag, &ops, nops) != GF_OK) return NULL;
  return ops;
}

static int count_ops(const gf_op *ops, int nops, gf_op_kind kind) {
  int c = 0;
  for (int i = 0; i < nops; i++) c += ops[i].kind == kind;
  return c;
}

static const gf_op *find_task_op(const gf_op *ops, int nops, int task) {
  for (int i = 0; i < nops; i++)
    if (ops[i].kind == GF_OP_TASK && ops[i].task == task) return &ops[i];
  return NULL;
}

static void test_ring_indices(void) {
  gf_diag diag;
  gf_workflow *wf;
  gf_plan *plan;
  CHECK_INT(load_plan("../workflows/wave2d.yaml", NULL, 0, &diag, &wf, &plan), GF_OK);
  int step = task_index(wf, "step"), snap = task_index(wf, "snapshot");
  for (int64_t n = 0; n < 12; n++) {
    int nops;
    const gf_op *ops = plan_to(plan, n, &diag, &nops);
    const gf_op *k = find_task_op(ops, nops, step);
    CHECK(k != NULL);
    /* refs in parameter order: U0 = U[n], U1 = U[n+1], U2 = U[n+2], V */
    CHECK_INT(k->inst[0], n % 5);
    CHECK_INT(k->inst[1], (n + 1) % 5);
    CHECK_INT(k->inst[2], (n + 2) % 5);
    CHECK_INT(k->inst[3], 0);
    const gf_op *s = find_task_op(ops, nops, snap);
    CHECK((s != NULL) == (n > 1 && n < 639));
    if (s) {
      CHECK_INT(s->inst[0], n % 5);
      CHECK_INT(s->plane, n);
      CHECK_STR(gf_plan_stream_name(plan, s->stream), n % 5 == 0   ? "io[0]"
                                                      : n % 5 == 1 ? "io[1]"
                                                      : n % 5 == 2 ? "io[2]"
                                                      : n % 5 == 3 ? "io[3]"
                                                                   : "io[4]");
    }
  }
  gf_plan_free(plan);
  gf_workflow_free(wf);

  /* A negative index wraps to the end of the ring: U[n-1] at n = 0 is U[4]. */
  const char *sets[] = {"loop.tasks.1.output.from=U[n-1]", "loop.tasks.1.when=1", "schedule=auto"};
  CHECK_INT(load_plan("../workflows/wave2d.yaml", sets, 3, &diag, &wf, &plan), GF_OK);
  int nops;
  const gf_op *ops = plan_to(plan, 0, &diag, &nops);
  CHECK_INT(find_task_op(ops, nops, task_index(wf, "snapshot"))->inst[0], 4);
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

/* events: each cross-stream `after` edge is an event recorded after the
 * producer and waited on by the consumer's stream; the host never waits. */
static void test_events_schedule(void) {
  gf_diag diag;
  gf_workflow *wf;
  gf_plan *plan;
  CHECK_INT(load_plan("../workflows/wave2d.yaml", NULL, 0, &diag, &wf, &plan), GF_OK);
  int nops;
  const gf_op *ops = plan_to(plan, 10, &diag, &nops);
  CHECK_INT(count_ops(ops, nops, GF_OP_TASK), 2);
  CHECK_INT(count_ops(ops, nops, GF_OP_RECORD), 2); /* after step and after snapshot */
  CHECK_INT(count_ops(ops, nops, GF_OP_STREAM_WAIT),
            2); /* step on snapshot@n-3, snapshot on step@n-2 */
  CHECK_INT(
      count_ops(ops, nops, GF_OP_HOST_WAIT_EVENT) + count_ops(ops, nops, GF_OP_HOST_WAIT_STREAM),
      0);
  /* The first op is compute waiting for io[(10-3) % 5] = io[2]. */
  CHECK_INT(ops[0].kind, GF_OP_STREAM_WAIT);
  CHECK_STR(gf_plan_stream_name(plan, ops[0].stream), "compute");
  CHECK_STR(gf_plan_stream_name(plan, ops[0].other), "io[2]");
  CHECK(gf_plan_validate(plan, &diag, NULL) == GF_OK);
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

/* streams: the same edges become host stream synchronisations. */
static void test_streams_schedule(void) {
  gf_diag diag;
  gf_workflow *wf;
  gf_plan *plan;
  const char *sets[] = {"schedule=streams"};
  CHECK_INT(load_plan("../workflows/wave2d.yaml", sets, 1, &diag, &wf, &plan), GF_OK);
  int nops;
  const gf_op *ops = plan_to(plan, 10, &diag, &nops);
  CHECK_INT(count_ops(ops, nops, GF_OP_STREAM_WAIT), 0);
  CHECK_INT(count_ops(ops, nops, GF_OP_RECORD), 0);
  /* step 10 follows snapshot 7 on io[2]; snapshot 10 follows step 8, which an
   * earlier sync of the compute stream (at step 8) already covered. */
  CHECK_INT(count_ops(ops, nops, GF_OP_HOST_WAIT_STREAM), 1);
  CHECK_INT(ops[0].kind, GF_OP_HOST_WAIT_STREAM);
  CHECK_STR(gf_plan_stream_name(plan, ops[0].other), "io[2]");
  int64_t n = 11;
  const gf_op *next;
  CHECK_INT(gf_plan_step(plan, n, &diag, &next, &nops), GF_OK);
  CHECK_INT(count_ops(next, nops, GF_OP_HOST_WAIT_STREAM), 2);
  CHECK_INT(next[2].kind, GF_OP_HOST_WAIT_STREAM);
  CHECK_STR(gf_plan_stream_name(plan, next[2].other), "compute");
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

/* sync: one stream; the host waits after every copy, as hipMemcpy does. */
static void test_sync_schedule(void) {
  gf_diag diag;
  gf_workflow *wf;
  gf_plan *plan;
  const char *sets[] = {"schedule=sync"};
  CHECK_INT(load_plan("../workflows/wave2d.yaml", sets, 1, &diag, &wf, &plan), GF_OK);
  CHECK_INT(gf_plan_stream_count(plan), 1);
  int nops;
  const gf_op *ops = plan_to(plan, 10, &diag, &nops);
  CHECK_INT(nops, 3);
  CHECK_INT(ops[0].kind, GF_OP_TASK);
  CHECK_INT(ops[1].kind, GF_OP_TASK);
  CHECK_INT(ops[2].kind, GF_OP_HOST_WAIT_STREAM);
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

/* auto: no `after:` needed; the planner finds the reads-after-write and
 * writes-after-read edges itself and waits for exactly those. */
static void test_auto_infers_dependencies(void) {
  gf_diag diag;
  gf_workflow *wf;
  gf_plan *plan;
  const char *sets[] = {"schedule=auto", "loop.tasks.0.after=[]", "loop.tasks.1.after=[]"};
  CHECK_INT(load_plan("../workflows/wave2d.yaml", sets, 3, &diag, &wf, &plan), GF_OK);
  /* compute, one IO stream per ring instance, the drain of the batched output */
  CHECK_INT(gf_plan_stream_count(plan), 7);
  CHECK(gf_plan_validate(plan, &diag, NULL) == GF_OK);
  int step = task_index(wf, "step"), snap = task_index(wf, "snapshot");
  gf_plan_collect_edges(plan, 1);
  int nops;
  const gf_op *ops = plan_to(plan, 10, &diag, &nops);
  int nedges;
  const gf_edge *edges = gf_plan_edges(plan, &nedges);
  int raw = 0, war = 0;
  for (int e = 0; e < nedges; e++) {
    if (edges[e].to_task == snap && edges[e].kind == GF_EDGE_RAW) {
      CHECK_INT(edges[e].from_task, step);
      CHECK_INT(edges[e].from_step, 8); /* U[10] was written by step 8 */
      CHECK_INT(edges[e].mechanism, GF_OP_STREAM_WAIT);
      raw++;
    }
    if (edges[e].to_task == step && edges[e].kind == GF_EDGE_WAR && edges[e].from_task == snap) {
      CHECK_INT(edges[e].from_step, 7); /* U[12] = U[7] was read by snapshot 7 */
      CHECK_INT(edges[e].mechanism, GF_OP_STREAM_WAIT);
      war++;
    }
  }
  CHECK_INT(raw, 1);
  CHECK_INT(war, 1);
  CHECK_INT(
      count_ops(ops, nops, GF_OP_HOST_WAIT_EVENT) + count_ops(ops, nops, GF_OP_HOST_WAIT_STREAM),
      0);
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

/* The seed's own events pattern (workflows/wave2d_seed_events.yaml): the
 * compute stream waits on three events, the host on one, each task records
 * one; the planner adds nothing of its own and finds no hazard. */
static void test_explicit_events(void) {
  gf_diag diag;
  gf_workflow *wf;
  gf_plan *plan;
  CHECK_INT(load_plan("../workflows/wave2d_seed_events.yaml", NULL, 0, &diag, &wf, &plan), GF_OK);
  CHECK(gf_plan_validate(plan, &diag, NULL) == GF_OK);
  int nops;
  const gf_op *ops = plan_to(plan, 10, &diag, &nops);
  CHECK_INT(nops, 8);
  if (nops == 8) {
    gf_op_kind want[8] = {GF_OP_EVENT_WAIT, GF_OP_EVENT_WAIT,   GF_OP_EVENT_WAIT,
                          GF_OP_TASK,       GF_OP_EVENT_RECORD, GF_OP_HOST_EVENT_WAIT,
                          GF_OP_TASK,       GF_OP_EVENT_RECORD};
    for (int i = 0; i < 8; i++) CHECK_INT(ops[i].kind, want[i]);
    CHECK_INT(ops[0].slot, 2); /* ev[(10 + 2) % 5] */
    CHECK_INT(ops[4].slot, 0); /* ev[10 % 5] */
    CHECK_INT(ops[5].slot, 4); /* the host waits for ev[(10 - 1) % 5] */
    CHECK_INT(ops[6].plane, 9);
    CHECK_STR(gf_plan_stream_name(plan, ops[6].stream), "io[4]");
  }
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

/* A same-step `after:` on a task listed later reorders the step. */
static void test_topological_order(void) {
  gf_diag diag;
  gf_workflow *wf;
  gf_plan *plan;
  const char *sets[] = {"loop.tasks.0.after=[snapshot@n-3, snapshot]",
                        "loop.tasks.1.after=[step@n-2]", "schedule=events"};
  CHECK_INT(load_plan("../workflows/wave2d.yaml", sets, 3, &diag, &wf, &plan), GF_OK);
  const int *order = gf_plan_order(plan);
  CHECK_STR(wf->tasks[order[0]].name, "snapshot");
  CHECK_STR(wf->tasks[order[1]].name, "step");
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

/* Regions: two tasks writing one instance from two streams with nothing
 * ordering them conflict only where their regions overlap. */
static void test_regions(void) {
  static const char text[] =
      "gflow: 1\nname: regions\ngrid: {shape: [8, 8], halo: 2}\n"
      "fields: {A: {}, B: {}, C: {}}\nstreams: {s: 2}\n"
      "loop:\n  steps: 4\n  tasks:\n"
      "    - {name: left, copy: {from: A, to: C}, stream: 's[0]'}\n"
      "    - {name: right, copy: {from: B, to: C}, stream: 's[1]'}\n"
      "schedule: events\n";
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load_text("regions.yaml", text, &diag, &wf), GF_OK);
  if (!wf) return;
  gf_task *left = &wf->tasks[0], *right = &wf->tasks[1];
  gf_region *lw = &left->access[1].region, *rw = &right->access[1].region;
  CHECK_INT(left->access[1].access, GF_ACCESS_WRITE);
  gf_plan *plan = NULL;

  /* Whole arrays: a hazard. */
  CHECK_INT(gf_plan_create(wf, &diag, &plan), GF_OK);
  CHECK_INT(gf_plan_validate(plan, &diag, NULL), GF_INVALID);
  CHECK_STR(diag.last,
            "regions.yaml:10:7: hazard: task 'right' (step 0, stream s[1]) writes C while task "
            "'left' (step 0, stream s[0]) may still be writing it; add `after: [left]` to 'right', "
            "or use schedule: auto");
  gf_plan_free(plan);

  /* The interior and a halo strip: disjoint, so no hazard and no wait. */
  *lw = gf_region_interior(wf, 2);
  *rw = gf_region_whole(wf, 2);
  rw->hi[0] = 2;
  CHECK_INT(gf_plan_create(wf, &diag, &plan), GF_OK);
  CHECK_INT(gf_plan_validate(plan, &diag, NULL), GF_OK);
  int nops;
  const gf_op *ops = plan_to(plan, 3, &diag, &nops);
  CHECK_INT(count_ops(ops, nops, GF_OP_TASK), 2);
  CHECK_INT(count_ops(ops, nops, GF_OP_STREAM_WAIT) + count_ops(ops, nops, GF_OP_HOST_WAIT_STREAM),
            0);
  gf_plan_free(plan);

  /* One row of overlap is enough to conflict again. */
  rw->hi[0] = 3;
  CHECK_INT(gf_plan_create(wf, &diag, &plan), GF_OK);
  CHECK_INT(gf_plan_validate(plan, &diag, NULL), GF_INVALID);
  gf_plan_free(plan);
  gf_workflow_free(wf);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Scratch fields (workflows/wave2d_scratch.yaml): each used step gets its
 * alloc right before its first use and its free right after its last, on
 * that use's stream; under auto the work array is written on an IO stream
 * and freed on compute after the kernel that read it. */
static void test_scratch_lifetimes(void) {
  for (int pass = 0; pass < 2; pass++) {
    gf_diag diag;
    gf_workflow *wf;
    gf_plan *plan;
    const char *sets[] = {pass ? "schedule=auto" : "schedule=events"};
    CHECK_INT(load_plan("../workflows/wave2d_scratch.yaml", sets, 1, &diag, &wf, &plan), GF_OK);
    int nops;
    const gf_op *ops = plan_to(plan, 10, &diag, &nops);
    CHECK_INT(count_ops(ops, nops, GF_OP_ALLOC), 2);
    CHECK_INT(count_ops(ops, nops, GF_OP_FREE), 2);
    const char *first[2] = {"work", "pack"}, *last[2] = {"step", "snapshot"};
    for (int k = 0; k < 2; k++) {
      int field = k == 0 ? 2 : 3; /* W, P */
      CHECK_STR(wf->fields[field].name, k == 0 ? "W" : "P");
      int alloc = -1, free_at = -1, first_use = -1, last_use = -1;
      for (int i = 0; i < nops; i++) {
        if (ops[i].kind == GF_OP_ALLOC && ops[i].other == field) alloc = i;
        if (ops[i].kind == GF_OP_FREE && ops[i].other == field) free_at = i;
        if (ops[i].kind == GF_OP_TASK && ops[i].task == task_index(wf, first[k])) first_use = i;
        if (ops[i].kind == GF_OP_TASK && ops[i].task == task_index(wf, last[k])) last_use = i;
      }
      CHECK(alloc >= 0 && first_use == alloc + 1);
      CHECK(free_at >= 0 && last_use == free_at - 1);
      if (alloc < 0 || free_at < 0 || first_use < 0 || last_use < 0) continue;
      CHECK_INT(ops[alloc].stream, ops[first_use].stream);
      CHECK_INT(ops[free_at].stream, ops[last_use].stream);
      if (pass && k == 0) /* auto: the copy on an IO stream, the kernel on compute */
        CHECK(ops[alloc].stream != ops[free_at].stream);
    }
    gf_plan_free(plan);
    gf_workflow_free(wf);
  }
}

/* Every file in bad_plan/ loads, then fails planning or validation with
 * exactly the message on its first line. */
static void test_bad_plan_corpus(void) {
  DIR *d = opendir("bad_plan");
  CHECK(d != NULL);
  if (!d) return;
  char *files[64];
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) && count < 64) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0)
      files[count++] = gf_asprintf("bad_plan/%s", e->d_name);
  }
  closedir(d);
  qsort(files, (size_t)count, sizeof files[0], compare_names);
  CHECK(count >= 8);
  for (int i = 0; i < count; i++) {
    FILE *f = fopen(files[i], "r");
    char line[1024] = "";
    CHECK(f && fgets(line, sizeof line, f));
    if (f) fclose(f);
    line[strcspn(line, "\n")] = '\0';
    const char *expect = line + strlen("# expect: ");
    gf_diag diag;
    gf_workflow *wf = NULL;
    gf_plan *plan = NULL;
    gf_status st = load_plan(files[i], NULL, 0, &diag, &wf, &plan);
    if (st == GF_OK) st = gf_plan_validate(plan, &diag, NULL);
    if (st != GF_INVALID || strcmp(diag.last, expect) != 0) {
      fprintf(stderr, "%s:\n  status:   %s\n  got:      %s\n  expected: %s\n", files[i],
              gf_status_name(st), diag.last, expect);
      check_case_failed = 1;
    }
    gf_plan_free(plan);
    gf_workflow_free(wf);
    free(files[i]);
  }
}

/* A kernel that updates its field in place: the table says so, and the
 * planner then lets one instance be both its arguments. */
typedef struct inplace_args {
  gf_array in, out;
} inplace_args;
static void inplace_run(const void *args) {
  (void)args;
}

static gf_status plan_inplace(unsigned out_access, gf_diag *diag) {
  const gf_param params[] = {
      {"in", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F32, offsetof(inplace_args, in), 1, 0, 0, 0,
       ""},
      {"out", GF_PARAM_ARRAY, (gf_access)out_access, 1u << GF_F32, offsetof(inplace_args, out), 1,
       0, 0, 0, ""},
      {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
  };
  const gf_kernel kernel = {.name = "inplace",
                            .params = params,
                            .args_size = sizeof(inplace_args),
                            .run_cpu = inplace_run};
  static const char text[] =
      "gflow: 1\nname: p\ngrid: {shape: [8]}\nfields: {U: {ring: 2}}\n"
      "loop:\n  steps: 3\n  tasks:\n"
      "    - {name: t, kernel: inplace, args: {in: \"U[n]\", out: \"U[n+2]\"}}\n";
  gf_registry *registry = gf_registry_create();
  const gf_registrar *r = gf_registry_registrar(registry);
  CHECK_INT(r->add_kernel(r->ctx, &kernel), 0);
  gf_diag_init(diag, NULL, NULL);
  diag->out = quiet();
  gf_workflow *wf = NULL;
  gf_plan *plan = NULL;
  gf_status st = gf_workflow_load_text("p.yaml", text, sizeof text - 1, NULL, 0, registry, NULL,
                                       diag, &wf, NULL);
  if (st == GF_OK) {
    gf_workflow_diag_init(diag, wf);
    diag->out = quiet();
    st = gf_plan_create(wf, diag, &plan);
  }
  if (st == GF_OK) st = gf_plan_validate(plan, diag, NULL);
  gf_plan_free(plan);
  gf_workflow_free(wf);
  gf_registry_free(registry);
  return st;
}

static void test_in_place(void) {
  gf_diag diag;
  CHECK_INT(plan_inplace(GF_ACCESS_WRITE, &diag), GF_INVALID);
  CHECK_STR(diag.last,
            "p.yaml:8:59: arguments 'in' and 'out' of task 't' are both U instance 0 "
            "at step 0, and 'out' is written; a kernel may not read and write one "
            "instance unless its table declares in-place use");
  CHECK_INT(plan_inplace(GF_ACCESS_WRITE | GF_ACCESS_IN_PLACE, &diag), GF_OK);
}

int main(void) {
  RUN(test_ring_indices);
  RUN(test_events_schedule);
  RUN(test_streams_schedule);
  RUN(test_sync_schedule);
  RUN(test_auto_infers_dependencies);
  RUN(test_explicit_events);
  RUN(test_topological_order);
  RUN(test_regions);
  RUN(test_in_place);
  RUN(test_scratch_lifetimes);
  RUN(test_bad_plan_corpus);
  return check_summary();
}
