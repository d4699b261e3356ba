/*
 * plain_fdlist.c - a program that lists its open descriptors, as test
 * suites do to find descriptors a test leaked (tests/test_nofile.c):
 * under memcheck it must see the ones it sees without it.  Preloaded
 * only, never linked to memcheck; no stdio before the list is taken.
 *
 * usage: plain_fdlist [close2]
 *   close2  closes descriptor 2 first, then lists (memcheck's copy of
 *           standard error is made then, and listed: README, Limits)
 * Prints "fds: N N ...", the numbers open from 3 up, other than the
 * directory stream's own, and leaks 32 bytes.  Exit 0.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "close2"))
		close(2);
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 1;
	int fds[64], n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 64) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd >= 3 && fd != dirfd(d))
			fds[n++] = fd;
	}
	closedir(d);
	printf("fds:");
	for (int i = 0; i < n; i++)
		printf(" %d", fds[i]);
	printf("\n");
	void *volatile leak = malloc(32);
	(void)leak;
	return 0;
}
