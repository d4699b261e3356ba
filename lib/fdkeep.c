/*
 * fdkeep.c - the program's calls that close or replace descriptor 2.
 *
 * memcheck writes its text to the standard error the process started
 * with, as valgrind does, also where the program closed descriptor 2
 * (coreutils' exit handler) or put another file there.  That needs a
 * copy of it, and a copy made at start-up held one of the program's
 * numbers for the whole run: where the open-file limit is inherited
 * with soft and hard alike (`ulimit -n 1024`, a container's), there is
 * no room above it, and a program that opened files until EMFILE got
 * one fewer than bare (tests/prog/plain_nofile_inherited: 1,019 bare,
 * 1,018 before), one that listed /proc/self/fd to find descriptors it
 * leaked found 900 open, and one that counts its descriptors up to the
 * limit met it.
 *
 * So the copy is made only when descriptor 2 is about to go: in the
 * calls here, before the C library's.  A process whose descriptor 2
 * stays as it was holds no descriptor of memcheck's while the program
 * runs; memcheck's text then goes to descriptor 2 itself (textout.c
 * checks that it is still the same file first).  Made in a vfork'd
 * child (its own descriptor table, the parent's memory), a copy would
 * be recorded for a parent that has none: none is made there.  Left:
 * descriptor 2 closed by a raw system call, by login_tty or forkpty's
 * child, or by code linked statically with its own C library: the text
 * is then written only if descriptor 2 is again the file it was
 * (textout.c), else nowhere; a seccomp filter installed before the
 * close that refuses F_DUPFD (sandbox.c makes the copy before one is
 * installed).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* internal.h names memcheck's own calls of close (MC_SECCOMP_CALLS):
 * the one defined here is the program's. */
#undef close

MC_HOT static int (*real_close)(int);
MC_HOT static int (*real_dup2)(int, int);
MC_HOT static int (*real_dup3)(int, int, int);
MC_HOT static int (*real_close_range)(unsigned, unsigned, int);
MC_HOT static void (*real_closefrom)(int);
MC_HOT static int (*real_fclose)(FILE *);
MC_HOT static FILE *(*real_freopen)(const char *, const char *, FILE *);
MC_HOT static FILE *(*real_freopen64)(const char *, const char *, FILE *);
MC_HOT static int (*real_daemon)(int, int);
/* life.c's names (MC_FDKEEP_NAMES), for a name its walk did not find:
 * no string of this file's own, which the linker would merge with
 * life.c's and place with this file's read-only data, blocks away from
 * the start-up's (test_codeblocks) */
MC_HOT static const char *const *names;

void mc_fdkeep_resolve(const char *const *name, void *const *found)
{
	names = name;
	real_close = found[0];
	real_dup2 = found[1];
	real_dup3 = found[2];
	real_close_range = found[3];
	real_closefrom = found[4];
	real_fclose = found[5];
	real_freopen = found[6];
	real_freopen64 = found[7];
	real_daemon = found[8];
}

/* Descriptor 2 is about to be closed or replaced. */
static inline void fd2_going(void)
{
	int saved = errno;
	mc_text_keep_stderr();
	errno = saved;
}

/* Descriptor 0 or 2 (fd) is about to be closed or replaced: 0, its file
 * noted first for the arguments' key (progname.c; zlib-ng's minigzip
 * closes its standard input before its exit's record), out of line:
 * the wrappers' one test, (fd & ~2) == 0, stands for both.  Or one at
 * or above mc_fd_kept_low, which may be a descriptor memcheck keeps:
 * moved out of the way first (textout.c). */
static __attribute__((noinline, cold)) void fd_going(int fd)
{
	if (fd >= 3) {
		mc_fd_kept_move(fd);
		return;
	}
	if (fd == 2) {
		fd2_going();
		return;
	}
	if (!mc_opt.report)
		return; /* no record: no key */
	int saved = errno;
	mc_args_stdin_note();
	errno = saved;
}

/* A call made before memcheck found the C library's (another library's
 * constructor, before libmemcheck's): resolved now, as the malloc
 * family's are (interpose.c); a name the forwarding table's walk did
 * not find there (another C library's), by a walk of its own. */
