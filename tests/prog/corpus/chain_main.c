/* A 3-block chain lost just before main returns: the head was a local
 * of main, dead once main has returned.  valgrind: 1 definite, 2
 * indirect. */
#include "corpus.h"

int main(void)
{
	struct node *l = list(3);
	USE(l);
	return 0;
}
