/*
 * scan.c - reachability scan: which live blocks can the program still
 * reach, and how.  valgrind's algorithm (mc_leakcheck.c), conservative:
 *
 *  1. Every live block goes into an array sorted by address, so that any
 *     word can be looked up by binary search: it "points to" a block when
 *     it equals the block's start (a start pointer) or falls inside it (an
 *     interior pointer).
 *  2. Roots (roots.c): the loaded objects' data, the program's own
 *     mappings, every thread's stack, registers and thread-local
 *     storage.  A start pointer marks a block reachable, an interior
 *     pointer possibly reachable; marked blocks are scanned in turn, and
 *     what a possibly reachable block points to is at best possibly
 *     reachable too.  A pool (a block a program carves its objects
 *     from, named by libmemcheck:Pool entries: scanpool.c) takes a
 *     pointer into it as one to its start.
 *  3. What is left is lost.  In turn, each block still unreached leads a
 *     "clique": everything it reaches that is unreached becomes
 *     indirectly lost (a former leader included), the leader itself stays
 *     definitely lost.  So a cycle with no outside pointer is one definite
 *     block and the rest indirect, as valgrind counts it.  valgrind takes
 *     the blocks in address order, and under valgrind that is the order
 *     they were allocated in (its heap hands out fresh addresses while
 *     freed blocks wait in its 20 MB queue, --freelist-vol); the program's
 *     own allocator reuses addresses at once and lays sizes apart, so the
 *     turns here follow allocation order as the table knows it: the
 *     stack's id (the depot's ordinal: stacks in the order first seen),
 *     then the address (see mc_scan_sort_ids).
 *     As valgrind does, a leader is credited with the bytes its clique
 *     took (its loss record's "(D direct, I indirect)"), and a former
 *     leader taken into a later clique hands its credit on to the new
 *     leader, so that each indirect byte is credited once (credit_to).
 *
 * Memory for the scan comes from mc_map.  The block table is held locked
 * while block contents are read, so no other thread frees a block under
 * the scan (it waits in memcheck's free), and the other threads are
 * stopped meanwhile (threads.c), so none changes what is read.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SCAN_AVX2 1
#endif

#include "internal.h"


/* A block as the scan sees it. */
struct node {
	uintptr_t lo;
	uint64_t size;
	uint32_t stack, epoch;
};

struct graph {
	struct node *v;
	uint8_t *state;
	uint32_t *mark;         /* stack of nodes to scan */
	size_t n, cap, nmark;
	size_t reached;         /* nodes marked MC_KIND_REACHABLE */
	uintptr_t min, max;     /* lowest start, highest end */
	bool joined;            /* the three arrays in one mapping at v */
	uint32_t *idx;          /* the search's buckets (index_build) */
	unsigned shift;
	size_t nidx;
	uint64_t *credit;       /* [cap]: a leader's clique's bytes, mapped at
				 * the first block a clique takes (credit_to) */
	bool no_credit;         /* that mapping failed: none credited */
	const uint64_t *pool;   /* pools' stack ids, ascending (scanpool.c) */
	size_t npool;
	uint8_t *heur;          /* [cap]: the heuristic a block was reached by
				 * (MC_HEUR_*), mapped at the first (heur_note) */
	bool no_heur;           /* that mapping failed: none noted */
	/* dead alternate stacks cut out of the very blocks that hold them
	 * (roots.c's mc_roots_heap_stacks; usually none): each one's node */
	struct mc_heap_stack cut[MC_HEAP_STACKS];
	size_t cut_node[MC_HEAP_STACKS], ncut;
	bool slow_drain;        /* cuts, or blocks not read: drain_cut */
	/* blocks read past their recorded size (tails_take): each one's
	 * node, ascending, and the bytes added to its size for the scan */
	struct scan_tail { size_t node; uint64_t extra; } *tail;
	size_t ntail, tail_cap;
	bool sparse;            /* large blocks read where in memory (drain_cut) */
	uint64_t sizes;         /* the blocks' sizes or'ed: >= SPARSE where
				 * one is (collect) */
};

/* The stacks whose blocks a pass does not read (mc_scan_freed). */
static const uint64_t *freed_ids;
static size_t nfreed_ids;

void mc_scan_freed(const uint64_t *ids, size_t n)
{
	freed_ids = ids;
	nfreed_ids = n;
}

/* The blocks of those stacks that the roots did not reach, reachable
 * all the same, their contents still not read: each one's stack is one
 * an entry for what freeres frees took while it was reachable, so the
 * first pass counted it freed, and valgrind frees it with the rest
 * (xz -T2: the locale's and gettext's blocks, which only other such
 * blocks point to, would have been definitely lost, where valgrind and
 * the first pass list none).  Before the cliques: none is a leader, nor
 * in another's. */
static bool freed_node(const struct graph *g, size_t i);

static __attribute__((noinline, cold)) void freed_reached(struct graph *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->state[i] != MC_KIND_REACHABLE && freed_node(g, i)) {
			g->state[i] = MC_KIND_REACHABLE;
			g->reached++;
		}
}

/* Is node i's stack one of those? */
static bool freed_node(const struct graph *g, size_t i)
{
	uint64_t s = g->v[i].stack;
	size_t lo = 0, hi = nfreed_ids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (freed_ids[mid] < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nfreed_ids && freed_ids[lo] == s;
}

/* The three arrays, 33 bytes a block.  A small scan (a short process
 * leaves a few blocks) takes them from one mapping, held until
 * mc_scan_free: one mmap and one populated page where there were three.
 * A larger one maps each, so that the mark stack goes at the scan's end
 * rather than add to memcheck's memory while the report is made. */
#define JOINED_MAX (16 * 1024)

static size_t state_bytes(size_t cap)
{
	return (cap + 7) & ~(size_t)7; /* the mark stack after it aligned */
}

static size_t joined_bytes(size_t cap)
{
	return cap * sizeof(struct node) + state_bytes(cap) + 2 * cap * sizeof(uint32_t);
}

static bool graph_map(struct graph *g)
{
	size_t all = joined_bytes(g->cap);
	g->joined = all <= JOINED_MAX;
	if (g->joined) {
		char *p = mc_map(all);
		if (!p)
			return false;
		g->v = (struct node *)p;
		g->state = (uint8_t *)(p + g->cap * sizeof *g->v);
		g->mark = (uint32_t *)(p + g->cap * sizeof *g->v + state_bytes(g->cap));
		return true;
	}
	g->v = mc_map(g->cap * sizeof *g->v);
	g->state = mc_map(g->cap);
	g->mark = mc_map(2 * g->cap * sizeof *g->mark);
	return g->v && g->state && g->mark;
}

/* The blocks' and their states' arrays (joined: all three). */
static void nodes_unmap(void *v, uint8_t *state, size_t cap, bool joined)
{
	if (joined) {
		if (v)
			mc_unmap(v, joined_bytes(cap));
		return;
	}
	if (v)
		mc_unmap(v, cap * sizeof(struct node));
	if (state)
		mc_unmap(state, cap);
}

/* The scan gave up at the record's deadline (mc_scan_cut). */
static bool cut;

/* Has the record's deadline passed (a signal asked the process to end:
 * fatal.c's mc_fatal_deadline_ns)?  Then cut, and the scan stops where it
 * is.  Its callers ask only where a deadline is set: the other scans'
 * code grows by the test alone (text-order.ld's group 1t). */
static __attribute__((noinline, cold)) bool past_deadline(void)
{
	if (!cut && mc_now() * 1e9 >= (double)mc_fatal_deadline_ns)
		cut = true;
	return cut;
}

static void collect(const struct mc_block *b, void *arg)
{
	struct graph *g = arg;
	if (g->n < g->cap)
		g->v[g->n++] = (struct node){ b->ptr, b->size, b->stack, b->aux };
	g->sizes |= b->size;
}

/* Below this many blocks the sort is an insertion sort in place: no
 * buffer mapped for the radix sort's moves (a few blocks: a page fault
 * costs more than their sort). */
#define SORT_SMALL 64

/* Sort by address: an LSD radix sort on the start address, a digit a
 * pass over the bits that differ (qsort of a million blocks takes a
 * tenth of a second; this a fraction of that).  Starts are distinct, so
 * either sort gives the one order.  A pass costs n plus the digit's
 * counters: 16-bit digits (256 KiB of counters, mapped, zeroed and
 * summed each pass) pay only for tens of thousands of blocks; below,
 * 8-bit digits on the stack (/bin/date's exit, 149 blocks: 0.5 M
 * instructions of counters for 149 moves). */
#define RADIX_WIDE 65536
static bool sort_nodes(struct graph *g)
{
	size_t n = g->n;
	if (n < 2)
		return true;
	if (n <= SORT_SMALL) {
		for (size_t i = 1; i < n; i++) {
			struct node x = g->v[i];
			size_t j = i;
			for (; j > 0 && g->v[j - 1].lo > x.lo; j--)
				g->v[j] = g->v[j - 1];
			g->v[j] = x;
		}
		return true;
	}
	uintptr_t all_or = 0, all_and = ~(uintptr_t)0;
	for (size_t i = 0; i < n; i++) {
		all_or |= g->v[i].lo;
		all_and &= g->v[i].lo;
	}
	uintptr_t diff = all_or ^ all_and;
	int bits = n < RADIX_WIDE ? 8 : 16;
	size_t radix = (size_t)1 << bits, bytes = n * sizeof *g->v;
	uint32_t narrow[256];
	struct node *tmp = mc_map(bytes);
	uint32_t *count = bits == 8 ? narrow : mc_map(radix * sizeof *count);
	if (!tmp || !count) {
		if (tmp)
			mc_unmap(tmp, bytes);
		if (count && count != narrow)
			mc_unmap(count, radix * sizeof *count);
		return false;
	}
	struct node *src = g->v, *dst = tmp;
	for (int shift = 0; shift < 64; shift += bits) {
		if (!((diff >> shift) & (radix - 1)))
			continue;
		memset(count, 0, radix * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(src[i].lo >> shift) & (radix - 1)]++;
		uint32_t sum = 0;
		for (size_t k = 0; k < radix; k++) {
			uint32_t c = count[k];
			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].lo >> shift) & (radix - 1)]++] = src[i];
		struct node *t = src;
		src = dst;
		dst = t;
	}
	if (src != g->v)
		memcpy(g->v, src, bytes);
	mc_unmap(tmp, bytes);
	if (count != narrow)
		mc_unmap(count, radix * sizeof *count);
	return true;
}

