/* test_hooks.c - the Lua sandbox: values, limits and every message.
 *
 * Run from tests/: the fixtures are hooks/NAME.lua. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "check.h"
#include "hooks.h"

#define CONTEXT "task 'step', step 3"
#define SMALL_MEMORY ((size_t)1 << 20)
#define SMALL_INSTRUCTIONS 100000

static const gf_loc hooks_loc = {5, 3, 0}; /* where a workflow would name the file */

typedef struct fixture {
  gf_diag diag;
  gf_lua *lua;
} fixture;

/* A Lua state whose messages go to a temporary file instead of stderr. */
static gf_status fixture_open(fixture *f, size_t memory_bytes, uint64_t instructions) {
  gf_diag_init(&f->diag, "wf.yaml", NULL);
  f->diag.out = tmpfile();
  gf_lua_limits limits = {memory_bytes, instructions};
  return gf_lua_open(&f->lua, &limits, &f->diag);
}

static void fixture_close(fixture *f) {
  gf_lua_close(f->lua);
  fclose(f->diag.out);
}

/* Everything written to the fixture's diag so far. */
static void fixture_output(fixture *f, char *buf, size_t size) {
  fflush(f->diag.out);
  rewind(f->diag.out);
  size_t len = fread(buf, 1, size - 1, f->diag.out);
  buf[len] = '\0';
}

/* Loads `file` and looks up `function`; -1 when either fails. */
static int hook(fixture *f, const char *file, const char *function) {
  int id = -1;
  if (gf_lua_load_file(f->lua, file, &f->diag, hooks_loc) != GF_OK) return -1;
  if (gf_lua_find(f->lua, function, &id, &f->diag, hooks_loc) != GF_OK) return -1;
  return id;
}

static double call1(fixture *f, int id, double arg, const char *name, gf_status *status) {
  double result = NAN;
  *status = gf_lua_call(f->lua, id, &arg, 1, &result, name, CONTEXT);
  return result;
}

/* The seed's Ricker wavelet, computed here independently of the Lua file. */
static double ricker_expected(int n, double dt, double fm, double td) {
  const double pi = 3.141592;
  double t = n * dt - 2.0 * td;
  double a = pi * pi * fm * fm * t * t;
  return (1.0 - 2.0 * a) * exp(-a);
}

static void test_ricker_values(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  double dt = 0.4 * 1.0 / 343.0, fm = 343.0 / 10.0;
  double td = sqrt(6.0) / (3.141592653589793 * fm);
  const char *names[] = {"dt", "fm", "td"};
  const double values[] = {dt, fm, td};
  gf_lua_set_params(f.lua, names, values, 3);
  int id = hook(&f, "hooks/ricker.lua", "ricker");
  CHECK(id >= 0);
  const int steps[] = {0, 1, 20, 39, 40, 100, 639};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    gf_status status;
    double got = call1(&f, id, steps[i], "ricker", &status);
    CHECK_INT(status, GF_OK);
    CHECK_NEAR(got, ricker_expected(steps[i], dt, fm, td), 1e-12);
  }
  /* The peak: t == 0 at n = 2 td / dt gives exactly 1. */
  gf_status status;
  CHECK_NEAR(call1(&f, id, 2.0 * td / dt, "ricker", &status), 1.0, 1e-12);
  CHECK_INT(f.diag.count, 0);
  fixture_close(&f);
}

/* f32(x) rounds as a C (float) cast does, and as string.pack("f") does,
 * the rounding ricker.lua used before f32 existed. */
static void test_f32(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  int of = hook(&f, "hooks/f32.lua", "f32_of");
  int agrees = -1, text = -1;
  CHECK_INT(gf_lua_find(f.lua, "agrees_with_pack", &agrees, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "f32_of_text", &text, &f.diag, hooks_loc), GF_OK);
  CHECK(of >= 0);
  /* a tie (2^24 + 1 rounds to even), a float subnormal, the seed's pi and dt */
  const double values[] = {0.1, 1.0 / 3.0, -2.5e38, 16777217.0, 1e-40, 3.141592, 0.4 / 343.0, 0};
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    gf_status status;
    CHECK(call1(&f, of, values[i], "f32_of", &status) == (double)(float)values[i]);
    CHECK_INT(status, GF_OK);
    CHECK(call1(&f, agrees, values[i], "agrees_with_pack", &status) == 1.0);
  }
  CHECK(call1(&f, of, 16777217.0, "f32_of", &(gf_status){0}) == 16777216.0);
  double result = 0;
  CHECK_INT(gf_lua_call(f.lua, text, NULL, 0, &result, "f32_of_text", CONTEXT), GF_INTERNAL);
  fixture_close(&f);
}

