/*
 * family.c - every function of the malloc family in its own region; the
 * program checks its own figures with memcheck_end() and says on stderr
 * which one was wrong ("family CASE: FIGURE = GOT, expected WANT").
 * Exit status: the number of wrong figures (0: all as expected).
 *
 * usage: family CASE [count-only]   (CASE: malloc, malloc_fail, calloc,
 *        calloc_warm, realloc, realloc_fail, reallocarray, reallocarray_warm, free_null, posix_memalign,
 *        aligned_alloc, memalign, valloc, pvalloc, aligned_warm, usable_size;
 *        count-only: run with MEMCHECK_TRACK=0, which measures neither
 *        freed nor live bytes and lists no leaks)
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

/* A realloc that fails leaves the old block alive; reading it afterwards
 * is the point of realloc_fail and reallocarray, not a use after free. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif

static int failures;
static const char *kase;
static int count_only;

static void expect(const char *what, uint64_t got, uint64_t want)
{
	if (got != want) {
		fprintf(stderr, "family %s: %s = %llu, expected %llu\n", kase, what,
			(unsigned long long)got, (unsigned long long)want);
		failures++;
	}
}

static void expect_true(const char *what, int ok)
{
	if (!ok) {
		fprintf(stderr, "family %s: expected %s\n", kase, what);
		failures++;
	}
}

/* errno must come back as the program left it after a successful call. */
#define ERRNO_KEPT(call)                                                  \
	do {                                                              \
		errno = 1234;                                             \
		call;                                                     \
		if (errno != 1234) {                                      \
			fprintf(stderr, "family %s: errno = %d after %s, expected 1234 (unchanged)\n", \
				kase, errno, #call);                      \
			failures++;                                       \
		}                                                         \
	} while (0)

struct want {
	uint64_t allocs, frees, reallocs, failed, bytes_allocated, bytes_freed;
	uint64_t live_blocks, live_bytes;
};

static void end_and_check(const struct want *w)
{
	struct memcheck_result r;
	int rc = memcheck_end(&r);
	expect("memcheck_end() != -1", rc == -1, 0);
	expect("allocs", r.allocs, w->allocs);
	expect("frees", r.frees, w->frees);
	expect("reallocs", r.reallocs, w->reallocs);
	expect("failed_allocs", r.failed_allocs, w->failed);
	expect("bytes_allocated", r.bytes_allocated, w->bytes_allocated);
	expect("live_blocks", r.live_blocks, w->live_blocks);
	expect("double_frees", r.double_frees, 0);
	expect("invalid_frees", r.invalid_frees, 0);
	if (count_only)
		return;
	expect("bytes_freed", r.bytes_freed, w->bytes_freed);
	expect("live_bytes", r.live_bytes, w->live_bytes);
	expect("pass (verdict)", (uint64_t)r.pass, w->live_blocks == 0);
}

static int aligned(const void *p, size_t a)
{
	return p && ((uintptr_t)p & (a - 1)) == 0;
}

/* Sizes the compiler cannot see, so it neither warns nor folds. */
static volatile size_t huge = SIZE_MAX;

static void case_malloc(void)
{
	void *p, *q;
	memcheck_begin("malloc");
	ERRNO_KEPT(p = malloc(100));
	ERRNO_KEPT(q = malloc(0));
	expect_true("malloc(100) aligned to 16", aligned(p, 16));
	memset(p, 1, 100);
	ERRNO_KEPT(free(q));
	ERRNO_KEPT(free(p));
	end_and_check(&(struct want){ .allocs = 2, .frees = 2, .bytes_allocated = 100,
				      .bytes_freed = 100 });
}

static void case_malloc_fail(void)
{
	memcheck_begin("malloc_fail");
	errno = 0;
	void *p = malloc(huge);
	int e = errno;
	expect_true("malloc(SIZE_MAX) == NULL", p == NULL);
	expect("errno after malloc(SIZE_MAX) (ENOMEM)", (uint64_t)e, ENOMEM);
	end_and_check(&(struct want){ .failed = 1 });
}

/* calloc(10, 12), zeroed, and a product that overflows, which fails
 * with ENOMEM: the block of 120 bytes handed back. */
static unsigned char *calloc_and_overflow(void)
{
	unsigned char *p;
	ERRNO_KEPT(p = calloc(10, 12));
	int zero = p != NULL;
	for (int i = 0; p && i < 120; i++)
		zero &= p[i] == 0;
	expect_true("calloc(10, 12) zeroed", zero);
	errno = 0;
	void *q = calloc(huge / 2 + 1, 2);
	int e = errno;
	expect_true("calloc(SIZE_MAX/2+1, 2) == NULL (overflow)", q == NULL);
	expect("errno after calloc overflow (ENOMEM)", (uint64_t)e, ENOMEM);
	return p;
}

static void case_calloc(void)
{
	memcheck_begin("calloc");
	unsigned char *p = calloc_and_overflow();
	ERRNO_KEPT(free(p));
	end_and_check(&(struct want){ .allocs = 1, .frees = 1, .failed = 1,
				      .bytes_allocated = 120, .bytes_freed = 120 });
}

/* The same past the count at which count-only calls read the limits
 * (lib/limits.c, MC_LIMITS_AFTER: 8192 calls, here callocs alone): a
 * size that cannot fail then reaches the allocator by a jump, counted in
 * advance; the overflowing product and a block of 2 MiB (past the size
 * that cannot fail) still have their results looked at. */
static void case_calloc_warm(void)
{
	for (int i = 0; i < 10000; i++)
		free(calloc(1, 16));
	unsigned char *big;
	memcheck_begin("calloc_warm");
	unsigned char *p = calloc_and_overflow();
	ERRNO_KEPT(big = calloc(2, 1 << 20));
	expect_true("calloc(2, 1 MiB) zeroed at both ends", big && !big[0] && !big[(2 << 20) - 1]);
	ERRNO_KEPT(free(p));
	ERRNO_KEPT(free(big));
	end_and_check(&(struct want){ .allocs = 2, .frees = 2, .failed = 1,
				      .bytes_allocated = 120 + (2 << 20),
				      .bytes_freed = 120 + (2 << 20) });
}

static void case_realloc(void)
{
	char *p;
	memcheck_begin("realloc");
	ERRNO_KEPT(p = realloc(NULL, 10));              /* 1 alloc of 10 */
	memcpy(p, "012345678", 10);
	ERRNO_KEPT(p = realloc(p, 100));                /* 1 free + 1 alloc of 100 */
	expect_true("contents kept by realloc growth", p && strcmp(p, "012345678") == 0);
	ERRNO_KEPT(p = realloc(p, 50));                 /* 1 free + 1 alloc of 50 */
	expect_true("contents kept by realloc shrink", p && strcmp(p, "012345678") == 0);
	ERRNO_KEPT(p = realloc(p, 0));                  /* 1 free */
	expect_true("realloc(p, 0) == NULL (glibc)", p == NULL);
	ERRNO_KEPT(p = realloc(NULL, 0));               /* 1 alloc of 0 */
	expect_true("realloc(NULL, 0) != NULL (glibc)", p != NULL);
	free(p);                                        /* 1 free */
	end_and_check(&(struct want){ .allocs = 4, .frees = 4, .reallocs = 5,
				      .bytes_allocated = 160, .bytes_freed = 160 });
}

static void case_realloc_fail(void)
{
	unsigned char *p = NULL;
	memcheck_begin("realloc_fail");
	p = malloc(64);
	memset(p, 0xab, 64);
	errno = 0;
	void *q = realloc(p, huge - 64);
	int e = errno;
	expect_true("realloc(p, SIZE_MAX-64) == NULL", q == NULL);
	expect("errno after failed realloc (ENOMEM)", (uint64_t)e, ENOMEM);
	int intact = 1;
	for (int i = 0; i < 64; i++)
		intact &= p[i] == 0xab;
	expect_true("old block intact after failed realloc", intact);
	/* the old block is still live: it is the region's leftover */
	end_and_check(&(struct want){ .allocs = 1, .reallocs = 1, .failed = 1,
				      .bytes_allocated = 64, .live_blocks = 1,
				      .live_bytes = 64 });
	/* and freeing it later is an ordinary free, not a heap error */
	memcheck_begin("realloc_fail_free");
	free(p);
	end_and_check(&(struct want){ .frees = 1, .bytes_freed = 64 });
}

/* reallocarray's calls, in the region begun (reallocarray and
 * reallocarray_warm). */
static void reallocarray_calls(void)
{
	char *p;
	ERRNO_KEPT(p = reallocarray(NULL, 10, 8));      /* 1 alloc of 80 */
	strcpy(p, "abc");
	ERRNO_KEPT(p = reallocarray(p, 20, 8));         /* 1 free + 1 alloc of 160 */
	expect_true("contents kept by reallocarray", p && strcmp(p, "abc") == 0);
	errno = 0;
	void *q = reallocarray(p, huge / 4, 8);         /* overflow */
	int e = errno;
	expect_true("reallocarray overflow returns NULL", q == NULL);
	expect("errno after reallocarray overflow (ENOMEM)", (uint64_t)e, ENOMEM);
	expect_true("block intact after reallocarray overflow", strcmp(p, "abc") == 0);
	ERRNO_KEPT(free(p));
	end_and_check(&(struct want){ .allocs = 2, .frees = 2, .reallocs = 3, .failed = 1,
				      .bytes_allocated = 240, .bytes_freed = 240 });
}

static void case_reallocarray(void)
{
	memcheck_begin("reallocarray");
	reallocarray_calls();
}

/* The same past the limits' read (10,000 mallocs first): count-only's
 * reallocarray then counts a product that cannot fail in advance and
 * jumps to the allocator (interpose.c); the overflow still fails. */
static void case_reallocarray_warm(void)
{
	for (int i = 0; i < 10000; i++)
		free(malloc(16));
	memcheck_begin("reallocarray_warm");
	reallocarray_calls();
}

static void case_free_null(void)
{
	memcheck_begin("free_null");
	ERRNO_KEPT(free(NULL));
	end_and_check(&(struct want){ 0 });
}

static void case_posix_memalign(void)
{
	void *p = NULL, *q = NULL, *bad = (void *)&huge;
	int rc1, rc2, rc3;
	memcheck_begin("posix_memalign");
	ERRNO_KEPT(rc1 = posix_memalign(&p, 64, 100));
	ERRNO_KEPT(rc2 = posix_memalign(&q, 4096, 10));
	rc3 = posix_memalign(&bad, 3, 10);              /* not a power of two */
	expect("posix_memalign(64) return", (uint64_t)rc1, 0);
	expect("posix_memalign(4096) return", (uint64_t)rc2, 0);
	expect("posix_memalign(3) return (EINVAL)", (uint64_t)rc3, EINVAL);
	expect_true("posix_memalign(3) leaves *out alone", bad == (void *)&huge);
	expect_true("posix_memalign 64-aligned", aligned(p, 64));
	expect_true("posix_memalign 4096-aligned", aligned(q, 4096));
	free(p);
	free(q);
	/* the EINVAL call is a failed allocation call */
	end_and_check(&(struct want){ .allocs = 2, .frees = 2, .failed = 1,
				      .bytes_allocated = 110, .bytes_freed = 110 });
}

static void case_aligned_alloc(void)
{
	void *p, *q;
	memcheck_begin("aligned_alloc");
	ERRNO_KEPT(p = aligned_alloc(256, 512));
	ERRNO_KEPT(q = aligned_alloc(64, 64));
	expect_true("aligned_alloc 256-aligned", aligned(p, 256));
	expect_true("aligned_alloc 64-aligned", aligned(q, 64));
	free(p);
	free(q);
	end_and_check(&(struct want){ .allocs = 2, .frees = 2, .bytes_allocated = 576,
				      .bytes_freed = 576 });
}

static void case_memalign(void)
{
	void *p, *q;
	memcheck_begin("memalign");
	ERRNO_KEPT(p = memalign(128, 100));
	ERRNO_KEPT(q = memalign(16, 7));
	expect_true("memalign 128-aligned", aligned(p, 128));
	expect_true("memalign 16-aligned", aligned(q, 16));
	free(p);
	free(q);
	end_and_check(&(struct want){ .allocs = 2, .frees = 2, .bytes_allocated = 107,
				      .bytes_freed = 107 });
}

static void case_valloc(void)
{
	void *p;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	memcheck_begin("valloc");
	ERRNO_KEPT(p = valloc(100));
	expect_true("valloc page-aligned", aligned(p, pg));
	free(p);
	end_and_check(&(struct want){ .allocs = 1, .frees = 1, .bytes_allocated = 100,
				      .bytes_freed = 100 });
}

static void case_pvalloc(void)
{
	void *p, *q;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	memcheck_begin("pvalloc");
	ERRNO_KEPT(p = pvalloc(100));                   /* counted as one page */
	ERRNO_KEPT(q = pvalloc(pg + 1));                /* two pages */
	expect_true("pvalloc page-aligned", aligned(p, pg) && aligned(q, pg));
	expect_true("pvalloc usable size >= rounded size",
		    malloc_usable_size(p) >= pg && malloc_usable_size(q) >= 2 * pg);
	free(p);
	free(q);
	end_and_check(&(struct want){ .allocs = 2, .frees = 2, .bytes_allocated = 3 * pg,
				      .bytes_freed = 3 * pg });
}

/* The aligned family past the count at which count-only calls read the
 * limits (lib/limits.c: 10,000 mallocs first), where a call that can
 * fail only for want of memory is counted in advance and reaches the
 * allocator by a jump (interpose.c, aligned_sure), and with alignments
 * and sizes on both sides of that test: not a power of two, below a
 * pointer's size, 0, at and past the sure size, too large to serve.
 * The allocators differ on some (jemalloc fails an alignment of 0 or
 * 24 where glibc serves it): each call's expected count is what it
 * returned, a block counted (its size, pvalloc's page-rounded), a
 * failure counted failed.  In tracking mode the same calls take the
 * slow path. */
struct aligned_call {
	char fn;        /* p posix_memalign, a aligned_alloc, m memalign, v valloc, V pvalloc */
	size_t align, n;
};

static void case_aligned_warm(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), mib = (size_t)1 << 20;
	size_t far = (size_t)1 << 62; /* an alignment no machine serves */
	const struct aligned_call calls[] = {
		{ 'p', 64, 100 }, { 'p', 4096, 10 }, { 'p', 8, 0 }, { 'p', 3, 10 },
		{ 'p', 4, 10 }, { 'p', 0, 10 }, { 'p', mib / 2, 100 }, { 'p', mib, 100 },
		{ 'p', 64, mib - 1 }, { 'p', 64, mib }, { 'p', far, 16 }, { 'p', 16, huge },
		{ 'a', 256, 512 }, { 'a', 64, 64 }, { 'a', 1, 10 }, { 'a', 0, 16 },
		{ 'a', 24, 48 }, { 'a', mib, 8 }, { 'a', far, 16 }, { 'a', 16, huge },
		{ 'm', 128, 100 }, { 'm', 16, 7 }, { 'm', 4, 3 }, { 'm', 0, 10 },
		{ 'm', 24, 100 }, { 'm', 64, mib }, { 'm', far, 1 }, { 'm', 16, huge },
		{ 'v', 0, 100 }, { 'v', 0, 0 }, { 'v', 0, mib }, { 'v', 0, huge },
		{ 'V', 0, 100 }, { 'V', 0, pg + 1 }, { 'V', 0, huge },
	};
	struct want w = { 0 };
	for (int i = 0; i < 10000; i++)
		free(malloc(16));
	memcheck_begin("aligned_warm");
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		const struct aligned_call *c = &calls[i];
		void *p = NULL;
		size_t counted = c->n, want_align = c->align;
		int e = 1234;
		errno = 1234;
		switch (c->fn) {
		case 'p': {
			void *out = (void *)&huge;
			int rc = posix_memalign(&out, c->align, c->n);
			if (rc == 0)
				p = out;
			else
				expect_true("a failed posix_memalign leaves *out alone",
					    out == (void *)&huge);
			break;
		}
		case 'a': p = aligned_alloc(c->align, c->n); break;
		case 'm': p = memalign(c->align, c->n); break;
		case 'v': p = valloc(c->n); want_align = pg; break;
		default:
			p = pvalloc(c->n);
			want_align = pg;
			counted = (c->n + pg - 1) & ~(pg - 1);
			break;
		}
		e = errno;
		if (!p) {
			w.failed++;
			continue;
		}
		if (e != 1234) {
			fprintf(stderr, "family %s: errno = %d after call %zu (%c %zu %zu), expected 1234\n",
				kase, e, i, c->fn, c->align, c->n);
			failures++;
		}
		if (want_align && !(want_align & (want_align - 1)))
			expect_true("aligned as asked", aligned(p, want_align));
		w.allocs++;
		w.frees++;
		w.bytes_allocated += counted;
		w.bytes_freed += counted;
		free(p);
	}
	end_and_check(&w);
}

