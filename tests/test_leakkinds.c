/*
 * test_leakkinds.c - memcheck's leak kinds (definitely, indirectly,
 * possibly lost, still reachable) for the programs tests/prog/plain_leak_*
 * equal valgrind's LEAK SUMMARY, blocks and bytes per kind.  Each program
 * runs twice: under valgrind without memcheck, and under memcheck
 * (preloaded) without valgrind.  The figures are also written down here,
 * so the test means something where valgrind is not installed, and a
 * change to a program that valgrind would count differently shows.  The
 * same figures under mimalloc, jemalloc and tcmalloc; and a million live
 * blocks scanned in under a second.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

enum { DEF, IND, POS, REA, NKINDS };
static const char *const keys[NKINDS] = { "definitely_lost", "indirectly_lost",
					  "possibly_lost", "still_reachable" };

struct counts {
	uint64_t blocks[NKINDS], bytes[NKINDS];
};

struct expect {
	const char *prog;
	struct counts want;       /* blocks, then bytes, per kind */
	const char *verdict;
	bool vg_differs;          /* valgrind counts vg instead: memcheck(7)
				   * says why */
	struct counts vg;
};

/* valgrind's LEAK SUMMARY and memcheck's record agree on these (glibc,
 * x86-64); see each program for why. */
#define SAME false, { { 0 }, { 0 } } /* valgrind counts the same */
static const struct expect corpus[] = {
	{ "plain_leak_direct", { { 11, 0, 0, 0 }, { 4576, 0, 0, 0 } }, "fail", SAME },
	{ "plain_leak_chain", { { 1, 9, 0, 0 }, { 32, 288, 0, 0 } }, "fail", SAME },
	{ "plain_leak_tree", { { 1, 30, 0, 15 }, { 32, 960, 0, 480 } }, "fail", SAME },
	{ "plain_leak_cycle", { { 3, 5, 0, 3 }, { 192, 320, 0, 192 } }, "fail", SAME },
	{ "plain_leak_global", { { 0, 0, 0, 4 }, { 0, 0, 0, 256 } }, "pass", SAME },
	{ "plain_leak_interior", { { 1, 1, 2, 0 }, { 96, 64, 96, 0 } }, "fail", SAME },
	{ "plain_leak_stack", { { 1, 0, 0, 2 }, { 80, 0, 0, 160 } }, "fail", SAME },
	{ "plain_leak_family", { { 9, 0, 0, 0 }, { 816, 0, 0, 0 } }, "fail", SAME },
	{ "plain_leak_many", { { 2000, 18000, 0, 20001 }, { 64000, 576000, 0, 1600000 } },
	  "fail", SAME },
	/* The possibly lost block is the thread's DTV, which glibc allocates
	 * with one 16-byte slot per module with TLS: libmemcheck is one
	 * more, so it is 304 bytes under memcheck, 288 under valgrind. */
	{ "plain_leak_thread", { { 1, 0, 1, 2 }, { 32, 0, 304, 144 } }, "fail",
	  true, { { 1, 0, 1, 2 }, { 32, 0, 288, 144 } } },
};

/* valgrind's LEAK SUMMARY, or all zero after "no leaks are possible";
 * the kinds run in the same order here and in harness.h. */
static bool valgrind_counts(const char *err, struct counts *c)
{
	struct h_vg_leaks v;
	if (h_valgrind_leaks(err, &v, 1) != 1)
		return false;
	for (int k = 0; k < NKINDS; k++) {
		c->blocks[k] = v.blocks[HVG_DEF + k];
		c->bytes[k] = v.bytes[HVG_DEF + k];
	}
	return true;
}

static void expect_counts(const char *who, const char *prog, const struct counts *got,
			  const struct counts *want)
{
	for (int k = 0; k < NKINDS; k++)
		ck_assert_msg(got->blocks[k] == want->blocks[k] && got->bytes[k] == want->bytes[k],
			      "%s: %s %s: %llu bytes in %llu blocks, expected %llu bytes in "
			      "%llu blocks", prog, who, keys[k], (unsigned long long)got->bytes[k],
			      (unsigned long long)got->blocks[k],
			      (unsigned long long)want->bytes[k],
			      (unsigned long long)want->blocks[k]);
}

