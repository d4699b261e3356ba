/*
 * test_oom.c - `memcheck oom` (tools/oom.c): the sweep's classification
 * of programs built to handle, leak, crash and fail on OOM
 * (tests/prog/plain_oom.c), forked children swept as runs of their own,
 * the exit status for each outcome, the JSON report, --max and --timeout
 * notes, and the speed of a sweep over 1,000 allocations.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static const char *cli(void)
{
	return h_env("%s/memcheck", h_build());
}

#define OOM(r, ...)                                                            \
	do {                                                                   \
		const char *argv_[] = { cli(), "oom", __VA_ARGS__, NULL };     \
		ck_assert(h_run((r), argv_, NULL, 0, NULL) == 0);              \
	} while (0)

#define EXPECT_EXIT(r, code)                                                   \
	ck_assert_msg((r)->exit_code == (code), "%s, expected exit %d\nstdout:\n%s\nstderr:\n%s", \
		      h_status(r), (code), (r)->out, (r)->err)

#define EXPECT_HAS(text, needle)                                               \
	ck_assert_msg(strstr((text), (needle)) != NULL, "\"%s\" not in:\n%s", (needle), (text))

START_TEST(handled_everywhere_exits_0)
{
	struct h_run r;
	const char *report = h_tmppath("handle.json");
	OOM(&r, "--report", report, "--", h_prog("plain_oom"), "handle");
	EXPECT_EXIT(&r, 0);
	EXPECT_HAS(r.out, "6 runs");
	EXPECT_HAS(r.out, "6 handled");
	EXPECT_HAS(r.out, "runs/s");
	h_run_free(&r);
	char *text = h_read_file(report, NULL);
	ck_assert_ptr_nonnull(text);
	char err[256];
	struct h_json *j = h_json_parse(text, strlen(text), err, sizeof err);
	ck_assert_msg(j != NULL, "report is not JSON: %s", err);
	ck_assert_uint_eq(h_u64(j, "runs"), 6);
	ck_assert_uint_eq(h_u64(h_json_get(j, "totals"), "handled"), 6);
	ck_assert_uint_eq(h_json_get(j, "results")->n, 6);
	ck_assert_uint_eq(h_json_get(j, "sites")->n, 2);
	h_json_free(j);
	free(text);
}
END_TEST

/* --persistent: from the Nth call on, every one fails; leak's third
 * call still leaks, and only it. */
START_TEST(persistent_sweep)
{
	struct h_run r;
	OOM(&r, "--persistent", "--", h_prog("plain_oom"), "leak");
	EXPECT_EXIT(&r, 1);
	EXPECT_HAS(r.out, "2 handled (0 expected), 1 leaked");
	EXPECT_HAS(r.out, "MEMCHECK_FAIL_PERSISTENT=1");
	h_run_free(&r);
	OOM(&r, "--persistent", "--", h_prog("plain_oom"), "handle");
	EXPECT_EXIT(&r, 0);
	h_run_free(&r);
}
END_TEST

START_TEST(leak_on_error_path_exits_1)
{
	struct h_run r;
	const char *report = h_tmppath("leak.json");
	OOM(&r, "--report", report, "--", h_prog("plain_oom"), "leak");
	EXPECT_EXIT(&r, 1);
	/* the failed call (the third malloc) and where the leaked block came from */
	EXPECT_HAS(r.out, "tests/prog/plain_oom.c:52: leaked in leak, when allocation 3");
	EXPECT_HAS(r.out, "leaked 10 bytes, allocated at tests/prog/plain_oom.c:44 (leak)");
	EXPECT_HAS(r.out, "2 handled (0 expected), 1 leaked, 0 crashed");
	h_run_free(&r);
	char *text = h_read_file(report, NULL);
	char err[256];
	struct h_json *j = h_json_parse(text, strlen(text), err, sizeof err);
	ck_assert_msg(j != NULL, "report is not JSON: %s", err);
	const struct h_json *res = h_json_get(j, "results");
	int leaks = 0;
	for (size_t i = 0; i < res->n; i++) {
		const struct h_json *x = h_json_at(res, i);
		if (strcmp(h_str(x, "outcome"), "leaked"))
			continue;
		leaks++;
		ck_assert_str_eq(h_str(x, "site"), "tests/prog/plain_oom.c:52");
		ck_assert_uint_eq(h_u64(h_json_get(x, "leak"), "line"), 44);
		ck_assert_uint_eq(h_u64(x, "index"), 3);
	}
	ck_assert_int_eq(leaks, 1);
	h_json_free(j);
	free(text);
}
END_TEST

