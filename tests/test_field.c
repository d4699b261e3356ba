/*
 * test_field.c - what real suites run from outside found (session 39's
 * trial of public suites as a user: cmark, libcsv, utf8proc).
 *
 * cmark's CTest runs its spec tests through Python, one `cmark` process
 * an example (695 processes).  `memcheck run -a glibc,mimalloc -- ctest`
 * took 24 s for them under glibc and 150-170 s under mimalloc: every
 * process of a run after the baseline's got MEMCHECK_BASELINE, the glibc
 * run's report (13 MB: a record a process), and parsed all of it at its
 * region's end (130-240 ms a process), though no budget was given and
 * only a budget's relative limits read a baseline.  Now:
 *
 * - `memcheck run` passes the baseline's report only with a budget
 *   (tools/run.c): without one, the second allocator's command sees no
 *   MEMCHECK_BASELINE (on main it did).
 * - The library reads MEMCHECK_BASELINE only where the budget has a
 *   relative limit (lib/gate.c): a baseline whose only line is malformed
 *   is not named under a budget of absolute rules (on main it was, read
 *   whole).
 * - With a relative limit, the baseline is read only as far as the first
 *   record of the program's name and region: a malformed line after it is
 *   never reached (on main every line was parsed, and it was named),
 *   and the relative limit still compares with that record.
 * - What the region's end read of the baseline is not left in the
 *   program's RSS: the report stays mapped for the process's later
 *   regions, and its pages read were the program's RssFile for the rest
 *   of its run (16 MB of a baseline: +16 MB) until given back after each
 *   read.
 *
 * Session 40 (field40), libtiff's CTest under `memcheck run -a
 * glibc,jemalloc --budget` with `peak_rss <= 2x`: 7 of the 21 tiff2rgba
 * tests failed under jemalloc, each run of tiff2rgba (2.4 to 100 MB)
 * compared by the library with the baseline's first tiff2rgba record,
 * while memcheck run paired them in order and called every record
 * within budget.  The library now pairs them as memcheck run does: a
 * record with the baseline's record of its rank in its own run's report.
 *
 * Session 41 (field41): that rank was the count of the records already in
 * the report, read whole at every region's end (O(n^2) over a suite), and
 * processes ending together counted the same ones: under ctest -j several
 * compared with one baseline record.  Now each region's end takes its
 * rank by appending a byte to its program's and region's count file in
 * REPORT.rank (the append's offset: atomic among processes).
 *
 * Session 43 (field43): memcheck run's table put a record that no
 * baseline record's arguments match (a temporary file's name among
 * them) in a row of its own, with no figure against the baseline, while
 * its budget judged it against the baseline's record of its rank; and
 * a region more often in the run than in the baseline's likewise.  The
 * table now shows each record in the row of the record it is judged
 * against (tools/pairing.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* A line no reader takes for a record, naming the program as a record
 * would: the library would have to parse it to know. */
#define BAD_LINE "{\"name\":\"process\",\"program\":\"/x/plain_clean\",\"allocs\":\n"
#define NOT_USED "that record is not used as a baseline"

static void write_text(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* The environment of a row: the budget (of text) and the baseline at
 * path, both fresh files. */
static const char *const *budget_env_at(const char *b, const char *budget_text,
					const char *baseline)
{
	write_text(b, "w", budget_text);
	const char **env = calloc(3, sizeof *env);
	ck_assert_ptr_nonnull(env);
	env[0] = h_env("MEMCHECK_BUDGET=%s", b);
	env[1] = h_env("MEMCHECK_BASELINE=%s", baseline);
	return env;
}

static const char *const *budget_env(const char *budget_text, const char *baseline)
{
	return budget_env_at(h_tmppath("field.budget"), budget_text, baseline);
}

/* plain_clean's record under glibc, then a malformed line naming the
 * same program: the baseline a later run reads. */
/* prog arg's record under glibc, in a fresh file named by tag. */
static const char *record_under_glibc(const char *prog, const char *arg, const char *tag)
{
	const char *base = h_tmppath(tag);
	const char *argv[] = { h_prog(prog), arg, NULL };
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", base), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	ck_assert_msg(h_run(&r, argv, env, H_PRELOAD, NULL) == 0 && r.exit_code == 0,
		      "%s under glibc for the baseline: %s", prog, h_status(&r));
	h_run_free(&r);
	return base;
}

static const char *record_then_bad_line(void)
{
	const char *base = record_under_glibc("plain_clean", "plain", "field-base.jsonl");
	write_text(base, "a", BAD_LINE);
	return base;
}

