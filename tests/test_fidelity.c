/*
 * test_fidelity.c - memcheck does not change what the allocator does: a
 * program's peak RSS (getrusage of the child) under memcheck equals its
 * peak under a preload that only forwards malloc, calloc, realloc and
 * free (bench/null_interpose.c), within max(3%, 1.5 MiB), under each
 * allocator, for allocation patterns whose peak depends on what the
 * allocator does with freed memory (tests/prog/plain_shapes.c and the same
 * three phases in C++, tests/prog/cxx_new.cc).
 *
 * Why a forwarding preload and not the bare program: an interposer is
 * what memcheck is, and the bare and forwarded peaks agree anyway.  What
 * this catches is memcheck's own doing: a block memcheck once had the
 * allocator serve at start-up made mimalloc 2.0.9 purge early, for a peak
 * of 73 MB instead of 99.4 MB on "phases".
 *
 * jemalloc and mimalloc purge on a timer, which makes their peaks vary
 * with load (mimalloc, "growth": 45.3 or 47.3 MB, either preload): every
 * run turns the timers off (MALLOC_CONF; mimalloc's delay made 100 s, the
 * name mimalloc 2.0 reads and the one later versions do).  The early
 * purge memcheck caused did not depend on the delay.  What is left varies by
 * a couple of MiB from run to run where the peak depends on where the
 * kernel puts a mapping (tcmalloc, "growth": 53.6 to 56.2 MB with either
 * preload): a pair outside the tolerance is measured again, up to three
 * times each, and the lowest peaks compared.
 *
 * A row is a shape in a mode, run under memcheck under each allocator;
 * its callback runs the forwarding preload and, for a pair outside the
 * tolerance, both again.  Count-only is the one mode: memcheck's own
 * memory is in the process's RSS when it tracks blocks (its table), so
 * tracking joins the table once that memory is kept out of the figures.
 * No report is written (.no_report), as before the rows: nothing but the
 * program's own allocations differs between the two preloads.
 *
 * And the figures are the program's, not memcheck's: a thread's DTV,
 * which has an entry for libmemcheck's own TLS module, is counted as
 * valgrind counts it with the same allocator loaded (the "threads'
 * DTVs" rows, which read the report).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NO_PURGE_TIMER "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1", \
	"MIMALLOC_DECOMMIT_DELAY=100000", "MIMALLOC_PURGE_DELAY=100000"

/* Peak RSS in KiB of spec's run, which must exit 0. */
static long peak(const struct h_spec *spec)
{
	struct h_res x;
	h_exec(&x, spec);
	h_expect_exit(&x, 0);
	long kib = x.r.maxrss_kib;
	h_res_free(&x);
	return kib;
}

/* The row's peak under memcheck against the same program's under the
 * forwarding preload (LD_PRELOAD=libnull_interpose.so [allocator]). */
H_CHECK(peak_as_with_a_forwarding_preload)
{
	const char *soname = h_allocators[x->alloc].soname;
	const char *so = soname ? h_allocator_so(soname) : NULL;
	const char *null_so = h_env("%s/tests/libnull_interpose.so", h_build());
	struct h_spec fwd_run = { .prog = c->run.prog, .args = c->run.args, .alloc = x->alloc,
				  .no_report = true, .text = "",
				  .env = H_LIST(NO_PURGE_TIMER,
						so ? h_env("LD_PRELOAD=%s %s", null_so, so)
						   : h_env("LD_PRELOAD=%s", null_so)) };
	struct h_spec mc_run = c->run;
	mc_run.alloc = x->alloc;
	long fwd = 0, mc = x->r.maxrss_kib, tol = 0;
	for (int k = 0; k < 3 && (k == 0 || labs(mc - fwd) > tol); k++) {
		long f = peak(&fwd_run);
		long m = k == 0 ? mc : peak(&mc_run);
		fwd = k == 0 || f < fwd ? f : fwd;
		mc = m < mc ? m : mc;
		tol = fwd * 3 / 100 > 1536 ? fwd * 3 / 100 : 1536;
	}
	printf("test_fidelity: %s, %s: forwarding %ld KiB, memcheck %ld KiB\n", c->name,
	       h_allocators[x->alloc].name, fwd, mc);
	ck_assert_msg(labs(mc - fwd) <= tol,
		      "%s: peak RSS %ld KiB, %ld KiB with a preload that only forwards "
		      "(tolerance %ld KiB): memcheck changed what the allocator does",
		      x->label, mc, fwd, tol);
}

/* PROG ARG under memcheck, count-only */
#define COUNT_ONLY(prog_, arg)                                                      \
	.run = { .prog = prog_, .args = H_LIST(arg), .flags = H_PRELOAD, .no_report = true, \
		 .env = H_LIST(NO_PURGE_TIMER, "MEMCHECK_TRACK=0") },                          \
	.check = peak_as_with_a_forwarding_preload

/* ---- the threads' DTVs, as bare ------------------------------------- */

