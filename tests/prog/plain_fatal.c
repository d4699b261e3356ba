/*
 * plain_fatal.c - processes that die of a fatal signal's default action
 * (tests/test_fatal.c).  Each case leaks 100 bytes (one block, lost)
 * and keeps 16 + 32 bytes reachable from a global, then dies:
 *   segv       a write to address 8
 *   abort      a failed assert
 *   stdio-abort  opens its own file with fopen, reads a byte (the
 *              stream's buffer allocated), then abort() with the stream
 *              open and nothing written to stdout
 *   term       kill(getpid(), SIGTERM)
 *   leak-wait  creates the file $PLAIN_FATAL_READY, then waits in pause
 *              for the signal that ends it (a test a driver times out)
 *   term-many  100,000 blocks more kept reachable (a test's large heap),
 *              then kill(getpid(), SIGTERM)
 *   term-mallocs  a second thread sends the main one SIGTERM after 30 ms
 *              while it mallocs 24-byte blocks (at most 10 million) kept
 *              in a list from a global: the signal most likely comes
 *              inside memcheck's work (blocks tracked, the allocator
 *              called inside it)
 *   bus        a read past the end of a file it mapped (SIGBUS)
 *   alarm      alarm(1) with no handler, then pause
 *   fpe        an integer division by zero
 *   thread     a second thread writes to address 8 while the main one
 *              allocates and frees
 *   longjmp    a SIGSEGV handler of its own that siglongjmps out: it
 *              prints "recovered" and exits 0
 *   dfl-again  a SIGSEGV handler of its own, then SIG_DFL again, then
 *              the write to address 8
 *   in-handler a SIGALRM handler of its own, run every 50 us amid
 *              mallocs, writes to address 8 on its 20th run
 *   term-child the parent kills its sleeping child with SIGTERM
 *   death      abort() with nothing leaked first (a death test's child)
 *   stall      its stderr a pipe nobody reads, filled up (run by "wait"),
 *              then the write to address 8: memcheck's text cannot be
 *              written, its report can
 *   stall-exit the same, then it returns 0 from main (no signal)
 *   stall-_exit the same, then _exit(0)
 *   stall-stats the same stderr, full; then a second thread calls
 *              malloc_stats, which under glibc writes to it with an
 *              arena's lock held (blocked for good); the main thread
 *              raises SIGTERM in itself (run by "wait", "in time" said)
 *   term-fragmented  3,000,000 blocks of 24 bytes, every other one of
 *              them freed in a random order (glibc's statistics walk
 *              every free chunk: 0.3 s bare here, idle), then
 *              kill(getpid(), SIGTERM)
 *   term-fragmented-thread  the same with a second thread waiting in
 *              pause (the record's questions then run under a timer)
 *   segv-libc  a write to address 8 inside the C library's memset
 *   double-free  a block freed twice (a second one freed between): glibc
 *              aborts inside free
 *   alarm-pending  SIGALRM blocked and pending (raised), then abort():
 *              bare, it stays pending
 *   alarm-pending-exit  the same with a SIGALRM handler of its own that
 *              _exits 3: bare never runs it
 *   in-allocator  a second thread sends the main one SIGTERM after
 *              30 ms while it allocates and frees blocks of 5,000,
 *              100,000 and 300,000 bytes (run by "wait"; blocks
 *              tracked, or MEMCHECK_TRACK=0): the signal most likely
 *              comes inside the allocator, its lock held (glibc's arena,
 *              jemalloc's large extents, tcmalloc's page heap; tracked,
 *              inside free, called after memcheck's guard came down)
 *   overflow   unbounded recursion: SIGSEGV on the guard page below
 *              the main thread's stack, with no alternate stack
 *   overflow-thread  the same in a second thread (after its first
 *              malloc), the main thread waiting in pthread_join
 *   overflow-quiet  the same in a thread that never allocates, after
 *              1,100 other threads that never allocated either (every
 *              other one ended by pthread_exit), each joined before the
 *              next starts: more threads than memcheck has alternate
 *              stacks, so each must give its stack back at its end
 *   overflow-c11  the same in a thread C11's thrd_create starts (the C
 *              library calls pthread_create inside itself, not through
 *              the name), which never allocates: main waits in thrd_join
 *   overflow-timer  the same in the thread a SIGEV_THREAD timer's
 *              expiry starts (the C library's helper thread makes it),
 *              which never allocates: main waits in pause
 *   fsize      (run by "wait", RLIMIT_FSIZE 1 MiB, its stderr a regular
 *              file already 1 MiB long) prints "done" and returns 0:
 *              memcheck's text is past the limit
 *   fsize-report  (run by "wait", RLIMIT_FSIZE 512 bytes, less than its
 *              record) prints "done" and returns 0
 *   fsize-log  (run by "wait", RLIMIT_FSIZE 1 MiB, MEMCHECK_LOG a
 *              file already 1 MiB long) a region of memcheck's API
 *              ("region", found with dlsym) that loses 24 bytes, then
 *              prints "done" and returns 0
 *   fsize-over (run by "wait", RLIMIT_FSIZE 1 MiB) writes 1 MiB and one
 *              byte to a file of its own: SIGXFSZ's default action
 *   rawexit    1,100 threads, each joined before the next starts, that
 *              end by a raw SYS_exit (no destructor runs: memcheck's
 *              alternate stacks, 1,024, are not given back); then one
 *              that returns 7: prints "threads 1100, last 7"
 *   overflow-rawexit  the same 1,100 threads, then a stack overflow
 *              in a thread that never allocates: past memcheck's 1,024
 *              alternate stacks, the dead threads' must be taken back
 *   overflow-own  the same with an alternate stack of its own set up
 *              and SA_ONSTACK handler that prints its stack and _exits 5
 *   onstack    a SA_ONSTACK handler of its own, no alternate stack of
 *              its own: prints whether a local of the handler lies on
 *              the interrupted thread's stack, what sigaltstack and the
 *              ucontext's uc_stack say there; three runs (the second
 *              left by siglongjmp); then the stack overflow (killed by
 *              SIGSEGV)
 *   raw        handlers and the alternate stack through syscall(2):
 *              prints what SYS_rt_sigaction shows for SIGSEGV and
 *              SIGUSR1 and what SYS_sigaltstack shows; a SIGUSR1
 *              handler installed so runs; SIGSEGV set to SIG_DFL so, then
 *              the write to address 8
 *   altstack   prints what sigaltstack shows (start, after setting one
 *              of its own, after SS_DISABLE, in a new thread: at its
 *              start, after its first malloc, with one of its own)
 *   resethand  a SA_RESETHAND SIGSEGV handler that returns, faults
 *              again in the handler-less action: killed by SIGSEGV
 *   sysv       the same with __sysv_signal's handler
 *   epipe      run with SIGPIPE ignored (inherited, set by "wait"):
 *              a write to a pipe without reader gets EPIPE
 *   view-hup   (run by "wait") view with SIGHUP inherited ignored
 *   view       prints what sigaction and signal show for every signal
 *              whose default action ends the process, then after
 *              setting a handler, SIG_IGN, SIG_DFL (with flags and a
 *              mask), and what sigprocmask shows
 *   report-stall  (run by "wait") its MEMCHECK_REPORT a FIFO the parent
 *              holds open and never reads: it fills the FIFO, then
 *              returns 0 with nothing leaked
 *   report-slow   (run by "wait") its MEMCHECK_REPORT a pipe's write end
 *              (/dev/fd/N): it fills the pipe, then returns 0 with
 *              nothing leaked; the parent reads it slowly (4 KiB every
 *              20 ms) and prints "record whole" when what follows the
 *              fill is one JSON line of a passing "process" region
 *   report-cut    (run by "wait") the same pipe, filled, with 100 bytes
 *              leaked (a record of more than a page); the parent reads
 *              one page of the fill, then nothing for 3 s, then the rest,
 *              and says whether the record is there whole, not at all,
 *              or cut
 *   report-big    (run by "wait") the same pipe, empty, with a block
 *              leaked from each of 64 distinct stacks (run with
 *              MEMCHECK_MAX_LEAKS=64: a record of about 200 KiB, more
 *              than the pipe's 64 KiB); the parent reads nothing for
 *              3 s, then all, and says as report-cut does
 * "wait CASE" runs "CASE" in a child (core dumps off) and prints its wait
 * status: "CASE: signal N core C" or "CASE: exit N", then exits 0; for
 * the stall cases and in-allocator, also "in time" when the child ended
 * within 8 seconds.  A child that has not ended after 20 seconds is
 * killed (SIGKILL): "signal 9".
 */
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "stack_paths.h"

