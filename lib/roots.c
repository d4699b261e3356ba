/*
 * roots.c - the roots of the scan: wherever valgrind's leak check would
 * find a pointer of the program's.
 *
 *  - The writable segments of every loaded object but memcheck's, to the
 *    end of their last page (the dynamic linker keeps memory of its own
 *    after its data), their resident pages only (mc_roots_stop says why),
 *    less glibc's main arena in the C library's (glibcarena.c), and
 *    memory the program registered (memcheck_add_root).
 *  - The program's own mappings (mappings.c): arenas, shared memory.
 *  - Every thread of the process, other threads held still while the scan
 *    runs (threads.c), also those memcheck never saw allocate: its stack
 *    from its stack pointer up (not the 128-byte red zone below it:
 *    valgrind's memcheck makes it undefined at every call and return, so
 *    that only what the function running wrote there since could count,
 *    and a thread stopped anywhere held stale copies there of what its
 *    returned calls handled), its general registers,
 *    and its thread descriptor with the static TLS blocks below it (which
 *    hold pthread_setspecific's values and __thread variables).  Its DTV,
 *    the array that leads to the dynamic TLS blocks of dlopen'd
 *    libraries, is a root where the C library did not allocate it with
 *    malloc: the main thread's, in the dynamic linker's own memory.  A
 *    DTV from malloc is a block like any other, reached as valgrind
 *    reaches it.
 *  - The thread that ends the process: not its stack from memcheck's
 *    destructor up, but from the frame that called exit.  Below that
 *    frame lie frames that returned before exit began (a local struct
 *    that held the only pointer to a leaked list, memcheck's own malloc
 *    hooks, which saved the program's registers) and the exit handlers'
 *    frames, which the C library's exit code covers without writing
 *    them: valgrind skips those words as undefined, memcheck cannot tell
 *    them from live ones.  The frame is found by its return address into
 *    exit(); exit's own frame (its prologue, decoded) holds nothing of
 *    the program's, and the six words below the return address are the
 *    program's callee-saved registers as exit's callee saved them.
 *
 * Threads are listed and stopped after the block table is locked and
 * before the scan reads memory; anything that takes a lock another thread
 * may hold (dl_iterate_phdr, dlsym, the mapping table) is done first.
 * Every range that comes from a thread (stacks, descriptors, DTVs) is
 * cut to what /proc/self/maps shows readable then, with the threads
 * stopped: the scan never reads memory that may be unmapped.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ---- roots the program registered ----------------------------------- */

/* Roots the program registered (memcheck_add_root). */
#define MAX_USER_ROOTS 64
static struct mc_root user_roots[MAX_USER_ROOTS];
static pthread_mutex_t user_lock = PTHREAD_MUTEX_INITIALIZER;

