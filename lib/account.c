/*
 * account.c - counters, live bytes and peaks: the malloc hooks.
 *
 * Counting must cost almost nothing, so each thread counts into a slot of
 * its own (no shared atomic on the hot path); a region's figures are the
 * difference of two sums over all slots.
 *
 * Live bytes and their peak, exactly, without a shared line per call.
 * One atomic add a change to one global figure (the former scheme) put
 * every thread's malloc on one cache line: with four threads on two
 * cores that add was ~80% of mc_track_free's own time (perf annotate).
 * Per-thread batches flushed every 32 KiB, before that, were cheap but
 * low by up to the other threads' batches.  Now each thread holds a
 * grant: bytes it may add to the live figure without telling anyone,
 * handed out under live_lock from the slack below the peak, so that
 *     flushed + (every thread's grant) <= peak
 * while every thread's unflushed change stays at or below its grant.
 * The live bytes, flushed plus every thread's unflushed change, then
 * cannot pass the peak while the threads keep to their grants.  A
 * thread's slot keeps `room`, its grant minus its unflushed change: an
 * allocation takes from it, a free gives to it, one exchange-add
 * without a lock prefix on the thread's own line inside a busy mark (a
 * locked subtraction there, the scheme before, waited for the thread's
 * earlier stores to drain: 73% of mc_track_free's samples, four threads
 * under tcmalloc).
 * A change that leaves room below 0 takes the lock: it flushes the
 * thread's change, and when flushed plus the grants still out could
 * pass the peak, it freezes every other thread (stopped with one
 * membarrier(2) for all, read once outside its busy mark, its room made
 * FROZEN and its change flushed, so that its next call, free or malloc,
 * waits for the lock: freeze_all) and compares the exact sum with the
 * peak.  Without membarrier, the subtraction is locked.  Frozen
 * threads change nothing, so that sum is the live bytes at one moment:
 * the peak is exact with any number of threads (test_threads: the
 * programs plain_peak_threads and plain_peak_exact, which reads the
 * live bytes while its racing threads hold their peak).  Then the
 * thread takes a new grant, a share of the slack left.  A program that
 * stays near its peak pays the lock more often; one far below it
 * almost never.
 *
 * One thread alone pays no lock at all.  A heap that only grows (a short
 * test that builds its data and exits) makes every allocation a new
 * peak, so the grants above give it none, and it took live_lock each
 * time (callgrind malloc_bench --keep 200000: 196.4 M -> 215.8 M
 * instructions).  So the first thread to take a slot is `solo`: its
 * changes go straight to g_flushed, the peak compared inline, inside a
 * busy mark and no lock, as blocks.c's one thread.  Everyone else who
 * would touch the figures (a second slot, a thread without one, a
 * region's begin or end or a reading of the live bytes on another
 * thread) first ends solo for good (solo_end): the state goes to
 * SOLO_ENDED, membarrier(2) makes that and the busy mark visible both
 * ways, and it waits for the solo thread to leave its section.  From
 * then on the grants.  Without membarrier there is no solo.
 *
 * Regions (region.c) read these figures at their begin and end.
 */
#include <errno.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "blocks.h"

#define MAX_SLOTS 1024
/* A slot's room when frozen: its changes go through live_lock.  Any room
 * below FROZEN / 2 is frozen (its thread may have added to it since). */
#define FROZEN (INT64_MIN / 2)
#define IS_FROZEN(r) ((r) < FROZEN / 2)

/* The thread's most recent frees, to recognise a double free and show
 * where the block was freed.  valgrind keeps a similar bounded queue of
 * freed blocks (--freelist-vol); a free older than the ring is reported
 * as a free of an unknown pointer. */
#define RING 16384
struct freed {
	uintptr_t ptr;
	uint64_t size;
	uint32_t alloc_stack;
	uint32_t free_stack;   /* under valgrind's text alone: the free's
				* whole stack (free_stack_capture), else 0 */
	uintptr_t free_site;   /* the call of free(): a full stack per free
				* would double the cost of tracking */
};
/* Tried on 4 December 2026 and not kept: records written with
 * non-temporal stores (movnti), a whole line at a time (a line's first
 * record waiting in the slot for its second), so that a ring's 512 KiB
 * stay out of the caches.  With four threads on two cores the rings are
 * the largest share of memcheck's last-level misses (cachegrind with a
 * 1 MiB last level the threads share, malloc_bench 2 M steps, four
 * threads under tcmalloc: 1.12 misses a step, 0.42 of them the ring's
 * writes in mc_track_free; one thread 0.07 in all, the bare run 0.13).
 * But a locked instruction waits for the non-temporal stores before it
 * to reach memory, and glibc's malloc with threads takes its arena lock
 * in each call: glibc, four threads, 3.04x the bare run against 2.31x
 * (medians of 10 alternated rounds, 20 M steps); tcmalloc's ratio over
 * its one-thread ratio did not move (CPU time 1.18 -> 1.26, within the
 * rounds' spread).  Instructions a step the same (callgrind). */

struct mc_slot {
	struct mc_totals t;
	int in_use;
	uint32_t ring_pos;
	struct freed *ring;    /* RING entries, mmap'd with the slot's first use */
	/* The ring's next record and where the common free must stop and
	 * leave it to remember_free (the next page's first record: a page to
	 * ready, or the wrap): set by remember_free, equal (NULL) until then,
	 * so the common free makes one test, not four (ring_ahead) */
	struct freed *ring_next;
	uintptr_t ring_stop;   /* an address: may lie one record below the ring */
	pid_t tid;             /* its thread, while in use */
	uintptr_t stack_lo, stack_hi; /* a thread's stack mapping (not the main
				       * thread's): memory allocator.c knows is
				       * not the allocator's; read by the scan
				       * only where mapped, for a thread it
				       * could not stop */
	uintptr_t tp;          /* and its thread pointer, with them */
	int64_t sample_left;   /* bytes to move before the next timeline
				* sample (timeline.c); huge when there is none */
	/* Live bytes (see the head): room = grant - the change not yet
	 * flushed, or FROZEN.  Its thread subtracts its changes from room;
	 * others only make it FROZEN, with live_lock held, which also guards
	 * grant and stop.  With membarrier (plain_room) the thread's change
	 * is an unlocked exchange-add inside its busy mark, unless stop says
	 * a freezer has claimed the slot (see freeze_all); without, an
	 * atomic subtraction, and freezers swap room for FROZEN. */
	_Atomic int64_t room;
	_Atomic int busy;
	_Atomic int stop;
	int64_t grant;
	bool solo;             /* this slot may be solo (see the head): its
				* thread's only, cleared once solo ends */
} __attribute__((aligned(64)));

static struct mc_slot *slots;             /* MAX_SLOTS, mmap'd */
/* The ring of the first slot taken, reserved right below the slots
 * (mc_account_init): its first page, the ring's last (a ring is filled
 * from its end, below), is populated and counted with that slot's
 * (slot_pages_ready), one call where the first free made another.  NULL
 * where nothing is tracked (no ring is written). */
static struct freed *first_ring;
static struct mc_slot shared_slot = {      /* threads without a slot: atomics */
	.room = FROZEN,                 /* and live_slow for every change */
};
static struct mc_totals retired;        /* counts of threads that ended */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t slot_key;
static int nslots_used;
/* 1 + the highest slot index ever taken: loops over the slots stop
 * there, so a one-thread process reads one page of them, not 48 (every
 * process sums them at start-up). */
static _Atomic int slots_hi;

#define my_slot (mc_self.slot)
static MC_TLS int my_state; /* 0 no slot yet, 1 has one, 2 ended */
#define my_disabled (mc_self.disabled)

/* Live bytes: flushed (every change not in a thread's room), the grants
 * out, the peak; all under live_lock. */
static atomic_int live_lock;
static int64_t g_flushed;
static int64_t g_granted;
static int64_t g_peak;

/* The timeline's countdown (timeline.c): the innermost region's step,
 * which timeline.c sets, and its sampler, called when a thread's
 * countdown runs out.  A hook (life.c sets it): the sample sums every
 * thread's counters here, so timeline.c calls this file, not the other
 * way round. */
/* solo (see the head): 0 before the first slot, then that slot, then
 * SOLO_ENDED for good (but in a fork child, which may start again). */
#define SOLO_ENDED ((uintptr_t)1)
static _Atomic uintptr_t solo;
static volatile int solo_busy;  /* the solo thread is inside its section */
static _Atomic int solo_done;   /* solo_end has seen it leave */
static bool solo_ok;            /* membarrier works */
/* Threads change their room without a locked instruction (membarrier
 * works): see live_change and freeze_all. */
static bool plain_room;

static _Atomic int64_t step_now;
static void (*sampler)(void);
static int64_t timeline_step(void);

static void live_lock_take(void);
static void live_lock_drop(void);
static void flush_slot(struct mc_slot *x);

/* ---- per-thread slots ------------------------------------------------ */