static void case_usable_size(void)
{
	void *p = malloc(100);
	size_t n = 0, z = 1;
	memcheck_begin("usable_size");          /* counts nothing */
	ERRNO_KEPT(n = malloc_usable_size(p));
	ERRNO_KEPT(z = malloc_usable_size(NULL));
	end_and_check(&(struct want){ 0 });
	expect_true("malloc_usable_size(p) >= 100", n >= 100);
	expect("malloc_usable_size(NULL)", z, 0);
	free(p);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "malloc", case_malloc },
	{ "malloc_fail", case_malloc_fail },
	{ "calloc", case_calloc },
	{ "calloc_warm", case_calloc_warm },
	{ "realloc", case_realloc },
	{ "realloc_fail", case_realloc_fail },
	{ "reallocarray", case_reallocarray },
	{ "reallocarray_warm", case_reallocarray_warm },
	{ "free_null", case_free_null },
	{ "posix_memalign", case_posix_memalign },
	{ "aligned_alloc", case_aligned_alloc },
	{ "memalign", case_memalign },
	{ "valloc", case_valloc },
	{ "pvalloc", case_pvalloc },
	{ "aligned_warm", case_aligned_warm },
	{ "usable_size", case_usable_size },
};

int main(int argc, char **argv)
{
	count_only = argc == 3 && strcmp(argv[2], "count-only") == 0;
	for (size_t i = 0; (argc == 2 || count_only) && i < sizeof cases / sizeof cases[0]; i++) {
		if (strcmp(argv[1], cases[i].name) == 0) {
			kase = cases[i].name;
			cases[i].fn();
			return failures > 100 ? 100 : failures;
		}
	}
	fprintf(stderr, "usage: family CASE [count-only]\n");
	return 125;
}
