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

START_TEST(test_child_region_has_only_child_figures)
{
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("fork"));
	ck_assert_msg(r.exit_code == 0, "fork: %s, expected exit 0; stderr:\n%s", h_status(&r), r.err);
	pid_t child = pid_after(r.out, "child="), parent = pid_after(r.out, "parent=");
	ck_assert_msg(parent == r.pid, "parent=%d on stdout, but the program's pid is %d",
		      (int)parent, (int)r.pid);
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(rep.n == 3, "%zu records, expected 3 (child and parent from the child, "
		      "parent from the parent)", rep.n);

	/* the child's own region: 222 leaked + 333 freed */
	const struct h_json *c = h_record(&rep, "child", child);
	ck_assert_msg(c != NULL, "no record \"child\" with the child's pid %d", (int)child);
	H_EXPECT_U64(c, "allocs", 2);
	H_EXPECT_U64(c, "frees", 1);
	H_EXPECT_U64(c, "bytes_allocated", 555);
	H_EXPECT_U64(c, "live_blocks", 1);
	H_EXPECT_U64(c, "live_bytes", 222);
	ck_assert_msg(h_nleaks(c) == 1, "child: %zu leak records, expected 1", h_nleaks(c));
	H_EXPECT_FRAME(c, 0, 0, "leak_in_child");

	/* the inherited region, ended in the child: the child's figures,
	 * not the parent's 111 bytes from before the fork */
	const struct h_json *pc = h_record(&rep, "parent", child);
	ck_assert_msg(pc != NULL, "no record \"parent\" with the child's pid %d", (int)child);
	H_EXPECT_U64(pc, "allocs", 2);
	H_EXPECT_U64(pc, "frees", 1);
	H_EXPECT_U64(pc, "bytes_allocated", 555);
	H_EXPECT_U64(pc, "live_blocks", 1);
	H_EXPECT_U64(pc, "live_bytes", 222);
	ck_assert_msg(!leaks_mention(pc, "leak_in_parent"),
		      "the child's \"parent\" record lists the parent's leak");

	/* the parent's region: 111 leaked + 4444 freed, nothing of the child */
	const struct h_json *p = h_record(&rep, "parent", parent);
	ck_assert_msg(p != NULL, "no record \"parent\" with the parent's pid %d", (int)parent);
	H_EXPECT_U64(p, "allocs", 2);
	H_EXPECT_U64(p, "frees", 1);
	H_EXPECT_U64(p, "bytes_allocated", 4555);
	H_EXPECT_U64(p, "live_blocks", 1);
	H_EXPECT_U64(p, "live_bytes", 111);
	ck_assert_msg(h_nleaks(p) == 1, "parent: %zu leak records, expected 1", h_nleaks(p));
	H_EXPECT_FRAME(p, 0, 0, "leak_in_parent");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_preloaded_fork_both_report_process)
{
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_fork"), "fork");
	ck_assert_msg(r.exit_code == 0, "plain_fork fork: %s, expected exit 0; stderr:\n%s",
		      h_status(&r), r.err);
	pid_t child = pid_after(r.out, "child=");
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(h_record_count(&rep, "process") == 2,
		      "%zu \"process\" records, expected 2 (parent and child)",
		      h_record_count(&rep, "process"));
	const struct h_json *c = h_record(&rep, "process", child);
	const struct h_json *p = h_record(&rep, "process", r.pid);
	ck_assert_msg(c != NULL, "no \"process\" record with the child's pid %d", (int)child);
	ck_assert_msg(p != NULL, "no \"process\" record with the parent's pid %d", (int)r.pid);
	/* child: 20 leaked, 30 freed; the parent's 10 bytes are not its leak */
	H_EXPECT_U64(c, "allocs", 2);
	H_EXPECT_U64(c, "frees", 1);
	H_EXPECT_U64(c, "bytes_allocated", 50);
	H_EXPECT_U64(c, "live_blocks", 1);
	H_EXPECT_U64(c, "live_bytes", 20);
	/* parent: 10 leaked, 40 freed; nothing of the child's */
	H_EXPECT_U64(p, "allocs", 2);
	H_EXPECT_U64(p, "frees", 1);
	H_EXPECT_U64(p, "bytes_allocated", 50);
	H_EXPECT_U64(p, "bytes_freed", 40);
	H_EXPECT_U64(p, "live_blocks", 1);
	H_EXPECT_U64(p, "live_bytes", 10);
	for (size_t i = 0; i < rep.n; i++) {
		const char *prog = h_str(rep.rec[i], "program");
		ck_assert_msg(prog && strstr(prog, "plain_fork"),
			      "record %zu: program = \"%s\", expected .../plain_fork", i,
			      prog ? prog : "(missing)");
	}
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_exec_child_writes_its_own_record)
{
	const char *report = h_tmppath("report.jsonl");
	/* MEMCHECK_PROGRAMS: /usr/bin/true is installed on the system, which
	 * memcheck leaves out by default. */
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      "MEMCHECK_PROGRAMS=*", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_fork"), "exec");
	ck_assert_msg(r.exit_code == 0, "plain_fork exec: %s, expected exit 0; stderr:\n%s",
		      h_status(&r), r.err);
	pid_t child = pid_after(r.out, "child=");
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *c = h_record(&rep, "process", child);
	ck_assert_msg(c != NULL, "no \"process\" record from /usr/bin/true (pid %d)", (int)child);
	H_EXPECT_STR(c, "program", "/usr/bin/true");
	ck_assert_msg(h_record(&rep, "process", r.pid) != NULL,
		      "no \"process\" record from the parent (pid %d)", (int)r.pid);
	ck_assert_msg(rep.n == 2, "%zu records, expected 2 (parent, /usr/bin/true)", rep.n);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_fork_while_threads_allocate)
{
	/* locks held by other threads at fork must not hang the child, and
	 * each child's region is its own */
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("fork"), "threads");
	ck_assert_msg(r.exit_code == 0, "fork threads: %s, expected exit 0; stderr:\n%s",
		      h_status(&r), r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(h_record_count(&rep, "child") == 10, "%zu \"child\" records, expected 10",
		      h_record_count(&rep, "child"));
	for (size_t i = 0; i < rep.n; i++) {
		const struct h_json *c = rep.rec[i];
		ck_assert_msg(h_u64(c, "pid") != (uint64_t)r.pid, "a record from the parent");
		H_EXPECT_U64(c, "allocs", 2);
		H_EXPECT_U64(c, "frees", 1);
		H_EXPECT_U64(c, "bytes_allocated", 30);
		H_EXPECT_U64(c, "live_blocks", 1);
		H_EXPECT_U64(c, "live_bytes", 20);
	}
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Issue 14, item 3: fork while other threads hold every lock memcheck
 * has, under each allocator: jemalloc's and tcmalloc's fork handlers hold
 * their locks while memcheck's run, so a memcheck lock held across a
 * call into the allocator deadlocked (20 forks of forklocks hung every
 * time before).  Each child reports its own region correctly. */
START_TEST(test_fork_against_every_lock)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=fail",
			      h_env("MEMCHECK_LOG=%s.%%p.log", report),
			      "MEMCHECK_FAIL_SITE=no_such_function", NULL };
	setenv("H_TIMEOUT", "60", 0);
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("forklocks"), "12");
	ck_assert_msg(!r.timed_out && r.exit_code == 0 && strstr(r.out, "forks=12"),
		      "forklocks 12 under %s: %s, stdout \"%s\"; stderr:\n%s",
		      h_allocators[_i].name, h_status(&r), r.out, r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(h_record_count(&rep, "child") == 12,
		      "under %s: %zu \"child\" records, expected 12", h_allocators[_i].name,
		      h_record_count(&rep, "child"));
	for (size_t i = 0; i < rep.n; i++) {
		const struct h_json *c = rep.rec[i];
		const char *name = h_str(c, "name");
		if (!name || strcmp(name, "child") != 0)
			continue;
		ck_assert_msg(h_u64(c, "pid") != (uint64_t)r.pid, "a \"child\" record from the parent");
		H_EXPECT_U64(c, "allocs", 1);
		H_EXPECT_U64(c, "bytes_allocated", 24);
		H_EXPECT_U64(c, "live_blocks", 1);
	}
	h_report_free(&rep);
	h_run_free(&r);
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
	return h_run_suite(NULL);
}
