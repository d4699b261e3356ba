/*
 * test_fork.c - regions across fork() and exec: each process reports its
 * own figures under its own pid (tests/prog/fork, tests/prog/plain_fork),
 * and fork never deadlocks against memcheck's locks (tests/prog/forklocks).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static pid_t pid_after(const char *out, const char *tag)
{
	const char *s = strstr(out, tag);
	ck_assert_msg(s != NULL, "no \"%s\" on stdout: \"%s\"", tag, out);
	return (pid_t)atoi(s + strlen(tag));
}

static bool leaks_mention(const struct h_json *rec, const char *fn)
{
	for (size_t i = 0; i < h_nleaks(rec); i++)
		for (size_t j = 0; j < h_leak_depth(rec, i); j++) {
			const char *f = h_frame_str(rec, i, j, "function");
			if (f && strcmp(f, fn) == 0)
				return true;
		}
	return false;
}

/* Record name of process pid, which must be there. */
static const struct h_json *rec_of(const struct h_res *x, const char *name, pid_t pid,
				   const char *whose)
{
	const struct h_json *rec = h_record(&x->rep, name, pid);
	ck_assert_msg(rec != NULL, "%s: no record \"%s\" with the %s's pid %d", x->label, name,
		      whose, (int)pid);
	return rec;
}

#define FIGURES(allocs, frees, bytes, live_blocks, live_bytes)                 \
	(const struct h_want[]){ { .key = "allocs", .u64 = allocs },             \
				 { .key = "frees", .u64 = frees },               \
				 { .key = "bytes_allocated", .u64 = bytes },     \
				 { .key = "live_blocks", .u64 = live_blocks },   \
				 { .key = "live_bytes", .u64 = live_bytes },     \
				 { .key = NULL } }

START_TEST(test_child_region_has_only_child_figures)
{
	struct h_res x;
	H_EXEC(&x, .prog = "fork");
	h_expect_exit(&x, 0);
	pid_t child = pid_after(x.r.out, "child="), parent = pid_after(x.r.out, "parent=");
	ck_assert_msg(parent == x.r.pid, "parent=%d on stdout, but the program's pid is %d",
		      (int)parent, (int)x.r.pid);
	ck_assert_msg(x.rep.n == 3, "%zu records, expected 3 (child and parent from the child, "
		      "parent from the parent)", x.rep.n);

	/* the child's own region: 222 leaked + 333 freed */
	const struct h_json *c = rec_of(&x, "child", child, "child");
	h_expect_wants(&x, c, FIGURES(2, 1, 555, 1, 222));
	ck_assert_msg(h_nleaks(c) == 1, "child: %zu leak records, expected 1", h_nleaks(c));
	H_EXPECT_FRAME(c, 0, 0, "leak_in_child");

	/* the inherited region, ended in the child: the child's figures,
	 * not the parent's 111 bytes from before the fork */
	const struct h_json *pc = rec_of(&x, "parent", child, "child");
	h_expect_wants(&x, pc, FIGURES(2, 1, 555, 1, 222));
	ck_assert_msg(!leaks_mention(pc, "leak_in_parent"),
		      "the child's \"parent\" record lists the parent's leak");

	/* the parent's region: 111 leaked + 4444 freed, nothing of the child */
	const struct h_json *p = rec_of(&x, "parent", parent, "parent");
	h_expect_wants(&x, p, FIGURES(2, 1, 4555, 1, 111));
	ck_assert_msg(h_nleaks(p) == 1, "parent: %zu leak records, expected 1", h_nleaks(p));
	H_EXPECT_FRAME(p, 0, 0, "leak_in_parent");
	h_res_free(&x);
}
END_TEST

START_TEST(test_preloaded_fork_both_report_process)
{
	struct h_res x;
	H_EXEC(&x, .prog = "plain_fork", .args = H_LIST("fork"), .flags = H_PRELOAD);
	h_expect_exit(&x, 0);
	pid_t child = pid_after(x.r.out, "child=");
	ck_assert_msg(h_record_count(&x.rep, "process") == 2,
		      "%zu \"process\" records, expected 2 (parent and child)",
		      h_record_count(&x.rep, "process"));
	/* child: 20 leaked, 30 freed; the parent's 10 bytes are not its leak */
	h_expect_wants(&x, rec_of(&x, "process", child, "child"), FIGURES(2, 1, 50, 1, 20));
	/* parent: 10 leaked, 40 freed; nothing of the child's */
	const struct h_json *p = h_rec(&x, "process");
	h_expect_wants(&x, p, FIGURES(2, 1, 50, 1, 10));
	H_EXPECT_U64(p, "bytes_freed", 40);
	for (size_t i = 0; i < x.rep.n; i++) {
		const char *prog = h_str(x.rep.rec[i], "program");
		ck_assert_msg(prog && strstr(prog, "plain_fork"),
			      "record %zu: program = \"%s\", expected .../plain_fork", i,
			      prog ? prog : "(missing)");
	}
	h_res_free(&x);
}
END_TEST

