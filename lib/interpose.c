/*
 * interpose.c - the malloc family, forwarded to the next allocator.
 *
 * Every function here does three things: pass the call on to the
 * allocator that comes after memcheck in symbol lookup (glibc, mimalloc,
 * jemalloc, tcmalloc, ...), tell account.c what happened, and leave errno
 * and the result exactly as the allocator made them.  Nothing else lives
 * here.
 *
 * Three traps shape the code.  Finding the allocator must not use it:
 * memcheck reads the objects' symbol tables itself (elfsym.c), since
 * dlsym and dlopen allocate, and dlopen's block changed the allocator's
 * layout for the whole run (mimalloc 2.0.9 then peaked 26 MB lower on a
 * three-phase program); region.c's start-up probe is answered here.  A
 * call that comes in before the forwarding table is filled, and every
 * call memcheck's own work makes (stack capture, symbolization:
 * thread-local guard held), is served by ownheap.c, uncounted: never by
 * the program's allocator.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MC_ON_VALGRIND RUNNING_ON_VALGRIND
#else
#define MC_ON_VALGRIND 0
#endif

struct mc_real mc_real;
uintptr_t mc_text_lo, mc_text_len;
MC_TLS struct mc_thread mc_self;
int mc_is_active = 1;

/* NONE -> RESOLVING -> FORWARDING (calls pass through uncounted while the
 * rest of memcheck starts) -> READY. */
enum { NONE, RESOLVING, FORWARDING, READY };
static _Atomic int state;
/* READY with tracking on: the wrappers may jump to mc_track_*.  Count-only
 * mode without a thread's counters yet goes the slow way, whose guard
 * functions then open the count-only path (mc_self.fast). */
static _Atomic int track_ready;
static MC_TLS int resolving_here;

/* ---- memcheck's own calls ------------------------------------------- */

/* Calls memcheck's own work makes (the guard held) and dlsym's before
 * the allocator is known are served by ownheap.c, never the program's
 * allocator; any block in its range goes back there, whoever frees it. */
static inline bool is_own(const void *p)
{
	return mc_ownheap_has(p);
}

static bool bootstrapping(void);

/* An uncounted call that is memcheck's own (ownheap.c), not the
 * program's while memcheck only forwards (the allocator then), nor the
 * allocator's own through the public names inside a call memcheck
 * forwarded to it (MC_REAL). */
static inline bool own_call(void)
{
	return (mc_in_hook && !mc_self.in_real) || resolving_here || bootstrapping();
}

/* *served: false when the caller must ask the allocator instead. */
static void *own_alloc(size_t align, size_t n, bool zero, bool *served)
{
	void *p = mc_ownheap_alloc(align, n, zero);
	*served = p || errno || bootstrapping(); /* errno 0: no room here */
	if (!p && bootstrapping() && !errno)
		errno = ENOMEM;
	return p;
}

/* ---- functions the allocator lacks ----------------------------------- */

/* jemalloc has no pvalloc or reallocarray, tcmalloc no reallocarray.
 * Taking glibc's instead would hand the program a glibc pointer that the
 * allocator's free() then crashes on, so these are built from memalign
 * and realloc of the allocator itself. */

static size_t page_size(void)
{
	static size_t pg;
	if (!pg)
		pg = (size_t)sysconf(_SC_PAGESIZE);
	return pg;
}

static void *synth_valloc(size_t n)
{
	return mc_real.memalign(page_size(), n);
}

static void *synth_pvalloc(size_t n)
{
	size_t pg = page_size();
	if (n > SIZE_MAX - pg) {
		errno = ENOMEM;
		return NULL;
	}
	return mc_real.memalign(pg, (n + pg - 1) & ~(pg - 1));
}

