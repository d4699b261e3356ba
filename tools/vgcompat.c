/*
 * vgcompat.c - valgrind's command line: `memcheck --log-file=F -q
 * --leak-check=yes PROGRAM ARGS` runs PROGRAM with libmemcheck preloaded,
 * as `valgrind` with the same options would run it under valgrind.  Test
 * drivers that know how to run a memory checker know valgrind's: CTest's
 * MEMORYCHECK_TYPE=Valgrind puts --log-file=... and its default options
 * in front of each test and reads the log for valgrind's words, which the
 * library's text uses ("definitely lost in loss record 1 of 1").
 *
 * Traps that shaped it:
 * - The program is exec'd, not run as a child: its pid, exit status
 *   and signals are its own, as under valgrind.  As valgrind's, the
 *   status is the program's unless --error-exitcode=N asks for N when
 *   there were errors (valgrind's manual: "When set to the default value
 *   (zero), the return value from Valgrind will always be the return
 *   value of the process being simulated"): MEMCHECK_EXITCODE=0 unless
 *   the option, or the caller's own MEMCHECK_EXITCODE, says otherwise.
 *   A leaking test then fails only where the driver asks for it, as it
 *   asks valgrind (autoconf-archive's AX_VALGRIND_CHECK, jq's shtest and
 *   meson's documented setup pass --error-exitcode=1; the CMake
 *   package's memcheck_memory_checker() passes --error-exitcode=23).
 * - CTest warns for every test whose log file does not exist, and
 *   valgrind creates it (empty with -q) at start: the file the program's
 *   own process will write is created here, emptied as valgrind does.
 *   The library creates a file only when it has something to say.
 * - Scripts grep valgrind's lines ("==PID== ERROR SUMMARY: 0 errors",
 *   "All heap blocks were freed", "definitely lost: 0 bytes"): the
 *   library writes the process's end in valgrind's layout
 *   (MEMCHECK_VALGRIND_TEXT, lib/vgtext.c, from --leak-check and
 *   --show-leak-kinds), and the header valgrind writes at start is
 *   written here, before the exec, under the pid the program keeps.
 * - valgrind's options that tune its own instrumentation
 *   (--track-origins, --malloc-fill, ...) mean nothing here and are
 *   accepted; options memcheck cannot honour (--xml-socket, another
 *   --tool) are refused, so that a setup does not silently check less
 *   than it says.
 * - Tools that read valgrind's XML (--xml=yes --xml-file=F) read the
 *   library's (lib/vgxml.c): the file is created here, as valgrind
 *   creates it, and the command line handed on for its vargv; valgrind
 *   under --xml=yes says nothing in its text and lists the records of
 *   --show-leak-kinds whatever --leak-check says, and so does this.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* valgrind options accepted and ignored: they tune valgrind's own
 * instrumentation, or choose what it prints beside what memcheck
 * prints anyway.  --track-fds=yes's FILE DESCRIPTORS section is not
 * written (no stack opened a descriptor here: memcheck wraps no open,
 * socket or pipe, and the C library's own, fopen's or opendir's, which
 * valgrind sees as system calls, reach no wrapper: checked against
 * valgrind 3.19, session 50); valgrind 3.19 counts no error for it, so ERROR
 * SUMMARY and the status are its own, and a setup that passes it (a
 * project's MEMORYCHECK_COMMAND_OPTIONS, a meson --wrap) still runs. */
static const char *const ignored[] = {
	"--track-origins", "--track-fds",
	"--time-stamp", "--read-var-info", "--read-inline-info", "--demangle",
	"--smc-check", "--max-stackframe", "--main-stacksize", "--malloc-fill",
	"--free-fill", "--keep-stacktraces", "--freelist-vol", "--freelist-big-blocks",
	"--undef-value-errors", "--partial-loads-ok", "--expensive-definedness-checks",
	"--show-mismatched-frees", "--workaround-gcc296-bugs", "--alignment",
	"--redzone-size", "--show-below-main",
	"--soname-synonyms",
	"--fair-sched", "--num-transtab-sectors", "--vex-iropt-register-updates",
};

