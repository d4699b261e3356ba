/*
 * detail.c - the nested parts of a record, read back for the pictures
 * (html.c, export.c) and the table's peak sites (views.c): the leaks
 * with their stacks, the peak snapshot, the timeline.
 *
 * struct mc_record (lib/json.c) holds the flat figures in fixed arrays,
 * as the library needs them without malloc; these parts are lists of
 * any length, so they are read here from the record's line with json.c's
 * span readers (mc_jv_*) into allocated structures.  A record without
 * them (count-only, an older memcheck, MEMCHECK_TIMELINE unset) reads as
 * empty parts, not as an error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static char *jv_strdup(struct mc_jv v)
{
	size_t cap = (size_t)(v.end - v.p) + 1;   /* decoding never grows */
	char *s = xmalloc(cap);
	if (!mc_jv_str(v, s, cap))
		s[0] = 0;
	return s;
}

static uint64_t jv_u64(struct mc_jv obj, const char *key)
{
	struct mc_jv v;
	uint64_t n;
	if (!mc_jv_get(obj, key, &v) || !mc_jv_u64(v, &n))
		return MEMCHECK_UNKNOWN;
	return n;
}

static void read_stack(struct mc_jv arr, struct stack *st)
{
	struct mc_jv it = arr, fv;
	memset(st, 0, sizeof *st);
	while (mc_jv_next(&it, NULL, &fv)) {
		struct dframe f = { 0 };
		struct mc_jv v;
		f.function = mc_jv_get(fv, "function", &v) ? jv_strdup(v) : xstrdup("?");
		f.file = mc_jv_get(fv, "file", &v) && !mc_jv_null(v) ? jv_strdup(v) : NULL;
		uint64_t line = jv_u64(fv, "line");
		f.line = line == MEMCHECK_UNKNOWN ? 0 : (long)line;
		f.object = mc_jv_get(fv, "object", &v) ? jv_strdup(v) : xstrdup("");
		f.address = mc_jv_get(fv, "address", &v) ? jv_strdup(v) : xstrdup("");
		f.inlined = mc_jv_get(fv, "inlined", &v) && mc_jv_bool(v);
		f.alloc_fn = mc_jv_get(fv, "alloc_fn", &v) && mc_jv_bool(v);
		st->f = xrealloc(st->f, (st->n + 1) * sizeof *st->f);
		st->f[st->n++] = f;
	}
}

static void free_stack(struct stack *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->f[i].function);
		free(st->f[i].file);
		free(st->f[i].object);
		free(st->f[i].address);
	}
	free(st->f);
}

/* The peak's lines ("lines", the rest in "lines_other"); a report
 * before lines has only "sites" (its largest stacks, each a line of one
 * stack here: the printers group them by label, as they were printed
 * then), the rest in "other".  A report with lines keeps "sites" and
 * "other" too, for readers of those keys: they are not read here. */
static void read_peak(struct mc_jv rec, struct peak *pk)
{
	struct mc_jv p, sites, other, it, sv, v;
	if (!mc_jv_get(rec, "peak_snapshot", &p) || mc_jv_null(p))
		return;
	pk->have = true;
	pk->bytes = jv_u64(p, "live_bytes");
	pk->blocks = jv_u64(p, "live_blocks");
	pk->by_stack = !mc_jv_get(p, "lines", &sites);
	if (!pk->by_stack || mc_jv_get(p, "sites", &sites)) {
		it = sites;
		while (mc_jv_next(&it, NULL, &sv)) {
			struct site s = { .bytes = jv_u64(sv, "bytes"), .blocks = jv_u64(sv, "blocks") };
			s.stacks = pk->by_stack ? 1 : jv_u64(sv, "stacks");
			s.stack_bytes = pk->by_stack ? s.bytes : jv_u64(sv, "stack_bytes");
			s.stack_blocks = pk->by_stack ? s.blocks : jv_u64(sv, "stack_blocks");
			if (mc_jv_get(sv, "stack", &v))
				read_stack(v, &s.st);
			pk->sites = xrealloc(pk->sites, (pk->n + 1) * sizeof *pk->sites);
			pk->sites[pk->n++] = s;
		}
	}
	if (mc_jv_get(p, pk->by_stack ? "other" : "lines_other", &other)) {
		/* how many lines the rest holds is not known (naming them
		 * all would cost what listing them does): its stacks are */
		pk->other_sites = pk->by_stack ? jv_u64(other, "sites") : 0;
		pk->other_stacks = jv_u64(other, pk->by_stack ? "sites" : "stacks");
		pk->other_bytes = jv_u64(other, "bytes");
		pk->other_blocks = jv_u64(other, "blocks");
	}
}

