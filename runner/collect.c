/* collect.c - `gflow collect DIR...`: every run.json below the folders, one
 * row each; the columns are the parameters that differ between the runs
 * (their --set lists and the workflows' key figures), then the timings.
 * With --reference, each run is held to the references that select it, as
 * ReFrame's performance references are, and a miss makes the exit status 1. */
#include "collect.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "flatkeys.h"
#include "text.h"

static const char usage_collect[] =
    "usage: gflow collect DIR... [--csv | --json] [--reference FILE] [--tolerance F]\n"
    "\n"
    "Finds every run.json below the folders and prints one table on stdout\n"
    "(Markdown by default): a row per run, the parameters that vary between the\n"
    "runs as columns, then total_ms, gpts_per_s, effective_gb_per_s, complete.\n"
    "  --reference FILE  lines of `KEY=VALUE... METRIC>=X` or `METRIC<=X`: every run\n"
    "                    whose parameters match the KEY=VALUE selectors must meet the\n"
    "                    bounds; a run that misses one is named and collect exits 1\n"
    "  --tolerance F     slack on every bound, a fraction (default 0.1: 10%)\n";

enum { M_TOTAL_MS, M_GPTS, M_GBS, M_COUNT };
static const char *const metric_names[M_COUNT] = {"total_ms", "gpts_per_s", "effective_gb_per_s"};

typedef struct row {
  char *dir;      /* the folder holding run.json */
  gf_flat params; /* key -> value: key figures, backend, threads, then --set keys */
  double metric[M_COUNT];
  int complete;
} row;

typedef struct table {
  row *rows;
  int n, cap;
  int oom;
} table;

static int collect_oom(void) {
  gf_diag diag;
  gf_diag_init(&diag, NULL, NULL);
  return gf_oom(&diag, "collecting runs");
}

/* A --set value or a selector's value written as the table writes it: YAML
 * parsed and flattened, so `[64, 64]` is 64x64. NULL when out of memory. */
static char *normalized(const char *value) {
  gf_flat one = {0};
  char *s = NULL;
  if (gf_flat_text(value, &one) == GF_OK && one.n == 1 && one.items[0].key[0] == '\0')
    s = gf_strdup(one.items[0].value);
  else
    s = gf_flat_safe(value);
  gf_flat_free(&one);
  return s;
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  gf_text t = {0};
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) gf_text_append(&t, buf, got);
  fclose(f);
  return gf_text_take(&t);
}

static double number(const gf_flat *flat, const char *key) {
  const char *v = gf_flat_get(flat, key);
  return v ? strtod(v, NULL) : 0;
}

/* One run.json into a row: 0, or an exit status. */
static int load_run(const char *path, row *r) {
  char *text = read_all(path);
  gf_flat all = {0};
  int readable = text != NULL;
  gf_status st = text ? gf_flat_text(text, &all) : GF_INVALID;
  free(text);
  const char *total = gf_flat_get(&all, "timings.total_s");
  if (st != GF_OK || !total || !gf_flat_get(&all, "complete")) {
    gf_flat_free(&all);
    if (st == GF_INTERNAL) return collect_oom();
    fprintf(stderr, "gflow: collect: %s: %s\n", path,
            readable ? "not a gflow run.json" : "cannot be read");
    return GF_INVALID;
  }
  r->metric[M_TOTAL_MS] = number(&all, "timings.total_s") * 1e3;
  r->metric[M_GPTS] = number(&all, "timings.gpts_per_s");
  r->metric[M_GBS] = number(&all, "timings.effective_gb_per_s");
  r->complete = strcmp(gf_flat_get(&all, "complete"), "true") == 0;
  /* key figures first, then what the --set lists add */
  for (int pass = 0; pass < 3 && st == GF_OK; pass++)
    for (int i = 0; i < all.n && st == GF_OK; i++) {
      const char *key = all.items[i].key, *k = NULL;
      char *value = NULL;
      if (pass == 0 && strncmp(key, "workflow.", 9) == 0) k = key + 9;
      if (pass == 1 && (!strcmp(key, "backend") || !strcmp(key, "threads"))) k = key;
      if (pass == 2 && strncmp(key, "set.", 4) == 0 && !gf_flat_get(&r->params, key + 4))
        k = key + 4;
      if (!k) continue;
      /* a --set value is the text as given: flattened here as YAML */
      value = pass == 2 ? normalized(all.items[i].value) : gf_strdup(all.items[i].value);
      char *kk = gf_strdup(k);
      if (!value || !kk || GF_GROW(r->params.items, r->params.cap, r->params.n + 1) != GF_OK) {
        free(value);
        free(kk);
        st = GF_INTERNAL;
        break;
      }
      r->params.items[r->params.n++] = (gf_flat_item){kk, value};
    }
  gf_flat_free(&all);
  return st == GF_OK ? 0 : collect_oom();
}

