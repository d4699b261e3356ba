/*
 * json.c - read one line of a JSON Lines report (memcheck-report(5)) back
 * into a struct mc_record.
 *
 * The library reads its baseline report with this inside a program whose
 * malloc it is interposing, so nothing here allocates: the line is parsed
 * in place, strings are decoded straight into the record's fixed arrays
 * (cut at a character boundary when they do not fit), and numbers are
 * converted by hand (strtod may allocate and follows the program's locale).
 *
 * The parser is strict JSON (RFC 8259): one object, whitespace around it,
 * nothing else; strings valid UTF-8 with escaped control characters;
 * numbers as the grammar says.  Keys it does not know are skipped whatever
 * their type, so a newer report reads with an older memcheck; a known key
 * with a value of the wrong type is an error, and so is a known key given
 * twice.  Errors say "column N: expected ..." (N counts bytes from 1).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define MAX_DEPTH 64 /* nesting allowed in values that are skipped */

struct parser {
	const char *start, *p, *end;
	char *err;
	size_t errlen;
	bool failed;
	struct mc_json_leak *leak; /* where leaks[] goes, or NULL: skipped */
};

static bool fail(struct parser *j, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool fail(struct parser *j, const char *at, const char *fmt, ...)
{
	if (j->failed)
		return false;
	j->failed = true;
	if (!j->err || !j->errlen)
		return false;
	int n = snprintf(j->err, j->errlen, "column %zu: ", (size_t)(at - j->start) + 1);
	if (n < 0 || (size_t)n >= j->errlen)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

/* What is at p, for messages: "'x'", "end of line", "byte 0x01". */
static const char *what(const struct parser *j, const char *p, char buf[16])
{
	if (p >= j->end)
		return "end of line";
	unsigned char c = (unsigned char)*p;
	if (c == '\n' || c == '\r')
		return "end of line";
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 16, "'%c'", c);
	else
		snprintf(buf, 16, "byte 0x%02x", c);
	return buf;
}

static void skip_ws(struct parser *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Expect the character c (after whitespace). */
static bool expect(struct parser *j, char c, const char *context)
{
	char b[16];
	skip_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return fail(j, j->p, "expected '%c'%s, got %s", c, context, what(j, j->p, b));
}

/* ---- strings --------------------------------------------------------- */

/* A destination for decoded text: fixed size, cut at a character. */
struct sink {
	char *s;      /* NULL: decode and check, keep nothing */
	size_t size;  /* of s, NUL included */
	size_t len;
	bool cut;     /* something did not fit */
};

static void put_char(struct sink *o, const char *c, size_t n)
{
	if (!o->s || o->cut)
		return;
	if (o->len + n + 1 > o->size) {
		o->cut = true; /* whole characters only: the rest is dropped */
		return;
	}
	memcpy(o->s + o->len, c, n);
	o->len += n;
	o->s[o->len] = 0;
}

static size_t encode_utf8(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static bool hex4(struct parser *j, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		char b[16];
		const char *p = j->p + i;
		int h;
		if (p >= j->end)
			h = -1;
		else if (*p >= '0' && *p <= '9')
			h = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			h = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			h = *p - 'A' + 10;
		else
			h = -1;
		if (h < 0)
			return fail(j, p, "expected a hexadecimal digit in \\u escape, got %s",
				     what(j, p, b));
		v = v * 16 + (uint32_t)h;
	}
	j->p += 4;
	*out = v;
	return true;
}

/* A string (after whitespace), decoded into o. */
static bool string(struct parser *j, struct sink *o)
{
	if (!expect(j, '"', ""))
		return false;
	for (;;) {
		char b[16];
		if (j->p >= j->end)
			return fail(j, j->p, "expected '\"' to close the string, got end of line");
		const char *at = j->p;
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return fail(j, at, "expected a character or an escape, got %s "
				    "(control characters must be escaped)", what(j, at, b));
		if (c >= 0x80) {
			size_t n = mc_utf8_len((const unsigned char *)at, (const unsigned char *)j->end);
			if (!n)
				return fail(j, at, "expected UTF-8, got byte 0x%02x", c);
			put_char(o, at, n);
			j->p += n;
			continue;
		}
		j->p++;
		if (c != '\\') {
			put_char(o, (const char *)&c, 1);
			continue;
		}
		if (j->p >= j->end)
			return fail(j, j->p, "expected an escape after '\\', got end of line");
		char e = *j->p++, ch;
		switch (e) {
		case '"': ch = '"'; break;
		case '\\': ch = '\\'; break;
		case '/': ch = '/'; break;
		case 'b': ch = '\b'; break;
		case 'f': ch = '\f'; break;
		case 'n': ch = '\n'; break;
		case 'r': ch = '\r'; break;
		case 't': ch = '\t'; break;
		case 'u': {
			uint32_t cp, lo;
			if (!hex4(j, &cp))
				return false;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail(j, at, "expected a code point, got the lone low "
					    "surrogate \\u%04x", (unsigned)cp);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				const char *at2 = j->p;
				if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
					return fail(j, at2, "expected \\u and a low surrogate "
						    "after \\u%04x", (unsigned)cp);
				j->p += 2;
				if (!hex4(j, &lo))
					return false;
				if (lo < 0xdc00 || lo > 0xdfff)
					return fail(j, at2, "expected a low surrogate "
						    "(\\udc00-\\udfff) after \\u%04x, got \\u%04x",
						    (unsigned)cp, (unsigned)lo);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (cp == 0)
				return fail(j, at, "expected a character other than \\u0000 "
					    "(names and paths cannot hold NUL)");
			char u[4];
			put_char(o, u, encode_utf8(cp, u));
			continue;
		}
		default:
			return fail(j, at, "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u, "
				    "got %s after '\\'", what(j, j->p - 1, b));
		}
		put_char(o, &ch, 1);
	}
}

/* ---- numbers --------------------------------------------------------- */

static bool is_digit(const struct parser *j, const char *p)
{
	return p < j->end && *p >= '0' && *p <= '9';
}

/* Check a JSON number at j->p and return its end; NULL after fail(). */
static const char *number_end(struct parser *j)
{
	char b[16];
	const char *p = j->p;
	if (p < j->end && *p == '-')
		p++;
	if (!is_digit(j, p))
		return fail(j, p, "expected a digit, got %s", what(j, p, b)), NULL;
	if (*p == '0' && is_digit(j, p + 1))
		return fail(j, p + 1, "expected '.', 'e' or the end of the number after a "
			    "leading 0, got %s", what(j, p + 1, b)), NULL;
	while (is_digit(j, p))
		p++;
	if (p < j->end && *p == '.') {
		p++;
		if (!is_digit(j, p))
			return fail(j, p, "expected a digit after '.', got %s", what(j, p, b)), NULL;
		while (is_digit(j, p))
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (!is_digit(j, p))
			return fail(j, p, "expected a digit in the exponent, got %s",
				    what(j, p, b)), NULL;
		while (is_digit(j, p))
			p++;
	}
	return p;
}

/* The start of a value that must be a number (of the kind `expected`
 * names) or null: 0 for null, consumed; 1 for a number, [*at, *end), not
 * yet consumed; -1 when it is neither. */
static int number_or_null(struct parser *j, const char *key, const char *expected,
			  const char **at, const char **end)
{
	char b[16];
	skip_ws(j);
	*at = j->p;
	if (j->end - *at >= 4 && memcmp(*at, "null", 4) == 0) {
		j->p += 4;
		return 0;
	}
	if (!is_digit(j, *at) && !(*at < j->end && **at == '-')) {
		fail(j, *at, "expected %s or null for \"%s\", got %s", expected, key,
		     what(j, *at, b));
		return -1;
	}
	*end = number_end(j);
	return *end ? 1 : -1;
}

/* An unsigned integer that fits 64 bits, or null (MEMCHECK_UNKNOWN). */
static bool u64(struct parser *j, const char *key, uint64_t *out)
{
	const char *at, *end;
	int kind = number_or_null(j, key, "an unsigned integer", &at, &end);
	if (kind == 0)
		*out = MEMCHECK_UNKNOWN;
	if (kind <= 0)
		return kind == 0;
	uint64_t v = 0;
	for (const char *p = at; p < end; p++) {
		if (*p < '0' || *p > '9')
			return fail(j, at, "expected an unsigned integer or null for \"%s\", "
				    "got %.*s", key, (int)(end - at), at);
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return fail(j, at, "expected an unsigned integer below 2^64 for \"%s\"", key);
		v = v * 10 + d;
	}
	j->p = end;
	*out = v;
	return true;
}

/* A number as a double, converted by hand: 19 significant digits, then
 * scaled by a power of ten (within an ulp or two; enough for seconds). */
static bool real(struct parser *j, const char *key, double *out)
{
	const char *at, *end;
	int kind = number_or_null(j, key, "a number", &at, &end);
	if (kind == 0)
		*out = NAN;
	if (kind <= 0)
		return kind == 0;
	const char *p = at;
	bool neg = *p == '-';
	if (neg)
		p++;
	uint64_t mant = 0;
	int digits = 0;
	long exp10 = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (digits < 19) {
			mant = mant * 10 + (uint64_t)(*p - '0');
			if (mant)
				digits++;
		} else {
			exp10++;
		}
	}
	if (p < end && *p == '.') {
		for (p++; p < end && *p >= '0' && *p <= '9'; p++) {
			if (digits < 19) {
				mant = mant * 10 + (uint64_t)(*p - '0');
				if (mant)
					digits++;
				exp10--;
			}
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		bool eneg = *p == '-';
		if (*p == '+' || *p == '-')
			p++;
		long e = 0;
		for (; p < end; p++)
			if (e < 100000)
				e = e * 10 + (*p - '0');
		exp10 += eneg ? -e : e;
	}
	double v = (double)mant;
	if (mant) {
		static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
			1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
			1e19, 1e20, 1e21, 1e22 };
		long e = exp10 < 0 ? -exp10 : exp10;
		double scale = 1;
		while (e > 22 && scale < 1e300) {
			scale *= 1e22;
			e -= 22;
		}
		if (e <= 22)
			scale *= pow10[e];
		else
			scale = INFINITY;
		v = exp10 < 0 ? v / scale : v * scale;
	}
	if (isinf(v))
		return fail(j, at, "expected a number within the range of a double for \"%s\"",
			    key);
	j->p = end;
	*out = neg ? -v : v;
	return true;
}

/* ---- values skipped -------------------------------------------------- */

static bool skip_value(struct parser *j, int depth)
{
	char b[16];
	skip_ws(j);
	const char *at = j->p;
	if (depth > MAX_DEPTH)
		return fail(j, at, "expected at most %d levels of nesting", MAX_DEPTH);
	if (at >= j->end)
		return fail(j, at, "expected a value, got end of line");
	struct sink none = { 0 };
	switch (*at) {
	case '"':
		return string(j, &none);
	case '{':
		j->p++;
		skip_ws(j);
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return true;
		}
		for (;;) {
			if (!string(j, &none) || !expect(j, ':', " after the key") ||
			    !skip_value(j, depth + 1))
				return false;
			skip_ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			return expect(j, '}', " or ','");
		}
	case '[':
		j->p++;
		skip_ws(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return true;
		}
		for (;;) {
			if (!skip_value(j, depth + 1))
				return false;
			skip_ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			return expect(j, ']', " or ','");
		}
	case 't':
	case 'f':
	case 'n': {
		const char *word = *at == 't' ? "true" : *at == 'f' ? "false" : "null";
		size_t n = strlen(word);
		if ((size_t)(j->end - at) < n || memcmp(at, word, n) != 0)
			return fail(j, at, "expected %s", word);
		j->p += n;
		return true;
	}
	default:
		if (*at == '-' || (*at >= '0' && *at <= '9')) {
			const char *end = number_end(j);
			if (!end)
				return false;
			j->p = end;
			return true;
		}
		return fail(j, at, "expected a value (string, number, object, array, true, "
			    "false or null), got %s", what(j, at, b));
	}
}

