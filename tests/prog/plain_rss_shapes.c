/*
 * plain_rss_shapes.c - memory shapes whose peak and end RSS test_rss_bare
 * compares with the bare program's, read from outside (nothing of its
 * own is printed or read).  Each peak comes before a drop, in a way the
 * allocators each handle on their own:
 *   mmap     blocks across the allocators' thresholds for mapping a block
 *            of its own (glibc's 128 KiB, the others' large classes):
 *            32 of 1 MiB written and freed, then 4 of 16 MiB, each
 *            written and freed before the next
 *   madvise  64 MiB mapped and written; the first half given back with
 *            MADV_DONTNEED, a quarter with MADV_FREE (kept resident
 *            until the kernel is short of memory), then unmapped
 *   burst    8 threads at once, each writing 4,000 blocks of 16 to 2,048
 *            bytes (the allocators' per-thread caches and arenas), all
 *            held at a barrier, then freed, then joined (measured by hand,
 *            doc/costs.md rss48: not a row, the threads' order moves its
 *            figures under tcmalloc by 100 KiB from run to run)
 *   thread   the peak in a thread that has exited: one thread writes
 *            24 MiB in 256 KiB blocks, frees them and returns; main
 *            joins it and ends with a few small blocks
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *volatile sink;

static void fill_free(size_t size, int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(size);
		if (!p)
			exit(2);
		memset(p, i + 1, size);
		sink = p;
		free(p);
	}
}

static int mmap_mode(void)
{
	fill_free(1u << 20, 32);
	fill_free(16u << 20, 4);
	return 0;
}

static int madvise_mode(void)
{
	size_t len = 64u << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	memset(p, 1, len);
	if (madvise(p, len / 2, MADV_DONTNEED) != 0)
		return 3;
	if (madvise(p + len / 2, len / 4, MADV_FREE) != 0)
		return 4;
	return munmap(p, len) == 0 ? 0 : 5;
}

#define BURST_THREADS 8
#define BURST_BLOCKS 4000
static pthread_barrier_t all_hold;

static void *burst(void *arg)
{
	unsigned seed = (unsigned)(size_t)arg;
	char *held[BURST_BLOCKS];
	for (int i = 0; i < BURST_BLOCKS; i++) {
		seed = seed * 1103515245u + 12345u;
		size_t size = 16 + (seed >> 16) % 2033;
		held[i] = malloc(size);
		if (!held[i])
			exit(2);
		memset(held[i], i, size);
	}
	pthread_barrier_wait(&all_hold);
	for (int i = 0; i < BURST_BLOCKS; i++)
		free(held[i]);
	return NULL;
}

static int burst_mode(void)
{
	pthread_t t[BURST_THREADS];
	pthread_barrier_init(&all_hold, NULL, BURST_THREADS);
	for (int i = 0; i < BURST_THREADS; i++)
		if (pthread_create(&t[i], NULL, burst, (void *)(size_t)(i + 1)) != 0)
			return 2;
	for (int i = 0; i < BURST_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all_hold);
	return 0;
}

static void *peak_then_exit(void *arg)
{
	(void)arg;
	enum { N = 96, SIZE = 256 << 10 };
	static char *held[N];
	for (int i = 0; i < N; i++) {
		held[i] = malloc(SIZE);
		if (!held[i])
			exit(2);
		memset(held[i], i + 1, SIZE);
	}
	for (int i = 0; i < N; i++)
		free(held[i]);
	return NULL;
}

static int thread_mode(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, peak_then_exit, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	fill_free(100, 10);
	return 0;
}

static const struct {
	const char *name;
	int (*run)(void);
} modes[] = {
	{ "mmap", mmap_mode },
	{ "madvise", madvise_mode },
	{ "burst", burst_mode },
	{ "thread", thread_mode },
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mmap";
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (!strcmp(mode, modes[i].name))
			return modes[i].run();
	return 1;
}
