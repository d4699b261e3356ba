/*
 * test_oom.c - `memcheck oom` (tools/oom.c): the sweep's classification
 * of programs built to handle, leak, crash and fail on OOM
 * (tests/prog/plain_oom.c), forked children swept as runs of their own,
 * the exit status for each outcome, the JSON report, --max and --timeout
 * notes, progress on a terminal, and the speed of a sweep over 1,000
 * allocations.
 *
 * A sweep is a row (run.cli: oom and its options; prog plain_oom and the
 * case; file: the --report it writes, read by the row's callback): its
 * exit status, what stdout and stderr hold.  Two are tests of their own:
 * the 1,000-allocation sweep, whose wall time around the one run is the
 * check, and the hangup, where a signal is sent to memcheck mid-run.
 * MEMCHECK_TEXT is left unset (.text ""), as a user's sweep would run.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The --report file the row's run wrote (its H_FILE), parsed. */
static struct h_json *oom_report(const struct h_res *x)
{
	char *text = h_read_file(x->file, NULL);
	ck_assert_msg(text != NULL, "%s: no report %s", x->label, x->file);
	char err[256];
	struct h_json *j = h_json_parse(text, strlen(text), err, sizeof err);
	ck_assert_msg(j != NULL, "%s: report is not JSON: %s", x->label, err);
	free(text);
	return j;
}

H_CHECK(six_handled_in_the_report)
{
	struct h_json *j = oom_report(x);
	ck_assert_uint_eq(h_u64(j, "runs"), 6);
	ck_assert_uint_eq(h_u64(h_json_get(j, "totals"), "handled"), 6);
	ck_assert_uint_eq(h_json_get(j, "results")->n, 6);
	ck_assert_uint_eq(h_json_get(j, "sites")->n, 2);
	h_json_free(j);
}

/* One leaked result: the failed call (the third malloc, line 52) and
 * where the leaked block came from (line 44). */
H_CHECK(one_leak_in_the_report)
{
	struct h_json *j = oom_report(x);
	const struct h_json *res = h_json_get(j, "results");
	int leaks = 0;
	for (size_t i = 0; i < res->n; i++) {
		const struct h_json *r = h_json_at(res, i);
		if (strcmp(h_str(r, "outcome"), "leaked"))
			continue;
		leaks++;
		ck_assert_str_eq(h_str(r, "site"), "tests/prog/plain_oom.c:52");
		ck_assert_uint_eq(h_u64(h_json_get(r, "leak"), "line"), 44);
		ck_assert_uint_eq(h_u64(r, "index"), 3);
	}
	ck_assert_int_eq(leaks, 1);
	h_json_free(j);
}

/* Into a pipe, no progress line. */
H_CHECK(no_progress)
{
	ck_assert_msg(!strstr(x->r.err, " of 40 runs, "), "%s: progress into a pipe:\n%s",
		      x->label, x->r.err);
}

/* memcheck oom OPTIONS -- plain_oom CASE, once, MEMCHECK_TEXT unset */
#define OOM(...) .allocators = H_ONCE, .run = { .cli = H_LIST("oom", ##__VA_ARGS__), .text = ""
#define CASE(...) .prog = "plain_oom", .args = H_LIST(__VA_ARGS__) }
#define OUT(...) .out = H_LIST(__VA_ARGS__)