H_SETUP(relative_limit)
{
	run->env = budget_env("baseline glibc\n[*]\npeak_rss <= 100x\n", record_then_bad_line());
	return true;
}

H_SETUP(tight_relative_limit)
{
	run->env = budget_env("baseline glibc\n[*]\npeak_rss <= 0.01x\n", record_then_bad_line());
	return true;
}

/* A budget of an absolute and a relative rule, the baseline
 * plain_sandbox's record under glibc: what a program that restricts
 * itself must have read (and the rank it must have taken) before. */
H_SETUP(budget_before_sandbox)
{
	const char *base = record_under_glibc("plain_sandbox", "clean", "field-sandbox-base.jsonl");
	run->env = budget_env("baseline glibc\n[*]\ndefinitely_lost <= 0\npeak_rss <= 100x\n", base);
	return true;
}

H_SETUP(absolute_rules_only)
{
	const char *base = h_tmppath("field-bad.jsonl");
	write_text(base, "w", BAD_LINE);
	run->env = budget_env("[*]\ndefinitely_lost <= 0\n", base);
	return true;
}

/* The tight limit failed against the baseline's record, not for want
 * of one (under glibc, the baseline itself, relative limits are not
 * judged). */
H_CHECK(compared_with_glibc)
{
	ck_assert_msg(h_violation_has(rec, "0.01x glibc's"),
		      "%s: no violation against glibc's record", x->label);
}

/* Under a second allocator, `memcheck run` without a budget: the command
 * gets no baseline (cli_prog env prints it after glibc's run's lines). */
H_CHECK(no_baseline_without_a_budget)
{
	ck_assert_msg(h_count_lines(x->r.out, "MEMCHECK_BASELINE unset") == 2 &&
			      h_count_lines(x->r.out, "MEMCHECK_BASELINE=") == 0,
		      "%s: each run's environment should have no MEMCHECK_BASELINE:\n%s",
		      x->label, x->r.out);
}

/* region_rssfile's RssFile (field: another of /proc/self/status's)
 * after its region's end, in kB, run under allocator alloc with env. */
static long rss_after_region(int alloc, const char *field, const char *const *env)
{
	struct h_res x;
	H_EXEC(&x, .prog = "region_rssfile", .args = H_LIST(field), .alloc = alloc,
	       .flags = H_PRELOAD, .env = env);
	h_expect_exit(&x, 0);
	long kb = -1;
	ck_assert_msg(sscanf(x.r.out, "%ld", &kb) == 1 && kb >= 0, "%s: no RssFile figure in:\n%s",
		      x.label, x.r.out);
	h_res_free(&x);
	return kb;
}

/* A 16 MB baseline whose last line is region_rssfile's record of its
 * region (glibc's), every line before it another program's. */
static const char *big_baseline(void)
{
	const char *rec = h_tmppath("field-rssfile-rec.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", rec), "MEMCHECK_TEXT=none", NULL };
	const char *argv[] = { h_prog("region_rssfile"), NULL };
	struct h_run r;
	ck_assert_msg(h_run(&r, argv, env, H_PRELOAD, NULL) == 0 && r.exit_code == 0,
		      "region_rssfile under glibc for the baseline: %s", h_status(&r));
	h_run_free(&r);
	const char *base = h_tmppath("field-rssfile-base.jsonl");
	FILE *f = fopen(base, "w");
	ck_assert_msg(f != NULL, "cannot write %s", base);
	static const char other[] = "{\"name\":\"work\",\"program\":\"/x/another_program\",\"allocs\":1}\n";
	for (size_t n = 0; n < (16u << 20); n += sizeof other - 1)
		fputs(other, f);
	FILE *in = fopen(rec, "r");
	ck_assert_msg(in != NULL, "cannot read %s", rec);
	char buf[4096];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, got, f);
	fclose(in);
	fclose(f);
	return base;
}

/* Under a second allocator, a relative limit reads the baseline at the
 * region's end: afterwards the program's RssFile is what it is with no
 * baseline (within 4 MB: the library's own file pages vary less). */