static void fold(struct mc_totals *into, const struct mc_totals *t)
{
	const uint64_t *src = (const uint64_t *)t;
	uint64_t *dst = (uint64_t *)into;
	for (size_t i = 0; i < sizeof *t / sizeof(uint64_t); i++)
		dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* A slot's counts move to retired and it is free again.  Lock held. */
static void retire(struct mc_slot *s)
{
	live_lock_take();
	flush_slot(s);
	live_lock_drop();
	fold(&retired, &s->t);
	memset(&s->t, 0, sizeof s->t);
	s->in_use = 0; /* the ring stays: its frees can still be doubled */
	atomic_store_explicit(&s->busy, 0, memory_order_relaxed); /* (a reaped thread's) */
	s->tid = 0;
	s->stack_lo = s->stack_hi = 0;
	nslots_used--;
}

/* A thread's destructor: its slot is free.  The value may not be this
 * thread's: the C library does not clear a key's value in a cached
 * thread stack it reuses, so a thread that took its slot after its own
 * destructors ran (see reap) hands that slot, reaped and perhaps another
 * thread's by now, to the next thread on the same stack. */
static void slot_release(void *arg)
{
	struct mc_slot *s = arg;
	pthread_mutex_lock(&slot_lock);
	if (s->in_use && s->tid == mc_tid())
		retire(s);
	pthread_mutex_unlock(&slot_lock);
	mc_fatal_thread_done();
	my_slot = &shared_slot;
	mc_self.own_slot = NULL;
	mc_set_totals(NULL);
	mc_sites_thread(-1);
	my_state = 2;
}

/* A slot whose thread has gone without its destructor running: the C
 * library frees a dead thread's DTV and dynamic TLS after the thread's
 * key destructors ran, in the thread itself or in the one that reuses
 * its stack, and a thread that never allocated before takes a slot then
 * that no destructor releases.  Reaped when a thread looks for a slot:
 * one in-use slot checked each time, every one when none is free.  A
 * thread id is not reused before the kernel has gone round pid_max.
 * Lock held. */
static bool reap(struct mc_slot *s)
{
	if (!s->in_use || !s->tid || s == my_slot)
		return false;
	if (syscall(SYS_tgkill, getpid(), s->tid, 0) == 0 || errno != ESRCH)
		return false; /* errno: slot_acquire restores it */
	retire(s);
	return true;
}

/* No more solo: after this no thread changes the figures without
 * live_lock.  Called holding no lock (the solo thread may be in its
 * section: it takes none there). */
static __attribute__((noinline)) void solo_end(void)
{
	if (atomic_load_explicit(&solo_done, memory_order_acquire))
		return;
	uintptr_t was = atomic_exchange(&solo, SOLO_ENDED);
	if (was == SOLO_ENDED) { /* another thread is ending it */
		while (!atomic_load_explicit(&solo_done, memory_order_acquire))
			__builtin_ia32_pause();
		return;
	}
	if (was) {
		int saved = errno;
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
		errno = saved;
		while (solo_busy)
			__builtin_ia32_pause();
	}
	atomic_store_explicit(&solo_done, 1, memory_order_release);
}

/* A reader or writer of the figures other than the solo thread ends
 * solo.  The caller takes its slot first: the process region's begin,
 * before main's first allocation, then makes main solo, not the end. */
static struct mc_slot *slot(void);
static void solo_not_me(void)
{
	struct mc_slot *me = slot();
	if (atomic_load_explicit(&solo, memory_order_relaxed) != (uintptr_t)me)
		solo_end();
}

/* The pages of slot i, never used, that no slot before it lies on
 * (slots are taken lowest first): populated before they are written,
 * one system call where the first write was a page fault, and counted
 * as memcheck's (mc_own_grow): no other page of the mapping is ever
 * touched, so footprint.c need not ask mincore about it. */
static void slot_pages_ready(int i)
{
	uintptr_t lo = (uintptr_t)&slots[i], hi = lo + sizeof *slots;
	if (i)
		lo = ((uintptr_t)&slots[i - 1] | 4095) + 1;
	else if (first_ring)
		lo -= 4096; /* the ring's first page, just below */
	if (hi > lo) {
		mc_populate((void *)lo, hi - lo);
		mc_own_grow((int64_t)((((hi - 1) | 4095) + 1) - lo));
	}
	/* Written after the populate: slot 0's page read first (it was
	 * tested for a ring) was two page faults in every tracking
	 * process, the zero page's and its copy's.  Slot 0 is made ready
	 * once (slots_hi never goes back to 0), with no ring yet. */
	if (i == 0 && first_ring)
		slots[0].ring = first_ring;
}

static void set_stack(struct mc_slot *s, uintptr_t lo, uintptr_t hi)
{
	pthread_mutex_lock(&slot_lock);
	s->stack_lo = lo;
	s->stack_hi = hi;
	s->tp = mc_thread_pointer(); /* set by the thread itself */
	pthread_mutex_unlock(&slot_lock);
}

void mc_account_stack_known(uintptr_t lo, uintptr_t hi)
{
	struct mc_slot *s = mc_self.own_slot;
	if (s && !s->stack_hi && mc_pid() != mc_tid())
		set_stack(s, lo, hi);
}

static struct mc_slot *slot_acquire(void)
{
	if (my_state == 2 || !slots) {
		solo_end();
		return my_slot = &shared_slot;
	}
	struct mc_slot *s = &shared_slot;
	int saved = errno;
	pid_t tid = mc_tid();
	pthread_mutex_lock(&slot_lock);
	static int next_check;
	int hi = atomic_load_explicit(&slots_hi, memory_order_relaxed);
	if (hi)
		reap(&slots[next_check++ % hi]);
	int free_at = -1;
	for (int i = 0; i < hi && free_at < 0; i++)
		if (!slots[i].in_use)
			free_at = i;
	/* The slots from hi on were never used: the first is not read
	 * (a read of a fresh page is a page fault too) */
	if (free_at < 0 && hi < MAX_SLOTS) {
		free_at = hi;
		slot_pages_ready(hi);
	}
	for (int i = 0; i < hi && free_at < 0; i++)
		if (reap(&slots[i]))
			free_at = i;
	if (free_at >= 0) {
		s = &slots[free_at];
		s->in_use = 1;
		s->tid = tid;
		if (free_at >= hi)
			atomic_store_explicit(&slots_hi, free_at + 1, memory_order_relaxed);
		if (!s->ring)
			s->ring = mc_map_reserve(RING * sizeof *s->ring);
		s->sample_left = timeline_step();
		nslots_used++;
	}
	pthread_mutex_unlock(&slot_lock);
	if (s != &shared_slot && mc_pid() != tid) {
		/* Only for threads other than the main one: glibc reports the
		 * main thread's stack as the whole rlimit, mostly unmapped.
		 * Inside the program's own pthread_getattr_np it cannot be
		 * asked: mc_account_stack_known, after it. */
		uintptr_t stack_lo, stack_hi;
		if (mc_stack_bounds(&stack_lo, &stack_hi))
			set_stack(s, stack_lo, stack_hi);
		mc_fatal_thread_arm(); /* its overflow's record */
	}
	if (s != &shared_slot) {
		mc_sites_thread((int)(s - slots)); /* its shard of the peak sites */
		pthread_setspecific(slot_key, s);
		if (!mc_opt.track && mc_is_active)
			mc_set_totals(&s->t); /* the wrappers' count-only path */
	}
	/* The first slot is solo; any later one, or the shared slot, ends
	 * it before its thread can change a figure. */
	uintptr_t none = 0;
	if (s == &shared_slot || !solo_ok ||
	    !atomic_compare_exchange_strong(&solo, &none, (uintptr_t)s))
		solo_end();
	else
		s->solo = true;
	errno = saved;
	my_state = 1;
	mc_self.own_slot = s != &shared_slot ? s : NULL;
	return my_slot = s;
}

/* allocator.c leaves other threads' stacks out of the memory it
 * attributes to the allocator.  The scan finds every stopped thread's
 * stack itself (roots.c): a slot's may be unmapped by the time it is
 * read; it asks for one only where it could not stop the thread. */
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
	for (int i = 0, hi = slots_hi; slots && i < hi && n < max; i++) {
		struct mc_slot *s = &slots[i];
		if (s->in_use && s != my_slot && s->stack_hi) {
			out[n][0] = s->stack_lo;
			out[n][1] = s->stack_hi;
			n++;
		}
	}
	return n;
}

bool mc_account_thread_stack_held(pid_t tid, uintptr_t *lo, uintptr_t *hi, uintptr_t *tp)
{
	for (int i = 0, n = slots_hi; slots && i < n; i++) {
		struct mc_slot *s = &slots[i];
		if (s->in_use && s->tid == tid && s->stack_hi) {
			*lo = s->stack_lo;
			*hi = s->stack_hi;
			*tp = s->tp;
			return true;
		}
	}
	return false;
}

static inline struct mc_slot *slot(void)
{
	struct mc_slot *s = my_slot;
	return likely(s != NULL) ? s : slot_acquire();
}

/* The counters a free goes to.  A thread takes a slot of its own when it
 * first allocates; one that has only freed counts in the shared slot.
 * So the C library's frees in a thread that is ending, after its key
 * destructors have run (its DTV and dynamic TLS blocks, the DTVs of
 * cached stacks it trims), take no slot that nothing would release; a
 * thread that only ever frees pays for atomic counts. */
static inline struct mc_slot *free_slot(void)
{
	struct mc_slot *s = my_slot;
	return likely(s != NULL) ? s : &shared_slot;
}

/* Owner-only counters: a relaxed load and store, no lock prefix.  The
 * shared slot is the exception and pays for an atomic. */
static inline void bump(struct mc_slot *s, uint64_t *c, uint64_t v)
{
	if (unlikely(s == &shared_slot))
		__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
	else
		mc_add_own(c, v);
}

/* A failed allocation counted; rlimits.c takes memcheck's own bytes at
 * the process's first (a limit's shortfall is said as of then, not as
 * of the report, which maps more).  Out of line: failures only. */
static __attribute__((noinline, cold)) void count_failed(struct mc_slot *s)
{
	bump(s, &s->t.failed, 1);
	mc_rlimits_failed();
}

/* ---- live bytes (see the head) ---------------------------------------- */

static void live_lock_take(void)
{
	mc_spin_lock_noted(&live_lock); /* a scan holds it: blocks.c's mc_spin_wait */
}

static void live_lock_drop(void)
{
	atomic_store_explicit(&live_lock, 0, memory_order_release);
}

/* Slot x's unflushed change goes to g_flushed, its grant back; x is left
 * FROZEN (and stopped: its thread's next change takes the lock).
 * live_lock held; with plain_room, x's thread is this one, or gone, or
 * stopped outside its busy mark (freeze_all). */
static void flush_slot(struct mc_slot *x)
{
	int64_t r;
	if (plain_room) {
		atomic_store_explicit(&x->stop, 1, memory_order_relaxed);
		r = atomic_load_explicit(&x->room, memory_order_relaxed);
		atomic_store_explicit(&x->room, FROZEN, memory_order_relaxed);
	} else
		r = atomic_exchange_explicit(&x->room, FROZEN, memory_order_relaxed);
	if (!IS_FROZEN(r))
		g_flushed += x->grant - r;
	g_granted -= x->grant;
	x->grant = 0;
}

static inline bool freezable(const struct mc_slot *x, const struct mc_slot *self)
{
	return x != self && !IS_FROZEN(atomic_load_explicit(&x->room, memory_order_relaxed));
}

/* Every slot but self frozen, their changes flushed: g_flushed is then
 * the live bytes (self's change apart), and stays so while the lock is
 * held.  With plain_room a thread changes its room without a lock
 * prefix (room_take; a locked add there was 73% of mc_track_free's
 * samples, tcmalloc, four threads, perf), so it cannot be swapped under
 * it: each slot is claimed (stop), one membarrier(2) for them all makes
 * that and every thread's busy mark visible both ways (as solo_end), and
 * the slot is read once its thread is outside its mark, after which it
 * sees stop and leaves room alone.  Freezes are rare (live bytes reaching
 * the grants' sum: ~5,000 in malloc_bench 8 M steps, four threads), a
 * membarrier ~6 us here.  They come while the threads fill their rings,
 * each allocation a new peak, not from the steady churn: ~4,500 at 20 M
 * steps and 3,100-3,800 at 40,000 (uprobes on freeze_all, four threads,
 * each allocator).  Measured on 4 December 2026: a build whose grants
 * never run out (no freeze, a wrong peak) ran a four-thread 40,000-step
 * malloc_bench as fast as this one (tcmalloc, medians of 15 alternated
 * runs: 0.093 s, 0.087 s), and CPU time at 20 M steps within the
 * spread; and a ceiling on a thread's room (frees past twice its grant
 * handed back, so that g_flushed follows the live bytes down) left the
 * freezes as they were (4,233-4,625) and took the lock 6-8 times as
 * often.  Not kept. */
static void freeze_all(struct mc_slot *self)
{
	int hi = slots ? atomic_load_explicit(&slots_hi, memory_order_relaxed) : 0;
	if (plain_room) {
		bool any = false;
		for (int i = 0; i < hi; i++)
			if (freezable(&slots[i], self)) {
				atomic_store_explicit(&slots[i].stop, 1, memory_order_relaxed);
				any |= &slots[i] != my_slot; /* (this thread's needs none:
							      * a region's begin) */
			}
		if (any) {
			int saved = errno;
			syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
			errno = saved;
		}
	}
	for (int i = 0; i < hi; i++) {
		struct mc_slot *x = &slots[i];
		if (!freezable(x, self))
			continue;
		/* (This thread's own mark is up only where a signal handler
		 * interrupted its change: room_take is one instruction.) */
		for (int spins = 0; plain_room && x != my_slot &&
				    atomic_load_explicit(&x->busy, memory_order_acquire);
		     spins++) {
			if (spins > 64)
				sched_yield(); /* its thread may be off the CPU */
			else
				__builtin_ia32_pause();
		}
		flush_slot(x);
	}
}

/* Raise the peak to g_flushed if above it: a new peak is also a new
 * snapshot of the sites (snapshot.c).  Every slot frozen, lock held. */
static void peak_raise(void)
{
	if (g_flushed > g_peak) {
		g_peak = g_flushed;
		if (mc_sites_on)
			mc_snap_bump();
	}
}

/* A grant for s (lock held, s flushed): a share of the slack, halved per
 * thread so that the ones that come next find some left.  0 when there
 * is none: s's next allocation takes the lock again, its frees do not. */
static void regrant(struct mc_slot *s)
{
	int64_t slack = g_peak - g_flushed - g_granted;
	int n = __atomic_load_n(&nslots_used, __ATOMIC_RELAXED);
	n = n > 0 ? n : 1;
	int64_t g = slack > 0 ? slack / (2 * n) : 0;
	s->grant = g;
	g_granted += g;
	atomic_store_explicit(&s->room, g, memory_order_relaxed);
	atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
}

/* A change that s's room could not take: old is the room before the
 * thread subtracted d from it (FROZEN for the shared slot, which has
 * none).  If the slot was not frozen then, d is in its room, overdrawn,
 * and flushing the slot counts it; if it was, d is counted here.  Then
 * the peak, and a new grant. */
static __attribute__((noinline)) void live_slow(struct mc_slot *s, int64_t d, int64_t old)
{
	bool own = s != &shared_slot;
	if (!own)
		solo_end();
	live_lock_take();
	if (own) {
		/* As flush_slot, without the locked swap: only this thread and
		 * holders of the lock write its room. */
		int64_t r = atomic_load_explicit(&s->room, memory_order_relaxed);
		if (!IS_FROZEN(r))
			g_flushed += s->grant - r;
		g_granted -= s->grant;
	}
	if (IS_FROZEN(old))
		g_flushed += d;
	if (d > 0 && g_flushed + g_granted > g_peak) {
		/* the peak may rise: make g_flushed exact */
		freeze_all(own ? s : NULL);
		peak_raise();
	}
	if (own)
		regrant(s);
	live_lock_drop();
}

