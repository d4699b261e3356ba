/*
 * unit_util.c - util.c's parts (UTIL in GNUmakefile) and lib/options.c on
 * their own: JSON string escaping, the text's escaping, name cutting,
 * number formatting, option parsing; SIGPIPE blocked around memcheck's text only where a write can
 * raise it.
 */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

static const char *json(const char *s)
{
	static char out[256];
	struct mc_buf b = { 0 };
	mc_buf_json_str(&b, s);
	ck_assert(!b.oom);
	strncpy(out, b.s, sizeof out - 1);
	mc_buf_free(&b);
	return out;
}

START_TEST(json_strings)
{
	ck_assert_str_eq(json("plain"), "\"plain\"");
	ck_assert_str_eq(json("a\"b\\c\n\t"), "\"a\\\"b\\\\c\\n\\t\"");
	ck_assert_str_eq(json("\x01"), "\"\\u0001\"");
	ck_assert_str_eq(json("caf\xc3\xa9"), "\"caf\xc3\xa9\"");      /* valid UTF-8 kept */
	ck_assert_str_eq(json("caf\xe9"), "\"caf\\u00e9\"");            /* Latin-1 byte escaped */
	ck_assert_str_eq(json("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\""); /* surrogate */
	ck_assert_str_eq(json("\xc0\xaf"), "\"\\u00c0\\u00af\"");       /* overlong */
	ck_assert_str_eq(json(NULL), "\"\"");
}
END_TEST

/* The JSON string as written a byte at a time (mc_buf_json_str before it
 * copied runs of plain bytes at once): the same bytes for any input. */
static void json_by_byte(char *out, const unsigned char *p)
{
	const unsigned char *end = p + strlen((const char *)p);
	out += sprintf(out, "\"");
	while (*p) {
		size_t n = mc_utf8_len(p, end);
		if (n > 1) {
			memcpy(out, p, n);
			out += n;
			p += n;
			continue;
		}
		if (*p == '"' || *p == '\\')
			out += sprintf(out, "\\%c", *p);
		else if (*p == '\n' || *p == '\t' || *p == '\r')
			out += sprintf(out, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
		else if (*p < 0x20 || n == 0)
			out += sprintf(out, "\\u%04x", *p);
		else
			*out++ = (char)*p;
		p++;
	}
	sprintf(out, "\"");
}

START_TEST(json_strings_as_by_byte)
{
	static const unsigned char pieces[] = "ab/\"\\\n\t\r\x01\x1f\x7f\xc3\xa9\xe9\xed\xa0\x80\xf0\x9f\x98\x80";
	unsigned seed = 17;
	for (int round = 0; round < 20000; round++) {
		unsigned char in[48];
		size_t len = (size_t)(rand_r(&seed) % 40);
		for (size_t i = 0; i < len; i++) {
			unsigned r = (unsigned)rand_r(&seed);
			in[i] = r & 1 ? pieces[(r >> 1) % (sizeof pieces - 1)] : (unsigned char)(r >> 8);
			if (!in[i])
				in[i] = 'z';
		}
		in[len] = 0;
		char want[48 * 6 + 3];
		json_by_byte(want, in);
		ck_assert_str_eq(json((const char *)in), want);
		ck_assert_uint_eq(mc_buf_json_len((const char *)in, len), strlen(want));
	}
}
END_TEST

/* mc_buf_json_at tests 8 bytes at a time: every byte value at every
 * place of plain runs of every length up to 24 (one, two and three
 * words, and the bytes past them), as written a byte at a time; and
 * mc_buf_json_len counts what it writes. */
START_TEST(json_strings_by_word)
{
	for (size_t len = 1; len <= 24; len++)
		for (size_t at = 0; at < len; at++)
			for (unsigned c = 1; c < 256; c++) {
				unsigned char in[32];
				memset(in, 'a' + (int)(len % 26), len);
				in[at] = (unsigned char)c;
				in[len] = 0;
				char want[32 * 6 + 3];
				json_by_byte(want, in);
				ck_assert_str_eq(json((const char *)in), want);
				ck_assert_uint_eq(mc_buf_json_len((const char *)in, len), strlen(want));
			}
}
END_TEST

/* mc_buf_u64, mc_buf_int and mc_buf_hex write what %llu, %d and 0x%lx do. */
START_TEST(numbers_as_printf)
{
	static const uint64_t v[] = { 0, 1, 9, 10, 99, 100, 4096, 0x7fffffff, 0x80000000,
				      1234567890123ULL, UINT64_MAX - 1, UINT64_MAX };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		for (int how = 0; how < 3; how++) {
			struct mc_buf b = { 0 };
			char want[32];
			if (how == 0) {
				mc_buf_u64(&b, v[i]);
				snprintf(want, sizeof want, "%llu", (unsigned long long)v[i]);
			} else if (how == 1) {
				mc_buf_int(&b, (int)v[i]);
				snprintf(want, sizeof want, "%d", (int)v[i]);
			} else {
				mc_buf_hex(&b, v[i]);
				snprintf(want, sizeof want, "0x%lx", (unsigned long)v[i]);
			}
			ck_assert(!b.oom);
			ck_assert_str_eq(b.s, want);
			mc_buf_free(&b);
		}
	}
}
END_TEST

/* mc_buf_tenths writes what "%.1f" does of v / 2^shift: every value of
 * the report's KiB range (ties, to even, among them) and the MiB range's
 * edges; mc_buf_strs the strings in order. */
START_TEST(tenths_as_printf)
{
	/* One buffer for every value, emptied before each: a buffer made
	 * and freed a value was a mapping and an unmapping each, and the
	 * ASan build of this test ran past check's timeout on a busy
	 * machine. */
	struct mc_buf b = { 0 };
	for (int pass = 0; pass < 2; pass++) {
		/* KiB: each value of its first 100,000, then a sample; MiB:
		 * a multiple of 2^18 and its neighbours (ties: odd multiples
		 * of 2^18) */
		unsigned shift = pass ? 20 : 10;
		uint64_t lo = pass ? 10ull << 20 : 10240, hi = pass ? 10ull << 30 : 10ull << 20;
		int ties = 0;
		for (uint64_t at = lo; at < hi; at += pass ? 1u << 18 : at - lo < 100000 ? 1 : 9973) {
			for (uint64_t v = at - (pass != 0); v <= at + (pass != 0); v++) {
				char want[48];
				snprintf(want, sizeof want, "%.1f", (double)v / (double)(1ull << shift));
				b.len = 0;
				mc_buf_tenths(&b, v, shift);
				ck_assert(!b.oom);
				ck_assert_msg(strcmp(b.s, want) == 0, "%llu >> %u: %s, snprintf %s",
					      (unsigned long long)v, shift, b.s, want);
				ties += ((v * 10) & ((1ull << shift) - 1)) == 1ull << (shift - 1);
			}
		}
		ck_assert_int_gt(ties, 10);  /* the rounding of ties was tried */
	}
	mc_buf_free(&b);
	b = (struct mc_buf){ 0 };
	mc_buf_strs(&b, "a", "", "bc", NULL);
	mc_buf_strs(&b, NULL);
	mc_buf_strs(&b, "d\n", NULL);
	ck_assert_str_eq(b.s, "abcd\n");
	mc_buf_free(&b);
}
END_TEST

static const char *text(const char *s, size_t cap)
{
	static char out[256];
	return mc_text_escape(s, out, cap < sizeof out ? cap : sizeof out);
}

/* Issue 14, item 11: nothing in a name can make a line, move the
 * cursor or come out as another character set. */
START_TEST(text_escapes)
{
	ck_assert_str_eq(text("plain name", 256), "plain name");
	ck_assert_str_eq(text("x\n==1234== PASS", 256), "x\\n==1234== PASS");
	ck_assert_str_eq(text("a\tb\rc\\d", 256), "a\\tb\\rc\\\\d");
	ck_assert_str_eq(text("\x1b[31mred", 256), "\\x1b[31mred");     /* ANSI escape */
	ck_assert_str_eq(text("del\x7f", 256), "del\\x7f");
	ck_assert_str_eq(text("caf\xc3\xa9", 256), "caf\xc3\xa9");      /* UTF-8 kept */
	ck_assert_str_eq(text("caf\xe9", 256), "caf\\xe9");            /* Latin-1 byte */
	ck_assert_str_eq(text("\xc2\x9b" "2J", 256), "\\u009b2J");     /* C1 CSI */
	ck_assert_str_eq(text("\xe2\x82\xac", 256), "\xe2\x82\xac");  /* the euro sign */
	ck_assert_str_eq(text("\xed\xa0\x80", 256), "\\xed\\xa0\\x80"); /* a surrogate */
	/* cut between escapes, never inside one or a character */
	ck_assert_str_eq(text("ab\ncd", 5), "ab\\n");
	ck_assert_str_eq(text("ab\ncd", 4), "ab");
	ck_assert_str_eq(text("a\xc3\xa9", 3), "a");
	ck_assert_str_eq(text("abcdef", 4), "abc");        /* inside a plain run */
	ck_assert_str_eq(text("abcdef", 1), "");
	ck_assert_str_eq(text("ab\x7f" "cd\\ef\n", 256), "ab\\x7fcd\\\\ef\\n");
	ck_assert_str_eq(text(NULL, 8), "");
}
END_TEST

START_TEST(names_cut_at_characters)
{
	char dst[8];
	mc_copy_name(dst, sizeof dst, "abc");
	ck_assert_str_eq(dst, "abc");
	mc_copy_name(dst, sizeof dst, "abcdefghij");
	ck_assert_str_eq(dst, "abcdefg");
	/* "abcde" then a 3-byte character: it does not fit, so it goes. */
	mc_copy_name(dst, sizeof dst, "abcde\xe2\x82\xac");
	ck_assert_str_eq(dst, "abcde");
}
END_TEST

START_TEST(commas)
{
	char b[32];
	ck_assert_str_eq(mc_commas(0, b), "0");
	ck_assert_str_eq(mc_commas(999, b), "999");
	ck_assert_str_eq(mc_commas(1000, b), "1,000");
	ck_assert_str_eq(mc_commas(1234567, b), "1,234,567");
	ck_assert_str_eq(mc_commas(UINT64_MAX, b), "18,446,744,073,709,551,615");
}
END_TEST

START_TEST(log_paths)
{
	char out[64];
	size_t bad = 0;
	ck_assert_int_eq(mc_text_path("/t/mc.%p.log", 4242, out, sizeof out, &bad), 14);
	ck_assert_str_eq(out, "/t/mc.4242.log");
	ck_assert_int_eq(mc_text_path("%p-%p%%", 7, out, sizeof out, &bad), 4);
	ck_assert_str_eq(out, "7-7%");
	ck_assert_int_eq(mc_text_path("plain", 7, out, sizeof out, &bad), 5);
	ck_assert_str_eq(out, "plain");
	/* another %, or a % at the end: the offset of the % */
	ck_assert_int_eq(mc_text_path("ab%q", 7, out, sizeof out, &bad), -1);
	ck_assert_uint_eq(bad, 2);
	ck_assert_int_eq(mc_text_path("ab%", 7, out, sizeof out, &bad), -1);
	ck_assert_uint_eq(bad, 2);
	/* too long, the terminating NUL counted */
	ck_assert_int_eq(mc_text_path("12345678", 7, out, 8, &bad), -1);
	ck_assert_uint_eq(bad, SIZE_MAX);
	ck_assert_int_eq(mc_text_path("1234567", 7, out, 8, &bad), 7);
	ck_assert_int_eq(mc_text_path("%p", 123456789, out, 9, &bad), -1);
	ck_assert_uint_eq(bad, SIZE_MAX);
}
END_TEST

/* The signal mask's changes, counted (textout.c's calls reach this first). */
static int masks;

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	masks++;
	return syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) ? errno : 0;
}

