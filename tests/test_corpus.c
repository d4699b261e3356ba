/*
 * test_corpus.c - the leak corpus (tests/prog/corpus/): programs of the
 * shapes real code has, each run once under valgrind (glibc, valgrind's
 * defaults as README "Under valgrind" gives them, with the shipped
 * glibc.supp) and under memcheck preloaded, under each of the four
 * allocators.  For every process (a forked child is one more), memcheck's
 * definitely, indirectly, possibly lost and still reachable blocks and
 * bytes must be valgrind's, but where the program's row names an
 * artefact, each a difference memcheck(7) lists with its cause; each
 * artefact allows one difference and nothing else:
 *
 *   CYCLE    a lost cycle of blocks of different sizes: which one leads
 *            it (definite) goes by address; lost bytes are equal.
 *   CHILD    a forked child's record holds what the child allocated, not
 *            what it inherited: its still reachable may be lower.
 *   STALE    addresses left in bytes the program never wrote (a reused
 *            block's old pointers, the allocator's free-list links),
 *            which valgrind skips as undefined, keep lost blocks
 *            reachable when memcheck does not clean new blocks of them
 *            (MEMCHECK_SCRUB=0): lost may then be lower, by blocks that
 *            are then reachable or possibly lost, never higher, or split
 *            otherwise between definite and indirect.  With the default
 *            cleaning (a block's whole words, up to 4096 bytes) every
 *            figure must be valgrind's.
 *   FRAME    the same for the never-written slots of a live frame (a
 *            buffer reserved and not filled, by a function that calls
 *            exit) over dead frames that held addresses (a struct, the
 *            allocator's own frames): any scan without definedness reads
 *            them, and MEMCHECK_SCRUB does not reach stacks.
 *
 * Suppressed blocks are not compared: the DTV of each thread, which
 * both tools suppress, is 16 bytes larger under memcheck (its own TLS),
 * and the other allocators bring suppressed blocks of their own.
 * Nothing is cached between runs: valgrind runs each time (up to three
 * times where memcheck differs from its first run: valgrind's figures
 * vary too).
 *
 * The corpus is a table of its own, not h_case rows: a program's one
 * valgrind run is compared with its runs under all four allocators (a
 * row per allocator would run valgrind four times as often), and a
 * difference sends it back to valgrind.  The runs are H_EXEC's.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

enum { CYCLE = 1, CHILD = 2, STALE = 4, FRAME = 8 };

struct prog {
	const char *name;
	unsigned artefacts;
};

static const struct prog corpus[] = {
	{ "aligned", 0 },
	{ "altstack", 0 },
	{ "altstack_live", 0 },
	{ "chain_main", 0 },
	{ "cold_split", 0 },
	{ "cycle_main", 0 },
	{ "cycle_sizes", CYCLE },
	{ "dead_frame_struct", FRAME },
	{ "deep_recursion", STALE },
	{ "dlist", 0 },
	{ "dlopen_tls", 0 },
	{ "exit_from_thread", 0 },
	{ "exit_handler_alloc", 0 },
	{ "exit_nested", 0 },
	{ "file_map", 0 },
	{ "fork_child", CHILD },
	{ "freed_holder", 0 },
	{ "hash_table", 0 },
	{ "interior", 0 },
	{ "intrusive_list", 0 },
	{ "jmpbuf", 0 },
	{ "lost_interior", 0 },
	{ "many_small", STALE },
	{ "matrix", 0 },
	{ "mmap_anon", 0 },
	{ "mprotect_ro", 0 },
	{ "pool_arena", 0 },
	{ "realloc_array", 0 },
	{ "shm", 0 },
	{ "sized_alloc", 0 },
	{ "stale_deep", STALE },
	{ "stale_split", STALE },
	{ "stale_reuse", STALE },
	{ "static_local", 0 },
	{ "strdup_strings", 0 },
	{ "tagged", STALE },
	{ "thread_joined", 0 },
	{ "thread_nomalloc", 0 },
	{ "thread_regs", 0 },
	{ "thread_stack", STALE },
	{ "tls_main", 0 },
	{ "tree_exit_handler", 0 },
	{ "tree_kept", 0 },
	{ "tsd_thread", 0 },
	{ "wide_frame_exit", FRAME },
};
#define NPROGS (sizeof corpus / sizeof corpus[0])

enum { DEF, IND, POS, REA, NKINDS };
static const char *const keys[NKINDS] = { "definitely_lost", "indirectly_lost",
					  "possibly_lost", "still_reachable" };

struct figures {
	uint64_t bytes[NKINDS], blocks[NKINDS];
};

#define MAXPROC 4
struct procs {
	int n;
	struct figures f[MAXPROC]; /* [0]: the process started, then children */
};

