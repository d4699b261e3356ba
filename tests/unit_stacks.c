/*
 * unit_stacks.c - lib/stacks.c, depot.c and cfi.c on their own:
 * interning, the frame-pointer walk, and the walk through functions
 * built without frame pointers by their call-frame information.
 */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

struct mc_options mc_opt;
MC_TLS struct mc_thread mc_self; /* forward.c's, not linked here */
/* forward.c's too: libmemcheck's own code, none here (as where it is
 * linked into the program): every frame's rule comes from its CFI */
uintptr_t mc_text_lo, mc_text_len;

START_TEST(intern_dedupes)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	uintptr_t a[3] = { 0x1000, 0x2000, 0x3000 };
	uintptr_t b[3] = { 0x1000, 0x2000, 0x3001 };
	uint32_t ia = mc_stack_intern(a, 3);
	ck_assert_uint_ne(ia, 0);
	ck_assert_uint_eq(mc_stack_intern(a, 3), ia);
	ck_assert_uint_ne(mc_stack_intern(b, 3), ia);
	ck_assert_uint_ne(mc_stack_intern(a, 2), ia);
	const uintptr_t *f;
	ck_assert_int_eq(mc_stack_get(ia, &f), 3);
	ck_assert_uint_eq(f[2], 0x3000);
	ck_assert_int_eq(mc_stack_get(0, &f), 0);
	/* for reports: frames up to the first that is not in code */
	uintptr_t code = (uintptr_t)&mc_stack_intern + 16, heap = (uintptr_t)malloc(16);
	uintptr_t c[4] = { 0x1000, code, heap, code };
	uint32_t ic = mc_stack_intern(c, 4);
	ck_assert_int_eq(mc_stack_get(ic, &f), 4);
	ck_assert_int_eq(mc_stack_get_code(ic, &f), 2);   /* frame 0 always */
	ck_assert_int_eq(mc_stack_get_code(ia, &f), 1);
	ck_assert_int_eq(mc_stack_get_code(0, &f), 0);
	free((void *)heap);
	ck_assert_uint_eq(mc_stack_intern(a, 0), 0);
	/* many distinct stacks keep distinct ids */
	uint32_t prev = 0;
	for (uintptr_t i = 1; i <= 100000; i++) {
		uintptr_t one[2] = { i, i * 7 };
		uint32_t id = mc_stack_intern(one, 2);
		ck_assert_uint_gt(id, prev);
		prev = id;
	}
}
END_TEST

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* The index's old tables are given back when it grows (depot.c's
 * idx_drop): 200,000 stacks of two frames take their units (32 bytes
 * each), their ids' lines (64) and the newest table (2^19 slots of 16
 * bytes, 8 MiB), resident; the tables before it, another 8 MiB, were
 * resident too. */
START_TEST(depot_index_growth_gives_old_tables_back)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	enum { N = 200000 };
	long before = rss_kib();
	for (uintptr_t i = 1; i <= N; i++) {
		uintptr_t two[2] = { 0x5000000 + i, i * 13 };
		ck_assert_uint_ne(mc_stack_intern(two, 2), 0);
	}
	/* and each array's last 2 MiB counted ahead (depot.c's huge pages:
	 * segments of 2 MiB or more are counted 2 MiB at a time) */
	long grown = rss_kib() - before, newest = (16L << 19) / 1024;
	long bound = N * (32L + 64L) / 1024 + newest + 2048 + 2 * 2048;
#if defined(__SANITIZE_ADDRESS__)
	(void)grown; /* ASan's shadow and quarantine grow too (56 MiB measured) */
	(void)bound;
#else
	ck_assert_msg(before > 0 && grown < bound,
		      "RSS grew %ld KiB for %d stacks, more than %ld KiB", grown, N, bound);
#endif
}
END_TEST

/* memcheck's own memory the depot counts (depot.c: mc_map, mc_own_grow). */
static int64_t depot_own;
static bool own_before(size_t bytes)
{
	(void)bytes;
	return false;
}
static void own_after(bool folding, int64_t bytes)
{
	(void)folding;
	depot_own += bytes;
}

/* A short test process stores a few hundred stacks (bench/suite_test 1:
 * 203, in 300 of the index's slots, 97 of them marked as a run's walk
 * besides): the index is filled to three quarters while it is small
 * (depot.c's IDX_DENSE_BITS), so 300 slots take the 512-slot table (8
 * KiB) after the first page, where at half full they took 1,024 slots
 * (16 KiB); 191 slots stay in the first page, where 129 and more took
 * that 16 KiB table too.  What the depot counts for 300 two-frame stacks
 * and for 190: the first page of the index and the arena's first page
 * (8 KiB), the arena's units (32 bytes a stack) as its segment counts
 * them, a page and then three more, then as much again (depot.c's
 * seg_grow), the ids' words (32 bytes a stack, 64 until depot58) a page
 * and then as much again, no site (none counted), and the tables past
 * the first. */
START_TEST(depot_small_index_fills_three_quarters)
{
	static const struct mc_map_hooks hooks = { .before = own_before, .after = own_after };
	mc_map_hooks_set(&hooks);
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	const int64_t K = 1024;
	for (uintptr_t i = 1; i <= 300; i++) {
		uintptr_t two[2] = { 0x7000000 + i * 64, i * 11 };
		ck_assert_uint_ne(mc_stack_intern(two, 2), 0);
		/* 190 stacks: units 6,080 bytes (the first page, then 16 KiB),
		 * ids 6,112 (8 KiB), no table past the first */
		if (i == 190)
			ck_assert_msg(depot_own == 8 * K + 12 * K + 8 * K,
				      "190 stacks counted %lld KiB (28: no index table past the "
				      "first page)", (long long)(depot_own / K));
	}
	/* 300: units 9,600 bytes (16 KiB), ids 9,632 (16 KiB), the
	 * 512-slot table 8 KiB */
	ck_assert_msg(depot_own == 8 * K + 12 * K + 16 * K + 8 * K,
		      "300 stacks counted %lld KiB (44: the index's second table 8 KiB)",
		      (long long)(depot_own / K));
	mc_map_hooks_set(NULL);
}
END_TEST

/* An entry takes 16-byte units (depot.c's UNIT): a stack of three frames
 * is its 16-byte head and 24 bytes of frames, 48 bytes in the arena,
 * where 32-byte units made it 64 (a short test process's 203 stacks
 * 24,704 -> 23,072 bytes, 7 -> 6 pages); one of four frames 48, as it
 * was. */
START_TEST(depot_entries_in_16_byte_units)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	for (int n = 3; n <= 4; n++) {
		const uintptr_t *a, *b;
		uintptr_t f[4] = { 0x7100000 + (uintptr_t)n, 2, 3, 4 };
		ck_assert_int_eq(mc_stack_get(mc_stack_intern(f, n), &a), n);
		f[1]++;
		ck_assert_int_eq(mc_stack_get(mc_stack_intern(f, n), &b), n);
		ck_assert_msg((uintptr_t)b - (uintptr_t)a == 48,
			      "a stack of %d frames takes %lu bytes of the arena (48)", n,
			      (unsigned long)((uintptr_t)b - (uintptr_t)a));
		ck_assert_uint_eq((uintptr_t)b % 8, 0);
	}
}
END_TEST

/* The VmFlags line of the mapping that holds addr, in /proc/self/smaps
 * (empty where none does). */
static void vm_flags_of(uintptr_t addr, char *out, size_t n)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	out[0] = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = addr >= lo && addr < hi;
		else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(out, n, "%s", line + 8);
			break;
		}
	}
	if (f)
		fclose(f);
}

/* The depot's segments of 2 MiB or more are asked for huge pages
 * (depot.c's huge_reserve: on these guests the first store to each 4 KiB
 * page costs the hypervisor's fault even after a populate, one in 25 new
 * 16-frame stacks), its smaller ones not: 100,000 stacks of two frames
 * reach the arena's 2 MiB segment and the ids' 4 MiB one; the first
 * stack's frames and line lie in their 64 KiB and 128 KiB first
 * segments.  MADV_HUGEPAGE shows as "hg" in the mapping's flags. */
START_TEST(depot_large_segments_in_huge_pages)
{
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
		return; /* a kernel without huge pages: the advice fails */
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	enum { N = 100000 };
	uint32_t first = 0, last = 0;
	for (uintptr_t i = 1; i <= N; i++) {
		uintptr_t two[2] = { 0x6000000 + i, i * 11 };
		last = mc_stack_intern(two, 2);
		ck_assert_uint_ne(last, 0);
		first = first ? first : last;
	}
	const uintptr_t *f;
	char flags[256];
	ck_assert_int_eq(mc_stack_get(last, &f), 2);
	vm_flags_of((uintptr_t)f, flags, sizeof flags);
	ck_assert_msg(strstr(flags, " hg") != NULL, "arena's last segment: VmFlags%s", flags);
	vm_flags_of((uintptr_t)mc_depot_id_of(last), flags, sizeof flags);
	ck_assert_msg(strstr(flags, " hg") != NULL, "ids' last segment: VmFlags%s", flags);
	ck_assert_int_eq(mc_stack_get(first, &f), 2);
	vm_flags_of((uintptr_t)f, flags, sizeof flags);
	ck_assert_msg(flags[0] && strstr(flags, " hg") == NULL, "arena's first segment: VmFlags%s",
		      flags);
	vm_flags_of((uintptr_t)mc_depot_id_of(first), flags, sizeof flags);
	ck_assert_msg(flags[0] && strstr(flags, " hg") == NULL, "ids' first segment: VmFlags%s",
		      flags);
}
END_TEST

/* Stacks whose hashes collide are two stacks: the depot's index keeps
 * both under the one key and tells them apart by their frames.  With
 * stacks.c's hash (h = (h + frame) * K a frame), {a, b} and {a + 1,
 * b - K} hash alike, and so do {0} (hash 0, kept under key 1) and
 * {K^-1} (hash 1). */
/* The code segments a report's check found are kept across its calls
 * (depot.c's codes), good while no object comes or goes: frames in an
 * object unloaded since are not return addresses in code any more, as
 * when each check walked the loaded objects. */
START_TEST(depot_code_check_follows_dlclose)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	/* the C library's: installed wherever it is, loaded by no one here */
	void *h = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "%s", dlerror());
	void *fn = dlsym(h, "__b64_ntop");
	ck_assert_ptr_nonnull(fn);
	uintptr_t code = (uintptr_t)&mc_stack_intern + 16;
	uintptr_t f3[3] = { 0x1000, (uintptr_t)fn + 1, code };
	uint32_t id = mc_stack_intern(f3, 3);
	const uintptr_t *f;
	ck_assert_int_eq(mc_stack_get_code(id, &f), 3);
	ck_assert_int_eq(mc_stack_get_code(id, &f), 3); /* from what was kept */
	dlclose(h);
	ck_assert_ptr_null(dlopen("libresolv.so.2", RTLD_NOW | RTLD_NOLOAD)); /* unloaded */
	ck_assert_int_eq(mc_stack_get_code(id, &f), 1);
}
END_TEST

START_TEST(intern_tells_colliding_hashes_apart)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	const uint64_t k = 0x9e3779b97f4a7c15ull; /* stacks.c's HASH_K */
	uint64_t kinv = k; /* Newton: each step doubles the bits right */
	for (int i = 0; i < 5; i++)
		kinv *= 2 - k * kinv;
	ck_assert_uint_eq(k * kinv, 1);
	for (uintptr_t base = 0x401000; base < 0x401000 + 64 * 64; base += 64) {
		uintptr_t a[2] = { base, base + 0x777 }, b[2] = { base + 1, base + 0x777 - k };
		uint32_t ia = mc_stack_intern(a, 2), ib = mc_stack_intern(b, 2);
		ck_assert_uint_ne(ia, 0);
		ck_assert_uint_ne(ib, 0);
		ck_assert_uint_ne(ia, ib);
		for (int again = 0; again < 3; again++) {
			ck_assert_uint_eq(mc_stack_intern(b, 2), ib);
			ck_assert_uint_eq(mc_stack_intern(a, 2), ia);
		}
		const uintptr_t *f;
		ck_assert_int_eq(mc_stack_get(ib, &f), 2);
		ck_assert_uint_eq(f[0], base + 1);
	}
	uintptr_t zero[1] = { 0 }, one[1] = { kinv };
	uint32_t iz = mc_stack_intern(zero, 1), io = mc_stack_intern(one, 1);
	ck_assert_uint_ne(iz, 0);
	ck_assert_uint_ne(io, 0);
	ck_assert_uint_ne(iz, io);
	ck_assert_uint_eq(mc_stack_intern(zero, 1), iz);
	ck_assert_uint_eq(mc_stack_intern(one, 1), io);
}
END_TEST