static __attribute__((noinline, cold)) void *real_of(void **p, int i)
{
	if (!__atomic_load_n(p, __ATOMIC_ACQUIRE))
		mc_resolve_calls();
	if (!__atomic_load_n(p, __ATOMIC_ACQUIRE) && names)
		return mc_sym_next_cached(names[i], p);
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* The C library's function, found once; i: its place in MC_FDKEEP_NAMES */
#define REAL(f, i) ((__typeof__(real_##f))(real_##f ? (void *)real_##f : real_of((void **)&real_##f, i)))

/* fd is 0 or 2, or may be one memcheck keeps */
#define FD_WATCHED(fd) __builtin_expect((fd & ~2) == 0 || fd >= mc_fd_kept_low, 0)

MC_API int close(int fd)
{
	if (FD_WATCHED(fd))
		fd_going(fd);
	int (*f)(int) = REAL(close, 0);
	return f ? f(fd) : (int)mc_seccomp_raw(SYS_close, fd, 0, 0, 0, 0, 0);
}

MC_API int dup2(int old, int fd)
{
	if (FD_WATCHED(fd) && old != fd)
		fd_going(fd);
	int (*f)(int, int) = REAL(dup2, 1);
	return f ? f(old, fd) : (int)mc_seccomp_raw(SYS_dup2, old, fd, 0, 0, 0, 0);
}

MC_API int dup3(int old, int fd, int flags)
{
	if (FD_WATCHED(fd))
		fd_going(fd);
	int (*f)(int, int, int) = REAL(dup3, 2);
	return f ? f(old, fd, flags) : (int)mc_seccomp_raw(SYS_dup3, old, fd, flags, 0, 0, 0);
}

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static inline __attribute__((always_inline)) int range_close(unsigned first, unsigned last,
								    int flags)
{
	int (*f)(unsigned, unsigned, int) = REAL(close_range, 3);
	return f ? f(first, last, flags)
		 : (int)mc_seccomp_raw(SYS_close_range, first, last, flags, 0, 0, 0);
}

/* close_range over [first, last] (closefrom's from first: to_end), but
 * the descriptors memcheck keeps there (textout.c): the pieces between
 * them, the first error returned (a kernel without close_range: each
 * number below the last kept one closed alone for closefrom, as the C
 * library's closefrom falls back).  Rare (a range over a number of
 * memcheck's, past mc_fd_kept_low): not a cold part of the wrappers,
 * which lie in group 0 (text-order.ld), but a function of its own at
 * the end of the code.
 *
 * Several calls where the program made one, so another thread's open
 * may come between two of them: it takes the lowest free number.  The
 * pieces go from the top down, so that every number a call frees lies
 * above every piece still to close: a number there is taken only once
 * no number in the pieces below is free.  So another thread's opens
 * meanwhile take the pieces' free numbers first (closed with their
 * piece, as an open just before a single close_range is) and then the
 * numbers freed (kept, as an open just after it is): never a file
 * closed that was opened after one kept, which a single call cannot
 * do either.  From the bottom up, a piece freed first took the opens
 * after it, and once it was full (the kept copy of standard error lies
 * near 900) the next open went to a free number of a piece above,
 * which its call then closed, after the earlier open was kept.  (The
 * program's own closes meanwhile race with its close_range bare too.) */
__attribute__((noinline, optimize("no-reorder-blocks-and-partition"))) static int
close_around(unsigned first, unsigned last, int flags, bool to_end)
{
	if (first > last || (flags & CLOSE_RANGE_CLOEXEC))
		return range_close(first, last, flags);
	int saved = errno;
	int kept[MC_FD_KEPT_ALL]; /* every one memcheck keeps */
	int n = mc_fds_kept_in(first, last, kept, MC_FD_KEPT_ALL);
	int rc = 0, err = 0;
	for (int i = n; i >= 0; i--) {
		unsigned lo = i > 0 ? (unsigned)kept[i - 1] + 1 : first;
		if (i < n && (unsigned)kept[i] <= lo)
			continue; /* nothing between two kept ones */
		unsigned hi = i < n ? (unsigned)kept[i] - 1 : last;
		void (*from)(int) = i == n && to_end ? REAL(closefrom, 4) : NULL;
		if (from) {
			from((int)lo);
			continue;
		}
		if (lo <= hi && range_close(lo, hi, flags) != 0) {
			if (errno == ENOSYS && to_end && i < n) {
				for (unsigned fd = lo; fd <= hi; fd++)
					mc_seccomp_raw(SYS_close, fd, 0, 0, 0, 0, 0);
			} else if (!err) {
				err = errno;
				rc = -1;
			}
		}
	}
	errno = err ? err : saved;
	return rc;
}

MC_API int close_range(unsigned first, unsigned last, int flags)
{
	if (first == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		fd_going(0);
	if (first <= 2 && last >= 2 && !(flags & CLOSE_RANGE_CLOEXEC))
		fd2_going();
	if (last >= (unsigned)mc_fd_kept_low)
		return close_around(first, last, flags, false);
	return range_close(first, last, flags);
}

MC_API void closefrom(int lowfd)
{
	if (lowfd <= 0)
		fd_going(0);
	if (lowfd <= 2)
		fd2_going();
	if (mc_fd_kept_low != INT_MAX) {
		close_around(lowfd < 0 ? 0 : (unsigned)lowfd, ~0U, 0, true);
		return;
	}
	void (*f)(int) = REAL(closefrom, 4);
	if (f)
		f(lowfd);
	else
		mc_seccomp_raw(SYS_close_range, lowfd < 0 ? 0 : lowfd, ~0U, 0, 0, 0, 0);
}

/* A stream's descriptor is read as the C library's fileno_unlocked
 * does (fp->_fileno), with no call: fclose is on every program's path. */
MC_API int fclose(FILE *fp)
{
	if (fp && (fp->_fileno & ~2) == 0)
		fd_going(fp->_fileno);
	int (*f)(FILE *) = REAL(fclose, 5);
	if (!f) {
		errno = ENOSYS;
		return EOF;
	}
	return f(fp);
}

/* freopen and freopen64 alike, each with the C library's own */
static inline __attribute__((always_inline)) FILE *
reopen_with(FILE *(*f)(const char *, const char *, FILE *), const char *path, const char *mode,
	    FILE *fp)
{
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	return f(path, mode, fp);
}

MC_API FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	if (fp && (fp->_fileno & ~2) == 0)
		fd_going(fp->_fileno);
	return reopen_with(REAL(freopen, 6), path, mode, fp);
}

MC_API FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	if (fp && (fp->_fileno & ~2) == 0)
		fd_going(fp->_fileno);
	return reopen_with(REAL(freopen64, 7), path, mode, fp);
}

/* daemon(3) puts /dev/null on 0, 1 and 2 in its child unless told not
 * to: the child's text goes where the process's did, as valgrind's. */
MC_API int daemon(int nochdir, int noclose)
{
	if (!noclose) {
		fd_going(0);
		fd2_going();
	}
	int (*f)(int, int) = REAL(daemon, 8);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(nochdir, noclose);
}
