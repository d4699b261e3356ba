/*
 * plain_forkheld.c - fork while another thread is inside one of
 * memcheck's locks that the fork handlers must take or reset
 * (tests/test_forkheld.c).  Not linked to memcheck: preloaded.
 *
 * usage: plain_forkheld MODE FORKS
 *   odd   the block table's side table (blocks.c's odd_lock): blocks of
 *         2^37 bytes or more, which an entry cannot hold.  main keeps 48
 *         live, so that every block's insert looks there too (the lock is
 *         then taken by each malloc, not only the oversized ones); two
 *         threads allocate and free small and oversized blocks.
 *   limits  limits.c's update_lock (run with MEMCHECK_TRACK=0): main
 *         makes 20,000 allocations first (count-only memcheck reads the
 *         limits at the 8192nd and follows them from then on); a thread
 *         sets RLIMIT_AS again and again (each call reads the limits
 *         anew, with the lock held), and each child sets it once.
 *   sandbox  sandbox.c's lock, held while a process that sets
 *         no_new_privs has memcheck open what its exit will need (once a
 *         process): FORKS rounds, each a process that starts a thread
 *         setting it and, at once, forks 16 children, each setting it
 *         too, then waits for them (5 s in all).  Prints "rounds=N
 *         hung=H".
 *   handler  a fork from a signal handler that interrupted memcheck:
 *         a thread frees what main allocates and main what it does (so
 *         that each waits for the other's group: memcheck's marks and
 *         locks held), another sends main SIGUSR1 every millisecond, and
 *         the handler forks a child that leaves by _exit(0), FORKS
 *         times.  A watchdog thread prints "hung" and exits 1 after 10 s
 *         without a fork.  Prints "handler forks=FORKS failed=F" once
 *         FORKS children or more were forked.
 *   Otherwise main forks FORKS times; each child allocates and frees a small
 *   and an oversized block (limits: sets RLIMIT_AS) and exits with
 *   exit(0) (memcheck's exit work runs there too).  The parent waits at most 5 s for each child: one
 *   still running then hangs (a lock held by a thread the child does not
 *   have), and is killed, and no more are forked.  Prints "forks=N
 *   hung=H oversized=yes|no" on stdout: oversized=no where the
 *   allocator refuses 2^37 bytes (glibc and tcmalloc here: the kernel's
 *   overcommit heuristic; mimalloc and jemalloc map it MAP_NORESERVE).
 *   Exit status 0 when every child exited 0, 1 otherwise, 2 on a setup
 *   failure.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIG ((size_t)1 << 37)

static atomic_int stop;

static void *odd_churn(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !stop; i++) {
		void *volatile p = malloc(16 + i % 64);
		free(p);
		if (i % 64 == 0) {
			void *volatile big = malloc(BIG);
			free(big);
		}
	}
	return NULL;
}

/* RLIMIT_AS set to what it is: the program's limit unchanged. */
static void limit_again(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || setrlimit(RLIMIT_AS, &rl) != 0)
		_exit(4);
}

static void *limits_churn(void *arg)
{
	(void)arg;
	while (!stop)
		limit_again();
	return NULL;
}

static bool odd_mode;

static atomic_int go;

static void *no_new_privs(void *arg)
{
	(void)arg;
	while (!go)
		;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		_exit(4);
	return NULL;
}

/* One round of sandbox: 0 every child exited 0, 1 one failed, 2 one
 * hung (all are killed then). */
