/*
 * plain_shapes.c - allocation patterns whose peak RSS depends on what the
 * allocator does with freed memory (tests/test_fidelity.c): memcheck
 * must not change that.  Deterministic (no time, no randomness), single
 * thread, every block written so that it is resident.  No stdio; not
 * linked to memcheck.
 *
 * usage: plain_shapes phases|window|growth
 *   phases  1 M blocks of 64 bytes, all freed; then 250 k of 256 bytes,
 *           all freed; then 16 k of 4 KiB, all freed.  How much of the
 *           first phases' memory the allocator hands to the later ones
 *           (mimalloc 2.0.9 purges it only after a delay) sets the peak.
 *   window  600 k blocks of 16 B to 4 KiB through a window of 40 k live
 *           ones: a fragmented heap.
 *   growth  8 arrays grown by realloc to 4 MiB each while 200 k small
 *           blocks stay live; nothing freed, so the peak is at exit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void phase(size_t n, size_t size)
{
	char **v = malloc(n * sizeof *v);
	if (!v)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] = malloc(size)))
			exit(1);
		memset(v[i], 1, size);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A fixed sequence of sizes, small ones most often. */
static size_t size_at(uint32_t *x)
{
	*x = *x * 1664525u + 1013904223u;
	uint32_t r = *x >> 8;
	return (size_t)16 << (r % 9) >> (r / 9 % 3); /* 16 B .. 4 KiB */
}

static void window(void)
{
	enum { LIVE = 40000, STEPS = 600000 };
	char **ring = calloc(LIVE, sizeof *ring);
	if (!ring)
		exit(1);
	uint32_t x = 12345;
	for (size_t i = 0; i < STEPS; i++) {
		free(ring[i % LIVE]);
		size_t n = size_at(&x);
		if (!(ring[i % LIVE] = malloc(n)))
			exit(1);
		memset(ring[i % LIVE], 2, n);
	}
	for (size_t i = 0; i < LIVE; i++)
		free(ring[i]);
	free(ring);
}

static void growth(void)
{
	enum { ARRAYS = 8, SMALL = 200000 };
	static char *small[SMALL];
	char *a[ARRAYS] = { 0 };
	size_t cap[ARRAYS] = { 0 };
	for (size_t i = 0; i < SMALL; i++) {
		size_t n = 24 + i % 17;
		if (!(small[i] = malloc(n)))
			exit(1);
		memset(small[i], 3, n);
		size_t k = i % ARRAYS;
		if (cap[k] < ((size_t)4 << 20)) {
			size_t want = cap[k] ? cap[k] + cap[k] / 2 : 16;
			char *p = realloc(a[k], want);
			if (!p)
				exit(1);
			memset(p + cap[k], 4, want - cap[k]);
			a[k] = p;
			cap[k] = want;
		}
	}
	/* kept: the peak is the process's last state */
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "phases")) {
		phase(1000000, 64);
		phase(250000, 256);
		phase(16000, 4096);
	} else if (!strcmp(argv[1], "window")) {
		window();
	} else if (!strcmp(argv[1], "growth")) {
		growth();
	} else {
		return 2;
	}
	return 0;
}
