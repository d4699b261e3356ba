/* A registry kept in GLib slices, as GIO keeps its extension points and
 * GTest its cases: a global list (slices) of entries (slices) whose
 * names are malloc'd, with GLib loaded by dlopen so that memcheck's tests
 * need no GLib to build (without it this says so and exits 0).  Beside
 * it, one block really leaked (definitely lost, 4,242 bytes) and one
 * kept only through a pointer into its middle (possibly lost, 1,111
 * bytes), both stored in a slice too: the pool must not hide them.
 *
 * valgrind, under which GLib 2.74 serves each slice with malloc: the
 * registry still reachable, exactly those two lost.  Bare, a slice is a
 * piece of a chunk GLib took with posix_memalign, and the only pointers
 * to the chunk point into it: without glib.supp's libmemcheck:Pool
 * entry the registry's names were possibly lost (tests/test_audit27.c). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *name;
	void *impl;
};

void *registry; /* a GSList of struct entry, both in slices */

/* Stored and dropped out of line, so that no register keeps it. */
__attribute__((noinline)) static void leak_into(struct entry *e)
{
	void *volatile *slot = &e->impl;
	*slot = malloc(4242);
	*slot = NULL;
}

int main(void)
{
	void *h = dlopen("libglib-2.0.so.0", RTLD_NOW);
	if (!h) {
		puts("no libglib-2.0.so.0");
		return 0;
	}
	void *(*slice_alloc0)(size_t) = (void *(*)(size_t))dlsym(h, "g_slice_alloc0");
	void *(*prepend)(void *, void *) = (void *(*)(void *, void *))dlsym(h, "g_slist_prepend");
	if (!slice_alloc0 || !prepend) {
		puts("no GLib functions");
		return 1;
	}
	for (int i = 0; i < 40; i++) {
		struct entry *e = slice_alloc0(sizeof *e);
		char name[32];
		snprintf(name, sizeof name, "extension-%d", i);
		e->name = strdup(name);
		e->impl = malloc(48 + (size_t)i);
		registry = prepend(registry, e);
	}
	struct entry *odd = slice_alloc0(sizeof *odd);
	odd->name = (char *)malloc(1111) + 100; /* interior: possibly lost */
	leak_into(odd);                         /* definitely lost */
	registry = prepend(registry, odd);
	puts("registry kept in slices");
	return 0;
}
