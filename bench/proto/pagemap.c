/*
 * pagemap.c - a PROTOTYPE of a live-block table keyed by address locality,
 * to weigh against lib/blocks.c's sharded hash (task table3, issue 15).
 * Not memcheck, not built by make: bench/proto/build.sh builds it,
 * bench/proto/measure.sh times it.  A preload of its own: malloc, free,
 * calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc,
 * pvalloc, reallocarray forward to the next allocator (dlsym RTLD_NEXT)
 * and insert or remove the block here; no stacks, no regions, a live
 * count and live bytes a thread, nothing else.
 *
 * The map: the pointer's page (PAGE_SHIFT bits) through a two-level radix
 * tree (as tcmalloc's pagemap): a root of pointers to leaves of 32-bit
 * record numbers (a leaf covers 2^LEAF_BITS pages), both reserved with
 * MAP_NORESERVE and paged in as touched.  A page with live blocks has a
 * record; two variants (-DTABLE=):
 *
 *  1 COMPACT (the default): 2 KiB pages; a record holds, unsorted, each
 *    live block's key (its offset / 8: blocks of 8 bytes or less are
 *    only 8-aligned under mimalloc, jemalloc and tcmalloc) and 8-byte
 *    value (size | stack | epoch).  Records grow through capacities 4,
 *    12, 24, ... 256 (64 B .. 2.3 KiB); a lookup compares 16 keys at a
 *    time (SSE2).  A sparse page costs a 64-byte record, a dense one
 *    9 bytes a block plus the slack of its capacity.
 *  2 SLOTS (the brief's design): 4 KiB pages, a 2 KiB record of 256
 *    8-byte slots indexed by offset / 16; blocks not 16-aligned go to an
 *    overflow hash.  A free is two dependent loads and a slot.
 *  0 NONE: no table at all, the same wrappers and counters: the floor.
 *
 * The value: size in the low SIZE_BITS, stack id, epoch in the top 16
 * bits (epoch >= 1, so a live value is never 0).  Blocks that do not
 * fit (size >= 2^SIZE_BITS, pointer >= 2^48) go to the overflow hash.
 *
 * Threads: no lock until pthread_create is first called (the wrapper
 * below sets `multi`); from then on a spin lock per 2 MiB of address
 * space (256 stripes, a cache line each) around each page's record, and
 * one lock for the record arena and the overflow hash.  memcheck's own
 * protocol (owner groups, membarrier) would keep one-thread-per-arena
 * programs lock-free; this prototype's 4-thread figure is the pessimistic
 * one.
 *
 * At exit, with PROTO_STATS=1: live blocks, table bytes (records in use,
 * arena touched, leaves' pages touched), and a walk of every live block
 * in address order timed against collecting them and radix sorting (what
 * scan.c does today), on stderr.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <immintrin.h>

#ifndef TABLE
#define TABLE 1
#endif

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define NOINLINE __attribute__((noinline))

#if TABLE == 2
#define PAGE_SHIFT 12
#define GRAN_SHIFT 4
#else
#define PAGE_SHIFT 11
#define GRAN_SHIFT 3
#endif
#define LEAF_BITS 18
#define ROOT_BITS (48 - PAGE_SHIFT - LEAF_BITS)
#define SIZE_BITS 21
#define STACK_BITS 27
#define SIZE_MASK ((UINT64_C(1) << SIZE_BITS) - 1)

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static int (*next_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static _Atomic int multi;
/* Per thread, as memcheck's counters are (a shared line would be the 4-thread
 * runs' cost, not the table's); PROTO_STATS reads the main thread's. */
static __thread __attribute__((tls_model("initial-exec"))) uint64_t live_blocks, live_bytes;
static const uint32_t epoch = 1;

/* ---- locks ---------------------------------------------------------------- */

struct stripe {
	atomic_int lock;
} __attribute__((aligned(64)));
static struct stripe stripes[256];
static struct stripe arena_lock;

static inline void spin(atomic_int *l)
{
	while (atomic_exchange_explicit(l, 1, memory_order_acquire))
		while (atomic_load_explicit(l, memory_order_relaxed))
			__builtin_ia32_pause();
}

