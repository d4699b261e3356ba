/*
 * interpose.c - the malloc family, forwarded to the next allocator.
 *
 * Every function here does three things: pass the call on to the
 * allocator that comes after memcheck in symbol lookup (glibc, mimalloc,
 * jemalloc, tcmalloc, ...), tell account.c what happened, and leave errno
 * and the result exactly as the allocator made them.  Nothing else lives
 * here.  A program left out at start-up (life.c: mc_pass) only has the
 * first: each wrapper makes its measured paths' tests, then that one,
 * and jumps to the allocator.
 *
 * The allocator is found, and start-up run, elsewhere: the forwarding
 * table mc_real by forward.c, start-up by life.c (mc_resolve), which the
 * first call here starts when it comes before the constructor.  Two
 * traps shape the code.  life.c's start-up probe (does a malloc call
 * reach memcheck?) is answered here, never by the allocator.  A call
 * that comes in before the forwarding table is filled, and every call
 * memcheck's own work makes (stack capture, symbolization: thread-local
 * guard held), is served by ownheap.c, uncounted: never by the
 * program's allocator.
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- memcheck's own calls ------------------------------------------- */

/* Calls memcheck's own work makes (the guard held) and dlsym's before
 * the allocator is known are served by ownheap.c, never the program's
 * allocator; any block in its range goes back there, whoever frees it. */
static inline bool is_own(const void *p)
{
	return mc_ownheap_has(p);
}

static bool bootstrapping(void);

/* is_own's superset, one range test (internal.h's span): for the fast
 * paths, whose callers then take the slow path, which asks is_own. */
static inline bool in_own_span(const void *p)
{
	return mc_in_range_relaxed((uintptr_t)p, &mc_ownheap_span_lo, &mc_ownheap_span_len);
}

/* An uncounted call that is memcheck's own (ownheap.c), not the
 * program's while memcheck only forwards (the allocator then), nor the
 * allocator's own through the public names inside a call memcheck
 * forwarded to it (MC_REAL). */
static inline bool own_call(void)
{
	return (mc_in_hook && !mc_self.in_real) || mc_resolving_here || bootstrapping();
}

/* *served: false when the caller must ask the allocator instead. */
static void *own_alloc(size_t align, size_t n, bool zero, bool *served)
{
	void *p = mc_ownheap_alloc(align, n, zero);
	*served = p || errno || bootstrapping(); /* errno 0: no room here */
	if (!p && bootstrapping() && !errno)
		errno = ENOMEM;
	return p;
}

/* Our own malloc, whatever the global symbol resolves to.  (gcc's copy
 * attribute takes malloc's own attributes, which it would otherwise warn
 * about; clang has no such attribute and no such warning.) */
#if defined(__clang__)
#define MC_COPY_ATTRS(f)
#else
#define MC_COPY_ATTRS(f) copy(f),
#endif
__typeof__(malloc) mc_self_malloc
	__attribute__((MC_COPY_ATTRS(malloc) alias("malloc"), visibility("hidden")));

static __attribute__((noinline)) bool uncounted_slow(void)
{
	if (mc_resolving_here)
		return true;
	mc_resolve_calls();
	return atomic_load_explicit(&mc_state, memory_order_acquire) != MC_READY || mc_in_hook;
}

/* Calls that cannot be counted: during start-up, inside memcheck's own
 * work, or before anything is known. */
static inline bool uncounted(void)
{
	if (likely(atomic_load_explicit(&mc_state, memory_order_acquire) == MC_READY))
		return mc_in_hook != 0;
	return uncounted_slow();
}

bool mc_uncounted(void)
{
	return uncounted();
}

/* Count-only mode, inlined: the thread's own counters, no calls.  The
 * pointer is set only in count-only mode, once memcheck is ready and the
 * thread has counters, and only while the guard is down (mc_guard_enter
 * clears it), so it alone says this call may take the short path.  A
 * value, never an out-parameter: a local whose address is taken keeps
 * an unoptimized build from jumping to the slow paths (MC_FRAMELESS). */
static inline struct mc_totals *count_path(void)
{
	return mc_self.fast;
}

static bool bootstrapping(void)
{
	return atomic_load_explicit(&mc_state, memory_order_acquire) < MC_FORWARDING;
}

