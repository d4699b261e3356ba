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
 * named, pagemap's present bits of the window one fault there may map
 * are read before the load and again at the read's end: the file pages
 * that became present in between are memcheck's (kept by 64 KiB block,
 * a mask of its pages), exactly, whatever the kernel mapped with the
 * page the read faulted.  A block named again costs no system call: a
 * lock-free look-up in a table of blocks seen (a read's last block
 * first, which most of a binary search's probes are in); seen are the
 * blocks named and every block whose pages in a window read are all
 * present (nothing there left to fault).  Measured, each recorded page
 * is counted while pagemap says it is mapped (dlclose unmaps it).
 *
 * The window: one fault maps pages through one page table, never more
 * (2 MiB on x86-64), and within the faulting VMA.  Linux's fault-around
 * maps the page-cache pages of a fault_around_bytes window (64 KiB by
 * default, a debugfs setting up to the table's 2 MiB) aligned to its
 * size and clipped to the table and the VMA; newer kernels (patches of
 * September 2025) make a fault and fault-around map a large folio of
 * the page cache whole where it fits in the table and the VMA
 * ("mm/fault: try to map the entire file folio in finish_fault()",
 * "mm/filemap: map entire large folio faultaround"); a PMD-sized folio
 * is mapped by the table's entry itself.  So the window is the 2
 * MiB-aligned 2 MiB around the address,
 * within the object's segment that holds it (its program headers, read
 * where the dynamic linker mapped the ELF header; the whole object where
 * they cannot be read).  Watching the 64 KiB block alone missed the
 * rest: a 2 MiB file on a tmpfs mounted huge=always, one read fault
 * mapped all 512 pages and 16 were recorded (unit_ownread's huge-page
 * case, which fails that way on main); the official CI's kernel
 * presumably mapped a large folio of a 256 KiB file the same way.
 * Only file pages count (pagemap's bit 61): memcheck's anonymous memory
 * in the window (a table it maps beside a library) is footprint.c's.
 *
 * Premises: a block's pages that memcheck's read did not fault (not in
 * the page cache then) and that it reads later fault in without being
 * recorded: fault-around maps every page-cache page of its window at
 * the first fault, so this happens only for a file partly evicted.  A
 * page another thread of the program faulted in the window in the same
 * microseconds is counted as memcheck's.  A page memcheck faulted in
 * that the program reads later (a C++ throw's unwinder reads the same
 * tables) stays memcheck's: the program would have faulted it bare
 * (measured in tests/test_rss_self.c's throwing row).  Nothing here can
 * tell (session 29, doc/costs.md): the kernel shows no read of a page
 * already mapped, and the pages the program reads are those memcheck
 * named (the table's first probes, .rodata's last page where
 * .eh_frame_hdr begins), so giving back the rest of the block changed no
 * row; giving back every page a read faulted made the C++ and GLib rows
 * exact, but madvise's zap puts the pages in the kernel's peak mark
 * first (a read at the program's peak: peak_rss up by the block) and
 * each later read faults them in again.  What would: reading the tables
 * through a mapping of memcheck's own, never the program's.  The object's
 * first page (ELF and program headers) is present when its segment is
 * looked up: the dynamic linker read the program headers there when it
 * loaded the object (_dl_find_object's data); were it not, reading it
 * faults it before the window's first read, and what that fault mapped
 * counts as the program's.  The read-only segment of an object is a VMA
 * of its own (here the RELRO part after it is one apart, written by
 * relocation: /proc/self/maps of libc).
 *
 * Cost, main (dec8ddf) -> ownread22's base: system calls (strace -f -c)
 * 162 -> 177 for bench/suite_test 1 (3 reads with a new block: an open
 * of pagemap, 2 preads, a close each; pagemap read once more at each
 * measure), CPU +51 us a process (3,000 alternated pairs).  The window
 * (4925548 -> this): system calls the same (154 for suite_test 1: the
 * preads are larger, not more: the C library's window is its 83-page
 * read-only segment, 664 bytes of pagemap, the program's 1 page, where
 * 16 pages were read before); instructions (callgrind, whole process)
 * 698,032 -> 700,644; a pread of 83 entries at the C library's tables
 * ~2.3 us against ~1.7 us for 16 (2,000 pairs by turns, 200 preads
 * each), 512 entries ~3.8 us.  Timing a whole suite_test 1 by turns
 * did not resolve it: perf stat -r 100, 15-30 rounds, the median of
 * the rounds' differences +60 to +80 us, and the same library against
 * a copy of itself +230 us.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <stdatomic.h>

#include "internal.h"

#define BLOCK_PAGES 16 /* 1 << MC_OWN_BLOCK_SHIFT bytes of 4 KiB pages */
#define SEEN_BITS 9
#define SEEN_SLOTS (1u << SEEN_BITS)
#define MAX_OWNED 128 /* a 2 MiB window whole is 32 */

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

/* The pages [*first, *first + *pages) of the window a fault at address
 * a may map: the 2 MiB that one page table maps (a fault maps pages
 * through one table: fault-around's window is aligned to its size and
 * clipped to the table, a large folio of the page cache is mapped whole
 * only where it fits in the table, a PMD mapping is that table's reach)
 * and within a's VMA, taken as the segment of the object at [lo, hi)
 * that holds a (its program headers, read where the first segment maps
 * the ELF header), or the whole object where they cannot be read. */
static void window(uintptr_t a, uintptr_t lo, uintptr_t hi, uintptr_t *first, uint32_t *pages)
{
	uintptr_t wlo = a & ~(((uintptr_t)1 << MC_OWN_WINDOW_SHIFT) - 1);
	uintptr_t whi = wlo + ((uintptr_t)1 << MC_OWN_WINDOW_SHIFT);
	if (a < lo || a >= hi)
		lo = hi = 0; /* not the object's: the table's reach alone */
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)lo;
	if (lo && hi - lo >= sizeof *eh && eh->e_ident[EI_MAG0] == ELFMAG0 &&
	    eh->e_ident[EI_MAG1] == ELFMAG1 && eh->e_ident[EI_MAG2] == ELFMAG2 &&
	    eh->e_ident[EI_MAG3] == ELFMAG3 &&
	    eh->e_phentsize == sizeof(ElfW(Phdr)) &&
	    eh->e_phoff + (uintptr_t)eh->e_phnum * sizeof(ElfW(Phdr)) <= hi - lo) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(lo + eh->e_phoff);
		uintptr_t bias = 0, slo = 0, shi = 0;
		bool based = false;
		for (int i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type != PT_LOAD)
				continue;
			if (!based) { /* the first PT_LOAD maps at lo */
				bias = lo - (ph[i].p_vaddr & ~(uintptr_t)4095);
				based = true;
			}
			uintptr_t s = (bias + ph[i].p_vaddr) & ~(uintptr_t)4095;
			uintptr_t e = mc_page_round(bias + ph[i].p_vaddr + ph[i].p_memsz);
			if (a >= s && a < e) {
				slo = s;
				shi = e;
			}
		}
		if (shi) {
			lo = slo;
			hi = shi;
		}
	}
	if (hi) {
		wlo = wlo > lo ? wlo : lo;
		whi = whi < hi ? whi : hi;
	}
	*first = wlo / 4096;
	*pages = (uint32_t)((whi - wlo) / 4096);
}

/* Pages [first, first + n) of a window, n <= 512, through pagemap (fd):
 * bits set in present[] where pagemap says present; in file[] (may be
 * NULL) where it also says a file's page (bit 61: memcheck's own
 * anonymous memory, which footprint.c counts apart, never is). */
static bool present(int fd, uintptr_t first, uint32_t n, uint64_t *present_bits, uint64_t *file)
{
	/* 128 entries a read (1 KiB of stack on malloc's path, which may run
	 * on a small thread stack or a signal stack; a whole 2 MiB window
	 * would take 4 KiB): the C library's read-only segment here, 83
	 * pages, is one read. */
	uint64_t e[128];
	for (uint32_t at = 0; at < n; at += 128) {
		uint32_t k = n - at < 128 ? n - at : 128;
		if (!mc_pagemap_read(fd, (first + at) * 4096, e, k))
			return false;
		for (uint32_t j = 0; j < k; j++) {
			uint32_t i = at + j;
			uint64_t bit = 1ull << (i % 64);
			if (i % 64 == 0) {
				present_bits[i / 64] = 0;
				if (file)
					file[i / 64] = 0;
			}
			if (e[j] >> 63) {
				present_bits[i / 64] |= bit;
				if (file && (e[j] >> 61 & 1))
					file[i / 64] |= bit;
			}
		}
	}
	return true;
}

static bool in_window(const struct mc_own_window *w, uintptr_t page)
{
	return page - w->first < w->pages;
}

void mc_own_read_new(struct mc_own_read *r, uintptr_t p, uintptr_t first, uintptr_t last)
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
		/* the read's first address in the block */
		uintptr_t a = b == first ? p : b << MC_OWN_BLOCK_SHIFT;
		int w = 0;
		while (w < r->nwin && !in_window(&r->win[w], a / 4096))
			w++;
		if (w == r->nwin) {
			if (r->nwin == MC_OWN_READ_WINDOWS)
				continue;
			int saved = errno;
			if (r->fd < 0)
				r->fd = mc_sys_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);
			struct mc_own_window *nw = &r->win[w];
			window(a, r->lo, r->hi, &nw->first, &nw->pages);
			bool ok = r->fd >= 0 && present(r->fd, nw->first, nw->pages, nw->before, NULL);
			errno = saved;
			if (!ok)
				continue;
			r->nwin++;
		}
		r->block[r->n++] = b;
	}
}

