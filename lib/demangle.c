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
#include <stdatomic.h>
#include <stdint.h>
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

/* The names demangled before: a gtest program's records each end in the
 * same eight frames of gtest's (testing::Test::Run() ...), and a name
 * costs __cxa_demangle 4,000-13,000 instructions.  What a mangled name
 * demangles to never changes, so the memo is the process's, never
 * cleared: slots of (hash, offset in the arena), the arena each mangled
 * name followed by its demangling, both with their NULs.  A name is kept
 * at its second showing, its first leaving only its hash: names shown
 * once (most of a program's own frames) cost no arena pages (cxx_names:
 * 6 page faults where every name was kept).  A slot taken again is
 * overwritten.  One thread at a time, without a lock: another finds it
 * busy and demangles (a heap error's report, or a forked child whose
 * parent held it at the fork). */
#define MEMO_SLOTS 256
#define ONCE UINT32_MAX     /* a slot's off: seen once, not kept */
struct memo_slot {
	uint64_t hash;      /* 0: empty */
	uint32_t off;       /* the mangled name's, in arena; or ONCE */
	uint32_t len;       /* its length, the demangling after its NUL */
};
static struct memo_slot *memo;
static struct mc_buf arena;
static atomic_flag memo_busy = ATOMIC_FLAG_INIT;

/* The demangling memo keeps for lk (n bytes), or NULL. */
static const char *memo_get(const char *lk, size_t n, uint64_t h)
{
	const struct memo_slot *m = memo ? &memo[h % MEMO_SLOTS] : NULL;
	if (!m || m->hash != h || m->off == ONCE || m->len != n ||
	    memcmp(arena.s + m->off, lk, n) != 0)
		return NULL;
	return arena.s + m->off + n + 1;
}

static void memo_put(const char *lk, size_t n, uint64_t h, const char *name, size_t nlen)
{
	if (!memo && !(memo = mc_map(MEMO_SLOTS * sizeof *memo)))
		return;
	struct memo_slot *m = &memo[h % MEMO_SLOTS];
	size_t off = arena.len;
	if (m->hash != h || m->off != ONCE || m->len != n || off >= ONCE / 2 || n >= ONCE) {
		*m = (struct memo_slot){ h, ONCE, (uint32_t)n };
		return;
	}
	mc_buf_put(&arena, lk, n + 1);
	mc_buf_put(&arena, name, nlen + 1);
	if (!arena.oom)
		m->off = (uint32_t)off;
}

static const char *cut_into(char *buf, size_t cap, const char *name, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, name, n);
	buf[n] = 0;
	return buf;
}

const char *mc_frame_demangled(const struct mc_frame_info *fi, char *buf, size_t cap)
{
	demangle_fn *d = cap ? find_demangler() : NULL;
	if (!d)
		return fi->function;
	const char *lk = fi->linkage;
	size_t n = strlen(lk);
	uint64_t h = mc_fnv1a(lk, n) | 1;   /* 0: an empty slot */
	bool mine = !atomic_flag_test_and_set_explicit(&memo_busy, memory_order_acquire);
	const char *kept = mine ? memo_get(lk, n, h) : NULL;
	if (kept) {
		cut_into(buf, cap, kept, strlen(kept));
		atomic_flag_clear_explicit(&memo_busy, memory_order_release);
		return buf;
	}
	int status = -1;
	mc_guard_enter();
	char *name = d(lk, NULL, NULL, &status);
	mc_guard_leave();
	const char *shown = fi->function;
	if (name && status == 0) {
		size_t len = strlen(name);
		if (mine)
			memo_put(lk, n, h, name, len);
		shown = cut_into(buf, cap, name, len);
	}
	mc_forward_free(name);
	if (mine)
		atomic_flag_clear_explicit(&memo_busy, memory_order_release);
	return shown;
}
