/* A chained hash table in a global: 1,000 entries with malloc'd keys;
 * 100 entries removed from their chains but not freed (each entry
 * definite, its key indirect); the table itself reachable. */
#include "corpus.h"

struct entry {
	struct entry *next;
	char *key;
	long value;
};

#define NB 257
struct entry **table;

int main(void)
{
	table = calloc(NB, sizeof *table);
	for (long i = 0; i < 1000; i++) {
		struct entry *e = malloc(sizeof *e);
		e->key = malloc(12);
		memcpy(e->key, "key-0000000", 12);
		e->key[10] = (char)('0' + i % 10);
		e->value = i;
		e->next = table[i % NB];
		table[i % NB] = e;
	}
	for (int b = 0; b < 100; b++)
		if (table[b])
			table[b] = table[b]->next;
	return 0;
}
