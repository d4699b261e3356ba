/*
 * unit_scan.c - the reachability scan (lib/scan.c) on a heap built by
 * hand: blocks carved from an anonymous mapping (never a root), entered
 * in the block table, linked to each other and to two global roots.
 * Each block's kind is checked against valgrind's definitions.
 */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

/* mc_maps_run_at asks the kernel into its caller's buffer: this */
static char qname[4096];

/* the block table is made; the cliques' credit kept (valgrind's text) */
struct mc_options mc_opt = { .track = true, .valgrind_text = MC_VGTEXT_FULL };
/* forward.c's: libmemcheck's own code, none here (depot.c stores a
 * stack without its frames) */
uintptr_t mc_text_lo, mc_text_len;
MC_TLS struct mc_thread mc_self; /* forward.c's, not linked here: blocks.c keeps a thread's groups there */
/* fatal.c's: a killed process's deadline for the scan (0: none) */
uint64_t mc_fatal_deadline_ns;

/* account.c and forward.c are not linked: no thread counts here, and
 * no stop is ever put off (no guard is up in this program). */
void mc_account_threads_lock(void)
{
}

void mc_account_threads_unlock(void)
{
}

void mc_account_sum_held(struct mc_totals *t)
{
	memset(t, 0, sizeof *t);
}

/* no slots: a thread the scan cannot stop has no stack known here */
bool mc_account_thread_stack_held(pid_t tid, uintptr_t *lo, uintptr_t *hi, uintptr_t *tp)
{
	(void)tid, (void)lo, (void)hi, (void)tp;
	return false;
}

/* no rings of recent frees: no freed buffer's size is known */
bool mc_account_freed_size(uintptr_t p, uint64_t *size)
{
	(void)p, (void)size;
	return false;
}

/* account.c's blocks recorded shorter than they are (a thread's DTV):
 * the test's, test_tails[0] where mc_account_ntails is 1 */
static struct mc_tail test_tails[1];
size_t mc_account_ntails;

size_t mc_account_tails(const struct mc_tail **out)
{
	*out = test_tails;
	return mc_account_ntails;
}

void mc_guard_stop_set(void (*fn)(void))
{
	(void)fn;
}

void mc_guard_stop_owed(void)
{
}

/* mappings.c and allocator.c are not linked: the program has made no
 * mapping of its own (the test heap below is not one), and glibc's
 * malloc does not serve these blocks. */
bool mc_mappings_copy(struct mc_prog_maps *out)
{
	memset(out, 0, sizeof *out);
	return true;
}

void mc_prog_maps_free(struct mc_prog_maps *r)
{
	(void)r;
}

/* nor has a handler run on an alternate stack in one */
size_t mc_mappings_stacks_ran(struct mc_prog_map *out, size_t max)
{
	(void)out;
	(void)max;
	return 0;
}

const void *mc_allocator_glibc_base(void)
{
	return NULL;
}

/* No allocator object of its own: every loaded object's data is a plain root. */
bool mc_allocator_own_code(uintptr_t pc)
{
	(void)pc;
	return false;
}

/* allocfn.c is not linked (and no frame lies in an allocator here). */
bool mc_allocfn_thin(uintptr_t pc)
{
	(void)pc;
	return false;
}

/* symbolize.c is not linked: what the scan lends it is kept here. */
static const struct mc_buf *lent_runs;
static int lends;

void mc_symbolize_maps_lend(const struct mc_buf *runs)
{
	lent_runs = runs;
	lends++;
}

/* seccomp.c is not linked: the release the scan registers for its lent
 * file (memcheck's own opens at the open-file limit), kept here. */
static bool (*emfile_release)(void);

void mc_emfile_release_add(bool (*fn)(void))
{
	emfile_release = fn;
}

/* footprint.c is not linked: the figures measured, so that a large
 * block's untouched pages are left unread (scan.c's sparse_find) as a
 * measured process leaves them */
bool mc_footprint_measuring(void)
{
	return true;
}

/* supp_region.c is not linked: the pools are the blocks of the stack
 * pool_stack (0: none), and what the scan asks is kept. */
static uint32_t pool_stack, pool_asked[64];
static size_t nasked;

bool mc_suppress_pools_any(void)
{
	return pool_stack != 0;
}

size_t mc_suppress_pools(uint32_t *stacks, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (nasked < MC_ARRAY_SIZE(pool_asked))
			pool_asked[nasked++] = stacks[i];
		if (stacks[i] == pool_stack)
			stacks[kept++] = stacks[i];
	}
	return kept;
}

/* what the C library's freeres would free at an exit under valgrind's
 * text with another thread running: the blocks of the stack
 * freeres_stack (0: none) */
static uint32_t freeres_stack;

size_t mc_suppress_freeres(uint32_t *stacks, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (stacks[i] == freeres_stack)
			stacks[kept++] = stacks[i];
	return kept;
}

enum { R, S, P, Q, L1, L2, L3, C1, C2, SELF, Z, OLD, AB, AC, AA, NBLK };
#define BLK 64

/* The roots: a start pointer to R and an interior pointer into P. */
uintptr_t volatile root_start, root_interior;
static char *heap;

