/*
 * unit_stacks.c - lib/stacks.c on its own: interning and the
 * frame-pointer walk.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

struct mc_options mc_opt;
MC_TLS struct mc_thread mc_self; /* interpose.c's, not linked here */

START_TEST(intern_dedupes)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	uintptr_t a[3] = { 0x1000, 0x2000, 0x3000 };
	uintptr_t b[3] = { 0x1000, 0x2000, 0x3001 };
	uint32_t ia = mc_stack_intern(a, 3);
	ck_assert_uint_ne(ia, 0);
	ck_assert_uint_eq(mc_stack_intern(a, 3), ia);
	ck_assert_uint_ne(mc_stack_intern(b, 3), ia);
	ck_assert_uint_ne(mc_stack_intern(a, 2), ia);
	const uintptr_t *f;
	ck_assert_int_eq(mc_stack_get(ia, &f), 3);
	ck_assert_uint_eq(f[2], 0x3000);
	ck_assert_int_eq(mc_stack_get(0, &f), 0);
	/* for reports: frames up to the first that is not in code */
	uintptr_t code = (uintptr_t)&mc_stack_intern + 16, heap = (uintptr_t)malloc(16);
	uintptr_t c[4] = { 0x1000, code, heap, code };
	uint32_t ic = mc_stack_intern(c, 4);
	ck_assert_int_eq(mc_stack_get(ic, &f), 4);
	ck_assert_int_eq(mc_stack_get_code(ic, &f), 2);   /* frame 0 always */
	ck_assert_int_eq(mc_stack_get_code(ia, &f), 1);
	ck_assert_int_eq(mc_stack_get_code(0, &f), 0);
	free((void *)heap);
	ck_assert_uint_eq(mc_stack_intern(a, 0), 0);
	/* many distinct stacks keep distinct ids */
	uint32_t prev = 0;
	for (uintptr_t i = 1; i <= 100000; i++) {
		uintptr_t one[2] = { i, i * 7 };
		uint32_t id = mc_stack_intern(one, 2);
		ck_assert_uint_gt(id, prev);
		prev = id;
	}
}
END_TEST

/* Built with frame pointers (tests.mk), so the walk sees both frames. */
static __attribute__((noinline)) uint32_t inner(void)
{
	return mc_stack_capture(__builtin_frame_address(0));
}

static __attribute__((noinline)) uint32_t outer(uintptr_t *ret)
{
	*ret = (uintptr_t)__builtin_return_address(0);
	return inner() + 0 * (uint32_t)__LINE__;
}

START_TEST(fp_walk_starts_at_the_call_site)
{
	mc_opt.stack_depth = 16;
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_stacks_init();
	uintptr_t outer_ret;
	uint32_t id = outer(&outer_ret);
	const uintptr_t *f;
	int n = mc_stack_get(id, &f);
	ck_assert_int_ge(n, 2);
	/* frame 0 is in outer (inner's return address), frame 1 is where
	 * outer returns to, in this test */
	ck_assert_uint_eq(f[1], outer_ret);
	/* The walk's running hash is the depot's hash of the same frames:
	 * interning them finds the stack the capture interned, and
	 * captures from one place (the thread's cache) give one id. */
	ck_assert_uint_eq(mc_stack_intern(f, n), id);
	uint32_t again[2];
	for (volatile int i = 0; i < 2; i++) /* volatile: one call site, not unrolled */
		again[i] = outer(&outer_ret);
	ck_assert_uint_eq(again[0], again[1]);
	ck_assert_uint_eq(mc_stack_intern(f, n), id);
	mc_opt.stack_depth = 1;
	ck_assert_int_eq(mc_stack_get(inner(), &f), 1);
	mc_opt.stack_depth = 0;
	ck_assert_uint_eq(inner(), 0);
}
END_TEST

/* A fake frame chain in buf, 4 words a frame: frame i links to frame
 * i + 1 and returns to 0x10000 + i; the last links to 0. */