START_TEST(baseline_not_left_in_rss)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return; /* under glibc, the baseline's, nothing is compared */
	const char *base = big_baseline();
	long plain = rss_after_region(_i, "RssFile", NULL);
	const char *const *env = budget_env("baseline glibc\n[*]\npeak_rss <= 100x\n", base);
	long with = rss_after_region(_i, "RssFile", env);
	ck_assert_msg(with < plain + 4096,
		      "under %s: RssFile after the region's end %ld kB with a 16 MB baseline read, "
		      "%ld kB without: the baseline's pages left in the program's RSS",
		      h_allocators[_i].name, with, plain);
	/* and memcheck's own table of the baseline's lines: room for every
	 * line of 27 bytes or more, populated whole before field43 (+9.5 MB
	 * of a 16 MB baseline's 600,000 lines, of which the pick kept one) */
	plain = rss_after_region(_i, "RssAnon", NULL);
	with = rss_after_region(_i, "RssAnon", env);
	ck_assert_msg(with < plain + 4096,
		      "under %s: RssAnon after the region's end %ld kB with a 16 MB baseline read, "
		      "%ld kB without: memcheck's table of its lines resident whole",
		      h_allocators[_i].name, with, plain);
}
END_TEST

/* plain_field40_sizes small then large, under allocator alloc with env
 * (and MEMCHECK_REPORT=report, as memcheck run gives each run its own):
 * the large run's exit status. */
static int small_then_large(int alloc, const char *report, const char *const *env)
{
	const char *so = NULL;
	h_allocator(alloc, &so);
	int status = -1;
	for (int i = 0; i < 2; i++) {
		const char *argv[] = { h_prog("plain_field40_sizes"), i ? "48" : "1", NULL };
		const char *e[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				    env ? env[0] : NULL, env ? env[1] : NULL, NULL };
		struct h_run r;
		ck_assert_msg(h_run(&r, argv, e, H_PRELOAD | H_EXITCODE, so) == 0,
			      "plain_field40_sizes %s: %s",
			      argv[1], h_status(&r));
		ck_assert_msg(i || r.exit_code == 0, "plain_field40_sizes 1 under %s: %s",
			      h_allocators[alloc].name, h_status(&r));
		status = r.exit_code;
		h_run_free(&r);
	}
	return status;
}

/* A suite runs one program twice, 1 MiB and then 48 MiB; under a second
 * allocator, a relative peak_rss limit compares the second run with the
 * baseline's second record, as memcheck run pairs them (tools/records.c):
 * on main the library compared it with the first, 1 MiB's, and failed a
 * process its own baseline passes (libtiff's tiff2rgba tests, 7 of 21
 * failed under jemalloc). */
START_TEST(repeated_program_paired_in_order)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return; /* under glibc, the baseline's, nothing is compared */
	const char *base = h_tmppath("field40-base.jsonl");
	ck_assert_int_eq(small_then_large(H_GLIBC, base, NULL), 0);
	int status = small_then_large(_i, h_tmppath("field40-own.jsonl"),
				      budget_env("baseline glibc\n[*]\npeak_rss <= 6x\n", base));
	ck_assert_msg(status == 0,
		      "under %s: plain_field40_sizes 48 exited %d: its peak RSS compared with "
		      "the baseline's 1 MiB run, not its 48 MiB one", h_allocators[_i].name, status);
}
END_TEST

/* plain_field41_rank touching mib MiB, waiting for all of its copies
 * at ready, under allocator alloc with MEMCHECK_REPORT=report and env:
 * its exit status (0 when it ran; MEMCHECK_EXITCODE=0). */
static int ranker(int alloc, const char *report, const char *const *env, int mib,
		  const char *ready, int all)
{
	const char *so = NULL;
	h_allocator(alloc, &so);
	char nm[16], na[16];
	snprintf(nm, sizeof nm, "%d", mib);
	snprintf(na, sizeof na, "%d", all);
	const char *argv[] = { h_prog("plain_field41_rank"), nm, ready, na, NULL };
	const char *e[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			    env ? env[0] : NULL, env ? env[1] : NULL, NULL };
	struct h_run r;
	if (h_run(&r, argv, e, H_PRELOAD, so) != 0)
		return -1;
	int status = r.timed_out ? -1 : r.exit_code;
	h_run_free(&r);
	return status;
}

#define RANKERS 12

/* The baseline's figure a record's violation names ("... (0.001x
 * glibc's 3.0 MiB)"), into out; false without one. */
static bool compared_with(const struct h_json *rec, char *out, size_t size)
{
	const struct h_json *v = h_json_get(rec, "violations");
	for (size_t i = 0; v && h_json_at(v, i); i++) {
		const struct h_json *s = h_json_at(v, i);
		const char *t = s->type == HJ_STR ? s->str : NULL, *at = t ? strstr(t, "glibc's ") : NULL,
			   *end = at ? strchr(at, ')') : NULL;
		if (end) {
			snprintf(out, size, "%.*s", (int)(end - at), at);
			return true;
		}
	}
	return false;
}

