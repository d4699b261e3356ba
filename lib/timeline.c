/*
 * timeline.c - each region's memory over its life (MEMCHECK_TIMELINE):
 * live bytes, the program's resident set and the allocator's retained
 * bytes, sampled as the region runs, for the report's curves and
 * massif's out-file (memcheck report --massif).
 *
 * When to sample: by allocation volume, as massif's --time-unit=B does
 * (bytes allocated plus bytes freed), so a run sampled under two
 * allocators has its samples at the same points of the program.  The
 * malloc path must not read a clock or a global sum for that, so each
 * thread counts down its own volume (account.c's tally) and calls
 * mc_timeline_sample when it runs out (through the hook life.c sets:
 * this file calls account.c's sums, not the other way round); only
 * then is the process's volume
 * summed, and a region takes a sample when that has passed its next
 * mark.  Regions nest: an outer region keeps its own interval (longer:
 * its life is longer), so one event may sample several regions.
 *
 * Count-only (MEMCHECK_TRACK=0) has no live bytes and no countdown: a
 * region then has its begin and end samples, live bytes null.
 *
 * Bounded memory whatever the run length: a region keeps at most N
 * samples (MEMCHECK_TIMELINE=N); when they are all taken, every two
 * neighbours after the first merge into the one with more live bytes,
 * and the region's interval doubles.  The begin sample stays, the end
 * sample is added at the region's end, and peaks survive the merges.
 *
 * Costs, each kept rare: a sample reads the resident set (statm, about
 * a microsecond, footprint.c leaves memcheck's own memory out); the
 * allocator's retained bytes cost far more (its statistics, and mincore
 * over its memory: milliseconds for a large heap), so a sample reads
 * them only when the time since the last read is at least 20 times what
 * that read took, which keeps them under about 5% of the run.
 *
 * Locks: region.c calls begin and end with its region lock held, then
 * takes tl_lock; a sample takes tl_lock alone, after reading the figures
 * (footprint.c's and account.c's locks are never held under tl_lock,
 * but by the mappings made at a region's begin, which take only the
 * footprint lock).
 */
#include <pthread.h>
#include <string.h>

#include "internal.h"

#define MAX_DEPTH 64      /* as region.c's MAX_REGIONS */

struct line {
	struct mc_sample *v;   /* cap samples, mc_map'd, kept for the next region at this depth */
	uint32_t n, cap;
	uint64_t step;         /* bytes moved between samples */
	uint64_t next_at;      /* the process's volume at the next sample */
	uint64_t moved0;       /* the process's volume at the region's begin */
	double t0;
};

static struct line lines[MAX_DEPTH];
static int nlines;                 /* open regions with a line */
static pthread_mutex_t tl_lock = PTHREAD_MUTEX_INITIALIZER;
/* The last read of retained bytes, when and how long it took; one
 * thread reads at a time (reading), the others skip it. */
static double retained_at, retained_cost;
static atomic_flag reading = ATOMIC_FLAG_INIT;

static uint64_t moved_now(void)
{
	struct mc_totals t;
	mc_account_sum(&t);
	return t.bytes_allocated + t.bytes_freed;
}

/* The sample in both of i and j with more live bytes (the later when
 * equal): what a merge keeps. */
static const struct mc_sample *larger(const struct mc_sample *i, const struct mc_sample *j)
{
	return i->live > j->live ? i : j;
}

/* Full: keep the first sample, merge each two after it, double the step. */
static void halve(struct line *l)
{
	uint32_t k = 1;
	for (uint32_t i = 1; i + 1 < l->n; i += 2)
		l->v[k++] = *larger(&l->v[i], &l->v[i + 1]);
	if ((l->n - 1) % 2)
		l->v[k++] = l->v[l->n - 1];
	l->n = k;
	l->step *= 2;
}

static void add(struct line *l, const struct mc_sample *s)
{
	if (!l->v)
		return;
	if (l->n == l->cap)
		halve(l);
	struct mc_sample x = *s;
	x.moved -= l->moved0;
	x.seconds -= l->t0;
	l->v[l->n++] = x;
}

