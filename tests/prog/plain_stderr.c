/*
 * plain_stderr.c - a program that takes standard error's descriptor for
 * a data file of its own, as some do (tests/test_output.c; issue 14,
 * item 8).  Not linked to memcheck; no stdio.
 *
 * usage: plain_stderr FILE
 *   closes descriptor 2, opens FILE (which gets number 2), writes
 *   "data\n" through descriptor 2, leaks 100 bytes and exits 0.  FILE
 *   must then hold only "data\n": memcheck's report goes to the standard
 *   error the process started with.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	close(2);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd != 2)
		return 1;
	if (write(2, "data\n", 5) != 5)
		return 1;
	void *volatile leak = malloc(100);
	(void)leak;
	return 0;
}
