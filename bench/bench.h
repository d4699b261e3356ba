/*
 * bench.h - what the benchmark programs (malloc_bench.c, tree_bench.c)
 * share: their generator, clock and peak-RSS reading, header-only since
 * each program is one source file built alone (bench.mk).
 *
 * None of it allocates: stdio's first printf would, so the peak RSS is
 * read with plain system calls, and a program's allocations stay the
 * benchmark's own.
 */
#ifndef MEMCHECK_BENCH_H
#define MEMCHECK_BENCH_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* xorshift64*: fast, fixed-seed, good enough to scatter slots and sizes. */
static inline uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* VmHWM in kB from /proc/self/status, without stdio (it would malloc). */
static inline long vm_hwm_kb(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t len = 0, n;
	while (len < (ssize_t)sizeof buf - 1 &&
	       (n = read(fd, buf + len, sizeof buf - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len > 0 ? len : 0] = 0;
	const char *p = strstr(buf, "VmHWM:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
