/*
 * records.c - report files read back, and judged: each record against
 * the budget and the baseline's record pairing.c pairs it with.
 *
 * With several runs, a region's figures under one allocator are the same
 * region's records over the runs: counted figures (calls, bytes, leaks)
 * are judged in every run, and measured ones (peak_rss, rss_*,
 * retained_*, seconds: the budget keys marked measured) on their median
 * over the runs, against the baseline's median, so that a gate does not
 * flip on an allocator that gives memory back on a timer.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- records, compactly (cli.h's struct rec_head) -------------------- */

char rec_none[1];

/* Interned strings: open addressing over FNV-1a, doubled at half full.
 * A suite's records name a few programs, allocators and regions each
 * many times over: one copy each. */
static struct {
	const char **v;
	size_t n, cap;
} interned;

/* The table freed at exit: memory a report's records still point to
 * until the command ends, and valgrind's check of the command (test_cli
 * clean_under_valgrind, every kind an error) wants every block freed. */
static void interned_free(void)
{
	for (size_t i = 0; i < interned.cap; i++)
		free((char *)interned.v[i]);
	free(interned.v);
	memset(&interned, 0, sizeof interned);
}

const char *rec_intern(const char *s)
{
	if (!*s)
		return rec_none;
	if (!interned.cap)
		atexit(interned_free);
	if (2 * (interned.n + 1) > interned.cap) {
		size_t cap = interned.cap ? 2 * interned.cap : 256;
		const char **v = xcalloc(cap, sizeof *v);
		for (size_t i = 0; i < interned.cap; i++) {
			if (!interned.v[i])
				continue;
			size_t j = mc_fnv1a(interned.v[i], strlen(interned.v[i])) & (cap - 1);
			while (v[j])
				j = (j + 1) & (cap - 1);
			v[j] = interned.v[i];
		}
		free(interned.v);
		interned.v = v;
		interned.cap = cap;
	}
	size_t j = mc_fnv1a(s, strlen(s)) & (interned.cap - 1);
	for (; interned.v[j]; j = (j + 1) & (interned.cap - 1))
		if (strcmp(interned.v[j], s) == 0)
			return interned.v[j];
	interned.n++;
	return interned.v[j] = xstrdup(s);
}

/* x's head from a record as lib/json.c read it. */
static void rec_take(struct rec *x, const struct mc_record *m)
{
	memcpy(x->m.r.figs, (const char *)&m->r + REC_FIGS_AT, REC_FIGS_END - REC_FIGS_AT);
	x->m.r.name = rec_intern(m->r.name);
	x->m.r.violations = m->r.violations[0] ? xstrdup(m->r.violations) : rec_none;
	x->m.program = rec_intern(m->program);
	x->m.allocator = rec_intern(m->allocator);
	x->m.pid = m->pid;
	x->m.timed_purge_ms = m->timed_purge_ms;
	x->m.run = m->run;
	x->m.runs = m->runs;
	memcpy(x->m.args_hash, m->args_hash, sizeof x->m.args_hash);
	memcpy(x->m.args_files, m->args_files, sizeof x->m.args_files);
	x->m.exit_status = m->exit_status;
	x->cli = rec_none;
}

void rec_result(const struct rec *x, struct memcheck_result *out)
{
	memset(out, 0, sizeof *out);
	memcpy((char *)out + REC_FIGS_AT, x->m.r.figs, REC_FIGS_END - REC_FIGS_AT);
	mc_copy_name(out->name, sizeof out->name, x->m.r.name ? x->m.r.name : "");
	snprintf(out->violations, sizeof out->violations, "%s",
		 x->m.r.violations ? x->m.r.violations : "");
}

void rec_free(struct rec *x)
{
	free(x->line);
	free(x->leak);
	if (x->m.r.violations != rec_none)
		free(x->m.r.violations);
	if (x->cli != rec_none)
		free(x->cli);
}

void recs_push(struct recs *out, const struct rec *r)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? out->cap * 2 : 16;
		out->v = xrealloc(out->v, out->cap * sizeof *out->v);
	}
	out->v[out->n++] = *r;
}

void recs_free(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		rec_free(&rs->v[i]);
	free(rs->v);
	rs->v = NULL;
	rs->n = rs->cap = 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}


int rec_signal(const char *line, size_t len, char *name, size_t cap)
{
	struct mc_jv rec, v;
	uint64_t sig;
	/* Only a killed process's record has the key: a line without the
	 * word in quotes, and without an escape that could spell it, has
	 * none.  The parse that looked for it in every record was 46% of
	 * `memcheck gate`'s instructions over 10,000 records (field43). */
	if (!memmem(line, len, "\"signal\"", 8) && !memchr(line, '\\', len))
		return 0;
	if (!mc_jv_line(line, len, &rec) || !mc_jv_get(rec, "signal", &v) || !mc_jv_u64(v, &sig) ||
	    sig == 0 || sig == MEMCHECK_UNKNOWN || sig > INT_MAX)
		return 0;
	if (name && cap) {
		snprintf(name, cap, "?");
		if (mc_jv_get(rec, "signal_name", &v))
			mc_jv_str(v, name, cap);
	}
	return (int)sig;
}

