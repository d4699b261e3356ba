/* Still reachable: blocks that globals (data and bss) point to, and a
 * block only another reachable block points to. */
#include "plain_leak_common.h"

void *volatile in_bss;
void *volatile in_data = (void *)1;
static void **volatile table;

int main(void)
{
	in_bss = malloc(64);
	in_data = malloc(128);
	table = calloc(4, sizeof *table);
	table[2] = malloc(32);
	scrub();
	return 0;
}
