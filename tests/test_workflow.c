/* test_workflow.c - the loader against wave2d.yaml, overrides, the kernel
 * registry, and the bad-input corpus (tests/bad/NAME.yaml, each starting with
 * `# expect: <the exact message>`). Run from the tests/ folder. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "check.h"
#include "eval.h"
#include "registry.h"
#include "schedule.h"
#include "task_hook.h"
#include "task_kernel.h"
#include "task_output.h"
#include "wave2d.h"
#include "workflow.h"

/* Messages go to a scratch file: the tests read diag.last. */
static FILE *quiet(void) {
  static FILE *sink;
  if (!sink) sink = tmpfile();
  return sink;
}

static gf_registry *builtin_registry(void) {
  gf_registry *registry = gf_registry_create();
  CHECK_INT(gf_kernels_register_builtin(gf_registry_registrar(registry)), 0);
  return registry;
}

/* The evaluation object of the last load() (its hooks, loaded). */
static gf_eval *loaded_eval;

static gf_status load(const char *path, const gf_override *overrides, int noverrides, gf_diag *diag,
                      gf_workflow **wf) {
  gf_registry *registry = builtin_registry();
  gf_diag_init(diag, NULL, NULL);
  diag->out = quiet();
  gf_eval_free(loaded_eval);
  gf_status status =
      gf_workflow_load(path, overrides, noverrides, registry, NULL, diag, wf, &loaded_eval);
  gf_registry_free(registry); /* the model keeps kernel pointers, not the registry */
  return status;
}

static double eval_at(const gf_expr *expr, double n) {
  gf_eval_ctx ctx = {.n = n};
  gf_status status = GF_OK;
  double v = gf_expr_eval(expr, &ctx, &status);
  CHECK_INT(status, GF_OK);
  return v;
}

static int param_index(const gf_workflow *wf, const char *name) {
  for (int i = 0; i < wf->nparams; i++)
    if (strcmp(wf->params[i].name, name) == 0) return i;
  return -1;
}

static double param(const gf_workflow *wf, const char *name) {
  int i = param_index(wf, name);
  CHECK(i >= 0);
  return i >= 0 ? wf->params[i].value : NAN;
}

static const gf_kernel_arg *arg_named(const gf_task *task, const char *name) {
  const gf_kernel_task *k = task->data;
  for (int i = 0; i < k->nargs; i++)
    if (strcmp(k->args[i].param->name, name) == 0) return &k->args[i];
  return NULL;
}

/* The field reference of an array argument. */
static const gf_ref *arg_ref(const gf_task *task, const gf_kernel_arg *arg) {
  return &task->access[arg->access].ref;
}

