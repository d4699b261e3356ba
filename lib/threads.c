/*
 * threads.c - every other thread of the process, held still while the
 * scan reads memory: where its stack pointer is, what its registers
 * hold, where its thread descriptor is.
 *
 * valgrind's leak check scans each thread's stack from its stack
 * pointer up and each thread's registers.  memcheck lists the threads
 * in /proc/self/task (so also those that never called a malloc-family
 * function, which memcheck has never seen) and sends each a real-time
 * signal; the handler copies the interrupted registers into a record
 * and waits on a futex until the scan is over.  Traps that shaped it:
 *
 *  - The handler runs wherever its thread was: inside the allocator,
 *    the C library, the dynamic linker, holding their locks.  It takes
 *    no lock, calls nothing that allocates, and writes only its record;
 *    the scan, for its part, does nothing while threads are stopped
 *    that needs a lock another thread may hold (dl_iterate_phdr, the
 *    program-mapping table: read before).
 *  - A thread may block the signal, or not get a processor in time.
 *    After a short wait, a thread whose /proc/self/task/TID/status shows
 *    the signal blocked and still pending is taken as it is: the stack
 *    pointer the kernel shows for a thread blocked in a system call
 *    (.../syscall), no registers; running, its whole stack, where its
 *    slot knows it.  One inside on_stop blocks the signal too, having
 *    taken it, or still leaving the last scan's (its slot in busy): it
 *    is waited for, as a runnable thread is, up to a second.  A handler that runs late finds the scan over and returns
 *    at once.
 *  - The program may use the signal.  One whose action is SIG_DFL is
 *    taken, from SIGRTMAX down, and its action is put back after; a
 *    signal still pending then (the thread blocks it) is discarded by
 *    setting SIG_IGN first, or its default action would kill the
 *    process when the thread unblocks it.
 *  - SA_RESTART: an interrupted read, write, wait or lock goes on as if
 *    nothing happened.  Calls that a handler interrupts whatever its
 *    flags (pause, sleep, nanosleep, poll, select, epoll_wait, sem_wait,
 *    sigtimedwait) return early with EINTR, as for any signal:
 *    memcheck(7) says so.
 *  - The record area is mapped once and never unmapped: a late handler
 *    may still be writing to it.
 *  - A thread interrupted inside memcheck's guard may have changed the
 *    block table and not yet counted that (account.c counts after the
 *    table), and the scan sums the counters with the threads stopped
 *    (scan.c's moment_take): its stop is put off until the guard comes
 *    down (stop_owed), or until it waits to enter a shard, before any
 *    change.  Measured: 1-3% of exits with churning threads on a loaded
 *    machine had one block in the one and not the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

#define MAX_STOP 4096 /* threads stopped at once; the rest are taken as they are */

struct rec {
	_Atomic uint32_t gen;  /* the scan it was written for */
	bool put_off;          /* the stop is owed: no registers here */
	pid_t tid;
	uintptr_t sp, tp;
	uintptr_t regs[MC_NREGS];
	uintptr_t alt_lo, alt_hi; /* mc_threads_dead_altstack's, or 0, 0 */
};

/* Threads inside on_stop's wait, by tid (0: a free slot), found from
 * tid % BUSY_SLOTS on.  A thread released at the end of one scan and not
 * yet given a processor still blocks every signal (on_stop's mask):
 * the next scan's signal stays pending to it, which is what a thread
 * that refuses the signal shows (refuses_signal).  Given up on at 2 ms
 * and taken as it is, running, with no slot of its own (it never
 * allocated), its stack, descriptor and DTV were no roots: the
 * running threads' DTVs counted freed (tests/prog/plain_dtv_running at
 * load, 2 exits in 30 under jemalloc; MEMCHECK_LOG showed both threads
 * answering the first scan and neither the second).  A thread found
 * here is waited for (up to the second), as a runnable one. */
#define BUSY_SLOTS 256

