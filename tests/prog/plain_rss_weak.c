/*
 * plain_rss_weak.c - a program that is not linked with memcheck but calls
 * its API through weak references, when memcheck is preloaded: region
 * "big" allocates 100 MiB, writes every page and frees it (as
 * tests/prog/rss_touch.c's "big"), and the program prints, after the
 * region, "big rss_begin=N rss_end=N peak_rss=N" (N a number or
 * "unknown") from memcheck_end's structure.  Before anything else it
 * writes "main" to standard output, unbuffered: a trace of its system
 * calls then shows what memcheck read before the program ran.
 * Exit status 3 when memcheck is not there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

#pragma weak memcheck_begin
#pragma weak memcheck_end

#define TOUCH (100 * 1024 * 1024)

static const char *fig(uint64_t v, char buf[32])
{
	if (v == MEMCHECK_UNKNOWN)
		return "unknown";
	snprintf(buf, 32, "%llu", (unsigned long long)v);
	return buf;
}

int main(void)
{
	if (write(1, "main\n", 5) != 5)
		return 1;
	if (!memcheck_begin || !memcheck_end)
		return 3;
	static struct memcheck_result r;
	memcheck_begin("big");
	char *p = malloc(TOUCH);
	if (!p)
		return 2;
	memset(p, 1, TOUCH);
	free(p);
	if (memcheck_end(&r) < 0)
		return 1;
	char b[32], e[32], k[32];
	printf("big rss_begin=%s rss_end=%s peak_rss=%s\n", fig(r.rss_begin, b), fig(r.rss_end, e),
	       fig(r.peak_rss, k));
	return 0;
}
