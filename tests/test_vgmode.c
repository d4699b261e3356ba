/*
 * test_vgmode.c - valgrind mode: `memcheck run --valgrind` runs
 * tests/prog/vgmode (a leaking region, a clean one) under valgrind with
 * glibc and with tcmalloc.  Every record says leak_check "valgrind"; its
 * leak figures are the changes valgrind's own leak check printed for the
 * region in the same run; memcheck still counts the region's calls.
 * Outside valgrind the records say "memcheck".  Skipped without valgrind.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static bool have_valgrind(void)
{
	if (access("/usr/bin/valgrind", X_OK) == 0 || access("/usr/local/bin/valgrind", X_OK) == 0)
		return true;
	printf("note: valgrind not installed; skipping\n");
	return false;
}

/* The change valgrind printed for one leak kind in the LEAK SUMMARY that
 * follows memcheck's line for the region's end ("**PID** memcheck: region
 * "NAME" ends"), in the output of the run under allocator label:
 * "definitely lost: 32 (+32) bytes in 1 (+1) blocks". */
static bool vg_delta(const char *err, const char *label, const char *region, const char *kind,
		     int64_t *bytes, int64_t *blocks)
{
	char run[128], mark[192], k[64];
	snprintf(run, sizeof run, "memcheck: running under %s in valgrind", label);
	snprintf(mark, sizeof mark, "memcheck: region \"%s\" ends", region);
	snprintf(k, sizeof k, "%s: ", kind);
	const char *s = strstr(err, run);
	if (!s || !(s = strstr(s, mark)) || !(s = strstr(s, "LEAK SUMMARY:")) ||
	    !(s = strstr(s, k)))
		return false;
	s += strlen(k);
	/* "32 (+32) bytes in 1 (+1) blocks", valgrind's commas allowed */
	char digits[4][32];
	int n = 0;
	for (; *s && *s != '\n' && n < 4; s++) {
		if ((*s >= '0' && *s <= '9') || *s == '-') {
			size_t len = 0;
			while (len < 31 && ((*s >= '0' && *s <= '9') || *s == ',' || *s == '-')) {
				if (*s != ',')
					digits[n][len++] = *s;
				s++;
			}
			digits[n++][len] = 0;
		}
	}
	if (n != 4)
		return false;
	*bytes = strtoll(digits[1], NULL, 10);
	*blocks = strtoll(digits[3], NULL, 10);
	return true;
}

static const struct h_json *find(const struct h_report *rep, const char *name,
				 const char *allocator)
{
	for (size_t i = 0; i < rep->n; i++) {
		const char *n = h_str(rep->rec[i], "name"), *a = h_str(rep->rec[i], "allocator");
		if (n && a && !strcmp(n, name) && !strcmp(a, allocator))
			return rep->rec[i];
	}
	return NULL;
}

/* rec[key] equals valgrind's change for kind, blocks and bytes. */
static void expect_kind(const struct h_json *rec, const char *err, const char *label,
			const char *key, const char *kind, const char *kind2)
{
	const char *region = h_str(rec, "name");
	int64_t bytes, blocks, b2 = 0, n2 = 0;
	ck_assert_msg(vg_delta(err, label, region, kind, &bytes, &blocks),
		      "%s, region %s: no \"%s\" in valgrind's summary at the region's end:\n%s",
		      label, region, kind, err);
	if (kind2)
		ck_assert(vg_delta(err, label, region, kind2, &b2, &n2));
	bytes += b2;
	blocks += n2;
	ck_assert_msg(bytes >= 0 && blocks >= 0, "%s: valgrind's %s went down", region, kind);
	H_EXPECT_COUNT(rec, key, "bytes", (uint64_t)bytes);
	H_EXPECT_COUNT(rec, key, "blocks", (uint64_t)blocks);
}