static int user_root_add(const void *ptr, size_t size)
{
	if (!ptr || !size)
		return -1;
	int rc = -1;
	pthread_mutex_lock(&user_lock);
	for (int i = 0; i < MAX_USER_ROOTS; i++) {
		if (!user_roots[i].hi) {
			user_roots[i] = (struct mc_root){ (uintptr_t)ptr, (uintptr_t)ptr + size, MC_ROOT_PLAIN };
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&user_lock);
	return rc;
}

MC_API int memcheck_add_root(const void *ptr, size_t size)
{
	return user_root_add(ptr, size);
}

/* memcheck's own among them (life.c: the entries of the exit-function
 * lists glibc has not run yet, at exit), not through the PLT */
bool mc_roots_user_add(const void *ptr, size_t size)
{
	return user_root_add(ptr, size) == 0;
}

MC_API int memcheck_remove_root(const void *ptr)
{
	int rc = -1;
	pthread_mutex_lock(&user_lock);
	for (int i = 0; i < MAX_USER_ROOTS; i++) {
		if (user_roots[i].hi && user_roots[i].lo == (uintptr_t)ptr) {
			user_roots[i] = (struct mc_root){ 0, 0, MC_ROOT_PLAIN };
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&user_lock);
	return rc;
}

/* threadstart.c's records of threads made and not yet started, each
 * with the program's argument that the thread's descriptor holds bare:
 * a root from the first (mc_roots_pending_starts). */
static _Atomic uintptr_t pending_lo, pending_hi;

void mc_roots_pending_starts(const void *lo, size_t size)
{
	if (atomic_load_explicit(&pending_hi, memory_order_relaxed))
		return;
	atomic_store_explicit(&pending_lo, (uintptr_t)lo, memory_order_relaxed);
	atomic_store_explicit(&pending_hi, (uintptr_t)lo + size, memory_order_release);
}

/* Held across fork (life.c's handlers): a child must not start with
 * it held by a thread it does not have.  Nothing allocates under it. */
void mc_roots_prefork(void)
{
	pthread_mutex_lock(&user_lock);
}

void mc_roots_postfork(bool child)
{
	if (child)
		mc_mutex_reset(&user_lock);
	else
		pthread_mutex_unlock(&user_lock);
}

/* Each registered root to fn. */
static void user_roots_each(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	pthread_mutex_lock(&user_lock);
	for (int i = 0; i < MAX_USER_ROOTS; i++)
		if (user_roots[i].hi)
			fn(user_roots[i].lo, user_roots[i].hi, arg);
	pthread_mutex_unlock(&user_lock);
}

#define SAVED_REGS 6   /* rbx, rbp, r12-r15: what a callee may save */

struct mc_roots {
	struct mc_root *v;
	size_t n, cap;
	bool full;
	bool self_seen;               /* libmemcheck's object found (skipped) */
	uintptr_t self_tls_off;       /* libmemcheck's static TLS block, below */
	uintptr_t self_tls_size;      /* each thread pointer: skipped too */
	uintptr_t alloc_tls_off;      /* the allocator's, below each thread */
	uintptr_t alloc_tls_size;     /* pointer: a root of its data's kind */
	struct mc_prog_maps prog;        /* the program's mappings, copied */
	struct mc_root *seg;          /* the objects' writable segments, */
	size_t nseg, segcap;          /* roots once cut to resident pages */
	bool maps_read;               /* mc_roots_rest has used maps */
	struct mc_vmas *maps;         /* in the roots' mapping, after the
				       * arrays: 3 KiB a clean exit never
				       * touches (mc_roots_rest) */
	struct mc_threads threads;
	uintptr_t *regs;              /* stopped threads' registers: a root */
	size_t regs_bytes;
	struct mc_root *dead;         /* dead alternate stacks: cut out of */
	size_t ndead;                 /* every root (mc_roots_stop) */
};

/* The root list with the first storage of its three arrays, in one
 * mapping: a scan made four (the list, the objects' segments, the roots
 * cut to resident pages, the program's mappings read), five pages in all
 * where these are five too (mc_roots_begin).  What every scan writes
 * first (the list's head, the segments, the first roots), on its first
 * page (128 roots, 32 objects' segments: more are grown elsewhere,
 * mc_grow_from); the maps' table (3 KiB) and entries after them,
 * written only when they are read (mc_roots_rest): a clean exit writes
 * one page of it, where the segments on the third page made it two. */
#define FIRST_ROOTS 128 /* with the head and the segments, one page */
#define FIRST_SEGS 32
#define FIRST_VMAS 256
struct roots_map {
	struct mc_roots r; /* first: the pointer handed out */
	struct mc_root seg[FIRST_SEGS];
	struct mc_root v[FIRST_ROOTS];
	struct mc_vmas maps;
	struct mc_vma vma[FIRST_VMAS];
};
_Static_assert(offsetof(struct roots_map, maps) <= 4096, "the first page: head, segments, roots");

static struct roots_map *map_of(struct mc_roots *r)
{
	return (struct roots_map *)r;
}

/* ---- what the C library says about threads, found once --------------- */

static struct {
	bool done;
	size_t static_size;        /* static TLS blocks and descriptor */
	size_t pthread_size;       /* the descriptor, at the thread pointer */
	size_t dtv_off;            /* the DTV pointer in the descriptor */
	uintptr_t exit_lo, exit_hi; /* exit(), and its frame below the return */
	size_t exit_frame;         /* address, from its prologue */
	uintptr_t main_tp;         /* the main thread's thread pointer */
	const void *in_libc;       /* the C library's object */
	bool cache_looked;         /* stack_lists_found ran */
	uintptr_t stack_cache;     /* the list head of finished threads' stacks */
	uintptr_t stack_used;      /* the list head of stacks in use, unjoined ones too */
	size_t list_off;           /* the descriptor's link in those lists */
	size_t tid_off;            /* the descriptor's tid, 0 once the thread ended */
} libc;

/* The frame exit() keeps below its caller's return address: its pushes
 * and stack adjustment, decoded from its first instructions (endbr64,
 * push, push rbp + mov rsp,rbp, sub imm8/imm32).  Anything else ends the
 * prologue. */
static size_t prologue_frame(const unsigned char *c)
{
	size_t frame = 0;
	if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		c += 4;
	for (int i = 0; i < 16; i++) {
		if (c[0] >= 0x50 && c[0] <= 0x57) {
			frame += 8;
			c += 1;
		} else if (c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) {
			frame += 8;
			c += 2;
		} else if (c[0] == 0x48 && c[1] == 0x89 && c[2] == 0xe5) {
			c += 3; /* mov %rsp, %rbp */
		} else if (c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xec) {
			frame += c[3];
			c += 4;
		} else if (c[0] == 0x48 && c[1] == 0x81 && c[2] == 0xec) {
			uint32_t imm;
			memcpy(&imm, c + 3, sizeof imm);
			frame += imm;
			c += 7;
		} else {
			break;
		}
	}
	return frame;
}

/* glibc's cache of finished threads' stacks (nptl's allocatestack.c,
 * 2.34 on): a joined or detached thread that ended leaves its stack
 * block, descriptor and static TLS included, mapped on the list
 * _rtld_global._dl_stack_cache, for the next thread to take.  Its
 * descriptor still points into its DTV (header.dtv, one entry past the
 * array's start), a block of malloc's that no live thread reaches:
 * valgrind, which reads every mapping of the program's, finds that
 * pointer (a joined thread's DTV, --run-libc-freeres=no: possibly lost
 * 272 bytes, where memcheck said definitely lost), and so does the scan
 * now (mc_roots_rest).  The list head is found through nptl_db's
 * descriptions in the C library: the offsets of _dl_stack_used and
 * _dl_stack_user in struct rtld_global, which the cache's list follows
 * (ldsodefs.h: used, user, cache, each a list_t of two pointers), and
 * of the link in the descriptor; the structure itself through
 * __nptl_rtld_global.  Where the two offsets are not 16 bytes apart,
 * the layout is not the one read here, and no cache is scanned.
 *
 * A joinable thread that ended and was never joined keeps its stack
 * block on the other list, _dl_stack_used, with the running threads',
 * until a pthread_join that never comes: its descriptor holds what the
 * thread returned (result) and the pointer into its DTV, and valgrind
 * reads it as it reads a cached one (tests/prog/plain_unjoined: the
 * two results still reachable, the two DTVs possibly lost, where
 * memcheck said all four definitely lost), whatever
 * --run-libc-freeres says: freeres frees the cache, not a stack in
 * use.  Such a thread is no task of the process any more (not in
 * /proc/self/task, not stopped, not scanned as a thread): the kernel
 * cleared its descriptor's tid as it ended (CLONE_CHILD_CLEARTID),
 * which tells it from the live threads on the list, read with the
 * others (mc_roots_rest).  Looked up in every threaded process. */
/* The cache only under valgrind's text with --run-libc-freeres=no: valgrind's
 * default runs __libc_freeres, which frees the cache before the leak
 * check, and so does memcheck's valgrind command line; memcheck's own
 * reports follow valgrind's default, where a block a joined thread
 * returned (its descriptor's result) is lost once the program forgot
 * it (tests/prog/plain_getattr_self: definitely lost 33 bytes, as
 * valgrind says; still reachable under valgrind with freeres off). */
static bool cache_read(void)
{
	return mc_opt.valgrind_text != MC_VGTEXT_NONE && !(mc_opt.valgrind_freeres & MC_FREERES_LIBC);
}

/* A word of the C library's nptl_db descriptions at p (its .rodata),
 * read in memcheck's own view of its file where the RSS figures are
 * measured (ownread.c's mc_own_read): read in the program's mapping, the
 * first read at a measured exit's scan faulted a 64 KiB block of the C
 * library's read-only data that the bare program never maps (zix's
 * test_tree under mimalloc, perf record -e page-faults -d: libc_facts's
 * read of _thread_db_sizeof_pthread). */
static __attribute__((noinline)) uint32_t libc_word(const uint32_t *p)
{
	uint32_t w;
	if (!mc_own_read_recording())
		return *p;
	mc_own_read(p, &w, sizeof w);
	return w;
}

static void stack_lists_found(void)
{
	/* none in a process that never made a thread: a measured
	 * process's exit spent ~5 K instructions on the lookups (the walk of
	 * the objects) */
	if (libc.cache_looked || !libc.in_libc || mc_never_threaded())
		return;
	libc.cache_looked = true;
	static const char *const names[] = { "_thread_db_rtld_global__dl_stack_used",
					     "_thread_db_rtld_global__dl_stack_user",
					     "_thread_db_pthread_list", "_thread_db_pthread_tid",
					     "__nptl_rtld_global" };
	void *found[MC_ARRAY_SIZE(names)];
	mc_sym_in_each(libc.in_libc, names, found, MC_ARRAY_SIZE(names));
	uintptr_t *const *rtld = found[4];
	if (!found[0] || !found[1] || !found[2] || !found[3] || !rtld || !*rtld)
		return;
	/* each {bits, count, offset}: the offsets */
	const uint32_t *const *d = (const uint32_t *const *)found;
	uint32_t used = libc_word(d[0] + 2), user = libc_word(d[1] + 2), link = libc_word(d[2] + 2);
	uint32_t tid = libc_word(d[3] + 2);
	if (user != used + 16 || link + 16 > libc.pthread_size || tid + 4 > libc.pthread_size)
		return;
	libc.stack_used = (uintptr_t)*rtld + used;
	if (cache_read())
		libc.stack_cache = (uintptr_t)*rtld + user + 16;
	libc.list_off = link;
	libc.tid_off = tid;
}

/* Before the first scan's locks.  Found by hand (elfsym.c), not with
 * dlsym: any call into the dynamic linker's dlerror machinery (dlsym,
 * dlopen) throws away the thread's pending dlerror state, which is the
 * program's.  glibc (2.34-2.36 _dlerror_run) frees the message the
 * program's failed dlopen left (and the 24-byte record in libc's
 * thread-local __libc_dlerror_result that holds it) when the call
 * succeeds, with memcheck's guard held, so uncounted: at the first
 * scan, which is a preloaded program's exit, both blocks were still
 * in the table and no longer referenced, and were reported definitely
 * lost where valgrind (--run-libc-freeres=no) says still reachable
 * (libuv's test dlerror failed; tests/prog/plain_dlerror_kept).  Out of
 * line, beside mc_roots_begin: an exit inside exit() asks first, before
 * its scan (mc_roots_io_list).  Two walks of the objects: every name in
 * one (elfsym.c's mc_sym_first_but: the C library's descriptions and its
 * _IO_list_all in the object that defines the first, the dynamic
 * linker's function and exit after libmemcheck, as RTLD_NEXT finds
 * them), exit's size in the other, in its object as _dl_find_object
 * names it.  Six walks, dl_iterate_phdr and each
 * object's dynamic section read again for each name, were 15.7 K
 * instructions of every measured process's exit (callgrind,
 * bench/suite_test 3; doc/costs.md, exit58).  The names in an array of
 * their own, which text-order.ld places with the function's strings: a
 * string literal that only a static array of pointers names lies in the
 * file's common strings, a 64 KiB block away (test_codeblocks: a
 * passing process's code and read-only data from 4 blocks). */
#define LN_DTVP "_thread_db_pthread_dtvp"
#define LN_IO_LIST "_IO_list_all"
#define LN_STATIC_INFO "_dl_get_tls_static_info"
static const char libc_names[] = LN_DTVP "\0" LN_IO_LIST "\0" LN_STATIC_INFO "\0exit";
/* each name's offset in libc_names, from the lengths of those before it */
#define LN_AT_IO_LIST (sizeof LN_DTVP)
#define LN_AT_STATIC_INFO (LN_AT_IO_LIST + sizeof LN_IO_LIST)
#define LN_AT_EXIT (LN_AT_STATIC_INFO + sizeof LN_STATIC_INFO)

static __attribute__((noinline)) void libc_facts(void)
{
	if (libc.done)
		return;
	libc.done = true;
	static const char *const in_names[] = { libc_names, libc_names + LN_AT_IO_LIST };
	static const char *const next_names[] = { libc_names + LN_AT_STATIC_INFO, libc_names + LN_AT_EXIT };
	void *in[MC_ARRAY_SIZE(in_names)], *next[MC_ARRAY_SIZE(next_names)], *first;
	const struct mc_sym_next_req req = { next_names, next, MC_ARRAY_SIZE(next_names) };
	const void *in_libc = NULL;
	const uint32_t *psize = mc_sym_first_but("_thread_db_sizeof_pthread", NULL, &first,
						 &in_libc, in_names, in, MC_ARRAY_SIZE(in_names),
						 &req);
	/* the dynamic linker's, after libmemcheck where that is preloaded;
	 * loaded by dlopen, libmemcheck comes after it: the first */
	if (!next[0])
		next[0] = mc_sym_first(libc_names + LN_AT_STATIC_INFO, NULL);
	void (*static_info)(size_t *, size_t *) = (void (*)(size_t *, size_t *))next[0];
	const uint32_t *dtvp = in[0];
	if (static_info && psize && dtvp) {
		size_t align = 0;
		static_info(&libc.static_size, &align);
		libc.pthread_size = libc_word(psize);
		libc.dtv_off = libc_word(dtvp + 2); /* nptl_db's {bits, count, offset} */
		if (libc.static_size < libc.pthread_size || libc.dtv_off >= libc.pthread_size)
			libc.static_size = libc.pthread_size = 0;
		libc.in_libc = in_libc;
	}
	/* in the C library's own table */
	if (in_libc)
		mc_io_list_all = in[1];
#if defined(__x86_64__)
	/* exit's size from its own entry, found by its hash: dladdr1
	 * walked the C library's dynamic symbols for it (~40 K
	 * instructions of every measured process's exit) */
	void *e = next[1];
	size_t size = 0;
	/* in the object that defines it (_dl_find_object, no walk) */
	if (e && mc_sym_in_sized(mc_object_base(e, NULL), libc_names + LN_AT_EXIT, &size) == e && size) {
		libc.exit_lo = (uintptr_t)e;
		libc.exit_hi = libc.exit_lo + size;
		libc.exit_frame = prologue_frame(e);
	}
#endif
}

/* At start-up, on the main thread (the constructor).  The process id
 * through mc_pid, the thread's through mc_tid, which the first thread
 * slot and the first stack capture ask for next: one getpid and one
 * gettid for all (no fork can have come between). */
void mc_roots_init(void)
{
	if (mc_pid() == mc_tid())
		libc.main_tp = mc_thread_pointer();
}

/* ---- the root list --------------------------------------------------- */

static void add_kind(struct mc_roots *r, uintptr_t lo, uintptr_t hi, int kind);

void mc_roots_add(struct mc_roots *r, uintptr_t lo, uintptr_t hi)
{
	add_kind(r, lo, hi, MC_ROOT_PLAIN);
}

static void add_root(struct mc_roots *r, uintptr_t lo, uintptr_t hi, int kind)
{
	for (size_t i = 0; unlikely(i < r->ndead); i++) {
		const struct mc_root *d = &r->dead[i];
		if (d->lo < hi && d->hi > lo) {
			if (lo < d->lo)
				add_root(r, lo, d->lo, kind);
			if (d->hi < hi)
				add_root(r, d->hi, hi, kind);
			return;
		}
	}
	lo = (lo + 7) & ~(uintptr_t)7;
	hi &= ~(uintptr_t)7;
	if (lo >= hi)
		return;
	if (!mc_grow_from((void **)&r->v, &r->cap, r->n, sizeof *r->v, FIRST_ROOTS, map_of(r)->v)) {
		if (!r->full)
			mc_log("no memory for more root ranges: the rest are not scanned, "
			       "and blocks only they point to count as lost");
		r->full = true;
		return;
	}
	r->v[r->n++] = (struct mc_root){ lo, hi, kind };
}

/* The C library's main arena is cut out of its data: the allocator's
 * words, none of them the program's (glibcarena.c). */
static void add_kind(struct mc_roots *r, uintptr_t lo, uintptr_t hi, int kind)
{
	uintptr_t alo, ahi;
	if (kind == MC_ROOT_GLIBC && mc_glibc_arena((lo + 7) & ~(uintptr_t)7, hi & ~(uintptr_t)7, &alo, &ahi)) {
		add_root(r, lo, alo, kind);
		lo = ahi;
	}
	add_root(r, lo, hi, kind);
}

static void add_cb(uintptr_t lo, uintptr_t hi, void *arg)
{
	mc_roots_add(arg, lo, hi);
}

/* [lo, hi), cut to the readable parts /proc/self/maps showed, roots of
 * kind kind. */
static void add_mapped_kind(struct mc_roots *r, uintptr_t lo, uintptr_t hi, int kind)
{
	while (lo < hi) {
		const struct mc_vma *m = mc_vmas_next(r->maps, lo);
		if (!m || m->lo >= hi)
			return;
		if (m->lo > lo) {
			/* not mapped: on to the next mapping, in range */
			lo = m->lo;
			continue;
		}
		uintptr_t end = m->hi < hi ? m->hi : hi;
		if ((m->prot & PROT_READ) && m->kind != MC_VMA_DEVICE)
			add_kind(r, lo, end, kind);
		lo = end;
	}
}

static void add_mapped(struct mc_roots *r, uintptr_t lo, uintptr_t hi)
{
	add_mapped_kind(r, lo, hi, MC_ROOT_PLAIN);
}

/* The same, for memory of the thread whose pointer is tp (its stack, its
 * static TLS): memcheck's own TLS block left out, and the allocator's a
 * root of its kind, as its other data (scan.c's not_programs).  jemalloc
 * keeps there the keys of its radix tree's cache, each the start of the
 * gigabyte an address it looked up lies in: a block the program lost
 * that starts there was still reachable (one round in a hundred of
 * tests/prog/plain_leak_asleep under jemalloc, where a new arena's first
 * block fell on a gigabyte; every aligned_alloc(1 << 30, n) the program
 * lost, tests/prog/plain_leak_gigabyte).  valgrind replaces the
 * allocator: its thread-local data then holds none of them. */
static void add_thread_mapped(struct mc_roots *r, uintptr_t lo, uintptr_t hi, uintptr_t tp)
{
	struct {
		uintptr_t lo, hi;
		int kind; /* -1: not a root */
	} cut[2] = { { tp - r->self_tls_off, tp - r->self_tls_off + r->self_tls_size, -1 },
		     { tp - r->alloc_tls_off, tp - r->alloc_tls_off + r->alloc_tls_size,
		       MC_ROOT_ALLOCATOR } };
	if (!tp || !r->self_tls_size)
		cut[0].lo = cut[0].hi = 0;
	if (!tp || !r->alloc_tls_size)
		cut[1].lo = cut[1].hi = 0;
	if (cut[1].lo < cut[0].lo) { /* in address order */
		__typeof__(cut[0]) t = cut[0];
		cut[0] = cut[1];
		cut[1] = t;
	}
	for (int i = 0; i < 2 && lo < hi; i++) {
		if (cut[i].hi <= lo || cut[i].lo >= hi)
			continue;
		if (lo < cut[i].lo)
			add_mapped(r, lo, cut[i].lo);
		uintptr_t end = cut[i].hi < hi ? cut[i].hi : hi;
		if (cut[i].kind >= 0)
			add_mapped_kind(r, lo > cut[i].lo ? lo : cut[i].lo, end, cut[i].kind);
		lo = end;
	}
	if (lo < hi)
		add_mapped(r, lo, hi);
}

/* [lo, hi) taken out of every root listed so far: a root across it
 * keeps its part below, its part above becomes a root of its own. */
void mc_roots_cut(struct mc_roots *r, uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0, n = r->n; i < n; i++) {
		struct mc_root v = r->v[i];
		if (v.lo >= hi || v.hi <= lo)
			continue;
		if (lo > v.lo) {
			r->v[i].hi = lo & ~(uintptr_t)7;
			if (v.hi > hi)
				add_root(r, hi, v.hi, v.kind);
		} else {
			r->v[i].lo = v.hi > hi ? (hi + 7) & ~(uintptr_t)7 : v.hi;
		}
	}
}

/* Is [p, p + size) inside a loaded object's writable segment? */
bool mc_roots_in_data(const struct mc_roots *r, uintptr_t p, size_t size)
{
	for (size_t i = 0; i < r->nseg; i++)
		if (p >= r->seg[i].lo && p + size <= r->seg[i].hi)
			return true;
	return false;
}

FILE *const *mc_io_list_all;

size_t mc_roots_count(const struct mc_roots *r)
{
	return r->n;
}

const struct mc_root *mc_roots_at(const struct mc_roots *r, size_t i)
{
	return &r->v[i];
}

/* ---- before the locks ------------------------------------------------ */

/* Is info libmemcheck's own object, loaded as one (linked into the
 * program, it is the program's: nothing to skip)?  Its segments hold
 * this code.  dladdr1 said so at every scan, with a walk of all of
 * libmemcheck's symbols for the nearest (~40 K instructions). */
static bool is_self(const struct dl_phdr_info *info)
{
	uintptr_t here = (uintptr_t)&is_self;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && here >= lo && here - lo < ph->p_memsz)
			return true;
	}
	return false;
}

