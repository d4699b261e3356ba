/*
 * test_valgrind.c - memcheck's allocs, frees and bytes allocated equal
 * valgrind's "total heap usage" for the same program (tests/prog/
 * plain_mix: a varied, stdio-free mix; tests/prog/plain_errors leak;
 * tests/prog/plain_stdio_exit, whose streams' blocks exit's stdio
 * clean-up frees after the report, against valgrind without freeres).
 *
 * And valgrind's command line (tools/vgcompat.c) cuts and matches loss
 * records as valgrind does, under every allocator: the stacks as deep
 * as --num-callers (default 12) with the allocation function's frame
 * one of them, so that records which differ only below that depth merge
 * and the others split (tests/prog/plain_leak_depth K: two paths alike
 * down to frame K + 2; tests/prog/cxx_leak_depth K, the same through the
 * program's own operator new, which valgrind replaces: its frame 1, the
 * operator's callers below it); a suppression deeper than --num-callers read
 * only that deep; every record of every kind matched against the
 * suppressions where the LEAK SUMMARY is written (a check suite's
 * blocks that check.supp takes, still reachable in a passing run).  The
 * loss records' headings, LEAK SUMMARY's and ERROR SUMMARY's lines are
 * compared with valgrind's own for the same command line.  Threads
 * still running at the exit: their DTVs listed as valgrind lists them
 * (tests/prog/plain_dtv_running).  Signal handlers that lose a block:
 * its stack as valgrind's, without memcheck's trampoline, and, on the
 * program's alternate stack, definitely lost as valgrind says
 * (plain_leak_altstack).  An address a live frame keeps after a free,
 * reused at once by the allocator: the limit memcheck(7) gives, pinned
 * (plain_leak_stale).  A thread that ends between memcheck's looks at
 * the process's threads at the exit (plain_freeres_race, its system
 * calls traced): the blocks the freeres functions memcheck skipped would
 * free counted freed by the first answer, not suppressed.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* The row's program under valgrind (freeres: its --run-libc-freeres):
 * its "total heap usage" must be what memcheck counted in the row's run. */
static void heap_usage_agrees(const struct h_res *x, const struct h_case *c,
			      const struct h_json *rec, const char *freeres)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", c->run.prog);
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=no", freeres, h_prog(c->run.prog),
					      c->run.args[0]),
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

H_CHECK(same_as_valgrind)
{
	heap_usage_agrees(x, c, rec, "--run-libc-freeres=yes");
}

/* Without __libc_freeres, which frees the streams' buffers: what exit's
 * stdio clean-up frees after the report, a free in both. */
H_CHECK(same_as_valgrind_freeres_off)
{
	heap_usage_agrees(x, c, rec, "--run-libc-freeres=no");
}

/* ---- valgrind's command line against valgrind ---------------------- */

/* valgrind's path, or NULL, said on stdout, where it is not installed. */
static const char *valgrind_or_note(void)
{
	const char *vg = h_valgrind_path();
	if (!vg)
		printf("note: valgrind not installed; skipping\n");
	return vg;
}


/* A deep suppression: the left path's leak, 8 frame lines, which a stack
 * cut at 3 frames matches only when it is read 3 lines deep. */
static const char deep_supp[] = "{\n   left path, deep\n   Memcheck:Leak\n"
	"   match-leak-kinds: definite\n   fun:malloc\n   fun:leaf\n   fun:step\n"
	"   fun:step\n   fun:step\n   fun:step\n   fun:step\n   fun:left\n}\n";

/* A signal handler's lost block, its frames as valgrind shows them: the
 * handler, then the C library's signal return.  memcheck's trampoline
 * (signals.c) was a frame between the two and the entry missed (48
 * bytes definitely lost, 1 error, four allocators, on main). */
static const char handler_supp[] = "{\n   a handler's block\n   Memcheck:Leak\n"
	"   match-leak-kinds: definite\n   fun:malloc\n   fun:on_usr1\n"
	"   obj:*/libc.so.6\n}\n";

/* The dynamic linker's _dl_find_object segments, whose kind follows
 * the allocator's addresses (tests/supp/dl_find_object.supp says how). */
static const char find_object_supp[] = "{\n   dl-find-object-segments\n   Memcheck:Leak\n"
	"   match-leak-kinds: possible,reachable\n   fun:malloc\n   ...\n"
	"   fun:_dl_find_object_update\n}\n";

struct vg_row {
	const char *name;
	const char *const *words;     /* valgrind's options */
	const char *prog;
	const char *const *args;
	const char *supp;             /* a file's text, given to both, or NULL */
	bool shipped;                 /* valgrind given glibc.supp and check.supp,
				       * which memcheck reads itself */
	bool kinds_only;              /* the kinds' lines and ERROR SUMMARY alone */
	const char *const *env;       /* for both, or NULL */
	bool glibc_only;              /* compared under glibc alone (the row says why) */
};

#define DEPTH(k) .prog = "plain_leak_depth", .args = H_LIST(k)
#define CXX_DEPTH(k) .prog = "cxx_leak_depth", .args = H_LIST(k)
#define FREERES_OFF H_LIST("--leak-check=full", "--show-leak-kinds=all", "--run-libc-freeres=no")
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
	/* the program's own operator new and new[] (gdb's): valgrind's frame
	 * 1 is the operator, which it replaces in the program as in
	 * libstdc++, N - 1 of its callers below it; memcheck's stack starts
	 * inside the operator (its call of malloc), one frame short of
	 * valgrind's on main: the records that differ only at frame N were
	 * one (gdb -batch under --num-callers=6: 1,603 records, valgrind
	 * 2,188; the rows marked "split" failed on main) */
	/* (1 and 2 frames: under glibc alone, tcmalloc's start-up blocks,
	 * which go through the program's operator new too, are then told
	 * from the program's by no frame tcmalloc.supp names, as under
	 * valgrind with tcmalloc preloaded) */
	{ .name = "own operator new, --num-callers=1", .words = H_LIST("--num-callers=1",
	  "--leak-check=full", "--show-leak-kinds=all"), CXX_DEPTH("1"), .glibc_only = true },
	{ .name = "own operator new, --num-callers=2", .words = H_LIST("--num-callers=2",
	  "--leak-check=full", "--show-leak-kinds=all"), CXX_DEPTH("1"), .glibc_only = true },
	{ .name = "own operator new, --num-callers=6, split at frame 6",
	  .words = H_LIST("--num-callers=6", "--leak-check=full", "--show-leak-kinds=all"),
	  CXX_DEPTH("3") },
	{ .name = "own operator new, --num-callers=6, merged below frame 6",
	  .words = H_LIST("--num-callers=6", "--leak-check=full", "--show-leak-kinds=all"),
	  CXX_DEPTH("4") },
	{ .name = "own operator new, split at frame 12", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), CXX_DEPTH("9") },
	{ .name = "own operator new, merged below frame 12", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), CXX_DEPTH("10") },
	{ .name = "own operator new, --num-callers=50, split at frame 50",
	  .words = H_LIST("--num-callers=50", "--leak-check=full", "--show-leak-kinds=all"),
	  CXX_DEPTH("47") },
	/* --leak-resolution: records told by their first 2 (low) or 4 (med)
	 * frames, valgrind's allocation function's one of them (the
	 * program's own operator new's too); each record's stack its lowest
	 * block's.  Ignored on main: the rows marked "merged" failed there
	 * (4 records where valgrind prints 2). */
	{ .name = "--leak-resolution=low, merged below frame 2", .words = H_LIST(
	  "--leak-resolution=low", "--leak-check=full", "--show-leak-kinds=all"), DEPTH("1") },
	{ .name = "--leak-resolution=med, split at frame 4", .words = H_LIST(
	  "--leak-resolution=med", "--leak-check=full", "--show-leak-kinds=all"), DEPTH("1") },
	{ .name = "--leak-resolution=med, merged below frame 4", .words = H_LIST(
	  "--leak-resolution=med", "--leak-check=full", "--show-leak-kinds=all"), DEPTH("2") },
	{ .name = "own operator new, --leak-resolution=med, split at frame 4", .words = H_LIST(
	  "--leak-resolution=med", "--leak-check=full", "--show-leak-kinds=all"), CXX_DEPTH("1") },
	{ .name = "own operator new, --leak-resolution=med, merged below frame 4",
	  .words = H_LIST("--leak-resolution=med", "--leak-check=full", "--show-leak-kinds=all"),
	  CXX_DEPTH("2") },
	{ .name = "own operator new, --leak-resolution=low", .words = H_LIST(
	  "--leak-resolution=low", "--num-callers=6", "--leak-check=full"), CXX_DEPTH("3") },
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
	/* --run-libc-freeres=no: what __libc_freeres would free is in use at
	 * exit, and valgrind, whose own suppressions do not name it, lists
	 * it still reachable, record by record: the shipped entries marked
	 * "# freeres: libc" are not applied (stdio's buffers, the locale's
	 * data and alias table, the time zone, the name service's state and
	 * modules, iconv's modules) */
	{ .name = "--run-libc-freeres=no: stdio, locale, time zone",
	  .words = FREERES_OFF, .prog = "plain_stdio_locale", .env = H_LIST("LANG=C.UTF-8") },
	/* a process a fatal signal ends: valgrind runs neither freeres and
	 * lists what they would free, as with both off (memcheck took those
	 * blocks out, suppressed, before): a C++ program's uncaught
	 * exception, libstdc++'s pool; a C program's abort, the C library's
	 * (under glibc alone: jemalloc and tcmalloc bring libstdc++, and its
	 * pool, which valgrind, with its own allocator, does not load) */
	{ .name = "std::terminate: no freeres", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), .prog = "cxx_throw", .args = H_LIST("uncaught") },
	{ .name = "SIGABRT: no freeres", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), .prog = "plain_stdio_locale", .args = H_LIST("abort"),
	  .env = H_LIST("LANG=C.UTF-8"), .glibc_only = true },
	{ .name = "--run-libc-freeres=no: the name service",
	  .words = FREERES_OFF, .prog = "plain_audit28_nss" },
	/* the iconv module's dlopen grows _dl_find_object's table: two
	 * segments whose malloc'd address ld.so rounds up to 128 bytes,
	 * keeping the address itself as to_free inside them; the table's
	 * pointer is their start where the allocator's address was a
	 * multiple of 128 already (still reachable: mimalloc's, jemalloc's
	 * and tcmalloc's 2,304-byte blocks, and glibc's or valgrind's as the
	 * blocks before them fall, tests/test_leakkinds.c's paddings), an
	 * interior one elsewhere (possibly lost).  Suppressed on both sides
	 * (was: under glibc alone, the kinds its placement here gave) */
	{ .name = "--run-libc-freeres=no: iconv's modules",
	  .words = FREERES_OFF, .prog = "plain_audit25b_gconv", .supp = find_object_supp },
	/* what __libc_freeres leaves, valgrind lists: the objects the C
	 * library loaded for itself and does not close (getaddrinfo's
	 * libidn2 and its libunistring), which glibc.supp's entries for
	 * what freeres frees took when memcheck had run it itself */
	{ .name = "what the C library's freeres leaves: getaddrinfo's libidn2",
	  .words = H_LIST("--leak-check=full", "--show-leak-kinds=all"),
	  .prog = "plain_getaddrinfo" },
	{ .name = "a signal handler's block, suppressed as valgrind shows its stack",
	  .words = H_LIST("--leak-check=full", "--show-leak-kinds=all"),
	  .prog = "plain_leak_altstack", .args = H_LIST("none"), .supp = handler_supp },
	{ .name = "--run-cxx-freeres=no: libstdc++'s pool",
	  .words = H_LIST("--leak-check=full", "--show-leak-kinds=all", "--run-cxx-freeres=no"),
	  .prog = "cxx_throw" },
	/* streams left open at exit: ungetc's backup area, a wide stream's
	 * buffer and backup area, freed by exit's stdio clean-up after the
	 * report, listed by neither (main: still reachable, 128, 16,384 and
	 * 512 bytes; a dropped buffer in backup mode still reachable where
	 * valgrind says definitely lost) */
	{ .name = "--run-libc-freeres=no: ungetc on stdin",
	  .words = FREERES_OFF, .prog = "plain_stdio_exit", .args = H_LIST("ungetc-stdin") },
	{ .name = "--run-libc-freeres=no: ungetc on a stream never read",
	  .words = FREERES_OFF, .prog = "plain_stdio_exit", .args = H_LIST("ungetc-fresh") },
	{ .name = "--run-libc-freeres=no: fwprintf to a file",
	  .words = FREERES_OFF, .prog = "plain_stdio_exit", .args = H_LIST("fwprintf-file") },
	{ .name = "--run-libc-freeres=no: ungetwc",
	  .words = FREERES_OFF, .prog = "plain_stdio_exit", .args = H_LIST("ungetwc") },
	{ .name = "--run-libc-freeres=no: a buffer given to a stream in the backup area",
	  .words = FREERES_OFF, .prog = "plain_leak_setvbuf", .args = H_LIST("backup") },
	{ .name = "--run-libc-freeres=no: buffers given to stdin and a wide stream",
	  .words = FREERES_OFF, .prog = "plain_stdio_exit", .args = H_LIST("user-buffers") },
	{ .name = "ungetwc, freeres run", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), .prog = "plain_stdio_exit", .args = H_LIST("ungetwc") },
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

/* A suppression file of text for a row, or NULL without */
static const char *supp_file(const char *text)
{
	if (!text)
		return NULL;
	const char *path = h_tmppath("row.supp");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

START_TEST(records_cut_as_valgrinds)
{
	const struct vg_row *r = &vg_rows[_i];
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", r->name);
		return;
	}
	const char *supp = supp_file(r->supp);
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = vg_argv(r, supp, r->shipped), .no_report = true, .text = "",
	       .timeout = 120, .env = r->env);
	/* -q: the records alone */
	char *text = strdup(v.r.err);
	char *head = vg_lines(text, r->kinds_only, true);
	ck_assert_msg(strstr(head, "ERROR SUMMARY") || strstr(head, "in loss record"),
		      "%s: no record nor ERROR SUMMARY from valgrind:\n%.3000s", r->name, text);
	free(head);
	h_res_free(&v);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so) || (r->glibc_only && i != H_GLIBC))
			continue;
		const char *env[8];
		size_t ne = 0;
		for (size_t k = 0; r->env && r->env[k] && ne < 6; k++)
			env[ne++] = r->env[k];
		if (so)
			env[ne++] = h_env("LD_PRELOAD=%s", so);
		env[ne] = NULL;
		struct h_res x;
		H_EXEC(&x, .cli = vg_argv(r, supp, false), .no_report = true, .text = "",
		       .flags = H_EXITCODE, .alloc = i, .env = ne ? env : NULL);
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
 * allocation function: beyond, a clear refusal, not a silent cut.  And
 * what valgrind refuses before the run (harden46; on main the program
 * ran, exit 0 or its own): --gen-suppressions=sometimes (taken as yes),
 * an empty --log-file (a file named after the directory), a suppression
 * file that is a directory or does not parse (said by each process,
 * valgrind's "FATAL"); --xml-file's pattern was said as --log-file's. */
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
		{ "--gen-suppressions=sometimes", "expected no, yes or all" },
		{ "--log-file=", "no file name given" },
		{ "--xml-file=x%q", "expected '{' after '%q'" },
		{ "--suppressions=/", "/: not a regular file" },
		{ "--suppressions=/etc/passwd", "/etc/passwd:1: expected '{' to begin a suppression" },
		/* a log or XML file that cannot be created: valgrind runs
		 * nothing ("Cannot create log file"); memcheck ran the program
		 * on main, its text on stderr, the XML nowhere (harden47) */
		{ "--log-file=/", "cannot create it: Is a directory; nothing run" },
		{ "--log-file=/nonexistent-dir-h47/x.log", "cannot create it: No such file" },
		{ "--xml-file=/", "cannot create it: Is a directory; nothing run" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct h_res x;
		bool xml = strncmp(bad[i].word, "--xml-file", 10) == 0;
		H_EXEC(&x, .cli = H_LIST(bad[i].word, xml ? "--xml=yes" : "-q",
					 h_prog("plain_leak_depth"), "3"),
		       .no_report = true, .text = "", .flags = H_EXITCODE);
		h_expect_exit(&x, 2);
		ck_assert_msg(strstr(x.r.err, bad[i].err) && strstr(x.r.err, bad[i].word),
			      "%s: expected \"%s\", stderr:\n%s", bad[i].word, bad[i].err, x.r.err);
		h_res_free(&x);
	}
}
END_TEST

/* A file name's escapes valgrind refuses, refused as valgrind refuses
 * them, before the program runs: an unset variable of %q{VAR} (main
 * expanded it empty and ran the program, its text in "x.log"), %q{} (the
 * variable with no name), %q without '{' or '}', another '%'; valgrind's
 * reason (its line after "Bad option: OPTION") said, exit status 2
 * (memcheck's for a bad option; valgrind's 1).  A variable set empty is
 * expanded, by both: the file is "x.log". */
