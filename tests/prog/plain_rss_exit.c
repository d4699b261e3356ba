/*
 * plain_rss_exit - its peak comes in its exit code: librss_exit.so's
 * destructor, which the dynamic linker runs after a preloaded
 * libmemcheck's, writes 8 MiB and frees them, where main wrote 100 kB.
 * Its own figures on stdout (rss_self.h): at main's end, below that
 * peak by the 8 MiB, and at its very end, with it (tests/test_rss_self.c
 * compares memcheck's peak_rss with the latter).
 */
#include <stdlib.h>
#include <string.h>

#include "rss_self.h"

void rss_exit_set(size_t bytes);

static void *volatile keep;

int main(int argc, char **argv)
{
	(void)argc;
	rss_self_fixed_layout(argv);
	long long start = proc_field("/proc/self/status", "VmRSS:");
	size_t n = 100000;
	char *p = malloc(n);
	if (!p)
		return 1;
	memset(p, 1, n);
	free(p);
	keep = malloc(10);
	free(keep);
	rss_exit_set(8u << 20);
	rss_self_print(start);
	return 0;
}
