/*
 * allocator.c - which allocator memcheck forwards to, what it holds that
 * the program does not use, and its call to give free memory back.
 *
 * The object that serves malloc is known (interpose.c found it); what it
 * is called is told by symbols only that allocator exports.  Reports
 * name it so that figures from different allocators are not compared
 * unknowingly.
 *
 * Retained memory is memory the allocator holds resident and the program
 * does not use: the resident bytes of the memory it serves blocks from,
 * less the bytes it counts as in use.  Both halves come from the
 * allocator itself, read without changing what it does:
 *   - in use: its own statistics (glibc's mallinfo2, mimalloc's heap
 *     areas, jemalloc's stats.allocated, tcmalloc's
 *     current_allocated_bytes);
 *   - resident: the pages of its memory that are in memory (mincore,
 *     resident.c), its memory found where it puts it: glibc's program
 *     break and its thread arenas' heaps, mimalloc's segments (its
 *     address range, and mi_is_in_heap_region for each 64 KiB slice
 *     elsewhere).  jemalloc and tcmalloc cannot be asked where (tcmalloc's
 *     Ranges iterator takes 0.5 ms a call): their memory is the process's
 *     anonymous memory less what is known to be someone else's
 *     (memcheck's, loaded objects', threads' stacks), at most their own
 *     figure for what they hold.
 * The allocators' own "held" figures are not resident memory: mimalloc
 * counts 32 MiB committed at start with 2 MiB resident, jemalloc's
 * stats.resident counts metadata it has never touched (6.5 MiB with
 * 0.25 MiB resident), tcmalloc counts spans it has not touched.
 * Blocks the program allocated and never wrote are in use but not
 * resident: they make retained lower, never higher, than the truth.
 *
 * Statistics and release calls are looked up in that object alone, once,
 * when the allocator is detected: memcheck never links to an allocator,
 * an allocator loaded from any path works, and a program that loads a
 * second allocator (a plugin linking jemalloc) does not get that one's
 * figures.  The lookups read the object's symbol table (elfsym.c): dlopen
 * of the object and a dlsym that fails both allocate, and dlopen's block
 * changed mimalloc's layout for the whole run (a three-phase program
 * peaked 26 MB lower than bare).  A figure an allocator cannot give (an old glibc without
 * mallinfo2, a jemalloc built without statistics, mimalloc's blocks in
 * use with several threads) is MEMCHECK_UNKNOWN, never 0: 0 would read as
 * "retains nothing".
 *
 * Everything here is called with memcheck's recursion guard held (region
 * ends in region.c, detection in mc_resolve): the allocators' own
 * statistics calls may allocate (jemalloc's first mallctl builds its
 * control tree), and those blocks are not the program's.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define NSYMS 6

/* One allocator: how it is recognised, the functions memcheck asks it
 * (resolved into syms[] in that order), and how their answers become
 * struct mc_alloc_stats. */
struct allocator {
	const char *name;
	const char *markers[3];         /* NULL-terminated; none: by path */
	const char *calls[NSYMS];       /* NULL-terminated when fewer */
	void (*stats)(void *const *syms, struct mc_alloc_stats *out);
	bool (*release)(void *const *syms);
	uint64_t (*timed)(void *const *syms);   /* NULL: never on a timer */
};

/* ---- memory that is not someone else's ------------------------------ */

/* Known owners other than the allocator: memcheck's own mappings, the
 * loaded objects' segments (their .bss is anonymous memory), the stacks
 * of the threads memcheck has seen ([stack], the main thread's, is named,
 * not anonymous).  Static, not on the stack: region ends, the only
 * callers, come one at a time (region.c's lock). */
#define MAX_OTHERS 8192
static uintptr_t others_v[MAX_OTHERS][2];

static void add_own(uintptr_t lo, uintptr_t hi, void *arg)
{
	mc_ranges_add(arg, lo, hi);
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD)
			mc_ranges_add(arg, info->dlpi_addr + ph->p_vaddr,
				      info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
	}
	return 0;
}

