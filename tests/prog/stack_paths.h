/*
 * stack_paths.h - a distinct allocation stack for every number: leaf()
 * is called at the end of a chain of depth calls through two functions,
 * the bits of path choosing which at each step (tests/prog/forklocks.c,
 * plain_bigrecords.c).  Not inlined and no tail calls, so that every
 * step is a frame of its own for memcheck's frame-pointer walk.
 */
#ifndef MEMCHECK_TESTS_STACK_PATHS_H
#define MEMCHECK_TESTS_STACK_PATHS_H

static inline __attribute__((always_inline)) void path_down(unsigned path, int depth,
							    void (*leaf)(void));

static __attribute__((noinline)) void path_left(unsigned path, int depth, void (*leaf)(void))
{
	path_down(path >> 1, depth - 1, leaf);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void path_right(unsigned path, int depth, void (*leaf)(void))
{
	path_down(path >> 1, depth - 1, leaf);
	__asm__ volatile("" ::: "memory");
}

/* Inlined into the two: one frame a step, so that 16 frames hold
 * 15 steps. */
static inline __attribute__((always_inline)) void path_down(unsigned path, int depth,
							    void (*leaf)(void))
{
	if (depth == 0)
		leaf();
	else if (path & 1)
		path_right(path, depth, leaf);
	else
		path_left(path, depth, leaf);
}

#endif
