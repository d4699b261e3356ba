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
 * usual: its tables are hidden from valgrind's scan (lib/util.c), so they
 * do not make lost blocks look reachable.  valgrind frees glibc's and
 * libstdc++'s blocks itself at exit unless told not to; most runs tell
 * it not to (--run-libc-freeres=no --run-cxx-freeres=no): that is what
 * memcheck, reporting before the C library cleans up, sees.
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

struct vg {
	struct h_run run;
	int n;                         /* processes summarised */
	struct h_vg_leaks p[MAXPROC];  /* in the order printed: children first */
};

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

/* The allocator's object, or NULL (and a note) when it is not installed;
 * glibc's is "" (nothing to preload). */
static const char *alloc_so(const struct alloc *a)
{
	const char *so;
	if (!h_allocator(a->index, &so))
		return NULL;
	return so ? so : "";
}

/* Run valgrind on tests/prog/PROG [ARG] under allocator a, the HOW flags
 * above; every process's summary into v.  Skips (returns false) when
 * valgrind or the allocator is not installed. */
static bool vg_run(struct vg *v, const struct alloc *a, unsigned how, const char *prog,
		   const char *arg)
{
	const char *vgpath = h_valgrind_path(), *so = alloc_so(a);
	/* Our own check selections must not reach plain_check. */
	unsetenv("CK_RUN_SUITE");
	unsetenv("CK_RUN_CASE");
	unsetenv("CK_INCLUDE_TAGS");
	unsetenv("CK_EXCLUDE_TAGS");
	if (!vgpath) {
		printf("note: valgrind not installed; skipping %s\n", prog);
		return false;
	}
	if (!so)
		return false;
	const char *argv[32];
	int n = 0;
	argv[n++] = vgpath;
	argv[n++] = "--leak-check=full";
	argv[n++] = "--show-leak-kinds=all";
	argv[n++] = "--errors-for-leak-kinds=all";
	argv[n++] = h_env("--error-exitcode=%d", ERROR_EXIT);
	argv[n++] = "--child-silent-after-fork=no";
	argv[n++] = h_env("--soname-synonyms=somalloc=%s", a->synonym);
	if (!(how & FREERES)) {
		argv[n++] = "--run-libc-freeres=no";
		argv[n++] = "--run-cxx-freeres=no";
	}
	for (size_t i = 0; i < NSUPP; i++)
		if ((how & FILES) || ((how & GLIBC_ONLY) && (!strcmp(supp_files[i], "glibc") ||
							       !strcmp(supp_files[i], "memcheck"))))
			argv[n++] = h_env("--suppressions=%s", supp_path(supp_files[i]));
	argv[n++] = h_prog(prog);
	if (arg)
		argv[n++] = arg;
	argv[n] = NULL;

	const char *env[] = { "MEMCHECK_TEXT=none",
			      *so && !(how & MEMCHECK) ? h_env("LD_PRELOAD=%s", so) : NULL,
			      NULL };
	ck_assert_msg(h_run(&v->run, argv, env, (how & MEMCHECK) ? H_PRELOAD : 0,
			    *so ? so : NULL) == 0, "cannot start %s", vgpath);
	ck_assert_msg(!v->run.timed_out && v->run.signal == 0,
		      "valgrind %s under %s: %s; stderr ends:\n%s", prog, a->name,
		      h_status(&v->run), tail(v->run.err));
	v->n = h_valgrind_leaks(v->run.err, v->p, MAXPROC);
	ck_assert_msg(v->n > 0, "valgrind %s under %s: no complete HEAP/LEAK SUMMARY; "
		      "stderr ends:\n%s", prog, a->name, tail(v->run.err));
	return true;
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
 * suppress, and valgrind's exit code not raised. */
static void expect_clean(const struct vg *v, const char *what)
{
	for (int i = 0; i < v->n; i++) {
		const struct h_vg_leaks *p = &v->p[i];
		ck_assert_msg(p->bytes[HVG_DEF] + p->bytes[HVG_IND] + p->bytes[HVG_POS] +
				      p->bytes[HVG_REA] == 0 &&
			      p->bytes[HVG_SUP] == p->in_use_bytes &&
			      p->blocks[HVG_SUP] == p->in_use_blocks,
			      "%s, process %d: %s; valgrind's output ends:\n%s", what,
			      (int)p->pid, figures(p), tail(v->run.err));
	}
	ck_assert_msg(v->run.exit_code == 0, "%s: valgrind exited %s, expected 0; output "
		      "ends:\n%s", what, h_status(&v->run), tail(v->run.err));
}

/* plain_clean all (threads, dlopen, locales) frees everything.  Without
 * the files (and without libmemcheck), valgrind shows glibc's blocks:
 * the joined threads' DTVs and _dl_find_object's table possibly lost,
 * the locale data still reachable; under tcmalloc its start-up loss too.
 * With the files and libmemcheck preloaded (whose wrapper frames the
 * entries allow for), nothing is left. */
START_TEST(test_allocator_clean_with_files)
{
	struct alloc al = alloc_of(_i);
	const struct alloc *a = &al;
	struct vg bare, supp;
	if (!vg_run(&bare, a, 0, "plain_clean", "all"))
		return;
	const struct h_vg_leaks *b = &bare.p[0];
	printf("note: plain_clean all under %s, without the files: %s\n", a->name, figures(b));
	ck_assert_msg(bare.n == 1 && b->bytes[HVG_POS] > 0 && b->bytes[HVG_REA] > 0 &&
		      bare.run.exit_code == ERROR_EXIT,
		      "plain_clean all under %s without the files: expected glibc's blocks "
		      "possibly lost and still reachable, and exit %d; %s, %s", a->name,
		      ERROR_EXIT, figures(b), h_status(&bare.run));
	if (a->loses_at_start)
		ck_assert_msg(b->bytes[HVG_DEF] > 0, "plain_clean all under %s without the "
			      "files: expected the allocator's start-up loss; %s", a->name,
			      figures(b));
	h_run_free(&bare.run);

	ck_assert(vg_run(&supp, a, MEMCHECK | FILES, "plain_clean", "all"));
	printf("note: plain_clean all under %s and libmemcheck, with the files: %s\n", a->name,
	       figures(&supp.p[0]));
	ck_assert_int_eq(supp.n, 1);
	expect_clean(&supp, h_env("plain_clean all under %s with the files", a->name));
	h_run_free(&supp.run);
}
END_TEST

/* Under valgrind's defaults, which free glibc's and libstdc++'s blocks
 * themselves, tcmalloc's start-up blocks remain; tcmalloc.supp hides
 * them. */
START_TEST(test_tcmalloc_needs_its_file_under_defaults)
{
	struct alloc al = alloc_of(H_TCMALLOC);
	const struct alloc *a = &al;
	struct vg bare, supp;
	if (!vg_run(&bare, a, FREERES, "plain_clean", "plain"))
		return;
	printf("note: plain_clean under tcmalloc, valgrind's defaults, without the files: %s\n",
	       figures(&bare.p[0]));
	ck_assert_msg(bare.p[0].bytes[HVG_DEF] > 0 && bare.p[0].bytes[HVG_REA] > 0 &&
		      bare.run.exit_code == ERROR_EXIT,
		      "expected tcmalloc's start-up blocks lost and reachable, and exit %d: "
		      "%s, %s", ERROR_EXIT, figures(&bare.p[0]), h_status(&bare.run));
	h_run_free(&bare.run);
	ck_assert(vg_run(&supp, a, FREERES | FILES, "plain_clean", "plain"));
	expect_clean(&supp, "plain_clean under tcmalloc, valgrind's defaults, with the files");
	h_run_free(&supp.run);
}
END_TEST

/* check's bookkeeping in each forked test process: still reachable with
 * glibc.supp alone, suppressed with check.supp. */
START_TEST(test_check_children)
{
	struct alloc al = alloc_of(H_GLIBC);
	const struct alloc *a = &al;
	struct vg bare, supp;
	if (!vg_run(&bare, a, GLIBC_ONLY, "plain_check", NULL))
		return;
	/* Three tests: three children, then the runner. */
	ck_assert_msg(bare.n == 4, "plain_check: %d summaries, expected 4; output ends:\n%s",
		      bare.n, tail(bare.run.err));
	for (int i = 0; i < 3; i++) {
		printf("note: plain_check child %d, glibc.supp alone: %s\n", i + 1,
		       figures(&bare.p[i]));
		ck_assert_msg(bare.p[i].bytes[HVG_REA] > 0, "plain_check child %d without "
			      "check.supp: expected check's blocks still reachable; %s", i + 1,
			      figures(&bare.p[i]));
	}
	/* The children exit ERROR_EXIT, which check calls a failed test. */
	ck_assert_int_ne(bare.run.exit_code, 0);
	h_run_free(&bare.run);
	ck_assert(vg_run(&supp, a, FILES, "plain_check", NULL));
	ck_assert_int_eq(supp.n, 4);
	expect_clean(&supp, "plain_check with the files");
	h_run_free(&supp.run);
}
END_TEST

/* The files hide none of the program's own leaks: the first test keeps
 * 48 bytes in a global and loses a 5-byte strdup, both still reported. */
START_TEST(test_program_leaks_stay_reported)
{
	struct alloc al = alloc_of(H_GLIBC);
	const struct alloc *a = &al;
	struct vg v;
	if (!vg_run(&v, a, FILES, "plain_check", "leak"))
		return;
	ck_assert_int_eq(v.n, 4);
	const struct h_vg_leaks *p = &v.p[0];
	ck_assert_msg(p->bytes[HVG_DEF] == 5 && p->blocks[HVG_DEF] == 1 &&
		      p->bytes[HVG_REA] == 48 && p->blocks[HVG_REA] == 1 &&
		      p->bytes[HVG_IND] + p->bytes[HVG_POS] == 0,
		      "plain_check leak, first child: %s; expected 5 bytes definitely lost "
		      "and 48 still reachable, 1 block each", figures(p));
	ck_assert_int_ne(v.run.exit_code, 0);
	h_run_free(&v.run);
}
END_TEST

int main(void)
{
	/* A run with libmemcheck takes about 6 s: valgrind's leak search
	 * reads the 4 GiB memcheck reserves for its stack depot. */
	setenv("H_TIMEOUT", "90", 0);
	TCase *tc = h_tcase("vgsupp", 120);
	tcase_add_loop_test(tc, test_allocator_clean_with_files, 0, H_NALLOCATORS);
	tcase_add_test(tc, test_tcmalloc_needs_its_file_under_defaults);
	tcase_add_test(tc, test_check_children);
	tcase_add_test(tc, test_program_leaks_stay_reported);
	return h_run_suite(NULL);
}