/* Run prog under memcheck (MEMCHECK_SCAN=scan, MEMCHECK_SCRUB=scrub);
 * its process record's kinds into *c.  supp: the shipped suppression
 * files, for the allocators' own blocks. */
static void memcheck_counts_so(const struct expect *e, const char *scan, const char *scrub,
			       const char *so, bool supp, struct counts *c, char *verdict,
			       size_t vlen)
{
	const char *report = h_tmppath("report.jsonl");
	unlink(report);
	/* valgrind runs without suppressions: so does memcheck (the shipped
	 * glibc.supp would take the thread's DTV out of its kind). */
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      h_env("MEMCHECK_SCAN=%s", scan), "MEMCHECK_MAX_LEAKS=100000",
			      supp ? "MEMCHECK_DEFAULT_SUPPRESSIONS=1"
				   : "MEMCHECK_DEFAULT_SUPPRESSIONS=0",
			      scrub ? h_env("MEMCHECK_SCRUB=%s", scrub) : NULL, NULL };
	struct h_run m;
	H_RUN(&m, H_PRELOAD, so, env, h_prog(e->prog));
	ck_assert_msg(m.exit_code == 0, "%s under memcheck: %s; stderr:\n%s", e->prog,
		      h_status(&m), m.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", m.pid);
	ck_assert_msg(rec != NULL, "%s: no \"process\" record", e->prog);
	for (int k = 0; k < NKINDS; k++) {
		c->blocks[k] = h_count(rec, keys[k], "blocks");
		c->bytes[k] = h_count(rec, keys[k], "bytes");
	}
	snprintf(verdict, vlen, "%s", h_str(rec, "verdict") ? h_str(rec, "verdict") : "?");
	/* The leak records add up to the kinds' totals. */
	uint64_t sum[NKINDS] = { 0 };
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		const struct h_json *l = h_json_at(h_json_get(rec, "leaks"), i);
		const char *kind = h_str(l, "kind");
		for (int k = 0; k < NKINDS; k++)
			if (kind && !strcmp(kind, keys[k]))
				sum[k] += h_leak_u64(rec, i, "blocks");
	}
	for (int k = 0; k < NKINDS; k++)
		ck_assert_msg(sum[k] == c->blocks[k], "%s: leak records of kind %s hold %llu "
			      "blocks, the total says %llu", e->prog, keys[k],
			      (unsigned long long)sum[k], (unsigned long long)c->blocks[k]);
	const struct h_json *sv = h_json_get(rec, "scan_seconds");
	ck_assert_msg(sv != NULL, "%s: no scan_seconds in the record", e->prog);
	h_report_free(&rep);
	h_run_free(&m);
}

static void memcheck_counts(const struct expect *e, const char *scan, struct counts *c,
			    char *verdict, size_t vlen)
{
	memcheck_counts_so(e, scan, "0", NULL, false, c, verdict, vlen);
}

START_TEST(test_kinds_match_valgrind)
{
	const struct expect *e = &corpus[_i];
	struct counts mc;
	char verdict[16];
	memcheck_counts(e, "1", &mc, verdict, sizeof verdict);
	expect_counts("memcheck", e->prog, &mc, &e->want);
	ck_assert_msg(!strcmp(verdict, e->verdict), "%s: verdict %s, expected %s", e->prog,
		      verdict, e->verdict);

	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; %s checked against the written figures only\n",
		       e->prog);
		return;
	}
	struct h_run v;
	H_RUN(&v, 0, NULL, NULL, vg, "--leak-check=full", "--show-leak-kinds=all", h_prog(e->prog));
	ck_assert_msg(v.exit_code == 0, "valgrind %s: %s; stderr:\n%s", e->prog, h_status(&v),
		      v.err);
	struct counts vc;
	ck_assert_msg(valgrind_counts(v.err, &vc), "no LEAK SUMMARY in valgrind's output:\n%s",
		      v.err);
	expect_counts("valgrind", e->prog, &vc, e->vg_differs ? &e->vg : &e->want);
	h_run_free(&v);
}
END_TEST

