/*
 * startpages.c - the loaded objects' read-only pages that memcheck's
 * start-up made present, given back at the end of its window.
 *
 * Pages of the objects' code and read-only data (the C library's, the
 * dynamic linker's, the allocator's) that memcheck's start-up faults in
 * are not the program's: bare, the program has them only if it runs
 * that code itself, and a file's page stays mapped once faulted.
 * pthread_atfork, which memcheck must call before the program can fork,
 * faulted two 64 KiB blocks of the C library's under glibc (its code
 * beside fork and exec, a block of .rodata: perf trace -F all), and
 * footprint.c's settle_read left them to the program for the whole
 * process (tests/prog/plain_rss_exit's rss_end 132 KiB above its own
 * VmRSS at memcheck's take).  So footprint.c's first measure notes
 * which of those pages are present (mc_start_pages_note, through the
 * pagemap it holds open), and the window's end gives back the ones
 * present now that were not (mc_start_pages_give_back: MADV_DONTNEED;
 * the program, running that code later, faults them in as bare).
 *
 * Only pages of segments nothing writes (no PF_W: code, read-only
 * data), and of those only the file's own (pagemap's bit 61: a page
 * written in place, a debugger's breakpoint, a text relocation, is
 * anonymous, and dropping it would lose the write); libmemcheck's own
 * segments are M and stay.  Where the figures are not measured nothing
 * is read (footprint.c's measuring) and nothing given back.
 */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define PAGE 4096u
#define SEGS 48
#define BITS (64 * 512) /* pages noted: 128 MiB of read-only segments */
/* pagemap's entries, 512 pages a read: an object's adjoining read-only
 * segments in one (the C library's three: 463 pages).  Both callers
 * hold footprint.c's lock. */
#define READ 512

static struct {
	uintptr_t lo, len;
	unsigned at; /* its first bit in bits, a multiple of 64 */
} seg[SEGS];
/* The runs the last give-back made, for mc_start_pages_again (the first
 * RUNS of them). */
#define RUNS 8
static struct {
	uintptr_t lo;
	size_t len;
} given[RUNS];
int mc_start_given; /* how many of them */
static int nseg;
static unsigned used;
static uint64_t bits[BITS / 64];
static uint64_t entries[READ];

/* The 64-page word of the n entries at e: bit j set where entry j is
 * present and, with file, the file's own page too (bit 61 moved to 63
 * and and'ed with it).  A word at a time, where a bit at a time cost a
 * measured /bin/date 17.3 K instructions for its objects' ~1,000 pages,
 * 15.7 K so (callgrind). */
static uint64_t start_pages_word(const uint64_t *e, unsigned n, bool file)
{
	uint64_t m = 0, alone = file ? 0 : 1ull << 63;
	for (unsigned j = 0; j < n; j++)
		m |= ((e[j] & ((e[j] << 2) | alone)) >> 63) << j;
	return m;
}

/* The present bits of pages [lo, lo + pages * PAGE) from pagemap (fd)
 * into bits from bit at; false where a read came short.  fd -1: none
 * present. */
static bool start_pages_read(int fd, uintptr_t lo, unsigned pages, unsigned at)
{
	for (unsigned i = 0; fd < 0 && i < pages; i += 64)
		bits[(at + i) / 64] = 0;
	for (unsigned i = 0; fd >= 0 && i < pages; i += READ) {
		unsigned k = pages - i < READ ? pages - i : READ;
		if (!mc_pagemap_read(fd, lo + (uintptr_t)i * PAGE, entries, k))
			return false;
		for (unsigned j = 0; j < k; j += 64)
			bits[(at + i + j) / 64] =
				start_pages_word(entries + j, k - j < 64 ? k - j : 64, false);
	}
	return true;
}

/* [lo, lo + len) noted as a segment, its present bits read from
 * pagemap (fd; -1: none present); nothing where the table is full or a
 * read came short. */
