/*
 * plain_freed_end.c - a static after dangling pointers into a freed
 * buffer holds the block of the slot after it (test_leakkinds).
 *
 * The shape of onetrueawk's regex parser (b.c): its statics (basestr,
 * lastre, prestr) keep pointing into the regex's copy, freed, and
 * rlxstr, after them, holds the last character class, strdup'd while
 * the copy was alive, so in the slot right after it under the
 * allocators without headers.  The class is still reachable (valgrind,
 * glibc): the freed copy was 5 bytes, so the static is no end of it,
 * whatever the words around it say (scan.c end_of_freed).
 */
#include <stdlib.h>
#include <string.h>

struct parser { const char *base, *last, *pre, *cls; };
struct parser st;   /* .bss: base, last, pre, then cls */

int main(void)
{
	char *re = strdup("[ab]");     /* 5 bytes */
	st.base = st.last = re;
	st.pre = re + 4;               /* its NUL, where parsing stopped */
	st.cls = strdup("ab");         /* 3 bytes: the next slot of the class */
	free(re);                      /* the statics into it left dangling */
	return 0;
}