/* Record an allocation's outcome, with the guard held.  The accounting
 * paths that can touch errno (table growth, first use by a thread, error
 * reports) save and restore it themselves, so the hot path does not pay
 * for it here. */
static inline void *record(void *p, size_t size, void *fp)
{
	if (likely(p != NULL))
		mc_account_alloc(p, size, fp);
	else
		mc_account_failed();
	return p;
}

/* ---- count-only fast paths ------------------------------------------- */

/* In count-only mode malloc, calloc, realloc and free take a path of a
 * few instructions and no stack frame of their own: the counters first,
 * then a tail call to the allocator (free), or a call whose result is
 * only tested (the rare failure takes the count back).  The recursion
 * guard is not raised around the allocator here: counting needs no lock
 * and no table, so a call the allocator itself made through the public
 * malloc would only be counted, as valgrind counts it.  Everything else
 * (tracking, fault injection, memcheck's own calls, start-up) goes to the
 * *_slow functions, which hold a frame of their own: called by a jump,
 * their frame is the one the program's call made, and stack capture
 * starts from it exactly as it would from the wrapper's. */

/* The wrappers with such a path need no frame pointer of their own
 * (MC_FRAMELESS, internal.h): the slow paths keep theirs. */

static inline bool fault_off(void)
{
	return likely(!__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED));
}

static inline bool tracking(void)
{
	return atomic_load_explicit(&mc_track_ready, memory_order_acquire) != 0;
}

static inline int track_mode(void)
{
	return atomic_load_explicit(&mc_track_ready, memory_order_acquire);
}

/* A program left out at start-up (life.c, mc_pass): every call of the
 * program's goes straight to the allocator, as a forwarding-only
 * interposer's would.  Tested where the measured paths' own tests have
 * failed, so that they pay nothing for it; what it must still keep from
 * the allocator: memcheck's own calls (the guard held: ownheap.c) and
 * blocks ownheap.c served before the verdict (is_own). */
static inline bool passing(void)
{
	return atomic_load_explicit(&mc_pass, memory_order_acquire) != 0;
}

/* An allocation counted in advance failed: take it back. */
static __attribute__((noinline)) void *uncount(size_t size)
{
	struct mc_totals *t = mc_my_totals;
	if (t) {
		mc_add_own(&t->allocs, (uint64_t)-1);
		mc_add_own(&t->bytes_allocated, -(uint64_t)size);
		mc_add_own(&t->failed, 1);
	}
	return NULL;
}

/* A count-only allocation counted in advance (its size cannot fail). */
static inline __attribute__((always_inline)) void count_alloc(struct mc_totals *t, size_t n)
{
	mc_add_own(&t->allocs, 1);
	mc_add_own(&t->bytes_allocated, n);
}

/* limits.c: the limits read at every MC_LIMITS_AFTER-th count-only
 * allocation whose result is looked at (malloc's, calloc's, the aligned
 * family's), once they are due. */
static inline __attribute__((always_inline)) void limits_due(struct mc_totals *t)
{
	if (unlikely(__atomic_load_n(&t->allocs, __ATOMIC_RELAXED) % MC_LIMITS_AFTER == 0))
		mc_limits_read(); /* limits.c: read once, from here */
}

/* ---- the malloc family ----------------------------------------------- */

/* Failure injection (fault.c): with it off, one load and one branch
 * before the allocator is called. */
#define INJECT(fp, is_realloc) \
	(unlikely(__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED)) && \
	 mc_fault_check((fp), (is_realloc)))

#define CALL_FRAME() MC_CALL_FRAME()

/* life.c's start-up probe: does a malloc call from this process reach
 * memcheck's malloc?  Symbol lookup says so in most cases, not under
 * valgrind, which redirects every object's malloc to its own.  The probe
 * call is answered here, with a static block the caller never frees
 * (it frees only what another malloc served): the allocator never sees
 * it, failure injection never fails it, it is not counted, and the own
 * heap's first page is not made ready for it (a madvise call in every
 * measured process whose memcheck serves nothing else from there).  The
 * caller holds the guard, which keeps the call off the count-only and
 * tracking paths. */
static MC_TLS bool probe_armed, probe_seen;
static char probe_block[16] __attribute__((aligned(16)));