/* MEMCHECK_SCAN=0: every block left behind is definitely lost, as before
 * the scan existed. */
START_TEST(test_scan_off_counts_everything_definite)
{
	const struct expect *e = &corpus[_i];
	struct counts mc, want = { { 0 }, { 0 } };
	for (int k = 0; k < NKINDS; k++) {
		want.blocks[DEF] += e->want.blocks[k];
		want.bytes[DEF] += e->want.bytes[k];
	}
	char verdict[16];
	memcheck_counts(e, "0", &mc, verdict, sizeof verdict);
	expect_counts("memcheck (MEMCHECK_SCAN=0)", e->prog, &mc, &want);
	ck_assert_str_eq(verdict, want.blocks[DEF] ? "fail" : "pass");
}
END_TEST

/* The same kinds under every allocator: the scan sees the program's
 * blocks, not the allocator's bookkeeping.  What the allocators and the
 * libraries they load allocate before main (libstdc++'s emergency pool
 * under jemalloc and tcmalloc, tcmalloc's own blocks) is the process's
 * too: the shipped suppression files take it out, as they do for
 * valgrind.  plain_leak_thread is left out: its DTV has a slot for each
 * object with TLS, and the allocators bring their own.  Bytes a program
 * never writes may hold what was there before (the allocator's
 * free-list links, a freed block's pointers, memcheck's own start-up
 * calls into the C library): a lost block that such a word points to is
 * indirectly lost where valgrind, which skips the word as undefined,
 * says definitely.  memcheck clears such words from new blocks by
 * default (MEMCHECK_SCRUB): with it, the kinds are compared kind by
 * kind; with MEMCHECK_SCRUB=0, the lost blocks and bytes as one sum. */
/* Definitely and indirectly lost as one figure, in DEF. */
static void lost_as_one(struct counts *c)
{
	c->blocks[DEF] += c->blocks[IND];
	c->bytes[DEF] += c->bytes[IND];
	c->blocks[IND] = c->bytes[IND] = 0;
}

START_TEST(test_kinds_same_under_every_allocator)
{
	size_t n = sizeof corpus / sizeof corpus[0];
	const struct expect *e = &corpus[(size_t)_i % n];
	int a = H_MIMALLOC + _i / (int)n;   /* glibc is the other tests' */
	const char *so, *who = h_allocators[a].soname;
	if (e->vg_differs || !h_allocator(a, &so))
		return;
	struct counts mc, lost, want_lost = e->want;
	char verdict[16];
	memcheck_counts_so(e, "1", NULL, so, true, &mc, verdict, sizeof verdict);
	expect_counts(h_env("%s, MEMCHECK_SCRUB's default", who), e->prog, &mc,
		      &e->want);
	ck_assert_msg(!strcmp(verdict, e->verdict), "%s under %s: verdict %s, expected %s",
		      e->prog, who, verdict, e->verdict);
	memcheck_counts_so(e, "1", "0", so, true, &lost, verdict, sizeof verdict);
	lost_as_one(&lost);
	lost_as_one(&want_lost);
	expect_counts(h_env("%s, MEMCHECK_SCRUB=0 (definitely + indirectly lost)", who),
		      e->prog, &lost, &want_lost);
}
END_TEST

/* The target: a heap of a million live blocks scanned in under a
 * second (scan_seconds; about 0.12 s on the project's machines). */
