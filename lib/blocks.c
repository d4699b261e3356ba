/*
 * blocks.c - the live-block table: pointer -> size, region epoch, stack.
 *
 * An open-addressing hash table in mmap'd memory, split into shards with
 * a lock each so threads rarely meet.  A freed block is not deleted: it is
 * marked freed and keeps its allocation stack plus the stack that freed
 * it, which is what a double-free report needs.  Allocators hand the same
 * addresses out again quickly, so most freed entries are simply reused in
 * place; when a shard fills up and more than half of it is freed entries,
 * it is rebuilt with the live ones only instead of grown.  No entry is
 * ever deleted in between, so linear probing needs no tombstones.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

#define NSHARDS 256
#define MIN_CAP 256 /* entries per shard at first use */

struct shard {
	atomic_int lock;
	uint32_t cap;          /* power of two, 0 until first use */
	uint32_t used;         /* live + freed entries */
	uint32_t live;
	uint64_t live_bytes;
	struct mc_block *e;
} __attribute__((aligned(64)));

static struct shard shards[NSHARDS];
static atomic_size_t table_bytes;

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

static inline void lock(struct shard *s)
{
	for (int spins = 0;; spins++) {
		if (!atomic_load_explicit(&s->lock, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
			return;
		if (spins > 64)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
}

static inline void unlock(struct shard *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static inline uint32_t slot_of(uint64_t h, uint32_t cap)
{
	return (uint32_t)(h >> 8) & (cap - 1);
}

/* Rebuild a shard into cap entries, keeping live blocks only.  Returns
 * false (table unchanged) when memory runs out. */
static bool rebuild(struct shard *s, uint32_t cap)
{
	int saved = errno;
	struct mc_block *e = mc_map((size_t)cap * sizeof *e);
	errno = saved;
	if (!e)
		return false;
	for (uint32_t i = 0; i < s->cap; i++) {
		struct mc_block *b = &s->e[i];
		if (!b->ptr || (b->size & MC_FREED_BIT))
			continue;
		uint32_t j = slot_of(mix(b->ptr), cap);
		while (e[j].ptr)
			j = (j + 1) & (cap - 1);
		e[j] = *b;
	}
	if (s->e) {
		mc_unmap(s->e, (size_t)s->cap * sizeof *e);
		atomic_fetch_sub(&table_bytes, (size_t)s->cap * sizeof *e);
	}
	atomic_fetch_add(&table_bytes, (size_t)cap * sizeof *e);
	s->e = e;
	s->cap = cap;
	s->used = s->live;
	return true;
}

/* Make room for one more entry: at 3/4 full, drop the freed entries if
 * they are most of the shard, else double. */
static bool make_room(struct shard *s)
{
	if (s->cap && (uint64_t)(s->used + 1) * 4 <= (uint64_t)s->cap * 3)
		return true;
	if (!s->cap)
		return rebuild(s, MIN_CAP);
	if (s->live * 2 < s->used)
		return rebuild(s, s->cap);
	if (s->cap >= (1u << 31))
		return s->used + 1 < s->cap;
	return rebuild(s, s->cap * 2) || s->used + 1 < s->cap;
}

void mc_blocks_init(void)
{
	/* Shards are mapped on first use: a process that allocates little
	 * should not pay for 256 maps at start-up. */
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
	lock(s);
	if (!make_room(s)) {
		unlock(s);
		table_full();
		return MC_NEW;
	}
	uint32_t i = slot_of(h, s->cap);
	struct mc_block *b;
	for (;; i = (i + 1) & (s->cap - 1)) {
		b = &s->e[i];
		if (!b->ptr) {
			s->used++;
			break;
		}
		if (b->ptr == ptr) {
			if (b->size & MC_FREED_BIT) {
				r = MC_REUSED_FREED;
			} else {
				r = MC_REPLACED_LIVE;
				*old = *b;
				s->live--;
				s->live_bytes -= b->size;
			}
			break;
		}
	}
	b->ptr = ptr;
	b->size = size;
	b->stack = stack;
	b->aux = epoch;
	s->live++;
	s->live_bytes += size;
	unlock(s);
	return r;
}

enum mc_remove mc_blocks_remove(uintptr_t ptr, uint32_t free_stack,
				struct mc_block *out)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	enum mc_remove r = MC_UNKNOWN;
	lock(s);
	if (s->cap) {
		for (uint32_t i = slot_of(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
			struct mc_block *b = &s->e[i];
			if (!b->ptr)
				break;
			if (b->ptr != ptr)
				continue;
			*out = *b;
			if (b->size & MC_FREED_BIT) {
				out->size &= ~MC_FREED_BIT;
				r = MC_WAS_FREED;
			} else {
				s->live--;
				s->live_bytes -= b->size;
				b->size |= MC_FREED_BIT;
				b->aux = free_stack;
				r = MC_REMOVED;
			}
			break;
		}
	}
	unlock(s);
	return r;
}

bool mc_blocks_find(uintptr_t ptr, struct mc_block *out)
{
	uint64_t h = mix(ptr);
	struct shard *s = shard_of(h);
	bool found = false;
	lock(s);
	if (s->cap) {
		for (uint32_t i = slot_of(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
			struct mc_block *b = &s->e[i];
			if (!b->ptr)
				break;
			if (b->ptr == ptr) {
				found = !(b->size & MC_FREED_BIT);
				*out = *b;
				break;
			}
		}
	}
	unlock(s);
	return found;
}

void mc_blocks_each_live(uint32_t min_epoch,
			 void (*fn)(const struct mc_block *, void *), void *arg)
{
	for (int k = 0; k < NSHARDS; k++) {
		struct shard *s = &shards[k];
		lock(s);
		for (uint32_t i = 0; i < s->cap; i++) {
			const struct mc_block *b = &s->e[i];
			if (b->ptr && !(b->size & MC_FREED_BIT) && b->aux >= min_epoch)
				fn(b, arg);
		}
		unlock(s);
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
	for (int k = 0; k < NSHARDS; k++)
		lock(&shards[k]);
}

void mc_blocks_unlock_all(void)
{
	for (int k = NSHARDS - 1; k >= 0; k--)
		unlock(&shards[k]);
}

void mc_blocks_after_fork_child(void)
{
	for (int k = 0; k < NSHARDS; k++)
		atomic_store(&shards[k].lock, 0);
}
