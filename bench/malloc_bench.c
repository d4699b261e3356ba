/*
 * malloc_bench.c - a malloc-heavy, stdio-light program to measure what
 * memcheck costs on top of an allocator.
 *
 *   malloc_bench [ITERS] [--threads N] [--keep N [--leave 1]] [--depth N] [--libc 1]
 *
 * Churn (the default): a ring of RING live blocks; each step frees a
 * pseudo-random slot and puts a new block of a pseudo-random size in
 * 16..512 bytes in it, or, one step in 16, reallocs the slot's block to a
 * new size instead.  Every block is touched at both ends, as a program
 * would.  The generator has a fixed seed, so every run makes exactly the
 * same calls.  With --threads N, N threads each run ITERS/N steps on a
 * ring of their own: the same work, spread over threads.
 *
 * --depth N runs the loop N calls further down the stack, so allocation
 * stacks are as deep as in a real suite (test runner, test, code under
 * test) while each step costs the same as without.
 *
 * --align N takes each new block from aligned_alloc(N, size) instead of
 * malloc (N a power of two up to 4096; 0, the default: malloc): the
 * aligned family's paths (bench/instr.sh's aligned rows).
 *
 * --libc 1 takes each new block from the C library's strndup instead of
 * malloc: an allocation made inside a function built without frame
 * pointers, whose stack memcheck's unwinder follows by its call-frame
 * information (as blocks from strdup, fopen or getline are).
 *
 * Keep (--keep N): allocate N blocks of 16..64 bytes and keep them all
 * live at the end, to measure the memory each tracked block costs.  They
 * are freed before the program exits, unless --leave 1: then a global
 * still points to them, and memcheck's exit scan reads them all.
 *
 * Both end with one line on stdout: what ran, a checksum, the loop's own
 * seconds and the process's peak RSS (VmHWM, kB) read from
 * /proc/self/status with plain system calls.  Nothing else uses stdio, so
 * the program's own allocations are the benchmark's.
 *
 * Build with -fno-builtin: the compiler otherwise knows malloc and free
 * and may delete a pair whose block never escapes.  Never link it with
 * memcheck: run.sh preloads it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "bench.h"

#define RING 1024
#define DEFAULT_ITERS 40000000L /* ~0.6 s bare under glibc here */

static inline size_t churn_size(uint64_t r)
{
	return 16 + (size_t)(r % 497); /* 16..512 */
}

struct job {
	long iters;
	int fill;       /* write every byte of each new block, as a program would */
	int libc;       /* new blocks from strndup */
	size_t align;   /* new blocks from aligned_alloc(align, n); 0: malloc */
	uint64_t seed;
	uint64_t sum;
	int failed;
};

/* 511 'x's: strndup(text, n - 1) is a block of n bytes. */
static char text[512];

/* The loop, made twice (aligned: a constant), so that the malloc loop
 * runs no test of --align: its step's instructions stay those of the
 * runs before the option. */
static inline __attribute__((always_inline)) void *churn_as(void *arg, int aligned)
{
	struct job *j = arg;
	unsigned char *ring[RING];
	size_t len[RING];
	uint64_t s = j->seed, sum = 0;

	for (int i = 0; i < RING; i++) {
		len[i] = churn_size(next_rand(&s));
		ring[i] = malloc(len[i]);
		if (!ring[i]) {
			j->failed = 1;
			return NULL;
		}
		ring[i][0] = (unsigned char)i;
		ring[i][len[i] - 1] = (unsigned char)i;
	}
	for (long it = 0; it < j->iters; it++) {
		uint64_t r = next_rand(&s);
		unsigned k = (unsigned)(r >> 32) % RING;
		size_t n = churn_size(r);
		unsigned char *p = ring[k];
		sum += p[0] + p[len[k] - 1];
		if ((r >> 20 & 15) == 0) {
			p = realloc(p, n);
		} else {
			free(p);
			if (aligned)
				p = aligned_alloc(j->align, n);
			else
				p = j->libc ? (unsigned char *)strndup(text, n - 1) : malloc(n);
		}
		if (!p) {
			j->failed = 1;
			break;
		}
		if (j->fill)
			memset(p, (int)(it & 0xff), n);
		p[0] = (unsigned char)it;
		p[n - 1] = (unsigned char)(it >> 8);
		ring[k] = p;
		len[k] = n;
	}
	for (int i = 0; i < RING; i++)
		free(ring[i]);
	j->sum = sum;
	return NULL;
}

static void *churn(void *arg)
{
	return ((struct job *)arg)->align ? churn_as(arg, 1) : churn_as(arg, 0);
}

