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
 *
 * An entry is 16 bytes: the pointer with the block's region epoch in its
 * top 16 bits, and the size with the stack id in its top 27 bits.  With
 * the table at 3/8 to 3/4 load that is 21 to 43 bytes per block.  Blocks
 * that do not fit (a pointer above 2^48, a size of 128 GiB or more) go to
 * a small side table; epochs are kept below 2^16 by region.c, which
 * renumbers them (mc_blocks_renumber) when the counter gets there.
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
#define PTR_BITS 48
#define SIZE_BITS 37
#define PTR_MASK ((UINT64_C(1) << PTR_BITS) - 1)
#define SIZE_MASK ((UINT64_C(1) << SIZE_BITS) - 1)
#define ODD_MAX 64 /* side table: blocks whose fields do not fit an entry */
#define MIN_CAP 64 /* slots per shard at first use: at low load nearly every lookup
		    * ends at its first probe, and a mispredicted probe loop costs
		    * more than the memory (64 x 256 x 16 B = 256 KiB) */

struct entry {
	uint64_t w0;  /* pointer | epoch << PTR_BITS; 0: empty */
	uint64_t w1;  /* size | stack << SIZE_BITS */
};

_Atomic uint32_t mc_epoch = 1;

static inline uintptr_t e_ptr(const struct entry *e)
{
	return (uintptr_t)(e->w0 & PTR_MASK);
}

static inline void unpack(const struct entry *e, struct mc_block *b)
{
	b->ptr = e_ptr(e);
	b->aux = (uint32_t)(e->w0 >> PTR_BITS);
	b->size = e->w1 & SIZE_MASK;
	b->stack = (uint32_t)(e->w1 >> SIZE_BITS);
}

static inline bool fits(uintptr_t ptr, uint64_t size, uint32_t stack)
{
	return ((ptr >> PTR_BITS) | (size >> SIZE_BITS) | (stack >> 27)) == 0;
}

/* 16 bytes a shard, so all 256 headers fit in 4 KiB and stay in cache;
 * the locks, touched only once threads share the table, live apart, a
 * cache line each. */
struct shard {
	struct entry *e;
	uint32_t cap;          /* power of two, 0 until first use */
	uint32_t room;         /* entries to add before the shard must grow */
};

/* Entries a shard of cap slots holds before it grows: 3/4 full. */
static inline uint32_t limit(uint32_t cap)
{
	return cap >= (1u << 31) ? cap - 1 : cap / 4 * 3;
}

static inline uint32_t live_in(const struct shard *s)
{
	return limit(s->cap) - s->room;
}

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

static bool lock_slow(struct shard *s);

/* Enter shard s: returns true when a lock was taken.  The one thread's
 * path is inline; the rest is out of line, so that the table's hot
 * functions make no call on that path and save few registers. */
static inline bool owner_enter(void)
{
	if (unlikely(atomic_load_explicit(&multi, memory_order_relaxed)) ||
	    unlikely(is_owner != 1))
		return false;
	owner_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	if (likely(!atomic_load_explicit(&multi, memory_order_relaxed)))
		return true;
	owner_busy = 0;
	return false;
}

static inline void owner_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	owner_busy = 0;
}

static inline bool lock(struct shard *s)
{
	return owner_enter() ? false : lock_slow(s);
}

static __attribute__((noinline)) bool lock_slow(struct shard *s)
{
	if (!atomic_load_explicit(&multi, memory_order_relaxed) && is_owner != 1) {
		if (!is_owner && !atomic_flag_test_and_set(&owner_claim)) {
			is_owner = 1;
			return lock(s);
		}
		is_owner = 2;
		go_multi();
	}
	spin_lock(s);
	return true;
}

