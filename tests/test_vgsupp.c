/*
 * test_vgsupp.c - the suppression files in suppressions/ make valgrind
 * report programs that free everything as clean, under each allocator,
 * and hide none of the program's own leaks.
 *
 * Programs: tests/prog/plain_clean (threads, dlopen and locales) and
 * tests/prog/plain_check (a check suite in CK_FORK mode; "leak" adds two
 * leaks of its own).  Each runs under valgrind without the files and
 * with all of them, and valgrind's LEAK SUMMARY of every process is
 * compared.  With the files, libmemcheck.so is preloaded before the
 * allocator (with --soname-synonyms, so that both count), as in
 * memcheck's valgrind mode: the entries must allow for its wrapper's
 * frames, and memcheck.supp its own reads of frames valgrind calls
 * uninitialised (the frame-pointer unwinder).  memcheck tracks blocks as
 * usual: its tables are hidden from valgrind's scan (lib/ownmap.c), so they
 * do not make lost blocks look reachable.  valgrind frees glibc's and
 * libstdc++'s blocks itself at exit unless told not to; most runs tell
 * it not to (--run-libc-freeres=no --run-cxx-freeres=no): that is what
 * memcheck, reporting before the C library cleans up, sees.
 *
 * A row is one valgrind run: its setup makes valgrind's command line for
 * the row's program (the files, the preloads: one setup per way of
 * running), its callback judges valgrind's summaries of every process.
 * The runs without the files are rows of their own: they show what the
 * files are for, and none reads another's output.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define ERROR_EXIT 99 /* --error-exitcode: valgrind found an error */

static const char *const supp_files[] = { "glibc", "libstdcxx", "tcmalloc", "jemalloc",
					  "mimalloc", "check", "memcheck" };
#define NSUPP (sizeof supp_files / sizeof supp_files[0])

struct alloc {
	int index;            /* in h_allocators */
	const char *name, *synonym;
	bool loses_at_start;  /* its start-up code loses a block (tcmalloc) */
};
/* Allocator i of h_allocators, as valgrind is told of it. */
static struct alloc alloc_of(int i)
{
	struct alloc a = { i, h_allocators[i].name,
			   i == H_GLIBC ? "nouserintercepts" : h_env("*%s*", h_allocators[i].name),
			   i == H_TCMALLOC };
	return a;
}

enum {
	FILES = 1,      /* --suppressions= every file in suppressions/ */
	GLIBC_ONLY = 2, /* --suppressions= glibc.supp alone (and memcheck.supp) */
	MEMCHECK = 4,   /* libmemcheck.so preloaded before the allocator */
	FREERES = 8,    /* valgrind's default: it frees glibc's and libstdc++'s blocks */
};

#define MAXPROC 8

/* The end of valgrind's output, for messages: check fails a test whose
 * message is longer than 4 KiB. */
static const char *tail(const char *text)
{
	size_t n = strlen(text);
	if (n <= 2500)
		return text;
	const char *s = text + n - 2500, *nl = strchr(s, '\n');
	return nl ? nl + 1 : s;
}

static const char *supp_path(const char *name)
{
	const char *p = h_env("%s/../suppressions/%s.supp", h_build(), name);
	ck_assert_msg(access(p, R_OK) == 0, "%s: not readable", p);
	return p;
}

/* The row's run made valgrind on its program and arguments under the
 * row's allocator, the HOW flags above (a fresh list, never freed).
 * Skips the row when valgrind is not installed. */
