/*
 * test_exitorder24.c - the process region ends after every library's
 * destructor.
 *
 * libdtorfree.so's destructor frees the block the program had it
 * allocate (tests/prog/shim/dtorfree.c), as libuv frees its
 * uv_setup_args process title at exit.  memcheck's destructor ran in
 * _dl_fini before that library's (ld.so finalizes a preloaded object
 * after the objects loaded after it), and reported the block still
 * reachable, in ~110 of libuv's records; valgrind, which reports at the
 * real exit, says "All heap blocks were freed".  The on_exit handler
 * registered in memcheck's constructor, before _dl_fini was, runs after
 * it: the report made there sees the block freed.
 */
#include <check.h>

#include "harness.h"

static const struct h_case cases[] = {
	{ "a block a library's destructor frees, preloaded",
	  .run = { .prog = "plain_dtorfree", .flags = H_PRELOAD | H_EXITCODE },
	  .record = "process",
	  .want = { { "still_reachable.blocks", 0 }, { "definitely_lost.blocks", 0 },
		    { "verdict", .str = "pass" } } },
	{ "a block a library's destructor frees, linked with memcheck",
	  .run = { .prog = "dtorfree_linked", .flags = H_LINKED | H_EXITCODE,
		   .env = H_LIST("MEMCHECK_PROCESS=on") },
	  .record = "process",
	  .want = { { "still_reachable.blocks", 0 }, { "definitely_lost.blocks", 0 },
		    { "verdict", .str = "pass" } } },
};

int main(void)
{
	TCase *tc = h_tcase("exitorder24", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