static void test_several_args_and_no_result(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  int sum = hook(&f, "hooks/ricker.lua", "weighted_sum");
  int nothing = -1;
  CHECK_INT(gf_lua_find(f.lua, "returns_nothing", &nothing, &f.diag, hooks_loc), GF_OK);
  CHECK(sum >= 0 && nothing >= 0 && sum != nothing);
  const double args[] = {1.5, 10.0, 100.0};
  double result = 0;
  CHECK_INT(gf_lua_call(f.lua, sum, args, 3, &result, "weighted_sum", CONTEXT), GF_OK);
  CHECK_NEAR(result, 1.5 + 20.0 + 300.0, 0);
  CHECK_INT(gf_lua_call(f.lua, nothing, NULL, 0, NULL, "returns_nothing", CONTEXT), GF_OK);
  CHECK_INT(gf_lua_call(f.lua, 99, NULL, 0, NULL, "ghost", CONTEXT), GF_INTERNAL);
  CHECK_STR(f.diag.last, "hook 'ghost' has no function (id 99) (task 'step', step 3)");
  fixture_close(&f);
}

static void test_params_read_only(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  const char *names[] = {"vel", "cfl"};
  const double values[] = {343.0, 0.4};
  gf_lua_set_params(f.lua, names, values, 2);
  gf_status status;
  CHECK_NEAR(call1(&f, hook(&f, "hooks/params.lua", "read_vel"), 0, "read_vel", &status), 343.0, 0);
  CHECK_INT(status, GF_OK);
  int unknown = -1, write = -1, replace = -1, count = -1;
  CHECK_INT(gf_lua_find(f.lua, "read_unknown", &unknown, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "write_vel", &write, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "replace_metatable", &replace, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "count_params", &count, &f.diag, hooks_loc), GF_OK);
  CHECK_NEAR(call1(&f, unknown, 0, "read_unknown", &status), 1.0, 0);
  CHECK_NEAR(call1(&f, count, 0, "count_params", &status), 343.4, 1e-12);

  CHECK_INT(gf_lua_call(f.lua, write, NULL, 0, NULL, "write_vel", CONTEXT), GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hooks/params.lua:12: params is read-only (hook 'write_vel', " CONTEXT ")");
  CHECK_INT(gf_lua_call(f.lua, replace, NULL, 0, NULL, "replace_metatable", CONTEXT), GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hooks/params.lua:17: cannot change a protected metatable "
            "(hook 'replace_metatable', " CONTEXT ")");
  /* The failed write left the value alone. */
  CHECK_NEAR(call1(&f, hook(&f, "hooks/params.lua", "read_vel"), 0, "read_vel", &status), 343.0, 0);

  /* New params replace the old ones for hooks already loaded. */
  const double faster[] = {686.0, 0.4};
  gf_lua_set_params(f.lua, names, faster, 2);
  CHECK_NEAR(call1(&f, hook(&f, "hooks/params.lua", "read_vel"), 0, "read_vel", &status), 686.0, 0);
  CHECK_INT(f.diag.count, 2);
  fixture_close(&f);
}

static void test_sandbox_hides_the_system(void) {
  static const char *const probes[] = {
      "io",          "os",    "require",   "load",           "loadfile",
      "dofile",      "debug", "package",   "collectgarbage", "string.dump",
      "(\"\").dump", "_G.io", "coroutine",
  };
  static const char *const present[] = {"math.sqrt", "string.format", "table.concat", "utf8.char",
                                        "pcall",     "print",         "setmetatable"};
  const int absent_count = (int)(sizeof probes / sizeof *probes);
  const int present_count = (int)(sizeof present / sizeof *present);
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  int id = hook(&f, "hooks/sandbox.lua", "probe");
  CHECK(id >= 0);
  for (int i = 0; i < absent_count + present_count; i++) {
    gf_status status;
    double seen = call1(&f, id, i + 1, "probe", &status);
    CHECK_INT(status, GF_OK);
    int expected = i >= absent_count;
    if ((int)seen != expected)
      fprintf(stderr, "  %s is %s in a hook\n",
              i < absent_count ? probes[i] : present[i - absent_count],
              seen != 0 ? "present" : "absent");
    CHECK_INT((int)seen, expected);
  }
  fixture_close(&f);
}

static void test_finalizers_refused(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, SMALL_INSTRUCTIONS), GF_OK);
  int finalizer = hook(&f, "hooks/sandbox.lua", "finalizer");
  int plain = -1;
  CHECK_INT(gf_lua_find(f.lua, "plain_metatable", &plain, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_call(f.lua, finalizer, NULL, 0, NULL, "finalizer", CONTEXT), GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hooks/sandbox.lua:32: setmetatable: __gc metamethods are not allowed in "
            "hooks (hook 'finalizer', " CONTEXT ")");
  gf_status status;
  CHECK_NEAR(call1(&f, plain, 0, "plain_metatable", &status), 42.0, 0);
  CHECK_INT(status, GF_OK);
  fixture_close(&f);
}

