/*
 * plain_table_faults.c - the page faults of a phase that keeps N blocks
 * live at once (argv[1], 4000 by default; 32 bytes each) and then frees
 * them, counted by the program itself around the phase: the CPU's page
 * faults (perf's software counter; only faults the CPU took, as perf
 * stat counts them), or, where perf_event_open is refused, the
 * process's minor faults (getrusage, which counts pages populated by a
 * system call too; argv[2] "rusage" asks for it).  Prints "faults N
 * perf" or "faults N rusage".
 * tests/test_ownmem.c (table_pages_faulted_once) runs it bare and under
 * memcheck: what memcheck adds is its own tables' pages.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int counter(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.exclude_kernel = 0;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static long long now(int fd)
{
	if (fd >= 0) {
		long long v = 0;
		return read(fd, &v, sizeof v) == sizeof v ? v : -1;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4000;
	if (n < 1)
		return 2;
	void **v = malloc((size_t)n * sizeof *v);
	if (!v)
		return 1;
	int fd = argc > 2 && !strcmp(argv[2], "rusage") ? -1 : counter();
	long long before = now(fd);
	for (int i = 0; i < n; i++)
		if (!(v[i] = malloc(32)))
			return 1;
	for (int i = 0; i < n; i++)
		free(v[i]);
	long long after = now(fd);
	free(v);
	printf("faults %lld %s\n", after - before, fd >= 0 ? "perf" : "rusage");
	return 0;
}
