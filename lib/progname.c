/*
 * progname.c - the process's name and MEMCHECK_PROGRAMS's patterns: the
 * program's name as memcheck's lines print it (mc_program), whether an
 * executable's path matches the patterns (mc_program_matches,
 * mc_programs_every), and getenv's answer from memcheck's own walk of
 * environ or an exec's new vector (mc_env_value, mc_envp_value), and
 * the key of its arguments (mc_args_key_at,
 * mc_args_json).  Loops of memcheck's own where the C library's
 * would be bound lazily in a left-out process's start-up.  Which
 * programs the default measures is programs.c's.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

extern char *program_invocation_name;

/* GNU basename's answer (after the last '/', "" after a trailing one),
 * without binding the C library's for this one call of every report. */
static const char *base_name(const char *path)
{
	const char *slash = mc_last_slash(path);
	return slash ? slash + 1 : path;
}

/* argv[0], unless it does not name the file the program was started
 * from (AT_EXECFN): a worker that re-executes its program under another
 * name (Criterion's "boxfort-worker") is named by its file. */
const char *mc_program(void)
{
	const char *argv0 = program_invocation_name;
	const char *file = (const char *)getauxval(AT_EXECFN);
	if (!argv0 || !*argv0)
		return file ? file : "?";
	if (file && strcmp(base_name(argv0), base_name(file)) != 0)
		return file;
	return argv0;
}

/* The key of a process's arguments (argv[1] on, each with its NUL),
 * written in each of its records as "args_hash" (report.c) and looked
 * for in the baseline's (gate.c): a suite's processes of one program told apart by what
 * they were asked to do.  By rank alone (the k-th json_process record
 * of a run paired with the baseline's k-th) a parallel run paired them
 * by the order they happened to end in: under ctest -j2, 194 of
 * jansson's 196 json_process records were paired with another input's
 * baseline record (field41), and xz's pipelines (xz | xz -d) even
 * serially.  The strings as the constructor found them, read where the
 * kernel put them: getopt's permutation of argv[] changes nothing. */
const char *mc_args_first, *mc_args_last;

static uint64_t args_key(void)
{
	const char *lo = mc_args_first, *hi = mc_args_last;
	if (!lo || !hi)
		return 0; /* no arguments */
	if (hi < lo) /* not laid out by the kernel: each string apart */
		return mc_fnv1a(lo, strlen(lo) + 1) ^ (mc_fnv1a(hi, strlen(hi) + 1) * 31);
	return mc_fnv1a(lo, (size_t)(hi + strlen(hi) + 1 - lo));
}

/* The key as 16 hex digits and a NUL at w (17 bytes). */
char *mc_args_key_at(char *w)
{
	uint64_t k = args_key();
	unsigned char be[8];
	for (int i = 0; i < 8; i++)
		be[i] = (unsigned char)(k >> (56 - 8 * i));
	return mc_hex(w, be, sizeof be);
}

void mc_args_json(struct mc_buf *b)
{
	char *w = mc_buf_room(b, 14 + 17);
	if (!w)
		return;
	__builtin_memcpy(w, ",\"args_hash\":\"", 14); /* stores, no read-only data */
	w = mc_args_key_at(w + 14);
	*w++ = '"';
	mc_buf_end(b, w);
}

/* A pattern of '*' alone matches every name (fnmatch without flags:
 * '*' matches '/' too). */
static bool every_name(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != '*')
			return false;
	return len > 0;
}

/* The length of the pattern at p, to the next ':' or the end: a loop of
 * memcheck's own, as the verdict's other string work (programs.c), not
 * strcspn, whose block of the C library's code only memcheck touched. */
static size_t pattern_len(const char *p)
{
	size_t len = 0;
	while (p[len] && p[len] != ':')
		len++;
	return len;
}

const char *mc_last_slash(const char *s)
{
	const char *last = NULL;
	for (; *s; s++)
		if (*s == '/')
			last = s;
	return last;
}

/* Has the pattern a wildcard or an escape (fnmatch's business)? */
static bool has_wildcard(const char *pat)
{
	for (; *pat; pat++)
		if (*pat == '*' || *pat == '?' || *pat == '[' || *pat == '\\')
			return true;
	return false;
}

bool mc_programs_every(const char *patterns)
{
	for (const char *p = patterns; *p;) {
		size_t len = pattern_len(p);
		if (every_name(p, len))
			return true;
		p += len;
		if (*p == ':')
			p++;
	}
	return false;
}

/* A pattern without *, ?, [ or \ is the name itself: compared, not
 * matched.  fnmatch's first call at start-up (MEMCHECK_PROGRAMS=date)
 * bound it and its helpers lazily, 7-8 us of a measured process. */
bool mc_program_matches(const char *patterns, const char *path)
{
	const char *slash = mc_last_slash(path);
	const char *name = slash ? slash + 1 : path;
	char pat[1024];
	for (const char *p = patterns; *p;) {
		size_t len = pattern_len(p);
		if (every_name(p, len))
			return true;
		if (len > 0 && len < sizeof pat) {
			memcpy(pat, p, len);
			pat[len] = 0;
			const char *subject = memchr(pat, '/', len) ? path : name;
			if (has_wildcard(pat) ? fnmatch(pat, subject, 0) == 0
						    : strcmp(pat, subject) == 0)
				return true;
		}
		p += len;
		if (*p == ':')
			p++;
	}
	return false;
}

/* getenv's answer, from a walk of memcheck's own (internal.h's
 * mc_envp_value over environ): the C library's getenv lies in a block of
 * its code that a left-out /bin/true never touched otherwise (a page
 * fault), and its call was one more lazy binding; and getenv is
 * memcheck's own now (gslice.c). */
const char *mc_env_value(const char *name)
{
	return mc_envp_value(environ, name, 0);
}
