/*
 * unit_blocks.c - the live-block table (lib/blocks.c) on its own: exact
 * membership through growth and backward-shift deletion, checked against
 * a plain array model.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"

struct mc_options mc_opt;

#define N 20000

static uint64_t sum_sizes;
static uint64_t seen;
static void count(const struct mc_block *b, void *arg)
{
	(void)arg;
	seen++;
	sum_sizes += b->size;
}

START_TEST(insert_find_remove)
{
	mc_blocks_init();
	struct mc_block b, old;
	ck_assert_int_eq(mc_blocks_insert(0x1000, 10, 7, 3, &old), MC_NEW);
	ck_assert(mc_blocks_find(0x1000, &b));
	ck_assert_uint_eq(b.size, 10);
	ck_assert_uint_eq(b.stack, 7);
	ck_assert_uint_eq(b.aux, 3);
	/* An address handed out again while still live: the old block is
	 * returned so its free can be counted. */
	ck_assert_int_eq(mc_blocks_insert(0x1000, 20, 8, 4, &old), MC_REPLACED_LIVE);
	ck_assert_uint_eq(old.size, 10);
	ck_assert_int_eq(mc_blocks_remove(0x1000, &b), MC_REMOVED);
	ck_assert_uint_eq(b.size, 20);
	ck_assert_int_eq(mc_blocks_remove(0x1000, &b), MC_UNKNOWN);
	ck_assert(!mc_blocks_find(0x1000, &b));
	ck_assert_uint_eq(mc_blocks_count(), 0);
}
END_TEST

/* Random inserts and deletes across growth: every live pointer stays
 * findable (backward shift keeps clusters intact), every deleted one is
 * gone, and the epoch filter of each_live is exact. */
START_TEST(model_check)
{
	mc_blocks_init();
	static uintptr_t ptrs[N];
	static bool live[N];
	uint32_t x = 2463534242u;
	for (int i = 0; i < N; i++)
		ptrs[i] = 0x10000 + (uintptr_t)i * 48;
	uint64_t nlive = 0, bytes_epoch2 = 0, n_epoch2 = 0;
	for (int step = 0; step < 200000; step++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		int i = (int)(x % N);
		struct mc_block b;
		if (live[i]) {
			ck_assert_int_eq(mc_blocks_remove(ptrs[i], &b), MC_REMOVED);
			ck_assert_uint_eq(b.size, (uint64_t)i);
			if (b.aux == 2) {
				n_epoch2--;
				bytes_epoch2 -= b.size;
			}
			live[i] = false;
			nlive--;
		} else {
			uint32_t epoch = (step & 1) ? 2 : 1;
			ck_assert_int_eq(mc_blocks_insert(ptrs[i], (uint64_t)i, 1, epoch, &b), MC_NEW);
			if (epoch == 2) {
				n_epoch2++;
				bytes_epoch2 += (uint64_t)i;
			}
			live[i] = true;
			nlive++;
		}
	}
	ck_assert_uint_eq(mc_blocks_count(), nlive);
	for (int i = 0; i < N; i++) {
		struct mc_block b;
		ck_assert_msg(mc_blocks_find(ptrs[i], &b) == live[i], "pointer %d", i);
	}
	seen = sum_sizes = 0;
	mc_blocks_each_live(2, count, NULL);
	ck_assert_uint_eq(seen, n_epoch2);
	ck_assert_uint_eq(sum_sizes, bytes_epoch2);
	/* 16-byte entries at a load between 3/8 and 3/4 (under 43 bytes a
	 * block), plus the small arrays mapped up front. */
	ck_assert_uint_le(mc_blocks_bytes(), 43 * nlive + 256 * 128 * 16);
}
END_TEST

/* Fields an entry cannot hold: a size of 128 GiB or more, a pointer
 * above 2^48.  They live in the side table and behave as any block. */
