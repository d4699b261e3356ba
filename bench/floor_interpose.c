/*
 * floor_interpose.c - the least any tracker of memcheck's kind must do on
 * every allocation, to weigh issue 15's per-step targets against: a
 * preloaded malloc, calloc, realloc and free that forward to the next
 * allocator and, per block, (a) walk the caller's frame-pointer chain to
 * FLOOR_DEPTH frames (default 16, as MEMCHECK_STACK_DEPTH) hashing the
 * return addresses, the hash named by a 64-slot cache (a stand-in for an
 * interning depot: it never looks further), and (b) enter the block in a
 * table of live blocks (open addressing, 16-byte entries, half full at
 * most, deleted by shifting back) and count the live bytes and their
 * peak.  FLOOR_DEPTH=0 leaves the walk out, FLOOR_TABLE=0 the table.
 *
 * FLOOR_SCRUB=N (default 0: off) adds (c): a new block's words up to N
 * bytes cleared where they hold an address, the bytes memcheck's
 * MEMCHECK_SCRUB=N reads (all of a block of up to N bytes, else N but
 * not past the end of the page the block starts in; realloc's from the
 * old size on; calloc's none).  Any tracker whose leak kinds follow
 * valgrind's must keep a reused block's stale addresses out of the exit
 * scan (session 25: definite counts equal valgrind's only from 4,096),
 * so make bench times the floor with and without it, and weighs
 * memcheck's defaults against the floor that scrubs as they do.
 *
 * Not a tool, and deliberately not exact: no stack is checked beyond its
 * hash, nothing is locked (each thread has a table of its own; a block
 * freed by another thread is not found), no report.  Whatever memcheck
 * does beyond this is what exactness and threads cost; what this costs,
 * no design that walks and keeps a table (and scrubs) can avoid.  Built by bench.mk (bench/libfloor_interpose.so);
 * bench/run.sh times it in the same rounds as bare and memcheck, and
 * bench/targets weighs memcheck against it (doc/costs.md, sessions 32
 * and 33).
 *
 * FLOOR_DEPOT=1 (default 0: off) adds (d): a stack the 64-slot cache does
 * not name is looked up by its hash in a depot, an open-addressing table
 * of 16-byte slots (hash, id; half full at most), and a hash not there is
 * stored once, its frames walked again into an arena that only grows:
 * the least a tracker that reports allocation stacks does beyond (a),
 * and what the plain floor leaves out (its cache hands a new id to every
 * stack it lost).  Where a program's stacks are many (tree_bench.c: some
 * 90,000), that lookup, the stores and the memory they take are weighed
 * against memcheck's depot (doc/costs.md, 2026-12-06 stack37); make
 * bench times it on the tree (run.sh's pfdepot).  Per thread, as the
 * table.
 *
 * FLOOR_CHECK=1: at exit, "floor_interpose: peak N bytes" on standard
 * error, the main thread's peak of live bytes; run.sh's untimed check
 * that the preload is in front of the allocator (with the wrong order it
 * would see nothing and time as bare) without a branch in the timed path.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define EXPORT __attribute__((visibility("default")))

#include "next.h" /* next_*, resolve, boot.h's buffer */

static int depth = 16;
static int table_on = 1;
static int depot_on;
static int check;
static size_t scrub_cap; /* FLOOR_SCRUB, a multiple of 8; 0: off */
#if defined(__x86_64__)
static int scrub_avx2;
#endif
/* The main thread's stack top (the loader's): a walk stops at or above
 * it; another thread's walk ends at its start routine's rbp of 0. */
extern void *__libc_stack_end;
static uintptr_t stack_top;

#define K 0x9e3779b97f4a7c15ull

struct ent {
	uintptr_t p;  /* 0: empty */
	uint64_t w;   /* size << 27 | stack id, as memcheck's entries */
};

/* An open-addressing table of entries keyed by p, half full at most. */
struct tab {
	struct ent *e;
	uint64_t mask, n;
	unsigned shift;
};

