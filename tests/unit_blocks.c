/*
 * unit_blocks.c - the live-block table (lib/blocks.c) on its own: exact
 * membership through growth (capacities that are not powers of two) and
 * backward-shift deletion round the end of a shard, checked against a
 * plain array model, alone and with a second thread; and when the
 * peak snapshot's site counts are kept (lib/snapshot.c).
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "blocks.h"
#include "suite.h"

/* Tracking: mc_blocks_init makes a table only then (count_only_no_table). */
struct mc_options mc_opt = { .track = true };
MC_TLS struct mc_thread mc_self; /* forward.c's, not linked here: blocks.c keeps a thread's groups there */
/* forward.c's too: libmemcheck's own code, none here (depot.c stores
 * a stack without its frames) */
uintptr_t mc_text_lo, mc_text_len;
/* forward.c's too: no scan here puts a thread's stop off (threads.c) */
void mc_guard_stop_owed(void)
{
}

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
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
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
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
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
	/* Every shard still in its first arrays (32 slots, then 1024:
	 * 16 KiB at most). */
	ck_assert_uint_le(mc_blocks_bytes(), 256 * 1024 * 16);
}
END_TEST

/* A short process: its few hundred blocks, all in one 2 MiB region
 * (one group of 32 shards), are spread over every shard of the group,
 * and sit in the shards' 32-slot first arrays, 16 KiB for the group
 * (4 pages, where 1024-slot first arrays took 512 KiB and 118 page
 * faults of a measured bench/suite_test).  More blocks move the shards
 * on to 1024 slots, every block still there. */
#define FEW 300
static uintptr_t few_ptr(int i)
{
	return 0x55aa00000000 + 0x2a0 + (uintptr_t)i * 48;
}

START_TEST(short_process_few_pages)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_block b, old;
	for (int i = 0; i < FEW; i++)
		ck_assert_int_eq(mc_blocks_insert(few_ptr(i), (uint64_t)i + 1, 2, 1, &old), MC_NEW);
	ck_assert_uint_eq(mc_blocks_count(), FEW);
	ck_assert_msg(mc_blocks_bytes() <= 32 * 32 * 16, "%zu bytes of table for %d blocks",
		      mc_blocks_bytes(), FEW);
	for (int i = 0; i < FEW; i++)
		ck_assert(mc_blocks_find(few_ptr(i), &b) && b.size == (uint64_t)i + 1);
	for (int i = FEW; i < 20 * FEW; i++)
		ck_assert_int_eq(mc_blocks_insert(few_ptr(i), (uint64_t)i + 1, 2, 1, &old), MC_NEW);
	ck_assert_uint_gt(mc_blocks_bytes(), 32 * 32 * 16);
	for (int i = 0; i < 20 * FEW; i++)
		ck_assert_msg(mc_blocks_remove(few_ptr(i), &b) == MC_REMOVED && b.size == (uint64_t)i + 1,
			      "block %d", i);
	ck_assert_uint_eq(mc_blocks_count(), 0);
}
END_TEST

/* account.c's common malloc and free (mc_blocks_insert_owned and
 * mc_blocks_remove_owned, inline): a block whose home slot is taken is
 * placed further on by mc_blocks_place_leave from the entered shard
 * (PLACE); a block in its home slot with the next slot taken comes out
 * there (SHIFT), and mc_blocks_shift_leave then moves its cluster back
 * and leaves the shard; no other block may be lost or become
 * unreachable.  A short process's blocks in the 32-slot first arrays,
 * put in, then freed in a scrambled order: every answer checked against
 * the live set, every kind seen. */
