/*
 * views.c - what the CLI shows of the records: a table per region and
 * allocator, in the spirit of the allocator comparisons people post, and
 * the same rows as JUnit XML for CI, and the report file of `run`.  With
 * repetitions, each figure is the median over them, followed by how far
 * the farthest run is from it: a noisy allocator must show as noisy, and
 * a figure that is the same in every run (most counts) shows bare.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ---- one region under one allocator, over its repetitions ------------- */


/* Each figure of the table over the runs: its median is shown, its
 * spread after it. */
struct cell {
	size_t n, nfail;           /* records, failing records (counted) */
	size_t nown;               /* failing records of a process that exited
				    * non-zero on its own (own_end): not counted */
	unsigned own_status;       /* the first of those's exit status */
	size_t nvg;                /* records valgrind's exit judged */
	const struct rec **recs;
	struct spread time, rss, allocs, frees, live, lost, reach, retained;
};

#define OFF(f) offsetof(struct memcheck_result, f)

/* Lost: definitely and indirectly together, which does not depend on
 * how a cycle nothing points to is split (its lowest block definitely
 * lost, the others indirectly: where the allocator put them decides).
 * In valgrind mode definitely_lost holds both already. */
static void lost_of(const struct cell *c, struct spread *out)
{
	struct rec *tmp = xcalloc(c->n ? c->n : 1, sizeof *tmp);
	const struct rec **v = xcalloc(c->n ? c->n : 1, sizeof *v);
	for (size_t i = 0; i < c->n; i++) {
		uint64_t d = REC_FIG(c->recs[i], definitely_lost.bytes);
		uint64_t ind = REC_FIG(c->recs[i], indirectly_lost.bytes);
		REC_FIG(&tmp[i], definitely_lost.bytes) =
			d == MEMCHECK_UNKNOWN ? MEMCHECK_UNKNOWN : d + (ind == MEMCHECK_UNKNOWN ? 0 : ind);
		v[i] = &tmp[i];
	}
	spread_of(v, c->n, OFF(definitely_lost.bytes), false, out);
	free(v);
	free(tmp);
}

/* The cell of records recs[n] (taken: freed with the cell). */
static void cell_fill(struct cell *c, const struct rec **recs, size_t n)
{
	memset(c, 0, sizeof *c);
	c->recs = recs;
	c->n = n;
	for (size_t i = 0; i < c->n; i++) {
		const struct rec *x = c->recs[i];
		if (x->own_end && !c->nown++)
			c->own_status = (unsigned)(x->m.exit_status & 0xff);
		c->nfail += x->fail && !x->own_end;
		c->nvg += x->vg_exit;
	}
	if (!c->n)
		return;
	spread_of(c->recs, c->n, OFF(seconds), true, &c->time);
	spread_of(c->recs, c->n, OFF(peak_rss), false, &c->rss);
	spread_of(c->recs, c->n, OFF(allocs), false, &c->allocs);
	spread_of(c->recs, c->n, OFF(frees), false, &c->frees);
	spread_of(c->recs, c->n, OFF(peak_live_bytes), false, &c->live);
	lost_of(c, &c->lost);
	spread_of(c->recs, c->n, OFF(still_reachable.bytes), false, &c->reach);
	spread_of(c->recs, c->n, OFF(retained_bytes), false, &c->retained);
}

/* The records of row k under group gi, over every repetition. */
static void cell_of(struct cell *c, const struct pairing *p, size_t k, size_t gi)
{
	const struct rec **v;
	size_t n = pairing_cell(p, k, gi, &v);
	cell_fill(c, v, n);
}

/* Row k under group gi as lines, a cell each: one region's records over
 * the runs (same_key) each, the first usually the only one.  Several
 * where the baseline has fewer of the region than gi, whose records
 * then share baseline records (counted round): each is judged against
 * the row's baseline record, and shown beside it.  Their number; free
 * each line's recs and the array. */
