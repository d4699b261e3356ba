/*
 * unit_json.c - lib/json.c on its own: report lines written by the real
 * library read back field by field; every kind of malformed line refused
 * with "column N: expected ..."; every prefix and many one-byte
 * mutations of a real line handled; and no allocation on any of it (the
 * library reads its baseline report with this inside the program's
 * malloc).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suite.h"

/* ---- allocation counter ----------------------------------------------
 * Every malloc-family call of this process, counted while `counting` is
 * set.  Under ASan its own allocator must stay in charge, so the check
 * is made only in the plain build. */
#ifndef __SANITIZE_ADDRESS__
#define COUNT_ALLOCS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int counting, allocs;
void *malloc(size_t n)
{
	allocs += counting;
	return __libc_malloc(n);
}
void *calloc(size_t n, size_t s)
{
	allocs += counting;
	return __libc_calloc(n, s);
}
void *realloc(void *p, size_t n)
{
	allocs += counting;
	return __libc_realloc(p, n);
}
void free(void *p)
{
	allocs += counting && p;
	__libc_free(p);
}
#else
#define COUNT_ALLOCS 0
static volatile int counting, allocs;
#endif

/* ---- records written by the library ----------------------------------
 * LD_PRELOAD=build/libmemcheck.so MEMCHECK_REPORT=... on tests/prog/
 * plain_errors leak (a leak, with its stack), plain_mix under jemalloc with
 * MEMCHECK_BUDGET and MEMCHECK_BASELINE (two budget violations), regions
 * name_escapes (a name that needs every escape), plain_mix under
 * mimalloc (retained_bytes measured). */
static const char LEAK[] =
	"{\"name\":\"process\",\"pid\":11685,\"program\":\"/work/main/build/tests/prog/plain_errors\","
	"\"allocator\":\"glibc\",\"allocs\":2,\"frees\":1,\"reallocs\":0,\"failed_allocs\":0,"
	"\"bytes_allocated\":100010,\"bytes_freed\":10,\"live_blocks\":1,\"live_bytes\":100000,"
	"\"peak_live_bytes\":100010,\"definitely_lost\":{\"blocks\":1,\"bytes\":100000},"
	"\"indirectly_lost\":{\"blocks\":0,\"bytes\":0},\"possibly_lost\":{\"blocks\":0,"
	"\"bytes\":0},\"still_reachable\":{\"blocks\":0,\"bytes\":0},\"suppressed\":{\"blocks\":0,"
	"\"bytes\":0},\"double_frees\":0,\"invalid_frees\":0,\"retained_bytes\":32256,"
	"\"retained_after_release\":null,\"rss_begin\":1789952,\"rss_end\":1822720,"
	"\"peak_rss\":1822720,\"seconds\":0.000018,\"verdict\":\"fail\",\"violations\":[\"100000 bytes in 1 blocks definitely lost\"],"
	"\"leaks\":[{\"kind\":\"definitely_lost\",\"blocks\":1,\"bytes\":100000,"
	"\"stack\":[{\"address\":\"0x5645a7f311fe\",\"function\":\"leak_here\","
	"\"file\":\"tests/prog/plain_errors.c\",\"line\":31,\"object\":\"/work/main/build/tests/prog/plain_errors\"},"
	"{\"address\":\"0x5645a7f31209\",\"function\":\"leak_level2\",\"file\":\"tests/prog/plain_errors.c\","
	"\"line\":36,\"object\":\"/work/main/build/tests/prog/plain_errors\"},"
	"{\"address\":\"0x5645a7f31214\",\"function\":\"leak_level1\",\"file\":\"tests/prog/plain_errors.c\","
	"\"line\":41,\"object\":\"/work/main/build/tests/prog/plain_errors\"},"
	"{\"address\":\"0x5645a7f31316\",\"function\":\"main\",\"file\":\"tests/prog/plain_errors.c\","
	"\"line\":70,\"object\":\"/work/main/build/tests/prog/plain_errors\"},"
	"{\"address\":\"0x7f9913a5024a\",\"function\":\"__libc_start_call_main\","
	"\"file\":\"../sysdeps/nptl/libc_start_call_main.h\",\"line\":58,\"object\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\"}]}]}";

static const char BUDGET[] =
	"{\"name\":\"process\",\"pid\":11742,\"program\":\"/work/main/build/tests/prog/plain_mix\","
	"\"allocator\":\"jemalloc\",\"allocs\":85,\"frees\":85,\"reallocs\":34,"
	"\"failed_allocs\":0,\"bytes_allocated\":18409,\"bytes_freed\":18409,"
	"\"live_blocks\":0,\"live_bytes\":0,\"peak_live_bytes\":13475,\"definitely_lost\":{\"blocks\":0,"
	"\"bytes\":0},\"indirectly_lost\":{\"blocks\":0,\"bytes\":0},\"possibly_lost\":{\"blocks\":0,"
	"\"bytes\":0},\"still_reachable\":{\"blocks\":0,\"bytes\":0},\"suppressed\":{\"blocks\":0,"
	"\"bytes\":0},\"double_frees\":0,\"invalid_frees\":0,\"retained_bytes\":2965392,"
	"\"retained_after_release\":null,\"rss_begin\":4034560,\"rss_end\":4435968,"
	"\"peak_rss\":4435968,\"seconds\":0.000186,\"verdict\":\"fail\",\"violations\":[\"/tmp/t.budget:1: peak_live_bytes 13.2 KiB > 1024 B\","
	"\"/tmp/t.budget:3: peak_rss 4.2 MiB > 2.3 MiB (+10% of glibc's 2.1 MiB)\"],"
	"\"leaks\":[]}";

