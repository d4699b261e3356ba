/*
 * null_interpose.c - the floor under any interposing design: a preloaded
 * malloc, calloc, realloc and free that only forward to the next
 * allocator, counting nothing.  run.sh times it next to memcheck's count
 * mode, so the table shows how much of that mode's cost is the forwarding
 * itself (an extra call and an indirect call each way) and how much is
 * memcheck's own.  Not a tool: the rest of the family is left to the
 * allocator, which is fine for malloc_bench and nothing else.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

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

__attribute__((constructor)) static void init(void)
{
	if (!next_free)
		resolve();
}

EXPORT void *malloc(size_t n)
{
	if (__builtin_expect(!next_malloc, 0)) {
		if (resolving)
			return boot_alloc(n);
		resolve();
	}
	return next_malloc(n);
}

EXPORT void *calloc(size_t a, size_t b)
{
	if (__builtin_expect(!next_calloc, 0)) {
		if (resolving)
			return a && b > sizeof boot / a ? NULL : boot_alloc(a * b);
		resolve();
	}
	return next_calloc(a, b);
}

EXPORT void *realloc(void *p, size_t n)
{
	if (__builtin_expect(is_boot(p), 0)) {
		size_t have = (size_t)(boot + sizeof boot - (char *)p);
		void *q = malloc(n);
		if (q)
			memcpy(q, p, n < have ? n : have);
		return q;
	}
	if (__builtin_expect(!next_realloc, 0))
		resolve();
	return next_realloc(p, n);
}

EXPORT void free(void *p)
{
	if (!p || __builtin_expect(is_boot(p), 0))
		return;
	if (__builtin_expect(!next_free, 0))
		resolve();
	next_free(p);
}
