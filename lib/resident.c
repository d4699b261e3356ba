/*
 * resident.c - which pages of the process are in memory, and whose they
 * are: the resident bytes of an address range (mincore), the process's
 * mappings as /proc/self/maps lists them.  allocator.c measures with
 * these the memory an allocator holds resident (and ownmap.c keeps the list
 * of memcheck's own mappings, which are not the allocator's).
 *
 * Traps that shaped it:
 * - It runs at region ends, with the guard held, and ownmap.c's mc_map
 *   calls it from inside the hooks: no malloc, no stdio, no locks that a
 *   fork could leave held.  /proc/self/maps is read in pieces into a
 *   buffer on the stack; a line that straddles two reads is kept whole.
 * - mincore's answer per page is what the resident set size counts: a
 *   page swapped out is in neither, a page given back with MADV_FREE and
 *   not yet reclaimed is in both.  A range that another thread unmaps
 *   while it is being measured makes mincore fail: that part then counts
 *   page by page, and what is gone counts as not resident.
 * - The kernel merges adjacent anonymous mappings with the same
 *   protection into one line of /proc/self/maps, so a line says nothing
 *   about who made the memory: whose it is must be told another way
 *   (the allocator's own answer for an address, or what is known to be
 *   someone else's).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal.h"

static uintptr_t page_size(void)
{
	return (uintptr_t)mc_page_size(); /* not sysconf: sys.c says why */
}

/* ---- resident bytes of a range --------------------------------------- */

#define VEC 4096 /* pages per mincore call: 16 MiB of 4 KiB pages */

/* The pages of mincore's vector that are resident: each byte's low bit
 * (the others are reserved), eight bytes a word.  Up to 255 words' low
 * bits are added in the word's bytes, which then hold at most 255 each,
 * then the bytes summed: a byte at a time cost ~5,500 instructions for
 * the ~600 pages start-up and the exit each measure. */
static uint64_t resident_pages(const unsigned char *vec, uintptr_t n)
{
	const uint64_t low = 0x0101010101010101ull;
	uint64_t pages = 0;
	uintptr_t i = 0;
	while (n - i >= 8) {
		uint64_t acc = 0;
		for (int k = 0; k < 255 && n - i >= 8; k++, i += 8) {
			uint64_t w;
			__builtin_memcpy(&w, vec + i, sizeof w);
			acc += w & low;
		}
		/* bytes into 16-bit lanes (<= 510 each), then their sum */
		acc = (acc & 0x00ff00ff00ff00ffull) + (acc >> 8 & 0x00ff00ff00ff00ffull);
		pages += acc * 0x0001000100010001ull >> 48;
	}
	for (; i < n; i++)
		pages += vec[i] & 1;
	return pages;
}

uint64_t mc_resident_bytes(uintptr_t lo, uintptr_t hi)
{
	uintptr_t page = page_size();
	lo &= ~(page - 1);
	hi = (hi + page - 1) & ~(page - 1);
	uint64_t pages = 0;
	unsigned char vec[VEC];
	int saved = errno;
	while (lo < hi) {
		uintptr_t n = (hi - lo) / page;
		if (n > VEC)
			n = VEC;
		if (mc_sys_mincore((void *)lo, n * page, vec) == 0) {
			pages += resident_pages(vec, n);
		} else {
			/* Part of it unmapped meanwhile: what is still
			 * there, page by page. */
			for (uintptr_t i = 0; i < n; i++)
				if (mc_sys_mincore((void *)(lo + i * page), page, vec) == 0)
					pages += vec[0] & 1;
		}
		lo += n * page;
	}
	errno = saved;
	return pages * page;
}

/* How many of pagemap's n entries have the present bit (63): two
 * entries an SSE2 shift and add, the lanes summed at the end.  One at a
 * time, the ~340 entries of libmemcheck's segments took ~2,100
 * instructions at each of a measured process's three measures. */