/* The known others, sorted; false when they did not all fit. */
static bool others(struct mc_ranges *r, bool own_only)
{
	*r = (struct mc_ranges){ others_v, 0, MAX_OTHERS, false };
	bool complete = mc_own_each(add_own, r);
	if (!own_only) {
		mc_walk_objects(add_object, r);
		static uintptr_t stacks[1024][2];
		mc_account_threads_lock();
		int n = mc_account_other_stacks(stacks, 1024);
		mc_account_threads_unlock();
		for (int i = 0; i < n; i++)
			mc_ranges_add(r, stacks[i][0], stacks[i][1]);
	}
	mc_ranges_sort(r);
	return complete && !r->overflow;
}

static bool is_anonymous(const struct mc_mapping *m)
{
	return m->anonymous && m->readable && m->writable && !m->shared;
}

struct unclaimed {
	const struct mc_ranges *others;
	uint64_t resident;
};

static bool add_unclaimed(const struct mc_mapping *m, void *arg)
{
	struct unclaimed *u = arg;
	if (is_anonymous(m))
		u->resident += mc_resident_outside(m->lo, m->hi, u->others);
	return true;
}

/* For an allocator that cannot say where its memory is (jemalloc,
 * tcmalloc): the resident bytes of the process's anonymous memory that
 * no known other owns, at most bound, the allocator's own figure for
 * what it holds.  What is still counted that is not the allocator's
 * (memory the program maps itself, a thread that never allocated) is
 * what the bound limits; when the others do not all fit, the bound is
 * the answer. */
static uint64_t unclaimed_resident(uint64_t bound)
{
	struct mc_ranges r;
	struct unclaimed u = { &r, 0 };
	if (!others(&r, false) || !mc_maps_anonymous_each(add_unclaimed, &u))
		return bound;
	return bound != MEMCHECK_UNKNOWN && bound < u.resident ? bound : u.resident;
}

/* ---- glibc ----------------------------------------------------------- */

/* struct mallinfo2 (glibc >= 2.33), spelt out so that memcheck builds
 * against an older <malloc.h> and simply finds no mallinfo2 there. */
struct glibc_mallinfo2 {
	size_t arena;     /* non-mmapped bytes from the system, all arenas */
	size_t ordblks;
	size_t smblks;
	size_t hblks;
	size_t hblkhd;    /* bytes in mmapped chunks */
	size_t usmblks;
	size_t fsmblks;
	size_t uordblks;  /* bytes in chunks in use (non-mmapped) */
	size_t fordblks;  /* free bytes the arenas keep, top chunk included */
	size_t keepcost;
};

/* glibc's thread arenas live in heaps of HEAP_MAX_SIZE bytes (64 MiB on
 * 64-bit), each aligned to its size and opening with a heap_info; the
 * part made read-write so far is the heap's, the rest is reserved.  The
 * first fields of heap_info have been these since glibc 2.10. */
#define GLIBC_HEAP_MAX ((uintptr_t)64 << 20)
struct glibc_heap_info {
	void *ar_ptr;             /* its arena */
	struct glibc_heap_info *prev;
	size_t size;              /* bytes in use by the heap */
	size_t mprotect_size;     /* bytes made read-write so far */
};

struct glibc_walk {
	uint64_t resident;        /* of the break's memory and the heaps */
	uint64_t thread_bytes;    /* the thread heaps' sizes */
	uintptr_t page;
};

/* Whether the words at a look like a thread heap's heap_info: sizes in
 * pages within the reservation, the arena in this heap (an arena's first
 * heap holds it) or a previous heap to say which. */
static bool glibc_is_heap(const struct glibc_heap_info *h, uintptr_t page)
{
	uintptr_t a = (uintptr_t)h;
	return h->size >= page && h->size <= h->mprotect_size &&
	       h->mprotect_size <= GLIBC_HEAP_MAX && h->size % page == 0 && h->ar_ptr &&
	       ((uintptr_t)h->prev % GLIBC_HEAP_MAX) == 0 &&
	       (h->prev || ((uintptr_t)h->ar_ptr > a && (uintptr_t)h->ar_ptr < a + h->size));
}

/* The thread heaps found by the last walk of /proc/self/maps, so that a
 * region end need not walk it again while they are all there is: a
 * heap's place never changes, and the arenas' system memory is the sum
 * of their sizes.  (Region ends come one at a time.) */
#define GLIBC_MAX_HEAPS 64
static uintptr_t heaps[GLIBC_MAX_HEAPS];
static int nheaps;       /* -1: more than fit */

