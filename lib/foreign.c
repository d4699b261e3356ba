/*
 * foreign.c - blocks that a library memcheck calls from inside its hooks
 * allocates there and frees later, outside them.
 *
 * Inside a hook the recursion guard is up, so the library's allocations
 * pass straight to the allocator, unseen.  libunwind (MEMCHECK_UNWINDER=
 * libunwind) is loaded with dlopen: its thread-local data is the C
 * library's dynamic TLS, which __tls_get_addr allocates with malloc at
 * the thread's first unwind, inside the hook, and which the C library
 * frees when the thread's stack is reused, outside it.  memcheck then
 * saw a free of a block it never saw allocated, or, where the address had
 * held a block the program freed, a double free: the block was withheld
 * from the allocator and the region failed (178-622 a run of a threaded
 * program).
 *
 * So while a thread runs such a library (mc_self.foreign), the blocks the
 * allocator hands it are noted here, and a free or realloc memcheck does
 * not know asks here first: a noted block is forgotten and passed on,
 * unreported.  Notes are rare (a few a thread), so one set under a spin
 * lock does; the count lets every other free skip it.
 */
#include <stdatomic.h>

#include "internal.h"

#define TOMB ((uintptr_t)1) /* a forgotten entry, until the next rehash */

static uintptr_t *set;     /* open addressing, linear probing, mmap'd */
static size_t cap, used;   /* used: entries and tombstones */
static atomic_flag lock = ATOMIC_FLAG_INIT;
_Atomic size_t mc_foreign_count; /* entries noted and not forgotten */

static void take(void)
{
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void give(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

static size_t home(uintptr_t p, size_t n)
{
	return (size_t)((p * 0x9e3779b97f4a7c15ull) >> 32) & (n - 1);
}

/* The set rebuilt at n slots, without tombstones; false if it cannot be
 * mapped.  Under the lock. */
static bool rebuild(size_t n)
{
	uintptr_t *s = mc_map(n * sizeof *s);
	if (!s)
		return false;
	size_t live = 0;
	for (size_t i = 0; i < cap; i++) {
		if (set[i] <= TOMB)
			continue;
		size_t j = home(set[i], n);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = set[i];
		live++;
	}
	mc_unmap(set, cap * sizeof *set);
	set = s;
	cap = n;
	used = live;
	return true;
}

void mc_foreign_note(void *p)
{
	if ((uintptr_t)p <= TOMB)
		return;
	take();
	size_t live = atomic_load_explicit(&mc_foreign_count, memory_order_relaxed);
	size_t n = 64;
	while (n < live * 4)
		n *= 2;
	if ((used + 1) * 2 > cap && !rebuild(n)) {
		give();
		return; /* no memory: its free will be reported */
	}
	size_t j = home((uintptr_t)p, cap);
	while (set[j] > TOMB && set[j] != (uintptr_t)p)
		j = (j + 1) & (cap - 1);
	if (set[j] != (uintptr_t)p) {
		if (!set[j])
			used++;
		set[j] = (uintptr_t)p;
		atomic_fetch_add_explicit(&mc_foreign_count, 1, memory_order_relaxed);
	}
	give();
}

bool mc_foreign_forget(void *p)
{
	if (!atomic_load_explicit(&mc_foreign_count, memory_order_relaxed) ||
	    (uintptr_t)p <= TOMB)
		return false;
	bool found = false;
	take();
	for (size_t j = cap ? home((uintptr_t)p, cap) : 0, k = 0; k < cap && set[j];
	     j = (j + 1) & (cap - 1), k++) {
		if (set[j] == (uintptr_t)p) {
			set[j] = TOMB;
			atomic_fetch_sub_explicit(&mc_foreign_count, 1, memory_order_relaxed);
			found = true;
			break;
		}
	}
	give();
	return found;
}

void mc_foreign_lock(void)
{
	take();
}

void mc_foreign_unlock(void)
{
	give();
}

void mc_foreign_after_fork_child(void)
{
	atomic_flag_clear(&lock);
}