/* A regular file cannot raise SIGPIPE: the text goes out without the
 * mask changed; to a pipe, SIGPIPE is blocked around the write. */
START_TEST(sigpipe_blocked_for_pipes_only)
{
	char path[] = "/tmp/unit_util_textXXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	mc_text_open(path);
	masks = 0;
	ck_assert_int_eq(mc_text_write("one\n", 4), 0);
	ck_assert_int_eq(mc_text_write("two\n", 4), 0);
	ck_assert_int_eq(masks, 0);
	char got[16] = { 0 };
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(read(fd, got, sizeof got - 1), 8);
	close(fd);
	unlink(path);
	ck_assert_str_eq(got, "one\ntwo\n");
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	masks = 0;
	ck_assert_int_eq(mc_write_all(p[1], "x", 1), 0);
	ck_assert_int_eq(masks, 2);
}
END_TEST

/* Standard error a pipe whose reader has gone: the text's write fails
 * with EPIPE, SIGPIPE blocked around it and taken back, and the process
 * lives on. */
START_TEST(text_to_a_gone_pipe)
{
	int p[2], saved = dup(2);
	ck_assert_int_eq(pipe(p), 0);
	dup2(p[1], 2);
	close(p[0]);
	close(p[1]);
	mc_text_open(NULL);
	masks = 0;
	int err = mc_text_write("lost\n", 5);
	dup2(saved, 2);
	ck_assert_int_eq(err, EPIPE);
	ck_assert_int_eq(masks, 2);
	sigset_t pending;
	ck_assert_int_eq(sigpending(&pending), 0);
	ck_assert(!sigismember(&pending, SIGPIPE));
}
END_TEST

