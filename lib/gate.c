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
#include <unistd.h>

#include "internal.h"

/* Region ends run one at a time (region.c's region_lock): a flag does. */
static bool loaded;
static struct mc_budget *budget;
static char budget_error[512];      /* why the budget file is unusable */
static struct mc_record *baseline;   /* records of the baseline report */
static size_t nbaseline;

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The baseline report, mapped once; its lines read as regions ask.  A
 * process's region wants the first record of its own program and name,
 * and a suite's baseline holds a record for every process it ran (13 MB
 * for cmark's 695 spec-test processes): parsing all of it at every
 * process's region end cost 130-240 ms a process, most of `memcheck run`'s
 * time under a second allocator.  So a line is parsed only when no
 * earlier one matched, and only if it can name this program (its name
 * followed by the closing quote, where that name needs no escaping in
 * JSON), each at most once.  A malformed line is named once, when it is
 * reached: the regions it would have matched then have no baseline,
 * which their relative limits report. */
static const char *base_text;
static size_t base_len, base_next;   /* the next line not yet looked at */
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

static void load_baseline(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		mc_log("MEMCHECK_BASELINE=%s: %s; relative budget limits have no baseline",
		       path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t len = (size_t)st.st_size;
	const char *text = len ? mc_sys_mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (len && text == MAP_FAILED) {
		mc_log("MEMCHECK_BASELINE=%s: cannot map it: %s", path, strerror(errno));
		return;
	}
	size_t lines = 0;
	for (const char *p = text, *end = text + len; p < end; lines++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	baseline = lines ? mc_map(lines * sizeof *baseline) : NULL;
	if (baseline) {
		base_text = text;
		base_len = len;
		base_give_back();
	} else if (len)
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

/* Parse the lines after base_next that may be this program's into
 * baseline[] until one of region's name is found (true) or none is
 * left. */
static __attribute__((noinline)) bool base_read_until(const char *region, const char *prog)
{
	size_t plen = strlen(prog);
	const char *end = base_text + base_len;
	while (base_next < base_len) {
		const char *p = base_text + base_next;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		base_next += n + 1;
		if (n == 0 || !base_line_may_be(p, n, prog, plen))
			continue;
		char err[256];
		struct mc_record *r = &baseline[nbaseline];
		if (!mc_json_record(p, n, r, err, sizeof err)) {
			if (!base_said) {
				size_t lineno = 1;
				for (const char *c = base_text; c < p; c++)
					lineno += *c == '\n';
				mc_log("%s:%zu: %s; that record is not used as a baseline",
				       mc_opt.baseline, lineno, err);
				base_said = true;
			}
			continue;
		}
		if (strcmp(basename_of(r->program), prog) != 0)
			continue;
		nbaseline++;
		if (strcmp(r->r.name, region) == 0) {
			base_give_back();
			return true;
		}
	}
	base_give_back();
	return false;
}

static void load(void)
{
	if (mc_opt.budget) {
		budget = mc_budget_load(mc_opt.budget, budget_error, sizeof budget_error);
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

/* Does the report line [p, p + n) hold region's record of the program
 * named prog (a basename)?  Read from its first keys alone ("name",
 * "program"), each decoded as JSON: a record's other keys, most of its
 * line, are never looked at. */
static bool gate_line_names(const char *p, size_t n, const char *region, const char *prog)
{
	struct mc_jv obj = { p, p + n, 0 }, v;
	char s[4096];
	if (!mc_jv_get(obj, "name", &v) || !mc_jv_str(v, s, sizeof s) || strcmp(s, region) != 0)
		return false;
	return mc_jv_get(obj, "program", &v) && mc_jv_str(v, s, sizeof s) &&
	       strcmp(basename_of(s), prog) == 0;
}

/* How many records of this program and region MEMCHECK_REPORT's file
 * already holds: this one is the next of them, and memcheck run, compare
 * and gate pair it with the baseline's record of the same rank (tools/
 * records.c).  A suite that runs one program many times (libtiff's
 * tests, tiff2rgba 21 times from 2.4 to 100 MB) compared each of them
 * with the first one before, failing a test over another's figures.
 * Only a regular file is read (a pipe or FIFO's reader is someone
 * else's), only its whole lines (a record being written is not one yet),
 * mapped and given back at once; 0 without a report. */
static __attribute__((noinline)) size_t gate_reported_before(const char *region, const char *prog)
{
	if (!mc_opt.report || !*mc_opt.report)
		return 0;
	int fd = mc_sys_open(mc_opt.report, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return 0;
	struct stat st;
	const char *text = MAP_FAILED;
	size_t len = 0, n = 0;
	if (mc_sys_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		len = (size_t)st.st_size;
		text = mc_sys_mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	mc_sys_close(fd);
	if (text == MAP_FAILED)
		return 0;
	size_t plen = strlen(prog);
	for (const char *p = text, *end = text + len, *nl; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		size_t ln = (size_t)(nl - p);
		n += ln && base_line_may_be(p, ln, prog, plen) && gate_line_names(p, ln, region, prog);
	}
	mc_sys_munmap((void *)text, len);
	return n;
}

/* The same program's region of that name in the baseline report: the
 * record of the rank this one has in its own run's report (the first
 * without a report); with fewer of them in the baseline, counted round,
 * as the CLI pairs a run of several repetitions with one. */
static __attribute__((noinline)) const struct memcheck_result *baseline_for(const char *region)
{
	const char *prog = basename_of(mc_program());
	size_t want = gate_reported_before(region, prog), m = 0;
	for (size_t i = 0; i < nbaseline; i++)
		if (strcmp(baseline[i].r.name, region) == 0 && m++ == want)
			return &baseline[i].r;
	while (base_read_until(region, prog))
		if (m++ == want)
			return &baseline[nbaseline - 1].r;
	if (!m)
		return NULL;
	want %= m;
	for (size_t i = 0; i < nbaseline; i++)
		if (strcmp(baseline[i].r.name, region) == 0 && want-- == 0)
			return &baseline[i].r;
	return NULL;
}

/* A child forked while another thread was reading the files: read them
 * again if it needs them (what was read so far stays mapped, unused). */
void mc_gate_forget(void)
{
	loaded = false;
	budget = NULL;
	budget_error[0] = 0;
	baseline = NULL;
	nbaseline = 0;
	base_text = NULL;
	base_len = base_next = 0;
	base_said = false;
}

static void load_once(void)
{
	if (!loaded) {
		loaded = true;
		load();
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
		size_t len = strlen(res->violations);
		snprintf(res->violations + len, sizeof res->violations - len, "%s%s",
			 len ? "; " : "", budget_error);
		res->pass = 0;
		return;
	}
	if (budget && mc_budget_check(budget, res->name, mc_allocator_name(), res,
				      baseline ? baseline_for(res->name) : NULL, res->violations,
				      sizeof res->violations) > 0)
		res->pass = 0;
}