/* An object's static TLS block, which lies at the same distance below
 * every thread's pointer (add_thread_mapped): that distance and its
 * size in *off and *size, left as they are for an object without one
 * or with dynamic TLS (above the thread pointer or not yet made). */
static void static_tls(const struct dl_phdr_info *info, uintptr_t *off, uintptr_t *size)
{
	uintptr_t at = (uintptr_t)info->dlpi_tls_data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_TLS && at && at < mc_thread_pointer()) {
			*off = mc_thread_pointer() - at;
			*size = ph->p_memsz;
		}
	}
}

static int phdr_roots(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mc_roots *r = arg;
	if (!r->self_seen && is_self(info)) {
		r->self_seen = true;
		/* memcheck's own thread-local data (the unwinder's copies of
		 * stack words, its caches) is no root either */
		static_tls(info, &r->self_tls_off, &r->self_tls_size);
		return 0;
	}
	int kind = MC_ROOT_PLAIN;
	if (info->dlpi_addr && (const void *)info->dlpi_addr == mc_allocator_glibc_base())
		kind = MC_ROOT_GLIBC;
	else if (info->dlpi_addr && mc_allocator_own_code(info->dlpi_addr))
		kind = MC_ROOT_ALLOCATOR;
	if (kind == MC_ROOT_ALLOCATOR)
		static_tls(info, &r->alloc_tls_off, &r->alloc_tls_size);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t at = (uintptr_t)info->dlpi_tls_data;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
			uintptr_t hi = (lo + ph->p_memsz + 4095) & ~(uintptr_t)4095;
			if (mc_grow_from((void **)&r->seg, &r->segcap, r->nseg, sizeof *r->seg,
					 FIRST_SEGS, map_of(r)->seg))
				r->seg[r->nseg++] = (struct mc_root){ lo, hi, kind };
			else
				add_kind(r, lo, hi, kind); /* read whole */
		} else if (ph->p_type == PT_TLS && info->dlpi_tls_data && !libc.static_size) {
			/* no word from the C library on where static TLS is:
			 * this thread's blocks, as dl_iterate_phdr gives them */
			add_kind(r, at, at + ph->p_memsz, kind == MC_ROOT_ALLOCATOR ? kind : MC_ROOT_PLAIN);
		}
	}
	return 0;
}

