/*
 * mappings.c - the program's own memory mappings, roots of the scan.
 *
 * valgrind's leak check takes every readable and writable mapping of the
 * program for a root: a custom arena from mmap, shared memory, the
 * dynamic linker's own memory.  Under valgrind there is no allocator's
 * memory to leave out, since valgrind replaces the allocator; here the
 * allocator's arenas, free lists and caches hold stale addresses of freed
 * and reused blocks, and memcheck's tables hold every block's address,
 * so neither may be a root.  Which anonymous mapping is whose cannot be
 * read from /proc/self/maps, and not every allocator maps through a
 * function memcheck could wrap (glibc's malloc calls the C library's
 * internal mmap, tcmalloc makes the system call itself).  So the roots
 * are the mappings the program itself makes: memcheck wraps mmap,
 * mmap64, mremap, munmap, shmat, shmdt, sbrk and brk, and records each mapping
 * whose caller is neither the allocator's object nor memcheck (nor code
 * memcheck runs, such as libdw).  The scan intersects those ranges with
 * what /proc/self/maps shows readable and writable then (maps.c), so
 * mprotect and a munmap by a system call need no wrapping.
 *
 * Traps: the wrappers forward to the C library's own functions, resolved
 * with the malloc family (mmap is what an allocator calls while it
 * starts: nothing may be looked up then); before that they make the
 * system call.  The table is memcheck's own memory, grown by the system
 * call (mc_map's callers may hold this lock), under a lock the fork
 * handlers take.  A change that finds the lock held by a fork is queued,
 * not waited for, and the fork's own handlers apply it: an allocator may
 * map memory with its lock held (jemalloc does), and its fork handler,
 * when it runs after memcheck's (an allocator started before memcheck),
 * waits for that lock while memcheck's holds this one: the program hung
 * (tests/test_fork.c, the allocator preloaded first).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* ---- the real functions ---------------------------------------------- */

MC_HOT static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
MC_HOT static int (*real_munmap)(void *, size_t);
MC_HOT static void *(*real_mremap)(void *, size_t, size_t, int, ...);
MC_HOT static void *(*real_shmat)(int, const void *, int);
MC_HOT static int (*real_shmdt)(const void *);
MC_HOT static void *(*real_sbrk)(intptr_t);
MC_HOT static int (*real_brk)(void *);

void mc_mappings_resolve(void *(*lookup)(const char *))
{
	real_mmap = lookup("mmap");
	real_munmap = lookup("munmap");
	real_mremap = lookup("mremap");
	real_shmat = lookup("shmat");
	real_shmdt = lookup("shmdt");
	real_sbrk = lookup("sbrk");
	real_brk = lookup("brk");
}

/* ---- the program's ranges -------------------------------------------- */

static struct mc_prog_map *ranges;   /* sorted, disjoint */
static size_t nranges, cap;
static atomic_flag lock = ATOMIC_FLAG_INIT;

static bool try_take(void)
{
	return !atomic_flag_test_and_set_explicit(&lock, memory_order_acquire);
}

static void take(void)
{
	while (!try_take())
		sched_yield();
}