START_TEST(owned_remove_shift)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	static bool live[FEW];
	struct mc_block b, old;
	int placed = 0;
	for (int i = 0; i < FEW; i++) {
		struct mc_owned_place at;
		enum mc_owned r = mc_blocks_insert_owned(few_ptr(i), (uint64_t)i + 1, 2, 1, &at,
							  mc_sites_on);
		if (r == MC_OWNED_PLACE) {
			placed++;
			ck_assert_int_eq(mc_blocks_place_leave(at.s, at.i, at.w0, at.w1, &old, at.m),
					 MC_NEW);
		} else if (r == MC_OWNED_MISS) {
			ck_assert_int_eq(mc_blocks_insert(few_ptr(i), (uint64_t)i + 1, 2, 1, &old),
					 MC_NEW);
		}
		live[i] = true;
		ck_assert_uint_eq(mc_blocks_count(), (uint64_t)i + 1);
	}
	for (int i = 0; i < FEW; i++)
		ck_assert(mc_blocks_find(few_ptr(i), &b) && b.size == (uint64_t)i + 1 && b.aux == 1);
	/* Without membarrier(2) (a sandbox's seccomp refusing it: ENOSYS
	 * under a filter, placed 0) every group locks and the owner's
	 * paths only miss: the table's answers are still checked below. */
	bool owned = !mc_blocks_groups_locked();
	if (!owned)
		printf("unit_blocks: no membarrier(2) here: owned_remove_shift checks the "
		       "locked paths only\n");
	ck_assert(!owned || placed > 0);
	int seen_as[4] = { 0 };
	for (int k = 0; k < FEW; k++) {
		int i = (k * 7 + 3) % FEW; /* 7 is prime to FEW: each once */
		struct shard *sh = NULL;
		uint32_t at_i = 0;
		enum mc_owned r = mc_blocks_remove_owned(few_ptr(i), &b, &sh, &at_i, mc_sites_on);
		seen_as[r]++;
		if (r == MC_OWNED_MISS)
			ck_assert_int_eq(mc_blocks_remove(few_ptr(i), &b), MC_REMOVED);
		else if (r == MC_OWNED_SHIFT)
			ck_assert_int_eq(mc_blocks_shift_leave(sh, at_i), MC_REMOVED);
		ck_assert_uint_eq(b.size, (uint64_t)i + 1);
		ck_assert_uint_eq(b.stack, 2);
		live[i] = false;
		for (int j = 0; j < FEW; j++)
			ck_assert_msg(mc_blocks_find(few_ptr(j), &b) == live[j], "block %d after %d", j, i);
		ck_assert_uint_eq(mc_blocks_count(), (uint64_t)(FEW - k - 1));
	}
	ck_assert_msg((seen_as[MC_OWNED_TAKEN] && seen_as[MC_OWNED_SHIFT] && seen_as[MC_OWNED_MISS]) ||
			      (!owned && seen_as[MC_OWNED_MISS] == FEW),
		      "taken %d, shifted %d, missed %d", seen_as[MC_OWNED_TAKEN],
		      seen_as[MC_OWNED_SHIFT], seen_as[MC_OWNED_MISS]);
}
END_TEST

/* The same short process's first blocks fault in no page of the
 * table: the leaf of the brk heap's top is made at start-up with the
 * page of its units populated, and the group's 4 pages of first arrays
 * are populated when the thread takes the group (6 page faults before:
 * the never-written zero leaf read, the leaf's byte written, the 4
 * pages). */
static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

#if !defined(__SANITIZE_ADDRESS__)
/* Whether this kernel populates pages in one call (MADV_POPULATE_WRITE,
 * Linux 5.14): where it says EINVAL, ownmap.c's pages are faulted in as
 * touched (4 faults here under a filter that refuses it).  Not under
 * ASan, whose build does not count the faults. */
