/*
 * null_interpose.c - the floor under any interposing design: a preloaded
 * malloc, calloc, realloc and free that only forward to the next
 * allocator, counting nothing.  run.sh times it next to memcheck's count
 * mode, so the table shows how much of that mode's cost is the forwarding
 * itself (an extra call and an indirect call each way) and how much is
 * memcheck's own.  Not a tool: the rest of the family is left to the
 * allocator, which is fine for malloc_bench and nothing else.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#include "next.h" /* next_*, resolve, boot.h's buffer */

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
	if (__builtin_expect(is_boot(p), 0))
		return boot_realloc(p, n);
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
