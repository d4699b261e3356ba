/*
 * ownread.c - memcheck's own read-only mappings of the program's objects'
 * files ("views"), through which cfi.c reads their call-frame tables
 * (.eh_frame_hdr, .eh_frame) without touching the program's mappings;
 * footprint.c counts the views' mapped pages in M.
 *
 * Why: cfi.c's stack walk reads those tables on malloc's path, in the
 * program's time.  Read where the dynamic linker mapped them, each first
 * read faults in a 64 KiB fault-around block of the program's mapping.
 * Counted as the program's, libstdc++'s read-only mapping went 128 ->
 * 320 KiB at exit (tests/prog/rss_self_cxx).  Recorded as memcheck's
 * (this file's pagemap bookkeeping until session 30), the figures went
 * 90-130 KiB low instead: the program reads the same pages later (its
 * .rodata's tail on .eh_frame_hdr's first page, its unwinder's search of
 * the same table), faults them bare but finds them mapped under
 * memcheck, and a read of a page already mapped leaves no trace the
 * kernel shows; giving the pages back (MADV_DONTNEED) put them in the
 * kernel's peak mark first (doc/costs.md, session 29, peak29).  A view
 * of memcheck's own leaves the program's mappings as they are bare:
 * its pages are separate page-table entries of the same page-cache
 * pages, in the process's RSS only while mapped in the view, measured
 * there through pagemap, and never the program's.
 *
 * A view maps the part of the file that holds the segment with
 * .eh_frame_hdr (every linker puts .eh_frame in the same segment, cfi.c
 * bounds its reads by that segment): cfi.c reads at a delta (the view's
 * address less the program's) and computes pc-relative values at the
 * program's addresses.  Made once per object, at its first rule read
 * while the RSS figures are measured: an open, a pread (the ELF and
 * program headers), an fstat, an mmap and a close.  Kept while the
 * object is loaded (so nothing is unmapped in the program's time but
 * for an object it unloaded); footprint.c's measure (mc_own_views)
 * unmaps the views of objects unloaded since, which _dl_find_object
 * tells without a lock, and counts the pages of the others.
 *
 * The same views serve a read of a constant the program's objects hold
 * in that segment (mc_own_read): threadstart.c's layout of the C
 * library's thread descriptor (_thread_db_pthread_start_routine, in the
 * C library's .rodata), read at a thread's start in the program's
 * mapping until session 46, faulted a 64 KiB block of the C library's
 * read-only data that a bare threaded program never maps (peak_rss and
 * rss_end +64 KiB under glibc; the other allocators fault it bare).
 *
 * No view, and cfi.c reads the program's mapping as before (the pages
 * it faults count as the program's): an object without a file (the
 * vdso, whose pages are the kernel's and always present), one named by
 * a relative path, a file that cannot be opened (a sandbox's rules:
 * mc_sys_open asks sandbox.c's kept copies first, which are named as
 * /proc/self/maps names them), or whose ELF and program headers differ
 * from those mapped (the file replaced on disk since it was loaded).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"

#define NVIEWS MC_OWN_VIEWS
/* The file's ELF header and program headers, read in one pread where
 * they adjoin (every linker puts the program headers right after the ELF
 * header) and are at most HEAD_PHDRS: libc's 14, a program's 13 (three
 * preads an object before this: the header, then eight program headers
 * at a time).  Static, under views_lock: the capture that makes a view
 * runs on the program's stack, inside its malloc, and its frames' pages
 * are the program's. */
#define HEAD_PHDRS 24
static struct {
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[HEAD_PHDRS];
} view_head;

enum { V_FREE, V_VIEW, V_NONE };

/* A slot is written only under views_lock, with gen odd while it is:
 * look-ups take no lock (a signal handler's capture may interrupt a
 * thread that holds it) and retry nothing, they read gen before and
 * after and ignore a slot that changed. */
static struct view {
	_Atomic uint32_t gen;
	uint8_t state;
	const void *lm;  /* the object's link map */
	uintptr_t hdr;   /* its .eh_frame_hdr, where the program maps it */
	uintptr_t lo, hi; /* the segment viewed, at the program's addresses */
	uintptr_t base;  /* the view: [base, base + len) */
	size_t len;
	uintptr_t delta; /* the view's address of a byte less the program's */
} views[NVIEWS];
static _Atomic int nviews;
static atomic_flag views_lock = ATOMIC_FLAG_INIT;

/* Set by footprint.c when the RSS figures start to be measured. */
static atomic_bool recording;

