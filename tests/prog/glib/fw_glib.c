/*
 * fw_glib.c - a GLib test program under memcheck/glib.h
 * (tests/test_frameworks.c): one test clean, one that leaks a block
 * copy_of() allocates, one that leaks and then fails on its own
 * (non-fatal assertions), a clean one whose fixture's setup allocates
 * what its teardown frees, one that leaks in a fixture, and two that run
 * in a child of g_test_trap_subprocess(), one of them leaking there.
 * copy_of() is fw_site.h's, whose line marked SITE is where the leak's
 * failure must point.
 * FW_GLIB_CLEAN=1 registers the clean tests only.
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/glib.h>

#include "../fw_site.h"

static void clean(void)
{
	free(copy_of("clean"));
	g_free(g_strdup_printf("%d", 42));
}

static void leaks(void)
{
	g_assert_nonnull(copy_of("a block this test never frees"));
}

static void leaks_and_fails(void)
{
	char *p = copy_of("leaks and fails");
	g_assert_null(p);
}

typedef struct {
	char *buf;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data)
{
	(void)data;
	f->buf = g_malloc(64);
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
	(void)data;
	g_free(f->buf);
}

static void with_fixture(Fixture *f, gconstpointer data)
{
	g_assert_cmpstr(data, ==, "data");
	strcpy(f->buf, "fixture");
	free(copy_of(f->buf));
}

static void fixture_leaks(Fixture *f, gconstpointer data)
{
	(void)data;
	strcpy(f->buf, "fixture");
	g_assert_nonnull(copy_of(f->buf));
}

/* The test itself runs in a child; the parent asks that it passed. */
static void in_child(gconstpointer data)
{
	if (g_test_subprocess()) {
		char *p = copy_of("child");
		if (!data)
			free(p);
		return;
	}
	g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
	g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	memcheck_g_test_add_func("/core/clean", clean);
	memcheck_g_test_add("/fixture/clean", Fixture, "data", fixture_setup, with_fixture,
			    fixture_teardown);
	memcheck_g_test_add_data_func("/trap/clean", NULL, in_child);
	if (!getenv("FW_GLIB_CLEAN")) {
		memcheck_g_test_add_func("/core/leaks", leaks);
		memcheck_g_test_add_func("/core/leaks_and_fails", leaks_and_fails);
		memcheck_g_test_add("/fixture/leaks", Fixture, NULL, fixture_setup, fixture_leaks,
				    fixture_teardown);
		memcheck_g_test_add_data_func("/trap/leaks", "leak", in_child);
	}
	return g_test_run();
}
