/*
 * threadalone.c - a region's end lists the process's threads
 * (/proc/self/task) only when the status it reads anyway says there is
 * more than one: the opens of that directory are counted by this
 * program's own syscall(), which libmemcheck's calls reach first.  First a
 * region ended with only the main thread: no listing, the block in a
 * global still reachable.  Then one ended while a thread that never
 * allocated holds the only pointer to a block on its stack: listed
 * once, the block still reachable.  Exit status 0 when all holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

static volatile int task_opens;

/* The system call itself: syscall(3) is the one this program replaces,
 * and libmemcheck makes its calls through it from its first moments, as
 * the program's constructors have not run yet. */
static long raw_syscall(long n, const long a[6])
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a[3];
	register long r8 __asm__("r8") = a[4];
	register long r9 __asm__("r9") = a[5];
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
#else
#error "threadalone.c: no raw system call for this architecture"
#endif
}

/* libmemcheck makes its system calls through syscall(3), which this
 * definition reaches first.  Six arguments passed on, as syscall(3)
 * itself loads six registers whatever the call. */
long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_openat && (int)a[0] == AT_FDCWD && !strcmp((const char *)a[1], "/proc/self/task"))
		task_opens++;
	return raw_syscall(number, a);
}

static void *volatile handed;
static int go[2], taken[2], done[2];

/* Takes the block from handed into a local of its own stack, and waits
 * there; it never calls malloc. */
static void *holder(void *arg)
{
	(void)arg;
	char c;
	if (read(go[0], &c, 1) != 1)
		return NULL;
	void *volatile mine = handed;
	handed = NULL;
	if (write(taken[1], "t", 1) != 1 || read(done[0], &c, 1) != 1)
		return NULL;
	return mine;
}

int main(void)
{
	struct memcheck_result r;
	int bad = 0;

	memcheck_begin("alone");
	handed = malloc(40);
	int before = task_opens;
	memcheck_end(&r);
	if (task_opens != before || r.still_reachable.blocks != 1) {
		fprintf(stderr, "threadalone: one thread: %d listings, still reachable %llu; "
			"expected 0 and 1\n", task_opens - before,
			(unsigned long long)r.still_reachable.blocks);
		bad = 1;
	}
	free(handed);
	handed = NULL;

	pthread_t t;
	char c;
	if (pipe(go) || pipe(taken) || pipe(done) || pthread_create(&t, NULL, holder, NULL))
		return 2;
	memcheck_begin("with a thread");
	handed = malloc(56);
	if (write(go[1], "g", 1) != 1 || read(taken[0], &c, 1) != 1)
		return 2;
	before = task_opens;
	memcheck_end(&r);
	if (task_opens != before + 1 || r.still_reachable.blocks != 1 ||
	    r.definitely_lost.blocks != 0) {
		fprintf(stderr, "threadalone: two threads: %d listings, still reachable %llu, "
			"definitely lost %llu; expected 1, 1 and 0\n", task_opens - before,
			(unsigned long long)r.still_reachable.blocks,
			(unsigned long long)r.definitely_lost.blocks);
		bad = 1;
	}
	void *back;
	if (write(done[1], "d", 1) != 1 || pthread_join(t, &back))
		return 2;
	free(back);
	return bad;
}