static const char ESCAPES[] =
	"{\"name\":\"q\\\" b\\\\ n\\n t\\t c\\u0001 \xc3\xa9" " end\",\"pid\":11743,"
	"\"program\":\"/work/main/build/tests/prog/regions\",\"allocator\":\"glibc\","
	"\"allocs\":0,\"frees\":0,\"reallocs\":0,\"failed_allocs\":0,\"bytes_allocated\":0,"
	"\"bytes_freed\":0,\"live_blocks\":0,\"live_bytes\":0,\"peak_live_bytes\":0,"
	"\"definitely_lost\":{\"blocks\":0,\"bytes\":0},\"indirectly_lost\":{\"blocks\":0,"
	"\"bytes\":0},\"possibly_lost\":{\"blocks\":0,\"bytes\":0},\"still_reachable\":{\"blocks\":0,"
	"\"bytes\":0},\"suppressed\":{\"blocks\":0,\"bytes\":0},\"double_frees\":0,"
	"\"invalid_frees\":0,\"retained_bytes\":132272,\"retained_after_release\":null,"
	"\"rss_begin\":1822720,\"rss_end\":1822720,\"peak_rss\":1822720,\"seconds\":0.000001,"
	"\"verdict\":\"pass\",\"violations\":[],\"leaks\":[]}";

static const char MIMALLOC[] =
	"{\"name\":\"process\",\"pid\":11683,\"program\":\"/work/main/build/tests/prog/plain_mix\","
	"\"allocator\":\"mimalloc\",\"allocs\":88,\"frees\":88,\"reallocs\":34,"
	"\"failed_allocs\":0,\"bytes_allocated\":18409,\"bytes_freed\":18409,"
	"\"live_blocks\":0,\"live_bytes\":0,\"peak_live_bytes\":13475,\"definitely_lost\":{\"blocks\":0,"
	"\"bytes\":0},\"indirectly_lost\":{\"blocks\":0,\"bytes\":0},\"possibly_lost\":{\"blocks\":0,"
	"\"bytes\":0},\"still_reachable\":{\"blocks\":0,\"bytes\":0},\"suppressed\":{\"blocks\":0,"
	"\"bytes\":0},\"double_frees\":0,\"invalid_frees\":0,\"retained_bytes\":33554368,"
	"\"retained_after_release\":null,\"rss_begin\":2097152,\"rss_end\":2588672,"
	"\"peak_rss\":2588672,\"seconds\":0.000207,\"verdict\":\"pass\",\"violations\":[],"
	"\"leaks\":[]}";

/* The smallest record: the keys every memcheck record has. */
#define MIN_KEYS "\"name\":\"r\",\"pid\":1,\"program\":\"p\",\"allocator\":\"glibc\",\"verdict\":\"pass\""
#define MIN "{" MIN_KEYS "}"
/* MIN with one more member, first. */
#define WITH(m) "{" m "," MIN_KEYS "}"

static struct mc_record rec;
static char err[256];

static bool parse_n(const char *line, size_t len)
{
	memset(&rec, 0x5a, sizeof rec);
	memset(err, 0, sizeof err);
	counting = 1;
	bool ok = mc_json_record(line, len, &rec, err, sizeof err);
	counting = 0;
	return ok;
}

static bool parse(const char *line)
{
	return parse_n(line, strlen(line));
}

#define OK(line)                                                              \
	ck_assert_msg(parse(line), "refused %s: %s", (line), err)

