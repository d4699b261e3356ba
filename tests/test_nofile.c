/*
 * test_nofile.c - a program that lowers its open-file limit and opens
 * files until EMFILE (tests/prog/plain_nofile, as libevent's regress
 * listener/error_unlock and dns/bufferevent_connect_hostname_emfile do)
 * counts as many as without memcheck, reads back the limit it set, and
 * its leak is still reported and fails it.
 *
 * On main at fff7c31, at a limit of 20 its records were lost ("cannot
 * open MEMCHECK_REPORT=...: Too many open files", on the program's
 * stderr under `memcheck run -q`; /proc/self/maps unread, so the scan
 * had no roots; no file:line), and at 1000 it opened 994 files where
 * bare it opens 995 (memcheck's copy of standard error at 900).  Now
 * the kernel's soft limit is the program's, its hard limit leaves room
 * that memcheck's own work uses (lib/rlimits.c), and the descriptors
 * memcheck keeps lie above the program's limit.
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* The program's stdout (the limit read back, the files opened, errno)
 * is what it prints without memcheck, under the same allocator. */
H_CHECK(counts_as_bare)
{
	struct h_res b;
	h_exec_bare(&b, x, c);
	ck_assert_msg(strstr(b.r.out, "errno=EMFILE"), "%s without memcheck: %s", x->label,
		      b.r.out);
	ck_assert_msg(!strcmp(x->r.out, b.r.out),
		      "%s: stdout \"%s\", without memcheck \"%s\"", x->label, x->r.out, b.r.out);
	h_res_free(&b);
}

/* the leak named where it is, by libdw (the program's own file:line) */
H_CHECK(leak_named)
{
	counts_as_bare(x, rec, c);
	ck_assert_msg(h_nleaks(rec) >= 1, "%s: no leak listed", x->label);
	const char *fn = h_frame_str(rec, 0, 0, "function");
	ck_assert_msg(fn && !strcmp(fn, "leak"), "%s: the leak's first frame is %s, not leak()",
		      x->label, fn ? fn : "unnamed");
}

#define LEAK { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 48 }
#define NO_EMFILE H_LIST("Too many open files", "cannot open", "cannot read")
#define PRELOADED(n, mode)                                                                 \
	.run = { .prog = "plain_nofile", .args = H_LIST(n, mode), .flags = H_PRELOAD,       \
		 .env = H_LIST("MEMCHECK_TEXT=full") },                                      \
	.record = "process", .no_err = NO_EMFILE, .want = { LEAK }, .check = leak_named

static const struct h_case cases[] = {
	/* libevent's shape: soft and hard alike, at the descriptors it holds */
	{ "limit 20, without CAP_SYS_RESOURCE", PRELOADED("20", "nocap") },
	{ "limit 20, as root", PRELOADED("20", "cap") },
	/* above the copy of standard error memcheck kept at 900 */
	{ "limit 1000, without CAP_SYS_RESOURCE", PRELOADED("1000", "nocap") },
	/* a region ended at the limit: its record written */
	{ "limit 20, a region ended at it",
	  .run = { .prog = "plain_nofile", .args = H_LIST("20", "nocap", "region"),
		   .flags = H_PRELOAD },
	  .record = "full", .no_err = NO_EMFILE, .want = { LEAK }, .check = counts_as_bare },
	/* A limit it inherited, soft and hard alike (`ulimit -n 20`), which
	 * memcheck cannot lift: at exit every descriptor is the program's.
	 * What memcheck could not read it says; the RSS it could not read
	 * is unknown (was "0 B at end"), the shipped suppressions' absence
	 * named (was silent: the stdio buffer listed as a block kept). */
	{ "inherited limit 20, soft = hard, all taken",
	  .run = { .prog = "plain_nofile", .args = H_LIST("inherit20", "nocap"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "full", .no_report = true },
	  .exit = 23,
	  .err = H_LIST("shipped suppressions not read: Too many open files",
			"48 bytes in 1 blocks are definitely lost", "unknown at end"),
	  .no_err = H_LIST(" 0 B at end", "peak 0 B"), .check = counts_as_bare },
	/* memcheck run -q: nothing on the program's stderr, the leak fails it */
	{ "memcheck run -q, limit 20",
	  .run = { .cli = H_LIST("run", "-q"), .prog = "plain_nofile",
		   .args = H_LIST("20", "nocap"), .text = "", .no_report = true },
	  .setup = h_setup_allocator_preloaded, .exit = 1,
	  .err = H_LIST("48 bytes in 1 blocks are definitely lost"), .no_err = NO_EMFILE,
	  .check = counts_as_bare },
};

int main(void)
{
	TCase *tc = h_tcase("nofile", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
