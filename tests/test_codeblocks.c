/*
 * test_codeblocks.c - a short process runs memcheck's code from few of
 * the file's 64 KiB blocks (lib/text-order.ld), and its exit walks few
 * pages down the stack (shallow_exit, below).
 *
 * The kernel maps a file's pages around each fault a 64 KiB block at a
 * time, and on these VMs each block a process first runs code from is a
 * page fault and then a shadow fault a page.  text-order.ld lays the
 * functions a left-out process runs in the first block and those of a
 * process with the defaults in the first three; a function added later
 * and not listed there lies in .text, blocks away.  On main before this
 * (1ff7a48) sessions 25-27's additions had spread them again: a
 * left-out /bin/true ran code from 3 blocks (6 under tcmalloc), a
 * passing or leaking process with the defaults from all 7.
 *
 * Each row runs its program under each allocator, stopped by ptrace at
 * its exit (PTRACE_O_TRACEEXIT: after memcheck's exit work, before the
 * kernel takes the mappings down), and counts the blocks of
 * libmemcheck's executable mapping that have a page present
 * (/proc/PID/pagemap).  The cache (MEMCHECK_CACHE, a directory of the
 * row's own) is warmed by a run before: a program's first run reads and
 * writes it with code that the later ones do not run.  The bounds are
 * what this layout gives, per allocator: under jemalloc and tcmalloc a
 * passing program leaves the allocator's blocks to suppress, whose code
 * is the leaking exit's.  Without ptrace the rows are skipped.
 *
 * Each row's programs have that directory as TMPDIR too: a measured
 * process's exit opens memcheck-fail-PID there (descend.c), and where a
 * record a failing process left for an earlier process of its pid is
 * still there (/tmp, pids wrapping at 32768 in a long run), the exit
 * reads and removes it: code from two blocks more.
 *
 * A free whose block's next slot in the table is taken shifts the
 * cluster back (blocks.c's mc_blocks_shift_leave): where the addresses
 * fall so, which address randomization decides (1 run in 150 of
 * plain_clean under jemalloc; nearly every longer process), its code
 * lay in group 5, a block away (CI's run of ca0c3fa failed the passing
 * row under jemalloc so; perf trace -F all found it, 3 hits of 3).
 *
 * Each few_blocks row runs twice: as this processor is, and as one
 * without AVX2 (glibc.cpu.hwcaps=-AVX2, which memcheck asks through
 * the C library as for its own processor): there memcheck runs other
 * functions (account.c's scrub_new for each new block), which the
 * list, made on a processor with AVX2, had left blocks away; on main
 * before this (ca0c3fa) CI's machine, without AVX2, ran a passing
 * program's code from 4 blocks under jemalloc.
 *
 * plain_codeblocks makes the calls real programs make and plain_clean
 * does not (reallocarray, malloc_usable_size, getrlimit, getrusage,
 * pthread_getattr_np, prctl, threads, fork): each took memcheck into a
 * function placed nowhere, which make place-check (lib/place.awk, the
 * call graph of the linked library) found; on main before this
 * (8dcf6bc) it ran memcheck's code from 8 blocks under each allocator.
 * With threads (text-order.ld's group 1t, after the leaking exit's code
 * in the fourth block and the fifth: a threaded process's exit scans
 * the blocks the C library keeps for its threads) 5, where main's ran
 * from 8.
 *
 * Session 35 (room35): the exit's read-only data (.rodata.mc_then) only
 * what groups 2, 3 and 1t read, so that group 1t ends in the fourth
 * block too: threads 5 -> 4 blocks in most runs (1 run in 7 under
 * glibc still touches block 5 at load, by a path neither perf trace nor
 * gdb catches, timing-bound: the row allows 5, make place-check holds
 * group 1t within the fourth block); the leaking and measured rows under
 * jemalloc and tcmalloc 5 -> 4 (mc_maps_each and its callees, the
 * retained bytes' walk of the mappings, lay in group 2b, block 4); a
 * left-out process under tcmalloc 2 -> 1 (the operator new names and
 * the allocators' names, read through tables, lay in block 3).  And
 * the forked child's row: plain_codeblocks' child, counted at its own
 * exit, ran from 5 blocks under each allocator on main before this
 * (f19e58e: its fork handlers called elfmod.c's and startpages.c's
 * resets from groups 3 and 2b), now from 3.
 *
 * Session 45 (below45): plain_libcalls, whose blocks the C library
 * allocates (fopen, strdup, open_memstream): their stacks, walked by the
 * call-frame information from the C library's frames, run the walks'
 * memo (.text.mc_soon), which group 1's growth had pushed 0x49d bytes
 * into the fourth block: 4 blocks under glibc, mimalloc and jemalloc on
 * main (fca1a6f), a program built with frame pointers or without; 3
 * since group 1's run-once code is packed (text-order.ld's head).  And
 * the threads' rows: the DTV code every process that starts threads
 * runs (session 44) lay in .text.mc_last, so that plain_codeblocks
 * threads and getattr ran code from 5 blocks in every run under each
 * allocator; in group 1t now, 4 in 537 of 540 runs (the other 3: two
 * pages of the fifth block, 0x40000-0x41fff, the timing-bound touch
 * session 35 saw): the rows keep 5.  And plain_codeblocks running, a
 * thread still running at the exit: the exit's stop of it, the scan's
 * pass for pools and the suppression set taken from the cache lay over
 * .text.mc_last: 9 blocks under each allocator on main (fca1a6f), 8
 * with the DTV code in group 1t; one group after 2b now (text-order.ld's
 * 1u): 5.
 *
 * Session 45 (cost45): a process with a JSON report (MEMCHECK_REPORT, as
 * memcheck run sets it), passing with an argument and leaking: on main
 * before this (fca1a6f) 7, 7, 7, 8 blocks passing and 7, 8, 8, 9 leaking
 * (glibc, mimalloc, jemalloc, tcmalloc): every such process ran the
 * arguments' files' key (progname.c's files_key, cold by its attribute,
 * with mc_process_t0 and the cold part of mc_args_json that calls it),
 * the report's append (mc_append's cold part, mc_append_dropped) and
 * each frame's JSON (report.c's json_frame), and under the other
 * allocators the end of their statistics' window (footprint.c's
 * work_settle) and mimalloc's and jemalloc's timed_purge_ms, from .text
 * and group 7, the fifth to ninth blocks; in group 2b with the rest of
 * the record's code, 5, 5, 5, 6 both (tcmalloc's frames' demangled
 * names, demangle.c, lie further on).
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

struct row {
	const char *what;
	const char *prog;          /* a tests/prog program, or an absolute path */
	const char *arg;
	bool measure_all;          /* MEMCHECK_PROGRAMS=* */
	int most[H_NALLOCATORS];   /* blocks at most, per allocator */
	bool child;                /* the blocks of the process it forks, not its own */
	bool report;               /* MEMCHECK_REPORT, as memcheck run sets it */
};

