/*
 * ownmap.c - memcheck's own memory: mmap'd, never malloc'd, so it is safe
 * inside the hooks.  mc_map (populated, counted at once), mc_map_lazy
 * (counted as touched), mc_map_reserve (the caller counts), mc_map_io
 * (visible to valgrind: read(2) and write(2) buffers), mc_grow; every
 * mapping listed (own[]) so that a figure of the program's memory can
 * leave it out, and told to footprint.c through its hooks.  The ways the
 * system calls are saved: small populated mappings kept for reuse,
 * start-up's reservations carved from one, and the exit's tail.  Not
 * here: the system calls themselves (sys.c), buffers of text (buf.c).
 *
 * On the VMs this project runs on, memory system calls are dear: a page
 * fault 20-35 us, a munmap 7-80 us, populating a page about 1 us.  So
 * mappings are populated when made (or by mc_populate just before use),
 * and a small populated mapping unmapped is kept for the next request
 * it fits (keep_take, keep_put) instead of going back to the kernel.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Under valgrind, memcheck's own memory (the live-block table above all,
 * which holds every block's address) must not be a root of valgrind's
 * leak check, or every block is "still reachable".  valgrind's scan
 * skips memory it takes for unaddressable, and fast (it also reads the
 * table's 4 GiB reservation word by word otherwise: 5 s a check); the
 * range's address errors are disabled, so memcheck's own accesses are
 * not reported. */
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define VG_HIDE(p, n)                                                          \
	do {                                                                   \
		VALGRIND_DISABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, n);          \
		if (VALGRIND_MAKE_MEM_NOACCESS(p, n))                          \
			mc_map_hid = true; /* valgrind's memcheck said -1 */   \
	} while (0)
#define VG_UNHIDE(p, n) VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, n)
#else
#define VG_HIDE(p, n) ((void)0)
#define VG_UNHIDE(p, n) ((void)0)
#endif

/* Every mapping memcheck makes for itself, so that a figure of the
 * program's memory can leave them out (allocator.c).  A fixed array of
 * slots claimed with atomics: map_plain runs inside the hooks, in any
 * thread, and a lock held across fork would stay held in the child.
 * lo == 0 is a free slot; a slot is claimed by setting lo, then last, and
 * freed by clearing last, then lo, before the munmap, so that an address
 * a later mmap reuses is registered again.  A reader may see a slot being
 * filled with last still 0: an empty range.  The end is kept as the last
 * byte, not the byte after it: where libmemcheck.a is linked into the
 * program this array is the program's data, a root of the scan, and a
 * whole-page end is the start of whatever is mapped above, an
 * allocator's first block say, which it would keep reachable. */
#define OWN_SLOTS 4096

/* Each slot's two ends side by side, and the searches stop at the
 * highest slot ever claimed (own_used): the first slots, all that most
 * processes use, are on one page.  Two arrays searched to their ends
 * touched 16 pages of .bss (a page fault each, ~20 us here) whenever an
 * address was not found, and a page each at start-up. */
static struct {
	_Atomic uintptr_t lo, last;
} own[OWN_SLOTS];
MC_START_TOUCHED(own[0]); /* the first mapping's: start-up's */
static atomic_int own_used;
static atomic_bool own_overflow;

static void own_mapped(const void *p, size_t size)
{
	uintptr_t lo = (uintptr_t)p;
	for (int i = 0; i < OWN_SLOTS; i++) {
		uintptr_t zero = 0;
		if (atomic_load_explicit(&own[i].lo, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&own[i].lo, &zero, lo)) {
			int used = atomic_load(&own_used);
			while (used < i + 1 &&
			       !atomic_compare_exchange_weak(&own_used, &used, i + 1))
				;
			atomic_store(&own[i].last, size ? lo + size - 1 : 0);
			return;
		}
	}
	atomic_store(&own_overflow, true);
}

/* The mapping at p leaves the list; its registered length, or 0. */
static size_t own_unmapped(const void *p)
{
	uintptr_t lo = (uintptr_t)p;
	for (int i = 0, n = atomic_load(&own_used); i < n; i++) {
		if (atomic_load_explicit(&own[i].lo, memory_order_relaxed) == lo) {
			uintptr_t last = atomic_exchange(&own[i].last, 0);
			atomic_store(&own[i].lo, 0);
			return last >= lo ? last - lo + 1 : 0;
		}
	}
	return 0;
}

/* The registered length of the mapping at p (0: not one of ours). */
static size_t own_length(const void *p)
{
	uintptr_t lo = (uintptr_t)p;
	for (int i = 0, n = atomic_load(&own_used); i < n; i++)
		if (atomic_load_explicit(&own[i].lo, memory_order_relaxed) == lo) {
			uintptr_t last = atomic_load(&own[i].last);
			return last >= lo ? last - lo + 1 : 0;
		}
	return 0;
}

