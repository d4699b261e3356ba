/*
 * unit_blocks.c - the live-block table (lib/blocks.c) on its own: exact
 * membership through growth and backward-shift deletion, checked against
 * a plain array model.
 */
#include <check.h>
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
	/* 24-byte entries at a load between 3/8 and 3/4, plus the small
	 * arrays mapped up front. */
	ck_assert_uint_le(mc_blocks_bytes(), 64 * nlive + 256 * 128 * sizeof(struct mc_block));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("blocks");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, insert_find_remove);
	tcase_add_test(tc, model_check);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0;
}
