/*
 * depot.c - the stack depot: each distinct allocation stack stored once
 * and named by a 32-bit id, so a tracked block costs four bytes of stack
 * and leak reports group blocks by site (compiler-rt's stackdepot).
 *
 * An id is the stack's ordinal: 1 for the first stored, 2 for the next,
 * up to 2^27 - 1 (a block table entry's share).  Three arrays hold the
 * stacks.  The arena of 16-byte units holds each stack's entry (hash,
 * depth, frames: a 16-frame stack takes nine units), read when a
 * stack is stored or looked up by its frames and by reports.  The array
 * by id (struct mc_depot_id, internal.h) holds 32 bytes a stack of what
 * a lookup reads: the low half of its walked key, where its entry lies,
 * and the stacks looked up after it (its then, below).  The sites' array
 * by id, of the same geometry, holds the live figures of its blocks
 * (struct mc_site, snapshot.c), which the block table changes on every
 * malloc and free where they are counted (mc_site_change, inline in
 * internal.h, hence the segments are extern), and is mapped only there
 * (not with the defaults' text report).  Until session 58 the two were
 * one line of 64 bytes a stack (below: "what came next" says why they
 * were split, doc/costs.md depot58).  Those were in the entry's head, its
 * lines 224 bytes apart: where stacks are many (tree_bench.c's parser:
 * 90,000 paths, 17 MiB of entries) the site's line, read at every free,
 * was the largest single cache miss (41% of mc_blocks_remove's
 * samples).  By id, a stack's line sits beside those of the stacks the
 * program first took after it, and takes again (a parser frees its tree
 * in about the order it built it): callgrind's cache model (tree_bench
 * 1 M blocks, 4 MiB last level) 1.076 M -> 0.928 M data read misses;
 * the same with the site alone in a dense array of 32-byte sites, and
 * the then left in the entry, 1.154 M (the then's line then was a load
 * of the site's unit first, not a prefetch).  Memory is as before: 224
 * bytes a 16-frame stack (208 since entries take 16-byte units, below;
 * 176 since session 58 where no site is counted).
 *
 * No array is one reservation of its largest size: every process
 * that loads memcheck would pay 4 GiB (the arena) and 4 GiB (the ids; as much the sites)
 * of address space, and a
 * program that lowers RLIMIT_AS (how tests provoke out-of-memory) would
 * have none left.  Each is a list of segments mapped when the one before
 * fills, 64 KiB (the ids and the sites alike), then each as large as all before it,
 * so what is mapped
 * follows what is used (at most twice) and an id or a unit finds its
 * segment from its top bit.  Nothing is mapped before the first stack is
 * stored: a count-only process, or one MEMCHECK_PROGRAMS leaves out,
 * maps none of it.  Their pages are memcheck's own resident memory,
 * which footprint.c keeps out of the program's RSS figures: a segment is
 * reserved (mc_map_reserve) and counted ahead of what is written into
 * it (mc_ahead: a page at first, then three more, then as much again
 * as is counted, 32 KiB at most; a segment of 2 MiB or more 2 MiB at a
 * time, in huge pages: below), the index, written anywhere, is mapped
 * resident (mc_map; a table of 2 MiB or more as those segments).  Walks over the stacks (mc_depot_each) go by id,
 * never through the arena, whose segments end in unused units.
 *
 * A stack is found by its frames through one open-addressing index of
 * 16-byte slots keyed by the stack's hash (below), the same index that
 * names the stacks a frame-pointer walk finds: a lookup reads a slot,
 * and only where the key matches the stack's line and entry to compare
 * the frames.  (It was a table of hash chains through the entries' heads:
 * a new stack, whose lookup misses, read its bucket and the line and
 * head of every stack in its chain, a cache miss each, and each rehash
 * read every entry again: with tree_bench.c's 90,000 stacks, lookup()
 * was 14% of the first pass's samples.)  Lookups take no lock (inserts
 * take one), so a table is never unmapped (a lookup may still be
 * reading it; the old ones sum to the newest); one that races a growth
 * may miss, and the insert's second lookup, under the lock and in the
 * newest table, finds the stack.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* A slot of the index of walked stacks (below). */
struct idx_slot {
	_Atomic uint64_t key;   /* the hash; 0: empty (a stack hashing to 0 is not indexed) */
	_Atomic uint64_t val;   /* id | walked << 32 */
};

struct entry {
	uint64_t hash;
	uint32_t depth, spare;
	uintptr_t frames[];
};

/* Stack id's words in the array by id (see "what came next" below): the
 * low half of the key it was marked walked under (the then entries that
 * name it hold the top half), then the walked stacks looked up after it,
 * its then. */
#define THEN 3
_Static_assert(THEN * sizeof(uint64_t) == sizeof(((struct mc_depot_id *)0)->then),
	       "an id's then");
#define key_of(id) (*(_Atomic uint32_t *)&mc_depot_id_of(id)->key_lo)
#define then_of(id) ((_Atomic uint64_t *)mc_depot_id_of(id)->then)

/* An entry takes 16-byte units: its 16-byte head and its frames, 8 bytes
 * each, waste 8 bytes where the frames are odd.  In 32-byte units, a
 * short test process's entries (bench/suite_test 1: 203 stacks of 11.7
 * frames) took 24,704 bytes, 7 pages touched; in 16-byte units 22,304, 6
 * pages (a 16-frame stack 144 bytes, was 160).  The segments are as they
 * were in 32-byte grains, two units (the ids' geometry: seg_of), so the
 * arena still ends at 4 GiB and its first segment is 64 KiB. */
#define UNIT 16
#define GRAIN MC_DEPOT_UNIT       /* the arena's segments count 32-byte grains */
#define SEG0_BITS MC_DEPOT_SEG0_BITS /* segment 0: [0, 2^11), 64 KiB */
#define NSEGS MC_DEPOT_NSEGS      /* segment k >= 1: [2^(10+k), 2^(11+k)) */
_Static_assert((1ull << (SEG0_BITS + NSEGS - 1)) - 1 == MC_STACK_ID_MAX,
	       "the last segment ends at the largest id a block entry holds");
_Static_assert(GRAIN == 2 * UNIT && sizeof(struct entry) % UNIT == 0, "a grain is two units");
_Static_assert(sizeof(struct entry) + MC_MAX_DEPTH * sizeof(uintptr_t) <= GRAIN << SEG0_BITS,
	       "an entry fits the smallest segment");

/* A segment's pages are counted as resident by this much: with two
 * arrays, half the 64 KiB the arena alone counted, so that a process of
 * a few stacks counts no more memory of memcheck's than it did. */
#define CHUNK (32 * 1024)

