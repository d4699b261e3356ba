/*
 * plain_voidtest.c - a test runner shaped like Unity's (or any framework
 * that calls void test functions through a pointer), for test_allocfn.c:
 * a test function whose last act leaves a block's address in rax is not
 * an allocation wrapper when its caller, the runner, does not use what
 * it returns.  The leak's site is the test function's line, never the
 * runner's.  Built at -O0, -O1 and -O2 (plain_voidtest_o0, plain_voidtest,
 * plain_voidtest_o2): at -O0 Unity's TEST_ASSERT_NOT_NULL(malloc(30))
 * tests the block and returns with it in rax.  Preloaded only.
 *
 *   assert_leak   ASSERT_NOT_NULL(malloc(30)), Unity's shape: its site
 *   assert_wrap   ASSERT_NOT_NULL(wrap(40)): wrap is passed over, the
 *                 test function is the site
 *   use_result    a runner's hook that returns the block to a caller that
 *                 keeps it (a wrapper through a pointer): passed over,
 *                 the keeping caller is the site
 *   made          a checked wrapper run both ways: as a test by the runner,
 *                 which drops what it returns (made is the site), and by
 *                 keep_made, which keeps it (keep_made is the site): one
 *                 return address in made, two verdicts
 *
 * The blocks are lost: one definitely lost record each.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

/* Unity's UNITY_TEST_ASSERT_NOT_NULL, its failure a longjmp */
static jmp_buf abort_frame;
static int failures;
static NOINLINE void fail_at(int line)
{
	failures++;
	fprintf(stderr, "line %d: expected non-NULL\n", line);
	longjmp(abort_frame, 1);
}
#define ASSERT_NOT_NULL(p)          \
	if ((p) != NULL) {          \
	} else {                    \
		fail_at(__LINE__);  \
	}

NOINLINE void *wrap(size_t n)
{
	return malloc(n);
}

NOINLINE void assert_leak(void)
{
	ASSERT_NOT_NULL(malloc(30)); /* SITE assert_leak */
}

NOINLINE void assert_wrap(void)
{
	ASSERT_NOT_NULL(wrap(40)); /* SITE assert_wrap */
}

NOINLINE void *made(void)
{
	void *p = malloc(60); /* SITE made */
	ASSERT_NOT_NULL(p);
	return p;
}

typedef void (*test_fn)(void);
static const char *volatile current;
static volatile int ran;

/* UnityDefaultTestRun's shape: the test under setjmp, then the end */
static NOINLINE void run_test(test_fn fn, const char *name)
{
	current = name;
	if (setjmp(abort_frame) == 0)
		fn();
	ran++;
}

/* A hook through a pointer whose result the caller keeps */
typedef void *(*alloc_fn)(size_t);
static void *volatile kept;
static NOINLINE void keep_from(alloc_fn a)
{
	kept = a(50); /* SITE use_result */
}

static void *volatile kept2;
static NOINLINE void keep_made(void)
{
	kept2 = made(); /* SITE keep_made */
}

int main(void)
{
	/* made as a test: its result dropped (void (*)(void) is the
	 * function pointers' common type) */
	test_fn volatile tests[] = { assert_leak, assert_wrap, (test_fn)made };
	static const char *const names[] = { "assert_leak", "assert_wrap", "made" };
	for (int i = 0; i < 3; i++)
		run_test(tests[i], names[i]);
	alloc_fn volatile a = wrap;
	keep_from(a);
	keep_made();
	kept = kept2 = NULL;
	printf("%d tests, %d failures\n", ran, failures);
	return failures != 0;
}
