/*
 * suite.h - the one shape of a test program's main, for the unit tests
 * (tests/unit_*.c) and the whole-program tests (through harness.h):
 *
 *   TCase *tc = h_tcase("name", 30);
 *   tcase_add_test(tc, ...);
 *   return h_run_suite(NULL);
 *
 * suite.c has no other dependency than check, so that a unit test, which
 * links only the library objects it tests, can link it too.
 */
#ifndef MEMCHECK_TESTS_SUITE_H
#define MEMCHECK_TESTS_SUITE_H

struct TCase;
struct Suite;

/* A test case of the test program's suite named name, whose tests may
 * take timeout seconds each (check's default when 0: CK_DEFAULT_TIMEOUT
 * or 4 s); either stretched by H_TIMEOUT/20 when H_TIMEOUT, the
 * harness's limit for one run, is over its default 20, or by the load
 * average over the processors the tests may use when that is larger and
 * over 1.  Add tests to the TCase returned.  The first call names the
 * suite too. */
struct TCase *h_tcase(const char *name, double timeout);
/* A test's own time limit of secs, stretched alike (by H_TIMEOUT/20 or
 * the load over the processors, whichever is larger, when over 1): for
 * limits a test measures itself. */
double h_stretch(double secs);
/* The load over the processors the tests may use, when over 1 (else 1):
 * what h_stretch stretches by without $H_TIMEOUT (a run's limit, h_run). */
double h_load_stretch(void);
/* Run s (NULL: the one h_tcase made) in CK_NORMAL mode; returns the
 * process exit status. */
int h_run_suite(struct Suite *s);
/* Called by h_run_suite before the tests run when a program defines it
 * (harness.c: the temporary directory, made by the process that will
 * remove it). */
void h_suite_begin(void) __attribute__((weak));

#endif /* MEMCHECK_TESTS_SUITE_H */