/* The innermost region's step: threads' countdowns (account.c) start
 * from it. */
static void publish_step(void)
{
	mc_account_step_set(nlines ? (int64_t)lines[nlines - 1].step : 0);
}

/* Retained bytes now, when reading them is due (see the head), else
 * MEMCHECK_UNKNOWN. */
static uint64_t retained(void)
{
	if (atomic_flag_test_and_set_explicit(&reading, memory_order_acquire))
		return MEMCHECK_UNKNOWN;
	double t = mc_now();
	uint64_t v = MEMCHECK_UNKNOWN;
	if (t - retained_at >= 20 * retained_cost) {
		struct mc_alloc_stats st;
		if (mc_allocator_stats(&st))
			v = st.retained;
		double done = mc_now();
		retained_at = done;
		retained_cost = done - t;
	}
	atomic_flag_clear_explicit(&reading, memory_order_release);
	return v;
}

void mc_timeline_begin(int depth, bool from_start, uint64_t live, uint64_t rss, double t0)
{
	if (mc_opt.timeline <= 0 || depth < 0 || depth >= MAX_DEPTH)
		return;
	uint32_t cap = mc_opt.timeline < 3 ? 3 : (uint32_t)mc_opt.timeline;
	uint64_t moved = moved_now();
	pthread_mutex_lock(&tl_lock);
	struct line *l = &lines[depth];
	if (l->v && l->cap != cap) {
		mc_unmap(l->v, l->cap * sizeof *l->v);
		l->v = NULL;
	}
	if (!l->v) {
		l->v = mc_map(cap * sizeof *l->v);
		l->cap = cap;
	}
	l->n = 0;
	l->step = MC_TIMELINE_FIRST_STEP;
	l->moved0 = from_start ? 0 : moved;
	l->next_at = moved + l->step;
	l->t0 = t0;
	struct mc_sample s = { t0, moved, mc_opt.track ? live : MEMCHECK_UNKNOWN, rss,
			       MEMCHECK_UNKNOWN };
	add(l, &s);
	nlines = depth + 1;
	publish_step();
	pthread_mutex_unlock(&tl_lock);
}

bool mc_timeline_end(int depth, uint64_t live, uint64_t rss, uint64_t retained_end,
		     struct mc_timeline *out)
{
	if (mc_opt.timeline <= 0 || depth < 0 || depth >= MAX_DEPTH)
		return false;
	uint64_t moved = moved_now();
	pthread_mutex_lock(&tl_lock);
	struct line *l = &lines[depth];
	bool ok = l->v && depth < nlines;
	if (ok) {
		struct mc_sample s = { mc_now(), moved, mc_opt.track ? live : MEMCHECK_UNKNOWN, rss,
				       retained_end };
		add(l, &s);
		out->samples = l->v;
		out->n = l->n;
		out->step = l->step;
	}
	nlines = depth;
	publish_step();
	pthread_mutex_unlock(&tl_lock);
	return ok;
}

void mc_timeline_sample(void)
{
	uint64_t moved = moved_now();
	pthread_mutex_lock(&tl_lock);
	bool due = nlines > 0 && moved >= lines[nlines - 1].next_at;
	pthread_mutex_unlock(&tl_lock);
	if (!due)
		return;
	int64_t live = mc_account_live();
	struct mc_sample s = { mc_now(), moved, live > 0 ? (uint64_t)live : 0, mc_prog_rss(),
			       retained() };
	pthread_mutex_lock(&tl_lock);
	/* Inner regions first; an outer one samples when its own mark is
	 * passed too. */
	for (int d = nlines - 1; d >= 0; d--) {
		struct line *l = &lines[d];
		if (moved < l->next_at)
			continue;
		add(l, &s);
		l->next_at = moved + l->step;
	}
	publish_step();
	pthread_mutex_unlock(&tl_lock);
}

void mc_timeline_after_fork_child(void)
{
	mc_mutex_reset(&tl_lock);
	atomic_flag_clear(&reading);
}