/* Rare: at an exit inside exit(), before its scan (life.c). */
struct _IO_FILE *const *mc_roots_io_list(void)
{
	libc_facts();
	return mc_io_list_all;
}

struct mc_roots *mc_roots_begin(void)
{
	struct roots_map *m = mc_map(sizeof *m);
	if (!m)
		return NULL;
	struct mc_roots *r = &m->r;
	r->v = m->v;
	r->cap = FIRST_ROOTS;
	r->seg = m->seg;
	r->segcap = FIRST_SEGS;
	r->maps = &m->maps;
	libc_facts();
	stack_lists_found();
	mc_walk_objects(phdr_roots, r);
	user_roots_each(add_cb, r);
	uintptr_t pend_hi = atomic_load_explicit(&pending_hi, memory_order_acquire);
	if (pend_hi)
		mc_roots_add(r, atomic_load_explicit(&pending_lo, memory_order_relaxed), pend_hi);
	mc_mappings_copy(&r->prog);
	return r;
}

/* ---- threads --------------------------------------------------------- */

/* The top of the stack sp is on: the end of its mapping, or, for a
 * thread the C library made, the end of its descriptor, which lies at
 * the top of its stack block (the stack may be the program's own
 * memory, in a larger mapping). */
static uintptr_t stack_top(struct mc_roots *r, uintptr_t sp, uintptr_t tp)
{
	const struct mc_vma *m = mc_vmas_find(r->maps, sp);
	if (!m)
		return 0;
	uintptr_t top = m->hi;
	if (tp > sp && tp < m->hi && libc.pthread_size && tp + libc.pthread_size <= m->hi)
		top = tp + libc.pthread_size;
	return top;
}

/* Is [lo, hi) already a root (a thread's descriptor inside its stack)? */
static bool inside(uintptr_t lo, uintptr_t hi, uintptr_t slo, uintptr_t shi)
{
	return lo >= slo && hi <= shi;
}