/* An arena segment's unused end may be one unit, shorter than an
 * entry's head: walking the stacks (mc_depot_each, a rehash) must not
 * read a depth there, past the segment's end.  The arena's segment 0
 * filled with stacks of one depth, for every depth (the gap is one unit
 * for some of them), each in a child, with segment 0 moved before a page
 * nothing may read (where it lies, the next mapping is most often
 * readable, and then a walk through the arena read a depth of 0 there,
 * or any other number).  Every stack is seen once. */
static void count_site(uint32_t id, struct mc_site *site, void *arg)
{
	(void)id;
	(void)site;
	++*(int *)arg;
}

START_TEST(depot_walk_skips_segment_ends)
{
	for (int depth = 1; depth <= MC_MAX_DEPTH; depth++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			uintptr_t f[MC_MAX_DEPTH] = { 0 };
			int n = 0;
			for (uintptr_t i = 1;; i++) {
				f[0] = i;
				uint32_t id = mc_stack_intern(f, depth);
				if (!id)
					_exit(2);
				n++;
				size_t size = MC_DEPOT_UNIT << MC_DEPOT_SEG0_BITS;
				if (i == 1) { /* segment 0 moved before a page nothing reads */
					char *to = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE,
							MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
					if (to == MAP_FAILED || mprotect(to + size, 4096, PROT_NONE))
						_exit(3);
					memcpy(to, mc_depot_segs[0], size); /* units, not addresses */
					mc_depot_segs[0] = to;
				}
				const uintptr_t *fr;
				if (mc_stack_get(id, &fr) != depth)
					_exit(4);
				if ((uintptr_t)fr - (uintptr_t)mc_depot_segs[0] >= size)
					break; /* the first in segment 1 */
			}
			int seen = 0;
			mc_depot_each(count_site, &seen);
			_exit(seen == n ? 0 : 1);
		}
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "depth %d: status %#x", depth, status);
	}
}
END_TEST

/* Built with frame pointers (tests.mk), so the walk sees both frames. */
static __attribute__((noinline)) uint32_t inner(void)
{
	return mc_stack_capture(__builtin_frame_address(0));
}

static __attribute__((noinline)) uint32_t outer(uintptr_t *ret)
{
	*ret = (uintptr_t)__builtin_return_address(0);
	return inner() + 0 * (uint32_t)__LINE__;
}

START_TEST(fp_walk_starts_at_the_call_site)
{
	mc_opt.stack_depth = 16;
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_stacks_init();
	uintptr_t outer_ret;
	uint32_t id = outer(&outer_ret);
	const uintptr_t *f;
	int n = mc_stack_get(id, &f);
	ck_assert_int_ge(n, 2);
	/* frame 0 is in outer (inner's return address), frame 1 is where
	 * outer returns to, in this test */
	ck_assert_uint_eq(f[1], outer_ret);
	/* The walk's running hash is the depot's hash of the same frames:
	 * interning them finds the stack the capture interned, and
	 * captures from one place (the thread's cache) give one id. */
	ck_assert_uint_eq(mc_stack_intern(f, n), id);
	uint32_t again[2];
	for (volatile int i = 0; i < 2; i++) /* volatile: one call site, not unrolled */
		again[i] = outer(&outer_ret);
	ck_assert_uint_eq(again[0], again[1]);
	ck_assert_uint_eq(mc_stack_intern(f, n), id);
	mc_opt.stack_depth = 1;
	ck_assert_int_eq(mc_stack_get(inner(), &f), 1);
	mc_opt.stack_depth = 0;
	ck_assert_uint_eq(inner(), 0);
}
END_TEST

/* A fake frame chain in buf, 4 words a frame: frame i links to frame
 * i + 1 and returns to 0x10000 + i; the last links to 0. */
static void *chain(uintptr_t *buf, int frames)
{
	for (int i = 0; i < frames; i++) {
		buf[4 * i] = i + 1 < frames ? (uintptr_t)&buf[4 * (i + 1)] : 0;
		buf[4 * i + 1] = 0x10000 + (uintptr_t)i;
	}
	return buf;
}

/* Capture from fp: the depth, checking the frames against chain()'s and
 * the id against the depot's for the same frames. */
static int capture_depth(void *fp)
{
	uint32_t id = mc_stack_capture(fp);
	const uintptr_t *f;
	int n = mc_stack_get(id, &f);
	for (int i = 0; i < n; i++)
		ck_assert_uint_eq(f[i], 0x10000 + (uintptr_t)i);
	ck_assert_uint_eq(mc_stack_intern(f, n), id);
	return n;
}

START_TEST(fp_walk_depth_and_stops)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	uintptr_t buf[4 * 24];
	/* every depth, odd and even, up to and past the chain's */
	for (int depth = 1; depth <= 22; depth++) {
		mc_opt.stack_depth = depth;
		ck_assert_int_eq(capture_depth(chain(buf, 20)), depth < 20 ? depth : 20);
		ck_assert_int_eq(capture_depth(chain(buf, 1)), 1);
		ck_assert_int_eq(capture_depth(chain(buf, 2)), depth < 2 ? depth : 2);
		ck_assert_int_eq(capture_depth(chain(buf, 3)), depth < 3 ? depth : 3);
	}
	/* the walk stops at frame k's link, for each way it can be bad,
	 * in each part of the walk (its first step, an odd one, a pair's) */
	pthread_attr_t attr;
	void *lo;
	size_t size;
	ck_assert_int_eq(pthread_getattr_np(pthread_self(), &attr), 0);
	ck_assert_int_eq(pthread_attr_getstack(&attr, &lo, &size), 0);
	pthread_attr_destroy(&attr);
	for (int depth = 15; depth <= 16; depth++) {
		mc_opt.stack_depth = depth;
		for (int k = 0; k < 5; k++) {
			void *fp = chain(buf, 8);
			uintptr_t *link = &buf[4 * k], good = *link;
			*link += 1; /* unaligned */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = (uintptr_t)&buf[4 * k] - 32; /* down */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = (uintptr_t)&buf[4 * k]; /* itself */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = (uintptr_t)lo + size - 8; /* off the stack's top: never read */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			*link = good;
			buf[4 * k + 5] = 4095; /* not a return address */
			ck_assert_int_eq(capture_depth(fp), k + 1);
			buf[4 * k + 5] = 0x10000 + (uintptr_t)k + 1;
			ck_assert_int_eq(capture_depth(fp), 8);
		}
	}
	mc_opt.stack_depth = 16;
	/* a first frame off the stack (here, in .bss) links nowhere */
	static uintptr_t off_stack[4 * 4];
	ck_assert_int_eq(capture_depth(chain(off_stack, 4)), 1);
}
END_TEST

/* Many stacks, sharing the thread's cache slots, captured in turns:
 * each capture still gives its own stack's id. */
START_TEST(fp_cache_conflicts)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	enum { N = 100 };
	uintptr_t buf[4 * 4];
	uint32_t ids[N];
	chain(buf, 4);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i += 1 + round) {
			buf[5] = 0x20000 + (uintptr_t)i; /* frame 1: one stack per i */
			uint32_t id = mc_stack_capture(buf);
			const uintptr_t *f;
			ck_assert_int_eq(mc_stack_get(id, &f), 4);
			ck_assert_uint_eq(f[1], 0x20000 + (uintptr_t)i);
			if (round == 0)
				ids[i] = id;
			else
				ck_assert_uint_eq(id, ids[i]);
			/* and the one before, again: alternating pairs */
			if (i > 0) {
				buf[5] = 0x20000 + (uintptr_t)(i - 1);
				ck_assert_uint_eq(mc_stack_capture(buf), ids[i - 1]);
			}
		}
	}
}
END_TEST

/* Stacks more than the thread's cache holds, captured in orders that
 * change from round to round, so that each stack is followed by others
 * each time (the depot's then: the stack looked up after this one last
 * time, three of them kept): every capture still gives its own stack's
 * frames and id.  In four threads at once too, each in its own order,
 * all writing the same stacks' thens. */
enum { THEN_N = 300 };
static uint32_t then_ids[THEN_N];

static void *then_rounds(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	uintptr_t buf[4 * 4]; /* on this thread's stack: the walk stays on it */
	chain(buf, 4);
	for (int round = 0; round < 12; round++) {
		/* in order, backwards, by strides, and at random */
		unsigned stride = round < 2 ? 1 : (unsigned)(2 * round + 1);
		for (unsigned k = 0; k < THEN_N; k++) {
			unsigned i = round == 1 ? THEN_N - 1 - k
				     : round >= 8 ? (unsigned)rand_r(&seed) % THEN_N
				     : k * stride % THEN_N;
			buf[5] = 0x20000 + (uintptr_t)i;
			buf[9] = 0x30000 + (uintptr_t)(i % 7); /* stacks alike but one frame */
			uint32_t id = mc_stack_capture(buf);
			const uintptr_t *f;
			if (mc_stack_get(id, &f) != 4 || f[1] != 0x20000 + (uintptr_t)i ||
			    f[2] != 0x30000 + (uintptr_t)(i % 7) ||
			    (then_ids[i] && id != then_ids[i]))
				return (void *)1;
			then_ids[i] = id;
		}
	}
	return NULL;
}

START_TEST(fp_then_follows_any_order)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	ck_assert_ptr_null(then_rounds((void *)1));
	pthread_t t[4];
	for (uintptr_t k = 0; k < 4; k++)
		ck_assert_int_eq(pthread_create(&t[k], NULL, then_rounds, (void *)(k + 2)), 0);
	for (int k = 0; k < 4; k++) {
		void *r;
		ck_assert_int_eq(pthread_join(t[k], &r), 0);
		ck_assert_ptr_null(r);
	}
}
END_TEST

/* Call paths alike in every frame pointer, and in every return address
 * but one, deep down (frame k, 1..15), or past the depth (16..19): a
 * path that differs within the depth is its own stack, whatever its
 * neighbours' frames, and one that differs past it is the common
 * stack.  Each is captured twice, with 40 other stacks between (frame 2
 * differs; their frames here, every third round, else elsewhere on the
 * stack), which push it out of the thread's cache (32 stacks): the
 * captures go through the depot's thens and index too, round after
 * round, in orders that change.  Any cache that took frames alike near
 * the call site for the same stack (a walk cut short, a hash of fewer
 * frames) gives a wrong stack here. */
static uint32_t capture_variant(uintptr_t *buf, int k)
{
	chain(buf, 20);
	if (k)
		buf[4 * k + 1] = 0x50000 + (uintptr_t)k;
	uint32_t id = mc_stack_capture(buf);
	const uintptr_t *f;
	ck_assert_int_eq(mc_stack_get(id, &f), 16);
	for (int i = 0; i < 16; i++)
		ck_assert_uint_eq(f[i], i && i == k ? 0x50000 + (uintptr_t)k : 0x10000 + (uintptr_t)i);
	ck_assert_uint_eq(mc_stack_intern(f, 16), id);
	return id;
}

