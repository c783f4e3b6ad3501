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

/* The colour of `v` on [lo, hi] (lo < hi). */
void gf_colormap_diverging(double v, double lo, double hi, uint8_t rgb[3]);

/* Writes `rgb` (height rows of width pixels, 3 bytes each, top row first) to
 * `path` as a PNG. GF_CANTCREATE or GF_IOERR with a message through `diag`. */
gf_status gf_png_write(const char *path, int width, int height, const uint8_t *rgb, gf_diag *diag);

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