void mc_own_read_on(void)
{
	atomic_store_explicit(&recording, true, memory_order_relaxed);
}

bool mc_own_read_recording(void)
{
	return atomic_load_explicit(&recording, memory_order_relaxed);
}

/* A bounded spin: the caller may be a signal handler's capture that
 * interrupted this thread inside the lock (a spin would never end). */
static bool view_lock(void)
{
	for (int i = 0; i < 4096; i++) {
		if (!atomic_flag_test_and_set_explicit(&views_lock, memory_order_acquire))
			return true;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	return false;
}

static void view_unlock(void)
{
	atomic_flag_clear_explicit(&views_lock, memory_order_release);
}

/* 1: the view of the object (lm, hdr) in *v; 0: known to have none;
 * -1: not known. */
static int view_find(const void *lm, uintptr_t hdr, struct mc_own_view *v)
{
	int n = atomic_load_explicit(&nviews, memory_order_acquire);
	for (int i = 0; i < n; i++) {
		struct view *s = &views[i];
		uint32_t g = atomic_load_explicit(&s->gen, memory_order_acquire);
		if ((g & 1) || s->state == V_FREE || s->lm != lm || s->hdr != hdr)
			continue;
		uint8_t state = s->state;
		*v = (struct mc_own_view){ s->lo, s->hi, s->delta };
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&s->gen, memory_order_relaxed) != g)
			continue;
		return state == V_VIEW;
	}
	return -1;
}

/* The program headers of the image whose ELF header the program maps at
 * image (the main program's: where AT_PHDR says), n of them; NULL
 * where they are not found. */
static const ElfW(Phdr) *view_phdrs(uintptr_t image, uintptr_t bias, size_t *n)
{
	uintptr_t main_bias;
	const ElfW(Phdr) *ph = mc_main_phdrs(n, &main_bias);
	if (ph && main_bias == bias)
		return ph;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)image;
	if (!image || !mc_mem_eq(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)))
		return NULL;
	*n = eh->e_phnum;
	return (const ElfW(Phdr) *)(image + eh->e_phoff);
}

/* The view of the object (lm, hdr) whose ELF header the program maps at
 * image, made into *s (views_lock held, s's gen odd): false where there
 * is none (see the top). */
