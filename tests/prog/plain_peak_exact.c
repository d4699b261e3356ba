/*
 * plain_peak_exact.c - a peak of live bytes that threads reach while
 * they race, whose exact figure the program knows: the reported peak
 * must be that figure, no more, no less (tests/test_threads.c).
 *
 *   plain_peak_exact [ROUNDS]      (run it preloaded)
 *
 * NTHREADS threads run ROUNDS rounds.  In a round each thread first
 * churns (malloc and free in a ring of RING blocks of 1..1024 bytes, at
 * most 64 KiB live; thread t makes CHURN * (t + 1) / 2 steps, so that
 * the threads come to their holds one after another), frees its ring,
 * then allocates its hold, HOLD_BLOCKS blocks whose size depends on the
 * round and the thread (every hold above 1 MiB, so more than any
 * thread's churn), and waits at a barrier.
 * With every thread there, thread 0 reads memcheck_live_bytes: the live
 * bytes with every hold in (nothing else moves: the others wait).  Then
 * each thread frees the hold of the next thread (frees of blocks another
 * thread allocated) and the round ends at a second barrier.
 *
 * Before the first barrier of a round the live bytes are below that
 * reading: a thread that has not finished its hold has less than its
 * hold live.  So the process's peak is the highest reading, exactly.
 * What memcheck must get right for that: every thread's allocations
 * counted when they raise the peak, none of them twice, and frees (by
 * any thread) counted before a later peak is taken.  A peak read from
 * per-thread figures without care is low by what the other threads had
 * not told yet, or high by frees not yet seen.
 *
 * Prints "peak=N base=B rounds=R": N the highest reading, B the reading
 * minus the holds (the same in every round, or the program says so and
 * exits 1).
 *
 *   plain_peak_exact realloc
 *
 * The same, the live bytes moved by realloc as well: one churn step in
 * four reallocs its slot's block to the new size instead of freeing it
 * and allocating anew, and each block of a hold is allocated at 16
 * bytes and then realloc'd to its size, so that the peak is crossed by
 * reallocs (memcheck counts the old block's free, then the new block's
 * allocation, lib/account.c's realloc_done).  Eight rounds.
 *
 *   plain_peak_exact solo
 *
 * The first thread's peak once a second one has come: main, the only
 * thread, allocates and frees 4 MiB (a peak with room below it), starts
 * a second thread that allocates a small hold and waits with it, then
 * allocates more than 4 MiB itself and reads the live bytes, both holds
 * in: the new peak, exactly.  memcheck lets the first thread alone
 * count without a lock (lib/account.c, solo); a first thread that went
 * on so once the second had come would miss what the second had not
 * told yet, and read low.  Prints "peak=N base=0 rounds=1".  memcheck_live_bytes is found with dlsym: the program is
 * not linked with memcheck.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define RING 64
#define CHURN 20000
#define HOLD_BLOCKS 256

static uint64_t (*live_bytes)(void);
static pthread_barrier_t all_hold, all_freed;
static int rounds = 8;
static int use_realloc; /* "realloc": the churn and the holds realloc */
static void *hold[NTHREADS][HOLD_BLOCKS];
static uint64_t reading[64];

/* Block i of thread t's hold in round r.  From round to round the
 * joint hold rises by a few bytes, or falls a little below the highest
 * so far (odd rounds): each new peak is crossed by the last allocations
 * of the slowest thread, while the others wait with what they did not
 * tell yet, and a round that stays below must not raise it. */
