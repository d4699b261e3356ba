/* Blocks kept only by a pointer past their start, in the four shapes
 * valgrind's interior-pointer heuristics take as reachable (its default,
 * --leak-check-heuristics=all): a copy-on-write string's characters
 * (stdstring), 8 bytes past a length (length64, SQLite's blocks), one word
 * past a count of elements (newarray, C++'s new[]), a second base's part
 * of an object whose start and that part both hold vtable addresses
 * (multipleinheritance).  Written in C with the same layouts, which is
 * all either tool sees.  One block kept 8 bytes in without any of these
 * shapes stays possibly lost.  memcheck called the four possibly lost
 * too before it applied the heuristics (lib/heuristics.c). */
#include "plain_leak_common.h"

#include <stdint.h>

static void first(void) {}
static void second(void) {}
/* two "vtables": read-only tables of code addresses */
static void (*const vtable_a[])(void) = { first, second };
static void (*const vtable_b[])(void) = { second, first };

struct kept {
	char *string;   /* stdstring */
	char *sized;    /* length64 */
	char *array;    /* newarray */
	char *base;     /* multipleinheritance */
	char *plain;    /* none of them: possibly lost */
};
struct kept kept;

__attribute__((noinline)) static void keep(void)
{
	/* length, capacity, count, then capacity + 1 bytes */
	uintptr_t *s = malloc(3 * sizeof(uintptr_t) + 40 + 1);
	s[0] = 11;
	s[1] = 40;
	s[2] = 0;
	memcpy(s + 3, "hello world", 12);
	kept.string = (char *)(s + 3);

	uint64_t *z = malloc(8 + 120);
	z[0] = 120;
	memset(z + 1, 0, 120);
	kept.sized = (char *)(z + 1);

	size_t *a = malloc(sizeof(size_t) + 6 * 16); /* six 16-byte elements */
	a[0] = 6;
	memset(a + 1, 0, 6 * 16);
	kept.array = (char *)(a + 1);

	const void **o = malloc(4 * sizeof(void *)); /* two bases: vptr, field */
	o[0] = vtable_a;
	o[1] = NULL;
	o[2] = vtable_b;
	o[3] = NULL;
	kept.base = (char *)(o + 2);

	uint64_t *p = malloc(8 + 40); /* first word no length, no count */
	p[0] = 7;
	memset(p + 1, 0, 40);
	kept.plain = (char *)(p + 1);
}

int main(void)
{
	keep();
	scrub();
	return 0;
}
