/*
 * unit_ownread.c - lib/ownread.c on its own: the pages of a file's
 * mapping that memcheck's read made present are counted as its own, the
 * pages the program had mapped before are not, a block seen before is
 * read again without opening pagemap, and a page unmapped since is no
 * longer counted; where one fault maps a whole 2 MiB (a file on a tmpfs
 * of huge pages), every page it mapped is counted, not only the block
 * named.
 */
#include <check.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

#define BLOCK (1u << MC_OWN_BLOCK_SHIFT)

#define HUGE (2u << 20)

/* A file of 4 blocks in the page cache, mapped read-only at a 64 KiB
 * boundary (fault-around's window, whose pages one fault maps). */
static const char *map_file(void)
{
	char path[] = "/tmp/unit_ownread.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	static char buf[4 * BLOCK];
	memset(buf, 'x', sizeof buf);
	ck_assert_int_eq(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
	char *area = mmap(NULL, 5 * BLOCK, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(area != MAP_FAILED);
	char *at = (char *)(((uintptr_t)area + BLOCK - 1) & ~(uintptr_t)(BLOCK - 1));
	char *p = mmap(at, 4 * BLOCK, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	ck_assert(p == at);
	close(fd);
	return p;
}

/* memcheck's read of the 8 bytes at p, in no object (its window one page
 * table's reach: an object's ELF header would be read, which this file's
 * mapping has not, and reading it would fault the page being tested). */
static void read_at(const char *p)
{
	struct mc_own_read r;
	mc_own_read_begin(&r, 0, 0);
	mc_own_read_at(&r, p, 8);
	ck_assert_int_eq(*(volatile const char *)p, 'x');
	mc_own_read_end(&r);
}

/* How many of the pages of [p, p + len) pagemap says are present. */
static int present_in(const char *p, size_t len)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	static uint64_t e[512];
	int n = 0;
	for (size_t at = 0; at < len; at += sizeof e / 8 * 4096) {
		size_t k = (len - at) / 4096 < sizeof e / 8 ? (len - at) / 4096 : sizeof e / 8;
		ck_assert(mc_pagemap_read(fd, (uintptr_t)p + at, e, k));
		for (size_t i = 0; i < k; i++)
			n += (int)(e[i] >> 63);
	}
	close(fd);
	return n;
}

/* The same of the 16 pages of the block at p. */
static int present_pages(const char *p)
{
	return present_in(p, BLOCK);
}

static uint64_t own(void)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	uint64_t b = mc_own_read_bytes(fd);
	close(fd);
	return b;
}

START_TEST(counts_what_its_read_mapped)
{
	const char *p = map_file();
	/* the program's: block 0, touched before memcheck reads it */
	ck_assert_int_eq(*(volatile const char *)p, 'x');
	ck_assert_msg(present_pages(p) > 0, "pagemap shows no page of a block just read present");
	/* How much one fault maps is the kernel's: fault-around's window
	 * (fault_around_bytes), or a whole large folio of the page cache
	 * (a file written in one call may be one).  On the official CI's
	 * machine memcheck's read of block 2 recorded nothing (block 2 was
	 * present before it, presumably): blocks 1-3 unmapped here, so that
	 * memcheck's read is what maps block 2 again. */
	ck_assert_int_eq(madvise((void *)(p + BLOCK), 3 * BLOCK, MADV_DONTNEED), 0);
	ck_assert_int_eq(present_pages(p + 2 * BLOCK), 0);
	read_at(p + 100);
	ck_assert_uint_eq(own(), 0);
	/* Block 0's pages the program's fault left absent: where
	 * fault-around is off (fault_around_bytes 4096) its touch mapped
	 * one page, and a fault that maps a large folio whole may map the
	 * rest at memcheck's read below: those are memcheck's too. */
	int before = present_pages(p);
	/* memcheck's: block 2, first touched by its read, and whatever
	 * else of the file its fault mapped (on a kernel that maps a
	 * large folio whole, the official CI's presumably) */
	read_at(p + 2 * BLOCK + 5000);
	uint64_t mine = own();
	ck_assert_uint_ge(mine, 4096);
	ck_assert_uint_eq(mine, 4096 * (uint64_t)(present_in(p, 4 * BLOCK) - before));
	/* seen: named again, no pagemap opened, nothing new */
	struct mc_own_read r;
	mc_own_read_begin(&r, 0, 0);
	mc_own_read_at(&r, p + 2 * BLOCK + 9000, 8);
	ck_assert_int_eq(r.fd, -1);
	ck_assert_int_eq(r.n, 0);
	mc_own_read_end(&r);
	ck_assert_uint_eq(own(), mine);
	/* gone with the mapping */
	munmap((void *)(p + 2 * BLOCK), BLOCK);
	ck_assert_uint_eq(own(), 4096 * (uint64_t)(present_pages(p) - before +
						   present_pages(p + BLOCK) +
						   present_pages(p + 3 * BLOCK)));
	munmap((void *)p, 4 * BLOCK);
	ck_assert_uint_eq(own(), 0);
}
END_TEST

/* One phdr walk's answer: the PT_LOAD of the object that holds addr. */
struct seg_find {
	uintptr_t addr, lo, hi;
};

static int seg_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct seg_find *f = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)4095;
		uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + 4095) & ~(uintptr_t)4095;
		if (ph->p_type == PT_LOAD && f->addr >= lo && f->addr < hi) {
			f->lo = lo;
			f->hi = hi;
			return 1;
		}
	}
	return 0;
}

