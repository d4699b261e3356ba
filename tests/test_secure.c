/*
 * test_secure.c - memcheck inside a setuid or setgid program run by a
 * user it does not trust (issue 14, item 14): with MEMCHECK_* pointing
 * at root's files it read them (MEMCHECK_SUPPRESSIONS=<a root-only file>
 * printed its first line in the parse error) and created root-owned
 * files anywhere (MEMCHECK_REPORT, _LOG, _GEN_SUPPRESSIONS, _FAIL_LOG),
 * writing values the user chose into them.  Now it reads no MEMCHECK_*
 * variable there and says so once, naming them only.
 *
 * A real setuid (then setgid) root copy of tests/prog/suid, run as
 * nobody with setpriv(1).  Needs root to make it; skipped otherwise.
 */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define SETPRIV "/usr/bin/setpriv"
#define NOBODY 65534

static const struct {
	mode_t mode;
	const char *what, *stdout_says;
} kinds[] = {
	{ 04755, "setuid", "euid=0 uid=65534 secure=1\n" },
	{ 02755, "setgid", "euid=65534 uid=65534 secure=1\n" },
};

/* Copy from to to, byte for byte. */
static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *data = h_read_file(from, &len);
	ck_assert_msg(data != NULL, "cannot read %s", from);
	FILE *f = fopen(to, "w");
	ck_assert_msg(f && fwrite(data, 1, len, f) == len && fclose(f) == 0, "cannot write %s", to);
	free(data);
}

/* The entries of dir, removed when remove is set. */
static int entries(const char *dir, bool remove)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (remove)
			unlink(h_env("%s/%s", dir, e->d_name));
	}
	if (d)
		closedir(d);
	return n;
}

START_TEST(test_privileged_program_ignores_memcheck_variables)
{
	if (geteuid() != 0 || access(SETPRIV, X_OK) != 0) {
		printf("note: not root, or no %s; skipping the %s case\n", SETPRIV, kinds[_i].what);
		return;
	}
	/* A directory nobody may enter, holding root's secret, a
	 * directory only root may write to, and the program. */
	char dir[] = "/tmp/memcheck-secure-XXXXXX";
	ck_assert(mkdtemp(dir) != NULL);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	const char *secret = h_env("%s/secret", dir), *priv = h_env("%s/private", dir);
	const char *prog = h_env("%s/suid", dir);
	FILE *f = fopen(secret, "w");
	fputs("root-only line\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(secret, 0640), 0);
	ck_assert_int_eq(mkdir(priv, 0770), 0);
	copy_file(h_prog("suid"), prog);
	ck_assert_int_eq(chmod(prog, kinds[_i].mode), 0);

	const char *env[] = {
		h_env("MEMCHECK_SUPPRESSIONS=%s", secret),
		h_env("MEMCHECK_BUDGET=%s", secret),
		h_env("MEMCHECK_BASELINE=%s", secret),
		h_env("MEMCHECK_REPORT=%s/report.jsonl", priv),
		h_env("MEMCHECK_LOG=%s/log", priv),
		h_env("MEMCHECK_GEN_SUPPRESSIONS=%s/gen.supp", priv),
		h_env("MEMCHECK_FAIL_LOG=%s/fail.log", priv),
		"MEMCHECK_TEXT=full\nINJECTED-LINE",
		"MEMCHECK_STACK_DEPTH=0",
		"MEMCHECK_EXITCODE=0",
		NULL,
	};
	const char *argv[] = { SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
			       prog, NULL };
	struct h_run r;
	int started = h_run(&r, argv, env, 0, NULL);
	int created = entries(priv, true);
	/* Cleaned up before anything is checked: a failure leaves nothing
	 * setuid behind. */
	unlink(prog);
	unlink(secret);
	rmdir(priv);
	rmdir(dir);
	ck_assert(started == 0);
	/* 23: the default MEMCHECK_EXITCODE for the region that leaks
	 * (MEMCHECK_EXITCODE=0 was ignored too). */
	ck_assert_msg(r.exit_code == 23 && strcmp(r.out, kinds[_i].stdout_says) == 0,
		      "%s copy as nobody: %s, stdout \"%s\"; stderr:\n%s", kinds[_i].what,
		      h_status(&r), r.out, r.err);
	ck_assert_msg(!strstr(r.err, "root-only"), "the secret is on stderr:\n%s", r.err);
	ck_assert_msg(!strstr(r.err, "INJECTED"), "a value was echoed:\n%s", r.err);
	ck_assert_msg(created == 0, "memcheck created %d file(s) in the private directory",
		      created);
	ck_assert_msg(h_count_lines(r.err, "a setuid or setgid program: ") == 1 &&
		      strstr(r.err, "MEMCHECK_SUPPRESSIONS") && strstr(r.err, "MEMCHECK_REPORT"),
		      "expected one line naming the ignored variables:\n%s", r.err);
	/* The defaults rule: the region's report on standard error, with
	 * its stack (MEMCHECK_STACK_DEPTH=0 was ignored too).  Symbolized
	 * only where the process may read its own /proc files: a setgid
	 * process of another user's is not dumpable, and they are root's. */
	ck_assert_msg(strstr(r.err, "24 bytes in 1 blocks are definitely lost in loss record 1 "
				    "of 1 in region \"suid\"") &&
		      strstr(r.err, "   at 0x") &&
		      (kinds[_i].mode != 04755 || strstr(r.err, "main (tests/prog/suid.c")),
		      "no report with its stack on stderr:\n%s", r.err);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("secure", 30);
	tcase_add_loop_test(tc, test_privileged_program_ignores_memcheck_variables, 0,
			    (int)(sizeof kinds / sizeof kinds[0]));
	return h_run_suite(NULL);
}
