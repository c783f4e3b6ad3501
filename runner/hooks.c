/* hooks.c - Lua 5.4 hooks in a sandbox: limits, loading, lookup and calls.
 *
 * Every piece of Lua work runs under lua_pcall: a memory error raised outside
 * protected mode would end the process through Lua's panic function, so even
 * building tables (params, registry refs) goes through a protected C function.
 */
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define GF_LUA_DEFAULT_MEMORY ((size_t)64 << 20)
#define GF_LUA_DEFAULT_INSTRUCTIONS UINT64_C(100000000)
#define GF_LUA_HOOK_INTERVAL 1000 /* instructions between two count-hook calls */

struct gf_lua {
  lua_State *L;
  gf_diag *diag; /* for messages from calls, which take no diag of their own */
  size_t memory_used;
  size_t memory_limit;
  uint64_t instructions_used; /* since the last call or load */
  uint64_t instruction_limit;
  int hook_interval;
  int over_instructions; /* the count hook stopped the current call */
  int env_ref;           /* the sandbox table every chunk gets as _ENV */
  int *hook_refs;        /* hook id -> registry ref of its function */
  int hook_count;
  int hook_capacity;
  uint64_t state_mark; /* gf_lua_state_mark's fingerprint */
};

/* The base functions a hook may use; everything else of the base library
 * (load, loadfile, dofile, require, collectgarbage, ...) stays out, and print
 * is replaced. */
static const char *const safe_globals[] = {
    "assert",   "error",  "ipairs", "next",         "pairs",    "pcall",    "rawequal", "rawget",
    "rawlen",   "rawset", "select", "getmetatable", "tonumber", "tostring", "type",     "xpcall",
    "_VERSION", "math",   "string", "table",        "utf8",     NULL,
};

static gf_lua *state_owner(lua_State *L) {
  void *owner = NULL;
  lua_getallocf(L, &owner);
  return owner;
}

/* lua_Alloc that keeps the bytes in use under `memory_limit`; refusing an
 * allocation makes Lua collect garbage, retry, then raise "not enough memory". */
static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  gf_lua *lua = ud;
  size_t old = ptr ? osize : 0; /* without ptr, osize is the object's type */
  if (nsize == 0) {
    free(ptr);
    lua->memory_used -= old;
    return NULL;
  }
  if (nsize > old && nsize - old > lua->memory_limit - lua->memory_used) return NULL;
  void *block = realloc(ptr, nsize);
  if (!block) return nsize <= old ? ptr : NULL; /* Lua assumes shrinking never fails */
  lua->memory_used = lua->memory_used - old + nsize;
  return block;
}

static void count_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  gf_lua *lua = state_owner(L);
  lua->instructions_used += (uint64_t)lua->hook_interval;
  if (lua->instructions_used <= lua->instruction_limit) return;
  if (!lua->over_instructions) {
    lua->over_instructions = 1;
    /* From now on every instruction raises, so a hook that catches the error
     * with pcall cannot run on. */
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
  }
  luaL_error(L, "instruction limit exceeded");
}

/* A fresh instruction budget for one call or load. */
static void reset_budget(gf_lua *lua) {
  lua->instructions_used = 0;
  lua->over_instructions = 0;
  lua_sethook(lua->L, count_hook, LUA_MASKCOUNT, lua->hook_interval);
}

/* Message handler: the error as text, then a traceback. */
static int add_traceback(lua_State *L) {
  const char *message = lua_tostring(L, 1);
  if (!message) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      message = lua_tostring(L, -1);
    else
      message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, message, 1);
  return 1;
}

/* `print` for hooks: one line on stderr, so it cannot be mistaken for output. */
static int sandbox_print(lua_State *L) {
  int count = lua_gettop(L);
  luaL_Buffer line;
  luaL_buffinit(L, &line);
  luaL_addstring(&line, "gflow: lua: ");
  for (int i = 1; i <= count; i++) {
    if (i > 1) luaL_addchar(&line, '\t');
    luaL_tolstring(L, i, NULL);
    luaL_addvalue(&line);
  }
  luaL_addchar(&line, '\n');
  luaL_pushresult(&line);
  size_t len = 0;
  const char *text = lua_tolstring(L, -1, &len);
  fwrite(text, 1, len, stderr);
  fflush(stderr);
  return 0;
}

