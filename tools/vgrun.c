/*
 * vgrun.c - `memcheck run --valgrind`: the command line that runs a
 * command under valgrind with libmemcheck and an allocator preloaded.
 *
 * valgrind replaces malloc in every object by default, memcheck's
 * wrapper included (memcheck then counts nothing).  --soname-synonyms=
 * somalloc=PATTERN limits the replacement to libc and the objects
 * PATTERN names: the allocator's object, so that memcheck's wrapper still
 * runs in front of it and valgrind still serves, and tracks, every
 * block.  For glibc the pattern is nouserintercepts (libc alone).  The
 * shipped suppressions for the live allocator go with it.  Patterns,
 * suppression files and which allocators pull in libstdc++ come from
 * lib/allocators.def.
 *
 * Part of `run`, apart from it so that run.c reads as the runs: it sits
 * in the shared setup layer (tools/layers.txt) beside setup.c, whose
 * beside_exe finds the suppression files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef MC_DATADIR
#define MC_DATADIR "/usr/local/share/memcheck"
#endif

char *vg_find(void)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char *copy = xstrdup(path);
	char *found = NULL;
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/valgrind", *dir ? dir : ".");
		if (access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(copy);
	return found;
}

/* The allocator of lib/allocators.def that label names: the first
 * whose family is in it ("tcmalloc-full", a path to libjemalloc.so.2),
 * or NULL (another object, or glibc). */
static const struct allocator_info *family_of(const char *label)
{
	for (size_t i = 0; i < nallocators; i++)
		if (allocators[i].soname && strstr(label, allocators[i].family))
			return &allocators[i];
	return NULL;
}

/* The somalloc pattern: the allocator's object, or nouserintercepts for
 * glibc.  A path names the object by its file name up to ".so". */
static char *pattern(const char *label, const char *object)
{
	if (!object)
		return xstrdup(allocator_named("glibc")->vgpattern);
	const struct allocator_info *a = family_of(label);
	if (a)
		return xstrdup(a->vgpattern);
	const char *base = strrchr(object, '/');
	base = base ? base + 1 : object;
	size_t n = strcspn(base, ".");
	return xasprintf("*%.*s*", (int)n, base);
}

/* The directory of the shipped suppression files: suppressions/ of the
 * source tree beside build/memcheck, share/memcheck/suppressions of an
 * installed copy, or DATADIR's. */
static char *supp_dir(void)
{
	const char *rel[] = { "../suppressions", "../share/memcheck/suppressions" };
	char *dir = beside_exe(rel, MC_ARRAY_SIZE(rel), R_OK | X_OK);
	if (dir)
		return dir;
	char *p = xasprintf("%s/suppressions", MC_DATADIR);
	if (access(p, R_OK | X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

char **vg_argv(const char *valgrind, const char *label, const char *object,
	       char *const *user, size_t nuser, char *const *cmd)
{
	size_t ncmd = 0;
	while (cmd[ncmd])
		ncmd++;
	char **v = xcalloc(8 + 6 + nuser + ncmd + 1, sizeof *v);
	size_t n = 0;
	v[n++] = xstrdup(valgrind);
	v[n++] = xstrdup("--leak-check=full");
	v[n++] = xstrdup("--show-leak-kinds=all");
	char *pat = pattern(label, object);
	v[n++] = xasprintf("--soname-synonyms=somalloc=%s", pat);
	free(pat);
	/* glibc's, check's and memcheck's own always; libstdc++'s where the
	 * allocator pulls it in (MC_ALLOC_CXX); the allocator's own. */
	const char *files[5] = { "glibc", "check", "memcheck", NULL, NULL };
	const struct allocator_info *a = family_of(label);
	if (a && (a->flags & MC_ALLOC_CXX))
		files[3] = "libstdcxx";
	if (a)
		files[4] = a->family;
	char *dir = supp_dir();
	for (size_t i = 0; dir && i < MC_ARRAY_SIZE(files); i++) {
		if (!files[i])
			continue;
		char *f = xasprintf("%s/%s.supp", dir, files[i]);
		if (access(f, R_OK) == 0)
			v[n++] = xasprintf("--suppressions=%s", f);
		free(f);
	}
	free(dir);
	for (size_t i = 0; i < nuser; i++)
		v[n++] = xstrdup(user[i]);
	for (size_t i = 0; i < ncmd; i++)
		v[n++] = xstrdup(cmd[i]);
	v[n] = NULL;
	return v;
}

void vg_argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
