/*
 * unit_ownread.c - lib/ownread.c on its own: the pages of a file's
 * mapping that memcheck's read made present are counted as its own, the
 * pages the program had mapped before are not, a block seen before is
 * read again without opening pagemap, and a page unmapped since is no
 * longer counted.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

#define BLOCK (1u << MC_OWN_BLOCK_SHIFT)

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

static void read_at(const char *p)
{
	struct mc_own_read r;
	mc_own_read_begin(&r);
	mc_own_read_at(&r, p, 8);
	ck_assert_int_eq(*(volatile const char *)p, 'x');
	mc_own_read_end(&r);
}

/* How many of the 16 pages of the block at p pagemap says are present. */
static int present_pages(const char *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	uint64_t e[BLOCK / 4096];
	ck_assert(mc_pagemap_read(fd, (uintptr_t)p, e, BLOCK / 4096));
	close(fd);
	int n = 0;
	for (size_t i = 0; i < BLOCK / 4096; i++)
		n += (int)(e[i] >> 63);
	return n;
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
	/* memcheck's: block 2, first touched by its read */
	read_at(p + 2 * BLOCK + 5000);
	uint64_t mine = own();
	ck_assert_uint_ge(mine, 4096);
	ck_assert_uint_le(mine, BLOCK);
	/* seen: named again, no pagemap opened, nothing new */
	struct mc_own_read r;
	mc_own_read_begin(&r);
	mc_own_read_at(&r, p + 2 * BLOCK + 9000, 8);
	ck_assert_int_eq(r.fd, -1);
	ck_assert_int_eq(r.n, 0);
	mc_own_read_end(&r);
	ck_assert_uint_eq(own(), mine);
	/* gone with the mapping */
	munmap((void *)(p + 2 * BLOCK), BLOCK);
	ck_assert_uint_eq(own(), 0);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("ownread", 0);
	tcase_add_test(tc, counts_what_its_read_mapped);
	return h_run_suite(NULL);
}
