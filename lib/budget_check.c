/*
 * budget_check.c - a region's figures against a parsed budget
 * (budget.c): which rules apply to the region and allocator, whether
 * each holds, and for each that does not, one message naming the file
 * and line of the rule, the figure and the limit ("memcheck.budget:12:
 * peak_rss 70.1 MiB > 64.0 MiB"), relative limits with the baseline's
 * figure they came from.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---- a result's figures by key --------------------------------------- */

static uint64_t key_u64(const struct memcheck_result *r, const struct mc_key *k)
{
	uint64_t v;
	memcpy(&v, (const char *)r + k->off, sizeof v);
	return v;
}

static double key_seconds(const struct memcheck_result *r, const struct mc_key *k)
{
	double v;
	memcpy(&v, (const char *)r + k->off, sizeof v);
	return v;
}

/* seconds is a double and has no uint64_t value: false for it. */
bool mc_result_field(const struct memcheck_result *r, const char *key, uint64_t *v)
{
	const struct mc_key *k = key ? mc_key_find(key, strlen(key)) : NULL;
	if (!k || k->kind == MC_KEY_SECONDS)
		return false;
	*v = key_u64(r, k);
	return true;
}

/* ---- the parsed budget ----------------------------------------------- */

#define RULES(b) ((const struct mc_rule *)(b)->rules.s)
#define SECTIONS(b) ((const struct mc_section *)(b)->sections.s)
#define POOL(b, off) ((b)->pool.s + (off))

const char *mc_budget_baseline(const struct mc_budget *b)
{
	return b && b->baseline ? POOL(b, b->baseline) : "glibc";
}

const char *mc_budget_name(const struct mc_budget *b)
{
	return POOL(b, b->name);
}

bool mc_budget_relative(const struct mc_budget *b)
{
	return b && b->relative;
}

/* ---- checking ---------------------------------------------------------- */

static bool section_matches(const struct mc_budget *b, const struct mc_section *sec,
			    const char *region, const char *allocator)
{
	const char *s = POOL(b, sec->str);
	bool hit = false;
	for (uint32_t i = 0; i < sec->nglob; i++, s += strlen(s) + 1)
		if (!hit && fnmatch(s, region, 0) == 0)
			hit = true;
	if (!hit || sec->nalloc == 0)
		return hit;
	for (uint32_t i = 0; i < sec->nalloc; i++, s += strlen(s) + 1)
		if (allocator && fnmatch(s, allocator, 0) == 0)
			return true;
	return false;
}

/* Bytes for a message: exact below 10 KiB, else with one decimal in the
 * largest unit that keeps the figure at 1 or more ("5.0 MiB", not the
 * text report's "5120.0 KiB": limits are written "5 MiB"); in powers of
 * 1000 when the limit was written so. */
static void fmt_bytes(uint64_t v, bool si, char buf[48])
{
	static const char *const bin[] = { "KiB", "MiB", "GiB", "TiB" };
	static const char *const dec[] = { "KB", "MB", "GB", "TB" };
	double k = si ? 1000.0 : 1024.0, d = (double)v;
	if (d < 10 * k) {
		snprintf(buf, 48, "%llu B", (unsigned long long)v);
		return;
	}
	int i = 0;
	for (d /= k; i < 3 && d >= k; i++)
		d /= k;
	snprintf(buf, 48, "%.1f %s", d, si ? dec[i] : bin[i]);
}

static void fmt_value(const struct mc_key *k, bool si, uint64_t v, double f, char buf[48])
{
	if (k->kind == MC_KEY_SECONDS)
		snprintf(buf, 48, "%.3f s", f);
	else if (k->kind == MC_KEY_BYTES)
		fmt_bytes(v, si, buf);
	else
		mc_commas(v, buf);
}

/* Value and limit, with the exact figures when rounding made them look
 * the same. */
