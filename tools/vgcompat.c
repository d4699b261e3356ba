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
 *   accepted; options memcheck cannot honour (--xml=yes, another --tool)
 *   are refused, so that a setup does not silently check less than it
 *   says.
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
 * prints anyway. */
static const char *const ignored[] = {
	"--errors-for-leak-kinds",
	"--show-possibly-lost", "--leak-resolution", "--trace-children",
	"--child-silent-after-fork", "--track-origins", "--track-fds",
	"--time-stamp", "--read-var-info", "--read-inline-info", "--demangle",
	"--smc-check", "--max-stackframe", "--main-stacksize", "--malloc-fill",
	"--free-fill", "--keep-stacktraces", "--freelist-vol", "--freelist-big-blocks",
	"--undef-value-errors", "--partial-loads-ok", "--expensive-definedness-checks",
	"--show-mismatched-frees", "--workaround-gcc296-bugs", "--alignment",
	"--redzone-size", "--error-limit", "--show-below-main", "--fullpath-after",
	"--run-libc-freeres", "--run-cxx-freeres", "--soname-synonyms",
	"--fair-sched", "--num-transtab-sectors", "--vex-iropt-register-updates",
	"--xml",
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
 * in.  NULL (said) for another %. */
static char *log_pattern(const char *v)
{
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
		} else if (*p == '%' && p[1] == 'q' && p[2] == '{' && strchr(p, '}')) {
			char *name = xasprintf("%.*s", (int)(strchr(p, '}') - p - 3), p + 3);
			add = getenv(name);
			free(name);
			add = add ? add : "";
			n = strlen(add);
			p = strchr(p, '}');
		} else if (*p == '%') {
			say("--log-file=%s: %%%c is not supported (%%p, %%q{VAR} and %%%% are)", v,
			    p[1] ? p[1] : ' ');
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

/* valgrind's start: "==PID== " lines naming the tool and the command,
 * and an empty one; -q writes none. */
static void header(int fd, char **cmd)
{
	long pid = (long)getpid();
	char *h = xasprintf("==%ld== memcheck %s: valgrind's command line, the program run "
			    "with libmemcheck preloaded (leaks and heap errors)\n==%ld== Command:",
			    pid, MEMCHECK_VERSION, pid);
	for (; *cmd; cmd++) {
		char *more = xasprintf("%s %s", h, *cmd);
		free(h);
		h = more;
	}
	char *all = xasprintf("%s\n==%ld== \n", h, pid);
	mc_write_all(fd, all, strlen(all));
	free(all);
	free(h);
}

/* The file the exec'd program's own process writes: created and
 * emptied now, as valgrind does, with the header unless quiet. */
static void create_log(const char *pattern, char **cmd, bool quiet)
{
	char path[PATH_MAX];
	size_t bad;
	if (mc_text_path(pattern, (long)getpid(), path, sizeof path, &bad) < 0)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		say("--log-file: %s: %s", path, strerror(errno));
		return;
	}
	if (!quiet)
		header(fd, cmd);
	close(fd);
}

/* --show-leak-kinds=all, or a list naming reachable and indirect too:
 * every record listed.  valgrind's default is definite,possible. */
static bool every_kind(const char *v)
{
	return !strcmp(v, "all") || (strstr(v, "reachable") && strstr(v, "indirect"));
}

int cmd_vgcompat(int argc, char **argv)
{
	const char *text = NULL, *track = NULL, *leak_check = "summary";
	bool all_kinds = false;
	char *log = NULL, *supp = NULL, depth[16] = "", code[16] = "";
	bool gen = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			text = "fail";
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			text = "full";
		} else if ((v = value_of(a, "--tool"))) {
			if (strcmp(v, "memcheck") != 0)
				return bad_usage(NULL, "%s: only valgrind's memcheck tool has a "
						 "counterpart here", a);
		} else if ((v = value_of(a, "--log-file"))) {
			free(log);
			if (!(log = log_pattern(v)))
				return EXIT_USAGE;
		} else if ((v = value_of(a, "--log-fd"))) {
			if (strcmp(v, "2") != 0)
				return bad_usage(NULL, "%s: memcheck writes to standard error or "
						 "to --log-file", a);
		} else if ((v = value_of(a, "--leak-check"))) {
			if (!strcmp(v, "no"))
				track = "0";
			else if (strcmp(v, "summary") && strcmp(v, "yes") && strcmp(v, "full"))
				return bad_usage(NULL, "%s: expected no, summary, yes or full", a);
			leak_check = strcmp(v, "yes") && strcmp(v, "full") ? "summary" : "full";
		} else if ((v = value_of(a, "--show-leak-kinds"))) {
			all_kinds = every_kind(v);
		} else if ((v = value_of(a, "--show-reachable"))) {
			all_kinds = !strcmp(v, "yes");
		} else if ((v = value_of(a, "--num-callers"))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 1 || n > 500)
				return bad_usage(NULL, "%s: expected 1 to 500", a);
			snprintf(depth, sizeof depth, "%ld", n > 64 ? 64 : n);
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
			char *joined = supp ? xasprintf("%s:%s", supp, abs) : xstrdup(abs);
			free(abs);
			free(supp);
			supp = joined;
		} else if ((v = value_of(a, "--alloc-fn"))) {
			add_alloc_fn(v);
		} else if ((v = value_of(a, "--gen-suppressions"))) {
			gen = strcmp(v, "no") != 0;
		} else if (!strncmp(a, "--xml", 5) && (v = value_of(a, "--xml")) &&
			   strcmp(v, "no") != 0) {
			return bad_usage(NULL, "%s: memcheck writes no valgrind XML (its JSON "
					 "report: MEMCHECK_REPORT)", a);
		} else if (!is_ignored(a)) {
			return bad_usage(NULL, "unknown option %s (valgrind's command line: "
					 "memcheck [VALGRIND OPTIONS] PROGRAM [ARGS])", a);
		}
	}
	if (i >= argc)
		return bad_usage(NULL, "no program to run after the options");
	char *lib = find_library();
	if (!lib)
		return EXIT_USAGE;
	char *preload = spawn_preload(lib, NULL, true);
	setenv("LD_PRELOAD", preload, 1);
	if (text)
		setenv("MEMCHECK_TEXT", text, 1);
	if (track)
		setenv("MEMCHECK_TRACK", track, 1);
	if (depth[0])
		setenv("MEMCHECK_STACK_DEPTH", depth, 1);
	/* valgrind's default --error-exitcode=0, unless the caller set
	 * MEMCHECK_EXITCODE itself */
	setenv("MEMCHECK_EXITCODE", code[0] ? code : "0", code[0] != 0);
	if (supp)
		setenv("MEMCHECK_SUPPRESSIONS", supp, 1);
	setenv("MEMCHECK_VALGRIND_TEXT",
	       !strcmp(leak_check, "full") && all_kinds ? "all" : leak_check, 1);
	bool quiet = text && !strcmp(text, "fail");
	if (log) {
		setenv("MEMCHECK_LOG", log, 1);
		create_log(log, argv + i, quiet);
	} else if (!quiet) {
		header(STDERR_FILENO, argv + i);
	}
	/* valgrind writes the entries into its log; one file without %p
	 * can take them too */
	if (gen)
		setenv("MEMCHECK_GEN_SUPPRESSIONS", log && !strchr(log, '%') ? log : "-", 1);
	execvp(argv[i], argv + i);
	say("cannot run %s: %s", argv[i], strerror(errno));
	return 127;
}