static void glibc_add_heap(struct glibc_walk *w, uintptr_t a, uintptr_t hi)
{
	const struct glibc_heap_info *h = (const struct glibc_heap_info *)a;
	uintptr_t end = a + h->mprotect_size < hi ? a + h->mprotect_size : hi;
	w->resident += mc_resident_bytes(a, end);
	w->thread_bytes += h->size;
}

static bool glibc_mapping(const struct mc_mapping *m, void *arg)
{
	struct glibc_walk *w = arg;
	if (!is_anonymous(m) || strcmp(m->name, "[heap]") == 0)
		return true;
	/* A mapping of the kernel's may hold several heaps, merged with
	 * other anonymous memory: look at each aligned address in it. */
	uintptr_t a = (m->lo + GLIBC_HEAP_MAX - 1) & ~(GLIBC_HEAP_MAX - 1);
	for (; a >= m->lo && a + sizeof(struct glibc_heap_info) <= m->hi; a += GLIBC_HEAP_MAX) {
		if (!glibc_is_heap((const struct glibc_heap_info *)a, w->page))
			continue;
		glibc_add_heap(w, a, m->hi);
		if (nheaps >= 0 && nheaps < GLIBC_MAX_HEAPS)
			heaps[nheaps++] = a;
		else
			nheaps = -1;
	}
	return true;
}

/* The heaps of the last walk, when they still hold want bytes: each is
 * looked at only once mincore says it is still mapped. */
static bool glibc_cached(struct glibc_walk *w, uint64_t want)
{
	if (nheaps <= 0)
		return false;
	struct glibc_walk c = *w;
	for (int i = 0; i < nheaps; i++) {
		unsigned char v;
		if (mincore((void *)heaps[i], w->page, &v) != 0 ||
		    !glibc_is_heap((const struct glibc_heap_info *)heaps[i], w->page))
			return false;
		const struct glibc_heap_info *h = (const struct glibc_heap_info *)heaps[i];
		glibc_add_heap(&c, heaps[i], heaps[i] + h->mprotect_size);
	}
	if (c.thread_bytes != want)
		return false;
	*w = c;
	return true;
}

/* Where the program break began (start_brk), once known. */
static uintptr_t brk_lo;

static void glibc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	struct glibc_mallinfo2 (*mallinfo2)(void) = (struct glibc_mallinfo2 (*)(void))syms[0];
	if (!mallinfo2)
		return;
	/* mallinfo2 walks every arena's bins under its lock (a cost that
	 * grows with free chunks) and allocates nothing.  Chunk sizes:
	 * headers count as in use, and so do chunks in the threads'
	 * tcaches, as glibc counts them.  Chunks glibc mmaps on their own
	 * (hblkhd) are in use as long as they exist, and in no arena: left
	 * out of both sides. */
	struct glibc_mallinfo2 mi = mallinfo2();
	out->allocated = mi.uordblks;
	/* The main arena: the program break's memory, from where the kernel
	 * put the break (start_brk: where it was at start-up, brk_lo, or
	 * /proc/self/stat's field 47) to where it is now; nothing here but
	 * glibc moves it.  Reading /proc/self/maps costs tens of
	 * microseconds: only a process whose arenas hold more than that has
	 * thread arenas to look for, and only when they are not where the
	 * last look found them. */
	if (!brk_lo)
		brk_lo = (uintptr_t)mc_stat_field(MC_STAT_START_BRK);
	uintptr_t brk_hi = mc_program_break();
	struct glibc_walk w = { .page = (uintptr_t)mc_page_size() }; /* sysconf's rodata: a block */
	uint64_t heap_bytes = 0;
	if (brk_lo && brk_hi > brk_lo) {
		w.resident = mc_resident_bytes(brk_lo, brk_hi);
		heap_bytes = brk_hi - brk_lo;
	}
	if (mi.arena > heap_bytes && !glibc_cached(&w, mi.arena - heap_bytes)) {
		nheaps = 0;
		if (!mc_maps_anonymous_each(glibc_mapping, &w))
			return;
	}
	/* The arenas' memory that is neither the break's nor a thread
	 * heap's: the main arena goes on in mmap'd memory when the break
	 * cannot move.  Counted as resident, which it is unless trimmed. */
	uint64_t found = heap_bytes + w.thread_bytes;
	out->resident = w.resident + (mi.arena > found ? mi.arena - found : 0);
}