static int find_runs(const char *dir, table *t);

static int visit(const char *path, const char *name, table *t) {
  struct stat sb;
  if (name[0] == '.' || stat(path, &sb) != 0) return 0; /* hidden: temporaries */
  if (S_ISDIR(sb.st_mode)) return find_runs(path, t);
  if (strcmp(name, "run.json") != 0 || !S_ISREG(sb.st_mode)) return 0;
  if (GF_GROW(t->rows, t->cap, t->n + 1) != GF_OK) return collect_oom();
  row *r = &t->rows[t->n];
  *r = (row){0};
  size_t len = strlen(path) - strlen("/run.json");
  if (!(r->dir = gf_strndup(path, len))) return collect_oom();
  t->n++;
  return load_run(path, r);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every run.json below `dir`, in name order. */
static int find_runs(const char *dir, table *t) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "gflow: collect: cannot read %s: %s\n", dir, strerror(errno));
    return GF_NOINPUT;
  }
  char **names = NULL;
  int n = 0, cap = 0, status = 0;
  struct dirent *e;
  while ((e = readdir(d)) && !status) {
    char *name = gf_strdup(e->d_name);
    if (!name || GF_GROW(names, cap, n + 1) != GF_OK) {
      free(name);
      status = collect_oom();
    } else {
      names[n++] = name;
    }
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, by_name);
  for (int i = 0; i < n; i++) {
    char *path = status ? NULL : gf_asprintf("%s/%s", dir, names[i]);
    if (!status) status = path ? visit(path, names[i], t) : collect_oom();
    free(path);
    free(names[i]);
  }
  free(names);
  return status;
}

/* The columns: keys, in order of first appearance, whose values differ
 * between the runs (a run without the key shows "-"). */
static const char *cell(const row *r, const char *key) {
  const char *v = gf_flat_get(&r->params, key);
  return v ? v : "-";
}

static int varying(const table *t, const char *key) {
  for (int i = 1; i < t->n; i++)
    if (strcmp(cell(&t->rows[i], key), cell(&t->rows[0], key)) != 0) return 1;
  return 0;
}

static int columns(const table *t, const char ***out, int *ncols) {
  const char **cols = NULL;
  int n = 0, cap = 0;
  for (int i = 0; i < t->n; i++)
    for (int k = 0; k < t->rows[i].params.n; k++) {
      const char *key = t->rows[i].params.items[k].key;
      int seen = 0;
      for (int c = 0; c < n && !seen; c++) seen = strcmp(cols[c], key) == 0;
      if (seen || !varying(t, key)) continue;
      if (GF_GROW(cols, cap, n + 1) != GF_OK) {
        free(cols);
        return collect_oom();
      }
      cols[n++] = key;
    }
  *out = cols;
  *ncols = n;
  return 0;
}

static void csv_field(const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, stdout);
    return;
  }
  putchar('"');
  for (; *s; s++) {
    if (*s == '"') putchar('"');
    putchar(*s);
  }
  putchar('"');
}

