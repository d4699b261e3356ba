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
#define BUCKET_SHIFT (64 - 20) /* a hash's bucket: its top bits (see HASH_K) */
#define ARENA_BYTES (1ull << 32) /* reserved, touched as used */
#define UNIT 32 /* ids address the arena in 32-byte units: 27 bits (a block table entry's share) */

static _Atomic uint32_t *buckets;
static char *arena;
_Static_assert(ARENA_BYTES / UNIT - 1 <= MC_STACK_ID_MAX, "stack ids must fit a block entry");
static size_t arena_used = UNIT; /* id 0 means "no stack" */
static size_t arena_counted;      /* bytes of it counted as resident */
/* The index's pages that hold an entry: one bit a page. */
static uint64_t bucket_pages[NBUCKETS * sizeof(uint32_t) / 4096 / 64];
#define ARENA_CHUNK (64 * 1024)
static atomic_flag depot_lock = ATOMIC_FLAG_INIT;
static atomic_size_t nstacks;

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
 * The cache slot for hash h, by its top 5 bits: the byte offset
 * straight from h, saving the index's scaling on the common path.  A
 * stack pushed out of its slot by another that wants it moves to the
 * other slot of the pair, where a capture looks second: two hot stacks
 * that share a slot then cost a few instructions more, not a walk that
 * stores the frames and a depot lookup each time (see capture_cache_find). */
static inline struct slot *capture_slot(uint64_t h)
{
	_Static_assert(sizeof(struct slot) == 16 && CACHE == 32, "capture_slot's shift and mask");
	return (struct slot *)((char *)me.cache + (h >> 55 & 0x1f0));
}

static inline struct slot *capture_other_slot(uint64_t h)
{
	return (struct slot *)((char *)me.cache + ((h >> 55 & 0x1f0) ^ sizeof(struct slot)));
}

void mc_stacks_init(void)
{
	buckets = mc_map_reserve(NBUCKETS * sizeof *buckets);
	arena = mc_map_reserve(ARENA_BYTES);
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

static inline struct entry *entry_of(uint32_t id)
{
	return (struct entry *)(arena + (size_t)id * UNIT);
}

static uint32_t lookup(uint64_t h, const uintptr_t *f, int n)
{
	uint32_t id = atomic_load_explicit(&buckets[h >> BUCKET_SHIFT], memory_order_acquire);
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
			/* The arena's pages are memcheck's resident memory
			 * from the first entry in them (footprint.c). */
			while (arena_counted < arena_used + need) {
				mc_own_grow(ARENA_CHUNK);
				arena_counted += ARENA_CHUNK;
			}
			id = (uint32_t)(arena_used / UNIT);
			struct entry *e = entry_of(id);
			e->hash = h;
			e->depth = (uint32_t)n;
			memcpy(e->frames, f, (size_t)n * sizeof *f);
			_Atomic uint32_t *b = &buckets[h >> BUCKET_SHIFT];
			/* A page of the index is memcheck's resident memory
			 * from its first entry (footprint.c). */
			size_t page = (size_t)(h >> BUCKET_SHIFT) / (4096 / sizeof *b);
			if (!(bucket_pages[page / 64] & (UINT64_C(1) << page % 64))) {
				bucket_pages[page / 64] |= UINT64_C(1) << page % 64;
				mc_own_grow(4096);
			}
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
	int got = mc_opt.unwinder == MC_UNWIND_LIBUNWIND
		  ? unw_backtrace_fn(raw, max + 8)
		  : backtrace(raw, max + 8);
	return trim_to(((uintptr_t *)fp)[1], raw, got, frames, max);
}

/* Put h's id in its slot, moving the stack there to the other slot of
 * the pair (see capture_slot). */
static void capture_cache_put(uint64_t h, uint32_t id)
{
	struct slot *c = capture_slot(h);
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
	if (!arena)
		return 0;
	walk_fp(fp, me.top, max, frames, &n);
	if (n <= 0) /* the stack not learned: not after the common path's walk */
		return 0;
	uint32_t id = intern(h, frames, n);
	capture_cache_put(h, id);
	return id;
}

/* An exact unwinder's stack. */
static __attribute__((noinline)) uint32_t capture_exact(void *fp, int max)
{
	uintptr_t frames[MC_MAX_DEPTH];
	if (!arena)
		return 0;
	int n = capture_slow(fp, frames, max);
	if (n <= 0)
		return 0;
	uint64_t h = hash_frames(frames, n);
	const struct slot *c = capture_cache_find(h);
	uint32_t id = c ? c->id : 0;
	if (!c) {
		id = intern(h, frames, n);
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
	me.lo = UINTPTR_MAX; /* the child's only thread: learn again */
	me.top = 0;
}
