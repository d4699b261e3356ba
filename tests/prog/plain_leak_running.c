/* Two threads still running when the main thread exits, each keeping
 * one block in a local and having lost one whose address a returned
 * call left below its stack pointer, in the 128 bytes the ABI lets a
 * leaf function use (the red zone).  valgrind makes those bytes
 * undefined at every call and return and skips them; memcheck scanned a
 * running thread's red zone (it skipped only a thread's stopped in a
 * system call: plain_leak_blocked.c), and both lost blocks were still
 * reachable under all four allocators.  Each thread spins without a
 * call or a system call, so it is stopped running, and its caller-saved
 * registers hold no copy of the address (roots for either tool). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "plain_leak_common.h"

#define THREADS 2

static atomic_int ready;
static atomic_ulong spins;

/* A block lost at once, its address left in this function's frame:
 * below the caller's stack pointer once it returns. */
__attribute__((noinline)) static void lose_one(size_t size)
{
	char *volatile lost = malloc(size);
	for (size_t k = 0; k < size; k++) /* no call: nothing else left below */
		lost[k] = 0;
}

/* The caller-saved registers cleared (malloc and the loop above may
 * leave the address in one); a call that writes only its return
 * address, the word lose_one's return address took. */
__attribute__((noinline)) static void clear_scratch(void)
{
#if defined(__x86_64__)
	__asm__ volatile("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\t"
			 "xor %%esi, %%esi\n\txor %%edi, %%edi\n\txor %%r8d, %%r8d\n\t"
			 "xor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
#endif
}

static void *worker(void *arg)
{
	long i = (long)arg;
	char *volatile keep = malloc((size_t)(96 + 16 * i));
	lose_one((size_t)(48 + 16 * i));
	clear_scratch();
	atomic_fetch_add(&ready, 1);
	for (;;)
		atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
	return keep;
}

int main(void)
{
	pthread_t t;
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t, NULL, worker, (void *)i);
	while (atomic_load(&ready) < THREADS)
		usleep(1000);
	scrub();
	return 0;
}
