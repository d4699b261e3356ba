/*
 * plain_deep_stacks.c - blocks allocated deep in a recursion, from many
 * call paths revisited round after round, as a parser makes them
 * (preloaded only, never linked to memcheck; no stdio).
 *
 * descend() recurses through two functions, left() and right(), the
 * bits of a path choosing which at each level, and allocates at the
 * bottom (LEAF_LINE).  40 paths: 24 that go 30 levels down (stacks
 * deeper than memcheck's 16 frames, cut, the paths differing in their
 * last levels) and 16 that go 4 levels (stacks that end at main,
 * through the C library's start code: a thread's run, in stacks.c).  More paths than a thread's cache
 * of stacks holds, visited ROUNDS times each in turn: the first visit of
 * a path walks its stack exactly, the later ones find it by their
 * frame-pointer walk (stacks.c's capture_known), and both must give the
 * one stack.  Every block stays reachable from a global: 40 records of
 * ROUNDS blocks, each with its path's frames, as valgrind reports them
 * (--num-callers=17: malloc and 16 frames).
 */
#include <stdint.h>
#include <stdlib.h>

#define PATHS 24
#define SHALLOW_PATHS 16 /* all of 4 levels' */
#define ROUNDS 3
#define DEEP 30
#define SHALLOW 4

void *kept[(PATHS + SHALLOW_PATHS) * ROUNDS];
static int nkept;

static void descend(unsigned path, int level);

__attribute__((noinline)) static void leaf(void)
{
	kept[nkept++] = malloc(40); /* LEAF_LINE */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void left(unsigned path, int level)
{
	descend(path, level - 1);
	__asm__ volatile("" ::: "memory"); /* a call, not a jump: a frame of its own */
}

__attribute__((noinline)) static void right(unsigned path, int level)
{
	descend(path, level - 1);
	__asm__ volatile("" ::: "memory");
}

/* level counts down to 0; its bit of path (the low bits at the bottom)
 * picks the function of that level. */
__attribute__((noinline)) static void descend(unsigned path, int level)
{
	if (level == 0)
		leaf();
	else if (path >> (level - 1) % 8 & 1)
		right(path, level);
	else
		left(path, level);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	for (int r = 0; r < ROUNDS; r++)
		for (unsigned p = 0; p < PATHS; p++) {
			descend(p * 7 + 3, DEEP);
			if (p < SHALLOW_PATHS)
				descend(p, SHALLOW);
		}
	return nkept == (PATHS + SHALLOW_PATHS) * ROUNDS ? 0 : 1;
}