/* A record written at a fatal signal (its "signal" key) says so first
 * among its messages: the table's and gate's lines show that the
 * figures are the killed process's at the signal. */
static void killed_first(struct rec *r, const char *line, size_t len)
{
	char name[32];
	int sig = rec_signal(line, len, name, sizeof name);
	if (!sig)
		return;
	char *msg = r->m.r.violations[0] ?
		xasprintf("killed by signal %d (%s); %s", sig, name, r->m.r.violations) :
		xasprintf("killed by signal %d (%s)", sig, name);
	/* cut where the library's own array would have cut it */
	if (strlen(msg) >= sizeof((struct memcheck_result *)0)->violations)
		msg[sizeof((struct memcheck_result *)0)->violations - 1] = 0;
	if (r->m.r.violations != rec_none)
		free(r->m.r.violations);
	r->m.r.violations = msg;
}
/* A record of the process region valgrind's exit judged (memcheck
 * bypassed by valgrind's malloc: lib/region.c's judged_at_valgrind_exit). */
static bool judged_by_valgrind_exit(const char *line, size_t len)
{
	struct mc_jv rec, v;
	char kind[32];
	return memmem(line, len, "valgrind_exit", 13) && mc_jv_line(line, len, &rec) &&
	       mc_jv_get(rec, "leak_check", &v) && mc_jv_str(v, kind, sizeof kind) &&
	       !strcmp(kind, "valgrind_exit");
}

size_t recs_vg_exit(const struct recs *rs, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < rs[i].n; j++)
			k += rs[i].v[j].vg_exit;
	return k;
}

/* A record's line begins with its name and pid (report.c writes them
 * first; a string value cannot hold the quotes unescaped, and the
 * records nested in one, suppressions', name no pid). */
static const char record_head[] = "{\"name\":\"";
/* A record's part's line begins so (records in parts, below). */
static const char part_head[] = "{\"part\":";

static bool record_starts(const char *p, const char *end)
{
	size_t head = sizeof record_head - 1;
	if ((size_t)(end - p) <= head || memcmp(p, record_head, head) != 0)
		return false;
	for (p += head; p < end && *p != '"'; p++)
		if (*p == '\\')
			p++;
	return end - p > 7 && memcmp(p, "\",\"pid\":", 8) == 0;
}

/* Where a line that does not parse holds a record its writer did not
 * finish (memcheck's bound on a pipe or socket reached, MEMCHECK_TEXT_
 * TIMEOUT; a process killed as it wrote): the line begins as a record
 * and the parser stopped at its end or at a second record's start,
 * which the cut one's writer, or another process, wrote after it.  0:
 * not so (malformed otherwise); else the cut record's length, the
 * second record's offset where there is one. */
static size_t cut_record(const char *line, size_t len, const char *err)
{
	size_t head = sizeof record_head - 1, col;
	if (!record_starts(line, line + len) || sscanf(err, "column %zu", &col) != 1)
		return 0;
	const char *next = line + 1, *end = line + len;
	while ((next = memmem(next, (size_t)(end - next), record_head, head)) &&
	       !record_starts(next, end))
		next++;
	size_t at = next ? (size_t)(next - line) : len;
	return col > at ? at : 0; /* (col counts from 1: the parser stopped at or past at) */
}

/* A report's lines are read up to a NUL byte or this many bytes: a file
 * that is no report and never ends a line (/dev/zero, /dev/full, given
 * where a report was expected) was read until memory ran out, the
 * command hanging meanwhile, before harden42.  A record's line is far
 * shorter (plain_bigrecords' 1,000 leak records: 1.2 MiB). */
#define LINE_MAX_BYTES ((size_t)1 << 30)
/* After a NUL byte, the rest of its line is skipped up to this many
 * bytes (a report whose end a crash left as zeros goes on after them);
 * further, the file is taken for no report and not read on. */
#define NUL_SKIP_BYTES ((size_t)1 << 20)

enum line_end { LINE_OK, LINE_EOF, LINE_NUL, LINE_LONG, LINE_NUL_NO_END, LINE_HOPELESS };

/* A report read in blocks, its lines found with memchr: getline stopped
 * at nothing but a newline, and a byte at a time (getc) cost 14
 * instructions a byte, 8% of gate's on a 1.2 MB report (callgrind). */
struct lines {
	FILE *f;
	char *buf;                /* cap bytes and a NUL's room */
	size_t cap, start, end;   /* the bytes not yet returned: start..end */
	bool eof;
	char err[256];            /* LINE_HOPELESS: what the parser said */
};

size_t recs_probe_bytes = (size_t)1 << 16;

/* Whether a line that has begun with the n bytes at p (no newline, no
 * NUL among them) can hold nothing the reader takes, whatever follows
 * on it: its first value's parse failed (err) well before the bytes'
 * end, and the line begins as no record the reader could find after
 * damage (cut_record: a record's head, or a part's).  read_one would
 * say err for the whole line and read nothing from it, so it is said
 * now and the rest of the line skipped, not held: a 1 GB line of text
 * that is no report was read into memory before "too long" (harden45). */
