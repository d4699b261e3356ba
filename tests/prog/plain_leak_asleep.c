/*
 * plain_leak_asleep.c - threads that keep a block while they wait in a
 * system call, and a thread that keeps one while it runs with every
 * signal blocked, through rounds of regions (memcheck_begin/end, found
 * with dlsym: the program is preloaded) and the process's end.
 *
 * Each round every sleeper allocates a block it keeps and one it loses,
 * then waits in pause, read, futex, nanosleep, or futex again with the
 * kept block's address in a callee-saved register only (a raw system
 * call); the spinner keeps one in a local while it spins.  The region
 * ends with them all waiting: its definitely lost blocks must be the
 * sleepers' lost ones, exactly, the kept ones reachable, whatever the
 * sleeper was doing when memcheck stopped it.  Two ways it went wrong:
 * a sleeper still in memcheck's stop handler when the scan looked
 * (every signal blocked there) was taken for one that blocks the
 * signal and had no stack read, and the spinner, whose stack pointer
 * no system call shows, had none either (lib/threads.c).
 *
 * Usage: plain_leak_asleep [sleepers [rounds [spinners]]].  Prints
 * "rounds R bad B" and each bad round; exits 0.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "memcheck/memcheck.h"
#include "plain_leak_common.h"

#define KINDS 5
#define MAX_THREADS 256

static _Atomic int round_no;     /* the round under way; a new one ends the last */
static _Atomic int ready;        /* threads that allocated this round */
static int pipes[MAX_THREADS][2];
static pthread_t ids[MAX_THREADS];
static pid_t tids[MAX_THREADS];
static int crowd;
static _Atomic int started[MAX_THREADS]; /* the round each sleeper last began */

static void on_wake(int sig)
{
	(void)sig;
}

/* Until the round that began as mine is over, waiting as kind k waits. */
static void wait_over(int i, int mine)
{
	char c;
	struct timespec ms = { 0, 1000000 };
	while (atomic_load(&round_no) == mine) {
		switch (i % KINDS) {
		case 0:
			pause();
			break;
		case 1:
			if (read(pipes[i][0], &c, 1) < 0)
				nanosleep(&ms, NULL);
			break;
		case 2:
			syscall(SYS_futex, &round_no, FUTEX_WAIT_PRIVATE, mine, NULL, NULL, 0);
			break;
		default:
			nanosleep(&ms, NULL);
			break;
		}
	}
}

/* Kind 4: the kept block's address in r12 alone while the thread waits
 * in futex; the C library's wrapper could spill it. */
__attribute__((noinline)) static void keep_in_register(int i, int mine)
{
#if defined(__x86_64__)
	register char *k __asm__("r12") = malloc((size_t)(100 + i));
	atomic_fetch_add(&ready, 1);
	while (atomic_load(&round_no) == mine) {
		long rc;
		register long r10 __asm__("r10") = 0;
		__asm__ volatile("syscall"
				 : "=a"(rc)
				 : "0"((long)SYS_futex), "D"(&round_no), "S"((long)FUTEX_WAIT_PRIVATE),
				   "d"((long)mine), "r"(r10), "r"(k)
				 : "rcx", "r11", "memory");
	}
	free(k);
#else
	char *volatile keep = malloc((size_t)(100 + i));
	atomic_fetch_add(&ready, 1);
	wait_over(2, mine);
	free(keep);
#endif
}

static void *sleeper(void *arg)
{
	int i = (int)(long)arg;
	tids[i] = (pid_t)syscall(SYS_gettid);
	if (crowd)
		setpriority(PRIO_PROCESS, (id_t)tids[i], 19);
	wait_over(i, 0);
	for (;;) {
		int mine = atomic_load(&round_no);
		atomic_store(&started[i], mine);
		char *volatile lost = malloc((size_t)(50 + i));
		for (int k = 0; k < 50 + i; k++) /* no call: nothing of its own left below */
			lost[k] = 0;
		lost = NULL;
		/* Copies of its address that malloc left below this frame,
		 * which the frames of the wait then cover without writing:
		 * valgrind skips them as undefined, memcheck cannot tell
		 * (1 round in 100 or more kept it reachable) */
		scrub();
		if (i % KINDS == 4) {
			keep_in_register(i, mine);
			continue;
		}
		char *volatile keep = malloc((size_t)(100 + i));
		atomic_fetch_add(&ready, 1);
		wait_over(i, mine);
		free(keep);
	}
	return NULL;
}

