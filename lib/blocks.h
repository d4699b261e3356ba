/*
 * blocks.h - the live-block table's layout and its owner's common insert
 * and remove, shared by blocks.c and account.c only.
 *
 * account.c's tracking paths (mc_track_malloc, mc_track_free,
 * mc_track_realloc) inline the owner's hit here (mc_blocks_insert_hot,
 * mc_blocks_remove_hot; mc_blocks_insert_owned and _remove_owned, which
 * make no call at all and leave the rest to the caller) instead of
 * calling blocks.c for it: the call, its register saves and the block
 * handed back through memory were ~20 instructions of each of the two
 * calls a malloc_bench step makes.  blocks.c's own
 * mc_blocks_insert and mc_blocks_remove are the same functions out of
 * line, for every other caller; everything past the owner's hit stays
 * in blocks.c (mc_blocks_*_any, *_leave).  blocks.c's head says how the
 * table works.
 */
#ifndef MC_BLOCKS_H
#define MC_BLOCKS_H

#include "internal.h"

#pragma GCC visibility push(hidden)

#define NSHARDS 256
#define PTR_BITS 48
#define SIZE_BITS 37
#define STACK_BITS 27
#define PTR_MASK ((UINT64_C(1) << PTR_BITS) - 1)
#define STACK_MASK ((UINT32_C(1) << STACK_BITS) - 1)
#define NGROUPS 8 /* shard groups, one a thread (own_shard) */
#define GROUP_SHARDS (NSHARDS / NGROUPS)

/* The 32 hash bits the home slot comes from: bits 8..39, of which a
 * 1024-slot shard uses 30..39.  Bits 24..55 (the window of the former
 * masks' first 1024 slots, 24..33, with the mask) made malloc_bench's
 * churn 148.5 M instructions, 8..39 148.2 M, 0..31 149.2 M, 27..58
 * 150.4 M, 32..63 (the shard's bits too) 265.8 M. */
#define SLOT_SHIFT 8

struct entry {
	uint64_t w0;  /* pointer | epoch << PTR_BITS; 0: empty */
	uint64_t w1;  /* size << STACK_BITS | stack: unpacked without a 64-bit mask */
};

/* A cache line a shard, its lock inside: once threads share the table,
 * an operation moves one header line between cores, not a header line
 * shared by four shards and a lock line besides (four threads on two
 * cores: 3.73x -> 3.46x the bare run; one thread the same).  All 256
 * fit in 16 KiB.  Slots are addressed by byte offset, below end, so
 * that a probe needs no scaling.  A shard not used yet points
 * at `unused`, one empty slot that is never written (its room is 0), so
 * lookups need no test for a missing array. */
struct shard {
	struct entry *e;
	uint32_t end;          /* slots * sizeof(struct entry) */
	uint32_t room;         /* entries to add before the shard must grow */
	atomic_int lock;       /* taken once threads share the table */
	/* The owners' protocol (see struct group), on the line the owner
	 * writes anyway: its group's mode, the owner inside, the group's
	 * bit in `mine` (0 before mc_blocks_init: no one owns the shard). */
	_Atomic int mode;
	volatile int busy;
	unsigned bit;
} __attribute__((aligned(64)));

#define ALONE 0
#define CROWD 1
#define GOING 2
#define MULTI 3

#define UNIT_SHIFT 21
#define UNIT_LAST ((UINT64_C(1) << UNIT_SHIFT) - 1)
#define DIR_TOP 256
#define LEAF_SHIFT (PTR_BITS - 8)
#define LEAF_UNITS (UINT64_C(1) << (LEAF_SHIFT - UNIT_SHIFT))
#define GROUP_BYTES ((NSHARDS / NGROUPS) * sizeof(struct shard))

/* The shards, the directory, this thread's groups (bit g: it owns group
 * g, and enters its shards without a lock), the side table's count:
 * blocks.c's, read by the hot paths below. */
