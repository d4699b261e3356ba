/*
 * exitregion.c - explicit regions and the exit status
 * (tests/test_exitcode.c): a failing region fails the process unless the
 * program handled it with memcheck_handled().  Linked with libmemcheck,
 * and built again with libmemcheck.a (exitregion_static), whose
 * constructor runs after the program's start-up has begun.
 *
 * usage: exitregion CASE
 *   pass     a clean region; return 0
 *   fail     a region that leaks, its result ignored; return 0
 *   handled  the same, handled: return 0 is kept; a second
 *            memcheck_handled() returns -1 (exit 3 if not)
 *   some     two regions fail, one is handled; return 0
 *   status   a region fails; return 7
 */
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

static void *volatile sink;

__attribute__((noinline)) static void region(int leak)
{
	memcheck_begin(leak ? "leaks" : "clean");
	char *p = malloc(32);
	memset(p, 0, 32);
	sink = p;
	sink = NULL;
	if (!leak)
		free(p);
	memcheck_end(NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *c = argv[1];
	if (!strcmp(c, "pass")) {
		region(0);
		return memcheck_handled() == -1 ? 0 : 3;
	}
	if (!strcmp(c, "fail")) {
		region(1);
		return 0;
	}
	if (!strcmp(c, "handled")) {
		region(1);
		if (memcheck_handled() != 0 || memcheck_handled() != -1)
			return 3;
		return 0;
	}
	if (!strcmp(c, "some")) {
		region(1);
		region(1);
		return memcheck_handled() == 0 ? 0 : 3;
	}
	if (!strcmp(c, "status")) {
		region(1);
		return 7;
	}
	return 2;
}