static __thread __attribute__((tls_model("initial-exec"))) struct {
	struct tab t; /* (b): the live blocks */
	int64_t live, peak;
	uint64_t hash[64];
	uint32_t id[64];
	uint32_t next_id;
	/* (d): the depot, entries keyed by the stack's hash (0 kept as 1),
	 * the id their value */
	struct tab d;
	uintptr_t *arena, *arena_end;
} me;

__attribute__((constructor)) static void init(void)
{
	const char *d = getenv("FLOOR_DEPTH"), *t = getenv("FLOOR_TABLE"),
		   *c = getenv("FLOOR_CHECK"), *sc = getenv("FLOOR_SCRUB"),
		   *dp = getenv("FLOOR_DEPOT");
	depot_on = dp && *dp == '1';
	if (d)
		depth = atoi(d);
	if (t)
		table_on = atoi(t);
	if (sc && atoi(sc) > 0)
		scrub_cap = (size_t)atoi(sc) & ~(size_t)7;
#if defined(__x86_64__)
	scrub_avx2 = __builtin_cpu_supports("avx2");
#endif
	check = c && *c == '1';
	stack_top = (uintptr_t)__libc_stack_end;
	if (!next_free)
		resolve();
}

/* Digits by hand: stdio would allocate through the wrappers at exit. */
__attribute__((destructor)) static void report(void)
{
	static const char head[] = "floor_interpose: peak ";
	char buf[sizeof head + 32], *q = buf + sizeof buf;
	uint64_t v = me.peak > 0 ? (uint64_t)me.peak : 0;
	if (!check)
		return;
	*--q = '\n';
	memcpy(q -= 6, " bytes", 6);
	do
		*--q = (char)('0' + v % 10);
	while (v /= 10);
	memcpy(q -= sizeof head - 1, head, sizeof head - 1);
	ssize_t r = write(2, q, (size_t)(buf + sizeof buf - q));
	(void)r;
}

/* The frames from fp, as stack_of walks them, stored at the arena's end
 * (their number first); 0 where no room could be mapped. */
static int depot_store(const uintptr_t *fp)
{
	if (me.arena_end - me.arena < 1 + depth) {
		size_t len = 1 << 20;
		void *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED)
			return 0;
		me.arena = a;
		me.arena_end = (uintptr_t *)((char *)a + len);
	}
	uintptr_t *n = me.arena++, lo = (uintptr_t)fp;
	*n = 0;
	for (int i = 0; i < depth; i++) {
		uintptr_t f = (uintptr_t)fp;
		if (f < lo || f >= stack_top || (f & 7))
			break;
		*me.arena++ = fp[1];
		++*n;
		lo = f + 16;
		fp = (const uintptr_t *)fp[0];
	}
	return 1;
}

static void put(struct ent *e, uint64_t mask, unsigned shift, uintptr_t p, uint64_t w)
{
	uint64_t i = (p * K) >> shift;
	while (e[i].p)
		i = (i + 1) & mask;
	e[i].p = p;
	e[i].w = w;
}

/* Twice the slots at half full (4,096 to start), every entry put again. */
static int grow(struct tab *t)
{
	uint64_t slots = t->e ? (t->mask + 1) * 2 : 4096;
	struct ent *e = mmap(NULL, slots * sizeof *e, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e == MAP_FAILED)
		return 0;
	unsigned shift = (unsigned)__builtin_clzll(slots) + 1;
	if (t->e) {
		for (uint64_t i = 0; i <= t->mask; i++)
			if (t->e[i].p)
				put(e, slots - 1, shift, t->e[i].p, t->e[i].w);
		munmap(t->e, (t->mask + 1) * sizeof *e);
	}
	t->e = e;
	t->mask = slots - 1;
	t->shift = shift;
	return 1;
}

