/*
 * supp_kept.c - a region whose blocks all stay reachable, for
 * test_suppress's lazy matching: keep_malloc's 48 bytes (which the
 * test's shipped file suppresses) and keep_other's 80.  Ended by
 * memcheck_end(&r), it prints the figures a caller reads in r; with
 * "null", ended by memcheck_end(NULL), nothing reads them.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

void *volatile keep[2];

__attribute__((noinline)) static void keep_malloc(void) { keep[0] = malloc(48); }
__attribute__((noinline)) static void keep_other(void) { keep[1] = malloc(80); }

int main(int argc, char **argv)
{
	bool null = argc > 1 && strcmp(argv[1], "null") == 0;
	struct memcheck_result r;
	memcheck_begin("kept");
	keep_malloc();
	keep_other();
	int rc = memcheck_end(null ? NULL : &r);
	if (!null)
		printf("suppressed %llu in %llu, reachable %llu in %llu, pass %d\n",
		       (unsigned long long)r.suppressed.bytes,
		       (unsigned long long)r.suppressed.blocks,
		       (unsigned long long)r.still_reachable.bytes,
		       (unsigned long long)r.still_reachable.blocks, r.pass);
	free(keep[0]);
	free(keep[1]);
	return rc != 0;
}