static void *chain(uintptr_t *buf, int frames)
{
	for (int i = 0; i < frames; i++) {
		buf[4 * i] = i + 1 < frames ? (uintptr_t)&buf[4 * (i + 1)] : 0;
		buf[4 * i + 1] = 0x10000 + (uintptr_t)i;
	}
	return buf;
}

/* Capture from fp: the depth, checking the frames against chain()'s and
 * the id against the depot's for the same frames. */
static int capture_depth(void *fp)
{
	uint32_t id = mc_stack_capture(fp);
	const uintptr_t *f;
	int n = mc_stack_get(id, &f);
	for (int i = 0; i < n; i++)
		ck_assert_uint_eq(f[i], 0x10000 + (uintptr_t)i);
	ck_assert_uint_eq(mc_stack_intern(f, n), id);
	return n;
}

START_TEST(fp_walk_depth_and_stops)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	uintptr_t buf[4 * 24];
	/* every depth, odd and even, up to and past the chain's */
	for (int depth = 1; depth <= 22; depth++) {
		mc_opt.stack_depth = depth;
		ck_assert_int_eq(capture_depth(chain(buf, 20)), depth < 20 ? depth : 20);
		ck_assert_int_eq(capture_depth(chain(buf, 1)), 1);
		ck_assert_int_eq(capture_depth(chain(buf, 2)), depth < 2 ? depth : 2);
		ck_assert_int_eq(capture_depth(chain(buf, 3)), depth < 3 ? depth : 3);
	}
	/* the walk stops at frame k's link, for each way it can be bad,
	 * in each part of the walk (its first step, an odd one, a pair's) */
	pthread_attr_t attr;
	void *lo;
	size_t size;
	ck_assert_int_eq(pthread_getattr_np(pthread_self(), &attr), 0);
	ck_assert_int_eq(pthread_attr_getstack(&attr, &lo, &size), 0);
	pthread_attr_destroy(&attr);
	for (int depth = 15; depth <= 16; depth++) {
		mc_opt.stack_depth = depth;
		for (int k = 0; k < 5; k++) {
			void *fp = chain(buf, 8);
			uintptr_t *link = &buf[4 * k], good = *link;
			*link += 1; /* unaligned */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = (uintptr_t)&buf[4 * k] - 32; /* down */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = (uintptr_t)&buf[4 * k]; /* itself */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = (uintptr_t)lo + size - 8; /* off the stack's top: never read */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = good;
			buf[4 * k + 5] = 4095; /* not a return address */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			buf[4 * k + 5] = 0x10000 + (uintptr_t)k + 1;
			ck_assert_int_eq(capture_depth(fp), 8);
		}
	}
	mc_opt.stack_depth = 16;
	/* a first frame off the stack (here, in .bss) links nowhere */
	static uintptr_t off_stack[4 * 4];
	ck_assert_int_eq(capture_depth(chain(off_stack, 4)), 1);
}
END_TEST

/* Many stacks, sharing the thread's cache slots, captured in turns:
 * each capture still gives its own stack's id. */
START_TEST(fp_cache_conflicts)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	enum { N = 100 };
	uintptr_t buf[4 * 4];
	uint32_t ids[N];
	chain(buf, 4);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i += 1 + round) {
			buf[5] = 0x20000 + (uintptr_t)i; /* frame 1: one stack per i */
			uint32_t id = mc_stack_capture(buf);
			const uintptr_t *f;
			ck_assert_int_eq(mc_stack_get(id, &f), 4);
			ck_assert_uint_eq(f[1], 0x20000 + (uintptr_t)i);
			if (round == 0)
				ids[i] = id;
			else
				ck_assert_uint_eq(id, ids[i]);
			/* and the one before, again: alternating pairs */
			if (i > 0) {
				buf[5] = 0x20000 + (uintptr_t)(i - 1);
				ck_assert_uint_eq(mc_stack_capture(buf), ids[i - 1]);
			}
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stacks");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, intern_dedupes);
	tcase_add_test(tc, fp_walk_starts_at_the_call_site);
	tcase_add_test(tc, fp_walk_depth_and_stops);
	tcase_add_test(tc, fp_cache_conflicts);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0;
}
