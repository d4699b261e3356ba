/*
 * plain_scan_untouched.c - a region's end reads no page of a large block
 * that the program never wrote (scan.c's scan_sparse: test_leakkinds,
 * each allocator).  A 1 MiB block is allocated and kept in a global,
 * never written, as libstdc++ keeps its emergency pool for exceptions;
 * a region then leaves a small block still reachable, so that its end
 * scans the heap, the large block with it, and a second small block
 * whose only pointer lies in the one page of the large block that the
 * program writes, half way into it: read, that page keeps it still
 * reachable, not definitely lost.  Bare, no other of the large block's
 * pages past the first two is in memory (the allocator's header and
 * memcheck's scrub, which reads the page a block starts in, touch the
 * first); a scan that read them all mapped the zero page at each, a
 * page fault each, and mincore then calls them resident.  Not linked
 * to memcheck: memcheck_begin and memcheck_end through dlsym.
 * Prints "ok" when the region lost nothing and no page but the written
 * one is in memory after the region's end, else what differs; "ok" too
 * where the system has swap (the scan then reads every page: a page
 * written and swapped out is not in memory either) or memcheck is
 * absent.  Exits 0.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

#define SIZE (1u << 20)

static char *big;
static void *small;

int main(void)
{
	void (*begin)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memcheck_begin");
	int (*end)(struct memcheck_result *) =
		(int (*)(struct memcheck_result *))dlsym(RTLD_DEFAULT, "memcheck_end");
	struct sysinfo si;
	big = malloc(SIZE);
	if (!big)
		return 1;
	if (!begin || !end || (sysinfo(&si) == 0 && si.totalswap > 0)) {
		puts("ok");
		return 0;
	}
	begin("untouched");
	small = malloc(16);
	/* (not at the page's start: a pointer found there has the words
	 * before it read, the allocator's marks of a freed block's end
	 * looked for, which would map the page before) */
	void **half = (void **)(big + SIZE / 2 + 256);
	*half = malloc(24);
	struct memcheck_result r;
	end(&r);
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)big + 2 * (uintptr_t)page) & ~((uintptr_t)page - 1);
	uintptr_t hi = ((uintptr_t)big + SIZE - (uintptr_t)page) & ~((uintptr_t)page - 1);
	uintptr_t written = (uintptr_t)half & ~((uintptr_t)page - 1);
	size_t n = (hi - lo) / (size_t)page, in = 0;
	unsigned char vec[SIZE / 4096];
	if (n > sizeof vec || mincore((void *)lo, hi - lo, vec) != 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		in += (vec[i] & 1) && lo + i * (uintptr_t)page != written;
	if (in == 0 && r.definitely_lost.blocks == 0)
		puts("ok");
	else
		printf("%zu of the block's %zu pages in memory after the region's end, "
		       "%llu blocks definitely lost\n", in, n - 1,
		       (unsigned long long)r.definitely_lost.blocks);
	free(*half);
	free(small);
	free(big);
	return 0;
}
