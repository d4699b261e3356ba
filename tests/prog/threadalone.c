/*
 * threadalone.c - a region's end lists the process's threads
 * (/proc/self/task) only when the status it reads anyway says there is
 * more than one.  The opens of that directory are counted by this
 * program's parent, which traces it (ptrace, system call stops): the
 * library makes its own system calls directly, which no syscall() of
 * the program's sees (session 31; before, this program counted them in
 * a syscall() of its own, which the library's calls reached first).
 * First a region ended with only the main thread: no listing, the block
 * in a global still reachable.  Then one ended while a thread that never
 * allocated holds the only pointer to a block on its stack: listed once,
 * the block still reachable.  Each region's end lies between two marks
 * (getppid with MARK as its argument) the tracer counts opens between.
 * Exit status 0 when all holds; 77 where ptrace is not allowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

#define MARK 0x7a11

static void mark(void)
{
	syscall(SYS_getppid, (long)MARK);
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

static int traced(void)
{
	struct memcheck_result r;
	int bad = 0;

	memcheck_begin("alone");
	handed = malloc(40);
	mark();
	memcheck_end(&r);
	mark();
	if (r.still_reachable.blocks != 1) {
		fprintf(stderr, "threadalone: one thread: still reachable %llu; expected 1\n",
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
	mark();
	memcheck_end(&r);
	mark();
	if (r.still_reachable.blocks != 1 || r.definitely_lost.blocks != 0) {
		fprintf(stderr, "threadalone: two threads: still reachable %llu, definitely lost "
			"%llu; expected 1 and 0\n", (unsigned long long)r.still_reachable.blocks,
			(unsigned long long)r.definitely_lost.blocks);
		bad = 1;
	}
	void *back;
	if (write(done[1], "d", 1) != 1 || pthread_join(t, &back))
		return 2;
	free(back);
	return bad;
}

/* Whether the string at addr in pid is path. */
static int names(pid_t pid, unsigned long addr, const char *path)
{
	size_t n = strlen(path) + 1;
	for (size_t at = 0; at < n; at += sizeof(long)) {
		errno = 0;
		long w = ptrace(PTRACE_PEEKDATA, pid, (void *)(addr + at), NULL);
		if (errno)
			return 0;
		size_t k = n - at < sizeof w ? n - at : sizeof w;
		if (memcmp(&w, path + at, k))
			return 0;
	}
	return 1;
}

int main(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(77);
		raise(SIGSTOP);
		exit(traced());
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "threadalone: ptrace not allowed here\n");
		return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
	/* opens of /proc/self/task between the marks: [0] the first region's
	 * end, [1] the second's */
	int opens[2] = { 0, 0 }, marks = 0, sig = 0;
	int entry = 1;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) != 0 ||
		    waitpid(pid, &st, 0) != pid)
			return 2;
		sig = 0;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st) == SIGSTOP ? 0 : WSTOPSIG(st);
			continue;
		}
		if (!(entry = !entry))
			continue; /* an exit stop follows each entry stop */
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
			return 2;
		if (regs.orig_rax == SYS_getppid && regs.rdi == MARK)
			marks++;
		else if (regs.orig_rax == SYS_openat && (marks == 1 || marks == 3) &&
			 names(pid, regs.rsi, "/proc/self/task"))
			opens[marks / 2]++;
	}
	int bad = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	if (marks != 4 || opens[0] != 0 || opens[1] != 1) {
		fprintf(stderr, "threadalone: %d marks, %d and %d listings; expected 4, 0 and 1\n",
			marks, opens[0], opens[1]);
		bad = 1;
	}
	return bad;
}