static bool populate_works(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	bool ok = madvise(p, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
	munmap(p, 4096);
	return ok;
}
#endif

START_TEST(short_process_no_faults)
{
	mc_opt.track = true;
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	uintptr_t base = ((uintptr_t)sbrk(0) + 4095) & ~(uintptr_t)4095;
	struct mc_block b, old;
	/* One block of another top first: the count below is then of
	 * the table's pages, not of the code's a first insert runs.  It
	 * takes the group (the one of its 4 pages it lands on would be
	 * resident anyway) and a leaf of its own. */
	ck_assert_int_eq(mc_blocks_insert(0x100000040, 16, 2, 1, &old), MC_NEW);
	ck_assert(mc_blocks_remove(0x100000040, &b) == MC_REMOVED);
	long before = minor_faults();
	for (int i = 0; i < FEW; i++)
		ck_assert_int_eq(mc_blocks_insert(base + (uintptr_t)i * 48, 16, 2, 1, &old), MC_NEW);
	long faults = minor_faults() - before;
	ck_assert_uint_eq(mc_blocks_count(), FEW);
#if !defined(__SANITIZE_ADDRESS__)
	/* (under ASan, each write first reads its shadow: faults of its own) */
	if (populate_works())
		ck_assert_msg(faults <= 1, "%ld page faults for the first %d blocks", faults, FEW);
	else
		printf("unit_blocks: no MADV_POPULATE_WRITE here (Linux < 5.14): %ld page "
		       "faults for the first %d blocks not checked\n", faults, FEW);
#else
	(void)faults;
#endif
	for (int i = 0; i < FEW; i++)
		ck_assert(mc_blocks_remove(base + (uintptr_t)i * 48, &b) == MC_REMOVED);
}
END_TEST

/* Growth through many capacities (1.2x at a time, none of them a power
 * of two past the first): at each size every block is found, the count
 * is exact, and once every shard has left its first array the table
 * costs at most 24 bytes a block (5/6 full, grown to 1.2x: 69% full at
 * least, 23 bytes).  Then blocks are freed and allocated again at that
 * load, where clusters run round the end of a shard and deletes shift
 * entries back across it, and all go, in another order. */
#define GROW_N 500000
static uintptr_t grow_ptr(int i)
{
	/* 2 GB of address space: every group of shards has its share. */
	return 0x100000000 + (uintptr_t)i * 4096 + (uintptr_t)(i % 7) * 16;
}

/* A count-only process makes no table: its start-up writes no shard and
 * maps nothing (no page fault, populated pages are counted as faults
 * too), and the lookups and walks that may still come, a fork's lock of
 * the whole table among them, find it empty, touching nothing. */
START_TEST(count_only_no_table)
{
	mc_opt.track = false;
	struct mc_block b;
	long before = minor_faults();
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	ck_assert(!mc_blocks_find(0x1000, &b));
	ck_assert(!mc_blocks_containing(0x1008, &b));
	ck_assert(!mc_blocks_any_live(0));
	ck_assert_uint_eq(mc_blocks_count(), 0);
	mc_blocks_lock_all();
	mc_blocks_each_live_locked(count, NULL);
	mc_blocks_unlock_all();
	mc_blocks_each_live(0, count, NULL);
	long after = minor_faults();
	ck_assert_uint_eq(seen, 0);
	ck_assert_uint_eq(mc_blocks_bytes(), 0);
#if !defined(__SANITIZE_ADDRESS__) /* ASan's shadow pages fault too */
	/* The first calls' code pages (3 here); with a table made, the
	 * same calls fault 12 pages in. */
	ck_assert_int_le(after - before, 5);
#else
	(void)before;
	(void)after;
#endif
	mc_opt.track = true;
}
END_TEST

START_TEST(growth)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_block b, old;
	int checked = 0;
	for (int n = 1; n <= GROW_N; n++) {
		ck_assert_int_eq(mc_blocks_insert(grow_ptr(n - 1), (uint64_t)n, 5, 1, &old), MC_NEW);
		if (n % 50000 && n != 1 && n != 1000 && n != 250000)
			continue;
		ck_assert_uint_eq(mc_blocks_count(), (uint64_t)n);
		for (int i = 0; i < n; i += 1 + n / 4096)
			ck_assert_msg(mc_blocks_find(grow_ptr(i), &b) && b.size == (uint64_t)i + 1,
				      "block %d of %d", i, n);
		if (n >= 400000) {
			ck_assert_msg(mc_blocks_bytes() <= (size_t)n * 24, "%zu bytes for %d blocks",
				      mc_blocks_bytes(), n);
			checked++;
		}
	}
	ck_assert_int_gt(checked, 0);
	/* Churn at that load: a block out and back in, a free and then a
	 * malloc handing the address out again. */
	uint32_t x = 88172645u;
	for (int step = 0; step < 400000; step++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		int i = (int)(x % GROW_N);
		ck_assert_int_eq(mc_blocks_remove(grow_ptr(i), &b), MC_REMOVED);
		ck_assert_uint_eq(b.size, (uint64_t)i + 1);
		ck_assert(!mc_blocks_find(grow_ptr(i), &b));
		ck_assert_int_eq(mc_blocks_insert(grow_ptr(i), (uint64_t)i + 1, 5, 1, &old), MC_NEW);
	}
	/* Down again: every other block, then the rest. */
	for (int i = 0; i < GROW_N; i += 2)
		ck_assert_int_eq(mc_blocks_remove(grow_ptr(i), &b), MC_REMOVED);
	ck_assert_uint_eq(mc_blocks_count(), GROW_N / 2);
	for (int i = 1; i < GROW_N; i += 2)
		ck_assert_msg(mc_blocks_remove(grow_ptr(i), &b) == MC_REMOVED && b.size == (uint64_t)i + 1,
			      "block %d", i);
	ck_assert_uint_eq(mc_blocks_count(), 0);
	for (int i = 0; i < GROW_N; i += 97)
		ck_assert(!mc_blocks_find(grow_ptr(i), &b));
}
END_TEST

/* Fields an entry cannot hold: a size of 128 GiB or more, a pointer
 * above 2^48.  They live in the side table and behave as any block. */
START_TEST(odd_blocks)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
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
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
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

/* Pointer 0 cannot have an entry (it would look empty): it goes to the
 * side table, and a lookup of 0 never takes an empty slot for it. */
START_TEST(pointer_zero)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_block b, old;
	ck_assert_int_eq(mc_blocks_remove(0, &b), MC_UNKNOWN);
	ck_assert(!mc_blocks_find(0, &b));
	ck_assert_int_eq(mc_blocks_insert(0, 5, 2, 0, &old), MC_NEW);
	ck_assert(mc_blocks_find(0, &b));
	ck_assert_uint_eq(b.size, 5);
	ck_assert_uint_eq(mc_blocks_count(), 0); /* side table only */
	ck_assert_int_eq(mc_blocks_remove(0, &b), MC_REMOVED);
	ck_assert_int_eq(mc_blocks_remove(0, &b), MC_UNKNOWN);
	/* With the side table empty again, the fast path serves inserts. */
	ck_assert_int_eq(mc_blocks_insert(0x5000, 1, 1, 1, &old), MC_NEW);
	ck_assert_int_eq(mc_blocks_remove(0x5000, &b), MC_REMOVED);
}
END_TEST

