/*
 * gate.c - what a region is judged against besides its leaks: the budget
 * file (MEMCHECK_BUDGET) and, for relative limits, the same region in a
 * report of the baseline allocator's run (MEMCHECK_BASELINE).  The budget
 * is read once per process, on the first region end that needs it, into
 * mmap'd memory; the baseline is mapped then, where a relative limit needs
 * it, and its records read as far as a region's own.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Region ends run one at a time (region.c's region_lock): a flag does. */
static bool loaded;
static struct mc_budget *budget;
static char budget_error[512];      /* why the budget file is unusable */

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The baseline report, mapped once; its lines read as regions ask.  A
 * process's region wants the record of its own program and name that
 * has its rank (gate_rank_take), and a suite's baseline holds a record
 * for every process it ran (13 MB for cmark's 695 spec-test processes):
 * parsing all of it at every process's region end cost 130-240 ms a
 * process, most of `memcheck run`'s time under a second allocator.  So
 * the lines are looked at only as far as a region needs, each at most
 * once a process, and only one that can name this program (its name
 * followed by the closing quote, where that name needs no escaping in
 * JSON) and whose "program" key does is kept, by place (base_lines); a
 * region's end reads the "name" key of those, the first of a record, and
 * parses the one record it picks.  field40's ranks parsed every record
 * of the program before the picked one, k records for a suite's k-th
 * run of it (O(n^2) over a suite).  A malformed record is named when it
 * is picked: its region then has no baseline, which its relative limits
 * report. */
struct base_line {
	const char *p;   /* the record: in the file, or glued */
	size_t off, len; /* its (first) line's place in the file */
	uint32_t name;   /* its name's number (base_names), NO_NAME, or 0 where
			  * names are not numbered: its "name" read each time */
	uint8_t keyed;   /* of this process's arguments' key: KEY_* */
	uint8_t filed;   /* and of its arguments' files' key: KEY_* */
};
enum { KEY_UNKNOWN, KEY_YES, KEY_NO };
#define NO_NAME UINT32_MAX
static const char *base_text;
static size_t base_len, base_next;   /* the next line not yet looked at */
static struct base_line *base_lines; /* the lines of this program so far */
static size_t nbase_lines, base_cap;

/* The names of the program's kept lines, numbered (1 on), each by the
 * first line that has it: a region's pick compares numbers.  It parsed
 * each kept line's "name" up to its own (and looked for the key in it)
 * at every region's end: 960 K instructions a region over a process's
 * 1,000 regions of one name, 68% of the process's (callgrind, field43;
 * quadratic in the regions: 3.8 G at 2,000).  Open addressing, mapped
 * as touched, doubled as names come. */
struct base_name {
	uint32_t line1;  /* its first line's index + 1; 0: an empty slot */
	uint32_t h, id;
};
static struct base_name *base_names;
static size_t nbase_names, base_names_cap;
static bool base_names_failed;
static struct mc_record *base_rec;   /* the record picked last */
static bool base_said;

/* The report's pages read, given back after each read: the mapping stays
 * for the process's later regions, and pages of it left present would
 * be the program's RSS (RssFile) for the rest of its run, 16 MB of a
 * 16 MB baseline (tests/test_field.c).  The file's pages stay in the
 * page cache: a later read faults them in again without I/O. */
static void base_give_back(void)
{
	if (base_text)
		madvise((void *)base_text, base_len, MADV_DONTNEED);
}

/* The baseline is mapped, so only a regular file serves; anything else
 * is said with what was expected, each region's relative limits then
 * failing for want of a baseline.  O_NONBLOCK: a FIFO no process writes
 * held the program before its first region's end, for ever (harden42);
 * /dev/zero (size 0) and a directory (mmap's ENODEV) went unnamed.  Out
 * of line, its strings with it: load's are read early (text-order.ld). */
static __attribute__((noinline, cold)) void baseline_unusable(const char *path, mode_t mode,
								int err)
{
	if (err) {   /* it cannot be opened: said here too, the value cut (MC_CUT_VALUE) */
		mc_log("MEMCHECK_BASELINE=%.*s%.*s: %s; relative budget limits have no baseline",
		       MC_CUT_VALUE(path), strerror(err));
		return;
	}
	mc_log("MEMCHECK_BASELINE=%.*s%.*s: %s: expected a JSON Lines report of the baseline "
	       "allocator's run (MEMCHECK_REPORT's file); relative budget limits have no "
	       "baseline", MC_CUT_VALUE(path),
	       S_ISDIR(mode) ? "a directory" : !S_ISREG(mode) ? "not a regular file" : "empty");
}

static void load_baseline(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		baseline_unusable(path, 0, errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t len = (size_t)st.st_size;
	if (!S_ISREG(st.st_mode) || !len) {
		close(fd);
		baseline_unusable(path, st.st_mode, 0);
		return;
	}
	const char *text = mc_sys_mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (text == MAP_FAILED) {
		mc_log("MEMCHECK_BASELINE=%.*s%.*s: cannot map it: %s", MC_CUT_VALUE(path),
		       strerror(errno));
		return;
	}
	/* A record's line holds at least its name and program keys (27
	 * bytes): room for every line, mapped as touched (mc_map populated
	 * it whole before field43: a 16 MB baseline's 9.5 MB, the process's
	 * maximum RSS 28.5 -> 18.8 MB).  The names numbered afresh (here,
	 * not in mc_gate_forget: a forked child's path). */
	base_cap = len / 27 + 1;
	base_lines = mc_map_lazy(base_cap * sizeof *base_lines);
	base_names = NULL;
	nbase_names = base_names_cap = 0;
	base_names_failed = false;
	base_rec = base_lines ? mc_map(sizeof *base_rec) : NULL;
	if (base_rec) {
		base_text = text;
		base_len = len;
	} else
		mc_sys_munmap((void *)text, len);
}

/* Whether a report's line can hold this program's record: the name a
 * writer leaves as it is must be there, closing a string. */
static bool base_line_may_be(const char *line, size_t n, const char *prog, size_t plen)
{
	for (size_t i = 0; i < plen; i++)
		if (prog[i] == '"' || prog[i] == '\\' || (unsigned char)prog[i] < 0x20 ||
		    (unsigned char)prog[i] >= 0x7f)
			return true;
	for (const char *p = line, *end = line + n; p + plen < end;) {
		const char *q = memmem(p, (size_t)(end - p), prog, plen);
		if (!q || q + plen >= end)
			return false;
		if (q[plen] == '"')
			return true;
		p = q + 1;
	}
	return false;
}

/* Is the string of the record's key (its base name where base) want? */
static bool base_key_is(const char *p, size_t n, const char *key, const char *want, bool base)
{
	struct mc_jv obj = { p, p + n, 0 }, v;
	char s[4096];
	return mc_jv_get(obj, key, &v) && mc_jv_str(v, s, sizeof s) &&
	       strcmp(base ? basename_of(s) : s, want) == 0;
}

/* Is the kept line i region's record? */
static bool base_line_named(size_t i, const char *region)
{
	return base_key_is(base_lines[i].p, base_lines[i].len, "name", region, false);
}

static uint32_t name_hash(const char *s)
{
	uint64_t h = mc_fnv1a(s, strlen(s));
	return (uint32_t)(h ^ h >> 32);
}

/* The number of name among the kept lines' names, 0 where none has it;
 * with add, line (kept, of that name) numbers it when new, and 0 says
 * the table could not grow. */
static uint32_t base_name_find(const char *name, uint32_t h, bool add, size_t line)
{
	if (add && (nbase_names + 1) * 2 > base_names_cap) {
		size_t cap = base_names_cap ? base_names_cap * 2 : 1024;
		struct base_name *t = mc_map_lazy(cap * sizeof *t);
		if (!t) {
			base_names_failed = true;
			return 0;
		}
		for (size_t i = 0; i < base_names_cap; i++)
			if (base_names[i].line1) {
				size_t j = base_names[i].h & (cap - 1);
				while (t[j].line1)
					j = (j + 1) & (cap - 1);
				t[j] = base_names[i];
			}
		if (base_names)
			mc_unmap(base_names, base_names_cap * sizeof *base_names);
		base_names = t;
		base_names_cap = cap;
	}
	if (!base_names_cap)
		return 0;
	size_t j = h & (base_names_cap - 1);
	for (; base_names[j].line1; j = (j + 1) & (base_names_cap - 1))
		if (base_names[j].h == h && base_line_named(base_names[j].line1 - 1, name))
			return base_names[j].id;
	if (!add)
		return 0;
	base_names[j] = (struct base_name){ (uint32_t)line + 1, h, (uint32_t)++nbase_names };
	return base_names[j].id;
}

/* The number of kept line i's name: NO_NAME where it has none a region
 * could have, 0 where names cannot be numbered (each read then). */
static uint32_t base_name_number(size_t i)
{
	struct mc_jv obj = { base_lines[i].p, base_lines[i].p + base_lines[i].len, 0 }, v;
	char s[4096];
	if (base_names_failed || i >= UINT32_MAX - 1)
		return 0;
	if (!mc_jv_get(obj, "name", &v) || !mc_jv_str(v, s, sizeof s))
		return NO_NAME;
	return base_name_find(s, name_hash(s), true, i);
}

/* The line number of the file's byte off, in messages. */
static size_t base_lineno(size_t off)
{
	size_t lineno = 1;
	for (const char *c = base_text; c < base_text + off; c++)
		lineno += *c == '\n';
	return lineno;
}

/* A record written in parts (a FIFO's stream saved: lib/textout.c's
 * write_parts, memcheck-report(5)) from the line at off, glued into
 * *out; the offset past its last part in *past.  Its parts must follow
 * one another, as memcheck writes them under the FIFO's lock (the CLI's
 * reader also takes other lines between them); false, said once with
 * the file and line, where one is missing, repeated or out of order:
 * that record is not a baseline. */
static __attribute__((noinline, cold)) bool base_glue(size_t off, struct mc_buf *out,
						      size_t *past)
{
	const char *end = base_text + base_len;
	uint64_t pid = 0, seq = 0, n = 0;
	for (uint64_t want = 1;; want++) {
		const char *p = base_text + off, *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct mc_jv v, part, f, t;
		uint64_t P = 0, S = 0, I = 0, N = 0;
		bool ok = off < base_len && len > 8 && memcmp(p, "{\"part\":", 8) == 0 &&
			  mc_jv_line(p, len, &v) && mc_jv_get(v, "part", &part) &&
			  mc_jv_get(part, "pid", &f) && mc_jv_u64(f, &P) &&
			  mc_jv_get(part, "seq", &f) && mc_jv_u64(f, &S) && mc_jv_get(part, "i", &f) &&
			  mc_jv_u64(f, &I) && mc_jv_get(part, "n", &f) && mc_jv_u64(f, &N) &&
			  mc_jv_get(v, "text", &t) && I == want && I <= N &&
			  (want == 1 || (P == pid && S == seq && N == n));
		char *w = ok ? mc_buf_room(out, (size_t)(t.end - t.p)) : NULL;
		if (!w || !mc_jv_str(t, w, (size_t)(t.end - t.p) + 1)) {
			if (!base_said)
				mc_log("%s:%zu: expected part %llu of a record written in parts%s; that "
				       "record is not used as a baseline", mc_opt.baseline,
				       base_lineno(off), (unsigned long long)want,
				       want > 1 ? " right after the one before it" : " (its first)");
			base_said = true;
			*past = want > 1 ? off : off + len + 1; /* a line that is no part: read */
			return false;
		}
		if (want == 1)
			pid = P, seq = S, n = N;
		mc_buf_end(out, w + strlen(w));
		off += len + 1;
		if (I == N) {
			*past = off;
			return true;
		}
	}
}

/* A line that cannot be a record (base_line_begins_record): the file
 * is read no further, said once.  A 200 MB file of no records
 * was read whole by every process's first relative limit, 0.13 s each
 * and its pages resident meanwhile (the OS's peak 197 MB), and nothing
 * said (harden46). */
static __attribute__((noinline, cold)) void base_not_records(size_t off)
{
	if (!base_said)
		mc_log("MEMCHECK_BASELINE=%.*s%.*s:%zu: not a memcheck record (expected a JSON "
		       "Lines report, MEMCHECK_REPORT's file: a record begins {\"name\":); the file "
		       "is read no further, and the regions whose records lie past it have no "
		       "baseline", MC_CUT_VALUE(mc_opt.baseline), base_lineno(off));
	base_said = true;
	base_next = base_len;
}

/* Whether the n bytes at p, a line, can begin a record: blank, or '{'
 * and then its first key, "name" (memcheck-report(5): the keys in
 * order; json.c reads them so) or a part's "part", spaces allowed; a
 * line cut before it can tell, yes. */
static bool base_line_begins_record(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
		i++;
	if (i == n)
		return true;
	if (p[i++] != '{')
		return false;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
		i++;
	size_t left = n - i < 6 ? n - i : 6;
	return memcmp(p + i, "\"name\"", left) == 0 || memcmp(p + i, "\"part\"", left) == 0;
}

/* The next line after base_next that is a record of this program, kept
 * in base_lines (a record in parts glued, kept in a buffer of its own);
 * false when none is left. */
static bool base_scan_one(const char *prog, size_t plen)
{
	const char *end = base_text + base_len;
	while (base_next < base_len && nbase_lines < base_cap) {
		const char *p = base_text + base_next;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p), off = base_next;
		base_next += n + 1;
		if (unlikely(!base_line_begins_record(p, n))) {
			base_not_records(off);
			break;
		}
		struct mc_buf glued = { 0 };
		if (unlikely(n > 8 && memcmp(p, "{\"part\":", 8) == 0)) {
			bool whole = base_glue(off, &glued, &base_next);
			p = glued.s;
			n = whole && !glued.oom ? glued.len : 0;
		}
		if (n && base_line_may_be(p, n, prog, plen) && base_key_is(p, n, "program", prog, true)) {
			base_lines[nbase_lines] = (struct base_line){ p, off, n, 0, KEY_UNKNOWN, KEY_UNKNOWN };
			base_lines[nbase_lines].name = base_name_number(nbase_lines);
			nbase_lines++;
			return true; /* a glued one's buffer kept for the process */
		}
		mc_buf_free(&glued);
	}
	return false;
}

/* Is the kept line i's record of these arguments (key: 16 hex digits)?
 * Its member "args_hash":"..." found as it is, since its unescaped
 * quotes cannot lie inside a JSON string, and report.c writes it fourth,
 * a few hundred bytes into a line of kilobytes: a fifth of a parse's
 * instructions to the key, and the rest of the line never read. */
static bool base_line_keyed(size_t i, const char *key)
{
	const char *line = base_lines[i].p, *end = line + base_lines[i].len;
	const char *at = memmem(line, base_lines[i].len, "\"args_hash\":\"", 13);
	return at && end - at > 29 && memcmp(at + 13, key, 16) == 0 && at[29] == '"';
}

/* base_line_keyed for key, this process's own (the same at each of its
 * regions' ends: kept with the line). */
static bool base_line_own_key(size_t i, const char *key)
{
	if (base_lines[i].keyed == KEY_UNKNOWN)
		base_lines[i].keyed = base_line_keyed(i, key) ? KEY_YES : KEY_NO;
	return base_lines[i].keyed == KEY_YES;
}

/* Is the kept line i's record of this process's arguments' files' key
 * (files: 16 hex digits) too?  Its "args_files", found as the
 * arguments' key is; kept with the line. */
static __attribute__((noinline, cold)) bool base_line_own_files(size_t i, const char *files)
{
	if (base_lines[i].filed == KEY_UNKNOWN) {
		const char *line = base_lines[i].p, *end = line + base_lines[i].len;
		const char *at = memmem(line, base_lines[i].len, "\"args_files\":\"", 14);
		bool yes = at && end - at > 30 && memcmp(at + 14, files, 16) == 0 && at[30] == '"';
		base_lines[i].filed = yes ? KEY_YES : KEY_NO;
	}
	return base_lines[i].filed == KEY_YES;
}

/* Is kept line i of the name numbered want (region's)? */
static bool base_line_is(size_t i, uint32_t want, const char *region)
{
	uint32_t n = base_lines[i].name;
	return n ? n == want : base_line_named(i, region);
}

/* The kept line of this program's region, among those of the same
 * arguments' key, that has rank r->key among them (counted round where
 * the baseline has fewer); where the baseline has none of that key (a
 * report written before the key, arguments that name a temporary file),
 * the one of rank r->all among all of the program's region, as before
 * the key.  Lines are read further as needed; NULL with none. */
struct gate_rank {
	size_t all, key, files;
};

/* The line of the arguments' files' key (files) among the lines of this
 * program's region (name id) and arguments' key, of rank r among them
 * (counted round): where the process's arguments name files and the
 * baseline has a record of both keys (progname.c says why the files'
 * key is a second key); NULL where it has none.  Every line of the
 * program read first. */
static __attribute__((noinline, cold)) const struct base_line *
base_pick_files(uint32_t id, const char *region, const char *prog, const char *key,
		const char *files, size_t r)
{
	size_t plen = strlen(prog), mf = 0;
	while (base_scan_one(prog, plen))
		;
	if (!id)
		id = base_name_find(region, name_hash(region), false, 0);
#define FILES_LINE(i)                                                                     \
	(base_line_is(i, id, region) && base_line_own_key(i, key) && base_line_own_files(i, files))
	for (size_t i = 0; i < nbase_lines; i++)
		mf += FILES_LINE(i);
	for (size_t i = 0, want = mf ? r % mf : 0; i < nbase_lines && mf; i++)
		if (FILES_LINE(i) && want-- == 0)
			return &base_lines[i];
#undef FILES_LINE
	return NULL;
}

static __attribute__((noinline)) const struct base_line *base_pick(const char *region,
								   const char *prog, const char *key,
								   const char *files, struct gate_rank r)
{
	size_t plen = strlen(prog), m = 0, mk = 0;
	uint32_t h = name_hash(region), id = base_name_find(region, h, false, 0);
	const struct base_line *f;
	if (unlikely(files[0] != '0' || memcmp(files, "0000000000000000", 16) != 0) &&
	    (f = base_pick_files(id, region, prog, key, files, r.files)))
		return f;
	for (size_t i = 0; i < nbase_lines || base_scan_one(prog, plen); i++) {
		/* a line just kept may be the name's first */
		if (!id && base_lines[i].name == nbase_names && nbase_names)
			id = base_name_find(region, h, false, 0);
		if (base_line_is(i, id, region)) {
			m++;
			if (base_line_own_key(i, key) && mk++ == r.key)
				return &base_lines[i];
		}
	}
	if (!m)
		return NULL;
	bool keyed = mk > 0;
	size_t want = keyed ? r.key % mk : r.all % m;
	for (size_t i = 0; i < nbase_lines; i++)
		if (base_line_is(i, id, region) && (!keyed || base_line_own_key(i, key)) &&
		    want-- == 0)
			return &base_lines[i];
	return NULL;
}

static void load(void)
{
	if (mc_opt.budget) {
		budget = mc_budget_load(mc_opt.budget, mc_opt.budget_name, budget_error,
					sizeof budget_error);
		if (!budget) {
			/* One line per error; the first stands for all of them
			 * in each region's violations. */
			for (char *line = budget_error, *nl; *line; line = nl + 1) {
				nl = strchr(line, '\n');
				if (!nl) {
					mc_log("MEMCHECK_BUDGET: %s", line);
					break;
				}
				*nl = 0;
				mc_log("MEMCHECK_BUDGET: %s", line);
				*nl = '\n';
			}
			mc_log("MEMCHECK_BUDGET: every region fails until the file is fixed");
			char *nl = strchr(budget_error, '\n');
			if (nl)
				*nl = 0;
		}
	}
	/* only relative limits read the baseline */
	if (mc_opt.baseline && budget && budget->relative)
		load_baseline(mc_opt.baseline);
}

/* The ranks of this region's record among the records of its program
 * and region in MEMCHECK_REPORT's file, taken at its end: among all of
 * them and among those of its arguments' key (args_key); memcheck run,
 * compare and gate pair it with the baseline's record of the same key
 * and rank (tools/records.c).  A suite that runs one program many times
 * (libtiff's tests, tiff2rgba 21 times from 2.4 to 100 MB) compared each
 * of them with the first one before field40, failing a test over
 * another's figures; and by the rank among all alone, in the order the
 * processes ended, a parallel run paired other inputs' (field41).
 *
 * Counted in a file of its own for each program and region, in the
 * directory REPORT.rank beside the report: a region's end appends its
 * key, a line of 17 bytes, and the offset the append leaves is its rank
 * among all; the lines before it that hold the same key, read back
 * (one pread of 4 KiB up to 240 records), give its rank among those.
 * An append is atomic among processes (ctest -j, make -j, forked
 * children each take their own), and costs seven system calls whatever
 * the report's size.  field40 counted the records already in the report,
 * reading all of it at every region's end: +20 ms a process with a
 * 9.2 MB report, O(n^2) over a suite; and two processes ending together
 * read the same count.  The file's name is the two 64-bit FNV-1a hashes
 * of the program's base name and the region's, then 'f' (session 41's
 * files held a byte a record, session 43's ('k') the arguments' key
 * alone: neither is read as keys).  Since field44 a line holds the
 * arguments' files' key after the arguments' (33 bytes: progname.c), and
 * the lines of both keys give the rank among those.  0s without a
 * report, or where the count cannot be kept (said once). */
#define RANK_LINE 33

static __attribute__((noinline)) struct gate_rank gate_rank_take(const char *region,
								  const char *prog)
{
	struct gate_rank rank = { 0, 0, 0 };
	if (!mc_opt.report || !*mc_opt.report)
		return rank;
	int saved = errno;
	char dir[4096], name[40], line[RANK_LINE + 1];
	int fd = -1, dfd = -1;
	bool counted = false;
	if ((size_t)snprintf(dir, sizeof dir, "%s.rank", mc_opt.report) >= sizeof dir) {
		errno = ENAMETOOLONG;
		goto out;
	}
	snprintf(name, sizeof name, "%016llx%016llxf",
		 (unsigned long long)mc_fnv1a(prog, strlen(prog)),
		 (unsigned long long)mc_fnv1a(region, strlen(region)));
	mc_args_key_at(line);
	*mc_args_files_at(line + 16) = '\n';
	/* not through a symlink planted where the report is (a shared /tmp) */
	int dflags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	dfd = mc_sys_open(dir, dflags, 0);
	if (dfd < 0 && errno == ENOENT && (mkdir(dir, 0755) == 0 || errno == EEXIST))
		dfd = mc_sys_open(dir, dflags, 0);
	if (dfd < 0)
		goto out;
	fd = openat(dfd, name, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0 || write(fd, line, RANK_LINE) != RANK_LINE)
		goto out;
	long end = syscall(SYS_lseek, fd, 0L, SEEK_CUR);
	if (end < RANK_LINE || end % RANK_LINE) {
		errno = EILSEQ; /* not a file of keys: a line written by something else */
		goto out;
	}
	size_t before = (size_t)end - RANK_LINE;
	rank.all = before / RANK_LINE;
	char buf[RANK_LINE * 240];
	for (size_t at = 0; at < before;) {
		size_t want = before - at < sizeof buf ? before - at : sizeof buf;
		long got = mc_sys_pread(fd, buf, want, (off_t)at);
		if (got <= 0 || (size_t)got % RANK_LINE)
			goto out;
		for (long i = 0; i < got; i += RANK_LINE)
			if (memcmp(buf + i, line, 16) == 0) {
				rank.key++;
				rank.files += memcmp(buf + i + 16, line + 16, 16) == 0;
			}
		at += (size_t)got;
	}
	counted = true;
out:
	if (!counted) {
		static bool said;
		if (!said) {
			said = true;
			int e = errno;   /* the path cut, not the line (1 KiB): what it means kept */
			mc_log("MEMCHECK_REPORT=%.*s%.*s: cannot count its records in %.*s%.*s: %s; "
			       "relative limits compare with the baseline's first record of each "
			       "program and region", MC_CUT_VALUE(mc_opt.report), MC_CUT_VALUE(dir),
			       strerror(e));
		}
		rank.all = rank.key = rank.files = 0;
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	errno = saved;
	return rank;
}

/* The ranks of region "process" taken before the program restricted its
 * own opens (mc_gate_prepare), by the process that took them; taken:
 * false when none. */
static struct gate_rank pre_rank;
static bool pre_rank_taken;
static pid_t pre_rank_pid;

/* The same program's region of that name in the baseline report: the
 * record of the same arguments' key and of the rank this one has among
 * those in its own run's report (the first without a report); with
 * fewer of them in the baseline, counted round, as the CLI pairs a run
 * of several repetitions with one (base_pick). */
static __attribute__((noinline)) const struct memcheck_result *baseline_for(const char *region)
{
	const char *prog = basename_of(mc_program());
	struct gate_rank want;
	if (pre_rank_taken && pre_rank_pid == mc_pid() && strcmp(region, "process") == 0) {
		want = pre_rank;
		pre_rank_taken = false;
	} else
		want = gate_rank_take(region, prog);
	char key[17], files[17];
	mc_args_key_at(key);
	mc_args_files_at(files);
	const struct base_line *l = base_pick(region, prog, key, files, want);
	char err[256];
	bool ok = l && mc_json_record(l->p, l->len, base_rec, err, sizeof err);
	if (l && !ok && !base_said) {
		mc_log("%s:%zu: %s; that record is not used as a baseline", mc_opt.baseline,
		       base_lineno(l->off), err);
		base_said = true;
	}
	base_give_back();
	return ok ? &base_rec->r : NULL;
}

/* A child forked while another thread was reading the files: read them
 * again if it needs them (what was read so far stays mapped, unused). */
void mc_gate_forget(void)
{
	loaded = false;
	budget = NULL;
	budget_error[0] = 0;
	base_text = NULL;
	base_len = base_next = 0;
	base_lines = NULL;
	nbase_lines = base_cap = 0;
	base_rec = NULL;
	base_said = false;
}

static void load_once(void)
{
	if (!loaded) {
		loaded = true;
		load();
	}
}

/* Before the program takes away its own right to open files (sandbox.c:
 * xz's Landlock): the budget file and the baseline read now, since the
 * region's end could not open them.  xz's test_files.sh under a budget
 * failed every `xz -t` test, under glibc too: "MEMCHECK_BUDGET:
 * ...: cannot open: Permission denied", and every region failed "until
 * the file is fixed" (field41, xz 28a66a3d); with a relative limit, the
 * rank's count file could not be opened either. */
void mc_gate_prepare(void)
{
	if (!mc_opt.budget && !mc_opt.baseline)
		return;
	load_once();
	/* the arguments' files' key its baseline record is looked for by */
	if (base_text)
		mc_args_files_note();
	/* and the whole process's rank, whose count file could not be
	 * opened then either (a region of another name gets rank 0, said) */
	if (base_text && (!pre_rank_taken || pre_rank_pid != mc_pid())) {
		pre_rank = gate_rank_take("process", basename_of(mc_program()));
		pre_rank_taken = true;
		pre_rank_pid = mc_pid();
	}
}

/* Is a key's field, at offset off of struct memcheck_result, one of the
 * count (blocks, bytes) at offset at? */
static bool in_count(size_t off, size_t at)
{
	return off >= at && off < at + sizeof(struct memcheck_count);
}

/* The figures suppressing an indirectly lost or still reachable record
 * changes: its kind's and suppressed.  Any rule on one, in any section,
 * whether or not the region's name is its (the region is asked before
 * its figures are final), and a budget that every region fails: region.c
 * then matches every record before mc_gate_region. */
bool mc_gate_reads_kept(void)
{
	if (!mc_opt.budget)
		return false;
	load_once();
	if (!budget)
		return true;
	const struct mc_rule *rule = (const struct mc_rule *)budget->rules.s;
	for (uint32_t i = 0; i < budget->nrules; i++) {
		size_t off = mc_keys[rule[i].key].off;
		if (in_count(off, offsetof(struct memcheck_result, indirectly_lost)) ||
		    in_count(off, offsetof(struct memcheck_result, still_reachable)) ||
		    in_count(off, offsetof(struct memcheck_result, suppressed)))
			return true;
	}
	return false;
}

/* Is the n-byte word at s the name of an RSS figure's key? */
static bool names_rss(const char *s, size_t n)
{
	const struct mc_key *k = mc_key_find(s, n);
	return k && (k->off == offsetof(struct memcheck_result, rss_begin) ||
		     k->off == offsetof(struct memcheck_result, rss_end) ||
		     k->off == offsetof(struct memcheck_result, peak_rss));
}

/* Does the budget file name an RSS figure (rss_begin, rss_end,
 * peak_rss) outside its comments: in a rule, absolute or relative (a
 * section's glob that holds the word says yes too: more than needed,
 * never less)?  Comments as budget.c reads them: from a '#' at a line's
 * start or after a space or tab, to the line's end (examples/
 * memcheck.budget's comments name peak_rss where its rules do not).
 * life.c asks at start-up, before footprint.c counts memcheck's own
 * mappings: a budget of leak and allocation rules alone then does not
 * turn on the RSS figures' /proc reads, which nothing would read (bench/
 * suite_test 1 with a budget of "definitely_lost = 0": 96 -> 80 system
 * calls).  Its words are read through a buffer on the stack, nothing
 * mapped or parsed (the file is loaded at the first region's end, as
 * before); a file that cannot be read says yes, as every budget did. */
static __attribute__((noinline)) bool budget_file_names_rss(const char *path);

bool mc_gate_budget_names_rss(void)
{
	return mc_opt.budget && budget_file_names_rss(mc_opt.budget);
}

/* Its read, out of line with the budget's own load (a process without
 * a budget never runs it). */
static __attribute__((noinline)) bool budget_file_names_rss(const char *path)
{
	int saved = errno;
	/* never waiting for a FIFO's writer; read with pread, which
	 * refuses a pipe (ESPIPE: says yes) instead of taking its bytes,
	 * which budget.c's load would then miss (a <(...) budget had no
	 * rule before session 41) */
	int fd = mc_sys_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
	if (fd < 0) {
		errno = saved;
		return true;
	}
	char buf[2048], word[64];
	size_t w = 0;     /* the word so far, when it is short enough to be a key */
	bool long_word = false, found = false, comment = false;
	char prev = '\n';
	long got;
	/* at most what budget.c loads: a file that never ends (/dev/zero,
	 * a device) says yes, and budget.c says it is too large, where the
	 * start-up read here went on for ever before session 41 */
	unsigned long at = 0;
	while (!found && (got = mc_sys_pread(fd, buf, sizeof buf, (off_t)at)) > 0) {
		if ((at += (unsigned long)got) > 16ul << 20) {
			found = true;
			break;
		}
		for (long i = 0; i < got && !found; prev = buf[i++]) {
			char c = buf[i];
			if (comment) {
				comment = c != '\n';
				continue;
			}
			if (c == '#' && (prev == '\n' || prev == ' ' || prev == '\t')) {
				comment = true; /* a word before it ended at the space */
				continue;
			}
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '_' || c == '.') {
				if (w < sizeof word)
					word[w++] = c;
				else
					long_word = true;
				continue;
			}
			found = w && !long_word && names_rss(word, w);
			w = 0;
			long_word = false;
		}
	}
	if (!found && got < 0)
		found = true;
	if (!found && w && !long_word)
		found = names_rss(word, w);
	mc_sys_close(fd);
	errno = saved;
	return found;
}

void mc_gate_region(struct memcheck_result *res)
{
	if (!mc_opt.budget && !mc_opt.baseline)
		return;
	load_once();
	if (mc_opt.budget && !budget) {
		/* Said as the budget not applied, not as one of its lines:
		 * "FILE: cannot open" began with the budget's name as a
		 * broken rule does, and memcheck run, which checks every
		 * record against the budget again and so takes the
		 * library's rule messages out, took this one out too: the
		 * processes exited 23 while it said "all clean" (harden46). */
		size_t len = strlen(res->violations);
		snprintf(res->violations + len, sizeof res->violations - len, "%s%s%s",
			 len ? "; " : "", MC_BUDGET_NOT_APPLIED, budget_error);
		res->pass = 0;
		return;
	}
	if (budget && mc_budget_check(budget, res->name, mc_allocator_name(), res,
				      base_text ? baseline_for(res->name) : NULL, res->violations,
				      sizeof res->violations) > 0)
		res->pass = 0;
}
