/*
 * test_rsslazy.c - a process pays for the RSS figures only where
 * something reads them (footprint.c, life.c).
 *
 * - With the defaults (preloaded, MEMCHECK_TEXT=summary, no report, no
 *   budget) a measured process opens none of /proc/self/pagemap, statm,
 *   status and clear_refs, under each allocator: strace -f lists the
 *   files it opens.  A failing one's full text says the RSS was not
 *   measured.  (On main these four were opened by every measured
 *   process, and the kernel's peak mark reset through clear_refs.)
 * - With MEMCHECK_REPORT the same process reads them and its record has
 *   every RSS figure (clear_refs is written only where the kernel's mark
 *   could hide a peak: not in these programs).
 * - A budget (MEMCHECK_BUDGET) reads them only where it names one of
 *   them (peak_rss here); one of leak rules alone reads none.
 * - A program that reads the figures through the API gets them measured
 *   from start-up without any option: linked with libmemcheck
 *   (tests/prog/rss_touch), or preloaded and calling it through weak
 *   references (tests/prog/plain_rss_weak, which writes "main" first:
 *   pagemap is opened before it, at start-up).  A region that writes
 *   100 MiB sees its peak rise by 100 MiB, as test_rss checks with a
 *   report.  So does one the programs rule leaves out (memcheck only
 *   forwards there, and maps nothing of its own).
 *
 * Without strace the rows that trace are skipped (GNUmakefile's deps
 * install it).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024.0 * 1024.0)

/* The files the figures read, then the one a reset of the kernel's mark
 * writes: a measured process opens it only where its mark could hide a
 * peak (footprint.c's restart_at; a leaking one-region process, none),
 * so it is looked for where nothing may be opened only. */
static const char *const rss_files[] = { "/proc/self/pagemap", "/proc/self/statm",
					 "/proc/self/status", "/proc/self/clear_refs" };
#define RSS_READS 3 /* rss_files' first three */

/* The trace of the row's run (setup makes it, check reads it). */
static const char *trace_path;

/* The row's program run under strace -f, which writes every open to a
 * fresh file (tests/harness.h's h_setup_strace). */
H_SETUP(traced)
{
	trace_path = h_setup_strace(run, c, "open,openat,write");
	return trace_path != NULL;
}

/* The offset in the trace of the first open of file, or -1. */
static long opened_at(const char *trace, const char *file)
{
	char needle[64];
	snprintf(needle, sizeof needle, "\"%s\"", file);
	const char *p = strstr(trace, needle);
	return p ? p - trace : -1;
}

static char *trace_text(void)
{
	char *t = h_read_file(trace_path, NULL);
	ck_assert_msg(t, "no trace at %s", trace_path);
	return t;
}

H_CHECK(reads_none)
{
	char *t = trace_text();
	for (size_t i = 0; i < sizeof rss_files / sizeof rss_files[0]; i++)
		ck_assert_msg(opened_at(t, rss_files[i]) < 0,
			      "%s: opened %s, which nothing reads here; its trace:\n%.2000s", x->label,
			      rss_files[i], t);
	free(t);
}

/* As reads_none, and the scan of a program that never made a thread
 * knows it is alone from the C library's flag, without /proc/self/stat
 * (an open and read, 13-14 us). */
H_CHECK(reads_none_nor_stat)
{
	reads_none(x, rec, c);
	char *t = trace_text();
	ck_assert_msg(opened_at(t, "/proc/self/stat") < 0,
		      "%s: opened /proc/self/stat, with one thread; its trace:\n%.2000s", x->label, t);
	free(t);
}

/* Every RSS file opened; why: what asks for them. */
static void opened_all(const struct h_res *x, const char *why)
{
	char *t = trace_text();
	for (size_t i = 0; i < RSS_READS; i++)
		ck_assert_msg(opened_at(t, rss_files[i]) >= 0,
			      "%s: never opened %s, with %s; its trace:\n%.2000s", x->label,
			      rss_files[i], why, t);
	free(t);
}

H_CHECK(reads_all)
{
	opened_all(x, "a report to write");
	/* the traced program's record: its pid is not the run's (strace's) */
	rec = h_record(&x->rep, "process", 0);
	ck_assert_msg(rec, "%s: no record \"process\"", x->label);
	uint64_t begin = h_u64(rec, "rss_begin"), end = h_u64(rec, "rss_end"),
		 peak = h_u64(rec, "peak_rss");
	ck_assert_msg(begin && end && peak && begin <= peak && end <= peak &&
			      begin != UINT64_MAX && peak != UINT64_MAX,
		      "%s: rss_begin %llu, rss_end %llu, peak_rss %llu", x->label,
		      (unsigned long long)begin, (unsigned long long)end,
		      (unsigned long long)peak);
}

/* "big rss_begin=N rss_end=N peak_rss=N" in the program's output: every
 * figure known, the peak 100 MiB (+-5%) above the begin. */
static void expect_big_measured(const struct h_res *x)
{
	const char *line = strstr(x->r.out, "big rss_begin=");
	ck_assert_msg(line, "%s: no figures in its output:\n%s", x->label, x->r.out);
	unsigned long long b, e, p;
	ck_assert_msg(sscanf(line, "big rss_begin=%llu rss_end=%llu peak_rss=%llu", &b, &e, &p) == 3,
		      "%s: a figure is unknown: %.120s", x->label, line);
	double d = (double)p - (double)b;
	ck_assert_msg(d >= 100 * MiB * 0.95 && d <= 100 * MiB * 1.05,
		      "%s: peak_rss - rss_begin = %.2f MiB, expected 100 MiB +-5%%", x->label,
		      d / MiB);
}

H_CHECK(api_measured)
{
	expect_big_measured(x);
}