static char **keep;

/* fsize, fsize-over: RLIMIT_FSIZE, room for any record of the child's */
#define FSIZE_LIMIT (1 << 20)

static void leak(void)
{
	char *p = malloc(100);
	memset(p, 1, 100);
	p = NULL;
	keep = malloc(16);
	keep[0] = malloc(32);
}

static void *volatile small_sink;

static void lose_small(void)
{
	small_sink = malloc(24);
	small_sink = NULL; /* lost: nothing points to it */
}

static void segv(void)
{
	*(volatile int *)8 = 1;
}

static void *segv_thread(void *arg)
{
	(void)arg;
	usleep(20000);
	segv();
	return NULL;
}

static sigjmp_buf jb;

static void to_jump(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

static void noop(int sig)
{
	(void)sig;
}

static volatile int runs;

static void fault_in_handler(int sig)
{
	(void)sig;
	if (++runs == 20)
		segv();
}

static volatile int faults;

/* Returns, for its SA_RESETHAND action to be gone at the next fault. */
static void once(int sig)
{
	(void)sig;
	faults++;
}

/* The recursion a stack overflow needs, which the compiler keeps: it
 * ends only where the depth wraps, far past any stack limit. */
static volatile unsigned long depth_left = ~0ul;

static int deep(volatile char *up)
{
	/* all of it written: what leak()'s calls left below main's frame
	 * (the lost block's address) must not survive in it as a root */
	volatile char frame[256];
	for (int i = 0; i < (int)sizeof frame; i++)
		frame[i] = (char)i;
	frame[0] = up ? up[0] : 1;
	if (--depth_left == 0)
		return frame[0];
	return deep(frame) + frame[0];
}

static void on_own_stack(int sig)
{
	(void)sig;
	stack_t now;
	sigaltstack(NULL, &now);
	char line[64];
	int n = snprintf(line, sizeof line, "own handler on stack %d\n",
			 (now.ss_flags & SS_ONSTACK) != 0);
	(void)!write(1, line, (size_t)n);
	_exit(5);
}

/* onstack: a local of the code the handler interrupts, its runs */
static char *interrupted_local;
static volatile int onstack_runs;
static sigjmp_buf onstack_jb;

static void on_interrupted(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	const ucontext_t *uc = ucv;
	volatile char here = 0;
	long below = (long)(interrupted_local - (const char *)&here);
	stack_t now;
	sigaltstack(NULL, &now);
	char line[160];
	int n = snprintf(line, sizeof line,
			 "run %d: on the interrupted stack %d, sigaltstack flags %#x, "
			 "uc_stack flags %#x size %zu sp %s\n",
			 ++onstack_runs, below > 0 && below < 65536, (unsigned)now.ss_flags,
			 (unsigned)uc->uc_stack.ss_flags, uc->uc_stack.ss_size,
			 uc->uc_stack.ss_sp ? "set" : "null");
	(void)!write(1, line, (size_t)n);
	if (onstack_runs == 2)
		siglongjmp(onstack_jb, 1);
}

static void onstack(void)
{
	volatile char mine = 0;
	interrupted_local = (char *)&mine;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_interrupted;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	if (sigsetjmp(onstack_jb, 1) == 0)
		raise(SIGUSR1);
	raise(SIGUSR1);
}

/* raw: the kernel's own action layout, and the restorer the kernel
 * needs on x86-64 (the C library's is not exported) */
struct k_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};
void raw_restorer(void);
__asm__(".text\nraw_restorer:\n\tmov $15, %eax\n\tsyscall\n");

