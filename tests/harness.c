/*
 * harness.c - see harness.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem, vasprintf, strsignal */
#endif
#include "harness.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("harness: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(99);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

/* ---- paths ----------------------------------------------------------- */

const char *h_build(void)
{
	const char *b = getenv("MEMCHECK_BUILD");
	if (!b || b[0] != '/')
		die("MEMCHECK_BUILD must be the absolute path of build/ (run `make prog-check`)");
	return b;
}

const char *h_lib(void)
{
	static char *lib;
	if (!lib)
		lib = xprintf("%s/libmemcheck.so", h_build());
	return lib;
}

const char *h_prog(const char *name)
{
	char *p = xprintf("%s/tests/prog/%s", h_build(), name);
	if (access(p, X_OK) != 0)
		die("%s: %s (built by `make prog-check`)", p, strerror(errno));
	return p;
}

const char *h_allocator_so(const char *soname)
{
	char *p = xprintf("/usr/lib/x86_64-linux-gnu/%s", soname);
	if (access(p, R_OK) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

const struct h_allocator h_allocators[H_NALLOCATORS_ALL] = {
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) \
	[H_##id] = { soname, family },
#include "allocators.def"
#undef MC_ALLOCATOR
};

/* The default ones come first in lib/allocators.def: a loop over
 * 0..H_NALLOCATORS is a loop over them. */
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) \
	_Static_assert((((flags) & MC_ALLOC_DEFAULT) != 0) == ((int)H_##id < (int)H_NALLOCATORS), \
		       "lib/allocators.def: " name ": the default allocators first");
#include "allocators.def"
#undef MC_ALLOCATOR

bool h_allocator(int i, const char **so)
{
	const char *path = NULL;
	if (h_allocators[i].soname && !(path = h_allocator_so(h_allocators[i].soname)))
		printf("note: %s not installed; skipping it\n", h_allocators[i].soname);
	if (so)
		*so = path;
	return !h_allocators[i].soname || path;
}

const char *h_allocator_name(int i)
{
	return h_allocators[i].soname ? h_allocators[i].soname : "glibc";
}

pid_t h_spawn_quiet(char *const argv[], char *const env[], bool traced)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (traced)
			ptrace(PTRACE_TRACEME, 0, 0, 0);
		execve(argv[0], argv, env ? env : environ);
		_exit(127);
	}
	return pid;
}

bool h_can_ptrace(void)
{
	static int can = -1;
	if (can >= 0)
		return can;
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	int st = 0;
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid: %s", strerror(errno));
	can = WIFSTOPPED(st);
	if (can) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		waitpid(pid, &st, 0);
	}
	return can;
}

/* One directory per test program, made by the process that runs the
 * suite; check's forked test processes put their files in it (names
 * carry their pid), and the suite's process removes it at exit, failed
 * tests' files included.  H_KEEP=1 keeps it. */
static char tmpdir[PATH_MAX];
static pid_t tmpdir_owner;
static unsigned tmp_seq;

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Everything under it, trees that tests build (a fake prefix with lib/
 * and suppressions/) included: depth first, symbolic links not followed. */
