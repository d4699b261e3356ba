/*
 * test_fatal.c - a process killed by a fatal signal's default action
 * gets its record, marked with the signal, and dies exactly as bare
 * (lib/fatal.c, tests/prog/plain_fatal.c), under every allocator.
 *
 * Most rows run "plain_fatal wait CASE": a parent that runs CASE in a
 * child and prints its wait status (signal, core flag) on stdout, which
 * must be what the same run without memcheck prints; the child's record
 * must be there, with the signal and the figures a normal exit gives
 * (100 bytes definitely lost, 48 in 2 blocks still reachable).  Others:
 * what sigaction and signal show (the same as bare, line for line); a
 * handler of the program's that leaves by siglongjmp (no record at the
 * fault); SIGPIPE inherited ignored; valgrind's own LEAK SUMMARY for the
 * same crash, and the text of memcheck's valgrind command line against
 * valgrind's (CTest counts its Defects from those lines: with CTest's
 * own options, each of three crashes has as many loss records).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* The record that is not the parent's ("wait"'s own), or NULL. */
static const struct h_json *child_record(const struct h_res *x)
{
	for (size_t i = 0; i < x->rep.n; i++)
		if (h_u64(x->rep.rec[i], "pid") != (uint64_t)x->r.pid)
			return x->rep.rec[i];
	return NULL;
}

static void expect_leaks(const struct h_res *x, const struct h_json *rec)
{
	H_EXPECT_COUNT(rec, "definitely_lost", "bytes", 100);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 1);
	H_EXPECT_COUNT(rec, "indirectly_lost", "bytes", 0);
	H_EXPECT_COUNT(rec, "possibly_lost", "bytes", 0);
	(void)x;
}

/* stdout as bare's (the child's wait status), the child's record with
 * the signal the row's first out line names, and its leaks as at a
 * normal exit.  A row whose name says "(may give up)" may instead have
 * memcheck's line that it wrote no record. */
H_CHECK(killed_as_bare)
{
	struct h_res b;
	h_exec_bare(&b, x, c);
	ck_assert_msg(strcmp(x->r.out, b.r.out) == 0, "%s: stdout \"%s\", bare \"%s\"", x->label,
		      x->r.out, b.r.out);
	h_res_free(&b);
	const struct h_json *child = child_record(x);
	int sig = 0;
	const char *at = strstr(c->out[0], ": signal ");
	ck_assert(at && sscanf(at, ": signal %d", &sig) == 1);
	if (strstr(c->name, "(may give up)") && strstr(x->r.err, "no record"))
		return;
	if (strstr(c->name, "(may give up)") && strstr(x->r.err, "no record")) {
		h_expect_exit(x, 0);
		return;
	}
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", (uint64_t)sig);
	expect_leaks(x, child);
	H_EXPECT_STR(child, "verdict", "fail");
	/* the killed child's leak reaches the parent, which ignores how
	 * the child ended (exit 0 on main before session 34) */
	h_expect_exit(x, 23);
}

/* MEMCHECK_EXITCODE left as it is: a killed process's leaks must not
 * change how it ends, and they fail its measured parent, which exits 0
 * whatever its child's status (descend.c). */
#define WAIT(what)                                                                  \
	.run = { .prog = "plain_fatal", .args = H_LIST("wait", what),              \
		 .flags = H_PRELOAD | H_EXITCODE, .text = "none" },                \
	.check = killed_as_bare, .records = 2, .exit = H_EXIT_ANY

/* A record whose scan a signal's deadline cut (MEMCHECK_FATAL_SCAN_MS):
 * the figures counted, the leak kinds null, leak_check "incomplete", a
 * failed verdict that says why: never a pass.  It does not fail the
 * parent (the signal's doing, as the signal does not): 0. */
H_CHECK(scan_cut)
{
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", 15);
	H_EXPECT_STR(child, "leak_check", "incomplete");
	H_EXPECT_STR(child, "verdict", "fail");
	ck_assert_msg(h_violation_has(child, "leak check incomplete"), "%s: no violation",
		      x->label);
	ck_assert_msg(h_u64(child, "definitely_lost") == H_NULL &&
			      h_u64(child, "still_reachable") == H_NULL,
		      "%s: leak kinds not null", x->label);
	ck_assert_msg(h_u64(child, "live_blocks") >= 100003 &&
			      h_u64(child, "live_blocks") != H_NULL,
		      "%s: live_blocks %s", x->label, h_fmt(h_u64(child, "live_blocks")));
	h_expect_exit(x, 0);
	(void)c;
}