START_TEST(log_file_escapes_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const bad[] = {
		"--log-file=%s/x%%q{MC_TEST_UNSET_VAR}.log", "--log-file=%s/x%%q{}.log",
		"--log-file=%s/x%%q{MC_TEST_EMPTY_VAR", "--log-file=%s/x%%qa.log",
		"--log-file=%s/x%%z.log", "--xml-file=%s/x%%q{MC_TEST_UNSET_VAR}.xml",
		"--log-file=%s/x%%q{MC_TEST_EMPTY_VAR}.log", /* set empty: expanded */
	};
	const char *const env[] = { "MC_TEST_EMPTY_VAR=", NULL };
	const size_t good = sizeof bad / sizeof bad[0] - 1;
	for (size_t i = 0; i <= good; i++) {
		struct h_res r[2];
		const char *dir[2], *word[2];
		for (int t = 0; t < 2; t++) {
			dir[t] = h_tmppath(t ? "mcdir" : "vgdir");
			ck_assert(mkdir(dir[t], 0700) == 0);
			word[t] = h_env(bad[i], dir[t]);
			const char *args[] = { "--xml=yes", word[t], "/bin/sh", "-c", "echo ran", NULL };
			const char *const *a = strstr(word[t], "--xml-file") ? args : args + 1;
			H_EXEC(&r[t], .prog = t ? NULL : vg, .cli = t ? a : NULL, .args = t ? NULL : a,
			       .no_report = true, .text = "", .flags = H_EXITCODE, .env = env,
			       .timeout = 120);
		}
		const char *why = strstr(r[0].r.err, "Bad option: ");
		why = why ? strstr(why, "\n") : NULL;
		why = why ? strstr(why, "== ") : NULL;
		if (i == good) {
			h_expect_exit(&r[1], 0);
			ck_assert_msg(r[0].r.exit_code == 0 && !why, "%s: valgrind:\n%s", word[0],
				      r[0].r.err);
			for (int t = 0; t < 2; t++)
				ck_assert_msg(access(h_env("%s/x.log", dir[t]), F_OK) == 0 &&
					      !strcmp(r[t].r.out, "ran\n"),
					      "%s: %s's x.log; stdout \"%s\"", word[t],
					      t ? "memcheck" : "valgrind", r[t].r.out);
		} else {
			ck_assert_msg(r[0].r.exit_code == 1 && why, "%s: valgrind, status %d:\n%s",
				      word[0], r[0].r.exit_code, r[0].r.err);
			char *reason = strndup(why + 3, strcspn(why + 3, "\n"));
			h_expect_exit(&r[1], 2);
			ck_assert_msg(strcasestr(r[1].r.err, reason) && strstr(r[1].r.err, word[1]) &&
				      !*r[1].r.out,
				      "%s: expected valgrind's \"%s\"; memcheck's stdout \"%s\", "
				      "stderr:\n%s", word[1], reason, r[1].r.out, r[1].r.err);
			free(reason);
		}
		for (int t = 0; t < 2; t++)
			h_res_free(&r[t]);
	}
}
END_TEST

/* The "Command:" line of a document or a text, from "Command:" to the
 * line's end, or "" without one. */
static char *command_line(const char *text)
{
	const char *c = strstr(text, "Command:");
	return strndup(c ? c : "", c ? strcspn(c, "\n") : 0);
}

/* valgrind's "Command:" line, in its text and in its XML's preamble:
 * words with a space, a backslash, '<' or '>', a tab and a byte past
 * ASCII, as valgrind writes them (the text's words as they were, the
 * path of a program with a space in it unreadable, before) */
START_TEST(command_line_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const words[] = { "a b", "c<d>", "e\tf", "g\\h", "\xc3\xa9", "x;y" };
	for (int xml = 0; xml < 2; xml++) {
		const char *vfile = h_tmppath("valgrind.out"), *mfile = h_tmppath("memcheck.out");
		const char *argv[2][16];
		for (int t = 0; t < 2; t++) {
			size_t n = 0;
			if (xml) {
				argv[t][n++] = "--xml=yes";
				argv[t][n++] = h_env("--xml-file=%s", t ? mfile : vfile);
			} else {
				argv[t][n++] = "--leak-check=full";
				argv[t][n++] = h_env("--log-file=%s", t ? mfile : vfile);
			}
			argv[t][n++] = h_prog("plain_empty");
			for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
				argv[t][n++] = words[i];
			argv[t][n] = NULL;
		}
		struct h_res v, x;
		H_EXEC(&v, .prog = vg, .args = argv[0], .no_report = true, .text = "", .timeout = 120);
		H_EXEC(&x, .cli = argv[1], .no_report = true, .text = "");
		char *vdoc = h_read_file(vfile, NULL), *mdoc = h_read_file(mfile, NULL);
		ck_assert_msg(vdoc && mdoc, "%s: no output (valgrind %s, memcheck %s)",
			      xml ? "XML" : "text", vdoc ? "wrote" : "none", mdoc ? "wrote" : "none");
		char *want = command_line(vdoc), *got = command_line(mdoc);
		ck_assert_msg(want[0] && !strcmp(want, got), "%s: valgrind's\n%s\nmemcheck's\n%s",
			      xml ? "XML" : "text", want, got);
		free(want);
		free(got);
		free(vdoc);
		free(mdoc);
		h_res_free(&v);
		h_res_free(&x);
	}
}
END_TEST

/* ---- --xml=yes against valgrind's XML ------------------------------ */

/* The fields of an XML document that memcheck's must share with
 * valgrind's, one line each: every error's kind, heading, bytes, blocks
 * and frames (fn, dir, file, line, and the ip's offset in its page: the
 * objects load elsewhere), valgrind's own first frame (its malloc, in
 * vgpreload_memcheck) left out; whether suppcounts is there, and its
 * pairs sorted (valgrind moves a suppression to the front of its list at
 * each match); the statuses.  numbered: the records' numbers and uniques
 * and every suppression pair, which under an allocator other than
 * glibc's count the allocator's own records (suppressed); else only
 * the pairs of names in want. */
/* A stack's frames, valgrind's own first one (its malloc or free, in
 * vgpreload_memcheck) left out */
static size_t xml_frames(char *out, size_t cap, const struct h_xml *stack)
{
	size_t m = 0;
	for (int f = 0; f < stack->nkids; f++) {
		const struct h_xml *fr = stack->kid[f];
		const struct h_xml *obj = h_xml_kid(fr, "obj"), *fn = h_xml_kid(fr, "fn");
		const struct h_xml *dir = h_xml_kid(fr, "dir"), *file = h_xml_kid(fr, "file");
		const struct h_xml *line = h_xml_kid(fr, "line");
		if (f == 0 && obj && strstr(obj->text, "vgpreload_memcheck"))
			continue;
		unsigned long ip = strtoul(h_xml_kid(fr, "ip")->text, NULL, 16);
		m += (size_t)snprintf(out + m, cap - m, "  %s %s/%s:%s +0x%03lx\n",
				      fn ? fn->text : "-", dir ? dir->text : "-",
				      file ? file->text : "-", line ? line->text : "-", ip & 0xfff);
	}
	return m;
}

static char *xml_fields(const char *doc, bool numbered, const char *want, const char *what)
{
	char err[256];
	struct h_xml *root = h_xml_parse(doc, err, sizeof err);
	ck_assert_msg(root, "%s: not XML (%s):\n%.2000s", what, err, doc);
	ck_assert_str_eq(root->name, "valgrindoutput");
	const struct h_xml *pv = h_xml_kid(root, "protocolversion");
	ck_assert_msg(pv && pv->text && !strcmp(pv->text, "4"), "%s: no protocol 4", what);
	size_t cap = strlen(doc) + 64, m = 0;
	char *out = calloc(cap, 1);
	ck_assert_ptr_nonnull(out);
	char pairs[64][300];
	int np = 0;
	bool supp = false;
	for (int i = 0; i < root->nkids; i++) {
		const struct h_xml *e = root->kid[i];
		if (!strcmp(e->name, "args")) {
			/* the program's words; vargv names the checker */
			const struct h_xml *av = h_xml_kid(e, "argv");
			for (int j = 0; av && j < av->nkids; j++)
				m += (size_t)snprintf(out + m, cap - m, "argv %s\n", av->kid[j]->text);
		} else if (!strcmp(e->name, "status")) {
			const struct h_xml *st = h_xml_kid(e, "state");
			m += (size_t)snprintf(out + m, cap - m, "status %s\n", st ? st->text : "?");
		} else if (!strcmp(e->name, "error")) {
			const struct h_xml *x = h_xml_kid(e, "xwhat"), *k = h_xml_kid(e, "kind");
			const struct h_xml *u = h_xml_kid(e, "unique");
			ck_assert_msg(k && u, "%s: an error without kind or unique", what);
			if (!x) {
				/* a heap error: its words and stacks; the
				 * addresses differ */
				m += (size_t)snprintf(out + m, cap - m, "error %s %s: %s\n",
						      numbered ? u->text : "", k->text,
						      h_xml_kid(e, "what")->text);
				for (int j = 0; j < e->nkids; j++) {
					const struct h_xml *a = e->kid[j];
					if (!strcmp(a->name, "auxwhat")) {
						const char *t = a->text, *is = strstr(t, " is ");
						m += (size_t)snprintf(out + m, cap - m, "  %s\n",
								      is ? is : t);
					} else if (!strcmp(a->name, "stack")) {
						m += xml_frames(out + m, cap - m, a);
					}
				}
				continue;
			}
			char text[512];
			snprintf(text, sizeof text, "%s", h_xml_kid(x, "text")->text);
			if (!numbered && strstr(text, " in loss record "))
				*strstr(text, " in loss record ") = 0;
			m += (size_t)snprintf(out + m, cap - m, "error %s %s %s: %s, %s bytes, %s blocks\n",
					      numbered ? u->text : "", k->text,
					      h_xml_kid(e, "tid")->text, text,
					      h_xml_kid(x, "leakedbytes")->text,
					      h_xml_kid(x, "leakedblocks")->text);
			const struct h_xml *stack = h_xml_kid(e, "stack");
			if (stack)
				m += xml_frames(out + m, cap - m, stack);
		} else if (!strcmp(e->name, "errorcounts")) {
			for (int j = 0; j < e->nkids; j++)
				m += (size_t)snprintf(out + m, cap - m, "errorcount %s %s\n",
						      h_xml_kid(e->kid[j], "count")->text,
						      numbered ? h_xml_kid(e->kid[j], "unique")->text : "");
		} else if (!strcmp(e->name, "suppcounts")) {
			supp = true;
			for (int j = 0; j < e->nkids && np < 64; j++) {
				const char *name = h_xml_kid(e->kid[j], "name")->text;
				if (numbered || (want && strstr(want, name)))
					snprintf(pairs[np++], sizeof pairs[0], "pair %s %s\n", name,
						 h_xml_kid(e->kid[j], "count")->text);
			}
		}
	}
	qsort(pairs, (size_t)np, sizeof pairs[0], (int (*)(const void *, const void *))strcmp);
	m += (size_t)snprintf(out + m, cap - m, "suppcounts %s\n", supp ? "shown" : "left out");
	for (int j = 0; j < np; j++)
		m += (size_t)snprintf(out + m, cap - m, "%s", pairs[j]);
	h_xml_free(root);
	return out;
}

/* rows of vg_row: their words without --xml's */
static const struct vg_row xml_rows[] = {
	{ .name = "every kind listed", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=all"), .prog = "plain_leak_cycle" },
	/* valgrind's XML lists the records of --show-leak-kinds whatever
	 * --leak-check says */
	{ .name = "--leak-check's default", .words = H_LIST("--num-callers=12"),
	  .prog = "plain_leak_cycle" },
	{ .name = "--leak-check=no", .words = H_LIST("--leak-check=no"), .prog = "plain_leak_cycle" },
	{ .name = "-q: no suppcounts", .words = H_LIST("-q", "--show-reachable=yes"),
	  .prog = "plain_leak_cycle" },
	{ .name = "--show-leak-kinds=definite,indirect", .words = H_LIST("--leak-check=full",
	  "--show-leak-kinds=definite,indirect"), .prog = "plain_leak_cycle" },
	{ .name = "a deep stack, 100,000 bytes", .words = H_LIST("--leak-check=full"),
	  .prog = "plain_errors", .args = H_LIST("leak") },
	{ .name = "--num-callers=5", .words = H_LIST("--num-callers=5", "--leak-check=full",
	  "--show-leak-kinds=all"), .prog = "plain_leak_depth", .args = H_LIST("2") },
	{ .name = "a suppression used", .words = H_LIST("--leak-check=full"),
	  .prog = "plain_leak_depth", .args = H_LIST("10"), .supp = deep_supp },
	/* heap errors: InvalidFree, as they happen, before FINISHED */
	{ .name = "a double free", .words = H_LIST("--leak-check=full"), .prog = "plain_errors",
	  .args = H_LIST("double") },
	{ .name = "a free inside a block", .words = H_LIST("--leak-check=full"),
	  .prog = "plain_errors", .args = H_LIST("interior") },
	{ .name = "--errors-for-leak-kinds=all", .words = H_LIST("--leak-check=full",
	  "--errors-for-leak-kinds=all", "--error-exitcode=3"), .prog = "plain_leak_cycle" },
};

/* A row's command line with --xml=yes --xml-file=file before its words */
static const char *const *xml_argv(const struct vg_row *r, const char *file, const char *supp)
{
	static const char *words[64];
	size_t n = 0;
	words[n++] = "--xml=yes";
	words[n++] = h_env("--xml-file=%s", file);
	for (size_t i = 0; r->words[i] && n < 63; i++)
		words[n++] = r->words[i];
	words[n] = NULL;
	struct vg_row row = *r;
	row.words = words;
	return vg_argv(&row, supp, false);
}

START_TEST(xml_as_valgrinds)
{
	const struct vg_row *r = &xml_rows[_i];
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", r->name);
		return;
	}
	const char *supp = supp_file(r->supp);
	const char *vfile = h_tmppath("valgrind.xml");
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = xml_argv(r, vfile, supp), .no_report = true, .text = "",
	       .timeout = 120, .flags = H_EXITCODE);
	char *vdoc = h_read_file(vfile, NULL);
	ck_assert_msg(vdoc, "%s: valgrind wrote no %s:\n%.2000s", r->name, vfile, v.r.err);
	int vstatus = v.r.exit_code;
	h_res_free(&v);
	char *all = xml_fields(vdoc, true, NULL, "valgrind's");
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		const char *mfile = h_tmppath("memcheck.xml");
		struct h_res x;
		H_EXEC(&x, .cli = xml_argv(r, mfile, supp), .no_report = true, .text = "",
		       .flags = H_EXITCODE, .alloc = i,
		       .env = so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL);
		/* valgrind's text under --xml=yes says nothing; the status is
		 * valgrind's */
		ck_assert_msg(x.r.exit_code == vstatus && !x.r.err[0],
			      "%s under %s: %s, valgrind exit %d; standard error:\n%.1000s",
			      r->name, h_allocator_name(i), h_status(&x.r), vstatus, x.r.err);
		char *mdoc = h_read_file(mfile, NULL);
		ck_assert_msg(mdoc, "%s under %s: no %s", r->name, h_allocator_name(i), mfile);
		/* the program keeps the pid the command was started in */
		char pid[64];
		snprintf(pid, sizeof pid, "<pid>%d</pid>", (int)x.r.pid);
		ck_assert_msg(strstr(mdoc, pid), "%s under %s: no %s in:\n%.1000s", r->name,
			      h_allocator_name(i), pid, mdoc);
		char *want = xml_fields(vdoc, i == H_GLIBC, all, "valgrind's");
		char *got = xml_fields(mdoc, i == H_GLIBC, all, "memcheck's");
		ck_assert_msg(!strcmp(want, got), "%s under %s: valgrind's XML:\n%.2000s\n"
			      "memcheck's:\n%.2000s\nmemcheck's document:\n%.3000s", r->name,
			      h_allocator_name(i), want, got, mdoc);
		free(want);
		free(got);
		free(mdoc);
		h_res_free(&x);
	}
	free(all);
	free(vdoc);
}
END_TEST

/* A forked child writes as valgrind's: with %p in --xml-file a file of
 * its own, whose head has no RUNNING status; under
 * --child-silent-after-fork=yes nothing. */
/* The files of dir (up to 8), their paths into names; how many */
static int dir_files(const char *dir, char names[8][1024])
{
	int n = 0;
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d)) && n < 8;)
		if (e->d_name[0] != '.')
			snprintf(names[n++], sizeof names[0], "%s/%s", dir, e->d_name);
	closedir(d);
	return n;
}

static void xml_files(const char *dir, char *out, size_t cap)
{
	size_t m = 0;
	char names[8][1024];
	int n = dir_files(dir, names);
	char docs[8][4096];
	for (int i = 0; i < n; i++) {
		char *doc = h_read_file(names[i], NULL);
		ck_assert_ptr_nonnull(doc);
		char *f = xml_fields(doc, true, NULL, names[i]);
		snprintf(docs[i], sizeof docs[0], "%s", f);
		free(f);
		free(doc);
	}
	qsort(docs, (size_t)n, sizeof docs[0], (int (*)(const void *, const void *))strcmp);
	for (int i = 0; i < n; i++)
		m += (size_t)snprintf(out + m, cap - m, "-- a file\n%s", docs[i]);
}

/* The documents valgrind and memcheck write with --xml-file=DIR/x.%p.xml,
 * --leak-check=full and opt for the command cmd (its words, NULL-ended),
 * as xml_files gives them: into want (valgrind's) and got */
static void xml_both(const char *vg, const char *opt, const char *const *cmd, char *want,
		     char *got, size_t cap)
{
	const char *dir[2] = { h_tmppath("vgxml"), h_tmppath("mcxml") };
	for (int t = 0; t < 2; t++) {
		ck_assert_int_eq(mkdir(dir[t], 0700), 0);
		const char *args[16] = { "--xml=yes", h_env("--xml-file=%s/x.%%p.xml", dir[t]),
					 "--leak-check=full", opt };
		size_t n = 4;
		for (size_t i = 0; cmd[i] && n < 15; i++)
			args[n++] = cmd[i];
		args[n] = NULL;
		struct h_res x;
		if (t == 0)
			H_EXEC(&x, .prog = vg, .args = args, .no_report = true, .text = "",
			       .timeout = 120);
		else
			H_EXEC(&x, .cli = args, .no_report = true, .text = "");
		h_res_free(&x);
		xml_files(dir[t], t == 0 ? want : got, cap);
	}
}

