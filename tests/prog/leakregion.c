/*
 * leakregion.c - leak kinds of explicit regions, the way a test
 * framework's fixtures use them: setup begins the region, the test runs
 * and returns, teardown ends it, all called from one driver.  The test's
 * dead frames still hold the leaked block's address where teardown's
 * frames now lie: only frames that outlive the region are roots.  Exit
 * status 0 when every figure is right; the wrong ones on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

static int failures;
static struct memcheck_result r;
static void *volatile kept;

static void expect(const char *what, uint64_t got, uint64_t want)
{
	if (got != want) {
		fprintf(stderr, "leakregion: %s = %llu, expected %llu\n", what,
			(unsigned long long)got, (unsigned long long)want);
		failures++;
	}
}

__attribute__((noinline)) static void setup(void)
{
	memcheck_begin("fixture");
}

__attribute__((noinline)) static char *dup_str(const char *s)
{
	char *p = malloc(strlen(s) + 1);
	strcpy(p, s);
	return p;
}

__attribute__((noinline)) static void test_leak(void)
{
	char *volatile p = dup_str("thirty-three bytes, then lost....");
	(void)p;
}

__attribute__((noinline)) static void test_keep(void)
{
	kept = dup_str("kept by a global");
}

__attribute__((noinline)) static void teardown(void)
{
	memcheck_end(&r);
}

int main(void)
{
	setup();
	test_leak();
	teardown();
	expect("definitely_lost.blocks", r.definitely_lost.blocks, 1);
	expect("definitely_lost.bytes", r.definitely_lost.bytes, 34);
	expect("still_reachable.blocks", r.still_reachable.blocks, 0);
	expect("pass", (uint64_t)r.pass, 0);

	setup();
	test_keep();
	teardown();
	expect("kept: definitely_lost.blocks", r.definitely_lost.blocks, 0);
	expect("kept: still_reachable.bytes", r.still_reachable.bytes, 17);
	expect("kept: pass", (uint64_t)r.pass, 1);
	free(kept);

	/* Begun and ended in one function: its own locals are roots. */
	memcheck_begin("inline");
	char *volatile local = dup_str("held by a local");
	memcheck_end(&r);
	expect("inline: still_reachable.blocks", r.still_reachable.blocks, 1);
	expect("inline: definitely_lost.blocks", r.definitely_lost.blocks, 0);
	free(local);
	return failures != 0;
}
