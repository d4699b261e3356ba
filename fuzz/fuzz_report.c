/*
 * fuzz_report.c - the report's writers and reader under libFuzzer (make
 * fuzz, make fuzz-check; FUZZ_TARGETS=report for this one alone): the
 * escaping of names and values in the text (mc_text_escape) and in the
 * JSON (mc_buf_json_str), and the record reader (mc_json_record), which
 * memcheck run, gate and compare and MEMCHECK_BASELINE feed with files
 * anyone may have written.  Besides what ASan and UBSan catch, it checks
 * (issue 14, item 11):
 *   - the text escape of any string, cut at any size, is NUL-terminated
 *     within it, holds no control byte, no C1 control and nothing that is
 *     not UTF-8, and reads back as a prefix of the string: never cut
 *     inside an escape;
 *   - the JSON string of any string reads back as the string, each byte
 *     that is not UTF-8 as the code point of its value;
 *   - a line the reader refuses has a one-line message, NUL-terminated.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Read the text escape back into out; false on a broken escape. */
static bool text_unescape(const char *s, char *out, size_t *n)
{
	*n = 0;
	while (*s) {
		if (*s != '\\') {
			out[(*n)++] = *s++;
			continue;
		}
		s++;
		if (*s == 'n' || *s == 't' || *s == 'r' || *s == '\\') {
			out[(*n)++] = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : '\\';
			s++;
		} else if (*s == 'x' && hex(s[1]) >= 0 && hex(s[2]) >= 0) {
			out[(*n)++] = (char)(hex(s[1]) * 16 + hex(s[2]));
			s += 3;
		} else if (!strncmp(s, "u00", 3) && hex(s[3]) >= 0 && hex(s[4]) >= 0) {
			out[(*n)++] = (char)0xc2; /* a C1 control: U+0080..U+009F */
			out[(*n)++] = (char)(hex(s[3]) * 16 + hex(s[4]));
			s += 5;
		} else {
			return false;
		}
	}
	return true;
}

static void check_text(const char *in, size_t len)
{
	static const size_t caps[] = { 1, 2, 5, 17, 64, 4096 };
	char *out = malloc(4 * len + 8), *back = malloc(4 * len + 8);
	for (size_t k = 0; k < MC_ARRAY_SIZE(caps); k++) {
		size_t cap = caps[k] < 4 * len + 8 ? caps[k] : 4 * len + 8;
		mc_text_escape(in, out, cap);
		size_t n = strnlen(out, cap);
		if (n == cap)
			abort();                          /* not a string */
		const unsigned char *p = (const unsigned char *)out, *end = p + n;
		while (p < end) {
			size_t u = mc_utf8_len(p, end);
			if (u == 0 || (u == 1 && (*p < 0x20 || *p == 0x7f)) ||
			    (u == 2 && p[0] == 0xc2 && p[1] < 0xa0))
				abort();                  /* raw control or not UTF-8 */
			p += u;
		}
		size_t m;
		if (!text_unescape(out, back, &m) || m > len || memcmp(back, in, m) != 0)
			abort();                          /* not a prefix, or a cut escape */
		if (cap == 4 * len + 8 && m != len)
			abort();                          /* room, yet cut */
	}
	free(out);
	free(back);
}

/* Read a JSON string back (from after its opening quote); -1 when it is
 * not one. */
static long json_unescape(const char *s, unsigned char *out)
{
	long n = 0;
	for (;; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"')
			return s[1] ? -1 : n;
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			out[n++] = c;
			continue;
		}
		s++;
		const char *simple = strchr("\"\\/bfnrt", *s);
		if (*s && simple) {
			out[n++] = (unsigned char)"\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
		} else if (*s == 'u' && hex(s[1]) == 0 && hex(s[2]) == 0 && hex(s[3]) >= 0 &&
			   hex(s[4]) >= 0) {
			unsigned v = (unsigned)(hex(s[3]) * 16 + hex(s[4]));
			if (v < 0x80) {
				out[n++] = (unsigned char)v;
			} else {              /* U+0080..U+00FF in UTF-8 */
				out[n++] = (unsigned char)(0xc0 | v >> 6);
				out[n++] = (unsigned char)(0x80 | (v & 0x3f));
			}
			s += 4;
		} else {
			return -1;
		}
	}
}

static void check_json(const char *in, size_t len)
{
	struct mc_buf b = { 0 };
	mc_buf_json_str(&b, in);
	if (b.oom || b.len < 2 || b.s[0] != '"')
		abort();
	unsigned char *back = malloc(2 * len + 8), *want = malloc(2 * len + 8);
	long n = json_unescape(b.s + 1, back);
	/* what it must read as: each byte that is not UTF-8 as U+00XX */
	size_t w = 0;
	const unsigned char *p = (const unsigned char *)in, *end = p + len;
	while (p < end) {
		size_t u = mc_utf8_len(p, end);
		if (u) {
			memcpy(want + w, p, u);
			w += u;
			p += u;
		} else {
			want[w++] = (unsigned char)(0xc0 | *p >> 6);
			want[w++] = (unsigned char)(0x80 | (*p & 0x3f));
			p++;
		}
	}
	if (n < 0 || (size_t)n != w || memcmp(back, want, w) != 0)
		abort();
	free(back);
	free(want);
	mc_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The strings: the input up to its first NUL. */
	char *s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = 0;
	size_t len = strlen(s);
	check_text(s, len);
	check_json(s, len);

	/* The reader, on the whole input as one line. */
	static struct mc_record rec;
	char err[256];
	memset(err, 'x', sizeof err);
	if (!mc_json_record((const char *)data, size, &rec, err, sizeof err)) {
		size_t n = strnlen(err, sizeof err);
		if (n == sizeof err || n == 0 || memchr(err, '\n', n))
			abort();
	}
	free(s);
	return 0;
}
