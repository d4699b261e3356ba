/*
 * signals.c - allocations made in signal handlers.
 *
 * Calling malloc from a signal handler is undefined behaviour in C, and
 * programs do it anyway; mimalloc, for one, survives it.  memcheck must
 * then not make things worse.  Before this file it did: a handler that
 * ran while its thread was inside memcheck (the recursion guard up, a
 * table shard perhaps half updated) had its calls passed straight to the
 * allocator, uncounted, as memcheck's own calls are.  A block freed by
 * the program, handed out again by the allocator to such a call and then
 * freed again was reported as a double free and kept from the allocator
 * (1.5 million of them in one run), blocks the handler freed stayed
 * "live" in the table, and its allocations were missing from the counts.
 *
 * So memcheck wraps the handlers the program installs (sigaction,
 * signal) in a trampoline that notes, per thread and nesting level, the
 * guard's depth when the handler began.  A malloc-family call made while
 * the guard is at exactly that depth comes from a handler that
 * interrupted memcheck: it cannot touch the table or the counters, which
 * the interrupted code may be changing.  Its allocator call is made at
 * once (the handler needs the memory), except a free, which waits: the
 * address must leave the table before the allocator may hand it out
 * again.  What was done is queued, and recorded when the interrupted
 * code lowers the guard (drain, mc_guard_leave's hook).  A deeper guard means
 * memcheck's own work inside a handler (libdw, say), served by its own
 * heap as always (ownheap.c).
 *
 * Traps: the handler may itself be interrupted (pushes reserve their
 * slot with one atomic add, and the queue keeps room for every nesting
 * level); the per-thread state is mapped on a thread's first handler
 * (mmap is async-signal-safe, malloc is not); a handler left with
 * siglongjmp keeps its level, which only means memcheck passes calls
 * through at that depth as it did before; nothing here takes a lock;
 * realloc in a handler becomes
 * malloc, copy and a deferred free, since a moved block's old address
 * would otherwise go back to the allocator before it leaves the table.
 * Handlers installed with syscall(2) are wrapped too (below); ones set
 * by an inline system call instruction, or before memcheck resolves
 * the real sigaction, are not: their calls are treated as before.  The C library's other setters (bsd_signal, System V's
 * sysv_signal, which is signal() in a program built with -std=c99, and
 * sigset) call its sigaction inside it, past this file: they are
 * wrapped too, so that they show the action as bare shows it (fatal.c's
 * handler as SIG_DFL) and put fatal.c's back for SIG_DFL.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

#define MAX_NEST 8     /* nested handlers followed; deeper ones as before */
#define QUEUE 256      /* deferred calls per thread */

struct deferred {
	uint8_t op;
	void *p;
	size_t size;
	uintptr_t site;   /* the handler's call */
};

struct sigstate {
	int depth;                       /* handlers running on this thread */
	int hook[MAX_NEST];              /* the guard's depth when each began */
	_Atomic unsigned tail;           /* pushes, reserved before written */
	unsigned head;                   /* recorded */
	uint64_t lost;                   /* calls the full queue could not take */
	struct deferred q[QUEUE];
};

static MC_TLS struct sigstate *my_sig;
static _Atomic uint64_t lost_said;

/* The handlers the program installed, by signal; SA_SIGINFO or not.
 * MC_HOT: a left-out shell installs handlers too, and in .bss these
 * were a page of its own that it read and wrote (two page faults). */
MC_HOT static _Atomic uintptr_t user_fn[_NSIG];
MC_HOT static _Atomic unsigned char user_info[_NSIG]; /* USER_* bits */
#define USER_INFO 1  /* the handler takes SA_SIGINFO's arguments */
#define USER_RESET 2 /* installed with SA_RESETHAND, not yet reset */
#define USER_ONSTACK 4 /* installed with SA_ONSTACK (fatal.c's mc_fatal_beside) */

static __attribute__((noinline)) void drain(void);
static void drain_owed(void);

/* At start-up (life.c), and before a handler is first wrapped (the
 * program may install one before memcheck starts): the guard's last
 * leave told to record what handlers queued, and the C library's
 * sigaction looked up (dlsym here, never in a signal handler); false
 * when there is none. */
bool mc_signals_init(void)
{
	mc_guard_drain_set(drain_owed);
	return mc_sys_sigaction_resolve();
}