static void fmt_pair(const struct mc_key *k, bool si, uint64_t v, double fv, uint64_t lim,
		     double flim, char a[64], char b[64])
{
	char c[32];
	fmt_value(k, si, v, fv, a);
	fmt_value(k, si, lim, flim, b);
	if (strcmp(a, b) != 0 || (k->kind == MC_KEY_SECONDS ? fv == flim : v == lim))
		return;
	if (k->kind == MC_KEY_SECONDS) {
		snprintf(a, 64, "%.6f s", fv);
		snprintf(b, 64, "%.6f s", flim);
	} else {
		size_t n = strlen(a);
		snprintf(a + n, (size_t)(64 - n), " (%s B)", mc_commas(v, c));
		n = strlen(b);
		snprintf(b + n, (size_t)(64 - n), " (%s B)", mc_commas(lim, c));
	}
}

static const char *const op_broken[] = { ">", ">=", "!=" };

static bool holds(int op, long double v, long double lim)
{
	return op == MC_OP_LE ? v <= lim : op == MC_OP_LT ? v < lim : v == lim;
}

static void limit_text(const struct mc_rule *rule, char buf[32])
{
	if (rule->form == MC_FORM_PCT)
		snprintf(buf, 32, "%+g%%", rule->f);
	else
		snprintf(buf, 32, "%gx", rule->f);
}

/* The figure of k in r, as a long double; false when not measured. */
static bool figure(const struct mc_key *k, const struct memcheck_result *r, uint64_t *v, double *f)
{
	if (k->kind == MC_KEY_SECONDS) {
		*f = key_seconds(r, k);
		*v = 0;
		return *f >= 0;   /* false for NaN too */
	}
	*v = key_u64(r, k);
	*f = 0;
	return *v != MEMCHECK_UNKNOWN;
}

/* One rule against one region: true when it holds, else the message. */
static bool judge(const struct mc_budget *b, const struct mc_rule *rule, const char *region,
		  const struct memcheck_result *r, const struct memcheck_result *base,
		  char *msg, size_t size)
{
	const struct mc_key *k = &mc_keys[rule->key];
	const char *file = POOL(b, b->name);
	const char *bname = mc_budget_baseline(b);
	char lt[32], a[64], l[64], bv[64];
	uint64_t v, bu;
	double f, bf;
	if (!figure(k, r, &v, &f)) {
		snprintf(msg, size, "%s:%u: %s not measured", file, (unsigned)rule->line, k->name);
		return false;
	}
	if (rule->form == MC_FORM_ABS) {
		long double lim = k->kind == MC_KEY_SECONDS ? (long double)rule->f : rule->lim;
		long double x = k->kind == MC_KEY_SECONDS ? (long double)f : v;
		/* "< 0.5 KiB" on whole bytes is "<= 512". */
		int op = rule->op == MC_OP_LT && rule->inexact ? MC_OP_LE : rule->op;
		if (holds(op, x, lim))
			return true;
		fmt_pair(k, rule->si, v, f, rule->lim, rule->f, a, l);
		snprintf(msg, size, "%s:%u: %s %s %s %s", file, (unsigned)rule->line, k->name,
			 a, op_broken[rule->op], l);
		return false;
	}
	limit_text(rule, lt);
	if (!base) {
		snprintf(msg, size, "%s:%u: %s %s: no baseline for region '%s' (run the baseline "
			 "allocator first, or pass MEMCHECK_BASELINE)", file, (unsigned)rule->line,
			 k->name, lt, region);
		return false;
	}
	if (!figure(k, base, &bu, &bf)) {
		snprintf(msg, size, "%s:%u: %s %s: not measured under %s for region '%s'",
			 file, (unsigned)rule->line, k->name, lt, bname, region);
		return false;
	}
	long double factor = rule->form == MC_FORM_PCT ? 1 + (long double)rule->f / 100 : rule->f;
	long double bx = k->kind == MC_KEY_SECONDS ? (long double)bf : bu;
	long double x = k->kind == MC_KEY_SECONDS ? (long double)f : v;
	long double lim = bx * factor;
	if (holds(rule->op, x, lim))
		return true;
	uint64_t ulim = lim >= (long double)UINT64_MAX ? UINT64_MAX - 1 : (uint64_t)lim;
	fmt_pair(k, false, v, f, ulim, (double)lim, a, l);
	fmt_value(k, false, bu, bf, bv);
	snprintf(msg, size, "%s:%u: %s %s %s %s (%s%s %s's %s)", file, (unsigned)rule->line,
		 k->name, a, op_broken[rule->op], l, lt, rule->form == MC_FORM_PCT ? " of" : "",
		 bname, bv);
	return false;
}