static void test_print_goes_to_stderr(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  int id = hook(&f, "hooks/sandbox.lua", "say");
  FILE *captured = tmpfile();
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  dup2(fileno(captured), STDERR_FILENO);
  gf_status status = gf_lua_call(f.lua, id, NULL, 0, NULL, "say", CONTEXT);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  char text[256];
  rewind(captured);
  text[fread(text, 1, sizeof text - 1, captured)] = '\0';
  fclose(captured);
  CHECK_INT(status, GF_OK);
  CHECK_STR(text, "gflow: lua: hello\t42\t1.5\ttrue\tnil\n");
  fixture_close(&f);
}

static void test_runtime_error(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  int id = hook(&f, "hooks/runtime.lua", "broken");
  gf_status status;
  call1(&f, id, 3, "broken", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hooks/runtime.lua:3: attempt to index a nil value (local 'x') "
            "(hook 'broken', " CONTEXT ")");
  char out[4096];
  fixture_output(&f, out, sizeof out);
  /* The message line, then the traceback through both functions, indented. */
  CHECK(strncmp(out, "gflow: hooks/runtime.lua:3: attempt", 35) == 0);
  CHECK(strstr(out, ")\n    stack traceback:\n        ") != NULL);
  CHECK(strstr(out, "\n        hooks/runtime.lua:3: in ") != NULL);
  CHECK(strstr(out, "\n        hooks/runtime.lua:7: in ") != NULL);
  CHECK(strchr(out, '\t') == NULL);

  int table = -1, multiline = -1;
  CHECK_INT(gf_lua_find(f.lua, "raise_table", &table, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "raise_multiline", &multiline, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_call(f.lua, table, NULL, 0, NULL, "raise_table", NULL), GF_INTERNAL);
  CHECK_STR(f.diag.last, "(error object is a table value) (hook 'raise_table')");
  CHECK_INT(gf_lua_call(f.lua, multiline, NULL, 0, NULL, "raise_multiline", CONTEXT), GF_INTERNAL);
  CHECK_STR(f.diag.last, "first line (hook 'raise_multiline', " CONTEXT ")");
  fixture_output(&f, out, sizeof out);
  CHECK(strstr(out, "\n    second line\n    stack traceback:\n") != NULL);
  CHECK_INT(f.diag.count, 3);

  /* The state is still usable after errors. */
  CHECK_INT(gf_lua_call(f.lua, id, NULL, 0, NULL, "broken", CONTEXT), GF_INTERNAL);
  fixture_close(&f);
}

static void test_syntax_error_in_file(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/syntax.lua", &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(
      f.diag.last,
      "wf.yaml:5:3: in hook file: hooks/syntax.lua:2: <name> or '...' expected near 'return'");
  CHECK_INT(f.diag.count, 1);
  fixture_close(&f);
}