/* setmetatable without __gc: finalizers run with debug hooks off, so one
 * would escape the instruction limit. Otherwise the base library's own. */
static int sandbox_setmetatable(lua_State *L) {
  int type = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argexpected(L, type == LUA_TNIL || type == LUA_TTABLE, 2, "nil or table");
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
    return luaL_error(L, "cannot change a protected metatable");
  if (type == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL)
      return luaL_error(L, "setmetatable: __gc metamethods are not allowed in hooks");
  }
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

/* f32(x): x rounded to the nearest float, as a C (float) cast and
 * string.pack("f") round it; a forcing term computed in float as a float
 * program computes it, without string.pack's two strings per call. */
static int sandbox_f32(lua_State *L) {
  lua_pushnumber(L, (lua_Number)(float)luaL_checknumber(L, 1));
  return 1;
}

static int build_sandbox(lua_State *L) {
  static const luaL_Reg libraries[] = {
      {LUA_GNAME, luaopen_base},        {LUA_MATHLIBNAME, luaopen_math},
      {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table},
      {LUA_UTF8LIBNAME, luaopen_utf8},  {NULL, NULL},
  };
  for (const luaL_Reg *lib = libraries; lib->name; lib++) {
    luaL_requiref(L, lib->name, lib->func, 1);
    lua_pop(L, 1);
  }
  /* The string library is also every string's __index, so drop dump there. */
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);

  lua_newtable(L);
  for (const char *const *name = safe_globals; *name; name++) {
    lua_getglobal(L, *name);
    lua_setfield(L, -2, *name);
  }
  lua_pushcfunction(L, sandbox_print);
  lua_setfield(L, -2, "print");
  lua_pushcfunction(L, sandbox_setmetatable);
  lua_setfield(L, -2, "setmetatable");
  lua_pushcfunction(L, sandbox_f32);
  lua_setfield(L, -2, "f32");
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, LUA_GNAME); /* _G names the sandbox, not the real globals */
  state_owner(L)->env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

/* Runs `fn(arg)` in protected mode; on failure the message is left on top. */
static int run_protected(lua_State *L, lua_CFunction fn, void *arg) {
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, arg);
  return lua_pcall(L, 1, 0, 0);
}

static const char *error_text(lua_State *L) {
  const char *text = lua_tostring(L, -1);
  return text ? text : "(no error message)";
}

gf_status gf_lua_open(gf_lua **out, const gf_lua_limits *limits, gf_diag *diag) {
  *out = NULL;
  gf_lua *lua = gf_calloc(1, sizeof *lua);
  if (!lua) return gf_oom(diag, "opening the Lua state");
  lua->diag = diag;
  lua->memory_limit = limits && limits->memory_bytes ? limits->memory_bytes : GF_LUA_DEFAULT_MEMORY;
  lua->instruction_limit =
      limits && limits->instructions ? limits->instructions : GF_LUA_DEFAULT_INSTRUCTIONS;
  lua->hook_interval = lua->instruction_limit < GF_LUA_HOOK_INTERVAL ? (int)lua->instruction_limit
                                                                     : GF_LUA_HOOK_INTERVAL;
  lua->env_ref = LUA_NOREF;
  lua->L = lua_newstate(limited_alloc, lua);
  if (!lua->L) {
    gf_status status = gf_diag_error(diag, GF_INTERNAL,
                                     "cannot create the Lua state within its memory limit of %zu "
                                     "bytes",
                                     lua->memory_limit);
    free(lua);
    return status;
  }
  if (run_protected(lua->L, build_sandbox, NULL) != LUA_OK) {
    gf_status status =
        gf_diag_error(diag, GF_INTERNAL, "cannot set up the Lua sandbox: %s", error_text(lua->L));
    gf_lua_close(lua);
    return status;
  }
  reset_budget(lua);
  *out = lua;
  return GF_OK;
}

void gf_lua_close(gf_lua *lua) {
  if (!lua) return;
  lua_close(lua->L);
  free(lua->hook_refs);
  free(lua);
}

/* __newindex of `params`. */
static int params_assign(lua_State *L) {
  return luaL_error(L, "params is read-only");
}

/* __pairs of `params`: iterate the real table. Upvalues: next, the table. */
static int params_pairs(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushnil(L);
  return 3;
}

