/*
 * snapshot.c - where the memory was at a region's peak of live bytes:
 * the live bytes and blocks of each allocation stack at that moment, the
 * largest kept, the rest summed (massif's peak snapshot, per region).
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
 * With several threads the counters are added atomically, but a save and
 * a bump can race a concurrent change, and a block enters its site (in
 * the block table) a moment before it enters the live bytes (account.c):
 * the peak is exact, its snapshot may mix in what another thread did at
 * that moment.
 */
#include <string.h>

#include "internal.h"

_Atomic uint32_t mc_snap_gen = 1;
int mc_sites_on;

enum { PEAK_NONE, PEAK_NEWEST, PEAK_TAKEN };

void mc_snapshot_init(void)
{
	mc_sites_on = mc_opt.track && mc_opt.peak_sites > 0;
}

static uint32_t gen_now(void)
{
	return atomic_load_explicit(&mc_snap_gen, memory_order_relaxed);
}

struct taking {
	struct mc_peak *p;
	uint32_t gen, k;
};

/* Keep site (bytes, blocks) among the k largest of p, or sum it in the
 * rest. */
static void keep(struct mc_peak *p, uint32_t k, uint32_t stack, uint64_t bytes, uint64_t blocks)
{
	p->bytes += bytes;
	p->blocks += blocks;
	uint32_t i = p->n;
	if (k == 0)
		return;
	if (i == k) {
		const struct mc_peak_site *last = &p->top[k - 1];
		if (bytes < last->bytes || (bytes == last->bytes && blocks <= last->blocks)) {
			p->other_sites++;
			p->other_bytes += bytes;
			p->other_blocks += blocks;
			return;
		}
		p->other_sites++;            /* the last one moves to the rest */
		p->other_bytes += last->bytes;
		p->other_blocks += last->blocks;
		i = k - 1;
	} else {
		p->n++;
	}
	for (; i > 0 && (p->top[i - 1].bytes < bytes ||
			 (p->top[i - 1].bytes == bytes && p->top[i - 1].blocks < blocks)); i--)
		p->top[i] = p->top[i - 1];
	p->top[i] = (struct mc_peak_site){ stack, bytes, blocks };
}

static void take_site(uint32_t id, struct mc_site *s, void *arg)
{
	struct taking *t = arg;
	int64_t bytes;
	uint32_t blocks;
	if (__atomic_load_n(&s->gen, __ATOMIC_RELAXED) == t->gen) {
		bytes = __atomic_load_n(&s->saved_bytes, __ATOMIC_RELAXED);
		blocks = __atomic_load_n(&s->saved_blocks, __ATOMIC_RELAXED);
	} else {
		bytes = __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);
		blocks = __atomic_load_n(&s->blocks, __ATOMIC_RELAXED);
	}
	if (bytes <= 0 && blocks == 0)
		return;
	keep(t->p, t->k, id, bytes > 0 ? (uint64_t)bytes : 0, blocks);
}

/* The newest generation's figures into p. */
static void take(struct mc_peak *p)
{
	struct taking t = { p, gen_now(), (uint32_t)mc_opt.peak_sites };
	if (t.k > MC_PEAK_SITES_MAX)
		t.k = MC_PEAK_SITES_MAX;
	p->bytes = p->blocks = p->other_sites = p->other_bytes = p->other_blocks = 0;
	p->n = 0;
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
