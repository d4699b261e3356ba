/* Interior pointers: a block only pointed into (possibly lost), one
 * pointed to one past its end (definitely lost: not inside), and a kept
 * block reached through a start pointer. */
#include "corpus.h"

char *into, *past;
void *kept;

int main(void)
{
	char *a = malloc(64), *b = malloc(48);
	into = a + 24;
	past = b + 48;
	kept = malloc(32);
	return 0;
}