extern struct shard mc_shards[NSHARDS];
extern _Atomic(_Atomic uint8_t *) mc_dir[DIR_TOP];
/* A thread's groups, and the unit it last found a group of its own in
 * (internal.h's struct mc_blocks_here, in mc_self: the hot paths
 * compute its thread-local address for the guard anyway): that
 * group's first shard, a one-unit cache of own_shard's answer from the
 * directory and `mine` (~10 instructions of each lookup).  Valid while
 * `mine` is unchanged (every change goes through mine_set, which
 * empties it; only this thread writes either) and the unit's groups
 * only grow (a unit's byte in the directory is never cleared): a group
 * this thread found the unit in stays a place its blocks may go and be
 * looked for.  A block elsewhere (another group came to the unit
 * meanwhile) is found the slow way, as before. */
#define mc_blocks_here (mc_self.blocks)
#define mc_blocks_mine (mc_blocks_here.mine)

static inline void mine_set(unsigned mine)
{
	mc_blocks_here.mine = mine;
	mc_blocks_here.unit = 0;
}
extern _Atomic int mc_n_odd;

/* Past the owner's hit (blocks.c). */
enum mc_insert mc_blocks_insert_any(uintptr_t ptr, uint64_t size, uint32_t stack,
				    uint32_t epoch, struct mc_block *old);
enum mc_insert mc_blocks_place_leave(struct shard *s, uint32_t i, uint64_t w0, uint64_t w1,
				     struct mc_block *old, int m);
enum mc_remove mc_blocks_remove_any(uintptr_t ptr, struct mc_block *out);
enum mc_remove mc_blocks_probe_leave(struct shard *s, uintptr_t ptr, struct mc_block *out,
				     int m);
enum mc_remove mc_blocks_shift_leave(struct shard *s, uint32_t i);

static inline uintptr_t e_ptr(const struct entry *e)
{
	return (uintptr_t)(e->w0 & PTR_MASK);
}

/* Unpack an entry of pointer ptr. */
static inline void unpack_ptr(const struct entry *e, uintptr_t ptr, struct mc_block *b)
{
	b->ptr = ptr;
	b->aux = (uint32_t)(e->w0 >> PTR_BITS);
	b->size = e->w1 >> STACK_BITS;
	b->stack = (uint32_t)e->w1 & STACK_MASK;
}

/* An entry holds the block: a pointer below 2^48 and not 0 (an entry of
 * pointer 0 could look empty), a size below 2^37, a stack id below 2^27.
 * (ptr - 1) | ptr is below 2^48 exactly when ptr is in [1, 2^48); shifted
 * right by 11 it is below 2^37 then, so one shift tests it with size. */
static inline bool fits(uintptr_t ptr, uint64_t size, uint32_t stack)
{
	uint64_t p = ((uint64_t)ptr - 1) | ptr;
	return (((p >> (PTR_BITS - SIZE_BITS)) | size) >> SIZE_BITS | stack >> STACK_BITS) == 0;
}

/* fits for the hot path: every stack id is the depot's, below 2^27
 * (MC_STACK_ID_MAX), so only the pointer and the size are tested. */
_Static_assert(MC_STACK_ID_MAX <= STACK_MASK, "a stack id fits an entry");
static inline bool fits_hot(uintptr_t ptr, uint64_t size)
{
	return fits(ptr, size, 0);
}

static inline struct entry *at(struct entry *e, uint32_t off)
{
	return (struct entry *)((char *)e + off);
}

/* Multiplicative hashing: bit k of the product depends on bits 0..k of
 * ptr.  The top 5 bits pick the shard in its group, bits 8..39 the
 * slot (slot_of; bits 24 and up with the power-of-two shards that the
 * figures below were measured on).  With groups, in a simulation of bench/malloc_bench's churn of
 * 16..512-byte blocks under the four allocators, inserts found their
 * home slot taken and removes shifted entries back 0.3-2.1% and 1.5-2.9%
 * of the time with bits 24 and up, 0.5-3.6% and 1.8-4.5% with bits 32
 * and up (256 shards without groups, bits 32 and up: 0.2-2.2% and
 * 0.6-4.0%).  Tried (with the top 8 bits for one of 256 shards) on
 * malloc_bench's churn under glibc, mimalloc, jemalloc and tcmalloc, with
 * small, mixed and large blocks, this spreads blocks better than random
 * (2.4% of inserts find their home slot taken, at most 5.6%, against 6%
 * for a random hash and 7.5% for the former xor-folded hash of ptr >> 4);
 * other bit windows (28, 36, 40) had 12-21% in some of those runs. */
