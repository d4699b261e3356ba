/*
 * plain_libc_threads.c - threads the C library starts itself, inside,
 * not through the name pthread_create: a SIGEV_THREAD timer's (its
 * helper thread, then a thread for each expiry) and an aio_read's (its
 * worker).  Each thread's DTV is the dynamic linker's calloc, which
 * memcheck counts without libmemcheck's own entry as valgrind counts it
 * (tests/test_fidelity.c; c7d4a67 counted 16 bytes more a thread).
 * Each mode makes the same threads every run.
 *
 * Usage: plain_libc_threads none|timer|aio|tls-none|tls-timer.  "timer"
 * waits for EXPIRIES expiries of a 1 ms timer, one at a time; "aio" reads
 * /proc/self/exe's first 256 bytes; "none" does neither (the same
 * program's base).  "tls-timer" dlopens a library with thread-local
 * storage (libtls_slot1.so, beside the program) first, which gives the
 * DTVs the dynamic linker makes from then on one entry more than the
 * main thread's own, then runs "timer"; "tls-none" only dlopens it (its
 * base).  Exits 0.
 */
#include <dlfcn.h>
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One: the expiries' threads are made one at a time, and whether the
 * next takes the cached stack of the one before (and its DTV) or makes
 * its own depends on whether that one has ended (under valgrind, 3
 * expiries made 1,104 or 832 bytes from run to run). */
#define EXPIRIES 1

static atomic_int fired;

static void notify(union sigval v)
{
	(void)v;
	atomic_fetch_add(&fired, 1);
}

static int timer_threads(void)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD;
	ev.sigev_notify_function = notify;
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &ev, &t))
		return 1;
	for (int i = 1; i <= EXPIRIES; i++) {
		struct itimerspec its = { .it_value = { 0, 1000000 } };
		if (timer_settime(t, 0, &its, NULL))
			return 1;
		while (atomic_load(&fired) < i)
			usleep(1000);
	}
	usleep(20000); /* the last expiry's thread ends */
	return timer_delete(t) != 0;
}

static int aio_thread(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		return 1;
	static char buf[256];
	struct aiocb cb;
	memset(&cb, 0, sizeof cb);
	cb.aio_fildes = fd;
	cb.aio_buf = buf;
	cb.aio_nbytes = sizeof buf;
	if (aio_read(&cb))
		return 1;
	const struct aiocb *list[1] = { &cb };
	while (aio_error(&cb) == EINPROGRESS)
		aio_suspend(list, 1, NULL);
	return aio_return(&cb) != (ssize_t)sizeof buf || close(fd) != 0;
}

/* libtls_slot1.so, from the directory of /proc/self/exe, kept open. */
static int load_tls(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
	if (n <= 0)
		return 1;
	path[n] = 0;
	char *slash = strrchr(path, '/');
	if (!slash)
		return 1;
	strcpy(slash + 1, "libtls_slot1.so");
	return dlopen(path, RTLD_NOW) == NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	if (strncmp(mode, "tls-", 4) == 0) {
		if (load_tls())
			return 2;
		mode += 4;
	}
	if (strcmp(mode, "timer") == 0)
		return timer_threads();
	if (strcmp(mode, "aio") == 0)
		return aio_thread();
	return 0;
}