static uintptr_t at(int k)
{
	return (uintptr_t)heap + (uintptr_t)(k + 1) * BLK; /* never the page start */
}

static void link_to(int from, int slot, uintptr_t to)
{
	memcpy((char *)at(from) + slot * 8, &to, sizeof to);
}

/* Build the heap; the addresses live only in the mapping and the roots. */
__attribute__((noinline)) static void build(void)
{
	heap = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(heap != MAP_FAILED);
	memset(heap, 0, 4096);
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_block old;
	for (int k = 0; k < NBLK; k++)
		mc_blocks_insert(at(k), k == Z ? 0 : BLK, (uint32_t)k + 1, k == OLD ? 1 : 2,
				 &old);
	root_start = at(R);
	link_to(R, 1, at(S));          /* R -> S: both reachable */
	root_interior = at(P) + 24;    /* only into P: possibly lost */
	link_to(P, 2, at(Q));          /* through P only: possibly lost */
	link_to(L1, 0, at(L2));        /* L1 definite, L2 and L3 indirect */
	link_to(L2, 3, at(L3) + 8);    /* interior pointers count for indirect */
	link_to(C1, 0, at(C2));        /* a cycle: C1 (lower) definite */
	link_to(C2, 0, at(C1));
	link_to(SELF, 0, at(SELF));    /* points only to itself: definite */
	link_to(OLD, 0, at(Z));        /* OLD is older than the region; it is
					* lost, so Z, only it points to, is
					* indirectly lost */
	link_to(AB, 0, at(AC));        /* AB leads first (its stack is seen
					* first), taking AC ... */
	link_to(AA, 0, at(AB));        /* ... then AA's clique takes AB, and
					* AB's credit with it */
}

__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[8192];
	memset((char *)pad, 0, sizeof pad);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static int kinds[NBLK];
static uint64_t credits[NBLK], sizes[NBLK];
static int seen;

static void note(const struct mc_block *b, int kind, uint64_t credit, void *arg)
{
	(void)arg;
	int k = (int)b->stack - 1;
	ck_assert(k >= 0 && k < NBLK);
	kinds[k] = kind;
	credits[k] = credit;
	sizes[k] = b->size;
	seen++;
}

/* note, and the blocks past NBLK counted by kind. */
static int extra_definite;

static void note_any(const struct mc_block *b, int kind, uint64_t credit, void *arg)
{
	if (b->stack > NBLK) {
		extra_definite += kind == MC_KIND_DEFINITE;
		seen++;
		return;
	}
	note(b, kind, credit, arg);
}

/* The C library's main arena is found in its writable data, and what is
 * found is the arena: its top chunk (the word 0x50 bytes in) ends at the
 * program's break, as the main arena's does; and nothing is found in a
 * copy of it, whose empty bins no longer point at themselves. */
static int libc_rw(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t *seg = arg;
	if (!strstr(info->dlpi_name, "libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			seg[0] = (info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7;
			seg[1] = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(uintptr_t)7;
		}
	}
	return 1;
}

START_TEST(glibc_arena_found)
{
#if defined(__SANITIZE_ADDRESS__)
	/* ASan serves malloc: the C library's arena is never used */
	printf("note: glibc_arena_found: the C library's malloc is not the allocator under ASan\n");
	return;
#endif
	uintptr_t seg[2] = { 0, 0 }, lo = 0, hi = 0;
	dl_iterate_phdr(libc_rw, seg);
	ck_assert_msg(seg[0] && seg[1] > seg[0], "no writable segment of the C library");
	void *volatile block = malloc(4000);
	ck_assert(mc_glibc_arena(seg[0], seg[1], &lo, &hi));
	ck_assert_uint_ge(lo, seg[0]);
	ck_assert_uint_le(hi, seg[1]);
	ck_assert_uint_eq(hi - lo, 0x60 + 127 * 16 + 16 + 5 * 8);
	uintptr_t top = *(const uintptr_t *)(lo + 0x50);
	uintptr_t top_size = *(const uintptr_t *)(top + 8) & ~(uintptr_t)7;
	ck_assert_uint_eq(top + top_size, (uintptr_t)sbrk(0));
	free(block);
	static uintptr_t copy[(0x60 + 127 * 16 + 16 + 5 * 8) / 8 + 2];
	memcpy(copy + 2, (const void *)lo, hi - lo);
	ck_assert(!mc_glibc_arena((uintptr_t)copy, (uintptr_t)(copy + sizeof copy / 8), &lo, &hi));
}
END_TEST

