/*
 * budget.c - budget files (memcheck-budget(5)): the report keys a rule
 * can name, and the parser.  budget_check.c checks a region's figures
 * against the parsed rules.
 *
 * The parser is written by hand, on purpose.  The format is line-based
 * with four kinds of line (blank/comment, "baseline NAME", "[GLOB @ALLOC]",
 * "KEY OP LIMIT"): a few hundred lines of C.  A library would cost more
 * than it gives.  It would be a dependency of a library that is preloaded
 * into programs that do not expect one; most INI/TOML readers call malloc
 * (memcheck's own memory must come from mmap, or it shows up in the
 * program's figures and recurses into the hooks); inih, the small one
 * that need not, splits "peak_rss <= 8 MiB" at the '=' and leaves us to
 * parse the rest anyway; and none of them knows "256 MiB", "+10%" or
 * "1.25x", or says "line 12: unknown key 'peak_rs' (did you mean
 * peak_rss?)".  The price of a hand parser is the risk of bugs on odd
 * input: fuzz/fuzz_budget.c runs this file under libFuzzer with ASan and
 * UBSan (make fuzz-check), and its seed corpus under any compiler (make
 * fuzz-replay).
 *
 * Every malformed line gets exactly one message, "FILE:LINE: what was
 * expected", and parsing goes on to the next line so that one run shows
 * every mistake (up to MAX_ERRORS: more, and it is not a budget file).
 * err receives them '\n'-separated, whole lines only, the first always
 * (cut if err is too small for it), then how many did not fit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_LINE 4096            /* bytes in a line, newline excluded */
#define MAX_FILE (16u << 20)     /* bytes in a budget file */
#define ECHO 40                  /* bytes of the user's text quoted in a message */
#define MAX_ERRORS 50            /* then stop: it is not a budget file */

/* ---- the report keys that are numbers -------------------------------- */

/* One table: name, field of struct memcheck_result, kind, and whether
 * the figure is measured from the allocator or the system (it differs
 * between allocators: relative limits make sense, '==' does not) rather
 * than counted by memcheck from the program's own calls. */
#define MC_KEYS(X)                                                        \
	X("allocs", allocs, COUNT, 0)                                     \
	X("frees", frees, COUNT, 0)                                       \
	X("reallocs", reallocs, COUNT, 0)                                 \
	X("failed_allocs", failed_allocs, COUNT, 0)                       \
	X("bytes_allocated", bytes_allocated, BYTES, 0)                   \
	X("bytes_freed", bytes_freed, BYTES, 0)                           \
	X("live_blocks", live_blocks, COUNT, 0)                           \
	X("live_bytes", live_bytes, BYTES, 0)                             \
	X("peak_live_bytes", peak_live_bytes, BYTES, 0)                   \
	X("definitely_lost", definitely_lost.bytes, BYTES, 0)             \
	X("definitely_lost.blocks", definitely_lost.blocks, COUNT, 0)     \
	X("definitely_lost.bytes", definitely_lost.bytes, BYTES, 0)       \
	X("indirectly_lost", indirectly_lost.bytes, BYTES, 0)             \
	X("indirectly_lost.blocks", indirectly_lost.blocks, COUNT, 0)     \
	X("indirectly_lost.bytes", indirectly_lost.bytes, BYTES, 0)       \
	X("possibly_lost", possibly_lost.bytes, BYTES, 0)                 \
	X("possibly_lost.blocks", possibly_lost.blocks, COUNT, 0)         \
	X("possibly_lost.bytes", possibly_lost.bytes, BYTES, 0)           \
	X("still_reachable", still_reachable.bytes, BYTES, 0)             \
	X("still_reachable.blocks", still_reachable.blocks, COUNT, 0)     \
	X("still_reachable.bytes", still_reachable.bytes, BYTES, 0)       \
	X("suppressed", suppressed.bytes, BYTES, 0)                       \
	X("suppressed.blocks", suppressed.blocks, COUNT, 0)               \
	X("suppressed.bytes", suppressed.bytes, BYTES, 0)                 \
	X("double_frees", double_frees, COUNT, 0)                         \
	X("invalid_frees", invalid_frees, COUNT, 0)                       \
	X("retained_bytes", retained_bytes, BYTES, 1)                     \
	X("retained_after_release", retained_after_release, BYTES, 1)     \
	X("rss_begin", rss_begin, BYTES, 1)                               \
	X("rss_end", rss_end, BYTES, 1)                                   \
	X("peak_rss", peak_rss, BYTES, 1)                                 \
	X("seconds", seconds, SECONDS, 1)

