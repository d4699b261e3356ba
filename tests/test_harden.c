/*
 * test_harden.c - memcheck's own resources failing, or taken by the
 * program, while the program runs (session 48): the program loses
 * nothing, and memcheck's loss is said, never a silent pass.
 *
 * Descriptors (tests/prog/plain_closeall): a program that closes every
 * descriptor (close_range(0, ~0U, 0), close_range(2, ...), closefrom(0),
 * close in a loop up to 4096) or dup2's /dev/null onto every number
 * closed the copy of standard error that its closing of descriptor 2
 * had made a moment before.  On main at 68cf1f5 its leak's text went
 * nowhere, unsaid, under every allocator: stderr empty, exit status 23
 * with no word of why.  Now memcheck's kept descriptors are passed over
 * by the program's ranges and moved before a close or dup2 of their
 * number (lib/fdkeep.c, lib/textout.c): the loss record, the FAIL line
 * and the status line are on the standard error the process started
 * with, and the program's own calls succeed as bare.
 *
 * quick_exit (tests/prog/plain_quickexit): the C library's quick_exit
 * ends with its own internal _exit, which memcheck's wrapper never saw.
 * On main at 68cf1f5 a program leaving by quick_exit had no record and
 * no text at all (`memcheck run` said "wrote no report"), under every
 * allocator, where valgrind reports its leak.  Now memcheck's handler
 * runs after the program's at_quick_exit handlers (the 333 bytes one of
 * them leaks counted, their output in their order) and ends the process
 * as _exit would (lib/life.c): the leak reported, the status the
 * program's own, or MEMCHECK_EXITCODE's for a 0.
 *
 * Root's rights given up (tests/prog/plain_dropuid, run as root; the
 * rows skip otherwise): a program that drops to nobody with setuid, or
 * seteuid, while MEMCHECK_REPORT lies in a directory root's alone.  On
 * main at 68cf1f5 the exit's open failed ("cannot open
 * MEMCHECK_REPORT=...: Permission denied"), the record lost.  Now the
 * report file is opened and kept before the ids change (lib/creds.c,
 * lib/sandbox.c): the record is there, its leak counted.
 *
 * A SIGTERM during memcheck's exit (tests/prog/plain_termexit: two
 * million live blocks, a timer's SIGTERM 20 ms after main returns, as a
 * driver's timeout comes to a process slow to end).  On main at 68cf1f5
 * the signal was owed to the scan's end and its timer, at the scan's
 * own deadline (MEMCHECK_FATAL_SCAN_MS), killed the process inside it:
 * no record, and the line saying so went into the exit's held text and
 * died with it; a signal after the record lost the text (the killed
 * process's record began a hold of its own, freeing the exit's).  Now
 * the owed signal's timer comes at twice the deadline, the line and the
 * held text are written where it still comes, and a hold already made
 * is kept (lib/fatal.c, lib/textout.c): a failed record (leak_check
 * incomplete, or the leak) and its FAIL line (10 runs of 10 under
 * tcmalloc by hand; once of 16 rows at load ~15 the cut record still
 * outlasted the timer, and then the line says no record was written).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* plain_closeall MODE under each allocator, memcheck's text at its
 * default: the leak shown, the program's stdout its own. */
#define CLOSEALL(mode)                                                         \
	.run = { .prog = "plain_closeall", .args = H_LIST(mode), .flags = H_PRELOAD,     \
		 .text = "", .no_report = true },                                \
	.stdout_is = mode " done\n",                              \
	.err = H_LIST("100 bytes in 1 blocks are definitely lost", "leak_here (",       \
		      "FAIL: ")

/* plain_closeall between: opens_between.c preloaded after memcheck,
 * OPENS_BETWEEN set (glibc: the row is about descriptors). */
H_SETUP(opens_between_preloaded)
{
	static const char *env[2];
	env[0] = "OPENS_BETWEEN=1";
	run->env = env;
	run->so = h_prog("libopens_between.so");
	return true;
}

/* plain_quickexit MODE STATUS under each allocator, its record read */
#define QUICK(mode, status)                                                    \
	.run = { .prog = "plain_quickexit", .args = H_LIST(mode, status),               \
		 .flags = H_PRELOAD, .text = "full" },                               \
	.record = "process"

/* The file memcheck writes after the program drops root's ids (the
 * report, or MEMCHECK_LOG's), in a directory only root may enter: the
 * variable that names it, its path (made by the setup), and what it must
 * hold (the leak, as a record or as text). */
static struct root_file {
	const char *var, *name, *want;
	const char *path;
} root_report = { "MEMCHECK_REPORT", "report.jsonl",
		  "\"definitely_lost\":{\"blocks\":1,\"bytes\":100}", NULL },
  root_log = { "MEMCHECK_LOG", "memcheck.log", "100 bytes in 1 blocks are definitely lost",
	       NULL };

static bool in_roots_directory(struct h_spec *run, const struct h_case *c, struct root_file *f)
{
	if (geteuid() != 0) {
		printf("note: not root; skipping the %s case\n", c->name);
		return false;
	}
	static const char *env[2];
	const char *dir = h_tmppath("rootonly");
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	f->path = h_env("%s/%s", dir, f->name);
	env[0] = h_env("%s=%s", f->var, f->path);
	run->env = env;
	return true;
}

static void kept_through_the_drop(const struct h_res *x, const struct root_file *f)
{
	char *got = h_read_file(f->path, NULL);
	ck_assert_msg(got && strstr(got, f->want), "%s: no leak in %s's %s:\n%s\nstderr:\n%s",
		      x->label, f->var, f->path, got ? got : "(none)", x->r.err);
	free(got);
}

