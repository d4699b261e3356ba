/*
 * test_allocators.c - an unmodified program (tests/prog/plain_family, not
 * linked to memcheck) under each allocator, with libmemcheck.so preloaded
 * first: exact counts (what the allocator allocates before main, counted
 * as valgrind counts it, taken off), the allocator named, no crash.  And the wrong
 * order (allocator first) must be detected and explained.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* What the process region counts for a program that does nothing under
 * allocator a: its own start-up blocks (tests/prog/plain_empty.c). */
struct base {
	uint64_t allocs, frees, reallocs, bytes, bytes_freed, live_blocks, live_bytes;
};

static struct base baseline(int a, bool count_only)
{
	struct h_res x;
	H_EXEC(&x, .prog = "plain_empty", .alloc = a, .flags = H_PRELOAD,
	       .env = count_only ? H_LIST("MEMCHECK_TRACK=0") : NULL);
	h_expect_exit(&x, 0);
	const struct h_json *rec = h_rec(&x, "process");
	struct base b = { h_u64(rec, "allocs"), h_u64(rec, "frees"), h_u64(rec, "reallocs"),
			  h_u64(rec, "bytes_allocated"),
			  h_u64(rec, "bytes_freed"), h_u64(rec, "live_blocks"),
			  h_u64(rec, "live_bytes") };
	h_res_free(&x);
	return b;
}

/* realloc(p, 0) returns a block under some allocators (mimalloc): then
 * that is 1 more alloc (of 0 bytes) and 1 more free. */
static uint64_t realloc0_extra(const struct h_res *x)
{
	if (strstr(x->r.out, "realloc0=ptr"))
		return 1;
	ck_assert_msg(strstr(x->r.out, "realloc0=null"), "%s printed no realloc0=...: \"%s\"",
		      x->label, x->r.out);
	return 0;
}

START_TEST(test_family_counts_exact_under_allocator)
{
	if (!h_allocator(_i, NULL))
		return;
	struct h_res x;
	H_EXEC(&x, .prog = "plain_family", .alloc = _i, .flags = H_PRELOAD);
	h_expect_exit(&x, 0);
	uint64_t extra = realloc0_extra(&x);
	struct base b = baseline(_i, false);
	ck_assert_msg(x.rep.n == 1, "%s: %zu records, expected 1 (process)", x.label, x.rep.n);
	const struct h_json *rec = h_rec(&x, "process");
	H_EXPECT_STR(rec, "allocator", h_allocators[_i].name);
	H_EXPECT_U64(rec, "allocs", b.allocs + 12 + extra);
	H_EXPECT_U64(rec, "frees", b.frees + 12 + extra);
	H_EXPECT_U64(rec, "reallocs", b.reallocs + 6);
	H_EXPECT_U64(rec, "failed_allocs", 0);
	H_EXPECT_U64(rec, "bytes_allocated", b.bytes + 10632);
	H_EXPECT_U64(rec, "bytes_freed", b.bytes_freed + 10632);
	H_EXPECT_U64(rec, "live_blocks", b.live_blocks);
	H_EXPECT_U64(rec, "live_bytes", b.live_bytes);
	H_EXPECT_U64(rec, "double_frees", 0);
	H_EXPECT_U64(rec, "invalid_frees", 0);
	H_EXPECT_STR(rec, "verdict", "pass");
	h_res_free(&x);
}
END_TEST

START_TEST(test_count_only_exact_under_allocator)
{
	/* MEMCHECK_TRACK=0: calls and bytes allocated still exact */
	if (!h_allocator(_i, NULL))
		return;
	struct h_res x;
	H_EXEC(&x, .prog = "plain_family", .alloc = _i, .flags = H_PRELOAD,
	       .env = H_LIST("MEMCHECK_TRACK=0"));
	h_expect_exit(&x, 0);
	uint64_t extra = strstr(x.r.out, "realloc0=ptr") ? 1 : 0;
	struct base b = baseline(_i, true);
	const struct h_json *rec = h_rec(&x, "process");
	H_EXPECT_STR(rec, "allocator", h_allocators[_i].name);
	H_EXPECT_U64(rec, "allocs", b.allocs + 12 + extra);
	H_EXPECT_U64(rec, "frees", b.frees + 12 + extra);
	H_EXPECT_U64(rec, "reallocs", b.reallocs + 6);
	H_EXPECT_U64(rec, "bytes_allocated", b.bytes + 10632);
	H_EXPECT_U64(rec, "live_blocks", b.live_blocks);
	h_res_free(&x);
}
END_TEST

