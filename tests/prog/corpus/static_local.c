/* A cache kept in a function's static local (reachable) and a pointer
 * kept in a global struct's middle field (reachable). */
#include "corpus.h"

struct config {
	int version;
	char name[20];
	struct node *items;
	long tail[5];
} cfg;

__attribute__((noinline)) static struct node *cache(void)
{
	static struct node *c;
	if (!c)
		c = list(4);
	return c;
}

int main(void)
{
	USE(cache());
	cfg.items = list(2);
	return 0;
}