static void raw_usr1(int sig)
{
	(void)sig;
	(void)!write(1, "raw handler ran\n", 16);
}

static void raw_show(const char *when, int sig)
{
	struct k_sigaction k;
	memset(&k, 0xff, sizeof k);
	long rc = syscall(SYS_rt_sigaction, sig, NULL, &k, 8);
	printf("%s %d: rc %ld %s flags %#lx restorer %d mask %#lx\n", when, sig, rc,
	       k.handler == (void *)SIG_DFL ? "DFL" : k.handler == (void *)raw_usr1 ? "raw_usr1" :
									 "OTHER",
	       k.flags & ~0x04000000ul, k.restorer != NULL, k.mask);
}

static void raw(void)
{
	raw_show("start", SIGSEGV);
	raw_show("start", SIGUSR1);
	stack_t ss;
	long rc = syscall(SYS_sigaltstack, NULL, &ss);
	printf("altstack: rc %ld flags %#x size %zu sp %s\n", rc, (unsigned)ss.ss_flags, ss.ss_size,
	       ss.ss_sp ? "set" : "null");
	struct k_sigaction k = { (void *)raw_usr1, 0x04000000ul /* SA_RESTORER */, (void *)raw_restorer,
				 1ul << (SIGUSR2 - 1) };
	rc = syscall(SYS_rt_sigaction, SIGUSR1, &k, NULL, 8);
	printf("set: rc %ld\n", rc);
	raw_show("set", SIGUSR1);
	fflush(stdout);
	raise(SIGUSR1);
	k = (struct k_sigaction){ (void *)SIG_DFL, 0x04000000ul, (void *)raw_restorer, 0 };
	rc = syscall(SYS_rt_sigaction, SIGSEGV, &k, NULL, 8);
	printf("default: rc %ld\n", rc);
	raw_show("default", SIGSEGV);
	errno = 0;
	rc = syscall(SYS_rt_sigaction, SIGSEGV, (void *)8, NULL, 8);
	printf("bad pointer: rc %ld %s\n", rc, errno == EFAULT ? "EFAULT" : strerror(errno));
	fflush(stdout);
}

/* stall-stats: the thread that holds glibc's arena lock for good */
static void *stats_thread(void *arg)
{
	(void)arg;
	malloc_stats();
	return NULL;
}

/* term-fragmented-thread: a thread that waits */
static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* alarm-pending-exit: a handler bare never runs */
static void alarm_exit(int sig)
{
	(void)sig;
	_exit(3);
}

