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
 * Two rows: a row's setup makes the files, its teardown removes them
 * before anything is checked, and the row says what stdout and stderr
 * must and must not hold.  And a program run as root that parts its
 * effective ids from its real ones (tests/prog/plain_setxid): what it
 * runs starts in secure execution, unmeasured, and memcheck says so.
 */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "harness.h"

#define SETPRIV "/usr/bin/setpriv"
#define NOBODY 65534

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

/* The row's files: a directory nobody may enter, holding root's secret,
 * a directory only root may write to, and the program.  Static: a row
 * runs in a process of its own, its setup, teardown and check in turn. */
static struct {
	char dir[64];
	const char *secret, *priv, *prog;
	int created;              /* files memcheck made in priv */
	const char *args[6], *env[11];  /* the run's */
} files;

static bool privileged_copy(struct h_spec *run, mode_t mode)
{
	if (geteuid() != 0 || access(SETPRIV, X_OK) != 0) {
		printf("note: not root, or no %s; skipping the %s case\n", SETPRIV,
		       mode == 04755 ? "setuid" : "setgid");
		return false;
	}
	/* The set-user-ID bit takes effect nowhere under no_new_privs (a
	 * container run with no-new-privileges, a seccomp launcher: the
	 * rows' programs ran as nobody, secure=0, exit 0), nor on a /tmp
	 * mounted nosuid (or noexec: none runs): the premise cannot be had. */
	struct statvfs vfs;
	const char *why = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? "no_new_privs is set"
			  : statvfs("/tmp", &vfs) == 0 && (vfs.f_flag & (ST_NOSUID | ST_NOEXEC))
				  ? "/tmp is mounted nosuid or noexec"
				  : NULL;
	if (why) {
		printf("note: %s: a set-ID program gains nothing here; skipping the %s case\n",
		       why, mode == 04755 ? "setuid" : "setgid");
		return false;
	}
	snprintf(files.dir, sizeof files.dir, "/tmp/memcheck-secure-XXXXXX");
	ck_assert(mkdtemp(files.dir) != NULL);
	ck_assert_int_eq(chmod(files.dir, 0755), 0);
	files.secret = h_env("%s/secret", files.dir);
	files.priv = h_env("%s/private", files.dir);
	files.prog = h_env("%s/suid", files.dir);
	FILE *f = fopen(files.secret, "w");
	fputs("root-only line\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(files.secret, 0640), 0);
	ck_assert_int_eq(mkdir(files.priv, 0770), 0);
	copy_file(h_prog("suid"), files.prog);
	ck_assert_int_eq(chmod(files.prog, mode), 0);

	const char *const args[] = { "--reuid=65534", "--regid=65534", "--clear-groups", "--",
				     files.prog, NULL };
	const char *const env[] = {
		h_env("MEMCHECK_SUPPRESSIONS=%s", files.secret),
		h_env("MEMCHECK_BUDGET=%s", files.secret),
		h_env("MEMCHECK_BASELINE=%s", files.secret),
		h_env("MEMCHECK_REPORT=%s/report.jsonl", files.priv),
		h_env("MEMCHECK_LOG=%s/log", files.priv),
		h_env("MEMCHECK_GEN_SUPPRESSIONS=%s/gen.supp", files.priv),
		h_env("MEMCHECK_FAIL_LOG=%s/fail.log", files.priv),
		"MEMCHECK_TEXT=full\nINJECTED-LINE",
		"MEMCHECK_STACK_DEPTH=0",
		"MEMCHECK_EXITCODE=0",
		NULL,
	};
	_Static_assert(sizeof args == sizeof files.args && sizeof env == sizeof files.env,
		       "files.args, files.env");
	memcpy(files.args, args, sizeof args);
	memcpy(files.env, env, sizeof env);
	run->args = files.args;
	run->env = files.env;
	return true;
}

H_SETUP(setuid_copy)
{
	return privileged_copy(run, 04755);
}

H_SETUP(setgid_copy)
{
	return privileged_copy(run, 02755);
}

/* Cleaned up before anything is checked: a failure leaves nothing
 * setuid behind. */
H_TEARDOWN(remove_files)
{
	files.created = entries(files.priv, true);
	unlink(files.prog);
	unlink(files.secret);
	rmdir(files.priv);
	rmdir(files.dir);
}

H_CHECK(nothing_created)
{
	ck_assert_msg(files.created == 0, "memcheck created %d file(s) in the private directory",
		      files.created);
}

/* Run as nobody with setpriv(1), every MEMCHECK_* pointing at root's
 * files, none set by the harness (no report, no text). */
#define AS_NOBODY                                                              \
	.allocators = H_ONLY(H_GLIBC),                                         \
	.run = { .prog = SETPRIV, .no_report = true, .text = "" },             \
	.teardown = remove_files, .check = nothing_created,                    \
	/* 23: the default MEMCHECK_EXITCODE for the region that leaks         \
	 * (MEMCHECK_EXITCODE=0 was ignored too) */                            \
	.exit = 23,                                                            \
	/* neither the secret nor a value the user chose is echoed */          \
	.no_err = H_LIST("root-only", "INJECTED"),                             \
	/* one line naming the ignored variables */                            \
	.err_lines = { { "a setuid or setgid program: ", 1 } }
/* The defaults rule: the region's report on standard error, with its
 * stack (MEMCHECK_STACK_DEPTH=0 was ignored too). */
#define REPORTED "MEMCHECK_SUPPRESSIONS", "MEMCHECK_REPORT",                   \
	"24 bytes in 1 blocks are definitely lost in loss record 1 of 1 in region \"suid\"", \
	"   at 0x"

/* A harness run as root that parts its effective id from its real one
 * around a test (libarchive's: seteuid to nobody, then system(3)): the
 * program it runs starts in secure execution, its dynamic linker drops
 * LD_PRELOAD, and nothing said so.  Now memcheck says it once, at the
 * call (lib/creds.c). */
H_SETUP(as_root)
{
	(void)run;
	(void)c;
	if (geteuid() == 0)
		return true;
	printf("note: not root; skipping the effective-id cases\n");
	return false;
}

#define PARTS(how, ids)                                                         \
	.run = { .prog = "plain_setxid", .args = H_LIST(how), .flags = H_PRELOAD,  \
		 .no_report = true, .text = "" },                                  \
	.setup = as_root, .stdout_is = "rc=0\npreload=0\n",                       \
	.err_lines = { { how ": effective " ids ": a program this process runs from " \
			 "here starts in secure execution", 1 } }

static const struct h_case cases[] = {
	{ "seteuid to nobody as root", PARTS("seteuid", "user 65534 group 0, real user 0 group 0") },
	{ "setegid to nogroup as root", PARTS("setegid", "user 0 group 65534, real user 0 group 0") },
	{ "setreuid, the real id kept", PARTS("setreuid", "user 65534 group 0, real user 0 group 0") },
	{ "setresuid, the real id kept",
	  PARTS("setresuid", "user 65534 group 0, real user 0 group 0") },
	/* every id alike: no secure execution, the preload reaches the
	 * program it runs, nothing said */
	{ "every id set alike in a forked child",
	  .run = { .prog = "plain_setxid", .args = H_LIST("alike"), .flags = H_PRELOAD,
		   .no_report = true, .text = "" },
	  .setup = as_root, .stdout_is = "rc=0\npreload=1\n", .no_err = H_LIST("secure execution") },
	/* Symbolized only where the process may read its own /proc files:
	 * a setgid process of another user's is not dumpable, and they are
	 * root's. */
	{ "setuid copy as nobody", AS_NOBODY, .setup = setuid_copy,
	  .stdout_is = "euid=0 uid=65534 secure=1\n",
	  .err = H_LIST(REPORTED, "main (tests/prog/suid.c") },
	{ "setgid copy as nobody", AS_NOBODY, .setup = setgid_copy,
	  .stdout_is = "euid=65534 uid=65534 secure=1\n", .err = H_LIST(REPORTED) },
};

int main(void)
{
	TCase *tc = h_tcase("secure", 30);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
