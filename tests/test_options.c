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

/* A program preloaded with one setting, memcheck's text at its default. */
#define WITH(setting, program, ...)                                            \
	.allocators = H_ONLY(H_GLIBC),                                          \
	.run = { .prog = program, .args = H_LIST(__VA_ARGS__), .flags = H_PRELOAD, \
		 .env = H_LIST(setting), .text = "" }

/* MEMCHECK_TRACK=0: counted, never listed; the leaks list is there,
 * empty. */
H_CHECK(no_leaks_listed)
{
	ck_assert_msg(h_nleaks(rec) == 0, "%s: %zu leak records, expected none", x->label,
		      h_nleaks(rec));
	ck_assert_msg(h_json_get(rec, "leaks") && h_json_get(rec, "leaks")->type == HJ_ARR,
		      "%s: leaks should be a list (empty)", x->label);
}

/* Count-only malloc does not look at results where nothing can fail
 * (lib/limits.c): a program that limits its own address space, by each
 * call the C library has for it or before an exec, still gets every
 * failure counted, as tracking counts it. */
H_CHECK(failures_counted)
{
	unsigned long ok = 0, failed = 0;
	ck_assert_msg(sscanf(x->r.out, "%lu %lu", &ok, &failed) == 2 && failed > 0 && ok > 0,
		      "%s: stdout \"%s\"", x->label, x->r.out);
	ck_assert_msg(h_u64(rec, "allocs") == ok && h_u64(rec, "failed_allocs") == failed &&
			      h_u64(rec, "frees") == ok &&
			      h_u64(rec, "bytes_allocated") == ok * 512 * 1024,
		      "%s: allocs %s, failed_allocs %s, frees %s; the program saw %lu made and %lu "
		      "failed", x->label, h_fmt(h_u64(rec, "allocs")),
		      h_fmt(h_u64(rec, "failed_allocs")), h_fmt(h_u64(rec, "frees")), ok, failed);
}
#define UNDER_A_LIMIT(mode)                                                    \
	{ "failures under a limit", WITH("MEMCHECK_TRACK=0", "plain_rlimit", mode), \
	  .record = "process", .check = failures_counted },                     \
	{ "failures under a limit", WITH("MEMCHECK_TRACK=1", "plain_rlimit", mode), \
	  .record = "process", .check = failures_counted }

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

H_CHECK(empty_stack)
{
	ck_assert_msg(h_nleaks(rec) == 1, "%s: %zu leak records, expected 1", x->label,
		      h_nleaks(rec));
	ck_assert_msg(h_leak_u64(rec, 0, "bytes") == 100000, "leaks[0].bytes = %s, expected 100000",
		      h_fmt(h_leak_u64(rec, 0, "bytes")));
	const struct h_json *stack = h_json_get(h_json_at(h_json_get(rec, "leaks"), 0), "stack");
	ck_assert_msg(stack && stack->type == HJ_ARR && stack->n == 0,
		      "leaks[0].stack should be an empty list, has %zu frames",
		      stack ? stack->n : 0);
}

/* a failing region, which would be reported in full otherwise; the JSON
 * report goes on */
H_CHECK(nothing_on_stderr)
{
	ck_assert_msg(x->r.err_len == 0, "MEMCHECK_TEXT=none: stderr should be empty, got:\n%s",
		      x->r.err);
}

/* not preloaded: no process region unless asked for; the explicit
 * regions d1, d2 reported either way */
H_CHECK(process_as_asked)
{
	bool on = strcmp(c->run.env[0], "MEMCHECK_PROCESS=on") == 0;
	ck_assert_msg((h_record(&x->rep, "process", x->r.pid) != NULL) == on,
		      "%s: expected %s \"process\" record", x->label, on ? "a" : "no");
	h_rec(x, "d1");
	h_rec(x, "d2");
}

/* Each unwinder, without a complaint: the first frame is the leaking
 * function, then its callers up to main. */
H_CHECK(frames_to_main)
{
	ck_assert_msg(h_nleaks(rec) == 1, "%s: %zu leak records, expected 1", x->label,
		      h_nleaks(rec));
	H_EXPECT_FRAME(rec, 0, 0, "leak_here");
	H_EXPECT_FRAME(rec, 0, 1, "leak_level2");
	H_EXPECT_FRAME(rec, 0, 2, "leak_level1");
	H_EXPECT_FRAME(rec, 0, 3, "main");
}
#define UNWINDER(name)                                                         \
	{ "unwinder " name, WITH("MEMCHECK_UNWINDER=" name, "plain_errors", "leak"), \
	  .no_err = H_LIST("MEMCHECK_UNWINDER"), .record = "process", .check = frames_to_main }

H_CHECK(silent)
{
	ck_assert_msg(x->r.err_len == 0, "%s: a program left out should get no text, got:\n%s",
		      x->label, x->r.err);
}
#define PICKED(patterns)                                                       \
	{ "programs picked", WITH("MEMCHECK_PROGRAMS=" patterns, "plain_errors", "leak"), \
	  .record = "process" }
#define LEFT_OUT(patterns)                                                     \
	{ "programs left out", WITH("MEMCHECK_PROGRAMS=" patterns, "plain_errors", "leak"), \
	  .records = H_NO_RECORDS, .check = silent }