/* Register the mapping at p as len bytes long. */
static void own_resize(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p;
	for (int i = 0, n = atomic_load(&own_used); i < n; i++)
		if (atomic_load_explicit(&own[i].lo, memory_order_relaxed) == lo) {
			atomic_store(&own[i].last, len ? lo + len - 1 : 0);
			return;
		}
}

static __attribute__((noinline)) void carved_each(void (*cb)(uintptr_t lo, uintptr_t hi, void *arg),
						 void *arg);

bool mc_own_each(void (*cb)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	for (int i = 0, n = atomic_load(&own_used); i < n; i++) {
		uintptr_t lo = atomic_load(&own[i].lo), last = atomic_load(&own[i].last);
		if (lo && last >= lo)
			cb(lo, last + 1, arg);
	}
	carved_each(cb, arg);
	return !atomic_load(&own_overflow);
}

/* Where memcheck's own mappings are asked for: above libmemcheck, when
 * it was loaded at the address it was linked at (GNUmakefile's
 * MC_LOAD_ADDR), apart from the program's mappings, which then lie
 * where they do without memcheck (a library the program loads with
 * dlopen came 48 KiB lower, below memcheck's, and fault-around mapped
 * other pages of it: test_rss_self's dlopen row).  A preference only
 * (the kernel's choice where it is taken); NULL, the kernel's choice,
 * where libmemcheck was not loaded so: linked into the program
 * (libmemcheck.a: above it is where the program's heap grows), the
 * command-line tool, the unit tests. */
/* libmemcheck's ELF header, the linker's (objects.c's mc_own_phdrs) */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
static _Atomic uintptr_t place_next; /* 0: not decided; 1: no preference */

void *mc_own_place(size_t size)
{
	uintptr_t at = atomic_load_explicit(&place_next, memory_order_relaxed);
	if (at == 0) {
		const ElfW(Ehdr) *eh = (const void *)__ehdr_start;
		int nph;
		const ElfW(Phdr) *ph = mc_own_phdrs(&nph, NULL);
		uintptr_t first = 0, end = 0;
		bool seen = false;
		for (int i = 0; i < nph; i++) {
			if (ph[i].p_type != PT_LOAD)
				continue;
			if (!seen)
				first = ph[i].p_vaddr;
			seen = true;
			if (ph[i].p_vaddr + ph[i].p_memsz > end)
				end = ph[i].p_vaddr + ph[i].p_memsz;
		}
		uintptr_t huge = (uintptr_t)2 << 20;
		uintptr_t want = eh->e_type == ET_DYN && first != 0 &&
						 (uintptr_t)__ehdr_start == first ?
					 (end + huge - 1) & ~(huge - 1) :
					 1;
		atomic_compare_exchange_strong(&place_next, &at, want);
		at = atomic_load(&place_next);
	}
	if (at == 1)
		return NULL;
	return (void *)atomic_fetch_add(&place_next, size);
}

