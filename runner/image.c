/* image.c - the diverging colormap, PNG files, an image task's pictures, and `gflow view`. */
#include "image.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

void gf_colormap_diverging(double v, double lo, double hi, uint8_t rgb[3]) {
  if (isnan(v)) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  double t = (v - lo) / (hi - lo); /* 0 blue, 0.5 white, 1 red */
  if (t < 0) t = 0;
  if (t > 1) t = 1;
  double r, g, b;
  if (t < 0.5) {
    double s = t / 0.5; /* blue (0, 0, 255) -> white */
    r = g = 255 * s;
    b = 255;
  } else {
    double s = (t - 0.5) / 0.5; /* white -> red (255, 0, 0) */
    r = 255;
    g = b = 255 * (1 - s);
  }
  rgb[0] = (uint8_t)lround(r);
  rgb[1] = (uint8_t)lround(g);
  rgb[2] = (uint8_t)lround(b);
}

/* Encodes `rgb` into the file `path` (made durable with `durable`); 1 on
 * success, else 0 with errno or *libpng_failed set. */
static int png_encode(const char *path, int width, int height, const uint8_t *rgb, int durable,
                      int *libpng_failed) {
  *libpng_failed = 0;
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  int ok = png && info;
  if (ok && setjmp(png_jmpbuf(png)) == 0) {
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, 0, PNG_FILTER_NONE);
    png_write_info(png, info);
    for (int y = 0; y < height; y++)
      png_write_row(png, (png_const_bytep)(rgb + (size_t)y * (size_t)width * 3));
    png_write_end(png, NULL);
  } else {
    ok = 0;
  }
  png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
  if (!ok) *libpng_failed = 1;
  ok = fflush(f) == 0 && ok;
  ok = (!durable || fsync(fileno(f)) == 0) && ok;
  ok = fclose(f) == 0 && ok;
  return ok;
}

gf_status gf_png_write_durable(const char *path, int width, int height, const uint8_t *rgb,
                               gf_diag *diag) {
  int libpng_failed;
  if (png_encode(path, width, height, rgb, 1, &libpng_failed)) return GF_OK;
  gf_status st = gf_diag_error(diag, GF_IOERR, "cannot write %s: %s", path,
                               libpng_failed ? "libpng failed" : strerror(errno));
  unlink(path);
  return st;
}

gf_status gf_png_write(const char *path, int width, int height, const uint8_t *rgb, gf_diag *diag) {
  char *temp = gf_asprintf("%s.partial-%ld", path, (long)getpid());
  if (!temp) return gf_oom(diag, "writing a picture");
  int libpng_failed;
  gf_status st = GF_OK;
  if (!png_encode(temp, width, height, rgb, 0, &libpng_failed) || rename(temp, path) != 0) {
    st = gf_diag_error(diag, GF_IOERR, "cannot write %s: %s", path,
                       libpng_failed ? "libpng failed" : strerror(errno));
    unlink(temp);
  }
  free(temp);
  return st;
}

/* ---- an image task's pictures ---- */

const char *gf_image_pattern_parse(const char *pattern, gf_image_spec *spec, size_t *at) {
  const char *conversion = NULL;
  size_t len = strlen(pattern), end = 0;
  for (size_t i = 0; i < len; i++) {
    *at = i;
    if (pattern[i] == '/') return "must be a plain file name (no '/')";
    if (pattern[i] != '%') continue;
    if (pattern[i + 1] == '%') {
      i++;
      continue;
    }
    size_t j = i + 1;
    int zero = pattern[j] == '0', width = 0;
    j += (size_t)zero;
    while (pattern[j] >= '0' && pattern[j] <= '9' && width <= 20)
      width = width * 10 + (pattern[j++] - '0');
    if (width > 20) return "pads the step to more than 20 digits";
    if (pattern[j] != 'd') return "has a conversion other than %d, %Nd or %0Nd (write %% for a %)";
    if (conversion) return "has a second conversion; it takes one %d, the step";
    conversion = pattern + i;
    spec->width = width;
    spec->zero_pad = zero;
    end = j + 1;
    i = j;
  }
  *at = 0;
  if (!conversion)
    return "needs a %d (e.g. %05d) where the step goes, or every picture would overwrite the last";
  if (len - (end - (size_t)(conversion - pattern)) + 20 > 250) return "is too long for a file name";
  /* the literal parts, with %% as % */
  char *parts[2] = {gf_calloc(len + 1, 1), gf_calloc(len + 1, 1)};
  if (!parts[0] || !parts[1]) {
    free(parts[0]);
    free(parts[1]);
    return "out of memory";
  }
  for (int p = 0; p < 2; p++) {
    size_t from = p ? end : 0, to = p ? len : (size_t)(conversion - pattern), k = 0;
    for (size_t i = from; i < to; i++) {
      parts[p][k++] = pattern[i];
      if (pattern[i] == '%') i++;
    }
  }
  spec->prefix = parts[0];
  spec->suffix = parts[1];
  return NULL;
}

