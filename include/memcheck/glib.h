/*
 * memcheck/glib.h - glue for GLib's test framework (g_test).
 *
 * Register each test with memcheck's counterpart of GLib's call:
 *
 *     memcheck_g_test_add_func("/core/parse", test_parse);
 *     memcheck_g_test_add("/core/fixture", Fixture, NULL, setup, test, teardown);
 *
 * in place of g_test_add_func() and g_test_add().  Each test function
 * then runs in a region of its own, named after the test's path, and a
 * test that leaves memory behind fails with GLib's own failure
 * (g_test_fail_printf: "not ok" in the TAP stream, the status 1 of
 * g_test_run), the message naming the line that allocated the block.
 *
 * Traps that shaped it:
 * - Preloaded alone, a leaking test still passes its "ok" line: GLib
 *   runs every test in one process, and the process region fails the
 *   whole run at its exit (status 23), naming no test.
 * - The region is the test function alone: a fixture's setup is older
 *   and its teardown later, so what the setup allocates and the teardown
 *   frees is no leak, as cmocka's own check has it.
 * - A test that failed on its own (g_test_set_nonfatal_assertions, or
 *   g_test_fail) keeps that failure: its region is discarded unreported.
 *   One that fails a fatal assertion aborts the process, as without
 *   memcheck.
 * - g_test_trap_subprocess() runs the test again in a child started
 *   from the program's file: the child registers the same tests, and its
 *   test's leak fails the child (status 1), which the parent's
 *   g_test_trap_assert_passed() reports, linked only or preloaded.
 * - g_test_fail_printf() is GLib 2.70's; an older GLib gets
 *   g_test_message() and g_test_fail(), the message a comment line.
 *
 * Link with -lmemcheck and GLib (pkg-config glib-2.0).
 */
#ifndef MEMCHECK_GLIB_H
#define MEMCHECK_GLIB_H

#include <glib.h>

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

/* A test registered through the glue: its functions and data as the
 * program gave them. */
struct mcglue_g_case {
	const char *path;
	GTestFunc func;
	GTestDataFunc data_func;
	GTestFixtureFunc setup, test, teardown;
	gconstpointer data;
};

/* GLib's failure with a message, as the GLib at hand can give it. */
#if GLIB_CHECK_VERSION(2, 70, 0)
#define mcglue_g_fail(...) g_test_fail_printf(__VA_ARGS__)
#else
#define mcglue_g_fail(...) (g_test_message(__VA_ARGS__), g_test_fail())
#endif

/* The region the test ran in, ended: the test fails where it leaked.
 * Called after mcglue_scrub(), from the frame that called the test (the
 * test's dead frames lie under it, and this one's own frame over them
 * is written before the scan). */
__attribute__((noinline)) static void mcglue_g_end(void)
{
	if (g_test_failed()) {
		memcheck_discard(); /* the test's own failure stands */
		return;
	}
	/* GLib reports the failure, and its status is the program's */
	struct mcglue_failure f = { __FILE__, __LINE__, "" };
	if (mcglue_end('"', &f) > 0)
		mcglue_g_fail("%s:%d: %s", f.file, f.line, f.why);
}

static void mcglue_g_run(gconstpointer data)
{
	const struct mcglue_g_case *c = (const struct mcglue_g_case *)data;
	memcheck_begin(c->path);
	if (c->func)
		c->func();
	else
		c->data_func(c->data);
	mcglue_scrub();
	mcglue_g_end();
}

static void mcglue_g_setup(gpointer fixture, gconstpointer data)
{
	const struct mcglue_g_case *c = (const struct mcglue_g_case *)data;
	if (c->setup)
		c->setup(fixture, c->data);
}

static void mcglue_g_test(gpointer fixture, gconstpointer data)
{
	const struct mcglue_g_case *c = (const struct mcglue_g_case *)data;
	memcheck_begin(c->path);
	c->test(fixture, c->data);
	mcglue_scrub();
	mcglue_g_end();
}

static void mcglue_g_teardown(gpointer fixture, gconstpointer data)
{
	const struct mcglue_g_case *c = (const struct mcglue_g_case *)data;
	if (c->teardown)
		c->teardown(fixture, c->data);
}

/* A case record, reachable from GLib's test case: given to GLib with
 * g_free to destroy it where GLib takes a destroy function (GLib 2.74
 * freed a test's record after running it; the records of tests not run,
 * and of fixture tests, stay reachable until the exit). */
static inline struct mcglue_g_case *mcglue_g_case_new(const char *path)
{
	struct mcglue_g_case *c = g_new0(struct mcglue_g_case, 1);
	c->path = g_intern_string(path);
	return c;
}

/* g_test_add_func() with the test under memcheck. */
static inline void memcheck_g_test_add_func(const char *path, GTestFunc func)
{
	struct mcglue_g_case *c = mcglue_g_case_new(path);
	c->func = func;
	g_test_add_data_func_full(path, c, mcglue_g_run, g_free);
}

/* g_test_add_data_func() with the test under memcheck. */
static inline void memcheck_g_test_add_data_func(const char *path, gconstpointer data,
						 GTestDataFunc func)
{
	struct mcglue_g_case *c = mcglue_g_case_new(path);
	c->data_func = func;
	c->data = data;
	g_test_add_data_func_full(path, c, mcglue_g_run, g_free);
}

/* g_test_add_vtable() with the test function under memcheck; the
 * setup and teardown as given, outside its region. */
static inline void memcheck_g_test_add_vtable(const char *path, gsize size, gconstpointer data,
					      GTestFixtureFunc setup, GTestFixtureFunc test,
					      GTestFixtureFunc teardown)
{
	struct mcglue_g_case *c = mcglue_g_case_new(path);
	c->setup = setup;
	c->test = test;
	c->teardown = teardown;
	c->data = data;
	g_test_add_vtable(path, size, c, mcglue_g_setup, mcglue_g_test, mcglue_g_teardown);
}

/* g_test_add() with the test function under memcheck. */
#define memcheck_g_test_add(path, Fixture, tdata, fsetup, ftest, fteardown)                   \
	do {                                                                                 \
		void (*mcglue_setup_)(Fixture *, gconstpointer) = fsetup;                    \
		void (*mcglue_test_)(Fixture *, gconstpointer) = ftest;                      \
		void (*mcglue_teardown_)(Fixture *, gconstpointer) = fteardown;              \
		memcheck_g_test_add_vtable(path, sizeof(Fixture), tdata,                      \
					   (GTestFixtureFunc)(void (*)(void))mcglue_setup_,   \
					   (GTestFixtureFunc)(void (*)(void))mcglue_test_,    \
					   (GTestFixtureFunc)(void (*)(void))mcglue_teardown_); \
	} while (0)

#endif