START_TEST(program_patterns)
{
	const char *exe = "/home/u/proj/build/tests/test-array";
	ck_assert(mc_program_matches("test-*", exe));
	ck_assert(mc_program_matches("*/build/tests/*", exe)); /* '*' crosses '/' */
	ck_assert(mc_program_matches("bash:sh:test-array", exe));
	ck_assert(mc_program_matches("::test-a?ray:", exe));    /* empty ones skipped */
	ck_assert(!mc_program_matches("array", exe));             /* the whole name */
	ck_assert(!mc_program_matches("tests/test-array", exe));  /* a '/': the whole path */
	ck_assert(!mc_program_matches("", exe));
	ck_assert(!mc_program_matches("bash:sh", "/usr/bin/dash"));
	ck_assert(mc_program_matches("/usr/bin/*", "/usr/bin/dash"));
	/* names without *, ?, [ or \ compared, not matched: the same answers */
	ck_assert(mc_program_matches("sh:test-array", exe));
	ck_assert(!mc_program_matches("test-arra:est-array", exe));
	ck_assert(mc_program_matches(exe, exe));
	ck_assert(!mc_program_matches("/home/u/proj/build/tests", exe));
	ck_assert(mc_program_matches("test\\-array", exe)); /* an escape: fnmatch */
	/* '*' alone, every program: no path needed (mc_process_verdict) */
	ck_assert(mc_programs_every("*"));
	ck_assert(mc_programs_every("sh:**:"));
	ck_assert(!mc_programs_every("*sh"));
	ck_assert(!mc_programs_every("/*"));
	ck_assert(!mc_programs_every(""));
	ck_assert(!mc_programs_every("::"));
	ck_assert(mc_program_matches("sh:*", exe));
	ck_assert(mc_program_matches("*", "/x/.hidden"));
}
END_TEST