/* d bytes came (d > 0) or went: from s's room, one atomic subtraction on
 * the thread's own line.  A room that goes below 0 (an allocation beyond
 * the grant, or any change while frozen) takes the lock.  An overdrawn
 * room reads as an allocation under way: a thread that freezes the slot
 * meanwhile counts it, at its own moment, which lies within the call. */
static __attribute__((noinline)) void solo_peak(void)
{
	g_peak = g_flushed;
	if (mc_sites_on)
		mc_snap_bump();
}

/* The solo thread's change: straight to the figures, no lock.  Why one
 * load of solo after the busy mark suffices: as blocks.c's owner_enter
 * (solo_end's membarrier orders the two against the ender's). */
static inline __attribute__((always_inline)) bool solo_change(struct mc_slot *s, int64_t d, bool up)
{
	solo_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	bool mine = likely(atomic_load_explicit(&solo, memory_order_relaxed) == (uintptr_t)s);
	if (mine) {
		g_flushed += d;
		/* A free (up false) cannot make a peak: g_flushed <= g_peak
		 * holds here, and the free paths skip the test. */
		if (up && unlikely(g_flushed > g_peak))
			solo_peak();
	}
	atomic_signal_fence(memory_order_seq_cst);
	solo_busy = 0;
	if (!mine)
		s->solo = false;
	return mine;
}

/* room -= d, returning room before: one instruction without a lock
 * prefix.  Other threads do not write room meanwhile (see freeze_all);
 * one instruction, because a signal handler on this thread may freeze
 * its own slot (a region begun in the handler) between any two: a load
 * and a store apart, the store would put back what the freeze took. */
static inline int64_t room_take(_Atomic int64_t *room, int64_t d)
{
#if defined(__x86_64__)
	int64_t v = -d;
	__asm__ volatile("xaddq %0, %1" : "+r"(v), "+m"(*(int64_t *)room));
	return v;
#else
	return atomic_fetch_sub_explicit(room, d, memory_order_relaxed);
#endif
}

/* d out of s's room, a slot that is not solo: the room before (FROZEN
 * where the slot was stopped: d is not in room then, live_slow counts
 * it).  The caller calls live_slow where old - d < 0. */
static inline __attribute__((always_inline)) int64_t room_change(struct mc_slot *s, int64_t d)
{
	int64_t old = FROZEN;
	if (likely(plain_room)) {
		/* Inside the busy mark, a slot not stopped is this thread's
		 * alone (freeze_all waits for the mark to drop). */
		atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		if (likely(!atomic_load_explicit(&s->stop, memory_order_relaxed)))
			old = room_take(&s->room, d);
		atomic_store_explicit(&s->busy, 0, memory_order_release);
	} else
		old = atomic_fetch_sub_explicit(&s->room, d, memory_order_relaxed);
	return old;
}

static inline __attribute__((always_inline)) void live_change(struct mc_slot *s, int64_t d, bool up)
{
	if (s->solo && solo_change(s, d, up))
		return;
	int64_t old = room_change(s, d);
	if (unlikely(old - d < 0))
		live_slow(s, d, old);
}

/* A thread's first countdown: the innermost region's step; with no
 * region open, threads still count down (from the first step), so that
 * a thread made before a region begins samples it too; INT64_MAX when
 * there is no timeline. */
static int64_t timeline_step(void)
{
	if (mc_opt.timeline <= 0) /* footprint.c's check of the heap, if due */
		return mc_fp_heap_at1 ? (int64_t)mc_fp_heap_at1 : INT64_MAX;
	int64_t s = atomic_load_explicit(&step_now, memory_order_relaxed);
	return s > 0 ? s : MC_TIMELINE_FIRST_STEP;
}

void mc_account_step_set(int64_t step)
{
	atomic_store_explicit(&step_now, step, memory_order_relaxed);
}

void mc_account_sampler_set(void (*fn)(void))
{
	sampler = fn;
}

/* The countdown ran out: the timeline's sample, and footprint.c's
 * making its code present where the live heap has reached the bytes it
 * asks (mc_fp_heap_at1, which is also the countdown where the timeline
 * is off: a look every 4 MiB moved, until then, on no common path). */
static __attribute__((noinline, cold)) void sample_due(struct mc_slot *s)
{
	if (sampler && mc_opt.timeline > 0)
		sampler();
	if (MC_FP_HEAP_DUE(__atomic_load_n(&g_peak, __ATOMIC_RELAXED)))
		mc_footprint_heap_grown();
	s->sample_left = timeline_step();
}

/* One allocation (up) or free of size bytes: its call counter, its
 * byte counter and live bytes, with the shared-slot test made once;
 * true where the timeline's countdown ran out (tally samples then). */
static inline __attribute__((always_inline)) bool tally_due(struct mc_slot *s, uint64_t *calls,
							    uint64_t *bytes, uint64_t size, bool up)
{
	int64_t d = up ? (int64_t)size : -(int64_t)size;
	if (unlikely(s == &shared_slot)) {
		__atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(bytes, size, __ATOMIC_RELAXED);
		live_slow(s, d, FROZEN);
		return false; /* threads share it: no timeline countdown */
	}
	mc_add_own(calls, 1);
	mc_add_own(bytes, size);
	live_change(s, d, up);
	/* The timeline's countdown: one subtraction while it is off. */
	s->sample_left -= (int64_t)size;
	return unlikely(s->sample_left < 0);
}

static inline __attribute__((always_inline)) void tally(struct mc_slot *s, uint64_t *calls, uint64_t *bytes, uint64_t size,
			 bool up)
{
	if (tally_due(s, calls, bytes, size, up))
		sample_due(s);
}

/* A block the program freed through a call memcheck does not wrap
 * (mi_free, dallocx, tc_free, __libc_free), counted freed when the
 * allocator hands its address out again: the free's tally without the
 * countdown's check, which the allocation's tally right after makes, so
 * that no timeline sample falls between the two (a figure with neither
 * block, one every other sample of a loop that frees so: harden36). */
static inline __attribute__((always_inline)) void tally_unseen_free(struct mc_slot *s, uint64_t size)
{
	(void)tally_due(s, &s->t.frees, &s->t.bytes_freed, size, false);
}

/* A region began: this thread's timeline countdown starts from its step. */
void mc_account_countdown(void)
{
	struct mc_slot *s = slot();
	if (s != &shared_slot)
		s->sample_left = timeline_step();
}

/* The live bytes now: flushed plus every thread's unflushed change.
 * Exact when no other thread allocates meanwhile; with some, a sum over
 * their slots read one after another (region.c's figures at a begin or
 * an end, the timeline's samples), as any reading of a moving figure. */
int64_t mc_account_live(void)
{
	solo_not_me();
	live_lock_take();
	int64_t live = g_flushed;
	for (int i = 0, hi = slots ? slots_hi : 0; i < hi; i++) {
		struct mc_slot *x = &slots[i];
		int64_t r = atomic_load_explicit(&x->room, memory_order_relaxed);
		if (!IS_FROZEN(r))
			live += x->grant - r;
	}
	live_lock_drop();
	return live;
}

void mc_account_sum(struct mc_totals *t)
{
	pthread_mutex_lock(&slot_lock);
	mc_account_sum_held(t);
	pthread_mutex_unlock(&slot_lock);
}

/* The sum with slot_lock held (mc_account_threads_lock): scan.c takes
 * it before the block table, as fork does, and sums once the other
 * threads are stopped, one of which might otherwise hold it. */
void mc_account_sum_held(struct mc_totals *t)
{
	memset(t, 0, sizeof *t);
	fold(t, &retired);
	fold(t, &shared_slot.t);
	if (slots)
		for (int i = 0, hi = slots_hi; i < hi; i++)
			if (slots[i].in_use)
				fold(t, &slots[i].t);
}

/* A region's begin: the peak starts again from the live bytes now, read
 * exactly (every thread frozen: their grants came from the old peak). */
int64_t mc_account_peak_begin(int64_t *live)
{
	solo_not_me();
	live_lock_take();
	freeze_all(NULL);
	*live = g_flushed;
	int64_t old = g_peak;
	g_peak = g_flushed;
	live_lock_drop();
	return old;
}

/* A region's end: its peak, and the enclosing region's peak back, raised
 * by it.  The live bytes never pass g_peak unseen (the head), so it is
 * the peak; raising it keeps the grants out within it. */
int64_t mc_account_peak_end(int64_t saved_peak)
{
	solo_not_me();
	live_lock_take();
	int64_t peak = g_peak;
	g_peak = peak > saved_peak ? peak : saved_peak;
	live_lock_drop();
	return peak;
}

/* ---- the hooks ------------------------------------------------------- */

/* MEMCHECK_SCRUB.  The scan reads a block's aligned words and takes
 * those that hold an address; valgrind skips the bytes a program never
 * wrote.  Clearing only the words that hold an address leaves everything
 * else as the allocator handed it out: a zero word is read, never
 * written, so a page of the block nobody touched stays the kernel's zero
 * page and the program's resident memory is what it was.
 *
 * On every new block, so it counts: 64 bytes took 87
 * instructions a malloc_bench step under glibc (whose free chunks keep
 * their links there: the inner loop runs) and 61 under jemalloc, of 860
 * and 769 (callgrind slope, with a build that scrubs under valgrind too;
 * the library does not, so callgrind's figures of the step had never
 * shown it).  Where the CPU has AVX2, eight words are tested with two
 * compares and one vptest, each one that holds an address cleared by its
 * bit (scrub_run); the scalar loop serves a CPU without it.  Session 26:
 * the two halves' masks joined by one vector or and one test (no
 * vmovmskpd, shift and or for every eight words) and the last step the
 * last eight words overlapping the one before (no masked loads):
 * callgrind slope, a malloc_bench step, glibc / jemalloc / mimalloc /
 * tcmalloc 575.9 / 503.1 / 464.0 / 480.7 -> 557.7 / 480.2 / 443.3 /
 * 462.0 (the scrub ~105 instructions a step under glibc -> ~87).  Not
 * kept: testing the or of eight words against ~4095 first (no word
 * holds an address when none is 4096 or more): 577.9 under glibc (the
 * loop's stale words are not small enough often enough); prefetching the
 * block's lines as the allocator answers: no faster (65.2 against 62.5
 * ns a step, 9 turns); a half's address words cleared by one 32-byte
 * store of the half with those lanes zeroed, where it lies in one page
 * (no loop over the mask's bits): callgrind +0.7 to +4 instructions a
 * step, CPU by turns under glibc 3.6 ns faster in one set of 15 and 5.5
 * ns slower in the next (load 8): nothing that load does not move.
 *
 * How far: the default, 4096, cleans a block of up to a page whole and
 * a larger one's first page, as valgrind, which follows no word the
 * program did not write in the block's present life.  64 (the default
 * until session 25) covered the allocators' links but left old pointers
 * deeper in reused blocks, which split lost blocks between definite and
 * indirect otherwise than valgrind (definite blocks, glibc / mimalloc /
 * jemalloc / tcmalloc: parson's suite 57/64/58/59 at 64, 64/64/65/65 at
 * 256 and up, valgrind 65; expat's with a leak added 8/7/12/12 at 64,
 * 8/9/12/12 at 256, 11/12/12/12 at 1024, 12 under all four at 4096,
 * valgrind 12).  Cost, callgrind slope with a build that scrubs under
 * valgrind, instructions a malloc_bench step (blocks of 16 to 512
 * bytes) under glibc: 64 -> 4096 +51 (523.6 -> 574.5; 604.7 at 4096
 * before scrub_block), a tree_bench block +0 (its nodes are under 64
 * bytes).  Pages: a block of up to a page spans at most two.  Reading
 * one nobody wrote maps the kernel's zero page on most kernels, but not
 * on every one: on this project's 6.18 VMs a read makes the page
 * resident (100 MiB of a fresh mapping read a byte a page: RSS +101
 * MiB).  Blocks lie side by side and the allocator writes beside them,
 * so in use the pages were resident anyway (20,000 blocks of 2000-4000
 * bytes, their first byte written, under the four allocators: the same
 * RSS growth at 0 and 4096, within 70 kB); a lone block's second page
 * is the exception.  A block larger than N is cleaned only to the end
 * of the page it starts in: past it lie pages the program may never
 * write, and reading one costs a page fault (the kernel's zero page
 * mapped, then copied at the program's first write): glibc's mmap'd
 * blocks, 2,000 rounds of malloc(1 MiB), its first byte written, and
 * free, MALLOC_MMAP_THRESHOLD_=131072, took 2,142 minor faults at 64,
 * 4,144 at 4096 read to its end, 2,145 with this rule
 * (tests/prog/plain_scrub_pages). */