static const struct h_case cases[] = {
	{ "SIGSEGV with a leak", WAIT("segv"), .out = H_LIST("segv: signal 11 core") },
	{ "abort from assert", WAIT("abort"), .out = H_LIST("abort: signal 6 core") },
	{ "SIGTERM self-kill", WAIT("term"), .out = H_LIST("term: signal 15 core 0") },
	/* SIGALRM let through while the record is written (memcheck's
	 * timers): a pending one the program had blocked came into
	 * fatal_handler, a second fatal signal, and the record was given
	 * up; where the program had a handler, that ran, and its _exit(3)
	 * was the process's end (bare: SIGABRT), till session 45 */
	{ "SIGALRM pending and blocked at an abort: the record", WAIT("alarm-pending"),
	  .out = H_LIST("alarm-pending: signal 6 core") },
	{ "SIGALRM pending at an abort, the program's handler never run", WAIT("alarm-pending-exit"),
	  .out = H_LIST("alarm-pending-exit: signal 6 core") },
	/* a driver's SIGTERM is followed by SIGKILL (meson: 0.5 s later): the
	 * record's scan gives up at MEMCHECK_FATAL_SCAN_MS (here 1 ms, for
	 * 100,003 blocks), so that the record arrives; on main the option
	 * did not exist and the record came only after the whole scan */
	{ "SIGTERM, the scan given up at its deadline",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "term-many"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_FATAL_SCAN_MS=1") },
	  .check = scan_cut, .records = 2, .exit = H_EXIT_ANY,
	  .out = H_LIST("term-many: signal 15 core 0") },
	{ "SIGBUS past a mapped file's end", WAIT("bus"), .out = H_LIST("bus: signal 7 core") },
	{ "SIGALRM with no handler", WAIT("alarm"), .out = H_LIST("alarm: signal 14 core 0") },
	{ "SIGFPE", WAIT("fpe"), .out = H_LIST("fpe: signal 8 core") },
	{ "SIGSEGV in a thread while another allocates", WAIT("thread"),
	  .out = H_LIST("thread: signal 11 core") },
	{ "the program's handler, then SIG_DFL again", WAIT("dfl-again"),
	  .out = H_LIST("dfl-again: signal 11 core") },
	/* no alternate stack of the program's: memcheck's, which the
	 * program does not see (no record on main before session 34) */
	{ "a stack overflow in the main thread", WAIT("overflow"),
	  .out = H_LIST("overflow: signal 11 core") },
	/* a thread's own alternate stack of memcheck's, armed at its first
	 * allocation (no record, no text on main before session 38) */
	{ "a stack overflow in a second thread", WAIT("overflow-thread"),
	  .out = H_LIST("overflow-thread: signal 11 core") },
	/* a thread that never allocates: armed as pthread_create starts it
	 * (no record, no text on main before session 39); more threads
	 * before it than memcheck has alternate stacks, each given back */
	{ "a stack overflow in a thread that never allocates", WAIT("overflow-quiet"),
	  .out = H_LIST("overflow-quiet: signal 11 core") },
	/* a thread C11's thrd_create starts (the C library's own call of
	 * pthread_create), which never allocates: armed as it starts, as
	 * memcheck wraps thrd_create too (no record on main before
	 * session 40) */
	{ "a stack overflow in a thrd_create thread that never allocates", WAIT("overflow-c11"),
	  .out = H_LIST("overflow-c11: signal 11 core") },
	/* after 1,100 threads ended by a raw SYS_exit, which give no
	 * alternate stack back: the dead threads' taken back once every
	 * one of memcheck's 1,024 is taken (no record on main before
	 * session 41: the thread had none) */
	{ "a stack overflow after 1,100 threads ended by a raw SYS_exit", WAIT("overflow-rawexit"),
	  .out = H_LIST("overflow-rawexit: signal 11 core") },
	/* the program's SA_ONSTACK handler, with no alternate stack of
	 * its own, runs on the interrupted stack as bare (on memcheck's
	 * before session 35); memcheck's is there again for the overflow
	 * after it, a run left by siglongjmp included */
	{ "a SA_ONSTACK handler without an alternate stack of the program's", WAIT("onstack"),
	  .out = H_LIST("onstack: signal 11 core", "run 1: on the interrupted stack 1",
			"run 3: on the interrupted stack 1") },
	/* syscall(2)'s SYS_rt_sigaction and SYS_sigaltstack are seen as
	 * sigaction's and sigaltstack's: the view, a handler, SIG_DFL
	 * (memcheck's handler shown, the kernel's SIG_DFL set, no record,
	 * before session 35) */
	{ "handlers and the alternate stack set through syscall(2)", WAIT("raw"),
	  .out = H_LIST("raw: signal 11 core", "raw handler ran", "default 11: rc 0 DFL") },
	/* the handler runs once, then memcheck's is back, not the
	 * kernel's SIG_DFL (no record on main before session 34) */
	{ "an SA_RESETHAND handler after its one run", WAIT("resethand"),
	  .out = H_LIST("resethand: signal 11 core", "handled 1", "after 11: DFL") },
	{ "a sysv_signal handler after its one run", WAIT("sysv"),
	  .out = H_LIST("sysv: signal 11 core", "handled 1", "after 11: DFL") },
	/* the fault may come while memcheck is at work (its guard up):
	 * then "no record", never a hang nor another status */
	{ "a fault in a handler amid mallocs (may give up)",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "in-handler"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none" },
	  .check = killed_as_bare, .exit = H_EXIT_ANY,
	  .out = H_LIST("in-handler: signal 11 core") },
};

/* The child that the parent's SIGTERM kills: its record (forked, not
 * exec'd), the parent's own status 0. */
H_CHECK(child_killed)
{
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", 15);
	H_EXPECT_STR(child, "signal_name", "SIGTERM");
	H_EXPECT_U64(rec, "signal", H_MISSING);
}

