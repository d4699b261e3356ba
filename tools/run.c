/*
 * run.c - `memcheck run`: the command under each allocator in turn, the
 * baseline first, with libmemcheck preloaded in front of the allocator;
 * then the table, the optional report and JUnit files, and one exit
 * status for all of it.
 *
 * Exit status, first match wins:
 *   3  a run was killed by a signal (a crash beats every other verdict);
 *  99  a run exited 99, a test driver's hard error: passed on;
 *  77  a run exited 77, a test that skipped itself: passed on;
 *   3  a run exited non-zero with no failing region in that run (the
 *      command failed on its own: its tests, not memcheck's gates);
 *   2  an allocator that does not serve malloc (every record of its first
 *      run says glibc did: a file that is not a shared object, or one that
 *      exports no malloc), a command that cannot be started, a report the
 *      runs wrote that could not be read, or --report/--junit that could
 *      not be written;
 *   1  a region failed: its record says fail (leak, heap error, or a
 *      budget as the library judged it), or the CLI's own budget check
 *      fails it;
 *   0  otherwise.
 * A run that exits non-zero while one of its regions fails is taken to
 * fail because of memcheck (a check suite whose test failed on
 * memcheck_end): that is 1, not 3, and the other allocators still run.
 * Without --keep-going, the first run that crashes or fails on its own
 * stops the rest, and so does one that skips or errs (77, 99).
 *
 * --quiet is the mode for a test driver's wrapper (meson's exe_wrapper,
 * automake's LOG_COMPILER): glibc alone, nothing said unless a region
 * fails, the library's text only for failing regions, and the exit
 * status the command's own (a signal raised again), or 99 when it exited
 * 0 while a region failed (its processes' MEMCHECK_EXITCODE, 99 unless
 * the environment sets it: QUIET_EXITCODE), 2 when a report could not
 * be read.
 *
 * A region record written at the exit of a process that exited non-zero
 * on its own (its "exit_status") fails nothing here (records.c's
 * rec_own_end, lib/exitstatus.c's rule): the process's status told
 * whatever ran it, which may expect that failure.  Said, not counted.
 */
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef MC_ALLOCATOR_DIR
#define MC_ALLOCATOR_DIR "/usr/lib/x86_64-linux-gnu"
#endif

/* --quiet's status for a failing region, and its processes'
 * MEMCHECK_EXITCODE unless the environment sets one: 99, the hard error
 * of meson's and automake's test harnesses, which they count as failed
 * whatever the test expects (should_fail, XFAIL_TESTS), where 23 or 1
 * made a leaking test that exits 0, expected to fail, an expected
 * failure that passed (CTest's WILL_FAIL takes any non-zero status as
 * the failure it expects: ctest -T memcheck's defects fail the run
 * there).  Any driver counts it a failure otherwise. */
#define QUIET_EXITCODE 99
#define QUIET_EXITCODE_STR "99"

#if defined(__x86_64__)
#define OWN_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OWN_MACHINE EM_AARCH64
#endif

/* Whether the ET_DYN object open on fd is a position-independent
 * executable (DF_1_PIE in its DT_FLAGS_1): the dynamic loader refuses
 * to preload one ("cannot dynamically load position-independent
 * executable": ignored), as /bin/true (harden45 left it: the run went
 * on under the C library's malloc, named /bin/true).  Not PT_INTERP:
 * libc.so.6 has one and preloads. */
static bool pie_executable(int fd, const Elf64_Ehdr *h)
{
	Elf64_Phdr ph;
	for (unsigned i = 0; i < h->e_phnum && i < 4096; i++) {
		if (h->e_phentsize < sizeof ph ||
		    pread(fd, &ph, sizeof ph, (off_t)(h->e_phoff + (uint64_t)i * h->e_phentsize)) !=
		    (ssize_t)sizeof ph)
			return false;
		if (ph.p_type != PT_DYNAMIC)
			continue;
		Elf64_Dyn d;
		for (uint64_t at = 0; at + sizeof d <= ph.p_filesz && at < (1u << 20); at += sizeof d) {
			if (pread(fd, &d, sizeof d, (off_t)(ph.p_offset + at)) != (ssize_t)sizeof d ||
			    d.d_tag == DT_NULL)
				return false;
			if (d.d_tag == DT_FLAGS_1)
				return (d.d_un.d_val & DF_1_PIE) != 0;
		}
		return false;
	}
	return false;
}

/* Why the file at path cannot be an allocator's shared object (not an
 * ELF file of type ET_DYN for this machine, or an executable: the
 * dynamic loader ignores it in LD_PRELOAD, and the run is then the C
 * library's under the file's name), or NULL. */
static const char *not_shared_object(const char *path)
{
	Elf64_Ehdr h;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL; /* said by access(2) below */
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, &h, sizeof h) : -1;
	const char *why = NULL;
	if (n < 0)
		why = "not a regular file";
	else if (n < (ssize_t)EI_NIDENT || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
		why = "not an ELF file";
	else if (n < (ssize_t)sizeof h || h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_type != ET_DYN)
		why = "not a 64-bit ELF shared object";
#ifdef OWN_MACHINE
	else if (h.e_machine != OWN_MACHINE)
		why = "a shared object for another machine (its e_machine)";
#endif
	else if (pie_executable(fd, &h))
		why = "a position-independent executable (DF_1_PIE), which the dynamic loader "
		      "does not preload";
	close(fd);
	return why;
}

/* Fill in g for an allocator named on the command line: its object, or
 * why it is skipped.  False for a name memcheck does not know. */
