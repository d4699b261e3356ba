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
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
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
#define FILE_PART ((off_t)16 << 10)

/* The hash of a regular file's size and parts at fd; out of line, in
 * a later group of the code (text-order.ld): a process whose standard
 * input and arguments are no files never runs it.  4 KiB at a time: a
 * region's end may run on a thread's small stack. */
static __attribute__((noinline, cold)) uint64_t file_hash(int fd, off_t size)
{
	char buf[4096];
	uint64_t k = mc_fnv1a(&size, sizeof size);
	off_t tail = size - FILE_PART > FILE_PART ? size - FILE_PART : FILE_PART;
	for (int part = 0; part < 2; part++) {
		off_t at = part ? tail : 0, end = part ? size : FILE_PART;
		while (at < end && at < size) {
			size_t want = end - at < (off_t)sizeof buf ? (size_t)(end - at) : sizeof buf;
			long got = mc_sys_pread(fd, buf, want, at);
			if (got <= 0)
				break;
			k = k * 0x100000001b3ULL ^ mc_fnv1a(buf, (size_t)got);
			at += got;
		}
	}
	return k | 1; /* never 0: a regular file was there */
}

/* A part of the key taken once a process: its value and the process it
 * was taken in (a forked child takes its own). */
struct args_part {
	uint64_t k;
	pid_t pid;
};

static uint64_t stdin_key(void)
{
	static struct args_part memo;
	if (__atomic_load_n(&memo.pid, __ATOMIC_ACQUIRE) == mc_pid())
		return memo.k;
	int saved = errno;
	struct stat st;
	memo.k = mc_sys_fstat(0, &st) == 0 && S_ISREG(st.st_mode) ? file_hash(0, st.st_size) : 0;
	__atomic_store_n(&memo.pid, mc_pid(), __ATOMIC_RELEASE);
	errno = saved;
	return memo.k;
}

void mc_args_stdin_note(void)
{
	(void)stdin_key();
}

/* The arguments' files' key, a second key beside the arguments' own
 * ("args_files"): 0 where no argument names a regular file.  xz's
 * test_compress.sh compresses one input at a dozen settings into one
 * temporary name and runs `xz -cd tmp_comp_<input>` on each: 15
 * processes of one arguments' key, each on other bytes, paired by the
 * order they ended in (field43: 8 such keys of 294 records), as a suite
 * that writes each case into one file name and runs the program on it
 * is.  So what each argument that names a regular file (a path, not an
 * option: not "-...") holds, as standard input's part: size and first
 * and last 16 KiB.  Taken at the process's first record, as the file is
 * then, or before the program takes away its own right to open files
 * (sandbox.c: xz -d's Landlock); a file gone by then (xz without -k
 * removes its input) adds nothing.
 *
 * A second key, not a part of the first: a file argument may hold other
 * bytes in each run for no reason of the case's (a file the processes
 * append to, as a log or a ready file; an output the program writes
 * with its time in it), and a key of both would then leave those
 * records without a baseline record of their key where the arguments'
 * alone paired them.  Pairing (tools/pairing.c, gate.c) takes this key
 * only where the other report has a record of both keys, else the
 * arguments' alone, as before.
 *
 * At most ARGS_FILES files of the first ARGS_LOOKED arguments: a stat
 * a path-like argument, a process with none (options alone) asks the
 * kernel nothing.  A device or a FIFO is never opened (a tape rewinds
 * at its close, a FIFO's writer would see a reader). */
#define ARGS_FILES 8
#define ARGS_LOOKED 64

/* Was the file changed at or after since (the process's start on the
 * files' clock)? */