static void remove_tmpdir(void)
{
	if (!tmpdir[0] || tmpdir_owner != getpid())
		return;
	if (getenv("H_KEEP")) {
		fprintf(stderr, "harness: files kept in %s\n", tmpdir);
		return;
	}
	nftw(tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_tmpdir(void)
{
	if (tmpdir[0])
		return;
	const char *t = getenv("TMPDIR");
	t = t && *t ? t : "/tmp";
	/* Programs are built and run in it (test_symcache, test_debuginfo):
	 * on a /tmp mounted noexec (a hardened CI image) each failed with
	 * "cannot start" (15 checks).  The build's directory runs programs
	 * anyway. */
	struct statvfs vfs;
	if (statvfs(t, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		static char here[PATH_MAX - 32];
		snprintf(here, sizeof here, "%s/tests/tmp", h_build());
		mkdir(here, 0700);
		printf("note: %s is mounted noexec: temporary files in %s\n", t, here);
		fflush(stdout); /* before check forks the tests */
		t = here;
	}
	snprintf(tmpdir, sizeof tmpdir, "%s/memcheck-test-XXXXXX", t);
	if (!mkdtemp(tmpdir))
		die("mkdtemp %s: %s", tmpdir, strerror(errno));
	tmpdir_owner = getpid();
	atexit(remove_tmpdir);
}

/* Each process's names in a directory of its own in the suite's, made
 * by mkdtemp: named by the pid alone, a test whose pid an earlier test of
 * the suite had (pid_max 32768: a loaded suite wraps it) took that
 * one's names, and appended its records to that one's report
 * (test_harness: test_tmppath_unique_when_a_pid_comes_back). */
const char *h_tmppath(const char *tag)
{
	static char mine[sizeof tmpdir + 32];
	static pid_t mine_owner;
	make_tmpdir();
	if (mine_owner != getpid()) {
		snprintf(mine, sizeof mine, "%s/%d-XXXXXX", tmpdir, (int)getpid());
		if (!mkdtemp(mine))
			die("mkdtemp %s: %s", mine, strerror(errno));
		mine_owner = getpid();
	}
	return xprintf("%s/%u-%s", mine, ++tmp_seq, tag);
}

/* ---- running programs ------------------------------------------------ */

/* Append what fd has to read now to *s (*n bytes in *cap, kept
 * NUL-terminated; *s may start NULL): up to the end of a file, or until
 * a non-blocking terminal master has no more (EAGAIN, or EIO once the
 * other side is closed by all). */
static void read_into(int fd, char **s, size_t *n, size_t *cap)
{
	for (;;) {
		if (*n + 1 >= *cap) {
			*cap = *cap ? 2 * *cap : 4096;
			*s = realloc(*s, *cap);
			if (!*s)
				die("out of memory");
		}
		ssize_t r = read(fd, *s + *n, *cap - *n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*n += (size_t)r;
	}
	(*s)[*n] = 0;
}

char *h_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *s = NULL;
	size_t n = 0, cap = 0;
	read_into(fd, &s, &n, &cap);
	close(fd);
	if (len)
		*len = n;
	return s;
}

int h_site_line(const char *name, const char *what)
{
	char *src = h_read_file(h_env("%s/../tests/prog/%s", h_build(), name), NULL);
	ck_assert_msg(src != NULL, "cannot read tests/prog/%s", name);
	const char *mark = strstr(src, h_env("SITE %s */", what));
	ck_assert_msg(mark != NULL, "no SITE %s in tests/prog/%s", what, name);
	int line = 1;
	for (const char *p = src; p < mark; p++)
		line += *p == '\n';
	free(src);
	return line;
}

static bool drop_var(const char *e)
{
	return strncmp(e, "MEMCHECK_", 9) == 0 || strncmp(e, "LD_PRELOAD=", 11) == 0;
}

/* h_exec's spec.timeout for the h_run it makes; 0 otherwise. */
static double run_timeout;

int h_run(struct h_run *r, const char *const argv[], const char *const env[],
	  unsigned flags, const char *so)
{
	memset(r, 0, sizeof *r);
	r->exit_code = -1;

	/* The environment: ours, filtered, then the caller's additions. */
	size_t n = 0, extra = 0;
	while (environ[n])
		n++;
	while (env && env[extra])
		extra++;
	char **envp = xcalloc(n + extra + 4, sizeof *envp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!drop_var(environ[i]))
			envp[k++] = environ[i];
	if (flags & H_PRELOAD || (flags & H_LINKED && so))
		envp[k++] = so ? xprintf("LD_PRELOAD=%s %s", h_lib(), so)
			       : xprintf("LD_PRELOAD=%s", h_lib());
	else if (flags & H_PRELOAD_AFTER)
		envp[k++] = xprintf("LD_PRELOAD=%s %s", so, h_lib());
	for (size_t i = 0; i < extra; i++)
		envp[k++] = (char *)env[i];
	/* After the caller's: getenv takes the first, so a test's own value
	 * wins. */
	if (!(flags & H_EXITCODE))
		envp[k++] = "MEMCHECK_EXITCODE=0";
	/* Never the real home's cache (symcache.c): one of the build's own,
	 * warm for most tests, shared by all. */
	static char *cache;
	if (!cache)
		cache = xprintf("MEMCHECK_CACHE=%s/tests/cache", h_build());
	envp[k++] = cache;
	envp[k] = NULL;

	const char *outp = h_tmppath("stdout"), *errp = h_tmppath("stderr");
	int ofd = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ofd < 0 || efd < 0)
		die("cannot create %s: %s", outp, strerror(errno));
	/* H_TERMINAL: the master side, read while the program runs (a
	 * pty holds only a few KiB); the child opens the other side after
	 * setsid(), which makes it its controlling terminal. */
	int master = -1;
	const char *slave = NULL;
	if (flags & H_TERMINAL) {
		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (master < 0 || grantpt(master) || unlockpt(master) || !(slave = ptsname(master)))
			die("cannot make a terminal: %s", strerror(errno));
		fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	}
	char *tty_out = NULL;
	size_t tty_len = 0, tty_cap = 0;

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(126);
		if (master >= 0) {
			int t = -1;
			if (setsid() < 0 || (t = open(slave, O_RDWR)) < 0 || dup2(t, 1) < 0 ||
			    dup2(t, 2) < 0)
				_exit(126);
			close(t);
		}
		execve(argv[0], (char *const *)argv, envp);
		dprintf(2, "harness: execve %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(ofd);
	close(efd);
	free(envp); /* the LD_PRELOAD string is small: left to exit */
	r->pid = pid;
	/* Wait, but not forever: a hung program is killed and says so.
	 * $H_TIMEOUT seconds (20 by default), or the spec's longer timeout,
	 * stretched by the load over the processors as the tests' own
	 * limits are (suite.c): test_threads' plain_leak_asleep, forty
	 * threads at nice 19 on one processor, took 1.2-17.6 s at a load of
	 * 40-65 on two, and one run past 30 s was killed with its output
	 * unwritten (stop 43's CI). */
	int st = 0;
	const char *t = getenv("H_TIMEOUT");
	double limit = t && atof(t) > 0 ? atof(t) : 20.0, waited = 0;
	if (run_timeout > limit)
		limit = run_timeout;
	limit *= h_load_stretch();
	long nap = 100000; /* ns, doubling to 5 ms */
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			die("wait4: %s", strerror(errno));
		if (waited > limit && !r->timed_out) {
			r->timed_out = true;
			kill(pid, SIGKILL);
		}
		if (master >= 0) {
			struct pollfd pf = { master, POLLIN, 0 };
			poll(&pf, 1, (int)(nap / 1000000) + 1);
			read_into(master, &tty_out, &tty_len, &tty_cap);
		} else {
			struct timespec ts = { 0, nap };
			nanosleep(&ts, NULL);
		}
		waited += (double)nap / 1e9;
		if (nap < 5000000)
			nap *= 2;
	}
	r->maxrss_kib = ru.ru_maxrss;
	if (WIFEXITED(st)) {
		r->exit_code = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		r->signal = WTERMSIG(st);
	}
	r->out = h_read_file(outp, &r->out_len);
	r->err = h_read_file(errp, &r->err_len);
	if (!r->out || !r->err)
		die("cannot read back %s / %s", outp, errp);
	if (master >= 0) {
		/* what is still in the pty */
		read_into(master, &tty_out, &tty_len, &tty_cap);
		close(master);
		free(r->out);
		r->out = tty_out;
		r->out_len = tty_len;
	}
	unlink(outp);
	unlink(errp);
	return r->exit_code == 127 && strstr(r->err, "harness: execve") ? -1 : 0;
}

void h_run_free(struct h_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

const char *h_status(const struct h_run *r)
{
	static char buf[96];
	if (r->timed_out)
		snprintf(buf, sizeof buf,
			 "timed out (killed after H_TIMEOUT s, default 20, or the spec's timeout, times the load)");
	else if (r->signal)
		snprintf(buf, sizeof buf, "signal %d (%s)", r->signal, strsignal(r->signal));
	else
		snprintf(buf, sizeof buf, "exit %d", r->exit_code);
	return buf;
}

/* ---- one run, its records ------------------------------------------ */

static size_t list_len(const char *const *l)
{
	size_t n = 0;
	while (l && l[n])
		n++;
	return n;
}

/* build/memcheck, which `make all` builds. */
static const char *memcheck_cmd(void)
{
	static char *path;
	if (!path) {
		path = xprintf("%s/memcheck", h_build());
		if (access(path, X_OK) != 0)
			die("%s: %s (built by `make all`)", path, strerror(errno));
	}
	return path;
}

void h_exec(struct h_res *x, const struct h_spec *sp)
{
	memset(x, 0, sizeof *x);
	x->alloc = sp->alloc;
	const char *soname = h_allocators[sp->alloc].soname, *so = sp->so;
	if (!so && soname)
		ck_assert_msg((so = h_allocator_so(soname)) != NULL,
			      "%s is not installed: the test should have asked h_allocator", soname);
	bool run_cmd = sp->cli && sp->cli[0] && !strcmp(sp->cli[0], "run") && sp->prog;
	if (!sp->no_report && (!sp->cli || run_cmd))
		x->report = h_tmppath("report.jsonl");
	size_t na = list_len(sp->args), ne = list_len(sp->env), nc = list_len(sp->cli);
	const char **argv = xcalloc(nc + na + 6, sizeof *argv);
	const char **env = xcalloc(ne + 3, sizeof *env);
	size_t n = 0, report_at = SIZE_MAX;
	if (sp->cli) {
		argv[n++] = memcheck_cmd();
		memcpy(argv + n, sp->cli, nc * sizeof *argv);
		n += nc;
		if (x->report) {
			report_at = n;
			argv[n++] = "--report";
			argv[n++] = x->report;
		}
		if (sp->prog)
			argv[n++] = "--";
	}
	size_t prog_at = n;
	if (sp->prog) {
		argv[n++] = strchr(sp->prog, '/') ? sp->prog : h_prog(sp->prog);
		memcpy(argv + n, sp->args, na * sizeof *argv);
		n += na;
	}
	/* The spec's variables first: getenv takes the first, so they win
	 * over the defaults after them. */
	memcpy(env, sp->env, ne * sizeof *env);
	if (x->report && !sp->cli)
		env[ne++] = h_env("MEMCHECK_REPORT=%s", x->report);
	if (!sp->text || sp->text[0])
		env[ne++] = h_env("MEMCHECK_TEXT=%s", sp->text ? sp->text : "none");

	/* The label: the words run, less the --report the harness added,
	 * commands by their base names; the allocator; the spec's variables. */
	size_t len = 0, cap = sizeof x->label;
	for (size_t i = 0; i < n && len < cap; i++) {
		const char *w = argv[i], *base = strrchr(w, '/');
		if (report_at != SIZE_MAX && (i == report_at || i == report_at + 1))
			continue;
		if ((i == 0 || i == prog_at) && base)
			w = base + 1;
		len += (size_t)snprintf(x->label + len, cap - len, "%s%s", len ? " " : "", w);
	}
	bool preloaded = sp->flags & (H_PRELOAD | H_PRELOAD_AFTER) || (sp->flags & H_LINKED && so);
	if (len < cap && preloaded)
		len += (size_t)snprintf(x->label + len, cap - len, " under %s%s",
					sp->so ? sp->so : h_allocator_name(sp->alloc),
					sp->flags & H_PRELOAD_AFTER ? " (preloaded first)" : "");
	for (size_t i = 0; i < list_len(sp->env) && len < cap; i++)
		len += (size_t)snprintf(x->label + len, cap - len, "%s%s", i ? " " : " with ",
					sp->env[i]);

	run_timeout = sp->timeout;
	int started = h_run(&x->r, argv, env, sp->flags, so);
	run_timeout = 0;
	ck_assert_msg(started == 0, "cannot start %s", argv[0]);
	free(argv);
	free(env);
	if (x->report)
		ck_assert_msg(h_report_load(x->report, &x->rep) == 0, "%s: bad report: %s",
			      x->label, x->rep.error);
}

void h_res_free(struct h_res *x)
{
	h_report_free(&x->rep);
	h_run_free(&x->r);
}

const struct h_json *h_rec(const struct h_res *x, const char *name)
{
	const struct h_json *rec = h_record(&x->rep, name, x->r.pid);
	ck_assert_msg(rec != NULL, "%s: no record \"%s\" of pid %d among its %zu; stderr:\n%s",
		      x->label, name, (int)x->r.pid, x->rep.n, x->r.err);
	return rec;
}

void h_expect_exit(const struct h_res *x, int want)
{
	ck_assert_msg(x->r.exit_code == want, "%s: %s, expected exit %d; stdout:\n%s\nstderr:\n%s",
		      x->label, h_status(&x->r), want, x->r.out, x->r.err);
}

/* ---- tests by table -------------------------------------------------- */

/* Every row of every table, once per allocator it runs under: one loop
 * test's _i indexes it.  Filled by the suite's process before check
 * forks a process per test, which inherits it. */
static struct entry {
	const struct h_case *c;
	int alloc;
} *entries;
static size_t nentries;

const char h_its_allocator[] = "the run's allocator";
const char h_file[] = "the row's file";

/* l with every H_FILE word made path (a fresh list, never freed). */
static const char *const *with_file(const char *const *l, const char *path)
{
	if (!l)
		return NULL;
	size_t n = list_len(l);
	const char **out = xcalloc(n + 1, sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i] = l[i] == h_file ? path : l[i];
	return out;
}

/* The row's file: its text written to a fresh path. */
static const char *make_file(const char *text)
{
	const char *path = h_tmppath("file");
	FILE *f = fopen(path, "w");
	ck_assert_msg(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
	return path;
}

static void expect_want(const struct h_res *x, const struct h_json *rec, const struct h_want *w)
{
	if (w->rec)
		rec = h_rec(x, w->rec);
	const char *name = h_str(rec, "name");
	if (w->str) {
		const char *got = h_str(rec, w->key);
		const char *want = w->str == h_its_allocator ? h_allocators[x->alloc].name : w->str;
		ck_assert_msg(got && strcmp(got, want) == 0,
			      "%s: record \"%s\": %s = \"%s\", expected \"%s\"", x->label, name,
			      w->key, got ? got : "(missing)", want);
		return;
	}
	const char *dot = strchr(w->key, '.');
	uint64_t got;
	if (dot) {
		char key[64];
		snprintf(key, sizeof key, "%.*s", (int)(dot - w->key), w->key);
		got = h_count(rec, key, dot + 1);
	} else {
		got = h_u64(rec, w->key);
	}
	ck_assert_msg(got == w->u64, "%s: record \"%s\": %s = %s, expected %s", x->label, name,
		      w->key, h_fmt(got), h_fmt(w->u64));
}

void h_expect_wants(const struct h_res *x, const struct h_json *rec, const struct h_want *want)
{
	for (const struct h_want *w = want; w->key; w++)
		expect_want(x, rec, w);
}

static void expect_text(const struct h_res *x, const char *what, const char *text,
			const char *const *needles, bool present)
{
	for (size_t i = 0; needles && needles[i]; i++)
		ck_assert_msg((strstr(text, needles[i]) != NULL) == present,
			      "%s: %s %s \"%s\":\n%s", x->label, what,
			      present ? "does not contain" : "contains", needles[i], text);
}

START_TEST(h_case_test)
{
	const struct h_case *c = entries[_i].c;
	if (!h_allocator(entries[_i].alloc, NULL))
		return;
	struct h_spec spec = c->run;
	spec.alloc = entries[_i].alloc;
	const char *file = c->file ? make_file(c->file) : NULL;
	if (file) {
		spec.cli = with_file(spec.cli, file);
		spec.args = with_file(spec.args, file);
	}
	if (c->setup && !c->setup(&spec, c))
		return;
	struct h_res x;
	h_exec(&x, &spec);
	x.file = file;
	if (c->teardown)
		c->teardown(&x, c);
	if (c->name) {
		char label[sizeof x.label];
		memcpy(label, x.label, sizeof label);
		size_t n = strlen(c->name);
		if (n + 3 < sizeof x.label)
			snprintf(x.label, sizeof x.label, "%s (%.*s)", c->name,
				 (int)(sizeof x.label - n - 4), label);
	}
	if (c->exit != H_EXIT_ANY)
		h_expect_exit(&x, c->exit);
	if (c->records)
		ck_assert_msg(x.rep.n == (c->records == H_NO_RECORDS ? 0 : (size_t)c->records),
			      "%s: %zu records, expected %d; stderr:\n%s", x.label, x.rep.n,
			      c->records == H_NO_RECORDS ? 0 : c->records, x.r.err);
	ck_assert_msg(!c->stdout_is || strcmp(x.r.out, c->stdout_is) == 0,
		      "%s: stdout \"%s\", expected \"%s\"", x.label, x.r.out, c->stdout_is);
	expect_text(&x, "stdout", x.r.out, c->out, true);
	expect_text(&x, "stderr", x.r.err, c->err, true);
	expect_text(&x, "stderr", x.r.err, c->no_err, false);
	for (size_t i = 0; i < sizeof c->err_lines / sizeof c->err_lines[0] && c->err_lines[i].text; i++) {
		int n = h_count_lines(x.r.err, c->err_lines[i].text);
		ck_assert_msg(n == c->err_lines[i].n, "%s: %d lines of stderr with \"%s\", expected "
			      "%d:\n%s", x.label, n, c->err_lines[i].text, c->err_lines[i].n, x.r.err);
	}
	/* The row's record: asked for by name, or read by its wants. */
	bool own = c->record != NULL;
	for (const struct h_want *w = c->want; w->key; w++)
		own |= !w->rec;
	const struct h_json *rec = own ? h_rec(&x, c->record ? c->record : "process") : NULL;
	h_expect_wants(&x, rec, c->want);
	if (c->check)
		c->check(&x, rec, c);
	h_res_free(&x);
}
END_TEST

bool h_setup_allocator_preloaded(struct h_spec *run, const struct h_case *c)
{
	(void)c;
	const char *so = h_allocators[run->alloc].soname;
	const char **env = xcalloc(2, sizeof *env);
	env[0] = so ? h_env("LD_PRELOAD=%s", h_allocator_so(so)) : NULL;
	run->env = env;
	return true;
}

const char *h_setup_strace(struct h_spec *run, const struct h_case *c, const char *calls)
{
	if (access("/usr/bin/strace", X_OK) != 0 || !h_can_ptrace()) {
		printf("note: /usr/bin/strace missing or ptrace refused; skipping \"%s\"\n", c->name);
		return NULL;
	}
	const char *trace = h_tmppath("trace");
	size_t n = 0;
	while (run->args && run->args[n])
		n++;
	const char **argv = xcalloc(n + 9, sizeof *argv);
	const char *head[] = { "-f", "-qq", "-e", h_env("trace=%s", calls), "-o", trace, "--",
			       strchr(run->prog, '/') ? run->prog : h_prog(run->prog) };
	size_t k = 0;
	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
		argv[k++] = head[i];
	for (size_t i = 0; i < n; i++)
		argv[k++] = run->args[i];
	run->prog = "/usr/bin/strace";
	run->args = argv;
	return trace;
}

void h_exec_bare(struct h_res *b, const struct h_res *x, const struct h_case *c)
{
	struct h_spec bare = { .prog = c->run.prog, .args = c->run.args, .alloc = x->alloc,
			       .no_report = true, .text = "" };
	h_setup_allocator_preloaded(&bare, c);
	h_exec(b, &bare);
	h_expect_exit(b, 0);
}

static const char **bare_environ(int alloc, const char *const *extra)
{
	size_t n = 0, more = 0;
	while (environ[n])
		n++;
	while (extra && extra[more])
		more++;
	const char **env = xcalloc(n + more + 2, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "MEMCHECK_", 9))
			env[k++] = environ[i];
	const char *so = h_allocators[alloc].soname;
	if (so)
		env[k++] = h_env("LD_PRELOAD=%s", h_allocator_so(so));
	for (size_t i = 0; i < more; i++)
		env[k++] = extra[i];
	return env;
}

pid_t h_spawn_traced(const struct h_case *c, int alloc, const char *const *extra)
{
	const char *argv[16] = { h_prog(c->run.prog) };
	for (int i = 0; c->run.args && c->run.args[i] && i < 14; i++)
		argv[i + 1] = c->run.args[i];
	const char **env = bare_environ(alloc, extra);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 1);
		personality(ADDR_NO_RANDOMIZE);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execve(argv[0], (char *const *)argv, (char *const *)env);
		_exit(127);
	}
	free(env);
	return pid;
}

int h_trace(pid_t pid, unsigned flags, int (*cb)(const struct h_trace *t), void *arg)
{
	int st;
	ck_assert(!(flags & H_TRACE_FORKS && flags & H_TRACE_THREADS));
	ck_assert(waitpid(pid, &st, 0) == pid);
	if (!WIFSTOPPED(st))
		return st; /* it never reached its exec */
	long opts = PTRACE_O_EXITKILL | (flags & H_TRACE_CALLS ? PTRACE_O_TRACESYSGOOD : 0) |
		    (flags & H_TRACE_EXITS ? PTRACE_O_TRACEEXIT : 0) |
		    (flags & H_TRACE_FORKS ? PTRACE_O_TRACEFORK : 0) |
		    (flags & H_TRACE_THREADS ? PTRACE_O_TRACECLONE : 0);
	ck_assert(ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)opts) == 0);
	enum __ptrace_request go = flags & H_TRACE_CALLS ? PTRACE_SYSCALL : PTRACE_CONT;
	bool traced = true;
	int sig = 0;
	pid_t w = pid;
	for (;;) {
		if (sig >= 0) /* -1: w ended or let go */
			ptrace(w == pid || flags & H_TRACE_THREADS ? go : PTRACE_CONT, w, NULL,
			       (void *)(long)sig);
		w = waitpid(flags & (H_TRACE_FORKS | H_TRACE_THREADS) && traced ? -1 : pid, &st,
			    __WALL);
		ck_assert(w > 0);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (w == pid)
				return st;
			sig = -1; /* nothing to resume */
			continue;
		}
		sig = WSTOPSIG(st);
		struct h_trace t = { pid, w, H_TRACE_EXIT, arg };
		bool stop = false;
		if (st >> 16 == PTRACE_EVENT_EXIT) {
			stop = flags & H_TRACE_EXITS;
			sig = 0;
		} else if (st >> 16) {
			sig = 0; /* a fork's or a thread's event */
		} else if (sig == (SIGTRAP | 0x80)) {
			/* entry or return: the kernel's word, each task has its own */
			struct __ptrace_syscall_info info;
			ck_assert(ptrace(PTRACE_GET_SYSCALL_INFO, w, (void *)sizeof info, &info) > 0);
			t.stop = info.op == PTRACE_SYSCALL_INFO_EXIT ? H_TRACE_CALL_EXIT
								      : H_TRACE_CALL_ENTRY;
			stop = true;
			sig = 0;
		} else if (sig == SIGTRAP || (sig == SIGSTOP && w != pid)) {
			sig = 0; /* an exec's in place; a forked task's or thread's first stop */
		}
		if (stop && cb(&t) == H_TRACE_DETACH) {
			ptrace(PTRACE_DETACH, w, NULL, NULL);
			traced = traced && w != pid;
			sig = -1;
		}
	}
}