struct area {
	_Atomic uint32_t gen;  /* the scan under way, or the last one */
	_Atomic uint32_t go;   /* == gen: the scan is over, handlers return */
	_Atomic int next;      /* records handed out for this scan */
	_Atomic pid_t busy[BUSY_SLOTS];
	struct rec r[MAX_STOP];
};

static struct area *area;
static int stop_sig;
static struct sigaction saved_action;

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* go only grows, one step a scan: the scan g is over once go has
 * reached it, or passed it.  A handler woken at the end of one scan may
 * not get a processor before the next scan has ended too (that scan
 * waits for it, its signal blocked in this handler: busy): waiting for
 * go to equal g again would wait for ever. */
static bool released_by(uint32_t go, uint32_t g)
{
	return (int32_t)(go - g) >= 0;
}

/* This thread's record in the area, claimed with its tid (NULL: the
 * area is full); the caller fills the rest and publishes it (gen). */
static inline struct rec *rec_claim(struct area *a, bool put_off)
{
	int i = atomic_fetch_add(&a->next, 1);
	if (i >= MAX_STOP)
		return NULL;
	struct rec *r = &a->r[i];
	r->put_off = put_off;
	r->tid = (pid_t)syscall(SYS_gettid);
	return r;
}

/* This thread (tid) marked inside on_stop: its slot, or -1 (all taken:
 * then taken as it is if the next scan comes before it leaves). */
static inline int busy_mark(struct area *a, pid_t tid)
{
	for (int k = 0; k < BUSY_SLOTS; k++) {
		int i = (int)(((unsigned)tid + (unsigned)k) % BUSY_SLOTS);
		pid_t free_slot = 0;
		if (atomic_compare_exchange_strong(&a->busy[i], &free_slot, tid))
			return i;
	}
	return -1;
}

/* Is tid inside on_stop?  Slots of threads gone (a forked child's copy
 * of its parent's, a thread killed there) are freed on the way. */
static __attribute__((noinline)) bool in_handler(pid_t pid, pid_t tid)
{
	bool found = false;
	for (int i = 0; i < BUSY_SLOTS; i++) {
		pid_t b = atomic_load(&area->busy[i]);
		if (!b)
			continue;
		if (b == tid)
			found = true;
		else if (syscall(SYS_tgkill, pid, b, 0) != 0 && errno == ESRCH)
			atomic_compare_exchange_strong(&area->busy[i], &b, 0);
	}
	return found;
}

/* Held until the scan of generation g lets the threads go. */
static inline void wait_released(struct area *a, uint32_t g)
{
	for (uint32_t go; !released_by(go = atomic_load(&a->go), g);)
		futex(&a->go, FUTEX_WAIT_PRIVATE, go);
}

/* An alternate signal stack the program set (sigaltstack) holds, where
 * no handler runs on it, what the handlers that ran there left: their
 * frames are below the stack pointer once they returned, undefined to
 * valgrind, which skips them (tests/prog/plain_leak_altstack.c: a
 * handler's lost block was still reachable from its own dead frame,
 * the stack a buffer in .bss; roots.c cuts them out).  The calling
 * thread's, from the kernel: one in use (SS_ONSTACK) is read as it is.
 * Asked only where the program has set one of its own (signals.c's
 * sigaltstack sets mc_program_altstack).  One no handler of the
 * program's has run on (signals.c's trampoline notes the last it ran
 * on) holds no dead frame: to valgrind it is the program's memory as
 * any other, read whole (a block only a word there pointed to was
 * definitely lost, valgrind's still reachable: plain_leak_altunused). */
_Atomic bool mc_program_altstack;
MC_TLS uintptr_t mc_altstack_ran_lo, mc_altstack_ran_hi;

bool mc_threads_dead_altstack(uintptr_t *lo, uintptr_t *hi)
{
	stack_t ss;
	if (syscall(SYS_sigaltstack, NULL, &ss) != 0 || (ss.ss_flags & (SS_DISABLE | SS_ONSTACK)) ||
	    !ss.ss_size)
		return false;
	*lo = (uintptr_t)ss.ss_sp;
	*hi = *lo + ss.ss_size;
	return *lo == mc_altstack_ran_lo && *hi == mc_altstack_ran_hi;
}