static void check_allocator(const struct h_report *rep, const char *err, const char *label)
{
	const struct h_json *leaky = find(rep, "leaky", label), *clean = find(rep, "clean", label);
	ck_assert_msg(leaky && clean, "%s: records of both regions expected, got %zu records",
		      label, rep->n);
	const struct h_json *recs[] = { leaky, clean };
	for (int i = 0; i < 2; i++) {
		const struct h_json *rec = recs[i];
		H_EXPECT_STR(rec, "leak_check", "valgrind");
		/* valgrind's leak check, memcheck's wrapper still counting */
		uint64_t allocs = h_u64(rec, "allocs");
		ck_assert_msg(allocs > 0 && allocs != H_NULL && allocs != H_MISSING,
			      "%s, %s: memcheck counted %s allocations under valgrind", label,
			      h_str(rec, "name"), h_fmt(allocs));
		/* definite + indirect: valgrind's COUNT_LEAKS gives their sum */
		expect_kind(rec, err, label, "definitely_lost", "definitely lost",
			    "indirectly lost");
		const struct h_json *ind = h_json_get(rec, "indirectly_lost");
		ck_assert_msg(ind && ind->type == HJ_NULL, "%s: indirectly_lost should be null",
			      label);
		expect_kind(rec, err, label, "possibly_lost", "possibly lost", NULL);
		expect_kind(rec, err, label, "still_reachable", "still reachable", NULL);
		expect_kind(rec, err, label, "suppressed", "suppressed", NULL);
	}
	/* the program leaks in "leaky": some of each kind it makes */
	ck_assert_msg(h_count(leaky, "definitely_lost", "blocks") >= 2 &&
		      h_count(leaky, "still_reachable", "blocks") >= 1,
		      "%s: leaky's leaks not seen", label);
	H_EXPECT_STR(leaky, "verdict", "fail");
	H_EXPECT_STR(clean, "verdict", "pass");
	H_EXPECT_COUNT(clean, "definitely_lost", "blocks", 0);
	H_EXPECT_COUNT(clean, "still_reachable", "blocks", 0);
	ck_assert_msg(h_u64(clean, "allocs") == h_u64(clean, "frees"),
		      "%s: clean region allocs %s, frees %s", label,
		      h_fmt(h_u64(clean, "allocs")), h_fmt(h_u64(clean, "frees")));
}

/* `memcheck run --valgrind -a tcmalloc --report REPORT -- prog [arg]`
 * (glibc alone where tcmalloc is not installed); *tc says which. */
static void run_valgrind_mode(struct h_run *r, bool *tc, const char *report, const char *prog,
			      const char *arg)
{
	*tc = h_allocator_so(h_allocators[H_TCMALLOC].soname) != NULL;
	char mc[4096];
	snprintf(mc, sizeof mc, "%s/memcheck", h_build());
	H_RUN(r, 0, NULL, NULL, mc, "run", "--valgrind", "-a", *tc ? "tcmalloc" : "glibc",
	      "--report", report, "--", prog, arg);
}