START_TEST(xml_forked_child)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const silent[] = { "--child-silent-after-fork=no",
					      "--child-silent-after-fork=yes" };
	for (int s = 0; s < 2; s++) {
		char want[16384], got[16384];
		xml_both(vg, silent[s], H_LIST(h_prog("plain_fork"), "fork"), want, got, sizeof want);
		ck_assert_msg(!strcmp(want, got), "%s: valgrind's files:\n%s\nmemcheck's:\n%s",
			      silent[s], want, got);
	}
}
END_TEST

/* ---- each process's head, as valgrind writes it ---------------------- */

static bool memcheck_under(int i, const char *const *args, struct h_res *x, int flags);

/* A file's pid, from its name DIR/PID.log or DIR/PID.xml */
static long file_pid(const char *name)
{
	const char *slash = strrchr(name, '/');
	return strtol(slash ? slash + 1 : name, NULL, 10);
}

/* The head of one process's text (the lines from "Command:" to the
 * first empty "==PID== " one; valgrind's preamble lines before it name
 * valgrind, memcheck's name memcheck) or XML document ("Command:", the
 * <ppid>, the <argv>'s <exe>), its parent's pid as the label of the
 * file whose pid it is (pids[i], labels[i]: "Command: ..." lines), or
 * "outside" */
static void head_of(const char *doc, bool xml, const long *pids, char labels[][512], int n,
		    char *out, size_t cap)
{
	size_t m = 0;
	const char *cmd = strstr(doc, "Command:");
	if (!cmd) {
		snprintf(out, cap, "(no Command: line)\n");
		return;
	}
	long ppid = -1;
	const char *pp = strstr(doc, xml ? "<ppid>" : "Parent PID: ");
	if (pp)
		ppid = strtol(pp + (xml ? 6 : 12), NULL, 10);
	const char *parent = "outside";
	for (int i = 0; i < n; i++)
		if (pids[i] == ppid)
			parent = labels[i];
	m += (size_t)snprintf(out + m, cap - m, "%.*s\n%s%s\n", (int)strcspn(cmd, "<\n"), cmd,
			      pp ? "parent: " : "no parent line", pp ? parent : "");
	if (xml) {
		const char *argv = strstr(doc, "<argv>"), *exe = argv ? strstr(argv, "<exe>") : NULL;
		m += (size_t)snprintf(out + m, cap - m, "exe %.*s\n",
				      exe ? (int)strcspn(exe + 5, "<") : 0, exe ? exe + 5 : "");
	} else {
		/* the lines between "Command:" and the empty one */
		const char *line = cmd + strcspn(cmd, "\n");
		while (*line == '\n' && m < cap) {
			line++;
			const char *body = strstr(line, "== ");
			size_t len = strcspn(line, "\n");
			if (!body || body > line + len || len == (size_t)(body - line) + 3)
				break;
			if (!strstr(body, "Parent PID: ") || strstr(body, "Parent PID: ") > line + len)
				m += (size_t)snprintf(out + m, cap - m, "line %.*s\n",
						      (int)(len - (size_t)(body + 3 - line)), body + 3);
			line += len;
		}
	}
}

/* Every file of dir, each as head_of gives it, sorted, into out */
static void heads_of(const char *dir, bool xml, char *out, size_t cap)
{
	char names[8][1024], labels[8][512], heads[8][2048];
	long pids[8];
	char *docs[8];
	int n = dir_files(dir, names);
	for (int i = 0; i < n; i++) {
		docs[i] = h_read_file(names[i], NULL);
		ck_assert_ptr_nonnull(docs[i]);
		pids[i] = file_pid(names[i]);
		const char *c = strstr(docs[i], "Command:");
		snprintf(labels[i], sizeof labels[0], "%.*s", c ? (int)strcspn(c, "<\n") : 4,
			 c ? c : "none");
	}
	for (int i = 0; i < n; i++) {
		head_of(docs[i], xml, pids, labels, n, heads[i], sizeof heads[0]);
		free(docs[i]);
	}
	qsort(heads, (size_t)n, sizeof heads[0], (int (*)(const void *, const void *))strcmp);
	size_t m = 0;
	for (int i = 0; i < n; i++)
		m += (size_t)snprintf(out + m, cap - m, "-- a file\n%s", heads[i]);
}

/* Each process's own log file (--log-file=DIR/%p.log) or XML document
 * (--xml-file=DIR/%p.xml) starts as valgrind 3.19's: the command of the
 * process's image (an exec'd program's: the file name execve was given,
 * "/usr/bin/true", in argv[0]'s place "true") and "Parent PID:", the top
 * process's, a forked child's (written at the fork: its file has the
 * head where the child then execs a program not followed), an exec'd
 * child's; under every allocator.  A forked child of a shared file
 * writes no head, as valgrind's.  On main a forked child's file began
 * at HEAP SUMMARY, and no head had "Parent PID:" (c-blosc's
 * test_forksafe, session 44). */
static const struct {
	const char *opt, *mode;
	bool xml, shared;
	const char *arg; /* plain_fork's second word, or NULL */
} head_rows[] = {
	{ "--child-silent-after-fork=no", "fork", false, false, NULL },
	{ "--trace-children=yes", "exec", false, false, NULL },
	{ "--trace-children=no", "exec", false, false, NULL },
	{ "--trace-children=yes", "exec", true, false, NULL },
	{ "--trace-children=yes", "exec", true, false, "name" },
	{ "--trace-children=yes", "exec", false, false, "name" },
	{ "--child-silent-after-fork=no", "fork", false, true, NULL },
};

START_TEST(heads_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	char want[8192], got[8192];
	for (int a = -1; a < H_NALLOCATORS; a++) {
		const char *dir = h_tmppath(a < 0 ? "vghead" : h_env("mchead%d", a));
		ck_assert_int_eq(mkdir(dir, 0700), 0);
		const char *dest = head_rows[_i].xml	 ? h_env("--xml-file=%s/%%p.xml", dir)
				   : head_rows[_i].shared ? h_env("--log-file=%s/1.log", dir)
							  : h_env("--log-file=%s/%%p.log", dir);
		const char *args[] = { head_rows[_i].xml ? "--xml=yes" : "--leak-check=full", dest,
				       head_rows[_i].opt, h_prog("plain_fork"), head_rows[_i].mode,
				       head_rows[_i].arg, NULL };
		struct h_res x;
		if (a < 0)
			H_EXEC(&x, .prog = vg, .args = args, .no_report = true, .text = "",
			       .timeout = 120);
		else if (!memcheck_under(a, args, &x, 0))
			continue;
		h_res_free(&x);
		if (head_rows[_i].shared) {
			/* one file: the heads in it, the parent's pid aside */
			char *doc = h_read_file(h_env("%s/1.log", dir), NULL);
			ck_assert_ptr_nonnull(doc);
			size_t m = 0;
			char *out = a < 0 ? want : got;
			for (const char *l = doc; (l = strstr(l, "== ")); l += 3)
				if (!strncmp(l + 3, "Command:", 8) || !strncmp(l + 3, "Parent PID:", 11))
					m += (size_t)snprintf(out + m, sizeof want - m, "%.*s\n",
							      (int)strcspn(l + 3, l[3] == 'P'
										     ? "\n0123456789"
										     : "\n"),
							      l + 3);
			free(doc);
		} else {
			heads_of(dir, head_rows[_i].xml, a < 0 ? want : got, sizeof want);
		}
		if (a < 0)
			continue;
		ck_assert_msg(!strcmp(want, got), "%s %s %s, %s: valgrind's heads:\n%s\nmemcheck's:\n%s",
			      head_rows[_i].opt, head_rows[_i].mode, head_rows[_i].xml ? "XML" : "text",
			      h_allocator_name(a), want, got);
	}
}
END_TEST

/* The line at l, its length into *len: its text after "==PID==" (from
 * the space after it), or NULL where it has no such prefix */
static const char *after_pid(const char *l, size_t *len)
{
	*len = strcspn(l, "\n");
	const char *body = l[0] == '=' && l[1] == '=' ? strstr(l + 2, "==") : NULL;
	return body && body + 2 <= l + *len ? body + 2 : NULL;
}

/* The lines of valgrind's text a parser reads, each process's in the
 * order written: the "==PID== " prefix and the frames' lines left out,
 * and the lines that name the tool (valgrind's preamble, memcheck's
 * first line, valgrind's "rerun with: -s", memcheck's verdict); all:
 * every other line, else only the heads' and the HEAP SUMMARY and
 * "definitely lost:" ones but "0 bytes" (an allocator's own records,
 * which memcheck's shipped suppressions take, count in the others) */
static void parsed_lines(const char *text, bool all, char *out, size_t cap)
{
	static const char *const some[] = { "Command:", "Parent PID:", "HEAP SUMMARY:",
					    "definitely lost:" };
	static const char *const skip[] = { "Memcheck, a memory error detector", "Copyright (C)",
					    "Using Valgrind-", ": valgrind's command line, the program run",
					    "rerun with: -s", "memcheck: PASS", "memcheck: FAIL",
					    "   at ", "   by " };
	size_t m = 0, len;
	for (const char *l = text; *l; l += len + (l[len] != 0)) {
		const char *body = after_pid(l, &len);
		if (!body)
			continue;
		bool drop = !all;
		for (size_t i = 0; !all && i < sizeof some / sizeof some[0]; i++) {
			const char *at = strstr(body, some[i]);
			drop &= !(at && at < l + len);
		}
		/* a summary of the allocator's own blocks where valgrind has
		 * none to write */
		const char *none = strstr(body, "lost: 0 bytes");
		drop |= !all && none && none < l + len;
		for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) {
			const char *at = strstr(body, skip[i]);
			drop |= at && at < l + len;
		}
		if (!drop && m < cap)
			m += (size_t)snprintf(out + m, cap - m, "%.*s\n", (int)(len - (size_t)(body - l)),
					      body);
	}
}

/* --log-fd=9, as a script's `9>file` gives it: every process's text in
 * the descriptor's file, the forked child's and the exec'd program's
 * with it, their heads without "Parent PID:" (valgrind writes it to a
 * --log-file only), as valgrind 3.19 writes them; under every allocator
 * (preloaded in the shell too: every line compared under glibc, the
 * heads and the leaks under the others, whose own blocks count in the
 * rest: jemalloc's library brings libstdc++'s pool, 72,704 bytes).
 * On main memcheck refused the option ("memcheck writes to standard
 * error or to --log-file"). */
START_TEST(log_fd_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const modes[][2] = { { "--trace-children=yes", "exec" },
						  { "--child-silent-after-fork=no", "fork" } };
	char want[2][8192], got[8192];
	for (int a = -1; a < H_NALLOCATORS; a++) {
		const char *so = NULL, *file = h_tmppath(a < 0 ? "vgfd9" : h_env("mcfd9.%d", a));
		if (a >= 0 && !h_allocator(a, &so))
			continue;
		const char *cmd = h_env("exec 9>%s; exec %s --log-fd=9 --leak-check=full %s %s %s name",
					file, a < 0 ? vg : h_env("%s/memcheck", h_build()),
					modes[_i][0], h_prog("plain_fork"), modes[_i][1]);
		const char *env[2] = { so ? h_env("LD_PRELOAD=%s", so) : NULL, NULL };
		struct h_res x;
		H_EXEC(&x, .prog = "/bin/sh", .args = H_LIST("-c", cmd), .no_report = true, .text = "",
		       .timeout = 120, .env = so ? env : NULL);
		h_expect_exit(&x, 0);
		h_res_free(&x);
		char *doc = h_read_file(file, NULL);
		ck_assert_msg(doc && strstr(doc, "Command:"), "%s: nothing written to descriptor 9",
			      a < 0 ? "valgrind" : h_allocator_name(a));
		if (a < 0) {
			parsed_lines(doc, true, want[0], sizeof want[0]);
			parsed_lines(doc, false, want[1], sizeof want[1]);
		} else {
			parsed_lines(doc, a == H_GLIBC, got, sizeof got);
		}
		free(doc);
		if (a >= 0)
			ck_assert_msg(!strcmp(want[a != H_GLIBC], got),
				      "%s %s, %s: valgrind's lines:\n%s\nmemcheck's:\n%s", modes[_i][0],
				      modes[_i][1], h_allocator_name(a), want[a != H_GLIBC], got);
	}
}
END_TEST

/* The n bytes at body and a newline, at out + m (cap bytes in all, one
 * kept for the NUL), each address ("0x" and its digits) as "X"; the
 * new m */
static size_t put_masked(char *out, size_t m, size_t cap, const char *body, size_t n)
{
	for (size_t i = 0; i < n && m + 2 < cap; i++) {
		if (body[i] == '0' && i + 1 < n && body[i + 1] == 'x') {
			out[m++] = 'X'; /* an address */
			for (i += 2; i < n && strchr("0123456789abcdefABCDEF", body[i]); i++)
				;
			i--;
			continue;
		}
		out[m++] = body[i];
	}
	out[m++] = '\n';
	return m;
}

/* The lines of a heap error's block in valgrind's text ("Invalid
 * free() ..." to the empty line after it: the heading, "Address ... is
 * N bytes inside a block of size S free'd", "Block was alloc'd at"),
 * the frames and the addresses left out; with usage the "total heap
 * usage" and ERROR SUMMARY lines too */
static void error_lines(const char *text, bool usage, char *out, size_t cap)
{
	size_t m = 0, len;
	bool in = false;
	for (const char *l = text; *l; l += len + (l[len] != 0)) {
		const char *body = after_pid(l, &len);
		if (!body || *body++ != ' ')
			continue;
		size_t n = len - (size_t)(body - l);
		bool heading = n >= 13 && !strncmp(body, "Invalid free(", 13);
		in = heading || (in && n > 0);
		bool frame = !strncmp(body, "   at ", 6) || !strncmp(body, "   by ", 6);
		bool more = usage && ((n > 20 && strstr(body, "total heap usage:") &&
				       strstr(body, "total heap usage:") < l + len) ||
				      !strncmp(body, "ERROR SUMMARY:", 14));
		if ((!in || frame) && !more)
			continue;
		m = put_masked(out, m, cap, body, n);
	}
	out[m] = 0;
}

/* A refused free or realloc in valgrind's text as valgrind writes it:
 * "==PID== Invalid free() / delete / delete[] / realloc()" from the
 * line's start (a script's '^==[0-9]*== Invalid free'), the address's
 * place ("is 16 bytes inside a block of size 40 alloc'd", "0 bytes
 * inside a block of size 24 free'd"), "Block was alloc'd at", the empty
 * line; and HEAP SUMMARY's frees counting the refused free, as
 * valgrind counts every free it is given ("1 allocs, 2 frees" for a
 * double free); under every allocator (the usage under glibc: the
 * others' own blocks count there).  On main memcheck's own heading
 * ("==PID== memcheck: Invalid free() ...: double free in ...", which
 * CTest's pattern matched, a script's anchored one not), and 1 frees.
 * A pointer in no block (session 47): a local of a frame below, freed
 * or reallocated ("Address 0x... is on thread 1's stack", "in frame #2,
 * created by free_local (plain_errors.c:LINE)", the line where the
 * function begins), a global ("is 4 bytes inside data symbol
 * "global_buf""), a wild one ("not stack'd, malloc'd or (recently)
 * free'd"); and the program goes on, its stdout and status valgrind's
 * run's (main 0c24e7b: "not stack'd ..." for the first three, then
 * passed to the allocator: glibc aborted "free(): invalid pointer",
 * faulted on the wild one).  Another thread's local, freed while that
 * thread waits at a barrier: "is on thread 2's stack", "in frame #1,
 * created by thread_local_hold (plain_errors.c:LINE)" (main 68cf1f5:
 * "not stack'd, malloc'd or (recently) free'd"). */