START_TEST(crash_exits_1_with_the_failed_call)
{
	struct h_run r;
	OOM(&r, "--", h_prog("plain_oom"), "crash");
	EXPECT_EXIT(&r, 1);
	EXPECT_HAS(r.out, "tests/prog/plain_oom.c:68: crashed in crash, when allocation 2");
	EXPECT_HAS(r.out, "killed by SIGSEGV");
	h_run_free(&r);
}
END_TEST

START_TEST(test_failure_exits_1)
{
	struct h_run r;
	OOM(&r, "--", h_prog("plain_oom"), "fail");
	EXPECT_EXIT(&r, 1);
	EXPECT_HAS(r.out, "0 handled (0 expected), 0 leaked, 0 crashed, 0 timed out, 2 test failed");
	EXPECT_HAS(r.out, "memcheck_expect_oom()");
	h_run_free(&r);
}
END_TEST

/* A process that ends with _exit leaves no record: a test failure, not
 * a crash, unless its output says it got a signal. */
START_TEST(exit_without_report_is_a_test_failure)
{
	struct h_run r;
	OOM(&r, "--", h_prog("plain_oom"), "quit");
	EXPECT_EXIT(&r, 1);
	EXPECT_HAS(r.out, "0 leaked, 0 crashed, 0 timed out, 1 test failed");
	h_run_free(&r);
}
END_TEST

/* Each forked child is a process of its own, with region ids of its own. */
START_TEST(forked_children_are_runs_of_their_own)
{
	struct h_run r;
	OOM(&r, "--", h_prog("plain_oom"), "fork");
	EXPECT_EXIT(&r, 1);
	EXPECT_HAS(r.out, "when allocation 3 of region \"process\" (p.2/1) failed");
	EXPECT_HAS(r.out, "11 runs");
	EXPECT_HAS(r.out, "10 handled (0 expected), 1 leaked");
	h_run_free(&r);
}
END_TEST

START_TEST(usage_exits_2)
{
	struct h_run r;
	OOM(&r, "--max", "0", "--", h_prog("plain_oom"), "handle");
	EXPECT_EXIT(&r, 2);
	h_run_free(&r);
	OOM(&r, "--bogus", "--", h_prog("plain_oom"), "handle");
	EXPECT_EXIT(&r, 2);
	h_run_free(&r);
	/* a space before a number is refused as one after it is */
	OOM(&r, "--max", " 2", "--", h_prog("plain_oom"), "handle");
	EXPECT_EXIT(&r, 2);
	h_run_free(&r);
	const char *argv[] = { cli(), "oom", NULL };
	ck_assert(h_run(&r, argv, NULL, 0, NULL) == 0);
	EXPECT_EXIT(&r, 2);
	EXPECT_HAS(r.err, "no command");
	h_run_free(&r);
}
END_TEST

START_TEST(command_failing_on_its_own_exits_3)
{
	struct h_run r;
	OOM(&r, "--", h_prog("plain_oom"), "exit3");
	EXPECT_EXIT(&r, 3);
	EXPECT_HAS(r.err, "without any failure injected");
	h_run_free(&r);
}
END_TEST

/* One rule with memcheck run (issue 14, item 13): a command that cannot
 * be started is a usage error, 2, not one of the command's own, 3. */
