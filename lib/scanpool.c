/*
 * scanpool.c - the scan's pools: a second pass over the roots and the
 * heap where the first left possibly reachable blocks that are pools.
 *
 * A pool is a block a program carves its objects from, named by a
 * libmemcheck:Pool entry of the suppression files (glib.supp: GLib's
 * slice chunks, where GLib keeps them: G_SLICE set by the user, or GLib
 * linked into the program; gslice.c says why GLib's own otherwise
 * serves each slice with malloc).  The program's pointers to its objects
 * point into the pool, and what it keeps there (GIO's extension points,
 * GTest's cases) was possibly lost, where valgrind, which sees each
 * object as a block, says still reachable.  The pools cannot be known
 * before the scan without naming the frames of every block's stack, nor
 * during it (naming frames may load libdw, which takes the dynamic
 * linker's lock and calls malloc while the table is held): the scan is
 * made again knowing them (scan.c takes a pointer into a pool as one to
 * its start), paid only by a process whose scan left a block possibly
 * reachable and whose files have a Pool entry.
 */
#include <setjmp.h>
#include <string.h>

#include "internal.h"

struct possible {
	uint64_t *id;
	size_t k;
};

static void note_possible(const struct mc_block *b, int kind, uint64_t credit, void *arg)
{
	(void)credit;
	struct possible *p = arg;
	if (kind == MC_KIND_POSSIBLE)
		p->id[p->k++] = b->stack;
}

/* The pools among the m blocks a pass left possibly reachable: the
 * distinct stacks of those blocks, ascending, that a libmemcheck:Pool
 * entry matches (supp_region.c), at the front of a mapping of *mapped
 * bytes; NULL where there are none.  Only a possibly reachable block can
 * be a pool the program points into and not reached otherwise: one a
 * definite pointer points into was made possibly reachable, and so was
 * everything reached through it.  Without such an entry neither the
 * files are read again nor anything mapped. */
static __attribute__((noinline)) uint64_t *pool_stacks(const struct mc_scan *s, size_t m,
						       size_t *npool, size_t *mapped)
{
	if (!mc_suppress_pools_any())
		return NULL;
	*mapped = m * (sizeof(uint64_t) + sizeof(uint32_t));
	uint64_t *id = mc_map(*mapped);
	if (!id)
		return NULL;
	uint32_t *ask = (uint32_t *)(id + m);
	struct possible p = { id, 0 };
	mc_scan_each(s, 0, note_possible, &p);
	mc_scan_sort_ids(id, p.k);
	size_t k = 0;
	for (size_t i = 0; i < p.k; i++)
		if (!k || ask[k - 1] != id[i])
			ask[k++] = (uint32_t)id[i];
	k = mc_suppress_pools(ask, k);
	for (size_t i = 0; i < k; i++)
		id[i] = ask[i];
	if (!k) {
		mc_unmap(id, *mapped);
		return NULL;
	}
	*npool = k;
	return id;
}

/* Not inlined: without `from`, the stack scanned is the callers' frames,
 * from the word above this function's return address up, and the
 * caller's callee-saved registers are copied in through setjmp, before
 * memcheck's own code has touched a block address. */
__attribute__((noinline)) bool mc_scan(struct mc_scan *out, const struct mc_scan_from *from)
{
	double t0 = mc_now();
	static jmp_buf regs; /* the scans are serialised (region.c's lock) */
	struct mc_scan_from here;
	bool own = !from;
	if (own) {
		__builtin_unwind_init();
		/* glibc mangles the saved stack and frame pointers in a
		 * jmp_buf, not the callee-saved registers that may hold the
		 * program's pointers: those are what matter here. */
		setjmp(regs);
		here.sp = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *);
		here.at_exit = false;
		here.alone = false;
		from = &here;
	}
	bool ok = mc_scan_pass(out, from, own, own ? regs : NULL, sizeof regs, NULL, 0);
	size_t m = 0;
	for (size_t i = 0; ok && i < out->n; i++)
		m += out->state[i] == MC_KIND_POSSIBLE;
	size_t npool = 0, mapped = 0;
	uint64_t *pool = m ? pool_stacks(out, m, &npool, &mapped) : NULL;
	if (pool) {
		mc_scan_free(out);
		ok = mc_scan_pass(out, from, own, own ? regs : NULL, sizeof regs, pool, npool);
		mc_unmap(pool, mapped);
	}
	if (own)
		memset(&regs, 0, sizeof regs);
	if (ok)
		out->seconds = mc_now() - t0;
	return ok;
}
