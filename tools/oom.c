/*
 * oom.c - `memcheck oom`: prove a program's error paths.  Run the command
 * once with every region's allocation calls counted, then again and again
 * failing allocation 1, 2, ... of each region (MEMCHECK_FAIL_REGION,
 * MEMCHECK_FAIL_NTH: see fault.c), on every core, and say for each run
 * whether the program handled the failure, leaked on its error path,
 * crashed, or failed its test.
 *
 * A region is named by its region_id, the same in every run of a
 * deterministic program: a check suite's CK_FORK children, one per test,
 * each have their own.  Where a program has explicit regions, those are
 * swept; the implicit "process" regions only when it has none.
 *
 * Classification of one run, first match wins:
 *   not reached  the targeted call was never made (no failure injected);
 *   timed out    killed here for running past the time allowed to one
 *                run (--run-timeout; a retry loop on OOM);
 *   crashed      killed by a signal, or the process that failed the call
 *                never finished its region and the output says it got a
 *                signal (check's runner lives on and says "Received
 *                signal 11"), or its region's record was written at a
 *                fatal signal (its "signal" key: memcheck writes a
 *                killed process's record before it dies);
 *   leaked       the region left more blocks behind than in the baseline
 *                (whether the command then failed or not);
 *   test failed  exited unlike the baseline run, or the process that
 *                failed the call ended without finishing its region
 *                (_exit: check's forked tests end so when they fail);
 *                unless the region called memcheck_expect_oom(): then
 *                handled (expected);
 *   handled      otherwise.
 *
 * Output: the table and verdicts on stdout once the sweep is over; on a
 * terminal, a progress line on stderr meanwhile, rewritten in place at
 * most twice a second (a long sweep would otherwise say nothing between
 * its first line and its last).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

enum outcome { O_HANDLED, O_EXPECTED, O_LEAKED, O_CRASHED, O_TIMEDOUT, O_FAILED, O_UNREACHED,
	       O_N };
static const char *const outcome_name[O_N] = {
	"handled", "handled (expected)", "leaked", "crashed", "timed out", "test failed",
	"not reached",
};
static const char *const outcome_key[O_N] = {
	"handled", "expected", "leaked", "crashed", "timed_out", "test_failed", "not_reached",
};

/* A frame of a stack as the report writes it. */
struct frame {
	char function[128];
	char file[256];
	long line;
	char object[256];
};

/* A region of the baseline run to sweep. */
struct target {
	char id[64];
	char name[128];
	uint64_t calls;
	uint64_t lost_blocks;     /* in the baseline: definitely and indirectly lost */
	uint64_t left_blocks;     /* in the baseline: every block left, not suppressed */
	uint64_t swept;           /* allocations 1..swept were run */
	uint64_t reached;         /* runs that failed a call of it */
	uint64_t failed;          /* of those, test failed */
};

struct result {
	int target;
	uint64_t index;
	enum outcome o;
	struct frame site;        /* the failed call */
	struct frame leak;        /* where the leaked block was allocated */
	uint64_t leak_bytes;
	uint64_t leak_blocks;     /* lost, or left beyond the baseline's */
	bool leak_lost;           /* lost; else only left behind (reachable) */
	int sig;
	char *stack;              /* the failed call's stack, as JSON */
};

struct oom_opts {
	bool persistent;
	uint64_t max;
	int jobs;
	double timeout;
	double run_timeout;       /* seconds one run may take; 0: from the baseline */
	const char *report;
	char **argv;
	const char *lib, *tmp;
};

/* ---- reading what the library wrote ---------------------------------- */

/* The JSON string that starts at p (at its opening quote) into out. */
static const char *json_string(const char *p, char *out, size_t size)
{
	size_t n = 0;
	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\' && p[1]) {
			p++;
			c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'u' ? '?' : *p;
			if (*p == 'u')
				p += strlen(p) >= 5 ? 4 : 0;
		}
		if (n + 1 < size)
			out[n++] = c;
	}
	out[n] = 0;
	return *p == '"' ? p + 1 : NULL;
}

/* "key":"value" in the text from p up to end (NULL: the whole string). */
static bool find_str(const char *p, const char *end, const char *key, char *out, size_t size)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *at = strstr(p, pat);
	out[0] = 0;
	if (!at || (end && at >= end))
		return false;
	return json_string(at + strlen(pat), out, size) != NULL;
}

static bool find_u64(const char *p, const char *key, uint64_t *out)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *at = strstr(p, pat);
	if (!at || at[strlen(pat)] < '0' || at[strlen(pat)] > '9')
		return false;
	*out = strtoull(at + strlen(pat), NULL, 10);
	return true;
}

/* The end of the JSON value (object or array) that starts at p. */
static const char *value_end(const char *p)
{
	int depth = 0;
	for (; *p; p++) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return p;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				return p + 1;
		}
	}
	return p;
}

static bool system_object(const char *obj)
{
	return !strncmp(obj, "/usr/lib", 8) || !strncmp(obj, "/lib", 4) ||
	       strstr(obj, "libmemcheck") != NULL;
}