static void test_wave2d_model(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load("../workflows/wave2d.yaml", NULL, 0, &diag, &wf), GF_OK);
  if (!wf) {
    fprintf(stderr, "  %s\n", diag.last);
    return;
  }
  CHECK_STR(wf->name, "wave2d");
  CHECK_STR(wf->path, "../workflows/wave2d.yaml");
  CHECK_STR(wf->dir, "../workflows");
  CHECK_INT(wf->ndim, 2);
  CHECK_INT(wf->shape[0], 256);
  CHECK_INT(wf->shape[1], 256);
  CHECK_INT(wf->shape[2], 1);
  CHECK(wf->spacing[0] == 1.0 && wf->spacing[1] == 1.0);
  CHECK_INT(wf->halo, 2);

  /* Parameters, in file order, with the seed's values. */
  CHECK_INT(wf->nparams, 6);
  static const char *const order[] = {"vel", "cfl", "dt", "nt", "fm", "td"};
  for (int i = 0; i < 6 && i < wf->nparams; i++) CHECK_STR(wf->params[i].name, order[i]);
  double dt = 0.4 / 343.0, fm = 343.0 / 10.0;
  CHECK(param(wf, "vel") == 343.0);
  CHECK(param(wf, "cfl") == 0.4);
  CHECK_NEAR(param(wf, "dt"), dt, 1e-18);
  CHECK(param(wf, "nt") == 640.0);
  CHECK_NEAR(param(wf, "fm"), fm, 1e-13);
  CHECK_NEAR(param(wf, "td"), sqrt(6.0) / (3.141592 * 34.3), 1e-16); /* the seed's pi */
  CHECK(wf->params[0].text == NULL);                                 /* a plain number */
  CHECK_STR(wf->params[2].text, "cfl * min(spacing[0], spacing[1]) / vel");
  CHECK_INT(wf->params[2].loc.line, 18);
  CHECK_INT(wf->params[2].loc.col, 8); /* inside the quotes */

  CHECK_INT(wf->default_space, GF_SPACE_DEVICE);
  /* 256 MiB of staging; batches of 16 planes (4 MiB copies), 40 buffers of
   * them: the 640 planes, under the 64 the budget holds */
  CHECK(wf->staging_budget == (int64_t)256 << 20);
  CHECK_INT(wf->files[0].batch, 16);
  CHECK_INT(wf->staging, 40);
  CHECK(gf_workflow_plane_bytes(wf) == (size_t)16 * 256 * 256 * 4);
  CHECK_STR(wf->schedule->name, "events");
  CHECK_INT(wf->steps, 640);

  /* Fields. */
  CHECK_INT(wf->nfields, 2);
  const gf_field *U = &wf->fields[0], *V = &wf->fields[1];
  CHECK_STR(U->name, "U");
  CHECK_INT(U->dtype, GF_F32);
  CHECK_INT(U->ring, 5);
  CHECK_INT(U->ndim, 2);
  CHECK_INT(U->shape[0], 256);
  CHECK_INT(U->shape[1], 256);
  CHECK_INT(U->shape[2], 1);
  CHECK_INT(U->elems, 65536);
  CHECK_INT(U->bytes, 65536 * 4);
  CHECK_INT(U->space, GF_SPACE_DEVICE);
  CHECK_INT(U->init_kind, GF_INIT_CONST);
  CHECK(U->init_value == 0.0);
  CHECK_STR(V->name, "V");
  CHECK_INT(V->ring, 1);
  CHECK_INT(V->init_kind, GF_INIT_CONST); /* `vel` folds to a constant */
  CHECK(V->init_value == 343.0);

  /* Hooks. */
  CHECK_INT(wf->nhooks, 1);
  CHECK_STR(wf->hooks[0].name, "ricker");
  CHECK_STR(wf->hooks[0].function, "ricker");
  CHECK_STR(wf->hooks[0].path, "../workflows/ricker.lua");
  CHECK(loaded_eval != NULL);

  /* Streams: compute, io[0..4]. */
  CHECK_INT(wf->ngroups, 2);
  CHECK_INT(wf->nstreams, 6);
  CHECK_STR(wf->groups[0].name, "compute");
  CHECK_INT(wf->groups[0].count, 1);
  CHECK_INT(wf->groups[0].first, 0);
  CHECK_STR(wf->groups[1].name, "io");
  CHECK_INT(wf->groups[1].count, 5);
  CHECK_INT(wf->groups[1].first, 1);
  char buf[32];
  CHECK_STR(gf_workflow_stream_name(wf, 0, buf, sizeof buf), "compute");
  CHECK_STR(gf_workflow_stream_name(wf, 1, buf, sizeof buf), "io[0]");
  CHECK_STR(gf_workflow_stream_name(wf, 5, buf, sizeof buf), "io[4]");

  /* Tasks. */
  CHECK_INT(wf->ntasks, 2);
  if (wf->ntasks != 2) goto done;
  const gf_task *step = &wf->tasks[0], *snap = &wf->tasks[1];
  CHECK_STR(step->name, "step");
  CHECK(step->kind == &gf_task_kernel_kind);
  CHECK(((const gf_kernel_task *)step->data)->kernel == &gf_kernel_wave2d_4o);
  CHECK_INT(step->loc.line, 42);
  CHECK_INT(step->loc.col, 7);
  CHECK_INT(step->stream.group, 0);
  CHECK(step->stream.index == NULL);
  CHECK(step->when == NULL);
  CHECK_INT(step->nafter, 1);
  if (step->nafter == 1) {
    CHECK_INT(step->after[0].task, 1);
    CHECK_INT(step->after[0].lag, 3);
  }
  CHECK_INT(((const gf_kernel_task *)step->data)->nargs, 8);
  const gf_kernel_arg *U0 = arg_named(step, "U0"), *U2 = arg_named(step, "U2"),
                      *Va = arg_named(step, "V");
  const gf_kernel_arg *dt_arg = arg_named(step, "dt"), *amp = arg_named(step, "amplitude");
  const gf_kernel_arg *source = arg_named(step, "source");
  CHECK(U0 && U2 && Va && dt_arg && amp && source);
  if (U0 && U2 && Va && dt_arg && amp && source) {
    CHECK_INT(arg_ref(step, U0)->field, 0);
    CHECK_STR(gf_expr_text(arg_ref(step, U0)->index), "n");
    CHECK_INT(arg_ref(step, U2)->field, 0);
    CHECK(eval_at(arg_ref(step, U2)->index, 3) == 5.0);
    CHECK_INT(arg_ref(step, U2)->loc.col, 45); /* the U of "U[n+2]" */
    CHECK_INT(arg_ref(step, Va)->field, 1);
    CHECK(arg_ref(step, Va)->index == NULL);
    /* U2 is written in its interior only, the rest read whole */
    CHECK_INT(step->access[U2->access].access, GF_ACCESS_WRITE);
    CHECK_INT(step->access[U2->access].region.lo[0], 2);
    CHECK_INT(step->access[U2->access].region.hi[1], 254);
    CHECK_INT(step->access[U0->access].region.lo[0], 0);
    CHECK(gf_expr_is_constant(dt_arg->value));
    CHECK_NEAR(eval_at(dt_arg->value, 0), dt, 1e-18);
    CHECK(!gf_expr_is_constant(amp->value));
    CHECK(gf_expr_calls_hook(amp->value));
    /* ricker(n) through the run's evaluation object, against the seed's formula (pi = 3.141592). */
    gf_status status = GF_OK;
    double got = gf_eval_number(loaded_eval, amp->value, 0, 10, &status);
    CHECK_INT(status, GF_OK);
    /* ... in the seed's float arithmetic, which ricker.lua reproduces exactly */
    float pi = 3.141592f, dt32 = (float)dt, fm32 = (float)fm;
    float td = (float)(sqrt(6.0) / (pi * fm32));
    float t = (float)(10 * dt32 - 2.0 * td), a = pi * pi * fm32 * fm32 * t * t;
    CHECK(got == (double)((1.0f - 2.0f * a) * expf(-a)));
    CHECK_INT(source->index[0], 128);
    CHECK_INT(source->index[1], 128);
  }

  CHECK_STR(snap->name, "snapshot");
  CHECK(snap->kind == &gf_task_output_kind);
  CHECK_INT(snap->access[0].ref.field, 0);
  CHECK_STR(gf_expr_text(snap->access[0].ref.index), "n");
  CHECK_INT(wf->nfiles, 1);
  CHECK_STR(wf->files[0].name, "array_out.dat");
  CHECK_INT(wf->files[0].planes, 640);
  CHECK_INT(wf->files[0].task, 1);
  CHECK(eval_at(((const gf_output_task *)snap->data)->plane, 17) == 17.0);
  CHECK(snap->when != NULL);
  if (snap->when) {
    CHECK(eval_at(snap->when, 1) == 0.0);
    CHECK(eval_at(snap->when, 2) == 1.0);
    CHECK(eval_at(snap->when, 638) == 1.0);
    CHECK(eval_at(snap->when, 639) == 0.0);
  }
  CHECK_INT(snap->stream.group, 1);
  CHECK(snap->stream.index && eval_at(snap->stream.index, 13) == 3.0);
  CHECK_INT(snap->nafter, 1);
  if (snap->nafter == 1) {
    CHECK_INT(snap->after[0].task, 0);
    CHECK_INT(snap->after[0].lag, 2);
  }

  CHECK_STR(snap->kind->name, "output");
  CHECK_STR(gf_dtype_name(GF_F64), "f64");
done:
  gf_workflow_free(wf);
}

static void test_resolved_yaml(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  gf_override set = {"grid.shape", "[300, 200]"};
  CHECK_INT(load("../workflows/wave2d.yaml", &set, 1, &diag, &wf), GF_OK);
  if (!wf) return;
  char *yaml = gf_workflow_resolved_yaml(wf);
  char expect[128];
  snprintf(expect, sizeof expect, "dt: %.17g\n", 0.4 / 343.0);
  CHECK(strstr(yaml, expect) != NULL);
  CHECK(strstr(yaml, "nt: 750\n") != NULL); /* floor(300 / 0.4) */
  CHECK(strstr(yaml, "vel: 343\n") != NULL);
  CHECK(strstr(yaml, "shape: [300, 200]") != NULL);
  CHECK(strstr(yaml, "cfl * min") == NULL); /* expressions replaced */
  CHECK(strstr(yaml, "U[n+2]") != NULL);    /* everything else kept */
  CHECK(strstr(yaml, "name: wave2d\n") != NULL);
  free(yaml);
  gf_workflow_free(wf);
}

