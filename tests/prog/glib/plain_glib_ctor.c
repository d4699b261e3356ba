/*
 * plain_glib_ctor.c - a GObject program, for tests/test_trial_aliases.c:
 * GObject's constructor (run by the dynamic loader before main) registers
 * its fundamental types in blocks that stay reachable for the process's
 * life, each with a stack that ends in the loader's start-up code: its
 * call_init, _dl_init, then _dl_start_user, an assembly label of no size
 * and no type.  valgrind names that last frame "???" (it never names
 * code by such a symbol); libdw, and memcheck before session 46, by the
 * label.  The program also loses one block (a g_strdup'd string), so
 * that its verdict is a leak's.
 */
#include <glib-object.h>
#include <stdio.h>

static char *volatile sink;

int main(void)
{
	GObject *o = g_object_new(G_TYPE_OBJECT, NULL);
	g_object_unref(o);
	sink = g_strdup("lost");
	sink = NULL;
	printf("ok\n");
	return 0;
}
