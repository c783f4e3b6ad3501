/* text.h - the one growable string: messages, the resolved YAML, JSON.
 *
 * Appending never fails loudly: when memory runs out the text is dropped and
 * `failed` set, further appends do nothing, and gf_text_take() returns NULL,
 * so a builder checks once, at the end, where it knows what it was doing.
 */
#ifndef GF_TEXT_H
#define GF_TEXT_H

#include <stddef.h>

typedef struct gf_text {
  char *data; /* NUL-terminated once anything was appended */
  size_t len, cap;
  int failed; /* out of memory: data is NULL */
} gf_text;

void gf_text_append(gf_text *t, const char *s, size_t n);
void gf_text_puts(gf_text *t, const char *s);
void gf_text_printf(gf_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `s` as a JSON string literal: quotes and escapes. */
void gf_text_json(gf_text *t, const char *s);
/* `s` as XML text or an attribute value: & < > " escaped. */
void gf_text_xml(gf_text *t, const char *s);
/* The text (an empty string when nothing was appended); NULL when out of
 * memory. The caller frees it; `t` is left empty. */
char *gf_text_take(gf_text *t);
void gf_text_free(gf_text *t);

#endif
