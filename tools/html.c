/*
 * html.c - the HTML report (memcheck report --html, memcheck run --html):
 * one self-contained page a CI job keeps as an artifact, readable in any
 * browser with no network.
 *
 * What it shows: every region under every allocator with its verdict and
 * violations; per region, bars of peak RSS, peak live bytes and retained
 * bytes per allocator with the budget's limit on each, the timeline
 * curves of every allocator on shared axes (MEMCHECK_TIMELINE), the
 * largest sites at the peak of live bytes side by side, and the leaks
 * with their stacks.
 *
 * Why no charting library: the charts are a few bars and polylines, and
 * inline SVG written here needs nothing at view time, no script to run
 * (a viewer that blocks scripts still sees every chart), nothing to
 * bundle or keep up to date.  The one small script only highlights an
 * allocator across the charts when its legend entry is pointed at, and
 * marks the page as rendered (data-ready, data-charts) for the test
 * that opens it in a browser.  A Content-Security-Policy allows nothing
 * from outside the page.
 *
 * The trap: everything in a record came from the program (region names,
 * paths, symbol names, messages quoting them): all of it goes through
 * esc(), in text and attributes alike, and none of it into the script.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const palette[] = { "#4e79a7", "#f28e2b", "#59a14f", "#e15759",
				       "#b07aa1", "#76b7b2", "#edc948", "#9c755f" };
#define COLOR(i) palette[(i) % MC_ARRAY_SIZE(palette)]

#define esc xml_text /* views.c: markup escaped, control characters as '?' */

static char *bytes_text(uint64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	if (v == MEMCHECK_UNKNOWN)
		return xstrdup("-");
	double d = (double)v;
	int i = 0;
	for (; i < 4 && d >= 1024; i++)
		d /= 1024;
	return i ? xasprintf("%.1f %s", d, units[i]) : xasprintf("%llu B", (unsigned long long)v);
}

static void put_bytes(FILE *f, uint64_t v)
{
	char *s = bytes_text(v);
	fputs(s, f);
	free(s);
}

/* ---- one region under one allocator ----------------------------------- */

/* The record a region's pictures come from, of the allocator's runs: the
 * one whose peak RSS is the median (the table's figure), else the first. */
static const struct rec *representative(const struct pairing *p, size_t gi, size_t row)
{
	const struct rec **v;
	size_t n = pairing_cell(p, row, gi, &v);
	const struct rec *pick = n ? v[0] : NULL;
	struct spread sp;
	if (n > 1 && spread_of(v, n, offsetof(struct memcheck_result, peak_rss), false, &sp))
		for (size_t i = 0; i < n; i++)
			if (REC_FIG(v[i], peak_rss) == sp.umedian)
				pick = v[i];
	free(v);
	return pick;
}

struct column {
	const struct group *g;
	int color;
	const struct rec *r;       /* NULL: the region has no record here */
	struct detail d;
	bool fail;
};

static const struct group *baseline_group(const struct group *groups, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		if (groups[i].baseline)
			return &groups[i];
	return NULL;
}

/* ---- charts ------------------------------------------------------------ */

/* A round step for an axis up to max, about four ticks. */
static double nice_step(double max)
{
	double raw = max / 4, mag = 1;
	while (mag * 10 <= raw)
		mag *= 10;
	while (mag > raw && mag > 1e-9)
		mag /= 10;
	double r = raw / mag;
	return mag * (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10);
}

#define CW 420   /* bar chart */
#define CH 230
#define TW 620   /* timeline */
#define PADL 78
#define PADB 42
#define PADT 24

/* The y axis of a chart h high with byte ticks up to ymax. */
static double y_axis(FILE *f, double ymax, int w, int h)
{
	/* Round in the unit the labels use: 256 KiB steps, not 262,144 B. */
	double unit = 1;
	while (unit * 1024 <= ymax)
		unit *= 1024;
	double step = nice_step(ymax > 0 ? ymax / unit : 1) * unit;
	double top = ceil((ymax > 0 ? ymax : 1) / step) * step;
	for (double v = 0; v <= top + step / 2; v += step) {
		double y = h - PADB - (h - PADB - PADT) * v / top;
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", PADL,
			w - 10, y, y);
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", PADL - 6, y + 4);
		put_bytes(f, (uint64_t)v);
		fputs("</text>", f);
	}
	return top;
}