START_TEST(command_not_found_exits_2)
{
	struct h_run r;
	OOM(&r, "--", "/nonexistent/program");
	EXPECT_EXIT(&r, 2);
	EXPECT_HAS(r.err, "cannot run /nonexistent/program: No such file");
	h_run_free(&r);
}
END_TEST

/* Issue 14, item 12: a run memcheck killed for taking too long was
 * called "crashed".  plain_oom retry loops for ever when its second
 * allocation fails for good. */
START_TEST(killed_for_time_is_timed_out)
{
	struct h_run r;
	OOM(&r, "--persistent", "--run-timeout", "1", "--", h_prog("plain_oom"), "retry");
	EXPECT_EXIT(&r, 1);
	EXPECT_HAS(r.out, "tests/prog/plain_oom.c:142: timed out in main, when allocation 2");
	EXPECT_HAS(r.out, "killed (--run-timeout)");
	EXPECT_HAS(r.out, "0 crashed, 1 timed out, 0 test failed");
	h_run_free(&r);
}
END_TEST

START_TEST(max_says_what_was_not_reached)
{
	struct h_run r;
	OOM(&r, "--max", "2", "--", h_prog("plain_oom"), "handle");
	EXPECT_EXIT(&r, 0);
	EXPECT_HAS(r.out, "2 runs");
	EXPECT_HAS(r.out, "not reached: region \"process\" (p/1): allocations 3 to 6 of 6 (--max)");
	h_run_free(&r);
}
END_TEST

/* 1,000 allocations in a program that runs ~10 ms bare: well under a
 * minute on 2 cores (the figure); here it must take < 30 s
 * (h_stretch: longer on a machine loaded enough to need H_TIMEOUT). */
START_TEST(a_thousand_allocations_in_well_under_a_minute)
{
	struct h_run r;
	double t0 = 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	OOM(&r, "--jobs", "2", "--", h_prog("plain_oom"), "slow");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double secs = ts.tv_sec + ts.tv_nsec / 1e9 - t0;
	EXPECT_EXIT(&r, 0);
	EXPECT_HAS(r.out, "1000 runs");
	const char *rate = strstr(r.out, "runs/s");
	ck_assert_ptr_nonnull(rate);
	fprintf(stderr, "test_oom: 1,000-allocation sweep on 2 jobs: %.1f s (%s", secs,
		strstr(r.out, "1000 runs in"));
	ck_assert_msg(secs < h_stretch(30), "the sweep took %.1f s (limit %.0f s)", secs,
		      h_stretch(30));
	h_run_free(&r);
}
END_TEST

/* On a terminal (script(1) gives the sweep one) a progress line is
 * rewritten on stderr while the sweep runs, and erased at its end; into
 * a pipe, none. */
START_TEST(progress_on_a_terminal)
{
	struct h_run r;
	H_RUN(&r, H_TERMINAL, NULL, NULL, cli(), "oom", "--max", "40", "--", h_prog("plain_oom"),
	      "slow");
	EXPECT_EXIT(&r, 0);
	EXPECT_HAS(r.out, "\rmemcheck oom: ");
	EXPECT_HAS(r.out, " of 40 runs, ");
	EXPECT_HAS(r.out, "\r\033[K");
	EXPECT_HAS(r.out, "memcheck oom: 40 runs in ");
	h_run_free(&r);
	OOM(&r, "--max", "40", "--", h_prog("plain_oom"), "slow");
	EXPECT_EXIT(&r, 0);
	ck_assert_msg(!strstr(r.err, " of 40 runs, "), "progress into a pipe:\n%s", r.err);
	h_run_free(&r);
}
END_TEST

START_TEST(timeout_says_what_was_not_reached)
{
	struct h_run r;
	OOM(&r, "--timeout", "0.3", "--jobs", "1", "--", h_prog("plain_oom"), "slow");
	EXPECT_EXIT(&r, 0);
	EXPECT_HAS(r.out, "not reached: region \"process\" (p/1): allocations ");
	EXPECT_HAS(r.out, "(--timeout)");
	h_run_free(&r);
}
END_TEST

