/*
 * buf.c - text built in memory: struct mc_buf, a growable string in
 * mmap'd memory (ownmap.c; the first page of one buffer at a time is a
 * page of libmemcheck's .bss), and what is written into it without
 * vsnprintf: numbers (decimal, hex, tenths, commas), JSON strings, text
 * escaped for memcheck's lines, names cut at a character boundary; and
 * the FNV-1a hash of bytes, as names of cache keys.  Where the text then
 * goes is textout.c's.  Nothing here calls malloc.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The first page of one buffer at a time: a page of libmemcheck's .bss
 * (a large array of lib/bss-layout.sh's), where every measured
 * process's exit mapped one for its report's text (an mmap fewer at
 * each).  Not populated at start-up (it was, with own[] beside it, in
 * the same madvise call): only a process that writes a report or names
 * a frame uses it, and one that does neither (bench/suite_test 1, a
 * passing test) paid a page it never wrote.  The memset below writes it
 * first, so where it is used it is one write fault, which after
 * start-up's populate costs what a populated page does (doc/costs.md
 * r-session57-pop57, r-session57-pages57), and it is measured as
 * memcheck's own with the rest of the image (footprint.c). */
static char first_page[4096] __attribute__((aligned(4096)));
static atomic_flag first_page_taken = ATOMIC_FLAG_INIT;

static void buf_release(char *s, size_t cap)
{
	if (s == first_page)
		atomic_flag_clear(&first_page_taken);
	else
		mc_unmap_io(s, cap);
}