void mc_probe_arm(void)
{
	probe_armed = true;
	probe_seen = false;
}

bool mc_probe_seen(void)
{
	probe_armed = false;
	return probe_seen;
}

/* Calls that cannot be counted because a signal handler made them while
 * its thread was inside memcheck (signals.c): made at once, recorded
 * later; the site is the handler's call.  They are the program's, so
 * they are tested for before memcheck's own calls (own_call), which the
 * raised guard would otherwise make them look like. */
#define IN_HANDLER() (unlikely(mc_signal_nested()) && !bootstrapping())
#define HANDLER_SITE() (((uintptr_t *)CALL_FRAME())[1])

static __attribute__((noinline)) void *malloc_slow(size_t n)
{
	if (unlikely(probe_armed)) {
		probe_armed = false;
		probe_seen = true;
		return n <= sizeof probe_block ? probe_block : mc_ownheap_alloc(16, n, false);
	}
	if (INJECT(CALL_FRAME(), false))
		return NULL;
	if (unlikely(uncounted())) {
		if (IN_HANDLER()) {
			void *p = mc_real.malloc(n);
			mc_scrub(p, 0, n);
			return mc_signal_alloc(p, n, HANDLER_SITE());
		}
		bool served = false;
		void *p = own_call() ? own_alloc(16, n, false, &served) : NULL;
		return served ? p : mc_real.malloc(n);
	}
	mc_guard_enter();
	void *p = record(MC_REAL(mc_real.malloc(n)), n, CALL_FRAME());
	mc_scrub(p, 0, n);
	mc_guard_leave();
	return p;
}

/* Count-only malloc past its one size test (counted already): fault
 * injection, which keeps mc_sure_below at 0 while it is on, takes the
 * count back and goes the slow way; else the result is looked at.
 * Inline: every count-only malloc comes here until the limits are read
 * (MC_LIMITS_AFTER), as before this test moved here. */
static inline __attribute__((always_inline)) void *count_malloc_checked(struct mc_totals *t, size_t n)
{
	if (unlikely(!fault_off())) {
		mc_add_own(&t->allocs, (uint64_t)-1);
		mc_add_own(&t->bytes_allocated, -(uint64_t)n);
		return malloc_slow(n);
	}
	limits_due(t);
	void *p = mc_real.malloc(n);
	if (unlikely(p == NULL))
		return uncount(n);
	return p;
}

MC_API MC_FRAMELESS void *malloc(size_t n)
{
	struct mc_totals *t = count_path();
	if (t) {
		count_alloc(t, n);
		/* limits.c: a size that cannot fail here is not checked; it
		 * is 0 while fault injection is on (mc_fault_on), so this
		 * one test stands for fault_off() too */
		if (likely(mc_below_relaxed(n, &mc_sure_below)))
			return mc_real.malloc(n);
		return count_malloc_checked(t, n);
	}
	if (fault_off()) {
		if (likely(!mc_in_hook)) {
			int ready = track_mode();
			if (likely(ready > 0)) /* MC_TRACK_PLAIN */
				return mc_track_malloc(n);
			if (ready < 0) /* MC_TRACK_SITES */
				return mc_track_malloc_sites(n);
			if (passing())
				return mc_real.malloc(n);
		}
	}
	return malloc_slow(n);
}

static __attribute__((noinline)) void *calloc_slow(size_t nmemb, size_t size)
{
	if (INJECT(CALL_FRAME(), false))
		return NULL;
	if (unlikely(uncounted())) {
		if (passing() && !mc_in_hook)
			return mc_real.calloc(nmemb, size);
		if (IN_HANDLER())
			return mc_signal_alloc(mc_real.calloc(nmemb, size), nmemb * size,
					       HANDLER_SITE());
		if (own_call()) {
			size_t n;
			if (__builtin_mul_overflow(nmemb, size, &n)) {
				errno = ENOMEM;
				return NULL;
			}
			bool served;
			void *p = own_alloc(16, n, true, &served);
			if (served)
				return p;
		}
		return mc_real.calloc(nmemb, size);
	}
	mc_guard_enter();
	/* the dynamic linker's DTV for a thread the C library starts
	 * itself: counted as in memcheck's pthread_create (account.c) */
	bool dtv = unlikely(size == MC_DTV_ENTRY) && mc_account_dtv_outside(nmemb);
	mc_self.dtv_window += dtv;
	void *p = record(MC_REAL(mc_real.calloc(nmemb, size)), nmemb * size, CALL_FRAME());
	mc_self.dtv_window -= dtv;
	mc_guard_leave();
	return p;
}