static void test_error_while_loading(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/load_error.lua", &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last,
            "wf.yaml:5:3: in hook file: hooks/load_error.lua:3: this file refuses "
            "to load (x = 1)");
  char out[4096];
  fixture_output(&f, out, sizeof out);
  CHECK(strstr(out, "(x = 1)\n    stack traceback:\n") != NULL);
  CHECK(strstr(out, "\n        hooks/load_error.lua:3: in main chunk\n") != NULL);
  fixture_close(&f);
}

static void test_unreadable_file(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/missing.lua", &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last,
            "wf.yaml:5:3: cannot read hook file 'hooks/missing.lua': No such file or directory");
  CHECK_INT(gf_lua_load_file(f.lua, "hooks", &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last, "wf.yaml:5:3: cannot read hook file 'hooks': Is a directory");
  /* a device would be read forever (or block, a FIFO): only regular files */
  CHECK_INT(gf_lua_load_file(f.lua, "/dev/zero", &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last, "wf.yaml:5:3: cannot read hook file '/dev/zero': not a regular file");
  fixture_close(&f);
}

static void test_missing_function(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/returns.lua", &f.diag, hooks_loc), GF_OK);
  int id = -7;
  CHECK_INT(gf_lua_find(f.lua, "nope", &id, &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last, "wf.yaml:5:3: hook function 'nope' is not defined by the hook files");
  CHECK_INT(gf_lua_find(f.lua, "answer", &id, &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last, "wf.yaml:5:3: hook function 'answer' is a number, not a function");
  /* A global of the real state that the sandbox leaves out is not found either. */
  CHECK_INT(gf_lua_find(f.lua, "load", &id, &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last, "wf.yaml:5:3: hook function 'load' is not defined by the hook files");
  CHECK_INT(id, -7);
  fixture_close(&f);
}

static void test_non_number_return(void) {
  static const struct {
    const char *function;
    const char *message;
  } cases[] = {
      {"ret_nil", "hook 'ret_nil' returned nil, expected a number (" CONTEXT ")"},
      {"ret_nothing", "hook 'ret_nothing' returned nil, expected a number (" CONTEXT ")"},
      {"ret_table", "hook 'ret_table' returned table, expected a number (" CONTEXT ")"},
      {"ret_bool", "hook 'ret_bool' returned boolean, expected a number (" CONTEXT ")"},
      {"ret_word", "hook 'ret_word' returned string, expected a number (" CONTEXT ")"},
  };
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/returns.lua", &f.diag, hooks_loc), GF_OK);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int id = -1;
    CHECK_INT(gf_lua_find(f.lua, cases[i].function, &id, &f.diag, hooks_loc), GF_OK);
    double result = -1;
    CHECK_INT(gf_lua_call(f.lua, id, NULL, 0, &result, cases[i].function, CONTEXT), GF_INTERNAL);
    CHECK_STR(f.diag.last, cases[i].message);
    CHECK_NEAR(result, -1, 0); /* untouched */
  }
  int id = -1;
  CHECK_INT(gf_lua_find(f.lua, "ret_numeric_string", &id, &f.diag, hooks_loc), GF_OK);
  double result = 0;
  CHECK_INT(gf_lua_call(f.lua, id, NULL, 0, &result, "ret_numeric_string", CONTEXT), GF_OK);
  CHECK_NEAR(result, 2.5, 0);
  /* Without a result the value is not looked at. */
  CHECK_INT(gf_lua_call(f.lua, 0, NULL, 0, NULL, "ret_nil", CONTEXT), GF_OK);
  fixture_close(&f);
}

static void test_instruction_cap(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, SMALL_INSTRUCTIONS), GF_OK);
  int spin = hook(&f, "hooks/limits.lua", "spin");
  int dodge = -1, tail = -1, busy = -1;
  CHECK_INT(gf_lua_find(f.lua, "dodge", &dodge, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "tail_dodge", &tail, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "busy", &busy, &f.diag, hooks_loc), GF_OK);
  gf_status status;
  call1(&f, spin, 0, "spin", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'spin' stopped: it exceeded its limit of 100000 instructions (" CONTEXT ")");
  call1(&f, dodge, 0, "dodge", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'dodge' stopped: it exceeded its limit of 100000 instructions (" CONTEXT ")");
  call1(&f, tail, 0, "tail_dodge", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'tail_dodge' stopped: it exceeded its limit of 100000 "
            "instructions (" CONTEXT ")");
  CHECK_INT(f.diag.count, 3);
  /* About 60000 instructions each: within the cap, and only because the count
   * starts again at every call. */
  for (int i = 0; i < 3; i++) {
    CHECK_NEAR(call1(&f, busy, 30000, "busy", &status), 30000.0 * 30001.0 / 2, 0);
    CHECK_INT(status, GF_OK);
  }
  call1(&f, busy, 60000, "busy", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'busy' stopped: it exceeded its limit of 100000 instructions (" CONTEXT ")");
  fixture_close(&f);
}

static void test_instruction_cap_default(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  gf_status status;
  call1(&f, hook(&f, "hooks/limits.lua", "spin"), 0, "spin", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'spin' stopped: it exceeded its limit of 100000000 instructions (" CONTEXT ")");
  fixture_close(&f);
}

static void test_instruction_cap_while_loading(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, SMALL_INSTRUCTIONS), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/spin_load.lua", &f.diag, (gf_loc){0, 0, 0}), GF_INVALID);
  CHECK_STR(f.diag.last,
            "hooks/spin_load.lua stopped while loading: it exceeded its limit of 100000 "
            "instructions");
  /* A later file loads with a fresh budget. */
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/ricker.lua", &f.diag, hooks_loc), GF_OK);
  fixture_close(&f);
}

static void test_memory_cap(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, SMALL_MEMORY, 0), GF_OK);
  int hog = hook(&f, "hooks/limits.lua", "hog");
  int once = -1, busy = -1;
  CHECK_INT(gf_lua_find(f.lua, "hog_once", &once, &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_find(f.lua, "busy", &busy, &f.diag, hooks_loc), GF_OK);
  gf_status status;
  call1(&f, hog, 0, "hog", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'hog' stopped: it exceeded its memory limit of 1048576 bytes (" CONTEXT ")");
  call1(&f, once, 0, "hog_once", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'hog_once' stopped: it exceeded its memory limit of 1048576 bytes (" CONTEXT ")");
  /* The hog's garbage is gone: the next hook runs, and the next hog stops again. */
  CHECK_NEAR(call1(&f, busy, 100, "busy", &status), 5050, 0);
  CHECK_INT(status, GF_OK);
  call1(&f, hog, 0, "hog", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_INT(f.diag.count, 3);
  fixture_close(&f);
}

static void test_memory_cap_default(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  gf_status status;
  call1(&f, hook(&f, "hooks/limits.lua", "hog"), 0, "hog", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last,
            "hook 'hog' stopped: it exceeded its memory limit of 67108864 bytes (" CONTEXT ")");
  fixture_close(&f);
}

static void test_memory_cap_while_loading(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, SMALL_MEMORY, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/hog_load.lua", &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last,
            "wf.yaml:5:3: hooks/hog_load.lua stopped while loading: it exceeded its "
            "memory limit of 1048576 bytes");
  fixture_close(&f);
}

static void test_memory_too_small_for_a_state(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 100, 0), GF_INTERNAL);
  CHECK(f.lua == NULL);
  CHECK_STR(f.diag.last, "cannot create the Lua state within its memory limit of 100 bytes");
  CHECK_INT(fixture_open(&f, 8192, 0), GF_INTERNAL);
  CHECK(f.lua == NULL);
  CHECK_STR(f.diag.last, "cannot set up the Lua sandbox: not enough memory");
  fclose(f.diag.out);
}

static int write_chunk(lua_State *L, const void *data, size_t size, void *file) {
  (void)L;
  return fwrite(data, 1, size, file) == size ? 0 : 1;
}

static void test_binary_chunk_refused(void) {
  /* A real precompiled chunk, which a plain Lua state would run. */
  char path[] = "/tmp/gf_test_hooksXXXXXX.lua";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0);
  FILE *file = fdopen(fd, "wb");
  lua_State *plain = luaL_newstate();
  CHECK_INT(luaL_loadstring(plain, "function binary_hook() return 1 end"), LUA_OK);
  CHECK_INT(lua_dump(plain, write_chunk, file, 0), 0);
  lua_close(plain);
  fclose(file);
  char head[4] = {0};
  file = fopen(path, "rb");
  CHECK(fread(head, 1, 4, file) == 4);
  fclose(file);
  CHECK(memcmp(head, "\x1bLua", 4) == 0);

  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, path, &f.diag, hooks_loc), GF_INVALID);
  CHECK_STR(f.diag.last, "wf.yaml:5:3: in hook file: attempt to load a binary chunk (mode is 't')");
  int id = -1;
  CHECK_INT(gf_lua_find(f.lua, "binary_hook", &id, &f.diag, hooks_loc), GF_INVALID);
  fixture_close(&f);
  unlink(path);
}