static inline void unspin(atomic_int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

static inline atomic_int *stripe_of(uintptr_t p)
{
	return &stripes[(p >> 21) & 255].lock;
}

static void *map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static inline uint64_t pack(uint64_t size, uint32_t stack)
{
	return (uint64_t)epoch << 48 | (uint64_t)stack << SIZE_BITS | size;
}

/* ---- the overflow hash: blocks no record holds ------------------------------
 * Open addressing, linear probing, deletion by backward shift; doubles at
 * half full.  Under arena_lock once multi. */
struct ov {
	uintptr_t p;
	uint64_t v;
};
static struct ov *ovt;
static size_t ov_cap, ov_n;
static size_t table_bytes; /* bytes of records in use + overflow array */

static inline size_t ov_home(uintptr_t p, size_t cap)
{
	return (size_t)((p * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static void ov_put_locked(uintptr_t p, uint64_t v);

static void ov_grow(void)
{
	struct ov *old = ovt;
	size_t oc = ov_cap;
	ov_cap = oc ? oc * 2 : 1024;
	ovt = map(ov_cap * sizeof *ovt);
	table_bytes += (ov_cap - oc) * sizeof *ovt;
	ov_n = 0;
	for (size_t i = 0; i < oc; i++)
		if (old[i].p)
			ov_put_locked(old[i].p, old[i].v);
	if (old)
		munmap(old, oc * sizeof *old);
}

static void ov_put_locked(uintptr_t p, uint64_t v)
{
	if ((ov_n + 1) * 2 > ov_cap)
		ov_grow();
	size_t i = ov_home(p, ov_cap);
	while (ovt[i].p)
		i = (i + 1) & (ov_cap - 1);
	ovt[i].p = p;
	ovt[i].v = v;
	ov_n++;
}

static NOINLINE void ov_put(uintptr_t p, uint64_t v)
{
	if (multi)
		spin(&arena_lock.lock);
	ov_put_locked(p, v);
	if (multi)
		unspin(&arena_lock.lock);
}

static NOINLINE bool ov_take(uintptr_t p, uint64_t *v)
{
	bool found = false;
	if (multi)
		spin(&arena_lock.lock);
	if (ov_cap) {
		size_t i = ov_home(p, ov_cap);
		while (ovt[i].p && ovt[i].p != p)
			i = (i + 1) & (ov_cap - 1);
		if (ovt[i].p) {
			found = true;
			*v = ovt[i].v;
			/* backward shift */
			size_t j = i;
			for (;;) {
				j = (j + 1) & (ov_cap - 1);
				if (!ovt[j].p)
					break;
				size_t h = ov_home(ovt[j].p, ov_cap);
				if (((j - h) & (ov_cap - 1)) >= ((j - i) & (ov_cap - 1))) {
					ovt[i] = ovt[j];
					i = j;
				}
			}
			ovt[i].p = 0;
			ov_n--;
		}
	}
	if (multi)
		unspin(&arena_lock.lock);
	return found;
}

/* ---- the page map ---------------------------------------------------------- */

static _Atomic(uint32_t *) root[1u << ROOT_BITS];
static size_t leaves;

static inline _Atomic uint32_t *cell_of(uintptr_t p)
{
	uint64_t page = (uint64_t)p >> PAGE_SHIFT;
	uint32_t *leaf = atomic_load_explicit(&root[page >> LEAF_BITS], memory_order_acquire);
	if (unlikely(!leaf))
		return NULL;
	return (_Atomic uint32_t *)&leaf[page & ((1u << LEAF_BITS) - 1)];
}

static NOINLINE _Atomic uint32_t *cell_make(uintptr_t p)
{
	uint64_t page = (uint64_t)p >> PAGE_SHIFT;
	_Atomic(uint32_t *) *top = &root[page >> LEAF_BITS];
	uint32_t *leaf = map(sizeof(uint32_t) << LEAF_BITS), *none = NULL;
	if (!atomic_compare_exchange_strong(top, &none, leaf))
		munmap(leaf, sizeof(uint32_t) << LEAF_BITS);
	else
		leaves++;
	return cell_of(p);
}

/* ---- the record arena -------------------------------------------------------
 * One reserved range; a record is named by its 64-byte unit (32 bits: up
 * to 256 GiB).  Bump allocation, a free list per class. */
#define ARENA_BYTES (UINT64_C(1) << 32) /* 4 GiB reserved: valgrind refuses 64 */
static char *arena;
static size_t arena_top = 64; /* unit 0 is "no record" */
#if TABLE == 2
#define NCLS 1
static const uint16_t caps[NCLS] = { 256 };
#else
#define NCLS 7
static const uint16_t caps[NCLS] = { 4, 12, 24, 48, 96, 176, 256 };
#endif
static uint32_t free_list[NCLS];

struct rec {
	uint16_t n, cls;
	uint16_t cap, voff;    /* capacity; the values' byte offset (no table lookups) */
	uint8_t keys[]; /* COMPACT: keys (padded to 16), then values; a free
			 * record's first 4 bytes name the next free one */
};

static inline size_t keys_room(unsigned cls)
{
	return ((size_t)caps[cls] + 15) & ~(size_t)15;
}

static inline size_t rec_bytes(unsigned cls)
{
#if TABLE == 2
	(void)cls;
	return 64 + 256 * 8; /* header line, then the slots */
#else
	return (offsetof(struct rec, keys) + keys_room(cls) + 8 * (size_t)caps[cls] + 63) & ~(size_t)63;
#endif
}

static inline struct rec *rec_at(uint32_t u)
{
	return (struct rec *)(arena + (size_t)u * 64);
}

static inline uint64_t *vals_of(struct rec *r)
{
#if TABLE == 2
	return (uint64_t *)((char *)r + 64);
#else
	return (uint64_t *)((char *)r + r->voff);
#endif
}

static NOINLINE uint32_t rec_new(unsigned cls)
{
	if (multi)
		spin(&arena_lock.lock);
	uint32_t u = free_list[cls];
	if (u) {
		memcpy(&free_list[cls], rec_at(u)->keys, sizeof(uint32_t));
	} else {
		u = (uint32_t)(arena_top / 64);
		arena_top += rec_bytes(cls);
	}
	table_bytes += rec_bytes(cls);
	if (multi)
		unspin(&arena_lock.lock);
	struct rec *r = rec_at(u);
	r->n = 0;
	r->cls = (uint16_t)cls;
	r->cap = caps[cls];
	r->voff = (uint16_t)(offsetof(struct rec, keys) + keys_room(cls));
	/* SLOTS: a record is all zero when fresh (mmap) and when freed (n == 0) */
	return u;
}

static NOINLINE void rec_free(uint32_t u)
{
	struct rec *r = rec_at(u);
	if (multi)
		spin(&arena_lock.lock);
	memcpy(r->keys, &free_list[r->cls], sizeof(uint32_t));
	free_list[r->cls] = u;
	table_bytes -= rec_bytes(r->cls);
	if (multi)
		unspin(&arena_lock.lock);
}

#if TABLE == 1
/* The index of key in r, or -1. */
static inline int find_key(const struct rec *r, unsigned key)
{
	__m128i k = _mm_set1_epi8((char)key);
	unsigned n = r->n;
	for (unsigned i = 0; i < n; i += 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(r->keys + i)), k));
		if (n - i < 16)
			m &= (1u << (n - i)) - 1;
		if (m)
			return (int)(i + (unsigned)__builtin_ctz(m));
	}
	return -1;
}

/* r is full: a record of the next class, the same blocks. */
static NOINLINE uint32_t rec_grow(uint32_t u)
{
	struct rec *r = rec_at(u);
	uint32_t nu = rec_new(r->cls + 1u);
	struct rec *nr = rec_at(nu);
	nr->n = r->n;
	memcpy(nr->keys, r->keys, r->n);
	memcpy(vals_of(nr), vals_of(r), r->n * sizeof(uint64_t));
	rec_free(u);
	return nu;
}
#endif

/* ---- insert and remove ----------------------------------------------------- */

static inline bool fits(uintptr_t p, uint64_t size)
{
	return (p >> 48) == 0 && size <= SIZE_MASK
#if TABLE == 2
	       && (p & 15) == 0
#endif
		;
}

static inline void count(int64_t blocks, int64_t bytes)
{
	live_blocks += (uint64_t)blocks;
	live_bytes += (uint64_t)bytes;
}

static NOINLINE void tab_insert(uintptr_t p, uint64_t size, uint32_t stack)
{
	count(1, (int64_t)size);
#if TABLE != 0
	uint64_t v = pack(size, stack);
	if (unlikely(!fits(p, size))) {
		ov_put(p, v);
		return;
	}
	_Atomic uint32_t *c = cell_of(p);
	if (unlikely(!c))
		c = cell_make(p);
	atomic_int *l = NULL;
	if (unlikely(multi))
		spin(l = stripe_of(p));
	uint32_t u = atomic_load_explicit(c, memory_order_relaxed);
	if (!u) {
		u = rec_new(0);
		atomic_store_explicit(c, u, memory_order_relaxed);
	}
	struct rec *r = rec_at(u);
#if TABLE == 1
	if (unlikely(r->n == r->cap)) {
		u = rec_grow(u);
		atomic_store_explicit(c, u, memory_order_relaxed);
		r = rec_at(u);
	}
	unsigned i = r->n++;
	r->keys[i] = (uint8_t)(p >> GRAN_SHIFT);
	vals_of(r)[i] = v;
#else
	vals_of(r)[(p >> GRAN_SHIFT) & 255] = v;
	r->n++;
#endif
	if (l)
		unspin(l);
#else
	(void)p;
	(void)stack;
#endif
}

/* Take p's block out; false when it is not in the table. */
static NOINLINE bool tab_remove(uintptr_t p, uint64_t *vout)
{
#if TABLE != 0
	uint64_t v = 0;
	bool found = false;
	_Atomic uint32_t *c = cell_of(p);
	if (likely(c)) {
		atomic_int *l = NULL;
		if (unlikely(multi))
			spin(l = stripe_of(p));
		uint32_t u = atomic_load_explicit(c, memory_order_relaxed);
		if (likely(u)) {
			struct rec *r = rec_at(u);
			uint64_t *vals = vals_of(r);
#if TABLE == 1
			int i = find_key(r, (uint8_t)(p >> GRAN_SHIFT));
			if (likely(i >= 0)) {
				found = true;
				v = vals[i];
				unsigned last = --r->n;
				r->keys[i] = r->keys[last];
				vals[i] = vals[last];
			}
#else
			uint64_t *s = &vals[(p >> GRAN_SHIFT) & 255];
			if ((p & 15) == 0 && *s) {
				found = true;
				v = *s;
				*s = 0;
				r->n--;
			}
#endif
			if (found && r->n == 0) {
				atomic_store_explicit(c, 0, memory_order_relaxed);
				rec_free(u);
			}
		}
		if (l)
			unspin(l);
	}
	if (!found && !(found = ov_take(p, &v)))
		return false;
	*vout = v;
	count(-1, -(int64_t)(v & SIZE_MASK));
	return true;
#else
	(void)p;
	*vout = 0;
	count(-1, 0);
	return true;
#endif
}

/* ---- the walk in address order, against collect + radix sort -------------- */

struct blk {
	uintptr_t p;
	uint64_t v;
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Every block in address order into out (records' keys sorted in place
 * by insertion sort: at most 256, mostly a few). */
static size_t walk_sorted(struct blk *out)
{
	size_t n = 0;
#if TABLE != 0
	for (size_t t = 0; t < (1u << ROOT_BITS); t++) {
		uint32_t *leaf = atomic_load(&root[t]);
		if (!leaf)
			continue;
		for (size_t k = 0; k < (1u << LEAF_BITS); k++) {
			uint32_t u = leaf[k];
			if (!u)
				continue;
			uintptr_t base = (uintptr_t)((t << LEAF_BITS | k) << PAGE_SHIFT);
			struct rec *r = rec_at(u);
			uint64_t *vals = vals_of(r);
#if TABLE == 1
			size_t first = n;
			for (unsigned i = 0; i < r->n; i++) {
				struct blk b = { base + ((uintptr_t)r->keys[i] << GRAN_SHIFT), vals[i] };
				size_t j = n++;
				while (j > first && out[j - 1].p > b.p) {
					out[j] = out[j - 1];
					j--;
				}
				out[j] = b;
			}
#else
			for (unsigned i = 0; i < 256; i++)
				if (vals[i])
					out[n++] = (struct blk){ base + ((uintptr_t)i << GRAN_SHIFT), vals[i] };
#endif
		}
	}
	/* the overflow's blocks would be merged in here: none in the runs timed */
#endif
	return n;
}

/* What scan.c does today, in outline: every block into an array in table
 * order, then an LSD radix sort on the pointer, 8 bits a pass over the
 * 48 bits. */
static void radix_sort(struct blk *a, struct blk *tmp, size_t n)
{
	for (int shift = 0; shift < 48; shift += 8) {
		size_t cnt[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[((a[i].p >> shift) & 255) + 1]++;
		for (int b = 0; b < 256; b++)
			cnt[b + 1] += cnt[b];
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(a[i].p >> shift) & 255]++] = a[i];
		struct blk *s = a;
		a = tmp;
		tmp = s;
	}
}

static void stats(void)
{
	const char *e = getenv("PROTO_STATS");
	if (!e || *e != '1')
		return;
	size_t n = live_blocks, bytes = (n + 1) * sizeof(struct blk);
	struct blk *a = map(bytes), *b = map(bytes);
	/* both arrays paged in before timing */
	memset(a, 0, bytes);
	memset(b, 0, bytes);
	double t0 = now();
	size_t got = walk_sorted(a);
	double t1 = now();
	/* the same blocks, shuffled by a hash as a hash table holds them, then sorted */
	for (size_t i = 0; i < got; i++) {
		size_t j = (size_t)((a[i].p * 0x9e3779b97f4a7c15ull) >> 20) % (i + 1);
		b[i] = b[j];
		b[j] = a[i];
	}
	double t2 = now();
	radix_sort(b, a, got);
	double t3 = now();
	bool same = true;
	for (size_t i = 0; i + 1 < got; i++)
		same &= b[i].p < b[i + 1].p;
	fprintf(stderr,
		"proto: table=%d live_blocks=%zu walked=%zu live_bytes=%llu table_bytes=%zu arena_touched=%zu "
		"leaves=%zu records_bytes_per_block=%.2f walk_sorted_s=%.4f radix_sort_s=%.4f sorted_ok=%d\n",
		TABLE, n, got, (unsigned long long)live_bytes, table_bytes, arena_top, leaves,
		n ? (double)table_bytes / (double)n : 0.0, t1 - t0, t3 - t2, same);
}

/* ---- the wrappers ---------------------------------------------------------- */

#include "../boot.h" /* boot, is_boot, boot_alloc, resolving */

#define NEXT(name) next_##name = (__typeof__(next_##name))dlsym(RTLD_NEXT, #name)

static void resolve(void)
{
	resolving = 1;
	NEXT(malloc);
	NEXT(calloc);
	NEXT(realloc);
	NEXT(free);
	NEXT(posix_memalign);
	NEXT(memalign);
	NEXT(aligned_alloc);
	NEXT(pthread_create);
	arena = map(ARENA_BYTES);
	if (!arena) {
		static const char msg[] = "pagemap: no arena\n";
		if (write(2, msg, sizeof msg - 1) < 0)
			_exit(99);
		_exit(99);
	}
	resolving = 0;
}

__attribute__((constructor)) static void init(void)
{
	if (!next_free)
		resolve();
	atexit(stats);
}

static inline void *track(void *p, size_t n)
{
	if (likely(p != NULL))
		tab_insert((uintptr_t)p, n, 0);
	return p;
}

EXPORT void *malloc(size_t n)
{
	if (unlikely(!next_malloc)) {
		if (resolving)
			return boot_alloc(n);
		resolve();
	}
	return track(next_malloc(n), n);
}

EXPORT void *calloc(size_t a, size_t b)
{
	if (unlikely(!next_calloc)) {
		if (resolving)
			return a && b > sizeof boot / a ? NULL : boot_alloc(a * b);
		resolve();
	}
	return track(next_calloc(a, b), a * b);
}

EXPORT void free(void *p)
{
	if (!p || unlikely(is_boot(p)))
		return;
	if (unlikely(!next_free))
		resolve();
	uint64_t v;
	tab_remove((uintptr_t)p, &v);
	next_free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
	if (unlikely(is_boot(p))) {
		size_t have = (size_t)(boot + sizeof boot - (char *)p);
		void *q = malloc(n);
		if (q)
			memcpy(q, p, n < have ? n : have);
		return q;
	}
	if (unlikely(!next_realloc))
		resolve();
	if (!p)
		return malloc(n);
	uint64_t v = 0;
	bool had = tab_remove((uintptr_t)p, &v);
	void *q = next_realloc(p, n);
	if (q)
		tab_insert((uintptr_t)q, n, 0);
	else if (had && n)
		tab_insert((uintptr_t)p, v & SIZE_MASK, 0);
	return q;
}

EXPORT void *reallocarray(void *p, size_t a, size_t b)
{
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n);
}

EXPORT int posix_memalign(void **out, size_t al, size_t n)
{
	if (unlikely(!next_posix_memalign))
		resolve();
	int rc = next_posix_memalign(out, al, n);
	if (!rc)
		track(*out, n);
	return rc;
}

EXPORT void *memalign(size_t al, size_t n)
{
	if (unlikely(!next_memalign))
		resolve();
	return track(next_memalign(al, n), n);
}

EXPORT void *aligned_alloc(size_t al, size_t n)
{
	if (unlikely(!next_aligned_alloc))
		resolve();
	return track(next_aligned_alloc(al, n), n);
}

EXPORT void *valloc(size_t n)
{
	return memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

EXPORT void *pvalloc(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return memalign(pg, (n + pg - 1) & ~(pg - 1));
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	if (unlikely(!next_pthread_create))
		resolve();
	atomic_store(&multi, 1);
	return next_pthread_create(t, a, fn, arg);
}