static bool line_hopeless(const char *p, size_t n, char *err, size_t errlen)
{
	struct mc_record m;
	struct mc_jv v;
	size_t col, head = sizeof record_head - 1, phead = sizeof part_head - 1;
	if (memcmp(p, record_head, n < head ? n : head) == 0 ||
	    memcmp(p, part_head, n < phead ? n : phead) == 0 || mc_jv_line(p, n, &v) ||
	    mc_json_record_leak(p, n, &m, NULL, err, errlen) || sscanf(err, "column %zu", &col) != 1)
		return false;
	/* a token the bytes' end cuts (a literal, a UTF-8 sequence, an
	 * escape) fails at its start: far from the end, the parse failed on
	 * the bytes it read */
	return col + 64 < n;
}

/* The rest of a hopeless line (its first bytes at l->start..l->end)
 * read past, not kept; the bounds of next_report_line's reading hold. */
static enum line_end skip_line(struct lines *l)
{
	size_t seen = 0, nul = SIZE_MAX;   /* bytes gone by; the first NUL's offset */
	for (;;) {
		char *p = l->buf + l->start, *nl = memchr(p, '\n', l->end - l->start);
		size_t n = nl ? (size_t)(nl - p) : l->end - l->start;
		char *z = nul == SIZE_MAX ? memchr(p, 0, n) : NULL;
		if (z)
			nul = seen + (size_t)(z - p);
		seen += n;
		if (nl) {
			l->start += n + 1;
			return LINE_HOPELESS;
		}
		l->start = l->end = 0;
		if (l->eof)
			return LINE_HOPELESS;
		if (nul != SIZE_MAX && seen - nul > NUL_SKIP_BYTES)
			return LINE_NUL_NO_END;
		if (seen >= LINE_MAX_BYTES)
			return LINE_LONG;
		size_t got = fread(l->buf, 1, l->cap, l->f);
		l->end = got;
		l->eof = got == 0;
	}
}

/* The next line (its '\n' off, NUL-terminated in place) in *line, its
 * length in *len; LINE_NUL with the column of its first NUL byte in
 * *col. */
static enum line_end next_report_line(struct lines *l, char **line, size_t *len, size_t *col)
{
	size_t scanned = l->start;    /* no newline before it */
	size_t probe = recs_probe_bytes ? recs_probe_bytes : 1;
	for (;;) {
		char *nl = l->end > scanned ? memchr(l->buf + scanned, '\n', l->end - scanned) : NULL;
		if (nl || l->eof) {
			size_t e = nl ? (size_t)(nl - l->buf) : l->end;
			if (!nl && e == l->start)
				return LINE_EOF;
			char *p = l->buf + l->start, *z = memchr(p, 0, e - l->start);
			*line = p;
			*len = e - l->start;
			p[*len] = 0;
			l->start = nl ? e + 1 : e;
			if (z) {
				*col = (size_t)(z - p) + 1;
				return LINE_NUL;
			}
			return LINE_OK;
		}
		char *z = l->end > l->start ? memchr(l->buf + l->start, 0, l->end - l->start) : NULL;
		if (z && l->end - (size_t)(z - l->buf) > NUL_SKIP_BYTES)
			return LINE_NUL_NO_END;
		if (l->end - l->start >= LINE_MAX_BYTES)
			return LINE_LONG;
		/* a line grown to the next probe (recs_probe_bytes, then each
		 * doubling) that can hold no record: said, the rest skipped */
		if (!z && l->end - l->start >= probe) {
			if (line_hopeless(l->buf + l->start, l->end - l->start, l->err,
					  sizeof l->err))
				return skip_line(l);
			probe = l->end - l->start <= SIZE_MAX / 2 ? 2 * (l->end - l->start) : SIZE_MAX;
		}
		if (l->start) {
			memmove(l->buf, l->buf + l->start, l->end - l->start);
			l->end -= l->start;
			l->start = 0;
		}
		scanned = l->end;
		if (l->end == l->cap) {
			/* first the probe's size: a hopeless line is held no
			 * longer (fuzz_records' small probes read in small
			 * blocks, as a long line is read) */
			l->cap = l->cap ? l->cap * 2 : probe > 16 ? probe : 16;
			l->buf = xrealloc(l->buf, l->cap + 1);
		}
		size_t got = fread(l->buf + l->end, 1, l->cap - l->end, l->f);
		l->end += got;
		l->eof = got == 0;
	}
}

/* ---- records in parts ------------------------------------------------
 * A record the library could not write whole to a FIFO or pipe (larger
 * than the pipe can be made to hold: lib/textout.c's write_parts) comes
 * as parts, each a line {"part":{"pid":P,"seq":S,"i":I,"n":N},"text":T},
 * I from 1 to N, T the record's next bytes; glued back here, in the
 * order of the lines, other lines between them read as they come.  A
 * part missing, repeated or out of order, and a record whose last part
 * the file does not hold, are said with the file and line, and that
 * record is not read (memcheck-report(5)). */

