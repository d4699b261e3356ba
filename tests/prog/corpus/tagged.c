/* Tagged pointers: low-bit tags point inside the block (possibly
 * lost), a tag in the top byte makes no address at all (definitely
 * lost); an untagged one keeps its block. */
#include <stdint.h>
#include "corpus.h"

uintptr_t low, high, plain;

int main(void)
{
	low = (uintptr_t)malloc(32) | 1;
	high = (uintptr_t)malloc(32) | ((uintptr_t)0x5a << 56);
	plain = (uintptr_t)malloc(32);
	return 0;
}
