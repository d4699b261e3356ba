/*
 * snapshot.c - where the memory was at a region's peak of live bytes:
 * the live bytes and blocks of each allocation stack at that moment,
 * every stack with any kept (massif's peak snapshot, per region).  The
 * report lists the largest lines they name (report.c), each with all of
 * its stacks: which line a stack names takes symbols, a report's to
 * find, and only the stacks kept here are considered.
 *
 * The figures come from counters kept with each stack in the depot
 * (struct mc_site), which the block table changes as blocks come and go,
 * in the same critical section as its own change (so the one thread's
 * path adds without a lock, as the table does).  A snapshot must be of
 * the moment of the peak, yet copying every site at every new peak
 * would cost a walk of the depot per allocation while the heap grows.
 * So a snapshot costs one store: a new peak bumps mc_snap_gen, and a
 * site changed after that first saves its figures (mc_site_change).
 * The newest snapshot's figure of a site is then its saved one when it
 * was saved in that generation, else its figure now (it has not changed
 * since).  The walk over the depot happens once per region, at its end.
 *
 * The trap: only the newest generation can be read back.  While an inner
 * region runs, its own new peaks bump the generation, and the enclosing
 * region's snapshot (an older generation, when the inner region never
 * rises to the outer's peak) would be lost.  So when a region begins
 * inside one whose snapshot is the newest generation, the outer one is
 * taken then (mc_peak_cover: a depot walk per region begin, only when
 * the outer region has risen since it was last covered); when the inner
 * region ends above the outer's peak, the outer's snapshot is the
 * inner's, the newest generation again (mc_peak_uncover).
 *
 * Threads other than the first count in shards of their own (struct
 * mc_site, as the depot's, in a mapping of each shard's; internal.h's
 * MC_SHARD_IDS): four threads allocating from one call site shared its
 * counters' cache line, +55% CPU time.  A snapshot sums, site by site,
 * each shard's figure at its generation: each is its share of the live
 * blocks at that moment, so the sum is the site's.  A shard is a
 * thread slot's (account.c), kept when its thread ends: its blocks, and
 * the frees other threads make of them, go on counting there.
 *
 * With several threads the depot's own sites (the first thread's, and
 * those of threads past the shards) are added atomically, a shard's
 * without a lock prefix (it is one thread's); a save and
 * a bump can race a concurrent change, and a block enters its site (in
 * the block table) a moment before it enters the live bytes (account.c):
 * the peak is exact, its snapshot may mix in what another thread did at
 * that moment.
 */
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

_Atomic uint32_t mc_snap_gen = 1;
int mc_sites_on;
MC_TLS struct mc_site *mc_my_sites;

/* Shards for slots 1..SHARDS (slot i's is shard i - 1; slot 0 and the
 * slots past SHARDS count in the depot's sites, with atomic adds once
 * threads share the table), mapped at their first thread's start:
 * lazily, so a thread's shard costs the pages of the sites it uses
 * (footprint.c measures them with mincore; it lists 32 such mappings).
 * A slot is one thread's at a time, so a shard is too: its counters
 * are changed without a lock prefix (mc_site_change). */
#define SHARDS 15
static struct mc_site *_Atomic shards[SHARDS];
_Static_assert(sizeof(struct mc_site) == MC_DEPOT_UNIT, "SHARD_PAGES: a site is 32 bytes");

void mc_sites_thread(int slot)
{
	if (!mc_sites_on || slot <= 0 || slot > SHARDS) {
		mc_my_sites = NULL;
		return;
	}
	struct mc_site *_Atomic *sh = &shards[slot - 1];
	struct mc_site *base = atomic_load_explicit(sh, memory_order_acquire);
	if (!base) { /* published by a swap, not under a lock a fork could leave held */
		struct mc_site *mine = mc_map_lazy((size_t)MC_SHARD_IDS * sizeof *base);
		if (mine && !atomic_compare_exchange_strong_explicit(sh, &base, mine,
								    memory_order_acq_rel,
								    memory_order_acquire))
			mc_unmap(mine, (size_t)MC_SHARD_IDS * sizeof *base); /* another thread's won */
		else
			base = mine;
	}
	mc_my_sites = base; /* NULL if it could not be mapped: the depot's */
}

enum { PEAK_NONE, PEAK_NEWEST, PEAK_TAKEN };

/* The sites are counted only where a report can show the snapshot: the
 * JSON report, the full text, or a violation of a budget (a peak rule,
 * which the text then explains with it).  Otherwise nothing reads them,
 * and each allocation and free would pay for them (17 instructions
 * each at a malloc_bench step without stacks), and each region's end
 * for a walk of the depot. */
void mc_snapshot_init(void)
{
	mc_sites_on = mc_opt.track && mc_opt.peak_sites > 0 && mc_opts_full_report() &&
		      mc_depot_sites_on();
}

static uint32_t gen_now(void)
{
	return atomic_load_explicit(&mc_snap_gen, memory_order_relaxed);
}

