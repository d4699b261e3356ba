/*
 * plain_rlimit.c - allocations that fail because the program limited its
 * own address space, as tests of out-of-memory paths do without memcheck
 * (preloaded only, never linked to it; no stdio).
 *
 * usage: plain_rlimit MODE
 *   setrlimit, setrlimit64, prlimit, prlimit64
 *             set RLIMIT_AS 256 MiB above the address space in use
 *             with that call, then malloc 512 KiB at a time until three
 *             calls have failed
 *   exec      set it with setrlimit, then exec this program as
 *             "inherited": memcheck starts under the limit
 *   1g        set it to 1 GiB, whatever is in use, with setrlimit, as a
 *             test of out-of-memory paths would: what memcheck maps for
 *             itself then takes from the program's allocations
 *   inherited the malloc loop alone
 *   raise     the inherited soft RLIMIT_AS raised to its hard limit
 *             (getrlimit, setrlimit), a thread started and joined,
 *             then the malloc loop: a limit that became immovable after
 *             memcheck's start-up
 *   tight     RLIMIT_AS 256 MiB, soft and hard, with setrlimit, as a
 *             test that wants malloc to fail soon does: what memcheck maps
 *             for itself must not take from it (a limit above the use
 *             read from /proc would count memcheck's mappings twice:
 *             the use read includes them)
 *   data      the same with RLIMIT_DATA
 *   late      WARM mallocs of 16 bytes, each freed (past the count at
 *             which count-only malloc reads the limits: lib/limits.c),
 *             then as setrlimit; prints WARM as a third number
 *   none      no limit: 100 mallocs of 512 KiB, then one of SIZE_MAX / 2,
 *             which fails
 * Everything allocated is freed.  Prints "ALLOCATED FAILED\n": the calls
 * that succeeded and those that failed.  Exit 0, or 1 on a setup error.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define BLOCK (512 * 1024)
#define MAX 4096

static void *blocks[MAX];

static void put_num(char *buf, size_t *len, unsigned long v)
{
	char digits[24];
	int n = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		buf[(*len)++] = digits[--n];
}

#define WARM 10000

static int say_warm(unsigned long ok, unsigned long failed, unsigned long warm)
{
	char buf[96];
	size_t len = 0;
	put_num(buf, &len, ok);
	buf[len++] = ' ';
	put_num(buf, &len, failed);
	if (warm) {
		buf[len++] = ' ';
		put_num(buf, &len, warm);
	}
	buf[len++] = '\n';
	return write(1, buf, len) == (ssize_t)len ? 0 : 1;
}

static int say(unsigned long ok, unsigned long failed)
{
	return say_warm(ok, failed, 0);
}

/* The address space in use, from /proc/self/statm (pages). */
static unsigned long vm_bytes(void)
{
	char buf[128];
	int fd = open("/proc/self/statm", O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoul(buf, NULL, 10) * (unsigned long)sysconf(_SC_PAGESIZE);
}

static unsigned long warmed;

static void *thread_main(void *arg)
{
	return arg;
}

static int loop(void)
{
	unsigned long ok = 0, failed = 0;
	while (failed < 3 && ok < MAX) {
		void *p = malloc(BLOCK);
		if (p)
			blocks[ok++] = p;
		else
			failed++;
	}
	for (unsigned long i = 0; i < ok; i++)
		free(blocks[i]);
	return say_warm(ok, failed, warmed);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 1;
	const char *mode = argv[1];
	if (strcmp(mode, "inherited") == 0)
		return loop();
	if (strcmp(mode, "raise") == 0) {
		struct rlimit rl;
		pthread_t t;
		if (getrlimit(RLIMIT_AS, &rl) != 0)
			return 1;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_AS, &rl) != 0 || pthread_create(&t, NULL, thread_main, NULL) != 0 ||
		    pthread_join(t, NULL) != 0)
			return 1;
		return loop();
	}
	if (strcmp(mode, "none") == 0) {
		unsigned long ok = 0;
		for (; ok < 100; ok++)
			if (!(blocks[ok] = malloc(BLOCK)))
				return 1;
		void *volatile huge = malloc(SIZE_MAX / 2);
		for (unsigned long i = 0; i < ok; i++)
			free(blocks[i]);
		return huge ? 1 : say(ok, 1);
	}
	if (strcmp(mode, "late") == 0) {
		for (; warmed < WARM; warmed++) {
			char *volatile p = malloc(16);
			if (!p)
				return 1;
			free(p);
		}
		mode = "setrlimit";
	}
	unsigned long vm = vm_bytes();
	if (!vm)
		return 1;
	rlim_t cap = vm + (256UL << 20);
	int rc;
	if (strcmp(mode, "tight") == 0 || strcmp(mode, "data") == 0) {
		struct rlimit rl = { 256UL << 20, 256UL << 20 };
		rc = setrlimit(mode[0] == 't' ? RLIMIT_AS : RLIMIT_DATA, &rl);
	} else if (strcmp(mode, "1g") == 0) {
		struct rlimit rl = { 1UL << 30, RLIM_INFINITY };
		rc = setrlimit(RLIMIT_AS, &rl);
	} else if (strcmp(mode, "setrlimit") == 0 || strcmp(mode, "exec") == 0) {
		struct rlimit rl = { cap, RLIM_INFINITY };
		rc = setrlimit(RLIMIT_AS, &rl);
	} else if (strcmp(mode, "setrlimit64") == 0) {
		struct rlimit64 rl = { cap, RLIM64_INFINITY };
		rc = setrlimit64(RLIMIT_AS, &rl);
	} else if (strcmp(mode, "prlimit") == 0) {
		struct rlimit rl = { cap, RLIM_INFINITY };
		rc = prlimit(0, RLIMIT_AS, &rl, NULL);
	} else if (strcmp(mode, "prlimit64") == 0) {
		struct rlimit64 rl = { cap, RLIM64_INFINITY };
		rc = prlimit64(getpid(), RLIMIT_AS, &rl, NULL);
	} else {
		return 1;
	}
	if (rc != 0)
		return 1;
	if (strcmp(mode, "exec") == 0) {
		char *args[] = { argv[0], "inherited", NULL };
		execv("/proc/self/exe", args);
		return 1;
	}
	return loop();
}