/* A parallel suite ends RANKERS processes of one program at once, each
 * with a relative limit (peak_rss <= 0.001x glibc's, which fails and
 * names the baseline's figure): the baseline's RANKERS records (1 to
 * RANKERS MiB touched, each its own peak RSS) are each compared with one
 * of them, every rank taken once.  On main each process counted the
 * records already in its report, and processes ending together counted
 * the same ones: several compared with one baseline record. */
START_TEST(ranks_apart_under_parallel_writers)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return; /* under glibc, the baseline's, nothing is compared */
	const char *base = h_tmppath("field41-base.jsonl");
	for (int k = 1; k <= RANKERS; k++)
		ck_assert_int_eq(ranker(H_GLIBC, base, NULL, k, h_tmppath("field41-base-ready"), 1), 0);
	const char *own = h_tmppath("field41-own.jsonl"), *ready = h_tmppath("field41-ready");
	const char *const *env = budget_env("baseline glibc\n[*]\npeak_rss <= 0.001x\n", base);
	pid_t kids[RANKERS];
	for (int i = 0; i < RANKERS; i++) {
		kids[i] = fork();
		ck_assert_int_ge(kids[i], 0);
		if (kids[i] == 0)
			_exit(ranker(_i, own, env, 1, ready, RANKERS) == 0 ? 0 : 1);
	}
	for (int i = 0; i < RANKERS; i++) {
		int st;
		ck_assert_int_eq(waitpid(kids[i], &st, 0), kids[i]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "copy %d of plain_field41_rank "
			      "under %s did not run", i, h_allocators[_i].name);
	}
	struct h_report o;
	ck_assert_msg(h_report_load(own, &o) == 0, "%s", o.error);
	ck_assert_uint_eq(o.n, RANKERS);
	ck_assert_uint_eq(h_record_count(&o, "process"), RANKERS);
	char seen[RANKERS][64];
	for (size_t i = 0; i < o.n; i++) {
		ck_assert_msg(compared_with(o.rec[i], seen[i], sizeof seen[i]),
			      "under %s: record %zu compared with no baseline record",
			      h_allocators[_i].name, i + 1);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(strcmp(seen[i], seen[j]) != 0,
				      "under %s: processes %zu and %zu of %d ending together both "
				      "compared with %s, one baseline record", h_allocators[_i].name,
				      j + 1, i + 1, RANKERS, seen[i]);
	}
	h_report_free(&o);
}
END_TEST

/* ---- session 42 (field42): records paired by their arguments ---------- */

/* The inputs of a parallel suite: peak RSS far apart, each 4x the one
 * below it, where the budget allows 2x the baseline's, so that every
 * wrong pairing of them fails (it compares one with a smaller one); the
 * smallest large enough that tcmalloc's own 6 MiB stay within it. */
static const char *const input_mib[] = { "10", "40", "160" };
#define NINPUTS (sizeof input_mib / sizeof *input_mib)
#define INPUT_BUDGET "baseline glibc\n[*]\npeak_rss <= 2x\n"

/* The shell command line cmd under allocator alloc, MEMCHECK_REPORT=
 * report and env (a budget's two variables, or NULL). */
static void shell_under(int alloc, const char *cmd, const char *report, const char *const *env)
{
	const char *so = NULL;
	h_allocator(alloc, &so);
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	const char *e[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			    env ? env[0] : NULL, env ? env[1] : NULL, NULL };
	struct h_run r;
	ck_assert_msg(h_run(&r, argv, e, H_PRELOAD, so) == 0 && !r.timed_out && r.exit_code == 0,
		      "under %s: sh -c '%s': %s\n%s", h_allocators[alloc].name, cmd, h_status(&r),
		      r.err);
	h_run_free(&r);
}

/* Every record of the report at own has its arguments' key, was compared
 * with the baseline (its verdict, given each input's peak within 2x of
 * its own input's) and passed; and `memcheck gate` of that report with
 * the baseline and budget pairs them alike (tools/records.c): 0 failed. */
