/*
 * plain_tcmalloc_kept.c - a word of the program's that holds the address
 * of tcmalloc's default MallocExtension, for tests/test_valgrind.c.
 *
 * tcmalloc's start-up (MallocExtension::Register) makes that 8-byte
 * object and drops its only pointer: lost by design, and tcmalloc.supp
 * takes it.  A conservative scan reads every word of a live stack frame,
 * written or not, where valgrind skips those it holds undefined: a
 * forked check test that fails leaves by _exit from _ck_assert_failed,
 * whose 8 KiB message buffer, mostly unwritten, can hold a stale copy of
 * that address from earlier calls at that depth (one process in ~200 of
 * plain_check under tcmalloc: "still reachable: 8 bytes in 1 blocks").
 * Here the copy is made on purpose, in a global, so that the block is
 * reachable every run: it is tcmalloc's own still, and suppressed.
 *
 * The object is found by its one word, the vtable of MallocExtension,
 * among the 8-byte objects of the page tcmalloc serves the program's own
 * 8-byte block from (tcmalloc's 8 KiB pages; its start-up objects come
 * first in that size class), read through process_vm_readv.  Not under tcmalloc (no such vtable): says
 * so and exits 0.
 *
 * usage: plain_tcmalloc_kept   (stdout: "kept" or "no tcmalloc";
 *        exit 1 when tcmalloc is loaded and the object was not found)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

static void *volatile kept;

int main(void)
{
	const char *vtable = dlsym(RTLD_DEFAULT, "_ZTV15MallocExtension");
	if (!vtable) {
		puts("no tcmalloc");
		return 0;
	}
	/* the address point of the vtable: past offset-to-top and typeinfo */
	uintptr_t vptr = (uintptr_t)vtable + 2 * sizeof(void *);
	void *mine = malloc(8);
	if (!mine)
		return 1;
	/* read through the kernel, so that valgrind, running the same
	 * program, calls none of it an invalid read of its heap */
	static uintptr_t words[8192 / sizeof(uintptr_t)];
	uintptr_t page = (uintptr_t)mine & ~(uintptr_t)8191;
	struct iovec here = { words, sizeof words }, there = { (void *)page, sizeof words };
	ssize_t got = process_vm_readv(getpid(), &here, 1, &there, 1, 0);
	for (size_t i = 0; got > 0 && i < (size_t)got / sizeof words[0] && !kept; i++)
		if (page + i * sizeof words[0] != (uintptr_t)mine && words[i] == vptr)
			kept = (void *)(page + i * sizeof words[0]);
	free(mine);
	puts(kept ? "kept" : "not found");
	return kept ? 0 : 1;
}