static bool resolve_allocator(struct group *g, const char *name)
{
	const char *dir = getenv("MEMCHECK_ALLOCATOR_DIR");
	if (!dir || !*dir)
		dir = MC_ALLOCATOR_DIR;
	g->label = xstrdup(name);
	if (strchr(name, '/') || strstr(name, ".so")) {
		char *path = strchr(name, '/') ? absolute(name) : xasprintf("%s/%s", dir, name);
		const char *why = unpreloadable(path);
		if (access(path, R_OK) != 0)
			g->skipped = xasprintf("%s: %s", path, strerror(errno));
		else if (why)
			g->skipped = xasprintf("%s: cannot be preloaded: %s", path, why);
		g->object = path;
		g->bad = g->skipped ? NULL : not_shared_object(path);
		return true;
	}
	const struct allocator_info *a = allocator_named(name);
	if (!a)
		return false;
	if (!a->soname)
		return true;
	g->object = xasprintf("%s/%s", dir, a->soname);
	if (access(g->object, R_OK) != 0)
		g->skipped = xasprintf("%s is not installed (%s: %s; Debian package %s)",
				       name, g->object, strerror(errno), a->package);
	return true;
}

/* ---- signals while the command runs ---------------------------------- */

static volatile sig_atomic_t got_signal;
static volatile pid_t child;

/* INT, TERM or HUP: passed on to the command (a terminal's ^C reaches
 * it anyway; a kill aimed at memcheck alone would not); once it has
 * ended, memcheck cleans up and dies of the same signal. */
static void on_signal(int sig)
{
	got_signal = sig;
	if (child > 0)
		kill(child, sig);
}

/* ---- the command ------------------------------------------------------ */

struct run_opts {
	const char *allocators, *baseline, *budget, *baseline_file, *report, *junit;
	int repeat;              /* 0: auto (AUTO_RUNS when timed) */
	bool keep_going;
	const char *supp[64];    /* --suppressions, as given */
	int nsupp;
	const char *gen;         /* --gen-suppressions */
	bool valgrind, allocators_given;  /* --valgrind; -a was given */
	bool quiet;                       /* --quiet: a test driver's wrapper */
	char **vg_opts;                   /* --valgrind-option, in order */
	size_t nvg_opts;
	const char *html;                 /* --html */
	const char *timeline;             /* --timeline's N, or NULL */
};