void gf_image_spec_clear(gf_image_spec *spec) {
  free(spec->prefix);
  free(spec->suffix);
  spec->prefix = spec->suffix = NULL;
}

char *gf_image_name(const gf_image_spec *spec, int64_t number, char *buf, size_t size) {
  int n = snprintf(buf, size, spec->zero_pad ? "%s%0*" PRId64 "%s" : "%s%*" PRId64 "%s",
                   spec->prefix, spec->width, number, spec->suffix);
  return n >= 0 && (size_t)n < size ? buf : NULL;
}

/* The two axes a picture shows: rows along `*row`, columns along `*col`. */
static void image_axes(const gf_image_spec *spec, int *row, int *col) {
  *row = spec->axis == 0 ? 1 : 0;
  *col = spec->axis == 2 ? 1 : spec->axis < 0 ? 1 : 2;
}

void gf_image_size(const gf_image_spec *spec, const int64_t shape[GF_MAX_DIMS], int *width,
                   int *height) {
  int row, col;
  image_axes(spec, &row, &col);
  *height = (int)shape[row];
  *width = (int)shape[col];
}

void gf_image_draw(const gf_image_spec *spec, const void *data, gf_dtype dtype,
                   const int64_t shape[GF_MAX_DIMS], uint8_t *rgb, double *lo, double *hi) {
  int row, col, width, height;
  image_axes(spec, &row, &col);
  gf_image_size(spec, shape, &width, &height);
  int64_t stride[GF_MAX_DIMS] = {shape[1] * shape[2], shape[2], 1};
  int64_t base = spec->axis >= 0 ? spec->index * stride[spec->axis] : 0;
#define GF_IMAGE_AT(y, x) (base + (int64_t)(y)*stride[row] + (int64_t)(x)*stride[col])
#define GF_IMAGE_VALUE(i) \
  (dtype == GF_F64 ? ((const double *)data)[i] : (double)((const float *)data)[i])
  *lo = spec->lo;
  *hi = spec->hi;
  if (!spec->fixed_range) {
    double m = 0;
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++) {
        double v = GF_IMAGE_VALUE(GF_IMAGE_AT(y, x));
        if (isfinite(v) && fabs(v) > m) m = fabs(v);
      }
    if (m == 0) m = 1;
    *lo = -m;
    *hi = m;
  }
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      gf_colormap_diverging(GF_IMAGE_VALUE(GF_IMAGE_AT(y, x)), *lo, *hi,
                            rgb + 3 * ((size_t)y * (size_t)width + (size_t)x));
#undef GF_IMAGE_AT
#undef GF_IMAGE_VALUE
}

/* ---- reading an output file's sidecar ---- */

typedef struct layout {
  int f64;                    /* else float32 */
  int64_t planes, rows, cols; /* shape [planes, rows, cols] */
  int64_t (*valid)[2];        /* ranges of valid planes, inclusive */
  int nvalid;
} layout;

