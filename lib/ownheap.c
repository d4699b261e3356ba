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
 * rarely, but at the exit of a large program libdw decodes line tables
 * of hundreds of thousands of rows (yaml-cpp's gtest binary: 458,704
 * rows of 70-100 bytes, then one array of 36.9 MB for them).  Blocks up
 * to 32 KiB come in size classes, four to each doubling (16, 32, 48,
 * 64, 80, 96, 112, 128, 160, ...: a block wastes an eighth of its size
 * at most, where power-of-two classes wasted up to half), each class
 * with a free list, new blocks from a bump pointer.  Larger blocks are
 * whole pages, as many as asked (power-of-two classes made that array a
 * block of 64 MiB), and when one is freed its pages are given back
 * (MADV_DONTNEED) and its range kept among the free extents, which
 * serve larger blocks of any size later (an array grown by realloc
 * leaves its old copies there).  One spin lock.  A block carries its
 * class and the offset to its start (for aligned blocks) in the 16
 * bytes before it.  The pages the bump pointer has passed are
 * memcheck's resident memory, made resident and counted as such
 * (footprint.c) a few pages at a time, doubling up to 64 KiB: populated
 * in one system call, not faulted in page by page (count_touched); a
 * free extent's pages are counted out when given back and in again
 * when a block takes them.
 *
 * When both are full (or the range cannot be reserved) the calls go to
 * the program's allocator again: mc_ownheap_alloc returns NULL with
 * errno 0 so that the caller can tell.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "internal.h"

#define MIN_SHIFT 4                 /* 16 bytes */
#define SMALL_MAX (32 * 1024)       /* larger blocks: whole pages (large) */
#define NCLASSES 40                 /* class_of(SMALL_MAX) + 1 */
#define LARGE_COUNTED 0xffffffffu   /* hdr.cls of a large block, its pages counted */
#define LARGE_UNCOUNTED 0xfffffffeu /* ... taken before footprint.c was hooked */
#define NEXTENTS 64                 /* free extents kept; more are left as address space */
#define HDR 16
#define CHUNK (64 * 1024)           /* counted as resident at a time, at most */
#define RESERVE (256ull << 20)      /* at most; less under a low RLIMIT_AS */
#define STATIC (256 * 1024)

struct hdr {
	uint32_t cls;                   /* size class, or LARGE_* */
	uint32_t off;                   /* bytes from the class block's start */
	uint64_t size;                  /* usable bytes from the pointer */
};
_Static_assert(sizeof(struct hdr) == HDR, "header size");

/* A range of whole pages freed by a large block: not resident. */
struct extent {
	uintptr_t lo;
	size_t len;
};

char mc_ownheap_static[STATIC] __attribute__((aligned(4096)));
MC_HOT uintptr_t mc_ownheap_lo, mc_ownheap_len;
MC_HOT uintptr_t mc_ownheap_span_lo = (uintptr_t)mc_ownheap_static, mc_ownheap_span_len = STATIC;
static uintptr_t bump = (uintptr_t)mc_ownheap_static;
static uintptr_t limit = (uintptr_t)mc_ownheap_static + STATIC;
static uintptr_t counted = (uintptr_t)mc_ownheap_static;
static void *free_list[NCLASSES];
static struct extent extents[NEXTENTS];
static int nextents;
static atomic_int lock;
static bool failed;                 /* reservation refused: never again */

static void take(void)
{
	mc_spin_lock(&lock);
}

