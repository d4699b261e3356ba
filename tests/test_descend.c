/*
 * test_descend.c - a process whose region failed fails its measured
 * ancestors (lib/descend.c, MEMCHECK_ANCESTORS), so that a leak in a
 * child whose status its parent ignores still fails the test.
 *
 * On main before it (b7cc04a) a Criterion suite with a leaking test
 * (prog/plain_descend_criterion: Criterion's runner forgets a worker's
 * status once the test reported its end) and a program that forks a
 * leaking child and ignores it (prog/plain_descend) exited 0 under the
 * preload, and so passed under ctest, meson and automake given the
 * preload, and under ctest -T memcheck.  Each row runs with its own
 * XDG_RUNTIME_DIR, where the records go, and checks that none is left.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* The row's directory for the records, made fresh for each run. */
static char *records_dir;

/* The row's environment and its records' directory; for "exec", the
 * program the child runs by its absolute path. */
H_SETUP(records_here)
{
	static unsigned n;
	char tag[32];
	snprintf(tag, sizeof tag, "records%u", n++);
	free(records_dir);
	records_dir = strdup(h_tmppath(tag));
	ck_assert_msg(mkdir(records_dir, 0700) == 0, "mkdir %s", records_dir);
	size_t k = 0;
	while (c->run.env && c->run.env[k])
		k++;
	const char **env = calloc(k + 2, sizeof *env);
	for (size_t i = 0; i < k; i++)
		env[i] = c->run.env[i];
	env[k] = h_env("XDG_RUNTIME_DIR=%s", records_dir);
	run->env = env;
	if (c->run.args && !strcmp(c->run.args[0], "exec")) {
		const char **args = calloc(3, sizeof *args);
		args[0] = "exec";
		args[1] = h_prog(c->run.args[1]);
		run->args = args;
	}
	return true;
}

/* No record is left behind, whoever wrote it. */
H_CHECK(none_left)
{
	DIR *d = opendir(records_dir);
	ck_assert_msg(d, "%s: %s is gone", x->label, records_dir);
	struct dirent *e;
	while ((e = readdir(d)))
		ck_assert_msg(e->d_name[0] == '.', "%s: %s/%s left behind", x->label, records_dir,
			      e->d_name);
	closedir(d);
}

/* Which records failed: n of them (a parent, Criterion's runner, fails
 * by its status only: its own record passes). */
static void failed_records(struct h_res *x, size_t n)
{
	size_t failed = 0;
	for (size_t k = 0; k < x->rep.n; k++) {
		const char *v = h_str(x->rep.rec[k], "verdict");
		if (v && !strcmp(v, "fail"))
			failed++;
	}
	ck_assert_msg(failed == n, "%s: %zu records failed, expected %zu", x->label, failed, n);
	none_left(x, NULL, NULL);
}

H_CHECK(one_failed)
{
	failed_records(x, 1);
}

H_CHECK(none_failed)
{
	failed_records(x, 0);
}

#define DESCENDANT "exit status 23 instead of 0: descendant process "
#define FLAGS (H_PRELOAD | H_EXITCODE)

static const struct h_case cases[] = {
	{ "Criterion's runner ignores the leaking worker's status: the suite fails",
	  .run = { .prog = "plain_descend_criterion", .flags = FLAGS, .text = "fail" },
	  .exit = 23, .setup = records_here, .check = one_failed,
	  .err = H_LIST(DESCENDANT, "failed 1 region (MEMCHECK_ANCESTORS=0") },
	{ "MEMCHECK_ANCESTORS=0: the runner's status is its own",
	  .run = { .prog = "plain_descend_criterion", .flags = FLAGS, .text = "fail",
		   .env = H_LIST("MEMCHECK_ANCESTORS=0") },
	  .exit = 0, .setup = records_here, .check = one_failed, .no_err = H_LIST(DESCENDANT) },
	{ "a forked child leaks, its status ignored: the parent fails",
	  .run = { .prog = "plain_descend", .args = H_LIST("leak"), .flags = FLAGS, .text = "fail" },
	  .exit = 23, .setup = records_here, .check = one_failed,
	  .err = H_LIST(DESCENDANT, "plain_descend) failed 1 region") },
	{ "a forked child frees what it allocates: nothing changes",
	  .run = { .prog = "plain_descend", .args = H_LIST("clean"), .flags = FLAGS, .text = "fail" },
	  .exit = 0, .setup = records_here, .check = none_failed, .no_err = H_LIST(DESCENDANT) },
	{ "a grandchild leaks, two generations ignore it: the parent fails",
	  .run = { .prog = "plain_descend", .args = H_LIST("deep"), .flags = FLAGS, .text = "fail" },
	  .exit = 23, .setup = records_here, .check = one_failed, .err = H_LIST(DESCENDANT) },
	{ "an exec'd child leaks: the parent fails, naming it",
	  .run = { .prog = "plain_descend", .args = H_LIST("exec", "plain_leak_direct"),
		   .flags = FLAGS, .text = "fail" },
	  .exit = 23, .setup = records_here, .check = one_failed,
	  .err = H_LIST(DESCENDANT, "plain_leak_direct) failed 1 region") },
	{ "a parent the programs rule leaves out gets no record",
	  .run = { .prog = "plain_descend", .args = H_LIST("exec", "plain_leak_direct"),
		   .flags = FLAGS, .text = "fail", .env = H_LIST("MEMCHECK_PROGRAMS=plain_leak_direct") },
	  .exit = 0, .setup = records_here, .check = one_failed, .no_err = H_LIST(DESCENDANT) },
	{ "MEMCHECK_EXITCODE=0: no status changes, no record written",
	  .run = { .prog = "plain_descend", .args = H_LIST("leak"), .flags = H_PRELOAD, .text = "fail",
		   .env = H_LIST("MEMCHECK_EXITCODE=0") },
	  .exit = 0, .setup = records_here, .check = one_failed, .no_err = H_LIST(DESCENDANT) },
};

int main(void)
{
	TCase *tc = h_tcase("descend", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