static uint64_t present_pages(const uint64_t *e, size_t n)
{
	uint64_t pages = 0;
	size_t i = 0;
#if defined(__SSE2__)
	__m128i acc = _mm_setzero_si128();
	for (; n - i >= 8; i += 8) {
		__m128i a = _mm_add_epi64(_mm_srli_epi64(_mm_loadu_si128((const __m128i *)(e + i)), 63),
					  _mm_srli_epi64(_mm_loadu_si128((const __m128i *)(e + i + 2)), 63));
		__m128i b = _mm_add_epi64(_mm_srli_epi64(_mm_loadu_si128((const __m128i *)(e + i + 4)), 63),
					  _mm_srli_epi64(_mm_loadu_si128((const __m128i *)(e + i + 6)), 63));
		acc = _mm_add_epi64(acc, _mm_add_epi64(a, b));
	}
	uint64_t lanes[2];
	_mm_storeu_si128((__m128i *)lanes, acc);
	pages = lanes[0] + lanes[1];
#endif
	for (; i < n; i++)
		pages += e[i] >> 63;
	return pages;
}

/* Bytes of [lo, hi) mapped in this process's page table: pagemap's
 * present bit (bit 63 of each page's 8 bytes, readable unprivileged),
 * read through fd (/proc/self/pagemap), 512 pages a pread.  Not
 * mincore: of a file's mapping, mincore says whether the page is in the
 * page cache, mapped here or not (libmemcheck's code: all of its 360 KiB
 * by mincore, 276-356 KiB of it mapped by smaps).  -1 if pagemap cannot
 * be read.  *file (if not NULL): the bytes of those that are a file's
 * page (bit 61: code, a data segment's pages not yet written), which
 * statm counts as shared, not anonymous (footprint.c's start-up). */
int64_t mc_mapped_bytes_file(int fd, uintptr_t lo, uintptr_t hi, int64_t *file)
{
	uintptr_t page = page_size();
	lo &= ~(page - 1);
	hi = (hi + page - 1) & ~(page - 1);
	uint64_t e[512], pages = 0, file_pages = 0;
	int saved = errno;
	while (lo < hi) {
		size_t n = (hi - lo) / page < 512 ? (hi - lo) / page : 512;
		if (!mc_pagemap_read(fd, lo, e, n)) {
			errno = saved;
			return -1;
		}
		pages += present_pages(e, n);
		for (size_t i = 0; file && i < n; i++)
			file_pages += (e[i] >> 63) & (e[i] >> 61) & 1;
		lo += n * page;
	}
	errno = saved;
	if (file)
		*file = (int64_t)(file_pages * page);
	return (int64_t)(pages * page);
}

int64_t mc_mapped_bytes(int fd, uintptr_t lo, uintptr_t hi)
{
	return mc_mapped_bytes_file(fd, lo, hi, NULL);
}

/* ---- /proc/self/maps -------------------------------------------------- */