struct glue {
	uint64_t pid, seq, n, next;   /* next: the part expected; 0: dropped */
	int line;                     /* of its first part */
	char *text;
	size_t len;
};

struct glues {
	struct glue *v;
	size_t n, cap;
};

static struct glue *glue_of(struct glues *g, uint64_t pid, uint64_t seq)
{
	for (size_t k = 0; k < g->n; k++)
		if (g->v[k].pid == pid && g->v[k].seq == seq)
			return &g->v[k];
	return NULL;
}

static void glue_drop(struct glues *g, struct glue *x)
{
	free(x->text);
	*x = g->v[--g->n];
}

static struct glue *glue_push(struct glues *g, uint64_t pid, uint64_t seq, uint64_t n,
			      uint64_t next, int line)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 4;
		g->v = xrealloc(g->v, g->cap * sizeof *g->v);
	}
	g->v[g->n] = (struct glue){ pid, seq, n, next, line, NULL, 0 };
	return &g->v[g->n++];
}

/* A part line: true and the record in *whole (free it) once its last
 * part is read; what is said counted in *bad. */
static bool glue_part(struct glues *g, const char *path, int lineno, const char *line,
		      size_t len, char **whole, size_t *wlen, int *bad)
{
	struct mc_jv v, part, t, f;
	uint64_t pid, seq, i, n;
	if (!mc_jv_line(line, len, &v) || !mc_jv_get(v, "part", &part) ||
	    !mc_jv_get(part, "pid", &f) || !mc_jv_u64(f, &pid) || !mc_jv_get(part, "seq", &f) ||
	    !mc_jv_u64(f, &seq) || !mc_jv_get(part, "i", &f) || !mc_jv_u64(f, &i) ||
	    !mc_jv_get(part, "n", &f) || !mc_jv_u64(f, &n) || !mc_jv_get(v, "text", &t) ||
	    t.end - t.p < 2 || *t.p != '"' || i == 0 || n == MEMCHECK_UNKNOWN || i > n ||
	    pid == MEMCHECK_UNKNOWN || seq == MEMCHECK_UNKNOWN) {
		fprintf(stderr, "%s:%d: expected a record's part, {\"part\":{\"pid\":P,\"seq\":S,"
			"\"i\":I,\"n\":N},\"text\":\"...\"} with 1 <= I <= N\n", path, lineno);
		++*bad;
		return false;
	}
	unsigned long long ui = i, un = n, upid = pid, useq = seq;
	struct glue *x = glue_of(g, pid, seq);
	if (x && x->next == 0) {
		if (i > 1)
			return false; /* the rest of a record said not read */
		glue_drop(g, x);      /* its part 1 again: a record from here */
		x = NULL;
	}
	if (x && (x->next != i || x->n != n)) {
		fprintf(stderr, "%s:%d: part %llu of %llu of the record of pid %llu (seq %llu) begun "
			"at line %d: expected part %llu of %llu (%s); the record is not read\n", path,
			lineno, ui, un, upid, useq, x->line, (unsigned long long)x->next,
			(unsigned long long)x->n, x->n != n ? "another count of parts" :
			i < x->next ? "a part repeated or out of order" : "parts missing");
		++*bad;
		glue_drop(g, x);
		x = NULL;
		if (i > 1) {
			glue_push(g, pid, seq, n, 0, lineno); /* its later parts skipped */
			return false;
		}
	} else if (!x && i > 1) {
		fprintf(stderr, "%s:%d: part %llu of %llu of the record of pid %llu (seq %llu): "
			"expected its part 1 before it (parts missing or out of order); the record "
			"is not read\n", path, lineno, ui, un, upid, useq);
		++*bad;
		glue_push(g, pid, seq, n, 0, lineno);
		return false;
	}
	if (!x)
		x = glue_push(g, pid, seq, n, 1, lineno);
	size_t room = (size_t)(t.end - t.p);   /* the decoded text is never longer */
	x->text = xrealloc(x->text, x->len + room + 1);
	if (!mc_jv_str(t, x->text + x->len, room + 1)) {
		fprintf(stderr, "%s:%d: part %llu of %llu: its text is not a JSON string; the record "
			"of pid %llu (seq %llu) is not read\n", path, lineno, ui, un, upid, useq);
		++*bad;
		free(x->text);
		*x = (struct glue){ pid, seq, n, 0, lineno, NULL, 0 };
		return false;
	}
	x->len += strlen(x->text + x->len);
	x->next++;
	if (i < n)
		return false;
	*whole = x->text;
	*wlen = x->len;
	x->text = NULL;
	glue_drop(g, x);
	return true;
}

/* At the file's end: each record whose last part did not come, said;
 * how many. */
