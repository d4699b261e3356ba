/*
 * test_allocfn.c - allocation functions (lib/allocfn.c): a site is named
 * by the first frame past the program's own wrappers, found by their code
 * (MEMCHECK_ALLOC_FN_AUTO) or named (MEMCHECK_ALLOC_FN, --alloc-fn), in
 * the leak records, generated suppressions (checked under valgrind too)
 * and memcheck oom's table; full stacks keep the wrappers, marked.
 * Programs: tests/prog/plain_allocfn.c at -O0, -O1 and -O2
 * (plain_allocfn_o0, plain_allocfn, plain_allocfn_o2), preloaded under
 * each allocator.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *const builds[] = { "plain_allocfn_o0", "plain_allocfn", "plain_allocfn_o2" };

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

/* Run build leak under allocator so with env; the sites of its leak
 * records, space-separated and sorted by the program's order. */
static void leak_sites(const char *build, const char *so, const char *const *extra,
		       char *sites, size_t cap, struct h_report *rep)
{
	const char *report = h_tmppath("allocfn.jsonl");
	const char *env[8] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none" };
	for (int i = 0; extra && extra[i]; i++)
		env[2 + i] = extra[i];
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog(build), "leak");
	ck_assert_msg(r.exit_code == 0, "%s: %s\n%s", build, h_status(&r), r.err);
	h_run_free(&r);
	H_LOAD(rep, report);
	const struct h_json *rec = h_record(rep, "process", 0);
	ck_assert_ptr_nonnull(rec);
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

/* Every build, every allocator: the thin wrappers (wrap, wrap2 over it,
 * checked, either) are passed over; counted and filled, which do more
 * than hand the block on, name themselves.  At -O0 and -O1 the wrappers
 * are in the stacks, marked; at -O2 wrap, wrap2 and either tail-call and
 * leave no frame, and the sites are the same. */
START_TEST(sites_are_past_thin_wrappers)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	for (size_t b = 0; b < sizeof builds / sizeof *builds; b++) {
		char sites[512];
		struct h_report rep;
		leak_sites(builds[b], so, NULL, sites, sizeof sites, &rep);
		ck_assert_msg(!strcmp(sites, "use_wrap use_wrap2 use_checked use_either counted "
				      "counted filled"),
			      "%s under %s: sites %s", builds[b], h_allocator_name(_i), sites);
		const struct h_json *rec = h_record(&rep, "process", 0);
		for (size_t i = 0; i < h_nleaks(rec); i++) {
			ck_assert_int_ne(frame_mark(rec, i, "counted"), 1);
			ck_assert_int_ne(frame_mark(rec, i, "filled"), 1);
			ck_assert_int_ne(frame_mark(rec, i, "main"), 1);
			if (b < 2) { /* the wrappers' frames are there, marked */
				ck_assert_int_ne(frame_mark(rec, i, "wrap"), 0);
				ck_assert_int_ne(frame_mark(rec, i, "checked"), 0);
				if (!strcmp(site_of(rec, i), "use_wrap2"))
					ck_assert_int_eq(frame_mark(rec, i, "wrap2"), 1);
			}
		}
		h_report_free(&rep);
	}
}
END_TEST

/* MEMCHECK_ALLOC_FN_AUTO=0: only named functions count; named, a
 * function that is not thin (counted) is passed over too. */
START_TEST(auto_off_and_named_patterns)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	char sites[512];
	struct h_report rep;
	const char *off[] = { "MEMCHECK_ALLOC_FN_AUTO=0", NULL };
	leak_sites("plain_allocfn", so, off, sites, sizeof sites, &rep);
	ck_assert_msg(!strcmp(sites, "counted counted filled wrap wrap checked either"),
		      "auto off: sites %s", sites);
	h_report_free(&rep);
	const char *named[] = { "MEMCHECK_ALLOC_FN_AUTO=0", "MEMCHECK_ALLOC_FN=wrap*, checked,either,count?d",
				NULL };
	leak_sites("plain_allocfn", so, named, sites, sizeof sites, &rep);
	ck_assert_msg(!strcmp(sites, "use_wrap use_wrap2 use_checked use_either filled use_counted "
				     "use_counted"),
		      "named: sites %s", sites);
	h_report_free(&rep);
}
END_TEST

/* The text report keeps the wrappers and marks them. */
START_TEST(text_marks_the_wrappers)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *env[] = { "MEMCHECK_TEXT=full", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_allocfn"), "leak");
	ck_assert_msg(strstr(r.err, "wrap2 (") && strstr(r.err, "[allocation function]"),
		      "%s", r.err);
	char *line = strstr(r.err, ": counted (");
	ck_assert_ptr_nonnull(line);
	char *eol = strchr(line, '\n');
	ck_assert_msg(!eol || !memmem(line, (size_t)(eol - line), "[allocation function]", 21),
		      "counted is marked:\n%s", r.err);
	h_run_free(&r);
}
END_TEST

