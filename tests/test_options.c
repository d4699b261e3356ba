/*
 * test_options.c - MEMCHECK_TRACK, _STACK_DEPTH, _TEXT, _PROCESS and
 * _UNWINDER change what they say and nothing else (count-only mode
 * counts failures under a program's own address-space limit,
 * tests/prog/plain_rlimit); MEMCHECK_LOG moves
 * all of memcheck's text to a file, per process with %p, and never
 * writes to a descriptor the program has taken over; MEMCHECK_PROGRAMS
 * picks the programs that get a process region; and memcheck never
 * writes to stdout (tests/prog/plain_errors, plain_family, regions,
 * plain_fork, plain_fds).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Run a program preloaded with a report and one more setting; load the
 * report; return the process record (NULL when there is none). */
static const struct h_json *run_with(struct h_run *r, struct h_report *rep, const char *setting,
				     const char *prog, const char *arg)
{
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), setting, NULL };
	H_RUN(r, H_PRELOAD, NULL, env, h_prog(prog), arg);
	ck_assert_msg(r->exit_code == 0, "%s %s with %s: %s, expected exit 0; stderr:\n%s", prog,
		      arg ? arg : "", setting, h_status(r), r->err);
	H_LOAD(rep, report);
	return h_record(rep, "process", r->pid);
}

START_TEST(test_track_0_counts_exactly_and_lists_no_leaks)
{
	struct h_run r;
	struct h_report rep;
	/* the whole family, everything freed */
	const struct h_json *rec = run_with(&r, &rep, "MEMCHECK_TRACK=0", "plain_family", NULL);
	ck_assert_msg(rec != NULL, "no \"process\" record");
	H_EXPECT_U64(rec, "allocs", 12);
	H_EXPECT_U64(rec, "frees", 12);
	H_EXPECT_U64(rec, "reallocs", 6);
	H_EXPECT_U64(rec, "bytes_allocated", 10632);
	ck_assert_msg(h_nleaks(rec) == 0, "%zu leak records, expected none", h_nleaks(rec));
	h_report_free(&rep);
	h_run_free(&r);

	/* a leak: counted, not listed */
	rec = run_with(&r, &rep, "MEMCHECK_TRACK=0", "plain_errors", "leak");
	ck_assert_msg(rec != NULL, "no \"process\" record");
	H_EXPECT_U64(rec, "allocs", 2);
	H_EXPECT_U64(rec, "frees", 1);
	H_EXPECT_U64(rec, "bytes_allocated", 100010);
	ck_assert_msg(h_nleaks(rec) == 0, "%zu leak records, expected an empty leaks list",
		      h_nleaks(rec));
	ck_assert_msg(h_json_get(rec, "leaks") && h_json_get(rec, "leaks")->type == HJ_ARR,
		      "leaks should be a list (empty)");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Count-only malloc does not look at results where nothing can fail
 * (lib/limits.c): a program that limits its own address space, by each
 * call the C library has for it or before an exec, still gets every
 * failure counted, as tracking counts it. */
START_TEST(test_track_0_counts_failures_under_a_limit)
{
	static const char *const modes[] = { "none", "setrlimit", "setrlimit64", "prlimit",
					     "prlimit64", "exec" };
	for (int track = 0; track <= 1; track++) {
		for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
			struct h_run r;
			struct h_report rep;
			const char *setting = track ? "MEMCHECK_TRACK=1" : "MEMCHECK_TRACK=0";
			const struct h_json *rec = run_with(&r, &rep, setting, "plain_rlimit", modes[i]);
			unsigned long ok = 0, failed = 0;
			ck_assert_msg(sscanf(r.out, "%lu %lu", &ok, &failed) == 2 && failed > 0 &&
					      ok > 0,
				      "plain_rlimit %s: stdout \"%s\"", modes[i], r.out);
			ck_assert_msg(rec != NULL, "plain_rlimit %s: no process record", modes[i]);
			ck_assert_msg(h_u64(rec, "allocs") == ok && h_u64(rec, "failed_allocs") == failed &&
					      h_u64(rec, "frees") == ok &&
					      h_u64(rec, "bytes_allocated") == ok * 512 * 1024,
				      "plain_rlimit %s, %s: allocs %s, failed_allocs %s, frees %s; the "
				      "program saw %lu made and %lu failed", modes[i], setting,
				      h_fmt(h_u64(rec, "allocs")), h_fmt(h_u64(rec, "failed_allocs")),
				      h_fmt(h_u64(rec, "frees")), ok, failed);
			h_report_free(&rep);
			h_run_free(&r);
		}
	}
}
END_TEST