/* progname.c's matcher against the C library's fnmatch (flags 0, the C
 * locale) on random patterns and names over the characters that mean
 * something to either (brackets, classes, escapes, ranges, negations),
 * classes and collating elements mixed in, well formed or not: the same
 * answer every time (3 million pairs of seed 43 and 6 million of seed 7
 * by hand while it was written, 0 apart; 300,000 here). */
START_TEST(patterns_as_fnmatch)
{
	static const char pchars[] = "ab/.*?[]!^-\\:xz";
	static const char schars[] = "ab/.-[]\\^!xz";
	static const char *const pieces[] = { "[[:alpha:]]", "[[:digit:]x]", "[![:upper:]]",
					      "[[:bogus:]]", "[[.a.]-z]",    "[[=b=]]",
					      "[[.ab.]]",    "[[:[[:alpha:]]" };
	unsigned r = 43;
	char pat[32], subject[12];
	for (int i = 0; i < 300000; i++) {
		size_t pl = 0, sl;
		for (size_t k = (r = r * 1103515245 + 12345) >> 16 & 7; k > 0; k--)
			pat[pl++] = pchars[((r = r * 1103515245 + 12345) >> 16) % (sizeof pchars - 1)];
		if (((r = r * 1103515245 + 12345) >> 16) % 6 == 0) {
			const char *piece = pieces[(r >> 8) % (sizeof pieces / sizeof pieces[0])];
			memcpy(pat + pl, piece, strlen(piece));
			pl += strlen(piece);
		}
		pat[pl] = 0;
		sl = ((r = r * 1103515245 + 12345) >> 16) % 8;
		for (size_t k = 0; k < sl; k++)
			subject[k] = schars[((r = r * 1103515245 + 12345) >> 16) % (sizeof schars - 1)];
		subject[sl] = 0;
		bool want = fnmatch(pat, subject, 0) == 0;
		ck_assert_msg(mc_glob_match(pat, pl, subject) == want,
			      "pattern \"%s\", name \"%s\": fnmatch says %s", pat, subject,
			      want ? "match" : "no match");
	}
}
END_TEST