const struct mc_key mc_keys[] = {
#define KEY(name, field, kind, measured) \
	{ name, offsetof(struct memcheck_result, field), MC_KEY_##kind, measured },
	MC_KEYS(KEY)
#undef KEY
};

const char *const mc_result_keys[] = {
#define KEY(name, field, kind, measured) name,
	MC_KEYS(KEY)
#undef KEY
	NULL
};

/* A seconds key must be the double, every other key a uint64_t. */
#define KEY(name, field, kind, measured)                                      \
	_Static_assert(_Generic(((struct memcheck_result *)0)->field,         \
				double: MC_KEY_##kind == MC_KEY_SECONDS,      \
				uint64_t: MC_KEY_##kind != MC_KEY_SECONDS,    \
				default: 0), name ": kind does not match its field");
MC_KEYS(KEY)
#undef KEY

const struct mc_key *mc_key_find(const char *s, size_t n)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(mc_keys); i++)
		if (strlen(mc_keys[i].name) == n && memcmp(mc_keys[i].name, s, n) == 0)
			return &mc_keys[i];
	return NULL;
}

/* ---- the parsed budget ----------------------------------------------- */

static const char *const allocators[] = { "glibc", "mimalloc", "jemalloc", "tcmalloc" };

void mc_budget_free(struct mc_budget *b)
{
	if (!b)
		return;
	mc_buf_free(&b->pool);
	mc_buf_free(&b->rules);
	mc_buf_free(&b->sections);
	mc_unmap(b, sizeof *b);
}

/* ---- parsing ----------------------------------------------------------- */

struct parser {
	struct mc_budget *b;
	const char *name;
	uint32_t line;
	char *err;
	size_t errlen, used;
	unsigned nerr, dropped;
	uint32_t section;        /* the section rules go to */
	bool seen_section;       /* a section line, good or bad, was read */
	bool bad_section;        /* the last one was bad: its rules are only
				  * checked, not kept */
	uint32_t stopped;        /* gave up after this line */
	/* Line of the absolute [0] and relative [1] limit on each figure in
	 * the current section, 0 for none: a second one is a slip. */
	uint32_t seen[2][MC_ARRAY_SIZE(mc_keys)];
};

/* One message for the current line (0: for the whole file). */
__attribute__((format(printf, 2, 3)))
static bool fail(struct parser *P, const char *fmt, ...)
{
	char msg[512];
	int n = P->line ? snprintf(msg, sizeof msg, "%.200s:%u: ", P->name, (unsigned)P->line)
			: snprintf(msg, sizeof msg, "%.200s: ", P->name);
	if (n < 0)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = strlen(msg);
	P->nerr++;
	if (!P->errlen)
		return false;
	/* The first message always, cut if it must be; later ones whole, and
	 * room kept for the count of those that did not fit. */
	size_t reserve = P->errlen >= 192 ? 96 : 0;
	if (P->nerr == 1) {
		snprintf(P->err, P->errlen, "%s", msg);
		P->used = strlen(P->err);
	} else if (!P->dropped && P->used + 1 + len + reserve < P->errlen) {
		P->err[P->used++] = '\n';
		memcpy(P->err + P->used, msg, len + 1);
		P->used += len;
	} else {
		P->dropped++;
	}
	return false;
}

/* The user's text for a message: at most ECHO bytes, then "...". */
struct echo {
	char s[ECHO + 4];
};
static const char *echo(struct echo *e, const char *s, size_t n)
{
	if (n > ECHO) {
		memcpy(e->s, s, ECHO);
		memcpy(e->s + ECHO, "...", 4);
	} else {
		memcpy(e->s, s, n);
		e->s[n] = 0;
	}
	return e->s;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static const char *skip_space(const char *p, const char *e)
{
	while (p < e && is_space(*p))
		p++;
	return p;
}

/* End of the whitespace-delimited token at p. */
static const char *token_end(const char *p, const char *e)
{
	while (p < e && !is_space(*p))
		p++;
	return p;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Edit distance, case-insensitive, of short words (capped at 64 bytes);
 * any answer above limit means "too far". */
static size_t distance(const char *a, size_t n, const char *b, size_t m, size_t limit)
{
	size_t row[65];
	if (n > 64 || m > 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0], least = row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j];
			size_t best = diag + (lower(a[i - 1]) != lower(b[j - 1]));
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
			if (best < least)
				least = best;
		}
		if (least > limit)
			return least;     /* it only grows from here */
	}
	return row[m];
}

