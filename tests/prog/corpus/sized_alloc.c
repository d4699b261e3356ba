/* An allocator wrapper that keeps each block's size in its first word
 * and hands out the bytes after it (SQLite's sqlite3_malloc): every
 * pointer the program holds is 8 bytes into its block.  valgrind:
 * reachable through such a pointer (heuristic length64); a dropped one
 * definitely lost, and what it alone pointed to indirectly. */
#include <stdint.h>
#include "corpus.h"

static void *xmalloc(uint64_t n)
{
	uint64_t *p = malloc(n + 8);
	p[0] = n;
	return p + 1;
}

struct rec {
	struct rec *next;
	char name[40];
};

struct rec *kept;
void *kept_buf;

int main(void)
{
	for (int i = 0; i < 4; i++) {
		struct rec *r = xmalloc(sizeof *r);
		r->next = kept;
		kept = r;
	}
	kept_buf = xmalloc(100);
	struct rec *lost = NULL;
	for (int i = 0; i < 3; i++) {
		struct rec *r = xmalloc(sizeof *r);
		r->next = lost;
		lost = r;
	}
	USE(lost);
	return 0;
}
