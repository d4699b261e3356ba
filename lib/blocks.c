/*
 * blocks.c - the live-block table: pointer -> size, region epoch, stack.
 *
 * An open-addressing hash table (linear probing, deletion by backward
 * shift, so no tombstones) in mmap'd memory, split into shards with a
 * lock each so threads rarely meet.  A block's shard is one of the 32 of
 * a group of its 2 MiB unit of address space: the home group of the
 * thread that brought it, or another group of the unit's that this
 * thread owns (see own_shard).  So threads on different cores write
 * shards (locks, counts, entries) of their own, whether the allocator
 * gives each thread memory of its own or hands neighbouring blocks to
 * different threads (tcmalloc).  Shards start at
 * 32 slots, a group's side by side on 4 pages (TINY_CAP: a short
 * process touches few pages), then move to 1024 (MIN_CAP): a test with a few thousand
 * live blocks keeps a table of half a megabyte, in the second-level
 * cache.  From there they grow by 1.2x at 5/6
 * full, so the table is 69-83% full: 19-23 bytes a block.  Doubling at
 * 3/4 full left it 37-75% full, and a million blocks sat at half load
 * (bench/run.sh: 29.8-32.2 bytes a block; now 22.2-22.4).  Capacities
 * are then not powers of two: the home slot comes from the hash by a
 * multiply-shift (Lemire's range reduction) and probes wrap round the
 * end by a compare, not a mask.  The price is in growth: 6 times the
 * final array written and paged in over a shard's life, against 2
 * (callgrind malloc_bench --keep 200000: 213.9 M -> 230.5 M
 * instructions; 0.3 s more system time for a million blocks, in page
 * faults and munmap); the one thread's steady path pays ~3 instructions
 * a lookup for the multiply (145.5 M -> 148.2 M on malloc_bench 200000).
 *
 * Tried on 3 December 2026 and not kept: home slots in address order,
 * so that blocks the allocator hands out together share table lines.
 * The shard from the hash of ptr >> W, the slot from ptr's offset in
 * its 2^W-byte window scaled over the shard, turned by the window's
 * hash.  Against the hash (cachegrind slope of malloc_bench with
 * stacks, instructions and first-level misses a step; glibc, mimalloc,
 * jemalloc, tcmalloc): W = 16 670 -> 697, 557 -> 588, 606 -> 682, 574
 * -> 626, misses 6.58 -> 6.41, 7.10 -> 6.99, 5.50 -> 5.22, 5.14 ->
 * 4.92; W = 18 775, 942, 1,621, 1,164 (a window's blocks crowd a
 * shard's slots: long probes and shifts), misses -0.35 to -0.57.
 * tree_bench (a block): 1,008 -> 1,211 and 2,208 instructions, misses
 * 7.73 -> 7.72.  The loop's time a step (4 M steps, medians of 5
 * interleaved runs) rose under all four at W = 16 (+3.5, +7.3, +9.1,
 * +12.4 ns; four threads, 3 runs: +5.9 glibc, +22.3 tcmalloc).  The
 * table's misses are first-level ones that the next level serves
 * (last-level misses 0.001-0.015 a step), and a block's free comes
 * ~1,000 steps after its insert, by when the loop's own reads of its
 * blocks (about 3 misses a step in churn itself) have most likely
 * pushed that table line out of the 48 KiB cache however tightly the
 * lines are packed.  Where the table is far larger than the caches it
 * does pay: malloc_bench --keep 1000000 (a million blocks entered in
 * address order) filled 19-33% faster at W = 16 under all four
 * (medians of 3: 0.287 -> 0.216 s, 0.295 -> 0.215, 0.327 -> 0.218,
 * 0.255 -> 0.207), for 0.3-1.7 bytes a block more (VmHWM).  A mapping
 * that changes with a shard's size might have that without the steady
 * path's cost; not tried.
 *
 * Tried again (track20) for bench/tree_bench, whose trees of ~10,000
 * live nodes fill a group's 512 KiB of first arrays a third full: a
 * window's blocks at fixed slots of their own, the shard and a
 * line-aligned base from the hash of ptr >> W, the offset (ptr >> G) &
 * (2^(W-G) - 1) slots on from it, whatever the shard's size.  callgrind
 * with a 48 KiB first-level cache, tree_bench 500000 with
 * MEMCHECK_STACK_DEPTH=0: memcheck adds 3.1 misses a block, of which the
 * home slot's 0.94 at insert and 0.98 at remove; W = 10, G = 4: misses
 * 3.34 M -> 3.17 M, instructions 347.8 M -> 378.2 M; W = 12, G = 5:
 * 3.06 M, 376.0 M; CPU time (15 interleaved runs) within the spread.
 * The tree's blocks do not come back in address order (the allocator
 * hands out the last freed first, and a tree is freed depth first): an
 * LRU model of 768 table lines misses 0.86 a call with the hash, 0.75
 * and 0.53 at those windows.  Nor is the time in the misses: memcheck's
 * ~284 instructions a block there take ~36 ns (~94 cycles at 2.6 GHz,
 * three instructions a cycle).
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
 * top 16 bits, and the size with the stack id in its low 27 bits.  Blocks
 * that do not fit (a pointer above 2^48 or 0, a size of 128 GiB or more)
 * go to a small side table; epochs are kept below 2^16 by region.c, which
 * renumbers them (mc_blocks_renumber) when the counter gets there.
 *
 * Each block that enters or leaves also changes its stack's site counts
 * (mc_site_change, for snapshot.c) inside the same critical section: the
 * one thread's path then adds without a lock, exactly as it changes the
 * table, and only a shared table pays for atomic adds.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "blocks.h"

#define ODD_MAX 64 /* side table: blocks whose fields do not fit an entry */
#define MIN_CAP 1024 /* slots per shard at first use: at low load nearly every
		      * lookup ends at its first probe, and a mispredicted probe
		      * costs more than the memory.  One thread's blocks fill
		      * the 32 shards of a group: 32 x 1024 x 16 B = 512 KiB, as
		      * 128 slots in each of 256 shards did before groups (64
		      * slots there made bench/malloc_bench's tracking ~5%
		      * slower, 32 ~7%, 256 no faster).  256 here (a group's
		      * arrays 128 KiB, so that four threads' tables fit two
		      * cores' caches better): one thread's step 457 -> 478
		      * instructions (callgrind, tcmalloc), four threads'
		      * last-level misses 1.118 -> 1.070 a step (cachegrind,
		      * 1 MiB shared): not kept (4 December 2026) */
#define TINY_CAP 32 /* slots of a shard's very first array: the 32 shards of
		    * a group share 4 pages of them, so a short process's
		    * first few hundred blocks touch 4 pages, not 128 (see
		    * tiny_array); past 5/6 full a shard moves to MIN_CAP */
#define MAX_CAP (1u << 24) /* slots per shard (2^32 in all) */
/* Full at LOAD_NUM / LOAD_DEN, then GROW_NUM / GROW_DEN times the slots:
 * bench/run.sh's million blocks cost (bytes a block, glibc, mimalloc,
 * jemalloc, tcmalloc) 30.1 28.0-30.2 at 3/4 and 2x, 22.7-24.1 at 4/5 and
 * 1.25x, 22.2-22.4 at 5/6 and 1.2x, 20.0-21.7 at 7/8 and 1.25x; the last
 * two cost the same to grow (callgrind malloc_bench --keep 200000: 230.4
 * M, 230.5 M instructions; 4/5 and 1.25x 224.3 M) and 7/8 makes probes
 * for a new block long (32 slots on average at full load). */
#define LOAD_NUM 5
#define LOAD_DEN 6
#define GROW_NUM 6
#define GROW_DEN 5
#define PAGE_SLOTS (4096 / 16) /* arrays are whole pages */
_Atomic uint32_t mc_epoch = 1;
_Atomic unsigned mc_epochs_renumbered;

static inline void unpack(const struct entry *e, struct mc_block *b)
{
	unpack_ptr(e, e_ptr(e), b);
}

static const struct entry unused_entry;
#define UNUSED ((struct entry *)&unused_entry)

static inline uint32_t cap_of(const struct shard *s)
{
	return s->end / (uint32_t)sizeof(struct entry);
}

/* Entries a shard of cap slots holds before it grows: LOAD_MAX full. */
static inline uint32_t limit(uint32_t cap)
{
	return cap >= MAX_CAP ? cap - 1 : (uint32_t)((uint64_t)cap * LOAD_NUM / LOAD_DEN);
}

static inline uint32_t live_in(const struct shard *s)
{
	return limit(cap_of(s)) - s->room;
}

/* Pointed at `unused` by mc_blocks_init, not by an initializer: 256
 * pointers in .data are 256 relocations, which write four pages of
 * .data at load in every process the library is loaded into (four page
 * faults, about 0.1 ms on these VMs), measured or not. */
struct shard mc_shards[NSHARDS] __attribute__((aligned(64)));
_Static_assert(GROUP_BYTES == 2048, "lib/bss-layout.sh lays the last group's 2 KiB out on the "
	       "fork's page");
static atomic_size_t table_bytes;

/* The owners' protocol, per group of shards.  A group's mode is ALONE
 * or CROWD while one thread, its owner, uses the group's shards, and
 * MULTI (for good, but in a fork child) once another thread has come to
 * them, GOING on the way.  The first thread to lock a shard of an
 * unclaimed group claims it; its bit in `mine` says so.  The owner of a
 * group that has gone multi drops the bit and locks as everyone does.
 * Allocators that give each thread memory of its own (glibc's arenas,
 * mimalloc's segments, jemalloc's extents) and those that do not
 * (tcmalloc's spans) alike put each thread's blocks in its own group
 * (own_shard), so each thread owns its group and takes no lock at all,
 * up to NGROUPS threads.
 *
 * ALONE and CROWD differ in the site counts (mc_site_change): while one
 * thread alone uses the table (`sole`), it changes them with plain adds;
 * once a second thread comes (go_crowd), the owners' paths too change
 * the sites every thread shares with atomic adds.
 *
 * No thread waits for another's busy mark while its own is set, or two
 * could wait for each other: a thread joins (join) and a group turns
 * (go_multi) before the shard is entered, and the one section that holds
 * many groups at once, mc_blocks_lock_all, enters each group once and
 * is taken by one thread at a time. */
struct group {
	_Atomic int mode;      /* ALONE, CROWD: an owner, no locks; GOING, MULTI:
				* locks.  Each shard has a copy, which its
				* owner reads (struct shard) */
	atomic_flag claim;     /* set once a thread has claimed the group */
	_Atomic int used;      /* a shard of the group has had an array */
	/* Held by mc_blocks_lock_all: HELD_LENT (claimed for the walk, its
	 * shards not written: a thread that comes waits in go_multi while
	 * `walk` is set), else the mode every shard was entered in (an
	 * owner's, or MULTI with each shard's lock).  Read and written by
	 * the holder of all_lock only. */
	_Atomic int walk;
	int held;
	/* Its shards' lines set up (group_set_up): 0 not yet, SETTING
	 * while a thread writes them, READY.  Until READY no one reads or
	 * writes them: nothing names the group (a unit's groups are set up
	 * before the unit names them, home_shard), and the walks pass it. */
	_Atomic int ready;
} __attribute__((aligned(64)));
#define HELD_LENT (-1)
#define SETTING 1
#define READY 2
static struct group groups[NGROUPS] = {
	[0 ... NGROUPS - 1] = { .mode = MULTI, .claim = ATOMIC_FLAG_INIT }
};
static MC_TLS bool joined;             /* this thread has passed join() */
/* The one thread that has used the table (its `mine`'s address), 0
 * before any, SOLE_CROWD once a second has come; crowd_done once
 * go_crowd has seen every owner out of its shards. */
#define SOLE_CROWD UINTPTR_MAX
static _Atomic uintptr_t sole;
static _Atomic int crowd_done;
static atomic_flag all_lock = ATOMIC_FLAG_INIT; /* mc_blocks_lock_all's */
_Atomic int mc_n_odd;                  /* blocks in the side table */
/* How a thread is inside a shard: as its group's owner (ALONE, CROWD)
 * or holding its lock (MULTI).  A struct, not an int, so that a caller
 * that keeps it as a bool (`locked`, as before groups had owners) does
 * not compile: unlock must be told which. */
struct in {
	int mode;
};


/* The groups: those of ptr's 2 MiB unit (ptr >> 21) in a directory, a
 * bit each, set as threads bring the unit blocks: a new block goes to
 * the home group of the thread that allocated it (home_group: a group
 * no other thread has as home while there are such), or to another of
 * the unit's groups this thread owns.  glibc (an arena of 64 MiB heaps
 * a thread), jemalloc (an arena's extents of 2 MiB and up) and mimalloc
 * (a thread's 32 MiB segments) never give two threads blocks in one
 * unit: in bench/malloc_bench --threads 4, no block of the four
 * threads' 4 M fell in a unit another thread had had first under those
 * three.  tcmalloc hands every thread blocks from shared spans (33% of
 * blocks in a 4 KiB unit another thread had first, 75% at 2 MiB).  With
 * one group a unit, the first thread's, the others locked it: each
 * operation a locked exchange on a shard line another core had written,
 * and entries' lines shared (four threads under tcmalloc: lock_slow 26%
 * of the samples, the run 17.6x the bare one against 3.2-5.6x under
 * the others).  With a unit's groups as a set, each thread keeps its
 * blocks in its own group, which it owns (no lock), however the
 * allocator mixes them; a block is looked for in the unit's groups this
 * thread owns first, then in the others (next_group), so freeing
 * another thread's block costs a lookup or two more, and locks that
 * thread's group as before.  The hot paths' test is the unit's byte
 * against `mine`, which the owner's path read before anyway: one thread
 * tracking with stacks went from 767.9 to 765.8 instructions a step
 * (callgrind slope of malloc_bench, glibc).  The price: an address the
 * program freed behind memcheck's back (mi_free, sdallocx) that the
 * allocator hands out again to a thread whose group is not the old
 * block's is not seen as MC_REPLACED_LIVE; the old block stays live, as
 * it does when the address is not handed out again at all.
 *
 * The directory: DIR_TOP pointers (ptr's bits 40..47) to leaves of a
 * byte a unit (bits 21..39, 512 KiB, mapped lazily when one of their
 * units is first set: a process touches a page or two of each of the
 * two or three leaves its heaps fall in; until then the pointer is to
 * `zero_leaf`, reserved and never written, so a lookup has no test for
 * a missing leaf).  A byte is 0 until set, then gains bits, never loses
 * them: a lookup reads it without a lock.  A unit not set has no blocks
 * in the table.  A lookup costs about 8 instructions more than the hash of
 * the unit did (callgrind slope of malloc_bench, glibc: 749 -> 766 a
 * step; 773 with a test for a missing leaf).  Tried and dropped: the
 * shard of the thread's own group from thread-local variables, the
 * byte only compared, so that the shard's loads need not wait for the
 * directory's: 11 instructions a step more (jemalloc: 702 -> 713),
 * and no time to be seen on this loaded machine. */
_Atomic(_Atomic uint8_t *) mc_dir[DIR_TOP];
static _Atomic uint8_t *zero_leaf;     /* every leaf not mapped yet */
/* Leaves mapped at start-up in one call, taken before any other is
 * mapped (leaf_new): the program's heap (brk) and its mappings (where
 * mmap puts memory) each fall under one top in most processes. */
#define LEAF_POOL 2
static _Atomic uint8_t *leaf_pool;
static atomic_uint leaf_pool_used;
static MC_TLS unsigned my_home;        /* this thread's group + 1; 0: none yet */
static MC_TLS bool home_shared;        /* my_home came round robin: others' too */
static _Atomic unsigned homes;         /* bit g: group g is a thread's home */
static _Atomic unsigned next_home;     /* past NGROUPS homes: round robin */

/* Take the next group out of *m, the groups left to look in for a
 * block: those this thread owns first (no lock; a thread frees mostly
 * its own blocks), then the others in order. */
static inline unsigned next_group(unsigned *m)
{
	unsigned g = (unsigned)__builtin_ctz((*m & mc_blocks_mine) ? (*m & mc_blocks_mine) : *m);
	*m &= ~(1u << g);
	return g;
}

/* Shard s's line set up as group g's, entered in mode m: pointed at
 * `unused` the first time (a shard with no array yet has never been
 * written, .bss: its other fields are 0 already), its group's bit, its
 * mode. */
static void shard_set_up(struct shard *s, unsigned g, int m)
{
	if (!s->e) {
		s->e = UNUSED;
		s->end = sizeof(struct entry);
	}
	s->bit = 1u << g;
	atomic_store_explicit(&s->mode, m, memory_order_relaxed);
}

/* Group g's 32 shard lines (2 KiB), set up when a thread first makes
 * the group its home (home_group), not all 256 (16 KiB, 4 pages) at
 * start-up: a one-thread process writes one group's, on the page of
 * the small variables a fork writes (lib/bss-layout.sh: the first home
 * is the last group, NGROUPS - 1, which lies there).  Before READY no
 * thread reads or writes them: no unit names the group until it is
 * set up (home_shard sets the unit's bit after), so no lookup reaches
 * it, nor a claim (lock_wait: only through a unit's shard or a walk),
 * and the walks pass it (group_ready, never_used; mc_blocks_lock_all
 * lends it, unclaimed, without touching its lines).  One thread writes
 * them (SETTING); another that takes the group meanwhile (a home given
 * round robin) waits: a few dozen stores, made inside memcheck's guard,
 * where no stop nor signal handler of memcheck's waits for anything.
 * go_crowd may pass the group while it is not READY: its mode is then
 * turned here, after READY (seq_cst both: either go_crowd sees READY
 * and turns the lines, or this sees the group's CROWD). */
static void shards_crowd(struct shard *first)
{
	for (int k = 0; k < GROUP_SHARDS; k++) {
		int m = ALONE;
		atomic_compare_exchange_strong(&first[k].mode, &m, CROWD);
	}
}

static __attribute__((noinline)) void group_set_up(unsigned g)
{
	struct group *gr = &groups[g];
	int r = 0;
	if (atomic_load_explicit(&gr->ready, memory_order_acquire) == READY)
		return;
	if (!atomic_compare_exchange_strong(&gr->ready, &r, SETTING)) {
		while (atomic_load_explicit(&gr->ready, memory_order_acquire) != READY)
			__builtin_ia32_pause();
		return;
	}
	struct shard *first = &mc_shards[g * GROUP_SHARDS];
	int m = atomic_load(&gr->mode);
	for (int k = 0; k < GROUP_SHARDS; k++)
		shard_set_up(&first[k], g, m);
	atomic_store(&gr->ready, READY);
	if (m == ALONE && atomic_load(&gr->mode) != ALONE)
		shards_crowd(first);
}

static inline bool group_ready(unsigned g)
{
	return atomic_load_explicit(&groups[g].ready, memory_order_acquire) == READY;
}

/* This thread's group for units it brings: a group no thread has yet,
 * the highest first (the first thread's lines lie where start-up
 * populates, lib/bss-layout.sh), else (more threads than groups) the
 * next in turn; set up before it is named anywhere. */
static void tiny_ready(unsigned g);

static unsigned home_group(void)
{
	if (!my_home) {
		unsigned taken = atomic_load(&homes), g;
		bool fresh = false;
		for (;;) {
			if (taken == (1u << NGROUPS) - 1) {
				g = atomic_fetch_add(&next_home, 1) % NGROUPS;
				home_shared = true;
				break;
			}
			g = 31u - (unsigned)__builtin_clz(~taken & ((1u << NGROUPS) - 1));
			if (atomic_compare_exchange_weak(&homes, &taken, taken | 1u << g)) {
				fresh = true;
				break;
			}
		}
		group_set_up(g);
		my_home = g + 1;
		if (fresh)
			tiny_ready(g);
	}
	return my_home - 1;
}

/* A leaf not yet in the directory: one of the pool's, else mapped. */
static _Atomic uint8_t *leaf_new(bool *pooled)
{
	unsigned k = atomic_load_explicit(&leaf_pool_used, memory_order_relaxed);
	while (leaf_pool && k < LEAF_POOL)
		if (atomic_compare_exchange_weak(&leaf_pool_used, &k, k + 1)) {
			*pooled = true;
			return leaf_pool + (size_t)k * LEAF_UNITS;
		}
	*pooled = false;
	return mc_map_lazy(LEAF_UNITS);
}

/* The leaf of p's top in the directory (NULL: no memory for it), and
 * when populate, the page of p's unit populated: one system call
 * instead of two page faults, the read of the never-written
 * zero_leaf's page by a lookup and the write of the unit's byte. */
static _Atomic uint8_t *leaf_ready(uintptr_t p, bool populate)
{
	_Atomic(_Atomic uint8_t *) *top = &mc_dir[(p >> LEAF_SHIFT) & (DIR_TOP - 1)];
	if (atomic_load(top) == zero_leaf) {
		/* No lock: one a thread held while mapping would be held for
		 * ever in a child forked meanwhile.  Of two threads mapping
		 * the same leaf at once, the second unmaps its own (a pooled
		 * one stays unused). */
		int saved = errno;
		bool pooled;
		_Atomic uint8_t *leaf = leaf_new(&pooled), *none = zero_leaf;
		if (leaf && !atomic_compare_exchange_strong(top, &none, leaf)) {
			if (!pooled)
				mc_unmap((void *)leaf, LEAF_UNITS);
		} else if (leaf && populate)
			mc_populate((void *)unit_cell(leaf, p), 1);
		errno = saved;
		if (atomic_load(top) == zero_leaf)
			return NULL;
	}
	return atomic_load(top);
}

/* ptr's shard in this thread's home group, where its new block goes,
 * the home's bit added to the unit's groups first (so that a lookup
 * finds the block from the moment it is there); NULL when no memory is
 * left for the directory.  A thread past the first NGROUPS, whose home
 * other threads have too, puts its blocks in a group the unit has
 * already, where there is one: the home's owner (the main thread, say)
 * then keeps its group unlocked, as when a unit had one group. */
static __attribute__((noinline)) struct shard *home_shard(uintptr_t p, uint64_t h)
{
	_Atomic uint8_t *leaf = leaf_ready(p, true);
	if (!leaf)
		return NULL;
	unsigned g = home_group();
	_Atomic uint8_t *cell = unit_cell(leaf, p);
	unsigned set = atomic_load_explicit(cell, memory_order_relaxed);
	if (home_shared && set)
		g = (unsigned)__builtin_ctz(set);
	else if (!(set & 1u << g))
		atomic_fetch_or(cell, (uint8_t)(1u << g));
	return group_shard(g, h);
}

/* The group of shard s, and its bit in `mine`. */
static inline unsigned group_index(const struct shard *s)
{
	return (unsigned)(((uintptr_t)s - (uintptr_t)mc_shards) / GROUP_BYTES);
}

static inline struct group *group_of(const struct shard *s)
{
	return &groups[group_index(s)];
}

static void spin_lock(struct shard *s)
{
	mc_spin_lock_noted(&s->lock);
}

/* mc_spin_lock_noted's wait (internal.h says why the stack pointer is
 * left in mc_self.table_wait): out of line, only a lock held past 64
 * spins comes here. */
__attribute__((noinline)) void mc_spin_wait(atomic_int *l)
{
	__builtin_unwind_init();
	uintptr_t was = mc_self.table_wait, sp = (uintptr_t)__builtin_frame_address(0);
#if defined(__x86_64__)
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp) : : "memory");
#endif
	mc_self.table_wait = sp | 1;
	atomic_signal_fence(memory_order_seq_cst);
	while (atomic_load_explicit(l, memory_order_relaxed) ||
	       atomic_exchange_explicit(l, 1, memory_order_acquire))
		sched_yield();
	atomic_signal_fence(memory_order_seq_cst);
	mc_self.table_wait = was;
}