/* h_allocators' order: glibc, mimalloc, jemalloc, tcmalloc_minimal. */
static const struct row rows[] = {
	{ "left out (/bin/true)", "/bin/true", NULL, false, { 1, 1, 1, 1 }, false, false },
	{ "passing, defaults (plain_clean)", "plain_clean", NULL, false, { 3, 3, 3, 4 }, false,
	  false },
	{ "passing, the calls plain_clean does not make (plain_codeblocks)", "plain_codeblocks", NULL,
	  false, { 3, 3, 3, 4 }, false, false },
	{ "passing, blocks the C library allocates (plain_libcalls)", "plain_libcalls", NULL, false,
	  { 3, 3, 3, 4 }, false, false },
	{ "passing, threads (plain_codeblocks threads)", "plain_codeblocks", "threads", false,
	  { 5, 5, 5, 5 }, false, false },
	{ "passing, a thread still running at the exit (plain_codeblocks running)",
	  "plain_codeblocks", "running", false, { 5, 5, 5, 5 }, false, false },
	{ "passing, pthread_getattr_np (plain_codeblocks getattr)", "plain_codeblocks", "getattr",
	  false, { 5, 5, 5, 5 }, false, false },
	{ "leaking, defaults (plain_leak_direct)", "plain_leak_direct", NULL, false, { 4, 4, 4, 4 },
	  false, false },
	{ "measured /bin/date", "/bin/date", "-u", true, { 4, 4, 4, 4 }, false, false },
	{ "a forked child (plain_codeblocks')", "plain_codeblocks", NULL, false, { 3, 3, 3, 3 },
	  true, false },
	{ "passing, a JSON report (plain_clean plain)", "plain_clean", "plain", false,
	  { 5, 5, 5, 6 }, false, true },
	{ "leaking, a JSON report (plain_leak_direct)", "plain_leak_direct", NULL, false,
	  { 5, 5, 5, 6 }, false, true },
};