static const struct {
	const char *label, *key;
	size_t off;
} bar_figs[] = {
	{ "peak RSS", "peak_rss", offsetof(struct memcheck_result, peak_rss) },
	{ "peak live", "peak_live_bytes", offsetof(struct memcheck_result, peak_live_bytes) },
	{ "retained", "retained_bytes", offsetof(struct memcheck_result, retained_bytes) },
};

static uint64_t fig(const struct rec *r, size_t off)
{
	return *(const uint64_t *)rec_fig(r, off);
}

/* Bars per figure and allocator, each with the budget's limit on it. */
static void bar_chart(FILE *f, const struct column *c, size_t nc, const struct mc_budget *b,
		      const struct rec *base)
{
	double ymax = 0;
	uint64_t lim[MC_ARRAY_SIZE(bar_figs)][16];
	bool has[MC_ARRAY_SIZE(bar_figs)][16];
	struct memcheck_result br;
	if (base)
		rec_result(base, &br);
	for (size_t i = 0; i < MC_ARRAY_SIZE(bar_figs); i++)
		for (size_t k = 0; k < nc && k < 16; k++) {
			has[i][k] = false;
			if (!c[k].r)
				continue;
			uint64_t v = fig(c[k].r, bar_figs[i].off);
			if (v != MEMCHECK_UNKNOWN && v > ymax)
				ymax = (double)v;
			has[i][k] = b && mc_budget_limit(b, c[k].r->m.r.name, c[k].r->m.allocator,
							 bar_figs[i].key, base ? &br : NULL,
							 &lim[i][k]);
			if (has[i][k] && (double)lim[i][k] > ymax && lim[i][k] < UINT64_MAX / 2)
				ymax = (double)lim[i][k];
		}
	fprintf(f, "<svg class=\"chart bars\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"role=\"img\"><title>peak RSS, peak live bytes and retained bytes per allocator"
		"</title>", CW, CH, CW, CH);
	double top = y_axis(f, ymax, CW, CH);
	double gw = (double)(CW - PADL - 10) / MC_ARRAY_SIZE(bar_figs);
	size_t n = nc < 16 ? nc : 16;
	double bw = (gw - 16) / (double)(n ? n : 1);
	for (size_t i = 0; i < MC_ARRAY_SIZE(bar_figs); i++) {
		double gx = PADL + gw * (double)i + 8;
		for (size_t k = 0; k < n; k++) {
			if (!c[k].r)
				continue;
			uint64_t v = fig(c[k].r, bar_figs[i].off);
			double x = gx + bw * (double)k;
			if (v != MEMCHECK_UNKNOWN) {
				double hgt = (CH - PADB - PADT) * (double)v / top;
				fprintf(f, "<rect data-alloc=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
					"height=\"%.1f\" fill=\"%s\"><title>", c[k].color, x,
					CH - PADB - hgt, bw - 2, hgt, COLOR(c[k].color));
				esc(f, c[k].g->label);
				fprintf(f, ": %s ", bar_figs[i].label);
				put_bytes(f, v);
				fputs("</title></rect>", f);
			}
			if (has[i][k] && (double)lim[i][k] <= top) {
				double y = CH - PADB - (CH - PADB - PADT) * (double)lim[i][k] / top;
				fprintf(f, "<line class=\"limit\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
					"y2=\"%.1f\"><title>budget: ", x - 1, x + bw - 1, y, y);
				esc(f, c[k].g->label);
				fprintf(f, " %s &lt;= ", bar_figs[i].key);
				put_bytes(f, lim[i][k]);
				fputs("</title></line>", f);
			}
		}
		fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
			gx + (gw - 16) / 2, CH - PADB + 18, bar_figs[i].label);
	}
	fputs("</svg>", f);
}

/* Live bytes (dashed), RSS (solid) and retained bytes (dots) over the
 * region's seconds, every allocator on the same axes. */
