/*
 * test_family.c - every malloc-family function, counted by valgrind's
 * rules (DESIGN.md): tests/prog/family checks the figures of each case
 * through memcheck_end() and names the wrong ones on stderr; here the
 * JSON view of the same regions is checked too.  And a failing call
 * leaves errno as the allocator does bare (tests/prog/plain_errno).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* A case of tests/prog/family, linked with memcheck, and the figures
 * every case checks in its JSON record.  MEMCHECK_SCAN=0: every block
 * left behind counts as definitely lost, which is what these cases check
 * (the programs still hold them, so the scan would call them still
 * reachable); test_leakkinds tests the kinds. */
#define FAMILY(kase)                                                           \
	.name = kase, .record = kase, .allocators = H_ONLY(H_GLIBC),           \
	.run = { .prog = "family", .args = H_LIST(kase), .env = H_LIST("MEMCHECK_SCAN=0") }
#define COUNTS(allocs, frees, reallocs, failed, live_blocks, live_bytes)      \
	{ "allocator", .str = "glibc" }, { "allocs", allocs }, { "frees", frees }, \
	{ "reallocs", reallocs }, { "failed_allocs", failed },                  \
	{ "live_blocks", live_blocks }, { "live_bytes", live_bytes },           \
	{ "definitely_lost.blocks", live_blocks },                               \
	{ "definitely_lost.bytes", live_bytes },                                 \
	{ "verdict", .str = (live_blocks) ? "fail" : "pass" }
#define HEAP(allocs, frees, reallocs, failed, bytes, live_blocks, live_bytes)  \
	COUNTS(allocs, frees, reallocs, failed, live_blocks, live_bytes),       \
	{ "bytes_allocated", bytes }

/* realloc_fail: the old block is the one leak. */
H_CHECK(one_leak)
{
	ck_assert_msg(h_nleaks(rec) == 1, "%s: %zu leak records, expected 1 (the old block)",
		      x->label, h_nleaks(rec));
}

/* pvalloc: 2 requests rounded up to whole pages, 3 pages in all. */
H_CHECK(three_pages)
{
	H_EXPECT_U64(rec, "bytes_allocated", 3 * (uint64_t)sysconf(_SC_PAGESIZE));
}

/* MEMCHECK_TRACK=0 takes other paths through the wrappers: the calls,
 * bytes allocated and the net block count must not change (the program
 * checks them through memcheck_end and names a wrong one on stderr). */
#define COUNT_ONLY(kase)                                                       \
	{ kase " (MEMCHECK_TRACK=0)", .allocators = H_ONLY(H_GLIBC),             \
	  .run = { .prog = "family", .args = H_LIST(kase, "count-only"),        \
		   .env = H_LIST("MEMCHECK_TRACK=0"), .no_report = true } }

