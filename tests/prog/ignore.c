/* ignore.c - memcheck_ignore(): a block a region keeps on purpose. */
#include <stdio.h>
#include <stdlib.h>

#include <memcheck/memcheck.h>

static int bad;

static void expect(const char *what, unsigned long long got, unsigned long long want)
{
	if (got != want) {
		printf("%s = %llu, expected %llu\n", what, got, want);
		bad = 1;
	}
}

int main(void)
{
	struct memcheck_result r;
	int local;
	memcheck_begin("outer");
	memcheck_begin("inner");
	void *kept = malloc(100);
	void *leaked = malloc(7);
	expect("memcheck_ignore(kept)", (unsigned long long)memcheck_ignore(kept), 0);
	expect("memcheck_ignore(&local)", (unsigned long long)(memcheck_ignore(&local) + 1), 0);
	expect("memcheck_ignore(NULL)", (unsigned long long)(memcheck_ignore(NULL) + 1), 0);
	memcheck_end(&r);
	expect("inner live_blocks", r.live_blocks, 1);
	expect("inner definitely_lost.bytes", r.definitely_lost.bytes, 7);
	free(leaked);
	memcheck_end(&r);
	expect("outer live_blocks", r.live_blocks, 0);
	expect("outer pass", (unsigned long long)r.pass, 1);
	memcheck_begin("free_of_ignored");
	free(kept);
	memcheck_end(&r);
	expect("free_of_ignored frees", r.frees, 1);
	expect("free_of_ignored bytes_freed", r.bytes_freed, 100);
	return bad;
}
