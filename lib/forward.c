/*
 * forward.c - the allocator memcheck forwards to, and the state every
 * layer reads around a call to it.
 *
 * Below everything else (support): the forwarding table mc_real, found
 * without using the allocator; the thread's hot state mc_self with the
 * recursion guard; where libmemcheck's own code lies (mc_text_lo); how
 * far start-up has come (mc_state, mc_track_ready, mc_pass,
 * mc_is_active).  The
 * wrappers (interpose.c), the tracking paths (account.c), stack capture
 * and the rest read these downward; life.c, which runs start-up, fills
 * them in.  Defined here rather than in interpose.c so that no file
 * below the wrappers has to name the wrappers' file to reach them.
 *
 * Traps that shaped it.  Finding the allocator must not use it: the
 * objects' symbol tables are read by elfsym.c, since dlsym and dlopen
 * allocate, and dlopen's block changed the allocator's layout for the
 * whole run (mimalloc 2.0.9 then peaked 26 MB lower on a three-phase
 * program).  Functions the allocator lacks are built from its own, never
 * taken from another allocator.  mc_self is initial-exec TLS, reached
 * from the malloc wrappers with one %fs load (its place in this file
 * does not change that: -ftls-model=initial-exec, hidden).  The guard's
 * last leave records a signal handler's deferred calls through a hook
 * (signals.c sets it): the guard is used in every layer, the recording
 * is accounting's, and the hook is only called when calls are pending.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MC_ON_VALGRIND RUNNING_ON_VALGRIND
#else
#define MC_ON_VALGRIND 0
#endif

MC_HOT struct mc_real mc_real;
MC_HOT void *mc_next_start_main;
MC_HOT uintptr_t mc_text_lo, mc_text_len;
/* Aligned to 64, the thread pointer's alignment: libmemcheck's TLS
 * segment then starts on it, and lib/bss-layout.sh ends it on it, so
 * that the modules after it keep their static TLS blocks' bare places
 * in the main thread (test_rss_self's "static TLS places"). */
MC_TLS struct mc_thread mc_self __attribute__((aligned(64)));
int mc_is_active = 1;
MC_HOT _Atomic int mc_state;
MC_HOT _Atomic int mc_track_ready;
MC_HOT _Atomic int mc_pass;
MC_TLS int mc_resolving_here;

bool mc_counting(void)
{
	return atomic_load_explicit(&mc_state, memory_order_acquire) == MC_READY && mc_is_active;
}

/* ---- the guard's hook ------------------------------------------------- */

MC_HOT static void (*drain_hook)(void);

void mc_guard_drain_set(void (*fn)(void))
{
	drain_hook = fn;
}

/* threads.c's, set before any stop is owed; its stop first, before the
 * calls a handler queued, which change the table the scan holds. */
static void (*stop_hook)(void);

void mc_guard_stop_set(void (*fn)(void))
{
	stop_hook = fn;
}

void mc_guard_stop_owed(void)
{
	if (stop_hook)
		stop_hook();
}