/* Mapped in the handler itself, so with nothing that may take a lock:
 * mc_map's accounting of memcheck's own memory (footprint.c) does, and
 * the code the handler interrupted may hold it.  A few KiB a thread
 * that has run a handler, left out of that accounting. */
static struct sigstate *state(void)
{
	struct sigstate *st = my_sig;
	if (!st)
		st = my_sig = mc_map_reserve(sizeof *st);
	return st;
}

/* The kernel's SA_RESETHAND, made here (fatal.c) before the handler
 * runs: the first thread to come runs the handler; one that comes after
 * the reset gets what SIG_DFL gives (false: the handler is not to run).
 * Out of the trampoline, which every handled signal runs: rare. */
static __attribute__((noinline, cold)) bool reset_first(int sig, siginfo_t *si, void *uc,
							 bool info)
{
	if (!(atomic_fetch_and(&user_info[sig], (unsigned char)~USER_RESET) & USER_RESET)) {
		mc_fatal_deliver(sig, si, uc);
		return false;
	}
	atomic_store(&user_fn[sig], 0);
	mc_fatal_reset(sig, info);
	return true;
}

/* A handler installed with SA_ONSTACK: the program's alternate stack
 * it runs on noted for the scan (threads.c's mc_threads_dead_altstack:
 * a stack no handler ran on holds no dead frame; the kernel's uc_stack
 * names the thread's alternate stack, this frame lies on it when the
 * handler runs there), then fatal.c's mc_fatal_beside.  Rare, out of
 * line: in the trampoline the note took 119 bytes more of group 1. */
