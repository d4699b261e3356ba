/*
 * fatal.c - a process killed by a fatal signal still gets its record.
 *
 * A signal whose default action ends the process (SIGSEGV, abort()'s
 * SIGABRT, a SIGTERM nobody handles) runs no exit handler: without this
 * file such a process left no record at all, where valgrind prints the
 * faulting stack, its HEAP SUMMARY and LEAK SUMMARY, and then lets the
 * process die of the same signal.  Test drivers run crashing tests all
 * the time, and their figures are wanted most then.
 *
 * So at start-up memcheck puts a handler of its own wherever the
 * program inherited the default action of such a signal; the handler
 * writes the record as at exit (life.c's callback, with the signal
 * marked in it), puts the default action back and sends the same signal
 * again, with the same siginfo, to the same thread: the wait status,
 * the core dump and the exit code are bare's.
 *
 * Traps that shaped it:
 * - The program must not see the handler.  signals.c's sigaction and
 *   signal show SIG_DFL, with the flags and mask bare would show
 *   (mc_fatal_view); a program's SIG_DFL puts memcheck's handler back
 *   in its place (mc_fatal_default); its own handler or SIG_IGN replace
 *   it.  A signal inherited ignored is never caught: the handler is
 *   installed with the one system call that returns the old action,
 *   and an ignored one (or one with a handler already) is put back.
 * - The fault may have come anywhere.  Inside memcheck (its guard up:
 *   a shard's lock, the depot's, the allocator's lock while tracking)
 *   the record would deadlock: it is given up, said in one line, and
 *   the process dies as bare.  A signal that asks the process to end
 *   (SIGTERM...) is owed instead: its record is written when memcheck's
 *   work in the thread ends (the guard's coming down), given up only
 *   where that takes past twice MEMCHECK_FATAL_SCAN_MS (an exit's scan
 *   it came during cut at the deadline, and the record's rest after
 *   it), said then on standard error with what the exit's text held.
 *   Inside stdio: the record writes through
 *   memcheck's own descriptors, and the program's stdout is not flushed
 *   (bare loses it too).  Inside the allocator (count-only calls it
 *   with no guard up; tracking's free, after its guard came down): its
 *   lock may be held, so the record asks it nothing, and every question
 *   it asks the allocator is bounded (mc_fatal_bounded).  A second
 *   fault while the record is written comes back here on the same
 *   thread: it ends the process with the
 *   first signal, never a loop (said once).  A record that takes longer
 *   than MEMCHECK_FATAL_TIMEOUT seconds (a lock another thread holds
 *   for ever, a corrupt heap the scan walks slowly) is ended by a timer
 *   whose handler kills the process with the first signal.
 * - A driver that asks a test to end (SIGTERM at meson's timeout) kills
 *   it soon after (SIGKILL 0.5 s later): a record whose scan of a large
 *   heap outlasts that is lost whole.  At such a signal the scan has
 *   MEMCHECK_FATAL_SCAN_MS (mc_fatal_deadline_ns, scan.c), and a scan cut
 *   there gives a record with the figures counted and no leak kinds,
 *   marked incomplete and failed (region.c), never a clean pass.
 * - Threads: the first thread to take a fatal signal writes the record;
 *   one that takes another meanwhile waits in its handler for the
 *   process to end.  Asynchronous signals are blocked in the writing
 *   thread meanwhile (bare, the process is already dead); the faults
 *   (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS), SIGABRT and the
 *   timer's SIGALRM are not, so that they come here.
 * - A vfork child shares its parent's memory: it dies as bare, its
 *   parent's state untouched.
 * - A stack overflow's SIGSEGV cannot be delivered to a handler on the
 *   stack that overflowed: the kernel then kills the process as bare,
 *   with no record.  So the main thread gets an alternate stack of
 *   memcheck's (ALT_SIZE, lazily mapped: untouched, it costs no
 *   resident page, but address space, so ALT_TIGHT and none for other
 *   threads under a limit memcheck may not move; its pages are memcheck's own in the figures, as
 *   mc_map_lazy's are), with a guard page below it, and the SIGSEGV
 *   and SIGBUS handlers run on it (SA_ONSTACK).  The program does not
 *   see it: signals.c's sigaltstack shows SS_DISABLE where memcheck's is
 *   set, a program's own replaces it, and its SS_DISABLE puts
 *   memcheck's back.  The kernel gives a new thread no alternate
 *   stack: each other thread gets one as it starts (threadstart.c's
 *   pthread_create and thrd_create, before the thread's start routine
 *   runs) or, for one made otherwise (a raw clone), at its first
 *   allocation (account.c takes its slot then): a slot of a reservation
 *   made at the first thread, given back at the thread's end: one
 *   sigaltstack call there and one at the end, no mapping a thread
 *   (doc/costs.md, sessions 34, 36, 38, 39).  A thread ended by a raw
 *   SYS_exit gives nothing back (no destructor runs): once every slot
 *   is taken, those whose owner thread no longer exists are taken back
 *   (session 41).  A thread that neither pthread_create nor
 *   thrd_create started and that never allocates has none.
 * - A program's own SA_ONSTACK handler, where the program has no
 *   alternate stack of its own, runs on the interrupted stack bare; the
 *   kernel puts it on memcheck's.  So signals.c's trampoline, finding
 *   itself there, calls it on the interrupted stack, below its red zone
 *   and the room the kernel's frame would have taken there
 *   (mc_fatal_beside): its locals, its stack's depth, a stack overflow
 *   in it are bare's.  memcheck's stack is armed with SS_AUTODISARM: the
 *   kernel disarms it while a handler runs on it (and puts it back at
 *   the handler's return), so a signal that comes while the program's
 *   handler runs goes where bare puts it, never over the frames still
 *   in use up there.  The handler sees the ucontext's uc_stack bare's
 *   (none).  One it leaves by siglongjmp leaves the stack disarmed until
 *   a handler runs again above the frame it had (it was left, then):
 *   armed again there.
 * - SA_RESETHAND (every handler sysv_signal sets): the kernel would put
 *   its SIG_DFL back after the handler's one run, not memcheck's.  So
 *   signals.c installs such a handler without it, and its trampoline
 *   makes the reset itself before the handler runs (mc_fatal_reset):
 *   memcheck's handler back, shown as SIG_DFL with the flags, mask
 *   and restorer the kernel keeps at a reset.  A second thread that
 *   takes the signal before that reset is handled as the kernel's
 *   SIG_DFL would, by memcheck's handler.
 * - Handlers and alternate stacks the program sets with syscall(2)
 *   (SYS_rt_sigaction, SYS_sigaltstack) go through signals.c as its
 *   sigaction and sigaltstack do (sandbox.c's syscall); ones set by an
 *   inline system call instruction are not followed: the record is then
 *   lost for that signal, never the bare behaviour.  SIGKILL and
 *   SIGSTOP cannot be caught.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

/* Those whose default action ends the process (signal(7)) and that end
 * tests: faults, abort, a driver's or a timeout's SIGTERM, SIGINT,
 * SIGHUP, SIGALRM, SIGPIPE, the resource limits' SIGXCPU and SIGXFSZ, a
 * seccomp filter's SIGSYS, an unhandled SIGUSR1 or SIGUSR2.  Each costs
 * a system call at every measured process's start (~4 us each on these
 * loaded VMs, a getppid's cost), so not the ones nothing sends a test
 * without a handler of its own: SIGPROF and SIGVTALRM (profilers),
 * SIGIO (O_ASYNC), SIGPWR, SIGSTKFLT, and the real-time ones (one is
 * memcheck's scan's, threads.c). */
