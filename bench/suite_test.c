/*
 * suite_test.c - one short test process, the unit of a whole test suite,
 * for bench/suite.sh: run a few hundred times, one after another, it is
 * what a suite of small test programs costs under memcheck.
 *
 *   suite_test N      (N: which test of the suite this process is)
 *
 * What each test does, as suites' tests do: builds a small tree of nodes
 * with strings, walks and frees it; uses stdio; every 4th sets the locale
 * from the environment (the C library then keeps its locale data for
 * life, blocks memcheck must suppress); every 3rd keeps a few strings in
 * globals (still reachable); every 5th leaks one block (definitely lost,
 * so that process is reported and fails, as a leaking test does).  The
 * work is a few hundred allocations: start-up and exit dominate, as they
 * do in the suites issue 15 measured.  One line on stdout, the same with
 * or without memcheck (suite.sh compares them).
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct node {
	struct node *left, *right;
	char *name;
	unsigned key;
};

/* Still reachable at exit.  volatile: the array is written and never
 * read, so the compiler dropped the stores and the blocks were lost
 * (valgrind agreed: 96 bytes definitely lost), not kept. */
static char *volatile kept[3];
static void *volatile lost;

static struct node *insert(struct node *t, unsigned key)
{
	if (!t) {
		struct node *n = calloc(1, sizeof *n);
		char buf[32];
		snprintf(buf, sizeof buf, "node-%u", key);
		n->name = strdup(buf);
		n->key = key;
		return n;
	}
	if (key < t->key)
		t->left = insert(t->left, key);
	else
		t->right = insert(t->right, key);
	return t;
}

static unsigned long walk(const struct node *t)
{
	return t ? walk(t->left) + strlen(t->name) * t->key + walk(t->right) : 0;
}

static void drop(struct node *t)
{
	if (!t)
		return;
	drop(t->left);
	drop(t->right);
	free(t->name);
	free(t);
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 0;
	char text[64] = "";
	if (n % 4 == 0) {
		setlocale(LC_ALL, "");
		struct tm tm = { .tm_year = 126, .tm_mon = n % 12, .tm_mday = 1 + n % 28 };
		strftime(text, sizeof text, "%x %A", &tm);
	}
	struct node *t = NULL;
	unsigned x = n * 2654435761u + 1;
	for (unsigned i = 0; i < 100 + n % 100; i++) {
		x = x * 1103515245u + 12345u;
		t = insert(t, x >> 8);
	}
	unsigned long sum = walk(t);
	drop(t);
	if (n % 3 == 0)
		for (int i = 0; i < 3; i++) {
			kept[i] = malloc(24 + 8 * (size_t)i);
			snprintf(kept[i], 24, "kept %d of test %u", i, n);
		}
	if (n % 5 == 0) {
		lost = malloc(40 + n % 64);
		memset(lost, 1, 40);
		lost = NULL;
	}
	printf("test %u: %lu %s\n", n, sum, text);
	/* LeakSanitizer ends a leaking process without flushing stdio. */
	fflush(stdout);
	return 0;
}