static const struct h_case cases[] = {
	/* the whole family, everything freed */
	{ "count-only", WITH("MEMCHECK_TRACK=0", "plain_family", NULL), .check = no_leaks_listed,
	  .record = "process", .want = { { "allocs", 12 }, { "frees", 12 }, { "reallocs", 6 },
		    { "bytes_allocated", 10632 } } },
	/* a leak: counted, not listed */
	{ "count-only", WITH("MEMCHECK_TRACK=0", "plain_errors", "leak"), .check = no_leaks_listed,
	  .record = "process", .want = { { "allocs", 2 }, { "frees", 1 }, { "bytes_allocated", 100010 } } },
	UNDER_A_LIMIT("none"), UNDER_A_LIMIT("setrlimit"), UNDER_A_LIMIT("setrlimit64"),
	UNDER_A_LIMIT("prlimit"), UNDER_A_LIMIT("prlimit64"), UNDER_A_LIMIT("exec"),
	{ "stack depth 0", WITH("MEMCHECK_STACK_DEPTH=0", "plain_errors", "leak"),
	  .record = "process", .check = empty_stack },
	{ "text none", WITH("MEMCHECK_TEXT=none", "plain_errors", "leak"),
	  .check = nothing_on_stderr, .want = { { "verdict", .str = "fail" } } },
	{ "no process region", WITH("MEMCHECK_PROCESS=off", "plain_errors", "leak"),
	  .records = H_NO_RECORDS },
	/* explicit regions are still reported */
	{ "no process region", WITH("MEMCHECK_PROCESS=off", "regions", "stack"),
	  .record = "stack", .records = 1 },
	{ "process region for a linked program", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "regions", .args = H_LIST("depth"), .env = H_LIST("MEMCHECK_PROCESS=on") },
	  .check = process_as_asked },
	{ "process region for a linked program", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "regions", .args = H_LIST("depth"),
		   .env = H_LIST("MEMCHECK_PROCESS=auto") },
	  .check = process_as_asked },
	UNWINDER("fp"), UNWINDER("libunwind"), UNWINDER("glibc"),
	/* MEMCHECK_PROGRAMS picks who gets the process region: a pattern
	 * with a '/' must match the whole path; a program left out gets no
	 * text */
	PICKED("plain_err*"), PICKED("*/prog/plain_errors"), PICKED("bash:sh:plain_errors"),
	LEFT_OUT("nothing-matches"), LEFT_OUT("prog/plain_errors"),
	/* plain_fork exec: the parent matches, the /usr/bin/true it starts not */
	{ "programs picked", WITH("MEMCHECK_PROGRAMS=plain_fork", "plain_fork", "exec"),
	  .records = 1, .record = "process" },
	/* regions a program opens itself are reported all the same */
	{ "programs picked", WITH("MEMCHECK_PROGRAMS=nothing-matches", "regions", "stack"),
	  .records = 1, .record = "stack" },
};

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

/* A program left out and only preloaded is only forwarded to its
 * allocator: memcheck does not see mimalloc's own block freed
 * (plain_errors unknown), which it reports otherwise. */
START_TEST(test_programs_left_out_are_only_forwarded)
{
	if (!h_allocator(H_MIMALLOC, NULL))
		return;
	for (int left_out = 0; left_out <= 1; left_out++) {
		const char *base = h_tmppath("log");
		const char *env[] = { left_out ? "MEMCHECK_PROGRAMS=nothing-matches"
					       : "MEMCHECK_PROGRAMS=plain_errors",
				      h_env("MEMCHECK_LOG=%s.%%p", base), NULL };
		struct h_res x;
		H_EXEC(&x, .prog = "plain_errors", .args = H_LIST("unknown"), .alloc = H_MIMALLOC,
		       .flags = H_PRELOAD, .env = env, .no_report = true, .text = "");
		h_expect_exit(&x, 0);
		ck_assert_msg(strcmp(x.r.out, "continued\n") == 0, "%s: stdout \"%s\"", x.label,
			      x.r.out);
		ck_assert_msg(x.r.err_len == 0, "stderr should be empty: %s", x.r.err);
		char *log = log_of(base, x.r.pid);
		ck_assert_msg(left_out ? log == NULL : log && strstr(log, "never saw allocated"),
			      "%s: %s", env[0], left_out ? "no log file expected (nothing "
			      "to say)" : "the unknown free should be reported");
		free(log);
		h_res_free(&x);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("options", 30);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, test_a_1g_address_space_limit_leaves_the_program_its_memory, 0,
			    H_NALLOCATORS);
	tcase_add_test(tc, test_nothing_on_stdout_from_memcheck);
	tcase_add_test(tc, test_log_takes_all_the_text);
	tcase_add_test(tc, test_log_per_process_with_p);
	tcase_add_test(tc, test_log_bad_pattern_or_path_falls_back_to_stderr);
	tcase_add_test(tc, test_log_never_writes_to_the_programs_descriptors);
	tcase_add_test(tc, test_log_deleted_midway_is_written_again);
	tcase_add_test(tc, test_programs_left_out_are_only_forwarded);
	return h_run_suite(NULL);
}