/* ---- the record ------------------------------------------------------ */

enum kind { K_U64, K_COUNT, K_STR, K_PID, K_REAL, K_VERDICT, K_VIOLATIONS, K_LEAKS };

#define R(field) offsetof(struct mc_record, r.field)
#define REC(field) offsetof(struct mc_record, field)
static const struct key {
	const char *name;
	enum kind kind;
	size_t offset;   /* in struct mc_record */
	size_t size;     /* K_STR: of the array */
	bool required;
} keys[] = {
	{ "name", K_STR, R(name), sizeof(((struct memcheck_result *)0)->name), true },
	{ "pid", K_PID, REC(pid), 0, true },
	{ "program", K_STR, REC(program), sizeof(((struct mc_record *)0)->program), true },
	{ "allocator", K_STR, REC(allocator), sizeof(((struct mc_record *)0)->allocator), true },
	{ "args_hash", K_STR, REC(args_hash), sizeof(((struct mc_record *)0)->args_hash), false },
#ifndef MC_SECCOMP_CALLS
	/* the command's (tools/pairing.c); the library finds it in the
	 * line itself (gate.c), and an entry here was one more relocation
	 * in front of its code: group 1t's room (lib/text-order.ld) */
	{ "args_files", K_STR, REC(args_files), sizeof(((struct mc_record *)0)->args_files), false },
	/* the command's too (records.c: a failure of a process that exited
	 * non-zero on its own is not counted) */
	{ "exit_status", K_U64, REC(exit_status), 0, false },
#endif
	{ "allocs", K_U64, R(allocs), 0, false },
	{ "frees", K_U64, R(frees), 0, false },
	{ "reallocs", K_U64, R(reallocs), 0, false },
	{ "failed_allocs", K_U64, R(failed_allocs), 0, false },
	{ "injected", K_U64, R(injected), 0, false },
	{ "bytes_allocated", K_U64, R(bytes_allocated), 0, false },
	{ "bytes_freed", K_U64, R(bytes_freed), 0, false },
	{ "live_blocks", K_U64, R(live_blocks), 0, false },
	{ "live_bytes", K_U64, R(live_bytes), 0, false },
	{ "peak_live_bytes", K_U64, R(peak_live_bytes), 0, false },
	{ "definitely_lost", K_COUNT, R(definitely_lost), 0, false },
	{ "indirectly_lost", K_COUNT, R(indirectly_lost), 0, false },
	{ "possibly_lost", K_COUNT, R(possibly_lost), 0, false },
	{ "still_reachable", K_COUNT, R(still_reachable), 0, false },
	{ "suppressed", K_COUNT, R(suppressed), 0, false },
	{ "double_frees", K_U64, R(double_frees), 0, false },
	{ "invalid_frees", K_U64, R(invalid_frees), 0, false },
	{ "retained_bytes", K_U64, R(retained_bytes), 0, false },
	{ "retained_after_release", K_U64, R(retained_after_release), 0, false },
	{ "timed_purge_ms", K_U64, REC(timed_purge_ms), 0, false },
	{ "rss_begin", K_U64, R(rss_begin), 0, false },
	{ "rss_end", K_U64, R(rss_end), 0, false },
	{ "peak_rss", K_U64, R(peak_rss), 0, false },
	{ "seconds", K_REAL, R(seconds), 0, false },
	{ "verdict", K_VERDICT, R(pass), 0, true },
	/* added by memcheck run --report */
	{ "run", K_U64, REC(run), 0, false },
	{ "runs", K_U64, REC(runs), 0, false },
	{ "violations", K_VIOLATIONS, R(violations), sizeof(((struct memcheck_result *)0)->violations), false },
	/* leaks[]: the first failing record's stack, when asked
	 * (mc_json_record_leak); the figures budgets need are above */
	{ "leaks", K_LEAKS, 0, 0, false },
};
#undef R
#undef REC

