/*
 * maps.c - the process's mappings as the scan needs them: an array by
 * address, from resident.c's reader of /proc/self/maps (no malloc), to
 * find the end of each thread's stack and which of the program's own
 * mappings are readable and writable now; and which pages of a range
 * are resident (mincore), so that the scan never walks a sparse
 * reservation page by page nor reads a hole of a shared mapping, which
 * would allocate it.  A device mapping is never read (valgrind skips
 * them too): reading one may have effects.  The same read notes where
 * each file's mappings begin, which elfmod.c takes its objects' paths
 * from (scan.c lends them): one read of /proc/self/maps a region's end.
 */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "internal.h"

static enum mc_vma_kind kind_of(const char *name)
{
	if (!strcmp(name, "[stack]"))
		return MC_VMA_STACK;
	if (*name == '[')
		return MC_VMA_SPECIAL; /* [heap], [vvar], [vdso], [anon:...] */
	if (!strncmp(name, "/dev/", 5) && strncmp(name, "/dev/zero", 9) &&
	    strncmp(name, "/dev/shm/", 9))
		return MC_VMA_DEVICE;
	return *name ? MC_VMA_FILE : MC_VMA_ANON;
}

struct vmas_walk {
	struct mc_vmas *t;
	struct mc_maps_runs runs;
};

static bool add_vma(const struct mc_mapping *m, void *arg)
{
	struct vmas_walk *w = arg;
	struct mc_vmas *t = w->t;
	if (!mc_grow_from((void **)&t->v, &t->cap, t->n, sizeof *t->v, 256, t->fixed))
		return false;
	mc_maps_runs_note(&w->runs, m);
	t->v[t->n++] = (struct mc_vma){
		.lo = m->lo, .hi = m->hi, .shared = m->shared, .kind = (uint8_t)kind_of(m->name),
		.prot = (m->readable ? PROT_READ : 0) | (m->writable ? PROT_WRITE : 0),
	};
	return true;
}

bool mc_vmas_read(struct mc_vmas *out)
{
	return mc_vmas_read_into(out, NULL, 0, false);
}

/* The whole file, read (the runs noted from it). */
static bool read_all(struct mc_vmas *out)
{
	out->n = 0;
	out->runs.len = 0;
	out->runs.oom = false;
	struct vmas_walk w = { .t = out, .runs = { .b = &out->runs, .fixed = true } };
	bool ok = mc_maps_each(add_vma, &w) && out->n;
	if (out->runs.oom)
		out->runs.len = 0;
	return ok;
}

static struct mc_vma vma_of(const struct mc_mapping *m)
{
	return (struct mc_vma){
		.lo = m->lo, .hi = m->hi, .shared = m->shared, .kind = (uint8_t)kind_of(m->name),
		.prot = (m->readable ? PROT_READ : 0) | (m->writable ? PROT_WRITE : 0),
	};
}

/* One mapping asked (PROCMAP_QUERY) into the cache: 1, 0 for none, -1
 * when the ioctl failed. */
static int ask(struct mc_vmas *m, uintptr_t addr, bool or_next, const struct mc_vma **out)
{
	char name[4096];
	struct mc_mapping mp;
	int rc = mc_maps_query(m->file.fd, addr, or_next, &mp, name, sizeof name);
	if (rc != 1)
		return rc;
	struct mc_vma *v = &m->v[m->next++ % m->cap];
	*v = vma_of(&mp);
	if (m->n < m->cap)
		m->n++;
	*out = v;
	return 1;
}

/* Where the kernel has PROCMAP_QUERY, the mappings are asked one by one
 * as the scan needs them (a single-threaded process's scan asks four to
 * six): the whole file's text is neither made by the kernel nor parsed
 * here (few: the caller's guess that it asks few), and the files' runs that elfmod.c takes its objects' paths from
 * are asked the same way, through the same open file (its number in
 * runs, mc_maps_runs_query). */