/* What sigaction, signal and sigprocmask show, as bare. */
H_CHECK(view_as_bare)
{
	struct h_res b;
	h_exec_bare(&b, x, c);
	ck_assert_msg(strcmp(x->r.out, b.r.out) == 0, "%s: stdout\n%s\nbare\n%s", x->label, x->r.out,
		      b.r.out);
	h_res_free(&b);
}

/* The program's own SIGSEGV handler leaves by siglongjmp: nothing of
 * memcheck's at the fault, the record at its exit (no signal). */
H_CHECK(recovered)
{
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record", x->label);
	H_EXPECT_U64(child, "signal", H_MISSING);
	expect_leaks(x, child);
}

/* A crash is no failure of its own to pass on: bare's status, the
 * record's verdict pass. */
H_CHECK(died_clean)
{
	view_as_bare(x, rec, c);
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_STR(child, "verdict", "pass");
}

/* memcheck run's table and memcheck gate's line say the record is a
 * killed process's; gate reads the report run wrote. */
H_CHECK(cli_says_killed)
{
	struct h_res g;
	H_EXEC(&g, .cli = H_LIST("gate", x->report));
	h_expect_exit(&g, 1);
	ck_assert_msg(strstr(g.r.out, "killed by signal 11 (SIGSEGV); 100 bytes in 1 blocks"),
		      "%s: gate says\n%s%s", x->label, g.r.out, g.r.err);
	h_res_free(&g);
}

/* Count-only, the signal inside the allocator: the record written at
 * once (without the allocator's figures where its frames were on the
 * stack), not the watchdog's end with none. */
H_CHECK(killed_in_allocator)
{
	view_as_bare(x, rec, c);
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", 15);
	H_EXPECT_STR(child, "verdict", "pass");
}

/* Blocks tracked, a SIGTERM amid frees: it lands inside the
 * allocator's own free (memcheck's guard down: free's tail call of the
 * allocator's), its lock perhaps held.  The record asked the
 * allocator's statistics there and waited for that lock till the
 * watchdog (MEMCHECK_FATAL_TIMEOUT, 5 s here) ended the process with no
 * record: 2-3 runs of 8 under glibc, jemalloc and tcmalloc on main
 * (mimalloc's free takes no lock).  So 20 runs, each with its record
 * and its leak (retained_bytes null where the allocator was not asked),
 * in time. */
static void killed_with_leak(const struct h_res *x, const struct h_res *y, int run)
{
	const struct h_json *child = child_record(y);
	ck_assert_msg(child && strstr(y->r.out, "in time"),
		      "%s: run %d of 20: %s; stdout:\n%s\nstderr:\n%s", x->label, run,
		      child ? "not in time" : "no record of the killed child", y->r.out, y->r.err);
	H_EXPECT_U64(child, "signal", 15);
	H_EXPECT_STR(child, "verdict", "fail");
	ck_assert_msg(h_count(child, "definitely_lost", "bytes") >= 100 &&
			      h_count(child, "definitely_lost", "bytes") < H_MISSING,
		      "%s: run %d: definitely_lost.bytes %s", x->label, run,
		      h_fmt(h_count(child, "definitely_lost", "bytes")));
	h_expect_exit(y, 23);
}

H_CHECK(killed_in_allocator_tracked)
{
	view_as_bare(x, rec, c);
	killed_with_leak(x, x, 1);
	for (int i = 2; i <= 20; i++) {
		struct h_res y;
		struct h_spec again = c->run;
		again.alloc = x->alloc;
		h_exec(&y, &again);
		killed_with_leak(x, &y, i);
		h_res_free(&y);
	}
}

/* Count-only, a signal outside the allocator's code: the record has
 * the allocator's figures.  A SIGTERM in kill(): under glibc any frame
 * of the C library left them out (retained_bytes null, session 43).  An
 * assert's abort(), a fault in memset: the same till session 45 (only
 * the C library's malloc functions are the allocator's code now).  A
 * SIGTERM whose statistics take long (glibc's mallinfo2 walks 1,500,000
 * free chunks: 0.3 s bare, idle): cut at 100 ms in session 44, the
 * figures left out (null). */
H_CHECK(killed_with_figures)
{
	view_as_bare(x, rec, c);
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	int sig = 0;
	const char *at = strstr(c->out[0], ": signal ");
	ck_assert(at && sscanf(at, ": signal %d", &sig) == 1);
	H_EXPECT_U64(child, "signal", (uint64_t)sig);
	uint64_t r = h_u64(child, "retained_bytes");
	ck_assert_msg(r != H_NULL && r != H_MISSING, "%s: retained_bytes %s", x->label, h_fmt(r));
}

/* Count-only under glibc, a double free: glibc aborts inside free,
 * its heap corrupt: the record asks the allocator nothing (retained
 * bytes null), the C library's abort() and its message functions below
 * free on the stack notwithstanding. */
H_CHECK(killed_inside_malloc)
{
	view_as_bare(x, rec, c);
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", 6);
	H_EXPECT_U64(child, "retained_bytes", H_NULL);
}