char *_Atomic mc_depot_segs[NSEGS];
struct mc_depot_id *_Atomic mc_depot_ids[NSEGS];
struct mc_site *_Atomic mc_depot_sites[NSEGS];
_Atomic uintptr_t mc_depot_id_bias[32], mc_depot_site_bias[32];
#define segs mc_depot_segs
#define ids mc_depot_ids
#define sites mc_depot_sites
struct mc_site mc_site_none;
bool mc_depot_with_sites;
static uint32_t used = 1;           /* units stored (unit 0 unused) */
static _Atomic uint32_t nids = 1;   /* ids handed out; id 0 means "no stack" */
/* Bytes of each array's last segment counted as resident. */
static size_t seg_counted, ids_counted, sites_counted;
static atomic_flag depot_lock = ATOMIC_FLAG_INIT;
static bool said_full;

#define seg_of mc_depot_seg_of
#define seg_base mc_depot_seg_base

static uint32_t seg_end(unsigned k)
{
	return 1u << (SEG0_BITS + k);
}

/* The arena's segment of a unit, and its first and end units. */
static inline unsigned unit_seg(uint32_t unit)
{
	return seg_of(unit / 2);
}

static inline uint32_t unit_base(unsigned k)
{
	return seg_base(k) * 2;
}

static inline uint32_t unit_end(unsigned k)
{
	return seg_end(k) * 2;
}

static struct entry *entry_at(uint32_t unit)
{
	unsigned k = unit_seg(unit);
	char *s = atomic_load_explicit(&segs[k], memory_order_acquire);
	return (struct entry *)(s + (size_t)(unit - unit_base(k)) * UNIT);
}

static struct entry *entry_of(uint32_t id)
{
	return entry_at(__atomic_load_n(&mc_depot_id_of(id)->unit, __ATOMIC_ACQUIRE));
}

/* The units of an entry of n frames. */
static uint32_t units_of(size_t n)
{
	return (uint32_t)((sizeof(struct entry) + n * sizeof(uintptr_t) + UNIT - 1) / UNIT);
}

/* ---- huge pages -------------------------------------------------------
 * On these guests the first store a process makes to a 4 KiB page costs
 * its hypervisor's fault even where MADV_POPULATE_WRITE has made the page
 * resident (measured, tree40: 16 MiB populated at ~4-5 us a page, then a
 * store a page 23-34 us a page at load 13, the second store 0.03-0.05;
 * the same range advised MADV_HUGEPAGE and granted huge pages: populated
 * at 0.26-0.28 us a page, its first stores 0.03): the populate does the
 * guest kernel's work, the first access the host's.  Where stacks are
 * many (tree_bench.c: ~90,000, 14 MiB of entries, 5.7 MiB of ids' lines,
 * an index of 4 MiB and the 4 MiB before it), that was a page's fault
 * every 25 new stacks in the arena, 64 in the ids, and every growth of
 * the index.  So a segment or an index table of HUGE bytes or more is
 * reserved HUGE-aligned, advised MADV_HUGEPAGE, and counted and
 * populated HUGE at a time: what is resident is what is counted whether
 * the kernel grants huge pages or not, and no partly counted huge page
 * is ever faulted in (khugepaged collapses no range without a present
 * page).  Smaller ones (a process of fewer than ~13,000 stacks) are as
 * before, 32 KiB at a time: their last chunk ahead stays small. */
#define HUGE ((size_t)2 << 20)

/* size bytes (a multiple of HUGE) reserved HUGE-aligned and advised for
 * huge pages: the reservation's first address there, or NULL.  (The
 * reservation's unaligned ends are never touched: address space only.)
 * Out of line, and placed with the code no default process runs
 * (text-order.ld's group 7): only a process of thousands of stacks
 * reaches it. */