static void rm_tmpdir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char *p = xasprintf("%s/%s", dir, e->d_name);
			/* a report's REPORT.rank directory of counts (lib/gate.c) */
			if (unlink(p) != 0 && errno == EISDIR)
				rm_tmpdir(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* The text of the suppression file at path into *text, refused as the
 * library refuses it (lib/suppress.c's mc_supp_load_io: not a regular
 * file, larger than 16 MiB), said in err. */
static bool read_supp_text(const char *path, struct mc_buf *text, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool ok = false;
	if (!S_ISREG(st.st_mode))
		snprintf(err, errlen, "%s: not a regular file", path);
	else if (st.st_size > 16 << 20)
		snprintf(err, errlen, "%s: larger than 16 MiB: not a suppression file?", path);
	else
		ok = true;
	char buf[8192];
	ssize_t n;
	while (ok && ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			mc_buf_put(text, buf, (size_t)n);
	if (ok && n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ok = false;
	}
	close(fd);
	return ok;
}

/* Each --suppressions file read once and parsed as the library will, so
 * that a bad one is said once, here, as "file:line: message" (exit 2),
 * not by every process the command starts; its text kept for the copy
 * the processes read (write_supp_copies).  Returns their absolute paths,
 * colon-separated (MEMCHECK_SUPPRESSIONS_NAMES: the names the records
 * and messages give them); NULL when one is bad (said). */
static char *check_suppressions(const char *const *files, int n, struct mc_buf *texts)
{
	char *env = NULL;
	for (int i = 0; i < n; i++) {
		char *abs = absolute(files[i]);
		char err[1024] = "";
		struct mc_supps *s = mc_supp_new();
		bool ok = s != NULL;
		if (ok && !read_supp_text(abs, &texts[i], err, sizeof err))
			ok = false;
		else if (ok)
			ok = mc_supp_parse(s, texts[i].s ? texts[i].s : "", texts[i].len, abs, err,
					   sizeof err);
		mc_supp_free(s);
		if (ok && err[0])
			say("%s", err); /* a note: the file is read as valgrind reads it */
		if (!ok) {
			say_path_error(s ? err : "out of memory", abs, files[i]);
		} else if (strchr(abs, ':')) {
			say("--suppressions %s: a path with ':' cannot be passed on in "
			    "MEMCHECK_SUPPRESSIONS", files[i]);
			ok = false;
		}
		if (!ok) {
			free(abs);
			free(env);
			return NULL;
		}
		join_colon(&env, abs);
		free(abs);
	}
	return env;
}

/* The processes' MEMCHECK_SUPPRESSIONS: a copy of each file's text checked
 * above in the run's directory, which a file changed or removed while
 * they run would not be (harden47's guard row: such a run was never
 * clean); MEMCHECK_SUPPRESSIONS_NAMES keeps the user's names in their
 * records and messages.  NULL when one cannot be written (said). */
static char *write_supp_copies(struct mc_buf *texts, const char *const *files, int n,
			       const char *dir)
{
	char *env = NULL;
	for (int i = 0; i < n; i++) {
		char file[32];
		snprintf(file, sizeof file, "suppressions-%d.supp", i + 1);
		char *copy = write_copy(texts[i].s ? texts[i].s : "", texts[i].len, dir, file,
					"--suppressions", files[i]);
		if (!copy) {
			free(env);
			return NULL;
		}
		join_colon(&env, copy);
		free(copy);
	}
	return env;
}

static const struct option run_options[] = {
	{ "allocators", required_argument, NULL, 'a' },
	{ "baseline", required_argument, NULL, 'b' },
	{ "budget", required_argument, NULL, 'B' },
	{ "baseline-file", required_argument, NULL, 'F' },
	{ "report", required_argument, NULL, 'r' },
	{ "junit", required_argument, NULL, 'j' },
	{ "repeat", required_argument, NULL, 'n' },
	{ "keep-going", no_argument, NULL, 'k' },
	{ "suppressions", required_argument, NULL, 'S' },
	{ "gen-suppressions", required_argument, NULL, 'G' },
	{ "valgrind", no_argument, NULL, 'V' },
	{ "valgrind-option", required_argument, NULL, 'O' },
	{ "html", required_argument, NULL, 'H' },
	{ "timeline", optional_argument, NULL, 'T' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "alloc-fn", required_argument, NULL, 'A' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* An output file's name (--report, --junit, --html, --gen-suppressions)
 * as valgrind's --log-file takes one: %p is this run's pid, %q{VAR} the
 * variable's value, %% a '%'.  A test driver that runs its tests in
 * parallel, each under its own `memcheck run`, gets a file per test with
 * %p, where one name for all kept the last test's records only.  NULL
 * (said, bad usage) for any other '%' and an unset VAR, as valgrind. */
static char *out_name(const char *opt, const char *v)
{
	struct { char *s; size_t n, cap; } o = { NULL, 0, 0 };
	for (const char *p = v; *p;) {
		char pid[24];
		const char *add = p, *next = p + 1;
		size_t len = 1;
		if (*p == '%') {
			const char *close = p[1] == 'q' && p[2] == '{' ? strchr(p + 3, '}') : NULL;
			if (p[1] == '%') {
				next = p + 2;
			} else if (p[1] == 'p') {
				snprintf(pid, sizeof pid, "%ld", (long)getpid());
				add = pid;
				len = strlen(pid);
				next = p + 2;
			} else if (close) {
				char *name = xasprintf("%.*s", (int)(close - p - 3), p + 3);
				add = getenv(name);
				if (!add) {
					bad_usage("run", "--%s %s: the environment variable '%s' of "
						  "%%q{%s} is not set", opt, v, name, name);
					free(name);
					free(o.s);
					return NULL;
				}
				len = strlen(add);
				free(name);
				next = close + 1;
			} else {
				free(o.s);
				bad_usage("run", "--%s %s: '%%%.1s' at character %zu: expected %%p (this "
					  "run's pid), %%q{VARIABLE} or %%%%", opt, v, p + 1,
					  (size_t)(p - v) + 1);
				return NULL;
			}
		}
		if (o.n + len + 1 > o.cap)
			o.s = xrealloc(o.s, o.cap = 2 * (o.n + len + 1));
		memcpy(o.s + o.n, add, len);
		o.s[o.n += len] = 0;
		p = next;
	}
	return o.s ? o.s : xstrdup(v);
}

/* out_name's copies, the options' own */
static void free_out_names(struct run_opts *o)
{
	free((char *)o->report);
	free((char *)o->junit);
	free((char *)o->gen);
	free((char *)o->html);
}

/* An output file option: its name expanded, an earlier copy freed. */
static int set_out(const char **field, const char *opt, const char *arg)
{
	free((char *)*field);
	*field = out_name(opt, arg);
	return *field ? 0 : EXIT_USAGE;
}

static int run_option(void *opts, int c, char *arg)
{
	struct run_opts *o = opts;
	char *end;
	long n;
	switch (c) {
	case 'a': o->allocators = arg; o->allocators_given = true; break;
	case 'V': o->valgrind = true; break;
	case 'O':
		o->vg_opts = xrealloc(o->vg_opts, (o->nvg_opts + 1) * sizeof *o->vg_opts);
		o->vg_opts[o->nvg_opts++] = arg;
		break;
	case 'b': o->baseline = arg; break;
	case 'B': o->budget = arg; break;
	case 'F': o->baseline_file = arg; break;
	case 'r': return set_out(&o->report, "report", arg);
	case 'j': return set_out(&o->junit, "junit", arg);
	case 'k': o->keep_going = true; break;
	case 'q': o->quiet = true; break;
	case 'S':
		if (o->nsupp == (int)MC_ARRAY_SIZE(o->supp))
			return bad_usage("run", "more than %d --suppressions files",
					 (int)MC_ARRAY_SIZE(o->supp));
		o->supp[o->nsupp++] = arg;
		break;
	case 'G': return set_out(&o->gen, "gen-suppressions", arg);
	case 'H': return set_out(&o->html, "html", arg);
	case 'A': add_alloc_fn(arg); break;
	case 'T':
		errno = 0;
		n = arg ? strtol(arg, &end, 10) : 512;
		if (arg && (errno || end == arg || *end || n < 1 || n > 100000))
			return bad_usage("run", "--timeline=%s: expected a number of samples "
					 "from 1 to 100000", arg);
		o->timeline = arg ? arg : "512";
		break;
	case 'n':
		if (strcmp(arg, "auto") == 0) {
			o->repeat = 0;
			break;
		}
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || end == arg || *end || n < 1 || n > 1000 ||
		    isspace((unsigned char)*arg))
			return bad_usage("run", "--repeat %s: expected a number of runs "
					 "from 1 to 1000, or auto", arg);
		o->repeat = (int)n;
		break;
	}
	return 0;
}

/* Add a group for allocator name unless one has that label. */
static int add_allocator(struct group **groups, size_t *ng, const char *name, bool baseline)
{
	for (size_t i = 0; i < *ng; i++)
		if (!(*groups)[i].stored && strcmp((*groups)[i].label, name) == 0)
			return 0;
	*groups = xrealloc(*groups, (*ng + 1) * sizeof **groups);
	struct group *g = &(*groups)[(*ng)++];
	memset(g, 0, sizeof *g);
	g->baseline = baseline;
	if (!resolve_allocator(g, name)) {
		char names[128];
		allocator_names(names, sizeof names, ", ", 0);
		return bad_usage("run", "unknown allocator '%s': expected one of %s, or the "
				 "path of a shared object", name, names);
	}
	if (g->bad)
		return bad_usage("run", "allocator %s: %s: expected the path of an allocator's "
				 "shared object (.so)", g->object, g->bad);
	return 0;
}

/* Did the object of group g serve malloc in this run?  memcheck names
 * the allocator from the object that does (allocator.c): records that
 * all say glibc mean the object did not (ld.so ignored it, or it
 * exports no malloc), and a column of glibc's figures under its name
 * would be a lie.  Unknown without records; not asked under valgrind,
 * whose own malloc serves the blocks. */
static bool serves_malloc(const struct group *g, const struct recs *rs)
{
	if (!g->object || !rs->n)
		return true;
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].m.allocator, "glibc") != 0)
			return true;
	return false;
}