static bool vg_line(struct h_spec *run, unsigned how)
{
	const char *vgpath = h_valgrind_path();
	/* Our own check selections must not reach plain_check. */
	unsetenv("CK_RUN_SUITE");
	unsetenv("CK_RUN_CASE");
	unsetenv("CK_INCLUDE_TAGS");
	unsetenv("CK_EXCLUDE_TAGS");
	if (!vgpath) {
		printf("note: valgrind not installed; skipping %s\n", run->prog);
		return false;
	}
	struct alloc a = alloc_of(run->alloc);
	const char *soname = h_allocators[run->alloc].soname;
	const char *so = soname ? h_allocator_so(soname) : NULL;
	const char **argv = calloc(32, sizeof *argv);
	ck_assert_ptr_nonnull(argv);
	int n = 0;
	argv[n++] = "--leak-check=full";
	argv[n++] = "--show-leak-kinds=all";
	argv[n++] = "--errors-for-leak-kinds=all";
	argv[n++] = h_env("--error-exitcode=%d", ERROR_EXIT);
	argv[n++] = "--child-silent-after-fork=no";
	argv[n++] = h_env("--soname-synonyms=somalloc=%s", a.synonym);
	if (!(how & FREERES)) {
		argv[n++] = "--run-libc-freeres=no";
		argv[n++] = "--run-cxx-freeres=no";
	}
	for (size_t i = 0; i < NSUPP; i++)
		if ((how & FILES) || ((how & GLIBC_ONLY) && (!strcmp(supp_files[i], "glibc") ||
							       !strcmp(supp_files[i], "memcheck"))))
			argv[n++] = h_env("--suppressions=%s", supp_path(supp_files[i]));
	argv[n++] = h_prog(run->prog);
	for (size_t i = 0; run->args && run->args[i]; i++)
		argv[n++] = run->args[i];
	argv[n] = NULL;
	run->prog = vgpath;
	run->args = argv;
	run->no_report = true;
	/* libmemcheck.so before the allocator, or the allocator alone */
	if (how & MEMCHECK) {
		run->flags = H_PRELOAD;
	} else {
		static const char *env[2];
		env[0] = so ? h_env("LD_PRELOAD=%s", so) : NULL;
		run->env = env;
	}
	return true;
}

H_SETUP(bare)
{
	return vg_line(run, 0);
}
H_SETUP(files_and_memcheck)
{
	return vg_line(run, MEMCHECK | FILES);
}
H_SETUP(defaults)
{
	return vg_line(run, FREERES);
}
H_SETUP(defaults_and_files)
{
	return vg_line(run, FREERES | FILES);
}
/* with the files and libmemcheck, memcheck's own record read too */
H_SETUP(files_and_memcheck_report)
{
	bool on = vg_line(run, MEMCHECK | FILES);
	run->no_report = false;
	return on;
}
H_SETUP(glibc_supp_alone)
{
	return vg_line(run, GLIBC_ONLY);
}
H_SETUP(files)
{
	return vg_line(run, FILES);
}

/* Every process's summary of x's valgrind run into p[0..MAXPROC), in
 * the order printed (children first); how many. */
static int summaries(const struct h_res *x, struct h_vg_leaks *p)
{
	ck_assert_msg(!x->r.timed_out && x->r.signal == 0, "%s: %s; stderr ends:\n%s",
		      x->label, h_status(&x->r), tail(x->r.err));
	int n = h_valgrind_leaks(x->r.err, p, MAXPROC);
	ck_assert_msg(n > 0, "%s: no complete HEAP/LEAK SUMMARY; stderr ends:\n%s", x->label,
		      tail(x->r.err));
	return n;
}

static const char *figures(const struct h_vg_leaks *p)
{
	return h_env("in use at exit %s B in %s blocks; definitely lost %s B, indirectly %s B, "
		     "possibly %s B, still reachable %s B, suppressed %s B in %s blocks",
		     h_fmt(p->in_use_bytes), h_fmt(p->in_use_blocks),
		     h_fmt(p->bytes[HVG_DEF]), h_fmt(p->bytes[HVG_IND]),
		     h_fmt(p->bytes[HVG_POS]), h_fmt(p->bytes[HVG_REA]),
		     h_fmt(p->bytes[HVG_SUP]), h_fmt(p->blocks[HVG_SUP]));
}

/* Every process clean: nothing lost or reachable but what the files
 * suppress, and valgrind's exit code not raised; nprocs processes. */