/* A program that limits its address space to 1 GiB gets as many
 * allocations under memcheck as without it, in every mode and under
 * every allocator: memcheck maps what it uses as it goes (its stack
 * depot once reserved 4 GiB at start, and the program got none). */
static const char *const rlimit_settings[] = { "MEMCHECK_TRACK=1", "MEMCHECK_TRACK=0",
					       "MEMCHECK_PROGRAMS=no-such-program" };

static unsigned long allocations_under_1g(const char *so, const char *setting)
{
	const char *env[] = { "MEMCHECK_TEXT=none", setting, NULL };
	struct h_run r;
	H_RUN(&r, setting ? H_PRELOAD : 0, so, env, h_prog("plain_rlimit"), "1g");
	unsigned long ok = 0, failed = 0;
	ck_assert_msg(r.exit_code == 0 && sscanf(r.out, "%lu %lu", &ok, &failed) == 2,
		      "plain_rlimit 1g with %s: %s, stdout \"%s\"; stderr:\n%s",
		      setting ? setting : "no memcheck", h_status(&r), r.out, r.err);
	h_run_free(&r);
	return ok;
}

START_TEST(test_a_1g_address_space_limit_leaves_the_program_its_memory)
{
	const char *so, *a = h_allocator_name(_i);
	if (!h_allocator(_i, &so))
		return;
	/* without memcheck, the allocator's own way with the limit */
	const char *env[] = { so ? h_env("LD_PRELOAD=%s", so) : NULL, NULL };
	struct h_run b;
	H_RUN(&b, 0, NULL, env, h_prog("plain_rlimit"), "1g");
	unsigned long bare = 0, failed = 0;
	ck_assert_msg(b.exit_code == 0 && sscanf(b.out, "%lu %lu", &bare, &failed) == 2 &&
			      bare > 1000,
		      "plain_rlimit 1g under %s alone: %s, stdout \"%s\"", a,
		      h_status(&b), b.out);
	h_run_free(&b);
	for (size_t k = 0; k < sizeof rlimit_settings / sizeof rlimit_settings[0]; k++) {
		unsigned long ok = allocations_under_1g(so, rlimit_settings[k]);
		ck_assert_msg(ok * 100 >= bare * 97,
			      "plain_rlimit 1g under %s with %s: %lu allocations of 512 KiB, %lu "
			      "without memcheck", a, rlimit_settings[k], ok, bare);
	}
}
END_TEST