static __attribute__((noinline, cold)) bool on_stack(uintptr_t fn, bool info, int sig,
						     siginfo_t *si, void *uc, bool noted)
{
	const ucontext_t *u = uc;
	uintptr_t lo = (uintptr_t)u->uc_stack.ss_sp, here = (uintptr_t)__builtin_frame_address(0);
	if (noted && !(u->uc_stack.ss_flags & SS_DISABLE) && here - lo < u->uc_stack.ss_size &&
	    (mc_altstack_ran_lo != lo || mc_altstack_ran_hi != lo + u->uc_stack.ss_size)) {
		mc_altstack_ran_lo = lo;
		mc_altstack_ran_hi = lo + u->uc_stack.ss_size;
		/* kept past this thread's next stack, and past its exit */
		mc_mappings_stack_ran(lo, lo + u->uc_stack.ss_size);
	}
	return mc_fatal_beside(fn, info, sig, si, uc);
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	uintptr_t fn = atomic_load_explicit(&user_fn[sig], memory_order_acquire);
	unsigned char ui = atomic_load_explicit(&user_info[sig], memory_order_relaxed);
	bool info = ui & USER_INFO;
	if ((ui & USER_RESET) && !reset_first(sig, si, uc, info))
		return;
	/* A program left out only forwards (interpose.c): nothing here
	 * reads the nesting, and its state's first mapping (a 2 MiB
	 * reservation, at a left-out dash's first SIGCHLD) was the only
	 * thing memcheck set up in such a process (test_leftout). */
	struct sigstate *st = atomic_load_explicit(&mc_pass, memory_order_relaxed) ? NULL : state();
	bool followed = st && st->depth < MAX_NEST;
	if (followed) {
		st->hook[st->depth] = mc_in_hook;
		atomic_signal_fence(memory_order_seq_cst);
		st->depth++;
	} else if (st) {
		st->depth++;
	}
	/* this frame lies under what the handler allocates, where bare and
	 * valgrind show the C library's signal return next: the stacks are
	 * stored without memcheck's frames (depot.c), so a suppression that
	 * names the frames as valgrind shows them matches.  A handler left
	 * with siglongjmp keeps the mark: stacks are then stored through
	 * that slower path, the same frames. */
	mc_self.own_frames++;
	if (!fn || ((ui & USER_ONSTACK) && on_stack(fn, info, sig, si, uc, st != NULL)))
		;
	else if (info)
		((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
	else
		((void (*)(int))fn)(sig);
	mc_self.own_frames--;
	if (st)
		st->depth--;
}

/* Is this thread running a handler memcheck wrapped? */
bool mc_signal_handling(void)
{
	struct sigstate *st = my_sig;
	return st && st->depth > 0;
}

/* Does this call come from a handler that interrupted memcheck? */
bool mc_signal_nested(void)
{
	struct sigstate *st = my_sig;
	if (!st || st->depth <= 0 || st->depth > MAX_NEST)
		return false;
	int h = st->hook[st->depth - 1];
	return h > 0 && mc_in_hook == h;
}

static bool push(uint8_t op, void *p, size_t size, uintptr_t site)
{
	struct sigstate *st = my_sig;
	/* Room for a push from every handler that may interrupt this one
	 * between the test and the add. */
	if (atomic_load(&st->tail) - st->head >= QUEUE - MAX_NEST) {
		st->lost++;
		return false;
	}
	unsigned i = atomic_fetch_add(&st->tail, 1);
	st->q[i % QUEUE] = (struct deferred){ op, p, size, site };
	atomic_signal_fence(memory_order_seq_cst);
	mc_self.sig_pending = 1;
	return true;
}

void *mc_signal_alloc(void *p, size_t size, uintptr_t site)
{
	int saved = errno;
	push(p ? MC_DEFER_ALLOC : MC_DEFER_FAILED, p, size, site);
	errno = saved;
	return p;
}

void mc_signal_free(void *p, uintptr_t site)
{
	if (p && !push(MC_DEFER_FREE, p, 0, site))
		mc_real.free(p); /* no room: as before, the table keeps it */
}

/* Counted as realloc_common counts: the call; the old block freed unless
 * the call failed; the new one allocated. */
void *mc_signal_realloc(void *old, size_t n, uintptr_t site)
{
	push(MC_DEFER_REALLOC, NULL, 0, site);
	if (!old)
		return mc_signal_alloc(mc_real.malloc(n), n, site);
	size_t have = n && mc_real.usable_size ? mc_real.usable_size(old) : 0;
	if (!have) {
		/* realloc(p, 0), or no way to know what to copy: the
		 * allocator's own realloc, the old block only forgotten. */
		void *p = mc_real.realloc(old, n);
		int saved = errno;
		if (p || n == 0)
			push(MC_DEFER_FORGET, old, 0, site);
		if (p || n > 0)
			mc_signal_alloc(p, n, site);
		errno = saved;
		return p;
	}
	void *p = mc_real.malloc(n);
	mc_signal_alloc(p, n, site);
	if (p) {
		memcpy(p, old, have < n ? have : n);
		mc_signal_free(old, site);
	}
	return p;
}

/* The interrupted code has lowered the guard: record what the handlers
 * did, with the guard up again.  A handler that runs meanwhile queues
 * behind; one that runs after the last look but before the guard is
 * down again would leave its calls waiting while the program goes on
 * (and frees the block it just got, which the table does not have yet):
 * so the last look is made with the guard down, when a handler no
 * longer queues. */
static void drain(void)
{
	struct sigstate *st = my_sig;
	do {
		mc_self.in_hook++;
		mc_self.fast = NULL;
		mc_self.sig_pending = 0;
		atomic_signal_fence(memory_order_seq_cst);
		for (unsigned tail; st->head != (tail = atomic_load(&st->tail));) {
			while (st->head != tail) {
				struct deferred d = st->q[st->head % QUEUE];
				st->head++;
				mc_account_deferred(d.op, d.p, d.size, d.site);
			}
		}
		uint64_t lost = st->lost;
		if (lost && atomic_exchange(&lost_said, 1) == 0)
			mc_log("%llu malloc-family calls from signal handlers could not be "
			       "recorded (more than %d queued on one thread while memcheck was "
			       "busy): they are not counted", (unsigned long long)lost,
			       QUEUE - MAX_NEST);
		if (--mc_self.in_hook != 0)
			return; /* drained again by the guard's last leave */
		mc_self.fast = mc_self.totals;
		atomic_signal_fence(memory_order_seq_cst);
	} while (mc_self.sig_pending);
}

/* The guard's hook: what handlers queued on this thread (none where it
 * has no queue: a fatal signal owed alone), then a signal asking the
 * process to end that came inside memcheck, its record now, the guard
 * down (fatal.c's mc_fatal_owed). */
static void drain_owed(void)
{
	if (my_sig)
		drain();
	else
		__atomic_and_fetch(&mc_self.sig_pending, ~1, __ATOMIC_RELAXED);
	mc_fatal_owed();
}

/* ---- the program's handlers ------------------------------------------ */

static bool wrappable(int sig, const struct sigaction *act)
{
	return sig > 0 && sig < _NSIG && act &&
	       ((act->sa_flags & SA_SIGINFO) ? act->sa_sigaction != NULL :
		act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN);
}

/* The kernel's view of an action, as the program installed it. */
static void unwrap(int sig, struct sigaction *old, uintptr_t fn, unsigned char ui)
{
	if (!old || old->sa_sigaction != trampoline)
		return;
	bool info = ui & USER_INFO;
	if (ui & USER_RESET)
		old->sa_flags |= SA_RESETHAND;
	if (info) {
		old->sa_sigaction = (void (*)(int, siginfo_t *, void *))fn;
	} else {
		old->sa_handler = (void (*)(int))fn;
		old->sa_flags &= ~SA_SIGINFO;
	}
	(void)sig;
}

/* The program's sigaction, its handler wrapped. */
static int install(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!mc_signals_init()) {
		errno = ENOSYS;
		return -1;
	}
	bool in_range = sig > 0 && sig < _NSIG;
	uintptr_t prev_fn = in_range ? atomic_load(&user_fn[sig]) : 0;
	unsigned char prev_info = in_range ? atomic_load(&user_info[sig]) : 0;
	int rc;
	if (wrappable(sig, act)) {
		struct sigaction mine = *act;
		mine.sa_sigaction = trampoline;
		mine.sa_flags |= SA_SIGINFO;
		bool info = (act->sa_flags & SA_SIGINFO) != 0;
		/* the trampoline resets it, to memcheck's handler (fatal.c) */
		bool reset = (act->sa_flags & SA_RESETHAND) && mc_fatal_resets(sig);
		if (reset)
			mine.sa_flags &= ~SA_RESETHAND;
		atomic_store(&user_info[sig],
			     (unsigned char)((info ? USER_INFO : 0) | (reset ? USER_RESET : 0) |
					     (act->sa_flags & SA_ONSTACK ? USER_ONSTACK : 0)));
		atomic_store_explicit(&user_fn[sig],
				      info ? (uintptr_t)act->sa_sigaction :
					     (uintptr_t)act->sa_handler,
				      memory_order_release);
		rc = mc_sys_sigaction(sig, &mine, old);
		if (rc != 0) {
			atomic_store(&user_info[sig], prev_info);
			atomic_store(&user_fn[sig], prev_fn);
		}
	} else {
		/* SIG_DFL where memcheck catches the signal: its handler
		 * comes back (fatal.c), the program's view SIG_DFL */
		struct sigaction dfl;
		bool to_dfl = act && in_range && act->sa_handler == SIG_DFL &&
			      mc_fatal_default(sig, act, &dfl);
		rc = mc_sys_sigaction(sig, to_dfl ? &dfl : act, old);
		if (rc == 0)
			mc_fatal_view(sig, old);
		if (rc == 0 && to_dfl)
			mc_fatal_defaulted(sig, act);
		if (rc == 0 && act && in_range) {
			atomic_store(&user_fn[sig], 0);
			atomic_store(&user_info[sig], 0);
		}
		if (rc == 0)
			unwrap(sig, old, prev_fn, prev_info);
		return rc;
	}
	if (rc == 0) {
		mc_fatal_view(sig, old);
		unwrap(sig, old, prev_fn, prev_info);
	}
	return rc;
}

/* memcheck's own calls (threads.c stops threads with a signal of its
 * own for the scan) reach this exported function too: they set and
 * restore the kernel's action as it is, unwrapped.  (Linked from
 * libmemcheck.a memcheck has no code range of its own, and its handler
 * is then wrapped as well, to no harm: it makes no malloc call.) */
MC_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	uintptr_t caller = (uintptr_t)__builtin_return_address(0);
	if (caller - mc_text_lo < mc_text_len) {
		return mc_sys_sigaction(sig, act, old);
	}
	return install(sig, act, old);
}

