/*
 * test_codeblocks.c - a short process runs memcheck's code from few of
 * the file's 64 KiB blocks (lib/text-order.ld).
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
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
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
};

/* h_allocators' order: glibc, mimalloc, jemalloc, tcmalloc_minimal. */
static const struct row rows[] = {
	{ "left out (/bin/true)", "/bin/true", NULL, false, { 1, 1, 1, 2 } },
	{ "passing, defaults (plain_clean)", "plain_clean", NULL, false, { 3, 3, 3, 6 } },
	{ "leaking, defaults (plain_leak_direct)", "plain_leak_direct", NULL, false, { 4, 4, 5, 6 } },
	{ "measured /bin/date", "/bin/date", "-u", true, { 4, 5, 6, 7 } },
};

/* The blocks of pid's mapping of libmemcheck's code with a page present;
 * -1 where there is none. */
static int blocks_present(pid_t pid)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f, "%s: cannot open", path);
	unsigned long lo = 0, hi = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long a, b;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) == 3 && perm[2] == 'x' &&
		    strstr(line, "/libmemcheck.so")) {
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
	int blocks = 0;
	long last = -1;
	for (unsigned long a = lo; a < hi; a += 4096) {
		uint64_t e = 0;
		ck_assert(pread(fd, &e, sizeof e, (off_t)(a / 4096 * 8)) == sizeof e);
		long b = (long)((a - lo) / 65536);
		if ((e >> 63) && b != last) {
			blocks++;
			last = b;
		}
	}
	close(fd);
	return blocks;
}

/* Run argv with env, stopped at its exit: the blocks then, or -1. */
static int run_counted(char *const argv[], char *const env[], bool count)
{
	pid_t pid = h_spawn_quiet(argv, env, count);
	int st, blocks = -1;
	if (!count) {
		ck_assert(waitpid(pid, &st, 0) == pid);
		return -1;
	}
	ck_assert(waitpid(pid, &st, 0) == pid && WIFSTOPPED(st)); /* at the exec */
	ck_assert(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) == 0);
	ck_assert(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
	for (;;) {
		ck_assert(waitpid(pid, &st, 0) == pid);
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return blocks;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			blocks = blocks_present(pid);
			ptrace(PTRACE_CONT, pid, 0, 0);
			continue;
		}
		int sig = WSTOPSIG(st);
		ptrace(PTRACE_CONT, pid, 0, sig == SIGTRAP ? 0 : sig);
	}
}

START_TEST(few_blocks)
{
	const struct row *r = &rows[_i / H_NALLOCATORS];
	int alloc = _i % H_NALLOCATORS;
	const char *so;
	if (!h_allocator(alloc, &so))
		return;
	if (!h_can_ptrace()) {
		printf("note: ptrace refused here; skipping \"%s\"\n", r->what);
		return;
	}
	const char *prog = r->prog[0] == '/' ? r->prog : h_prog(r->prog);
	char *argv[] = { (char *)prog, (char *)r->arg, NULL };
	char pre[4096], cache[4096];
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s%s%s", h_lib(), so ? " " : "", so ? so : "");
	char tag[32];
	snprintf(tag, sizeof tag, "cache%d", _i);
	const char *dir = h_tmppath(tag);
	ck_assert(mkdir(dir, 0700) == 0);
	snprintf(cache, sizeof cache, "MEMCHECK_CACHE=%s", dir);
	char *env[] = { pre, cache, "LC_ALL=C", r->measure_all ? "MEMCHECK_PROGRAMS=*" : NULL,
			NULL };
	run_counted(argv, env, false); /* the cache warmed */
	int blocks = run_counted(argv, env, true);
	ck_assert_msg(blocks > 0, "%s under %s: no mapping of libmemcheck's code at its exit",
		      r->what, h_allocator_name(alloc));
	ck_assert_msg(blocks <= r->most[alloc],
		      "%s under %s: memcheck's code ran from %d of the file's 64 KiB blocks, "
		      "at most %d expected (lib/text-order.ld)",
		      r->what, h_allocator_name(alloc), blocks, r->most[alloc]);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("codeblocks", 60);
	tcase_add_loop_test(tc, few_blocks, 0, (int)(sizeof rows / sizeof rows[0]) * H_NALLOCATORS);
	return h_run_suite(NULL);
}