static void test_override_grid_shape(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  gf_override set = {"grid.shape", "[512,512]"};
  CHECK_INT(load("../workflows/wave2d.yaml", &set, 1, &diag, &wf), GF_OK);
  if (!wf) return;
  CHECK_INT(wf->shape[0], 512);
  CHECK_INT(wf->fields[0].shape[1], 512);
  CHECK_INT(wf->fields[0].elems, 512 * 512);
  CHECK(param(wf, "nt") == 1280.0);
  CHECK_INT(wf->steps, 1280);
  CHECK_INT(wf->files[0].planes, 1280);
  const gf_kernel_arg *source = arg_named(&wf->tasks[0], "source");
  CHECK(source && source->index[0] == 256 && source->index[1] == 256);
  gf_workflow_free(wf);
}

static void test_override_schedule_and_params(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  gf_override sets[] = {
      {"schedule", "sync"},
      {"params.cfl", "0.2"},
      {"loop.tasks.1.stream", "compute"},
      {"params.extra", "cfl * 10"}, /* a new key is added at the end */
  };
  CHECK_INT(load("../workflows/wave2d.yaml", sets, 4, &diag, &wf), GF_OK);
  if (!wf) {
    fprintf(stderr, "  %s\n", diag.last);
    return;
  }
  CHECK_STR(wf->schedule->name, "sync");
  CHECK_NEAR(param(wf, "dt"), 0.2 / 343.0, 1e-18);
  CHECK(param(wf, "nt") == 1280.0);
  CHECK_INT(wf->steps, 1280);
  CHECK_INT(wf->tasks[1].stream.group, 0);
  CHECK(wf->tasks[1].stream.index == NULL);
  CHECK_INT(wf->nparams, 7);
  CHECK_NEAR(param(wf, "extra"), 2.0, 1e-15);
  gf_workflow_free(wf);

  /* A later override of the same key wins. */
  gf_override twice[] = {{"schedule", "sync"}, {"schedule", "streams"}};
  CHECK_INT(load("../workflows/wave2d.yaml", twice, 2, &diag, &wf), GF_OK);
  if (wf) CHECK_STR(wf->schedule->name, "streams");
  gf_workflow_free(wf);
}

static void expect_override_error(const char *key, const char *value, const char *message) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  gf_override set = {key, value};
  CHECK_INT(load("../workflows/wave2d.yaml", &set, 1, &diag, &wf), GF_INVALID);
  CHECK(wf == NULL);
  CHECK_STR(diag.last, message);
  CHECK_INT(diag.count, 1);
  gf_workflow_free(wf);
}

static void test_override_errors(void) {
  expect_override_error("grid.shap", "[1]",
                        "--set grid.shap=[1]:1:6: unknown key 'shap' in grid; expected one of: "
                        "shape, spacing, halo, boundary");
  expect_override_error("grid.shape", "[0,8]",
                        "--set grid.shape=[0,8]:1:13: a size must be >= 1, got 0");
  /* A missing mapping on the path is created, then judged by the schema. */
  expect_override_error("grid.foo.x", "1",
                        "--set grid.foo.x=1:1:6: unknown key 'foo' in grid; expected one of: "
                        "shape, spacing, halo, boundary");
  expect_override_error("nope.x", "1",
                        "--set nope.x=1:1:1: unknown key 'nope' at the top level; expected one of: "
                        "gflow, name, grid, hooks, params, memory, fields, streams, events, "
                        "schedule, loop, limits, check, checkpoint, decomposition, exchange");
  expect_override_error("name.x", "1", "--set name.x=1:1:6: no key 'x' in name to set");
  expect_override_error(
      "check.every", "-1",
      "--set check.every=-1:1:13: every must be between 0 and 1000000000000, got -1");
  expect_override_error("limits.lua_memory", "1000",
                        "--set limits.lua_memory=1000:1:19: lua_memory must be between 1048576 and "
                        "1099511627776, got 1000");
  expect_override_error("loop.tasks.7.stream", "io",
                        "--set loop.tasks.7.stream=io:1:12: no key '7' in loop.tasks to set");
  expect_override_error("schedule", "fast",
                        "--set schedule=fast:1:10: unknown schedule 'fast'; expected one of: "
                        "sync, streams, events, graph, auto");
  expect_override_error("params.cfl", "0.4 +",
                        "--set params.cfl=0.4 +:1:17: "
                        "unexpected end of expression");
  expect_override_error("loop.tasks.0.stream", "\"io[n % 7] + \"",
                        "--set loop.tasks.0.stream=\"io[n % 7] + \":1:21: expected a stream GROUP "
                        "or GROUP[EXPR], got 'io[n % 7] + '");
  expect_override_error("grid.shape", "[1, 2",
                        "--set grid.shape=[1, 2:1:17: did not find "
                        "expected ',' or ']'");
  expect_override_error("grid", "*x", "--set grid=*x:1:6: aliases are not supported");
}

/* A kernel table for the registry's checks. */
typedef struct toy_args {
  gf_array in;
  double scale;
  int64_t count; /* no range: min == max == 0 */
  double bias;   /* no range: min > max */
} toy_args;
static void toy_run(const void *args) {
  (void)args;
}
static const gf_param toy_params[] = {
    {"in", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F32, offsetof(toy_args, in), 1, 0, 0, 0, ""},
    {"scale", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(toy_args, scale), 0, 1, 0, 10, ""},
    {"count", GF_PARAM_INT, GF_ACCESS_NONE, 0, offsetof(toy_args, count), 0, 0, 0, 0, ""},
    {"bias", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(toy_args, bias), 0, 0, 1, -1, ""},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};
static const gf_param toy_params_dup[] = {
    {"in", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F32, offsetof(toy_args, in), 1, 0, 0, 0, ""},
    {"in", GF_PARAM_REAL, GF_ACCESS_NONE, 0, offsetof(toy_args, scale), 0, 1, 0, 10, ""},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};
