/*
 * plain_leak_depth.c - leaks whose allocation stacks are the same down to
 * a given depth and differ only below it, for the records valgrind's
 * --num-callers merges (preloaded only, never linked to memcheck; no
 * stdio).
 *
 * Usage: plain_leak_depth K.  leaf() allocates, called through K levels
 * of step(), each level the same call site, called from left() or
 * right(): under valgrind, frame 1 is malloc, 2 leaf, 3 to K + 2 step,
 * K + 3 left or right.  So the two paths' stacks are one down to frame
 * K + 2 and differ at K + 3: with --num-callers=K + 2 or less valgrind
 * makes one loss record of each kind, with K + 3 or more two.  Each
 * path leaks blocks definitely (left 2, right 3, of 32 bytes: merged,
 * "160 bytes in 5 blocks") and keeps blocks still reachable from a
 * global (left 1, right 4, of 48 bytes).
 */
#include <stdlib.h>

/* tests/prog/cxx_leak_depth.cc allocates through the program's own
 * operator new and new[] instead */
#ifndef LEAK_ALLOC
#define LEAK_ALLOC(keep) malloc(keep ? 48 : 32)
#endif

#define KEPT 5
void *kept[KEPT];
static int nkept;

__attribute__((noinline)) static void leaf(int keep)
{
	void *p = LEAK_ALLOC(keep);
	if (keep)
		kept[nkept++] = p;
	__asm__ volatile("" : : "r"(p) : "memory"); /* lost: the only copy dies here */
}

__attribute__((noinline)) static void step(int level, int keep)
{
	if (level == 0)
		leaf(keep);
	else
		step(level - 1, keep);
	__asm__ volatile("" ::: "memory"); /* a call, not a jump: a frame of its own */
}

__attribute__((noinline)) static void left(int k, int lost, int keep)
{
	for (int i = 0; i < lost + keep; i++)
		step(k - 1, i >= lost);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void right(int k, int lost, int keep)
{
	for (int i = 0; i < lost + keep; i++)
		step(k - 1, i >= lost);
	__asm__ volatile("" ::: "memory");
}

/* No stack word keeps a lost block: the calls above overwrite their
 * frames' slots, and this clears what lies below main's. */
__attribute__((noinline)) static void clear_stack(void)
{
	volatile char junk[4096];
	for (unsigned i = 0; i < sizeof junk; i++)
		junk[i] = 0;
}

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 10;
	if (k < 1 || k > 200)
		return 2;
	left(k, 2, 1);
	right(k, 3, 4);
	clear_stack();
	return 0;
}