static inline void unlock(struct shard *s, bool locked)
{
	if (likely(!locked)) {
		owner_leave();
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
static struct entry *small;   /* NSHARDS * SMALL_CAP entries */

static bool is_small(uint32_t cap)
{
	return small && cap <= SMALL_CAP;
}

static struct entry *array_for(struct shard *s, uint32_t cap)
{
	if (is_small(cap)) {
		struct entry *e = small + (size_t)(s - shards) * SMALL_CAP;
		/* The new array may be the old one: callers copy first. */
		return e;
	}
	int saved = errno;
	struct entry *e = mc_map((size_t)cap * sizeof *e);
	errno = saved;
	return e;
}

/* Grow a shard to cap entries.  Returns false (table unchanged) when
 * memory runs out. */
static bool rebuild(struct shard *s, uint32_t cap)
{
	uint32_t live = live_in(s);
	struct entry old_small[SMALL_CAP];
	struct entry *old = s->e;
	struct entry *e = array_for(s, cap);
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
		struct entry *b = &old[i];
		if (!b->w0)
			continue;
		uint32_t j = slot_of(mix(e_ptr(b)), cap);
		while (e[j].w0)
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
	s->room = limit(cap) - live;
	return true;
}

/* The shard is full (or not there yet): double it. */
static __attribute__((noinline)) bool grow(struct shard *s)
{
	if (!s->cap)
		return rebuild(s, MIN_CAP);
	return s->cap < (1u << 31) && rebuild(s, s->cap * 2);
}

/* Make room for one more entry: double at 3/4 full. */
static inline bool make_room(struct shard *s)
{
	return likely(s->room) || grow(s);
}

/* Delete entry i, shifting later entries of its cluster back so every
 * entry stays reachable from its home slot. */
static inline __attribute__((always_inline)) void delete_at(struct shard *s, uint32_t i)
{
	uint32_t mask = s->cap - 1;
	for (uint32_t j = i;;) {
		j = (j + 1) & mask;
		struct entry *b = &s->e[j];
		if (!b->w0)
			break;
		uint32_t home = slot_of(mix(e_ptr(b)), s->cap);
		/* b may move to i only if its home is not in (i, j]. */
		bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (between)
			continue;
		s->e[i] = *b;
		i = j;
	}
	s->e[i].w0 = 0;
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

/* ---- the side table -------------------------------------------------
 * Blocks an entry cannot hold, looked at only while it is not empty. */

static struct mc_block odd[ODD_MAX];
static _Atomic int n_odd;
static atomic_flag odd_lock = ATOMIC_FLAG_INIT;

static void odd_enter(void)
{
	while (atomic_flag_test_and_set_explicit(&odd_lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void odd_leave(void)
{
	atomic_flag_clear_explicit(&odd_lock, memory_order_release);
}

static int odd_index(uintptr_t ptr)
{
	for (int i = 0; i < n_odd; i++)
		if (odd[i].ptr == ptr)
			return i;
	return -1;
}

/* Take ptr out of the side table into *out; false when it is not there. */
static bool odd_remove(uintptr_t ptr, struct mc_block *out)
{
	if (likely(!atomic_load_explicit(&n_odd, memory_order_relaxed)))
		return false;
	odd_enter();
	int i = odd_index(ptr);
	if (i >= 0) {
		*out = odd[i];
		odd[i] = odd[n_odd - 1];
		atomic_fetch_sub(&n_odd, 1);
	}
	odd_leave();
	return i >= 0;
}

static void table_full(void)
{
	static atomic_int said;
	if (!atomic_exchange(&said, 1))
		mc_log("out of memory for the block table; blocks allocated from "
		       "now on are counted but not tracked");
}

static enum mc_insert odd_insert(const struct mc_block *b, struct mc_block *old)
{
	enum mc_insert r = MC_NEW;
	odd_enter();
	int i = odd_index(b->ptr);
	if (i >= 0) {
		*old = odd[i];
		r = MC_REPLACED_LIVE;
	} else if (n_odd < ODD_MAX) {
		i = n_odd;
		atomic_fetch_add(&n_odd, 1);
	}
	if (i >= 0)
		odd[i] = *b;
	odd_leave();
	if (i < 0)
		table_full();
	return r;
}

/* ---- operations ------------------------------------------------------ */

static inline bool remove_entry(uintptr_t ptr, struct mc_block *out);

/* Put the block in shard s (entered, with room): a new entry, or the one
 * of a block at the same address, handed back in *old. */
static inline __attribute__((always_inline)) enum mc_insert place(struct shard *s, uint64_t h,
							       uintptr_t ptr, uint64_t size,
							       uint32_t stack, uint32_t epoch,
							       struct mc_block *old)
{
	/* Read with the shard entered: a renumbering holds them all. */
	if (epoch == MC_EPOCH_NOW)
		epoch = atomic_load_explicit(&mc_epoch, memory_order_relaxed);
	enum mc_insert r = MC_NEW;
	uint32_t i = slot_of(h, s->cap);
	struct entry *b;
	for (;; i = (i + 1) & (s->cap - 1)) {
		b = &s->e[i];
		if (!b->w0)
			break;
		if (unlikely(e_ptr(b) == ptr)) {
			r = MC_REPLACED_LIVE;
			unpack(b, old);
			s->room++;
			break;
		}
	}
	b->w0 = ptr | (uint64_t)epoch << PTR_BITS;
	b->w1 = size | (uint64_t)stack << SIZE_BITS;
	s->room--;
	return r;
}

/* Every case of mc_blocks_insert. */
static __attribute__((noinline)) enum mc_insert insert_any(uintptr_t ptr, uint64_t size,
							   uint32_t stack, uint32_t epoch,
							   struct mc_block *old)
{
	if (unlikely(!fits(ptr, size, stack))) {
		uint32_t e = epoch == MC_EPOCH_NOW ? atomic_load(&mc_epoch) : epoch;
		struct mc_block b = { ptr, size, stack, e };
		/* The address may be in the table from an earlier block. */
		if (remove_entry(ptr, old)) {
			struct mc_block none;
			odd_insert(&b, &none);
			return MC_REPLACED_LIVE;
		}
		return odd_insert(&b, old);
	}
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	enum mc_insert r = MC_NEW;
	bool locked = lock(s);
	if (unlikely(!make_room(s))) {
		unlock(s, locked);
		table_full();
		return MC_NEW;
	}
	r = place(s, h, ptr, size, stack, epoch, old);
	unlock(s, locked);
	if (unlikely(r == MC_NEW) && unlikely(atomic_load_explicit(&n_odd, memory_order_relaxed)))
		r = odd_remove(ptr, old) ? MC_REPLACED_LIVE : MC_NEW;
	return r;
}

/* The common case inline and without a call (so without registers to
 * save on every malloc): the one thread, a block an entry holds, a shard
 * with room, an empty side table.  Anything else: insert_any. */
enum mc_insert mc_blocks_insert(uintptr_t ptr, uint64_t size, uint32_t stack,
				uint32_t epoch, struct mc_block *old)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	if (likely(fits(ptr, size, stack)) && likely(s->room) &&
	    likely(!atomic_load_explicit(&n_odd, memory_order_relaxed)) && likely(owner_enter())) {
		enum mc_insert r = place(s, h, ptr, size, stack, epoch, old);
		owner_leave();
		return r;
	}
	return insert_any(ptr, size, stack, epoch, old);
}

/* The slot holding ptr in its shard, or -1.  Call with the shard entered. */
static inline int64_t find(const struct shard *s, uintptr_t ptr, uint64_t h)
{
	if (unlikely(!s->cap))
		return -1;
	for (uint32_t i = slot_of(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
		uint64_t w0 = s->e[i].w0;
		if (!w0)
			return -1;
		if ((w0 & PTR_MASK) == ptr)
			return i;
	}
}

static inline __attribute__((always_inline)) bool remove_entry(uintptr_t ptr,
								 struct mc_block *out)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	bool locked = lock(s);
	int64_t i = find(s, ptr, h);
	if (likely(i >= 0)) {
		unpack(&s->e[i], out);
		s->room++;
		delete_at(s, (uint32_t)i);
	}
	unlock(s, locked);
	return i >= 0;
}

static __attribute__((noinline)) enum mc_remove remove_any(uintptr_t ptr, struct mc_block *out)
{
	if (likely(remove_entry(ptr, out)) || odd_remove(ptr, out))
		return MC_REMOVED;
	return MC_UNKNOWN;
}

/* As mc_blocks_insert: the one thread's hit inline, the rest apart. */
enum mc_remove mc_blocks_remove(uintptr_t ptr, struct mc_block *out)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	if (likely(owner_enter())) {
		int64_t i = find(s, ptr, h);
		if (likely(i >= 0)) {
			unpack(&s->e[i], out);
			s->room++;
			delete_at(s, (uint32_t)i);
			owner_leave();
			return MC_REMOVED;
		}
		owner_leave();
	}
	return remove_any(ptr, out);
}

/* Look ptr up and, when set_epoch, change its epoch. */
static bool lookup(uintptr_t ptr, struct mc_block *out, bool set_epoch, uint32_t epoch)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	bool locked = lock(s);
	int64_t i = find(s, ptr, h);
	if (i >= 0) {
		struct entry *e = &s->e[i];
		if (set_epoch)
			e->w0 = e_ptr(e) | (uint64_t)epoch << PTR_BITS;
		unpack(e, out);
	}
	unlock(s, locked);
	if (i >= 0 || !atomic_load(&n_odd))
		return i >= 0;
	odd_enter();
	int k = odd_index(ptr);
	if (k >= 0) {
		if (set_epoch)
			odd[k].aux = epoch;
		*out = odd[k];
	}
	odd_leave();
	return k >= 0;
}

bool mc_blocks_find(uintptr_t ptr, struct mc_block *out)
{
	return lookup(ptr, out, false, 0);
}

bool mc_blocks_set_epoch(uintptr_t ptr, uint32_t epoch)
{
	struct mc_block b;
	return lookup(ptr, &b, true, epoch);
}

/* Call fn for each entry of shard s with epoch >= min_epoch. */
static void each_in(const struct shard *s, uint32_t min_epoch,
		    void (*fn)(const struct mc_block *, void *), void *arg)
{
	uint64_t min_w0 = (uint64_t)min_epoch << PTR_BITS;
	for (uint32_t i = 0; i < s->cap; i++) {
		const struct entry *e = &s->e[i];
		if (e->w0 && e->w0 >= min_w0) {
			struct mc_block b;
			unpack(e, &b);
			fn(&b, arg);
		}
	}
}

static void each_odd(uint32_t min_epoch, void (*fn)(const struct mc_block *, void *), void *arg)
{
	if (!atomic_load(&n_odd))
		return;
	struct mc_block copy[ODD_MAX];
	odd_enter();
	int n = n_odd;
	memcpy(copy, odd, (size_t)n * sizeof *odd);
	odd_leave();
	for (int i = 0; i < n; i++)
		if (copy[i].aux >= min_epoch)
			fn(&copy[i], arg);
}

void mc_blocks_each_live(uint32_t min_epoch,
			 void (*fn)(const struct mc_block *, void *), void *arg)
{
	for (int k = 0; k < NSHARDS; k++) {
		struct shard *s = &shards[k];
		bool locked = lock(s);
		each_in(s, min_epoch, fn, arg);
		unlock(s, locked);
	}
	each_odd(min_epoch, fn, arg);
}

/* Epoch e becomes the number of open[] at or below it (open[] ascending),
 * so every comparison between a block and an open region keeps its
 * answer; 0 stays 0 as open[] holds no 0. */
static uint32_t renumbered(uint32_t e, const uint32_t *open, int n)
{
	uint32_t k = 0;
	while ((int)k < n && open[k] <= e)
		k++;
	return k;
}

void mc_blocks_renumber(const uint32_t *open, int n)
{
	mc_blocks_lock_all();
	for (int k = 0; k < NSHARDS; k++) {
		struct shard *s = &shards[k];
		for (uint32_t i = 0; i < s->cap; i++) {
			struct entry *e = &s->e[i];
			if (e->w0)
				e->w0 = e_ptr(e) |
					(uint64_t)renumbered((uint32_t)(e->w0 >> PTR_BITS), open, n)
						<< PTR_BITS;
		}
	}
	odd_enter();
	for (int i = 0; i < n_odd; i++)
		odd[i].aux = renumbered(odd[i].aux, open, n);
	odd_leave();
	atomic_store(&mc_epoch, renumbered(atomic_load(&mc_epoch), open, n));
	mc_blocks_unlock_all();
}

size_t mc_blocks_bytes(void)
{
	return atomic_load(&table_bytes);
}

uint64_t mc_blocks_count(void)
{
	uint64_t n = 0;
	for (int k = 0; k < NSHARDS; k++)
		n += live_in(&shards[k]);
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
	for (int k = 0; k < NSHARDS; k++)
		each_in(&shards[k], 0, fn, arg);
	each_odd(0, fn, arg);
}