START_TEST(fp_paths_alike_but_deep)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	enum { FRAMES = 20, OTHERS = 40 };
	uintptr_t buf[4 * FRAMES], elsewhere[4 * FRAMES];
	uint32_t ids[FRAMES];
	for (int round = 0; round < 6; round++) {
		for (int j = 0; j < FRAMES; j++) {
			int k = round & 1 ? FRAMES - 1 - j : j; /* k 0: the common path */
			uint32_t id = capture_variant(buf, k);
			if (round == 0)
				ids[k] = id;
			else
				ck_assert_uint_eq(id, ids[k]);
			uintptr_t *at = round % 3 == 2 ? buf : elsewhere;
			for (int o = 0; o < OTHERS; o++) { /* frame 2 differs */
				chain(at, FRAMES);
				at[9] = 0x60000 + (uintptr_t)(o * (round + 1) % OTHERS);
				uint32_t oid = mc_stack_capture(at);
				const uintptr_t *f;
				ck_assert_int_eq(mc_stack_get(oid, &f), 16);
				ck_assert_uint_eq(f[2], at[9]);
				ck_assert_uint_eq(f[15], 0x1000f);
			}
			ck_assert_uint_eq(capture_variant(buf, k), ids[k]);
		}
	}
	for (int k = 1; k < FRAMES; k++)
		for (int i = 0; i < k; i++)
			if (k < 16 && i < 16)
				ck_assert_uint_ne(ids[k], ids[i]);
			else if (k >= 16 && (i == 0 || i >= 16))
				ck_assert_uint_eq(ids[k], ids[i]);
}
END_TEST

/* ---- functions without frame pointers --------------------------------
 * nofp_* are built without a frame pointer (whatever the file's flags),
 * and call f with rbp holding what they say: a frame-pointer walk from f
 * loses their callers, or follows rbp into nothing.  The capture must
 * find, as a debugger would, f's return address into nofp_*, then
 * nofp_*'s into caller(), then caller()'s into the test. */
static uintptr_t ret_into_nofp, ret_into_caller, ret_into_test;
static uint32_t captured;

static __attribute__((noinline)) void capture_here(void)
{
	ret_into_nofp = (uintptr_t)__builtin_return_address(0);
	captured = mc_stack_capture(__builtin_frame_address(0));
	__asm__ volatile("" ::: "memory");
}

/* rbp as garbage, saved and restored (CFI: rbp at CFA-16) */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void nofp_garbage(void (*f)(void))
{
	__asm__ volatile("mov $0x1234, %%rbp" ::: "rbp");
	f();
	__asm__ volatile("" ::: "memory");
}

/* rbp 0, saved and restored: not the outermost frame's mark here */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void nofp_zero(void (*f)(void))
{
	__asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
	f();
	__asm__ volatile("" ::: "memory");
}

/* rbp untouched: still the caller's frame, so a frame-pointer walk
 * would skip the caller's own return address without noticing */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void nofp_same(void (*f)(void))
{
	f();
	__asm__ volatile("" ::: "memory");
}

/* a large frame: CFA = rsp + 4 KiB and more */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void nofp_big(void (*f)(void))
{
	volatile char pad[4096];
	pad[0] = 1;
	__asm__ volatile("mov $0x1234, %%rbp" ::: "rbp");
	f();
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static __attribute__((noinline)) void caller(void (*nofp)(void (*)(void)))
{
	ret_into_test = (uintptr_t)__builtin_return_address(0);
	nofp(capture_here);
	ret_into_caller = 0;
	__asm__ volatile("" ::: "memory");
}

/* The return address in caller() after its call of nofp: the one after
 * the call instruction, found as the capture's frame 1 must be. */
static bool in_caller(uintptr_t pc)
{
	return pc > (uintptr_t)caller && pc < (uintptr_t)caller + 256;
}

START_TEST(cfi_walk_through_functions_without_frame_pointers)
{
	static void (*const nofp[])(void (*)(void)) = { nofp_garbage, nofp_zero, nofp_same,
							 nofp_big };
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	for (size_t k = 0; k < sizeof nofp / sizeof nofp[0]; k++) {
		uint32_t first = 0;
		for (int round = 0; round < 3; round++) { /* a miss, then the cache */
			caller(nofp[k]);
			const uintptr_t *f;
			int n = mc_stack_get(captured, &f);
			ck_assert_msg(n >= 4, "nofp %zu: %d frames", k, n);
			ck_assert_uint_eq(f[0], ret_into_nofp);
			ck_assert_msg(in_caller(f[1]), "nofp %zu: frame 1 %#lx is not in caller()",
				      k, (unsigned long)f[1]);
			ck_assert_uint_eq(f[2], ret_into_test);
			ck_assert_uint_eq(mc_stack_intern(f, n), captured);
			if (round == 0)
				first = captured;
			ck_assert_uint_eq(captured, first);
		}
	}
	/* the rules cfi.c reads for them */
	struct mc_cfi_rule r;
	caller(nofp_garbage);
	mc_cfi_rule(ret_into_nofp, &r);
	ck_assert_int_eq(r.kind, MC_CFI_SP);
	ck_assert_int_eq(r.cfa_off, 16);
	ck_assert_int_eq(r.rbp_off, -16);
	caller(nofp_same);
	mc_cfi_rule(ret_into_nofp, &r);
	ck_assert_int_eq(r.kind, MC_CFI_SP);
	ck_assert_int_eq(r.rbp_off, 0);
	caller(nofp_big);
	mc_cfi_rule(ret_into_nofp, &r);
	ck_assert_int_eq(r.kind, MC_CFI_SP);
	ck_assert_int_gt(r.cfa_off, 4096);
	mc_cfi_rule(ret_into_test, &r); /* this file keeps frame pointers */
	ck_assert_int_eq(r.kind, MC_CFI_FP);
	/* no CFI there: not code, or code no object covers */
	static int data;
	int *heap = malloc(sizeof *heap);
	mc_cfi_rule((uintptr_t)&data + 1, &r);
	ck_assert_int_eq(r.kind, MC_CFI_UNKNOWN);
	mc_cfi_rule((uintptr_t)heap + 1, &r);
	ck_assert_int_eq(r.kind, MC_CFI_UNKNOWN);
	mc_cfi_rule(0x10001, &r);
	ck_assert_int_eq(r.kind, MC_CFI_UNKNOWN);
	free(heap);
}
END_TEST

/* nofp_garbage called from a function without a frame pointer either:
 * the first frame's CFI step reaches one more CFI step */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void nofp_outer(void (*f)(void))
{
	__asm__ volatile("mov $0x4321, %%rbp" ::: "rbp");
	nofp_garbage(f);
	__asm__ volatile("" ::: "memory");
}

static uintptr_t ret_into_test2;

static __attribute__((noinline)) void caller2(void (*nofp)(void (*)(void)))
{
	ret_into_test2 = (uintptr_t)__builtin_return_address(0);
	nofp(capture_here);
	__asm__ volatile("" ::: "memory");
}

/* One function without a frame pointer called from two callers (strdup
 * from two call sites): walk_fp's one frame, the same for both, names
 * neither, so the second caller's new stack, and every repeat, takes the
 * exact walk from that frame (stacks.c: capture_leaf, capture_more
 * where its first step is not the common one).  Each caller's stack is
 * its own, whole, and the same id at each repeat. */
START_TEST(cfi_new_stacks_from_a_leaf_without_frame_pointer)
{
	static void (*const nofp[])(void (*)(void)) = { nofp_garbage, nofp_zero, nofp_big,
							 nofp_outer };
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	for (size_t k = 0; k < sizeof nofp / sizeof nofp[0]; k++) {
		uint32_t ids[2] = { 0, 0 };
		for (int round = 0; round < 4; round++) {
			for (int w = 0; w < 2; w++) {
				if (w)
					caller2(nofp[k]);
				else
					caller(nofp[k]);
				const uintptr_t *f;
				int n = mc_stack_get(captured, &f);
				int at = nofp[k] == nofp_outer ? 3 : 2; /* the test's frame */
				ck_assert_msg(n > at, "nofp %zu: %d frames", k, n);
				ck_assert_uint_eq(f[0], ret_into_nofp);
				uintptr_t fn = w ? (uintptr_t)caller2 : (uintptr_t)caller;
				ck_assert_msg(f[at - 1] > fn && f[at - 1] < fn + 256,
					      "nofp %zu caller %d: frame %d %#lx", k, w, at - 1,
					      (unsigned long)f[at - 1]);
				ck_assert_uint_eq(f[at], w ? ret_into_test2 : ret_into_test);
				if (at == 3)
					ck_assert_msg(f[1] > (uintptr_t)nofp_outer &&
						      f[1] < (uintptr_t)nofp_outer + 64,
						      "frame 1 %#lx is not in nofp_outer",
						      (unsigned long)f[1]);
				ck_assert_uint_eq(mc_stack_intern(f, n), captured);
				if (round == 0)
					ids[w] = captured;
				ck_assert_uint_eq(captured, ids[w]);
			}
			ck_assert_uint_ne(ids[0], ids[1]);
		}
	}
}
END_TEST

/* nofp_garbage's kind, whose saved rbp (the caller's frame record, at
 * CFA-16) reads as swap_to while it calls f, where set: the frame-pointer
 * step from its caller goes there. */
static uintptr_t *volatile swap_to, *volatile swap_slot;
static volatile uintptr_t swap_saved;

/* (its slot and the word it held in statics: no register saved but rbp,
 * at CFA-16, as the test checks) */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void nofp_swap(void (*f)(void))
{
	__asm__ volatile("mov $0x1234, %%rbp" ::: "rbp");
	swap_slot = (uintptr_t *)((char *)__builtin_dwarf_cfa() - 16);
	swap_saved = *swap_slot;
	if (swap_to)
		*swap_slot = (uintptr_t)swap_to;
	f();
	*swap_slot = swap_saved;
	__asm__ volatile("" ::: "memory");
}

/* A kept walk is taken only where the words it read hold what they held:
 * here the same frames, fp and return addresses, but the caller's rbp
 * that nofp_swap saved (which the step from caller() follows) names
 * another frame record, so the stack ends a frame sooner. */
START_TEST(cfi_kept_walk_follows_a_changed_rbp)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_opt.track = true; /* (the kept walks' pool) */
	mc_stacks_init();
	/* a frame record whose return address is the test's (set by the
	 * first round), its link 0: the walk ends there, a frame short of
	 * the real one, reading nothing past it */
	uintptr_t fake[2] __attribute__((aligned(16)));
	fake[0] = 0;
	uint32_t first = 0;
	for (int round = 0; round < 8; round++) {
		fake[1] = ret_into_test;
		swap_to = round >= 4 && (round & 1) ? fake : NULL;
		__asm__ volatile("" : : "r"(fake) : "memory");
		caller(nofp_swap);
		const uintptr_t *f;
		int n = mc_stack_get(captured, &f);
		ck_assert_msg(n >= 3, "round %d: %d frames", round, n);
		ck_assert_uint_eq(f[0], ret_into_nofp);
		ck_assert_msg(in_caller(f[1]), "round %d: frame 1 %#lx", round, (unsigned long)f[1]);
		ck_assert_uint_eq(f[2], ret_into_test);
		if (swap_to) {
			ck_assert_int_eq(n, 3);
			ck_assert_uint_ne(captured, first);
		} else {
			ck_assert_int_gt(n, 3);
			if (!first)
				first = captured;
			ck_assert_uint_eq(captured, first);
		}
	}
	swap_to = NULL;
	ck_assert_int_gt(mc_stack_kept_walks(), 0);
	struct mc_cfi_rule r;
	mc_cfi_rule(ret_into_nofp, &r);
	ck_assert_int_eq(r.kind, MC_CFI_SP);
	ck_assert_int_eq(r.rbp_off, -16);
}
END_TEST

/* Resident pages of memcheck's own mappings, by mincore, each page once
 * (mc_own_each names a carved mapping in its reservation too). */
struct own_ranges {
	int n;
	uintptr_t lo[512], hi[512];
};