/* The frame of a stack (p at its '[') that points into the program, past
 * the allocation functions the library marked (alloc_fn: its
 * MEMCHECK_ALLOC_FN, --alloc-fn, and thin wrappers): the first with a
 * source file outside the system's libraries, else the first outside
 * them (a static library without debug information, such as check's),
 * else the first with a file, else the first. */
static void pick_frame(const char *p, struct frame *out)
{
	memset(out, 0, sizeof *out);
	if (!p || *p != '[')
		return;
	const char *end = value_end(p);
	struct frame best[3];
	bool have[3] = { false, false, false };
	bool lead = true;
	for (const char *f = strchr(p, '{'); f && f < end; f = strchr(value_end(f), '{')) {
		const char *fe = value_end(f);
		const char *afn = strstr(f, "\"alloc_fn\":true");
		const char *next = fe < end ? strchr(fe, '{') : NULL;
		if (lead && afn && afn < fe && next && next < end)
			continue;
		lead = false;
		struct frame fr;
		memset(&fr, 0, sizeof fr);
		find_str(f, fe, "function", fr.function, sizeof fr.function);
		find_str(f, fe, "file", fr.file, sizeof fr.file);
		find_str(f, fe, "object", fr.object, sizeof fr.object);
		const char *l = strstr(f, "\"line\":");
		fr.line = l && l < fe ? strtol(l + 7, NULL, 10) : 0;
		if (fr.file[0] && !system_object(fr.object)) {
			*out = fr;
			return;
		}
		int rank = !system_object(fr.object) ? 0 : fr.file[0] ? 1 : 2;
		if (!have[rank])
			best[rank] = fr, have[rank] = true;
		if (fe >= end)
			break;
	}
	for (int k = 0; k < 3; k++)
		if (have[k]) {
			*out = best[k];
			return;
		}
}

static void site_of(const struct frame *f, char *buf, size_t size)
{
	if (f->file[0])
		snprintf(buf, size, "%s:%ld", short_path(f->file), f->line);
	else if (f->function[0])
		snprintf(buf, size, "%s (%s)", f->function, base_name(f->object));
	else
		snprintf(buf, size, "(no stack)");
}

/* ---- running --------------------------------------------------------- */

struct slot {
	struct child c;
	int job;                  /* index into the job list, -1 when free */
	char *report, *log, *out;
};

/* Start the command with the injection variables, fresh report and log
 * files, stdout and stderr to out. */
static void start(const struct oom_opts *o, struct child *c, const char *report,
		  const char *log, const char *out, const char *region, uint64_t nth)
{
	unlink(report);
	unlink(log);
	char n[32];
	snprintf(n, sizeof n, "%llu", (unsigned long long)nth);
	const struct env_var env[] = {
		{ "MEMCHECK_FAIL_LOG", log },
		{ "MEMCHECK_TEXT", "none" },
		{ "MEMCHECK_FAIL_COUNT", "1" },
		/* libc's debug information costs ~0.1 s a run to load: the
		 * sites that matter are in the program */
		{ "MEMCHECK_SYMBOLIZE_SYSTEM", "0" },
		/* "leaked" is what valgrind would call lost, or more left
		 * behind than the baseline left: a test that exits at its
		 * first error leaves its live objects reachable, by design. */
		{ "MEMCHECK_SCAN", "1" },
		/* The sweep draws no pictures: no sites at the peak, whose
		 * stacks each run would symbolize at its end (a few ms). */
		{ "MEMCHECK_PEAK_SITES", "0" },
		/* A run is judged by its records and by how it would end
		 * without memcheck: a leak must not change its status. */
		{ "MEMCHECK_EXITCODE", "0" },
		{ "MEMCHECK_PROCESS_ID", NULL },
		{ "MEMCHECK_FAIL_SITE", NULL },
		{ "MEMCHECK_FAIL_PROBABILITY", NULL },
		/* the baseline injects nothing (and leaves
		 * MEMCHECK_FAIL_PERSISTENT as it is) */
		{ "MEMCHECK_FAIL_REGION", region },
		{ "MEMCHECK_FAIL_NTH", region ? n : NULL },
		{ "MEMCHECK_FAIL_PERSISTENT", o->persistent ? "1" : "0" },
	};
	/* the baseline's exec error is said; a sweep run's is its own
	 * baseline's (the same command) */
	struct spawn sp = { .argv = o->argv, .preload = o->lib, .report = report,
			    .env = env, .nenv = MC_ARRAY_SIZE(env) - (region ? 0 : 1),
			    .output = out, .own_group = true, .unblock_signals = true,
			    .exec_error = !region };
	spawn_start(&sp, c);
}

/* "Received signal 11" in check's output for a forked test. */
static int signal_in_output(const char *path)
{
	char *text = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "re");
	int sig = 0;
	if (!f)
		return 0;
	ssize_t n;
	while (!sig && (n = getline(&text, &cap, f)) >= 0) {
		const char *at = strstr(text, "eceived signal ");
		if (at)
			sig = atoi(at + 15);
	}
	free(text);
	fclose(f);
	return sig;
}

/* A process region memcheck opened itself: "process", or a forked check
 * test's, named after the test (older reports: by its name). */