/* ---- blocks read past their recorded size ---------------------------- */

/* The blocks account.c recorded shorter than they are (a thread's DTV,
 * whose last entry the figures leave out as memcheck's), each read
 * whole: its node's size is the block's real one while the scan runs
 * (its words read, a pointer into its last bytes its), and the recorded
 * one again before anything counts or reports it (tails_give_back;
 * credit_to meanwhile).  Only a live block that still has the noted
 * size and stack.  With the threads' lock held (scan_work), before the
 * extent of the blocks (g->max) is taken. */
static __attribute__((noinline)) void tails_take(struct graph *g)
{
	const struct mc_tail *t;
	size_t n = mc_account_tails(&t);
	g->tail = mc_map(n * sizeof *g->tail);
	if (!g->tail)
		return;
	g->tail_cap = n;
	for (size_t k = 0; k < n; k++) {
		size_t lo = 0, hi = g->n;
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (g->v[mid].lo <= t[k].ptr)
				lo = mid;
			else
				hi = mid;
		}
		struct node *b = &g->v[lo];
		if (b->lo != t[k].ptr || b->size != t[k].size || b->stack != t[k].stack)
			continue;
		b->size += t[k].extra;
		size_t j = g->ntail++; /* in node order: an insertion */
		for (; j > 0 && g->tail[j - 1].node > lo; j--)
			g->tail[j] = g->tail[j - 1];
		g->tail[j] = (struct scan_tail){ lo, t[k].extra };
	}
}

/* Node i's bytes the scan reads but the figures leave out. */
static uint64_t tail_of(const struct graph *g, size_t i)
{
	size_t lo = 0, hi = g->ntail;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->tail[mid].node < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->ntail && g->tail[lo].node == i ? g->tail[lo].extra : 0;
}

/* The recorded sizes back, for the records. */
static __attribute__((noinline)) void tails_give_back(struct graph *g)
{
	for (size_t k = 0; k < g->ntail; k++)
		g->v[g->tail[k].node].size -= g->tail[k].extra;
	mc_unmap(g->tail, g->tail_cap * sizeof *g->tail);
	g->tail = NULL;
	g->ntail = 0;
}

/* The binary search of every word that falls in [min, max) was most of
 * the scan's cost where many such words are read (/bin/date's locale
 * data, 149 blocks: 35 K instructions; 40,000 blocks: 11 M of 25 M).
 * Buckets cut it short: [min, max) in nidx - 1 equal slices of 2^shift
 * bytes, idx[b] the last block starting at or below slice b's start.
 * The block a word w of slice b falls in, if any, is the last starting at
 * or below w: between idx[b] and idx[b + 1], where the search begins,
 * the same block the whole array's search finds.  A few blocks need
 * none; a bucket a block or so, at most IDX_MAX of them (1 MiB). */
#define IDX_MIN 16
#define IDX_MAX ((size_t)1 << 18)
#define IDX_STACK 256

static void index_build(struct graph *g, uint32_t *stack_idx)
{
	if (g->n < IDX_MIN)
		return;
	size_t nb = IDX_MIN;
	while (nb < g->n && nb < IDX_MAX)
		nb *= 2;
	uintptr_t last = g->max - 1 - g->min;
	unsigned shift = 0;
	while ((last >> shift) >= nb)
		shift++;
	uint32_t *idx = nb <= IDX_STACK ? stack_idx : mc_map((nb + 1) * sizeof *idx);
	if (!idx)
		return; /* the whole array searched */
	/* node j is the last at or below the starts of slices
	 * ceil((v[j].lo - min) / 2^shift) to the next node's less one */
	size_t b = 0, round = ((size_t)1 << shift) - 1;
	for (size_t j = 0; j + 1 < g->n; j++)
		for (size_t to = (g->v[j + 1].lo - g->min + round) >> shift; b < to; b++)
			idx[b] = (uint32_t)j;
	for (; b <= nb; b++)
		idx[b] = (uint32_t)(g->n - 1);
	g->idx = idx;
	g->shift = shift;
	g->nidx = nb + 1;
}

static void index_free(struct graph *g, const uint32_t *stack_idx)
{
	if (g->idx && g->idx != stack_idx)
		mc_unmap(g->idx, g->nidx * sizeof *g->idx);
	g->idx = NULL;
}

/* The block containing address p, or -1.  A zero-size block contains
 * its start only. */
static inline int64_t lookup(const struct graph *g, uintptr_t p)
{
	if (p - g->min >= g->max - g->min)
		return -1;
	size_t lo = 0, hi = g->n;
	if (g->idx) {
		size_t b = (p - g->min) >> g->shift;
		lo = g->idx[b];
		hi = (size_t)g->idx[b + 1] + 1;
	}
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (g->v[mid].lo <= p)
			lo = mid;
		else
			hi = mid;
	}
	const struct node *b = &g->v[lo];
	if (b->lo > p)
		return -1;
	if (p - b->lo < b->size || p == b->lo)
		return (int64_t)lo;
	return -1;
}

static inline void push(struct graph *g, size_t i)
{
	g->mark[g->nmark++] = (uint32_t)i;
}

/* Words either side of an end pointer that show what it belongs to. */
#define END_NEAR 4

