/*
 * plain_unseen_free.c - frees that memcheck does not see (test_pictures.c's
 * timeline).  200,000 times: malloc(1000), then the block freed through
 * the allocator's own call, which memcheck does not wrap (mimalloc's
 * mi_free, jemalloc's dallocx, tcmalloc's tc_free, the C library's
 * __libc_free under glibc's malloc).  The allocator hands the same
 * addresses out again, and memcheck counts each such block freed when
 * its address comes back: the live bytes memcheck sees never go down.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	/* the allocator's own first: the C library's __libc_free is
	 * there under every allocator, but frees only its own heap's */
	static const char *const names[] = { "mi_free", "tc_free", "__libc_free" };
	void (*dalloc)(void *, int) = (void (*)(void *, int))dlsym(RTLD_DEFAULT, "dallocx");
	void (*unseen)(void *) = NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0] && !unseen && !dalloc; i++)
		unseen = (void (*)(void *))dlsym(RTLD_DEFAULT, names[i]);
	if (!dalloc && !unseen) {
		fprintf(stderr, "no free of the allocator's own\n");
		return 2;
	}
	for (int i = 0; i < 200000; i++) {
		void *p = malloc(1000);
		if (dalloc)
			dalloc(p, 0);
		else
			unseen(p);
	}
	return 0;
}