/* {"blocks":N,"bytes":N}, or null for both unknown. */
static bool count(struct parser *j, const char *key, struct memcheck_count *c)
{
	char b[16];
	c->blocks = c->bytes = MEMCHECK_UNKNOWN;
	skip_ws(j);
	const char *at = j->p;
	if (j->end - at >= 4 && memcmp(at, "null", 4) == 0) {
		j->p += 4;
		return true;
	}
	if (at >= j->end || *at != '{')
		return fail(j, at, "expected {\"blocks\":N,\"bytes\":N} for \"%s\", got %s", key,
			    what(j, at, b));
	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	bool seen_blocks = false, seen_bytes = false;
	for (;;) {
		char sub[16];
		struct sink s = { sub, sizeof sub, 0, false };
		sub[0] = 0;
		skip_ws(j);
		const char *kat = j->p;
		if (!string(j, &s) || !expect(j, ':', " after the key"))
			return false;
		bool is_blocks = !s.cut && strcmp(sub, "blocks") == 0;
		bool is_bytes = !s.cut && strcmp(sub, "bytes") == 0;
		if ((is_blocks && seen_blocks) || (is_bytes && seen_bytes))
			return fail(j, kat, "expected each key once, got \"%s\" again in \"%s\"",
				    sub, key);
		if (is_blocks) {
			seen_blocks = true;
			if (!u64(j, "blocks", &c->blocks))
				return false;
		} else if (is_bytes) {
			seen_bytes = true;
			if (!u64(j, "bytes", &c->bytes))
				return false;
		} else if (!skip_value(j, 2)) {
			return false;
		}
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		return expect(j, '}', " or ','");
	}
}