static int glue_end(struct glues *g, const char *path)
{
	int bad = 0;
	for (size_t k = 0; k < g->n; k++) {
		struct glue *x = &g->v[k];
		if (x->next == 0)
			continue;
		fprintf(stderr, "%s:%d: the record of pid %llu (seq %llu) in %llu parts: parts 1 to "
			"%llu, the rest missing (its writer stopped: MEMCHECK_TEXT_TIMEOUT's bound on "
			"a pipe, or a process killed as it wrote); the record is not read\n", path,
			x->line, (unsigned long long)x->pid, (unsigned long long)x->seq,
			(unsigned long long)x->n, (unsigned long long)(x->next - 1));
		bad++;
	}
	for (size_t k = 0; k < g->n; k++)
		free(g->v[k].text);
	free(g->v);
	return bad;
}

/* Where a line that does not parse as a record may begin with a whole
 * one: the length of the JSON value it begins with, where that ends
 * before the line does; 0: not so.  What follows such a record on its
 * line is another writer's (a record of its own, or one cut short) or
 * damage: the record is read either way, as a file cut right after it
 * reads it (fuzz_records found the reader taking the line for no
 * record, and the same file cut short after the record's brace for
 * one). */
static size_t first_value(const char *line, size_t len)
{
	struct mc_jv v;
	if (!mc_jv_line(line, len, &v) || v.p != line || v.end >= line + len)
		return 0;
	return (size_t)(v.end - line);
}

/* One record of n bytes at p (a line's, or part of one) into out; the
 * blanks after its JSON (a '\r' of a line ended "\r\n") are no part
 * of it: a file cut right after the record's brace reads the same
 * record (fuzz_records). */
static void push_record(struct recs *out, const char *p, size_t n, int lineno,
			const struct mc_record *m, const struct mc_json_leak *leak)
{
	struct rec x = { .lineno = lineno }, *r = &x;
	rec_take(r, m);
	if (leak->kind[0]) {
		r->leak = xmalloc(sizeof *leak);
		*r->leak = *leak;
	}
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	char *line = xmalloc(n + 1);
	memcpy(line, p, n);
	line[n] = 0;
	killed_first(r, line, n);
	r->vg_exit = judged_by_valgrind_exit(line, n);
	r->line = line;
	recs_push(out, r);
}


/* The records of a line (or the text its parts glued back) into out:
 * one, as a rule; where the line is damaged, what can be read of it,
 * and what cannot said with the file, the line and the byte.  quiet:
 * the line's caller says what ends it (a NUL byte), and a last piece
 * that is no record is left to that. */
static void read_one(struct recs *out, const char *path, int lineno, const char *line,
		     size_t len, bool quiet, int *bad)
{
	struct mc_record r;
	struct mc_json_leak leak;
	char err[256], after[48] = "";
	for (size_t at = 0; at < len;) {
		const char *p = line + at;
		size_t n = len - at, used;
		memset(&r, 0, sizeof r);
		if (at)
			snprintf(after, sizeof after, "after byte %zu: ", at);
		if (mc_json_record_leak(p, n, &r, &leak, err, sizeof err)) {
			push_record(out, p, n, lineno, &r, &leak);
			return;
		}
		used = first_value(p, n); /* (the parse sets r.m and leak afresh) */
		bool whole = used && mc_json_record_leak(p, used, &r, &leak, NULL, 0);
		if (whole) {
			push_record(out, p, used, lineno, &r, &leak);
		} else if (!(used = cut_record(p, n, err))) {
			if (!quiet) {
				fprintf(stderr, "%s:%d: %s%s\n", path, lineno, after, err);
				++*bad;
			}
			return;
		}
		/* said as what it is; a record after it on the line read */
		const char *next = p + used, *end = line + len;
		while (next < end && !record_starts(next, end))
			next++;
		char what[64] = "; the record before it is read";
		if (!whole)
			snprintf(what, sizeof what, ": a record cut short after %zu bytes", used);
		fprintf(stderr, "%s:%d: %s%s%s%s%s\n", path, lineno, after, err, what,
			whole ? "" : " (its writer stopped in the middle: MEMCHECK_TEXT_TIMEOUT's "
			"bound on a pipe or socket, or a process killed as it wrote)",
			next < end ? "; the record after it on the line is read" : "");
		++*bad;
		at = (size_t)(next - line);
	}
}

/* A line's len bytes: a record's part glued with the parts before it
 * (its record read once whole), or records; quiet: a line cut at a NUL,
 * whose record text is not said again where it is no record. */
static void read_line(struct recs *out, struct glues *glues, const char *path, int lineno,
		      char *line, size_t len, bool quiet, int *bad)
{
	if (len >= sizeof part_head - 1 && memcmp(line, part_head, sizeof part_head - 1) == 0) {
		char *whole;
		size_t wlen;
		if (glue_part(glues, path, lineno, line, len, &whole, &wlen, bad)) {
			read_one(out, path, lineno, whole, wlen, false, bad);
			free(whole);
		}
		return;
	}
	read_one(out, path, lineno, line, len, quiet, bad);
}