int mc_budget_check(const struct mc_budget *b, const char *region, const char *allocator,
		    const struct memcheck_result *r, const struct memcheck_result *baseline,
		    char *out, size_t outlen)
{
	if (!b || !r)
		return 0;
	if (!region)
		region = "";
	size_t used = out && outlen ? strnlen(out, outlen) : 0;
	bool full = !out || used >= outlen;
	/* Under the baseline allocator, relative limits compare a figure
	 * with itself: they pass. */
	bool is_baseline = allocator && strcmp(allocator, mc_budget_baseline(b)) == 0;
	int violations = 0;
	uint32_t section = UINT32_MAX;
	bool match = false;
	for (uint32_t i = 0; i < b->nrules; i++) {
		const struct mc_rule *rule = &RULES(b)[i];
		/* A section's rules are together: match it once. */
		if (rule->section != section) {
			section = rule->section;
			match = section_matches(b, &SECTIONS(b)[section], region, allocator);
		}
		if (!match)
			continue;
		if (rule->form != MC_FORM_ABS && is_baseline)
			continue;
		char msg[1024];
		if (judge(b, rule, region, r, baseline, msg, sizeof msg))
			continue;
		violations++;
		if (full)
			continue;
		/* Whole messages only; "..." when the next does not fit. */
		const char *sep = used ? "; " : "";
		size_t need = strlen(sep) + strlen(msg);
		if (used + need < outlen) {
			memcpy(out + used, sep, strlen(sep));
			memcpy(out + used + strlen(sep), msg, strlen(msg) + 1);
			used += need;
		} else {
			full = true;
			const char *more = used ? "; ..." : "...";
			if (used + strlen(more) < outlen)
				memcpy(out + used, more, strlen(more) + 1);
		}
	}
	return violations;
}

/* Messages are "FILE:LINE: KEY ..." (judge): one of them names a peak. */
bool mc_violations_name_peak(const char *violations)
{
	return violations && (strstr(violations, ": peak_rss ") ||
			      strstr(violations, ": peak_live_bytes "));
}

bool mc_budget_limit(const struct mc_budget *b, const char *region, const char *allocator,
		     const char *key, const struct memcheck_result *baseline, uint64_t *lim)
{
	const struct mc_key *k = b && key ? mc_key_find(key, strlen(key)) : NULL;
	if (!k || k->kind == MC_KEY_SECONDS)
		return false;
	bool is_baseline = allocator && strcmp(allocator, mc_budget_baseline(b)) == 0;
	bool found = false;
	for (uint32_t i = 0; i < b->nrules; i++) {
		const struct mc_rule *rule = &RULES(b)[i];
		if (&mc_keys[rule->key] != k ||
		    !section_matches(b, &SECTIONS(b)[rule->section], region ? region : "", allocator))
			continue;
		uint64_t l;
		if (rule->form == MC_FORM_ABS) {
			l = rule->lim;
		} else {
			uint64_t bu;
			if (is_baseline || !baseline || (bu = key_u64(baseline, k)) == MEMCHECK_UNKNOWN)
				continue;
			long double f = rule->form == MC_FORM_PCT ? 1 + (long double)rule->f / 100 : rule->f;
			long double x = bu * f;
			l = x >= (long double)UINT64_MAX ? UINT64_MAX - 1 : (uint64_t)x;
		}
		if (!found || l < *lim)
			*lim = l;
		found = true;
	}
	return found;
}