static bool vmas_read(struct mc_vmas *out, struct mc_vma *first, size_t cap, bool few, bool sole)
{
	/* runs_fixed (3 KiB) is read to runs.len only: not cleared, here or
	 * in mc_vmas_free (6,400 instructions of every scan) */
	memset(out, 0, offsetof(struct mc_vmas, runs_fixed));
	if (first && cap) {
		out->v = out->fixed = first;
		out->cap = cap;
	}
	out->runs = (struct mc_buf){ .s = out->runs_fixed, .cap = sizeof out->runs_fixed };
	if (few && out->cap) {
		const struct mc_vma *v;
		if (sole ? mc_maps_query_open_sole(&out->file) : mc_maps_query_open(&out->file)) {
			if (ask(out, 0, true, &v) == 1) {
				out->asking = true;
				mc_maps_runs_query(&out->runs, &out->file);
				return true;
			}
			mc_sys_close(out->file.fd);
		}
		out->n = out->next = 0;
	}
	return read_all(out);
}

bool mc_vmas_read_into(struct mc_vmas *out, struct mc_vma *first, size_t cap, bool few)
{
	return vmas_read(out, first, cap, few, false);
}

bool mc_vmas_read_sole(struct mc_vmas *out, struct mc_vma *first, size_t cap, bool few)
{
	return vmas_read(out, first, cap, few, true);
}

bool mc_vmas_full(struct mc_vmas *m)
{
	if (!m->asking)
		return true;
	mc_maps_query_close(&m->file);
	m->asking = false;
	m->next = 0;
	return read_all(m);
}

void mc_vmas_free(struct mc_vmas *m)
{
	if (m->asking)
		mc_maps_query_close(&m->file);
	if (m->v && m->v != m->fixed)
		mc_unmap(m->v, m->cap * sizeof *m->v);
	memset(m, 0, offsetof(struct mc_vmas, runs_fixed));
}

/* The first mapping whose end is past addr, in the whole table. */
static const struct mc_vma *first_past(const struct mc_vmas *m, uintptr_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->v[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n ? &m->v[lo] : NULL;
}

static const struct mc_vma *cached(const struct mc_vmas *m, uintptr_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].lo <= addr && addr < m->v[i].hi)
			return &m->v[i];
	return NULL;
}

static const struct mc_vma *lookup(struct mc_vmas *m, uintptr_t addr, bool or_next)
{
	if (m->asking) {
		const struct mc_vma *v = cached(m, addr);
		if (v)
			return v;
		int rc = ask(m, addr, or_next, &v);
		if (rc >= 0)
			return rc ? v : NULL;
		if (!mc_vmas_full(m)) /* the ioctl failed: the file read */
			return NULL;
	}
	const struct mc_vma *v = first_past(m, addr);
	return v && (or_next || v->lo <= addr) ? v : NULL;
}

const struct mc_vma *mc_vmas_find(struct mc_vmas *m, uintptr_t addr)
{
	return lookup(m, addr, false);
}

const struct mc_vma *mc_vmas_next(struct mc_vmas *m, uintptr_t addr)
{
	return lookup(m, addr, true);
}

/* Pages per mincore call (4 MiB) of this file's callers: their
 * vectors' size, on the stack.  4096 (16 MiB a call) put every call
 * below it 3 KiB deeper: the exit's scan runs on stack pages it touches
 * first. */
#define CHUNK 1024

/* The resident pages of [lo, hi), in runs cut to [lo, hi), to fn: a
 * range of the program's need not be whole pages (the words it took
 * from the break, mappings.c's sbrk; a range of part of a page looped
 * here for good).  One walk for every caller: vec, of cap bytes, is the
 * caller's (on its stack: its size sets how deep the exit's scan goes),
 * a page a byte, cap pages a mincore call; where mincore cannot answer
 * for a chunk, the chunk goes to fn whole ("cannot tell: read it").  A
 * caller that reads the partial pages at the ends whatever mincore says
 * (scan.c's large blocks) passes the whole pages between them: that
 * choice here cost 0xd8 bytes of group 1 (text-order.ld), whose room
 * every threaded process's code shares. */
