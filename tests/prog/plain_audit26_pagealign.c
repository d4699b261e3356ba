/*
 * plain_audit26_pagealign.c - a leak in a program linked with
 * -z max-page-size=16384 (tests/test_audit26.c), as libevent links its
 * programs: its text segment lies 0x4000 into the file, and glibc's
 * dl_find_object starts the main program there.  memcheck gave libdwfl
 * that start for the object's, and every frame of the program was read
 * 0x4000 too low: no file and line here, another unit's functions in a
 * larger program (libevent's regress).
 */
#include <stdlib.h>
#include <string.h>

void *kept;

/* 48 bytes lost and 16 kept, allocated here (malloc: line 18) */
__attribute__((noinline)) static char *audit26_leaker(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, 'x', n);
	return p;
}

int main(void)
{
	char *lost = audit26_leaker(48);
	if (!lost)
		return 1;
	lost[0] = 'y';
	lost = NULL;
	kept = audit26_leaker(16);
	return 0;
}
