/*
 * views.c - what the CLI shows of the records: a table per region and
 * allocator, in the spirit of the allocator comparisons people post, and
 * the same rows as JUnit XML for CI.  With repetitions, each figure is the
 * median over them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- one region under one allocator, over its repetitions ------------- */

/* A region's identity across allocators (records.c). */
struct key {
	const struct rec *first;   /* its program and name */
	size_t occ;
};

struct cell {
	size_t n, nfail;           /* records, failing records */
	const struct rec **recs;
	double seconds;
	uint64_t peak_rss, allocs, frees, peak_live, leaked, reachable, retained;
};

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

/* Median of the measured values (unknown ones left out). */
static uint64_t median_u64(const struct cell *c, size_t offset)
{
	uint64_t *v = xcalloc(c->n, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t x = *(const uint64_t *)((const char *)&c->recs[i]->m.r + offset);
		if (x != MEMCHECK_UNKNOWN)
			v[n++] = x;
	}
	uint64_t m = MEMCHECK_UNKNOWN;
	if (n) {
		qsort(v, n, sizeof *v, cmp_u64);
		m = n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2 +
			(v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2;
	}
	free(v);
	return m;
}

static double median_seconds(const struct cell *c)
{
	double *v = xcalloc(c->n, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (!isnan(c->recs[i]->m.r.seconds))
			v[n++] = c->recs[i]->m.r.seconds;
	double m = NAN;
	if (n) {
		qsort(v, n, sizeof *v, cmp_double);
		m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	free(v);
	return m;
}

#define OFF(f) offsetof(struct memcheck_result, f)

static bool key_is(const struct rec *r, const struct key *k)
{
	return r->occ == k->occ && strcmp(r->m.r.name, k->first->m.r.name) == 0 &&
	       strcmp(base_name(r->m.program), base_name(k->first->m.program)) == 0;
}

/* The records of region k under group g, over every repetition. */
static void cell_fill(struct cell *c, const struct group *g, const struct key *k)
{
	memset(c, 0, sizeof *c);
	for (int rep = 0; rep < g->nreps; rep++)
		for (size_t i = 0; i < g->reps[rep].n; i++)
			if (key_is(&g->reps[rep].v[i], k)) {
				c->recs = xrealloc(c->recs, (c->n + 1) * sizeof *c->recs);
				c->recs[c->n++] = &g->reps[rep].v[i];
				c->nfail += g->reps[rep].v[i].fail;
			}
	if (!c->n)
		return;
	c->seconds = median_seconds(c);
	c->peak_rss = median_u64(c, OFF(peak_rss));
	c->allocs = median_u64(c, OFF(allocs));
	c->frees = median_u64(c, OFF(frees));
	c->peak_live = median_u64(c, OFF(peak_live_bytes));
	c->leaked = median_u64(c, OFF(definitely_lost.bytes));
	c->reachable = median_u64(c, OFF(still_reachable.bytes));
	c->retained = median_u64(c, OFF(retained_bytes));
}

/* Every region, in the order it first appears (the baseline's first). */
static struct key *keys_of(struct group *groups, size_t ng, size_t *nkeys)
{
	struct key *keys = NULL;
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t gi = 0; gi < ng; gi++) {
			const struct group *g = &groups[gi];
			if (g->baseline != (pass == 0))
				continue;
			for (int rep = 0; rep < g->nreps; rep++)
				for (size_t i = 0; i < g->reps[rep].n; i++) {
					const struct rec *r = &g->reps[rep].v[i];
					struct key k = { r, r->occ };
					size_t j = 0;
					while (j < n && !key_is(r, &keys[j]))
						j++;
					if (j == n) {
						keys = xrealloc(keys, (n + 1) * sizeof *keys);
						keys[n++] = k;
					}
				}
		}
	*nkeys = n;
	return keys;
}

/* Each "; "-separated message of the cell's records once, in order;
 * the CLI's own findings after the library's. */
static char **messages(const struct cell *c, size_t *count)
{
	char **out = NULL;
	size_t n = 0;
	for (int which = 0; which < 2; which++)
		for (size_t i = 0; i < c->n; i++) {
			const char *v = which ? c->recs[i]->cli : c->recs[i]->m.r.violations;
			while (*v) {
				const char *end = strstr(v, "; ");
				size_t len = end ? (size_t)(end - v) : strlen(v);
				char *one = xasprintf("%.*s", (int)len, v);
				size_t j = 0;
				while (j < n && strcmp(out[j], one))
					j++;
				if (j < n) {
					free(one);
				} else {
					out = xrealloc(out, (n + 1) * sizeof *out);
					out[n++] = one;
				}
				v += len + (end ? 2 : 0);
			}
		}
	*count = n;
	return out;
}

static void messages_free(char **m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i]);
	free(m);
}

