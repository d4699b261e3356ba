/*
 * cxxnew.c - C++'s operator new and delete, all twenty of them, forwarded
 * to the next definition and counted where malloc would not see them.
 *
 * libstdc++'s operator new calls malloc and its delete calls free, so
 * under glibc memcheck counted C++ allocations through its malloc
 * wrapper.  mimalloc, jemalloc and tcmalloc export operator new and
 * delete of their own, which serve the program without calling the
 * public malloc: a C++ program's allocations went uncounted.  So memcheck
 * defines the whole family (plain, array, nothrow, sized, align_val_t)
 * and forwards each call to the next definition after it:
 *
 * - the allocator's own ("owned"): memcheck counts the call here;
 * - any other (libstdc++'s, or a replacement the program brings in a
 *   library): forwarded alone.  Whatever that definition calls of the
 *   malloc family is counted there, as it always was.  While tracking,
 *   that call records its stack from the program's call to operator new
 *   (mc_self.cxx_frame), not from inside libstdc++, whose code has no
 *   frame pointers: the same stack as under the other allocators.
 *   Counting only, it is a plain jump, as if memcheck were not there.
 *
 * Three traps shape the owned path.
 *
 * Some allocators' new and delete do reach memcheck's malloc family
 * after all, through their own PLT: jemalloc 5.3's delete jumps to
 * free@plt and its align_val_t new calls aligned_alloc@plt.  Delete
 * cannot throw, so it calls on with the recursion guard up and anything
 * below passes through uncounted.  New can throw (bad_alloc, or whatever
 * a new_handler throws), and a guard raised around it would stay up for
 * good on that thread: so no guard, and new counts the call only when
 * the thread's allocation count did not move meanwhile, i.e. nothing
 * below counted it already.
 *
 * Exceptions pass through these frames: this file is built with unwind
 * tables (GNUmakefile), and nothing here holds state across the call.
 *
 * Failure injection (MEMCHECK_FAIL_*) must decide once per program call,
 * and a failed call must meet the new_handler loop as the program would
 * under glibc.  With injection on, owned new is therefore what
 * libstdc++'s is: the allocator's malloc (or aligned_alloc), counted and
 * injected here, in a loop that calls the new_handler and throws
 * bad_alloc (std::get_new_handler and std::__throw_bad_alloc looked up in
 * the C++ runtime the program has loaded).
 *
 * Two forwarded definitions are run by memcheck instead: libstdc++'s
 * align_val_t new asks aligned_alloc for the size rounded up to the
 * alignment, and its plain new asks malloc for 1 byte where the program
 * asked for 0; memcheck would count those where valgrind and the other
 * allocators count the size asked for (yaml-cpp's gtest suite: a
 * still-reachable new[](0) of libstdc++'s numpunct cache, 0 bytes under
 * valgrind, mimalloc, jemalloc and tcmalloc, 1 under glibc).  memcheck
 * runs the same loop on the same malloc or aligned_alloc and counts the
 * request.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"

#if __SIZEOF_SIZE_T__ == 8 && __SIZEOF_LONG__ == 8
#define MC_CXX 1 /* size_t is unsigned long: "m" in mangled names */
#else
#define MC_CXX 0
#endif

enum fn {
	NEW, NEW_ARR, NEW_NT, NEW_ARR_NT,
	NEW_AL, NEW_ARR_AL, NEW_AL_NT, NEW_ARR_AL_NT,
	DEL, DEL_ARR, DEL_SZ, DEL_ARR_SZ, DEL_NT, DEL_ARR_NT,
	DEL_AL, DEL_ARR_AL, DEL_SZ_AL, DEL_ARR_SZ_AL, DEL_AL_NT, DEL_ARR_AL_NT,
	NFN
};

