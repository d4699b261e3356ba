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
 * Not a tool, and deliberately not exact: no stack is checked beyond its
 * hash, nothing is locked (each thread has a table of its own; a block
 * freed by another thread is not found), nothing is scrubbed, no report.
 * Whatever memcheck does beyond this is what exactness, threads and the
 * scan's fidelity cost; what this costs, no design that walks and keeps a
 * table can avoid.  Built by bench.mk (bench/libfloor_interpose.so);
 * bench/run.sh times it in the same rounds as bare and memcheck, and
 * bench/targets weighs memcheck against it (doc/costs.md, sessions 32
 * and 33).
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

#define EXPORT __attribute__((visibility("default")))

#include "next.h" /* next_*, resolve, boot.h's buffer */

static int depth = 16;
static int table_on = 1;
static int check;
/* The main thread's stack top (the loader's): a walk stops at or above
 * it; another thread's walk ends at its start routine's rbp of 0. */
extern void *__libc_stack_end;
static uintptr_t stack_top;

#define K 0x9e3779b97f4a7c15ull

struct ent {
	uintptr_t p;  /* 0: empty */
	uint64_t w;   /* size << 27 | stack id, as memcheck's entries */
};

static __thread __attribute__((tls_model("initial-exec"))) struct {
	struct ent *e;
	uint64_t mask, n;
	unsigned shift;
	int64_t live, peak;
	uint64_t hash[64];
	uint32_t id[64];
	uint32_t next_id;
} me;

__attribute__((constructor)) static void init(void)
{
	const char *d = getenv("FLOOR_DEPTH"), *t = getenv("FLOOR_TABLE"),
		   *c = getenv("FLOOR_CHECK");
	if (d)
		depth = atoi(d);
	if (t)
		table_on = atoi(t);
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

/* The frames from fp (the wrapper's own record: fp[1] is the program's
 * call), hashed and named: a chain of dependent loads, as every
 * frame-pointer unwinder's. */
static inline __attribute__((always_inline)) uint32_t stack_of(const uintptr_t *fp)
{
	uint64_t h = 0;
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
		me.id[s] = ++me.next_id & ((1u << 27) - 1);
	}
	return me.id[s];
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
static int grow(void)
{
	uint64_t slots = me.e ? (me.mask + 1) * 2 : 4096;
	struct ent *e = mmap(NULL, slots * sizeof *e, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e == MAP_FAILED)
		return 0;
	unsigned shift = (unsigned)__builtin_clzll(slots) + 1;
	if (me.e) {
		for (uint64_t i = 0; i <= me.mask; i++)
			if (me.e[i].p)
				put(e, slots - 1, shift, me.e[i].p, me.e[i].w);
		munmap(me.e, (me.mask + 1) * sizeof *e);
	}
	me.e = e;
	me.mask = slots - 1;
	me.shift = shift;
	return 1;
}

static inline __attribute__((always_inline)) void enter(void *p, size_t n, const uintptr_t *fp)
{
	uint32_t id = depth > 0 ? stack_of(fp) : 0;
	if (!table_on) {
		__asm__ volatile("" : : "r"(id)); /* the walk is not dead code */
		return;
	}
	if (__builtin_expect(2 * (me.n + 1) > me.mask + 1, 0) && !grow())
		return;
	put(me.e, me.mask, me.shift, (uintptr_t)p, (uint64_t)n << 27 | id);
	me.n++;
	me.live += (int64_t)n;
	if (me.live > me.peak)
		me.peak = me.live;
}

/* The entry of p taken out, the cluster after it shifted back so that
 * every entry stays reachable from its home slot. */
static inline __attribute__((always_inline)) void leave(void *p)
{
	if (!table_on || !me.e)
		return;
	uint64_t i = ((uintptr_t)p * K) >> me.shift;
	while (me.e[i].p != (uintptr_t)p) {
		if (!me.e[i].p)
			return; /* not ours: before init, or another thread's */
		i = (i + 1) & me.mask;
	}
	me.live -= (int64_t)(me.e[i].w >> 27);
	me.n--;
	for (uint64_t j = (i + 1) & me.mask;; j = (j + 1) & me.mask) {
		uintptr_t q = me.e[j].p;
		if (!q)
			break;
		uint64_t home = (q * K) >> me.shift;
		/* q stays where it is if its home lies cyclically in (i, j] */
		if (((j - home) & me.mask) < ((j - i) & me.mask))
			continue;
		me.e[i] = me.e[j];
		i = j;
	}
	me.e[i].p = 0;
}

EXPORT void *malloc(size_t n)
{
	if (__builtin_expect(!next_malloc, 0)) {
		if (resolving)
			return boot_alloc(n);
		resolve();
	}
	void *p = next_malloc(n);
	if (p)
		enter(p, n, __builtin_frame_address(0));
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
		if (p)
			leave(p);
		if (q)
			enter(q, n, __builtin_frame_address(0));
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