/* "--name=value": value, or NULL when a is not that option. */
static const char *value_of(const char *a, const char *name)
{
	size_t n = strlen(name);
	return strncmp(a, name, n) == 0 && a[n] == '=' ? a + n + 1 : NULL;
}

static bool is_ignored(const char *a)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(ignored); i++) {
		size_t n = strlen(ignored[i]);
		if (strncmp(a, ignored[i], n) == 0 && (a[n] == '=' || !a[n]))
			return true;
	}
	return false;
}

/* valgrind's --log-file: %q{VAR} is VAR's value now; %p and %% are the
 * library's (MEMCHECK_LOG); relative to the directory memcheck starts
 * in.  NULL (said) where valgrind refuses the name, with its reason: an
 * unset VAR (valgrind 3.19: "Bad option: --log-file=x%q{V}", then
 * "Environment variable 'V' is not set"; an empty one is expanded), %q
 * without {VAR}, another %. */
static char *log_pattern(const char *opt, const char *v)
{
	if (!*v) {   /* valgrind: "Bad option: --log-file=", "No filename given" */
		say("%s=: no file name given", opt);
		return NULL;
	}
	char cwd[PATH_MAX];
	size_t cap = strlen(v) + PATH_MAX + 2, len = 0;
	char *out = xmalloc(cap);
	if (v[0] != '/' && getcwd(cwd, sizeof cwd))
		len = (size_t)snprintf(out, cap, "%s/", cwd);
	for (const char *p = v; *p; p++) {
		const char *add = NULL;
		size_t n = 1;
		char one[3] = { *p, 0, 0 };
		if (*p == '%' && (p[1] == 'p' || p[1] == '%')) {
			one[1] = *++p;
			n = 2;
			add = one;
		} else if (*p == '%' && p[1] == 'q') {
			const char *close = p[2] == '{' ? strchr(p + 3, '}') : NULL;
			char *name = close ? xasprintf("%.*s", (int)(close - p - 3), p + 3) : NULL;
			add = name ? getenv(name) : NULL;
			if (!add) {
				/* named as given: --xml-file's as --xml-file's */
				if (name)
					say("bad option %s=%s: environment variable '%s' is not set",
					    opt, v, name);
				else
					say("bad option %s=%s: %s", opt, v,
					    p[2] == '{' ? "missing '}' in %q specifier"
							: "expected '{' after '%q'");
				free(name);
				free(out);
				return NULL;
			}
			free(name);
			n = strlen(add);
			p = close;
		} else if (*p == '%') {
			say("bad option %s=%s: expected 'p' or 'q' or '%%' after '%%' (%%p, %%q{VAR} "
			    "and %%%% are valgrind's escapes)", opt, v);
			free(out);
			return NULL;
		} else {
			add = one;
		}
		if (len + n + 1 > cap)
			out = xrealloc(out, cap = 2 * (len + n + 1));
		memcpy(out + len, add, n);
		len += n;
	}
	out[len] = 0;
	return out;
}

/* valgrind's start (mc_buf_vg_head): "==PID== " lines naming the tool,
 * the command, the parent's pid where the text goes to a file (file),
 * and an empty one; -q writes none.  The exec'd program keeps this
 * pid, and its parent is this process's. */
static void header(int fd, char **cmd, bool file)
{
	struct mc_buf words = { 0 }, b = { 0 };
	for (; *cmd; cmd++)
		mc_buf_put(&words, *cmd, strlen(*cmd) + 1);
	mc_buf_vg_head(&b, (long)getpid(), file ? (long)getppid() : -1, NULL,
		       words.s ? words.s : "", words.len);
	if (b.s)
		mc_write_all(fd, b.s, b.len);
	mc_buf_free(&b);
	mc_buf_free(&words);
}

/* A file named by --log-file or --xml-file, created and emptied now, as
 * valgrind does; -1 (said, as valgrind's "Cannot create log file") where
 * it cannot be: valgrind then runs nothing (exit 1), where memcheck ran
 * the program, its text on standard error, and the XML nowhere (a
 * directory, a missing directory; harden47). */
static int create_now(const char *opt, const char *pattern)
{
	char path[PATH_MAX];
	size_t bad;
	if (mc_text_path(pattern, (long)getpid(), path, sizeof path, &bad) < 0)
		return -2;   /* the library's to say */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		bad_usage(NULL, "%s=%s: cannot create it: %s; nothing run (valgrind runs "
			  "nothing either)", opt, path, strerror(errno));
	return fd;
}