/* Another thread holds the allocator's lock for good (glibc's
 * malloc_stats blocked in its write to a full standard error with an
 * arena's lock held): the record's question waits for that lock; it is
 * left at the bound's first tick that finds it waiting (fatal.c), the
 * record written in time, its figures unknown where they were asked. */
H_CHECK(killed_in_time)
{
	view_as_bare(x, rec, c);
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", 15);
	expect_leaks(x, child);
}

/* SIGTERM amid mallocs with blocks tracked: most likely inside
 * memcheck's own work, where no record can be written; owed to the
 * guard's coming down (fatal.c), the record is there with the leak, as
 * at a SIGTERM anywhere else (main said "no record" and wrote none). */
H_CHECK(killed_amid_mallocs)
{
	view_as_bare(x, rec, c);
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the killed child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", 15);
	/* the leak's 100 bytes; a block just handed out may be lost too */
	ck_assert_msg(h_count(child, "definitely_lost", "bytes") >= 100 &&
			      h_count(child, "definitely_lost", "bytes") < H_MISSING,
		      "%s: definitely_lost.bytes %s", x->label,
		      h_fmt(h_count(child, "definitely_lost", "bytes")));
	H_EXPECT_STR(child, "verdict", "fail");
}

/* A normal end with a stalled standard error: the child's record and
 * its status (its leak's 23), its failure passed to the parent, within
 * the text's bound. */
H_CHECK(ended_in_time)
{
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the child; stderr:\n%s", x->label, x->r.err);
	H_EXPECT_U64(child, "signal", H_MISSING);
	expect_leaks(x, child);
	H_EXPECT_STR(child, "verdict", "fail");
}

/* RLIMIT_FSIZE: the child exits as bare (stdout: its status, "exit
 * 0"), its record there. */
H_CHECK(fsize_as_bare)
{
	view_as_bare(x, rec, c);
	const struct h_json *child = child_record(x);
	ck_assert_msg(child, "%s: no record of the child; stderr:\n%s", x->label, x->r.err);
	expect_leaks(x, child);
}