/* Is the word at p, in memory [lo, hi) being read, the start of block i
 * or the end of block i - 1 (one past its last byte), which lies right
 * before it?  Allocators without headers (jemalloc, mimalloc, tcmalloc)
 * put blocks of one size class side by side, and a program keeps the end
 * of a buffer it writes into: stdio's FILE (_IO_buf_end, _IO_write_end),
 * std::vector's end of storage, libyaml's buffers.  valgrind keeps red
 * zones between blocks, so there that word points to no block; here it
 * would make the block after the buffer reachable, a leak lost.  The
 * word counts as the buffer's end, pointing to nothing (an end pointer
 * is in no block, for valgrind neither), when the words around it
 * describe the buffer: among the END_NEAR either side, the buffer's
 * start and at least one more address from its start to its end (a
 * write pointer, a second end).  A pair of pointers to two blocks side
 * by side (a key and its value, an array of pointers to blocks made one
 * after the other) has no third such word: the second still points to
 * its block.  Nor does a structure that keeps one block's start twice,
 * around the next block's: GLib's hash table (2.60 and later) keeps
 * keys, hashes, values in that order, values == keys for a set or an
 * empty table, and allocates keys and hashes one after the other, 32
 * bytes each: under the three allocators its hashes were definitely lost
 * (every GObject program failed: 3 blocks in GLib's and GObject's
 * constructors' tables; tcmalloc hands the two out downwards, so there
 * keys, the later block, was lost through hashes' end).  So a structure
 * is taken to list a buffer's start before its end (FILE, std::vector,
 * libyaml's yaml_buffer_t do), and a buffer whose only other words are
 * copies of its start (nothing written yet: std::vector's begin,
 * finish, end) keeps them all before its end. */
/* The END_NEAR words either side of p, within [lo, hi): [*q, *to). */
static inline __attribute__((always_inline)) void near_words(const uintptr_t *p, uintptr_t lo,
							      uintptr_t hi, const uintptr_t **q,
							      const uintptr_t **to)
{
	uintptr_t at = (uintptr_t)p;
	*q = (const uintptr_t *)(at - lo > END_NEAR * 8 ? at - END_NEAR * 8 : lo);
	*to = (const uintptr_t *)(hi - at > (END_NEAR + 1) * 8 ? at + (END_NEAR + 1) * 8 : hi);
}

/* Do the words [q, to) around p describe the buffer [start, end] whose
 * end p holds (the rule above)? */
__attribute__((no_sanitize_address)) static inline __attribute__((always_inline)) bool
describes_buffer(const uintptr_t *p, const uintptr_t *q, const uintptr_t *to, uintptr_t start,
		 uintptr_t end)
{
	bool start_before = false, inside = false, start_after = false;
	int near = 0;
	for (; q < to; q++) {
		if (q == p || *q < start || *q > end)
			continue;
		near++;
		start_before |= *q == start && q < p;
		start_after |= *q == start && q > p;
		inside |= *q != start;
	}
	return start_before && near >= 2 && (inside || !start_after);
}

/* And the words after p that point past its start into block i, its
 * size: p is the start of a buffer listed before its end, whatever the
 * words before it say.  Two std::vectors one after the other in a
 * structure (GoogleTest's TestSuite: test_info_list_, test_indices_,
 * each of one element, 8 and 4 bytes, side by side in one size class)
 * keep the first's begin, finish, end and the second's begin, finish,
 * end: the second's begin, the first's end too, was taken for it, and
 * each one-test suite's vector of indices was definitely lost in a
 * process that died in a test (a death test's child) under jemalloc,
 * tcmalloc and mimalloc, still reachable under valgrind. */
__attribute__((no_sanitize_address)) static inline bool
starts_buffer(const uintptr_t *p, const uintptr_t *to, const struct node *b)
{
	for (const uintptr_t *q = p + 1; q < to; q++)
		if (*q > b->lo && *q - b->lo <= b->size)
			return true;
	return false;
}

__attribute__((no_sanitize_address))
static bool end_of_previous(const struct graph *g, size_t i, const uintptr_t *p, uintptr_t lo,
			    uintptr_t hi)
{
	if (i == 0 || lo == hi)
		return false;
	const struct node *a = &g->v[i - 1];
	uintptr_t end = a->lo + a->size;
	if (!a->size || end != g->v[i].lo)
		return false;
	const uintptr_t *q, *to;
	near_words(p, lo, hi, &q, &to);
	return describes_buffer(p, q, to, a->lo, end) && !starts_buffer(p, to, &g->v[i]);
}

/* The same where the buffer is gone: is the word at p, the start of
 * block i, the end of a freed buffer that lay right before it?  A
 * structure outlives its buffer with the words that described it: a
 * global std::vector destroyed at exit keeps its begin, finish and end
 * of storage, and under the allocators without headers the end is the
 * start of the block of its size class after the buffer (a leaked
 * new int[7] after a global vector of one std::string was still
 * reachable under jemalloc and mimalloc, definitely lost under valgrind,
 * whose freed blocks are not handed out again at once and lie between
 * red zones).  The buffer lay in the slot before block i's, of its size
 * class: as long as block i's size at least, and less than twice it (16
 * bytes for blocks of 8 or less; the three allocators' classes are
 * closer than that), so its start s is the lowest word among the
 * END_NEAR before p that far below w; [s, w) holds no live block
 * (nothing of the table's there: freed), and the words around p
 * describe [s, w] as end_of_previous's rule asks of a live buffer.
 * Without the bound on s, a structure's words that point into freed
 * buffers of other classes far below (a global std::deque destroyed at
 * exit, its iterators' cur, first, last) made the global after it a
 * buffer's end: the std::list it kept, and all its nodes, definitely
 * lost under the four allocators, still reachable under valgrind. */
#define FREED_MAX (1u << 20)

/* Before end_of_freed: is one of the two words before p in the gap
 * between block i - 1's end and w, where a freed buffer would lie (a
 * structure lists a buffer's start, or a pointer into it, right before
 * its end: std::vector, stdio's FILE)?  Inline, two compares a word,
 * no lookup: most start pointers have neither there (under glibc the
 * gap is the chunk's header; a tree's nodes point at blocks below it).
 * A call to end_of_freed for each start pointer cost plain_scan_million
 * 100000 7 % more instructions, a look at the END_NEAR words before it
 * inline 2.7 % (callgrind). */
__attribute__((no_sanitize_address))
static inline bool freed_gap_word(const struct graph *g, size_t i, const uintptr_t *p,
				  uintptr_t lo)
{
	uintptr_t w = *p, from = i ? g->v[i - 1].lo + g->v[i - 1].size : 0;
	if (w - from > FREED_MAX)
		from = w - FREED_MAX;
	uintptr_t at = (uintptr_t)p;
	return (at - lo >= 8 && p[-1] - from < w - from) ||
	       (at - lo >= 16 && p[-2] - from < w - from);
}

__attribute__((no_sanitize_address, noinline))
static bool end_of_freed(const struct graph *g, size_t i, const uintptr_t *p, uintptr_t lo,
			 uintptr_t hi)
{
	uintptr_t w = *p, s = 0;
	uint64_t size = g->v[i].size, slot_max = size > 8 ? 2 * size - 1 : 16;
	const uintptr_t *q, *to;
	near_words(p, lo, hi, &q, &to);
	for (const uintptr_t *r = q; r < p; r++)
		if (*r < w && w - *r >= size && w - *r <= slot_max && (!s || *r < s))
			s = *r;
	if (!s || (i > 0 && g->v[i - 1].lo + g->v[i - 1].size > s) || lookup(g, s) >= 0)
		return false;
	if (!describes_buffer(p, q, to, s, w) || starts_buffer(p, to, &g->v[i]))
		return false;
	/* Where a ring of recent frees still holds the buffer freed at s,
	 * its end is s + its size: a word equal to w is its end only if
	 * that is w.  onetrueawk's regex parser keeps statics into the
	 * regex's copy, freed (5 bytes), and after them one that holds the
	 * block of the next slot (mimalloc's 8 bytes on): that block was
	 * definitely lost, still reachable under valgrind and glibc
	 * (tests/prog/plain_freed_end). */
	uint64_t was;
	return !mc_account_freed_size(s, &was) || s + was == w;
}

/* Node i, unreached, joins the clique led by node leader: the leader is
 * credited with its bytes and with the credit i had as a leader itself
 * (valgrind's mc_leakcheck.c counts a clique's indirect bytes the same
 * way: its loss records' "N (D direct, I indirect) bytes").  The array
 * is mapped only once a clique takes a block: a process whose lost
 * blocks point at none maps nothing more, and only valgrind's text
 * (vgtext.c) prints the credit: elsewhere none is kept (8 bytes a block
 * scanned: plain_scan_million's peak RSS 133.5 -> 149.5 MB with it
 * kept, /usr/bin/time; half of that is this array).  Where it cannot
 * be mapped the kinds stay right and no record shows indirect bytes. */
