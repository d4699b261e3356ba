/*
 * plain_sandbox.c - a program that takes away its own right to open
 * files, as xz 5.6's command line does before it decompresses:
 * no_new_privs through prctl(2), then a Landlock ruleset that handles
 * every file access and allows none (landlock_restrict_self through
 * syscall(2)).  Then it works: a thread created and joined (the dynamic
 * linker's thread block, which a shipped suppression names by a static
 * function of ld.so), a block kept in a global, and with "leak" a block
 * lost (tests/test_sandbox.c: memcheck's exit still reads its roots,
 * its suppressions, the objects' names and writes its report).
 *
 * usage: plain_sandbox clean|leak
 * Prints "sandboxed=1" where the kernel enforces the ruleset (an open of
 * the program's own file fails), "sandboxed=0" where it has no Landlock.
 * Exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

char *plain_sandbox_keep; /* a global: the block is still reachable */

static __attribute__((noinline)) void *sandbox_leak(size_t n)
{
	void *p = malloc(n);
	memset(p, 1, n);
	return p;
}

static void *work(void *arg)
{
	return arg;
}

static int restrict_self(void)
{
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	struct landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				     LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
				     LANDLOCK_ACCESS_FS_MAKE_REG,
	};
	int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (fd < 0)
		return 0;
	int rc = (int)syscall(SYS_landlock_restrict_self, fd, 0);
	close(fd);
	if (rc != 0)
		return 0;
	int probe = open("/proc/self/exe", O_RDONLY);
	if (probe >= 0) {
		close(probe);
		return 0;
	}
	return errno == EACCES;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 1;
	plain_sandbox_keep = sandbox_leak(24);
	int sandboxed = restrict_self();
	pthread_t t;
	if (pthread_create(&t, NULL, work, NULL) == 0)
		pthread_join(t, NULL);
	if (!strcmp(argv[1], "leak"))
		sandbox_leak(77);
	printf("sandboxed=%d\n", sandboxed);
	return 0;
}