/* term-fragmented: n blocks, every other one freed in a random order */
void **fragmented;
static void fragment(size_t n)
{
	void **p = malloc(n * sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = malloc(24);
	uint64_t x = 88172645463325252u;
	for (size_t i = n - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t j = (size_t)(x % (i + 1));
		void *t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	for (size_t i = 0; i < n; i += 2)
		free(p[i]);
	fragmented = p; /* the other half still reachable */
}

/* in-allocator: the thread that ends the main one */
static pthread_t main_thread;

static void *terminator(void *arg)
{
	(void)arg;
	usleep(30000);
	pthread_kill(main_thread, SIGTERM);
	for (;;)
		pause();
	return NULL;
}

static void show_altstack(const char *when)
{
	stack_t ss;
	if (sigaltstack(NULL, &ss) != 0) {
		printf("%s: error\n", when);
		return;
	}
	printf("%s: flags %#x size %zu sp %s\n", when, (unsigned)ss.ss_flags, ss.ss_size,
	       ss.ss_sp ? "set" : "null");
}

static void show(const char *when, int sig);

/* A one-run handler of SIGSEGV installed: its action before and after
 * its run, then a fault with no handler left. */
static void fault_twice(void)
{
	show("before", SIGSEGV);
	raise(SIGSEGV);
	printf("handled %d\n", faults);
	show("after", SIGSEGV);
	fflush(stdout);
	segv();
}

/* An alternate stack of its own set, then disabled: what sigaltstack
 * returned and shows each time, each line after who. */
static void own_altstack(const char *who)
{
	static char own[65536];
	stack_t ss = { .ss_sp = own, .ss_size = sizeof own, .ss_flags = 0 }, old;
	char when[64];
	sigaltstack(&ss, &old);
	printf("%sold: flags %#x size %zu sp %s\n", who, (unsigned)old.ss_flags, old.ss_size,
	       old.ss_sp ? "set" : "null");
	snprintf(when, sizeof when, "%sown", who);
	show_altstack(when);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, &old);
	printf("%sold: flags %#x size %zu sp %s\n", who, (unsigned)old.ss_flags, old.ss_size,
	       old.ss_sp == own ? "own" : old.ss_sp ? "other" : "null");
	snprintf(when, sizeof when, "%sdisabled", who);
	show_altstack(when);
}

static void *altstack_thread(void *arg)
{
	(void)arg;
	show_altstack("thread");
	/* after its first allocation (memcheck's armed then), and with
	 * one of its own */
	free(malloc(64));
	show_altstack("thread allocated");
	own_altstack("thread ");
	return NULL;
}

static void *overflow_thread(void *arg)
{
	free(malloc(64));
	return (void *)(intptr_t)deep(arg);
}

static void *overflow_quiet(void *arg)
{
	return (void *)(intptr_t)deep(arg);
}

static int overflow_c11(void *arg)
{
	return deep(arg);
}

static void overflow_notified(union sigval v)
{
	depth_left = (unsigned long)deep(v.sival_ptr);
}

static void *raw_exit(void *arg)
{
	(void)arg;
	syscall(SYS_exit, 0);
	return NULL;
}

static void *quiet(void *arg)
{
	if ((intptr_t)arg & 1)
		pthread_exit(arg);
	return arg;
}

static const int fatal[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGILL,   SIGTRAP,   SIGABRT, SIGBUS, SIGFPE,
			     SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE,  SIGALRM,   SIGTERM, SIGXCPU, SIGXFSZ,
			     SIGVTALRM, SIGPROF, SIGIO, SIGPWR,   SIGSYS,    SIGSTKFLT };
/* (the last five memcheck does not catch: their view is checked too) */

static void show(const char *when, int sig)
{
	struct sigaction sa;
	sigaction(sig, NULL, &sa);
	const char *h = sa.sa_handler == SIG_DFL ? "DFL" : sa.sa_handler == SIG_IGN ? "IGN" :
		        (void *)sa.sa_handler == (void *)noop ? "noop" : "OTHER";
	unsigned long mask = 0;
	for (int s = 1; s < 64; s++)
		if (sigismember(&sa.sa_mask, s) == 1)
			mask |= 1ul << s;
	printf("%s %d: %s flags %#x restorer %d mask %#lx\n", when, sig, h, (unsigned)sa.sa_flags,
	       sa.sa_restorer != NULL, mask);
}

/* sigset is deprecated, and still called by System V programs */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* XPG's, which the C library's header declares only for XPG4.2 */
void (*bsd_signal(int sig, void (*handler)(int)))(int);

static const char *name(void (*h)(int))
{
	return h == SIG_DFL ? "DFL" : h == SIG_IGN ? "IGN" : h == SIG_HOLD ? "HOLD" :
	       h == noop ? "noop" : h == SIG_ERR ? "ERR" : "OTHER";
}

static void view(void)
{
	for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
		int sig = fatal[i];
		show("start", sig);
		void (*was)(int) = signal(sig, noop);
		printf("signal %d returned %s\n", sig, was == SIG_DFL ? "DFL" : was == SIG_IGN ? "IGN" : "OTHER");
		show("handled", sig);
		was = signal(sig, SIG_IGN);
		printf("signal %d returned %s\n", sig, was == noop ? "noop" : "OTHER");
		show("ignored", sig);
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sa.sa_flags = SA_RESTART | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGUSR2);
		sigaction(sig, &sa, &old);
		printf("old %d: %s\n", sig, old.sa_handler == SIG_IGN ? "IGN" : "OTHER");
		show("default", sig);
		was = signal(sig, SIG_DFL);
		printf("signal %d returned %s\n", sig, was == SIG_DFL ? "DFL" : "OTHER");
		show("again", sig);
	}
	/* the C library's other setters: System V's (what signal() is in a
	 * program built with -std=c99), XPG's, sigset with SIG_HOLD */
	for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
		int sig = fatal[i];
		void (*was)(int) = __sysv_signal(sig, noop);
		printf("sysv %d returned %s\n", sig, name(was));
		show("sysv", sig);
		was = sysv_signal(sig, SIG_DFL);
		printf("sysv %d returned %s\n", sig, name(was));
		was = bsd_signal(sig, noop);
		printf("bsd %d returned %s\n", sig, name(was));
		show("bsd", sig);
		was = sigset(sig, SIG_HOLD);
		printf("sigset hold %d returned %s\n", sig, name(was));
		was = sigset(sig, SIG_DFL);
		printf("sigset dfl %d returned %s\n", sig, name(was));
		show("sigset", sig);
		was = sigset(sig, SIG_DFL);
		printf("sigset dfl %d returned %s\n", sig, name(was));
	}
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	unsigned long m = 0;
	for (int s = 1; s < 64; s++)
		if (sigismember(&now, s) == 1)
			m |= 1ul << s;
	printf("blocked %#lx\n", m);
}