static bool glibc_release(void *const *syms)
{
	int (*malloc_trim)(size_t) = (int (*)(size_t))syms[1];
	if (!malloc_trim)
		return false;
	/* malloc_trim cuts the top of each heap and madvises away the whole
	 * pages inside free chunks: mallinfo2 sees only the first, the
	 * resident pages both. */
	malloc_trim(0);
	return true;
}

/* ---- mimalloc -------------------------------------------------------- */

/* The parts of mimalloc.h (2.x) used here. */
typedef struct mi_heap_area_s {
	void *blocks;
	size_t reserved;
	size_t committed;
	size_t used;             /* blocks in use in this area */
	size_t block_size;       /* usable size of each */
	size_t full_block_size;
} mi_heap_area_t;
typedef bool mi_block_visit_fun(const void *heap, const mi_heap_area_t *area, void *block,
				size_t block_size, void *arg);

static bool mi_count_area(const void *heap, const mi_heap_area_t *area, void *block,
			  size_t block_size, void *arg)
{
	(void)heap;
	(void)block_size;
	if (!block) /* called once per area first, then per block if asked */
		*(uint64_t *)arg += (uint64_t)area->used * area->block_size;
	return true;
}

/* mimalloc 2.x serves every block from segments: 32 MiB aligned to
 * their size (a huge block's may be larger), made of 64 KiB slices.  It
 * asks the kernel for them at addresses of its own choosing, from 2 TiB
 * up to 30 TiB (and a little beyond, for the last one), where nothing
 * else maps memory unasked.  A segment it no longer uses goes into its
 * segment cache, still mapped and resident until a delay (500 ms by
 * default) has passed: that is memory it retains, and no call of its
 * says where.  So: every anonymous page in that range is mimalloc's.
 * A segment the kernel placed elsewhere (the address was taken) is
 * found by mi_is_in_heap_region, which reads mimalloc's map of the
 * segments in use, a slice at a time.  The map covers the first 20 TiB
 * of address space; above that one bit stands for everything, and the
 * function answers yes for any address once a segment lies up there.
 * A yes for an address on memcheck's stack says its answers are no good
 * for addresses outside the range. */
#define MI_HINT_LO ((uintptr_t)2 << 40)
#define MI_HINT_HI (((uintptr_t)30 << 40) + ((uintptr_t)1 << 30))
#define MI_SLICE ((uintptr_t)64 << 10)

struct mi_walk {
	bool (*is_in)(const void *);     /* NULL: its map is no good */
	const struct mc_ranges *own;     /* memcheck's: not probed */
	uint64_t resident;
};

/* The slices of [lo, hi) in segments mimalloc's map knows, measured a
 * run at a time. */
static void mi_probe(uintptr_t lo, uintptr_t hi, void *arg)
{
	struct mi_walk *w = arg;
	uintptr_t a = lo & ~(MI_SLICE - 1), run = 0;
	for (; a < hi; a += MI_SLICE) {
		uintptr_t at = a < lo ? lo : a;
		bool in = w->is_in((const void *)at);
		if (in && !run)
			run = at;
		if (!in && run) {
			w->resident += mc_resident_bytes(run, at);
			run = 0;
		}
	}
	if (run)
		w->resident += mc_resident_bytes(run, hi);
}

static bool mi_mapping(const struct mc_mapping *m, void *arg)
{
	struct mi_walk *w = arg;
	if (!is_anonymous(m))
		return true;
	uintptr_t in_lo = m->lo > MI_HINT_LO ? m->lo : MI_HINT_LO;
	uintptr_t in_hi = m->hi < MI_HINT_HI ? m->hi : MI_HINT_HI;
	if (in_lo < in_hi)
		w->resident += mc_resident_bytes(in_lo, in_hi);
	/* Elsewhere, a call per slice: not through memcheck's own
	 * tables, which are large and never mimalloc's. */
	if (w->is_in && m->lo < MI_HINT_LO)
		mc_gaps_each(m->lo, m->hi < MI_HINT_LO ? m->hi : MI_HINT_LO, w->own, mi_probe, w);
	if (w->is_in && m->hi > MI_HINT_HI)
		mc_gaps_each(m->lo > MI_HINT_HI ? m->lo : MI_HINT_HI, m->hi, w->own, mi_probe, w);
	return true;
}

