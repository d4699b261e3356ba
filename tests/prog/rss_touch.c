/*
 * rss_touch.c - regions that make the resident set grow by a known
 * amount: 100 MiB allocated and every page of it written (-fno-builtin
 * keeps the memset), so the pages are really there, then freed inside
 * the region so that the region is clean.  Prints, once every region has
 * ended (stdio's buffer would otherwise be allocated inside one), a line
 * per region: "NAME rss_begin=N rss_end=N peak_rss=N" (N a number or
 * "unknown").
 *
 * usage: rss_touch CASE
 *   big:    region "big", one 100 MiB block
 *   small:  region "small", 25,600 blocks of 4 KiB
 *   nested: region "outer" around region "inner" (one 100 MiB block),
 *           the outer region then allocating a little more on its own
 *   nested_before: region "outer" touches one 100 MiB block and frees
 *           it, then runs region "inner", which allocates a little
 * Exit status 1 when a region did not end as expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

#define MiB (1024 * 1024)
#define TOUCH (100 * MiB)
/* 4 KiB is a size class of every allocator here, without padding (a
 * 64 KiB block costs jemalloc 68 KiB: its large blocks get a page for
 * cache-oblivious placement, and 100 MiB of them grow RSS by 107). */
#define SMALL 4096

static struct memcheck_result res[4];
static int nres;

static void end(void)
{
	if (memcheck_end(&res[nres++]) < 0)
		exit(1);
}

/* One block, every page written, then freed. */
static void touch_big(void)
{
	char *p = malloc(TOUCH);
	if (!p)
		exit(2);
	memset(p, 1, TOUCH);
	free(p);
}

static void touch_small(void)
{
	static char *p[TOUCH / SMALL];
	for (size_t i = 0; i < TOUCH / SMALL; i++) {
		if (!(p[i] = malloc(SMALL)))
			exit(2);
		memset(p[i], 1, SMALL);
	}
	for (size_t i = 0; i < TOUCH / SMALL; i++)
		free(p[i]);
}

static const char *fig(uint64_t v, char buf[32])
{
	if (v == MEMCHECK_UNKNOWN)
		return "unknown";
	snprintf(buf, 32, "%llu", (unsigned long long)v);
	return buf;
}

int main(int argc, char **argv)
{
	const char *kase = argc > 1 ? argv[1] : "big";
	if (strcmp(kase, "big") == 0) {
		memcheck_begin("big");
		touch_big();
		end();
	} else if (strcmp(kase, "small") == 0) {
		memcheck_begin("small");
		touch_small();
		end();
	} else if (strcmp(kase, "nested") == 0) {
		memcheck_begin("outer");
		memcheck_begin("inner");
		touch_big();
		end();
		/* The outer region's own work after the inner one ended,
		 * well below the inner peak. */
		free(malloc(MiB));
		end();
	} else if (strcmp(kase, "nested_before") == 0) {
		memcheck_begin("outer");
		touch_big();
		memcheck_begin("inner");
		free(malloc(MiB));
		end();
		end();
	} else {
		fprintf(stderr, "rss_touch: unknown case %s\n", kase);
		return 2;
	}
	for (int i = 0; i < nres; i++) {
		char a[32], b[32], c[32];
		printf("%s rss_begin=%s rss_end=%s peak_rss=%s\n", res[i].name,
		       fig(res[i].rss_begin, a), fig(res[i].rss_end, b), fig(res[i].peak_rss, c));
	}
	return 0;
}
