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
 *   late    the same as plain, and 16 MiB written (the peak: VmRSS
 *           read there, "rss_self_peak: rss=N") and freed, then calls
 *           the program makes only then and memcheck
 *           wraps with code a process seldom runs (prlimit, shmdt,
 *           setuid, at_quick_exit): its first run of that code comes
 *           after the peak
 *   lateunload  the same as late, with libm loaded before the peak and
 *           unloaded after it (dlclose: the mark then stands above the
 *           RSS under every allocator)
 *   latelittle  16 MiB written and kept, and 256 KiB of the program's own
 *           mapping written and unmapped after the peak (the same under
 *           every allocator: less than the code blocks memcheck's late
 *           calls and exit first ran on main, whose faults then raised
 *           the mark above the peak), then late's calls; VmRSS read at
 *           the peak ("rss_self_peak: rss=N") and, under memcheck,
 *           libmemcheck's code pages present at the peak and at the
 *           very end ("rss_self_code: peak=N", "end=N")
 *   unmaps  1 MiB mapped, a page of it written and the whole unmapped,
 *           200 times (each unmap past footprint.c's RELEASE_MIN)
 *   forklittle  8 MiB written and freed, then latelittle in a forked
 *           child, which prints its lines (the parent prints nothing)
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rss_self.h"

static void *volatile keep;
static void *volatile kept_big; /* latelittle's 16 MiB, reachable to the end */

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
static int late_calls(void)
{
	struct rlimit r;
	if (prlimit(0, RLIMIT_NOFILE, NULL, &r) != 0 || setuid(getuid()) != 0 ||
	    at_quick_exit(at_quick) != 0)
		return 2;
	if (shmdt(&r) == 0)
		return 2; /* &r is no segment: EINVAL */
	return 0;
}

/* The pages of libmemcheck's code (its executable mapping) present in
 * this process (pagemap), -1 where none is mapped (the bare run). */
static long long memcheck_code_pages(void)
{
	static char maps[1 << 16];
	int fd = open("/proc/self/maps", O_RDONLY);
	ssize_t n = 0, got;
	while (fd >= 0 && (got = read(fd, maps + n, sizeof maps - 1 - (size_t)n)) > 0)
		n += got;
	if (fd >= 0)
		close(fd);
	maps[n] = 0;
	int pm = open("/proc/self/pagemap", O_RDONLY);
	long long pages = -1;
	for (char *line = maps; pm >= 0 && line && *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		char *name = strstr(line, "/libmemcheck.so");
		if (name && strstr(line, " r-xp ")) {
			char *dash;
			unsigned long long lo = strtoull(line, &dash, 16);
			unsigned long long hi = strtoull(dash + 1, NULL, 16);
			pages = pages < 0 ? 0 : pages;
			for (unsigned long long a = lo; a < hi; a += 4096) {
				unsigned long long e;
				if (pread(pm, &e, 8, (off_t)(a / 4096 * 8)) == 8 && e >> 63)
					pages++;
			}
		}
		line = end ? end + 1 : NULL;
	}
	if (pm >= 0)
		close(pm);
	return pages;
}

/* "rss_self_code: NAME=N\n": memcheck_code_pages, where libmemcheck is
 * mapped. */
static void code_line(const char *name)
{
	long long pages = memcheck_code_pages();
	char line[64], *at = line;
	if (pages < 0)
		return;
	memcpy(at, "rss_self_code: ", 15);
	at += 15;
	rss_self_put(&at, name, pages);
	at[-1] = '\n';
	if (write(1, line, (size_t)(at - line)) < 0)
		_exit(3);
}

static void code_at_exit(int status, void *arg)
{
	(void)status, (void)arg;
	code_line("end");
}

static bool little_mode;

/* In the latelittle mode, libmemcheck's code pages at the very end too
 * (registered while exit runs: after every destructor, as
 * rss_self_exit_print). */
__attribute__((destructor)) static void code_at_exit_register(void)
{
	if (little_mode)
		on_exit(code_at_exit, NULL);
}

/* The latelittle mode: the peak, 256 KiB given back, the late calls. */
static int late_little_mode(void)
{
	size_t big = 16u << 20, little = 256u << 10;
	char *b = malloc(big);
	char *l = mmap(NULL, little, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!b || l == MAP_FAILED)
		return 2;
	memset(b, 1, big);
	memset(l, 1, little);
	kept_big = b;
	/* libmemcheck's code pages, then the peak, summed exactly, right
	 * before the unmap: the pages code_line's own reads fault (its
	 * buffer, the C library's string functions) are the program's
	 * peak too (read before them, the bare peak was 64 KiB short
	 * under glibc of the RSS the unmap gives back from) */
	code_line("peak");
	rss_self_line("rss_self_peak: ", "rss", "VmRSS:");
	little_mode = true;
	munmap(l, little);
	return late_calls();
}

/* big bytes malloc'd, written and freed: false where malloc failed */
static bool written_and_freed(size_t big)
{
	char *b = malloc(big);
	if (!b)
		return false;
	memset(b, 1, big);
	free(b);
	return true;
}

static int late_mode(bool unload)
{
	void *m = unload ? dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL) : NULL;
	char *b = malloc(16u << 20);
	if ((unload && !m) || !b)
		return 2;
	memset(b, 1, 16u << 20);
	rss_self_line("rss_self_peak: ", "rss", "VmRSS:");
	free(b);
	if (m)
		dlclose(m);
	return late_calls();
}

int main(int argc, char **argv)
{
	rss_self_fixed_layout(argv);
	const char *mode = argc > 1 ? argv[1] : "plain";
	bool child = strcmp(mode, "fork") == 0 || strcmp(mode, "forklittle") == 0;
	/* forklittle: the parent's heap past 4 MiB before the fork */
	if (strcmp(mode, "forklittle") == 0 && !written_and_freed(8u << 20))
		return 2;
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
	} else if (strcmp(mode, "latelittle") == 0 || strcmp(mode, "forklittle") == 0) {
		if (late_little_mode() != 0)
			return 2;
	} else if (strcmp(mode, "unmaps") == 0) {
		for (int i = 0; i < 200; i++) {
			char *m = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				return 2;
			m[i * 4096] = 1;
			if (munmap(m, 1u << 20) != 0)
				return 2;
		}
	} else if (strcmp(mode, "heaperror") == 0) {
		if (!written_and_freed(16u << 20))
			return 2;
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