static void add_range(uintptr_t lo, uintptr_t hi, void *arg)
{
	struct own_ranges *r = arg;
	ck_assert_int_lt(r->n, 512);
	r->lo[r->n] = lo & ~(uintptr_t)4095;
	r->hi[r->n++] = (hi + 4095) & ~(uintptr_t)4095;
}

static long own_resident_pages(void)
{
	static struct own_ranges r;
	static unsigned char vec[1 << 16];
	r.n = 0;
	mc_own_each(add_range, &r);
	long n = 0;
	for (uintptr_t at = 0;;) { /* the lowest page at or past at in any range */
		uintptr_t lo = UINTPTR_MAX, hi = 0;
		for (int i = 0; i < r.n; i++)
			if (r.hi[i] > at && (r.lo[i] > at ? r.lo[i] : at) < lo) {
				lo = r.lo[i] > at ? r.lo[i] : at;
				hi = r.hi[i];
			}
		if (lo == UINTPTR_MAX)
			return n;
		for (int i = 0; i < r.n; i++) /* ranges that overlap it, joined */
			if (r.lo[i] <= hi && r.hi[i] > hi)
				hi = r.hi[i], i = -1;
		if (hi - lo > sizeof vec * 4096)
			hi = lo + sizeof vec * 4096;
		ck_assert_int_eq(mincore((void *)lo, hi - lo, vec), 0);
		for (size_t i = 0; i < (hi - lo) / 4096; i++)
			n += vec[i] & 1;
		at = hi;
	}
}

/* A child that captures 16 frames deep, keeping walks where track (the
 * kept walks' pool): 0 there, its pid here. */
static pid_t fork_capturing(bool track)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		mc_opt.unwinder = MC_UNWIND_FP;
		mc_opt.stack_depth = 16;
		mc_opt.track = track;
		mc_stacks_init();
		swap_to = NULL;
	}
	return pid;
}

/* The pages of memcheck's own mappings that five captures of one stack
 * through a frameless function make resident after the first (the
 * second keeps its walk, with the pool: track), in a child: its exit
 * status. */
