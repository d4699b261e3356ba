/*
 * setup.c - what the commands share before anything runs or is read:
 * the allocators memcheck knows by name (lib/allocators.def), the
 * library to preload and files beside this program, the budget file,
 * the baseline allocator and a stored baseline report.
 *
 * Below the commands (run.c, oom.c, gate.c, report.c, vgcompat.c) and
 * vgrun.c, above records.c: see tools/layers.txt.  These pieces lived in
 * run.c, which made every other command call up into `run`.
 *
 * Paths: what the library is given is absolute (each process it loads
 * into may start in another directory), what the user is told is the
 * path as typed: say_path_error puts the typed path back into the
 * library's own messages about the absolute one.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef MC_LIBDIR
#define MC_LIBDIR "/usr/local/lib"
#endif

const struct allocator_info allocators[] = {
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) \
	{ name, soname, package, family, vgpattern, flags },
#include "allocators.def"
#undef MC_ALLOCATOR
};
const size_t nallocators = MC_ARRAY_SIZE(allocators);

const struct allocator_info *allocator_named(const char *name)
{
	for (size_t i = 0; i < nallocators; i++)
		if (strcmp(name, allocators[i].name) == 0)
			return &allocators[i];
	return NULL;
}

void allocator_names(char *buf, size_t size, const char *sep, unsigned flags)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < nallocators && len < size; i++)
		if ((allocators[i].flags & flags) == flags)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? sep : "",
						allocators[i].name);
}

char *absolute(const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
		return xstrdup(path);
	return xasprintf("%s/%s", cwd, path);
}

/* The first of rel[] (paths relative to the directory of this program)
 * that access(2) allows with mode, or NULL. */
char *beside_exe(const char *const rel[], size_t nrel, int mode)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (size_t i = 0; i < nrel; i++) {
		char *p = xasprintf("%s/%s", exe, rel[i]);
		if (access(p, mode) == 0)
			return p;
		free(p);
	}
	return NULL;
}

void add_alloc_fn(const char *pattern)
{
	const char *had = getenv("MEMCHECK_ALLOC_FN");
	char *all = had && *had ? xasprintf("%s,%s", had, pattern) : xstrdup(pattern);
	setenv("MEMCHECK_ALLOC_FN", all, 1);
	free(all);
}

/* The dynamic loader splits LD_PRELOAD at every space and colon (glibc's
 * rtld.c, handle_preload_list) and has no way to quote one: a path with
 * either is preloaded as two names that do not exist, the program runs
 * unmeasured and ld.so's complaint is all the user sees.  NULL where the
 * path can be preloaded, else why not (static). */
const char *unpreloadable(const char *path)
{
	static char why[160];
	const char *c = strpbrk(path, " :");
	if (!c)
		return NULL;
	snprintf(why, sizeof why,
		 "its path has a %s, at which the dynamic loader splits LD_PRELOAD",
		 *c == ' ' ? "space" : "colon");
	return why;
}

/* find_library's answer, if it can be preloaded. */
static char *preloadable(char *lib)
{
	const char *why = unpreloadable(lib);
	if (!why)
		return lib;
	say("cannot preload %s: %s; install memcheck under a path without one, or set "
	    "MEMCHECK_LIBRARY to a copy there", lib, why);
	free(lib);
	return NULL;
}

/* libmemcheck.so: $MEMCHECK_LIBRARY, next to this program (the build
 * tree), ../lib/libmemcheck.so.0 from it (an installed copy), LIBDIR. */
char *find_library(void)
{
	const char *env = getenv("MEMCHECK_LIBRARY");
	if (env && *env) {
		if (access(env, R_OK) != 0) {
			say("MEMCHECK_LIBRARY=%s: %s", env, strerror(errno));
			return NULL;
		}
		return preloadable(absolute(env));
	}
	const char *rel[] = { "libmemcheck.so", "../lib/libmemcheck.so.0" };
	char *p = beside_exe(rel, MC_ARRAY_SIZE(rel), R_OK);
	if (p)
		return preloadable(p);
	p = xasprintf("%s/libmemcheck.so.0", MC_LIBDIR);
	if (access(p, R_OK) == 0)
		return preloadable(p);
	free(p);
	say("cannot find libmemcheck.so: not next to this program, not in %s; "
	    "set MEMCHECK_LIBRARY to its path", MC_LIBDIR);
	return NULL;
}