/* A second thread arrives while the first uses the table lock-free:
 * both keep working on their own blocks and on each other's, and no
 * block is lost or found twice. */
#define PER_THREAD 4000
#define ROUNDS 50
static atomic_int started;

static uintptr_t addr(int t, int i)
{
	return 0x40000000 + (uintptr_t)t * 0x1000000 + (uintptr_t)i * 32;
}

static void *churn(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct mc_block b, old;
	atomic_fetch_add(&started, 1);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < PER_THREAD; i++)
			if (mc_blocks_insert(addr(t, i), (uint64_t)i, (uint32_t)t, 1, &old) != MC_NEW)
				return (void *)1;
		for (int i = 0; i < PER_THREAD; i++)
			if (mc_blocks_remove(addr(t, i), &b) != MC_REMOVED || b.size != (uint64_t)i ||
			    b.stack != (uint32_t)t)
				return (void *)2;
	}
	return NULL;
}

START_TEST(second_thread)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_block b, old;
	/* Blocks of the first thread, some freed by the second. */
	for (int i = 0; i < PER_THREAD; i++)
		ck_assert_int_eq(mc_blocks_insert(addr(0, i), 8, 3, MC_EPOCH_NOW, &old), MC_NEW);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, churn, (void *)(intptr_t)2), 0);
	/* The first thread goes on, lock-free until the second arrives. */
	void *res = churn((void *)(intptr_t)1);
	ck_assert_ptr_null(res);
	ck_assert_int_eq(pthread_join(th, &res), 0);
	ck_assert_ptr_null(res);
	ck_assert_int_eq(atomic_load(&started), 2);
	for (int i = 0; i < PER_THREAD; i++) {
		ck_assert(mc_blocks_find(addr(0, i), &b));
		ck_assert_uint_eq(b.stack, 3);
	}
	ck_assert_uint_eq(mc_blocks_count(), PER_THREAD);
	ck_assert_int_eq(pthread_create(&th, NULL, churn, (void *)(intptr_t)3), 0);
	ck_assert_int_eq(pthread_join(th, &res), 0);
	ck_assert_ptr_null(res);
	for (int i = 0; i < PER_THREAD; i++)
		ck_assert_int_eq(mc_blocks_remove(addr(0, i), &b), MC_REMOVED);
	ck_assert_uint_eq(mc_blocks_count(), 0);
}
END_TEST

/* The pages of the shards' lines (mc_shards, 16 KiB) wholly below
 * byte offset upto that are present (mincore: written or read). */
static int shard_pages_below(size_t upto)
{
	uintptr_t lo = ((uintptr_t)mc_shards + 4095) & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)mc_shards + upto) & ~(uintptr_t)4095;
	unsigned char vec[8];
	if (hi <= lo)
		return 0;
	ck_assert_int_eq(mincore((void *)lo, hi - lo, vec), 0);
	int n = 0;
	for (size_t i = 0; i < (hi - lo) / 4096; i++)
		n += vec[i] & 1;
	return n;
}

static void *one_thread(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct mc_block old;
	for (int i = 0; i < FEW; i++)
		if (mc_blocks_insert(addr(t, i), 8, (uint32_t)t, 1, &old) != MC_NEW)
			return (void *)1;
	return NULL;
}

/* A group's 32 shard lines (2 KiB) are set up when a thread first takes
 * it (blocks.c's group_set_up), the first thread's the last group's:
 * a one-thread process writes those lines only, and no walk, fork or
 * lookup reads the others (a read maps the zero page: present too).
 * On main cdc8e4b6 mc_blocks_init wrote all 256 lines (4 pages, which
 * start-up populated in every tracking process).  One thread's blocks,
 * every walk of the table and a fork: no page of the shards below the
 * last group's lines present; a second thread's: none below the
 * seventh group's (the second thread's home); every block found. */