/* Count-only calloc where the result must be looked at (a product that
 * overflows, which the allocator fails, counted with the same wrapped
 * size and taken back; a size that can fail, limits.c; fault injection,
 * which keeps mc_sure_below at 0, goes the slow way): counted in
 * advance, taken back if the allocator fails.  Out of line, as
 * realloc_count: the wrapper's common case is then a jump that keeps no
 * frame (it saved a register and called the allocator for every calloc:
 * 19 instructions a call, doc/costs.md count50).  The limits are read
 * from here too at the MC_LIMITS_AFTER-th count, as from malloc's. */
static __attribute__((noinline)) void *calloc_count(struct mc_totals *t, size_t nmemb, size_t size)
{
	if (unlikely(!fault_off()))
		return calloc_slow(nmemb, size);
	size_t n = nmemb * size;
	count_alloc(t, n);
	limits_due(t);
	void *p = mc_real.calloc(nmemb, size);
	if (unlikely(p == NULL))
		return uncount(n);
	return p;
}

/* A calloc of 16-byte entries as many as the calling thread's own DTV
 * has, or called from the dynamic linker's mapping: perhaps the dynamic
 * linker's DTV for a thread the C library starts itself (allocate_dtv),
 * which calloc_slow asks account.c about (its caller's return address in
 * ld.so).  The program's other calls pay one compare for it (+2
 * instructions a call, callgrind: doc/costs.md rss44); its calls of
 * 16-byte entries a read of the DTV's length and a compare of the return
 * address with that mapping more (+4 instructions a call counted, +6
 * tracked: doc/costs.md rss47). */
MC_API MC_FRAMELESS void *calloc(size_t nmemb, size_t size)
{
	if (unlikely(size == MC_DTV_ENTRY) &&
	    unlikely(mc_dtv_entries(nmemb, (uintptr_t)__builtin_return_address(0))))
		return calloc_slow(nmemb, size);
	struct mc_totals *t = count_path();
	if (t) {
		/* as count-only malloc: a size that cannot fail counted in
		 * advance and the allocator reached by a jump (mc_sure_below
		 * is 0 while fault injection is on: this test stands for
		 * fault_off() too); the rest in calloc_count */
		size_t n;
		if (likely(!__builtin_mul_overflow(nmemb, size, &n)) &&
		    likely(mc_below_relaxed(n, &mc_sure_below))) {
			count_alloc(t, n);
			return mc_real.calloc(nmemb, size);
		}
		return calloc_count(t, nmemb, size);
	}
	/* Tracking and a left-out program's calls (passing), as malloc's:
	 * past calloc_slow's tests a left-out call cost ~50 instructions
	 * more (uncounted_slow asks mc_resolve, which has nothing to do). */
	if (fault_off()) {
		if (likely(!mc_in_hook)) {
			int ready = track_mode();
			if (likely(ready > 0)) /* MC_TRACK_PLAIN */
				return mc_track_calloc(nmemb, size);
			if (ready < 0) /* MC_TRACK_SITES */
				return mc_track_calloc_sites(nmemb, size);
			if (passing())
				return mc_real.calloc(nmemb, size);
		}
	}
	return calloc_slow(nmemb, size);
}

static __attribute__((noinline)) void free_slow(void *p)
{
	if (!p)
		return;
	if (unlikely(is_own(p))) {
		mc_ownheap_free(p);
		return;
	}
	if (unlikely(uncounted())) {
		if (IN_HANDLER()) {
			mc_signal_free(p, HANDLER_SITE());
			return;
		}
		mc_real.free(p);
		return;
	}
	bool pass_on = true;
	mc_guard_enter();
	mc_account_free(p, &pass_on, CALL_FRAME());
	if (likely(pass_on))
		mc_real.free(p);
	mc_guard_leave();
}

