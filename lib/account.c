/*
 * account.c - counters, live bytes, peaks and regions.
 *
 * Counting must cost almost nothing, so each thread counts into a slot of
 * its own (no shared atomic on the hot path); a region's figures are the
 * difference of two sums over all slots.  Live bytes are the exception:
 * a peak needs a global view.  A thread keeps its live-byte change
 * pending and adds it to the global figure only when it exceeds BATCH, or
 * on every call while the process has a single thread; the peak is the
 * global figure plus the caller's pending change at each call.  So the
 * peak is exact for single-threaded programs and low by at most BATCH
 * per other thread otherwise.
 *
 * A region is an epoch: every block carries the epoch of the newest
 * region begun before it was allocated, so a region's leftovers are the
 * live blocks of its epoch or later.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define RUNNING_UNDER_VALGRIND RUNNING_ON_VALGRIND
#else
#define RUNNING_UNDER_VALGRIND 0
#endif

#define MAX_SLOTS 1024
#define BATCH (32 * 1024)
#define MAX_REGIONS 64

/* The thread's most recent frees, to recognise a double free and show
 * where the block was freed.  valgrind keeps a similar bounded queue of
 * freed blocks (--freelist-vol); a free older than the ring is reported
 * as a free of an unknown pointer. */
#define RING 16384
struct freed {
	uintptr_t ptr;
	uint64_t size;
	uint32_t alloc_stack;
	uint32_t unused;
	uintptr_t free_site;   /* the call of free(): a full stack per free
				* would double the cost of tracking */
};

struct slot {
	struct mc_totals t;
	int64_t pending;       /* live-byte change not yet in g_live */
	int in_use;
	uint32_t ring_pos;
	struct freed *ring;    /* RING entries, mmap'd with the slot's first use */
	uintptr_t stack_lo, stack_hi; /* a thread's stack mapping, its static TLS
				       * and descriptor included (not the main
				       * thread's): roots for the scan */
} __attribute__((aligned(64)));

static struct slot *slots;             /* MAX_SLOTS, mmap'd */
static struct slot shared_slot;         /* threads without a slot: atomics */
static struct mc_totals retired;        /* counts of threads that ended */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t slot_key;
static int nslots_used;

static MC_TLS struct slot *my_slot;
static MC_TLS int my_state; /* 0 no slot yet, 1 has one, 2 ended */
static MC_TLS int my_disabled; /* memcheck_disable() depth */

static _Atomic int64_t g_live;
static _Atomic int64_t g_peak;
static _Atomic int g_multi;

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
};

static struct region regions[MAX_REGIONS];
static int nregions;      /* open regions, the process region included */
static int overflowed;    /* begins beyond MAX_REGIONS, ended without report */
static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- per-thread slots ------------------------------------------------ */

static void fold(struct mc_totals *into, const struct mc_totals *t)
{
	const uint64_t *src = (const uint64_t *)t;
	uint64_t *dst = (uint64_t *)into;
	for (size_t i = 0; i < sizeof *t / sizeof(uint64_t); i++)
		dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* A thread's destructor: its counts move to retired, its slot is free. */
static void slot_release(void *arg)
{
	struct slot *s = arg;
	pthread_mutex_lock(&slot_lock);
	fold(&retired, &s->t);
	atomic_fetch_add(&g_live, s->pending);
	memset(&s->t, 0, sizeof s->t);
	s->pending = 0;
	s->in_use = 0; /* the ring stays: its frees can still be doubled */
	s->stack_lo = s->stack_hi = 0;
	pthread_mutex_unlock(&slot_lock);
	my_slot = &shared_slot;
	mc_my_totals = NULL;
	my_state = 2;
}

static struct slot *slot_acquire(void)
{
	if (my_state == 2 || !slots)
		return my_slot = &shared_slot;
	struct slot *s = &shared_slot;
	int saved = errno;
	pthread_mutex_lock(&slot_lock);
	for (int i = 0; i < MAX_SLOTS; i++) {
		if (!slots[i].in_use) {
			s = &slots[i];
			s->in_use = 1;
			if (!s->ring)
				s->ring = mc_map(RING * sizeof *s->ring);
			nslots_used++;
			break;
		}
	}
	if (nslots_used > 1)
		atomic_store(&g_multi, 1);
	pthread_mutex_unlock(&slot_lock);
	if (s != &shared_slot && getpid() != gettid()) {
		/* Only for threads other than the main one: glibc reports the
		 * main thread's stack as the whole rlimit, mostly unmapped. */
		pthread_attr_t attr;
		void *addr;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &attr) == 0) {
			if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
				pthread_mutex_lock(&slot_lock);
				s->stack_lo = (uintptr_t)addr;
				s->stack_hi = (uintptr_t)addr + size;
				pthread_mutex_unlock(&slot_lock);
			}
			pthread_attr_destroy(&attr);
		}
	}
	if (s != &shared_slot) {
		pthread_setspecific(slot_key, s);
		if (!mc_opt.track && mc_is_active)
			mc_my_totals = &s->t; /* the wrappers' count-only path */
	}
	errno = saved;
	my_state = 1;
	return my_slot = s;
}

