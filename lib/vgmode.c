/*
 * vgmode.c - valgrind mode: under valgrind, with memcheck's wrapper still
 * reached (memcheck run --valgrind passes the --soname-synonyms that keep
 * it so), a region's leak figures are valgrind's own.
 *
 * valgrind says what a leak check found only as process-wide totals:
 * VALGRIND_COUNT_LEAKS and VALGRIND_COUNT_LEAK_BLOCKS return the figures
 * of the last leak check, "leaked" being definitely plus indirectly lost
 * (memcheck/mc_main.c adds MC_(bytes_leaked) and MC_(bytes_indirect); it
 * has no request that returns them apart).  So a region takes the totals
 * at its begin (a summary leak check) and again at its end (an "added"
 * leak check, which also prints the loss records that grew since the
 * last check, with valgrind's stacks), and its figures are the
 * differences.  The sum of definite and indirect goes into
 * definitely_lost; indirectly_lost is unknown (null in the report).
 *
 * Only valgrind's memcheck tool checks leaks: under its other tools
 * (callgrind, massif...) the figures are memcheck's own.
 *
 * Without --soname-synonyms valgrind replaces malloc in every object,
 * memcheck's own included: memcheck is bypassed and counts nothing.  A
 * program run so with memcheck preloaded (a test suite that runs some of
 * its tests under valgrind itself, as nettle's side-channel tests do,
 * while the whole suite has memcheck preloaded) must end as it does
 * bare: every region failed as bypassed (exit status 23 for every such
 * program).  The process region is then valgrind's to judge at its own
 * exit, after its __libc_freeres: memcheck asks valgrind for no leak
 * check (one in the process counts its records among valgrind's errors:
 * a joined thread's stack kept by the C library, possibly lost before
 * the freeres, made valgrind's --error-exitcode fail zix's thread tests)
 * and does not fail it.  A region the program begins itself takes
 * valgrind's leak figures, as in valgrind mode proper.
 *
 * A difference is a net change of the whole heap: a block older than the
 * region that the region makes unreachable counts as the region's, and
 * a region that frees older blocks of a kind can hide its own of that
 * kind.  A change below zero is reported as zero.
 */
#include <string.h>

#include "internal.h"

#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define MC_HAVE_VALGRIND 1
#else
#define MC_HAVE_VALGRIND 0
#endif

/* valgrind's totals after one leak check. */
struct vg_totals {
	unsigned long bytes[4], blocks[4]; /* leaked, dubious, reachable, suppressed */
};

#define VG_MAX_REGIONS 64 /* as deep as region.c's region stack */

static struct {
	bool on;               /* the region began in valgrind mode */
	struct vg_totals base;
} vg_regions[VG_MAX_REGIONS];
MC_START_TOUCHED(vg_regions[0]); /* written at every region's begin */

#if MC_HAVE_VALGRIND
/* struct mallinfo, as valgrind's replacement fills it. */
struct vg_mallinfo {
	int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks,
		keepcost;
};

/* A leak check that finds the heap empty ("All heap blocks were freed")
 * leaves valgrind's totals as the previous check set them.  valgrind's
 * replacement of mallinfo tells an empty heap: bytes in use (uordblks)
 * 0.  It replaces the function in libc and in the allocator the
 * --soname-synonyms pattern names, whichever symbol lookup finds. */
static struct vg_mallinfo (*libc_mallinfo)(void);

static bool heap_empty(void)
{
	return libc_mallinfo && libc_mallinfo().uordblks == 0;
}

/* Is valgrind's tool memcheck?  Only memcheck does leak checks; under
 * callgrind, cachegrind, massif, helgrind, drd or dhat its requests go
 * unanswered, its totals read zero, and a leaking program passed.
 * memcheck answers the count request with 0; another tool leaves the
 * request's default.  (mallinfo cannot tell: callgrind replaces no
 * allocator, and libc's own mallinfo grows with a block as valgrind's
 * replacement does.) */
static bool tool_leak_checks(void)
{
	unsigned long n[4] = { 0 };
	return VALGRIND_DO_CLIENT_REQUEST_EXPR(1, VG_USERREQ__COUNT_LEAKS, &n[0], &n[1], &n[2],
					       &n[3], 0) == 0;
}

/* Does valgrind serve the allocator's blocks?  Not when its somalloc
 * pattern misses the allocator (nouserintercepts with tcmalloc: valgrind
 * sees no allocation at all).  valgrind always replaces libc's mallinfo:
 * its bytes in use grow by a block of the allocator's when it does. */