static const struct h_case cases[] = {
	{ "handled everywhere", OOM("--report", H_FILE), CASE("handle"), .file = "",
	  OUT("6 runs", "6 handled", "runs/s"), .check = six_handled_in_the_report },
	{ "leak on an error path", OOM("--report", H_FILE), CASE("leak"), .file = "", .exit = 1,
	  OUT("tests/prog/plain_oom.c:52: leaked in leak, when allocation 3",
	      "leaked 10 bytes, allocated at tests/prog/plain_oom.c:44 (leak)",
	      "2 handled (0 expected), 1 leaked, 0 crashed"),
	  .check = one_leak_in_the_report },
	/* --persistent: from the Nth call on, every one fails; leak's third
	 * call still leaks, and only it */
	{ "persistent, a leak", OOM("--persistent"), CASE("leak"), .exit = 1,
	  OUT("2 handled (0 expected), 1 leaked", "MEMCHECK_FAIL_PERSISTENT=1") },
	{ "persistent, handled", OOM("--persistent"), CASE("handle") },
	{ "a crash", OOM(), CASE("crash"), .exit = 1,
	  OUT("tests/prog/plain_oom.c:68: crashed in crash, when allocation 2",
	      "killed by SIGSEGV") },
	{ "a test failure", OOM(), CASE("fail"), .exit = 1,
	  OUT("0 handled (0 expected), 0 leaked, 0 crashed, 0 timed out, 2 test failed",
	      "memcheck_expect_oom()") },
	/* a process that ends with _exit leaves no record: a test failure,
	 * not a crash, unless its output says it got a signal */
	{ "exit without a report", OOM(), CASE("quit"), .exit = 1,
	  OUT("0 leaked, 0 crashed, 0 timed out, 1 test failed") },
	/* each forked child is a process of its own, with region ids of its own */
	{ "forked children", OOM(), CASE("fork"), .exit = 1,
	  OUT("when allocation 3 of region \"process\" (p.2/1) failed", "11 runs",
	      "10 handled (0 expected), 1 leaked") },
	{ "--max 0", OOM("--max", "0"), CASE("handle"), .exit = 2 },
	{ "an unknown option", OOM("--bogus"), CASE("handle"), .exit = 2 },
	/* a space before a number is refused as one after it is */
	{ "--max ' 2'", OOM("--max", " 2"), CASE("handle"), .exit = 2 },
	{ "no command", .allocators = H_ONCE, .run = { .cli = H_LIST("oom"), .text = "" },
	  .exit = 2, .err = H_LIST("no command") },
	{ "a command failing on its own", OOM(), CASE("exit3"), .exit = 3,
	  .err = H_LIST("without any failure injected") },
	/* one rule with memcheck run (issue 14, item 13): a command that
	 * cannot be started is a usage error, 2, not one of the command's
	 * own, 3 */
	{ "a command not found", OOM(), .prog = "/nonexistent/program" }, .exit = 2,
	  .err = H_LIST("cannot run /nonexistent/program: No such file") },
	/* issue 14, item 12: a run memcheck killed for taking too long was
	 * called "crashed"; plain_oom retry loops for ever when its second
	 * allocation fails for good */
	{ "killed for time", OOM("--persistent", "--run-timeout", "1"), CASE("retry"), .exit = 1,
	  OUT("tests/prog/plain_oom.c:142: timed out in main, when allocation 2",
	      "killed (--run-timeout)", "0 crashed, 1 timed out, 0 test failed") },
	{ "--max", OOM("--max", "2"), CASE("handle"),
	  OUT("2 runs",
	      "not reached: region \"process\" (p/1): allocations 3 to 6 of 6 (--max)") },
	{ "--timeout", OOM("--timeout", "0.3", "--jobs", "1"), CASE("slow"),
	  OUT("not reached: region \"process\" (p/1): allocations ", "(--timeout)") },
	/* on a terminal a progress line is rewritten on stderr while the
	 * sweep runs, and erased at its end; into a pipe, none */
	{ "progress on a terminal", OOM("--max", "40"), .flags = H_TERMINAL, CASE("slow"),
	  OUT("\rmemcheck oom: ", " of 40 runs, ", "\r\033[K", "memcheck oom: 40 runs in ") },
	/* shown at once, not after the first half second: one job whose
	 * runs end before the next starts still shows it */
	{ "progress at once, one job", OOM("--jobs", "1", "--max", "3"), .flags = H_TERMINAL,
	  CASE("slow"), OUT("\rmemcheck oom: 0 of 3 runs, ", "\r\033[K", "(", " runs/s, 1 job): ") },
	{ "no progress into a pipe", OOM("--max", "40"), CASE("slow"), .check = no_progress },
};