static void mimalloc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	bool (*is_in)(const void *) = (bool (*)(const void *))syms[0];
	void *(*heap_get_default)(void) = (void *(*)(void))syms[1];
	bool (*heap_visit)(const void *, bool, mi_block_visit_fun *, void *) =
		(bool (*)(const void *, bool, mi_block_visit_fun *, void *))syms[2];

	/* resident: the resident pages of its segments, cached ones
	 * included. */
	int on_our_stack = 0;
	struct mc_ranges own;
	others(&own, true);     /* (one left out is probed, no more) */
	struct mi_walk w = { is_in && !is_in(&on_our_stack) ? is_in : NULL, &own, 0 };
	if (mc_maps_anonymous_each(mi_mapping, &w))
		out->resident = w.resident;

	/* allocated: mimalloc 2.0.9 keeps no total of bytes in use (its
	 * malloc statistics exist only in builds with MI_STAT > 1, and
	 * mi_stats_print only prints).  What it does expose is each heap's
	 * pages: blocks in use times block size, per page, no walk over
	 * blocks -- but only for the calling thread's heap.  With one thread
	 * in the process that heap holds every block, so the figure is
	 * mimalloc's own count.  With more, other threads' heaps would be
	 * missed and retained overstated: unknown instead.  A thread that
	 * ended with blocks still live left its pages abandoned, outside any
	 * heap until another thread reclaims them; those are missed too. */
	uint64_t threads = mc_never_threaded() ? 1 : mc_stat_field(MC_STAT_NUM_THREADS);
	/* (a thread just joined may not have left the count yet) */
	bool alone = threads == 1 || (threads > 1 && mc_threads_alone());
	if (heap_get_default && heap_visit && alone) {
		uint64_t used = 0;
		if (heap_visit(heap_get_default(), false, mi_count_area, &used))
			out->allocated = used;
	}
}

/* mimalloc 2.0's options, by their number in its mi_option_t (2.1
 * renamed and renumbered them: unknown there). */
enum { MI20_DECOMMIT_DELAY = 15, MI20_ALLOW_DECOMMIT = 22, MI20_SEGMENT_DECOMMIT_DELAY = 23 };

static uint64_t mimalloc_timed(void *const *syms)
{
	int (*version)(void) = (int (*)(void))syms[4];
	long (*option)(int) = (long (*)(int))syms[5];
	if (!version || !option || version() < 200 || version() >= 210)
		return MEMCHECK_UNKNOWN;
	/* Pages and segments it no longer uses are decommitted once the
	 * delay has passed, looked at as it allocates and frees. */
	if (!option(MI20_ALLOW_DECOMMIT))
		return 0;
	long page = option(MI20_DECOMMIT_DELAY), segment = option(MI20_SEGMENT_DECOMMIT_DELAY);
	long most = page > segment ? page : segment;
	return most > 0 ? (uint64_t)most : 0;
}

static bool mimalloc_release(void *const *syms)
{
	void (*collect)(bool) = (void (*)(bool))syms[3];
	if (!collect)
		return false;
	collect(true);
	return true;
}

/* ---- jemalloc -------------------------------------------------------- */

typedef int mallctl_fn(const char *, void *, size_t *, void *, size_t);

static uint64_t je_size(mallctl_fn *mallctl, const char *name)
{
	size_t v, len = sizeof v;
	if (mallctl(name, &v, &len, NULL, 0) != 0 || len != sizeof v)
		return MEMCHECK_UNKNOWN;
	return v;
}

