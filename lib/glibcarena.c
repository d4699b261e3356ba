/*
 * glibcarena.c - where the C library's allocator keeps its main arena, so
 * that the scan does not take the arena's words for the program's.
 *
 * The C library's writable data is a root of the scan (roots.c): the
 * program's FILEs, its environment array, atexit's records hang from
 * there.  Its allocator's main arena (`main_arena`, a struct malloc_state
 * in libc's .bss) lies there too, and valgrind, which replaces the
 * allocator, never sees what it holds: heads of the free lists, the top
 * chunk, and `last_remainder`, a hint that goes stale when the chunk it
 * named is handed out or merged.  A stale hint is the address of some
 * chunk's old header: the start of a block memalign aligned there (the
 * block then still reachable where valgrind says possibly lost), or any
 * word inside a block carved over it (a leaked block possibly lost where
 * valgrind says definitely).  scan.c already dismisses the one
 * interior address the arena's accurate words take (the next chunk's
 * header in a block's last usable word); this file finds the whole arena
 * so that none of its words is a root.
 *
 * `main_arena` is a local symbol (no dlsym, no .symtab in a stripped C
 * library), so it is found by its shape.  From the bins on, the layout
 * has not changed since glibc 2.26: the top chunk's and the last
 * remainder's addresses, then 127 bins of two words, then the bin map
 * (16 bytes) and the arena list's `next`.  An empty bin's two words both
 * hold the bin's own address less 16 (glibc's bin_at: the pair is read
 * as a chunk's fd/bk), a shape nothing else in the C library's data has;
 * a bin in use holds two chunk addresses (16-aligned, never in the C
 * library's data).  Most bins of any program are empty.  A candidate
 * whose 127 pairs all fit, with at least 16 empty, whose top is its
 * unsorted bin (an arena not used yet) or a chunk, and whose `next` is
 * itself or an address outside the segment, is the arena; two such
 * candidates, none (the scan then keeps the arena's words, as before).  Before the C library's malloc first runs the bins
 * are zeros: no arena is found, and zeros point at no block.
 *
 * Not here: the arenas of other threads, which lie in the allocator's
 * own mappings, are no roots anyway (mappings.c).
 */
#include <stdint.h>

#include "internal.h"

#define NPAIRS 127
#define PAIRS_BYTES (NPAIRS * 16)
/* relative to the first bin pair: fastbinsY[10] at -0x60, top at -0x10,
 * last_remainder at -8; after the pairs binmap[4], next, next_free,
 * attached_threads, system_mem, max_system_mem */
#define LEAD 0x60
#define TOP (-0x10)
#define NEXT (PAIRS_BYTES + 16)
#define TAIL (NEXT + 5 * 8)
#define MIN_EMPTY 16

static uintptr_t found_bins; /* the first pair, once found */

static inline uintptr_t word(uintptr_t at)
{
	return *(const uintptr_t *)at;
}

/* A chunk's address as the arena keeps it: 16-aligned (the allocator's
 * alignment), above the first 64 KiB, outside the C library's data.  Not
 * a bit map or a count, which lie where a misplaced candidate looks. */
static inline bool chunk_word(uintptr_t w, uintptr_t lo, uintptr_t hi)
{
	return !(w & 15) && w >= 0x10000 && (w < lo || w >= hi);
}

/* Does [s - LEAD, s + TAIL) in [lo, hi) look like the arena whose first
 * bin pair is at s? */
__attribute__((no_sanitize_address))
static bool arena_at(uintptr_t s, uintptr_t lo, uintptr_t hi)
{
	if (s - LEAD < lo || s + TAIL > hi)
		return false;
	uintptr_t top = word(s + TOP), next = word(s + NEXT);
	if (top != s - 16 && !chunk_word(top, lo, hi))
		return false;
	/* the arena list: itself (2.27 on, or before 2.27's flag word
	 * moved), or another arena, which lies in the allocator's mappings */
	if (next != s - LEAD - 0x10 && next != s - LEAD - 0x08 &&
	    ((next & 7) || next < 0x10000 || (next >= lo && next < hi)))
		return false;
	int empty = 0;
	for (uintptr_t p = s; p < s + PAIRS_BYTES; p += 16) {
		uintptr_t fd = word(p), bk = word(p + 8);
		if (fd == p - 16 && bk == p - 16)
			empty++;
		else if (!chunk_word(fd, lo, hi) || !chunk_word(bk, lo, hi))
			return false;
	}
	return empty >= MIN_EMPTY;
}

/* Is the pair at p an empty bin (its words its own address less 16), or
 * one in use (two chunks)? */
static inline bool bin_like(uintptr_t p, uintptr_t lo, uintptr_t hi)
{
	uintptr_t fd = word(p), bk = word(p + 8);
	return (fd == p - 16 && bk == p - 16) || (chunk_word(fd, lo, hi) && chunk_word(bk, lo, hi));
}

/* The arena's first bin pair in [lo, hi) (8-aligned), else 0.  Most of
 * the bins' 2,032 bytes are empty pairs, so probes 256 bytes apart (both
 * word parities) meet one; from there the pairs are walked back to the
 * first word that is no bin, and the candidates after it tried: the
 * arena's top and last_remainder make one more bin-like pair before the
 * bins, its fast bins (zeros, or chunks) maybe more.  The first that
 * passes decides, unless the one after it passes too. */
__attribute__((no_sanitize_address))
static uintptr_t arena_find(uintptr_t lo, uintptr_t hi)
{
	for (uintptr_t probe = lo + 16; probe + 16 <= hi; probe += 256) {
		for (uintptr_t p = probe; p < probe + 16 && p + 16 <= hi; p += 8) {
			if (word(p) != p - 16 || word(p + 8) != p - 16)
				continue;
			uintptr_t q = p;
			while (q - 16 >= lo && p - q < PAIRS_BYTES + 64 && bin_like(q - 16, lo, hi))
				q -= 16;
			for (uintptr_t s = q; s <= p; s += 16)
				if (arena_at(s, lo, hi))
					return arena_at(s + 16, lo, hi) ? 0 : s;
		}
	}
	return 0;
}

bool mc_glibc_arena(uintptr_t lo, uintptr_t hi, uintptr_t *alo, uintptr_t *ahi)
{
	uintptr_t s = found_bins;
	if (s && (s - LEAD < lo || s + TAIL > hi))
		return false; /* in another of the segment's resident runs */
	if (!(s && arena_at(s, lo, hi))) {
		s = arena_find(lo, hi);
		if (!s)
			return false;
		found_bins = s;
	}
	*alo = s - LEAD;
	*ahi = s + TAIL;
	return true;
}