static __attribute__((noinline)) void credit_to(struct graph *g, size_t leader, size_t i)
{
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE)
		return;
	if (!g->credit && !g->no_credit) {
		g->credit = mc_map(g->cap * sizeof *g->credit);
		g->no_credit = !g->credit;
		if (g->credit)
			memset(g->credit, 0, g->cap * sizeof *g->credit);
	}
	if (!g->credit)
		return;
	g->credit[leader] += g->v[i].size - (g->ntail ? tail_of(g, i) : 0) + g->credit[i];
	g->credit[i] = 0;
}

/* Was node i allocated as a pool (a libmemcheck:Pool entry matched its
 * stack)?  Asked only of a block not yet reachable that a definite
 * pointer points into, and only in a scan that found pools. */
static __attribute__((noinline)) bool in_pool(const struct graph *g, size_t i)
{
	uint64_t id = g->v[i].stack;
	size_t lo = 0, hi = g->npool;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->pool[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->npool && g->pool[lo] == id;
}

/* Note h as the heuristic node i was last reached by, as valgrind keeps
 * it (lc_push_without_clique_if_a_chunk_ptr): set by every interior
 * pointer to a block not yet reachable, whether its prior is definite or
 * not (a possibly lost block then counts under its heuristic too), none
 * where such a pointer fits no heuristic, and cleared when a pointer to
 * the start reaches the block afterwards.  valgrind's LEAK SUMMARY
 * counts each block by it ("of which reachable via heuristic"). */
static __attribute__((noinline)) void heur_note(struct graph *g, size_t i, int h)
{
	if (!g->heur && h && !g->no_heur) {
		g->heur = mc_map(g->cap);
		g->no_heur = !g->heur;
	}
	if (g->heur)
		g->heur[i] = (uint8_t)h;
}

/* The word w at p, in memory [lo, hi) that the prior node makes
 * reachable (definite), possibly reachable (!definite) or, with
 * clique >= 0, in the clique led by node clique.  Unchecked by ASan as
 * its callers (an ASan build may keep it out of line): a stack's root
 * holds the redzones between a frame's arrays, where a stale word that
 * looked like a pointer into the heap failed unit_scan's ASan build. */
__attribute__((no_sanitize_address)) static inline void consider(struct graph *g, const uintptr_t *p, uintptr_t lo, uintptr_t hi,
			    bool definite, int64_t clique)
{
	uintptr_t w = *p;
	int64_t i = lookup(g, w);
	if (i < 0)
		return;
	if (w == g->v[i].lo &&
	    (i > 0 && g->v[i - 1].lo + g->v[i - 1].size == w
		     ? end_of_previous(g, (size_t)i, p, lo, hi)
		     : freed_gap_word(g, (size_t)i, p, lo) && end_of_freed(g, (size_t)i, p, lo, hi)))
		return;
	uint8_t *st = &g->state[i];
	if (clique < 0) {
		if (*st == MC_KIND_REACHABLE) {
			if (g->heur && w == g->v[i].lo)
				g->heur[i] = MC_HEUR_NONE;
			return;
		}
		/* a pointer into a pool is one to a start: the pieces the
		 * program takes from it are the blocks valgrind sees there */
		bool start = w == g->v[i].lo || (g->npool && definite && in_pool(g, (size_t)i));
		if (!start && mc_opt.leak_heuristics) {
			int h = mc_heuristic_reaches(g->v[i].lo, g->v[i].size, w); /* heuristics.c */
			if (h || g->heur)
				heur_note(g, (size_t)i, h);
			start = h != MC_HEUR_NONE;
		}
		if (start && definite) {
			*st = MC_KIND_REACHABLE;
			g->reached++;
			push(g, (size_t)i);
		} else if (*st == MC_KIND_DEFINITE) {
			*st = MC_KIND_POSSIBLE;
			push(g, (size_t)i);
		}
	} else if (*st == MC_KIND_DEFINITE && i != clique) {
		*st = MC_KIND_INDIRECT;
		credit_to(g, (size_t)clique, (size_t)i);
		push(g, (size_t)i);
	}
}

#if SCAN_AVX2
/* Where the processor has AVX2 (asked once, at the first scan), sixteen
 * words at a time, the same test with w + -min and w + -max (a load
 * folded into each add), about 1.3 instructions a word.  The first
 * sixteen-word run from p that holds a word in range, or where fewer
 * than sixteen are left. */
static int avx2; /* 0: not asked yet, 1: no, 2: yes */

__attribute__((target("avx2"), no_sanitize_address))
static const uintptr_t *skip_far_avx2(const uintptr_t *p, const uintptr_t *end, uintptr_t min,
				      uintptr_t max)
{
	const __m256i nmin = _mm256_set1_epi64x(-(long long)min);
	const __m256i nmax = _mm256_set1_epi64x(-(long long)max);
#define NEAR4(k) __extension__({                                                     \
		__m256i w_ = _mm256_loadu_si256((const __m256i *)p + (k));            \
		_mm256_andnot_si256(_mm256_add_epi64(w_, nmin), _mm256_add_epi64(w_, nmax)); \
	})
	for (; end - p >= 16; p += 16) {
		__m256i t = _mm256_or_si256(_mm256_or_si256(NEAR4(0), NEAR4(1)),
					    _mm256_or_si256(NEAR4(2), NEAR4(3)));
		if (_mm256_movemask_pd(_mm256_castsi256_pd(t)))
			break;
	}
#undef NEAR4
	return p;
}
#endif

/* The first word from p on, before end, in [g->min, g->max), or end.
 * Nearly every word read is not (zeros, small numbers, pointers to the
 * objects' code and data): eight words at a time are ruled out with
 * SSE2, the baseline of x86-64, about 4 instructions a word where the
 * test of each word one by one took 6.  The test is exact, not a filter
 * before it: with d = w - min and e = w - max (mod 2^64), w is in range
 * when d < max - min unsigned, which (max - min < 2^63: user addresses)
 * is when the top bit of d is clear and that of e set: ~d & e, whose
 * top bits movmskpd gathers. */
__attribute__((no_sanitize_address))
static inline const uintptr_t *next_near(const struct graph *g, const uintptr_t *p,
					 const uintptr_t *end)
{
#if SCAN_AVX2
	if (end - p >= 16 && avx2 == 2)
		p = skip_far_avx2(p, end, g->min, g->max);
#endif
#if defined(__SSE2__)
	const __m128i vmin = _mm_set1_epi64x((long long)g->min);
	const __m128i vmax = _mm_set1_epi64x((long long)g->max);
#define NEAR(k) __extension__({                                                   \
		__m128i w_ = _mm_loadu_si128((const __m128i *)p + (k));            \
		_mm_andnot_si128(_mm_sub_epi64(w_, vmin), _mm_sub_epi64(w_, vmax)); \
	})
	for (; end - p >= 8; p += 8) {
		__m128i t = _mm_or_si128(_mm_or_si128(NEAR(0), NEAR(1)), _mm_or_si128(NEAR(2), NEAR(3)));
		if (_mm_movemask_pd(_mm_castsi128_pd(t)))
			break;
	}
#undef NEAR
#endif
	uintptr_t span = g->max - g->min;
	for (; p < end; p++)
		if (*p - g->min < span)
			return p;
	return end;
}

/* The words of [from, to), part of the memory [lo, hi) that the prior
 * node makes reachable (consider). */
__attribute__((no_sanitize_address)) static inline __attribute__((always_inline)) void
scan_part(struct graph *g, uintptr_t from, uintptr_t to, uintptr_t lo, uintptr_t hi, bool definite,
	  int64_t clique)
{
	const uintptr_t *end = (const uintptr_t *)to;
	for (const uintptr_t *p = (const uintptr_t *)from; (p = next_near(g, p, end)) < end; p++)
		consider(g, p, lo, hi, definite, clique);
}

