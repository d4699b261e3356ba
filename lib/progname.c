/*
 * progname.c - the process's name and MEMCHECK_PROGRAMS's patterns: the
 * program's name as memcheck's lines print it (mc_program), whether an
 * executable's path matches the patterns (mc_program_matches,
 * mc_programs_every), and getenv's answer from memcheck's own walk of
 * environ (mc_env_value), and the key of its arguments (mc_args_key_at,
 * mc_args_json).  Loops of memcheck's own where the C library's
 * would be bound lazily in a left-out process's start-up.  Which
 * programs the default measures is programs.c's.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
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

/* Standard input's part of the key, where it is a regular file (a
 * suite's `prog < a.json`, CMake's INPUT_FILE): 0 otherwise.  Processes
 * of one program with the same arguments on different inputs were told
 * apart by nothing but the order they ended in: 73 of zlib-ng's 131
 * `minigzip` records under ctest -j2 had one key, each compressing its
 * test's INPUT_FILE (field43).  The file's path is no identity: CMake's and the
 * shell tests' temporary names change from run to run (zlib-ng's
 * `<test>-<RANDOM>.gz`), which would leave every such record without a
 * baseline record of its key; nor are its device and inode.  What is the
 * same in both runs is what the file holds: its size and its first and
 * last 16 KiB (a compressed stream's trailer holds its check), hashed,
 * read with pread (the program's offset untouched), once a process (its
 * pid kept with it: a forked child asks again): one fstat for a process
 * whose standard input is no file. */
#define STDIN_PART ((off_t)16 << 10)

/* The hash of a regular file's size and parts at fd 0; out of line, in
 * a later group of the code (text-order.ld): a process whose standard
 * input is no file never runs it.  4 KiB at a time: a region's end may
 * run on a thread's small stack. */
static __attribute__((noinline, cold)) uint64_t stdin_hash(off_t size)
{
	char buf[4096];
	uint64_t k = mc_fnv1a(&size, sizeof size);
	off_t tail = size - STDIN_PART > STDIN_PART ? size - STDIN_PART : STDIN_PART;
	for (int part = 0; part < 2; part++) {
		off_t at = part ? tail : 0, end = part ? size : STDIN_PART;
		while (at < end && at < size) {
			size_t want = end - at < (off_t)sizeof buf ? (size_t)(end - at) : sizeof buf;
			long got = mc_sys_pread(0, buf, want, at);
			if (got <= 0)
				break;
			k = k * 0x100000001b3ULL ^ mc_fnv1a(buf, (size_t)got);
			at += got;
		}
	}
	return k | 1; /* never 0: a regular file was there */
}

static uint64_t stdin_key(void)
{
	static uint64_t memo;
	static pid_t memo_pid;
	if (memo_pid == mc_pid())
		return memo;
	int saved = errno;
	struct stat st;
	memo = mc_sys_fstat(0, &st) == 0 && S_ISREG(st.st_mode) ? stdin_hash(st.st_size) : 0;
	memo_pid = mc_pid();
	errno = saved;
	return memo;
}

void mc_args_stdin_note(void)
{
	(void)stdin_key();
}

static uint64_t args_key(void)
{
	const char *lo = mc_args_first, *hi = mc_args_last;
	uint64_t in = stdin_key(), k;
	if (!lo || !hi)
		k = 0; /* no arguments */
	else if (hi < lo) /* not laid out by the kernel: each string apart */
		k = mc_fnv1a(lo, strlen(lo) + 1) ^ (mc_fnv1a(hi, strlen(hi) + 1) * 31);
	else
		k = mc_fnv1a(lo, (size_t)(hi + strlen(hi) + 1 - lo));
	return in ? (k ^ in) * 0x9e3779b97f4a7c15ULL : k;
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

/* getenv's answer, from a walk of memcheck's own: the C library's getenv
 * lies in a block of its code that a left-out /bin/true never touched
 * otherwise (a page fault), and its call was one more lazy binding; and
 * getenv is memcheck's own now (gslice.c). */
const char *mc_env_value(const char *name)
{
	if (!environ)
		return NULL;
	for (char **e = environ; *e; e++) {
		const char *v = mc_str_after(*e, name);
		if (v && *v == '=')
			return v + 1;
	}
	return NULL;
}