void mc_guard_drain(void)
{
	if (unlikely(mc_self.stop_owed))
		mc_guard_stop_owed();
	/* MC_STOP_PENDING alone: signals.c queued nothing (and may have no
	 * queue on this thread) */
	int stop = MC_STOP_PENDING;
	if (__atomic_compare_exchange_n(&mc_self.sig_pending, &stop, 0, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		return;
	if (drain_hook)
		drain_hook();
	else
		mc_self.sig_pending = 0;
	/* owed while the queue was drained, with the guard up */
	if (unlikely(mc_self.stop_owed))
		mc_guard_stop_owed();
}

/* A block memcheck's own work got from malloc with the guard held
 * (libdw's): ownheap.c's, or the allocator's when that heap could not
 * serve it; what the public free does with the guard held. */
void mc_forward_free(void *p)
{
	if (!p)
		return;
	if (mc_ownheap_has(p))
		mc_ownheap_free(p);
	else
		mc_real.free(p);
}

/* ---- functions the allocator lacks ----------------------------------- */

/* jemalloc has no pvalloc or reallocarray, tcmalloc no reallocarray.
 * Taking glibc's instead would hand the program a glibc pointer that the
 * allocator's free() then crashes on, so these are built from memalign
 * and realloc of the allocator itself. */

/* memalign as the functions built on it must fail: with errno set, as
 * glibc's own versions, which the program gets without memcheck, set it
 * (jemalloc's memalign fails a huge request leaving errno alone). */
static void *memalign_or_enomem(size_t align, size_t n)
{
	int saved = errno;
	errno = 0;
	void *p = mc_real.memalign(align, n);
	if (p)
		errno = saved;
	else if (!errno)
		errno = ENOMEM;
	return p;
}

static void *synth_valloc(size_t n)
{
	return memalign_or_enomem(mc_page_size(), n);
}

static void *synth_pvalloc(size_t n)
{
	size_t pg = mc_page_size();
	if (n > SIZE_MAX - pg) {
		errno = ENOMEM;
		return NULL;
	}
	return memalign_or_enomem(pg, (n + pg - 1) & ~(pg - 1));
}

static void *synth_aligned_alloc(size_t align, size_t n)
{
	return memalign_or_enomem(align, n);
}

static int synth_posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	int saved = errno;
	void *p = mc_real.memalign(align, n);
	errno = saved;
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

static void *synth_reallocarray(void *p, size_t a, size_t b)
{
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return mc_real.realloc(p, n);
}

static void *synth_memalign(size_t align, size_t n)
{
	void *p = NULL;
	int rc = mc_real.posix_memalign(&p, align, n);
	if (rc) {
		errno = rc;
		return NULL;
	}
	return p;
}

/* ---- resolution ------------------------------------------------------ */

/* Everything is looked up with elfsym.c, never dlsym: a failed dlsym
 * allocates its error message, which the allocator would serve; and
 * dlsym(RTLD_DEFAULT, "malloc") gives a non-PIE program's PLT stub when
 * the program takes malloc's address. */
static void resolve_all(const void *self_malloc, const struct mc_sym_next_req *next)
{
	/* Normally the allocator is the next object after us.  When another
	 * object's malloc comes first, the program never calls ours for
	 * malloc, but it may still reach our functions for names its
	 * allocator lacks (jemalloc has no pvalloc): those must go to that
	 * allocator too, or the program frees a glibc block with jemalloc. */
	static const char *const family[] = {
		"free", "calloc", "realloc", "memalign", "malloc_usable_size",
		"posix_memalign", "aligned_alloc", "valloc", "pvalloc", "reallocarray",
	};
	void *f[MC_ARRAY_SIZE(family)];
	/* One walk: the first malloc, past memcheck's own the next one, and
	 * the rest of the family from the object of the one taken. */
	const void *base = NULL;
	void *first = NULL;
	void *m = mc_sym_first_but("malloc", self_malloc, &first, &base, family, f,
				   MC_ARRAY_SIZE(family), next);
	mc_is_active = !first || first == self_malloc;
	/* mc_object_base, not dladdr: dladdr also walks the object's whole
	 * symbol table for the nearest name (the C library's: ~10 us). */
	const char *object = NULL;
	if (m)
		mc_object_base(m, &object);
	Dl_info info;
	if (m && (!object || !object[0]) && dladdr(m, &info))
		object = info.dli_fname; /* the program itself: its argv[0] */
	if (!m) {
		/* Nothing to forward to: a statically linked program, where
		 * memcheck cannot work. */
		static const char msg[] = "memcheck: no malloc to forward to (a statically "
					  "linked program?); memcheck needs the dynamic linker\n";
		mc_write_all(2, msg, sizeof msg - 1);
		abort();
	}
	struct mc_real r = { 0 };
	r.malloc = m;
	r.object = object;
	r.free = (void (*)(void *))f[0];
	r.calloc = (void *(*)(size_t, size_t))f[1];
	r.realloc = (void *(*)(void *, size_t))f[2];
	r.memalign = (void *(*)(size_t, size_t))f[3];
	r.usable_size = (size_t (*)(void *))f[4];
	r.posix_memalign = (int (*)(void **, size_t, size_t))f[5];
	r.aligned_alloc = (void *(*)(size_t, size_t))f[6];
	r.valloc = (void *(*)(size_t))f[7];
	r.pvalloc = (void *(*)(size_t))f[8];
	r.reallocarray = (void *(*)(void *, size_t, size_t))f[9];
	/* valgrind replaces neither in the allocator its somalloc pattern
	 * names (mimalloc and tcmalloc export them): their blocks would be
	 * the allocator's, unseen by valgrind, whose free then rejects them.
	 * Built on memalign and realloc, which it replaces. */
	if (MC_ON_VALGRIND) {
		r.pvalloc = NULL;
		r.reallocarray = NULL;
	}
	if (!r.free || !r.calloc || !r.realloc) {
		/* An object that exports malloc but not free is not an
		 * allocator we can forward to; take the whole set from the
		 * next objects instead. */
		r.free = mc_sym_next("free", NULL);
		r.calloc = mc_sym_next("calloc", NULL);
		r.realloc = mc_sym_next("realloc", NULL);
	}
	if (!r.memalign && r.posix_memalign)
		r.memalign = synth_memalign;
	if (!r.memalign)
		r.memalign = mc_sym_next("memalign", NULL);
	if (!r.posix_memalign)
		r.posix_memalign = synth_posix_memalign;
	if (!r.aligned_alloc)
		r.aligned_alloc = synth_aligned_alloc;
	if (!r.valloc)
		r.valloc = synth_valloc;
	if (!r.pvalloc)
		r.pvalloc = synth_pvalloc;
	if (!r.reallocarray)
		r.reallocarray = synth_reallocarray;
	r.base = base;
	mc_real = r;
}

/* Where libmemcheck's code lies, from its own program headers: the
 * linker's __ehdr_start is its ELF header, mapped at the start of its
 * first segment.  Linked from libmemcheck.a, that object is the program
 * itself, whose code holds the program's frames too: then no range (the
 * wrappers jump under gcc; a clang -O0 build linked that way shows a
 * wrapper as its first frame). */
static void find_own_code(void)
{
	if (mc_own_is_program())
		return;
	int n;
	uintptr_t base;
	const ElfW(Phdr) *ph = mc_own_phdrs(&n, &base);
	for (int i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_flags & PF_X) {
			mc_text_lo = base + ph[i].p_vaddr;
			mc_text_len = ph[i].p_memsz;
			return;
		}
	}
}

void mc_forward_resolve(const void *self_malloc, const struct mc_sym_next_req *next)
{
	resolve_all(self_malloc, next);
	find_own_code();
}
