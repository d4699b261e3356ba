/* An old pointer deep in a reused block: a 520-byte record whose last
 * field held a list, freed and allocated again with only its first
 * fields written.  valgrind skips the undefined word: the list (4
 * blocks) is lost, the record still reachable.  memcheck agrees where
 * its cleaning reaches the field (by default, a block's whole words up
 * to 4096 bytes; on main, which cleaned only the first 64, the list was
 * still reachable). */
#include "corpus.h"

struct big {
	long id;
	char text[480];
	struct node *tail;
};

struct big *current;

__attribute__((noinline)) static void fill(struct big *b)
{
	b->id = 1;
	memset(b->text, 'x', sizeof b->text);
	b->tail = list(4);
}

int main(void)
{
	struct big *b = malloc(sizeof *b);
	fill(b);
	free(b);
	current = malloc(sizeof *current);
	current->id = 2;
	memcpy(current->text, "second", 7);
	return 0;
}