#define MC_IS_ADDR(w) ((w) - 4096 < ((uintptr_t)1 << 48) - 4096)
/* The smallest page size of the systems memcheck runs on (x86-64's,
 * aarch64's least): a larger one only makes the reach shorter. */
#define MC_SCRUB_PAGE ((uintptr_t)4096)
static bool scrub_wide;
/* The scrub runs last in an allocation, and nothing after it need write
 * the scratch registers it left: one that kept a pointer into the block
 * (w + 4, the tail's bound) was a root of the exit scan in a thread that
 * then blocked in pause(), and made its lost block "possibly lost"
 * (tests/prog/corpus/thread_stack).  So the registers it used are zeroed
 * as it returns (gcc 11, clang 15). */
#if defined(__has_attribute)
#if __has_attribute(zero_call_used_regs)
#define MC_NO_STALE_REGS __attribute__((zero_call_used_regs("used-gpr")))
#endif
#endif
#ifndef MC_NO_STALE_REGS
#define MC_NO_STALE_REGS
#endif /* AVX2, and the system saves its registers */


/* How many of a block's first bytes the scrub reads: all of a block of
 * up to cap bytes, else cap but not past the end of the page p is in. */
static inline __attribute__((always_inline)) size_t scrub_reach(const void *p, size_t n, size_t cap)
{
	if (likely(n <= cap))
		return n;
	size_t rest = MC_SCRUB_PAGE - ((uintptr_t)p & (MC_SCRUB_PAGE - 1));
	return rest < cap ? rest : cap;
}

/* The scalar test, from w to end. */
static inline __attribute__((always_inline)) void scrub_narrow(uintptr_t *w, uintptr_t *end)
{
	/* Four words tested at a time without a branch: most hold no address. */
	for (; w + 4 <= end; w += 4)
		if (unlikely(MC_IS_ADDR(w[0]) | MC_IS_ADDR(w[1]) | MC_IS_ADDR(w[2]) |
			     MC_IS_ADDR(w[3])))
			for (int i = 0; i < 4; i++)
				if (MC_IS_ADDR(w[i]))
					w[i] = 0;
	for (; w < end; w++)
		if (MC_IS_ADDR(*w))
			*w = 0;
}

#if defined(__x86_64__)
/* MC_IS_ADDR on four words at once: w - 4096 < 2^48 - 4096 unsigned is,
 * with 2^63 added to both sides, a signed compare (AVX2 has no
 * unsigned one): w + (2^63 - 4096) < 2^63 + 2^48 - 4096.  A lane all
 * ones where the word holds an address.  The vector registers hold the
 * words biased, never an address. */
/* The two constants, made once a run: one vpbroadcastq from memory
 * each (gcc 12 made each from an immediate in three instructions, 4 of
 * a malloc_bench step's); the asm also keeps gcc from making them again
 * for the last step (five instructions a block). */
struct scrub_k {
	__m256i bias, limit;
};

static const uint64_t scrub_k_words[2] = { UINT64_C(0x7fffffffffffffff) - 4095,
					     UINT64_C(0x8000fffffffff000) };

__attribute__((target("avx2"), always_inline)) static inline struct scrub_k scrub_consts(void)
{
	struct scrub_k k;
	__asm__("vpbroadcastq %2, %0\n\tvpbroadcastq %3, %1"
		: "=x"(k.bias), "=x"(k.limit)
		: "m"(scrub_k_words[0]), "m"(scrub_k_words[1]));
	return k;
}

__attribute__((target("avx2"), always_inline)) static inline __m256i scrub_addr4(__m256i v,
										 struct scrub_k k)
{
	return _mm256_cmpgt_epi64(k.limit, _mm256_add_epi64(v, k.bias));
}

/* The words of w[0..3] whose lanes of a are set, cleared: one masked
 * store (the lanes' bits one by one took 7 instructions a word: under
 * glibc a reused block's first two words are its free-list links).
 * Never with no lane set, so a page nobody wrote (the kernel's zero
 * page, read by the test) is never the target of a store. */
__attribute__((target("avx2"), always_inline)) static inline void scrub_clear4(uintptr_t *w,
									       __m256i a)
{
	if (!_mm256_testz_si256(a, a))
		_mm256_maskstore_epi64((long long *)w, a, _mm256_setzero_si256());
}

/* w[0..3] and v[0..3] (v may overlap w: a word tested twice is cleared
 * twice, or found 0 the second time) tested together: one test and one
 * branch for the eight words, the lanes looked at only where one holds
 * an address.  Before: each half's lanes to a bit mask and the two
 * masks joined (two vmovmskpd, a shift, an or) for every eight words. */
__attribute__((target("avx2"), always_inline)) static inline void scrub_pair(uintptr_t *w,
									     uintptr_t *v,
									     struct scrub_k k)
{
	__m256i a = scrub_addr4(_mm256_loadu_si256((const __m256i *)w), k);
	__m256i b = scrub_addr4(_mm256_loadu_si256((const __m256i *)v), k);
	__m256i any = _mm256_or_si256(a, b);
	if (likely(_mm256_testz_si256(any, any)))
		return;
	scrub_clear4(w, a);
	scrub_clear4(v, b);
}

/* words aligned words from w: steps of eight, the last step the last
 * eight words (overlapping the one before it: no masked loads, whose
 * masks took ~15 instructions to make); fewer than eight as two
 * overlapping fours, fewer than four one by one.  No byte outside the
 * words is read. */
__attribute__((target("avx2"), always_inline)) static inline void scrub_run(uintptr_t *w,
									    size_t words)
{
	struct scrub_k k = scrub_consts();
	if (likely(words >= 8)) {
		uintptr_t *last = w + words - 8;
		for (; w < last; w += 8)
			scrub_pair(w, w + 4, k);
		scrub_pair(last, last + 4, k);
	} else if (words >= 4)
		scrub_pair(w, w + words - 4, k);
	else
		for (uintptr_t *end = w + words; w < end; w++)
			if (MC_IS_ADDR(*w))
				*w = 0;
}

/* words aligned words from w, 8 <= words <= 64 (a block of 64 to 519
 * bytes, the scrub's common case): the first eight words as scrub_run's
 * first step, then seven steps of eight at min(8i, words - 8) whatever
 * the size (a step past the block's end reads the last eight words
 * again, from the first-level cache), their masks joined and tested
 * once, so no branch depends on the size: scrub_run's loop exit, whose
 * count the size sets, mispredicted about once a block.  The first
 * step's words (the allocators' free-list links) are tested apart, as
 * their branch goes one way under each allocator; every load comes
 * before any store; the later steps, where a word holds an address,
 * again one by one (they may overlap the first step's).  Session 36
 * (scrub36): a malloc_bench step's mispredicted branches 4.22 -> 1.70
 * (callgrind --branch-sim, glibc), its instructions 622.0 -> 646.5
 * under glibc and 553.7 -> 577.1 under jemalloc (with a build that
 * scrubs under valgrind), a tree_bench block's 1147.6 -> 1151.5; CPU
 * time a whole malloc_bench run, paired by rounds (7 rounds of 8 M
 * steps, load 44), 0.908 / 0.959 / 0.941 / 0.937 of main's (glibc /
 * mimalloc / jemalloc / tcmalloc); two earlier sets with the steps'
 * starts made at once (rbx saved: +6 instructions a step) 0.915 /
 * 1.064 / 0.891 / 0.884 and 0.947 / 0.784 / 0.852 / 0.902.  Measured
 * and not kept: every step's eight bits kept (vmovmskps of the halves
 * blended) and the words cleared one by one from them: +51
 * instructions, 1.05 / 0.98 / 0.89 / 0.99 of main's time. */
__attribute__((target("avx2"), always_inline)) static inline void scrub_fixed(uintptr_t *w,
									      size_t words)
{
	struct scrub_k k = scrub_consts();
	uintptr_t *last = w + words - 8;
	__m256i a = scrub_addr4(_mm256_loadu_si256((const __m256i *)w), k);
	__m256i b = scrub_addr4(_mm256_loadu_si256((const __m256i *)(w + 4)), k);
	__m256i rest = _mm256_setzero_si256();
	/* q, each step's start, from the one before, in one register: the
	 * empty asm takes the step's result before the next q is made
	 * (seven made at once took rbx, its save and a frame: ~10
	 * instructions a tree_bench block, which never comes here) */
	uintptr_t *q = w;
#pragma GCC unroll 7
	for (unsigned i = 1; i < 8; i++) {
		q = q + 8 < last ? q + 8 : last;
		rest = _mm256_or_si256(rest, scrub_addr4(_mm256_loadu_si256((const __m256i *)q), k));
		rest = _mm256_or_si256(rest,
				       scrub_addr4(_mm256_loadu_si256((const __m256i *)(q + 4)), k));
		__asm__("" : "+r"(q), "+x"(rest));
	}
	__m256i first = _mm256_or_si256(a, b);
	if (!_mm256_testz_si256(first, first)) {
		scrub_clear4(w, a);
		scrub_clear4(w + 4, b);
	}
	if (likely(_mm256_testz_si256(rest, rest)))
		return;
	for (q = w + 8; q < last; q += 8)
		scrub_pair(q, q + 4, k);
	scrub_pair(last, last + 4, k);
}

__attribute__((target("avx2"), noinline)) MC_NO_STALE_REGS static void scrub_avx2(uintptr_t *w,
											     uintptr_t *end)
{
	if (w < end)
		scrub_run(w, (size_t)(end - w));
}
/* Every scratch register zeroed as it returns, not only those it used:
 * it is the allocation's last call, and the scratch registers the
 * tracking path left (which scrub_avx2, using them all, had zeroed) kept
 * a block reachable that valgrind finds possibly lost (test_corpus,
 * dlopen_tls). */
#if defined(__has_attribute)
#if __has_attribute(zero_call_used_regs)
#define MC_NO_STALE_REGS_ALL __attribute__((zero_call_used_regs("all-gpr")))
#endif
#endif
#ifndef MC_NO_STALE_REGS_ALL
#define MC_NO_STALE_REGS_ALL
#endif

/* The tracking path's scrub, from mc_track_malloc's common path by a
 * tail call, with AVX2 (scrub_wide): a new block's whole words up to
 * MEMCHECK_SCRUB (scrub_cap, a multiple of 8), by scrub_run, without
 * the calls that lead there through mc_scrub_words (scrub_new: ~70
 * instructions a malloc_bench step under glibc, with a build that
 * scrubs under valgrind).  p is handed back; the scratch registers are
 * zeroed as in scrub_avx2. */
static size_t scrub_cap;
__attribute__((target("avx2"), noinline)) MC_NO_STALE_REGS_ALL static void *scrub_block(void *p,
											  size_t n)
{
	size_t words = scrub_reach(p, n, scrub_cap) / 8;
	if (words - 8 <= 64 - 8)
		scrub_fixed(p, words);
	else
		scrub_run(p, words);
	return p;
}
#endif

MC_NO_STALE_REGS void mc_scrub_words(void *p, size_t from, size_t n)
{
	size_t to = scrub_reach(p, n, (size_t)mc_opt.scrub) & ~(size_t)7;
	uintptr_t *w = (uintptr_t *)((char *)p + ((from + 7) & ~(size_t)7));
	uintptr_t *end = (uintptr_t *)((char *)p + to);
#if defined(__x86_64__)
	if (likely(scrub_wide)) {
		scrub_avx2(w, end);
		return;
	}
#endif
	scrub_narrow(w, end);
}

/* 0, or once the program has asked malloc_usable_size, a size past every
 * scrub (mc_scrub_grown). */
size_t mc_usable_asked;

/* f: the block's earlier free (a double free); inside: the live block p
 * points into; neither: a pointer memcheck never saw. */
/* A pointer in no block memcheck knows: under valgrind's text, where it
 * lies on the thread's stack said as valgrind says it (stacks.c), the
 * walk made only here. */
static __attribute__((noinline, cold)) void report_unknown(const char *what, void *p,
							    uint32_t here, void *fp)
{
	struct mc_stack_place on;
	bool vg = mc_opt.valgrind_text != MC_VGTEXT_NONE;
	if (vg)
		mc_stack_place(fp, (uintptr_t)p, &on);
	mc_report_heap_error(what, (uintptr_t)p, 0, 0, 0, here, 0, vg ? &on : NULL);
}