typedef struct params_args {
  const char *const *names;
  const double *values;
  int count;
} params_args;

static int build_params(lua_State *L) {
  const params_args *args = lua_touserdata(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, state_owner(L)->env_ref); /* 2: sandbox */
  lua_newtable(L);                                            /* 3: proxy */
  lua_createtable(L, 0, args->count);                         /* 4: values */
  for (int i = 0; i < args->count; i++) {
    lua_pushnumber(L, args->values[i]);
    lua_setfield(L, 4, args->names[i]);
  }
  lua_createtable(L, 0, 4); /* 5: the proxy's metatable */
  lua_pushvalue(L, 4);
  lua_setfield(L, 5, "__index");
  lua_pushcfunction(L, params_assign);
  lua_setfield(L, 5, "__newindex");
  lua_getglobal(L, "next");
  lua_pushvalue(L, 4);
  lua_pushcclosure(L, params_pairs, 2);
  lua_setfield(L, 5, "__pairs");
  lua_pushboolean(L, 0); /* hides the metatable and forbids replacing it */
  lua_setfield(L, 5, "__metatable");
  lua_setmetatable(L, 3);
  /* rawset: a hook file may have given the sandbox a metatable. */
  lua_pushliteral(L, "params");
  lua_pushvalue(L, 3);
  lua_rawset(L, 2);
  return 0;
}

void gf_lua_set_params(gf_lua *lua, const char *const *names, const double *values, int count) {
  params_args args = {names, values, count};
  if (run_protected(lua->L, build_params, &args) != LUA_OK) {
    gf_diag_error(lua->diag, GF_INTERNAL, "cannot give the hooks their params: %s",
                  error_text(lua->L));
    lua_pop(lua->L, 1);
  }
}

/* Why the last call or load was stopped, or NULL when it was not. */
static const char *stop_reason(const gf_lua *lua, int status, char *buf, size_t size) {
  if (lua->over_instructions)
    snprintf(buf, size, "it exceeded its limit of %" PRIu64 " instructions",
             lua->instruction_limit);
  else if (status == LUA_ERRMEM)
    snprintf(buf, size, "it exceeded its memory limit of %zu bytes", lua->memory_limit);
  else
    return NULL;
  return buf;
}

/* Length of the first line of `text`. */
static int first_line_length(const char *text) {
  return (int)strcspn(text, "\n");
}

/* The lines of `text` after the first (the traceback), indented under the
 * message; a leading tab becomes four more spaces. */
static void print_continuation(const gf_diag *diag, const char *text) {
  const char *line = strchr(text, '\n');
  if (!line) return;
  FILE *out = diag->out ? diag->out : stderr;
  while (line) {
    line++;
    size_t len = strcspn(line, "\n");
    const char *indent = "    ";
    if (*line == '\t') {
      indent = "        ";
      line++;
      len--;
    }
    fprintf(out, "%s%.*s\n", indent, (int)len, line);
    line = strchr(line, '\n');
  }
  fflush(out);
}

/* After a memory stop the hook's garbage would crowd out the next call. */
static void recover(gf_lua *lua, int status) {
  if (status == LUA_ERRMEM) lua_gc(lua->L, LUA_GCCOLLECT);
}

/* Reads a hook file whole into a fresh buffer. Only a regular file no larger
 * than the Lua memory limit: a device (`lua: /dev/zero`), a FIFO or a huge
 * file would otherwise block or exhaust memory before Lua's own cap applies.
 * O_NONBLOCK keeps opening a FIFO from waiting for a writer. On failure
 * returns NULL with the reason in `why`, empty when out of memory. */
