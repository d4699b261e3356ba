/*
 * stacks.c - allocation stacks: capture, and a depot that interns each
 * distinct stack to a 32-bit id, so a tracked block costs four bytes of
 * stack and leak reports group blocks by site.
 *
 * Three unwinders (MEMCHECK_UNWINDER):
 *   fp         walks frame pointers from the malloc-family function's
 *              own frame.  ~10 ns.  The first frame (the call site) is
 *              always right; past code built without frame pointers the
 *              walk stops, or, rarely, follows a stale frame.
 *   libunwind  unw_backtrace(), loaded with dlopen when chosen. Exact.
 *   glibc      backtrace(3).  Exact, slowest; loads libgcc_s on first use.
 *
 * The depot is insert-only: lookups take no lock, inserts take one.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

struct entry {
	uint64_t hash;
	_Atomic uint32_t next;  /* id of the next entry in the bucket, 0 = end */
	uint32_t depth;
	uintptr_t frames[];
};

#define NBUCKETS (1u << 20)
#define ARENA_BYTES (1ull << 32) /* reserved, touched as used */
#define UNIT 32 /* ids address the arena in 32-byte units: 27 bits (a block table entry's share) */

static _Atomic uint32_t *buckets;
static char *arena;
_Static_assert(ARENA_BYTES / UNIT - 1 <= MC_STACK_ID_MAX, "stack ids must fit a block entry");
static size_t arena_used = UNIT; /* id 0 means "no stack" */
static atomic_flag depot_lock = ATOMIC_FLAG_INIT;
static atomic_size_t nstacks;

static int (*unw_backtrace_fn)(void **, int);

static MC_TLS uintptr_t stack_lo, stack_hi;

/* A few recent stacks per thread, by hash: a hot allocation site finds
 * its id here without touching the depot's (cache-cold) buckets. */
#define CACHE 32
static MC_TLS struct { uint64_t hash; uint32_t id; } cache[CACHE];