static bool implicit(const struct rec *r)
{
	if (strstr(r->line, "\"implicit\":"))
		return strstr(r->line, "\"implicit\":true") != NULL;
	return strcmp(r->m.r.name, "process") == 0;
}

/* ---- the baseline ---------------------------------------------------- */

static uint64_t known(uint64_t v)
{
	return v == MEMCHECK_UNKNOWN ? 0 : v;
}

/* Blocks valgrind would call lost: definitely and indirectly. */
static uint64_t lost_blocks(const struct rec *r)
{
	return known(REC_FIG(r, definitely_lost.blocks)) + known(REC_FIG(r, indirectly_lost.blocks));
}

/* Every block the region left behind that no suppression matched. */
static uint64_t left_blocks(const struct rec *r)
{
	return lost_blocks(r) + known(REC_FIG(r, possibly_lost.blocks)) +
	       known(REC_FIG(r, still_reachable.blocks));
}

struct baseline {
	int exit_code;
	double wall;
	struct target *t;
	size_t nt;
};

static int run_baseline(const struct oom_opts *o, struct baseline *b)
{
	char *report = xasprintf("%s/base.jsonl", o->tmp);
	char *log = xasprintf("%s/base.log", o->tmp);
	char *out = xasprintf("%s/base.out", o->tmp);
	struct child c;
	struct ending e;
	start(o, &c, report, log, out, NULL, 0);
	spawn_wait(&c, true, &e);
	b->wall = e.wall;
	int status = EXIT_PASS;
	if (e.exec_errno) {
		/* As memcheck run has it: a command that cannot be started is
		 * a usage error, not one of the command's. */
		say("oom: cannot run %s: %s", o->argv[0], strerror(e.exec_errno));
		status = EXIT_USAGE;
		goto out;
	}
	if (e.sig || e.exit_code != 0) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = fopen(out, "re");
		if (f) {
			text = xmalloc(65536);
			len = fread(text, 1, 65535, f);
			text[len] = 0;
			fclose(f);
		}
		if (text && len)
			fprintf(stderr, "%s%s", text, text[len - 1] == '\n' ? "" : "\n");
		free(text);
		if (e.sig)
			say("oom: %s was killed by signal %d (SIG%s) without any failure injected; "
			    "fix that first", o->argv[0], e.sig,
			    sig_name(e.sig) ? sig_name(e.sig) : "?");
		else
			say("oom: %s exited with status %d without any failure injected; fix that "
			    "first (its output is above)", o->argv[0], e.exit_code);
		status = EXIT_COMMAND;
		goto out;
	}
	b->exit_code = e.exit_code;
	struct recs rs = { 0 };
	if (recs_read(&rs, report, true) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	bool explicit_regions = false;
	for (size_t i = 0; i < rs.n; i++)
		explicit_regions |= !implicit(&rs.v[i]);
	b->t = xcalloc(rs.n + 1, sizeof *b->t);
	for (size_t i = 0; i < rs.n; i++) {
		const struct rec *r = &rs.v[i];
		struct target t;
		memset(&t, 0, sizeof t);
		if (explicit_regions && implicit(r))
			continue;
		if (!find_str(r->line, NULL, "region_id", t.id, sizeof t.id) ||
		    !find_u64(r->line, "alloc_calls", &t.calls) || !t.calls)
			continue;
		mc_copy_name(t.name, sizeof t.name, r->m.r.name);
		t.lost_blocks = lost_blocks(r);
		t.left_blocks = left_blocks(r);
		b->t[b->nt++] = t;
	}
	recs_free(&rs);
	if (!b->nt) {
		say("oom: %s made no allocation call memcheck could count (is it a "
		    "dynamically linked program?)", o->argv[0]);
		status = EXIT_COMMAND;
	}
out:
	unlink(report);
	unlink(log);
	unlink(out);
	free(report);
	free(log);
	free(out);
	return status;
}

/* ---- one run's verdict ------------------------------------------------ */

/* The allocation site of the record's first leak of the kinds asked for
 * (lost: definitely or indirectly; otherwise any), into out. */
static void leak_record(const char *line, bool lost, struct frame *out)
{
	const char *lk = strstr(line, "\"leaks\":[");
	if (!lk)
		return;
	const char *end = value_end(lk + 8);
	for (const char *k = strstr(lk, "{\"kind\":"); k && k < end;
	     k = strstr(value_end(k), "{\"kind\":")) {
		const char *ke = value_end(k);
		char kind[32];
		find_str(k, ke, "kind", kind, sizeof kind);
		if (lost && strcmp(kind, "definitely_lost") && strcmp(kind, "indirectly_lost"))
			continue;
		const char *stk = strstr(k, "\"stack\":");
		if (stk && stk < ke)
			pick_frame(stk + 8, out);
		return;
	}
}