static void each_with_its_own_input(int alloc, const char *own, size_t want, const char *base,
				    const char *budget_path)
{
	struct h_report o;
	ck_assert_msg(h_report_load(own, &o) == 0, "%s", o.error);
	ck_assert_uint_eq(h_record_count(&o, "process"), want);
	for (size_t i = 0; i < o.n; i++) {
		const struct h_json *v = h_json_get(o.rec[i], "violations");
		const struct h_json *first = v ? h_json_at(v, 0) : NULL;
		ck_assert_msg(!first, "under %s: record %zu (peak_rss %s) compared with another "
			      "input's baseline record: %s", h_allocators[alloc].name, i + 1,
			      h_fmt(h_u64(o.rec[i], "peak_rss")),
			      first && first->type == HJ_STR ? first->str : "?");
		ck_assert_str_eq(h_str(o.rec[i], "verdict"), "pass");
	}
	for (size_t i = 0; i < o.n; i++) {
		const char *key = h_str(o.rec[i], "args_hash");
		ck_assert_msg(key && strlen(key) == 16, "under %s: record %zu has no args_hash",
			      h_allocators[alloc].name, i + 1);
	}
	h_report_free(&o);
	const char *cli = h_env("%s/memcheck", h_build());
	const char *argv[] = { cli, "gate", "--budget", budget_path, "--baseline-file", base, own,
			       NULL };
	struct h_run r;
	ck_assert_msg(h_run(&r, argv, NULL, 0, NULL) == 0 && r.exit_code == 0 &&
			      strstr(r.out, ", 0 failed"),
		      "under %s: memcheck gate paired the records with other inputs': %s\n%s%s",
		      h_allocators[alloc].name, h_status(&r), r.out, r.err);
	h_run_free(&r);
}

/* A suite run with -j: one program's processes on NINPUTS inputs end
 * together, in whatever order (plain_field41_rank: each waits for all of
 * them), where the baseline's ended one after another.  Each is judged
 * against its own input's baseline record, by the library and by
 * memcheck gate.  On main a record was paired by its rank among the
 * program's records, the order the processes ended in (jansson under
 * ctest -j2: 194 of 196 json_process records with another input's). */
START_TEST(inputs_paired_under_parallel_run)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return; /* under glibc, the baseline's, nothing is compared */
	const char *base = h_tmppath("field42-base.jsonl"), *ready = h_tmppath("field42-ready");
	char all[16];
	snprintf(all, sizeof all, "%zu", NINPUTS);
	/* the baseline: one after another, from the smallest (no wait: the
	 * ready file already holds every byte); together, the largest
	 * writes its byte last, sees all of them at once and ends first,
	 * while the others sleep between their looks */
	write_text(ready, "w", "xxxxxxxxxxxxxxxx");
	for (size_t k = 0; k < NINPUTS; k++) {
		char *cmd = (char *)h_env("%s %s %s %s", h_prog("plain_field41_rank"), input_mib[k],
					  ready, all);
		shell_under(H_GLIBC, cmd, base, NULL);
	}
	write_text(ready, "w", "");
	const char *budget = h_tmppath("field42.budget");
	const char *const *env = budget_env_at(budget, INPUT_BUDGET, base);
	const char *own = h_tmppath("field42-own.jsonl");
	char cmd[4096];
	size_t len = 0;
	for (size_t k = 0; k < NINPUTS; k++)
		len += (size_t)snprintf(cmd + len, sizeof cmd - len, "%s %s %s %s & ",
					h_prog("plain_field41_rank"), input_mib[k], ready, all);
	snprintf(cmd + len, sizeof cmd - len, "wait");
	shell_under(_i, cmd, own, env);
	each_with_its_own_input(_i, own, NINPUTS, base, budget);
}
END_TEST

/* Pipelines of one program (xz -c | xz -d): its two processes end in
 * either order, run after run, serially too.  Each pipeline here pairs
 * two inputs far apart, the two waiting for each other (the larger then
 * ends first: above), where in the baseline's run neither waited (their
 * ready files held both bytes before) and the smaller ended first; every
 * record is judged against its own input's baseline record.  On main the
 * two of a pipeline took ranks in the order they ended: xz's tests
 * mispaired even under ctest -j1 (field41). */
START_TEST(pipelines_of_one_program)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return;
	const char *prog = h_prog("plain_field41_rank");
	char cmd[4096];
	const char *ready[NINPUTS];
	size_t len = 0;
	for (size_t k = 0; k < NINPUTS; k++) {
		ready[k] = h_tmppath(k == 0 ? "field42-pipe0" : k == 1 ? "field42-pipe1" : "field42-pipe2");
		len += (size_t)snprintf(cmd + len, sizeof cmd - len, "%s %s %s 2 | %s %s %s 2; ",
					prog, input_mib[k], ready[k], prog,
					input_mib[(k + 1) % NINPUTS], ready[k]);
	}
	snprintf(cmd + len, sizeof cmd - len, "true");
	const char *base = h_tmppath("field42-pipe-base.jsonl");
	for (size_t k = 0; k < NINPUTS; k++)
		write_text(ready[k], "w", "xx");
	shell_under(H_GLIBC, cmd, base, NULL);
	for (size_t k = 0; k < NINPUTS; k++)
		write_text(ready[k], "w", "");
	const char *own = h_tmppath("field42-pipe-own.jsonl"), *budget = h_tmppath("field42.budget");
	shell_under(_i, cmd, own, budget_env_at(budget, INPUT_BUDGET, base));
	each_with_its_own_input(_i, own, 2 * NINPUTS, base, budget);
}
END_TEST