static const struct h_case cases[] = {
	{ FAMILY("malloc"), .want = { HEAP(2, 2, 0, 0, 100, 0, 0), { "bytes_freed", 100 },
				      { "peak_live_bytes", 100 } } },
	/* SIZE_MAX fails with ENOMEM */
	{ FAMILY("malloc_fail"), .want = { HEAP(0, 0, 0, 1, 0, 0, 0) } },
	/* the product counted; an overflowing one fails */
	{ FAMILY("calloc"), .want = { HEAP(1, 1, 0, 1, 120, 0, 0) } },
	/* the same after 10,000 callocs: counting's calloc past the limits'
	 * read (a jump for a size that cannot fail), 2 MiB more */
	{ FAMILY("calloc_warm"), .want = { HEAP(2, 2, 0, 1, 120 + (2 << 20), 0, 0) } },
	/* realloc(NULL,10) 1 alloc; grow to 100 and shrink to 50: 1 free +
	 * 1 alloc each; realloc(p,0) 1 free; realloc(NULL,0) 1 alloc of 0,
	 * then freed. */
	{ FAMILY("realloc"), .want = { HEAP(4, 4, 5, 0, 160, 0, 0), { "bytes_freed", 160 } } },
	/* a failed realloc keeps the old block live; freed later, an
	 * ordinary free */
	{ FAMILY("realloc_fail"), .check = one_leak,
	  .want = { HEAP(1, 0, 1, 1, 64, 1, 64),
#define AFTER(key, ...) { key, __VA_ARGS__, .rec = "realloc_fail_free" }
		    AFTER("allocs", 0), AFTER("frees", 1), AFTER("reallocs", 0),
		    AFTER("failed_allocs", 0), AFTER("bytes_allocated", 0),
		    AFTER("live_blocks", 0), AFTER("live_bytes", 0),
		    AFTER("definitely_lost.blocks", 0), AFTER("definitely_lost.bytes", 0),
		    AFTER("verdict", .str = "pass"), AFTER("double_frees", 0),
		    AFTER("invalid_frees", 0) } },
#undef AFTER
	{ FAMILY("reallocarray"), .want = { HEAP(2, 2, 3, 1, 240, 0, 0) } },
	{ FAMILY("free_null"), .want = { HEAP(0, 0, 0, 0, 0, 0, 0) } },
	/* aligned, and EINVAL for a bad alignment */
	{ FAMILY("posix_memalign"), .want = { HEAP(2, 2, 0, 1, 110, 0, 0) } },
	{ FAMILY("aligned_alloc"), .want = { HEAP(2, 2, 0, 0, 576, 0, 0) } },
	{ FAMILY("memalign"), .want = { HEAP(2, 2, 0, 0, 107, 0, 0) } },
	/* page-aligned, the request counted */
	{ FAMILY("valloc"), .want = { HEAP(1, 1, 0, 0, 100, 0, 0) } },
	/* the page-rounded size counted */
	{ FAMILY("pvalloc"), .want = { COUNTS(2, 2, 0, 0, 0, 0) }, .check = three_pages },
	/* malloc_usable_size counts nothing */
	{ FAMILY("usable_size"), .want = { HEAP(0, 0, 0, 0, 0, 0, 0) } },
	COUNT_ONLY("malloc"), COUNT_ONLY("malloc_fail"), COUNT_ONLY("calloc"),
	COUNT_ONLY("calloc_warm"), COUNT_ONLY("realloc"), COUNT_ONLY("realloc_fail"),
	COUNT_ONLY("reallocarray"), COUNT_ONLY("free_null"), COUNT_ONLY("posix_memalign"), COUNT_ONLY("aligned_alloc"),
	COUNT_ONLY("memalign"), COUNT_ONLY("valloc"), COUNT_ONLY("pvalloc"),
	COUNT_ONLY("usable_size"),
	/* the aligned family past the limits' read, alignments and sizes
	 * each side of count-only's jump (interpose.c aligned_sure), under
	 * every allocator: what each call returned is what is counted (the
	 * program checks it) */
	{ "aligned_warm", .run = { .prog = "family", .args = H_LIST("aligned_warm"),
				   .env = H_LIST("MEMCHECK_SCAN=0"), .no_report = true } },
	/* reallocarray past the limits' read (count-only's jump), every
	 * allocator (jemalloc and tcmalloc have none: forward.c's) */
	{ "reallocarray_warm", .run = { .prog = "family", .args = H_LIST("reallocarray_warm"),
					.env = H_LIST("MEMCHECK_SCAN=0"), .no_report = true } },
	{ "reallocarray_warm (MEMCHECK_TRACK=0)",
	  .run = { .prog = "family", .args = H_LIST("reallocarray_warm", "count-only"),
		   .env = H_LIST("MEMCHECK_TRACK=0"), .no_report = true } },
	{ "aligned_warm (MEMCHECK_TRACK=0)",
	  .run = { .prog = "family", .args = H_LIST("aligned_warm", "count-only"),
		   .env = H_LIST("MEMCHECK_TRACK=0"), .no_report = true } },
};

/* Issue 14, item 13: jemalloc has no pvalloc; memcheck's own, built on
 * jemalloc's memalign, failed a huge request with errno 0 where the
 * program bare gets glibc's pvalloc and ENOMEM.  Under each allocator,
 * tracking and counting, what each failing call leaves is what it
 * leaves bare. */
START_TEST(test_failing_calls_leave_errno_as_bare)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	struct h_res bare;
	H_EXEC(&bare, .prog = "plain_errno", .no_report = true, .text = "",
	       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL);
	h_expect_exit(&bare, 0);
	static const char *const modes[] = { "MEMCHECK_TRACK=1", "MEMCHECK_TRACK=0" };
	for (int m = 0; m < 2; m++) {
		struct h_res x;
		H_EXEC(&x, .prog = "plain_errno", .alloc = _i, .flags = H_PRELOAD,
		       .env = H_LIST(modes[m]), .no_report = true);
		h_expect_exit(&x, 0);
		ck_assert_msg(strcmp(x.r.out, bare.r.out) == 0, "%s: %s\nbare:\n%s", x.label,
			      x.r.out, bare.r.out);
		h_res_free(&x);
	}
	h_res_free(&bare);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("family", 30);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, test_failing_calls_leave_errno_as_bare, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