static int pages_after_first_capture(bool track)
{
	pid_t pid = fork_capturing(track);
	if (pid == 0) {
		uint32_t first = 0;
		long before = 0;
		for (int round = 0; round < 5; round++) { /* stored, kept, then found */
			if (round == 1)
				before = own_resident_pages();
			caller(nofp_swap);
			if (!first)
				first = captured;
			if (captured != first || mc_stack_kept_walks() != (track && round > 0))
				_exit(100);
		}
		long n = own_resident_pages() - before;
		_exit(n >= 0 && n < 100 ? (int)n : 101);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_lt(WEXITSTATUS(status), 100);
	return WEXITSTATUS(status);
}

/* A thread's kept walks are a block of 13,336 bytes (4 pages), of which
 * a short process writes the pages its few repeated stacks' pairs lie
 * on (placed in the order they come: kept_walks_dense): only those
 * pages are made resident, as each pair takes its first walk (the
 * whole block was populated when taken: 4 pages in every process with
 * one kept walk, 1 of them written in a libyaml parser run).  Counted against the same captures with no walk
 * kept (the other pages they touch, 0-2, vary with the addresses). */
START_TEST(cfi_kept_walk_makes_its_pair_resident_only)
{
	int with = pages_after_first_capture(true), without = pages_after_first_capture(false);
	ck_assert_msg(with - without >= 1 && with - without <= 2,
		      "one kept walk made %d pages resident (its pair's: 1 or 2; %d with it, %d "
		      "without)", with - without, with, without);
}
END_TEST

/* caller(nofp_swap) from d frames deeper: another frame, so another
 * kept walk's pair (chosen by the frame's address). */
static __attribute__((noinline)) void caller_at_depth(int d)
{
	volatile char pad[48];
	pad[0] = (char)d;
	if (d > 0)
		caller_at_depth(d - 1);
	else
		caller(nofp_swap);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

/* The pages memcheck's own mappings gain while captures through
 * nofp_swap from WALKS frames, each made three times, keep their walks
 * (track) or not, in a child; its exit status, 100 + the kept walks'
 * count where it is not WALKS. */
#define WALKS 4
static int pages_after_walks_from(bool track)
{
	pid_t pid = fork_capturing(track);
	if (pid == 0) {
		long before = 0;
		for (int d = 0; d < WALKS; d++)
			for (int round = 0; round < 3; round++) { /* stored, kept, found */
				if (d == 0 && round == 1)
					before = own_resident_pages();
				caller_at_depth(d);
			}
		if (mc_stack_kept_walks() != (track ? WALKS : 0))
			_exit(100 + mc_stack_kept_walks());
		long n = own_resident_pages() - before;
		_exit(n >= 0 && n < 100 ? (int)n : 99);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_msg(WEXITSTATUS(status) < 99, "track %d: exit %d (100 + kept walks)", track,
		      WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

/* A thread's kept walks take the pairs of its block in the order their
 * first walks come, whatever pair their frame hashes to: a few walks
 * write the block's first pages only.  Spread by hash over all 16 pairs
 * (13,312 bytes), a measured /bin/date's 7 pairs wrote all 4 pages,
 * bench/suite_test 0's 11 too (2 and 3 laid out densely).  Four walks
 * from four frames: one page (24 + 4 x 832 bytes), against the same
 * captures keeping none.  On pre57 a5ab802 2-4 pages (the pairs at
 * their hashes' places). */
START_TEST(kept_walks_dense)
{
	int with = pages_after_walks_from(true), without = pages_after_walks_from(false);
	ck_assert_msg(with - without == 1,
		      "%d kept walks made %d pages resident (1 laid out densely; %d with them, %d "
		      "without)", WALKS, with - without, with, without);
}
END_TEST

/* The walk ends where the CFI says the return address is undefined:
 * _start, the program's entry (and clone, a thread's). */
extern char _start[];

START_TEST(cfi_walk_ends_at_the_entry)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 64;
	mc_stacks_init();
	for (int round = 0; round < 2; round++) {
		caller(nofp_garbage);
		const uintptr_t *f;
		int n = mc_stack_get(captured, &f);
		ck_assert_int_lt(n, 64);
		ck_assert_msg(f[n - 1] > (uintptr_t)_start && f[n - 1] < (uintptr_t)_start + 64,
			      "the last frame %#lx is not in _start (%p)", (unsigned long)f[n - 1],
			      (void *)_start);
		struct mc_cfi_rule r;
		mc_cfi_rule(f[n - 1], &r);
		ck_assert_int_eq(r.kind, MC_CFI_END);
	}
}
END_TEST

/* The exact walk cut at any depth gives the whole walk's first frames:
 * every depth from 1 to past the whole stack's, through each kind of
 * function without a frame pointer, so that the cut falls on the
 * function without one, on the frames before and after it and in the CFI
 * steps to the entry; each depth twice (the walk, then the thread's
 * cache).  A process has one depth (MEMCHECK_STACK_DEPTH): the cache and
 * the depot's index take a stack walked once as the stack of the same
 * walk again, whatever the depth that cut it, so each depth runs in a
 * child of its own, the whole stack too, all from one call site. */
static uintptr_t *whole; /* shared: its depth, then its frames */

static __attribute__((noinline)) void capture_through(void (*nofp)(void (*)(void)))
{
	caller(nofp);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline, optimize("O0"))) int cut_at(void (*nofp)(void (*)(void)),
								 int depth)
{
	/* (O0: no copy of the loop's first round, with a call site of its
	 * own, as -O1 makes) */
	mc_opt.stack_depth = depth;
	for (int round = 0; round < 2; round++) {
		capture_through(nofp);
		const uintptr_t *f;
		int got = mc_stack_get(captured, &f);
		if (depth == MC_MAX_DEPTH) {
			if (got < 4 || got >= MC_MAX_DEPTH) /* it reaches the entry */
				return 3;
			whole[0] = (uintptr_t)got;
			memcpy(whole + 1, f, sizeof *f * (size_t)got);
		} else {
			int want = depth < (int)whole[0] ? depth : (int)whole[0];
			if (got != want || memcmp(f, whole + 1, sizeof *f * (size_t)want) != 0)
				return 1;
		}
	}
	return 0;
}

static int cut_in_child(void (*nofp)(void (*)(void)), int depth)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(cut_at(nofp, depth));
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The whole stack (depth 0 here), then each depth, from one call site */
static __attribute__((noinline, optimize("O0"))) void cut_all(void (*nofp)(void (*)(void)),
								  size_t k)
{
	for (int depth = 0; depth == 0 || depth <= (int)whole[0] + 1; depth++)
		ck_assert_msg(cut_in_child(nofp, depth ? depth : MC_MAX_DEPTH) == 0,
			      "nofp %zu, depth %d of %d", k, depth, (int)whole[0]);
}

START_TEST(cfi_walk_cut_at_every_depth)
{
	static void (*const nofp[])(void (*)(void)) = { nofp_garbage, nofp_zero, nofp_same,
							 nofp_big };
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_stacks_init();
	whole = mmap(NULL, sizeof *whole * (MC_MAX_DEPTH + 1), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(whole, MAP_FAILED);
	for (size_t k = 0; k < sizeof nofp / sizeof nofp[0]; k++) {
		whole[0] = 0;
		cut_all(nofp[k], k);
		ck_assert_int_ge(whole[0], 4);
	}
	munmap(whole, sizeof *whole * (MC_MAX_DEPTH + 1));
}
END_TEST

/* cfi.c on a table made here: an .eh_frame_hdr, a CIE and an FDE whose
 * reads take every width cfi.c reads (1, 2, 4 and 8 bytes, a ULEB128 of
 * two bytes), each row asked for at a return address inside it. */
START_TEST(cfi_rule_from_a_made_table)
{
	static uint8_t t[128] __attribute__((aligned(8)));
	memset(t, 0, sizeof t);
	uintptr_t hdr = (uintptr_t)t, start = hdr + 0x1000; /* the function: not read */
	/* .eh_frame_hdr: version, eh_frame_ptr pcrel sdata4, count udata4,
	 * table datarel sdata4; one entry, the FDE at 64 */
	static const uint8_t head[] = { 1, 0x1b, 0x03, 0x3b, 28, 0, 0, 0, 1, 0, 0, 0,
					0x00, 0x10, 0, 0, 64, 0, 0, 0 };
	memcpy(t, head, sizeof head);
	/* CIE at 32: "zR", code 1, data -8, RA 16, FDE pointers udata8;
	 * CFA rsp + 8, RA at CFA - 8 */
	static const uint8_t cie[] = { 18, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1,
				       0x04, 0x0c, 7, 8, 0x90, 1 };
	memcpy(t + 32, cie, sizeof cie);
	/* FDE at 64, its CIE 36 bytes before its pointer's field:
	 * advance_loc2 256, def_cfa_offset 200 (ULEB128 of two bytes),
	 * advance_loc4 65536, def_cfa_offset 16, rbp saved at CFA - 16 */
	static const uint8_t fde[] = { 36, 0, 0, 0, 36, 0, 0, 0 };
	memcpy(t + 64, fde, sizeof fde);
	uint64_t begin = start, range = 0x20000;
	memcpy(t + 72, &begin, 8);
	memcpy(t + 80, &range, 8);
	static const uint8_t insns[] = { 0, 0x03, 0x00, 0x01, 0x0e, 0xc8, 0x01, 0x04, 0x00, 0x00,
					 0x01, 0x00, 0x0e, 0x10, 0x86, 0x02 };
	memcpy(t + 88, insns, sizeof insns); /* (0: no augmentation data) */
	static const struct {
		uintptr_t pc;
		int kind;
		int32_t cfa_off, rbp_off;
	} want[] = {
		{ 10, MC_CFI_SP, 8, 0 },
		{ 255, MC_CFI_SP, 8, 0 },
		{ 256, MC_CFI_SP, 200, 0 },
		{ 300, MC_CFI_SP, 200, 0 },
		{ 256 + 65535, MC_CFI_SP, 200, 0 },
		{ 256 + 65536 + 5, MC_CFI_SP, 16, -16 },
		{ 0x1ffff, MC_CFI_SP, 16, -16 },
		{ 0x20000, MC_CFI_UNKNOWN, 0, 0 }, /* past the FDE's range */
		{ (uintptr_t)-1, MC_CFI_UNKNOWN, 0, 0 }, /* before the table's first */
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct mc_cfi_rule r;
		mc_cfi_rule_in(start + want[i].pc + 1, t, hdr, hdr + sizeof t, &r);
		ck_assert_msg(r.kind == want[i].kind && r.cfa_off == want[i].cfa_off &&
				      r.rbp_off == want[i].rbp_off,
			      "pc start+%#lx: kind %d cfa %d rbp %d", (unsigned long)want[i].pc,
			      r.kind, r.cfa_off, r.rbp_off);
	}
	/* another CIE at the same address (code loaded where dlclose'd code
	 * was): its rule, not the one cfi.c kept for the bytes there before */
	struct mc_cfi_rule r;
	t[32 + 19] = 24; /* def_cfa rsp + 24 */
	mc_cfi_rule_in(start + 10 + 1, t, hdr, hdr + sizeof t, &r);
	ck_assert_int_eq(r.kind, MC_CFI_SP);
	ck_assert_int_eq(r.cfa_off, 24);
	t[32 + 19] = 8;
	mc_cfi_rule_in(start + 10 + 1, t, hdr, hdr + sizeof t, &r);
	ck_assert_int_eq(r.cfa_off, 8);
	/* a table cut short of the FDE's last instructions: the rows before
	 * them still read, none past the end */
	mc_cfi_rule_in(start + 300 + 1, t, hdr, hdr + 93, &r);
	ck_assert_int_eq(r.kind, MC_CFI_UNKNOWN); /* the FDE's length passes the end */
}
END_TEST

/* A signal frame's FDE in a made table, as the C library writes
 * __restore_rt's (an "zRS" CIE; the CFA loaded from rsp + 160, rbp and
 * rip saved at rsp + 120 and rsp + 168): MC_CFI_SIGNAL, cfa_off 160,
 * rbp_off 120.  Changed in one place each, no rule: the CIE without
 * 'S', rip not right after the loaded rsp, the CFA's expression with
 * another operation after the load, rbp's rule missing, and an
 * expression cut short by the table's end. */
static void signal_table(uint8_t *t, size_t size, bool s_aug, int rip_off, bool extra_op,
			 bool rbp_rule)
{
	memset(t, 0, size);
	/* .eh_frame_hdr as above: one entry, the function at 0x1000, the FDE at 64 */
	static const uint8_t head[] = { 1, 0x1b, 0x03, 0x3b, 28, 0, 0, 0, 1, 0, 0, 0,
					0x00, 0x10, 0, 0, 64, 0, 0, 0 };
	memcpy(t, head, sizeof head);
	/* CIE at 32: "zRS" (or "zR"), code 1, data -8, RA 16, udata8; CFA
	 * rsp + 8; its length 18 either way (a nop after "zR"'s) */
	uint8_t cie[] = { 18, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 'S', 0, 1, 0x78, 16, 1, 0x04,
			  0x0c, 7, 8, 0 };
	if (!s_aug)
		memmove(cie + 11, cie + 12, sizeof cie - 12);
	memcpy(t + 32, cie, sizeof cie);
	uint8_t ins[32];
	size_t n = 0;
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 160, DW_OP_deref (and a
	 * DW_OP_plus_uconst 8 where extra_op) */
	ins[n++] = 0x0f;
	ins[n++] = extra_op ? 6 : 4;
	ins[n++] = 0x77, ins[n++] = 0xa0, ins[n++] = 0x01, ins[n++] = 0x06;
	if (extra_op)
		ins[n++] = 0x23, ins[n++] = 8;
	if (rbp_rule) /* DW_CFA_expression r6: DW_OP_breg7 120 */
		ins[n++] = 0x10, ins[n++] = 6, ins[n++] = 3, ins[n++] = 0x77, ins[n++] = 0xf8,
		ins[n++] = 0x00;
	/* DW_CFA_expression r16: DW_OP_breg7 rip_off (two bytes of SLEB128) */
	ins[n++] = 0x10, ins[n++] = 16, ins[n++] = 3, ins[n++] = 0x77;
	ins[n++] = (uint8_t)(0x80 | (rip_off & 0x7f)), ins[n++] = (uint8_t)(rip_off >> 7);
	uint32_t len = (uint32_t)(4 + 16 + 1 + n);
	memcpy(t + 64, &len, 4);
	uint32_t cie_ptr = 64 + 4 - 32;
	memcpy(t + 68, &cie_ptr, 4);
	uint64_t begin = (uintptr_t)t + 0x1000, range = 16;
	memcpy(t + 72, &begin, 8);
	memcpy(t + 80, &range, 8);
	memcpy(t + 89, ins, n); /* (t[88] 0: no augmentation data) */
}

START_TEST(cfi_signal_rule_from_a_made_table)
{
	static uint8_t t[256];
	uintptr_t hdr = (uintptr_t)t, ret = hdr + 0x1000 + 1; /* __restore_rt, after its nop */
	static const struct {
		bool s_aug;
		int rip_off;
		bool extra_op, rbp_rule;
		int kind;
	} rows[] = {
		{ true, 168, false, true, MC_CFI_SIGNAL },
		{ false, 168, false, true, MC_CFI_UNKNOWN },
		{ true, 176, false, true, MC_CFI_UNKNOWN },
		{ true, 168, true, true, MC_CFI_UNKNOWN },
		{ true, 168, false, false, MC_CFI_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		signal_table(t, sizeof t, rows[i].s_aug, rows[i].rip_off, rows[i].extra_op,
			     rows[i].rbp_rule);
		struct mc_cfi_rule r, g;
		mc_cfi_rule_in(ret, t, hdr, hdr + sizeof t, &r);
		ck_assert_msg(r.kind == rows[i].kind, "row %zu: kind %d", i, r.kind);
		if (r.kind == MC_CFI_SIGNAL)
			ck_assert(r.cfa_off == 160 && r.rbp_off == 120);
		mc_cfi_rule_in_general(ret, t, hdr, hdr + sizeof t, &g);
		ck_assert(g.kind == r.kind && g.cfa_off == r.cfa_off && g.rbp_off == r.rbp_off);
	}
	/* the table cut inside the CFA's expression */
	signal_table(t, sizeof t, true, 168, false, true);
	struct mc_cfi_rule r;
	mc_cfi_rule_in(ret, t, hdr, hdr + 64 + 4 + 16 + 1 + 3, &r);
	ck_assert_int_eq(r.kind, MC_CFI_UNKNOWN);
}
END_TEST

/* The C library's call-frame table, where the program maps it. */
struct libc_cfi {
	const uint8_t *hdr;
	uintptr_t lo, hi;
	const struct link_map *lm;
};

static struct libc_cfi libc_cfi(void)
{
	struct dl_find_object fo;
	ck_assert_int_eq(_dl_find_object((void *)&strdup, &fo), 0);
	struct libc_cfi t = { fo.dlfo_eh_frame, (uintptr_t)fo.dlfo_map_start,
			      (uintptr_t)fo.dlfo_map_end, fo.dlfo_link_map };
	ck_assert_ptr_nonnull(t.hdr);
	/* version 1, eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
	ck_assert(t.hdr[0] == 1 && t.hdr[1] == 0x1b && t.hdr[2] == 0x03 && t.hdr[3] == 0x3b);
	return t;
}

/* fn(t, return address, arg) for a return address every step bytes of
 * each function the table covers (its first 64 KiB); how many. */
static unsigned each_libc_return(const struct libc_cfi *t, unsigned step,
				 void (*fn)(const struct libc_cfi *t, uintptr_t ret, void *arg),
				 void *arg)
{
	uint32_t n;
	memcpy(&n, t->hdr + 8, 4);
	ck_assert_uint_gt(n, 1000);
	const uint8_t *table = t->hdr + 12;
	unsigned count = 0;
	for (uint32_t i = 0; i + 1 < n; i++) {
		int32_t a, b;
		memcpy(&a, table + 8 * i, 4);
		memcpy(&b, table + 8 * (i + 1), 4);
		uintptr_t start = (uintptr_t)t->hdr + (uintptr_t)(intptr_t)a;
		uintptr_t end = (uintptr_t)t->hdr + (uintptr_t)(intptr_t)b;
		for (uintptr_t pc = start; pc < end && pc < start + 65536; pc += step, count++)
			fn(t, pc + 1, arg);
	}
	return count;
}

static void fast_is_general(const struct libc_cfi *t, uintptr_t ret, void *arg)
{
	unsigned *kinds = arg;
	struct mc_cfi_rule fast, general;
	mc_cfi_rule_in(ret, t->hdr, t->lo, t->hi, &fast);
	ck_assert_int_eq(mc_cfi_rule_in_general(ret, t->hdr, t->lo, t->hi, &general), 1);
	ck_assert_msg(fast.kind == general.kind && fast.cfa_off == general.cfa_off &&
			      fast.rbp_off == general.rbp_off,
		      "libc+%#lx: fast %d %d %d, general %d %d %d", (unsigned long)(ret - 1 - t->lo),
		      fast.kind, fast.cfa_off, fast.rbp_off, general.kind, general.cfa_off,
		      general.rbp_off);
	kinds[general.kind & 7]++;
}

/* cfi.c's fast interpreter of an FDE's instructions (run_fast) gives
 * run()'s answer, or hands over to it: every FDE of the C library (built
 * without frame pointers, its CFI as gcc and glibc's assembly write it),
 * a return address every 5 bytes of each function, read both ways
 * (281,001 of them here: 229,266 rules from rsp, 45,295 frame-pointer
 * frames, 6,431 unknown, 9 ends). */
START_TEST(cfi_fast_run_is_run)
{
	struct libc_cfi t = libc_cfi();
	unsigned kinds[8] = { 0 };
	unsigned compared = each_libc_return(&t, 5, fast_is_general, kinds);
	ck_assert_uint_gt(compared, 100000);
	ck_assert_uint_gt(kinds[MC_CFI_SP], 10000);
	ck_assert_msg(kinds[MC_CFI_FP] > 100 && kinds[MC_CFI_UNKNOWN] > 100,
		      "%u compared: %u unknown, %u sp, %u fp, %u bp, %u end", compared,
		      kinds[MC_CFI_UNKNOWN], kinds[MC_CFI_SP], kinds[MC_CFI_FP], kinds[MC_CFI_BP],
		      kinds[MC_CFI_END]);
}
END_TEST

static void viewed_is_mapped(const struct libc_cfi *t, uintptr_t ret, void *arg)
{
	unsigned *known = arg;
	struct mc_cfi_rule viewed, mapped;
	mc_cfi_rule(ret, &viewed);
	mc_cfi_rule_in(ret, t->hdr, t->lo, t->hi, &mapped);
	ck_assert_msg(viewed.kind == mapped.kind && viewed.cfa_off == mapped.cfa_off &&
			      viewed.rbp_off == mapped.rbp_off,
		      "libc+%#lx: viewed %d %d %d, mapped %d %d %d",
		      (unsigned long)(ret - 1 - t->lo), viewed.kind, viewed.cfa_off,
		      viewed.rbp_off, mapped.kind, mapped.cfa_off, mapped.rbp_off);
	*known += mapped.kind != MC_CFI_UNKNOWN;
}

/* Where the RSS figures are measured, mc_cfi_rule reads the tables in
 * memcheck's own view of the object's file (lib/ownread.c): at the
 * view's delta, with pc-relative values computed at the program's
 * addresses, every rule is the one read in the program's mapping (a
 * return address every 7 bytes of each of the C library's functions),
 * and the view is the one footprint.c counts as memcheck's. */
START_TEST(cfi_view_is_the_mapping)
{
	struct libc_cfi t = libc_cfi();
	mc_own_read_on();
	struct mc_own_view v;
	ck_assert(mc_own_view((uintptr_t)t.hdr, t.lo, t.lm, &v));
	ck_assert_uint_ne(v.delta, 0);
	unsigned known = 0;
	ck_assert_uint_gt(each_libc_return(&t, 7, viewed_is_mapped, &known), 100000);
	ck_assert_uint_gt(known, 100000);
	struct mc_own_span views[MC_OWN_VIEWS];
	ck_assert_int_eq(mc_own_views(views, MC_OWN_VIEWS), 1);
	ck_assert_uint_eq(views[0].lo, (v.lo + v.delta) & ~(uintptr_t)4095);
}
END_TEST

/* mc_cfi_rule keeps the rows that held the return addresses it read
 * last and answers another return address in one of them from there
 * (cfi.c's rows_memo): every answer is the one read from the tables
 * (mc_cfi_rule_in keeps nothing), each pc of each of the C library's
 * functions asked going up, then going down, so that each row's first
 * and last pcs and the pcs of the functions either side are asked after
 * another pc of the row; and no row outlives a dlclose of its object
 * (there, no object: no rule). */
static void kept_is_read(const struct libc_cfi *t, uintptr_t ret, unsigned *known)
{
	struct mc_cfi_rule kept, read;
	mc_cfi_rule(ret, &kept);
	mc_cfi_rule_in(ret, t->hdr, t->lo, t->hi, &read);
	ck_assert_msg(kept.kind == read.kind && kept.cfa_off == read.cfa_off &&
			      kept.rbp_off == read.rbp_off,
		      "libc+%#lx: kept %d %d %d, read %d %d %d", (unsigned long)(ret - 1 - t->lo),
		      kept.kind, kept.cfa_off, kept.rbp_off, read.kind, read.cfa_off, read.rbp_off);
	*known += read.kind != MC_CFI_UNKNOWN;
}

START_TEST(cfi_rows_kept_are_read)
{
	struct libc_cfi t = libc_cfi();
	uint32_t n;
	memcpy(&n, t.hdr + 8, 4);
	const uint8_t *table = t.hdr + 12;
	unsigned known = 0, asked = 0;
	for (int down = 0; down < 2; down++)
		for (uint32_t i = 0; i + 1 < n; i++) {
			uint32_t j = down ? n - 2 - i : i;
			int32_t a, b;
			memcpy(&a, table + 8 * j, 4);
			memcpy(&b, table + 8 * (j + 1), 4);
			uintptr_t start = (uintptr_t)t.hdr + (uintptr_t)(intptr_t)a;
			uintptr_t end = (uintptr_t)t.hdr + (uintptr_t)(intptr_t)b;
			if (end - start > 4096)
				end = start + 4096;
			for (uintptr_t k = 0; k < end - start; k++, asked++)
				kept_is_read(&t, (down ? end - 1 - k : start + k) + 1, &known);
		}
	ck_assert_uint_gt(asked, 500000);
	ck_assert_uint_gt(known, 400000);

	void *h = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "%s", dlerror());
	uintptr_t fn = (uintptr_t)dlsym(h, "__b64_ntop");
	ck_assert_uint_ne(fn, 0);
	struct mc_cfi_rule r;
	uintptr_t ret = 0;
	for (uintptr_t k = 8; k < 64 && !ret; k++) { /* a pc after the prologue's first row */
		mc_cfi_rule(fn + k + 1, &r);
		if (r.kind != MC_CFI_UNKNOWN)
			ret = fn + k + 1;
	}
	ck_assert_uint_ne(ret, 0);
	mc_cfi_rule(ret, &r); /* the row kept */
	ck_assert_int_ne(r.kind, MC_CFI_UNKNOWN);
	dlclose(h);
	ck_assert_ptr_null(dlopen("libresolv.so.2", RTLD_NOW | RTLD_NOLOAD)); /* unloaded */
	mc_cfi_rule(ret, &r);
	ck_assert_int_eq(r.kind, MC_CFI_UNKNOWN);
}
END_TEST

static void *thread_capture(void *arg)
{
	(void)arg;
	caller(nofp_same);
	return NULL;
}

/* In a thread, the same, and the entry is clone's. */
START_TEST(cfi_walk_in_a_thread)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 64;
	mc_stacks_init();
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, thread_capture, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	const uintptr_t *f;
	int n = mc_stack_get(captured, &f);
	ck_assert_int_ge(n, 5);
	ck_assert_msg(in_caller(f[1]), "frame 1 %#lx is not in caller()", (unsigned long)f[1]);
	struct mc_cfi_rule r;
	mc_cfi_rule(f[n - 1], &r);
	ck_assert_int_eq(r.kind, MC_CFI_END);
}
END_TEST

/* ---- through a signal frame ---------------------------------------------
 * A handler's capture: its return address is the C library's
 * __restore_rt (the restorer its sigaction shows), and the interrupted
 * registers lie in the kernel's ucontext above it (cfi.c's
 * MC_CFI_SIGNAL, stacks.c's capture_signal_step).  The frames after it
 * are the interrupted function's (the C library's raise, at its system
 * call), then raise's caller here, then this test: where the walk
 * followed the interrupted rbp instead, which the C library keeps
 * anything in, it went from the signal return to the test, raise's
 * caller lost.  On the program's alternate stack (SA_ONSTACK), as
 * valgrind's: the signal return and the interrupted function alone (the
 * walk stays on the stack it starts on; stacks.c's capture_elsewhere,
 * inside a handler: mc_self.own_frames, signals.c's trampoline's mark,
 * made here by the handler). */
static uint32_t sig_captured;
static bool sig_mark;

static __attribute__((noinline)) void on_sig(int sig)
{
	(void)sig;
	mc_self.own_frames += sig_mark;
	sig_captured = mc_stack_capture(__builtin_frame_address(0));
	mc_self.own_frames -= sig_mark;
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void raiser(void)
{
	raise(SIGUSR2);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void raiser_caller(void)
{
	raiser();
	__asm__ volatile("" ::: "memory");
}

static bool in_fn(uintptr_t pc, void (*fn)(void))
{
	return pc > (uintptr_t)fn && pc < (uintptr_t)fn + 64;
}

START_TEST(cfi_walk_through_a_signal_frame)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	static char alt[64 * 1024] __attribute__((aligned(16)));
	for (int onstack = 0; onstack < 2; onstack++) {
		struct sigaction sa, was;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sig;
		sa.sa_flags = onstack ? SA_ONSTACK : 0;
		stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt };
		ck_assert_int_eq(sigaltstack(onstack ? &ss : NULL, NULL), 0);
		ck_assert_int_eq(sigaction(SIGUSR2, &sa, NULL), 0);
		ck_assert_int_eq(sigaction(SIGUSR2, NULL, &was), 0);
		uintptr_t restorer = (uintptr_t)was.sa_restorer;
		struct mc_cfi_rule r;
		mc_cfi_rule(restorer, &r);
		ck_assert_int_eq(r.kind, MC_CFI_SIGNAL);
		ck_assert_int_eq(r.cfa_off, 160); /* uc_mcontext's rsp, rip after it */
		ck_assert_int_eq(r.rbp_off, 120);
		sig_mark = onstack;
		for (int round = 0; round < 3; round++) { /* a miss, then the cache */
			raiser_caller();
			const uintptr_t *f;
			int n = mc_stack_get(sig_captured, &f);
			ck_assert_msg(n >= 2 && f[0] == restorer, "onstack %d: %d frames, the first "
				      "%#lx, not the restorer %#lx", onstack, n,
				      n ? (unsigned long)f[0] : 0ul, (unsigned long)restorer);
			Dl_info di;
			ck_assert_msg(dladdr((void *)(f[1] - 1), &di) && di.dli_fname &&
					      strstr(di.dli_fname, "libc.so"),
				      "onstack %d: frame 1 %#lx is not the C library's", onstack,
				      (unsigned long)f[1]);
			if (onstack) {
				ck_assert_int_eq(n, 2);
				continue;
			}
			int at = 2;
			while (at < n && !in_fn(f[at], raiser))
				at++;
			ck_assert_msg(at < n && at < 5, "no frame in raiser() after the signal's "
				      "(%d frames)", n);
			ck_assert_msg(at + 1 < n && in_fn(f[at + 1], raiser_caller),
				      "frame %d, after raiser()'s, is not in its caller", at + 1);
		}
		ss.ss_flags = SS_DISABLE;
		ck_assert_int_eq(sigaltstack(&ss, NULL), 0);
	}
	sig_mark = false;
}
END_TEST

/* ---- kept exact walks ---------------------------------------------------
 * A stack through functions without frame pointers that the thread has
 * captured before is walked again by the rules it kept (stacks.c,
 * capture_memo_*): the stack must still be the one the full walk gives.
 * Every function below notes its return address on entry, so each
 * capture knows its first frames; rounds mix paths that share the call
 * site and the capture frame's address but not the callers (three
 * callers alike, from one frame of the test), recursion whose depth
 * changes from one capture to the next, a longjmp out of a deep capture
 * before the same addresses are used again, and two threads at once.
 * A path's first capture is a full walk (a kept walk is only found for
 * a stack stored before); every later one must give its id and frames. */
/* The fp unwinder, 16 frames, tracking: the process a thread keeps
 * walks in (the pool is made for tracking alone). */
static void kept_init(void)
{
	mc_opt.unwinder = MC_UNWIND_FP;
	mc_opt.stack_depth = 16;
	mc_opt.track = true;
	mc_stacks_init();
}

#define KEPT_DEPTH 6
#define KEPT_CALLERS 3
#define KEPT_ROUNDS 40
struct kept_run {
	uintptr_t calls[KEPT_DEPTH + 8]; /* return addresses, outermost first */
	int depth;
	uintptr_t want[KEPT_DEPTH + 8]; /* the capture's first frames */
	int nwant;
	uint32_t id;
	jmp_buf out;
	bool jump;
};
static __thread struct kept_run kr;

static __attribute__((noinline)) void kept_capture(void)
{
	kr.calls[kr.depth++] = (uintptr_t)__builtin_return_address(0);
	kr.id = mc_stack_capture(__builtin_frame_address(0));
	kr.nwant = kr.depth;
	for (int i = 0; i < kr.depth; i++)
		kr.want[i] = kr.calls[kr.depth - 1 - i];
	kr.depth--;
	if (kr.jump)
		longjmp(kr.out, 1);
	__asm__ volatile("" ::: "memory");
}

/* d levels without a frame pointer, rbp garbage in each */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void kept_rec(int d)
{
	kr.calls[kr.depth++] = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("mov $0x1234, %%rbp" ::: "rbp");
	if (d > 1)
		kept_rec(d - 1);
	else
		kept_capture();
	kr.depth--;
	__asm__ volatile("" ::: "memory");
}

#define KEPT_CALLER(name)                                                      \
	static __attribute__((noinline)) void name(int d)                      \
	{                                                                      \
		kr.calls[kr.depth++] = (uintptr_t)__builtin_return_address(0); \
		kept_rec(d);                                                   \
		kr.depth--;                                                    \
		__asm__ volatile("" ::: "memory");                             \
	}
KEPT_CALLER(kept_a)
KEPT_CALLER(kept_b)
KEPT_CALLER(kept_c)

/* f(d), or as much of it as runs before a longjmp out of the capture */
static __attribute__((noinline)) void kept_call(void (*f)(int), int d)
{
	if (setjmp(kr.out) == 0)
		f(d);
	__asm__ volatile("" ::: "memory");
}

/* The rounds: the number of captures that were not the full walk's
 * stack (first frames, or the id of the path's first capture). */
static int kept_rounds(void)
{
	static void (*const callers[KEPT_CALLERS])(int) = { kept_a, kept_b, kept_c };
	uint32_t first[KEPT_CALLERS][KEPT_DEPTH + 1] = { { 0 } };
	int bad = 0;
	uint64_t rng = 88172645463325252ull;
	for (int r = 0; r < KEPT_ROUNDS * KEPT_CALLERS * KEPT_DEPTH; r++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		int c = r < KEPT_CALLERS * KEPT_DEPTH ? r % KEPT_CALLERS : (int)(rng % KEPT_CALLERS);
		int d = r < KEPT_CALLERS * KEPT_DEPTH ? 1 + r / KEPT_CALLERS % KEPT_DEPTH
						      : 1 + (int)((rng >> 8) % KEPT_DEPTH);
		kr.depth = 0;
		kr.jump = (rng >> 16) % 5 == 0; /* out of the capture by longjmp */
		kept_call(callers[c], d);
		kr.jump = false;
		const uintptr_t *f;
		int n = mc_stack_get(kr.id, &f);
		bool ok = n >= kr.nwant + 1; /* and the test's frame */
		for (int i = 0; ok && i < kr.nwant; i++)
			ok = f[i] == kr.want[i];
		if (!first[c][d])
			first[c][d] = kr.id;
		bad += !ok || kr.id != first[c][d];
	}
	return bad;
}

static void *kept_thread(void *arg)
{
	*(int *)arg = kept_rounds();
	if (!mc_stack_kept_walks())
		*(int *)arg = -2; /* none kept: the rounds tested nothing */
	return NULL;
}

START_TEST(cfi_kept_walk_is_the_full_walk)
{
	kept_init();
	ck_assert_int_eq(kept_rounds(), 0);
	ck_assert_int_gt(mc_stack_kept_walks(), 0);
	int bad[2] = { -1, -1 };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, kept_thread, &bad[i]), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ck_assert_int_eq(bad[i], 0);
	}
	ck_assert_int_eq(kept_rounds(), 0); /* the main thread's kept walks, after */
}
END_TEST

/* The kept walks are a block a thread takes from a pool of 32 on its
 * first kept walk (not TLS: libmemcheck's PT_TLS must stay small), held
 * until its thread has ended: threads one after another, more than the
 * pool holds, each keep walks (a block an ended thread held, taken
 * again and cleared) and give the full walk's stacks. */
START_TEST(cfi_kept_walks_outlive_no_thread)
{
	kept_init();
	for (int i = 0; i < 40; i++) {
		int bad = -1;
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, kept_thread, &bad), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		ck_assert_msg(bad == 0, "thread %d: %d", i, bad);
	}
}
END_TEST

/* One indirect call site that calls, one time, a function without a
 * frame pointer that leaves rbp alone (strdup) and, another, a function
 * with one (a wrapper) that calls it.  The frame-pointer walk of the
 * second skips the wrapper's call of it (its return address is where
 * the function without one left it, which no frame record holds) and
 * finds the frames of the first's exact stack: the cache (stacks.c) must
 * not take the first's id for the second, whose stack has the wrapper's
 * frame. */
static uintptr_t ind_ret[4]; /* nofp's in cap, the wrapper's in nofp, the site's */
static uint32_t ind_id;

static __attribute__((noinline)) void ind_cap(void)
{
	ind_ret[0] = (uintptr_t)__builtin_return_address(0);
	ind_id = mc_stack_capture(__builtin_frame_address(0));
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline, optimize("omit-frame-pointer"))) void ind_nofp(void)
{
	ind_ret[1] = (uintptr_t)__builtin_return_address(0);
	ind_cap();
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void ind_wrapper(void)
{
	ind_ret[2] = (uintptr_t)__builtin_return_address(0);
	ind_nofp();
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void ind_site(void (*f)(void))
{
	f();
	__asm__ volatile("" ::: "memory");
}

/* In a thread: the stacks below the test's frames are start_thread's
 * (the thread's run), not the test framework's. */
static void *ind_rounds(void *arg)
{
	static void (*const fn[2])(void) = { ind_nofp, ind_wrapper };
	char *why = arg;
	uintptr_t site = 0;
	for (int round = 0; round < 6; round++) {
		/* one call of ind_site for both: the stacks differ below it
		 * only by the wrapper's frame */
		ind_site(fn[round & 1]);
		const uintptr_t *f;
		int n = mc_stack_get(ind_id, &f);
		if (n < 3 || f[0] != ind_ret[0]) {
			snprintf(why, 200, "round %d: %d frames", round, n);
			return why;
		}
		if (!(round & 1)) { /* the site calls it straight */
			site = ind_ret[1];
			if (f[1] != site) {
				snprintf(why, 200, "round %d: %#lx, not the site", round,
					 (unsigned long)f[1]);
				return why;
			}
		} else if (ind_ret[2] != site || f[1] != ind_ret[1] || f[2] != site) {
			snprintf(why, 200, "round %d: the wrapper's frame lost: %#lx %#lx, want %#lx %#lx",
				 round, (unsigned long)f[1], (unsigned long)f[2],
				 (unsigned long)ind_ret[1], (unsigned long)site);
			return why;
		}
	}
	return NULL;
}

START_TEST(fp_indirect_call_skipping_a_frame)
{
	kept_init();
	static char why[200];
	pthread_t t;
	void *bad;
	ck_assert_int_eq(pthread_create(&t, NULL, ind_rounds, why), 0);
	ck_assert_int_eq(pthread_join(t, &bad), 0);
	ck_assert_msg(bad == NULL, "%s", why);
}
END_TEST

/* A run that ends the walk at the thread's entry is taken as fixed
 * (its words not compared again) only within two frames: start_thread
 * then clone3, main's caller's.  Here the run is three: a thread's
 * routine without a frame pointer (rbp garbage, so the frame-pointer
 * walk stops at once) calls ind_nofp, without one either, from two call
 * sites at one stack pointer, and ind_nofp calls ind_cap, whose capture's
 * walk ends at its own frame: both sites give that frame the same
 * return address, sp and rbp, and only the run's word that holds the
 * routine's call site tells the two stacks apart.  Each capture must
 * have its own site's frame, round after round. */
static char fx_why[200];

/* The capture's stack: ind_nofp's call site, then the routine's site. */
static __attribute__((noinline)) bool fx_check(int round, int site, uintptr_t *was)
{
	const uintptr_t *f;
	int n = mc_stack_get(ind_id, &f);
	if (n < 3 || f[0] != ind_ret[0] || f[1] != ind_ret[1] || (round && was[site] != ind_ret[1]) ||
	    (site && ind_ret[1] == was[0])) {
		snprintf(fx_why, sizeof fx_why, "round %d site %d: %d frames, %#lx, want %#lx",
			 round, site, n, n > 1 ? (unsigned long)f[1] : 0ul,
			 (unsigned long)ind_ret[1]);
		return false;
	}
	was[site] = ind_ret[1];
	return true;
}

static __attribute__((noinline, optimize("omit-frame-pointer"))) void *fx_routine(void *arg)
{
	(void)arg;
	uintptr_t was[2] = { 0, 0 };
	__asm__ volatile("mov $0x1234, %%rbp" ::: "rbp");
	for (int round = 0; round < 6; round++) {
		ind_nofp();
		if (!fx_check(round, 0, was))
			return fx_why;
		ind_nofp();
		if (!fx_check(round, 1, was))
			return fx_why;
	}
	return NULL;
}

START_TEST(cfi_run_of_three_frames_compared)
{
	kept_init();
	pthread_t t;
	void *bad;
	ck_assert_int_eq(pthread_create(&t, NULL, fx_routine, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &bad), 0);
	ck_assert_msg(bad == NULL, "%s", (const char *)bad);
}
END_TEST

/* The depot's then (depot.c): the three walked stacks looked up last
 * after a stack, kept in its line beside the key it was marked under;
 * an entry is picked by its key's top half and taken only where the
 * candidate's own key is the whole key looked up.  Three stacks whose
 * keys share their top half, looked up after P in every order: each
 * lookup names its own stack, never another of the same top half, nor
 * any for a key no stack was marked under; and P's line keeps all
 * three, the one looked up last first, whatever the order: where the
 * then is read first (a large index: mc_depot_then_first).  Where the
 * index answers first (a small one) nothing reads the then, and the
 * lookups leave it as it was: no line of the depot's written for it
 * (wren57; until then the index put what it found there, which fails
 * the compare with the line before the round). */
START_TEST(depot_then_keeps_three)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	uint32_t id[4];
	for (int i = 0; i < 4; i++) {
		uintptr_t f[2] = { 0x7000 + (uintptr_t)i, 0x7100 };
		id[i] = mc_stack_intern(f, 2);
	}
	uint64_t top = 0x5eed5eedull << 32, kp = 0x1234567800000001ull;
	uint64_t k[4] = { top | 1, top | 2, top | 3, top | 4 }; /* k[3]: no stack's */
	atomic_store(&mc_depot_then_first, true); /* the then kept from here */
	mc_depot_set_walked(id[0], kp, 1, 0);
	for (int i = 0; i < 3; i++)
		mc_depot_set_walked(id[1 + i], k[i], 1, id[0]);
	ck_assert_uint_eq(mc_depot_id_of(id[0])->key_lo, (uint32_t)kp);
	const uint64_t *then = mc_depot_id_of(id[0])->then;
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq((uint32_t)then[i] & MC_STACK_ID_MAX, id[3 - i]);
	static const int order[][3] = { { 0, 1, 2 }, { 2, 1, 0 }, { 1, 1, 2 }, { 1, 0, 1 },
					{ 2, 0, 2 }, { 0, 2, 1 } };
	for (size_t r = 0; r < 2 * sizeof order / sizeof order[0]; r++) {
		bool then_first = r % 2 == 0;
		atomic_store(&mc_depot_then_first, then_first);
		uint64_t was[3] = { then[0], then[1], then[2] };
		for (int j = 0; j < 3; j++) {
			int i = order[r / 2][j], walked = 0;
			ck_assert_uint_eq(mc_depot_known(k[i], id[0], &walked), id[1 + i]);
			ck_assert_int_eq(walked, 1);
			if (then_first)
				ck_assert_uint_eq((uint32_t)then[0] & MC_STACK_ID_MAX, id[1 + i]);
			else
				for (int s = 0; s < 3; s++)
					ck_assert_uint_eq(then[s], was[s]);
			ck_assert_uint_eq(mc_depot_known(k[3], id[0], &walked), 0);
		}
		unsigned seen = 0;
		for (int s = 1; s <= 3; s++)
			for (int i = 0; i < 3; i++)
				if (((uint32_t)then[s - 1] & MC_STACK_ID_MAX) == id[1 + i])
					seen |= 1u << i;
		ck_assert_uint_eq(seen, 7);
	}
}
END_TEST

/* mc_depot_intern_walked: a new stack marked as it is stored, under
 * its own hash (WALKED_FP's case) or another key (a run's), and after a
 * stack P; the same call for a stack stored before marks it as
 * mc_depot_set_walked does; absent (the first lookup skipped) still
 * finds a stored stack by the locked one.  Each as the two calls did:
 * the id stored once, its mark, its key, P's then. */
/* Past a dense index (1,024 slots), once the process has forked, new
 * stacks' slots go to the young table and are merged into the index when it has taken 767 (depot.c's
 * young index): every stack is found by its frames and by its keys
 * before, during and after the merges, with its walked mark, marked
 * again where it lies (index or young table), and not stored twice.
 * 5,000 stacks: the index grows past its dense tables and six merges
 * run; each stack is stored with a key of its own besides (a second
 * slot), half of them marked by a second call after. */
static uint64_t young_hash(uintptr_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ull;
}

START_TEST(depot_young_index_finds_every_stack)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	/* a fork's prepare and parent handlers: the young page armed */
	mc_stacks_lock();
	mc_stacks_unlock();
	enum { N = 5000 };
	static uint32_t id[N];
	int walked;
	for (uintptr_t i = 0; i < N; i++) {
		uintptr_t f[2] = { 0x7300000 + i * 16, i };
		uint64_t h = young_hash(i), k = ~h;
		id[i] = i % 2 ? mc_depot_intern_walked(h, f, 2, true, k, 2, 0)
			      : mc_depot_intern(h, f, 2);
		ck_assert_uint_ne(id[i], 0);
		if (i % 2 == 0)
			mc_depot_set_walked(id[i], k, 1, 0);
		/* the stacks just stored (young), and one long before (merged) */
		for (uintptr_t j = i > 8 ? i - 8 : 0; j <= i + 1; j++) {
			uintptr_t at = j <= i ? j : i / 2;
			uintptr_t g[2] = { 0x7300000 + at * 16, at };
			ck_assert_uint_eq(mc_depot_intern(young_hash(at), g, 2), id[at]);
			ck_assert_uint_eq(mc_depot_known(~young_hash(at), 0, &walked), id[at]);
		}
	}
	for (uintptr_t i = 0; i < N; i++) {
		uintptr_t f[2] = { 0x7300000 + i * 16, i };
		uint64_t h = young_hash(i), k = ~h;
		ck_assert_uint_eq(mc_depot_intern(h, f, 2), id[i]);
		ck_assert_uint_eq(mc_depot_known(k, 0, &walked), id[i]);
		ck_assert_int_eq(walked, i % 2 ? 2 : 1);
		/* marked again, where it lies */
		mc_depot_set_walked(id[i], k, 3, 0);
		ck_assert_uint_eq(mc_depot_known(k, 0, &walked), id[i]);
		ck_assert_int_eq(walked, 3);
	}
	ck_assert_uint_eq(mc_depot_next_id(), id[N - 1] + 1);
}
END_TEST