static void expect_clean(const struct h_res *x, int nprocs)
{
	struct h_vg_leaks p[MAXPROC];
	int n = summaries(x, p);
	ck_assert_msg(n == nprocs, "%s: %d summaries, expected %d; output ends:\n%s", x->label,
		      n, nprocs, tail(x->r.err));
	for (int i = 0; i < n; i++)
		ck_assert_msg(p[i].bytes[HVG_DEF] + p[i].bytes[HVG_IND] + p[i].bytes[HVG_POS] +
				      p[i].bytes[HVG_REA] == 0 &&
			      p[i].bytes[HVG_SUP] == p[i].in_use_bytes &&
			      p[i].blocks[HVG_SUP] == p[i].in_use_blocks,
			      "%s, process %d: %s; valgrind's output ends:\n%s", x->label,
			      (int)p[i].pid, figures(&p[i]), tail(x->r.err));
	ck_assert_msg(x->r.exit_code == 0, "%s: valgrind exited %s, expected 0; output "
		      "ends:\n%s", x->label, h_status(&x->r), tail(x->r.err));
}

H_CHECK(one_process_clean)
{
	expect_clean(x, 1);
}
H_CHECK(four_processes_clean)
{
	expect_clean(x, 4);
}

/* More than 32 exit handlers registered before memcheck's constructor
 * (plain_exitfn, libexitfn.so's): memcheck counting under valgrind
 * counts the lists glibc frees after its handler freed, as valgrind
 * does, and reads exit's frame for them without a valgrind error (main
 * 0c24e7b skipped that read under valgrind: 1,040 bytes still reachable
 * and one free fewer; session 46's first try made valgrind exit 99). */
H_CHECK(exit_lists_freed_under_valgrind)
{
	expect_clean(x, 1);
	const struct h_json *pr = h_rec(x, "process");
	ck_assert_msg(h_u64(pr, "live_blocks") == 0 && h_u64(pr, "allocs") == h_u64(pr, "frees") &&
		      h_count(pr, "still_reachable", "bytes") == 0,
		      "%s: memcheck's record: %s allocs, %s frees, %s live blocks, %s bytes still "
		      "reachable; expected every block freed", x->label,
		      h_fmt(h_u64(pr, "allocs")), h_fmt(h_u64(pr, "frees")),
		      h_fmt(h_u64(pr, "live_blocks")), h_fmt(h_count(pr, "still_reachable", "bytes")));
}

/* Without the files (and without libmemcheck), valgrind shows glibc's
 * blocks: the joined threads' DTVs and _dl_find_object's table possibly
 * lost, the locale data still reachable; under tcmalloc its start-up
 * loss too. */
H_CHECK(glibc_blocks_shown)
{
	struct h_vg_leaks p[MAXPROC];
	int n = summaries(x, p);
	printf("note: %s under %s: %s\n", c->name, h_allocators[x->alloc].name, figures(&p[0]));
	ck_assert_msg(n == 1 && p[0].bytes[HVG_POS] > 0 && p[0].bytes[HVG_REA] > 0 &&
		      x->r.exit_code == ERROR_EXIT,
		      "%s: expected glibc's blocks possibly lost and still reachable, and exit "
		      "%d; %s, %s", x->label, ERROR_EXIT, figures(&p[0]), h_status(&x->r));
	if (alloc_of(x->alloc).loses_at_start)
		ck_assert_msg(p[0].bytes[HVG_DEF] > 0, "%s: expected the allocator's start-up "
			      "loss; %s", x->label, figures(&p[0]));
}

/* Under valgrind's defaults, which free glibc's and libstdc++'s blocks
 * themselves, tcmalloc's start-up blocks remain. */
H_CHECK(tcmalloc_start_up_blocks_shown)
{
	struct h_vg_leaks p[MAXPROC];
	summaries(x, p);
	printf("note: %s under %s: %s\n", c->name, h_allocators[x->alloc].name, figures(&p[0]));
	ck_assert_msg(p[0].bytes[HVG_DEF] > 0 && p[0].bytes[HVG_REA] > 0 &&
		      x->r.exit_code == ERROR_EXIT,
		      "%s: expected tcmalloc's start-up blocks lost and reachable, and exit %d: "
		      "%s, %s", x->label, ERROR_EXIT, figures(&p[0]), h_status(&x->r));
}

/* check's bookkeeping in each forked test process, still reachable
 * with glibc.supp alone: three tests, three children, then the runner. */