/* The program's alternate stack set (ss; NULL: disabled) by this thread,
 * told to roots.c with the block it is, where it starts one: the scan
 * cuts the dead frames out of that block while it is still that very
 * block (roots.c says how it knows).  A new epoch is begun between
 * (region.c): the blocks allocated after the note carry a later one.
 * Not noted (the block read whole, as before): in a left-out process,
 * counting only, in a signal handler or with the guard up (a lock the
 * interrupted code holds), or where a region's begin or end holds the
 * epochs' locks.  Rare: group 7. */
static __attribute__((noinline, cold)) void altstack_note(const stack_t *ss)
{
	if (atomic_load_explicit(&mc_pass, memory_order_relaxed) || !mc_opt.track || mc_in_hook ||
	    mc_signal_handling())
		return;
	int saved = errno;
	mc_guard_enter();
	struct mc_block b;
	unsigned before = atomic_load(&mc_epochs_renumbered);
	uint32_t mark = ss ? mc_region_epoch_mark() : 0;
	bool heap = mark && mc_blocks_find((uintptr_t)ss->ss_sp, &b) && b.size >= ss->ss_size &&
		    b.aux && b.aux < mark;
	unsigned after = atomic_load(&mc_epochs_renumbered);
	mc_roots_altstack_note(ss ? (uintptr_t)ss->ss_sp : 0, ss ? ss->ss_size : 0,
			       heap && before == after ? &b : NULL, after);
	mc_guard_leave();
	errno = saved;
}

