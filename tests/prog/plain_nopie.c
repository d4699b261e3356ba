/*
 * plain_nopie.c - a program built -no-pie -fno-pie that takes the address
 * of every malloc-family function and calls through it (tests/
 * test_nopie.c).  Such a program lists each of them in its own dynamic
 * symbol table, undefined but with the address of its PLT stub (a
 * "canonical PLT entry", so that &malloc is the same everywhere): a
 * lookup that takes that stub for malloc's definition forwards memcheck's
 * malloc to itself.  No stdio; not linked to memcheck.
 *
 * usage: plain_nopie empty|calls
 *   empty  nothing
 *   calls  one call through each pointer, everything freed: 11 blocks
 *          and 5,574 bytes allocated (pvalloc's page is 4,096 of them),
 *          4 realloc calls
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

void *(*volatile p_malloc)(size_t);
void *(*volatile p_calloc)(size_t, size_t);
void *(*volatile p_realloc)(void *, size_t);
void *(*volatile p_reallocarray)(void *, size_t, size_t);
void (*volatile p_free)(void *);
int (*volatile p_posix_memalign)(void **, size_t, size_t);
void *(*volatile p_aligned_alloc)(size_t, size_t);
void *(*volatile p_memalign)(size_t, size_t);
void *(*volatile p_valloc)(size_t);
void *(*volatile p_pvalloc)(size_t);
size_t (*volatile p_usable)(void *);

/* Taken in code, not in a static initializer (which becomes a dynamic
 * relocation): a non-PIE program's code names the function by an
 * absolute address, which the linker makes the PLT stub's. */
static void take_addresses(void)
{
	p_malloc = malloc;
	p_calloc = calloc;
	p_realloc = realloc;
	p_reallocarray = reallocarray;
	p_free = free;
	p_posix_memalign = posix_memalign;
	p_aligned_alloc = aligned_alloc;
	p_memalign = memalign;
	p_valloc = valloc;
	p_pvalloc = pvalloc;
	p_usable = malloc_usable_size;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "empty"))
		return 0;
	if (strcmp(argv[1], "calls"))
		return 2;
	take_addresses();
	void *a = p_malloc(100);                 /* 1 */
	void *b = p_calloc(10, 10);              /* 2 */
	void *c = p_realloc(NULL, 50);           /* 3 */
	c = p_realloc(c, 500);                   /* 4: one free, one alloc */
	void *d = p_reallocarray(NULL, 10, 10);  /* 5 */
	d = p_reallocarray(d, 20, 10);           /* 6 */
	void *e = NULL;
	if (p_posix_memalign(&e, 64, 100))       /* 7 */
		return 1;
	void *f = p_aligned_alloc(64, 128);      /* 8 */
	void *g = p_memalign(64, 100);           /* 9 */
	void *h = p_valloc(100);                 /* 10 */
	void *i = p_pvalloc(100);                /* 11: a page */
	if (!a || !b || !c || !d || !f || !g || !h || !i || p_usable(a) < 100)
		return 1;
	p_free(a);
	p_free(b);
	p_free(c);
	p_free(d);
	p_free(e);
	p_free(f);
	p_free(g);
	p_free(h);
	p_free(i);
	p_free(NULL);
	return 0;
}
