/* text.c - the one growable string. */
#include "text.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static void fail(gf_text *t) {
  free(t->data);
  *t = (gf_text){.failed = 1};
}

/* Room for `n` more bytes and the NUL. */
static int reserve(gf_text *t, size_t n) {
  if (t->failed) return 0;
  if (n > SIZE_MAX / 2 - t->len) {
    fail(t);
    return 0;
  }
  if (t->len + n + 1 <= t->cap) return 1;
  size_t want = t->cap ? t->cap : 64;
  while (want < t->len + n + 1) want *= 2;
  char *grown = gf_realloc(t->data, want);
  if (!grown) {
    fail(t);
    return 0;
  }
  t->data = grown;
  t->cap = want;
  return 1;
}

void gf_text_append(gf_text *t, const char *s, size_t n) {
  if (!reserve(t, n)) return;
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
}

void gf_text_puts(gf_text *t, const char *s) {
  gf_text_append(t, s, strlen(s));
}

void gf_text_printf(gf_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    fail(t);
    return;
  }
  if (!reserve(t, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

void gf_text_json(gf_text *t, const char *s) {
  gf_text_puts(t, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '"':
        gf_text_puts(t, "\\\"");
        break;
      case '\\':
        gf_text_puts(t, "\\\\");
        break;
      case '\n':
        gf_text_puts(t, "\\n");
        break;
      case '\t':
        gf_text_puts(t, "\\t");
        break;
      case '\r':
        gf_text_puts(t, "\\r");
        break;
      default:
        if (*p < 0x20)
          gf_text_printf(t, "\\u%04x", *p);
        else
          gf_text_append(t, (const char *)p, 1);
    }
  }
  gf_text_puts(t, "\"");
}

void gf_text_xml(gf_text *t, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    const char *entity = *p == '&'   ? "&amp;"
                         : *p == '<' ? "&lt;"
                         : *p == '>' ? "&gt;"
                         : *p == '"' ? "&quot;"
                                     : NULL;
    if (entity)
      gf_text_puts(t, entity);
    else /* XML 1.0 has no way to write most control characters */
      gf_text_append(t, *p < 0x20 && *p != '\t' && *p != '\n' ? "?" : (const char *)p, 1);
  }
}

char *gf_text_take(gf_text *t) {
  if (t->failed) return NULL;
  char *data = t->data ? t->data : gf_strdup("");
  *t = (gf_text){0};
  return data;
}

void gf_text_free(gf_text *t) {
  free(t->data);
  *t = (gf_text){0};
}