/* ["message", ...] joined with "; ", as struct memcheck_result holds it. */
static bool violations(struct parser *j, char *dst, size_t size)
{
	char b[16];
	dst[0] = 0;
	if (!expect(j, '[', " for \"violations\""))
		return false;
	skip_ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return true;
	}
	size_t len = 0;
	bool full = false;
	for (int i = 0;; i++) {
		skip_ws(j);
		if (j->p >= j->end || *j->p != '"')
			return fail(j, j->p, "expected a string in \"violations\", got %s",
				    what(j, j->p, b));
		struct sink s = { NULL, 0, 0, false };
		if (!full && (i == 0 || len + 3 <= size)) {
			if (i) {
				memcpy(dst + len, "; ", 3);
				len += 2;
			}
			s.s = dst + len;
			s.size = size - len;
			s.s[0] = 0;
		} else {
			full = true;
		}
		if (!string(j, &s))
			return false;
		len += s.len;
		if (s.cut) {
			full = true;
			if (i && s.len == 0) /* nothing of it fit: no dangling "; " */
				dst[len -= 2] = 0;
		}
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		return expect(j, ']', " or ','");
	}
}

/* ---- leaks[], when asked -------------------------------------------- */

/* Each member of an object: fn(j, key, arg), the key "" when it is longer
 * than any fn knows. */
