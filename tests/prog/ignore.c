/* ignore.c - memcheck_ignore() and memcheck_disable()/memcheck_enable():
 * blocks a region keeps on purpose; and regions past the 65,535 epochs a
 * block entry holds, which renumbers them. */
#include <pthread.h>
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

static void *other_thread(void *arg)
{
	(void)arg;
	return malloc(11); /* not disabled in this thread: the region's */
}

/* memcheck_disable() is per thread and nests. */
static void disable_enable(void)
{
	struct memcheck_result r;
	memcheck_begin("disabled");
	memcheck_disable();
	void *a = malloc(1000);
	memcheck_disable();
	void *b = malloc(2000);
	expect("inner memcheck_enable()", (unsigned long long)memcheck_enable(), 0);
	void *c = malloc(3000); /* still disabled: the outer pair is open */
	pthread_t t;
	void *d = NULL;
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, &d);
	expect("outer memcheck_enable()", (unsigned long long)memcheck_enable(), 0);
	expect("unmatched memcheck_enable()", (unsigned long long)(memcheck_enable() + 1), 0);
	void *e = malloc(5);
	memcheck_end(&r);
	expect("disabled allocs", r.allocs >= 5, 1);
	expect("disabled live_blocks", r.live_blocks, 2);
	expect("disabled definitely_lost.bytes", r.definitely_lost.bytes, 16);
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
}

/* 70,000 regions: past the 16 bits of epoch a block entry holds.  Blocks
 * from before, inside and after the renumbering keep their regions. */
static void many_regions(void)
{
	struct memcheck_result r;
	memcheck_begin("long_lived");
	void *old = malloc(40);
	for (int i = 0; i < 70000; i++) {
		memcheck_begin("short");
		free(malloc(8));
		memcheck_end(&r);
		if (!r.pass || r.live_blocks) {
			printf("short region %d: pass %d, %llu live blocks\n", i, r.pass,
			       (unsigned long long)r.live_blocks);
			bad = 1;
			break;
		}
	}
	memcheck_begin("after");
	void *young = malloc(24);
	memcheck_end(&r);
	expect("after live_blocks", r.live_blocks, 1);
	expect("after live_bytes", r.live_bytes, 24);
	free(young);
	memcheck_end(&r);
	expect("long_lived live_blocks", r.live_blocks, 1);
	expect("long_lived live_bytes", r.live_bytes, 40);
	free(old);
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
	disable_enable();
	many_regions();
	return bad;
}
