/*
 * unit_ownread.c - lib/ownread.c on its own: memcheck's view of an
 * object's file holds the bytes the program maps at the view's delta,
 * reading it all maps none of the program's pages, its pages are counted
 * as memcheck's while mapped, and it is unmapped once the object is
 * unloaded, and what reads /proc/self/maps for the objects' mappings
 * does not see it; a constant of the object's read there (mc_own_read);
 * no view for an object without a file (the vdso) nor for one whose
 * file was replaced since it was loaded.
 */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

/* How many of the pages of [lo, hi) pagemap says are present. */
static int present_in(uintptr_t lo, uintptr_t hi)
{
	lo &= ~(uintptr_t)4095;
	hi = mc_page_round(hi);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	static uint64_t e[512];
	int n = 0;
	for (uintptr_t at = lo; at < hi;) {
		size_t k = (hi - at) / 4096 < 512 ? (hi - at) / 4096 : 512;
		ck_assert(mc_pagemap_read(fd, at, e, k));
		for (size_t i = 0; i < k; i++)
			n += (int)(e[i] >> 63);
		at += k * 4096;
	}
	close(fd);
	return n;
}

/* The bytes of memcheck's views mapped now, as footprint.c counts them
 * in M. */
static uint64_t own(void)
{
	struct mc_own_span v[MC_OWN_VIEWS];
	int n = mc_own_views(v, MC_OWN_VIEWS);
	uint64_t b = 0;
	for (int i = 0; i < n; i++)
		b += 4096 * (uint64_t)present_in(v[i].lo, v[i].hi);
	return b;
}

/* The view of the object that holds addr, as cfi.c asks for it. */
static bool view_of(const void *addr, struct mc_own_view *v, struct dl_find_object *fo)
{
	ck_assert_int_eq(_dl_find_object((void *)addr, fo), 0);
	ck_assert_ptr_nonnull(fo->dlfo_eh_frame);
	return mc_own_view((uintptr_t)fo->dlfo_eh_frame, (uintptr_t)fo->dlfo_map_start,
			   fo->dlfo_link_map, v);
}

/* A library this process does not otherwise use (its call-frame tables
 * untouched), or NULL with a note. */
static void *open_unused(const char *name, const char *symbol, void **sym)
{
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("unit_ownread: %s not installed; case skipped\n", name);
		return NULL;
	}
	*sym = dlsym(h, symbol);
	ck_assert_ptr_nonnull(*sym);
	return h;
}

/* mc_maps_each's callback: false at a mapping that holds *arg. */
static bool not_at(const struct mc_mapping *m, void *arg)
{
	uintptr_t at = *(const uintptr_t *)arg;
	ck_assert_msg(at < m->lo || at >= m->hi, "a view of memcheck's listed as %s", m->name);
	return true;
}

START_TEST(view_reads_without_the_programs_pages)
{
	void *sym, *h = open_unused("libz.so.1", "zlibVersion", &sym);
	if (!h)
		return;
	ck_assert_uint_eq(own(), 0);
	struct mc_own_view v;
	struct dl_find_object fo;
	ck_assert(view_of(sym, &v, &fo));
	uintptr_t hdr = (uintptr_t)fo.dlfo_eh_frame;
	ck_assert(v.lo <= hdr && hdr < v.hi);
	/* The program's pages of that segment dropped (a read-only file
	 * mapping never written: they come back from the file), then the
	 * whole segment read through the view: none of them mapped again. */
	uintptr_t plo = v.lo & ~(uintptr_t)4095, phi = mc_page_round(v.hi);
	ck_assert_int_eq(madvise((void *)plo, phi - plo, MADV_DONTNEED), 0);
	ck_assert_int_eq(present_in(plo, phi), 0);
	unsigned long sum = 0;
	for (uintptr_t a = v.lo; a < v.hi; a++)
		sum += *(volatile const uint8_t *)(a + v.delta);
	ck_assert_int_eq(present_in(plo, phi), 0);
	/* its pages memcheck's, the view's bytes the program's */
	int mine = present_in(v.lo + v.delta, v.hi + v.delta);
	ck_assert_int_gt(mine, 0);
	ck_assert_uint_eq(own(), 4096 * (uint64_t)mine);
	ck_assert_int_eq(memcmp((const void *)(v.lo + v.delta), (const void *)v.lo, v.hi - v.lo), 0);
	(void)sum;
	/* not an object's mapping to what reads /proc/self/maps for them */
	uintptr_t at = v.lo + v.delta;
	ck_assert(mc_own_view_at(at));
	ck_assert(mc_maps_each(not_at, &at));
	/* the same view the next time, no new mapping */
	struct mc_own_view again;
	ck_assert(view_of(sym, &again, &fo));
	ck_assert_uint_eq(again.delta, v.delta);
	/* gone with the object */
	ck_assert_int_eq(dlclose(h), 0);
	ck_assert_uint_eq(own(), 0);
	unsigned char in;
	ck_assert_int_eq(mincore((void *)((v.lo + v.delta) & ~(uintptr_t)4095), 4096, &in), -1);
}
END_TEST