static const unsigned char fatal_sigs[] = {
	SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT, SIGBUS,  SIGFPE,  SIGUSR1,
	SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS,
};

/* The ones a fault raises: left unblocked while the record is written,
 * so that a fault there comes back to the handler. */
static bool fatal_synchronous(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGSYS;
}

/* Set at start-up: life.c's record, and whether handlers are armed.
 * MC_HOT: written by every measured process at its start. */
MC_HOT static void (*record_fn)(void);
MC_HOT static bool armed;
/* Per signal, the flags the kernel holds for memcheck's handler that
 * the program's view does not have (SA_SIGINFO, SA_ONSTACK, and
 * SA_RESTORER with its restorer where the program never set the
 * action), and SA_RESETHAND where the view has it and the kernel not
 * (after a reset memcheck made): each a flag the view toggles. */
MC_HOT static unsigned hide[_NSIG];
/* SA_ONSTACK once memcheck's alternate stack is set, else 0. */
MC_HOT static unsigned onstack;

/* The thread writing the record (its tid), the signal and its
 * details: what the record shows. */
static _Atomic int writer;
static atomic_bool said;
int mc_fatal_sig;
int mc_fatal_code;
uintptr_t mc_fatal_addr;
uint32_t mc_fatal_stack;
bool mc_fatal_main_thread;
uintptr_t mc_fatal_sp;
uint64_t mc_fatal_deadline_ns;
int mc_fatal_deadline_sig;
static siginfo_t fatal_info;

/* The main thread's alternate stack: its lowest page a guard, so that a
 * record that outgrows it faults (and is given up) instead of writing
 * over the mapping below.  A record used 23-30 KiB of it, and 182 KiB
 * where valgrind's text loaded libdw to name the frames (measured:
 * doc/costs.md, session 34); untouched pages cost nothing. */
#define ALT_SIZE (1024 * 1024)
static char *alt_base;
/* Under an address-space limit memcheck may not move (ownmap.c's
 * mc_map_tight), where every byte it maps is one the program loses: the
 * main thread's is ALT_TIGHT (a record's 23-30 KiB, libdw's 182 KiB
 * fit), and the other threads get none (a reservation of 16 MiB at the
 * first thread): a stack overflow there kills the thread's process as
 * bare, with no record. */
#define ALT_TIGHT (256 * 1024)
/* The usable bytes of every alternate stack of memcheck's (above its
 * guard page): the threads' slots' (ALT_SIZE), or the main thread's
 * alone, ALT_TIGHT, under a limit. */
static size_t alt_len = ALT_SIZE - 4096;

/* The other threads' alternate stacks: a slot of ALT_SIZE (its lowest
 * page a guard, mprotected at the slot's first use) for each of
 * thread that runs (alt_state), given
 * back at the thread's end (alt_key's destructor, or account.c's slot's
 * for a thread armed at its first allocation) and taken again by the
 * next thread.  They are memcheck's, not account.c's slots: a thread
 * that never allocates takes no slot there (which would end its solo
 * mode, a cost to every allocation after).  Reserved ALT_CHUNK slots at
 * a time, lazily mapped, at the first thread that needs one: a thread
 * pays one sigaltstack at its start and one at its end; its pages are
 * memcheck's own (untouched, none resident). */
#define ALT_CHUNK 16
#define ALT_CHUNKS 64
#define ALT_SLOTS (ALT_CHUNK * ALT_CHUNKS)
static char *_Atomic alt_chunks[ALT_CHUNKS];
static atomic_flag alt_chunk_lock = ATOMIC_FLAG_INIT;
/* Per slot, ALT_GUARDED once its guard page is set, ALT_TAKEN while a
 * thread has it. */
#define ALT_GUARDED 1
#define ALT_TAKEN 2
static _Atomic unsigned char alt_state[ALT_SLOTS];
static _Atomic int alt_owner_hi; /* the slots from it on never taken */
/* Per slot, its owner: the taking thread's id in the low 32 bits (0
 * while none is known), a count of its takings above it, so that a
 * slot given back and taken again by a thread that got a dead owner's
 * id is never mistaken for the dead owner's.  A thread that ends by a
 * raw SYS_exit runs no destructor and keeps its slot: once no slot is
 * free, those whose owner no longer exists are taken back
 * (alt_reclaim). */
static _Atomic uint64_t alt_who[ALT_SLOTS];
/* alt_reclaim's backoff: after a pass that found no dead owner, the
 * next pass waits for twice as many thread starts (a program with more
 * than ALT_SLOTS threads alive pays ALT_SLOTS tgkill calls only at
 * the 1st, 2nd, 4th, 8th... start past them, not at each). */
static _Atomic unsigned alt_reclaim_wait, alt_reclaim_gap;
static pthread_key_t alt_key;
static bool alt_key_made;
/* This thread's alternate stack of memcheck's (alt_base in the thread
 * that started memcheck, a slot's in the others), or NULL; its slot. */
static MC_TLS char *alt_mine;
static MC_TLS int alt_slot;

static void fatal_handler(int sig, siginfo_t *si, void *uc);

static int fatal_mask(int how, const sigset_t *set)
{
	return (int)syscall(SYS_rt_sigprocmask, how, set, NULL, _NSIG / 8);
}

/* The default action back, and the signal again, with its siginfo, to
 * this thread: it dies as bare (status, core) when the signal is let
 * through, which it is at once. */
static _Noreturn void fatal_die(int sig, const siginfo_t *si)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	mc_sys_sigaction(sig, &dfl, NULL);
	pid_t pid = (pid_t)syscall(SYS_getpid), tid = (pid_t)syscall(SYS_gettid);
	siginfo_t info;
	if (si) {
		info = *si;
		if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &info) != 0)
			syscall(SYS_tgkill, pid, tid, sig);
	} else {
		syscall(SYS_tgkill, pid, tid, sig);
	}
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	fatal_mask(SIG_UNBLOCK, &one);
	/* not reached: the signal ends the process; the whole process
	 * then, and at the very last an exit that says which signal */
	syscall(SYS_kill, pid, sig);
	syscall(SYS_exit_group, 128 + sig);
	__builtin_unreachable();
}

/* The value the watchdog's timer signals with: the program's own
 * SIGALRM (an itimer still running, one pending) is not it. */
#define WATCHDOG_VALUE 0x6d636b66

/* The value of mc_fatal_bounded's timer, and where it jumps to. */
#define BOUND_VALUE 0x6d636b62
static void **volatile bound_jump;
/* fatal_watchdog is SIGALRM's handler, from the record's start. */
static bool alarm_ours;
static bool fatal_asked(int sig);

/* Out of the bounded call (gcc's builtin: no import of the C
 * library's; the mask is put back by mc_fatal_bounded). */
static __attribute__((noinline, noreturn)) void bound_leave(void **at)
{
	__builtin_longjmp(at, 1);
}

/* The bounded call's cap on its work (mc_now's clock, in
 * nanoseconds; 0: none but the watchdog's). */
static uint64_t bound_cap_ns;