void h_add_cases(TCase *tc, const struct h_case *cases, size_t n)
{
	size_t first = nentries;
	/* H_ROWS=TEXT: only the rows whose name contains it (a few rows of
	 * a long table while working on them) */
	const char *only = getenv("H_ROWS");
	for (size_t i = 0; i < n; i++) {
		if (only && *only && !strstr(cases[i].name, only))
			continue;
		unsigned set = cases[i].allocators ? cases[i].allocators
						   : (1u << H_NALLOCATORS) - 1;
		for (int a = 0; a < H_NALLOCATORS_ALL; a++) {
			if (!(set & 1u << a))
				continue;
			struct entry *e = realloc(entries, (nentries + 1) * sizeof *e);
			if (!e)
				die("out of memory");
			entries = e;
			entries[nentries++] = (struct entry){ &cases[i], a };
		}
	}
	tcase_add_loop_test(tc, h_case_test, (int)first, (int)nentries);
}

int h_count_lines(const char *text, const char *needle)
{
	int count = 0;
	const char *line = text;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *hit = memmem(line, len, needle, strlen(needle));
		if (hit)
			count++;
		line = nl ? nl + 1 : NULL;
	}
	return count;
}

/* A decimal number with optional thousands commas. */
static bool commas_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	bool any = false;
	while ((*s >= '0' && *s <= '9') || (*s == ',' && any && s[1] >= '0' && s[1] <= '9')) {
		if (*s != ',') {
			v = v * 10 + (uint64_t)(*s - '0');
			any = true;
		}
		s++;
	}
	*p = s;
	*out = v;
	return any;
}