START_TEST(heap_errors_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const modes[] = { "double",	      "interior", "realloc_freed",
					     "realloc_interior", "stack",    "realloc_stack",
					     "global",	      "wild",     "thread_stack" };
	/* valgrind counts a refused realloc's new block too (allocs and
	 * bytes), and so does memcheck's text since session 46 (main
	 * 12d30ba: "1 allocs, 2 frees, 24 bytes allocated" where valgrind
	 * says "2 allocs, 2 frees, 72 bytes allocated") */
	bool usage = true;
	const char *const args[] = { "--leak-check=no", h_prog("plain_errors"), modes[_i], NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	char want[2][4096], got[4096];
	error_lines(v.r.err, usage, want[0], sizeof want[0]);
	error_lines(v.r.err, false, want[1], sizeof want[1]);
	ck_assert_msg(strstr(want[1], "Invalid free()"), "%s: valgrind's text:\n%s", modes[_i],
		      v.r.err);
	char out[256];
	snprintf(out, sizeof out, "%s", v.r.out);
	h_res_free(&v);
	for (int a = 0; a < H_NALLOCATORS; a++) {
		struct h_res x;
		if (!memcheck_under(a, args, &x, H_EXITCODE))
			continue;
		error_lines(x.r.err, usage && a == H_GLIBC, got, sizeof got);
		ck_assert_msg(!strcmp(want[a != H_GLIBC || !usage], got),
			      "%s, %s: valgrind's lines:\n%s\nmemcheck's:\n%s", modes[_i],
			      h_allocator_name(a), want[a != H_GLIBC || !usage], got);
		/* the program goes on as under valgrind, whose run goes on */
		h_expect_exit(&x, 0);
		ck_assert_msg(!strcmp(out, x.r.out), "%s, %s: stdout \"%s\", valgrind's \"%s\"",
			      modes[_i], h_allocator_name(a), x.r.out, out);
		h_res_free(&x);
	}
}
END_TEST

/* The lines of the heap errors' part of a text, as a script counts and
 * reads them: from the first error's heading (or valgrind's cutoff
 * lines) to the end, the "==PID==" prefixes left out, each frame's line
 * as its function and place ("free_it (plain_errors.c:114)") but
 * valgrind's frames in its preload (its free and malloc, which
 * memcheck's stacks do not hold), addresses as "X", the HEAP SUMMARY's
 * figures left out (another allocator's own blocks count there); each
 * process's lines in the order written. */
static char *error_part(const char *text)
{
	size_t cap = strlen(text) + 2, m = 0, len;
	char *out = malloc(cap);
	ck_assert_ptr_nonnull(out);
	bool on = false;
	for (const char *l = text; *l; l += len + (l[len] != 0)) {
		const char *body = after_pid(l, &len);
		/* "--PID--" lines are valgrind's own, none of them here: its
		 * used_suppression lines list leak suppressions, none under
		 * --leak-check=no (main listed tcmalloc's own, which
		 * memcheck's default files suppress, under -s) */
		if (!body)
			continue;
		size_t n = len - (size_t)(body - l);
		on = on || (n > 5 && (!strncmp(body, " Invalid free(", 14) ||
				      !strncmp(body, " More than ", 11)));
		bool frame = !strncmp(body, "    at ", 7) || !strncmp(body, "    by ", 7);
		const char *fn = frame ? memmem(body, n, ": ", 2) : NULL;
		if (!on || (frame && (!fn || memmem(body, n, "vgpreload", 9))) ||
		    (n > 20 && (memmem(body, n, "in use at exit:", 15) ||
				memmem(body, n, "total heap usage:", 17))))
			continue;
		if (fn)
			m = put_masked(out, m, cap, fn + 2, n - (size_t)(fn + 2 - body));
		else
			m = put_masked(out, m, cap, body, n);
	}
	out[m] = 0;
	return out;
}

/* Heap errors counted and written as valgrind counts them, its -s list
 * and ERROR SUMMARY, under every allocator:
 * - a forked child keeps its parent's contexts, as valgrind's child is
 *   its parent's copy: "2 errors from 2 contexts" in a child that made
 *   none (main: "2 errors from 1 contexts": its contexts emptied at the
 *   fork, the errors kept), and an error of its own a third context;
 * - contexts told apart by the first 4 frames of valgrind's stacks,
 *   then by 2 once 100 are written ("More than 100 errors detected"):
 *   contexts 150 again makes 300 errors of 150 contexts (main: 20
 *   errors written, "300 errors from 20 contexts"; memcheck's own text
 *   showed the first 20);
 * - after 1000 contexts nothing more written or counted ("More than
 *   1000 different errors detected", "1000 errors from 1000 contexts",
 *   no thousands separator there), unless --error-limit=no (main kept
 *   64 contexts, wrote 20 errors, "1,100 errors from 64 contexts");
 * - every stack's frames valgrind's (but its free and malloc), the one
 *   that freed a block refused again as deep as valgrind's, which keeps
 *   each free's stack (--keep-stacks=alloc-and-free): double_deep's
 *   free_it, free_twice, main (main: free_it alone, the ring of recent
 *   frees keeping one return address). */
static const struct {
	const char *opt, *mode, *arg, *more;
} context_rows[] = {
	{ "-s", "fork_errors", NULL, NULL },
	{ "-s", "fork_errors", "child", NULL },
	{ "-s", "contexts", "150", "again" },
	{ "--leak-check=no", "contexts", "1100", NULL },
	{ "--error-limit=no", "contexts", "1100", NULL },
	{ "--leak-check=no", "double_deep", NULL, NULL },
};

START_TEST(contexts_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *args[] = { "--leak-check=no", context_rows[_i].opt, h_prog("plain_errors"),
			       context_rows[_i].mode, context_rows[_i].arg, context_rows[_i].more,
			       NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	char *want = error_part(v.r.err);
	ck_assert_msg(strstr(want, "ERROR SUMMARY"), "%s %s: valgrind's text:\n%s",
		      context_rows[_i].opt, context_rows[_i].mode, v.r.err);
	h_res_free(&v);
	for (int a = 0; a < H_NALLOCATORS; a++) {
		struct h_res x;
		if (!memcheck_under(a, args, &x, 0))
			continue;
		h_expect_exit(&x, 0);
		char *got = error_part(x.r.err);
		/* where they part: a few lines before, some after */
		size_t d = 0, from;
		while (want[d] && want[d] == got[d])
			d++;
		from = d;
		for (int lines = 0; lines < 4 && from > 0; lines++) {
			from -= lines > 0; /* over the line before's newline */
			while (from > 0 && want[from - 1] != '\n')
				from--;
		}
		ck_assert_msg(!want[d] && !got[d],
			      "%s %s %s, %s: from byte %zu, valgrind's lines:\n%.700s\nmemcheck's:\n%.700s",
			      context_rows[_i].opt, context_rows[_i].mode,
			      context_rows[_i].arg ? context_rows[_i].arg : "", h_allocator_name(a), from,
			      want + from, got + from);
		free(got);
		h_res_free(&x);
	}
	free(want);
}
END_TEST

/* The end of a process's text as a tool reads it, from HEAP SUMMARY
 * (-q's: all of it):
 * the "==PID==" and "--PID--" prefixes and addresses left as "==" and
 * "--", the frames' lines and valgrind -v's scan lines ("Searching
 * for pointers", "Checked N bytes", which memcheck does not write, and
 * the empty line after them) left out; all: every other line,
 * else (another allocator, whose own blocks count in the figures) the
 * lines that say what comes at the end: "rerun with: -s", the
 * contexts' headings and errors, used_suppression lines of the test's
 * file, the ERROR SUMMARY's counts of errors, and memcheck's own */
static void end_lines(const char *text, bool all, char *out, size_t cap)
{
	size_t m = 0, len;
	bool after_scan = false;
	out[0] = 0;
	const char *from = strstr(text, "HEAP SUMMARY:");
	while (from && from > text && from[-1] != '\n')
		from--;
	for (const char *l = from ? from : text; *l && m < cap; l += len + (l[len] != 0)) {
		len = strcspn(l, "\n");
		char c = l[0];
		const char *end = (c == '=' || c == '-') && l[1] == c ? memchr(l + 2, c, len - 2) : NULL;
		if (!end || end[1] != c)
			continue;
		const char *body = end + 2;
		size_t n = len - (size_t)(body - l);
		char line[1024];
		snprintf(line, sizeof line, "%.*s", (int)n, body);
		/* -v's scan lines and the empty line after them */
		bool scan = strstr(line, "Searching for pointers") || strstr(line, " Checked ");
		if (after_scan && !line[strspn(line, " ")] && !(after_scan = false))
			continue;
		after_scan = scan;
		if (strstr(line, "    at ") == line || strstr(line, "    by ") == line || scan)
			continue;
		for (char *x = line; (x = strstr(x, "0x")); x += 2)
			memmove(x + 2, x + 2 + strspn(x + 2, "0123456789abcdefABCDEF"),
				strlen(x + 2 + strspn(x + 2, "0123456789abcdefABCDEF")) + 1);
		if (!all) {
			char *paren = strstr(line, "ERROR SUMMARY:") ? strstr(line, " (suppressed") : NULL;
			if (paren)
				*paren = 0;
			if (!paren && !strstr(line, "rerun with: -s") && !strstr(line, "errors in context") &&
			    !strstr(line, "Invalid free") && !strstr(line, "vgend.supp") &&
			    !strstr(line, "memcheck"))
				continue;
		}
		m += (size_t)snprintf(out + m, cap - m, "%c%c%s\n", c, c, line);
	}
}

/* path (absolute) as a relative one from the working directory */
static const char *relative_path(const char *path)
{
	char cwd[4096], rel[8192] = "";
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	size_t n = 0;
	for (const char *c = cwd; *c; c++)
		if (*c == '/' && c[1])
			n++;
	for (size_t i = 0; i < n; i++)
		strcat(rel, "../");
	strcat(rel, path + 1);
	return h_env("%s", rel);
}

/* What follows HEAP SUMMARY, as valgrind 3.19 writes it with none of
 * -s, --show-error-list and -v (its "For lists of detected and
 * suppressed errors, rerun with: -s" before ERROR SUMMARY), with -s,
 * --show-error-list=yes or -v (after ERROR SUMMARY each heap error's
 * context "N errors in context I of M:" and its lines, then
 * "--PID-- used_suppression:      1 NAME FILE:LINE suppressed: B bytes
 * in N blocks" for the suppression that took a leak, and ERROR SUMMARY
 * again; the file named as the command line gave it, a relative path
 * too), with -q (nothing), with -q -s (ERROR SUMMARY and the list
 * all the same), with -v --show-error-list=no (neither the hint nor
 * the list), with -v -q (as with neither: valgrind's -q takes one
 * from the verbosity), with -s --leak-check=no (no leak checked, no
 * suppression used: main listed the test's, and ERROR SUMMARY twice),
 * with --leak-check=summary -s (its "Rerun with --leak-check=full"
 * only where a block is lost or reachable, not where the suppressions
 * took them all: main wrote it for plain_exit's suppressed leak);
 * every line compared under glibc, the
 * lines that say it under the others; and nothing of memcheck's own.
 * On main memcheck wrote "memcheck: FAIL: ..." (or PASS) where valgrind
 * writes "rerun with: -s", refused -s and --show-error-list, and its -v
 * added memcheck's own report (6 lines a loss record against
 * valgrind's 2) and listed no context. */
START_TEST(end_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const opts[][2] = { { "--leak-check=full", NULL }, { "-s", NULL },
					       { "--show-error-list=yes", NULL }, { "-v", NULL },
					       { "-q", NULL }, { "-q", "-s" },
					       { "-v", "--show-error-list=no" }, { "-v", "-q" },
					       { "-s", "--leak-check=no" },
					       { "--leak-check=summary", "-s" } };
	static const char *const progs[][2] = { { "plain_errors", "double" },
						{ "plain_exit", "leak" } };
	const char *supp = h_tmppath("vgend.supp");
	FILE *f = fopen(supp, "w");
	ck_assert_ptr_nonnull(f);
	/* a comment between '{' and the name: valgrind's used_suppression
	 * names the name's line (5), not the brace's */
	fputs("# the leak of plain_exit\n{\n   # its name\n\n   plain_exit's leak\n"
	      "   Memcheck:Leak\n   fun:malloc\n   fun:leak\n}\n", f);
	fclose(f);
	/* every other row names the file relative to the working directory
	 * ("../../tmp/.../vgend.supp"): valgrind's used_suppression lines
	 * name it so, as given (main cdc8e4b: its absolute path) */
	if (_i % 2)
		supp = relative_path(supp);
	for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) {
		const char *args[] = { "--leak-check=full", h_env("--suppressions=%s", supp),
				       opts[_i][0], opts[_i][1] ? opts[_i][1] : "--leak-check=full",
				       h_prog(progs[p][0]), progs[p][1], NULL };
		struct h_res v;
		H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
		char want[2][8192], got[8192];
		end_lines(v.r.err, true, want[0], sizeof want[0]);
		end_lines(v.r.err, false, want[1], sizeof want[1]);
		h_res_free(&v);
		ck_assert_msg(_i == 4 || strstr(want[0], "ERROR SUMMARY"), "%s %s: valgrind's:\n%s",
			      opts[_i][0], progs[p][0], want[0]);
		for (int a = 0; a < H_NALLOCATORS; a++) {
			struct h_res x;
			if (!memcheck_under(a, args, &x, 0))
				continue;
			end_lines(x.r.err, a == H_GLIBC, got, sizeof got);
			ck_assert_msg(!strcmp(want[a != H_GLIBC], got),
				      "%s %s %s, %s: valgrind's lines:\n%s\nmemcheck's:\n%s", opts[_i][0],
				      opts[_i][1] ? opts[_i][1] : "", progs[p][0], h_allocator_name(a), want[a != H_GLIBC], got);
			h_res_free(&x);
		}
	}
}
END_TEST

/* Is the line at l (len bytes) an entry's frame of valgrind's
 * allocation functions ("fun:malloc"; "fun:memalign" and then
 * "fun:posix_memalign"), which memcheck's stacks do not hold, or
 * memcheck's "..." in their place? */
static bool alloc_frame(const char *l, size_t len)
{
	static const char *const fns[] = { "malloc", "calloc", "realloc", "memalign",
					   "posix_memalign", "aligned_alloc", "valloc",
					   "reallocarray" };
	if (len == 6 && !strncmp(l, "   ...", 6))
		return true;
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (len == 7 + strlen(fns[i]) && !strncmp(l, "   fun:", 7) &&
		    !strncmp(l + 7, fns[i], strlen(fns[i])))
			return true;
	return false;
}

/* The suppression entries of a text ("{" to "}"), their allocation
 * functions' frame lines left out (alloc_frame); with heads, each entry
 * after the heading of the loss record it follows, its number left out
 * (an allocator's own records, suppressed, are numbered among them) */
static void entries_of(const char *text, bool heads, char *out, size_t cap)
{
	size_t m = 0, len;
	int in = 0; /* 0 outside, else the entry's line */
	for (const char *l = text; *l && m < cap; l += len + (l[len] != 0)) {
		const char *body = after_pid(l, &len);
		if (heads && body && strstr(body, " in loss record ") &&
		    strstr(body, " in loss record ") < l + len)
			m += (size_t)snprintf(out + m, cap - m, "%.*s\n",
					      (int)(strstr(body, " in loss record ") - body), body);
		if (body)
			continue;
		if (!strncmp(l, "{", 1))
			in = 1;
		else if (in)
			in++;
		if (in && !(in >= 5 && alloc_frame(l, len)))
			m += (size_t)snprintf(out + m, cap - m, "%.*s\n", (int)len, l);
		if (!strncmp(l, "}", 1))
			in = 0;
	}
}

/* --gen-suppressions=all as valgrind writes it in its text: each listed
 * record's entry right after it, named "<insert_a_suppression_name_here>",
 * the records of the kinds listed only (every kind's under
 * --show-leak-kinds=all, none under --leak-check=summary), under -q too;
 * four allocators (the records' headings compared under glibc, whose
 * numbers the others' own suppressed records change).  On main all the
 * process's entries came before HEAP SUMMARY, named memcheck-process-N,
 * one for each record, listed or not. */
START_TEST(gen_suppressions_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const opts[][2] = { { "--show-leak-kinds=all", "--leak-check=full" },
					       { "--show-leak-kinds=definite", "-q" },
					       { "--leak-check=summary", "--show-leak-kinds=all" } };
	const char *const args[] = { "--gen-suppressions=all", opts[_i][0], opts[_i][1],
				     "--leak-check=full", h_prog("plain_leak_family"), NULL };
	/* summary: the last --leak-check wins, so put it last */
	const char *const sargs[] = { "--gen-suppressions=all", opts[_i][1], opts[_i][0],
				      h_prog("plain_leak_family"), NULL };
	const char *const *use = _i == 2 ? sargs : args;
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = use, .no_report = true, .text = "", .timeout = 120);
	char want[2][16384], got[16384];
	entries_of(v.r.err, true, want[0], sizeof want[0]);
	entries_of(v.r.err, false, want[1], sizeof want[1]);
	ck_assert_msg((_i == 2) == !strstr(want[1], "insert_a_suppression_name_here"),
		      "valgrind's text:\n%s", v.r.err);
	h_res_free(&v);
	for (int a = 0; a < H_NALLOCATORS; a++) {
		struct h_res x;
		if (!memcheck_under(a, use, &x, H_EXITCODE))
			continue;
		entries_of(x.r.err, a == H_GLIBC, got, sizeof got);
		ck_assert_msg(!strcmp(want[a != H_GLIBC], got),
			      "%s %s, %s: valgrind's:\n%s\nmemcheck's:\n%s", opts[_i][0], opts[_i][1],
			      h_allocator_name(a), want[a != H_GLIBC], got);
		h_res_free(&x);
	}
}
END_TEST

/* The suppression entries of a text, whole ("{" to "}", every line). */
static void whole_entries_of(const char *text, char *out, size_t cap)
{
	size_t m = 0, len;
	bool in = false;
	for (const char *l = text; *l && m < cap; l += len + (l[len] != 0)) {
		len = strcspn(l, "\n");
		in |= !strncmp(l, "{", 1);
		if (in)
			m += (size_t)snprintf(out + m, cap - m, "%.*s\n", (int)len, l);
		if (!strncmp(l, "}", 1))
			in = false;
	}
}

/* --gen-suppressions=all's entries line for line as valgrind's, their
 * first frame too: valgrind's frames of its replacement ("fun:malloc",
 * "fun:calloc", "fun:memalign" and "fun:posix_memalign" for
 * posix_memalign, "fun:memalign" for aligned_alloc and valloc), which
 * memcheck's stacks, starting at the caller, do not hold; but the
 * realloc family's, where valgrind says malloc for a null pointer and
 * realloc otherwise, and memcheck writes "..." (it keeps no old
 * pointer).  Every function of the family (plain_leak_family), four
 * allocators; then each tool reads the other's entries: valgrind with
 * memcheck's suppresses every leak, memcheck with valgrind's too.  On
 * main 12d30ba every entry began "...". */