/* Did the tick interrupt a wait for a lock: a futex wait (glibc's,
 * jemalloc's and tcmalloc's locks all wait there) or another blocking
 * system call of the allocator's (a timed wait, a sleep between spins).
 * The handler has SA_RESTART: where the kernel restarts the call, it
 * backs the pc up onto the system call instruction and puts the call's
 * number back in rax (an untimed futex wait); where it does not (a
 * timed one), rax is -EINTR just after the instruction (both seen with
 * a 20 ms itimer here).  The code's bytes read through the kernel
 * (fatal_peek): pc - 2 may lie on a page of its own. */
static bool fatal_peek(uintptr_t at, uintptr_t *out);

static bool bound_waiting(const ucontext_t *uc)
{
	if (!uc)
		return false;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP], code;
	long nr = (long)uc->uc_mcontext.gregs[REG_RAX];
	if (!fatal_peek(pc - 2, &code))
		return false;
	return ((uint16_t)(code >> 16) == 0x050f && nr == SYS_futex) ||
	       ((uint16_t)code == 0x050f && nr == -EINTR);
}

/* The timer's SIGALRM: the record took too long, or a bounded call. */
static void fatal_watchdog(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	if (si && si->si_code == SI_TIMER && si->si_value.sival_int == BOUND_VALUE) {
		/* the bounded call's tick: out of it where it waits for a
		 * lock or has worked past its cap; on where it works */
		void **at = bound_jump;
		if (at && (bound_waiting(uc) ||
			   (bound_cap_ns && (uint64_t)(mc_now() * 1e9) >= bound_cap_ns)))
			bound_leave(at);
		return; /* working, or the call had returned */
	}
	if (!si || si->si_code != SI_TIMER || si->si_value.sival_int != WATCHDOG_VALUE)
		return; /* the program's alarm: its process is ending */
	/* nothing said: the writer may hold the text's lock; what the
	 * record held, where it can go without waiting */
	mc_text_hold_salvage();
	int s = mc_fatal_sig;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	mc_sys_sigaction(s, &dfl, NULL);
	syscall(SYS_kill, (pid_t)syscall(SYS_getpid), s);
	fatal_die(s, NULL);
}

/* A timer of its own (the system calls: no import, no thread) that
 * sends sig, with value, to thread tid once, ns nanoseconds from now
 * (then every ns where every): its id, or -1. */
static int thread_timer_every(pid_t tid, int sig, int value, uint64_t ns, bool every)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_int = value;
	ev._sigev_un._tid = tid;
	int id;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) != 0)
		return -1;
	struct timespec v = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	struct itimerspec t = { every ? v : (struct timespec){ 0, 0 }, v };
	if (syscall(SYS_timer_settime, id, 0, &t, NULL) != 0) {
		syscall(SYS_timer_delete, id);
		return -1;
	}
	return id;
}

static int thread_timer(pid_t tid, int sig, int value, uint64_t ns)
{
	return thread_timer_every(tid, sig, value, ns, false);
}

/* fatal_watchdog as SIGALRM's handler (true where it is), from the
 * record's start: a SIGALRM the program's own alarm or itimer sends
 * meanwhile ends in it, never in the program's handler (which bare
 * never runs past the fatal signal: one that exits with a code of its
 * own would change how the process ends) nor in fatal_handler (a
 * second fatal signal, which gave the record up).  SA_RESTART: such a
 * SIGALRM does not cut the record's writes short (EINTR), and the
 * bounded call's tick can tell a lock's wait (bound_waiting). */
static bool fatal_alarm_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fatal_watchdog;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	return mc_sys_sigaction(SIGALRM, &sa, NULL) == 0;
}

/* The watchdog: a SIGALRM to the writing thread. */
static void fatal_arm_watchdog(pid_t tid)
{
	thread_timer(tid, SIGALRM, WATCHDOG_VALUE, (uint64_t)mc_opt.fatal_timeout * 1000000000u);
}

/* A question the record asks the allocator (allocator.c: its
 * statistics, its release, its purge timer) whose answer may wait on a
 * lock the interrupted code holds (a signal fatal_allocator_frames
 * found inside the allocator is asked nothing: mc_fatal_in_allocator)
 * or another thread keeps (one stopped in a handler of its own, one
 * blocked in malloc_stats's write to a full pipe with an arena's lock
 * held), or never end (a fault's corrupt heap walked round a loop):
 * fn(arg) runs on the writing thread, and false says its figures are
 * unknown, the call left by a long jump (the process ends after the
 * record: the allocator's state no longer matters; it is asked nothing
 * more).
 *   - Where none of that can be (a signal that asks the process to end,
 *     so a heap as sound as at any exit; the interrupted stack walked
 *     out of the allocator's code, none of its frames inside; no other
 *     thread), fn runs as at an exit, without a timer: a large heap's
 *     statistics take what they take (glibc's mallinfo2 walks every
 *     free chunk).
 *   - Otherwise a timer ticks every BOUND_TICK_MS: a tick that finds
 *     the thread waiting for a lock (bound_waiting) leaves the call;
 *     one that finds it working lets it work on, up to BOUND_MS after
 *     a fault or an abort (the heap may be corrupt), without a cap after
 *     an asked signal (the watchdog's still stands).
 * (Session 44 capped every question at 100 ms, and took every frame of
 * the C library for one of glibc's malloc: session 45.) */
#define BOUND_MS 100
#define BOUND_TICK_MS 20
static bool frames_out; /* the walk left the allocator's code, no frame inside */

bool mc_fatal_bounded(void (*fn)(void *), void *arg)
{
	if (mc_fatal_in_allocator)
		return false;
	/* whether the process runs other threads: asked once a record */
	static int alone = -1;
	bool asked = fatal_asked(mc_fatal_sig);
	if (asked && frames_out && alone < 0)
		alone = mc_never_threaded() || mc_threads_alone();
	if (asked && frames_out && alone > 0) {
		fn(arg);
		return true;
	}
	int timer = alarm_ours ? thread_timer_every((pid_t)syscall(SYS_gettid), SIGALRM,
						    BOUND_VALUE, (uint64_t)BOUND_TICK_MS * 1000000u,
						    true) :
				 -1;
	if (timer < 0) {
		/* unbounded: the watchdog still ends the process */
		fn(arg);
		return true;
	}
	bound_cap_ns = asked ? 0 : (uint64_t)(mc_now() * 1e9) + (uint64_t)BOUND_MS * 1000000u;
	int hook = mc_self.in_hook, in_real = mc_self.in_real;
	sigset_t mask;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, &mask, _NSIG / 8);
	void *at[5];
	if (__builtin_setjmp(at)) {
		bound_jump = NULL;
		fatal_mask(SIG_SETMASK, &mask);
		mc_self.in_hook = hook;
		mc_self.in_real = in_real;
		syscall(SYS_timer_delete, timer);
		mc_fatal_in_allocator = true;
		return false;
	}
	bound_jump = at;
	atomic_signal_fence(memory_order_seq_cst);
	fn(arg);
	bound_jump = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	syscall(SYS_timer_delete, timer);
	return true;
}

/* Read a word of the interrupted stack without faulting on a corrupt
 * one: the kernel copies it or says EFAULT. */
static bool fatal_peek(uintptr_t at, uintptr_t *out)
{
	struct iovec here = { out, sizeof *out };
	struct iovec there = { (void *)at, sizeof *out };
	return syscall(SYS_process_vm_readv, (pid_t)syscall(SYS_getpid), &here, 1, &there, 1,
		       0) == (long)sizeof *out;
}