static int stall_end = -1;

/* report-stall, report-slow: the child's report file (the parent's own
 * report goes where the run's does) */
static char report_path[64];
static int report_fd[2] = { -1, -1 };
static const char *report_what = "";

static int report_open(const char *what)
{
	report_what = what;
	if (strcmp(what, "report-stall") == 0) {
		char dir[] = "/tmp/plain_fatal_XXXXXX";
		if (!mkdtemp(dir))
			return -1;
		snprintf(report_path, sizeof report_path, "%s/fifo", dir);
		if (mkfifo(report_path, 0600) != 0)
			return -1;
		/* a reader that never reads: the writer's open succeeds */
		report_fd[0] = open(report_path, O_RDWR | O_CLOEXEC);
		return report_fd[0] < 0 ? -1 : 0;
	}
	if (pipe(report_fd) != 0)
		return -1;
	snprintf(report_path, sizeof report_path, "/dev/fd/%d", report_fd[1]);
	return 0;
}

/* report-cut's parent: once the child has filled the pipe, one page
 * of it read (room for a piece of the record, not for all of it), then
 * nothing until the child's bound has passed; then the rest, and what
 * follows the fill said: "record dropped whole" (nothing), "record
 * whole" (one line of JSON) or "record cut" (a partial line) */
static void report_read_cut(void)
{
	static char got[1 << 20];
	int unread = 0;
	size_t n = 0;
	ssize_t r;
	if (strcmp(report_what, "report-big") == 0) {
		sleep(3); /* report-big: nothing read until the bound has passed */
	} else {
		for (int i = 0; i < 500 && (ioctl(report_fd[0], FIONREAD, &unread) != 0 ||
					    unread < fcntl(report_fd[0], F_GETPIPE_SZ));
		     i++)
			usleep(10000);
		r = read(report_fd[0], got, 4096);
		if (r <= 0)
			return;
		sleep(3);
		n = (size_t)r;
	}
	while (n < sizeof got && (r = read(report_fd[0], got + n, sizeof got - n)) > 0)
		n += (size_t)r;
	size_t at = 0;
	while (at < n && got[at] == '\n')
		at++;
	const char *end = memchr(got + at, '\n', n - at);
	if (at == n)
		printf("record dropped whole\n");
	else if (got[at] == '{' && end && end == got + n - 1 && end[-1] == '}')
		printf("record whole\n");
	else
		printf("record cut: %zu bytes\n", n - at);
}

/* report-slow's parent: the pipe read 4 KiB every 20 ms until its end;
 * what follows the child's fill ('\n' bytes) one passing record */
