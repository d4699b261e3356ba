/*
 * getenv_bench.c - what a call of the program's getenv costs: bare (the C
 * library's), under this libmemcheck (gslice.c's getenv, progname.c's
 * walk) and, with BENCH_OTHER, under another build, by turns.
 *
 *   getenv_bench ROUNDS CALLS LIB [OTHER_LIB]      (make bench-getenv)
 *
 * Each round runs itself once a mode (bare, LIB, OTHER_LIB) in the order
 * of the round (rotated), each child timing CALLS calls of getenv for
 * each name below in a loop (CLOCK_MONOTONIC around it) with the
 * environment it was started with; the medians of the rounds' ns a call
 * are printed per name and mode, with each mode's median ratio to bare
 * (each round's ratio, then their median).  check (libcheck) reads
 * CK_MAX_MSG_SIZE, unset, at every message: trial52 found memcheck's
 * getenv at 2.8x the C library's there (doc/costs.md env53).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const names[] = { "CK_MAX_MSG_SIZE", "HOME", "G_SLICE" };
#define NNAMES (sizeof names / sizeof names[0])
#define MAXROUNDS 101

/* the child: ns a call of each name, one line */
static int child(long calls)
{
	const char *volatile name;
	size_t sink = 0;
	for (size_t k = 0; k < NNAMES; k++) {
		name = names[k];
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < calls; i++)
			sink += (size_t)getenv(name);
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("%s%.3f", k ? " " : "",
		       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)calls);
	}
	printf(" %zu\n", sink & 1);
	return 0;
}

/* one child run under preload (NULL: bare), its figures in ns[] */
static int run(const char *self, const char *calls, const char *preload, double ns[NNAMES])
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		execl(self, self, "--child", calls, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char line[256] = "";
	ssize_t n = read(fd[0], line, sizeof line - 1);
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	line[n] = '\0';
	char *p = line;
	for (size_t k = 0; k < NNAMES; k++)
		ns[k] = strtod(p, &p);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(atol(argv[2]));
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: getenv_bench ROUNDS CALLS LIB [OTHER_LIB]\n");
		return 2;
	}
	int rounds = atoi(argv[1]);
	if (rounds < 1 || rounds > MAXROUNDS || atol(argv[2]) < 1) {
		fprintf(stderr, "getenv_bench: ROUNDS 1-%d, CALLS at least 1\n", MAXROUNDS);
		return 2;
	}
	const char *modes[3] = { NULL, argv[3], argc == 5 ? argv[4] : NULL };
	const char *labels[3] = { "bare", "this", "other" };
	int nmodes = argc == 5 ? 3 : 2;
	static double ns[3][NNAMES][MAXROUNDS], ratio[3][NNAMES][MAXROUNDS];
	for (int r = 0; r < rounds; r++) {
		double got[3][NNAMES];
		for (int i = 0; i < nmodes; i++) {
			int m = (i + r) % nmodes;
			if (run("/proc/self/exe", argv[2], modes[m], got[m]) != 0) {
				fprintf(stderr, "getenv_bench: the %s run failed\n", labels[m]);
				return 1;
			}
		}
		for (int m = 0; m < nmodes; m++)
			for (size_t k = 0; k < NNAMES; k++) {
				ns[m][k][r] = got[m][k];
				ratio[m][k][r] = got[m][k] / got[0][k];
			}
	}
	printf("getenv, ns a call (median of %d rounds; ratio to bare, median of the rounds')\n", rounds);
	for (size_t k = 0; k < NNAMES; k++) {
		printf("%-16s %-5s", names[k], getenv(names[k]) ? "set" : "unset");
		for (int m = 0; m < nmodes; m++) {
			printf("  %s %.2f", labels[m], median(ns[m][k], rounds));
			if (m)
				printf(" (%.2fx)", median(ratio[m][k], rounds));
		}
		printf("\n");
	}
	return 0;
}
