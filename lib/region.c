/*
 * region.c - regions: begin, end, nesting, and what a region reports.
 *
 * A region is an epoch: every block carries the epoch of the newest
 * region begun before it was allocated, so a region's leftovers are the
 * live blocks of its epoch or later.  Its counts are the difference of
 * account.c's sums at its end and at its begin; its live-byte peak is
 * account.c's peak, restarted at its begin and handed back, raised, to
 * the enclosing region at its end, and so is its peak snapshot (the
 * sites at the peak, snapshot.c).  At the end the leftovers are grouped
 * by stack and kind (after a reachability scan when there are any),
 * checked against the budget and reported.
 *
 * Every open region is on one stack; the process region, when there is
 * one, is at its bottom.
 *
 * Two locks, because of fork.  A region's end calls the allocator:
 * libdw allocates while symbolizing, the allocator's statistics may
 * allocate, glibc's pthread_getattr_np reads /proc/self/maps through
 * stdio.  An allocator's own fork handler (jemalloc's, tcmalloc's) holds
 * its locks while memcheck's runs, or the other way round, depending on
 * which registered first; so a lock that memcheck's fork handler waits
 * for must never be held across a call into the allocator, or fork
 * deadlocks (one thread ending regions in a loop, another forking: every
 * time within a few hundred forks).  region_lock serializes begins and
 * ends, the whole of an end included, and fork only tries it;
 * stack_lock guards the region stack itself (regions[], nregions,
 * overflowed), is held only for work that never allocates, and fork
 * takes it.  A child forked while another thread was ending a region
 * gets the stack as it was, without that region, and forgets the state
 * the interrupted end may have left half made (mc_report_state_forget).
 * A region another thread began and had open at the fork is foreign in
 * the child, which has only the forking thread: the child may end it
 * (tests/prog/stress's children end the region main began), and one
 * still open at exit ends unreported (region_drop), never "not ended".
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define MAX_REGIONS 64

/* The figures a region's end takes from the RSS, the allocator and the
 * timeline: at its end, or, at exit, by memcheck's destructor before
 * the ends that its on_exit handler makes after every other object's
 * destructor (mc_regions_exit_take, life.c). */
struct rss_end {
	uint64_t rss_begin, rss_end, peak_rss;
	bool whole;               /* peak_rss is the whole process's */
	bool measured;            /* the RSS figures are measured */
	bool alone;               /* the take read this thread as the only one */
};
struct exit_take {
	bool taken;
	struct rss_end rss;
	bool stats;               /* the allocator's, in retained* */
	uint64_t retained, retained_after_release;
	bool timed;               /* the timeline's end sample, in tl */
	struct mc_timeline tl;
};

struct region {
	char name[128];
	uint32_t epoch;
	bool process;
	struct mc_totals base;
	int64_t live_begin;       /* process live bytes at the start */
	int64_t saved_peak;       /* enclosing regions' live peak so far */
	uint64_t rss_begin;
	uint64_t hwm_floor;       /* peak RSS seen before inner regions reset it */
	bool hwm_reset;
	double t0;
	uintptr_t begin_sp;       /* memcheck_begin's stack pointer, 0: none */
	pthread_t begin_thread;
	bool fold;                /* the process region of a process that
				   * ended regions of its own (a forked check
				   * test, a linked suite's runner or
				   * worker), folded into them: reported
				   * only when it fails */
	bool with_process;        /* ends with the process, as the process
				   * region does (memcheck_end_at_exit) */
	bool foreign;             /* begun, before a fork, by a thread other
				   * than the one that forked: no thread of
				   * this process can end it (see
				   * mc_regions_after_fork_child) */
	struct exit_take early;   /* its figures taken by the destructor,
				   * its end deferred (mc_regions_exit_take) */
	struct mc_peak peak;      /* the sites at its peak (snapshot.c) */
};

static struct region regions[MAX_REGIONS];
MC_START_TOUCHED(regions[0]); /* the process region's */
static int nregions;      /* open regions, the process region included */

/* When the process region began (mc_now's clock); 0 before (progname.c:
 * a file the program changed since is not an input it was given). */
__attribute__((cold)) double mc_process_t0(void)
{
	return regions[0].t0;
}
static int overflowed;    /* begins beyond MAX_REGIONS, ended without report */
static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;
/* fork's prepare handler got region_lock: per thread, since two threads
 * may fork at once (the second would otherwise say the first did not,
 * and region_lock stayed held in the parent for ever). */
static MC_TLS bool fork_has_region_lock;
static bool forked;        /* this process is a fork of one memcheck ran in */
static unsigned ended_here; /* regions ended in this process since the fork */
static char last_ended[128]; /* the name of the last of them */

/* ---- begin: epochs and baselines ------------------------------------- */

/* A new epoch, above every block's.  Epochs have 16 bits in the block
 * table; when they run out, number the open regions 1..n again and every
 * block to match (mc_blocks_renumber).  Call with both locks held. */
static unsigned renumbered;  /* times next_epoch renumbered every epoch */
/* The epochs of the region that failed last, [from, to): its blocks,
 * and none allocated after its end (a new epoch began there).  Valid
 * while no renumbering came between.  Written under stack_lock, so that
 * a child forked during a region's end sees it whole. */
static struct {
	uint32_t from, to;
	unsigned renumbered;
} last_failed;

static uint32_t next_epoch(void)
{
	if (atomic_load(&mc_epoch) >= MC_EPOCH_MAX) {
		renumbered++;
		uint32_t open[MAX_REGIONS];
		for (int i = 0; i < nregions; i++)
			open[i] = regions[i].epoch;
		mc_blocks_renumber(open, nregions);
		/* Regions that share an epoch (rebased together after fork)
		 * keep sharing one. */
		for (int i = 0, k = 0; i < nregions; i++) {
			while (k < nregions && open[k] <= open[i])
				k++;
			regions[i].epoch = (uint32_t)k;
		}
	}
	return atomic_fetch_add(&mc_epoch, 1) + 1;
}

/* A new epoch begun for signals.c's note of an alternate stack in a
 * block of the program's (roots.c): every block allocated from here on
 * carries it or a later one.  0 where a region's begin or end holds the
 * locks now (no note is made then: never a wait inside the program's
 * sigaltstack, which a scan's stop may come to). */
uint32_t mc_region_epoch_mark(void)
{
	if (pthread_mutex_trylock(&region_lock) != 0)
		return 0;
	uint32_t e = 0;
	if (pthread_mutex_trylock(&stack_lock) == 0) {
		e = next_epoch();
		pthread_mutex_unlock(&stack_lock);
	}
	pthread_mutex_unlock(&region_lock);
	return e;
}

/* from_start: the region counts from the start of the process (its
 * baseline is zero, its peak the peak so far), else from now. */
