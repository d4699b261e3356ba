/*
 * plain_exitfn: linked with libexitfn.so, whose constructor fills glibc's
 * static list of exit functions before libmemcheck's constructor runs
 * (tests/prog/shim/exitfn.c), so that memcheck's exit handler runs from
 * a list glibc calloc'd and frees after it (tests/test_wrapper.c).
 *
 * usage: plain_exitfn [after N] [exit|_exit|region]
 *   after N  main registers N atexit handlers more first (after
 *            memcheck's constructor: their lists are freed before
 *            memcheck's handler runs)
 *   exit     return 0 (the default)
 *   _exit    _exit(0): no exit handler runs, no list is freed
 *   region   a region (memcheck_begin/memcheck_end, where memcheck is
 *            preloaded) around a block allocated and freed, then
 *            return 0
 * EXITFN_CTOR=N: the program's own constructor registers N atexit
 * handlers (run by the C library's start, after it registered the
 * dynamic linker's _dl_fini; linked with libmemcheck.a, after
 * memcheck's constructor too: exitfn_static).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct memcheck_result;
void memcheck_begin(const char *name) __attribute__((weak));
int memcheck_end(struct memcheck_result *out) __attribute__((weak));

static void handler(void)
{
}

static void *volatile sink;

__attribute__((constructor)) static void register_early(void)
{
	const char *n = getenv("EXITFN_CTOR");
	for (int k = n ? atoi(n) : 0; k > 0; k--)
		atexit(handler);
}

int main(int argc, char **argv)
{
	int i = 1;
	if (i + 1 < argc && !strcmp(argv[i], "after")) {
		int n = atoi(argv[i + 1]);
		for (int k = 0; k < n; k++)
			atexit(handler);
		i += 2;
	}
	const char *how = i < argc ? argv[i] : "exit";
	if (!strcmp(how, "_exit"))
		_exit(0);
	if (!strcmp(how, "region")) {
		if (memcheck_begin)
			memcheck_begin("early");
		sink = malloc(100);
		free(sink);
		if (memcheck_end)
			memcheck_end(NULL);
	}
	return 0;
}
