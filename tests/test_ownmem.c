/*
 * test_ownmem.c - the memory figures memcheck reports are the program's
 * own, memcheck's memory left out: tests/prog/plain_phases run bare
 * measures each phase
 * and itself (VmHWM, reset before each phase); run under memcheck, the
 * peak_rss of the process and of each region must equal those within
 * max(3%, 1.5 MiB), under every allocator, in every mode a user meets:
 * preloaded with tracking (the default), count-only, through `memcheck
 * run`, and linked with a region per phase, in a forked child too.
 *
 * memcheck's own tables (30 B and more per live block: tens of MiB here)
 * are resident memory too; footprint.c keeps them out.  jemalloc and
 * mimalloc run with their purge timers off, so a bare peak is the same
 * run after run and a difference is memcheck's.  (test_fidelity.c
 * checks the other half: that memcheck leaves the allocator's behaviour,
 * and so the process's own peak, as it is.)
 *
 * Where transparent huge pages are "always" (Debian's kernels), a heap
 * region's resident size depends on where ASLR put it against 2 MiB
 * boundaries: bare runs of the same program differ by a huge page or
 * two (tcmalloc's brk heap: 27.3 to 30.4 MiB), more than the tolerance.
 * The test's processes run with huge pages off (PR_SET_THP_DISABLE,
 * inherited across fork and exec), so what it measures is memcheck's
 * memory, not that lottery; memcheck's own mappings never take huge
 * pages anyway (ownmap.c).  With huge pages off, where the addresses
 * fall still moves tcmalloc's figure by 2 MiB now and then: bare runs
 * of "three" read 39.0 MiB, and 41.0-41.1 MiB in 2 of 200 (the brk
 * heap's Rss +2,048 KiB, the mapping the same size: in each such run
 * the heap spanned a 2 GiB-aligned address, where tcmalloc's page map
 * takes a second leaf, which it zeroes whole; ~40 MiB of heap in 2 GiB
 * of address space, ~2% of the runs), and with address randomization
 * off 39,940 KiB in 200 of 200 (session 48, rss48: the +2.2 MiB of
 * "three memcheck run under tcmalloc" in one CI of session 47, twice,
 * was that lottery; in a loop here bare 1 in 30, preloaded 2 in 30;
 * `memcheck run` changes neither the child's personality, its limits
 * nor its huge pages setting).  So every run has randomization off, as
 * in test_rss_bare.c (personality, inherited by the runs).  The bare
 * figure is still the range of three runs, and a measured run outside
 * it is run once more before the test believes it.
 *
 * memcheck's own memory costs no page fault twice either: a phase of
 * 4,000 live blocks faults no more preloaded than bare, but for a few
 * pages (table_pages_faulted_once, lib/blocks.c's first arrays); and a
 * fork writes few of memcheck's pages, each a copy-on-write fault in
 * the parent and in the child (fork_pages_written_once).
 *
 * The cases are a table of their own (a workload and its modes), not
 * h_case rows: each is measured against a range of bare runs and run
 * again once when outside it.  Every run is H_EXEC's.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>

#include "harness.h"

#define MiB (1024.0 * 1024.0)
#define NO_PURGE_TIMER "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1", \
	"MIMALLOC_DECOMMIT_DELAY=100000", "MIMALLOC_PURGE_DELAY=100000"

enum mode {
	TRACK,      /* LD_PRELOAD, defaults */
	COUNT,      /* LD_PRELOAD, MEMCHECK_TRACK=0 */
	RUN,        /* memcheck run -a ALLOCATOR */
	REGIONS,    /* phases_regions: a region per phase */
};
static const char *const mode_names[] = { "preloaded", "count-only", "memcheck run",
					  "linked regions" };

/* The cases: a program's workload, measured bare once, then under each
 * of its modes. */
