/* check.h - the unit-test harness: one file per module, a function per case.
 *
 *   static void test_parse_number(void) { CHECK(x == 1); CHECK_STR(a, "b"); }
 *   int main(void) { RUN(test_parse_number); return check_summary(); }
 *
 * A failed check prints file:line and the values, and the case goes on; the
 * summary line is `N passed, N failed` and the exit status is non-zero when a
 * case failed.
 */
#ifndef GF_CHECK_H
#define GF_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_cases_passed, check_cases_failed, check_case_failed;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      check_case_failed = 1;                                                   \
    }                                                                          \
  } while (0)

#define CHECK_INT(a, b)                                                                       \
  do {                                                                                        \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                           \
    if (check_a_ != check_b_) {                                                               \
      fprintf(stderr, "%s:%d: CHECK_INT failed: %s == %lld, expected %s == %lld\n", __FILE__, \
              __LINE__, #a, check_a_, #b, check_b_);                                          \
      check_case_failed = 1;                                                                  \
    }                                                                                         \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                             \
  do {                                                                                    \
    double check_a_ = (double)(a), check_b_ = (double)(b);                                \
    if (!(fabs(check_a_ - check_b_) <= (tol))) {                                          \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s == %.17g, expected %.17g (tol %g)\n", \
              __FILE__, __LINE__, #a, check_a_, check_b_, (double)(tol));                 \
      check_case_failed = 1;                                                              \
    }                                                                                     \
  } while (0)

#define CHECK_STR(a, b)                                                                       \
  do {                                                                                        \
    const char *check_a_ = (a), *check_b_ = (b);                                              \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                          \
      fprintf(stderr, "%s:%d: CHECK_STR failed:\n  got:      %s\n  expected: %s\n", __FILE__, \
              __LINE__, check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)");      \
      check_case_failed = 1;                                                                  \
    }                                                                                         \
  } while (0)

#define RUN(fn)                          \
  do {                                   \
    check_case_failed = 0;               \
    fn();                                \
    if (check_case_failed) {             \
      check_cases_failed++;              \
      fprintf(stderr, "FAIL %s\n", #fn); \
    } else {                             \
      check_cases_passed++;              \
    }                                    \
  } while (0)

static inline int check_summary(void) {
  printf("%d passed, %d failed\n", check_cases_passed, check_cases_failed);
  return check_cases_failed ? 1 : 0;
}

#endif