static void jemalloc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	mallctl_fn *mallctl = (mallctl_fn *)syms[0];
	if (!mallctl)
		return;
	/* Statistics are a snapshot taken at each "epoch" write. */
	uint64_t epoch = 1;
	size_t len = sizeof epoch;
	if (mallctl("epoch", &epoch, &len, &epoch, sizeof epoch) != 0)
		return; /* built without statistics */
	uint64_t allocated = je_size(mallctl, "stats.allocated");
	/* stats.allocated counts the small blocks the threads' caches keep
	 * for reuse: jemalloc's, not the program's.  4096 is
	 * MALLCTL_ARENAS_ALL, the sum over all arenas. */
	uint64_t cached = je_size(mallctl, "stats.arenas.4096.tcache_bytes");
	if (allocated != MEMCHECK_UNKNOWN && cached != MEMCHECK_UNKNOWN && cached <= allocated)
		allocated -= cached;
	out->allocated = allocated;
	/* stats.resident counts pages of active extents, dirty pages not
	 * yet purged and metadata, whether touched or not (6.5 MiB at start
	 * with 0.25 MiB resident): the bound of what is measured. */
	out->resident = unclaimed_resident(je_size(mallctl, "stats.resident"));
}

/* Dirty pages decay to muzzy and muzzy pages to purged over these times,
 * as it allocates and frees (or in a background thread): -1 is never,
 * 0 at once. */
static uint64_t jemalloc_timed(void *const *syms)
{
	mallctl_fn *mallctl = (mallctl_fn *)syms[0];
	ssize_t ms[2];
	const char *names[2] = { "opt.dirty_decay_ms", "opt.muzzy_decay_ms" };
	uint64_t most = 0;
	for (int i = 0; i < 2; i++) {
		size_t len = sizeof ms[i];
		if (!mallctl || mallctl(names[i], &ms[i], &len, NULL, 0) != 0)
			return MEMCHECK_UNKNOWN;
		if (ms[i] > 0 && (uint64_t)ms[i] > most)
			most = (uint64_t)ms[i];
	}
	return most;
}

static bool jemalloc_release(void *const *syms)
{
	mallctl_fn *mallctl = (mallctl_fn *)syms[0];
	if (!mallctl)
		return false;
	/* The calling thread's cache first, so its blocks reach the arenas
	 * and can be purged with them; then purge every arena's dirty and
	 * muzzy pages (arena.<MALLCTL_ARENAS_ALL>.purge). */
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	return mallctl("arena.4096.purge", NULL, NULL, NULL, 0) == 0;
}

/* ---- tcmalloc (gperftools) ------------------------------------------- */

typedef int tc_property_fn(const char *, size_t *);

static uint64_t tc_size(tc_property_fn *get, const char *name)
{
	size_t v = 0;
	return get(name, &v) ? v : MEMCHECK_UNKNOWN;
}

static void tcmalloc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	tc_property_fn *get = (tc_property_fn *)syms[0];
	if (!get)
		return;
	/* current_allocated_bytes already leaves out what the thread,
	 * transfer and central caches keep. */
	out->allocated = tc_size(get, "generic.current_allocated_bytes");
	/* The pages of its spans in use and free, less those it has given
	 * back (heap_size counts them too): the bound of what is measured,
	 * since a span carved from fresh system memory is not resident
	 * until used.  (Its Ranges iterator would name the spans, at 0.5 ms
	 * a region end.) */
	uint64_t heap = tc_size(get, "generic.heap_size");
	uint64_t unmapped = tc_size(get, "tcmalloc.pageheap_unmapped_bytes");
	uint64_t bound = heap != MEMCHECK_UNKNOWN && unmapped != MEMCHECK_UNKNOWN &&
			 unmapped <= heap ? heap - unmapped : MEMCHECK_UNKNOWN;
	out->resident = unclaimed_resident(bound);
}

static bool tcmalloc_release(void *const *syms)
{
	void (*release)(void) = (void (*)(void))syms[1];
	void (*thread_idle)(void) = (void (*)(void))syms[2];
	if (!release)
		return false;
	/* ReleaseFreeMemory gives back the page heap's free spans only:
	 * blocks in the thread caches stay, and so do the spans they keep
	 * from being whole.  Emptying the calling thread's cache first
	 * (rebuilt at its next malloc) took what remains after 100 MiB of
	 * small blocks freed from 31 to 19 MiB. */
	if (thread_idle)
		thread_idle();
	release();
	return true;
}

/* ---- the table ------------------------------------------------------- */

/* What memcheck knows of each family of lib/allocators.def, by the id of
 * its lines there: how it is recognised and what it is asked.  glibc is
 * recognised by the path of its object (below, not in the table); the
 * others, wherever they were loaded from, by a symbol only they export.
 * An object of a family already here adds nothing (FAMILY_<id> empty). */