static void *synth_aligned_alloc(size_t align, size_t n)
{
	return mc_real.memalign(align, n);
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

/* Our own malloc, whatever the global symbol resolves to.  (gcc's copy
 * attribute takes malloc's own attributes, which it would otherwise warn
 * about; clang has no such attribute and no such warning.) */
#if defined(__clang__)
#define MC_COPY_ATTRS(f)
#else
#define MC_COPY_ATTRS(f) copy(f),
#endif
extern __typeof__(malloc) mc_self_malloc
	__attribute__((MC_COPY_ATTRS(malloc) alias("malloc"), visibility("hidden")));

/* Everything is looked up with elfsym.c, never dlsym: a failed dlsym
 * allocates its error message, which the allocator would serve; and
 * dlsym(RTLD_DEFAULT, "malloc") gives a non-PIE program's PLT stub when
 * the program takes malloc's address. */
static const void *alloc_object; /* where the allocator's malloc lives */

static void resolve_all(void)
{
	/* Normally the allocator is the next object after us.  When another
	 * object's malloc comes first, the program never calls ours for
	 * malloc, but it may still reach our functions for names its
	 * allocator lacks (jemalloc has no pvalloc): those must go to that
	 * allocator too, or the program frees a glibc block with jemalloc. */
	const void *base = NULL;
	void *first = mc_sym_first("malloc", &base);
	mc_is_active = !first || first == (void *)mc_self_malloc;
	void *m = mc_is_active ? mc_sym_next("malloc", &base) : first;
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
	r.free = mc_sym_in(base, "free");
	r.calloc = mc_sym_in(base, "calloc");
	r.realloc = mc_sym_in(base, "realloc");
	r.memalign = mc_sym_in(base, "memalign");
	r.usable_size = mc_sym_in(base, "malloc_usable_size");
	r.posix_memalign = mc_sym_in(base, "posix_memalign");
	r.aligned_alloc = mc_sym_in(base, "aligned_alloc");
	r.valloc = mc_sym_in(base, "valloc");
	r.pvalloc = mc_sym_in(base, "pvalloc");
	r.reallocarray = mc_sym_in(base, "reallocarray");
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
	mc_real = r;
	alloc_object = base;
}

/* Where libmemcheck's code lies, from its own program headers: the
 * linker's __ehdr_start is its ELF header, mapped at the start of its
 * first segment.  Linked from libmemcheck.a, that object is the program
 * itself, whose code holds the program's frames too: then no range (the
 * wrappers jump under gcc; a clang -O0 build linked that way shows a
 * wrapper as its first frame). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

static void find_own_code(void)
{
	const ElfW(Ehdr) *eh = (const void *)__ehdr_start;
	const ElfW(Phdr) *ph = (const void *)(__ehdr_start + eh->e_phoff);
	uintptr_t base = 0;
	bool have_base = false;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (!have_base) {
			base = (uintptr_t)__ehdr_start - (ph[i].p_vaddr - ph[i].p_offset);
			have_base = true;
		}
		if (ph[i].p_flags & PF_X) {
			uintptr_t lo = base + ph[i].p_vaddr;
			if (getauxval(AT_ENTRY) - lo < ph[i].p_memsz)
				return; /* the program's own code */
			mc_text_lo = lo;
			mc_text_len = ph[i].p_memsz;
			return;
		}
	}
}

