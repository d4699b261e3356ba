/*
 * creds.c - a program whose effective ids part from its real ones runs
 * its children unmeasured: say so.
 *
 * The kernel starts a program in secure execution (AT_SECURE) when the
 * process that runs it has an effective user or group id other than its
 * real one, setuid bit or not; the dynamic linker then ignores an
 * LD_PRELOAD that names a path, so memcheck is not loaded into it and
 * nothing records that it was not.  A test harness run as root that
 * drops its effective id around each test (libarchive's: seteuid to
 * nobody, then system("bsdtar ...")) had 4 of 5 bsdtar runs of a test
 * unmeasured, their leaks passing, in silence.
 *
 * The calls that can leave the ids apart are wrapped here, and after the
 * first that does, memcheck says once what follows.  Said at the change,
 * not at the child's start: glibc's system, popen and posix_spawn reach
 * execve inside the C library, where no wrapper sees them, and the
 * child, with no memcheck in it, cannot speak.  A process that parts its
 * ids and never runs a program is told too: the line names the cause, so
 * it can be read for what it is.  setuid and setgid are not wrapped: as
 * root they set every id alike, and otherwise they move only the
 * effective one back to the real or saved id, which leaves them apart
 * only if they were already.  Ids changed by a raw syscall(2) are not
 * seen.
 *
 * And a process with root's effective id that changes its ids (setgid
 * then setuid to nobody, a harness's seteuid around a test) may lose
 * the right to open MEMCHECK_REPORT where the exit writes it (a
 * directory root's alone): "cannot open ...: Permission denied", the
 * records lost.  Before such a call the report file is opened and kept
 * (sandbox.c's mc_sandbox_keep_report), and MEMCHECK_LOG's file
 * (textout.c's mc_text_keep_log: the text went to standard error
 * instead); setuid and setgid are wrapped for that alone.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "internal.h"

static atomic_bool said;

/* After a successful change: the ids apart, said once per process (a
 * forked child inherits the flag with the ids). */
static int after(int rc, const char *call)
{
	if (rc != 0 || atomic_load_explicit(&said, memory_order_relaxed))
		return rc;
	int saved = errno;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (getresuid(&ru, &eu, &su) == 0 && getresgid(&rg, &eg, &sg) == 0 &&
	    (ru != eu || rg != eg) && !atomic_exchange(&said, true))
		mc_log("%s: effective user %u group %u, real user %u group %u: a program this "
		       "process runs from here starts in secure execution, where the dynamic "
		       "linker ignores LD_PRELOAD and takes it out of the environment: it and "
		       "what it runs are not measured",
		       call, (unsigned)eu, (unsigned)eg, (unsigned)ru, (unsigned)rg);
	errno = saved;
	return rc;
}

/* Before a call that may change the ids: root's rights may be going. */
static void before(void)
{
	if (geteuid() == 0) {
		mc_sandbox_keep_report();
		mc_text_keep_log();
	}
}

#define WRAP(name, params, args)                                                    \
	MC_API int name params                                                      \
	{                                                                           \
		static void *real;                                                  \
		int (*f) params = mc_sym_next_cached(#name, &real);                 \
		if (!f) {                                                           \
			errno = ENOSYS;                                             \
			return -1;                                                  \
		}                                                                   \
		before();                                                           \
		return after(f args, #name);                                        \
	}

WRAP(setuid, (uid_t u), (u))
WRAP(setgid, (gid_t g), (g))

WRAP(seteuid, (uid_t e), (e))
WRAP(setegid, (gid_t e), (e))
WRAP(setreuid, (uid_t r, uid_t e), (r, e))
WRAP(setregid, (gid_t r, gid_t e), (r, e))
WRAP(setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
WRAP(setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s))