/* The file the exec'd program's own process writes, with the header
 * unless quiet; false (said) where it cannot be created. */
static bool create_log(const char *pattern, char **cmd, bool quiet)
{
	int fd = create_now("--log-file", pattern);
	if (fd == -2)
		return true;
	if (fd < 0)
		return false;
	if (!quiet)
		header(fd, cmd, true);
	close(fd);
	return true;
}

/* The LD_PRELOAD valgrind gives the program it runs: its two objects,
 * "LIBDIR/vgpreload_core-PLATFORM.so:LIBDIR/vgpreload_memcheck-
 * PLATFORM.so", in front of the caller's value and a colon where the
 * caller set one (an empty one too), appended to the environment where
 * none was.  A program that copies its environment (gawk, perl, dash)
 * allocates that value's length: the library's entry is padded here with
 * colons to the length of valgrind's two, and the library turns its own
 * name into colons as well before the program's main (lib/options.c,
 * mc_valgrind_hide), so that the program's "total heap usage" is
 * valgrind's, and what it execs loads no memcheck (the dynamic loader
 * skips empty entries) and no object of valgrind's.  LIBDIR is
 * valgrind's: VALGRIND_LIB, as its launcher reads it, else the directory
 * beside the valgrind a shell finds on PATH (vgrun.c's vg_find) that
 * holds the core object, else the one distributions install
 * (/usr/libexec/valgrind). */
#if defined(__x86_64__)
#define VG_PLATFORM "amd64-linux"
#elif defined(__aarch64__)
#define VG_PLATFORM "arm64-linux"
#elif defined(__i386__)
#define VG_PLATFORM "x86-linux"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VG_PLATFORM "ppc64le-linux"
#elif defined(__s390x__)
#define VG_PLATFORM "s390x-linux"
#else
#define VG_PLATFORM "amd64-linux"
#endif
#define VG_CORE "/vgpreload_core-" VG_PLATFORM ".so"
#define VG_TOOL "/vgpreload_memcheck-" VG_PLATFORM ".so"

static bool holds_core(const char *dir)
{
	char *core = xasprintf("%s" VG_CORE, dir);
	bool there = access(core, R_OK) == 0;
	free(core);
	return there;
}

static size_t valgrind_preload_len(void)
{
	static const char *const beside[] = { "/../libexec/valgrind", "/../lib/valgrind" };
	const char *env = getenv("VALGRIND_LIB");
	char *dir = env && *env ? xstrdup(env) : NULL;
	char *exe = dir ? NULL : vg_find(); /* ".../valgrind" */
	size_t n = exe ? strlen(exe) - strlen("/valgrind") : 0;
	for (size_t k = 0; exe && !dir && k < MC_ARRAY_SIZE(beside); k++) {
		char *d = xasprintf("%.*s%s", (int)n, exe, beside[k]);
		char real[PATH_MAX];
		if (holds_core(d) && realpath(d, real))
			dir = xstrdup(real);
		free(d);
	}
	free(exe);
	size_t len = 2 * strlen(dir ? dir : "/usr/libexec/valgrind") + strlen(VG_CORE ":" VG_TOOL);
	free(dir);
	return len;
}

/* The library (lib) preloaded in valgrind's place, padded with colons
 * to its length */
static char *preload_as_valgrinds(const char *lib)
{
	size_t len = valgrind_preload_len(), n = strlen(lib);
	const char *user = getenv("LD_PRELOAD");
	char *v = xasprintf("%s%*s%s%s", lib, (int)(len > n ? len - n : 0), "", user ? ":" : "",
			    user ? user : "");
	memset(v + n, ':', len > n ? len - n : 0);
	return v;
}

/* The library's settings, in one variable, MEMCHECK_VALGRIND: entries
 * NAME=VALUE separated by MC_VALGRIND_SEP, each standing for
 * MEMCHECK_NAME.  One variable, not eleven: a program that copies its
 * environment (dash: a block for each variable) allocates as under
 * valgrind but for one string, where it made seven blocks more (59 to
 * valgrind's 52).  The variable is made anew: an outer command line's
 * entries (--trace-children=yes running memcheck again) are replaced,
 * but for the values a caller keeps (keep). */