static const struct h_case other_cases[] = {
	/* RLIMIT_FSIZE (ulimit -f): memcheck's writes past it raised
	 * SIGXFSZ, which killed a program that exits 0 bare (signal 25 on
	 * main before session 40); its text is lost there, its record
	 * (not limited here) written */
	{ "memcheck's text past the file size limit: the program ends as bare",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "fsize"), .flags = H_PRELOAD,
		   .text = "fail" },
	  .records = 2, .out = H_LIST("fsize: exit 0", "done"), .check = fsize_as_bare },
	/* a record the file cannot take is dropped whole, not cut at the
	 * limit (the report stays readable: the parent's record alone),
	 * and counts as dropped (exit MEMCHECK_EXITCODE where a process
	 * would exit 0: 0 here); the line that says so is past the limit
	 * too (standard error a file here) */
	{ "a record past the file size limit: dropped whole, the program ends as bare",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "fsize-report"),
		   .flags = H_PRELOAD, .text = "fail" },
	  .records = 1, .out = H_LIST("fsize-report: exit 0", "done"), .check = view_as_bare },
	/* MEMCHECK_LOG's file full: memcheck's text on standard error
	 * from then on, the suppressions MEMCHECK_GEN_SUPPRESSIONS=- writes
	 * at a region's end too (lost before session 40: only the text's
	 * other writes went there) */
	{ "MEMCHECK_LOG's file at the size limit: a region's suppression on stderr",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "fsize-log"), .flags = H_PRELOAD,
		   .text = "none", .env = H_LIST("MEMCHECK_GEN_SUPPRESSIONS=-") },
	  .records = 3, .out = H_LIST("fsize-log: exit 0", "done"),
	  .err = H_LIST("cannot write to MEMCHECK_LOG=", "File too large; writing to standard error",
			"memcheck-region-1", "fun:lose_small") },
	/* threads that end by a raw SYS_exit keep their alternate stacks
	 * (no destructor runs) till memcheck's 1,024 are all taken, then
	 * the dead ones are taken back: the program runs as bare */
	{ "1,100 threads ended by a raw SYS_exit, then one more: as bare",
	  .run = { .prog = "plain_fatal", .args = H_LIST("rawexit"), .flags = H_PRELOAD },
	  .out = H_LIST("threads 1100, last 7"), .check = view_as_bare },
	/* the program's own write past it: its record, then SIGXFSZ */
	{ "the program's write past the file size limit: its record, SIGXFSZ as bare",
	  WAIT("fsize-over"), .out = H_LIST("fsize-over: signal 25 core") },
	/* waited for the watchdog, no record (10 s), before session 35 */
	{ "count-only: a signal inside the allocator",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "in-allocator"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .records = 2, .out = H_LIST("in-allocator: signal 15 core 0", "in time"),
	  .check = killed_in_allocator },
	{ "count-only: a SIGTERM outside the allocator, its figures in the record",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "term"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .records = 2, .out = H_LIST("term: signal 15 core 0"), .check = killed_with_figures },
	{ "count-only: an assert's abort in the C library, its figures in the record",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "abort"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .records = 2, .out = H_LIST("abort: signal 6 core"), .check = killed_with_figures },
	{ "count-only: a fault in the C library's memset, its figures in the record",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "segv-libc"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .records = 2, .out = H_LIST("segv-libc: signal 11 core"), .check = killed_with_figures },
	{ "count-only: glibc's abort inside free at a double free: the allocator not asked",
	  .allocators = H_ONCE,
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "double-free"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .records = 2, .out = H_LIST("double-free: signal 6 core"), .check = killed_inside_malloc },
	{ "count-only: a SIGTERM, statistics that take long (1.5 million free chunks): not cut",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "term-fragmented"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .records = 2, .out = H_LIST("term-fragmented: signal 15 core 0"),
	  .check = killed_with_figures },
	/* the same with a second thread: the question under a timer whose
	 * ticks find it at work, not waiting for a lock (not mimalloc,
	 * whose blocks in use with two threads are unknown) */
	{ "count-only: a SIGTERM, long statistics, another thread: not cut",
	  .allocators = H_ONLY(H_GLIBC) | H_ONLY(H_JEMALLOC) | H_ONLY(H_TCMALLOC),
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "term-fragmented-thread"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .records = 2, .out = H_LIST("term-fragmented-thread: signal 15 core 0"),
	  .check = killed_with_figures },
	/* this row and the next two: a SIGTERM with blocks tracked, the
	 * leak's figures asked for, so the scan without its deadline (below) */
	{ "the allocator's lock held for good by another thread: the record in time",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "stall-stats"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_FATAL_SCAN_MS=0") },
	  .records = 2, .exit = 23, .out = H_LIST("stall-stats: signal 15 core 0", "in time"),
	  .check = killed_in_time },
	/* the scan without MEMCHECK_FATAL_SCAN_MS's deadline (0): this row
	 * is about the allocator's lock, not a driver's SIGKILL after its
	 * SIGTERM; at the default 250 ms, counted from the signal on the
	 * wall clock, a child that got no CPU that long at load 364 had its
	 * 7 blocks' scan given up (1 run of 15: "run 19: definitely_lost.
	 * bytes missing", its record's kinds null, "leak check incomplete",
	 * as MEMCHECK_FATAL_SCAN_MS=1 gives every run).  The watchdog at 5
	 * s, below plain_fatal's 8 s "in time": a record that waits for
	 * the lock is still none, and late */
	{ "blocks tracked: a SIGTERM inside the allocator's free, 20 runs",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "in-allocator"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_FATAL_TIMEOUT=5", "MEMCHECK_FATAL_SCAN_MS=0") },
	  .records = 2, .exit = 23, .out = H_LIST("in-allocator: signal 15 core 0", "in time"),
	  .check = killed_in_allocator_tracked },
	{ "a SIGTERM amid mallocs, blocks tracked: its record at the guard's coming down",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "term-mallocs"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_FATAL_SCAN_MS=0") },
	  .records = 2, .exit = H_EXIT_ANY, .out = H_LIST("term-mallocs: signal 15 core 0"),
	  .check = killed_amid_mallocs },
	{ "a death test's child aborts, nothing leaked: the parent passes",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "death"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none" },
	  .records = 2, .out = H_LIST("death: signal 6 core"), .check = died_clean },
	/* memcheck run -q's text: the child's "killed by signal" line was
	 * written with nothing after it before session 37 */
	{ "a death test's child aborts, nothing leaked, failures only: nothing said",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "death"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },
	  .records = 2, .out = H_LIST("death: signal 6 core"), .no_err = H_LIST("memcheck"),
	  .check = died_clean },
	{ "a crashed child's leak: the parent says which descendant failed",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "abort"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },
	  .records = 2, .exit = 23, .out = H_LIST("abort: signal 6 core"),
	  .err = H_LIST("killed by signal 6 (SIGABRT): the record is the process's at the signal\n",
			"definitely lost",
			"exit status 23 instead of 0: descendant process ",
			"plain_fatal) failed 1 region") },
	/* the child's stderr a full pipe: its report and its parent's
	 * failure are written first, the text last, which the watchdog
	 * ends as bare, in time (no record, parent 0, before session 35) */
	{ "the text cannot be written: the record first, the watchdog ends it as bare",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "stall"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail",
		   .env = H_LIST("MEMCHECK_FATAL_TIMEOUT=1") },
	  .records = 2, .exit = H_EXIT_ANY, .out = H_LIST("stall: signal 11 core", "in time"),
	  .check = killed_as_bare },
	/* the same at a normal end: the child's exit and _exit waited for
	 * ever to write the text before session 36 (no record, killed by
	 * the parent after 20 s) */
	{ "exit, the text cannot be written: the record and the status, in time",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "stall-exit"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail",
		   .env = H_LIST("MEMCHECK_TEXT_TIMEOUT=1") },
	  .records = 2, .exit = 23, .out = H_LIST("in time", "stall-exit: exit 23"),
	  .check = ended_in_time },
	{ "_exit, the text cannot be written: the record and the status, in time",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "stall-_exit"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail",
		   .env = H_LIST("MEMCHECK_TEXT_TIMEOUT=1") },
	  .records = 2, .exit = 23, .out = H_LIST("in time", "stall-_exit: exit 23"),
	  .check = ended_in_time },
	/* the child's MEMCHECK_REPORT a FIFO its reader never reads, full:
	 * the child waited for ever in its report's write (killed by the
	 * parent after 20 s, before session 37); now its record is dropped
	 * after the text's bound, said in its text and its status */
	{ "exit, the report's FIFO is never read: dropped in time, said, status 23",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "report-stall"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail",
		   .env = H_LIST("MEMCHECK_TEXT_TIMEOUT=1") },
	  .records = 1, .out = H_LIST("in time", "report-stall: exit 23"),
	  .err = H_LIST("/fifo: its reader made no room for this process's record within 1 s",
			"the record is dropped whole",
			"exit status 23 instead of 0: 1 record of MEMCHECK_REPORT dropped") },
	/* the report's pipe with room for a page of the record, not all of
	 * it, then never read within the bound: the record's first page
	 * was written, a line cut short that the next record would have
	 * continued (before session 38); now nothing of it */
	{ "exit, the report's pipe has room for a part of the record: none of it written",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "report-cut"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail",
		   .env = H_LIST("MEMCHECK_TEXT_TIMEOUT=1") },
	  .records = 1, .exit = 23,
	  .out = H_LIST("record dropped whole", "in time", "report-cut: exit 23"),
	  .err = H_LIST("MEMCHECK_REPORT=/dev/fd/",
			": its reader made no room for this process's record within 1 s",
			"the record is dropped whole") },
	/* a record larger than the pipe (~200 KiB against 64 KiB), the
	 * pipe not read within the bound: its first 64 KiB were written,
	 * the rest dropped, a line cut short (before session 39); now the
	 * pipe is grown to hold it and it goes whole */
	{ "exit, a record larger than the report's pipe, not read in time: whole",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "report-big"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none",
		   .env = H_LIST("MEMCHECK_TEXT_TIMEOUT=1", "MEMCHECK_MAX_LEAKS=64") },
	  .records = 1, .exit = 23,
	  .out = H_LIST("record whole", "in time", "report-big: exit 23"),
	  .no_err = H_LIST("MEMCHECK_REPORT=/dev/fd/") },
	/* MEMCHECK_LOG's file full (a disk, a quota; /dev/full here): the
	 * text went nowhere, unsaid (before session 39); now it is said once
	 * and the text goes to standard error */
	{ "MEMCHECK_LOG's file is full: said, the text on standard error",
	  .run = { .prog = "plain_leak_direct", .flags = H_PRELOAD | H_EXITCODE, .text = "fail",
		   .env = H_LIST("MEMCHECK_LOG=/dev/full") },
	  .exit = 23,
	  .err = H_LIST("cannot write to MEMCHECK_LOG=/dev/full: No space left on device; "
			"writing to standard error",
			"480 bytes in 10 blocks are definitely lost") },
	/* MEMCHECK_REPORT's file full: the record is lost, said; a process
	 * that would exit 0 exited 0 (a gate reading the records other
	 * processes wrote before the disk filled passed: before session 39),
	 * now 23, as where the reader stalled */
	{ "MEMCHECK_REPORT's file is full: said, exit 23",
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD | H_EXITCODE, .text = "fail",
		   .no_report = true, .env = H_LIST("MEMCHECK_REPORT=/dev/full") },
	  .exit = 23,
	  .err = H_LIST("cannot write to MEMCHECK_REPORT=/dev/full: No space left on device",
			"exit status 23 instead of 0: 1 record of MEMCHECK_REPORT dropped") },
	/* a pipe read slowly (~0.5 s) within the bound: the record whole */
	{ "exit, the report's pipe read slowly: the record whole, status 0",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "report-slow"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },
	  .records = 1, .out = H_LIST("record whole", "in time", "report-slow: exit 0"),
	  .no_err = H_LIST("MEMCHECK_REPORT") },
	{ "what sigaltstack shows, as bare",
	  .run = { .prog = "plain_fatal", .args = H_LIST("altstack"), .flags = H_PRELOAD,
		   .text = "none" },
	  .records = 1, .out = H_LIST("start: flags 0x2 size 0 sp null", "thread: flags 0x2"),
	  .check = view_as_bare },
	/* (stdout as bare's: the handler ran on the program's stack, as
	 * the kernel said in it) */
	{ "the program's own alternate stack wins",
	  .run = { .prog = "plain_fatal", .args = H_LIST("overflow-own"), .flags = H_PRELOAD,
		   .text = "none" },
	  .exit = 5, .stdout_is = "own handler on stack 1\n" },
	{ "memcheck run and gate say a record is a killed process's",
	  .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-a", "glibc,mimalloc,jemalloc,tcmalloc"),
		   .prog = "plain_fatal", .args = H_LIST("wait", "segv") },
	  .exit = 1, .err = H_LIST("    killed by signal 11 (SIGSEGV)\n"), .check = cli_says_killed },
	{ "a child killed by its parent's SIGTERM",
	  .run = { .prog = "plain_fatal", .args = H_LIST("term-child"), .flags = H_PRELOAD,
		   .text = "none" },
	  .records = 2, .stdout_is = "child: signal 15\n", .check = child_killed },
	{ "sigaction's and signal's view",
	  .run = { .prog = "plain_fatal", .args = H_LIST("view"), .flags = H_PRELOAD,
		   .text = "none" },
	  .records = 1, .check = view_as_bare },
	/* inherited ignored (nohup): put back as the kernel had it (main
	 * showed the C library's SA_RESTORER and restorer in its flags
	 * before session 35) */
	{ "sigaction's and signal's view, SIGHUP inherited ignored",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "view-hup"), .flags = H_PRELOAD,
		   .text = "none" },
	  .records = 2, .out = H_LIST("start 1: IGN flags 0 restorer 0", "view-hup: exit 0"),
	  .check = view_as_bare },
	{ "the program's SIGSEGV handler leaves by siglongjmp",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "longjmp"), .flags = H_PRELOAD,
		   .text = "none" },
	  .records = 2, .out = H_LIST("recovered", "longjmp: exit 0"), .check = recovered },
	{ "SIGPIPE inherited ignored stays ignored",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "epipe"), .flags = H_PRELOAD,
		   .text = "none" },
	  .records = 2, .stdout_is = "view IGN write -1 EPIPE\nepipe: exit 0\n" },
	{ "MEMCHECK_FATAL_TIMEOUT=0: no record, as before",
	  .run = { .prog = "plain_fatal", .args = H_LIST("wait", "segv"), .flags = H_PRELOAD,
		   .text = "none", .env = H_LIST("MEMCHECK_FATAL_TIMEOUT=0") },
	  .records = 1, .out = H_LIST("segv: signal 11 core") },
};

