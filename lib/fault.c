/*
 * fault.c - allocation-failure injection: fail the Nth allocation of a
 * region (once, or from there on), allocations from a site, or calls at
 * random from a seed, so that a test's error paths run and memcheck can
 * say whether they free what they took.  `memcheck oom` drives it through
 * MEMCHECK_FAIL_* from outside the program.
 *
 * Off, it costs the wrappers one load and one predictable branch
 * (mc_fault_on).  On, every allocation call comes here first: it is
 * counted in the innermost open region, so an index means the same call
 * in every run of a single-threaded program.
 *
 * Regions are named across processes by an id, "PROC/N": the N-th region
 * begun in process PROC (0: no region open).  PROC is "p" for the process
 * memcheck oom starts, "p.3" for its third fork, "p.3x" for a program
 * that p.3 then exec'd; a forked child renumbers the regions it inherits
 * and counts them from zero, as region.c rebases their figures.  So a
 * check suite's CK_FORK children, one per test, each have regions of
 * their own.
 *
 * Site patterns: symbolizing every allocation would be far too slow, so
 * the decision is cached per interned stack id (the depot hands out one
 * id per distinct stack): each stack is symbolized once.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

MC_HOT int mc_fault_on;

#define MAX_LEVELS 65   /* level 0: no region; then one per open region */

struct level {
	char id[64];
	char name[128];
	uint64_t calls;
	uint64_t nth;           /* 0: off */
	bool persistent;
	bool targeted;          /* MEMCHECK_FAIL_REGION matches (or unset) */
	bool oom_expected;
	uint64_t rng;           /* splitmix64 state */
	struct mc_fault_info info;
};

static struct level levels[MAX_LEVELS];
MC_START_TOUCHED(levels[0]); /* the level of no region: mc_fault_init */
static int depth;               /* open regions; levels[depth] is innermost */
static int next_ordinal = 1;
static char proc_id[48] = "p";
static char proc_env[80];       /* "MEMCHECK_PROCESS_ID=..." for putenv */
static unsigned forks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double probability;      /* 0: off */
static uint64_t seed;
static char site[256];          /* "": off */

/* Decisions per stack id, for the pattern of generation site_gen. */
#define SITE_CACHE (1u << 14)
static struct { uint32_t id; uint8_t yes; } site_cache[SITE_CACHE];
static unsigned site_gen;

/* ---- the breakpoint -------------------------------------------------- */

MC_API __attribute__((noinline)) void memcheck_fault(void)
{
	__asm__ volatile("" ::: "memory"); /* keep the call and the function */
}

/* ---- helpers --------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void seed_level(struct level *l)
{
	uint64_t h = seed * 0x9e3779b97f4a7c15ull + 1;
	for (const char *p = l->id; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	l->rng = h;
}

static bool env_targets(const struct level *l)
{
	const char *pat = mc_opt.fail_region;
	return !pat || strcmp(pat, l->id) == 0 || fnmatch(pat, l->name, 0) == 0;
}

/* dst = prefix, sep, then the digits num..end, cut to size as snprintf
 * would cut it; format_id makes "proc/ordinal" ("%s/%d"), a forked
 * child its proc_id "%s.%u".
 * Not snprintf: start-up makes the first level, and vfprintf's first
 * call faulted in 192 KiB of the C library's code and tables, counted
 * as memcheck's own; a program that prints then found them resident,
 * its figures that much low (footprint.c). */
static inline __attribute__((always_inline)) void
join_number(char *dst, size_t size, const char *prefix, char sep, const char *num, const char *end)
{
	size_t at = 0;
	for (; prefix[at] && at + 1 < size; at++)
		dst[at] = prefix[at]; /* prefix may be dst itself */
	if (at + 1 < size)
		dst[at++] = sep;
	for (; num < end && at + 1 < size; num++)
		dst[at++] = *num;
	dst[at] = 0;
}

static void format_id(char *dst, size_t size, const char *proc, int ordinal)
{
	char num[22] = "-";
	unsigned v = ordinal < 0 ? 0u - (unsigned)ordinal : (unsigned)ordinal;
	join_number(dst, size, proc, '/', num, mc_utoa(num + (ordinal < 0), v));
}