static inline uint64_t hash(uintptr_t p)
{
	return (uint64_t)p * 0x9e3779b97f4a7c15ull;
}

/* ptr's unit's directory byte.  Pointers of 2^48 and up (never in the
 * shards, see fits) fold onto a leaf of a lower one: harmless, as no
 * entry can have their pointer. */
static inline _Atomic uint8_t *unit_cell(_Atomic uint8_t *leaf, uintptr_t p)
{
	return &leaf[(p >> UNIT_SHIFT) & (LEAF_UNITS - 1)];
}

static inline _Atomic uint8_t *leaf_of(uintptr_t p)
{
	return atomic_load_explicit(&mc_dir[(p >> LEAF_SHIFT) & (DIR_TOP - 1)], memory_order_relaxed);
}

/* ptr's unit's groups: bit g set once a thread of home g has put a block
 * of the unit in the table (0: no block of it there). */
static inline unsigned unit_groups(uintptr_t p)
{
	return atomic_load_explicit(unit_cell(leaf_of(p), p), memory_order_relaxed);
}

/* Shard of hash h in group g: the hash's top 5 bits. */
static inline struct shard *group_shard(unsigned g, uint64_t h)
{
	uintptr_t sub = (uintptr_t)(h >> 59) * sizeof(struct shard);
	return (struct shard *)((char *)mc_shards + ((uintptr_t)g * GROUP_BYTES + sub));
}

/* ptr's shard in a group of its unit's that this thread owns (`mine`:
 * no lock), else NULL: the hot paths' one test.  A new block may go to
 * any of its unit's groups; a block to free is looked for there first
 * (where else, remove_any: next_group). */
static inline struct shard *own_shard(uintptr_t p, uint64_t h)
{
	uintptr_t u = p | UNIT_LAST;
	struct shard *g = mc_blocks_here.group;
	if (unlikely(u != mc_blocks_here.unit)) {
		unsigned x = unit_groups(p) & mc_blocks_mine;
		if (unlikely(!x))
			return NULL;
		g = group_shard((unsigned)__builtin_ctz(x), 0);
		mc_blocks_here.unit = u;
		mc_blocks_here.group = g;
	}
	return (struct shard *)((char *)g + (uintptr_t)(h >> 59) * sizeof(struct shard));
}

/* The home slot's byte offset: hash bits 8..39 scaled to the slots
 * (Lemire's multiply-shift), apart from the shard's (59..63).  The
 * product's low 4 bits are the fraction of a slot: masked off. */
static inline uint32_t slot_of(uint64_t h, uint32_t end)
{
	return (uint32_t)(((h >> SLOT_SHIFT & 0xffffffffu) * end) >> 32) & ~(uint32_t)(sizeof(struct entry) - 1);
}

/* The slot after byte offset i, round the end. */
static inline uint32_t next(uint32_t i, uint32_t end)
{
	i += (uint32_t)sizeof(struct entry);
	return i == end ? 0 : i;
}

/* How far back byte offset a lies from b, round the end. */
static inline uint32_t back(uint32_t b, uint32_t a, uint32_t end)
{
	return b >= a ? b - a : b + end - a;
}

/* Delete the entry at byte offset i, shifting later entries of its
 * cluster back so every entry stays reachable from its home slot.
 * Inline: blocks.c's deletes, and account.c's track_free_shift, the
 * common free whose cluster must shift back (mc_blocks_remove_owned's
 * SHIFT), which no longer calls mc_blocks_shift_leave for it. */