H_SETUP(report_in_roots_directory)
{
	return in_roots_directory(run, c, &root_report);
}

H_CHECK(record_kept_through_the_drop)
{
	kept_through_the_drop(x, &root_report);
}

H_SETUP(log_in_roots_directory)
{
	return in_roots_directory(run, c, &root_log);
}

H_CHECK(log_kept_through_the_drop)
{
	kept_through_the_drop(x, &root_log);
}

/* plain_dropuid MODE as root, its report where nobody may write */
#define DROP(mode, ids)                                                        \
	.run = { .prog = "plain_dropuid", .args = H_LIST(mode), .flags = H_PRELOAD,      \
		 .text = "", .no_report = true },                                \
	.setup = report_in_roots_directory, .stdout_is = ids,                    \
	.no_err = H_LIST("cannot open MEMCHECK_REPORT"), .check = record_kept_through_the_drop

/* plain_dropuid MODE as root, its MEMCHECK_LOG where nobody may write
 * (the text there, none on stderr) */
#define DROP_LOG(mode, ids)                                                    \
	.run = { .prog = "plain_dropuid", .args = H_LIST(mode), .flags = H_PRELOAD,      \
		 .text = "", .no_report = true },                                \
	.setup = log_in_roots_directory, .stdout_is = ids,                       \
	.no_err = H_LIST("cannot open MEMCHECK_LOG", "definitely lost"),          \
	.check = log_kept_through_the_drop

/* The exit's record, failed, whether its scan was cut or not, with its
 * FAIL line; or, where even the cut scan's record outlasted the
 * signal's timer (a loaded machine), the line that says none was
 * written.  Never nothing. */
H_CHECK(record_failed_or_said)
{
	if (!strstr(x->r.err, "FAIL: ")) {
		ck_assert_msg(strstr(x->r.err, "killed by signal 15 while memcheck was at work in "
				      "this thread: no record"),
			      "%s: neither a FAIL line nor a word of the record lost:\n%s", x->label,
			      x->r.err);
		return;
	}
	const struct h_json *pr = h_rec(x, "process");
	ck_assert_msg(!strcmp(h_str(pr, "verdict"), "fail"), "%s: verdict %s:\n%s", x->label,
		      h_str(pr, "verdict"), x->r.err);
}

static const struct h_case cases[] = {
	{ "SIGTERM during the exit's scan: a record and its text",
	  .run = { .prog = "plain_termexit", .flags = H_PRELOAD, .text = "" },
	  .exit = H_EXIT_ANY, .stdout_is = "exiting\n", .check = record_failed_or_said },
	{ "setuid to nobody: the record kept", DROP("setuid", "uid 65534 euid 65534\n") },
	{ "seteuid to nobody: the record kept", DROP("seteuid", "uid 0 euid 65534\n") },
	/* MEMCHECK_LOG's file kept through the drop as the report's is (on
	 * main: "cannot open MEMCHECK_LOG=...: Permission denied; writing to
	 * standard error", the text on the stream a test compares) */
	{ "setuid to nobody: MEMCHECK_LOG's file kept", DROP_LOG("setuid", "uid 65534 euid 65534\n") },
	{ "seteuid to nobody: MEMCHECK_LOG's file kept", DROP_LOG("seteuid", "uid 0 euid 65534\n") },
	{ "quick_exit with no handler: the leak reported", QUICK("plain", "0"),
	  .stdout_is = "", .err = H_LIST("leak_here ("), .want = { { "definitely_lost.bytes", 100 } } },
	{ "quick_exit: the program's own status", QUICK("plain", "4"), .exit = 4,
	  .err = H_LIST("leak_here ("), .want = { { "definitely_lost.bytes", 100 } } },
	{ "quick_exit: a failing region's status for a 0",
	  .run = { .prog = "plain_quickexit", .args = H_LIST("plain", "0"), .flags = H_PRELOAD,
		   .text = "", .env = H_LIST("MEMCHECK_EXITCODE=23") },
	  .exit = 23, .record = "process", .err = H_LIST("exit status 23 instead of 0") },
	{ "quick_exit: reported after the program's handlers", QUICK("handlers", "0"),
	  .stdout_is = "h2\nh1\n", .err = H_LIST("leak_here (", "leak_more ("),
	  .want = { { "definitely_lost.bytes", 433 } } },
	{ "quick_exit from a thread: the leak reported", QUICK("thread", "0"),
	  .err = H_LIST("leak_here ("), .want = { { "definitely_lost.bytes", 100 } } },
	{ "close_range(0, ~0U, 0): the text still shown", CLOSEALL("close_range0") },
	{ "close_range(2, ~0U, 0): the text still shown", CLOSEALL("close_range2") },
	{ "closefrom(0): the text still shown", CLOSEALL("closefrom0") },
	{ "close of every number: the text still shown", CLOSEALL("loop") },
	{ "dup2 onto every number: the text still shown", CLOSEALL("dup2") },
	{ "close_range's CLOSE_RANGE_CLOEXEC: the text shown", CLOSEALL("cloexec") },
	/* memcheck's pieces around its copy of standard error, from the top
	 * down: files another thread opens between them are closed while
	 * the pieces below have free numbers, then kept, never a later one
	 * closed after an earlier one was kept (from the bottom up, main
	 * before limit50: exit 4) */
	{ "close_range in pieces: opens between them as around one call", CLOSEALL("between"),
	  .setup = opens_between_preloaded, .allocators = H_ONCE },
};

int main(void)
{
	TCase *tc = h_tcase("harden", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