static size_t cell_lines(const struct pairing *p, size_t k, size_t gi, struct cell **out)
{
	const struct rec **v;
	size_t n = pairing_cell(p, k, gi, &v), nl = 0;
	const struct rec ***line = xmalloc((n ? n : 1) * sizeof *line);
	size_t *len = xcalloc(n ? n : 1, sizeof *len);
	for (size_t i = 0; i < n; i++) {
		size_t l = 0;
		while (l < nl && !same_key(v[i], line[l][0]))
			l++;
		if (l == nl)
			line[nl++] = xmalloc(n * sizeof **line);
		line[l][len[l]++] = v[i];
	}
	struct cell *c = xmalloc((nl ? nl : 1) * sizeof *c);
	for (size_t l = 0; l < nl; l++)
		cell_fill(&c[l], line[l], len[l]);
	free(line);
	free(len);
	free(v);
	*out = c;
	return nl;
}

static void lines_free(struct cell *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].recs);
	free(c);
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

/* How far the farthest run is from the median, in percent of it; -1
 * when every run gave the same figure (or there was one). */
static double spread_pct(const struct spread *s)
{
	if (s->n < 2 || s->min == s->max)
		return -1;
	if (s->median == 0)
		return INFINITY;
	double hi = s->max - s->median, lo = s->median - s->min;
	double pct = (hi > lo ? hi : lo) * 100.0 / s->median;
	return pct < 0.05 ? -1 : pct;   /* ±0.0%: the same, as shown */
}

enum fig_kind { FIG_BYTES, FIG_COUNT, FIG_SECONDS };

/* A figure's median, and when its runs differ, how far apart:
 * "80.2 MiB ±18%", or "0 B (to 64 B)" around a median of 0. */
static char *fmt_fig(const struct spread *s, enum fig_kind kind)
{
	if (!s->n)
		return xstrdup("-");
	char *m = kind == FIG_SECONDS ? fmt_seconds(s->median) :
		  kind == FIG_BYTES ? fmt_bytes(s->umedian) : fmt_count(s->umedian);
	double pct = spread_pct(s);
	if (pct < 0)
		return m;
	char *out;
	if (isinf(pct)) {
		char *hi = kind == FIG_SECONDS ? fmt_seconds(s->max) :
			   kind == FIG_BYTES ? fmt_bytes(s->umax) : fmt_count(s->umax);
		out = xasprintf("%s (to %s)", m, hi);
		free(hi);
	} else {
		out = xasprintf(pct < 10 ? "%s ±%.1f%%" : "%s ±%.0f%%", m, pct);
	}
	free(m);
	return out;
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
       C_LOST, C_REACH, C_RETAINED, C_VERDICT, NCOLS };

static const bool right_aligned[NCOLS] = {
	[C_TIME] = true, [C_RSS] = true, [C_VS] = true, [C_ALLOCS] = true,
	[C_FREES] = true, [C_LIVE] = true, [C_LOST] = true, [C_REACH] = true,
	[C_RETAINED] = true,
};

struct row {
	char *cell[NCOLS];
	char **msgs;
	size_t nmsgs;
	const struct rec *failed;  /* a failing record of the cell, for its sites */
};

/* Under a peak budget's violation: where the memory was at the peak of
 * live bytes, the largest sites first, file:line first.  A site is a
 * line with all of its stacks (a recursive caller's, each depth a
 * stack), as the library's text prints them; an older report's sites
 * are its largest stacks, summed here by the line they name, which then
 * counts only those (said under them). */
#define TABLE_SITES 3
struct site_line {
	char *label;
	uint64_t bytes, blocks;
	size_t stacks;
};