static int sandbox_round(void)
{
	enum { KIDS = 16 };
	pthread_t t;
	if (pthread_create(&t, NULL, no_new_privs, NULL) != 0)
		return 1;
	pid_t kid[KIDS];
	go = 1;
	for (int i = 0; i < KIDS; i++) {
		kid[i] = fork();
		if (kid[i] < 0)
			_exit(2);
		if (kid[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
				_exit(4);
			exit(0);
		}
	}
	pthread_join(t, NULL);
	int r = 0, left = KIDS;
	for (int ms = 0; left && ms < 5000; ms++) {
		for (int i = 0; i < KIDS; i++) {
			int st;
			if (kid[i] && waitpid(kid[i], &st, WNOHANG) == kid[i]) {
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
					r = r ? r : 1;
				kid[i] = 0;
				left--;
			}
		}
		if (left)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	for (int i = 0; i < KIDS; i++)
		if (kid[i]) {
			kill(kid[i], SIGKILL);
			waitpid(kid[i], NULL, 0);
			r = 2;
		}
	return r;
}

#define RING 4096
static _Atomic(void *) ring[RING];
static pthread_t main_thread;
static atomic_int handler_forks, handler_failed;

static void fork_in_handler(int sig)
{
	(void)sig;
	int saved_errno = errno;
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	int st;
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		handler_failed++;
	handler_forks++;
	errno = saved_errno;
}

static void *kicker(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_kill(main_thread, SIGUSR1);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return NULL;
}

static void *ring_churn(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !stop; i++)
		free(atomic_exchange(&ring[i % RING], malloc(24 + i % 100)));
	return NULL;
}

static void *watchdog(void *arg)
{
	(void)arg;
	for (int last = -1, still = 0; !stop; still++) {
		if (handler_forks != last) {
			last = handler_forks;
			still = 0;
		}
		if (still == 100) {
			printf("hung after %d forks\n", last);
			fflush(stdout);
			_exit(1);
		}
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
	return NULL;
}

static int handler(int forks)
{
	main_thread = pthread_self();
	struct sigaction sa = { .sa_handler = fork_in_handler };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	pthread_t t[3];
	void *(*const fns[])(void *) = { ring_churn, kicker, watchdog };
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL) != 0)
			return 2;
	for (unsigned i = 0; handler_forks < forks; i++)
		free(atomic_exchange(&ring[(i * 7) % RING], malloc(40)));
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* (a handler or two more may have run since the loop's test) */
	printf("handler forks=%d failed=%d\n", forks, (int)handler_failed);
	return handler_failed ? 1 : 0;
}

static int sandbox(int rounds)
{
	int ok = 0, hung = 0;
	for (int i = 0; i < rounds && !hung; i++) {
		pid_t p = fork();
		if (p < 0)
			return 2;
		if (p == 0)
			_exit(sandbox_round());
		int st;
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
			return 2;
		ok += WEXITSTATUS(st) == 0;
		hung += WEXITSTATUS(st) == 2;
	}
	printf("rounds=%d hung=%d\n", ok, hung);
	return ok == rounds ? 0 : 1;
}

static void child(void)
{
	/* A child that hangs must not outlive the test. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(3);
	void *volatile p = malloc(32);
	free(p);
	if (odd_mode) {
		void *volatile big = malloc(BIG);
		free(big);
	} else {
		limit_again();
	}
	exit(0);
}

/* 0: the child exited 0; 1: it failed; 2: it hung (killed). */
static int wait_child(pid_t c)
{
	int st = 0;
	for (int ms = 0; ms < 5000; ms++) {
		pid_t w = waitpid(c, &st, WNOHANG);
		if (w == c)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
		if (w < 0)
			return 1;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "sandbox") == 0)
		return sandbox(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "handler") == 0)
		return handler(atoi(argv[2]));
	if (argc != 3 || (strcmp(argv[1], "odd") != 0 && strcmp(argv[1], "limits") != 0))
		return 2;
	odd_mode = strcmp(argv[1], "odd") == 0;
	int forks = atoi(argv[2]);
	/* Many kept: each small block's insert then walks them all with
	 * the lock held, which makes a fork while a thread holds it (one
	 * the scheduler stopped there) likely. */
	enum { KEPT = 48, NT = 2 };
	static void *kept[KEPT];
	for (int i = 0; odd_mode && i < KEPT; i++)
		kept[i] = malloc(BIG);
	for (int i = 0; !odd_mode && i < 20000; i++) {
		void *volatile p = malloc(16);
		free(p);
	}
	pthread_t t[NT];
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, odd_mode ? odd_churn : limits_churn, NULL) != 0)
			return 2;
	int ok = 0, failed = 0, hung = 0;
	for (int i = 0; i < forks; i++) {
		pid_t c = fork();
		if (c < 0)
			return 2;
		if (c == 0)
			child();
		int r = wait_child(c);
		ok += r == 0;
		failed += r == 1;
		hung += r == 2;
		if (hung)
			break; /* one is the answer: the others would take 5 s each */
		sched_yield();
	}
	stop = 1;
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	printf("forks=%d hung=%d oversized=%s\n", ok, hung, kept[0] ? "yes" : "no");
	for (int i = 0; i < KEPT; i++)
		free(kept[i]);
	return failed || hung ? 1 : 0;
}