/* gf_lua_call_range (a pure hook's table): the integer arguments in order,
 * each call with its own instruction budget, stopping quietly at the first
 * call that fails or returns no number. */
static void test_call_range(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, SMALL_INSTRUCTIONS), GF_OK);
  int fails = hook(&f, "hooks/pure.lua", "fails_at_500");
  int busy = hook(&f, "hooks/limits.lua", "busy");
  int numeric = hook(&f, "hooks/returns.lua", "ret_numeric_string");
  int table = -1;
  CHECK_INT(gf_lua_find(f.lua, "ret_table", &table, &f.diag, hooks_loc), GF_OK);
  double results[10] = {0};
  CHECK_INT(gf_lua_call_range(f.lua, fails, 495, 10, results), 5);
  for (int i = 0; i < 5; i++) CHECK(results[i] == (495 + i) * 0.5);
  CHECK(results[5] == 0);
  CHECK_INT(gf_lua_call_range(f.lua, fails, -3, 3, results), 3);
  CHECK(results[0] == -1.5);
  /* about 60000 instructions each, 100000 the cap */
  CHECK_INT(gf_lua_call_range(f.lua, busy, 30000, 3, results), 3);
  CHECK(results[2] == 30002.0 * 30003.0 / 2);
  CHECK_INT(gf_lua_call_range(f.lua, busy, 60000, 3, results), 0);
  CHECK_INT(gf_lua_call_range(f.lua, numeric, 0, 2, results), 2);
  CHECK(results[1] == 2.5);
  CHECK_INT(gf_lua_call_range(f.lua, table, 0, 2, results), 0);
  CHECK_INT(gf_lua_call_range(f.lua, 99, 0, 2, results), 0);
  CHECK_INT(f.diag.count, 0);
  /* A call after a stopped one has its whole budget and reports as ever. */
  gf_status status;
  CHECK_NEAR(call1(&f, busy, 100, "busy", &status), 5050, 0);
  CHECK_INT(status, GF_OK);
  call1(&f, fails, 500, "fails_at_500", &status);
  CHECK_INT(status, GF_INTERNAL);
  CHECK_STR(f.diag.last, "hooks/pure.lua:21: no value at 500 (hook 'fails_at_500', " CONTEXT ")");
  fixture_close(&f);
}