/* err (lines) with every "abs" in it said as "given": the path the user
 * typed, in messages about the budget file. */
void say_path_error(const char *err, const char *abs, const char *given)
{
	const char *at;
	while ((at = strstr(err, abs))) {
		fprintf(stderr, "%.*s%s", (int)(at - err), err, given);
		err = at + strlen(abs);
	}
	fprintf(stderr, "%s\n", err);
}

/* A FIFO given as the budget is read as cat(1) reads it: memcheck waits
 * for its writer (harden43: a FIFO no process wrote was read as an empty
 * budget, and every region passed).  stream: the text read is left there
 * (stream->s not NULL) for write_budget_copy: the processes run get a
 * copy of what was checked here, whatever the file (a FIFO, <(...),
 * which they cannot read again; a regular file, which may change or go
 * while they run: removed during `memcheck run`, its processes exited 23
 * with "cannot open" while the command said "all clean", harden46). */
struct mc_budget *load_budget(const char *path, char **abs_out, struct mc_buf *stream)
{
	char err[1024];
	char *abs = absolute(path);
	struct mc_buf text = { 0 };
	struct mc_budget *b = mc_budget_load_waiting(abs, &text, err, sizeof err);
	if (b && stream) {
		if (!text.s && mc_buf_room(&text, 1))
			mc_buf_end(&text, text.s); /* an empty file: an empty copy */
		*stream = text;
	} else {
		mc_buf_free(&text);
	}
	if (!b) {
		say_path_error(err, abs, path);
		free(abs);
		return NULL;
	}
	if (abs_out)
		*abs_out = abs;
	else
		free(abs);
	return b;
}

char *write_copy(const char *text, size_t len, const char *dir, const char *file,
		 const char *option, const char *given)
{
	char *copy = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(copy, "wxe");
	bool ok = f && fwrite(text, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		say("cannot write %s, the copy of %s %s: %s", copy, option, given, strerror(errno));
		free(copy);
		copy = NULL;
	}
	return copy;
}

char *write_budget_copy(struct mc_buf *stream, const char *dir, const char *given)
{
	char *copy = write_copy(stream->s, stream->len, dir, "budget", "--budget", given);
	mc_buf_free(stream);
	return copy;
}

/* Records of the baseline allocator in a stored report: those whose
 * allocator is name, or all of them when none is. */
bool read_baseline_file(struct group *g, const char *path, const char *name)
{
	struct recs all = { 0 };
	int bad = recs_read(&all, path, false);
	if (bad != 0) {
		recs_free(&all);
		return false;
	}
	g->label = xstrdup(base_name(path));
	g->baseline = g->stored = true;
	g->nreps = 1;
	g->reps = xcalloc(1, sizeof *g->reps);
	bool any = false;
	for (size_t i = 0; i < all.n; i++)
		any |= strcmp(all.v[i].m.allocator, name) == 0;
	for (size_t i = 0; i < all.n; i++) {
		if (!any || strcmp(all.v[i].m.allocator, name) == 0)
			group_add(g, &all.v[i]);
		else
			rec_free(&all.v[i]);
	}
	free(all.v);
	if (!g->reps[0].n) {
		say("%s: no memcheck records", path);
		return false;
	}
	group_number(g);
	return true;
}

/* The baseline allocator: --baseline, else the budget file's "baseline"
 * line, else glibc.  Both given and different is a usage error: the
 * library would skip relative limits under one and the CLI compare with
 * the other.  Returns 0 or the exit status. */
int pick_baseline(const char *cmd, const char *given, const struct mc_budget *b,
		  const char **out)
{
	const char *file = b ? mc_budget_baseline(b) : NULL;
	*out = given ? given : file ? file : "glibc";
	/* the library reports an allocator by its family (tcmalloc-full as
	 * tcmalloc) */
	const struct allocator_info *a = given ? allocator_named(given) : NULL;
	const char *as_reported = a ? a->family : given;
	if (given && file && strcmp(as_reported, file) != 0)
		return bad_usage(cmd, "--baseline %s, but the budget file's relative limits "
				 "compare with %s (its \"baseline\" line, or glibc without one)",
				 given, file);
	return 0;
}