static void give(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

/* Room for two more entries (an add after a cut that split a range),
 * or false.  Lock held. */
static bool room(void)
{
	/* not a root if this fails: lost blocks may be reported */
	return mc_grow((void **)&ranges, &cap, nranges + 1, sizeof *ranges, 256);
}

/* ---- alternate stacks in the program's mappings ----------------------
 * A handler that ran on an alternate stack the program mapped left its
 * frames there; valgrind marks each frame's memory inaccessible as the
 * handler returns and never reads it again, so a block only a dead
 * handler frame pointed to is lost.  threads.c names the stack a
 * thread has now (mc_threads_dead_altstack); a stack the thread replaced
 * (a library's, then the program's), disabled or left behind when it
 * exited (a pool of stacks reused by the next thread) was read whole
 * as the program's mapping: the block was still reachable.  So each
 * range a handler ran on is noted here (signals.c's trampoline, only
 * where it lies inside one mapping of the program's table) until any
 * change to the table overlaps it (munmap, mremap, mmap over it: the
 * memory may then be anything), and roots.c cuts every noted range no
 * thread's stack pointer lies in (tests/prog/corpus/altstack.c).  A few
 * ranges: past them, a stack is read whole, as before. */
#define RAN_MAX 8
static struct mc_prog_map ran[RAN_MAX];
static size_t nran;

/* Lock held: the notes [lo, hi) overlaps go. */
static __attribute__((noinline, cold)) void ran_cut(uintptr_t lo, uintptr_t hi)
{
	size_t out = 0;
	for (size_t i = 0; i < nran; i++)
		if (ran[i].hi <= lo || ran[i].lo >= hi)
			ran[out++] = ran[i];
	nran = out;
}

/* From a signal handler (signals.c): the lock only tried (the code the
 * handler interrupted may hold it; a fork's window too): busy, no note. */
void mc_mappings_stack_ran(uintptr_t lo, uintptr_t hi)
{
	if (!try_take())
		return;
	bool inside = false, known = false;
	for (size_t i = 0; i < nranges && !inside; i++)
		inside = ranges[i].lo <= lo && hi <= ranges[i].hi;
	for (size_t i = 0; i < nran && !known; i++)
		known = ran[i].lo == lo && ran[i].hi == hi;
	if (inside && !known && nran < RAN_MAX)
		ran[nran++] = (struct mc_prog_map){ lo, hi, 0 };
	give();
}

size_t mc_mappings_stacks_ran(struct mc_prog_map *out, size_t max)
{
	size_t n = 0;
	if (!try_take())
		return 0;
	for (; n < nran && n < max; n++)
		out[n] = ran[n];
	give();
	return n;
}

/* Remove [lo, hi) from the table: whole ranges, or the parts of those
 * it overlaps.  Lock held. */
static void cut(uintptr_t lo, uintptr_t hi)
{
	if (unlikely(nran))
		ran_cut(lo, hi);
	size_t out = 0, nranges_before = nranges;
	struct mc_prog_map tail = { 0, 0, 0 };
	for (size_t i = 0; i < nranges; i++) {
		struct mc_prog_map r = ranges[i];
		if (r.hi <= lo || r.lo >= hi) {
			ranges[out++] = r;
			continue;
		}
		if (r.lo < lo)
			ranges[out++] = (struct mc_prog_map){ r.lo, lo, r.object };
		if (r.hi > hi)
			tail = (struct mc_prog_map){ hi, r.hi, r.object }; /* at most one, the last */
	}
	nranges = out;
	if (tail.hi && (out < nranges_before || room())) {
		/* Cutting one range in two takes one more entry, unless a
		 * whole range went. */
		size_t i = nranges;
		while (i > 0 && ranges[i - 1].lo > tail.lo) {
			ranges[i] = ranges[i - 1];
			i--;
		}
		ranges[i] = tail;
		nranges++;
	}
}

/* Add [lo, hi), made by code of the object at base object, replacing
 * what it overlaps.  Lock held. */
static void add(uintptr_t lo, uintptr_t hi, uintptr_t object)
{
	if (!room())
		return;
	cut(lo, hi);
	size_t i = nranges;
	while (i > 0 && ranges[i - 1].lo > lo) {
		ranges[i] = ranges[i - 1];
		i--;
	}
	ranges[i] = (struct mc_prog_map){ lo, hi, object };
	nranges++;
}

static bool in_table(uintptr_t lo, uintptr_t hi, uintptr_t *object)
{
	for (size_t i = 0; i < nranges; i++) {
		if (ranges[i].lo < hi && ranges[i].hi > lo) {
			*object = ranges[i].object;
			return true;
		}
	}
	return false;
}


/* ---- changes, made at once or queued during a fork ------------------- */

/* What a wrapper does to the table, as one value a queue can hold. */
enum change_kind { CH_ADD, CH_CUT, CH_MOVE, CH_DETACH };
struct change {
	enum change_kind kind;
	bool keep_old;              /* CH_MOVE: MREMAP_DONTUNMAP */
	uintptr_t lo, hi, object;   /* CH_MOVE, CH_DETACH: the old range, lo alone */
	uintptr_t to_lo, to_hi;     /* CH_MOVE: the new one */
};

/* Lock held. */
static void apply(const struct change *c)
{
	uintptr_t object = c->object;
	switch (c->kind) {
	case CH_ADD:
		add(c->lo, c->hi, object);
		break;
	case CH_CUT:
		cut(c->lo, c->hi);
		break;
	case CH_MOVE: {
		/* A moved or resized mapping stays the program's if it was. */
		bool ours = in_table(c->lo, c->hi > c->lo ? c->hi : c->lo + 4096, &object);
		if (!c->keep_old)
			cut(c->lo, c->hi);
		if (ours)
			add(c->to_lo, c->to_hi, object);
		else
			cut(c->to_lo, c->to_hi);
		break;
	}
	case CH_DETACH:
		/* shmdt takes no length: the range that starts at lo goes. */
		for (size_t i = 0; i < nranges; i++) {
			if (ranges[i].lo == c->lo) {
				cut(ranges[i].lo, ranges[i].hi);
				break;
			}
		}
		break;
	}
}

/* The changes made while a fork held the lock.  queue_state: bit 0 set
 * from the fork's first handler to its last; above it, how many slots
 * were taken.  A slot's ready flag is set once it is written: a thread
 * preempted between the two is waited for by the parent, and its change
 * is not the child's (the child does not have that thread). */
#define QUEUED 64
static struct {
	struct change c;
	atomic_bool ready;
} queue[QUEUED];
static atomic_uint queue_state;

/* Into the queue, if a fork holds the lock and there is room (past 64
 * changes in one fork the caller waits, as all did before). */
static bool enqueue(const struct change *c)
{
	unsigned s = atomic_load_explicit(&queue_state, memory_order_acquire);
	do {
		if (!(s & 1) || (s >> 1) >= QUEUED)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&queue_state, &s, s + 2, memory_order_acq_rel,
							memory_order_acquire));
	unsigned i = s >> 1;
	queue[i].c = *c;
	atomic_store_explicit(&queue[i].ready, true, memory_order_release);
	return true;
}