/* The interrupted stack's frames, from its registers, by the same
 * call-frame rules the allocation stacks follow (cfi.c): at most max
 * (>= 1) into frames, their number returned. */
static int fatal_walk(const ucontext_t *uc, uintptr_t *frames, int max)
{
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	int n = 0;
	frames[n++] = pc;
	/* the faulting pc is no return address: its own rule is at pc */
	uintptr_t at = pc + 1;
	while (n < max) {
		struct mc_cfi_rule r;
		mc_cfi_rule(at, &r);
		uintptr_t cfa;
		if (r.kind == MC_CFI_SIGNAL) {
			/* a fault in a signal handler: the signal return, then
			 * the registers the handler's signal interrupted, from
			 * the kernel's ucontext at sp (cfi.c) */
			uintptr_t npc, nsp, nbp;
			if (!fatal_peek(sp + (uintptr_t)r.cfa_off, &nsp) ||
			    !fatal_peek(sp + (uintptr_t)r.cfa_off + 8, &npc) ||
			    !fatal_peek(sp + (uintptr_t)r.rbp_off, &nbp) || npc < 4096)
				break;
			frames[n++] = npc;
			if (nsp <= sp || (nsp & 7))
				break;
			sp = nsp;
			bp = nbp;
			at = npc;
			continue;
		}
		if (r.kind == MC_CFI_FP)
			cfa = bp + 16;
		else if (r.kind == MC_CFI_SP)
			cfa = sp + (uintptr_t)(intptr_t)r.cfa_off;
		else if (r.kind == MC_CFI_BP)
			cfa = bp + (uintptr_t)(intptr_t)r.cfa_off;
		else
			break;
		uintptr_t ret, nbp = bp;
		if (cfa <= sp || (cfa & 7) || !fatal_peek(cfa - 8, &ret) || ret == 0)
			break;
		if (r.kind == MC_CFI_FP && !fatal_peek(cfa - 16, &nbp))
			break;
		if (r.kind != MC_CFI_FP && r.rbp_off && !fatal_peek(cfa + (uintptr_t)(intptr_t)r.rbp_off, &nbp))
			break;
		frames[n++] = ret;
		sp = cfa;
		bp = nbp;
		at = ret;
	}
	return n;
}

/* The faulting stack: valgrind's "Process terminating" shows it. */
/* frames[0], the pc of the fault or of the signal's arrival, is stored
 * as the return address it would be, one past it: every frame of a
 * stack is one (the symbolizer names the byte before it, valgrind's
 * text writes it less one, vgtext.c), where valgrind's first frame is
 * that pc and its line (3.19: 0x10925C, plain_leak_altstack.c:65; pre57
 * named the byte before, line 64).  Valgrind's "Process terminating"
 * text alone shows this stack. */
static uint32_t fatal_fault_stack(const ucontext_t *uc, uintptr_t *frames, int n)
{
	/* (the frames valgrind's text takes more for allocations not
	 * among them) */
	int depth = mc_opt.stack_depth - mc_opt.valgrind_deeper;
	if (!uc || depth == 0 || n == 0)
		return 0;
	frames[0]++;
	return mc_stack_intern(frames, n < depth ? n : depth);
}

/* A signal that came inside the allocator may have its lock held by
 * this very thread: the record's questions to the allocator (its
 * statistics) would wait for that lock until the watchdog ended the
 * process, with no record.  Count-only (MEMCHECK_TRACK=0) calls jump
 * to the allocator with no guard of memcheck's raised, and tracking's
 * free comes down from its guard before its tail call of the
 * allocator's (account.c): a SIGTERM amid frees landed there in 2-3 of
 * 8 runs of plain_fatal in-allocator under glibc, jemalloc and
 * tcmalloc (session 44; mimalloc's frees take no lock).  A frame of the
 * interrupted stack in the allocator's code says it may have: the
 * record then asks the allocator nothing (allocator.c; retained bytes
 * unknown).  The allocator's code is its object's where the allocator
 * is a library of its own.  Where it is the C library's, it is the C
 * library's malloc functions (glibc_calls, their symbols' extents: an
 * internal function of theirs, _int_free, is a frame below one of them
 * on the stack), not the whole C library: a kill()'s, a sleep()'s, an
 * assert's abort() are not inside malloc (session 44 took every frame
 * of the C library for one, and so asked nothing after a fault or an
 * abort there under count-only, and the rest under a cap of 100 ms).
 * fork() holds every arena's lock around its clone in a process with
 * threads.  frames_out: a frame outside the allocator's object, the
 * stack seen far enough to say that none of its frames is inside
 * (mc_fatal_bounded). */
bool mc_fatal_in_allocator;

/* One string, no table of pointers: no relocation (the packed ones
 * lie before the code, and each word of them moves group 1t). */
static const char glibc_calls[] = "malloc\0free\0calloc\0realloc\0reallocarray\0memalign\0"
				  "posix_memalign\0aligned_alloc\0valloc\0pvalloc\0malloc_trim\0"
				  "mallinfo\0mallinfo2\0malloc_stats\0malloc_info\0mallopt\0"
				  "__libc_freeres\0fork";
#define GLIBC_CALLS 18

/* Is pc inside one of glibc_calls (found at[i], size[i] bytes long)? */
static bool in_glibc_calls(uintptr_t pc, void *const *at, const size_t *size, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (at[i] && pc - (uintptr_t)at[i] < size[i])
			return true;
	return false;
}

static bool fatal_allocator_frames(const uintptr_t *frames, int n)
{
	frames_out = false;
	if (!mc_real.base)
		return false;
	/* the C library's object: sigfillset's (not allocator.c's, above) */
	bool glibc = mc_real.base == mc_object_base((const void *)&sigfillset, NULL);
	void *at[GLIBC_CALLS];
	size_t size[GLIBC_CALLS], calls = 0;
	bool found = false;
	for (int i = 0; i < n; i++) {
		uintptr_t pc = frames[i] - (i > 0);
		if (mc_object_base((const void *)pc, NULL) != mc_real.base) {
			frames_out = true;
			continue;
		}
		if (!glibc)
			return true;
		if (!found) {
			/* their extents, at the first frame in the C library;
			 * fork's locks only where the process has threads */
			found = true;
			calls = mc_never_threaded() ? GLIBC_CALLS - 1 : GLIBC_CALLS;
			const char *name = glibc_calls;
			for (size_t j = 0; j < calls; j++, name += strlen(name) + 1)
				at[j] = mc_sym_in_sized(mc_real.base, name, &size[j]);
		}
		if (in_glibc_calls(pc, at, size, calls))
			return true;
	}
	return false;
}

/* On memcheck's alternate stack, the scan must start from the
 * interrupted stack, not this one (life.c's process_end): its pointer,
 * with the interrupted registers copied below its red zone where the
 * kernel would have put the signal frame that holds them, so that they
 * are roots as they are on a handler's usual stack.  Where that cannot
 * be written (the guard page of an overflowed stack) the stack alone. */