static __attribute__((noinline)) char *depot_huge_reserve(size_t size)
{
	char *p = mc_map_reserve(size + HUGE);
	if (!p)
		return NULL;
	char *a = (char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	int saved = errno;
	(void)madvise(a, size, MADV_HUGEPAGE); /* a hint: EINVAL without THP */
	errno = saved;
	return a;
}

/* Segment k of an array of elements of elem bytes (the arena's grains,
 * the ids' or the sites' 32 bytes) mapped, and its first end elements
 * counted as resident, a chunk at a time (*counted: bytes of the last
 * segment counted); false when it cannot be mapped.  bias: the array's
 * bias table (mc_depot_elem), NULL for the arena's.  Under the lock. */
static __attribute__((noinline)) bool seg_grow(void *_Atomic *seg, unsigned k, uint32_t end,
					       size_t elem, size_t *counted,
					       _Atomic uintptr_t *bias)
{
	size_t size = (size_t)(seg_end(k) - seg_base(k)) * elem;
	if (!atomic_load_explicit(seg, memory_order_relaxed)) {
		void *s = size >= HUGE ? depot_huge_reserve(size) : mc_map_reserve(size);
		if (!s)
			return false;
		/* (before its ids are handed out) */
		for (unsigned bit = k ? SEG0_BITS - 1 + k : 0; bias && bit < SEG0_BITS + k; bit++)
			atomic_store_explicit(&bias[bit],
					      (uintptr_t)s - (uintptr_t)seg_base(k) * elem,
					      memory_order_release);
		atomic_store_explicit(seg, s, memory_order_release);
		*counted = 0;
	}
	/* The sites (an array of the ids' geometry, 32 bytes an id) grow
	 * with the ids' words, where they are counted: here, not in the
	 * inline test of every id taken (group 1t's room: ~110 bytes in
	 * each of intern's two callers).  A process that counts no sites
	 * (the defaults' text report) maps no page of them. */
	if (bias == mc_depot_id_bias && mc_depot_with_sites &&
	    !seg_grow((void *_Atomic *)&sites[k], k, end, sizeof **sites, &sites_counted,
		      mc_depot_site_bias))
		return false;
	for (size_t need = (size_t)(end - seg_base(k)) * elem; *counted < need;) {
		/* As far again as the segment has been counted, a page at
		 * least, CHUNK at most: a short process's few dozen stacks
		 * take a page of lines and one or two of frames, where a
		 * first CHUNK was 8 pages of each (16 populated pages, ~19
		 * us here, in every process that stores a stack). */
		/* After the first page, three more (4 in all, where it was
		 * 1, 1, 2, 4 a call each): a short test's 200 stacks take
		 * 7 pages of lines and 4 of ids, counted in 3 and 2 calls
		 * (4 and 3 before), as many pages; a process of a few dozen
		 * stacks still takes one page of each. */
		/* (The arrays by id, 32 bytes an id, fill at half the
		 * rate the 64-byte lines did: a page, one more, then as
		 * far again, mc_ahead's: suite_test 1's 203 stacks take 2
		 * pages of each, counted in 2 calls.) */
		size_t chunk = size >= HUGE ? HUGE :
			       *counted == 4096 && !bias ? 3 * 4096 :
			       mc_ahead(*counted, CHUNK);
		if (chunk > size - *counted)
			chunk = size - *counted;
		mc_own_grow((int64_t)chunk);
		/* Resident as it is counted: one system call for the chunk's
		 * pages (~1 us a page here), where the first stacks' writes
		 * were a page fault each (15-35 us); their first stores still
		 * take the hypervisor's fault, which only huge pages spare
		 * (above) */
		mc_populate((char *)atomic_load_explicit(seg, memory_order_relaxed) + *counted,
			    chunk);
		*counted += chunk;
	}
	return true;
}

/* seg_grow's test, inline: nearly every stack stored fits the pages
 * counted already (a call and its frame were ~40 instructions of each
 * stack a short process stores, twice: the arena's and the ids'). */
static inline bool seg_ready(void *_Atomic *seg, unsigned k, uint32_t end, size_t elem,
			     size_t *counted, _Atomic uintptr_t *bias)
{
	if (likely(atomic_load_explicit(seg, memory_order_relaxed) != NULL &&
		   *counted >= (size_t)(end - seg_base(k)) * elem))
		return true;
	return seg_grow(seg, k, end, elem, counted, bias);
}

/* Room for units more units in the arena: their first unit, or 0.  Under
 * the lock.  A segment's rest that an entry does not fit stays unused. */
static inline __attribute__((always_inline)) uint32_t take(uint32_t units)
{
	unsigned k = unit_seg(used);
	uint32_t from = used;
	if (from + units > unit_end(k)) {
		if (++k == NSEGS)
			return 0;
		from = unit_base(k);
	}
	/* (the grains its units reach, a unit base being a grain's) */
	if (!seg_ready((void *_Atomic *)&segs[k], k, (from + units + 1) / 2, GRAIN, &seg_counted,
		       NULL))
		return 0;
	used = from + units;
	return from;
}

/* The next id, its words mapped, and its site where sites are counted
 * (seg_grow maps the sites with the ids' words, of the same geometry):
 * the id, or 0.  Under the lock. */
static inline __attribute__((always_inline)) uint32_t take_id(void)
{
	uint32_t id = atomic_load_explicit(&nids, memory_order_relaxed);
	if (id > MC_STACK_ID_MAX)
		return 0;
	unsigned k = seg_of(id);
	if (!seg_ready((void *_Atomic *)&ids[k], k, id + 1, sizeof **ids, &ids_counted,
		       mc_depot_id_bias))
		return 0;
	return id;
}

/* Sites counted from now on (snapshot.c, at start-up): the sites of the
 * ids handed out so far mapped too (none, mostly), so that every stored
 * stack has its site.  False where they cannot be mapped. */
bool mc_depot_sites_on(void)
{
	bool ok = true;
	mc_depot_lock();
	uint32_t n = atomic_load_explicit(&nids, memory_order_relaxed);
	for (unsigned k = 0; ok && k < NSEGS && seg_base(k) < n; k++)
		ok = seg_ready((void *_Atomic *)&sites[k], k, n < seg_end(k) ? n : seg_end(k),
			       sizeof **sites, &sites_counted, mc_depot_site_bias);
	mc_depot_with_sites = ok;
	mc_depot_unlock();
	return ok;
}

/* ---- the index ------------------------------------------------------------
 * Every stored stack has a slot here under its hash (1 for a hash of 0:
 * a key of 0 is an empty slot), its walked mark 0 until stacks.c marks
 * it.  Two lookups read it:
 *  - by frames (lookup, for mc_depot_intern): each slot of the key is a
 *    candidate, compared frame by frame with its entry, so stacks whose
 *    hashes collide are both stored and both found;
 *  - by hash alone (idx_find, for mc_depot_known): a stack whose capture
 *    stacks.c can repeat from its frame-pointer walk alone (its walked
 *    mark: capture_known) is named by one 16-byte slot, where the frames'
 *    lookup reads the entry too: where stacks are many (a parser's 90,000
 *    paths, 17 MiB of entries) that is a cache and TLB miss a capture
 *    instead of three or four.  A 64-bit hash match is taken as the stack,
 *    as the threads' caches take it (stacks.c): a false match needs a
 *    collision among the stacks of one process.  A stack marked
 *    WALKED_FP is named by its own slot; one marked WALKED_RUN by a slot
 *    of its own key besides (stacks.c: the walk's hash with the run's).
 * Open addressing, insert only, under the depot's lock; a slot's value
 * (id, mark) is written before its key, so a reader that sees the key
 * sees the value, and a mark is set by storing the whole value again.
 * Doubled when half full (by fours it took 16 MiB for 90,000 stacks, no
 * faster), a table of up to 1,024 slots (16 KiB, IDX_DENSE_BITS) when
 * three quarters full (below); it may grow until it holds as many slots
 * as two for every id (IDX_MAX_BITS), so it never fills before the ids do: a stack it cannot
 * take (no memory for a larger table) is not stored, as where the depot
 * is full, since a stack stored but not indexed would be stored again at
 * every capture.  Old tables stay mapped for readers still in them, and
 * are memcheck's own memory (mc_map), as the depot's is.  The first has
 * 256 slots on one page, its header in .bss (idx_tables), the page just
 * before the arena's segment 0 (idx_first_table): 1,024 slots
 * and their header were five pages, populated in every process that
 * stores a stack, where /bin/date stores a few dozen.
 *
 * A short test process fills a small table: bench/suite_test 1 stores
 * 203 stacks in 300 slots (97 stacks marked WALKED_RUN take a second),
 * which at half full took the 1,024-slot table (the second was 1,024
 * slots, then doubled): 4 populated pages of its 17 depot pages (gdb at
 * its _exit).  A table small enough to sit in the first-level cache
 * costs a longer probe in instructions alone, so one of up to 1,024
 * slots is filled to three quarters, and each is doubled: 300 slots take
 * the first page and 512 slots (3 pages, were 5), up to 191 the first
 * page alone (129 to 191 took 5); 385 to 512 slots populate 256, 512 and
 * 1,024 slots, the 512 given back (7 pages populated, 5 kept, where they
 * took 5); 513 to 767 the same 7 where they took 13 (the 2,048-slot
 * table).  callgrind, bench/suite_test 1: the index's instructions +~5 K
 * (longer probes, a rehash of 191 slots) of the process's 746 K. */
#define IDX_DENSE_BITS 10
/* A slot's value: the id and its walked mark. */
static inline uint64_t idx_val(uint32_t id, int walked)
{
	return id | (uint64_t)walked << 32;
}

struct walked_index {
	struct idx_slot *s;     /* mapped; the header in idx_tables */
	uint32_t left;          /* slots it takes before it is doubled (idx_holds) */
	unsigned bits;
};
#define IDX_MIN_BITS 8 /* 256 x 16 bytes: one page */
#define IDX_MAX_BITS 29
_Static_assert((sizeof(struct idx_slot) << IDX_MIN_BITS) == 4096, "the first index is one page");
/* One header a size, 16 bytes each among the small variables: they had
 * 648 bytes to spare on their last page (lib/bss-layout.sh). */
static struct walked_index idx_tables[IDX_MAX_BITS - IDX_MIN_BITS + 1];
_Static_assert((3ull << IDX_MAX_BITS) / 4 > 2ull * MC_STACK_ID_MAX,
	       "the index takes two slots for every id");
static _Atomic(struct walked_index *) windex;
/* Where the index has more slots than this, a lookup reads the then
 * first (mc_depot_then_first); below, the index alone. */
#define IDX_THEN_BITS 12
_Atomic bool mc_depot_then_first;

/* A key in the index: the hash, or 1 for 0. */
static inline uint64_t idx_key(uint64_t h)
{
	return h ? h : 1;
}

/* key/val in the first empty slot of key's probe (after any of the same
 * key).  Under the lock, with room (idx_room).  Inline: a new stack puts
 * one or two, each a call and its setup around a few instructions
 * (callgrind, nv build, warm: suite_test 1 mc_stack_capture 234.7 K ->
 * 232.9 K, tree_bench 20000 14.34 M -> 14.25 M). */
static inline __attribute__((always_inline)) void idx_put(struct walked_index *t, uint64_t key,
							   uint64_t val)
{
	size_t mask = ((size_t)1 << t->bits) - 1;
	for (size_t i = (size_t)(key >> (64 - t->bits));; i = (i + 1) & mask) {
		if (!atomic_load_explicit(&t->s[i].key, memory_order_relaxed)) {
			atomic_store_explicit(&t->s[i].val, val, memory_order_relaxed);
			atomic_store_explicit(&t->s[i].key, key, memory_order_release);
			t->left--;
			return;
		}
	}
}

/* The first table's page, with the arena's segment 0 right after it in
 * one reservation: its slots and the arena's first page (the first
 * stack stored writes both, at once) populated and counted in one call,
 * where the table was a mapping of its own (an mmap with MAP_POPULATE)
 * and the page a madvise.  NULL where the arena has its segment 0
 * already (a first table that could not be mapped before): the caller
 * maps one.  Under the lock. */
static struct idx_slot *idx_first_table(void)
{
	if (atomic_load_explicit(&segs[0], memory_order_relaxed))
		return NULL;
	size_t seg = (size_t)seg_end(0) * GRAIN;
	char *p = mc_map_reserve(4096 + seg);
	if (!p)
		return NULL;
	mc_own_grow(2 * 4096);
	mc_populate(p, 2 * 4096);
	seg_counted = 4096; /* seg_grow's first chunk (mc_ahead: a page) */
	atomic_store_explicit(&segs[0], p + 4096, memory_order_release);
	return (struct idx_slot *)p;
}

/* Table t, replaced by a larger one: its pages given back.  They were
 * kept resident, and the tables before the newest sum to it: on
 * yaml-cpp's gtest binary (171,000 stacks, a 16 MiB index) 16 MiB more
 * of memcheck's own memory, a fifth of it.  A reader without the lock
 * may still be in t: it reads zeros there, an empty slot, which is the
 * miss a lookup that races the growth already allows (the insert looks
 * again under the lock, in the newest table); every write is under the
 * lock, into the newest.  Premise: MADV_DONTNEED on private anonymous
 * memory leaves it mapped, reading as zeros.  The first table's page
 * shares the arena's reservation: kept.  Under the lock. */
static void idx_drop(const struct walked_index *t)
{
	if (!t || t->bits <= IDX_MIN_BITS)
		return;
	size_t len = ((size_t)1 << t->bits) * sizeof t->s[0];
	int saved = errno;
	if (madvise(t->s, len, MADV_DONTNEED) == 0)
		mc_own_grow(-(int64_t)len);
	errno = saved;
}

/* An index table of len bytes (HUGE or more) in huge pages, counted and
 * populated as mc_map's: memcheck's resident memory.  Group 7, as
 * depot_huge_reserve. */
static __attribute__((noinline)) struct idx_slot *idx_huge_table(size_t len)
{
	struct idx_slot *s = (struct idx_slot *)depot_huge_reserve(len);
	if (s) {
		mc_own_grow((int64_t)len);
		mc_populate(s, len);
	} else {
		s = mc_map(len);
	}
	return s;
}

/* The most slots a table of 2^bits ever holds: three quarters less one
 * (a probe always meets an empty slot). */
static uint32_t idx_cap(unsigned bits)
{
	return (uint32_t)(((size_t)1 << bits) / 4 * 3 - 1);
}

/* The slots a table of 2^bits holds before it is doubled: half, all it
 * may in a small one (IDX_DENSE_BITS: in cache, a longer probe is a few
 * instructions). */
static uint32_t idx_holds(unsigned bits)
{
	return bits <= IDX_DENSE_BITS ? idx_cap(bits) : (uint32_t)1 << (bits - 1);
}

/* The table let fill past idx_holds, to idx_cap, as it could not be
 * doubled (its bits; 0: none). */
static unsigned idx_capped;

/* The index with room for one slot more, doubled if it took what it
 * holds (idx_holds: its left 0, or no table yet); NULL where it has none
 * (full, and a larger table cannot be mapped).  Under the lock.  A table
 * counts the slots it has left (idx_room's test a load and a branch,
 * inline in four places, where a compare with its size took a shift and
 * the dense table's branch besides: group 1t's room). */
static __attribute__((noinline)) struct walked_index *idx_grow(void)
{
	struct walked_index *t = atomic_load_explicit(&windex, memory_order_relaxed);
	if (!t || t->bits < IDX_MAX_BITS) {
		unsigned bits = !t ? IDX_MIN_BITS : t->bits + 1;
		struct walked_index *n = &idx_tables[bits - IDX_MIN_BITS];
		size_t len = ((size_t)1 << bits) * sizeof n->s[0];
		n->s = t ? NULL : idx_first_table();
		if (!n->s)
			n->s = len >= HUGE ? idx_huge_table(len) : mc_map(len);
		if (n->s) {
			n->bits = bits;
			n->left = idx_holds(bits); /* less the slots put back */
			for (size_t i = 0; t && i < (size_t)1 << t->bits; i++) {
				uint64_t k = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);
				if (k)
					idx_put(n, k, atomic_load_explicit(&t->s[i].val,
									   memory_order_relaxed));
			}
			atomic_store_explicit(&windex, n, memory_order_release);
			idx_drop(t);
			t = n;
			if (bits > IDX_THEN_BITS)
				atomic_store_explicit(&mc_depot_then_first, true,
						      memory_order_relaxed);
			return t;
		}
	}
	if (t && t->bits != idx_capped) {
		idx_capped = t->bits;
		t->left = idx_cap(t->bits) - idx_holds(t->bits);
	}
	return t && t->left ? t : NULL;
}