/* A constant the object holds in the viewed segment (threadstart.c's
 * and roots.c's reads of the C library's nptl_db words): mc_own_read
 * copies it from the view where the figures are measured, and the
 * program's page stays unmapped; where they are not, from the
 * program's mapping. */
START_TEST(a_constant_read_in_the_view)
{
	void *sym, *h = open_unused("libz.so.1", "zlibVersion", &sym);
	if (!h)
		return;
	struct mc_own_view v;
	struct dl_find_object fo;
	ck_assert(view_of(sym, &v, &fo));
	uintptr_t at = (uintptr_t)fo.dlfo_eh_frame, page = at & ~(uintptr_t)4095;
	unsigned char got[8], want[8];
	ck_assert_int_eq(madvise((void *)page, 4096, MADV_DONTNEED), 0);
	ck_assert_int_eq(present_in(page, page + 4096), 0);
	mc_own_read_on();
	ck_assert(mc_own_read_recording());
	mc_own_read((const void *)at, got, sizeof got);
	ck_assert_int_eq(present_in(page, page + 4096), 0);
	memcpy(want, (const void *)at, sizeof want);
	ck_assert_int_eq(memcmp(got, want, sizeof got), 0);
	/* a range past the viewed segment: the program's mapping */
	mc_own_read((const void *)(v.hi - 4), got, 4);
	ck_assert_int_eq(memcmp(got, (const void *)(v.hi - 4), 4), 0);
	dlclose(h);
}
END_TEST

/* The object's file replaced on disk after it was loaded (a package
 * upgrade): the file at its path is another, and there is no view. */
START_TEST(no_view_of_a_replaced_file)
{
	char dir[] = "/tmp/unit_ownread.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char lib[64], other[64], cmd[512];
	snprintf(lib, sizeof lib, "%s/libz.so.1", dir);
	snprintf(other, sizeof other, "%s/other", dir);
	void *sym, *probe = open_unused("libz.so.1", "zlibVersion", &sym);
	if (!probe)
		return;
	struct link_map *m;
	ck_assert_int_eq(dlinfo(probe, RTLD_DI_LINKMAP, &m), 0);
	snprintf(cmd, sizeof cmd, "cp %s %s && cp %s %s", m->l_name, lib, "/proc/self/exe", other);
	ck_assert_int_eq(system(cmd), 0);
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	ck_assert_ptr_nonnull(h);
	sym = dlsym(h, "zlibVersion");
	ck_assert_int_eq(rename(other, lib), 0);
	struct mc_own_view v;
	struct dl_find_object fo;
	ck_assert(!view_of(sym, &v, &fo));
	ck_assert_uint_eq(own(), 0);
	dlclose(h);
	dlclose(probe);
	unlink(lib);
	rmdir(dir);
}
END_TEST

/* The vdso has no file: no view (cfi.c reads its pages, the kernel's,
 * always present). */
START_TEST(no_view_of_the_vdso)
{
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	struct dl_find_object fo;
	if (!vdso || _dl_find_object((void *)(vdso + 0x800), &fo) != 0 || !fo.dlfo_eh_frame) {
		printf("unit_ownread: no vdso with call-frame tables; case skipped\n");
		return;
	}
	struct mc_own_view v;
	ck_assert(!mc_own_view((uintptr_t)fo.dlfo_eh_frame, (uintptr_t)fo.dlfo_map_start,
			       fo.dlfo_link_map, &v));
	ck_assert_uint_eq(own(), 0);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("ownread", 0);
	tcase_add_test(tc, view_reads_without_the_programs_pages);
	tcase_add_test(tc, a_constant_read_in_the_view);
	tcase_add_test(tc, no_view_of_a_replaced_file);
	tcase_add_test(tc, no_view_of_the_vdso);
	return h_run_suite(NULL);
}