/* The thread's alternate stack, asked of the kernel (only the thread
 * itself can) where the program set one of its own: a system call no
 * other stopped thread pays. */
static inline void rec_altstack(struct rec *r)
{
	r->alt_lo = r->alt_hi = 0;
	if (unlikely(atomic_load_explicit(&mc_program_altstack, memory_order_relaxed)))
		mc_threads_dead_altstack(&r->alt_lo, &r->alt_hi);
}

/* A stop put off (on_stop) is made here, the guard down: the thread's
 * counters and the table agree again.  Its stack is read from here up,
 * the callee-saved registers spilled into this frame (the others hold
 * nothing of the program's across its call into memcheck). */
static __attribute__((noinline)) void stop_owed(void)
{
	uint32_t g = mc_self.stop_owed;
	mc_self.stop_owed = 0;
	struct area *a = area;
	if (!a || atomic_load(&a->gen) != g || released_by(atomic_load(&a->go), g))
		return;
	int saved = errno;
	__builtin_unwind_init();
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
#if defined(__x86_64__)
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp) : : "memory");
#endif
	struct rec *r = rec_claim(a, false);
	if (r) {
		memset(r->regs, 0, sizeof r->regs);
		r->sp = sp;
		r->tp = mc_thread_pointer();
		rec_altstack(r);
		atomic_store_explicit(&r->gen, g, memory_order_release);
	}
	wait_released(a, g);
	errno = saved;
}

