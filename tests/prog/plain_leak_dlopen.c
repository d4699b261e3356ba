/* An object loaded with dlopen and never closed, its handle forgotten,
 * and one block lost beside it.  ld.so keeps the object's map (a block:
 * ld.so's malloc is the program's once it runs) on its chain of maps,
 * from the map loaded last at the start, which lies in pages ld.so
 * mapped for itself before any allocator ran: valgrind reads them, and
 * the map, its names and lists are still reachable.  Where that last
 * map is not ld.so's own (in its data) but one of the libraries an
 * allocator preloaded brings (libstdc++ and libgcc_s under jemalloc and
 * tcmalloc), memcheck said the map definitely lost (lib/roots.c,
 * startup_maps).  libutil.so.1, a stub of the C library since glibc
 * 2.34, is one nothing else here loads; the program says if it failed.
 *
 * usage: plain_leak_dlopen [LIBRARY]   another object to load instead:
 *        libidn2.so.0 loads a dependency too (libunistring), whose map
 *        and names glibc.supp's dlopen-deps entry took for the opened
 *        object's dependency list (suppressed by memcheck, still
 *        reachable to valgrind); exit 77 where LIBRARY is not there. */
#include <dlfcn.h>
#include <unistd.h>

#include "plain_leak_common.h"

__attribute__((noinline)) static void lose(void)
{
	char *volatile lost = malloc(48);
	memset(lost, 0, 48);
}

int main(int argc, char **argv)
{
	void *volatile h = dlopen(argc > 1 ? argv[1] : "libutil.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		write(2, "plain_leak_dlopen: dlopen failed\n", 33);
		return argc > 1 ? 77 : 1;
	}
	h = NULL;
	lose();
	scrub();
	return 0;
}
