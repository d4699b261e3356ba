/*
 * plain_stdout_merged.c - a program whose standard output is still in
 * stdio's buffer when it returns, and which leaks (tests/test_output.c:
 * run with standard output and standard error sent to one file, as a
 * test script's `prog > out 2>&1` does).  Not linked to memcheck.
 *
 * usage: plain_stdout_merged
 *   prints "first line\n" and "partial" (no newline) through stdio,
 *   leaks 100 bytes and returns 0.  The file must then begin with
 *   "first line\npartial", memcheck's text after it, as valgrind's is.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	printf("first line\n");
	printf("partial");
	void *volatile leak = malloc(100);
	(void)leak;
	return 0;
}
