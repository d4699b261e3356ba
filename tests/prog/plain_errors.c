/*
 * plain_errors.c - heap errors and leaks under LD_PRELOAD (not linked to
 * memcheck; no stdio unless asked, whose buffers would be allocations of
 * their own).
 *
 * usage: plain_errors double       malloc(24), free it twice, then
 *                                  print "continued" and exit 0.
 *        plain_errors double_deep  malloc(24), free it by free_it()
 *                                  (free_twice(), main), then free it
 *                                  again in main; the same.
 *        plain_errors unknown      free a block from mi_malloc (found
 *                                  with dlsym; exit 77 when mimalloc is
 *                                  not loaded), print "continued", exit 0.
 *        plain_errors realloc_freed  malloc(24), free it, realloc it to
 *                                  48: print "NULL ENOMEM" when realloc
 *                                  returned NULL with errno ENOMEM, then
 *                                  "continued"; exit 0.
 *        plain_errors realloc_unknown  realloc a block from mi_malloc
 *                                  (exit 77 without mimalloc) to 64
 *                                  bytes, check its contents moved, free
 *                                  it; print "continued", exit 0.
 *        plain_errors interior     malloc(40), free a pointer 16 bytes
 *                                  into it, print "continued", free the
 *                                  block, exit 0 (jemalloc and tcmalloc
 *                                  crash later if the first free reaches
 *                                  them).
 *        plain_errors realloc_interior  malloc(40), realloc a pointer 16
 *                                  bytes into it to 64: print "NULL
 *                                  ENOMEM" when realloc returned NULL with
 *                                  errno ENOMEM, "continued", free the
 *                                  block, exit 0.
 *        plain_errors stack        free a pointer 8 bytes into a local
 *                                  array of free_local(), from free_it()
 *                                  called by it; print "continued", exit 0
 *                                  (glibc aborts bare).
 *        plain_errors realloc_stack  the same through realloc to 64
 *                                  bytes: print "NULL ENOMEM" when it
 *                                  returned NULL with errno ENOMEM, then
 *                                  "continued"; exit 0.
 *        plain_errors thread_stack  a thread's local array (of
 *                                  thread_local_hold()), 8 bytes into it,
 *                                  freed by the main thread (free_it())
 *                                  while the thread waits; print
 *                                  "continued", exit 0.
 *        plain_errors main_stack   the main thread's local array (of
 *                                  main_local_hold(), waiting for the
 *                                  thread in pthread_join), freed by
 *                                  the thread; the same.
 *        plain_errors global       free a pointer 4 bytes into the
 *                                  array global_buf; the same.
 *        plain_errors wild         free 0x12345678; the same (a fault
 *                                  bare).
 *        plain_errors leak [CODE]  leak 100,000 bytes from leak_here(),
 *                                  called by leak_level2(), called by
 *                                  leak_level1(); allocate and free 10
 *                                  bytes; exit CODE (default 0).
 *        plain_errors stdout       print three lines with printf, leak
 *                                  a block, exit 0.
 *        plain_errors contexts N [again]  N double frees (N <= 1100),
 *                                  each of a block of its own freed
 *                                  again by a function of its own
 *                                  (free_at_I): N contexts of one error;
 *                                  with again, the same N more times
 *                                  from another line of main (stacks
 *                                  alike in their first 2 frames as
 *                                  valgrind shows them, not in their
 *                                  first 4); print "continued", exit 0.
 *        plain_errors fork_errors [child]  a double free (free_again)
 *                                  and an interior free (free_inside),
 *                                  then fork; the child (with "child"
 *                                  another double free of the same
 *                                  block, by free_it) exits 0, the
 *                                  parent waits for it, frees its block
 *                                  and exits 0.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *leak_here(void);
void *leak_level2(void);
void *leak_level1(void);
void *keep;

void *leak_here(void)
{
	return malloc(100000);
}

void *leak_level2(void)
{
	return leak_here();
}

void *leak_level1(void)
{
	return leak_level2();
}

char global_buf[64];
int free_it(void *p, int how);
int free_local(int how);

/* how: 0 free, 1 realloc to 64 bytes (1 returned where that gave NULL
 * with errno ENOMEM) */
