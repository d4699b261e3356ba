/*
 * plain_family.c - a known sequence of malloc-family calls, for running
 * under each allocator with memcheck preloaded (not linked to memcheck;
 * no stdio, whose buffers would be allocations of their own).
 *
 * usage: plain_family [basic]
 *   full (default): every family function.  Figures in the process
 *     record: 12 allocs, 12 frees, 6 reallocs, 10,632 bytes allocated
 *     (pvalloc(5000) counts as two 4 KiB pages), plus, when the
 *     allocator's realloc(p, 0) returns a block (mimalloc), 1 alloc of 0
 *     bytes and 1 free.  Prints "realloc0=null\n" or "realloc0=ptr\n".
 *   basic: malloc, calloc, realloc, free only (functions every allocator
 *     exports): 3 allocs, 3 frees, 1 realloc.
 * A wrong alignment or usable size: a line on stderr, exit 1.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void say(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		_exit(3);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		say(2, "plain_family: expected ");
		say(2, what);
		say(2, "\n");
		failures++;
	}
}

static int aligned(const void *p, size_t a)
{
	return p && ((uintptr_t)p & (a - 1)) == 0;
}

static void basic(void)
{
	char *p = malloc(10);                   /* A 10 */
	char *q = calloc(2, 5);                 /* A 10 */
	check(p && q, "malloc and calloc to succeed");
	p = realloc(p, 20);                     /* F 10, A 20, R */
	check(p != NULL, "realloc to succeed");
	free(p);                                /* F 20 */
	free(q);                                /* F 10 */
}

static void full(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *p = malloc(100);                  /* A1 100 */
	char *q = calloc(4, 25);                /* A2 100 */
	check(p && q, "malloc and calloc to succeed");
	memset(p, 'x', 100);
	p = realloc(p, 1000);                   /* F1, A3 1000, R1 */
	check(p && p[99] == 'x', "realloc growth to keep the contents");
	p = realloc(p, 10);                     /* F2, A4 10, R2 */
	check(p && p[9] == 'x', "realloc shrink to keep the contents");
	char *r = realloc(NULL, 50);            /* A5 50, R3 */
	r = realloc(r, 0);                      /* F3 (+ A 0 if not NULL), R4 */
	say(1, r ? "realloc0=ptr\n" : "realloc0=null\n");
	free(r);                                /* (F when not NULL) */
	char *s = reallocarray(NULL, 8, 16);    /* A6 128, R5 */
	s = reallocarray(s, 16, 16);            /* F4, A7 256, R6 */
	check(s != NULL, "reallocarray to succeed");
	void *t = NULL;
	check(posix_memalign(&t, 64, 200) == 0, "posix_memalign to succeed"); /* A8 200 */
	void *u = aligned_alloc(128, 256);      /* A9 256 */
	void *v = memalign(32, 40);             /* A10 40 */
	void *w = valloc(300);                  /* A11 300 */
	void *x = pvalloc(5000);                /* A12 8192 */
	check(aligned(t, 64), "posix_memalign(64) to be 64-aligned");
	check(aligned(u, 128), "aligned_alloc(128) to be 128-aligned");
	check(aligned(v, 32), "memalign(32) to be 32-aligned");
	check(aligned(w, pg), "valloc to be page-aligned");
	check(aligned(x, pg), "pvalloc to be page-aligned");
	check(malloc_usable_size(x) >= 2 * pg, "pvalloc(5000) usable size >= 2 pages");
	check(malloc_usable_size(s) >= 256, "usable size >= 256");
	check(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL) == 0");
	free(p);                                /* F5 */
	free(q);                                /* F6 */
	free(s);                                /* F7 */
	free(t);                                /* F8 */
	free(u);                                /* F9 */
	free(v);                                /* F10 */
	free(w);                                /* F11 */
	free(x);                                /* F12 */
	free(NULL);                             /* nothing */
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "basic") == 0)
		basic();
	else
		full();
	return failures ? 1 : 0;
}