/* A line per group under the table: how its runs went. */
static void print_runs(FILE *f, const struct group *groups, size_t ng)
{
	fprintf(f, "\nruns:\n");
	for (size_t i = 0; i < ng; i++) {
		const struct group *g = &groups[i];
		if (g->stored)
			continue;
		if (g->skipped) {
			fprintf(f, "  %-14s %s%s\n", g->label,
				strncmp(g->skipped, "not run", 7) ? "skipped: " : "", g->skipped);
			continue;
		}
		int done = 0;
		double walls[1000];
		for (int r = 0; r < g->nreps; r++)
			if (g->runs[r].done)
				walls[done++] = g->runs[r].end.wall;
		if (!done) {
			fprintf(f, "  %-14s not run (stopped after a failure; --keep-going runs it)\n",
				g->label);
			continue;
		}
		/* median wall time: insertion sort, at most 1000 */
		for (int a = 1; a < done; a++)
			for (int b = a; b > 0 && walls[b - 1] > walls[b]; b--) {
				double t = walls[b];
				walls[b] = walls[b - 1];
				walls[b - 1] = t;
			}
		double wall = done % 2 ? walls[done / 2] : (walls[done / 2 - 1] + walls[done / 2]) / 2;
		fprintf(f, "  %-14s %d run%s, wall %.3f s%s", g->label, done, done > 1 ? "s" : "",
			wall, done > 1 ? " (median)" : "");
		bool all_ok = true;
		for (int r = 0; r < g->nreps; r++) {
			const struct runinfo *ri = &g->runs[r];
			if (!ri->done || (!ri->end.sig && !ri->end.exit_code))
				continue;
			char d[96];
			describe_end(&ri->end, d, sizeof d);
			if (g->nreps > 1)
				fprintf(f, "%s run %d: %s", all_ok ? ";" : ",", r + 1, d);
			else
				fprintf(f, "; %s", d);
			if (ri->explained)
				fprintf(f, " (a region failed)");
			all_ok = false;
		}
		fprintf(f, "%s\n", all_ok ? "; exit status 0" : "");
		if (g->timed_ms)
			fprintf(f, "  %-14s (it gives memory back on a timer, after up to %llu ms: "
				"run %d times)\n", "", (unsigned long long)g->timed_ms, g->nreps);
		if (done > 1)
			print_spread(f, g);
	}
}

/* Die of sig, as the command did, without a core of memcheck's: called
 * last, once the reports' directory is gone. */