static void start_pages_seg(int fd, uintptr_t lo, size_t len)
{
	unsigned pages = (unsigned)(len / PAGE);
	if (nseg < SEGS && pages + 63 <= BITS - used && start_pages_read(fd, lo, pages, used)) {
		seg[nseg].lo = lo;
		seg[nseg].len = len;
		seg[nseg++].at = used;
		used += (pages + 63) & ~63u;
	}
}

/* The pages of [blk, blk + BLOCK) that were not present before the
 * walk read the program headers there (hdr: their present bits then)
 * noted as not present, in the segments noted from first on. */
#define BLOCK (16 * PAGE) /* fault-around's */
static void start_pages_headers(int first, uintptr_t blk, uint64_t hdr)
{
	for (int s = first; s < nseg; s++)
		for (unsigned j = 0; j < BLOCK / PAGE; j++) {
			uintptr_t p = blk + (uintptr_t)j * PAGE;
			if (!(hdr >> j & 1) && p - seg[s].lo < seg[s].len) {
				unsigned b = seg[s].at + (unsigned)((p - seg[s].lo) / PAGE);
				bits[b / 64] &= ~(1ull << (b % 64));
			}
		}
}

struct start_pages_walk {
	int fd;
	bool headers; /* their block asked first (see start_pages_object) */
};

/* Each run of an object's adjoining read-only segments noted (the run
 * ends at a writable segment or the last header); fd -1: none of their
 * pages present (mc_start_pages_none).  The program headers' block is
 * asked of pagemap before they are read: in a forked child (fork
 * copies no page table entry of a mapping without anonymous pages) the
 * read faults it in, 64 KiB of each object's first segment, which the
 * bare child never maps and which were noted present, and kept, where
 * the exit's note (footprint.c mc_prog_peak_exit_note) came before the
 * allocator's statistics.  At start-up ld.so has read them already. */
static int start_pages_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const struct start_pages_walk *w = arg;
	int fd = w->fd;
	int n;
	uintptr_t bias;
	if (info->dlpi_phdr == mc_own_phdrs(&n, &bias))
		return 0; /* libmemcheck: M */
	uintptr_t blk = (uintptr_t)info->dlpi_phdr & ~(uintptr_t)(BLOCK - 1);
	uint64_t hdr = ~0ull;
	if (fd >= 0 && w->headers && mc_pagemap_read(fd, blk, entries, BLOCK / PAGE))
		hdr = start_pages_word(entries, BLOCK / PAGE, false);
	int first = nseg;
	uintptr_t lo = 0, hi = 0;
	for (int i = 0; i <= info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = i < info->dlpi_phnum ? &info->dlpi_phdr[i] : NULL;
		if (ph && (ph->p_type != PT_LOAD || !ph->p_memsz))
			continue;
		uintptr_t l = 0, h = 0;
		if (ph && !(ph->p_flags & PF_W)) {
			l = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(PAGE - 1);
			h = mc_page_round(info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
			if (hi && l == hi) { /* adjoining: one read */
				hi = h;
				continue;
			}
		}
		if (hi)
			start_pages_seg(fd, lo, hi - lo);
		lo = l, hi = h;
	}
	if (hdr != ~0ull)
		start_pages_headers(first, blk, hdr);
	return 0;
}

void mc_start_pages_note(int fd, bool headers)
{
	struct start_pages_walk w = { fd, headers };
	if (fd >= 0)
		mc_walk_objects(start_pages_object, &w);
}

/* A forked child's window (footprint.c mc_own_work_begin_fork): fork
 * copies no page table entry of a mapping that holds no anonymous page
 * (the objects' code and read-only data), so every file page of those
 * segments that the child has at the window's end was faulted in the
 * child, by the C library's fork code on its way to the handlers or by
 * memcheck's handlers; each is given back, and the program faults in
 * again, as bare, those it runs on returning from fork.  Noted as none
 * present, without reading pagemap: the objects' walk and pagemap's
 * open and reads at the note would fault the C library's pages that
 * they run before the note could see them. */