/* The scan holds the slot lock while it reads other threads' stacks: a
 * thread that ends waits in slot_release, so its stack stays mapped. */
void mc_account_threads_lock(void)
{
	pthread_mutex_lock(&slot_lock);
}

void mc_account_threads_unlock(void)
{
	pthread_mutex_unlock(&slot_lock);
}

int mc_account_other_stacks(uintptr_t (*out)[2], int max)
{
	int n = 0;
	for (int i = 0; slots && i < MAX_SLOTS && n < max; i++) {
		struct slot *s = &slots[i];
		if (s->in_use && s != my_slot && s->stack_hi) {
			out[n][0] = s->stack_lo;
			out[n][1] = s->stack_hi;
			n++;
		}
	}
	return n;
}

static inline struct slot *slot(void)
{
	struct slot *s = my_slot;
	return likely(s != NULL) ? s : slot_acquire();
}

/* Owner-only counters: a relaxed load and store, no lock prefix.  The
 * shared slot is the exception and pays for an atomic. */
static inline void bump(struct slot *s, uint64_t *c, uint64_t v)
{
	if (unlikely(s == &shared_slot))
		__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
	else
		__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static inline void peak_update(int64_t live)
{
	int64_t p = atomic_load_explicit(&g_peak, memory_order_relaxed);
	while (live > p &&
	       !atomic_compare_exchange_weak_explicit(&g_peak, &p, live, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

static inline void live_change(struct slot *s, int64_t d)
{
	if (unlikely(s == &shared_slot)) {
		peak_update(atomic_fetch_add(&g_live, d) + d);
		return;
	}
	int64_t pend = __atomic_load_n(&s->pending, __ATOMIC_RELAXED) + d;
	if (atomic_load_explicit(&g_multi, memory_order_relaxed) &&
	    (pend >= BATCH || pend <= -BATCH)) {
		int64_t live = atomic_fetch_add(&g_live, pend) + pend;
		__atomic_store_n(&s->pending, 0, __ATOMIC_RELAXED);
		if (d > 0)
			peak_update(live);
		return;
	}
	__atomic_store_n(&s->pending, pend, __ATOMIC_RELAXED);
	if (d > 0)
		peak_update(atomic_load_explicit(&g_live, memory_order_relaxed) + pend);
}

/* One allocation or free of size bytes: its call counter, its byte
 * counter and live bytes (d = +size or -size), with the shared-slot test
 * made once. */
static inline void tally(struct slot *s, uint64_t *calls, uint64_t *bytes, uint64_t size,
			 int64_t d)
{
	if (unlikely(s == &shared_slot)) {
		__atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(bytes, size, __ATOMIC_RELAXED);
		peak_update(atomic_fetch_add(&g_live, d) + d);
		return;
	}
	__atomic_store_n(calls, __atomic_load_n(calls, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	__atomic_store_n(bytes, __atomic_load_n(bytes, __ATOMIC_RELAXED) + size, __ATOMIC_RELAXED);
	live_change(s, d);
}

void mc_account_flush(void)
{
	struct slot *s = slot();
	if (s == &shared_slot)
		return;
	int64_t pend = __atomic_exchange_n(&s->pending, 0, __ATOMIC_RELAXED);
	atomic_fetch_add(&g_live, pend);
}

int64_t mc_account_live(void)
{
	struct slot *s = slot();
	return atomic_load(&g_live) + (s == &shared_slot ? 0 : s->pending);
}

void mc_account_sum(struct mc_totals *t)
{
	memset(t, 0, sizeof *t);
	pthread_mutex_lock(&slot_lock);
	fold(t, &retired);
	fold(t, &shared_slot.t);
	if (slots)
		for (int i = 0; i < MAX_SLOTS; i++)
			if (slots[i].in_use)
				fold(t, &slots[i].t);
	pthread_mutex_unlock(&slot_lock);
}

uint32_t mc_current_epoch(void)
{
	return atomic_load_explicit(&mc_epoch, memory_order_relaxed);
}

/* ---- the hooks ------------------------------------------------------- */

static void report_error(const char *what, void *p, const struct freed *f, void *fp)
{
	static _Atomic int shown;
	if (atomic_fetch_add(&shown, 1) >= 20) /* the rest are only counted */
		return;
	int saved = errno;
	uint32_t here = mc_stack_capture(fp);
	if (f)
		mc_report_heap_error(what, (uintptr_t)p, f->size, f->alloc_stack,
				     mc_stack_intern(&f->free_site, 1), here);
	else
		mc_report_heap_error(what, (uintptr_t)p, 0, 0, 0, here);
	errno = saved;
}

static void record_alloc(struct slot *s, void *p, size_t size, void *fp)
{
	if (!mc_opt.track) {
		/* count-only: no sizes on free, so no live figures */
		bump(s, &s->t.allocs, 1);
		bump(s, &s->t.bytes_allocated, size);
		return;
	}
	struct mc_block old;
	uint32_t stack = mc_stack_capture(fp);
	/* Epoch 0: older than every region, as memcheck_ignore() makes it. */
	uint32_t epoch = likely(!my_disabled) ? MC_EPOCH_NOW : 0;
	if (mc_blocks_insert((uintptr_t)p, size, stack, epoch, &old) ==
	    MC_REPLACED_LIVE) {
		/* The allocator handed out an address memcheck still had as
		 * live: the program freed it through a call memcheck does not
		 * wrap (mi_free, sdallocx, ...).  Count that free now. */
		tally(s, &s->t.frees, &s->t.bytes_freed, old.size, -(int64_t)old.size);
	}
	tally(s, &s->t.allocs, &s->t.bytes_allocated, size, (int64_t)size);
}

void mc_account_alloc(void *p, size_t size, void *fp)
{
	record_alloc(slot(), p, size, fp);
}

void mc_account_failed(void)
{
	struct slot *s = slot();
	bump(s, &s->t.failed, 1);
}

void mc_account_realloc_call(void)
{
	struct slot *s = slot();
	bump(s, &s->t.reallocs, 1);
}

static void remember_free(struct slot *s, const struct mc_block *b, void *fp)
{
	if (unlikely(!s->ring))
		return;
	struct freed *f = &s->ring[s->ring_pos++ & (RING - 1)];
	f->ptr = b->ptr;
	f->size = b->size;
	f->alloc_stack = b->stack;
	f->free_site = ((uintptr_t *)fp)[1];
}

static bool find_in_ring(const struct slot *s, uintptr_t p, struct freed *out)
{
	if (!s->ring)
		return false;
	uint32_t n = s->ring_pos < RING ? s->ring_pos : RING;
	for (uint32_t k = 1; k <= n; k++) {
		const struct freed *f = &s->ring[(s->ring_pos - k) & (RING - 1)];
		if (f->ptr == p) {
			*out = *f;
			return true;
		}
	}
	return false;
}

/* Was p freed recently, by this thread or another? */
static bool recently_freed(struct slot *self, uintptr_t p, struct freed *out)
{
	if (self != &shared_slot && find_in_ring(self, p, out))
		return true;
	for (int i = 0; slots && i < MAX_SLOTS; i++)
		if (&slots[i] != self && find_in_ring(&slots[i], p, out))
			return true;
	return false;
}

/* A pointer the table does not have: freed already, or never seen. */
static int unknown_free(struct slot *s, void *p, void *fp, const char *dbl, const char *unk)
{
	struct freed f;
	if (recently_freed(s, (uintptr_t)p, &f)) {
		bump(s, &s->t.double_frees, 1);
		report_error(dbl, p, &f, fp);
		return -1;
	}
	bump(s, &s->t.invalid_frees, 1);
	report_error(unk, p, NULL, fp);
	return 0;
}

/* A free the program made: 1 counted, 0 unknown pointer, -1 double free. */
static int record_free(struct slot *s, void *p, void *fp)
{
	if (!mc_opt.track) {
		bump(s, &s->t.frees, 1);
		return 1;
	}
	struct mc_block b;
	if (unlikely(mc_blocks_remove((uintptr_t)p, &b) != MC_REMOVED))
		return unknown_free(s, p, fp, "double free",
				    "free of a pointer memcheck never saw allocated");
	tally(s, &s->t.frees, &s->t.bytes_freed, b.size, -(int64_t)b.size);
	remember_free(s, &b, fp);
	return 1;
}

void mc_account_free(void *p, bool *pass_on, void *fp)
{
	*pass_on = record_free(slot(), p, fp) >= 0;
}

int mc_account_realloc_begin(void *old, struct mc_block *prev, void *fp)
{
	struct slot *s = slot();
	if (!mc_opt.track) {
		prev->size = 0;
		return 1;
	}
	if (mc_blocks_remove((uintptr_t)old, prev) == MC_REMOVED)
		return 1;
	return unknown_free(s, old, fp, "realloc of a freed block",
			    "realloc of a pointer memcheck never saw allocated");
}

void mc_account_realloc_end(void *old, void *p, size_t size, int st,
			    const struct mc_block *prev, void *fp)
{
	struct slot *s = slot();
	if (!p && size > 0) {
		/* Failed: the old block is untouched, so put it back. */
		bump(s, &s->t.failed, 1);
		if (st == 1 && mc_opt.track) {
			struct mc_block ignored;
			mc_blocks_insert((uintptr_t)old, prev->size, prev->stack, prev->aux, &ignored);
		}
		return;
	}
	if (st == 1) {
		bump(s, &s->t.frees, 1);
		if (mc_opt.track) {
			bump(s, &s->t.bytes_freed, prev->size);
			live_change(s, -(int64_t)prev->size);
			remember_free(s, prev, fp);
		}
	}
	if (p)
		record_alloc(s, p, size, fp);
}

/* ---- fork ------------------------------------------------------------ */

static void atfork_prepare(void)
{
	mc_in_hook++;
	pthread_mutex_lock(&region_lock);
	pthread_mutex_lock(&slot_lock);
	mc_stacks_lock();
	mc_blocks_lock_all();
}

static void atfork_parent(void)
{
	mc_blocks_unlock_all();
	mc_stacks_unlock();
	pthread_mutex_unlock(&slot_lock);
	pthread_mutex_unlock(&region_lock);
	mc_in_hook--;
}

static void region_rebase(struct region *r, uint32_t epoch);
static uint32_t next_epoch(void);

/* The child has one thread and the parent's counters and blocks.  Its
 * figures are its own: every open region starts again here. */
static void atfork_child(void)
{
	mc_blocks_after_fork_child();
	mc_stacks_after_fork_child();
	pthread_mutex_init(&slot_lock, NULL);
	pthread_mutex_init(&region_lock, NULL);
	if (slots) {
		for (int i = 0; i < MAX_SLOTS; i++) {
			struct slot *s = &slots[i];
			if (!s->in_use || s == my_slot)
				continue;
			fold(&retired, &s->t);
			atomic_fetch_add(&g_live, s->pending);
			memset(&s->t, 0, sizeof s->t);
			s->pending = 0;
			s->in_use = 0;
		}
		nslots_used = my_slot && my_slot != &shared_slot ? 1 : 0;
		atomic_store(&g_multi, 0);
	}
	uint32_t epoch = next_epoch();
	for (int i = 0; i < nregions; i++)
		region_rebase(&regions[i], epoch);
	mc_in_hook--;
}

void mc_account_init(void)
{
	slots = mc_map(MAX_SLOTS * sizeof *slots);
	if (!slots)
		mc_log("cannot map thread counters; counting with atomics");
	pthread_key_create(&slot_key, slot_release);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---- regions --------------------------------------------------------- */

/* A new epoch, above every block's.  Epochs have 16 bits in the block
 * table; when they run out, number the open regions 1..n again and every
 * block to match (mc_blocks_renumber).  Call with region_lock held. */
static uint32_t next_epoch(void)
{
	if (atomic_load(&mc_epoch) >= MC_EPOCH_MAX) {
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

static void region_rebase(struct region *r, uint32_t epoch)
{
	mc_vg_region_begin((int)(r - regions), r->name);
	mc_account_flush();
	r->epoch = epoch;
	mc_account_sum(&r->base);
	int64_t live = atomic_load(&g_live);
	r->live_begin = live;
	r->saved_peak = atomic_exchange(&g_peak, live);
	/* Resetting the kernel's high-water mark would lose the enclosing
	 * region's peak so far: keep it with that region. */
	uint64_t hwm = mc_rss_peak();
	if (r > regions && r[-1].hwm_floor < hwm)
		r[-1].hwm_floor = hwm;
	r->hwm_floor = 0;
	r->hwm_reset = mc_rss_reset_peak();
	r->rss_begin = mc_rss_current();
	r->t0 = mc_now();
}

static void region_push(const char *name, bool process)
{
	if (nregions == MAX_REGIONS) {
		if (!overflowed++)
			mc_log("regions nest deeper than %d; inner ones are not reported",
			       MAX_REGIONS);
		return;
	}
	struct region *r = &regions[nregions];
	memset(r, 0, sizeof *r);
	mc_copy_name(r->name, sizeof r->name, name ? name : "region");
	r->process = process;
	uint32_t epoch = next_epoch();
	region_rebase(r, epoch);
	nregions++;
	mc_fault_region_begin(r->name);
}

struct leak_acc {
	struct mc_leak *v;
	size_t n, cap;          /* open-addressing table of groups */
	uint64_t blocks, bytes;
	struct memcheck_count kinds[4];  /* by enum mc_kind */
};

static void leak_add_kind(const struct mc_block *b, int kind, void *arg)
{
	struct leak_acc *a = arg;
	a->blocks++;
	a->bytes += b->size;
	a->kinds[kind].blocks++;
	a->kinds[kind].bytes += b->size;
	if (!a->v)
		return;
	size_t i = ((b->stack * 4u + (uint32_t)kind) * 0x9e3779b9u) & (a->cap - 1);
	while (a->v[i].blocks && (a->v[i].stack != b->stack || a->v[i].kind != (uint32_t)kind))
		i = (i + 1) & (a->cap - 1);
	if (!a->v[i].blocks) {
		if ((a->n + 1) * 2 > a->cap)
			return; /* full: counted in the totals, not grouped */
		a->v[i].stack = b->stack;
		a->v[i].kind = (uint32_t)kind;
		a->n++;
	}
	a->v[i].blocks++;
	a->v[i].bytes += b->size;
}

static void count_block(const struct mc_block *b, void *arg)
{
	(void)b;
	++*(uint64_t *)arg;
}

/* Without a scan every leftover is definitely lost. */
static void leak_add(const struct mc_block *b, void *arg)
{
	leak_add_kind(b, MC_KIND_DEFINITE, arg);
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

/* Symbolizing a report maps debug information, tens of MiB for libc:
 * that is memcheck's doing, not the program's, so the peak RSS the open
 * regions see must not include it.  Keep the peak so far with the
 * innermost open region and reset the kernel's mark afterwards. */
uint64_t mc_account_rss_shield_begin(void)
{
	return mc_rss_peak();
}

void mc_account_rss_shield_end(uint64_t hwm_before)
{
	if (nregions > 0 && regions[nregions - 1].hwm_reset) {
		struct region *r = &regions[nregions - 1];
		if (r->hwm_floor < hwm_before)
			r->hwm_floor = hwm_before;
		mc_rss_reset_peak();
	}
}

/* Pop the innermost region, measure it and report it. */
static int region_pop(struct memcheck_result *out, const char *extra_violation,
		      const struct mc_scan_from *from)
{
	struct region *r = &regions[--nregions];
	struct memcheck_result res;
	memset(&res, 0, sizeof res);
	struct mc_fault_info fault;
	mc_fault_region_end(&fault);
	res.injected = fault.injected;
	mc_account_flush();
	double t1 = mc_now();
	struct mc_totals now;
	mc_account_sum(&now);
	int64_t live_now = atomic_load(&g_live);
	int64_t peak = atomic_load(&g_peak);
	if (peak < live_now)
		peak = live_now;
	/* Hand the enclosing region its peak back, raised by ours. */
	atomic_store(&g_peak, peak > r->saved_peak ? peak : r->saved_peak);

	mc_copy_name(res.name, sizeof res.name, r->name);
	bool vg = mc_vg_region_end(nregions, &res); /* valgrind's figures rule */
	res.allocs = now.allocs - r->base.allocs;
	res.frees = now.frees - r->base.frees;
	res.reallocs = now.reallocs - r->base.reallocs;
	res.failed_allocs = now.failed - r->base.failed;
	res.bytes_allocated = now.bytes_allocated - r->base.bytes_allocated;
	res.bytes_freed = now.bytes_freed - r->base.bytes_freed;
	res.double_frees = now.double_frees - r->base.double_frees;
	res.invalid_frees = now.invalid_frees - r->base.invalid_frees;
	res.pass = 1;
	/* The region's own peak: how far the process's live bytes rose
	 * above their level when it began. */
	res.peak_live_bytes = peak > r->live_begin ? (uint64_t)(peak - r->live_begin) : 0;

	/* RSS before the scan: its memory is memcheck's, not the region's. */
	res.retained_bytes = res.retained_after_release = MEMCHECK_UNKNOWN;
	res.rss_begin = r->rss_begin;
	res.rss_end = mc_rss_current();
	if (r->hwm_reset) {
		uint64_t hwm = mc_rss_peak();
		if (hwm < r->hwm_floor)
			hwm = r->hwm_floor;
		if (hwm < res.rss_end)
			hwm = res.rss_end;
		res.peak_rss = hwm;
		if (nregions > 0 && r[-1].hwm_floor < hwm)
			r[-1].hwm_floor = hwm;
	} else {
		/* /proc/self/clear_refs refused: the kernel's high-water mark
		 * then covers the whole process so far, and the report says so
		 * rather than pass it off as the region's. */
		uint64_t hwm = mc_rss_peak();
		res.peak_rss = hwm ? hwm : MEMCHECK_UNKNOWN;
		res.peak_rss_whole_process = 1;
	}
	struct leak_acc acc = { 0 };
	struct mc_leak *groups = NULL;
	size_t groups_bytes = 0;
	struct mc_scan scan;
	/* Frames deeper than where the region began are the region's own:
	 * those still live when it ends are memcheck's and the code's that
	 * ends it, and the rest hold stale copies of the addresses the
	 * region's code handled (a check test's frames, below its teardown
	 * fixture's).  Ended on the thread that began it, the stack is
	 * scanned from the shallower of the two points. */
	struct mc_scan_from outer;
	if (from && r->begin_sp > from->sp && pthread_equal(r->begin_thread, pthread_self())) {
		outer.sp = r->begin_sp;
		from = &outer;
	}
	/* A region that left nothing behind needs no scan: most tests. */
	uint64_t left = 0;
	if (mc_opt.track && mc_opt.scan && !vg)
		mc_blocks_each_live(r->epoch, count_block, &left);
	bool scanned = false;
	if (left) {
		uint64_t hwm = mc_account_rss_shield_begin();
		scanned = mc_scan(&scan, from);
		mc_account_rss_shield_end(hwm);
	}
	if (mc_opt.track && !left && mc_opt.scan) {
		/* Nothing left behind: no groups to collect. */
	} else if (mc_opt.track) {
		acc.cap = 1024;
		for (;;) {
			groups_bytes = acc.cap * sizeof *acc.v;
			acc.v = mc_map(groups_bytes);
			acc.n = 0;
			acc.blocks = acc.bytes = 0;
			memset(acc.kinds, 0, sizeof acc.kinds);
			if (scanned)
				mc_scan_each(&scan, r->epoch, leak_add_kind, &acc);
			else
				mc_blocks_each_live(r->epoch, leak_add, &acc);
			if (!acc.v || acc.n * 2 + 2 < acc.cap || acc.cap >= (1u << 24))
				break;
			mc_unmap(acc.v, groups_bytes);
			acc.cap *= 4;
		}
		res.live_blocks = acc.blocks;
		res.live_bytes = acc.bytes;
		if (acc.v) {
			size_t n = 0;
			for (size_t i = 0; i < acc.cap; i++)
				if (acc.v[i].blocks)
					acc.v[n++] = acc.v[i];
			qsort(acc.v, n, sizeof *acc.v, leak_cmp);
			groups = acc.v;
			acc.n = n;
		}
	} else {
		/* Count-only: sizes of freed blocks are unknown, so are live
		 * bytes and peaks; the block count is the net change, which
		 * cannot tell the region's blocks from older ones it freed. */
		res.live_blocks = res.allocs > res.frees ? res.allocs - res.frees : 0;
		res.live_bytes = MEMCHECK_UNKNOWN;
		res.bytes_freed = MEMCHECK_UNKNOWN;
		res.peak_live_bytes = MEMCHECK_UNKNOWN;
	}
	if (mc_opt.track && !vg) {
		res.definitely_lost = acc.kinds[MC_KIND_DEFINITE];
		res.indirectly_lost = acc.kinds[MC_KIND_INDIRECT];
		res.possibly_lost = acc.kinds[MC_KIND_POSSIBLE];
		res.still_reachable = acc.kinds[MC_KIND_REACHABLE];
	}
	struct mc_supp_report supp;
	mc_suppress_region(&res, groups, &acc.n, &supp);
	double scan_seconds = scanned ? scan.seconds : -1;
	if (scanned)
		mc_scan_free(&scan);

	/* What the allocator keeps that the program does not: measured after
	 * the region's RSS is read, since asking may itself allocate. */
	res.seconds = t1 - r->t0;
	struct mc_alloc_stats st;
	if (mc_allocator_stats(&st)) {
		res.retained_bytes = st.retained;
		if (mc_opt.release && mc_allocator_release() && mc_allocator_stats(&st))
			res.retained_after_release = st.retained;
	}

	if (res.definitely_lost.blocks)
		add_violation(&res, "%llu bytes in %llu blocks definitely lost",
			      (unsigned long long)res.definitely_lost.bytes,
			      (unsigned long long)res.definitely_lost.blocks);
	/* valgrind's default --errors-for-leak-kinds=definite,possible */
	if (res.possibly_lost.blocks)
		add_violation(&res, "%llu bytes in %llu blocks possibly lost",
			      (unsigned long long)res.possibly_lost.bytes,
			      (unsigned long long)res.possibly_lost.blocks);
	if (res.double_frees)
		add_violation(&res, "%llu double frees", (unsigned long long)res.double_frees);
	if (extra_violation)
		add_violation(&res, "%s", extra_violation);
	if (supp.violation[0])
		add_violation(&res, "%s", supp.violation);
	mc_gate_region(&res);

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
	};
	/* Only leak stacks are symbolized: a clean region's report needs
	 * no shield (two reads of /proc/self/status saved per region). */
	uint64_t hwm = rr.nleaks ? mc_account_rss_shield_begin() : 0;
	mc_report_emit(&rr);
	if (rr.nleaks)
		mc_account_rss_shield_end(hwm);
	mc_suppress_report_free(&supp);
	if (acc.v)
		mc_unmap(acc.v, groups_bytes);
	if (out)
		*out = res;
	return res.pass ? 0 : 1;
}

/* Does a malloc call from this process reach memcheck's malloc?  Symbol
 * lookup says so in most cases; this catches the rest, such as valgrind,
 * which redirects every object's malloc to its own.  Runs before any
 * region takes its baseline. */
static bool calls_reach_us(void)
{
	struct mc_totals before, after;
	mc_account_sum(&before);
	void *volatile p = malloc(1);
	free(p);
	mc_account_sum(&after);
	return after.allocs != before.allocs;
}

static void say_bypassed(void)
{
	if (RUNNING_UNDER_VALGRIND) {
		mc_log("running under valgrind, which replaces malloc in every object: "
		       "memcheck sees no allocations. Run valgrind with "
		       "--soname-synonyms=somalloc=nouserintercepts (glibc) or "
		       "somalloc=<pattern naming the allocator's object> to keep memcheck "
		       "counting");
		return;
	}
	mc_log("malloc is served by %s, which comes before libmemcheck in symbol "
	       "lookup: memcheck sees no allocations. Put libmemcheck first "
	       "(LD_PRELOAD=\"libmemcheck.so %s\", or -lmemcheck before the "
	       "allocator on the link line)",
	       mc_real.object ? mc_real.object : "another object",
	       mc_real.object ? mc_real.object : "liballocator.so");
}

void mc_process_begin(void)
{
	bool on = mc_opt.process_region == MC_ON;
	if (mc_opt.process_region == MC_AUTO) {
		const char *pre = getenv("LD_PRELOAD");
		on = pre && strstr(pre, "libmemcheck");
	}
	if (mc_is_active && !calls_reach_us())
		mc_bypass();
	mc_in_hook++;
	if (!mc_is_active)
		say_bypassed();
	pthread_mutex_lock(&region_lock);
	if (on && nregions == 0)
		region_push("process", true);
	pthread_mutex_unlock(&region_lock);
	mc_in_hook--;
}

void mc_process_end(void)
{
	struct mc_scan_from from;
	MC_SCAN_FROM(&from);
	mc_in_hook++;
	pthread_mutex_lock(&region_lock);
	while (nregions > 0) {
		struct region *top = &regions[nregions - 1];
		if (top->process)
			region_pop(NULL, mc_is_active ? NULL :
				   "memcheck was bypassed: the program's malloc calls do not reach it",
				   &from);
		else
			region_pop(NULL, "region not ended before the process exited", &from);
	}
	pthread_mutex_unlock(&region_lock);
	mc_stop_counting();
	mc_in_hook--;
}

/* ---- public API ------------------------------------------------------ */

MC_API void memcheck_begin(const char *name)
{
	struct mc_scan_from from;
	MC_SCAN_FROM(&from);
	mc_resolve();
	mc_in_hook++;
	pthread_mutex_lock(&region_lock);
	int n = nregions;
	region_push(name, false);
	if (nregions > n) {
		regions[n].begin_sp = from.sp;
		regions[n].begin_thread = pthread_self();
	}
	pthread_mutex_unlock(&region_lock);
	mc_in_hook--;
}

MC_API int memcheck_end(struct memcheck_result *out)
{
	struct mc_scan_from from;
	MC_SCAN_FROM(&from);
	mc_resolve();
	int saved = errno;
	mc_in_hook++;
	pthread_mutex_lock(&region_lock);
	int rc;
	if (overflowed) {
		/* A region past the nesting limit: not measured, not failed. */
		overflowed--;
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
		rc = region_pop(out, mc_is_active ? NULL :
				"memcheck was bypassed: the program's malloc calls do not reach it",
				&from);
	}
	pthread_mutex_unlock(&region_lock);
	mc_in_hook--;
	errno = saved;
	return rc;
}

MC_API int memcheck_rename(const char *name)
{
	int rc = -1;
	pthread_mutex_lock(&region_lock);
	if (nregions > 0 && !regions[nregions - 1].process) {
		struct region *r = &regions[nregions - 1];
		mc_copy_name(r->name, sizeof r->name, name ? name : "region");
		mc_fault_region_rename(r->name);
		rc = 0;
	}
	pthread_mutex_unlock(&region_lock);
	return rc;
}

/* Epoch 0 is older than every region, so no region counts the block as
 * its leftover; its free is still counted as a free. */
MC_API int memcheck_ignore(const void *ptr)
{
	mc_resolve();
	if (!ptr || !mc_opt.track)
		return -1;
	mc_in_hook++;
	bool found = mc_blocks_set_epoch((uintptr_t)ptr, 0);
	mc_in_hook--;
	return found ? 0 : -1;
}

/* Per thread, as LeakSanitizer's __lsan_disable(): another thread's
 * allocations meanwhile are the region's as usual. */
MC_API void memcheck_disable(void)
{
	my_disabled++;
}

MC_API int memcheck_enable(void)
{
	if (my_disabled == 0) {
		mc_resolve();
		mc_log("memcheck_enable() without memcheck_disable()");
		return -1;
	}
	my_disabled--;
	return 0;
}

MC_API int memcheck_depth(void)
{
	pthread_mutex_lock(&region_lock);
	int d = nregions - (nregions > 0 && regions[0].process) + overflowed;
	pthread_mutex_unlock(&region_lock);
	return d;
}

MC_API int memcheck_active(void)
{
	mc_resolve();
	return mc_is_active;
}

MC_API const char *memcheck_allocator(void)
{
	mc_resolve();
	return mc_allocator_name();
}

MC_API uint64_t memcheck_live_bytes(void)
{
	mc_resolve();
	int64_t v = mc_account_live();
	return v > 0 ? (uint64_t)v : 0;
}
