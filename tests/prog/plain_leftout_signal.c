/*
 * plain_leftout_signal - what handling a signal adds to the process's
 * mappings: the number of lines of /proc/self/maps and VmSize before and
 * after ten signals caught by a handler installed with sigaction, read
 * with read(2) into static buffers (no allocation of its own between the
 * two reads).  Bare, nothing: test_leftout runs it left out of a
 * preloaded memcheck and wants the same.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[1 << 20];
static volatile sig_atomic_t caught;

static void on_usr1(int sig)
{
	(void)sig;
	caught++;
}

/* The file read whole into buf; its length. */
static size_t slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		exit(2);
	}
	size_t n = 0;
	ssize_t r;
	while (n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return n;
}

static void measure(long *lines, long *vmsize)
{
	size_t n = slurp("/proc/self/maps");
	*lines = 0;
	for (size_t i = 0; i < n; i++)
		*lines += buf[i] == '\n';
	slurp("/proc/self/status");
	const char *v = strstr(buf, "VmSize:");
	*vmsize = v ? strtol(v + 7, NULL, 10) : -1;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 2;
	}
	long l0, v0, l1, v1;
	measure(&l0, &v0);
	for (int i = 0; i < 10; i++)
		raise(SIGUSR1);
	measure(&l1, &v1);
	printf("caught %d; mappings +%ld, VmSize +%ld kB\n", (int)caught, l1 - l0, v1 - v0);
	return 0;
}
