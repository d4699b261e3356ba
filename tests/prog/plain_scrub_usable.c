/*
 * plain_scrub_usable.c - what a program writes past the size it asked for,
 * within malloc_usable_size, survives realloc (test_leakkinds).
 *
 *   plain_scrub_usable (prints "ok")
 *
 * malloc_usable_size(3) says the bytes past the requested size, up to
 * the usable size, are the program's to use, and every allocator's
 * realloc keeps them (it copies the old usable size).  QuickJS fills
 * that slack with its arrays' elements (pointers among them) and grows
 * them with realloc.  For each size from 1 to 600 bytes: a block is
 * filled to its usable size with addresses (of the block itself), grown
 * to twice its usable size (with realloc, and with reallocarray for the
 * odd sizes: memcheck takes another way for it), and every word of the
 * old usable size must still be there.  Exits 1 naming the first wrong
 * word.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	for (size_t n = 1; n <= 600; n++) {
		unsigned char *p = malloc(n);
		if (!p)
			return 2;
		size_t u = malloc_usable_size(p);
		if (u < n)
			return 2;
		/* Addresses in every whole word of the usable size. */
		size_t words = u / 8;
		for (size_t i = 0; i < words; i++) {
			uintptr_t v = (uintptr_t)p + i;
			memcpy(p + i * 8, &v, 8);
		}
		uintptr_t base = (uintptr_t)p;
		unsigned char *q = n % 2 ? reallocarray(p, 2, u) : realloc(p, 2 * u);
		if (!q)
			return 2;
		for (size_t i = 0; i < words; i++) {
			uintptr_t v;
			memcpy(&v, q + i * 8, 8);
			if (v != base + i) {
				printf("size %zu (usable %zu): word %zu (byte %zu) is %#lx, "
				       "not %#lx\n",
				       n, u, i, i * 8, (unsigned long)v, (unsigned long)(base + i));
				return 1;
			}
		}
		free(q);
	}
	puts("ok");
	return 0;
}