static const gf_param toy_params_outside[] = {
    {"in", GF_PARAM_ARRAY, GF_ACCESS_READ, 1u << GF_F32, offsetof(toy_args, in), 1, 0, 0, 0, ""},
    {"scale", GF_PARAM_REAL, GF_ACCESS_NONE, 0, sizeof(toy_args) - 4, 0, 1, 0, 10, ""},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

static void test_registry(void) {
  gf_registry *registry = builtin_registry();
  const gf_registrar *r = gf_registry_registrar(registry);
  const int builtin = gf_registry_count(registry);
  CHECK(builtin >= 2); /* wave2d_4o, blur, ... */
  CHECK(gf_registry_find(registry, "wave2d_4o") == &gf_kernel_wave2d_4o);
  CHECK(gf_registry_find(registry, "stencil") == &gf_kernel_stencil);
  CHECK(gf_registry_at(registry, 0) == &gf_kernel_wave2d_4o);
  CHECK(gf_registry_at(registry, builtin) == NULL);
  CHECK(gf_registry_find(registry, "wave3d") == NULL);

  fprintf(stderr, "(the registry's refusals below are expected)\n");
  gf_kernel toy = {
      .name = "toy", .params = toy_params, .args_size = sizeof(toy_args), .run_cpu = toy_run};
  CHECK_INT(r->add_kernel(r->ctx, &gf_kernel_wave2d_4o), 1); /* a second wave2d_4o */
  gf_kernel bad = toy;
  bad.name = "";
  CHECK_INT(r->add_kernel(r->ctx, &bad), 1);
  bad = toy;
  bad.run_cpu = NULL;
  CHECK_INT(r->add_kernel(r->ctx, &bad), 1);
  bad = toy;
  bad.args_size = GF_MAX_KERNEL_ARGS_SIZE + 1;
  CHECK_INT(r->add_kernel(r->ctx, &bad), 1);
  bad = toy;
  bad.params = toy_params_dup;
  CHECK_INT(r->add_kernel(r->ctx, &bad), 1);
  bad = toy;
  bad.params = toy_params_outside;
  CHECK_INT(r->add_kernel(r->ctx, &bad), 1);
  CHECK_INT(gf_registry_count(registry), builtin);
  CHECK_INT(r->add_kernel(r->ctx, &toy), 0);
  CHECK_INT(gf_registry_count(registry), builtin + 1);
  CHECK(gf_registry_find(registry, "toy") == &toy);

  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  diag.out = quiet();
  CHECK_INT(gf_registry_load_plugin(registry, "no/such/plugin.so", &diag), GF_NOINPUT);
  CHECK(strncmp(diag.last, "cannot load plugin no/such/plugin.so: ", 38) == 0);
  gf_registry_free(registry);
}

/* A kernel that is not built in, loaded through the same registry. */
static void test_custom_kernel_args(void) {
  gf_registry *registry = builtin_registry();
  const gf_registrar *r = gf_registry_registrar(registry);
  gf_kernel toy = {
      .name = "toy", .params = toy_params, .args_size = sizeof(toy_args), .run_cpu = toy_run};
  CHECK_INT(r->add_kernel(r->ctx, &toy), 0);
  static const char text[] =
      "gflow: 1\nname: toy\ngrid: {shape: [4]}\nfields: {A: {}}\n"
      "loop:\n  steps: 2\n  tasks:\n    - {name: t, kernel: toy, args: {in: A}}\n";
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  diag.out = quiet();
  gf_workflow *wf = NULL;
  CHECK_INT(gf_workflow_load_text("toy.yaml", text, sizeof text - 1, NULL, 0, registry, NULL, &diag,
                                  &wf, NULL),
            GF_OK);
  if (wf) {
    const gf_kernel_arg *scale = arg_named(&wf->tasks[0], "scale");
    CHECK(scale && scale->value && gf_expr_is_constant(scale->value));
    if (scale && scale->value) CHECK(eval_at(scale->value, 0) == 1.0); /* its default */
    CHECK_STR(wf->schedule->name, "auto");
    CHECK_INT(wf->tasks[0].stream.group, -1);
    CHECK_INT(wf->nstreams, 0);
    gf_workflow_free(wf);
  }
  static const char range[] =
      "gflow: 1\nname: toy\ngrid: {shape: [4]}\nfields: {A: {}}\n"
      "loop:\n  steps: 2\n  tasks:\n    - {name: t, kernel: toy, args: {in: A, scale: 11}}\n";
  CHECK_INT(gf_workflow_load_text("toy.yaml", range, sizeof range - 1, NULL, 0, registry, NULL,
                                  &diag, &wf, NULL),
            GF_INVALID);
  CHECK_STR(diag.last, "toy.yaml:8:51: argument 'scale' of toy must be between 0 and 10, got 11");
  /* A parameter whose table gives no range (min == max == 0, or min > max)
   * takes any finite value; it once read "must be between 0 and 0, got 1". */
  static const char no_range[] =
      "gflow: 1\nname: toy\ngrid: {shape: [4]}\nfields: {A: {}}\n"
      "loop:\n  steps: 2\n  tasks:\n    - {name: t, kernel: toy, args: {in: A, count: 1, bias: "
      "-7.5}}\n";
  CHECK_INT(gf_workflow_load_text("toy.yaml", no_range, sizeof no_range - 1, NULL, 0, registry,
                                  NULL, &diag, &wf, NULL),
            GF_OK);
  if (wf) {
    const gf_kernel_arg *count = arg_named(&wf->tasks[0], "count");
    const gf_kernel_arg *bias = arg_named(&wf->tasks[0], "bias");
    CHECK(count && bias && eval_at(count->value, 0) == 1.0 && eval_at(bias->value, 0) == -7.5);
    gf_workflow_free(wf);
  }
  CHECK(gf_param_has_range(&toy_params[1]));
  CHECK(!gf_param_has_range(&toy_params[2]) && !gf_param_has_range(&toy_params[3]));
  CHECK(diag.origin == NULL); /* the caller's diag is left as it was */
  gf_registry_free(registry);
}

static int toy_launch_gpu(const void *args, void *stream) {
  (void)args;
  (void)stream;
  return 0;
}

/* --backend auto asks the model which task, if any, only the CPU can run. */
static void test_cpu_only_task(void) {
  gf_registry *registry = builtin_registry();
  const gf_registrar *r = gf_registry_registrar(registry);
  gf_kernel cpu_only = {
      .name = "toy", .params = toy_params, .args_size = sizeof(toy_args), .run_cpu = toy_run};
  gf_kernel both = cpu_only;
  both.name = "toy_gpu";
  both.launch_gpu = toy_launch_gpu;
  CHECK_INT(r->add_kernel(r->ctx, &cpu_only), 0);
  CHECK_INT(r->add_kernel(r->ctx, &both), 0);
  static const char *const texts[] = {
      /* a copy, a kernel with both implementations, then one without a GPU one */
      "gflow: 1\nname: t\ngrid: {shape: [4]}\nfields: {A: {}, B: {}}\n"
      "loop:\n  steps: 2\n  tasks:\n    - {name: c, copy: {from: A, to: B}}\n"
      "    - {name: g, kernel: toy_gpu, args: {in: A}}\n"
      "    - {name: h, kernel: toy, args: {in: B}}\n",
      /* every kernel runs on the GPU */
      "gflow: 1\nname: t\ngrid: {shape: [4]}\nfields: {A: {}}\n"
      "loop:\n  steps: 2\n  tasks:\n    - {name: g, kernel: toy_gpu, args: {in: A}}\n",
      /* no kernel at all */
      "gflow: 1\nname: t\ngrid: {shape: [4]}\nfields: {A: {}, B: {}}\n"
      "loop:\n  steps: 2\n  tasks:\n    - {name: c, copy: {from: A, to: B}}\n",
  };
  const char *want[] = {"h", NULL, NULL};
  for (int i = 0; i < 3; i++) {
    gf_diag diag;
    gf_diag_init(&diag, NULL, NULL);
    diag.out = quiet();
    gf_workflow *wf = NULL;
    CHECK_INT(gf_workflow_load_text("toy.yaml", texts[i], strlen(texts[i]), NULL, 0, registry, NULL,
                                    &diag, &wf, NULL),
              GF_OK);
    if (!wf) {
      fprintf(stderr, "case %d: %s\n", i, diag.last);
      continue;
    }
    const gf_kernel *kernel = &both;
    const gf_task *task = gf_workflow_cpu_only_task(wf, &kernel);
    if (want[i]) {
      CHECK(task && strcmp(task->name, want[i]) == 0);
      CHECK(kernel == &cpu_only);
    } else {
      CHECK(task == NULL);
      CHECK(kernel == NULL);
    }
    CHECK(gf_workflow_cpu_only_task(wf, NULL) == task);
    gf_workflow_free(wf);
  }
  gf_registry_free(registry);
}

/* A plugin-style 3-D kernel with a cell index and a check() that checks
 * nothing: the loader alone keeps the index inside the grid. */
typedef struct probe_args {
  gf_array out;
  int64_t at[GF_MAX_DIMS];
} probe_args;
static void probe_run(const void *args) {
  const probe_args *a = args;
  float *out = a->out.data;
  out[(a->at[0] * a->out.shape[1] + a->at[1]) * a->out.shape[2] + a->at[2]] = 1.0f;
}
static int probe_check(const void *args, char *why, size_t why_size) {
  (void)args, (void)why, (void)why_size;
  return 0; /* forgets to check `at` */
}
static const gf_param probe_params[] = {
    {"out", GF_PARAM_ARRAY, GF_ACCESS_WRITE, 1u << GF_F32, offsetof(probe_args, out), 1, 0, 0, 0,
     ""},
    {"at", GF_PARAM_INDEX, GF_ACCESS_NONE, 0, offsetof(probe_args, at), 0, 6, 0, 0, ""},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

static void test_index_outside_grid(void) {
  gf_registry *registry = builtin_registry();
  const gf_registrar *r = gf_registry_registrar(registry);
  gf_kernel probe = {.name = "probe",
                     .params = probe_params,
                     .args_size = sizeof(probe_args),
                     .check = probe_check,
                     .run_cpu = probe_run};
  CHECK_INT(r->add_kernel(r->ctx, &probe), 0);
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  diag.out = quiet();
  gf_workflow *wf = NULL;
  static const char far[] =
      "gflow: 1\nname: p\ngrid: {shape: [8, 8, 8]}\nfields: {A: {}}\n"
      "loop:\n  steps: 1\n  tasks:\n    - {name: t, kernel: probe, args: {out: A, at: [5000, 0, "
      "0]}}\n";
  CHECK_INT(gf_workflow_load_text("p.yaml", far, sizeof far - 1, NULL, 0, registry, NULL, &diag,
                                  &wf, NULL),
            GF_INVALID);
  CHECK_STR(diag.last,
            "p.yaml:8:52: argument 'at' of probe: index 5000 is outside the grid (0..7) on axis 0");
  static const char negative[] =
      "gflow: 1\nname: p\ngrid: {shape: [8, 8, 8]}\nfields: {A: {}}\n"
      "loop:\n  steps: 1\n  tasks:\n    - {name: t, kernel: probe, args: {out: A, at: [0, 0, "
      "-1]}}\n";
  CHECK_INT(gf_workflow_load_text("p.yaml", negative, sizeof negative - 1, NULL, 0, registry, NULL,
                                  &diag, &wf, NULL),
            GF_INVALID);
  CHECK_STR(diag.last,
            "p.yaml:8:58: argument 'at' of probe: index -1 is outside the grid (0..7) on axis 2");
  /* The table's default cell, 6, is checked against each grid too. */
  static const char small[] =
      "gflow: 1\nname: p\ngrid: {shape: [8, 4, 8]}\nfields: {A: {}}\n"
      "loop:\n  steps: 1\n  tasks:\n    - {name: t, kernel: probe, args: {out: A}}\n";
  CHECK_INT(gf_workflow_load_text("p.yaml", small, sizeof small - 1, NULL, 0, registry, NULL, &diag,
                                  &wf, NULL),
            GF_INVALID);
  CHECK_STR(diag.last,
            "p.yaml:8:7: the default of argument 'at' of probe: index 6 is outside the "
            "grid (0..3) on axis 1");
  static const char fits[] =
      "gflow: 1\nname: p\ngrid: {shape: [8, 8, 8]}\nfields: {A: {}}\n"
      "loop:\n  steps: 1\n  tasks:\n    - {name: t, kernel: probe, args: {out: A, at: [7, 0, "
      "7]}}\n";
  CHECK_INT(gf_workflow_load_text("p.yaml", fits, sizeof fits - 1, NULL, 0, registry, NULL, &diag,
                                  &wf, NULL),
            GF_OK);
  gf_workflow_free(wf);
  /* A default that is no cell at all is the table's mistake. */
  static const gf_param bad_default[] = {
      {"out", GF_PARAM_ARRAY, GF_ACCESS_WRITE, 1u << GF_F32, offsetof(probe_args, out), 1, 0, 0, 0,
       ""},
      {"at", GF_PARAM_INDEX, GF_ACCESS_NONE, 0, offsetof(probe_args, at), 0, -3, 0, 0, ""},
      {NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
  };
  gf_kernel bad = probe;
  bad.name = "probe2";
  bad.params = bad_default;
  gf_registry_set_diag(registry, &diag);
  CHECK_INT(r->add_kernel(r->ctx, &bad), 1);
  CHECK_STR(diag.last, "kernel probe2 parameter 'at' has default -3, which is not a cell index");
  gf_registry_free(registry);
}

/* wave2d's stability condition: the default cfl 0.4 passes, 0.9 is
 * recorded at load, refused by `run` and noted by `validate`. */
static void test_wave2d_stability(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load("../workflows/wave2d.yaml", NULL, 0, &diag, &wf), GF_OK);
  if (wf) {
    CHECK(wf->tasks[0].unstable == NULL);
    CHECK_INT(gf_workflow_check_stable(wf, GF_UNSTABLE_REFUSE, &diag), GF_OK);
    CHECK_INT(diag.count, 0);
  }
  gf_workflow_free(wf);
  /* sqrt(3/8) ~ 0.612 is the bound on a square grid */
  gf_override stable = {"params.cfl", "0.61"}, unstable = {"params.cfl", "0.9"};
  CHECK_INT(load("../workflows/wave2d.yaml", &stable, 1, &diag, &wf), GF_OK);
  if (wf) CHECK(wf->tasks[0].unstable == NULL);
  gf_workflow_free(wf);
  CHECK_INT(load("../workflows/wave2d.yaml", &unstable, 1, &diag, &wf), GF_OK);
  if (wf) {
    const char *why =
        "task 'step': kernel wave2d_4o is unstable with these arguments: "
        "|V|*dt*sqrt(1/dx0^2 + 1/dx1^2) is 1.273, above sqrt(3)/2 = 0.866, the "
        "stability limit of this scheme (4th order in space, leapfrog in time)";
    char want[512];
    gf_workflow_diag_init(&diag, wf);
    diag.out = quiet();
    CHECK_INT(gf_workflow_check_stable(wf, GF_UNSTABLE_REFUSE, &diag), GF_INVALID);
    snprintf(want, sizeof want,
             "../workflows/wave2d.yaml:43:15: %s; pass --allow-unstable to run it anyway", why);
    CHECK_STR(diag.last, want);
    CHECK_INT(gf_workflow_check_stable(wf, GF_UNSTABLE_NOTE, &diag), GF_OK);
    snprintf(
        want, sizeof want,
        "../workflows/wave2d.yaml:43:15: note: %s; gflow run refuses it without --allow-unstable",
        why);
    CHECK_STR(diag.last, want);
    CHECK_INT(gf_workflow_check_stable(wf, GF_UNSTABLE_ALLOW, &diag), GF_OK);
  }
  gf_workflow_free(wf);
  /* A velocity known only per cell is not judged. */
  gf_override per_cell = {"fields.V.init", "\"vel * (1 + 0 * i0)\""};
  gf_override both[2] = {unstable, per_cell};
  CHECK_INT(load("../workflows/wave2d.yaml", both, 2, &diag, &wf), GF_OK);
  if (wf) CHECK(wf->tasks[0].unstable == NULL);
  gf_workflow_free(wf);
}

static void test_unreadable_file(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load("bad/no_such_file.yaml", NULL, 0, &diag, &wf), GF_NOINPUT);
  CHECK_STR(diag.last, "cannot read bad/no_such_file.yaml: No such file or directory");
}

static void test_good_features(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load("good/features.yaml", NULL, 0, &diag, &wf), GF_OK);
  if (!wf) {
    fprintf(stderr, "  %s\n", diag.last);
    return;
  }
  CHECK_STR(wf->name, "features-3d.v1");
  CHECK_INT(wf->ndim, 3);
  CHECK_INT(wf->shape[2], 4);
  CHECK(wf->spacing[0] == 0.5 && wf->spacing[2] == 2.0);
  CHECK(param(wf, "cells") == 128.0);
  CHECK(param(wf, "nt") == 16.0);
  CHECK_INT(wf->steps, 16);
  CHECK_INT(wf->default_space, GF_SPACE_PINNED);
  CHECK_INT(wf->staging, 2);
  CHECK_STR(wf->schedule->name, "streams");
  CHECK_INT(wf->nhooks, 2);
  CHECK_STR(wf->hooks[0].function, "bump3");
  CHECK_STR(wf->hooks[0].path, "good/good_hooks.lua");
  CHECK_STR(wf->hooks[1].function, "twice");
  double got = 0, n = 21;
  CHECK_INT(gf_eval_hook(loaded_eval, 1, &n, 1, &got, -1, 0), GF_OK); /* twice(n) */
  CHECK(got == 42.0);

  const gf_field *A = &wf->fields[0], *B = &wf->fields[1], *D = &wf->fields[3];
  CHECK_INT(A->dtype, GF_F64);
  CHECK_INT(A->bytes, 128 * 8);
  CHECK_INT(A->space, GF_SPACE_MANAGED);
  CHECK_INT(A->prefetch, 1);
  CHECK_INT(A->read_mostly, 0);
  CHECK_INT(A->init_kind, GF_INIT_EXPR);
  if (A->init_expr) {
    double vars[GF_VAR_COUNT] = {0};
    vars[GF_VAR_X0] = 1.5;
    vars[GF_VAR_I1] = 2;
    gf_eval_ctx ctx = {.vars = vars};
    gf_status status = GF_OK;
    CHECK(gf_expr_eval(A->init_expr, &ctx, &status) == 1.5 + 20 + 3); /* pi is the param */
  }
  CHECK_INT(B->init_kind, GF_INIT_HOOK);
  CHECK_INT(B->init_hook, 0);
  CHECK_INT(B->space, GF_SPACE_PINNED);
  CHECK_INT(D->ndim, 1);
  CHECK_INT(D->shape[0], 64);
  CHECK_INT(D->shape[1], 1);
  CHECK_INT(D->ring, 2);
  CHECK_INT(D->space, GF_SPACE_HOST);

  CHECK_INT(wf->nstreams, 2);
  char buf[16];
  CHECK_STR(gf_workflow_stream_name(wf, 1, buf, sizeof buf), "s[1]");
  CHECK_INT(wf->ntasks, 3);
  if (wf->ntasks != 3) goto done;
  const gf_task *copy = &wf->tasks[0], *poke = &wf->tasks[1], *out = &wf->tasks[2];
  CHECK(copy->kind == &gf_task_copy_kind);
  CHECK_INT(copy->access[0].ref.field, 0);
  CHECK_INT(copy->access[1].ref.field, 2);
  CHECK(copy->stream.index && eval_at(copy->stream.index, 5) == 0.0);
  CHECK(poke->kind == &gf_task_hook_kind);
  CHECK_INT(((const gf_hook_task *)poke->data)->hook, 1);
  CHECK(eval_at(poke->stream.index, 5) == 1.0);
  CHECK(eval_at(poke->when, 4) == 1.0 && eval_at(poke->when, 5) == 0.0);
  CHECK(out->kind == &gf_task_output_kind);
  CHECK_INT(out->access[0].ref.field, 3);
  CHECK(eval_at(out->access[0].ref.index, 4) == 5.0);
  CHECK_INT(wf->files[0].planes, 16);
  CHECK(eval_at(((const gf_output_task *)out->data)->plane, 7) == 3.0);
  CHECK_INT(out->stream.group, 0);
  CHECK(out->stream.index == NULL);
  CHECK_INT(out->nafter, 3);
  if (out->nafter == 3) {
    CHECK(out->after[0].task == 0 && out->after[0].lag == 1);
    CHECK(out->after[1].task == 1 && out->after[1].lag == 0);
    CHECK(out->after[2].task == 2 && out->after[2].lag == 2);
  }
done:
  gf_workflow_free(wf);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .yaml file in `dir`, sorted. */
static int list_yaml(const char *dir, char ***out) {
  DIR *d = opendir(dir);
  int count = 0;
  *out = NULL;
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
    *out = realloc(*out, (size_t)(count + 1) * sizeof **out);
    (*out)[count++] = gf_asprintf("%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (count > 1) qsort(*out, (size_t)count, sizeof **out, compare_names);
  return count;
}

static void test_bad_corpus(void) {
  char **files;
  int count = list_yaml("bad", &files);
  CHECK(count >= 40);
  for (int i = 0; i < count; i++) {
    FILE *f = fopen(files[i], "r");
    char line[1024] = "";
    CHECK(f && fgets(line, sizeof line, f));
    if (f) fclose(f);
    line[strcspn(line, "\n")] = '\0';
    const char *prefix = "# expect: ";
    if (strncmp(line, prefix, strlen(prefix)) != 0) {
      fprintf(stderr, "%s: first line is not '# expect: ...'\n", files[i]);
      check_case_failed = 1;
      continue;
    }
    gf_diag diag;
    gf_workflow *wf = NULL;
    gf_status status = load(files[i], NULL, 0, &diag, &wf);
    if (status != GF_INVALID || strcmp(diag.last, line + strlen(prefix)) != 0) {
      fprintf(stderr, "%s:\n  status:   %s\n  got:      %s\n  expected: %s\n", files[i],
              gf_status_name(status), diag.last, line + strlen(prefix));
      check_case_failed = 1;
    }
    CHECK(wf == NULL);
    CHECK_INT(diag.count, 1); /* one problem, reported once */
    gf_workflow_free(wf);
    free(files[i]);
  }
  free(files);
}

static void test_good_corpus(void) {
  char **files;
  int count = list_yaml("good", &files);
  CHECK(count >= 1);
  for (int i = 0; i < count; i++) {
    gf_diag diag;
    gf_workflow *wf = NULL;
    if (load(files[i], NULL, 0, &diag, &wf) != GF_OK) {
      fprintf(stderr, "%s: %s\n", files[i], diag.last);
      check_case_failed = 1;
    }
    gf_workflow_free(wf);
    free(files[i]);
  }
  free(files);
}

/* ---- limits and the check block ------------------------------------------- */

static gf_status load_text(const char *text, size_t len, const gf_override *overrides,
                           int noverrides, const gf_lua_limits *limits, gf_diag *diag,
                           gf_workflow **wf) {
  gf_registry *registry = builtin_registry();
  gf_diag_init(diag, NULL, NULL);
  diag->out = quiet();
  gf_status status = gf_workflow_load_text("mem.yaml", text, len, overrides, noverrides, registry,
                                           limits, diag, wf, NULL);
  gf_registry_free(registry);
  return status;
}

/* ---- list arguments: cells and taps --------------------------------------- */

static void test_list_arguments(void) {
  static const char text[] =
      "gflow: 1\nname: t\ngrid: {shape: [16, 20], spacing: [0.5, 2.0], halo: 2}\n"
      "params: {k: 3}\n"
      "fields: {U: {ring: 3}, V: {init: 1}}\n"
      "loop:\n  steps: 2\n  tasks:\n"
      "    - name: s\n      kernel: stencil\n"
      "      args: {out: \"U[n+2]\", in0: \"U[n+1]\", in2: V,\n"
      "             taps0: [[0, 0, 1.5], {laplacian: 4, times: \"k\"}, [0, 1, -1]],\n"
      "             taps2: [{derivative: 2, axis: 1, times: 4}]}\n"
      "    - name: w\n      kernel: wave\n"
      "      args: {U0: \"U[n]\", U1: \"U[n+1]\", U2: \"U[n+2]\", V: V, dt: 0.001,\n"
      "             sources: [[3, 4], [\"k\", 5, -2.5], [3, 4, 0.5]]}\n";
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load_text(text, sizeof text - 1, NULL, 0, NULL, &diag, &wf), GF_OK);
  if (!wf) return;
  /* taps0: the centre 1.5 + k*(-5/2)(1/0.25 + 1/4), the explicit [0, 1]
   * summed with the laplacian's, in the order first written. */
  const gf_kernel_arg *t0 = arg_named(&wf->tasks[0], "taps0");
  CHECK_INT(t0->npoints, 9);
  CHECK(t0->points[0].at[0] == 0 && t0->points[0].at[1] == 0);
  CHECK_NEAR(t0->points[0].weight, 1.5 + 3 * -2.5 * (4.0 + 0.25), 1e-12);
  double right = 0, up2 = 0;
  for (int64_t i = 0; i < t0->npoints; i++) {
    if (t0->points[i].at[0] == 0 && t0->points[i].at[1] == 1) right = t0->points[i].weight;
    if (t0->points[i].at[0] == -2 && t0->points[i].at[1] == 0) up2 = t0->points[i].weight;
  }
  CHECK_NEAR(right, 3 * (4.0 / 3.0) * 0.25 - 1, 1e-12);
  CHECK_NEAR(up2, 3 * (-1.0 / 12.0) * 4.0, 1e-12);
  /* taps2: d/dx1 over dx1 = 2, times 4: -1 at [0, -1], +1 at [0, 1] */
  const gf_kernel_arg *t2 = arg_named(&wf->tasks[0], "taps2");
  CHECK_INT(t2->npoints, 2);
  CHECK(t2->points[0].at[1] == -1 && t2->points[1].at[1] == 1);
  CHECK_NEAR(t2->points[0].weight, -1.0, 1e-12);
  CHECK_NEAR(t2->points[1].weight, 1.0, 1e-12);
  /* in1, in3 not given: no access; the given arrays are the accesses in table order */
  CHECK_INT(wf->tasks[0].naccess, 3);
  CHECK_INT(arg_named(&wf->tasks[0], "in1")->access, -1);
  CHECK_INT(arg_named(&wf->tasks[0], "in2")->access, 2);
  /* sources: every entry kept (a cell may come twice), weight 1 when left out */
  const gf_kernel_arg *src = arg_named(&wf->tasks[1], "sources");
  CHECK_INT(src->npoints, 3);
  CHECK(src->points[0].at[0] == 3 && src->points[0].at[1] == 4 && src->points[0].weight == 1);
  CHECK(src->points[1].at[0] == 3 && src->points[1].weight == -2.5);
  CHECK(src->points[2].weight == 0.5);
  CHECK(arg_named(&wf->tasks[1], "pattern")->access == -1);
  gf_workflow_free(wf);
}

static void test_document_size(void) {
  /* One byte over 16 MiB is refused before libyaml sees it. */
  size_t len = GF_MAX_DOCUMENT_BYTES + 1;
  char *text = malloc(len);
  memset(text, ' ', len);
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load_text(text, len, NULL, 0, NULL, &diag, &wf), GF_INVALID);
  CHECK_STR(diag.last, "mem.yaml: workflow file is 16777217 bytes, more than the limit of 16 MiB");
  CHECK(wf == NULL);
  free(text);

  /* The same through a file, checked by its size: nothing is read. */
  FILE *f = fopen("/tmp/gflow_test_big.yaml", "w");
  CHECK(f && fseek(f, (long)GF_MAX_DOCUMENT_BYTES, SEEK_SET) == 0 && fputc('\n', f) != EOF);
  if (f) fclose(f);
  CHECK_INT(load("/tmp/gflow_test_big.yaml", NULL, 0, &diag, &wf), GF_INVALID);
  CHECK_STR(diag.last,
            "/tmp/gflow_test_big.yaml: workflow file is 16777217 bytes, more than the limit of "
            "16 MiB");
  remove("/tmp/gflow_test_big.yaml");
}