/* 1,000 allocations in a program that runs ~10 ms bare: well under a
 * minute on 2 cores (the figure); here it must take < 30 s
 * (h_stretch: longer on a loaded machine, by H_TIMEOUT or the load average).
 * Not a row: the check is the wall time around the run. */
START_TEST(a_thousand_allocations_in_well_under_a_minute)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	struct h_res x;
	double limit = h_stretch(30);
	/* killed well after the limit, so that the check below says what
	 * it took (and before check's own limit for the test, 60 s) */
	H_EXEC(&x, .cli = H_LIST("oom", "--jobs", "2"), .prog = "plain_oom", .args = H_LIST("slow"),
	       .text = "", .timeout = limit + 15);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double secs = ts.tv_sec + ts.tv_nsec / 1e9 - t0;
	h_expect_exit(&x, 0);
	ck_assert_msg(strstr(x.r.out, "1000 runs"), "no \"1000 runs\" in:\n%s", x.r.out);
	const char *rate = strstr(x.r.out, "runs/s");
	ck_assert_ptr_nonnull(rate);
	fprintf(stderr, "test_oom: 1,000-allocation sweep on 2 jobs: %.1f s (%s", secs,
		strstr(x.r.out, "1000 runs in"));
	ck_assert_msg(secs < limit, "the sweep took %.1f s (limit %.0f s)", secs, limit);
	h_res_free(&x);
}
END_TEST

/* memcheck COMMAND... started apart, sent sig after delay seconds: it must
 * end, killed by that same signal, within a few seconds (and so must the
 * runs it started: their process groups are gone).  Not H_EXEC, which
 * waits for the end: the signal comes mid-run. */
static void killed_by(const char *const argv[], double delay, int sig)
{
	/* The signal's default action, whatever this test inherited: under
	 * nohup (SIGHUP ignored) or as a background job of a shell without
	 * job control (SIGINT ignored) memcheck keeps an ignored signal
	 * ignored, as it must, and went on (harden35's and others' make
	 * check: "still running 24 s after signal 1", never when the test
	 * ran alone from a terminal). */
	signal(sig, SIG_DFL);
	pid_t pid = h_spawn_quiet((char *const *)argv, NULL, false);
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
	/* One job: the sweep must still run when the signal comes, 2.5 s
	 * in.  How many runs it has is the programs' allocations: with LANG
	 * unset sleep loads no locale, and sh -c "sleep 1" swept 2 runs in
	 * 1.1 s (200 with LANG=C.UTF-8), ended before the SIGINT; with as
	 * many jobs as processors, a machine of 4 or more would end this
	 * one's 4 runs as soon.  One at a time they take 5 s here. */
	const char *cmd = h_env("sleep 1; touch %s/$$", dir);
	const char *const oom[] = { cli(), "oom", "--jobs", "1", "--", "/bin/sh", "-c", cmd, NULL };
	killed_by(oom, 2.5, SIGHUP);
	int files = count_files(dir);
	struct timespec later = { 1, 500 * 1000 * 1000 };
	nanosleep(&later, NULL);
	ck_assert_msg(count_files(dir) == files, "runs of memcheck oom went on after SIGHUP");
	const char *const oom_int[] = { cli(), "oom", "--jobs", "1", "--", "/bin/sh", "-c", cmd,
					NULL };
	killed_by(oom_int, 2.5, SIGINT);
	const char *const run[] = { cli(), "run", "-a", "glibc", "--", "/bin/sleep", "5", NULL };
	killed_by(run, 0.5, SIGHUP);
	unsetenv("MEMCHECK_PROGRAMS");
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("oom", 60);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, hangup_stops_oom_and_run);
	tcase_add_test(tc, a_thousand_allocations_in_well_under_a_minute);
	return h_run_suite(NULL);
}