/* The candidate nearest to the word, if it is near enough to be the
 * word the user meant. */
static const char *suggest(const char *w, size_t n, const char *const *cand, size_t ncand,
			   const char *extra)
{
	size_t limit = n <= 4 ? 1 : n <= 11 ? 2 : 3, best = SIZE_MAX;
	const char *pick = NULL;
	for (size_t i = 0; i <= ncand; i++) {
		const char *c = i < ncand ? cand[i] : extra;
		if (!c)
			continue;
		size_t m = strlen(c);
		if ((n > m ? n - m : m - n) > limit)
			continue;         /* cheap, and most candidates */
		size_t d = distance(w, n, c, m, limit);
		if (d <= limit && d < best)
			best = d, pick = c;
	}
	return pick;
}

static bool is_glob(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

/* An allocator as a section names it: one memcheck reports, or a path
 * glob for another one. */
static bool check_allocator(struct parser *P, const char *s, size_t n, const char *what)
{
	struct echo e;
	if (is_glob(s, n))
		return true;
	for (size_t i = 0; i < MC_ARRAY_SIZE(allocators); i++)
		if (strlen(allocators[i]) == n && memcmp(allocators[i], s, n) == 0)
			return true;
	const char *near = suggest(s, n, allocators, MC_ARRAY_SIZE(allocators), NULL);
	if (near)
		return fail(P, "unknown allocator '%s'%s (did you mean %s?)", echo(&e, s, n),
			    what, near);
	return fail(P, "unknown allocator '%s'%s (expected glibc, mimalloc, jemalloc, "
		    "tcmalloc, or a path glob such as */libhoard.so*)", echo(&e, s, n), what);
}

static uint32_t pool_put(struct parser *P, const char *s, size_t n)
{
	uint32_t off = (uint32_t)P->b->pool.len;
	mc_buf_put(&P->b->pool, s, n);
	mc_buf_put(&P->b->pool, "", 1);
	return off;
}

/* "[glob... @alloc...]" */
static bool parse_section(struct parser *P, const char *s, const char *e)
{
	struct echo ea, eb;
	const char *close = e;
	P->seen_section = true;
	while (close > s && close[-1] != ']')
		close--;
	if (close == s)
		return fail(P, "unterminated section '%s': expected ']' at the end of the line",
			    echo(&ea, s, (size_t)(e - s)));
	if (close != e) {
		const char *x = skip_space(close, e);
		return fail(P, "unexpected '%s' after the section's ']' (a comment starts "
			    "with '#' after a space)", echo(&ea, x, (size_t)(e - x)));
	}
	struct mc_section sec = { .line = P->line, .str = (uint32_t)P->b->pool.len };
	const char *in = s + 1, *in_end = e - 1, *first_alloc = NULL;
	/* Globs first, then allocators: two passes keep them in that order. */
	for (int pass = 0; pass < 2; pass++) {
		for (const char *p = skip_space(in, in_end); p < in_end;
		     p = skip_space(p, in_end)) {
			const char *t = token_end(p, in_end);
			size_t n = (size_t)(t - p);
			if (p[0] == '@') {
				if (pass == 0) {
					if (n == 1)
						return fail(P, "expected an allocator name after '@' "
							    "(e.g. [* @mimalloc])");
					if (!check_allocator(P, p + 1, n - 1, ""))
						return false;
					if (!first_alloc)
						first_alloc = p;
				} else {
					pool_put(P, p + 1, n - 1);
					sec.nalloc++;
				}
			} else if (pass == 0) {
				pool_put(P, p, n);
				sec.nglob++;
			}
			p = t;
		}
		if (pass == 0 && sec.nglob == 0) {
			P->b->pool.len = sec.str;
			if (first_alloc)
				return fail(P, "empty glob before '%s': write [* %s] for every "
					    "region", echo(&ea, first_alloc,
						(size_t)(token_end(first_alloc, in_end) - first_alloc)),
					    echo(&eb, first_alloc,
						(size_t)(token_end(first_alloc, in_end) - first_alloc)));
			return fail(P, "empty section '[]': write [*] for every region");
		}
	}
	P->section = P->b->nsections++;
	memset(P->seen, 0, sizeof P->seen);
	mc_buf_put(&P->b->sections, (const char *)&sec, sizeof sec);
	return true;
}

/* "baseline NAME" */
static bool parse_baseline(struct parser *P, const char *p, const char *e)
{
	struct echo ea;
	p = skip_space(p, e);
	if (p == e)
		return fail(P, "expected an allocator name after 'baseline' (e.g. baseline glibc)");
	const char *t = token_end(p, e);
	size_t n = (size_t)(t - p);
	const char *rest = skip_space(t, e);
	if (rest < e)
		return fail(P, "unexpected '%s' after the baseline allocator (one name only)",
			    echo(&ea, rest, (size_t)(e - rest)));
	if (memchr(p, '*', n) || memchr(p, '?', n) || memchr(p, '[', n))
		return fail(P, "the baseline is one allocator, its name or its path, not a "
			    "glob: '%s'", echo(&ea, p, n));
	if (!memchr(p, '/', n) && !check_allocator(P, p, n, " for the baseline"))
		return false;
	if (P->b->baseline_line)
		return fail(P, "duplicate baseline line (the first is line %u)",
			    (unsigned)P->b->baseline_line);
	if (P->seen_section)
		return fail(P, "the baseline line must come before the first [section]: "
			    "it applies to the whole file");
	P->b->baseline = pool_put(P, p, n);
	P->b->baseline_line = P->line;
	return true;
}

/* Digits with an optional fraction: ip + frac / den. */
struct number {
	uint64_t ip;
	uint64_t frac, den;
};

/* Scan a number at p; returns its end, or NULL when it is not one
 * (*toolarge set when it is only too large). */
static const char *scan_number(const char *p, const char *e, struct number *n, bool *toolarge)
{
	*n = (struct number){ 0, 0, 1 };
	*toolarge = false;
	if (p == e || !is_digit(*p))
		return NULL;
	for (; p < e && is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (n->ip > (UINT64_MAX - d) / 10)
			*toolarge = true;
		else
			n->ip = n->ip * 10 + d;
	}
	if (p < e && *p == '.') {
		p++;
		if (p == e || !is_digit(*p))
			return NULL;
		/* Nine digits are plenty; the rest are read and dropped. */
		for (; p < e && is_digit(*p); p++)
			if (n->den < 1000000000u)
				n->frac = n->frac * 10 + (uint64_t)(*p - '0'), n->den *= 10;
	}
	/* What follows a number: a space, the end, '%', or a unit's letters
	 * (never 'e' then a digit: no exponents). */
	if (p < e && (is_digit(*p) || *p == '.' || *p == ',' || *p == '_'))
		return NULL;
	if (p + 1 < e && (*p == 'e' || *p == 'E') && (is_digit(p[1]) || p[1] == '+' || p[1] == '-'))
		return NULL;
	return *toolarge ? NULL : p;
}

struct unit {
	const char *name;
	uint64_t mult;
	bool si;
};
static const struct unit byte_units[] = {
	{ "B", 1, false }, { "KiB", 1ull << 10, false }, { "MiB", 1ull << 20, false },
	{ "GiB", 1ull << 30, false }, { "TiB", 1ull << 40, false },
	{ "KB", 1000, true }, { "MB", 1000000, true }, { "GB", 1000000000, true },
	{ "TB", 1000000000000ull, true },
};
static const char *const byte_unit_names[] = { "B", "KiB", "MiB", "GiB", "TiB",
					       "KB", "MB", "GB", "TB" };
static const char *const second_unit_names[] = { "s", "ms", "us" };
static const double second_mults[] = { 1, 1e-3, 1e-6 };

static int unit_index(const char *const *names, size_t count, const char *u, size_t n)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == n && memcmp(names[i], u, n) == 0)
			return (int)i;
	return -1;
}

