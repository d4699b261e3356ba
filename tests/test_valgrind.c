/*
 * test_valgrind.c - memcheck's allocs, frees and bytes allocated equal
 * valgrind's "total heap usage" for the same program (tests/prog/
 * plain_mix: a varied, stdio-free mix; tests/prog/plain_errors leak).
 *
 * And valgrind's command line (tools/vgcompat.c) cuts and matches loss
 * records as valgrind does, under every allocator: the stacks as deep
 * as --num-callers (default 12) with the allocation function's frame
 * one of them, so that records which differ only below that depth merge
 * and the others split (tests/prog/plain_leak_depth K: two paths alike
 * down to frame K + 2); a suppression deeper than --num-callers read
 * only that deep; every record of every kind matched against the
 * suppressions where the LEAK SUMMARY is written (a check suite's
 * blocks that check.supp takes, still reachable in a passing run).  The
 * loss records' headings, LEAK SUMMARY's and ERROR SUMMARY's lines are
 * compared with valgrind's own for the same command line.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* The row's program under valgrind: its "total heap usage" must be
 * what memcheck counted in the row's run. */
H_CHECK(same_as_valgrind)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", c->run.prog);
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=no", h_prog(c->run.prog), c->run.args[0]),
	       .no_report = true, .text = "");
	h_expect_exit(&v, 0);
	uint64_t va, vf, vb;
	ck_assert_msg(h_valgrind_heap_usage(v.r.err, &va, &vf, &vb),
		      "no \"total heap usage\" line in valgrind's output:\n%s", v.r.err);
	ck_assert_msg(h_u64(rec, "allocs") == va && h_u64(rec, "frees") == vf &&
		      h_u64(rec, "bytes_allocated") == vb,
		      "%s: memcheck counted %s allocs, %s frees, %s bytes allocated; "
		      "valgrind %llu allocs, %llu frees, %llu bytes allocated", x->label,
		      h_fmt(h_u64(rec, "allocs")), h_fmt(h_u64(rec, "frees")),
		      h_fmt(h_u64(rec, "bytes_allocated")), (unsigned long long)va,
		      (unsigned long long)vf, (unsigned long long)vb);
	ck_assert_msg(va > 1000 || strcmp(c->run.prog, "plain_mix") != 0,
		      "plain_mix made only %llu allocations", (unsigned long long)va);
	h_res_free(&v);
}

/* ---- valgrind's command line against valgrind ---------------------- */

/* A deep suppression: the left path's leak, 8 frame lines, which a stack
 * cut at 3 frames matches only when it is read 3 lines deep. */
static const char deep_supp[] = "{\n   left path, deep\n   Memcheck:Leak\n"
	"   match-leak-kinds: definite\n   fun:malloc\n   fun:leaf\n   fun:step\n"
	"   fun:step\n   fun:step\n   fun:step\n   fun:step\n   fun:left\n}\n";

struct vg_row {
	const char *name;
	const char *const *words;     /* valgrind's options */
	const char *prog;
	const char *const *args;
	const char *supp;             /* a file's text, given to both, or NULL */
	bool shipped;                 /* valgrind given glibc.supp and check.supp,
				       * which memcheck reads itself */
	bool kinds_only;              /* the kinds' lines and ERROR SUMMARY alone */
};