MC_API MC_FRAMELESS void free(void *p)
{
	struct mc_totals *t = count_path();
	if (t) {
		if (likely(p != NULL) && likely(!in_own_span(p))) {
			mc_add_own(&t->frees, 1);
			mc_real.free(p);
			return;
		}
	} else if (unlikely(p == NULL)) {
		/* free(NULL) (a parser makes many: tree_bench two for every
		 * three blocks): passed on only where the program is left
		 * out, as below; free_slow did nothing else with it, after a
		 * call */
		if (passing())
			mc_real.free(p);
		return;
	} else {
		int ready = likely(!mc_in_hook) ? track_mode() : 0;
		/* and a block of memcheck's own heap */
		if (likely(ready > 0)) { /* MC_TRACK_PLAIN */
			mc_track_free(p);
			return;
		}
		if (ready < 0) { /* MC_TRACK_SITES */
			mc_track_free_sites(p);
			return;
		}
		if (passing() && likely(!is_own(p))) {
			mc_real.free(p);
			return;
		}
	}
	free_slow(p);
}

/* realloc and reallocarray share this: old block out, new block in.  The
 * old block is marked freed before the allocator sees it, so another
 * thread that is handed the same address cannot race our bookkeeping; if
 * the allocator then fails, the block is put back as it was. */
static void *realloc_common(void *old, size_t a, size_t b, bool array, void *fp)
{
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) {
		mc_guard_enter();
		mc_account_realloc_call();
		mc_account_failed();
		mc_guard_leave();
		errno = ENOMEM;
		return NULL;
	}
	if (!old) {
		mc_guard_enter();
		mc_account_realloc_call();
		void *p = MC_REAL(array ? mc_real.reallocarray(NULL, a, b) : mc_real.realloc(NULL, n));
		record(p, n, fp);
		mc_scrub(p, 0, n);
		mc_guard_leave();
		return p;
	}
	int saved = errno;
	mc_guard_enter();
	mc_account_realloc_call();
	struct mc_block prev;
	int st = mc_account_realloc_begin(old, &prev, fp);
	if (st < 0) {
		/* A block memcheck saw freed: reported, and kept from the
		 * allocator, which would corrupt its heap. */
		mc_account_realloc_refused(n);
		mc_guard_leave();
		errno = ENOMEM;
		return NULL;
	}
	errno = saved;
	void *p = MC_REAL(array ? mc_real.reallocarray(old, a, b) : mc_real.realloc(old, n));
	int err = errno;
	/* the thread's own DTV, grown by the dynamic linker for a library
	 * with TLS loaded since (_dl_update_slotinfo): counted as in
	 * memcheck's pthread_create (account.c) */
	bool dtv = unlikely(mc_dtv_block(old)) && !mc_self.dtv_window;
	mc_self.dtv_window += dtv;
	mc_account_realloc_end(old, p, n, st, &prev, fp);
	mc_self.dtv_window -= dtv;
	if (st == 1 && mc_opt.track)
		mc_scrub_grown(p, prev.size, n);
	mc_guard_leave();
	errno = err;
	return p;
}

static __attribute__((noinline)) void *realloc_slow(void *old, size_t n)
{
	if (unlikely(is_own(old))) {
		if (own_call())
			return mc_ownheap_realloc(old, n);
		/* The program reallocates a block memcheck's work made (a
		 * library's cache): from now on it is the program's. */
		void *p = n ? malloc(n) : NULL;
		if (p || !n) {
			size_t have = mc_ownheap_size(old);
			if (p)
				memcpy(p, old, have < n ? have : n);
			mc_ownheap_free(old);
		}
		return p;
	}
	if (unlikely(uncounted())) {
		if (IN_HANDLER())
			return mc_signal_realloc(old, n, HANDLER_SITE());
		if (own_call() && !old) {
			bool served;
			void *p = own_alloc(16, n, false, &served);
			if (served)
				return p;
		}
		return mc_real.realloc(old, n);
	}
	if (n > 0 && INJECT(CALL_FRAME(), true))
		return NULL;
	return realloc_common(old, n, 1, false, CALL_FRAME());
}

/* Count-only realloc, as realloc_common counts it: one realloc call; the
 * old block freed unless the call failed; the new one allocated.  Where
 * the result must be looked at: a size of 0 (the allocator may free the
 * block and hand back NULL), one that can fail (limits.c), failure
 * injection on (mc_sure_below is 0 then). */