static char *read_hook_file(const char *path, size_t limit, size_t *size, char *why,
                            size_t why_size) {
  if (limit >= SIZE_MAX / 2) limit = SIZE_MAX / 2; /* room for limit + 1 below */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "%s", strerror(errno));
    return NULL;
  }
  struct stat st;
  const char *refused = NULL;
  if (fstat(fd, &st) != 0)
    refused = strerror(errno);
  else if (S_ISDIR(st.st_mode))
    refused = strerror(EISDIR);
  else if (!S_ISREG(st.st_mode))
    refused = "not a regular file";
  if (refused || (uint64_t)st.st_size > limit) {
    if (refused)
      snprintf(why, why_size, "%s", refused);
    else
      snprintf(why, why_size, "larger than the Lua memory limit of %zu bytes", limit);
    close(fd);
    return NULL;
  }
  /* st_size is a hint (a file may grow, /proc files say 0); the read stops
   * one byte past the limit either way. */
  size_t capacity = (size_t)st.st_size + 1, len = 0;
  char *text = gf_malloc(capacity);
  for (;;) {
    if (text && len == capacity) {
      capacity = capacity > limit / 2 ? limit + 1 : 2 * capacity;
      char *grown = gf_realloc(text, capacity);
      if (!grown) free(text);
      text = grown;
    }
    if (!text) {
      why[0] = '\0'; /* out of memory: no reason to quote */
      close(fd);
      return NULL;
    }
    ssize_t got = read(fd, text + len, capacity - len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      snprintf(why, why_size, "%s", strerror(errno));
      break;
    }
    if (got == 0) {
      close(fd);
      *size = len;
      return text;
    }
    len += (size_t)got;
    if (len > limit) {
      snprintf(why, why_size, "larger than the Lua memory limit of %zu bytes", limit);
      break;
    }
  }
  close(fd);
  free(text);
  return NULL;
}

gf_status gf_lua_load_file(gf_lua *lua, const char *path, gf_diag *diag, gf_loc loc) {
  size_t size = 0;
  char why[128];
  char *text = read_hook_file(path, lua->memory_limit, &size, why, sizeof why);
  if (!text && !why[0]) return gf_oom(diag, "reading a hook file");
  if (!text) return gf_diag_at(diag, loc, GF_INVALID, "cannot read hook file '%s': %s", path, why);
  char *chunkname = gf_asprintf("@%s", path); /* "@": messages read "path:line:" */
  if (!chunkname) {
    free(text);
    return gf_oom(diag, "loading a hook file");
  }
  lua_State *L = lua->L;
  int base = lua_gettop(L) + 1;
  lua_pushcfunction(L, add_traceback);
  reset_budget(lua);
  int status = luaL_loadbufferx(L, text, size, chunkname, "t");
  free(chunkname);
  free(text);
  if (status == LUA_OK) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->env_ref);
    lua_setupvalue(L, -2, 1); /* a text chunk's only upvalue is _ENV */
    status = lua_pcall(L, 0, 0, base);
  }
  gf_status result = GF_OK;
  char reason[128];
  if (stop_reason(lua, status, reason, sizeof reason)) {
    result = gf_diag_at(diag, loc, GF_INVALID, "%s stopped while loading: %s", path, reason);
  } else if (status != LUA_OK) {
    const char *message = error_text(L);
    result = gf_diag_at(diag, loc, GF_INVALID, "in hook file: %.*s", first_line_length(message),
                        message);
    print_continuation(diag, message);
  }
  lua_settop(L, base - 1);
  recover(lua, status);
  return result;
}

typedef struct find_args {
  const char *function;
  const char *type; /* a static string from lua_typename */
  int ref;
} find_args;

static int find_function(lua_State *L) {
  find_args *args = lua_touserdata(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, state_owner(L)->env_ref);
  lua_pushstring(L, args->function);
  lua_rawget(L, -2);
  args->type = luaL_typename(L, -1);
  args->ref = lua_isfunction(L, -1) ? luaL_ref(L, LUA_REGISTRYINDEX) : LUA_NOREF;
  return 0;
}

gf_status gf_lua_find(gf_lua *lua, const char *function, int *hook_id, gf_diag *diag, gf_loc loc) {
  find_args args = {function, NULL, LUA_NOREF};
  if (run_protected(lua->L, find_function, &args) != LUA_OK) {
    gf_status status = gf_diag_at(diag, loc, GF_INTERNAL, "cannot look up hook function '%s': %s",
                                  function, error_text(lua->L));
    lua_pop(lua->L, 1);
    return status;
  }
  if (args.ref == LUA_NOREF) {
    if (strcmp(args.type, "nil") == 0)
      return gf_diag_at(diag, loc, GF_INVALID,
                        "hook function '%s' is not defined by the hook files", function);
    return gf_diag_at(diag, loc, GF_INVALID, "hook function '%s' is a %s, not a function", function,
                      args.type);
  }
  if (GF_GROW(lua->hook_refs, lua->hook_capacity, lua->hook_count + 1) != GF_OK) {
    luaL_unref(lua->L, LUA_REGISTRYINDEX, args.ref);
    return gf_oom(diag, "looking up the hook functions");
  }
  lua->hook_refs[lua->hook_count] = args.ref;
  *hook_id = lua->hook_count++;
  return GF_OK;
}

