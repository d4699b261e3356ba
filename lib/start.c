/*
 * start.c - the program's start (__libc_start_main, interposed): the
 * dead stack below it is cleared of what the shared libraries'
 * initializers left there, before main's frames reuse it.
 *
 * The dynamic linker runs every library's constructor (an allocator's
 * start-up, the C++ runtime's, memcheck's own) on the stack that _start,
 * the C library's start code and main then reuse.  A slot of a later
 * frame that its function never writes (the tail of a buffer in main,
 * padding) still holds what an initializer left there: the address of a
 * block the allocator made at start-up and dropped on purpose
 * (tcmalloc's default MallocExtension, 8 bytes), say.  The exit scan then
 * finds that block still reachable in a third of the runs, as address
 * randomization lines the frames up, where valgrind, to which dead stack
 * is undefined, says definitely lost, and the shipped suppression for
 * it no longer matches.  Cleared once here, every later frame starts as
 * valgrind sees it.  The program cannot tell: dead stack holds nothing
 * it may read.
 *
 * Traps.  The clearing runs below the stack pointer, from a margin
 * below its own frame that the small frames of the system calls it
 * makes (mincore) stay within.  Signals are not blocked: a handler that
 * ran during the clearing leaves its dead frame below the stack pointer
 * exactly as one that ran the moment after it would (blocking them
 * only moved such a handler to the unblocking), and its frame, written
 * below ours while we wait, is dead before the clearing goes on (two
 * sigprocmask calls and sigfillset's binding, every measured process's
 * start, for nothing).  Only pages already resident are cleared (mincore), so resident memory
 * stays the program's.  valgrind reports writes below the stack
 * pointer: under it, and wherever memcheck does not scan, nothing is
 * done.  The wrapper makes no frame of its own
 * (MC_FRAMELESS, a tail call): _start leaves the frame pointer 0, and the
 * C library's start code keeps it so, which is where every allocation
 * stack's walk ends; a frame here would lead the walk on through the C
 * library's start code by its call-frame information, at every
 * allocation (twice the instructions of tracking on malloc_bench).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define ON_VALGRIND RUNNING_ON_VALGRIND
#else
#define ON_VALGRIND 0
#endif

typedef int (*start_fn)(int (*)(int, char **, char **), int, char **, void (*)(void),
			void (*)(void), void (*)(void), void *);

#define PAGE 4096
#define MARGIN 512             /* below the clearing's frame, left alone */
#define MAX_DEPTH (8u << 20)   /* the default stack limit */

#define WINDOW 16               /* pages asked of mincore at once */

/* Of the n pages from top down (top - (n - 1) pages .. top), how many are
 * resident in a run from top: one mincore call for them all, where the
 * stack's mapping reaches that far (the kernel maps 132 KiB and more at
 * start), else one a page (*window cleared: the mapping ends near). A
 * process cleared 4 to 5 pages a call each, one after another. */
static unsigned resident_run(uintptr_t top, unsigned n, bool *window)
{
	unsigned char v[WINDOW];
	if (*window && mc_sys_mincore((void *)(top - (uintptr_t)(n - 1) * PAGE), (size_t)n * PAGE, v) == 0) {
		unsigned k = 0;
		while (k < n && (v[n - 1 - k] & 1))
			k++;
		return k;
	}
	*window = false;
	unsigned k = 0;
	while (k < n && mc_sys_mincore((void *)(top - (uintptr_t)k * PAGE), PAGE, v) == 0 && (v[0] & 1))
		k++;
	return k;
}

__attribute__((noinline)) static void clear_dead_stack(void)
{
	/* Asked here, not in the wrapper: valgrind's request keeps its
	 * arguments in an array on the asker's stack, and a wrapper with a
	 * local whose address is taken cannot jump to the C library's
	 * function; it called it, and its return address (lib/start.c:96)
	 * was a frame of every stack the program made, printed in every
	 * leak record, and the one frame that made suppression matching of
	 * a process with nothing of its own to print load libdw for
	 * libmemcheck's DWARF. */
	if (ON_VALGRIND)
		return;
	volatile char mark = 0; /* the lowest of this frame's own slots */
	uintptr_t sp = (uintptr_t)&mark;
	uintptr_t hi = sp - MARGIN, lo = hi & ~(uintptr_t)(PAGE - 1);
	uintptr_t floor = sp > MAX_DEPTH ? sp - MAX_DEPTH : 0;
	bool window = true;
	while (lo >= floor && lo > 0) {
		uintptr_t below = (lo - (floor ? floor : PAGE)) / PAGE + 1; /* pages lo.. down */
		unsigned n = below < WINDOW ? (unsigned)below : WINDOW;
		unsigned k = resident_run(lo, n, &window);
		for (unsigned i = 0; i < k; i++) {
			for (volatile uintptr_t *w = (volatile uintptr_t *)lo; (uintptr_t)w < hi; w++)
				*w = 0;
			hi = lo;
			lo -= PAGE;
		}
		if (k < n)
			break; /* a page not resident: nothing below is the program's */
	}
	(void)mark;
}

MC_API int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
			     void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
			     void *stack_end);
MC_API MC_FRAMELESS int __libc_start_main(int (*main)(int, char **, char **), int argc,
					  char **argv, void (*init)(void), void (*fini)(void),
					  void (*rtld_fini)(void), void *stack_end)
{
	/* found at start-up, which ran before (the constructor; linked
	 * into the program, memcheck starts inside the call below) */
	start_fn real = (start_fn)mc_next_start_main;
	if (!real)
		real = (start_fn)mc_sym_next("__libc_start_main", NULL);
	if (!real) {
		static const char msg[] = "memcheck: the C library's __libc_start_main is not found\n";
		mc_write_all(2, msg, sizeof msg - 1);
		/* not _exit: life.c wraps it, above this layer */
		syscall(SYS_exit_group, 127);
		__builtin_unreachable();
	}
	if (mc_is_active && mc_opt.track && mc_opt.scan)
		clear_dead_stack();
	return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}
