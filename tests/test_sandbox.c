/*
 * test_sandbox.c - a program that restricts its own file access with
 * Landlock, as xz 5.6's command line does (tests/prog/plain_sandbox.c),
 * still gets its end measured under each allocator: its report written,
 * the scan's roots read (the kept block still reachable, not lost), the
 * shipped suppressions applied (the stdio buffer; the thread's DTV,
 * whose suppression names a static function of ld.so read from its
 * debug file), and a leak named where it was made.
 *
 * On main at bd55bca every `xz -dc` of xz's test_files.sh exited 23:
 * /proc/self/maps unread, no root, the dynamic linker's thread block
 * "definitely lost"; shipped suppressions and the report file not
 * opened.  Now memcheck keeps what its exit opens when the program sets
 * no_new_privs (lib/sandbox.c).  Where the kernel has no Landlock the
 * program runs unrestricted and the rows check nothing of it (noted).
 *
 * The seccomp rows (tests/prog/plain_seccomp.c): a filter that kills,
 * traps or fails a system call the program makes no more itself
 * (openat, mmap, fcntl; everything but its write to stdout and
 * exit_group), installed as libseccomp's seccomp_load does (the seccomp
 * system call through syscall(2)) or through prctl.  On main at 9386d0c
 * each died of SIGSYS at its exit under memcheck (exit 159), where it
 * exits 0 bare: memcheck's own opens (the suppression cache, libdw's
 * dlopen), the copies of its kept files (fcntl) and its mappings were
 * made past the filter.  Now it asks the filter first (lib/seccomp.c):
 * the program exits as bare, with the same output, and the verdict
 * stays right (the scan's memory from room reserved before a filter
 * that refuses mmap).
 *
 * The static rows (seccomp_static: plain_seccomp linked with
 * libmemcheck.a, the process region asked for with MEMCHECK_PROCESS=on,
 * the allocator preloaded behind it; libstdc++'s emergency pool, which
 * jemalloc and tcmalloc bring, is then still reachable, as valgrind
 * has it): memcheck's code and the program's are one object.  On main at d40e82b memcheck told its own syscall(2)
 * calls by their address in that object, so the program's own were
 * taken for memcheck's and asked of its filter: where the filter fails
 * openat with EACCES the program's own openat failed with EPERM, and
 * where it kills, the program lived on (EPERM) where bare it dies of
 * SIGSYS.  Now memcheck's own calls are renamed at compile time
 * (internal.h: mc_sc_syscall) and the program's reach the kernel.
 *
 * The no-/proc rows: plain_leak_stack in a mount namespace whose /proc
 * is an empty tmpfs (unshare -rm, as a chroot or a container without
 * /proc has it).  On main at d40e82b /proc/self/maps unread left no
 * stack a root: the two blocks its exiting frame holds were "definitely
 * lost" (3 blocks, 240 bytes, where valgrind and memcheck with /proc say
 * 1 and 80).  Now the exiting thread's stack is a root without it
 * (lib/roots.c).  Where user namespaces are not allowed the rows are
 * skipped, and say so.  Still reachable is not compared: under jemalloc
 * and tcmalloc libstdc++'s emergency pool, suppressed by its object's
 * name with /proc, is listed without it (no object names the frames).
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

H_CHECK(restricted)
{
	(void)rec;
	(void)c;
	if (!strcmp(x->r.out, "sandboxed=0\n"))
		printf("note: %s: no Landlock in this kernel; the program ran unrestricted\n",
		       x->label);
	else
		ck_assert_msg(!strcmp(x->r.out, "sandboxed=1\n"), "%s: stdout \"%s\"", x->label,
			      x->r.out);
}

H_CHECK(leak_named)
{
	restricted(x, rec, c);
	const char *fn = h_frame_str(rec, 0, 0, "function");
	ck_assert_msg(fn && !strcmp(fn, "sandbox_leak"),
		      "%s: the leak's first frame is %s, not sandbox_leak()", x->label,
		      fn ? fn : "unnamed");
}

#define NOT_READ H_LIST("cannot read", "not read", "cannot open", "Permission denied")
#define KEPT { "still_reachable.blocks", 1 }, { "still_reachable.bytes", 24 }

static const struct h_case cases[] = {
	{ "restricted, nothing lost",
	  .run = { .prog = "plain_sandbox", .args = H_LIST("clean"), .flags = H_PRELOAD },
	  .record = "process", .no_err = NOT_READ,
	  .want = { { "definitely_lost.blocks", 0 }, { "possibly_lost.blocks", 0 }, KEPT },
	  .check = restricted },
	{ "restricted, a leak",
	  .run = { .prog = "plain_sandbox", .args = H_LIST("leak"), .flags = H_PRELOAD },
	  .record = "process", .no_err = NOT_READ,
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 77 }, KEPT },
	  .check = leak_named },
};

/* As without memcheck: the same output, and the same status where the
 * row keeps the program's (MEMCHECK_EXITCODE=0). */
