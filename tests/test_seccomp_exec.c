/*
 * test_seccomp_exec.c - a program started under a seccomp filter it
 * inherits (a sandbox launcher installs it, then execs the program:
 * systemd's SystemCallFilter=, bubblewrap, firejail, minijail, a
 * container runtime) runs under memcheck as it runs bare, under each
 * allocator: a left-out `echo` prints and exits 0, a measured program's
 * leak is reported.  memcheck never sees such a filter installed
 * (lib/seccomp.c asks only the ones the program installs), so before the
 * program runs it makes only the system calls the dynamic linker made to
 * load it, and the C library's start-up (README "Limits").
 *
 * tests/prog/plain_seccomp_exec installs a filter that kills, traps or
 * fails the calls it names and lets every other through.  On main at
 * a51f2faf the kill and trap rows for openat2 died of SIGSYS at
 * start-up (exit 159), left-out echo and measured program alike:
 * lib/programs.c asked openat2 for the default programs rule's path.  The
 * prctl rows hold the way back out: a probe of the filter with
 * prctl(PR_GET_SECCOMP) is a call such a filter kills as well (tried:
 * they died of it).  The errno rows pass on main too: the failed call's
 * fallback (/proc/self/exe) gives the same verdict.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The launcher's arguments: the filter's calls and action, then the
 * program run under it, a tests/prog name made a path here. */
H_SETUP(launch)
{
	size_t n = 0;
	while (run->args[n])
		n++;
	const char **args = calloc(n + 1, sizeof *args);
	ck_assert(args != NULL);
	for (size_t i = 0; i < n; i++)
		args[i] = run->args[i];
	if (!strchr(args[2], '/'))
		args[2] = h_prog(args[2]);
	run->args = args;
	return true;
}

#define LAUNCH(calls, how, ...)                                                        \
	.run = { .prog = "plain_seccomp_exec", .args = H_LIST(calls, how, __VA_ARGS__), \
		 .flags = H_PRELOAD },                                                 \
	.setup = launch
#define ECHO(calls, how) LAUNCH(calls, how, "/usr/bin/echo", "hi"), .stdout_is = "hi\n", \
	.records = H_NO_RECORDS
#define LEAK(calls, how) LAUNCH(calls, how, "plain_leak_direct"), .record = "process", \
	.want = { { "definitely_lost.blocks", 11 }, { "definitely_lost.bytes", 4576 } }

/* A fatal signal's record (lib/fatal.c) under a filter that kills,
 * traps or fails a call of it: the process dies of the signal it dies
 * of bare, with the record of that signal.  The case's signal is its
 * name's, in plain_fatal's words. */
H_CHECK(died_as_bare)
{
	const char *what = c->run.args[3];
	int sig = !strcmp(what, "segv") ? 11 : !strcmp(what, "abort") ? 6 : 15;
	ck_assert_msg(x->r.signal == sig, "%s: %s, not signal %d; stderr:\n%s", x->label,
		      h_status(&x->r), sig, x->r.err);
	H_EXPECT_U64(rec, "signal", (uint64_t)sig);
}
/* the row's name too: "a filter that kills CALLS: plain_fatal CASE" */
#define FATAL(calls, how, what)                                                            \
	"a filter that " how "s " calls ": plain_fatal " what,                               \
		LAUNCH(calls, how, "plain_fatal", what), .record = "process", .exit = H_EXIT_ANY, \
		.check = died_as_bare, .want = { { "definitely_lost.bytes", 100 } }

static const struct h_case cases[] = {
	{ "a filter that kills openat2: echo, left out", ECHO("openat2", "kill") },
	{ "a filter that kills openat2: a measured leak", LEAK("openat2", "kill") },
	{ "a filter that traps openat2: echo, left out", ECHO("openat2", "trap") },
	{ "a filter that traps openat2: a measured leak", LEAK("openat2", "trap") },
	{ "a filter that fails openat2 with EPERM: a measured leak", LEAK("openat2", "eperm") },
	{ "a filter that fails openat2 with ENOSYS: echo, left out", ECHO("openat2", "enosys") },
	{ "a filter that kills prctl: echo, left out", ECHO("prctl", "kill") },
	{ "a filter that kills prctl and openat2: a measured leak", LEAK("prctl,openat2", "kill") },
	/* membarrier (Linux 4.3, systemd's @default) failed: the block
	 * table locks from the start (lib/blocks.c), the verdict the same */
	{ "a filter that fails membarrier with EPERM: a measured leak", LEAK("membarrier", "eperm") },
	/* a fatal signal's record: its reads of memory through the
	 * kernel, the signal sent again with its siginfo (killed: exit 159
	 * on main at cdc8e4b6, the record made).  Its deadline's timer is
	 * kept (README "Limits"): failed, the record has none */
	{ FATAL("process_vm_readv", "kill", "segv") },
	{ FATAL("process_vm_writev", "kill", "segv") },
	{ FATAL("rt_tgsigqueueinfo", "kill", "abort") },
	{ FATAL("rt_tgsigqueueinfo", "trap", "segv") },
	{ FATAL("process_vm_readv,process_vm_writev,rt_tgsigqueueinfo", "kill", "term") },
	{ FATAL("timer_create", "eperm", "abort") },
};

int main(void)
{
	TCase *tc = h_tcase("seccomp_exec", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