#define MAX_MODES 4
static const struct {
	const char *workload;
	enum mode modes[MAX_MODES];
	int nmodes;
} cases[] = {
	{ "three", { TRACK, COUNT, RUN, REGIONS }, 4 },
	{ "stacks", { TRACK, REGIONS }, 2 },
	{ "threads", { TRACK, REGIONS }, 2 },
	{ "leak", { TRACK, REGIONS }, 2 },
	{ "fork", { REGIONS }, 1 },
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

#define MAX_PHASES 8
struct phases {
	int n;
	char name[MAX_PHASES][32];
	uint64_t peak[MAX_PHASES];
};

/* "NAME peak=N" lines of a bare run: the phases, then "process". */
static void parse_phases(const char *out, struct phases *p)
{
	p->n = 0;
	for (const char *s = out; s && *s && p->n < MAX_PHASES;) {
		const char *eol = strchr(s, '\n');
		const char *eq = strstr(s, " peak=");
		if (eq && (!eol || eq < eol) && eq - s < 32) {
			memcpy(p->name[p->n], s, (size_t)(eq - s));
			p->name[p->n][eq - s] = 0;
			p->peak[p->n++] = strtoull(eq + 6, NULL, 10);
		}
		s = eol ? eol + 1 : NULL;
	}
}

/* The bare figures of a workload: each phase's lowest and highest peak
 * over BARE_RUNS runs. */
#define BARE_RUNS 3
struct bare {
	struct phases lo;
	uint64_t hi[MAX_PHASES];
};

static bool within(uint64_t got, const struct bare *b, int i)
{
	double lo = b->lo.peak[i], hi = b->hi[i];
	double tol = hi * 0.03 > 1.5 * MiB ? hi * 0.03 : 1.5 * MiB;
	return got >= lo - tol && got <= hi + tol;
}

static void bare(const char *so, const char *workload, struct bare *out)
{
	for (int k = 0; k < BARE_RUNS; k++) {
		struct h_res x;
		H_EXEC(&x, .prog = "plain_phases", .args = H_LIST(workload), .no_report = true,
		       .env = so ? H_LIST(NO_PURGE_TIMER, h_env("LD_PRELOAD=%s", so))
				 : H_LIST(NO_PURGE_TIMER));
		h_expect_exit(&x, 0);
		struct phases p;
		parse_phases(x.r.out, &p);
		ck_assert_msg(p.n >= 2, "plain_phases %s printed no phases:\n%s", workload, x.r.out);
		if (k == 0) {
			out->lo = p;
			memcpy(out->hi, p.peak, sizeof out->hi);
		}
		for (int i = 0; i < p.n && i < out->lo.n; i++) {
			if (p.peak[i] < out->lo.peak[i])
				out->lo.peak[i] = p.peak[i];
			if (p.peak[i] > out->hi[i])
				out->hi[i] = p.peak[i];
		}
		h_res_free(&x);
	}
}

/* Run the case under memcheck with allocator a; its records in x->rep. */
static void measured(int a, int c, enum mode mode, struct h_res *x)
{
	const char *workload = cases[c].workload;
	switch (mode) {
	case TRACK:
		H_EXEC(x, .prog = "plain_phases", .args = H_LIST(workload), .alloc = a,
		       .flags = H_PRELOAD, .env = H_LIST(NO_PURGE_TIMER));
		break;
	case COUNT:
		H_EXEC(x, .prog = "plain_phases", .args = H_LIST(workload), .alloc = a,
		       .flags = H_PRELOAD, .env = H_LIST(NO_PURGE_TIMER, "MEMCHECK_TRACK=0"));
		break;
	case RUN:
		H_EXEC(x, .cli = H_LIST("run", "-a", h_allocators[a].name, "-n", "1"),
		       .prog = "plain_phases", .args = H_LIST(workload), .env = H_LIST(NO_PURGE_TIMER));
		break;
	case REGIONS:
		H_EXEC(x, .prog = "phases_regions", .args = H_LIST(workload), .alloc = a,
		       .flags = H_PRELOAD, .env = H_LIST(NO_PURGE_TIMER));
		break;
	}
	/* The leak case's region fails (its leak), and so may memcheck run. */
	ck_assert_msg(!x->r.timed_out && x->r.signal == 0 &&
		      (x->r.exit_code == 0 || !strcmp(workload, "leak")),
		      "%s (%s): %s; stderr:\n%s", x->label, mode_names[mode], h_status(&x->r),
		      x->r.err);
}

/* The first phase of want whose record in rep is outside the bare
 * range, or -1; each phase's figure noted when last is set. */
static int check_peaks(int c, int a, enum mode mode, const struct bare *want,
		       const struct h_report *rep, bool last, uint64_t *got_out)
{
	bool regions = mode == REGIONS;
	for (int i = 0; i < want->lo.n; i++) {
		/* Linked: each phase's region; preloaded: the process. */
		bool process = !strcmp(want->lo.name[i], "process");
		if (regions == process)
			continue;
		const struct h_json *rec = NULL;
		for (size_t k = 0; k < rep->n && !rec; k++) /* memcheck run: glibc's first */
			if (!strcmp(h_str(rep->rec[k], "name"), want->lo.name[i]) &&
			    !strcmp(h_str(rep->rec[k], "allocator"), h_allocators[a].name))
				rec = rep->rec[k];
		ck_assert_msg(rec, "%s %s under %s: no record of \"%s\"", cases[c].workload,
			      mode_names[mode], h_allocators[a].name, want->lo.name[i]);
		uint64_t got = h_u64(rec, "peak_rss");
		if (last)
			printf("note: %s %s under %s, \"%s\": peak %.1f MiB, bare %.1f-%.1f MiB\n",
			       cases[c].workload, mode_names[mode], h_allocators[a].name,
			       want->lo.name[i], got / MiB, want->lo.peak[i] / MiB,
			       want->hi[i] / MiB);
		if (!within(got, want, i)) {
			*got_out = got;
			return i;
		}
	}
	return -1;
}

START_TEST(test_peak_is_the_programs)
{
	int c = _i / H_NALLOCATORS, a = _i % H_NALLOCATORS;
	const char *so;
	if (!h_allocator(a, &so))
		return;
	struct bare want;
	bare(so, cases[c].workload, &want);
	for (int m = 0; m < cases[c].nmodes; m++) {
		enum mode mode = cases[c].modes[m];
		int bad = -1;
		uint64_t got = 0;
		for (int attempt = 0; attempt < 2; attempt++) {
			struct h_res x;
			measured(a, c, mode, &x);
			bad = check_peaks(c, a, mode, &want, &x.rep, true, &got);
			h_res_free(&x);
			if (bad < 0)
				break;
			printf("note: %s %s under %s, \"%s\": outside the bare range, run again\n",
			       cases[c].workload, mode_names[mode], h_allocators[a].name,
			       want.lo.name[bad]);
		}
		ck_assert_msg(bad < 0,
			      "%s %s under %s, \"%s\": peak_rss %.1f MiB twice, the program's own "
			      "is %.1f-%.1f MiB bare", cases[c].workload, mode_names[mode],
			      h_allocators[a].name, want.lo.name[bad], got / MiB,
			      want.lo.peak[bad] / MiB, want.hi[bad] / MiB);
	}
}
END_TEST

/* tests/prog/plain_table_faults under allocator i, bare (flags 0: the
 * allocator preloaded alone) or with memcheck (H_PRELOAD): the page faults of its phase of 4,000 live blocks, or -1
 * where the program could not count the CPU's own (perf_event_open
 * refused: getrusage's count has populated pages in it too). */
static long long phase_faults(int i, const char *so, unsigned flags)
{
	struct h_run r;
	const char *argv[] = { h_prog("plain_table_faults"), "4000", NULL };
	/* bare: the allocator preloaded alone */
	const char *const *env = !flags && so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL;
	ck_assert_int_eq(h_run(&r, argv, env, flags, so), 0);
	ck_assert_msg(r.exit_code == 0, "under %s: plain_table_faults: %s\n%s",
		      h_allocators[i].name, h_status(&r), r.err);
	long long n = -1;
	char how[16] = "";
	ck_assert_msg(sscanf(r.out, "faults %lld %15s", &n, how) == 2, "under %s: %s",
		      h_allocators[i].name, r.out);
	h_run_free(&r);
	return strcmp(how, "perf") ? -1 : n;
}

/* memcheck's block table is memcheck's own memory, kept out of the
 * figures (footprint.c); what it must not cost either is a page fault
 * twice.  A shard's first array of 1024 slots (16 KiB, lib/blocks.c) was
 * touched as entries landed in it: the insert's probe read a slot first
 * (a fault that mapped the zero page), then wrote it (a second fault
 * that gave the page): once a thread had ~850 blocks live, its group's
 * 32 shards moved there, 128 pages and 256 faults, ~0.6 ms of CPU in a
 * real program (libxkbcommon's xkbcli-compile-keymap: 470 faults
 * preloaded, 196 bare, 3.95 ms against 2.57 ms of task-clock; session
 * 50).  Now the array is populated in one call when a shard moves there
 * (no CPU fault at all).  Each allocator, bare and preloaded: the faults
 * of a phase of 4,000 live blocks.  On main dbbb9d9b memcheck added 256
 * (289 under jemalloc); now 0 (33 under jemalloc). */
START_TEST(table_pages_faulted_once)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	long long bare = phase_faults(_i, so, 0), mc = phase_faults(_i, so, H_PRELOAD);
	if (bare < 0 || mc < 0) {
		printf("note: perf_event_open refused: the CPU's page faults not counted; skipping\n");
		return;
	}
	ck_assert_msg(mc - bare < 64,
		      "under %s: a phase of 4,000 live blocks took %lld page faults preloaded, "
		      "%lld bare: memcheck's block table faulted page by page (twice: read, then "
		      "written)", h_allocators[_i].name, mc, bare);
}
END_TEST

