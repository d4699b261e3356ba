/*
 * stacks.c - allocation stacks: capture, and the hash the depot
 * (depot.c) stores them by.
 *
 * Three unwinders (MEMCHECK_UNWINDER):
 *   fp         walks frame pointers from the malloc-family function's
 *              own frame.  ~10 ns.  The first frame (the call site) is
 *              always right; past code built without frame pointers the
 *              walk stops, or, rarely, follows a stale frame.
 *   libunwind  unw_backtrace(), loaded with dlopen when chosen. Exact.
 *   glibc      backtrace(3).  Exact, slowest; loads libgcc_s on first use.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

static int (*unw_backtrace_fn)(void **, int);

/* This thread's stack, learned on its first capture: a frame may start
 * anywhere in [lo, top], top being the stack's end less 16 bytes (the
 * saved frame pointer and the return address); until learned, lo is
 * UINTPTR_MAX and top 0.
 * With it, a few recent stacks by hash: a hot allocation site finds its
 * id here without touching the depot's (cache-cold) buckets.  One TLS
 * block, so a capture reaches all of it from one address. */
#define CACHE 32
static MC_TLS struct {
	struct slot { uint64_t hash; uint32_t id; } cache[CACHE]; /* first: capture_slot adds no offset */
	uintptr_t lo, top;
} me = { .lo = UINTPTR_MAX }; /* unlearned: see walk_fp */

/* (The cache's helpers are named capture_*: the entries of
 * suppressions/memcheck.supp for the walk's reads, which valgrind may
 * call uninitialised, match *capture*.)
 *
 * The cache is 16 pairs of slots, a pair for each value of a hash's top
 * 4 bits (the byte offset straight from h, saving the index's scaling
 * on the common path), the stack used last in the pair's first slot: a
 * new stack moves the first slot's to the second, and a hit in the
 * second swaps them (see capture_cache_find).  Two hot stacks of one
 * pair then cost a few instructions more, not a walk that stores the
 * frames and a depot lookup each time.  (Each stack once had a slot of
 * its own and the pair's other as its second: two stacks whose own
 * slots were a pair pushed each other out on every capture.) */
static inline struct slot *capture_slot(uint64_t h)
{
	_Static_assert(sizeof(struct slot) == 16 && CACHE == 32, "capture_slot's shift and mask");
	return (struct slot *)((char *)me.cache + (h >> 55 & 0x1e0));
}

static inline struct slot *capture_other_slot(uint64_t h)
{
	return capture_slot(h) + 1;
}

void mc_stacks_init(void)
{
	if (mc_opt.unwinder == MC_UNWIND_LIBUNWIND) {
		void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
		unw_backtrace_fn = h ? (int (*)(void **, int))dlsym(h, "unw_backtrace") : NULL;
		if (!unw_backtrace_fn) {
			mc_log("MEMCHECK_UNWINDER=libunwind: cannot load libunwind.so.8 "
			       "(Debian package libunwind8); using fp");
			mc_opt.unwinder = MC_UNWIND_FP;
		}
	} else if (mc_opt.unwinder == MC_UNWIND_GLIBC) {
		/* The first call loads libgcc_s; do it now, not inside some
		 * malloc the program makes while holding a lock. */
		void *f[2];
		backtrace(f, 2);
	}
}

/* A polynomial hash of n frames, the sum of frame[i] * K^(n-i) mod 2^64,
 * run as h = (h + frame) * K: two instructions a frame on the capture's
 * hot path, whose multiply chain runs beside the walk's chain of loads,
 * no shorter.  Two stacks collide only where their frames' differences,
 * times distinct powers of the odd K, sum to 0 mod 2^64 (or, of two
 * depths, a longer's extra frames hit one value): for return addresses,
 * a 2^-64 chance, not a structure.  Every frame's every bit reaches the
 * top bits, so the cache and the depot index by those; the low bits see
 * only the frames' low bits.
 *
 * A hash of 0 is as likely as any other, and harmless: an empty cache
 * slot (hash 0, id 0) then answers "no stack", as rare a loss as a
 * collision's wrong stack. */
#define HASH_K 0x9e3779b97f4a7c15ull

