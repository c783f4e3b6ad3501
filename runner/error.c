/* error.c - status names and source-located diagnostics. */
#include "error.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gf_status_name(gf_status status) {
  switch (status) {
#define GF_STATUS_NAME(name, code, text) \
  case GF_##name:                        \
    return #name;
    GF_STATUS_MAP(GF_STATUS_NAME)
#undef GF_STATUS_NAME
  }
  return "UNKNOWN";
}

const char *gf_status_text(gf_status status) {
  switch (status) {
#define GF_STATUS_TEXT(name, code, text) \
  case GF_##name:                        \
    return text;
    GF_STATUS_MAP(GF_STATUS_TEXT)
#undef GF_STATUS_TEXT
  }
  return "unknown status";
}

void gf_diag_init(gf_diag *diag, const char *origin, const char *text) {
  memset(diag, 0, sizeof *diag);
  diag->origin = origin;
  diag->text = text;
  diag->out = stderr;
  /* The static initialiser: a mutex that needs no pthread_mutex_destroy. */
  diag->lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

/* The 1-based line `line` of `text`, without its newline. */
static const char *source_line(const char *text, int line, size_t *len) {
  const char *p = text;
  for (int i = 1; p && i < line; i++) {
    p = strchr(p, '\n');
    if (p) p++;
  }
  if (!p || !*p) return NULL;
  const char *end = strchr(p, '\n');
  *len = end ? (size_t)(end - p) : strlen(p);
  return p;
}

/* The part [*start, *end) of a line of `len` bytes that a message quotes: all
 * of it, or GF_DIAG_QUOTE_COLUMNS around byte `caret` (the rest shown as
 * `...`, as compilers do), never splitting a UTF-8 character. */
static void quote_window(const char *line, size_t len, size_t caret, size_t *start, size_t *end) {
  *start = 0;
  *end = len;
  if (len <= GF_DIAG_QUOTE_COLUMNS) return;
  size_t s = caret > GF_DIAG_QUOTE_COLUMNS / 2 ? caret - GF_DIAG_QUOTE_COLUMNS / 2 : 0;
  if (s > len - GF_DIAG_QUOTE_COLUMNS) s = len - GF_DIAG_QUOTE_COLUMNS;
  size_t e = s + GF_DIAG_QUOTE_COLUMNS;
  while (s > 0 && ((unsigned char)line[s] & 0xC0) == 0x80) s--;
  while (e < len && ((unsigned char)line[e] & 0xC0) == 0x80) e++;
  *start = s;
  *end = e;
}

/* "rank 2: " under MPI, set once before any thread reports (main.c): the
 * process's name in a job's merged stderr. */
static char process_prefix[32];

void gf_diag_set_rank(int rank, int ranks) {
  if (ranks > 1) snprintf(process_prefix, sizeof process_prefix, "rank %d: ", rank);
}

void gf_diag_set_sources(gf_diag *diag, const gf_diag_source *sources, int count) {
  diag->sources = sources;
  diag->nsources = count;
}

gf_status gf_diag_verror(gf_diag *diag, gf_loc loc, gf_status status, const char *fmt, va_list ap) {
  char message[768];
  vsnprintf(message, sizeof message, fmt, ap);
  pthread_mutex_lock(&diag->lock);
  const char *origin = diag->origin, *text = diag->text;
  if (loc.source > 0 && loc.source <= diag->nsources) {
    origin = diag->sources[loc.source - 1].origin;
    text = diag->sources[loc.source - 1].text;
  }
  if (loc.line > 0 && origin)
    snprintf(diag->last, sizeof diag->last, "%s:%d:%d: %s", origin, loc.line, loc.col, message);
  else
    snprintf(diag->last, sizeof diag->last, "%s", message);
  diag->count++;
  FILE *out = diag->out ? diag->out : stderr;
  fprintf(out, "gflow: %s%s\n", process_prefix, diag->last);
  size_t len = 0;
  const char *line = (loc.line > 0 && text) ? source_line(text, loc.line, &len) : NULL;
  if (line) {
    size_t caret = loc.col > 1 ? (size_t)(loc.col - 1) : 0, start, end;
    if (caret > len) caret = len;
    quote_window(line, len, caret, &start, &end);
    fprintf(out, "  %s%.*s%s\n  %s", start ? "..." : "", (int)(end - start), line + start,
            end < len ? "..." : "", start ? "   " : "");
    /* Keep tabs in the caret line so the caret sits under the column. */
    for (size_t i = start; i < caret; i++) fputc(line[i] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
  }
  fflush(out);
  pthread_mutex_unlock(&diag->lock);
  return status;
}

gf_status gf_diag_at(gf_diag *diag, gf_loc loc, gf_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gf_diag_verror(diag, loc, status, fmt, ap);
  va_end(ap);
  return status;
}

gf_status gf_diag_error(gf_diag *diag, gf_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gf_diag_verror(diag, (gf_loc){0, 0, 0}, status, fmt, ap);
  va_end(ap);
  return status;
}

gf_status gf_oom(gf_diag *diag, const char *what) {
  return gf_diag_error(diag, GF_INTERNAL, "out of memory: %s", what);
}

#ifdef GFLOW_ALLOC_FAULTS
/* The test build's fault injection: the N-th allocation (GFLOW_FAIL_ALLOC=N)
 * fails. The output writer allocates from its own thread, hence atomics. */
static long alloc_fails_at(void) {
  static long at = -1;
  long v = __atomic_load_n(&at, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *env = getenv("GFLOW_FAIL_ALLOC");
    v = env ? strtol(env, NULL, 10) : 0;
    __atomic_store_n(&at, v, __ATOMIC_RELAXED);
  }
  return v;
}

static int injected_failure(void) {
  static long count;
  long at = alloc_fails_at();
  if (at <= 0 || __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) != at) return 0;
  fprintf(stderr, "gflow: test: allocation %ld fails (GFLOW_FAIL_ALLOC)\n", at);
  return 1;
}
#else
static int injected_failure(void) {
  return 0;
}
#endif

void *gf_malloc(size_t size) {
  return injected_failure() ? NULL : malloc(size ? size : 1);
}

void *gf_calloc(size_t count, size_t size) {
  return injected_failure() ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *gf_realloc(void *ptr, size_t size) {
  return injected_failure() ? NULL : realloc(ptr, size ? size : 1);
}

char *gf_strdup(const char *s) {
  return gf_strndup(s, strlen(s));
}

char *gf_strndup(const char *s, size_t n) {
  char *p = gf_malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *gf_asprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *p = gf_malloc((size_t)n + 1);
  if (!p) return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

gf_status gf_grow(void **array, int *cap, int need, size_t size) {
  if (need <= *cap) return GF_OK;
  int next = *cap > 0 ? *cap : 8;
  while (next < need) next = next > INT_MAX / 2 ? need : 2 * next;
  if ((size_t)next > SIZE_MAX / size) return GF_INTERNAL;
  /* *array is some T *: read and write it as bytes, never through a void *. */
  void *old, *grown;
  memcpy(&old, array, sizeof old);
  grown = gf_realloc(old, (size_t)next * size);
  if (!grown) return GF_INTERNAL;
  memcpy(array, &grown, sizeof grown);
  *cap = next;
  return GF_OK;
}

const char *gf_format_bytes(double bytes, char *buf, size_t size) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    u++;
  }
  snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
  return buf;
}
