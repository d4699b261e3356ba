/*
 * regions_dlswap.c - a region a library: for each library named on the
 * command line, dlopen it, begin a region, allocate 64 KiB in it (its
 * function swap_make) and free it (the region's peak names the
 * library's frame), end the region, dlclose it.  Libraries of one size
 * (tests/prog/shim/swap_make.c) are mapped at the address the one
 * closed before left: the table of which file each mapping is, kept
 * from one region's end to the next (lib/elfmod.c), must be read again
 * once an object is loaded or unloaded, or the second region's frame is
 * named after the first library's file.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <memcheck/memcheck.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW);
		void *(*make)(size_t) = h ? (void *(*)(size_t))dlsym(h, "swap_make") : NULL;
		if (!make) {
			fprintf(stderr, "%s: %s\n", argv[i], dlerror());
			return 1;
		}
		memcheck_begin("swap");
		void *p = make(64 << 10);
		free(p);
		memcheck_end(NULL);
		dlclose(h);
	}
	return 0;
}