bool h_valgrind_heap_usage(const char *text, uint64_t *allocs, uint64_t *frees,
			   uint64_t *bytes)
{
	const char *s = strstr(text, "total heap usage: ");
	if (!s)
		return false;
	s += strlen("total heap usage: ");
	if (!commas_u64(&s, allocs) || strncmp(s, " allocs, ", 9))
		return false;
	s += 9;
	if (!commas_u64(&s, frees) || strncmp(s, " frees, ", 8))
		return false;
	s += 8;
	if (!commas_u64(&s, bytes) || strncmp(s, " bytes allocated", 16))
		return false;
	return true;
}

const char *h_valgrind_path(void)
{
	static const char *const paths[] = { "/usr/bin/valgrind", "/usr/local/bin/valgrind" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

/* "LABEL: 1,234 bytes in 5 blocks" at s. */
static bool bytes_in_blocks(const char *s, const char *label, uint64_t *bytes,
			    uint64_t *blocks)
{
	size_t n = strlen(label);
	if (strncmp(s, label, n))
		return false;
	s += n;
	if (!commas_u64(&s, bytes) || strncmp(s, " bytes in ", 10))
		return false;
	s += 10;
	return commas_u64(&s, blocks);
}

int h_valgrind_leaks(const char *text, struct h_vg_leaks *out, int max)
{
	static const char *const labels[HVG_NKINDS] = {
		"definitely lost: ", "indirectly lost: ", "possibly lost: ",
		"still reachable: ", "suppressed: ",
	};
	int n = 0, open = -1;            /* open: the summary being read */
	unsigned seen = 0;               /* its kinds read so far, one bit each */
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		long pid;
		int off = 0;
		if (sscanf(line, "==%ld== %n", &pid, &off) == 1 && off > 0) {
			const char *s = line + off;
			while (*s == ' ')
				s++;
			if (!strncmp(s, "HEAP SUMMARY:", 13)) {
				if (open >= 0 && seen != (1u << HVG_NKINDS) - 1)
					return -1;
				if (n == max)
					return n;
				open = n++;
				memset(&out[open], 0, sizeof out[open]);
				out[open].pid = (pid_t)pid;
				seen = 0;
			} else if (open >= 0 && out[open].pid == (pid_t)pid) {
				struct h_vg_leaks *v = &out[open];
				if (!strncmp(s, "All heap blocks were freed", 26))
					seen = (1u << HVG_NKINDS) - 1;
				bytes_in_blocks(s, "in use at exit: ", &v->in_use_bytes,
						&v->in_use_blocks);
				for (int k = 0; k < HVG_NKINDS; k++)
					if (bytes_in_blocks(s, labels[k], &v->bytes[k], &v->blocks[k]))
						seen |= 1u << k;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return open >= 0 && seen != (1u << HVG_NKINDS) - 1 ? -1 : n;
}

/* ---- JSON ------------------------------------------------------------ */

struct parser {
	const char *start, *s, *end;
	char *err;
	size_t errlen;
	int depth;
};

static struct h_json *jfail(struct parser *p, const char *what)
{
	if (p->err && !p->err[0])
		snprintf(p->err, p->errlen, "%s at offset %td", what, p->s - p->start);
	return NULL;
}

static void skip_ws(struct parser *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static struct h_json *new_value(enum h_jtype t)
{
	struct h_json *v = xcalloc(1, sizeof *v);
	v->type = t;
	return v;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool parse_hex4(struct parser *p, unsigned *out)
{
	if (p->end - p->s < 4)
		return false;
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p->s[i]);
		if (h < 0)
			return false;
		v = v * 16 + (unsigned)h;
	}
	p->s += 4;
	*out = v;
	return true;
}

static void put_utf8(char *out, size_t *n, unsigned cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xc0 | (cp >> 6));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xe0 | (cp >> 12));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (char)(0xf0 | (cp >> 18));
		out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const char *s, const char *end)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t avail = (size_t)(end - s), len;
	unsigned cp;
	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		len = 2;
		cp = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		len = 3;
		cp = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		len = 4;
		cp = u[0] & 0x07;
	} else {
		return 0;
	}
	if (avail < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A string; p->s is at the opening quote. */
static char *parse_string(struct parser *p)
{
	p->s++;
	/* decoded text is never longer than the source */
	const char *q = p->s;
	while (q < p->end && *q != '"') {
		if (*q == '\\')
			q++;
		q++;
	}
	if (q >= p->end) {
		jfail(p, "unterminated string");
		return NULL;
	}
	char *out = xcalloc(1, (size_t)(q - p->s) + 1);
	size_t n = 0;
	while (*p->s != '"') {
		unsigned char c = (unsigned char)*p->s;
		if (c < 0x20) {
			free(out);
			jfail(p, "control character in string");
			return NULL;
		}
		if (c >= 0x80) {
			/* JSON text is UTF-8: one well-formed sequence */
			size_t len = utf8_len(p->s, p->end);
			if (!len) {
				free(out);
				jfail(p, "invalid UTF-8 in string");
				return NULL;
			}
			memcpy(out + n, p->s, len);
			n += len;
			p->s += len;
			continue;
		}
		if (c != '\\') {
			out[n++] = (char)c;
			p->s++;
			continue;
		}
		p->s++;
		char e = *p->s++;
		unsigned cp;
		switch (e) {
		case '"': out[n++] = '"'; break;
		case '\\': out[n++] = '\\'; break;
		case '/': out[n++] = '/'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u':
			if (!parse_hex4(p, &cp)) {
				free(out);
				jfail(p, "bad \\u escape");
				return NULL;
			}
			if (cp >= 0xd800 && cp < 0xdc00) {
				unsigned lo;
				if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u') {
					free(out);
					jfail(p, "lone surrogate");
					return NULL;
				}
				p->s += 2;
				if (!parse_hex4(p, &lo) || lo < 0xdc00 || lo > 0xdfff) {
					free(out);
					jfail(p, "bad surrogate pair");
					return NULL;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				free(out);
				jfail(p, "lone surrogate");
				return NULL;
			}
			/* \u escapes decode to at most 4 bytes from 6+ */
			put_utf8(out, &n, cp);
			break;
		default:
			free(out);
			jfail(p, "bad escape");
			return NULL;
		}
	}
	p->s++;
	out[n] = 0;
	return out;
}

static struct h_json *parse_number(struct parser *p)
{
	const char *start = p->s;
	const char *s = p->s;
	bool neg = false, integer = true;
	if (s < p->end && *s == '-') {
		neg = true;
		s++;
	}
	if (s >= p->end || *s < '0' || *s > '9')
		return jfail(p, "bad number");
	if (*s == '0') {
		s++;
		if (s < p->end && *s >= '0' && *s <= '9')
			return jfail(p, "leading zero in number");
	} else {
		while (s < p->end && *s >= '0' && *s <= '9')
			s++;
	}
	if (s < p->end && *s == '.') {
		integer = false;
		s++;
		if (s >= p->end || *s < '0' || *s > '9')
			return jfail(p, "bad fraction");
		while (s < p->end && *s >= '0' && *s <= '9')
			s++;
	}
	if (s < p->end && (*s == 'e' || *s == 'E')) {
		integer = false;
		s++;
		if (s < p->end && (*s == '+' || *s == '-'))
			s++;
		if (s >= p->end || *s < '0' || *s > '9')
			return jfail(p, "bad exponent");
		while (s < p->end && *s >= '0' && *s <= '9')
			s++;
	}
	char buf[64];
	size_t len = (size_t)(s - start);
	if (len >= sizeof buf)
		return jfail(p, "number too long");
	memcpy(buf, start, len);
	buf[len] = 0;
	struct h_json *v = new_value(HJ_NUM);
	v->num = strtod(buf, NULL);
	if (integer && !neg) {
		errno = 0;
		unsigned long long u = strtoull(buf, NULL, 10);
		if (errno == 0) {
			v->is_u64 = true;
			v->u64 = u;
		}
	}
	p->s = s;
	return v;
}

static struct h_json *parse_value(struct parser *p);

static bool push(struct h_json *c, struct h_json *item, char *key)
{
	struct h_json **items = realloc(c->items, (c->n + 1) * sizeof *items);
	if (!items)
		die("out of memory");
	c->items = items;
	if (c->type == HJ_OBJ) {
		char **keys = realloc(c->keys, (c->n + 1) * sizeof *keys);
		if (!keys)
			die("out of memory");
		c->keys = keys;
		c->keys[c->n] = key;
	}
	c->items[c->n++] = item;
	return true;
}

static struct h_json *parse_container(struct parser *p, bool obj)
{
	struct h_json *c = new_value(obj ? HJ_OBJ : HJ_ARR);
	char close = obj ? '}' : ']';
	p->s++;
	skip_ws(p);
	if (p->s < p->end && *p->s == close) {
		p->s++;
		return c;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(p);
		if (obj) {
			if (p->s >= p->end || *p->s != '"') {
				h_json_free(c);
				return jfail(p, "expected a key");
			}
			key = parse_string(p);
			if (!key) {
				h_json_free(c);
				return NULL;
			}
			for (size_t i = 0; i < c->n; i++) {
				if (strcmp(c->keys[i], key) == 0) {
					free(key);
					h_json_free(c);
					return jfail(p, "duplicate key");
				}
			}
			skip_ws(p);
			if (p->s >= p->end || *p->s != ':') {
				free(key);
				h_json_free(c);
				return jfail(p, "expected ':'");
			}
			p->s++;
		}
		struct h_json *item = parse_value(p);
		if (!item) {
			free(key);
			h_json_free(c);
			return NULL;
		}
		push(c, item, key);
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->end && *p->s == close) {
			p->s++;
			return c;
		}
		h_json_free(c);
		return jfail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static bool literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0)
		return false;
	p->s += n;
	return true;
}

static struct h_json *parse_value(struct parser *p)
{
	skip_ws(p);
	if (p->s >= p->end)
		return jfail(p, "unexpected end");
	if (++p->depth > 64)
		return jfail(p, "nested too deep");
	struct h_json *v = NULL;
	char c = *p->s;
	if (c == '{' || c == '[') {
		v = parse_container(p, c == '{');
	} else if (c == '"') {
		char *s = parse_string(p);
		if (s) {
			v = new_value(HJ_STR);
			v->str = s;
		}
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		v = parse_number(p);
	} else if (literal(p, "null")) {
		v = new_value(HJ_NULL);
	} else if (literal(p, "true")) {
		v = new_value(HJ_BOOL);
		v->b = true;
	} else if (literal(p, "false")) {
		v = new_value(HJ_BOOL);
	} else {
		jfail(p, "unexpected character");
	}
	p->depth--;
	return v;
}

struct h_json *h_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct parser p = { text, text, text + len, err, errlen, 0 };
	if (err && errlen)
		err[0] = 0;
	struct h_json *v = parse_value(&p);
	if (!v) {
		if (err && errlen && !err[0])
			snprintf(err, errlen, "bad JSON");
		return NULL;
	}
	skip_ws(&p);
	if (p.s != p.end) {
		h_json_free(v);
		if (err && errlen)
			snprintf(err, errlen, "trailing garbage at offset %td", p.s - text);
		return NULL;
	}
	return v;
}