H_CHECK(check_blocks_shown)
{
	struct h_vg_leaks p[MAXPROC];
	int n = summaries(x, p);
	ck_assert_msg(n == 4, "%s: %d summaries, expected 4; output ends:\n%s", x->label, n,
		      tail(x->r.err));
	for (int i = 0; i < 3; i++) {
		printf("note: plain_check child %d, glibc.supp alone: %s\n", i + 1,
		       figures(&p[i]));
		ck_assert_msg(p[i].bytes[HVG_REA] > 0, "%s, child %d: expected check's blocks "
			      "still reachable; %s", x->label, i + 1, figures(&p[i]));
	}
	/* The children exit ERROR_EXIT, which check calls a failed test. */
	ck_assert_int_ne(x->r.exit_code, 0);
}

/* The first test keeps 48 bytes in a global and loses a 5-byte strdup,
 * both still reported. */
H_CHECK(own_leaks_reported)
{
	struct h_vg_leaks p[MAXPROC];
	ck_assert_int_eq(summaries(x, p), 4);
	ck_assert_msg(p[0].bytes[HVG_DEF] == 5 && p[0].blocks[HVG_DEF] == 1 &&
		      p[0].bytes[HVG_REA] == 48 && p[0].blocks[HVG_REA] == 1 &&
		      p[0].bytes[HVG_IND] + p[0].bytes[HVG_POS] == 0,
		      "%s, first child: %s; expected 5 bytes definitely lost and 48 still "
		      "reachable, 1 block each", x->label, figures(&p[0]));
	ck_assert_int_ne(x->r.exit_code, 0);
}

#define VG(prog_, ...) .run = { .prog = prog_, .args = H_LIST(__VA_ARGS__) }, .exit = H_EXIT_ANY

static const struct h_case cases[] = {
	/* plain_clean all (threads, dlopen, locales) frees everything: with
	 * the files and libmemcheck preloaded (whose wrapper frames the
	 * entries allow for), nothing is left */
	{ "plain_clean all without the files", VG("plain_clean", "all"), .setup = bare,
	  .check = glibc_blocks_shown },
	{ "plain_clean all with the files and libmemcheck", VG("plain_clean", "all"),
	  .setup = files_and_memcheck, .check = one_process_clean },
	{ "plain_exitfn, 40 handlers before memcheck's, memcheck counting",
	  .run = { .prog = "plain_exitfn", .args = H_LIST("exit"), .env = H_LIST("EXITFN_BEFORE=40") },
	  .exit = H_EXIT_ANY, .allocators = H_ONLY(H_GLIBC), .setup = files_and_memcheck_report,
	  .check = exit_lists_freed_under_valgrind },
	/* tcmalloc.supp hides tcmalloc's start-up blocks under valgrind's
	 * defaults */
	{ "plain_clean, valgrind's defaults, without the files", VG("plain_clean", "plain"),
	  .allocators = H_ONLY(H_TCMALLOC), .setup = defaults,
	  .check = tcmalloc_start_up_blocks_shown },
	{ "plain_clean, valgrind's defaults, with the files", VG("plain_clean", "plain"),
	  .allocators = H_ONLY(H_TCMALLOC), .setup = defaults_and_files,
	  .check = one_process_clean },
	/* check's children: suppressed with check.supp */
	{ "plain_check, glibc.supp alone", VG("plain_check", NULL), .allocators = H_ONLY(H_GLIBC),
	  .setup = glibc_supp_alone, .check = check_blocks_shown },
	{ "plain_check with the files", VG("plain_check", NULL), .allocators = H_ONLY(H_GLIBC),
	  .setup = files, .check = four_processes_clean },
	/* the files hide none of the program's own leaks */
	{ "plain_check leak with the files", VG("plain_check", "leak"),
	  .allocators = H_ONLY(H_GLIBC), .setup = files, .check = own_leaks_reported },
};

int main(void)
{
	/* A run with libmemcheck takes about 6 s: valgrind's leak search
	 * reads the 4 GiB memcheck reserves for its stack depot. */
	setenv("H_TIMEOUT", "90", 0);
	TCase *tc = h_tcase("vgsupp", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
