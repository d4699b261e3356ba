/*
 * test_allocfn.c - allocation functions (lib/allocfn.c): a site is named
 * by the first frame past the program's own wrappers, found by their code
 * (MEMCHECK_ALLOC_FN_AUTO) or named (MEMCHECK_ALLOC_FN, --alloc-fn), in
 * the leak records, generated suppressions (checked under valgrind too)
 * and memcheck oom's table; full stacks keep the wrappers, marked.
 * Programs: tests/prog/plain_allocfn.c at -O0, -O1 and -O2
 * (plain_allocfn_o0, plain_allocfn, plain_allocfn_o2) and
 * tests/prog/plain_voidtest.c (a test runner's void tests, likewise),
 * preloaded under each allocator.
 *
 * A run judged alone is a row, its sites and marks checked by its
 * callback.  The generated suppressions are a test of steps: the files
 * one run writes are read by the next run and by valgrind.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The site of leak i of rec: its first frame not marked alloc_fn. */
static const char *site_of(const struct h_json *rec, size_t i)
{
	size_t n = h_leak_depth(rec, i);
	for (size_t j = 0; j < n; j++) {
		const struct h_json *a = h_json_get(
			h_json_at(h_json_get(h_json_at(h_json_get(rec, "leaks"), i), "stack"), j),
			"alloc_fn");
		if (!a || a->type != HJ_BOOL || !a->b)
			return h_frame_str(rec, i, j, "function");
	}
	return n ? h_frame_str(rec, i, n - 1, "function") : "";
}

/* Is fn a frame of leak i, and is it marked? */
static int frame_mark(const struct h_json *rec, size_t i, const char *fn)
{
	for (size_t j = 0; j < h_leak_depth(rec, i); j++) {
		if (strcmp(h_frame_str(rec, i, j, "function"), fn))
			continue;
		const struct h_json *a = h_json_get(
			h_json_at(h_json_get(h_json_at(h_json_get(rec, "leaks"), i), "stack"), j),
			"alloc_fn");
		return a && a->type == HJ_BOOL && a->b ? 1 : 0;
	}
	return -1;
}

/* The sites of rec's leak records, space-separated, sorted by the
 * program's order. */
static void leak_sites(const struct h_json *rec, char *sites, size_t cap)
{
	static const char *const order[] = { "use_wrap", "use_wrap2", "use_checked", "use_either",
					     "counted", "filled", "wrap", "wrap2", "checked",
					     "either", "use_counted" };
	sites[0] = 0;
	for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
		int times = 0;
		for (size_t i = 0; i < h_nleaks(rec); i++)
			times += strcmp(site_of(rec, i), order[k]) == 0;
		for (int t = 0; t < times; t++)
			snprintf(sites + strlen(sites), cap - strlen(sites), "%s%s", sites[0] ? " " : "",
				 order[k]);
	}
}

static void expect_sites(const struct h_res *x, const struct h_json *rec, const char *want)
{
	char sites[512];
	leak_sites(rec, sites, sizeof sites);
	ck_assert_msg(!strcmp(sites, want), "%s: sites %s, expected %s", x->label, sites, want);
}

/* The thin wrappers (wrap, wrap2 over it, checked, either) are passed
 * over; counted and filled, which do more than hand the block on, name
 * themselves.  At -O2 wrap, wrap2 and either tail-call and leave no
 * frame, and the sites are the same. */
H_CHECK(past_thin_wrappers)
{
	expect_sites(x, rec, "use_wrap use_wrap2 use_checked use_either counted counted filled");
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		ck_assert_int_ne(frame_mark(rec, i, "counted"), 1);
		ck_assert_int_ne(frame_mark(rec, i, "filled"), 1);
		ck_assert_int_ne(frame_mark(rec, i, "main"), 1);
	}
}

/* At -O0 and -O1 the wrappers are in the stacks, marked. */
H_CHECK(past_thin_wrappers_marked)
{
	past_thin_wrappers(x, rec, c);
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		ck_assert_int_ne(frame_mark(rec, i, "wrap"), 0);
		ck_assert_int_ne(frame_mark(rec, i, "checked"), 0);
		if (!strcmp(site_of(rec, i), "use_wrap2"))
			ck_assert_int_eq(frame_mark(rec, i, "wrap2"), 1);
	}
}

/* MEMCHECK_ALLOC_FN_AUTO=0: only named functions count */
H_CHECK(sites_of_named_only)
{
	expect_sites(x, rec, "counted counted filled wrap wrap checked either");
}