static bool object(struct parser *j, const char *context,
		   bool (*fn)(struct parser *, const char *, void *), void *arg)
{
	if (!expect(j, '{', context))
		return false;
	skip_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	for (;;) {
		char key[16];
		struct sink k = { key, sizeof key, 0, false };
		key[0] = 0;
		skip_ws(j);
		if (!string(j, &k) || !expect(j, ':', " after the key"))
			return false;
		skip_ws(j);
		if (!fn(j, k.cut ? "" : key, arg))
			return false;
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		return expect(j, '}', " or ','");
	}
}

/* Each element of an array: fn(j, arg). */
static bool array(struct parser *j, const char *context, bool (*fn)(struct parser *, void *),
		  void *arg)
{
	if (!expect(j, '[', context))
		return false;
	skip_ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return true;
	}
	for (;;) {
		if (!fn(j, arg))
			return false;
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		return expect(j, ']', " or ','");
	}
}

/* A string into dst[size], or null (dst left ""). */
static bool string_or_null(struct parser *j, const char *key, char *dst, size_t size)
{
	if (j->end - j->p >= 4 && memcmp(j->p, "null", 4) == 0) {
		j->p += 4;
		return true;
	}
	if (j->p >= j->end || *j->p != '"')
		return fail(j, j->p, "expected a string or null for \"%s\"", key);
	struct sink v = { dst, size, 0, false };
	return string(j, &v);
}