static bool bad_unit(struct parser *P, const struct mc_key *k, const char *u, size_t n,
		     const char *const *names, size_t count, const char *expected)
{
	struct echo e;
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == n && strncasecmp(names[i], u, n) == 0)
			return fail(P, "unknown unit '%s' for %s (did you mean %s? units are "
				    "case-sensitive)", echo(&e, u, n), k->name, names[i]);
	return fail(P, "unknown unit '%s' for %s (expected %s)", echo(&e, u, n), k->name,
		    expected);
}

/* "KEY OP LIMIT", the key already read. */
static bool parse_rule(struct parser *P, const struct mc_key *k, const char *p, const char *e)
{
	struct echo ea, eb;
	struct mc_rule rule = { .line = P->line, .section = P->section,
				.key = (uint8_t)(k - mc_keys) };
	/* operator */
	const char *op = p;
	while (p < e && (*p == '<' || *p == '>' || *p == '=' || *p == '!'))
		p++;
	size_t oplen = (size_t)(p - op);
	if (oplen == 2 && op[0] == '<' && op[1] == '=')
		rule.op = MC_OP_LE;
	else if (oplen == 1 && op[0] == '<')
		rule.op = MC_OP_LT;
	else if (oplen == 2 && op[0] == '=' && op[1] == '=')
		rule.op = MC_OP_EQ;
	else if (oplen && (op[0] == '>' || op[0] == '!'))
		return fail(P, "a budget is an upper limit: expected <=, < or == after %s, got '%s'",
			    k->name, echo(&ea, op, oplen));
	else if (oplen)
		return fail(P, "expected <=, < or == after %s, got '%s'", k->name,
			    echo(&ea, op, oplen));
	else if (p == e)
		return fail(P, "expected an operator (<=, < or ==) and a limit after %s", k->name);
	else
		return fail(P, "expected an operator (<=, < or ==) after %s, got '%s'", k->name,
			    echo(&ea, p, (size_t)(token_end(p, e) - p)));
	if (rule.op == MC_OP_EQ && k->measured)
		return fail(P, "'==' needs a figure memcheck counts exactly; %s is measured "
			    "and varies from run to run: use <= or <", k->name);

	/* limit: N [unit] | +N% | -N% | N x */
	p = skip_space(p, e);
	if (p == e)
		return fail(P, "expected a limit after %s %.*s (a number, +N%% or a ratio such "
			    "as 1.25x)", k->name, (int)oplen, op);
	const char *tok = p, *tok_end = token_end(p, e);
	size_t toklen = (size_t)(tok_end - tok);
	char sign = 0;
	if (*p == '+' || *p == '-')
		sign = *p++;
	struct number num;
	bool toolarge;
	const char *q = scan_number(p, e, &num, &toolarge);
	if (toolarge)
		return fail(P, "number too large: '%s'", echo(&ea, tok, toklen));
	if (!q && p < e && (is_digit(*p) || *p == '.'))
		return fail(P, "bad number '%s': expected digits with an optional fraction, "
			    "such as 1000 or 2.5", echo(&ea, tok, toklen));
	if (!q)
		return fail(P, "expected a limit after %s %.*s (a number, +N%% or a ratio such "
			    "as 1.25x), got '%s'", k->name, (int)oplen, op, echo(&ea, tok, toklen));
	p = skip_space(q, e);
	double value = (double)num.ip + (double)num.frac / (double)num.den;
	const char *u = p;
	while (p < e && (is_alpha(*p) || *p == '%'))
		p++;
	size_t ulen = (size_t)(p - u);
	if (p < e && *p == '#')
		return fail(P, "unexpected '%s' after the limit (a comment starts with '#' "
			    "after a space)", echo(&ea, p, (size_t)(e - p)));
	if (p < e && !is_space(*p))
		return fail(P, "bad limit '%s': expected a number, then a unit, %% or x",
			    echo(&ea, tok, (size_t)(token_end(p, e) - tok)));
	const char *rest = skip_space(p, e);
	if (rest < e)
		return fail(P, "unexpected '%s' after the limit (a comment starts with '#')",
			    echo(&ea, rest, (size_t)(e - rest)));
	size_t limlen = (size_t)(p - tok);

	if (ulen == 1 && *u == '%') {
		if (!sign)
			return fail(P, "'%s' is ambiguous: write +%s for that much over the "
				    "baseline's figure, or a ratio such as 1.1x",
				    echo(&ea, tok, limlen), echo(&eb, tok, limlen));
		if (sign == '-' && value >= 100)
			return fail(P, "a relative limit must be above -100%%, got '%s'",
				    echo(&ea, tok, limlen));
		rule.form = MC_FORM_PCT;
		rule.f = sign == '-' ? -value : value;
	} else if (sign == '-') {
		return fail(P, "a limit cannot be negative: '%s' (a relative one is written "
			    "-N%%)", echo(&ea, tok, limlen));
	} else if (sign) {
		return fail(P, "'%s': a relative limit is a percentage such as +10%%; an "
			    "absolute one has no sign", echo(&ea, tok, limlen));
	} else if (ulen == 1 && (*u == 'x' || *u == 'X')) {
		if (value <= 0)
			return fail(P, "a ratio must be more than 0, got '%s'", echo(&ea, tok, limlen));
		rule.form = MC_FORM_RATIO;
		rule.f = value;
	} else if (memchr(u, '%', ulen)) {
		return fail(P, "bad limit '%s': expected a number, then a unit, %% or x",
			    echo(&ea, tok, limlen));
	} else {
		rule.form = MC_FORM_ABS;
	}

	if (rule.form != MC_FORM_ABS) {
		if (rule.op == MC_OP_EQ)
			return fail(P, "'==' takes an absolute limit, not '%s'", echo(&ea, tok, limlen));
		if (!k->measured)
			return fail(P, "%s is counted from the program's own calls and is the "
				    "same under every allocator: give an absolute limit, not '%s'",
				    k->name, echo(&ea, tok, limlen));
		P->b->relative = true;
	} else if (k->kind == MC_KEY_COUNT) {
		if (ulen)
			return fail(P, "%s is a count: write a plain number, without '%s'",
				    k->name, echo(&ea, u, ulen));
		if (num.frac)
			return fail(P, "%s is a count: expected a whole number, got '%s'",
				    k->name, echo(&ea, tok, limlen));
		if (num.ip >= MEMCHECK_UNKNOWN)
			return fail(P, "limit too large: '%s'", echo(&ea, tok, limlen));
		rule.lim = num.ip;
	} else if (k->kind == MC_KEY_BYTES) {
		int i = ulen ? unit_index(byte_unit_names, MC_ARRAY_SIZE(byte_unit_names), u, ulen) : 0;
		if (i < 0)
			return bad_unit(P, k, u, ulen, byte_unit_names,
					MC_ARRAY_SIZE(byte_unit_names),
					"B, KiB, MiB, GiB, TiB, KB, MB, GB or TB");
		const struct unit *unit = &byte_units[i];
		unsigned __int128 whole = (unsigned __int128)num.ip * unit->mult;
		unsigned __int128 part = (unsigned __int128)num.frac * unit->mult;
		whole += part / num.den;
		if (whole >= MEMCHECK_UNKNOWN)
			return fail(P, "limit too large: '%s'", echo(&ea, tok, limlen));
		rule.lim = (uint64_t)whole;
		rule.inexact = part % num.den != 0;
		rule.si = unit->si;
		if (rule.op == MC_OP_EQ && rule.inexact)
			return fail(P, "'== %s' is not a whole number of bytes",
				    echo(&ea, tok, limlen));
	} else {
		int i = ulen ? unit_index(second_unit_names, MC_ARRAY_SIZE(second_unit_names),
					  u, ulen) : 0;
		if (i < 0)
			return bad_unit(P, k, u, ulen, second_unit_names,
					MC_ARRAY_SIZE(second_unit_names), "s, ms or us");
		rule.f = value * second_mults[i];
	}
	if (rule.form == MC_FORM_ABS && rule.op == MC_OP_LT && rule.lim == 0 && rule.f == 0 &&
	    !rule.inexact)
		return fail(P, "'%s < 0' can never hold: write %s <= 0", k->name, k->name);

	if (P->bad_section)
		return true;
	/* Two limits of the same kind on one figure in one section: a slip.
	 * An alias ("definitely_lost") is the figure it names. */
	const struct mc_key *fig = mc_keys;
	while (fig->off != k->off || fig->kind != k->kind)
		fig++;
	uint32_t *seen = &P->seen[rule.form != MC_FORM_ABS][fig - mc_keys];
	if (*seen)
		return fail(P, "%s already has %s limit in this section (line %u)",
			    k->name, rule.form == MC_FORM_ABS ? "an absolute" : "a relative",
			    (unsigned)*seen);
	*seen = P->line;
	mc_buf_put(&P->b->rules, (const char *)&rule, sizeof rule);
	P->b->nrules++;
	return true;
}

