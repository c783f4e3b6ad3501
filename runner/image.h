/* image.h - pictures of fields: a diverging colormap and PNG files (libpng).
 *
 * The colormap runs from blue (lo) through white (the middle) to red (hi),
 * linearly in each channel, so a pixel's colour says the value's sign and
 * size at a glance, as wavefields are usually shown; values outside [lo, hi]
 * take the end colours, NaN is black. PNG files are 8-bit RGB, written
 * without filters (so a reader can check pixels without a PNG library) and
 * atomically (a temporary name, then rename).
 */
#ifndef GF_IMAGE_H
#define GF_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "gflow.h"

/* What an `image` task draws (task_image.c) and what its files are called:
 * a 2-D field, or one slice of a 3-D field, through the diverging colormap
 * over a fixed range or one symmetric about zero (max |value| of the
 * picture); the file name is the pattern's prefix, the step number (padded
 * as `%05d` says) and its suffix. */
typedef struct gf_image_spec {
  char *prefix, *suffix; /* `wave_%05d.png`: "wave_" and ".png" */
  int width, zero_pad;   /* `%05d`: 5 and 1; `%d`: 0 and 0 */
  int axis;              /* -1: the field is 2-D; else the 3-D field's slice across this axis */
  int64_t index;         /* ... at this index */
  int fixed_range;       /* 1: [lo, hi]; 0: symmetric about zero, per picture */
  double lo, hi;
} gf_image_spec;

/* Reads a file pattern into spec's prefix, width and suffix (caller frees
 * them with gf_image_spec_clear). Returns NULL, or why the pattern is refused
 * with *at the offending byte. NULL prefix/suffix out of memory: "out of
 * memory". */
const char *gf_image_pattern_parse(const char *pattern, gf_image_spec *spec, size_t *at);
void gf_image_spec_clear(gf_image_spec *spec);

/* The file name of picture `number`; NULL when it does not fit in `size`. */
char *gf_image_name(const gf_image_spec *spec, int64_t number, char *buf, size_t size);

/* The picture of a field of `shape` (C order, unused trailing axes 1):
 * width and height in pixels. */
void gf_image_size(const gf_image_spec *spec, const int64_t shape[GF_MAX_DIMS], int *width,
                   int *height);

/* Draws the picture of the field `data` (dtype, shape) into `rgb` (width x
 * height x 3, top row first: row y is index y of the first axis drawn) and
 * says the range it used. */
void gf_image_draw(const gf_image_spec *spec, const void *data, gf_dtype dtype,
                   const int64_t shape[GF_MAX_DIMS], uint8_t *rgb, double *lo, double *hi);

/* The colour of `v` on [lo, hi] (lo < hi). */
void gf_colormap_diverging(double v, double lo, double hi, uint8_t rgb[3]);

/* Writes `rgb` (height rows of width pixels, 3 bytes each, top row first) to
 * `path` as a PNG. GF_CANTCREATE or GF_IOERR with a message through `diag`. */
gf_status gf_png_write(const char *path, int width, int height, const uint8_t *rgb, gf_diag *diag);

/* The same, written at `path` itself and made durable (fsync), for a caller
 * that renames it later (the writer's pictures); removed again on failure. */
gf_status gf_png_write_durable(const char *path, int width, int height, const uint8_t *rgb,
                               gf_diag *diag);

/* `gflow view DIR`: pictures of the planes of every output file in DIR (or of
 * `file` alone), written to DIR/view/. */
typedef struct gf_view_options {
  const char *dir;
  const char *file;   /* NULL: every *.dat with a sidecar */
  int64_t first, end; /* planes [first, end) (end -1: all) */
  int64_t every;      /* every k-th valid plane (>= 1) */
  int fixed_range;    /* 1: [lo, hi] given, else symmetric about 0 from the data */
  double lo, hi;
  int sheet; /* 1: also one contact sheet of the chosen planes */
} gf_view_options;

gf_status gf_view(const gf_view_options *options, gf_diag *diag, FILE *report);

#endif