/* glibc gives memory back when a free leaves more than its thresholds
 * free, tcmalloc as the bytes freed add up (its release rate): by
 * amounts, never on a timer. */
static const struct allocator glibc = {
	"glibc", { NULL }, { "mallinfo2", "malloc_trim", NULL },
	glibc_stats, glibc_release, NULL,
};
#define FAMILY_GLIBC
#define FAMILY_MIMALLOC                                                        \
	{ "mimalloc", { "mi_version", NULL },                                  \
	  { "mi_is_in_heap_region", "mi_heap_get_default", "mi_heap_visit_blocks", "mi_collect", \
	    "mi_version", "mi_option_get" },                                   \
	  mimalloc_stats, mimalloc_release, mimalloc_timed },
#define FAMILY_JEMALLOC                                                        \
	{ "jemalloc", { "mallctl", NULL }, { "mallctl", NULL },                 \
	  jemalloc_stats, jemalloc_release, jemalloc_timed },
#define FAMILY_TCMALLOC                                                        \
	{ "tcmalloc", { "tc_version", "MallocExtension_GetNumericProperty", NULL }, \
	  { "MallocExtension_GetNumericProperty", "MallocExtension_ReleaseFreeMemory", \
	    "MallocExtension_MarkThreadIdle", NULL },                          \
	  tcmalloc_stats, tcmalloc_release, NULL },
#define FAMILY_TCMALLOC_FULL

/* The list itself is lib/allocators.def's: a line whose id has no
 * FAMILY_<id> above does not build. */
static const struct allocator allocators[] = {
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) FAMILY_##id
#include "allocators.def"
#undef MC_ALLOCATOR
};

static char name_buf[256];
static const char *name = "unknown";
static const struct allocator *live;     /* NULL: one memcheck cannot ask */
static void *syms[NSYMS];                /* live->calls, resolved */
static const void *glibc_base;           /* the C library's, when it serves malloc */
static uintptr_t own_lo, own_hi;         /* the allocator's object, when not the C library's */

static bool is_glibc(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* libc.so.6 as linked; libc-2.x.so is the file older glibc installs. */
	return strncmp(base, "libc.so", 7) == 0 ||
	       (strncmp(base, "libc-", 5) == 0 && strstr(base, ".so"));
}

static const struct allocator *find_markers(const void *base)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(allocators); i++) {
		const struct allocator *a = &allocators[i];
		for (size_t j = 0; j < MC_ARRAY_SIZE(a->markers) && a->markers[j]; j++) {
			if (mc_sym_in(base, a->markers[j]))
				return a;
		}
	}
	return NULL;
}

/* Tell stacks.c where the object that starts at base lies, an object
 * that allocates for itself (mc_stacks_runtime_object): _dl_find_object,
 * which takes no lock (detection may run inside the dynamic loader's own
 * malloc).  Without it (glibc < 2.35) the extent stays empty. */
static void runtime_object(int i, const void *base)
{
	uintptr_t lo = 0, hi = 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	if (base && _dl_find_object((void *)base, &fo) == 0 && fo.dlfo_map_start == base) {
		lo = (uintptr_t)fo.dlfo_map_start;
		hi = (uintptr_t)fo.dlfo_map_end;
	}
#else
	(void)base;
#endif
	mc_stacks_runtime_object(i, lo, hi);
	if (i == 1) {
		own_lo = lo;
		own_hi = hi;
	}
}