static void report_read_slowly(void)
{
	close(report_fd[1]);
	if (strcmp(report_what, "report-cut") == 0 || strcmp(report_what, "report-big") == 0) {
		report_read_cut();
		return;
	}
	static char got[1 << 20];
	size_t n = 0;
	ssize_t r;
	usleep(200000);
	while (n < sizeof got && (r = read(report_fd[0], got + n, 4096)) > 0) {
		n += (size_t)r;
		usleep(20000);
	}
	size_t at = 0;
	while (at < n && got[at] == '\n')
		at++;
	const char *end = memchr(got + at, '\n', n - at);
	if (at < n && got[at] == '{' && end && end == got + n - 1 && end[-1] == '}' &&
	    memmem(got + at, n - at, "\"name\":\"process\"", 16) &&
	    memmem(got + at, n - at, "\"verdict\":\"pass\"", 16))
		printf("record whole\n");
	else
		printf("record not whole: %zu bytes of fill, %zu after\n", at, n - at);
}

/* The child's side: the report's file filled up, nothing leaked. */
static int report_fill(void)
{
	const char *path = getenv("MEMCHECK_REPORT");
	int fd = path ? open(path, O_WRONLY | O_NONBLOCK) : -1;
	if (fd < 0)
		return 2;
	static char fill[4096];
	memset(fill, '\n', sizeof fill);
	while (write(fd, fill, sizeof fill) > 0)
		;
	close(fd);
	return 0;
}