START_TEST(groups_set_up_when_taken)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	ck_assert_ptr_null(one_thread((void *)(intptr_t)0));
	struct mc_block b;
	for (int i = 0; i < FEW; i++)
		ck_assert(mc_blocks_find(addr(0, i), &b));
	ck_assert(!mc_blocks_find(addr(5, 0), &b));
	ck_assert(!mc_blocks_containing(addr(5, 0) + 4, &b));
	ck_assert(mc_blocks_any_live(0));
	ck_assert_uint_eq(mc_blocks_count(), FEW);
	seen = 0;
	mc_blocks_each_live(0, count, NULL);
	mc_blocks_lock_all();
	mc_blocks_each_live_locked(count, NULL);
	mc_blocks_unlock_all();
	ck_assert_uint_eq(seen, 2 * FEW);
	const uint32_t open[] = { 1 };
	mc_blocks_renumber(open, 1);
	mc_blocks_lock_all();
	pid_t pid = fork();
	if (pid == 0) {
		mc_blocks_after_fork_child();
		_exit(mc_blocks_count() != FEW || shard_pages_below(7 * GROUP_BYTES) != 0);
	}
	mc_blocks_unlock_all();
	ck_assert_int_gt(pid, 0);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the forked child's table");
	int n = shard_pages_below(7 * GROUP_BYTES);
	ck_assert_msg(n == 0, "one thread: %d pages of other groups' shard lines present", n);
	pthread_t th;
	void *res;
	ck_assert_int_eq(pthread_create(&th, NULL, one_thread, (void *)(intptr_t)1), 0);
	ck_assert_int_eq(pthread_join(th, &res), 0);
	ck_assert_ptr_null(res);
	ck_assert_uint_eq(mc_blocks_count(), 2 * FEW);
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < FEW; i++)
			ck_assert(mc_blocks_remove(addr(t, i), &b) == MC_REMOVED && b.stack == (uint32_t)t);
	n = shard_pages_below(6 * GROUP_BYTES);
	ck_assert_msg(n == 0, "two threads: %d pages of other groups' shard lines present", n);
}
END_TEST

/* Two threads at once, each allocating in its own 64 MiB heap (as glibc
 * gives each thread an arena, so the blocks land in different shards),
 * and each freeing the other's blocks while that one frees its own:
 * every block is found by the thread that frees it. */
#define CROSS_N 3000
static pthread_barrier_t cross_bar;

static uintptr_t heap_addr(int t, int i)
{
	return 0x7f3a00000000 + (uintptr_t)t * 0x4000000 + 0x8b0 + (uintptr_t)i * 48;
}

static void *cross(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct mc_block b, old;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < CROSS_N; i++)
			if (mc_blocks_insert(heap_addr(t, i), (uint64_t)i + 1, (uint32_t)t + 1,
					     MC_EPOCH_NOW, &old) != MC_NEW)
				return (void *)1;
		pthread_barrier_wait(&cross_bar);
		/* Half of the other thread's blocks, then half of ours. */
		for (int i = r & 1; i < CROSS_N; i += 2)
			if (mc_blocks_remove(heap_addr(1 - t, i), &b) != MC_REMOVED ||
			    b.size != (uint64_t)i + 1 || b.stack != (uint32_t)(1 - t) + 1)
				return (void *)2;
		for (int i = 1 - (r & 1); i < CROSS_N; i += 2)
			if (mc_blocks_remove(heap_addr(t, i), &b) != MC_REMOVED ||
			    b.size != (uint64_t)i + 1)
				return (void *)3;
		pthread_barrier_wait(&cross_bar);
	}
	return NULL;
}

START_TEST(cross_thread_free)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	pthread_barrier_init(&cross_bar, NULL, 2);
	pthread_t th;
	void *res;
	ck_assert_int_eq(pthread_create(&th, NULL, cross, (void *)(intptr_t)1), 0);
	/* This thread starts as the table's one thread. */
	res = cross((void *)(intptr_t)0);
	ck_assert_ptr_null(res);
	ck_assert_int_eq(pthread_join(th, &res), 0);
	ck_assert_ptr_null(res);
	pthread_barrier_destroy(&cross_bar);
	ck_assert_uint_eq(mc_blocks_count(), 0);
}
END_TEST

/* Shards growing while another thread uses others and frees blocks of
 * the growing ones: one thread adds blocks in a heap of its own, through
 * several growths of its shards, while the other churns its own heap
 * and frees every fourth of the first thread's blocks as they come. */
#define GROW2_N 120000
static _Atomic int grown;

static void *grower(void *arg)
{
	(void)arg;
	struct mc_block old;
	for (int i = 0; i < GROW2_N; i++) {
		if (mc_blocks_insert(heap_addr(0, i), (uint64_t)i + 1, 9, MC_EPOCH_NOW, &old) != MC_NEW)
			return (void *)1;
		atomic_store_explicit(&grown, i + 1, memory_order_release);
	}
	return NULL;
}

START_TEST(grow_while_shared)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_block b, old;
	pthread_t th;
	void *res;
	ck_assert_int_eq(pthread_create(&th, NULL, grower, NULL), 0);
	int freed_to = 0;
	for (int r = 0; freed_to < GROW2_N; r++) {
		for (int i = 0; i < CROSS_N; i++)
			ck_assert_int_eq(mc_blocks_insert(heap_addr(1, i), 1, 1, MC_EPOCH_NOW, &old),
					 MC_NEW);
		for (int i = 0; i < CROSS_N; i++)
			ck_assert_int_eq(mc_blocks_remove(heap_addr(1, i), &b), MC_REMOVED);
		int upto = atomic_load_explicit(&grown, memory_order_acquire);
		for (; freed_to < upto; freed_to++) {
			if (freed_to % 4)
				continue;
			ck_assert_int_eq(mc_blocks_remove(heap_addr(0, freed_to), &b), MC_REMOVED);
			ck_assert_uint_eq(b.size, (uint64_t)freed_to + 1);
		}
	}
	ck_assert_int_eq(pthread_join(th, &res), 0);
	ck_assert_ptr_null(res);
	ck_assert_uint_eq(mc_blocks_count(), GROW2_N - GROW2_N / 4);
	for (int i = 0; i < GROW2_N; i++)
		ck_assert_msg(mc_blocks_find(heap_addr(0, i), &b) == (i % 4 != 0), "block %d", i);
}
END_TEST