static void fatal_scan_from(const ucontext_t *uc)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (!uc || !alt_mine || here < (uintptr_t)alt_mine ||
	    here >= (uintptr_t)alt_mine + alt_len)
		return;
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t at = (sp - 128 - sizeof uc->uc_mcontext.gregs) & ~(uintptr_t)15;
	struct iovec here_v = { (void *)uc->uc_mcontext.gregs, sizeof uc->uc_mcontext.gregs };
	struct iovec there = { (void *)at, sizeof uc->uc_mcontext.gregs };
	bool copied = syscall(SYS_process_vm_writev, (pid_t)syscall(SYS_getpid), &here_v, 1,
			      &there, 1, 0) == (long)sizeof uc->uc_mcontext.gregs;
	mc_fatal_sp = copied ? at : sp;
}

/* A signal that asks the process to end, which its sender (a test
 * driver at its timeout, the kernel at RLIMIT_CPU's hard limit) follows
 * with SIGKILL: meson 0.5 s after its SIGTERM.  The record's scan then
 * has MEMCHECK_FATAL_SCAN_MS (scan.c gives up past mc_fatal_deadline_ns):
 * a million live blocks took it 0.27-0.4 s to scan here, two million
 * 0.44-0.62 s (glibc, mimalloc, jemalloc, tcmalloc; a loaded 2-core
 * VM), and a record cut by the SIGKILL is no record. */
static bool fatal_asked(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT ||
	       sig == SIGXCPU;
}

/* Such a signal that came while memcheck was at work in the thread (its
 * locks held: no record can be written there) is owed: the guard's
 * coming down runs the handler (signals.c's drain, mc_fatal_owed), and
 * a timer of its own (RETRY_VALUE) sends the signal again at the
 * record's deadline in case the guard is not left by then (a lock held
 * for ever), when it comes inside memcheck still the process dies
 * without a record, as before.  A test that a driver times out in an
 * allocation loop spends most of its time inside memcheck: a SIGTERM
 * 0.3 s into 3 million mallocs found it there in 4 runs of 4 (no
 * record, "no record" said). */
#define RETRY_VALUE 0x6d636b72
static _Atomic int owed_tid;
static int owed_sig, owed_timer;
static siginfo_t owed_info;

static bool fatal_is_retry(const siginfo_t *si)
{
	return si && si->si_code == SI_TIMER && si->si_value.sival_int == RETRY_VALUE;
}

/* Owe the signal to the guard's coming down (true: return from the
 * handler); false where it was owed already (its timer came, memcheck
 * still at work) or cannot be. */
static __attribute__((noinline)) bool fatal_owe(int sig, const siginfo_t *si, pid_t tid)
{
	int none = 0;
	if (!atomic_compare_exchange_strong(&owed_tid, &none, tid))
		return false;
	owed_sig = sig;
	if (si)
		owed_info = *si;
	/* twice the scan's deadline: the scan that holds the guard (an
	 * exit's, the signal owed while it ran) gives up at the deadline,
	 * and the rest of its record (suppressions, names, the files) wants
	 * time of its own; a timer at the deadline itself killed the
	 * process there every time, no record (harden48: two million live
	 * blocks, a SIGTERM 0-0.2 s into the exit) */
	uint64_t ns = mc_opt.fatal_scan_ms > 0 ? (uint64_t)mc_opt.fatal_scan_ms * 2000000 :
						 (uint64_t)mc_opt.fatal_timeout * 1000000000u;
	if ((owed_timer = thread_timer(tid, sig, RETRY_VALUE, ns)) < 0) {
		atomic_store(&owed_tid, 0);
		return false;
	}
	__atomic_fetch_or(&mc_self.sig_pending, 1, __ATOMIC_RELAXED);
	return true;
}

void mc_fatal_owed(void)
{
	if (unlikely(atomic_load_explicit(&owed_tid, memory_order_relaxed) != 0) &&
	    atomic_load(&owed_tid) == (int)syscall(SYS_gettid) && !mc_in_hook)
		fatal_handler(owed_sig, &owed_info, NULL);
}

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	/* before any call start-up did not make */
	mc_seccomp_inherited();
	/* a vfork child: the parent's memory */
	if ((pid_t)syscall(SYS_getpid) != mc_pid())
		fatal_die(sig, si);
	if (unlikely(fatal_asked(sig))) {
		/* the deadline from the signal's first coming */
		if (!mc_fatal_deadline_ns && mc_opt.fatal_scan_ms > 0) {
			mc_fatal_deadline_sig = sig;
			mc_fatal_deadline_ns = (uint64_t)(mc_now() * 1e9) +
					       (uint64_t)mc_opt.fatal_scan_ms * 1000000;
		}
		bool owed = atomic_load(&owed_tid) != 0, timer = fatal_is_retry(si);
		if (owed && timer)
			si = &owed_info;
		/* owed already: another such signal meanwhile waits with it;
		 * its timer, memcheck still at work, gives up (below) */
		if (mc_in_hook && (owed ? !timer : fatal_owe(sig, si, tid)))
			return;
		if (owed)
			syscall(SYS_timer_delete, owed_timer);
	}
	int none = 0;
	if (!atomic_compare_exchange_strong(&writer, &none, tid)) {
		/* the timer is armed already: a line that waits on a lock
		 * the fault left held cannot hang the process */
		if (none == tid) {
			/* a fault inside the record's own work */
			/* (a signal that came before the first was noted: that one) */
			int first = mc_fatal_sig ? mc_fatal_sig : sig;
			/* what the record had written, then the line */
			mc_text_hold_end();
			if (!atomic_exchange(&said, true))
				mc_log("signal %d while writing the record of a process killed by "
				       "signal %d: record given up", sig, first);
			fatal_die(first, mc_fatal_sig ? &fatal_info : si);
		}
		/* another thread writes it, and ends the process */
		for (;;)
			syscall(SYS_pause);
	}
	mc_fatal_sig = sig;
	if (si)
		fatal_info = *si;
	mc_fatal_code = si ? si->si_code : 0;
	mc_fatal_addr = si ? (uintptr_t)si->si_addr : 0;
	mc_fatal_main_thread = tid == mc_pid();
	/* the others wait (bare, the process is gone); the faults and the
	 * timer's SIGALRM come through, even where the program blocked
	 * them (or SIGALRM is the signal being handled) */
	alarm_ours = fatal_alarm_handler();
	sigset_t block, through;
	sigemptyset(&block);
	sigemptyset(&through);
	for (int s = 1; s < _NSIG; s++)
		sigaddset(fatal_synchronous(s) || s == SIGABRT || (s == SIGALRM && alarm_ours) ?
				  &through :
				  &block,
			  s);
	fatal_mask(SIG_BLOCK, &block);
	fatal_mask(SIG_UNBLOCK, &through);
	/* first: what follows may wait on a lock the fault left held */
	if (mc_opt.fatal_timeout > 0 && alarm_ours)
		fatal_arm_watchdog(tid);
	if (mc_in_hook) {
		atomic_store(&said, true);
		/* at the process's end (a SIGTERM owed while its scan ran,
		 * the guard still up at the deadline) the text is held until
		 * the report is written: this line went into the hold and died
		 * with the process, no record and nothing said (harden48).  What
		 * the end held so far, and the line, where they cannot wait */
		mc_text_hold_salvage();
		mc_log("killed by signal %d while memcheck was at work in this thread: no record "
		       "(the locks it holds would be needed)", sig);
		fatal_die(sig, si);
	}
	/* the faulting stack's frames, all of them: the allocator's are
	 * looked for */
	if (uc) {
		uintptr_t frames[MC_MAX_DEPTH];
		int n = fatal_walk(uc, frames, MC_MAX_DEPTH);
		mc_fatal_in_allocator = fatal_allocator_frames(frames, n);
		mc_fatal_stack = fatal_fault_stack(uc, frames, n);
	}
	fatal_scan_from(uc);
	if (record_fn)
		record_fn();
	fatal_die(sig, si);
}

