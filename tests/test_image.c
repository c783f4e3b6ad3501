/* test_image.c - an image task's file patterns and pictures (image.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "image.h"

/* A pattern's name for `number`, or "refused: WHY at OFFSET". */
static const char *name_of(const char *pattern, int64_t number, char *buf, size_t size) {
  gf_image_spec spec = {0};
  size_t at = 0;
  const char *why = gf_image_pattern_parse(pattern, &spec, &at);
  if (why) {
    snprintf(buf, size, "refused: %s at %zu", why, at);
  } else if (!gf_image_name(&spec, number, buf, size)) {
    snprintf(buf, size, "too long");
  }
  gf_image_spec_clear(&spec);
  return buf;
}

static void test_patterns(void) {
  char buf[512];
  CHECK_STR(name_of("wave_%05d.png", 64, buf, sizeof buf), "wave_00064.png");
  CHECK_STR(name_of("wave_%05d.png", 1234567, buf, sizeof buf), "wave_1234567.png");
  CHECK_STR(name_of("%d.png", 7, buf, sizeof buf), "7.png");
  CHECK_STR(name_of("w%3d", 7, buf, sizeof buf), "w  7");
  CHECK_STR(name_of("100%%_%d%%.png", 3, buf, sizeof buf), "100%_3%.png");
  CHECK_STR(name_of("step%d", 0, buf, sizeof buf), "step0");
  CHECK_STR(name_of("wave.png", 1, buf, sizeof buf),
            "refused: needs a %d (e.g. %05d) where the step goes, or every picture would "
            "overwrite the last at 0");
  CHECK_STR(name_of("a_%d_%d", 1, buf, sizeof buf),
            "refused: has a second conversion; it takes one %d, the step at 5");
  CHECK_STR(name_of("a_%s", 1, buf, sizeof buf),
            "refused: has a conversion other than %d, %Nd or %0Nd (write %% for a %) at 2");
  CHECK_STR(name_of("a/%d", 1, buf, sizeof buf),
            "refused: must be a plain file name (no '/') at 1");
  CHECK_STR(name_of("a_%030d", 1, buf, sizeof buf),
            "refused: pads the step to more than 20 digits at 2");
  CHECK_STR(name_of("a_%d%", 1, buf, sizeof buf),
            "refused: has a conversion other than %d, %Nd or %0Nd (write %% for a %) at 4");
  char name[8];
  gf_image_spec spec = {0};
  size_t at;
  CHECK(gf_image_pattern_parse("abcdef_%d", &spec, &at) == NULL);
  CHECK(gf_image_name(&spec, 12, name, sizeof name) == NULL); /* does not fit */
  gf_image_spec_clear(&spec);
}

/* The pixel at (y, x) of a picture `width` wide. */
static const uint8_t *pixel(const uint8_t *rgb, int width, int y, int x) {
  return rgb + 3 * ((size_t)y * (size_t)width + (size_t)x);
}

static int same_colour(const uint8_t *a, double v, double lo, double hi) {
  uint8_t want[3];
  gf_colormap_diverging(v, lo, hi, want);
  return memcmp(a, want, 3) == 0;
}

/* A 3-D field of 2 x 3 x 4 cells, value 100 i0 + 10 i1 + i2 - 60: each slice
 * shows the cells of its axis and index, rows along the first remaining axis;
 * the symmetric range is the slice's own largest |value|. */
static void test_slices(void) {
  const int64_t shape[GF_MAX_DIMS] = {2, 3, 4};
  double field[24];
  for (int i = 0; i < 24; i++) field[i] = 100 * (i / 12) + 10 * (i / 4 % 3) + (i % 4) - 60;
  uint8_t rgb[3 * 12];
  for (int axis = 0; axis < 3; axis++) {
    gf_image_spec spec = {.axis = axis, .index = 1};
    int width, height;
    gf_image_size(&spec, shape, &width, &height);
    int rows = axis == 0 ? 3 : 2, cols = axis == 2 ? 3 : 4;
    CHECK_INT(height, rows);
    CHECK_INT(width, cols);
    double lo, hi, m = 0;
    gf_image_draw(&spec, field, GF_F64, shape, rgb, &lo, &hi);
    int bad = 0;
    for (int pass = 0; pass < 2; pass++)
      for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
          int i0 = axis == 0 ? 1 : y,
              i1 = axis == 1   ? 1
                   : axis == 0 ? y
                               : x,
              i2 = axis == 2 ? 1 : x;
          double v = 100 * i0 + 10 * i1 + i2 - 60;
          if (pass == 0 && fabs(v) > m) m = fabs(v);
          if (pass == 1 && !same_colour(pixel(rgb, width, y, x), v, -m, m)) bad++;
        }
    CHECK_INT(bad, 0);
    CHECK_NEAR(lo, -m, 0);
    CHECK_NEAR(hi, m, 0);
  }
}

/* A 2-D f32 field over a fixed range: values beyond it take the end colours,
 * NaN is black; an all-zero picture is drawn over [-1, 1]. */
static void test_plane_and_range(void) {
  const int64_t shape[GF_MAX_DIMS] = {2, 3, 1};
  float field[6] = {-2.0f, -0.5f, 0.0f, 0.25f, 5.0f, NAN};
  uint8_t rgb[18];
  gf_image_spec spec = {.axis = -1, .fixed_range = 1, .lo = -1, .hi = 1};
  double lo, hi;
  gf_image_draw(&spec, field, GF_F32, shape, rgb, &lo, &hi);
  CHECK(lo == -1 && hi == 1);
  const uint8_t blue[3] = {0, 0, 255}, white[3] = {255, 255, 255}, red[3] = {255, 0, 0},
                black[3] = {0, 0, 0};
  CHECK(memcmp(pixel(rgb, 3, 0, 0), blue, 3) == 0);
  CHECK(same_colour(pixel(rgb, 3, 0, 1), -0.5, -1, 1));
  CHECK(memcmp(pixel(rgb, 3, 0, 2), white, 3) == 0);
  CHECK(same_colour(pixel(rgb, 3, 1, 0), 0.25, -1, 1));
  CHECK(memcmp(pixel(rgb, 3, 1, 1), red, 3) == 0);
  CHECK(memcmp(pixel(rgb, 3, 1, 2), black, 3) == 0);
  float zeros[6] = {0};
  spec.fixed_range = 0;
  gf_image_draw(&spec, zeros, GF_F32, shape, rgb, &lo, &hi);
  CHECK(lo == -1 && hi == 1);
}

int main(void) {
  RUN(test_patterns);
  RUN(test_slices);
  RUN(test_plane_and_range);
  return check_summary();
}