H_CHECK(as_bare)
{
	(void)rec;
	struct h_res bare;
	h_exec_bare(&bare, x, c);
	ck_assert_msg(!strcmp(x->r.out, bare.r.out), "%s: stdout \"%s\", bare \"%s\"", x->label,
		      x->r.out, bare.r.out);
	if (!(c->run.flags & H_EXITCODE))
		ck_assert_msg(x->r.exit_code == bare.r.exit_code && x->r.signal == bare.r.signal,
			      "%s: %s, bare %s", x->label, h_status(&x->r), h_status(&bare.r));
	h_res_free(&bare);
}

#define SECCOMP(...) .prog = "plain_seccomp", .args = H_LIST(__VA_ARGS__)
#define FILTERED "filtered=1\n"
#define LOST77 { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 77 }
#define KEPT24 { "still_reachable.blocks", 1 }, { "still_reachable.bytes", 24 }

static const struct h_case seccomp_cases[] = {
	{ "seccomp kills openat (libseccomp's way), a leak",
	  .run = { SECCOMP("openat", "kill", "seccomp", "leak"), .flags = H_PRELOAD },
	  .record = "process", .stdout_is = FILTERED,
	  .want = { LOST77, KEPT24, { "possibly_lost.blocks", 0 } }, .check = as_bare },
	{ "seccomp kills mmap (prctl), nothing lost",
	  .run = { SECCOMP("mmap", "kill", "prctl", "clean"), .flags = H_PRELOAD },
	  .record = "process", .stdout_is = FILTERED,
	  .want = { { "definitely_lost.blocks", 0 }, { "possibly_lost.blocks", 0 } },
	  .check = as_bare },
	{ "seccomp kills mmap, a leak",
	  .run = { SECCOMP("mmap", "kill", "seccomp", "leak"), .flags = H_PRELOAD },
	  .record = "process", .stdout_is = FILTERED, .want = { LOST77 }, .check = as_bare },
	{ "seccomp traps fcntl, a leak",
	  .run = { SECCOMP("fcntl", "trap", "seccomp", "leak"), .flags = H_PRELOAD },
	  .record = "process", .stdout_is = FILTERED, .want = { LOST77, KEPT24 }, .check = as_bare },
	/* memcheck asks RLIMIT_FSIZE at its first write (session 40): a
	 * limit it cannot read is taken for none, the record written (a
	 * first version took it for 0 and dropped every record); the
	 * refused call is said, as any other of memcheck's */
	{ "seccomp kills getrlimit, a leak",
	  .run = { SECCOMP("getrlimit", "kill", "seccomp", "leak"), .flags = H_PRELOAD },
	  .record = "process", .stdout_is = FILTERED, .want = { LOST77, KEPT24 },
	  .no_err = H_LIST("MEMCHECK_REPORT"), .check = as_bare },
	/* nothing but the program's own calls: no report can be written,
	 * the exit status still says the leak */
	{ "seccomp allows only write to stdout and exit_group, a leak",
	  .run = { SECCOMP("exitonly", "kill", "seccomp", "leak"), .flags = H_PRELOAD | H_EXITCODE },
	  .exit = 23, .stdout_is = FILTERED, .check = as_bare },
	{ "seccomp allows only write to stdout and exit_group, nothing lost",
	  .run = { SECCOMP("exitonly", "kill", "prctl", "clean"), .flags = H_PRELOAD | H_EXITCODE },
	  .stdout_is = FILTERED, .check = as_bare },
};

