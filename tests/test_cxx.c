/*
 * test_cxx.c - C++ operator new and delete (lib/cxxnew.c) under each of
 * the four allocators: mimalloc, jemalloc and tcmalloc serve them without
 * calling malloc, and memcheck must count them all the same.  The
 * program is tests/prog/cxx_new.cc; its figures are compared with
 * valgrind's under the same allocator, and with the program run without
 * memcheck for what C++ promises on failure.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* valgrind's --soname-synonyms pattern for allocator i: "*tcmalloc*"
 * from libtcmalloc_minimal.so.4. */
static const char *somalloc(int i)
{
	return i == H_GLIBC ? NULL : h_env("*%s*", h_allocators[i].name);
}

struct figures {
	uint64_t allocs, frees, bytes, failed;
	uint64_t lost[2], reachable[2];  /* definitely lost, still reachable: blocks, bytes */
};

/* cxx_new MODE under memcheck (preloaded before so); the process record.
 * extra: one more "NAME=value", or NULL. */
static struct figures memcheck_run(const char *prog, const char *mode, const char *so,
				   const char *extra, struct h_run *out)
{
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", extra,
			      NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog(prog), mode);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	/* a program killed by a signal leaves no record: out's caller says
	 * whether that is right */
	ck_assert_msg(rec != NULL || (out && r.signal), "%s %s under %s: no process record (%s); "
		      "stderr:\n%s", prog, mode, so ? so : "glibc", h_status(&r), r.err);
	if (!rec) {
		h_report_free(&rep);
		*out = r;
		return (struct figures){ 0 };
	}
	struct figures f = {
		h_u64(rec, "allocs"), h_u64(rec, "frees"), h_u64(rec, "bytes_allocated"),
		h_u64(rec, "failed_allocs"),
		{ h_count(rec, "definitely_lost", "blocks"), h_count(rec, "definitely_lost", "bytes") },
		{ h_count(rec, "still_reachable", "blocks"), h_count(rec, "still_reachable", "bytes") },
	};
	if (!strcmp(mode, "leak") && f.lost[0] == 1) {
		/* the stack starts at the program's call to operator new,
		 * under every allocator */
		for (size_t i = 0; i < h_nleaks(rec); i++) {
			const struct h_json *l = h_json_at(h_json_get(rec, "leaks"), i);
			if (strcmp(h_str(l, "kind"), "definitely_lost") == 0)
				H_EXPECT_FRAME(rec, i, 0, "leak");
		}
	}
	h_report_free(&rep);
	if (out)
		*out = r;
	else
		h_run_free(&r);
	return f;
}

/* The same under valgrind (without memcheck), with the shipped files for
 * the allocators' own blocks; false when valgrind is not installed. */
static bool valgrind_run(int i, const char *so, const char *mode, struct figures *f)
{
	const char *vg = h_valgrind_path();
	if (!vg)
		return false;
	const char *dir = h_env("%s/../suppressions", h_build());
	const char *argv[8];
	int n = 0;
	argv[n++] = vg;
	argv[n++] = "--leak-check=full";
	argv[n++] = h_env("--suppressions=%s/libstdcxx.supp", dir);
	argv[n++] = h_env("--suppressions=%s/tcmalloc.supp", dir);
	if (somalloc(i))
		argv[n++] = h_env("--soname-synonyms=somalloc=%s", somalloc(i));
	argv[n++] = h_prog("cxx_new");
	argv[n++] = mode;
	argv[n] = NULL;
	const char *env[] = { so ? h_env("LD_PRELOAD=%s", so) : NULL, NULL };
	struct h_run v;
	ck_assert_msg(h_run(&v, argv, env, 0, NULL) == 0, "cannot start valgrind");
	ck_assert_msg(v.exit_code == 0, "valgrind cxx_new %s under %s: %s; stderr:\n%s", mode,
		      h_allocators[i].name, h_status(&v), v.err);
	ck_assert_msg(h_valgrind_heap_usage(v.err, &f->allocs, &f->frees, &f->bytes),
		      "no heap usage in valgrind's output:\n%s", v.err);
	struct h_vg_leaks l;
	ck_assert_msg(h_valgrind_leaks(v.err, &l, 1) == 1, "no leak summary:\n%s", v.err);
	f->lost[0] = l.blocks[HVG_DEF];
	f->lost[1] = l.bytes[HVG_DEF];
	f->reachable[0] = l.blocks[HVG_REA];
	f->reachable[1] = l.bytes[HVG_REA];
	h_run_free(&v);
	return true;
}

static void expect_eq(int i, const char *what, uint64_t got, uint64_t want)
{
	ck_assert_msg(got == want, "under %s: %s %llu, expected %llu", h_allocators[i].name, what,
		      (unsigned long long)got, (unsigned long long)want);
}

/* A program that leaks one new'ed object: one 32-byte block definitely
 * lost and one still reachable under every allocator, and the counts
 * valgrind gives under the same allocator.  Both tools also count what
 * the C++ runtime and the allocator allocate before main (libstdc++'s
 * 72,704-byte emergency pool): under glibc that is all there is, and it
 * is counted as valgrind counts it; the program's own calls are what
 * "leak" adds to "empty". */
