/*
 * dlclose.c - dlclose, wrapped: each call counted before the dynamic
 * linker begins it (objects.c mc_objects_closing), so that a measured
 * forked child's table of the loaded objects (objects.c) stops
 * answering before any object it holds can be unloaded, with one load
 * at each look-up and no walk of link maps another thread may be
 * freeing.  dlopen needs no wrapper: it unloads nothing, and an object
 * it loads lies outside every range the table holds (each object's
 * range, the gaps between its segments included, stays reserved while
 * it is loaded), so its addresses are not found there and are asked of
 * the dynamic linker.
 *
 * dlclose acts on the handle alone, not on its caller (dlopen's search
 * path and namespace follow the caller's object; dlclose's do not):
 * called from here it does what it does called from the program.  The
 * next definition is asked of the objects after libmemcheck's
 * (elfsym.c), found once: the C library's, or a library preloaded after
 * memcheck that wraps it too.
 */
#include <dlfcn.h>

#include "internal.h"

MC_API int dlclose(void *handle)
{
	static void *real;
	int (*next)(void *) = (int (*)(void *))mc_sym_next_cached("dlclose", &real);
	mc_objects_closing();
	return next ? next(handle) : -1;
}