static bool membarrier_ok(void)
{
	return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* Another thread has come to group g: from now on, everyone locks its
 * shards.  Whoever turns it waits for the owner to leave; whoever finds
 * it turning waits for that, so that no one enters a shard the owner is
 * still in. */
static void go_multi(struct group *g)
{
	int m = atomic_load(&g->mode);
	while (m < GOING && !atomic_compare_exchange_weak(&g->mode, &m, GOING))
		;
	if (m < GOING) {
		/* lent to mc_blocks_lock_all, which marks none of its
		 * shards busy: the walk (a fork, a scan) is waited for here
		 * instead (read after the turn: see there) */
		while (atomic_load(&g->walk))
			__builtin_ia32_pause();
		struct shard *first = &mc_shards[(g - groups) * GROUP_SHARDS];
		for (int k = 0; k < GROUP_SHARDS; k++)
			atomic_store(&first[k].mode, GOING);
		int saved = errno;
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
		errno = saved;
		for (int k = 0; k < GROUP_SHARDS; k++) {
			while (first[k].busy)
				__builtin_ia32_pause();
			atomic_store(&first[k].mode, MULTI);
		}
		atomic_store(&g->mode, MULTI);
	}
	while (atomic_load(&g->mode) != MULTI)
		__builtin_ia32_pause();
}

/* A second thread has come to the table: owners change shared site
 * counts with atomic adds from now on.  Every group still owned (or not
 * yet claimed) goes to CROWD; the membarrier makes the owners see it
 * (as in go_multi) and they are waited for. */
static void go_crowd(void)
{
	if (atomic_exchange(&sole, SOLE_CROWD) != SOLE_CROWD) {
		for (int k = 0; k < NGROUPS; k++) {
			int m = ALONE;
			atomic_compare_exchange_strong(&groups[k].mode, &m, CROWD);
		}
		/* Each shard's copy too, of the groups set up (one set up
		 * after this read turns its own, group_set_up); one that
		 * go_multi has changed since is GOING or MULTI, and stays so. */
		unsigned ready = 0;
		for (unsigned g = 0; g < NGROUPS; g++)
			if (group_ready(g)) {
				ready |= 1u << g;
				shards_crowd(&mc_shards[g * GROUP_SHARDS]);
			}
		int saved = errno;
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
		errno = saved;
		for (int k = 0; k < NSHARDS; k++)
			while (ready >> (k / GROUP_SHARDS) & 1 && mc_shards[k].busy)
				__builtin_ia32_pause();
		atomic_store(&crowd_done, 1);
	}
	while (!atomic_load(&crowd_done))
		__builtin_ia32_pause();
}

/* This thread's first time in the table (with no busy mark set): the
 * sole thread so far, or the second, which ends ALONE for everyone. */
static __attribute__((noinline)) void join(void)
{
	uintptr_t none = 0;
	if (!atomic_compare_exchange_strong(&sole, &none, (uintptr_t)&mc_blocks_mine))
		go_crowd();
	joined = true;
}

static struct in lock_slow(struct shard *s);

/* As owned_enter, for a shard of any group. */
static inline int owner_enter(struct shard *s)
{
	if (unlikely(!(mc_blocks_mine & s->bit)))
		return MULTI;
	return owned_enter(s);
}

/* Enter shard s: its group's mode as owner_enter, or MULTI with the
 * shard's lock taken.  The site counts are shared unless ALONE. */
static inline struct in lock(struct shard *s)
{
	int m = owner_enter(s);
	return likely(m != MULTI) ? (struct in){ m } : lock_slow(s);
}

/* lock_slow's wait, marked (mc_self.table_wait): a thread stopped for a
 * scan here has not changed the table yet, so threads.c stops it at
 * once, where it puts off the stop of one inside its guard otherwise.
 * The mark is lock_slow's frame pointer (as cheap as a 1): where a
 * thread no signal stops waits here for an owner (go_multi), roots.c
 * reads its stack from just below it (table_wait_sp); spinning for the
 * shard's lock, mc_spin_wait's exact stack pointer replaces it. */
static inline __attribute__((always_inline)) struct in lock_wait(struct shard *s);
static __attribute__((noinline)) struct in lock_slow(struct shard *s)
{
	/* a scan's stop put off until now: here the table is unchanged */
	if (unlikely(mc_self.stop_owed))
		mc_guard_stop_owed();
	uintptr_t was = mc_self.table_wait;
	mc_self.table_wait = (uintptr_t)__builtin_frame_address(0); /* as cheap as a 1 */
	atomic_signal_fence(memory_order_seq_cst);
	struct in in = lock_wait(s);
	atomic_signal_fence(memory_order_seq_cst);
	mc_self.table_wait = was;
	return in;
}

static inline __attribute__((always_inline)) struct in lock_wait(struct shard *s)
{
	if (unlikely(!joined))
		join();
	struct group *g = group_of(s);
	unsigned bit = 1u << group_index(s);
	if (atomic_load_explicit(&g->mode, memory_order_relaxed) < GOING) {
		if (mc_blocks_mine & bit) /* back from MULTI: a second mc_blocks_init */
			return lock(s);
		if (!atomic_flag_test_and_set(&g->claim)) {
			mine_set(mc_blocks_mine | bit);
			return lock(s);
		}
	}
	/* MULTI for good: the owner stops marking busy, a store to the line
	 * every thread reads the mode from. */
	mine_set(mc_blocks_mine & ~bit);
	go_multi(g);
	spin_lock(s);
	return (struct in){ MULTI };
}

/* No shard of s's group has had an array yet: nothing to read there.
 * Walks of the table skip such a group rather than lock it, which would
 * claim it: a thread that walks the table (at a region's end) then does
 * not take the groups of threads still to come. */
static inline bool never_used(const struct shard *s)
{
	return !atomic_load_explicit(&group_of(s)->used, memory_order_acquire);
}

/* Are the site counts of a shard entered so shared with other threads? */
static inline bool shared(struct in in)
{
	return in.mode != ALONE;
}

static inline void unlock(struct shard *s, struct in in)
{
	if (likely(in.mode != MULTI)) {
		owner_leave(s);
		return;
	}
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

/* A shard's arrays come in three tiers.  Its first, TINY_CAP slots, lies
 * beside the other shards' in one lazily touched mapping (`tiny`): a
 * group's 32 shards share 4 pages there, and a short test process, whose
 * few hundred blocks fall into every shard of its group, touches those 4
 * pages, where a first array of 1024 slots each touched 118 (perf stat
 * on bench/suite_test 0: 314 page faults under memcheck, 151 bare).
 * footprint.c measures what of it is resident with mincore; it is never
 * given back (at most 128 KiB, 16 KiB a group).
 *
 * The second, MIN_CAP slots, also side by side in one mapping (`small`):
 * with 128-slot shards, mapped one by one, they each started a page,
 * landed in the same cache sets, and evicted each other (that doubled
 * the cost of every lookup).  A shard goes there straight from its tiny
 * array, so a busy process runs at the load it always did.  The pages of
 * a shard that has grown out of its MIN_CAP array go back to the system
 * (that array is whole pages).  The tiers after are mapped one by one. */
static struct entry *tiny;    /* NSHARDS * TINY_CAP entries */
static struct entry *small;   /* NSHARDS * MIN_CAP entries */
_Static_assert(MIN_CAP * sizeof(struct entry) % 4096 == 0, "first arrays are whole pages");
_Static_assert(4096 % (TINY_CAP * sizeof(struct entry)) == 0, "tiny arrays share pages whole");

/* A thread's home group's tiny arrays, its 32 shards' first homes,
 * populated in one call when the group becomes the thread's home: a
 * few dozen blocks land on all four pages, a page fault each (measured
 * `/bin/date`: 4 of its 7 faults in the table). */
static void tiny_ready(unsigned g)
{
	if (tiny)
		mc_populate(tiny + (size_t)g * GROUP_SHARDS * TINY_CAP,
			    GROUP_SHARDS * TINY_CAP * sizeof *tiny);
}

static bool is_small(uint32_t cap)
{
	return small && cap == MIN_CAP;
}

/* A shard's MIN_CAP array counts as memcheck's resident memory, all 16
 * KiB of it, from its first use (footprint.c), and is populated then, in
 * one call (MADV_POPULATE_WRITE: no page fault).  Touched as entries
 * landed in them, its pages cost two page faults each: the insert's
 * probe reads a slot first (a fault that maps the zero page), then
 * writes it (a second that gives the page).  A shard moves here with
 * ~27 entries, which leave one of its four pages untouched once in
 * ~600 shards, so populating touches next to nothing they would not: once a thread
 * has ~850 blocks live its group's 32 shards took 256 faults for 128
 * pages, 0.6 ms of CPU in libxkbcommon's xkbcli-compile-keymap (470
 * faults preloaded, 196 bare, 3.95 against 2.57 ms of task-clock; now
 * 215 and 3.37 ms: session 50, tests/test_ownmem.c
 * table_pages_faulted_once). */
static struct entry *first_array(struct shard *s)
{
	int saved = errno;
	mc_own_grow(MIN_CAP * sizeof(struct entry));
	struct entry *e = small + (size_t)(s - mc_shards) * MIN_CAP;
	mc_populate(e, MIN_CAP * sizeof *e);
	errno = saved;
	return e;
}

static struct entry *array_for(struct shard *s, uint32_t cap)
{
	if (cap == TINY_CAP && tiny)
		return tiny + (size_t)(s - mc_shards) * TINY_CAP;
	if (is_small(cap))
		return first_array(s);
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
	uint32_t old_cap = s->e == UNUSED ? 0 : cap_of(s);
	struct entry *old = s->e;
	struct entry *e = array_for(s, cap);
	if (!e)
		return false;
	/* No memset: e is a tiny array never used before, a first array
	 * populated zero (first_array: only a shard that outgrew its tiny
	 * one gets it, so a short process's table stays a few pages, not
	 * 512 KiB), or a grown one fresh from mc_map, zero and already
	 * resident (MAP_POPULATE: counted as memcheck's own when made,
	 * lib/ownmap.c). */
	uint32_t end = cap * (uint32_t)sizeof *e;
	for (uint32_t i = 0; i < old_cap; i++) {
		struct entry *b = &old[i];
		if (!b->w0)
			continue;
		uint32_t j = slot_of(hash(e_ptr(b)), end);
		while (at(e, j)->w0)
			j = next(j, end);
		*at(e, j) = *b;
	}
	if (old_cap == TINY_CAP && tiny) {
		/* Its page is its neighbours' too: kept as it is (no
		 * shard goes back to it; the scan reads only the program's
		 * memory, so the stale entries are never taken for roots). */
		atomic_fetch_sub(&table_bytes, TINY_CAP * sizeof *e);
	} else if (old_cap) {
		int saved = errno;
		if (is_small(old_cap)) {
			madvise(old, (size_t)old_cap * sizeof *e, MADV_DONTNEED);
			mc_own_grow(-(int64_t)((size_t)old_cap * sizeof *e));
		} else
			mc_unmap(old, (size_t)old_cap * sizeof *e);
		errno = saved;
		atomic_fetch_sub(&table_bytes, (size_t)old_cap * sizeof *e);
	}
	atomic_fetch_add(&table_bytes, (size_t)cap * sizeof *e);
	if (!old_cap)
		atomic_store_explicit(&group_of(s)->used, 1, memory_order_release);
	s->e = e;
	s->end = end;
	s->room = limit(cap) - live;
	return true;
}

/* The shard is full (or not there yet): GROW_NUM / GROW_DEN times the
 * slots, in whole pages. */
static __attribute__((noinline)) bool grow(struct shard *s)
{
	if (s->e == UNUSED)
		return rebuild(s, TINY_CAP);
	uint32_t cap = cap_of(s);
	if (cap == TINY_CAP)
		return rebuild(s, MIN_CAP);
	if (cap >= MAX_CAP)
		return false;
	uint64_t want = (uint64_t)cap * GROW_NUM / GROW_DEN + PAGE_SLOTS - 1;
	want -= want % PAGE_SLOTS;
	return rebuild(s, want < MAX_CAP ? (uint32_t)want : MAX_CAP);
}

/* Make room for one more entry: grow at 5/6 full. */
static inline bool make_room(struct shard *s)
{
	return likely(s->room) || grow(s);
}

/* The groups' modes at start (mc_blocks_init) and in a forked child:
 * ALONE, or with no membarrier(2) MULTI for good, every group set up
 * at once then (every thread locks, and mc_blocks_lock_all locks
 * every shard: no group to lend).  The lines of a group set up before
 * (a second mc_blocks_init, a child's copy of its parent's) take the
 * mode anew. */
static void groups_start(bool ok)
{
	for (unsigned g = 0; g < NGROUPS; g++) {
		struct group *gr = &groups[g];
		atomic_store(&gr->mode, ok ? ALONE : MULTI);
		if (!ok)
			group_set_up(g);
		if (!group_ready(g))
			continue;
		struct shard *first = &mc_shards[g * GROUP_SHARDS];
		for (int k = 0; k < GROUP_SHARDS; k++)
			shard_set_up(&first[k], g, ok ? ALONE : MULTI);
	}
}

/* A count-only process (MEMCHECK_TRACK=0) has no table: its figures are
 * the counters' (account.c), and nothing enters or leaves the table.
 * mc_blocks_init then writes no shard, maps nothing and asks nothing of
 * the kernel (the shards' 4 pages populated, the directory's, the
 * mappings of the first arrays and the leaves, membarrier: 4 pages and
 * 6 system calls at every count-only start-up), and the walks and
 * lookups that may still come (malloc_usable_size of an allocator
 * without it, a fork, the epochs' renumbering) find it empty. */
static bool made;

/* Where libmemcheck's small variables begin (lib/bss-layout.sh), which
 * footprint.c populates at start-up, the directory among them: no
 * second call for it.  0 in a static link. */
extern char mc_bss_small_lo[] __attribute__((weak, visibility("hidden")));

void mc_blocks_init(void)
{
	if (!mc_opt.track)
		return;
	made = true;
	/* The shards are written group by group as threads take them
	 * (group_set_up); the first thread's lie where lib/bss-layout.sh
	 * puts the start of start-up's populate (footprint.c), elsewhere
	 * (a static link) its page faults in at its set-up. */
	if (!zero_leaf) {
		/* No leaf at all (no memory): every insert finds the table full. */
		zero_leaf = mc_map_reserve(LEAF_UNITS);
		if (zero_leaf) {
			if (!mc_bss_small_lo || (char *)mc_dir < mc_bss_small_lo)
				mc_populate(mc_dir, sizeof mc_dir);
			for (int k = 0; k < DIR_TOP; k++)
				atomic_store_explicit(&mc_dir[k], zero_leaf, memory_order_relaxed);
			/* The leaves of the program's first blocks, made now
			 * (one mapping for both): the brk heap's (glibc's
			 * main arena) and that of the mappings' (the other
			 * allocators' heaps, near the pool itself).  Only
			 * the brk heap's unit's page is populated: a short
			 * process under glibc puts no block among the
			 * mappings, and under another allocator the first
			 * block's write makes that page resident (a fault,
			 * ~1.3 us here, where the populate cost ~1.2). */
			leaf_pool = mc_map_lazy(LEAF_POOL * LEAF_UNITS);
			if (leaf_pool) {
				leaf_ready(mc_program_break(), true);
				leaf_ready((uintptr_t)leaf_pool, false);
			}
		}
	}
	/* Shards are mapped on first use: a process that allocates little
	 * should not pay for 256 maps at start-up. */
	tiny = mc_map_lazy((size_t)NSHARDS * TINY_CAP * sizeof *tiny);
	/* small: mc_blocks_init_small, once the stacks' memo pool is
	 * carved after tiny. */
	groups_start(mc_membarrier_register());
}

/* The MIN_CAP arrays' reservation (4 MiB: ownmap.c carves it from a
 * reservation of its own, where the pieces after it follow), made after
 * the stacks' memo pool (life.c), not with tiny: the leaf pool, tiny and
 * the memo pool, all three measured with mincore (footprint.c), are then
 * carved one after the other, and one mincore call measures them where
 * a measured process asked two at every region's begin and end. */
void mc_blocks_init_small(void)
{
	/* under a limit (ownmap.c): each shard's MIN_CAP array mapped at
	 * its first use (array_for), as where this reservation failed */
	if (made && !small && !mc_map_is_tight())
		small = mc_map_reserve((size_t)NSHARDS * MIN_CAP * sizeof *small);
}

/* ---- the side table -------------------------------------------------
 * Blocks an entry cannot hold, looked at only while it is not empty. */

static struct mc_block odd[ODD_MAX];
/* A leaf: no one holding it waits for anything.  mc_blocks_lock_all
 * takes it too (fork's prepare, the scan), and the child clears it: a
 * thread of the parent's held it at the fork, and the child's next
 * block looked for in the side table waited for it for ever
 * (tests/test_forkheld.c). */
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
	for (int i = 0; i < mc_n_odd; i++)
		if (odd[i].ptr == ptr)
			return i;
	return -1;
}

/* Take ptr out of the side table into *out; false when it is not there. */
static bool odd_remove(uintptr_t ptr, struct mc_block *out)
{
	if (likely(!atomic_load_explicit(&mc_n_odd, memory_order_relaxed)))
		return false;
	odd_enter();
	int i = odd_index(ptr);
	if (i >= 0) {
		*out = odd[i];
		mc_site_change(out->stack, -(int64_t)out->size, -1, true);
		odd[i] = odd[mc_n_odd - 1];
		atomic_fetch_sub(&mc_n_odd, 1);
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
		mc_site_change(old->stack, -(int64_t)old->size, -1, true);
		r = MC_REPLACED_LIVE;
	} else if (mc_n_odd < ODD_MAX) {
		i = mc_n_odd;
		atomic_fetch_add(&mc_n_odd, 1);
	}
	if (i >= 0) {
		odd[i] = *b;
		mc_site_change(b->stack, (int64_t)b->size, 1, true);
	}
	odd_leave();
	if (i < 0)
		table_full();
	return r;
}

/* ---- operations ------------------------------------------------------ */

static inline bool remove_entry(uintptr_t ptr, struct mc_block *out);

/* Put the entry w0, w1 in shard s (entered, with room), probing from
 * byte offset i: a new entry, or the one of a block at the same address,
 * handed back in *old. */
static inline enum mc_insert place(struct shard *s, uint32_t i, uint64_t w0, uint64_t w1,
				   struct mc_block *old, bool shared)
{
	uintptr_t ptr = (uintptr_t)(w0 & PTR_MASK);
	enum mc_insert r = MC_NEW;
	struct entry *b;
	for (;; i = next(i, s->end)) {
		b = at(s->e, i);
		if (!b->w0)
			break;
		if (unlikely(e_ptr(b) == ptr)) {
			r = MC_REPLACED_LIVE;
			unpack_ptr(b, ptr, old);
			mc_site_change(old->stack, -(int64_t)old->size, -1, shared);
			s->room++;
			break;
		}
	}
	b->w0 = w0;
	b->w1 = w1;
	s->room--;
	mc_site_change((uint32_t)w1 & STACK_MASK, (int64_t)(w1 >> STACK_BITS), 1, shared);
	return r;
}

/* Every case of mc_blocks_insert. */
__attribute__((noinline)) enum mc_insert mc_blocks_insert_any(uintptr_t ptr, uint64_t size,
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
	uint64_t h = hash(ptr);
	struct shard *s = home_shard(ptr, h);
	if (!s) {
		table_full();
		return MC_NEW;
	}
	enum mc_insert r = MC_NEW;
	struct in in = lock(s);
	if (unlikely(!make_room(s))) {
		unlock(s, in);
		table_full();
		return MC_NEW;
	}
	r = place(s, slot_of(h, s->end), pack0(ptr, epoch_of(epoch)), pack1(size, stack), old,
		  shared(in));
	unlock(s, in);
	if (unlikely(r == MC_NEW) && unlikely(atomic_load_explicit(&mc_n_odd, memory_order_relaxed)))
		r = odd_remove(ptr, old) ? MC_REPLACED_LIVE : MC_NEW;
	return r;
}

/* insert's fast path found its home slot taken: probe on, then leave. */
__attribute__((noinline)) enum mc_insert mc_blocks_place_leave(struct shard *s, uint32_t i,
							     uint64_t w0, uint64_t w1,
							     struct mc_block *old, int m)
{
	enum mc_insert r = place(s, i, w0, w1, old, m != ALONE);
	owner_leave(s);
	return r;
}

/* The owner's hit inline (blocks.h), for the callers other than
 * account.c's tracking paths. */
enum mc_insert mc_blocks_insert(uintptr_t ptr, uint64_t size, uint32_t stack,
				uint32_t epoch, struct mc_block *old)
{
	return mc_blocks_insert_hot(ptr, size, stack, epoch, old);
}

/* The byte offset of ptr's slot in its shard, or -1.  Call with the
 * shard entered. */
static inline int64_t find(const struct shard *s, uintptr_t ptr, uint64_t h)
{
	for (uint32_t i = slot_of(h, s->end);; i = next(i, s->end)) {
		uint64_t w0 = at(s->e, i)->w0;
		if (!w0)
			return -1;
		if ((w0 & PTR_MASK) == ptr)
			return i;
	}
}

/* Take ptr's entry out of shard s (entered) into *out; false when it
 * is not there. */
static inline __attribute__((always_inline)) bool take(struct shard *s, uintptr_t ptr,
							 uint64_t h, struct mc_block *out,
							 bool shared)
{
	int64_t i = find(s, ptr, h);
	if (likely(i >= 0)) {
		unpack_ptr(at(s->e, (uint32_t)i), ptr, out);
		mc_site_change(out->stack, -(int64_t)out->size, -1, shared);
		s->room++;
		delete_at(s, (uint32_t)i);
	}
	return i >= 0;
}

static inline __attribute__((always_inline)) bool remove_entry(uintptr_t ptr,
								 struct mc_block *out)
{
	uint64_t h = hash(ptr);
	for (unsigned m = unit_groups(ptr); m;) {
		struct shard *s = group_shard(next_group(&m), h);
		struct in in = lock(s);
		bool found = take(s, ptr, h, out, shared(in));
		unlock(s, in);
		if (found)
			return true;
	}
	return false;
}

__attribute__((noinline)) enum mc_remove mc_blocks_remove_any(uintptr_t ptr, struct mc_block *out)
{
	if (likely(remove_entry(ptr, out)) || odd_remove(ptr, out))
		return MC_REMOVED;
	return MC_UNKNOWN;
}

/* remove's fast path, entered, found ptr's home slot empty or another
 * block's: probe on, then leave. */
__attribute__((noinline)) enum mc_remove mc_blocks_probe_leave(struct shard *s, uintptr_t ptr,
							     struct mc_block *out, int m)
{
	uint64_t h = hash(ptr);
	bool found = take(s, ptr, h, out, m != ALONE);
	owner_leave(s);
	return found ? MC_REMOVED : mc_blocks_remove_any(ptr, out);
}

/* remove's fast path, entered, took the entry at i and found the next
 * slot taken: shift the cluster back, then leave. */
__attribute__((noinline)) enum mc_remove mc_blocks_shift_leave(struct shard *s, uint32_t i)
{
	delete_at(s, i);
	owner_leave(s);
	return MC_REMOVED;
}

enum mc_remove mc_blocks_remove(uintptr_t ptr, struct mc_block *out)
{
	return mc_blocks_remove_hot(ptr, out);
}


/* Look ptr up and, when set_epoch, change its epoch. */
static bool lookup(uintptr_t ptr, struct mc_block *out, bool set_epoch, uint32_t epoch)
{
	if (!made)
		return false;
	uint64_t h = hash(ptr);
	int64_t i = -1;
	for (unsigned m = unit_groups(ptr); m && i < 0;) {
		struct shard *s = group_shard(next_group(&m), h);
		struct in in = lock(s);
		i = find(s, ptr, h);
		if (i >= 0) {
			struct entry *e = at(s->e, (uint32_t)i);
			if (set_epoch)
				e->w0 = e_ptr(e) | (uint64_t)epoch << PTR_BITS;
			unpack(e, out);
		}
		unlock(s, in);
	}
	if (i >= 0 || !atomic_load(&mc_n_odd))
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

/* The live block that ptr points inside of, not at its start: a walk of
 * the whole table (a few ms for a million blocks), for the rare free of
 * a pointer the table does not have, to tell a pointer into a block,
 * which the allocator must not see, from one of another allocator's
 * functions. */
bool mc_blocks_containing(uintptr_t ptr, struct mc_block *out)
{
	bool found = false;
	if (!made)
		return false;
	for (int k = 0; k < NSHARDS && !found; k++) {
		struct shard *s = &mc_shards[k];
		if (never_used(s))
			continue;
		struct in in = lock(s);
		for (uint32_t i = 0, cap = cap_of(s); i < cap; i++) {
			const struct entry *e = &s->e[i];
			uintptr_t p = e_ptr(e);
			if (e->w0 && ptr > p && ptr - p < e->w1 >> STACK_BITS) {
				unpack(e, out);
				found = true;
				break;
			}
		}
		unlock(s, in);
	}
	if (found || !atomic_load(&mc_n_odd))
		return found;
	odd_enter();
	for (int i = 0; i < mc_n_odd && !found; i++) {
		if (ptr > odd[i].ptr && ptr - odd[i].ptr < odd[i].size) {
			*out = odd[i];
			found = true;
		}
	}
	odd_leave();
	return found;
}

static inline void each_at(const struct entry *e, uint64_t min_w0,
			   void (*fn)(const struct mc_block *, void *), void *arg)
{
	if (e->w0 >= min_w0) {
		struct mc_block b;
		unpack(e, &b);
		fn(&b, arg);
	}
}

/* Call fn for each entry of shard s with epoch >= min_epoch.  Four
 * slots a test, most of them empty (8 instructions a slot one by one,
 * with the array's address loaded again after each call: 11 K of a
 * measured /bin/date's exit, its 32 shards' first arrays walked). */
static void each_in(const struct shard *s, uint32_t min_epoch,
		    void (*fn)(const struct mc_block *, void *), void *arg)
{
	/* an entry is taken when w0 != 0: epoch 0 asks w0 >= 1 */
	uint64_t min_w0 = min_epoch ? (uint64_t)min_epoch << PTR_BITS : 1;
	const struct entry *e = s->e;
	uint32_t cap = cap_of(s), i = 0;
	for (; i + 4 <= cap; i += 4) {
		if (!(e[i].w0 | e[i + 1].w0 | e[i + 2].w0 | e[i + 3].w0))
			continue;
		for (uint32_t k = i; k < i + 4; k++)
			each_at(&e[k], min_w0, fn, arg);
	}
	for (; i < cap; i++)
		each_at(&e[i], min_w0, fn, arg);
}

void mc_blocks_each_live(uint32_t min_epoch,
			 void (*fn)(const struct mc_block *, void *), void *arg)
{
	for (int k = 0; made && k < NSHARDS; k++) {
		struct shard *s = &mc_shards[k];
		if (never_used(s))
			continue;
		struct in in = lock(s);
		each_in(s, min_epoch, fn, arg);
		unlock(s, in);
	}
	/* The side table's blocks, from a copy: fn is called with no lock
	 * held.  (Here, not in a function of its own that
	 * mc_blocks_each_live_locked shared: that one reads the table in
	 * place, with odd_lock held, and this one's copy costs no room in
	 * .text.mc_first.) */
	if (!atomic_load(&mc_n_odd))
		return;
	struct mc_block copy[ODD_MAX];
	odd_enter();
	int n = mc_n_odd;
	memcpy(copy, odd, (size_t)n * sizeof *odd);
	odd_leave();
	for (int i = 0; i < n; i++)
		if (copy[i].aux >= min_epoch)
			fn(&copy[i], arg);
}

/* Is any block of epoch >= min_epoch live?  Stops at the first: a
 * region's end asks it before deciding to scan, and a whole walk of the
 * table (every slot of every shard, ~270,000 instructions for a short
 * process's first table) only to count is what the scan repeats. */
bool mc_blocks_any_live(uint32_t min_epoch)
{
	uint64_t min_w0 = (uint64_t)min_epoch << PTR_BITS;
	bool found = false;
	for (int k = 0; made && k < NSHARDS && !found; k++) {
		struct shard *s = &mc_shards[k];
		if (never_used(s) || !live_in(s))
			continue;
		struct in in = lock(s);
		for (uint32_t i = 0, cap = cap_of(s); i < cap && !found; i++)
			found = s->e[i].w0 && s->e[i].w0 >= min_w0;
		unlock(s, in);
	}
	if (found || !atomic_load(&mc_n_odd))
		return found;
	odd_enter();
	for (int i = 0; i < mc_n_odd && !found; i++)
		found = odd[i].aux >= min_epoch;
	odd_leave();
	return found;
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
	for (int k = 0; made && k < NSHARDS; k++) {
		struct shard *s = &mc_shards[k];
		if (never_used(s))
			continue;
		for (uint32_t i = 0, cap = cap_of(s); i < cap; i++) {
			struct entry *e = &s->e[i];
			if (e->w0)
				e->w0 = e_ptr(e) |
					(uint64_t)renumbered((uint32_t)(e->w0 >> PTR_BITS), open, n)
						<< PTR_BITS;
		}
	}
	for (int i = 0; i < mc_n_odd; i++) /* odd_lock: held too */
		odd[i].aux = renumbered(odd[i].aux, open, n);
	atomic_store(&mc_epoch, renumbered(atomic_load(&mc_epoch), open, n));
	atomic_fetch_add(&mc_epochs_renumbered, 1);
	mc_blocks_unlock_all();
}

size_t mc_blocks_bytes(void)
{
	return atomic_load(&table_bytes);
}

/* A group none of whose shards has had an array has no entries: its
 * shards are passed by its flag, not one by one (a short process uses
 * one group of eight). */
static inline bool group_unused(int first)
{
	return never_used(&mc_shards[first]);
}

uint64_t mc_blocks_count(void)
{
	uint64_t n = 0;
	for (int first = 0; made && first < NSHARDS; first += GROUP_SHARDS) {
		if (group_unused(first))
			continue;
		for (int k = first; k < first + GROUP_SHARDS; k++)
			n += live_in(&mc_shards[k]);
	}
	return n;
}

unsigned mc_blocks_groups_locked(void)
{
	unsigned n = 0;
	for (int k = 0; k < NGROUPS; k++)
		n += atomic_load(&groups[k].mode) >= GOING;
	return n;
}

/* Groups no thread had claimed, which mc_blocks_lock_all claimed for
 * the walk only and mc_blocks_unlock_all gives back (bit g), under
 * all_lock: claimed for good, a walk at a region's end or a fork before
 * the program starts its threads took every group from threads to come,
 * whose units then go to groups they must lock. */
static unsigned lent;

/* fork(): hold every lock across it so the child never inherits one that
 * a thread which no longer exists there was holding.  Also the scan and
 * renumbering.  A group this thread owns is entered once for all its
 * shards (entering it shard by shard, a group turning MULTI between two
 * of them would have this thread wait for its own busy mark).  One no
 * thread owns is claimed for the walk (lent) and its shards are left
 * alone: no thread enters a group it has not claimed but through
 * go_multi, which waits while the group's `walk` is set.  So a fork
 * writes the lines of the groups in use and the groups' own, not all
 * 256 shards' (16 KiB): each page a fork's handlers write is a
 * copy-on-write fault in the parent after it and a page copied in the
 * child (tests/prog/plain_fork_faults: a one-thread process's fork
 * wrote 4 pages of shards and the per-shard record of how each was
 * entered, a fifth, on each side; then the one page of its own group's
 * shards; now none of its own: the first thread's group lies on the
 * page of the small variables a fork writes, lib/bss-layout.sh). */
void mc_blocks_lock_all(void)
{
	while (atomic_flag_test_and_set_explicit(&all_lock, memory_order_acquire))
		__builtin_ia32_pause();
	odd_enter();
	lent = 0;
	if (!made)
		return; /* no table: all_lock alone */
	if (!joined)
		join();
	for (int first = 0; first < NSHARDS; first += GROUP_SHARDS) {
		struct group *g = group_of(&mc_shards[first]);
		/* (not the line's bit: a group not set up has none, and is
		 * lent, unclaimed, its lines untouched) */
		unsigned bit = 1u << (g - groups);
		if (!(mc_blocks_mine & bit)) {
			/* walk set before the mode is read: a thread that
			 * turns the group (go_multi) either reads walk after
			 * it, and waits, or has turned it before the read
			 * here, and the group is not lent (seq_cst, both) */
			atomic_store(&g->walk, 1);
			if (atomic_load(&g->mode) < GOING && !atomic_flag_test_and_set(&g->claim)) {
				lent |= bit;
				g->held = HELD_LENT;
				continue;
			}
			atomic_store(&g->walk, 0);
		}
		struct in in = lock(&mc_shards[first]);
		bool mark = in.mode != MULTI;
		if (mark) {
			/* This thread owns the group: every shard marked busy,
			 * then every mode read (owner_enter's order).  If the
			 * group has begun to turn, all go back and wait. */
			for (int k = first + 1; k < first + GROUP_SHARDS; k++)
				mc_shards[k].busy = 1;
			atomic_signal_fence(memory_order_seq_cst);
			for (int k = first + 1; k < first + GROUP_SHARDS; k++)
				mark &= atomic_load_explicit(&mc_shards[k].mode, memory_order_relaxed) < GOING;
			if (!mark) {
				for (int k = first; k < first + GROUP_SHARDS; k++)
					mc_shards[k].busy = 0;
				go_multi(group_of(&mc_shards[first]));
				spin_lock(&mc_shards[first]);
			}
		}
		/* every other shard of a group that is MULTI is entered so */
		for (int k = first + 1; !mark && k < first + GROUP_SHARDS; k++)
			lock(&mc_shards[k]);
		g->held = mark ? in.mode : MULTI;
	}
}

void mc_blocks_unlock_all(void)
{
	for (int k = made ? NSHARDS - 1 : -1; k >= 0; k--) {
		int held = group_of(&mc_shards[k])->held;
		if (held != HELD_LENT)
			unlock(&mc_shards[k], (struct in){ held });
	}
	/* Given back: the next thread to come claims it (one that came
	 * during the walk waits in go_multi and turns it to locks, for
	 * good, as it did when the walk marked the group's shards busy). */
	for (int k = 0; k < NGROUPS; k++)
		if (lent & 1u << k) {
			atomic_flag_clear(&groups[k].claim);
			atomic_store(&groups[k].walk, 0);
		}
	lent = 0;
	odd_leave();
	atomic_flag_clear_explicit(&all_lock, memory_order_release);
}

/* The child has one thread: the one that forked.  It owns the table.
 * Only what differs is stored: a shard line the fork's walk did not
 * write (a lent group's, lock_all) stays a page shared with the parent. */
static inline void child_set(_Atomic int *v, int want)
{
	if (atomic_load_explicit(v, memory_order_relaxed) != want)
		atomic_store_explicit(v, want, memory_order_relaxed);
}

void mc_blocks_after_fork_child(void)
{
	atomic_flag_clear_explicit(&all_lock, memory_order_relaxed);
	atomic_flag_clear_explicit(&odd_lock, memory_order_relaxed);
	if (!made)
		return;
	int mode = membarrier_ok() ? ALONE : MULTI;
	for (unsigned g = 0; g < NGROUPS; g++) {
		struct group *gr = &groups[g];
		atomic_flag_clear_explicit(&gr->claim, memory_order_relaxed);
		atomic_store_explicit(&gr->walk, 0, memory_order_relaxed);
		atomic_store_explicit(&gr->mode, mode, memory_order_relaxed);
		/* a thread of the parent's was setting it up: no more */
		if (atomic_load(&gr->ready) != READY) {
			atomic_store_explicit(&gr->ready, 0, memory_order_relaxed);
			continue;
		}
		for (struct shard *s = &mc_shards[g * GROUP_SHARDS], *e = s + GROUP_SHARDS; s < e; s++) {
			child_set(&s->lock, 0);
			if (s->busy)
				s->busy = 0;
			child_set(&s->mode, mode);
		}
	}
	if (mode == MULTI)
		groups_start(false); /* every group set up, as at start */
	mine_set(0);
	lent = 0;
	joined = false;
	/* The other threads' homes are free again (their units keep their
	 * groups, and blocks, as any group can hold any unit's). */
	atomic_store_explicit(&homes, my_home ? 1u << (my_home - 1) : 0, memory_order_relaxed);
	atomic_store_explicit(&next_home, 0, memory_order_relaxed);
	atomic_store_explicit(&sole, 0, memory_order_relaxed);
	atomic_store_explicit(&crowd_done, 0, memory_order_relaxed);
}

/* With every shard held by mc_blocks_lock_all (the scan).  A shard
 * with no live block is passed by its count, not its slots: a short
 * process's exit walked every slot of every shard for a block or two
 * (20,000 instructions of a clean bench/suite_test 1's scan). */
void mc_blocks_each_live_locked(void (*fn)(const struct mc_block *, void *), void *arg)
{
	for (int first = 0; made && first < NSHARDS; first += GROUP_SHARDS) {
		if (group_unused(first))
			continue;
		for (int k = first; k < first + GROUP_SHARDS; k++)
			if (live_in(&mc_shards[k]))
				each_in(&mc_shards[k], 0, fn, arg);
	}
	/* odd_lock held too, or this thread is the process's only one */
	for (int i = 0; i < mc_n_odd; i++)
		fn(&odd[i], arg);
}