static inline bool changed_since(const struct stat *st, double since)
{
	return (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec * 1e-9 >= since;
}

/* The part of the argument s, where it names a regular file that was
 * not changed since the process started (since); else 0. */
static __attribute__((noinline, cold)) uint64_t arg_file_key(const char *s, double since)
{
	struct stat st;
	if (!*s || *s == '-' || stat(s, &st) != 0 || !S_ISREG(st.st_mode) ||
	    changed_since(&st, since))
		return 0;
	int fd = mc_sys_open(s, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	uint64_t k = mc_sys_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !changed_since(&st, since)
			     ? file_hash(fd, st.st_size)
			     : 0;
	mc_sys_close(fd);
	return k;
}

static __attribute__((noinline, cold)) uint64_t files_key(void)
{
	static struct args_part memo;
	if (__atomic_load_n(&memo.pid, __ATOMIC_ACQUIRE) == mc_pid())
		return memo.k;
	int saved = errno;
	const char *lo = mc_args_first, *hi = mc_args_last;
	uint64_t k = 0;
	int files = 0, looked = 0;
	/* the process's start on the real-time clock, which files' times
	 * are taken from (coarse: a time a tick before the change) */
	struct timespec now;
	double t0 = mc_process_t0 ? mc_process_t0() : 0, since = 1e300;
	if (t0 > 0 && syscall(SYS_clock_gettime, CLOCK_REALTIME, &now) == 0)
		since = (double)now.tv_sec + now.tv_nsec * 1e-9 - (mc_now() - t0);
	/* laid out by the kernel, one after another; else the first and
	 * the last alone (mc_args_note) */
	for (const char *s = lo; s && files < ARGS_FILES && looked++ < ARGS_LOOKED;
	     s = hi < lo ? (s == lo && hi ? hi : NULL) : s < hi ? s + strlen(s) + 1 : NULL) {
		uint64_t f = arg_file_key(s, since);
		/* which argument it is counts: a b is not b a */
		k = (k ^ f) * 0x100000001b3ULL + (uint64_t)looked;
		files += f != 0;
	}
	memo.k = files ? k | 1 : 0;
	__atomic_store_n(&memo.pid, mc_pid(), __ATOMIC_RELEASE);
	errno = saved;
	return memo.k;
}

void mc_args_files_note(void)
{
	(void)files_key();
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

/* k as 16 hex digits and a NUL at w (17 bytes). */
static char *key_at(char *w, uint64_t k)
{
	unsigned char be[8];
	for (int i = 0; i < 8; i++)
		be[i] = (unsigned char)(k >> (56 - 8 * i));
	return mc_hex(w, be, sizeof be);
}

char *mc_args_key_at(char *w)
{
	return key_at(w, args_key());
}

char *mc_args_files_at(char *w)
{
	return key_at(w, mc_args_first ? files_key() : 0);
}

/* ,"args_files":"<16 hex digits>", where an argument names a file */
static __attribute__((noinline, cold)) void files_json(struct mc_buf *b)
{
	char *w = mc_buf_room(b, 15 + 17);
	if (!w)
		return;
	__builtin_memcpy(w, ",\"args_files\":\"", 15);
	w = mc_args_files_at(w + 15);
	*w++ = '"';
	mc_buf_end(b, w);
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
	if (mc_args_first && files_key())
		files_json(b);
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

/* ---- MEMCHECK_PROGRAMS's shell patterns, matched without fnmatch ----
 *
 * fnmatch(pattern, subject, 0) as the C library answers it in the C
 * locale (start-up runs before the program's setlocale), in memcheck's
 * own code: the C library's fnmatch and its helpers lie in a 64 KiB
 * block of its code (with the regex engine) that the program rarely
 * runs, and the process verdict runs before footprint.c's first measure,
 * so the 16 pages the kernel mapped around that first call stayed
 * present and counted as the program's (python3 under glibc,
 * MEMCHECK_PROGRAMS='*python3*': peak_rss +48 KiB over its bare run's,
 * the pages at libc's 0xd9000-0xe8fff present in the measured run
 * alone).  tests/unit_util.c holds it to fnmatch over random patterns. */

/* Does [:name:] (n bytes) hold c?  -1: no such class, which fnmatch
 * answers with no match. */
static int class_holds(const char *name, size_t n, unsigned c)
{
	static const char names[][7] = { "alnum", "alpha", "blank", "cntrl", "digit", "graph",
					 "lower", "print", "punct", "space", "upper", "xdigit" };
	bool up = c >= 'A' && c <= 'Z', low = c >= 'a' && c <= 'z', dig = c >= '0' && c <= '9';
	bool print = c >= 0x20 && c < 0x7f;
	bool hold[] = { up || low || dig, up || low, c == ' ' || c == '\t', c < 0x20 || c == 0x7f,
			dig, print && c != ' ', low, print,
			print && c != ' ' && !up && !low && !dig,
			c == ' ' || (c >= '\t' && c <= '\r'), up,
			dig || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		size_t k = 0;
		while (k < n && k < sizeof names[i] && names[i][k] == name[k])
			k++;
		if (k == n && (k == sizeof names[i] || !names[i][k]))
			return hold[i];
	}
	return -1;
}

/* A bracket's [.x.] or [=x=] or [:name:] at p (after its "[" and the
 * kind): the name's start and length, p moved past the closing "x]";
 * false where nothing closes it before e. */
static bool bracket_name(const char **p, const char *e, char kind, const char **name,
			 size_t *n)
{
	const char *q = *p;
	*name = q;
	while (q + 1 < e && !(q[0] == kind && q[1] == ']')) {
		if (kind == ':' && (*q < 'a' || *q > 'z'))
			return false; /* not a class's name: its '[' a character */
		q++;
	}
	if (q + 1 >= e)
		return false;
	*n = (size_t)(q - *name);
	*p = q + 2;
	return true;
}

/* One character of a bracket at *p, p moved past it: plain, escaped, or
 * a collating symbol [.x.] (one of more than one byte sets *multi); -1
 * where fnmatch finds none (a '\' last, an unclosed "[."). */
static int bracket_char(const char **p, const char *e, bool *multi)
{
	unsigned c = (unsigned char)*(*p)++;
	if (c == '\\') {
		if (*p >= e)
			return -1;
		return (unsigned char)*(*p)++;
	}
	if (c == '[' && *p < e && **p == '.') {
		const char *q = *p + 1, *name;
		size_t n;
		if (!bracket_name(&q, e, '.', &name, &n))
			return -1;
		*p = q;
		*multi |= n != 1;
		return n ? (unsigned char)name[0] : 0;
	}
	return (int)c;
}

/* The bracket expression after a '[' at *pp (e its pattern's end)
 * against c, as fnmatch reads it: 1 c is in it (out, negated) and *pp
 * moved past its ']'; 0 no match at this place (also fnmatch's answer
 * for a class name it does not know, a collating element of more than
 * one byte, an unclosed "[." or "[=", a range to the pattern's end, each
 * met before c matched); 2 no ']' closes it: its '[' is a plain
 * character. */
static int bracket(const char **pp, const char *e, unsigned c)
{
	const char *p = *pp;
	bool neg = p < e && (*p == '!' || *p == '^');
	p += neg;
	bool in = false;
	for (bool first = true;; first = false) {
		if (p >= e)
			return 2;
		if (*p == ']' && !first) {
			*pp = p + 1;
			return in != neg;
		}
		bool bad = false;
		const char *q = p + 2, *name;
		size_t n;
		if (*p == '[' && p + 1 < e && (p[1] == ':' || p[1] == '=')) {
			char kind = p[1];
			if (bracket_name(&q, e, kind, &name, &n)) {
				int h = kind == ':' ? class_holds(name, n, c)
				      : n == 1	    ? (unsigned char)name[0] == c
						    : -1;
				if (h < 0 && !in)
					return 0;
				in |= h > 0;
				p = q;
				continue;
			}
			if (kind == '=')
				return 0;
			/* "[:" that nothing closes: its '[' is a character */
		}
		int lo = bracket_char(&p, e, &bad), hi = lo;
		if (lo >= 0 && p < e && *p == '-' && (p + 1 == e || p[1] != ']')) {
			p++;
			hi = p < e ? bracket_char(&p, e, &bad) : -1;
		}
		if (lo < 0 || hi < 0 || (bad && !in))
			return 0;
		in |= (unsigned)lo <= c && c <= (unsigned)hi;
	}
}

bool mc_glob_match(const char *pat, size_t len, const char *s)
{
	const char *p = pat, *e = pat + len;
	const char *star = NULL, *star_s = NULL; /* the last '*' and where it stands */
	for (;;) {
		if (p < e && *p == '*') {
			while (p < e && *p == '*')
				p++;
			if (p == e)
				return true;
			star = p;
			star_s = s;
			continue;
		}
		bool hit = false;
		const char *next = p + 1;
		if (!*s || p == e) {
			if (!*s && p == e)
				return true;
		} else {
			unsigned c = (unsigned char)*s;
			if (*p == '?')
				hit = true;
			else if (*p == '[') {
				const char *end = p + 1;
				int b = bracket(&end, e, c);
				hit = b == 2 ? c == '[' : b == 1;
				if (b == 1)
					next = end;
			} else if (*p == '\\') {
				if (p + 1 == e)
					return false;
				hit = (unsigned char)p[1] == c;
				next = p + 2;
			} else
				hit = (unsigned char)*p == c;
		}
		if (hit) {
			p = next;
			s++;
			continue;
		}
		if (!star || !*star_s)
			return false;
		p = star;
		s = ++star_s;
	}
}

/* Has the pattern a wildcard or an escape (mc_glob_match's business)? */
static bool has_wildcard(const char *pat, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (pat[i] == '*' || pat[i] == '?' || pat[i] == '[' || pat[i] == '\\')
			return true;
	return false;
}

/* pat[0..len) is exactly s. */
static bool same(const char *pat, size_t len, const char *s)
{
	size_t i = 0;
	while (i < len && pat[i] == s[i])
		i++;
	return i == len && !s[i];
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
 * matched (fnmatch's first call at start-up, MEMCHECK_PROGRAMS=date,
 * bound it and its helpers lazily, 7-8 us of a measured process; no
 * call of the C library's is made here now). */
bool mc_program_matches(const char *patterns, const char *path)
{
	const char *slash = mc_last_slash(path);
	const char *name = slash ? slash + 1 : path;
	for (const char *p = patterns; *p;) {
		size_t len = pattern_len(p);
		if (every_name(p, len))
			return true;
		bool has_slash = false;
		for (size_t i = 0; i < len; i++)
			has_slash |= p[i] == '/';
		const char *subject = has_slash ? path : name;
		if (len > 0 && (has_wildcard(p, len) ? mc_glob_match(p, len, subject)
						     : same(p, len, subject)))
			return true;
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
 * memcheck's own now (gslice.c), called by programs at their C
 * library's speed (the walk's first-byte test).  The entry is the first
 * that begins with name and '=' after it, as the C library's answer. */
const char *mc_env_value(const char *name)
{
	return mc_envp_value(environ, name, 0);
}