START_TEST(test_stack_depth_0_leaks_with_empty_stacks)
{
	struct h_run r;
	struct h_report rep;
	const struct h_json *rec = run_with(&r, &rep, "MEMCHECK_STACK_DEPTH=0", "plain_errors",
					    "leak");
	ck_assert_msg(rec != NULL, "no \"process\" record");
	ck_assert_msg(h_nleaks(rec) == 1, "%zu leak records, expected 1", h_nleaks(rec));
	ck_assert_msg(h_leak_u64(rec, 0, "bytes") == 100000, "leaks[0].bytes = %s, expected 100000",
		      h_fmt(h_leak_u64(rec, 0, "bytes")));
	const struct h_json *stack = h_json_get(h_json_at(h_json_get(rec, "leaks"), 0), "stack");
	ck_assert_msg(stack && stack->type == HJ_ARR && stack->n == 0,
		      "leaks[0].stack should be an empty list, has %zu frames",
		      stack ? stack->n : 0);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_text_none_prints_nothing)
{
	struct h_run r;
	struct h_report rep;
	/* a failing region, which would be reported in full otherwise */
	const struct h_json *rec = run_with(&r, &rep, "MEMCHECK_TEXT=none", "plain_errors", "leak");
	ck_assert_msg(r.err_len == 0, "MEMCHECK_TEXT=none: stderr should be empty, got:\n%s", r.err);
	ck_assert_msg(rec != NULL, "MEMCHECK_TEXT=none must not stop the JSON report");
	H_EXPECT_STR(rec, "verdict", "fail");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_process_off_writes_no_process_record)
{
	struct h_run r;
	struct h_report rep;
	run_with(&r, &rep, "MEMCHECK_PROCESS=off", "plain_errors", "leak");
	ck_assert_msg(rep.n == 0, "MEMCHECK_PROCESS=off: %zu records, expected none", rep.n);
	h_report_free(&rep);
	h_run_free(&r);

	/* explicit regions are still reported */
	run_with(&r, &rep, "MEMCHECK_PROCESS=off", "regions", "stack");
	ck_assert_msg(rep.n == 1 && h_record(&rep, "stack", r.pid),
		      "MEMCHECK_PROCESS=off: expected only the record \"stack\", got %zu records",
		      rep.n);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_process_on_for_linked_program)
{
	/* not preloaded: no process region unless asked for */
	for (int on = 0; on <= 1; on++) {
		const char *report = h_tmppath("report.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      on ? "MEMCHECK_PROCESS=on" : "MEMCHECK_PROCESS=auto", NULL };
		struct h_run r;
		struct h_report rep;
		H_RUN(&r, 0, NULL, env, h_prog("regions"), "depth");
		ck_assert_msg(r.exit_code == 0, "regions depth: %s; stderr:\n%s", h_status(&r), r.err);
		H_LOAD(&rep, report);
		ck_assert_msg((h_record(&rep, "process", r.pid) != NULL) == on,
			      "MEMCHECK_PROCESS=%s, linked program: expected %s \"process\" record",
			      on ? "on" : "auto", on ? "a" : "no");
		ck_assert_msg(h_record(&rep, "d1", r.pid) && h_record(&rep, "d2", r.pid),
			      "the explicit regions d1, d2 should be reported");
		h_report_free(&rep);
		h_run_free(&r);
	}
}
END_TEST

static const char *const unwinders[] = { "fp", "libunwind", "glibc" };

START_TEST(test_unwinder_first_frame_is_leaking_function)
{
	const char *setting = h_env("MEMCHECK_UNWINDER=%s", unwinders[_i]);
	struct h_run r;
	struct h_report rep;
	const struct h_json *rec = run_with(&r, &rep, setting, "plain_errors", "leak");
	ck_assert_msg(rec != NULL, "no \"process\" record");
	ck_assert_msg(strstr(r.err, "MEMCHECK_UNWINDER") == NULL,
		      "%s: memcheck complained about the unwinder:\n%s", setting, r.err);
	ck_assert_msg(h_nleaks(rec) == 1, "%s: %zu leak records, expected 1", setting,
		      h_nleaks(rec));
	H_EXPECT_FRAME(rec, 0, 0, "leak_here");
	H_EXPECT_FRAME(rec, 0, 1, "leak_level2");
	H_EXPECT_FRAME(rec, 0, 2, "leak_level1");
	H_EXPECT_FRAME(rec, 0, 3, "main");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_nothing_on_stdout_from_memcheck)
{
	/* plain_errors stdout prints three lines and leaks: memcheck has a
	 * full report to give, all of it on stderr */
	struct h_run bare, r;
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=full", NULL };
	H_RUN(&bare, 0, NULL, NULL, h_prog("plain_errors"), "stdout");
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "stdout");
	ck_assert_msg(bare.exit_code == 0 && r.exit_code == 0, "exit: %s bare, %s under memcheck",
		      h_status(&bare), h_status(&r));
	ck_assert_msg(strcmp(bare.out, "line one\nline two\nline three: 3\n") == 0,
		      "unexpected stdout from plain_errors itself: \"%s\"", bare.out);
	ck_assert_msg(r.out_len == bare.out_len && strcmp(r.out, bare.out) == 0,
		      "stdout differs under memcheck:\n--- bare\n%s--- memcheck\n%s", bare.out,
		      r.out);
	ck_assert_msg(strstr(r.err, "definitely lost") != NULL,
		      "memcheck's reports should be on stderr:\n%s", r.err);
	h_run_free(&bare);
	h_run_free(&r);

	/* a program that forks and execs a child: the same */
	H_RUN(&bare, 0, NULL, NULL, h_prog("plain_fork"), "exec");
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_fork"), "exec");
	ck_assert_msg(strncmp(r.out, "child=", 6) == 0 && strchr(r.out, '\n') == r.out + r.out_len - 1,
		      "plain_fork exec: stdout under memcheck should be one \"child=PID\" line, "
		      "got:\n%s", r.out);
	h_run_free(&bare);
	h_run_free(&r);
}
END_TEST