static void *map_plain(size_t size, int flags)
{
	/* memcheck's own mappings are registered (own[], footprint.c's
	 * count) in whole pages: registered at the length asked (17,144
	 * bytes, say), the rest of the last page was resident, memcheck's,
	 * and counted outside memcheck's memory, as the program's RSS and
	 * the allocator's retained bytes */
	size = mc_page_round(size);
	void *p = mc_sys_mmap(mc_own_place(size), size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Where transparent huge pages are "always" (Debian's kernels),
	 * the first touch of a 2 MiB-aligned stretch of a large mapping
	 * makes all of it resident: 2 MiB more memcheck memory than the
	 * pages footprint.c counts as used, in the program's figures.  Small
	 * pages keep what memcheck touches what is resident.  (A mapping
	 * under 2 MiB holds no aligned huge page: no system call for it.) */
	if (size >= (size_t)2 << 20)
		syscall(SYS_madvise, p, size, MADV_NOHUGEPAGE);
	own_mapped(p, size);
	return p;
}

/* Who counts memcheck's own memory (footprint.c, in the library; nobody
 * in the command-line tool and the unit tests, which share this file). */
static const struct mc_map_hooks *hooks;

void mc_map_hooks_set(const struct mc_map_hooks *h)
{
	hooks = h;
}

/* ---- kept mappings ----------------------------------------------------
 * Most of memcheck's populated mappings are short-lived: a region's end
 * maps and unmaps dozens of buffers of a few pages (the scan's, the
 * suppression files read, the text of the report).  On the VMs this
 * project runs on, a munmap of one page costs 7-15 us and of 16 pages
 * 80 us, a populated mmap 5-30 us, where clearing a page costs 0.1 us.
 * So an unmapped populated mapping of up to KEEP_MAX bytes is kept in
 * one of KEEP_SLOTS slots, resident and still counted as memcheck's
 * (footprint.c's figure does not change), and the next mc_map or
 * mc_map_io it fits (at most twice the pages asked for) takes it back
 * cleared.  512 KiB at most in all: what is kept still counts in the
 * process's own peak, which test_fidelity holds to within 1.5 MiB of a
 * forwarding-only preload's.  A slot holds the page-aligned address
 * with the page count in its low bits, claimed and filled with atomics:
 * any thread, inside the hooks, across fork (a forked child inherits
 * the slots with the mappings).  Under valgrind nothing is kept: hidden (mc_map) and
 * visible (mc_map_io) memory must not trade places. */
#define KEEP_SLOTS 8
#define KEEP_MAX (16 * 4096)
bool mc_own_tight; /* under a limit (see there): nothing kept */
static _Atomic uintptr_t kept[KEEP_SLOTS];

static size_t pages_of(size_t size)
{
	return (size + 4095) / 4096;
}

static bool keeping(void)
{
#if __has_include(<valgrind/memcheck.h>)
	return !RUNNING_ON_VALGRIND;
#else
	return true;
#endif
}

/* A kept mapping of pages to want*2 pages, taken out and cleared; NULL
 * when none fits.  Its registered length (own[]) is its pages. */
static void *keep_take(size_t size, bool zero)
{
	size_t want = pages_of(size);
	if (want * 4096 > KEEP_MAX || !keeping())
		return NULL;
	for (int i = 0; i < KEEP_SLOTS; i++) {
		uintptr_t v = atomic_load_explicit(&kept[i], memory_order_relaxed);
		size_t n = v & 4095;
		if (!v || n < want || n > 2 * want)
			continue;
		if (!atomic_compare_exchange_strong(&kept[i], &v, 0))
			continue;
		void *p = (void *)(v & ~(uintptr_t)4095);
		if (zero)
			memset(p, 0, n * 4096); /* as fresh from mmap */
		return p;
	}
	return NULL;
}

/* Keep the populated mapping p of registered length len (registered
 * and counted as memcheck's) instead of unmapping it; false when there
 * is no room.  The count grows to its whole pages, which it holds.
 * With every slot taken, p takes the place of the smallest mapping kept
 * when that is smaller than p, which *evicted then names (its address
 * and pages, as a slot holds them) for the caller to unmap: slots full
 * of single pages that no later call asks for (a region's end unmaps
 * a few of them) would otherwise turn every later region's buffers of
 * a few pages into a populated mmap and an munmap each (70,000 regions
 * of tests/prog/ignore: 6 s -> 20 s, 420,000 pages populated). */
static bool keep_put(void *p, size_t len, uintptr_t *evicted)
{
	size_t n = pages_of(len);
	*evicted = 0;
	if (!len || n * 4096 > KEEP_MAX || !keeping() || mc_own_tight)
		return false; /* under a limit, given back (see there) */
	uintptr_t v = (uintptr_t)p | n;
	bool kept_it = false;
	for (int i = 0; i < KEEP_SLOTS && !kept_it; i++) {
		uintptr_t zero = 0;
		kept_it = atomic_load_explicit(&kept[i], memory_order_relaxed) == 0 &&
			  atomic_compare_exchange_strong(&kept[i], &zero, v);
	}
	for (int tries = 0; !kept_it && tries < 2; tries++) {
		int at = -1;
		uintptr_t least = 0;
		for (int i = 0; i < KEEP_SLOTS; i++) {
			uintptr_t w = atomic_load_explicit(&kept[i], memory_order_relaxed);
			if (w && (w & 4095) < n && (!least || (w & 4095) < (least & 4095))) {
				least = w;
				at = i;
			}
		}
		if (at < 0)
			return false;
		kept_it = atomic_compare_exchange_strong(&kept[at], &least, v);
		if (kept_it)
			*evicted = least;
	}
	if (!kept_it)
		return false;
	if (n * 4096 != len) {
		own_resize(p, n * 4096);
		mc_own_grow((int64_t)(n * 4096 - len));
	}
	return true;
}

/* The exit's tail (see there). */
#define TAIL_BYTES ((size_t)512 * 1024)
#define TAIL_ALIGN 64
static void *tail_take(size_t size, bool lazy, bool zero);
static bool in_tail(const void *p);
static void tail_give_back(const void *p);

/* Populated when made (MAP_POPULATE): resident from the start, so the
 * counter knows memcheck's share of the RSS without asking the kernel,
 * and the change is bracketed there.  A kept mapping is resident and
 * counted already.  At the process's end, a piece of the tail (below). */
static void *map_counted_as(size_t size, bool zero)
{
	void *p = tail_take(size, false, zero);
	if (p)
		return p;
	p = keep_take(size, zero);
	if (p)
		return p;
	size = mc_page_round(size); /* resident, and memcheck's, to the page's end */
	bool folding = hooks && hooks->before(size);
	p = map_plain(size, MAP_POPULATE);
	if (hooks)
		hooks->after(folding, p ? (int64_t)size : 0);
	return p;
}

static void *map_counted(size_t size)
{
	return map_counted_as(size, true);
}

/* Unmapped, or kept (populated and counted mappings only: a lazy one is
 * footprint.c's to forget).  The length is the one registered when it
 * was made or kept, which a kept mapping's later user does not know. */
static void unmap_counted(void *p, size_t size)
{
	if (in_tail(p)) {
		tail_give_back(p); /* the process ends next: no system call */
		return;
	}
	if (!hooks || hooks->lazy_remove(p, size)) {
		own_unmapped(p);
		mc_sys_munmap(p, size);
		return;
	}
	size_t len = own_length(p);
	uintptr_t evicted = 0;
	if (len && keep_put(p, len, &evicted)) {
		if (!evicted)
			return;
		/* p is kept in the place of a smaller mapping: that one goes */
		p = (void *)(evicted & ~(uintptr_t)4095);
		len = (evicted & 4095) * 4096;
	}
	if (len)
		size = len;
	own_unmapped(p);
	bool folding = hooks->before(size);
	mc_sys_munmap(p, size);
	hooks->after(folding, -(int64_t)size);
}

bool mc_own_hooked(void)
{
	return hooks != NULL;
}

/* MADV_POPULATE_WRITE and _READ (Linux 5.14): the pages are made
 * resident (writable, or as the page cache holds them) in one call.
 * Measured on the 2-CPU VMs this project runs on: a first touch costs
 * 20-35 us a page (the fault), populating 16 pages in one call 15 us.
 * An older kernel says EINVAL and the pages are faulted in as before. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static void populate_pages(const void *p, size_t len, int advice)
{
	int saved = errno;
	uintptr_t lo = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;
	if (hi > lo)
		syscall(SYS_madvise, (void *)lo, hi - lo, advice);
	errno = saved;
}

static void populate(const void *p, size_t len, int advice)
{
	if (!in_tail(p)) /* the tail's pages are faulted in as touched (see there) */
		populate_pages(p, len, advice);
}

void mc_populate(void *p, size_t len)
{
	populate(p, len, MADV_POPULATE_WRITE);
}

/* libmemcheck's own .bss is never in the tail, and asking would read the
 * tail's bounds, small variables on the very page being populated: at
 * start-up, a read fault that mapped the zero page, then the populate's
 * copy of it (one page fault in every measured process). */
void mc_populate_static(void *p, size_t len)
{
	populate_pages(p, len, MADV_POPULATE_WRITE);
}

void mc_populate_read(const void *p, size_t len)
{
	populate(p, len, MADV_POPULATE_READ);
}

void mc_own_grow(int64_t bytes)
{
	if (hooks)
		hooks->after(hooks->before((size_t)(bytes < 0 ? -bytes : bytes)), bytes);
}

void *mc_map(size_t size)
{
	void *p = map_counted(size);
	if (p)
		VG_HIDE(p, size);
	return p;
}

/* ---- carved reservations ---------------------------------------------
 * A measured process reserves a handful of unpopulated mappings at
 * start-up (the block table's first arrays, the free rings, the thread
 * slots, the depot's first segment, the own heap: 3 in a count-only
 * process, 8 under 1 MiB with stacks), each an mmap of its own.  They
 * are cut instead from one reservation (CARVE_ARENA, under 2 MiB: it
 * holds no aligned huge page, as none of the pieces did), page-aligned,
 * each registered as its own mapping as before; the next reservation is
 * made when a piece does not fit.  A piece is never handed out twice:
 * munmap gives its pages back to the kernel as it did the mapping's, and
 * what the reservation has left is address space, never touched.  The
 * cursor is one word, the reservation's index in arena[] and the offset
 * in it, moved with compare-and-swap (any thread, inside the hooks, no
 * lock that fork could leave held).  Under valgrind nothing is carved
 * (mc_map hides each mapping whole).
 *
 * A piece over 1 MiB (the block table's 4 MiB of first arrays) is cut
 * from a big reservation (CARVE_BIG, huge pages turned off with
 * MADV_NOHUGEPAGE, as map_plain does for its own large mappings), made
 * for it where the one in use is small, and the pieces after it follow
 * it there: a tracking process's start made that piece a mapping and a
 * madvise of its own, and the free rings and thread slots a second
 * small reservation (the first holds the block table's other arrays,
 * 1.6 MiB), four system calls where there are now three.  The rest of
 * the small one stays address space.
 *
 * CARVE_BIG holds every piece a short tracking process cuts, start to
 * exit, where 8 MiB did not: a measured /bin/date (gdb on carve, date50)
 * cut 7.25 MiB before the main thread's alternate stack (1 MiB,
 * fatal.c), which then took a second reservation of CARVE_ARENA bytes
 * (an mmap more at every tracking process's start), the later pieces
 * (the exit's tail among them) 0.7 MiB of it: 8.94 MiB in all.  Its
 * size is what the two held, to the byte (RLIMIT_AS's room: rlimits.c),
 * and a process that needs more takes the next reservation as before. */
#define CARVE_ARENA ((size_t)2048 * 1024 - 64 * 1024)
#define CARVE_MAX ((size_t)1 << 20)
#define CARVE_BIG (((size_t)8 << 20) + CARVE_ARENA)
#define CARVE_BIG_MAX ((size_t)4 << 20)
#define CARVE_ARENAS 16
static _Atomic uintptr_t arena[CARVE_ARENAS];
static _Atomic size_t arena_len[CARVE_ARENAS]; /* set before it is in use */
/* (index + 1) << 32 | offset; 0: no reservation yet */
static _Atomic uint64_t carve_at;
/* The first reservation made CARVE_BIG (mc_map_carve_large_first): the
 * small pieces before the block table's first arrays fit in it with
 * them (~6 MiB in all), one mmap fewer at a tracking process's start. */
static bool large_first;

void mc_map_carve_large_first(void)
{
	large_first = true;
}

/* ---- under a limit ----------------------------------------------------
 * Where the process inherited an RLIMIT_AS or RLIMIT_DATA that memcheck
 * may not raise (soft and hard one, no CAP_SYS_RESOURCE: rlimits.c's
 * inherited_take), every byte of address space memcheck maps is one the
 * program does not get, touched or not: the kernel counts a mapping
 * whole, MAP_NORESERVE or not.  There the reservations are not carved:
 * the carved ones' unused rest (1.7 MiB of the 10 MiB a tracking
 * process reserved) is address space no one uses, and the block table
 * maps its first arrays shard by shard as they are used (blocks.c)
 * instead of reserving 4 MiB for all 256.  A program that allocates
 * 512 KiB blocks until malloc fails under `ulimit -v 300000` got
 * (glibc/mimalloc/jemalloc/tcmalloc) 576/567/538/554 blocks bare,
 * 553/504/503/530 with memcheck before; see doc/costs.md for after. */
/* Under a limit, the exit's tail (below), reserved when the limit is
 * seen: the exit maps its scan's, suppressions' and report's memory
 * from it, where the program may have left no address space (jemalloc
 * keeps what it was given: plain_rlimit under `ulimit -v`, 1 run of 4,
 * had no scan at its exit, its C++ runtime's block "definitely lost",
 * and no peak's lines).  The one reservation made ahead, 512 KiB of the
 * program's room, for a report that is right. */
static void *tight_tail;

static void tight_tail_reserve(void)
{
	if (tight_tail || !keeping())
		return;
	void *p = mc_sys_mmap(mc_own_place(TAIL_BYTES), TAIL_BYTES, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	own_mapped(p, TAIL_BYTES);
	tight_tail = p;
}

void mc_map_tight(void)
{
	if (mc_own_tight)
		return;
	mc_own_tight = true;
	/* carve finds every reservation slot used (and an offset past any
	 * reservation's end): nothing carved, with no test of its own on
	 * start-up's way.  Where the limit came late (a program that raises
	 * its soft limit to a hard one it cannot move: rlimits.c), the
	 * reservation in use gives back what it never handed out, address
	 * space no one touched (1.7 MiB of a tracking process's 10 MiB at
	 * start-up); a carve racing with this finds the cursor moved. */
	uint64_t at = atomic_exchange(&carve_at, (uint64_t)CARVE_ARENAS << 32 | UINT32_MAX);
	unsigned i = (unsigned)(at >> 32);
	size_t off = (size_t)(uint32_t)at;
	uintptr_t a = i && i <= CARVE_ARENAS ? atomic_load(&arena[i - 1]) : 0;
	size_t len = a ? atomic_load(&arena_len[i - 1]) : 0;
	if (a && off < len) {
		atomic_store(&arena_len[i - 1], off);
		mc_sys_munmap((void *)(a + off), len - off);
	}
	tight_tail_reserve();
}

static void *carve(size_t size)
{
	size = mc_page_round(size);
	if (size > CARVE_BIG_MAX || !keeping())
		return NULL;
	for (;;) {
		uint64_t at = atomic_load(&carve_at);
		unsigned i = (unsigned)(at >> 32);
		size_t off = (size_t)(uint32_t)at;
		size_t len = i ? atomic_load(&arena_len[i - 1]) : 0;
		if (i && off + size <= len && (size <= CARVE_MAX || len == CARVE_BIG)) {
			if (atomic_compare_exchange_weak(&carve_at, &at, at + size))
				return (void *)(atomic_load(&arena[i - 1]) + off);
			continue;
		}
		if (i >= CARVE_ARENAS)
			return NULL;
		size_t want = size > CARVE_MAX || (i == 0 && large_first) ? CARVE_BIG : CARVE_ARENA;
		void *a = mc_sys_mmap(mc_own_place(want), want, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (a == MAP_FAILED)
			return NULL;
		if (want >= (size_t)2 << 20)
			syscall(SYS_madvise, a, want, MADV_NOHUGEPAGE);
		uintptr_t empty = 0;
		if (atomic_compare_exchange_strong(&arena[i], &empty, (uintptr_t)a)) {
			/* The new reservation's first piece is this one.
			 * Meanwhile others may carve smaller pieces from the
			 * old one, never move to a new one (that is only
			 * the claimer of arena[i]'s to do): the swap is
			 * tried until it is made. */
			atomic_store(&arena_len[i], want);
			uint64_t next = ((uint64_t)(i + 1) << 32) | size;
			while (!atomic_compare_exchange_weak(&carve_at, &at, next))
				;
			return a;
		}
		mc_sys_munmap(a, want); /* another thread's came first */
	}
}

/* Each carved reservation whole, for mc_own_each: what is not carved
 * from it yet is memcheck's address space too, anonymous and never
 * touched.  The allocator's statistics under jemalloc and tcmalloc
 * (allocator.c's unclaimed_resident) asked mincore about those parts at
 * every region's end they measured: two calls of a leaking /bin/date's
 * nine, the big reservation's last 94-618 KiB and the small one's
 * last 448 KiB (strace).  Out of line, in group 7 (text-order.ld): not
 * in the room groups 2, 3 and 1t share. */
static __attribute__((noinline)) void carved_each(void (*cb)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	for (int i = 0; i < CARVE_ARENAS; i++) {
		uintptr_t a = atomic_load(&arena[i]);
		size_t len = atomic_load(&arena_len[i]);
		if (!a)
			break;
		if (len)
			cb(a, a + len, arg);
	}
}

/* ---- the exit's tail ----------------------------------------------------
 * Once a measured process's end has begun (the process region's end at
 * exit: mc_map_tail_begin, from region.c), nothing memcheck maps is
 * given back (the exit takes it all), and what it maps is small: a
 * measured /bin/date's exit made 8 populated mmaps of 1-17 KiB (the
 * roots, the scan, the suppression files' buffer and entries, the
 * names), 20 pages for 70 KiB, and populated 16 KiB of its lazy
 * mappings (the suppressions' frames and names) with two madvise calls.
 * So the rest of the process's mc_map, mc_map_io and mc_map_lazy calls
 * are cut from one reservation, TAIL_BYTES carved like the start-up's
 * (no system call where the reservation in use has room), sub-page
 * requests packed together (TAIL_ALIGN; a lazy one page-aligned, as a
 * mapping of its own was).  A piece given back is taken again by a
 * later request it fits (cleared; a lazy request always takes fresh
 * pages, which it may never touch): on these VMs the first touch of a
 * page costs 15-20 us whether it is faulted in, populated or written
 * by read(2) (a file read into fresh pages took 107 us, into touched
 * ones 55-63 us, December 2026), and the exit's scan gives back pages
 * that its suppressions and report then need (a warm measured
 * /bin/date's exit touched 20 pages of the tail).  The
 * tail is one lazy mapping of footprint.c's, its resident pages
 * measured (pagemap, else mincore): memcheck's own memory stays out of the
 * program's figures exactly, whether a page was populated or faulted
 * in.  Nothing of the tail is populated, not even where a caller asks
 * (mc_populate): a page populated that the exit never stores is paid for
 * nothing, and the pieces' pages are not known ahead.  Session 42
 * (short42) populated four pages at least a call as the pieces reached
 * them, from a micro benchmark's wall time (a fault 11-16 us, a populated
 * page ~1.5 us and 5-6 us at its first store); the processes' own CPU
 * time by turns (wait4's rusage, 400-800 rounds, short43) said
 * otherwise: a passing bench/suite_test with a JSON report 10-13 us
 * more with the populates (17 pages populated in 4 calls, 11 of them
 * stored), a leaking one and a measured /bin/date 0 and -4 us (within
 * +-30).  A request the tail has no room for takes the usual way.
 * Cursor and bounds are
 * atomics, the pieces' table under a spin lock: any thread, inside the
 * hooks (no signal handler runs memcheck's code there).  Under valgrind
 * there is no tail (hidden and visible memory must not share pages). */
static _Atomic uintptr_t tail_lo, tail_hi, tail_at;

/* The tail's pieces: each packed piece handed out, its
 * length as handed out (a caller's length when it gives one back is not
 * trusted: a page-rounded one would reach its neighbours), and whether
 * it was given back.  A lazy piece is not listed (never taken again); a
 * piece made when the table is full is never taken again either. */
struct tail_piece {
	uint32_t at;             /* from tail_lo */
	uint32_t len : 31, given_back : 1;
};
#define TAIL_PIECES 32 /* a measured /bin/date's exit: 23 */
static struct tail_piece tail_pieces[TAIL_PIECES]; /* .bss's small variables, populated */
static int tail_npieces;
static atomic_flag tail_lock = ATOMIC_FLAG_INIT;

static bool in_tail(const void *p)
{
	uintptr_t lo = atomic_load_explicit(&tail_lo, memory_order_acquire);
	return lo && (uintptr_t)p >= lo && (uintptr_t)p < atomic_load(&tail_hi);
}

void mc_map_tail_begin(void)
{
	/* under a limit, reserved (and registered) then, and taken by a
	 * process whose figures are not measured too (no hooks) */
	void *p = tight_tail;
	if (atomic_load(&tail_lo) || (!hooks && !p) || !keeping())
		return;
	if (!p && (p = carve(TAIL_BYTES)))
		own_mapped(p, TAIL_BYTES);
	if (!p)
		return;
	if (hooks)
		hooks->lazy(p, TAIL_BYTES);
	tail_npieces = 0;
	atomic_store(&tail_at, (uintptr_t)p);
	atomic_store(&tail_hi, (uintptr_t)p + TAIL_BYTES);
	atomic_store_explicit(&tail_lo, (uintptr_t)p, memory_order_release);
}

/* A piece given back that holds size bytes, its first size bytes taken
 * (the rest listed as given back where the table has room); 0 when
 * none does.  The smallest that fits: a large one stays for a large
 * request.  Lock held. */
static uintptr_t tail_reuse(size_t size, bool zero)
{
	size = (size + TAIL_ALIGN - 1) & ~(size_t)(TAIL_ALIGN - 1);
	int best = -1;
	for (int i = 0; i < tail_npieces; i++) {
		struct tail_piece *t = &tail_pieces[i];
		if (t->given_back && t->len >= size && (best < 0 || t->len < tail_pieces[best].len))
			best = i;
	}
	if (best < 0)
		return 0;
	struct tail_piece *t = &tail_pieces[best];
	uintptr_t p = atomic_load(&tail_lo) + t->at;
	if (t->len > size && tail_npieces < TAIL_PIECES)
		tail_pieces[tail_npieces++] = (struct tail_piece){ t->at + (uint32_t)size,
								   t->len - (uint32_t)size, 1 };
	else
		size = t->len;
	t->len = (uint32_t)size;
	t->given_back = 0;
	if (zero)
		memset((void *)p, 0, size); /* as fresh */
	return p;
}

/* size bytes of the tail, fresh (zero; !zero: a piece given back is
 * taken as its last user left it); NULL when there is no tail or no
 * room. */
static void *tail_take(size_t size, bool lazy, bool zero)
{
	if (!atomic_load_explicit(&tail_lo, memory_order_acquire) || !size || size > TAIL_BYTES)
		return NULL;
	size_t align = lazy ? 4096 : TAIL_ALIGN;
	while (atomic_flag_test_and_set_explicit(&tail_lock, memory_order_acquire))
		;
	uintptr_t p = lazy ? 0 : tail_reuse(size, zero);
	if (!p) {
		uintptr_t hi = atomic_load(&tail_hi), at = atomic_load(&tail_at);
		p = (at + align - 1) & ~(uintptr_t)(align - 1);
		if (p + size > hi || p + size < p) {
			p = 0;
		} else {
			atomic_store(&tail_at, p + size);
			/* its length to the next piece's start: neighbours meet */
			size_t len = (size + TAIL_ALIGN - 1) & ~(size_t)(TAIL_ALIGN - 1);
			if (!lazy && tail_npieces < TAIL_PIECES)
				tail_pieces[tail_npieces++] = (struct tail_piece){
					(uint32_t)(p - atomic_load(&tail_lo)), (uint32_t)len, 0 };
		}
	}
	atomic_flag_clear_explicit(&tail_lock, memory_order_release);
	return (void *)p;
}

/* The listed piece at p given back, joined to its neighbours given back
 * (the request that follows may be larger than either). */
static void tail_give_back(const void *p)
{
	while (atomic_flag_test_and_set_explicit(&tail_lock, memory_order_acquire))
		;
	uint32_t at = (uint32_t)((uintptr_t)p - atomic_load(&tail_lo));
	int i = 0;
	while (i < tail_npieces && (tail_pieces[i].at != at || tail_pieces[i].given_back))
		i++;
	if (i < tail_npieces) {
		struct tail_piece *t = &tail_pieces[i];
		t->given_back = 1;
		for (int j = 0; j < tail_npieces;) {
			struct tail_piece *u = &tail_pieces[j];
			bool before = u->at + u->len == t->at, after = t->at + t->len == u->at;
			if (u == t || !u->given_back || (!before && !after)) {
				j++;
				continue;
			}
			t->len += u->len;
			if (before)
				t->at = u->at;
			/* u leaves the table, the last piece taking its place */
			struct tail_piece *last = &tail_pieces[--tail_npieces];
			if (last == t)
				t = u;
			*u = *last;
			j = 0;
		}
	}
	atomic_flag_clear_explicit(&tail_lock, memory_order_release);
}

/* In a forked child: a thread of the parent's may have held the
 * tail's lock, and the child has none of them (life.c's fork_child). */
void mc_map_after_fork(void)
{
	atomic_flag_clear(&tail_lock);
}

/* A reserved mapping, carved where it can be. */
static void *map_reserved(size_t size)
{
	void *p = carve(size);
	if (!p)
		return map_plain(size, 0);
	own_mapped(p, mc_page_round(size));
	return p;
}

void *mc_map_lazy(size_t size)
{
	void *p = tail_take(size, true, true);
	if (p)
		return p; /* counted with the tail */
	p = map_reserved(size);
	if (p) {
		VG_HIDE(p, size);
		if (hooks)
			hooks->lazy(p, size);
	}
	return p;
}

void *mc_map_reserve(size_t size)
{
	void *p = map_reserved(size);
	if (p)
		VG_HIDE(p, size);
	return p;
}

void mc_unmap(void *p, size_t size)
{
	if (p) {
		VG_UNHIDE(p, size);
		unmap_counted(p, size);
	}
}

/* Make room for one more element of size elem in the mmap'd array *v
 * (used elements, *cap allotted): double it, or first elements at
 * first.  False when memory runs out (the array is as it was). */
bool mc_grow(void **v, size_t *cap, size_t used, size_t elem, size_t first)
{
	return mc_grow_from(v, cap, used, elem, first, NULL);
}

bool mc_grow_from(void **v, size_t *cap, size_t used, size_t elem, size_t first,
		  const void *fixed)
{
	if (used < *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : first;
	void *n = mc_map(ncap * elem);
	if (!n)
		return false;
	if (*v) {
		memcpy(n, *v, used * elem);
		if (*v != fixed)
			mc_unmap(*v, *cap * elem);
	}
	*v = n;
	*cap = ncap;
	return true;
}

/* Under valgrind, at the process's end: address errors enabled again
 * over every mapping of memcheck's (its own list, so a range the program
 * disabled stays as the program left it), which stays unaddressable, as
 * VG_HIDE marked it: valgrind's leak check, after the process's last
 * instruction, skips it all the same (memcheck/mc_leakcheck.c reads a
 * word only where its bytes are addressable and defined).  Without
 * this, valgrind's exit (mc_fini, after its leak check) prints 5 lines
 * ("WARNING: exiting program has the following client-requested address
 * error disablement range(s) still in force" and the ranges) that the
 * bare program does not.  The caller sees to it that no code of
 * memcheck's reads or writes a hidden mapping after this (life.c: calls
 * only forwarded; a block of memcheck's own heap the program frees is
 * left where it is, mc_map_unhidden); a mapping made after it (none is)
 * would be hidden again.  Enabling a range never disabled (a
 * visible mapping's, mc_map_io) changes nothing.  mc_map_hid in .data
 * (MC_HOT): every process's destructor reads it, a left-out one too,
 * where on a page of .bss it was a page fault at each exit. */
MC_HOT bool mc_map_hid;
bool mc_map_unhidden;

void mc_map_unhide_all(void)
{
#if __has_include(<valgrind/memcheck.h>)
	mc_map_unhidden = true;
	for (int i = 0, n = atomic_load(&own_used); i < n; i++) {
		uintptr_t lo = atomic_load(&own[i].lo), last = atomic_load(&own[i].last);
		if (lo && last >= lo)
			VG_UNHIDE((void *)lo, last - lo + 1);
	}
#endif
}

/* Memory a system call reads into or writes from (text, no pointers):
 * valgrind checks a read(2) or write(2) buffer whatever the range, so it
 * must not be hidden. */
void *mc_map_io(size_t size)
{
	return map_counted(size);
}

/* mc_map_io's memory for a buffer that is written before it is read
 * (report.c's JSON line at exit, an mc_buf): a piece of the exit's tail
 * given back, or a kept mapping, is taken as its last user left it,
 * not cleared (its 16 KiB were a `rep stosb` of every JSON exit, 1.5-2.5%
 * of a short process's instructions). */
void *mc_map_io_written(size_t size)
{
	return map_counted_as(size, false);
}

void mc_unmap_io(void *p, size_t size)
{
	if (p)
		unmap_counted(p, size);
}