static void timeline_chart(FILE *f, const struct column *c, size_t nc)
{
	double tmax = 0, ymax = 0;
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; i < c[k].d.tl.n; i++) {
			const struct sample *s = &c[k].d.tl.v[i];
			if (s->seconds > tmax)
				tmax = s->seconds;
			uint64_t v[] = { s->live, s->rss, s->retained };
			for (size_t j = 0; j < 3; j++)
				if (v[j] != MEMCHECK_UNKNOWN && (double)v[j] > ymax)
					ymax = (double)v[j];
		}
	if (tmax <= 0)
		tmax = 1e-6;
	fprintf(f, "<svg class=\"chart timeline\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"role=\"img\"><title>live bytes, RSS and retained bytes over the region's time"
		"</title>", TW, CH, TW, CH);
	double top = y_axis(f, ymax, TW, CH);
	double xs = nice_step(tmax);
	for (double t = 0; t <= tmax + xs / 100; t += xs) {
		double x = PADL + (TW - PADL - 10) * t / tmax;
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g s</text>",
			x, CH - PADB + 16, t);
	}
	fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds since the "
		"region began (solid: RSS, dashed: live bytes, dots: retained)</text>",
		PADL + (TW - PADL) / 2, CH - 6);
	for (size_t k = 0; k < nc; k++) {
		const struct timeline *tl = &c[k].d.tl;
		if (!tl->n)
			continue;
		for (int which = 0; which < 2; which++) {
			fprintf(f, "<polyline data-alloc=\"%d\" class=\"%s\" stroke=\"%s\" points=\"",
				c[k].color, which ? "live" : "rss", COLOR(c[k].color));
			for (size_t i = 0; i < tl->n; i++) {
				uint64_t v = which ? tl->v[i].live : tl->v[i].rss;
				if (v == MEMCHECK_UNKNOWN || isnan(tl->v[i].seconds))
					continue;
				fprintf(f, "%.1f,%.1f ", PADL + (TW - PADL - 10) * tl->v[i].seconds / tmax,
					CH - PADB - (CH - PADB - PADT) * (double)v / top);
			}
			fputs("\"><title>", f);
			esc(f, c[k].g->label);
			fputs(which ? ": live bytes" : ": RSS", f);
			fputs("</title></polyline>", f);
		}
		for (size_t i = 0; i < tl->n; i++) {
			const struct sample *s = &tl->v[i];
			if (s->retained == MEMCHECK_UNKNOWN || isnan(s->seconds))
				continue;
			fprintf(f, "<circle data-alloc=\"%d\" r=\"2.5\" fill=\"%s\" cx=\"%.1f\" cy=\"%.1f\">"
				"<title>", c[k].color, COLOR(c[k].color),
				PADL + (TW - PADL - 10) * s->seconds / tmax,
				CH - PADB - (CH - PADB - PADT) * (double)s->retained / top);
			esc(f, c[k].g->label);
			fputs(": retained ", f);
			put_bytes(f, s->retained);
			fputs("</title></circle>", f);
		}
	}
	fputs("</svg>", f);
}

/* ---- tables -------------------------------------------------------------- */

static void legend(FILE *f, const struct group *groups, size_t ng)
{
	fputs("<p class=\"legend\">", f);
	for (size_t i = 0; i < ng; i++) {
		fprintf(f, "<span data-alloc=\"%zu\"><i style=\"background:%s\"></i>", i, COLOR(i));
		esc(f, groups[i].label);
		if (groups[i].baseline)
			fputs(" (baseline)", f);
		if (groups[i].skipped) {
			fputs(": ", f);
			esc(f, groups[i].skipped);
		}
		fputs("</span> ", f);
	}
	fputs("</p>\n", f);
}

/* Each "; "-separated message as a list item. */
static void violations(FILE *f, const char *v, const char *more)
{
	fputs("<ul class=\"why\">", f);
	for (int which = 0; which < 2; which++) {
		const char *s = which ? more : v;
		while (s && *s) {
			const char *end = strstr(s, "; ");
			size_t len = end ? (size_t)(end - s) : strlen(s);
			char *one = xasprintf("%.*s", (int)len, s);
			if (!which || !strstr(v, one)) {
				fputs("<li>", f);
				esc(f, short_path(one));
				fputs("</li>", f);
			}
			free(one);
			s += len + (end ? 2 : 0);
		}
	}
	fputs("</ul>", f);
}

static void region_title(FILE *f, const struct key *k)
{
	esc(f, base_name(k->first->m.program));
	fputs(" &middot; ", f);
	esc(f, k->first->m.r.name);
	if (k->occ)
		fprintf(f, " #%zu", k->occ + 1);
}

