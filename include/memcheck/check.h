/*
 * memcheck/check.h - glue for the check unit-test framework.
 *
 * One line puts every test of a TCase under memcheck:
 *
 *     TCase *tc = tcase_create("parser");
 *     memcheck_tcase(tc);
 *
 * Each test then runs in its own region, named after the test, and fails
 * with check's own message when it leaves memory behind or breaks a
 * budget.  The fixtures are checked fixtures, so they run in the test's
 * process: in CK_FORK mode (check's default) the region starts in the
 * forked child and its figures are the test's own; in CK_NOFORK mode it
 * runs in the runner, and check's own message file, opened during each
 * test, is kept out of the verdict (memcheck_ck_ignore_own_files).
 *
 * Or, inside one test:
 *
 *     memcheck_begin("parse big file");
 *     ...
 *     ck_assert_memcheck_end();
 *
 * Include <check.h> is done here; link with -lmemcheck and check's libs.
 */
#ifndef MEMCHECK_CHECK_H
#define MEMCHECK_CHECK_H

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

/* End the innermost region and fail the running test, with check's
 * message saying why, when the region is not clean or within budget.
 * The failure is put at the leak's allocation site (the first frame of
 * its stack in the program's code) when there is one, else at file:line. */
static inline void memcheck_ck_end_at(const char *file, int line)
{
	struct mcglue_failure f = { file, line, "" };
	int rc = mcglue_end('"', &f);
	if (rc == 0)
		return;
	if (rc < 0)
		_ck_assert_failed(file, line, "memcheck_end()", "memcheck: no region open");
	/* check reports the failure, and the program's status is check's */
	_ck_assert_failed(f.file, f.line, "memcheck_end()", "%s", f.why);
}

#define ck_assert_memcheck_end() memcheck_ck_end_at(__FILE__, __LINE__)

/* Checked-fixture setup: opens the test's region.  The test's name is
 * not known yet here (tcase_name() still answers for the previous one);
 * the teardown names the region. */
static inline void memcheck_ck_setup(void)
{
	memcheck_begin("test");
}

/* check keeps its messages in a temporary file that it reopens after
 * the setup fixture and closes after the teardown: in CK_NOFORK mode that
 * FILE and its buffer are allocated inside the test's region and still
 * live at its end.  They are check's, not the test's: find check's open
 * message files (mkstemp'd as check_XXXXXX, then unlinked) among glibc's
 * open streams and let their blocks outlive the region. */
static inline void memcheck_ck_ignore_own_files(void)
{
#ifdef __GLIBC__
	/* glibc's own walk over its open streams (the _IO_list_all variable
	 * itself is copy-relocated into the program and goes stale). */
	extern void *_IO_iter_begin(void);
	extern void *_IO_iter_end(void);
	extern void *_IO_iter_next(void *);
	extern FILE *_IO_iter_file(void *);
	extern void _IO_list_lock(void);
	extern void _IO_list_unlock(void);
	_IO_list_lock();
	for (void *i = _IO_iter_begin(); i != _IO_iter_end(); i = _IO_iter_next(i)) {
		FILE *f = _IO_iter_file(i);
		char link[64], target[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", f->_fileno);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		const char *base = strrchr(target, '/');
		if (base && strncmp(base, "/check_", 7) == 0 && strstr(base, " (deleted)")) {
			memcheck_ignore(f);
			if (f->_IO_buf_base)
				memcheck_ignore(f->_IO_buf_base);
		}
	}
	_IO_list_unlock();
#endif
}

/* Checked-fixture teardown: names the region after the test, ends it,
 * and fails the test when the region is not clean. */
static inline void memcheck_ck_teardown(void)
{
	const char *name = tcase_name();
	if (name)
		memcheck_rename(name);
	memcheck_ck_ignore_own_files();
	ck_assert_memcheck_end();
}

/* Put every test of tc under memcheck. */
static inline void memcheck_tcase(TCase *tc)
{
	tcase_add_checked_fixture(tc, memcheck_ck_setup, memcheck_ck_teardown);
}

#endif /* MEMCHECK_CHECK_H */