int free_it(void *p, int how)
{
	if (!how) {
		free(p);
		return 0;
	}
	errno = 0;
	void *q = realloc(p, 64);
	return !q && errno == ENOMEM;
}

int free_local(int how)
{
	char local[32];
	keep = local;
	int r = free_it(local + 8, how);
	keep = NULL;
	return r;
}

/* Another thread's stack: one thread's local, freed by the other while
 * the first waits (a barrier, or pthread_join) */
static pthread_barrier_t held, done;
static char *volatile other_local;
int thread_local_hold(void);
int main_local_hold(void);

int thread_local_hold(void)
{
	char local[32];
	other_local = local + 8;
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&done);
	__asm__ volatile("" : : "r"(local) : "memory"); /* live until here */
	return 0;
}

static void *holder(void *arg)
{
	(void)arg;
	thread_local_hold();
	return NULL;
}

static void *freer(void *arg)
{
	free_it(arg, 0);
	return NULL;
}

int main_local_hold(void)
{
	char local[32];
	pthread_t t;
	keep = local;
	if (pthread_create(&t, NULL, freer, local + 8) || pthread_join(t, NULL))
		return 1;
	keep = NULL;
	return 0;
}

/* 1100 functions that free, each a call of its own (its own constant
 * stored after it: not folded into one by identical code folding) */
static volatile int freed_by;
#define FREE_AT(n)                                                \
	static __attribute__((noinline)) void free_at_##n(void *p) \
	{                                                          \
		free(p);                                           \
		freed_by = n;                                      \
	}