static inline uint64_t hash_step(uint64_t h, uintptr_t frame)
{
	/* h += frame, in h's register: left to itself, gcc adds into
	 * frame's and copies the sum back, an instruction a frame. */
	__asm__("add %1, %0" : "+r"(h) : "r"(frame) : "cc");
	return h * HASH_K;
}

static inline uint64_t hash_frames(const uintptr_t *f, int n)
{
	uint64_t h = 0;
	for (int i = 0; i < n; i++)
		h = hash_step(h, f[i]);
	return h;
}

uint32_t mc_stack_intern(const uintptr_t *f, int n)
{
	return n > 0 ? mc_depot_intern(hash_frames(f, n), f, n) : 0;
}

/* This thread's stack bounds, to keep the frame-pointer walk on it. */
static void learn_stack(void)
{
	int saved = errno;
	pthread_attr_t attr;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size >= 16) {
			me.lo = (uintptr_t)addr;
			me.top = (uintptr_t)addr + size - 16;
		}
		pthread_attr_destroy(&attr);
	}
	if (!me.top) /* unknown: allow only the first frame (none lies at 1 or below) */
		me.lo = me.top = 1;
	errno = saved;
}

/* The frame-pointer walk: the return addresses up the chain from fp,
 * stored in out unless it is NULL, up to max; returns their
 * hash_frames() and, with out, their number in *count.  top is me.top.
 * The first frame is the malloc-family function's own, built by us with
 * a frame pointer: its return address is the call site.  The walk stops
 * where the chain leaves the thread's stack or stops making sense: a
 * next frame not above the current one, past top, unaligned, or holding
 * a return address below 4096.  Only the first step checks the stack's
 * low end: each later frame lies above one that passed it.
 *
 * *count is -1 where the thread's stack is not learned yet: its lo,
 * UINTPTR_MAX, fails the first step's check, so the common path does
 * not test for it.  (A link of UINTPTR_MAX passes that lo, then fails
 * top 0: one frame, as a learned walk gives it too.)
 *
 * The walk is a chain of loads, each frame's address loaded from the
 * one before: its speed is their latency, so the frame pointers stay as
 * they are, loaded and used as a base with nothing in between (checking
 * alignment and the top in one compare on addresses rotated right by 3
 * saves an instruction a frame, but ran slower). */
static inline __attribute__((always_inline)) uint64_t
walk_fp(uintptr_t *fp, uintptr_t top, int max, uintptr_t *out, int *count)
{
	uintptr_t ret = fp[1], *next = (uintptr_t *)fp[0], *o = out;
	uint64_t h = ret * HASH_K; /* hash_step(0, ret) */
	if (o)
		*o++ = ret;
	/* One step from frame cur to the frame nxt it links to, which the
	 * step checks; then nxt's own link goes to cur, so the loop below,
	 * unrolled twice, never copies a frame pointer.  It counts frames
	 * by pairs: left is how many more the depth allows. */
#define STEP(cur, nxt)                                                         \
	if (nxt <= cur || (uintptr_t)nxt > top || ((uintptr_t)nxt & 7) ||     \
	    (ret = nxt[1]) < 4096)                                             \
		goto done;                                                     \
	if (o)                                                                 \
		*o++ = ret;                                                    \
	h = hash_step(h, ret);                                                 \
	cur = (uintptr_t *)nxt[0];
	if ((uintptr_t)next >= me.lo) {
		unsigned left = (unsigned)max - 1;
		if (left & 1) {
			STEP(fp, next)
			uintptr_t *t = fp;
			fp = next;
			next = t;
		}
		for (unsigned pairs = left / 2; pairs; pairs--) {
			STEP(fp, next)
			STEP(next, fp)
		}
	} else if (unlikely(!top)) {
		*count = -1;
		return 0;
	}
#undef STEP
done:;
	int n = o ? (int)(o - out) : 0;
	*count = n;
	return h;
}

/* Unwinders that start from here: drop frames up to the call site. */
static int trim_to(uintptr_t site, void **raw, int got, uintptr_t *out, int max)
{
	int start = 0;
	while (start < got && (uintptr_t)raw[start] != site)
		start++;
	if (start == got)
		start = 0;
	int n = 0;
	for (int i = start; i < got && n < max; i++)
		out[n++] = (uintptr_t)raw[i];
	return n;
}

