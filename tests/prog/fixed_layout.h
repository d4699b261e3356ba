/*
 * fixed_layout.h - shared by tests/prog programs whose figures depend on
 * where the kernel puts their mappings (rss_self.h's, plain_mmap_where.c):
 * the program executes itself again with address randomization off.
 */
#ifndef FIXED_LAYOUT_H
#define FIXED_LAYOUT_H
#include <sys/personality.h>
#include <unistd.h>

/* The program again with address randomization off, once: where the
 * kernel puts the mappings moved the bare figures by up to 160 KiB from
 * run to run (fault-around's 64 KiB blocks of a library's pages start
 * where its mapping does), 0-16 KiB without it. */
static void rss_self_fixed_layout(char **argv)
{
	int now = personality(0xffffffff);
	if (now == -1 || (now & ADDR_NO_RANDOMIZE))
		return;
	if (personality((unsigned long)now | ADDR_NO_RANDOMIZE) == -1)
		return;
	execv("/proc/self/exe", argv);
}
#endif
