/*
 * plain_phases.c - programs whose memory figures memcheck must not
 * change: what each phase makes resident is the program's own, and the
 * peak RSS memcheck reports for it must be the one the same program has
 * bare (tests/test_fidelity.c).
 *
 * Built twice from this file: plain_phases, not linked to memcheck (run
 * bare, or with the library preloaded), and phases_regions
 * (-DWITH_REGIONS, linked), where each phase is a region.  Bare, each
 * phase measures itself as memcheck measures a region: the kernel's
 * high-water mark reset before it (/proc/self/clear_refs), read after
 * it.  It prints one line per phase, "PHASE peak=BYTES", then
 * "process peak=BYTES" (VmHWM at the end); under memcheck those lines
 * are meaningless (memcheck resets the mark itself) and the report is
 * read instead.
 *
 * usage: plain_phases CASE
 *   three   1 M... (scaled) 64-byte blocks, all freed; then 256-byte
 *           blocks, all freed; then 4 KiB blocks, all freed
 *   stacks  20,000 blocks from as many distinct call stacks (the stack
 *           depot grows), all live at once, then freed
 *   threads 4 threads with 100,000 live 64-byte blocks each, all live at
 *           once
 *   leak    60,000 blocks, all but 200 freed, those lost (the report
 *           scans and symbolizes at exit)
 *   fork    phase "three" in a child process (a region there)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef WITH_REGIONS
#include <memcheck/memcheck.h>
#endif

#include "proc_field.h"

/* ---- measuring a phase bare ------------------------------------------ */

static unsigned long long hwm(void)
{
	long long kb = proc_field("/proc/self/status", "VmHWM:");
	return kb < 0 ? 0 : (unsigned long long)kb * 1024;
}

static __attribute__((unused)) void reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "5", 1) != 1)
			perror("clear_refs");
		close(fd);
	}
}

/* Lines are kept until the end: stdio's buffer is not part of a phase. */
static char lines[16][96];
static int nlines;

static void phase_begin(const char *name)
{
#ifdef WITH_REGIONS
	memcheck_begin(name);
#else
	(void)name;
	reset_hwm();
#endif
}

static void phase_end(const char *name)
{
#ifdef WITH_REGIONS
	(void)name;
	if (memcheck_end(NULL) < 0)
		exit(3);
#else
	snprintf(lines[nlines++], sizeof lines[0], "%s peak=%llu", name, hwm());
#endif
}

static void print_lines(void)
{
	for (int i = 0; i < nlines; i++)
		printf("%s\n", lines[i]);
	printf("process peak=%llu\n", hwm());
	fflush(stdout);
}

/* ---- the workloads ---------------------------------------------------- */

static void fill(size_t n, size_t size)
{
	char **v = malloc(n * sizeof *v);
	if (!v)
		exit(2);
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] = malloc(size)))
			exit(2);
		memset(v[i], (int)i, size < 64 ? size : 64);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void three(void)
{
	phase_begin("small_blocks");
	fill(300000, 64);
	phase_end("small_blocks");
	phase_begin("medium_blocks");
	fill(80000, 256);
	phase_end("medium_blocks");
	phase_begin("page_blocks");
	fill(8000, 4096);
	phase_end("page_blocks");
}

/* A distinct call stack for every block: the recursion's depth and the
 * branch taken at each level spell the index in binary. */
#define STACK_BITS 15
static char *kept[1 << STACK_BITS];

static __attribute__((noinline)) void branch1(unsigned i, int level);
static __attribute__((noinline)) void branch0(unsigned i, int level)
{
	if (level == STACK_BITS) {
		kept[i] = malloc(1000);
		if (kept[i])
			memset(kept[i], 1, 1000);
		return;
	}
	if (i >> level & 1)
		branch1(i, level + 1);
	else
		branch0(i, level + 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static __attribute__((noinline)) void branch1(unsigned i, int level)
{
	if (level == STACK_BITS) {
		kept[i] = malloc(1000);
		if (kept[i])
			memset(kept[i], 2, 1000);
		return;
	}
	if (i >> level & 1)
		branch1(i, level + 1);
	else
		branch0(i, level + 1);
	__asm__ volatile("" ::: "memory");
}

static void stacks(void)
{
	phase_begin("many_stacks");
	for (unsigned i = 0; i < 20000; i++)
		branch0(i, 0);
	for (unsigned i = 0; i < 20000; i++)
		free(kept[i]);
	phase_end("many_stacks");
}

/* All four threads' blocks are live at once (a barrier between filling
 * and freeing): the peak does not depend on how the threads happen to
 * be scheduled, which memcheck's own work changes. */
static pthread_barrier_t all_filled;

static void *thread_main(void *arg)
{
	(void)arg;
	char **v = malloc(100000 * sizeof *v);
	if (!v)
		exit(2);
	for (size_t i = 0; i < 100000; i++)
		if ((v[i] = malloc(64)))
			memset(v[i], (int)i, 64);
	pthread_barrier_wait(&all_filled);
	for (size_t i = 0; i < 100000; i++)
		free(v[i]);
	free(v);
	return NULL;
}

static void threads(void)
{
	phase_begin("threads");
	pthread_barrier_init(&all_filled, NULL, 4);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
			exit(2);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	phase_end("threads");
}

static void leak(void)
{
	phase_begin("leak");
	char **v = malloc(60000 * sizeof *v);
	if (!v)
		exit(2);
	for (int i = 0; i < 60000; i++)
		if ((v[i] = malloc(128)))
			memset(v[i], 3, 128);
	for (int i = 0; i < 60000; i++)
		if (i % 300)
			free(v[i]);
	free(v); /* every 300th block is lost */
	phase_end("leak");
}

static void forked(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		three();
		print_lines();
		exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		exit(4);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "three";
	if (!strcmp(c, "three"))
		three();
	else if (!strcmp(c, "stacks"))
		stacks();
	else if (!strcmp(c, "threads"))
		threads();
	else if (!strcmp(c, "leak"))
		leak();
	else if (!strcmp(c, "fork")) {
		forked();
		return 0;
	} else {
		fprintf(stderr, "usage: plain_phases three|stacks|threads|leak|fork\n");
		return 2;
	}
	print_lines();
	return 0;
}