/* (d): the id of the stack of hash h walked from fp, stored where new. */
static __attribute__((noinline)) uint32_t depot_id(uint64_t h, const uintptr_t *fp)
{
	h = h ? h : 1;
	if (me.d.e) {
		for (uint64_t i = (h * K) >> me.d.shift;; i = (i + 1) & me.d.mask) {
			if (me.d.e[i].p == h)
				return (uint32_t)me.d.e[i].w;
			if (!me.d.e[i].p)
				break;
		}
	}
	if ((2 * (me.d.n + 1) > me.d.mask + 1 && !grow(&me.d)) || !depot_store(fp))
		return 0;
	uint32_t id = ++me.next_id & ((1u << 27) - 1);
	put(me.d.e, me.d.mask, me.d.shift, h, id);
	me.d.n++;
	return id;
}

/* The frames from fp (the wrapper's own record: fp[1] is the program's
 * call), hashed and named: a chain of dependent loads, as every
 * frame-pointer unwinder's. */
static inline __attribute__((always_inline)) uint32_t stack_of(const uintptr_t *fp)
{
	uint64_t h = 0;
	const uintptr_t *fp0 = fp;
	uintptr_t lo = (uintptr_t)fp;
	for (int i = 0; i < depth; i++) {
		uintptr_t f = (uintptr_t)fp;
		if (f < lo || f >= stack_top || (f & 7))
			break;
		h = (h + fp[1]) * K;
		lo = f + 16;
		fp = (const uintptr_t *)fp[0];
	}
	unsigned s = (unsigned)(h >> 58);
	if (__builtin_expect(me.hash[s] != h, 0)) {
		me.hash[s] = h;
		me.id[s] = depot_on ? depot_id(h, fp0) : ++me.next_id & ((1u << 27) - 1);
	}
	return me.id[s];
}

/* (c), the scrub: a word holds an address when it lies in [4096, 2^48). */
#define IS_ADDR(v) ((v) - 4096 < ((uint64_t)1 << 48) - 4096)

#if defined(__x86_64__)
/* Eight words a step with one test (two compares, an or), the last step
 * the block's last eight (overlapping: a word cleared twice reads 0 the
 * second time); four to seven words as two overlapping fours; a store
 * only where a word holds an address, so a page nobody wrote is never
 * written.  Callgrind, a malloc_bench step (glibc / jemalloc): this
 * scrub +89 / +83 instructions, memcheck's +76 / +70; four words a test
 * took +120 / +117.
 * Signed compares on words biased by 2^63 - 4096: w + bias < limit. */
#define BIAS (INT64_MAX - 4095)
#define LIMIT ((long long)UINT64_C(0x8000fffffffff000))
__attribute__((target("avx2"), always_inline)) static inline void scrub8(uint64_t *lo,
									uint64_t *hi)
{
	const __m256i bias = _mm256_set1_epi64x(BIAS), limit = _mm256_set1_epi64x(LIMIT);
	__m256i a = _mm256_cmpgt_epi64(limit, _mm256_add_epi64(_mm256_loadu_si256((void *)lo), bias));
	__m256i b = _mm256_cmpgt_epi64(limit, _mm256_add_epi64(_mm256_loadu_si256((void *)hi), bias));
	__m256i ab = _mm256_or_si256(a, b);
	if (__builtin_expect(_mm256_testz_si256(ab, ab), 1))
		return;
	if (!_mm256_testz_si256(a, a))
		_mm256_maskstore_epi64((long long *)lo, a, _mm256_setzero_si256());
	if (!_mm256_testz_si256(b, b))
		_mm256_maskstore_epi64((long long *)hi, b, _mm256_setzero_si256());
}

__attribute__((target("avx2"))) static void scrub_wide(uint64_t *w, uint64_t *end)
{
	if (end - w < 8) {
		scrub8(w, end - 4);
		return;
	}
	for (; w + 8 < end; w += 8)
		scrub8(w, w + 4);
	scrub8(end - 8, end - 4);
}
#endif