static uintptr_t hex(const char **p)
{
	uintptr_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

static const char *skip_field(const char *p)
{
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

/* One line, "lo-hi perms offset dev inode   name", NUL-terminated. */
static bool parse_line(const char *s, struct mc_mapping *m)
{
	const char *p = s;
	m->lo = hex(&p);
	if (*p++ != '-')
		return false;
	m->hi = hex(&p);
	if (*p++ != ' ' || strlen(p) < 4)
		return false;
	m->readable = p[0] == 'r';
	m->writable = p[1] == 'w';
	m->executable = p[2] == 'x';
	m->shared = p[3] == 's';
	p = skip_field(p);              /* perms */
	p = skip_field(p);              /* offset */
	p = skip_field(p);              /* dev */
	bool inode = *p && *p != '0';
	p = skip_field(p);              /* inode */
	m->name = p;
	/* Anonymous: no file behind it.  [heap] is; [stack], [vdso] and
	 * the like are named for what they are. */
	m->anonymous = !inode && (!*p || strcmp(p, "[heap]") == 0);
	return m->hi > m->lo;
}

bool mc_maps_each(bool (*cb)(const struct mc_mapping *m, void *arg), void *arg)
{
	int saved = errno;
	int fd = mc_proc_open("maps", O_RDONLY);
	if (fd < 0) {
		errno = saved;
		return false;
	}
	/* A page: the names' walks (elfmod.c, symsession.c) read the maps
	 * at the deepest point of a measured exit, where 16 KiB here were
	 * 2-3 stack pages touched for it alone, a fault each (10-15 us),
	 * against a read more for each 4 KiB of maps past the first (~1 us;
	 * a small program's are 3 KiB) */
	char buf[4096];
	size_t len = 0;
	bool skipping = false, go = true;   /* a line longer than buf */
	while (go) {
		ssize_t n = mc_sys_read(fd, buf + len, sizeof buf - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = 0;
		char *line = buf, *nl;
		while (go && (nl = memchr(line, '\n', len - (size_t)(line - buf)))) {
			*nl = 0;
			struct mc_mapping m;
			/* memcheck's views of objects' files (ownread.c)
			 * left out: named as the objects' mappings, which
			 * they are not */
			if (!skipping && parse_line(line, &m) && (m.anonymous || !mc_own_view_at(m.lo)))
				go = cb(&m, arg);
			skipping = false;
			line = nl + 1;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		if (len == sizeof buf - 1) {
			/* No newline in a whole buffer: a path longer than
			 * any this reads; its line is left out. */
			len = 0;
			skipping = true;
		}
	}
	mc_sys_close(fd);
	errno = saved;
	return true;
}

/* ---- PROCMAP_QUERY: one mapping by address ----------------------------- */

/* linux/fs.h's, since Linux 6.11 (headers older than that lack it): the
 * mapping at or after an address, from an open /proc/self/maps, with no
 * text made and parsed for the others.  Opening the file is most of what
 * is left (~7 us here; a whole first read ~24 us more). */
struct procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY_IOCTL 0xC0686611ul /* _IOWR('f', 17, 104 bytes) */
#define Q_READABLE 0x01
#define Q_WRITABLE 0x02
#define Q_EXECUTABLE 0x04
#define Q_SHARED 0x08
#define Q_COVERING_OR_NEXT 0x10
#define Q_FILE_BACKED 0x20

static bool query_off; /* the kernel has none, or a test said so */

void mc_maps_query_set(bool on)
{
	query_off = !on;
}

/* The file stays open while the scan's table is lent (elfmod.c asks it
 * for objects' paths), after the program's threads run again: so it
 * takes a number out of the way of the program's own (a program that
 * opens a file then gets the number it gets without memcheck), and is
 * used and closed only while it still is that file. */
static bool query_open(struct mc_kept_fd *f, bool sole)
{
	*f = (struct mc_kept_fd){ -1, 0, 0, false };
	if (query_off)
		return false;
	int saved = errno;
	int fd = mc_proc_open("maps", O_RDONLY);
	if (sole) {
		/* Closed before any code of the program's runs: neither
		 * out of its way nor checked (a dup, a close and two fstat
		 * calls fewer at the region's end). */
		*f = (struct mc_kept_fd){ fd, 0, 0, true };
		errno = saved;
		return fd >= 0;
	}
	int high = fd >= 0 ? mc_dup_high(fd) : -1;
	if (fd >= 0)
		mc_sys_close(fd);
	struct stat st;
	if (high >= 0 && mc_sys_fstat(high, &st) == 0)
		*f = (struct mc_kept_fd){ high, st.st_dev, st.st_ino, false };
	else if (high >= 0)
		mc_sys_close(high);
	errno = saved;
	return f->fd >= 0;
}

bool mc_maps_query_open(struct mc_kept_fd *f)
{
	return query_open(f, false);
}

bool mc_maps_query_open_sole(struct mc_kept_fd *f)
{
	return query_open(f, true);
}

void mc_maps_query_close(const struct mc_kept_fd *f)
{
	int saved = errno;
	if (mc_kept_ours(f, NULL))
		mc_sys_close(f->fd);
	errno = saved;
}

static int query(int fd, uintptr_t addr, uint64_t flags, struct mc_mapping *m, char *name,
		 size_t cap)
{
	struct procmap_query q = {
		.size = sizeof q, .query_flags = flags,
		.query_addr = addr, .vma_name_addr = (uintptr_t)name,
		.vma_name_size = name ? (uint32_t)cap : 0,
	};
	if (name)
		name[0] = 0;
	int saved = errno;
	int rc = mc_sys_ioctl(fd, PROCMAP_QUERY_IOCTL, &q);
	int err = errno;
	errno = saved;
	if (rc != 0) {
		if (err == ENOENT)
			return 0;
		if (err == ENOTTY || err == EINVAL || err == EOPNOTSUPP)
			query_off = true; /* an older kernel: read the file */
		return -1;
	}
	*m = (struct mc_mapping){
		.lo = q.vma_start, .hi = q.vma_end,
		.readable = q.vma_flags & Q_READABLE, .writable = q.vma_flags & Q_WRITABLE,
		.shared = q.vma_flags & Q_SHARED, .name = name ? name : "",
	};
	m->anonymous = !q.inode && (!m->name[0] || strcmp(m->name, "[heap]") == 0);
	return m->hi > m->lo ? 1 : -1;
}

int mc_maps_query(int fd, uintptr_t addr, bool or_next, struct mc_mapping *m, char *name,
		  size_t cap)
{
	return query(fd, addr, or_next ? Q_COVERING_OR_NEXT : 0, m, name, cap);
}

int mc_maps_query_code(int fd, uintptr_t addr, struct mc_mapping *m, char *name, size_t cap)
{
	if (query_off)
		return -1;
	return query(fd, addr, Q_COVERING_OR_NEXT | Q_FILE_BACKED | Q_EXECUTABLE, m, name, cap);
}

/* glibc's flag (<sys/single_threaded.h>), read as rss.c's
 * mc_never_threaded reads it: rss.c is not linked with this file
 * everywhere (the unit tests).  True: the process never started a
 * thread, so no code of the program's runs between memcheck's open of
 * /proc/self/maps and its close, where they follow each other (a
 * signal's handler aside, as for the scan's mc_vmas_read_sole). */
extern char __libc_single_threaded __attribute__((weak));

static bool never_threaded(void)
{
	return &__libc_single_threaded && __libc_single_threaded;
}

static bool anonymous(const struct mc_mapping *m)
{
	return m->anonymous && m->readable && m->writable && !m->shared;
}

struct anonymous_read {
	bool (*cb)(const struct mc_mapping *m, void *arg);
	void *arg;
};

static bool anonymous_read(const struct mc_mapping *m, void *arg)
{
	struct anonymous_read *r = arg;
	return !anonymous(m) || r->cb(m, r->arg);
}

/* The kernel is asked for the readable and writable mappings only, and
 * skips the others itself: a one-thread process's region end under
 * jemalloc asks about a dozen, where a read of the whole file has the
 * kernel print each of some forty lines and this parse them (~34 ->
 * ~12 us here, opening and closing included).  All are asked before cb
 * sees one, so that a failed ioctl leaves the read to start afresh.  On
 * the stack, as the read's buffer (a timeline's sample may come on
 * another thread during a region's end): more than fit are read. */
#define MAX_ANONYMOUS 256

bool mc_maps_anonymous_each(bool (*cb)(const struct mc_mapping *m, void *arg), void *arg)
{
	int saved = errno;
	uintptr_t v[MAX_ANONYMOUS][2];  /* lo (+1: [heap]), hi */
	int n = 0, rc = -1;
	struct mc_kept_fd f;
	/* In a process that never started a thread, the lowest free
	 * number, neither moved out of the way nor checked: a dup, a close
	 * and two fstat calls fewer at a leaking exit under mimalloc,
	 * jemalloc and tcmalloc (as mc_maps_name_at) */
	if (query_open(&f, never_threaded())) {
		/* A longer path (a file's read-write data) is read.  Zeroed
		 * first: under valgrind, which knows nothing of what this
		 * ioctl writes there, the name would be undefined. */
		char name[256];
		memset(name, 0, sizeof name);
		struct mc_mapping m;
		uintptr_t at = 0;
		while ((rc = query(f.fd, at, Q_COVERING_OR_NEXT | Q_READABLE | Q_WRITABLE, &m, name,
				   sizeof name)) == 1) {
			at = m.hi;
			if (!anonymous(&m))
				continue;
			if (n == MAX_ANONYMOUS) {
				rc = -1;
				break;
			}
			v[n][0] = m.lo | (strcmp(m.name, "[heap]") == 0); /* pages: bit 0 free */
			v[n++][1] = m.hi;
		}
		mc_maps_query_close(&f);
	}
	errno = saved;
	if (rc != 0) {
		struct anonymous_read r = { cb, arg };
		return mc_maps_each(anonymous_read, &r);
	}
	for (int i = 0; i < n; i++) {
		struct mc_mapping m = {
			.lo = v[i][0] & ~(uintptr_t)1, .hi = v[i][1], .readable = true,
			.writable = true, .anonymous = true, .name = v[i][0] & 1 ? "[heap]" : "",
		};
		if (!cb(&m, arg))
			break;
	}
	return true;
}

/* A table of runs whose first record is this start says: ask the open
 * /proc/self/maps whose number its name is (mc_maps_runs_query). */
#define RUNS_QUERY UINTPTR_MAX

void mc_maps_runs_query(struct mc_buf *b, const struct mc_kept_fd *f)
{
	uintptr_t start = RUNS_QUERY;
	b->len = 0;
	mc_buf_put(b, (const char *)&start, sizeof start);
	mc_buf_put(b, (const char *)f, sizeof *f);
}

/* The table's file, if it is one of mc_maps_runs_query's. */
static bool runs_file(const struct mc_buf *runs, struct mc_kept_fd *f)
{
	uintptr_t start;
	if (runs->len < sizeof start + sizeof *f)
		return false;
	memcpy(&start, runs->s, sizeof start);
	if (start != RUNS_QUERY)
		return false;
	memcpy(f, runs->s + sizeof start, sizeof *f);
	return true;
}

int mc_maps_runs_fd(const struct mc_buf *runs, bool *query)
{
	struct mc_kept_fd f;
	bool q = runs_file(runs, &f);
	if (query)
		*query = q;
	int saved = errno;
	bool ours = q && mc_kept_ours(&f, NULL);
	errno = saved;
	return ours ? f.fd : -1;
}

void mc_maps_runs_close(const struct mc_buf *runs)
{
	struct mc_kept_fd f;
	if (runs_file(runs, &f))
		mc_maps_query_close(&f);
}

bool mc_maps_runs_release(struct mc_buf *runs)
{
	struct mc_kept_fd f;
	if (!runs_file(runs, &f) || f.fd < 0)
		return false;
	mc_maps_query_close(&f);
	f = (struct mc_kept_fd){ -1, 0, 0, false };
	memcpy(runs->s + sizeof(uintptr_t), &f, sizeof f);
	return true;
}

/* The first mapping of a loaded object is its file's (the ELF header):
 * a table of these names each object's file (elfmod.c), from the read
 * the scan made anyway (maps.c) or one of its own. */
void mc_maps_runs_note(struct mc_maps_runs *w, const struct mc_mapping *m)
{
	size_t n = strlen(m->name);
	bool fits = n < sizeof w->prev;
	if (fits && m->name[0] && !(w->prev_ok && strcmp(w->prev, m->name) == 0)) {
		/* mc_buf_put keeps a NUL after what it put */
		if (w->fixed && w->b->len + sizeof m->lo + n + 2 > w->b->cap)
			w->b->oom = true;
		mc_buf_put(w->b, (const char *)&m->lo, sizeof m->lo);
		mc_buf_put(w->b, m->name, n + 1);
	}
	w->prev_ok = fits;
	if (fits)
		memcpy(w->prev, m->name, n + 1);
}

/* The name of the mapping that starts at lo, asked through fd into
 * name (cap bytes): 1, 0 for none, -1 where the kernel could not be
 * asked. */
static int name_starting(int fd, uintptr_t lo, char *name, size_t cap)
{
	struct mc_mapping m;
	int r = fd >= 0 ? mc_maps_query(fd, lo, false, &m, name, cap) : -1;
	return r == 1 ? m.lo == lo && name[0] : r;
}

const char *mc_maps_run_at(const struct mc_buf *runs, uintptr_t lo, char *name, size_t cap)
{
	bool query;
	int fd = mc_maps_runs_fd(runs, &query);
	if (query) {
		/* the mapping that starts at lo, asked into the caller's
		 * name (elfmod.c's path, on a page it has written): a
		 * buffer of this file's own in .bss was a page first
		 * touched at a measured /bin/date's exit, a fault.  Where
		 * the program has closed the file (its number now another
		 * file, or none), a copy opened for this question. */
		struct mc_kept_fd own = { -1, 0, 0, false };
		if (fd < 0 && mc_maps_query_open(&own))
			fd = own.fd;
		bool found = name_starting(fd, lo, name, cap) == 1;
		if (own.fd >= 0)
			mc_sys_close(own.fd);
		return found ? name : NULL;
	}
	for (size_t at = 0; at + sizeof lo < runs->len;) {
		uintptr_t start;
		memcpy(&start, runs->s + at, sizeof start);
		const char *run = runs->s + at + sizeof start;
		if (start == lo)
			return run;
		at += sizeof start + strlen(run) + 1;
	}
	return NULL;
}

const char *mc_maps_name_at(uintptr_t lo, char *name, size_t cap, bool *asked)
{
	/* Opened, asked and closed with no code of the program's run in
	 * between: where the process never started a thread, the lowest
	 * free number, not moved out of its way (as the scan's
	 * mc_vmas_read_sole, for the only thread); else moved out of the
	 * way and closed only if still ours (a thread of the program may
	 * close the number and open a file of its own under it). */
	struct mc_kept_fd f;
	int saved = errno;
	bool sole = never_threaded();
	int r = query_open(&f, sole) ? name_starting(f.fd, lo, name, cap) : -1;
	if (f.fd >= 0 && sole)
		mc_sys_close(f.fd);
	else if (f.fd >= 0)
		mc_maps_query_close(&f);
	errno = saved;
	*asked = r >= 0;
	return r == 1 ? name : NULL;
}

/* ---- ranges to leave out ----------------------------------------------- */

void mc_ranges_add(struct mc_ranges *r, uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo)
		return;
	if (r->n == r->cap) {
		r->overflow = true;
		return;
	}
	r->v[r->n][0] = lo;
	r->v[r->n][1] = hi;
	r->n++;
}

static int range_cmp(const void *x, const void *y)
{
	const uintptr_t *a = x, *b = y;
	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* By start (mc_sort: qsort may call malloc for its buffer). */
void mc_ranges_sort(struct mc_ranges *r)
{
	if (r->n > 0)
		mc_sort(r->v, (size_t)r->n, sizeof r->v[0], range_cmp);
}

void mc_gaps_each(uintptr_t lo, uintptr_t hi, const struct mc_ranges *r,
		  void (*cb)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	/* The first range that may reach into [lo, hi): ranges may nest or
	 * overlap, so the scan starts at the first that starts at or after
	 * no range before it could. */
	int a = 0, b = r->n;
	while (a < b) {
		int mid = (a + b) / 2;
		if (r->v[mid][0] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	uintptr_t at = lo;
	/* Ranges that start before lo may still cover it. */
	for (int i = 0; i < a; i++)
		if (r->v[i][1] > at)
			at = r->v[i][1];
	for (int i = a; i < r->n && at < hi && r->v[i][0] < hi; i++) {
		if (r->v[i][0] > at)
			cb(at, r->v[i][0], arg);
		if (r->v[i][1] > at)
			at = r->v[i][1];
	}
	if (at < hi)
		cb(at, hi, arg);
}

static void add_resident(uintptr_t lo, uintptr_t hi, void *arg)
{
	*(uint64_t *)arg += mc_resident_bytes(lo, hi);
}

uint64_t mc_resident_outside(uintptr_t lo, uintptr_t hi, const struct mc_ranges *r)
{
	uint64_t n = 0;
	mc_gaps_each(lo, hi, r, add_resident, &n);
	return n;
}