/* idx_grow's test, inline: a table with a slot left has room. */
static inline struct walked_index *idx_room(void)
{
	struct walked_index *t = atomic_load_explicit(&windex, memory_order_relaxed);
	if (likely(t != NULL && t->left))
		return t;
	return idx_grow();
}

/* ---- the young index ------------------------------------------------------
 * A forking program pays for every page it writes between forks: fork
 * write-protects them all, and the parent's next store to each is a
 * copy-on-write fault (~4-6 us here).  A new stack's slot lies at its
 * hash's place in the index, on any page of it: libssh's torture_config
 * (4,325 stacks, an index of 2^14 slots, 64 pages; 14 forks) took 195 of
 * mc_depot_intern's faults at that one store, a page a new stack.  So
 * once the process has forked (young_armed) and the index is larger
 * than a dense one (IDX_DENSE_BITS: 4 pages at most, which a process
 * writes all of soon enough), new stacks' slots go to a young table of
 * 1,024 slots (YOUNG_BITS: 16 KiB, 4 pages), and only when it has taken
 * what it holds (idx_holds: 767) are they merged into the index, all at
 * once, under the lock: between two forks the parent writes those 4
 * pages, where it wrote a page of the index a new stack
 * (plain_fork_faults stacks: 48-53 faults of memcheck's a fork -> 14-17;
 * doc/costs.md, fork57).  (One page of 256 slots: 22 a fork, each
 * merge, every 191 slots, ~120 of the index's pages.)  A merged young
 * table is given back (MADV_DONTNEED) and never reused: the next comes
 * from a reservation of 64, so a lookup without the lock that is still
 * in the old one reads its slots or zeros (a miss, which a lookup
 * without the lock may have: see the head), never a slot written again
 * with another stack's key and value.  Lookups ask the index first,
 * then the young table (a stack found in the index costs nothing more;
 * a miss a test, and one more probe where there is a young table); the
 * merge puts the young slots into the index before the readers are
 * given the next table. */
