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
 *
 * Session 29: a slice the program leaked was then invisible (a piece of
 * a chunk other slices keep), what it pointed to still reachable, and
 * a freed slice's old words kept blocks reachable
 * (tests/prog/plain_slice29_leak: valgrind 3 blocks definitely lost, 1
 * indirectly; memcheck none).  With MEMCHECK_GLIB_SLICES=blocks (the
 * default under valgrind's command line) GLib's own question about
 * G_SLICE is answered always-malloc, as valgrind's presence answers it
 * (lib/gslice.c): each slice a block, the program's environment as it
 * was, a G_SLICE the user sets GLib's answer.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
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

/* Rows about GLib's slices need GLib; where it is not installed the
 * programs say so and exit 0, and the row is skipped. */
static bool have_glib(struct h_spec *run, const struct h_case *c)
{
	(void)run;
	void *h = dlopen("libglib-2.0.so.0", RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		printf("%s: skipped, no libglib-2.0.so.0\n", c->name);
		return false;
	}
	dlclose(h);
	return true;
}

#define LOST(kind, blocks, bytes) { kind ".blocks", blocks }, { kind ".bytes", bytes }
/* plain_slice29_leak's kinds under valgrind (each slice a block), and
 * where GLib keeps its chunks (none seen) */
#define SLICES_AS_VALGRIND                                                             \
	{ LOST("definitely_lost", 3, 4128), LOST("indirectly_lost", 1, 300),         \
	  LOST("possibly_lost", 0, 0) }
/* the same without the C library's freeres (valgrind's
 * --run-libc-freeres=no): possibly lost not compared, where
 * _dl_find_object's table segment, which the shipped glibc.supp no
 * longer takes then, is possibly lost under glibc (2,304 bytes, as
 * valgrind says) and still reachable under mimalloc, jemalloc and
 * tcmalloc, whose malloc returns it 64-byte aligned: the table's
 * pointer is to its start */
#define SLICES_AS_VALGRIND_NO_FREERES                                                  \
	{ LOST("definitely_lost", 3, 4128), LOST("indirectly_lost", 1, 300) }
#define SLICES_UNSEEN                                                                  \
	{ LOST("definitely_lost", 0, 0), LOST("indirectly_lost", 0, 0),               \
	  LOST("possibly_lost", 0, 0) }

static const struct h_case cases[] = {
	{ "a GObject made and freed, a GSList kept: GLib's own blocks not lost",
	  .run = { .prog = "plain_audit27_gobject", .flags = H_PRELOAD | H_EXITCODE },
	  .record = "process", .check = gobject_clean },
	/* the registry reached, lost exactly what valgrind says: the one
	 * block leaked and the one kept through a pointer into it */
	{ "a registry kept in GLib slices: reached, as under valgrind",
	  .run = { .prog = "plain_slice28_registry", .flags = H_PRELOAD }, .setup = have_glib,
	  .out = H_LIST("registry kept in slices"),
	  .want = { LOST("definitely_lost", 1, 4242), LOST("indirectly_lost", 0, 0),
		    LOST("possibly_lost", 1, 1111) } },
	/* valgrind's kinds, and the program's own getenv sees no G_SLICE */
	{ "slices leaked, one holding a block, one freed over a pointer: blocks, as valgrind",
	  .run = { .prog = "plain_slice29_leak", .flags = H_PRELOAD,
		   .env = H_LIST("MEMCHECK_GLIB_SLICES=blocks") },
	  .setup = have_glib, .out = H_LIST("slices leaked, G_SLICE unset\n"),
	  .want = SLICES_AS_VALGRIND },
	/* auto: blocks under valgrind's command line, as valgrind.  Without
	 * the C library's freeres: under jemalloc and tcmalloc it leaves the
	 * link map of a dlopen'd GLib definitely lost (1,241 bytes, its
	 * clique 2,018 more; valgrind: not lost), with chunks as well */
	{ "slices leaked, under valgrind's command line: blocks by default",
	  .run = { .prog = "plain_slice29_leak", .flags = H_PRELOAD,
		   .env = H_LIST("MEMCHECK_VALGRIND_TEXT=summary", "MEMCHECK_VALGRIND_FREERES=none") },
	  .setup = have_glib, .out = H_LIST("slices leaked, G_SLICE unset\n"),
	  .want = SLICES_AS_VALGRIND_NO_FREERES },
	/* auto elsewhere, and G_SLICE set empty by the user (GLib's own way
	 * to keep its slices under valgrind) even with blocks asked for:
	 * GLib keeps its chunks as bare, the slices' leaks unseen */
	{ "slices leaked, memcheck's defaults: GLib's chunks as bare",
	  .run = { .prog = "plain_slice29_leak", .flags = H_PRELOAD }, .setup = have_glib,
	  .out = H_LIST("slices leaked, G_SLICE unset\n"),
	  .want = SLICES_UNSEEN },
	/* session 53 (env53): getenv a walk of memcheck's own at the C
	 * library's speed; every answer the C library's own pointer, errno
	 * kept, setenv/putenv/clearenv and an environ of the program's own
	 * seen, measured, left out, and where G_SLICE is answered for GLib */
	{ "getenv answers as the C library's: measured",
	  .run = { .prog = "plain_getenv53", .flags = H_PRELOAD },
	  .out = H_LIST("getenv agrees on "), .record = "process" },
	{ "getenv answers as the C library's: left out",
	  .run = { .prog = "plain_getenv53", .flags = H_PRELOAD,
		   .env = H_LIST("MEMCHECK_PROGRAMS=plain_leak_direct") },
	  .out = H_LIST("getenv agrees on "), .records = H_NO_RECORDS },
	{ "getenv answers as the C library's: GLib's slices as blocks",
	  .run = { .prog = "plain_getenv53", .flags = H_PRELOAD,
		   .env = H_LIST("MEMCHECK_GLIB_SLICES=blocks", "MEMCHECK_VALGRIND_TEXT=summary") },
	  .out = H_LIST("getenv agrees on "), .record = "process" },
	{ "G_SLICE set empty by the user: GLib keeps its chunks",
	  .run = { .prog = "plain_slice29_leak", .flags = H_PRELOAD,
		   .env = H_LIST("G_SLICE=", "MEMCHECK_GLIB_SLICES=blocks") },
	  .setup = have_glib, .out = H_LIST("slices leaked, G_SLICE \n"),
	  .want = SLICES_UNSEEN },
};

int main(void)
{
	TCase *tc = h_tcase("audit27", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