START_TEST(test_run_valgrind_glibc_and_tcmalloc)
{
	if (!have_valgrind())
		return;
	bool tc;
	const char *report = h_tmppath("vg.jsonl");
	struct h_run r;
	run_valgrind_mode(&r, &tc, report, h_prog("vgmode"), NULL);
	ck_assert_msg(r.exit_code == 1, "memcheck run --valgrind: %s, expected exit 1 (the "
		      "leaky region fails); stderr:\n%s", h_status(&r), r.err);
	/* the text report says whose figures they are */
	ck_assert_msg(strstr(r.err, "LEAK SUMMARY (valgrind's") &&
		      strstr(r.err, "no leaks (glibc; valgrind's leak check)"),
		      "text report does not name valgrind's leak check:\n%s", r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	check_allocator(&rep, r.err, "glibc");
	if (tc)
		check_allocator(&rep, r.err, "tcmalloc");
	else
		printf("note: tcmalloc not installed; glibc only\n");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Nested regions: the inner one's leak is its own, the outer one's
 * includes it (as with memcheck's scan).  Across fork: the child's
 * region starts again there and sees the child's leak; the parent's does
 * not. */
START_TEST(test_nested_and_fork)
{
	if (!have_valgrind())
		return;
	bool tc;
	const char *report = h_tmppath("vgnest.jsonl");
	struct h_run r;
	run_valgrind_mode(&r, &tc, report, h_prog("vgmode"), "nested");
	ck_assert_msg(r.exit_code == 1, "nested: %s; stderr:\n%s", h_status(&r), r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const char *label = tc ? "tcmalloc" : "glibc";
	const struct h_json *inner = find(&rep, "inner", label);
	const struct h_json *outer = find(&rep, "outer", label);
	ck_assert_msg(inner && outer, "%s: no record of region inner or outer", label);
	H_EXPECT_STR(inner, "leak_check", "valgrind");
	H_EXPECT_COUNT(inner, "definitely_lost", "blocks", 1);
	H_EXPECT_COUNT(inner, "definitely_lost", "bytes", 32);
	H_EXPECT_COUNT(outer, "definitely_lost", "blocks", 2);
	H_EXPECT_COUNT(outer, "definitely_lost", "bytes", 48);
	h_report_free(&rep);
	h_run_free(&r);

	report = h_tmppath("vgfork.jsonl");
	run_valgrind_mode(&r, &tc, report, h_prog("vgmode"), "fork");
	ck_assert_msg(r.exit_code == 1, "fork: %s; stderr:\n%s", h_status(&r), r.err);
	H_LOAD(&rep, report);
	size_t children = 0, parents = 0;
	for (size_t i = 0; i < rep.n; i++) {
		const struct h_json *rec = rep.rec[i];
		const char *a = h_str(rec, "allocator");
		if (strcmp(h_str(rec, "name"), "parent") || !a || strcmp(a, label))
			continue;
		H_EXPECT_STR(rec, "leak_check", "valgrind");
		uint64_t lost = h_count(rec, "definitely_lost", "bytes");
		if (lost == 48) {
			H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 1);
			children++;
		} else {
			H_EXPECT_COUNT(rec, "definitely_lost", "bytes", 0);
			parents++;
		}
	}
	ck_assert_msg(children == 1 && parents == 1, "fork: %zu child and %zu parent records",
		      children, parents);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* The same program without valgrind: memcheck's own scan. */
START_TEST(test_outside_valgrind_memcheck_classifies)
{
	const char *report = h_tmppath("mc.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("vgmode"));
	ck_assert_msg(r.exit_code == 0, "vgmode: %s; stderr:\n%s", h_status(&r), r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(rep.n >= 2, "expected the regions' records, got %zu", rep.n);
	for (size_t i = 0; i < rep.n; i++)
		H_EXPECT_STR(rep.rec[i], "leak_check", "memcheck");
	const struct h_json *leaky = h_record(&rep, "leaky", 0);
	ck_assert(leaky != NULL);
	H_EXPECT_COUNT(leaky, "indirectly_lost", "blocks", 1);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* memcheck's counts under valgrind mode are valgrind's "total heap
 * usage" of the same program run under valgrind alone: the wrapper sees
 * every call, with glibc and with tcmalloc.  The process region also
 * counts what tcmalloc and the libstdc++ it loads allocate before main:
 * a program that does nothing (tests/prog/plain_empty.c) measures that
 * under each allocator, and it is taken off. */
START_TEST(test_counts_equal_valgrind_alone)
{
	if (!have_valgrind())
		return;
	const char *prog = h_prog("plain_mix");
	struct h_run v;
	H_RUN(&v, 0, NULL, NULL, "/usr/bin/env", "valgrind", "--leak-check=no", prog, "3000");
	uint64_t va, vf, vb;
	ck_assert_msg(h_valgrind_heap_usage(v.err, &va, &vf, &vb),
		      "no \"total heap usage\" from valgrind alone:\n%s", v.err);
	bool tc;
	const char *base_report = h_tmppath("empty.jsonl");
	struct h_run b;
	run_valgrind_mode(&b, &tc, base_report, h_prog("plain_empty"), NULL);
	struct h_report base;
	H_LOAD(&base, base_report);
	const char *report = h_tmppath("mix.jsonl");
	struct h_run r;
	run_valgrind_mode(&r, &tc, report, prog, "3000");
	struct h_report rep;
	H_LOAD(&rep, report);
	size_t seen = 0;
	for (size_t i = 0; i < rep.n; i++) {
		const struct h_json *rec = rep.rec[i], *empty = NULL;
		H_EXPECT_STR(rec, "name", "process");
		H_EXPECT_STR(rec, "leak_check", "valgrind");
		for (size_t j = 0; j < base.n && !empty; j++)
			if (!strcmp(h_str(base.rec[j], "allocator"), h_str(rec, "allocator")))
				empty = base.rec[j];
		ck_assert_msg(empty != NULL, "plain_empty: no %s record", h_str(rec, "allocator"));
		ck_assert_msg(va > 1000, "valgrind alone counted %llu allocations",
			      (unsigned long long)va);
		H_EXPECT_U64(rec, "allocs", h_u64(empty, "allocs") + va);
		H_EXPECT_U64(rec, "frees", h_u64(empty, "frees") + vf);
		H_EXPECT_U64(rec, "bytes_allocated", h_u64(empty, "bytes_allocated") + vb);
		seen++;
	}
	ck_assert_msg(seen == (tc ? 2u : 1u), "%zu records; stderr:\n%s", seen, r.err);
	h_report_free(&base);
	h_report_free(&rep);
	h_run_free(&b);
	h_run_free(&r);
	h_run_free(&v);
}
END_TEST

/* somalloc=nouserintercepts under tcmalloc: valgrind serves no block.
 * memcheck says so and keeps its own scan. */
START_TEST(test_valgrind_blind_keeps_memcheck_scan)
{
	const char *tc = h_allocator_so(h_allocators[H_TCMALLOC].soname);
	if (!have_valgrind() || !tc)
		return;
	const char *report = h_tmppath("blind.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, tc, env, "/usr/bin/valgrind",
	      "--soname-synonyms=somalloc=nouserintercepts", h_prog("vgmode"));
	ck_assert_msg(strstr(r.err, "does not serve the allocator's blocks"),
		      "no message about valgrind's blindness:\n%s", r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *leaky = h_record(&rep, "leaky", 0);
	ck_assert_msg(leaky != NULL, "no record of \"leaky\"; stderr:\n%s", r.err);
	H_EXPECT_STR(leaky, "leak_check", "memcheck");
	H_EXPECT_COUNT(leaky, "indirectly_lost", "blocks", 1);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Without valgrind in PATH: a clear message, exit 2. */
START_TEST(test_valgrind_missing)
{
	char mc[4096];
	snprintf(mc, sizeof mc, "%s/memcheck", h_build());
	struct h_run r;
	H_RUN(&r, 0, NULL, NULL, "/usr/bin/env", "PATH=/nonexistent", mc, "run", "--valgrind",
	      "--", h_prog("vgmode"));
	ck_assert_msg(r.exit_code == 2, "%s, expected exit 2", h_status(&r));
	ck_assert_msg(strstr(r.err, "valgrind is not installed"), "no message:\n%s", r.err);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("vgmode", 60);
	tcase_add_test(tc, test_run_valgrind_glibc_and_tcmalloc);
	tcase_add_test(tc, test_nested_and_fork);
	tcase_add_test(tc, test_outside_valgrind_memcheck_classifies);
	tcase_add_test(tc, test_counts_equal_valgrind_alone);
	tcase_add_test(tc, test_valgrind_blind_keeps_memcheck_scan);
	tcase_add_test(tc, test_valgrind_missing);
	return h_run_suite(NULL);
}
