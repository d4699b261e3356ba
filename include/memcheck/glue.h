/*
 * memcheck/glue.h - the end of a test's region, as every framework's
 * glue (check.h, cmocka.h, criterion.h, glib.h, gtest.h, cunit.h,
 * catch2.h, doctest.h) has it: the
 * stack the test used scrubbed, the region ended, and, where it failed,
 * the message the framework shows and the line it shows it at.
 * Included by those headers; a test program need not include it.
 */
#ifndef MEMCHECK_GLUE_H
#define MEMCHECK_GLUE_H

#include <stdio.h>

#include "memcheck/memcheck.h"

/* Zero the stack the test function's frames used: their dead copies of
 * a leaked block's address would make the block reachable for the scan
 * that ends the region. */
__attribute__((noinline, unused)) static void mcglue_scrub(void)
{
	volatile char frames[8192];
	for (size_t i = 0; i < sizeof frames; i++)
		frames[i] = 0;
}

/* A failed region, as the framework shows it: where (the caller's
 * file and line unless the leak's site is known) and why. */
struct mcglue_failure {
	const char *file;
	int line;
	char why[1024];
};

/* Ends the innermost region: 0 where it passed, -1 where none was open;
 * else 1, the failure the framework's to report (memcheck_handled: the
 * program's exit status is the framework's), in *f: why ("memcheck:
 * region "NAME": what failed (allocated in FUNCTION)", the name between
 * quote), and file and line the leak's allocation site, the first
 * frame of its stack in the program's code, where there is one (else
 * left as the caller set them). */
static inline int mcglue_end(char quote, struct mcglue_failure *f)
{
	struct memcheck_result r;
	int rc = memcheck_end(&r);
	if (rc <= 0)
		return rc;
	memcheck_handled();
	const char *fn;
	if (memcheck_leak_site(&f->file, &f->line, &fn) == 0)
		snprintf(f->why, sizeof f->why, "memcheck: region %c%s%c: %s (allocated in %s)",
			 quote, r.name, quote, r.violations, fn);
	else
		snprintf(f->why, sizeof f->why, "memcheck: region %c%s%c: %s%s", quote, r.name, quote,
			 r.violations,
			 r.definitely_lost.blocks || r.possibly_lost.blocks ?
			 " (no frame with a source line in the program's code in the leak's "
			 "stack: a deeper MEMCHECK_STACK_DEPTH, or -g)" : "");
	return 1;
}

#endif