static void region_rebase(struct region *r, uint32_t epoch, bool from_start)
{
	mc_vg_region_begin((int)(r - regions), r->name, r->process);
	r->epoch = epoch;
	if (from_start) {
		memset(&r->base, 0, sizeof r->base);
		r->live_begin = r->saved_peak = 0;
	} else {
		mc_account_sum(&r->base);
		r->saved_peak = mc_account_peak_begin(&r->live_begin);
	}
	mc_peak_begin(&r->peak, from_start);
	/* Taking the peak restarts it: the enclosing region keeps its peak
	 * so far.  Both figures leave memcheck's own memory out
	 * (footprint.c). */
	bool whole;
	if (r > regions) {
		uint64_t hwm = mc_prog_peak_take(&whole, &r->rss_begin, NULL);
		if (r[-1].hwm_floor < hwm)
			r[-1].hwm_floor = hwm;
	} else {
		mc_prog_peak_restart(&whole, &r->rss_begin);
	}
	r->hwm_floor = 0;
	r->hwm_reset = !whole;
	r->t0 = mc_now();
	int64_t live = mc_account_live();
	mc_timeline_begin((int)(r - regions), from_start, live > 0 ? (uint64_t)live : 0,
			  r->rss_begin, r->t0);
	mc_account_countdown();
}

/* Push a region; with region_lock held.  Returns it, or NULL past the
 * nesting limit. */
static struct region *region_push(const char *name, bool process, uintptr_t begin_sp)
{
	pthread_mutex_lock(&stack_lock);
	if (nregions == MAX_REGIONS) {
		bool first = !overflowed++;
		pthread_mutex_unlock(&stack_lock);
		if (first)
			mc_log("regions nest deeper than %d; inner ones are not reported",
			       MAX_REGIONS);
		return NULL;
	}
	if (nregions > 0)
		mc_peak_cover(&regions[nregions - 1].peak);
	struct region *r = &regions[nregions];
	memset(r, 0, offsetof(struct region, peak)); /* mc_peak_begin sets its own */
	mc_copy_name(r->name, sizeof r->name, name ? name : "region");
	r->process = process;
	r->begin_sp = begin_sp;
	r->begin_thread = pthread_self();
	/* The process region counts what valgrind counts: everything since
	 * the process started, what other libraries' constructors allocated
	 * before memcheck's ran included (libstdc++'s 72,704-byte emergency
	 * pool).  Those blocks carry epoch 1, the first there is (0 is
	 * memcheck_ignore's). */
	uint32_t epoch = process ? 1 : next_epoch();
	region_rebase(r, epoch, process);
	nregions++;
	mc_fault_region_begin(r->name);
	pthread_mutex_unlock(&stack_lock);
	return r;
}

/* ---- end: leftovers, violations, the report -------------------------- */

/* The groups in an open-addressing table of slots, each 1 + the index
 * of its group, the groups filled in order after the slots: a table of
 * the groups themselves (24 bytes a slot, two slots a block scanned,
 * probed before written) was 6 page faults of a leaking
 * bench/suite_test 0's exit for its few dozen groups, two a page. */
struct leak_acc {
	uint32_t *slot;         /* [cap], mapped with v after it */
	struct mc_leak *v;      /* [cap / 2], the groups in the order made */
	size_t n, cap;
	uint64_t blocks, bytes;
	struct memcheck_count kinds[4];  /* by enum mc_kind */
};

static size_t leak_acc_bytes(size_t cap)
{
	return cap * sizeof(uint32_t) + cap / 2 * sizeof(struct mc_leak);
}

static void leak_add_kind(const struct mc_block *b, int kind, uint64_t credit, void *arg)
{
	struct leak_acc *a = arg;
	a->blocks++;
	a->bytes += b->size;
	a->kinds[kind].blocks++;
	a->kinds[kind].bytes += b->size;
	if (!a->slot)
		return;
	size_t i = ((b->stack * 4u + (uint32_t)kind) * 0x9e3779b9u) & (a->cap - 1);
	while (a->slot[i] && (a->v[a->slot[i] - 1].stack != b->stack ||
			      a->v[a->slot[i] - 1].kind != (uint32_t)kind))
		i = (i + 1) & (a->cap - 1);
	if (!a->slot[i]) {
		if ((a->n + 1) * 2 > a->cap)
			return; /* full: counted in the totals, not grouped */
		a->v[a->n] = (struct mc_leak){ .stack = b->stack, .kind = (uint32_t)kind,
					       .first = b->ptr };
		a->slot[i] = (uint32_t)++a->n;
	}
	struct mc_leak *g = &a->v[a->slot[i] - 1];
	if (b->ptr < g->first)
		g->first = b->ptr;
	g->blocks++;
	g->bytes += b->size;
	g->indirect += credit;
}

/* Without a scan every leftover is definitely lost. */
static void leak_add(const struct mc_block *b, void *arg)
{
	leak_add_kind(b, MC_KIND_DEFINITE, 0, arg);
}

/* Lost before reachable (valgrind lists still reachable last), then
 * largest first. */
