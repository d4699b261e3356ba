/*
 * blocks.c - the live-block table: pointer -> size, region epoch, stack.
 *
 * An open-addressing hash table (linear probing, deletion by backward
 * shift, so no tombstones) in mmap'd memory, split into shards with a
 * lock each so threads rarely meet.  Shards start tiny and double at 3/4
 * full: a test with a few thousand live blocks keeps a table that fits
 * in cache.
 *
 * Most tests run one thread, and two locked instructions per malloc/free
 * pair are a large part of memcheck's cost.  So while a single thread
 * uses the table it takes no locks: it only marks itself busy with a
 * plain store.  The first other thread to arrive sets `multi`, issues
 * membarrier(2) (which makes that store and the busy mark visible both
 * ways without the owner paying for a fence), waits for the owner to
 * leave the table, and from then on everyone locks.  Where membarrier is
 * not available every operation locks from the start.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define NSHARDS 256
#define MIN_CAP 64 /* slots per shard at first use: at low load nearly every lookup
		    * ends at its first probe, and a mispredicted probe loop costs
		    * more than the memory (64 x 256 x 24 B = 384 KiB) */

/* 16 bytes a shard, so all 256 headers fit in 4 KiB and stay in cache;
 * the locks, touched only once threads share the table, live apart, a
 * cache line each. */
struct shard {
	struct mc_block *e;
	uint32_t cap;          /* power of two, 0 until first use */
	uint32_t live;
};

static struct shard shards[NSHARDS] __attribute__((aligned(64)));
static struct {
	atomic_int lock;
} __attribute__((aligned(64))) locks[NSHARDS];
static atomic_size_t table_bytes;

static _Atomic int multi = 1;          /* 0: one thread, no locks */
static volatile int owner_busy;        /* the one thread is inside the table */
static MC_TLS int is_owner;            /* 1: this thread is the one, 2: not */
static atomic_flag owner_claim = ATOMIC_FLAG_INIT;
static bool *fork_held;