START_TEST(leak_record)
{
	OK(LEAK);
	ck_assert_str_eq(rec.r.name, "process");
	ck_assert_int_eq(rec.pid, 11685);
	ck_assert_str_eq(rec.program, "/work/main/build/tests/prog/plain_errors");
	ck_assert_str_eq(rec.allocator, "glibc");
	ck_assert_uint_eq(rec.r.allocs, 2);
	ck_assert_uint_eq(rec.r.frees, 1);
	ck_assert_uint_eq(rec.r.reallocs, 0);
	ck_assert_uint_eq(rec.r.failed_allocs, 0);
	ck_assert_uint_eq(rec.r.bytes_allocated, 100010);
	ck_assert_uint_eq(rec.r.bytes_freed, 10);
	ck_assert_uint_eq(rec.r.live_blocks, 1);
	ck_assert_uint_eq(rec.r.live_bytes, 100000);
	ck_assert_uint_eq(rec.r.peak_live_bytes, 100010);
	ck_assert_uint_eq(rec.r.definitely_lost.blocks, 1);
	ck_assert_uint_eq(rec.r.definitely_lost.bytes, 100000);
	ck_assert_uint_eq(rec.r.indirectly_lost.blocks, 0);
	ck_assert_uint_eq(rec.r.indirectly_lost.bytes, 0);
	ck_assert_uint_eq(rec.r.possibly_lost.bytes, 0);
	ck_assert_uint_eq(rec.r.still_reachable.blocks, 0);
	ck_assert_uint_eq(rec.r.suppressed.bytes, 0);
	ck_assert_uint_eq(rec.r.double_frees, 0);
	ck_assert_uint_eq(rec.r.invalid_frees, 0);
	ck_assert_uint_eq(rec.r.retained_bytes, 32256);
	ck_assert_uint_eq(rec.r.retained_after_release, MEMCHECK_UNKNOWN);
	ck_assert_uint_eq(rec.r.rss_begin, 1789952);
	ck_assert_uint_eq(rec.r.rss_end, 1822720);
	ck_assert_uint_eq(rec.r.peak_rss, 1822720);
	ck_assert_double_eq_tol(rec.r.seconds, 0.000018, 1e-15);
	ck_assert_int_eq(rec.r.pass, 0);
	ck_assert_str_eq(rec.r.violations, "100000 bytes in 1 blocks definitely lost");
}
END_TEST

/* The arguments' two keys (field44's args_files beside args_hash), and
 * "" for each where a record has neither (a report written before). */
START_TEST(argument_keys)
{
	OK(WITH("\"args_hash\":\"d4dbcfd6d798400e\",\"args_files\":\"ce360583585b75a3\""));
	ck_assert_str_eq(rec.args_hash, "d4dbcfd6d798400e");
	ck_assert_str_eq(rec.args_files, "ce360583585b75a3");
	OK(MIN);
	ck_assert_str_eq(rec.args_hash, "");
	ck_assert_str_eq(rec.args_files, "");
}
END_TEST

START_TEST(budget_record)
{
	OK(BUDGET);
	ck_assert_str_eq(rec.allocator, "jemalloc");
	ck_assert_uint_eq(rec.r.retained_bytes, 2965392);
	ck_assert_uint_eq(rec.r.peak_rss, 4435968);
	ck_assert_double_eq_tol(rec.r.seconds, 0.000186, 1e-15);
	ck_assert_int_eq(rec.r.pass, 0);
	/* the list joined as struct memcheck_result holds it */
	ck_assert_str_eq(rec.r.violations,
			 "/tmp/t.budget:1: peak_live_bytes 13.2 KiB > 1024 B; "
			 "/tmp/t.budget:3: peak_rss 4.2 MiB > 2.3 MiB (+10% of glibc's 2.1 MiB)");
}
END_TEST

START_TEST(escaped_name)
{
	OK(ESCAPES);
	ck_assert_str_eq(rec.r.name, "q\" b\\ n\n t\t c\x01 \xc3\xa9 end");
	ck_assert_str_eq(rec.program, "/work/main/build/tests/prog/regions");
	ck_assert_int_eq(rec.r.pass, 1);
	ck_assert_str_eq(rec.r.violations, "");
	ck_assert_double_eq_tol(rec.r.seconds, 0.000001, 1e-18);
	OK(MIMALLOC);
	ck_assert_str_eq(rec.allocator, "mimalloc");
	ck_assert_uint_eq(rec.r.retained_bytes, 33554368);
	ck_assert_uint_eq(rec.r.allocs, 88);
}
END_TEST

/* Figures a record leaves out, or gives as null, are unknown. */
START_TEST(null_and_missing)
{
	OK(MIN);
	ck_assert_str_eq(rec.r.name, "r");
	ck_assert_str_eq(rec.program, "p");
	ck_assert_int_eq(rec.pid, 1);
	ck_assert_int_eq(rec.r.pass, 1);
	ck_assert_uint_eq(rec.r.allocs, MEMCHECK_UNKNOWN);
	ck_assert_uint_eq(rec.r.peak_rss, MEMCHECK_UNKNOWN);
	ck_assert_uint_eq(rec.r.retained_after_release, MEMCHECK_UNKNOWN);
	ck_assert_uint_eq(rec.r.definitely_lost.blocks, MEMCHECK_UNKNOWN);
	ck_assert_uint_eq(rec.r.suppressed.bytes, MEMCHECK_UNKNOWN);
	ck_assert(isnan(rec.r.seconds));
	ck_assert_str_eq(rec.r.violations, "");

	OK(WITH("\"allocs\":null,\"seconds\":null,\"definitely_lost\":null,"
		"\"still_reachable\":{\"blocks\":3},\"suppressed\":{}"));
	ck_assert_uint_eq(rec.r.allocs, MEMCHECK_UNKNOWN);
	ck_assert(isnan(rec.r.seconds));
	ck_assert_uint_eq(rec.r.definitely_lost.bytes, MEMCHECK_UNKNOWN);
	ck_assert_uint_eq(rec.r.still_reachable.blocks, 3);
	ck_assert_uint_eq(rec.r.still_reachable.bytes, MEMCHECK_UNKNOWN);
	ck_assert_uint_eq(rec.r.suppressed.blocks, MEMCHECK_UNKNOWN);

	/* the largest figure, and 0 */
	OK(WITH("\"allocs\":18446744073709551614,\"frees\":0"));
	ck_assert_uint_eq(rec.r.allocs, UINT64_MAX - 1);
	ck_assert_uint_eq(rec.r.frees, 0);
	OK("{\"name\":\"r\",\"pid\":2147483647,\"program\":\"p\",\"allocator\":\"glibc\","
	   "\"verdict\":\"fail\"}");
	ck_assert_int_eq(rec.pid, 2147483647);
	ck_assert_int_eq(rec.r.pass, 0);
}
END_TEST