static int leak_cmp(const void *x, const void *y)
{
	const struct mc_leak *a = x, *b = y;
	bool ra = a->kind == MC_KIND_REACHABLE, rb = b->kind == MC_KIND_REACHABLE;
	if (ra != rb)
		return ra ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->blocks != b->blocks)
		return a->blocks < b->blocks ? 1 : -1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static void add_violation(struct memcheck_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_violation(struct memcheck_result *r, const char *fmt, ...)
{
	size_t len = strlen(r->violations);
	if (len && len + 2 < sizeof r->violations) {
		strcpy(r->violations + len, "; ");
		len += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->violations + len, sizeof r->violations - len, fmt, ap);
	va_end(ap);
	r->pass = 0;
}

/* A killed process's scan given up at its deadline (scan.c, fatal.c):
 * the leak kinds unknown (null in the record), and the region fails for
 * it, never a pass its figures did not show. */
static __attribute__((noinline, cold)) void kinds_unknown(struct memcheck_result *r)
{
	const struct memcheck_count unknown = { MEMCHECK_UNKNOWN, MEMCHECK_UNKNOWN };
	r->definitely_lost = r->indirectly_lost = unknown;
	r->possibly_lost = r->still_reachable = unknown;
}

static __attribute__((noinline, cold)) void cut_violation(struct memcheck_result *r)
{
	add_violation(r, "leak check incomplete: the scan of %llu blocks given up %d ms after "
		      "signal %d (MEMCHECK_FATAL_SCAN_MS)",
		      (unsigned long long)r->live_blocks, mc_opt.fatal_scan_ms,
		      mc_fatal_sig ? mc_fatal_sig : mc_fatal_deadline_sig);
}

/* The allocator's retained bytes (and, with MEMCHECK_RELEASE, after its
 * release call) into *retained, *after (left as they are when unknown). */
static void take_alloc_stats(uint64_t *retained, uint64_t *after)
{
	struct mc_alloc_stats st;
	if (mc_allocator_stats(&st)) {
		*retained = st.retained;
		if (mc_opt.release && mc_allocator_release() && mc_allocator_stats(&st))
			*after = st.retained;
	}
}

/* Whether a region's end reads the allocator's statistics whatever its
 * verdict: where something shows them (see region_pop). */
static bool stats_wanted(bool vg, bool out)
{
	return vg || out || mc_opts_full_report() || mc_opt.timeline > 0 || mc_opt.release;
}

/* A running process has resident pages: a figure of 0 is a file of
 * /proc not read (a program at a descriptor limit memcheck could not
 * lift: "RSS: 0 B at end, peak 0 B" was printed as measured). */
static void unread_unknown(struct rss_end *e)
{
	if (!e->measured)
		return;
	if (!e->rss_begin)
		e->rss_begin = MEMCHECK_UNKNOWN;
	if (!e->rss_end)
		e->rss_end = MEMCHECK_UNKNOWN;
	if (!e->peak_rss)
		e->peak_rss = MEMCHECK_UNKNOWN;
}

/* The RSS figures at r's end, the peak since the last take handed to
 * the enclosing region (outer, NULL: none) as its floor.  stack_lock
 * held. */
static void take_rss(const struct region *r, struct region *outer, struct rss_end *e)
{
	e->rss_begin = r->rss_begin;
	e->whole = false;
	uint64_t hwm = mc_prog_peak_take(&e->whole, &e->rss_end, &e->alone);
	/* Not measured (nothing reads them: footprint.c), or the region
	 * began before they were (the process region of a program whose
	 * first API region started them): unknown, all three. */
	e->measured = e->rss_end != MEMCHECK_UNKNOWN;
	if (!e->measured || r->rss_begin == MEMCHECK_UNKNOWN) {
		e->rss_begin = e->rss_end = e->peak_rss = MEMCHECK_UNKNOWN;
		e->whole = false;
	} else if (!e->whole) {
		if (hwm < r->hwm_floor)
			hwm = r->hwm_floor;
		if (hwm < e->rss_end)
			hwm = e->rss_end;
		e->peak_rss = hwm;
		if (outer && outer->hwm_floor < hwm)
			outer->hwm_floor = hwm;
	} else {
		/* /proc/self/clear_refs refused: the kernel's high-water mark
		 * then covers the whole process so far, and the report says so
		 * rather than pass it off as the region's. */
		e->peak_rss = hwm ? hwm : MEMCHECK_UNKNOWN;
	}
	unread_unknown(e);
}

/* A region's counts: the sums at its end (now) less those at its begin. */
static inline __attribute__((always_inline)) void counts_from(struct memcheck_result *res,
							       const struct mc_totals *now,
							       const struct mc_totals *base)
{
	res->allocs = now->allocs - base->allocs;
	res->frees = now->frees - base->frees;
	res->reallocs = now->reallocs - base->reallocs;
	res->failed_allocs = now->failed - base->failed;
	res->bytes_allocated = now->bytes_allocated - base->bytes_allocated;
	res->bytes_freed = now->bytes_freed - base->bytes_freed;
	res->double_frees = now->double_frees - base->double_frees;
	res->invalid_frees = now->invalid_frees - base->invalid_frees;
}

/* The violation of a region that ended while memcheck was bypassed, or
 * NULL under valgrind's own malloc: valgrind judges the process at its
 * exit, and its leak figures a region the program began (vgmode.c). */
__attribute__((cold, noinline)) static const char *bypassed(void)
{
	return mc_vg_mode() ? NULL :
	       "memcheck was bypassed: the program's malloc calls do not reach it";
}

/* The process region under valgrind's own malloc, served in every
 * object, memcheck's wrapper included (memcheck bypassed, vgmode.c):
 * memcheck counted nothing, and valgrind's leak check at its exit, after
 * its __libc_freeres, judges the process.  Its figures are unknown, not
 * zero (null in the JSON record, "unknown" in the text; leak_check
 * "valgrind_exit"), so that no reader takes them for a clean process's
 * or for a measurement; the record does not fail (the exit status is
 * the program's under valgrind: its --error-exitcode). */
__attribute__((cold, noinline)) static bool judged_at_valgrind_exit(struct memcheck_result *res)
{
	if (!mc_vg_mode())
		return false;
	const uint64_t u = MEMCHECK_UNKNOWN;
	res->allocs = res->frees = res->reallocs = res->failed_allocs = u;
	res->bytes_allocated = res->bytes_freed = res->live_blocks = res->live_bytes = u;
	res->peak_live_bytes = res->double_frees = res->invalid_frees = u;
	struct memcheck_count *k[] = { &res->definitely_lost, &res->indirectly_lost,
				       &res->possibly_lost, &res->still_reachable,
				       &res->suppressed };
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		k[i]->blocks = k[i]->bytes = u;
	return true;
}

/* Pop the innermost region, measure it and report it; with region_lock
 * held.  The region's figures are taken under stack_lock too (nothing
 * there allocates); the scan, suppressions and report follow without
 * it, from a copy of the region. */
static int region_pop(struct memcheck_result *out, const char *extra_violation,
		      const struct mc_scan_from *from)
{
	pthread_mutex_lock(&stack_lock);
	/* The snapshot first: while the region's peak is still the one new
	 * peaks raise, another thread's cannot make it older.  Taken in the
	 * slot, then copied: its array is kept with the slot for the slot's
	 * next region, and grown in the copy it was not (a page each
	 * region's end, never given back: cli_prog iter 4000 ended with
	 * 4,000 one-page mappings of memcheck's, which mimalloc's,
	 * jemalloc's and tcmalloc's statistics walk at each region's end,
	 * 9.7 s where glibc took 0.87 s), or the slot was left holding the
	 * array the growth unmapped, for its next region to write into. */
	bool snapped = mc_peak_end(&regions[nregions - 1].peak);
	struct region popped = regions[--nregions];
	struct region *r = &popped;
	struct memcheck_result res;
	memset(&res, 0, sizeof res);
	struct mc_fault_info fault;
	mc_fault_region_end(&fault);
	res.injected = fault.injected;
	double t1 = mc_now();
	struct mc_totals now;
	mc_account_sum(&now);
	/* Hand the enclosing region its peak back, raised by ours, and the
	 * snapshot with it. */
	int64_t peak = mc_account_peak_end(r->saved_peak);
	if (nregions > 0) /* r is a copy: the enclosing region is on the stack */
		mc_peak_uncover(&regions[nregions - 1].peak, peak > r->saved_peak);

	mc_copy_name(res.name, sizeof res.name, r->name);
	bool vg = mc_vg_region_end(nregions, &res); /* valgrind's figures rule */
	counts_from(&res, &now, &r->base);
	res.pass = 1;
	/* The region's own peak: how far the process's live bytes rose
	 * above their level when it began. */
	res.peak_live_bytes = peak > r->live_begin ? (uint64_t)(peak - r->live_begin) : 0;

	/* RSS before the scan: its memory is memcheck's, not the region's.
	 * At exit the destructor took it, before the other objects'
	 * destructors ran (mc_regions_exit_take). */
	res.retained_bytes = res.retained_after_release = MEMCHECK_UNKNOWN;
	struct rss_end e;
	if (r->early.taken) {
		e = r->early.rss;
		/* The exit code's pages since: the region ends here. */
		if (e.measured && e.rss_end != MEMCHECK_UNKNOWN)
			e.rss_end = mc_prog_rss_exit(e.rss_end);
		if (e.measured && e.peak_rss != MEMCHECK_UNKNOWN) {
			e.peak_rss = mc_prog_peak_exit(e.peak_rss);
			if (!e.whole && e.peak_rss < e.rss_end)
				e.peak_rss = e.rss_end;
		}
	} else
		take_rss(r, nregions > 0 ? &regions[nregions - 1] : NULL, &e);
	res.rss_begin = e.rss_begin;
	res.rss_end = e.rss_end;
	res.peak_rss = e.peak_rss;
	res.peak_rss_whole_process = e.whole;
	/* Whether this thread is the only one, as the take read it: not
	 * where the destructor took it, other destructors having run
	 * since (one may have started a thread). */
	bool alone_read = e.measured && !r->early.taken;
	bool alone = e.alone;
	pthread_mutex_unlock(&stack_lock);
	struct leak_acc acc = { 0 };
	struct mc_leak *groups = NULL;
	size_t groups_bytes = 0;
	struct mc_scan scan;
	/* A region that left nothing behind needs no scan: most tests. */
	bool left = mc_opt.track && mc_opt.scan && !vg && mc_blocks_any_live(r->epoch);
	/* Other threads may still allocate and free (at exit too: valgrind
	 * stops them there, and its "in use at exit" is their heap at that
	 * moment).  The counts above were read before the blocks are; the
	 * record's figures must be one moment's, so that they add up
	 * (allocations - frees = the blocks in use, the kinds' sum the
	 * same): the scan's blocks come with the counts read as it read
	 * them (mc_scan_totals), and where there is no scan, the blocks and
	 * the counts are read together, the table held (mc_scan_moment).
	 * Alone, nothing moved since the take above.  Bypassed (valgrind's
	 * malloc, or another allocator's, serves the program), nothing is
	 * counted and no moment is wanted: the stop's futex words are
	 * memcheck's hidden memory, which valgrind's check of a system
	 * call's arguments reported ("Syscall param futex(futex) points to
	 * unaddressable byte(s)", an error of each thread's stop). */
	bool others = mc_opt.track && mc_is_active && !vg && !(alone_read && alone) &&
		      !mc_never_threaded();
	bool moved = false;
	if (others && mc_opt.scan && !left) {
		/* Nothing was left when asked, but a thread may have
		 * allocated since: a block found now is scanned.  The
		 * threads are stopped for the process region's figures
		 * only: an inner region's counts take in frees of older
		 * blocks, and no sum of its own can be checked against
		 * them, while a stop at each clean end of a test would
		 * cost every threaded suite. */
		left = mc_scan_moment(r->epoch, NULL, NULL, &now, r->process) > 0;
		moved = !left;
	}
	/* Frames deeper than where the region began are the region's own:
	 * those still live when it ends are memcheck's and the code's that
	 * ends it, and the rest hold stale copies of the addresses the
	 * region's code handled (a check test's frames, below its teardown
	 * fixture's).  Ended on the thread that began it, the stack is
	 * scanned from the shallower of the two points. */
	struct mc_scan_from outer;
	if (from) {
		outer = *from;
		if (r->begin_sp > from->sp && pthread_equal(r->begin_thread, pthread_self()))
			outer.sp = r->begin_sp;
		/* The take above read this thread was the only one (status's
		 * Threads:), where it read status; else, for a scan only,
		 * stat's num_threads: an open and read of /proc/self/stat
		 * took 13.4-14.2 us here, of status 15.6-16.3, a listing of
		 * /proc/self/task (mc_threads_alone's) 14.5-20 (20,000 of
		 * each, by turns, on a loaded machine).  A thread just
		 * joined may still count: then the threads are listed and
		 * stopped, as with more.  First the C library's own flag,
		 * which costs nothing: most test programs never make a
		 * thread. */
		outer.alone = alone_read ? alone
					 : left && (mc_never_threaded() ||
						    mc_stat_field(MC_STAT_NUM_THREADS) == 1);
		from = &outer;
	}
	/* From here on the work is memcheck's own (footprint.c): the scan,
	 * the suppression files, symbolizing leak stacks (libdw loaded,
	 * debug information mapped), and the first report, which touches
	 * the C library's formatting code.  A later clean region only maps
	 * buffers, which footprint.c counts without a window. */
	static bool reported;
	bool window = left || !reported;
	reported = true;
	/* The take above read RSS and M.  Taken by the destructor at exit,
	 * they begin the window all the same when nothing of footprint.c's
	 * ran since (else it reads them again): the process region's
	 * figures are final by then (mc_footprint_final), and its window's
	 * end is settled only for a region begun after it. */
	if (window)
		mc_own_work_begin_taken();
	/* The process's last figures are taken: what the exit maps from
	 * here on comes from one reservation (ownmap.c), counted as the
	 * window's end counts it. */
	if ((window || mc_map_is_tight()) && r->process && from && from->at_exit)
		mc_map_tail_begin(); /* under a limit: the tail reserved for the exit */
	/* The process region's end at exit leaves what it mapped for the
	 * exit to take (the groups, the suppressions' buffers): each
	 * munmap cost 7-80 us here, and a measured /bin/date's exit made
	 * three. */
	bool at_exit = r->process && from && from->at_exit;
	bool scanned = false;
	if (left)
		scanned = mc_scan(&scan, from);
	/* given up at a killed process's deadline (fatal.c): the blocks
	 * are counted, their kinds unknown, the region fails */
	bool cut = left && !scanned && mc_scan_cut();
	if (scanned && mc_scan_totals(&now))
		moved = true;
	if (mc_opt.track && vg) {
		/* valgrind's leak check gives the kinds; the table still says
		 * what is in use (no groups: valgrind lists its own records). */
		mc_blocks_each_live(r->epoch, leak_add, &acc);
		res.live_blocks = acc.blocks;
		res.live_bytes = acc.bytes;
		if (res.peak_live_bytes < res.live_bytes)
			res.peak_live_bytes = res.live_bytes;
	} else if (mc_opt.track && !left && mc_opt.scan) {
		/* Nothing left behind: no groups to collect. */
	} else if (mc_opt.track) {
		/* The table for the groups: a scan counted the blocks it may
		 * hold (every live block, the region's among them), so it is
		 * sized from them, at most half full, and never regrown;
		 * without a scan, 1024 groups to start.  A short test's scan
		 * of a dozen blocks took 6 populated pages for 1024 groups,
		 * where it needs one. */
		acc.cap = 1024;
		if (scanned)
			for (acc.cap = 16; acc.cap < 2 * scan.n + 3 && acc.cap < (1u << 24);)
				acc.cap *= 2;
		for (;;) {
			/* cut: counted, not grouped (no table: leak_add_kind
			 * only counts), the record's time being short */
			acc.slot = cut ? NULL : mc_map(leak_acc_bytes(acc.cap));
			acc.v = acc.slot ? (struct mc_leak *)(acc.slot + acc.cap) : NULL;
			acc.n = 0;
			acc.blocks = acc.bytes = 0;
			memset(acc.kinds, 0, sizeof acc.kinds);
			if (scanned)
				mc_scan_each(&scan, r->epoch, leak_add_kind, &acc);
			else if (others) {
				mc_scan_moment(r->epoch, leak_add, &acc, &now, r->process);
				moved = true;
			} else
				mc_blocks_each_live(r->epoch, leak_add, &acc);
			if (!acc.slot || acc.n * 2 + 2 < acc.cap || acc.cap >= (1u << 24))
				break;
			mc_unmap(acc.slot, leak_acc_bytes(acc.cap));
			acc.cap *= 4;
		}
		res.live_blocks = acc.blocks;
		res.live_bytes = acc.bytes;
		/* The process's live bytes may never rise above their level
		 * at the start (the region freed older blocks first), yet
		 * what the region left was live at once. */
		if (res.peak_live_bytes < res.live_bytes)
			res.peak_live_bytes = res.live_bytes;
		/* Sorted from the slots' order, the order a table of the
		 * groups themselves listed them in: leak_cmp's ties (one
		 * stack's groups of two kinds alike in bytes and blocks) come
		 * out as they did. */
		groups_bytes = acc.n * sizeof *groups;
		groups = acc.n ? mc_map(groups_bytes) : NULL;
		if (groups) {
			size_t n = 0;
			for (size_t i = 0; i < acc.cap; i++)
				if (acc.slot[i])
					groups[n++] = acc.v[acc.slot[i] - 1];
			/* valgrind's loss records: stacks as deep as its */
			if (r->process && unlikely(mc_opt.valgrind_text))
				acc.n = n = mc_vgtext_regroup(groups, n);
			mc_sort(groups, n, sizeof *groups, leak_cmp);
		} else {
			acc.n = 0;
		}
		/* Given back at the exit too: there the table is a piece of
		 * the exit's tail (ownmap.c), and its giving back costs no
		 * system call, but the pieces the suppressions and the names
		 * take next then reuse its pages, touched already, where they
		 * took fresh ones past it: a measured /bin/date's exit faulted
		 * in 14 pages of the tail, 10 now (perf record -e page-faults;
		 * doc/costs.md r-session59-exit59).  Outside the tail (under
		 * valgrind) an munmap more.  (!cut is implied by a table, but
		 * with it gcc 12 lays region_pop out 0xa7 bytes shorter.) */
		if (acc.slot && !cut)
			mc_unmap(acc.slot, leak_acc_bytes(acc.cap));
	} else {
		/* Count-only: sizes of freed blocks are unknown, so are live
		 * bytes and peaks; the block count is the net change, which
		 * cannot tell the region's blocks from older ones it freed. */
		res.live_blocks = res.allocs > res.frees ? res.allocs - res.frees : 0;
		res.live_bytes = MEMCHECK_UNKNOWN;
		res.bytes_freed = MEMCHECK_UNKNOWN;
		res.peak_live_bytes = MEMCHECK_UNKNOWN;
	}
	if (moved)
		counts_from(&res, &now, &r->base);
	if (mc_opt.track && !vg && unlikely(cut)) {
		kinds_unknown(&res);
	} else if (mc_opt.track && !vg) {
		res.definitely_lost = acc.kinds[MC_KIND_DEFINITE];
		res.indirectly_lost = acc.kinds[MC_KIND_INDIRECT];
		res.possibly_lost = acc.kinds[MC_KIND_POSSIBLE];
		res.still_reachable = acc.kinds[MC_KIND_REACHABLE];
	}
	/* Suppressions: the lost records always, for they make the verdict
	 * (add_violation below); the indirectly lost and still reachable
	 * ones only where something reads what matching them changes (their
	 * kinds' figures, suppressed, the records listed, the entries used):
	 * the JSON report, the full text, the caller's struct, valgrind
	 * mode, generated entries, files the user named, a budget on those
	 * figures, a region that fails (its text lists them all).  A passing
	 * process that leaves only what is still reachable (glibc's stdout
	 * buffer) then reads no shipped file and no symbol table.  A folded
	 * region is reported only when it fails. */
	uint64_t interior = now.interior_frees - r->base.interior_frees;
	bool fails = res.double_frees || interior || extra_violation;
	bool all = vg || fails || mc_opt.gen_suppressions || mc_opt.suppressions ||
		   (!r->fold && (out || mc_opt.report || mc_opt.text == MC_TEXT_FULL)) ||
		   mc_vgtext_all_kinds(r->process);
	size_t errors_before = mc_opt.valgrind_text ? mc_vgtext_error_groups(groups, acc.n) : 0;
	if (r->process && mc_opt.valgrind_text >= MC_VGTEXT_FULL)
		mc_vgtext_records(groups, acc.n);
	if (r->process && mc_opt.valgrind_text) {
		struct memcheck_count by_heuristic[MC_HEUR_N];
		if (scanned)
			mc_scan_heuristics(&scan, r->epoch, by_heuristic);
		mc_vgtext_heuristics(scanned ? by_heuristic : NULL);
	}
	struct mc_supp_report supp = { .at_exit = at_exit };
	mc_suppress_region(&res, groups, &acc.n, &supp, all ? MC_SUPP_ALL : MC_SUPP_LOST);
	if (!all && mc_gate_reads_kept())
		mc_suppress_region(&res, groups, &acc.n, &supp, MC_SUPP_ALL);
	double scan_seconds = scanned ? scan.seconds : -1;

	/* What the allocator keeps that the program does not: measured after
	 * the region's RSS is read, since asking may itself allocate.  Asked
	 * only where something reads it: the caller's struct, the JSON
	 * report, the full text, a budget or baseline, the timeline,
	 * MEMCHECK_RELEASE, valgrind mode; else only if the region fails
	 * (its text shows it), below, after the verdict, with nothing in
	 * between that allocates.  A passing default process's summary line
	 * shows none, and asking was 22-25 system calls under mimalloc,
	 * jemalloc and tcmalloc (/proc/self/maps, a PROCMAP_QUERY ioctl a
	 * mapping, mincore: bench/suite_test 1, strace -f), a mincore under
	 * glibc. */
	res.seconds = t1 - r->t0;
	bool stats_read = stats_wanted(vg, out);
	if (stats_read && r->early.stats) {
		res.retained_bytes = r->early.retained;
		res.retained_after_release = r->early.retained_after_release;
	} else if (stats_read) {
		take_alloc_stats(&res.retained_bytes, &res.retained_after_release);
	}
	struct mc_timeline tl;
	bool timed;
	if (r->early.taken) {
		tl = r->early.tl;
		timed = r->early.timed;
	} else {
		int64_t live_end = mc_account_live();
		timed = mc_timeline_end(nregions, live_end > 0 ? (uint64_t)live_end : 0,
					res.rss_end, res.retained_bytes, &tl);
	}

	/* definitely and possibly lost, as valgrind's default
	 * --errors-for-leak-kinds; the process under valgrind's text by
	 * valgrind's rule (vgtext.c) */
	const struct memcheck_count *kinds[] = { &res.definitely_lost, &res.indirectly_lost,
						 &res.possibly_lost, &res.still_reachable };
	static const char *const kind_words[] = { "definitely lost", "indirectly lost",
						  "possibly lost", "still reachable" };
	for (uint32_t k = 0; k < 4; k++)
		if (kinds[k]->blocks && kinds[k]->blocks != MEMCHECK_UNKNOWN &&
		    mc_vgtext_leak_fails(r->process, k))
			add_violation(&res, "%llu bytes in %llu blocks %s",
				      (unsigned long long)kinds[k]->bytes,
				      (unsigned long long)kinds[k]->blocks, kind_words[k]);
	if (res.double_frees)
		add_violation(&res, "%llu double frees", (unsigned long long)res.double_frees);
	/* Counted among invalid_frees; a pointer into a live block is a bug
	 * wherever it comes from. */
	if (interior)
		add_violation(&res, "%llu frees of pointers inside live blocks",
			      (unsigned long long)interior);
	if (extra_violation)
		add_violation(&res, "%s", extra_violation);
	if (supp.violation[0])
		add_violation(&res, "%s", supp.violation);
	mc_gate_region(&res);
	/* The scan's cut fails the record, not the measured ancestors: it
	 * comes of the signal, which does not fail them either. */
	bool known_pass = res.pass;
	if (unlikely(cut))
		cut_violation(&res);
	/* At exit, after the other objects' destructors (mimalloc's
	 * mi_process_done among them): the failing text's figure is the
	 * heap's then. */
	if (!stats_read && !res.pass)
		take_alloc_stats(&res.retained_bytes, &res.retained_after_release);
	if (!res.pass && supp.done != MC_SUPP_ALL) {
		/* Failed on the budget alone: the text lists every record. */
		bool said = supp.violation[0];
		mc_suppress_region(&res, groups, &acc.n, &supp, MC_SUPP_ALL);
		if (!said && supp.violation[0])
			add_violation(&res, "%s", supp.violation);
	}
	mc_report_last_leak(res.pass || vg, groups, acc.n);
	size_t errors_suppressed = mc_opt.valgrind_text ? errors_before - supp.freed_errors -
							  mc_vgtext_error_groups(groups, acc.n) : 0;

	bool vg_exit = unlikely(!mc_is_active) && r->process && !vg && judged_at_valgrind_exit(&res);
	struct mc_region_report rr = {
		.r = &res,
		.leaks = groups,
		.nleaks = vg ? 0 : acc.n < (size_t)mc_opt.max_leaks ? acc.n : (size_t)mc_opt.max_leaks,
		.nleak_groups = vg ? 0 : acc.n,
		.process = r->process,
		.fault = &fault,
		.scan_seconds = scan_seconds,
		.supp = &supp,
		.valgrind = vg,
		.peak = snapped ? &r->peak : NULL,
		.timeline = timed ? &tl : NULL,
		.errors_suppressed = errors_suppressed,
		.rss_asked = e.measured,
		.incomplete = cut,
		.valgrind_exit = vg_exit,
	};
	if (!r->fold || !res.pass)
		mc_report_emit(&rr);
	/* Freed after the report, not after the first matching: its table
	 * of the objects' mappings stays lent to the symbolizer (scan.c)
	 * for a failing region's second matching, of every kind, and the
	 * report's names, which named each object not named before (a C++
	 * program's libstdc++ and libgcc_s, the allocator under jemalloc
	 * or tcmalloc) by an open of /proc/self/maps, a PROCMAP_QUERY and
	 * a close of its own (doc/costs.md, exit52). */
	if (scanned)
		mc_scan_free(&scan);
	if (!r->process) {
		ended_here++;
		mc_copy_name(last_ended, sizeof last_ended, r->name);
	}
	mc_suppress_report_free(&supp);
	if (groups && !at_exit)
		mc_unmap(groups, groups_bytes);
	if (window && r->process)
		mc_own_work_end_process();
	else if (window)
		mc_own_work_end();
	if (unlikely(cut) && known_pass)
		mc_exit_region_incomplete();
	else
		mc_exit_region_ended(res.pass);
	/* What a failing region left behind from here on carries a later
	 * epoch than its blocks, for memcheck_handled(). */
	pthread_mutex_lock(&stack_lock); /* next_epoch: see the head */
	if (!res.pass && !r->process) {
		last_failed.from = r->epoch;
		last_failed.to = next_epoch();
		last_failed.renumbered = renumbered;
	} else {
		last_failed.to = 0;
	}
	pthread_mutex_unlock(&stack_lock);
	if (out)
		*out = res;
	return res.pass ? 0 : 1;
}

/* Pop the innermost region unmeasured and unreported, keeping what the
 * enclosing region takes from it: its live peak back, raised by ours,
 * with the peak's snapshot (snapshot.c); the peak RSS as its floor; the
 * timeline's line closed, so that samples go to the enclosing region's
 * again; valgrind mode's and failure injection's levels.  At exit the
 * destructor took its RSS and timeline already, and handed the floor on
 * (mc_regions_exit_take).  Both locks held; returns the popped slot. */
static struct region *region_drop(void)
{
	struct region *r = &regions[--nregions];
	struct mc_fault_info fault;
	mc_fault_region_end(&fault);
	mc_vg_region_drop(nregions);
	int64_t peak = mc_account_peak_end(r->saved_peak);
	if (nregions > 0)
		mc_peak_uncover(&r[-1].peak, peak > r->saved_peak);
	if (r->early.taken)
		return r;
	struct mc_timeline unused;
	mc_timeline_end(nregions, 0, MEMCHECK_UNKNOWN, MEMCHECK_UNKNOWN, &unused);
	bool whole;
	uint64_t end, hwm = mc_prog_peak_take(&whole, &end, NULL);
	if (hwm < r->hwm_floor)
		hwm = r->hwm_floor;
	if (!whole && nregions > 0 && r[-1].hwm_floor < hwm)
		r[-1].hwm_floor = hwm;
	return r;
}

/* ---- the process region ---------------------------------------------- */

/* Opened at start-up (life.c decides whether this process has one). */
void mc_regions_begin_process(void)
{
	pthread_mutex_lock(&region_lock);
	if (nregions == 0)
		region_push("process", true, 0);
	pthread_mutex_unlock(&region_lock);
}

/* A forked child's process region: named after the check test that ran
 * in it, when it is one (the runner's children would all be "process",
 * told apart only by their order, which changes as tests are added).
 * A child that ended regions of its own (memcheck_tcase's test region)
 * has its figures in them: its process region is folded into them, and
 * reported only when it fails, for what the child did outside them: as
 * "<test> (process)" in a check test, else "process". */
static void name_forked(struct region *r)
{
	const char *test = mc_check_test_name();
	char name[sizeof r->name];
	if (test && ended_here) {
		snprintf(name, sizeof name, "%s (process)", test);
		test = name;
	}
	pthread_mutex_lock(&stack_lock); /* the stack is written: see the head */
	if (test)
		mc_copy_name(r->name, sizeof r->name, test);
	r->fold = ended_here > 0;
	pthread_mutex_unlock(&stack_lock);
}

/* Was this process started by one that runs the same executable: a test
 * runner's worker, started again from the runner's file (Criterion's)? */
static bool parent_runs_this_program(void)
{
	char self[4096], parent[4096], link[64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	snprintf(link, sizeof link, "/proc/%d/exe", (int)getppid());
	ssize_t m = readlink(link, parent, sizeof parent - 1);
	return n > 0 && n == m && memcmp(self, parent, (size_t)n) == 0;
}

/* A worker that ended regions of its own (a linked suite's tests, each in
 * a worker): its process region is folded into them, as a forked check
 * test's, and named after the last of them. */
static void fold_worker(struct region *r)
{
	char name[sizeof r->name];
	snprintf(name, sizeof name, "%.100s (process)", last_ended);
	pthread_mutex_lock(&stack_lock); /* the stack is written: see the head */
	mc_copy_name(r->name, sizeof r->name, name);
	r->fold = true;
	pthread_mutex_unlock(&stack_lock);
}

/* At exit (life.c: the destructor, or the on_exit handler when the
 * destructor did not run): every region still open ends, the process
 * region last; a forked child's foreign ones unreported.  Guard held. */
void mc_regions_end_all(const struct mc_scan_from *from)
{
	pthread_mutex_lock(&region_lock);
	while (nregions > 0) {
		struct region *top = &regions[nregions - 1];
		if (top->foreign) {
			/* Its thread is not in this process: it ends quietly,
			 * as the thread would have ended it in the parent;
			 * what the child left while it was open is the
			 * enclosing regions' to judge (the same epoch since
			 * the fork).  Not one of the child's own ends. */
			pthread_mutex_lock(&stack_lock);
			region_drop();
			pthread_mutex_unlock(&stack_lock);
			continue;
		}
		if (top->process && forked)
			name_forked(top);
		else if (top->process && ended_here && parent_runs_this_program())
			fold_worker(top);
		if (top->process || top->with_process)
			region_pop(NULL, mc_is_active ? NULL : bypassed(), from);
		else
			region_pop(NULL, "region not ended before the process exited", from);
	}
	pthread_mutex_unlock(&region_lock);
}

/* At exit, from memcheck's destructor, when its on_exit handler will
 * end the regions after every other object's destructor (life.c): the
 * figures that must not see those destructors are taken here, each
 * region's as its end would take them, innermost first.  The RSS and
 * its peak: the base of the exit's stretch, whose rise raises peak_rss
 * and whose RSS at the handler, where the regions end, is rss_end (the
 * bare process's last VmRSS holds the pages of tcmalloc's and
 * libstdc++'s exit code too: rss_end read 100-700 KiB low against it
 * when it was this take's, footprint.c exit_read).  The allocator's
 * statistics, where the end reads them whatever its verdict: its own
 * destructor (mimalloc's mi_process_done) may run before the handler.
 * The timeline's end sample, with the live bytes of this moment.  What
 * is counted (allocations, frees, live bytes and their peak, leaks)
 * is the handler's: a block another library's destructor frees is
 * freed, as valgrind, which reports at the real exit, counts it.
 * Guard held. */
void mc_regions_exit_take(void)
{
	pthread_mutex_lock(&region_lock);
	/* The process's statistics, the same for every region: asked
	 * once, after the takes, which then measure memcheck's own pages
	 * through a pagemap kept for after the statistics too. */
	bool stats = stats_wanted(mc_vg_mode(), false);
	if (stats)
		mc_prog_peak_exit_open();
	pthread_mutex_lock(&stack_lock);
	for (int i = nregions - 1; i >= 0; i--) {
		regions[i].early.taken = true;
		take_rss(&regions[i], i > 0 ? &regions[i - 1] : NULL, &regions[i].early.rss);
	}
	pthread_mutex_unlock(&stack_lock);
	/* The allocator's statistics may allocate: not under stack_lock
	 * (see the head). */
	uint64_t retained = MEMCHECK_UNKNOWN, after = MEMCHECK_UNKNOWN;
	if (stats) {
		mc_prog_peak_exit_note();
		take_alloc_stats(&retained, &after);
		mc_prog_peak_exit_base();
	}
	int64_t live = mc_account_live();
	for (int i = nregions - 1; i >= 0; i--) {
		struct exit_take *t = &regions[i].early;
		t->stats = stats;
		t->retained = retained;
		t->retained_after_release = after;
		t->timed = mc_timeline_end(i, live > 0 ? (uint64_t)live : 0, t->rss.rss_end,
					   t->retained, &t->tl);
	}
	pthread_mutex_unlock(&region_lock);
}

/* ---- fork (life.c's handlers) ---------------------------------------- */

/* What a region's end builds once and keeps, in a child forked while
 * another thread was ending one: possibly half made. */
void mc_report_state_forget(void)
{
	mc_suppress_forget();
	mc_gate_forget();
	mc_allocator_forget();
}

/* region_lock only tried (its holder may be waiting for the allocator,
 * whose own fork handler may already hold its locks); stack_lock waited
 * for. */
void mc_regions_lock(void)
{
	fork_has_region_lock = pthread_mutex_trylock(&region_lock) == 0;
	pthread_mutex_lock(&stack_lock);
}

void mc_regions_unlock(void)
{
	pthread_mutex_unlock(&stack_lock);
	if (fork_has_region_lock)
		pthread_mutex_unlock(&region_lock);
}

/* The child has the parent's figures: every open region starts again
 * (mc_regions_restart_after_fork). */
void mc_regions_after_fork_child(void)
{
	mc_mutex_reset(&stack_lock);
	mc_mutex_reset(&region_lock);
	if (!fork_has_region_lock)
		mc_report_state_forget();
	mc_timeline_after_fork_child();
	mc_exit_after_fork_child();
	mc_vgtext_after_fork_child();
	forked = true;
	ended_here = 0;
	/* The forking thread is this process's only one, with the same
	 * pthread_self() as in the parent (POSIX: the child is made from
	 * the calling thread).  A region another thread began stays
	 * foreign in every later fork: a thread made here may get the dead
	 * thread's descriptor, and so its id (glibc's stack cache:
	 * forkinherit "again" saw it every run).  Its stack pointer is that
	 * thread's, not one of ours. */
	for (int i = 0; i < nregions; i++) {
		struct region *r = &regions[i];
		if (!r->process && !pthread_equal(r->begin_thread, pthread_self()))
			r->foreign = true;
		if (r->foreign)
			r->begin_sp = 0;
	}
	/* The foreign regions go below the child's own, each group in its
	 * order: the child's memcheck_end then ends the innermost region
	 * its thread began (forkinherit "over": another thread's region
	 * begun above it in the parent was ended in its place, and the
	 * child's own was reported not ended).  Every region starts again
	 * below, all at one epoch, so the order changes none of their
	 * figures; failure injection's levels move with them.  Adjacent
	 * swaps, one region on this stack at a time (the handler may run
	 * on a small thread stack); at most 64 regions. */
	int from[MAX_REGIONS];
	bool moved = false;
	for (int i = 0; i < nregions; i++)
		from[i] = i;
	for (int end = nregions; end > 1; end--)
		for (int i = 0; i + 1 < end; i++) {
			/* the process region, never foreign, stays at the bottom */
			if (regions[i].process || regions[i].foreign || !regions[i + 1].foreign)
				continue;
			struct region t = regions[i];
			regions[i] = regions[i + 1];
			regions[i + 1] = t;
			int f = from[i];
			from[i] = from[i + 1];
			from[i + 1] = f;
			moved = true;
		}
	if (moved)
		mc_fault_region_reorder(from, nregions);
}

/* Every open region starts again, after the rest of the child's
 * handlers (life.c): their own work is not in its figures. */
void mc_regions_restart_after_fork(void)
{
	uint32_t epoch = next_epoch();
	for (int i = 0; i < nregions; i++) {
		regions[i].early.taken = false; /* the parent's figures */
		regions[i].early.stats = false;
		/* Under valgrind's text the process region goes on counting
		 * from the process's start, as valgrind's child does: its
		 * HEAP SUMMARY has the parent's allocations and frees, and
		 * the blocks it inherited are in use at exit (a check test's
		 * child lists the runner's still reachable ones). */
		if (regions[i].process && mc_opt.valgrind_text != MC_VGTEXT_NONE)
			continue;
		region_rebase(&regions[i], epoch, false);
	}
}

/* ---- public API ------------------------------------------------------ */

MC_API void memcheck_begin(const char *name)
{
	struct mc_scan_from from;
	MC_SCAN_FROM(&from);
	mc_resolve();
	mc_guard_enter();
	pthread_mutex_lock(&region_lock);
	mc_footprint_want(); /* its figures are read: measured from here */
	region_push(name, false, from.sp);
	pthread_mutex_unlock(&region_lock);
	mc_guard_leave();
}

MC_API int memcheck_end(struct memcheck_result *out)
{
	struct mc_scan_from from;
	MC_SCAN_FROM(&from);
	mc_resolve();
	int saved = errno;
	mc_guard_enter();
	pthread_mutex_lock(&region_lock);
	int rc;
	pthread_mutex_lock(&stack_lock);
	bool deep = overflowed > 0;
	if (deep)
		overflowed--;
	pthread_mutex_unlock(&stack_lock);
	if (deep) {
		/* A region past the nesting limit: not measured, not failed. */
		rc = 0;
		if (out) {
			memset(out, 0, sizeof *out);
			strcpy(out->name, "(not measured: regions nested too deep)");
			out->pass = 1;
		}
	} else if (nregions == 0 || regions[nregions - 1].process) {
		mc_log("memcheck_end() without memcheck_begin()");
		rc = -1;
	} else {
		/* The result is ours to write, and until then it holds stack
		 * garbage: the struct lies in the caller's frame, set up before
		 * the test ran (the glues of check, cmocka and Criterion, a test
		 * ending its own region), and a stale copy of an address the
		 * allocator handed out again made a leak of the region still
		 * reachable or possibly lost to the scan.  A Criterion test
		 * leaking malloc(40) under memcheck/criterion.h was missed or
		 * called possibly lost in about half the runs; valgrind and the
		 * preloaded process region say definitely lost. */
		if (out)
			memset(out, 0, sizeof *out);
		mc_fds_room_begin(); /* room above the program's open-file limit */
		rc = region_pop(out, mc_is_active ? NULL : bypassed(), &from);
		mc_fds_room_end();
	}
	pthread_mutex_unlock(&region_lock);
	mc_guard_leave();
	errno = saved;
	return rc;
}

/* The live blocks of epochs [from, to), to let them outlive every
 * region (epoch 0) once the table's locks are no longer held. */
struct block_list {
	uintptr_t *v;
	size_t n, cap;
	uint32_t to;
};

static void list_block(const struct mc_block *b, void *arg)
{
	struct block_list *l = arg;
	if (b->aux >= l->to)
		return;
	if (l->n < l->cap)
		l->v[l->n++] = b->ptr;
	else
		l->n++;
}

static void ignore_epochs(uint32_t from, uint32_t to)
{
	struct block_list l = { .to = to };
	mc_blocks_each_live(from, list_block, &l);
	while (l.n) {
		size_t bytes = l.n * 2 * sizeof *l.v;
		l.v = mc_map(bytes);
		if (!l.v)
			return;
		l.cap = l.n * 2;
		l.n = 0;
		mc_blocks_each_live(from, list_block, &l);
		if (l.n <= l.cap) {
			for (size_t i = 0; i < l.n; i++)
				mc_blocks_set_epoch(l.v[i], 0);
			l.n = 0;
		}
		mc_unmap(l.v, bytes);
	}
}

/* The failure was reported as the test's by its framework: the exit
 * status no longer counts it (exitstatus.c); the blocks the region left
 * are accounted for, and no enclosing region reports them again (a
 * preloaded process region around a linked suite's tests). */
MC_API int memcheck_handled(void)
{
	if (!mc_exit_handled())
		return -1;
	mc_guard_enter();
	pthread_mutex_lock(&region_lock);
	if (last_failed.to && last_failed.renumbered == renumbered && mc_opt.track)
		ignore_epochs(last_failed.from, last_failed.to);
	last_failed.to = 0;
	pthread_mutex_unlock(&region_lock);
	mc_guard_leave();
	return 0;
}

/* A region a test framework gives up on: its test left it open when it
 * failed an assertion of its own or skipped itself, and what it left
 * behind is the framework's story, not a leak to report, in this region
 * or an enclosing one.  Popped unmeasured and unreported; its blocks are
 * let outlive every region; the enclosing region keeps its peaks. */
MC_API int memcheck_discard(void)
{
	mc_resolve();
	mc_guard_enter();
	pthread_mutex_lock(&region_lock);
	int rc = -1;
	bool popped = false;
	uint32_t epoch = 0;
	pthread_mutex_lock(&stack_lock); /* the stack is written: see the head */
	if (overflowed) {
		overflowed--;
		rc = 0;
	} else if (nregions > 0 && !regions[nregions - 1].process) {
		struct region *r = region_drop();
		popped = true;
		epoch = r->epoch;
		ended_here++;
		mc_copy_name(last_ended, sizeof last_ended, r->name);
		rc = 0;
	}
	pthread_mutex_unlock(&stack_lock);
	/* The table walk without the stack lock, as region_pop's scan. */
	if (popped && mc_opt.track)
		ignore_epochs(epoch, UINT32_MAX);
	pthread_mutex_unlock(&region_lock);
	mc_guard_leave();
	return rc;
}

/* A region for the rest of the process, ended with it (its exit, _exit
 * or a fatal signal's record) and judged as memcheck_end would judge it
 * then, not as a region left open: for a test framework's process that
 * ends inside its test on purpose (a death test's child) where no
 * process region judges it (the library linked, not preloaded).  1:
 * there is one (nothing begun). */
MC_API int memcheck_begin_process(const char *name)
{
	mc_resolve();
	mc_guard_enter();
	pthread_mutex_lock(&region_lock);
	int rc = 1;
	if (nregions == 0 || !regions[0].process) {
		mc_footprint_want();
		/* no frame is its own: the process's whole stack is the
		 * program's at its end, as for the process region */
		struct region *r = region_push(name, false, 0);
		if (r)
			r->with_process = true;
		rc = r ? 0 : -1;
	}
	pthread_mutex_unlock(&region_lock);
	mc_guard_leave();
	return rc;
}

/* These two need the stack only, not to wait for a region's end.  The
 * guard: a signal handler's malloc must not find this thread holding
 * stack_lock with the hooks open (interpose.c, signals). */
MC_API int memcheck_rename(const char *name)
{
	int rc = -1;
	mc_guard_enter();
	pthread_mutex_lock(&stack_lock);
	if (nregions > 0 && !regions[nregions - 1].process) {
		struct region *r = &regions[nregions - 1];
		mc_copy_name(r->name, sizeof r->name, name ? name : "region");
		mc_fault_region_rename(r->name);
		rc = 0;
	}
	pthread_mutex_unlock(&stack_lock);
	mc_guard_leave();
	return rc;
}

MC_API int memcheck_depth(void)
{
	mc_guard_enter();
	pthread_mutex_lock(&stack_lock);
	int d = nregions - (nregions > 0 && regions[0].process) + overflowed;
	pthread_mutex_unlock(&stack_lock);
	mc_guard_leave();
	return d;
}