static void report_error(const char *what, void *p, const struct freed *f,
			 const struct mc_block *inside, void *fp)
{
	static _Atomic int shown;
	/* the rest are only counted; under valgrind's text each goes on
	 * to its rules (vgtext.c: its contexts, its cutoff) */
	if (atomic_fetch_add(&shown, 1) >= 20 && !mc_opt.valgrind_text)
		return;
	int saved = errno;
	uint32_t here = mc_stack_capture(fp);
	if (f)
		mc_report_heap_error(what, (uintptr_t)p, f->size, f->alloc_stack,
				     f->free_stack ? f->free_stack : mc_stack_intern(&f->free_site, 1),
				     here, 0, NULL);
	else if (inside)
		mc_report_heap_error(what, (uintptr_t)p, inside->size, inside->stack, 0, here,
				     inside->ptr, NULL);
	else
		report_unknown(what, p, here, fp);
	errno = saved;
}

/* A new block with its allocation stack, while tracking. */
static inline __attribute__((always_inline)) void record_tracked(struct mc_slot *s, void *p,
								 size_t size, uint32_t stack)
{
	struct mc_block old;
	/* Epoch 0: older than every region, as memcheck_ignore() makes it. */
	uint32_t epoch = likely(!my_disabled) ? MC_EPOCH_NOW : 0;
	if (mc_blocks_insert_hot((uintptr_t)p, size, stack, epoch, &old) ==
	    MC_REPLACED_LIVE) {
		/* The allocator handed out an address memcheck still had as
		 * live: the program freed it through a call memcheck does not
		 * wrap (mi_free, sdallocx, ...).  Count that free now. */
		tally_unseen_free(s, old.size);
	}
	tally(s, &s->t.allocs, &s->t.bytes_allocated, size, true);
}

/* ---- the DTV's entry for memcheck's own TLS ------------------------- */

/* libmemcheck has thread-local storage (mc_self, reached on the hot path
 * by one %fs-relative load), so the dynamic linker gives it a TLS module
 * id, and the DTV it allocates for each new thread (allocate_dtv, in
 * _dl_allocate_tls, from pthread_create: calloc(highest id + 14 + 2,
 * sizeof (dtv_t))) has one entry more than bare: 16 bytes a thread in
 * bytes_allocated, the live and peak figures and the DTV's leak record
 * (a program of one thread and no TLS of its own: valgrind's "total
 * heap usage" 272 bytes, memcheck's 288).  That entry is memcheck's.
 * While memcheck's pthread_create runs the C library's (threadstart.c),
 * the thread's count-only and tracking fast paths are sent to the slow
 * ones (mc_self.fast and own_slot NULL, where the guard or a thread
 * without a slot of its own sends them anyway: nothing added to the
 * hot paths), and there a block that the dynamic linker's own code
 * asked for is counted one entry smaller: its record, so that its free,
 * its leak kind and the scan agree (the scan then leaves out the last
 * entry, which bare has not: it is memcheck's).  The caller is told by
 * its return address, in ld.so's code (AT_BASE's object); in the window
 * that is allocate_dtv's calloc, or _dl_resize_dtv's malloc where a
 * cached stack's DTV is too short, both sized from the highest id.
 * The scan still reads that last entry (tail_note, below): it is
 * memcheck's in the figures only, and the dynamic linker puts there the
 * TLS block of the module it numbers last, the 14th dlopened after the
 * thread started (tests/prog/plain_dtv_last: that block definitely lost,
 * where valgrind and the entries before it say possibly lost with the
 * DTV). */

/* fp: the allocating call's frame (count-only), else NULL and stack its
 * stack (tracking): its first frame is the caller's return address.
 * Cold, out of line: the hot functions that call it keep a test and a
 * jump (group 1t's room, text-order.ld). */
static __attribute__((noinline, cold)) size_t dtv_counted(size_t size, const void *fp,
							 uint32_t stack)
{
	const uintptr_t *f = NULL;
	uintptr_t ret = fp ? ((const uintptr_t *)fp)[1] : mc_stack_get(stack, &f) > 0 ? f[0] : 0;
	struct dl_find_object fo;
	if (size < 2 * MC_DTV_ENTRY || size % MC_DTV_ENTRY != 0 || !ret ||
	    mc_find_object((void *)ret, &fo) != 0 || !fo.dlfo_link_map ||
	    fo.dlfo_link_map->l_addr != getauxval(AT_BASE))
		return size;
	return size - MC_DTV_ENTRY;
}

/* ---- blocks recorded shorter than they are -------------------------- */

/* A block whose figures leave out its last bytes (a DTV's entry for
 * memcheck's module, above) is read whole by the scan all the same:
 * those bytes are not the program's to count, but what they hold is
 * its.  Each such block is noted by its pointer, recorded size and
 * stack with the bytes left out; the scan reads them where the live
 * block at the pointer still has that size and stack
 * (mc_account_tails).  Nothing takes a note back when its block is
 * freed (the dynamic linker frees a DTV through free, whose paths stay
 * as they are): a note whose block is gone no longer matches it, and
 * is dropped when the list is full.  A block made later at that
 * address of that size and stack that was not recorded short (the
 * same call, outside memcheck's pthread_create) would be read past its
 * end by the bytes noted, inside the allocator's chunk: no block of
 * the C library's is made so.  Tracking only (count-only has no scan);
 * under slot_lock, which the scan holds while it reads them. */
static struct mc_tail *tails;
size_t mc_account_ntails; /* how many: the scan's one test */
#define ntails mc_account_ntails
static size_t tails_cap;

/* Keep the notes whose blocks are still live as noted. */
static void tails_prune(void)
{
	size_t k = 0;
	for (size_t i = 0; i < ntails; i++) {
		struct mc_block b;
		if (mc_blocks_find(tails[i].ptr, &b) && b.size == tails[i].size &&
		    b.stack == tails[i].stack)
			tails[k++] = tails[i];
	}
	ntails = k;
}

static __attribute__((noinline, cold)) void tail_note(uintptr_t p, uint64_t size,
						     uint32_t stack, uint32_t extra)
{
	pthread_mutex_lock(&slot_lock);
	size_t i = 0;
	while (i < ntails && tails[i].ptr != p)
		i++;
	if (i == ntails && ntails == tails_cap)
		tails_prune();
	if (i == ntails && ntails * 2 >= tails_cap) {
		size_t cap = tails_cap ? 2 * tails_cap : 4096 / sizeof *tails;
		struct mc_tail *t = mc_map(cap * sizeof *t);
		if (t) {
			if (ntails)
				memcpy(t, tails, ntails * sizeof *t);
			if (tails)
				mc_unmap(tails, tails_cap * sizeof *t);
			tails = t;
			tails_cap = cap;
		}
	}
	if (i < tails_cap) {
		tails[i] = (struct mc_tail){ p, size, stack, extra };
		if (i == ntails)
			ntails++;
	}
	pthread_mutex_unlock(&slot_lock);
}

size_t mc_account_tails(const struct mc_tail **out)
{
	*out = tails;
	return ntails;
}

/* ---- a DTV outside memcheck's pthread_create ------------------------- */

/* The threads the C library starts itself (timer_create's and
 * mq_notify's SIGEV_THREAD, aio's and getaddrinfo_a's helpers) are made
 * by its own pthread_create, inside, where memcheck's is not called: no
 * window.  Their DTVs reach memcheck as the dynamic linker's
 * calloc(length + 2, sizeof (dtv_t)) from allocate_dtv, the length the
 * highest module id + 14: the calling thread's own DTV's, or more where
 * a library with TLS was loaded since that DTV was made (internal.h's
 * mc_dtv_entries, which interpose.c's calloc asks, with the caller's
 * return address in the dynamic linker's mapping; a SIGEV_THREAD
 * timer's helper thread after such a dlopen: its DTV counted whole
 * before, 848 bytes where valgrind counts 832).  Such a call is counted
 * as in the window (dtv_counted: its caller in ld.so's code, else
 * counted whole). */
/* A calloc that mc_dtv_entries sent here: the caller is asked later, as
 * a DTV in the window is (dtv_counted). */
bool mc_account_dtv_outside(size_t nmemb)
{
	return !mc_self.dtv_window && nmemb >= mc_dtv_own();
}

void mc_account_dtv_begin(void)
{
	mc_self.dtv_window++;
	mc_self.own_frames++;
	mc_self.fast = NULL;
	mc_self.own_slot = NULL;
}

void mc_account_dtv_end(void)
{
	mc_self.own_frames--;
	mc_self.dtv_window--;
	struct mc_slot *s = my_slot;
	mc_self.own_slot = s != &shared_slot ? s : NULL;
	mc_set_totals(mc_self.totals);
}

/* ---- the main thread's DTV ----------------------------------------- */

/* The main thread's first DTV is made at start-up by the dynamic
 * linker's own minimal allocator, which cannot free: at its first growth
 * (_dl_resize_dtv, once a library with TLS dlopened gets a module id past
 * its last entry and the thread uses TLS) the dynamic linker mallocs the
 * new one, where every other DTV is grown by realloc.  That malloc
 * reaches memcheck with nothing to tell it by but its caller: its length
 * counts libmemcheck's own TLS module, 16 bytes more than bare
 * (plain_dtv_last main: 32,370 bytes against valgrind's 32,354 under
 * glibc, 16 more under the four allocators, both modes), and a test on
 * every malloc's hot path would pay for a call made once.  So, at
 * start-up (its constructor, once the process is measured), memcheck
 * puts a copy of the main thread's DTV in its own memory and points the
 * thread at it: the dynamic linker then grows it with realloc (the
 * thread's DTV is no longer the one it made, the only one it mallocs),
 * which realloc's one DTV test already sends off its fast path
 * (interpose.c's realloc_dtv), where the copy is told by its address:
 * the allocator is asked for a new block of the requested size with
 * malloc, as bare (realloc's old pointer is memcheck's), the entries
 * copied, and the block counted as the DTVs of the other threads are
 * (one entry smaller; dtv_counted, its caller in ld.so).  Only where
 * that realloc is memcheck's: the first definition of realloc in
 * libmemcheck's code (not a program or an object before it with a
 * realloc of its own, which would be handed memcheck's copy).  The
 * contents are the same entries at another address: the dynamic
 * linker, the C library and the scan reach the DTV through the
 * thread's descriptor only (roots.c reads it whole where it is no
 * block, as it read the dynamic linker's).  Premises: the constructor
 * runs in the main thread (but in a libmemcheck loaded by dlopen, whose
 * malloc then is not the first: mc_is_active 0), which has a DTV
 * (libmemcheck has TLS of its own) still the one the dynamic linker
 * made (growing it takes 15 libraries with TLS dlopened and used
 * before, by another object's constructor). */
const void *mc_account_main_dtv; /* memcheck's copy (its counter entry), NULL: none */
static size_t main_dtv_size;      /* its bytes */
/* The copy's room: 48 entries with the two heads, a DTV of up to 32
 * modules with TLS at start-up (and the dynamic linker's 14 spare);
 * with more, the main thread keeps the dynamic linker's.  Small, with
 * the other small variables that start-up populates (bss-layout.sh). */
static uintptr_t main_dtv_store[48 * MC_DTV_ENTRY / sizeof(uintptr_t)];

void mc_account_dtv_main_take(void)
{
#if defined(__x86_64__)
	const uintptr_t *dtv;
	__asm__ volatile("mov %%fs:8, %0" : "=r"(dtv));
	size_t size = (dtv[-2] + 2) * MC_DTV_ENTRY;
	if (!mc_is_active || size > sizeof main_dtv_store ||
	    (uintptr_t)mc_sym_first("realloc", NULL) - mc_text_lo >= mc_text_len)
		return;
	memcpy(main_dtv_store, dtv - 2, size);
	mc_account_main_dtv = main_dtv_store;
	main_dtv_size = size;
	atomic_signal_fence(memory_order_seq_cst);
	__asm__ volatile("mov %0, %%fs:8" : : "r"(main_dtv_store + 2) : "memory");
#endif
}

/* realloc(old, n) of that copy by the dynamic linker: a block of n bytes
 * from where bare's malloc would take it, the entries copied; counted
 * (count) as the dynamic linker's DTVs are, from the call's frame fp.
 * With the guard held (memcheck's own work used TLS), memcheck's own
 * memory again, which stays the copy. */