static bool fatal_caught(int sig)
{
	for (size_t i = 0; i < sizeof fatal_sigs; i++)
		if (fatal_sigs[i] == sig)
			return true;
	return false;
}

/* The faults a stack overflow raises: their handler on the alternate
 * stack, once there is one. */
static inline unsigned fatal_onstack(int sig)
{
	return (1ull << sig) & (1ull << SIGSEGV | 1ull << SIGBUS) ? onstack : 0;
}

/* memcheck's alternate stack at base set for this thread, the one it
 * replaced in *was (NULL: not wanted); disarmed while a handler runs on
 * it (Linux 4.7; none where the kernel refuses that). */
static inline long altstack_arm(char *base, stack_t *was)
{
	stack_t ss = { .ss_sp = base, .ss_size = alt_len, .ss_flags = SS_AUTODISARM };
	return syscall(SYS_sigaltstack, &ss, was);
}

/* The main thread's alternate stack, where the program has none of its
 * own (inherited across fork: a forked child's is the same, in its
 * copy).  Two system calls: the guard's mprotect and sigaltstack (and
 * the reservation's mmap where ALT_SIZE does not fit in what is left
 * of it). */
static void fatal_altstack(void)
{
	if (mc_map_is_tight())
		alt_len = ALT_TIGHT - 4096;
	char *p = mc_map_lazy(alt_len + 4096);
	if (!p || ((uintptr_t)p & 4095) ||
	    syscall(SYS_mprotect, p, (size_t)4096, PROT_NONE) != 0)
		return;
	stack_t was;
	if (altstack_arm(p + 4096, &was) != 0)
		return;
	/* one the program set before memcheck started (a constructor of
	 * its own, libmemcheck.a linked in) wins */
	if (!(was.ss_flags & SS_DISABLE)) {
		syscall(SYS_sigaltstack, &was, NULL);
		return;
	}
	alt_base = alt_mine = p + 4096;
	onstack = SA_ONSTACK;
}

/* The threads' reservation's chunk i, made at its first need. */
static char *alt_chunk(int i)
{
	char *c = atomic_load_explicit(&alt_chunks[i], memory_order_acquire);
	if (c)
		return c;
	while (atomic_flag_test_and_set_explicit(&alt_chunk_lock, memory_order_acquire))
		__builtin_ia32_pause();
	c = atomic_load_explicit(&alt_chunks[i], memory_order_relaxed);
	if (!c && !mc_map_is_tight()) {
		c = mc_map_lazy((size_t)ALT_CHUNK * ALT_SIZE);
		if (c && ((uintptr_t)c & 4095))
			c = NULL; /* (never: a lazy mapping is page-aligned) */
		atomic_store_explicit(&alt_chunks[i], c, memory_order_release);
	}
	atomic_flag_clear_explicit(&alt_chunk_lock, memory_order_release);
	return c;
}

static void alt_after_fork(int hi);

/* life.c, in a forked child: the chunk lock free again.  A thread of
 * the parent that held it (its chunk's mmap, a few microseconds) is not
 * in the child, and the child's next thread would spin on it forever;
 * a chunk it was mapping stays unnoted (untouched address space).  The
 * parent's other threads are not in the child either: their slots are
 * free again (the forking thread keeps its own, armed in the child). */
void mc_fatal_after_fork_child(void)
{
	atomic_flag_clear_explicit(&alt_chunk_lock, memory_order_relaxed);
	int hi = atomic_load_explicit(&alt_owner_hi, memory_order_relaxed);
	if (hi)
		alt_after_fork(hi);
}

/* The same for the slots, in the child of a process that had threads
 * (out of line: a rare path). */
static __attribute__((noinline)) void alt_after_fork(int hi)
{
	for (int i = 0; i < hi; i++) {
		uint64_t w = atomic_load_explicit(&alt_who[i], memory_order_relaxed);
		if (alt_mine && alt_mine != alt_base && i == alt_slot) {
			/* the forking thread's, under the child's own id */
			w = (w & ~(uint64_t)UINT32_MAX) | (uint32_t)mc_tid();
			atomic_store_explicit(&alt_who[i], w, memory_order_relaxed);
			continue;
		}
		atomic_store_explicit(&alt_who[i], w & ~(uint64_t)UINT32_MAX, memory_order_relaxed);
		atomic_fetch_and_explicit(&alt_state[i], ~ALT_TAKEN, memory_order_relaxed);
	}
	atomic_store_explicit(&alt_reclaim_wait, 0, memory_order_relaxed);
	atomic_store_explicit(&alt_reclaim_gap, 0, memory_order_relaxed);
}

/* Slot i's owner from now on: this thread (its id, one gettid a thread
 * that never allocated before: account.c's slot asks it too). */
static __attribute__((noinline)) int alt_own(int i)
{
	uint64_t w = atomic_load_explicit(&alt_who[i], memory_order_relaxed);
	w = ((w >> 32) + 1) << 32 | (uint32_t)mc_tid();
	atomic_store_explicit(&alt_who[i], w, memory_order_release);
	return i;
}

/* Every slot is taken: the ones whose owner thread no longer exists
 * (ended by a raw SYS_exit, which runs no destructor: tgkill's probe
 * says ESRCH) given back; whether any was.  An owner that still exits,
 * or whose id a new thread of the process got meanwhile, keeps its
 * slot; a slot given back and taken again meanwhile changed its count
 * and is left.  A rare path: none of this runs while a slot is free. */
static bool alt_reclaim(int hi)
{
	unsigned wait = atomic_load_explicit(&alt_reclaim_wait, memory_order_relaxed);
	if (wait) {
		atomic_compare_exchange_strong(&alt_reclaim_wait, &wait, wait - 1);
		return false;
	}
	pid_t pid = mc_pid(), me = mc_tid();
	bool any = false;
	int saved = errno;
	for (int i = 0; i < hi; i++) {
		uint64_t w = atomic_load_explicit(&alt_who[i], memory_order_acquire);
		pid_t tid = (pid_t)(uint32_t)w;
		if (tid <= 0 || tid == me || !(atomic_load(&alt_state[i]) & ALT_TAKEN))
			continue;
		if (syscall(SYS_tgkill, pid, tid, 0) == 0 || errno != ESRCH)
			continue;
		/* the owner's id cleared first: no other pass takes it back
		 * again, and none takes the slot till it is free */
		if (atomic_compare_exchange_strong(&alt_who[i], &w, w & ~(uint64_t)UINT32_MAX)) {
			atomic_fetch_and(&alt_state[i], ~ALT_TAKEN);
			any = true;
		}
	}
	errno = saved;
	unsigned gap = atomic_load_explicit(&alt_reclaim_gap, memory_order_relaxed);
	gap = any ? 0 : gap ? (gap < (1u << 20) ? gap * 2 : gap) : 1;
	atomic_store_explicit(&alt_reclaim_gap, gap, memory_order_relaxed);
	atomic_store_explicit(&alt_reclaim_wait, gap, memory_order_relaxed);
	return any;
}

