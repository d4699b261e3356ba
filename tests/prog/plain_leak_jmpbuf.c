/* Possibly lost: a block a global points into, whose start a dead frame
 * left in the part of a live frame's jmp_buf that _setjmp never writes
 * (the signal mask's 128 bytes; sigsetjmp(env, 1) has the kernel write
 * 8 of them: plain_leak_sigjmpbuf).  valgrind skips those words as
 * undefined; memcheck's _setjmp and __sigsetjmp clear them (jmpbuf.c),
 * where they kept the block still reachable (Lua 5.5's os.exit inside
 * luaD_rawrunprotected: 451 of valgrind's 470 possibly lost blocks).
 * The frame that holds the jmp_buf is written everywhere else, so the
 * unwritten bytes are the mask's alone. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

struct state { long head[5]; long l; }; /* the program keeps &s->l */
long *volatile interior;

/* A dead frame where the jmp_buf's frame will lie, full of the block's
 * start. */
__attribute__((noinline)) static void newstate(void)
{
	struct state *volatile keep[128];
	struct state *s = calloc(1, sizeof *s + 32); /* 80 bytes */
	for (int i = 0; i < 128; i++)
		keep[i] = s;
	__asm__ volatile("" : : "r"(keep) : "memory");
	interior = &s->l;
}

/* 320 bytes: with the return address and the saved frame pointer a
 * multiple of 16, so no padding word of the frame is left unwritten. */
struct frame {
	long before[8];
	jmp_buf b;
	long after[7];
};

__attribute__((noinline)) static void run(void)
{
	struct frame f;
	explicit_bzero(f.before, sizeof f.before);
	explicit_bzero(f.after, sizeof f.after);
#ifdef SAVE_MASK
	if (sigsetjmp(f.b, 1) == 0)
#else
	if (setjmp(f.b) == 0)
#endif
		exit(0); /* the state left alive, as Lua's os.exit(0) */
	__asm__ volatile("" : : "r"(&f) : "memory");
}

int main(void)
{
	newstate();
	run();
	return 0;
}
