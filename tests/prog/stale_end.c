/*
 * stale_end.c - a block whose only copies lie in the program's dead
 * stack, in the frames just below the one that calls memcheck_end():
 * definitely lost, as valgrind reads no stack below the stack pointer.
 * memcheck_end's own frame lies there; its locals are memcheck's, and a
 * slot of them not yet written held a copy left by plant() (still
 * reachable before session 43: MC_SCAN_FROM, internal.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <memcheck/memcheck.h>

/* 4 KiB of stack below the caller's frame filled with p's address. */
static __attribute__((noinline)) void plant(uintptr_t p)
{
	volatile uintptr_t w[512];
	for (int i = 0; i < 512; i++)
		w[i] = p;
	__asm__ volatile("" : : "r"(w) : "memory");
}

/* The block's address left only in plant's dead frame (and in the
 * caller-saved registers, which the scan does not read). */
static __attribute__((noinline)) void lose(void)
{
	char *p = malloc(40);
	if (p)
		p[0] = 1;
	plant((uintptr_t)p);
}

int main(void)
{
	memcheck_begin("stale");
	lose();
	struct memcheck_result r;
	memcheck_end(&r);
	printf("%llu\n", (unsigned long long)r.definitely_lost.blocks);
	return 0;
}