/* The C library's mmap family (mappings.c): the next definition. */
static void *next_symbol(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* Fill the forwarding table, then start the rest of memcheck.  Safe to
 * call from any thread at any time; only the first call does work. */
void mc_resolve(void)
{
	static atomic_flag lock = ATOMIC_FLAG_INIT;
	if (atomic_load_explicit(&state, memory_order_acquire) >= FORWARDING)
		return;
	int saved = errno;
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
	if (atomic_load(&state) == NONE) {
		atomic_store(&state, RESOLVING);
		resolving_here = 1;
		resolve_all();
		mc_mappings_resolve(next_symbol);
		find_own_code();
		resolving_here = 0;
		atomic_store_explicit(&state, FORWARDING, memory_order_release);

		mc_guard_enter();
		mc_footprint_init(); /* first: counts every mapping after it */
		/* What start-up makes resident (the C library's code and
		 * data that memcheck alone uses, too) is memcheck's.  Nothing
		 * in it may call the allocator: a block it served memcheck
		 * would change its layout for the whole run (mimalloc), and
		 * its own start (tcmalloc's page heap: megabytes) would count
		 * as memcheck's here. */
		mc_own_work_begin(false);
		mc_options_init();
		/* Clearing blocks serves the scan alone, and would hide the
		 * program's reads of uninitialised bytes from valgrind. */
		if (!mc_opt.track || !mc_opt.scan || MC_ON_VALGRIND)
			mc_opt.scrub = 0;
		mc_cxx_resolve(mc_is_active ? alloc_object : NULL); /* after the options */
		mc_fault_init(); /* before account.c: fork handler order */
		mc_blocks_init();
		mc_stacks_init();
		mc_snapshot_init();
		mc_account_init();
		mc_mappings_init();
		mc_allocator_detect();
		if (!mc_opt.track)
			mc_limits_init(); /* for count-only malloc alone */
		mc_own_work_end();
		mc_guard_leave();
		/* Bypassed, nothing is counted: counting only the functions
		 * the allocator lacks would report their blocks as leaks. */
		if (mc_is_active) {
			atomic_store_explicit(&state, READY, memory_order_release);
			if (mc_opt.track)
				atomic_store_explicit(&track_ready, 1, memory_order_release);
		}
	}
	atomic_flag_clear_explicit(&lock, memory_order_release);
	errno = saved;
}

static __attribute__((noinline)) bool uncounted_slow(void)
{
	if (resolving_here)
		return true;
	mc_resolve();
	return atomic_load_explicit(&state, memory_order_acquire) != READY || mc_in_hook;
}

/* Calls that cannot be counted: during start-up, inside memcheck's own
 * work, or before anything is known. */
static inline bool uncounted(void)
{
	if (likely(atomic_load_explicit(&state, memory_order_acquire) == READY))
		return mc_in_hook != 0;
	return uncounted_slow();
}

/* MEMCHECK_SCRUB.  The scan reads a block's aligned words and takes
 * those that hold an address; valgrind skips the bytes a program never
 * wrote.  Clearing only the words that hold an address leaves everything
 * else as the allocator handed it out: a zero word is read, never
 * written, so a page of the block nobody touched stays the kernel's zero
 * page and the program's resident memory is what it was. */
#define MC_IS_ADDR(w) ((w) - 4096 < ((uintptr_t)1 << 48) - 4096)
void mc_scrub_words(void *p, size_t from, size_t n)
{
	size_t max = (size_t)mc_opt.scrub;
	size_t to = (n < max ? n : max) & ~(size_t)7;
	uintptr_t *w = (uintptr_t *)((char *)p + ((from + 7) & ~(size_t)7));
	uintptr_t *end = (uintptr_t *)((char *)p + to);
	/* Four words tested at a time without a branch: most hold no address. */
	for (; w + 4 <= end; w += 4)
		if (unlikely(MC_IS_ADDR(w[0]) | MC_IS_ADDR(w[1]) | MC_IS_ADDR(w[2]) |
			     MC_IS_ADDR(w[3])))
			for (int i = 0; i < 4; i++)
				if (MC_IS_ADDR(w[i]))
					w[i] = 0;
	for (; w < end; w++)
		if (MC_IS_ADDR(*w))
			*w = 0;
}

bool mc_uncounted(void)
{
	return uncounted();
}

/* Count-only mode, inlined: the thread's own counters, no calls.  The
 * pointer is set only in count-only mode, once memcheck is ready and the
 * thread has counters, and only while the guard is down (mc_guard_enter
 * clears it), so it alone says this call may take the short path.  A
 * value, never an out-parameter: a local whose address is taken keeps
 * an unoptimized build from jumping to the slow paths (MC_FRAMELESS). */
static inline struct mc_totals *count_path(void)
{
	return mc_self.fast;
}

static bool bootstrapping(void)
{
	return atomic_load_explicit(&state, memory_order_acquire) < FORWARDING;
}

void mc_bypass(void)
{
	mc_set_totals(NULL);
	mc_is_active = 0;
	atomic_store_explicit(&track_ready, 0, memory_order_release);
	atomic_store_explicit(&state, FORWARDING, memory_order_release);
}

/* After the last report: what happens now (the C library's and other
 * libraries' exit handlers freeing what they allocated, some of it under
 * memcheck's own guard while it reported) can no longer be reported, so
 * calls pass straight through, uncounted and unchecked. */
void mc_stop_counting(void)
{
	mc_set_totals(NULL);
	atomic_store_explicit(&track_ready, 0, memory_order_release);
	atomic_store_explicit(&state, FORWARDING, memory_order_release);
}

__attribute__((constructor)) static void mc_constructor(void)
{
	mc_resolve();
	mc_guard_enter();
	mc_suppress_init();
	mc_roots_init();
	mc_fault_start();
	mc_guard_leave();
	mc_process_begin();
}

__attribute__((destructor)) static void mc_destructor(void)
{
	mc_process_end();
}

/* Record an allocation's outcome, with the guard held.  The accounting
 * paths that can touch errno (table growth, first use by a thread, error
 * reports) save and restore it themselves, so the hot path does not pay
 * for it here. */
static inline void *record(void *p, size_t size, void *fp)
{
	if (likely(p != NULL))
		mc_account_alloc(p, size, fp);
	else
		mc_account_failed();
	return p;
}

/* ---- count-only fast paths ------------------------------------------- */

/* In count-only mode malloc, calloc, realloc and free take a path of a
 * few instructions and no stack frame of their own: the counters first,
 * then a tail call to the allocator (free), or a call whose result is
 * only tested (the rare failure takes the count back).  The recursion
 * guard is not raised around the allocator here: counting needs no lock
 * and no table, so a call the allocator itself made through the public
 * malloc would only be counted, as valgrind counts it.  Everything else
 * (tracking, fault injection, memcheck's own calls, start-up) goes to the
 * *_slow functions, which hold a frame of their own: called by a jump,
 * their frame is the one the program's call made, and stack capture
 * starts from it exactly as it would from the wrapper's. */

/* The wrappers with such a path need no frame pointer of their own
 * (MC_FRAMELESS, internal.h): the slow paths keep theirs. */

static inline bool fault_off(void)
{
	return likely(!__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED));
}