static void raise_again(int sig)
{
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The status --quiet gives a failing region, as its processes exit with
 * one (MEMCHECK_EXITCODE, which --quiet sets to QUIET_EXITCODE unless
 * the environment sets it): that one where it is 1-255, else 1. */
static int quiet_fail_status(void)
{
	const char *e = getenv("MEMCHECK_EXITCODE");
	if (!e)
		return QUIET_EXITCODE;
	char *end;
	long v = *e ? strtol(e, &end, 10) : 0;
	return *e && !*end && v >= 1 && v <= 255 ? (int)v : EXIT_GATE;
}

/* --quiet's exit status: the command's own (128 + its signal, which
 * cmd_run raises again at the end), else 2 for a report that could not be
 * read, quiet_fail_status for a failing region, 0.  A status the command
 * chose non-zero stays its own, whatever failed in other processes: it
 * may be their failure (a Criterion runner's 1 for its workers' failed
 * glue), and a driver counts it a failure unless the test expects one.
 * Said only when not 0. */
static int quiet_status(int own, int sig, size_t failed, size_t total, bool bad)
{
	if (sig)
		return 128 + sig;
	if (own)
		return own;
	if (bad) {
		say("exit 2: a report could not be read or written");
		return EXIT_USAGE;
	}
	if (failed) {
		int s = quiet_fail_status();
		say("exit %d: %zu of %zu region record%s failed (leak, heap error or budget)", s,
		    failed, total, total == 1 ? "" : "s");
		return s;
	}
	return EXIT_PASS;
}

/* --quiet: each failing record in one line, for the test's log.  The
 * library wrote its text to the failing process's own standard error,
 * which the test may have sent elsewhere: a GoogleTest death test's
 * child started again ("threadsafe" style) writes into a pipe its
 * parent reads and drops, and its parent then fails naming the child
 * alone. */
static void say_failed_records(const struct group *groups, size_t ng)
{
	for (size_t gi = 0; gi < ng; gi++) {
		const struct group *g = &groups[gi];
		for (int rep = 0; rep < g->nreps && !g->stored; rep++)
			for (size_t k = 0; k < g->reps[rep].n; k++) {
				const struct rec *x = &g->reps[rep].v[k];
				/* a process that exited non-zero on its own: its
				 * own text said its failure, its status told its
				 * caller (rec_own_end) */
				if (!x->fail || x->own_end)
					continue;
				const char *why = x->m.r.violations[0] ? x->m.r.violations : x->cli;
				say("%s[%d], region \"%s\": %s%s%s%s%s", base_name(x->m.program),
				    x->m.pid, x->m.r.name, why[0] ? why : "verdict fail",
				    x->m.r.violations[0] && x->cli[0] ? "; " : "",
				    x->m.r.violations[0] ? x->cli : "",
				    x->leak && x->leak->site[0] ? " at " : "",
				    x->leak ? short_path(x->leak->site) : "");
			}
	}
}

/* Runs of an allocator that gives memory back on a timer, without -n:
 * the median of three is one run's figure in the middle. */
#define AUTO_RUNS 3

/* Whether a run's records say its allocator gives memory back on a
 * timer (timed_purge_ms > 0); the longest delay in *ms. */
static bool timed_ms(const struct recs *rs, uint64_t *ms)
{
	*ms = 0;
	for (size_t i = 0; i < rs->n; i++) {
		uint64_t t = rs->v[i].m.timed_purge_ms;
		if (t != MEMCHECK_UNKNOWN && t > *ms)
			*ms = t;
	}
	return *ms > 0;
}

int cmd_run(int argc, char **argv)
{
	char defaults[128];
	allocator_names(defaults, sizeof defaults, ",", MC_ALLOC_DEFAULT);
	struct run_opts o = { .allocators = defaults, .repeat = 0 /* auto */ };
	int rc = parse_options("run", argc, argv, "+:a:b:kn:qh", run_options, run_option, &o,
			       "no command to run");
	if (rc) {
		free_out_names(&o);
		return rc < 0 ? EXIT_PASS : rc;
	}
	char **cmd = argv + optind;
	const char *bname;
	struct group *groups = NULL;
	size_t ng = 0;
	struct mc_budget *budget = NULL;
	char *budget_abs = NULL, *lib = NULL, *tmp = NULL, *baseline_copy = NULL;
	char *budget_copy = NULL; /* the processes' MEMCHECK_BUDGET */
	struct mc_buf budget_stream = { 0 }; /* a --budget FIFO's text */
	char *supp_env = NULL, *supp_names = NULL, *gen_abs = NULL;
	struct mc_buf *supp_texts = NULL;  /* each --suppressions file's text */
	int status = EXIT_USAGE;
	int reraise = 0; /* a signal to die of, once the directory is gone */

	char *valgrind = NULL;
	if (o.nvg_opts && !o.valgrind) {
		status = bad_usage("run", "--valgrind-option needs --valgrind");
		goto out;
	}
	if (o.valgrind) {
		if (!(valgrind = vg_find())) {
			say("--valgrind: valgrind is not installed (no valgrind in PATH; "
			    "Debian package valgrind)");
			goto out;
		}
		/* Under valgrind the allocator's code does not serve the
		 * program's blocks: one run classifies the leaks, and no
		 * allocator's timer shapes what is measured. */
		if (!o.allocators_given)
			o.allocators = "glibc";
		if (!o.repeat)
			o.repeat = 1;
	}
	if (o.quiet && !o.allocators_given)
		o.allocators = "glibc";
	if ((o.report && !writable_later("run", "report", o.report)) ||
	    (o.junit && !writable_later("run", "junit", o.junit)) ||
	    (o.html && !writable_later("run", "html", o.html)))
		goto out;
	if (o.budget && !(budget = load_budget(o.budget, &budget_abs, &budget_stream)))
		goto out;
	if (pick_baseline("run", o.baseline, budget, &bname))
		goto out;
	/* A test driver's wrapper runs the test once per allocator it
	 * names: a baseline run besides them (glibc's, under -q -a mimalloc)
	 * ran the test twice, its output twice in the log a driver compares
	 * and its standard input read by the first run alone (zlib's `make
	 * test QEMU_RUN='memcheck run -q -a mimalloc --'` printed example's
	 * eight lines twice, and the second minigzip of `echo hello world |
	 * minigzip | minigzip -d` compressed nothing).  Under -q the baseline
	 * is run only when -b or --baseline-file names one or a budget's
	 * relative limits compare with it; otherwise it is the first
	 * allocator listed, which nothing compares with. */
	bool quiet_base = o.quiet && !o.baseline && !o.baseline_file &&
			  !(budget && mc_budget_relative(budget));
	supp_texts = o.nsupp ? xcalloc((size_t)o.nsupp, sizeof *supp_texts) : NULL;
	if (o.nsupp && !(supp_names = check_suppressions(o.supp, o.nsupp, supp_texts)))
		goto out;
	if (o.gen) {
		gen_abs = absolute(o.gen);
		int fd = open_output(gen_abs, O_TRUNC);
		if (fd < 0) {
			say("--gen-suppressions %s: %s", o.gen, errno == ENXIO ?
			    "a FIFO no process has open for reading" : strerror(errno));
			goto out;
		}
		close(fd);
	}

	/* The baseline: a stored report, or the baseline allocator run
	 * first. */
	if (o.baseline_file) {
		groups = xcalloc(1, sizeof *groups);
		ng = 1;
		if (!read_baseline_file(&groups[0], o.baseline_file, bname))
			goto out;
	} else if (!quiet_base && add_allocator(&groups, &ng, bname, true)) {
		goto out;
	}
	char *list = xstrdup(o.allocators);
	for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		name += strspn(name, " ");
		name[strcspn(name, " ")] = 0;
		if (!*name)
			continue;
		if (add_allocator(&groups, &ng, name, false)) {
			free(list);
			goto out;
		}
	}
	free(list);
	if (quiet_base) {
		/* the first allocator listed that is installed; the default
		 * baseline only when none is, so that the test still runs */
		size_t b = 0;
		while (b < ng && groups[b].skipped)
			b++;
		if (b == ng) {
			if (add_allocator(&groups, &ng, bname, false))
				goto out;
			if (b == ng) /* listed, and skipped: said below */
				b = 0;
		}
		struct group g = groups[b];
		memmove(groups + 1, groups, b * sizeof *groups);
		groups[0] = g;
		groups[0].baseline = true;
	}
	if (!o.baseline_file && groups[0].skipped) {
		say("the baseline allocator cannot be used: %s", groups[0].skipped);
		goto out;
	}
	if (!(lib = find_library()))
		goto out;

	const char *t = getenv("TMPDIR");
	tmp = xasprintf("%s/memcheck-run-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		say("cannot make a temporary directory %s: %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (budget_stream.s) {
		/* the processes' MEMCHECK_BUDGET: a copy of the text checked
		 * above, which a FIFO cannot give again and a file changed or
		 * removed meanwhile would not; MEMCHECK_BUDGET_NAME names the
		 * user's file in their messages and violations, which
		 * evaluate() takes out by that name */
		if (!(budget_copy = write_budget_copy(&budget_stream, tmp, o.budget)))
			goto out;
	}
	if (supp_names && !(supp_env = write_supp_copies(supp_texts, o.supp, o.nsupp, tmp)))
		goto out;
	if (o.baseline_file) {
		/* the library gets only the baseline allocator's records */
		baseline_copy = xasprintf("%s/baseline.jsonl", tmp);
		struct group bg = groups[0];
		bg.stored = false;
		bg.baseline = false; /* written whatever its role */
		if (!write_report(baseline_copy, &bg, 1, false))
			goto out;
	}
	for (size_t i = 0; i < ng; i++)
		if (groups[i].skipped)
			say("skipping %s", groups[i].skipped);

	int bad_reports = 0, passed_on = 0, own_status = 0, own_signal = 0;
	bool stop = false, any_signal = false, any_failure = false;
	spawn_catch_signals(true, on_signal);
	for (size_t gi = 0; gi < ng && !stop; gi++) {
		struct group *g = &groups[gi];
		if (g->stored || g->skipped)
			continue;
		/* auto: once, and AUTO_RUNS times in all when the first run's
		 * records say the allocator gives memory back on a timer */
		g->nreps = o.repeat ? o.repeat : 1;
		g->reps = xcalloc((size_t)g->nreps, sizeof *g->reps);
		g->runs = xcalloc((size_t)g->nreps, sizeof *g->runs);
		char *preload = spawn_preload(lib, g->object, true);
		char **run_argv = valgrind ? vg_argv(valgrind, g->label, g->object, o.vg_opts,
						     o.nvg_opts, cmd) : cmd;
		for (int rep = 0; rep < g->nreps && !stop && !got_signal; rep++) {
			char *report = xasprintf("%s/a%zu-r%d.jsonl", tmp, gi, rep + 1);
			char *base_report = NULL;
			/* the baseline's run of the same number, or its last */
			int brep = rep < groups[0].nreps ? rep : groups[0].nreps - 1;
			if (baseline_copy)
				base_report = xstrdup(baseline_copy);
			else if (!g->baseline && groups[0].runs && brep >= 0 && groups[0].runs[brep].done)
				base_report = xasprintf("%s/a0-r%d.jsonl", tmp, brep + 1);
			if (base_report && access(base_report, F_OK) != 0)
				close(open(base_report, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
			if (o.quiet)
				;
			else if (g->nreps > 1)
				say("running under %s%s (run %d of %d)", g->label,
				    valgrind ? " in valgrind" : "", rep + 1, g->nreps);
			else
				say("running under %s%s", g->label, valgrind ? " in valgrind" : "");
			/* the budget and the baseline's report set or unset
			 * (the baseline only with a budget, whose relative
			 * limits alone read it); the suppression files only
			 * when given */
			struct env_var env[9] = { /* 3 + each optional one below */
				{ "MEMCHECK_BUDGET", budget_copy },
				{ "MEMCHECK_BUDGET_NAME", budget_copy ? budget_abs : NULL },
				{ "MEMCHECK_BASELINE", budget_copy ? base_report : NULL },
			};
			size_t nenv = 3;
			if (o.timeline)
				env[nenv++] = (struct env_var){ "MEMCHECK_TIMELINE", o.timeline };
			/* a wrapper's output is the test's log: failures only,
			 * unless the user asks for more */
			if (o.quiet && !getenv("MEMCHECK_TEXT"))
				env[nenv++] = (struct env_var){ "MEMCHECK_TEXT", "fail" };
			/* a driver's wrapper: a failure is a hard error, which
			 * no expected failure excuses (QUIET_EXITCODE) */
			if (o.quiet && !getenv("MEMCHECK_EXITCODE"))
				env[nenv++] = (struct env_var){ "MEMCHECK_EXITCODE",
								QUIET_EXITCODE_STR };
			if (supp_env) {
				env[nenv++] = (struct env_var){ "MEMCHECK_SUPPRESSIONS", supp_env };
				env[nenv++] = (struct env_var){ "MEMCHECK_SUPPRESSIONS_NAMES",
								supp_names };
			}
			if (gen_abs)
				env[nenv++] = (struct env_var){ "MEMCHECK_GEN_SUPPRESSIONS", gen_abs };
			struct spawn sp = { .argv = run_argv, .preload = preload, .report = report,
					    .env = env, .nenv = nenv, .exec_error = true };
			struct runinfo *ri = &g->runs[rep];
			struct child c;
			spawn_start(&sp, &c);
			child = c.pid;
			if (got_signal) /* it came before the command had a pid */
				kill(child, got_signal);
			spawn_wait(&c, true, &ri->end);
			child = 0;
			ri->done = true;
			free(base_report);
			if (ri->end.exec_errno) {
				say("cannot run %s: %s", run_argv[0], strerror(ri->end.exec_errno));
				free(report);
				free(preload);
				if (valgrind)
					vg_argv_free(run_argv);
				spawn_catch_signals(false, on_signal);
				goto out;
			}
			int bad = recs_read(&g->reps[rep], report, true);
			free(report);
			if (bad)
				bad_reports += bad < 0 ? 1 : bad;
			if (!valgrind && !serves_malloc(g, &g->reps[rep])) {
				say("-a %s: %s does not serve malloc (every record of the run says "
				    "glibc did): not an allocator, or not a shared object ld.so "
				    "could preload", g->label, g->object);
				free(preload);
				spawn_catch_signals(false, on_signal);
				goto out; /* status is still EXIT_USAGE */
			}
			recs_number(&g->reps[rep]);
			/* A region the library failed explains a non-zero exit:
			 * the suite's tests fail on memcheck's verdicts, and the
			 * other allocators still run. */
			for (size_t k = 0; k < g->reps[rep].n; k++) {
				const struct rec *x = &g->reps[rep].v[k];
				/* a process's own non-zero exit explains nothing:
				 * its failure is its own (rec_own_end) */
				if (!REC_FIG(x, pass) && !rec_own_end(x))
					ri->explained = ri->end.exit_code != 0;
			}
			/* a wrapper runs the test once, as its driver expects */
			if (!o.repeat && !o.quiet && rep == 0 && timed_ms(&g->reps[0], &g->timed_ms)) {
				g->nreps = AUTO_RUNS;
				g->reps = xrealloc(g->reps, AUTO_RUNS * sizeof *g->reps);
				g->runs = xrealloc(g->runs, AUTO_RUNS * sizeof *g->runs);
				memset(g->reps + 1, 0, (AUTO_RUNS - 1) * sizeof *g->reps);
				memset(g->runs + 1, 0, (AUTO_RUNS - 1) * sizeof *g->runs);
				ri = &g->runs[0];
				say("%s gives freed memory back on a timer (after up to %llu ms): its "
				    "figures vary from run to run; running it %d times, gating its "
				    "measured figures on the median (see memcheck(1), NOISY ALLOCATORS)",
				    g->label, (unsigned long long)g->timed_ms, AUTO_RUNS);
			}
			if (!own_status && !own_signal) {
				own_status = ri->end.exit_code > 0 ? ri->end.exit_code : 0;
				own_signal = ri->end.sig;
			}
			/* a test driver's skip and hard error: passed on, and the
			 * other allocators would say the same */
			if (!ri->end.sig && (ri->end.exit_code == 77 || ri->end.exit_code == 99)) {
				if (ri->end.exit_code > passed_on)
					passed_on = ri->end.exit_code;
				if (!o.keep_going)
					stop = true;
			} else if (ri->end.sig || (ri->end.exit_code && !ri->explained)) {
				char d[96];
				describe_end(&ri->end, d, sizeof d);
				if (!o.quiet)
					say("%s under %s: %s", cmd[0], g->label, d);
				any_signal |= ri->end.sig != 0;
				any_failure = true;
				if (!o.keep_going)
					stop = true;
			}
			if (!ri->end.sig && !g->reps[rep].n && !bad && !o.quiet)
				say("%s under %s wrote no report: no program under test ran "
				    "(programs installed on the system and interpreters of "
				    "scripts are left out: MEMCHECK_PROGRAMS), or memcheck was "
				    "not loaded (a static program, or one that clears "
				    "LD_PRELOAD?)", cmd[0], g->label);
		}
		free(preload);
		if (valgrind)
			vg_argv_free(run_argv);
	}
	spawn_catch_signals(false, on_signal);
	for (size_t gi = 0; gi < ng; gi++)
		if (!groups[gi].stored && !groups[gi].skipped && !groups[gi].nreps)
			groups[gi].skipped = xstrdup("not run: stopped after a failure "
						     "(--keep-going runs it)");
	if (got_signal) {
		say("interrupted");
		reraise = got_signal;
		status = 128 + got_signal;
		/* The records the interrupted command wrote, in the files asked
		 * for: a driver that times a test out (meson: SIGTERM to the
		 * group, SIGKILL 0.5 s later) keeps its killed process's record
		 * (lost before session 43).  Evaluated as they are: the runs
		 * that did not end have none. */
		if (o.report || o.junit) {
			evaluate(groups, ng, budget, budget_abs);
			if (o.report)
				write_report(o.report, groups, ng, true);
			if (o.junit)
				write_junit(o.junit, groups, ng, cmd[0]);
		}
		goto out;
	}

	size_t failed = evaluate(groups, ng, budget, budget_abs), total = 0, by_vg = 0, own = 0;
	for (size_t i = 0; i < ng; i++)
		for (int r = 0; r < groups[i].nreps && !groups[i].stored; r++) {
			total += groups[i].reps[r].n;
			by_vg += recs_vg_exit(&groups[i].reps[r], 1);
			for (size_t k = 0; k < groups[i].reps[r].n; k++)
				own += groups[i].reps[r].v[k].own_end;
		}
	if (!o.quiet) {
		char shown[1024];   /* the command as the table's names are shown */
		char *title = xasprintf("memcheck run: %s",
					mc_text_escape(cmd[0], shown, sizeof shown));
		print_table(stderr, groups, ng, title);
		free(title);
		print_runs(stderr, groups, ng);
	}

	bool files_ok = true;
	if (o.report && !write_report(o.report, groups, ng, true))
		files_ok = false;
	if (o.junit && !write_junit(o.junit, groups, ng, cmd[0]))
		files_ok = false;
	if (o.html) {
		char *what = xasprintf("memcheck run: %s", cmd[0]);
		if (!write_html(o.html, groups, ng, what, budget))
			files_ok = false;
		free(what);
	}

	char lim[16];
	uint64_t lim_bytes, lim_own;
	size_t short_n = o.quiet ? 0 : limit_shortfalls(groups, ng, lim, &lim_bytes, &lim_own);
	if (short_n)
		say("%zu region record%s: allocations failed under %s of %.1f MiB, which counted "
		    "memcheck's own mappings too (up to %.1f MiB; soft and hard limits one): the "
		    "program had less room than without memcheck (memcheck(7), Limits)", short_n,
		    short_n == 1 ? "" : "s", lim, (double)lim_bytes / 1048576.0,
		    (double)lim_own / 1048576.0);
	if (own && !o.quiet)
		say("%zu region record%s failed in a process that exited non-zero on its own: not "
		    "counted (its status told whatever ran it, which may expect that failure)", own,
		    own == 1 ? "" : "s");
	if (o.quiet) {
		say_failed_records(groups, ng);
		status = quiet_status(own_status, own_signal, failed, total,
				      bad_reports || !files_ok);
		reraise = own_signal;
	} else if (any_signal) {
		status = EXIT_COMMAND;
		say("exit 3: the command was killed by a signal");
	} else if (passed_on) {
		status = passed_on;
		say("exit %d: the command exited %d (%s), passed on", passed_on, passed_on,
		    passed_on == 77 ? "a test that skipped itself" : "a hard error");
	} else if (any_failure) {
		status = EXIT_COMMAND;
		say("exit 3: the command failed, and no region of that run did");
	} else if (bad_reports || !files_ok) {
		status = EXIT_USAGE;
		say("exit 2: %s", bad_reports ? "a report could not be read" :
			"a file could not be written");
	} else if (failed) {
		status = EXIT_GATE;
		say("exit 1: %zu of %zu region record%s failed (leak, heap error or budget)",
		    failed, total, total == 1 ? "" : "s");
	} else if (by_vg) {
		/* nothing measured there: not "clean" (lib/region.c's
		 * judged_at_valgrind_exit) */
		status = EXIT_PASS;
		say("exit 0: %zu region record%s: %zu clean and within budget, %zu not measured "
		    "(memcheck bypassed by valgrind's malloc: valgrind's own exit judged %s)",
		    total, total == 1 ? "" : "s", total - by_vg, by_vg, by_vg == 1 ? "it" : "them");
	} else if (!total) {
		/* no process wrote a record (said above for each run): nothing
		 * judged, not "0 region records, all clean" (a program that
		 * removed its report, one left out or not loaded; harden47) */
		status = EXIT_PASS;
		say("exit 0: no region record: nothing was measured, so nothing was judged clean");
	} else if (own) {
		status = EXIT_PASS;
		say("exit 0: %zu region record%s: %zu clean and within budget, %zu failed in a "
		    "process that exited non-zero on its own (not counted)", total,
		    total == 1 ? "" : "s", total - own, own);
	} else {
		status = EXIT_PASS;
		say("exit 0: %zu region record%s, all clean and within budget", total,
		    total == 1 ? "" : "s");
	}

out:
	if (tmp) {
		rm_tmpdir(tmp);
		free(tmp);
	}
	free(baseline_copy);
	free(budget_copy);
	mc_buf_free(&budget_stream);
	for (size_t i = 0; i < ng; i++)
		group_free(&groups[i]);
	free(groups);
	if (budget)
		mc_budget_free(budget);
	free(budget_abs);
	free(supp_env);
	free(supp_names);
	for (int i = 0; supp_texts && i < o.nsupp; i++)
		mc_buf_free(&supp_texts[i]);
	free(supp_texts);
	free(gen_abs);
	free(lib);
	free(valgrind);
	free(o.vg_opts);
	free_out_names(&o);
	if (reraise)
		raise_again(reraise);
	return status;
}
