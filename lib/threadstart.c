/*
 * threadstart.c - pthread_create, wrapped: a thread's alternate signal
 * stack armed before its start routine runs.
 *
 * A stack overflow's SIGSEGV cannot be delivered on the stack that
 * overflowed: without an alternate stack the kernel kills the process
 * bare, and the record of its memory is lost.  memcheck arms one of its
 * own in each thread (fatal.c), and only the thread itself can: the
 * kernel gives a thread made with CLONE_VM none, whatever its creator
 * had.  Armed at a thread's first allocation, a thread that never
 * allocates had none (harden38's report).  So the thread starts in
 * thread_begin, which arms it and jumps to the program's start routine
 * (a sibling call: no frame of memcheck's is left under the routine, so
 * its stacks, the ones leak records and suppressions show, are bare's,
 * ending in start_thread).  First it puts the routine and its argument
 * back in the thread's descriptor (struct pthread's start_routine and
 * arg, where glibc's start_thread read thread_begin and the record):
 * glibc keeps the argument there for the thread's life, and the leak
 * scan, as valgrind's, finds a block only it points to reachable
 * (tests/prog/corpus/thread_nomalloc: a list handed to a thread that
 * dropped it was "definitely lost" under memcheck, reachable under
 * valgrind, before this).  The fields' offset is the one glibc exports
 * for libthread_db (_thread_db_pthread_start_routine: {bits, count,
 * offset}; arg follows it); both words are checked to hold what
 * pthread_create put there before they are written, so another C
 * library's layout is left alone.  That triple is read once, in
 * memcheck's own view of the C library's file where the RSS figures are
 * measured (ownread.c's mc_own_read): read where the program maps it,
 * at every thread's start, it faulted a 64 KiB block of the C library's
 * .rodata that a bare threaded program never maps (a program of four
 * threads under glibc: peak_rss and rss_end 1,544 KiB, bare 1,476).
 *
 * The routine and its argument reach the thread in a record of
 * start_recs, taken here and given back by the thread as it starts
 * (nothing allocated: memcheck never calls malloc for itself); where
 * every record is in use (that many threads created and not yet
 * running), the thread starts bare and is armed at its first
 * allocation, as before.  Where memcheck arms nothing (no handlers, the
 * program's own alternate stack in the main thread, a process left
 * out), the call only passes through.
 *
 * C11's thrd_create calls the C library's pthread_create inside it, not
 * through the name: it is wrapped the same way (thread_begin_c11: its
 * routine returns an int, which start_thread reads as the thread's
 * result).  Not armed: a SIGEV_THREAD timer's expiry's thread (the C
 * library makes it inside too) runs with every signal blocked (glibc
 * 2.36), so the kernel kills the process at a fault there whatever the
 * handler, bare as with memcheck; and a thread made by a raw clone(2)
 * until it allocates (nothing of memcheck's runs in it before, and the
 * kernel gives it no alternate stack).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <threads.h>

#include "internal.h"

typedef void *(*start_fn)(void *);
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, start_fn, void *);
typedef int (*thrd_create_fn)(thrd_t *, thrd_start_t, void *);

/* 4 KiB: a large array of .bss (bss-layout.sh), untouched in a program
 * that makes no thread. */
struct start_rec {
	_Atomic start_fn fn; /* NULL: free */
	void *arg;
};
static struct start_rec start_recs[256];
static _Atomic unsigned start_next;
static void *create_real; /* the C library's pthread_create */
static void *thrd_real;   /* its thrd_create */
/* The offset of start_routine in the C library's thread descriptor
 * plus 1, from its _thread_db_pthread_start_routine; -1: another
 * layout, or no such symbol; 0: not read yet. */
static _Atomic long start_field;

/* start_field, read (the head comment says where). */
static __attribute__((noinline, cold)) long start_field_read(void)
{
	const uint32_t *f = mc_sym_next("_thread_db_pthread_start_routine", NULL);
	uint32_t own[3]; /* {bits, count, offset} */
	if (f && mc_own_read_recording()) {
		mc_own_read(f, own, sizeof own);
		f = own;
	}
	long off = f && f[0] == 8 * sizeof(void *) && f[1] == 1 && f[2] % sizeof(void *) == 0
			   ? (long)f[2] + 1
			   : -1;
	atomic_store_explicit(&start_field, off, memory_order_relaxed);
	return off;
}

/* This thread's descriptor's start_routine and arg as bare's (the head
 * comment says why); begin: the routine memcheck gave in its place. */