/* The words of p from byte from up to the reach (above) cleaned. */
static __attribute__((noinline)) void scrub(void *p, size_t from, size_t n)
{
	size_t to = n;
	if (n > scrub_cap) {
		size_t rest = 4096 - ((uintptr_t)p & 4095);
		to = rest < scrub_cap ? rest : scrub_cap;
	}
	uint64_t *w = (uint64_t *)((char *)p + ((from + 7) & ~(size_t)7));
	uint64_t *end = (uint64_t *)((char *)p + (to & ~(size_t)7));
#if defined(__x86_64__)
	if (scrub_avx2 && end - w >= 4) {
		scrub_wide(w, end);
		return;
	}
#endif
	for (; w < end; w++)
		if (IS_ADDR(*w))
			*w = 0;
}

static inline __attribute__((always_inline)) void enter(void *p, size_t n, const uintptr_t *fp)
{
	uint32_t id = depth > 0 ? stack_of(fp) : 0;
	if (!table_on) {
		__asm__ volatile("" : : "r"(id)); /* the walk is not dead code */
		return;
	}
	if (__builtin_expect(2 * (me.t.n + 1) > me.t.mask + 1, 0) && !grow(&me.t))
		return;
	put(me.t.e, me.t.mask, me.t.shift, (uintptr_t)p, (uint64_t)n << 27 | id);
	me.t.n++;
	me.live += (int64_t)n;
	if (me.live > me.peak)
		me.peak = me.live;
}

/* The entry of p taken out, the cluster after it shifted back so that
 * every entry stays reachable from its home slot. */
static inline __attribute__((always_inline)) size_t leave(void *p)
{
	if (!table_on || !me.t.e)
		return 0;
	uint64_t i = ((uintptr_t)p * K) >> me.t.shift;
	while (me.t.e[i].p != (uintptr_t)p) {
		if (!me.t.e[i].p)
			return 0; /* not ours: before init, or another thread's */
		i = (i + 1) & me.t.mask;
	}
	size_t n = (size_t)(me.t.e[i].w >> 27);
	me.live -= (int64_t)n;
	me.t.n--;
	for (uint64_t j = (i + 1) & me.t.mask;; j = (j + 1) & me.t.mask) {
		uintptr_t q = me.t.e[j].p;
		if (!q)
			break;
		uint64_t home = (q * K) >> me.t.shift;
		/* q stays where it is if its home lies cyclically in (i, j] */
		if (((j - home) & me.t.mask) < ((j - i) & me.t.mask))
			continue;
		me.t.e[i] = me.t.e[j];
		i = j;
	}
	me.t.e[i].p = 0;
	return n;
}

EXPORT void *malloc(size_t n)
{
	if (__builtin_expect(!next_malloc, 0)) {
		if (resolving)
			return boot_alloc(n);
		resolve();
	}
	void *p = next_malloc(n);
	if (p) {
		enter(p, n, __builtin_frame_address(0));
		if (scrub_cap)
			scrub(p, 0, n);
	}
	return p;
}

EXPORT void *calloc(size_t a, size_t b)
{
	if (__builtin_expect(!next_calloc, 0)) {
		if (resolving)
			return a && b > sizeof boot / a ? NULL : boot_alloc(a * b);
		resolve();
	}
	void *p = next_calloc(a, b);
	if (p)
		enter(p, a * b, __builtin_frame_address(0));
	return p;
}

EXPORT void *realloc(void *p, size_t n)
{
	if (__builtin_expect(is_boot(p), 0))
		return boot_realloc(p, n);
	if (__builtin_expect(!next_realloc, 0))
		resolve();
	void *q = next_realloc(p, n);
	if (q || !n) {
		size_t kept = p ? leave(p) : 0;
		if (q) {
			enter(q, n, __builtin_frame_address(0));
			/* what realloc kept, up to the old size (0 where the
			 * table did not know the block: all of it) */
			if (scrub_cap && kept < n)
				scrub(q, kept, n);
		}
	}
	return q;
}

EXPORT void free(void *p)
{
	if (!p || __builtin_expect(is_boot(p), 0))
		return;
	if (__builtin_expect(!next_free, 0))
		resolve();
	leave(p);
	next_free(p);
}