static const char *scalar_of(yaml_document_t *doc, yaml_node_t *n) {
  (void)doc;
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *value_of(yaml_document_t *doc, yaml_node_t *map, const char *key) {
  if (!map || map->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    const char *k = scalar_of(doc, yaml_document_get_node(doc, p->key));
    if (k && strcmp(k, key) == 0) return yaml_document_get_node(doc, p->value);
  }
  return NULL;
}

static int64_t int_at(yaml_document_t *doc, yaml_node_t *seq, int i, int *ok) {
  if (!seq || seq->type != YAML_SEQUENCE_NODE ||
      i >= (int)(seq->data.sequence.items.top - seq->data.sequence.items.start)) {
    *ok = 0;
    return 0;
  }
  const char *s = scalar_of(doc, yaml_document_get_node(doc, seq->data.sequence.items.start[i]));
  char *end;
  long long v = s ? strtoll(s, &end, 10) : 0;
  if (!s || *end) *ok = 0;
  return v;
}

/* The layout a sidecar (NAME.json) describes; GF_INVALID naming what is wrong. */
static gf_status read_sidecar(const char *path, layout *out, gf_diag *diag) {
  FILE *f = fopen(path, "rb");
  if (!f) return gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", path, strerror(errno));
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, f);
  int loaded = yaml_parser_load(&parser, &doc);
  yaml_parser_delete(&parser);
  fclose(f);
  if (!loaded)
    return gf_diag_error(diag, GF_INVALID, "%s: not a gflow sidecar (unreadable JSON)", path);
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  const char *dtype = scalar_of(&doc, value_of(&doc, root, "dtype"));
  yaml_node_t *shape = value_of(&doc, root, "shape"), *valid = value_of(&doc, root, "valid_planes");
  int ok = dtype && (strcmp(dtype, "float32") == 0 || strcmp(dtype, "float64") == 0) && shape &&
           shape->type == YAML_SEQUENCE_NODE && valid && valid->type == YAML_SEQUENCE_NODE;
  int dims = ok ? (int)(shape->data.sequence.items.top - shape->data.sequence.items.start) : 0;
  gf_status st = GF_OK;
  if (!ok) {
    st = gf_diag_error(diag, GF_INVALID,
                       "%s: not a gflow sidecar (no dtype, shape or valid_planes)", path);
  } else if (dims != 3) {
    st = gf_diag_error(diag, GF_INVALID,
                       "%s: view shows planes of 2-D fields; this file holds %d-D fields", path,
                       dims - 1);
  } else {
    out->f64 = strcmp(dtype, "float64") == 0;
    out->planes = int_at(&doc, shape, 0, &ok);
    out->rows = int_at(&doc, shape, 1, &ok);
    out->cols = int_at(&doc, shape, 2, &ok);
    out->nvalid = (int)(valid->data.sequence.items.top - valid->data.sequence.items.start);
    out->valid = gf_calloc((size_t)(out->nvalid ? out->nvalid : 1), sizeof *out->valid);
    if (!out->valid) st = gf_oom(diag, "reading a sidecar");
    for (int i = 0; st == GF_OK && i < out->nvalid; i++) {
      yaml_node_t *pair = yaml_document_get_node(&doc, valid->data.sequence.items.start[i]);
      out->valid[i][0] = int_at(&doc, pair, 0, &ok);
      out->valid[i][1] = int_at(&doc, pair, 1, &ok);
    }
    if (st == GF_OK && (!ok || out->rows < 1 || out->cols < 1 || out->rows * out->cols > (1 << 28)))
      st = gf_diag_error(diag, GF_INVALID, "%s: a shape or plane range that is not sensible", path);
  }
  yaml_document_delete(&doc);
  return st;
}

/* ---- gflow view ---- */

static int plane_valid(const layout *l, int64_t p) {
  for (int i = 0; i < l->nvalid; i++)
    if (p >= l->valid[i][0] && p <= l->valid[i][1]) return 1;
  return 0;
}

static int read_plane(FILE *f, const layout *l, int64_t p, double *out) {
  size_t cells = (size_t)(l->rows * l->cols), size = l->f64 ? 8 : 4;
  if (fseeko(f, (off_t)p * (off_t)(cells * size), SEEK_SET) != 0) return 0;
  for (size_t i = 0; i < cells; i++) {
    if (l->f64) {
      double v;
      if (fread(&v, 8, 1, f) != 1) return 0;
      out[i] = v;
    } else {
      float v;
      if (fread(&v, 4, 1, f) != 1) return 0;
      out[i] = v;
    }
  }
  return 1;
}