/* tests/prog/plain_fork_faults under allocator i, bare or with
 * memcheck (H_PRELOAD): the page faults of 20 forks of a process with
 * 2,000 live blocks, the parent's and its children's (each child
 * leaves at once with _exit, mode "exec" after an execv that fails);
 * false where perf_event_open was refused. */
#define FORKS 20
static bool fork_faults_n(int i, const char *so, unsigned flags, const char *n, const char *mode,
			  const char *const *env, long long *parent, long long *children)
{
	struct h_run r;
	const char *argv[] = { h_prog("plain_fork_faults"), n, "20", mode, NULL };
	const char *const *bare = H_LIST(!flags && so ? h_env("LD_PRELOAD=%s", so) : NULL);
	if (!flags && so)
		env = bare;
	ck_assert_int_eq(h_run(&r, argv, env, flags, so), 0);
	ck_assert_msg(r.exit_code == 0, "under %s: plain_fork_faults: %s\n%s",
		      h_allocators[i].name, h_status(&r), r.err);
	bool counted = sscanf(r.out, "parent %lld children %lld perf", parent, children) == 2;
	ck_assert_msg(counted || strstr(r.out, "faults refused"), "under %s: %s",
		      h_allocators[i].name, r.out);
	h_run_free(&r);
	return counted;
}

