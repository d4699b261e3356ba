/*
 * test_wrapper.c - memcheck as the wrapper a test driver puts in front of
 * each test: valgrind's command line (tools/vgcompat.c, what CTest's
 * MEMORYCHECK_TYPE=Valgrind runs) and `memcheck run --quiet` (meson's
 * exe_wrapper, automake's LOG_COMPILER).  The statuses a driver reads
 * (0, 77 skip, 99 hard error, a leak's failure, a signal) come through as
 * the driver must see them, under every allocator.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

static const char *cli(void)
{
	return h_env("%s/memcheck", h_build());
}

/* env with the allocator's object in LD_PRELOAD, as a user would have
 * it: memcheck puts itself in front. */
static const char *const *env_for(const char *so, const char *extra)
{
	static const char *env[4];
	size_t n = 0;
	if (so)
		env[n++] = h_env("LD_PRELOAD=%s", so);
	if (extra)
		env[n++] = extra;
	env[n] = NULL;
	return env;
}

/* valgrind's options as CTest passes them: --log-file first, then its
 * defaults.  The log has valgrind's words for the leak; the status is
 * the library's. */
START_TEST(valgrind_command_line)
{
	for (int a = 0; a < H_NALLOCATORS; a++) {
		const char *so;
		if (!h_allocator(a, &so))
			continue;
		const char *name = h_allocators[a].name;
		const char *log = h_tmppath("MemoryChecker.1.log");
		struct h_run r;
		H_RUN(&r, H_EXITCODE, NULL, env_for(so, NULL), cli(), h_env("--log-file=%s", log),
		      "-q", "--tool=memcheck", "--leak-check=yes", "--show-reachable=yes",
		      "--num-callers=50", h_prog("plain_exit"), "leak");
		ck_assert_msg(r.exit_code == 23, "%s: leak: %s, expected 23; stderr:\n%s", name,
			      h_status(&r), r.err);
		char *text = h_read_file(log, NULL);
		ck_assert_msg(text && strstr(text, "40 bytes in 1 blocks are definitely lost in "
					     "loss record 1 of 1 in region \"process\""),
			      "%s: the log has no valgrind-worded leak record:\n%s", name,
			      text ? text : "(no file)");
		ck_assert_msg(strstr(text, h_env("(allocator %s)", name)),
			      "%s: the program did not run under that allocator:\n%s", name, text);
		free(text);
		h_run_free(&r);

		/* clean: exit 0, and the log exists though empty (CTest warns
		 * about every log file that is missing) */
		unlink(log);
		H_RUN(&r, H_EXITCODE, NULL, env_for(so, NULL), cli(), h_env("--log-file=%s", log),
		      "-q", h_prog("plain_exit"), "clean");
		ck_assert_msg(r.exit_code == 0, "%s: clean: %s", name, h_status(&r));
		struct stat st;
		ck_assert_msg(stat(log, &st) == 0 && st.st_size == 0,
			      "%s: clean: expected an empty %s", name, log);
		h_run_free(&r);
	}
}
END_TEST

START_TEST(valgrind_options_map_to_memcheck)
{
	const char *log = h_tmppath("vg.%p.log");
	struct h_run r;
	/* --error-exitcode, a status of the program's own kept */
	H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), "--error-exitcode=5", "-q",
	      h_prog("plain_exit"), "leak");
	ck_assert_msg(r.exit_code == 5, "--error-exitcode=5: %s", h_status(&r));
	h_run_free(&r);
	H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), "-q", h_prog("plain_exit"), "leak-status", "77");
	ck_assert_msg(r.exit_code == 77, "exit 77: %s", h_status(&r));
	h_run_free(&r);
	/* a suppression file, as valgrind reads it, makes the leak fine */
	const char *supp = h_tmppath("leak.supp");
	FILE *f = fopen(supp, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\n   plain_exit's leak\n   Memcheck:Leak\n   fun:malloc\n   fun:leak\n}\n", f);
	fclose(f);
	H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), h_env("--suppressions=%s", supp),
	      h_env("--log-file=%s", log), h_prog("plain_exit"), "leak");
	ck_assert_msg(r.exit_code == 0, "--suppressions: %s", h_status(&r));
	h_run_free(&r);
	/* %p is the program's pid: the exec'd program keeps memcheck's */
	H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), h_env("--log-file=%s", log), "-q",
	      h_prog("plain_exit"), "leak");
	const char *own = h_env("%.*s%d.log", (int)(strstr(log, "%p") - log), log, (int)r.pid);
	char *text = h_read_file(own, NULL);
	ck_assert_msg(text && strstr(text, "definitely lost in loss record"),
		      "no log %s with the leak", own);
	free(text);
	h_run_free(&r);
	/* what memcheck cannot honour is refused, not ignored */
	const char *refused[][2] = { { "--tool=helgrind", "only valgrind's memcheck" },
				     { "--xml=yes", "no valgrind XML" },
				     { "--frobnicate", "unknown option --frobnicate" } };
	for (size_t i = 0; i < 3; i++) {
		H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), refused[i][0], h_prog("plain_exit"),
		      "clean");
		ck_assert_msg(r.exit_code == 2 && strstr(r.err, refused[i][1]),
			      "%s: %s, stderr:\n%s", refused[i][0], h_status(&r), r.err);
		h_run_free(&r);
	}
	/* options that tune valgrind's own instrumentation are accepted */
	H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), "--track-origins=yes", "--trace-children=yes",
	      "--malloc-fill=0xAA", h_prog("plain_exit"), "clean");
	ck_assert_msg(r.exit_code == 0, "ignored options: %s; stderr:\n%s", h_status(&r), r.err);
	h_run_free(&r);
}
END_TEST