static __attribute__((noinline)) void *realloc_count(struct mc_totals *t, void *old, size_t n)
{
	if (unlikely(!fault_off()))
		return realloc_slow(old, n);
	mc_add_own(&t->reallocs, 1);
	void *p = mc_real.realloc(old, n);
	if (unlikely(p == NULL)) {
		if (old && n == 0)
			mc_add_own(&t->frees, 1); /* freed, nothing new */
		else
			mc_add_own(&t->failed, 1);
		return NULL;
	}
	if (old)
		mc_add_own(&t->frees, 1);
	count_alloc(t, n);
	limits_due(t); /* a program that reallocs alone reads them too */
	return p;
}

/* realloc of the calling thread's DTV, by the dynamic linker: the main
 * thread's, which memcheck holds since start-up (account.c), whatever
 * the state, is never the allocator's to grow; any other the slow path
 * counts as a DTV.  Out of the slow path's way: reached once in a
 * process that dlopens 15 libraries with TLS. */
static __attribute__((noinline)) void *realloc_dtv(void *old, size_t n)
{
	if (mc_account_dtv_main(old))
		return mc_account_dtv_main_grow(old, n, CALL_FRAME(), !uncounted());
	return realloc_slow(old, n);
}

/* A size that cannot fail (as count-only malloc's) is counted in
 * advance and the allocator reached by a jump, so the wrapper keeps no
 * frame and saves no register on any path (it pushed three before,
 * the tracking path's jump included). */
MC_API MC_FRAMELESS void *realloc(void *old, size_t n)
{
	if (unlikely(mc_dtv_block(old)))
		return realloc_dtv(old, n);
	struct mc_totals *t = count_path();
	if (t) {
		if (likely(!in_own_span(old))) {
			if (likely(n != 0) && likely(mc_below_relaxed(n, &mc_sure_below))) {
				mc_add_own(&t->reallocs, 1);
				mc_add_own(&t->frees, old != NULL);
				mc_add_own(&t->allocs, 1);
				mc_add_own(&t->bytes_allocated, n);
				return mc_real.realloc(old, n);
			}
			return realloc_count(t, old, n);
		}
	} else if (fault_off()) {
		if (likely(old != NULL) && likely(!mc_in_hook) && likely(tracking()) &&
		    likely(!in_own_span(old))) {
			return mc_track_realloc(old, n);
		} else if (passing() && likely(!mc_in_hook) && likely(!is_own(old))) {
			return mc_real.realloc(old, n);
		}
	}
	return realloc_slow(old, n);
}

static __attribute__((noinline)) void *reallocarray_slow(void *old, size_t a, size_t b)
{
	if (fault_off() && likely(!mc_in_hook) && passing() && likely(!is_own(old)))
		return mc_real.reallocarray(old, a, b);
	if (unlikely(is_own(old) || uncounted())) {
		if (passing() && !mc_in_hook && !is_own(old))
			return mc_real.reallocarray(old, a, b);
		size_t n;
		if (__builtin_mul_overflow(a, b, &n)) {
			errno = ENOMEM;
			return NULL;
		}
		if (is_own(old) || own_call())
			return realloc(old, n);
		if (IN_HANDLER())
			return mc_signal_realloc(old, n, HANDLER_SITE());
		return mc_real.reallocarray(old, a, b);
	}
	size_t n;
	if (!__builtin_mul_overflow(a, b, &n) && n > 0 &&
	    INJECT(CALL_FRAME(), true))
		return NULL;
	return realloc_common(old, a, b, true, CALL_FRAME());
}

/* Count-only reallocarray as count-only realloc (count52: it took the
 * slow path's guard and record, as the aligned family did): a product
 * that does not overflow, is not 0 and cannot fail (limits.c) counted
 * in advance and handed to the allocator's realloc by a jump, which is
 * all reallocarray does with it; not to its reallocarray, which calls
 * the public realloc (glibc's; forward.c's stand-in for jemalloc's and
 * tcmalloc's): memcheck's, unguarded here, would count it again.  The
 * rest by the result as count-only realloc's (realloc_count), an
 * overflowing product the slow way, which counts it failed. */
