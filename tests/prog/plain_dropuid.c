/*
 * plain_dropuid.c - a program run as root that gives up root's rights
 * before it exits (under LD_PRELOAD, not linked to memcheck).
 *
 * usage: plain_dropuid MODE
 *   leaks 100 bytes from leak_here(), then:
 *     setuid   setgid(65534) and setuid(65534), a daemon's drop for good;
 *     seteuid  seteuid(65534), a harness's drop around a test;
 *   prints "uid U euid E" and exits 0 (3 where a call failed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak_here.h"

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	leak(100);
	int rc;
	if (!strcmp(argv[1], "setuid"))
		rc = setgid(65534) || setuid(65534);
	else if (!strcmp(argv[1], "seteuid"))
		rc = seteuid(65534);
	else
		return 2;
	if (rc)
		return 3;
	printf("uid %u euid %u\n", (unsigned)getuid(), (unsigned)geteuid());
	return 0;
}
