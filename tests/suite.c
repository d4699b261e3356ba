/*
 * suite.c - see suite.h: h_tcase and h_run_suite, which each test
 * program's main used to spell out (suite_create, tcase_create,
 * srunner_create, srunner_run_all, srunner_ntests_failed, srunner_free).
 */
#include "suite.h"

#include <check.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static Suite *the_suite;

/* The processors the tests may run on: those of the process's affinity
 * mask (taskset, a CI runner's cpuset), at most what a cgroup's CPU
 * quota grants (cpu.max), not every processor online: with one of two
 * allowed (taskset -c 0) and two spinners on it, the load over the two
 * online said half the slowdown each run had. */
static long usable_cpus(void)
{
	cpu_set_t set;
	long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
								: sysconf(_SC_NPROCESSORS_ONLN);
	FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
	long long quota, period;
	if (f && fscanf(f, "%lld %lld", &quota, &period) == 2 && quota > 0 && period > 0 &&
	    (quota + period - 1) / period < cpus)
		cpus = (long)((quota + period - 1) / period);
	if (f)
		fclose(f);
	return cpus;
}

/* A run may take $H_TIMEOUT seconds (harness.c; 20 by default, which the
 * tests' own limits are set for): raised for a loaded machine, it
 * stretches them alike, or check would kill a test whose runs the
 * harness still waits for.  A machine busier than its processors (the
 * one-minute load average over the processors it may use) stretches them
 * too, by that ratio: a wall-clock limit set on an idle machine says
 * nothing about memcheck when other jobs take the processors.  Read once
 * (the first call, before check forks the tests), so that a test's own
 * limit and check's limit for it grow alike. */
static double load_factor(void)
{
	static double factor;
	if (factor == 0) {
		double load[1];
		long cpus = usable_cpus();
		factor = 1;
		if (cpus > 0 && getloadavg(load, 1) == 1 && load[0] / cpus > 1)
			factor = load[0] / cpus;
	}
	return factor;
}

double h_load_stretch(void)
{
	return load_factor();
}

double h_stretch(double timeout)
{
	const char *t = getenv("H_TIMEOUT");
	double run = t ? atof(t) : 0;
	double by = run > 20 ? run / 20 : 1;
	double load = load_factor();
	return timeout * (load > by ? load : by);
}

TCase *h_tcase(const char *name, double timeout)
{
	if (!the_suite)
		the_suite = suite_create(name);
	TCase *tc = tcase_create(name);
	/* 0: check's default (CK_DEFAULT_TIMEOUT, else 4 s), stretched
	 * alike where there is a reason to: unit_stacks' cfi_fast_run_is_run
	 * (280,000 addresses through both rule readers) ran past 4 s under
	 * ASan with a load of 9 on 2 processors. */
	const char *ck = getenv("CK_DEFAULT_TIMEOUT");
	double base = timeout > 0 ? timeout : ck && atof(ck) > 0 ? atof(ck) : 4;
	if (timeout > 0 || h_stretch(base) > base)
		tcase_set_timeout(tc, h_stretch(base));
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