int recs_read(struct recs *out, const char *file, bool missing_ok)
{
	FILE *f = fopen(file, "re");
	if (!f) {
		if (missing_ok && errno == ENOENT)
			return 0;
		say("cannot read %s: %s", file, strerror(errno));
		return -1;
	}
	/* the file as its "path:line:" messages name it: escaped as say()
	 * escapes (a newline in the name made two lines of one message, a
	 * terminal's escape reached the terminal: harden46 left it) */
	size_t cap = 6 * strlen(file) + 1;
	char *path = xmalloc(cap);
	mc_text_escape(file, path, cap);
	struct lines lines = { .f = f };
	char *line = NULL;
	size_t len = 0, col = 0;
	enum line_end got;
	int lineno = 0, bad = 0;
	struct glues glues = { 0 };
	while ((got = next_report_line(&lines, &line, &len, &col)) != LINE_EOF) {
		lineno++;
		if (got == LINE_LONG || got == LINE_NUL_NO_END) {
			fprintf(stderr, "%s:%d: %s: not a memcheck report? the rest of it is not read\n",
				path, lineno, got == LINE_LONG ? "a line longer than 1 GiB" :
				"a NUL byte, and no line end in the MiB after it");
			bad++;
			break;
		}
		if (got == LINE_HOPELESS) {
			fprintf(stderr, "%s:%d: %s\n", path, lineno, lines.err);
			bad++;
			continue;
		}
		if (got == LINE_NUL) {
			/* the records before it read, as a file cut short at
			 * the NUL reads them (fuzz_records): a record's part
			 * too (before session 46's merge a part before a NUL
			 * was taken for a record, and its record lost where
			 * the file cut at the NUL glued it) */
			size_t had = out->n;
			if (!blank(line, col - 1))
				read_line(out, &glues, path, lineno, line, col - 1, true, &bad);
			fprintf(stderr, "%s:%d: column %zu: expected JSON text, got a NUL byte%s\n",
				path, lineno, col, out->n > had ? "; the line's records before it are "
				"read" : "");
			bad++;
			continue;
		}
		/* Blank lines carry nothing; JSON Lines readers skip them. */
		if (blank(line, len))
			continue;
		read_line(out, &glues, path, lineno, line, len, false, &bad);
	}
	bad += glue_end(&glues, path);
	if (ferror(f)) {
		say("cannot read %s: %s", file, strerror(errno));
		bad = -1;
	}
	free(path);
	free(lines.buf);
	fclose(f);
	return bad;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

bool spread_of(const struct rec *const *v, size_t n, size_t off, bool seconds,
	       struct spread *out)
{
	double *d = xcalloc(n ? n : 1, sizeof *d);
	uint64_t *u = xcalloc(n ? n : 1, sizeof *u);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *f = rec_fig(v[i], off);
		if (seconds ? !isnan(*(const double *)f) : *(const uint64_t *)f != MEMCHECK_UNKNOWN) {
			d[k] = seconds ? *(const double *)f : 0;
			u[k] = seconds ? 0 : *(const uint64_t *)f;
			k++;
		}
	}
	out->n = k;
	if (k) {
		if (seconds) {
			qsort(d, k, sizeof *d, cmp_double);
			out->min = d[0];
			out->max = d[k - 1];
			out->median = k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
		} else {
			/* The median of an even count is the mean of the middle
			 * two, rounded down, in integers. */
			qsort(u, k, sizeof *u, cmp_u64);
			out->umin = u[0];
			out->umax = u[k - 1];
			out->umedian = k % 2 ? u[k / 2] : u[k / 2 - 1] / 2 + u[k / 2] / 2 +
				       (u[k / 2 - 1] % 2 + u[k / 2] % 2) / 2;
			out->min = (double)out->umin;
			out->max = (double)out->umax;
			out->median = (double)out->umedian;
		}
	}
	free(d);
	free(u);
	return k > 0;
}

void with_medians(const struct rec *const *v, size_t n, struct memcheck_result *r)
{
	for (size_t i = 0; mc_result_keys[i]; i++) {
		const struct mc_key *k = &mc_keys[i];
		if (!k->measured)
			continue;
		struct spread sp;
		bool seconds = k->kind == MC_KEY_SECONDS;
		if (!spread_of(v, n, k->off, seconds, &sp))
			continue;
		if (seconds)
			*(double *)((char *)r + k->off) = sp.median;
		else
			*(uint64_t *)((char *)r + k->off) = sp.umedian;
	}
}

/* Take the violations of the budget named prefix ("/abs/path/memcheck.
 * budget:") out of the record's own, which the CLI judges again (over
 * the runs); whether the record still fails on its own account. */
static bool fails_without_budget(struct rec *x, const char *prefix)
{
	if (REC_FIG(x, pass))
		return false;
	if (!prefix || !*x->m.r.violations)
		return true;
	size_t plen = strlen(prefix), len = 0;
	char *out = x->m.r.violations;   /* rewritten in place: never longer */
	for (const char *v = x->m.r.violations; *v;) {
		const char *end = strstr(v, "; ");
		size_t n = end ? (size_t)(end - v) : strlen(v);
		if (strncmp(v, prefix, plen) != 0) {
			if (len)
				out[len++] = ';', out[len++] = ' ';
			memmove(out + len, v, n);
			len += n;
		}
		v += n + (end ? 2 : 0);
	}
	out[len] = 0;
	return len > 0;
}