void mc_stacks_init(void)
{
	buckets = mc_map(NBUCKETS * sizeof *buckets);
	arena = mc_map(ARENA_BYTES);
	if (!buckets || !arena) {
		mc_log("cannot map the stack depot; allocation stacks are off");
		mc_opt.stack_depth = 0;
		return;
	}
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

/* Multiply each frame by a constant of its own and fold: the multiplies
 * are independent, so the CPU runs them side by side instead of one
 * after another as a running hash would. */
static inline uint64_t hash_term(uintptr_t frame, int i)
{
	static const uint64_t k[4] = { 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full,
				       0x165667b19e3779f9ull, 0xd6e8feb86659fd93ull };
	return ((uint64_t)frame ^ (uint64_t)i << 56) * k[i & 3];
}

/* The hash of n frames whose terms add up to sum; never 0. */
static inline uint64_t hash_finish(uint64_t sum, int n)
{
	uint64_t h = sum + (uint64_t)n * 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	return h ? h : 1;
}

static inline uint64_t hash_frames(const uintptr_t *f, int n)
{
	uint64_t sum = 0;
	for (int i = 0; i < n; i++)
		sum += hash_term(f[i], i);
	return hash_finish(sum, n);
}

static inline struct entry *entry_of(uint32_t id)
{
	return (struct entry *)(arena + (size_t)id * UNIT);
}

static uint32_t lookup(uint64_t h, const uintptr_t *f, int n)
{
	uint32_t id = atomic_load_explicit(&buckets[h & (NBUCKETS - 1)], memory_order_acquire);
	while (id) {
		struct entry *e = entry_of(id);
		if (e->hash == h && e->depth == (uint32_t)n &&
		    memcmp(e->frames, f, (size_t)n * sizeof *f) == 0)
			return id;
		id = atomic_load_explicit(&e->next, memory_order_acquire);
	}
	return 0;
}

static uint32_t intern(uint64_t h, const uintptr_t *f, int n)
{
	uint32_t id = lookup(h, f, n);
	if (id)
		return id;
	while (atomic_flag_test_and_set_explicit(&depot_lock, memory_order_acquire))
		__builtin_ia32_pause();
	id = lookup(h, f, n);
	if (!id) {
		size_t need = sizeof(struct entry) + (size_t)n * sizeof *f;
		need = (need + UNIT - 1) & ~(size_t)(UNIT - 1);
		if (arena_used + need <= ARENA_BYTES) {
			id = (uint32_t)(arena_used / UNIT);
			struct entry *e = entry_of(id);
			e->hash = h;
			e->depth = (uint32_t)n;
			memcpy(e->frames, f, (size_t)n * sizeof *f);
			_Atomic uint32_t *b = &buckets[h & (NBUCKETS - 1)];
			atomic_store_explicit(&e->next, atomic_load(b), memory_order_relaxed);
			atomic_store_explicit(b, id, memory_order_release);
			arena_used += need;
			atomic_fetch_add(&nstacks, 1);
		}
	}
	atomic_flag_clear_explicit(&depot_lock, memory_order_release);
	return id;
}

uint32_t mc_stack_intern(const uintptr_t *f, int n)
{
	if (!arena || n <= 0)
		return 0;
	return intern(hash_frames(f, n), f, n);
}

/* This thread's stack bounds, to keep the frame-pointer walk on it. */
static void learn_stack(void)
{
	int saved = errno;
	pthread_attr_t attr;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			stack_lo = (uintptr_t)addr;
			stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	if (!stack_hi) /* unknown: allow only the first frame */
		stack_lo = stack_hi = 1;
	errno = saved;
}

/* One step up the frame-pointer chain: the next frame's return address,
 * or 0 where the chain leaves the thread's stack or stops making sense. */
static inline uintptr_t step_up(uintptr_t **fpp)
{
	uintptr_t *fp = *fpp, *next = (uintptr_t *)fp[0];
	if (next <= fp || (uintptr_t)next < stack_lo || (uintptr_t)next + 16 > stack_hi ||
	    ((uintptr_t)next & 7) || next[1] < 4096)
		return 0;
	*fpp = next;
	return next[1];
}

/* The first frame is the malloc-family function's own, built by us with
 * a frame pointer: its return address is the call site. */
static int walk_fp(void *fp0, uintptr_t *out, int max)
{
	if (unlikely(!stack_hi))
		learn_stack();
	uintptr_t *fp = fp0, ret;
	int n = 0;
	out[n++] = fp[1];
	while (n < max && (ret = step_up(&fp)))
		out[n++] = ret;
	return n;
}

/* The same walk, hashing the return addresses as it goes instead of
 * storing them: most calls come from a stack the thread's cache knows,
 * and then the frames are never needed.  The result is hash_frames() of
 * the frames walk_fp() would store. */
static inline uint64_t walk_fp_hash(void *fp0, int max, int *count)
{
	if (unlikely(!stack_hi))
		learn_stack();
	uintptr_t *fp = fp0, ret;
	uint64_t sum = hash_term(fp[1], 0);
	int n = 1;
	for (; n < max && (ret = step_up(&fp)); n++)
		sum += hash_term(ret, n);
	*count = n;
	return hash_finish(sum, n);
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
	int got = mc_opt.unwinder == MC_UNWIND_LIBUNWIND
		  ? unw_backtrace_fn(raw, max + 8)
		  : backtrace(raw, max + 8);
	return trim_to(((uintptr_t *)fp)[1], raw, got, frames, max);
}

/* A stack the thread's cache does not know, or one an exact unwinder
 * takes: the frames stored, interned, cached under h (0: hash them).
 * Out of line, so the common path keeps a small frame. */
static __attribute__((noinline)) uint32_t capture_miss(void *fp, int max, uint64_t h)
{
	uintptr_t frames[MC_MAX_DEPTH];
	int n;
	if (h) {
		n = walk_fp(fp, frames, max); /* the same frames, stored this time */
	} else {
		n = capture_slow(fp, frames, max);
		if (n <= 0)
			return 0;
		h = hash_frames(frames, n);
	}
	unsigned k = (unsigned)(h >> 7) & (CACHE - 1);
	if (cache[k].hash == h)
		return cache[k].id;
	uint32_t id = intern(h, frames, n);
	cache[k].hash = h;
	cache[k].id = id;
	return id;
}

uint32_t mc_stack_capture(void *fp)
{
	int max = mc_opt.stack_depth;
	if (max <= 0 || unlikely(!arena))
		return 0;
	if (unlikely(mc_opt.unwinder != MC_UNWIND_FP))
		return capture_miss(fp, max, 0);
	int n;
	uint64_t h = walk_fp_hash(fp, max, &n);
	/* A 64-bit hash match is taken as the same stack: a false match
	 * needs a collision among the few stacks of one thread. */
	unsigned k = (unsigned)(h >> 7) & (CACHE - 1);
	if (likely(cache[k].hash == h))
		return cache[k].id;
	return capture_miss(fp, max, h);
}

struct code_probe {
	uintptr_t pc;
	bool found;
};

static int probe_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct code_probe *p = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && p->pc >= lo &&
		    p->pc < lo + ph->p_memsz) {
			p->found = true;
			return 1;
		}
	}
	return 0;
}

/* Is pc in the code of a loaded object?  A return address must be. */
static bool in_code(uintptr_t pc)
{
	struct code_probe p = { pc - 1, false };
	dl_iterate_phdr(probe_object, &p);
	return p.found;
}

/* The frames of a stack, up to the first that cannot be a return
 * address: past code built without frame pointers the walk may follow a
 * register that held something else (a heap address, a pointer into a
 * data segment), and what it found there is not a caller.  Frame 0, the
 * call site, is always right.  Checked here, at report time, rather than
 * on every allocation. */
int mc_stack_get_code(uint32_t id, const uintptr_t **frames)
{
	int depth = mc_stack_get(id, frames), n = depth ? 1 : 0;
	while (n < depth && in_code((*frames)[n]))
		n++;
	return n;
}

int mc_stack_get(uint32_t id, const uintptr_t **frames)
{
	if (!id || !arena) {
		*frames = NULL;
		return 0;
	}
	struct entry *e = entry_of(id);
	*frames = e->frames;
	return (int)e->depth;
}

void mc_stacks_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&depot_lock, memory_order_acquire))
		__builtin_ia32_pause();
}

void mc_stacks_unlock(void)
{
	atomic_flag_clear_explicit(&depot_lock, memory_order_release);
}

void mc_stacks_after_fork_child(void)
{
	atomic_flag_clear(&depot_lock);
	stack_lo = stack_hi = 0; /* the child's only thread: learn again */
}
