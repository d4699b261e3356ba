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
 * it may read.  What memcheck itself runs there after the clearing
 * (the withdrawal of its exit entry) is cleared with its frames at the
 * end (the wrapper's TOP bytes).
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
#include <stdlib.h>
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
#define TOP 1024               /* below the wrapper's frame, cleared after */
_Static_assert(TOP >= MARGIN + 0x100 && TOP % 8 == 0, "clear_dead_stack's frame and margin");
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

/* true where it cleared (not under valgrind): the wrapper then clears
 * the margin too */
__attribute__((noinline)) static bool clear_dead_stack(void)
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
		return false;
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
	return true;
}


/* ---- exit's entry in the C library's exit-function list ------------- */

/* What the last is for: memcheck's exit work (life.c's handler, called
 * as a __cxa_atexit function: fn(arg, status)) must run after every
 * object's destructor, that is after the dynamic linker's _dl_fini, which
 * the C library's start registers as an exit function of its own from
 * rtld_fini.  A handler registered for it took a slot of glibc's lists
 * (32 a list, the first static, the others calloc'd: life.c), so that a
 * program whose handlers filled a list to the last slot had one list
 * (1,040 bytes) allocated and freed more than bare and valgrind (31
 * handlers registered before memcheck's constructor, or 63...).  Here
 * it takes none: rtld_fini's entry becomes fini_then_exit, which
 * registers memcheck's handler at exit, in the slot exit has just freed
 * (glibc then runs it next, after _dl_fini returns: it starts its loop
 * over when a handler registers another; or first, in the exit() a
 * later destructor calls), and calls _dl_fini.  Every handler registered
 * before rtld_fini's runs after, as before, but those registered between
 * memcheck's constructor and the program's start (a library initialised
 * after libmemcheck, registering in its constructor): memcheck's handler
 * ran after them.  So the constructor still registers it (a libmemcheck
 * loaded by dlopen has no start of the program to come); the start
 * withdraws that entry (__cxa_finalize of its own mark, the C library's
 * way to free an entry, which the next registration, rtld_fini's, takes
 * again: no list more) where no handler was registered after it (the
 * two registration calls, wrapped below, say so), and keeps it where one
 * was, one slot more than bare there.  libmemcheck.a's constructor runs
 * inside the C library's start, after this wrapper: rtld_fini's entry is
 * taken here first, and the constructor's registration is only noted
 * (mc_start_exit_register). */
MC_HOT void *mc_next_cxa_atexit, *mc_next_on_exit;
/* __libc_start_main came through here; a handler registered between
 * memcheck's constructor and it */
MC_HOT static bool start_seen;
static bool registered_after;
enum { EXIT_NONE, EXIT_CTOR, EXIT_AT_FINI };
MC_HOT static unsigned char exit_entry; /* where memcheck's handler is */
static void (*exit_fn)(void *, int);
static void *exit_arg;
static void (*fini_real)(void);
static bool withdrawing;
bool mc_start_exit_lost;
MC_HOT bool mc_start_ctor_ran;
/* the C library's, declared by no header */
void __cxa_finalize(void *dso);
MC_API int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

typedef int (*cxa_atexit_fn)(void (*)(void *), void *, void *);
typedef int (*on_exit_fn)(void (*)(int, void *), void *);
/* a __cxa_atexit function takes the status too: glibc calls it so */
#define AS_CXA(f) ((void (*)(void *))(void (*)(void))(f))

/* The C library's registration call (p: where start-up stored it), the
 * wrappers' slow way: looked up where a library's constructor registers
 * before memcheck started (libstdc++'s, which the dynamic linker
 * initialises before libmemcheck: not rare, group 0 with the wrappers);
 * and a registration between memcheck's constructor and the program's
 * start noted (the constructor's entry then stays).  Looked up alone,
 * not by starting memcheck there (mc_resolve_calls): start-up registers
 * memcheck's fork handlers, and an allocator preloaded first whose
 * start came after it (its first malloc, in libstdc++'s constructor
 * after that registration) had its own fork handler run first, holding
 * its locks while memcheck's waited for a thread that held memcheck's
 * and called the allocator (test_fork's allocator_first: forklocks hung
 * 10 runs of 30 under jemalloc, 0 before). */
static __attribute__((noinline)) void *exit_real_of(void **p, const char *name)
{
	if (exit_entry == EXIT_CTOR && !start_seen)
		registered_after = true;
	void *f = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	return f ? f : mc_sym_next(name, NULL);
}

static int cxa_atexit_real(void (*fn)(void *), void *arg, void *dso)
{
	cxa_atexit_fn f = (cxa_atexit_fn)mc_next_cxa_atexit;
	if (!f || exit_entry == EXIT_CTOR)
		f = (cxa_atexit_fn)exit_real_of(&mc_next_cxa_atexit, "__cxa_atexit");
	return f ? f(fn, arg, dso) : -1;
}

/* memcheck's handler, as registered: not while the start withdraws it
 * (__cxa_finalize calls each entry it frees) */
static void exit_thunk(void *arg, int status)
{
	if (!withdrawing)
		exit_fn(arg, status);
}