/* (inlined in each caller, drain_cut's too: drain's and scan_roots'
 * loops call nothing for a block) */
__attribute__((no_sanitize_address)) static inline __attribute__((always_inline)) void
scan_range(struct graph *g, uintptr_t lo, uintptr_t hi, bool definite, int64_t clique)
{
	scan_part(g, lo, hi, lo, hi, definite, clique);
}

/* Blocks of SPARSE bytes or more are read only in their pages that are
 * in memory (mincore), where the system has no swap: a page of
 * anonymous memory never written is not, and reads as zeros, which hold
 * no pointer; read, it is a page fault (the zero page mapped, ~0.6 us
 * here).  libstdc++'s emergency pool for exceptions, 72 KiB allocated
 * at its start-up and never written, was 17 of them at every exit of a
 * C++ program or of any program under jemalloc or tcmalloc (both link
 * libstdc++): perf record -e page-faults -d, /bin/date under jemalloc.
 * A mincore of a block's pages costs about what reading one page first
 * does, and less than reading 64 KiB that are in memory (the scan's
 * ~1.3 instructions a word): from 64 KiB on.  The words read are those
 * read before but the zeros left out: the same blocks are reached. */
#define SPARSE ((uint64_t)64 << 10)
static int8_t sparse_ok; /* 0: not asked this scan, 1: yes, -1: swap */

/* A run of a large block's pages in memory, read as part of the block
 * (scan_sparse's, through maps.c's walk) */
struct sparse {
	struct graph *g;
	uintptr_t lo, hi;
	bool definite;
	int64_t clique;
};

__attribute__((no_sanitize_address)) static void sparse_run(uintptr_t from, uintptr_t to,
							     void *arg)
{
	const struct sparse *s = arg;
	scan_part(s->g, from, to, s->lo, s->hi, s->definite, s->clique);
}

/* The block [lo, hi) read where its pages are in memory (drain_cut,
 * where sparse_find found one of them that is not): false where the
 * system has swap, and drain_cut reads it whole.  The partial pages at
 * its ends are read whatever mincore says (they hold the blocks beside
 * it too).  Out of line, the vector on the stack, 256 pages (1 MiB) a
 * call: the exit's scan runs on stack pages it touches first. */
static __attribute__((noinline)) bool scan_sparse(struct graph *g, uintptr_t lo, uintptr_t hi,
						  bool definite, int64_t clique)
{
	if (!sparse_ok)
		sparse_ok = mc_swap_configured() ? -1 : 1;
	uintptr_t in_lo = (lo + 4095) & ~(uintptr_t)4095, in_hi = hi & ~(uintptr_t)4095;
	if (sparse_ok < 0 || in_hi <= in_lo)
		return false;
	unsigned char vec[256];
	struct sparse s = { g, lo, hi, definite, clique };
	sparse_run(lo, in_lo, &s);
	mc_resident_runs(in_lo, in_hi, vec, sizeof vec, sparse_run, &s);
	sparse_run(in_hi, hi, &s);
	return true;
}

/* sparse_find's count of a block's pages in memory */
static void count_run(uintptr_t lo, uintptr_t hi, void *arg)
{
	*(uint64_t *)arg += (hi - lo) / 4096;
}

/* Whether the scan reads large blocks where their pages are in memory
 * only: where one has pages that are not, and the heap is small enough
 * that drain_cut's loop, which asks each block's size (drain's own loop
 * asks nothing: a test a block there was +5 to +13 instructions a block,
 * callgrind, plain_scan_million 200000), costs less than the zero
 * pages' faults it spares: ~0.6 us, some 2,000 instructions, a page,
 * against ~8 instructions a block.  Asked of heaps of SPARSE_NODES
 * blocks or fewer that hold a block of SPARSE bytes or more (collect
 * ors their sizes). */
#define SPARSE_NODES 4096
static __attribute__((noinline)) void sparse_find(struct graph *g)
{
	sparse_ok = 0; /* asked again each scan */
	uint64_t out = 0;
	unsigned char vec[256];
	for (size_t i = 0; i < g->n; i++) {
		const struct node *b = &g->v[i];
		if (b->size < SPARSE)
			continue;
		if (!sparse_ok)
			sparse_ok = mc_swap_configured() ? -1 : 1;
		if (sparse_ok < 0)
			return;
		uintptr_t lo = (b->lo + 4095) & ~(uintptr_t)4095;
		uintptr_t hi = (b->lo + b->size) & ~(uintptr_t)4095;
		if (hi <= lo)
			continue;
		/* the pages not in memory: those maps.c's walk leaves out
		 * (a chunk mincore cannot answer for counts as in it) */
		uint64_t in = 0;
		mc_resident_runs(lo, hi, vec, sizeof vec, count_run, &in);
		out += (hi - lo) / 4096 - in;
	}
	if (out && g->n < out * 250) {
		g->sparse = true;
		g->slow_drain = true;
	}
}

/* glibc's chunk of a block: its size word just before it, with the
 * mmapped bit (2) and two others in the low bits.  The next chunk's
 * header starts 16 bytes before the next block, so it lies inside this
 * block's last 8 usable bytes when the block's size is 1 to 8 more than
 * a multiple of 16; the arena's pointers to a free chunk (the top chunk
 * above all) then look like interior pointers into the block before. */
static bool glibc_next_chunk(const struct node *b, uintptr_t w)
{
	uint64_t size = *(const uint64_t *)(b->lo - 8);
	return !(size & 2) && w == b->lo - 16 + (size & ~(uint64_t)7);
}

/* Did the allocator ask for the block through a function of the
 * program's that only hands the block back (MEMCHECK_ALLOC_FN_AUTO's
 * thin functions)?  A program that defines its own operator new (gdb)
 * serves the new of tcmalloc's start-up too: TCMallocGuard's
 * MallocExtension (16 bytes), which tcmalloc's current_instance keeps,
 * has the program's operator new as its first frame and was definitely
 * lost here, where valgrind says still reachable (gdb --version under
 * tcmalloc; tests/prog/cxx_own_new.cc).  Such functions in a row too (an
 * operator new that calls a helper of its own, which calls malloc:
 * tests/prog/cxx_leak_depth.cc's, 16 bytes definitely lost).  Out of
 * line, in group 7: the code of the frames is judged only where a frame
 * after them lies in the allocator, at most 4 frames from the first. */
static __attribute__((noinline)) bool allocator_called(const uintptr_t *f, int n)
{
	int at = 1;
	while (at < n && at < 4 && !mc_allocator_own_code(f[at] - 1))
		at++;
	if (at >= n || !mc_allocator_own_code(f[at] - 1))
		return false;
	for (int i = 0; i < at; i++)
		if (!mc_allocfn_thin(f[i]))
			return false;
	return true;
}

/* Is word w, read in the allocator's own data (a root of kind kind),
 * none of the program's pointers?  The C library's arena points at
 * chunk headers, which look like interior pointers into the block
 * before.  Another allocator's central caches and free lists (in its
 * .bss: tcmalloc's transfer cache slots, left as they were when a batch
 * went out again) keep the addresses of blocks it handed out, took back
 * and handed out again: a block the program took again and then lost
 * was still reachable from there (tcmalloc: 128 of 20,000 leaked 48-byte
 * blocks, tests/prog/audit24b_stale.c; expat's runtests, one leaked
 * parser of 12).  valgrind, which replaces the allocator, sees in that
 * data only the blocks the allocator asked for itself (tcmalloc's
 * start-up objects, made through the operator new memcheck interposes),
 * and only those are reached from it: a block whose call site lies in
 * the allocator's object, past an allocation function of the program's
 * own (allocator_called). */
static bool not_programs(const struct graph *g, int kind, uintptr_t w)
{
	int64_t i = lookup(g, w);
	if (i < 0)
		return false;
	if (kind == MC_ROOT_GLIBC)
		return w != g->v[i].lo && glibc_next_chunk(&g->v[i], w);
	const uintptr_t *f;
	int n = mc_stack_get(g->v[i].stack, &f);
	return !(n > 0 && (mc_allocator_own_code(f[0] - 1) || allocator_called(f, n)));
}