/* ---- session 43 (field43): standard input in the arguments' key ------- */

/* One program with the same arguments on NINPUTS inputs given on its
 * standard input, which it closes before its exit (`prog - ready n <
 * input`: zlib-ng's `minigzip` under CMake's INPUT_FILE), ending in
 * another order than in the baseline's run (a parallel driver's; here
 * the baseline's from the largest, the run's from the smallest), and
 * read from files of other names with the same bytes (CMake's and the
 * shell tests' names change from run to run): each is judged against its
 * own input's baseline record, by the library and by memcheck gate.  On
 * main the arguments' key was the same for all of them, and they paired
 * by the order they ended in. */
START_TEST(inputs_on_stdin_paired_by_their_bytes)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return;
	const char *base = h_tmppath("field43-stdin-base.jsonl"), *ready = h_tmppath("field43-ready");
	const char *prog = h_prog("plain_field41_rank");
	const char *input[2][NINPUTS];
	for (size_t k = 0; k < NINPUTS; k++)
		for (int run = 0; run < 2; run++) {
			input[run][k] = h_tmppath(run ? (k == 0 ? "f43-in-b0" : k == 1 ? "f43-in-b1" : "f43-in-b2")
						      : (k == 0 ? "f43-in-a0" : k == 1 ? "f43-in-a1" : "f43-in-a2"));
			char text[32];
			snprintf(text, sizeof text, "%s\n", input_mib[k]);
			write_text(input[run][k], "w", text);
		}
	/* the ready file holds every byte: none waits */
	write_text(ready, "w", "xxxxxxxxxxxxxxxx");
	for (size_t k = NINPUTS; k-- > 0;)
		shell_under(H_GLIBC, h_env("%s - %s %zu < %s", prog, ready, NINPUTS, input[0][k]), base,
			    NULL);
	const char *budget = h_tmppath("field43-stdin.budget");
	const char *const *env = budget_env_at(budget, INPUT_BUDGET, base);
	const char *own = h_tmppath("field43-stdin-own.jsonl");
	for (size_t k = 0; k < NINPUTS; k++)
		shell_under(_i, h_env("%s - %s %zu < %s", prog, ready, NINPUTS, input[1][k]), own, env);
	each_with_its_own_input(_i, own, NINPUTS, base, budget);
}
END_TEST

/* ---- session 44 (field44): the arguments' files in the key ------------- */

/* One program run on one file name that the suite rewrites for each
 * case (`prog FILE ready n`, FILE holding the input: xz's
 * test_compress.sh compresses one input at a dozen settings into
 * tmp_comp_<input> and runs `xz -cd tmp_comp_<input>` on each), in
 * another order than in the baseline's run: each is judged against its
 * own input's baseline record, by the library and by memcheck gate.  On
 * main the arguments' key was the same for all of them (the file's name),
 * and they paired by the order they ended in. */
START_TEST(inputs_in_one_file_name_paired_by_their_bytes)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return;
	const char *base = h_tmppath("field44-args-base.jsonl"), *ready = h_tmppath("field44-ready");
	const char *prog = h_prog("plain_field41_rank"), *file = h_tmppath("field44-tmp_comp");
	char text[32];
	write_text(ready, "w", "xxxxxxxxxxxxxxxx");
	for (size_t k = NINPUTS; k-- > 0;) {
		snprintf(text, sizeof text, "%s\n", input_mib[k]);
		write_text(file, "w", text);
		shell_under(H_GLIBC, h_env("%s %s %s %zu", prog, file, ready, NINPUTS), base, NULL);
	}
	const char *budget = h_tmppath("field44-args.budget");
	const char *const *env = budget_env_at(budget, INPUT_BUDGET, base);
	const char *own = h_tmppath("field44-args-own.jsonl");
	for (size_t k = 0; k < NINPUTS; k++) {
		snprintf(text, sizeof text, "%s\n", input_mib[k]);
		write_text(file, "w", text);
		shell_under(_i, h_env("%s %s %s %zu", prog, file, ready, NINPUTS), own, env);
	}
	each_with_its_own_input(_i, own, NINPUTS, base, budget);
}
END_TEST

