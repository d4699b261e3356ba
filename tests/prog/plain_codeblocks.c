/*
 * plain_codeblocks.c - a passing program that makes the calls real
 * programs make and plain_clean does not, each of which takes memcheck
 * down a path of its own (tests/test_codeblocks.c counts the 64 KiB
 * blocks of memcheck's code it ran from; make place-check found these
 * paths placed nowhere in lib/text-order.ld):
 *   reallocarray of a live block (realloc's accounting out of
 *   mc_track_realloc), malloc_usable_size, the rlimit and rusage
 *   getters, prctl naming a thread, a fork whose child exits by _exit
 *   (fork's handlers in both).  Not pthread_getattr_np: the C library
 *   allocates inside it (fopen of /proc/self/maps), and that block's
 *   stack, walked from the C library's frames by their call-frame
 *   information, reaches memcheck's wrapper, whose rule lies in
 *   libmemcheck's own .eh_frame, blocks away (not placed by the list).
 * usage: plain_codeblocks [threads]: threads that allocate and are
 *   joined too (a slot taken and given back, the thread's stack asked
 *   of the C library, which allocates inside; the C library keeps the
 *   thread's blocks after the join, so that the exit scans them).
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

static void *worker(void *arg)
{
	char *p = malloc(64 + (size_t)(long)arg);
	if (!p)
		return arg;
	p = reallocarray(p, 4, 100);
	free(p);
	return NULL;
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

	pid_t pid = fork();
	if (pid == 0) {
		free(malloc(32));
		_exit(0);
	}
	int st;
	bad |= pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return bad ? 3 : 0;
}