static void test_node_count(void) {
  /* root, gflow, 1, name, t, x, the sequence: 7 nodes before the items, so
   * the 100001st node is item 99993, at column 5 + 2 * 99993 of line 3. */
  const char *head = "gflow: 1\nname: t\nx: [";
  size_t items = 100000, len = strlen(head) + 2 * items + 2;
  char *text = malloc(len + 1);
  strcpy(text, head);
  char *p = text + strlen(head);
  for (size_t i = 0; i < items; i++, p += 2) memcpy(p, i + 1 < items ? "0," : "0]", 2);
  *p++ = '\n';
  *p = '\0';
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load_text(text, strlen(text), NULL, 0, NULL, &diag, &wf), GF_INVALID);
  CHECK_STR(diag.last, "mem.yaml:3:199991: the workflow has more than 100000 YAML nodes");
  CHECK_INT(diag.count, 1);
  /* 99990 items keep the document under the limit: the schema speaks instead. */
  strcpy(text + strlen(head) + 2 * 99989, "0]\n");
  CHECK_INT(load_text(text, strlen(text), NULL, 0, NULL, &diag, &wf), GF_INVALID);
  CHECK(strstr(diag.last, "unknown key 'x' at the top level") != NULL);
  free(text);
}

static void test_too_many_tasks(void) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  fprintf(mem,
          "gflow: 1\nname: t\ngrid: {shape: [8]}\nfields: {A: {}, B: {}}\nloop:\n  steps: 1\n"
          "  tasks:\n");
  for (int t = 0; t < 257; t++) fprintf(mem, "    - {name: c%d, copy: {from: A, to: B}}\n", t);
  fclose(mem);
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load_text(text, len, NULL, 0, NULL, &diag, &wf), GF_INVALID);
  CHECK_STR(diag.last, "mem.yaml:8:5: too many tasks: 257, at most 256");
  free(text);
}

