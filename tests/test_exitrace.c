/*
 * test_exitrace.c - the exit's record while other threads still allocate
 * and free (tests/prog/plain_exit_churn): its figures must be one
 * moment's, as valgrind's are (it stops every thread at exit).
 *
 * Session 32 found records whose figures did not add up (lz4's thread
 * pool under mimalloc: live_bytes 29,633,107 against bytes_allocated
 * 29,629,075 with no frees): the counts were read when the region's end
 * began, the blocks later, in the scan, while the threads went on.  And
 * a thread stopped for the scan between its change to the block table
 * and its count of it (account.c counts after the table) left one block
 * in the one and not the other.  Before the fix, 22 of 40 such records
 * (10 runs under each of the four allocators, 3 threads) did not add
 * up, under every allocator.
 *
 * Each run, under each allocator, with 1, 3 or 6 churning threads, and
 * every fourth without the scan (MEMCHECK_SCAN=0: the blocks walked
 * instead), must give a record where
 *   allocs - frees = live_blocks, bytes_allocated - bytes_freed =
 *   live_bytes; the five kinds (suppressed included) sum to the blocks
 *   and bytes in use; the leaks listed sum to the four kinds;
 * and valgrind's text (MEMCHECK_VALGRIND_TEXT=summary) says the same:
 *   "in use at exit" = allocs - frees blocks, LEAK SUMMARY's kinds sum
 *   to it, and its figures are the record's.
 * A failure names every run that broke a rule, with its figures.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define RUNS 16

static const char *const kinds[] = { "definitely_lost", "indirectly_lost", "possibly_lost",
				     "still_reachable", "suppressed" };

/* HEAP SUMMARY's "in use at exit: B bytes in N blocks" (commas allowed). */
static bool in_use(const char *text, struct h_vg_leaks *out)
{
	const char *s = strstr(text, "in use at exit: ");
	if (!s)
		return false;
	uint64_t v[2] = { 0, 0 };
	s += strlen("in use at exit: ");
	for (int k = 0; k < 2; k++) {
		while (*s == ',' || (*s >= '0' && *s <= '9'))
			if (*s++ != ',')
				v[k] = v[k] * 10 + (uint64_t)(s[-1] - '0');
		if (k == 0 && strncmp(s, " bytes in ", 10) != 0)
			return false;
		s += 10;
	}
	out->in_use_bytes = v[0];
	out->in_use_blocks = v[1];
	return true;
}

/* What is wrong with one run's record and text, appended to bad (empty:
 * nothing); scanned: the run's leaks were scanned for (MEMCHECK_SCAN). */
static bool judge(const struct h_res *x, const struct h_json *rec, bool scanned, char *bad,
		  size_t cap)
{
	size_t len = strlen(bad);
	bool broke = false;
#define SAY(...)                                                               \
	(broke = true,                                                         \
	 len += (size_t)snprintf(bad + len, len < cap ? cap - len : 0, __VA_ARGS__), \
	 len = len < cap ? len : cap - 1)
	uint64_t allocs = h_u64(rec, "allocs"), frees = h_u64(rec, "frees");
	uint64_t ba = h_u64(rec, "bytes_allocated"), bf = h_u64(rec, "bytes_freed");
	uint64_t lb = h_u64(rec, "live_blocks"), ly = h_u64(rec, "live_bytes");
	if (allocs - frees != lb || ba - bf != ly)
		SAY("%s: %s allocs - %s frees, %s bytes allocated - %s freed; in use %s blocks "
		    "of %s bytes\n",
		    x->label, h_fmt(allocs), h_fmt(frees), h_fmt(ba), h_fmt(bf), h_fmt(lb),
		    h_fmt(ly));
	uint64_t kb = 0, ky = 0, lost_b = 0, lost_y = 0;
	for (int k = 0; k < 5; k++) {
		kb += h_count(rec, kinds[k], "blocks");
		ky += h_count(rec, kinds[k], "bytes");
		if (k < 4) {
			lost_b += h_count(rec, kinds[k], "blocks");
			lost_y += h_count(rec, kinds[k], "bytes");
		}
	}
	if (kb != lb || ky != ly)
		SAY("%s: the kinds sum to %s blocks of %s bytes, in use %s of %s\n", x->label,
		    h_fmt(kb), h_fmt(ky), h_fmt(lb), h_fmt(ly));
	uint64_t gb = 0, gy = 0;
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		gb += h_leak_u64(rec, i, "blocks");
		gy += h_leak_u64(rec, i, "bytes");
	}
	if (gb != lost_b || gy != lost_y)
		SAY("%s: the %zu leaks listed sum to %s blocks of %s bytes, the kinds to %s of %s\n",
		    x->label, h_nleaks(rec), h_fmt(gb), h_fmt(gy), h_fmt(lost_b), h_fmt(lost_y));
	uint64_t va, vf, vbytes;
	struct h_vg_leaks vg = { 0 };
	if (!h_valgrind_heap_usage(x->r.err, &va, &vf, &vbytes) || !in_use(x->r.err, &vg) ||
	    (scanned && h_valgrind_leaks(x->r.err, &vg, 1) != 1)) {
		SAY("%s: no HEAP SUMMARY%s in its text\n", x->label,
		    scanned ? " and LEAK SUMMARY" : "");
		return broke;
	}
	uint64_t vkb = 0, vky = 0;
	for (int k = 0; k < HVG_NKINDS; k++) {
		vkb += vg.blocks[k];
		vky += vg.bytes[k];
	}
	if (!scanned) /* no leak check: no LEAK SUMMARY */
		vkb = vg.in_use_blocks, vky = vg.in_use_bytes;
	if (va - vf != vg.in_use_blocks || vkb != vg.in_use_blocks || vky != vg.in_use_bytes)
		SAY("%s: HEAP SUMMARY %s allocs - %s frees, in use %s blocks of %s bytes; "
		    "LEAK SUMMARY %s blocks of %s bytes\n",
		    x->label, h_fmt(va), h_fmt(vf), h_fmt(vg.in_use_blocks),
		    h_fmt(vg.in_use_bytes), h_fmt(vkb), h_fmt(vky));
	if (va != allocs || vf != frees || vbytes != ba || vg.in_use_blocks != lb ||
	    vg.in_use_bytes != ly)
		SAY("%s: the text's figures are not the record's\n", x->label);
#undef SAY
	return broke;
}

START_TEST(exit_record_adds_up)
{
	if (!h_allocator(_i, NULL))
		return;
	static const char *const threads[] = { "1", "3", "6" };
	char bad[2048] = ""; /* check's messages are short: the first runs' */
	int failed = 0;
	for (int run = 0; run < RUNS; run++) {
		struct h_res x;
		const char *scan = run % 4 == 3 ? "MEMCHECK_SCAN=0" : "MEMCHECK_SCAN=1";
		H_EXEC(&x, .prog = "plain_exit_churn", .args = H_LIST(threads[run % 3]),
		       .alloc = _i, .flags = H_PRELOAD, .text = "auto",
		       .env = H_LIST("MEMCHECK_VALGRIND_TEXT=summary", "MEMCHECK_MAX_LEAKS=1000",
				     scan));
		h_expect_exit(&x, 0);
		failed += judge(&x, h_rec(&x, "process"), run % 4 != 3, bad, sizeof bad);
		h_res_free(&x);
	}
	ck_assert_msg(!failed, "%s: %d of %d records with other threads running at exit do not "
		      "add up:\n%s", h_allocator_name(_i), failed, RUNS, bad);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("exitrace", 150);
	tcase_add_loop_test(tc, exit_record_adds_up, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
