/*
 * stress.c - a random mix of the whole malloc family over many threads,
 * with blocks freed by threads other than the one that allocated them,
 * and forks, counted by the program itself and compared with memcheck's
 * figures (tests/test_stress.c, make stress; issue 14).
 *
 * usage: stress SECONDS THREADS SEED [LINGER_MS]
 *   Two phases of SECONDS/2 each.
 *   churn: THREADS threads, each of which keeps starting short threads,
 *     joined and detached, that run the mix, and now and then forks a
 *     child that runs it alone and exits with exit() (its process region
 *     is reported).  Nothing is compared here: pthread_create allocates
 *     for the thread it makes (its TLS, through the C library's own
 *     malloc), which the program cannot count; it must simply neither
 *     hang nor crash nor make a heap error.  The phase ends when every
 *     thread but main has gone (/proc/self/task): a detached thread
 *     that has said it is done still frees its argument and, as it
 *     ends, the C library's DTVs of the cached stacks it trims, through
 *     the program's free, which would fall into the mix's region.
 *     LINGER_MS (default 0) holds each detached short thread that long
 *     after it said it is done, as a thread descheduled there would be
 *     (test_stress: a_late_churn_thread_is_waited_for).
 *   mix: THREADS threads, half joined and half detached, are started
 *     first and wait; then region "mix" begins, they run the mix, the
 *     main thread frees what is left, and the region ends.  Its figures
 *     must be the program's own count exactly.  Now and then a thread
 *     forks: the child, which has the region rebased at the fork, runs
 *     the mix alone, ends the region and compares it with its own count.
 *   The mix, per step: a block of a random size (1-600 bytes, some of
 *   4 KiB and more) from malloc, calloc, realloc (of NULL, of a live
 *   block, to 0), posix_memalign, aligned_alloc, memalign, valloc or
 *   pvalloc, put into a shared pool of 4096 slots by atomic exchange;
 *   what the exchange takes out, another thread's block as often as
 *   not, is freed.
 *   Prints "mix: ok ..." and exits 0, or names the figures that differ
 *   on stderr and exits 1.
 */
#include <memcheck/memcheck.h>
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POOL 4096
#define MAX_THREADS 64

struct counts {
	uint64_t allocs, frees, reallocs, failed, bytes;
} __attribute__((aligned(64)));

static void *_Atomic pool[POOL];
static atomic_int stop;
static atomic_int fork_failures;
static double phase_seconds;
static long page;
static long linger_ms;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t random_size(uint64_t *s)
{
	uint64_t r = next_rand(s);
	return r % 16 == 0 ? 4096 + r % 20000 : 1 + r % 600;
}

/* Put p in a random slot; free what was there. */
static void place(void *p, uint64_t *s, struct counts *c)
{
	void *old = atomic_exchange(&pool[next_rand(s) % POOL], p);
	if (old) {
		free(old);
		c->frees++;
	}
}

static void got(void *p, size_t n, struct counts *c, uint64_t *s)
{
	if (!p) {
		c->failed++;
		return;
	}
	c->allocs++;
	c->bytes += n;
	place(p, s, c);
}

/* One step of the mix. */
static void step(uint64_t *s, struct counts *c)
{
	size_t n = random_size(s);
	void *p = NULL;
	switch (next_rand(s) % 10) {
	case 0:
	case 1:
		got(malloc(n), n, c, s);
		break;
	case 2:
		got(calloc(n, 3), n * 3, c, s);
		break;
	case 3: {
		/* realloc of a block taken out of the pool: ours now */
		void *old = atomic_exchange(&pool[next_rand(s) % POOL], NULL);
		size_t m = next_rand(s) % 8 == 0 ? 0 : n;
		c->reallocs++;
		p = realloc(old, m);
		if (old && m == 0) {
			c->frees++;
			if (p) { /* some allocators return a block for 0 */
				c->allocs++;
				place(p, s, c);
			}
		} else if (!p) {
			c->failed++;
			if (old)
				place(old, s, c);
		} else {
			c->frees += old != NULL;
			c->allocs++;
			c->bytes += m;
			place(p, s, c);
		}
		break;
	}
	case 4:
		if (posix_memalign(&p, 64, n) == 0)
			got(p, n, c, s);
		else
			c->failed++;
		break;
	case 5:
		got(aligned_alloc(32, (n + 31) & ~(size_t)31), (n + 31) & ~(size_t)31, c, s);
		break;
	case 6:
		got(memalign(128, n), n, c, s);
		break;
	case 7:
		got(valloc(n), n, c, s);
		break;
	case 8:
		got(pvalloc(n), ((n + (size_t)page - 1) / (size_t)page) * (size_t)page, c, s);
		break;
	default: {
		void *old = atomic_exchange(&pool[next_rand(s) % POOL], NULL);
		if (old) {
			free(old);
			c->frees++;
		}
	}
	}
}