/* Whole numbers (the step n, cell indices) go to Lua as integers, so a hook
 * sees 3, not 3.0; anything else as a float. */
static void push_number(lua_State *L, double v) {
  if (v == floor(v) && fabs(v) < 9007199254740992.0)
    lua_pushinteger(L, (lua_Integer)v);
  else
    lua_pushnumber(L, v);
}

gf_status gf_lua_call(gf_lua *lua, int hook_id, const double *args, int nargs, double *result,
                      const char *hook_name, const char *context) {
  const char *context_sep = context ? ", " : "";
  const char *context_open = context ? " (" : "";
  const char *context_close = context ? ")" : "";
  if (!context) context = "";
  lua_State *L = lua->L;
  if (hook_id < 0 || hook_id >= lua->hook_count)
    return gf_diag_error(lua->diag, GF_INTERNAL, "hook '%s' has no function (id %d)%s%s%s",
                         hook_name, hook_id, context_open, context, context_close);
  if (nargs < 0 || !lua_checkstack(L, nargs + 2))
    return gf_diag_error(lua->diag, GF_INTERNAL, "hook '%s' cannot take %d arguments%s%s%s",
                         hook_name, nargs, context_open, context, context_close);

  int base = lua_gettop(L) + 1;
  lua_pushcfunction(L, add_traceback);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lua->hook_refs[hook_id]);
  for (int i = 0; i < nargs; i++) push_number(L, args[i]);
  reset_budget(lua);
  int status = lua_pcall(L, nargs, result ? 1 : 0, base);

  gf_status outcome = GF_OK;
  char reason[128];
  if (stop_reason(lua, status, reason, sizeof reason)) {
    outcome = gf_diag_error(lua->diag, GF_INTERNAL, "hook '%s' stopped: %s%s%s%s", hook_name,
                            reason, context_open, context, context_close);
  } else if (status != LUA_OK) {
    const char *message = error_text(L);
    outcome = gf_diag_error(lua->diag, GF_INTERNAL, "%.*s (hook '%s'%s%s)",
                            first_line_length(message), message, hook_name, context_sep, context);
    print_continuation(lua->diag, message);
  } else if (result) {
    int is_number = 0;
    lua_Number value = lua_tonumberx(L, -1, &is_number);
    if (is_number)
      *result = (double)value;
    else
      outcome =
          gf_diag_error(lua->diag, GF_INTERNAL, "hook '%s' returned %s, expected a number%s%s%s",
                        hook_name, luaL_typename(L, -1), context_open, context, context_close);
  }
  lua_settop(L, base - 1);
  recover(lua, status);
  return outcome;
}

int gf_lua_call_range(gf_lua *lua, int hook_id, int64_t first, int count, double *results) {
  lua_State *L = lua->L;
  if (hook_id < 0 || hook_id >= lua->hook_count || !lua_checkstack(L, 3)) return 0;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lua->hook_refs[hook_id]);
  int done = 0;
  while (done < count) {
    lua_pushvalue(L, top + 1);
    lua_pushinteger(L, (lua_Integer)(first + done)); /* as push_number passes a whole number */
    reset_budget(lua);
    int status = lua_pcall(L, 1, 1, 0);
    int is_number = 0;
    lua_Number value = status == LUA_OK ? lua_tonumberx(L, -1, &is_number) : 0;
    lua_settop(L, top + 1);
    if (!is_number) {
      recover(lua, status);
      break;
    }
    results[done++] = (double)value;
  }
  lua_settop(L, top);
  return done;
}

/* ---- the hooks' state, for checkpoints ---------------------------------------- */

#define SAVE_FUNCTION "save_state"
#define RESTORE_FUNCTION "restore_state"
#define STATE_MAX_DEPTH 32 /* tables in tables a saved state may nest */

