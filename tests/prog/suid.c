/*
 * suid.c - a setuid program with memcheck inside it, for a user it does
 * not trust (tests/test_secure.c; issue 14, item 14).  Linked with
 * libmemcheck.a, not the shared library: a setuid program's loader
 * ignores $ORIGIN and LD_LIBRARY_PATH, so the test can run a copy of it
 * from any directory.
 *
 * usage: suid
 *   prints "euid=E uid=U secure=S" (S: AT_SECURE), ends a region that
 *   leaks 24 bytes, and exits 0.
 */
#include <memcheck/memcheck.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

void *volatile keep;

int main(void)
{
	printf("euid=%d uid=%d secure=%lu\n", (int)geteuid(), (int)getuid(),
	       getauxval(AT_SECURE));
	fflush(stdout);
	memcheck_begin("suid");
	keep = malloc(24);
	keep = NULL;
	memcheck_end(NULL);
	return 0;
}
