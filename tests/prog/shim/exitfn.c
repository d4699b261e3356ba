/*
 * exitfn.c - libexitfn.so, a library the program links (DT_NEEDED):
 * its constructor, which the dynamic linker runs before libmemcheck's
 * (a preloaded object's constructor runs after those of the objects
 * loaded after it), registers $EXITFN_BEFORE atexit handlers (40 if
 * unset), so that glibc's static list of 32 is full and memcheck's own
 * on_exit entry lands in a list glibc calloc'd (tests/test_wrapper.c,
 * tests/prog/plain_exitfn.c).  EXITFN_ARG=1: the last handler it
 * registers (in that list, right below memcheck's entry, run after it)
 * is an on_exit one whose argument is a block it frees, the way a
 * library hands its state to its exit handler.
 */
#include <stdbool.h>
#include <stdlib.h>

static void handler(void)
{
}

static void free_arg(int status, void *arg)
{
	(void)status;
	free(arg);
}

__attribute__((constructor)) static void exitfn_init(void)
{
	const char *n = getenv("EXITFN_BEFORE"), *arg = getenv("EXITFN_ARG");
	int before = n ? atoi(n) : 40;
	bool with_arg = arg && *arg == '1' && before > 0;
	for (int i = 0; i < before - with_arg; i++)
		atexit(handler);
	if (with_arg)
		on_exit(free_arg, malloc(24));
}
