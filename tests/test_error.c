/* test_error.c - status names and diagnostics, one diag shared by threads. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"

static void test_status_names(void) {
  CHECK_STR(gf_status_name(GF_INVALID), "INVALID");
  CHECK_STR(gf_status_text(GF_IOERR), "output write failed");
  CHECK_INT(GF_DIVERGED, 76);
}

/* Everything written to `out` since it was opened. Caller frees. */
static char *contents(FILE *out) {
  fflush(out);
  long size = ftell(out);
  char *text = calloc(1, (size_t)size + 1);
  rewind(out);
  CHECK_INT(fread(text, 1, (size_t)size, out), size);
  return text;
}

static void test_located_message(void) {
  gf_diag diag;
  gf_diag_init(&diag, "wf.yaml", "grid:\n\tshape: [8, x]\n");
  diag.out = tmpfile();
  CHECK_INT(gf_diag_at(&diag, (gf_loc){2, 12, 0}, GF_INVALID, "unknown name '%s'", "x"),
            GF_INVALID);
  CHECK_STR(diag.last, "wf.yaml:2:12: unknown name 'x'");
  CHECK_INT(diag.count, 1);
  char *text = contents(diag.out);
  CHECK_STR(text, "gflow: wf.yaml:2:12: unknown name 'x'\n  \tshape: [8, x]\n  \t          ^\n");
  free(text);
  CHECK_INT(gf_diag_error(&diag, GF_IOERR, "disk full"), GF_IOERR);
  CHECK_STR(diag.last, "disk full");
  CHECK_INT(diag.count, 2);
  fclose(diag.out);
}

/* The message for a caret at `col` of a line of `len` bytes, all 'a' but an
 * 'X' at the caret (and a tab at `tab` when >= 0); caller frees. */
static char *message_on_long_line(size_t len, int col, long tab) {
  char *text = malloc(len + 16);
  memcpy(text, "k: 1\n", 5);
  memset(text + 5, 'a', len);
  text[5 + col - 1] = 'X';
  if (tab >= 0) text[5 + tab] = '\t';
  strcpy(text + 5 + len, "\nz\n");
  gf_diag diag;
  gf_diag_init(&diag, "wf.yaml", text);
  diag.out = tmpfile();
  gf_diag_at(&diag, (gf_loc){2, col, 0}, GF_INVALID, "here");
  char *out = contents(diag.out);
  fclose(diag.out);
  free(text);
  return out;
}

static void test_long_line_window(void) {
  enum { LEN = 100000 };
  char *text, *line, *caret;

  /* The middle of a 100,000-column line: 50 columns either side, ... marks. */
  text = message_on_long_line(LEN, 50001, -1);
  line = strchr(text, '\n') + 1;
  caret = strchr(line, '\n') + 1;
  CHECK(strncmp(text, "gflow: wf.yaml:2:50001: here\n", 29) == 0);
  CHECK_INT(strchr(line, '\n') - line, 2 + 3 + 100 + 3);
  CHECK(strncmp(line, "  ...aaaa", 9) == 0);
  CHECK(strncmp(line + 2 + 3 + 100, "...\n", 4) == 0);
  CHECK_INT(strchr(caret, '^') - caret, 2 + 3 + 50); /* under the X */
  CHECK(line[strchr(caret, '^') - caret] == 'X');
  CHECK_STR(strchr(caret, '^'), "^\n");
  free(text);

  /* Near the start: no leading mark, the caret where it was. */
  text = message_on_long_line(LEN, 3, -1);
  line = strchr(text, '\n') + 1;
  caret = strchr(line, '\n') + 1;
  CHECK(strncmp(line, "  aaXaaa", 8) == 0);
  CHECK_INT(strchr(line, '\n') - line, 2 + 100 + 3);
  CHECK_STR(caret, "    ^\n");
  free(text);

  /* At the end: no trailing mark. */
  text = message_on_long_line(LEN, LEN, -1);
  line = strchr(text, '\n') + 1;
  caret = strchr(line, '\n') + 1;
  CHECK_INT(strchr(line, '\n') - line, 2 + 3 + 100);
  CHECK(strncmp(line + 2 + 3 + 99, "X\n", 2) == 0);
  CHECK_INT(strchr(caret, '^') - caret, 2 + 3 + 99);
  free(text);

  /* Exactly 100 columns: quoted whole. A tab inside the window stays a tab
   * in the caret line. */
  text = message_on_long_line(100, 60, 10);
  line = strchr(text, '\n') + 1;
  caret = strchr(line, '\n') + 1;
  CHECK_INT(strchr(line, '\n') - line, 2 + 100);
  CHECK(strncmp(line, "  aaaaaaaaaa\ta", 13) == 0);
  CHECK_INT(strchr(caret, '^') - caret, 2 + 59);
  CHECK(caret[2 + 10] == '\t');
  free(text);

  /* A line of two-byte characters is never cut inside one. */
  size_t len = 2 * 50000;
  char *utf8 = malloc(len + 16);
  memcpy(utf8, "k: 1\n", 5);
  for (size_t i = 0; i < len; i += 2) memcpy(utf8 + 5 + i, "\xc3\xa9", 2); /* e acute */
  strcpy(utf8 + 5 + len, "\n");
  gf_diag diag;
  gf_diag_init(&diag, "wf.yaml", utf8);
  diag.out = tmpfile();
  gf_diag_at(&diag, (gf_loc){2, 50002, 0}, GF_INVALID, "here");
  text = contents(diag.out);
  fclose(diag.out);
  line = strchr(text, '\n') + 1;
  CHECK(strncmp(line, "  ...\xc3\xa9", 7) == 0);
  CHECK(strncmp(strchr(line, '\n') - 5, "\xc3\xa9...", 5) == 0);
  free(text);
  free(utf8);

  /* A tab inside the window of a long line. */
  text = message_on_long_line(LEN, 50001, 50000 - 10);
  line = strchr(text, '\n') + 1;
  caret = strchr(line, '\n') + 1;
  CHECK(caret[2 + 3 + 40] == '\t');
  CHECK(line[strchr(caret, '^') - caret] == 'X');
  free(text);
}