START_TEST(depot_intern_walked_marks)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	uintptr_t p[2] = { 0x9000, 0x9100 }, a[3] = { 0x9200, 0x9300, 0x9400 },
		  b[2] = { 0x9500, 0x9600 }, c[2] = { 0x9700, 0x9800 };
	uint32_t ip = mc_stack_intern(p, 2);
	uint64_t ha = 0x3141592653589793ull, kb = 0x2718281828459045ull, hb = 0x1618033988749895ull;
	int walked = 0;
	atomic_store(&mc_depot_then_first, true); /* P's then kept: a large index's */
	ck_assert_uint_eq(mc_depot_known(ha, 0, &walked), 0);
	uint32_t ia = mc_depot_intern_walked(ha, a, 3, true, ha, 1, ip);
	ck_assert_uint_ne(ia, 0);
	ck_assert_uint_eq(mc_depot_known(ha, 0, &walked), ia);
	ck_assert_int_eq(walked, 1);
	ck_assert_uint_eq(mc_depot_id_of(ia)->key_lo, (uint32_t)ha);
	ck_assert_uint_eq((uint32_t)mc_depot_id_of(ip)->then[0] & MC_STACK_ID_MAX, ia);
	ck_assert_uint_eq(mc_depot_intern(ha, a, 3), ia);
	/* stored already: marked, not stored again, absent or not */
	ck_assert_uint_eq(mc_depot_intern_walked(ha, a, 3, true, ha, 1, 0), ia);
	ck_assert_uint_eq(mc_depot_intern_walked(ha, a, 3, false, ha, 1, 0), ia);
	/* another key: a slot of its own besides the stack's */
	uint32_t ib = mc_depot_intern_walked(hb, b, 2, false, kb, 2, ip);
	ck_assert_uint_eq(mc_depot_known(kb, 0, &walked), ib);
	ck_assert_int_eq(walked, 2);
	ck_assert_uint_eq(mc_depot_known(hb, 0, &walked), ib);
	ck_assert_int_eq(walked, 0);
	ck_assert_uint_eq(mc_depot_known(kb, ip, &walked), ib);
	ck_assert_uint_eq((uint32_t)mc_depot_id_of(ip)->then[0] & MC_STACK_ID_MAX, ib);
	/* a stack stored unmarked, then marked by the call */
	uint64_t hc = 0x5772156649015328ull;
	uint32_t ic = mc_depot_intern(hc, c, 2);
	ck_assert_uint_eq(mc_depot_known(hc, 0, &walked), ic);
	ck_assert_int_eq(walked, 0);
	ck_assert_uint_eq(mc_depot_intern_walked(hc, c, 2, false, hc, 1, 0), ic);
	ck_assert_uint_eq(mc_depot_known(hc, 0, &walked), ic);
	ck_assert_int_eq(walked, 1);
	/* no key: stored, not marked */
	uintptr_t d[1] = { 0x9900 };
	uint32_t id = mc_depot_intern_walked(0x4669201609102990ull, d, 1, false, 0, 1, ip);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(mc_depot_known(0x4669201609102990ull, 0, &walked), id);
	ck_assert_int_eq(walked, 0);
	ck_assert_uint_eq((uint32_t)mc_depot_id_of(ip)->then[0] & MC_STACK_ID_MAX, ib);
}
END_TEST