static void give(void)
{
	atomic_store_explicit(&lock, 0, memory_order_release);
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

/* The class of a block of need bytes (header included), need <=
 * SMALL_MAX: 16-byte steps to 64, then four classes to each doubling
 * (2^k < need <= 2^(k+1) falls in the quarter (need - 1 - 2^k) >> (k - 2)). */
static unsigned class_of(size_t need)
{
	if (need <= 64)
		return (unsigned)((need + 15) >> 4) - 1;
	unsigned k = 63 - (unsigned)__builtin_clzll(need - 1);
	return 4 + (k - 6) * 4 + (unsigned)((need - 1 - ((size_t)1 << k)) >> (k - 2));
}

static size_t class_size(unsigned c)
{
	if (c < 4)
		return (size_t)(c + 1) << MIN_SHIFT;
	unsigned k = 6 + (c - 4) / 4, q = (c - 4) % 4;
	return ((size_t)1 << k) + ((size_t)(q + 1) << (k - 2));
}

/* len bytes at align from the bump pointer, the range reserved if the
 * arena has no room; 0 when neither has.  What alignment skips is
 * wasted (under a page, for a large block).  Lock held. */
static uintptr_t carve(size_t len, size_t align)
{
	for (int tries = 0; tries < 2; tries++) {
		uintptr_t at = (bump + align - 1) & ~(uintptr_t)(align - 1);
		if (at <= limit && len <= limit - at) {
			bump = at + len;
			count_touched();
			return at;
		}
		if (!reserve())
			break;
	}
	return 0;
}

/* A free extent for a large block of len bytes (whole pages), the
 * smallest that holds it, its front made resident and counted again;
 * 0 if none.  Lock held. */
static uintptr_t extent_take(size_t len, bool *counts)
{
	int best = -1;
	for (int i = 0; i < nextents; i++)
		if (extents[i].len >= len && (best < 0 || extents[i].len < extents[best].len))
			best = i;
	if (best < 0)
		return 0;
	uintptr_t at = extents[best].lo;
	extents[best].lo += len;
	extents[best].len -= len;
	if (!extents[best].len)
		extents[best] = extents[--nextents];
	mc_populate((void *)at, len);
	*counts = mc_own_hooked();
	if (*counts)
		mc_own_grow((int64_t)len);
	return at;
}

/* A large block's pages given back and its range kept, joined to the
 * free extents it touches; with no slot left, the range stays address
 * space only.  Lock held. */
static void extent_put(uintptr_t lo, size_t len, bool counts)
{
	int saved = errno;
	if (madvise((void *)lo, len, MADV_DONTNEED) != 0) {
		errno = saved;
		return; /* resident still: not reused, counted as it is */
	}
	errno = saved;
	if (counts && mc_own_hooked())
		mc_own_grow(-(int64_t)len);
	for (int i = 0; i < nextents;) {
		struct extent *e = &extents[i];
		if (e->lo + e->len == lo || lo + len == e->lo) {
			if (e->lo < lo)
				lo = e->lo;
			len += e->len;
			*e = extents[--nextents];
			continue; /* the one moved here may touch too */
		}
		i++;
	}
	if (nextents < NEXTENTS)
		extents[nextents++] = (struct extent){ lo, len };
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
	uint32_t cls;
	size_t csize;
	char *blk;
	take();
	if (need <= SMALL_MAX) {
		unsigned c = class_of(need);
		cls = c;
		csize = class_size(c);
		blk = free_list[c];
		if (blk)
			free_list[c] = *(void **)blk;
		else
			blk = (char *)carve(csize, 16);
	} else {
		csize = (need + 4095) & ~(size_t)4095;
		bool counts = false;
		blk = (char *)extent_take(csize, &counts);
		if (!blk) {
			blk = (char *)carve(csize, 4096);
			counts = mc_own_hooked();
		}
		cls = counts ? LARGE_COUNTED : LARGE_UNCOUNTED;
	}
	give();
	if (!blk) {
		errno = 0; /* not a failure: no room of our own */
		return NULL;
	}
	uintptr_t p = ((uintptr_t)blk + HDR + align - 1) & ~(uintptr_t)(align - 1);
	struct hdr *h = (struct hdr *)p - 1;
	h->cls = cls;
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
	/* under valgrind after memcheck's last work: the heap's memory is
	 * unaddressable to valgrind again, and the process ends (a block
	 * the C library frees at its freeres, which valgrind runs after the
	 * exit handlers) */
	if (mc_map_unhidden)
		return;
	struct hdr *h = (struct hdr *)p - 1;
	char *blk = (char *)p - h->off;
	uint32_t c = h->cls;
	take();
	if (c >= LARGE_UNCOUNTED) {
		extent_put((uintptr_t)blk, h->off + h->size, c == LARGE_COUNTED);
	} else {
		*(void **)blk = free_list[c];
		free_list[c] = blk;
	}
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
	atomic_store_explicit(&lock, 0, memory_order_relaxed);
}