/* fork() from a table shared by two threads: the child has one thread,
 * owns the table again, and sees every block. */
START_TEST(fork_child_owns)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_block b, old;
	for (int i = 0; i < 100; i++)
		mc_blocks_insert(addr(0, i), 8, 3, 1, &old);
	pthread_t th;
	void *res;
	ck_assert_int_eq(pthread_create(&th, NULL, churn, (void *)(intptr_t)2), 0);
	ck_assert_int_eq(pthread_join(th, &res), 0);
	mc_blocks_lock_all();
	pid_t pid = fork();
	if (pid == 0) {
		mc_blocks_after_fork_child();
		int bad = churn((void *)(intptr_t)1) != NULL;
		for (int i = 0; i < 100; i++)
			bad |= mc_blocks_remove(addr(0, i), &b) != MC_REMOVED;
		bad |= mc_blocks_count() != 0;
		_exit(bad);
	}
	mc_blocks_unlock_all();
	ck_assert_int_gt(pid, 0);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_uint_eq(mc_blocks_count(), 100);
}
END_TEST

/* Four threads, each the owner of the group its own 64 MiB heap falls
 * in (no locks), growing their shards, while another thread walks the
 * whole table again and again (as the exit scan and fork do:
 * mc_blocks_lock_all), turning every group to locks while the owners are
 * inside; it forks too.  Then the owners free each other's blocks.
 * Every walk sees each live block once, with its own size and stack, as
 * many as the table counts, and every block is found by whoever frees
 * it.  A group turns once in a process, so the whole runs in several
 * forked children, each of which owns the table afresh. */
#define OWNERS 4
#define OWN_N 12000
#define OWN_RUNS 4
static _Atomic int owners_done;

static uint64_t own_size(int t, int i)
{
	return (uint64_t)t * 100000 + (uint64_t)i + 1;
}

static void *owner(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct mc_block b, old;
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < OWN_N; i++)
			if (mc_blocks_insert(heap_addr(t, i), own_size(t, i), (uint32_t)t + 1,
					     MC_EPOCH_NOW, &old) != MC_NEW)
				return (void *)1;
		if (r == 3)
			break;
		for (int i = 0; i < OWN_N; i++)
			if (mc_blocks_remove(heap_addr(t, i), &b) != MC_REMOVED ||
			    b.size != own_size(t, i) || b.stack != (uint32_t)t + 1)
				return (void *)2;
	}
	return NULL;
}

/* Thread t frees thread t+1's blocks. */
static void *cross_owner(void *arg)
{
	int t = ((int)(intptr_t)arg + 1) % OWNERS;
	struct mc_block b;
	for (int i = 0; i < OWN_N; i++)
		if (mc_blocks_remove(heap_addr(t, i), &b) != MC_REMOVED || b.size != own_size(t, i))
			return (void *)4;
	return NULL;
}

struct walk {
	uint64_t n, bad;
};

static void check_block(const struct mc_block *b, void *arg)
{
	struct walk *w = arg;
	w->n++;
	uint32_t t = b->stack - 1;
	uintptr_t off = b->ptr - heap_addr((int)t, 0);
	if (t >= OWNERS || off % 48 || b->size != own_size((int)t, (int)(off / 48)))
		w->bad++;
}

/* OWNERS threads running fn(t), started and joined: false where one
 * could not start, or returned other than NULL. */
static bool start_owners(pthread_t *th, void *(*fn)(void *))
{
	for (int t = 0; t < OWNERS; t++)
		if (pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t))
			return false;
	return true;
}

static bool join_owners(const pthread_t *th)
{
	for (int t = 0; t < OWNERS; t++) {
		void *res;
		if (pthread_join(th[t], &res) || res)
			return false;
	}
	return true;
}