/* rtld_fini's entry: memcheck's handler registered, then _dl_fini (every
 * watched process's exit: group 1). */
static __attribute__((noinline)) void fini_then_exit(void *arg, int status)
{
	(void)arg;
	(void)status;
	if (exit_fn && cxa_atexit_real(AS_CXA(exit_thunk), exit_arg, exit_arg) != 0)
		mc_start_exit_lost = true; /* the destructor ends the regions itself */
	fini_real();
}

int mc_start_exit_register(void (*fn)(void *, int), void *mark)
{
	exit_fn = fn;
	exit_arg = mark;
	if (exit_entry == EXIT_AT_FINI)
		return 0; /* libmemcheck.a: rtld_fini's entry taken already */
	int r = cxa_atexit_real(AS_CXA(exit_thunk), mark, mark);
	if (r == 0)
		exit_entry = EXIT_CTOR;
	return r;
}

MC_API int __cxa_atexit(void (*fn)(void *), void *arg, void *dso)
{
	return cxa_atexit_real(fn, arg, dso);
}

MC_API int on_exit(void (*fn)(int, void *), void *arg)
{
	on_exit_fn f = (on_exit_fn)mc_next_on_exit;
	if (!f || exit_entry == EXIT_CTOR)
		f = (on_exit_fn)exit_real_of(&mc_next_on_exit, "on_exit");
	return f ? f(fn, arg) : -1;
}

/* At the program's start: rtld_fini's entry for memcheck's handler
 * where it may be (the head says when), else rtld_fini as it is. */
static __attribute__((noinline)) void (*exit_at_fini(void (*rtld_fini)(void)))(void)
{
	start_seen = true;
	if (!rtld_fini || exit_entry == EXIT_AT_FINI || (exit_entry == EXIT_CTOR && registered_after))
		return rtld_fini;
	if (exit_entry == EXIT_CTOR) {
		withdrawing = true;
		__cxa_finalize(exit_arg);
		withdrawing = false;
		/* __cxa_finalize's __unregister_atfork faulted a block of the
		 * C library's that start-up gave back (startpages.c) */
		if (__builtin_expect(mc_start_given, 0))
			mc_start_pages_again(); /* group 2b: a process that gave back runs it already */
	} else if (mc_start_ctor_ran) {
		return rtld_fini; /* a process left out, or not watching */
	}
	fini_real = rtld_fini;
	exit_entry = EXIT_AT_FINI;
	return (void (*)(void))fini_then_exit;
}

/* Out of the wrapper's group (its message too: a string literal, not
 * the static array that text-order.ld placed in .rodata.mc_first),
 * which paid for the clearing of the stack's top below. */
#define START_MISSING "memcheck: the C library's __libc_start_main is not found\n"
static __attribute__((noinline, cold, noreturn)) void start_main_missing(void)
{
	mc_write_all(2, START_MISSING, sizeof START_MISSING - 1);
	/* not _exit: life.c wraps it, above this layer */
	syscall(SYS_exit_group, 127);
	__builtin_unreachable();
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
	if (!real)
		start_main_missing();
	rtld_fini = exit_at_fini(rtld_fini);
	/* After exit_at_fini: its frames too.  Then the TOP bytes below
	 * this frame, clear_dead_stack's margin and frame included, in
	 * assembly (rep stosq up to the stack pointer; no frame of this
	 * function's lies below it: it calls others, so no red zone).
	 * What memcheck ran after the C library's start was called
	 * (clear_dead_stack's own frame and system calls, exit_at_fini's
	 * withdrawal, startpages.c's give-back again) lay in the top half
	 * KiB that the clearing leaves alone, which the C library's start
	 * code takes next, and a slot it never writes keeps it.  glibc's
	 * __libc_start_call_main keeps a setjmp buffer there, whose int
	 * __mask_was_saved is followed by 4 bytes of padding nothing
	 * writes (jmpbuf.c clears them in the program's own setjmp calls
	 * only): a run's address that mc_start_pages_again had saved in
	 * that slot kept its high half, 0x7f..00000000, the address of a
	 * block aligned_alloc had placed on 4 GiB near the C library, and
	 * the exit scan found the block still reachable
	 * (tests/prog/plain_leak_gigabyte, a third of the runs under glibc;
	 * gdb's watch on the slot: the last write before main was
	 * mc_start_pages_again's).  TOP: clear_dead_stack's frame (0xe0
	 * bytes) and MARGIN, rounded up; resident, as memcheck's
	 * constructor ran deeper on this stack. */
#if defined(__x86_64__)
	if (mc_is_active && mc_opt.track && mc_opt.scan && clear_dead_stack())
		__asm__ volatile("lea -%c[top](%%rsp), %%rdi\n\t"
				 "mov %[n], %%ecx\n\t"
				 "xor %%eax, %%eax\n\t"
				 "rep stosq"
				 :
				 : [top] "i"(TOP), [n] "i"(TOP / 8)
				 : "rax", "rcx", "rdi", "memory", "cc");
#else
	if (mc_is_active && mc_opt.track && mc_opt.scan)
		clear_dead_stack();
#endif
	return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}
