/*
 * plain_bigpage_stacks.c - blocks allocated three calls deep in code
 * without frame pointers, in a program linked with -z
 * max-page-size=16384 (as libevent links), preloaded only.
 *
 * Built with -fomit-frame-pointer (tests/tests.mk): each function keeps
 * a value of its own in rbp across its call, so a stack through these
 * frames follows only from the program's unwind tables (cfi.c).  With
 * 16 KiB segment alignment glibc 2.36's _dl_find_object gives the main
 * program's range as its executable segment alone, and .eh_frame_hdr
 * lies in the read-only segment after it: a table looked for inside
 * that range is not found.  Every block stays reachable from a global:
 * one record of ROUNDS blocks, its stack leaf, middle, outer, main, as
 * valgrind reports it.
 */
#include <stdint.h>
#include <stdlib.h>

#define ROUNDS 3

void *kept[ROUNDS];
static int nkept;
static volatile unsigned rounds = ROUNDS; /* one call site in main: not unrolled */

/* rbp taken for a value live across the call: the frame pointer a walk
 * would follow is that value, not a frame. */
#define CLOBBER_RBP(v) __asm__ volatile("mov %0, %%rbp" ::"r"((uintptr_t)(v)) : "rbp")

__attribute__((noinline)) static void leaf(unsigned seed)
{
	CLOBBER_RBP(seed * 2654435761u);
	kept[nkept++] = malloc(24); /* LEAF_LINE */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void middle(unsigned seed)
{
	CLOBBER_RBP(seed + 17);
	leaf(seed & ~1u);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(unsigned seed)
{
	CLOBBER_RBP(~seed);
	middle(seed * 2);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	for (unsigned i = 0; i < rounds; i++)
		outer(i);
	return nkept == ROUNDS ? 0 : 1;
}