static size_t hold_size(int r, int t, int i)
{
	int extra = r % 2 ? 16 * r - 40 : 16 * r;
	return 6000 + (size_t)t * 24 + (size_t)(i == 0 ? extra : 0);
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *work(void *arg)
{
	int t = (int)(long)arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
	void *ring[RING] = { 0 };
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < CHURN * (t + 1) / 2; i++) { /* thread 3 comes last */
			uint64_t x = next_rand(&seed);
			int k = (int)(x % RING);
			size_t n = 1 + (x >> 32) % 1024;
			if (use_realloc && (x >> 20 & 3) == 0) {
				void *p = realloc(ring[k], n);
				if (!p)
					return NULL;
				ring[k] = p;
			} else {
				free(ring[k]);
				ring[k] = malloc(n);
			}
			if (!ring[k])
				return NULL;
			memset(ring[k], 1, 1);
		}
		for (int k = 0; k < RING; k++) {
			free(ring[k]);
			ring[k] = NULL;
		}
		for (int i = 0; i < HOLD_BLOCKS; i++) {
			if (use_realloc) {
				/* grown to its size: the hold's last bytes come
				 * by realloc */
				void *small = malloc(16);
				hold[t][i] = small ? realloc(small, hold_size(r, t, i)) : NULL;
				if (!hold[t][i]) {
					free(small);
					return NULL;
				}
			} else
				hold[t][i] = malloc(hold_size(r, t, i));
			if (!hold[t][i])
				return NULL;
			memset(hold[t][i], 2, 1);
		}
		pthread_barrier_wait(&all_hold);
		if (t == 0)
			reading[r] = live_bytes();
		pthread_barrier_wait(&all_hold);
		/* the next thread's blocks: frees of another thread's blocks */
		int o = (t + 1) % NTHREADS;
		for (int i = 0; i < HOLD_BLOCKS; i++)
			free(hold[o][i]);
		pthread_barrier_wait(&all_freed);
	}
	return arg;
}

#define SOLO_BIG (4 << 20)
#define SOLO_HOLD 64
static void *second_hold[SOLO_HOLD];
static pthread_barrier_t pair_hold, pair_read;

static void *second(void *arg)
{
	for (int i = 0; i < SOLO_HOLD; i++) {
		second_hold[i] = malloc(1000 + (size_t)i * 8);
		if (!second_hold[i])
			return NULL;
		memset(second_hold[i], 3, 1);
	}
	pthread_barrier_wait(&pair_hold);
	pthread_barrier_wait(&pair_read);
	for (int i = 0; i < SOLO_HOLD; i++)
		free(second_hold[i]);
	return arg;
}

static int solo(void)
{
	char *big = malloc(SOLO_BIG);
	if (!big)
		return 1;
	memset(big, 1, 1);
	free(big);
	pthread_barrier_init(&pair_hold, NULL, 2);
	pthread_barrier_init(&pair_read, NULL, 2);
	pthread_t th;
	if (pthread_create(&th, NULL, second, NULL) != 0)
		return 1;
	pthread_barrier_wait(&pair_hold);
	/* past the 4 MiB peak, in steps, while the second thread holds */
	enum { N = 66 };
	void *mine[N];
	for (int i = 0; i < N; i++) {
		mine[i] = malloc(SOLO_BIG / 64);
		if (!mine[i])
			return 1;
		memset(mine[i], 2, 1);
	}
	uint64_t reading = live_bytes();
	pthread_barrier_wait(&pair_read);
	pthread_join(th, NULL);
	for (int i = 0; i < N; i++)
		free(mine[i]);
	printf("peak=%llu base=0 rounds=1\n", (unsigned long long)reading);
	return 0;
}

int main(int argc, char **argv)
{
	live_bytes = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "memcheck_live_bytes");
	if (argc > 1 && !strcmp(argv[1], "solo"))
		return live_bytes ? solo() : 2;
	if (argc > 1 && !strcmp(argv[1], "realloc"))
		use_realloc = 1;
	else if (argc > 1)
		rounds = atoi(argv[1]);
	if (rounds < 1 || rounds > 64)
		return 2;
	if (!live_bytes) {
		fprintf(stderr, "plain_peak_exact: memcheck is not loaded\n");
		return 2;
	}
	pthread_barrier_init(&all_hold, NULL, NTHREADS);
	pthread_barrier_init(&all_freed, NULL, NTHREADS);
	pthread_t th[NTHREADS];
	for (int t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, work, (void *)(long)t) != 0)
			return 1;
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	uint64_t peak = 0, base = 0;
	for (int r = 0; r < rounds; r++) {
		uint64_t holds = 0;
		for (int t = 0; t < NTHREADS; t++)
			for (int i = 0; i < HOLD_BLOCKS; i++)
				holds += hold_size(r, t, i);
		uint64_t b = reading[r] - holds;
		if (r > 0 && b != base) {
			printf("base moved: round %d read %llu beside the holds, round 0 %llu\n", r,
			       (unsigned long long)b, (unsigned long long)base);
			return 1;
		}
		base = b;
		if (reading[r] > peak)
			peak = reading[r];
	}
	printf("peak=%llu base=%llu rounds=%d\n", (unsigned long long)peak,
	       (unsigned long long)base, rounds);
	return 0;
}