START_TEST(options_defaults_and_bad_values)
{
	unsetenv("MEMCHECK_STACK_DEPTH");
	unsetenv("MEMCHECK_TEXT");
	unsetenv("MEMCHECK_REPORT");
	mc_options_init();
	ck_assert_int_eq(mc_opt.stack_depth, 16);
	ck_assert_int_eq(mc_opt.text, MC_TEXT_AUTO);
	ck_assert_int_eq(mc_opt.track, 1);
	ck_assert_ptr_null(mc_opt.report);

	setenv("MEMCHECK_STACK_DEPTH", "8", 1);
	setenv("MEMCHECK_TEXT", "full", 1);
	setenv("MEMCHECK_TRACK", "off", 1);
	setenv("MEMCHECK_REPORT", "rel/out.jsonl", 1);
	mc_options_init();
	ck_assert_int_eq(mc_opt.stack_depth, 8);
	ck_assert_int_eq(mc_opt.text, MC_TEXT_FULL);
	ck_assert_int_eq(mc_opt.track, 0);
	/* made absolute at start-up: the program may chdir */
	ck_assert_ptr_nonnull(mc_opt.report);
	ck_assert_int_eq(mc_opt.report[0], '/');
	ck_assert_ptr_nonnull(strstr(mc_opt.report, "/rel/out.jsonl"));

	setenv("MEMCHECK_STACK_DEPTH", "65", 1);
	setenv("MEMCHECK_TEXT", "loud", 1);
	setenv("MEMCHECK_TRACK", "maybe", 1);
	mc_options_init();
	ck_assert_int_eq(mc_opt.stack_depth, 16);
	ck_assert_int_eq(mc_opt.text, MC_TEXT_AUTO);
	ck_assert_int_eq(mc_opt.track, 1);
	setenv("MEMCHECK_STACK_DEPTH", "12abc", 1);
	mc_options_init();
	ck_assert_int_eq(mc_opt.stack_depth, 16);
}
END_TEST

static void count_own(uintptr_t lo, uintptr_t hi, void *arg)
{
	uintptr_t *r = arg; /* {lo, hi, found} */
	if (lo == r[0] && hi == r[1])
		r[2]++;
}

static bool own_has(const void *p, size_t len)
{
	uintptr_t r[3] = { (uintptr_t)p, (uintptr_t)p + len, 0 };
	ck_assert(mc_own_each(count_own, r));
	return r[2] == 1;
}

/* Whether the mapping that holds p has huge pages turned off
 * (MADV_NOHUGEPAGE: "nh" among its VmFlags in /proc/self/smaps). */
static bool no_huge_pages(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	ck_assert(f);
	char line[512];
	bool in = false, nh = false;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			nh = strstr(line, " nh") != NULL;
	}
	fclose(f);
	return nh;
}

/* Reservations under 1 MiB are cut from one mapping, page after page,
 * each one of memcheck's own mappings in whole pages; unmapped,
 * a piece's pages go and its neighbours stay. */
START_TEST(reservations_carved)
{
	char *a = mc_map_reserve(196608), *b = mc_map_lazy(5000), *c = mc_map_reserve(524288);
	ck_assert(a && b && c);
	ck_assert_ptr_eq(b, a + 196608);
	ck_assert_ptr_eq(c, b + 8192); /* whole pages */
	/* registered in whole pages: b's last page is memcheck's too */
	ck_assert(own_has(a, 196608) && own_has(b, 8192) && own_has(c, 524288));
	unsigned char vec[1];
	ck_assert_int_eq(mincore(c, 4096, vec), 0);
	ck_assert_int_eq(vec[0] & 1, 0); /* reserved, untouched */
	ck_assert_int_eq(a[0] | b[4999] | c[524287], 0);
	a[0] = b[0] = c[0] = 1;
	mc_unmap(b, 5000);
	ck_assert(!own_has(b, 8192));
	ck_assert_int_eq(mincore(b, 4096, vec), -1); /* gone */
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(a[0] + c[0], 2);
	/* over 1 MiB: the start of a 9.9 MiB reservation of its own, huge
	 * pages off, which the pieces after it follow */
	char *big = mc_map_reserve((size_t)2 << 20);
	ck_assert(big && own_has(big, (size_t)2 << 20));
	ck_assert_ptr_ne(big, c + 524288);
	ck_assert(no_huge_pages(big));
	char *next = mc_map_reserve(65536);
	ck_assert_ptr_eq(next, big + ((size_t)2 << 20));
	ck_assert(own_has(next, 65536) && own_has(big, (size_t)2 << 20));
	mc_unmap(next, 65536);
	/* over 4 MiB: a mapping of its own, as before */
	char *huge = mc_map_reserve((size_t)5 << 20);
	ck_assert(huge && own_has(huge, (size_t)5 << 20));
	ck_assert(huge < big || huge >= big + ((size_t)10 << 20) - 65536);
	mc_unmap(huge, (size_t)5 << 20);
	/* past what one reservation holds, the next one serves */
	for (int i = 0; i < 16; i++) {
		char *p = mc_map_reserve(512 * 1024);
		ck_assert(p && own_has(p, 512 * 1024));
		p[512 * 1024 - 1] = 1;
		mc_unmap(p, 512 * 1024);
	}
	mc_unmap(a, 196608);
	mc_unmap(c, 524288);
	mc_unmap(big, (size_t)2 << 20);
}
END_TEST

