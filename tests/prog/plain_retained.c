/*
 * plain_retained.c - about 100 MiB of small blocks allocated and all
 * freed inside one region, so that what the allocator keeps afterwards
 * is its own choice, not the program's.  Not linked to memcheck: with
 * libmemcheck.so preloaded it finds memcheck_begin/memcheck_end through
 * dlsym, as any program could, and prints what memcheck_end returned;
 * without it, it only runs the workload.
 *
 * usage: plain_retained [threads|none|worker]
 *   A block allocated before the region and freed after it sits above
 *   the workload's memory, as the program's older blocks would: glibc
 *   then cannot cut the freed space off the top of its heap, and whether
 *   it retains anything does not depend on the order of the frees.
 *   threads: a second thread is alive (idle) when the region ends.
 *   none: no workload at all, before the region or in it (the block
 *   table is written all the same): the same process less the memory
 *   the workload leaves with the allocator.
 *   worker: no workload before the region; in it, the workload runs on a
 *   second thread, joined before the region ends (glibc serves it from
 *   a thread arena of its own).
 * Prints one line: "retained=N after_release=N live=N lost=N allocs=N"
 * (N a number or "unknown"), or "memcheck=absent".  No stdio: its buffers
 * would be allocations of their own.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

#define NBLOCKS 200000

static void *blocks[NBLOCKS];

/* 64..1024 bytes, spread over every size class; 103.8 MiB in all. */
static size_t block_size(size_t i)
{
	return 64 + (i * 7919u) % 961;
}

/* Allocate and write every block: written, so resident, as a
 * program's data would be. */
static int allocate(void)
{
	for (size_t i = 0; i < NBLOCKS; i++) {
		blocks[i] = malloc(block_size(i));
		if (!blocks[i])
			return -1;
		memset(blocks[i], (int)i, block_size(i));
	}
	return 0;
}

/* In allocation order. */
static void release(void)
{
	for (size_t i = 0; i < NBLOCKS; i++)
		free(blocks[i]);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(3);
}

static const char *fig(uint64_t v, char buf[32])
{
	if (v == MEMCHECK_UNKNOWN)
		return "unknown";
	snprintf(buf, 32, "%llu", (unsigned long long)v);
	return buf;
}

static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;

static void *idle(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&hold);      /* until the region has ended */
	pthread_mutex_unlock(&hold);
	return NULL;
}

static void *work(void *arg)
{
	if (allocate() < 0)
		*(int *)arg = -1;
	release();
	return NULL;
}

int main(int argc, char **argv)
{
	bool threads = argc > 1 && strcmp(argv[1], "threads") == 0;
	bool none = argc > 1 && strcmp(argv[1], "none") == 0;
	bool worker = argc > 1 && strcmp(argv[1], "worker") == 0;
	void (*begin)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memcheck_begin");
	int (*end)(struct memcheck_result *) =
		(int (*)(struct memcheck_result *))dlsym(RTLD_DEFAULT, "memcheck_end");

	if (none || worker)
		memset(blocks, 0, sizeof blocks);
	else if (allocate() < 0)
		return 2;
	void *pin = malloc(64);
	if (!none && !worker)
		release();
	pthread_t t;
	if (threads) {
		pthread_mutex_lock(&hold);
		if (pthread_create(&t, NULL, idle, NULL) != 0)
			return 2;
	}
	if (!begin || !end) {
		if (allocate() < 0)
			return 2;
		release();
		say("memcheck=absent\n");
	} else {
		struct memcheck_result r;
		begin("retained");
		if (worker) {
			int rc = 0;
			if (pthread_create(&t, NULL, work, &rc) != 0 || pthread_join(t, NULL) != 0 || rc)
				return 2;
		} else if (!none) {
			if (allocate() < 0)
				return 2;
			release();
		}
		if (end(&r) < 0)
			return 1;
		char line[256], a[32], b[32], c[32], d[32], e[32];
		snprintf(line, sizeof line, "retained=%s after_release=%s live=%s lost=%s allocs=%s\n",
			 fig(r.retained_bytes, a), fig(r.retained_after_release, b),
			 fig(r.live_bytes, c), fig(r.definitely_lost.bytes, d), fig(r.allocs, e));
		say(line);
	}
	if (threads) {
		pthread_mutex_unlock(&hold);
		pthread_join(t, NULL);
	}
	free(pin);
	return 0;
}
