/*
 * fault.c - failure injection from inside a program: each control of
 * memcheck_fault(3), the NULL/errno contract of every allocation
 * function, failed_allocs and injected.  Checks its own figures and says
 * on stdout which one was wrong ("CASE: WHAT = GOT, expected WANT").
 * Exit status: the number of wrong figures.
 *
 * usage: fault CASE   (transient, persistent, family, site, site_file,
 *        random, env, expect, breakpoint)
 * "random" and "env" print what failed ("pattern: 0010...") for the test
 * to compare across runs.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

/* A failed realloc leaves its block live: the compiler cannot know that
 * the call fails, and this file uses the block after it on purpose. */
#pragma GCC diagnostic ignored "-Wuse-after-free"

static int failures;
static const char *kase;

static void expect(const char *what, unsigned long long got, unsigned long long want)
{
	if (got != want) {
		printf("%s: %s = %llu, expected %llu\n", kase, what, got, want);
		failures++;
	}
}

static struct memcheck_result end(void)
{
	struct memcheck_result r;
	memcheck_end(&r);
	return r;
}

/* Allocations from a function of their own, for site patterns. */
void *site_victim(size_t n);
void *site_bystander(size_t n);
void *site_victim(size_t n)
{
	return malloc(n);
}
void *site_bystander(size_t n)
{
	return malloc(n);
}

static void nth(int persistent)
{
	memcheck_begin(kase);
	memcheck_fail_nth(3, persistent);
	for (int i = 1; i <= 5; i++) {
		errno = 0;
		void *p = malloc(16);
		int want_fail = persistent ? i >= 3 : i == 3;
		char what[64];
		snprintf(what, sizeof what, "malloc #%d is NULL", i);
		expect(what, p == NULL, want_fail);
		snprintf(what, sizeof what, "errno after malloc #%d", i);
		expect(what, (unsigned long long)errno, want_fail ? ENOMEM : 0);
		free(p);
	}
	memcheck_fail_nth(0, 0);
	struct memcheck_result r = end();
	expect("failed_allocs", r.failed_allocs, persistent ? 3 : 1);
	expect("injected", r.injected, persistent ? 3 : 1);
	expect("allocs", r.allocs, persistent ? 2 : 4);
	expect("leaks", r.live_blocks, 0);
}

/* Every allocation entry point fails as the real one would. */
static void family(void)
{
	void *p, *q;
	int rc;
#define FAIL_NEXT() (memcheck_begin(kase), memcheck_fail_nth(1, 0), errno = 0)
#define DONE(name)                                                         \
	do {                                                               \
		struct memcheck_result r_ = end();                         \
		expect(name " failed_allocs", r_.failed_allocs, 1);        \
		expect(name " injected", r_.injected, 1);                  \
	} while (0)
	FAIL_NEXT();
	p = malloc(8);
	expect("malloc NULL", p == NULL, 1);
	expect("malloc errno", (unsigned long long)errno, ENOMEM);
	DONE("malloc");
	FAIL_NEXT();
	p = calloc(2, 8);
	expect("calloc NULL", p == NULL, 1);
	expect("calloc errno", (unsigned long long)errno, ENOMEM);
	DONE("calloc");
	q = malloc(8);
	memcpy(q, "1234567", 8);
	FAIL_NEXT();
	p = realloc(q, 64);
	expect("realloc NULL", p == NULL, 1);
	expect("realloc errno", (unsigned long long)errno, ENOMEM);
	expect("realloc keeps the block", strcmp(q, "1234567"), 0);
	{
		struct memcheck_result r = end();
		expect("realloc failed_allocs", r.failed_allocs, 1);
		expect("realloc reallocs", r.reallocs, 1);
		expect("realloc frees", r.frees, 0);
	}
	FAIL_NEXT();
	p = realloc(NULL, 8);
	expect("realloc(NULL) NULL", p == NULL, 1);
	DONE("realloc(NULL)");
	FAIL_NEXT();
	p = reallocarray(q, 4, 16);
	expect("reallocarray NULL", p == NULL, 1);
	expect("reallocarray errno", (unsigned long long)errno, ENOMEM);
	DONE("reallocarray");
	/* realloc to 0 frees: never a failure to inject */
	memcheck_begin(kase);
	memcheck_fail_nth(1, 0);
	p = realloc(q, 0);
	struct memcheck_result r0 = end();
	expect("realloc(p, 0) injected", r0.injected, 0);
	free(p);
	FAIL_NEXT();
	errno = EDOM;
	p = (void *)1;
	rc = posix_memalign(&p, 64, 100);
	expect("posix_memalign rc", (unsigned long long)rc, ENOMEM);
	expect("posix_memalign leaves errno", (unsigned long long)errno, EDOM);
	expect("posix_memalign leaves *out", p == (void *)1, 1);
	DONE("posix_memalign");
	FAIL_NEXT();
	p = aligned_alloc(64, 128);
	expect("aligned_alloc NULL", p == NULL, 1);
	expect("aligned_alloc errno", (unsigned long long)errno, ENOMEM);
	DONE("aligned_alloc");
	FAIL_NEXT();
	p = memalign(64, 100);
	expect("memalign NULL", p == NULL, 1);
	expect("memalign errno", (unsigned long long)errno, ENOMEM);
	DONE("memalign");
	FAIL_NEXT();
	p = valloc(100);
	expect("valloc NULL", p == NULL, 1);
	expect("valloc errno", (unsigned long long)errno, ENOMEM);
	DONE("valloc");
	FAIL_NEXT();
	p = pvalloc(100);
	expect("pvalloc NULL", p == NULL, 1);
	expect("pvalloc errno", (unsigned long long)errno, ENOMEM);
	DONE("pvalloc");
}

