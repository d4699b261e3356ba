/* plain_rss_self - prints its own resident set (rss_self.h) after some
 * work, for test_rss_self.c to compare with memcheck's figures of it.
 *   plain   no stdio: a block written and freed, a small one kept
 *   stdio   the same, and printf with numbers, fopen and fgets
 *   dlopen  the same as plain, and libm loaded, called and unloaded
 *   heaperror  the same as plain, and 16 MiB written and freed before a
 *           small block is freed twice (under memcheck only: the
 *           allocators abort at it)
 *   threads the same as plain, and 8 MB in 1000 blocks kept by main
 *           while 4 threads each write 1 MB in 100 blocks, hold them
 *           all at once (a barrier) and free them; main frees its own
 *           after the joins (tests/prog/plain_peak_threads.c's shape);
 *           at the peak, all holding, one thread prints VmRSS
 *   thread  the same as plain, and one thread started that does nothing
 *           but return, joined (no stdio, no barrier: memcheck's own
 *           work at a thread's start faults nothing of the C library's
 *           that this bare program does not)
 *   late    the same as plain, and 16 MiB written and freed (the
 *           peak), then calls the program makes only then and memcheck
 *           wraps with code a process seldom runs (prlimit, shmdt,
 *           setuid, at_quick_exit): its first run of that code comes
 *           after the peak
 *   lateunload  the same as late, with libm loaded before the peak and
 *           unloaded after it (dlclose: the mark then stands above the
 *           RSS under every allocator)
 *   fork    the same as plain in a forked child, which prints the
 *           figures (its start read right after fork returns) and
 *           leaves by returning from main; the parent waits and leaves by _exit with
 *           the child's status, printing nothing */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rss_self.h"

static void *volatile keep;

#define HOLDERS 4
static pthread_barrier_t all_hold, all_read;

/* One thread of the threads mode: 1 MB written in 100 blocks, held
 * until every thread holds its own, then freed. */
static void *hold(void *arg)
{
	void *v[100];
	for (int i = 0; i < 100; i++) {
		v[i] = malloc(10000);
		if (v[i])
			memset(v[i], 1, 10000);
	}
	/* The peak: one thread reads VmRSS (which the kernel sums
	 * exactly), none frees before it has ("rss_self_peak: rss=N") */
	if (pthread_barrier_wait(&all_hold) == PTHREAD_BARRIER_SERIAL_THREAD)
		rss_self_line("rss_self_peak: ", "rss", "VmRSS:");
	pthread_barrier_wait(&all_read);
	for (int i = 0; i < 100; i++)
		free(v[i]);
	return arg;
}

static int threads_mode(void)
{
	static void *kept[1000];
	for (int i = 0; i < 1000; i++) {
		kept[i] = malloc(8000);
		if (!kept[i])
			return 2;
		memset(kept[i], 1, 8000);
	}
	pthread_barrier_init(&all_hold, NULL, HOLDERS);
	pthread_barrier_init(&all_read, NULL, HOLDERS);
	pthread_t t[HOLDERS];
	for (int i = 0; i < HOLDERS; i++)
		if (pthread_create(&t[i], NULL, hold, NULL) != 0)
			return 2;
	for (int i = 0; i < HOLDERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all_hold);
	pthread_barrier_destroy(&all_read);
	for (int i = 0; i < 1000; i++)
		free(kept[i]);
	return 0;
}

static void *nothing(void *arg)
{
	return arg;
}

static void at_quick(void)
{
}

/* The late mode: the peak, then the first calls of wrappers of
 * memcheck's that lie in code a process seldom runs. */
static int late_mode(bool unload)
{
	void *m = unload ? dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL) : NULL;
	size_t big = 16u << 20;
	char *b = malloc(big);
	if (!b || (unload && !m))
		return 2;
	memset(b, 1, big);
	free(b);
	if (m)
		dlclose(m);
	struct rlimit r;
	if (prlimit(0, RLIMIT_NOFILE, NULL, &r) != 0 || setuid(getuid()) != 0 ||
	    at_quick_exit(at_quick) != 0)
		return 2;
	if (shmdt(&r) == 0)
		return 2; /* &r is no segment: EINVAL */
	return 0;
}

int main(int argc, char **argv)
{
	rss_self_fixed_layout(argv);
	const char *mode = argc > 1 ? argv[1] : "plain";
	bool child = strcmp(mode, "fork") == 0;
	if (child) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid > 0) {
			int st;
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
				_exit(2);
			_exit(WEXITSTATUS(st));
		}
	}
	long long start = proc_field("/proc/self/status", "VmRSS:");
	char *p = malloc(100000);
	if (!p)
		return 1;
	memset(p, 1, 100000);
	if (strcmp(mode, "stdio") == 0) {
		printf("%d arguments, %.2f, %x, %s\n", argc, 1.5 * argc, (unsigned)argc, mode);
		FILE *f = fopen("/proc/self/stat", "r");
		char line[256];
		if (f) {
			if (fgets(line, sizeof line, f))
				printf("%.10s\n", line);
			fclose(f);
		}
		fflush(stdout);
	} else if (strcmp(mode, "dlopen") == 0) {
		void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return 2;
		double (*cosine)(double) = (double (*)(double))dlsym(h, "cos");
		if (!cosine || cosine(0.0) != 1.0)
			return 2;
		dlclose(h);
	} else if (strcmp(mode, "threads") == 0) {
		if (threads_mode() != 0)
			return 2;
	} else if (strcmp(mode, "thread") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 2;
	} else if (strcmp(mode, "late") == 0 || strcmp(mode, "lateunload") == 0) {
		if (late_mode(strcmp(mode, "lateunload") == 0) != 0)
			return 2;
	} else if (strcmp(mode, "heaperror") == 0) {
		size_t big = 16u << 20;
		char *b = malloc(big);
		if (!b)
			return 2;
		memset(b, 1, big);
		free(b);
		keep = malloc(16);
		free(keep);
		free(keep);
	}
	free(p);
	keep = malloc(10);
	free(keep);
	rss_self_print(start);
	return 0;
}