/* One leak record being read, and whether its frames are kept. */
struct leak_read {
	struct mc_json_leak one;
	bool keep;
	char fn[96], file[160], object[160];
	uint64_t line;
	bool alloc_fn;            /* the frame's "alloc_fn" */
};

static bool frame_member(struct parser *j, const char *key, void *arg)
{
	struct leak_read *l = arg;
	if (!strcmp(key, "function"))
		return string_or_null(j, key, l->fn, sizeof l->fn);
	if (!strcmp(key, "file"))
		return string_or_null(j, key, l->file, sizeof l->file);
	if (!strcmp(key, "object"))
		return string_or_null(j, key, l->object, sizeof l->object);
	if (!strcmp(key, "line"))
		return u64(j, key, &l->line);
	if (!strcmp(key, "alloc_fn")) {
		skip_ws(j);
		l->alloc_fn = j->end - j->p >= 4 && !memcmp(j->p, "true", 4);
	}
	return skip_value(j, 4);
}

/* One frame of a leak's stack: "function (file:line)", or "function (in
 * object)" without a file, appended to the stack as a line; the first
 * frame with a file in a program's own code (not an installed library)
 * past the allocation functions (marked alloc_fn) is the site. */
static bool leak_frame(struct parser *j, void *arg)
{
	struct leak_read *l = arg;
	l->fn[0] = l->file[0] = l->object[0] = 0;
	l->alloc_fn = false;
	l->line = MEMCHECK_UNKNOWN;
	if (!object(j, " for a frame of \"stack\"", frame_member, l))
		return false;
	struct mc_json_leak *o = &l->one;
	bool at_line = l->file[0] && l->line != MEMCHECK_UNKNOWN;
	size_t len = strlen(o->stack);
	if (l->keep && o->nframes < MC_JSON_FRAMES && len + 1 < sizeof o->stack) {
		if (at_line)
			snprintf(o->stack + len, sizeof o->stack - len, "%s%s (%s:%llu)",
				 len ? "\n" : "", l->fn[0] ? l->fn : "???", l->file,
				 (unsigned long long)l->line);
		else
			snprintf(o->stack + len, sizeof o->stack - len, "%s%s (in %s)",
				 len ? "\n" : "", l->fn[0] ? l->fn : "???",
				 l->object[0] ? l->object : "?");
		o->nframes++;
	}
	if (l->keep && !o->site[0] && at_line && !l->alloc_fn &&
	    !mc_program_installed(l->object))
		snprintf(o->site, sizeof o->site, "%s:%llu", l->file, (unsigned long long)l->line);
	return true;
}

static bool leak_member(struct parser *j, const char *key, void *arg)
{
	struct leak_read *l = arg;
	if (!strcmp(key, "kind")) {
		if (j->p >= j->end || *j->p != '"')
			return fail(j, j->p, "expected a string for \"kind\"");
		struct sink v = { l->one.kind, sizeof l->one.kind, 0, false };
		return string(j, &v);
	}
	if (!strcmp(key, "blocks"))
		return u64(j, key, &l->one.blocks);
	if (!strcmp(key, "bytes"))
		return u64(j, key, &l->one.bytes);
	if (!strcmp(key, "stack"))
		return array(j, " for \"stack\"", leak_frame, l);
	return skip_value(j, 3);
}

/* One leak record: kept in *j->leak when it is the first of a kind that
 * fails a region (definitely or possibly lost). */
static bool leak_record(struct parser *j, void *arg)
{
	(void)arg;
	struct leak_read l;
	memset(&l, 0, sizeof l);
	l.keep = !j->leak->kind[0];
	if (!object(j, " for a leak record", leak_member, &l))
		return false;
	if (l.keep && (!strcmp(l.one.kind, "definitely_lost") ||
		       !strcmp(l.one.kind, "possibly_lost")))
		*j->leak = l.one;
	return true;
}

/* leaks[]: checked and passed over, or its first failing record kept. */
static bool leaks(struct parser *j)
{
	if (!j->leak)
		return skip_value(j, 1);
	memset(j->leak, 0, sizeof *j->leak);
	return array(j, " for \"leaks\"", leak_record, NULL);
}