/* ---- one diag, several threads ---------------------------------------- */

enum { THREADS = 8, MESSAGES = 400 };

typedef struct reporter {
  gf_diag *diag;
  int id;
} reporter;

/* Every other message has a location, so it is three lines that must stay
 * together. */
static void *report_many(void *arg) {
  const reporter *r = arg;
  for (int i = 0; i < MESSAGES; i++) {
    if (i % 2)
      gf_diag_at(r->diag, (gf_loc){1, 4, 0}, GF_INVALID, "thread %d message %d", r->id, i);
    else
      gf_diag_error(r->diag, GF_IOERR, "thread %d message %d", r->id, i);
  }
  return NULL;
}

static void test_threads_share_a_diag(void) {
  gf_diag diag;
  gf_diag_init(&diag, "wf.yaml", "abcdef\n");
  diag.out = tmpfile();
  pthread_t thread[THREADS];
  reporter reporters[THREADS];
  for (int t = 0; t < THREADS; t++) {
    reporters[t] = (reporter){&diag, t};
    CHECK_INT(pthread_create(&thread[t], NULL, report_many, &reporters[t]), 0);
  }
  for (int t = 0; t < THREADS; t++) pthread_join(thread[t], NULL);

  CHECK_INT(diag.count, THREADS * MESSAGES);
  /* `last` is one whole message, the one written last. */
  int id = -1, i = -1, n = 0;
  const char *last = strncmp(diag.last, "wf.yaml:1:4: ", 13) == 0 ? diag.last + 13 : diag.last;
  CHECK_INT(sscanf(last, "thread %d message %d%n", &id, &i, &n), 2);
  CHECK(last[n] == '\0' && id >= 0 && id < THREADS && i >= 0 && i < MESSAGES);

  /* The output: whole messages, each thread's in its order, the last last. */
  char *text = contents(diag.out);
  int next[THREADS] = {0}, messages = 0, torn = 0;
  char *line_end, *message = NULL;
  for (char *line = text; *line; line = line_end + 1) {
    line_end = strchr(line, '\n');
    if (!line_end) {
      torn++;
      break;
    }
    *line_end = '\0';
    if (strncmp(line, "gflow: ", 7) != 0) {
      torn++;
      continue;
    }
    message = line + 7;
    int located = strncmp(message, "wf.yaml:1:4: ", 13) == 0;
    const char *body = located ? message + 13 : message;
    if (sscanf(body, "thread %d message %d%n", &id, &i, &n) != 2 || body[n] || id < 0 ||
        id >= THREADS || i != next[id] || located != i % 2) {
      torn++;
      continue;
    }
    next[id]++;
    messages++;
    if (located) { /* the quoted line and the caret come next, unbroken */
      char *quote = line_end + 1, *quote_end = strchr(quote, '\n');
      if (!quote_end || strncmp(quote, "  abcdef\n     ^\n", 16) != 0) {
        torn++;
        continue;
      }
      line_end = quote_end + 1 + strlen("     ^");
    }
  }
  CHECK_INT(torn, 0);
  CHECK_INT(messages, THREADS * MESSAGES);
  for (int t = 0; t < THREADS; t++) CHECK_INT(next[t], MESSAGES);
  CHECK(message && strcmp(message, diag.last) == 0);
  free(text);
  fclose(diag.out);
}

int main(void) {
  RUN(test_status_names);
  RUN(test_located_message);
  RUN(test_long_line_window);
  RUN(test_threads_share_a_diag);
  return check_summary();
}