START_TEST(gen_suppressions_first_frames)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *prog = h_prog("plain_leak_family");
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("-q", "--leak-check=full", "--gen-suppressions=all",
						 prog),
	       .no_report = true, .text = "", .timeout = 120);
	static char want[16384], got[16384];
	whole_entries_of(v.r.err, want, sizeof want);
	ck_assert_msg(strstr(want, "fun:calloc") && strstr(want, "fun:posix_memalign"),
		      "valgrind's entries:\n%s", want);
	const char *vsupp = h_tmppath("valgrind.supp");
	FILE *f = fopen(vsupp, "w");
	ck_assert(f != NULL);
	fputs(want, f);
	fclose(f);
	h_res_free(&v);
	for (int a = 0; a < H_NALLOCATORS; a++) {
		struct h_res x;
		if (!memcheck_under(a, H_LIST("-q", "--leak-check=full", "--gen-suppressions=all",
					      prog),
				    &x, H_EXITCODE))
			continue;
		whole_entries_of(x.r.err, got, sizeof got);
		h_res_free(&x);
		/* line by line, "..." standing for the realloc family's */
		const char *w = want, *g = got;
		while (*w && *g) {
			size_t wl = strcspn(w, "\n"), gl = strcspn(g, "\n");
			bool same = wl == gl && !strncmp(w, g, wl);
			bool dots = gl == 6 && !strncmp(g, "   ...", 6) &&
				    ((wl == 13 && !strncmp(w, "   fun:malloc", 13)) ||
				     (wl == 14 && !strncmp(w, "   fun:realloc", 14)));
			ck_assert_msg(same || dots, "%s: memcheck wrote \"%.*s\" where valgrind "
				      "wrote \"%.*s\"\nvalgrind's:\n%s\nmemcheck's:\n%s",
				      h_allocator_name(a), (int)gl, g, (int)wl, w, want, got);
			w += wl + (w[wl] != 0);
			g += gl + (g[gl] != 0);
		}
		ck_assert_msg(!*w && !*g, "%s: valgrind's:\n%s\nmemcheck's:\n%s",
			      h_allocator_name(a), want, got);
		const char *msupp = h_tmppath(h_env("memcheck%d.supp", a));
		f = fopen(msupp, "w");
		ck_assert(f != NULL);
		fputs(got, f);
		fclose(f);
		/* valgrind reads memcheck's entries: nothing left lost */
		H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=full",
						     h_env("--suppressions=%s", msupp), prog),
		       .no_report = true, .text = "", .timeout = 120);
		ck_assert_msg(strstr(v.r.err, "definitely lost: 0 bytes in 0 blocks") ||
				      strstr(v.r.err, "All heap blocks were freed"),
			      "%s: valgrind with memcheck's entries:\n%s", h_allocator_name(a),
			      v.r.err);
		h_res_free(&v);
		/* and memcheck valgrind's */
		if (!memcheck_under(a, H_LIST("--leak-check=full", h_env("--suppressions=%s", vsupp),
					      prog),
				    &x, H_EXITCODE))
			continue;
		ck_assert_msg(strstr(x.r.err, "definitely lost: 0 bytes in 0 blocks"),
			      "%s: memcheck with valgrind's entries:\n%s", h_allocator_name(a),
			      x.r.err);
		h_res_free(&x);
	}
}
END_TEST

/* The <suppression> elements of an XML document, whole, in order. */
static void xml_suppressions_of(const char *doc, char *out, size_t cap)
{
	size_t m = 0;
	for (const char *p = doc; (p = strstr(p, "  <suppression>")) && m < cap;) {
		const char *e = strstr(p, "</suppression>\n");
		ck_assert_msg(e != NULL, "an unclosed <suppression>:\n%s", doc);
		e += strlen("</suppression>\n");
		m += (size_t)snprintf(out + m, cap - m, "%.*s", (int)(e - p), p);
		p = e;
	}
}

/* --gen-suppressions=all under --xml=yes as valgrind's XML (protocol
 * 4): each record's <suppression> inside its <error> (<sname>, <skind>,
 * <skaux>, <sframe>s, <rawtext>) and, as valgrind 3.19 writes it, again
 * right after the </error>; nothing on standard error, nothing after
 * </valgrindoutput>.  Four allocators; the realloc family's first frame
 * "..." as in the text (gen_suppressions_first_frames).  On main
 * 12d30ba the XML held none, and the entries came as text after
 * </valgrindoutput> in the XML file itself. */
START_TEST(gen_suppressions_in_xml)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *prog = h_prog("plain_leak_family"), *vfile = h_tmppath("vg.xml");
	struct h_res v;
	H_EXEC(&v, .prog = vg,
	       .args = H_LIST("-q", "--leak-check=full", "--gen-suppressions=all", "--xml=yes",
			      h_env("--xml-file=%s", vfile), prog),
	       .no_report = true, .text = "", .timeout = 120);
	h_res_free(&v);
	char *vdoc = h_read_file(vfile, NULL);
	ck_assert(vdoc != NULL);
	static char want[65536], got[65536];
	xml_suppressions_of(vdoc, want, sizeof want);
	ck_assert_msg(strstr(want, "<sframe> <fun>calloc</fun> </sframe>"), "valgrind's XML:\n%s",
		      vdoc);
	free(vdoc);
	for (int a = 0; a < H_NALLOCATORS; a++) {
		const char *mfile = h_tmppath(h_env("mc%d.xml", a));
		struct h_res x;
		if (!memcheck_under(a, H_LIST("-q", "--leak-check=full", "--gen-suppressions=all",
					      "--xml=yes", h_env("--xml-file=%s", mfile), prog),
				    &x, H_EXITCODE))
			continue;
		ck_assert_msg(!strstr(x.r.err, "Memcheck:Leak"), "%s: entries on stderr:\n%s",
			      h_allocator_name(a), x.r.err);
		h_res_free(&x);
		char *mdoc = h_read_file(mfile, NULL);
		ck_assert(mdoc != NULL);
		const char *end = strstr(mdoc, "</valgrindoutput>");
		ck_assert_msg(end && !strchr(end + strlen("</valgrindoutput>"), '{'),
			      "%s: text after the document:\n%s", h_allocator_name(a), mdoc);
		xml_suppressions_of(mdoc, got, sizeof got);
		/* each <suppression> inside an <error>, and the copy after it */
		for (const char *p = mdoc; (p = strstr(p, "</error>\n\n")); p++)
			ck_assert_msg(!strncmp(p + 10, "  <suppression>", 15),
				      "%s: no copy after </error>:\n%s", h_allocator_name(a), mdoc);
		free(mdoc);
		const char *w = want, *g = got;
		while (*w && *g) {
			size_t wl = strcspn(w, "\n"), gl = strcspn(g, "\n");
			bool same = wl == gl && !strncmp(w, g, wl);
			bool realloc_family =
				(gl == 6 && !strncmp(g, "   ...", 6) &&
				 ((wl == 13 && !strncmp(w, "   fun:malloc", 13)) ||
				  (wl == 14 && !strncmp(w, "   fun:realloc", 14)))) ||
				(strstr(g, "<sframe> <fun>...</fun> </sframe>") == g + 4 &&
				 (strstr(w, "<fun>malloc</fun>") || strstr(w, "<fun>realloc</fun>")));
			ck_assert_msg(same || realloc_family, "%s: memcheck wrote \"%.*s\" where "
				      "valgrind wrote \"%.*s\"", h_allocator_name(a), (int)gl, g,
				      (int)wl, w);
			w += wl + (w[wl] != 0);
			g += gl + (g[gl] != 0);
		}
		ck_assert_msg(!*w && !*g, "%s: valgrind's <suppression>s:\n%.3000s\nmemcheck's:\n%.3000s",
			      h_allocator_name(a), want, got);
	}
}
END_TEST

/* A program --trace-children=yes follows writes its head at its start
 * and runs holding no descriptor of memcheck's, as bare (plain_fdlist:
 * the descriptors a test suite lists to find leaked ones); under every
 * allocator.  With the head written through the text's kept descriptor
 * the program listed one more. */
START_TEST(head_keeps_no_descriptor)
{
	const char *cmd = h_env("%s; exit 0", h_prog("plain_fdlist"));
	struct h_res bare;
	H_EXEC(&bare, .prog = "/bin/sh", .args = H_LIST("-c", cmd), .no_report = true, .text = "");
	h_expect_exit(&bare, 0);
	for (int a = 0; a < H_NALLOCATORS; a++) {
		const char *dir = h_tmppath(h_env("fdhead%d", a));
		ck_assert_int_eq(mkdir(dir, 0700), 0);
		const char *args[] = { "--trace-children=yes", h_env("--log-file=%s/%%p.log", dir),
				       "/bin/sh", "-c", cmd, NULL };
		struct h_res x;
		if (!memcheck_under(a, args, &x, 0))
			continue;
		h_expect_exit(&x, 0);
		ck_assert_msg(!strcmp(bare.r.out, x.r.out), "%s: bare listed %s, under memcheck %s",
			      h_allocator_name(a), bare.r.out, x.r.out);
		char want[4096], got[4096];
		heads_of(dir, false, got, sizeof got);
		snprintf(want, sizeof want, "Command: %s", h_prog("plain_fdlist"));
		ck_assert_msg(strstr(got, want), "%s: no head of plain_fdlist's:\n%s",
			      h_allocator_name(a), got);
		h_res_free(&x);
	}
	h_res_free(&bare);
}
END_TEST

/* How many lines of text hold word */
static int count_lines(const char *text, const char *word)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, word)); p += strlen(word))
		n++;
	return n;
}

/* --trace-children=yes: every program executed below the one named is
 * checked and writes its own text or document, as under valgrind, the
 * system's programs too (a shell, /usr/bin/true), which memcheck's
 * default programs rule leaves out; and the program named is checked
 * wherever it is installed, under --trace-children=no too (its forked
 * child that executes another program writes nothing, as valgrind's;
 * valgrind leaves that child's XML document unclosed, and its
 * documents are compared under yes only) */
START_TEST(trace_children_system_programs)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const trace[] = { "--trace-children=yes", "--trace-children=no" };
	for (int t = 0; t < 2; t++) {
		const char *const args[] = { "--leak-check=full", trace[t], "/bin/sh", "-c",
					     "/usr/bin/true; exit 0", NULL };
		struct h_res v, x;
		H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
		H_EXEC(&x, .cli = args, .no_report = true, .text = "");
		h_expect_exit(&x, 0);
		int want = count_lines(v.r.err, "HEAP SUMMARY:");
		ck_assert_msg(want == 2 - t, "%s: valgrind's text has %d HEAP SUMMARY:\n%s", trace[t],
			      want, v.r.err);
		ck_assert_msg(count_lines(x.r.err, "HEAP SUMMARY:") == want &&
			      count_lines(x.r.err, "ERROR SUMMARY: 0 errors") == want,
			      "%s: memcheck's text, %d processes checked as valgrind's:\n%s", trace[t],
			      want, x.r.err);
		h_res_free(&v);
		h_res_free(&x);
	}
	char want[16384], got[16384];
	xml_both(vg, trace[0], H_LIST("/bin/sh", "-c", "/usr/bin/true; exit 0"), want, got,
		 sizeof want);
	ck_assert_msg(count_lines(want, "-- a file") == 2, "valgrind's files:\n%s", want);
	ck_assert_msg(!strcmp(want, got), "valgrind's files:\n%s\nmemcheck's:\n%s", want, got);
}
END_TEST

/* A program that copies its environment (plain_envcopy; dash, which
 * keeps a block for each variable) allocates under valgrind's command
 * line as under valgrind, its bytes too: memcheck's settings travel in
 * one variable that the checked program does not see
 * (--trace-children=no), and its LD_PRELOAD has the length of
 * valgrind's, which puts its two objects in front of the caller's value
 * (a colon after them where the caller set one, an empty one too) or
 * appends the variable where none was (107 bytes more than bare here:
 * the library's entry padded, then colons).  Debian's valgrind is a
 * script that exports LD_LIBRARY_PATH, GLIBCPP_FORCE_NEW and
 * GLIBCXX_FORCE_NEW, and rebuilds the environment (its sh), before it
 * runs valgrind itself, valgrind.bin: that one runs here where it is
 * installed, and adds LD_PRELOAD alone.  Under each allocator,
 * preloaded in both runs (valgrind serves every block itself); under
 * glibc with no LD_PRELOAD and with an empty one. */
START_TEST(environment_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	if (access("/usr/bin/valgrind.bin", X_OK) == 0)
		vg = "/usr/bin/valgrind.bin";
	/* dash, sh -c 'exit 0' (59 allocations under memcheck before the
	 * one variable, valgrind's 49), leaves by _exit: under jemalloc and
	 * tcmalloc, which bring libstdc++, valgrind frees its emergency pool
	 * there too, and so does memcheck now (life.c, freeres_cxx; it
	 * kept it, one free fewer) */
	const char *const *const progs[] = {
		H_LIST("plain_envcopy"),
		H_LIST("/bin/dash", "-c", "exit 0"),
	};
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		/* glibc: with no LD_PRELOAD, then an empty one */
		for (int empty = 0; empty <= !so; empty++) {
			for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) {
				const char *env[2] = { NULL, NULL };
				env[0] = so ? h_env("LD_PRELOAD=%s", so) : empty ? "LD_PRELOAD=" : NULL;
				size_t ne = env[0] != NULL;
				const char *args[8] = { "--leak-check=full" };
				size_t na = 1;
				for (size_t k = 0; progs[p][k]; k++)
					args[na++] = k || progs[p][k][0] == '/' ? progs[p][k]
										: h_prog(progs[p][k]);
				args[na] = NULL;
				struct h_res v, x;
				H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "",
				       .flags = H_EXITCODE, .env = ne ? env : NULL, .timeout = 120);
				H_EXEC(&x, .cli = args, .no_report = true, .text = "", .flags = H_EXITCODE,
				       .alloc = i, .env = ne ? env : NULL);
				h_expect_exit(&x, 0);
				uint64_t va, vf, vb, ma, mf, mb;
				ck_assert_msg(h_valgrind_heap_usage(v.r.err, &va, &vf, &vb),
					      "no \"total heap usage\" from valgrind:\n%s", v.r.err);
				ck_assert_msg(h_valgrind_heap_usage(x.r.err, &ma, &mf, &mb),
					      "no \"total heap usage\" from memcheck:\n%s", x.r.err);
				/* tcmalloc's start-up calls malloc and free twice where
				 * valgrind serves them and memcheck is not yet there:
				 * there the blocks left, and the variables seen */
				bool tcmalloc = strstr(h_allocator_name(i), "tcmalloc") != NULL;
				bool same = tcmalloc ? ma - mf == va - vf
						     : ma == va && mf == vf && mb == vb;
				ck_assert_msg(same && !strcmp(v.r.out, x.r.out),
					      "%s under %s%s: memcheck %llu allocs, %llu frees, %llu bytes, "
					      "stdout \"%s\"; valgrind %llu allocs, %llu frees, %llu bytes, "
					      "stdout \"%s\"", args[1], h_allocator_name(i),
					      empty ? " with LD_PRELOAD=" : "", (unsigned long long)ma,
					      (unsigned long long)mf, (unsigned long long)mb, x.r.out,
					      (unsigned long long)va, (unsigned long long)vf,
					      (unsigned long long)vb, v.r.out);
				h_res_free(&v);
				h_res_free(&x);
			}
		}
	}
}
END_TEST

/* What the checked program executes under --trace-children=no sees
 * LD_PRELOAD as valgrind's executed programs see it: valgrind's execve
 * takes its objects out ("LD_PRELOAD=" where the caller had none, else
 * the caller's value); memcheck's exec wrappers take the colons its
 * library's entry became out of the value they pass on (main 68cf1f5:
 * 106 colons, then the caller's value).  /usr/bin/printenv executed by
 * sh -c, and by plain_spawnenv through system, popen, execl, execle and
 * execlp (main cdc8e4b: 106 colons in front, the C library's own
 * spawn and execve, where no wrapper saw them), stdout compared, under
 * each allocator and under glibc with no LD_PRELOAD and an empty one. */
START_TEST(children_environment_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const modes[] = { "system", "popen", "execl", "execle", "execlp" };
	for (size_t m = 0; m <= sizeof modes / sizeof modes[0]; m++) {
		const char *const sh[] = { "-q", "--trace-children=no", "/bin/sh", "-c",
					   "/usr/bin/printenv LD_PRELOAD; echo \"status $?\"", NULL };
		const char *const prog[] = { "-q", "--trace-children=no", h_prog("plain_spawnenv"),
					     m ? modes[m - 1] : "", NULL };
		const char *const *args = m ? prog : sh;
		for (int i = 0; i < H_NALLOCATORS; i++) {
			const char *so;
			if (!h_allocator(i, &so))
				continue;
			for (int empty = 0; empty <= !so; empty++) {
				const char *env[2] = { NULL, NULL };
				env[0] = so ? h_env("LD_PRELOAD=%s", so) : empty ? "LD_PRELOAD=" : NULL;
				struct h_res v, x;
				H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "",
				       .flags = H_EXITCODE, .env = env[0] ? env : NULL, .timeout = 120);
				H_EXEC(&x, .cli = args, .no_report = true, .text = "", .flags = H_EXITCODE,
				       .alloc = i, .env = env[0] ? env : NULL);
				ck_assert_msg(m > 2 || strstr(v.r.out, "status 0"),
					      "valgrind's stdout \"%s\"", v.r.out);
				ck_assert_msg(v.r.out[0] && !strcmp(v.r.out, x.r.out),
					      "%s under %s%s: memcheck's child printed \"%s\", valgrind's \"%s\"",
					      m ? modes[m - 1] : "sh -c", h_allocator_name(i),
					      empty ? " with LD_PRELOAD=" : "", x.r.out, v.r.out);
				h_res_free(&v);
				h_res_free(&x);
			}
		}
	}
}
END_TEST