static void verdict_table(FILE *f, struct group *groups, size_t ng, const struct pairing *p,
			  const struct key *keys, size_t nkeys)
{
	fputs("<table class=\"verdicts\"><thead><tr><th>program &middot; region</th><th>allocator"
	      "</th><th>runs</th><th>peak RSS</th><th>peak live</th><th>retained</th><th>lost (d+i)"
	      "</th><th>reachable</th><th>verdict</th></tr></thead><tbody>\n", f);
	for (size_t k = 0; k < nkeys; k++)
		for (size_t gi = 0; gi < ng; gi++) {
			const struct rec **v;
			size_t n = pairing_cell(p, k, gi, &v);
			if (!n) {
				free(v);
				continue;
			}
			/* failed in a process that exited non-zero on its
			 * own: not counted (rec_own_end), "exited N" */
			size_t nfail = 0, nown = 0;
			const struct rec *failed = NULL, *own = NULL;
			for (size_t i = 0; i < n; i++)
				if (v[i]->own_end) {
					nown++;
					own = own ? own : v[i];
				} else if (v[i]->fail) {
					nfail++;
					failed = failed ? failed : v[i];
				}
			const struct rec *r = representative(p, gi, k);
			struct memcheck_result whole, *x = &whole;
			rec_result(r, &whole);
			uint64_t lost = x->definitely_lost.bytes;
			if (lost != MEMCHECK_UNKNOWN && x->indirectly_lost.bytes != MEMCHECK_UNKNOWN)
				lost += x->indirectly_lost.bytes;
			fprintf(f, "<tr class=\"%s\"><td><a href=\"#r%zu\">",
				nfail ? "fail" : nown ? "exited" : "pass", k);
			region_title(f, &keys[k]);
			fprintf(f, "</a></td><td data-alloc=\"%zu\">", gi);
			esc(f, groups[gi].label);
			fprintf(f, "</td><td>%zu</td>", n);
			uint64_t figs[] = { x->peak_rss, x->peak_live_bytes, x->retained_bytes, lost,
					    x->still_reachable.bytes };
			for (size_t i = 0; i < MC_ARRAY_SIZE(figs); i++) {
				fputs("<td class=\"num\">", f);
				put_bytes(f, figs[i]);
				fputs("</td>", f);
			}
			if (nfail) {
				fputs("<td>FAIL", f);
				if (n > 1)
					fprintf(f, " %zu/%zu", nfail, n);
				violations(f, failed->m.r.violations, failed->cli);
				fputs("</td>", f);
			} else if (nown) {
				fprintf(f, "<td>exited %u", (unsigned)(own->m.exit_status & 0xff));
				if (n > 1)
					fprintf(f, " %zu/%zu", nown, n);
				fputs(" (not counted: its status told whatever ran it)", f);
				violations(f, own->m.r.violations, own->cli);
				fputs("</td>", f);
			} else {
				fputs("<td>pass</td>", f);
			}
			fputs("</tr>\n", f);
			free(v);
		}
	fputs("</tbody></table>\n", f);
}

static void frame_line(FILE *f, const struct dframe *fr)
{
	esc(f, fr->function);
	if (fr->file) {
		fputs(" (", f);
		esc(f, short_path(fr->file));
		fprintf(f, ":%ld)", fr->line);
	} else if (fr->object[0]) {
		fputs(" (in ", f);
		esc(f, fr->object);
		fputs(")", f);
	}
	if (fr->inlined)
		fputs(" [inlined]", f);
}

static void stack_block(FILE *f, const struct stack *st)
{
	fputs("<ol class=\"stack\">", f);
	for (size_t i = 0; i < st->n; i++) {
		fputs("<li>", f);
		frame_line(f, &st->f[i]);
		fputs("</li>", f);
	}
	if (!st->n)
		fputs("<li>(no stack recorded)</li>", f);
	fputs("</ol>", f);
}

/* The peak's sites of every allocator in one table: a row per site
 * label, a column per allocator. */
