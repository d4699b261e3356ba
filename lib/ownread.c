/*
 * ownread.c - pages of the program's files that memcheck's own reads
 * made resident, counted as memcheck's (footprint.c adds them to M).
 *
 * cfi.c reads the C library's and libstdc++'s .eh_frame_hdr and
 * .eh_frame where the dynamic linker mapped them, in the program's
 * time, from malloc's path: the pages it faults in are the process's
 * RSS like any other, and were counted as the program's (tests/prog/
 * rss_self_cxx, glibc, smaps at exit, bare vs memcheck: libstdc++'s
 * read-only mapping 128 -> 320 KiB, libc's 156 -> 220 KiB).
 *
 * How: a read (mc_own_read_begin .. _end) names each address before it
 * loads from it (mc_own_read_at).  The first time a 64 KiB block is
 * named, pagemap's present bits of its 16 pages are read before the
 * load and again at the read's end: the pages that became present in
 * between are memcheck's (the block's mask), exactly, whatever the
 * kernel's fault-around mapped with them.  A block named again costs
 * no system call: a lock-free look-up in a table of blocks seen (a
 * read's last block first, which most of a binary search's probes are
 * in).  Measured, each recorded page is counted while pagemap says it
 * is mapped (dlclose unmaps it).
 *
 * Premises: a block's pages that memcheck's read did not fault (not in
 * the page cache then) and that it reads later fault in without being
 * recorded: fault-around (64 KiB windows, the kernel's default
 * fault_around_bytes) maps every page-cache page of the window at the
 * first fault, so this happens only for a file partly evicted.  A page
 * another thread of the program faulted in the same microseconds is
 * counted as memcheck's.  A page memcheck faulted in that the program
 * reads later (a C++ throw's unwinder reads the same tables) stays
 * memcheck's: the program would have faulted it bare (measured in
 * tests/test_rss_self.c's throwing row).
 *
 * Cost, main (dec8ddf) -> this: system calls (strace -f -c) 162 -> 177
 * for bench/suite_test 1 (3 reads with a new block: an open of pagemap,
 * 2 preads, a close each; pagemap read once more at each measure), 409
 * -> 447 for tests/prog/rss_self_cxx; instructions (callgrind) 893,985
 * -> 895,825 and 5,333,195 -> 5,351,111; CPU time of suite_test 1, 3,000
 * alternated pairs on the loaded 2-CPU VM, +51 us a process (median of
 * the pairs; main against itself -9 us).  The opens are most of it: one
 * read context for a whole capture (stacks.c) would make suite_test's
 * three one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>

#include "internal.h"

#define BLOCK_PAGES 16 /* 1 << MC_OWN_BLOCK_SHIFT bytes of 4 KiB pages */
#define SEEN_BITS 9
#define SEEN_SLOTS (1u << SEEN_BITS)
#define MAX_OWNED 64

/* Blocks seen (block number + 1; 0: a free slot), open addressing. */
static _Atomic uintptr_t seen[SEEN_SLOTS];
static unsigned nseen;
/* No room left: nothing more is recorded (its pages the program's, as
 * before there was this file). */
static atomic_bool seen_full;
/* Blocks where memcheck's reads made pages present, and which (bit i:
 * the block's page i), sorted by block. */
static struct owned {
	uintptr_t block;
	uint32_t mask;
} owned[MAX_OWNED];
static int nowned;
static atomic_flag own_lock = ATOMIC_FLAG_INIT;

/* Set by footprint.c when the RSS figures start to be measured. */
static atomic_bool recording;

void mc_own_read_on(void)
{
	atomic_store_explicit(&recording, true, memory_order_relaxed);
}

bool mc_own_read_recording(void)
{
	return atomic_load_explicit(&recording, memory_order_relaxed);
}

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&own_lock, memory_order_acquire))
		;
}

/* The same where the caller may be a signal handler's capture that
 * interrupted this thread inside the lock (a spin would never end): a
 * bounded spin, false when it did not get the lock (as cfi.c's CIE memo
 * takes its lock with a try, never waits). */
static bool lock_bounded(void)
{
	for (int i = 0; i < 4096; i++) {
		if (!atomic_flag_test_and_set_explicit(&own_lock, memory_order_acquire))
			return true;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	return false;
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&own_lock, memory_order_release);
}

static unsigned slot(uintptr_t key)
{
	return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - SEEN_BITS));
}

static bool seen_has(uintptr_t block)
{
	uintptr_t key = block + 1;
	for (unsigned i = slot(key), k = 0; k < SEEN_SLOTS; k++, i = (i + 1) % SEEN_SLOTS) {
		uintptr_t v = atomic_load_explicit(&seen[i], memory_order_acquire);
		if (v == key)
			return true;
		if (v == 0)
			break;
	}
	return atomic_load_explicit(&seen_full, memory_order_relaxed);
}