static void describe(char *buf, size_t len, const struct figures *f)
{
	snprintf(buf, len, "definite %llu B/%llu, indirect %llu B/%llu, possible %llu B/%llu, "
		 "reachable %llu B/%llu", (unsigned long long)f->bytes[DEF],
		 (unsigned long long)f->blocks[DEF], (unsigned long long)f->bytes[IND],
		 (unsigned long long)f->blocks[IND], (unsigned long long)f->bytes[POS],
		 (unsigned long long)f->blocks[POS], (unsigned long long)f->bytes[REA],
		 (unsigned long long)f->blocks[REA]);
}

static const char *supp_file(const char *name)
{
	return h_env("%s/../suppressions/%s.supp", h_build(), name);
}

/* valgrind's summaries, the started process first. */
static void valgrind_figures(const char *prog, struct procs *out)
{
	struct h_res v;
	H_EXEC(&v, .prog = h_valgrind_path(), .no_report = true, .text = "",
	       .args = H_LIST("--leak-check=full", "--show-leak-kinds=all",
			      h_env("--suppressions=%s", supp_file("glibc")), prog));
	h_expect_exit(&v, 0);
	struct h_vg_leaks l[MAXPROC];
	int n = h_valgrind_leaks(v.r.err, l, MAXPROC);
	ck_assert_msg(n >= 1, "no leak summary in valgrind's output for %s:\n%s", prog, v.r.err);
	memset(out, 0, sizeof *out);
	out->n = n;
	for (int i = 0, k = 1; i < n; i++) {
		int at = l[i].pid == v.r.pid ? 0 : k++;
		ck_assert(at < MAXPROC);
		for (int j = 0; j < NKINDS; j++) {
			out->f[at].bytes[j] = l[i].bytes[HVG_DEF + j];
			out->f[at].blocks[j] = l[i].blocks[HVG_DEF + j];
		}
	}
	h_res_free(&v);
}

/* memcheck's process records under allocator a, the started process
 * first.  scrub: MEMCHECK_SCRUB, or NULL for its default. */
static void memcheck_figures(const char *prog, int a, const char *scrub, struct procs *out)
{
	struct h_res m;
	H_EXEC(&m, .prog = prog, .alloc = a, .flags = H_PRELOAD,
	       .env = scrub ? H_LIST(h_env("MEMCHECK_SCRUB=%s", scrub)) : NULL);
	h_expect_exit(&m, 0);
	memset(out, 0, sizeof *out);
	for (size_t i = 0, k = 1; i < m.rep.n; i++) {
		const struct h_json *rec = m.rep.rec[i];
		if (strcmp(h_str(rec, "name"), "process"))
			continue;
		size_t at = h_u64(rec, "pid") == (uint64_t)m.r.pid ? 0 : k++;
		ck_assert(at < MAXPROC);
		for (int j = 0; j < NKINDS; j++) {
			out->f[at].bytes[j] = h_count(rec, keys[j], "bytes");
			out->f[at].blocks[j] = h_count(rec, keys[j], "blocks");
		}
		out->n++;
	}
	h_res_free(&m);
}

static bool same(const struct figures *a, const struct figures *b, int k)
{
	return a->bytes[k] == b->bytes[k] && a->blocks[k] == b->blocks[k];
}

/* Does memcheck's m agree with valgrind's v, allowing only what the
 * artefacts allow?  why: what differs. */
