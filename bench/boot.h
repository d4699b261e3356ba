/*
 * boot.h - the start-up buffer of bench/'s own preloads (null_interpose.c,
 * proto/pagemap.c): dlsym may allocate, so until it returns, calls are
 * served from here and never freed.  One copy per preload (static).
 */
#ifndef BENCH_BOOT_H
#define BENCH_BOOT_H
#include <stddef.h>

static char boot[8192] __attribute__((aligned(16)));
static size_t boot_used;
static int resolving;

static int is_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
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