static inline __attribute__((always_inline)) void delete_at(struct shard *s, uint32_t i)
{
	uint32_t end = s->end;
	struct entry *e = s->e;
	for (uint32_t j = i;;) {
		j = next(j, end);
		struct entry *b = at(e, j);
		if (!b->w0)
			break;
		/* b may move to i only if its home is not in (i, j] (around
		 * the end): if it is at least as far back from j as i is. */
		uint32_t home = slot_of(hash(e_ptr(b)), end);
		if (back(j, home, end) < back(j, i, end))
			continue;
		*at(e, i) = *b;
		i = j;
	}
	at(e, i)->w0 = 0;
}

/* Enter shard s, of a group this thread owns (`mine`), as its owner:
 * the group's mode, ALONE or CROWD, when no other thread has come (then
 * the caller must owner_leave(s)), else MULTI.  The owner's path is inline; the
 * rest is out of line, so that the table's hot functions make no call
 * on that path and save few registers.
 *
 * Why one load of the mode suffices, after the busy mark: go_multi (on
 * another thread) sets it, then membarrier runs a full barrier on every
 * running thread of the process, then it waits for busy to be 0.  Here
 * the busy store comes before the load of the mode in program order
 * (the signal fence keeps the compiler from reordering them; the CPU
 * may, but the barrier membarrier forces on this thread lands either
 * before the store, and then the load sees the new mode, or after it,
 * and then go_multi sees busy = 1).  So if the load sees ALONE or CROWD,
 * the other thread does not get past its wait, nor touch the group's
 * shards, until owner_leave.  And a thread that has finished go_multi
 * has made MULTI visible to every later load.  go_crowd's ALONE -> CROWD
 * is ordered the same way.  `mine` is this thread's own: no other
 * thread writes it.  busy and the mode share the group's line, which
 * only its owner writes until another thread comes. */
static inline int owned_enter(struct shard *s)
{
	s->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	int m = atomic_load_explicit(&s->mode, memory_order_relaxed);
	if (likely(m < GOING))
		return m;
	s->busy = 0;
	return MULTI;
}

static inline void owner_leave(struct shard *s)
{
	atomic_signal_fence(memory_order_seq_cst);
	s->busy = 0;
}

static inline uint64_t pack0(uintptr_t ptr, uint32_t epoch)
{
	return ptr | (uint64_t)epoch << PTR_BITS;
}

static inline uint64_t pack1(uint64_t size, uint32_t stack)
{
	return size << STACK_BITS | stack;
}

/* The current epoch for MC_EPOCH_NOW.  Read with the shard entered: a
 * renumbering holds them all. */
static inline uint32_t epoch_of(uint32_t epoch)
{
	uint32_t now = atomic_load_explicit(&mc_epoch, memory_order_relaxed); /* cmov, no jump */
	return epoch == MC_EPOCH_NOW ? now : epoch;
}

/* The new block into its empty home slot b of shard s (entered as m):
 * the entry, the shard's room, the site's figures (when sites: the
 * sites are counted, known so by the caller, or mc_sites_on), and the
 * shard left.
 * The common insert of mc_blocks_insert_hot and mc_blocks_insert_owned. */
static inline __attribute__((always_inline)) void home_store(struct shard *s, struct entry *b,
							     uint64_t w0, uint64_t w1,
							     uint64_t size, uint32_t stack, int m,
							     bool sites)
{
	b->w0 = w0;
	b->w1 = w1;
	s->room--;
	if (sites)
		mc_site_change_on(stack, (int64_t)size, 1, m != ALONE);
	owner_leave(s);
}

/* The common case inline and without a call (so without registers to
 * save on every malloc): the group's owner with an empty side table, a
 * block an entry holds, a shard with room, an empty home slot.  A taken
 * home slot: place_leave; anything else: insert_any. */
