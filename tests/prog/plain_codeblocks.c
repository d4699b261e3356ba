/*
 * plain_codeblocks.c - a passing program that makes the calls real
 * programs make and plain_clean does not, each of which takes memcheck
 * down a path of its own (tests/test_codeblocks.c counts the 64 KiB
 * blocks of memcheck's code it ran from; make place-check found these
 * paths placed nowhere in lib/text-order.ld):
 *   reallocarray of a live block (realloc's accounting out of
 *   mc_track_realloc), malloc_usable_size, the rlimit and rusage
 *   getters, prctl naming a thread, a fork whose child exits by _exit
 *   (fork's handlers in both).  pthread_getattr_np only with the
 *   argument getattr (below).
 * usage: plain_codeblocks [threads]: threads that allocate and are
 *   joined too (a slot taken and given back, the thread's stack asked
 *   of the C library, which allocates inside; the C library keeps the
 *   thread's blocks after the join, so that the exit scans them).
 * plain_codeblocks running: a thread that allocates, frees and then
 *   waits in pause() is still running when main returns (a pool's worker
 *   a program does not stop): the exit stops it to scan.
 * plain_codeblocks getattr: pthread_getattr_np too, of the main thread
 *   (the C library reads /proc/self/maps through stdio inside) and of a
 *   thread of its own (it reallocs the CPU set inside): those blocks'
 *   stacks, walked from the C library's frames by their call-frame
 *   information, step through memcheck's wrapper, whose rule lay in
 *   libmemcheck's own .eh_frame, blocks away (7 blocks under each
 *   allocator before step35; stacks.c now takes a frame pointer's rule
 *   for memcheck's own code without reading its CFI: 5).
 * Frees everything; no stdio; exit status 0 when every call worked.
 */
#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include <malloc.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int own_stack_known(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	char here;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return 0;
	int ok = pthread_attr_getstack(&attr, &addr, &size) == 0 && &here >= (char *)addr &&
		 &here < (char *)addr + size;
	pthread_attr_destroy(&attr);
	return ok;
}

static void *asks_own_stack(void *arg)
{
	return own_stack_known() ? NULL : arg;
}

static void *worker(void *arg)
{
	char *p = malloc(64 + (size_t)(long)arg);
	if (!p)
		return arg;
	p = reallocarray(p, 4, 100);
	free(p);
	return NULL;
}

static int started[2];

/* worker's allocation, then a byte on started, then waits for ever */
static void *keeps_running(void *arg)
{
	void *r = worker(arg);
	if (write(started[1], "", 1) != 1)
		return arg;
	for (;;)
		pause();
	return r;
}

int main(int argc, char **argv)
{
	int bad = 0;
	int *v = malloc(16 * sizeof *v);
	if (!v)
		return 1;
	int *w = reallocarray(v, 1000, sizeof *w);
	if (!w) {
		free(v);
		return 2;
	}
	bad |= malloc_usable_size(w) < 1000 * sizeof *w;
	free(w);

	struct rlimit rl;
	struct rusage ru;
	bad |= getrlimit(RLIMIT_STACK, &rl) != 0;
	bad |= getrusage(RUSAGE_SELF, &ru) != 0;
	bad |= prctl(PR_SET_NAME, "calls") != 0;

	if (argc > 1 && strcmp(argv[1], "threads") == 0) {
		pthread_t t[2];
		for (long i = 0; i < 2; i++)
			bad |= pthread_create(&t[i], NULL, worker, (void *)i) != 0;
		for (int i = 0; i < 2; i++) {
			void *r;
			bad |= pthread_join(t[i], &r) != 0 || r != NULL;
		}
	}

	if (argc > 1 && strcmp(argv[1], "running") == 0) {
		pthread_t t;
		char c;
		bad |= pipe(started) != 0 ||
		       pthread_create(&t, NULL, keeps_running, (void *)1) != 0 ||
		       read(started[0], &c, 1) != 1;
	}

	if (argc > 1 && strcmp(argv[1], "getattr") == 0) {
		pthread_t t;
		void *r = NULL;
		bad |= !own_stack_known();
		bad |= pthread_create(&t, NULL, asks_own_stack, (void *)1) != 0 ||
		       pthread_join(t, &r) != 0 || r != NULL;
	}

	pid_t pid = fork();
	if (pid == 0) {
		free(malloc(32));
		_exit(0);
	}
	int st;
	bad |= pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return bad ? 3 : 0;
}
