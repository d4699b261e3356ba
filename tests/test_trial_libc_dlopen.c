/*
 * test_trial_libc_dlopen.c - what curl's tests found (session 31's trial
 * of real suites): objects the C library loads for itself.
 *
 * glibc loads libgcc_s for pthread_exit and pthread_cancel, and the NSS
 * modules /etc/nsswitch.conf names (curl's tests resolving a name loaded
 * libnss_mdns4_minimal), through its private dlopen (do_dlopen, under
 * __libc_dlopen_mode), and closes them only in __libc_freeres: valgrind
 * shows nothing of them at exit, memcheck showed the link map, its name
 * and version table still reachable (1,238 + 456 + 36 + 36 bytes for
 * libgcc_s).  glibc.supp's glibc-2.36-libc-dlopen takes them out.  Under
 * jemalloc and tcmalloc libgcc_s is loaded with libstdc++ at start and
 * the call loads nothing (the rows pass there on main too).
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* No record left whose stack passes through the C library's own dlopen,
 * and the entry that took them out named (under glibc and mimalloc,
 * where the call loads libgcc_s). */
H_CHECK(nothing_of_the_libc_dlopen)
{
	(void)c;
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 0);
	H_EXPECT_COUNT(rec, "possibly_lost", "blocks", 0);
	for (size_t i = 0; i < h_nleaks(rec); i++)
		for (size_t j = 0; j < h_leak_depth(rec, i); j++) {
			const char *fn = h_frame_str(rec, i, j, "function");
			ck_assert_msg(!fn || (strcmp(fn, "do_dlopen") && strcmp(fn, "__libc_dlopen_mode")),
				      "%s: loss record %zu (%s bytes) comes from the C library's own dlopen",
				      x->label, i, h_fmt(h_leak_u64(rec, i, "bytes")));
		}
}

#define LIBC_DLOPEN(how)                                                       \
	{ "a thread ended by pthread_" how ": libgcc_s loaded by the C library", \
	  .run = { .prog = "plain_trial31_libc_dlopen", .args = H_LIST(how),    \
		   .flags = H_PRELOAD | H_EXITCODE },                           \
	  .record = "process", .stdout_is = "ended\n", .check = nothing_of_the_libc_dlopen, \
	  .want = { { "verdict", .str = "pass" } } }

static const struct h_case cases[] = {
	LIBC_DLOPEN("exit"),
	LIBC_DLOPEN("cancel"),
};

int main(void)
{
	TCase *tc = h_tcase("trial_libc_dlopen", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