/* One sample: [seconds, moved, live_bytes, rss, retained_bytes]. */
static void read_timeline(struct mc_jv rec, struct timeline *tl)
{
	struct mc_jv t, samples, it, sv, v;
	if (!mc_jv_get(rec, "timeline", &t) || mc_jv_null(t) || !mc_jv_get(t, "samples", &samples))
		return;
	tl->have = true;
	tl->step = jv_u64(t, "step");
	it = samples;
	while (mc_jv_next(&it, NULL, &sv)) {
		struct sample s = { NAN, MEMCHECK_UNKNOWN, MEMCHECK_UNKNOWN, MEMCHECK_UNKNOWN,
				    MEMCHECK_UNKNOWN };
		struct mc_jv col = sv;
		uint64_t *u[] = { &s.moved, &s.live, &s.rss, &s.retained };
		if (mc_jv_next(&col, NULL, &v))
			mc_jv_real(v, &s.seconds);
		for (size_t i = 0; i < MC_ARRAY_SIZE(u) && mc_jv_next(&col, NULL, &v); i++)
			mc_jv_u64(v, u[i]);
		tl->v = xrealloc(tl->v, (tl->n + 1) * sizeof *tl->v);
		tl->v[tl->n++] = s;
	}
}

static void read_leaks(struct mc_jv rec, struct detail *d)
{
	struct mc_jv leaks, it, lv, v;
	if (!mc_jv_get(rec, "leaks", &leaks))
		return;
	it = leaks;
	while (mc_jv_next(&it, NULL, &lv)) {
		struct leak l = { { 0 }, jv_u64(lv, "bytes"), jv_u64(lv, "blocks"), { 0 } };
		if (mc_jv_get(lv, "kind", &v))
			mc_jv_str(v, l.kind, sizeof l.kind);
		if (mc_jv_get(lv, "stack", &v))
			read_stack(v, &l.st);
		d->leaks = xrealloc(d->leaks, (d->nleaks + 1) * sizeof *d->leaks);
		d->leaks[d->nleaks++] = l;
	}
}

void detail_read(const struct rec *r, struct detail *d)
{
	memset(d, 0, sizeof *d);
	struct mc_jv rec;
	if (!r->line || !mc_jv_line(r->line, strlen(r->line), &rec))
		return;
	read_peak(rec, &d->peak);
	read_timeline(rec, &d->tl);
	read_leaks(rec, d);
}

size_t limit_shortfalls(const struct group *groups, size_t ng, char name[16], uint64_t *limit,
			uint64_t *bytes)
{
	size_t n = 0;
	*bytes = 0;
	for (size_t gi = 0; gi < ng; gi++)
		for (int rep = 0; rep < groups[gi].nreps && !groups[gi].stored; rep++)
			for (size_t k = 0; k < groups[gi].reps[rep].n; k++) {
				const struct rec *r = &groups[gi].reps[rep].v[k];
				struct mc_jv rec, s, res;
				char what[16];
				if (!r->line || !mc_jv_line(r->line, strlen(r->line), &rec) ||
				    !mc_jv_get(rec, "limit_shortfall", &s) ||
				    !mc_jv_get(s, "resource", &res) ||
				    !mc_jv_str(res, what, sizeof what))
					continue;
				uint64_t b = jv_u64(s, "memcheck_bytes");
				if (!n++) {
					memcpy(name, what, sizeof what);
					*limit = jv_u64(s, "limit");
				}
				if (b != MEMCHECK_UNKNOWN && b > *bytes)
					*bytes = b;
			}
	return n;
}

void detail_free(struct detail *d)
{
	for (size_t i = 0; i < d->peak.n; i++)
		free_stack(&d->peak.sites[i].st);
	free(d->peak.sites);
	free(d->tl.v);
	for (size_t i = 0; i < d->nleaks; i++)
		free_stack(&d->leaks[i].st);
	free(d->leaks);
	memset(d, 0, sizeof *d);
}

/* The frame a site is named by: the first past the allocation functions
 * the library marked (alloc_fn: MEMCHECK_ALLOC_FN, thin wrappers), as
 * lib/report.c's site_frame names it; the last when all are. */
const struct dframe *site_frame(const struct stack *st)
{
	size_t i = 0;
	while (i + 1 < st->n && st->f[i].alloc_fn)
		i++;
	return st->n ? &st->f[i] : NULL;
}

char *site_label(const struct stack *st)
{
	const struct dframe *f = site_frame(st);
	if (!f)
		return xstrdup("(no stack recorded)");
	if (f->file)
		return xasprintf("%s:%ld (%s)", short_path(f->file), f->line, f->function);
	return xasprintf("%s (in %s)", f->function, f->object[0] ? base_name(f->object) : "?");
}