#define SHARD_PAGES (MC_SHARD_IDS * MC_DEPOT_UNIT / 4096)
struct taking {
	struct mc_peak *p;
	uint32_t gen;
	bool full;     /* all[] could not grow */
	/* each shard's resident pages: a page no site of it was written in
	 * is not read, which would map it (and footprint.c would then count
	 * it as memcheck's own) */
	const struct mc_site *shard[SHARDS];
	unsigned char (*resident)[SHARD_PAGES];
	/* the shards that exist, listed once: each of a region's stacks
	 * looked at all 15 (~120 instructions a stack where there are none,
	 * the main thread's only process) */
	int live[SHARDS], nlive;
};

/* One shard's figures of a site at generation gen, added to *bytes and
 * *blocks (a shard's own may be negative: frees of other threads'
 * blocks). */
static void add_site(const struct mc_site *s, uint32_t gen, int64_t *bytes, uint32_t *blocks)
{
	if (__atomic_load_n(&s->gen, __ATOMIC_RELAXED) == gen) {
		*bytes += __atomic_load_n(&s->saved_bytes, __ATOMIC_RELAXED);
		*blocks += __atomic_load_n(&s->saved_blocks, __ATOMIC_RELAXED);
	} else {
		*bytes += __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);
		*blocks += __atomic_load_n(&s->blocks, __ATOMIC_RELAXED);
	}
}

static void take_site(uint32_t id, struct mc_site *s, void *arg)
{
	struct taking *t = arg;
	int64_t bytes = 0;
	uint32_t blocks = 0;
	add_site(s, t->gen, &bytes, &blocks);
	size_t page = (size_t)id * MC_DEPOT_UNIT / 4096;
	for (int l = 0, n = id && id < MC_SHARD_IDS ? t->nlive : 0; l < n; l++) {
		int i = t->live[l];
		if (t->resident[i][page] & 1)
			add_site(t->shard[i] + id, t->gen, &bytes, &blocks);
	}
	if (bytes <= 0 && blocks == 0)
		return;
	struct mc_peak *p = t->p;
	uint64_t b = bytes > 0 ? (uint64_t)bytes : 0;
	p->bytes += b;
	p->blocks += blocks;
	p->stacks++;
	/* the sums stay whole when memory runs out; the report then lists
	 * fewer stacks and counts the rest as other sites */
	if (!t->full && mc_grow((void **)&p->all, &p->cap, p->n, sizeof *p->all, 256))
		p->all[p->n++] = (struct mc_peak_site){ id, blocks, b };
	else
		t->full = true;
}

/* The newest generation's figures into p: every stack with live blocks,
 * in one walk of the depot (the line each names is the report's to
 * find, only when one is written). */
static void take(struct mc_peak *p)
{
	/* 7.5 KiB: not on the stack; under region.c's lock.  Apart from
	 * the rest, whose first write faulted a page of .bss in at every
	 * region's end: a vector is written only for a shard that exists
	 * (none in a process whose only thread is the main one). */
	static unsigned char resident[SHARDS][SHARD_PAGES];
	struct taking t = { .p = p, .resident = resident };
	t.gen = gen_now();
	for (int i = 0; i < SHARDS; i++) {
		t.shard[i] = atomic_load_explicit(&shards[i], memory_order_acquire);
		if (t.shard[i] && mincore((void *)t.shard[i], (size_t)SHARD_PAGES * 4096,
					  t.resident[i]) != 0)
			t.shard[i] = NULL; /* cannot be: the mapping is there */
		if (t.shard[i])
			t.live[t.nlive++] = i;
	}
	p->bytes = p->blocks = 0;
	p->n = p->stacks = 0;
	take_site(0, &mc_site_none, &t);
	mc_depot_each(take_site, &t);
	p->state = PEAK_TAKEN;
}

/* Has the region risen since it last became the innermost?  Then its
 * snapshot is the newest generation. */
static void settle(struct mc_peak *p)
{
	if (gen_now() != p->mark)
		p->state = PEAK_NEWEST;
}

/* A region that counts from the process's start has had its peak so far
 * already: the newest generation, when there has been one. */
void mc_peak_begin(struct mc_peak *p, bool from_start)
{
	p->state = from_start && gen_now() != 1 ? PEAK_NEWEST : PEAK_NONE;
	p->n = 0;
	p->mark = gen_now();
}

void mc_peak_cover(struct mc_peak *outer)
{
	if (!mc_sites_on)
		return;
	settle(outer);
	if (outer->state == PEAK_NEWEST)
		take(outer);
}

void mc_peak_uncover(struct mc_peak *outer, bool raised)
{
	if (raised)
		outer->state = PEAK_NEWEST;
	outer->mark = gen_now();
}

bool mc_peak_end(struct mc_peak *p)
{
	if (!mc_sites_on)
		return false;
	settle(p);
	if (p->state == PEAK_NEWEST)
		take(p);
	return p->state == PEAK_TAKEN;
}