/* valgrind (its own suppressions alone) on plain_fatal WHAT, killed by
 * signal sig (name), against memcheck's record under each allocator:
 * the first nkinds leak kinds (definite, indirect, possible, still
 * reachable) the same; valgrind's still reachable bytes more than
 * min_reachable (what the row is about is there). */
static void fatal_as_valgrind(const char *what, int sig, const char *name, int nkinds,
			      uint64_t min_reachable)
{
	if (!h_valgrind_path()) {
		printf("note: valgrind not installed; skipping\n");
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = h_valgrind_path(), .no_report = true, .text = "",
	       .args = H_LIST("--leak-check=full", h_prog("plain_fatal"), what));
	ck_assert_msg(v.r.signal == sig, "valgrind: %s", h_status(&v.r));
	struct h_vg_leaks l[2];
	ck_assert_msg(h_valgrind_leaks(v.r.err, l, 2) == 1, "valgrind:\n%s", v.r.err);
	ck_assert_msg(l[0].bytes[HVG_REA] >= min_reachable, "valgrind:\n%s", v.r.err);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		if (!h_allocator(i, NULL))
			continue;
		struct h_res x;
		H_EXEC(&x, .prog = "plain_fatal", .args = H_LIST(what), .alloc = i,
		       .flags = H_PRELOAD);
		ck_assert_msg(x.r.signal == sig, "%s: %s", x.label, h_status(&x.r));
		const struct h_json *rec = h_rec(&x, "process");
		static const char *const kinds[] = { "definitely_lost", "indirectly_lost",
						     "possibly_lost", "still_reachable" };
		for (int k = 0; k < nkinds; k++) {
			H_EXPECT_COUNT(rec, kinds[k], "bytes", l[0].bytes[HVG_DEF + k]);
			H_EXPECT_COUNT(rec, kinds[k], "blocks", l[0].blocks[HVG_DEF + k]);
		}
		H_EXPECT_STR(rec, "signal_name", name);
		h_res_free(&x);
	}
	h_res_free(&v);
}