static inline uint64_t mix(uintptr_t p)
{
	uint64_t h = (uint64_t)p >> 4;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

static inline struct shard *shard_of(uint64_t h)
{
	return &shards[h & (NSHARDS - 1)];
}

static void spin_lock(struct shard *s)
{
	for (int spins = 0;; spins++) {
		atomic_int *l = &locks[s - shards].lock;
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		if (spins > 64)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
}

static bool membarrier_ok(void)
{
	return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* A second thread has come: from now on, everyone locks. */
static void go_multi(void)
{
	if (atomic_exchange(&multi, 1))
		return;
	int saved = errno;
	syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	errno = saved;
	while (owner_busy)
		__builtin_ia32_pause();
}

/* Enter shard s: returns true when a lock was taken. */
static inline bool lock(struct shard *s)
{
	if (likely(!atomic_load_explicit(&multi, memory_order_relaxed))) {
		if (likely(is_owner == 1)) {
			owner_busy = 1;
			atomic_signal_fence(memory_order_seq_cst);
			if (likely(!atomic_load_explicit(&multi, memory_order_relaxed)))
				return false;
			owner_busy = 0;
		} else if (!is_owner && !atomic_flag_test_and_set(&owner_claim)) {
			is_owner = 1;
			return lock(s);
		} else {
			is_owner = 2;
			go_multi();
		}
	}
	spin_lock(s);
	return true;
}

static inline void unlock(struct shard *s, bool locked)
{
	if (likely(!locked)) {
		atomic_signal_fence(memory_order_seq_cst);
		owner_busy = 0;
		return;
	}
	atomic_store_explicit(&locks[s - shards].lock, 0, memory_order_release);
}

static inline uint32_t slot_of(uint64_t h, uint32_t cap)
{
	return (uint32_t)(h >> 8) & (cap - 1);
}

/* Small shard arrays live side by side in one mapping.  Mapped one by
 * one they would each start a page, land in the same cache sets, and
 * evict each other: that doubled the cost of every lookup. */
#define SMALL_CAP 128
static struct mc_block *small;   /* NSHARDS * SMALL_CAP entries */

static bool is_small(uint32_t cap)
{
	return small && cap <= SMALL_CAP;
}

static struct mc_block *array_for(struct shard *s, uint32_t cap)
{
	if (is_small(cap)) {
		struct mc_block *e = small + (size_t)(s - shards) * SMALL_CAP;
		/* The new array may be the old one: callers copy first. */
		return e;
	}
	int saved = errno;
	struct mc_block *e = mc_map((size_t)cap * sizeof *e);
	errno = saved;
	return e;
}

/* Grow a shard to cap entries.  Returns false (table unchanged) when
 * memory runs out. */
static bool rebuild(struct shard *s, uint32_t cap)
{
	struct mc_block old_small[SMALL_CAP];
	struct mc_block *old = s->e;
	struct mc_block *e = array_for(s, cap);
	if (!e)
		return false;
	if (old && old == e) {
		/* Growing within the shard's small array: move the entries
		 * aside, then spread them over the larger table. */
		memcpy(old_small, old, (size_t)s->cap * sizeof *old);
		old = old_small;
	}
	memset(e, 0, (size_t)cap * sizeof *e);
	for (uint32_t i = 0; i < s->cap; i++) {
		struct mc_block *b = &old[i];
		if (!b->ptr)
			continue;
		uint32_t j = slot_of(mix(b->ptr), cap);
		while (e[j].ptr)
			j = (j + 1) & (cap - 1);
		e[j] = *b;
	}
	if (s->e && !is_small(s->cap)) {
		mc_unmap(s->e, (size_t)s->cap * sizeof *e);
		atomic_fetch_sub(&table_bytes, (size_t)s->cap * sizeof *e);
	}
	if (!is_small(cap))
		atomic_fetch_add(&table_bytes, (size_t)cap * sizeof *e);
	s->e = e;
	s->cap = cap;
	return true;
}

/* Make room for one more entry: double at 3/4 full. */
static bool make_room(struct shard *s)
{
	if (likely(s->cap && (uint64_t)(s->live + 1) * 4 <= (uint64_t)s->cap * 3))
		return true;
	if (!s->cap)
		return rebuild(s, MIN_CAP);
	if (s->cap >= (1u << 31))
		return s->live + 1 < s->cap;
	return rebuild(s, s->cap * 2) || s->live + 1 < s->cap;
}

/* Delete entry i, shifting later entries of its cluster back so every
 * entry stays reachable from its home slot. */
static void delete_at(struct shard *s, uint32_t i)
{
	uint32_t mask = s->cap - 1;
	for (uint32_t j = i;;) {
		j = (j + 1) & mask;
		struct mc_block *b = &s->e[j];
		if (!b->ptr)
			break;
		uint32_t home = slot_of(mix(b->ptr), s->cap);
		/* b may move to i only if its home is not in (i, j]. */
		bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (between)
			continue;
		s->e[i] = *b;
		i = j;
	}
	s->e[i].ptr = 0;
}

void mc_blocks_init(void)
{
	/* Shards are mapped on first use: a process that allocates little
	 * should not pay for 256 maps at start-up. */
	small = mc_map((size_t)NSHARDS * SMALL_CAP * sizeof *small);
	if (small)
		atomic_fetch_add(&table_bytes, (size_t)NSHARDS * SMALL_CAP * sizeof *small);
	if (membarrier_ok())
		atomic_store(&multi, 0);
}

static void table_full(void)
{
	static atomic_int said;
	if (!atomic_exchange(&said, 1))
		mc_log("out of memory for the block table; blocks allocated from "
		       "now on are counted but not tracked");
}

enum mc_insert mc_blocks_insert(uintptr_t ptr, uint64_t size, uint32_t stack,
				uint32_t epoch, struct mc_block *old)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	enum mc_insert r = MC_NEW;
	bool locked = lock(s);
	if (unlikely(!make_room(s))) {
		unlock(s, locked);
		table_full();
		return MC_NEW;
	}
	uint32_t i = slot_of(h, s->cap);
	struct mc_block *b;
	for (;; i = (i + 1) & (s->cap - 1)) {
		b = &s->e[i];
		if (!b->ptr)
			break;
		if (unlikely(b->ptr == ptr)) {
			r = MC_REPLACED_LIVE;
			*old = *b;
			s->live--;
			break;
		}
	}
	b->ptr = ptr;
	b->size = size;
	b->stack = stack;
	b->aux = epoch;
	s->live++;
	unlock(s, locked);
	return r;
}

/* The slot holding ptr in its shard, or -1.  Call with the shard entered. */
static inline int64_t find(const struct shard *s, uintptr_t ptr, uint64_t h)
{
	if (unlikely(!s->cap))
		return -1;
	for (uint32_t i = slot_of(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
		uintptr_t p = s->e[i].ptr;
		if (!p)
			return -1;
		if (p == ptr)
			return i;
	}
}

enum mc_remove mc_blocks_remove(uintptr_t ptr, struct mc_block *out)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	bool locked = lock(s);
	int64_t i = find(s, ptr, h);
	if (likely(i >= 0)) {
		*out = s->e[i];
		s->live--;
		delete_at(s, (uint32_t)i);
	}
	unlock(s, locked);
	return i >= 0 ? MC_REMOVED : MC_UNKNOWN;
}

bool mc_blocks_find(uintptr_t ptr, struct mc_block *out)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	bool locked = lock(s);
	int64_t i = find(s, ptr, h);
	if (i >= 0)
		*out = s->e[i];
	unlock(s, locked);
	return i >= 0;
}

bool mc_blocks_set_epoch(uintptr_t ptr, uint32_t epoch)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	bool locked = lock(s);
	int64_t i = find(s, ptr, h);
	if (i >= 0)
		s->e[i].aux = epoch;
	unlock(s, locked);
	return i >= 0;
}

