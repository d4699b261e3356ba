/*
 * scan.c - reachability scan: which live blocks can the program still
 * reach, and how.  valgrind's algorithm (mc_leakcheck.c), conservative:
 *
 *  1. Every live block goes into an array sorted by address, so that any
 *     word can be looked up by binary search: it "points to" a block when
 *     it equals the block's start (a start pointer) or falls inside it (an
 *     interior pointer).
 *  2. Roots: every aligned word of the writable PT_LOAD segments of every
 *     loaded object but memcheck's own, of the calling thread's static TLS
 *     blocks, of its stack from the current stack pointer to the top, of
 *     its callee-saved registers (copied by setjmp), and of the whole
 *     stack mapping of every other thread memcheck knows (account.c
 *     records it when a thread first allocates; its static TLS lies
 *     inside).  A start pointer marks a block reachable, an interior
 *     pointer possibly reachable; marked blocks are scanned in turn, and
 *     what a possibly reachable block points to is at best possibly
 *     reachable too.
 *  3. What is left is lost.  In address order, each block still unreached
 *     leads a "clique": everything it reaches that is unreached becomes
 *     indirectly lost (a former leader included), the leader itself stays
 *     definitely lost.  So a cycle with no outside pointer is one definite
 *     block and the rest indirect, as valgrind counts it.
 *
 * Memory for the scan comes from mc_map.  The block table is held locked
 * while block contents are read, so no other thread frees a block under
 * the scan (it waits in memcheck's free), and so are the threads' slots,
 * so no thread known to the scan ends and frees its stack meanwhile.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define MAX_ROOTS 8192 /* segments and TLS blocks of every object, and the program's */
#define MAX_THREADS 1024

struct root {
	uintptr_t lo, hi;
};


/* Roots the program registered (memcheck_add_root). */
#define MAX_USER_ROOTS 64
static struct root user_roots[MAX_USER_ROOTS];
static pthread_mutex_t user_lock = PTHREAD_MUTEX_INITIALIZER;

MC_API int memcheck_add_root(const void *ptr, size_t size)
{
	if (!ptr || !size)
		return -1;
	int rc = -1;
	pthread_mutex_lock(&user_lock);
	for (int i = 0; i < MAX_USER_ROOTS; i++) {
		if (!user_roots[i].hi) {
			user_roots[i] = (struct root){ (uintptr_t)ptr, (uintptr_t)ptr + size };
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&user_lock);
	return rc;
}

MC_API int memcheck_remove_root(const void *ptr)
{
	int rc = -1;
	pthread_mutex_lock(&user_lock);
	for (int i = 0; i < MAX_USER_ROOTS; i++) {
		if (user_roots[i].hi && user_roots[i].lo == (uintptr_t)ptr) {
			user_roots[i] = (struct root){ 0, 0 };
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&user_lock);
	return rc;
}

/* Held across fork (account.c's handlers): a child must not start with
 * it held by a thread it does not have.  Nothing allocates under it. */
void mc_scan_prefork(void)
{
	pthread_mutex_lock(&user_lock);
}

void mc_scan_postfork(bool child)
{
	if (child)
		pthread_mutex_init(&user_lock, NULL);
	else
		pthread_mutex_unlock(&user_lock);
}

/* A block as the scan sees it. */
struct node {
	uintptr_t lo;
	uint64_t size;
	uint32_t stack, epoch;
};

struct graph {
	struct node *v;
	uint8_t *state;
	uint32_t *mark;         /* stack of nodes to scan */
	size_t n, cap, nmark;
	uintptr_t min, max;     /* lowest start, highest end */
};

/* The scan's own state lives in mmap'd memory, not on the stack it
 * scans: a block address in one of its locals would be a false root. */
struct roots {
	struct root r[MAX_ROOTS];
	int n;
	uintptr_t self_base;    /* load address of libmemcheck: skipped */
	jmp_buf regs;           /* the caller's callee-saved registers */
	uintptr_t threads[MAX_THREADS][2]; /* other threads' stacks */
	struct graph g;
};

static void add_root(struct roots *rs, uintptr_t lo, uintptr_t hi)
{
	lo = (lo + 7) & ~(uintptr_t)7;
	hi &= ~(uintptr_t)7;
	if (lo >= hi)
		return;
	if (rs->n < MAX_ROOTS) {
		rs->r[rs->n++] = (struct root){ lo, hi };
		return;
	}
	static int said;
	if (!said++)
		mc_log("more than %d root ranges: the rest are not scanned, and blocks only "
		       "they point to count as lost", MAX_ROOTS);
}

static int phdr_roots(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct roots *rs = arg;
	bool self = info->dlpi_addr == rs->self_base && rs->self_base;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (self)
			break;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
			add_root(rs, lo, lo + ph->p_memsz);
		} else if (ph->p_type == PT_TLS && info->dlpi_tls_data) {
			uintptr_t lo = (uintptr_t)info->dlpi_tls_data;
			add_root(rs, lo, lo + ph->p_memsz);
		}
	}
	return 0;
}