START_TEST(kinds_as_valgrind_counts_them)
{
	build();
	scrub();
	struct mc_scan s;
	ck_assert(mc_scan(&s, NULL));
	ck_assert_uint_eq(s.n, NBLK);
	memset(kinds, -1, sizeof kinds);
	mc_scan_each(&s, 0, note, NULL);
	ck_assert_int_eq(seen, NBLK);
	static const int want[NBLK] = {
		[R] = MC_KIND_REACHABLE, [S] = MC_KIND_REACHABLE,
		[P] = MC_KIND_POSSIBLE, [Q] = MC_KIND_POSSIBLE,
		[L1] = MC_KIND_DEFINITE, [L2] = MC_KIND_INDIRECT, [L3] = MC_KIND_INDIRECT,
		[C1] = MC_KIND_DEFINITE, [C2] = MC_KIND_INDIRECT,
		[SELF] = MC_KIND_DEFINITE, [Z] = MC_KIND_INDIRECT, [OLD] = MC_KIND_DEFINITE,
		[AB] = MC_KIND_INDIRECT, [AC] = MC_KIND_INDIRECT, [AA] = MC_KIND_DEFINITE,
	};
	for (int k = 0; k < NBLK; k++)
		ck_assert_msg(kinds[k] == want[k], "block %d: kind %d, expected %d", k, kinds[k],
			      want[k]);
	/* each leader credited with its clique's bytes, as valgrind's
	 * loss records count them; a leader taken into a later clique
	 * hands its credit on (AB's 64 to AA) */
	static const uint64_t credit[NBLK] = { [L1] = 2 * BLK, [C1] = BLK, [AA] = 2 * BLK };
	for (int k = 0; k < NBLK; k++)
		ck_assert_msg(credits[k] == credit[k], "block %d: credit %llu, expected %llu", k,
			      (unsigned long long)credits[k], (unsigned long long)credit[k]);
	/* Only the region's blocks (epoch 2 and later): OLD is left out. */
	seen = 0;
	mc_scan_each(&s, 2, note, NULL);
	ck_assert_int_eq(seen, NBLK - 1);
	ck_assert(s.seconds >= 0);
	mc_scan_free(&s);
	ck_assert(s.v == NULL);
}
END_TEST

/* A pool (a libmemcheck:Pool entry matched its stack): the interior
 * pointer into P counts as one to its start, so P and Q, which only P
 * points to, are reachable; the scan asked about the stacks of the
 * blocks left possibly reachable, P's and Q's, once each, in order. */
START_TEST(pointers_into_pools_are_starts)
{
	build();
	pool_stack = P + 1;
	nasked = 0;
	scrub();
	struct mc_scan s;
	ck_assert(mc_scan(&s, NULL));
	pool_stack = 0;
	memset(kinds, -1, sizeof kinds);
	mc_scan_each(&s, 0, note, NULL);
	ck_assert_int_eq(kinds[P], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[Q], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[R], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[L1], MC_KIND_DEFINITE);
	ck_assert_int_eq(kinds[L3], MC_KIND_INDIRECT); /* a lost block's pointers: no root */
	ck_assert_uint_eq(nasked, 2);
	ck_assert_uint_eq(pool_asked[0], P + 1);
	ck_assert_uint_eq(pool_asked[1], Q + 1);
	mc_scan_free(&s);
	/* no pool: one pass, P possibly lost again */
	scrub();
	ck_assert(mc_scan(&s, NULL));
	memset(kinds, -1, sizeof kinds);
	mc_scan_each(&s, 0, note, NULL);
	ck_assert_int_eq(kinds[P], MC_KIND_POSSIBLE);
	ck_assert_uint_eq(nasked, 2);
	mc_scan_free(&s);
}
END_TEST

/* At an exit under valgrind's text with another thread running, the
 * blocks what the C library's freeres would free (an entry marked
 * "# freeres:" matched their stack) are not read: S, which only R points
 * to, is definitely lost, as valgrind, whose freeres freed R, says; R is
 * still reachable (supp_region.c counts it freed).  Not at another
 * region's end, nor outside valgrind's text: S reachable. */
START_TEST(freeres_blocks_not_read_at_exit)
{
	build();
	freeres_stack = R + 1;
	for (int round = 0; round < 3; round++) {
		struct mc_scan_from from;
		MC_SCAN_FROM(&from);
		from.at_exit = round != 1;
		mc_opt.valgrind_text = round == 2 ? MC_VGTEXT_NONE : MC_VGTEXT_FULL;
		scrub();
		struct mc_scan s;
		ck_assert(mc_scan(&s, &from));
		memset(kinds, -1, sizeof kinds);
		mc_scan_each(&s, 0, note, NULL);
		ck_assert_int_eq(kinds[R], MC_KIND_REACHABLE);
		ck_assert_msg(kinds[S] == (round ? MC_KIND_REACHABLE : MC_KIND_DEFINITE),
			      "round %d: S's kind %d", round, kinds[S]);
		ck_assert_int_eq(kinds[L1], MC_KIND_DEFINITE);
		mc_scan_free(&s);
	}
	freeres_stack = 0;
	mc_opt.valgrind_text = MC_VGTEXT_NONE;
}
END_TEST

/* A block recorded 16 bytes shorter than it is (account.c's DTV, whose
 * last entry is memcheck's in the figures), whose last 16 bytes hold
 * the only pointer to SELF: with its note, the scan reads them (SELF
 * reachable, as the entry that the dynamic linker put there makes the
 * block it points to), and the record keeps the recorded size; without
 * it, SELF is definitely lost as before (c7d4a67 read the recorded
 * size whatever was noted: the thread's TLS block in the DTV's last
 * entry was definitely lost, tests/prog/plain_dtv_last). */