/* Measured from start-up: pagemap opened before the program's first
 * write. */
H_CHECK(weak_api_measured_from_start)
{
	expect_big_measured(x);
	char *t = trace_text();
	long pagemap = opened_at(t, "/proc/self/pagemap"), main_at = opened_at(t, "main\\n");
	ck_assert_msg(pagemap >= 0 && main_at >= 0 && pagemap < main_at,
		      "%s: pagemap first opened after main began (at %ld, main at %ld):\n%.2000s",
		      x->label, pagemap, main_at, t);
	free(t);
}

/* As traced, with MEMCHECK_BUDGET set to a file of the row's text
 * (c->file's words, made here: the harness's H_FILE is for arguments). */
H_SETUP(traced_budget)
{
	const char *path = h_tmppath("budget");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(c->file, f);
	fclose(f);
	static const char *env[2];
	env[0] = h_env("MEMCHECK_BUDGET=%s", path);
	env[1] = NULL;
	run->env = env;
	return traced(run, c);
}

/* Every RSS file read, where nothing but the budget asks for them: no
 * record to read the figures from (reads_all's); the failing region's
 * text shows them. */
H_CHECK(reads_all_for_budget)
{
	opened_all(x, "a budget on peak_rss");
}

/* The opens of file in the trace. */
static int opened_times(const char *trace, const char *file)
{
	char needle[64];
	snprintf(needle, sizeof needle, "\"%s\"", file);
	int n = 0;
	for (const char *p = trace; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* A measured program's unmaps of 1 MiB (plain_rss_self unmaps: 200 of
 * them, its RSS the same at each) read statm at each (footprint.c's
 * release read) but measure memcheck's own memory (pagemap opened)
 * only where the RSS is higher than at the last one: on foot58's
 * branch pagemap was opened at every unmap, 10 system calls each (a
 * loop of 20,000 such unmaps 0.8 s bare of the reads, 3.7 s). */
H_CHECK(unmaps_measure_seldom)
{
	opened_all(x, "a report to write");
	char *t = trace_text();
	int statm = opened_times(t, "/proc/self/statm"),
	    pagemap = opened_times(t, "/proc/self/pagemap");
	ck_assert_msg(statm >= 200 && pagemap <= 40,
		      "%s: statm opened %d times, pagemap %d, for 200 unmaps of 1 MiB "
		      "(expected statm at each, pagemap seldom)",
		      x->label, statm, pagemap);
	free(t);
}

#define DEFAULTS .no_report = true, .text = "summary"

static const struct h_case cases[] = {
	{ "a clean process reads no RSS file",
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD, DEFAULTS },
	  .setup = traced, .check = reads_none },
	{ "a leaking process reads no RSS file, and says so",
	  .run = { .prog = "plain_leak_direct", .flags = H_PRELOAD, DEFAULTS },
	  .err = H_LIST("RSS: not measured"), .setup = traced, .check = reads_none_nor_stat },
	/* A budget of leak rules alone reads no RSS figure: start-up looks
	 * for their names in it (on main, any budget measured them). */
	{ "a budget without RSS rules reads no RSS file",
	  .run = { .prog = "plain_leak_direct", .flags = H_PRELOAD, DEFAULTS },
	  .file = "# leaks only: no peak_rss rule\ndefinitely_lost <= 0 # nor rss_end\n"
		  "peak_live_bytes <= 1 MiB\n",
	  .err = H_LIST("RSS: not measured", "definitely_lost"), .setup = traced_budget,
	  .check = reads_none },
	/* a '#' inside a word starts no comment (budget.c's rule): the
	 * rule after it is read */
	{ "a budget with an RSS rule after a word's '#' reads every RSS file",
	  .run = { .prog = "plain_leak_direct", .flags = H_PRELOAD, DEFAULTS },
	  .file = "definitely_lost <= 0 # a#\n[plain#leak]\npeak_rss <= 1 GiB\n",
	  .err = H_LIST("RSS: ", " at start, "), .no_err = H_LIST("not measured"),
	  .setup = traced_budget, .check = reads_all_for_budget },
	{ "a budget with an RSS rule reads every RSS file",
	  .run = { .prog = "plain_leak_direct", .flags = H_PRELOAD, DEFAULTS },
	  .file = "definitely_lost <= 0\npeak_rss <= 1 GiB\n",
	  .err = H_LIST("RSS: ", " at start, ", "definitely_lost"), .no_err = H_LIST("not measured"),
	  .setup = traced_budget, .check = reads_all_for_budget },
	{ "with a report every RSS file is read",
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD, .text = "summary" },
	  .setup = traced, .check = reads_all },
	{ "with a report, 200 unmaps of 1 MiB measure memcheck's own memory seldom",
	  .run = { .prog = "plain_rss_self", .args = H_LIST("unmaps"), .flags = H_PRELOAD,
		   .text = "summary" },
	  .setup = traced, .check = unmaps_measure_seldom },
	{ "linked, the API's figures are measured",
	  .run = { .prog = "rss_touch", .args = H_LIST("big"), .flags = H_PRELOAD, DEFAULTS },
	  .check = api_measured },
	{ "preloaded, a weak reference's figures are measured from start-up",
	  .run = { .prog = "plain_rss_weak", .flags = H_PRELOAD, DEFAULTS },
	  .setup = traced, .check = weak_api_measured_from_start },
	{ "left out, a weak reference's figures are the process's",
	  .run = { .prog = "plain_rss_weak", .flags = H_PRELOAD, DEFAULTS,
		   .env = H_LIST("MEMCHECK_PROGRAMS=no-program-is-named-so") },
	  .check = api_measured },
};

int main(void)
{
	TCase *tc = h_tcase("rsslazy", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
