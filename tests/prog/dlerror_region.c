/*
 * dlerror_region - a failed dlopen's error pending across memcheck_end:
 * a region that leaks a block ends (its scan and the report's names call
 * into the dynamic linker) between the program's failed dlopen and its
 * dlerror(), which must still return the program's message, as it does
 * without memcheck.  Prints "kept" (or what dlerror returned instead),
 * exits 0; the region's leak makes memcheck_end return non-zero, which
 * is not this program's concern.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

static void *volatile sink;

__attribute__((noinline)) static void leak(void)
{
	sink = malloc(24);
	sink = NULL;
}

int main(void)
{
	memcheck_begin("dlerror");
	leak();
	if (dlopen("/nonexistent/dlerror_region.so", RTLD_LAZY))
		return 1;
	memcheck_end(NULL);
	const char *e = dlerror();
	puts(!e ? "none" : strstr(e, "dlerror_region.so") ? "kept" : e);
	return 0;
}