static bool fork_faults(int i, const char *so, unsigned flags, const char *mode,
			long long *parent, long long *children)
{
	return fork_faults_n(i, so, flags, "2000", mode, NULL, parent, children);
}

/* Each page of memcheck's that a fork's handlers write (its locks taken
 * and released, the child's counters and flags started again) is a
 * copy-on-write fault in the parent after the fork and a page copied in
 * the child, before it execs or exits: libssh's torture_config (CTest,
 * 12 fork+exec children) took 991 page faults of memcheck's in the
 * parent, ~80 a fork (session 52).  On main a432e043 a fork of a
 * one-thread process wrote 12 pages of memcheck's in the parent and 26
 * in the child: the block table's 256 shard lines (4 pages) each side
 * and a page recording how each was entered, locks and flags spread
 * over seven pages of small variables, symcache.c's module table
 * cleared whole, and calls the parent never makes (snprintf,
 * pthread_rwlock_init, pthread_mutex_init: the C library's code and
 * the dynamic linker's lazy binding, none of whose file pages fork
 * gives the child); a child that execs walked every object for the
 * next execve (their header pages: fork gives no page tables of
 * files), 32 pages in all.  Now glibc 4 and 8, 12 with the exec
 * (jemalloc 3 and 6, 9). */
START_TEST(fork_pages_written_once)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	static const char *const modes[] = { "exit", "exec" };
	for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
		long long bp, bc, mp, mc;
		if (!fork_faults(_i, so, 0, modes[m], &bp, &bc) ||
		    !fork_faults(_i, so, H_PRELOAD, modes[m], &mp, &mc)) {
			printf("note: perf_event_open refused: the CPU's page faults not counted; "
			       "skipping\n");
			return;
		}
		printf("test_ownmem: %s, children %s: %d forks, parent %lld bare %lld, children "
		       "%lld bare %lld page faults\n", h_allocators[_i].name, modes[m], FORKS, mp,
		       bp, mc, bc);
		ck_assert_msg(mp - bp < 8 * FORKS && mc - bc < 16 * FORKS,
			      "under %s, children %s: %d forks took %lld page faults in the parent "
			      "and %lld in the children preloaded, %lld and %lld bare: memcheck's "
			      "fork handlers wrote pages they need not (each a copy-on-write fault "
			      "on both sides)", h_allocators[_i].name, modes[m], FORKS, mp, mc, bp,
			      bc);
	}
}
END_TEST

