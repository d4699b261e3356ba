/*
 * plain_fds.c - a program that takes over every file descriptor from 3
 * up, as daemons and some test runners do, under LD_PRELOAD (not linked
 * to memcheck; no stdio).
 *
 * usage: plain_fds FILE
 *   closes descriptors 3..999, creates FILE, makes every one of those
 *   numbers a copy of it (so the number memcheck kept for MEMCHECK_LOG,
 *   900 or below, now names FILE), writes "program\n" through it, leaks
 *   100 bytes and exits 0.  FILE must then hold only the program's line.
 *   Numbers from 1000 up stay free (a limit of 1024 descriptors is
 *   common), so memcheck can open its log again.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	for (int fd = 3; fd < 1000; fd++)
		close(fd);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	for (int n = 3; n < 1000; n++)
		if (n != fd && dup2(fd, n) < 0)
			break; /* past the descriptor limit */
	if (write(fd, "program\n", 8) != 8)
		return 1;
	void *volatile leak = malloc(100);
	(void)leak;
	return 0;
}