static void print_table(const table *t, const char **cols, int ncols, int format) {
  gf_text line = {0};
  if (format == 'j') {
    fputs("[", stdout);
    for (int i = 0; i < t->n; i++) {
      const row *r = &t->rows[i];
      gf_text_puts(&line, i ? ",\n  {\"run\": " : "\n  {\"run\": ");
      gf_text_json(&line, r->dir);
      for (int c = 0; c < ncols; c++) {
        gf_text_puts(&line, ", ");
        gf_text_json(&line, cols[c]);
        gf_text_puts(&line, ": ");
        gf_text_json(&line, cell(r, cols[c]));
      }
      gf_text_printf(&line,
                     ", \"total_ms\": %.6g, \"gpts_per_s\": %.6g, \"effective_gb_per_s\": %.6g, "
                     "\"complete\": %s}",
                     r->metric[M_TOTAL_MS], r->metric[M_GPTS], r->metric[M_GBS],
                     r->complete ? "true" : "false");
      char *s = gf_text_take(&line);
      if (s) fputs(s, stdout);
      free(s);
    }
    fputs("\n]\n", stdout);
    return;
  }
  const char *sep = format == 'c' ? "," : " | ", *start = format == 'c' ? "" : "| ",
             *end = format == 'c' ? "\n" : " |\n";
  fputs(start, stdout);
  fputs("run", stdout);
  for (int c = 0; c < ncols; c++) printf("%s%s", sep, cols[c]);
  for (int m = 0; m < M_COUNT; m++) printf("%s%s", sep, metric_names[m]);
  printf("%scomplete%s", sep, end);
  if (format == 'm') {
    fputs("|", stdout);
    for (int c = 0; c < ncols + M_COUNT + 2; c++) fputs(" --- |", stdout);
    fputs("\n", stdout);
  }
  for (int i = 0; i < t->n; i++) {
    const row *r = &t->rows[i];
    fputs(start, stdout);
    if (format == 'c')
      csv_field(r->dir);
    else
      fputs(r->dir, stdout);
    for (int c = 0; c < ncols; c++) {
      fputs(sep, stdout);
      if (format == 'c')
        csv_field(cell(r, cols[c]));
      else
        fputs(cell(r, cols[c]), stdout);
    }
    printf("%s%.3f%s%.4g%s%.4g%s%s%s", sep, r->metric[M_TOTAL_MS], sep, r->metric[M_GPTS], sep,
           r->metric[M_GBS], sep, r->complete ? "true" : "false", end);
  }
}

/* ---- references ----------------------------------------------------------- */

/* One line of a reference file against every run: the number of misses,
 * each named on stderr; -1 for a line that does not parse. */
static int check_line(const table *t, char *line, const char *where, double tolerance) {
  char *selectors[32], *bounds[8];
  int nsel = 0, nbounds = 0, misses = 0;
  for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
    if (strstr(tok, "<=") || strstr(tok, ">=")) {
      if (nbounds == 8) return -1;
      bounds[nbounds++] = tok;
    } else if (strchr(tok, '=') && strchr(tok, '=') != tok) {
      if (nsel == 32) return -1;
      selectors[nsel++] = tok;
    } else {
      return -1;
    }
  }
  if (!nbounds) return nsel ? -1 : 0; /* a blank line */
  for (int b = 0; b < nbounds; b++) {
    char *op = strstr(bounds[b], "<=") ? strstr(bounds[b], "<=") : strstr(bounds[b], ">=");
    char *endp;
    int m = 0;
    while (m < M_COUNT && (strlen(metric_names[m]) != (size_t)(op - bounds[b]) ||
                           strncmp(metric_names[m], bounds[b], (size_t)(op - bounds[b]))))
      m++;
    strtod(op + 2, &endp);
    if (m == M_COUNT || endp == op + 2 || *endp) return -1;
  }
  for (int i = 0; i < t->n; i++) {
    const row *r = &t->rows[i];
    int match = 1;
    for (int s = 0; s < nsel && match; s++) {
      char *eq = strchr(selectors[s], '=');
      *eq = '\0';
      char *want = normalized(eq + 1);
      const char *have =
          strcmp(selectors[s], "run") == 0 ? r->dir : gf_flat_get(&r->params, selectors[s]);
      match = have && want && strcmp(have, strcmp(selectors[s], "run") == 0 ? eq + 1 : want) == 0;
      *eq = '=';
      free(want);
    }
    for (int b = 0; b < nbounds && match; b++) {
      char *op = strstr(bounds[b], "<=") ? strstr(bounds[b], "<=") : strstr(bounds[b], ">=");
      int m = 0;
      while (strncmp(metric_names[m], bounds[b], (size_t)(op - bounds[b]))) m++;
      double x = strtod(op + 2, NULL), v = r->metric[m];
      int at_most = op[0] == '<';
      double limit = at_most ? x * (1 + tolerance) : x * (1 - tolerance);
      if (at_most ? v <= limit : v >= limit) continue;
      fprintf(stderr,
              "gflow: collect: %s misses its reference: %s %.6g, %s %.6g (%s, tolerance %g%%)\n",
              r->dir, metric_names[m], v, at_most ? "expected at most" : "expected at least", limit,
              where, tolerance * 100);
      misses++;
    }
  }
  return misses;
}