/* named, a function that is not thin (counted) is passed over too */
H_CHECK(past_named)
{
	expect_sites(x, rec, "use_wrap use_wrap2 use_checked use_either filled use_counted "
			     "use_counted");
}

/* The text report keeps the wrappers and marks them; not counted. */
H_CHECK(counted_not_marked)
{
	char *line = strstr(x->r.err, ": counted (");
	ck_assert_ptr_nonnull(line);
	char *eol = strchr(line, '\n');
	ck_assert_msg(!eol || !memmem(line, (size_t)(eol - line), "[allocation function]", 21),
		      "%s: counted is marked:\n%s", x->label, x->r.err);
}

/* memcheck oom files each failed call under the caller of the wrappers;
 * the one error path that loses a block (use_counted's) is the one
 * leaked run, at counted, which is no wrapper.  --alloc-fn names it. */
static void expect_oom_sites(const struct h_res *x, bool named)
{
	char *text = h_read_file(x->file, NULL);
	ck_assert_ptr_nonnull(text);
	char err[256];
	struct h_json *j = h_json_parse(text, strlen(text), err, sizeof err);
	ck_assert_msg(j != NULL, "%s: %s", x->label, err);
	const struct h_json *sites = h_json_get(j, "sites");
	char seen[512] = "";
	for (size_t i = 0; i < sites->n; i++)
		snprintf(seen + strlen(seen), sizeof seen - strlen(seen), " %s",
			 h_str(h_json_at(sites, i), "function"));
	ck_assert_msg(!strcmp(seen, named ? " use_wrap use_wrap2 use_checked use_either "
						"use_counted use_counted filled"
					  : " use_wrap use_wrap2 use_checked use_either "
					    "counted filled"),
		      "%s: sites:%s", x->label, seen);
	const struct h_json *res = h_json_get(j, "results");
	for (size_t i = 0; i < res->n; i++) {
		const struct h_json *r = h_json_at(res, i);
		if (strcmp(h_str(r, "outcome"), "leaked"))
			continue;
		ck_assert_str_eq(h_str(h_json_get(r, "failed_call"), "function"),
				 named ? "use_counted" : "counted");
		ck_assert_str_eq(h_str(h_json_get(r, "leak"), "function"),
				 named ? "use_counted" : "counted");
	}
	h_json_free(j);
	free(text);
}

H_CHECK(oom_callers)
{
	expect_oom_sites(x, false);
}
H_CHECK(oom_named)
{
	expect_oom_sites(x, true);
}

/* A void test function called through a pointer by its runner
 * (plain_voidtest.c, Unity's shape) is no wrapper, though it returns
 * with the block in rax: its leak is named at its own line, the
 * runner's never; a function through a pointer whose caller keeps the
 * block still is one, and one return address (made's) is a wrapper's
 * in one stack and a site in another (the JSON record's names are
 * memoized by address). */
H_CHECK(void_tests_named)
{
	static const char *const want[][2] = { { "assert_leak", "assert_leak" },
					       { "assert_wrap", "assert_wrap" },
					       { "keep_from", "use_result" },
					       { "made", "made" },
					       { "keep_made", "keep_made" } };
	ck_assert_uint_eq(h_nleaks(rec), 5);
	for (size_t w = 0; w < 5; w++) {
		bool seen = false;
		for (size_t i = 0; i < h_nleaks(rec) && !seen; i++) {
			if (strcmp(site_of(rec, i), want[w][0]))
				continue;
			seen = true;
			size_t d = 0;
			while (strcmp(h_frame_str(rec, i, d, "function"), want[w][0]))
				d++;
			ck_assert_int_eq(h_frame_line(rec, i, d),
					 h_site_line("plain_voidtest.c", want[w][1]));
		}
		ck_assert_msg(seen, "%s: no leak named at %s", x->label, want[w][0]);
	}
	for (size_t i = 0; i < h_nleaks(rec); i++)
		ck_assert_int_ne(frame_mark(rec, i, "run_test"), 1);
}

/* BUILD leak, preloaded, its records */
#define LEAK(build, ...) .run = { .prog = build, .args = H_LIST("leak"), .flags = H_PRELOAD, \
				  ##__VA_ARGS__ }
/* memcheck oom --report FILE OPTION -- plain_allocfn oom, the allocator
 * in LD_PRELOAD, MEMCHECK_TEXT unset */
#define OOM(option) .run = { .cli = H_LIST("oom", "--report", H_FILE, option), .text = "", \
			     .prog = "plain_allocfn", .args = H_LIST("oom") },         \
	.file = "", .setup = h_setup_allocator_preloaded, .exit = 1,                  \
	.out = H_LIST("6 handled (0 expected), 1 leaked")

