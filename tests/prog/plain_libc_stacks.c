/*
 * plain_libc_stacks.c - blocks allocated inside C library functions
 * built without frame pointers (strdup, strndup, asprintf, getline,
 * fopen, opendir, a qsort comparison, realpath, a thread's strdup), each
 * kept in a global (preloaded only, never linked to memcheck).
 *
 * Every block is still reachable, and every stack, as valgrind shows it,
 * goes from the C library's function through the program's callers to
 * main (or to the thread's function): tests/test_stacks.c compares them
 * frame by frame.  No output.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile kept[16];
int nkept = 4;

static int by_value(const void *a, const void *b)
{
	if (nkept < 7)
		kept[nkept++] = malloc(24);
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) void copy_strings(void)
{
	kept[0] = strdup("copied");
	kept[1] = strndup("copied in part", 6);
	char *s = NULL;
	if (asprintf(&s, "%d items", 42) < 0)
		exit(1);
	kept[2] = s;
}

__attribute__((noinline)) void sort_numbers(void)
{
	int v[3] = { 3, 1, 2 };
	qsort(v, 3, sizeof v[0], by_value);
}

__attribute__((noinline)) void read_files(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		exit(1);
	char *line = NULL;
	size_t cap = 0;
	if (getline(&line, &cap, f) < 0)
		exit(1);
	kept[8] = line;
	kept[9] = f;
	kept[10] = opendir("/");
	kept[11] = realpath("/proc/self/exe", NULL);
}

static void *in_thread(void *arg)
{
	(void)arg;
	return strdup("from a thread");
}

__attribute__((noinline)) void start_thread_and_wait(void)
{
	pthread_t t;
	void *r;
	if (pthread_create(&t, NULL, in_thread, NULL) || pthread_join(t, &r))
		exit(1);
	kept[12] = r;
}

int main(void)
{
	copy_strings();
	sort_numbers();
	read_files();
	start_thread_and_wait();
	for (int i = 0; i < 13; i++)
		if (i != 3 && i < nkept + 5 && !kept[i] && (i < 4 || i > 7))
			return 1;
	return 0;
}