#define DEPTH(k) .prog = "plain_leak_depth", .args = H_LIST(k)
static const struct vg_row vg_rows[] = {
	/* valgrind's default --num-callers=12: malloc and 11 frames */
	{ .name = "merged below frame 12", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), DEPTH("10") },
	{ .name = "split at frame 12", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), DEPTH("9") },
	{ .name = "--num-callers=5, merged below frame 5", .words = H_LIST("--num-callers=5",
	  "--leak-check=full", "--show-leak-kinds=all"), DEPTH("3") },
	{ .name = "--num-callers=5, split at frame 5", .words = H_LIST("--num-callers=5",
	  "--leak-check=full", "--show-leak-kinds=all"), DEPTH("2") },
	{ .name = "CTest's options", .words = H_LIST("-q", "--tool=memcheck", "--leak-check=yes",
	  "--show-reachable=yes", "--num-callers=50"), DEPTH("10") },
	{ .name = "--num-callers=65, memcheck's deepest", .words = H_LIST("--num-callers=65",
	  "--leak-check=full"), DEPTH("60") },
	{ .name = "a suppression deeper than --num-callers", .words = H_LIST("--num-callers=3",
	  "--leak-check=full"), DEPTH("10"), .supp = deep_supp },
	{ .name = "a suppression as deep as the stack", .words = H_LIST("--leak-check=full"),
	  DEPTH("10"), .supp = deep_supp },
	/* valgrind matches every record against the suppressions, shown or
	 * not: check's own blocks are suppressed, not still reachable
	 * (the suppressed figures themselves differ in the child of the
	 * test that fails: two blocks of stdio's more, in use at its end) */
	{ .name = "a passing check suite, reachable blocks suppressed",
	  .words = H_LIST("--leak-check=full"), .prog = "plain_check", .shipped = true,
	  .kinds_only = true },
	{ .name = "a passing check suite, summary", .words = H_LIST("--leak-check=summary"),
	  .prog = "plain_check", .shipped = true, .kinds_only = true },
};

/* The lines compared of text, "==PID==" made "==P==": the loss records'
 * headings and LEAK SUMMARY's and ERROR SUMMARY's lines.  numbered: the
 * records' numbers and the suppressed figures too, which under an
 * allocator other than glibc's count its own blocks, suppressed
 * (valgrind serves every block itself). */
static char *vg_lines(const char *text, bool kinds_only, bool numbered)
{
	static const char *const all[] = { "in loss record", " lost: ", "still reachable: ",
					   "suppressed: ", "ERROR SUMMARY: " };
	size_t n = kinds_only ? 2 : 0, m = 0, cap = strlen(text) + 1;
	char *out = calloc(cap, 1);
	ck_assert_ptr_nonnull(out);
	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		const char *rest = l + 2;
		while (rest < l + len && *rest >= '0' && *rest <= '9')
			rest++;
		bool take = false;
		if (!strncmp(l, "==", 2) && rest + 2 <= l + len && !strncmp(rest, "==", 2)) {
			char line[1024];
			snprintf(line, sizeof line, "%.*s", (int)(l + len - rest - 2), rest + 2);
			for (size_t i = n; i < sizeof all / sizeof all[0]; i++)
				take |= strstr(line, all[i]) != NULL;
			if (kinds_only && strstr(line, "suppressed: ") && !strstr(line, "ERROR SUMMARY"))
				take = false;
			if (!numbered && strstr(line, " in loss record "))
				strstr(line, " in loss record ")[15] = 0;
			/* a process of the allocator's blocks alone has a LEAK
			 * SUMMARY, valgrind's "All heap blocks were freed" */
			if (!numbered && strstr(line, ": 0 bytes in 0 blocks"))
				take = false;
			/* and its suppressed figures: those records' too */
			if (!numbered && strstr(line, " (suppressed: "))
				*strstr(line, " (suppressed: ") = 0;
			if (!numbered && strstr(line, "suppressed: ") && !strstr(line, "ERROR SUMMARY"))
				take = false;
			if (take)
				m += (size_t)snprintf(out + m, cap - m, "==P==%s\n", line);
		}
		l += len + (l[len] != 0);
	}
	return out;
}

static const char *const *vg_argv(const struct vg_row *r, const char *supp, bool shipped)
{
	static const char *argv[64];
	size_t n = 0;
	for (size_t i = 0; r->words[i]; i++)
		argv[n++] = r->words[i];
	if (supp)
		argv[n++] = h_env("--suppressions=%s", supp);
	if (shipped) {
		argv[n++] = h_env("--suppressions=%s/../suppressions/glibc.supp", h_build());
		argv[n++] = h_env("--suppressions=%s/../suppressions/check.supp", h_build());
	}
	argv[n++] = h_prog(r->prog);
	for (size_t i = 0; r->args && r->args[i]; i++)
		argv[n++] = r->args[i];
	argv[n] = NULL;
	return argv;
}