/* ---- the hooks' state, for checkpoints ---- */

/* save_state's value comes back through restore_state in a fresh state
 * exactly (special floats, integer limits, binary strings, nested tables, odd
 * keys), and the hook then goes on as the saved one does. */
static void test_state_round_trip(void) {
  fixture a, b;
  CHECK_INT(fixture_open(&a, 0, 0), GF_OK);
  CHECK_INT(fixture_open(&b, 0, 0), GF_OK);
  int step_a = hook(&a, "hooks/state.lua", "step"), step_b = hook(&b, "hooks/state.lua", "step");
  int check_b = -1;
  CHECK_INT(gf_lua_find(b.lua, "check", &check_b, &b.diag, hooks_loc), GF_OK);
  gf_status status;
  for (int n = 0; n < 5; n++) call1(&a, step_a, n, "step", &status);
  char *text = NULL;
  int changed = -1;
  CHECK_INT(gf_lua_state_save(a.lua, &text, &changed, &a.diag), GF_OK);
  CHECK(text && strncmp(text, "return {", 8) == 0);
  CHECK_INT(changed, 0);
  if (text) CHECK_INT(gf_lua_state_restore(b.lua, text, &b.diag), GF_OK);
  double same = 0;
  CHECK_INT(gf_lua_call(b.lua, check_b, NULL, 0, &same, "check", CONTEXT), GF_OK);
  CHECK_NEAR(same, 1, 0);
  for (int n = 5; n < 8; n++) {
    double want = call1(&a, step_a, n, "step", &status),
           got = call1(&b, step_b, n, "step", &status);
    CHECK_NEAR(got, want, 0);
  }
  CHECK_INT(a.diag.count + b.diag.count, 0);
  free(text);
  fixture_close(&a);
  fixture_close(&b);
}