static gf_status view_file(const gf_view_options *o, const char *name, gf_diag *diag,
                           FILE *report) {
  char *data_path = gf_asprintf("%s/%s", o->dir, name),
       *side_path = gf_asprintf("%s/%s.json", o->dir, name);
  char *view_dir = gf_asprintf("%s/view", o->dir);
  layout l = {0};
  gf_status st = data_path && side_path && view_dir ? GF_OK : gf_oom(diag, "viewing outputs");
  if (st == GF_OK) st = read_sidecar(side_path, &l, diag);
  FILE *f = NULL;
  if (st == GF_OK && !(f = fopen(data_path, "rb")))
    st = gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", data_path, strerror(errno));
  if (st == GF_OK && mkdir(view_dir, 0777) != 0 && errno != EEXIST)
    st = gf_diag_error(diag, GF_CANTCREATE, "cannot create %s: %s", view_dir, strerror(errno));
  /* the planes to show */
  int64_t end = o->end < 0 || o->end > l.planes ? l.planes : o->end, count = 0;
  int64_t *chosen =
      st == GF_OK ? gf_calloc((size_t)(l.planes ? l.planes : 1), sizeof *chosen) : NULL;
  if (st == GF_OK && !chosen) st = gf_oom(diag, "viewing outputs");
  for (int64_t p = o->first, k = 0; st == GF_OK && p < end; p++)
    if (plane_valid(&l, p) && k++ % o->every == 0) chosen[count++] = p;
  size_t cells = (size_t)(l.rows * l.cols);
  double *plane = st == GF_OK ? gf_malloc(cells * sizeof *plane) : NULL;
  uint8_t *rgb = st == GF_OK ? gf_malloc(cells * 3) : NULL;
  if (st == GF_OK && (!plane || !rgb)) st = gf_oom(diag, "viewing outputs");
  /* the range: given, or symmetric about zero over the chosen planes */
  double lo = o->lo, hi = o->hi;
  if (st == GF_OK && !o->fixed_range) {
    double m = 0;
    for (int64_t i = 0; i < count && st == GF_OK; i++) {
      if (!read_plane(f, &l, chosen[i], plane))
        st = gf_diag_error(diag, GF_IOERR, "%s: plane %" PRId64 " cannot be read", data_path,
                           chosen[i]);
      for (size_t c = 0; st == GF_OK && c < cells; c++)
        if (isfinite(plane[c]) && fabs(plane[c]) > m) m = fabs(plane[c]);
    }
    if (m == 0) m = 1;
    lo = -m;
    hi = m;
  }
  /* a contact sheet: up to 8 columns of frames with a 2-pixel white gap */
  int cols = count < 8 ? (int)count : 8, rows = cols ? (int)((count + cols - 1) / cols) : 0;
  size_t sw = (size_t)cols * (size_t)(l.cols + 2), sh = (size_t)rows * (size_t)(l.rows + 2);
  uint8_t *sheet = st == GF_OK && o->sheet && count ? gf_malloc(sw * sh * 3) : NULL;
  if (st == GF_OK && o->sheet && count && !sheet) st = gf_oom(diag, "making a contact sheet");
  if (sheet) memset(sheet, 255, sw * sh * 3);
  for (int64_t i = 0; i < count && st == GF_OK; i++) {
    if (!read_plane(f, &l, chosen[i], plane)) {
      st = gf_diag_error(diag, GF_IOERR, "%s: plane %" PRId64 " cannot be read", data_path,
                         chosen[i]);
      break;
    }
    for (size_t c = 0; c < cells; c++) gf_colormap_diverging(plane[c], lo, hi, rgb + 3 * c);
    char *png = gf_asprintf("%s/%s-%06" PRId64 ".png", view_dir, name, chosen[i]);
    st = png ? gf_png_write(png, (int)l.cols, (int)l.rows, rgb, diag)
             : gf_oom(diag, "viewing outputs");
    free(png);
    if (sheet)
      for (int64_t y = 0; y < l.rows; y++)
        memcpy(sheet + (((size_t)(i / cols) * (size_t)(l.rows + 2) + 1 + (size_t)y) * sw +
                        (size_t)(i % cols) * (size_t)(l.cols + 2) + 1) *
                           3,
               rgb + (size_t)y * (size_t)l.cols * 3, (size_t)l.cols * 3);
  }
  if (st == GF_OK && sheet) {
    char *png = gf_asprintf("%s/%s-sheet.png", view_dir, name);
    st = png ? gf_png_write(png, (int)sw, (int)sh, sheet, diag) : gf_oom(diag, "viewing outputs");
    free(png);
  }
  if (st == GF_OK && report)
    fprintf(report, "%s: %" PRId64 " planes as pictures in %s/ (range %g to %g)%s\n", name, count,
            view_dir, lo, hi, sheet ? ", with a contact sheet" : "");
  if (f) fclose(f);
  free(sheet);
  free(rgb);
  free(plane);
  free(chosen);
  free(l.valid);
  free(data_path);
  free(side_path);
  free(view_dir);
  return st;
}

gf_status gf_view(const gf_view_options *o, gf_diag *diag, FILE *report) {
  if (o->file) return view_file(o, o->file, diag, report);
  DIR *d = opendir(o->dir);
  if (!d) return gf_diag_error(diag, GF_NOINPUT, "cannot read %s: %s", o->dir, strerror(errno));
  gf_status st = GF_OK;
  int found = 0;
  struct dirent *e;
  while (st == GF_OK && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".dat") != 0 || e->d_name[0] == '.') continue;
    found++;
    st = view_file(o, e->d_name, diag, report);
  }
  closedir(d);
  if (st == GF_OK && !found)
    st = gf_diag_error(diag, GF_NOINPUT, "%s holds no output files (NAME.dat with NAME.dat.json)",
                       o->dir);
  return st;
}