START_TEST(test_scan_of_a_million_blocks_under_a_second)
{
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      "MEMCHECK_MAX_LEAKS=5", NULL };
	struct h_run m;
	H_RUN(&m, H_PRELOAD, NULL, env, h_prog("plain_scan_million"), "1000000");
	ck_assert_msg(m.exit_code == 0, "plain_scan_million: %s; stderr:\n%s", h_status(&m),
		      m.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", m.pid);
	ck_assert_msg(rec != NULL, "no \"process\" record");
	uint64_t live = h_u64(rec, "live_blocks"), sum = 0;
	for (int k = 0; k < NKINDS; k++)
		sum += h_count(rec, keys[k], "blocks");
	ck_assert_msg(live >= 1000000 && sum == live, "live_blocks %s, kinds add up to %llu",
		      h_fmt(live), (unsigned long long)sum);
	ck_assert_msg(h_count(rec, "indirectly_lost", "blocks") >= 449000,
		      "indirectly lost: %s blocks, expected about 450,000",
		      h_fmt(h_count(rec, "indirectly_lost", "blocks")));
	const struct h_json *t = h_json_get(rec, "scan_seconds");
	ck_assert_msg(t && t->type == HJ_NUM, "scan_seconds is not a number");
	printf("test_leakkinds: scan of %llu live blocks: %.3f s\n", (unsigned long long)live,
	       t->num);
	ck_assert_msg(t->num < 1.0, "scan of %s live blocks took %.3f s, over 1 s", h_fmt(live),
		      t->num);
	h_report_free(&rep);
	h_run_free(&m);
}
END_TEST

/* Still reachable blocks do not fail a region on their own, but a budget
 * can make them (memcheck-budget(5)): plain_leak_global keeps 256 bytes. */
START_TEST(test_budget_on_still_reachable)
{
	const char *budget = h_tmppath("memcheck.budget");
	FILE *f = fopen(budget, "w");
	ck_assert(f != NULL);
	fputs("still_reachable <= 255\n", f);
	fclose(f);
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      h_env("MEMCHECK_BUDGET=%s", budget), NULL };
	struct h_run m;
	H_RUN(&m, H_PRELOAD, NULL, env, h_prog("plain_leak_global"));
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", m.pid);
	ck_assert_msg(rec != NULL, "no \"process\" record");
	H_EXPECT_STR(rec, "verdict", "fail");
	ck_assert_msg(h_violation_has(rec, "still_reachable"),
		      "the violation should name still_reachable");
	h_report_free(&rep);
	h_run_free(&m);
}
END_TEST

/* Regions ended by a teardown after the test returned: the test's dead
 * frames are not roots (tests/prog/leakregion checks its own figures). */
START_TEST(test_fixture_regions)
{
	const char *env[] = { "MEMCHECK_TEXT=none", NULL };
	for (int i = 0; i < 5; i++) {
		struct h_run m;
		H_RUN(&m, 0, NULL, env, h_prog("leakregion"));
		ck_assert_msg(m.exit_code == 0, "leakregion: %s; wrong figures:\n%s",
			      h_status(&m), m.err);
		h_run_free(&m);
	}
}
END_TEST

/* A region ended on another thread: the main thread's stack is a root. */
START_TEST(test_main_stack_is_a_root_for_other_threads)
{
	const char *env[] = { "MEMCHECK_TEXT=none", NULL };
	struct h_run m;
	H_RUN(&m, 0, NULL, env, h_prog("threadroots"));
	ck_assert_msg(m.exit_code == 0, "threadroots: %s:\n%s", h_status(&m), m.err);
	h_run_free(&m);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("leakkinds", 120);
	int n = (int)(sizeof corpus / sizeof corpus[0]);
	tcase_add_loop_test(tc, test_kinds_match_valgrind, 0, n);
	tcase_add_loop_test(tc, test_scan_off_counts_everything_definite, 0, n);
	tcase_add_test(tc, test_scan_of_a_million_blocks_under_a_second);
	tcase_add_test(tc, test_budget_on_still_reachable);
	tcase_add_test(tc, test_fixture_regions);
	tcase_add_test(tc, test_main_stack_is_a_root_for_other_threads);
	tcase_add_loop_test(tc, test_kinds_same_under_every_allocator, 0,
			    n * (H_NALLOCATORS - H_MIMALLOC));
	return h_run_suite(NULL);
}