/* In an object the dynamic linker mapped (the C library), a new block's
 * window is the 2 MiB one page table maps, within the segment that holds
 * the block (the VMA a fault stays in): not the object's code, nor
 * another object's pages. */
START_TEST(window_is_the_segment)
{
	struct dl_find_object fo;
	ck_assert_int_eq(_dl_find_object((void *)&strlen, &fo), 0);
	ck_assert(fo.dlfo_eh_frame != NULL);
	struct seg_find f = { (uintptr_t)fo.dlfo_eh_frame, 0, 0 };
	ck_assert_int_eq(dl_iterate_phdr(seg_of, &f), 1);
	uintptr_t wlo = f.addr & ~(uintptr_t)(HUGE - 1), whi = wlo + HUGE;
	wlo = wlo > f.lo ? wlo : f.lo;
	whi = whi < f.hi ? whi : f.hi;
	struct mc_own_read r;
	mc_own_read_begin(&r, (uintptr_t)fo.dlfo_map_start, (uintptr_t)fo.dlfo_map_end);
	mc_own_read_at(&r, fo.dlfo_eh_frame, 12);
	ck_assert_int_eq(r.nwin, 1);
	ck_assert_uint_eq(r.win[0].first * 4096, wlo);
	ck_assert_uint_eq(r.win[0].pages * 4096ull, whi - wlo);
	ck_assert_uint_lt(r.win[0].pages, 512); /* the C library's code left out */
	mc_own_read_end(&r);
}
END_TEST

/* A tmpfs of huge pages, mounted at dir (root only: false, and why in
 * why, where it cannot be). */
static bool huge_mount(char *dir, char *why, size_t n)
{
	if (!mkdtemp(dir)) {
		snprintf(why, n, "mkdtemp: %s", strerror(errno));
		return false;
	}
	if (mount("none", dir, "tmpfs", 0, "huge=always,size=8m") != 0) {
		snprintf(why, n, "mount -t tmpfs -o huge=always: %s", strerror(errno));
		rmdir(dir);
		return false;
	}
	return true;
}

/* On a kernel whose fault maps more than the 64 KiB block named, every
 * page the fault mapped is memcheck's: a 2 MiB file on a tmpfs of huge
 * pages, whose first read fault maps the whole 2 MiB (one huge page). */
START_TEST(counts_a_whole_huge_page)
{
	char dir[] = "/tmp/unit_ownread_hp.XXXXXX", why[160];
	if (!huge_mount(dir, why, sizeof why)) {
		printf("unit_ownread: huge-page case skipped (%s)\n", why);
		return;
	}
	char path[sizeof dir + 8];
	snprintf(path, sizeof path, "%s/f", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	static char buf[HUGE];
	memset(buf, 'x', sizeof buf);
	ck_assert_int_eq(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
	/* at a 2 MiB boundary, where a huge page can be mapped whole */
	char *area = mmap(NULL, 2 * HUGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(area != MAP_FAILED);
	char *at = (char *)(((uintptr_t)area + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	char *p = mmap(at, HUGE, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	close(fd);
	/* detached at once (the mapping keeps the file): no mount left
	 * behind where an assertion below ends the test */
	unlink(path);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	ck_assert(p == at);
	/* whether one fault maps more than its block here: touched, counted,
	 * unmapped again (the page stays in the file) */
	ck_assert_int_eq(*(volatile const char *)(p + 5 * BLOCK), 'x');
	int probe = present_in(p, HUGE);
	ck_assert_int_eq(madvise(p, HUGE, MADV_DONTNEED), 0);
	ck_assert_int_eq(present_in(p, HUGE), 0);
	if (probe <= (int)(BLOCK / 4096)) {
		printf("unit_ownread: huge-page case skipped (a fault mapped %d pages)\n", probe);
	} else {
		/* memcheck's read of block 5: all that its fault mapped is its */
		read_at(p + 5 * BLOCK + 100);
		ck_assert_int_gt(present_in(p, HUGE), (int)(BLOCK / 4096));
		ck_assert_uint_eq(own(), 4096 * (uint64_t)present_in(p, HUGE));
		/* named again anywhere in it: seen, no pagemap opened */
		struct mc_own_read r;
		mc_own_read_begin(&r, 0, 0);
		mc_own_read_at(&r, p + 20 * BLOCK, 8);
		ck_assert_int_eq(r.fd, -1);
		mc_own_read_end(&r);
	}
	munmap(area, 2 * HUGE);
	ck_assert_uint_eq(own(), 0);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("ownread", 0);
	tcase_add_test(tc, counts_what_its_read_mapped);
	tcase_add_test(tc, counts_a_whole_huge_page);
	tcase_add_test(tc, window_is_the_segment);
	return h_run_suite(NULL);
}