static void mix_for(double secs, uint64_t *s, struct counts *c)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 200; i++)
			step(s, c);
		if (stop)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > secs)
			return;
	}
}

/* ---- churn ----------------------------------------------------------- */

struct churn_arg {
	uint64_t seed;
	sem_t *done;   /* a detached thread's end, or NULL */
};

static void *short_thread(void *arg)
{
	struct churn_arg *a = arg;
	struct counts c = { 0 };
	uint64_t s = a->seed;
	mix_for(0.01, &s, &c);
	if (a->done) {
		sem_post(a->done);
		if (linger_ms > 0) {
			struct timespec d = { linger_ms / 1000, linger_ms % 1000 * 1000000 };
			nanosleep(&d, NULL);
		}
	}
	free(a);
	return NULL;
}

static void *churner(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg;
	sem_t done;
	sem_init(&done, 0, 0);
	int detached = 0;
	for (int round = 0; !stop; round++) {
		struct churn_arg *a = malloc(sizeof *a);
		if (!a)
			continue;
		a->seed = next_rand(&s) | 1;
		/* Kept apart: the thread frees a when it ends, maybe before
		 * pthread_create returns here. */
		sem_t *d = a->done = round % 2 ? &done : NULL;
		pthread_t t;
		if (pthread_create(&t, NULL, short_thread, a) != 0) {
			free(a);
			continue;
		}
		if (d == NULL) {
			pthread_join(t, NULL);
		} else {
			pthread_detach(t);
			detached++;
		}
		if (round % 16 == 7) {
			pid_t pid = fork();
			if (pid == 0) {
				struct counts c = { 0 };
				mix_for(0.01, &s, &c);
				exit(0);
			}
			int st;
			if (pid > 0 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
					WEXITSTATUS(st) != 0))
				atomic_fetch_add(&fork_failures, 1);
		}
	}
	while (detached--)
		sem_wait(&done);
	return NULL;
}

/* The process's threads now, main included; -1 if /proc says nothing. */
static int live_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Every thread but main gone, for at most a minute: 0, or 1 (said). */
static int wait_threads_gone(void)
{
	int n = live_threads();
	for (int ms = 0; n > 1 && ms < 60000; ms++) {
		struct timespec d = { 0, 1000000 };
		nanosleep(&d, NULL);
		n = live_threads();
	}
	if (n <= 1)
		return 0;
	fprintf(stderr, "stress: churn: %d threads but main still there after a minute\n", n - 1);
	return 1;
}

static int churn(int threads, uint64_t seed)
{
	pthread_t t[MAX_THREADS];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, churner, (void *)(uintptr_t)(seed * 7919 + (uint64_t)i + 1));
	struct timespec d = { (time_t)phase_seconds, (long)((phase_seconds - (time_t)phase_seconds) * 1e9) };
	nanosleep(&d, NULL);
	stop = 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	stop = 0;
	return wait_threads_gone();
}

/* ---- mix ------------------------------------------------------------- */

static struct counts counts[MAX_THREADS];
static pthread_barrier_t go, finished, leave;

/* The child of a fork in the middle of the mix: the region, rebased at
 * the fork, holds the child's calls alone. */
static void child_mix(uint64_t *s)
{
	struct counts c = { 0 };
	/* blocks of the child's own, freed before the region ends */
	void *mine[64];
	for (int i = 0; i < 64; i++) {
		size_t n = random_size(s);
		mine[i] = malloc(n);
		if (mine[i]) {
			c.allocs++;
			c.bytes += n;
		}
	}
	for (int i = 0; i < 64; i++) {
		if (mine[i]) {
			free(mine[i]);
			c.frees++;
		}
	}
	struct memcheck_result r;
	memcheck_end(&r);
	int bad = r.allocs != c.allocs || r.frees != c.frees || r.bytes_allocated != c.bytes ||
		  r.double_frees || r.invalid_frees;
	if (bad)
		fprintf(stderr, "stress: fork child %d: memcheck allocs %llu frees %llu bytes %llu "
			"double %llu invalid %llu; the child counted %llu, %llu, %llu\n",
			(int)getpid(), (unsigned long long)r.allocs, (unsigned long long)r.frees,
			(unsigned long long)r.bytes_allocated, (unsigned long long)r.double_frees,
			(unsigned long long)r.invalid_frees, (unsigned long long)c.allocs,
			(unsigned long long)c.frees, (unsigned long long)c.bytes);
	_exit(bad);
}