/* A level starts (or starts again in a forked child). */
static void level_reset(struct level *l, int ordinal)
{
	format_id(l->id, sizeof l->id, proc_id, ordinal);
	l->calls = 0;
	memset(&l->info, 0, sizeof l->info);
	l->targeted = env_targets(l);
	if (l->targeted && mc_opt.fail_nth) {
		l->nth = (uint64_t)mc_opt.fail_nth;
		l->persistent = mc_opt.fail_persistent;
	}
	seed_level(l);
}

static void level_start(struct level *l, const char *name, int ordinal)
{
	memset(l, 0, sizeof *l);
	mc_copy_name(l->name, sizeof l->name, name);
	level_reset(l, ordinal);
}

/* The cached decision for a stack: 0 no, 1 yes, -1 not known yet.  With
 * the fault lock held. */
static int site_cached(uint32_t id)
{
	if (!id)
		return 0;
	unsigned k = (id * 0x9e3779b9u) >> 18;
	for (unsigned i = 0; i < 64; i++) {
		unsigned s = (k + i) & (SITE_CACHE - 1);
		if (site_cache[s].id == id)
			return site_cache[s].yes;
		if (site_cache[s].id == 0)
			break;
	}
	return -1;
}

static void site_remember(uint32_t id, bool yes)
{
	unsigned k = (id * 0x9e3779b9u) >> 18;
	for (unsigned i = 0; i < 64; i++) {
		unsigned s = (k + i) & (SITE_CACHE - 1);
		if (site_cache[s].id == id)
			return;
		if (site_cache[s].id == 0) {
			site_cache[s].id = id;
			site_cache[s].yes = yes;
			return;
		}
	}
}

/* Does any frame of the stack match pattern?  Symbolizes, so libdw
 * allocates: never with the fault lock held, which fork waits for
 * (region.c says why). */
static bool site_symbolized_match(const char *pattern, uint32_t id)
{
	const uintptr_t *f;
	int n = mc_stack_get_code(id, &f);
	bool yes = false;
	for (int i = 0; i < n && !yes; i++) {
		struct mc_frame_info fi;
		mc_symbolize(f[i], &fi);
		const char *base = strrchr(fi.file, '/');
		yes = fnmatch(pattern, fi.function, 0) == 0 ||
		      (fi.file[0] && (fnmatch(pattern, fi.file, 0) == 0 ||
				      (base && fnmatch(pattern, base + 1, 0) == 0)));
	}
	return yes;
}

/* Set by memcheck's constructor.  Calls before it are other libraries'
 * start-up (libstdc++'s emergency pool, tcmalloc's own operator new[]):
 * counted, but never failed, since the code that makes them cannot take
 * a failure; the program's allocation 1 is its own first. */
static bool started;

static void update_on(void)
{
	if (!started)
		return;
	bool any = mc_opt.fail_count || probability > 0 || site[0];
	for (int i = 0; i <= depth && !any; i++)
		any = levels[i].nth != 0;
	if (mc_opt.fail_nth)
		any = true;
	/* Once counting has started it stays on: indexes must not skip. */
	if (any && !mc_fault_on) {
		__atomic_store_n(&mc_fault_on, 1, __ATOMIC_RELAXED);
		mc_limits_fault_on();
	}
}

/* ---- the decision ---------------------------------------------------- */

/* Locks: region.c's stack_lock may be held when the fault lock is taken,
 * never the other way round; stacks are captured and symbolized outside
 * the fault lock, since fork takes the depot's lock before ours and the
 * symbolizer calls the allocator. */