void mc_start_pages_none(void)
{
	struct start_pages_walk none = { -1, false };
	mc_start_pages_forget();
	mc_walk_objects(start_pages_object, &none);
}

/* The run of *len bytes at run given back, if any: madvise(2) made
 * here (seccomp.c's), not through syscall(3), whose page in the C
 * library may be among those given back, and the return into it
 * faulted it in again at once. */
static void start_pages_run(uintptr_t run, size_t *len)
{
	if (*len) {
		mc_seccomp_raw(SYS_madvise, (long)run, (long)*len, MADV_DONTNEED, 0, 0, 0);
		if (mc_start_given < RUNS)
			given[mc_start_given++] = (typeof(given[0])){ run, *len };
	}
	*len = 0;
}

/* Each run of pages present now, not at the note, and the file's own,
 * given back; the note forgotten. */
void mc_start_pages_give_back(int fd)
{
	mc_start_given = 0;
	for (int s = 0; s < nseg && fd >= 0; s++) {
		unsigned pages = (unsigned)(seg[s].len / PAGE);
		uintptr_t run = 0;
		size_t run_len = 0;
		for (unsigned i = 0; i < pages; i += READ) {
			unsigned k = pages - i < READ ? pages - i : READ;
			if (!mc_pagemap_read(fd, seg[s].lo + (uintptr_t)i * PAGE, entries, k))
				break;
			for (unsigned j0 = 0; j0 < k; j0 += 64) {
				unsigned n = k - j0 < 64 ? k - j0 : 64;
				uint64_t m = start_pages_word(entries + j0, n, true) &
					     ~bits[(seg[s].at + i + j0) / 64];
				for (unsigned j = 0; m && j < n; j++) {
					if (!(m >> j & 1)) {
						start_pages_run(run, &run_len);
						continue;
					}
					if (!run_len)
						run = seg[s].lo + (uintptr_t)(i + j0 + j) * PAGE;
					run_len += PAGE;
				}
				if (!(m >> (n - 1) & 1))
					start_pages_run(run, &run_len); /* the run ended in the word */
			}
		}
		start_pages_run(run, &run_len);
	}
	mc_start_pages_forget();
}

/* The runs start-up's give-back made, given back again: start.c's
 * withdrawal of the constructor's exit entry at the program's start
 * (__cxa_finalize, which ends in the C library's __unregister_atfork)
 * faulted a 64 KiB block of the C library's code under glibc that
 * start-up had given back (getpid, getuid, fork, exec: a bare program
 * maps it at its first call there or at its exit), and the program's
 * peak before such a call read 64 KiB high (test_rss_self's latelittle
 * row, doc/costs.md r-session58-foot58).  Once, where start-up gave
 * something back.
 *
 * Each run's pages read from pagemap again first, and only those
 * present and still the file's own given back (mc_start_pages_give_back
 * on the runs as segments noted with nothing present): between
 * start-up's window and this call run the initializers of the libraries
 * initialized after libmemcheck, and a debugger may stop the process
 * there; a page of code one of them patched, or a breakpoint written,
 * is anonymous now, and MADV_DONTNEED would have put the file's page
 * back in its place (the write lost).  pagemap opened anew: held open
 * from the window's end to here, its descriptor would have moved those
 * initializers' own.  Three system calls more than the madvise alone
 * (open, a pread a run, close). */
void mc_start_pages_again(void)
{
	int n = mc_start_given, fd = mc_proc_open("pagemap", O_RDONLY);
	mc_start_pages_forget();
	for (int i = 0; i < n && fd >= 0; i++)
		start_pages_seg(-1, given[i].lo, given[i].len); /* as noted with none present */
	mc_start_pages_give_back(fd);
	mc_start_given = 0;
	if (fd >= 0)
		mc_sys_close(fd);
}

/* A child forked in the window (another thread's) gives nothing back:
 * its parent's note is not its own. */
void mc_start_pages_forget(void)
{
	nseg = 0;
	used = 0;
}