static inline __attribute__((always_inline)) enum mc_insert
mc_blocks_insert_hot(uintptr_t ptr, uint64_t size, uint32_t stack,
		     uint32_t epoch, struct mc_block *old)
{
	uint64_t h = hash(ptr);
	struct shard *s = own_shard(ptr, h);
	int m;
	if (likely(s != NULL) && likely(fits_hot(ptr, size)) && likely(s->room) &&
	    likely(!atomic_load_explicit(&mc_n_odd, memory_order_relaxed)) &&
	    likely((m = owned_enter(s)) != MULTI)) {
		uint64_t w0 = pack0(ptr, epoch_of(epoch));
		uint64_t w1 = pack1(size, stack);
		uint32_t i = slot_of(h, s->end);
		struct entry *b = at(s->e, i);
		if (unlikely(b->w0))
			return mc_blocks_place_leave(s, i, w0, w1, old, m);
		home_store(s, b, w0, w1, size, stack, m, mc_sites_on);
		return MC_NEW;
	}
	return mc_blocks_insert_any(ptr, size, stack, epoch, old);
}

/* mc_blocks_insert_owned's and mc_blocks_remove_owned's answers. */
enum mc_owned {
	MC_OWNED_MISS,  /* nothing changed: the caller calls mc_blocks_insert
			 * or mc_blocks_remove */
	MC_OWNED_TAKEN, /* the block is in (out of) the table, the shard left */
	MC_OWNED_SHIFT, /* remove: the block is out of its home slot *at_i, but the
			 * cluster after it must shift back and the shard
			 * *at_s be left: the caller calls
			 * mc_blocks_shift_leave(*at_s, *at_i) */
	MC_OWNED_PLACE, /* insert: the home slot taken, the shard entered:
			 * the caller calls mc_blocks_place_leave */
};

/* Where mc_blocks_insert_owned found the home slot taken (PLACE): the
 * shard, entered as m, the slot's byte offset and the entry's words,
 * for mc_blocks_place_leave. */
struct mc_owned_place {
	struct shard *s;
	uint32_t i;
	int m;
	uint64_t w0, w1;
};

/* mc_blocks_insert_hot's hit alone, with no call on any path: TAKEN with
 * the block in its home slot; PLACE, the home slot taken, with the shard
 * entered and *at filled (the caller calls mc_blocks_place_leave, which
 * probes on and leaves: not looked up again, as the way through
 * mc_blocks_insert did); MISS, having changed nothing, where anything
 * else must happen (the caller then calls mc_blocks_insert).  As
 * mc_blocks_remove_owned, for account.c's mc_track_malloc.  sites: the
 * site's figures change (with mc_site_change_on: the caller knows the
 * sites are counted, or passes mc_sites_on); false only where they are
 * not (account.c's copies of the common paths for that). */
static inline __attribute__((always_inline)) enum mc_owned
mc_blocks_insert_owned(uintptr_t ptr, uint64_t size, uint32_t stack, uint32_t epoch,
		       struct mc_owned_place *at_place, bool sites)
{
	/* fits_hot first: a NULL ptr (the allocator failed) leaves here
	 * before own_shard looks its unit up */
	if (unlikely(!fits_hot(ptr, size)))
		return MC_OWNED_MISS;
	uint64_t h = hash(ptr);
	struct shard *s = own_shard(ptr, h);
	int m;
	if (unlikely(s == NULL) || unlikely(!s->room) ||
	    unlikely(atomic_load_explicit(&mc_n_odd, memory_order_relaxed)) ||
	    unlikely((m = owned_enter(s)) == MULTI))
		return MC_OWNED_MISS;
	uint32_t i = slot_of(h, s->end);
	struct entry *b = at(s->e, i);
	uint64_t w0 = pack0(ptr, epoch_of(epoch));
	uint64_t w1 = pack1(size, stack);
	if (unlikely(b->w0)) {
		*at_place = (struct mc_owned_place){ s, i, m, w0, w1 };
		return MC_OWNED_PLACE;
	}
	home_store(s, b, w0, w1, size, stack, m, sites);
	return MC_OWNED_TAKEN;
}

/* Past the owner's hit: the block comes back through a copy, so that
 * the caller's *out need not live in memory (its address is never
 * passed on); the copy's pointer is cleared on the way out, as a freed
 * address left in this frame, below the program's stack, would be a
 * stale root for the next block the allocator hands out there. */