/* Threads joined before the exit (plain_joined): glibc keeps their
 * stacks, and in each the dead thread's descriptor, which points into
 * its DTV, one entry past the block's start.  valgrind reads that
 * memory: each DTV is possibly lost, and so it is under memcheck (the
 * scan reads the descriptors of glibc's stack cache, lib/roots.c),
 * where it was definitely lost.  --run-libc-freeres=no: the C library's
 * freeres frees the cache.  Blocks compared, not bytes: each DTV has an
 * entry more under memcheck, for its own thread-local block (16 bytes);
 * and valgrind's figures under tcmalloc have tcmalloc's start-up blocks
 * (definitely lost 8 bytes, still reachable 16), which memcheck's
 * shipped suppressions take: the threads' own leaks alone are compared
 * there. */
START_TEST(joined_threads_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *const args[] = { "--leak-check=full", "--run-libc-freeres=no",
				     h_prog("plain_joined"), "3", NULL };
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		const char *env[2] = { so ? h_env("LD_PRELOAD=%s", so) : NULL, NULL };
		struct h_res v, x;
		H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "",
		       .env = so ? env : NULL, .timeout = 120);
		H_EXEC(&x, .cli = args, .no_report = true, .text = "", .alloc = i,
		       .env = so ? env : NULL);
		struct h_vg_leaks vl, ml;
		ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1, "valgrind's text:\n%s", v.r.err);
		ck_assert_msg(h_valgrind_leaks(x.r.err, &ml, 1) == 1, "memcheck's text:\n%s", x.r.err);
		bool tcmalloc = strstr(h_allocator_name(i), "tcmalloc") != NULL;
		ck_assert_msg(vl.blocks[HVG_POS] == 3 && vl.blocks[HVG_DEF] == 3u + tcmalloc,
			      "valgrind under %s: %llu blocks possibly lost, %llu definitely:\n%s",
			      h_allocator_name(i), (unsigned long long)vl.blocks[HVG_POS],
			      (unsigned long long)vl.blocks[HVG_DEF], v.r.err);
		ck_assert_msg(ml.blocks[HVG_POS] == vl.blocks[HVG_POS] && ml.blocks[HVG_DEF] == 3 &&
			      ml.blocks[HVG_IND] == 0 && ml.blocks[HVG_REA] == 0,
			      "%s: memcheck's blocks definitely lost %llu, possibly lost %llu, "
			      "still reachable %llu; valgrind's %llu, %llu:\n%s", h_allocator_name(i),
			      (unsigned long long)ml.blocks[HVG_DEF],
			      (unsigned long long)ml.blocks[HVG_POS],
			      (unsigned long long)ml.blocks[HVG_REA],
			      (unsigned long long)vl.blocks[HVG_DEF],
			      (unsigned long long)vl.blocks[HVG_POS], x.r.err);
		h_res_free(&v);
		h_res_free(&x);
	}
}
END_TEST

/* The loss records of text whose stacks hold a frame of file, each
 * its heading without its number and those frames' functions and lines
 * (valgrind's own allocation frames, and what other allocators add, left
 * out), in the text's order; a fresh string. */
static char *records_of(const char *text, const char *file)
{
	size_t cap = strlen(text) + 1, m = 0, len;
	char *out = calloc(cap, 1);
	ck_assert_ptr_nonnull(out);
	for (const char *l = text; *l; l += len + (l[len] != 0)) {
		const char *body = after_pid(l, &len);
		size_t n = body ? len - (size_t)(body - l) : 0;
		const char *rec = body ? strstr(body, " in loss record ") : NULL;
		const char *fn = body ? strstr(body, ": ") : NULL;
		if (rec && rec < l + len)
			m += (size_t)snprintf(out + m, cap - m, "%.*s\n", (int)(rec - body), body);
		else if (fn && fn < l + len && strstr(body, file) && strstr(body, file) < l + len &&
			 (!strncmp(body + strspn(body, " "), "at 0x", 5) ||
			  !strncmp(body + strspn(body, " "), "by 0x", 5)))
			m += (size_t)snprintf(out + m, cap - m, "  %.*s\n",
					      (int)(n - (size_t)(fn + 2 - body)), fn + 2);
	}
	return out;
}

/* Loss records alike in bytes, kind and blocks are in valgrind's order:
 * its last key is the record's ExeContext, made at the first allocation
 * with the stack as cut to --num-callers, so the order in which the
 * stacks were first stored.  corpus/deep_recursion's 20,000 frames each
 * lose 24 bytes: eleven records of one block, alike, their stacks cut
 * from deeper ones; on main cdc8e4b the cut stacks, interned at the
 * report, came in the report's order (records 2 to 11 in another order,
 * their frames compared here under each allocator). */
START_TEST(tied_records_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog("corpus/deep_recursion"), NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120,
	       .flags = H_EXITCODE);
	char *want = records_of(v.r.err, "deep_recursion.c");
	ck_assert_msg(strstr(want, "24 bytes in 1 blocks are definitely lost"),
		      "valgrind's records:\n%s", v.r.err);
	h_res_free(&v);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		if (!memcheck_under(i, args, &x, H_EXITCODE))
			continue;
		char *got = records_of(x.r.err, "deep_recursion.c");
		ck_assert_msg(!strcmp(want, got), "under %s: valgrind's records:\n%s\nmemcheck's:\n%s",
			      h_allocator_name(i), want, got);
		free(got);
		h_res_free(&x);
	}
	free(want);
}
END_TEST

/* The end of a long text, for a message */
static const char *text_end(const char *t)
{
	size_t n = strlen(t);
	return t + (n > 1500 ? n - 1500 : 0);
}

/* args under valgrind's command line with allocator i preloaded, into
 * *x and its one process's figures *ml; false where i is not installed */
/* memcheck's valgrind command line args under allocator i, preloaded,
 * into x (flags: the run's, H_EXITCODE where it may die); false where i
 * is not installed. */
static bool memcheck_under(int i, const char *const *args, struct h_res *x, int flags)
{
	const char *so;
	if (!h_allocator(i, &so))
		return false;
	const char *env[2] = { so ? h_env("LD_PRELOAD=%s", so) : NULL, NULL };
	H_EXEC(x, .cli = args, .no_report = true, .text = "", .alloc = i, .env = so ? env : NULL,
	       .flags = flags);
	return true;
}

static bool memcheck_leaks(int i, const char *const *args, struct h_res *x,
			   struct h_vg_leaks *ml)
{
	if (!memcheck_under(i, args, x, 0))
		return false;
	h_expect_exit(x, 0);
	ck_assert_msg(h_valgrind_leaks(x->r.err, ml, 1) == 1, "memcheck's text:\n%s", x->r.err);
	return true;
}

/* memcheck's kinds under each allocator for args equal valgrind's vl:
 * blocks, and bytes but where any_pos_bytes for possibly lost (a
 * running thread's DTV is 16 bytes larger under memcheck: README,
 * Limits).  what names the row. */
static void kinds_as_valgrinds(const char *const *args, const struct h_vg_leaks *vl,
			       bool any_pos_bytes, const char *what)
{
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		struct h_vg_leaks ml;
		if (!memcheck_leaks(i, args, &x, &ml))
			continue;
		for (int k = HVG_DEF; k <= HVG_REA; k++)
			ck_assert_msg(ml.blocks[k] == vl->blocks[k] &&
				      ((any_pos_bytes && k == HVG_POS) || ml.bytes[k] == vl->bytes[k]),
				      "%s, %s: kind %d: memcheck %llu bytes in %llu blocks, valgrind "
				      "%llu in %llu; memcheck's text ends:\n%s", h_allocator_name(i),
				      what, k, (unsigned long long)ml.bytes[k],
				      (unsigned long long)ml.blocks[k], (unsigned long long)vl->bytes[k],
				      (unsigned long long)vl->blocks[k], text_end(x.r.err));
		h_res_free(&x);
	}
}

/* Threads still running at the exit beside a stack in glibc's cache
 * (plain_dtv_running): valgrind kills them and runs __libc_freeres,
 * which frees the cached stack's DTV, and lists the running threads'
 * DTVs possibly lost, one record of 2 blocks: 1 error.  memcheck, which
 * runs no freeres while another thread runs, took all three with
 * glibc.supp's "# freeres: libc" DTV entries: no error (four
 * allocators, on main).  Now those
 * entries take a DTV definitely lost (the cache's: memcheck reads no
 * cached descriptor while freeres is on) and the running threads' are
 * listed as valgrind lists them.  Blocks compared, not bytes (a DTV has
 * an entry more under memcheck, for its own thread-local block), and
 * ERROR SUMMARY's errors and contexts; "in use at exit" keeps the
 * cached DTV, which valgrind's freeres freed (README, Limits).
 * Its flake under tcmalloc (vg47, vgout49; session 50): libstdc++'s pool
 * "still reachable", 1 free where valgrind's 2, in every run after a
 * process that shared the harness's cache and could not open the
 * dynamic linker's debug file: its "???" for call_init were kept
 * (test_symcache's unopened_debug_file_not_kept).  At load, 3 to 4
 * runs in 20 under tcmalloc and jemalloc (none under glibc) counted
 * one or both running threads' DTVs freed: a thread still leaving the
 * exit's first scan's stop was taken for one refusing the second's
 * (running_threads_dtvs_at_load, below). */
/* _i 1: a user's suppression of those DTVs as valgrind shows their
 * stack (pthread_create@@GLIBC_2.34 called by main): memcheck's own
 * pthread_create (threadstart.c) was a frame between the two, and the
 * C library's is named without its version, so the entry missed (the
 * two DTVs possibly lost, 1 error, four allocators, on main); now the
 * depot stores no frame of libmemcheck's (depot.c) and a versioned
 * name takes the frame (suppress.c). */
static const char dtv_supp[] = "{\n   a thread's DTV, made in main\n   Memcheck:Leak\n"
	"   match-leak-kinds: possible\n   ...\n   fun:pthread_create@@GLIBC_2.34\n"
	"   fun:main\n}\n";

START_TEST(running_threads_dtvs_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *supp = _i ? h_env("--suppressions=%s", supp_file(dtv_supp)) : "--num-callers=12";
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all", supp,
				     h_prog("plain_dtv_running"), NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&v, 0);
	struct h_vg_leaks vl;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1, "valgrind's text:\n%s", v.r.err);
	const char *ve = strstr(v.r.err, "ERROR SUMMARY: ");
	ck_assert_msg(vl.blocks[HVG_POS] == (_i ? 0u : 2u) && ve &&
		      !strncmp(ve, _i ? "ERROR SUMMARY: 0 errors" : "ERROR SUMMARY: 1 errors", 23),
		      "valgrind: the two running threads' DTVs possibly lost (%s):\n%s",
		      _i ? "suppressed" : "listed", v.r.err);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		struct h_vg_leaks ml;
		if (!memcheck_leaks(i, args, &x, &ml))
			continue;
		const char *me = strstr(x.r.err, "ERROR SUMMARY: ");
		size_t elen = strcspn(ve, "(");
		for (int k = HVG_DEF; k <= HVG_REA; k++)
			ck_assert_msg(ml.blocks[k] == vl.blocks[k] && me && !strncmp(me, ve, elen),
				      "%s: kind %d: memcheck %llu blocks, valgrind %llu; valgrind's "
				      "%.*s; memcheck's text ends:\n%s", h_allocator_name(i), k,
				      (unsigned long long)ml.blocks[k], (unsigned long long)vl.blocks[k],
				      (int)elen, ve, text_end(x.r.err));
		h_res_free(&x);
	}
	h_res_free(&v);
}
END_TEST

/* A thread that blocks every signal and computes at the exit, never
 * having allocated (tests/prog/plain_dtv_spinning): valgrind finds its
 * DTV possibly lost through its descriptor (272 bytes, 1 error).
 * memcheck read nothing of that thread (its stop refused, no system
 * call, no slot) and counted the DTV freed, no error, four allocators
 * on main; now its descriptor is read from glibc's list of stacks in
 * use.  Blocks compared (a DTV has an entry more under memcheck). */
START_TEST(spinning_thread_dtv_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog("plain_dtv_spinning"), NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&v, 0);
	struct h_vg_leaks vl;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1 && vl.blocks[HVG_POS] == 1,
		      "valgrind: the spinning thread's DTV possibly lost:\n%s", v.r.err);
	kinds_as_valgrinds(args, &vl, true, "a spinning thread's DTV");
	h_res_free(&v);
}
END_TEST

/* A thread that blocks every signal and allocates and frees in a loop
 * at the exit, the only pointer to a 48-byte block 8 bytes into it in
 * a live local and the block's start on a dead frame 16 KiB below
 * (tests/prog/plain_leak_sigfree, userspace-rcu's call_rcu worker
 * freeing at a forked child's exit): valgrind reads the thread from its
 * stack pointer up, the block possibly lost with the thread's DTV (2
 * blocks).  memcheck cannot stop the thread, which spins for the
 * table's lock during the scan, running: its whole stack was read and
 * the dead frame made the block still reachable (four allocators, on
 * main); now it is read from where it spins (roots.c's table_wait_sp).
 * Lost kinds compared (possibly lost's bytes not: a DTV has an entry
 * more under memcheck); still reachable holds at most the loop's block
 * in flight (32 bytes), under valgrind as here. */
START_TEST(freeing_sigblocked_thread_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog("plain_leak_sigfree"), NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&v, 0);
	struct h_vg_leaks vl;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1 && vl.blocks[HVG_POS] == 2 &&
			      vl.blocks[HVG_DEF] == 0 && vl.blocks[HVG_REA] <= 1,
		      "valgrind: the block and the DTV possibly lost:\n%s", v.r.err);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		struct h_vg_leaks ml;
		if (!memcheck_leaks(i, args, &x, &ml))
			continue;
		for (int k = HVG_DEF; k <= HVG_POS; k++)
			ck_assert_msg(ml.blocks[k] == vl.blocks[k] &&
					      (k == HVG_POS || ml.bytes[k] == vl.bytes[k]),
				      "%s: kind %d: memcheck %llu bytes in %llu blocks, valgrind %llu in "
				      "%llu; memcheck's text ends:\n%s", h_allocator_name(i), k,
				      (unsigned long long)ml.bytes[k], (unsigned long long)ml.blocks[k],
				      (unsigned long long)vl.bytes[k], (unsigned long long)vl.blocks[k],
				      text_end(x.r.err));
		ck_assert_msg(ml.blocks[HVG_REA] <= 1 && ml.bytes[HVG_REA] == 32 * ml.blocks[HVG_REA],
			      "%s: still reachable %llu bytes in %llu blocks, at most the loop's "
			      "32-byte block; memcheck's text ends:\n%s", h_allocator_name(i),
			      (unsigned long long)ml.bytes[HVG_REA],
			      (unsigned long long)ml.blocks[HVG_REA], text_end(x.r.err));
		h_res_free(&x);
	}
	h_res_free(&v);
}
END_TEST

/* The same program at load, under each allocator: a busy loop on each
 * processor beside it, RUNS exits, each with the running threads' two
 * DTVs possibly lost (valgrind's 2 blocks, running_threads_dtvs_as_
 * valgrinds).  On main 4 exits in 40 under jemalloc and 3 in 40 under
 * tcmalloc (0 under glibc) counted one or both freed: its exit scans
 * twice, and a thread released at the end of the first and not yet
 * given a processor still blocks the stop signal inside the handler,
 * which the second took for a thread refusing it, taken as it is with
 * no slot (it never allocated): its descriptor and DTV no root
 * (threads.c's busy).  Loaded runs only make the race likely: a row
 * that passes on main is possible, one that fails here is a defect. */
#define DTV_LOAD_RUNS 25
START_TEST(running_threads_dtvs_at_load)
{
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     "--num-callers=12", h_prog("plain_dtv_running"), NULL };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t busy[8];
	int nbusy = 0;
	for (; nbusy < (cpus > 0 && cpus < 8 ? cpus : 8); nbusy++) {
		busy[nbusy] = fork();
		ck_assert_int_ge(busy[nbusy], 0);
		if (busy[nbusy] == 0) {
			alarm(300);
			for (volatile unsigned long n = 0;; n++)
				;
		}
	}
	int bad = 0, runs = 0;
	uint64_t seen = 0;
	char *last = NULL;
	for (int k = 0; k < DTV_LOAD_RUNS; k++) {
		struct h_res x;
		struct h_vg_leaks ml;
		if (!memcheck_under(_i, args, &x, 0))
			break;
		runs++;
		if (x.r.exit_code != 0 || h_valgrind_leaks(x.r.err, &ml, 1) != 1 ||
		    ml.blocks[HVG_POS] != 2) {
			bad++;
			seen = h_valgrind_leaks(x.r.err, &ml, 1) == 1 ? ml.blocks[HVG_POS] : 99;
			free(last);
			last = strdup(text_end(x.r.err));
		}
		h_res_free(&x);
	}
	for (int k = 0; k < nbusy; k++) {
		kill(busy[k], SIGKILL);
		waitpid(busy[k], NULL, 0);
	}
	ck_assert_msg(!bad, "%s: %d of %d exits at load without the running threads' 2 DTVs "
		      "possibly lost (last: %llu blocks); its text ends:\n%s", h_allocator_name(_i),
		      bad, runs, (unsigned long long)seen, last ? last : "");
	free(last);
}
END_TEST