void h_json_free(struct h_json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		h_json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

const struct h_json *h_json_get(const struct h_json *obj, const char *key)
{
	if (!obj || obj->type != HJ_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return obj->items[i];
	return NULL;
}

const struct h_json *h_json_at(const struct h_json *arr, size_t i)
{
	if (!arr || arr->type != HJ_ARR || i >= arr->n)
		return NULL;
	return arr->items[i];
}

int h_report_load(const char *path, struct h_report *rep)
{
	memset(rep, 0, sizeof *rep);
	size_t len;
	char *text = h_read_file(path, &len);
	if (!text)
		return 0;
	if (len && text[len - 1] != '\n') {
		snprintf(rep->error, sizeof rep->error, "%s: last line has no newline", path);
		free(text);
		return -1;
	}
	if (strlen(text) != len) {
		snprintf(rep->error, sizeof rep->error, "%s: NUL byte in report", path);
		free(text);
		return -1;
	}
	int rc = 0;
	size_t lineno = 0;
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');
		lineno++;
		char err[160];
		struct h_json *v = h_json_parse(line, (size_t)(nl - line), err, sizeof err);
		if (!v || v->type != HJ_OBJ) {
			snprintf(rep->error, sizeof rep->error, "%s:%zu: %s", path, lineno,
				 v ? "not a JSON object" : err);
			h_json_free(v);
			rc = -1;
			break;
		}
		struct h_json **rec = realloc(rep->rec, (rep->n + 1) * sizeof *rec);
		if (!rec)
			die("out of memory");
		rep->rec = rec;
		rep->rec[rep->n++] = v;
		line = nl + 1;
	}
	free(text);
	if (rc)
		h_report_free(rep);
	return rc;
}

void h_report_free(struct h_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		h_json_free(rep->rec[i]);
	free(rep->rec);
	rep->rec = NULL;
	rep->n = 0;
}

const struct h_json *h_record(const struct h_report *rep, const char *name, pid_t pid)
{
	for (size_t i = 0; i < rep->n; i++) {
		const char *n = h_str(rep->rec[i], "name");
		if (n && strcmp(n, name) == 0 && (pid <= 0 || (pid_t)h_u64(rep->rec[i], "pid") == pid))
			return rep->rec[i];
	}
	return NULL;
}

size_t h_record_count(const struct h_report *rep, const char *name)
{
	size_t c = 0;
	for (size_t i = 0; i < rep->n; i++) {
		const char *n = h_str(rep->rec[i], "name");
		if (n && strcmp(n, name) == 0)
			c++;
	}
	return c;
}

static uint64_t as_u64(const struct h_json *v)
{
	if (!v)
		return H_MISSING;
	if (v->type == HJ_NULL)
		return H_NULL;
	if (v->type != HJ_NUM || !v->is_u64)
		return H_MISSING;
	return v->u64;
}

uint64_t h_u64(const struct h_json *rec, const char *key)
{
	return as_u64(h_json_get(rec, key));
}

uint64_t h_count(const struct h_json *rec, const char *key, const char *sub)
{
	return as_u64(h_json_get(h_json_get(rec, key), sub));
}

const char *h_str(const struct h_json *rec, const char *key)
{
	const struct h_json *v = h_json_get(rec, key);
	return v && v->type == HJ_STR ? v->str : NULL;
}

size_t h_nviolations(const struct h_json *rec)
{
	const struct h_json *v = h_json_get(rec, "violations");
	return v && v->type == HJ_ARR ? v->n : 0;
}

bool h_violation_has(const struct h_json *rec, const char *needle)
{
	const struct h_json *v = h_json_get(rec, "violations");
	for (size_t i = 0; v && i < v->n; i++) {
		const struct h_json *s = h_json_at(v, i);
		if (s && s->type == HJ_STR && strstr(s->str, needle))
			return true;
	}
	return false;
}

size_t h_nleaks(const struct h_json *rec)
{
	const struct h_json *v = h_json_get(rec, "leaks");
	return v && v->type == HJ_ARR ? v->n : 0;
}

uint64_t h_leak_u64(const struct h_json *rec, size_t i, const char *key)
{
	return as_u64(h_json_get(h_json_at(h_json_get(rec, "leaks"), i), key));
}

static const struct h_json *stack_of(const struct h_json *rec, size_t leak)
{
	const struct h_json *s = h_json_get(h_json_at(h_json_get(rec, "leaks"), leak), "stack");
	return s && s->type == HJ_ARR ? s : NULL;
}

size_t h_leak_depth(const struct h_json *rec, size_t i)
{
	const struct h_json *s = stack_of(rec, i);
	return s ? s->n : 0;
}

const char *h_frame_str(const struct h_json *rec, size_t leak, size_t frame, const char *key)
{
	return h_str(h_json_at(stack_of(rec, leak), frame), key);
}

long h_frame_line(const struct h_json *rec, size_t leak, size_t frame)
{
	uint64_t v = as_u64(h_json_get(h_json_at(stack_of(rec, leak), frame), "line"));
	return v >= H_MISSING ? -1 : (long)v;
}

bool h_leaks_mention(const struct h_json *rec, const char *fn)
{
	for (size_t i = 0; i < h_nleaks(rec); i++)
		for (size_t j = 0; j < h_leak_depth(rec, i); j++) {
			const char *f = h_frame_str(rec, i, j, "function");
			if (f && strcmp(f, fn) == 0)
				return true;
		}
	return false;
}

const char *h_fmt(uint64_t v)
{
	static char bufs[8][32];
	static unsigned next;
	char *b = bufs[next++ % 8];
	if (v == H_NULL)
		return "null";
	if (v == H_MISSING)
		return "missing";
	snprintf(b, 32, "%llu", (unsigned long long)v);
	return b;
}

const char *h_env(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

/* ---- suite ----------------------------------------------------------- */

void h_suite_begin(void)
{
	make_tmpdir(); /* here, so that this process removes it */
	/* Every run with transparent huge pages off (inherited across fork
	 * and exec), as test_ownmem's always were: where they are "always"
	 * (Debian's kernels' default; "madvise" on the project's machines,
	 * where no allocator asks for them), a mapping's resident size
	 * depends on where ASLR and memcheck's own mappings put it against
	 * 2 MiB boundaries, and khugepaged collapses pages when it gets to
	 * them: bare runs of one program differed by a huge page or two
	 * (tcmalloc's heap: 27.3 to 30.4 MiB), more than test_fidelity's
	 * 1.5 MiB or test_rss_self's 160 KiB tolerance.  memcheck's own
	 * mappings never take them (ownmap.c); unit_util checks that. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}