/* A test runner that stores new stacks between forks (plain_fork_faults
 * "stacks": 3,000 stacks stored, then 32 more before each of 20 forks):
 * each new stack's slot in the depot's index lay at its hash's place,
 * on any of its 64 pages, each a copy-on-write fault in the parent
 * (libssh's torture_config: 195 of mc_depot_intern's faults at that one
 * store, session 52).  What the stacks cost is the parent's faults with
 * them less those with MEMCHECK_STACK_DEPTH=0 (the same blocks, no
 * depot): on main a51f2faf 872-891 under the four allocators, ~44 a
 * fork; with the young index (depot.c) 265-305. */
START_TEST(fork_new_stacks_pages)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	long long with, without, c;
	if (!fork_faults_n(_i, so, H_PRELOAD, "3000", "stacks", NULL, &with, &c) ||
	    !fork_faults_n(_i, so, H_PRELOAD, "3000", "stacks", H_LIST("MEMCHECK_STACK_DEPTH=0"),
			   &without, &c)) {
		printf("note: perf_event_open refused: the CPU's page faults not counted; "
		       "skipping\n");
		return;
	}
	printf("test_ownmem: %s, new stacks between %d forks: parent %lld page faults, "
	       "%lld without stacks\n", h_allocators[_i].name, FORKS, with, without);
	ck_assert_msg(with - without < 24 * FORKS,
		      "under %s: 32 new stacks before each of %d forks took %lld page faults in "
		      "the parent, %lld with no stacks captured: the depot wrote a page a new "
		      "stack between forks (each a copy-on-write fault)", h_allocators[_i].name,
		      FORKS, with, without);
}
END_TEST

int main(void)
{
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	int now = personality(0xffffffff);
	if (now != -1)
		personality((unsigned long)now | ADDR_NO_RANDOMIZE);
	TCase *tc = h_tcase("ownmem", 120);
	tcase_add_loop_test(tc, test_peak_is_the_programs, 0, NCASES * H_NALLOCATORS);
	tcase_add_loop_test(tc, table_pages_faulted_once, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, fork_pages_written_once, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, fork_new_stacks_pages, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