/* One run, in a child: its exit status says what went wrong. */
static int owners_run(void)
{
	mc_blocks_after_fork_child();
	pthread_t th[OWNERS];
	atomic_store(&owners_done, 0);
	if (!start_owners(th, owner))
		return 10;
	/* Walk from the start: the owners are inside, growing. */
	int walks = 0, forks = 0;
	for (; walks < 40; walks++) {
		struct walk w = { 0, 0 };
		mc_blocks_lock_all();
		mc_blocks_each_live_locked(check_block, &w);
		uint64_t counted = mc_blocks_count();
		pid_t pid = walks % 10 == 9 ? fork() : -1;
		if (pid == 0) {
			/* The grandchild's one thread owns every group again. */
			mc_blocks_after_fork_child();
			struct mc_block b, old;
			int bad = mc_blocks_insert(0x100000, 7, 1, 1, &old) != MC_NEW;
			bad |= mc_blocks_remove(0x100000, &b) != MC_REMOVED || b.size != 7;
			bad |= mc_blocks_count() != counted;
			_exit(bad);
		}
		mc_blocks_unlock_all();
		if (pid > 0) {
			int st;
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
				return 11;
			forks++;
		}
		if (w.bad || w.n != counted)
			return 12;
		w.n = w.bad = 0;
		mc_blocks_each_live(0, check_block, &w);
		if (w.bad)
			return 13;
		(void)mc_blocks_any_live(0); /* locks and leaves shards too */
	}
	if (!join_owners(th))
		return 14;
	if (forks != 4 || mc_blocks_count() != OWNERS * OWN_N || !mc_blocks_any_live(0))
		return 15;
	/* Each other's blocks, all at once. */
	if (!start_owners(th, cross_owner))
		return 16;
	if (!join_owners(th))
		return 17;
	return mc_blocks_count() != 0 || mc_blocks_any_live(0) ? 18 : 0;
}

/* Four threads whose blocks lie in two 2 MiB units each, 6 MiB apart,
 * as jemalloc's arenas hand out extents: each thread's units go to a
 * group of its own (the directory, blocks.c's own_shard), so none of the
 * four groups ever turns to locks.  A group picked by a hash of the
 * unit (before the directory) put units of threads 0 and 2 in one.  The
 * main thread walks the table first (as a region's end or a fork does):
 * the groups it claims for the walk it gives back (kept, every thread
 * locked its group). */
#define UNIT_N 3000
static uintptr_t unit_addr(int t, int i)
{
	return 0x7f4c2e600000 + (uintptr_t)t * 0x600000 + (uintptr_t)(i % 2) * 0x200000 +
	       (uintptr_t)(i / 2) * 64;
}

/* Thread t's UNIT_N blocks at addr_of(t, i), of size i + 1 and stack t + 1:
 * put in and freed three times, the third time left in when keep.
 * Non-NULL when one was not new or not found as it was put. */
static void *unit_rounds(int t, uintptr_t (*addr_of)(int, int), bool keep)
{
	struct mc_block b, old;
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < UNIT_N; i++)
			if (mc_blocks_insert(addr_of(t, i), (uint64_t)i + 1, (uint32_t)t + 1,
					     MC_EPOCH_NOW, &old) != MC_NEW)
				return (void *)1;
		if (keep && r == 2)
			break;
		for (int i = 0; i < UNIT_N; i++)
			if (mc_blocks_remove(addr_of(t, i), &b) != MC_REMOVED ||
			    b.size != (uint64_t)i + 1 || b.stack != (uint32_t)t + 1)
				return (void *)2;
	}
	return NULL;
}

static void *unit_owner(void *arg)
{
	return unit_rounds((int)(intptr_t)arg, unit_addr, false);
}

static int units_run(void)
{
	mc_blocks_after_fork_child();
	if (mc_blocks_groups_locked())
		return 77; /* no membarrier(2): every group locks */
	struct walk w = { 0, 0 };
	mc_blocks_lock_all();
	mc_blocks_each_live_locked(check_block, &w);
	mc_blocks_unlock_all();
	pthread_t th[OWNERS];
	if (!start_owners(th, unit_owner))
		return 10;
	if (!join_owners(th))
		return 11;
	if (mc_blocks_count())
		return 12;
	return (int)mc_blocks_groups_locked();
}

/* run() in a forked child, whose one thread owns the table afresh:
 * it exits 0, or 77 without membarrier(2), or 1 to OWNERS for the
 * groups that turned to locks. */
static void groups_run(int (*run)(void))
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	pid_t pid = fork();
	if (pid == 0)
		_exit(run());
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77),
		      "status %#x (1-%d: groups that turned to locks)", st, OWNERS);
}

START_TEST(units_own_groups)
{
	groups_run(units_run);
}
END_TEST

/* Four threads whose blocks interleave in the same two 2 MiB units, as
 * tcmalloc hands neighbouring blocks of a span to different threads:
 * each thread's blocks still go to its own home group (a unit's groups
 * are every thread's that put a block there), so none turns to locks.
 * With one group a unit (the first thread's), the other three locked
 * it, each operation a locked exchange on a line the others wrote
 * (bench/run.sh, four threads under tcmalloc: 17.6x the bare run).
 * Then each thread frees the next one's blocks: each is found, once. */
static uintptr_t shared_addr(int t, int i)
{
	return 0x7f4c40000000 + (uintptr_t)(i % 2) * 0x200000 +
	       ((uintptr_t)(i / 2) * OWNERS + (uintptr_t)t) * 64;
}

static pthread_barrier_t shared_bar;