/* Written at an exit whose status the program chose non-zero (the
 * record's "exit_status"; not one killed, which has "signal" instead):
 * that status told whatever ran the process that it failed, and a test
 * may expect it (WILL_FAIL, should_fail, XFAIL_TESTS, a script checking
 * that a tool rejects bad input), so its failed regions are said but
 * fail nothing more, as the library passes them to no ancestor
 * (lib/exitstatus.c's head).  The regions a process ended itself while
 * it ran (its API's) carry no status: their failure may be why it
 * exits non-zero (a check suite). */
bool rec_own_end(const struct rec *x)
{
	return x->m.exit_status != MEMCHECK_UNKNOWN && (x->m.exit_status & 0xff) != 0;
}

size_t evaluate(struct group *groups, size_t ng, const struct mc_budget *b, const char *budget_abs)
{
	struct pairing *p = pairing_new(groups, ng);
	size_t base = 0;
	while (base < ng && !groups[base].baseline)
		base++;
	/* the name the library's messages give the file (MEMCHECK_BUDGET_NAME
	 * is budget_abs), as budget.c shows it: escaped, a long one cut */
	char *prefix = b && budget_abs ? xasprintf("%s:", mc_budget_name(b)) : NULL;
	size_t failed = 0;
	for (size_t gi = 0; gi < ng; gi++) {
		struct group *g = &groups[gi];
		if (g->stored)
			continue;
		for (int rep = 0; rep < g->nreps; rep++) {
			for (size_t k = 0; k < g->reps[rep].n; k++) {
				struct rec *x = &g->reps[rep].v[k];
				if (x->cli != rec_none)
					free(x->cli);
				x->cli = rec_none;
				x->ncli = 0;
				if (b) {
					/* measured figures on their medians over the
					 * runs, here and in the baseline */
					const struct rec **cell;
					size_t n = pairing_series(p, gi, x, &cell);
					struct memcheck_result judged, bj;
					rec_result(x, &judged);
					with_medians(cell, n, &judged);
					free(cell);
					const struct rec *bl = pairing_base(p, gi, rep, x);
					if (bl) {
						rec_result(bl, &bj);
						n = pairing_series(p, base, bl, &cell);
						with_medians(cell, n, &bj);
						free(cell);
					}
					char cli[512] = "";
					x->ncli = mc_budget_check(b, x->m.r.name, x->m.allocator, &judged,
								  bl ? &bj : NULL, cli, sizeof cli);
					if (cli[0])
						x->cli = xstrdup(cli);
				}
				x->fail = fails_without_budget(x, prefix) || x->ncli > 0;
				x->own_end = x->fail && rec_own_end(x);
				failed += x->fail && !x->own_end;
			}
		}
	}
	free(prefix);
	pairing_free(p);
	return failed;
}

/* The repetition of g record r goes to (its "run" key), made. */
static struct recs *group_list(struct group *g, const struct rec *r)
{
	int rep = 0;
	if (r->m.run != MEMCHECK_UNKNOWN && r->m.run >= 1 && r->m.run <= 1000)
		rep = (int)r->m.run - 1;
	if (rep >= g->nreps) {
		g->reps = xrealloc(g->reps, (size_t)(rep + 1) * sizeof *g->reps);
		memset(g->reps + g->nreps, 0, (size_t)(rep + 1 - g->nreps) * sizeof *g->reps);
		g->nreps = rep + 1;
	}
	return &g->reps[rep];
}

void group_add(struct group *g, const struct rec *r)
{
	recs_push(group_list(g, r), r);
}

/* A new group in groups[]: one repetition, no run. */
struct group *group_new(struct group **groups, size_t *ng, const char *label)
{
	*groups = xrealloc(*groups, (*ng + 1) * sizeof **groups);
	struct group *g = &(*groups)[(*ng)++];
	memset(g, 0, sizeof *g);
	g->label = xstrdup(label);
	g->nreps = 1;
	g->reps = xcalloc(1, sizeof *g->reps);
	return g;
}

/* A record's list (group, repetition) as one number, and its place. */
struct placed {
	uint64_t list;
	size_t at;
};

static int cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;
	if (x->list != y->list)
		return x->list < y->list ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;   /* stable */
}

/* The n records at v appended to list to, exactly (to's own array
 * taken over where to is empty and take: no copy). */
static void recs_append(struct recs *to, struct rec *v, size_t n, bool take)
{
	if (!to->n && take) {
		free(to->v);
		to->v = xrealloc(v, (n ? n : 1) * sizeof *v);
		to->n = to->cap = n;
		return;
	}
	to->v = xrealloc(to->v, (to->n + n ? to->n + n : 1) * sizeof *to->v);
	memcpy(to->v + to->n, v, n * sizeof *v);
	to->n += n;
	to->cap = to->n;
	if (take)
		free(v);
}