/* Buffers side by side, one on the static first page and the other
 * mapped, each grown past its first page with its text kept, freed and
 * taken again: each holds its own text throughout. */
START_TEST(buffers_side_by_side)
{
	for (int round = 0; round < 2; round++) {
		struct mc_buf a = { 0 }, b = { 0 };
		mc_buf_puts(&a, "a");
		mc_buf_puts(&b, "b");
		ck_assert_ptr_ne(a.s, b.s);
		for (int i = 0; i < 3000; i++) {
			mc_buf_puts(&a, "x");
			mc_buf_printf(&b, "%d", i % 10);
		}
		ck_assert(!a.oom && !b.oom);
		ck_assert_uint_eq(a.len, 3001);
		ck_assert_uint_eq(b.len, 3001);
		ck_assert_int_eq(a.s[0], 'a');
		ck_assert_int_eq(b.s[0], 'b');
		ck_assert_int_eq(b.s[3000], '9');
		ck_assert_uint_eq(strlen(a.s), 3001);
		struct mc_buf c = { 0 };
		mc_buf_puts(&c, "c"); /* a third: mapped */
		mc_buf_free(&a);
		for (int i = 0; i < 5000; i++) /* past 4 KiB: grown, copied */
			mc_buf_puts(&b, "y");
		ck_assert_uint_eq(b.len, 8001);
		ck_assert_int_eq(b.s[0], 'b');
		ck_assert_int_eq(b.s[8000], 'y');
		ck_assert_str_eq(c.s, "c");
		mc_buf_free(&b);
		mc_buf_free(&c);
		ck_assert_ptr_null(b.s);
	}
}
END_TEST

/* The exit's tail (ownmap.c): a piece given back is taken again by a
 * later request it fits, cleared (the exit's scan gives back pages its
 * suppressions and report then write: each page first touched costs a
 * fault); the length a caller gives back is not trusted (a page-rounded
 * one would reach the pieces after it); neighbours given back are
 * joined; a lazy request takes fresh pages.  On main before this
 * (bd55bca) nothing given back was taken again. */
static bool t_before(size_t bytes)
{
	(void)bytes;
	return false;
}

static void t_after(bool folding, int64_t bytes)
{
	(void)folding;
	(void)bytes;
}

static void t_lazy(const void *p, size_t len)
{
	(void)p;
	(void)len;
}

static bool t_lazy_remove(const void *p, size_t len)
{
	(void)p;
	(void)len;
	return true;
}

static bool all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