static const char *const names[NFN] = {
	[NEW] = "_Znwm",
	[NEW_ARR] = "_Znam",
	[NEW_NT] = "_ZnwmRKSt9nothrow_t",
	[NEW_ARR_NT] = "_ZnamRKSt9nothrow_t",
	[NEW_AL] = "_ZnwmSt11align_val_t",
	[NEW_ARR_AL] = "_ZnamSt11align_val_t",
	[NEW_AL_NT] = "_ZnwmSt11align_val_tRKSt9nothrow_t",
	[NEW_ARR_AL_NT] = "_ZnamSt11align_val_tRKSt9nothrow_t",
	[DEL] = "_ZdlPv",
	[DEL_ARR] = "_ZdaPv",
	[DEL_SZ] = "_ZdlPvm",
	[DEL_ARR_SZ] = "_ZdaPvm",
	[DEL_NT] = "_ZdlPvRKSt9nothrow_t",
	[DEL_ARR_NT] = "_ZdaPvRKSt9nothrow_t",
	[DEL_AL] = "_ZdlPvSt11align_val_t",
	[DEL_ARR_AL] = "_ZdaPvSt11align_val_t",
	[DEL_SZ_AL] = "_ZdlPvmSt11align_val_t",
	[DEL_ARR_SZ_AL] = "_ZdaPvmSt11align_val_t",
	[DEL_AL_NT] = "_ZdlPvSt11align_val_tRKSt9nothrow_t",
	[DEL_ARR_AL_NT] = "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* The next definition of each, one word a wrapper reads: bit 0 set when
 * the call takes the slow path (owned, or tracking), clear for a plain
 * jump.  owned: bit f set when f is the allocator's own. */
static _Atomic uintptr_t next_fn[NFN];
static _Atomic uint32_t owned;
/* The plain and align_val_t new of the C++ runtime (the object that
 * defines std::get_new_handler), which memcheck runs itself: libstdc++'s
 * align_val_t new asks aligned_alloc for the size rounded up to the
 * alignment, its plain new malloc(1) for new(0), and counting that
 * would make the program's figures depend on the allocator.  An aligned
 * one always takes the slow path; a plain one only for size 0 (the
 * wrapper's test of n) or while tracking, the rest stays a jump.  The
 * nothrow and the array forms of libstdc++ call the plain one through
 * the PLT (premise, glibc 2.36's libstdc++ 12: tests/test_cxx.c's
 * "zero" rows fail if it binds them inside). */
static _Atomic uint32_t runtime_new;
#define RUNTIME_RUN ((1u << NEW) | (1u << NEW_ARR) | (1u << NEW_AL) | (1u << NEW_ARR_AL))
#define ALIGNED_NEW ((1u << NEW_AL) | (1u << NEW_ARR_AL))
static const void *alloc_base;   /* the allocator's object, or NULL */
static bool slow_all;            /* tracking: every call the slow way */
static _Atomic int resolved;

static uintptr_t find(enum fn f)
{
	const void *where = NULL;
	void *p = mc_sym_next(names[f], &where);
	if (!p)
		return 0;
	bool own = alloc_base && where == alloc_base, runtime = false;
	if (own)
		atomic_fetch_or_explicit(&owned, 1u << f, memory_order_relaxed);
	if (!own && alloc_base && (RUNTIME_RUN & (1u << f))) {
		const void *rt = NULL;
		runtime = mc_sym_first("_ZSt15get_new_handlerv", &rt) && rt == where;
		if (runtime)
			atomic_fetch_or_explicit(&runtime_new, 1u << f, memory_order_relaxed);
	}
	bool aligned_rt = runtime && (ALIGNED_NEW & (1u << f));
	return (uintptr_t)p | (own || aligned_rt || slow_all ? 1 : 0);
}

/* Called by life.c's start-up, with the allocator's object when
 * memcheck counts (NULL when bypassed: everything is only forwarded).
 * Each operator's definition is looked up at its first call (next_of:
 * next_fn[f] is 0 until then, which sends the wrapper the slow way):
 * looking all 20 up here was 53 K instructions, 15% of a measured
 * process's start-up, in every C program too. */
void mc_cxx_resolve(const void *allocator)
{
	alloc_base = allocator;
	slow_all = allocator && mc_opt.track;
	atomic_store_explicit(&resolved, 1, memory_order_release);
}

/* The next definition of f: looked up at f's first call, and again
 * while there is none (a C program that loads a C++ plugin loads
 * libstdc++ after start-up).  Before it, is_owned(f) is not asked. */
static void *next_of(enum fn f)
{
	if (unlikely(!atomic_load_explicit(&resolved, memory_order_acquire)))
		mc_resolve_calls();
	uintptr_t v = atomic_load_explicit(&next_fn[f], memory_order_relaxed);
	if (unlikely(!v)) {
		v = find(f);
		atomic_store_explicit(&next_fn[f], v, memory_order_relaxed);
		if (!v) {
			static const char msg[] = "memcheck: a C++ operator new or delete was "
						  "called and no object defines it\n";
			mc_write_all(2, msg, sizeof msg - 1);
			abort();
		}
	}
	return (void *)(v & ~(uintptr_t)1);
}

static bool is_owned(enum fn f)
{
	return atomic_load_explicit(&owned, memory_order_relaxed) & (1u << f);
}

/* ---- the program's frame, for the calls below a forwarded one ------ */

/* Set for the duration of a forwarded call, while tracking: the frame
 * (reached by a jump, so the program's own call) and its return address.
 * An outer one stays (libstdc++'s nothrow new calls operator new). */
static bool frame_enter(void *fp)
{
	uintptr_t *h = mc_self.cxx_frame;
	if (h && (uintptr_t)h > (uintptr_t)fp && h[1] == mc_self.cxx_ret)
		return false;
	mc_self.cxx_frame = fp;
	mc_self.cxx_ret = ((uintptr_t *)fp)[1];
	return true;
}

static void frame_leave(bool mine)
{
	if (mine)
		mc_self.cxx_frame = NULL;
}

/* ---- the C++ runtime's new_handler and bad_alloc ------------------- */

typedef void (*new_handler)(void);

static new_handler get_new_handler(void)
{
	static _Atomic(new_handler (*)(void)) get;
	new_handler (*g)(void) = atomic_load_explicit(&get, memory_order_relaxed);
	if (!g) {
		g = (new_handler (*)(void))mc_sym_first("_ZSt15get_new_handlerv", NULL);
		atomic_store_explicit(&get, g, memory_order_relaxed);
	}
	return g ? g() : NULL;
}

static __attribute__((noreturn)) void throw_bad_alloc(void)
{
	void (*t)(void) = (void (*)(void))mc_sym_first("_ZSt17__throw_bad_allocv", NULL);
	if (t)
		t();
	static const char msg[] = "memcheck: operator new failed and no C++ runtime "
				  "is loaded to throw std::bad_alloc\n";
	mc_write_all(2, msg, sizeof msg - 1);
	abort();
}

/* ---- counting -------------------------------------------------------- */

static void record(void *p, size_t n, void *fp)
{
	mc_guard_enter();
	if (p) {
		mc_account_alloc(p, n, fp);
		mc_scrub(p, 0, n);
	} else {
		mc_account_failed();
	}
	mc_guard_leave();
}

static uint64_t events(void)
{
	mc_guard_enter();
	uint64_t e = mc_account_thread_events();
	mc_guard_leave();
	return e;
}


static void *call_new(void *fn, enum fn f, size_t n, size_t al)
{
	static const char nothrow = 0; /* std::nothrow_t is empty */
	switch (f) {
	case NEW:
	case NEW_ARR:
		return ((void *(*)(size_t))fn)(n);
	case NEW_NT:
	case NEW_ARR_NT:
		return ((void *(*)(size_t, const void *))fn)(n, &nothrow);
	case NEW_AL:
	case NEW_ARR_AL:
		return ((void *(*)(size_t, size_t))fn)(n, al);
	default:
		return ((void *(*)(size_t, size_t, const void *))fn)(n, al, &nothrow);
	}
}

static bool nothrow_fn(enum fn f)
{
	return f == NEW_NT || f == NEW_ARR_NT || f == NEW_AL_NT || f == NEW_ARR_AL_NT;
}

/* libstdc++'s operator new, on the allocator's malloc or aligned_alloc:
 * the loop around a failed call that runs the new_handler.  For failure
 * injection, and for the C++ runtime's align_val_t new, counted as the
 * program asked for it (n bytes). */
static void *new_as_libstdcxx(enum fn f, size_t n, size_t al, void *fp)
{
	size_t sz = n ? n : 1;
	if (al) {
		if (al & (al - 1))
			throw_bad_alloc(); /* as libstdc++ does */
		if (al < sizeof(void *))
			al = sizeof(void *);
		if (sz > SIZE_MAX - (al - 1)) {
			sz = 0; /* cannot be rounded: fails below */
		} else {
			sz = (sz + al - 1) & ~(al - 1);
		}
	}
	for (;;) {
		void *p = NULL;
		if (!mc_fault_check(fp, false) && sz) {
			mc_guard_enter();
			p = al ? mc_real.aligned_alloc(al, sz) : mc_real.malloc(sz);
			if (p) {
				mc_account_alloc(p, n, fp);
				mc_scrub(p, 0, n);
			} else
				mc_account_failed();
			mc_guard_leave();
		}
		if (p)
			return p;
		new_handler h = get_new_handler();
		if (!h) {
			if (nothrow_fn(f))
				return NULL;
			throw_bad_alloc();
		}
		h();
	}
}

/* The slow path of every new: owned ones counted here unless something
 * below was; while tracking, the calls below record the program's frame.
 * Reached by a jump from the wrapper. */
static __attribute__((noinline)) void *new_slow(enum fn f, size_t n, size_t al)
{
	void *fn = next_of(f);
	if (mc_uncounted())
		return call_new(fn, f, n, al);
	void *fp = MC_CALL_FRAME();
	bool own = is_owned(f);
	bool runtime = atomic_load_explicit(&runtime_new, memory_order_relaxed) & (1u << f);
	if ((own && unlikely(__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED))) ||
	    (runtime && ((ALIGNED_NEW & (1u << f)) || n == 0)))
		return new_as_libstdcxx(f, n, al, fp);
	uint64_t before = own ? events() : 0;
	bool mine = mc_opt.track && frame_enter(fp);
	void *p = call_new(fn, f, n, al);
	frame_leave(mine);
	if (own && events() == before)
		record(p, n, fp);
	return p;
}