static void on_stop(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	if (si->si_code != SI_TKILL || si->si_pid != getpid())
		return; /* not memcheck's */
	int saved = errno;
	struct area *a = area;
	uint32_t g = atomic_load(&a->gen);
	/* Inside memcheck's guard the thread may have changed the table and
	 * not yet counted it (account.c counts after the table): the scan's
	 * moment (scan.c's moment_take) would miss that.  Such a thread
	 * stops when its guard comes down (stop_owed, through sig_pending,
	 * which the guard's last decrement tests anyway), unless it waits
	 * to enter a shard, before any change (table_wait).  Put off once a
	 * scan: a thread that waits with the guard up for something else
	 * the scan holds (region_lock, slot_lock) is signalled again
	 * (mc_threads_stop) and stops there. */
	if (mc_self.in_hook > 0 && !mc_self.table_wait && mc_self.stop_put_off != g &&
	    !released_by(atomic_load(&a->go), g)) {
		mc_self.stop_put_off = g;
		mc_self.stop_owed = g;
		struct rec *r = rec_claim(a, true);
		if (r)
			atomic_store_explicit(&r->gen, g, memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
		__atomic_fetch_or(&mc_self.sig_pending, MC_STOP_PENDING, __ATOMIC_RELAXED);
		errno = saved;
		return;
	}
	if (!released_by(atomic_load(&a->go), g)) {
		mc_self.stop_owed = 0; /* made here, a second signal's */
		struct rec *r = rec_claim(a, false);
		int slot = r ? busy_mark(a, r->tid) : -1;
		if (r) {
			const ucontext_t *uc = ucv;
#if defined(__x86_64__)
			for (int k = 0; k < MC_NREGS; k++)
				r->regs[k] = (uintptr_t)uc->uc_mcontext.gregs[k];
			r->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#else
			(void)uc;
			r->sp = (uintptr_t)__builtin_frame_address(0);
#endif
			r->tp = mc_thread_pointer();
			rec_altstack(r);
			atomic_store_explicit(&r->gen, g, memory_order_release);
		}
		wait_released(a, g);
		if (slot >= 0)
			atomic_store(&a->busy[slot], 0);
	}
	errno = saved;
}

struct listing {
	struct mc_threads *t;
	pid_t self;
};

static bool list_one(pid_t tid, void *arg)
{
	struct listing *l = arg;
	struct mc_threads *t = l->t;
	if (tid == l->self)
		return true;
	if (!mc_grow((void **)&t->v, &t->cap, t->n, sizeof *t->v, 64))
		return false;
	t->v[t->n++] = (struct mc_other_thread){ .tid = tid };
	return true;
}

/* The other threads' ids, from /proc/self/task, into t->v. */
static bool list_threads(struct mc_threads *t, pid_t self)
{
	struct listing l = { t, self };
	return mc_tasks_each(list_one, &l);
}

/* Is bit sig of the mask after key ("SigBlk:") in a status text set? */
static bool status_mask_has(const char *buf, const char *key, int sig)
{
	const char *s = strstr(buf, key);
	if (!s)
		return false;
	unsigned long long mask = strtoull(s + strlen(key), NULL, 16);
	return (mask >> (sig - 1)) & 1;
}

/* Does the thread refuse sig: blocked (SigBlk) and still pending for it
 * (SigPnd)?  Blocked alone is no answer: a thread inside on_stop blocks
 * every signal (its sa_mask) until its record is written, and one
 * preempted there under load looked like a thread that blocks the
 * signal, was given up on and taken with no stack at all (its state
 * "running": no stack pointer), which made the block only its stack
 * held definitely lost (plain_leak_blocked: 1 run in 250 under
 * jemalloc), or, caught later in the handler's futex wait, from the
 * handler's stack pointer, which reads the red zone the kernel steps
 * over (the 7 lost of 8: a lost block found reachable).  Nor is blocked
 * and pending: one still leaving the last scan's handler shows both
 * (busy, in_handler). */
static bool refuses_signal(pid_t tid, int sig)
{
	char buf[2048];
	ssize_t n = mc_task_read(tid, "/status", buf, sizeof buf - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return status_mask_has(buf, "SigPnd:", sig) && status_mask_has(buf, "SigBlk:", sig) &&
	       !in_handler(getpid(), tid);
}

/* A thread that did not answer: the stack pointer the kernel shows when
 * it is blocked (mc_task_blocked), else 0. */
static uintptr_t blocked_sp(pid_t tid)
{
	uintptr_t sp, pc;
	return mc_task_blocked(tid, &sp, &pc) ? sp : 0;
}

/* A thread not stopped (it refuses the signal, or had no processor for
 * a second): the stack pointer of the system call it is blocked in;
 * else, running, where its stack pointer cannot be had, its whole stack
 * as far as memcheck knows it (a thread that has allocated: account.c's
 * slot, whose lock the scan holds here).  Stale words below its stack
 * pointer may then keep a lost block reachable, where reading nothing
 * made every block only its stack held definitely lost. */
static void taken_as_is(struct mc_other_thread *o)
{
	o->sp = blocked_sp(o->tid);
	if (!o->sp && !mc_account_thread_stack_held(o->tid, &o->whole_lo, &o->whole_hi, &o->whole_tp))
		o->whole_lo = o->whole_hi = o->whole_tp = 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int pick_signal(void)
{
	for (int s = SIGRTMAX; s > SIGRTMIN + 2; s--) {
		struct sigaction old;
		if (mc_sys_sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			return s;
	}
	return 0;
}

/* Match the records written for this scan to the threads listed. */
static size_t collect(struct mc_threads *t, uint32_t g)
{
	size_t answered = 0;
	int n = atomic_load(&area->next);
	for (int i = 0; i < n && i < MAX_STOP; i++) {
		struct rec *r = &area->r[i];
		if (atomic_load_explicit(&r->gen, memory_order_acquire) != g)
			continue;
		for (size_t k = 0; k < t->n; k++) {
			struct mc_other_thread *o = &t->v[k];
			if (o->tid != r->tid || o->answered)
				continue;
			if (r->put_off) {
				o->put_off = true;
				continue;
			}
			o->answered = true;
			o->sp = r->sp;
			o->tp = r->tp;
			memcpy(o->regs, r->regs, sizeof o->regs);
			o->alt_lo = r->alt_lo;
			o->alt_hi = r->alt_hi;
			break;
		}
	}
	for (size_t k = 0; k < t->n; k++)
		answered += t->v[k].answered || t->v[k].skip;
	return answered;
}

bool mc_threads_stop(struct mc_threads *t, bool alone)
{
	memset(t, 0, sizeof *t);
	/* The region's end read that this thread was the only one, and it
	 * has started none since: nothing to list (a directory opened and
	 * read twice, a 16 KiB buffer's four pages). */
	if (alone)
		return true;
	if (!list_threads(t, mc_tid()))
		return false;
	if (!t->n)
		return true;
	pid_t pid = getpid();
	if (!area)
		area = mc_map_lazy(sizeof *area); /* touched as records are used */
	stop_sig = area ? pick_signal() : 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (!stop_sig || mc_sys_sigaction(stop_sig, &sa, &saved_action) != 0) {
		stop_sig = 0;
		for (size_t k = 0; k < t->n; k++)
			taken_as_is(&t->v[k]);
		return true;
	}
	mc_guard_stop_set(stop_owed);
	uint32_t g = atomic_load(&area->gen) + 1;
	if (!g)
		g = 1; /* 0: no stop owed (mc_self.stop_owed) */
	atomic_store(&area->next, 0);
	atomic_store(&area->go, g - 1);
	atomic_store(&area->gen, g);
	t->gen = g;
	for (size_t k = 0; k < t->n; k++)
		if (syscall(SYS_tgkill, pid, t->v[k].tid, stop_sig) != 0)
			t->v[k].skip = true;
	/* Wait: 2 ms for everyone; then give up on threads that block the
	 * signal, and on those that have gone; a second at most in all for
	 * threads waiting for a processor. */
	double t0 = now();
	bool looked = false;
	while (collect(t, g) < t->n) {
		double dt = now() - t0;
		if (dt > 1.0)
			break;
		/* A stop put off for 1 ms: the thread waits inside its guard
		 * for something this scan holds (or has not had a processor
		 * since; then it may stop inside the window on_stop avoids,
		 * its free or allocation in the table and not yet counted).
		 * Signalled again, it stops where it is. */
		for (size_t k = 0; k < t->n; k++) {
			struct mc_other_thread *o = &t->v[k];
			if (!o->put_off || o->answered || o->skip || o->again)
				continue;
			if (!o->put_off_at)
				o->put_off_at = dt;
			else if (dt - o->put_off_at > 0.001) {
				o->again = true;
				syscall(SYS_tgkill, pid, o->tid, stop_sig);
			}
		}
		if (dt > 0.002 && !looked) {
			looked = true;
			for (size_t k = 0; k < t->n; k++) {
				struct mc_other_thread *o = &t->v[k];
				if (o->answered || o->skip)
					continue;
				/* A thread in its exit never takes the signal:
				 * its stack and TLS are dead, and may still hold
				 * a pointer to what it freed (its DTV), since
				 * handed out again: not a root at all. */
				if (mc_task_exiting(o->tid))
					o->skip = o->exiting = true;
				else if (syscall(SYS_tgkill, pid, o->tid, 0) != 0 ||
					 (!o->put_off && refuses_signal(o->tid, stop_sig)))
					o->skip = true; /* taken as it is */
			}
		}
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
	collect(t, g); /* records written since the loop's last look */
	for (size_t k = 0; k < t->n; k++) {
		struct mc_other_thread *o = &t->v[k];
		o->skip = false;
		if (!o->answered && !o->exiting)
			taken_as_is(o);
	}
	return true;
}

void mc_threads_resume(struct mc_threads *t)
{
	if (stop_sig) {
		atomic_store(&area->go, t->gen);
		futex(&area->go, FUTEX_WAKE_PRIVATE, INT32_MAX);
		struct sigaction ign;
		memset(&ign, 0, sizeof ign);
		ign.sa_handler = SIG_IGN;
		mc_sys_sigaction(stop_sig, &ign, NULL); /* discards what is still pending */
		mc_sys_sigaction(stop_sig, &saved_action, NULL);
		stop_sig = 0;
	}
	if (t->v)
		mc_unmap(t->v, t->cap * sizeof *t->v);
	memset(t, 0, sizeof *t);
}