/* Of pid's first mapping whose line in /proc/PID/maps holds what (and
 * is executable where exec), the units of unit bytes with a page
 * present (/proc/PID/pagemap); -1 where there is no such mapping. */
static int units_present(pid_t pid, const char *what, bool exec, unsigned long unit)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f, "%s: cannot open", path);
	unsigned long lo = 0, hi = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long a, b;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) == 3 && (!exec || perm[2] == 'x') &&
		    strstr(line, what)) {
			lo = a;
			hi = b;
			break;
		}
	}
	fclose(f);
	if (!lo)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
	int fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: cannot open", path);
	int units = 0;
	long last = -1;
	for (unsigned long a = lo; a < hi; a += 4096) {
		uint64_t e = 0;
		ck_assert(pread(fd, &e, sizeof e, (off_t)(a / 4096 * 8)) == sizeof e);
		long u = (long)((a - lo) / unit);
		if ((e >> 63) && u != last) {
			units++;
			last = u;
		}
	}
	close(fd);
	return units;
}

/* The 64 KiB blocks of libmemcheck's code with a page present */
static int blocks_present(pid_t pid)
{
	return units_present(pid, "/libmemcheck.so", true, 65536);
}

/* The pages of the main thread's stack present */
static int stack_pages_present(pid_t pid)
{
	return units_present(pid, "[stack]", false, 4096);
}

/* Run argv with env, stopped at its exit: what count says of it then, or
 * -1 (count NULL: not stopped).  child: stopped at the exit of the
 * process it forks (traced from its fork on), counted there instead: a
 * forked child (each test of a check suite) maps memcheck's code afresh
 * (fork copies no page table entry of a file mapping without an
 * anonymous page), so that each block its fork handlers and its exit run
 * from is a fault of its own in every child. */
/* run_counted's count, at the exit of the process it is for */
struct counted {
	int (*count)(pid_t);
	bool child;
	int blocks;
};

static int count_at_exit(const struct h_trace *t)
{
	struct counted *c = t->arg;
	if ((t->pid != t->root) == c->child)
		c->blocks = c->count(t->pid);
	return H_TRACE_ON;
}

static int run_counted(char *const argv[], char *const env[], int (*count)(pid_t), bool child)
{
	pid_t pid = h_spawn_quiet(argv, env, count != NULL);
	int st;
	if (!count) {
		ck_assert(waitpid(pid, &st, 0) == pid);
		return -1;
	}
	struct counted c = { count, child, -1 };
	h_trace(pid, H_TRACE_EXITS | (child ? H_TRACE_FORKS : 0), count_at_exit, &c);
	return c.blocks;
}

/* Row i / H_NALLOCATORS of table under allocator i % H_NALLOCATORS:
 * its argv, its environment with memcheck preloaded (env) and without
 * (bare_env: the allocator's alone), a cache of its own (prefix, i).
 * NULL: skipped (no such allocator, no ptrace). */