/* A newer memcheck may add keys of any type: they are skipped. */
START_TEST(unknown_keys_skipped)
{
	OK(WITH("\"future\":{\"a\":[1,{\"b\":null},[],{}],\"c\":\"x\\\"y\"},"
		"\"n\":-1.5e-3,\"m\":0.0E+0,\"t\":true,\"f\":false,\"z\":null,"
		"\"s\":\"\\ud83d\\ude00\",\"arr\":[\"leaks\",[[[]]]],"
		"\"allocs\":7,\"allocs2\":\"not a number\""));
	ck_assert_uint_eq(rec.r.allocs, 7);
	/* a key longer than any known one is unknown too */
	OK(WITH("\"retained_after_release_and_much_more_than_that\":{\"x\":1}"));
	ck_assert_uint_eq(rec.r.retained_after_release, MEMCHECK_UNKNOWN);
	/* unknown keys may repeat; leaks[] is skipped whatever it holds */
	OK(WITH("\"x\":1,\"x\":2,\"leaks\":[{\"kind\":\"new\",\"extra\":[1,2]}]"));
	/* sub-keys of a count other than blocks and bytes */
	OK(WITH("\"definitely_lost\":{\"blocks\":1,\"sites\":[1,2],\"bytes\":2}"));
	ck_assert_uint_eq(rec.r.definitely_lost.blocks, 1);
	ck_assert_uint_eq(rec.r.definitely_lost.bytes, 2);
}
END_TEST

START_TEST(whitespace)
{
	OK(" \t{ \"name\" : \"r\" ,\n\"pid\":1,\"program\":\"p\",\"allocator\":\"glibc\","
	   "\"verdict\" :\t\"fail\" , \"violations\" : [ \"a\" , \"b\" ] } \r\n");
	ck_assert_int_eq(rec.r.pass, 0);
	ck_assert_str_eq(rec.r.violations, "a; b");
	/* len counts: what lies beyond it is not read */
	ck_assert(parse_n(MIN "garbage", strlen(MIN)));
}
END_TEST

