/*
 * gate.c - what a region is judged against besides its leaks: the budget
 * file (MEMCHECK_BUDGET) and, for relative limits, the same region in a
 * report of the baseline allocator's run (MEMCHECK_BASELINE).  Both are
 * read once per process, on the first region end that needs them, into
 * mmap'd memory.
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

/* Read a JSON Lines report into baseline[].  A malformed line is named
 * once and skipped: the regions it would have matched then have no
 * baseline, which their relative limits report. */
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
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	lines += len && text[len - 1] != '\n';
	baseline = lines ? mc_map(lines * sizeof *baseline) : NULL;
	int lineno = 0;
	bool said = false;
	for (const char *p = text, *end = text + len; baseline && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char err[256];
		lineno++;
		if (n > 0) {
			if (mc_json_record(p, n, &baseline[nbaseline], err, sizeof err))
				nbaseline++;
			else if (!said) {
				mc_log("%s:%d: %s; that record is not used as a baseline",
				       path, lineno, err);
				said = true;
			}
		}
		p += n + 1;
	}
	if (len)
		mc_sys_munmap((void *)text, len);
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
	if (mc_opt.baseline)
		load_baseline(mc_opt.baseline);
}

/* The same program's region of that name in the baseline report; the
 * first, when the name repeats. */
static const struct memcheck_result *baseline_for(const char *region)
{
	const char *prog = basename_of(mc_program());
	for (size_t i = 0; i < nbaseline; i++)
		if (strcmp(baseline[i].r.name, region) == 0 &&
		    strcmp(basename_of(baseline[i].program), prog) == 0)
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
bool mc_gate_budget_names_rss(void)
{
	if (!mc_opt.budget)
		return false;
	int saved = errno;
	int fd = mc_sys_open(mc_opt.budget, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0) {
		errno = saved;
		return true;
	}
	char buf[2048], word[64];
	size_t w = 0;     /* the word so far, when it is short enough to be a key */
	bool long_word = false, found = false, comment = false;
	char prev = '\n';
	long got;
	while (!found && (got = mc_sys_read(fd, buf, sizeof buf)) > 0) {
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
				      baseline_for(res->name), res->violations,
				      sizeof res->violations) > 0)
		res->pass = 0;
}