static bool valgrind_serves(void *(*alloc)(size_t), void (*release)(void *))
{
	/* libc's own, found by hand (elfsym.c): dlopen and dlsym allocate,
	 * and where valgrind's malloc serves memcheck's calls too (bypassed)
	 * their blocks were the program's in valgrind's figures (a process
	 * killed by a signal: 13 blocks more "still reachable" than bare) */
	const void *libc = NULL;
	if (mc_sym_first("__libc_freeres", &libc) && libc)
		libc_mallinfo = (struct vg_mallinfo (*)(void))mc_sym_in(libc, "mallinfo");
	if (!libc_mallinfo)
		return false;
	int before = libc_mallinfo().uordblks;
	void *volatile p = alloc(4096);
	int after = libc_mallinfo().uordblks;
	release(p);
	return after > before;
}

/* Bypassed: does valgrind serve the malloc the program calls, the first
 * in symbol lookup (not memcheck's when another allocator comes first)? */
__attribute__((cold, noinline)) static bool program_served(void)
{
	void *(*alloc)(size_t) = (void *(*)(size_t))mc_sym_first("malloc", NULL);
	void (*release)(void *) = (void (*)(void *))mc_sym_first("free", NULL);
	return alloc && release && valgrind_serves(alloc, release);
}

static void vg_read(struct vg_totals *t)
{
	unsigned long *b = t->bytes, *n = t->blocks;
	VALGRIND_COUNT_LEAKS(b[0], b[1], b[2], b[3]);
	VALGRIND_COUNT_LEAK_BLOCKS(n[0], n[1], n[2], n[3]);
	if (heap_empty())
		memset(t, 0, sizeof *t);
}
#endif

bool mc_vg_mode(void)
{
#if MC_HAVE_VALGRIND
	static int mode = -1; /* not asked yet */
	if (!RUNNING_ON_VALGRIND)
		return false;
	if (mode < 0) {
		/* Under another tool memcheck's own figures stand, and
		 * nothing is said: there is nothing of valgrind's to use. */
		if (!tool_leak_checks())
			return (mode = 0);
		/* Bypassed: valgrind's figures where valgrind serves the
		 * program's malloc (its replacement in every object), not
		 * where another allocator comes before memcheck and valgrind
		 * sees nothing (the bypass stays a region's failure). */
		if (!mc_is_active)
			return (mode = program_served());
		mode = valgrind_serves(mc_real.malloc, mc_real.free);
		if (!mode)
			mc_log("running under valgrind, which does not serve the allocator's "
			       "blocks (--soname-synonyms=somalloc=nouserintercepts with an "
			       "allocator other than glibc?): the leak figures are memcheck's "
			       "own. Give somalloc=<pattern naming the allocator's object>, "
			       "as memcheck run --valgrind does");
	}
	return mode;
#else
	return false;
#endif
}

void mc_vg_region_begin(int index, const char *name, bool process)
{
	if (index < 0 || index >= VG_MAX_REGIONS)
		return;
	vg_regions[index].on = mc_vg_mode() && (mc_is_active || !process);
#if MC_HAVE_VALGRIND
	if (!vg_regions[index].on)
		return;
	VALGRIND_PRINTF("memcheck: region \"%s\" begins: leak summary for its baseline\n", name);
	VALGRIND_DO_QUICK_LEAK_CHECK;
	vg_read(&vg_regions[index].base);
#else
	(void)name;
#endif
}

void mc_vg_region_drop(int index)
{
	if (index >= 0 && index < VG_MAX_REGIONS)
		vg_regions[index].on = false;
}

bool mc_vg_region_end(int index, struct memcheck_result *res)
{
	if (index < 0 || index >= VG_MAX_REGIONS || !vg_regions[index].on)
		return false;
	vg_regions[index].on = false;
#if MC_HAVE_VALGRIND
	if (!RUNNING_ON_VALGRIND)
		return false;
	struct vg_totals now;
	VALGRIND_PRINTF("memcheck: region \"%s\" ends: loss records added since the last "
			"leak check\n", res->name);
	VALGRIND_DO_ADDED_LEAK_CHECK;
	vg_read(&now);
	const struct vg_totals *b = &vg_regions[index].base;
	struct memcheck_count *to[4] = { &res->definitely_lost, &res->possibly_lost,
					 &res->still_reachable, &res->suppressed };
	for (int i = 0; i < 4; i++) {
		bool down = now.bytes[i] < b->bytes[i] || now.blocks[i] < b->blocks[i];
		to[i]->bytes = down ? 0 : now.bytes[i] - b->bytes[i];
		to[i]->blocks = down ? 0 : now.blocks[i] - b->blocks[i];
	}
	res->indirectly_lost.blocks = res->indirectly_lost.bytes = MEMCHECK_UNKNOWN;
	return true;
#else
	(void)res;
	return false;
#endif
}