START_TEST(short_block_read_whole)
{
	build();
	struct mc_block old;
	ck_assert_int_eq(mc_blocks_remove(at(R), &old), MC_REMOVED);
	mc_blocks_insert(at(R), BLK - 16, R + 1, 2, &old);
	link_to(R, 7, at(SELF));
	test_tails[0] = (struct mc_tail){ at(R), BLK - 16, R + 1, 16 };
	for (int round = 0; round < 3; round++) {
		/* round 2: a note whose block no longer matches (another
		 * size at that address) is not applied */
		mc_account_ntails = round != 0;
		test_tails[0].size = round == 2 ? BLK - 32 : BLK - 16;
		scrub();
		struct mc_scan s;
		ck_assert(mc_scan(&s, NULL));
		memset(kinds, -1, sizeof kinds);
		mc_scan_each(&s, 0, note, NULL);
		ck_assert_msg(kinds[SELF] == (round == 1 ? MC_KIND_REACHABLE : MC_KIND_DEFINITE),
			      "round %d: SELF's kind %d", round, kinds[SELF]);
		ck_assert_int_eq(kinds[R], MC_KIND_REACHABLE);
		ck_assert_uint_eq(sizes[R], BLK - 16);
		mc_scan_free(&s);
	}
	mc_account_ntails = 0;
}
END_TEST

/* MORE blocks no root points to, in a mapping whose address is kept
 * only here, in this frame, which the scan does not read. */
enum { MORE = 600 };