START_TEST(string_escapes)
{
	OK("{\"name\":\"r\",\"pid\":1,\"program\":\"a\\/b\\bc\\fd\\re\\u0041\\u00e9\\u20ac"
	   "\\ud83d\\ude00\",\"allocator\":\"glibc\",\"verdict\":\"pass\"}");
	ck_assert_str_eq(rec.program, "a/b\bc\fd\reA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* raw UTF-8 of every length */
	OK("{\"name\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"pid\":1,\"program\":\"p\","
	   "\"allocator\":\"glibc\",\"verdict\":\"pass\"}");
	ck_assert_str_eq(rec.r.name, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}
END_TEST

/* Strings longer than their field are cut at a character boundary. */
START_TEST(long_strings_cut)
{
	char line[2048], name[400];
	/* 'a' then 2-byte characters: the cut falls inside one */
	name[0] = 'a';
	size_t n = 1;
	while (n < 300) {
		name[n++] = '\xc3';
		name[n++] = '\xa9';
	}
	name[n] = 0;
	snprintf(line, sizeof line, "{\"name\":\"%s\",\"pid\":1,\"program\":\"%s\",\"allocator\":"
		 "\"glibc\",\"verdict\":\"pass\"}", name, name);
	OK(line);
	ck_assert_uint_eq(strlen(rec.r.name), 127);     /* 'a' + 63 characters */
	ck_assert_int_eq(memcmp(rec.r.name, name, 127), 0);
	ck_assert_uint_eq(strlen(rec.program), 255);    /* 'a' + 127 characters */

	/* violations: whole messages while they fit, then as much of the
	 * next as fits, never a dangling separator */
	char msg[200];
	memset(msg, 'v', 199);
	msg[199] = 0;
	snprintf(line, sizeof line, WITH("\"violations\":[\"%s\",\"%s\",\"%s\",\"%s\"]"),
		 msg, msg, msg, msg);
	OK(line);
	size_t len = strlen(rec.r.violations);
	ck_assert_uint_eq(len, 511);
	ck_assert_int_eq(strncmp(rec.r.violations + 199, "; ", 2), 0);
	ck_assert_int_eq(strncmp(rec.r.violations + 400, "; ", 2), 0);
	/* the second message fills it exactly: the third is dropped whole */
	memset(msg, 'w', 199);
	char big[320];
	memset(big, 'x', 309);
	big[309] = 0;
	snprintf(line, sizeof line, WITH("\"violations\":[\"%s\",\"%s\",\"%s\"]"), big, msg, msg);
	OK(line);
	len = strlen(rec.r.violations);
	ck_assert_uint_eq(len, 309 + 2 + 199);
	ck_assert(rec.r.violations[len - 1] == 'w');
	snprintf(line, sizeof line, WITH("\"violations\":[\"%s\",\"%s\",\"%s\"]"), big, big, msg);
	OK(line);
	ck_assert_uint_eq(strlen(rec.r.violations), 511);
	/* nothing of the second fits after the first: no "; " left behind */
	char huge[520];
	memset(huge, 'y', 510);
	huge[510] = 0;
	snprintf(line, sizeof line, WITH("\"violations\":[\"%s\",\"%s\"]"), huge, msg);
	OK(line);
	ck_assert_str_eq(rec.r.violations, huge);
}
END_TEST

START_TEST(seconds)
{
	static const struct {
		const char *text;
		double want;
	} cases[] = {
		{ "0", 0 }, { "1", 1 }, { "1.5", 1.5 }, { "0.000183", 0.000183 },
		{ "2e-3", 0.002 }, { "2E+3", 2000 }, { "-0.25", -0.25 },
		{ "123456.789012", 123456.789012 }, { "0.0000000000000000000001", 1e-22 },
		{ "12345678901234567890123", 1.2345678901234567e22 },
		{ "1e300", 1e300 }, { "1e-320", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char line[256];
		snprintf(line, sizeof line, WITH("\"seconds\":%s"), cases[i].text);
		OK(line);
		double tol = fabs(cases[i].want) * 1e-15;
		ck_assert_msg(fabs(rec.r.seconds - cases[i].want) <= (tol > 1e-300 ? tol : 1e-300),
			      "seconds %s read as %.17g", cases[i].text, rec.r.seconds);
	}
}
END_TEST

/* ---- malformed lines ------------------------------------------------- */

static const struct bad {
	const char *line;
	int column;              /* 0: not checked */
	const char *needle;      /* in the message */
} bad[] = {
	/* not an object */
	{ "", 1, "expected '{'" },
	{ "   ", 4, "expected '{'" },
	{ "[]", 1, "expected '{'" },
	{ "\"name\"", 1, "expected '{'" },
	{ "null", 1, "expected '{'" },
	/* structure */
	{ "{", 2, "expected a key" },
	{ "{\"name\"", 8, "expected ':'" },
	{ "{\"name\" \"r\"}", 9, "expected ':'" },
	{ "{name:1}", 2, "expected a key" },
	{ "{'name':1}", 2, "expected a key" },
	{ "{\"x\":1,}", 8, "expected a key" },
	{ "{\"x\":1 \"y\":2}", 8, "expected '}' or ','" },
	{ "{\"x\":1", 7, "expected '}' or ','" },
	{ "{\"x\":[1,]}", 9, "expected a value" },
	{ "{\"x\":[1 2]}", 9, "expected ']' or ','" },
	{ "{\"x\":{\"a\"}}", 10, "expected ':'" },
	{ "{\"x\":{1:2}}", 7, "expected '\"'" },
	{ "{\"x\":}", 6, "expected a value" },
	{ "{\"x\":@}", 6, "expected a value" },
	{ MIN " x", 0, "expected the end of the line" },
	{ MIN MIN, 0, "expected the end of the line" },
	{ MIN ",", 0, "expected the end of the line" },
	/* literals */
	{ "{\"x\":tru}", 6, "expected true" },
	{ "{\"x\":True}", 6, "expected a value" },
	{ "{\"x\":nul}", 6, "expected null" },
	{ "{\"x\":falsy}", 6, "expected false" },
	{ "{\"x\":falsey}", 11, "expected '}' or ','" },
	{ "{\"x\":NaN}", 6, "expected a value" },
	/* numbers */
	{ "{\"x\":01}", 7, "leading 0" },
	{ "{\"x\":1.}", 8, "expected a digit after '.'" },
	{ "{\"x\":.5}", 6, "expected a value" },
	{ "{\"x\":+1}", 6, "expected a value" },
	{ "{\"x\":-}", 7, "expected a digit" },
	{ "{\"x\":-a}", 7, "expected a digit" },
	{ "{\"x\":1e}", 8, "expected a digit in the exponent" },
	{ "{\"x\":1e+}", 9, "expected a digit in the exponent" },
	{ "{\"x\":0x10}", 7, "expected '}' or ','" },
	/* strings */
	{ "{\"x\":\"abc}", 11, "expected '\"' to close the string" },
	{ "{\"x\":\"a\\qb\"}", 8, "expected one of" },
	{ "{\"x\":\"a\\", 9, "expected an escape" },
	{ "{\"x\":\"\\u12G4\"}", 11, "hexadecimal digit" },
	{ "{\"x\":\"\\u12\"}", 11, "hexadecimal digit" },
	{ "{\"x\":\"\\ud800\"}", 13, "low surrogate" },
	{ "{\"x\":\"\\ud800\\u0041\"}", 13, "expected a low surrogate" },
	{ "{\"x\":\"\\udc00\"}", 7, "lone low surrogate" },
	{ "{\"x\":\"\\u0000\"}", 7, "\\u0000" },
	{ "{\"x\":\"a\tb\"}", 8, "control characters must be escaped" },
	{ "{\"x\":\"a\nb\"}", 8, "control characters must be escaped" },
	{ "{\"x\":\"\x7f\x01\"}", 8, "control characters" },
	{ "{\"x\":\"\xff\"}", 7, "expected UTF-8, got byte 0xff" },
	{ "{\"x\":\"\xc3\"}", 7, "expected UTF-8" },
	{ "{\"x\":\"\xc0\xaf\"}", 7, "expected UTF-8" },              /* overlong */
	{ "{\"x\":\"\xed\xa0\x80\"}", 7, "expected UTF-8" },          /* surrogate */
	{ "{\"x\":\"\xf4\x90\x80\x80\"}", 7, "expected UTF-8" },      /* > U+10FFFF */
	{ "{\"x\":\"\xe2\x82\"}", 7, "expected UTF-8" },              /* cut short */
	{ "{\"\xff\":1}", 3, "expected UTF-8" },
	/* known keys with values of the wrong type */
	{ WITH("\"allocs\":-1"), 11, "unsigned integer or null for \"allocs\", got -1" },
	{ WITH("\"allocs\":1.5"), 11, "got 1.5" },
	{ WITH("\"allocs\":1e3"), 11, "got 1e3" },
	{ WITH("\"allocs\":\"3\""), 11, "expected an unsigned integer or null" },
	{ WITH("\"allocs\":true"), 11, "expected an unsigned integer or null" },
	{ WITH("\"allocs\":[1]"), 11, "expected an unsigned integer or null" },
	{ WITH("\"allocs\":18446744073709551616"), 11, "below 2^64" },
	{ WITH("\"allocs\":99999999999999999999999"), 11, "below 2^64" },
	{ WITH("\"definitely_lost\":5"), 20, "expected {\"blocks\":N,\"bytes\":N}" },
	{ WITH("\"definitely_lost\":[1,2]"), 20, "expected {\"blocks\":N,\"bytes\":N}" },
	{ WITH("\"definitely_lost\":{\"blocks\":\"x\"}"), 30, "for \"blocks\"" },
	{ WITH("\"definitely_lost\":{\"bytes\":1,\"bytes\":2}"), 31, "\"bytes\" again" },
	{ "{\"definitely_lost\":{\"bytes\":1", 30, "expected '}' or ','" },
	{ WITH("\"seconds\":\"1\""), 12, "expected a number or null for \"seconds\"" },
	{ WITH("\"seconds\":1e999"), 12, "range of a double" },
	{ WITH("\"seconds\":1.2.3"), 15, "expected '}' or ','" },
	{ "{\"name\":1}", 9, "expected a string for \"name\"" },
	{ "{\"name\":null}", 9, "expected a string for \"name\"" },
	{ "{\"program\":[\"p\"]}", 12, "expected a string for \"program\"" },
	{ "{\"pid\":-5}", 8, "\"pid\"" },
	{ "{\"pid\":4294967296}", 8, "expected a process id" },
	{ "{\"verdict\":\"maybe\"}", 12, "expected \"pass\" or \"fail\"" },
	{ "{\"verdict\":\"passed\"}", 12, "expected \"pass\" or \"fail\"" },
	{ "{\"verdict\":\"Pass\"}", 12, "expected \"pass\" or \"fail\"" },
	{ "{\"verdict\":true}", 12, "expected \"pass\" or \"fail\"" },
	{ "{\"violations\":\"x\"}", 15, "expected '[' for \"violations\"" },
	{ "{\"violations\":[1]}", 16, "expected a string in \"violations\"" },
	{ "{\"violations\":[\"a\",null]}", 20, "expected a string in \"violations\"" },
	{ "{\"violations\":[\"a\"", 19, "expected ']' or ','" },
	{ "{\"leaks\":[{]}", 12, "expected '\"'" },
	/* a known key twice */
	{ WITH("\"allocs\":1,\"allocs\":2"), 13, "expected each key once, got \"allocs\" again" },
	{ "{\"name\":\"a\"," MIN_KEYS "}", 0, "\"name\" again" },
	/* not a memcheck record */
	{ "{}", 2, "expected the key \"name\"" },
	{ "{\"name\":\"r\",\"pid\":1,\"program\":\"p\",\"allocator\":\"glibc\"}", 0,
	  "expected the key \"verdict\" (not a memcheck record?)" },
	{ "{\"name\":\"r\",\"pid\":1,\"program\":\"p\",\"verdict\":\"pass\"}", 0,
	  "expected the key \"allocator\"" },
	{ "{\"name\":\"r\",\"program\":\"p\",\"allocator\":\"glibc\",\"verdict\":\"pass\"}", 0,
	  "expected the key \"pid\"" },
	{ "{\"name\":\"r\",\"pid\":1,\"allocator\":\"glibc\",\"verdict\":\"pass\"}", 0,
	  "expected the key \"program\"" },
};

START_TEST(malformed)
{
	const struct bad *b = &bad[_i];
	ck_assert_msg(!parse(b->line), "accepted %s", b->line);
	ck_assert_msg(strncmp(err, "column ", 7) == 0, "%s: message \"%s\"", b->line, err);
	ck_assert_msg(strstr(err, b->needle), "%s: message \"%s\" does not say \"%s\"", b->line,
		      err, b->needle);
	if (b->column) {
		char want[32];
		snprintf(want, sizeof want, "column %d: ", b->column);
		ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s: \"%s\", expected %s",
			      b->line, err, want);
	}
}
END_TEST

START_TEST(nul_byte)
{
	static const char line[] = "{\"name\":\"a\0b\",\"pid\":1}";
	ck_assert(!parse_n(line, sizeof line - 1));
	ck_assert_str_eq(err, "column 11: expected a character or an escape, got byte 0x00 "
			 "(control characters must be escaped)");
	static const char after[] = MIN "\0";
	ck_assert(!parse_n(after, sizeof after - 1));
	ck_assert(strstr(err, "expected the end of the line"));
}
END_TEST

START_TEST(nesting_limit)
{
	char line[512];
	size_t n = 0;
	n += (size_t)snprintf(line, sizeof line, "{\"x\":");
	for (int i = 0; i < 100; i++)
		line[n++] = '[';
	for (int i = 0; i < 100; i++)
		line[n++] = ']';
	memcpy(line + n, "}", 2);
	ck_assert(!parse(line));
	ck_assert(strstr(err, "at most 64 levels of nesting"));
	/* 60 levels are fine */
	n = (size_t)snprintf(line, sizeof line, "{\"x\":");
	for (int i = 0; i < 60; i++)
		line[n++] = '[';
	for (int i = 0; i < 60; i++)
		line[n++] = ']';
	snprintf(line + n, sizeof line - n, ",%s}", MIN_KEYS);
	OK(line);
}
END_TEST

/* Every proper prefix of a real line (a report cut short by a crash or a
 * full disk) is refused, with a column inside or just past it. */
START_TEST(every_prefix)
{
	const char *lines[] = { LEAK, BUDGET, ESCAPES };
	for (size_t l = 0; l < 3; l++) {
		size_t len = strlen(lines[l]);
		for (size_t n = 0; n < len; n++) {
			/* exactly n bytes, no terminator: ASan sees a read past them */
			char *copy = malloc(n ? n : 1);
			memcpy(copy, lines[l], n);
			bool ok = parse_n(copy, n);
			free(copy);
			ck_assert_msg(!ok, "accepted the first %zu bytes", n);
			int col = -1;
			ck_assert_msg(sscanf(err, "column %d: expected", &col) == 1,
				      "prefix %zu: message \"%s\"", n, err);
			ck_assert_msg(col >= 1 && (size_t)col <= n + 1, "prefix %zu: column %d",
				      n, col);
		}
	}
}
END_TEST

/* One byte of a real line changed, at every position, to each of a set of
 * bytes that matter to a parser: accepted or refused with a message,
 * never more (ASan/UBSan build: never a bad read). */
START_TEST(one_byte_mutations)
{
	static const char subst[] = "\"\\{}[],:0-9.eE+ xnt\x01\x7f\x80\xc3\xff";
	size_t len = sizeof BUDGET - 1;
	char *line = malloc(len + 1); /* parsed as len bytes: no terminator read */
	for (size_t i = 0; i < len; i++)
		for (size_t s = 0; s < sizeof subst - 1; s++) {
			memcpy(line, BUDGET, len);
			line[i] = subst[s];
			if (!parse_n(line, len))
				ck_assert_msg(strncmp(err, "column ", 7) == 0,
					      "byte %zu = 0x%02x: message \"%s\"", i,
					      (unsigned char)subst[s], err);
		}
	/* a zero byte at each position too */
	for (size_t i = 0; i < len; i++) {
		memcpy(line, BUDGET, len);
		line[i] = 0;
		ck_assert(!parse_n(line, len));
	}
	free(line);
}
END_TEST

START_TEST(error_buffer)
{
	struct mc_record r;
	/* no room for a message: still false, nothing written */
	ck_assert(!mc_json_record("{", 1, &r, NULL, 0));
	char small[12];
	memset(small, 'z', sizeof small);
	ck_assert(!mc_json_record("{", 1, &r, small, sizeof small));
	ck_assert_str_eq(small, "column 2: e");
	char one[1] = { 'z' };
	ck_assert(!mc_json_record("{", 1, &r, one, 1));
	ck_assert_int_eq(one[0], 0);
	/* success clears it */
	char e[64] = "old";
	ck_assert(mc_json_record(MIN, strlen(MIN), &r, e, sizeof e));
	ck_assert_str_eq(e, "");
}
END_TEST

/* Parsing allocates nothing, on any path. */
START_TEST(no_allocation)
{
	if (!COUNT_ALLOCS)
		return;
	allocs = 0;
	const char *lines[] = { LEAK, BUDGET, ESCAPES, MIMALLOC, MIN };
	for (size_t i = 0; i < 5; i++)
		OK(lines[i]);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		parse(bad[i].line);
	ck_assert_int_eq(allocs, 0);
	/* the counter itself works */
	counting = 1;
	free(malloc(1));
	counting = 0;
	ck_assert_int_eq(allocs, 2);
}
END_TEST


/* The span readers (mc_jv_*) the CLI reads nested keys with: objects,
 * arrays, strings with escapes, numbers, null, and the end of each. */
START_TEST(spans)
{
	static const char line[] =
		"{\"name\":\"a\\u00e9\\n\",\"peak_snapshot\":{\"live_bytes\":70000,\"sites\":["
		"{\"bytes\":40000,\"stack\":[{\"function\":\"keep_a\",\"file\":null}]},"
		"{\"bytes\":30000,\"stack\":[]}]},"
		"\"timeline\":{\"samples\":[[0.5,1,null],[1.25e1,2,3]]},\"empty\":{},\"e2\":[]}";
	struct mc_jv top, v, it, k, e, x;
	char s[32];
	uint64_t u;
	double d;
	ck_assert(mc_jv_line(line, strlen(line), &top));
	ck_assert(mc_jv_get(top, "name", &v) && mc_jv_str(v, s, sizeof s));
	ck_assert_str_eq(s, "a\xc3\xa9\n");
	ck_assert(!mc_jv_get(top, "nothing", &v));
	ck_assert(mc_jv_get(top, "peak_snapshot", &v) && mc_jv_get(v, "live_bytes", &x) &&
		  mc_jv_u64(x, &u) && u == 70000);
	ck_assert(mc_jv_get(v, "sites", &it));
	uint64_t want[] = { 40000, 30000 };
	int n = 0;
	while (mc_jv_next(&it, NULL, &e)) {
		ck_assert(n < 2 && mc_jv_get(e, "bytes", &x) && mc_jv_u64(x, &u) && u == want[n]);
		n++;
	}
	ck_assert_int_eq(n, 2);
	ck_assert(mc_jv_get(top, "timeline", &v) && mc_jv_get(v, "samples", &it));
	ck_assert(mc_jv_next(&it, NULL, &e));
	struct mc_jv col = e;
	ck_assert(mc_jv_next(&col, NULL, &x) && mc_jv_real(x, &d) && d == 0.5);
	ck_assert(mc_jv_next(&col, NULL, &x) && mc_jv_u64(x, &u) && u == 1);
	ck_assert(mc_jv_next(&col, NULL, &x) && mc_jv_null(x) && mc_jv_u64(x, &u) &&
		  u == MEMCHECK_UNKNOWN);
	ck_assert(!mc_jv_next(&col, NULL, &x));
	ck_assert(mc_jv_next(&it, NULL, &e));
	col = e;
	ck_assert(mc_jv_next(&col, NULL, &x) && mc_jv_real(x, &d) && d == 12.5);
	ck_assert(!mc_jv_next(&it, NULL, &e));
	/* members with their keys, empty containers */
	it = top;
	n = 0;
	while (mc_jv_next(&it, &k, &v))
		n++;
	ck_assert_int_eq(n, 5);
	ck_assert(mc_jv_get(top, "empty", &it) && !mc_jv_next(&it, &k, &v));
	ck_assert(mc_jv_get(top, "e2", &it) && !mc_jv_next(&it, NULL, &v));
	/* not a container, cut strings, bad spans */
	ck_assert(mc_jv_get(top, "name", &it) && !mc_jv_next(&it, NULL, &v));
	ck_assert(mc_jv_get(top, "name", &v) && mc_jv_str(v, s, 3));
	ck_assert_str_eq(s, "a");
	ck_assert(!mc_jv_line("{\"a\":", 5, &top));
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("json", 60);
	tcase_add_test(tc, leak_record);
	tcase_add_test(tc, argument_keys);
	tcase_add_test(tc, budget_record);
	tcase_add_test(tc, escaped_name);
	tcase_add_test(tc, null_and_missing);
	tcase_add_test(tc, unknown_keys_skipped);
	tcase_add_test(tc, whitespace);
	tcase_add_test(tc, string_escapes);
	tcase_add_test(tc, long_strings_cut);
	tcase_add_test(tc, seconds);
	tcase_add_loop_test(tc, malformed, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(tc, nul_byte);
	tcase_add_test(tc, nesting_limit);
	tcase_add_test(tc, every_prefix);
	tcase_add_test(tc, one_byte_mutations);
	tcase_add_test(tc, error_buffer);
	tcase_add_test(tc, no_allocation);
	tcase_add_test(tc, spans);
	return h_run_suite(NULL);
}
