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
 *
 * The "free" rows: a program that sets its limit (a raw prlimit64,
 * which memcheck cannot see or lift) to the descriptors it holds and one
 * more.  On main at d40e82b the scan's /proc/self/maps, kept open for
 * the symbolizer, took that number: the suppression files failed with
 * EMFILE (the stdio buffer listed still reachable, "shipped suppressions
 * not read"), and the report file too (no record).  Now memcheck's own
 * open that gets EMFILE has the scan's file released and is made once
 * more (lib/seccomp.c, lib/scan.c): records and verdicts as with no
 * limit, the program's own open and errno as bare.
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

/* stdout as without memcheck: the program's own open and errno */
H_CHECK(out_as_bare)
{
	struct h_res b;
	h_exec_bare(&b, x, c);
	ck_assert_msg(!strcmp(x->r.out, b.r.out), "%s: stdout \"%s\", without memcheck \"%s\"",
		      x->label, x->r.out, b.r.out);
	h_res_free(&b);
}

/* The leak figures of the record, each as in the same program's run
 * with no limit; its stdout as bare. */
H_CHECK(as_unlimited)
{
	out_as_bare(x, rec, c);
	struct h_res u;
	struct h_spec free_run = c->run;
	free_run.alloc = x->alloc;
	free_run.args = H_LIST("free-", "cap");
	h_exec(&u, &free_run);
	const struct h_json *urec = h_record(&u.rep, "process", 0);
	ck_assert_msg(urec != NULL, "%s: no record without the limit", x->label);
	static const char *const kinds[] = { "definitely_lost", "indirectly_lost", "possibly_lost",
					     "still_reachable", "suppressed" };
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		for (int j = 0; j < 2; j++) {
			const char *sub = j ? "bytes" : "blocks";
			uint64_t got = h_count(rec, kinds[i], sub), want = h_count(urec, kinds[i], sub);
			ck_assert_msg(got == want, "%s: %s.%s = %s, without the limit %s", x->label,
				      kinds[i], sub, h_fmt(got), h_fmt(want));
		}
	h_res_free(&u);
}

static const struct h_case cases[] = {
	/* no libdw (MEMCHECK_SYMBOLIZE=0): the report file too */
	{ "one number left above the descriptors held",
	  .run = { .prog = "plain_nofile", .args = H_LIST("free1", "cap"), .flags = H_PRELOAD,
		   .env = H_LIST("MEMCHECK_TEXT=full", "MEMCHECK_SYMBOLIZE=0") },
	  .record = "process", .no_err = NO_EMFILE, .want = { LEAK }, .check = as_unlimited },
	/* libdw keeps the program's file open until the exit: the
	 * suppressions read, the report file not (memcheck(7), LIMITS) */
	{ "one number left above the descriptors held, frames named",
	  .run = { .prog = "plain_nofile", .args = H_LIST("free1", "cap"), .flags = H_PRELOAD,
		   .text = "full", .no_report = true },
	  .err = H_LIST("48 bytes in 1 blocks are definitely lost",
			"used_suppression: 1 glibc-2.36-stdio-buffer"),
	  .no_err = H_LIST("shipped suppressions not read", "cannot read"), .check = out_as_bare },
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
	/* A limit inherited with soft and hard alike, above 900: the copy of
	 * standard error memcheck kept from start-up at 900 took one of
	 * the program's numbers (994 opened where bare opens 995).  Now no
	 * copy is made while descriptor 2 stays (lib/fdkeep.c). */
	{ "inherited limit 1000, soft = hard: as many files as bare",
	  .run = { .prog = "plain_nofile", .args = H_LIST("inherit1000", "nocap"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "full", .no_report = true },
	  .exit = 23, .err = H_LIST("48 bytes in 1 blocks are definitely lost"),
	  .check = counts_as_bare },
	/* a program that lists its descriptors sees its own alone (900 was
	 * memcheck's), and where it closed descriptor 2 memcheck's text
	 * still goes to the standard error it started with */
	{ "the program's descriptors as bare",
	  .run = { .prog = "plain_fdlist", .flags = H_PRELOAD, .text = "full",
		   .no_report = true },
	  .err = H_LIST("32 bytes in 1 blocks are definitely lost"), .check = out_as_bare },
	{ "descriptor 2 closed: the text still shown",
	  .run = { .prog = "plain_fdlist", .args = H_LIST("close2"), .flags = H_PRELOAD,
		   .text = "full", .no_report = true },
	  .err = H_LIST("32 bytes in 1 blocks are definitely lost") },
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
