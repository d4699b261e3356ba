/*
 * plain_fork_faults.c - the page faults fork costs a process that keeps
 * N blocks live (argv[1], 2000 by default; 32 bytes each) and forks F
 * children (argv[2], 20) one after the other, each leaving at once with
 * _exit(0), or with argv[3] "exec" after an execv that fails (a path
 * that does not exist: what a child that execs runs of memcheck's
 * before the new program, without one), counted by the program
 * itself around the fork loop: the CPU's page faults (perf's software
 * counter) of the parent alone (not inherited) and of the parent with
 * its children (inherited: a child's count is added when it exits).
 * Where perf_event_open is refused it says so ("faults refused").
 * With argv[3] "stacks" the parent is a test runner that stores new
 * allocation stacks between forks, as check's or a CTest driver's does
 * (libssh's torture_config: 4,325 stacks, 14 forks): before the loop it
 * allocates and frees a block from each of N distinct call paths, and
 * before each fork from NEW_STACKS more (each block freed at once, so
 * the allocator hands the same address back and the block table's
 * writes stay on one page): what memcheck's stack depot writes between
 * forks, each page a copy-on-write fault in the parent.  "oldstacks"
 * is the same with the paths before each fork among the N stored
 * already: the difference is what storing new stacks costs.
 * Prints "parent P children C perf" (totals over the F forks).
 * tests/test_ownmem.c (fork_pages_written_once) runs it bare and under
 * memcheck: what memcheck adds is the pages its fork handlers write,
 * each one a copy-on-write fault in the child and another in the parent.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Call paths: path(code, d) allocates d calls deep, each call one of
 * two functions as code's bits say, so 2^PATH_DEPTH distinct stacks
 * (path inline: a frame a level, the 12 within memcheck's 16 frames). */
#define PATH_DEPTH 12
#define NEW_STACKS 32
static volatile int sink;
static void *path_a(unsigned code, int d);
static void *path_b(unsigned code, int d);

static inline __attribute__((always_inline)) void *path(unsigned code, int d)
{
	if (!d)
		return malloc(24);
	return code & 1 ? path_a(code >> 1, d - 1) : path_b(code >> 1, d - 1);
}

/* Not a tail call (the store after it): each keeps its frame. */
static __attribute__((noinline)) void *path_a(unsigned code, int d)
{
	void *p = path(code, d);
	sink++;
	return p;
}

static __attribute__((noinline)) void *path_b(unsigned code, int d)
{
	void *p = path(code, d);
	sink--;
	return p;
}

/* A block from each of paths [from, to), freed at once. */
static int stacks_from(unsigned from, unsigned to)
{
	for (unsigned c = from; c < to; c++) {
		void *p = path(c, PATH_DEPTH);
		if (!p)
			return -1;
		free(p);
	}
	return 0;
}

static int counter(int inherit)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.inherit = (unsigned)inherit;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static long long now(int fd)
{
	long long v = 0;
	return read(fd, &v, sizeof v) == sizeof v ? v : -1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000, forks = argc > 2 ? atoi(argv[2]) : 20;
	int exec = argc > 3 && !strcmp(argv[3], "exec");
	int old = argc > 3 && !strcmp(argv[3], "oldstacks");
	int stacks = old || (argc > 3 && !strcmp(argv[3], "stacks"));
	if (n < 1 || forks < 1 || (old && n < NEW_STACKS) ||
	    (stacks && (unsigned)n + (unsigned)forks * NEW_STACKS > 1u << PATH_DEPTH))
		return 2;
	if (stacks && stacks_from(0, (unsigned)n))
		return 1;
	void **v = malloc((size_t)n * sizeof *v);
	if (!v)
		return 1;
	for (int i = 0; i < n; i++)
		if (!(v[i] = malloc(32)))
			return 1;
	int self = counter(0), all = counter(1);
	if (self < 0 || all < 0) {
		printf("faults refused\n");
		return 0;
	}
	long long s0 = now(self), a0 = now(all);
	for (int k = 0; k < forks; k++) {
		unsigned next = (unsigned)k * NEW_STACKS;
		next = old ? next % ((unsigned)n - NEW_STACKS + 1) : next + (unsigned)n;
		if (stacks && stacks_from(next, next + NEW_STACKS))
			return 1;
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (exec) {
				char *none[] = { "/nonexistent/plain_fork_faults", NULL };
				execv(none[0], none);
			}
			_exit(0);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	long long s1 = now(self), a1 = now(all);
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	printf("parent %lld children %lld perf\n", s1 - s0, (a1 - a0) - (s1 - s0));
	return 0;
}
