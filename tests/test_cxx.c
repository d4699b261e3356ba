/*
 * test_cxx.c - C++ operator new and delete (lib/cxxnew.c) under each of
 * the four allocators: mimalloc, jemalloc and tcmalloc serve them without
 * calling malloc, and memcheck must count them all the same.  The
 * program is tests/prog/cxx_new.cc; its figures are compared with
 * valgrind's under the same allocator, and with the program run without
 * memcheck for what C++ promises on failure.
 *
 * Four rows under every allocator: the program's mode, what its record
 * must show, and a callback for the runs it is compared with (the
 * program's "empty" mode for what the runtime allocates before main,
 * valgrind, the run without memcheck).
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

/* A process record's figures; a leak of one block is checked where it
 * starts: at the program's call to operator new, under every allocator,
 * in the function named as valgrind names it ("leak()"). */
static struct figures figures_of(const struct h_json *rec, const char *mode)
{
	struct figures f = {
		h_u64(rec, "allocs"), h_u64(rec, "frees"), h_u64(rec, "bytes_allocated"),
		h_u64(rec, "failed_allocs"),
		{ h_count(rec, "definitely_lost", "blocks"), h_count(rec, "definitely_lost", "bytes") },
		{ h_count(rec, "still_reachable", "blocks"), h_count(rec, "still_reachable", "bytes") },
	};
	if (!strcmp(mode, "leak") && f.lost[0] == 1) {
		for (size_t i = 0; i < h_nleaks(rec); i++) {
			const struct h_json *l = h_json_at(h_json_get(rec, "leaks"), i);
			if (strcmp(h_str(l, "kind"), "definitely_lost") == 0)
				H_EXPECT_FRAME(rec, i, 0, "leak()");
		}
	}
	return f;
}

/* cxx_new MODE under memcheck and allocator a, with env (may be NULL);
 * its process record's figures. */
static struct figures memcheck_run(int a, const char *mode, const char *const *env)
{
	struct h_res x;
	H_EXEC(&x, .prog = "cxx_new", .args = H_LIST(mode), .alloc = a, .flags = H_PRELOAD,
	       .env = env);
	struct figures f = figures_of(h_rec(&x, "process"), mode);
	h_res_free(&x);
	return f;
}

/* The same under valgrind (without memcheck), with the shipped files for
 * the allocators' own blocks; false when valgrind is not installed. */
static bool valgrind_run(int i, const char *mode, struct figures *f)
{
	const char *vg = h_valgrind_path();
	if (!vg)
		return false;
	const char *dir = h_env("%s/../suppressions", h_build());
	const char *so = h_allocators[i].soname ? h_allocator_so(h_allocators[i].soname) : NULL;
	const char *args[7];
	int n = 0;
	args[n++] = "--leak-check=full";
	args[n++] = h_env("--suppressions=%s/libstdcxx.supp", dir);
	args[n++] = h_env("--suppressions=%s/tcmalloc.supp", dir);
	if (somalloc(i))
		args[n++] = h_env("--soname-synonyms=somalloc=%s", somalloc(i));
	args[n++] = h_prog("cxx_new");
	args[n++] = mode;
	args[n] = NULL;
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "",
	       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL);
	h_expect_exit(&v, 0);
	ck_assert_msg(h_valgrind_heap_usage(v.r.err, &f->allocs, &f->frees, &f->bytes),
		      "no heap usage in valgrind's output:\n%s", v.r.err);
	struct h_vg_leaks l;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &l, 1) == 1, "no leak summary:\n%s", v.r.err);
	f->lost[0] = l.blocks[HVG_DEF];
	f->lost[1] = l.bytes[HVG_DEF];
	f->reachable[0] = l.blocks[HVG_REA];
	f->reachable[1] = l.bytes[HVG_REA];
	h_res_free(&v);
	return true;
}