static bool agrees(const struct figures *m, const struct figures *v, unsigned artefacts,
		   bool child, const char **why)
{
	uint64_t mlost = m->bytes[DEF] + m->bytes[IND], vlost = v->bytes[DEF] + v->bytes[IND];
	uint64_t mlostb = m->blocks[DEF] + m->blocks[IND], vlostb = v->blocks[DEF] + v->blocks[IND];
	bool lost_split = same(m, v, DEF) && same(m, v, IND);
	bool reach = same(m, v, REA) || (child && (artefacts & CHILD) && m->bytes[REA] <= v->bytes[REA]);
	if (artefacts & CYCLE)
		lost_split = mlost == vlost && mlostb == vlostb;
	if (lost_split && same(m, v, POS) && reach)
		return true;
	if (artefacts & (STALE | FRAME)) {
		/* Hidden leaks only: fewer lost, as many blocks in use. */
		uint64_t mall = mlost + m->bytes[POS] + m->bytes[REA];
		uint64_t vall = vlost + v->bytes[POS] + v->bytes[REA];
		uint64_t mallb = mlostb + m->blocks[POS] + m->blocks[REA];
		uint64_t vallb = vlostb + v->blocks[POS] + v->blocks[REA];
		*why = "more lost than valgrind, or other blocks in use";
		return mlost <= vlost && mall == vall && mallb == vallb;
	}
	*why = !lost_split ? "lost" : !same(m, v, POS) ? "possibly lost" : "still reachable";
	return false;
}

/* memcheck's figures m against valgrind's v: NULL when they agree, else
 * what differs (a fresh string). */
static const char *mismatch(const struct prog *p, const struct procs *v, const struct procs *m,
			    const char *who, unsigned artefacts)
{
	if (m->n != v->n)
		return h_env("%s under %s: %d process records, valgrind %d processes", p->name,
			     who, m->n, v->n);
	for (int i = 0; i < v->n; i++) {
		const char *why = "";
		if (agrees(&m->f[i], &v->f[i], artefacts, i > 0, &why))
			continue;
		char mb[256], vb[256];
		describe(mb, sizeof mb, &m->f[i]);
		describe(vb, sizeof vb, &v->f[i]);
		return h_env("%s under %s, process %d: %s differs\n  memcheck: %s\n  valgrind: %s",
			     p->name, who, i, why, mb, vb);
	}
	return NULL;
}

/* valgrind's own figures are not always the same from run to run (one
 * of the dozen runs of tree_exit_handler made the day this was written
 * found 11 of its lost blocks still reachable; session 57's make check
 * failed once where two runs in a row differed from memcheck's; 104
 * runs in session 58, 1 to 4 at once, all gave 1 definite, 99,999
 * indirect, doc/costs.md r-session58-mend58): a difference is checked
 * against up to VG_RUNS runs of valgrind in all, and memcheck must agree
 * with one of them.  A memcheck that differs from every run still
 * fails (the memcheck run is not repeated). */
#define VG_RUNS 3

static void compare(const struct prog *p, const char *prog, struct procs *v, bool *rerun,
		    const struct procs *m, const char *who, unsigned artefacts)
{
	const char *first = mismatch(p, v, m, who, artefacts), *last = first;
	for (int run = 1; last && run < VG_RUNS; run++) {
		struct procs again;
		valgrind_figures(prog, &again);
		last = mismatch(p, &again, m, who, artefacts);
		if (!last) {
			if (!*rerun)
				printf("note: %s: valgrind's figures differ between runs\n", p->name);
			*rerun = true;
			*v = again;
		}
	}
	ck_assert_msg(!last, "%s\n(and against %d more runs of valgrind, the last: %s)", first,
		      VG_RUNS - 1, last);
}

START_TEST(test_corpus_as_valgrind)
{
	const struct prog *p = &corpus[_i];
	if (!h_valgrind_path()) {
		printf("note: valgrind not installed; %s not compared\n", p->name);
		return;
	}
	const char *prog = h_prog(h_env("corpus/%s", p->name));
	struct procs v;
	bool rerun = false;
	valgrind_figures(prog, &v);
	for (int a = 0; a < H_NALLOCATORS; a++) {
		if (!h_allocator(a, NULL))
			continue;
		const char *who = h_allocators[a].name;
		struct procs m;
		memcheck_figures(prog, a, NULL, &m);
		compare(p, prog, &v, &rerun, &m, who, p->artefacts & ~STALE);
		if (p->artefacts & STALE) { /* the cleaning is what makes it right */
			memcheck_figures(prog, a, "0", &m);
			compare(p, prog, &v, &rerun, &m, h_env("%s, MEMCHECK_SCRUB=0", who),
				p->artefacts);
		}
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("corpus", 300);
	tcase_add_loop_test(tc, test_corpus_as_valgrind, 0, (int)NPROGS);
	return h_run_suite(NULL);
}
