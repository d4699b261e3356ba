/*
 * demangle.c - the name a report shows for a frame, as valgrind prints
 * it.  valgrind names a frame's own function (the one really at the
 * address) by its symbol table's name, demangled with parameter types
 * (`Widget::make(int)`, `(anonymous namespace)::leak(unsigned long)`,
 * `main::{lambda(int)#1}::operator()(int) const`), and a function inlined
 * there by the debug information's DW_AT_name alone (`push_back`), as
 * symbolize.c already names it.  Its suppressions, and the entries
 * --gen-suppressions writes, keep the mangled name (.linkage): only what
 * is shown is demangled, when it is shown.
 *
 * The demangler is libstdc++'s __cxa_demangle, which every process that
 * has C++ frames to name has loaded (an object with mangled names was
 * built by a C++ compiler and links it), looked up by elfsym.c's walk
 * (dlsym allocates) at the first mangled name shown, never in a C
 * program.  Its mallocs are made with the guard held: ownheap.c serves
 * them and they go back there (mc_forward_free), outside the program's
 * figures and its allocator.  Without it (libstdc++ linked statically,
 * so not exported) a frame keeps the name the debug information gave.
 *
 * A process printing a leak's stack of C++ frames pays one look-up and a
 * demangling per frame shown; doc/costs.md (session 29, names29) has the
 * measured figures.
 */
#include <string.h>

#include "internal.h"

typedef char *demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

/* NULL until looked up; `absent` once the look-up found nothing. */
static demangle_fn *_Atomic demangler;
static char absent;

static demangle_fn *find_demangler(void)
{
	demangle_fn *d = atomic_load_explicit(&demangler, memory_order_acquire);
	if (d)
		return d == (demangle_fn *)(void *)&absent ? NULL : d;
	d = (demangle_fn *)mc_sym_first("__cxa_demangle", NULL);
	atomic_store_explicit(&demangler, d ? d : (demangle_fn *)(void *)&absent,
			      memory_order_release);
	return d;
}

const char *mc_frame_demangled(const struct mc_frame_info *fi, char *buf, size_t cap)
{
	demangle_fn *d = cap ? find_demangler() : NULL;
	if (!d)
		return fi->function;
	int status = -1;
	mc_guard_enter();
	char *name = d(fi->linkage, NULL, NULL, &status);
	mc_guard_leave();
	if (!name || status != 0) {
		mc_forward_free(name);
		return fi->function;
	}
	size_t n = strlen(name);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, name, n);
	buf[n] = 0;
	mc_forward_free(name);
	return buf;
}