/* valgrind on the same crash: its LEAK SUMMARY is the record's. */
START_TEST(leak_summary_as_valgrind)
{
	fatal_as_valgrind("segv", 11, "SIGSEGV", 3, 0);
}
END_TEST

/* A stream the program opened, its buffer allocated, open at an abort:
 * valgrind runs no freeres there and lists the FILE and its buffer
 * still reachable; memcheck's record the same under every allocator,
 * the buffer not taken by glibc.supp's stdio entry, which is meant for
 * the C library's own streams (on main: 4,096 bytes suppressed, still
 * reachable 520 bytes in 3 blocks where valgrind says 4,616 in 4). */
START_TEST(own_stream_buffer_as_valgrind)
{
	fatal_as_valgrind("stdio-abort", 6, "SIGABRT", 4, 4096);
}
END_TEST

/* Lines that have needle, as a count. */
static int lines(const char *text, const char *needle)
{
	return h_count_lines(text, needle);
}

/* memcheck's valgrind command line on a test that aborts, against
 * valgrind's: the same death, valgrind's "Process terminating" line,
 * the same loss records (CTest's Defects) and ERROR SUMMARY. */
START_TEST(valgrind_text_as_valgrind)
{
	if (!h_valgrind_path()) {
		printf("note: valgrind not installed; skipping\n");
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = h_valgrind_path(), .no_report = true, .text = "",
	       .args = H_LIST("--leak-check=full", h_prog("plain_fatal"), "abort"));
	ck_assert_msg(v.r.signal == 6, "valgrind: %s", h_status(&v.r));
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		struct h_res x;
		H_EXEC(&x, .prog = h_env("%s/memcheck", h_build()), .no_report = true, .text = "",
		       .args = H_LIST("--leak-check=full", h_prog("plain_fatal"), "abort"),
		       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL);
		ck_assert_msg(x.r.signal == 6, "%s: %s\n%s", x.label, h_status(&x.r), x.r.err);
		static const char *const same[] = {
			"Process terminating with default action of signal 6 (SIGABRT)",
			"are definitely lost in loss record",
			"ERROR SUMMARY: 1 errors from 1 contexts",
			"by 0x", /* the stack */
		};
		for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
			int want = lines(v.r.err, same[k]), got = lines(x.r.err, same[k]);
			if (k == 3)
				ck_assert_msg(got >= 3, "%s: no stack at the signal:\n%s", x.label, x.r.err);
			else
				ck_assert_msg(got == want && want > 0,
					      "%s: %d lines \"%s\", valgrind %d\n%s\nvalgrind:\n%s",
					      x.label, got, same[k], want, x.r.err, v.r.err);
		}
		h_res_free(&x);
	}
	h_res_free(&v);
}
END_TEST