__attribute__((noinline)) static void add_more(void)
{
	char *more = mmap(NULL, MORE * BLK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	ck_assert(more != MAP_FAILED);
	struct mc_block old;
	for (int i = 0; i < MORE; i++)
		mc_blocks_insert((uintptr_t)more + (uintptr_t)i * BLK, BLK, NBLK + 1, 2, &old);
}

/* A small scan's three arrays share one mapping; past 16 KiB of them
 * (about 500 blocks) each has its own, and the kinds are the same. */
START_TEST(large_scan_maps_apart)
{
	build();
	struct mc_scan s;
	scrub();
	ck_assert(mc_scan(&s, NULL));
	ck_assert(s.joined);
	mc_scan_free(&s);
	add_more();
	scrub();
	ck_assert(mc_scan(&s, NULL));
	ck_assert(!s.joined);
	ck_assert_uint_eq(s.n, NBLK + MORE);
	memset(kinds, -1, sizeof kinds);
	seen = 0;
	mc_scan_each(&s, 0, note_any, NULL);
	ck_assert_int_eq(seen, NBLK + MORE);
	ck_assert_int_eq(kinds[R], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[P], MC_KIND_POSSIBLE);
	ck_assert_int_eq(kinds[L2], MC_KIND_INDIRECT);
	ck_assert_int_eq(extra_definite, MORE);
	mc_scan_free(&s);
}
END_TEST

/* A killed process's deadline past (fatal.c's mc_fatal_deadline_ns): the
 * scan gives up, says so (mc_scan_cut) and leaves nothing to free; the
 * next without one runs to its end, its kinds as before. */
START_TEST(deadline_past_cuts_the_scan)
{
	build();
	struct mc_scan s;
	scrub();
	mc_fatal_deadline_ns = 1; /* long past */
	ck_assert(!mc_scan(&s, NULL));
	ck_assert(mc_scan_cut());
	mc_fatal_deadline_ns = 0;
	scrub();
	ck_assert(mc_scan(&s, NULL));
	ck_assert(!mc_scan_cut());
	memset(kinds, -1, sizeof kinds);
	mc_scan_each(&s, 0, note_any, NULL);
	ck_assert_int_eq(kinds[R], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[L2], MC_KIND_INDIRECT);
	mc_scan_free(&s);
}
END_TEST

/* memcheck_add_root: a block only an anonymous mapping points to is lost
 * until that mapping is made a root. */
START_TEST(registered_roots)
{
	build();
	uintptr_t *mine = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(mine != MAP_FAILED);
	mine[7] = at(L1);
	scrub();
	struct mc_scan s;
	ck_assert_int_eq(memcheck_add_root(mine, 4096), 0);
	ck_assert(mc_scan(&s, NULL));
	memset(kinds, -1, sizeof kinds);
	mc_scan_each(&s, 0, note, NULL);
	ck_assert_int_eq(kinds[L1], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[L2], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[L3], MC_KIND_POSSIBLE); /* L2 -> L3 is interior */
	mc_scan_free(&s);
	ck_assert_int_eq(memcheck_remove_root(mine), 0);
	ck_assert_int_eq(memcheck_remove_root(mine), -1);
	ck_assert_int_eq(memcheck_add_root(mine, 0), -1);
	ck_assert(mc_scan(&s, NULL));
	mc_scan_each(&s, 0, note, NULL);
	ck_assert_int_eq(kinds[L1], MC_KIND_DEFINITE);
	mc_scan_free(&s);
}
END_TEST

/* 4 MiB of .bss, one page of it written: the scan reads that page (a
 * block it points to is reachable) and, on a system without swap, none
 * of the 1,023 others, which were never written and hold only zeros;
 * reading them would fault each in (15-35 us a page). */
static uintptr_t sparse_bss[1 << 19];

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

START_TEST(untouched_data_pages_not_read)
{
	build();
	((volatile uintptr_t *)sparse_bss)[600 * 512 + 3] = at(L1);
	scrub();
	struct mc_scan s;
	long before = minor_faults();
	ck_assert(mc_scan(&s, NULL));
	long faults = minor_faults() - before;
	memset(kinds, -1, sizeof kinds);
	mc_scan_each(&s, 0, note, NULL);
	ck_assert_int_eq(kinds[L1], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[L2], MC_KIND_REACHABLE);
	/* with swap every page is read (maps.c): a page swapped out would
	 * look as if never written */
	struct sysinfo si;
	if (sysinfo(&si) == 0 && si.totalswap == 0)
		ck_assert_msg(faults < 256, "the scan faulted in %ld pages", faults);
	mc_scan_free(&s);
}
END_TEST

/* The scan's read of /proc/self/maps names each object's file for the
 * names the suppressions then need (elfmod.c): lent while the scan
 * lasts, taken back by mc_scan_free, so that a region's end reads the
 * file once. */
START_TEST(lends_its_maps_read)
{
	/* _i 0: asked mapping by mapping where the kernel can
	 * (PROCMAP_QUERY), the file kept open while lent; 1: the whole
	 * file read, as on kernels before 6.11 */
	mc_maps_query_set(_i == 0);
	build();
	struct mc_scan s;
	lends = 0;
	ck_assert(mc_scan(&s, NULL));
	ck_assert_int_eq(lends, 1);
	ck_assert_ptr_nonnull(lent_runs);
	int fd = mc_maps_runs_fd(lent_runs, NULL);
	if (_i == 1)
		ck_assert_int_eq(fd, -1);
	Dl_info self, libc;
	ck_assert(dladdr((void *)&kinds_as_valgrind_counts_them, &self));
	ck_assert(dladdr((void *)&getpid, &libc));
	const char *name = mc_maps_run_at(lent_runs, (uintptr_t)self.dli_fbase, qname, sizeof qname);
	ck_assert_ptr_nonnull(name);
	ck_assert_msg(strstr(name, "unit_scan") != NULL, "the program's run named %s", name);
	/* asked of the kernel: into the caller's buffer (elfmod.c's path,
	 * a page it wrote), not one of the library's own in .bss, a page
	 * first touched at a measured exit */
	if (fd >= 0)
		ck_assert_ptr_eq(name, qname);
	name = mc_maps_run_at(lent_runs, (uintptr_t)libc.dli_fbase, qname, sizeof qname);
	ck_assert_ptr_nonnull(name);
	ck_assert_msg(strstr(name, "/libc") != NULL, "the C library's run named %s", name);
	/* a place inside a run starts none */
	ck_assert_ptr_null(mc_maps_run_at(lent_runs, (uintptr_t)self.dli_fbase + 64, qname, sizeof qname));
	/* given back where an open of memcheck's met the open-file limit:
	 * closed, and each question then asks a copy of its own */
	ck_assert_ptr_nonnull(emfile_release);
	ck_assert(emfile_release() == (fd >= 0));
	if (fd >= 0) {
		ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
		ck_assert_int_eq(mc_maps_runs_fd(lent_runs, NULL), -1);
		name = mc_maps_run_at(lent_runs, (uintptr_t)self.dli_fbase, qname, sizeof qname);
		ck_assert_msg(name && strstr(name, "unit_scan"), "after the release: %s",
			      name ? name : "no name");
	}
	mc_scan_free(&s);
	ck_assert_int_eq(lends, 2);
	ck_assert_ptr_null(lent_runs);
	if (fd >= 0) /* closed with the scan */
		ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
	mc_maps_query_set(true);
}
END_TEST

/* The file asked stays open while the scan's table is lent, as the
 * program's threads run again: on a number out of the program's way,
 * and where the program has closed that number and opened a file of its
 * own there, memcheck asks a copy of its own and leaves the program's
 * file open. */
START_TEST(asked_maps_leave_the_programs_files)
{
	mc_maps_query_set(true);
	build();
	struct mc_scan s;
	lends = 0;
	ck_assert(mc_scan(&s, NULL));
	ck_assert_ptr_nonnull(lent_runs);
	bool query;
	int fd = mc_maps_runs_fd(lent_runs, &query);
	if (!query) /* a kernel before 6.11: the whole file was read */
		return;
	ck_assert_int_ge(fd, 900);
	int other = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(other, 0);
	ck_assert_int_eq(dup2(other, fd), fd); /* the program's file now */
	close(other);
	ck_assert_int_eq(mc_maps_runs_fd(lent_runs, &query), -1);
	Dl_info self;
	ck_assert(dladdr((void *)&kinds_as_valgrind_counts_them, &self));
	const char *name = mc_maps_run_at(lent_runs, (uintptr_t)self.dli_fbase, qname, sizeof qname);
	ck_assert_ptr_nonnull(name);
	ck_assert_msg(strstr(name, "unit_scan") != NULL, "the program's run named %s", name);
	mc_scan_free(&s);
	ck_assert_int_ne(fcntl(fd, F_GETFD), -1); /* left open */
	close(fd);
}
END_TEST

/* A scan with no block to find reads no mappings, and closes no file of
 * the program's (a zeroed table of mappings owns no fd: 0 is stdin). */
START_TEST(no_blocks_closes_nothing)
{
	int fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 0), 0);
	mc_blocks_init();
	mc_blocks_init_small(); /* as life.c, after the stacks' start */
	struct mc_scan s;
	ck_assert(mc_scan(&s, NULL));
	ck_assert_uint_eq(s.n, 0);
	mc_scan_free(&s);
	ck_assert_int_ne(fcntl(0, F_GETFD), -1);
	close(fd);
}
END_TEST