/* Everything that is not a section: a rule, or the baseline line. */
static bool parse_statement(struct parser *P, const char *s, const char *e)
{
	struct echo ea;
	const char *p = s;
	while (p < e && !is_space(*p) && *p != '<' && *p != '=' && *p != '>' && *p != '!')
		p++;
	size_t n = (size_t)(p - s);
	if (n == 0)
		return fail(P, "expected a key, 'baseline' or a [section], got '%s'",
			    echo(&ea, s, (size_t)(e - s)));
	const char *after = skip_space(p, e);
	bool has_op = after < e && (*after == '<' || *after == '=' || *after == '>' ||
				    *after == '!');
	if (n == 8 && memcmp(s, "baseline", 8) == 0 && !has_op)
		return parse_baseline(P, p, e);
	const struct mc_key *k = mc_key_find(s, n);
	if (!k) {
		/* No time spent on a suggestion that err has no room for. */
		const char *near = P->dropped || !P->errlen ? NULL :
			suggest(s, n, mc_result_keys, MC_ARRAY_SIZE(mc_keys),
				has_op ? NULL : "baseline");
		if (near)
			return fail(P, "unknown key '%s' (did you mean %s?)", echo(&ea, s, n), near);
		return fail(P, "unknown key '%s' (the keys are listed in memcheck-budget(5))",
			    echo(&ea, s, n));
	}
	return parse_rule(P, k, after, e);
}