static void expect_eq(int i, const char *what, uint64_t got, uint64_t want)
{
	ck_assert_msg(got == want, "under %s: %s %llu, expected %llu", h_allocators[i].name, what,
		      (unsigned long long)got, (unsigned long long)want);
}

/* A program that leaks one new'ed object (the row's figures), and the
 * counts valgrind gives under the same allocator.  Both tools also count
 * what the C++ runtime and the allocator allocate before main
 * (libstdc++'s 72,704-byte emergency pool): under glibc that is all there
 * is, and it is counted as valgrind counts it; the program's own calls
 * are what "leak" adds to "empty". */
H_CHECK(leak_counted_as_valgrind_counts_it)
{
	int a = x->alloc;
	struct figures m = figures_of(rec, "leak"), e = memcheck_run(a, "empty", NULL);
	expect_eq(a, "program's own allocations", m.allocs - e.allocs, 22);
	ck_assert_msg(e.bytes >= 72704 && e.allocs >= 1, "under %s: %llu bytes in %llu "
		      "allocations before main, expected libstdc++'s pool counted", h_allocators[a].name,
		      (unsigned long long)e.bytes, (unsigned long long)e.allocs);
	struct figures ve, vm;
	if (!valgrind_run(a, "empty", &ve) || !valgrind_run(a, "leak", &vm)) {
		printf("note: valgrind not installed; cxx_new checked against its own figures\n");
		return;
	}
	expect_eq(a, "allocs (the program's own)", m.allocs - e.allocs, vm.allocs - ve.allocs);
	expect_eq(a, "frees (the program's own)", m.frees - e.frees, vm.frees - ve.frees);
	expect_eq(a, "bytes allocated (the program's own)", m.bytes - e.bytes, vm.bytes - ve.bytes);
	expect_eq(a, "definitely lost bytes, valgrind's", m.lost[1], vm.lost[1]);
	expect_eq(a, "still reachable bytes, valgrind's", m.reachable[1], vm.reachable[1]);
	if (a == H_GLIBC) {
		/* glibc: nothing but the pool before main, in both */
		expect_eq(a, "allocs before main, valgrind's", e.allocs, ve.allocs);
		expect_eq(a, "bytes before main, valgrind's", e.bytes, ve.bytes);
	}
}

/* Counting only (the row), the same calls and bytes as tracking. */
H_CHECK(count_only_counts_the_same)
{
	int a = x->alloc;
	struct figures c_ = figures_of(rec, "leak"), t = memcheck_run(a, "leak", NULL);
	expect_eq(a, "allocs, count-only", c_.allocs, t.allocs);
	expect_eq(a, "frees, count-only", c_.frees, t.frees);
	expect_eq(a, "bytes allocated, count-only", c_.bytes, t.bytes);
}

/* What C++ promises on failure (std::bad_alloc, nothrow's NULL, the
 * new_handler) is what the allocator does without memcheck: the same exit
 * status and message (Debian's mimalloc, built as C, aborts where the
 * others throw).  Where the program goes on, the 1,000 new/delete pairs
 * after the failures are all counted: nothing memcheck keeps per thread
 * is left behind by an exception thrown through it. */