/* Run the churn depth frames further down; the barrier after the call
 * keeps the compiler from turning it into a jump. */
static __attribute__((noinline)) void *nest(long depth, struct job *j)
{
	if (depth > 0)
		nest(depth - 1, j);
	else
		churn(j);
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static long g_depth;
static unsigned char **volatile left; /* --leave: the kept blocks, for the exit scan */

static void *thread_main(void *arg)
{
	return nest(g_depth, arg);
}

/* Keep n blocks live: an array of pointers plus the blocks themselves. */
static unsigned char **keep(long n, uint64_t *sum)
{
	unsigned char **v = malloc((size_t)n * sizeof *v);
	if (!v)
		return NULL;
	uint64_t s = 42;
	for (long i = 0; i < n; i++) {
		size_t sz = 16 + (size_t)(next_rand(&s) % 49); /* 16..64 */
		v[i] = malloc(sz);
		if (!v[i])
			return NULL;
		v[i][0] = (unsigned char)i;
		*sum += v[i][0];
	}
	/* Left live on purpose: the caller reads the peak RSS first. */
	return v;
}

static void usage(void)
{
	static const char msg[] =
		"usage: malloc_bench [ITERS] [--threads N] [--keep N [--leave 1]] [--depth N] [--fill 0|1] "
		"[--libc 0|1] [--align N]\n";
	if (write(2, msg, sizeof msg - 1) < 0)
		_exit(2);
	exit(2);
}

int main(int argc, char **argv)
{
	long iters = DEFAULT_ITERS, threads = 1, keep_n = 0, depth = 0, fill = 0, libc = 0,
	     leave = 0, align = 0;
	for (int i = 1; i < argc; i++) {
		char *end;
		long *dst = &iters;
		const char *v = argv[i];
		if (argv[i][0] == '-') {
			if (!strcmp(argv[i], "--threads"))
				dst = &threads;
			else if (!strcmp(argv[i], "--keep"))
				dst = &keep_n;
			else if (!strcmp(argv[i], "--depth"))
				dst = &depth;
			else if (!strcmp(argv[i], "--fill"))
				dst = &fill;
			else if (!strcmp(argv[i], "--leave"))
				dst = &leave;
			else if (!strcmp(argv[i], "--libc"))
				dst = &libc;
			else if (!strcmp(argv[i], "--align"))
				dst = &align;
			else
				usage();
			if (i + 1 >= argc)
				usage();
			v = argv[++i];
		}
		*dst = strtol(v, &end, 10);
		if (*end || *dst < 0)
			usage();
	}
	if (threads < 1 || threads > 64 || depth > 1000 || fill > 1 || libc > 1 || leave > 1 ||
	    align > 4096 || (align & (align - 1)) || (align && libc))
		usage();
	g_depth = depth;
	memset(text, 'x', sizeof text - 1);

	uint64_t sum = 0;
	int failed = 0;
	unsigned char **kept = NULL;
	double t0 = now();
	if (keep_n) {
		kept = keep(keep_n, &sum);
		failed = !kept;
	} else {
		struct job jobs[64];
		pthread_t tid[64];
		for (long t = 0; t < threads; t++) {
			jobs[t] = (struct job){ .iters = iters / threads,
						.fill = (int)fill,
						.libc = (int)libc,
						.align = (size_t)align,
						.seed = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1) };
			if (threads == 1)
				thread_main(&jobs[t]);
			else if (pthread_create(&tid[t], NULL, thread_main, &jobs[t]))
				failed = 1;
		}
		for (long t = 0; t < threads && threads > 1; t++)
			pthread_join(tid[t], NULL);
		for (long t = 0; t < threads; t++) {
			sum += jobs[t].sum;
			failed |= jobs[t].failed;
		}
	}
	double secs = now() - t0;
	long hwm = vm_hwm_kb();
	left = leave ? kept : NULL;
	if (kept && !leave) { /* measured: now leave nothing behind */
		for (long i = 0; i < keep_n; i++)
			free(kept[i]);
		free(kept);
	}
	if (failed) {
		static const char msg[] = "malloc_bench: out of memory\n";
		if (write(2, msg, sizeof msg - 1) < 0)
			return 1;
		return 1;
	}
	printf("mode=%s iters=%ld threads=%ld depth=%ld fill=%ld libc=%ld keep=%ld checksum=%llu "
	       "loop_s=%.4f vmhwm_kb=%ld\n",
	       keep_n ? "keep" : "churn", keep_n ? 0 : iters, threads, depth, fill, libc, keep_n,
	       (unsigned long long)sum, secs, hwm);
	return 0;
}