static void classify(const struct oom_opts *o, const struct baseline *b, struct slot *s,
		     const struct ending *end, struct result *res)
{
	const struct target *t = &b->t[res->target];
	(void)o;
	/* the failed call: the first injection in the targeted region */
	FILE *f = fopen(s->log, "re");
	char *line = NULL;
	size_t cap = 0;
	bool injected = false, expected = false;
	if (f) {
		char id[64];
		while (getline(&line, &cap, f) >= 0) {
			if (!find_str(line, NULL, "region_id", id, sizeof id) || strcmp(id, t->id))
				continue;
			if (strstr(line, "\"oom_expected\":true")) {
				expected = true;
				continue;
			}
			if (injected)
				continue;
			injected = true;
			const char *stk = strstr(line, "\"stack\":");
			if (stk) {
				pick_frame(stk + 8, &res->site);
				const char *e = value_end(stk + 8);
				res->stack = xasprintf("%.*s", (int)(e - (stk + 8)), stk + 8);
			}
		}
		fclose(f);
	}
	bool signaled = end->sig || end->timed_out;
	res->sig = end->sig;
	if (!injected && !signaled) {
		res->o = O_UNREACHED;
		goto out;
	}
	if (signaled) {
		/* memcheck's own kill is no crash of the program's */
		res->o = end->timed_out ? O_TIMEDOUT : O_CRASHED;
		goto out;
	}
	/* the targeted region's record */
	struct recs rs = { 0 };
	const struct rec *r = NULL;
	recs_read(&rs, s->report, true);
	for (size_t i = 0; i < rs.n && !r; i++) {
		char id[64];
		if (find_str(rs.v[i].line, NULL, "region_id", id, sizeof id) && !strcmp(id, t->id))
			r = &rs.v[i];
	}
	int code = end->exit_code;
	bool exp = expected || (r && strstr(r->line, "\"oom_expected\":true"));
	if (!r) {
		/* The process that failed the call never ended its region: a
		 * signal its parent caught (check says "Received signal"), or
		 * an _exit (check's forked tests end so when they fail). */
		res->sig = signal_in_output(s->out);
		res->o = res->sig ? O_CRASHED : expected ? O_EXPECTED : O_FAILED;
	} else if ((res->sig = rec_signal(r->line, strlen(r->line), NULL, 0)) != 0) {
		/* killed (a check test's child, its runner alive): its
		 * record was written at the signal, leaks and all */
		res->o = O_CRASHED;
	} else if (lost_blocks(r) > t->lost_blocks ||
		   (code == b->exit_code && left_blocks(r) > t->left_blocks)) {
		/* Lost blocks are a leak however the test ended.  Reachable
		 * ones only where the test passed as its baseline did: one
		 * that gave up on the failure (exit(1) from inside a test)
		 * leaves its live objects behind by design. */
		res->o = O_LEAKED;
		res->leak_lost = lost_blocks(r) > t->lost_blocks;
		res->leak_blocks = res->leak_lost ? lost_blocks(r) - t->lost_blocks
						  : left_blocks(r) - t->left_blocks;
		res->leak_bytes = res->leak_lost ? known(REC_FIG(r, definitely_lost.bytes)) +
						   known(REC_FIG(r, indirectly_lost.bytes))
						 : known(REC_FIG(r, live_bytes));
		leak_record(r->line, res->leak_lost, &res->leak);
	} else if (code != b->exit_code) {
		res->o = exp ? O_EXPECTED : O_FAILED;
	} else {
		res->o = O_HANDLED;
	}
	recs_free(&rs);
out:
	free(line);
}

/* ---- the summary ----------------------------------------------------- */

struct site_row {
	char site[300];
	char function[128];
	uint64_t n[O_N];
	int example[O_N];         /* a result of each outcome, or -1 */
};

static int row_for(struct site_row **rows, size_t *nrows, const struct result *r)
{
	char site[300];
	site_of(&r->site, site, sizeof site);
	for (size_t i = 0; i < *nrows; i++)
		if (!strcmp((*rows)[i].site, site))
			return (int)i;
	*rows = xrealloc(*rows, (*nrows + 1) * sizeof **rows);
	struct site_row *row = &(*rows)[(*nrows)++];
	memset(row, 0, sizeof *row);
	snprintf(row->site, sizeof row->site, "%s", site);
	snprintf(row->function, sizeof row->function, "%s", r->site.function);
	for (int k = 0; k < O_N; k++)
		row->example[k] = -1;
	return (int)(*nrows - 1);
}

