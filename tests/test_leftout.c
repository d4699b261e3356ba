/*
 * test_leftout.c - a program MEMCHECK_PROGRAMS leaves out pays no more
 * than a preload that only forwards (bench/null_interpose.c), and gets
 * what the allocator alone gives it.  Under each allocator,
 * tests/prog/plain_churn (malloc, calloc, realloc and free, nothing
 * else) is run left out with memcheck preloaded:
 *
 * - its output (the sum of the usable sizes the allocator handed out,
 *   and errno after the loop: mimalloc's own start-up sets it) is the
 *   bare program's;
 * - under callgrind, at two lengths, the instructions a round costs (the
 *   slope: start-up and exit drop out) exceed the forwarding preload's by
 *   at most PER_CALL instructions for each of its three calls.  Each of
 *   memcheck's wrappers first tests what its measured paths need (fault
 *   injection, the thread's counters, the guard, tracking), then the one
 *   flag of a left-out program, and jumps to the allocator: ~10 to 30
 *   instructions where the forwarding preload has 3.  Before, a left-out
 *   program took the wrappers' slow paths: ~225 instructions a round over
 *   the preload, where the bound allows 96.
 *
 * Instruction counts under callgrind are the same from run to run, so
 * the bound is not a timing.  Without valgrind the cost rows are skipped.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define LEFT_OUT "MEMCHECK_PROGRAMS=no-program-is-named-so"
#define ROUNDS_A "20000"
#define ROUNDS_B "40000"
#define PER_CALL 32

/* LD_PRELOAD=first [the allocator], as an environment entry. */
static const char *preload(const char *first, int alloc)
{
	const char *soname = h_allocators[alloc].soname;
	const char *so = soname ? h_allocator_so(soname) : NULL;
	if (!first)
		return so ? h_env("LD_PRELOAD=%s", so) : "LD_PRELOAD=";
	return so ? h_env("LD_PRELOAD=%s %s", first, so) : h_env("LD_PRELOAD=%s", first);
}

/* The row's output is the bare program's under the same allocator. */
H_CHECK(as_bare)
{
	struct h_res b;
	H_EXEC(&b, .prog = c->run.prog, .args = c->run.args, .no_report = true, .text = "",
	       .env = H_LIST(preload(NULL, x->alloc)));
	h_expect_exit(&b, 0);
	ck_assert_msg(strcmp(b.r.out, x->r.out) == 0,
		      "%s: printed \"%s\", the bare program \"%s\"", x->label, x->r.out, b.r.out);
	h_res_free(&b);
}

/* Instructions callgrind counted in plain_churn ROUNDS with env. */
static unsigned long long instructions(const char *vg, const char *rounds, const char *const *env)
{
	struct h_res r;
	H_EXEC(&r, .prog = vg,
	       .args = H_LIST("--tool=callgrind", "--callgrind-out-file=/dev/null",
			      h_prog("plain_churn"), rounds),
	       .env = env, .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&r, 0);
	const char *at = strstr(r.r.err, "Collected : ");
	ck_assert_msg(at != NULL, "no \"Collected\" line in callgrind's output:\n%s", r.r.err);
	unsigned long long n = strtoull(at + strlen("Collected : "), NULL, 10);
	h_res_free(&r);
	return n;
}

/* A round left out costs the forwarding preload's within PER_CALL
 * instructions a call. */
H_CHECK(costs_a_forwarding_preload)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", x->label);
		return;
	}
	const char *mc = h_env("%s/libmemcheck.so", h_build());
	const char *fwd = h_env("%s/tests/libnull_interpose.so", h_build());
	const char *const *left = H_LIST(LEFT_OUT, preload(mc, x->alloc));
	const char *const *null = H_LIST(preload(fwd, x->alloc));
	long long rounds = atoll(ROUNDS_B) - atoll(ROUNDS_A);
	long long l = (long long)(instructions(vg, ROUNDS_B, left) - instructions(vg, ROUNDS_A, left));
	long long f = (long long)(instructions(vg, ROUNDS_B, null) - instructions(vg, ROUNDS_A, null));
	printf("test_leftout: %s: %.1f instructions a round left out, %.1f forwarding only\n",
	       h_allocators[x->alloc].name, (double)l / (double)rounds, (double)f / (double)rounds);
	ck_assert_msg(l - f <= 3 * PER_CALL * rounds,
		      "%s: a round costs %.1f instructions left out, %.1f with a preload that "
		      "only forwards: more than %d a call over it",
		      x->label, (double)l / (double)rounds, (double)f / (double)rounds, PER_CALL);
}

#define CHURN(...) .run = { .prog = "plain_churn", .args = H_LIST(__VA_ARGS__), \
			    .flags = H_PRELOAD, .no_report = true, .env = H_LIST(LEFT_OUT) }
static const struct h_case cases[] = {
	{ "left out: what the allocator alone gives", CHURN("3000", "usable"), .check = as_bare },
	{ "left out: the cost of a forwarding preload", CHURN("10"),
	  .check = costs_a_forwarding_preload },
	/* a handler's signals map nothing of memcheck's (a left-out dash
	 * reserved 2 MiB at its first SIGCHLD: signals.c's trampoline) */
	{ "left out: signals handled, nothing mapped",
	  .run = { .prog = "plain_leftout_signal", .flags = H_PRELOAD, .no_report = true,
		   .env = H_LIST(LEFT_OUT) },
	  .check = as_bare },
};

int main(void)
{
	TCase *tc = h_tcase("leftout", 300);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