/* The program's view of its alternate stack: none where memcheck's is
 * set (fatal.c); its own replaces memcheck's, and its SS_DISABLE puts
 * memcheck's back.  The system call itself: the C library's
 * sigaltstack is no more. */
MC_API int sigaltstack(const stack_t *ss, stack_t *old)
{
	stack_t was;
	if (syscall(SYS_sigaltstack, NULL, &was) != 0)
		return -1;
	bool mine = !(was.ss_flags & SS_DISABLE) && mc_fatal_altstack_is(was.ss_sp);
	if (ss && mine && (ss->ss_flags & SS_DISABLE) && !(was.ss_flags & SS_ONSTACK)) {
		/* nothing of the program's to disable: as bare, which had
		 * none (the flags checked as the kernel checks them) */
		if (ss->ss_flags & ~(SS_DISABLE | SS_AUTODISARM)) {
			errno = EINVAL;
			return -1;
		}
	} else if (ss) {
		if (syscall(SYS_sigaltstack, ss, NULL) != 0)
			return -1;
		if ((ss->ss_flags & SS_DISABLE) && !mine)
			mc_fatal_altstack_back();
		else if (!(ss->ss_flags & SS_DISABLE))
			atomic_store_explicit(&mc_program_altstack, true, memory_order_relaxed);
		altstack_note(ss->ss_flags & SS_DISABLE ? NULL : ss);
	}
	if (old) {
		*old = was;
		if (mine) {
			old->ss_sp = NULL;
			old->ss_size = 0;
			old->ss_flags = SS_DISABLE;
		}
	}
	return 0;
}

/* ---- the program's raw system calls ----------------------------------
 * syscall(SYS_rt_sigaction, ...) and syscall(SYS_sigaltstack, ...),
 * which sandbox.c's syscall passes here: past sigaction and sigaltstack
 * they would install a handler memcheck does not wrap (its calls in a
 * handler that interrupted memcheck then pass unrecorded), replace
 * fatal.c's handler by the kernel's SIG_DFL (no record at that signal),
 * show the program memcheck's handler and alternate stack.  So they go
 * through install and sigaltstack, the action in the kernel's layout.
 * The kernel reads and writes the caller's memory where it may fault
 * (EFAULT, never a signal): so do these copies.  The C library's own
 * signals (32, 33: its sigaction refuses them) and a set size other than
 * the kernel's go to the kernel as they are. */
static bool copy_user(void *to, const void *from, size_t n, bool in)
{
	struct iovec mine = { in ? to : (void *)from, n };
	struct iovec theirs = { in ? (void *)from : to, n };
	long nr = in ? SYS_process_vm_readv : SYS_process_vm_writev;
	if (syscall(nr, mc_pid(), &mine, 1, &theirs, 1, 0) == (long)n)
		return true;
	errno = EFAULT;
	return false;
}