/* Linked with libmemcheck.a: the process region asked for (no preload
 * turns it on), the row's allocator preloaded behind the program's
 * memcheck. */
H_SETUP(static_setup)
{
	const char *so = h_allocators[run->alloc].soname;
	const char **env = calloc(3, sizeof *env);
	ck_assert(env != NULL);
	env[0] = "MEMCHECK_PROCESS=on";
	env[1] = so ? h_env("LD_PRELOAD=%s", h_allocator_so(so)) : NULL;
	run->env = env;
	return true;
}

/* killed by its own filter, as bare */
H_CHECK(killed_by_sigsys)
{
	ck_assert_msg(x->r.signal == SIGSYS && !strcmp(x->r.out, FILTERED),
		      "%s: %s, stdout \"%s\"; bare it dies of SIGSYS after \"" FILTERED "\"",
		      x->label, h_status(&x->r), x->r.out);
}

#define STATIC(...) .prog = "seccomp_static", .args = H_LIST(__VA_ARGS__)

static const struct h_case static_cases[] = {
	{ "linked with libmemcheck.a, seccomp fails openat with EACCES: the program's own too",
	  .run = { STATIC("openat", "errno", "seccomp", "leak", "probe") }, .setup = static_setup,
	  .record = "process", .stdout_is = FILTERED "probe=-1 errno=13\n", .want = { LOST77 } },
	{ "linked with libmemcheck.a, seccomp kills openat: the program's own call dies",
	  .run = { STATIC("openat", "kill", "seccomp", "clean", "probe") }, .setup = static_setup,
	  .exit = H_EXIT_ANY, .check = killed_by_sigsys },
	/* memcheck's own opens still asked of the filter, not killed */
	{ "linked with libmemcheck.a, seccomp kills openat, a leak",
	  .run = { STATIC("openat", "kill", "seccomp", "leak") }, .setup = static_setup,
	  .record = "process", .stdout_is = FILTERED, .want = { LOST77 } },
	{ "linked with libmemcheck.a, seccomp kills mmap (prctl), a leak",
	  .run = { STATIC("mmap", "kill", "prctl", "leak") }, .setup = static_setup,
	  .record = "process", .stdout_is = FILTERED, .want = { LOST77 } },
};

/* The row's program run with an empty tmpfs over /proc, where this
 * system lets an unprivileged user namespace mount one. */
H_SETUP(no_proc)
{
	static int can = -1;
	if (can < 0)
		can = system("unshare -rm sh -c 'mount -t tmpfs none /proc && "
			     "test ! -e /proc/self' >/dev/null 2>&1") == 0;
	if (!can) {
		printf("note: %s: skipped: `unshare -rm` cannot mount a tmpfs over /proc here "
		       "(no user namespaces)\n", c->name);
		return false;
	}
	const char **args = calloc(8, sizeof *args);
	ck_assert(args != NULL);
	args[0] = "-rm";
	args[1] = "sh";
	args[2] = "-c";
	args[3] = "mount -t tmpfs none /proc && exec \"$0\" \"$@\"";
	args[4] = h_prog(run->prog);
	for (size_t i = 0; run->args && run->args[i] && i < 3; i++)
		args[5 + i] = run->args[i];
	run->prog = "/usr/bin/unshare";
	run->args = args;
	return true;
}

static const struct h_case no_proc_cases[] = {
	{ "no /proc: a block held by the exiting frame still reachable",
	  .run = { .prog = "plain_leak_stack", .flags = H_PRELOAD }, .setup = no_proc,
	  .record = "process",
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 80 },
		    { "possibly_lost.blocks", 0 } } },
};

int main(void)
{
	TCase *tc = h_tcase("sandbox", 60);
	H_ADD_CASES(tc, cases);
	H_ADD_CASES(tc, seccomp_cases);
	H_ADD_CASES(tc, static_cases);
	H_ADD_CASES(tc, no_proc_cases);
	return h_run_suite(NULL);
}