/* Bytes allocated by PROG ARG: memcheck's (the row's mode, under x's
 * allocator) and valgrind's "total heap usage" with the same allocator
 * preloaded (valgrind still serves every malloc, but the allocator's TLS
 * module and the libstdc++ jemalloc and tcmalloc bring stay loaded, as
 * under memcheck). */
static void dtv_bytes(const struct h_res *x, const struct h_case *c, const char *arg,
		      uint64_t *mc, uint64_t *vg)
{
	const char *soname = h_allocators[x->alloc].soname;
	const char *so = soname ? h_allocator_so(soname) : NULL;
	struct h_res m, v;
	struct h_spec run = c->run;
	run.alloc = x->alloc;
	run.args = H_LIST(arg);
	h_exec(&m, &run);
	h_expect_exit(&m, 0);
	*mc = h_u64(h_rec(&m, "process"), "bytes_allocated");
	h_res_free(&m);
	H_EXEC(&v, .prog = h_valgrind_path(), .args = H_LIST("--leak-check=no", h_prog(c->run.prog), arg),
	       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL, .no_report = true, .text = "",
	       .timeout = 120);
	h_expect_exit(&v, 0);
	uint64_t va, vf;
	ck_assert_msg(h_valgrind_heap_usage(v.r.err, &va, &vf, vg),
		      "no \"total heap usage\" from valgrind:\n%s", v.r.err);
	h_res_free(&v);
}

/* libmemcheck's own TLS module adds an entry to the DTV the dynamic
 * linker allocates for each thread: 16 bytes a thread more than bare,
 * under every allocator (b90c937: plain_joined 5, 1,650 bytes against
 * valgrind's 1,570 under glibc; 4 threads more 64 bytes more than
 * valgrind's under the four allocators, tracking and count-only), which
 * account.c now counts as memcheck's.  What the threads add (5 against
 * 1 thread) compared, so that the allocators' own start-up calls, which
 * memcheck does not all see (tcmalloc's), cancel out. */
/* What the row's program allocates more with argument `more` than with
 * `base`, under memcheck and under valgrind: the same (what: the
 * difference's name in the messages). */
static void more_as_valgrinds(const struct h_res *x, const struct h_case *c, const char *base,
			      const char *more, const char *what)
{
	if (!h_valgrind_path()) {
		printf("note: valgrind not installed; skipping\n");
		return;
	}
	uint64_t m1, v1, m2, v2;
	dtv_bytes(x, c, base, &m1, &v1);
	dtv_bytes(x, c, more, &m2, &v2);
	printf("test_fidelity: %s, %s: %s: memcheck %llu bytes, valgrind %llu\n", c->name,
	       h_allocators[x->alloc].name, what, (unsigned long long)(m2 - m1),
	       (unsigned long long)(v2 - v1));
	ck_assert_msg(m2 - m1 == v2 - v1,
		      "%s: %s: %llu bytes more under memcheck, %llu under valgrind (%s: %llu, "
		      "%llu; %s: %llu, %llu)", x->label, what, (unsigned long long)(m2 - m1),
		      (unsigned long long)(v2 - v1), base, (unsigned long long)m1,
		      (unsigned long long)v1, more, (unsigned long long)m2, (unsigned long long)v2);
}

/* libmemcheck's own TLS module adds an entry to the DTV the dynamic
 * linker allocates for each thread: 16 bytes a thread more than bare,
 * under every allocator (b90c937: plain_joined 5, 1,650 bytes against
 * valgrind's 1,570 under glibc; 4 threads more 64 bytes more than
 * valgrind's under the four allocators, tracking and count-only), which
 * account.c now counts as memcheck's.  What the threads add (5 against
 * 1 thread) compared, so that the allocators' own start-up calls, which
 * memcheck does not all see (tcmalloc's), cancel out. */
H_CHECK(threads_dtvs_as_valgrinds)
{
	more_as_valgrinds(x, c, "1", "5", "4 threads more");
}

/* A cached stack's DTV grown inside pthread_create (the C library's
 * _dl_resize_dtv, a realloc, for the libraries with TLS dlopened since
 * the stack's first thread: tests/prog/plain_dtv_last cached), and a
 * running thread's own grown at its touch of one (mode grown), counted
 * as valgrind counts it: what the mode allocates more than the same
 * program's "exit" mode, under memcheck and under valgrind (c7d4a67: 16
 * bytes more under memcheck, the four allocators, both modes). */
H_CHECK(grown_dtv_as_valgrinds)
{
	more_as_valgrinds(x, c, "exit", c->run.args[0], "the grown DTV's run more");
}

/* The main thread's DTV, made at start-up by the dynamic linker's own
 * allocator, grown at its first touch of a library with TLS dlopened
 * past its last entry (_dl_resize_dtv's malloc; tests/prog/plain_dtv_last
 * main): what "main" allocates more than "mainstay" (the same copies
 * loaded, none touched past the DTV), as valgrind counts it (fca1a6f:
 * 528 bytes where valgrind counts 512 under glibc, 16 more under the
 * four allocators, both modes). */
H_CHECK(main_dtv_as_valgrinds)
{
	more_as_valgrinds(x, c, "mainstay", "main", "the main thread's grown DTV's run more");
}