/* A process that exits with a thread of its own still running: valgrind
 * kills the thread and runs the freeres functions, and counts what they
 * free freed.  memcheck cannot run them while the thread runs; the
 * blocks they would free, which the shipped "# freeres:" entries take,
 * were suppressed and in use at exit (cxx_running_tls: libstdc++'s
 * pool, 72,704 bytes, one free fewer than valgrind's, four allocators;
 * plain_dtv_running: glibc's cached stack's DTV, a suppressed error, on
 * main).  Now counted freed, as valgrind's.  valgrind once, without an
 * allocator; memcheck under each: the kinds' blocks equal, the frees
 * too under glibc (jemalloc and tcmalloc bring libstdc++ to a C
 * program, and its pool: one alloc and one free more than valgrind's,
 * as where freeres runs), "in use at exit" valgrind's blocks and the
 * allocator's own that memcheck's shipped files suppress (tcmalloc's
 * start-up blocks),
 * ERROR SUMMARY's errors and suppressed errors alike (but tcmalloc's).
 * Blocks, not bytes: a DTV has an entry more under memcheck for its
 * own thread-local block, and more for the allocator's (README,
 * Limits). */
START_TEST(running_thread_freeres_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog(_i ? "plain_dtv_running" : "cxx_running_tls"), NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&v, 0);
	struct h_vg_leaks vl;
	uint64_t va, vf, vb;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1 &&
		      h_valgrind_heap_usage(v.r.err, &va, &vf, &vb), "valgrind's text:\n%s",
		      v.r.err);
	ck_assert_msg(vl.blocks[HVG_SUP] == 0 && vf > 0, "valgrind: freeres freed, nothing "
		      "suppressed:\n%s", v.r.err);
	const char *ve = strstr(v.r.err, "ERROR SUMMARY: ");
	ck_assert_ptr_nonnull(ve);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		struct h_vg_leaks ml;
		if (!memcheck_leaks(i, args, &x, &ml))
			continue;
		uint64_t ma, mf, mb;
		ck_assert(h_valgrind_heap_usage(x.r.err, &ma, &mf, &mb));
		bool tc = strstr(h_allocator_name(i), "tcmalloc") != NULL;
		const char *me = strstr(x.r.err, "ERROR SUMMARY: ");
		size_t elen = tc ? strcspn(ve, "(") : strcspn(ve, "\n");
		for (int k = HVG_DEF; k <= HVG_REA; k++)
			ck_assert_msg(ml.blocks[k] == vl.blocks[k] && mf >= vf && ma >= va &&
				      (i == H_GLIBC ? mf == vf : ma - va == mf - vf + ml.blocks[HVG_SUP]) &&
				      ml.in_use_blocks == vl.in_use_blocks + ml.blocks[HVG_SUP] &&
				      me && !strncmp(me, ve, elen),
				      "%s: kind %d: memcheck %llu blocks, valgrind %llu; frees %llu, "
				      "valgrind's %llu; in use %llu blocks, valgrind's %llu; "
				      "valgrind's %.*s; memcheck's text ends:\n%s",
				      h_allocator_name(i), k, (unsigned long long)ml.blocks[k],
				      (unsigned long long)vl.blocks[k], (unsigned long long)mf,
				      (unsigned long long)vf, (unsigned long long)ml.in_use_blocks,
				      (unsigned long long)vl.in_use_blocks, (int)elen, ve,
				      text_end(x.r.err));
		h_res_free(&x);
	}
	h_res_free(&v);
}
END_TEST

/* A signal handler run on the program's alternate stack loses a block
 * (plain_leak_altstack): its frame, once it returned, is below the stack
 * pointer, undefined to valgrind, which says definitely lost.  memcheck
 * read the dead frame as part of the .bss buffer or the block that
 * holds the stack, or of a second thread's buffer, and said still
 * reachable (48 bytes, four allocators, on main); now each thread's
 * alternate stack where no handler runs on it is no root (roots.c).
 * The kinds' blocks, and the definitely lost and still reachable
 * bytes, as valgrind's (the running thread's DTV, possibly lost, is 16
 * bytes larger under memcheck: README, Limits).  "none": on the
 * thread's stack (the suppression row above); "onstack", the same
 * with SA_ONSTACK and no stack of the program's; "heap", a stack in a
 * block the program keeps: that very block read without the stack (48
 * bytes still reachable, four allocators, on main); "freed": a stack in
 * a block, freed and never disabled, a block of its size made in its
 * place (glibc) read whole, the block it points to still reachable
 * (passes on main too; a cut of the stack out of the block that holds
 * it, as the merge of session 42 first had, said the 40 bytes
 * definitely lost under glibc); "reused": the same with the data block
 * made by the same call as the stack's, of the same size, at its
 * address (glibc, tcmalloc): still reachable (a cut that took the
 * block's start, size, stack and epoch for its identity, without the
 * epoch signals.c begins at the note, said the 40 bytes definitely
 * lost: 88 in 2 blocks, glibc and tcmalloc). */
START_TEST(altstack_handler_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const modes[] = { "bss", "thread", "none", "freed", "heap", "reused",
					     "onstack" };
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog("plain_leak_altstack"), modes[_i], NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&v, 0);
	struct h_vg_leaks vl;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1 && vl.blocks[HVG_DEF] == 1 &&
		      vl.bytes[HVG_DEF] == 48, "valgrind, %s: the handler's 48 bytes definitely "
		      "lost:\n%s", modes[_i], v.r.err);
	kinds_as_valgrinds(args, &vl, true, modes[_i]);
	h_res_free(&v);
}
END_TEST

/* A frame line of a valgrind-style text: its function, its address's
 * offset in its page (the objects load elsewhere under valgrind) and
 * what follows the function, "(file:line)" or "(in object)". */
struct frame_seen {
	char fn[96], where[160];
	unsigned off;
};

/* The frames of the record headed by a line containing heading in a
 * valgrind-style text, from its first frame line (valgrind's "at" is
 * the allocation function, memcheck's the caller: skip says how many to
 * leave out; lines before the first frame, a fault's address, passed
 * over), into out[0..max): how many, -1 without that record. */
static int record_frames(const char *text, const char *heading, int skip,
			 struct frame_seen *out, int max)
{
	const char *l = strstr(text, heading);
	if (!l)
		return -1;
	int n = 0, lines = 0;
	for (l = strchr(l, '\n'); l && *++l; l = strchr(l, '\n')) {
		const char *at = strstr(l, "==    at 0x"), *by = strstr(l, "==    by 0x");
		const char *nl = strchr(l, '\n');
		const char *f = at && (!nl || at < nl) ? at : by && (!nl || by < nl) ? by : NULL;
		if (!f && !lines++ && n == 0 && skip >= 0)
			continue; /* one line before the frames */
		if (!f)
			break;
		unsigned long addr = strtoul(f + 9, NULL, 16);
		f = strstr(f, ": ");
		if (!f || (nl && f > nl))
			break;
		f += 2;
		size_t len = strcspn(f, " \n");
		if (skip > 0) {
			skip--;
			continue;
		}
		if (n < max) {
			const char *w = f + len + (f[len] == ' ');
			snprintf(out[n].fn, sizeof out[n].fn, "%.*s", (int)len, f);
			snprintf(out[n].where, sizeof out[n].where, "%.*s", (int)strcspn(w, "\n"), w);
			out[n++].off = (unsigned)(addr & 0xfff);
		}
	}
	return n;
}

/* The functions of such a record, into out[0..max) */
static int record_functions(const char *text, const char *heading, int skip,
			    char out[][96], int max)
{
	struct frame_seen fs[16];
	int n = record_frames(text, heading, skip, fs, max < 16 ? max : 16);
	for (int k = 0; k < n; k++)
		memcpy(out[k], fs[k].fn, sizeof fs[k].fn);
	return n;
}

/* Does the record headed by heading in memcheck's text name want's nw
 * functions, frame by frame? */
static bool same_functions(char want[][96], int nw, const char *text, const char *heading)
{
	char got[16][96];
	int ng = record_functions(text, heading, 0, got, 16);
	bool same = ng == nw;
	for (int k = 0; same && k < nw; k++)
		same = !strcmp(want[k], got[k]);
	return same;
}

/* The frames of the record headed by heading in memcheck's text at
 * valgrind's addresses, frame by frame (skip: valgrind's own first
 * frames, its malloc), and at its file:line wherever valgrind names one
 * of the program's (valgrind reads the C library's debug files, which
 * memcheck does not): "" where they are, else the first that is not. */
static const char *frames_at_valgrinds(const char *vtext, const char *mtext, const char *heading,
				       int skip, char *why, size_t cap)
{
	struct frame_seen want[16], got[16];
	int nw = record_frames(vtext, heading, skip, want, 16);
	int ng = record_frames(mtext, heading, 0, got, 16);
	if (nw <= 0 || nw != ng) {
		snprintf(why, cap, "%d frames, valgrind's %d", ng, nw);
		return why;
	}
	for (int k = 0; k < nw; k++)
		if (got[k].off != want[k].off ||
		    (!strncmp(want[k].where, "(plain_", 7) && strcmp(got[k].where, want[k].where))) {
			snprintf(why, cap, "frame %d %s: +0x%03x %s, valgrind's +0x%03x %s", k,
				 want[k].fn, got[k].off, got[k].where, want[k].off, want[k].where);
			return why;
		}
	return "";
}

/* A signal handler's lost block, as valgrind shows its stack: the
 * handler, the C library's signal return, the interrupted function and
 * its callers (plain_leak_altstack "none": __pthread_kill_implementation,
 * handle_on, main; "onstack", SA_ONSTACK with no alternate stack, the
 * same; on an alternate stack, "bss" and "thread", valgrind's walk
 * stays on the stack it starts on and ends at the interrupted
 * function).  memcheck's stack, function by function below valgrind's
 * allocation function, is valgrind's, under the four allocators, and
 * the suppression valgrind writes for the block (--gen-suppressions)
 * suppresses it under memcheck.  Before (on main): the handler, the
 * signal return, then main (the interrupted rbp followed: the C
 * library's frames and handle_on lost), or the handler alone on an
 * alternate stack, memcheck's too ("onstack": the kernel puts it there,
 * fatal.c moves it to the thread's stack); valgrind's entry missed (48
 * bytes definitely lost, four allocators).  Each frame's address too,
 * its offset in its page (frames_at_valgrinds): valgrind writes a
 * caller's as the call's last byte, one before the return address, the
 * signal return's and the interrupted pc's alike; pre57 (a5ab802) wrote
 * the return addresses, every frame +1 (four allocators). */
START_TEST(handler_stack_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char *const modes[] = { "none", "bss", "thread", "onstack" };
	static const char heading[] = "48 bytes in 1 blocks are definitely lost";
	const char *prog = h_prog("plain_leak_altstack");
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=full", "--gen-suppressions=all", prog,
					      modes[_i]),
	       .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&v, 0);
	char want[16][96];
	int nw = record_functions(v.r.err, heading, 1, want, 16);
	ck_assert_msg(nw >= 3 && !strcmp(want[0], "on_usr1") && !strcmp(want[1], "???") &&
			      !strcmp(want[2], "__pthread_kill_implementation"),
		      "%s: valgrind's record:\n%s", modes[_i], v.r.err);
	/* its entry for that record: the first after the heading */
	const char *e = strchr(strstr(v.r.err, heading), '{'), *end = e ? strchr(e, '}') : NULL;
	ck_assert_msg(e && end && strstr(e, "match-leak-kinds: definite") < end,
		      "%s: no entry after valgrind's record:\n%s", modes[_i], v.r.err);
	const char *supp = h_tmppath("handler.supp");
	FILE *f = fopen(supp, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%.*s}\n", (int)(end - e), e);
	fclose(f);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		if (!memcheck_under(i, H_LIST("--leak-check=full", prog, modes[_i]), &x, 0))
			continue;
		h_expect_exit(&x, 0);
		ck_assert_msg(same_functions(want, nw, x.r.err, heading), "%s, %s: frame by frame "
			      "not valgrind's %d (%s %s %s ...); memcheck's text:\n%s",
			      h_allocator_name(i), modes[_i], nw, want[0], want[1], want[2], x.r.err);
		char why[512];
		const char *at = frames_at_valgrinds(v.r.err, x.r.err, heading, 1, why, sizeof why);
		ck_assert_msg(!at[0], "%s, %s: not at valgrind's addresses: %s\nmemcheck's text:\n%s",
			      h_allocator_name(i), modes[_i], at, x.r.err);
		h_res_free(&x);
		memcheck_under(i, H_LIST("--leak-check=full", h_env("--suppressions=%s", supp), prog,
					 modes[_i]), &x, 0);
		h_expect_exit(&x, 0);
		struct h_vg_leaks ml;
		ck_assert_msg(h_valgrind_leaks(x.r.err, &ml, 1) == 1 && ml.blocks[HVG_DEF] == 0 &&
				      ml.bytes[HVG_SUP] >= 48,
			      "%s, %s: valgrind's entry does not take the block:\n%.*s\n"
			      "memcheck's text:\n%s", h_allocator_name(i), modes[_i],
			      (int)(end - e + 1), e, x.r.err);
		h_res_free(&x);
	}
	h_res_free(&v);
}
END_TEST

/* Blocks whose only copies are in what the C library's freeres frees
 * (plain_leak_unfreed: an address in stdio's unflushed buffer, a putenv
 * string in the environment's array), definitely lost to valgrind,
 * which runs freeres before its scan; "thread": with a thread still
 * running at the exit, where memcheck cannot run freeres and found
 * both still reachable through the buffer and the array (51 bytes in 2
 * blocks, four allocators, on main): now a second pass of the scan
 * without the blocks the "# freeres:" entries take (scanpool.c).  The
 * kinds as valgrind's (the running thread's DTV, possibly lost, 16
 * bytes larger under memcheck: README, Limits); "alone": memcheck runs
 * freeres itself (passes on main too).  The locale's and a message
 * catalogue's blocks, which only other such blocks point to, none lost:
 * the pass first made without reading the blocks the entries take said
 * 14 records of them definitely lost (xz -T2 likewise), where they are
 * reachable all the same and counted freed (scan.c's freed_reached). */
START_TEST(unfreed_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	setenv("LANG", "C.UTF-8", 1); /* this test's process, and its runs */
	const char *mode = _i ? "alone" : "thread";
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog("plain_leak_unfreed"), mode, NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	h_expect_exit(&v, 0);
	struct h_vg_leaks vl;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1 && vl.blocks[HVG_DEF] == 2 &&
			      vl.bytes[HVG_DEF] == 51,
		      "valgrind, %s: 51 bytes in 2 blocks definitely lost:\n%s", mode, v.r.err);
	kinds_as_valgrinds(args, &vl, true, mode);
	h_res_free(&v);
}
END_TEST

/* A signal handler that faults (plain_leak_altstack segv): the stack of
 * valgrind's "Process terminating", the faulting handler, the signal
 * return and the interrupted frames under it, is valgrind's under the
 * four allocators (fatal.c's walk steps through the signal frame: on
 * main it ended at the signal return, two frames of valgrind's five).
 * At valgrind's addresses and lines: the faulting pc as it is, the
 * callers' one before their return addresses; pre57 (a5ab802) named
 * the faulting pc's line by the byte before it (line 64, valgrind's 65)
 * and wrote the callers' return addresses (+1), four allocators. */
START_TEST(handler_fault_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	static const char heading[] = "Process terminating with default action of signal 11";
	const char *prog = h_prog("plain_leak_altstack");
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=full", prog, "segv"), .no_report = true,
	       .text = "", .timeout = 120);
	ck_assert_msg(v.r.signal == 11, "valgrind: %s\n%s", h_status(&v.r), v.r.err);
	char want[16][96];
	int nw = record_functions(v.r.err, heading, 0, want, 16);
	ck_assert_msg(nw == 5 && !strcmp(want[0], "on_usr1") && !strcmp(want[1], "???") &&
			      !strcmp(want[4], "main"),
		      "valgrind's stack at the fault:\n%s", v.r.err);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		if (!memcheck_under(i, H_LIST("--leak-check=full", prog, "segv"), &x, H_EXITCODE))
			continue;
		ck_assert_msg(x.r.signal == 11, "%s: %s\n%s", h_allocator_name(i), h_status(&x.r),
			      x.r.err);
		ck_assert_msg(same_functions(want, nw, x.r.err, heading), "%s: at the fault, not "
			      "valgrind's %d frames:\n%s", h_allocator_name(i), nw, x.r.err);
		char why[512];
		const char *at = frames_at_valgrinds(v.r.err, x.r.err, heading, 0, why, sizeof why);
		ck_assert_msg(!at[0], "%s: at the fault, not at valgrind's addresses: %s\n%s",
			      h_allocator_name(i), at, x.r.err);
		h_res_free(&x);
	}
	h_res_free(&v);
}
END_TEST

/* An address a live frame still holds after its block was freed, handed
 * out again to a block that is then lost (plain_leak_stale): valgrind,
 * whose heap hands a freed address out again only 20 MB of frees later,
 * says definitely lost, and still reachable where the frame's word is
 * the new block's own ("live").  Where the allocator hands the address
 * out again at once (the program says "reused": glibc, jemalloc and
 * tcmalloc), the memory at the exit is the same in both modes, and
 * memcheck, whose scan reads that memory alone, says still reachable in
 * both: the limit memcheck(7) gives, pinned here (a scan that said
 * definitely lost there would say so of the live block too).  Under an
 * allocator that gave another address (mimalloc), valgrind's verdict. */