START_TEST(odd_blocks)
{
	mc_blocks_init();
	struct mc_block b, old;
	uint64_t huge = UINT64_C(1) << 41;
	uintptr_t high = (uintptr_t)1 << 50;
	ck_assert_int_eq(mc_blocks_insert(0x2000, huge, 9, 5, &old), MC_NEW);
	ck_assert_int_eq(mc_blocks_insert(high, 16, 9, 6, &old), MC_NEW);
	ck_assert_int_eq(mc_blocks_insert(0x3000, 32, MC_STACK_ID_MAX, 6, &old), MC_NEW);
	ck_assert(mc_blocks_find(0x2000, &b));
	ck_assert_uint_eq(b.size, huge);
	ck_assert_uint_eq(b.aux, 5);
	ck_assert(mc_blocks_find(0x3000, &b));
	ck_assert_uint_eq(b.stack, MC_STACK_ID_MAX);
	ck_assert(mc_blocks_set_epoch(high, 0));
	seen = sum_sizes = 0;
	mc_blocks_each_live(1, count, NULL);
	ck_assert_uint_eq(seen, 2);
	ck_assert_uint_eq(sum_sizes, huge + 32);
	/* The same address again, now an ordinary block: the odd one is
	 * handed back as replaced, and the other way round. */
	ck_assert_int_eq(mc_blocks_insert(0x2000, 8, 1, 7, &old), MC_REPLACED_LIVE);
	ck_assert_uint_eq(old.size, huge);
	ck_assert_int_eq(mc_blocks_insert(0x2000, huge + 1, 1, 7, &old), MC_REPLACED_LIVE);
	ck_assert_uint_eq(old.size, 8);
	ck_assert_int_eq(mc_blocks_remove(0x2000, &b), MC_REMOVED);
	ck_assert_uint_eq(b.size, huge + 1);
	ck_assert_int_eq(mc_blocks_remove(0x2000, &b), MC_UNKNOWN);
	ck_assert_int_eq(mc_blocks_remove(high, &b), MC_REMOVED);
	ck_assert_int_eq(mc_blocks_remove(0x3000, &b), MC_REMOVED);
	ck_assert_uint_eq(mc_blocks_count(), 0);
}
END_TEST

/* Renumbering keeps every block on the same side of every open region,
 * ignored blocks (epoch 0) stay ignored, and the current epoch stays
 * above them all. */
START_TEST(renumber)
{
	mc_blocks_init();
	struct mc_block b, old;
	static const uint32_t epochs[] = { 0, 3, 100, 101, 60000, 65000, 65535 };
	static const uint32_t want[] = { 0, 0, 1, 1, 2, 3, 3 };
	for (unsigned i = 0; i < sizeof epochs / sizeof *epochs; i++)
		mc_blocks_insert(0x10000 + i * 64, 8, 1, epochs[i], &old);
	mc_blocks_insert((uintptr_t)1 << 50, 8, 1, 60001, &old); /* side table */
	atomic_store(&mc_epoch, 65535);
	const uint32_t open[] = { 100, 60000, 65000 };
	mc_blocks_renumber(open, 3);
	for (unsigned i = 0; i < sizeof epochs / sizeof *epochs; i++) {
		ck_assert(mc_blocks_find(0x10000 + i * 64, &b));
		ck_assert_msg(b.aux == want[i], "epoch %u became %u", epochs[i], b.aux);
	}
	ck_assert(mc_blocks_find((uintptr_t)1 << 50, &b));
	ck_assert_uint_eq(b.aux, 2);
	ck_assert_uint_eq(atomic_load(&mc_epoch), 3);
	ck_assert_int_eq(mc_blocks_insert(0x90000, 8, 1, MC_EPOCH_NOW, &old), MC_NEW);
	ck_assert(mc_blocks_find(0x90000, &b));
	ck_assert_uint_eq(b.aux, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("blocks");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, insert_find_remove);
	tcase_add_test(tc, model_check);
	tcase_add_test(tc, odd_blocks);
	tcase_add_test(tc, renumber);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0;
}