START_TEST(tail_pieces_taken_again)
{
	static const struct mc_map_hooks hooks = { t_before, t_after, t_lazy, t_lazy_remove };
	mc_map_hooks_set(&hooks);
	mc_map_tail_begin();
	/* packed at 64 bytes: the roots, then two small pieces */
	char *a = mc_map(13328), *b = mc_map(700), *c = mc_map(300);
	ck_assert(a && b && c);
	ck_assert_ptr_eq(b, a + 13376);
	ck_assert_ptr_eq(c, a + 14080);
	memset(a, 0x55, 13328);
	memset(c, 0x77, 300);
	mc_unmap(a, 13328);
	/* a file read where the roots were, cleared; the rest of their
	 * piece serves the next small request */
	char *d = mc_map_io(11680);
	ck_assert_ptr_eq(d, a);
	ck_assert(all_zero(d, 11680));
	char *e = mc_map(1000);
	ck_assert_ptr_eq(e, a + 11712);
	ck_assert(all_zero(e, 1000));
	/* given back page-rounded: b's 704 bytes, not c's */
	mc_unmap(b, 4096);
	char *f = mc_map(2000);
	ck_assert_ptr_eq(f, a + 14400); /* fresh: what b left joined is 1344 */
	for (int i = 0; i < 300; i++)
		ck_assert_int_eq(c[i], 0x77);
	/* e joined to b's and the rest of a's: 2368 bytes for 2300 */
	mc_unmap(e, 1000);
	char *g = mc_map(2300);
	ck_assert_ptr_eq(g, a + 11712);
	ck_assert(all_zero(g, 2300));
	/* lazy: fresh pages, whole */
	mc_unmap(d, 11680);
	char *h = mc_map_lazy(8192);
	ck_assert_ptr_eq(h, a + 20480);
	/* a buffer written before it is read (report.c's JSON line at
	 * exit) takes a piece given back as its last user left it: not
	 * cleared (16 KiB of `rep stosb` at every JSON exit until session
	 * 40, main 1d0142c, and a fault for each page of the piece its
	 * last user never touched); mc_map_io, given the same piece
	 * back, clears it */
	char *p = mc_map(2300);
	memset(p, 0x66, 2300);
	mc_unmap(p, 2300);
	char *w = mc_map_io_written(2300);
	ck_assert_ptr_eq(w, p); /* where p was taken: the same piece */
	for (int i = 0; i < 2300; i++)
		ck_assert_int_eq(w[i], 0x66);
	mc_unmap_io(w, 2300);
	char *y = mc_map_io(2300);
	ck_assert_ptr_eq(y, p);
	ck_assert(all_zero(y, 2300));
}
END_TEST

/* sort.c mc_sort: the order glibc's (stable) merge sort gives, which
 * region.c's leak records kept, for every length through its runs and
 * merges; ties keep their order. */
struct sort_el {
	uint32_t key, seq;
};

static int sort_by_key(const void *x, const void *y)
{
	const struct sort_el *a = x, *b = y;
	return a->key < b->key ? -1 : a->key > b->key;
}

static int sort_by_key_seq(const void *x, const void *y)
{
	const struct sort_el *a = x, *b = y;
	int c = sort_by_key(x, y);
	return c ? c : a->seq < b->seq ? -1 : a->seq > b->seq;
}

START_TEST(sort_stable_as_merge_sort)
{
	static struct sort_el v[5000], w[5000];
	static const size_t lens[] = { 0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 64, 65, 100, 257, 5000 };
	uint32_t x = 12345;
	for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
		for (uint32_t range = 1; range <= 1000; range *= 10) {
			size_t n = lens[l];
			for (size_t i = 0; i < n; i++) {
				x = x * 1103515245u + 12345u;
				v[i] = (struct sort_el){ .key = (x >> 8) % range, .seq = (uint32_t)i };
			}
			memcpy(w, v, n * sizeof *v);
			mc_sort(v, n, sizeof *v, sort_by_key);
			qsort(w, n, sizeof *w, sort_by_key_seq);   /* a total order: stable's */
			for (size_t i = 0; i < n; i++) {
				ck_assert_msg(v[i].key == w[i].key && v[i].seq == w[i].seq,
					      "n %zu range %u: element %zu is %u/%u, not %u/%u", n,
					      range, i, v[i].key, v[i].seq, w[i].key, w[i].seq);
			}
		}
}
END_TEST

/* mc_sort of elements larger than its 64-byte copy (until session 26
 * left unsorted, silently): 72, 100 and 200 bytes, each element's
 * payload moved with its key, stable, through the insertion runs and
 * the merges. */
struct sort_big {
	uint32_t key, seq;
	unsigned char pay[192];
};