/* own_lock held. */
static void seen_add(uintptr_t block)
{
	uintptr_t key = block + 1;
	if (nseen >= SEEN_SLOTS * 3 / 4) {
		atomic_store_explicit(&seen_full, true, memory_order_relaxed);
		return;
	}
	unsigned i = slot(key);
	for (;; i = (i + 1) % SEEN_SLOTS) {
		uintptr_t v = atomic_load_explicit(&seen[i], memory_order_relaxed);
		if (v == key)
			return;
		if (v == 0)
			break;
	}
	nseen++;
	atomic_store_explicit(&seen[i], key, memory_order_release);
}

/* own_lock held. */
static void owned_add(uintptr_t block, uint32_t mask)
{
	int i = 0;
	while (i < nowned && owned[i].block < block)
		i++;
	if (i < nowned && owned[i].block == block) {
		owned[i].mask |= mask; /* two threads' reads of one block */
		return;
	}
	if (nowned == MAX_OWNED)
		return;
	memmove(&owned[i + 1], &owned[i], (size_t)(nowned - i) * sizeof owned[0]);
	owned[i] = (struct owned){ block, mask };
	nowned++;
}

/* The present bits of block's pages, through pagemap (fd). */
static bool present(int fd, uintptr_t block, uint32_t *mask)
{
	uint64_t e[BLOCK_PAGES];
	if (!mc_pagemap_read(fd, block << MC_OWN_BLOCK_SHIFT, e, BLOCK_PAGES))
		return false;
	uint32_t m = 0;
	for (int i = 0; i < BLOCK_PAGES; i++)
		m |= (uint32_t)(e[i] >> 63) << i;
	*mask = m;
	return true;
}

void mc_own_read_new(struct mc_own_read *r, uintptr_t first, uintptr_t last)
{
	for (uintptr_t b = first; b <= last && b - first < 4; b++) {
		if (b + 1 == r->last)
			continue;
		int k = 0;
		while (k < r->n && r->block[k] != b)
			k++;
		if (k < r->n)
			continue; /* named already in this read */
		if (seen_has(b)) {
			r->last = b + 1;
			continue;
		}
		if (r->n == MC_OWN_READ_BLOCKS)
			continue; /* left for a later read, which finds it present */
		int saved = errno;
		if (r->fd < 0)
			r->fd = mc_sys_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);
		uint32_t before;
		if (r->fd >= 0 && present(r->fd, b, &before)) {
			r->block[r->n] = b;
			r->before[r->n++] = before;
		}
		errno = saved;
	}
}

void mc_own_read_end(struct mc_own_read *r)
{
	if (r->fd < 0)
		return;
	int saved = errno;
	uint32_t after[MC_OWN_READ_BLOCKS];
	bool ok[MC_OWN_READ_BLOCKS];
	for (int k = 0; k < r->n; k++)
		ok[k] = present(r->fd, r->block[k], &after[k]);
	mc_sys_close(r->fd);
	r->fd = -1;
	/* Not taken: nothing recorded, the blocks stay unseen (a later
	 * read finds their pages present: the program's, as before). */
	bool locked = lock_bounded();
	for (int k = 0; locked && k < r->n; k++) {
		if (!ok[k])
			continue;
		seen_add(r->block[k]);
		uint32_t mine = after[k] & ~r->before[k];
		if (mine)
			owned_add(r->block[k], mine);
	}
	if (locked)
		unlock();
	r->n = 0;
	errno = saved;
}

/* Bytes of the recorded pages mapped now: through pagemap (fd), the
 * blocks within 32 of the first of a run in one pread (an object's
 * .eh_frame_hdr and .eh_frame lie together: libc's 180 KiB, one pread,
 * where a pread a block made rss_self_cxx's 449 system calls 8 more);
 * where fd is -1 or a read fails, every recorded page (they stay mapped
 * while their object is). */
#define SPAN 32
uint64_t mc_own_read_bytes(int fd)
{
	uint64_t pages = 0;
	int saved = errno;
	struct owned own[MAX_OWNED]; /* copied: no system call under the spin */
	lock();
	int nown = nowned;
	memcpy(own, owned, (size_t)nown * sizeof own[0]);
	unlock();
	for (int i = 0; i < nown;) {
		uintptr_t first = own[i].block;
		int n = 1;
		while (i + n < nown && own[i + n].block - first < SPAN)
			n++;
		uintptr_t span = own[i + n - 1].block - first + 1;
		uint64_t e[SPAN * BLOCK_PAGES];
		bool read = fd >= 0 &&
			    mc_pagemap_read(fd, first << MC_OWN_BLOCK_SHIFT, e, span * BLOCK_PAGES);
		for (int k = 0; k < n; k++) {
			const uint64_t *b = &e[(own[i + k].block - first) * BLOCK_PAGES];
			for (int p = 0; p < BLOCK_PAGES; p++)
				if (own[i + k].mask >> p & 1)
					pages += read ? b[p] >> 63 : 1;
		}
		i += n;
	}
	errno = saved;
	return pages * 4096;
}