/* Each record moved to its group's list, not copied over all of them:
 * group_add's growth by doubling, every record in two arrays at once and
 * each array's slack were most of gate's memory (10^5 records of a
 * 97-byte line: 376 MB at its peak with struct mc_record in each; with
 * struct rec_head 141 MB, 117 MB with pairing.c's smaller slots;
 * harden47).  The records sorted in place by list (stable), then each
 * list's run copied out from the last, the array cut after each; the
 * first run keeps the array itself.  One allocator's records: no copy. */
/* The group of each interned allocator name, by the name's address: a
 * report naming 20,000 allocators took a scan of every group for every
 * record (O(n^2): 1.4 s), and each group's pairing tables 16 KB at
 * least (344 MB), harden47. */
struct group_map {
	const char **name;
	size_t *gi, cap;
};

/* name's slot, taken when new (*found false). */
static size_t *group_map_at(struct group_map *m, const char *name, bool *found)
{
	size_t j = (size_t)(((uintptr_t)name >> 4) * 0x9e3779b97f4a7c15ULL >> 20) & (m->cap - 1);
	while (m->name[j] && m->name[j] != name)
		j = (j + 1) & (m->cap - 1);
	*found = m->name[j] != NULL;
	m->name[j] = name;
	return &m->gi[j];
}

static void move_to_groups(struct recs *all, struct group **groups, size_t *ng)
{
	size_t n = all->n;
	struct placed *pl = xmalloc((n ? n : 1) * sizeof *pl);
	/* room for every group there may be, at most half full */
	struct group_map map = { .cap = 16 };
	while (map.cap < 2 * (n + *ng))
		map.cap *= 2;
	map.name = xcalloc(map.cap, sizeof *map.name);
	map.gi = xmalloc(map.cap * sizeof *map.gi);
	bool known;
	for (size_t i = *ng; i-- > 0;)   /* the first group of a label wins */
		if (!(*groups)[i].stored)
			*group_map_at(&map, rec_intern((*groups)[i].label), &known) = i;
	for (size_t i = 0; i < n; i++) {
		const char *name = all->v[i].m.allocator;
		size_t *gi = group_map_at(&map, name, &known);
		struct group *g;
		if (known) {
			g = &(*groups)[*gi];
		} else {
			g = group_new(groups, ng, name);
			*gi = (size_t)(g - *groups);
		}
		size_t rep = (size_t)(group_list(g, &all->v[i]) - g->reps);
		pl[i] = (struct placed){ (uint64_t)(g - *groups) << 32 | rep, i };
	}
	free(map.name);
	free(map.gi);
	qsort(pl, n, sizeof *pl, cmp_placed);
	/* v[j] = old v[pl[j].at], by its cycles (at marked SIZE_MAX once moved) */
	for (size_t j = 0; j < n; j++) {
		if (pl[j].at == SIZE_MAX || pl[j].at == j)
			continue;
		struct rec tmp = all->v[j];
		size_t k = j;
		while (pl[k].at != j) {
			size_t from = pl[k].at;
			all->v[k] = all->v[from];
			pl[k].at = SIZE_MAX;
			k = from;
		}
		all->v[k] = tmp;
		pl[k].at = SIZE_MAX;
	}
	for (size_t end = n; end > 0;) {
		size_t start = end;
		while (start > 0 && pl[start - 1].list == pl[end - 1].list)
			start--;
		struct group *g = &(*groups)[pl[end - 1].list >> 32];
		struct recs *to = &g->reps[pl[end - 1].list & UINT32_MAX];
		if (start) {
			recs_append(to, all->v + start, end - start, false);
			all->v = xrealloc(all->v, start * sizeof *all->v);
		} else {
			recs_append(to, all->v, end, true);
			all->v = NULL;
		}
		end = start;
	}
	free(pl);
	free(all->v);
	all->v = NULL;
	all->n = all->cap = 0;
}

void group_by_allocator(struct recs *all, struct group **groups, size_t *ng,
			const char *baseline)
{
	bool stored = *ng && (*groups)[0].baseline;
	move_to_groups(all, groups, ng);
	for (size_t i = 0; i < *ng; i++) {
		if (!stored && strcmp((*groups)[i].label, baseline) == 0)
			(*groups)[i].baseline = true;
		group_number(&(*groups)[i]);
	}
}

/* Read files[] into one list; false (every bad line said) when any is
 * malformed or cannot be read. */
bool read_all(struct recs *all, char **files, int n)
{
	bool ok = true;
	for (int i = 0; i < n; i++) {
		size_t before = all->n;
		int bad = recs_read(all, files[i], false);
		if (bad != 0)
			ok = false;
		else if (all->n == before) {
			say("%s: no memcheck records", files[i]);
			ok = false;
		}
	}
	return ok;
}

void group_number(struct group *g)
{
	for (int rep = 0; rep < g->nreps; rep++)
		recs_number(&g->reps[rep]);
}

void group_free(struct group *g)
{
	for (int i = 0; i < g->nreps; i++)
		recs_free(&g->reps[i]);
	free(g->reps);
	free(g->runs);
	free(g->label);
	free(g->object);
	free(g->skipped);
	memset(g, 0, sizeof *g);
}

void groups_free(struct group *groups, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		group_free(&groups[i]);
	free(groups);
}