struct setup {
	char *argv[3];
	char pre[4096], bare_pre[4096], cache[4096], tmp[4096], report[4096];
	char *env[8], *bare_env[8];
};

/* The C library's answer to "has this processor AVX2?" made no */
static char no_avx2[] = "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2";

static const struct row *set_up(const struct row *table, int i, const char *prefix,
				bool without_avx2, struct setup *u)
{
	const struct row *r = &table[i / H_NALLOCATORS];
	const char *so;
	if (!h_allocator(i % H_NALLOCATORS, &so))
		return NULL;
	if (!h_can_ptrace()) {
		printf("note: ptrace refused here; skipping \"%s\"\n", r->what);
		return NULL;
	}
	char tag[32];
	snprintf(tag, sizeof tag, "%s%d", prefix, i);
	u->argv[0] = (char *)(r->prog[0] == '/' ? r->prog : h_prog(r->prog));
	u->argv[1] = (char *)r->arg;
	u->argv[2] = NULL;
	snprintf(u->pre, sizeof u->pre, "LD_PRELOAD=%s%s%s", h_lib(), so ? " " : "", so ? so : "");
	snprintf(u->bare_pre, sizeof u->bare_pre, "LD_PRELOAD=%s", so ? so : "");
	const char *dir = h_tmppath(tag);
	ck_assert(mkdir(dir, 0700) == 0);
	snprintf(u->cache, sizeof u->cache, "MEMCHECK_CACHE=%s", dir);
	snprintf(u->tmp, sizeof u->tmp, "TMPDIR=%s", dir);
	char *programs = r->measure_all ? "MEMCHECK_PROGRAMS=*" : NULL;
	char *cpu = without_avx2 ? no_avx2 : NULL;
	snprintf(u->report, sizeof u->report, "MEMCHECK_REPORT=%s/report.jsonl", dir);
	char *report = r->report ? u->report : NULL;
	/* the optional ones last, packed: the first NULL ends the list */
	char *opt[3] = { NULL, NULL, NULL }, **o = opt;
	if (cpu)
		*o++ = cpu;
	if (programs)
		*o++ = programs;
	if (report)
		*o++ = report;
	char *env[] = { u->pre, u->cache, u->tmp, "LC_ALL=C", opt[0], opt[1], opt[2], NULL };
	char *bare_env[] = { u->bare_pre, u->cache, u->tmp, "LC_ALL=C", opt[0], opt[1], opt[2],
			     NULL };
	memcpy(u->env, env, sizeof env);
	memcpy(u->bare_env, bare_env, sizeof bare_env);
	return r;
}

enum { NROWS = (int)(sizeof rows / sizeof rows[0]) * H_NALLOCATORS };

START_TEST(few_blocks)
{
	struct setup u;
	bool without_avx2 = _i >= NROWS;
	const struct row *r = set_up(rows, _i % NROWS, without_avx2 ? "nocache" : "cache",
				     without_avx2, &u);
	if (!r)
		return;
	int alloc = _i % H_NALLOCATORS;
	const char *cpu = without_avx2 ? ", as without AVX2" : "";
	run_counted(u.argv, u.env, NULL, false); /* the cache warmed */
	int blocks = run_counted(u.argv, u.env, blocks_present, r->child);
	ck_assert_msg(blocks > 0, "%s under %s%s: no mapping of libmemcheck's code at its exit",
		      r->what, h_allocator_name(alloc), cpu);
	ck_assert_msg(blocks <= r->most[alloc],
		      "%s under %s%s: memcheck's code ran from %d of the file's 64 KiB blocks, "
		      "at most %d expected (lib/text-order.ld)",
		      r->what, h_allocator_name(alloc), cpu, blocks, r->most[alloc]);
}
END_TEST