#define YOUNG_BITS IDX_DENSE_BITS
#define YOUNG_BYTES (sizeof(struct idx_slot) << YOUNG_BITS)
#define YOUNG_RESERVE (64 * YOUNG_BYTES)
static struct {
	_Atomic(struct idx_slot *) s;   /* the readers' young table; NULL: none */
	struct walked_index t;          /* the writers' (under the lock): s, left */
	char *next, *end;               /* the reservation's pages not used yet */
	bool off;                       /* no page could be mapped: the index alone */
} young;

/* Is there a young table?  The lookups' inline test: what they do there
 * is out of line (young_lookup, young_find, in .text.mc_last), as a
 * process that does not fork or stores few stacks never has one. */
static inline bool young_there(void)
{
	return unlikely(atomic_load_explicit(&young.s, memory_order_relaxed) != NULL);
}

/* The young table, for the lookups. */
static inline struct walked_index young_now(void)
{
	return (struct walked_index){ atomic_load_explicit(&young.s, memory_order_acquire), 0,
				      YOUNG_BITS };
}

/* A fresh young table's slots, populated and counted; NULL where none
 * can be mapped.  Under the lock. */
static struct idx_slot *young_page(void)
{
	if (young.next == young.end) {
		young.next = mc_map_reserve(YOUNG_RESERVE);
		if (!young.next)
			return NULL;
		young.end = young.next + YOUNG_RESERVE;
	}
	struct idx_slot *p = (struct idx_slot *)young.next;
	young.next += YOUNG_BYTES;
	mc_own_grow(YOUNG_BYTES);
	mc_populate(p, YOUNG_BYTES);
	return p;
}

/* The young table's slots merged into the index, and a fresh table for
 * the readers and the writers (see above); the table a new slot goes to
 * (the index itself where none could be mapped), NULL where neither
 * has room.  Under the lock. */
static __attribute__((noinline)) struct walked_index *young_merge(void)
{
	struct idx_slot *old = young.t.s;
	for (size_t i = 0; old && i < (size_t)1 << YOUNG_BITS; i++) {
		uint64_t k = atomic_load_explicit(&old[i].key, memory_order_relaxed);
		struct walked_index *t;
		if (k && !(t = idx_room()))
			return NULL; /* (the rest stay young, the young table full) */
		if (k)
			idx_put(t, k, atomic_load_explicit(&old[i].val, memory_order_relaxed));
	}
	struct idx_slot *n = young.off ? NULL : young_page();
	young.off = !n;
	atomic_store_explicit(&young.s, n, memory_order_release);
	young.t = (struct walked_index){ n, n ? idx_holds(YOUNG_BITS) : 0, YOUNG_BITS };
	if (old) {
		int saved = errno;
		if (madvise(old, YOUNG_BYTES, MADV_DONTNEED) == 0)
			mc_own_grow(-(int64_t)YOUNG_BYTES);
		errno = saved;
	}
	return n ? &young.t : idx_room();
}

/* put_room's young table, out of line (.text.mc_last): t is the index,
 * with room, larger than a dense one, and the process has forked. */
static __attribute__((noinline)) struct walked_index *young_room(struct walked_index *t)
{
	if (young.off)
		return t;
	return young.t.left ? &young.t : young_merge();
}

/* Whether the process has forked (mc_depot_prefork): only then do new
 * stacks go to the young table.  A process that never forks has no
 * page to keep from copies, and there the young table costs: callgrind,
 * bench/tree_bench (tens of thousands of stacks), +62 instructions a
 * step (its probes, filled to three quarters, on every new stack's
 * lookups and store, and the merges' scans), where unarmed +7 (923.8
 * -> 930.6: the inline tests).
 * On the fork's page of small variables (lib/bss-layout.sh FORK):
 * written once, at the first fork. */
static bool young_armed;

void mc_depot_prefork(void)
{
	if (!young_armed)
		young_armed = true;
}

/* The table a new stack's slot goes to, with room for it: the index
 * while it is a dense one, the process has not forked or no young table
 * can be mapped, else the young table, merged first where it is full;
 * NULL where none has room.  Under the lock. */
static inline struct walked_index *put_room(void)
{
	struct walked_index *t = idx_room();
	if (likely(!t || t->bits <= IDX_DENSE_BITS || !young_armed))
		return t;
	return young_room(t);
}

