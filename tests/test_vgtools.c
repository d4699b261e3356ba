/*
 * test_vgtools.c - memcheck preloaded into a program that valgrind runs
 * with a tool other than memcheck (callgrind, massif), and valgrind's
 * memcheck tool's figures for what is in use.
 *
 * Only valgrind's memcheck tool checks leaks.  Under callgrind or massif
 * the program's leaks are memcheck's own to find: a leaking program
 * fails, with memcheck's scan's figures ("leak_check": "memcheck"), as it
 * does outside valgrind.  (memcheck used to take valgrind's leak check
 * there, which answered zero: the leaks passed.)  Under valgrind's
 * memcheck tool (valgrind mode, lib/vgmode.c) the leak kinds are
 * valgrind's, and the blocks in use at the end still memcheck's table's.
 *
 * The program is plain_leak_direct: ten blocks of 48 bytes and one of
 * 4,096 definitely lost.  Every allocator; --soname-synonyms names the
 * allocator's object for the tools that replace malloc (massif,
 * memcheck), nouserintercepts under glibc.  Skipped without valgrind.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "suite.h"

#define LOST_BLOCKS 11
#define LOST_BYTES (10 * 48 + 4096)

static const char *somalloc(int i)
{
	return i == H_GLIBC ? "nouserintercepts" : h_env("*%s*", h_allocators[i].name);
}

/* plain_leak_direct under valgrind's tool, memcheck preloaded with
 * allocator i and its default exit status. */
static void run_tool(struct h_res *x, int i, const char *tool)
{
	const char *args[8];
	int n = 0;
	args[n++] = h_env("--tool=%s", tool);
	args[n++] = "-q";
	if (!strcmp(tool, "callgrind"))
		args[n++] = "--callgrind-out-file=/dev/null";
	if (!strcmp(tool, "massif"))
		args[n++] = "--massif-out-file=/dev/null";
	args[n++] = h_env("--soname-synonyms=somalloc=%s", somalloc(i));
	args[n++] = h_prog("plain_leak_direct");
	args[n] = NULL;
	H_EXEC(x, .prog = h_valgrind_path(), .args = args, .alloc = i,
	       .flags = H_PRELOAD | H_EXITCODE, .timeout = 120);
}

/* plain_leak_direct under tool with each allocator: it fails (exit 23)
 * and check judges its process record. */
static void each_allocator(const char *tool, void (*check)(const struct h_json *rec, int i))
{
	if (!h_valgrind_path()) {
		printf("note: valgrind not installed; skipping\n");
		return;
	}
	for (int i = 0; i < H_NALLOCATORS; i++) {
		if (!h_allocator(i, NULL))
			continue;
		struct h_res x;
		run_tool(&x, i, tool);
		h_expect_exit(&x, 23);
		const struct h_json *rec = h_rec(&x, "process");
		check(rec, i);
		H_EXPECT_STR(rec, "verdict", "fail");
		H_EXPECT_COUNT(rec, "definitely_lost", "blocks", LOST_BLOCKS);
		H_EXPECT_COUNT(rec, "definitely_lost", "bytes", LOST_BYTES);
		h_res_free(&x);
	}
}

static void memcheck_scanned(const struct h_json *rec, int i)
{
	(void)i;
	H_EXPECT_STR(rec, "leak_check", "memcheck");
}

START_TEST(leak_fails_under_callgrind)
{
	each_allocator("callgrind", memcheck_scanned);
}
END_TEST

START_TEST(leak_fails_under_massif)
{
	each_allocator("massif", memcheck_scanned);
}
END_TEST

/* Valgrind mode: valgrind's kinds, and in use at the end what is live
 * (it read 0 blocks: the table was not walked where no scan ran). */
static void valgrind_checked(const struct h_json *rec, int i)
{
	H_EXPECT_STR(rec, "leak_check", "valgrind");
	uint64_t allocs = h_u64(rec, "allocs"), frees = h_u64(rec, "frees");
	uint64_t live = h_u64(rec, "live_blocks"), bytes = h_u64(rec, "live_bytes");
	ck_assert_msg(allocs >= LOST_BLOCKS && live == allocs - frees,
		      "under %s: %s allocs, %s frees, %s blocks in use at the end",
		      h_allocator_name(i), h_fmt(allocs), h_fmt(frees), h_fmt(live));
	ck_assert_msg(bytes >= LOST_BYTES && bytes != H_NULL && bytes != H_MISSING,
		      "under %s: %s bytes in use at the end, %d lost at least",
		      h_allocator_name(i), h_fmt(bytes), LOST_BYTES);
	ck_assert_msg(h_u64(rec, "peak_live_bytes") >= bytes,
		      "under %s: peak live %s below in use %s", h_allocator_name(i),
		      h_fmt(h_u64(rec, "peak_live_bytes")), h_fmt(bytes));
}

START_TEST(in_use_under_valgrinds_memcheck)
{
	each_allocator("memcheck", valgrind_checked);
}
END_TEST

int main(void)
{
	setenv("H_TIMEOUT", "120", 0); /* valgrind */
	TCase *tc = h_tcase("vgtools", 600);
	tcase_add_test(tc, leak_fails_under_callgrind);
	tcase_add_test(tc, leak_fails_under_massif);
	tcase_add_test(tc, in_use_under_valgrinds_memcheck);
	return h_run_suite(NULL);
}