/* The roots /proc/self/maps cuts (the stack, the threads, the
 * program's mappings) are read only while a block is left unreached by
 * the objects' data: with every block reached from a global the maps
 * are not read (nothing lent); with one more that only this frame's
 * stack points to, they are, and that block is reachable all the same
 * (a scan that stopped early would call it lost). */
__attribute__((noinline)) static uintptr_t two_blocks(void)
{
	heap = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(heap != MAP_FAILED);
	memset(heap, 0, 4096);
	mc_blocks_init();
	mc_blocks_init_small();
	struct mc_block old;
	mc_blocks_insert(at(R), BLK, R + 1, 2, &old);
	root_start = at(R);
	return at(S);
}

START_TEST(stack_roots_only_when_needed)
{
	volatile uintptr_t on_stack = two_blocks();
	scrub();
	struct mc_scan s;
	lends = 0;
	ck_assert(mc_scan(&s, NULL));
	ck_assert_uint_eq(s.n, 1);
	ck_assert_int_eq(s.state[0], MC_KIND_REACHABLE);
	ck_assert_int_eq(lends, 0); /* the maps not read */
	mc_scan_free(&s);
	struct mc_block old;
	mc_blocks_insert(on_stack, BLK, S + 1, 2, &old);
	ck_assert(mc_scan(&s, NULL));
	ck_assert_uint_eq(s.n, 2);
	memset(kinds, -1, sizeof kinds);
	seen = 0;
	mc_scan_each(&s, 0, note, NULL);
	ck_assert_int_eq(kinds[R], MC_KIND_REACHABLE);
	ck_assert_int_eq(kinds[S], MC_KIND_REACHABLE);
	ck_assert_int_eq(lends, 1);
	mc_scan_free(&s);
	ck_assert(on_stack == at(S));
}
END_TEST

/* The first address of addrs whose mapping (or next mapping) asked and
 * read do not give alike, said in why; false when none. */
static bool vmas_differ(struct mc_vmas *asked, struct mc_vmas *read,
			const uintptr_t *addrs, size_t n, char *why, size_t cap)
{
	why[0] = 0;
	for (size_t i = 0; i < n; i++) {
		for (int next = 0; next < 2; next++) {
			const struct mc_vma *a = next ? mc_vmas_next(asked, addrs[i])
						       : mc_vmas_find(asked, addrs[i]);
			const struct mc_vma *r = next ? mc_vmas_next(read, addrs[i])
						       : mc_vmas_find(read, addrs[i]);
			if (!a != !r) {
				snprintf(why, cap, "address %zu (%d): asked %p, read %p", i, next,
					 (const void *)a, (const void *)r);
				return true;
			}
			if (a && !(a->lo == r->lo && a->hi == r->hi && a->prot == r->prot &&
				   a->shared == r->shared && a->kind == r->kind)) {
				snprintf(why, cap,
					 "address %zu (%d): asked %lx-%lx %d %d %d, read %lx-%lx %d %d %d",
					 i, next, (unsigned long)a->lo, (unsigned long)a->hi, a->prot,
					 a->shared, a->kind, (unsigned long)r->lo, (unsigned long)r->hi,
					 r->prot, r->shared, r->kind);
				return true;
			}
		}
	}
	return false;
}

/* The mappings asked one by one (PROCMAP_QUERY) are those the whole
 * file lists: each address's mapping and the next after it, with their
 * protection, sharing and kind (the stack, a device, a file, none). */