static void collect(const struct mc_block *b, void *arg)
{
	struct graph *g = arg;
	if (g->n < g->cap)
		g->v[g->n++] = (struct node){ b->ptr, b->size, b->stack, b->aux };
}

/* Sort by address: an LSD radix sort on the start address, 16 bits a
 * pass over the bits that differ (qsort of a million blocks takes a
 * tenth of a second; this a fraction of that). */
static bool sort_nodes(struct graph *g)
{
	size_t n = g->n;
	if (n < 2)
		return true;
	uintptr_t all_or = 0, all_and = ~(uintptr_t)0;
	for (size_t i = 0; i < n; i++) {
		all_or |= g->v[i].lo;
		all_and &= g->v[i].lo;
	}
	uintptr_t diff = all_or ^ all_and;
	size_t bytes = n * sizeof *g->v;
	struct node *tmp = mc_map(bytes);
	uint32_t *count = mc_map(65536 * sizeof *count);
	if (!tmp || !count) {
		if (tmp)
			mc_unmap(tmp, bytes);
		if (count)
			mc_unmap(count, 65536 * sizeof *count);
		return false;
	}
	struct node *src = g->v, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 16) {
		if (!((diff >> shift) & 0xffff))
			continue;
		memset(count, 0, 65536 * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(src[i].lo >> shift) & 0xffff]++;
		uint32_t sum = 0;
		for (size_t k = 0; k < 65536; k++) {
			uint32_t c = count[k];
			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].lo >> shift) & 0xffff]++] = src[i];
		struct node *t = src;
		src = dst;
		dst = t;
	}
	if (src != g->v)
		memcpy(g->v, src, bytes);
	mc_unmap(tmp, bytes);
	mc_unmap(count, 65536 * sizeof *count);
	return true;
}

/* The block containing address p, or -1.  A zero-size block contains
 * its start only. */
static inline int64_t lookup(const struct graph *g, uintptr_t p)
{
	if (p < g->min || p >= g->max)
		return -1;
	size_t lo = 0, hi = g->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (g->v[mid].lo <= p)
			lo = mid;
		else
			hi = mid;
	}
	const struct node *b = &g->v[lo];
	if (b->lo > p)
		return -1;
	if (p - b->lo < b->size || p == b->lo)
		return (int64_t)lo;
	return -1;
}

static inline void push(struct graph *g, size_t i)
{
	g->mark[g->nmark++] = (uint32_t)i;
}

/* One word found in memory that the prior node makes reachable
 * (definite), possibly reachable (!definite) or, with clique >= 0, in
 * the clique led by node clique. */
static inline void consider(struct graph *g, uintptr_t w, bool definite, int64_t clique)
{
	int64_t i = lookup(g, w);
	if (i < 0)
		return;
	uint8_t *st = &g->state[i];
	if (clique < 0) {
		if (w == g->v[i].lo && definite && *st != MC_KIND_REACHABLE) {
			*st = MC_KIND_REACHABLE;
			push(g, (size_t)i);
		} else if (*st == MC_KIND_DEFINITE) {
			*st = MC_KIND_POSSIBLE;
			push(g, (size_t)i);
		}
	} else if (*st == MC_KIND_DEFINITE && i != clique) {
		*st = MC_KIND_INDIRECT;
		push(g, (size_t)i);
	}
}