/* ---- session 43 (field43): one pairing for the table and the budget --- */

/* The lines of the table in text (memcheck run's stderr, compare's
 * stdout) that belong to the block of rows whose first line names prog:
 * into lines[] (at most max), their number; blocks counts such blocks. */
static size_t table_block_lines(const char *text, const char *prog, char lines[][512], size_t max,
				size_t *blocks)
{
	const char *t = strstr(text, "\nprogram ");
	size_t n = 0;
	bool in = false;
	*blocks = 0;
	for (const char *line = t ? strchr(t + 1, '\n') : NULL; line && line[1] && line[1] != '\n';
	     line = strchr(line + 1, '\n')) {
		const char *nl = strchr(line + 1, '\n');
		size_t len = nl ? (size_t)(nl - line - 1) : strlen(line + 1);
		if (!strncmp(line + 1, "    ", 4) && line[5] != ' ')
			continue; /* a violation's line under a row, indented by 4 */
		if (line[1] != ' ') {
			in = strncmp(line + 1, prog, strlen(prog)) == 0 && line[1 + strlen(prog)] == ' ';
			*blocks += in;
		}
		if (in && n < max)
			snprintf(lines[n++], 512, "%.*s", (int)(len < 511 ? len : 511), line + 1);
	}
	return n;
}

/* A program whose arguments name a temporary file (mktemp's: another
 * under each allocator), run twice, 10 then 40 MiB: no record has the
 * baseline's key, and each is paired by its rank among the program's
 * records (the budget's 3x holds only so).  The table shows each beside
 * the baseline record it was judged against, its "vs glibc" figure that
 * record's: before field43 the budget compared it with glibc's record
 * of its rank while the table, pairing by the key, put it in a row of
 * its own (4 blocks, "-" in the column). */
START_TEST(temporary_arguments_in_their_baselines_row)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return;
	const char *prog = h_prog("plain_field41_rank");
	const char *dir = h_tmppath("field43-tmp");
	char *mk = (char *)h_env("mkdir -p %s && %s 10 $(mktemp -p %s) 1 && %s 40 $(mktemp -p %s) 1",
				 dir, prog, dir, prog, dir);
	const char *budget = h_tmppath("field43.budget");
	write_text(budget, "w", "baseline glibc\n[*]\npeak_rss <= 3x\n");
	char alloc[64];
	snprintf(alloc, sizeof alloc, "glibc,%s", h_allocators[_i].name);
	struct h_res x;
	H_EXEC(&x, .cli = H_LIST("run", "-n", "1", "-a", alloc, "--budget", budget), .prog = "/bin/sh",
	       .args = H_LIST("-c", mk));
	h_expect_exit(&x, 0);
	char lines[8][512];
	size_t blocks, n = table_block_lines(x.r.err, "plain_field41_rank", lines, 8, &blocks);
	ck_assert_msg(blocks == 2 && n == 4, "under %s: %zu blocks of %zu lines for "
		      "plain_field41_rank, expected 2 of 2 (glibc's record and the one judged "
		      "against it):\n%s", h_allocators[_i].name, blocks, n, x.r.err);
	for (size_t i = 0; i < n; i++) {
		bool base = strstr(lines[i], "  glibc  ") != NULL;
		ck_assert_msg(base || strchr(lines[i], '%'), "under %s: no \"vs glibc\" figure beside "
			      "the record the budget compared with glibc's:\n%s\n(table:\n%s)",
			      h_allocators[_i].name, lines[i], x.r.err);
		ck_assert_msg(base == (i % 2 == 0), "under %s: line %zu of the blocks: %s",
			      h_allocators[_i].name, i, lines[i]);
	}
	h_res_free(&x);
}
END_TEST

/* A region ended once a run in the baseline's (cli_prog iter 1) and
 * three times in the other's (iter 3: other arguments, so paired by
 * rank, counted round): the three are each judged against the
 * baseline's one, and `memcheck compare` shows them in its row, each a
 * line with its figure against it (iter, iter #2, iter #3); on main
 * each was a row of its own, and every figure of the other report "-":
 * 6 blocks where there are 2. */