static char *settings;
static const char *cut; /* the first entry whose value holds MC_VALGRIND_SEP */

static void put_setting(const char *name, const char *value)
{
	if (!cut && strchr(value, MC_VALGRIND_SEP))
		cut = name;
	char *more = xasprintf("%s%s%s=%s", settings ? settings : "",
			       settings ? (char[]){ MC_VALGRIND_SEP, 0 } : "", name, value);
	free(settings);
	settings = more;
	char var[64];
	snprintf(var, sizeof var, "MEMCHECK_%s", name);
	unsetenv(var); /* the entry takes its place: no second string */
}

/* An option whose caller's value is kept: the variable, else an outer
 * command line's entry, else the default given. */
static void keep(const char *name, const char *def)
{
	char var[64];
	snprintf(var, sizeof var, "MEMCHECK_%s", name);
	if (getenv(var))
		return;
	const char *outer = getenv("MEMCHECK_VALGRIND");
	size_t n = strlen(name);
	for (const char *e = outer; e && *e;) {
		size_t len = strcspn(e, (char[]){ MC_VALGRIND_SEP, 0 });
		if (len > n && !strncmp(e, name, n) && e[n] == '=') {
			char *v = xasprintf("%.*s", (int)(len - n - 1), e + n + 1);
			put_setting(name, v);
			free(v);
			return;
		}
		e += len + (e[len] != 0);
	}
	put_setting(name, def);
}

/* --xml=yes: where the library writes valgrind's XML at the program's
 * exit (MEMCHECK_VALGRIND_XML's first line), the file created now and
 * emptied as valgrind does at its start, and the command line for its
 * vargv (the lines after: memcheck's path, then the options, each ended
 * by a newline). */
static bool xml_setup(const char *file, const char *fd, char **argv, int nopts)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	self[n > 0 ? n : 0] = 0;
	char *words = xasprintf("%s\n", n > 0 ? self : argv[0]);
	for (int k = 1; k < nopts; k++) {
		char *more = xasprintf("%s%s\n", words, argv[k]);
		free(words);
		words = more;
	}
	char *v = xasprintf("%s\n%s", file ? file : fd, words);
	put_setting("VALGRIND_XML", v);
	free(v);
	free(words);
	if (!file)
		return true;
	int f = create_now("--xml-file", file);
	if (f >= 0)
		close(f);
	return f != -1;
}

static const char *const kind_words[] = { "definite", "indirect", "possible", "reachable" };

/* A kinds option's value (--show-leak-kinds, --errors-for-leak-kinds):
 * all, none, or kinds joined by commas, as valgrind takes it, as a set
 * (bit i: kind_words[i]); -1 for another word, which valgrind refuses
 * too. */
static int leak_kinds(const char *v)
{
	if (!strcmp(v, "all") || !strcmp(v, "none"))
		return v[0] == 'a' ? 15 : 0;
	int set = 0;
	for (const char *w = v;; w++) {
		size_t n = strcspn(w, ","), k = 0;
		while (k < MC_ARRAY_SIZE(kind_words) &&
		       (strlen(kind_words[k]) != n || strncmp(w, kind_words[k], n)))
			k++;
		if (k == MC_ARRAY_SIZE(kind_words))
			return -1;
		set |= 1 << k;
		w += n;
		if (!*w)
			return set;
	}
}

/* A set of kinds in the words the library's MEMCHECK_VALGRIND_SHOW and
 * _ERRORS take. */
static void set_kinds(const char *name, int kinds)
{
	char v[64] = "none";
	size_t len = 0;
	for (size_t k = 0; k < MC_ARRAY_SIZE(kind_words); k++)
		if (kinds >> k & 1)
			len += (size_t)snprintf(v + len, sizeof v - len, "%s%s", len ? "," : "",
						kind_words[k]);
	put_setting(name, v);
}

/* --leak-check-heuristics: all, none, or heuristics joined by commas,
 * passed on as the library's MEMCHECK_LEAK_HEURISTICS takes them. */
