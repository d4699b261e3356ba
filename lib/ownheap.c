/*
 * ownheap.c - the heap that serves memcheck's own calls to malloc.
 *
 * memcheck never calls malloc itself, but the code it runs does: dlsym
 * before the allocator is known, pthread_getattr_np for a new thread's
 * stack, libdw while it symbolizes a report, libunwind.  Those calls come
 * with memcheck's recursion guard held, and they used to pass straight to
 * the program's allocator.  That changed the allocator's state (its
 * heaps then hold memcheck's blocks among the program's, and reuse
 * their pages differently), put memcheck's memory into the program's
 * figures (retained bytes, RSS), and a block allocated with the guard
 * held and freed without it (libunwind's caches) looked like a free of
 * an unknown pointer.
 *
 * So those calls are served here, and any free, realloc or
 * malloc_usable_size of one of its blocks comes back here, guard or not;
 * a pointer outside its memory is never ours.  Its memory is 256 KiB of
 * libmemcheck's own .bss (start-up and most processes need no more: no
 * address space is reserved for them, which a program that lowers
 * RLIMIT_AS would lose), then, once that is used up (libdw symbolizing
 * a large program), a range of address space reserved then: 256 MiB,
 * or an eighth of RLIMIT_AS at most.  The two range tests are the ones
 * interpose.c makes on every free (mc_ownheap_has).
 *
 * A small allocator is enough: memcheck's callers allocate little and
 * rarely.  Power-of-two size classes from 16 bytes, each with a free
 * list; new blocks come from a bump pointer; one spin lock.  A block
 * carries its class and the offset to its start (for aligned blocks) in
 * the 16 bytes before it.  The pages the bump pointers have passed are
 * memcheck's resident memory, made resident and counted as such
 * (footprint.c) a few pages at a time, doubling up to 64 KiB: populated
 * in one system call, not faulted in page by page (count_touched).
 *
 * When both are full (or the range cannot be reserved) the calls go to
 * the program's allocator again: mc_ownheap_alloc returns NULL with
 * errno 0 so that the caller can tell.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"

#define MIN_SHIFT 4                 /* 16 bytes */
#define NCLASSES 40                 /* up to 2^43: never reached */
#define HDR 16
#define CHUNK (64 * 1024)           /* counted as resident at a time, at most */
#define RESERVE (256ull << 20)      /* at most; less under a low RLIMIT_AS */
#define STATIC (256 * 1024)

struct hdr {
	uint32_t cls;                   /* size class */
	uint32_t off;                   /* bytes from the class block's start */
	uint64_t size;                  /* usable bytes from the pointer */
};
_Static_assert(sizeof(struct hdr) == HDR, "header size");

char mc_ownheap_static[STATIC] __attribute__((aligned(4096)));
MC_HOT uintptr_t mc_ownheap_lo, mc_ownheap_len;
MC_HOT uintptr_t mc_ownheap_span_lo = (uintptr_t)mc_ownheap_static, mc_ownheap_span_len = STATIC;
static uintptr_t bump = (uintptr_t)mc_ownheap_static;
static uintptr_t limit = (uintptr_t)mc_ownheap_static + STATIC;
static uintptr_t counted = (uintptr_t)mc_ownheap_static;
static void *free_list[NCLASSES];
static atomic_flag lock = ATOMIC_FLAG_INIT;
static bool failed;                 /* reservation refused: never again */

