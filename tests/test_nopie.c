/*
 * test_nopie.c - programs built without PIE that take the address of the
 * allocation functions (lib/elfsym.c).  Such a program's own dynamic
 * symbol table lists malloc with the address of its PLT stub; memcheck
 * once took that stub for malloc's definition and forwarded malloc to
 * itself, forever (Debian's /usr/bin/python3 hung at start).  Under each
 * allocator, with a timeout: tests/prog/plain_nopie (every malloc-family
 * function through a pointer), tests/prog/cxx_new built -no-pie (operator
 * new through a pointer), and python3 -c pass.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

struct counts {
	uint64_t allocs, frees, reallocs, bytes;
};

/* path [arg] under memcheck and so: it must finish, exit 0 and be
 * counted (not bypassed). */
static struct counts run(int i, const char *prog, const char *arg)
{
	struct h_res x;
	H_EXEC(&x, .prog = prog, .args = H_LIST(arg), .alloc = i, .flags = H_PRELOAD);
	ck_assert_msg(!x.r.timed_out, "%s: still running after %s s (a hang)", x.label,
		      getenv("H_TIMEOUT"));
	h_expect_exit(&x, 0);
	const struct h_json *rec = h_rec(&x, "process");
	ck_assert_msg(h_nviolations(rec) == 0 || !h_violation_has(rec, "bypassed"),
		      "%s: memcheck was bypassed", x.label);
	struct counts c = { h_u64(rec, "allocs"), h_u64(rec, "frees"), h_u64(rec, "reallocs"),
			    h_u64(rec, "bytes_allocated") };
	h_res_free(&x);
	return c;
}

/* Each function called once through its address, counted exactly: what
 * "calls" adds to "empty" (the allocator's own start-up). */
START_TEST(test_functions_called_through_their_addresses)
{
	if (!h_allocator(_i, NULL))
		return;
	struct counts e = run(_i, "plain_nopie", "empty"), c = run(_i, "plain_nopie", "calls");
	ck_assert_msg(c.allocs - e.allocs == 11 && c.frees - e.frees == 11 &&
			      c.reallocs - e.reallocs == 4 && c.bytes - e.bytes == 5574,
		      "plain_nopie under %s: %llu allocs, %llu frees, %llu reallocs, %llu bytes; "
		      "expected 11, 11, 4, 5,574", h_allocators[_i].name,
		      (unsigned long long)(c.allocs - e.allocs),
		      (unsigned long long)(c.frees - e.frees),
		      (unsigned long long)(c.reallocs - e.reallocs),
		      (unsigned long long)(c.bytes - e.bytes));
}
END_TEST

/* operator new through its address: the same counts as the PIE build. */
START_TEST(test_operator_new_through_its_address)
{
	if (!h_allocator(_i, NULL))
		return;
	struct counts pie = run(_i, "cxx_new", "leak"), nopie = run(_i, "cxx_new_nopie", "leak");
	ck_assert_msg(pie.allocs == nopie.allocs && pie.frees == nopie.frees &&
			      pie.bytes == nopie.bytes,
		      "cxx_new leak under %s: -no-pie %llu allocs, %llu frees, %llu bytes; "
		      "PIE %llu, %llu, %llu", h_allocators[_i].name, (unsigned long long)nopie.allocs,
		      (unsigned long long)nopie.frees, (unsigned long long)nopie.bytes,
		      (unsigned long long)pie.allocs, (unsigned long long)pie.frees,
		      (unsigned long long)pie.bytes);
}
END_TEST

/* Debian's python3 is such a program. */
START_TEST(test_python_starts)
{
	if (!h_allocator(_i, NULL))
		return;
	const char *py = "/usr/bin/python3";
	if (access(py, X_OK) != 0) {
		printf("note: %s not installed; skipping it\n", py);
		return;
	}
	/* MEMCHECK_PROGRAMS: python3 is installed on the system, which
	 * memcheck leaves out by default. */
	struct h_res x;
	H_EXEC(&x, .prog = py, .args = H_LIST("-c", "pass"), .alloc = _i, .flags = H_PRELOAD,
	       .env = H_LIST("MEMCHECK_PROGRAMS=*"));
	ck_assert_msg(!x.r.timed_out && x.r.exit_code == 0, "%s: %s%s; stderr:\n%s", x.label,
		      h_status(&x.r), x.r.timed_out ? " (a hang)" : "", x.r.err);
	const struct h_json *rec = h_record(&x.rep, "process", x.r.pid);
	ck_assert_msg(rec && h_u64(rec, "allocs") > 100, "%s: %s allocations counted", x.label,
		      rec ? h_fmt(h_u64(rec, "allocs")) : "no record, no");
	h_res_free(&x);
}
END_TEST

int main(void)
{
	setenv("H_TIMEOUT", "20", 0);
	TCase *tc = h_tcase("nopie", 120);
	tcase_add_loop_test(tc, test_functions_called_through_their_addresses, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, test_operator_new_through_its_address, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, test_python_starts, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
