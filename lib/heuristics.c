/*
 * heuristics.c - valgrind's interior-pointer heuristics: a pointer into a
 * block that is not its start, from memory the scan has reached, which
 * valgrind's leak check (--leak-check-heuristics=all, its default) takes
 * as keeping the block reachable, because C++ and a few libraries keep
 * blocks that way on purpose:
 *
 *  - stdstring: the characters of a pre-C++11 (copy-on-write) std::string,
 *    three words into a block laid out as length, capacity, reference
 *    count, then capacity + 1 bytes;
 *  - length64: a pointer 8 bytes into a block whose first word is the
 *    rest's length (SQLite's allocator keeps every block's size so);
 *  - newarray: a pointer one word into a block whose first word is a
 *    count that divides the rest (new[] of a type with a destructor: the
 *    array's element count ahead of its elements);
 *  - multipleinheritance: a pointer to a base class's part of an object,
 *    where both that part and the block's start hold a vtable's address.
 *
 * Without them, every such block was possibly lost here where valgrind
 * calls it still reachable, and a C++ program that keeps an array of
 * objects with destructors, or an object by a second base class, failed
 * under memcheck and passed under valgrind.  MEMCHECK_LEAK_HEURISTICS
 * chooses, as valgrind's option does.
 *
 * Which one applied is kept per block (scan.c), as valgrind keeps it,
 * for valgrind's LEAK SUMMARY lines "of which reachable via heuristic"
 * (vgtext.c), which count such blocks apart; they are still reachable.
 *
 * A vtable's address is told by where it points: into a loaded object
 * (a vtable lies in its read-only data), at a word that itself points
 * into a loaded object (the first virtual function, or
 * __cxa_pure_virtual).  _dl_find_object answers without a lock, which the
 * scan needs: the other threads are held still, maybe inside the dynamic
 * linker.  The block's words read are the program's own, live.
 */
#include <link.h>
#include <stdint.h>

#include "internal.h"

enum {
	H_STDSTRING = 1 << 0,
	H_LENGTH64 = 1 << 1,
	H_NEWARRAY = 1 << 2,
	H_MULTIPLE = 1 << 3,
};

#define W sizeof(uintptr_t)
#define PAGE 4096

static bool in_object(uintptr_t a)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	return _dl_find_object((void *)a, &fo) == 0;
#else
	(void)a;
	return false; /* no lock-free way: the heuristic does not apply */
#endif
}

/* An address a vtable pointer holds: word-aligned, above page 0, into a
 * loaded object, where the first entry also points into one. */
__attribute__((no_sanitize_address))
static bool vtable_address(uintptr_t a)
{
	return !(a % W) && a >= PAGE && in_object(a) && in_object(*(const uintptr_t *)a);
}

/* Tried in valgrind's order, which decides the name a block counts
 * under: on a 64-bit machine every length64 block is a newarray one
 * too. */
__attribute__((no_sanitize_address))
int mc_heuristic_reaches(uintptr_t lo, uint64_t size, uintptr_t w)
{
	unsigned set = (unsigned)mc_opt.leak_heuristics;
	const uintptr_t *b = (const uintptr_t *)lo;
	uintptr_t off = w - lo;
	if ((set & H_STDSTRING) && off == 3 * W && size >= 3 * W + 1) {
		uintptr_t length = b[0], capacity = b[1];
		if (3 * W + capacity + 1 == size && length <= capacity)
			return MC_HEUR_STDSTRING;
	}
	if (off == W && size >= 2 * W) {
		uintptr_t first = b[0];
		if ((set & H_LENGTH64) && first && first == size - W)
			return MC_HEUR_LENGTH64;
		if ((set & H_NEWARRAY) && first && (size - W) % first == 0)
			return MC_HEUR_NEWARRAY;
	}
	if ((set & H_MULTIPLE) && !(w % W) && off + W <= size && size >= W &&
	    vtable_address(*(const uintptr_t *)w) && vtable_address(b[0]))
		return MC_HEUR_MULTIPLE;
	return MC_HEUR_NONE;
}