/* A fingerprint of every value the hooks can reach from their sandbox: an
 * FNV-style hash over a depth-first walk (the same walk over the same state
 * visits in the same order), each table, function and userdata once. */
typedef struct fingerprint {
  uint64_t hash;
  const void **seen; /* open addressing; NULL: free */
  size_t cap, count;
  int out_of_memory;
} fingerprint;

static void fp_mix(fingerprint *fp, uint64_t v) {
  fp->hash = (fp->hash ^ v) * UINT64_C(0x100000001b3);
  fp->hash ^= fp->hash >> 29;
}

static void fp_bytes(fingerprint *fp, const void *data, size_t len) {
  const unsigned char *p = data;
  fp_mix(fp, len);
  for (size_t i = 0; i < len; i++) fp_mix(fp, p[i]);
}

/* 1 when `p` was seen before; else records it. */
static int fp_seen(fingerprint *fp, const void *p) {
  if (fp->count * 2 >= fp->cap) {
    size_t cap = fp->cap ? 2 * fp->cap : 256;
    const void **grown = gf_calloc(cap, sizeof *grown);
    if (!grown) {
      fp->out_of_memory = 1;
      return 1;
    }
    for (size_t i = 0; i < fp->cap; i++)
      if (fp->seen[i])
        for (size_t h = ((uintptr_t)fp->seen[i] >> 4) & (cap - 1);; h = (h + 1) & (cap - 1))
          if (!grown[h]) {
            grown[h] = fp->seen[i];
            break;
          }
    free(fp->seen);
    fp->seen = grown;
    fp->cap = cap;
  }
  for (size_t h = ((uintptr_t)p >> 4) & (fp->cap - 1);; h = (h + 1) & (fp->cap - 1)) {
    if (fp->seen[h] == p) return 1;
    if (!fp->seen[h]) {
      fp->seen[h] = p;
      fp->count++;
      return 0;
    }
  }
}

static void fp_value(lua_State *L, fingerprint *fp, int idx) {
  idx = lua_absindex(L, idx);
  int type = lua_type(L, idx);
  fp_mix(fp, (uint64_t)type + 1);
  if (!lua_checkstack(L, 4)) {
    fp->out_of_memory = 1;
    return;
  }
  switch (type) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        fp_mix(fp, (uint64_t)lua_tointeger(L, idx));
      } else {
        double v = lua_tonumber(L, idx);
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        fp_mix(fp, bits);
      }
      break;
    case LUA_TBOOLEAN:
      fp_mix(fp, (uint64_t)lua_toboolean(L, idx));
      break;
    case LUA_TSTRING: {
      size_t len;
      const char *text = lua_tolstring(L, idx, &len);
      fp_bytes(fp, text, len);
      break;
    }
    case LUA_TLIGHTUSERDATA:
      fp_mix(fp, (uint64_t)(uintptr_t)lua_touserdata(L, idx));
      break;
    case LUA_TTABLE:
      if (fp_seen(fp, lua_topointer(L, idx))) break;
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        fp_value(L, fp, -2);
        fp_value(L, fp, -1);
        lua_pop(L, 1);
      }
      if (lua_getmetatable(L, idx)) {
        fp_value(L, fp, -1);
        lua_pop(L, 1);
      }
      break;
    case LUA_TFUNCTION: /* which function, and what its upvalues hold */
      if (fp_seen(fp, lua_topointer(L, idx))) break;
      fp_mix(fp, (uint64_t)(uintptr_t)lua_topointer(L, idx));
      for (int i = 1; lua_getupvalue(L, idx, i); i++) {
        fp_value(L, fp, -1);
        lua_pop(L, 1);
      }
      break;
    case LUA_TUSERDATA: /* math.random keeps its generator in one */
      if (fp_seen(fp, lua_topointer(L, idx))) break;
      fp_bytes(fp, lua_touserdata(L, idx), lua_rawlen(L, idx));
      break;
    case LUA_TTHREAD: {
      lua_State *co = lua_tothread(L, idx);
      fp_mix(fp, (uint64_t)(uintptr_t)co);
      fp_mix(fp, (uint64_t)lua_status(co));
      fp_mix(fp, (uint64_t)lua_gettop(co));
      break;
    }
    default:
      break;
  }
}

