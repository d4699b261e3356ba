/*
 * plain_first_capture.c - prints the bytes its first malloc read
 * (rchar of /proc/self/io, less what reading it costs itself), as 0
 * where under 2 KiB: 0 bare.  Under memcheck, the first allocation stack
 * a thread takes learns the thread's stack bounds; for the main thread
 * that reads no file (lib/stacks.c: learn_main_stack), where
 * pthread_getattr_np read /proc/self/maps through stdio (3-4 read calls,
 * the whole file).  What it may read, where the RSS figures are
 * measured, is the ELF and program headers of an object whose call-frame
 * tables the capture reads first (lib/ownread.c maps its own view of
 * the file: 64 bytes and ~800 a file), whose calls syscr, counted
 * before, does not tell from others.
 */
#include <stdio.h>
#include <stdlib.h>

#include "proc_field.h"

/* The bytes the process read so far, without stdio or malloc. */
static long rchar(void)
{
	return (long)proc_field("/proc/self/io", "rchar:");
}

int main(void)
{
	long a = rchar(), b = rchar();
	void *volatile p = malloc(24);
	long c = rchar();
	free(p);
	if (a < 0 || b < 0 || c < 0) {
		fprintf(stderr, "cannot read /proc/self/io\n");
		return 1;
	}
	long read = (c - b) - (b - a);
	printf("%ld\n", read < 2048 ? 0 : read);
	return 0;
}
