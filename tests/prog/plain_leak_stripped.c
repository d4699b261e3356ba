/* A lost block in a program without a symbol table (built with -s, as
 * most installed programs are: main is "???"): valgrind's stack stops at
 * the first of the C library's start-up functions below main, which it
 * names "(below main)"; memcheck's showed __libc_start_call_main,
 * __libc_start_main and _start (test_leakkinds). */
#include <stdlib.h>

void *volatile keep;

int main(void)
{
	keep = malloc(48);
	keep = NULL;
	return 0;
}
