/*
 * next.h - the next object's malloc, calloc, realloc and free, for
 * bench/'s forwarding preloads (null_interpose.c, floor_interpose.c):
 * looked up once, with boot.h's buffer serving dlsym's own allocations
 * meanwhile.  One copy per preload (static).
 */
#ifndef BENCH_NEXT_H
#define BENCH_NEXT_H
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);

#include "boot.h" /* boot, is_boot, boot_alloc, resolving */

static void resolve(void)
{
	resolving = 1;
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	resolving = 0;
}

/* realloc of a block from boot's buffer: copied into one of the
 * program's (its size is not kept: as much as can be read). */
static void *boot_realloc(void *p, size_t n)
{
	size_t have = (size_t)(boot + sizeof boot - (char *)p);
	void *q = malloc(n);
	if (q)
		memcpy(q, p, n < have ? n : have);
	return q;
}
#endif