/* A stack is stored without the return addresses in libmemcheck's own
 * code: there is one only where memcheck called the C library and the C
 * library allocated (the program's pthread_create, through
 * threadstart.c's wrapper, allocates the new thread's DTV in ld.so:
 * tests/prog/plain_dtv_running), and where a program's signal
 * handler allocates under signals.c's trampoline
 * (tests/prog/plain_leak_altstack none).  Bare, and under
 * valgrind, no such frame lies between the C library and the program,
 * and a user's suppression that names the frames as valgrind shows
 * them (fun:pthread_create@@GLIBC_2.34, then fun:main) missed the
 * stack.  The stack keeps the hash of the walk that found it, so that
 * the walk finds it again: the index's lookup compares its frames with
 * the walk's as bare's (bare_eq) where they differ in depth alone.
 * f's frames into out, those in libmemcheck's code left out; how many
 * (no range, mc_text_len 0, where libmemcheck.a is linked into the
 * program: its frames are the program's there).  Run only where the
 * thread is inside such a call (mc_self.own_frames: threadstart.c,
 * signals.c),
 * out of line (group 7): a compare a frame of every stack stored was
 * +9.2 M instructions of tree_bench 200000's 282 M (callgrind: each
 * stack looked up or stored); this way +0.4 M (doc/costs.md). */
static __attribute__((noinline)) int frames_as_bare(uintptr_t *out, const uintptr_t *f, int n)
{
	uintptr_t lo = mc_text_lo, len = mc_text_len;
	int m = 0;
	for (int i = 0; i < n; i++)
		if (f[i] - lo >= len)
			out[m++] = f[i];
	return m;
}

/* Are the d frames e the n frames f less those in libmemcheck's own
 * code (d < n: a stored stack's, whose walk was f)?  Asked where an
 * index key matched and the depth did not: rare, out of line (group 7). */
static __attribute__((noinline)) bool bare_eq(const uintptr_t *e, uint32_t d,
					      const uintptr_t *f, int n)
{
	uint32_t k = 0;
	for (int i = 0; i < n; i++)
		if (f[i] - mc_text_lo >= mc_text_len && (k >= d || e[k++] != f[i]))
			return false;
	return k == d;
}

/* The stored stack of the n frames f, whose index key is key, in table
 * t, from its probe's slot i: each slot of the key is a candidate, its
 * entry compared. */
static __attribute__((noinline)) uint32_t lookup_from(const struct walked_index *t, size_t i,
						      uint64_t key, const uintptr_t *f, int n)
{
	size_t mask = ((size_t)1 << t->bits) - 1;
	for (;; i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&t->s[i].key, memory_order_acquire);
		if (!k)
			return 0;
		if (k != key)
			continue;
		uint32_t id = (uint32_t)atomic_load_explicit(&t->s[i].val, memory_order_relaxed);
		struct entry *e = entry_of(id);
		if (idx_key(e->hash) != key)
			continue;
		if (e->depth == (uint32_t)n ? mc_words_eq(e->frames, f, (size_t)n) :
		    e->depth < (uint32_t)n && bare_eq(e->frames, e->depth, f, n))
			return id;
	}
}

/* lookup_from's first slot, inline: a new stack's probe mostly starts at
 * an empty slot (the index is at most half full, a small one three
 * quarters), and its lookups, one
 * or two a stack stored, then cost no call (~35 instructions each). */
static inline uint32_t lookup(const struct walked_index *t, uint64_t key, const uintptr_t *f,
			      int n)
{
	if (!t)
		return 0;
	size_t i = (size_t)(key >> (64 - t->bits));
	if (!atomic_load_explicit(&t->s[i].key, memory_order_acquire))
		return 0;
	return lookup_from(t, i, key, f, n);
}

/* lookup in the young table (young_there), out of line. */
static __attribute__((noinline)) uint32_t young_lookup(uint64_t key, const uintptr_t *f, int n)
{
	struct walked_index y = young_now();
	return y.s ? lookup(&y, key, f, n) : 0;
}

/* lookup in the index t, then in the young table. */
static inline uint32_t lookup_all(const struct walked_index *t, uint64_t key,
				  const uintptr_t *f, int n)
{
	uint32_t id = lookup(t, key, f, n);
	if (!id && young_there())
		id = young_lookup(key, f, n);
	return id;
}

/* The stack a slot of key h names in table t, and its walked mark;
 * 0 where none. */
static inline __attribute__((always_inline)) uint32_t idx_find_in(const struct walked_index *t,
								  uint64_t h, int *walked)
{
	size_t mask = ((size_t)1 << t->bits) - 1;
	for (size_t i = (size_t)(h >> (64 - t->bits));; i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&t->s[i].key, memory_order_acquire);
		if (k == h) {
			uint64_t v = atomic_load_explicit(&t->s[i].val, memory_order_relaxed);
			*walked = (int)(v >> 32 & 3);
			return (uint32_t)v;
		}
		if (!k)
			return 0;
	}
}

/* idx_find_in in the young table (young_there), out of line. */
static __attribute__((noinline)) uint32_t young_find(uint64_t h, int *walked)
{
	struct walked_index y = young_now();
	return y.s ? idx_find_in(&y, h, walked) : 0;
}

/* idx_find_in in the index, then in the young table. */
static uint32_t idx_find(uint64_t h, int *walked)
{
	struct walked_index *t = atomic_load_explicit(&windex, memory_order_acquire);
	if (!t)
		return 0;
	uint32_t id = idx_find_in(t, h, walked);
	if (!id && young_there())
		id = young_find(h, walked);
	return id;
}

/* ---- what came next ------------------------------------------------------
 * Where a thread's cache loses its stacks (the parser of tree_bench.c:
 * 90,000 paths, each seen again 600,000 allocations later), the index
 * lookup above is the capture's cost: a cache and TLB miss in a table of
 * megabytes (perf: a quarter of tree_bench's time, 150 ns a lookup).  But
 * what a program does once, it does again in the same order (the same
 * document parsed, the same test run): the stack a thread looked up
 * after stack A last time is the likeliest one now.  So each stack keeps
 * the last THEN stacks looked up after it (stacks.c's me.prev: the
 * thread's previous lookup, not every capture, so the thread's cache
 * hits between them do not count), newest first, and a lookup after A
 * reads A's first, in A's words of the array by id, which the prefetch
 * below brought, or the lookup of A itself read (A's then entry in the
 * stack before it), where the index is a cache miss.  With one stack kept, 58% of
 * tree_bench's lookups were found there; with two, 83% (one stack A is
 * followed by several, a list's members by its next member or its end).
 * (They were kept in the entry's head, with the site, before sites
 * moved to the array by id: finding the head from an id then cost a
 * load of the id's line, which missed where the prefetch of the head had
 * not, and 6% of tree_bench's samples.)
 *
 * A then entry is one word: the stack's id, its walked mark and the top
 * half of its key, which picks the candidate; the candidate's own words
 * hold the low half of the key it was marked under (key_of), and only
 * both halves matching name it: the 64-bit key taken as the stack, as
 * the index takes it.  So three fit in A's 32 bytes beside its key's
 * half and its entry's unit, where two entries of key and value filled a
 * line: on tree_bench (5 M blocks) 416,000 -> 178,000 lookups in the
 * index.  (Four entries of two words, the line doubled to 128 bytes:
 * 94,000, but twice the lines, and no faster.)  A word is written
 * whole, so a reader never pairs one writer's key with another's id; an
 * entry that names a stack whose key is another (written over, or a
 * stack marked under two keys, whose words keep the last) fails the
 * compare, and the index answers, unless the two keys of one stack
 * share their low half and the entry's top half is the lookup's (2^-32
 * of a stack marked under two keys): then the entry's id is still the
 * stack's, only its walked mark may be the other key's, which
 * capture_known checks against the one it wants.
 *
 * These words were a line of 64 bytes with the stack's site (struct
 * mc_site) until session 58: the defaults' text report counts no site,
 * so half of every line a lookup brought in was never read, and the
 * stacks a parser takes one after another, stored one after another,
 * now share lines (doc/costs.md, depot58). */