#define FREE_AT10(n)                                                                     \
	FREE_AT(n##0) FREE_AT(n##1) FREE_AT(n##2) FREE_AT(n##3) FREE_AT(n##4) FREE_AT(n##5) \
		FREE_AT(n##6) FREE_AT(n##7) FREE_AT(n##8) FREE_AT(n##9)
#define FREE_AT100(n)                                                                   \
	FREE_AT10(n##0) FREE_AT10(n##1) FREE_AT10(n##2) FREE_AT10(n##3) FREE_AT10(n##4) \
		FREE_AT10(n##5) FREE_AT10(n##6) FREE_AT10(n##7) FREE_AT10(n##8)         \
			FREE_AT10(n##9)
#define FREE_AT_ALL(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
FREE_AT_ALL(FREE_AT100)
#define FREE_REF(n) free_at_##n,
#define FREE_REF10(n)                                                                      \
	FREE_REF(n##0) FREE_REF(n##1) FREE_REF(n##2) FREE_REF(n##3) FREE_REF(n##4)         \
		FREE_REF(n##5) FREE_REF(n##6) FREE_REF(n##7) FREE_REF(n##8) FREE_REF(n##9)
#define FREE_REF100(n)                                                                      \
	FREE_REF10(n##0) FREE_REF10(n##1) FREE_REF10(n##2) FREE_REF10(n##3) FREE_REF10(n##4) \
		FREE_REF10(n##5) FREE_REF10(n##6) FREE_REF10(n##7) FREE_REF10(n##8)         \
			FREE_REF10(n##9)
static void (*const free_at[])(void *) = { FREE_AT_ALL(FREE_REF100) };

void free_again(void *p);
void free_twice(void *p);

/* a free two calls below main: valgrind's free'd stack free_it,
 * free_twice, main */
void free_twice(void *p)
{
	free_it(p, 0);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

void free_inside(void *p);

void free_again(void *p)
{
	free(p);
}

void free_inside(void *p)
{
	free((char *)p + 8);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(3);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "double") == 0) {
		char *p = malloc(24);
		free(p);
		free(p);
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "double_deep") == 0) {
		char *p = malloc(24);
		free_twice(p);
		free(p);
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "double_ring") == 0) {
		/* The last 16000 of 20000 frees freed again, newest first: each
		 * is found in memcheck's ring of recent frees (pages' edges and
		 * its wrap among them) as a double free of its own size,
		 * 16 + 8 * (its index % 64), and kept from glibc. */
		enum { N = 20000, AGAIN = 16000 };
		static char *v[N];
		for (int i = 0; i < N; i++)
			v[i] = malloc(16 + 8 * (size_t)(i % 64));
		for (int i = 0; i < N; i++)
			free(v[i]);
		for (int i = N - 1; i >= N - AGAIN; i--)
			free(v[i]);
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "unknown") == 0) {
		void *(*mi_malloc)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "mi_malloc");
		if (!mi_malloc)
			return 77;
		void *p = mi_malloc(40);
		free(p);
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "realloc_freed") == 0) {
		char *p = malloc(24);
		free(p);
		errno = 0;
		void *q = realloc(p, 48);
		if (!q && errno == ENOMEM)
			say("NULL ENOMEM\n");
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "realloc_unknown") == 0) {
		void *(*mi_malloc)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "mi_malloc");
		if (!mi_malloc)
			return 77;
		char *p = mi_malloc(16);
		memcpy(p, "mimalloc block", 15);
		char *q = realloc(p, 64);
		if (!q || strcmp(q, "mimalloc block") != 0)
			return 1;
		free(q);
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "interior") == 0) {
		keep = malloc(40);
		free((char *)keep + 16);
		say("continued\n");
		free(keep);
		return 0;
	}
	if (strcmp(mode, "realloc_interior") == 0) {
		keep = malloc(40);
		errno = 0;
		void *q = realloc((char *)keep + 16, 64);
		if (!q && errno == ENOMEM)
			say("NULL ENOMEM\n");
		say("continued\n");
		free(keep);
		return 0;
	}
	if (strcmp(mode, "stack") == 0 || strcmp(mode, "realloc_stack") == 0) {
		if (free_local(mode[0] == 'r'))
			say("NULL ENOMEM\n");
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "thread_stack") == 0) {
		pthread_t t;
		pthread_barrier_init(&held, NULL, 2);
		pthread_barrier_init(&done, NULL, 2);
		if (pthread_create(&t, NULL, holder, NULL))
			return 1;
		pthread_barrier_wait(&held);
		free_it(other_local, 0);
		pthread_barrier_wait(&done);
		pthread_join(t, NULL);
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "main_stack") == 0) {
		if (main_local_hold())
			return 1;
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "global") == 0 || strcmp(mode, "wild") == 0) {
		free_it(mode[0] == 'g' ? global_buf + 4 : (char *)0x12345678, 0);
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "leak") == 0) {
		keep = leak_level1();
		keep = NULL;
		free(malloc(10));
		return argc > 2 ? atoi(argv[2]) : 0;
	}
	if (strcmp(mode, "stdout") == 0) {
		printf("line one\n");
		printf("line %s\n", "two");
		keep = leak_level1();
		keep = NULL;
		printf("line three: %d\n", 3);
		return 0;
	}
	if (strcmp(mode, "contexts") == 0 && argc > 2) {
		size_t n = strtoul(argv[2], NULL, 10);
		if (n > sizeof free_at / sizeof free_at[0])
			return 125;
		for (size_t i = 0; i < n; i++) {
			char *p = malloc(16);
			free(p);
			free_at[i](p);
		}
		for (size_t i = 0; argc > 3 && i < n; i++) {
			char *p = malloc(16);
			free(p);
			free_at[i](p);
		}
		say("continued\n");
		return 0;
	}
	if (strcmp(mode, "fork_errors") == 0) {
		char *p = malloc(24);
		free(p);
		free_again(p);
		keep = malloc(40);
		free_inside(keep);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (argc > 2 && strcmp(argv[2], "child") == 0)
				free_it(p, 0);
			_exit(0);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
		free(keep);
		return 0;
	}
	say("usage: plain_errors double|double_deep|unknown|realloc_freed|realloc_unknown|interior|"
	    "realloc_interior|stack|realloc_stack|thread_stack|main_stack|global|wild|leak [CODE]|"
	    "stdout|contexts N [again]|fork_errors [child]\n");
	return 125;
}