START_TEST(maps_asked_as_read)
{
	int zero = open("/dev/zero", O_RDWR);
	ck_assert_int_ge(zero, 0);
	char *shared = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, zero, 0);
	char *none = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(shared != MAP_FAILED && none != MAP_FAILED);
	ck_assert_int_eq(munmap(none + 4096, 4096), 0); /* a hole */
	ck_assert_int_eq(mprotect(none, 4096, PROT_READ), 0);
	int local = 0;
	Dl_info libc;
	ck_assert(dladdr((void *)&getpid, &libc));
	const uintptr_t addrs[] = {
		(uintptr_t)&local, (uintptr_t)&lends, (uintptr_t)&maps_asked_as_read,
		(uintptr_t)libc.dli_fbase, (uintptr_t)shared + 4096, (uintptr_t)none,
		(uintptr_t)none + 4096, (uintptr_t)none + 8192, 0, 4096,
	};
	static struct mc_vma first[2][64];
	struct mc_vmas asked, read;
	/* The two reads are two moments: a mapping made between them (ASan's
	 * runtime maps as it likes; the stack grows under a deeper call) is
	 * a difference neither caused, and one run under ASan failed so.
	 * A fault in either way of reading is there every time: three
	 * tries. */
	char why[256] = "";
	for (int attempt = 0; attempt < 3; attempt++) {
		mc_maps_query_set(false);
		ck_assert(mc_vmas_read_into(&read, first[1], 64, true));
		ck_assert(!read.asking);
		mc_maps_query_set(true);
		ck_assert(mc_vmas_read_into(&asked, first[0], 64, true));
		if (!vmas_differ(&asked, &read, addrs, sizeof addrs / sizeof addrs[0], why,
				 sizeof why))
			break;
	}
	ck_assert_msg(!why[0], "%s", why);
	ck_assert_int_eq(mc_vmas_find(&read, (uintptr_t)&local)->kind, MC_VMA_STACK);
	/* the whole file on demand (a main thread whose stack pointer is
	 * not known): a table by address, its stack the read's (the counts
	 * may differ: ASan maps memory between the two reads) */
	ck_assert(mc_vmas_full(&asked));
	ck_assert(!asked.asking);
	ck_assert_uint_gt(asked.n, 1);
	for (size_t i = 1; i < asked.n; i++)
		ck_assert(asked.v[i - 1].hi <= asked.v[i].lo);
	const struct mc_vma *a = mc_vmas_find(&asked, (uintptr_t)&local);
	const struct mc_vma *r = mc_vmas_find(&read, (uintptr_t)&local);
	ck_assert(a && r && a->lo == r->lo && a->hi == r->hi && a->kind == MC_VMA_STACK);
	mc_vmas_free(&asked);
	mc_vmas_free(&read);
	munmap(shared, 8192);
	munmap(none, 4096);
	munmap(none + 8192, 4096);
	close(zero);
}
END_TEST

/* maps.c's one mincore walk (mc_resident_runs), which the roots' ranges
 * and scan.c's large blocks share: runs cut to the range, a partial
 * page at either end given only where it is in memory, the chunks'
 * boundaries (cap pages a call) invisible once adjacent runs are
 * joined, a chunk mincore cannot answer for (a page unmapped in it)
 * given whole. */
struct runs {
	uintptr_t lo[16], hi[16];
	int n;
};

static void add_run(uintptr_t lo, uintptr_t hi, void *arg)
{
	struct runs *r = arg;
	ck_assert_msg(lo < hi, "an empty run");
	if (r->n && r->hi[r->n - 1] == lo) { /* a chunk's boundary: one run */
		r->hi[r->n - 1] = hi;
		return;
	}
	ck_assert_msg(!r->n || r->hi[r->n - 1] < lo, "runs out of order or overlapping");
	ck_assert(r->n < 16);
	r->lo[r->n] = lo;
	r->hi[r->n++] = hi;
}

static void runs_are(uintptr_t lo, uintptr_t hi, size_t cap, const char *base, const long *want,
		     int nwant)
{
	unsigned char vec[8];
	struct runs r = { .n = 0 };
	ck_assert(cap <= sizeof vec);
	mc_resident_runs(lo, hi, vec, cap, add_run, &r);
	ck_assert_msg(r.n == nwant / 2, "cap %zu: %d runs, %d expected", cap, r.n, nwant / 2);
	for (int i = 0; i < r.n; i++)
		ck_assert_msg(r.lo[i] == (uintptr_t)(base + want[2 * i]) &&
				      r.hi[i] == (uintptr_t)(base + want[2 * i + 1]),
			      "cap %zu: run %d [%#lx, %#lx), [%#lx, %#lx) expected", cap, i,
			      (unsigned long)(r.lo[i] - (uintptr_t)base),
			      (unsigned long)(r.hi[i] - (uintptr_t)base), (unsigned long)want[2 * i],
			      (unsigned long)want[2 * i + 1]);
}

