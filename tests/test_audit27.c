/*
 * test_audit27.c - what real suites found in session 27 (json-glib 1.8.0
 * under meson, GLib 2.74).
 *
 * A program that makes and frees one GObject failed under memcheck with
 * every allocator, where valgrind says all its blocks are still
 * reachable (tests/prog/plain_audit27_gobject):
 *  - glibc: 90 blocks possibly lost.  GLib tells valgrind, and only
 *    valgrind, where its interior-pointed blocks start (fundamental type
 *    nodes, closures, instances with private data) and serves slices
 *    with malloc under it; bare, those blocks and the slice allocator's
 *    chunks are reached only through pointers into them.  The shipped
 *    glib.supp takes them out (possibly lost only).
 *  - jemalloc, mimalloc, tcmalloc: 3 blocks definitely lost, GLib's
 *    hash tables' arrays, taken for what lies after a buffer's end
 *    (scan.c's end_of_previous; tests/prog/plain_leak_adjacent's set).
 *
 * Session 28: what a program keeps in GLib's slices (GIO's extension
 * points, GTest's cases) was possibly lost, reached only through
 * pointers into the slice allocator's chunks; valgrind, under which GLib
 * serves each slice with malloc, said still reachable.  glib.supp's
 * libmemcheck:Pool entry makes the chunks pools (scan.c's second pass).
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* Passes with nothing lost; where GLib is not installed, nothing to see. */
H_CHECK(gobject_clean)
{
	if (strstr(x->r.out, "no libgobject-2.0.so.0"))
		return;
	ck_assert_msg(strstr(x->r.out, "made and freed a GObject"), "%s: stdout \"%s\"", x->label,
		      x->r.out);
	const char *verdict = h_str(rec, "verdict");
	ck_assert_msg(verdict && !strcmp(verdict, "pass") &&
		      h_count(rec, "definitely_lost", "blocks") == 0 &&
		      h_count(rec, "possibly_lost", "blocks") == 0,
		      "%s: %s, %s blocks definitely lost, %s possibly lost", x->label,
		      verdict ? verdict : "(none)", h_fmt(h_count(rec, "definitely_lost", "blocks")),
		      h_fmt(h_count(rec, "possibly_lost", "blocks")));
}

/* The registry kept in slices is reached through its chunks, pools
 * (glib.supp's libmemcheck:Pool): lost exactly what valgrind says, the
 * one block leaked and the one kept through a pointer into it. */
H_CHECK(registry_as_valgrind)
{
	if (strstr(x->r.out, "no libglib-2.0.so.0"))
		return;
	ck_assert_msg(strstr(x->r.out, "registry kept in slices"), "%s: stdout \"%s\"", x->label,
		      x->r.out);
	static const struct {
		const char *kind;
		uint64_t blocks, bytes;
	} want[] = {
		{ "definitely_lost", 1, 4242 },
		{ "indirectly_lost", 0, 0 },
		{ "possibly_lost", 1, 1111 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint64_t blocks = h_count(rec, want[i].kind, "blocks");
		uint64_t bytes = h_count(rec, want[i].kind, "bytes");
		ck_assert_msg(blocks == want[i].blocks && bytes == want[i].bytes,
			      "%s: %s %s blocks, %s bytes; valgrind %llu, %llu", x->label,
			      want[i].kind, h_fmt(blocks), h_fmt(bytes),
			      (unsigned long long)want[i].blocks, (unsigned long long)want[i].bytes);
	}
}

static const struct h_case cases[] = {
	{ "a GObject made and freed, a GSList kept: GLib's own blocks not lost",
	  .run = { .prog = "plain_audit27_gobject", .flags = H_PRELOAD | H_EXITCODE },
	  .record = "process", .check = gobject_clean },
	{ "a registry kept in GLib slices: reached through the chunks, as under valgrind",
	  .run = { .prog = "plain_slice28_registry", .flags = H_PRELOAD },
	  .record = "process", .check = registry_as_valgrind },
};

int main(void)
{
	TCase *tc = h_tcase("audit27", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