/* count_path() for the calls that allocate, which fault injection may
 * fail. */
static inline struct mc_totals *count_alloc_path(void)
{
	return fault_off() ? count_path() : NULL;
}

static inline bool tracking(void)
{
	return atomic_load_explicit(&track_ready, memory_order_acquire) != 0;
}

/* An allocation counted in advance failed: take it back. */
static __attribute__((noinline)) void *uncount(size_t size)
{
	struct mc_totals *t = mc_my_totals;
	if (t) {
		mc_add_own(&t->allocs, (uint64_t)-1);
		mc_add_own(&t->bytes_allocated, -(uint64_t)size);
		mc_add_own(&t->failed, 1);
	}
	return NULL;
}

/* ---- the malloc family ----------------------------------------------- */

/* Failure injection (fault.c): with it off, one load and one branch
 * before the allocator is called. */
#define INJECT(fp, is_realloc) \
	(unlikely(__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED)) && \
	 mc_fault_check((fp), (is_realloc)))

#define CALL_FRAME() MC_CALL_FRAME()

/* region.c's start-up probe: does a malloc call from this process reach
 * memcheck's malloc?  Symbol lookup says so in most cases, not under
 * valgrind, which redirects every object's malloc to its own.  The probe
 * call is answered here, from ownheap.c: the allocator never sees it,
 * failure injection never fails it, and it is not counted.  The caller holds the guard, which keeps the
 * call off the count-only and tracking paths. */
static MC_TLS bool probe_armed, probe_seen;

void mc_probe_arm(void)
{
	probe_armed = true;
	probe_seen = false;
}

bool mc_probe_seen(void)
{
	probe_armed = false;
	return probe_seen;
}

static __attribute__((noinline)) void *malloc_slow(size_t n)
{
	if (unlikely(probe_armed)) {
		probe_armed = false;
		probe_seen = true;
		return mc_ownheap_alloc(16, n, false);
	}
	if (INJECT(CALL_FRAME(), false))
		return NULL;
	if (unlikely(uncounted())) {
		bool served = false;
		void *p = own_call() ? own_alloc(16, n, false, &served) : NULL;
		return served ? p : mc_real.malloc(n);
	}
	mc_guard_enter();
	void *p = record(MC_REAL(mc_real.malloc(n)), n, CALL_FRAME());
	mc_scrub(p, 0, n);
	mc_guard_leave();
	return p;
}

MC_API MC_FRAMELESS void *malloc(size_t n)
{
	if (fault_off()) {
		struct mc_totals *t = count_path();
		if (t) {
			mc_add_own(&t->allocs, 1);
			mc_add_own(&t->bytes_allocated, n);
			/* limits.c: a size that cannot fail here is not checked */
			if (likely(n < __atomic_load_n(&mc_sure_below, __ATOMIC_RELAXED)))
				return mc_real.malloc(n);
			void *p = mc_real.malloc(n);
			if (unlikely(p == NULL))
				return uncount(n);
			return p;
		}
		if (likely(!mc_in_hook) && likely(tracking()))
			return mc_track_malloc(n);
	}
	return malloc_slow(n);
}

static __attribute__((noinline)) void *calloc_slow(size_t nmemb, size_t size)
{
	if (INJECT(CALL_FRAME(), false))
		return NULL;
	if (unlikely(uncounted())) {
		if (own_call()) {
			size_t n;
			if (__builtin_mul_overflow(nmemb, size, &n)) {
				errno = ENOMEM;
				return NULL;
			}
			bool served;
			void *p = own_alloc(16, n, true, &served);
			if (served)
				return p;
		}
		return mc_real.calloc(nmemb, size);
	}
	mc_guard_enter();
	void *p = record(MC_REAL(mc_real.calloc(nmemb, size)), nmemb * size, CALL_FRAME());
	mc_guard_leave();
	return p;
}