static void parse_line(struct parser *P, const char *s, size_t n)
{
	P->line++;
	if (n > MAX_LINE) {
		fail(P, "line longer than %d bytes", MAX_LINE);
		return;
	}
	if (n && s[n - 1] == '\r')
		n--;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0) {
			fail(P, "NUL byte at column %zu: a budget file is text", i + 1);
			return;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			fail(P, "control character 0x%02x at column %zu", c, i + 1);
			return;
		}
	}
	/* A comment starts at '#' at the start of the line or after a space,
	 * so that region names and globs may hold '#'. */
	for (size_t i = 0; i < n; i++)
		if (s[i] == '#' && (i == 0 || is_space(s[i - 1]))) {
			n = i;
			break;
		}
	const char *e = s + n;
	s = skip_space(s, e);
	while (e > s && is_space(e[-1]))
		e--;
	if (s == e)
		return;
	if (*s == '[')
		P->bad_section = !parse_section(P, s, e);
	else
		parse_statement(P, s, e);
}

/* name as the messages give it: a control character as '?' (one
 * message a line, and gate.c logs them a line each: a newline in a name
 * made two, the region's violation "budget not applied: /tmp/x" of
 * "/tmp/x\ny"; mc_log and the JSON escape the rest, so not escaped
 * here, which they would escape again), and a name longer than 256
 * bytes cut to its first 128 (a 5,000-byte path filled mc_log's line of
 * 1 KiB: "cannot open" and what was expected lost; harden47). */