/* What ctest -T memcheck counts as a crashed test's Defects: the loss
 * records under its default options (-q --leak-check=yes
 * --show-reachable=yes), memcheck's valgrind command line against
 * valgrind's, for a fault, an abort and a SIGTERM.  (valgrind has one
 * more for the fault, its "Invalid write", which memcheck does not see:
 * not counted here.) */
START_TEST(ctest_defects_as_valgrind)
{
	if (!h_valgrind_path()) {
		printf("note: valgrind not installed; skipping\n");
		return;
	}
	static const char *const crash[] = { "segv", "abort", "term" };
	for (size_t k = 0; k < sizeof crash / sizeof crash[0]; k++) {
		struct h_res v;
		H_EXEC(&v, .prog = h_valgrind_path(), .no_report = true, .text = "",
		       .args = H_LIST("-q", "--leak-check=yes", "--show-reachable=yes",
				      h_prog("plain_fatal"), crash[k]));
		int want = lines(v.r.err, "in loss record");
		ck_assert_msg(v.r.signal > 0 && want > 0, "valgrind %s: %s\n%s", crash[k],
			      h_status(&v.r), v.r.err);
		for (int i = 0; i < H_NALLOCATORS; i++) {
			const char *so;
			if (!h_allocator(i, &so))
				continue;
			struct h_res x;
			H_EXEC(&x, .prog = h_env("%s/memcheck", h_build()), .no_report = true,
			       .text = "",
			       .args = H_LIST("-q", "--leak-check=yes", "--show-reachable=yes",
					      h_prog("plain_fatal"), crash[k]),
			       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL);
			ck_assert_msg(x.r.signal == v.r.signal, "%s: %s, valgrind's %s", x.label,
				      h_status(&x.r), h_status(&v.r));
			int got = lines(x.r.err, "in loss record");
			ck_assert_msg(got == want, "%s: %d loss records, valgrind %d\n%s\nvalgrind:\n%s",
				      x.label, got, want, x.r.err, v.r.err);
			h_res_free(&x);
		}
		h_res_free(&v);
	}
}
END_TEST

/* memcheck run interrupted as a driver's timeout interrupts it (meson:
 * SIGTERM to the test's process group): it passes the signal on, the
 * command's killed process writes its record, and memcheck run's
 * --report holds it before memcheck run dies of the same signal.  Before
 * session 43 it said "interrupted" and wrote no report: the record was
 * lost.  Under glibc (the command's allocators are run's -a). */
START_TEST(run_interrupted_keeps_the_record)
{
	const char *report = h_tmppath("run.json"), *ready = h_tmppath("ready");
	setenv("PLAIN_FATAL_READY", ready, 1);
	unsetenv("LD_PRELOAD");
	char *argv[] = { (char *)h_env("%s/memcheck", h_build()), "run", "-q", "-a", "glibc",
			 "--report", (char *)report, "--", (char *)h_prog("plain_fatal"),
			 "leak-wait", NULL };
	pid_t pid = h_spawn_quiet(argv, NULL, false);
	ck_assert_int_gt(pid, 0);
	for (int i = 0; i < 2000 && access(ready, F_OK) != 0; i++)
		usleep(10000);
	ck_assert_msg(access(ready, F_OK) == 0, "plain_fatal leak-wait never ready");
	kill(pid, SIGTERM);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
		      "memcheck run: status 0x%x, killed by SIGTERM expected", st);
	char *text = h_read_file(report, NULL);
	ck_assert_msg(text, "memcheck run --report %s: not written", report);
	ck_assert_msg(strstr(text, "\"signal_name\":\"SIGTERM\"") &&
			      strstr(text, "\"verdict\":\"fail\""),
		      "memcheck run --report: no killed process's failing record in:\n%s", text);
	free(text);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("fatal", 120);
	H_ADD_CASES(tc, cases);
	H_ADD_CASES(tc, other_cases);
	tcase_add_test(tc, leak_summary_as_valgrind);
	tcase_add_test(tc, own_stream_buffer_as_valgrind);
	tcase_add_test(tc, run_interrupted_keeps_the_record);
	tcase_add_test(tc, valgrind_text_as_valgrind);
	tcase_add_test(tc, ctest_defects_as_valgrind);
	return h_run_suite(NULL);
}