static void print_peak_sites(FILE *f, const struct rec *r)
{
	struct detail d;
	detail_read(r, &d);
	if (d.peak.have) {
		char *total = fmt_bytes(d.peak.bytes), *blocks = fmt_count(d.peak.blocks);
		fprintf(f, "      at the peak of live bytes, %s in %s blocks (the whole process's):\n",
			total, blocks);
		free(total);
		free(blocks);
		struct site_line *l = xcalloc(d.peak.n ? d.peak.n : 1, sizeof *l);
		size_t lines = 0;
		for (size_t i = 0; i < d.peak.n; i++) {
			const struct site *s = &d.peak.sites[i];
			char *where = site_label(&s->st);
			size_t k = 0;
			while (k < lines && strcmp(l[k].label, where))
				k++;
			if (k == lines)
				l[lines++] = (struct site_line){ where, 0, 0, 0 };
			else
				free(where);
			l[k].bytes += s->bytes;
			l[k].blocks += s->blocks;
			l[k].stacks += s->stacks;
			for (; k > 0 && l[k - 1].bytes < l[k].bytes; k--) {
				struct site_line t = l[k];
				l[k] = l[k - 1];
				l[k - 1] = t;
			}
		}
		for (size_t k = 0; k < lines && k < TABLE_SITES; k++) {
			char *pw = printable(l[k].label, 0);
			char *b = fmt_bytes(l[k].bytes), *n = fmt_count(l[k].blocks);
			char stacks[32] = "";
			if (l[k].stacks > 1)
				snprintf(stacks, sizeof stacks, ", %zu stacks", l[k].stacks);
			fprintf(f, "        %s%s: %s in %s blocks (%.1f%%)\n", pw, stacks, b, n,
				d.peak.bytes ? 100.0 * (double)l[k].bytes / (double)d.peak.bytes : 0.0);
			free(pw);
			free(b);
			free(n);
		}
		size_t more = lines > TABLE_SITES ? lines - TABLE_SITES : 0;
		if (more || d.peak.other_sites)
			fprintf(f, "        (%llu more sites; memcheck report --html shows them)\n",
				(unsigned long long)(more + d.peak.other_sites));
		if (!d.peak.by_stack && d.peak.other_stacks && d.peak.other_stacks != MEMCHECK_UNKNOWN &&
		    d.peak.other_bytes != MEMCHECK_UNKNOWN) {
			char *b = fmt_bytes(d.peak.other_bytes), *n = fmt_count(d.peak.other_blocks);
			fprintf(f, "        (other sites, %llu stacks: %s in %s blocks)\n",
				(unsigned long long)d.peak.other_stacks, b, n);
			free(b);
			free(n);
		}
		if (d.peak.by_stack && d.peak.n)
			fputs("        (an older memcheck's report: a line sums only its stacks "
			      "among the largest)\n", f);
		for (size_t k = 0; k < lines; k++)
			free(l[k].label);
		free(l);
	}
	detail_free(&d);
}

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
	size_t base = ng;
	int reps = 1;
	for (size_t i = 0; i < ng; i++) {
		if (groups[i].baseline && base == ng)
			base = i;
		if (!groups[i].stored && groups[i].nreps > reps)
			reps = groups[i].nreps;
	}
	size_t nkeys;
	struct pairing *p = pairing_new(groups, ng);
	const struct key *keys = pairing_rows(p, &nkeys);
	if (title) {   /* compare's names the files as typed */
		char *shown = printable(title, 0);
		fprintf(f, "\n%s\n", shown);
		free(shown);
	}
	if (reps > 1)
		fprintf(f, "(several runs: each figure is the median of an allocator's runs, and "
			"±N%% how far the farthest run is from it; leaks fail in any run, "
			"measured figures are gated on the median)\n");
	if (!nkeys) {
		fprintf(f, "(no records)\n");
		pairing_free(p);
		return;
	}

	char *base_label = printable(base < ng ? groups[base].label : "base", 0);
	char *vs = xasprintf("vs %s", base_label);
	free(base_label);
	char *head[NCOLS] = { "program", "region", "allocator", "time", "peak RSS", vs,
			      "allocs", "frees", "peak live", "lost (d+i)", "reachable",
			      "retained", "verdict" };
	struct row *rows = NULL;
	size_t nrows = 0;
	for (size_t k = 0; k < nkeys; k++) {
		struct cell bc = { 0 };
		bool first = true;
		if (base < ng)
			cell_of(&bc, p, k, base);
		/* the baseline's row first */
		for (int pass = 0; pass < 2; pass++)
			for (size_t gi = 0; gi < ng; gi++) {
				const struct group *g = &groups[gi];
				if (g->baseline != (pass == 0))
					continue;
				struct cell *lines;
				size_t nl = cell_lines(p, k, gi, &lines);
				for (size_t l = 0; l < nl; l++) {
					const struct cell *c = &lines[l];
					rows = xrealloc(rows, (nrows + 1) * sizeof *rows);
					struct row *r = &rows[nrows++];
					memset(r, 0, sizeof *r);
					if (first) {
						r->cell[C_PROG] = printable(base_name(keys[k].first->m.program), 0);
						r->cell[C_REGION] = printable(keys[k].first->m.r.name,
									      keys[k].occ);
						first = false;
					} else if (l) {
						/* another occurrence judged against this row's */
						r->cell[C_REGION] = printable(c->recs[0]->m.r.name,
									      c->recs[0]->occ);
					}
					r->cell[C_ALLOC] = printable(g->label, 0);
					r->cell[C_TIME] = fmt_fig(&c->time, FIG_SECONDS);
					r->cell[C_RSS] = fmt_fig(&c->rss, FIG_BYTES);
					r->cell[C_VS] = gi == base || !bc.n || !c->rss.n || !bc.rss.n ?
							xstrdup("-") : fmt_change(c->rss.umedian, bc.rss.umedian);
					r->cell[C_ALLOCS] = fmt_fig(&c->allocs, FIG_COUNT);
					r->cell[C_FREES] = fmt_fig(&c->frees, FIG_COUNT);
					r->cell[C_LIVE] = fmt_fig(&c->live, FIG_BYTES);
					r->cell[C_LOST] = fmt_fig(&c->lost, FIG_BYTES);
					r->cell[C_REACH] = fmt_fig(&c->reach, FIG_BYTES);
					r->cell[C_RETAINED] = fmt_fig(&c->retained, FIG_BYTES);
					if (!c->nfail && !c->nown && c->nvg == c->n)
						/* memcheck bypassed: valgrind's own
						 * exit judged it (its figures "-") */
						r->cell[C_VERDICT] = xstrdup("valgrind");
					else if (!c->nfail && !c->nown)
						r->cell[C_VERDICT] = xstrdup("pass");
					else if (!c->nfail)
						/* failed in a process whose own exit status
						 * said it failed: not counted (rec_own_end),
						 * so not FAIL beside an exit status of 0 */
						r->cell[C_VERDICT] = c->n == 1 ?
							xasprintf("exited %u", c->own_status) :
							xasprintf("exited %u %zu/%zu", c->own_status,
								  c->nown, c->n);
					else if (c->n == 1)
						r->cell[C_VERDICT] = xstrdup("FAIL");
					else
						r->cell[C_VERDICT] = xasprintf("FAIL %zu/%zu", c->nfail, c->n);
					if (c->nfail || c->nown)
						r->msgs = messages(c, &r->nmsgs);
					for (size_t i = 0; i < c->n && !r->failed; i++)
						if (c->recs[i]->fail)
							r->failed = c->recs[i];
				}
				lines_free(lines, nl);
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
		bool sites = false;
		for (size_t m = 0; m < rows[i].nmsgs && m < 5; m++) {
			/* a record's own text: escaped, as its names are (an
			 * escape sequence in a violation reached the terminal,
			 * a newline split it; harden47) */
			char *shown = printable(short_path(rows[i].msgs[m]), 0);
			fprintf(f, "    %s\n", shown);
			free(shown);
			if (!sites && rows[i].failed && mc_violations_name_peak(rows[i].msgs[m])) {
				print_peak_sites(f, rows[i].failed);
				sites = true;
			}
		}
		if (rows[i].nmsgs > 5)
			fprintf(f, "    (%zu more; all of them in --junit)\n", rows[i].nmsgs - 5);
		for (int c = 0; c < NCOLS; c++)
			free(rows[i].cell[c]);
		messages_free(rows[i].msgs, rows[i].nmsgs);
	}
	free(rows);
	pairing_free(p);
	free(vs);
}