static bool heuristics_option(const char *v)
{
	static const char *const words[] = { "stdstring", "length64", "newarray",
					      "multipleinheritance" };
	if (!strcmp(v, "all") || !strcmp(v, "none"))
		return true;
	for (const char *w = v;; w++) {
		size_t n = strcspn(w, ","), k = 0;
		while (k < MC_ARRAY_SIZE(words) && (strlen(words[k]) != n || strncmp(w, words[k], n)))
			k++;
		if (k == MC_ARRAY_SIZE(words))
			return false;
		w += n;
		if (!*w)
			return true;
	}
}

/* --run-libc-freeres and --run-cxx-freeres: yes or no, into the
 * library's MEMCHECK_VALGRIND_FREERES set (bit 0 cxx, bit 1 libc). */
static bool freeres_option(const char *v, unsigned bit, unsigned *set)
{
	if (strcmp(v, "yes") && strcmp(v, "no"))
		return false;
	*set = !strcmp(v, "yes") ? *set | bit : *set & ~bit;
	return true;
}

/* The valgrind whose command line this file speaks. */
#define VALGRIND_SPOKEN "3.19.0"

void vgcompat_version(void)
{
	printf("valgrind-%s (memcheck %s)\n", VALGRIND_SPOKEN, MEMCHECK_VERSION);
}