static void site(const char *pattern)
{
	memcheck_begin(kase);
	expect("memcheck_fail_site", (unsigned long long)memcheck_fail_site(pattern), 0);
	for (int i = 0; i < 3; i++) {
		void *a = site_victim(10), *b = site_bystander(10);
		expect("site_victim NULL", a == NULL, 1);
		expect("site_bystander NULL", b == NULL, !strcmp(kase, "site_file"));
		free(a);
		free(b);
	}
	memcheck_fail_site(NULL);
	void *a = site_victim(10);
	expect("site_victim after memcheck_fail_site(NULL)", a == NULL, 0);
	free(a);
	struct memcheck_result r = end();
	expect("injected", r.injected, !strcmp(kase, "site_file") ? 6 : 3);
}

/* Which of 200 allocations fail, printed for the test to compare. */
static void pattern(const char *region)
{
	char bits[201];
	int n = 0;
	memcheck_begin(region);
	for (int i = 0; i < 200; i++) {
		void *p = malloc(8);
		bits[i] = p ? '0' : '1';
		n += !p;
		free(p);
	}
	bits[200] = 0;
	struct memcheck_result r = end();
	expect("injected", r.injected, (unsigned long long)n);
	printf("%s pattern: %s\n", region, bits);
}

int main(int argc, char **argv)
{
	kase = argc > 1 ? argv[1] : "";
	if (!strcmp(kase, "transient"))
		nth(0);
	else if (!strcmp(kase, "transient_late")) {
		/* past MC_LIMITS_AFTER allocations first: count-only malloc
		 * has read the limits and stopped looking at small results,
		 * so turning injection on must still reach it */
		for (int i = 0; i < 20000; i++)
			free(malloc(16));
		nth(0);
	}
	else if (!strcmp(kase, "persistent"))
		nth(1);
	else if (!strcmp(kase, "family"))
		family();
	else if (!strcmp(kase, "site"))
		site("site_vict*");
	else if (!strcmp(kase, "site_file"))
		site("fault.c");
	else if (!strcmp(kase, "random")) {
		memcheck_fail_random(0.25, argc > 2 ? strtoull(argv[2], NULL, 10) : 1);
		pattern("random");
		memcheck_fail_random(0, 0);
	} else if (!strcmp(kase, "env")) {
		pattern("other");
		pattern("target");
	} else if (!strcmp(kase, "expect")) {
		memcheck_begin(kase);
		memcheck_fail_nth(2, 1);
		free(malloc(1));
		expect("memcheck_expect_oom before", memcheck_expect_oom(), 0);
		void *p = malloc(1), *q = malloc(1);
		expect("memcheck_expect_oom after", memcheck_expect_oom(), 2);
		free(p);
		free(q);
		end();
	} else if (!strcmp(kase, "breakpoint")) {
		memcheck_begin(kase);
		memcheck_fail_nth(1, 0);
		void *p = site_victim(1);
		end();
		expect("NULL", p == NULL, 1);
	} else {
		printf("fault: unknown case '%s'\n", kase);
		return 99;
	}
	return failures;
}