static void change(const struct change *c)
{
	int saved = errno;
	for (;;) {
		if (try_take()) {
			apply(c);
			give();
			break;
		}
		if (enqueue(c))
			break;
		sched_yield();
	}
	errno = saved;
}

/* Is this call the program's?  Not while memcheck itself works (libdw's
 * mappings), not from memcheck's code.  Whether the caller is the
 * allocator is decided at scan time, from the object recorded with the
 * range: an allocator that comes first maps memory before memcheck knows
 * which object serves malloc. */
static bool programs_call(const void *caller)
{
	return !mc_in_hook && (uintptr_t)caller - mc_text_lo >= mc_text_len;
}

/* A program left out at start-up (life.c, mc_pass) is never scanned:
 * none of its mappings is noted, neither the table nor its lock read.
 * Under jemalloc, whose arenas come from the C library's mmap (this
 * wrapper), each left-out process read the table's length, a page of
 * libmemcheck's .bss faulted in for nothing (tests/test_shortexit.c's
 * left_out_bss_untouched).  A mapping made before the verdict (an
 * allocator that starts first) is noted as before; the flag is never
 * cleared, and a fork's child inherits it. */
static inline bool left_out(void)
{
	return atomic_load_explicit(&mc_pass, memory_order_relaxed) != 0;
}

/* [lo, hi), made by caller: the program's, or a cut. */
static void note_range(uintptr_t lo, uintptr_t hi, const void *caller)
{
	bool mine = programs_call(caller);
	uintptr_t object = mine ? (uintptr_t)mc_object_base(caller, NULL) : 0;
	/* Once the allocator is known, its mappings are not kept at all. */
	static uintptr_t alloc;
	if (!alloc && mc_real.malloc)
		alloc = (uintptr_t)mc_object_base((const void *)mc_real.malloc, NULL);
	if (alloc && object == alloc)
		mine = false;
	/* not the program's: a cut, for MAP_FIXED over ours */
	change(&(struct change){ .kind = mine ? CH_ADD : CH_CUT, .lo = lo, .hi = hi,
				 .object = object });
}

