/*
 * plain_closeall.c - a program that closes or replaces every descriptor
 * it may hold, as daemons, test runners and spawn helpers do (under
 * LD_PRELOAD, not linked to memcheck).
 *
 * usage: plain_closeall MODE
 *   leaks 100 bytes from leak_here(), prints "MODE done" on stdout, then
 *   closes:
 *     close_range0   close_range(0, ~0U, 0)
 *     close_range2   close_range(2, ~0U, 0)
 *     closefrom0     closefrom(0)
 *     loop           close(fd) for every fd below 4096, errors ignored
 *     dup2           /dev/null dup2'd onto every fd below 1024 but its own
 *     cloexec        close_range(0, ~0U, CLOSE_RANGE_CLOEXEC)
 *     between        close_range(0, ~0U, 0) with tests/prog/shim/
 *                    opens_between.c preloaded after memcheck, which
 *                    opens files between memcheck's calls (as another
 *                    thread may): exits 4 where one it opened is still
 *                    open while one it opened later is closed, which
 *                    one close_range cannot do (fdkeep.c's close_around)
 *   and exits 0.  A call that fails with another error than EBADF (a
 *   closed number) exits 3.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak_here.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *mode = argv[1];
	leak(100);
	char line[64];
	size_t n = strlen(mode) < 32 ? strlen(mode) : 32;
	memcpy(line, mode, n);
	memcpy(line + n, " done\n", 6);
	if (write(1, line, n + 6) != (ssize_t)(n + 6))
		return 3;
	int rc = 0;
	if (!strcmp(mode, "close_range0"))
		rc = close_range(0, ~0U, 0);
	else if (!strcmp(mode, "close_range2"))
		rc = close_range(2, ~0U, 0);
	else if (!strcmp(mode, "closefrom0"))
		closefrom(0);
	else if (!strcmp(mode, "loop")) {
		for (int fd = 0; fd < 4096; fd++)
			if (close(fd) != 0 && errno != EBADF)
				rc = -1;
	} else if (!strcmp(mode, "dup2")) {
		int null = open("/dev/null", O_WRONLY);
		for (int fd = 0; fd < 1024 && null >= 0; fd++)
			if (fd != null && dup2(null, fd) != fd)
				rc = -1;
	} else if (!strcmp(mode, "cloexec"))
		rc = close_range(0, ~0U, CLOSE_RANGE_CLOEXEC);
	else if (!strcmp(mode, "between")) {
		rc = close_range(0, ~0U, 0);
		int (*list)(const int **) =
			(int (*)(const int **))dlsym(RTLD_DEFAULT, "opens_between_list");
		const int *fds = NULL;
		int nfds = list ? list(&fds) : 0;
		if (nfds < 2)
			return 5; /* the shim not preloaded, or it opened nothing */
		bool kept = false;
		for (int i = 0; i < nfds; i++) {
			if (fcntl(fds[i], F_GETFD) != -1)
				kept = true;
			else if (kept)
				return 4; /* opened later, closed; one before it kept */
		}
	} else
		return 2;
	return rc == 0 ? 0 : 3;
}