static void json_fputs(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_frame(FILE *f, const char *key, const struct frame *fr)
{
	fprintf(f, ",\"%s\":{\"function\":", key);
	json_fputs(f, fr->function);
	fputs(",\"file\":", f);
	json_fputs(f, fr->file[0] ? short_path(fr->file) : "");
	fprintf(f, ",\"line\":%ld}", fr->line);
}

static bool write_json(const struct oom_opts *o, const struct baseline *b,
		       const struct result *res, size_t nres, const struct site_row *rows,
		       size_t nrows, double secs, const char *stopped)
{
	FILE *f = open_written(o->report);
	if (!f)
		return false;
	fputs("{\"command\":[", f);
	for (int i = 0; o->argv[i]; i++) {
		if (i)
			fputc(',', f);
		json_fputs(f, o->argv[i]);
	}
	fprintf(f, "],\"persistent\":%s,\"runs\":%zu,\"seconds\":%.3f,\"runs_per_second\":%.1f,"
		"\"jobs\":%d,\"stopped\":", o->persistent ? "true" : "false", nres, secs,
		secs > 0 ? (double)nres / secs : 0.0, o->jobs);
	if (stopped)
		json_fputs(f, stopped);
	else
		fputs("null", f);
	fputs(",\"totals\":{", f);
	for (int k = 0; k < O_N; k++) {
		uint64_t n = 0;
		for (size_t i = 0; i < nres; i++)
			n += res[i].o == (enum outcome)k;
		fprintf(f, "%s\"%s\":%llu", k ? "," : "", outcome_key[k], (unsigned long long)n);
	}
	fputs("},\"sites\":[", f);
	for (size_t i = 0; i < nrows; i++) {
		fputs(i ? ",{\"site\":" : "{\"site\":", f);
		json_fputs(f, rows[i].site);
		fputs(",\"function\":", f);
		json_fputs(f, rows[i].function);
		for (int k = 0; k < O_N; k++)
			fprintf(f, ",\"%s\":%llu", outcome_key[k], (unsigned long long)rows[i].n[k]);
		fputc('}', f);
	}
	fputs("],\"regions\":[", f);
	for (size_t i = 0; i < b->nt; i++) {
		fputs(i ? ",{\"region_id\":" : "{\"region_id\":", f);
		json_fputs(f, b->t[i].id);
		fputs(",\"name\":", f);
		json_fputs(f, b->t[i].name);
		fprintf(f, ",\"alloc_calls\":%llu,\"swept\":%llu}", (unsigned long long)b->t[i].calls,
			(unsigned long long)b->t[i].swept);
	}
	fputs("],\"results\":[", f);
	for (size_t i = 0; i < nres; i++) {
		const struct result *r = &res[i];
		fputs(i ? ",{\"region_id\":" : "{\"region_id\":", f);
		json_fputs(f, b->t[r->target].id);
		fputs(",\"region\":", f);
		json_fputs(f, b->t[r->target].name);
		fprintf(f, ",\"index\":%llu,\"outcome\":\"%s\"", (unsigned long long)r->index,
			outcome_key[r->o]);
		char site[300];
		site_of(&r->site, site, sizeof site);
		fputs(",\"site\":", f);
		json_fputs(f, site);
		json_frame(f, "failed_call", &r->site);
		if (r->o == O_LEAKED) {
			json_frame(f, "leak", &r->leak);
			fprintf(f, ",\"leaked_bytes\":%llu", (unsigned long long)r->leak_bytes);
		}
		if (r->o == O_CRASHED) {
			fputs(",\"signal\":", f);
			if (sig_name(r->sig))
				fprintf(f, "\"SIG%s\"", sig_name(r->sig));
			else
				fputs("null", f);
		}
		fprintf(f, ",\"stack\":%s}", r->stack ? r->stack : "[]");
	}
	fputs("]}\n", f);
	bool ok = !ferror(f);
	if (fclose(f) != 0 || !ok) {
		say("oom: cannot write %s", o->report);
		return false;
	}
	return true;
}

/* ---- the summary on stdout ------------------------------------------- */

/* A test failure with nothing lost is the test giving up on an error it
 * did not expect (exit(1), an assertion), as most tests do wherever a
 * call fails: the test cannot handle OOM there, which is its design, not
 * an error path to fix.  Such failures are one line per region in the
 * summary, not a detail each, so that the real bugs (leaks, crashes,
 * hangs) come first. */
static bool cannot_handle(const struct target *t)
{
	return t->failed != 0;
}

/* Real bugs first (leaked, crashed, timed out), by their count, then
 * the rest in the order met. */
static uint64_t rank(const struct site_row *r)
{
	return r->n[O_LEAKED] + r->n[O_CRASHED] + r->n[O_TIMEDOUT];
}

static const struct site_row *sort_rows;
static int by_rank(const void *a, const void *b)
{
	uint64_t x = rank(&sort_rows[*(const size_t *)a]), y = rank(&sort_rows[*(const size_t *)b]);
	if (x != y)
		return x > y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Rows after the problems' shown on the first screen at most. */
#define QUIET_ROWS 20

static void print_row(const struct site_row *r)
{
	uint64_t runs = 0;
	for (int k = 0; k < O_N; k++)
		runs += r->n[k];
	printf("%-40s %-24s %7llu %7llu %7llu %7llu %7llu %7llu\n", r->site, r->function,
	       (unsigned long long)runs, (unsigned long long)(r->n[O_HANDLED] + r->n[O_EXPECTED]),
	       (unsigned long long)r->n[O_LEAKED], (unsigned long long)r->n[O_CRASHED],
	       (unsigned long long)r->n[O_TIMEDOUT], (unsigned long long)r->n[O_FAILED]);
}

static void print_reproduce(const struct oom_opts *o, const struct target *t,
			    const struct result *r)
{
	printf("  reproduce: MEMCHECK_FAIL_REGION='%s' MEMCHECK_FAIL_NTH=%llu%s, or "
	       "gdb: break memcheck_fault\n", t->id, (unsigned long long)r->index,
	       o->persistent ? " MEMCHECK_FAIL_PERSISTENT=1" : "");
}

/* One run of outcome k at row's site, in words. */
static void print_example(const struct oom_opts *o, const struct baseline *b,
			  const struct site_row *row, const struct result *r, int k,
			  double run_limit)
{
	const struct target *t = &b->t[r->target];
	char leak[300];
	printf("\n%s: %s in %s, when allocation %llu of region \"%s\" (%s) failed\n", row->site,
	       outcome_name[k], row->function[0] ? row->function : "?",
	       (unsigned long long)r->index, t->name, t->id);
	if (k == O_LEAKED) {
		site_of(&r->leak, leak, sizeof leak);
		printf("  leaked %llu bytes, allocated at %s (%s): ", (unsigned long long)r->leak_bytes,
		       leak, r->leak.function[0] ? r->leak.function : "?");
		if (r->leak_lost)
			printf("%llu block%s lost\n", (unsigned long long)r->leak_blocks,
			       r->leak_blocks == 1 ? "" : "s");
		else
			printf("%llu block%s more than the baseline run left, still reachable\n",
			       (unsigned long long)r->leak_blocks, r->leak_blocks == 1 ? "" : "s");
	} else if (k == O_CRASHED) {
		if (sig_name(r->sig))
			printf("  killed by SIG%s after the call failed\n", sig_name(r->sig));
		else
			printf("  the process never finished the region after the call failed "
			       "(killed)\n");
	} else if (k == O_TIMEDOUT) {
		printf("  still running %.1f s after it started: killed (--run-timeout)\n",
		       run_limit);
	}
	print_reproduce(o, t, r);
}

/* The table, real bugs first; an example of each problem per site; the
 * regions whose test cannot handle OOM, one line each. */
static void print_sweep(const struct oom_opts *o, const struct baseline *b,
			const struct result *res, const struct site_row *rows, size_t nrows,
			double run_limit)
{
	size_t *order = xcalloc(nrows + 1, sizeof *order);
	for (size_t i = 0; i < nrows; i++)
		order[i] = i;
	sort_rows = rows;
	qsort(order, nrows, sizeof *order, by_rank);
	printf("%-40s %-24s %7s %7s %7s %7s %7s %7s\n", "failed call", "function", "runs",
	       "handled", "leaked", "crashed", "timeout", "failed");
	size_t shown = 0, quiet = 0;
	for (size_t i = 0; i < nrows; i++) {
		const struct site_row *r = &rows[order[i]];
		if (rank(r) || shown < QUIET_ROWS) {
			print_row(r);
			shown += rank(r) == 0;
		} else {
			quiet++;
		}
	}
	if (quiet)
		printf("... %zu more sites with no leak, crash or hang (--report lists every "
		       "site)\n", quiet);
	for (size_t i = 0; i < nrows; i++) {
		const struct site_row *row = &rows[order[i]];
		for (int k = O_LEAKED; k <= O_TIMEDOUT; k++) {
			if (row->example[k] < 0)
				continue;
			print_example(o, b, row, &res[row->example[k]], k, run_limit);
		}
	}
	bool said = false;
	for (size_t i = 0; i < b->nt; i++) {
		const struct target *t = &b->t[i];
		if (!cannot_handle(t))
			continue;
		size_t first = 0;
		while (res[first].target != (int)i || res[first].o != O_FAILED)
			first++;
		if (!said)
			printf("\nthe test cannot handle OOM: it failed, nothing lost (it gives up "
			       "at an error it did not expect; failed column):\n");
		said = true;
		printf("  region \"%s\" (%s): at %llu of the %llu calls failed in it; a test "
		       "that may fail on OOM says so with memcheck_expect_oom()\n",
		       t->name, t->id, (unsigned long long)t->failed,
		       (unsigned long long)t->reached);
		char site[300];
		site_of(&res[first].site, site, sizeof site);
		printf("  first at allocation %llu, %s (%s)\n", (unsigned long long)res[first].index,
		       site, res[first].site.function[0] ? res[first].site.function : "?");
		print_reproduce(o, t, &res[first]);
	}
	free(order);
}

/* ---- the command ----------------------------------------------------- */

static const struct option oom_options[] = {
	{ "persistent", no_argument, NULL, 'p' },
	{ "max", required_argument, NULL, 'm' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "timeout", required_argument, NULL, 't' },
	{ "run-timeout", required_argument, NULL, 'T' },
	{ "report", required_argument, NULL, 'r' },
	{ "alloc-fn", required_argument, NULL, 'A' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool parse_count(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || isspace((unsigned char)*s) || v == 0)
		return false;
	*out = v;
	return true;
}

static volatile sig_atomic_t interrupted;
static void on_int(int sig)
{
	interrupted = sig;
}

/* The progress line on a terminal: runs done of those planned, their
 * rate, the problems so far (erased after the sweep). */
static void progress(size_t done, uint64_t planned, double secs, const uint64_t *seen)
{
	fprintf(stderr, "\rmemcheck oom: %zu of %llu runs, %.1f s (%.1f runs/s): %llu leaked, "
		"%llu crashed, %llu test failed\033[K", done, (unsigned long long)planned, secs,
		secs > 0 ? (double)done / secs : 0.0, (unsigned long long)seen[O_LEAKED],
		(unsigned long long)seen[O_CRASHED], (unsigned long long)seen[O_FAILED]);
}

#define OOM_MAX_SECONDS (365 * 24 * 3600)

static int oom_option(void *opts, int c, char *arg)
{
	struct oom_opts *o = opts;
	uint64_t v;
	switch (c) {
	case 'p': o->persistent = true; break;
	case 'm':
		if (!parse_count(arg, &o->max))
			return bad_usage("oom", "--max %s: expected a positive integer", arg);
		break;
	case 'j':
		if (!parse_count(arg, &v) || v > 1024)
			return bad_usage("oom", "--jobs %s: expected 1 to 1024", arg);
		o->jobs = (int)v;
		break;
	case 't':
	case 'T': {
		char *end;
		double secs = strtod(arg, &end);
		/* inf and 1e400 were taken, and made a wait's timespec from
		 * a double no time_t holds (harden46) */
		if (end == arg || *end || !(secs > 0) || !(secs <= OOM_MAX_SECONDS) ||
		    isspace((unsigned char)*arg))
			return bad_usage("oom", "%s %s: expected seconds, more than 0 and at most "
					 "%d (a year)", c == 't' ? "--timeout" : "--run-timeout", arg,
					 OOM_MAX_SECONDS);
		*(c == 't' ? &o->timeout : &o->run_timeout) = secs;
		break;
	}
	case 'r': o->report = arg; break;
	case 'A': add_alloc_fn(arg); break;
	}
	return 0;
}

int cmd_oom(int argc, char **argv)
{
	struct oom_opts o = { .max = UINT64_MAX, .jobs = 0, .timeout = 0 };
	int rc = parse_options("oom", argc, argv, "+:j:h", oom_options, oom_option, &o,
			       "no command to run");
	if (rc)
		return rc < 0 ? EXIT_PASS : rc;
	o.argv = argv + optind;
	if (!o.jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.jobs = n > 0 ? (int)n : 1;
	}
	if (o.report && !writable_later("oom", "report", o.report))
		return EXIT_USAGE;
	char *lib = find_library();
	if (!lib)
		return EXIT_USAGE;
	/* An allocator the user preloads (LD_PRELOAD=libmimalloc.so.2
	 * memcheck oom ...) comes after libmemcheck, as memcheck run puts it. */
	char *preload = spawn_preload(lib, NULL, true);
	o.lib = preload;
	const char *tmpbase = getenv("TMPDIR");
	char *tmp = xasprintf("%s/memcheck-oom.XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
	if (!mkdtemp(tmp))
		die("cannot make a temporary directory %s: %s", tmp, strerror(errno));
	o.tmp = tmp;

	struct baseline b = { 0 };
	int status = run_baseline(&o, &b);
	struct result *res = NULL;
	size_t nres = 0, cap = 0;
	struct slot *slots = NULL;
	struct site_row *rows = NULL;
	size_t nrows = 0;
	if (status != EXIT_PASS)
		goto out;

	/* the jobs: every allocation of every target, up to --max */
	uint64_t total = 0, planned = 0;
	for (size_t i = 0; i < b.nt; i++) {
		total += b.t[i].calls;
		planned += b.t[i].calls < o.max ? b.t[i].calls : o.max;
	}
	fprintf(stderr, "memcheck oom: %zu region%s, %llu allocation calls; %llu runs on %d "
		"job%s (baseline run %.3f s)\n", b.nt, b.nt == 1 ? "" : "s",
		(unsigned long long)total, (unsigned long long)planned, o.jobs,
		o.jobs == 1 ? "" : "s", b.wall);

	/* A run may hang on OOM (a retry loop): kill it well after the
	 * baseline's time. */
	double run_limit = o.run_timeout ? o.run_timeout : b.wall * 20 + 10;
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	spawn_catch_signals(true, on_int);

	slots = xcalloc((size_t)o.jobs, sizeof *slots);
	for (int i = 0; i < o.jobs; i++) {
		slots[i].job = -1;
		slots[i].report = xasprintf("%s/run%d.jsonl", tmp, i);
		slots[i].log = xasprintf("%s/run%d.log", tmp, i);
		slots[i].out = xasprintf("%s/run%d.out", tmp, i);
	}
	size_t cur_t = 0;
	uint64_t cur_n = 1;
	int running = 0;
	double t0 = mc_now(), shown = 0;
	bool tty = isatty(2);
	uint64_t seen[O_N] = { 0 };
	const char *stopped = NULL;
	for (;;) {
		/* start jobs while there are free slots and work */
		while (!stopped && running < o.jobs && cur_t < b.nt) {
			if (o.timeout && mc_now() - t0 >= o.timeout) {
				stopped = "timeout";
				break;
			}
			if (interrupted) {
				stopped = "interrupted";
				break;
			}
			struct target *t = &b.t[cur_t];
			uint64_t limit = t->calls < o.max ? t->calls : o.max;
			if (cur_n > limit) {
				cur_t++;
				cur_n = 1;
				continue;
			}
			int k = 0;
			while (slots[k].job >= 0)
				k++;
			if (nres == cap) {
				cap = cap ? cap * 2 : 256;
				res = xrealloc(res, cap * sizeof *res);
			}
			memset(&res[nres], 0, sizeof res[nres]);
			res[nres].target = (int)cur_t;
			res[nres].index = cur_n;
			slots[k].job = (int)nres++;
			start(&o, &slots[k].c, slots[k].report, slots[k].log, slots[k].out, t->id,
			      cur_n);
			t->swept = cur_n;
			cur_n++;
			running++;
		}
		if (!running)
			break;
		/* the progress line: at once, then every half second, while runs
		 * are under way (not where the last reaped run left none running
		 * before the next starts: short runs would never show it) */
		double now = mc_now(), next = now + 1;
		if (tty && (shown == 0 || now - shown >= 0.5)) {
			shown = now;
			progress(nres - (size_t)running, planned, now - t0, seen);
		}
		/* wait for a child, or the next deadline */
		for (int i = 0; i < o.jobs; i++)
			if (slots[i].job >= 0 && slots[i].c.start + run_limit < next)
				next = slots[i].c.start + run_limit;
		if (o.timeout && t0 + o.timeout < next && !stopped)
			next = t0 + o.timeout;
		double wait = next - now;
		if (wait < 0.001)
			wait = 0.001;
		struct timespec ts = { (time_t)wait, (long)((wait - (time_t)wait) * 1e9) };
		sigtimedwait(&chld, NULL, &ts);
		if (interrupted && !stopped)
			stopped = "interrupted";
		now = mc_now();
		for (int i = 0; i < o.jobs; i++) {
			struct slot *s = &slots[i];
			if (s->job < 0)
				continue;
			if (!s->c.timed_out && now - s->c.start > run_limit)
				spawn_timeout(&s->c);
			if (interrupted)
				spawn_kill(&s->c, SIGKILL);
			struct ending e;
			if (!spawn_wait(&s->c, false, &e))
				continue;
			spawn_kill(&s->c, SIGKILL); /* anything the run left behind */
			classify(&o, &b, s, &e, &res[s->job]);
			seen[res[s->job].o]++;
			s->job = -1;
			running--;
		}
	}
	if (tty && shown > 0)
		fputs("\r\033[K", stderr); /* the progress line erased */
	double secs = mc_now() - t0;
	spawn_catch_signals(false, on_int);
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* the table, by the site of the failed call */
	uint64_t count[O_N] = { 0 };
	for (size_t i = 0; i < nres; i++) {
		count[res[i].o]++;
		if (res[i].o == O_UNREACHED)
			continue; /* no failed call to file it under */
		struct target *t = &b.t[res[i].target];
		t->reached++;
		t->failed += res[i].o == O_FAILED;
		int r = row_for(&rows, &nrows, &res[i]);
		rows[r].n[res[i].o]++;
		if (rows[r].example[res[i].o] < 0)
			rows[r].example[res[i].o] = (int)i;
	}
	print_sweep(&o, &b, res, rows, nrows, run_limit);
	printf("\nmemcheck oom: %zu runs in %.1f s (%.1f runs/s, %d job%s): %llu handled "
	       "(%llu expected), %llu leaked, %llu crashed, %llu timed out, %llu test failed, "
	       "%llu not reached\n",
	       nres, secs, secs > 0 ? (double)nres / secs : 0.0, o.jobs, o.jobs == 1 ? "" : "s",
	       (unsigned long long)(count[O_HANDLED] + count[O_EXPECTED]),
	       (unsigned long long)count[O_EXPECTED], (unsigned long long)count[O_LEAKED],
	       (unsigned long long)count[O_CRASHED], (unsigned long long)count[O_TIMEDOUT],
	       (unsigned long long)count[O_FAILED], (unsigned long long)count[O_UNREACHED]);
	for (size_t i = 0; i < b.nt; i++) {
		const struct target *t = &b.t[i];
		if (t->swept >= t->calls)
			continue;
		printf("not reached: region \"%s\" (%s): allocations %llu to %llu of %llu (%s)\n",
		       t->name, t->id, (unsigned long long)t->swept + 1,
		       (unsigned long long)t->calls, (unsigned long long)t->calls,
		       stopped ? (!strcmp(stopped, "timeout") ? "--timeout" : "interrupted")
			       : "--max");
	}
	status = count[O_LEAKED] || count[O_CRASHED] || count[O_TIMEDOUT] || count[O_FAILED]
		 ? EXIT_GATE : EXIT_PASS;
	if (o.report && !write_json(&o, &b, res, nres, rows, nrows, secs, stopped))
		status = EXIT_USAGE;
out:
	for (int i = 0; slots && i < o.jobs; i++) {
		unlink(slots[i].report);
		unlink(slots[i].log);
		unlink(slots[i].out);
		free(slots[i].report);
		free(slots[i].log);
		free(slots[i].out);
	}
	free(slots);
	for (size_t i = 0; i < nres; i++)
		free(res[i].stack);
	free(res);
	free(rows);
	free(b.t);
	rmdir(tmp);
	free(tmp);
	free(lib);
	free(preload);
	/* Interrupted: die of the signal as the sweep's caller expects, once
	 * the runs' files and directory are gone. */
	if (interrupted) {
		signal(interrupted, SIG_DFL);
		raise(interrupted);
	}
	return status;
}