bool mc_fault_check(void *fp, bool is_realloc)
{
	if (mc_in_hook || !mc_is_active)
		return false;
	int saved = errno;
	mc_guard_enter();
	uint32_t stack = site[0] ? mc_stack_capture(fp) : 0;
	pthread_mutex_lock(&lock);
	struct level *l = &levels[depth];
	uint64_t idx = ++l->calls;
	bool fail = false;
	if (l->nth && (idx == l->nth || (l->persistent && idx > l->nth)))
		fail = true;
	if (!fail && probability > 0 && l->targeted)
		fail = (double)(splitmix(&l->rng) >> 11) * 0x1p-53 < probability;
	if (!fail && site[0] && l->targeted) {
		int known = site_cached(stack);
		if (known < 0) {
			/* Once per stack: decided without the lock, remembered
			 * unless the pattern changed meanwhile. */
			char pattern[sizeof site];
			unsigned gen = site_gen;
			memcpy(pattern, site, sizeof pattern);
			pthread_mutex_unlock(&lock);
			bool yes = site_symbolized_match(pattern, stack);
			pthread_mutex_lock(&lock);
			if (site_gen == gen)
				site_remember(stack, yes);
			known = yes;
			l = &levels[depth];
		}
		fail = known;
	}
	if (!fail) {
		pthread_mutex_unlock(&lock);
		mc_guard_leave();
		errno = saved;
		return false;
	}
	char id[64], name[128];
	memcpy(id, l->id, sizeof id);
	memcpy(name, l->name, sizeof name);
	pthread_mutex_unlock(&lock);
	if (!stack)
		stack = mc_stack_capture(fp);
	pthread_mutex_lock(&lock);
	l = &levels[depth];
	if (strcmp(l->id, id) == 0) {
		struct mc_fault_info *in = &l->info;
		in->injected++;
		size_t i = 0;
		while (i < in->nstacks && in->stacks[i].stack != stack)
			i++;
		if (i == in->nstacks && i < MC_ARRAY_SIZE(in->stacks))
			in->stacks[in->nstacks++].stack = stack;
		if (i < in->nstacks)
			in->stacks[i].count++;
	}
	pthread_mutex_unlock(&lock);
	if (is_realloc)
		mc_account_realloc_call();
	mc_account_failed();
	if (mc_opt.fail_log)
		mc_report_injection(id, name, idx, stack);
	mc_guard_leave();
	memcheck_fault();
	errno = ENOMEM;
	return true;
}

/* ---- regions --------------------------------------------------------- */

void mc_fault_region_begin(const char *name)
{
	pthread_mutex_lock(&lock);
	if (depth + 1 < MAX_LEVELS) {
		depth++;
		level_start(&levels[depth], name ? name : "region", next_ordinal++);
	}
	update_on();
	pthread_mutex_unlock(&lock);
}

void mc_fault_region_rename(const char *name)
{
	pthread_mutex_lock(&lock);
	struct level *l = &levels[depth];
	mc_copy_name(l->name, sizeof l->name, name ? name : "region");
	bool was = l->targeted;
	l->targeted = env_targets(l);
	if (l->targeted && !was) {
		l->nth = (uint64_t)mc_opt.fail_nth;
		l->persistent = mc_opt.fail_persistent;
	}
	update_on();
	pthread_mutex_unlock(&lock);
}

void mc_fault_region_end(struct mc_fault_info *out)
{
	pthread_mutex_lock(&lock);
	struct level *l = &levels[depth];
	*out = l->info;
	out->counted = mc_fault_on;
	memcpy(out->id, l->id, sizeof out->id);
	out->calls = l->calls;
	out->oom_expected = l->oom_expected;
	if (depth > 0)
		depth--;
	pthread_mutex_unlock(&lock);
}

void mc_fault_region_reorder(const int *from, int n)
{
	struct level old[MAX_LEVELS];
	pthread_mutex_lock(&lock);
	/* levels[0] is no region's; the region at i has levels[i + 1] */
	if (n > depth)
		n = depth;
	memcpy(old, levels, (size_t)(n + 1) * sizeof *levels);
	for (int i = 0; i < n; i++)
		levels[i + 1] = old[from[i] + 1];
	update_on();
	pthread_mutex_unlock(&lock);
}

/* ---- processes ------------------------------------------------------- */

static void publish_id(void)
{
	snprintf(proc_env, sizeof proc_env, "MEMCHECK_PROCESS_ID=%s", proc_id);
	putenv(proc_env);
}

/* Around fork (life.c's handlers, in their order). */
void mc_fault_prefork(void)
{
	pthread_mutex_lock(&lock);
	forks++;
}

void mc_fault_postfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