__attribute__((no_sanitize_address))
static void scan_allocator_root(struct graph *g, uintptr_t lo, uintptr_t hi, int kind)
{
	const uintptr_t *end = (const uintptr_t *)hi;
	for (const uintptr_t *p = (const uintptr_t *)lo; (p = next_near(g, p, end)) < end; p++)
		if (!not_programs(g, kind, *p))
			consider(g, p, lo, hi, true, -1);
}

static inline __attribute__((always_inline)) void drain_one(struct graph *g, int64_t clique)
{
	size_t i = g->mark[--g->nmark];
	const struct node *b = &g->v[i];
	bool definite = g->state[i] != MC_KIND_POSSIBLE;
	scan_range(g, b->lo, b->lo + (b->size & ~(uint64_t)7), definite, clique);
}

/* The record's deadline, asked every 4,096 blocks of a drain (the clock
 * is a system call: sys.c's mc_now): past it the marks are dropped, the
 * scan cut; true then.  n: the blocks the drain has taken. */
static inline bool drain_due(struct graph *g, unsigned n)
{
	if ((n & 4095) || !past_deadline())
		return false;
	g->nmark = 0;
	return true;
}

/* drain under the record's deadline. */
static __attribute__((noinline, cold)) void drain_timed(struct graph *g, int64_t clique)
{
	for (unsigned n = 0; g->nmark; n++) {
		if (drain_due(g, n))
			return;
		drain_one(g, clique);
	}
}

/* drain's loop where the program has an alternate stack in a block of
 * its own (heap_stacks_take): that block read without the stack's
 * range, its dead frames undefined to valgrind.  Out of line, so that
 * drain's own loop stays as it was (a test a block in it was +6.6
 * instructions a block: callgrind, mc_scan_pass of tests/prog/
 * plain_scan_million). */
static __attribute__((noinline, cold)) void drain_cut(struct graph *g, int64_t clique)
{
	for (unsigned n = 0; g->nmark; n++) {
		if (unlikely(mc_fatal_deadline_ns != 0) && drain_due(g, n))
			return;
		size_t i = g->mark[--g->nmark];
		const struct node *b = &g->v[i];
		bool definite = g->state[i] != MC_KIND_POSSIBLE;
		uintptr_t lo = b->lo, hi = b->lo + (b->size & ~(uint64_t)7);
		if (nfreed_ids && freed_node(g, i))
			continue; /* freed before valgrind's scan: not read */
		size_t k = 0;
		while (k < g->ncut && g->cut_node[k] != i)
			k++;
		if (k == g->ncut) {
			/* (a block with a dead stack cut out is read as it
			 * says, below, sparse or not) */
			if (unlikely(g->sparse) && b->size >= SPARSE &&
			    scan_sparse(g, lo, hi, definite, clique))
				continue;
			scan_range(g, lo, hi, definite, clique);
			continue;
		}
		scan_range(g, lo, g->cut[k].lo & ~(uintptr_t)7, definite, clique);
		scan_range(g, (g->cut[k].hi + 7) & ~(uintptr_t)7, hi, definite, clique);
	}
}

/* The dead alternate stacks roots.c names in the very blocks that held
 * them when they were set, each kept where the scan's block at its
 * start is as noted: its start, size, stack and epoch (not 0), and the
 * stack inside it.  Anything else reads the block whole. */
static __attribute__((noinline, cold)) void heap_stacks_take(struct graph *g,
							     const struct mc_roots *rs)
{
	struct mc_heap_stack v[MC_HEAP_STACKS];
	size_t n = mc_roots_heap_stacks(rs, v);
	for (size_t k = 0; k < n; k++) {
		int64_t i = lookup(g, v[k].b.ptr);
		const struct node *b = i >= 0 ? &g->v[i] : NULL;
		if (b && b->lo == v[k].b.ptr && b->size == v[k].b.size && b->stack == v[k].b.stack &&
		    b->epoch == v[k].b.aux && b->epoch && v[k].lo >= b->lo && v[k].hi > v[k].lo &&
		    v[k].hi - b->lo <= b->size) {
			g->cut[g->ncut] = v[k];
			g->cut_node[g->ncut++] = (size_t)i;
			g->slow_drain = true;
		}
	}
}

/* Buffers the program gave its stdio streams (setvbuf, setbuf), as
 * exit leaves them.  glibc's exit runs its stdio clean-up after every
 * exit handler, memcheck's report among them (_IO_cleanup's
 * _IO_unbuffer_all, 2.x): each stream that was used (oriented: _mode
 * not 0) and is not unbuffered is flushed and made unbuffered, its
 * read, write and buffer pointers then its own one-byte _shortbuf or
 * 0; a buffer glibc allocated stays noted in the stream (_freeres_buf,
 * for __libc_freeres), one the program gave (_IO_USER_BUF) is pointed
 * to by nothing of the stream's.  valgrind's leak check comes after
 * that: such a buffer the program dropped its own pointer to is
 * definitely lost, where memcheck found it still reachable through the
 * stream (tests/prog/plain_leak_setvbuf: 1,536 B in 2 blocks).  So at
 * a scan inside exit those eight words of each such stream are not
 * read: cut out of the roots where the stream lies in an object's data
 * (stdin, stdout, stderr), out of its block where fopen made it (the
 * alternate stacks' cuts: at most MC_HEAP_STACKS in all; past that, or
 * a stream neither, it is read whole, as before).  Under valgrind's
 * text with freeres, __libc_freeres ran that clean-up before the scan:
 * every stream is unbuffered, none cut.  A stream with ungetc's backup
 * area (_IO_backup_base set) has it freed by the same clean-up first,
 * its three save pointers then 0 (counted freed before the scan:
 * life.c's stdio_exit_freed): cut with the eight, as the stream that
 * reads the area (_IO_IN_BACKUP) holds the buffer in _IO_save_base
 * (read whole before: the buffer still reachable where valgrind says
 * definitely lost); where the area is still a live block (another
 * thread ran at the exit), the stream is read as before.  (glibc's clean-up treats
 * old-ABI streams apart, which only a C library with 2.0-compatible
 * symbols has: not x86-64's.) */

/* Rare: out of line, in group 7. */
static __attribute__((noinline, cold)) void stdio_cut(struct graph *g, struct mc_roots *rs,
						      const FILE *f)
{
	uintptr_t p = (uintptr_t)f;
	uintptr_t lo = p + offsetof(FILE, _IO_read_ptr), hi = p + offsetof(FILE, _IO_save_base);
	int64_t i;
	if (f->_IO_backup_base) {
		/* the area counted freed (life.c), or still live: another
		 * thread ran at the exit, or it is no block of the table's;
		 * live, the stream is read as before (whole where it reads
		 * the area) */
		uintptr_t area = (uintptr_t)(f->_flags & MC_IO_IN_BACKUP ? f->_IO_read_base
									: f->_IO_save_base);
		i = lookup(g, area);
		if (i < 0 || g->v[i].lo != area)
			hi = p + offsetof(FILE, _markers);
		else if (f->_flags & MC_IO_IN_BACKUP)
			return;
	}
	if (mc_roots_in_data(rs, p, sizeof *f)) {
		mc_roots_cut(rs, lo, hi);
	} else if ((i = lookup(g, p)) >= 0 && g->v[i].lo == p && g->v[i].size >= sizeof *f &&
		   g->ncut < MC_HEAP_STACKS) {
		g->cut[g->ncut] = (struct mc_heap_stack){ .lo = lo, .hi = hi };
		g->cut_node[g->ncut++] = (size_t)i;
		g->slow_drain = true;
	}
}

/* At every scan inside exit (inlined in mc_scan_pass, group 1: 0x70
 * bytes more there with the call's test; out of line, and bounded,
 * 0x89 bytes and the call pushed the head of .text.mc_last that a
 * leaking exit under jemalloc runs into the fifth 64 KiB block:
 * test_codeblocks 12 rows), its rare part in group 7.  The list is the C
 * library's own, which its exit walks right after the report, as far,
 * reading the same words of each stream: none is read here that exit
 * does not read then (a stopped thread in the middle of fopen or fclose
 * leaves it linked either way); a stream without glibc's magic ends
 * the walk. */
