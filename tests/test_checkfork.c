/*
 * test_checkfork.c - an unmodified check suite in CK_FORK mode, preloaded
 * (tests/prog/plain_check_fork.c): each forked test child's record is that test's
 * own (its baseline taken at the fork, so nothing of the runner's) and
 * carries the test's name, and check's own bookkeeping in the child (its
 * message file's stdio buffer) is suppressed by the shipped suppressions
 * (glibc.supp's stdio buffers, check.supp), never a leak of the test.
 * A suite linked with memcheck, each test in its region
 * (tests/prog/check_tcase.c), gets no record of a child's process unless
 * the child leaks outside the test's region.
 *
 * Two rows, each a suite run once (glibc's allocator: what is checked is
 * check's forking, not the allocator), the many records of each read by
 * its callback.
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* The record's "implicit" key: true for memcheck's own process region. */
static bool implicit(const struct h_json *rec)
{
	const struct h_json *v = rec ? h_json_get(rec, "implicit") : NULL;
	ck_assert_msg(v && v->type == HJ_BOOL, "no boolean \"implicit\"");
	return v->b;
}

/* rec: the runner's process record. */
H_CHECK(each_child_is_its_test)
{
	const struct h_report *rep = &x->rep;
	ck_assert_uint_eq(h_record_count(rep, "process"), 1);
	static const char *const tests[] = { "clean", "leaks_77", "keeps_64", "asserts_a_lot" };
	for (size_t i = 0; i < 4; i++) {
		ck_assert_msg(h_record_count(rep, tests[i]) == 1, "no record named \"%s\"",
			      tests[i]);
		/* memcheck's own process region, for memcheck oom */
		ck_assert(implicit(h_record(rep, tests[i], -1)));
	}
	ck_assert(implicit(rec));
	size_t leaking = 0, keeping = 0;
	for (size_t i = 0; i < rep->n; i++) {
		const struct h_json *r = rep->rec[i];
		uint64_t lost = h_count(r, "definitely_lost", "bytes");
		uint64_t reach = h_count(r, "still_reachable", "bytes");
		/* check's message file buffer, allocated in each child when it
		 * first reports to the runner, and stdout's in the runner. */
		ck_assert_msg(h_count(r, "suppressed", "blocks") >= 1,
			      "record %zu (pid %s): nothing suppressed", i,
			      h_fmt(h_u64(r, "pid")));
		ck_assert_uint_eq(h_count(r, "indirectly_lost", "bytes"), 0);
		ck_assert_uint_eq(h_count(r, "possibly_lost", "bytes"), 0);
		if (lost) {
			ck_assert_uint_eq(lost, 77);
			ck_assert_uint_eq(h_count(r, "definitely_lost", "blocks"), 1);
			ck_assert_str_eq(h_str(r, "verdict"), "fail");
			ck_assert_str_eq(h_frame_str(r, 0, 0, "function"), "leaks_77_fn");
			ck_assert_str_eq(h_str(r, "name"), "leaks_77");
			leaking++;
		} else {
			ck_assert_msg(strcmp(h_str(r, "verdict"), "pass") == 0,
				      "record %zu fails", i);
		}
		if (reach) {
			/* The test's own block, kept in a global: not check's. */
			ck_assert_uint_eq(reach, 64);
			ck_assert_uint_eq(h_count(r, "still_reachable", "blocks"), 1);
			keeping++;
		}
		if (r != rec)
			/* The child's figures start at the fork: a test that
			 * allocates one block does not inherit the runner's
			 * hundreds. */
			ck_assert_uint_lt(h_u64(r, "allocs"), 1000);
	}
	ck_assert_uint_eq(leaking, 1);
	ck_assert_uint_eq(keeping, 1);
}

/* Linked, every test in its own region: the children's process regions
 * fold into the tests' regions, and show only where a child leaked
 * outside its test's region, named after the test.  (The runner's own
 * process region is "process", as ever: the row's record.) */
H_CHECK(linked_suite_folds_process_regions)
{
	static const struct {
		const char *name;
		uint64_t lost;
		bool implicit;
	} want[] = {
		{ "clean_a", 0, false }, { "clean_b", 0, false }, { "leaks_41", 41, false },
		{ "fixture_leaks", 0, false }, { "fixture_leaks (process)", 33, true },
		{ "process", 0, true },
	};
	for (size_t i = 0; i < 6; i++) {
		const struct h_json *r = h_record(&x->rep, want[i].name, -1);
		ck_assert_msg(r != NULL, "no record named \"%s\"", want[i].name);
		ck_assert_uint_eq(h_count(r, "definitely_lost", "bytes"), want[i].lost);
		ck_assert_msg(implicit(r) == want[i].implicit, "\"%s\": implicit %d",
			      want[i].name, implicit(r));
	}
}

static const struct h_case cases[] = {
	/* The runner, and one child per test, named after it. */
	{ "each child is its test", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "plain_check_fork", .flags = H_PRELOAD }, .records = 5,
	  .record = "process", .check = each_child_is_its_test },
	/* leaks_41 fails the suite */
	{ "linked suite folds process regions", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "check_tcase", .flags = H_PRELOAD }, .exit = 1, .records = 6,
	  .record = "process", .check = linked_suite_folds_process_regions },
};

int main(void)
{
	TCase *tc = h_tcase("checkfork", 30);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