static void take(void)
{
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void give(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

/* The static arena is used up: reserve the range, 256 MiB of address
 * space backed as touched, an eighth of RLIMIT_AS at most, so that a
 * program with a low limit keeps its address space.  Lock held. */
static bool reserve(void)
{
	if (mc_ownheap_len || failed)
		return false;
	size_t len = RESERVE;
	struct rlimit rl;
	if (mc_sys_getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 8 < len)
		len = (size_t)(rl.rlim_cur / 8) & ~(size_t)(CHUNK - 1);
	/* mc_map_reserve: under valgrind the range is also hidden from its
	 * leak check, which would otherwise read all of it at each. */
	void *p = len ? mc_map_reserve(len) : NULL;
	if (!p) {
		failed = true;
		return false;
	}
	bump = counted = (uintptr_t)p;
	limit = (uintptr_t)p + len;
	__atomic_store_n(&mc_ownheap_len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&mc_ownheap_lo, (uintptr_t)p, __ATOMIC_RELEASE);
	/* The span (internal.h) widened to hold both; each store leaves it
	 * holding the static arena (the range has no block yet). */
	uintptr_t s_lo = (uintptr_t)mc_ownheap_static, s_hi = s_lo + STATIC;
	uintptr_t lo = (uintptr_t)p < s_lo ? (uintptr_t)p : s_lo;
	uintptr_t hi = (uintptr_t)p + len > s_hi ? (uintptr_t)p + len : s_hi;
	__atomic_store_n(&mc_ownheap_span_len, hi - lo, __ATOMIC_RELAXED);
	__atomic_store_n(&mc_ownheap_span_lo, lo, __ATOMIC_RELEASE);
	return true;
}

/* The pages passed so far that footprint.c has not been told of.  Lock
 * held; the call it makes takes footprint.c's lock, never ours.  The
 * pages counted as resident are made so in one call (mc_populate): its
 * callers (libdw above all) go on to write page after page of it, and
 * each first touch would be a page fault of its own (41 of them, about
 * 1 ms, in a measured /bin/date's exit), where populating 16 pages costs
 * about 15 us.  The count is then exact, not a bound.  How far ahead:
 * as far again as the arena has been counted so far, a page at least
 * and CHUNK at most.  A measured process's one call at start-up (the
 * probe's one byte, life.c) counts one page, not the eight to the next
 * 64 KiB boundary it was populating (a page populated ~1.2 us here);
 * libdw's 41 pages take five calls, not one. */
static void count_touched(void)
{
	uintptr_t need = (bump + 4095) & ~(uintptr_t)4095;
	if (need <= counted || !mc_own_hooked())
		return;
	uintptr_t lo = mc_ownheap_len ? mc_ownheap_lo : (uintptr_t)mc_ownheap_static;
	uintptr_t step = mc_ahead(counted - lo, CHUNK);
	uintptr_t end = counted + step > need ? counted + step : need;
	if (end > limit)
		end = limit;
	mc_populate((void *)counted, end - counted);
	mc_own_grow((int64_t)(end - counted));
	counted = end;
}

static int class_of(size_t n)
{
	int c = 0;
	while (((size_t)1 << (c + MIN_SHIFT)) < n)
		c++;
	return c;
}

void *mc_ownheap_alloc(size_t align, size_t n, bool zero)
{
	int saved = errno;
	if (align < 16)
		align = 16;
	/* Room for the header and for aligning past it. */
	size_t need;
	if (n > RESERVE || __builtin_add_overflow(n, HDR + align - 16, &need)) {
		errno = ENOMEM;
		return NULL;
	}
	int c = class_of(need);
	size_t csize = (size_t)1 << (c + MIN_SHIFT);
	take();
	char *blk = free_list[c];
	if (blk) {
		free_list[c] = *(void **)blk;
	} else if (bump + csize <= limit || (reserve() && bump + csize <= limit)) {
		blk = (char *)bump;
		bump += csize;
		count_touched();
	} else {
		give();
		errno = 0; /* not a failure: no room of our own */
		return NULL;
	}
	give();
	uintptr_t p = ((uintptr_t)blk + HDR + align - 1) & ~(uintptr_t)(align - 1);
	struct hdr *h = (struct hdr *)p - 1;
	h->cls = (uint32_t)c;
	h->off = (uint32_t)(p - (uintptr_t)blk);
	h->size = csize - h->off;
	if (zero)
		memset((void *)p, 0, n);
	errno = saved;
	return (void *)p;
}

size_t mc_ownheap_size(const void *p)
{
	return ((const struct hdr *)p - 1)->size;
}

void mc_ownheap_free(void *p)
{
	struct hdr *h = (struct hdr *)p - 1;
	char *blk = (char *)p - h->off;
	int c = (int)h->cls;
	take();
	*(void **)blk = free_list[c];
	free_list[c] = blk;
	give();
}

void *mc_ownheap_realloc(void *p, size_t n)
{
	if (p && n == 0) {
		mc_ownheap_free(p); /* as glibc's realloc(p, 0) */
		return NULL;
	}
	if (p && n <= mc_ownheap_size(p))
		return p;
	void *q = mc_ownheap_alloc(16, n, false);
	if (q && p) {
		memcpy(q, p, mc_ownheap_size(p));
		mc_ownheap_free(p);
	}
	return q;
}

/* Fork: the child gets the heap as it was, lock free. */
void mc_ownheap_lock(void)
{
	take();
}

void mc_ownheap_unlock(void)
{
	give();
}

void mc_ownheap_after_fork_child(void)
{
	atomic_flag_clear(&lock);
}