/* The threads the C library starts itself (tests/prog/plain_libc_threads:
 * a SIGEV_THREAD timer's helper and expiries' threads, an aio_read's
 * worker), their DTVs counted as valgrind counts them: what the row's
 * argument allocates more than "none" (c7d4a67: 32 and 16 bytes more
 * than valgrind under glibc, 832 and 3,936 against 800 and 3,920). */
H_CHECK(libc_threads_as_valgrinds)
{
	more_as_valgrinds(x, c, "none", c->run.args[0], "the C library's threads");
}

/* The same after a library with TLS was dlopened (tls-timer against
 * tls-none): the helper thread's DTV, made from the main thread, then
 * has one entry more than the main thread's own (the new module's), the
 * length the calloc had to match (0c24e7b: 16 bytes more, 848 against
 * valgrind's 832 under glibc, both modes). */
H_CHECK(libc_threads_tls_as_valgrinds)
{
	more_as_valgrinds(x, c, "tls-none", c->run.args[0], "the C library's threads");
}

#define LIBC_THREADS(kind, mode)                                                     \
	.run = { .prog = "plain_libc_threads", .args = H_LIST(kind), .flags = H_PRELOAD,   \
		 .env = H_LIST("MEMCHECK_TRACK=" mode) },                                     \
	.record = "process", .check = libc_threads_as_valgrinds

#define LIBC_THREADS_TLS(kind, mode)                                                 \
	.run = { .prog = "plain_libc_threads", .args = H_LIST(kind), .flags = H_PRELOAD,   \
		 .env = H_LIST("MEMCHECK_TRACK=" mode) },                                     \
	.record = "process", .check = libc_threads_tls_as_valgrinds

#define GROWN(how, mode)                                                             \
	.run = { .prog = "plain_dtv_last", .args = H_LIST(how), .flags = H_PRELOAD,        \
		 .env = H_LIST("MEMCHECK_TRACK=" mode) },                                     \
	.record = "process", .check = grown_dtv_as_valgrinds

#define MAIN_DTV(mode)                                                               \
	.run = { .prog = "plain_dtv_last", .args = H_LIST("main"), .flags = H_PRELOAD,     \
		 .env = H_LIST("MEMCHECK_TRACK=" mode) },                                     \
	.record = "process", .check = main_dtv_as_valgrinds

#define THREADS(mode, ...)                                                          \
	.run = { .prog = "plain_joined", .args = H_LIST("5"), .flags = H_PRELOAD,        \
		 .env = H_LIST("MEMCHECK_TRACK=" mode, __VA_ARGS__) },                        \
	.record = "process", .check = threads_dtvs_as_valgrinds

static const struct h_case cases[] = {
	{ "threads' DTVs, tracking", THREADS("1", NULL) },
	{ "threads' DTVs, count-only", THREADS("0", NULL) },
	/* where memcheck arms no alternate stack in the threads, which then
	 * start bare (c7d4a67: 16 bytes a thread more, 1,650 against 1,570
	 * under glibc, both modes) */
	{ "threads' DTVs, no fatal handlers, tracking", THREADS("1", "MEMCHECK_FATAL_TIMEOUT=0") },
	{ "threads' DTVs, no fatal handlers, count-only", THREADS("0", "MEMCHECK_FATAL_TIMEOUT=0") },
	{ "a cached stack's DTV grown, tracking", GROWN("cached", "1") },
	{ "a cached stack's DTV grown, count-only", GROWN("cached", "0") },
	/* and a thread's own, grown at its first touch of a library's TLS
	 * loaded since it started (c7d4a67: 16 bytes more, the four
	 * allocators, both modes) */
	{ "a thread's own DTV grown, tracking", GROWN("grown", "1") },
	{ "a thread's own DTV grown, count-only", GROWN("grown", "0") },
	{ "the main thread's DTV grown, tracking", MAIN_DTV("1") },
	{ "the main thread's DTV grown, count-only", MAIN_DTV("0") },
	{ "a SIGEV_THREAD timer's threads' DTVs, tracking", LIBC_THREADS("timer", "1") },
	{ "a SIGEV_THREAD timer's threads' DTVs, count-only", LIBC_THREADS("timer", "0") },
	{ "a SIGEV_THREAD timer's threads' DTVs after a TLS dlopen, tracking",
	  LIBC_THREADS_TLS("tls-timer", "1") },
	{ "a SIGEV_THREAD timer's threads' DTVs after a TLS dlopen, count-only",
	  LIBC_THREADS_TLS("tls-timer", "0") },
	{ "aio's worker's DTV, tracking", LIBC_THREADS("aio", "1") },
	{ "aio's worker's DTV, count-only", LIBC_THREADS("aio", "0") },
	{ "phases, count-only", COUNT_ONLY("plain_shapes", "phases") },
	{ "window, count-only", COUNT_ONLY("plain_shapes", "window") },
	{ "growth, count-only", COUNT_ONLY("plain_shapes", "growth") },
	{ "C++ phases, count-only", COUNT_ONLY("cxx_new", "phases") },
};

int main(void)
{
	TCase *tc = h_tcase("fidelity", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