/* The child's regions are its own from here: new ids, counts from 0. */
void mc_fault_postfork_child(void)
{
	mc_mutex_reset(&lock);
	/* proc_id "%s.%u" of the parent's and forks, cut to size as
	 * snprintf would; not snprintf, whose code (7 pages of the C
	 * library's) no child has mapped: fork copies no page tables of
	 * files (tests/prog/plain_fork_faults) */
	char num[22];
	join_number(proc_id, sizeof proc_id, proc_id, '.', num, mc_utoa(num, forks));
	forks = 0;
	for (int i = 0; i <= depth; i++)
		level_reset(&levels[i], i);
	next_ordinal = depth + 1;
	if (mc_fault_on) {
		mc_guard_enter();
		publish_id();
		mc_guard_leave();
	}
}

void mc_fault_init(void)
{
	if (mc_opt.fail_probability) {
		char *end;
		double p = strtod(mc_opt.fail_probability, &end);
		if (end == mc_opt.fail_probability || *end || !(p >= 0 && p <= 1) ||
		    isspace((unsigned char)mc_opt.fail_probability[0]))
			mc_log("MEMCHECK_FAIL_PROBABILITY=%.*s%.*s: expected a number from 0 to 1; "
			       "not failing at random", MC_CUT_VALUE(mc_opt.fail_probability));
		else
			probability = p;
	}
	seed = (uint64_t)mc_opt.fail_seed;
	if (mc_opt.fail_site) {
		if (mc_opt.stack_depth > 0)
			mc_copy_name(site, sizeof site, mc_opt.fail_site);
		else
			mc_log("MEMCHECK_FAIL_SITE needs allocation stacks "
			       "(MEMCHECK_STACK_DEPTH=0); not failing by site");
	}
	if (mc_opt.process_id && strlen(mc_opt.process_id) + 2 < sizeof proc_id)
		snprintf(proc_id, sizeof proc_id, "%sx", mc_opt.process_id);
	level_start(&levels[0], "(no region)", 0);
}

void mc_fault_start(void)
{
	pthread_mutex_lock(&lock);
	started = true;
	update_on();
	pthread_mutex_unlock(&lock);
	if (mc_fault_on)
		publish_id();
}

/* ---- public API ------------------------------------------------------ */

MC_API int memcheck_fail_nth(uint64_t n, int persistent)
{
	mc_resolve();
	mc_guard_enter();
	pthread_mutex_lock(&lock);
	struct level *l = &levels[depth];
	l->nth = n;
	l->persistent = persistent != 0;
	update_on();
	pthread_mutex_unlock(&lock);
	mc_guard_leave();
	return 0;
}

MC_API int memcheck_fail_site(const char *pattern)
{
	mc_resolve();
	if (pattern && mc_opt.stack_depth <= 0)
		return -1;
	mc_guard_enter();
	pthread_mutex_lock(&lock);
	mc_copy_name(site, sizeof site, pattern ? pattern : "");
	memset(site_cache, 0, sizeof site_cache);
	site_gen++;
	for (int i = 0; i <= depth; i++)
		levels[i].targeted = env_targets(&levels[i]);
	update_on();
	pthread_mutex_unlock(&lock);
	mc_guard_leave();
	return 0;
}

MC_API int memcheck_fail_random(double p, uint64_t s)
{
	mc_resolve();
	if (!(p >= 0 && p <= 1))
		return -1;
	mc_guard_enter();
	pthread_mutex_lock(&lock);
	probability = p;
	seed = s;
	for (int i = 0; i <= depth; i++)
		seed_level(&levels[i]);
	update_on();
	pthread_mutex_unlock(&lock);
	mc_guard_leave();
	return 0;
}

MC_API uint64_t memcheck_expect_oom(void)
{
	mc_resolve();
	pthread_mutex_lock(&lock);
	struct level *l = &levels[depth];
	bool first = !l->oom_expected;
	l->oom_expected = true;
	uint64_t n = l->info.injected;
	char id[64], name[128];
	memcpy(id, l->id, sizeof id);
	memcpy(name, l->name, sizeof name);
	pthread_mutex_unlock(&lock);
	/* Said in the log too: a test that then fails may end its process
	 * without a report (check's forked tests do, with _exit). */
	if (first && mc_opt.fail_log && mc_fault_on) {
		mc_guard_enter();
		mc_report_expect_oom(id, name);
		mc_guard_leave();
	}
	return n;
}