static bool member(struct parser *j, const struct key *k, struct mc_record *out)
{
	char b[16], word[8];
	char *base = (char *)out;
	skip_ws(j);
	const char *at = j->p;
	switch (k->kind) {
	case K_U64:
		return u64(j, k->name, (uint64_t *)(base + k->offset));
	case K_COUNT:
		return count(j, k->name, (struct memcheck_count *)(base + k->offset));
	case K_STR: {
		if (at >= j->end || *at != '"')
			return fail(j, at, "expected a string for \"%s\", got %s", k->name,
				    what(j, at, b));
		struct sink s = { base + k->offset, k->size, 0, false };
		s.s[0] = 0;
		return string(j, &s);
	}
	case K_PID: {
		uint64_t v;
		if (!u64(j, k->name, &v))
			return false;
		if (v > 0x7fffffff)
			return fail(j, at, "expected a process id for \"pid\"");
		out->pid = (int)v;
		return true;
	}
	case K_REAL:
		return real(j, k->name, (double *)(base + k->offset));
	case K_VERDICT: {
		struct sink s = { word, sizeof word, 0, false };
		if (at >= j->end || *at != '"')
			return fail(j, at, "expected \"pass\" or \"fail\" for \"verdict\", got %s",
				    what(j, at, b));
		word[0] = 0;
		if (!string(j, &s))
			return false;
		if (!s.cut && strcmp(word, "pass") == 0)
			out->r.pass = 1;
		else if (!s.cut && strcmp(word, "fail") == 0)
			out->r.pass = 0;
		else
			return fail(j, at, "expected \"pass\" or \"fail\" for \"verdict\"");
		return true;
	}
	case K_VIOLATIONS:
		return violations(j, base + k->offset, k->size);
	case K_LEAKS:
		return leaks(j);
	}
	return false;
}

static void defaults(struct mc_record *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < MC_ARRAY_SIZE(keys); i++) {
		char *p = (char *)out + keys[i].offset;
		if (keys[i].kind == K_U64) {
			*(uint64_t *)p = MEMCHECK_UNKNOWN;
		} else if (keys[i].kind == K_COUNT) {
			((struct memcheck_count *)p)->blocks = MEMCHECK_UNKNOWN;
			((struct memcheck_count *)p)->bytes = MEMCHECK_UNKNOWN;
		}
	}
	out->r.seconds = NAN;
}

bool mc_json_record(const char *line, size_t len, struct mc_record *out,
		    char *err, size_t errlen)
{
	return mc_json_record_leak(line, len, out, NULL, err, errlen);
}

bool mc_json_record_leak(const char *line, size_t len, struct mc_record *out,
			 struct mc_json_leak *leak, char *err, size_t errlen)
{
	struct parser j = { line, line, line + len, err, errlen, false, leak };
	if (leak)
		memset(leak, 0, sizeof *leak);
	uint64_t seen = 0;
	char b[16];
	_Static_assert(MC_ARRAY_SIZE(keys) <= 64, "seen is a 64-bit mask");

	if (err && errlen)
		err[0] = 0;
	defaults(out);
	if (!expect(&j, '{', " (a report line is one JSON object)"))
		return false;
	skip_ws(&j);
	if (j.p < j.end && *j.p == '}') {
		j.p++;
	} else {
		for (;;) {
			char key[32];
			struct sink s = { key, sizeof key, 0, false };
			key[0] = 0;
			skip_ws(&j);
			const char *kat = j.p;
			if (j.p >= j.end || *j.p != '"')
				return fail(&j, j.p, "expected a key (a string), got %s",
					    what(&j, j.p, b));
			if (!string(&j, &s) || !expect(&j, ':', " after the key"))
				return false;
			size_t i = 0;
			while (i < MC_ARRAY_SIZE(keys) && (s.cut || strcmp(key, keys[i].name)))
				i++;
			if (i == MC_ARRAY_SIZE(keys)) {
				if (!skip_value(&j, 1))
					return false;
			} else {
				if (seen & (1ull << i))
					return fail(&j, kat, "expected each key once, got \"%s\" again",
						    key);
				seen |= 1ull << i;
				if (!member(&j, &keys[i], out))
					return false;
			}
			skip_ws(&j);
			if (j.p < j.end && *j.p == ',') {
				j.p++;
				continue;
			}
			if (!expect(&j, '}', " or ','"))
				return false;
			break;
		}
	}
	const char *close = j.p - 1;
	skip_ws(&j);
	if (j.p < j.end)
		return fail(&j, j.p, "expected the end of the line after the object, got %s",
			    what(&j, j.p, b));
	for (size_t i = 0; i < MC_ARRAY_SIZE(keys); i++)
		if (keys[i].required && !(seen & (1ull << i)))
			return fail(&j, close, "expected the key \"%s\" (not a memcheck record?)",
				    keys[i].name);
	return true;
}