START_TEST(records_cut_as_valgrinds)
{
	const struct vg_row *r = &vg_rows[_i];
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", r->name);
		return;
	}
	const char *supp = NULL;
	if (r->supp) {
		supp = h_tmppath("deep.supp");
		FILE *f = fopen(supp, "w");
		ck_assert_ptr_nonnull(f);
		fputs(r->supp, f);
		fclose(f);
	}
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = vg_argv(r, supp, r->shipped), .no_report = true, .text = "",
	       .timeout = 120);
	/* -q: the records alone */
	char *text = strdup(v.r.err);
	char *head = vg_lines(text, r->kinds_only, true);
	ck_assert_msg(strstr(head, "ERROR SUMMARY") || strstr(head, "in loss record"),
		      "%s: no record nor ERROR SUMMARY from valgrind:\n%.3000s", r->name, text);
	free(head);
	h_res_free(&v);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		struct h_res x;
		H_EXEC(&x, .cli = vg_argv(r, supp, false), .no_report = true, .text = "",
		       .flags = H_EXITCODE, .alloc = i,
		       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL);
		char *want = vg_lines(text, r->kinds_only, i == H_GLIBC);
		char *got = vg_lines(x.r.err, r->kinds_only, i == H_GLIBC);
		ck_assert_msg(!strcmp(want, got), "%s under %s: valgrind's lines:\n%.1000s\n"
			      "memcheck's:\n%.1000s\nmemcheck's whole text:\n%.1000s", r->name,
			      h_allocator_name(i), want, got, x.r.err);
		free(want);
		free(got);
		h_res_free(&x);
	}
	free(text);
}
END_TEST

/* valgrind takes 1 to 500; memcheck keeps 64 frames below the
 * allocation function: beyond, a clear refusal, not a silent cut */
START_TEST(num_callers_bounds)
{
	static const struct {
		const char *word, *err;
	} bad[] = {
		{ "--num-callers=0", "expected 1 to 500" },
		{ "--num-callers=501", "expected 1 to 500" },
		{ "--num-callers=x", "expected 1 to 500" },
		{ "--num-callers=66", "at most --num-callers=65" },
		{ "--num-callers=500", "at most --num-callers=65" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct h_res x;
		H_EXEC(&x, .cli = H_LIST(bad[i].word, h_prog("plain_leak_depth"), "3"),
		       .no_report = true, .text = "", .flags = H_EXITCODE);
		h_expect_exit(&x, 2);
		ck_assert_msg(strstr(x.r.err, bad[i].err) && strstr(x.r.err, bad[i].word),
			      "%s: expected \"%s\", stderr:\n%s", bad[i].word, bad[i].err, x.r.err);
		h_res_free(&x);
	}
}
END_TEST

static const struct h_case cases[] = {
	{ "a varied mix", .allocators = H_ONLY(H_GLIBC), .check = same_as_valgrind,
	  .run = { .prog = "plain_mix", .args = H_LIST("3000"), .flags = H_PRELOAD },
	  .record = "process" },
	{ "a leaking program", .allocators = H_ONLY(H_GLIBC), .check = same_as_valgrind,
	  .run = { .prog = "plain_errors", .args = H_LIST("leak"), .flags = H_PRELOAD },
	  .record = "process" },
};

int main(void)
{
	TCase *tc = h_tcase("valgrind", 300);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, records_cut_as_valgrinds, 0,
			    (int)(sizeof vg_rows / sizeof vg_rows[0]));
	tcase_add_test(tc, num_callers_bounds);
	return h_run_suite(NULL);
}
