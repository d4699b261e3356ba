/*
 * gslice.c - GLib's slices as blocks: getenv, answering GLib's question
 * about G_SLICE as valgrind's presence does.
 *
 * GLib up to 2.74 carves the objects of its slice allocator (lists,
 * hash tables, GObject instances, whatever a program takes with
 * g_slice_new) out of chunks of a page or more that it takes with
 * posix_memalign, and keeps freed slices in magazines inside the same
 * chunks.  The heap memcheck sees is then the chunks: a slice the
 * program leaks lies in a chunk that the slices still in use keep
 * reachable, what it points to stays reachable through it, and the
 * words a freed slice kept (the chunk is read whole) keep blocks
 * reachable the program dropped (tests/prog/plain_slice29_leak.c:
 * valgrind 3 blocks definitely lost, 1 indirectly; memcheck none).
 * Under valgrind GLib serves each slice with malloc (G_SLICE unset and
 * RUNNING_ON_VALGRIND: always-malloc), so valgrind sees every slice as
 * a block with its caller's stack, and GLib's documentation asks for
 * G_SLICE=always-malloc wherever leaks are looked for.
 *
 * Weighed and not taken:
 * - Interposing g_slice_alloc and g_slice_free1: Debian's GLib is
 *   linked -Bsymbolic-functions, its own 121 calls of g_slice_alloc and
 *   109 of g_slice_free1 (lists, hash tables, GError, GTest's cases)
 *   never reach an interposed name; a slice taken by the program and
 *   given back inside GLib (g_list_free) would be missed either way.
 *   Patching GLib's code at the functions' entries would reach them,
 *   but the chunks' slices taken before the patch (GLib's constructor
 *   makes its quark table) overlap the blocks the scan sorts.
 * - Setting G_SLICE in the environment: the program and its children
 *   would see it (environ, getenv, a test that prints its environment).
 * So GLib alone is told: a getenv("G_SLICE") called from libglib's own
 * code, with no G_SLICE in the environment, in a process whose leaks
 * are scanned, answers "always-malloc", the value valgrind's presence
 * stands for.  The program's own getenv, environ and its children's
 * environment are untouched, and a G_SLICE the user sets (even empty,
 * GLib's way to keep slices under valgrind) is GLib's answer as before.
 *
 * It is not invisible: GLib then allocates each slice with malloc, and
 * the process's memory is that of GLib's malloc path (a million
 * GSList nodes, bare with G_SLICE=always-malloc against bare: peak RSS
 * 22.0 -> 33.8 MB under glibc, 41.6 -> 18.4 under mimalloc; json-glib's
 * tests within 4% either way).  So it is MEMCHECK_GLIB_SLICES's choice:
 * by default (auto) only under valgrind's command line
 * (MEMCHECK_VALGRIND_TEXT), where valgrind itself makes GLib do the
 * same, and wherever the user asks for blocks.  GLib 2.76 and later
 * serve every slice with malloc anyway: nothing changes there.
 *
 * getenv itself is the C library's (2.36, stdlib/getenv.c): the first
 * entry "name=..." of environ, none for an empty name; progname.c's
 * mc_env_value walks environ as fast.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Is the caller at pc GLib's own code (libglib-2.0.so*), in a process
 * whose leaks memcheck scans, with MEMCHECK_GLIB_SLICES for blocks?
 * Asked once or twice a process: GLib reads G_SLICE when its slice
 * allocator starts. */
static __attribute__((noinline, cold)) bool glib_asks(const void *pc)
{
	const char *name = NULL;
	if (!mc_object_base(pc, &name) || !name)
		return false;
	const char *base = strrchr(name, '/');
	if (!mc_str_after(base ? base + 1 : name, "libglib-2.0.so"))
		return false;
	/* GLib's constructor may come first: start-up then runs here */
	mc_resolve_calls();
	if (atomic_load_explicit(&mc_pass, memory_order_acquire) || !mc_is_active ||
	    !mc_opt.track || !mc_opt.scan)
		return false;
	if (mc_opt.glib_slices != MC_SLICES_BLOCKS &&
	    (mc_opt.glib_slices != MC_SLICES_AUTO || mc_opt.valgrind_text == MC_VGTEXT_NONE))
		return false;
	/* where start-up could not read the environment, the constructor
	 * decides later whether the process is left out: decided here */
	return mc_process_verdict() != MC_PROCESS_LEFT_OUT || mc_linked_in();
}

/* Every name but one beginning with 'G' goes on to the walk by a jump
 * (a tail call): no work of memcheck's own, in left-out processes as in
 * measured ones (doc/costs.md env53). */
MC_API char *getenv(const char *name)
{
	if (__builtin_expect(name[0] != 'G', 1))
		return (char *)mc_env_value(name);
	char *v = (char *)mc_env_value(name);
	if (!v && !strcmp(name, "G_SLICE") && glib_asks(__builtin_return_address(0)))
		return (char *)"always-malloc";
	return v;
}