/* ---- values by path: spans of a record's line ------------------------
 * The CLI's pictures (tools/html.c, tools/export.c) need the arrays
 * mc_json_record skips: leaks, peak_snapshot, timeline.  These read
 * them from the line in place, as spans, with the same parser: nothing
 * is allocated, and a value is decoded only when asked for. */

static struct parser span_parser(struct mc_jv v)
{
	struct parser j = { .start = v.p, .p = v.p, .end = v.end };
	return j;
}

bool mc_jv_line(const char *line, size_t len, struct mc_jv *out)
{
	struct parser j = { .start = line, .p = line, .end = line + len };
	skip_ws(&j);
	const char *at = j.p;
	if (!skip_value(&j, 0))
		return false;
	*out = (struct mc_jv){ at, j.p, 0 };
	return true;
}

bool mc_jv_next(struct mc_jv *it, struct mc_jv *key, struct mc_jv *val)
{
	struct parser j = span_parser(*it);
	skip_ws(&j);
	if (j.p >= j.end)
		return false;
	if (!it->open) {                 /* the first call: at the bracket */
		if (*j.p != '[' && *j.p != '{')
			return false;
		it->open = *j.p++;
	} else if (*j.p == ',') {        /* later ones: after a value */
		j.p++;
	}
	skip_ws(&j);
	if (j.p >= j.end || *j.p == ']' || *j.p == '}')
		return false;
	if (it->open == '{') {
		const char *kat = j.p;
		struct sink none = { 0 };
		if (!string(&j, &none))
			return false;
		if (key)
			*key = (struct mc_jv){ kat, j.p, 0 };
		if (!expect(&j, ':', ""))
			return false;
	}
	skip_ws(&j);
	const char *vat = j.p;
	if (!skip_value(&j, 1))
		return false;
	*val = (struct mc_jv){ vat, j.p, 0 };
	it->p = j.p;
	return true;
}

bool mc_jv_get(struct mc_jv obj, const char *key, struct mc_jv *out)
{
	struct mc_jv it = obj, k, v;
	it.open = 0;
	if (obj.p >= obj.end || *obj.p != '{')
		return false;
	while (mc_jv_next(&it, &k, &v)) {
		char name[64];
		if (mc_jv_str(k, name, sizeof name) && strcmp(name, key) == 0) {
			*out = v;
			return true;
		}
	}
	return false;
}

bool mc_jv_null(struct mc_jv v)
{
	return v.end - v.p == 4 && memcmp(v.p, "null", 4) == 0;
}

bool mc_jv_u64(struct mc_jv v, uint64_t *out)
{
	struct parser j = span_parser(v);
	return u64(&j, "value", out);
}

bool mc_jv_real(struct mc_jv v, double *out)
{
	struct parser j = span_parser(v);
	return real(&j, "value", out);
}

bool mc_jv_str(struct mc_jv v, char *dst, size_t size)
{
	struct parser j = span_parser(v);
	struct sink s = { dst, size, 0, false };
	if (!size || v.p >= v.end || *v.p != '"')
		return false;
	dst[0] = 0;
	return string(&j, &s);
}

bool mc_jv_bool(struct mc_jv v)
{
	return v.end - v.p == 4 && memcmp(v.p, "true", 4) == 0;
}