MC_API MC_FRAMELESS void *calloc(size_t nmemb, size_t size)
{
	struct mc_totals *t = count_alloc_path();
	if (t) {
		/* An overflowing product fails in the allocator, and is
		 * taken back with the same wrapped size. */
		size_t n = nmemb * size;
		mc_add_own(&t->allocs, 1);
		mc_add_own(&t->bytes_allocated, n);
		void *p = mc_real.calloc(nmemb, size);
		if (unlikely(p == NULL))
			return uncount(n);
		return p;
	}
	return calloc_slow(nmemb, size);
}

static __attribute__((noinline)) void free_slow(void *p)
{
	if (!p)
		return;
	if (unlikely(is_own(p))) {
		mc_ownheap_free(p);
		return;
	}
	if (unlikely(uncounted())) {
		mc_real.free(p);
		return;
	}
	bool pass_on = true;
	mc_guard_enter();
	mc_account_free(p, &pass_on, CALL_FRAME());
	if (likely(pass_on))
		mc_real.free(p);
	mc_guard_leave();
}

MC_API MC_FRAMELESS void free(void *p)
{
	struct mc_totals *t = count_path();
	if (t) {
		if (likely(p != NULL) && likely(!is_own(p))) {
			mc_add_own(&t->frees, 1);
			mc_real.free(p);
			return;
		}
	} else if (likely(p != NULL) && likely(!mc_in_hook) && likely(tracking()) &&
		   likely(!is_own(p))) {
		mc_track_free(p);
		return;
	}
	free_slow(p);
}

/* realloc and reallocarray share this: old block out, new block in.  The
 * old block is marked freed before the allocator sees it, so another
 * thread that is handed the same address cannot race our bookkeeping; if
 * the allocator then fails, the block is put back as it was. */
static void *realloc_common(void *old, size_t a, size_t b, bool array, void *fp)
{
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) {
		mc_guard_enter();
		mc_account_realloc_call();
		mc_account_failed();
		mc_guard_leave();
		errno = ENOMEM;
		return NULL;
	}
	if (!old) {
		mc_guard_enter();
		mc_account_realloc_call();
		void *p = MC_REAL(array ? mc_real.reallocarray(NULL, a, b) : mc_real.realloc(NULL, n));
		record(p, n, fp);
		mc_scrub(p, 0, n);
		mc_guard_leave();
		return p;
	}
	int saved = errno;
	mc_guard_enter();
	mc_account_realloc_call();
	struct mc_block prev;
	int st = mc_account_realloc_begin(old, &prev, fp);
	if (st < 0) {
		/* A block memcheck saw freed: reported, and kept from the
		 * allocator, which would corrupt its heap. */
		mc_guard_leave();
		errno = ENOMEM;
		return NULL;
	}
	errno = saved;
	void *p = MC_REAL(array ? mc_real.reallocarray(old, a, b) : mc_real.realloc(old, n));
	int err = errno;
	mc_account_realloc_end(old, p, n, st, &prev, fp);
	if (st == 1 && mc_opt.track)
		mc_scrub(p, prev.size, n);
	mc_guard_leave();
	errno = err;
	return p;
}

static __attribute__((noinline)) void *realloc_slow(void *old, size_t n)
{
	if (unlikely(is_own(old))) {
		if (own_call())
			return mc_ownheap_realloc(old, n);
		/* The program reallocates a block memcheck's work made (a
		 * library's cache): from now on it is the program's. */
		void *p = n ? malloc(n) : NULL;
		if (p || !n) {
			size_t have = mc_ownheap_size(old);
			if (p)
				memcpy(p, old, have < n ? have : n);
			mc_ownheap_free(old);
		}
		return p;
	}
	if (unlikely(uncounted())) {
		if (own_call() && !old) {
			bool served;
			void *p = own_alloc(16, n, false, &served);
			if (served)
				return p;
		}
		return mc_real.realloc(old, n);
	}
	if (n > 0 && INJECT(CALL_FRAME(), true))
		return NULL;
	return realloc_common(old, n, 1, false, CALL_FRAME());
}

/* Count-only realloc, as realloc_common counts it: one realloc call; the
 * old block freed unless the call failed; the new one allocated. */
