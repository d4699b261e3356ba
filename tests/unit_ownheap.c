/*
 * unit_ownheap.c - lib/ownheap.c on its own: the heap that serves the
 * malloc calls of memcheck's own work (libdw at a report above all).
 * What it must keep: blocks that hold what was asked, aligned; memory
 * counted as memcheck's own exactly as it is made resident and given
 * back (the hooks below stand for footprint.c); little waste, since a
 * large program's symbolization asks it for hundreds of MB.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

static int64_t own; /* what the hooks were told: memcheck's resident bytes */

static bool before(size_t bytes)
{
	(void)bytes;
	return false;
}

static void after(bool folding, int64_t bytes)
{
	(void)folding;
	own += bytes;
}

static const struct mc_map_hooks hooks = { .before = before, .after = after };

static void setup(void)
{
	mc_map_hooks_set(&hooks);
	own = 0;
}

/* Resident pages of [p, p + len), by mincore. */
static size_t resident(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;
	static unsigned char vec[1 << 16];
	ck_assert_uint_le((hi - lo) / 4096, sizeof vec);
	ck_assert_int_eq(mincore((void *)lo, hi - lo, vec), 0);
	size_t n = 0;
	for (size_t i = 0; i < (hi - lo) / 4096; i++)
		n += vec[i] & 1;
	return n * 4096;
}

START_TEST(blocks_hold_what_was_asked)
{
	for (size_t n = 1; n <= 70000; n += n < 300 ? 1 : 997) {
		char *p = mc_ownheap_alloc(16, n, true);
		ck_assert_ptr_nonnull(p);
		ck_assert_msg(mc_ownheap_has(p), "n=%zu outside the heap", n);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		size_t size = mc_ownheap_size(p);
		ck_assert_uint_ge(size, n);
		/* Four classes a doubling: at most a quarter more than asked
		 * with the header, 16-byte steps below 64; whole pages above. */
		ck_assert_msg(size <= n + n / 4 + 64 || size <= n + 4096, "n=%zu size=%zu", n, size);
		size_t nonzero = 0;
		for (size_t i = 0; i < n; i++)
			nonzero += p[i] != 0;
		ck_assert_msg(nonzero == 0, "n=%zu: %zu bytes not cleared", n, nonzero);
		memset(p, 0xa5, n);
		mc_ownheap_free(p);
	}
	for (size_t align = 32; align <= 8192; align *= 2) {
		void *p = mc_ownheap_alloc(align, 100, false);
		ck_assert_uint_eq((uintptr_t)p % align, 0);
		ck_assert_uint_ge(mc_ownheap_size(p), 100);
		mc_ownheap_free(p);
	}
}
END_TEST

/* 10,000 blocks of 80 bytes (96 with the header): power-of-two classes
 * gave each 128. */
START_TEST(small_blocks_waste_little)
{
	void *fill = mc_ownheap_alloc(16, 200 * 1024, false); /* the static arena used up */
	(void)fill;
	int64_t at = own;
	for (int i = 0; i < 10000; i++)
		ck_assert_ptr_nonnull(mc_ownheap_alloc(16, 80, false));
	int64_t grew = own - at;
	ck_assert_msg(grew <= 10000 * 96 + 64 * 1024, "grew %lld", (long long)grew);
	ck_assert_int_ge(grew, 10000 * 96 - 64 * 1024);
}
END_TEST

/* A large block takes the pages asked for, no power of two; freed, its
 * pages are given back and counted out, and a later large block of
 * another size takes them again. */
START_TEST(large_blocks_given_back)
{
	int64_t at = own;
	size_t n = 5 * 1024 * 1024 + 1;
	char *p = mc_ownheap_alloc(16, n, false);
	ck_assert_ptr_nonnull(p);
	memset(p, 1, n);
	int64_t grew = own - at;
	ck_assert_msg(grew >= (int64_t)n && grew <= (int64_t)n + 8192 + 64 * 1024, "grew %lld", (long long)grew);
	ck_assert_uint_ge(resident(p, n), n - 4096);
	mc_ownheap_free(p);
	ck_assert_msg(own - at <= 64 * 1024 + 8192, "after the free %lld", (long long)(own - at));
	ck_assert_uint_le(resident(p + 4096, n - 8192), 0);
	/* Smaller, then the rest: both from the freed range. */
	char *q = mc_ownheap_alloc(16, 3 * 1024 * 1024, false);
	char *r = mc_ownheap_alloc(16, 1024 * 1024, false);
	ck_assert_msg(q >= p - 64 && q < p + n, "q %p outside %p", (void *)q, (void *)p);
	ck_assert_msg(r >= p - 64 && r < p + n, "r %p outside %p", (void *)r, (void *)p);
	ck_assert_uint_ge(resident(q, 3 * 1024 * 1024), 3 * 1024 * 1024 - 4096);
	memset(q, 2, 3 * 1024 * 1024);
	memset(r, 3, 1024 * 1024);
	ck_assert_msg(own - at <= 4 * 1024 * 1024 + 3 * 8192 + 64 * 1024, "reused %lld", (long long)(own - at));
	/* Freed side by side, they join: 4 MiB in one block. */
	mc_ownheap_free(q);
	mc_ownheap_free(r);
	char *s = mc_ownheap_alloc(16, 4 * 1024 * 1024, false);
	ck_assert_msg(s >= p - 64 && s < p + n, "s %p outside %p", (void *)s, (void *)p);
	mc_ownheap_free(s);
}
END_TEST

/* An array grown by realloc, as libdw's line tables are: the old copies
 * are not kept resident.  Power-of-two classes kept 1+2+4 MiB beside the
 * 8 MiB block; now the 8 MiB block alone stays. */
START_TEST(realloc_growth_keeps_one_copy)
{
	int64_t at = own;
	char *p = NULL;
	for (size_t n = 1024 * 1024; n <= 8 * 1024 * 1024; n *= 2) {
		p = mc_ownheap_realloc(p, n);
		ck_assert_ptr_nonnull(p);
		memset(p + n / 2, 7, n / 2);
	}
	ck_assert_int_eq(p[8 * 1024 * 1024 - 1], 7);
	int64_t grew = own - at;
	ck_assert_msg(grew <= 9 * 1024 * 1024, "grew %lld", (long long)grew);
	mc_ownheap_free(p);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("ownheap", 0);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, blocks_hold_what_was_asked);
	tcase_add_test(tc, small_blocks_waste_little);
	tcase_add_test(tc, large_blocks_given_back);
	tcase_add_test(tc, realloc_growth_keeps_one_copy);
	return h_run_suite(NULL);
}