void mc_resident_runs(uintptr_t lo, uintptr_t hi, unsigned char *vec, size_t cap,
		      void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	for (uintptr_t at = lo & ~(uintptr_t)4095; at < hi;) {
		size_t pages = (hi - at + 4095) / 4096;
		if (pages > cap)
			pages = cap;
		uintptr_t end = at + pages * 4096;
		if (mc_sys_mincore((void *)at, pages * 4096, vec) != 0) {
			/* cannot tell: read it */
			fn(at > lo ? at : lo, end < hi ? end : hi, arg);
			at = end;
			continue;
		}
		for (size_t i = 0; i < pages;) {
			if (!(vec[i] & 1)) {
				i++;
				continue;
			}
			size_t j = i;
			while (j < pages && (vec[j] & 1))
				j++;
			uintptr_t run_lo = at + i * 4096, run_hi = at + j * 4096;
			fn(run_lo > lo ? run_lo : lo, run_hi < hi ? run_hi : hi, arg);
			i = j;
		}
		at = end;
	}
}

struct clip {
	size_t i;
	uintptr_t lo, hi;
	void (*fn)(size_t, uintptr_t, uintptr_t, void *);
	void *arg;
};

static void clip_run(uintptr_t lo, uintptr_t hi, void *arg)
{
	const struct clip *c = arg;
	if (lo < c->lo)
		lo = c->lo;
	if (hi > c->hi)
		hi = c->hi;
	if (lo < hi)
		c->fn(c->i, lo, hi, c->arg);
}

/* Can a page the program wrote be out of memory?  mincore calls a
 * swapped-out page not resident, as it does a page never written. */
bool mc_swap_configured(void)
{
	struct sysinfo si;
	return mc_sys_sysinfo(&si) != 0 || si.totalswap > 0;
}

void mc_resident_each(const struct mc_root *v, size_t n,
		      void (*fn)(size_t i, uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	/* With swap, every page: the objects' segments are small, and a
	 * global swapped out may hold the only pointer to a block.  The
	 * vector on the stack (a region's end runs on a populated one, at
	 * exit: roots.c), not a mapping of its own: an mmap and a page
	 * fewer at each region's end. */
	unsigned char stack_vec[CHUNK];
	unsigned char *vec = n && !mc_swap_configured() ? stack_vec : NULL;
	for (size_t i = 0; i < n; i++) {
		struct clip c = { i, v[i].lo, v[i].hi, fn, arg };
		if (c.lo >= c.hi)
			continue;
		if (!vec) /* cannot tell: read it */
			fn(i, c.lo, c.hi, arg);
		else
			mc_resident_runs(c.lo & ~(uintptr_t)4095, (c.hi + 4095) & ~(uintptr_t)4095,
					 vec, CHUNK, clip_run, &c);
	}
}

void mc_vmas_roots(struct mc_vmas *m, const struct mc_prog_maps *r,
		   void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	unsigned char vec[CHUNK]; /* on the stack, as above */
	for (size_t i = 0; i < r->n; i++) {
		const struct mc_vma *mp;
		for (uintptr_t at = r->v[i].lo;
		     at < r->v[i].hi && (mp = mc_vmas_next(m, at)) && mp->lo < r->v[i].hi;
		     at = mp->hi) {
			if ((mp->prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE) ||
			    mp->kind == MC_VMA_DEVICE)
				continue;
			uintptr_t lo = mp->lo > r->v[i].lo ? mp->lo : r->v[i].lo;
			uintptr_t hi = mp->hi < r->v[i].hi ? mp->hi : r->v[i].hi;
			mc_resident_runs(lo, hi, vec, CHUNK, fn, arg);
		}
	}
}
