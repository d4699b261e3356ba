/*
 * memcheck/criterion.h - glue for the Criterion unit-test framework.
 *
 * One line, in one source file of the test program, puts every test
 * under memcheck:
 *
 *     #include <memcheck/criterion.h>
 *
 * Each test's function then runs in a region of its own, named after
 * the test, and a test that leaves memory behind fails with Criterion's
 * own assertion failure, at the line that allocated the block, in
 * Criterion's console and XML/JSON/TAP output alike.
 *
 * Traps that shaped it:
 * - Criterion offers no hook inside the worker process that runs a test
 *   (its report hooks run in the runner), and a failure raised in .fini
 *   comes after the test's result: it is printed, but the test counts
 *   as passed.  So this header defines criterion_internal_test_main(),
 *   the function each test's trampoline calls with the test's function,
 *   in the program, where it comes before libcriterion's in symbol
 *   lookup; it runs the real one (dlsym RTLD_NEXT) with a wrapper that
 *   opens the region, calls the test, and ends it while the test still
 *   runs.  Weak: a program that includes the header in several files
 *   links.
 * - A test that fails an assertion of its own leaves the wrapper by
 *   longjmp with the region open: discarded unreported when the real
 *   function returns.  One that skips ends its worker from inside the
 *   test: an exit handler discards the region, before memcheck's own
 *   would report it as not ended.
 * - The leak's failure is criterion_send_assert() with the leak's
 *   file:line, then criterion_abort_test(), as a failing cr_assert does.
 *   Its message has no double quote: Criterion's JSON report writes
 *   messages unescaped.
 * - A parameterized test's function takes its parameter: the wrapper
 *   takes one and passes it on when the test has parameters.
 *
 * Link with -lmemcheck and -lcriterion (and -ldl before glibc 2.34).
 */
#ifndef MEMCHECK_CRITERION_H
#define MEMCHECK_CRITERION_H

#include <criterion/abort.h>
#include <criterion/criterion.h>
#include <criterion/event.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

/* The running test's function, and whether its region is open. */
static void (*mcglue_cr_fn)(void);
static int mcglue_cr_open;

/* A region still open at exit: its test skipped itself (the worker
 * ends inside the test). */
static void mcglue_cr_at_exit(void)
{
	if (mcglue_cr_open) {
		mcglue_cr_open = 0;
		memcheck_discard();
	}
}

/* The test's function in a region of its own. */
static void mcglue_cr_wrapper(void *param)
{
	static int at_exit;
	if (!at_exit++)
		atexit(mcglue_cr_at_exit);
	const struct criterion_test *t = criterion_current_test;
	memcheck_begin(t->name);
	mcglue_cr_open = 1;
	if (t->data && t->data->param_)
		((void (*)(void *))mcglue_cr_fn)(param);
	else
		mcglue_cr_fn();
	mcglue_scrub();
	mcglue_cr_open = 0;
	/* Criterion reports the failure, and its status is the program's */
	static struct mcglue_failure f;
	f.file = __FILE__;
	f.line = __LINE__;
	if (mcglue_end('\'', &f) <= 0)
		return;
	struct criterion_assert_stats stats = {
		.message = f.why, .passed = 0, .line = (unsigned)f.line, .file = f.file,
	};
	criterion_send_assert(&stats);
	criterion_abort_test();
}

__attribute__((weak)) void criterion_internal_test_main(void (*fn)(void))
{
	static void (*real)(void (*)(void));
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "criterion_internal_test_main");
	if (!real) {
		fprintf(stderr, "memcheck: criterion_internal_test_main not found in "
			"libcriterion: %s\n", dlerror());
		abort();
	}
	mcglue_cr_fn = fn;
	real((void (*)(void))mcglue_cr_wrapper);
	mcglue_cr_at_exit();
}

#endif /* MEMCHECK_CRITERION_H */
