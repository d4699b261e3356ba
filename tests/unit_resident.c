/*
 * unit_resident.c - lib/resident.c on its own, and the list of memcheck's
 * own mappings in lib/ownmap.c: mincore counts the pages written and no
 * others, /proc/self/maps is read line by line whatever its length, the
 * parts of a range outside a set of others are found, and a mapping
 * memcheck makes is listed until it is unmapped, or kept for the next
 * request it fits: cleared, still listed and still counted.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

/* mc_maps_run_at asks the kernel into its caller's buffer: this */
static char qname[4096];

#define PAGES 64

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

START_TEST(counts_written_pages_only)
{
	char *p = mmap(NULL, PAGES * page(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	uintptr_t lo = (uintptr_t)p, hi = lo + PAGES * page();
	ck_assert_uint_eq(mc_resident_bytes(lo, hi), 0);
	for (int i = 0; i < PAGES; i += 4)
		p[(size_t)i * page()] = 1;
	ck_assert_uint_eq(mc_resident_bytes(lo, hi), PAGES / 4 * page());
	/* Rounded out to whole pages: a byte of a written page is the page. */
	ck_assert_uint_eq(mc_resident_bytes(lo + 1, lo + 2), page());
	/* Pages given back are no longer resident. */
	ck_assert_int_eq(madvise(p, PAGES / 2 * page(), MADV_DONTNEED), 0);
	ck_assert_uint_eq(mc_resident_bytes(lo, hi), PAGES / 8 * page());
	/* A range reaching past the mapping counts what is mapped. */
	munmap(p + PAGES / 2 * page(), PAGES / 2 * page());
	ck_assert_uint_eq(mc_resident_bytes(lo, hi), 0);
	munmap(p, PAGES / 2 * page());
}
END_TEST

/* pagemap's count is of the pages this process maps: a file's page in
 * the page cache (mincore says resident) that it never touched is not,
 * and pages are rounded out as mincore's are. */
START_TEST(maps_touched_file_pages_only)
{
	char path[] = "/tmp/unit_resident_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	static char buf[PAGES * 4096];
	memset(buf, 7, sizeof buf);
	size_t len = PAGES * page() < sizeof buf ? PAGES * page() : sizeof buf;
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len); /* in the page cache */
	const volatile char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne((const void *)p, MAP_FAILED);
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	int pm = open("/proc/self/pagemap", O_RDONLY);
	ck_assert_int_ge(pm, 0);
	ck_assert_uint_eq(mc_resident_bytes(lo, hi), len);
	ck_assert_int_eq(madvise((void *)lo, len, MADV_DONTNEED), 0);
	ck_assert_int_eq(mc_mapped_bytes(pm, lo, hi), 0);
	(void)p[0]; /* one read fault: fault-around may map its neighbours */
	int64_t mapped = mc_mapped_bytes(pm, lo, hi);
	ck_assert_int_ge(mapped, (int64_t)page());
	ck_assert_int_le(mapped, 16 * (int64_t)page());
	ck_assert_int_eq(mc_mapped_bytes(pm, lo + 1, lo + 2), (int64_t)page());
	ck_assert_int_eq(mc_mapped_bytes(-1, lo, hi), -1);
	close(pm);
	munmap((void *)lo, len);
	close(fd);
}
END_TEST

struct find {
	uintptr_t addr;
	struct mc_mapping found;
	char name[4096];  /* a path whole: from a tree 204 bytes deep, 64 cut this
			   * program's name off its mapping's */
	int lines;
	bool stack;
};

static bool find_cb(const struct mc_mapping *m, void *arg)
{
	struct find *f = arg;
	f->lines++;
	f->stack |= strcmp(m->name, "[stack]") == 0 && !m->anonymous;
	if (f->addr >= m->lo && f->addr < m->hi) {
		f->found = *m;
		snprintf(f->name, sizeof f->name, "%s", m->name);
	}
	return true;
}

/* pagemap's present bits counted eight entries at a time and the rest
 * one by one: every third page written of ranges of each length from 1
 * to 37 pages, starting at each of the first pages. */
START_TEST(counts_present_entries_any_length)
{
	enum { N = 37 };
	char *m = mmap(NULL, N * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	for (size_t i = 0; i < N; i += 3)
		m[i * page()] = 1;
	int pm = open("/proc/self/pagemap", O_RDONLY);
	ck_assert_int_ge(pm, 0);
	for (size_t from = 0; from < 4; from++)
		for (size_t to = from + 1; to <= N; to++) {
			int64_t want = 0;
			for (size_t i = from; i < to; i++)
				want += i % 3 == 0;
			ck_assert_int_eq(mc_mapped_bytes(pm, (uintptr_t)m + from * page(),
							 (uintptr_t)m + to * page()),
					 want * (int64_t)page());
		}
	close(pm);
	munmap(m, N * page());
}
END_TEST

START_TEST(reads_every_mapping)
{
	/* Many mappings, so that /proc/self/maps is longer than one read:
	 * each with other protection than its neighbours, so that the
	 * kernel does not merge them. */
	enum { N = 600 };
	char *p = mmap(NULL, N * page(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	for (int i = 0; i < N; i += 2)
		ck_assert_int_eq(mprotect(p + (size_t)i * page(), page(), PROT_READ | PROT_WRITE), 0);
	struct find f = { .addr = (uintptr_t)p + (N - 2) * page() };
	ck_assert(mc_maps_each(find_cb, &f));
	ck_assert_int_ge(f.lines, N);
	ck_assert(f.stack);
	ck_assert_uint_eq(f.found.lo, f.addr);
	ck_assert_uint_eq(f.found.hi, f.addr + page());
	ck_assert(f.found.anonymous && f.found.readable && f.found.writable && !f.found.shared);
	ck_assert_str_eq(f.name, "");
	/* A file's mapping: this program's code. */
	f = (struct find){ .addr = (uintptr_t)counts_written_pages_only };
	ck_assert(mc_maps_each(find_cb, &f));
	ck_assert(!f.found.anonymous && !f.found.writable);
	ck_assert_ptr_nonnull(strstr(f.name, "unit_resident"));
	munmap(p, N * page());
}
END_TEST

static void add_gap(uintptr_t lo, uintptr_t hi, void *arg)
{
	struct mc_ranges *out = arg;
	mc_ranges_add(out, lo, hi);
}

START_TEST(finds_the_gaps)
{
	uintptr_t v[8][2], g[8][2];
	struct mc_ranges r = { v, 0, 8, false }, gaps = { g, 0, 8, false };
	mc_ranges_add(&r, 500, 600);
	mc_ranges_add(&r, 100, 200);
	mc_ranges_add(&r, 150, 180);    /* inside another */
	mc_ranges_add(&r, 50, 120);     /* overlapping it */
	mc_ranges_sort(&r);
	ck_assert_uint_eq(r.v[0][0], 50);
	ck_assert_uint_eq(r.v[3][0], 500);
	mc_gaps_each(0, 1000, &r, add_gap, &gaps);
	ck_assert_int_eq(gaps.n, 3);
	ck_assert_uint_eq(g[0][0], 0);
	ck_assert_uint_eq(g[0][1], 50);
	ck_assert_uint_eq(g[1][0], 200);
	ck_assert_uint_eq(g[1][1], 500);
	ck_assert_uint_eq(g[2][0], 600);
	ck_assert_uint_eq(g[2][1], 1000);
	/* A range that starts inside one. */
	gaps.n = 0;
	mc_gaps_each(160, 550, &r, add_gap, &gaps);
	ck_assert_int_eq(gaps.n, 1);
	ck_assert_uint_eq(g[0][0], 200);
	ck_assert_uint_eq(g[0][1], 500);
	/* Wholly covered. */
	gaps.n = 0;
	mc_gaps_each(510, 590, &r, add_gap, &gaps);
	ck_assert_int_eq(gaps.n, 0);
	/* Full: said, not overrun. */
	for (int i = 0; i < 10; i++)
		mc_ranges_add(&gaps, 1, 2);
	ck_assert(gaps.overflow);
	ck_assert_int_eq(gaps.n, 8);
}
END_TEST

struct own {
	uintptr_t addr;
	bool listed;
};

static void own_cb(uintptr_t lo, uintptr_t hi, void *arg)
{
	struct own *o = arg;
	o->listed |= o->addr >= lo && o->addr < hi;
}

START_TEST(lists_its_own_mappings)
{
	void *a = mc_map(1 << 20), *b = mc_map_io(4096);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	struct own o = { (uintptr_t)a + 4096, false };
	ck_assert(mc_own_each(own_cb, &o));
	ck_assert(o.listed);
	o = (struct own){ (uintptr_t)b, false };
	mc_own_each(own_cb, &o);
	ck_assert(o.listed);
	mc_unmap(a, 1 << 20);
	mc_unmap_io(b, 4096);
	o = (struct own){ (uintptr_t)a + 4096, false };
	mc_own_each(own_cb, &o);
	ck_assert(!o.listed);
}
END_TEST

/* A counter standing in for footprint.c: the bytes it was told of. */
static int64_t told;
static bool fake_before(size_t bytes)
{
	(void)bytes;
	return false;
}
static void fake_after(bool folding, int64_t bytes)
{
	(void)folding;
	told += bytes;
}
static void fake_lazy(const void *p, size_t len)
{
	(void)p;
	(void)len;
}
static bool lazy_one;
static bool fake_lazy_remove(const void *p, size_t len)
{
	(void)p;
	(void)len;
	return lazy_one;
}
static const struct mc_map_hooks fake = { fake_before, fake_after, fake_lazy, fake_lazy_remove };

static bool listed(const void *p)
{
	struct own o = { (uintptr_t)p, false };
	mc_own_each(own_cb, &o);
	return o.listed;
}

START_TEST(keeps_unmapped_mappings)
{
	mc_map_hooks_set(&fake);
	size_t pg = page();
	/* Three pages asked for, written, unmapped: kept, still listed,
	 * counted whole (whole pages from the start: the last one is all
	 * memcheck's, internal.h mc_page_round). */
	char *a = mc_map(3 * pg - 100);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(told, (int64_t)(3 * pg));
	memset(a, 0x5a, 3 * pg);
	mc_unmap(a, 3 * pg - 100);
	ck_assert(listed(a));
	ck_assert_int_eq(told, (int64_t)(3 * pg));
	/* Two pages fit (at most twice the pages asked): the same mapping,
	 * cleared, the count unchanged. */
	char *b = mc_map(2 * pg);
	ck_assert_ptr_eq(b, a);
	for (size_t i = 0; i < 3 * pg; i++)
		ck_assert_int_eq(b[i], 0);
	ck_assert_int_eq(told, (int64_t)(3 * pg));
	/* Its user's size is not its length: unmapped with the size it
	 * asked for, it is kept whole again. */
	mc_unmap_io(b, 2 * pg);
	ck_assert_int_eq(told, (int64_t)(3 * pg));
	/* One page does not take three. */
	char *c = mc_map(pg);
	ck_assert_ptr_ne(c, a);
	ck_assert_int_eq(told, (int64_t)(4 * pg));
	/* A lazily counted mapping is footprint.c's to forget: never kept. */
	lazy_one = true;
	mc_unmap(c, pg);
	ck_assert(!listed(c));
	lazy_one = false;
	/* Too large to keep: unmapped, the count down by its size. */
	char *d = mc_map(1 << 20);
	ck_assert_ptr_nonnull(d);
	mc_unmap(d, 1 << 20);
	ck_assert(!listed(d));
	ck_assert_int_eq(told, (int64_t)(4 * pg));
	mc_map_hooks_set(NULL);
}
END_TEST

/* Every slot taken by single pages no later call asks for: a larger
 * mapping unmapped takes the place of one of them (that one unmapped,
 * the count down by its page), and the next call of its size gets it
 * back, rather than a fresh populated mapping and an munmap each time
 * (a region's end in a loop of 70,000: tests/prog/ignore). */
START_TEST(full_slots_make_room_for_larger)
{
	mc_map_hooks_set(&fake);
	size_t pg = page();
	char *small[8];
	for (int i = 0; i < 8; i++)
		small[i] = mc_map(pg);
	for (int i = 0; i < 8; i++)
		mc_unmap(small[i], pg);
	for (int i = 0; i < 8; i++)
		ck_assert(listed(small[i]));
	int64_t before = told;
	char *big = mc_map(6 * pg);
	ck_assert_ptr_nonnull(big);
	mc_unmap(big, 6 * pg);
	ck_assert(listed(big));
	int gone = 0;
	for (int i = 0; i < 8; i++)
		gone += !listed(small[i]);
	ck_assert_int_eq(gone, 1);
	ck_assert_int_eq(told, before + (int64_t)(6 * pg) - (int64_t)pg);
	char *again = mc_map(6 * pg);
	ck_assert_ptr_eq(again, big);
	mc_unmap(again, 6 * pg);
	/* A single page does not push out a larger one: with seven single
	 * pages and the six kept, eight more single pages (seven of them the
	 * kept ones, taken back) unmapped leave the six kept and one single
	 * page unmapped */
	for (int i = 0; i < 8; i++)
		small[i] = mc_map(pg);
	for (int i = 0; i < 8; i++)
		mc_unmap(small[i], pg);
	gone = 0;
	for (int i = 0; i < 8; i++)
		gone += !listed(small[i]);
	ck_assert_int_eq(gone, 1);
	ck_assert(listed(big));
	mc_map_hooks_set(NULL);
}
END_TEST

/* The table of where each file's mappings begin: a run's first mapping
 * only, names as given; a table over fixed memory never grows past it
 * (no mapping: the scan keeps its table in its own structure) and says
 * so. */
START_TEST(notes_file_runs)
{
	char fixed[64];
	struct mc_buf b = { .s = fixed, .cap = sizeof fixed };
	struct mc_maps_runs w = { .b = &b, .fixed = true };
	static const struct { uintptr_t lo; const char *name; } m[] = {
		{ 0x1000, "/a" }, { 0x2000, "/a" }, { 0x3000, "" }, { 0x4000, "/a" },
		{ 0x5000, "[heap]" }, { 0x6000, "/a-much-longer-name-than-fits-in-what-is-left" },
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
		struct mc_mapping mp = { .lo = m[i].lo, .hi = m[i].lo + 0x1000, .name = m[i].name };
		mc_maps_runs_note(&w, &mp);
	}
	ck_assert_ptr_eq(b.s, fixed);
	ck_assert(b.oom);
	ck_assert_str_eq(mc_maps_run_at(&b, 0x1000, qname, sizeof qname), "/a");
	ck_assert_ptr_null(mc_maps_run_at(&b, 0x2000, qname, sizeof qname));   /* inside a run */
	ck_assert_str_eq(mc_maps_run_at(&b, 0x4000, qname, sizeof qname), "/a");
	ck_assert_str_eq(mc_maps_run_at(&b, 0x5000, qname, sizeof qname), "[heap]");
	ck_assert_ptr_null(mc_maps_run_at(&b, 0x6000, qname, sizeof qname));   /* did not fit */
	/* a growing one takes it all */
	struct mc_buf g = { 0 };
	struct mc_maps_runs wg = { .b = &g };
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
		struct mc_mapping mp = { .lo = m[i].lo, .hi = m[i].lo + 0x1000, .name = m[i].name };
		mc_maps_runs_note(&wg, &mp);
	}
	ck_assert(!g.oom);
	ck_assert_str_eq(mc_maps_run_at(&g, 0x6000, qname, sizeof qname), m[5].name);
	mc_buf_free(&g);
}
END_TEST

/* Each private read-write mapping with no file behind it, and no other,
 * the same asked (PROCMAP_QUERY) and read: one of each kind around. */
struct anon_list {
	uintptr_t v[512][3];
	int n;
};

static bool anon_cb(const struct mc_mapping *m, void *arg)
{
	struct anon_list *l = arg;
	ck_assert(m->anonymous && m->readable && m->writable && !m->shared);
	if (l->n < 512) {
		l->v[l->n][0] = m->lo;
		l->v[l->n][1] = m->hi;
		l->v[l->n++][2] = strcmp(m->name, "[heap]") == 0;
	}
	return true;
}

static bool anon_has(const struct anon_list *l, uintptr_t a)
{
	for (int i = 0; i < l->n; i++)
		if (a >= l->v[i][0] && a < l->v[i][1])
			return true;
	return false;
}

START_TEST(lists_anonymous_mappings_both_ways)
{
	size_t pg = page();
	/* rw, r-only, rw: three mappings the kernel keeps apart */
	char *p = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *sh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	FILE *tmp = tmpfile();
	ck_assert_ptr_nonnull(tmp);
	ck_assert_int_eq(ftruncate(fileno(tmp), (off_t)pg), 0);
	char *file = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(tmp), 0);
	ck_assert(p != MAP_FAILED && sh != MAP_FAILED && file != MAP_FAILED);
	ck_assert_int_eq(mprotect(p + pg, pg, PROT_READ), 0);
	p[0] = p[2 * pg] = sh[0] = file[0] = 1;
	/* The break's memory, [heap], exists (ASan's malloc makes none). */
	char *brk_page = sbrk((intptr_t)pg);
	ck_assert(brk_page != (void *)-1);
	brk_page[0] = 1;
	static struct anon_list asked, read;
	memset(&asked, 0, sizeof asked);
	memset(&read, 0, sizeof read);
	mc_maps_query_set(true);
	ck_assert(mc_maps_anonymous_each(anon_cb, &asked));
	mc_maps_query_set(false);
	ck_assert(mc_maps_anonymous_each(anon_cb, &read));
	mc_maps_query_set(true);
	ck_assert_int_eq(asked.n, read.n);
	ck_assert_int_lt(read.n, 512);
	ck_assert_int_eq(memcmp(asked.v, read.v, sizeof asked.v[0] * (size_t)read.n), 0);
	/* A file's read-write mapping with a path longer than a question's
	 * name takes: the whole file read instead, the same list. */
	char dir[64], part[201], sub[512], path[1024];
	snprintf(dir, sizeof dir, "/tmp/unit_resident.%d", (int)getpid());
	memset(part, 'd', sizeof part - 1);
	part[sizeof part - 1] = 0;
	snprintf(sub, sizeof sub, "%s/%s", dir, part);
	snprintf(path, sizeof path, "%s/%s", sub, part);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)pg), 0);
	char *longer = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ck_assert(longer != MAP_FAILED);
	longer[0] = 1;
	static struct anon_list asked2;
	memset(&asked2, 0, sizeof asked2);
	ck_assert(mc_maps_anonymous_each(anon_cb, &asked2));
	ck_assert_int_eq(asked2.n, read.n);
	ck_assert_int_eq(memcmp(asked2.v, read.v, sizeof read.v[0] * (size_t)read.n), 0);
	munmap(longer, pg);
	close(fd);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
	ck_assert(anon_has(&read, (uintptr_t)p) && anon_has(&read, (uintptr_t)p + 2 * pg));
	ck_assert(!anon_has(&read, (uintptr_t)p + pg));
	ck_assert(!anon_has(&read, (uintptr_t)sh) && !anon_has(&read, (uintptr_t)file));
	bool heap = false;
	for (int i = 0; i < read.n; i++)
		heap |= read.v[i][2] != 0;
	ck_assert(heap);
	munmap(p, 3 * pg);
	munmap(sh, pg);
	munmap(file, pg);
	fclose(tmp);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("resident", 0);
	tcase_add_test(tc, counts_written_pages_only);
	tcase_add_test(tc, maps_touched_file_pages_only);
	tcase_add_test(tc, counts_present_entries_any_length);
	tcase_add_test(tc, reads_every_mapping);
	tcase_add_test(tc, finds_the_gaps);
	tcase_add_test(tc, lists_its_own_mappings);
	tcase_add_test(tc, keeps_unmapped_mappings);
	tcase_add_test(tc, full_slots_make_room_for_larger);
	tcase_add_test(tc, notes_file_runs);
	tcase_add_test(tc, lists_anonymous_mappings_both_ways);
	return h_run_suite(NULL);
}