static inline uint64_t then_entry(uint32_t id, int walked, uint64_t key)
{
	_Static_assert(MC_STACK_ID_MAX < 1u << 27, "an id, its mark, then the key's top half");
	return (key & ~0xffffffffull) | (uint64_t)walked << 27 | id;
}

/* e first in then, the entries before slot from (where e was, or the
 * last, which a new entry drops) one slot down.  Only where the then is
 * read (mc_depot_then_first: an index of more than 2^IDX_THEN_BITS
 * slots): below that nothing reads it, and each write was a line of the
 * depot's loaded and dirtied for nothing (wren's test process: 7,009
 * captures, 1,266 stacks, an index of 4,096 slots; ~4,300 writes, 54 K
 * instructions and 2,600 first-level read misses of the process's
 * 43,000, callgrind; doc/costs.md, wren57).  Once the index passes
 * that size the thens fill as the index answers lookups (known_index
 * puts what it finds), so the first lookup after each stack past that
 * point asks the index, as a then that does not know the next stack
 * does anyway. */
static void then_put(_Atomic uint64_t *then, uint64_t e, int from)
{
	if (!atomic_load_explicit(&mc_depot_then_first, memory_order_relaxed) ||
	    atomic_load_explicit(&then[0], memory_order_relaxed) == e)
		return; /* (a store would dirty a line other threads read) */
	/* e where it is already (found by the index, which answers where
	 * the then did not), not twice */
	for (int i = 1; i < from; i++)
		if (atomic_load_explicit(&then[i], memory_order_relaxed) == e)
			from = i;
	for (int i = from; i > 0; i--)
		atomic_store_explicit(&then[i],
				      atomic_load_explicit(&then[i - 1], memory_order_relaxed),
				      memory_order_relaxed);
	atomic_store_explicit(&then[0], e, memory_order_release);
}

/* id's line, with its site and its then, as the block table (a new
 * block's site) and the next lookup read it. */
static inline void then_prefetch(uint32_t id)
{
	__builtin_prefetch(mc_depot_id_of(id));
}

uint32_t mc_depot_known_index(uint64_t h, uint32_t after, int *walked)
{
	if (!h)
		return 0; /* (not indexed, and no stack's key) */
	uint32_t id = idx_find(h, walked);
	_Atomic uint64_t *a = after ? then_of(after) : NULL;
	if (id) {
		if (a && *walked)
			then_put(a, then_entry(id, *walked, h), THEN - 1);
		then_prefetch(id);
	}
	return id;
}

uint32_t mc_depot_known(uint64_t h, uint32_t after, int *walked)
{
	if (!h)
		return 0; /* (not indexed, and no stack's key) */
	_Static_assert(THEN == 3 && MC_STACK_ID_MAX == 0x7ffffff, "mc_depot_then_find's then");
	uint64_t e = after && atomic_load_explicit(&mc_depot_then_first, memory_order_relaxed)
		     ? mc_depot_then_find(h, after) : 0;
	if (e) {
		*walked = (int)(e >> 27 & 3);
		return (uint32_t)e & MC_STACK_ID_MAX;
	}
	return mc_depot_known_index(h, after, walked);
}

/* Stack id's slot of key h in table t marked walked; false where t has
 * none.  Under the lock. */
static inline __attribute__((always_inline)) bool mark_in(struct walked_index *t, uint32_t id,
							   uint64_t h, int walked)
{
	size_t mask = ((size_t)1 << t->bits) - 1;
	for (size_t i = (size_t)(h >> (64 - t->bits));; i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);
		if (!k)
			return false;
		uint64_t v = atomic_load_explicit(&t->s[i].val, memory_order_relaxed);
		if (k == h && (uint32_t)v == id) {
			if ((int)(v >> 32 & 3) != walked)
				atomic_store_explicit(&t->s[i].val, idx_val(id, walked),
						      memory_order_release);
			return true;
		}
	}
}

/* mark_in the young table, out of line (.text.mc_last).  Under the lock. */
static __attribute__((noinline)) bool young_mark(uint32_t id, uint64_t h, int walked)
{
	return mark_in(&young.t, id, h, walked);
}

/* Mark stack id walked under key h: its own slot where h is its key
 * (WALKED_FP), else a slot of h's (WALKED_RUN), if the index has room. */
void mc_depot_set_walked(uint32_t id, uint64_t h, int walked, uint32_t after)
{
	if (!id || !h)
		return;
	if (atomic_load_explicit(&key_of(id), memory_order_relaxed) != (uint32_t)h)
		atomic_store_explicit(&key_of(id), (uint32_t)h, memory_order_release);
	if (after)
		then_put(then_of(after), then_entry(id, walked, h), THEN - 1);
	mc_depot_lock();
	struct walked_index *t = atomic_load_explicit(&windex, memory_order_relaxed);
	if (t && !mark_in(t, id, h, walked) && !(young.t.s && young_mark(id, h, walked)) &&
	    (t = put_room()) != NULL)
		idx_put(t, h, idx_val(id, walked));
	mc_depot_unlock();
}

/* Looked up by its frames, without the lock, then again under it, in the
 * newest table: a lookup that raced the table's growth may have missed
 * the stack.  A new stack's lookup reads only the slots of its probe.
 * absent: the caller has just found no slot of h (mc_depot_known), so
 * the first lookup is not made.  A new stack is marked walked under
 * wkey (0: not marked) as mc_depot_set_walked marks it, under the same
 * lock: its own slot put with the mark, or a slot of wkey's besides
 * (the mark on a stack stored the moment before was a second lock and
 * a second probe of the index, ~90 instructions of each new stack);
 * *fresh says it was.  Inlined in its two callers, with take and
 * take_id (which gcc otherwise moves out of line once intern is in two
 * places): callgrind, bench/suite_test 1, mc_stack_capture 252.3 K ->
 * 247.4 K, ~25 instructions of each new stack (the calls, and the
 * branches on what each caller knows: absent, wkey, walked). */
