/*
 * ownheap_free.c - the program frees and reallocates blocks that
 * memcheck's own work made (lib/ownheap.c).  A region that leaks makes
 * memcheck name the leak's file and line, for which it loads libdw with
 * dlopen, its guard held: the dynamic linker's lists of that load come
 * from memcheck's own heap.  Opening libz (one of libdw's libraries)
 * RTLD_GLOBAL afterwards makes the dynamic linker grow the global scope
 * it made then, in the program's call: a realloc and a free of blocks
 * the allocator never handed out, which memcheck must take back itself,
 * without a heap error and without passing them to the allocator.
 *
 * usage: ownheap_free   (exit status 0; the region's leak is handled)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

static char *kept;

int main(void)
{
	memcheck_begin("leaky");
	kept = strdup("lost");
	kept = NULL;
	memcheck_end(NULL);
	memcheck_handled();
	void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!z) {
		fprintf(stderr, "ownheap_free: %s\n", dlerror());
		return 1;
	}
	dlclose(z);
	puts("done");
	return 0;
}