/* Every slot taken: one of those alt_reclaim gave back, or -1. */
static __attribute__((noinline)) int alt_take_back(void)
{
	if (!alt_reclaim(ALT_SLOTS))
		return -1;
	for (int i = 0; i < ALT_SLOTS; i++)
		if (!(atomic_fetch_or(&alt_state[i], ALT_TAKEN) & ALT_TAKEN))
			return alt_own(i);
	return -1;
}

/* A free slot taken, or -1, the never-taken ones last, then the ones
 * of threads that ended without giving theirs back (alt_take_back). */
static int alt_take(void)
{
	int hi = atomic_load_explicit(&alt_owner_hi, memory_order_acquire);
	for (int i = 0; i < hi; i++)
		if (!(atomic_fetch_or(&alt_state[i], ALT_TAKEN) & ALT_TAKEN))
			return alt_own(i);
	while (hi < ALT_SLOTS) {
		if (atomic_compare_exchange_weak(&alt_owner_hi, &hi, hi + 1)) {
			atomic_fetch_or(&alt_state[hi], ALT_TAKEN);
			return alt_own(hi);
		}
	}
	return alt_take_back();
}

/* Slot i free again: its owner's id cleared first (alt_reclaim's
 * probe skips it), its count kept. */
static __attribute__((noinline)) void alt_give_back(int i)
{
	uint64_t w = atomic_load_explicit(&alt_who[i], memory_order_relaxed);
	atomic_store_explicit(&alt_who[i], w & ~(uint64_t)UINT32_MAX, memory_order_relaxed);
	atomic_fetch_and(&alt_state[i], ~ALT_TAKEN);
}

/* This thread's slot's alternate stack armed, where the main thread got
 * memcheck's (the handlers have SA_ONSTACK) and the thread has none of
 * its own: its callers' test (onstack, and no alt_mine yet).  Without
 * one, a thread whose stack overflowed died with no record: the kernel
 * cannot deliver the SIGSEGV on the stack that overflowed. */
static bool alt_arm_here(void)
{
	int idx = alt_take();
	if (idx < 0)
		return false;
	char *c = alt_chunk(idx / ALT_CHUNK);
	char *p = c ? c + (size_t)(idx % ALT_CHUNK) * ALT_SIZE : NULL;
	if (p && !(atomic_load(&alt_state[idx]) & ALT_GUARDED)) {
		if (syscall(SYS_mprotect, p, (size_t)4096, PROT_NONE) != 0)
			p = NULL;
		else
			atomic_fetch_or(&alt_state[idx], ALT_GUARDED);
	}
	stack_t was;
	if (p && altstack_arm(p + 4096, &was) == 0) {
		if (was.ss_flags & SS_DISABLE) {
			alt_mine = p + 4096;
			alt_slot = idx;
			return true;
		}
		syscall(SYS_sigaltstack, &was, NULL); /* the thread's own */
	}
	alt_give_back(idx);
	return false;
}

/* account.c, when a thread other than the main one takes its slot (its
 * first allocation): armed where threadstart.c did not arm it (a thread
 * pthread_create did not start); account.c's slot's destructor gives
 * it back. */
void mc_fatal_thread_arm(void)
{
	if (!onstack || alt_mine)
		return;
	int saved = errno;
	alt_arm_here();
	errno = saved;
}

/* threadstart.c, in a thread pthread_create started, before its start
 * routine: armed, so that the stack overflow of a thread that never
 * allocates has its record too; alt_key's destructor gives it back
 * (pthread_exit or a return alike). */
void mc_fatal_thread_start(void)
{
	if (!onstack || alt_mine || !alt_key_made)
		return;
	int saved = errno;
	if (alt_arm_here())
		pthread_setspecific(alt_key, &alt_mine);
	errno = saved;
}

/* Is there anything for threadstart.c to arm in the threads to come? */
bool mc_fatal_threads_armed(void)
{
	return onstack && alt_key_made;
}

/* At the end of a thread that had a slot (account.c's slot's
 * destructor, alt_key's): its alternate stack disarmed, its slot's to
 * the next thread that takes it (the thread may still run its other
 * destructors meanwhile).  One the program set in its place is left as
 * it is. */
void mc_fatal_thread_done(void)
{
	char *mine = alt_mine;
	if (!mine || mine == alt_base)
		return;
	alt_mine = NULL;
	int saved = errno;
	stack_t off = { .ss_flags = SS_DISABLE }, was;
	if (syscall(SYS_sigaltstack, &off, &was) == 0 && !(was.ss_flags & SS_DISABLE) &&
	    was.ss_sp != mine)
		syscall(SYS_sigaltstack, &was, NULL);
	alt_give_back(alt_slot);
	errno = saved;
}

static void alt_key_done(void *unused)
{
	(void)unused;
	mc_fatal_thread_done();
}

/* At start-up (life.c), in a process that reports at its exit: the
 * handler wherever the default action was inherited.  One system call a
 * signal, two where the program inherited it ignored or handled. */
void mc_fatal_init(void (*record)(void))
{
	if (mc_opt.fatal_timeout == 0 || armed)
		return;
	record_fn = record;
	fatal_altstack();
	if (onstack && !alt_key_made)
		alt_key_made = pthread_key_create(&alt_key, alt_key_done) == 0;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fatal_handler;
	for (size_t i = 0; i < sizeof fatal_sigs; i++) {
		int sig = fatal_sigs[i];
		sa.sa_flags = SA_SIGINFO | (int)fatal_onstack(sig);
		if (mc_sys_sigaction(sig, &sa, &old) != 0)
			continue;
		if (old.sa_handler != SIG_DFL && !(old.sa_flags & SA_SIGINFO && old.sa_sigaction == fatal_handler)) {
			/* back as the kernel had it: the C library's sigaction
			 * would add its SA_RESTORER and restorer to an
			 * inherited SIG_IGN, which the program's view shows */
			struct mc_k_sigaction k = { (uintptr_t)old.sa_handler, (unsigned)old.sa_flags,
						    (uintptr_t)old.sa_restorer, 0 };
			memcpy(&k.mask, &old.sa_mask, sizeof k.mask);
			syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask);
			continue;
		}
		hide[sig] = SA_SIGINFO | SA_RESTORER | (unsigned)(sa.sa_flags & SA_ONSTACK);
	}
	armed = true;
}

/* signals.c's sigaltstack: is this memcheck's alternate stack (the
 * program's view: none)? */
bool mc_fatal_altstack_is(const void *sp)
{
	return alt_mine && sp == alt_mine;
}

/* This thread's handlers mc_fatal_beside moved, not returned yet, and
 * the stack address the innermost one began at. */
static MC_TLS unsigned beside_live;
static MC_TLS uintptr_t beside_to;

/* The program disabled its own alternate stack in a thread that had
 * memcheck's (a forked child's main thread keeps its parent thread's):
 * memcheck's back. */
void mc_fatal_altstack_back(void)
{
	if (!alt_mine)
		return;
	/* in a moved handler: the handler's return puts it back (the
	 * frames up there are in use till then) */
	if (beside_live)
		return;
	altstack_arm(alt_mine, NULL);
}

/* fn(sig, si, uc) called with the stack pointer at sp (16-aligned: the
 * call's return address makes it the ABI's entry alignment), and back.
 * The frame pointer holds the way back, so that unwinders go through. */
