/*
 * plain_nofile.c - a program that lowers its open-file limit and opens
 * files until it gets EMFILE (libevent's regress tests do: listener/
 * error_unlock, dns/bufferevent_connect_hostname_emfile), then leaks a
 * block and exits with every descriptor still open: under memcheck it
 * must count as many files as without it, read back the limit it set,
 * and still have its leak reported (tests/test_nofile.c).  Preloaded
 * only, never linked to memcheck.
 *
 * usage: plain_nofile N MODE [region]
 *   N      the soft and hard RLIMIT_NOFILE it sets (setrlimit), or 0 to
 *          keep the limit it inherited; "inheritN": N set by a raw
 *          prlimit64 system call, which memcheck does not see, and the
 *          program run again with 0, so that it starts at a limit it
 *          inherited with soft and hard alike (`ulimit -n N` in its
 *          shell): memcheck can lift nothing there
 *   MODE   "cap" as run (root here: CAP_SYS_RESOURCE), or "nocap":
 *          CAP_SYS_RESOURCE dropped from the effective set first, as a
 *          user without it runs (memcheck may then not raise a hard
 *          limit the program lowered)
 *          "freeK" (K 0 or 1): the limit set by a raw prlimit64, soft
 *          and hard alike, to the descriptors it holds (the lowest free
 *          number) and K more, then one file opened and closed, and the
 *          leak; "free-" the same with no limit set, to compare with.
 *          Prints "free=K fd=OPENED errno=NAME" (OPENED -1 where the open
 *          failed; errno as the program last saw it, after its printf)
 *   region the leak inside a region "full" (memcheck_begin and _end
 *          through weak references: bare, there are none), ended with
 *          the table full
 * Prints "limit=CUR/MAX opened=K errno=NAME" (the limit getrlimit reads
 * back after the set, the files opened before the first failure and its
 * errno).  Exit 0, or 1 on a setup error.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drop_cap.h"

#include "plain_leak_common.h"

struct memcheck_result;
extern void memcheck_begin(const char *name) __attribute__((weak));
extern int memcheck_end(struct memcheck_result *out) __attribute__((weak));

__attribute__((noinline)) static void leak(size_t n)
{
	void *volatile p = malloc(n);
	memset(p, 0, n);
}

/* The limit at the descriptors held and k more (k "-": none set), the
 * way a program that knows what it holds guards itself; memcheck's exit
 * then has k numbers, or none, for its own files. */
static int at_limit(const char *k)
{
	int held = 0;
	while (fcntl(held, F_GETFD) != -1)
		held++;
	if (*k != '-') {
		struct rlimit rl;
		rl.rlim_cur = rl.rlim_max = (rlim_t)(held + atoi(k));
		if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL) != 0) {
			perror("prlimit64");
			return 1;
		}
	}
	errno = 0;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		close(fd);
	leak(48);
	scrub();
	printf("free=%s fd=%d errno=%s\n", k, fd < 0 ? -1 : fd - held,
	       err ? strerrorname_np(err) : "0");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 1;
	bool region = argc == 4 && !strcmp(argv[3], "region") && memcheck_begin;
	if (!strncmp(argv[1], "inherit", 7)) {
		struct rlimit rl;
		rl.rlim_cur = rl.rlim_max = (rlim_t)atol(argv[1] + 7);
		if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL) != 0) {
			perror("prlimit64");
			return 1;
		}
		char *again[] = { argv[0], "0", argv[2], argc == 4 ? argv[3] : NULL, NULL };
		execv("/proc/self/exe", again);
		perror("execv");
		return 1;
	}
	if (!strcmp(argv[2], "nocap"))
		drop_resource_cap();
	if (!strncmp(argv[1], "free", 4))
		return at_limit(argv[1] + 4);
	long n = atol(argv[1]);
	if (n > 0) {
		struct rlimit rl = { (rlim_t)n, (rlim_t)n };
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			perror("setrlimit");
			return 1;
		}
	}
	if (region)
		memcheck_begin("full");
	struct rlimit now;
	if (getrlimit(RLIMIT_NOFILE, &now) != 0)
		return 1;
	long opened = 0;
	int err = 0;
	for (;;) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0) {
			err = errno;
			break;
		}
		opened++;
	}
	leak(48);
	scrub();
	if (region)
		memcheck_end(NULL);
	printf("limit=%lu/%lu opened=%ld errno=%s\n", (unsigned long)now.rlim_cur,
	       (unsigned long)now.rlim_max, opened, strerrorname_np(err));
	fflush(stdout);
	return 0;
}