MC_API MC_FRAMELESS void *reallocarray(void *old, size_t a, size_t b)
{
	struct mc_totals *t = count_path();
	size_t n;
	if (t && likely(!in_own_span(old)) && likely(!__builtin_mul_overflow(a, b, &n))) {
		if (likely(n != 0) && likely(mc_below_relaxed(n, &mc_sure_below))) {
			mc_add_own(&t->reallocs, 1);
			mc_add_own(&t->frees, old != NULL);
			count_alloc(t, n);
			return mc_real.realloc(old, n);
		}
		return realloc_count(t, old, n); /* as realloc's, by the result */
	}
	return reallocarray_slow(old, a, b);
}

/* ---- the aligned family --------------------------------------------- */

/* Count-only posix_memalign, aligned_alloc, memalign, valloc and pvalloc
 * take malloc's path: counted in advance and the allocator reached by a
 * jump, where the call can fail for want of memory alone and the size
 * cannot (limits.c): an alignment that is a power of two, at least min
 * (posix_memalign's sizeof(void *); 1: the others, for which the
 * allocators differ on an alignment of 0, 3 or 24, which therefore go the
 * way that looks at the result), and size and alignment each below
 * mc_sure_below.  That bound is 0 or a power of two (limits.c), so one
 * compare of the two or'ed tests both; an alignment of 0 is SIZE_MAX
 * there.  The block then takes at most size + alignment bytes, twice
 * malloc's sure size.  (They took the slow path's guard and record
 * before: +108..+127 instructions a call where malloc's path adds 5,
 * doc/costs.md count52.) */
static inline __attribute__((always_inline)) bool aligned_sure(size_t align, size_t n, size_t min)
{
	size_t a1 = align - 1;
	return likely(!(align & (a1 | (min - 1)))) && likely(mc_below_relaxed(n | a1, &mc_sure_below));
}

static __attribute__((noinline)) int posix_memalign_slow(void **out, size_t align, size_t n)
{
	if (fault_off() && likely(!mc_in_hook) && passing())
		return mc_real.posix_memalign(out, align, n);
	if (unlikely(__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED))) {
		int saved = errno;
		bool fail = mc_fault_check(CALL_FRAME(), false);
		errno = saved;
		if (fail)
			return ENOMEM;
	}
	if (unlikely(uncounted())) {
		if (passing() && !mc_in_hook)
			return mc_real.posix_memalign(out, align, n);
		if (IN_HANDLER()) {
			int rc = mc_real.posix_memalign(out, align, n);
			if (rc == 0) {
				mc_scrub(*out, 0, n);
				mc_signal_alloc(*out, n, HANDLER_SITE());
			}
			return rc;
		}
		if (own_call()) {
			if (align < sizeof(void *) || (align & (align - 1)))
				return EINVAL;
			int saved = errno;
			bool served;
			void *p = own_alloc(align, n, false, &served);
			errno = saved;
			if (served) {
				if (!p)
					return ENOMEM;
				*out = p;
				return 0;
			}
		}
		return mc_real.posix_memalign(out, align, n);
	}
	mc_guard_enter();
	void *p = NULL;
	int rc = MC_REAL(mc_real.posix_memalign(&p, align, n));
	int saved = errno;
	record(rc == 0 ? p : NULL, n, CALL_FRAME());
	if (rc == 0)
		mc_scrub(p, 0, n);
	errno = saved;
	mc_guard_leave();
	if (rc == 0)
		*out = p;
	return rc;
}

/* Count-only aligned calls whose result must be looked at (an alignment
 * the allocators differ on, a size that can fail, limits.c; fault
 * injection, which keeps mc_sure_below at 0, goes the slow way): counted
 * by the result, as the slow path's record counts them; the limits read
 * from here too, at the MC_LIMITS_AFTER-th count. */
static inline __attribute__((always_inline)) void count_result(struct mc_totals *t, bool ok,
								size_t n)
{
	if (unlikely(!ok)) {
		mc_add_own(&t->failed, 1);
		return;
	}
	count_alloc(t, n);
	limits_due(t);
}

static __attribute__((noinline)) int posix_memalign_count(struct mc_totals *t, void **out,
							  size_t align, size_t n)
{
	if (unlikely(!fault_off()))
		return posix_memalign_slow(out, align, n);
	int rc = mc_real.posix_memalign(out, align, n);
	count_result(t, rc == 0, n);
	return rc;
}

