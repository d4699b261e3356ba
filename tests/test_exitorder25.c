/*
 * test_exitorder25.c - the process region ends after every library's
 * destructor, as valgrind reports at the real exit.
 *
 * libdtorfree.so's destructor frees the block the program had it
 * allocate (tests/prog/shim/dtorfree.c), as libuv frees its
 * uv_setup_args process title at exit.  memcheck's destructor ran in
 * _dl_fini before that library's (ld.so finalizes a preloaded object
 * before the objects loaded after it), and reported the block still
 * reachable, in ~110 of libuv's records (audit24a); valgrind says "All
 * heap blocks were freed".  The on_exit handler registered in
 * memcheck's constructor, before _dl_fini was, runs after it: the
 * report made there sees the block freed, and the free in the totals.
 * Every way the exit can go on from there: a thread's exit, an atexit
 * handler's exit, a forked child, the library's destructor calling
 * exit, _exit or _Exit (the report and the verdict's status all the
 * same; the program's unflushed stdout dropped, as _exit drops it).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Every record: nothing still reachable or lost, and the library's
 * free counted (the program frees nothing else; before, the report came
 * before it: 0 frees). */
H_CHECK(all_freed)
{
	ck_assert_msg(x->rep.n > 0, "%s: no record", x->label);
	for (size_t i = 0; i < x->rep.n; i++) {
		H_EXPECT_COUNT(x->rep.rec[i], "still_reachable", "blocks", 0);
		H_EXPECT_COUNT(x->rep.rec[i], "definitely_lost", "blocks", 0);
		uint64_t frees = h_u64(x->rep.rec[i], "frees");
		ck_assert_msg(frees >= 1, "%s: record %zu: %llu frees", x->label, i,
			      (unsigned long long)frees);
	}
}

#define FREED(...) .records = 1, .check = all_freed, __VA_ARGS__

#define DTORFREE(mode, ...)                                                      \
	.run = { .prog = "plain_dtorfree", .args = H_LIST(mode),                  \
		 .flags = H_PRELOAD | H_EXITCODE, __VA_ARGS__ }

/* Valgrind mode's rows need valgrind. */
H_SETUP(need_valgrind)
{
	(void)run;
	(void)c;
	if (access("/usr/bin/valgrind", X_OK) == 0 || access("/usr/local/bin/valgrind", X_OK) == 0)
		return true;
	printf("note: valgrind not installed; skipping\n");
	return false;
}

/* The program leaks, then the library's destructor ends the process
 * as end says ("_exit 0"): the leak reported, and nothing else left. */
#define LEAK_THEN(end)                                                            \
	DTORFREE("leak", .env = H_LIST("DTORFREE_END=" end)), .records = 1,       \
	.record = "process",                                                      \
	.want = { { "definitely_lost.blocks", 1 }, { "still_reachable.blocks", 0 }, \
		  { "verdict", .str = "fail" } }

static const struct h_case cases[] = {
	{ "a block a library's destructor frees, preloaded", DTORFREE(""), FREED() },
	{ "a block a library's destructor frees, linked with memcheck",
	  .run = { .prog = "dtorfree_linked", .flags = H_LINKED | H_EXITCODE,
		   .env = H_LIST("MEMCHECK_PROCESS=on") },
	  FREED() },
	{ "exit from a thread", DTORFREE("thread"), FREED() },
	{ "exit from an atexit handler", DTORFREE("atexit"), FREED() },
	{ "a forked child", DTORFREE("fork"), .out = H_LIST("child=0"), .records = 2,
	  .check = all_freed },
	/* The library's destructor ends the process after memcheck's
	 * deferred the report: the report and the status all the same. */
	{ "the library's destructor calls _exit(0)", DTORFREE("", .env = H_LIST("DTORFREE_END=_exit 0")),
	  FREED() },
	{ "the library's destructor calls _exit(0) after a leak", LEAK_THEN("_exit 0"), .exit = 23 },
	{ "the library's destructor calls _Exit(5) after a leak", LEAK_THEN("_Exit 5"), .exit = 5 },
	{ "the library's destructor calls exit(0) after a leak", LEAK_THEN("exit 0"), .exit = 23 },
	/* Valgrind mode: valgrind's own leak check, made at the region's
	 * end, sees the library's free too. */
	{ "valgrind mode",
	  .run = { .cli = H_LIST("run", "--valgrind", "-a", "glibc"), .prog = "plain_dtorfree" },
	  .allocators = H_ONCE, .setup = need_valgrind, FREED() },
	/* _exit drops what stdio holds: memcheck does not write it. */
	{ "_exit drops the program's buffered stdout",
	  DTORFREE("out", .env = H_LIST("DTORFREE_END=_exit 0")), .stdout_is = "", .records = 1 },
	{ "exit writes it", DTORFREE("out", .env = H_LIST("DTORFREE_END=exit 0")), .stdout_is = "out",
	  .records = 1 },
};

int main(void)
{
	TCase *tc = h_tcase("exitorder25", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