/* For a group of several runs, how far its measured figures varied:
 * for each, the region whose farthest run is farthest from its median. */
void print_spread(FILE *f, const struct group *g)
{
	static const struct {
		const char *label;
		size_t off;
	} figs[] = {
		{ "peak RSS", offsetof(struct memcheck_result, peak_rss) },
		{ "retained", offsetof(struct memcheck_result, retained_bytes) },
	};
	fprintf(f, "  %-14s varied between runs by up to:", "");
	struct pairing *p = pairing_new(g, 1);
	for (size_t i = 0; i < MC_ARRAY_SIZE(figs); i++) {
		double worst = 0;
		const struct rec *where = NULL;
		struct spread at = { 0 };
		for (int rep = 0; rep < g->nreps; rep++)
			for (size_t k = 0; k < g->reps[rep].n; k++) {
				const struct rec **cell;
				size_t n = pairing_series(p, 0, &g->reps[rep].v[k], &cell);
				struct spread sp;
				if (spread_of(cell, n, figs[i].off, false, &sp) && sp.umedian) {
					double pct = spread_pct(&sp);
					if (pct > worst) {
						worst = pct;
						where = &g->reps[rep].v[k];
						at = sp;
					}
				}
				free(cell);
			}
		if (!where) {
			fprintf(f, "%s %s 0%%", i ? "," : "", figs[i].label);
			continue;
		}
		char *name = printable(where->m.r.name, where->occ);
		char *lo = fmt_bytes(at.umin), *hi = fmt_bytes(at.umax);
		if (!strcmp(lo, hi)) {
			/* closer than the table's one decimal shows */
			free(lo);
			free(hi);
			lo = xasprintf("%llu", (unsigned long long)at.umin);
			hi = xasprintf("%llu bytes", (unsigned long long)at.umax);
		}
		fprintf(f, "%s %s ±%.1f%% (%s: %s to %s)", i ? "," : "", figs[i].label, worst, name,
			lo, hi);
		free(name);
		free(lo);
		free(hi);
	}
	pairing_free(p);
	fprintf(f, "; gated on the medians\n");
}