/* ---- formatting ------------------------------------------------------ */

/* Exact below 1 KiB, else one decimal in the largest unit that keeps
 * the figure at 1 or more: "14.5 KiB", "2.2 MiB". */
static char *fmt_bytes(uint64_t v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	if (v == MEMCHECK_UNKNOWN)
		return xstrdup("-");
	if (v < 1024)
		return xasprintf("%llu B", (unsigned long long)v);
	double d = (double)v / 1024;
	int i = 0;
	for (; i < 3 && d >= 1024; i++)
		d /= 1024;
	return xasprintf("%.1f %s", d, units[i]);
}

static char *fmt_count(uint64_t v)
{
	char b[32];
	return xstrdup(v == MEMCHECK_UNKNOWN ? "-" : mc_commas(v, b));
}

static char *fmt_seconds(double s)
{
	if (isnan(s))
		return xstrdup("-");
	if (s < 0.001)
		return xasprintf("%.0f us", s * 1e6);
	if (s < 1)
		return xasprintf("%.1f ms", s * 1e3);
	return xasprintf("%.2f s", s);
}

static char *fmt_change(uint64_t v, uint64_t base)
{
	if (v == MEMCHECK_UNKNOWN || base == MEMCHECK_UNKNOWN || base == 0)
		return xstrdup("-");
	return xasprintf("%+.1f%%", ((double)v - (double)base) * 100.0 / (double)base);
}

/* A name for the terminal: control characters as C escapes. */
char *printable(const char *s, size_t occ)
{
	size_t n = strlen(s);
	char *out = xmalloc(n * 4 + 32), *o = out;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n')
			o += sprintf(o, "\\n");
		else if (c == '\t')
			o += sprintf(o, "\\t");
		else if (c < 0x20 || c == 0x7f)
			o += sprintf(o, "\\x%02x", c);
		else
			*o++ = (char)c;
	}
	*o = 0;
	if (occ)
		sprintf(o, " #%zu", occ + 1);
	return out;
}

/* ---- the table ------------------------------------------------------- */

enum { C_PROG, C_REGION, C_ALLOC, C_TIME, C_RSS, C_VS, C_ALLOCS, C_FREES, C_LIVE,
       C_LEAKED, C_REACH, C_RETAINED, C_VERDICT, NCOLS };

static const bool right_aligned[NCOLS] = {
	[C_TIME] = true, [C_RSS] = true, [C_VS] = true, [C_ALLOCS] = true,
	[C_FREES] = true, [C_LIVE] = true, [C_LEAKED] = true, [C_REACH] = true,
	[C_RETAINED] = true,
};

struct row {
	char *cell[NCOLS];
	char **msgs;
	size_t nmsgs;
};

