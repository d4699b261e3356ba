/*
 * boot.h - the start-up buffer of bench/'s own preloads (null_interpose.c,
 * proto/pagemap.c): dlsym may allocate, so until it returns, calls are
 * served from here and never freed.  One copy per preload (static).
 */
#ifndef BENCH_BOOT_H
#define BENCH_BOOT_H
#include <stddef.h>
#include <stdint.h>

static char boot[8192] __attribute__((aligned(16)));
static size_t boot_used;
static int resolving;

/* One unsigned compare, whichever side of the buffer the allocator's
 * memory lies: two short-circuited compares cost 5.63 instructions a
 * free under glibc (its heap below the buffer) and 2.82 under jemalloc
 * (above it), so the forwarding row's yardstick differed by allocator
 * for the same work (tree41, doc/costs.md). */
static int is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot < sizeof boot;
}

static void *boot_alloc(size_t n)
{
	size_t off = boot_used;
	n = (n + 15) & ~(size_t)15;
	if (n > sizeof boot - off)
		return NULL;
	boot_used += n;
	return boot + off; /* zero: static and never reused */
}
#endif
