/*
 * plain_leak_common.h - shared by tests/prog/plain_leak_*.c: leak programs
 * without stdio, compared with valgrind by tests/test_leakkinds.c.
 * Sizes are multiples of 16: glibc keeps pointers to the header of the
 * chunk after the last block, which lies inside a block whose size is 8
 * more than a multiple of 16 (see memcheck(7), LEAK KINDS).
 */
#ifndef PLAIN_LEAK_COMMON_H
#define PLAIN_LEAK_COMMON_H
#include <stdlib.h>
#include <string.h>

/* Overwrite the dead stack below the caller with zeros, so that no stale
 * copy of a block's address survives there, for valgrind or memcheck. */
__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[16384];
	memset((char *)pad, 0, sizeof pad);
	__asm__ volatile("" : : "r"(pad) : "memory");
}
#endif