/* memcheck COMMAND... started apart, sent sig after delay seconds: it must
 * end, killed by that same signal, within a few seconds (and so must the
 * runs it started: their process groups are gone). */
static void killed_by(const char *const argv[], double delay, int sig)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	struct timespec d = { (time_t)delay, (long)((delay - (time_t)delay) * 1e9) };
	nanosleep(&d, NULL);
	kill(pid, sig);
	int st = 0;
	pid_t got = 0;
	int ticks = (int)(h_stretch(5) * 20);
	for (int i = 0; i < ticks && got == 0; i++) {
		got = waitpid(pid, &st, WNOHANG);
		if (got == 0) {
			struct timespec tick = { 0, 50 * 1000 * 1000 };
			nanosleep(&tick, NULL);
		}
	}
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		ck_abort_msg("%s %s: still running %.0f s after signal %d", argv[0], argv[1],
			     h_stretch(5), sig);
	}
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == sig,
		      "%s %s: ended with status 0x%x, expected to die of signal %d", argv[0],
		      argv[1], st, sig);
}

/* A hangup (a closed terminal, a CI job cancelled) stops a sweep as an
 * interrupt does, and `run` passes it on. */
static int count_files(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

START_TEST(hangup_stops_oom_and_run)
{
	/* Each run leaves a file a second after it starts: none may appear
	 * once memcheck is gone (its runs were killed, not orphaned). */
	const char *dir = h_tmppath("hup");
	mkdir(dir, 0700);
	/* sh, sleep and touch are installed on the system, which memcheck
	 * leaves out by default: measured, they make the sweep long. */
	setenv("MEMCHECK_PROGRAMS", "*", 1);
	const char *cmd = h_env("sleep 1; touch %s/$$", dir);
	const char *const oom[] = { cli(), "oom", "--", "/bin/sh", "-c", cmd, NULL };
	killed_by(oom, 2.5, SIGHUP);
	int files = count_files(dir);
	struct timespec later = { 1, 500 * 1000 * 1000 };
	nanosleep(&later, NULL);
	ck_assert_msg(count_files(dir) == files, "runs of memcheck oom went on after SIGHUP");
	const char *const oom_int[] = { cli(), "oom", "--", "/bin/sh", "-c", "sleep 1", NULL };
	killed_by(oom_int, 2.5, SIGINT);
	const char *const run[] = { cli(), "run", "-a", "glibc", "--", "/bin/sleep", "5", NULL };
	killed_by(run, 0.5, SIGHUP);
	unsetenv("MEMCHECK_PROGRAMS");
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("oom", 60);
	tcase_add_test(tc, handled_everywhere_exits_0);
	tcase_add_test(tc, leak_on_error_path_exits_1);
	tcase_add_test(tc, persistent_sweep);
	tcase_add_test(tc, crash_exits_1_with_the_failed_call);
	tcase_add_test(tc, test_failure_exits_1);
	tcase_add_test(tc, exit_without_report_is_a_test_failure);
	tcase_add_test(tc, forked_children_are_runs_of_their_own);
	tcase_add_test(tc, usage_exits_2);
	tcase_add_test(tc, command_failing_on_its_own_exits_3);
	tcase_add_test(tc, command_not_found_exits_2);
	tcase_add_test(tc, killed_for_time_is_timed_out);
	tcase_add_test(tc, max_says_what_was_not_reached);
	tcase_add_test(tc, timeout_says_what_was_not_reached);
	tcase_add_test(tc, progress_on_a_terminal);
	tcase_add_test(tc, hangup_stops_oom_and_run);
	tcase_add_test(tc, a_thousand_allocations_in_well_under_a_minute);
	return h_run_suite(NULL);
}