/* A file to write whole, or NULL (said).  A FIFO no process reads is
 * refused, as the library refuses one for its report: opened for
 * writing, it held memcheck run after the command's runs, for ever
 * (harden42); one a reader has open is written as before. */
FILE *open_written(const char *path)
{
	int fd = open_output(path, O_TRUNC);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		say("cannot write %s: %s", path, errno == ENXIO ?
		    "a FIFO no process has open for reading" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

/* open(2) of a file memcheck writes (flags: O_TRUNC or O_APPEND), never
 * waiting for a FIFO's reader (ENXIO), blocking once open; -1 (errno)
 * on failure. */
int open_output(const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags, 0666);
	if (fd < 0)
		return -1;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Whether the file option opt names (path) can be written when the
 * command ends, asked before anything runs, nothing created: a
 * directory, a directory that does not exist or one not writable was
 * said only after every run (`memcheck run --report /tmp`: all four
 * allocators' runs, then "cannot write /tmp: Is a directory", exit 2;
 * harden47).  Said as bad usage of cmd. */
bool writable_later(const char *cmd, const char *opt, const char *path)
{
	struct stat st;
	char *dir = NULL;
	const char *why = NULL;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			why = "a directory";
		else if (access(path, W_OK) != 0)
			why = strerror(errno);
	} else if (errno == ENOENT) {
		const char *slash = strrchr(path, '/');
		dir = slash ? xasprintf("%.*s", (int)(slash - path) + (slash == path), path)
			    : xstrdup(".");
		if (access(dir, W_OK) != 0)
			why = errno == ENOENT ? "its directory does not exist" : strerror(errno);
	} else {
		why = strerror(errno);
	}
	if (why)
		bad_usage(cmd, "--%s %s: %s: expected a file memcheck can write", opt, path, why);
	free(dir);
	return !why;
}

/* Close a file written whole; false (said) when writing it failed. */
bool close_written(FILE *f, const char *path)
{
	bool ok = !ferror(f);
	if (fclose(f) != 0)
		ok = false;
	if (!ok)
		say("cannot write %s: %s", path, strerror(errno));
	return ok;
}

/* ---- JUnit XML ------------------------------------------------------- */

/* Text for an attribute or element, of XML or HTML: markup escaped, and
 * characters XML 1.0 does not allow (control characters) as '?'.  The
 * records' strings are valid UTF-8 (lib/json.c checks), so the rest goes
 * as it is. */
void xml_text(FILE *f, const char *s)
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

/* Seconds to the millisecond: junit-10.xsd's times have at most three
 * decimals. */
static void xml_seconds(FILE *f, double s)
{
	fprintf(f, "%.3f", isnan(s) || s < 0 ? 0.0 : s);
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
static struct suite_counts suite_counts(const struct group *g, const struct pairing *p,
					size_t gi, size_t nkeys, bool command)
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
			char *problem = run_problem(&g->runs[rep]);
			if (problem)
				c.errors = 1;
			free(problem);
		}
	}
	for (size_t k = 0; k < nkeys; k++) {
		struct cell *lines;
		size_t nl = cell_lines(p, k, gi, &lines);
		c.tests += nl;
		for (size_t l = 0; l < nl; l++) {
			c.failures += lines[l].nfail > 0;
			c.skipped += !lines[l].nfail && lines[l].nown;
		}
		lines_free(lines, nl);
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

/* A region's testcase, with a <failure> that lists its violations:
 * named as its row (k), or as its own occurrence where it is another
 * line of that row (cell_lines).  Failed only in a process that exited
 * non-zero on its own (rec_own_end), a <skipped> that lists them: not
 * counted, as by run and gate, whose exit status may be 0 (a test that
 * expects that process to fail), and a <failure> there failed the CI
 * job's report (Jenkins: unstable, GitLab: failed) while the job
 * passed; GitLab shows a <skipped>'s text as the test's details, Jenkins
 * its message, and neither fails the build on it. */
static void junit_region(FILE *f, const struct key *k, const struct cell *c, bool own)
{
	const struct rec *named = own ? c->recs[0] : k->first;
	size_t occ = own ? c->recs[0]->occ : k->occ;
	fprintf(f, "    <testcase classname=\"");
	xml_text(f, base_name(named->m.program));
	fprintf(f, "\" name=\"");
	xml_text(f, named->m.r.name);
	if (occ)
		fprintf(f, " #%zu", occ + 1);
	fprintf(f, "\" time=\"");
	xml_seconds(f, c->time.n ? c->time.median : NAN);
	if (!c->nfail && !c->nown) {
		fprintf(f, "\"/>\n");
		return;
	}
	bool counted = c->nfail > 0;
	size_t nm;
	char **m = messages(c, &nm);
	/* The first failing run's leak: its site leads the message, as
	 * "file:line: ", which CI reporters link, and its stack's top frames
	 * follow the violations, as a stack trace does. */
	const struct mc_json_leak *leak = NULL;
	for (size_t i = 0; i < c->n && !leak; i++)
		if (c->recs[i]->fail && c->recs[i]->own_end != counted && c->recs[i]->leak)
			leak = c->recs[i]->leak;
	char why[96];
	snprintf(why, sizeof why, "not counted: the process exited %u on its own", c->own_status);
	if (counted) {
		fprintf(f, "\">\n      <failure type=\"memcheck\" message=\"");
	} else {
		fprintf(f, "\">\n      <skipped message=\"");
		xml_text(f, why);
		fputs(": ", f);
	}
	if (leak && leak->site[0]) {
		xml_text(f, short_path(leak->site));
		fputs(": ", f);
	}
	for (size_t i = 0; i < nm; i++) {
		if (i)
			fputs("; ", f);
		xml_text(f, short_path(m[i]));
	}
	if (!nm)
		xml_text(f, "verdict fail");
	fprintf(f, "\">");
	if (!counted)
		fprintf(f, "%s (its status told whatever ran it, which may expect it to "
			"fail)&#10;", why);
	if (c->n > 1)
		fprintf(f, "failed in %zu of %zu runs&#10;", counted ? c->nfail : c->nown, c->n);
	for (size_t i = 0; i < nm; i++) {
		xml_text(f, m[i]);
		fprintf(f, "&#10;");
	}
	if (leak) {
		char what[96];
		snprintf(what, sizeof what, "%llu bytes in %llu blocks %s, allocated at:",
			 (unsigned long long)leak->bytes, (unsigned long long)leak->blocks,
			 !strcmp(leak->kind, "possibly_lost") ? "possibly lost" :
								 "definitely lost");
		xml_text(f, what);
		for (const char *fr = leak->stack; *fr;) {
			size_t len = strcspn(fr, "\n");
			char *one = xasprintf("%.*s", (int)len, fr);
			fprintf(f, "&#10;    %s ", fr == leak->stack ? "at" : "by");
			xml_text(f, one);
			free(one);
			fr += len + (fr[len] == '\n');
		}
		fprintf(f, "&#10;");
	}
	fprintf(f, "</%s>\n    </testcase>\n", counted ? "failure" : "skipped");
	messages_free(m, nm);
}

bool write_junit(const char *path, struct group *groups, size_t ng, const char *command)
{
	FILE *f = open_written(path);
	if (!f)
		return false;
	size_t nkeys;
	struct pairing *p = pairing_new(groups, ng);
	const struct key *keys = pairing_rows(p, &nkeys);
	struct suite_counts all = { 0 };
	for (size_t gi = 0; gi < ng; gi++) {
		if (groups[gi].stored)
			continue;
		struct suite_counts c = suite_counts(&groups[gi], p, gi, nkeys, command != NULL);
		all.tests += c.tests;
		all.failures += c.failures;
		all.errors += c.errors;
		all.skipped += c.skipped;
		all.time += c.time;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	/* Jenkins' junit-10.xsd has no "skipped" here, only per testsuite */
	fprintf(f, "<testsuites name=\"memcheck\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		"time=\"", all.tests, all.failures, all.errors);
	xml_seconds(f, all.time);
	fprintf(f, "\">\n");
	for (size_t gi = 0; gi < ng; gi++) {
		const struct group *g = &groups[gi];
		if (g->stored)
			continue;
		struct suite_counts c = suite_counts(g, p, gi, nkeys, command != NULL);
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
			struct cell *lines;
			size_t nl = cell_lines(p, k, gi, &lines);
			for (size_t l = 0; l < nl; l++)
				junit_region(f, &keys[k], &lines[l], l > 0);
			lines_free(lines, nl);
		}
		fprintf(f, "  </testsuite>\n");
	}
	fprintf(f, "</testsuites>\n");
	pairing_free(p);
	return close_written(f, path);
}

/* ,"run":K,"runs":N,"spread":{...} for record x of repetition rep of
 * group gi of p: each figure that differs between its runs of the
 * region, as {"min":N,"median":N,"max":N}. */
static void report_keys(FILE *f, const struct group *g, const struct pairing *p, size_t gi,
			int rep, const struct rec *x)
{
	int runs = 0;
	for (int r = 0; r < g->nreps; r++)
		runs += g->reps[r].n > 0 || (g->runs && g->runs[r].done);
	fprintf(f, ",\"run\":%d,\"runs\":%d,\"spread\":{", rep + 1, runs);
	const struct rec **cell;
	size_t n = pairing_series(p, gi, x, &cell);
	const char *sep = "";
	for (size_t i = 0; mc_result_keys[i]; i++) {
		const struct mc_key *k = &mc_keys[i];
		if (strchr(k->name, '.'))
			continue;   /* definitely_lost.bytes: definitely_lost */
		bool seconds = k->kind == MC_KEY_SECONDS;
		struct spread sp;
		if (n < 2 || !spread_of(cell, n, k->off, seconds, &sp) || sp.min == sp.max)
			continue;
		if (seconds)
			fprintf(f, "%s\"%s\":{\"min\":%.6f,\"median\":%.6f,\"max\":%.6f}", sep,
				k->name, sp.min, sp.median, sp.max);
		else
			fprintf(f, "%s\"%s\":{\"min\":%llu,\"median\":%llu,\"max\":%llu}", sep,
				k->name, (unsigned long long)sp.umin, (unsigned long long)sp.umedian,
				(unsigned long long)sp.umax);
		sep = ",";
	}
	free(cell);
	fprintf(f, "}");
}

bool write_report(const char *path, struct group *groups, size_t ng, bool runs)
{
	FILE *f = open_written(path);
	if (!f)
		return false;
	struct pairing *p = pairing_new(groups, ng);
	/* the baseline's records first, as a later compare or gate wants */
	for (int pass = 0; pass < 2; pass++)
		for (size_t gi = 0; gi < ng; gi++) {
			const struct group *g = &groups[gi];
			if (g->stored || g->baseline != (pass == 0))
				continue;
			for (int rep = 0; rep < g->nreps; rep++)
				for (size_t i = 0; i < g->reps[rep].n; i++) {
					const struct rec *x = &g->reps[rep].v[i];
					size_t len = strlen(x->line);
					/* the library's line, its closing brace last */
					if (!runs || !len || x->line[len - 1] != '}') {
						fprintf(f, "%s\n", x->line);
						continue;
					}
					fprintf(f, "%.*s", (int)(len - 1), x->line);
					report_keys(f, g, p, gi, rep, x);
					fprintf(f, "}\n");
				}
		}
	pairing_free(p);
	return close_written(f, path);
}