/* Every signal blocked, as a worker pool's threads often are: the scan
 * cannot stop it, and no system call shows its stack pointer. */
static void *spinner(void *arg)
{
	bool keeps = arg != NULL;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (int mine = 0;;) {
		while (atomic_load(&round_no) == mine)
			;
		mine = atomic_load(&round_no);
		char *volatile keep = keeps ? malloc(4000) : NULL;
		scrub(); /* its stack is read whole: what malloc left below too */
		atomic_fetch_add(&ready, 1);
		while (atomic_load(&round_no) == mine)
			;
		free(keep);
	}
	return NULL;
}

/* Is thread tid waiting (S in its stat)?  Read without stdio: no block
 * of the round's made for it. */
static int asleep(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1; /* no way to tell: go on */
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, rounds = argc > 2 ? atoi(argv[2]) : 20;
	int spinners = argc > 3 ? atoi(argv[3]) : 1, keeping = spinners;
	if (spinners < 0)
		spinners = -spinners, keeping = 0; /* spinners that keep nothing */
	crowd = argc > 4 && atoi(argv[4]);
	if (crowd) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		sched_setaffinity(0, sizeof one, &one);
	}
	if (n < 1 || n > MAX_THREADS || rounds < 1 || spinners < 0 || spinners > 4)
		return 2;
	void (*begin)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memcheck_begin");
	int (*end)(struct memcheck_result *) =
		(int (*)(struct memcheck_result *))dlsym(RTLD_DEFAULT, "memcheck_end");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_wake; /* no SA_RESTART: pause returns */
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < n; i++) {
		if (pipe(pipes[i]) != 0)
			return 2;
		pthread_create(&ids[i], NULL, sleeper, (void *)(long)i);
	}
	pthread_t t;
	for (int i = 0; i < spinners; i++)
		pthread_create(&t, NULL, spinner, i < keeping ? &t : NULL);
	int bad = 0;
	static struct memcheck_result res;
	static char said[16][128];
	for (int r = 1; r <= rounds; r++) {
		if (begin)
			begin("round");
		atomic_store(&ready, 0);
		atomic_store(&round_no, r);
		syscall(SYS_futex, &round_no, FUTEX_WAKE_PRIVATE, MAX_THREADS, NULL, NULL, 0);
		for (int i = 0; i < n; i++)
			if (i % KINDS == 1 && write(pipes[i][1], "x", 1) != 1)
				return 2;
		/* pause's sleepers again and again: one the signal caught
		 * between its test and its pause waits for the next */
		while (atomic_load(&ready) < n + spinners) {
			for (int i = 0; i < n; i += KINDS)
				if (atomic_load(&started[i]) != r)
					pthread_kill(ids[i], SIGUSR1);
			usleep(100);
		}
		for (int i = 0, tries = 0; i < n && tries < 2000; tries++)
			if (i % KINDS == 3 || asleep(tids[i]))
				i++;
			else
				usleep(200);
		if (!end || end(&res) < 0)
			continue;
		if (res.definitely_lost.blocks != (uint64_t)n ||
		    res.still_reachable.blocks != (uint64_t)(n + keeping)) {
			/* said after the rounds: stdout's buffer is a block */
			if (bad < 16)
				snprintf(said[bad], sizeof said[bad],
					 "round %d: definitely lost %llu, still reachable %llu; "
					 "expected %d, %d\n", r,
					 (unsigned long long)res.definitely_lost.blocks,
					 (unsigned long long)res.still_reachable.blocks, n, n + keeping);
			bad++;
		}
	}
	for (int i = 0; i < bad && i < 16; i++)
		fputs(said[i], stdout);
	printf("rounds %d bad %d\n", rounds, bad);
	fflush(stdout);
	scrub();
	return 0;
}