START_TEST(occurrences_counted_round_beside_their_baseline)
{
	if (_i == H_GLIBC || !h_allocator(_i, NULL))
		return;
	const char *base = h_tmppath("field43-iter-base.jsonl"), *own = h_tmppath("field43-iter.jsonl");
	struct h_res x;
	H_EXEC(&x, .cli = H_LIST("run", "-n", "1", "-a", "glibc", "--report", base, "--",
				 h_prog("cli_prog"), "iter", "1"));
	h_expect_exit(&x, 0);
	h_res_free(&x);
	H_EXEC(&x, .cli = H_LIST("run", "-n", "1", "-a", h_allocators[_i].name, "--baseline-file",
				 base, "--report", own, "--", h_prog("cli_prog"), "iter", "3"));
	h_expect_exit(&x, 0);
	h_res_free(&x);
	H_EXEC(&x, .cli = H_LIST("compare", base, own));
	h_expect_exit(&x, 0);
	char lines[16][512];
	size_t blocks, n = table_block_lines(x.r.out, "cli_prog", lines, 16, &blocks);
	ck_assert_msg(blocks == 2 && n == 6, "under %s: %zu blocks of %zu lines, expected "
		      "iter's and process's, 4 and 2 lines:\n%s", h_allocators[_i].name,
		      blocks, n, x.r.out);
	size_t numbered = 0;
	for (size_t i = 0; i < n; i++) {
		bool baseline = strstr(lines[i], "  glibc  ") != NULL;
		ck_assert_msg(baseline || strchr(lines[i], '%'), "under %s: no figure against the "
			      "baseline's record: %s\n%s", h_allocators[_i].name, lines[i], x.r.out);
		numbered += strstr(lines[i], "iter #2") || strstr(lines[i], "iter #3");
	}
	ck_assert_msg(numbered == 2, "under %s: iter #2 and #3 not each a line of iter's "
		      "block:\n%s", h_allocators[_i].name, x.r.out);
	h_res_free(&x);
}
END_TEST

static const struct h_case cases[] = {
	{ "relative limit: the baseline read only as far as the program's record",
	  .run = { .prog = "plain_clean", .args = H_LIST("plain"), .flags = H_PRELOAD | H_EXITCODE },
	  .setup = relative_limit, .record = "process", .no_err = H_LIST(NOT_USED),
	  .want = { { "verdict", .str = "pass" } } },
	{ "relative limit: still compared with that record",
	  .run = { .prog = "plain_clean", .args = H_LIST("plain"), .flags = H_PRELOAD | H_EXITCODE },
	  .allocators = H_ONLY(H_MIMALLOC) | H_ONLY(H_JEMALLOC) | H_ONLY(H_TCMALLOC),
	  .setup = tight_relative_limit, .record = "process", .exit = 23,
	  .no_err = H_LIST(NOT_USED, "no baseline for region"), .check = compared_with_glibc,
	  .want = { { "verdict", .str = "fail" } } },
	{ "absolute rules: the baseline not read at all",
	  .run = { .prog = "plain_clean", .args = H_LIST("plain"), .flags = H_PRELOAD | H_EXITCODE },
	  .setup = absolute_rules_only, .record = "process", .no_err = H_LIST(NOT_USED),
	  .want = { { "verdict", .str = "pass" } } },
	/* xz 5.6 restricts itself with Landlock (test_files.sh's `xz -t`):
	 * the budget file was opened at the region's end, refused, and
	 * every region failed "until the file is fixed", the test with it,
	 * under every allocator (main: exit 23, "cannot open: Permission
	 * denied"); now read before the restriction (sandbox.c, gate.c) */
	{ "a program restricting its own opens: the budget read before",
	  .run = { .prog = "plain_sandbox", .args = H_LIST("clean"), .flags = H_PRELOAD | H_EXITCODE },
	  .setup = budget_before_sandbox, .record = "process",
	  .no_err = H_LIST("cannot open", "Permission denied", "until the file is fixed"),
	  .want = { { "verdict", .str = "pass" } } },
	{ "memcheck run without a budget: no baseline passed",
	  .run = { .cli = H_LIST("run", "-n", "1", "-a", "glibc,mimalloc"), .prog = "cli_prog",
		   .args = H_LIST("env") },
	  .allocators = H_ONCE, .check = no_baseline_without_a_budget },
};

int main(void)
{
	TCase *tc = h_tcase("field", 120);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, baseline_not_left_in_rss, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, repeated_program_paired_in_order, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, ranks_apart_under_parallel_writers, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, inputs_paired_under_parallel_run, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, pipelines_of_one_program, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, temporary_arguments_in_their_baselines_row, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, inputs_on_stdin_paired_by_their_bytes, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, inputs_in_one_file_name_paired_by_their_bytes, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, occurrences_counted_round_beside_their_baseline, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