/* Generated suppressions name the real site ('...' stands for malloc
 * and the wrappers), and suppress every record under memcheck and
 * under valgrind, whose stacks still hold the wrappers. */
START_TEST(generated_suppressions_start_past_wrappers)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *gen = h_tmppath("allocfn.supp");
	remove(gen);
	const char *report = h_tmppath("allocfn-supp.jsonl");
	const char *env[] = { h_env("MEMCHECK_GEN_SUPPRESSIONS=%s", gen),
			      h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_allocfn"), "leak");
	h_run_free(&r);
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
	remove(report);
	const char *use[] = { h_env("MEMCHECK_SUPPRESSIONS=%s", gen),
			      h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	H_RUN(&r, H_PRELOAD, so, use, h_prog("plain_allocfn"), "leak");
	h_run_free(&r);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", 0);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 0);
	ck_assert_uint_ge(h_count(rec, "suppressed", "blocks"), 7);
	h_report_free(&rep);
	const char *vg = h_valgrind_path();
	if (_i != 0 || !vg)
		return; /* valgrind replaces the allocator: once is enough */
	const char *vgargv[] = { vg, "--leak-check=full", h_env("--suppressions=%s", gen),
				 h_prog("plain_allocfn"), "leak", NULL };
	ck_assert(h_run(&r, vgargv, NULL, 0, NULL) == 0);
	struct h_vg_leaks l[2];
	ck_assert_msg(h_valgrind_leaks(r.err, l, 2) == 1, "%s", r.err);
	ck_assert_msg(l[0].blocks[HVG_DEF] == 0 && l[0].blocks[HVG_SUP] >= 7, "%s", r.err);
	h_run_free(&r);
}
END_TEST

/* memcheck oom files each failed call under the caller of the wrappers;
 * the one error path that loses a block (use_counted's) is the one
 * leaked run, at counted, which is no wrapper.  --alloc-fn names it. */
START_TEST(oom_rows_are_the_callers)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	for (int named = 0; named < 2; named++) {
		const char *report = h_tmppath("allocfn-oom.json");
		const char *argv[] = { h_env("%s/memcheck", h_build()), "oom", "--report", report,
				       named ? "--alloc-fn=counted" : "--jobs=2", "--",
				       h_prog("plain_allocfn"), "oom", NULL };
		const char *env[] = { so ? h_env("LD_PRELOAD=%s", so) : NULL, NULL };
		struct h_run r;
		ck_assert(h_run(&r, argv, so ? env : NULL, 0, NULL) == 0);
		ck_assert_msg(r.exit_code == 1, "%s\n%s%s", h_status(&r), r.out, r.err);
		ck_assert_msg(strstr(r.out, "6 handled (0 expected), 1 leaked"), "%s", r.out);
		h_run_free(&r);
		char *text = h_read_file(report, NULL);
		char err[256];
		struct h_json *j = h_json_parse(text, strlen(text), err, sizeof err);
		ck_assert_msg(j != NULL, "%s", err);
		const struct h_json *sites = h_json_get(j, "sites");
		char seen[512] = "";
		for (size_t i = 0; i < sites->n; i++)
			snprintf(seen + strlen(seen), sizeof seen - strlen(seen), " %s",
				 h_str(h_json_at(sites, i), "function"));
		ck_assert_msg(!strcmp(seen, named ? " use_wrap use_wrap2 use_checked use_either "
							"use_counted use_counted filled"
						  : " use_wrap use_wrap2 use_checked use_either "
						    "counted filled"),
			      "sites:%s", seen);
		const struct h_json *res = h_json_get(j, "results");
		for (size_t i = 0; i < res->n; i++) {
			const struct h_json *x = h_json_at(res, i);
			if (strcmp(h_str(x, "outcome"), "leaked"))
				continue;
			ck_assert_str_eq(h_str(h_json_get(x, "failed_call"), "function"),
					 named ? "use_counted" : "counted");
			ck_assert_str_eq(h_str(h_json_get(x, "leak"), "function"),
					 named ? "use_counted" : "counted");
		}
		h_json_free(j);
		free(text);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("allocfn", 300);
	tcase_add_loop_test(tc, sites_are_past_thin_wrappers, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, auto_off_and_named_patterns, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, text_marks_the_wrappers, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, generated_suppressions_start_past_wrappers, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, oom_rows_are_the_callers, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
