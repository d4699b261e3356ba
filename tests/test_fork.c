/*
 * test_fork.c - regions across fork() and exec: each process reports its
 * own figures under its own pid (tests/prog/fork, tests/prog/plain_fork),
 * and fork never deadlocks against memcheck's locks (tests/prog/forklocks).
 * A region another thread had open at the fork ends quietly in the child
 * (tests/prog/forkinherit): its thread is not there to end it.
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
	ck_assert_msg(!h_leaks_mention(pc, "leak_in_parent"),
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

/* harden43: MEMCHECK_FAIL_REGION (any pattern: "abc") in a program
 * that set a UTF-8 locale and forked: the child's fork handler matched
 * the pattern with fnmatch, which allocated under memcheck's guard from
 * its own heap, whose lock the fork had left taken: every forked child
 * hung (coreutils' timeout under MEMCHECK_PROGRAMS=*, killed after its
 * time).  Each allocator. */
START_TEST(test_fork_with_fail_region_in_utf8)
{
	if (!h_allocator(_i, NULL))
		return;
	struct h_res x;
	H_EXEC(&x, .prog = "plain_fork", .args = H_LIST("fork", "utf8"), .alloc = _i,
	       .flags = H_PRELOAD, .timeout = 10, .env = H_LIST("MEMCHECK_FAIL_REGION=abc"));
	h_expect_exit(&x, 0);
	pid_t child = pid_after(x.r.out, "child=");
	h_expect_wants(&x, rec_of(&x, "process", child, "child"), FIGURES(2, 1, 50, 1, 20));
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

/* ---- a region another thread had open at the fork -------------------- */

/* forkinherit's "other", begun by a thread the child does not have:
 * one record, the parent's, passing; none from a child, and no word of
 * it on stderr (MEMCHECK_TEXT=fail shows what fails). */
static void other_only_in_parent(const struct h_res *x)
{
	for (size_t i = 0; i < x->rep.n; i++) {
		const struct h_json *r = x->rep.rec[i];
		const char *name = h_str(r, "name");
		ck_assert_msg(!name || strcmp(name, "other") != 0 || h_u64(r, "pid") == (uint64_t)x->r.pid,
			      "%s: a record \"other\" from child %llu; stderr:\n%s", x->label,
			      (unsigned long long)h_u64(r, "pid"), x->r.err);
	}
	H_EXPECT_STR(rec_of(x, "other", x->r.pid, "parent"), "verdict", "pass");
	ck_assert_msg(!strstr(x->r.err, "not ended"), "%s: a region not ended; stderr:\n%s",
		      x->label, x->r.err);
}

/* Every child's record passes. */
H_CHECK(children_pass)
{
	other_only_in_parent(x);
	for (size_t i = 0; i < x->rep.n; i++)
		if (h_u64(x->rep.rec[i], "pid") != (uint64_t)x->r.pid)
			H_EXPECT_STR(x->rep.rec[i], "verdict", "pass");
}

/* The child's record name fails for bytes definitely lost (an
 * enclosing region of the child's fails for them too). */
static void child_fails_in(const struct h_res *x, const char *name, uint64_t bytes)
{
	other_only_in_parent(x);
	pid_t child = pid_after(x->r.out, "child=");
	const struct h_json *f = rec_of(x, name, child, "child");
	H_EXPECT_STR(f, "verdict", "fail");
	h_expect_wants(x, f, (const struct h_want[]){ { .key = "definitely_lost.bytes", .u64 = bytes },
						      { .key = NULL } });
}

H_CHECK(leak_in_child_region)
{
	child_fails_in(x, "child", 24);
}

/* Lost while the inherited region was the innermost: the child's
 * process region sees it. */
H_CHECK(lost_in_process_region)
{
	child_fails_in(x, "process", 40);
}

/* The forking thread's own region, left open: the child's, reported as
 * not ended. */
H_CHECK(own_not_ended)
{
	pid_t child = pid_after(x->r.out, "child=");
	const struct h_json *own = rec_of(x, "own", child, "child");
	H_EXPECT_STR(own, "verdict", "fail");
	ck_assert_msg(h_violation_has(own, "region not ended before the process exited"),
		      "%s: the child's \"own\" does not say it was not ended", x->label);
	ck_assert_msg(h_record(&x->rep, "other", child) == NULL,
		      "%s: a record \"other\" from the child", x->label);
}

/* The child's "own", ended by the child, passes. */
H_CHECK(own_ended)
{
	children_pass(x, rec, c);
	pid_t child = pid_after(x->r.out, "child=");
	H_EXPECT_STR(rec_of(x, "own", child, "child"), "verdict", "pass");
}

/* forkinherit MODE preloaded, memcheck's exit status (23 where a region
 * failed), each process's own: a child's failure does not pass to the
 * parent (MEMCHECK_ANCESTORS=0), which prints the child's status. */
#define FORKINHERIT(mode)                                                       \
	.run = { .prog = "forkinherit", .args = H_LIST(mode), .flags = H_PRELOAD | H_EXITCODE, \
		 .text = "fail", .env = H_LIST("MEMCHECK_ANCESTORS=0") }

static const struct h_case inherit_cases[] = {
	{ "a clean child of a fork amid another thread's region passes",
	  FORKINHERIT("clean"), .out = H_LIST("status=0"), .check = children_pass },
	{ "its leak in its own region still fails it",
	  FORKINHERIT("leak"), .out = H_LIST("status=23"), .check = leak_in_child_region },
	{ "its leak outside its regions fails its process region",
	  FORKINHERIT("lost"), .out = H_LIST("status=23"), .check = lost_in_process_region },
	{ "the forking thread's own region left open still fails",
	  FORKINHERIT("own"), .out = H_LIST("status=23"), .check = own_not_ended },
	{ "its own region above the inherited one, ended",
	  FORKINHERIT("under"), .out = H_LIST("status=0"), .check = children_pass },
	{ "its own region below the inherited one, ended: its own ends first",
	  FORKINHERIT("over"), .out = H_LIST("status=0"), .check = own_ended },
	{ "a grandchild forked by a thread that took the dead thread's id",
	  FORKINHERIT("again"), .out = H_LIST("status=0"), .check = children_pass },
};

int main(void)
{
	TCase *tc = h_tcase("fork", 30);
	tcase_add_test(tc, test_child_region_has_only_child_figures);
	tcase_add_test(tc, test_preloaded_fork_both_report_process);
	tcase_add_test(tc, test_exec_child_writes_its_own_record);
	tcase_add_loop_test(tc, test_fork_with_fail_region_in_utf8, 0, H_NALLOCATORS);
	tcase_add_test(tc, test_fork_while_threads_allocate);
	TCase *locks = h_tcase("locks", 90);
	tcase_add_loop_test(locks, test_fork_against_every_lock, 0, H_NALLOCATORS);
	TCase *first = h_tcase("allocator_first", 90);
	tcase_add_loop_test(first, test_fork_allocator_first, 0, H_NALLOCATORS);
	TCase *inherit = h_tcase("inherit", 60);
	H_ADD_CASES(inherit, inherit_cases);
	return h_run_suite(NULL);
}
