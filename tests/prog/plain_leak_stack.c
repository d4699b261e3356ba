/* Pointers only in a live frame's local and in a register when the
 * process exits (exit called from inside the frame): still reachable;
 * and a block lost before (definite). */
#include "plain_leak_common.h"

__attribute__((noinline)) static void lose(void)
{
	void *volatile p = malloc(80);
	(void)p;
}

__attribute__((noinline)) static void hold(void)
{
	void *volatile local = malloc(48);
	void *reg = malloc(112);
	__asm__ volatile("" : "+r"(reg));
	void (*volatile fin)(int) = exit;
	fin(0);
	__asm__ volatile("" : : "r"(reg));
	(void)local;
}

int main(void)
{
	lose();
	scrub();
	hold();
	return 0;
}