static void sites_table(FILE *f, const struct column *c, size_t nc)
{
	char **labels = NULL;
	const struct stack **stacks = NULL;
	size_t nl = 0;
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; i < c[k].d.peak.n; i++) {
			char *l = site_label(&c[k].d.peak.sites[i].st);
			size_t j = 0;
			while (j < nl && strcmp(labels[j], l))
				j++;
			if (j < nl) {
				free(l);
				continue;
			}
			labels = xrealloc(labels, (nl + 1) * sizeof *labels);
			stacks = xrealloc(stacks, (nl + 1) * sizeof *stacks);
			labels[nl] = l;
			stacks[nl++] = &c[k].d.peak.sites[i].st;
		}
	if (!nl) {
		free(labels);
		free(stacks);
		return;
	}
	fputs("<h3>Where the memory was at the peak of live bytes</h3>\n<table class=\"sites\">"
	      "<thead><tr><th>site (allocation call)</th>", f);
	for (size_t k = 0; k < nc; k++) {
		fprintf(f, "<th data-alloc=\"%d\">", c[k].color);
		esc(f, c[k].g->label);
		fputs("</th>", f);
	}
	fputs("</tr></thead><tbody>\n", f);
	for (size_t j = 0; j < nl; j++) {
		fputs("<tr><td><details><summary>", f);
		esc(f, labels[j]);
		fputs("</summary>", f);
		stack_block(f, stacks[j]);
		fputs("</details></td>", f);
		for (size_t k = 0; k < nc; k++) {
			/* the line's figures, all of its stacks (a
			 * recursive caller's depths are stacks of their
			 * own); an older report's stacks the label names,
			 * summed */
			uint64_t bytes = 0, blocks = 0;
			size_t hits = 0;
			for (size_t i = 0; i < c[k].d.peak.n; i++) {
				char *l = site_label(&c[k].d.peak.sites[i].st);
				if (!strcmp(l, labels[j])) {
					bytes += c[k].d.peak.sites[i].bytes;
					blocks += c[k].d.peak.sites[i].blocks;
					hits += c[k].d.peak.sites[i].stacks;
				}
				free(l);
			}
			fputs("<td class=\"num\">", f);
			if (hits) {
				put_bytes(f, bytes);
				fprintf(f, "<br><small>%llu blocks", (unsigned long long)blocks);
				if (hits > 1)
					fprintf(f, ", %zu stacks", hits);
				fputs("</small>", f);
			} else {
				fputs("-", f);
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("<tr class=\"total\"><td>all live blocks at the peak (other sites summed in)</td>", f);
	for (size_t k = 0; k < nc; k++) {
		fputs("<td class=\"num\">", f);
		if (c[k].d.peak.have)
			put_bytes(f, c[k].d.peak.bytes);
		else
			fputs("-", f);
		fputs("</td>", f);
	}
	fputs("</tr></tbody></table>\n", f);
	for (size_t k = 0; k < nc; k++)
		if (c[k].d.peak.by_stack && c[k].d.peak.n) {
			fputs("<p><small>A report of an older memcheck lists the largest stacks: "
			      "its line sums only its stacks among them.</small></p>\n", f);
			break;
		}
	for (size_t j = 0; j < nl; j++)
		free(labels[j]);
	free(labels);
	free(stacks);
}

static void leaks_list(FILE *f, const struct column *c, size_t nc)
{
	bool any = false;
	for (size_t k = 0; k < nc; k++)
		any |= c[k].d.nleaks > 0;
	if (!any)
		return;
	fputs("<h3>Left behind</h3>\n", f);
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; i < c[k].d.nleaks; i++) {
			const struct leak *l = &c[k].d.leaks[i];
			char *where = site_label(&l->st);
			fprintf(f, "<details class=\"leak\"><summary><b data-alloc=\"%d\">", c[k].color);
			esc(f, c[k].g->label);
			fputs("</b>: ", f);
			put_bytes(f, l->bytes);
			fprintf(f, " in %llu blocks ", (unsigned long long)l->blocks);
			esc(f, l->kind);
			fputs(" at ", f);
			esc(f, where);
			fputs("</summary>", f);
			stack_block(f, &l->st);
			fputs("</details>\n", f);
			free(where);
		}
}

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:36px;border-top:1px solid #ddd;padding-top:12px}"
	"h3{font-size:15px}table{border-collapse:collapse;margin:8px 0}"
	"th,td{border-bottom:1px solid #e4e4e4;padding:3px 8px;text-align:left;vertical-align:top}"
	"td.num{text-align:right;white-space:nowrap}tr.fail td:last-child{color:#b00020;font-weight:600}"
	"tr.exited td:last-child{color:#8a5a00;font-weight:600}"
	"tr.total td{font-style:italic}ul.why{margin:2px 0;padding-left:18px;font-weight:400;color:#222}"
	".legend span{margin-right:14px;cursor:default}.legend i{display:inline-block;width:12px;"
	"height:12px;margin-right:4px;vertical-align:-1px}"
	"svg.chart{border:1px solid #eee;margin:4px 12px 4px 0;background:#fff}"
	".grid{stroke:#eee}.tick{font-size:10px;fill:#666}.label{font-size:11px;fill:#444}"
	".limit{stroke:#b00020;stroke-width:2;stroke-dasharray:4 2}"
	"polyline{fill:none;stroke-width:1.8}polyline.live{stroke-dasharray:5 3}"
	"ol.stack{margin:4px 0;padding-left:22px;font:12px monospace}"
	"body.focus [data-alloc]{opacity:.2}body.focus [data-alloc].on{opacity:1}"
	".charts{display:flex;flex-wrap:wrap}";

/* Only the page's own behaviour: highlight an allocator, and say it
 * rendered.  Nothing from the records is in it. */
static const char script[] =
	"(function(){var b=document.body,n=0;"
	"window.addEventListener('error',function(){n++;b.setAttribute('data-errors',n);});"
	"var items=document.querySelectorAll('.legend [data-alloc]');"
	"items.forEach(function(it){var a=it.getAttribute('data-alloc');"
	"it.addEventListener('mouseenter',function(){b.classList.add('focus');"
	"document.querySelectorAll('[data-alloc=\"'+a+'\"]').forEach(function(e){e.classList.add('on');});});"
	"it.addEventListener('mouseleave',function(){b.classList.remove('focus');"
	"document.querySelectorAll('.on').forEach(function(e){e.classList.remove('on');});});});"
	"b.setAttribute('data-charts',document.querySelectorAll('svg.chart').length);"
	"b.setAttribute('data-ready','1');})();";

bool write_html(const char *path, struct group *groups, size_t ng, const char *sources,
		const struct mc_budget *b)
{
	FILE *f = open_written(path);
	if (!f)
		return false;
	size_t nkeys;
	struct pairing *p = pairing_new(groups, ng);
	const struct key *keys = pairing_rows(p, &nkeys);
	const struct group *base = baseline_group(groups, ng);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
	      "<meta name=\"viewport\" content=\"width=device-width\"><title>memcheck report</title>"
	      "<style>", f);
	fputs(style, f);
	fputs("</style></head><body>\n<h1>memcheck report</h1>\n<p>", f);
	esc(f, sources);
	fprintf(f, " &middot; memcheck %s</p>\n", MEMCHECK_VERSION);
	legend(f, groups, ng);
	verdict_table(f, groups, ng, p, keys, nkeys);
	for (size_t k = 0; k < nkeys; k++) {
		struct column *c = xcalloc(ng ? ng : 1, sizeof *c);
		size_t nc = 0;
		bool timeline = false;
		for (size_t gi = 0; gi < ng; gi++) {
			const struct rec *r = representative(p, gi, k);
			if (!r)
				continue;
			c[nc].g = &groups[gi];
			c[nc].color = (int)gi;
			c[nc].r = r;
			detail_read(r, &c[nc].d);
			timeline |= c[nc].d.tl.n > 0;
			nc++;
		}
		const struct rec *bl = base ? representative(p, (size_t)(base - groups), k) : NULL;
		fprintf(f, "<h2 id=\"r%zu\">", k);
		region_title(f, &keys[k]);
		fputs("</h2>\n<div class=\"charts\">", f);
		bar_chart(f, c, nc, b, bl);
		if (timeline)
			timeline_chart(f, c, nc);
		fputs("</div>\n", f);
		sites_table(f, c, nc);
		leaks_list(f, c, nc);
		for (size_t i = 0; i < nc; i++)
			detail_free(&c[i].d);
		free(c);
	}
	fputs("<script>", f);
	fputs(script, f);
	fputs("</script>\n</body></html>\n", f);
	pairing_free(p);
	return close_written(f, path);
}