static int check_references(const table *t, const char *path, double tolerance) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "gflow: collect: cannot read %s: %s\n", path, strerror(errno));
    return GF_NOINPUT;
  }
  char line[4096], where[4200];
  int lineno = 0, misses = 0, status = 0;
  while (!status && fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    snprintf(where, sizeof where, "%s:%d", path, lineno);
    int m = check_line(t, line, where, tolerance);
    if (m < 0) {
      fprintf(stderr,
              "gflow: collect: %s: expected KEY=VALUE... METRIC<=X or METRIC>=X, METRIC one of "
              "total_ms, gpts_per_s, effective_gb_per_s\n",
              where);
      status = GF_INVALID;
    }
    misses += m > 0 ? m : 0;
  }
  fclose(f);
  return status ? status : misses ? 1 : 0;
}

int gf_collect_main(int argc, char **argv) {
  int format = 'm', status = 0;
  const char *reference = NULL;
  double tolerance = 0.1;
  const char **dirs = gf_calloc((size_t)argc + 1, sizeof *dirs);
  int ndirs = 0;
  if (!dirs) return collect_oom();
  for (int i = 1; i < argc && !status; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_collect, stdout);
      free(dirs);
      return 0;
    } else if (!strcmp(a, "--csv")) {
      format = 'c';
    } else if (!strcmp(a, "--json")) {
      format = 'j';
    } else if (!strcmp(a, "--reference") && i + 1 < argc) {
      reference = argv[++i];
    } else if (!strcmp(a, "--tolerance") && i + 1 < argc) {
      char *end;
      tolerance = strtod(argv[++i], &end);
      if (*end || !(tolerance >= 0 && tolerance < 1)) {
        fprintf(stderr, "gflow: --tolerance takes a fraction in [0, 1), not '%s'\n%s", argv[i],
                usage_collect);
        status = GF_USAGE;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "gflow: unknown option '%s'\n%s", a, usage_collect);
      status = GF_USAGE;
    } else {
      dirs[ndirs++] = a;
    }
  }
  if (!status && !ndirs) {
    fprintf(stderr, "gflow: 'collect' needs a folder\n%s", usage_collect);
    status = GF_USAGE;
  }
  table t = {0};
  for (int i = 0; i < ndirs && !status; i++) status = find_runs(dirs[i], &t);
  if (!status && t.n == 0) {
    fprintf(stderr, "gflow: collect: no run.json below the folders given\n");
    status = GF_NOINPUT;
  }
  const char **cols = NULL;
  int ncols = 0;
  if (!status) status = columns(&t, &cols, &ncols);
  if (!status) print_table(&t, cols, ncols, format);
  fflush(stdout);
  if (!status && reference) status = check_references(&t, reference, tolerance);
  free(cols);
  for (int i = 0; i < t.n; i++) {
    free(t.rows[i].dir);
    gf_flat_free(&t.rows[i].params);
  }
  free(t.rows);
  free(dirs);
  return status;
}