struct worker {
	int id;
	uint64_t seed;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	uint64_t s = w->seed;
	struct counts *c = &counts[w->id];
	pthread_barrier_wait(&go);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int round = 0;; round++) {
		mix_for(0.05, &s, c);
		if (round % 8 == 3 && w->id % 2 == 0) {
			pid_t pid = fork();
			if (pid == 0)
				child_mix(&s);
			int st;
			if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			    WEXITSTATUS(st) != 0)
				atomic_fetch_add(&fork_failures, 1);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >
		    phase_seconds)
			break;
	}
	pthread_barrier_wait(&finished);
	pthread_barrier_wait(&leave);
	return NULL;
}

static int expect(const char *what, uint64_t mc, uint64_t prog)
{
	if (mc == prog)
		return 0;
	fprintf(stderr, "stress: mix: %s: memcheck %llu, the program %llu\n", what,
		(unsigned long long)mc, (unsigned long long)prog);
	return 1;
}

static int mix(int threads, uint64_t seed)
{
	pthread_t t[MAX_THREADS];
	struct worker w[MAX_THREADS];
	pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&finished, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&leave, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){ i, seed * 104729 + (uint64_t)i + 1 };
		pthread_create(&t[i], NULL, worker, &w[i]);
		if (i % 2)
			pthread_detach(t[i]);
	}
	struct counts mine = { 0 };
	memcheck_begin("mix");
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&finished);
	for (int i = 0; i < POOL; i++) {
		void *p = atomic_exchange(&pool[i], NULL);
		if (p) {
			free(p);
			mine.frees++;
		}
	}
	struct memcheck_result r;
	memcheck_end(&r);
	struct counts sum = mine;
	for (int i = 0; i < threads; i++) {
		sum.allocs += counts[i].allocs;
		sum.frees += counts[i].frees;
		sum.reallocs += counts[i].reallocs;
		sum.failed += counts[i].failed;
		sum.bytes += counts[i].bytes;
	}
	pthread_barrier_wait(&leave);
	for (int i = 0; i < threads; i += 2)
		pthread_join(t[i], NULL);
	int bad = expect("allocs", r.allocs, sum.allocs) + expect("frees", r.frees, sum.frees) +
		  expect("reallocs", r.reallocs, sum.reallocs) +
		  expect("failed_allocs", r.failed_allocs, sum.failed) +
		  expect("bytes_allocated", r.bytes_allocated, sum.bytes) +
		  expect("double_frees", r.double_frees, 0) +
		  expect("invalid_frees", r.invalid_frees, 0);
	if (r.live_blocks != MEMCHECK_UNKNOWN && r.bytes_freed != MEMCHECK_UNKNOWN)
		bad += expect("live_blocks", r.live_blocks, 0);
	if (!bad)
		printf("mix: ok allocs=%llu frees=%llu reallocs=%llu bytes=%llu\n",
		       (unsigned long long)sum.allocs, (unsigned long long)sum.frees,
		       (unsigned long long)sum.reallocs, (unsigned long long)sum.bytes);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
		return 2;
	double secs = atof(argv[1]);
	int threads = atoi(argv[2]);
	uint64_t seed = strtoull(argv[3], NULL, 10) | 1;
	linger_ms = argc == 5 ? atol(argv[4]) : 0;
	if (threads < 1 || threads > MAX_THREADS || linger_ms < 0)
		return 2;
	page = sysconf(_SC_PAGESIZE);
	phase_seconds = secs / 2;
	int bad = churn(threads, seed);
	for (int i = 0; i < POOL; i++)
		free(atomic_exchange(&pool[i], NULL));
	bad += mix(threads, seed);
	if (fork_failures) {
		fprintf(stderr, "stress: %d fork children failed or did not end\n", fork_failures);
		bad++;
	}
	return bad ? 1 : 0;
}