static void *shared_owner(void *arg)
{
	pthread_barrier_wait(&shared_bar);
	return unit_rounds((int)(intptr_t)arg, shared_addr, true);
}

static void *shared_cross(void *arg)
{
	int t = ((int)(intptr_t)arg + 1) % OWNERS;
	struct mc_block b;
	for (int i = 0; i < UNIT_N; i++)
		if (mc_blocks_remove(shared_addr(t, i), &b) != MC_REMOVED ||
		    b.size != (uint64_t)i + 1 || b.stack != (uint32_t)t + 1)
			return (void *)3;
	return NULL;
}

static uint64_t shared_seen[OWNERS];
static void shared_count(const struct mc_block *b, void *arg)
{
	(void)arg;
	if (b->stack >= 1 && b->stack <= OWNERS)
		shared_seen[b->stack - 1]++;
}

static int shared_run(void)
{
	mc_blocks_after_fork_child();
	if (mc_blocks_groups_locked())
		return 77; /* no membarrier(2): every group locks */
	pthread_barrier_init(&shared_bar, NULL, OWNERS);
	pthread_t th[OWNERS];
	if (!start_owners(th, shared_owner))
		return 10;
	if (!join_owners(th))
		return 11;
	unsigned locked = mc_blocks_groups_locked();
	if (locked)
		return (int)locked;
	if (mc_blocks_count() != OWNERS * UNIT_N)
		return 12;
	mc_blocks_each_live(0, shared_count, NULL);
	for (int t = 0; t < OWNERS; t++)
		if (shared_seen[t] != UNIT_N)
			return 13;
	if (!start_owners(th, shared_cross))
		return 14;
	if (!join_owners(th))
		return 15;
	return mc_blocks_count() ? 16 : 0;
}

START_TEST(shared_units_own_groups)
{
	groups_run(shared_run);
}
END_TEST

START_TEST(owners_and_walker)
{
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	for (int run = 0; run < OWN_RUNS; run++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(owners_run());
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run %d: status %#x", run, st);
	}
}
END_TEST

/* snapshot.c counts the sites only where a report can show the peak
 * snapshot: the JSON report, the full text, a budget's violation (a
 * baseline alone shows nothing: only a budget's relative limits read
 * it). */
START_TEST(sites_only_where_shown)
{
	struct mc_options saved = mc_opt;
	const char *file = "/nonexistent/file";
	mc_opt.track = true;
	mc_opt.peak_sites = 10;
	mc_opt.text = MC_TEXT_SUMMARY;
	mc_opt.report = mc_opt.budget = mc_opt.baseline = NULL;
	mc_snapshot_init();
	ck_assert_msg(!mc_sites_on, "sites counted with nothing to show them");
	const char **shows[] = { &mc_opt.report, &mc_opt.budget };
	for (size_t i = 0; i < sizeof shows / sizeof *shows; i++) {
		*shows[i] = file;
		mc_snapshot_init();
		ck_assert_msg(mc_sites_on, "sites not counted with option %zu set", i);
		*shows[i] = NULL;
	}
	mc_opt.baseline = file;
	mc_snapshot_init();
	ck_assert_msg(!mc_sites_on, "sites counted with MEMCHECK_BASELINE alone");
	mc_opt.baseline = NULL;
	mc_opt.text = MC_TEXT_FULL;
	mc_snapshot_init();
	ck_assert_msg(mc_sites_on, "sites not counted with MEMCHECK_TEXT=full");
	mc_opt.peak_sites = 0;
	mc_snapshot_init();
	ck_assert_msg(!mc_sites_on, "sites counted with MEMCHECK_PEAK_SITES=0");
	mc_opt.peak_sites = 10;
	mc_opt.track = false;
	mc_snapshot_init();
	ck_assert_msg(!mc_sites_on, "sites counted without tracking");
	mc_opt = saved;
	mc_snapshot_init();
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("blocks", 60);
	tcase_add_test(tc, insert_find_remove);
	tcase_add_test(tc, model_check);
	tcase_add_test(tc, short_process_few_pages);
	tcase_add_test(tc, owned_remove_shift);
	tcase_add_test(tc, short_process_no_faults);
	tcase_add_test(tc, count_only_no_table);
	tcase_add_test(tc, growth);
	tcase_add_test(tc, odd_blocks);
	tcase_add_test(tc, renumber);
	tcase_add_test(tc, pointer_zero);
	tcase_add_test(tc, second_thread);
	tcase_add_test(tc, cross_thread_free);
	tcase_add_test(tc, grow_while_shared);
	tcase_add_test(tc, fork_child_owns);
	tcase_add_test(tc, owners_and_walker);
	tcase_add_test(tc, units_own_groups);
	tcase_add_test(tc, shared_units_own_groups);
	tcase_add_test(tc, sites_only_where_shown);
	tcase_add_test(tc, groups_set_up_when_taken);
	return h_run_suite(NULL);
}
