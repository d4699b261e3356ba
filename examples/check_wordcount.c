/*
 * check_wordcount.c - a check suite with every test under memcheck.
 *
 * memcheck_tcase() is the whole integration: each test runs in a region
 * named after it and fails, with check's own message, if it leaves
 * memory behind.  Run it plainly (./check_wordcount), or preload an
 * allocator after memcheck to see the same figures under another one:
 *   LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ./check_wordcount
 * (memcheck is linked, so it comes first in symbol lookup already).
 */
#include <stdlib.h>
#include <string.h>

#include <memcheck/check.h>

#include "wordcount.h"

START_TEST(counts_words)
{
	struct wordcount *wc = wc_new();
	ck_assert_ptr_nonnull(wc);
	ck_assert_int_eq(wc_add_text(wc, "the cat and the hat, The end."), 0);
	ck_assert_uint_eq(wc_count(wc, "the"), 3);
	ck_assert_uint_eq(wc_count(wc, "cat"), 1);
	ck_assert_uint_eq(wc_count(wc, "dog"), 0);
	ck_assert_uint_eq(wc_distinct(wc), 5);
	wc_free(wc);
}
END_TEST

START_TEST(grows_past_initial_buckets)
{
	struct wordcount *wc = wc_new();
	char text[4096] = "";
	/* 26*26 distinct two-letter words force several rehashes. */
	for (char a = 'a'; a <= 'z'; a++) {
		for (char b = 'a'; b <= 'z'; b++) {
			char w[4] = { a, b, ' ', 0 };
			strcat(text, w);
		}
		ck_assert_int_eq(wc_add_text(wc, text), 0);
		text[0] = 0;
	}
	ck_assert_uint_eq(wc_distinct(wc), 26 * 26);
	wc_free(wc);
}
END_TEST

/* A region inside a test: exact figures for one operation. */
START_TEST(one_region_inside_a_test)
{
	/* check's assertions allocate (they send a message to the parent
	 * in CK_FORK mode), so the region holds only the code under test. */
	memcheck_begin("three_words");
	struct wordcount *wc = wc_new();
	int rc = wc ? wc_add_text(wc, "alpha beta gamma alpha") : -1;
	size_t distinct = wc ? wc_distinct(wc) : 0;
	wc_free(wc);
	struct memcheck_result r;
	int clean = memcheck_end(&r);

	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(distinct, 3);
	ck_assert_int_eq(clean, 0);
	/* The table, its buckets and one entry per distinct word. */
	ck_assert_uint_eq(r.allocs, 5);
	ck_assert_uint_eq(r.frees, 5);
	ck_assert_uint_gt(r.peak_live_bytes, 0);
}
END_TEST

static Suite *wordcount_suite(void)
{
	Suite *s = suite_create("wordcount");
	TCase *tc = tcase_create("core");
	memcheck_tcase(tc);
	tcase_add_test(tc, counts_words);
	tcase_add_test(tc, grows_past_initial_buckets);
	tcase_add_test(tc, one_region_inside_a_test);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(wordcount_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