/* Pages of the depot's first segments resident: one page each for the
 * first stacks; then, as the arena's first page fills, the three after
 * it in the same call (pages 1-3 resident with page 1, page 4 not),
 * where they grew a page, a page and two pages, a call each; the ids'
 * 32 bytes (depot58) a page, then a page more.  mincore says
 * which pages are resident: the segments are reserved, untouched but
 * for what the depot populates (each test runs in a child of its own:
 * the depot is new). */
static bool page_in(const void *seg, size_t page)
{
	unsigned char v = 0;
	ck_assert_int_eq(mincore((char *)seg + page * 4096, 4096, &v), 0);
	return v & 1;
}

START_TEST(depot_segments_grow_by_three_pages)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	ck_assert_ptr_null(atomic_load(&mc_depot_segs[0]));
	uintptr_t f[2] = { 0x7000, 0 };
	f[1] = 1;
	ck_assert_uint_ne(mc_depot_intern(0x1000, f, 2), 0);
	const char *arena = atomic_load(&mc_depot_segs[0]);
	const struct mc_depot_id *idv = atomic_load(&mc_depot_ids[0]);
	ck_assert(arena && idv);
	ck_assert(page_in(arena, 0) && !page_in(arena, 1));
	ck_assert(page_in(idv, 0) && !page_in(idv, 1));
	bool arena_grew = false, ids_grew = false;
	for (uintptr_t k = 2; k < 400 && !(arena_grew && ids_grew); k++) {
		f[1] = k;
		ck_assert_uint_ne(mc_depot_intern(0x1000 + k * 0x9e3779b97f4a7c15ull, f, 2), 0);
		if (!arena_grew && page_in(arena, 1)) {
			arena_grew = true;
			ck_assert(page_in(arena, 2) && page_in(arena, 3) && !page_in(arena, 4));
		}
		if (!ids_grew && page_in(idv, 1)) {
			/* the ids' 32 bytes: a page, then one more (mc_ahead) */
			ids_grew = true;
			ck_assert(!page_in(idv, 2));
		}
	}
	ck_assert(arena_grew && ids_grew);
	/* no site counted (the defaults' text report): none mapped */
	ck_assert_ptr_null(atomic_load(&mc_depot_sites[0]));
}
END_TEST