static inline __attribute__((always_inline)) uint32_t intern(uint64_t h, const uintptr_t *f, int n, bool absent, uint64_t wkey,
		       int walked, bool *fresh)
{
	*fresh = false;
	if (n <= 0)
		return 0;
	uint64_t key = idx_key(h);
	uint32_t id = absent ? 0 : lookup_all(atomic_load_explicit(&windex, memory_order_acquire),
					      key, f, n);
	if (id)
		return id;
	mc_depot_lock();
	struct walked_index *t = put_room();
	id = lookup_all(atomic_load_explicit(&windex, memory_order_relaxed), key, f, n);
	if (!id && t) {
		uint32_t unit = take(units_of((size_t)n));
		id = unit ? take_id() : 0;
		if (id) {
			struct entry *e = entry_at(unit);
			e->hash = h;
			e->depth = (uint32_t)n;
			if (unlikely(mc_self.own_frames))
				e->depth = (uint32_t)frames_as_bare(e->frames, f, n);
			else
				memcpy(e->frames, f, (size_t)n * sizeof *f);
			/* the site's unit, then the id, then the slot: a reader
			 * that finds the slot finds the entry */
			__atomic_store_n(&mc_depot_id_of(id)->unit, unit, __ATOMIC_RELEASE);
			atomic_store_explicit(&nids, id + 1, memory_order_release);
			if (wkey)
				atomic_store_explicit(&key_of(id), (uint32_t)wkey,
						      memory_order_release);
			idx_put(t, key, idx_val(id, wkey == key ? walked : 0));
			if (wkey && wkey != key && (t = put_room()) != NULL)
				idx_put(t, wkey, idx_val(id, walked));
			*fresh = true;
		}
	}
	bool say = !id && !said_full;
	said_full |= say;
	mc_depot_unlock();
	if (say)
		mc_log("the stack depot is full or cannot be mapped: stacks stored from now "
		       "on are empty");
	return id;
}

uint32_t mc_depot_intern(uint64_t h, const uintptr_t *f, int n)
{
	bool fresh;
	return intern(h, f, n, false, 0, 0, &fresh);
}

uint32_t mc_depot_intern_walked(uint64_t h, const uintptr_t *f, int n, bool absent,
				uint64_t wkey, int walked, uint32_t after)
{
	bool fresh;
	uint32_t id = intern(h, f, n, absent, wkey, walked, &fresh);
	if (!fresh)
		mc_depot_set_walked(id, wkey, walked, after);
	else if (after && wkey)
		then_put(then_of(after), then_entry(id, walked, wkey), THEN - 1);
	return id;
}

/* Every stored stack, in the order stored, under
 * the lock: an entry being written is not met half done.  fn must not
 * store stacks.  Its site, where sites are counted; else mc_site_none's
 * zeros (no site array is mapped). */
void mc_depot_each(void (*fn)(uint32_t id, struct mc_site *site, void *arg), void *arg)
{
	mc_depot_lock();
	for (uint32_t id = 1, n = atomic_load_explicit(&nids, memory_order_relaxed); id < n; id++)
		fn(id, mc_depot_with_sites ? mc_site_of(id) : &mc_site_none, arg);
	mc_depot_unlock();
}

uint32_t mc_depot_next_id(void)
{
	return atomic_load_explicit(&nids, memory_order_acquire);
}

int mc_stack_get(uint32_t id, const uintptr_t **frames)
{
	if (!id || id >= atomic_load_explicit(&nids, memory_order_acquire)) {
		*frames = NULL;
		return 0;
	}
	struct entry *e = entry_of(id);
	*frames = e->frames;
	return (int)e->depth;
}

/* The code segments mc_stack_get_code found, kept across its calls: a
 * report checks the stacks of all its records one after another, mostly
 * through the same few objects, and a walk of the loaded objects costs
 * ~400 instructions (a leaking /bin/date's exit made ~190 of them: 77 K
 * instructions).  Good while no object is loaded or unloaded: the
 * dynamic linker's counts of both (dlpi_adds, dlpi_subs) are read at
 * every call, from the first object alone. */
#define CODE_SEGS 8
static struct {
	unsigned long long adds, subs; /* the loaded objects they hold for */
	unsigned n, next;              /* segments held, the next to replace */
	uintptr_t lo[CODE_SEGS], hi[CODE_SEGS];
} codes;
static atomic_flag codes_lock = ATOMIC_FLAG_INIT;

/* Is pc a return address in code: in a segment of the last found (seg,
 * kept for one stack: neighbouring frames are mostly in one object), of
 * those kept, or another (and then kept). */
static bool in_code(uintptr_t pc, uintptr_t seg[2], bool keep)
{
	pc--;
	if (pc >= seg[0] && pc < seg[1])
		return true;
	if (keep)
		for (unsigned i = 0; i < codes.n; i++)
			if (pc >= codes.lo[i] && pc < codes.hi[i]) {
				seg[0] = codes.lo[i];
				seg[1] = codes.hi[i];
				return true;
			}
	if (!mc_code_segment(pc, &seg[0], &seg[1]))
		return false;
	if (keep) {
		unsigned i = codes.n < CODE_SEGS ? codes.n++ : codes.next++ % CODE_SEGS;
		codes.lo[i] = seg[0];
		codes.hi[i] = seg[1];
	}
	return true;
}

/* The frames of a stack, up to the first that cannot be a return
 * address: a walk that guessed a frame pointer in code without CFI may
 * have followed a register that held something else (a heap address, a
 * pointer into a data segment), and what it found there is not a
 * caller.  Frame 0, the call site, is always right.  Checked here, at
 * report time, rather than on every allocation. */
int mc_stack_get_code(uint32_t id, const uintptr_t **frames)
{
	int depth = mc_stack_get(id, frames), n = depth ? 1 : 0;
	if (depth < 2)
		return n;
	struct mc_objects_gen g;
	bool keep = mc_objects_gen(&g) &&
		    !atomic_flag_test_and_set_explicit(&codes_lock, memory_order_acquire);
	if (keep && (g.adds != codes.adds || g.subs != codes.subs)) {
		codes.adds = g.adds;
		codes.subs = g.subs;
		codes.n = codes.next = 0;
	}
	uintptr_t seg[2] = { 0, 0 };
	while (n < depth && in_code((*frames)[n], seg, keep))
		n++;
	if (keep)
		atomic_flag_clear_explicit(&codes_lock, memory_order_release);
	return n;
}

void mc_depot_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&depot_lock, memory_order_acquire))
		__builtin_ia32_pause();
}

void mc_depot_unlock(void)
{
	atomic_flag_clear_explicit(&depot_lock, memory_order_release);
}

void mc_depot_after_fork_child(void)
{
	atomic_flag_clear(&depot_lock);
	atomic_flag_clear(&codes_lock);
}