/* The wrong order (allocator first; glibc has none) is detected, and
 * explained. */
H_CHECK(bypassed)
{
	ck_assert_msg(h_violation_has(rec, "bypassed"), "%s: no violation mentioning \"bypassed\"",
		      x->label);
}

/* Regression (fixed in f0db144): the wrong-order message named the
 * object after libmemcheck (libc.so.6) as the one that serves malloc and
 * suggested LD_PRELOAD="libmemcheck.so .../libc.so.6", and the record's
 * "allocator" said "glibc".  Both must name the allocator that is first. */
H_CHECK(allocator_named)
{
	const char *soname = h_allocators[x->alloc].soname;
	ck_assert_msg(strstr(x->r.err, soname) != NULL && strstr(x->r.err, "libc.so") == NULL,
		      "%s: stderr should name %s (and not libc.so.6) as the object that serves "
		      "malloc:\n%s", x->label, soname, x->r.err);
	H_EXPECT_STR(rec, "allocator", h_allocators[x->alloc].name);
}

#define WRONG_ORDER(mode)                                                      \
	.allocators = H_EVERY_ONE & ~H_ONLY(H_GLIBC),                            \
	.run = { .prog = "plain_family", .args = H_LIST(mode), .flags = H_PRELOAD_AFTER }

static const struct h_case cases[] = {
	/* the second free would crash or abort any of them */
	{ "double free kept from the allocator", .allocators = H_EVERY_ONE,
	  .run = { .prog = "plain_errors", .args = H_LIST("double"), .flags = H_PRELOAD },
	  .stdout_is = "continued\n", .want = { { "double_frees", 1 } } },
	{ "wrong preload order detected", WRONG_ORDER("basic"), .check = bypassed,
	  .err = H_LIST("Put libmemcheck first"), .want = { { "verdict", .str = "fail" } } },
	/* Regression (fixed in f0db144): with the allocator first, a call
	 * of a family function it does not export (jemalloc: pvalloc) found
	 * memcheck's wrapper, which forwarded it to glibc; the allocator's
	 * free() then crashed on glibc's pointer (SIGSEGV under jemalloc). */
	{ "wrong preload order, the full family", WRONG_ORDER("full") },
	{ "wrong preload order names the allocator", WRONG_ORDER("basic"),
	  .record = "process", .check = allocator_named },
	/* The main thread's DTV, which memcheck's constructor moves into its
	 * own static copy where memcheck's realloc is the one the dynamic
	 * linker calls (tls45): with the allocator first it is not, so the
	 * DTV must stay where ld.so made it; the copies dlopened past its
	 * last entry make ld.so realloc it, by the allocator's realloc,
	 * which would crash on memcheck's static array. */
	{ "wrong preload order, the main thread's DTV grown",
	  .allocators = H_EVERY_ONE & ~H_ONLY(H_GLIBC),
	  .run = { .prog = "plain_dtv_last", .args = H_LIST("main"), .flags = H_PRELOAD_AFTER },
	  .record = "process", .check = bypassed, .out = H_LIST(", now ") },
};

int main(void)
{
	TCase *tc = h_tcase("allocators", 30);
	tcase_add_loop_test(tc, test_family_counts_exact_under_allocator, 0, H_NALLOCATORS_ALL);
	tcase_add_loop_test(tc, test_count_only_exact_under_allocator, 0, H_NALLOCATORS_ALL);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
