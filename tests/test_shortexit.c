/*
 * test_shortexit.c - what a short failing process's exit asks of /proc
 * when its parent runs without memcheck (lib/descend.c).
 *
 * A process whose region failed walks up its ancestors while they have
 * memcheck loaded (MEMCHECK_ANCESTORS).  Its first question is whether
 * the parent has memcheck (/proc/PPID/maps); the parent's stat (its own
 * parent and start time) and this process's own path (/proc/self/exe)
 * are needed only past that: on main before this (1ff7a48) every
 * failing process read both first, 4 system calls at the exit of every
 * leaking test that a bare shell loop, make or ctest ran.
 *
 * Under each allocator, tests/prog/plain_leak_direct is run by strace,
 * which is not preloaded (strace -E passes LD_PRELOAD to the traced
 * program alone; MEMCHECK_PROGRAMS=*, whose start-up reads no
 * /proc/self/exe for the programs rule): the program still fails (MEMCHECK_EXITCODE's 23), and
 * its trace has the parent's maps read and neither the parent's stat nor
 * a readlink of /proc/self/exe.  Without strace, or where ptrace is
 * refused, the rows are skipped.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define STRACE "/usr/bin/strace"

START_TEST(bare_parent)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	if (access(STRACE, X_OK) != 0 || !h_can_ptrace()) {
		printf("note: %s missing or ptrace refused; skipping\n", STRACE);
		return;
	}
	const char *trace = h_tmppath("trace");
	char pre[4096], cache[4096], out[4096];
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s%s%s", h_lib(), so ? " " : "", so ? so : "");
	snprintf(cache, sizeof cache, "MEMCHECK_CACHE=%s/tests/cache", h_build());
	snprintf(out, sizeof out, "%s", trace);
	char *argv[] = { STRACE, "-f", "-qq", "-e", "trace=openat,readlink", "-o", out,
			 "-E", pre, "-E", cache, "-E", "MEMCHECK_PROGRAMS=*", "--", (char *)h_prog("plain_leak_direct"), NULL };
	char *env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
	pid_t pid = h_spawn_quiet(argv, env, false);
	int st;
	ck_assert(waitpid(pid, &st, 0) == pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 23,
		      "under %s: plain_leak_direct exited %d, not 23 (its leak fails it)",
		      h_allocator_name(_i), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	char *t = h_read_file(trace, NULL);
	ck_assert_msg(t, "no trace at %s", trace);
	char parent[64];
	snprintf(parent, sizeof parent, "\"/proc/%d/", (int)pid);
	char maps[80], stat[80];
	snprintf(maps, sizeof maps, "%smaps\"", parent);
	snprintf(stat, sizeof stat, "%sstat\"", parent);
	ck_assert_msg(strstr(t, maps), "under %s: the parent's maps (%s) not read:\n%.3000s",
		      h_allocator_name(_i), maps, t);
	ck_assert_msg(!strstr(t, stat),
		      "under %s: the parent's stat read, though it has no memcheck:\n%.3000s",
		      h_allocator_name(_i), t);
	ck_assert_msg(!strstr(t, "readlink(\"/proc/self/exe\""),
		      "under %s: its own path read for no record:\n%.3000s", h_allocator_name(_i), t);
	free(t);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("shortexit", 60);
	tcase_add_loop_test(tc, bare_parent, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