#define PG 4096L
START_TEST(resident_runs_edges)
{
	/* pages 1, 2, 3 and 6 written, 0, 4, 5, 7 and 8 never */
	char *m = mmap(NULL, 9 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(m != MAP_FAILED);
	m[1 * PG] = m[2 * PG] = m[3 * PG] = m[6 * PG] = 1;
	uintptr_t lo = (uintptr_t)m + 100, hi = (uintptr_t)m + 8 * PG + 56;
	for (size_t cap = 1; cap <= 8; cap++) {
		/* the partial pages at the ends, not in memory, left out */
		const long plain[] = { PG, 4 * PG, 6 * PG, 7 * PG };
		runs_are(lo, hi, cap, m, plain, 4);
		/* the ends in memory: the run cut to the range */
		const long cut[] = { PG + 8, 3 * PG + 24 };
		runs_are((uintptr_t)m + PG + 8, (uintptr_t)m + 3 * PG + 24, cap, m, cut, 2);
		/* within one page: in memory, the range; not, nothing */
		const long one[] = { PG + 8, PG + 64 };
		runs_are((uintptr_t)m + PG + 8, (uintptr_t)m + PG + 64, cap, m, one, 2);
		runs_are((uintptr_t)m + 8, (uintptr_t)m + 64, cap, m, NULL, 0);
	}
	/* page 5 unmapped: the chunk holding it cannot be told, given whole */
	ck_assert(munmap(m + 5 * PG, PG) == 0);
	/* cap 2: chunks 0-1, 2-3, 4-5 (whole), 6-7, 8 */
	const long failed2[] = { PG, 7 * PG };
	runs_are(lo, hi, 2, m, failed2, 2);
	/* cap 4: chunks 0-3, 4-7 (whole), 8 */
	const long failed4[] = { PG, 8 * PG };
	runs_are(lo, hi, 4, m, failed4, 2);
	/* cap 8 from page 1: chunk 1-8 (whole, cut to the range) */
	const long failed8[] = { PG + 8, 8 * PG + 56 };
	runs_are((uintptr_t)m + PG + 8, hi, 8, m, failed8, 2);
	munmap(m, 5 * PG);
	munmap(m + 6 * PG, 3 * PG);
}
END_TEST

/* A block of 301 pages, its ends partial pages, in a mapping of its
 * own, the pointers it holds at its first word, either side of the
 * boundary between two of scan_sparse's 256-page mincore calls and at
 * its last word: each block they point to is reachable through it, and
 * its 297 pages never written are not read (sparse_find counts them,
 * scan_sparse leaves them out; mc_footprint_measuring is true here). */
uintptr_t volatile root_big; /* the large block's root */

START_TEST(large_block_read_in_its_pages)
{
	build();
	char *m = mmap(NULL, 302 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(m != MAP_FAILED);
	uintptr_t lo = (uintptr_t)m + PG - 64, hi = (uintptr_t)m + 301 * PG + 64;
	struct mc_block old;
	mc_blocks_insert(lo, hi - lo, NBLK + 1, 2, &old);
	root_big = lo;
	uintptr_t first = at(SELF), before = at(C1), after = at(AA), last = at(L1);
	memcpy((void *)lo, &first, 8);                       /* page 0, partial */
	memcpy(m + 257 * PG - 8, &before, 8);                /* page 256's last word */
	memcpy(m + 257 * PG, &after, 8);                     /* page 257's first */
	memcpy((void *)(hi - 8), &last, 8);                  /* page 301, partial */
	scrub();
	struct mc_scan s;
	long faults = minor_faults();
	ck_assert(mc_scan(&s, NULL));
	faults = minor_faults() - faults;
	memset(kinds, -1, sizeof kinds);
	mc_scan_each(&s, 0, note_any, NULL);
	const int found[] = { SELF, C1, C2, AA, AB, AC, L1, L2 };
	for (size_t i = 0; i < MC_ARRAY_SIZE(found); i++)
		ck_assert_msg(kinds[found[i]] == MC_KIND_REACHABLE, "block %d: kind %d", found[i],
			      kinds[found[i]]);
	struct sysinfo si;
	if (sysinfo(&si) == 0 && si.totalswap == 0)
		ck_assert_msg(faults < 150, "the scan faulted in %ld pages", faults);
	mc_scan_free(&s);
	root_big = 0;
	ck_assert_int_eq(mc_blocks_remove(lo, &old), MC_REMOVED);
	munmap(m, 302 * PG);
}
END_TEST

/* The walks of the loaded objects this program's lib/ files make
 * (tests.mk links it with --wrap=dl_iterate_phdr). */
static int object_walks;
int __real_dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);
int __wrap_dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);
int __wrap_dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	object_walks++;
	return __real_dl_iterate_phdr(fn, arg);
}

/* What the scan asks of the C library (roots.c's libc_facts: its
 * nptl_db descriptions, _IO_list_all, the dynamic linker's static TLS
 * size, exit's extent), at every measured process's exit: two walks of
 * the objects (the names, exit's size), where six (one a name) were
 * 15.7 K instructions of a short process's exit (doc/costs.md, exit58);
 * the same list as the dynamic linker finds, and nothing asked again. */
START_TEST(libc_facts_two_walks)
{
	int before = object_walks;
	struct _IO_FILE *const *list = mc_roots_io_list();
	ck_assert_int_eq(object_walks - before, 2);
	ck_assert_ptr_nonnull(list);
	ck_assert_ptr_eq((void *)list, dlsym(RTLD_DEFAULT, "_IO_list_all"));
	ck_assert_ptr_eq(mc_roots_io_list(), list);
	ck_assert_int_eq(object_walks - before, 2);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("scan", 0);
	tcase_add_test(tc, libc_facts_two_walks);
	tcase_add_test(tc, kinds_as_valgrind_counts_them);
	tcase_add_test(tc, glibc_arena_found);
	tcase_add_test(tc, registered_roots);
	tcase_add_test(tc, pointers_into_pools_are_starts);
	tcase_add_test(tc, freeres_blocks_not_read_at_exit);
	tcase_add_test(tc, short_block_read_whole);
	tcase_add_test(tc, large_scan_maps_apart);
	tcase_add_test(tc, deadline_past_cuts_the_scan);
	tcase_add_test(tc, untouched_data_pages_not_read);
	tcase_add_test(tc, resident_runs_edges);
	tcase_add_test(tc, large_block_read_in_its_pages);
	tcase_add_loop_test(tc, lends_its_maps_read, 0, 2);
	tcase_add_test(tc, maps_asked_as_read);
	tcase_add_test(tc, asked_maps_leave_the_programs_files);
	tcase_add_test(tc, no_blocks_closes_nothing);
	tcase_add_test(tc, stack_roots_only_when_needed);
	return h_run_suite(NULL);
}
