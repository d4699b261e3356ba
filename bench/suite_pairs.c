/*
 * suite_pairs.c - one short process under two libmemcheck builds, side by
 * side: N pairs, each runs the program once preloaded with A and once with
 * B (the order swapped every other pair), and the medians of the pairs'
 * differences are printed, with their quartiles: the process's own CPU
 * time (user + system, wait4's rusage) and its wall time.
 *
 *   suite_pairs LIB_A LIB_B N PROGRAM [ARG...]     (make bench-pairs)
 *
 * Why pairs: bench/suite.sh's rows are aggregates of 300 processes a
 * round, which spread 15-20% at the load these shared machines carry;
 * a start-up change worth a few microseconds a process (session 52's
 * verdict without /proc) drowns there.  A pair runs its two processes
 * back to back, under the same load, and the median of N differences
 * resolves ~2-3 us here (A against a copy of itself: +2 us, quartiles
 * -57 and +59, 600 pairs at load 14).  The program's environment is
 * LD_PRELOAD and LANG=C.UTF-8 alone, as the suite's; its output goes to
 * /dev/null; an exit status that differs between A and B is said (a
 * verdict that changed), once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* One run of argv preloaded with lib: its CPU time in us (wall in *wall,
 * exit status in *status); exits 2 where it cannot be started. */
static double run(const char *lib, char *const argv[], double *wall, int *status)
{
	char pre[4096];
	if ((size_t)snprintf(pre, sizeof pre, "LD_PRELOAD=%s", lib) >= sizeof pre) {
		fprintf(stderr, "suite_pairs: %s: path too long\n", lib);
		exit(2);
	}
	char *env[] = { pre, "LANG=C.UTF-8", NULL };
	double t0 = now_us();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "suite_pairs: fork: %s\n", strerror(errno));
		exit(2);
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execve(argv[0], argv, env);
		_exit(127);
	}
	struct rusage ru;
	if (wait4(pid, status, 0, &ru) != pid) {
		fprintf(stderr, "suite_pairs: wait4: %s\n", strerror(errno));
		exit(2);
	}
	*wall = now_us() - t0;
	if (WIFEXITED(*status) && WEXITSTATUS(*status) == 127) {
		fprintf(stderr, "suite_pairs: %s: cannot be run\n", argv[0]);
		exit(2);
	}
	return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
	       (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void quartiles(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, by_value);
	printf("  %-26s median %+8.1f us  (quartiles %+.1f, %+.1f)\n", what, v[n / 2], v[n / 4],
	       v[3 * n / 4]);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: suite_pairs LIB_A LIB_B N PROGRAM [ARG...]\n");
		return 2;
	}
	char *end;
	long n = strtol(argv[3], &end, 10);
	if (*end || n < 4 || n > 1000000) {
		fprintf(stderr, "suite_pairs: N: expected a number of pairs from 4 to 1000000, not '%s'\n",
			argv[3]);
		return 2;
	}
	for (int i = 1; i <= 2; i++)
		if (access(argv[i], R_OK) != 0) {
			fprintf(stderr, "suite_pairs: %s: %s\n", argv[i], strerror(errno));
			return 2;
		}
	double *cpu = malloc((size_t)n * sizeof *cpu), *wall = malloc((size_t)n * sizeof *wall);
	double *cpu_a = malloc((size_t)n * sizeof *cpu_a);
	if (!cpu || !wall || !cpu_a) {
		fprintf(stderr, "suite_pairs: out of memory\n");
		return 2;
	}
	int said = 0;
	for (long i = 0; i < n; i++) {
		double wa, wb, a, b;
		int sa, sb;
		if (i & 1) {
			b = run(argv[2], argv + 4, &wb, &sb);
			a = run(argv[1], argv + 4, &wa, &sa);
		} else {
			a = run(argv[1], argv + 4, &wa, &sa);
			b = run(argv[2], argv + 4, &wb, &sb);
		}
		if (sa != sb && !said++)
			fprintf(stderr, "suite_pairs: exit status 0x%x under A, 0x%x under B\n", sa, sb);
		cpu[i] = b - a;
		wall[i] = wb - wa;
		cpu_a[i] = a;
	}
	qsort(cpu_a, (size_t)n, sizeof *cpu_a, by_value);
	printf("%s: %ld pairs, A's CPU time a process (median) %.0f us; B - A:\n", argv[4], n,
	       cpu_a[n / 2]);
	quartiles("CPU time (user + system)", cpu, (int)n);
	quartiles("wall time", wall, (int)n);
	return 0;
}