__attribute__((noinline, cold)) void *mc_account_dtv_main_grow(void *old, size_t n, void *fp,
								 bool count)
{
	int saved = errno;
	size_t have = main_dtv_size < n ? main_dtv_size : n;
	if (mc_in_hook) {
		void *p = mc_ownheap_alloc(MC_DTV_ENTRY, n, false);
		if (p) {
			memcpy(p, old, have);
			mc_account_main_dtv = p;
			main_dtv_size = n;
			if (old != main_dtv_store)
				mc_ownheap_free(old);
		}
		errno = saved;
		return p;
	}
	mc_guard_enter();
	void *p = MC_REAL(mc_real.malloc(n));
	int err = errno;
	if (p) {
		memcpy(p, old, have);
		mc_account_main_dtv = NULL;
		if (old != main_dtv_store)
			mc_ownheap_free(old);
	}
	if (count) {
		mc_self.dtv_window++;
		if (p)
			mc_account_alloc(p, n, fp);
		else
			mc_account_failed();
		mc_self.dtv_window--;
	}
	mc_guard_leave();
	errno = p ? saved : err;
	return p;
}

/* record_tracked out of line, for the callers off the hot paths (one
 * copy of it, not one each: the library's code stays within the pages
 * it had, see test_rss_self). */
static __attribute__((noinline)) void record_tracked_far(struct mc_slot *s, void *p, size_t size,
							 uint32_t stack)
{
	record_tracked(s, p, size, stack);
}

/* track: mc_opt.track, or true where the caller knows it is on. */
static inline __attribute__((always_inline)) void record_alloc_as(struct mc_slot *s, void *p,
								  size_t size, void *fp, bool track)
{
	if (!track) {
		/* count-only: no sizes on free, so no live figures */
		bump(s, &s->t.allocs, 1);
		bump(s, &s->t.bytes_allocated, size);
		return;
	}
	record_tracked(s, p, size, mc_stack_capture(fp));
}

static inline __attribute__((always_inline)) void record_alloc(struct mc_slot *s, void *p, size_t size, void *fp)
{
	record_alloc_as(s, p, size, fp, mc_opt.track);
}

/* mc_account_alloc in the window: the block counted as dtv_counted says,
 * and, tracked, its bytes left out noted. */
static __attribute__((noinline, cold)) void alloc_in_window(void *p, size_t size, void *fp)
{
	size_t n = dtv_counted(size, fp, 0);
	if (!mc_opt.track || n == size) {
		record_alloc_as(slot(), p, n, fp, mc_opt.track);
		return;
	}
	uint32_t stack = mc_stack_capture(fp);
	record_tracked_far(slot(), p, n, stack);
	tail_note((uintptr_t)p, n, stack, (uint32_t)(size - n));
}

void mc_account_alloc(void *p, size_t size, void *fp)
{
	if (unlikely(mc_self.dtv_window)) {
		alloc_in_window(p, size, fp);
		return;
	}
	record_alloc(slot(), p, size, fp);
}

/* The wrappers come here with the guard down, and only while tracking,
 * where the count-only pointer mc_self.fast stays NULL: the guard is one
 * increment each way. */
static inline void guard_raise(void)
{
	mc_in_hook++;
}

/* The guard's decrement and the test for a signal handler's calls to
 * record (mc_guard_leave's two tests) in one instruction: in_hook and
 * sig_pending are adjacent ints, one 8-byte word (little-endian: the
 * guard its low half), so subtracting 1 from the word leaves it 0
 * exactly when the guard comes down with nothing pending.  The guard
 * is at least 1 here (raised by this path), so nothing borrows from
 * sig_pending.  One instruction, so a signal comes before it (and set
 * sig_pending, which it sees) or after (and finds the guard down). */
_Static_assert(offsetof(struct mc_thread, sig_pending) ==
		       offsetof(struct mc_thread, in_hook) + sizeof(int) &&
	       offsetof(struct mc_thread, in_hook) % 8 == 0 && sizeof(int) == 4,
	       "in_hook and sig_pending make one aligned word");
typedef uint64_t __attribute__((may_alias)) guard_word;
/* True: the guard is down and nothing is pending (the common case). */
static inline __attribute__((always_inline)) bool guard_drop(void)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool clear;
	__asm__ volatile("subq $1, %0" : "+m"(*(guard_word *)&mc_self.in_hook), "=@ccz"(clear));
	return clear;
#else
	if (--mc_in_hook != 0)
		return false;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return !mc_self.sig_pending;
#endif
}

/* Past guard_drop's false: the guard down with calls to record. */
static inline __attribute__((always_inline)) bool guard_pending(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return mc_in_hook == 0 && mc_self.sig_pending;
}

static inline __attribute__((always_inline)) void guard_lower(void)
{
	/* as mc_guard_leave: a signal handler's calls to record */
	if (unlikely(!guard_drop()) && guard_pending())
		mc_guard_drain();
}

/* gcc's SLP vectorizer packed the freed block's pointer and size into a
 * vector register for the ring's two stores (five instructions where
 * two stores do; callgrind, malloc_bench: 562.2 -> 560.4 instructions a
 * step).  clang has no such attribute and does not do this. */
#if defined(__GNUC__) && !defined(__clang__)
#define MC_SCALAR __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define MC_SCALAR
#endif

/* The stack is taken before the allocator's call: the block's address
 * is then not held across a call of memcheck's, whose frame would keep
 * a copy of it, below the program's stack, where a frame the program
 * reserves later without writing it (one that calls exit) makes it a
 * root of the scan. */

/* The scrub last, with the guard down (its words are the block's, which
 * is counted already), as a tail call that hands p back. */
static __attribute__((noinline)) void *scrub_new(void *p, size_t n)
{
	mc_scrub_words(p, 0, n);
	return p;
}

/* zeroed: calloc's block, which the allocator cleared: nothing to scrub. */
static inline __attribute__((always_inline)) void *malloc_done(void *p, size_t n, bool zeroed)
{
	guard_lower();
	if (!zeroed && unlikely(0 < (size_t)mc_opt.scrub)) {
#if defined(__x86_64__)
		if (likely(scrub_wide))
			return scrub_block(p, n);
#endif
		return scrub_new(p, n);
	}
	return p;
}

/* Everything but mc_track_malloc's common case, from the allocator's
 * answer p on, with the guard up. */
static __attribute__((noinline)) void *track_malloc_rest(void *p, size_t n, uint32_t stack,
							bool zeroed)
{
	struct mc_slot *s = slot();
	size_t whole = n;
	if (unlikely(mc_self.dtv_window))
		n = dtv_counted(n, NULL, stack);
	if (likely(p != NULL)) {
		record_tracked_far(s, p, n, stack); /* track_ready: tracking */
		if (unlikely(n != whole))
			tail_note((uintptr_t)p, n, stack, (uint32_t)(whole - n));
	} else {
		count_failed(s);
		guard_lower();
		return NULL;
	}
	return malloc_done(p, n, zeroed);
}

/* The common case's live change that its room could not take. */
static __attribute__((noinline)) void *track_malloc_live_slow(struct mc_slot *s, void *p, size_t n,
							      int64_t old, bool zeroed)
{
	live_slow(s, (int64_t)n, old);
	return malloc_done(p, n, zeroed);
}

/* The common case's block whose home slot was taken
 * (mc_blocks_insert_owned's PLACE, the shard entered): placed further
 * on and counted, as record_tracked, without the lookup again that the
 * way through track_malloc_rest made.  The block's pointer, size and
 * stack are in its entry's words. */
static inline __attribute__((always_inline)) void place_tracked(struct mc_slot *s,
								 const struct mc_owned_place *at,
								 size_t n)
{
	struct mc_block gone;
	if (mc_blocks_place_leave(at->s, at->i, at->w0, at->w1, &gone, at->m) ==
	    MC_REPLACED_LIVE)
		tally_unseen_free(s, gone.size); /* as record_tracked */
	tally(s, &s->t.allocs, &s->t.bytes_allocated, n, true);
}

static __attribute__((noinline)) void *track_malloc_place(struct shard *sh, uint32_t i, int m,
							 uint64_t w0, uint64_t w1, bool zeroed)
{
	const struct mc_owned_place at = { sh, i, m, w0, w1 };
	size_t n = (size_t)(w1 >> STACK_BITS);
	place_tracked(mc_self.own_slot, &at, n);
	return malloc_done((void *)(uintptr_t)(w0 & PTR_MASK), n, zeroed);
}

/* The common case (the thread's own slot, the block's home slot free,
 * no sample due, room for the change or the solo thread's change
 * below the peak) makes no call after the allocator's but the scrub's,
 * a tail call: every other case leaves by a tail call to a function
 * that finishes it, as mc_track_free. */
static inline __attribute__((always_inline)) void *track_new(void *fp, size_t a, size_t c,
							     bool zeroed, bool sites)
{
	size_t n = zeroed ? a * c : a;
	guard_raise();
	uint32_t stack = mc_stack_capture(fp);
	void *p = MC_REAL(zeroed ? mc_real.calloc(a, c) : mc_real.malloc(n));
	/* own_slot: my_slot where it is not the shared slot, else NULL; a
	 * NULL p fails mc_blocks_insert_owned's first test (fits_hot) */
	struct mc_slot *s = mc_self.own_slot;
	/* Epoch 0: older than every region, as memcheck_ignore() makes it. */
	uint32_t epoch = likely(!my_disabled) ? MC_EPOCH_NOW : 0;
	struct mc_owned_place at;
	enum mc_owned r = MC_OWNED_MISS;
	if (unlikely(s == NULL) || unlikely(s->sample_left < (int64_t)n) ||
	    unlikely((r = mc_blocks_insert_owned((uintptr_t)p, n, stack, epoch, &at, sites)) !=
		     MC_OWNED_TAKEN)) {
		if (r == MC_OWNED_PLACE)
			return track_malloc_place(at.s, at.i, at.m, at.w0, at.w1, zeroed);
		return track_malloc_rest(p, n, stack, zeroed);
	}
	/* record_tracked's tally, with its calls made by tail calls */
	mc_add_own(&s->t.allocs, 1);
	mc_add_own(&s->t.bytes_allocated, n);
	s->sample_left -= (int64_t)n;
	int64_t d = (int64_t)n;
	if (s->solo) {
		solo_busy = 1;
		atomic_signal_fence(memory_order_seq_cst);
		if (likely(atomic_load_explicit(&solo, memory_order_relaxed) == (uintptr_t)s)) {
			g_flushed += d;
			if (unlikely(g_flushed > g_peak)) {
				/* solo_peak inline: a heap that grows (a
				 * short process's) has a new peak at every
				 * block, which went out of the common path */
				g_peak = g_flushed;
				if (sites && mc_sites_on)
					mc_snap_bump();
			}
			atomic_signal_fence(memory_order_seq_cst);
			solo_busy = 0;
			return malloc_done(p, n, zeroed);
		}
		atomic_signal_fence(memory_order_seq_cst);
		solo_busy = 0;
		s->solo = false;
	}
	int64_t old = room_change(s, d);
	if (unlikely(old - d < 0))
		return track_malloc_live_slow(s, p, n, old, zeroed);
	return malloc_done(p, n, zeroed);
}

void *mc_track_malloc(size_t n)
{
	return track_new(mc_call_frame(__builtin_frame_address(0)), n, 0, false, false);
}

void *mc_track_malloc_sites(size_t n)
{
	return track_new(mc_call_frame(__builtin_frame_address(0)), n, 0, false, true);
}

/* calloc as malloc (calloc_slow and mc_account_alloc before). */
void *mc_track_calloc(size_t nmemb, size_t size)
{
	return track_new(mc_call_frame(__builtin_frame_address(0)), nmemb, size, true, false);
}

void *mc_track_calloc_sites(size_t nmemb, size_t size)
{
	return track_new(mc_call_frame(__builtin_frame_address(0)), nmemb, size, true, true);
}

void mc_account_failed(void)
{
	struct mc_slot *s = slot();
	count_failed(s);
}

/* Every allocation and failed allocation this thread has counted so far,
 * in any path: cxxnew.c tells by it whether a call it forwarded was
 * counted below it.  A thread without a slot of its own (past 1024
 * threads, or in its exit) shares the counters: another thread's count
 * meanwhile then makes that call look counted already, and it is missed.
 * Call with the guard held. */
uint64_t mc_account_thread_events(void)
{
	struct mc_slot *s = slot();
	return __atomic_load_n(&s->t.allocs, __ATOMIC_RELAXED) +
	       __atomic_load_n(&s->t.failed, __ATOMIC_RELAXED);
}