START_TEST(sort_large_elements)
{
	static struct sort_big v[300], w[300];
	static const size_t sizes[] = { 72, 100, 200 };
	static const size_t lens[] = { 2, 3, 16, 17, 40, 300 };
	uint32_t x = 777;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
			size_t n = lens[l], sz = sizes[s];
			char *a = (char *)v, *b = (char *)w;
			for (size_t i = 0; i < n; i++) {
				x = x * 1103515245u + 12345u;
				struct sort_big e = { .key = (x >> 8) % 10, .seq = (uint32_t)i };
				memset(e.pay, (int)(i * 7 + 1), sizeof e.pay);
				memcpy(a + i * sz, &e, sz);
			}
			memcpy(b, a, n * sz);
			mc_sort(a, n, sz, sort_by_key);
			qsort(b, n, sz, sort_by_key_seq);
			ck_assert_msg(memcmp(a, b, n * sz) == 0, "size %zu, %zu elements: not sorted stably",
				      sz, n);
		}
}
END_TEST

/* objects.c's table of a forked child's objects (check runs each test
 * in a forked child): it answers while no dlclose began since the note
 * and the main namespace holds as many objects as then, and stops at
 * either, never answering for an object unloaded.  The count is read
 * where the note found the dynamic linker's layout (here a copy of its
 * first two fields: the chain's head, the count). */
struct fork_ns {
	const struct link_map *loaded;
	unsigned nloaded;
};

/* libm loaded now, its cos, and the table noted, which answers for it
 * (NULL where libm was loaded before: its dlclose would unload
 * nothing). */
static void *fork_table_load(void **cosine, struct fork_ns *ns)
{
	*cosine = NULL;
	if (dlopen("libm.so.6", RTLD_NOW | RTLD_NOLOAD))
		return NULL;
	void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	ck_assert_ptr_nonnull(h);
	*cosine = dlsym(h, "cos");
	struct link_map *lm = NULL;
	ck_assert_int_eq(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
	while (lm->l_prev)
		lm = lm->l_prev;
	ns->loaded = lm;
	for (ns->nloaded = 0; lm; lm = lm->l_next)
		ns->nloaded++;
	struct dl_find_object fo;
	mc_fork_objects_note(ns);
	ck_assert_int_eq(mc_find_object(*cosine, &fo), 0);
	ck_assert_ptr_eq(fo.dlfo_map_start, (void *)((struct link_map *)fo.dlfo_link_map)->l_addr);
	return h;
}

/* _i 0: a dlclose through the wrapper, which notes it before the
 * unload; 1: the C library's own unloads, through no wrapper, which
 * the namespace's count shows. */
START_TEST(fork_table_stops_at_unload)
{
	void *cosine;
	struct fork_ns ns;
	void *h = fork_table_load(&cosine, &ns);
	if (!h)
		return;
	struct dl_find_object fo;
	if (_i == 0)
		mc_objects_closing(); /* dlclose.c's wrapper, before the unload */
	ck_assert_int_eq(dlclose(h), 0);
	if (_i == 1) {
		/* the table's copy still, until the count says otherwise */
		ck_assert_int_eq(mc_find_object(cosine, &fo), 0);
		ns.nloaded--; /* as the dynamic linker's count went */
	}
	ck_assert_int_ne(mc_find_object(cosine, &fo), 0);
}
END_TEST

int main(void)
{
	/* 20 s, stretched by the load: the ASan build's tenths_as_printf
	 * (200,000 values through snprintf) ran past check's 4 s with a
	 * load of 10 on 2 processors (make check on 6595981) */
	TCase *tc = h_tcase("util", 20);
	tcase_add_test(tc, json_strings);
	tcase_add_test(tc, json_strings_as_by_byte);
	tcase_add_test(tc, json_strings_by_word);
	tcase_add_test(tc, numbers_as_printf);
	tcase_add_test(tc, tenths_as_printf);
	tcase_add_test(tc, text_escapes);
	tcase_add_test(tc, names_cut_at_characters);
	tcase_add_test(tc, commas);
	tcase_add_test(tc, log_paths);
	tcase_add_test(tc, sigpipe_blocked_for_pipes_only);
	tcase_add_test(tc, text_to_a_gone_pipe);
	tcase_add_test(tc, program_patterns);
	tcase_add_test(tc, patterns_as_fnmatch);
	tcase_add_test(tc, options_defaults_and_bad_values);
	tcase_add_test(tc, reservations_carved);
	tcase_add_test(tc, buffers_side_by_side);
	tcase_add_test(tc, tail_pieces_taken_again);
	tcase_add_test(tc, sort_stable_as_merge_sort);
	tcase_add_test(tc, sort_large_elements);
	tcase_add_loop_test(tc, fork_table_stops_at_unload, 0, 2);
	return h_run_suite(NULL);
}