static const char limits_yaml[] =
    "gflow: 1\n"
    "name: t\n"
    "grid: {shape: [16, 16]}\n"
    "params: {mib: 1048576}\n"
    "fields: {U: {ring: 2}, V: {dtype: f64}}\n"
    "loop:\n"
    "  steps: 4\n"
    "  tasks:\n"
    "    - {name: c, copy: {from: \"U[n]\", to: \"U[n+1]\"}}\n"
    "limits: {lua_memory: 8 * mib, lua_instructions: 1e6}\n"
    "check: {every: 5, fields: [V], finite: false, max_abs: 2 * mib}\n";

static void test_limits_and_check(void) {
  gf_diag diag;
  gf_workflow *wf = NULL;
  CHECK_INT(load_text(limits_yaml, strlen(limits_yaml), NULL, 0, NULL, &diag, &wf), GF_OK);
  if (!wf) {
    fprintf(stderr, "  %s\n", diag.last);
    return;
  }
  CHECK_INT(wf->lua_limits.memory_bytes, 8 << 20);
  CHECK_INT(wf->lua_limits.instructions, 1000000);
  CHECK_INT(wf->check.every, 5);
  CHECK_INT(wf->check.nfields, 1);
  CHECK_INT(wf->check.fields[0], 1);
  CHECK_INT(wf->check.finite, 0);
  CHECK(wf->check.max_abs == 2097152.0);
  CHECK_INT(wf->check.loc.line, 11);
  CHECK_INT(wf->check.loc.col, 1);
  gf_workflow_free(wf);

  /* The caller's limits win over the file's; overrides reach both blocks. */
  gf_lua_limits cap = {.memory_bytes = 2 << 20, .instructions = 0};
  gf_override sets[] = {{"check", "{}"}, {"limits.lua_instructions", "5000"}};
  CHECK_INT(load_text(limits_yaml, strlen(limits_yaml), sets, 2, &cap, &diag, &wf), GF_OK);
  if (wf) {
    CHECK_INT(wf->lua_limits.memory_bytes, 2 << 20);
    CHECK_INT(wf->lua_limits.instructions, 5000);
    CHECK_INT(wf->check.every, 1); /* the defaults: every step, every field, finite */
    CHECK_INT(wf->check.nfields, 2);
    CHECK_INT(wf->check.finite, 1);
    CHECK(isinf(wf->check.max_abs));
    char *yaml = gf_workflow_resolved_yaml(wf);
    CHECK(strstr(yaml, "lua_instructions: 5000") != NULL); /* the sidecar records it */
    free(yaml);
  }
  gf_workflow_free(wf);

  /* Without the blocks: the default finiteness check, the hooks' default limits. */
  CHECK_INT(load("../workflows/wave2d.yaml", NULL, 0, &diag, &wf), GF_OK);
  if (wf) {
    CHECK_INT(wf->check.every, GF_CHECK_DEFAULT_EVERY);
    CHECK_INT(wf->lua_limits.memory_bytes, 0);
    CHECK_INT(wf->lua_limits.instructions, 0);
  }
  gf_workflow_free(wf);

  /* --set creates the check block the file does not have. */
  gf_override every = {"check.every", "50"};
  CHECK_INT(load("../workflows/wave2d.yaml", &every, 1, &diag, &wf), GF_OK);
  if (wf) {
    CHECK_INT(wf->check.every, 50);
    CHECK_INT(wf->check.nfields, 2);
  }
  gf_workflow_free(wf);
}

int main(void) {
  RUN(test_wave2d_model);
  RUN(test_resolved_yaml);
  RUN(test_override_grid_shape);
  RUN(test_override_schedule_and_params);
  RUN(test_override_errors);
  RUN(test_registry);
  RUN(test_custom_kernel_args);
  RUN(test_cpu_only_task);
  RUN(test_index_outside_grid);
  RUN(test_wave2d_stability);
  RUN(test_unreadable_file);
  RUN(test_bad_corpus);
  RUN(test_good_corpus);
  RUN(test_good_features);
  RUN(test_document_size);
  RUN(test_list_arguments);
  RUN(test_node_count);
  RUN(test_too_many_tasks);
  RUN(test_limits_and_check);
  gf_eval_free(loaded_eval);
  return check_summary();
}
