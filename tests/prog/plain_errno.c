/*
 * plain_errno.c - what each allocation function leaves in errno when a
 * huge request fails (tests/test_family.c; issue 14, item 13).  Not
 * linked to memcheck: the test runs it bare under an allocator and with
 * memcheck preloaded in front, and the two outputs must be the same.
 * Where the allocator lacks a function (jemalloc: pvalloc and
 * reallocarray), the bare run gets glibc's, and memcheck's own version
 * of it must then fail as glibc's does.
 *
 * usage: plain_errno
 *   prints one line per call, "CALL: NULL errno N" or "CALL: ok", and
 *   for posix_memalign its return value; exits 0.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile size_t huge = SIZE_MAX / 2;

static void said(const char *call, void *p)
{
	int e = errno;
	char line[128];
	int n = p ? snprintf(line, sizeof line, "%s: ok\n", call)
		  : snprintf(line, sizeof line, "%s: NULL errno %d\n", call, e);
	if (write(1, line, (size_t)n) != n)
		_exit(2);
	free(p);
}

#define TRY(call)                \
	do {                     \
		errno = 0;       \
		void *p_ = call; \
		said(#call, p_); \
	} while (0)

int main(void)
{
	size_t n = huge;
	TRY(malloc(n));
	TRY(calloc(n, 4));
	TRY(realloc(NULL, n));
	TRY(reallocarray(NULL, n, 1));
	TRY(reallocarray(NULL, n, 4));
	TRY(memalign(64, n));
	TRY(aligned_alloc(64, n & ~(size_t)63));
	TRY(valloc(n));
	TRY(pvalloc(n));
	void *p = NULL;
	char line[64];
	int len = snprintf(line, sizeof line, "posix_memalign: %d\n", posix_memalign(&p, 64, n));
	if (write(1, line, (size_t)len) != len)
		return 2;
	free(p);
	return 0;
}