H_CHECK(failures_behave_as_without_memcheck)
{
	int a = x->alloc;
	const char *so = h_allocators[a].soname ? h_allocator_so(h_allocators[a].soname) : NULL;
	struct h_res bare;
	H_EXEC(&bare, .prog = "cxx_new", .args = H_LIST("fail"), .no_report = true, .text = "",
	       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL);
	ck_assert_msg(x->r.exit_code == bare.r.exit_code && x->r.signal == bare.r.signal &&
			      strcmp(x->r.err, bare.r.err) == 0,
		      "%s: %s, stderr \"%s\"; without memcheck %s, stderr \"%s\"", x->label,
		      h_status(&x->r), x->r.err, h_status(&bare.r), bare.r.err);
	/* a program killed by a signal leaves no record; one that exits
	 * does */
	const struct h_json *r = h_record(&x->rep, "process", x->r.pid);
	ck_assert_msg(r != NULL || x->r.signal, "%s: no process record (%s); stderr:\n%s",
		      x->label, h_status(&x->r), x->r.err);
	if (bare.r.exit_code == 0) {
		struct figures e = memcheck_run(a, "empty", NULL), f = figures_of(r, "fail");
		ck_assert_msg(f.allocs - e.allocs >= 1000 && f.frees - e.frees >= 1000 &&
				      f.failed >= 1,
			      "%s: %llu allocs, %llu frees, %llu failed; expected the 1,000 pairs "
			      "and the failures counted", x->label,
			      (unsigned long long)(f.allocs - e.allocs),
			      (unsigned long long)(f.frees - e.frees), (unsigned long long)f.failed);
	}
	h_res_free(&bare);
}

/* The row's 1 failed allocation, and the 10 made. */
H_CHECK(ten_allocations_besides)
{
	struct figures e = memcheck_run(x->alloc, "empty", NULL);
	expect_eq(x->alloc, "allocs", h_u64(rec, "allocs") - e.allocs, 10);
}

/* cxx_new zero's four new of 0 bytes: counted as asked, 0 bytes, under
 * every allocator and counting only too, as valgrind counts them (its
 * "0 bytes in 1 blocks"): libstdc++'s new asks malloc for 1 byte, and
 * memcheck counted that under glibc (yaml-cpp's gtest suite: 11,626
 * bytes still reachable where valgrind says 11,625). */
H_CHECK(zero_bytes_counted_as_asked)
{
	int a = x->alloc;
	struct figures z = figures_of(rec, "zero"), e = memcheck_run(a, "empty", NULL);
	expect_eq(a, "the program's allocations", z.allocs - e.allocs, 4);
	expect_eq(a, "the program's bytes", z.bytes - e.bytes, 0);
}

#define CXX_NEW(mode, ...) .run = { .prog = "cxx_new", .args = H_LIST(mode), .flags = H_PRELOAD, __VA_ARGS__ }
static const struct h_case cases[] = {
	/* one 32-byte block definitely lost and one still reachable under
	 * every allocator */
	{ "leak counted as valgrind counts it", CXX_NEW("leak"), .record = "process",
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 32 },
		    { "still_reachable.bytes", 32 } },
	  .check = leak_counted_as_valgrind_counts_it },
	{ "count-only counts the same", CXX_NEW("leak", .env = H_LIST("MEMCHECK_TRACK=0")),
	  .record = "process", .check = count_only_counts_the_same },
	{ "new of 0 bytes counted as asked", CXX_NEW("zero"), .record = "process",
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 0 },
		    { "still_reachable.blocks", 1 }, { "still_reachable.bytes", 0 } },
	  .check = zero_bytes_counted_as_asked },
	{ "new of 0 bytes counted as asked, count-only",
	  CXX_NEW("zero", .env = H_LIST("MEMCHECK_TRACK=0")), .record = "process",
	  .check = zero_bytes_counted_as_asked },
	{ "failures behave as without memcheck", CXX_NEW("fail"), .exit = H_EXIT_ANY,
	  .check = failures_behave_as_without_memcheck },
	/* MEMCHECK_FAIL_NTH=1 fails the program's first operator new as
	 * the C++ runtime fails it under glibc: the new_handler runs once,
	 * the retry succeeds; counted as one failed allocation and the 10
	 * made. */
	{ "injected failure runs the new handler",
	  CXX_NEW("inject", .env = H_LIST("MEMCHECK_FAIL_NTH=1")),
	  .want = { { "failed_allocs", 1 } }, .check = ten_allocations_besides },
};

int main(void)
{
	setenv("H_TIMEOUT", "60", 0); /* valgrind */
	TCase *tc = h_tcase("cxx", 240);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