static void call_delete(void *fn, enum fn f, void *p, size_t n, size_t al)
{
	static const char nothrow = 0;
	switch (f) {
	case DEL:
	case DEL_ARR:
		((void (*)(void *))fn)(p);
		return;
	case DEL_SZ:
	case DEL_ARR_SZ:
		((void (*)(void *, size_t))fn)(p, n);
		return;
	case DEL_NT:
	case DEL_ARR_NT:
		((void (*)(void *, const void *))fn)(p, &nothrow);
		return;
	case DEL_AL:
	case DEL_ARR_AL:
		((void (*)(void *, size_t))fn)(p, al);
		return;
	case DEL_SZ_AL:
	case DEL_ARR_SZ_AL:
		((void (*)(void *, size_t, size_t))fn)(p, n, al);
		return;
	default:
		((void (*)(void *, size_t, const void *))fn)(p, al, &nothrow);
		return;
	}
}

/* The slow path of every delete.  Owned: counted first (the block leaves
 * the table before the allocator can hand its address to another
 * thread), then the allocator's, under the guard; a block memcheck saw
 * freed already is reported and kept from the allocator, as free does.
 * Forwarded while tracking: the free below records the program's frame. */
static __attribute__((noinline)) void delete_slow(enum fn f, void *p, size_t n, size_t al)
{
	void *fn = next_of(f);
	if (unlikely(mc_ownheap_has(p))) {
		mc_ownheap_free(p); /* never the allocator's (ownheap.c) */
		return;
	}
	if (!p || mc_uncounted()) {
		call_delete(fn, f, p, n, al);
		return;
	}
	void *fp = MC_CALL_FRAME();
	if (!is_owned(f)) {
		bool mine = mc_opt.track && frame_enter(fp);
		call_delete(fn, f, p, n, al);
		frame_leave(mine);
		return;
	}
	bool pass_on = true;
	mc_guard_enter();
	mc_account_free(p, &pass_on, fp);
	if (likely(pass_on))
		call_delete(fn, f, p, n, al);
	mc_guard_leave();
}

