/*
 * plain_allocfn.c - a program that allocates through wrappers of its own,
 * for test_allocfn.c: which frames memcheck passes over when it names a
 * site (MEMCHECK_ALLOC_FN, and thin wrappers found by their code).  Built
 * at -O0, -O1 and -O2 (plain_allocfn_o0, plain_allocfn, plain_allocfn_o2):
 * the compiler decides what a wrapper's code looks like after its call,
 * and at -O2 a wrapper that only forwards tail-calls and leaves no frame.
 * Preloaded only, never linked to memcheck.
 *
 * Each use_* function allocates through one wrapper, once, on a line of
 * its own; the blocks it takes are kept in `kept` (mode leak forgets them
 * at exit: one definitely lost record each, named after its use_*).
 *
 *   wrap      returns malloc's block: thin
 *   wrap2     returns wrap's block: thin (a wrapper of a wrapper)
 *   checked   tests the block, complains on NULL, returns it: thin
 *   either    realloc or malloc, two calls, each returning the block: thin
 *   counted   counts its calls in a global: not thin
 *   filled    writes the block's first byte: not thin
 *
 * usage: plain_allocfn leak | oom
 *   leak  every use_* once; the blocks are forgotten (lost)
 *   oom   every use_* once, each failure handled; everything freed, except
 *         that use_counted forgets what it holds when the next call fails
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static void *volatile kept[16];
static int nkept;
static volatile unsigned long calls;

NOINLINE void *wrap(size_t n)
{
	return malloc(n);
}

NOINLINE void *wrap2(size_t n)
{
	return wrap(n);
}

NOINLINE void *checked(size_t n)
{
	void *p = malloc(n);
	if (!p)
		fprintf(stderr, "checked: out of memory for %zu bytes\n", n);
	return p;
}

NOINLINE void *either(void *p, size_t n)
{
	return p ? realloc(p, n) : malloc(n);
}

NOINLINE void *counted(size_t n)
{
	void *p = malloc(n);
	calls++;
	return p;
}

NOINLINE void *filled(size_t n)
{
	char *p = malloc(n);
	if (p)
		p[0] = 'x';
	return p;
}

static int keep(void *p)
{
	if (!p)
		return 0;
	kept[nkept++] = p;
	return 1;
}

NOINLINE int use_wrap(void)
{
	return keep(wrap(11));
}

NOINLINE int use_wrap2(void)
{
	return keep(wrap2(12));
}

NOINLINE int use_checked(void)
{
	return keep(checked(13));
}

NOINLINE int use_either(void)
{
	return keep(either(NULL, 14));
}

NOINLINE int use_counted(void)
{
	void *a = counted(15);
	if (!a)
		return 0;
	void *b = counted(16);
	if (!b)
		return 0;        /* a is forgotten: the error path leaks */
	keep(a);
	return keep(b);
}

NOINLINE int use_filled(void)
{
	return keep(filled(17));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	use_wrap();
	use_wrap2();
	use_checked();
	use_either();
	use_counted();
	use_filled();
	if (!strcmp(mode, "leak")) {
		/* the pointers go: every block is lost */
		for (int i = 0; i < nkept; i++)
			kept[i] = NULL;
		return 0;
	}
	for (int i = 0; i < nkept; i++)
		free(kept[i]);
	return 0;
}