void mc_allocator_detect(void)
{
	const char *object = mc_real.object;
	/* Searching that object alone: a program may load several allocators
	 * while another serves malloc. */
	const void *base = mc_real.malloc ? mc_object_base((void *)mc_real.malloc, NULL) : NULL;
	const struct allocator *a = NULL;
	if (object && *object && is_glibc(object))
		a = &glibc;
	else if (base)
		a = find_markers(base);
	memset(syms, 0, sizeof syms);
	size_t ncalls = 0;
	while (a && ncalls < NSYMS && a->calls[ncalls])
		ncalls++;
	mc_sym_in_each(base, a ? a->calls : NULL, syms, ncalls); /* one walk */
	live = a;
	glibc_base = a == &glibc ? base : NULL;
	/* Start-up comes before the first call memcheck forwards to glibc's
	 * malloc (mc_resolve), so the break is still where the kernel put
	 * it: sbrk(0) says where (mc_program_break), with the one brk(2)
	 * that glibc's first sbrk makes anyway (its break is then known),
	 * where the exit read /proc/self/stat for it (three system calls
	 * in every measured process under glibc). */
	if (a == &glibc && !brk_lo)
		brk_lo = mc_program_break();
	/* the dynamic loader; the allocator, unless the C library (whose
	 * strdup and fopen make the program's blocks) */
	runtime_object(0, (const void *)getauxval(AT_BASE));
	runtime_object(1, a == &glibc ? NULL : base);

	if (a) {
		name = a->name;
	} else if (object && *object) {
		size_t n = strlen(object);
		if (n >= sizeof name_buf)
			n = sizeof name_buf - 1;
		memcpy(name_buf, object, n);
		name_buf[n] = 0;
		name = name_buf;
	} else {
		name = "unknown";
	}
}

const char *mc_allocator_name(void)
{
	return name;
}

MC_API const char *memcheck_allocator(void)
{
	mc_resolve();
	return mc_allocator_name();
}

const void *mc_allocator_glibc_base(void)
{
	return glibc_base;
}

bool mc_allocator_own_code(uintptr_t pc)
{
	return pc - own_lo < own_hi - own_lo;
}

/* A killed process's record asks the allocator (below) through
 * mc_fatal_bounded: its lock may be held by the interrupted code.  The
 * question and its answer (the record's questions come one at a time,
 * on the writing thread); cold, off the region's end's own path. */
static struct ask {
	int what; /* 0 statistics, 1 release, 2 the purge timer */
	struct mc_alloc_stats *stats;
	bool released;
	uint64_t ms;
} ask;

static void ask_allocator(void *arg)
{
	struct ask *q = arg;
	if (q->what == 0)
		live->stats(syms, q->stats);
	else if (q->what == 1)
		q->released = live->release(syms);
	else
		q->ms = live->timed(syms);
}

/* false: given up, the answer unknown */
static __attribute__((noinline, cold)) bool ask_bounded(int what, struct mc_alloc_stats *out)
{
	ask.what = what;
	ask.stats = out;
	if (mc_fatal_bounded(ask_allocator, &ask))
		return true;
	if (out)
		out->allocated = out->resident = MEMCHECK_UNKNOWN;
	return false;
}

bool mc_allocator_stats(struct mc_alloc_stats *out)
{
	out->allocated = out->resident = out->retained = MEMCHECK_UNKNOWN;
	/* a killed process whose allocator may hold its lock (fatal.c) */
	if (!live || mc_fatal_in_allocator)
		return false;
	int saved = errno;
	if (unlikely(mc_fatal_sig != 0))
		ask_bounded(0, out);
	else
		live->stats(syms, out);
	if (out->allocated != MEMCHECK_UNKNOWN && out->resident != MEMCHECK_UNKNOWN)
		/* Blocks in use that were never written are not resident:
		 * with enough of them, in use exceeds resident. */
		out->retained = out->resident > out->allocated ? out->resident - out->allocated : 0;
	errno = saved;
	return out->allocated != MEMCHECK_UNKNOWN || out->resident != MEMCHECK_UNKNOWN;
}

uint64_t mc_allocator_timed_purge_ms(void)
{
	if (!live || mc_fatal_in_allocator)
		return MEMCHECK_UNKNOWN;
	if (!live->timed)
		return 0;
	int saved = errno;
	uint64_t ms = unlikely(mc_fatal_sig != 0) ? (ask_bounded(2, NULL) ? ask.ms : MEMCHECK_UNKNOWN)
						 : live->timed(syms);
	errno = saved;
	return ms;
}

bool mc_allocator_release(void)
{
	if (!live || mc_fatal_in_allocator)
		return false;
	int saved = errno;
	bool ok = unlikely(mc_fatal_sig != 0) ? ask_bounded(1, NULL) && ask.released
					      : live->release(syms);
	errno = saved;
	return ok;
}

void mc_allocator_forget(void)
{
	nheaps = 0; /* the cache of glibc's heaps: walk /proc/self/maps again */
}