__attribute__((no_sanitize_address))
static void scan_range(struct graph *g, uintptr_t lo, uintptr_t hi, bool definite, int64_t clique)
{
	for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)p < hi; p++) {
		uintptr_t w = *p;
		if (w >= g->min && w < g->max)
			consider(g, w, definite, clique);
	}
}

static void drain(struct graph *g, int64_t clique)
{
	while (g->nmark) {
		size_t i = g->mark[--g->nmark];
		const struct node *b = &g->v[i];
		bool definite = g->state[i] != MC_KIND_POSSIBLE;
		scan_range(g, b->lo, b->lo + (b->size & ~(uint64_t)7), definite, clique);
	}
}

/* The main thread's stack mapping, from /proc/self/maps ("[stack]"),
 * read without malloc: for a region ended on another thread.  The whole
 * mapping, as for other threads: its stack pointer is not known. */
static bool main_stack(uintptr_t *lo, uintptr_t *hi)
{
	size_t cap = 32 << 20; /* touched only as far as the file goes */
	char *buf = mc_map_io(cap);
	if (!buf)
		return false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	if (fd >= 0) {
		ssize_t n;
		while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
			len += (size_t)n;
		close(fd);
	}
	buf[len] = 0;
	bool found = false;
	for (char *line = buf; line && *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (strstr(line, "[stack]")) {
			char *dash;
			*lo = strtoull(line, &dash, 16);
			*hi = strtoull(dash + 1, NULL, 16);
			found = *lo && *hi > *lo;
			break;
		}
		line = end ? end + 1 : NULL;
	}
	mc_unmap_io(buf, cap);
	return found;
}

__attribute__((noinline)) static void add_main_stack(struct roots *rs)
{
	uintptr_t lo, hi;
	if (main_stack(&lo, &hi))
		add_root(rs, lo, hi);
}

/* The top of the calling thread's stack, or 0 when sp is not on it (a
 * signal handler on an alternate stack): then no stack is scanned. */
static uintptr_t stack_top(uintptr_t sp)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	uintptr_t top = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0 &&
		    sp >= (uintptr_t)addr && sp < (uintptr_t)addr + size)
			top = (uintptr_t)addr + size;
		pthread_attr_destroy(&attr);
	}
	return top;
}

/* The mark stack holds each node at most twice while roots are traced
 * (its state only rises: unreached, possible, reachable) and once more
 * while cliques are: 2n + 1 entries, n + 16 allotted per n. */
static bool scan_work(struct roots *rs, uintptr_t stack_lo, uintptr_t stack_hi)
{
	struct graph *g = &rs->g;
	mc_account_threads_lock();
	int nthreads = mc_account_other_stacks(rs->threads, MAX_THREADS);
	mc_blocks_lock_all();
	g->cap = mc_blocks_count() + 16;
	g->v = mc_map(g->cap * sizeof *g->v);
	g->state = mc_map(g->cap);
	g->mark = mc_map(2 * g->cap * sizeof *g->mark);
	bool ok = g->v && g->state && g->mark;
	if (ok) {
		mc_blocks_each_live_locked(collect, g);
		ok = sort_nodes(g);
	}
	if (ok && g->n) {
		g->min = g->v[0].lo;
		for (size_t i = 0; i < g->n; i++) {
			uintptr_t end = g->v[i].lo + (g->v[i].size ? g->v[i].size : 1);
			if (end > g->max)
				g->max = end;
		}
		/* state 0 is MC_KIND_DEFINITE: unreached */
		for (int i = 0; i < rs->n; i++) {
			scan_range(g, rs->r[i].lo, rs->r[i].hi, true, -1);
			drain(g, -1);
		}
		scan_range(g, (uintptr_t)&rs->regs, (uintptr_t)&rs->regs + sizeof rs->regs, true, -1);
		drain(g, -1);
		if (stack_hi > stack_lo)
			scan_range(g, stack_lo, stack_hi, true, -1);
		drain(g, -1);
		/* Other threads: the whole stack mapping, conservatively (their
		 * stack pointers are not known), their static TLS inside it. */
		for (int i = 0; i < nthreads; i++) {
			scan_range(g, rs->threads[i][0], rs->threads[i][1], true, -1);
			drain(g, -1);
		}
		for (size_t i = 0; i < g->n; i++) {
			if (g->state[i] != MC_KIND_DEFINITE)
				continue;
			push(g, i);
			drain(g, (int64_t)i);
		}
	}
	mc_blocks_unlock_all();
	mc_account_threads_unlock();
	if (g->mark)
		mc_unmap(g->mark, 2 * g->cap * sizeof *g->mark);
	return ok;
}