/* Columns a string takes: its characters (UTF-8), not its bytes. */
static size_t columns(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void print_row(FILE *f, char *const cell[NCOLS], const size_t width[NCOLS])
{
	char line[4096];
	size_t len = 0;
	for (int c = 0; c < NCOLS; c++) {
		const char *s = cell[c] ? cell[c] : "";
		size_t n = columns(s), pad = width[c] > n ? width[c] - n : 0;
		int w = snprintf(line + len, sizeof line - len, "%s%*s%s%*s", c ? "  " : "",
				 right_aligned[c] ? (int)pad : 0, "", s,
				 right_aligned[c] || c == NCOLS - 1 ? 0 : (int)pad, "");
		if (w < 0 || (size_t)w >= sizeof line - len)
			break;
		len += (size_t)w;
	}
	fprintf(f, "%s\n", line);
}

void print_table(FILE *f, struct group *groups, size_t ng, const char *title)
{
	const struct group *base = NULL;
	int reps = 1;
	for (size_t i = 0; i < ng; i++) {
		if (groups[i].baseline)
			base = &groups[i];
		if (!groups[i].stored && groups[i].nreps > reps)
			reps = groups[i].nreps;
	}
	size_t nkeys;
	struct key *keys = keys_of(groups, ng, &nkeys);
	if (title)
		fprintf(f, "\n%s%s\n", title, reps > 1 ? " (figures: medians over the runs)" : "");
	if (!nkeys) {
		fprintf(f, "(no records)\n");
		free(keys);
		return;
	}

	char *vs = xasprintf("vs %s", base ? base->label : "base");
	char *head[NCOLS] = { "program", "region", "allocator", "time", "peak RSS", vs,
			      "allocs", "frees", "peak live", "leaked", "reachable",
			      "retained", "verdict" };
	struct row *rows = NULL;
	size_t nrows = 0;
	for (size_t k = 0; k < nkeys; k++) {
		struct cell bc = { 0 };
		bool first = true;
		if (base)
			cell_fill(&bc, base, &keys[k]);
		/* the baseline's row first */
		for (int pass = 0; pass < 2; pass++)
			for (size_t gi = 0; gi < ng; gi++) {
				const struct group *g = &groups[gi];
				if (g->baseline != (pass == 0))
					continue;
				struct cell c;
				cell_fill(&c, g, &keys[k]);
				if (!c.n) {
					free(c.recs);
					continue;
				}
				rows = xrealloc(rows, (nrows + 1) * sizeof *rows);
				struct row *r = &rows[nrows++];
				memset(r, 0, sizeof *r);
				if (first) {
					r->cell[C_PROG] = printable(base_name(keys[k].first->m.program), 0);
					r->cell[C_REGION] = printable(keys[k].first->m.r.name,
								      keys[k].occ);
					first = false;
				}
				r->cell[C_ALLOC] = xstrdup(g->label);
				r->cell[C_TIME] = fmt_seconds(c.seconds);
				r->cell[C_RSS] = fmt_bytes(c.peak_rss);
				r->cell[C_VS] = g == base || !bc.n ? xstrdup("-") :
						fmt_change(c.peak_rss, bc.peak_rss);
				r->cell[C_ALLOCS] = fmt_count(c.allocs);
				r->cell[C_FREES] = fmt_count(c.frees);
				r->cell[C_LIVE] = fmt_bytes(c.peak_live);
				r->cell[C_LEAKED] = fmt_bytes(c.leaked);
				r->cell[C_REACH] = fmt_bytes(c.reachable);
				r->cell[C_RETAINED] = fmt_bytes(c.retained);
				if (!c.nfail)
					r->cell[C_VERDICT] = xstrdup("pass");
				else if (c.n == 1)
					r->cell[C_VERDICT] = xstrdup("FAIL");
				else
					r->cell[C_VERDICT] = xasprintf("FAIL %zu/%zu", c.nfail, c.n);
				if (c.nfail)
					r->msgs = messages(&c, &r->nmsgs);
				free(c.recs);
			}
		free(bc.recs);
	}

	size_t width[NCOLS];
	for (int c = 0; c < NCOLS; c++) {
		width[c] = columns(head[c]);
		for (size_t i = 0; i < nrows; i++)
			if (rows[i].cell[c] && columns(rows[i].cell[c]) > width[c])
				width[c] = columns(rows[i].cell[c]);
	}
	print_row(f, head, width);
	for (size_t i = 0; i < nrows; i++) {
		print_row(f, rows[i].cell, width);
		/* repetitions can each say it with other figures: a few do */
		for (size_t m = 0; m < rows[i].nmsgs && m < 5; m++)
			fprintf(f, "    %s\n", short_path(rows[i].msgs[m]));
		if (rows[i].nmsgs > 5)
			fprintf(f, "    (%zu more; all of them in --junit)\n", rows[i].nmsgs - 5);
		for (int c = 0; c < NCOLS; c++)
			free(rows[i].cell[c]);
		messages_free(rows[i].msgs, rows[i].nmsgs);
	}
	free(rows);
	free(keys);
	free(vs);
}

/* ---- JUnit XML ------------------------------------------------------- */

/* Text for an attribute or element: markup escaped, and characters XML
 * 1.0 does not allow (control characters) as '?'.  The records' strings
 * are valid UTF-8 (lib/json.c checks), so the rest goes as it is. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\t': fputs("&#9;", f); break;
		case '\r': fputs("&#13;", f); break;
		default:
			fputc(c < 0x20 ? '?' : c, f);
		}
	}
}

static void xml_seconds(FILE *f, double s)
{
	fprintf(f, "%.6f", isnan(s) || s < 0 ? 0.0 : s);
}

/* How a run ended, or NULL when it exited 0 (or failed only because a
 * memcheck verdict failed, which the region's testcase reports). */
static char *run_problem(const struct runinfo *ri)
{
	if (!ri->done || (!ri->end.sig && (!ri->end.exit_code || ri->explained)))
		return NULL;
	char d[96];
	describe_end(&ri->end, d, sizeof d);
	return xstrdup(d);
}

struct suite_counts {
	size_t tests, failures, errors, skipped;
	double time;
};

/* What one allocator's <testsuite> holds: a testcase for the command
 * (when there is one) and one per region. */
static struct suite_counts suite_counts(const struct group *g, const struct key *keys,
					size_t nkeys, bool command)
{
	struct suite_counts c = { 0 };
	for (int rep = 0; g->runs && rep < g->nreps; rep++)
		c.time += g->runs[rep].end.wall;
	if (g->skipped) {
		c.tests = c.skipped = 1;
		return c;
	}
	if (command) {
		c.tests = 1;
		for (int rep = 0; g->runs && rep < g->nreps; rep++) {
			char *p = run_problem(&g->runs[rep]);
			if (p)
				c.errors = 1;
			free(p);
		}
	}
	for (size_t k = 0; k < nkeys; k++) {
		struct cell cl;
		cell_fill(&cl, g, &keys[k]);
		c.tests += cl.n > 0;
		c.failures += cl.nfail > 0;
		free(cl.recs);
	}
	return c;
}

/* The command's testcase: an <error> per run that crashed or failed on
 * its own, a <skipped> for an allocator that is not installed. */
static void junit_command(FILE *f, const struct group *g, const char *cls, double time)
{
	fprintf(f, "    <testcase classname=\"");
	xml_text(f, cls);
	fprintf(f, "\" name=\"command\" time=\"");
	xml_seconds(f, time);
	fprintf(f, "\"");
	if (g->skipped) {
		fprintf(f, ">\n      <skipped message=\"");
		xml_text(f, g->skipped);
		fprintf(f, "\"/>\n    </testcase>\n");
		return;
	}
	bool open = false;
	for (int rep = 0; g->runs && rep < g->nreps; rep++) {
		char *p = run_problem(&g->runs[rep]);
		if (!p)
			continue;
		if (!open) {
			fprintf(f, ">\n      <error type=\"command\" message=\"");
			xml_text(f, p);
			fprintf(f, "\">");
			open = true;
		}
		fprintf(f, "run %d: ", rep + 1);
		xml_text(f, p);
		fprintf(f, "&#10;");
		free(p);
	}
	fprintf(f, open ? "</error>\n    </testcase>\n" : "/>\n");
}

/* A region's testcase, with a <failure> that lists its violations. */
static void junit_region(FILE *f, const struct key *k, const struct cell *c)
{
	fprintf(f, "    <testcase classname=\"");
	xml_text(f, base_name(k->first->m.program));
	fprintf(f, "\" name=\"");
	xml_text(f, k->first->m.r.name);
	if (k->occ)
		fprintf(f, " #%zu", k->occ + 1);
	fprintf(f, "\" time=\"");
	xml_seconds(f, c->seconds);
	if (!c->nfail) {
		fprintf(f, "\"/>\n");
		return;
	}
	size_t nm;
	char **m = messages(c, &nm);
	fprintf(f, "\">\n      <failure type=\"memcheck\" message=\"");
	for (size_t i = 0; i < nm; i++) {
		if (i)
			fputs("; ", f);
		xml_text(f, short_path(m[i]));
	}
	if (!nm)
		xml_text(f, "verdict fail");
	fprintf(f, "\">");
	if (c->n > 1)
		fprintf(f, "failed in %zu of %zu runs&#10;", c->nfail, c->n);
	for (size_t i = 0; i < nm; i++) {
		xml_text(f, m[i]);
		fprintf(f, "&#10;");
	}
	fprintf(f, "</failure>\n    </testcase>\n");
	messages_free(m, nm);
}

bool write_junit(const char *path, struct group *groups, size_t ng, const char *command)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		say("cannot write %s: %s", path, strerror(errno));
		return false;
	}
	size_t nkeys;
	struct key *keys = keys_of(groups, ng, &nkeys);
	struct suite_counts all = { 0 };
	for (size_t gi = 0; gi < ng; gi++) {
		if (groups[gi].stored)
			continue;
		struct suite_counts c = suite_counts(&groups[gi], keys, nkeys, command != NULL);
		all.tests += c.tests;
		all.failures += c.failures;
		all.errors += c.errors;
		all.skipped += c.skipped;
		all.time += c.time;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"memcheck\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		"skipped=\"%zu\" time=\"", all.tests, all.failures, all.errors, all.skipped);
	xml_seconds(f, all.time);
	fprintf(f, "\">\n");
	for (size_t gi = 0; gi < ng; gi++) {
		const struct group *g = &groups[gi];
		if (g->stored)
			continue;
		struct suite_counts c = suite_counts(g, keys, nkeys, command != NULL);
		fprintf(f, "  <testsuite name=\"");
		xml_text(f, g->label);
		fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"",
			c.tests, c.failures, c.errors, c.skipped);
		xml_seconds(f, c.time);
		fprintf(f, "\">\n    <properties>\n      <property name=\"allocator\" value=\"");
		xml_text(f, g->object ? g->object : g->label);
		fprintf(f, "\"/>\n      <property name=\"baseline\" value=\"%s\"/>\n",
			g->baseline ? "true" : "false");
		fprintf(f, "      <property name=\"runs\" value=\"%d\"/>\n    </properties>\n",
			g->nreps);
		if (command || g->skipped)
			junit_command(f, g, command ? base_name(command) : "memcheck",
				      g->nreps ? c.time / g->nreps : 0);
		for (size_t k = 0; k < nkeys && !g->skipped; k++) {
			struct cell cl;
			cell_fill(&cl, g, &keys[k]);
			if (cl.n)
				junit_region(f, &keys[k], &cl);
			free(cl.recs);
		}
		fprintf(f, "  </testsuite>\n");
	}
	fprintf(f, "</testsuites>\n");
	free(keys);
	bool ok = !ferror(f);
	if (fclose(f) != 0)
		ok = false;
	if (!ok)
		say("cannot write %s: %s", path, strerror(errno));
	return ok;
}

bool write_report(const char *path, struct group *groups, size_t ng)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		say("cannot write %s: %s", path, strerror(errno));
		return false;
	}
	/* the baseline's records first, as a later compare or gate wants */
	for (int pass = 0; pass < 2; pass++)
		for (size_t gi = 0; gi < ng; gi++) {
			const struct group *g = &groups[gi];
			if (g->stored || g->baseline != (pass == 0))
				continue;
			for (int rep = 0; rep < g->nreps; rep++)
				for (size_t i = 0; i < g->reps[rep].n; i++)
					fprintf(f, "%s\n", g->reps[rep].v[i].line);
		}
	bool ok = !ferror(f);
	if (fclose(f) != 0)
		ok = false;
	if (!ok)
		say("cannot write %s: %s", path, strerror(errno));
	return ok;
}