static const char *shown_name(const char *name, char *buf, size_t cap)
{
	if (!name)
		return "budget";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p && n + 1 < cap; p++)
		buf[n++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
	buf[n] = 0;
	if (n > 256) {
		size_t k = 128;
		while (k && ((unsigned char)buf[k] & 0xc0) == 0x80)
			k--;   /* not inside a UTF-8 sequence */
		memcpy(buf + k, "...", 4);
	}
	return buf;
}

struct mc_budget *mc_budget_parse(const char *text, size_t len, const char *name,
				  char *err, size_t errlen)
{
	char shown[1024];
	struct parser P = { .name = shown_name(name, shown, sizeof shown), .err = err,
			    .errlen = errlen };
	if (errlen)
		err[0] = 0;
	if (len > MAX_FILE) {
		fail(&P, "larger than %u MiB: not a budget file?", MAX_FILE >> 20);
		return NULL;
	}
	struct mc_budget *b = mc_map(sizeof *b);
	if (!b) {
		fail(&P, "out of memory");
		return NULL;
	}
	P.b = b;
	b->name = pool_put(&P, P.name, strlen(P.name));
	/* Section 0: rules before any section apply to every region. */
	struct mc_section all = { .nglob = 1, .str = pool_put(&P, "*", 1) };
	mc_buf_put(&b->sections, (const char *)&all, sizeof all);
	b->nsections = 1;
	/* A UTF-8 byte order mark, which some editors write first: read
	 * past (it made the first key "unknown", quoted invisibly) */
	size_t off0 = len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;
	for (size_t off = off0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		parse_line(&P, text + off, n);
		off += n + 1;
		/* Not a budget file at all, most likely: enough said. */
		if (P.nerr >= MAX_ERRORS && off < len) {
			P.dropped++;
			P.stopped = P.line;
			break;
		}
	}
	if (b->pool.oom || b->rules.oom || b->sections.oom || b->pool.len > UINT32_MAX) {
		P.line = 0;
		fail(&P, "out of memory");
	}
	if (P.nerr) {
		if (P.dropped && P.errlen) {
			char more[96];
			int m = P.stopped
				? snprintf(more, sizeof more, "\n%.20s: stopped after line %u: too "
					   "many errors", P.name, (unsigned)P.stopped)
				: snprintf(more, sizeof more, "\n%.20s: %u more errors", P.name,
					   P.dropped);
			if (m > 0 && P.used + (size_t)m < P.errlen)
				memcpy(P.err + P.used, more, (size_t)m + 1);
		}
		mc_budget_free(b);
		return NULL;
	}
	return b;
}