/* The stack a leaking process's exit walks down: each page of it first
 * touched is a page fault (10-15 us on these VMs).  The exit's frames
 * held buffers of 2-12 KiB each under calls that go deeper (the
 * suppressions' key and names, the report's escaped names, a stack's
 * frames' text): on main before this (d40e82b) memcheck added 4-5
 * pages to plain_leak_direct's stack and 6-7 to a measured /bin/date's
 * (glibc, mimalloc, jemalloc, tcmalloc), now 1-2 and 2-4: each buffer
 * lies in a function of its own that returns before the deep calls.
 * Session 37 (exit37): a passing process's exit, with the defaults and
 * with a JSON report (as memcheck run sets it).  On main before this
 * (4d3fef6) a passing plain_clean's exit added 3, 2, 1, 2 pages with the
 * defaults (descend.c's reader: its 8 KiB buffer and a 4 KiB copy of
 * the directory's name under it, at every measured exit) and 7, 7, 5, 6
 * with a report (report.c's naming: 10 KiB of frames on the stack under
 * each call of the symbolizer; the maps' 16 KiB read buffer under
 * those), a leaking one with a report 1, 2, 2, 3; now 1, 0, 0, 1; 3, 2,
 * 0, 2; 1, 1, 1, 1.  And the text's stacks (vgtext.c's mc_text_stack,
 * the same frames on the stack): a leaking plain_leak_direct with the
 * defaults 1, 1, 2, 2 -> 0, 0, 0, 0; a measured /bin/date 3, 2, 3, 4 ->
 * 3, 2, 1, 2 (its scan's maps query and the suppressions' names ahead
 * hold 4 KiB each).  Counted as the blocks above, against the program
 * run bare (no preload but the allocator's), both without address
 * randomization. */
static const struct row stack_rows[] = {
	{ "leaking, defaults (plain_leak_direct)", "plain_leak_direct", NULL, false,
	  { 1, 1, 1, 1 }, false, false },
	{ "measured /bin/date", "/bin/date", "-u", true, { 4, 4, 4, 4 }, false, false },
	{ "passing, defaults (plain_clean)", "plain_clean", NULL, false, { 1, 1, 1, 1 }, false,
	  false },
	{ "passing, a JSON report (plain_clean)", "plain_clean", NULL, false, { 3, 3, 3, 3 }, false,
	  true },
	{ "leaking, a JSON report (plain_leak_direct)", "plain_leak_direct", NULL, false,
	  { 2, 2, 2, 2 }, false, true },
};

START_TEST(shallow_exit)
{
	struct setup u;
	const struct row *r = set_up(stack_rows, _i, "scache", false, &u);
	if (!r)
		return;
	int alloc = _i % H_NALLOCATORS;
	/* the stack where it is in every run (inherited by the programs):
	 * at a random offset a page more or less is touched either way */
	int was = personality(0xffffffff);
	ck_assert(was != -1 && personality((unsigned long)was | ADDR_NO_RANDOMIZE) != -1);
	run_counted(u.argv, u.env, NULL, false); /* the cache warmed */
	int pages = run_counted(u.argv, u.env, stack_pages_present, false);
	int bare = run_counted(u.argv, u.bare_env, stack_pages_present, false);
	ck_assert_msg(pages > 0 && bare > 0, "%s under %s: no [stack] mapping at its exit",
		      r->what, h_allocator_name(alloc));
	ck_assert_msg(pages - bare <= r->most[alloc],
		      "%s under %s: the main thread's stack had %d pages present at its exit, "
		      "%d bare: memcheck's %d, at most %d expected",
		      r->what, h_allocator_name(alloc), pages, bare, pages - bare,
		      r->most[alloc]);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("codeblocks", 60);
	tcase_add_loop_test(tc, few_blocks, 0, 2 * NROWS);
	tcase_add_loop_test(tc, shallow_exit, 0,
			    (int)(sizeof stack_rows / sizeof stack_rows[0]) * H_NALLOCATORS);
	return h_run_suite(NULL);
}