static int fingerprint_sandbox(lua_State *L) {
  fingerprint *fp = lua_touserdata(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, state_owner(L)->env_ref);
  fp_value(L, fp, -1);
  return 0;
}

/* The fingerprint, or 0 when it could not be taken (never equal to a mark,
 * which is taken the same way; a failed walk reads as changed). */
static uint64_t state_fingerprint(gf_lua *lua) {
  fingerprint fp = {.hash = UINT64_C(0xcbf29ce484222325)};
  int status = run_protected(lua->L, fingerprint_sandbox, &fp);
  if (status != LUA_OK) lua_pop(lua->L, 1);
  free(fp.seen);
  return status == LUA_OK && !fp.out_of_memory ? fp.hash | 1 : 0;
}

void gf_lua_state_mark(gf_lua *lua) {
  if (lua) lua->state_mark = state_fingerprint(lua);
}

/* The type of global NAME of the sandbox. */
static int sandbox_global_type(gf_lua *lua, const char *name) {
  lua_State *L = lua->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, lua->env_ref);
  lua_pushstring(L, name); /* a short literal: interned, never a memory error here */
  int type = lua_rawget(L, -2);
  lua_pop(L, 2);
  return type;
}

/* A saved value as a Lua constructor: integers in decimal, floats in hex
 * (exact), strings with every unusual byte escaped. 0, or why not. */
static const char *serialize(lua_State *L, int idx, gf_text *out, int depth) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        lua_Integer v = lua_tointeger(L, idx);
        if (v == LUA_MININTEGER)
          gf_text_printf(out, "0x8000000000000000");
        else
          gf_text_printf(out, "%lld", (long long)v);
      } else {
        double v = lua_tonumber(L, idx);
        if (isnan(v))
          gf_text_printf(out, "(0/0)");
        else if (isinf(v))
          gf_text_printf(out, v > 0 ? "1e9999" : "-1e9999");
        else
          gf_text_printf(out, "%a", v);
      }
      return NULL;
    case LUA_TBOOLEAN:
      gf_text_printf(out, lua_toboolean(L, idx) ? "true" : "false");
      return NULL;
    case LUA_TSTRING: {
      size_t len;
      const unsigned char *s = (const unsigned char *)lua_tolstring(L, idx, &len);
      gf_text_printf(out, "\"");
      for (size_t i = 0; i < len; i++)
        if (s[i] < 32 || s[i] > 126 || s[i] == '"' || s[i] == '\\')
          gf_text_printf(out, "\\%03u", s[i]);
        else
          gf_text_printf(out, "%c", s[i]);
      gf_text_printf(out, "\"");
      return NULL;
    }
    case LUA_TTABLE: {
      if (depth >= STATE_MAX_DEPTH) return "tables nested too deeply (or a cycle)";
      if (!lua_checkstack(L, 3)) return "not enough memory";
      gf_text_printf(out, "{");
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        int key_type = lua_type(L, -2);
        if (key_type != LUA_TNUMBER && key_type != LUA_TSTRING && key_type != LUA_TBOOLEAN) {
          lua_pop(L, 2);
          return "a table key that is not a number, string or boolean";
        }
        gf_text_printf(out, "[");
        serialize(L, -2, out, depth + 1);
        gf_text_printf(out, "]=");
        const char *why = serialize(L, -1, out, depth + 1);
        if (why) {
          lua_pop(L, 2);
          return why;
        }
        gf_text_printf(out, ",");
        lua_pop(L, 1);
      }
      gf_text_printf(out, "}");
      return NULL;
    }
    default:
      return lua_typename(L, lua_type(L, idx));
  }
}

/* GF_OK, or the report of a call to save_state or restore_state (`when`:
 * "checkpoint", "restart") that the limits stopped or that failed. */
static gf_status state_call_status(gf_lua *lua, int status, const char *function, const char *when,
                                   gf_diag *diag) {
  char reason[128];
  if (stop_reason(lua, status, reason, sizeof reason))
    return gf_diag_error(diag, GF_INTERNAL, "hook '%s' stopped: %s (%s)", function, reason, when);
  if (status == LUA_OK) return GF_OK;
  const char *message = error_text(lua->L);
  gf_status st = gf_diag_error(diag, GF_INTERNAL, "%.*s (hook '%s', %s)",
                               first_line_length(message), message, function, when);
  print_continuation(diag, message);
  return st;
}

