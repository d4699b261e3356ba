/* A GObject made and freed, and a one-element GSList kept in a global,
 * with GLib loaded by dlopen so that memcheck's tests need no GLib to
 * build (Debian ships libglib2.0-0 on most systems; without it this
 * says so and exits 0).  valgrind: every block left still reachable,
 * none lost (GLib tells valgrind where its interior-pointed blocks
 * start, and serves slices with malloc under it).  Under memcheck, with
 * the shipped glib.supp, the process must pass under all four
 * allocators: it failed under each (tests/test_audit27.c). */
#include <dlfcn.h>
#include <stdio.h>

typedef unsigned long gtype;

void *kept; /* a GSList slice: reached through a pointer into its chunk */

int main(void)
{
	void *h = dlopen("libgobject-2.0.so.0", RTLD_NOW);
	if (!h) {
		puts("no libgobject-2.0.so.0");
		return 0;
	}
	gtype (*object_type)(void) = (gtype(*)(void))dlsym(h, "g_object_get_type");
	void *(*object_new)(gtype, const char *, ...) =
		(void *(*)(gtype, const char *, ...))dlsym(h, "g_object_new");
	void (*unref)(void *) = (void (*)(void *))dlsym(h, "g_object_unref");
	void *(*prepend)(void *, void *) = (void *(*)(void *, void *))dlsym(h, "g_slist_prepend");
	if (!object_type || !object_new || !unref || !prepend) {
		puts("no GObject functions");
		return 1;
	}
	unref(object_new(object_type(), NULL));
	kept = prepend(NULL, &kept);
	puts("made and freed a GObject");
	return 0;
}
