/* 20,000 small blocks: every other one kept in a global array, the
 * rest lost; and 5,000 freed. */
#include "corpus.h"

void *kept[10000];

int main(void)
{
	for (int i = 0; i < 20000; i++) {
		void *p = malloc(8 + i % 57);
		if (i % 2 == 0)
			kept[i / 2] = p;
		else
			USE(p);
	}
	for (int i = 0; i < 5000; i++) {
		free(kept[i]);
		kept[i] = NULL;
	}
	return 0;
}
