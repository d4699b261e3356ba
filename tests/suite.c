/*
 * suite.c - see suite.h: h_tcase and h_run_suite, which each test
 * program's main used to spell out (suite_create, tcase_create,
 * srunner_create, srunner_run_all, srunner_ntests_failed, srunner_free).
 */
#include "suite.h"

#include <check.h>
#include <stddef.h>
#include <stdlib.h>

static Suite *the_suite;

/* A run may take $H_TIMEOUT seconds (harness.c; 20 by default, which the
 * tests' own limits are set for): raised for a loaded machine, it
 * stretches them alike, or check would kill a test whose runs the
 * harness still waits for. */
double h_stretch(double timeout)
{
	const char *t = getenv("H_TIMEOUT");
	double run = t ? atof(t) : 0;
	return run > 20 ? timeout * run / 20 : timeout;
}

TCase *h_tcase(const char *name, double timeout)
{
	if (!the_suite)
		the_suite = suite_create(name);
	TCase *tc = tcase_create(name);
	if (timeout > 0)
		tcase_set_timeout(tc, h_stretch(timeout));
	suite_add_tcase(the_suite, tc);
	return tc;
}

int h_run_suite(Suite *s)
{
	if (!s)
		s = the_suite;
	if (h_suite_begin)
		h_suite_begin();
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0;
}