gf_status gf_lua_state_save(gf_lua *lua, char **text, int *changed, gf_diag *diag) {
  *text = NULL;
  *changed = 0;
  if (!lua) return GF_OK;
  int save = sandbox_global_type(lua, SAVE_FUNCTION) == LUA_TFUNCTION;
  int restore = sandbox_global_type(lua, RESTORE_FUNCTION) == LUA_TFUNCTION;
  if (save != restore)
    return gf_diag_error(
        diag, GF_INVALID, "the hook files define %s but not %s; a checkpoint needs both or neither",
        save ? SAVE_FUNCTION : RESTORE_FUNCTION, save ? RESTORE_FUNCTION : SAVE_FUNCTION);
  if (!save) {
    *changed = state_fingerprint(lua) != lua->state_mark;
    return GF_OK;
  }
  lua_State *L = lua->L;
  int base = lua_gettop(L) + 1;
  lua_pushcfunction(L, add_traceback);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lua->env_ref);
  lua_pushliteral(L, SAVE_FUNCTION);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  reset_budget(lua);
  int status = lua_pcall(L, 0, 1, base);
  gf_status st = state_call_status(lua, status, SAVE_FUNCTION, "checkpoint", diag);
  if (st == GF_OK) {
    gf_text t = {0};
    gf_text_printf(&t, "return ");
    const char *why = serialize(L, -1, &t, 0);
    if (why) {
      gf_text_free(&t);
      st = gf_diag_error(diag, GF_INVALID,
                         "%s() returned %s%s; a saved state holds numbers, strings, booleans "
                         "and tables of them",
                         SAVE_FUNCTION, strchr(why, ' ') ? "" : "a value of type ", why);
    } else {
      gf_text_printf(&t, "\n");
      *text = gf_text_take(&t);
      if (!*text) st = gf_oom(diag, "saving the hooks' state");
    }
  }
  lua_settop(L, base - 1);
  recover(lua, status);
  return st;
}

typedef struct restore_args {
  const char *text;
} restore_args;

/* Builds the saved value in an empty environment, then calls restore_state. */
static int restore_protected(lua_State *L) {
  restore_args *args = lua_touserdata(L, 1);
  if (luaL_loadbufferx(L, args->text, strlen(args->text), "=checkpoint", "t") != LUA_OK)
    return lua_error(L);
  lua_newtable(L);
  lua_setupvalue(L, -2, 1);
  lua_call(L, 0, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, state_owner(L)->env_ref);
  lua_pushliteral(L, RESTORE_FUNCTION);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  lua_insert(L, -2);
  lua_call(L, 1, 0);
  return 0;
}

gf_status gf_lua_state_restore(gf_lua *lua, const char *text, gf_diag *diag) {
  if (!lua || sandbox_global_type(lua, RESTORE_FUNCTION) != LUA_TFUNCTION)
    return gf_diag_error(diag, GF_INVALID,
                         "the checkpoint holds the hooks' state, but the hook files define no "
                         "%s to take it back",
                         RESTORE_FUNCTION);
  lua_State *L = lua->L;
  int base = lua_gettop(L) + 1;
  restore_args args = {text};
  lua_pushcfunction(L, add_traceback);
  lua_pushcfunction(L, restore_protected);
  lua_pushlightuserdata(L, &args);
  reset_budget(lua);
  int status = lua_pcall(L, 1, 0, base);
  gf_status st = state_call_status(lua, status, RESTORE_FUNCTION, "restart", diag);
  lua_settop(L, base - 1);
  recover(lua, status);
  return st;
}

int gf_lua_state_defined_in(gf_lua *lua, const char *path) {
  lua_State *L = lua->L;
  if (!lua_checkstack(L, 2)) return 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, lua->env_ref);
  lua_pushliteral(L, SAVE_FUNCTION);
  int found = 0;
  if (lua_rawget(L, -2) == LUA_TFUNCTION) {
    lua_Debug ar;
    lua_getinfo(L, ">S", &ar);                                       /* pops the function */
    found = ar.source[0] == '@' && strcmp(ar.source + 1, path) == 0; /* the chunk's "@path" */
    lua_pop(L, 1);
  } else {
    lua_pop(L, 2);
  }
  return found;
}