static bool buf_reserve(struct mc_buf *b, size_t extra)
{
	if (b->oom)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *s = NULL;
	if (cap == sizeof first_page && !atomic_flag_test_and_set(&first_page_taken)) {
		s = first_page;
		memset(s, 0, cap); /* as fresh from mmap */
	} else {
		s = mc_map_io(cap); /* written out with write(2) */
	}
	if (!s) {
		b->oom = true;
		return false;
	}
	if (b->s) {
		memcpy(s, b->s, b->len);
		buf_release(b->s, b->cap);
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void mc_buf_put(struct mc_buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

/* n bytes of b from off appended again (reserved first: the copy is made
 * from the buffer as it is after any growth). */
void mc_buf_repeat(struct mc_buf *b, size_t off, size_t n)
{
	if (off + n > b->len || !buf_reserve(b, n))
		return;
	memcpy(b->s + b->len, b->s + off, n);
	b->len += n;
	b->s[b->len] = 0;
}

/* mc_buf_room where the buffer must grow (inline in internal.h: the room
 * is there, a few instructions, for most of a record's pieces). */
char *mc_buf_room_grow(struct mc_buf *b, size_t n)
{
	return buf_reserve(b, n) ? b->s + b->len : NULL;
}

void mc_buf_puts(struct mc_buf *b, const char *s)
{
	mc_buf_put(b, s, strlen(s));
}

void mc_buf_printf(struct mc_buf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		mc_buf_put(b, small, (size_t)n);
		return;
	}
	if (!buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at p (which ends before end), or 0
 * when there is none: overlong forms, surrogates and code points past
 * U+10FFFF are not valid. */
size_t mc_utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n;
	uint32_t min, c;
	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0)
		n = 2, min = 0x80, c = *p & 0x1f;
	else if ((*p & 0xf0) == 0xe0)
		n = 3, min = 0x800, c = *p & 0x0f;
	else if ((*p & 0xf8) == 0xf0)
		n = 4, min = 0x10000, c = *p & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/* v in decimal, as "%llu" writes it, without vsnprintf (~1 K
 * instructions a call where a JSON report writes hundreds of numbers). */
char *mc_utoa(char *w, uint64_t v)
{
	char d[20];
	size_t i = sizeof d;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(w, d + i, sizeof d - i);
	w += sizeof d - i;
	*w = 0;
	return w;
}

/* Loops of its own, no strlen or memcpy: descend.c's reader calls it at
 * every measured process's exit, where a C library function not yet
 * called would be bound (-z lazy) for it alone. */
bool mc_path_id(char *out, size_t size, const char *head, uint64_t id, const char *tail)
{
	char digits[21], *d = digits + sizeof digits;
	*--d = 0;
	do
		*--d = (char)('0' + id % 10);
	while (id /= 10);
	const char *parts[] = { head, d, tail };
	char *w = out, *end = out + size;
	for (int i = 0; i < 3; i++)
		for (const char *c = parts[i]; *c; c++) {
			if (w + 1 >= end)
				return false;
			*w++ = *c;
		}
	if (w >= end)
		return false;
	*w = 0;
	return true;
}

void mc_buf_u64(struct mc_buf *b, uint64_t v)
{
	char d[21];
	mc_buf_put(b, d, (size_t)(mc_utoa(d, v) - d));
}

void mc_buf_int(struct mc_buf *b, int v)
{
	if (v < 0)
		mc_buf_put(b, "-", 1);
	mc_buf_u64(b, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

char *mc_buf_hex_at(char *w, uint64_t v)
{
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1; /* digits */
	w[0] = '0';
	w[1] = 'x';
	char *end = w + 2 + n;
	for (char *d = end; d > w + 2; v >>= 4)
		*--d = "0123456789abcdef"[v & 15];
	return end;
}

/* v as "0x%lx" writes it. */
void mc_buf_hex(struct mc_buf *b, uint64_t v)
{
	char *w = mc_buf_room(b, 18);
	if (w)
		mc_buf_end(b, mc_buf_hex_at(w, v));
}

/* Strings one after another, up to a NULL: a line of text pieces
 * without vsnprintf's parse of a format (~1.5 K instructions a line). */
void mc_buf_strs(struct mc_buf *b, ...)
{
	va_list ap;
	va_start(ap, b);
	for (const char *s; (s = va_arg(ap, const char *)) != NULL;)
		mc_buf_puts(b, s);
	va_end(ap);
}

/* v / 2^shift (shift 1..40, v * 10 below 2^64) as "%.1f" writes that
 * double: the quotient is exact in binary, so the tenths are v * 10 >>
 * shift rounded to nearest, a tie to the even one, as glibc rounds. */
void mc_buf_tenths(struct mc_buf *b, uint64_t v, unsigned shift)
{
	uint64_t x = v * 10, q = x >> shift, r = x & (((uint64_t)1 << shift) - 1);
	uint64_t half = (uint64_t)1 << (shift - 1);
	if (r > half || (r == half && (q & 1)))
		q++;
	mc_buf_u64(b, q / 10);
	char d[2] = { '.', (char)('0' + q % 10) };
	mc_buf_put(b, d, 2);
}

/* Whether none of x's 8 bytes needs more than a copy in a JSON string:
 * each printable ASCII, neither '"' nor '\\'.  (x - n * ones) & ~x &
 * high is nonzero exactly when some byte is below n (n <= 0x80): a
 * borrow starts only at such a byte. */
static inline bool json_plain8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
	return !((x | ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & high);
}

/* A JSON string literal, quotes included.  Names, paths and argv[0] need
 * not be UTF-8; a byte that is not part of valid UTF-8 is written as the
 * code point of the same value (\u00XX), so every record stays JSON.
 * Plain ASCII (printable, neither '"' nor '\\') is copied as it is
 * tested, 8 bytes a step (json_plain8), into room reserved once: one
 * byte at a time through mc_utf8_len and mc_buf_put, a JSON report's
 * stacks cost ~250 K instructions (callgrind, bench/suite_test 1), and
 * a byte-by-byte test of a frame's paths ~500 instructions a string
 * (a real program's: /tmp/real13's jansson test_array). */
char *mc_buf_json_at(char *w, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	*w++ = '"';
	while (p < end) {
		uint64_t x;
		if (end - p >= 8 && (__builtin_memcpy(&x, p, 8), json_plain8(x))) {
			__builtin_memcpy(w, &x, 8);
			w += 8;
			p += 8;
			continue;
		}
		if (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
			*w++ = (char)*p++;
			continue;
		}
		size_t len = mc_utf8_len(p, end);
		if (len > 1) {
			memcpy(w, p, len);
			w += len;
			p += len;
			continue;
		}
		*w++ = '\\';
		switch (*p) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '\n': *w++ = 'n'; break;
		case '\t': *w++ = 't'; break;
		case '\r': *w++ = 'r'; break;
		default:
			/* below 0x20, or not UTF-8 (len == 0): \u00XX */
			*w++ = 'u';
			*w++ = '0';
			*w++ = '0';
			*w++ = "0123456789abcdef"[*p >> 4];
			*w++ = "0123456789abcdef"[*p & 15];
		}
		p++;
	}
	*w++ = '"';
	return w;
}

size_t mc_buf_json_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t len = 2;
	while (p < end) {
		uint64_t x;
		if (end - p >= 8 && (__builtin_memcpy(&x, p, 8), json_plain8(x))) {
			len += 8;
			p += 8;
		} else if (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
			len++;
			p++;
		} else {
			size_t u = mc_utf8_len(p, end);
			bool short_esc = *p == '"' || *p == '\\' || *p == '\n' || *p == '\t' ||
					 *p == '\r';
			len += u > 1 ? u : short_esc ? 2 : 6;
			p += u > 1 ? u : 1;
		}
	}
	return len;
}

/* The room a JSON string takes is reserved at its worst (6 bytes a
 * byte) where the buffer has it, else exactly (mc_buf_json_len): a
 * buffer grows only where the bytes written need it, as before. */
void mc_buf_json_str(struct mc_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	size_t need = b->len + 6 * n + 3 <= b->cap ? 6 * n + 2 : mc_buf_json_len(s ? s : "", n);
	char *w = mc_buf_room(b, need);
	if (w)
		mc_buf_end(b, mc_buf_json_at(w, s ? s : "", n));
}

/* Names and values in memcheck's text are the program's (region names,
 * argv[0], paths, function names from debug information) or the user's
 * (MEMCHECK_* values echoed in messages): a newline in one forged a line
 * of the report ("==1234== PASS"), an ANSI escape reached the terminal,
 * and bytes that are not UTF-8 came out as whatever the terminal made of
 * them.  So the text escapes as the JSON does: printable UTF-8 as it
 * is; \n, \t, \r, \\; other control bytes and bytes that are not UTF-8
 * as \xNN; the C1 controls (U+0080..U+009F, which some terminals take
 * for escape sequences) as \u00NN.  Cut at cap, between escapes. */
const char *mc_text_escape(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	const unsigned char *end = p + strlen((const char *)p);
	while (*p) {
		/* A run of printable ASCII is itself: copied at once, not a
		 * character at a time through mc_utf8_len and the cases below
		 * (~30 instructions a character, a measured /bin/date's exit
		 * report ~25 K). */
		const unsigned char *q = p;
		while (*q >= 0x20 && *q < 0x7f && *q != '\\')
			q++;
		if (q != p) {
			size_t run = (size_t)(q - p), room = cap > n ? cap - n - 1 : 0;
			if (run > room) {  /* cut as one character at a time would */
				if (room)
					memcpy(out + n, p, room);
				n += room;
				break;
			}
			memcpy(out + n, p, run);
			n += run;
			p = q;
			continue;
		}
		char esc[8];
		const char *piece = esc;
		size_t u = mc_utf8_len(p, end), len;
		if (u == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			len = (size_t)snprintf(esc, sizeof esc, "\\u%04x", p[1]);
		} else if (u > 1) {
			piece = (const char *)p;
			len = u;
		} else {
			char c = *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' :
				 *p == '\\' ? '\\' : 0;
			len = c ? (size_t)snprintf(esc, sizeof esc, "\\%c", c)
				: (size_t)snprintf(esc, sizeof esc, "\\x%02x", *p);
		}
		if (n + len >= cap)
			break;
		memcpy(out + n, piece, len);
		n += len;
		p += u ? u : 1;
	}
	if (cap)
		out[n] = 0;
	return out;
}

/* Copy a name into a fixed array, cut at a character boundary. */
void mc_copy_name(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);
	if (n >= size) {
		n = size - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

void mc_buf_free(struct mc_buf *b)
{
	if (b->s)
		buf_release(b->s, b->cap);
	b->s = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

/* The digits by hand: snprintf took ~700 instructions a number, and a
 * leaking /bin/date's report writes 41 of them (30 K instructions). */
const char *mc_commas(uint64_t v, char buf[32])
{
	char digits[24];
	int n = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (int i = 0; i < n / 2; i++) {
		char c = digits[i];
		digits[i] = digits[n - 1 - i];
		digits[n - 1 - i] = c;
	}
	int out = 0;
	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = 0;
	return buf;
}

uint64_t mc_fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

char *mc_hex(char *w, const unsigned char *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		*w++ = digits[bytes[i] >> 4];
		*w++ = digits[bytes[i] & 15];
	}
	*w = 0;
	return w;
}

/* A word of the command as valgrind's "Command:" line writes it: a
 * space, a backslash, '<' and '>' after a backslash (a path with a
 * space reads as one word), a control character or a byte past ASCII
 * as '_' (valgrind 3.19 writes the words a b, c<d>, e TAB f and g\h
 * as "a\ b c\<d\> e_f g\\h"). */
static void vg_command_word(struct mc_buf *b, const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)w[i];
		if (c < 0x20 || c >= 0x80) {
			mc_buf_put(b, "_", 1);
			continue;
		}
		if (c == ' ' || c == '\\' || c == '<' || c == '>')
			mc_buf_put(b, "\\", 1);
		mc_buf_put(b, (const char *)&c, 1);
	}
}

void mc_buf_vg_head(struct mc_buf *b, long pid, long ppid, const char *exe, const char *words,
		    size_t n)
{
	char p[32], *w = p;
	*w++ = '=';
	*w++ = '=';
	w = mc_utoa(w, (uint64_t)(pid < 0 ? 0 : pid));
	memcpy(w, "==", 3);
	mc_buf_strs(b, p, " " MC_VG_PREAMBLE "\n", p, " Command:", NULL);
	for (size_t i = 0; i < n; i += strnlen(words + i, n - i) + 1) {
		mc_buf_put(b, " ", 1);
		if (i == 0 && exe)
			vg_command_word(b, exe, strlen(exe));
		else
			vg_command_word(b, words + i, strnlen(words + i, n - i));
	}
	mc_buf_puts(b, "\n");
	if (ppid >= 0) {
		mc_buf_strs(b, p, " Parent PID: ", NULL);
		mc_buf_u64(b, (uint64_t)ppid);
		mc_buf_puts(b, "\n");
	}
	mc_buf_strs(b, p, " \n", NULL);
}
