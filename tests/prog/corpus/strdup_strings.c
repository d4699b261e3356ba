/* Strings from strdup, strndup and asprintf: 8 kept in a global array,
 * 5 lost. */
#include <stdio.h>
#include "corpus.h"

char *names[8];

int main(void)
{
	static const char *const words[] = { "alpha", "beta", "gamma", "delta", "epsilon" };
	for (int i = 0; i < 8; i++)
		names[i] = strdup(words[i % 5]);
	USE(strdup("lost one"));
	USE(strndup("lost two and more", 8));
	char *s;
	if (asprintf(&s, "%d lost", 3) < 0)
		return 2;
	USE(s);
	USE(strdup("lost four"));
	USE(strdup("lost five"));
	return 0;
}