/* ---- the wrappers ---------------------------------------------------- */

/* Forwarded: one load, one test and a jump, no frame (MC_FRAMELESS): the
 * definition jumped to sees the program's own call.  A plain new of 0
 * bytes takes the slow path, where the C++ runtime's is run by memcheck
 * (runtime_new); libstdc++'s array and nothrow new call the plain one
 * through the PLT, so only the plain wrapper tests n: testing it in
 * new[] too cost 4 instructions a new[] (callgrind, cxx_new phases,
 * count-only, glibc: +5.07 M over 1.27 M new[]), 2 here. */
/* The definition to jump to, or 0: the slow path. */
static inline uintptr_t forward(enum fn f)
{
	uintptr_t v = atomic_load_explicit(&next_fn[f], memory_order_relaxed);
	return likely(!(v & 1)) ? v : 0;
}

#if MC_CXX
#define NEW_FN(sym, f, params, n, al, ...)                                   \
	MC_API void *cxx_##sym params __asm__(#sym);                         \
	MC_API MC_FRAMELESS void *cxx_##sym params                           \
	{                                                                    \
		uintptr_t v = forward(f);                                    \
		if (likely(v && (f != NEW || n)))                            \
			return ((void *(*)params)v)(__VA_ARGS__);            \
		return new_slow(f, n, al);                                   \
	}