START_TEST(test_exec_child_writes_its_own_record)
{
	/* MEMCHECK_PROGRAMS: /usr/bin/true is installed on the system, which
	 * memcheck leaves out by default. */
	struct h_res x;
	H_EXEC(&x, .prog = "plain_fork", .args = H_LIST("exec"), .flags = H_PRELOAD,
	       .env = H_LIST("MEMCHECK_PROGRAMS=*"));
	h_expect_exit(&x, 0);
	pid_t child = pid_after(x.r.out, "child=");
	H_EXPECT_STR(rec_of(&x, "process", child, "child (/usr/bin/true)"), "program",
		     "/usr/bin/true");
	h_rec(&x, "process");
	ck_assert_msg(x.rep.n == 2, "%zu records, expected 2 (parent, /usr/bin/true)", x.rep.n);
	h_res_free(&x);
}
END_TEST

START_TEST(test_fork_while_threads_allocate)
{
	/* locks held by other threads at fork must not hang the child, and
	 * each child's region is its own */
	struct h_res x;
	H_EXEC(&x, .prog = "fork", .args = H_LIST("threads"));
	h_expect_exit(&x, 0);
	ck_assert_msg(h_record_count(&x.rep, "child") == 10, "%zu \"child\" records, expected 10",
		      h_record_count(&x.rep, "child"));
	for (size_t i = 0; i < x.rep.n; i++) {
		const struct h_json *c = x.rep.rec[i];
		ck_assert_msg(h_u64(c, "pid") != (uint64_t)x.r.pid, "a record from the parent");
		h_expect_wants(&x, c, FIGURES(2, 1, 30, 1, 20));
	}
	h_res_free(&x);
}
END_TEST

/* Issue 14, item 3: fork while other threads hold every lock memcheck
 * has, under each allocator: jemalloc's and tcmalloc's fork handlers hold
 * their locks while memcheck's run, so a memcheck lock held across a
 * call into the allocator deadlocked (20 forks of forklocks hung every
 * time before).  Each child reports its own region correctly. */
START_TEST(test_fork_against_every_lock)
{
	if (!h_allocator(_i, NULL))
		return;
	setenv("H_TIMEOUT", "60", 0);
	struct h_res x;
	const char *log = h_tmppath("log");
	H_EXEC(&x, .prog = "forklocks", .args = H_LIST("12"), .alloc = _i, .flags = H_PRELOAD,
	       .text = "fail",
	       .env = H_LIST(h_env("MEMCHECK_LOG=%s.%%p.log", log), "MEMCHECK_FAIL_SITE=no_such_function"));
	ck_assert_msg(!x.r.timed_out && x.r.exit_code == 0 && strstr(x.r.out, "forks=12"),
		      "%s: %s, stdout \"%s\"; stderr:\n%s", x.label, h_status(&x.r), x.r.out, x.r.err);
	ck_assert_msg(h_record_count(&x.rep, "child") == 12, "%s: %zu \"child\" records, expected 12",
		      x.label, h_record_count(&x.rep, "child"));
	for (size_t i = 0; i < x.rep.n; i++) {
		const struct h_json *c = x.rep.rec[i];
		const char *name = h_str(c, "name");
		if (!name || strcmp(name, "child") != 0)
			continue;
		ck_assert_msg(h_u64(c, "pid") != (uint64_t)x.r.pid, "a \"child\" record from the parent");
		H_EXPECT_U64(c, "allocs", 1);
		H_EXPECT_U64(c, "bytes_allocated", 24);
		H_EXPECT_U64(c, "live_blocks", 1);
	}
	h_res_free(&x);
}
END_TEST

/* The allocator preloaded before memcheck (the wrong order: memcheck
 * sees no allocations and says so) and started before it: its fork
 * handler runs after memcheck's, and one of its threads maps memory
 * with its lock held.  memcheck's handler held the mappings table's
 * lock, which that mmap waited for, while the allocator's handler
 * waited for the allocator's lock: the program hung (jemalloc, 4 runs
 * of 6).  The program must run as it does without memcheck. */
START_TEST(test_fork_allocator_first)
{
	if (!h_allocator(_i, NULL) || _i == 0)
		return;
	setenv("H_TIMEOUT", "60", 0);
	struct h_res x;
	H_EXEC(&x, .prog = "forklocks", .args = H_LIST("12"), .alloc = _i, .flags = H_PRELOAD_AFTER,
	       .text = "fail");
	ck_assert_msg(!x.r.timed_out && x.r.exit_code == 0 && strstr(x.r.out, "forks=12"),
		      "%s: %s, stdout \"%s\"; stderr:\n%s", x.label, h_status(&x.r), x.r.out, x.r.err);
	ck_assert_msg(h_record_count(&x.rep, "child") == 12, "%s: %zu \"child\" records, expected 12",
		      x.label, h_record_count(&x.rep, "child"));
	h_res_free(&x);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("fork", 30);
	tcase_add_test(tc, test_child_region_has_only_child_figures);
	tcase_add_test(tc, test_preloaded_fork_both_report_process);
	tcase_add_test(tc, test_exec_child_writes_its_own_record);
	tcase_add_test(tc, test_fork_while_threads_allocate);
	TCase *locks = h_tcase("locks", 90);
	tcase_add_loop_test(locks, test_fork_against_every_lock, 0, H_NALLOCATORS);
	TCase *first = h_tcase("allocator_first", 90);
	tcase_add_loop_test(first, test_fork_allocator_first, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