int cmd_vgcompat(int argc, char **argv)
{
	const char *text = NULL, *scan = NULL, *leak_check = "summary", *heuristics = NULL;
	const char *resolution = "high"; /* valgrind's default */
	int show = 5, errors = 5; /* valgrind's default: definite,possible */
	unsigned freeres = 3; /* valgrind runs both by default */
	char *log = NULL, *supp = NULL, *supp_names = NULL, *fullpath = NULL, depth[16] = "", code[16] = "";
	bool gen = false, child_silent = false, trace_children = false, xml = false;
	bool error_limit = true; /* valgrind's default */
	char *xml_file = NULL, *xml_fd = NULL;
	int i = 1, log_fd = 2, verbosity = 1, list = -1; /* list: -s's, -1 not given */
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			verbosity--; /* valgrind's: -v -q is neither */
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			/* valgrind's -v lists the errors and the suppressions
			 * used at the end, as -s does, unless
			 * --show-error-list=no says otherwise (before or
			 * after it); memcheck's own lines (MEMCHECK_TEXT=full)
			 * are not valgrind's */
			verbosity++;
		} else if (!strcmp(a, "-s")) {
			list = 1;
		} else if ((v = value_of(a, "--show-error-list"))) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return bad_usage(NULL, "%s: expected yes or no", a);
			list = v[0] == 'y';
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--help-debug") ||
			   !strcmp(a, "--version")) {
			/* A build system's probe of the tool, as valgrind answers it
			 * (status 0, the options before it checked):
			 * autoconf-archive's AX_VALGRIND_CHECK runs `valgrind
			 * --tool=memcheck --help` at configure time and, when that
			 * fails, runs no test under valgrind: its make
			 * check-valgrind passed a leaking test, doing nothing. */
			if (!strcmp(a, "--version"))
				vgcompat_version();
			else
				usage_of(NULL, stdout);
			return EXIT_PASS;
		} else if ((v = value_of(a, "--tool"))) {
			if (strcmp(v, "memcheck") != 0)
				return bad_usage(NULL, "%s: only valgrind's memcheck tool has a "
						 "counterpart here", a);
		} else if ((v = value_of(a, "--log-file"))) {
			free(log);
			log_fd = 2;
			if (!(log = log_pattern("--log-file", v)))
				return EXIT_USAGE;
		} else if ((v = value_of(a, "--log-fd"))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 0 || n > INT_MAX)
				return bad_usage(NULL, "%s: expected a descriptor's number", a);
			free(log);
			log = NULL;
			log_fd = (int)n;
		} else if ((v = value_of(a, "--leak-check"))) {
			if (!strcmp(v, "no"))
				scan = "0"; /* blocks still counted, none judged */
			else if (strcmp(v, "summary") && strcmp(v, "yes") && strcmp(v, "full"))
				return bad_usage(NULL, "%s: expected no, summary, yes or full", a);
			leak_check = strcmp(v, "yes") && strcmp(v, "full") ? "summary" : "full";
		} else if ((v = value_of(a, "--show-leak-kinds")) ||
			   (v = value_of(a, "--errors-for-leak-kinds"))) {
			int set = leak_kinds(v);
			if (set < 0)
				return bad_usage(NULL, "%s: expected all, none, or definite, "
						 "indirect, possible, reachable joined by commas", a);
			*(a[2] == 's' ? &show : &errors) = set;
		} else if ((v = value_of(a, "--show-reachable")) ||
			   (v = value_of(a, "--show-possibly-lost"))) {
			/* valgrind's older spellings: reachable=yes is all,
			 * no is definite and possible; possibly-lost adds or
			 * takes away possible */
			bool yes = !strcmp(v, "yes");
			if (!yes && strcmp(v, "no"))
				return bad_usage(NULL, "%s: expected yes or no", a);
			if (a[7] == 'r')
				show = yes ? 15 : 5;
			else
				show = yes ? show | 4 : show & ~4;
		} else if ((v = value_of(a, "--leak-check-heuristics"))) {
			if (!heuristics_option(v))
				return bad_usage(NULL, "%s: expected all, none, or stdstring, length64, "
						 "newarray, multipleinheritance joined by commas", a);
			heuristics = v;
		} else if ((v = value_of(a, "--leak-resolution"))) {
			if (strcmp(v, "low") && strcmp(v, "med") && strcmp(v, "high"))
				return bad_usage(NULL, "%s: expected low, med or high", a);
			resolution = v;
		} else if ((v = value_of(a, "--child-silent-after-fork"))) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return bad_usage(NULL, "%s: expected yes or no", a);
			child_silent = v[0] == 'y';
		} else if ((v = value_of(a, "--error-limit"))) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return bad_usage(NULL, "%s: expected yes or no", a);
			error_limit = v[0] == 'y';
		} else if ((v = value_of(a, "--trace-children"))) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return bad_usage(NULL, "%s: expected yes or no", a);
			trace_children = v[0] == 'y';
		} else if ((v = value_of(a, "--run-libc-freeres"))) {
			if (!freeres_option(v, 2, &freeres))
				return bad_usage(NULL, "%s: expected yes or no", a);
		} else if ((v = value_of(a, "--run-cxx-freeres"))) {
			if (!freeres_option(v, 1, &freeres))
				return bad_usage(NULL, "%s: expected yes or no", a);
		} else if ((v = value_of(a, "--num-callers"))) {
			/* valgrind's N frames count its allocation function's
			 * (malloc, operator new), which memcheck's stacks do not
			 * hold: N - 1 of the program's, so that records split
			 * and merge where valgrind's do, and suppressions are
			 * read as deep (lib/suppress.c). */
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 1 || n > 500)
				return bad_usage(NULL, "%s: expected 1 to 500", a);
			if (n > MC_MAX_DEPTH + 1)
				return bad_usage(NULL, "%s: memcheck keeps at most %d frames below the "
						 "allocation function, which valgrind counts as one of "
						 "the N: at most --num-callers=%d", a, MC_MAX_DEPTH,
						 MC_MAX_DEPTH + 1);
			snprintf(depth, sizeof depth, "%ld", n - 1);
		} else if ((v = value_of(a, "--error-exitcode"))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 0 || n > 255)
				return bad_usage(NULL, "%s: expected 0 to 255", a);
			snprintf(code, sizeof code, "%ld", n);
		} else if ((v = value_of(a, "--suppressions"))) {
			char *abs = realpath(v, NULL);
			if (!abs) {
				say("--suppressions=%s: %s", v, strerror(errno));
				return EXIT_USAGE;
			}
			/* read as the library will: a directory or a file that
			 * does not parse stops valgrind before the run ("FATAL:
			 * suppressions file ... is a directory"); here the program
			 * ran and each process said it (harden46) */
			char err[1024];
			struct mc_supps *s = mc_supp_new();
			bool ok = s && mc_supp_load(s, abs, err, sizeof err);
			mc_supp_free(s);
			if (!ok) {
				say("--suppressions=%s: %s", v, s ? err : "out of memory");
				free(abs);
				return EXIT_USAGE;
			}
			join_colon(&supp, abs);
			/* valgrind's used_suppression lines name the file as
			 * given ("my.supp:2"); the library reads it by its
			 * absolute path, which a chdir does not lose */
			join_colon(&supp_names, v);
			free(abs);
		} else if ((v = value_of(a, "--fullpath-after"))) {
			/* each prefix ended by ':', an empty one too (a path shown
			 * whole); valgrind tries them in order */
			if (strchr(v, ':'))
				return bad_usage(NULL, "%s: a prefix without ':' expected", a);
			char *joined = xasprintf("%s%s:", fullpath ? fullpath : "", v);
			free(fullpath);
			fullpath = joined;
		} else if ((v = value_of(a, "--alloc-fn"))) {
			add_alloc_fn(v);
		} else if ((v = value_of(a, "--gen-suppressions"))) {
			/* valgrind takes no, yes and all ("Unknown option"
			 * otherwise): sometimes was taken as yes (harden46) */
			if (strcmp(v, "no") && strcmp(v, "yes") && strcmp(v, "all"))
				return bad_usage(NULL, "%s: expected no, yes or all", a);
			gen = strcmp(v, "no") != 0;
		} else if ((v = value_of(a, "--xml"))) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return bad_usage(NULL, "%s: expected yes or no", a);
			xml = v[0] == 'y';
		} else if ((v = value_of(a, "--xml-file"))) {
			free(xml_file);
			free(xml_fd);
			xml_fd = NULL;
			if (!(xml_file = log_pattern("--xml-file", v)))
				return EXIT_USAGE;
		} else if ((v = value_of(a, "--xml-fd"))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 0 || n > INT_MAX)
				return bad_usage(NULL, "%s: expected a descriptor's number", a);
			free(xml_file);
			free(xml_fd);
			xml_file = NULL;
			xml_fd = xasprintf("%ld", n);
		} else if ((v = value_of(a, "--xml-socket"))) {
			return bad_usage(NULL, "%s: memcheck writes valgrind's XML to --xml-file "
					 "or --xml-fd, not to a socket", a);
		} else if (!is_ignored(a)) {
			return bad_usage(NULL, "unknown option %s (valgrind's command line: "
					 "memcheck [VALGRIND OPTIONS] PROGRAM [ARGS])", a);
		}
	}
	if (i >= argc)
		return bad_usage(NULL, "no program to run after the options");
	if (verbosity < 1)
		text = "fail";
	/* valgrind's own refusal: --xml=yes needs a destination */
	if (xml && !xml_file && !xml_fd)
		return bad_usage(NULL, "--xml=yes has been specified, but there is no XML output "
				 "destination: give --xml-file=FILE or --xml-fd=N");
	if (xml) {
		/* valgrind under --xml=yes lists the records of the kinds
		 * --show-leak-kinds names whatever --leak-check says, and its
		 * text says nothing */
		scan = NULL;
		leak_check = "full";
		text = "fail"; /* the library's valgrind text then says nothing */
	}
	char *lib = find_library();
	if (!lib)
		return EXIT_USAGE;
	char *preload = preload_as_valgrinds(lib);
	setenv("LD_PRELOAD", preload, 1);
	if (text)
		put_setting("TEXT", text);
	if (scan)
		put_setting("SCAN", scan);
	/* valgrind's default --num-callers=12, unless the caller set
	 * MEMCHECK_STACK_DEPTH itself */
	if (depth[0])
		put_setting("STACK_DEPTH", depth);
	else
		keep("STACK_DEPTH", "11");
	if (heuristics)
		put_setting("LEAK_HEURISTICS", heuristics);
	/* valgrind's default --error-exitcode=0, unless the caller set
	 * MEMCHECK_EXITCODE itself */
	if (code[0])
		put_setting("EXITCODE", code);
	else
		keep("EXITCODE", "0");
	if (supp) {
		put_setting("SUPPRESSIONS", supp);
		put_setting("SUPP_NAMES", supp_names); /* vgtext.c's, no option */
	}
	if (fullpath)
		put_setting("VALGRIND_FULLPATH", fullpath);
	else
		unsetenv("MEMCHECK_VALGRIND_FULLPATH");
	put_setting("VALGRIND_TEXT", leak_check);
	put_setting("VALGRIND_RESOLUTION", resolution);
	if (xml && !xml_setup(xml_file, xml_fd, argv, i))
		return EXIT_USAGE;
	else if (!xml)
		unsetenv("MEMCHECK_VALGRIND_XML");
	set_kinds("VALGRIND_SHOW", show);
	set_kinds("VALGRIND_ERRORS", errors);
	put_setting("VALGRIND_CHILD_SILENT", child_silent ? "1" : "0");
	put_setting("VALGRIND_ERROR_LIMIT", error_limit ? "1" : "0");
	/* valgrind's: the list where -s or -v asks, its hint at verbosity 1 */
	put_setting("VALGRIND_LIST", list > 0 || (list < 0 && verbosity > 1) ? "list"
				     : verbosity == 1 ? "hint" : "none");
	/* valgrind's default --trace-children=no: the program exec'd below,
	 * in this process, is checked, and no program exec'd after it
	 * (lib/life.c); an outer command line's value is not ours */
	/* (under yes, "PID+": every exec'd program checked, and the one
	 * this process execs known for the head written below, which the
	 * library writes for the others) */
	char pid[24];
	snprintf(pid, sizeof pid, "%ld%s", (long)getpid(), trace_children ? "+" : "");
	put_setting("VALGRIND_CHILDREN", pid);
	/* valgrind checks the program it is given wherever that is
	 * installed, and under --trace-children=yes every program exec'd
	 * below it, /usr/bin/true and sh too: the default rule, which
	 * leaves out the system's programs a test driver runs
	 * (lib/programs.c), is not valgrind's.  --trace-children=no still
	 * leaves out each exec'd one.  A caller's MEMCHECK_PROGRAMS is kept. */
	keep("PROGRAMS", "*");
	/* Each process judged alone, as valgrind judges it: a parent whose
	 * forked child failed keeps its own status (valgrind's parent of a
	 * child that exits with --error-exitcode's N exits 0), unless the
	 * caller set MEMCHECK_ANCESTORS itself. */
	keep("ANCESTORS", "0");
	static const char *const freeres_words[] = { "none", "cxx", "libc", "all" };
	put_setting("VALGRIND_FREERES", freeres_words[freeres]);
	bool quiet = text && !strcmp(text, "fail");
	/* --log-fd=N: the descriptor each process inherits, by its name
	 * (lib/vgtext.c writes no "Parent PID:" to it, as valgrind writes
	 * none to a descriptor); one not open is standard error, as
	 * valgrind falls back to it */
	if (log_fd != 2 && fcntl(log_fd, F_GETFD) < 0) {
		say("--log-fd=%d: descriptor %d is not open; writing to standard error", log_fd,
		    log_fd);
		log_fd = 2;
	}
	if (log_fd != 2)
		log = xasprintf(MC_VG_LOG_FD "%d", log_fd);
	if (log) {
		put_setting("LOG", log);
		if (log_fd != 2 && !quiet)
			header(log_fd, argv + i, false);
		else if (log_fd == 2 && !create_log(log, argv + i, quiet))
			return EXIT_USAGE;
	} else if (!quiet) {
		header(STDERR_FILENO, argv + i, false);
	}
	/* valgrind writes the entries into its log; one file without %p
	 * can take them too */
	if (gen)
		put_setting("GEN_SUPPRESSIONS", log && !strchr(log, '%') ? log : "-");
	/* the library reads the variable up to MC_VALGRIND_MAX and splits
	 * it at every MC_VALGRIND_SEP: a value holding that byte (a file
	 * name, a word of the command line for the XML) would be cut */
	if (cut)
		return bad_usage(NULL, "MEMCHECK_%s: a byte 0x1f in a file name or a word of the "
				 "command line, which memcheck cannot pass on", cut);
	if (strlen(settings) >= MC_VALGRIND_MAX - 1)
		return bad_usage(NULL, "the options and file names are longer than memcheck "
				 "passes on (%d bytes)", MC_VALGRIND_MAX - 2);
	setenv("MEMCHECK_VALGRIND", settings, 1);
	execvp(argv[i], argv + i);
	say("cannot run %s: %s", argv[i], strerror(errno));
	return 127;
}
