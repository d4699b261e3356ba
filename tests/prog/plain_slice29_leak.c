/* Slices leaked, as a program leaks them: a list entry of GLib's slice
 * allocator dropped with no pointer left (definitely lost), one holding
 * the only pointer to a malloc'd name (the entry definitely lost, the
 * name indirectly), and a freed slice whose old words still point at a
 * block the program then drops (definitely lost: freed memory is not
 * read).  Beside them a registry of live entries in slices of the same
 * size, which keeps their chunks in use.  GLib loaded by dlopen, as in
 * plain_slice28_registry.c; without it this says so and exits 0.
 *
 * valgrind 3.19, GLib 2.74 (which under it serves each slice with
 * malloc): definitely lost 3 blocks, 4,128 bytes (the two entries, 32
 * bytes, and the block behind the freed slice, 4,096); indirectly lost 1
 * block, 300 bytes; possibly lost none.  Bare, the slices are pieces of
 * chunks the registry keeps: memcheck of session 28 found none of it
 * (tests/test_audit27.c).  It prints what its own getenv says of
 * G_SLICE: memcheck answers GLib alone (lib/gslice.c). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *name;
	void *impl;
};

void *registry; /* a GSList of struct entry, both in slices */
void *volatile kept; /* the block behind the freed slice, until dropped */

static void *(*slice_alloc0)(size_t);
static void (*slice_free1)(size_t, void *);

/* Made and dropped out of line, so that no register keeps them. */
__attribute__((noinline)) static void leak_slices(void)
{
	struct entry *volatile e = slice_alloc0(sizeof *e);
	e = NULL;
	struct entry *volatile n = slice_alloc0(sizeof *n);
	n->name = malloc(300);
	n = NULL;
}

/* The slice's first two words become the slice allocator's links when
 * it is freed; its last stays as it was. */
struct wide {
	void *w[3];
	void *impl;
};

__attribute__((noinline)) static void free_slice_keeping_pointer(void)
{
	struct wide *e = slice_alloc0(sizeof *e);
	e->impl = malloc(4096);
	kept = e->impl;
	slice_free1(sizeof *e, e); /* e->impl's word stays in the chunk */
	kept = NULL;
}

int main(void)
{
	void *h = dlopen("libglib-2.0.so.0", RTLD_NOW);
	if (!h) {
		puts("no libglib-2.0.so.0");
		return 0;
	}
	slice_alloc0 = (void *(*)(size_t))dlsym(h, "g_slice_alloc0");
	slice_free1 = (void (*)(size_t, void *))dlsym(h, "g_slice_free1");
	void *(*prepend)(void *, void *) = (void *(*)(void *, void *))dlsym(h, "g_slist_prepend");
	if (!slice_alloc0 || !slice_free1 || !prepend) {
		puts("no GLib functions");
		return 1;
	}
	for (int i = 0; i < 8; i++) {
		struct entry *e = slice_alloc0(sizeof *e);
		e->name = strdup("entry");
		registry = prepend(registry, e);
	}
	leak_slices();
	free_slice_keeping_pointer();
	for (int i = 0; i < 8; i++) { /* after the leaks, in the same chunks */
		struct entry *e = slice_alloc0(sizeof *e);
		registry = prepend(registry, e);
		registry = prepend(registry, slice_alloc0(sizeof(struct wide)));
	}
	const char *g = getenv("G_SLICE");
	printf("slices leaked, G_SLICE %s\n", g ? g : "unset");
	return 0;
}