void mc_account_realloc_call(void)
{
	struct mc_slot *s = slot();
	bump(s, &s->t.reallocs, 1);
}

/* The ring's pages become memcheck's resident memory as its first lap
 * reaches them (footprint.c), counted a page at a time as each is
 * populated, one system call (~3 us here) where its first write was a
 * page fault (15-35 us).  (Counted a 60 KiB chunk at a time, as they
 * were, a process that freed a few blocks had 56 KiB of M that was not
 * resident: every test_rss_self row 52 KiB low by smaps.)  The lap runs
 * from the ring's end down (RING_AT): the first page of first_ring,
 * whose page is its last, was populated and counted with its slot's. */
#define RING_PAGE (4096 / sizeof(struct freed))
#define RING_AT(pos) (~(pos) & (RING - 1))
_Static_assert(RING * sizeof(struct freed) % 4096 == 0, "a ring is whole pages");
static __attribute__((noinline, cold)) void ring_grow(struct freed *ring, uint32_t pos)
{
	int saved = errno;
	bool ready = pos == 0 && ring == first_ring;
	if (!ready) {
		mc_populate(&ring[RING - RING_PAGE - pos], 4096);
		mc_own_grow(4096);
	}
	errno = saved;
}

/* valgrind's text shows a freed block's whole stack where the program
 * frees it again ("Address ... free'd", then the free's frames, as
 * valgrind keeps each free's stack: --keep-stacks=alloc-and-free), which
 * the ring's one return address is not.  There every free takes the
 * ring's slow path, remember_free, whose record takes the stack too,
 * and then stops the common path (free_counted) from writing the next
 * record itself.  Elsewhere the common path is as it was; the test is
 * remember_free's, one a page of records (and a realloc's). */
static __attribute__((noinline, cold)) void free_stack_capture(struct mc_slot *s, struct freed *f)
{
	/* the program's call, past memcheck's frames (MC_CALL_FRAME): the
	 * callers keep no frame pointer of the program's live for it (a
	 * realloc paid 9 instructions more for one, callgrind) */
	f->free_stack = mc_stack_capture(MC_CALL_FRAME());
	if (s != &shared_slot)
		s->ring_stop = (uintptr_t)s->ring_next;
}

/* The records the common free (mc_track_free) may write from pos q on,
 * one after another (down the ring), without a test of its own: up to
 * the next multiple of RING_PAGE, whose record remember_free writes (a
 * page to populate on the first lap; the wrap from record 0 to the
 * ring's top comes at one).  Records pos q..: &ring[RING_AT(q)] and
 * each one below, while the pointer is not ring_stop. */
static inline void ring_ahead(struct mc_slot *s, struct freed *ring, uint32_t q)
{
	uint32_t left = (RING_PAGE - q % RING_PAGE) % RING_PAGE; /* 0: none */
	struct freed *next = &ring[RING_AT(q)];
	s->ring_next = next;
	s->ring_stop = (uintptr_t)next - left * sizeof *next;
}

/* Inline in the free paths: a call of its own was 30 instructions a
 * free of malloc_bench's 523 a step, with its prologue and epilogue. */
static inline __attribute__((always_inline)) void remember_free(struct mc_slot *s,
								const struct mc_block *b,
								void *fp)
{
	struct freed *ring = s->ring;
	if (unlikely(!ring))
		return;
	/* The shared slot's ring: the frees of threads that never
	 * allocated, at once */
	uint32_t pos = unlikely(s == &shared_slot) ? __atomic_fetch_add(&s->ring_pos, 1, __ATOMIC_RELAXED)
						  : s->ring_pos++;
	if (unlikely(pos % RING_PAGE == 0) && pos < RING)
		ring_grow(ring, pos);
	struct freed *f = &ring[RING_AT(pos)];
	f->ptr = b->ptr;
	f->size = b->size;
	f->alloc_stack = b->stack;
	f->free_site = ((uintptr_t *)fp)[1];
	if (likely(s != &shared_slot))
		ring_ahead(s, ring, pos + 1);
	if (unlikely(mc_opt.valgrind_text))
		free_stack_capture(s, f);
}

static bool find_in_ring(const struct mc_slot *s, uintptr_t p, struct freed *out)
{
	if (!s->ring)
		return false;
	uint32_t n = s->ring_pos < RING ? s->ring_pos : RING;
	for (uint32_t k = 1; k <= n; k++) {
		const struct freed *f = &s->ring[RING_AT(s->ring_pos - k)];
		if (f->ptr == p) {
			*out = *f;
			return true;
		}
	}
	return false;
}

/* Was p freed recently, by this thread or another? */
static bool recently_freed(struct mc_slot *self, uintptr_t p, struct freed *out)
{
	if (find_in_ring(self, p, out))
		return true;
	for (int i = 0, hi = slots_hi; slots && i < hi; i++)
		if (&slots[i] != self && find_in_ring(&slots[i], p, out))
			return true;
	return self != &shared_slot && find_in_ring(&shared_slot, p, out);
}

bool mc_account_freed_size(uintptr_t p, uint64_t *size)
{
	struct freed f;
	if (!recently_freed(&shared_slot, p, &f))
		return false;
	*size = f.size;
	return true;
}

/* What unknown_free says, for free and for realloc. */
static const char *const unknown_what[2][3] = {
	{ "double free", "free of a pointer inside a live block",
	  "free of a pointer memcheck never saw allocated" },
	{ "realloc of a freed block", "realloc of a pointer inside a live block",
	  "realloc of a pointer memcheck never saw allocated" },
};

/* A pointer the table does not have: freed already (-1: kept from the
 * allocator), a pointer into a live block (-1 too: the allocator would
 * take it for a block of its own, and jemalloc and tcmalloc then crash
 * later), or never seen (0: passed on, it may come from an allocator
 * function memcheck does not wrap; -1 under valgrind's text, as valgrind
 * keeps every pointer it did not hand out and the program goes on: a
 * stack address or a global freed aborted in glibc's free, a wild one
 * faulted, where valgrind's run goes on to its end). */
static int unknown_free(struct mc_slot *s, void *p, void *fp, bool is_realloc)
{
	const char *const *what = unknown_what[is_realloc];
	struct freed f;
	if (recently_freed(s, (uintptr_t)p, &f)) {
		bump(s, &s->t.double_frees, 1);
		report_error(what[0], p, &f, NULL, fp);
		return -1;
	}
	bump(s, &s->t.invalid_frees, 1);
	struct mc_block b;
	if (mc_blocks_containing((uintptr_t)p, &b)) {
		bump(s, &s->t.interior_frees, 1);
		report_error(what[1], p, NULL, &b, fp);
		return -1;
	}
	report_error(what[2], p, NULL, NULL, fp);
	return mc_opt.valgrind_text != MC_VGTEXT_NONE ? -1 : 0;
}

/* Block b, which a free the program made took out of the table. */
static inline __attribute__((always_inline)) int record_removed(struct mc_slot *s,
								const struct mc_block *b, void *fp)
{
	tally(s, &s->t.frees, &s->t.bytes_freed, b->size, false);
	remember_free(s, b, fp);
	/* *b is not in memory (mc_blocks_remove_hot: its address is never
	 * passed on), where the freed address would be a stale root for the
	 * next block the allocator hands out there. */
	return 1;
}

/* A free the program made: 1 counted, 0 unknown pointer, -1 double free. */
static inline __attribute__((always_inline)) int record_free_as(struct mc_slot *s, void *p, void *fp,
								bool track)
{
	if (!track) {
		bump(s, &s->t.frees, 1);
		return 1;
	}
	struct mc_block b;
	if (unlikely(mc_blocks_remove_hot((uintptr_t)p, &b) != MC_REMOVED))
		return unknown_free(s, p, fp, false);
	return record_removed(s, &b, fp);
}

static inline __attribute__((always_inline)) int record_free(struct mc_slot *s, void *p, void *fp)
{
	return record_free_as(s, p, fp, mc_opt.track);
}

void mc_account_free(void *p, bool *pass_on, void *fp)
{
	*pass_on = record_free(free_slot(), p, fp) >= 0;
}

void mc_account_deferred(int op, void *p, size_t size, uintptr_t site)
{
	/* a handler's frees take no slot, as the program's own (free_slot) */
	struct mc_slot *s = op == MC_DEFER_FREE || op == MC_DEFER_FORGET ? free_slot() : slot();
	bool counting = mc_counting();
	/* A frame whose return address is the handler's call: where stack
	 * capture, remember_free and the heap error report look. */
	uintptr_t frame[2] = { 0, site };
	switch (op) {
	case MC_DEFER_ALLOC:
		if (counting && mc_opt.track)
			record_tracked_far(s, p, size, mc_opt.stack_depth > 0 ?
					   mc_stack_intern(&site, 1) : 0);
		else if (counting)
			record_alloc_as(s, p, size, frame, false);
		return;
	case MC_DEFER_FAILED:
		if (counting)
			count_failed(s);
		return;
	case MC_DEFER_REALLOC:
		if (counting)
			bump(s, &s->t.reallocs, 1);
		return;
	default: {
		bool pass_on = !counting || record_free(s, p, frame) >= 0;
		if (pass_on && op == MC_DEFER_FREE)
			mc_real.free(p);
	}
	}
}

/* The block leaves the table before the allocator sees it: another
 * thread handed the same address then cannot race the bookkeeping.  A
 * block of memcheck's own heap (ownheap.c: one the program frees that
 * memcheck's work made) is never in the table: it is looked for there
 * only when the table has not got p, not on every free (two range
 * tests, 9 instructions of each malloc_bench step, in interpose.c's
 * free before). */
/* Everything but the common free: with the guard up, as the common
 * path leaves it; the allocator's free and the guard's end included.
 * A block of memcheck's own heap is never in the table, nor one of the
 * table's in that heap, so it is looked for first here. */
static __attribute__((noinline)) void track_free_rest(void *p)
{
	bool pass_on = false;
	if (unlikely(mc_ownheap_has(p)))
		mc_ownheap_free(p);
	else
		mc_account_free(p, &pass_on, MC_CALL_FRAME());
	guard_lower();
	if (likely(pass_on))
		mc_real.free(p);
}

/* A block out of the table (the common path's hit) whose counting must
 * make a call: the shared slot, the ring's next page, the timeline's
 * sample. */
static __attribute__((noinline)) MC_SCALAR void track_free_removed(struct mc_slot *s, void *p,
									 uint64_t size, uint32_t stack)
{
	struct mc_block b = { .ptr = (uintptr_t)p, .size = size, .stack = stack };
	record_removed(s, &b, MC_CALL_FRAME());
	*(volatile uintptr_t *)&b.ptr = 0;
	guard_lower();
	mc_real.free(p);
}

/* The common free's live change that its room could not take. */
static __attribute__((noinline)) void track_free_live_slow(struct mc_slot *s, void *p, int64_t d,
							   int64_t old)
{
	live_slow(s, d, old);
	guard_lower();
	mc_real.free(p);
}

/* The guard came down with a signal handler's calls to record. */
static __attribute__((noinline)) void track_free_drain(void *p)
{
	mc_guard_drain();
	mc_real.free(p);
}

/* The common free's count, from the block taken out of the table on:
 * track_free's, and track_free_shift's after the shift. */
static inline __attribute__((always_inline)) void free_counted(struct mc_slot *s, void *p,
								struct mc_block b)
{
	/* the ring's next record, where remember_free left it ready */
	struct freed *f = s->ring_next;
	if (unlikely((uintptr_t)f == s->ring_stop) || unlikely(s->sample_left < (int64_t)b.size)) {
		track_free_removed(s, p, b.size, b.stack);
		return;
	}
	/* record_removed's work, in its order of effects that matter:
	 * the counters, the ring, the countdown, the live bytes */
	mc_add_own(&s->t.frees, 1);
	mc_add_own(&s->t.bytes_freed, b.size);
	s->ring_pos++;
	s->ring_next = f - 1;
	f->ptr = (uintptr_t)p;
	f->size = b.size;
	f->alloc_stack = b.stack;
	f->free_site = ((uintptr_t *)MC_CALL_FRAME())[1];
	s->sample_left -= (int64_t)b.size;
	int64_t d = -(int64_t)b.size;
	if (!(s->solo && solo_change(s, d, false))) {
		int64_t old = room_change(s, d);
		if (unlikely(old - d < 0)) {
			track_free_live_slow(s, p, d, old);
			return;
		}
	}
	if (unlikely(!guard_drop()) && guard_pending()) {
		track_free_drain(p);
		return;
	}
	mc_real.free(p);
}