/* Without save_state: the fingerprint taken at the mark sees a global, an
 * upvalue or math.random's generator change, and a pure hook change nothing. */
static void test_state_fingerprint(void) {
  const char *hooks[] = {"pure", "global_sum", "upvalue_count", "random"};
  for (int h = 0; h < 4; h++) {
    fixture f;
    CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
    int id = hook(&f, "hooks/state_kinds.lua", hooks[h]);
    gf_lua_state_mark(f.lua);
    char *text = (char *)"";
    int changed = -1;
    CHECK_INT(gf_lua_state_save(f.lua, &text, &changed, &f.diag), GF_OK);
    CHECK(text == NULL);
    CHECK_INT(changed, 0); /* nothing called yet */
    gf_status status;
    for (int n = 0; n < 3; n++) call1(&f, id, n, hooks[h], &status);
    CHECK_INT(gf_lua_state_save(f.lua, &text, &changed, &f.diag), GF_OK);
    if (changed != (h > 0)) fprintf(stderr, "hook %s: changed %d\n", hooks[h], changed);
    CHECK_INT(changed, h > 0);
    fixture_close(&f);
  }
}

static void test_state_refused(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/state_bad.lua", &f.diag, hooks_loc), GF_OK);
  char *text = NULL;
  int changed = 0;
  CHECK_INT(gf_lua_state_save(f.lua, &text, &changed, &f.diag), GF_INVALID);
  CHECK_STR(f.diag.last,
            "save_state() returned a value of type function; a saved state holds numbers, "
            "strings, booleans and tables of them");
  CHECK(text == NULL);
  fixture_close(&f);
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/state_half.lua", &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_state_save(f.lua, &text, &changed, &f.diag), GF_INVALID);
  CHECK_STR(f.diag.last,
            "the hook files define save_state but not restore_state; a checkpoint needs both or "
            "neither");
  CHECK_INT(gf_lua_state_restore(f.lua, "return {}", &f.diag), GF_INVALID);
  CHECK_STR(f.diag.last,
            "the checkpoint holds the hooks' state, but the hook files define no restore_state "
            "to take it back");
  fixture_close(&f);
}

/* Which file defines save_state (a file of pure hooks must not). */
static void test_state_defined_in(void) {
  fixture f;
  CHECK_INT(fixture_open(&f, 0, 0), GF_OK);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/pure.lua", &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_state_defined_in(f.lua, "hooks/pure.lua"), 0);
  CHECK_INT(gf_lua_load_file(f.lua, "hooks/state.lua", &f.diag, hooks_loc), GF_OK);
  CHECK_INT(gf_lua_state_defined_in(f.lua, "hooks/pure.lua"), 0);
  CHECK_INT(gf_lua_state_defined_in(f.lua, "hooks/state.lua"), 1);
  CHECK_INT(gf_lua_state_defined_in(f.lua, "state.lua"), 0);
  fixture_close(&f);
}

int main(void) {
  RUN(test_ricker_values);
  RUN(test_f32);
  RUN(test_several_args_and_no_result);
  RUN(test_params_read_only);
  RUN(test_sandbox_hides_the_system);
  RUN(test_finalizers_refused);
  RUN(test_print_goes_to_stderr);
  RUN(test_runtime_error);
  RUN(test_syntax_error_in_file);
  RUN(test_error_while_loading);
  RUN(test_unreadable_file);
  RUN(test_missing_function);
  RUN(test_non_number_return);
  RUN(test_instruction_cap);
  RUN(test_instruction_cap_default);
  RUN(test_instruction_cap_while_loading);
  RUN(test_memory_cap);
  RUN(test_memory_cap_default);
  RUN(test_memory_cap_while_loading);
  RUN(test_memory_too_small_for_a_state);
  RUN(test_binary_chunk_refused);
  RUN(test_call_range);
  RUN(test_state_round_trip);
  RUN(test_state_fingerprint);
  RUN(test_state_refused);
  RUN(test_state_defined_in);
  return check_summary();
}
