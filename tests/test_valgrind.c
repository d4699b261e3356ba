/*
 * test_valgrind.c - memcheck's allocs, frees and bytes allocated equal
 * valgrind's "total heap usage" for the same program (tests/prog/
 * plain_mix: a varied, stdio-free mix; tests/prog/plain_errors leak).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* The row's program under valgrind: its "total heap usage" must be
 * what memcheck counted in the row's run. */
H_CHECK(same_as_valgrind)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", c->run.prog);
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=no", h_prog(c->run.prog), c->run.args[0]),
	       .no_report = true, .text = "");
	h_expect_exit(&v, 0);
	uint64_t va, vf, vb;
	ck_assert_msg(h_valgrind_heap_usage(v.r.err, &va, &vf, &vb),
		      "no \"total heap usage\" line in valgrind's output:\n%s", v.r.err);
	ck_assert_msg(h_u64(rec, "allocs") == va && h_u64(rec, "frees") == vf &&
		      h_u64(rec, "bytes_allocated") == vb,
		      "%s: memcheck counted %s allocs, %s frees, %s bytes allocated; "
		      "valgrind %llu allocs, %llu frees, %llu bytes allocated", x->label,
		      h_fmt(h_u64(rec, "allocs")), h_fmt(h_u64(rec, "frees")),
		      h_fmt(h_u64(rec, "bytes_allocated")), (unsigned long long)va,
		      (unsigned long long)vf, (unsigned long long)vb);
	ck_assert_msg(va > 1000 || strcmp(c->run.prog, "plain_mix") != 0,
		      "plain_mix made only %llu allocations", (unsigned long long)va);
	h_res_free(&v);
}

static const struct h_case cases[] = {
	{ "a varied mix", .allocators = H_ONLY(H_GLIBC), .check = same_as_valgrind,
	  .run = { .prog = "plain_mix", .args = H_LIST("3000"), .flags = H_PRELOAD },
	  .record = "process" },
	{ "a leaking program", .allocators = H_ONLY(H_GLIBC), .check = same_as_valgrind,
	  .run = { .prog = "plain_errors", .args = H_LIST("leak"), .flags = H_PRELOAD },
	  .record = "process" },
};

int main(void)
{
	TCase *tc = h_tcase("valgrind", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