void mc_blocks_each_live(uint32_t min_epoch,
			 void (*fn)(const struct mc_block *, void *), void *arg)
{
	for (int k = 0; k < NSHARDS; k++) {
		struct shard *s = &shards[k];
		bool locked = lock(s);
		for (uint32_t i = 0; i < s->cap; i++) {
			const struct mc_block *b = &s->e[i];
			if (b->ptr && b->aux >= min_epoch)
				fn(b, arg);
		}
		unlock(s, locked);
	}
}

size_t mc_blocks_bytes(void)
{
	return atomic_load(&table_bytes);
}

uint64_t mc_blocks_count(void)
{
	uint64_t n = 0;
	for (int k = 0; k < NSHARDS; k++)
		n += __atomic_load_n(&shards[k].live, __ATOMIC_RELAXED);
	return n;
}

/* fork(): hold every lock across it so the child never inherits one that
 * a thread which no longer exists there was holding. */
void mc_blocks_lock_all(void)
{
	static bool held[NSHARDS];
	for (int k = 0; k < NSHARDS; k++)
		held[k] = lock(&shards[k]);
	/* Only the owner can get here without locks, and then it is alone. */
	fork_held = held;
}

void mc_blocks_unlock_all(void)
{
	for (int k = NSHARDS - 1; k >= 0; k--)
		unlock(&shards[k], fork_held[k]);
}

/* The child has one thread: the one that forked.  It owns the table. */
void mc_blocks_after_fork_child(void)
{
	for (int k = 0; k < NSHARDS; k++)
		atomic_store(&locks[k].lock, 0);
	owner_busy = 0;
	atomic_flag_clear(&owner_claim);
	is_owner = 0;
	atomic_store(&multi, membarrier_ok() ? 0 : 1);
}

/* With every shard held by mc_blocks_lock_all (the scan). */
void mc_blocks_each_live_locked(void (*fn)(const struct mc_block *, void *), void *arg)
{
	for (int k = 0; k < NSHARDS; k++) {
		const struct shard *s = &shards[k];
		for (uint32_t i = 0; i < s->cap; i++)
			if (s->e[i].ptr)
				fn(&s->e[i], arg);
	}
}
