/*
 * opens_between.c - a preloaded shim (libopens_between.so, after memcheck
 * in LD_PRELOAD) for plain_closeall's "between" mode.  Its close_range
 * calls the C library's and, after the first call (with
 * $OPENS_BETWEEN set), opens /dev/null again and again, as another
 * thread of the program may between two of memcheck's calls (fdkeep.c
 * closes a range in pieces around a descriptor it keeps), until a
 * number comes that is not one more than the one before (it passed
 * over a number held: memcheck's copy of standard error), that one
 * included.  The numbers, in the order opened: opens_between_list.
 * Raw system calls for the opens: no stdio, no malloc.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX 8192

EXPORT int opens_between_list(const int **fds);
EXPORT int close_range(unsigned first, unsigned last, int flags);

static int opened[MAX];
static int nopened;
static int done;

EXPORT int opens_between_list(const int **fds)
{
	*fds = opened;
	return nopened;
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	int (*real)(unsigned, unsigned, int) =
		(int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range");
	int rc = real(first, last, flags);
	if (done || !getenv("OPENS_BETWEEN"))
		return rc;
	done = 1;
	while (nopened < MAX) {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
		if (fd < 0)
			break;
		opened[nopened++] = fd;
		if (nopened > 1 && fd != opened[nopened - 2] + 1)
			break;
	}
	return rc;
}
