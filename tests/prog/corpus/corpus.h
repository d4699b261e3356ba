/*
 * corpus.h - shared by the leak corpus, tests/prog/corpus/NAME.c: small
 * programs of the shapes real code has, each run under valgrind and
 * under memcheck by tests/test_corpus.c, whose leak figures must agree.
 *
 * Unlike tests/prog/plain_leak_*.c these programs do not scrub their
 * dead stack: stale copies of addresses are left wherever the compiler
 * and the C library leave them, as in real code.  They use no stdio,
 * whose buffers valgrind frees at exit and memcheck does not.
 */
#ifndef CORPUS_H
#define CORPUS_H
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Make the compiler believe p escapes, without storing it anywhere. */
#define USE(p) __asm__ volatile("" : : "r"(p) : "memory")

struct node {
	struct node *next;
	long payload[3];
};

/* A list of n nodes, newest first. */
__attribute__((noinline, unused)) static struct node *list(int n)
{
	struct node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof *x);
		x->next = head;
		x->payload[0] = i;
		head = x;
	}
	return head;
}

struct tree {
	struct tree *l, *r;
	long key;
};

/* A balanced tree of n nodes (keys lo..lo+n-1). */
__attribute__((noinline, unused)) static struct tree *tree(long lo, long n)
{
	if (n <= 0)
		return NULL;
	long mid = lo + n / 2;
	struct tree *t = malloc(sizeof *t);
	t->key = mid;
	t->l = tree(lo, mid - lo);
	t->r = tree(mid + 1, lo + n - mid - 1);
	return t;
}

/* n bytes of anonymous memory (an alternate stack), or the process
 * ends with status 2. */
__attribute__((noinline, unused)) static void *map_or_die(size_t n)
{
	void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(2);
	return m;
}
#endif
