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
#include <stdint.h>
#include <string.h>

#include "internal.h"

struct kind_stacks {
	uint64_t *id;
	size_t k;
	int kind;
};

static void note_kind(const struct mc_block *b, int kind, uint64_t credit, void *arg)
{
	(void)credit;
	struct kind_stacks *p = arg;
	if (kind == p->kind)
		p->id[p->k++] = b->stack;
}

/* The distinct stacks, ascending, of the m blocks a pass left of kind
 * that supp_region.c's question ask keeps, at the front of a mapping of
 * *mapped bytes, *n of them; NULL where it keeps none. */
static uint64_t *stacks_asked(const struct mc_scan *s, size_t m, int kind,
			      size_t (*ask)(uint32_t *stacks, size_t n), size_t *n, size_t *mapped)
{
	*mapped = m * (sizeof(uint64_t) + sizeof(uint32_t));
	uint64_t *id = mc_map(*mapped);
	if (!id)
		return NULL;
	uint32_t *asked = (uint32_t *)(id + m);
	struct kind_stacks p = { id, 0, kind };
	mc_scan_each(s, 0, note_kind, &p);
	mc_scan_sort_ids(id, p.k);
	size_t k = 0;
	for (size_t i = 0; i < p.k; i++)
		if (!k || asked[k - 1] != id[i])
			asked[k++] = (uint32_t)id[i];
	k = ask(asked, k);
	for (size_t i = 0; i < k; i++)
		id[i] = asked[i];
	if (!k) {
		mc_unmap(id, *mapped);
		return NULL;
	}
	*n = k;
	return id;
}

/* The pools among the m blocks a pass left possibly reachable: the
 * distinct stacks of those blocks, ascending, that a libmemcheck:Pool
 * entry matches (supp_region.c); NULL where there are none.  Only a
 * possibly reachable block can be a pool the program points into and
 * not reached otherwise: one a definite pointer points into was made
 * possibly reachable, and so was everything reached through it.
 * Without such an entry neither the files are read again nor anything
 * mapped. */
static __attribute__((noinline)) uint64_t *pool_stacks(const struct mc_scan *s, size_t m,
						       size_t *npool, size_t *mapped)
{
	if (!mc_suppress_pools_any())
		return NULL;
	return stacks_asked(s, m, MC_KIND_POSSIBLE, mc_suppress_pools, npool, mapped);
}

/* At the exit under valgrind's text with another thread running, where
 * memcheck cannot run the C library's and libstdc++'s freeres functions
 * that valgrind runs before its scan: the stacks of the r still
 * reachable blocks that the entries marked "# freeres:" take
 * (supp_region.c's mc_suppress_freeres), as pool_stacks gives its own.
 * A pass that does not read those blocks (scan.c) finds lost what they
 * alone point to, as valgrind, whose freeres freed them, does (a block
 * whose only copy is in stdio's buffer, a putenv string in the
 * environment's array: definitely lost there, still reachable here
 * before; without the running thread memcheck runs the functions
 * itself). */
static __attribute__((noinline, cold)) uint64_t *freeres_stacks(const struct mc_scan *s,
								 size_t r, size_t *n,
								 size_t *mapped)
{
	return stacks_asked(s, r, MC_KIND_REACHABLE, mc_suppress_freeres, n, mapped);
}

/* A pass of the scan, and where it left possibly reachable blocks that
 * are pools, a pass again knowing them (the pass's arguments as
 * mc_scan's). */
static inline __attribute__((always_inline)) bool
pass_and_pools(struct mc_scan *out, const struct mc_scan_from *from, bool own,
	       const void *regs, size_t nregs)
{
	bool ok = mc_scan_pass(out, from, own, regs, nregs, NULL, 0);
	size_t m = 0;
	for (size_t i = 0; ok && i < out->n; i++)
		m += out->state[i] == MC_KIND_POSSIBLE;
	size_t npool = 0, mapped = 0;
	uint64_t *pool = m ? pool_stacks(out, m, &npool, &mapped) : NULL;
	if (pool) {
		mc_scan_free(out);
		ok = mc_scan_pass(out, from, own, regs, nregs, pool, npool);
		mc_unmap(pool, mapped);
	}
	return ok;
}

/* At the exit under valgrind's text: the passes again without the
 * blocks freeres_stacks names, where it names any.  Out of line (group
 * 7): mc_scan is in every leaking exit's code. */
static __attribute__((noinline, cold)) bool freeres_pass(struct mc_scan *out,
							 const struct mc_scan_from *from, bool own,
							 const void *regs, size_t nregs)
{
	size_t r = 0;
	for (size_t i = 0; i < out->n; i++)
		r += out->state[i] == MC_KIND_REACHABLE;
	size_t nfreed = 0, mapped = 0;
	uint64_t *freed = r ? freeres_stacks(out, r, &nfreed, &mapped) : NULL;
	if (!freed)
		return true;
	mc_scan_free(out);
	mc_scan_freed(freed, nfreed);
	bool ok = pass_and_pools(out, from, own, regs, nregs);
	mc_scan_freed(NULL, 0);
	mc_unmap(freed, mapped);
	return ok;
}

/* Not inlined: without `from`, the stack scanned is the callers' frames,
 * from the word above this function's return address up, and the
 * caller's callee-saved registers are copied in, before
 * memcheck's own code has touched a block address. */
__attribute__((noinline)) bool mc_scan(struct mc_scan *out, const struct mc_scan_from *from)
{
	double t0 = mc_now();
	static uintptr_t regs[6]; /* the scans are serialised (region.c's lock) */
	struct mc_scan_from here;
	bool own = !from;
	if (own) {
		__builtin_unwind_init();
		/* the callee-saved registers, which may hold the program's
		 * pointers, stored as they are (not through setjmp, which
		 * is the program's entry point here: jmpbuf.c) */
		__asm__ volatile("movq %%rbx, 0(%0)\n\tmovq %%rbp, 8(%0)\n\t"
				 "movq %%r12, 16(%0)\n\tmovq %%r13, 24(%0)\n\t"
				 "movq %%r14, 32(%0)\n\tmovq %%r15, 40(%0)"
				 : : "r"(regs) : "memory");
		here.sp = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *);
		here.at_exit = false;
		here.alone = false;
		here.by_exit = false;
		from = &here;
	}
	bool ok = pass_and_pools(out, from, own, own ? regs : NULL, sizeof regs);
	if (ok && unlikely(from->at_exit && mc_opt.valgrind_text != MC_VGTEXT_NONE))
		ok = freeres_pass(out, from, own, own ? regs : NULL, sizeof regs);
	if (own)
		memset(&regs, 0, sizeof regs);
	if (ok)
		out->seconds = mc_now() - t0;
	return ok;
}