/* path read into text and parsed.  keep: the CLI's, which waits for a
 * FIFO's writer as cat(1) does (open(2) blocks until one opens it) and
 * is handed the text (run passes a copy to its processes, which cannot
 * read the FIFO again).  Else the library's: a FIFO without a writer is
 * opened at once, not waited for (the program would hang at its first
 * region's end), and refused, where it was read as an empty budget
 * that passed every region (harden43); one with a writer is read, the
 * reads waiting for the writer's end as before. */
static struct mc_budget *load_from(const char *path, const char *name, struct mc_buf *keep,
				   char *err, size_t errlen)
{
	if (!name)
		name = path;
	char shown[1024];
	struct parser P = { .name = shown_name(name, shown, sizeof shown), .err = err,
			    .errlen = errlen };
	if (errlen)
		err[0] = 0;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC | (keep ? 0 : O_NONBLOCK)) : -1;
	if (fd < 0) {
		const char *why = path ? strerror(errno) : "no file name";
		char copy[1024];
		if (path && strcmp(path, name) != 0) /* a copy: said as such */
			fail(&P, "cannot open its copy %s: %s", shown_name(path, copy, sizeof copy),
			     why);
		else
			fail(&P, "cannot open: %s", why);
		return NULL;
	}
	struct stat st;
	/* the first read of a FIFO without waiting: 0 says no writer */
	bool probe = !keep && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
	if (!probe)
		fcntl(fd, F_SETFL, 0);
	/* Read, not fstat+mmap: the file may be a pipe (<(...)). */
	struct mc_buf own = { 0 }, *text = keep ? keep : &own;
	char chunk[4096];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (probe && n == 0) {
			fail(&P, "a FIFO no process has open for writing: expected a budget file "
			     "(memcheck-budget(5)); not waited for");
			break;
		}
		if (probe) {
			probe = false;
			fcntl(fd, F_SETFL, 0);
			if (n < 0 && errno == EAGAIN)
				continue; /* a writer, nothing written yet */
		}
		if (n < 0) {
			fail(&P, "cannot read: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		mc_buf_put(text, chunk, (size_t)n);
		/* its memory short: out of memory below, not a read that
		 * never ends (/dev/zero: the length stays where it was) */
		if (text->oom)
			break;
		if (text->len > MAX_FILE) {
			fail(&P, "larger than %u MiB: not a budget file?", MAX_FILE >> 20);
			break;
		}
	}
	close(fd);
	if (text->oom && !P.nerr)
		fail(&P, "out of memory");
	struct mc_budget *b = P.nerr ? NULL : mc_budget_parse(text->s, text->len, name, err, errlen);
	mc_buf_free(&own);
	return b;
}

struct mc_budget *mc_budget_load(const char *path, const char *name, char *err, size_t errlen)
{
	return load_from(path, name, NULL, err, errlen);
}

struct mc_budget *mc_budget_load_waiting(const char *path, struct mc_buf *text, char *err,
					 size_t errlen)
{
	return load_from(path, NULL, text, err, errlen);
}