/* A thread's descriptor and static TLS, and its DTV unless malloc made
 * it.  The stack range given is skipped where it covers them. */
static void thread_data(struct mc_roots *r, uintptr_t tp, uintptr_t slo, uintptr_t shi,
			bool (*is_block)(uintptr_t, void *), void *arg)
{
	if (!tp || !libc.pthread_size)
		return;
	uintptr_t lo = tp + libc.pthread_size - libc.static_size, hi = tp + libc.pthread_size;
	if (!inside(lo, hi, slo, shi))
		add_thread_mapped(r, lo, hi, tp);
	const struct mc_vma *m = mc_vmas_find(r->maps, tp + libc.dtv_off);
	if (!m || !(m->prot & PROT_READ))
		return;
	uintptr_t dtv = *(const uintptr_t *)(tp + libc.dtv_off);
	/* dtv[-1] holds the number of entries: the array starts there, as
	 * the C library allocates it; entries are {value, to_free}. */
	m = mc_vmas_find(r->maps, dtv - 16);
	if (!dtv || !m || !(m->prot & PROT_READ) || dtv - 16 + 8 > m->hi)
		return;
	uintptr_t len = *(const uintptr_t *)(dtv - 16);
	if (len > (1u << 20) || is_block(dtv - 16, arg))
		return;
	add_mapped(r, dtv - 16, dtv + 16 * (len + 1));
}

/* The thread that ends the process: its stack from the frame that called
 * exit (see the head of the file), or from `from` when there is none
 * (memcheck_end, a destructor run by dlclose).  The outermost such
 * frame: exit called again by an exit handler or a destructor (glibc
 * runs the handlers left) lies below the first exit's handler frames,
 * which hold what main's callees left (plain_dtorfree leak with the
 * library's destructor calling exit: still reachable, where valgrind
 * says definitely lost).  exit never returns, so no return address into
 * it lies above the first call's. */
__attribute__((no_sanitize_address))
static void exiting_stack(struct mc_roots *r, uintptr_t from, uintptr_t top, uintptr_t tp)
{
	uintptr_t found = 0, found_caller = 0;
	if (libc.exit_lo) {
		for (uintptr_t s = from; s + 8 <= top; s += 8) {
			uintptr_t w = *(const uintptr_t *)s;
			if (w <= libc.exit_lo || w > libc.exit_hi)
				continue;
			uintptr_t caller = s + libc.exit_frame + 16;
			if (caller > top || !mc_object_base((const void *)*(const uintptr_t *)(caller - 8), NULL))
				continue; /* no return address into code there */
			found = s;
			found_caller = caller;
		}
	}
	if (found) {
		mc_roots_add(r, found - SAVED_REGS * 8 < from ? from : found - SAVED_REGS * 8, found);
		add_thread_mapped(r, found_caller, top, tp);
		return;
	}
	add_thread_mapped(r, from, top, tp);
}

struct whole_run {
	struct mc_roots *r;
	uintptr_t tp;
};

static void add_whole_run(size_t i, uintptr_t lo, uintptr_t hi, void *arg)
{
	(void)i;
	const struct whole_run *w = arg;
	add_thread_mapped(w->r, lo, hi, w->tp);
}

static void add_segment_run(size_t i, uintptr_t lo, uintptr_t hi, void *arg)
{
	struct mc_roots *r = arg;
	add_kind(r, lo, hi, r->seg[i].kind);
}

/* Up to this many mappings of the program's own, the mappings are asked
 * one by one (PROCMAP_QUERY, ~0.5-1 us each, a mapping or more a
 * program mapping); past it the whole file is read at once (~25 us more
 * than the open, and ~0.3 us a line).  A measured process with 100 such
 * mappings: the scan 309 us asked, 282 us read. */
#define ASK_MAX 32

/* The dead alternate stacks of this thread and of those stopped, once
 * the program has set one: out of every root added from here on, and
 * out of a block that holds one only where it is the very block that
 * held it when it was set (mc_roots_heap_stacks, below).  Rare: out of
 * line (group 7). */
#define DEAD_BYTES 4096 /* 170 threads' stacks; more are read */

/* Does a thread's stack pointer lie in [lo, hi) (a handler running on
 * it), or may it (a thread stopped where its pointer is not known)? */
static bool stack_in_use(const struct mc_roots *r, uintptr_t lo, uintptr_t hi)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (here - lo < hi - lo)
		return true;
	for (size_t k = 0; k < r->threads.n; k++) {
		const struct mc_other_thread *o = &r->threads.v[k];
		if (o->exiting)
			continue;
		if (o->sp ? o->sp - lo < hi - lo
			  : !o->whole_hi || (o->whole_lo < hi && o->whole_hi > lo))
			return true;
	}
	return false;
}
static __attribute__((noinline, cold)) void dead_altstacks(struct mc_roots *r)
{
	size_t cap = DEAD_BYTES / sizeof *r->dead;
	r->dead = mc_map(DEAD_BYTES);
	if (!r->dead)
		return;
	uintptr_t lo, hi;
	if (mc_threads_dead_altstack(&lo, &hi))
		r->dead[r->ndead++] = (struct mc_root){ lo, hi, MC_ROOT_PLAIN };
	for (size_t k = 0; k < r->threads.n && r->ndead < cap; k++) {
		const struct mc_other_thread *o = &r->threads.v[k];
		if (o->answered && o->alt_hi > o->alt_lo)
			r->dead[r->ndead++] = (struct mc_root){ o->alt_lo, o->alt_hi, MC_ROOT_PLAIN };
	}
	/* and those a handler ran on, replaced, disabled or left by a
	 * thread that exited since (mappings.c), but where a thread runs */
	struct mc_prog_map ran[8];
	size_t n = mc_mappings_stacks_ran(ran, sizeof ran / sizeof *ran);
	for (size_t i = 0; i < n && r->ndead < cap; i++)
		if (!stack_in_use(r, ran[i].lo, ran[i].hi))
			r->dead[r->ndead++] = (struct mc_root){ ran[i].lo, ran[i].hi, MC_ROOT_PLAIN };
}

/* ---- alternate stacks in the program's heap ----------------------------
 * A stack the program allocated (stack = malloc(n), then sigaltstack)
 * holds, where no handler runs on it, the frames of the handlers that
 * returned: valgrind finds their words undefined and skips them, and a
 * handler's lost block is definitely lost; memcheck, reading the block
 * whole, found it still reachable from the dead frame.  The stack's
 * range may be cut out of the block only while the block is the very
 * one that held the stack when it was set: a stack freed without
 * SS_DISABLE leaves the kernel naming memory the allocator hands out
 * again, for a block of the stack's size in its place (glibc), to the
 * program's data, which must be read whole (a cut there took the block
 * it alone points to for lost: session 42's merge).  So signals.c's
 * sigaltstack notes the block that starts at the stack (its start,
 * size, stack and epoch) after beginning a new epoch (region.c's
 * mc_region_epoch_mark): every block allocated after the note carries
 * that epoch or a later one, so a block live at the scan with the noted
 * start, size, stack and epoch (not 0: memcheck_ignore's, or one
 * allocated with memcheck disabled, whatever its time) is the noted one
 * (another allocated before the note cannot hold that start at the
 * scan: the noted block held it then), while no renumbering of the
 * epochs came between (mc_epochs_renumbered).  Any doubt (no note, the
 * table full or busy, a stack not at a block's start or longer than it)
 * reads the block whole, as before: a handler's lost block there stays
 * still reachable, never a block of the program's data taken for lost.
 * A slot a thread; both sides only try the lock (a forked child may
 * inherit it taken): busy, no note, no cut. */
