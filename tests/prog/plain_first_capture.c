/*
 * plain_first_capture.c - prints the read system calls its first malloc
 * made (syscr of /proc/self/io, less what reading it costs itself): 0
 * bare.  Under memcheck, the first allocation stack a thread takes
 * learns the thread's stack bounds; for the main thread that reads
 * nothing (lib/stacks.c: learn_main_stack), where pthread_getattr_np
 * read /proc/self/maps through stdio.
 */
#include <stdio.h>
#include <stdlib.h>

#include "proc_field.h"

/* The process's read system calls so far, without stdio or malloc. */
static long syscr(void)
{
	return (long)proc_field("/proc/self/io", "syscr:");
}

int main(void)
{
	long a = syscr(), b = syscr();
	void *volatile p = malloc(24);
	long c = syscr();
	free(p);
	if (a < 0 || b < 0 || c < 0) {
		fprintf(stderr, "cannot read /proc/self/io\n");
		return 1;
	}
	printf("%ld\n", (c - b) - (b - a));
	return 0;
}