long mc_signals_syscall(long nr, const long x[6])
{
	if (nr == SYS_sigaltstack) {
		stack_t ss, old;
		if (x[0] && !copy_user(&ss, (const void *)x[0], sizeof ss, true))
			return -1;
		if (sigaltstack(x[0] ? &ss : NULL, x[1] ? &old : NULL) != 0)
			return -1;
		return x[1] && !copy_user((void *)x[1], &old, sizeof old, false) ? -1 : 0;
	}
	int sig = (int)x[0];
	if (x[3] != (long)sizeof(uint64_t) || sig <= 0 || sig >= _NSIG || sig == 32 || sig == 33)
		return mc_seccomp_raw(nr, x[0], x[1], x[2], x[3], x[4], x[5]);
	struct mc_k_sigaction k;
	struct sigaction act, old;
	if (x[1]) {
		if (!copy_user(&k, (const void *)x[1], sizeof k, true))
			return -1;
		memset(&act, 0, sizeof act);
		act.sa_sigaction = (void (*)(int, siginfo_t *, void *))k.handler;
		memcpy(&act.sa_mask, &k.mask, sizeof k.mask);
		act.sa_flags = (int)k.flags;
		act.sa_restorer = (void (*)(void))k.restorer;
	}
	memset(&old, 0, sizeof old);
	if (install(sig, x[1] ? &act : NULL, x[2] ? &old : NULL) != 0)
		return -1;
	if (!x[2])
		return 0;
	k = (struct mc_k_sigaction){ (uintptr_t)old.sa_sigaction, (unsigned)old.sa_flags,
				  (uintptr_t)old.sa_restorer, 0 };
	memcpy(&k.mask, &old.sa_mask, sizeof k.mask);
	return copy_user((void *)x[2], &k, sizeof k, false) ? 0 : -1;
}

/* signal() and its kin set an action through install, flags and mask
 * as the C library's own would set them. */
static void (*set_simple(int sig, void (*handler)(int), int flags, bool self_masked))(int)
{
	if (handler == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	struct sigaction act, old;
	memset(&act, 0, sizeof act);
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (self_masked)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (install(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* glibc's signal(): BSD semantics, the signal blocked in its handler and
 * interrupted calls restarted.  Its own goes to the C library's
 * sigaction directly, past this file.  bsd_signal is the same. */
MC_API void (*signal(int sig, void (*handler)(int)))(int)
{
	return set_simple(sig, handler, SA_RESTART, true);
}

/* XPG's; the C library's header declares it only for XPG4.2 programs */
MC_API void (*bsd_signal(int sig, void (*handler)(int)))(int)
	__attribute__((alias("signal"), copy(signal)));

/* System V's: the handler runs once, the signal not blocked in it.  A
 * program built with -std=c99 or c11 (no _DEFAULT_SOURCE) calls it for
 * signal(): past this wrapper it would see fatal.c's handler where bare
 * shows SIG_DFL, and put the kernel's SIG_DFL in its place. */
MC_API void (*__sysv_signal(int sig, void (*handler)(int)))(int)
{
	return set_simple(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}

MC_API void (*sysv_signal(int sig, void (*handler)(int)))(int)
	__attribute__((alias("__sysv_signal")));

/* System V's sigset: SIG_HOLD blocks the signal; another disposition is
 * set (no flags, no mask) and the signal unblocked; the previous
 * disposition is returned, SIG_HOLD where the signal was blocked. */
MC_API void (*sigset(int sig, void (*disp)(int)))(int)
{
	if (sig <= 0 || sig >= _NSIG || disp == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigset_t one, was;
	sigemptyset(&one);
	sigaddset(&one, sig);
	struct sigaction old;
	if (disp == SIG_HOLD) {
		int rc = pthread_sigmask(SIG_BLOCK, &one, &was);
		if (rc != 0) {
			errno = rc;
			return SIG_ERR;
		}
		if (sigismember(&was, sig) == 1)
			return SIG_HOLD;
		if (install(sig, NULL, &old) != 0)
			return SIG_ERR;
		return old.sa_handler;
	}
	struct sigaction act;
	memset(&act, 0, sizeof act);
	act.sa_handler = disp;
	sigemptyset(&act.sa_mask);
	if (install(sig, &act, &old) != 0)
		return SIG_ERR;
	int rc = pthread_sigmask(SIG_UNBLOCK, &one, &was);
	if (rc != 0) {
		errno = rc;
		return SIG_ERR;
	}
	return sigismember(&was, sig) == 1 ? SIG_HOLD : old.sa_handler;
}