static const struct h_case cases[] = {
	{ "-O0", LEAK("plain_allocfn_o0"), .record = "process", .check = past_thin_wrappers_marked },
	{ "-O1", LEAK("plain_allocfn"), .record = "process", .check = past_thin_wrappers_marked },
	{ "-O2", LEAK("plain_allocfn_o2"), .record = "process", .check = past_thin_wrappers },
	{ "auto off", LEAK("plain_allocfn", .env = H_LIST("MEMCHECK_ALLOC_FN_AUTO=0")),
	  .record = "process", .check = sites_of_named_only },
	{ "named", LEAK("plain_allocfn", .env = H_LIST("MEMCHECK_ALLOC_FN_AUTO=0",
						       "MEMCHECK_ALLOC_FN=wrap*, checked,either,count?d")),
	  .record = "process", .check = past_named },
	{ "text", LEAK("plain_allocfn", .env = H_LIST("MEMCHECK_TEXT=full"), .no_report = true),
	  .err = H_LIST("wrap2 (", "[allocation function]"),
	  .check = counted_not_marked },
	{ "void tests -O0", .run = { .prog = "plain_voidtest_o0", .flags = H_PRELOAD },
	  .record = "process", .check = void_tests_named },
	{ "void tests -O1", .run = { .prog = "plain_voidtest", .flags = H_PRELOAD },
	  .record = "process", .check = void_tests_named },
	{ "void tests -O2", .run = { .prog = "plain_voidtest_o2", .flags = H_PRELOAD },
	  .record = "process", .check = void_tests_named },
	{ "oom", OOM("--jobs=2"), .check = oom_callers },
	{ "oom --alloc-fn", OOM("--alloc-fn=counted"), .check = oom_named },
};

/* Generated suppressions name the real site ('...' stands for malloc
 * and the wrappers), and suppress every record under memcheck and
 * under valgrind, whose stacks still hold the wrappers. */
START_TEST(generated_suppressions_start_past_wrappers)
{
	if (!h_allocator(_i, NULL))
		return;
	const char *gen = h_tmppath("allocfn.supp");
	struct h_res x;
	H_EXEC(&x, .prog = "plain_allocfn", .args = H_LIST("leak"), .alloc = _i, .flags = H_PRELOAD,
	       .env = H_LIST(h_env("MEMCHECK_GEN_SUPPRESSIONS=%s", gen)), .no_report = true);
	h_res_free(&x);
	char *text = h_read_file(gen, NULL);
	ck_assert_ptr_nonnull(text);
	static const char *const gone[] = { "   fun:wrap\n", "   fun:wrap2\n", "   fun:checked\n",
					     "   fun:either\n" };
	static const char *const there[] = { "   ...\n   fun:use_wrap\n",
					     "   ...\n   fun:use_wrap2\n",
					     "   ...\n   fun:use_checked\n",
					     "   ...\n   fun:counted\n", "   ...\n   fun:filled\n" };
	for (size_t k = 0; k < 4; k++)
		ck_assert_msg(!strstr(text, gone[k]), "%s in:\n%s", gone[k], text);
	for (size_t k = 0; k < 5; k++)
		ck_assert_msg(strstr(text, there[k]), "%s not in:\n%s", there[k], text);
	free(text);
	H_EXEC(&x, .prog = "plain_allocfn", .args = H_LIST("leak"), .alloc = _i, .flags = H_PRELOAD,
	       .env = H_LIST(h_env("MEMCHECK_SUPPRESSIONS=%s", gen)));
	const struct h_json *rec = h_rec(&x, "process");
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 0);
	ck_assert_uint_ge(h_count(rec, "suppressed", "blocks"), 7);
	h_res_free(&x);
	const char *vg = h_valgrind_path();
	if (_i != 0 || !vg)
		return; /* valgrind replaces the allocator: once is enough */
	H_EXEC(&x, .prog = vg, .args = H_LIST("--leak-check=full", h_env("--suppressions=%s", gen),
					      h_prog("plain_allocfn"), "leak"),
	       .text = "", .no_report = true);
	struct h_vg_leaks l[2];
	ck_assert_msg(h_valgrind_leaks(x.r.err, l, 2) == 1, "%s", x.r.err);
	ck_assert_msg(l[0].blocks[HVG_DEF] == 0 && l[0].blocks[HVG_SUP] >= 7, "%s", x.r.err);
	h_res_free(&x);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("allocfn", 300);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, generated_suppressions_start_past_wrappers, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