/* Not inlined: the stack scanned is the callers' frames, from the word
 * above this function's return address up; the caller's callee-saved
 * registers are copied in through setjmp, before memcheck's own code
 * has touched a block address. */
__attribute__((noinline)) bool mc_scan(struct mc_scan *out, const struct mc_scan_from *from)
{
	memset(out, 0, sizeof *out);
	double t0 = mc_now();
	struct roots *rs = mc_map(sizeof *rs);
	if (!rs)
		return false;
	__builtin_unwind_init();
	/* glibc mangles the saved stack and frame pointers in a jmp_buf,
	 * not the callee-saved registers that may hold the program's
	 * pointers: those are what matter here. */
	setjmp(rs->regs);
	uintptr_t stack_lo = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *);
	if (from) {
		/* The registers were spilled at the entry point, into the
		 * frames scanned; memcheck's own frames below are not. */
		stack_lo = from->sp & ~(uintptr_t)7;
		memset(&rs->regs, 0, sizeof rs->regs);
	}
	/* Roots before the table is locked: dl_iterate_phdr takes the
	 * dynamic linker's lock, which a thread waiting for the table inside
	 * dlopen's malloc may hold. */
	Dl_info di;
	struct link_map *lm = NULL;
	if (dladdr1((void *)&mc_scan, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
	    lm->l_name && lm->l_name[0])
		rs->self_base = lm->l_addr; /* linked statically: nothing to skip */
	dl_iterate_phdr(phdr_roots, rs);
	pthread_mutex_lock(&user_lock);
	for (int i = 0; i < MAX_USER_ROOTS; i++)
		if (user_roots[i].hi)
			add_root(rs, user_roots[i].lo, user_roots[i].hi);
	pthread_mutex_unlock(&user_lock);
	uintptr_t stack_hi = stack_top(stack_lo) & ~(uintptr_t)7;
	if (getpid() != gettid())
		add_main_stack(rs);
	bool ok = scan_work(rs, stack_lo, stack_hi);
	struct graph g = rs->g;
	mc_unmap(rs, sizeof *rs);
	if (!ok) {
		if (g.v)
			mc_unmap(g.v, g.cap * sizeof *g.v);
		if (g.state)
			mc_unmap(g.state, g.cap);
		return false;
	}
	out->n = g.n;
	out->cap = g.cap;
	out->v = g.v;
	out->state = g.state;
	out->seconds = mc_now() - t0;
	return true;
}

void mc_scan_each(const struct mc_scan *s, uint32_t min_epoch,
		  void (*fn)(const struct mc_block *, int kind, void *), void *arg)
{
	const struct node *v = s->v;
	for (size_t i = 0; i < s->n; i++) {
		if (v[i].epoch < min_epoch)
			continue;
		struct mc_block b = { v[i].lo, v[i].size, v[i].stack, v[i].epoch };
		fn(&b, s->state[i], arg);
	}
}

void mc_scan_free(struct mc_scan *s)
{
	if (s->v)
		mc_unmap(s->v, s->cap * sizeof(struct node));
	if (s->state)
		mc_unmap(s->state, s->cap);
	memset(s, 0, sizeof *s);
}
