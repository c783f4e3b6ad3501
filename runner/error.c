/* error.c - status names and source-located diagnostics. */
#include "error.h"

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

gf_status gf_diag_verror(gf_diag *diag, gf_loc loc, gf_status status, const char *fmt, va_list ap) {
  char message[768];
  vsnprintf(message, sizeof message, fmt, ap);
  pthread_mutex_lock(&diag->lock);
  if (loc.line > 0 && diag->origin)
    snprintf(diag->last, sizeof diag->last, "%s:%d:%d: %s", diag->origin, loc.line, loc.col,
             message);
  else
    snprintf(diag->last, sizeof diag->last, "%s", message);
  diag->count++;
  FILE *out = diag->out ? diag->out : stderr;
  fprintf(out, "gflow: %s\n", diag->last);
  size_t len = 0;
  const char *line = (loc.line > 0 && diag->text) ? source_line(diag->text, loc.line, &len) : NULL;
  if (line) {
    fprintf(out, "  %.*s\n  ", (int)len, line);
    /* Keep tabs in the caret line so the caret sits under the column. */
    for (int i = 1; i < loc.col && (size_t)(i - 1) < len; i++)
      fputc(line[i - 1] == '\t' ? '\t' : ' ', out);
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
  gf_diag_verror(diag, (gf_loc){0, 0}, status, fmt, ap);
  va_end(ap);
  return status;
}

static void out_of_memory(size_t size) {
  fprintf(stderr, "gflow: out of host memory allocating %zu bytes\n", size);
  exit(GF_INTERNAL);
}

void *gf_xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) out_of_memory(size);
  return p;
}

void *gf_xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) out_of_memory(count * size);
  return p;
}

void *gf_xrealloc(void *ptr, size_t size) {
  void *p = realloc(ptr, size ? size : 1);
  if (!p) out_of_memory(size);
  return p;
}

char *gf_xstrdup(const char *s) {
  return gf_xstrndup(s, strlen(s));
}

char *gf_xstrndup(const char *s, size_t n) {
  char *p = gf_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *gf_xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = gf_xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
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
