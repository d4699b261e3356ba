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

#ifdef PLAIN_LEAK_HANDOFF
/* The signal-blocking thread programs (plain_leak_sig*.c): main makes a
 * 48-byte block whose only pointer, 8 bytes into it, goes to a worker
 * through a global, which the worker clears once it holds the pointer
 * in a local.  Inlined, so that no helper's dead frame keeps a copy. */
#include <stdatomic.h>
#include <time.h>

static atomic_int ready;
static char *volatile handed;

/* main: returns the block's start (its caller drops it or parks it) */
static inline __attribute__((always_inline)) char *hand_block(void)
{
	char *b = malloc(48);
	memset(b, 0, 48);
	handed = b + 8;
	return b;
}

/* the worker: the pointer 8 bytes into the block; it adds 1 to ready
 * once its stack holds nothing more of the block than it means to */
static inline __attribute__((always_inline)) char *take_block(void)
{
	char *inner = handed;
	handed = NULL;
	return inner;
}

/* main: until the worker is ready */
static inline __attribute__((always_inline)) void wait_taken(void)
{
	for (struct timespec ms = { 0, 1000000 }; !atomic_load(&ready);)
		nanosleep(&ms, NULL);
}
#endif
#endif