#define DEL_FN(sym, f, params, p, n, al, ...)                                \
	MC_API void cxx_##sym params __asm__(#sym);                          \
	MC_API MC_FRAMELESS void cxx_##sym params                            \
	{                                                                    \
		uintptr_t v = forward(f);                                    \
		if (likely(v)) {                                             \
			((void (*)params)v)(__VA_ARGS__);                    \
			return;                                              \
		}                                                            \
		delete_slow(f, p, n, al);                                    \
	}

typedef const struct nothrow_t nothrow_t;

NEW_FN(_Znwm, NEW, (size_t n), n, 0, n)
NEW_FN(_Znam, NEW_ARR, (size_t n), n, 0, n)
NEW_FN(_ZnwmRKSt9nothrow_t, NEW_NT, (size_t n, nothrow_t *t), n, 0, n, t)
NEW_FN(_ZnamRKSt9nothrow_t, NEW_ARR_NT, (size_t n, nothrow_t *t), n, 0, n, t)
NEW_FN(_ZnwmSt11align_val_t, NEW_AL, (size_t n, size_t al), n, al, n, al)
NEW_FN(_ZnamSt11align_val_t, NEW_ARR_AL, (size_t n, size_t al), n, al, n, al)
NEW_FN(_ZnwmSt11align_val_tRKSt9nothrow_t, NEW_AL_NT, (size_t n, size_t al, nothrow_t *t),
       n, al, n, al, t)
NEW_FN(_ZnamSt11align_val_tRKSt9nothrow_t, NEW_ARR_AL_NT, (size_t n, size_t al, nothrow_t *t),
       n, al, n, al, t)

DEL_FN(_ZdlPv, DEL, (void *p), p, 0, 0, p)
DEL_FN(_ZdaPv, DEL_ARR, (void *p), p, 0, 0, p)
DEL_FN(_ZdlPvm, DEL_SZ, (void *p, size_t n), p, n, 0, p, n)
DEL_FN(_ZdaPvm, DEL_ARR_SZ, (void *p, size_t n), p, n, 0, p, n)
DEL_FN(_ZdlPvRKSt9nothrow_t, DEL_NT, (void *p, nothrow_t *t), p, 0, 0, p, t)
DEL_FN(_ZdaPvRKSt9nothrow_t, DEL_ARR_NT, (void *p, nothrow_t *t), p, 0, 0, p, t)
DEL_FN(_ZdlPvSt11align_val_t, DEL_AL, (void *p, size_t al), p, 0, al, p, al)
DEL_FN(_ZdaPvSt11align_val_t, DEL_ARR_AL, (void *p, size_t al), p, 0, al, p, al)
DEL_FN(_ZdlPvmSt11align_val_t, DEL_SZ_AL, (void *p, size_t n, size_t al), p, n, al, p, n, al)
DEL_FN(_ZdaPvmSt11align_val_t, DEL_ARR_SZ_AL, (void *p, size_t n, size_t al), p, n, al, p, n,
       al)
DEL_FN(_ZdlPvSt11align_val_tRKSt9nothrow_t, DEL_AL_NT, (void *p, size_t al, nothrow_t *t), p, 0,
       al, p, al, t)
DEL_FN(_ZdaPvSt11align_val_tRKSt9nothrow_t, DEL_ARR_AL_NT, (void *p, size_t al, nothrow_t *t), p,
       0, al, p, al, t)
#endif
