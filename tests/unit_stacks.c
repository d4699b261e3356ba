/*
 * unit_stacks.c - lib/stacks.c on its own: interning and the
 * frame-pointer walk.
 */
#include <check.h>
#include <stdlib.h>

#include "internal.h"

struct mc_options mc_opt;

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

int main(void)
{
	Suite *s = suite_create("stacks");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, intern_dedupes);
	tcase_add_test(tc, fp_walk_starts_at_the_call_site);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0;
}