static inline __attribute__((always_inline)) enum mc_remove
remove_far(enum mc_remove (*far)(uintptr_t, struct mc_block *), uintptr_t ptr,
	   struct mc_block *out)
{
	struct mc_block b;
	enum mc_remove r = far(ptr, &b);
	*out = b;
	*(volatile uintptr_t *)&b.ptr = 0;
	return r;
}

static inline __attribute__((always_inline)) enum mc_remove
probe_far(struct shard *s, uintptr_t ptr, struct mc_block *out, int m)
{
	struct mc_block b;
	enum mc_remove r = mc_blocks_probe_leave(s, ptr, &b, m);
	*out = b;
	*(volatile uintptr_t *)&b.ptr = 0;
	return r;
}

/* As mc_blocks_insert: the owner's hit in its home slot inline, with
 * the next slot empty (nothing to shift back); the rest apart. */
static inline __attribute__((always_inline)) enum mc_remove
mc_blocks_remove_hot(uintptr_t ptr, struct mc_block *out)
{
	uint64_t h = hash(ptr);
	struct shard *s = own_shard(ptr, h);
	if (unlikely(!s))
		return remove_far(mc_blocks_remove_any, ptr, out);
	int m = owned_enter(s);
	if (likely(m != MULTI)) {
		uint32_t end = s->end;
		uint32_t i = slot_of(h, end);
		struct entry *e = s->e;
		struct entry *b = at(e, i);
		uint64_t p = b->w0 & PTR_MASK;
		/* p is 0 for an empty slot; no entry has pointer 0 (fits). */
		if (unlikely(!p) || unlikely(p != ptr))
			return probe_far(s, ptr, out, m);
		unpack_ptr(b, ptr, out);
		mc_site_change(out->stack, -(int64_t)out->size, -1, m != ALONE);
		s->room++;
		if (unlikely(at(e, next(i, end))->w0))
			return mc_blocks_shift_leave(s, i);
		b->w0 = 0;
		owner_leave(s);
		return MC_REMOVED;
	}
	return remove_far(mc_blocks_remove_any, ptr, out);
}

/* mc_blocks_remove_hot's hit alone, with no call on any path: the block
 * out of its home slot and in *out (TAKEN, or SHIFT when the next slot
 * is taken: a short process's first arrays, 32 slots filled up to 26,
 * had that on ~half its frees: bench/suite_test 1, 48 of ~100 taken
 * out of line, where the block was looked up again), or MISS, having
 * changed nothing, where anything else must happen (the caller then
 * calls mc_blocks_remove, which finds the same table).  So the caller's
 * hot path can end in a tail call and keep nothing in callee-saved
 * registers (account.c's mc_track_free).  sites as for
 * mc_blocks_insert_owned. */
static inline __attribute__((always_inline)) enum mc_owned
mc_blocks_remove_owned(uintptr_t ptr, struct mc_block *out, struct shard **at_s, uint32_t *at_i,
		       bool sites)
{
	uint64_t h = hash(ptr);
	struct shard *s = own_shard(ptr, h);
	if (unlikely(!s))
		return MC_OWNED_MISS;
	int m = owned_enter(s);
	if (unlikely(m == MULTI))
		return MC_OWNED_MISS;
	uint32_t end = s->end;
	uint32_t i = slot_of(h, end);
	struct entry *e = s->e;
	struct entry *b = at(e, i);
	/* p is 0 for an empty slot; no entry has pointer 0 (fits). */
	if (unlikely((b->w0 & PTR_MASK) != ptr)) {
		owner_leave(s);
		return MC_OWNED_MISS;
	}
	unpack_ptr(b, ptr, out);
	if (sites)
		mc_site_change_on(out->stack, -(int64_t)out->size, -1, m != ALONE);
	s->room++;
	if (unlikely(at(e, next(i, end))->w0)) {
		*at_s = s;
		*at_i = i;
		return MC_OWNED_SHIFT;
	}
	b->w0 = 0;
	owner_leave(s);
	return MC_OWNED_TAKEN;
}

#pragma GCC visibility pop

#endif
