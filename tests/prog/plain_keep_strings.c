/*
 * plain_keep_strings.c - jansson's test_dump in small: a program that
 * sets the locale and keeps strdup'd strings in a global for its whole
 * life (preloaded only, never linked to memcheck; no stdio).
 *
 * Its own 8 blocks are still reachable, and only they are reported: the
 * locale's copies (setlocale strdup's and strndup's them inside the C
 * library) are glibc's, which the shipped suppressions take out, as
 * valgrind's do with the same file.  Both tools name keep_names() at
 * KEEP_LINE as the strings' caller.  Run it with LC_ALL set to a locale
 * that exists (C.UTF-8), so that setlocale loads something.
 */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

char *names[8];

static const char *const words[8] = { "alpha", "beta", "gamma", "delta",
				      "epsilon", "zeta", "eta", "theta" };

__attribute__((noinline)) void keep_names(void)
{
	for (int i = 0; i < 8; i++)
		names[i] = strdup(words[i]); /* KEEP_LINE */
}

int main(void)
{
	if (!setlocale(LC_ALL, ""))
		return 1;
	keep_names();
	for (int i = 0; i < 8; i++)
		if (!names[i])
			return 1;
	return 0;
}