static inline __attribute__((always_inline)) void descriptor_as_bare(struct start_rec *r, void *begin,
								     start_fn fn, void *arg)
{
	long off = atomic_load_explicit(&start_field, memory_order_relaxed);
	if (!off)
		off = start_field_read();
	if (off < 0)
		return;
	void **field = (void **)((char *)pthread_self() + off - 1);
	if (field[0] == begin && field[1] == (void *)r) {
		field[0] = (void *)fn;
		field[1] = arg;
	}
}

/* What a thread does as it starts, once for both kinds of start (one
 * copy in group 1t): its alternate stack armed, and the first thread of
 * a measured process reads the kernel's mark (footprint.c). */
static __attribute__((noinline)) void thread_started(void)
{
	mc_fatal_thread_start();
	if (__builtin_expect(atomic_load_explicit(&mc_fp_thread_observe, memory_order_relaxed), 0))
		mc_footprint_thread_observe();
}

/* The new thread's start: its routine and argument taken from r (the
 * record free again), its descriptor as bare's, its alternate stack
 * armed. */
static inline __attribute__((always_inline)) start_fn start_rec_open(struct start_rec *r,
									void *begin, void **arg)
{
	start_fn fn = atomic_load_explicit(&r->fn, memory_order_acquire);
	*arg = r->arg;
	descriptor_as_bare(r, begin, fn, *arg);
	r->arg = NULL; /* a root no more (start_rec_take) */
	atomic_store_explicit(&r->fn, NULL, memory_order_release);
	thread_started();
	return fn;
}

static void *thread_begin(void *p)
{
	void *arg;
	start_fn fn = start_rec_open(p, (void *)thread_begin, &arg);
	return fn(arg);
}

static int thread_begin_c11(void *p)
{
	void *arg;
	thrd_start_t fn = (thrd_start_t)(void (*)(void))start_rec_open(p, (void *)thread_begin_c11, &arg);
	return fn(arg);
}

/* A record's argument is the program's until its thread starts: bare,
 * the new thread's descriptor holds it (a root of the scan's, on the
 * thread's stack mapping), and a thread not yet run when the process
 * ends (made just before exit) would leave it definitely lost where
 * valgrind finds it still reachable.  So the records are a root
 * (roots.c), each argument cleared as its thread takes it. */
static struct start_rec *start_rec_take(start_fn fn, void *arg)
{
	unsigned n = MC_ARRAY_SIZE(start_recs);
	mc_roots_pending_starts(start_recs, sizeof start_recs);
	unsigned at = atomic_fetch_add_explicit(&start_next, 1, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++) {
		struct start_rec *r = &start_recs[(at + i) % n];
		start_fn none = NULL;
		if (atomic_compare_exchange_strong(&r->fn, &none, fn)) {
			r->arg = arg;
			return r;
		}
	}
	return NULL;
}

/* A record for a thread about to start fn(arg), or NULL: the thread
 * then starts as it is.  (A NULL routine, declared nonnull, passes
 * through: the thread faults as bare's does, and NULL marks a free
 * record.) */
static struct start_rec *start_rec_for(void *fn, void *arg)
{
	uintptr_t f = (uintptr_t)fn;
	__asm__("" : "+r"(f));
	return f && mc_fatal_threads_armed() ? start_rec_take((start_fn)fn, arg) : NULL;
}

/* The thread was not made: its record free again. */
static void start_rec_unused(struct start_rec *r)
{
	r->arg = NULL;
	atomic_store_explicit(&r->fn, NULL, memory_order_release);
}

MC_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, start_fn fn, void *arg)
{
	create_fn real = mc_sym_next_cached("pthread_create", &create_real);
	if (!real)
		return EAGAIN;
	struct start_rec *r = start_rec_for((void *)fn, arg);
	/* the new thread's DTV, allocated in there, is the program's
	 * pthread_create's: its stack stored without this frame (depot.c),
	 * and its entry for memcheck's TLS memcheck's, also where the
	 * thread starts bare (no record: MEMCHECK_FATAL_TIMEOUT=0 counted
	 * 16 bytes a thread more than valgrind, 1,650 against 1,570 for
	 * plain_joined 5) */
	mc_account_dtv_begin();
	int rc = r ? real(th, attr, thread_begin, r) : real(th, attr, fn, arg);
	mc_account_dtv_end();
	if (rc != 0 && r)
		start_rec_unused(r);
	return rc;
}

MC_API int thrd_create(thrd_t *th, thrd_start_t fn, void *arg)
{
	thrd_create_fn real = mc_sym_next_cached("thrd_create", &thrd_real);
	if (!real)
		return thrd_error;
	struct start_rec *r = start_rec_for((void *)fn, arg);
	mc_account_dtv_begin();
	int rc = r ? real(th, thread_begin_c11, r) : real(th, fn, arg);
	mc_account_dtv_end();
	if (rc != thrd_success && r)
		start_rec_unused(r);
	return rc;
}
