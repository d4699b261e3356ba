/*
 * dlstate.c - the program's pending dlerror() message, kept across
 * memcheck's own calls into the dynamic linker (dlopen of libdw and
 * libunwind, dlsym of their functions and of check's, at start-up, at a
 * region's end, or inside an allocation that MEMCHECK_FAIL_SITE names).
 *
 * glibc keeps the last error of dlopen, dlsym and their kin for
 * dlerror() per thread, and each of those calls first discards the
 * error pending before it (dlfcn/dlerror.c, _dlerror_run), successful or
 * not.  A program that called memcheck_end between its failed dlopen
 * and its dlerror() got NULL (tests/prog/dlerror_region), and the
 * record and message the C library had malloc'd for the program were
 * freed inside memcheck, where the free is not counted.  A failed call
 * of memcheck's own (libunwind absent) left its message pending for the
 * program's next dlerror().
 *
 * Premises (glibc 2.34 to 2.36 at least, checked where it can be): the
 * thread's state is the pointer __libc_dlerror_result, a GLIBC_PRIVATE
 * thread-local variable of libc.so.6 that every dlfcn call reads afresh
 * (NULL: no error pending); dlerror() called until it returns NULL
 * frees a record it finds and sets the pointer back to NULL.  So
 * mc_dlerror_save moves the program's record aside (the pointer set to
 * NULL: memcheck's calls find nothing to discard), and
 * mc_dlerror_restore discards whatever memcheck's calls left (by
 * dlerror()) and puts the program's record back.  The variable is found
 * by hand (elfsym.c): dlsym would itself discard the error.  Its
 * address in the calling thread is libc's thread-local block for that
 * thread (dl_iterate_phdr's dlpi_tls_data) plus the symbol's offset in
 * it (its st_value, what the lookup gives less libc's start: libc's
 * first PT_LOAD is at address 0, checked against its PT_TLS size).
 * Where it is not found (another C library, a glibc that renamed it)
 * nothing is saved and the calls behave as before.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

/* The symbol's offset in libc's TLS block, and libc's start (its
 * dlpi_addr), found once: 0 untried, 1 found, -1 none. */
static _Atomic int found_state;
static uintptr_t libc_addr, result_off;

struct tls_find {
	uintptr_t addr;  /* the object wanted, by its dlpi_addr */
	void *tls;       /* its TLS block in the calling thread */
	uintptr_t tls_size;
};

static int find_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct tls_find *f = arg;
	if (info->dlpi_addr != f->addr)
		return 0;
	f->tls = info->dlpi_tls_data;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_TLS)
			f->tls_size = info->dlpi_phdr[i].p_memsz;
	return 1;
}

static void find_result(void)
{
	const void *where = NULL;
	void *at = mc_sym_first("__libc_dlerror_result", &where);
	int state = -1;
	if (at && where) {
		struct tls_find f = { .addr = (uintptr_t)where };
		dl_iterate_phdr(find_tls, &f);
		uintptr_t off = (uintptr_t)at - (uintptr_t)where;
		if (f.tls && off + sizeof(void *) <= f.tls_size) {
			libc_addr = (uintptr_t)where;
			result_off = off;
			state = 1;
		}
	}
	atomic_store_explicit(&found_state, state, memory_order_release);
}

/* The calling thread's __libc_dlerror_result, or NULL. */
static void **result_slot(void)
{
	int state = atomic_load_explicit(&found_state, memory_order_acquire);
	if (state == 0) {
		find_result();
		state = atomic_load_explicit(&found_state, memory_order_acquire);
	}
	if (state != 1)
		return NULL;
	struct tls_find f = { .addr = libc_addr };
	dl_iterate_phdr(find_tls, &f);
	return f.tls ? (void **)((char *)f.tls + result_off) : NULL;
}

void mc_dlerror_save(struct mc_dlerror *s)
{
	s->slot = result_slot();
	s->saved = NULL;
	if (s->slot) {
		s->saved = *s->slot;
		*s->slot = NULL;
	}
}

void mc_dlerror_restore(struct mc_dlerror *s)
{
	if (!s->slot)
		return;
	/* An error of memcheck's own: dlerror() twice frees it (the first
	 * marks it returned, the second frees it), once a failed malloc's
	 * placeholder.  dlerror sets errno to the error's code: kept, as
	 * this may run inside an allocation (MEMCHECK_FAIL_SITE's names). */
	int saved_errno = errno;
	for (int i = 0; i < 3 && *s->slot; i++)
		dlerror();
	errno = saved_errno;
	*s->slot = s->saved;
}