/* own_lock held: the pages of window w that became present (mine, bits
 * by page) recorded by block; the blocks named (and every block whose
 * pages in the window are all present: nothing there left to fault)
 * marked seen. */
static void record(const struct mc_own_read *r, const struct mc_own_window *w,
		   const uint64_t *mine, const uint64_t *after)
{
	uintptr_t b0 = w->first >> (MC_OWN_BLOCK_SHIFT - 12);
	uintptr_t b1 = (w->first + w->pages - 1) >> (MC_OWN_BLOCK_SHIFT - 12);
	for (uintptr_t b = b0; b <= b1; b++) {
		uint32_t m = 0;
		bool full = true;
		for (int i = 0; i < BLOCK_PAGES; i++) {
			uintptr_t page = (b << (MC_OWN_BLOCK_SHIFT - 12)) + (uintptr_t)i;
			if (!in_window(w, page))
				continue;
			uintptr_t at = page - w->first;
			m |= (uint32_t)(mine[at / 64] >> (at % 64) & 1) << i;
			full &= after[at / 64] >> (at % 64) & 1;
		}
		if (m)
			owned_add(b, m);
		bool named = false;
		for (int k = 0; k < r->n && !named; k++)
			named = r->block[k] == b;
		if (named || full)
			seen_add(b);
	}
}

void mc_own_read_end(struct mc_own_read *r)
{
	if (r->fd < 0)
		return;
	int saved = errno;
	enum { WORDS = sizeof r->win[0].before / sizeof r->win[0].before[0] };
	uint64_t mine[MC_OWN_READ_WINDOWS][WORDS], after[MC_OWN_READ_WINDOWS][WORDS];
	bool ok[MC_OWN_READ_WINDOWS];
	for (int w = 0; w < r->nwin; w++) {
		const struct mc_own_window *win = &r->win[w];
		ok[w] = present(r->fd, win->first, win->pages, after[w], mine[w]);
		for (int i = 0; ok[w] && i < WORDS; i++)
			mine[w][i] &= ~win->before[i];
	}
	mc_sys_close(r->fd);
	r->fd = -1;
	/* Not taken: nothing recorded, the blocks stay unseen (a later
	 * read finds their pages present: the program's, as before). */
	if (lock_bounded()) {
		for (int w = 0; w < r->nwin; w++)
			if (ok[w])
				record(r, &r->win[w], mine[w], after[w]);
		unlock();
	}
	r->n = 0;
	r->nwin = 0;
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
