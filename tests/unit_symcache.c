/*
 * unit_symcache.c - lib/symcache.c's cache directory (memcheck-cache(5)):
 * a file is created, renamed or removed only in the directory checked
 * ours, even when the directory is swapped for a symlink after the
 * process's first check of it (its lstat is once a process).
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

/* options.c is not linked: the cache is a directory of the test's own,
 * set before symcache.c first looks (its name is decided once). */
struct mc_options mc_opt;

static char base[] = "/tmp/unit_symcache.XXXXXX";

/* The one entry of base/cache (v1-<build ID>), NULL when none. */
static const char *versioned(void)
{
	static char path[1024];
	char cache[512];
	snprintf(cache, sizeof cache, "%s/cache", base);
	DIR *d = opendir(cache);
	const char *found = NULL;
	for (struct dirent *e; d && (e = readdir(d));)
		if (!strncmp(e->d_name, "v1-", 3)) {
			snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
			found = path;
		}
	if (d)
		closedir(d);
	return found;
}

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct stat st;
	return lstat(path, &st) == 0;
}

static void file_made(const char *name)
{
	int fd = mc_symcache_open(name, O_WRONLY | O_CREAT | O_APPEND);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* One process's life: the directory made and checked at the first
 * create, then swapped for a symlink to a directory of the same user's
 * (the target of an attack would be another's, or one the attacker may
 * read): no file may appear there, and the symlink's directory is not
 * used for reading either. */
START_TEST(swapped_for_a_symlink)
{
	file_made("first");
	const char *v = versioned();
	ck_assert_ptr_nonnull(v);
	ck_assert(exists(v, "first"));
	/* a file that exists, read by its path: the directory checked once */
	int fd = mc_symcache_open("first", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);

	char moved[512], other[512];
	snprintf(moved, sizeof moved, "%s/moved", base);
	snprintf(other, sizeof other, "%s/other", base);
	ck_assert_int_eq(mkdir(other, 0700), 0);
	ck_assert_int_eq(rename(v, moved), 0);
	ck_assert_int_eq(symlink(other, v), 0);

	ck_assert_int_eq(mc_symcache_open("second", O_WRONLY | O_CREAT | O_APPEND), -1);
	ck_assert_int_eq(mc_symcache_open("third", O_WRONLY | O_CREAT | O_EXCL), -1);
	ck_assert_msg(!exists(other, "second") && !exists(other, "third"),
		      "a cache file was created through the symlink, in %s", other);
	/* a rename or unlink through it neither */
	char victim[1024];
	snprintf(victim, sizeof victim, "%s/victim", other);
	fd = open(victim, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(!mc_symcache_rename("victim", "renamed"));
	mc_symcache_unlink("victim");
	ck_assert(exists(other, "victim") && !exists(other, "renamed"));

	/* the real directory back: used again */
	ck_assert_int_eq(unlink(v), 0);
	ck_assert_int_eq(rename(moved, v), 0);
	file_made("second");
	ck_assert(exists(v, "second"));
	ck_assert(mc_symcache_rename("second", "renamed"));
	ck_assert(exists(v, "renamed") && !exists(v, "second"));
	mc_symcache_unlink("renamed");
	ck_assert(!exists(v, "renamed"));
}
END_TEST

/* A directory group-writable: not ours, no file made in it. */
START_TEST(not_ours_when_others_may_write)
{
	file_made("first");
	const char *v = versioned();
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(chmod(v, 0770), 0);
	ck_assert_int_eq(mc_symcache_open("second", O_WRONLY | O_CREAT | O_APPEND), -1);
	ck_assert(!exists(v, "second"));
	ck_assert_int_eq(chmod(v, 0700), 0);
	file_made("second");
	ck_assert(exists(v, "second"));
}
END_TEST

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	if (t && *t && strlen(t) < 200)
		snprintf(base, sizeof base, "%s/unit_symcache.XXXXXX", t);
	ck_assert_ptr_nonnull(mkdtemp(base));
	static char cache[512];
	snprintf(cache, sizeof cache, "%s/cache", base);
	mc_opt.cache = cache;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void teardown(void)
{
	nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	TCase *tc = h_tcase("symcache", 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, swapped_for_a_symlink);
	tcase_add_test(tc, not_ours_when_others_may_write);
	return h_run_suite(NULL);
}
