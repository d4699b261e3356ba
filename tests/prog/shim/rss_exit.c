/* A library whose destructor writes a block the program asked for and
 * frees it (tests/test_rss_self.c's "exit code" row): the memory a
 * library's exit code uses, as libstdc++'s, GLib's and the allocators'
 * destructors do on a smaller scale.  The program links it, so the
 * dynamic linker finalizes it after a preloaded libmemcheck, whose
 * destructor took the figures before it ran. */
#include <stdlib.h>
#include <string.h>

static size_t exit_bytes;

void rss_exit_set(size_t bytes)
{
	exit_bytes = bytes;
}

__attribute__((destructor)) static void rss_exit_fini(void)
{
	char *p = exit_bytes ? malloc(exit_bytes) : NULL;
	if (!p)
		return;
	memset(p, 1, exit_bytes);
	free(p);
}
