/*
 * plain_hwm26.c - a program that reads its own peak RSS, and a parent
 * that reads its child's (tests/test_hwm26.c).
 *
 * self MODE: 48 MiB mapped, written and unmapped (the peak, then the
 * drop: mmap itself, so that every allocator drops it alike), then what
 * makes memcheck reset the kernel's high-water mark in MODE's way:
 *   region   a region begun and ended (memcheck_begin through a weak
 *            reference, as a program not linked with libmemcheck has
 *            it: bare, there is none and nothing is called);
 *   threads  four threads that each allocate and free 20,000 blocks
 *            (memcheck's tables grow: its footprint folds and resets);
 * and prints ru_maxrss of RUSAGE_SELF and RUSAGE_THREAD and VmHWM of
 * /proc/self/status (KiB).
 * parent MODE: runs `self MODE` in a child (this program again) and
 * prints the child's ru_maxrss as wait4 gives it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_field.h"

#define PEAK ((size_t)48 << 20)

struct memcheck_result;
extern void memcheck_begin(const char *name) __attribute__((weak));
extern int memcheck_end(struct memcheck_result *out) __attribute__((weak));

static void *churn(void *arg)
{
	size_t n = (size_t)arg;
	char **v = malloc(n * sizeof *v);
	if (!v)
		abort();
	for (size_t i = 0; i < n; i++)
		v[i] = malloc(i % 100 + 1);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return NULL;
}

static int self(const char *mode)
{
	char *p = mmap(NULL, PEAK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	memset(p, 1, PEAK);
	munmap(p, PEAK);
	if (!strcmp(mode, "region")) {
		if (memcheck_begin) {
			memcheck_begin("after the peak");
			memcheck_end(NULL);
		}
	} else {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, churn, (void *)(size_t)20000);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	struct rusage s, t;
	if (getrusage(RUSAGE_SELF, &s) || getrusage(RUSAGE_THREAD, &t))
		return 3;
	printf("self=%ld thread=%ld vmhwm=%lld\n", s.ru_maxrss, t.ru_maxrss,
	       proc_field("/proc/self/status", "VmHWM:"));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "self"))
		return self(argv[2]);
	if (argc != 3 || strcmp(argv[1], "parent"))
		return 2;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl(argv[0], argv[0], "self", argv[2], (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 4;
	printf("child=%ld\n", ru.ru_maxrss);
	return 0;
}