static inline void stdio_cuts(struct graph *g, struct mc_roots *rs)
{
	for (const FILE *f = *mc_io_list_all; f; f = f->_chain) {
		if (((unsigned)f->_flags & MC_IO_MAGIC_MASK) != MC_IO_MAGIC)
			return;
		if ((f->_flags & (MC_IO_USER_BUF | MC_IO_UNBUFFERED)) == MC_IO_USER_BUF &&
		    f->_mode != 0)
			stdio_cut(g, rs, f);
	}
}

/* The marked blocks scanned in turn, until none is left.  A check of the
 * deadline in this loop was 4 instructions a block on every exit's scan
 * (callgrind, 200,000 blocks: drain 25.3 M -> 26.1 M): the timed loop
 * is apart, as is the loop with cuts or blocks not read. */
static void drain(struct graph *g, int64_t clique)
{
	if (unlikely(g->slow_drain)) {
		drain_cut(g, clique);
		return;
	}
	if (unlikely(mc_fatal_deadline_ns != 0)) {
		drain_timed(g, clique);
		return;
	}
	while (g->nmark)
		drain_one(g, clique);
}

/* A start of a live block: a DTV from malloc is not a root (roots.c). */
static bool is_block_start(uintptr_t p, void *arg)
{
	const struct graph *g = arg;
	int64_t i = lookup(g, p);
	return i >= 0 && g->v[i].lo == p;
}

/* The roots from the first'th on (state 0 is MC_KIND_DEFINITE:
 * unreached), until every block is reachable: how many were read. */
static size_t scan_roots(struct graph *g, const struct mc_roots *rs, size_t first)
{
	size_t i = first;
	for (; i < mc_roots_count(rs) && g->reached < g->n && !cut; i++) {
		const struct mc_root *r = mc_roots_at(rs, i);
		if (r->kind != MC_ROOT_PLAIN)
			scan_allocator_root(g, r->lo, r->hi, r->kind);
		else
			scan_range(g, r->lo, r->hi, true, -1);
		drain(g, -1);
	}
	return i;
}

/* Node i's turn as a leader, lower first.  The block of an unreached
 * cycle that is definitely lost is the one that leads first.  valgrind's turns are by address in its own heap, which is the
 * order of allocation there; the table keeps no block's time, but a
 * block's stack id is the ordinal of its stack, first seen when a block
 * was first allocated there, and a structure's blocks are made along
 * one path: its head's site is seen before its members'.  So a cycle
 * whose blocks come from different sites is led by the block of the
 * site seen first, one whose blocks share a site by the lowest address,
 * as before.  expat's parser and its DTD point at each other (the DTD's
 * hash tables keep the parser): valgrind and glibc say the parser
 * (1,112 bytes) is definitely lost, tcmalloc's address order said the
 * DTD (376 bytes), from another line; a block in a chunk glibc reused
 * came before the cycle's older block (tests/prog/plain_leak_reused.c). */
static uint64_t turn_key(const struct graph *g, size_t i)
{
	return (uint64_t)g->v[i].stack << 32 | i; /* the nodes are in address order */
}

static void sift_down(uint64_t *h, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && h[c] < h[c + 1])
			c++;
		if (h[i] >= h[c])
			return;
		uint64_t t = h[i];
		h[i] = h[c];
		h[c] = t;
	}
}

/* A heap sort, in place: qsort may call malloc (glibc's, for an array
 * above a page), which the scan may not. */
void mc_scan_sort_ids(uint64_t *h, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(h, i, n);
	for (size_t k = n; k-- > 1;) {
		uint64_t t = h[0];
		h[0] = h[k];
		h[k] = t;
		sift_down(h, 0, k);
	}
}

/* Step 3: the cliques, each unreached block leading in its turn
 * (turn_key).  Where the unreached blocks' stacks already rise with
 * their addresses (one site's lost lists: test_leakkinds's million
 * blocks) or the turns' array cannot be mapped, in address order. */
static void cliques(struct graph *g)
{
	size_t m = 0;
	bool in_turn = true;
	uint32_t last = 0;
	for (size_t i = 0; i < g->n; i++)
		if (g->state[i] == MC_KIND_DEFINITE) {
			m++;
			in_turn &= g->v[i].stack >= last;
			last = g->v[i].stack;
		}
	uint64_t *turn = m && !in_turn ? mc_map(m * sizeof *turn) : NULL;
	if (turn) {
		size_t k = 0;
		for (size_t i = 0; i < g->n; i++)
			if (g->state[i] == MC_KIND_DEFINITE)
				turn[k++] = turn_key(g, i);
		mc_scan_sort_ids(turn, m);
	}
	for (size_t k = 0; k < (turn ? m : g->n); k++) {
		size_t i = turn ? (uint32_t)turn[k] : k;
		if (g->state[i] != MC_KIND_DEFINITE)
			continue;
		push(g, i);
		drain(g, (int64_t)i);
	}
	if (turn)
		mc_unmap(turn, m * sizeof *turn);
}

/* The counters at the moment the blocks are read (the exit's record adds
 * up: allocations - frees = the blocks in use, their kinds' sum the
 * same).  Each thread counts a call after its change to the table: the
 * sum waits until the table is held, no change comes into it, and the
 * other threads are stopped, so that a thread that had changed the
 * table but not yet counted it has had the collection's time to count
 * it.  slot_lock is taken before the table (fork's order) and held
 * until the sum: a stopped thread could hold it otherwise.  Under it
 * no thread starts or retires a slot; the sum is taken once a pass
 * (moment_taken), the lock given back then. */
static struct mc_totals moment;
static bool moment_taken;

static inline __attribute__((always_inline)) void moment_take(bool locks)
{
	if (!locks || moment_taken)
		return;
	mc_account_sum_held(&moment);
	moment_taken = true;
	mc_account_threads_unlock();
}

/* The mark stack holds each node at most twice while roots are traced
 * (its state only rises: unreached, possible, reachable) and once more
 * while cliques are: 2n + 1 entries, n + 16 allotted per n. */