#define HEAP_STACK_SLOTS 32
static struct {
	pid_t tid;           /* the thread that set it; 0: a free slot */
	unsigned renumbered; /* mc_epochs_renumbered of b's epoch */
	uintptr_t lo, hi;
	struct mc_block b;
} heap_stacks[HEAP_STACK_SLOTS];
static atomic_flag heap_stacks_lock = ATOMIC_FLAG_INIT;

void mc_roots_altstack_note(uintptr_t lo, size_t size, const struct mc_block *b,
			    unsigned renumbered)
{
	if (atomic_flag_test_and_set_explicit(&heap_stacks_lock, memory_order_acquire))
		return;
	pid_t tid = mc_tid();
	int at = -1;
	for (int i = 0; i < HEAP_STACK_SLOTS && at < 0; i++)
		if (heap_stacks[i].tid == tid)
			at = i;
	for (int i = 0; i < HEAP_STACK_SLOTS && at < 0 && b; i++)
		if (!heap_stacks[i].tid)
			at = i;
	if (at >= 0) {
		heap_stacks[at].tid = b ? tid : 0;
		heap_stacks[at].renumbered = renumbered;
		heap_stacks[at].lo = lo;
		heap_stacks[at].hi = lo + size;
		if (b)
			heap_stacks[at].b = *b;
	}
	atomic_flag_clear_explicit(&heap_stacks_lock, memory_order_release);
}

size_t mc_roots_heap_stacks(const struct mc_roots *r, struct mc_heap_stack *out)
{
	size_t n = 0;
	if (!r->ndead || atomic_flag_test_and_set_explicit(&heap_stacks_lock, memory_order_acquire))
		return 0;
	unsigned now = atomic_load(&mc_epochs_renumbered);
	for (size_t k = 0; k < r->ndead && n < MC_HEAP_STACKS; k++)
		for (int i = 0; i < HEAP_STACK_SLOTS; i++)
			if (heap_stacks[i].tid && heap_stacks[i].lo == r->dead[k].lo &&
			    heap_stacks[i].hi == r->dead[k].hi && heap_stacks[i].renumbered == now) {
				out[n++] = (struct mc_heap_stack){ heap_stacks[i].lo, heap_stacks[i].hi,
								   heap_stacks[i].b };
				break;
			}
	atomic_flag_clear_explicit(&heap_stacks_lock, memory_order_release);
	return n;
}

void mc_roots_stop(struct mc_roots *r, const struct mc_scan_from *from)
{
	mc_threads_stop(&r->threads, from->alone);
	if (unlikely(atomic_load_explicit(&mc_program_altstack, memory_order_relaxed)))
		dead_altstacks(r);
	/* The objects' writable segments, their resident pages only, now
	 * that no other thread can write a page for the first time.  A page
	 * not resident was never written: .bss zeros, or .data as the file
	 * has it, which points to no block.  Reading it would fault it in
	 * (15-35 us a page here): the C library's .bss was 8 of a measured
	 * /bin/date's page faults at exit.  On a system with swap every
	 * page is read: mincore calls a page swapped out not resident. */
	mc_resident_each(r->seg, r->nseg, add_segment_run, r);
}

/* Without /proc/self/maps (no /proc in a chroot or a mount namespace;
 * hidepid does not hide a process's own): the stack of the thread that
 * ends the region, whose pages from its stack pointer to its top are
 * mapped and readable, as the table's one mapping.  The main thread's
 * top is the kernel's: the page that ends the program's file name, the
 * last string it put there (AT_EXECFN); another thread's the end of its
 * descriptor, at the top of its stack block.  false where neither is
 * known. */
static bool own_stack_known(struct mc_roots *r, const struct mc_scan_from *from)
{
	struct mc_vmas *t = r->maps;
	uintptr_t sp = from->sp & ~(uintptr_t)4095, tp = mc_thread_pointer(), top = 0;
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	if (tp > sp && libc.pthread_size && tp != libc.main_tp)
		top = tp + libc.pthread_size;
	else if (execfn && (uintptr_t)execfn > sp)
		top = mc_page_round((uintptr_t)execfn + strlen(execfn) + 1);
	if (!top || !t->v || t->cap == 0 || top - sp > (64u << 20))
		return false;
	t->v[0] = (struct mc_vma){ .lo = sp, .hi = top, .prot = PROT_READ | PROT_WRITE,
				   .kind = MC_VMA_STACK };
	t->n = 1;
	return true;
}

/* A step of a walk of one of glibc's lists of stacks
 * (stack_lists_found): the link that follows n (the list's head, or a
 * descriptor's link), read only where the maps show n readable and, n
 * not the head, its descriptor whole in one readable mapping (its stack
 * block's), the link and the tid inside it; 0 ends the walk (a list
 * another thread was changing when it was stopped).  *m, where m is
 * not NULL: the mapping of n's descriptor. */
static inline __attribute__((always_inline)) uintptr_t list_link(struct mc_roots *r, uintptr_t n,
								 uintptr_t head, const struct mc_vma **m)
{
	const struct mc_vma *v = mc_vmas_find(r->maps, n);
	uintptr_t tp = n - libc.list_off;
	if (!v || !(v->prot & PROT_READ) || n + 16 > v->hi)
		return 0;
	if (n != head && (n < libc.list_off || tp < v->lo || tp + libc.pthread_size > v->hi))
		return 0;
	if (m)
		*m = v;
	return *(const uintptr_t *)n;
}

/* The descriptors and static TLS of the finished threads whose stacks
 * glibc keeps on the list at head (stack_lists_found), as valgrind reads
 * them: not the rest of the dead stack, whose words valgrind's memcheck
 * made undefined as the thread's calls returned.  On the cache's list
 * every one; on the list of stacks in use (ended) those whose tid the
 * kernel cleared, the live threads' read already (one that nothing
 * stopped and no slot knows by mc_roots_rest's whole_stack, from the
 * same list: a thread that blocks every signal and computes, never
 * having allocated, tests/prog/plain_dtv_spinning and
 * plain_leak_sigblocked).  Each link read only where the maps show it readable; a list another
 * thread was changing when it was stopped ends the walk (at most 4,096
 * stacks). */
__attribute__((noinline)) static void listed_stacks(struct mc_roots *r, uintptr_t head, bool ended)
{
	uintptr_t n = list_link(r, head, head, NULL);
	for (int k = 0; n && n != head && k < 4096; k++) {
		const struct mc_vma *m = NULL;
		uintptr_t tp = n - libc.list_off, next = list_link(r, n, head, &m);
		if (!m)
			return;
		if (!ended || *(const int32_t *)(tp + libc.tid_off) == 0)
			add_thread_mapped(r, tp + libc.pthread_size - libc.static_size,
					  tp + libc.pthread_size, tp);
		n = next;
	}
}

/* A thread taken as it is, running, whose stack neither a system call
 * (its stack pointer) nor a slot (it never allocated) gives: its stack
 * block from its descriptor on glibc's list of stacks in use, found by
 * its tid, as [*lo, *hi) with the descriptor at *tp: the block's
 * mapping from its start (past the guard, a mapping of its own) to the
 * descriptor's end.  A thread that blocks every signal cannot be
 * stopped (userspace-rcu's call_rcu worker, which its creator starts
 * so): none of its stack was read, and a block only its locals held
 * was definitely lost where valgrind, which reads every thread from
 * its stack pointer, found it (tests/prog/plain_leak_sigblocked).
 * false where the list does not have it (a stack of the program's own,
 * pthread_attr_setstack: on the other list; a raw clone). */