static bool view_make(struct view *s, const struct link_map *lm, uintptr_t hdr, uintptr_t image)
{
	size_t nph;
	const ElfW(Phdr) *mine = view_phdrs(image, lm->l_addr, &nph);
	const char *path = lm->l_name && lm->l_name[0] ? lm->l_name : "/proc/self/exe";
	if (!mine || path[0] != '/' || nph == 0 || nph > 256)
		return false;
	int fd = mc_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = false;
	ElfW(Phdr) seg = { 0 };
	const ElfW(Ehdr) *eh = &view_head.eh;
	struct stat st;
	uintptr_t v = hdr - lm->l_addr;
	/* the header and, where they follow it, the program headers */
	size_t adjoin = nph <= HEAD_PHDRS ? nph : 0;
	long got = mc_sys_pread(fd, &view_head, sizeof view_head.eh + adjoin * sizeof view_head.ph[0], 0);
	if (got < (long)sizeof view_head.eh || !mc_mem_eq(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phnum != nph || eh->e_phentsize != sizeof(ElfW(Phdr)))
		goto out;
	/* The file's program headers are the mapped ones, or the file is
	 * not the one the object was loaded from. */
	size_t chunk = eh->e_phoff == sizeof view_head.eh && adjoin ? nph : HEAD_PHDRS;
	for (size_t i = 0; i < nph; i += chunk) {
		size_t k = nph - i < chunk ? nph - i : chunk;
		long want = (long)(k * sizeof view_head.ph[0]);
		if (chunk == nph) {
			if (got != (long)sizeof view_head.eh + want)
				goto out;
		} else if (mc_sys_pread(fd, view_head.ph, (size_t)want,
					(off_t)(eh->e_phoff + i * sizeof view_head.ph[0])) != want) {
			goto out;
		}
		if (!mc_mem_eq(view_head.ph, mine + i, (size_t)want))
			goto out;
		for (const ElfW(Phdr) *q = view_head.ph; q < view_head.ph + k; q++)
			if (q->p_type == PT_LOAD && v - q->p_vaddr < q->p_filesz)
				seg = *q;
	}
	if (seg.p_type != PT_LOAD || mc_sys_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < seg.p_offset + seg.p_filesz)
		goto out;
	size_t skip = seg.p_offset & 4095;
	void *base = mc_map_file(skip + seg.p_filesz, fd, (off_t)(seg.p_offset - skip));
	if (base == MAP_FAILED)
		goto out;
	s->base = (uintptr_t)base;
	s->len = skip + seg.p_filesz;
	s->lo = lm->l_addr + seg.p_vaddr;
	s->hi = s->lo + seg.p_filesz;
	s->delta = s->base + skip - s->lo;
	ok = true;
out:
	mc_sys_close(fd);
	return ok;
}

bool mc_own_view(uintptr_t hdr, uintptr_t image, const struct link_map *lm,
		 struct mc_own_view *v)
{
	int known = view_find(lm, hdr, v);
	if (known >= 0)
		return known;
	if (!view_lock())
		return false;
	known = view_find(lm, hdr, v); /* another thread's, made meanwhile */
	if (known < 0) {
		int n = atomic_load_explicit(&nviews, memory_order_relaxed), i = 0;
		while (i < n && views[i].state != V_FREE)
			i++;
		if (i == NVIEWS) {
			view_unlock();
			return false; /* no room: read as before there were views */
		}
		int saved = errno;
		struct view *s = &views[i];
		atomic_fetch_add_explicit(&s->gen, 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		s->lm = lm;
		s->hdr = hdr;
		s->state = view_make(s, lm, hdr, image) ? V_VIEW : V_NONE;
		*v = (struct mc_own_view){ s->lo, s->hi, s->delta };
		known = s->state == V_VIEW;
		atomic_fetch_add_explicit(&s->gen, 1, memory_order_release);
		if (i == n)
			atomic_store_explicit(&nviews, n + 1, memory_order_release);
		errno = saved;
	}
	view_unlock();
	return known;
}

bool mc_own_view_at(uintptr_t lo)
{
	int n = atomic_load_explicit(&nviews, memory_order_acquire);
	for (int i = 0; i < n; i++) {
		const struct view *s = &views[i];
		uint32_t g = atomic_load_explicit(&s->gen, memory_order_acquire);
		if (!(g & 1) && s->state == V_VIEW && lo - s->base < s->len)
			return true;
	}
	return false;
}

/* Whether the object of view s is still loaded: dlclose unmaps it, and
 * another object may be loaded where it was. */
static bool view_loaded(const struct view *s)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	return mc_find_object((void *)s->hdr, &fo) == 0 && fo.dlfo_link_map == s->lm &&
	       (uintptr_t)fo.dlfo_eh_frame == s->hdr;
#else
	(void)s;
	return true;
#endif
}

int mc_own_views(struct mc_own_span *out, int cap)
{
	int nout = 0, saved = errno;
	/* Only the look-up and the rare unmap under the lock: the caller's
	 * pagemap reads after it, so a capture that wants a new view
	 * meanwhile does not spin through them. */
	if (!view_lock())
		return 0;
	int n = atomic_load_explicit(&nviews, memory_order_relaxed);
	for (int i = 0; i < n; i++) {
		struct view *s = &views[i];
		if (s->state == V_FREE)
			continue;
		if (!view_loaded(s)) {
			atomic_fetch_add_explicit(&s->gen, 1, memory_order_relaxed);
			atomic_thread_fence(memory_order_release);
			if (s->state == V_VIEW)
				mc_sys_munmap((void *)s->base, s->len);
			s->state = V_FREE;
			atomic_fetch_add_explicit(&s->gen, 1, memory_order_release);
		} else if (s->state == V_VIEW && nout < cap) {
			out[nout++] = (struct mc_own_span){ s->base, s->base + s->len };
		}
	}
	view_unlock();
	errno = saved;
	return nout;
}

void mc_own_read(const void *at, void *out, size_t n)
{
	const unsigned char *from = at;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	struct mc_own_view v;
	uintptr_t a = (uintptr_t)at;
	if (mc_own_read_recording() && mc_find_object(at, &fo) == 0 && fo.dlfo_eh_frame &&
	    fo.dlfo_link_map &&
	    mc_own_view((uintptr_t)fo.dlfo_eh_frame, (uintptr_t)fo.dlfo_map_start, fo.dlfo_link_map,
			&v) &&
	    a >= v.lo && a < v.hi && n <= v.hi - a)
		from = (const unsigned char *)(a + v.delta);
#endif
	unsigned char *to = out;
	for (size_t i = 0; i < n; i++)
		to[i] = from[i];
}