static void note_map(void *p, size_t len, const void *caller)
{
	if (p == MAP_FAILED || !len || left_out())
		return;
	note_range((uintptr_t)p, (uintptr_t)p + mc_page_round(len), caller);
}

/* ---- the wrappers ---------------------------------------------------- */

/* Before memcheck has looked the C library's functions up, the system
 * call, with the C library's check of the offset.  Never a look-up from
 * here: an allocator that comes first maps memory while it starts, and a
 * look-up would call its malloc again. */
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (off & 4095) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	/* the system call itself: the program's mapping, not memcheck's
	 * (mc_sys_mmap counts its bytes as memcheck's, rlimits.c), made as
	 * the program made it, whatever its seccomp filter says */
	long r = mc_seccomp_raw(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);
	return r == -1 ? MAP_FAILED : (void *)r;
}

MC_API void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = real_mmap ? real_mmap(addr, len, prot, flags, fd, off)
			    : sys_mmap(addr, len, prot, flags, fd, off);
	note_map(p, len, __builtin_return_address(0));
	return p;
}

MC_API void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

MC_API int munmap(void *addr, size_t len)
{
	/* the RSS before the program's release (footprint.c): the kernel's
	 * mark taken at it may read the peak low */
	if (!left_out() && __builtin_expect(mc_fp_releases, 0))
		mc_footprint_release(len);
	int rc = real_munmap ? real_munmap(addr, len)
			     : (int)mc_seccomp_raw(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0);
	if (rc == 0 && len && !left_out())
		change(&(struct change){ .kind = CH_CUT, .lo = (uintptr_t)addr,
					 .hi = (uintptr_t)addr + mc_page_round(len) });
	return rc;
}

/* A moved or resized mapping stays the program's if it was; growing
 * one of the allocator's (mremap is how glibc's realloc grows a large
 * block) does not make it the program's. */
MC_API void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...)
{
	void *to = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		to = va_arg(ap, void *);
		va_end(ap);
	}
	void *p = real_mremap ? real_mremap(old, oldlen, newlen, flags, to)
			      : (void *)mc_seccomp_raw(SYS_mremap, (long)old, (long)oldlen,
							       (long)newlen, flags, (long)to, 0);
	if (p != MAP_FAILED && !left_out())
		change(&(struct change){ .kind = CH_MOVE, .keep_old = flags & MREMAP_DONTUNMAP,
					 .lo = (uintptr_t)old,
					 .hi = (uintptr_t)old + mc_page_round(oldlen),
					 .to_lo = (uintptr_t)p,
					 .to_hi = (uintptr_t)p + mc_page_round(newlen) });
	return p;
}

MC_API void *shmat(int id, const void *addr, int flags)
{
	void *p = real_shmat ? real_shmat(id, addr, flags)
			     : (void *)mc_seccomp_raw(SYS_shmat, id, (long)addr, flags, 0, 0, 0);
	if (p != (void *)-1 && !left_out()) {
		int saved = errno;
		struct shmid_ds ds;
		if (shmctl(id, IPC_STAT, &ds) == 0)
			note_map(p, ds.shm_segsz, __builtin_return_address(0));
		errno = saved;
	}
	return p;
}

/* shmdt takes no length: the range that starts at addr goes. */
MC_API int shmdt(const void *addr)
{
	int rc = real_shmdt ? real_shmdt(addr)
			    : (int)mc_seccomp_raw(SYS_shmdt, (long)addr, 0, 0, 0, 0, 0);
	if (rc == 0 && !left_out())
		change(&(struct change){ .kind = CH_DETACH, .lo = (uintptr_t)addr });
	return rc;
}