void mc_fatal_call_at(uintptr_t sp, uintptr_t fn, int sig, siginfo_t *si, void *uc);
__asm__(".pushsection .text.mc_fatal_call_at,\"ax\",@progbits\n"
	".globl mc_fatal_call_at\n"
	".hidden mc_fatal_call_at\n"
	".type mc_fatal_call_at,@function\n"
	"mc_fatal_call_at:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"mov %rdi, %rsp\n"
	"mov %rsi, %rax\n"
	"mov %edx, %edi\n"
	"mov %rcx, %rsi\n"
	"mov %r8, %rdx\n"
	"call *%rax\n"
	"mov %rbp, %rsp\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size mc_fatal_call_at, .-mc_fatal_call_at\n"
	".popsection\n");

/* A moved handler was left by siglongjmp (this thread was interrupted
 * above where it began): memcheck's stack, which the kernel disarmed
 * for it, armed again, unless the program has set one of its own. */
static bool beside_left(void)
{
	beside_live = 0;
	stack_t now;
	return syscall(SYS_sigaltstack, NULL, &now) == 0 && (now.ss_flags & SS_DISABLE) &&
	       altstack_arm(alt_mine, NULL) == 0;
}

/* signals.c's trampoline, for a handler whose action has SA_ONSTACK: on
 * memcheck's alternate stack, interrupted off it (not inside memcheck's
 * own handler), it runs fn on the interrupted stack, where bare's
 * kernel would have put its frame: below the red zone, the frame's
 * size lower.  The ucontext's uc_stack shows none meanwhile, as bare's;
 * the kernel's, put back for the return, arms memcheck's again. */
bool mc_fatal_beside(uintptr_t fn, bool info, int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t lo = (uintptr_t)alt_mine, len = alt_len;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (!alt_mine || !uc)
		return false;
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	if (here - lo >= len) {
		/* interrupted above where the moved handler began: armed
		 * again; the kernel's frame holds the disarmed stack, which
		 * the return would set, and shows it: bare's none meanwhile,
		 * memcheck's for the return */
		if (!beside_live || sp <= beside_to || !beside_left())
			return false;
		uc->uc_stack = (stack_t){ .ss_sp = NULL, .ss_flags = 0, .ss_size = 0 };
		if (info)
			((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
		else
			((void (*)(int))fn)(sig);
		uc->uc_stack = (stack_t){ .ss_sp = alt_mine, .ss_flags = SS_AUTODISARM, .ss_size = len };
		return true;
	}
	if (sp - lo < len)
		return false;
	uintptr_t frame = lo + len - ((uintptr_t)uc - sizeof(void *));
	uintptr_t to = (sp - 128 - frame) & ~(uintptr_t)15;
	stack_t kept = uc->uc_stack;
	uc->uc_stack = (stack_t){ .ss_sp = NULL, .ss_flags = 0, .ss_size = 0 };
	uintptr_t outer = beside_to;
	void *outer_uc = mc_self.moved_uc;
	beside_to = to;
	beside_live++;
	mc_self.moved_uc = uc;
	mc_fatal_call_at(to, fn, sig, si, uc);
	mc_self.moved_uc = outer_uc;
	beside_live--;
	beside_to = outer;
	uc->uc_stack = kept;
	return true;
}

/* Does memcheck keep its handler after an SA_RESETHAND handler of the
 * program's for sig (signals.c installs it without the flag then)? */
bool mc_fatal_resets(int sig)
{
	return armed && sig > 0 && sig < _NSIG && fatal_caught(sig);
}

/* The kernel's reset of an SA_RESETHAND action, made by signals.c's
 * trampoline before the program's handler runs: memcheck's handler in
 * its place, the flags, mask and restorer kept as the kernel keeps
 * them; the program's view SIG_DFL with SA_RESETHAND still set.  info:
 * the program's handler took SA_SIGINFO. */
void mc_fatal_reset(int sig, bool info)
{
	struct sigaction cur;
	if (!mc_fatal_resets(sig) || mc_sys_sigaction(sig, NULL, &cur) != 0)
		return;
	cur.sa_sigaction = fatal_handler;
	cur.sa_flags |= SA_SIGINFO;
	unsigned on = fatal_onstack(sig) & ~(unsigned)cur.sa_flags;
	cur.sa_flags |= (int)on;
	if (mc_sys_sigaction(sig, &cur, NULL) != 0)
		return;
	hide[sig] = (info ? 0 : SA_SIGINFO) | on | SA_RESETHAND;
}

/* A signal whose SA_RESETHAND action another thread has reset already
 * (signals.c): what the kernel's SIG_DFL would do. */
void mc_fatal_deliver(int sig, siginfo_t *si, void *uc)
{
	fatal_handler(sig, si, uc);
}

/* The program sets SIG_DFL for sig (signals.c): memcheck's handler in
 * its place, with the program's flags and mask.  False where memcheck
 * does not catch sig: the program's action then goes as it is. */
bool mc_fatal_default(int sig, const struct sigaction *act, struct sigaction *mine)
{
	if (!armed || !fatal_caught(sig))
		return false;
	*mine = *act;
	mine->sa_sigaction = fatal_handler;
	mine->sa_flags |= SA_SIGINFO | (int)fatal_onstack(sig);
	return true;
}

/* After the call mc_fatal_default prepared succeeded: the flags to hide
 * from the program's view from now on. */
void mc_fatal_defaulted(int sig, const struct sigaction *act)
{
	hide[sig] = (SA_SIGINFO | fatal_onstack(sig)) & ~(unsigned)act->sa_flags;
}

/* The kernel's action in *old, as the program must see it: SIG_DFL for
 * memcheck's handler, without the flags it added. */
void mc_fatal_view(int sig, struct sigaction *old)
{
	if (!old || sig <= 0 || sig >= _NSIG || !(old->sa_flags & SA_SIGINFO) ||
	    old->sa_sigaction != fatal_handler)
		return;
	/* every hidden flag is set in the kernel's action, SA_RESETHAND
	 * never: one toggle takes the first off and puts the second on */
	unsigned h = hide[sig];
	old->sa_flags ^= (int)h;
	if (h & SA_RESTORER)
		old->sa_restorer = NULL;
	old->sa_handler = SIG_DFL;
}

/* The signal's name, as valgrind and the reports write it. */
const char *mc_fatal_name(int sig)
{
	static const char *const names[] = {
		[SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",       [SIGQUIT] = "SIGQUIT",
		[SIGILL] = "SIGILL",   [SIGTRAP] = "SIGTRAP",     [SIGABRT] = "SIGABRT",
		[SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",       [SIGUSR1] = "SIGUSR1",
		[SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",     [SIGPIPE] = "SIGPIPE",
		[SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",     [SIGSTKFLT] = "SIGSTKFLT",
		[SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",     [SIGVTALRM] = "SIGVTALRM",
		[SIGPROF] = "SIGPROF", [SIGIO] = "SIGIO",         [SIGPWR] = "SIGPWR",
		[SIGSYS] = "SIGSYS",
	};
	if (sig > 0 && (size_t)sig < MC_ARRAY_SIZE(names) && names[sig])
		return names[sig];
	return "?";
}

/* The main thread's stack limit, for valgrind's stack-overflow hint. */
unsigned long mc_fatal_stack_limit(void)
{
	struct rlimit r;
	if (syscall(SYS_getrlimit, RLIMIT_STACK, &r) != 0)
		return 0;
	return r.rlim_cur;
}