static int wait_case(char *self, const char *what)
{
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none);
	if (strcmp(what, "epipe") == 0)
		signal(SIGPIPE, SIG_IGN); /* inherited ignored by the child */
	/* view-hup: "view" with SIGHUP inherited ignored (nohup's) */
	if (strcmp(what, "view-hup") == 0)
		signal(SIGHUP, SIG_IGN);
	/* stall: the child's stderr a pipe whose read end this process
	 * keeps open and never reads */
	int p[2] = { -1, -1 };
	bool stall = strncmp(what, "stall", 5) == 0;
	if (stall && pipe(p) != 0)
		return 2;
	bool report = strncmp(what, "report-", 7) == 0;
	if (report && report_open(what) != 0)
		return 2;
	fflush(stdout);
	stall_end = p[1];
	/* fsize: the child's stderr a regular file at its size limit */
	bool fsize = strncmp(what, "fsize", 5) == 0;
	int full = -1;
	char log_path[] = "/tmp/plain_fatal_XXXXXX";
	if (strcmp(what, "fsize") == 0 || strcmp(what, "fsize-log") == 0) {
		char *path = log_path;
		static char fill[FSIZE_LIMIT];
		full = mkstemp(path);
		if (full < 0)
			return 2;
		if (strcmp(what, "fsize") == 0)
			unlink(path);
		memset(fill, '.', sizeof fill);
		if (write(full, fill, sizeof fill) != (ssize_t)sizeof fill)
			return 2;
	}
	bool log = strcmp(what, "fsize-log") == 0;
	pid_t pid = fork();
	if (pid == 0) {
		if (p[1] >= 0)
			dup2(p[1], 2);
		if (full >= 0 && !log)
			dup2(full, 2);
		if (log)
			setenv("MEMCHECK_LOG", log_path, 1);
		struct rlimit fs = { FSIZE_LIMIT, FSIZE_LIMIT };
		if (strcmp(what, "fsize-report") == 0)
			fs.rlim_cur = fs.rlim_max = 512;
		if (fsize)
			setrlimit(RLIMIT_FSIZE, &fs);
		if (report)
			setenv("MEMCHECK_REPORT", report_path, 1);
		char *argv[] = { self, strcmp(what, "view-hup") == 0 ? "view" : (char *)what, NULL };
		execv(self, argv);
		_exit(127);
	}
	int st;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (stall)
		close(stall_end);
	if (report && report_fd[1] >= 0)
		report_read_slowly();
	/* a child that waits for ever fails the test, not hangs it */
	for (int i = 0; waitpid(pid, &st, WNOHANG) == 0; i++) {
		if (i == 2000)
			kill(pid, SIGKILL);
		usleep(10000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (log)
		unlink(log_path);
	if (report && report_fd[1] < 0) {
		unlink(report_path);
		*strrchr(report_path, '/') = 0;
		rmdir(report_path);
	}
	if ((stall || report || strcmp(what, "in-allocator") == 0) && t1.tv_sec - t0.tv_sec < 8)
		printf("in time\n");
	if (WIFSIGNALED(st))
		printf("%s: signal %d core %d\n", what, WTERMSIG(st), WCOREDUMP(st) ? 1 : 0);
	else
		printf("%s: exit %d\n", what, WEXITSTATUS(st));
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "segv";
	if (strcmp(what, "wait") == 0 && argc > 2)
		return wait_case(argv[0], argv[2]);
	if (strcmp(what, "view") == 0) {
		view();
		return 0;
	}
	if (strcmp(what, "death") == 0)
		abort();
	if (strcmp(what, "report-cut") == 0)
		leak(); /* a record of more than a page */
	if (strcmp(what, "report-big") == 0) {
		for (unsigned i = 0; i < 64; i++)
			path_down(i, 8, lose_small); /* a record larger than the pipe */
		return 0;
	}
	if (strncmp(what, "report-", 7) == 0)
		return report_fill();
	if (strcmp(what, "altstack") == 0) {
		show_altstack("start");
		own_altstack("");
		pthread_t t;
		pthread_create(&t, NULL, altstack_thread, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	leak();
	if (strcmp(what, "segv") == 0) {
		segv();
	} else if (strcmp(what, "in-allocator") == 0) {
		main_thread = pthread_self();
		pthread_t t;
		pthread_create(&t, NULL, terminator, NULL);
		for (;;) {
			void *a = malloc(5000), *b = malloc(100000), *c = malloc(300000);
			free(a);
			free(b);
			free(c);
		}
	} else if (strcmp(what, "onstack") == 0) {
		onstack();
		fflush(stdout);
		return deep(NULL);
	} else if (strcmp(what, "raw") == 0) {
		raw();
		segv();
	} else if (strcmp(what, "abort") == 0) {
		assert(what[0] == 'x');
	} else if (strcmp(what, "stdio-abort") == 0) {
		FILE *f = fopen(argv[0], "r");
		if (!f || fgetc(f) == EOF)
			return 2;
		abort();
	} else if (strcmp(what, "term") == 0) {
		kill(getpid(), SIGTERM);
		pause();
	} else if (strcmp(what, "leak-wait") == 0) {
		const char *ready = getenv("PLAIN_FATAL_READY");
		if (ready)
			close(open(ready, O_WRONLY | O_CREAT, 0644));
		for (;;)
			pause();
	} else if (strcmp(what, "term-mallocs") == 0) {
		main_thread = pthread_self();
		pthread_t t;
		pthread_create(&t, NULL, terminator, NULL);
		static void **list;
		for (long i = 0; i < 10000000; i++) {
			void **p = malloc(24);
			*p = list;
			list = p;
		}
		pause();
	} else if (strncmp(what, "term-fragmented", 15) == 0) {
		if (strcmp(what, "term-fragmented-thread") == 0) {
			pthread_t t;
			pthread_create(&t, NULL, sleeper, NULL);
		}
		fragment(3000000);
		kill(getpid(), SIGTERM);
		pause();
	} else if (strcmp(what, "double-free") == 0) {
		void *volatile p = malloc(40), *volatile q = malloc(40);
		free(p);
		free(q);
		free(p);
	} else if (strcmp(what, "segv-libc") == 0) {
		volatile size_t n = 64;
		memset((void *)(uintptr_t)8, 0, n);
	} else if (strncmp(what, "alarm-pending", 13) == 0) {
		if (strcmp(what, "alarm-pending-exit") == 0)
			signal(SIGALRM, alarm_exit);
		sigset_t alrm;
		sigemptyset(&alrm);
		sigaddset(&alrm, SIGALRM);
		sigprocmask(SIG_BLOCK, &alrm, NULL);
		raise(SIGALRM);
		abort();
	} else if (strcmp(what, "term-many") == 0) {
		static void *many[100000];
		for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
			many[i] = malloc(16 + i % 32);
		kill(getpid(), SIGTERM);
		pause();
	} else if (strcmp(what, "bus") == 0) {
		char path[] = "/tmp/plain_fatal_XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		if (fd < 0 || ftruncate(fd, 4096) != 0)
			return 2;
		volatile char *m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return 2;
		(void)m[4096];
	} else if (strcmp(what, "alarm") == 0) {
		alarm(1);
		for (;;)
			pause();
	} else if (strcmp(what, "fpe") == 0) {
		volatile int zero = 0, seven = 7;
		printf("%d\n", seven / zero);
	} else if (strcmp(what, "thread") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, segv_thread, NULL);
		for (;;)
			free(malloc(64));
	} else if (strcmp(what, "longjmp") == 0) {
		signal(SIGSEGV, to_jump);
		if (sigsetjmp(jb, 1) == 0)
			segv();
		printf("recovered\n");
		return 0;
	} else if (strcmp(what, "dfl-again") == 0) {
		signal(SIGSEGV, to_jump);
		signal(SIGSEGV, SIG_DFL);
		segv();
	} else if (strcmp(what, "in-handler") == 0) {
		signal(SIGALRM, fault_in_handler);
		struct itimerval t = { { 0, 50 }, { 0, 50 } };
		setitimer(ITIMER_REAL, &t, NULL);
		for (;;)
			free(malloc(64));
	} else if (strcmp(what, "term-child") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			for (;;)
				pause();
		}
		usleep(100000);
		kill(pid, SIGTERM);
		int st;
		waitpid(pid, &st, 0);
		printf("child: signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		free(keep[0]);
		free(keep);
		return 0;
	} else if (strncmp(what, "stall", 5) == 0) {
		int fl = fcntl(2, F_GETFL);
		fcntl(2, F_SETFL, fl | O_NONBLOCK);
		static char fill[4096];
		while (write(2, fill, sizeof fill) > 0)
			;
		fcntl(2, F_SETFL, fl);
		if (strcmp(what, "stall-exit") == 0)
			return 0;
		if (strcmp(what, "stall-_exit") == 0)
			_exit(0);
		if (strcmp(what, "stall-stats") == 0) {
			pthread_t t;
			pthread_create(&t, NULL, stats_thread, NULL);
			usleep(200000);
			raise(SIGTERM);
			pause();
		}
		segv();
	} else if (strcmp(what, "overflow") == 0) {
		return deep(NULL);
	} else if (strcmp(what, "overflow-thread") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, overflow_thread, NULL);
		void *r;
		pthread_join(t, &r);
		return (int)(intptr_t)r;
	} else if (strcmp(what, "overflow-quiet") == 0) {
		pthread_t t;
		void *r;
		for (intptr_t i = 0; i < 1100; i++)
			if (pthread_create(&t, NULL, quiet, (void *)i) != 0 || pthread_join(t, &r) != 0 ||
			    r != (void *)i)
				return 3;
		pthread_create(&t, NULL, overflow_quiet, NULL);
		pthread_join(t, &r);
		return (int)(intptr_t)r;
	} else if (strcmp(what, "overflow-c11") == 0) {
		thrd_t t;
		int r = 0;
		if (thrd_create(&t, overflow_c11, NULL) != thrd_success || thrd_join(t, &r) != thrd_success)
			return 3;
		return r;
	} else if (strcmp(what, "overflow-timer") == 0) {
		struct sigevent ev;
		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_THREAD;
		ev.sigev_notify_function = overflow_notified;
		timer_t id;
		struct itimerspec in = { .it_value = { 0, 20 * 1000 * 1000 } };
		if (timer_create(CLOCK_MONOTONIC, &ev, &id) != 0 || timer_settime(id, 0, &in, NULL) != 0)
			return 3;
		for (;;)
			pause();
	} else if (strncmp(what, "fsize", 5) == 0) {
		void (*begin)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memcheck_begin");
		int (*end)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "memcheck_end");
		if (strcmp(what, "fsize-log") == 0 && begin && end) {
			begin("region");
			lose_small();
			end(NULL);
		}
		if (strcmp(what, "fsize-over") == 0) {
			char path[] = "/tmp/plain_fatal_XXXXXX";
			int fd = mkstemp(path);
			if (fd < 0)
				return 2;
			unlink(path);
			static char fill[FSIZE_LIMIT];
			(void)!write(fd, fill, sizeof fill);
			(void)!write(fd, fill, 1);
		}
		printf("done\n");
		return 0;
	} else if (strcmp(what, "rawexit") == 0) {
		pthread_t t;
		void *r;
		int n = 0;
		for (; n < 1100; n++)
			if (pthread_create(&t, NULL, raw_exit, NULL) != 0 || pthread_join(t, NULL) != 0)
				break;
		if (pthread_create(&t, NULL, quiet, (void *)(intptr_t)7) != 0 || pthread_join(t, &r) != 0)
			return 3;
		printf("threads %d, last %d\n", n, (int)(intptr_t)r);
		return 0;
	} else if (strcmp(what, "overflow-rawexit") == 0) {
		pthread_t t;
		void *r;
		for (int n = 0; n < 1100; n++)
			if (pthread_create(&t, NULL, raw_exit, NULL) != 0 || pthread_join(t, NULL) != 0)
				return 3;
		pthread_create(&t, NULL, overflow_quiet, NULL);
		pthread_join(t, &r);
		return (int)(intptr_t)r;
	} else if (strcmp(what, "overflow-own") == 0) {
		static char own[65536];
		stack_t ss = { .ss_sp = own, .ss_size = sizeof own, .ss_flags = 0 };
		sigaltstack(&ss, NULL);
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_own_stack;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGSEGV, &sa, NULL);
		return deep(NULL);
	} else if (strcmp(what, "resethand") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = once;
		sa.sa_flags = SA_RESETHAND;
		sigaction(SIGSEGV, &sa, NULL);
		fault_twice();
	} else if (strcmp(what, "sysv") == 0) {
		__sysv_signal(SIGSEGV, once);
		fault_twice();
	} else if (strcmp(what, "epipe") == 0) {
		struct sigaction sa;
		sigaction(SIGPIPE, NULL, &sa);
		int p[2];
		if (pipe(p) != 0)
			return 2;
		close(p[0]);
		errno = 0;
		ssize_t n = write(p[1], "x", 1);
		printf("view %s write %zd %s\n", sa.sa_handler == SIG_IGN ? "IGN" : "OTHER", n,
		       errno == EPIPE ? "EPIPE" : strerror(errno));
		return 0;
	}
	return 3;
}