__attribute__((noinline)) static bool listed_thread_stack(struct mc_roots *r, pid_t tid, uintptr_t *lo,
							   uintptr_t *hi, uintptr_t *tp)
{
	uintptr_t head = libc.stack_used, n = list_link(r, head, head, NULL);
	for (int k = 0; n && n != head && k < 4096; k++) {
		const struct mc_vma *m = NULL;
		uintptr_t d = n - libc.list_off, next = list_link(r, n, head, &m);
		if (!m)
			return false;
		if (*(const int32_t *)(d + libc.tid_off) == tid) {
			*lo = m->lo;
			*hi = d + libc.pthread_size;
			*tp = d;
			return true;
		}
		n = next;
	}
	return false;
}

/* Another thread, running where no signal stopped it: its whole stack
 * as its slot has it (threads.c), or, one that never allocated, as
 * glibc's list of stacks in use has it (listed_thread_stack), with its
 * static TLS at the top; its pages written only (one never written
 * holds nothing; reading it would map one), memcheck's and the
 * allocator's TLS blocks there as in any other thread's (the spinner of
 * tests/prog/plain_leak_asleep under jemalloc).  Out of line: rare (a
 * thread that blocks the signal, or had no processor for a second). */
__attribute__((noinline)) static void whole_stack(struct mc_roots *r, struct mc_other_thread *o)
{
	if (!o->whole_hi && (!libc.stack_used ||
			     !listed_thread_stack(r, o->tid, &o->whole_lo, &o->whole_hi, &o->whole_tp)))
		return;
	struct mc_root whole = { o->whole_lo, o->whole_hi, MC_ROOT_PLAIN };
	struct whole_run w = { r, o->whole_tp };
	mc_resident_each(&whole, 1, add_whole_run, &w);
}

/* A thread nothing stopped (it blocks the signal, or had no processor
 * for a second), whose descriptor is tp: the stack pointer where it
 * waits for one of memcheck's locks the scan holds (the block table's,
 * the live bytes'), read in its static TLS (mc_self.table_wait, at the
 * offset of the caller's own: initial-exec, the same in every thread),
 * else 0.  It stays there, its frames above unchanged, until the scan
 * lets go.  Such a thread is running: no system call gives its stack
 * pointer, and its whole stack was read, dead frames and all
 * (userspace-rcu's call_rcu worker freeing a node at the exit of a
 * forked child: the node still reachable from the worker's dead frames,
 * where valgrind reads it from its stack pointer).  Spinning (| 1,
 * blocks.c's mc_spin_wait), its stack pointer there; else lock_slow's
 * frame pointer, read from WAIT_BELOW bytes under it (the registers
 * lock_slow saved, go_multi's frame, where it waits for a group's
 * owner: memcheck's own frames of this call).  One not there yet,
 * between two calls or waiting for a processor, is looked at again for
 * up to 10 ms where it has called into memcheck before (a slot), or
 * until a system call gives its stack pointer (threads.c's blocked_sp:
 * userspace-rcu's worker spinning in synchronize_rcu waits on a futex
 * next): the
 * exit scans twice, and the thread released from the first was not yet
 * back at the table when the second looked, at a load of 10 on two
 * processors (tests/prog/plain_leak_sigfree under tcmalloc, 1 exit in
 * 30 read whole with a 1 ms look).  One that never did (a thread that
 * computes) is not waited for. */
#define WAIT_BELOW 256
__attribute__((noinline)) static uintptr_t table_wait_sp(struct mc_roots *r, uintptr_t tp, pid_t tid)
{
	uintptr_t at = tp + ((uintptr_t)&mc_self - mc_thread_pointer());
	const struct mc_vma *v = tp ? mc_vmas_find(r->maps, at) : NULL;
	if (!v || !(v->prot & PROT_READ) || at + sizeof mc_self > v->hi)
		return 0;
	const volatile struct mc_thread *other = (const struct mc_thread *)at;
	uintptr_t sp = other->table_wait;
	uintptr_t pc;
	for (double t0 = mc_now(); !sp && other->slot && mc_now() - t0 < 0.01;) {
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
		sp = other->table_wait;
		if (!sp && tid && mc_task_blocked(tid, &sp, &pc))
			return sp; /* in a system call by now */
	}
	sp = sp & 1 ? sp & ~(uintptr_t)1 : sp ? sp - WAIT_BELOW : 0;
	v = sp ? mc_vmas_find(r->maps, sp) : NULL;
	return v && (v->prot & PROT_READ) ? sp : 0;
}

/* Such a thread's descriptor from glibc's list (listed_thread_stack),
 * where neither a signal nor its slot gave it: its static TLS and DTV
 * roots, where a system call gave only its stack pointer; and its stack
 * pointer where it waits for the table (table_wait_sp).  Out of line:
 * rare. */
__attribute__((noinline)) static void unanswered(struct mc_roots *r, struct mc_other_thread *o,
						 bool is_main)
{
	uintptr_t lo, hi, tp;
	if (is_main) {
		if (!o->sp)
			o->sp = table_wait_sp(r, libc.main_tp, o->tid);
		return;
	}
	if (!o->whole_tp && libc.stack_used && listed_thread_stack(r, o->tid, &lo, &hi, &tp)) {
		o->whole_tp = tp;
		if (!o->sp) {
			o->whole_lo = lo;
			o->whole_hi = hi;
		}
	}
	if (!o->sp)
		o->sp = table_wait_sp(r, o->whole_tp, o->tid);
}

/* The link maps of the objects ld.so loaded at the start: it made them
 * before any allocator ran, with its own one, in pages it mapped itself
 * (the rest of its data's last page, then pages of its own), which
 * valgrind, seeing every mapping, reads as roots, and memcheck, which
 * sees the program's mappings through mmap, did not.  The chain's last
 * such map holds the first map dlopen made (a block) in its l_next:
 * where that last one is not ld.so's own (in its data) but, say, the
 * allocator's libgcc_s, every object dlopen loaded, and what its map
 * holds, was definitely lost (libexpat's 1,238 + 240 bytes under
 * jemalloc and tcmalloc, reachable to valgrind).  Each map of the chain
 * that is no block is a root, from its start to the end of the name
 * that ld.so's allocation keeps after it: the first word past the
 * public fields that points into the map's first 2 KiB (its own
 * allocation: a map is larger) to a libname_list { name, next,
 * dont_free } whose name follows it; one in an object's data (the
 * rest of ld.so's last page, where glibc alone loads few enough to fit)
 * is a root already.  A map of another shape is left as it was.  Each
 * read stays within the map's mapping, found in the maps read already
 * (no query more): the chain holds ld.so's live maps alone, but a stray
 * word of one near its mapping's end must not take the scan past it. */
