/*
 * test_audit24a.c - what libuv's and pcre2's test suites found (session
 * 24's audit of real suites).
 *
 * Threads whose first allocation is the C library's own inside
 * pthread_getattr_np on themselves (tests/prog/plain_getattr_self):
 * memcheck asked the same of the C library from that allocation, on the
 * lock the call holds, and the thread waited for ever (libuv's
 * thread_stack_size and thread_stack_size_explicit timed out under every
 * allocator).  Each run must end, print what it printed bare, and
 * report the one block left, with its stack past the thread's entry.
 *
 * A failed dlopen's error, which the C library keeps for dlerror (a
 * record in libc's thread-local __libc_dlerror_result and its message),
 * at exit (tests/prog/plain_dlerror_kept): memcheck's own dlsym before
 * the exit's scan freed both, uncounted, and they were reported
 * definitely lost (libuv's test dlerror failed with exit status 23);
 * valgrind (--run-libc-freeres=no) calls them still reachable.
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* Its stack from the thread's second capture on is whole: the first,
 * made inside pthread_getattr_np, did not leave the stack unlearned. */
H_CHECK(leak_has_its_stack)
{
	(void)c;
	ck_assert_msg(h_nleaks(rec) == 1, "%s: %zu leak records, expected 1", x->label,
		      h_nleaks(rec));
	H_EXPECT_FRAME(rec, 0, 0, "leave_block");
	H_EXPECT_FRAME(rec, 0, 1, "thread_main");
}

#define GETATTR_SELF(unwinder)                                                 \
	{ "a thread's first allocation inside pthread_getattr_np, unwinder " unwinder, \
	  .run = { .prog = "plain_getattr_self", .args = H_LIST("7"), .flags = H_PRELOAD, \
		   .env = H_LIST("MEMCHECK_UNWINDER=" unwinder) },              \
	  .record = "process", .stdout_is = "stacks ok\n", .check = leak_has_its_stack, \
	  .want = { { "definitely_lost.bytes", 33 }, { "definitely_lost.blocks", 1 } } }

/* Both blocks still reachable, nothing lost (other allocators may keep
 * more still reachable blocks of their own). */
H_CHECK(dlerror_state_reachable)
{
	(void)c;
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 0);
	H_EXPECT_COUNT(rec, "possibly_lost", "blocks", 0);
	ck_assert_msg(h_count(rec, "still_reachable", "blocks") >= 2,
		      "%s: %s blocks still reachable, expected the dlerror record and its message",
		      x->label, h_fmt(h_count(rec, "still_reachable", "blocks")));
}

#define DLERROR_KEPT(...)                                                      \
	{ "a failed dlopen's error kept for dlerror at exit",                   \
	  .run = { .prog = "plain_dlerror_kept", .args = H_LIST(__VA_ARGS__),   \
		   .flags = H_PRELOAD | H_EXITCODE },                           \
	  .record = "process", .stdout_is = "kept\n", .check = dlerror_state_reachable, \
	  .want = { { "verdict", .str = "pass" } } }

static const struct h_case cases[] = {
	DLERROR_KEPT("read"), DLERROR_KEPT("pending"),
	GETATTR_SELF("fp"), GETATTR_SELF("libunwind"), GETATTR_SELF("glibc"),
	{ "a thread's first allocation inside pthread_getattr_np, count-only",
	  .run = { .prog = "plain_getattr_self", .args = H_LIST("7"), .flags = H_PRELOAD,
		   .env = H_LIST("MEMCHECK_TRACK=0") },
	  .record = "process", .stdout_is = "stacks ok\n",
	  .want = { { "definitely_lost.blocks", 0 }, { "verdict", .str = "pass" } } },
};

int main(void)
{
	TCase *tc = h_tcase("audit24a", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
