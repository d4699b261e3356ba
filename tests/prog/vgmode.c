/*
 * vgmode.c - two regions for valgrind mode (tests/test_vgmode.c): "leaky"
 * leaves a definitely lost list head (32 bytes) with an indirectly lost
 * node behind it (32 bytes) and a still reachable block (96 bytes, kept
 * by a global); "clean" frees all it takes.  No stdio before the regions
 * end: the figures are the program's alone.  Sizes are multiples of 16
 * (see plain_leak_common.h).
 *
 * "vgmode nested": region "outer" loses 16 bytes, then region "inner"
 * inside it loses 32.  "vgmode fork": region "parent" is open across a
 * fork; the child loses 48 bytes and ends it, the parent loses nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

struct node {
	struct node *next;
	char pad[24];
};

static void *volatile kept;

/* Overwrite the dead stack below the caller, so that no stale copy of a
 * block's address survives there for valgrind's scan. */
__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[16384];
	memset((char *)pad, 0, sizeof pad);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

__attribute__((noinline)) static void leak(void)
{
	struct node *volatile head = malloc(sizeof *head);
	head->next = malloc(sizeof *head);
	head->next->next = NULL;
	kept = malloc(96);
}

__attribute__((noinline)) static void clean(void)
{
	for (int i = 1; i <= 10; i++) {
		char *volatile p = malloc((size_t)i * 16);
		p = realloc(p, (size_t)i * 32);
		free(p);
	}
}

__attribute__((noinline)) static void lose(size_t n)
{
	void *volatile p = malloc(n);
	(void)p;
}

static int nested(void)
{
	memcheck_begin("outer");
	lose(16);
	memcheck_begin("inner");
	lose(32);
	scrub();
	memcheck_end(NULL);
	scrub();
	memcheck_end(NULL);
	return 0;
}

static int forked(void)
{
	memcheck_begin("parent");
	pid_t pid = fork();
	if (pid == 0) {
		lose(48);
		scrub();
		memcheck_end(NULL);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	scrub();
	memcheck_end(NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "nested"))
		return nested();
	if (argc > 1 && !strcmp(argv[1], "fork"))
		return forked();
	memcheck_begin("leaky");
	leak();
	scrub();
	memcheck_end(NULL);
	memcheck_begin("clean");
	clean();
	scrub();
	memcheck_end(NULL);
	return 0;
}