MC_API MC_FRAMELESS int posix_memalign(void **out, size_t align, size_t n)
{
	struct mc_totals *t = count_path();
	if (t) {
		if (aligned_sure(align, n, sizeof(void *))) {
			count_alloc(t, n);
			return mc_real.posix_memalign(out, align, n);
		}
		return posix_memalign_count(t, out, align, n);
	}
	return posix_memalign_slow(out, align, n);
}

/* The rest: one shape, four forwarders; sure is the count-only jump's
 * test, size what is counted.  name##_count reads count_path() again
 * rather than take the wrapper's t: passing it costs each wrapper three
 * register moves, 32 bytes of group 1t for the four (make place-check),
 * to spare a thread-pointer load on the out-of-line path. */
#define MC_ALIGNED(name, params, args, size, sure)                               \
	static __attribute__((noinline)) void *name##_slow params                \
	{                                                                        \
		if (fault_off() && likely(!mc_in_hook) && passing())             \
			return mc_real.name args;                                \
		if (INJECT(CALL_FRAME(), false))                                 \
			return NULL;                                             \
		if (unlikely(uncounted())) {                                     \
			if (passing() && !mc_in_hook)                            \
				return mc_real.name args;                        \
			if (IN_HANDLER()) {                                      \
				void *p = mc_real.name args;                     \
				mc_scrub(p, 0, size);                            \
				return mc_signal_alloc(p, size, HANDLER_SITE()); \
			}                                                        \
			bool served = false;                                     \
			void *p = own_call() ? own_alloc(mc_page_size(), size, false, \
							   &served) : NULL;      \
			return served ? p : mc_real.name args;                   \
		}                                                                \
		mc_guard_enter();                                                \
		void *p = record(MC_REAL(mc_real.name args), size, CALL_FRAME()); \
		mc_scrub(p, 0, size);                                            \
		mc_guard_leave();                                                \
		return p;                                                        \
	}                                                                        \
	static __attribute__((noinline)) void *name##_count params               \
	{                                                                        \
		struct mc_totals *t = count_path();                              \
		if (unlikely(!fault_off()) || unlikely(!t))                      \
			return name##_slow args;                                 \
		void *p = mc_real.name args;                                     \
		count_result(t, p != NULL, size);                                \
		return p;                                                        \
	}                                                                        \
	MC_API MC_FRAMELESS void *name params                                    \
	{                                                                        \
		struct mc_totals *t = count_path();                              \
		if (t) {                                                         \
			if (sure) {                                              \
				count_alloc(t, size);                            \
				return mc_real.name args;                        \
			}                                                        \
			return name##_count args;                                \
		}                                                                \
		return name##_slow args;                                         \
	}

MC_ALIGNED(memalign, (size_t align, size_t n), (align, n), n, aligned_sure(align, n, 1))
MC_ALIGNED(aligned_alloc, (size_t align, size_t n), (align, n), n, aligned_sure(align, n, 1))
/* valloc and pvalloc: the page size is a power of two below
 * mc_sure_below */
MC_ALIGNED(valloc, (size_t n), (n), n, likely(mc_below_relaxed(n, &mc_sure_below)))
/* pvalloc counts the page-rounded size: that is what the program gets
 * and may use.  (valgrind 3.19 aborts on pvalloc, so there is no count
 * of its to match.)  That size needs the page size, a call, which a
 * frameless wrapper may not make (make fp-check): the obsolete call is
 * counted by its result, out of line, always. */
MC_ALIGNED(pvalloc, (size_t n), (n), (n + mc_page_size() - 1) & ~(mc_page_size() - 1), false)

MC_API size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (unlikely(is_own(p)))
		return mc_ownheap_size(p);
	/* the program's: the slack is its own from now on (mc_scrub_grown) */
	__atomic_store_n(&mc_usable_asked, (size_t)1 << 62, __ATOMIC_RELAXED);
	if (bootstrapping())
		mc_resolve_calls();
	if (mc_real.usable_size)
		return mc_real.usable_size(p);
	/* An allocator without it: the size memcheck recorded. */
	struct mc_block b;
	return mc_blocks_find((uintptr_t)p, &b) ? b.size : 0;
}