/* ---- the break --------------------------------------------------------
 * Memory the program takes from the break itself (sbrk, brk: an arena
 * of its own, an embedded allocator's morecore) is a root as valgrind's
 * brk segment is: a block only a word there points to is still
 * reachable (tests/prog/plain_leak_places.c, definitely lost before).
 * glibc's malloc grows its heap by the C library's internal __sbrk, past
 * these wrappers; an allocator that calls sbrk (tcmalloc's system
 * allocator, in every process it serves; jemalloc's dss) is its
 * object's, not kept, as its mmaps.  The range is the words between the
 * old break and the new (sbrk's increments need not be words).  The next
 * definition (the C library's, or tcmalloc's, which wraps it) is found
 * with the mmap family's (life.c's next_names); before, while an
 * allocator that comes first starts (jemalloc asks sbrk(0)), the C
 * library's __sbrk, no look-up (a look-up of its own at tcmalloc's first
 * sbrk ran code from one more 64 KiB block in every tcmalloc process:
 * test_codeblocks). */
extern void *__sbrk(intptr_t increment);

static void note_break(uintptr_t was, uintptr_t now, const void *caller)
{
	if (was == now)
		return;
	uintptr_t lo = was < now ? was : now, hi = was < now ? now : was;
	lo = (lo + 7) & ~(uintptr_t)7;
	hi &= ~(uintptr_t)7;
	if (was > now)
		change(&(struct change){ .kind = CH_CUT, .lo = lo, .hi = hi });
	else if (lo < hi)
		note_range(lo, hi, caller);
}

MC_API void *sbrk(intptr_t increment)
{
	void *p = real_sbrk ? real_sbrk(increment) : __sbrk(increment);
	if (p != (void *)-1 && increment && !left_out()) {
		int saved = errno;
		note_break((uintptr_t)p, (uintptr_t)p + (uintptr_t)increment,
			   __builtin_return_address(0));
		errno = saved;
	}
	return p;
}

MC_API int brk(void *addr)
{
	void *was = __sbrk(0);
	int rc;
	if (real_brk)
		rc = real_brk(addr);
	else
		rc = __sbrk((intptr_t)((uintptr_t)addr - (uintptr_t)was)) == (void *)-1 ? -1 : 0;
	if (rc == 0 && was != (void *)-1 && !left_out()) {
		int saved = errno;
		note_break((uintptr_t)was, (uintptr_t)addr, __builtin_return_address(0));
		errno = saved;
	}
	return rc;
}

/* fork (life.c's handlers): the child must not inherit the lock taken.
 * From here to the postfork, a change that finds the lock held is
 * queued (enqueue), and applied here, in the parent and in the child. */
void mc_mappings_prefork(void)
{
	atomic_fetch_or_explicit(&queue_state, 1, memory_order_acq_rel);
	take();
}

void mc_mappings_postfork(bool child)
{
	/* No slot is taken after this; every one taken is applied. */
	unsigned n = atomic_exchange_explicit(&queue_state, 0, memory_order_acq_rel) >> 1;
	for (unsigned i = 0; i < n && i < QUEUED; i++) {
		while (!child && !atomic_load_explicit(&queue[i].ready, memory_order_acquire))
			sched_yield();
		if (atomic_load_explicit(&queue[i].ready, memory_order_acquire))
			apply(&queue[i].c);
		atomic_store_explicit(&queue[i].ready, false, memory_order_relaxed);
	}
	give();
}

/* A copy of the table, taken before the scan stops other threads (one
 * of them may hold the lock). */
bool mc_mappings_copy(struct mc_prog_maps *out)
{
	memset(out, 0, sizeof *out);
	uintptr_t alloc = mc_real.malloc ? (uintptr_t)mc_object_base((void *)mc_real.malloc, NULL) : 0;
	take();
	size_t n = 0, ncap = nranges;
	struct mc_prog_map *v = ncap ? mc_map(ncap * sizeof *v) : NULL;
	for (size_t i = 0; v && i < nranges; i++)
		if (!alloc || ranges[i].object != alloc)
			v[n++] = ranges[i];
	give();
	if (ncap && !v)
		return false;
	out->v = v;
	out->n = n;
	out->cap = ncap;
	return true;
}

void mc_prog_maps_free(struct mc_prog_maps *r)
{
	if (r->v)
		mc_unmap(r->v, r->cap * sizeof *r->v);
	memset(r, 0, sizeof *r);
}