/* The file MEMCHECK_LOG=pattern names for pid. */
static char *log_of(const char *base, pid_t pid)
{
	return h_read_file(h_env("%s.%d", base, (int)pid), NULL);
}

START_TEST(test_log_takes_all_the_text)
{
	const char *base = h_tmppath("log");
	const char *report = h_tmppath("report.jsonl");
	/* a leak, a double free and a bad setting: all three kinds of text */
	const char *env[] = { h_env("MEMCHECK_LOG=%s.%%p", base), h_env("MEMCHECK_REPORT=%s", report),
			      "MEMCHECK_TRACK=maybe", NULL };
	const char *modes[] = { "leak", "double" };
	for (size_t i = 0; i < 2; i++) {
		struct h_run r;
		H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), modes[i]);
		ck_assert_msg(r.exit_code == 0, "plain_errors %s: %s; stderr:\n%s", modes[i],
			      h_status(&r), r.err);
		ck_assert_msg(r.err_len == 0, "MEMCHECK_LOG set: stderr should be empty, got:\n%s",
			      r.err);
		char *log = log_of(base, r.pid);
		ck_assert_msg(log != NULL, "no file %s.%d", base, (int)r.pid);
		ck_assert_msg(strstr(log, "MEMCHECK_TRACK=maybe: expected a boolean") != NULL,
			      "the bad setting's complaint should be in the log:\n%s", log);
		const char *want = i == 0 ? "definitely lost" : "double free";
		ck_assert_msg(strstr(log, want) != NULL, "\"%s\" should be in the log:\n%s", want,
			      log);
		ck_assert_msg(strstr(log, h_env("==%d== memcheck: ", (int)r.pid)) != NULL,
			      "the log should have the process's own lines:\n%s", log);
		free(log);
		h_run_free(&r);
	}
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(rep.n == 2, "MEMCHECK_LOG must not change the JSON report: %zu records, "
		      "expected 2", rep.n);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_log_per_process_with_p)
{
	/* plain_fork fork: the parent and its forked child both leak */
	for (int per_pid = 0; per_pid <= 1; per_pid++) {
		const char *base = h_tmppath("log");
		const char *env[] = { per_pid ? h_env("MEMCHECK_LOG=%s.%%p", base)
					      : h_env("MEMCHECK_LOG=%s", base),
				      "MEMCHECK_TEXT=full", NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_fork"), "fork");
		ck_assert_msg(r.exit_code == 0 && r.err_len == 0,
			      "plain_fork fork: %s, expected exit 0 and nothing on stderr:\n%s",
			      h_status(&r), r.err);
		int child = 0;
		ck_assert_msg(sscanf(r.out, "child=%d", &child) == 1, "stdout: %s", r.out);
		const char *parent_line = h_env("==%d== memcheck: region", (int)r.pid);
		const char *child_line = h_env("==%d== memcheck: region", child);
		if (per_pid) {
			char *p = log_of(base, r.pid), *c = log_of(base, child);
			ck_assert_msg(p && c, "%%p: expected %s.%d and %s.%d", base, (int)r.pid,
				      base, child);
			ck_assert_msg(strstr(p, parent_line) && !strstr(p, child_line),
				      "the parent's file should have only the parent's text:\n%s", p);
			ck_assert_msg(strstr(c, child_line) && !strstr(c, parent_line),
				      "the child's file should have only the child's text:\n%s", c);
			free(p);
			free(c);
		} else {
			char *both = h_read_file(base, NULL);
			ck_assert_msg(both && strstr(both, parent_line) && strstr(both, child_line),
				      "no %%p: one file with both processes' text, got:\n%s",
				      both ? both : "(no file)");
			free(both);
		}
		h_run_free(&r);
	}
}
END_TEST

START_TEST(test_log_bad_pattern_or_path_falls_back_to_stderr)
{
	const char *bad[] = { h_env("MEMCHECK_LOG=%s.%%x", h_tmppath("log")),
			      "MEMCHECK_LOG=/nonexistent-memcheck-dir/log" };
	const char *said[] = { "\"%x\" at character", "cannot open MEMCHECK_LOG=" };
	for (size_t i = 0; i < 2; i++) {
		const char *env[] = { bad[i], NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "leak");
		ck_assert_msg(r.exit_code == 0, "%s: %s", bad[i], h_status(&r));
		ck_assert_msg(h_count_lines(r.err, said[i]) == 1,
			      "%s: expected one line saying \"%s\" on stderr, got:\n%s", bad[i],
			      said[i], r.err);
		ck_assert_msg(i == 1 || strstr(r.err, "expected %p (the process id) or %%"),
			      "%s: the line should say what was expected:\n%s", bad[i], r.err);
		ck_assert_msg(strstr(r.err, "definitely lost") != NULL,
			      "%s: the report should then be on stderr:\n%s", bad[i], r.err);
		h_run_free(&r);
	}
}
END_TEST

START_TEST(test_log_never_writes_to_the_programs_descriptors)
{
	/* plain_fds makes every descriptor from 3 up a copy of its own file */
	const char *log = h_tmppath("log");
	const char *own = h_tmppath("own");
	const char *env[] = { h_env("MEMCHECK_LOG=%s", log), NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_fds"), own);
	ck_assert_msg(r.exit_code == 0 && r.err_len == 0, "plain_fds: %s; stderr:\n%s",
		      h_status(&r), r.err);
	char *mine = h_read_file(own, NULL), *text = h_read_file(log, NULL);
	ck_assert_msg(mine && strcmp(mine, "program\n") == 0,
		      "the program's file should hold only its own line, got:\n%s",
		      mine ? mine : "(no file)");
	ck_assert_msg(text && strstr(text, "100 bytes in 1 blocks are definitely lost"),
		      "the log should have the leak, got:\n%s", text ? text : "(no file)");
	free(mine);
	free(text);
	h_run_free(&r);
}
END_TEST

START_TEST(test_log_deleted_midway_is_written_again)
{
	/* the shell's child deletes the log the shell has open (": " keeps
	 * the shell from exec'ing rm as its last command; bash, not dash,
	 * which leaves with _exit and so without memcheck's report) */
	const char *log = h_tmppath("log");
	/* MEMCHECK_PROGRAMS: bash and rm are installed on the system, which
	 * memcheck leaves out by default. */
	const char *env[] = { h_env("MEMCHECK_LOG=%s", log), "MEMCHECK_TEXT=full",
			      "MEMCHECK_PROGRAMS=*", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, "/bin/bash", "-c", h_env("rm -f %s; :", log));
	ck_assert_msg(r.exit_code == 0 && r.err_len == 0, "sh -c 'rm -f LOG': %s; stderr:\n%s",
		      h_status(&r), r.err);
	char *text = h_read_file(log, NULL);
	ck_assert_msg(text && strstr(text, "memcheck: region \"process\" in /bin/bash") &&
			      strstr(text, "memcheck: region \"process\" in rm"),
		      "the shell's and rm's reports should be in a new %s, got:\n%s", log,
		      text ? text : "(no file)");
	free(text);
	h_run_free(&r);
}
END_TEST

START_TEST(test_programs_pick_who_gets_the_process_region)
{
	static const struct {
		const char *patterns;
		bool reported;
	} cases[] = {
		{ "nothing-matches", false },
		{ "plain_err*", true },
		{ "*/prog/plain_errors", true },
		{ "bash:sh:plain_errors", true },
		{ "prog/plain_errors", false }, /* a '/': the whole path must match */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct h_run r;
		struct h_report rep;
		const char *setting = h_env("MEMCHECK_PROGRAMS=%s", cases[i].patterns);
		const struct h_json *rec = run_with(&r, &rep, setting, "plain_errors", "leak");
		ck_assert_msg((rec != NULL) == cases[i].reported,
			      "%s: plain_errors should %sget a process record", setting,
			      cases[i].reported ? "" : "not ");
		ck_assert_msg(cases[i].reported || r.err_len == 0,
			      "%s: a program left out should get no text, got:\n%s", setting, r.err);
		h_report_free(&rep);
		h_run_free(&r);
	}
	/* plain_fork exec: the parent matches, the /usr/bin/true it starts not */
	struct h_run r;
	struct h_report rep;
	run_with(&r, &rep, "MEMCHECK_PROGRAMS=plain_fork", "plain_fork", "exec");
	ck_assert_msg(rep.n == 1 && h_record(&rep, "process", r.pid),
		      "MEMCHECK_PROGRAMS=plain_fork: expected only plain_fork's record, got %zu",
		      rep.n);
	h_report_free(&rep);
	h_run_free(&r);
	/* A program left out and only preloaded is only forwarded to its
	 * allocator: memcheck does not see mimalloc's own block freed
	 * (plain_errors unknown), which it reports otherwise. */
	const char *mi;
	if (h_allocator(H_MIMALLOC, &mi)) {
		for (int left_out = 0; left_out <= 1; left_out++) {
			const char *base = h_tmppath("log");
			const char *env[] = { left_out ? "MEMCHECK_PROGRAMS=nothing-matches"
						       : "MEMCHECK_PROGRAMS=plain_errors",
					      h_env("MEMCHECK_LOG=%s.%%p", base), NULL };
			H_RUN(&r, H_PRELOAD, mi, env, h_prog("plain_errors"), "unknown");
			ck_assert_msg(r.exit_code == 0 && strcmp(r.out, "continued\n") == 0,
				      "plain_errors unknown: %s, stdout \"%s\"", h_status(&r), r.out);
			ck_assert_msg(r.err_len == 0, "stderr should be empty: %s", r.err);
			char *log = log_of(base, r.pid);
			ck_assert_msg(left_out ? log == NULL : log && strstr(log, "never saw allocated"),
				      "%s: %s", env[0], left_out ? "no log file expected (nothing "
				      "to say)" : "the unknown free should be reported");
			free(log);
			h_run_free(&r);
		}
	}
	/* regions a program opens itself are reported all the same */
	run_with(&r, &rep, "MEMCHECK_PROGRAMS=nothing-matches", "regions", "stack");
	ck_assert_msg(rep.n == 1 && h_record(&rep, "stack", r.pid),
		      "a program left out: expected its own region \"stack\" alone, got %zu records",
		      rep.n);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("options", 30);
	tcase_add_test(tc, test_track_0_counts_exactly_and_lists_no_leaks);
	tcase_add_test(tc, test_track_0_counts_failures_under_a_limit);
	tcase_add_loop_test(tc, test_a_1g_address_space_limit_leaves_the_program_its_memory, 0,
			    H_NALLOCATORS);
	tcase_add_test(tc, test_stack_depth_0_leaks_with_empty_stacks);
	tcase_add_test(tc, test_text_none_prints_nothing);
	tcase_add_test(tc, test_process_off_writes_no_process_record);
	tcase_add_test(tc, test_process_on_for_linked_program);
	tcase_add_loop_test(tc, test_unwinder_first_frame_is_leaking_function, 0,
			    (int)(sizeof unwinders / sizeof unwinders[0]));
	tcase_add_test(tc, test_nothing_on_stdout_from_memcheck);
	tcase_add_test(tc, test_log_takes_all_the_text);
	tcase_add_test(tc, test_log_per_process_with_p);
	tcase_add_test(tc, test_log_bad_pattern_or_path_falls_back_to_stderr);
	tcase_add_test(tc, test_log_never_writes_to_the_programs_descriptors);
	tcase_add_test(tc, test_log_deleted_midway_is_written_again);
	tcase_add_test(tc, test_programs_pick_who_gets_the_process_region);
	return h_run_suite(NULL);
}