/* The exact unwinders start from here: run them out of line so the
 * common frame-pointer path keeps a small stack frame. */
static __attribute__((noinline)) int capture_slow(void *fp, uintptr_t *frames, int max)
{
	void *raw[MC_MAX_DEPTH + 8];
	mc_self.foreign++; /* their blocks may be freed outside the hook */
	int got = mc_opt.unwinder == MC_UNWIND_LIBUNWIND
		  ? unw_backtrace_fn(raw, max + 8)
		  : backtrace(raw, max + 8);
	mc_self.foreign--;
	return trim_to(((uintptr_t *)fp)[1], raw, got, frames, max);
}

/* Put h's id first in its pair, the stack there moving to the second
 * slot (see capture_slot). */
static void capture_cache_put(uint64_t h, uint32_t id)
{
	struct slot *c = capture_slot(h);
	if (c->hash != h)
		*capture_other_slot(h) = *c;
	c->hash = h;
	c->id = id;
}

/* The slot that holds h, or NULL.  A hit in the other slot swaps the
 * pair, so the stack used last is where the common path looks first. */
static inline const struct slot *capture_cache_find(uint64_t h)
{
	struct slot *c = capture_slot(h);
	if (likely(c->hash == h))
		return c;
	struct slot *o = capture_other_slot(h);
	if (o->hash != h)
		return NULL;
	struct slot t = *o;
	*o = *c;
	*c = t;
	return c;
}

/* A stack the thread's cache does not know: the frames the walk hashed
 * to h, stored this time.  Out of line, so the common path keeps a
 * small frame.  The depot is checked here, not on the common path: the
 * cache is empty until this fills it. */
static __attribute__((noinline)) uint32_t capture_miss(void *fp, int max, uint64_t h)
{
	uintptr_t frames[MC_MAX_DEPTH];
	int n;
	walk_fp(fp, me.top, max, frames, &n);
	if (n <= 0) /* the stack not learned: not after the common path's walk */
		return 0;
	uint32_t id = mc_depot_intern(h, frames, n);
	capture_cache_put(h, id);
	return id;
}

/* An exact unwinder's stack. */
static __attribute__((noinline)) uint32_t capture_exact(void *fp, int max)
{
	uintptr_t frames[MC_MAX_DEPTH];
	int n = capture_slow(fp, frames, max);
	if (n <= 0)
		return 0;
	uint64_t h = hash_frames(frames, n);
	const struct slot *c = capture_cache_find(h);
	uint32_t id = c ? c->id : 0;
	if (!c) {
		id = mc_depot_intern(h, frames, n);
		capture_cache_put(h, id);
	}
	return id;
}

/* A thread's first capture: learn its stack, then capture. */
static __attribute__((noinline)) uint32_t capture_first(void *fp)
{
	learn_stack();
	return mc_stack_capture(fp);
}

/* Its slow paths are all tail calls, so the common path saves no
 * registers. */
uint32_t mc_stack_capture(void *fp)
{
	int max = mc_opt.stack_depth;
	if (unlikely(max <= 0))
		return 0;
	if (unlikely(mc_opt.unwinder != MC_UNWIND_FP))
		return capture_exact(fp, max);
	int n = 0;
	uint64_t h = walk_fp(fp, me.top, max, NULL, &n);
	if (unlikely(n < 0))
		return capture_first(fp);
	/* A 64-bit hash match is taken as the same stack: a false match
	 * needs a collision among the few stacks of one thread. */
	const struct slot *c = capture_cache_find(h);
	return likely(c != NULL) ? c->id : capture_miss(fp, max, h);
}

void mc_stacks_lock(void)
{
	mc_depot_lock();
}

void mc_stacks_unlock(void)
{
	mc_depot_unlock();
}

void mc_stacks_after_fork_child(void)
{
	mc_depot_after_fork_child();
	me.lo = UINTPTR_MAX; /* the child's only thread: learn again */
	me.top = 0;
}