START_TEST(test_leak_counted_as_valgrind_counts_it)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	struct figures e = memcheck_run("cxx_new", "empty", so, NULL, NULL);
	struct figures m = memcheck_run("cxx_new", "leak", so, NULL, NULL);
	expect_eq(_i, "definitely lost blocks", m.lost[0], 1);
	expect_eq(_i, "definitely lost bytes", m.lost[1], 32);
	expect_eq(_i, "still reachable bytes", m.reachable[1], 32);
	expect_eq(_i, "program's own allocations", m.allocs - e.allocs, 22);
	ck_assert_msg(e.bytes >= 72704 && e.allocs >= 1, "under %s: %llu bytes in %llu "
		      "allocations before main, expected libstdc++'s pool counted", h_allocators[_i].name,
		      (unsigned long long)e.bytes, (unsigned long long)e.allocs);
	struct figures ve, vm;
	if (!valgrind_run(_i, so, "empty", &ve) || !valgrind_run(_i, so, "leak", &vm)) {
		printf("note: valgrind not installed; cxx_new checked against its own figures\n");
		return;
	}
	expect_eq(_i, "allocs (the program's own)", m.allocs - e.allocs, vm.allocs - ve.allocs);
	expect_eq(_i, "frees (the program's own)", m.frees - e.frees, vm.frees - ve.frees);
	expect_eq(_i, "bytes allocated (the program's own)", m.bytes - e.bytes, vm.bytes - ve.bytes);
	expect_eq(_i, "definitely lost bytes, valgrind's", m.lost[1], vm.lost[1]);
	expect_eq(_i, "still reachable bytes, valgrind's", m.reachable[1], vm.reachable[1]);
	if (!so) {
		/* glibc: nothing but the pool before main, in both */
		expect_eq(_i, "allocs before main, valgrind's", e.allocs, ve.allocs);
		expect_eq(_i, "bytes before main, valgrind's", e.bytes, ve.bytes);
	}
}
END_TEST

/* Counting only, the same calls and bytes. */
START_TEST(test_count_only_counts_the_same)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	struct figures t = memcheck_run("cxx_new", "leak", so, NULL, NULL);
	struct figures c = memcheck_run("cxx_new", "leak", so, "MEMCHECK_TRACK=0", NULL);
	expect_eq(_i, "allocs, count-only", c.allocs, t.allocs);
	expect_eq(_i, "frees, count-only", c.frees, t.frees);
	expect_eq(_i, "bytes allocated, count-only", c.bytes, t.bytes);
}
END_TEST

/* What C++ promises on failure (std::bad_alloc, nothrow's NULL, the
 * new_handler) is what the allocator does without memcheck: the same exit
 * status and message (Debian's mimalloc, built as C, aborts where the
 * others throw).  Where the program goes on, the 1,000 new/delete pairs
 * after the failures are all counted: nothing memcheck keeps per thread
 * is left behind by an exception thrown through it. */
START_TEST(test_failures_behave_as_without_memcheck)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	struct h_run bare, r;
	const char *env[] = { so ? h_env("LD_PRELOAD=%s", so) : NULL, NULL };
	H_RUN(&bare, 0, NULL, env, h_prog("cxx_new"), "fail");
	struct figures e = memcheck_run("cxx_new", "empty", so, NULL, NULL);
	struct figures f = memcheck_run("cxx_new", "fail", so, NULL, &r);
	ck_assert_msg(r.exit_code == bare.exit_code && r.signal == bare.signal &&
			      strcmp(r.err, bare.err) == 0,
		      "cxx_new fail under %s: %s, stderr \"%s\"; without memcheck %s, stderr \"%s\"",
		      h_allocators[_i].name, h_status(&r), r.err, h_status(&bare), bare.err);
	if (bare.exit_code == 0) {
		ck_assert_msg(f.allocs - e.allocs >= 1000 && f.frees - e.frees >= 1000 &&
				      f.failed >= 1,
			      "cxx_new fail under %s: %llu allocs, %llu frees, %llu failed; "
			      "expected the 1,000 pairs and the failures counted", h_allocators[_i].name,
			      (unsigned long long)(f.allocs - e.allocs),
			      (unsigned long long)(f.frees - e.frees), (unsigned long long)f.failed);
	}
	h_run_free(&bare);
	h_run_free(&r);
}
END_TEST

/* MEMCHECK_FAIL_NTH=1 fails the program's first operator new as the C++
 * runtime fails it under glibc: the new_handler runs once, the retry
 * succeeds; counted as one failed allocation and the 10 made. */
START_TEST(test_injected_failure_runs_the_new_handler)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	struct h_run r;
	struct figures e = memcheck_run("cxx_new", "empty", so, NULL, NULL);
	struct figures f = memcheck_run("cxx_new", "inject", so, "MEMCHECK_FAIL_NTH=1", &r);
	ck_assert_msg(r.exit_code == 0, "cxx_new inject under %s: %s; stderr:\n%s", h_allocators[_i].name,
		      h_status(&r), r.err);
	expect_eq(_i, "failed allocations", f.failed, 1);
	expect_eq(_i, "allocs", f.allocs - e.allocs, 10);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	setenv("H_TIMEOUT", "60", 0); /* valgrind */
	TCase *tc = h_tcase("cxx", 240);
	tcase_add_loop_test(tc, test_leak_counted_as_valgrind_counts_it, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, test_count_only_counts_the_same, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, test_failures_behave_as_without_memcheck, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, test_injected_failure_runs_the_new_handler, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