START_TEST(stale_address_in_a_live_frame)
{
	const char *vg = h_valgrind_path();
	const char *mode = _i ? "live" : "stale";
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog("plain_leak_stale"), mode, NULL };
	int vkind = _i ? HVG_REA : HVG_DEF;
	if (vg) {
		struct h_res v;
		H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
		h_expect_exit(&v, 0);
		struct h_vg_leaks vl;
		ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1 && vl.blocks[vkind] == 1 &&
			      vl.bytes[vkind] == 32 && !strstr(v.r.err, "reused"),
			      "valgrind, %s: 32 bytes in 1 block %s, no address reused:\n%s", mode,
			      _i ? "still reachable" : "definitely lost", v.r.err);
		h_res_free(&v);
	} else {
		printf("note: valgrind not installed; its figures as written here\n");
	}
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_res x;
		struct h_vg_leaks ml;
		if (!memcheck_leaks(i, args, &x, &ml))
			continue;
		bool reused = strstr(x.r.err, "reused\n") != NULL;
		int kind = reused ? HVG_REA : vkind;
		for (int k = HVG_DEF; k <= HVG_REA; k++)
			ck_assert_msg(ml.blocks[k] == (k == kind) && ml.bytes[k] == (k == kind ? 32u : 0u),
				      "%s, %s (address %s): kind %d: %llu bytes in %llu blocks; "
				      "memcheck's text ends:\n%s", h_allocator_name(i), mode,
				      reused ? "reused" : "not reused", k,
				      (unsigned long long)ml.bytes[k], (unsigned long long)ml.blocks[k],
				      text_end(x.r.err));
		h_res_free(&x);
	}
}
END_TEST

/* An object dlopen loaded and nobody closed (plain_leak_dlopen): its
 * map, names and lists are still reachable to valgrind, through the
 * chain of maps that begins in pages ld.so mapped for itself at the
 * start (lib/roots.c, startup_maps), and only the program's own block
 * is lost.  Under jemalloc and tcmalloc, whose libstdc++ and libgcc_s
 * come last on that chain, memcheck said the map definitely lost (and
 * what it holds indirectly).  valgrind once, without an allocator (it
 * serves every block itself); memcheck under each: the four kinds'
 * lines alike (the suppressed one counts tcmalloc's own blocks). */
/* _i 1: an object with a dependency of its own (libidn2's libunistring):
 * its map and names, still reachable to valgrind, were suppressed by
 * glibc.supp's dlopen-deps entry, whose "..." took them for the opened
 * object's dependency list (1,322 bytes in 3 blocks fewer still
 * reachable, four allocators, on main) */
START_TEST(dlopened_as_valgrinds)
{
	const char *vg = valgrind_or_note();
	if (!vg)
		return;
	const char *const args[] = { "--leak-check=full", "--show-leak-kinds=all",
				     h_prog("plain_leak_dlopen"), _i ? "libidn2.so.0" : NULL, NULL };
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120);
	if (_i && v.r.exit_code == 77) {
		printf("note: libidn2.so.0 not installed; skipping\n");
		h_res_free(&v);
		return;
	}
	h_expect_exit(&v, 0);
	struct h_vg_leaks vl;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &vl, 1) == 1, "valgrind's text:\n%s", v.r.err);
	ck_assert_msg(vl.blocks[HVG_DEF] == 1 && vl.bytes[HVG_DEF] == 48 && vl.blocks[HVG_REA] > 0,
		      "valgrind: the program's own block alone lost, the object's reachable:\n%s",
		      v.r.err);
	kinds_as_valgrinds(args, &vl, false, _i ? "libidn2.so.0" : "the program's own");
	h_res_free(&v);
}
END_TEST

/* tcmalloc's default MallocExtension, lost at its start-up by design,
 * with a copy of its address in a word of the program's: still
 * reachable, tcmalloc's own all the same, suppressed by tcmalloc.supp
 * whatever its kind, as valgrind suppresses it (valgrind run on tcmalloc
 * with --soname-synonyms and the files; memcheck under tcmalloc).  A
 * stale copy in an unwritten word of a live frame did the same in one
 * plain_check process in ~200 (records_cut_as_valgrinds' check suite
 * rows): memcheck reads such words, valgrind does not. */
START_TEST(tcmalloc_default_extension_kept)
{
	const char *vg = valgrind_or_note(), *so;
	if (!vg || !h_allocator(H_TCMALLOC, &so))
		return;
	const char *env[2] = { h_env("LD_PRELOAD=%s", so), NULL };
	const char *const args[] = {
		"--leak-check=full", "--show-leak-kinds=all", "--soname-synonyms=somalloc=*tcmalloc*",
		h_env("--suppressions=%s/../suppressions/glibc.supp", h_build()),
		h_env("--suppressions=%s/../suppressions/libstdcxx.supp", h_build()),
		h_env("--suppressions=%s/../suppressions/tcmalloc.supp", h_build()),
		h_prog("plain_tcmalloc_kept"), NULL
	};
	struct h_res v, x;
	H_EXEC(&v, .prog = vg, .args = args, .no_report = true, .text = "", .timeout = 120,
	       .env = env);
	h_expect_exit(&v, 0);
	ck_assert_msg(strstr(v.r.out, "kept"), "valgrind's run found no default extension:\n%s%s",
		      v.r.out, v.r.err);
	/* memcheck reads the files itself */
	H_EXEC(&x, .cli = H_LIST("--leak-check=full", "--show-leak-kinds=all",
				 h_prog("plain_tcmalloc_kept")),
	       .no_report = true, .text = "", .alloc = H_TCMALLOC, .env = env);
	h_expect_exit(&x, 0);
	ck_assert_msg(strstr(x.r.out, "kept"), "memcheck's run found no default extension:\n%s%s",
		      x.r.out, x.r.err);
	char *want = vg_lines(v.r.err, false, true), *got = vg_lines(x.r.err, false, true);
	ck_assert_msg(strstr(want, "still reachable: 0 bytes in 0 blocks"),
		      "valgrind's lines:\n%s", want);
	ck_assert_msg(!strcmp(want, got), "valgrind's lines:\n%s\nmemcheck's:\n%s\nmemcheck's "
		      "whole text:\n%.1500s", want, got, x.r.err);
	free(want);
	free(got);
	h_res_free(&v);
	h_res_free(&x);
}
END_TEST

/* valgrind refuses --xml=yes without a destination; memcheck writes no
 * socket */
START_TEST(xml_bad_usage)
{
	static const struct {
		const char *word, *err;
	} bad[] = {
		{ "--xml=yes", "no XML output destination" },
		{ "--xml-socket=127.0.0.1:1500", "not to a socket" },
		{ "--xml=maybe", "expected yes or no" },
		{ "--xml-fd=x", "expected a descriptor's number" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct h_res x;
		H_EXEC(&x, .cli = H_LIST(bad[i].word, h_prog("plain_leak_depth"), "3"),
		       .no_report = true, .text = "", .flags = H_EXITCODE);
		h_expect_exit(&x, 2);
		ck_assert_msg(strstr(x.r.err, bad[i].err),
			      "%s: expected \"%s\", stderr:\n%s", bad[i].word, bad[i].err, x.r.err);
		h_res_free(&x);
	}
}
END_TEST

static const struct h_case cases[] = {
	{ "a varied mix", .allocators = H_ONLY(H_GLIBC), .check = same_as_valgrind,
	  .run = { .prog = "plain_mix", .args = H_LIST("3000"), .flags = H_PRELOAD },
	  .record = "process" },
	/* 40 exit handlers registered before memcheck's constructor
	 * (libexitfn.so's default): the list glibc calloc'd for them, and
	 * frees after memcheck's handler, freed (main 12d30ba: 0 frees,
	 * valgrind's 1) */
	{ "glibc's exit-function list", .allocators = H_ONLY(H_GLIBC), .check = same_as_valgrind,
	  .run = { .prog = "plain_exitfn", .args = H_LIST("exit"), .flags = H_PRELOAD },
	  .record = "process" },
	{ "a leaking program", .allocators = H_ONLY(H_GLIBC), .check = same_as_valgrind,
	  .run = { .prog = "plain_errors", .args = H_LIST("leak"), .flags = H_PRELOAD },
	  .record = "process" },
	/* what exit's stdio clean-up frees after the report, counted freed
	 * (main: 0 frees, valgrind's 1; ungetwc: 0, valgrind's 2) */
	{ "ungetc's backup area on stdin", .allocators = H_ONLY(H_GLIBC),
	  .check = same_as_valgrind_freeres_off, .record = "process",
	  .run = { .prog = "plain_stdio_exit", .args = H_LIST("ungetc-stdin"), .flags = H_PRELOAD } },
	{ "stdout's wide buffer", .allocators = H_ONLY(H_GLIBC),
	  .check = same_as_valgrind_freeres_off, .record = "process",
	  .run = { .prog = "plain_stdio_exit", .args = H_LIST("fwprintf"), .flags = H_PRELOAD } },
	{ "a wide stream's backup area and buffer", .allocators = H_ONLY(H_GLIBC),
	  .check = same_as_valgrind_freeres_off, .record = "process",
	  .run = { .prog = "plain_stdio_exit", .args = H_LIST("ungetwc"), .flags = H_PRELOAD } },
};

/* ---- one answer to "is another thread running?" at the exit ------- */

/* The string at addr in the traced process, at most cap - 1 bytes. */
static void traced_str(pid_t pid, uintptr_t addr, char *out, size_t cap)
{
	size_t n = 0;
	while (n + sizeof(long) < cap) {
		errno = 0;
		long w = ptrace(PTRACE_PEEKDATA, pid, (void *)(addr + n), NULL);
		if (errno)
			break;
		memcpy(out + n, &w, sizeof w);
		if (memchr(&w, 0, sizeof w))
			return;
		n += sizeof w;
	}
	out[n] = 0;
}

/* The threads of process pid (its /proc/PID/task entries). */
static int tasks_of(pid_t pid)
{
	DIR *d = opendir(h_env("/proc/%d/task", (int)pid));
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Where freeres_one_answer_to_threads's trace is (race_step). */
struct race {
	int state;  /* 0 before the mark, 1 after it, 2 /proc/self/task opened,
		     * 3 its descriptor known, 4 closed: the thread let go */
	int left;   /* the threads left then */
	long fd;    /* the listing's descriptor */
	int release; /* the pipe's end whose byte lets the thread go */
};

static int race_step(const struct h_trace *t)
{
	struct race *r = t->arg;
	struct user_regs_struct regs;
	ptrace(PTRACE_GETREGS, t->pid, NULL, &regs);
	bool entry = t->stop == H_TRACE_CALL_ENTRY;
	char path[64];
	if (entry && r->state == 0 && regs.orig_rax == SYS_getcpu) {
		r->state = 1;
	} else if (entry && r->state == 1 && regs.orig_rax == SYS_openat) {
		traced_str(t->pid, regs.rsi, path, sizeof path);
		r->state = strcmp(path, "/proc/self/task") ? 1 : 2;
	} else if (!entry && r->state == 2) {
		r->fd = (long)regs.rax;
		r->state = 3;
	} else if (entry && r->state == 3 && regs.orig_rax == SYS_close && (long)regs.rdi == r->fd) {
		ck_assert_int_eq(write(r->release, "x", 1), 1);
		for (int i = 0; i < 10000 && (r->left = tasks_of(t->pid)) > 1; i++)
			usleep(1000);
		r->state = 4;
		return H_TRACE_DETACH;
	}
	return H_TRACE_ON;
}

/* plain_freeres_race under valgrind's command line, its main thread
 * traced (ptrace, its system calls): after the program's mark (getcpu),
 * memcheck's first listing of /proc/self/task at the exit (life.c's
 * freeres: the program's second thread, blocked in read, runs: freeres
 * skipped) is let through; at its close the thread is let go (a byte
 * down its pipe) and waited for until the process has one thread, and
 * the trace ends.  Every later question finds the process alone.  Taken
 * twice (12d30ba), the answer made the blocks the skipped freeres would
 * free suppressed, neither freed nor counted freed (glibc: "suppressed:
 * 16,320 bytes in 137 blocks", 137 frees fewer), as Python's joined
 * thread still in its OS exit did once in 6 runs (stale45): now counted
 * freed, under the four allocators (tcmalloc's own 2 start-up blocks
 * suppressed, tcmalloc.supp).  In use then: the DTV of the thread, which
 * ended unjoined, possibly lost through its descriptor glibc keeps, as
 * valgrind says of the same program whose thread ends at once (its
 * read of descriptor 0 at end of file: 272 bytes possibly lost; "All
 * heap blocks were freed" under memcheck before verdict48). */
START_TEST(freeres_one_answer_to_threads)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	if (!h_can_ptrace()) {
		printf("note: this system refuses ptrace; skipping\n");
		return;
	}
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	const char *err = h_tmppath("freeres_race.err");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[1]);
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600), null = open("/dev/null", O_RDWR);
		if (fd < 0 || null < 0 || dup2(fd, 2) < 0 || dup2(null, 1) < 0)
			_exit(127);
		setenv("RACE_FD", h_env("%d", p[0]), 1);
		setenv("LANG", "C.UTF-8", 1);
		if (so)
			setenv("LD_PRELOAD", so, 1);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(h_env("%s/memcheck", h_build()), "memcheck", "--leak-check=full",
		      h_prog("plain_freeres_race"), (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	struct race r = { .state = 0, .left = -1, .fd = -1, .release = p[1] };
	int st = h_trace(pid, H_TRACE_CALLS, race_step, &r);
	int state = r.state, left = r.left;
	close(p[1]);
	char *text = h_read_file(err, NULL);
	ck_assert_msg(text && state == 4 && left == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "%s: the trace did not end the thread in time (state %d, %d threads "
		      "left, status %#x):\n%s", h_allocator_name(_i), state, left, st,
		      text ? text : "(no text)");
	struct h_vg_leaks ml = { 0 };
	int n = strstr(text, "All heap blocks were freed") ? 0 : h_valgrind_leaks(text, &ml, 1);
	uint64_t own = strstr(h_allocator_name(_i), "tcmalloc") ? 2 : 0;
	ck_assert_msg(n >= 0 && ml.blocks[HVG_SUP] == own && ml.in_use_blocks == own + 1 &&
			      ml.blocks[HVG_POS] == 1,
		      "%s: what the skipped freeres would free suppressed or in use at exit "
		      "(%llu blocks suppressed, %llu in use; the allocator's own: %llu, and the "
		      "ended thread's DTV):\n%s",
		      h_allocator_name(_i), (unsigned long long)ml.blocks[HVG_SUP],
		      (unsigned long long)ml.in_use_blocks, (unsigned long long)own, text);
	free(text);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("valgrind", 300);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, records_cut_as_valgrinds, 0,
			    (int)(sizeof vg_rows / sizeof vg_rows[0]));
	tcase_add_test(tc, num_callers_bounds);
	tcase_add_test(tc, children_environment_as_valgrinds);
	tcase_add_test(tc, tied_records_as_valgrinds);
	tcase_add_test(tc, command_line_as_valgrinds);
	tcase_add_test(tc, log_file_escapes_as_valgrinds);
	tcase_add_loop_test(tc, xml_as_valgrinds, 0, (int)(sizeof xml_rows / sizeof xml_rows[0]));
	tcase_add_test(tc, xml_forked_child);
	tcase_add_loop_test(tc, log_fd_as_valgrinds, 0, 2);
	tcase_add_test(tc, head_keeps_no_descriptor);
	tcase_add_loop_test(tc, heap_errors_as_valgrinds, 0, 9);
	tcase_add_loop_test(tc, end_as_valgrinds, 0, 10);
	tcase_add_loop_test(tc, contexts_as_valgrinds, 0,
			    (int)(sizeof context_rows / sizeof context_rows[0]));
	tcase_add_loop_test(tc, gen_suppressions_as_valgrinds, 0, 3);
	tcase_add_test(tc, gen_suppressions_first_frames);
	tcase_add_test(tc, gen_suppressions_in_xml);
	tcase_add_loop_test(tc, heads_as_valgrinds, 0,
			    (int)(sizeof head_rows / sizeof head_rows[0]));
	tcase_add_test(tc, trace_children_system_programs);
	tcase_add_test(tc, xml_bad_usage);
	tcase_add_test(tc, environment_as_valgrinds);
	tcase_add_test(tc, joined_threads_as_valgrinds);
	tcase_add_loop_test(tc, dlopened_as_valgrinds, 0, 2);
	tcase_add_loop_test(tc, running_threads_dtvs_as_valgrinds, 0, 2);
	tcase_add_loop_test(tc, running_thread_freeres_as_valgrinds, 0, 2);
	tcase_add_test(tc, spinning_thread_dtv_as_valgrinds);
	tcase_add_test(tc, freeing_sigblocked_thread_as_valgrinds);
	tcase_add_test(tc, tcmalloc_default_extension_kept);
	tcase_add_loop_test(tc, stale_address_in_a_live_frame, 0, 2);
	tcase_add_loop_test(tc, altstack_handler_as_valgrinds, 0, 7);
	tcase_add_loop_test(tc, handler_stack_as_valgrinds, 0, 4);
	tcase_add_test(tc, handler_fault_as_valgrinds);
	tcase_add_loop_test(tc, unfreed_as_valgrinds, 0, 2);
	tcase_add_loop_test(tc, freeres_one_answer_to_threads, 0, H_NALLOCATORS);
	/* its own case, to be run alone (CK_RUN_CASE=load): it loads the
	 * processors */
	TCase *load = h_tcase("load", 300);
	tcase_add_loop_test(load, running_threads_dtvs_at_load, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