static void startup_maps(struct mc_roots *r, bool (*is_block)(uintptr_t p, void *arg), void *arg)
{
	enum { PUBLIC = sizeof(struct link_map), LOOK = 256, WITHIN = 2048 };
	/* the chain from libmemcheck's own map (no _r_debug: a symbol
	 * more for ld.so to look up at every start, ~370 instructions) */
	struct dl_find_object fo;
	if (_dl_find_object((void *)(uintptr_t)&startup_maps, &fo) != 0 || !fo.dlfo_link_map)
		return;
	const struct link_map *m = fo.dlfo_link_map;
	while (m->l_prev)
		m = m->l_prev;
	for (; m; m = m->l_next) {
		uintptr_t lo = (uintptr_t)m;
		size_t i = 0;
		while (i < r->nseg && (lo < r->seg[i].lo || lo >= r->seg[i].hi))
			i++;
		if (i < r->nseg || is_block(lo, arg))
			continue; /* in an object's data (ld.so's), read already; or a block */
		/* every read within the map's mapping (the maps read already):
		 * a stray word of a map near its mapping's end must not take
		 * the scan past it */
		const struct mc_vma *v = mc_vmas_find(r->maps, lo);
		if (!v || !(v->prot & PROT_READ))
			continue;
		uintptr_t hi = v->hi;
		for (uintptr_t at = lo + PUBLIC; at < lo + LOOK && at + sizeof(uintptr_t) <= hi;
		     at += sizeof(uintptr_t)) {
			const uintptr_t *q = *(const uintptr_t *const *)at;
			if ((uintptr_t)q <= at || (uintptr_t)q & 7 || (uintptr_t)q - lo >= WITHIN ||
			    (uintptr_t)(q + 3) >= hi || *q != (uintptr_t)(q + 3))
				continue;
			const char *end = (const char *)(q + 3);
			while ((uintptr_t)end < hi && *end && end - (const char *)q < 4096)
				end++;
			if ((uintptr_t)end >= hi)
				break;
			add_kind(r, lo, (uintptr_t)end + 1, MC_ROOT_PLAIN);
			break;
		}
	}
}

/* The rest, which /proc/self/maps cuts: the program's mappings, every
 * thread's stack, static TLS, DTV and registers.  Asked only when the
 * roots before them left a block unreached (scan.c): a clean exit's
 * few blocks (stdio's buffers) are reached from the C library's data,
 * and the maps are then not read at all (an open, a query or more and
 * a close of every measured process's exit). */
void mc_roots_rest(struct mc_roots *r, const struct mc_scan_from *from,
		   bool (*is_block)(uintptr_t p, void *arg), void *arg)
{
	r->maps_read = true;
	/* The process's only thread: the scan's table is freed within
	 * the region's end (region.c), before the program runs again. */
	bool few = r->prog.n <= ASK_MAX;
	bool read = (from->alone ? mc_vmas_read_sole : mc_vmas_read_into)(r->maps, map_of(r)->vma,
									FIRST_VMAS, few);
	if (!read && !own_stack_known(r, from)) {
		mc_log("cannot read /proc/self/maps: no stack, thread or mapping is a root");
		return;
	}
	if (read) {
		mc_vmas_roots(r->maps, &r->prog, add_cb, r);
		startup_maps(r, is_block, arg);
	} else
		mc_log("cannot read /proc/self/maps: only the exiting thread's stack and the "
		       "objects' data are roots");

	/* The process's only thread is its main thread: a main thread gone
	 * before the others stays counted in status's Threads: until they
	 * end (the kernel reaps it last).  No getpid and gettid then. */
	pid_t pid = from->alone ? 0 : getpid();
	uintptr_t self_tp = mc_thread_pointer();
	bool self_main = from->alone || pid == (pid_t)syscall(SYS_gettid);
	/* The stack the exit's work walks down is not populated ahead (it
	 * was, 32 KiB below here): on these VMs a page faulted in costs
	 * what a populated one does (~2 us, ownmap.c's tail), and many of
	 * the 8 populated went unused: the stack's resident pages at
	 * exit_group, a measured /bin/date 8 against 11 populated, a
	 * clean bench/suite_test 5 against 11 (8 under tcmalloc), a
	 * leaking one 14 against 16, under each of the four allocators. */
	uintptr_t sp = from->sp & ~(uintptr_t)7;
	uintptr_t top = stack_top(r, sp, self_main ? 0 : self_tp);
	if (top) {
		if (from->at_exit)
			exiting_stack(r, sp, top, self_main ? 0 : self_tp);
		else
			add_thread_mapped(r, sp, top, self_main ? 0 : self_tp);
	}
	thread_data(r, self_tp, sp, top, is_block, arg);

	struct mc_threads *t = &r->threads;
	r->regs_bytes = t->n * sizeof t->v[0].regs;
	r->regs = t->n ? mc_map(r->regs_bytes) : NULL;
	size_t nregs = 0;
	for (size_t k = 0; k < t->n; k++) {
		struct mc_other_thread *o = &t->v[k];
		if (o->exiting)
			continue; /* dead: no stack, TLS or registers (threads.c) */
		bool is_main = o->tid == pid;
		if (!o->answered)
			unanswered(r, o, is_main);
		uintptr_t tp = o->answered ? o->tp : is_main ? libc.main_tp : o->whole_tp;
		uintptr_t lo = 0, hi = 0;
		if (o->sp) {
			/* from the stack pointer: the red zone below it is
			 * undefined to valgrind at every call and return (its
			 * AbiHint), and holds what returned calls left, in a
			 * system call (tests/prog/plain_leak_blocked.c) or
			 * between two (plain_leak_running.c).  A leaf function
			 * stopped while it keeps a local there is the one case
			 * valgrind would see and this does not; its registers
			 * are still read. */
			lo = o->sp & ~(uintptr_t)7;
			hi = stack_top(r, o->sp, is_main ? 0 : tp);
			if (hi)
				add_thread_mapped(r, lo, hi, is_main ? 0 : tp);
		} else if (is_main) {
			/* where its stack pointer is not known: the whole stack
			 * (which mapping that is, only the whole file says) */
			mc_vmas_full(r->maps);
			for (size_t i = 0; i < r->maps->n; i++)
				if (r->maps->v[i].kind == MC_VMA_STACK)
					add_mapped(r, lo = r->maps->v[i].lo, hi = r->maps->v[i].hi);
		} else if (!o->answered) {
			whole_stack(r, o);
			tp = o->whole_tp;
			lo = o->whole_lo;
			hi = o->whole_hi;
		}
		thread_data(r, tp, lo, hi, is_block, arg);
		if (o->answered && r->regs) {
			for (int i = 0; i < MC_NREGS; i++)
				if (i != MC_REG_SP)
					r->regs[nregs++] = o->regs[i];
		}
	}
	if (nregs)
		mc_roots_add(r, (uintptr_t)r->regs, (uintptr_t)(r->regs + nregs));
	if (libc.stack_cache && cache_read())
		listed_stacks(r, libc.stack_cache, false); /* rare: out of line, in group 7 */
	if (libc.stack_used)
		listed_stacks(r, libc.stack_used, true);
}

void mc_roots_end(struct mc_roots *r, struct mc_buf *runs)
{
	if (!r)
		return;
	mc_threads_resume(&r->threads);
	if (runs)
		runs->len = 0;
	/* The maps' table untouched (not read): not even read here, a
	 * page fault and a copy of the zero page for nothing. */
	if (r->maps_read) {
		if (runs) {
			runs->len = r->maps->runs.len < runs->cap ? r->maps->runs.len : 0;
			if (runs->len)
				memcpy(runs->s, r->maps->runs.s, runs->len);
			if (runs->len && r->maps->asking)
				r->maps->asking = false; /* runs asks through its fd: the caller's now */
		}
		mc_vmas_free(r->maps);
	}
	mc_prog_maps_free(&r->prog);
	struct roots_map *m = map_of(r);
	if (r->seg && r->seg != m->seg)
		mc_unmap(r->seg, r->segcap * sizeof *r->seg);
	if (r->regs)
		mc_unmap(r->regs, r->regs_bytes);
	if (r->dead)
		mc_unmap(r->dead, DEAD_BYTES);
	if (r->v && r->v != m->v)
		mc_unmap(r->v, r->cap * sizeof *r->v);
	mc_unmap(m, sizeof *m);
}
