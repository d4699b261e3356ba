/*
 * leaky.c - an unmodified program with one leak on an error path, to run
 * under the preloaded library:
 *   LD_PRELOAD=build/libmemcheck.so MEMCHECK_REPORT=out.jsonl build/examples/leaky
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wordcount.h"

/* Returns the number of distinct words, or -1 when the text is empty.
 * The early return forgets to free the table: the leak memcheck finds. */
static long distinct_words(const char *text)
{
	struct wordcount *wc = wc_new();
	if (!wc)
		return -1;
	if (wc_add_text(wc, text) < 0 || wc_distinct(wc) == 0)
		return -1; /* leaks wc */
	long n = (long)wc_distinct(wc);
	wc_free(wc);
	return n;
}

int main(void)
{
	const char *texts[] = { "to be or not to be", "", "all is well" };
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
		dprintf(1, "%zu: %ld distinct words\n", i, distinct_words(texts[i]));
	return 0;
}