static inline void *realloc_count(struct mc_totals *t, void *old, size_t n)
{
	mc_add_own(&t->reallocs, 1);
	void *p = mc_real.realloc(old, n);
	if (unlikely(p == NULL)) {
		if (old && n == 0)
			mc_add_own(&t->frees, 1); /* freed, nothing new */
		else
			mc_add_own(&t->failed, 1);
		return NULL;
	}
	if (old)
		mc_add_own(&t->frees, 1);
	mc_add_own(&t->allocs, 1);
	mc_add_own(&t->bytes_allocated, n);
	return p;
}

MC_API MC_FRAMELESS void *realloc(void *old, size_t n)
{
	if (fault_off()) {
		struct mc_totals *t = count_path();
		if (t) {
			if (likely(!is_own(old)))
				return realloc_count(t, old, n);
		} else if (likely(old != NULL) && likely(!mc_in_hook) && likely(tracking()) &&
			   likely(!is_own(old))) {
			return mc_track_realloc(old, n);
		}
	}
	return realloc_slow(old, n);
}

MC_API void *reallocarray(void *old, size_t a, size_t b)
{
	if (unlikely(is_own(old) || uncounted())) {
		size_t n;
		if (__builtin_mul_overflow(a, b, &n)) {
			errno = ENOMEM;
			return NULL;
		}
		if (is_own(old) || own_call())
			return realloc(old, n);
		return mc_real.reallocarray(old, a, b);
	}
	size_t n;
	if (!__builtin_mul_overflow(a, b, &n) && n > 0 &&
	    INJECT(CALL_FRAME(), true))
		return NULL;
	return realloc_common(old, a, b, true, CALL_FRAME());
}

MC_API int posix_memalign(void **out, size_t align, size_t n)
{
	if (unlikely(__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED))) {
		int saved = errno;
		bool fail = mc_fault_check(CALL_FRAME(), false);
		errno = saved;
		if (fail)
			return ENOMEM;
	}
	if (unlikely(uncounted())) {
		if (own_call()) {
			if (align < sizeof(void *) || (align & (align - 1)))
				return EINVAL;
			int saved = errno;
			bool served;
			void *p = own_alloc(align, n, false, &served);
			errno = saved;
			if (served) {
				if (!p)
					return ENOMEM;
				*out = p;
				return 0;
			}
		}
		return mc_real.posix_memalign(out, align, n);
	}
	mc_guard_enter();
	void *p = NULL;
	int rc = MC_REAL(mc_real.posix_memalign(&p, align, n));
	int saved = errno;
	record(rc == 0 ? p : NULL, n, CALL_FRAME());
	if (rc == 0)
		mc_scrub(p, 0, n);
	errno = saved;
	mc_guard_leave();
	if (rc == 0)
		*out = p;
	return rc;
}

/* The aligned family: one shape, four forwarders. */
#define MC_ALIGNED(name, params, call, size)                              \
	MC_API void *name params                                          \
	{                                                                 \
		if (INJECT(CALL_FRAME(), false))            \
			return NULL;                                      \
		if (unlikely(uncounted())) {                              \
			bool served = false;                              \
			void *p = own_call() ? own_alloc(page_size(), size, false, \
							   &served) : NULL; \
			return served ? p : mc_real.call;                 \
		}                                                         \
		mc_guard_enter();                                             \
		void *p = record(MC_REAL(mc_real.call), size, CALL_FRAME()); \
		mc_scrub(p, 0, size);                                         \
		mc_guard_leave();                                             \
		return p;                                                 \
	}

MC_ALIGNED(memalign, (size_t align, size_t n), memalign(align, n), n)
MC_ALIGNED(aligned_alloc, (size_t align, size_t n), aligned_alloc(align, n), n)
MC_ALIGNED(valloc, (size_t n), valloc(n), n)
/* pvalloc counts the page-rounded size: that is what the program gets
 * and may use.  (valgrind 3.19 aborts on pvalloc, so there is no count
 * of its to match.) */
MC_ALIGNED(pvalloc, (size_t n), pvalloc(n),
	   (n + page_size() - 1) & ~(page_size() - 1))

MC_API size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (unlikely(is_own(p)))
		return mc_ownheap_size(p);
	if (bootstrapping())
		mc_resolve();
	if (mc_real.usable_size)
		return mc_real.usable_size(p);
	/* An allocator without it: the size memcheck recorded. */
	struct mc_block b;
	return mc_blocks_find((uintptr_t)p, &b) ? b.size : 0;
}