static bool scan_work(struct graph *g, struct mc_roots *rs, const struct mc_scan_from *from,
		      struct mc_buf *runs)
{
	uint32_t stack_idx[IDX_STACK + 1];
	/* The table's locks hold other threads off it.  A caller that is
	 * the process's only thread (from->alone: /proc/self/status read
	 * at this region's end said one thread, and no thread starts
	 * before this one starts it, which a region's end does not) has
	 * none to hold off, and its own calls meanwhile are memcheck's (the
	 * guard held: ownheap.c) or a signal handler's, queued
	 * (signals.c): the walk takes no lock, as mc_threads_stop stops
	 * no thread.  Premise: no thread comes into the process without
	 * this one starting it (a signal handler starting one is the
	 * case it does not cover; pthread_create is not async-signal-safe).
	 * lock_all + unlock_all were ~10 K instructions of a
	 * single-threaded exit's 33 K scan (256 shards, bench/suite_test 1). */
	bool locks = !from->alone;
	moment_taken = false;
	if (locks) {
		mc_account_threads_lock(); /* before the table, as fork */
		mc_blocks_lock_all();
	}
	g->cap = mc_blocks_count() + 16;
	cut = false;
	bool ok = graph_map(g);
	if (ok) {
		mc_blocks_each_live_locked(collect, g);
		ok = sort_nodes(g);
	}
	if (ok && g->n && !(unlikely(mc_fatal_deadline_ns != 0) && past_deadline())) {
		/* not cold: a call gcc takes for cold lies in mc_scan_pass's
		 * .cold part, a 64 KiB block past group 7's tails_take, which
		 * every threaded process's exit then ran from
		 * (test_codeblocks: 6 blocks, 5 before) */
		if (mc_account_ntails != 0)
			tails_take(g);
		g->min = g->v[0].lo;
		for (size_t i = 0; i < g->n; i++) {
			uintptr_t end = g->v[i].lo + (g->v[i].size ? g->v[i].size : 1);
			if (end > g->max)
				g->max = end;
		}
		/* Only where the RSS figures are measured, which the zero
		 * pages a read of a block's untouched pages maps would be in
		 * (the statistics' retained bytes), a measured process's
		 * code (group 2b): every exit under jemalloc and tcmalloc has
		 * such a block (the allocator's own), every C++ program's
		 * (libstdc++'s emergency pool), and where nothing is measured
		 * the pages it spares cost about what a 64 KiB block of
		 * code more does (test_codeblocks: one more, merge of
		 * session 47) */
		if (unlikely(g->sizes >= SPARSE) && g->n <= SPARSE_NODES &&
		    mc_footprint_measuring())
			sparse_find(g);
		index_build(g, stack_idx);
		/* Other threads are held still from here on.  The roots
		 * that /proc/self/maps cuts come last, and only when needed
		 * (mc_roots_rest): a state only rises, reachable is the
		 * highest, and once every block is reachable no root left
		 * can change one.  A clean exit's few blocks (stdio's
		 * buffers) are found in the C library's data. */
		mc_roots_stop(rs, from);
		if (unlikely(atomic_load_explicit(&mc_program_altstack, memory_order_relaxed)))
			heap_stacks_take(g, rs);
		if (from->by_exit && mc_io_list_all)
			stdio_cuts(g, rs);
		moment_take(locks);
		size_t done = scan_roots(g, rs, 0);
		/* A JSON report names the frames of its sites, for which
		 * elfmod.c reads the maps the scan lends (a read of the whole
		 * file of its own otherwise: ~13 K instructions more than the
		 * scan's, bench/suite_test 1): read then in any case. */
		if (g->reached < g->n || mc_opt.report) {
			mc_roots_rest(rs, from, is_block_start, g);
			scan_roots(g, rs, done);
		}
		if (unlikely(nfreed_ids) && !cut)
			freed_reached(g);
		if (!cut)
			cliques(g); /* a drain cut there returns at once */
		if (g->tail != NULL)
			tails_give_back(g);
	}
	moment_take(locks);
	mc_roots_end(rs, runs);
	if (locks)
		mc_blocks_unlock_all();
	index_free(g, stack_idx);
	if (g->mark && !g->joined)
		mc_unmap(g->mark, 2 * g->cap * sizeof *g->mark);
	return ok && !cut;
}

bool mc_scan_cut(void)
{
	return cut;
}

/* The runs lent to the symbolizer until the scan is freed: their open
 * /proc/self/maps is the one number a program at its open-file limit
 * may have left, which the suppression files and the report need more
 * (mc_emfile_release_add); the symbolizer then opens a copy a question. */
static struct mc_buf *_Atomic lent;

static bool release_lent(void)
{
	struct mc_buf *runs = atomic_load(&lent);
	return runs && mc_maps_runs_release(runs);
}

bool mc_scan_pass(struct mc_scan *out, const struct mc_scan_from *from, bool own,
		  const void *regs, size_t nregs, const uint64_t *pool, size_t npool)
{
#if SCAN_AVX2
	if (!avx2)
		avx2 = mc_cpu_avx2() ? 2 : 1; /* sys.c: no cpuid trap */
#endif
	/* Without from (own), out may lie in the callers' frames, a root,
	 * and is cleared whole; with it, the stack is read from from->sp
	 * up, above memcheck's frames (region.c's, out's), and runs_copy
	 * (3 KiB, read to runs.len only) is left as it is. */
	memset(out, 0, own ? sizeof *out : offsetof(struct mc_scan, runs_copy));
	/* Roots that need locks first (roots.c): dl_iterate_phdr takes the
	 * dynamic linker's lock, which a thread waiting for the table inside
	 * dlopen's malloc may hold. */
	struct mc_roots *rs = mc_roots_begin();
	if (!rs)
		return false;
	if (regs)
		mc_roots_add(rs, (uintptr_t)regs, (uintptr_t)regs + nregs);
	struct graph g;
	memset(&g, 0, sizeof g);
	g.pool = pool;
	g.npool = npool;
	g.slow_drain = nfreed_ids > 0;
	struct mc_buf runs = { .s = out->runs_copy, .cap = sizeof out->runs_copy };
	bool ok = scan_work(&g, rs, from, &runs);
	if (!ok) {
		mc_maps_runs_close(&runs); /* the maps asked through it, if any */
		nodes_unmap(g.v, g.state, g.cap, g.joined);
		if (g.credit)
			mc_unmap(g.credit, g.cap * sizeof *g.credit);
		if (g.heur)
			mc_unmap(g.heur, g.cap);
		return false;
	}
	out->n = g.n;
	out->cap = g.cap;
	out->v = g.v;
	out->state = g.state;
	out->joined = g.joined;
	out->credit = g.credit;
	out->heur = g.heur;
	out->runs = (struct mc_buf){ .s = out->runs_copy, .len = runs.len };
	if (out->runs.len) {
		mc_symbolize_maps_lend(&out->runs);
		atomic_store(&lent, &out->runs);
		mc_emfile_release_add(release_lent);
	}
	return true;
}

void mc_scan_each(const struct mc_scan *s, uint32_t min_epoch,
		  void (*fn)(const struct mc_block *, int kind, uint64_t credit, void *),
		  void *arg)
{
	const struct node *v = s->v;
	for (size_t i = 0; i < s->n; i++) {
		if (v[i].epoch < min_epoch)
			continue;
		struct mc_block b = { v[i].lo, v[i].size, v[i].stack, v[i].epoch };
		fn(&b, s->state[i], s->credit ? s->credit[i] : 0, arg);
	}
}

void mc_scan_heuristics(const struct mc_scan *s, uint32_t min_epoch,
			struct memcheck_count out[MC_HEUR_N])
{
	memset(out, 0, MC_HEUR_N * sizeof *out);
	const struct node *v = s->v;
	for (size_t i = 0; s->heur && i < s->n; i++)
		if (s->heur[i] && v[i].epoch >= min_epoch) {
			out[s->heur[i]].blocks++;
			out[s->heur[i]].bytes += v[i].size;
		}
}

void mc_scan_free(struct mc_scan *s)
{
	if (s->runs.len) {
		struct mc_buf *was = &s->runs;
		atomic_compare_exchange_strong(&lent, &was, NULL);
		mc_symbolize_maps_lend(NULL);
		mc_maps_runs_close(&s->runs); /* the maps asked through it (mc_roots_end) */
	}
	nodes_unmap(s->v, s->state, s->cap, s->joined);
	if (s->credit)
		mc_unmap(s->credit, s->cap * sizeof *s->credit);
	if (s->heur)
		mc_unmap(s->heur, s->cap);
	/* runs_copy (3 KiB) is read to runs.len only; mc_scan clears it
	 * where it may lie in a root (see there) */
	memset(s, 0, offsetof(struct mc_scan, runs_copy));
}

bool mc_scan_totals(struct mc_totals *t)
{
	if (moment_taken)
		*t = moment;
	return moment_taken;
}

struct moment_walk {
	uint32_t min_epoch;
	void (*fn)(const struct mc_block *, void *);
	void *arg;
	size_t n;
};

static void moment_one(const struct mc_block *b, void *arg)
{
	struct moment_walk *w = arg;
	if (b->aux < w->min_epoch)
		return;
	w->n++;
	if (w->fn)
		w->fn(b, w->arg);
}

/* As the scan's moment (see moment_take); stop: the other threads
 * stopped too, as the scan stops them, so that none is caught between
 * its change to the table and its count of it (threads.c puts such a
 * stop off); else the walk's time is theirs to count what they changed
 * before it. */
size_t mc_scan_moment(uint32_t min_epoch, void (*fn)(const struct mc_block *, void *),
		      void *arg, struct mc_totals *t, bool stop)
{
	struct moment_walk w = { min_epoch, fn, arg, 0 };
	struct mc_threads th;
	mc_account_threads_lock();
	mc_blocks_lock_all();
	bool stopped = stop && mc_threads_stop(&th, false);
	mc_blocks_each_live_locked(moment_one, &w);
	mc_account_sum_held(t);
	mc_account_threads_unlock();
	if (stopped)
		mc_threads_resume(&th);
	mc_blocks_unlock_all();
	return w.n;
}