/* memcheck run --quiet: one allocator, nothing said when all is well,
 * the command's status as it is. */
START_TEST(run_quiet_is_a_wrapper)
{
	static const struct {
		const char *what, *arg;
		int want;
	} cases[] = {
		{ "clean", NULL, 0 }, { "leak", NULL, 23 }, { "leak-status", "77", 77 },
		{ "leak-status", "99", 99 }, { "leak-status", "3", 3 },
	};
	for (int a = 0; a < H_NALLOCATORS; a++) {
		const char *so;
		if (!h_allocator(a, &so))
			continue;
		const char *name = h_allocators[a].name;
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			struct h_run r;
			if (cases[i].arg)
				H_RUN(&r, H_EXITCODE, NULL, env_for(so, NULL), cli(), "run", "-q",
				      "--", h_prog("plain_exit"), cases[i].what, cases[i].arg);
			else
				H_RUN(&r, H_EXITCODE, NULL, env_for(so, NULL), cli(), "run", "-q",
				      "--", h_prog("plain_exit"), cases[i].what);
			ck_assert_msg(r.exit_code == cases[i].want, "%s: run -q plain_exit %s: %s, "
				      "expected %d; stderr:\n%s", name, cases[i].what, h_status(&r),
				      cases[i].want, r.err);
			ck_assert_msg(!strcmp(r.out, "out"), "%s: stdout \"%s\"", name, r.out);
			bool clean = !strcmp(cases[i].what, "clean");
			ck_assert_msg(clean ? r.err_len == 0 :
					      strstr(r.err, "definitely lost in loss record") != NULL,
				      "%s: run -q plain_exit %s: stderr:\n%s", name, cases[i].what,
				      r.err);
			h_run_free(&r);
		}
	}
	/* a leak with MEMCHECK_EXITCODE=0: the command exits 0, run says 1 */
	struct h_run r;
	H_RUN(&r, 0, NULL, NULL, cli(), "run", "-q", "--", h_prog("plain_exit"), "leak");
	ck_assert_msg(r.exit_code == 1 && strstr(r.err, "exit 1: 1 of 1 region record failed"),
		      "run -q, MEMCHECK_EXITCODE=0: %s; stderr:\n%s", h_status(&r), r.err);
	h_run_free(&r);
	/* killed by a signal: the same signal, so the driver says so */
	H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), "run", "-q", "--", "/bin/sh", "-c",
	      "kill -SEGV $$");
	ck_assert_msg(r.signal == SIGSEGV, "run -q, a crash: %s", h_status(&r));
	h_run_free(&r);
}
END_TEST

/* Without --quiet, 77 and 99 come through too; the table is still there. */
START_TEST(run_passes_skip_and_hard_error_on)
{
	int codes[] = { 77, 99 };
	for (size_t i = 0; i < 2; i++) {
		struct h_run r;
		H_RUN(&r, H_EXITCODE, NULL, NULL, cli(), "run", "-a", "glibc,jemalloc", "--",
		      h_prog("plain_exit"), "leak-status", h_env("%d", codes[i]));
		ck_assert_msg(r.exit_code == codes[i], "run, exit %d: %s; stderr:\n%s", codes[i],
			      h_status(&r), r.err);
		ck_assert_msg(strstr(r.err, h_env("exit %d: the command exited %d", codes[i],
						  codes[i])), "stderr:\n%s", r.err);
		h_run_free(&r);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("wrapper", 120);
	tcase_add_test(tc, valgrind_command_line);
	tcase_add_test(tc, valgrind_options_map_to_memcheck);
	tcase_add_test(tc, run_quiet_is_a_wrapper);
	tcase_add_test(tc, run_passes_skip_and_hard_error_on);
	return h_run_suite(NULL);
}