/* mc_depot_id_of finds an id's words from its segment's biased base and
 * the id's top bit (depot.c's mc_depot_id_bias), where the segments are
 * 2^11 ids, then 2^11, 2^12 ...: ids on both sides of each of the first
 * boundaries are the words of their own segments, each holding its own
 * stack's entry (the unit its entry starts in), as the arrays say; and
 * mc_site_of the site in the sites' array (mc_depot_site_bias), of 32
 * bytes an id as well, mapped only where sites are counted
 * (mc_depot_sites_on: the ids stored before it too). */
START_TEST(depot_id_lines_across_segments)
{
	mc_opt.stack_depth = 16;
	mc_stacks_init();
	uintptr_t f[2] = { 0x7000, 0 };
	uint32_t last = 0;
	for (uintptr_t k = 1; k <= 8300; k++) {
		f[1] = k;
		uint32_t id = mc_depot_intern(0x1000 + k * 0x9e3779b97f4a7c15ull, f, 2);
		ck_assert_uint_eq(id, (uint32_t)k); /* ordinals: 1, 2, ... */
		last = id;
		if (k == 3000) { /* sites counted from here on, in segment 1 */
			ck_assert_ptr_null(atomic_load(&mc_depot_sites[0]));
			ck_assert(mc_depot_sites_on());
		}
	}
	const uint32_t probe[] = { 1, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, last };
	for (size_t i = 0; i < sizeof probe / sizeof *probe; i++) {
		uint32_t id = probe[i];
		unsigned k = mc_depot_seg_of(id);
		struct mc_depot_id *seg = atomic_load(&mc_depot_ids[k]);
		struct mc_site *sk = atomic_load(&mc_depot_sites[k]);
		ck_assert_ptr_nonnull(seg);
		ck_assert_ptr_nonnull(sk);
		ck_assert_ptr_eq(mc_depot_id_of(id), seg + (id - mc_depot_seg_base(k)));
		ck_assert_ptr_eq(mc_site_of(id), sk + (id - mc_depot_seg_base(k)));
		mc_site_of(id)->bytes += id; /* mapped and written */
		const uintptr_t *got;
		ck_assert_int_eq(mc_stack_get(id, &got), 2);
		ck_assert_uint_eq(got[1], id);
	}
	ck_assert_uint_eq(mc_depot_seg_of(8192), 3);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("stacks", 0);
	tcase_add_test(tc, intern_dedupes);
	tcase_add_test(tc, depot_index_growth_gives_old_tables_back);
	tcase_add_test(tc, depot_small_index_fills_three_quarters);
	tcase_add_test(tc, depot_entries_in_16_byte_units);
	tcase_add_test(tc, depot_large_segments_in_huge_pages);
	tcase_add_test(tc, intern_tells_colliding_hashes_apart);
	tcase_add_test(tc, depot_code_check_follows_dlclose);
	tcase_add_test(tc, depot_walk_skips_segment_ends);
	tcase_add_test(tc, fp_walk_starts_at_the_call_site);
	tcase_add_test(tc, fp_walk_depth_and_stops);
	tcase_add_test(tc, fp_cache_conflicts);
	tcase_add_test(tc, fp_then_follows_any_order);
	tcase_add_test(tc, depot_then_keeps_three);
	tcase_add_test(tc, depot_intern_walked_marks);
	tcase_add_test(tc, depot_young_index_finds_every_stack);
	tcase_add_test(tc, fp_paths_alike_but_deep);
	tcase_add_test(tc, cfi_walk_through_functions_without_frame_pointers);
	tcase_add_test(tc, cfi_new_stacks_from_a_leaf_without_frame_pointer);
	tcase_add_test(tc, cfi_kept_walk_follows_a_changed_rbp);
	tcase_add_test(tc, cfi_kept_walk_makes_its_pair_resident_only);
	tcase_add_test(tc, kept_walks_dense);
	tcase_add_test(tc, cfi_walk_ends_at_the_entry);
	tcase_add_test(tc, cfi_walk_in_a_thread);
	tcase_add_test(tc, cfi_walk_through_a_signal_frame);
	tcase_add_test(tc, cfi_kept_walk_is_the_full_walk);
	tcase_add_test(tc, cfi_kept_walks_outlive_no_thread);
	tcase_add_test(tc, fp_indirect_call_skipping_a_frame);
	tcase_add_test(tc, cfi_run_of_three_frames_compared);
	tcase_add_test(tc, cfi_walk_cut_at_every_depth);
	tcase_add_test(tc, cfi_rule_from_a_made_table);
	tcase_add_test(tc, cfi_signal_rule_from_a_made_table);
	tcase_add_test(tc, cfi_fast_run_is_run);
	tcase_add_test(tc, cfi_view_is_the_mapping);
	tcase_add_test(tc, cfi_rows_kept_are_read);
	tcase_add_test(tc, depot_segments_grow_by_three_pages);
	tcase_add_test(tc, depot_id_lines_across_segments);
	return h_run_suite(NULL);
}