/* The common free whose cluster must shift back (SHIFT), by a tail
 * call from track_free (MC_CALL_FRAME is then the program's call):
 * shifted, then counted as the common free, so that the common path
 * keeps no registers for delete_at's loop. */
static __attribute__((noinline)) MC_SCALAR void track_free_shift(struct mc_slot *s, void *p,
								 uint64_t size, uint32_t stack,
								 struct shard *sh, uint32_t i)
{
	delete_at(sh, i);
	owner_leave(sh);
	struct mc_block b = { .ptr = (uintptr_t)p, .size = size, .stack = stack };
	free_counted(s, p, b);
}

/* The block leaves the table before the allocator sees it: another
 * thread handed the same address then cannot race the bookkeeping.  A
 * block of memcheck's own heap (ownheap.c: one the program frees that
 * memcheck's work made) is never in the table: it is looked for there
 * only when the table has not got p, not on every free (two range
 * tests, 9 instructions of each malloc_bench step, in interpose.c's
 * free before).
 *
 * The common case (the thread's own slot, the block in its home slot,
 * no page of the ring to ready, no sample due, room for the change)
 * makes no call but its last, the allocator's free, a tail call with
 * the guard down, as the count-only path's (interpose.c): every other
 * case leaves by a tail call to a function that finishes it.  So
 * nothing is kept in callee-saved registers for a call's return: their
 * saves and restores, and the spills around the calls the cold paths
 * made, were ~30 instructions of each free (callgrind, malloc_bench).
 * A hit whose cluster must shift back (SHIFT) goes by a tail call to
 * track_free_shift, which shifts it (delete_at, inline) and counts the
 * free with the common path's own code (free_counted), where it
 * counted it as record_removed does (~91 instructions a shift besides
 * delete_at's ~60).  Shifted inline here, the loop's registers were
 * saved on every free; a call of mc_blocks_shift_leave cost the common
 * path spills.  callgrind, tree_bench 500000 with
 * MEMCHECK_STACK_DEPTH=0 (~12% of its frees shift): 347.8 M -> 343.8 M
 * instructions inline, 338.2 M -> 336.5 M (with the copies without
 * sites below) by the tail call; malloc_bench's step 557 -> 551. */
static inline __attribute__((always_inline)) void track_free(void *p, bool sites)
{
	guard_raise();
	struct mc_slot *s = mc_self.own_slot; /* not the shared slot */
	struct mc_block b;
	struct shard *sh;
	uint32_t at_i;
	enum mc_owned r = MC_OWNED_MISS;
	if (unlikely(s == NULL) ||
	    unlikely((r = mc_blocks_remove_owned((uintptr_t)p, &b, &sh, &at_i, sites)) == MC_OWNED_MISS)) {
		track_free_rest(p);
		return;
	}
	if (unlikely(r == MC_OWNED_SHIFT)) {
		track_free_shift(s, p, b.size, b.stack, sh, at_i);
		return;
	}
	free_counted(s, p, b);
}

/* The common paths are built twice: for a process whose sites are not
 * counted (mc_sites_on 0: the default text report), where the site
 * changes are left out altogether, and for one whose are (a JSON
 * report, a budget), where they are made without testing mc_sites_on
 * again.  interpose.c's wrappers pick one by mc_track_ready's sign
 * (MC_TRACK_PLAIN, MC_TRACK_SITES), in the test they made anyway.  The
 * premise: mc_sites_on is fixed (mc_snapshot_init) before life.c sets
 * mc_track_ready, and never changes after; the copy without sites
 * runs only where they are not counted.  The site code that never ran
 * cost the text report's paths its registers: callgrind, tree_bench
 * 500000 with MEMCHECK_STACK_DEPTH=0, 342.8 M -> 338.2 M instructions
 * (9 a block), with a JSON report 361.6 M -> 361.3 M. */
MC_SCALAR void mc_track_free(void *p)
{
	track_free(p, false);
}

MC_SCALAR void mc_track_free_sites(void *p)
{
	track_free(p, true);
}

int mc_account_realloc_begin(void *old, struct mc_block *prev, void *fp)
{
	struct mc_slot *s = slot();
	if (!mc_opt.track) {
		prev->size = 0;
		return 1;
	}
	if (mc_blocks_remove((uintptr_t)old, prev) == MC_REMOVED)
		return 1;
	return unknown_free(s, old, fp, true);
}

/* After the allocator's realloc: p is the result (NULL: failed, or freed
 * for size 0); st what realloc_begin said of the old block. */
static inline __attribute__((always_inline)) void realloc_done(struct mc_slot *s, void *old, void *p,
								size_t size, int st,
								const struct mc_block *prev,
								void *fp, bool track)
{
	if (!p && size > 0) {
		/* Failed: the old block is untouched, so put it back. */
		count_failed(s);
		if (st == 1 && track) {
			struct mc_block ignored;
			mc_blocks_insert((uintptr_t)old, prev->size, prev->stack, prev->aux, &ignored);
		}
		return;
	}
	if (st == 1) {
		bump(s, &s->t.frees, 1);
		if (track) {
			bump(s, &s->t.bytes_freed, prev->size);
			if (s == &shared_slot)
				live_slow(s, -(int64_t)prev->size, FROZEN);
			else
				live_change(s, -(int64_t)prev->size, false);
			remember_free(s, prev, fp);
		}
	}
	/* in memcheck's pthread_create: a cached stack's DTV, too short for
	 * the libraries with TLS loaded since, grown by the dynamic
	 * linker's realloc (_dl_resize_dtv): one entry smaller, as
	 * allocate_dtv's (tests/prog/plain_dtv_last cached: 16 bytes over
	 * valgrind's before) */
	size_t whole = size;
	if (unlikely(mc_self.dtv_window) && p)
		size = dtv_counted(size, fp, 0);
	if (p && !track) {
		record_alloc_as(s, p, size, fp, false);
	} else if (p) {
		uint32_t stack = mc_stack_capture(fp);
		/* mc_track_malloc's common case inline (the thread's own slot,
		 * the block's home slot free); the rest out of line */
		uint32_t epoch = likely(!my_disabled) ? MC_EPOCH_NOW : 0;
		struct mc_owned_place at;
		enum mc_owned r = MC_OWNED_MISS;
		if (likely(s == mc_self.own_slot) &&
		    likely((r = mc_blocks_insert_owned((uintptr_t)p, size, stack, epoch, &at, mc_sites_on)) ==
			   MC_OWNED_TAKEN))
			tally(s, &s->t.allocs, &s->t.bytes_allocated, size, true);
		else if (r == MC_OWNED_PLACE)
			place_tracked(s, &at, size);
		else
			record_tracked_far(s, p, size, stack);
		if (unlikely(size != whole))
			tail_note((uintptr_t)p, size, stack, (uint32_t)(whole - size));
	}
}

void mc_account_realloc_end(void *old, void *p, size_t size, int st,
			    const struct mc_block *prev, void *fp)
{
	realloc_done(slot(), old, p, size, st, prev, fp, mc_opt.track);
}

/* realloc while tracking, entered as mc_track_malloc is (old is neither
 * NULL nor a bootstrap block): as interpose.c's realloc_common, in one
 * frame.  The old block leaves the table before the allocator sees it. */
static _Atomic uint64_t refused_reallocs, refused_realloc_bytes;

/* Rare: out of line, in group 7 (lib/text-order.ld). */
__attribute__((noinline, cold)) void mc_account_realloc_refused(size_t n)
{
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE)
		return;
	atomic_fetch_add_explicit(&refused_reallocs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&refused_realloc_bytes, n, memory_order_relaxed);
}

uint64_t mc_account_refused_reallocs(uint64_t *bytes)
{
	*bytes = atomic_load_explicit(&refused_realloc_bytes, memory_order_relaxed);
	return atomic_load_explicit(&refused_reallocs, memory_order_relaxed);
}

void *mc_track_realloc(void *old, size_t n)
{
	void *fp = mc_call_frame(__builtin_frame_address(0));
	guard_raise();
	struct mc_slot *s = slot();
	bump(s, &s->t.reallocs, 1);
	struct mc_block prev;
	int st = 1;
	if (unlikely(mc_blocks_remove_hot((uintptr_t)old, &prev) != MC_REMOVED)) {
		int saved = errno;
		st = unknown_free(s, old, fp, true);
		errno = saved;
		if (st < 0) {
			/* reported, and kept from the allocator */
			mc_account_realloc_refused(n);
			guard_lower();
			errno = ENOMEM;
			return NULL;
		}
	}
	void *p = MC_REAL(mc_real.realloc(old, n));
	int err = errno;
	realloc_done(s, old, p, n, st, &prev, fp, true);
	if (st == 1)
		mc_scrub_grown(p, prev.size, n);
	guard_lower();
	errno = err;
	return p;
}

/* ---- fork ------------------------------------------------------------ */

/* life.c's fork handlers take the slot lock, then live_lock, in their
 * order (nothing holds either while calling the allocator). */
void mc_account_prefork(void)
{
	pthread_mutex_lock(&slot_lock);
	live_lock_take();
}

void mc_account_postfork_parent(void)
{
	live_lock_drop();
	pthread_mutex_unlock(&slot_lock);
}

/* The child has one thread and the parent's counters and blocks: the
 * other threads' slots are retired, their counts kept. */
void mc_account_postfork_child(void)
{
	mc_mutex_reset(&slot_lock);
	atomic_store(&live_lock, 0);
	if (slots) {
		for (int i = 0, hi = slots_hi; i < hi; i++) {
			struct mc_slot *s = &slots[i];
			if (!s->in_use || s == my_slot)
				continue;
			flush_slot(s); /* its blocks are the child's too */
			atomic_store_explicit(&s->busy, 0, memory_order_relaxed); /* it was mid-change */
			fold(&retired, &s->t);
			memset(&s->t, 0, sizeof s->t);
			s->in_use = 0;
			s->tid = 0;
		}
		nslots_used = my_slot && my_slot != &shared_slot ? 1 : 0;
		if (nslots_used)
			my_slot->tid = gettid(); /* the child's own id */
	}
	/* Solo stays the forking thread's if it was; otherwise it is over
	 * (the child's one thread is the only one to wait for: nobody). */
	solo_busy = 0;
	if (atomic_load(&solo) != (uintptr_t)my_slot || !my_slot) {
		atomic_store(&solo, SOLO_ENDED);
		atomic_store(&solo_done, 1);
	}
}

void mc_account_init(void)
{
	/* Reserved: a process touches the slots of its threads, most one;
	 * populated, the 128 KiB were 32 page faults in every process
	 * memcheck starts in, measured or left out.  Counted as they are
	 * made ready (slot_pages_ready), not measured with mincore as a
	 * lazy mapping: a count-only process asked it of them at its
	 * region's begin and at exit, and of nothing else. */
	size_t ring = RING * sizeof *first_ring;
	char *both = mc_opt.track ? mc_map_reserve(ring + MAX_SLOTS * sizeof *slots) : NULL;
	if (both) {
		first_ring = (struct freed *)both;
		slots = (struct mc_slot *)(both + ring);
	} else
		slots = mc_map_reserve(MAX_SLOTS * sizeof *slots);
	shared_slot.ring = mc_map_reserve(RING * sizeof *shared_slot.ring);
	if (!slots)
		mc_log("cannot map thread counters; counting with atomics");
	pthread_key_create(&slot_key, slot_release);
	solo_ok = mc_membarrier_register();
	plain_room = solo_ok;
	scrub_wide = mc_opt.scrub && mc_cpu_avx2(); /* none without the scrub */
#if defined(__x86_64__)
	scrub_cap = (size_t)mc_opt.scrub & ~(size_t)7;
#endif
}

/* ---- public API ------------------------------------------------------ */

/* Epoch 0 is older than every region, so no region counts the block as
 * its leftover; its free is still counted as a free. */
MC_API int memcheck_ignore(const void *ptr)
{
	mc_resolve();
	if (!ptr || !mc_opt.track)
		return -1;
	mc_guard_enter();
	bool found = mc_blocks_set_epoch((uintptr_t)ptr, 0);
	mc_guard_leave();
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

MC_API int memcheck_active(void)
{
	mc_resolve();
	return mc_is_active;
}

MC_API uint64_t memcheck_live_bytes(void)
{
	mc_resolve();
	int64_t v = mc_account_live();
	return v > 0 ? (uint64_t)v : 0;
}
