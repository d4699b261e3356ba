/*
 * unit_budget.c - lib/budget.c and lib/budget_check.c on their own: the
 * key table, every kind of good and bad line of a budget file (each bad
 * one with its exact message and line), and checking results against
 * absolute and relative limits.
 */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

#define MiB (1024 * 1024ull)

static char err[8192];

static struct mc_budget *parse(const char *text)
{
	return mc_budget_parse(text, strlen(text), "memcheck.budget", err, sizeof err);
}

/* text must parse; returns it parsed. */
static struct mc_budget *good(const char *text)
{
	struct mc_budget *b = parse(text);
	ck_assert_msg(b != NULL, "did not parse:\n%s\nerror: %s", text, err);
	ck_assert_str_eq(err, "");
	return b;
}

/* A figure for every key: the test sets those it is about. */
static struct memcheck_result result(void)
{
	struct memcheck_result r;
	memset(&r, 0, sizeof r);
	strcpy(r.name, "t");
	r.rss_begin = 10 * MiB;
	r.rss_end = 20 * MiB;
	r.peak_rss = 30 * MiB;
	r.retained_bytes = 1 * MiB;
	r.retained_after_release = 0;
	r.seconds = 0.5;
	return r;
}

static char out[512];

/* Check r against b for region/allocator; out holds the messages. */
static int check(const struct mc_budget *b, const char *region, const char *allocator,
		 const struct memcheck_result *r, const struct memcheck_result *base)
{
	out[0] = 0;
	return mc_budget_check(b, region, allocator, r, base, out, sizeof out);
}

/* ---- the key table ----------------------------------------------------- */

START_TEST(keys_cover_the_result)
{
	size_t n = 0;
	while (mc_result_keys[n])
		n++;
	ck_assert_uint_eq(n, 32);
	struct memcheck_result r = result();
	/* Give every uint64_t figure a value of its own. */
	uint64_t *fields[] = {
		&r.allocs, &r.frees, &r.reallocs, &r.failed_allocs, &r.bytes_allocated,
		&r.bytes_freed, &r.live_blocks, &r.live_bytes, &r.peak_live_bytes,
		&r.definitely_lost.blocks, &r.definitely_lost.bytes,
		&r.indirectly_lost.blocks, &r.indirectly_lost.bytes,
		&r.possibly_lost.blocks, &r.possibly_lost.bytes,
		&r.still_reachable.blocks, &r.still_reachable.bytes,
		&r.suppressed.blocks, &r.suppressed.bytes, &r.double_frees,
		&r.invalid_frees, &r.retained_bytes, &r.retained_after_release,
		&r.rss_begin, &r.rss_end, &r.peak_rss,
	};
	for (size_t i = 0; i < MC_ARRAY_SIZE(fields); i++)
		*fields[i] = 1000 + i;
	static const struct { const char *key; uint64_t v; } want[] = {
		{ "allocs", 1000 }, { "frees", 1001 }, { "reallocs", 1002 },
		{ "failed_allocs", 1003 }, { "bytes_allocated", 1004 },
		{ "bytes_freed", 1005 }, { "live_blocks", 1006 }, { "live_bytes", 1007 },
		{ "peak_live_bytes", 1008 }, { "definitely_lost", 1010 },
		{ "definitely_lost.blocks", 1009 }, { "definitely_lost.bytes", 1010 },
		{ "indirectly_lost", 1012 }, { "indirectly_lost.blocks", 1011 },
		{ "indirectly_lost.bytes", 1012 }, { "possibly_lost", 1014 },
		{ "possibly_lost.blocks", 1013 }, { "possibly_lost.bytes", 1014 },
		{ "still_reachable", 1016 }, { "still_reachable.blocks", 1015 },
		{ "still_reachable.bytes", 1016 }, { "suppressed", 1018 },
		{ "suppressed.blocks", 1017 }, { "suppressed.bytes", 1018 },
		{ "double_frees", 1019 }, { "invalid_frees", 1020 },
		{ "retained_bytes", 1021 }, { "retained_after_release", 1022 },
		{ "rss_begin", 1023 }, { "rss_end", 1024 }, { "peak_rss", 1025 },
	};
	for (size_t i = 0; i < MC_ARRAY_SIZE(want); i++) {
		uint64_t v = 0;
		ck_assert_msg(mc_result_field(&r, want[i].key, &v), "%s", want[i].key);
		ck_assert_msg(v == want[i].v, "%s: %llu", want[i].key, (unsigned long long)v);
		ck_assert_str_eq(mc_result_keys[i], want[i].key);   /* report order */
	}
	ck_assert_str_eq(mc_result_keys[31], "seconds");
	uint64_t v = 7;
	ck_assert(!mc_result_field(&r, "seconds", &v));    /* a double */
	ck_assert(!mc_result_field(&r, "peak_rs", &v));
	ck_assert(!mc_result_field(&r, "name", &v));
	ck_assert(!mc_result_field(&r, "", &v));
	ck_assert_uint_eq(v, 7);
	r.peak_rss = MEMCHECK_UNKNOWN;
	ck_assert(mc_result_field(&r, "peak_rss", &v));
	ck_assert(v == MEMCHECK_UNKNOWN);
}
END_TEST

/* memcheck-budget(5) names every key (run from the top of the tree, as
 * make does). */
START_TEST(keys_are_documented)
{
	static char page[65536];
	int fd = open("man/man5/memcheck-budget.5", O_RDONLY);
	ck_assert_msg(fd >= 0, "man/man5/memcheck-budget.5: run from the top of the tree");
	ssize_t n = read(fd, page, sizeof page - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	page[n] = 0;
	for (size_t i = 0; mc_result_keys[i]; i++) {
		char word[64];
		snprintf(word, sizeof word, "Cm %s", mc_result_keys[i]);
		char *p = strstr(page, word);
		char comma[64];
		snprintf(comma, sizeof comma, " %s ,", mc_result_keys[i]);
		char last[64];
		snprintf(last, sizeof last, " %s\n", mc_result_keys[i]);
		ck_assert_msg(p || strstr(page, comma) || strstr(page, last),
			      "memcheck-budget.5 does not list %s", mc_result_keys[i]);
	}
}
END_TEST

/* ---- good lines -------------------------------------------------------- */

START_TEST(every_kind_of_good_line)
{
	struct mc_budget *b = good(
		"# memcheck.budget - a comment\n"
		"\n"
		"   \t  # an indented comment\n"
		"baseline jemalloc          # the baseline\n"
		"definitely_lost <= 0\n"
		"definitely_lost.blocks <= 0\n"
		"still_reachable.bytes<=1KiB\n"
		"\tpeak_rss\t<=\t256\tMiB\t\n"
		"allocs < 10\n"
		"frees == 3\n"
		"live_bytes <= 0.5 KiB\n"
		"bytes_allocated <= 1.5MB\n"
		"bytes_freed <= 2 GiB\n"
		"peak_live_bytes <= 1 TiB\n"
		"rss_end <= 1 TB\n"
		"rss_begin <= 10 B\n"
		"retained_bytes <= 100 KB\n"
		"seconds <= 2.5\n"
		"[parse_*]\n"
		"seconds <= 250ms\n"
		"[ lex_?  [abc]*  test#2 ]\n"
		"retained_after_release <= 1 GB\n"
		"[* @mimalloc]\n"
		"peak_rss <= +10%\n"
		"peak_rss <= 64 MiB\n"
		"retained_bytes <= 1.25x\n"
		"rss_end <= -5.5%\n"
		"seconds <= 0.5 x\n"
		"[@mimalloc parse_* @jemalloc]\n"
		"[* @*/libhoard.so*]\n"
		"seconds < 100 us\n"
		"[*]\r\n"
		"allocs <= 18446744073709551614\r\n");
	ck_assert_str_eq(mc_budget_baseline(b), "jemalloc");
	ck_assert(mc_budget_relative(b));
	mc_budget_free(b);

	b = good("");
	ck_assert_str_eq(mc_budget_baseline(b), "glibc");
	ck_assert(!mc_budget_relative(b));
	mc_budget_free(b);
	b = good("\n\n# nothing\n");
	mc_budget_free(b);
	b = good("baseline /opt/hoard/libhoard.so\npeak_rss <= 1.1x");
	ck_assert_str_eq(mc_budget_baseline(b), "/opt/hoard/libhoard.so");
	mc_budget_free(b);
	/* No final newline; an absolute and a relative limit on one key. */
	b = good("[*]\npeak_rss <= 1 GiB\npeak_rss <= +0%");
	mc_budget_free(b);
	/* The same key again in another section is fine. */
	b = good("allocs <= 5\n[x]\nallocs <= 3\n[x]\nallocs <= 2\n");
	mc_budget_free(b);
	mc_budget_free(NULL);
	ck_assert_str_eq(mc_budget_baseline(NULL), "glibc");
}
END_TEST

/* ---- bad lines --------------------------------------------------------- */

static const struct {
	const char *text;
	const char *msg;
} bad_lines[] = {
	/* keys */
	{ "peak_rs <= 5", "unknown key 'peak_rs' (did you mean peak_rss?)" },
	{ "Peak_RSS <= 5", "unknown key 'Peak_RSS' (did you mean peak_rss?)" },
	{ "definitely_lost.block <= 0",
	  "unknown key 'definitely_lost.block' (did you mean definitely_lost.blocks?)" },
	{ "peak-rss <= 5", "unknown key 'peak-rss' (did you mean peak_rss?)" },
	{ "heap <= 5", "unknown key 'heap' (the keys are listed in memcheck-budget(5))" },
	{ "name <= 5", "unknown key 'name' (the keys are listed in memcheck-budget(5))" },
	{ "basline glibc", "unknown key 'basline' (did you mean baseline?)" },
	{ "<= 5", "expected a key, 'baseline' or a [section], got '<= 5'" },
	{ "a_very_long_key_name_that_goes_on_and_on_and_on <= 5",
	  "unknown key 'a_very_long_key_name_that_goes_on_and_on...' (the keys are listed "
	  "in memcheck-budget(5))" },
	/* operators */
	{ "allocs 5", "expected an operator (<=, < or ==) after allocs, got '5'" },
	{ "allocs", "expected an operator (<=, < or ==) and a limit after allocs" },
	{ "allocs >= 5", "a budget is an upper limit: expected <=, < or == after allocs, got '>='" },
	{ "allocs > 5", "a budget is an upper limit: expected <=, < or == after allocs, got '>'" },
	{ "allocs != 5", "a budget is an upper limit: expected <=, < or == after allocs, got '!='" },
	{ "allocs = 5", "expected <=, < or == after allocs, got '='" },
	{ "allocs =< 5", "expected <=, < or == after allocs, got '=<'" },
	{ "peak_rss == 5", "'==' needs a figure memcheck counts exactly; peak_rss is measured "
	  "and varies from run to run: use <= or <" },
	{ "seconds == 1", "'==' needs a figure memcheck counts exactly; seconds is measured "
	  "and varies from run to run: use <= or <" },
	{ "allocs < 0", "'allocs < 0' can never hold: write allocs <= 0" },
	{ "seconds < 0.0", "'seconds < 0' can never hold: write seconds <= 0" },
	/* numbers */
	{ "allocs <=", "expected a limit after allocs <= (a number, +N% or a ratio such as 1.25x)" },
	{ "allocs <= many", "expected a limit after allocs <= (a number, +N% or a ratio such as "
	  "1.25x), got 'many'" },
	{ "peak_rss <= 1.2.3", "bad number '1.2.3': expected digits with an optional fraction, "
	  "such as 1000 or 2.5" },
	{ "peak_rss <= 1,000", "bad number '1,000': expected digits with an optional fraction, "
	  "such as 1000 or 2.5" },
	{ "peak_rss <= 1_000", "bad number '1_000': expected digits with an optional fraction, "
	  "such as 1000 or 2.5" },
	{ "peak_rss <= 1e6", "bad number '1e6': expected digits with an optional fraction, "
	  "such as 1000 or 2.5" },
	{ "peak_rss <= 5.", "bad number '5.': expected digits with an optional fraction, "
	  "such as 1000 or 2.5" },
	{ "peak_rss <= .5", "bad number '.5': expected digits with an optional fraction, "
	  "such as 1000 or 2.5" },
	{ "peak_rss <= 0x10", "bad limit '0x10': expected a number, then a unit, % or x" },
	{ "peak_rss <= 5MiB5", "bad limit '5MiB5': expected a number, then a unit, % or x" },
	{ "peak_rss <= 5%MiB", "bad limit '5%MiB': expected a number, then a unit, % or x" },
	{ "peak_rss <= 99999999999999999999", "number too large: '99999999999999999999'" },
	{ "peak_rss <= 20000000 TiB", "limit too large: '20000000 TiB'" },
	{ "allocs <= 18446744073709551615", "limit too large: '18446744073709551615'" },
	{ "allocs <= 1.5", "allocs is a count: expected a whole number, got '1.5'" },
	{ "peak_rss <= -5", "a limit cannot be negative: '-5' (a relative one is written -N%)" },
	{ "peak_rss <= +5", "'+5': a relative limit is a percentage such as +10%; an absolute "
	  "one has no sign" },
	{ "peak_rss <= +5 MiB", "'+5 MiB': a relative limit is a percentage such as +10%; an "
	  "absolute one has no sign" },
	{ "peak_rss <= 5 MiB extra", "unexpected 'extra' after the limit (a comment starts with '#')" },
	{ "peak_rss <= 5#note", "unexpected '#note' after the limit (a comment starts with '#' "
	  "after a space)" },
	{ "live_bytes == 0.1 KiB", "'== 0.1 KiB' is not a whole number of bytes" },
	/* units */
	{ "peak_rss <= 5 mib", "unknown unit 'mib' for peak_rss (did you mean MiB? units are "
	  "case-sensitive)" },
	{ "peak_rss <= 5 kb", "unknown unit 'kb' for peak_rss (did you mean KB? units are "
	  "case-sensitive)" },
	{ "peak_rss <= 5 M", "unknown unit 'M' for peak_rss (expected B, KiB, MiB, GiB, TiB, KB, "
	  "MB, GB or TB)" },
	{ "peak_rss <= 5 s", "unknown unit 's' for peak_rss (expected B, KiB, MiB, GiB, TiB, KB, "
	  "MB, GB or TB)" },
	{ "seconds <= 5 min", "unknown unit 'min' for seconds (expected s, ms or us)" },
	{ "seconds <= 5 MS", "unknown unit 'MS' for seconds (did you mean ms? units are "
	  "case-sensitive)" },
	{ "allocs <= 5 MiB", "allocs is a count: write a plain number, without 'MiB'" },
	{ "allocs <= 10k", "allocs is a count: write a plain number, without 'k'" },
	/* relative limits */
	{ "peak_rss <= 10%", "'10%' is ambiguous: write +10% for that much over the baseline's "
	  "figure, or a ratio such as 1.1x" },
	{ "peak_rss <= -100%", "a relative limit must be above -100%, got '-100%'" },
	{ "peak_rss <= 0x", "a ratio must be more than 0, got '0x'" },
	{ "allocs <= +10%", "allocs is counted from the program's own calls and is the same "
	  "under every allocator: give an absolute limit, not '+10%'" },
	{ "definitely_lost <= 1.5x", "definitely_lost is counted from the program's own calls "
	  "and is the same under every allocator: give an absolute limit, not '1.5x'" },
	/* sections */
	{ "[parse_*", "unterminated section '[parse_*': expected ']' at the end of the line" },
	{ "[parse_* # a comment]", "unterminated section '[parse_*': expected ']' at the end of "
	  "the line" },
	{ "[x] y", "unexpected 'y' after the section's ']' (a comment starts with '#' after a "
	  "space)" },
	{ "[]", "empty section '[]': write [*] for every region" },
	{ "[   ]", "empty section '[]': write [*] for every region" },
	{ "[@mimalloc]", "empty glob before '@mimalloc': write [* @mimalloc] for every region" },
	{ "[* @]", "expected an allocator name after '@' (e.g. [* @mimalloc])" },
	{ "[* @mimaloc]", "unknown allocator 'mimaloc' (did you mean mimalloc?)" },
	{ "[* @hoard]", "unknown allocator 'hoard' (expected glibc, mimalloc, jemalloc, tcmalloc, "
	  "or a path glob such as */libhoard.so*)" },
	/* baseline */
	{ "baseline", "expected an allocator name after 'baseline' (e.g. baseline glibc)" },
	{ "baseline glibc mimalloc", "unexpected 'mimalloc' after the baseline allocator (one name "
	  "only)" },
	{ "baseline gibc", "unknown allocator 'gibc' for the baseline (did you mean glibc?)" },
	{ "baseline */libhoard.so*", "the baseline is one allocator, its name or its path, not a "
	  "glob: '*/libhoard.so*'" },
	{ "baseline <= 5", "unknown key 'baseline' (the keys are listed in memcheck-budget(5))" },
	/* bytes */
	{ "allocs <= 5\001", "control character 0x01 at column 12" },
	{ "allocs <= 5\r\r", "control character 0x0d at column 12" },
	{ "\x7f", "control character 0x7f at column 1" },
};

START_TEST(every_kind_of_bad_line)
{
	/* Each bad line after two good ones, so that it is line 3. */
	for (size_t i = 0; i < MC_ARRAY_SIZE(bad_lines); i++) {
		char text[512], want[512];
		snprintf(text, sizeof text, "# budget\nfailed_allocs <= 1\n%s\n", bad_lines[i].text);
		snprintf(want, sizeof want, "memcheck.budget:3: %s", bad_lines[i].msg);
		struct mc_budget *b = parse(text);
		ck_assert_msg(b == NULL, "parsed: %s", bad_lines[i].text);
		ck_assert_str_eq(err, want);
	}
}
END_TEST

START_TEST(bad_lines_need_their_context)
{
	struct mc_budget *b = parse("baseline glibc\n\nbaseline mimalloc\n");
	ck_assert_ptr_null(b);
	ck_assert_str_eq(err, "memcheck.budget:3: duplicate baseline line (the first is line 1)");
	b = parse("[*]\nbaseline glibc\n");
	ck_assert_ptr_null(b);
	ck_assert_str_eq(err, "memcheck.budget:2: the baseline line must come before the first "
			 "[section]: it applies to the whole file");
	b = parse("[x]\npeak_rss <= 1 MiB\nallocs <= 1\ndefinitely_lost.bytes <= 1 KiB\n"
		  "peak_rss <= +1%\npeak_rss < 2 MiB\ndefinitely_lost <= 5\n");
	ck_assert_ptr_null(b);
	ck_assert_str_eq(err,
		"memcheck.budget:6: peak_rss already has an absolute limit in this section (line 2)\n"
		"memcheck.budget:7: definitely_lost already has an absolute limit in this section "
		"(line 4)");
	/* The rules of a bad section are checked, but not against the
	 * section before it. */
	b = parse("[x]\nallocs <= 1\n[y\nallocs <= 2\nallocs <= 2 MiB\n");
	ck_assert_ptr_null(b);
	ck_assert_str_eq(err,
		"memcheck.budget:3: unterminated section '[y': expected ']' at the end of the line\n"
		"memcheck.budget:5: allocs is a count: write a plain number, without 'MiB'");
	b = parse("peak_rss <= +1%\nrss_end <= 2x\npeak_rss <= 1.5x\n");
	ck_assert_ptr_null(b);
	ck_assert_str_eq(err, "memcheck.budget:3: peak_rss already has a relative limit in this "
			 "section (line 1)");
	/* NUL bytes: the text is not a C string. */
	static const char nul[] = "allocs <= 1\nallocs\0 <= 2\n";
	b = mc_budget_parse(nul, sizeof nul - 1, "f", err, sizeof err);
	ck_assert_ptr_null(b);
	ck_assert_str_eq(err, "f:2: NUL byte at column 7: a budget file is text");
	/* Long lines. */
	char *big = malloc(5000);
	memset(big, ' ', 5000);
	memcpy(big + 4097, "\nallocs <= 1\n", 13);
	b = mc_budget_parse(big, 4110, "f", err, sizeof err);
	ck_assert_ptr_null(b);
	ck_assert_str_eq(err, "f:1: line longer than 4096 bytes");
	b = mc_budget_parse(big + 1, 4109, "f", err, sizeof err);   /* 4096: fine */
	ck_assert_ptr_nonnull(b);
	mc_budget_free(b);
	free(big);
}
END_TEST

/* Every bad line is reported, once, in order; err keeps whole lines. */
START_TEST(all_errors_at_once)
{
	const char *text = "peak_rs <= 5 MiB\nallocs <= 5\n[x\nallocs <= 1.5 MiB\n"
			   "seconds == 5\n";
	ck_assert_ptr_null(parse(text));
	ck_assert_str_eq(err,
		"memcheck.budget:1: unknown key 'peak_rs' (did you mean peak_rss?)\n"
		"memcheck.budget:3: unterminated section '[x': expected ']' at the end of the line\n"
		"memcheck.budget:4: allocs is a count: write a plain number, without 'MiB'\n"
		"memcheck.budget:5: '==' needs a figure memcheck counts exactly; seconds is "
		"measured and varies from run to run: use <= or <");

	/* Too small for all: whole lines, then how many more. */
	char small[240];
	struct mc_budget *b = mc_budget_parse(text, strlen(text), "b", small, sizeof small);
	ck_assert_ptr_null(b);
	ck_assert_str_eq(small,
		"b:1: unknown key 'peak_rs' (did you mean peak_rss?)\n"
		"b:3: unterminated section '[x': expected ']' at the end of the line\n"
		"b: 2 more errors");
	/* Too small for one: the first, cut. */
	char tiny[12];
	ck_assert_ptr_null(mc_budget_parse(text, strlen(text), "b", tiny, sizeof tiny));
	ck_assert_str_eq(tiny, "b:1: unknow");
	ck_assert_ptr_null(mc_budget_parse(text, strlen(text), "b", NULL, 0));
	/* Many: the count at the end. */
	static char many[20000];
	for (int i = 0; i < 1000; i++)
		strcat(many, "x\n");
	ck_assert_ptr_null(parse(many));
	ck_assert_ptr_nonnull(strstr(err, "memcheck.budget:1: unknown key 'x' "));
	const char *last = strrchr(err, '\n');
	ck_assert_ptr_nonnull(last);
	ck_assert_str_eq(last, "\nmemcheck.budget: stopped after line 50: too many errors");
	/* A small buffer: whole lines, and the trailer. */
	ck_assert_ptr_null(mc_budget_parse(many, strlen(many), "b", small, sizeof small));
	last = strrchr(small, '\n');
	ck_assert_ptr_nonnull(last);
	ck_assert_str_eq(last, "\nb: stopped after line 50: too many errors");
	/* 50 errors and no more lines: no trailer. */
	many[100] = 0;
	ck_assert_ptr_null(parse(many));
	ck_assert_ptr_null(strstr(err, "stopped"));
	ck_assert_ptr_nonnull(strstr(err, "memcheck.budget:50: unknown key 'x'"));
}
END_TEST

/* ---- checking: absolute limits ---------------------------------------- */

START_TEST(absolute_limits)
{
	struct mc_budget *b = good(
		"baseline glibc\n"                       /* 1 */
		"definitely_lost <= 0\n"                 /* 2 */
		"peak_rss <= 64 MiB\n"                   /* 3 */
		"allocs <= 10000\n"                      /* 4 */
		"frees == 3\n"                           /* 5 */
		"live_blocks < 2\n"                      /* 6 */
		"seconds <= 2.5\n"                       /* 7 */
		"bytes_allocated <= 1 MB\n");            /* 8 */
	struct memcheck_result r = result();
	r.frees = 3;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 0);
	ck_assert_str_eq(out, "");

	r.definitely_lost.bytes = 16;
	r.peak_rss = 70 * MiB + 100 * 1024;
	r.allocs = 10001;
	r.frees = 2;
	r.live_blocks = 2;
	r.seconds = 2.75;
	r.bytes_allocated = 1500000;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 7);
	ck_assert_str_eq(out,
		"memcheck.budget:2: definitely_lost 16 B > 0 B; "
		"memcheck.budget:3: peak_rss 70.1 MiB > 64.0 MiB; "
		"memcheck.budget:4: allocs 10,001 > 10,000; "
		"memcheck.budget:5: frees 2 != 3; "
		"memcheck.budget:6: live_blocks 2 >= 2; "
		"memcheck.budget:7: seconds 2.750 s > 2.500 s; "
		"memcheck.budget:8: bytes_allocated 1.5 MB > 1.0 MB");
	mc_budget_free(b);

	/* Rounding would show them alike: the exact bytes. */
	b = good("peak_rss <= 64 MiB\nseconds <= 1\n");
	r = result();
	r.peak_rss = 64 * MiB + 1;
	r.seconds = 1.0001;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 2);
	ck_assert_str_eq(out,
		"memcheck.budget:1: peak_rss 64.0 MiB (67,108,865 B) > 64.0 MiB (67,108,864 B); "
		"memcheck.budget:2: seconds 1.000100 s > 1.000000 s");
	mc_budget_free(b);
}
END_TEST

/* Each unit at its boundary: the limit passes, one more fails. */
START_TEST(units)
{
	static const struct {
		const char *limit;
		uint64_t bytes;
	} cases[] = {
		{ "0", 0 }, { "17", 17 }, { "17 B", 17 }, { "1 KiB", 1024 }, { "1KiB", 1024 },
		{ "2 MiB", 2 * MiB }, { "3 GiB", 3ull << 30 }, { "1 TiB", 1ull << 40 },
		{ "1 KB", 1000 }, { "2 MB", 2000000 }, { "3 GB", 3000000000ull },
		{ "1 TB", 1000000000000ull }, { "0.5 KiB", 512 }, { "0.1 KiB", 102 },
		{ "0.3 MB", 300000 }, { "1.000000000001 KiB", 1024 }, { "2.5 GiB", 5ull << 29 },
		{ "16777215.999 TiB", (16777216ull << 40) - (1ull << 40) / 1000 - 1 },
	};
	for (size_t i = 0; i < MC_ARRAY_SIZE(cases); i++) {
		char text[64];
		snprintf(text, sizeof text, "live_bytes <= %s\n", cases[i].limit);
		struct mc_budget *b = good(text);
		struct memcheck_result r = result();
		r.live_bytes = cases[i].bytes;
		ck_assert_msg(check(b, "t", "glibc", &r, NULL) == 0, "%s: %s", text, out);
		r.live_bytes++;
		ck_assert_msg(check(b, "t", "glibc", &r, NULL) == 1, "%s passes %llu", text,
			      (unsigned long long)r.live_bytes);
		mc_budget_free(b);
	}
	/* "<" with a limit that is not whole bytes: 102.4 allows 102. */
	struct mc_budget *b = good("live_bytes < 0.1 KiB\nbytes_freed < 1 KiB\n");
	struct memcheck_result r = result();
	r.live_bytes = 102;
	r.bytes_freed = 1023;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 0);
	r.live_bytes = 103;
	r.bytes_freed = 1024;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 2);
	mc_budget_free(b);
	/* Seconds. */
	b = good("seconds <= 250 ms\n[us]\nseconds < 100us\n[s]\nseconds <= 2s\n");
	r = result();
	r.seconds = 0.25;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 0);
	r.seconds = 0.2501;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 1);
	ck_assert_str_eq(out, "memcheck.budget:1: seconds 0.250100 s > 0.250000 s");
	r.seconds = 0.0000999;
	ck_assert_int_eq(check(b, "us", "glibc", &r, NULL), 0);
	r.seconds = 0.0001;
	ck_assert_int_eq(check(b, "us", "glibc", &r, NULL), 1);
	r.seconds = 2.1;
	ck_assert_int_eq(check(b, "s", "glibc", &r, NULL), 2);
	mc_budget_free(b);
}
END_TEST

/* ---- checking: which rules apply --------------------------------------- */

START_TEST(globs_and_allocator_sections)
{
	struct mc_budget *b = good(
		"allocs <= 100\n"                  /* 1: every region */
		"[parse_*]\n"
		"allocs <= 10\n"                   /* 3 */
		"[lex_? tok*]\n"
		"allocs <= 5\n"                    /* 5 */
		"[* @mimalloc]\n"
		"allocs <= 4\n"                    /* 7 */
		"[parse_* @jemalloc @*/libhoard.so*]\n"
		"allocs <= 3\n"                    /* 9 */
		"[suite/*]\n"
		"allocs <= 2\n"                    /* 11 */
		"[[@]odd test#1]\n"
		"allocs <= 1\n");                  /* 13 */
	struct memcheck_result r = result();
	r.allocs = 200;
	ck_assert_int_eq(check(b, "other", "glibc", &r, NULL), 1);
	ck_assert_str_eq(out, "memcheck.budget:1: allocs 200 > 100");
	ck_assert_int_eq(check(b, "parse_url", "glibc", &r, NULL), 2);
	ck_assert_str_eq(out, "memcheck.budget:1: allocs 200 > 100; "
			 "memcheck.budget:3: allocs 200 > 10");
	ck_assert_int_eq(check(b, "lex_a", "glibc", &r, NULL), 2);
	ck_assert_int_eq(check(b, "lex_ab", "glibc", &r, NULL), 1);
	ck_assert_int_eq(check(b, "tokens", "glibc", &r, NULL), 2);
	ck_assert_int_eq(check(b, "other", "mimalloc", &r, NULL), 2);
	ck_assert_int_eq(check(b, "parse_url", "mimalloc", &r, NULL), 3);
	ck_assert_int_eq(check(b, "parse_url", "jemalloc", &r, NULL), 3);
	ck_assert_str_eq(out, "memcheck.budget:1: allocs 200 > 100; "
			 "memcheck.budget:3: allocs 200 > 10; "
			 "memcheck.budget:9: allocs 200 > 3");
	ck_assert_int_eq(check(b, "parse_url", "/usr/lib/libhoard.so.1", &r, NULL), 3);
	ck_assert_int_eq(check(b, "parse_url", "tcmalloc", &r, NULL), 2);
	ck_assert_int_eq(check(b, "parse_url", NULL, &r, NULL), 2);
	ck_assert_int_eq(check(b, "suite/case/test", "glibc", &r, NULL), 2);  /* '*' takes '/' */
	ck_assert_int_eq(check(b, "@odd", "glibc", &r, NULL), 2);
	ck_assert_int_eq(check(b, "test#1", "glibc", &r, NULL), 2);
	ck_assert_int_eq(check(b, NULL, "glibc", &r, NULL), 1);
	r.allocs = 0;
	ck_assert_int_eq(check(b, "parse_url", "jemalloc", &r, NULL), 0);
	mc_budget_free(b);
}
END_TEST

/* ---- checking: relative limits ----------------------------------------- */

START_TEST(relative_limits)
{
	struct mc_budget *b = good(
		"[*]\n"
		"peak_rss <= +10%\n"                  /* 2 */
		"retained_bytes <= 1.25x\n"           /* 3 */
		"rss_end < -50%\n"                    /* 4 */
		"seconds <= 2x\n");                   /* 5 */
	struct memcheck_result base = result(), r = result();
	base.peak_rss = 100 * MiB;
	base.retained_bytes = 4 * MiB;
	base.rss_end = 100 * MiB;
	base.seconds = 1;
	r.peak_rss = 110 * MiB;                       /* exactly +10% */
	r.retained_bytes = 5 * MiB;                   /* exactly 1.25x */
	r.rss_end = 50 * MiB - 1;
	r.seconds = 2;
	ck_assert_int_eq(check(b, "t", "mimalloc", &r, &base), 0);

	r.peak_rss = 120 * MiB;
	r.retained_bytes = 5 * MiB + 1;
	r.rss_end = 50 * MiB;
	r.seconds = 2.5;
	ck_assert_int_eq(check(b, "t", "mimalloc", &r, &base), 4);
	ck_assert_str_eq(out,
		"memcheck.budget:2: peak_rss 120.0 MiB > 110.0 MiB (+10% of glibc's 100.0 MiB); "
		"memcheck.budget:3: retained_bytes 5.0 MiB (5,242,881 B) > 5.0 MiB (5,242,880 B) "
		"(1.25x glibc's 4.0 MiB); "
		"memcheck.budget:4: rss_end 50.0 MiB >= 50.0 MiB (-50% of glibc's 100.0 MiB); "
		"memcheck.budget:5: seconds 2.500 s > 2.000 s (2x glibc's 1.000 s)");

	/* Under the baseline allocator they are not checked. */
	ck_assert_int_eq(check(b, "t", "glibc", &r, &base), 0);
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 0);

	/* No baseline record. */
	ck_assert_int_eq(check(b, "parse_url", "jemalloc", &r, NULL), 4);
	ck_assert_ptr_nonnull(strstr(out,
		"memcheck.budget:2: peak_rss +10%: no baseline for region 'parse_url' (run the "
		"baseline allocator first, or pass MEMCHECK_BASELINE); "));
	ck_assert_ptr_nonnull(strstr(out, "memcheck.budget:3: retained_bytes 1.25x: no baseline"));

	/* The baseline's figure not measured. */
	base.retained_bytes = MEMCHECK_UNKNOWN;
	r = base;
	r.retained_bytes = 0;
	r.rss_end = 0;
	ck_assert_int_eq(check(b, "t", "mimalloc", &r, &base), 1);
	ck_assert_str_eq(out, "memcheck.budget:3: retained_bytes 1.25x: not measured under "
			 "glibc for region 't'");
	/* 0 in the baseline: nothing is allowed. */
	base.retained_bytes = 0;
	r.retained_bytes = 1;
	ck_assert_int_eq(check(b, "t", "mimalloc", &r, &base), 1);
	ck_assert_str_eq(out, "memcheck.budget:3: retained_bytes 1 B > 0 B (1.25x glibc's 0 B)");
	mc_budget_free(b);

	/* Another baseline: glibc is checked, jemalloc is not. */
	b = good("baseline jemalloc\npeak_rss <= 1.5x\n");
	base = result();
	r = result();
	base.peak_rss = 100 * MiB;
	r.peak_rss = 200 * MiB;
	ck_assert_int_eq(check(b, "t", "jemalloc", &r, &base), 0);
	ck_assert_int_eq(check(b, "t", "glibc", &r, &base), 1);
	ck_assert_str_eq(out, "memcheck.budget:2: peak_rss 200.0 MiB > 150.0 MiB "
			 "(1.5x jemalloc's 100.0 MiB)");
	mc_budget_free(b);
}
END_TEST

/* ---- checking: figures not measured ------------------------------------ */

START_TEST(unknown_figures_never_pass)
{
	struct mc_budget *b = good("peak_rss <= 1 GiB\nlive_bytes <= 0\nseconds <= 1\n"
				   "[* @mimalloc]\nretained_bytes <= 1 MiB\n");
	struct memcheck_result r = result();
	r.peak_rss = MEMCHECK_UNKNOWN;
	r.live_bytes = MEMCHECK_UNKNOWN;
	r.seconds = NAN;
	r.retained_bytes = MEMCHECK_UNKNOWN;
	ck_assert_int_eq(check(b, "t", "glibc", &r, NULL), 3);
	ck_assert_str_eq(out, "memcheck.budget:1: peak_rss not measured; "
			 "memcheck.budget:2: live_bytes not measured; "
			 "memcheck.budget:3: seconds not measured");
	ck_assert_int_eq(check(b, "t", "mimalloc", &r, NULL), 4);
	ck_assert_ptr_nonnull(strstr(out, "; memcheck.budget:5: retained_bytes not measured"));
	mc_budget_free(b);
}
END_TEST

/* ---- checking: the output buffer ---------------------------------------- */

START_TEST(messages_append_and_fit)
{
	struct mc_budget *b = good("allocs <= 1\nfrees <= 1\nreallocs <= 1\n");
	struct memcheck_result r = result();
	r.allocs = r.frees = r.reallocs = 2;
	char buf[512] = "16 bytes in 1 blocks definitely lost";
	ck_assert_int_eq(mc_budget_check(b, "t", "glibc", &r, NULL, buf, sizeof buf), 3);
	ck_assert_str_eq(buf, "16 bytes in 1 blocks definitely lost; "
			 "memcheck.budget:1: allocs 2 > 1; memcheck.budget:2: frees 2 > 1; "
			 "memcheck.budget:3: reallocs 2 > 1");
	/* Whole messages, then "...". */
	char small[60] = "";
	ck_assert_int_eq(mc_budget_check(b, "t", "glibc", &r, NULL, small, sizeof small), 3);
	ck_assert_str_eq(small, "memcheck.budget:1: allocs 2 > 1; ...");
	char tiny[8] = "";
	ck_assert_int_eq(mc_budget_check(b, "t", "glibc", &r, NULL, tiny, sizeof tiny), 3);
	ck_assert_str_eq(tiny, "...");
	ck_assert_int_eq(mc_budget_check(b, "t", "glibc", &r, NULL, NULL, 0), 3);
	/* A full buffer without its NUL is left alone. */
	char full[4] = { 'a', 'b', 'c', 'd' };
	ck_assert_int_eq(mc_budget_check(b, "t", "glibc", &r, NULL, full, sizeof full), 3);
	ck_assert(memcmp(full, "abcd", 4) == 0);
	ck_assert_int_eq(mc_budget_check(NULL, "t", "glibc", &r, NULL, buf, sizeof buf), 0);
	mc_budget_free(b);
}
END_TEST

/* An editor's UTF-8 byte order mark before the first line: read past
 * (the first key was "unknown", the mark quoted invisibly before it). */
START_TEST(byte_order_mark_read_past)
{
	const char *text = "\xef\xbb\xbf" "allocs <= 2\n";
	struct mc_budget *b = mc_budget_parse(text, strlen(text), "b.conf", err, sizeof err);
	ck_assert_msg(b != NULL, "%s", err);
	struct memcheck_result r = result();
	r.allocs = 3;
	out[0] = 0;
	ck_assert_int_eq(mc_budget_check(b, "x", "glibc", &r, NULL, out, sizeof out), 1);
	ck_assert_str_eq(out, "b.conf:1: allocs 3 > 2");
	mc_budget_free(b);
}
END_TEST

/* ---- files --------------------------------------------------------------- */

START_TEST(load_files)
{
	char path[] = "/tmp/unit_budget_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	const char *text = "# a budget\r\npeak_rss <= 1 MiB\r\n[x]\r\nallocs <= 2\r\n";
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct mc_budget *b = mc_budget_load(path, NULL, err, sizeof err);
	ck_assert_msg(b != NULL, "%s", err);
	struct memcheck_result r = result();
	r.peak_rss = 2 * MiB;
	r.allocs = 3;
	out[0] = 0;
	ck_assert_int_eq(mc_budget_check(b, "x", "glibc", &r, NULL, out, sizeof out), 2);
	char want[512];
	snprintf(want, sizeof want, "%s:2: peak_rss 2.0 MiB > 1.0 MiB; %s:4: allocs 3 > 2",
		 path, path);
	ck_assert_str_eq(out, want);
	mc_budget_free(b);

	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "peak_rs <= 1\n", 13), 13);
	close(fd);
	ck_assert_ptr_null(mc_budget_load(path, NULL, err, sizeof err));
	snprintf(want, sizeof want, "%s:5: unknown key 'peak_rs' (did you mean peak_rss?)", path);
	ck_assert_str_eq(err, want);
	unlink(path);

	ck_assert_ptr_null(mc_budget_load(path, NULL, err, sizeof err));
	snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(mc_budget_load("/tmp", NULL, err, sizeof err));
	ck_assert_str_eq(err, "/tmp: cannot read: Is a directory");
	/* A name's control characters as '?', a long name cut: one message
	 * a line (gate.c logs them so; "/tmp/x\ny" made two, the region's
	 * violation "/tmp/x"), and what was expected kept in mc_log's line
	 * (harden47).  A copy (MEMCHECK_BUDGET_NAME) said as such. */
	ck_assert_ptr_null(mc_budget_load("/nonexistent/x\ny\033z", NULL, err, sizeof err));
	ck_assert_str_eq(err, "/nonexistent/x?y?z: cannot open: No such file or directory");
	char longname[600];
	memset(longname, 'a', sizeof longname - 1);
	longname[0] = '/';
	longname[sizeof longname - 1] = 0;
	ck_assert_ptr_null(mc_budget_load(longname, NULL, err, sizeof err));
	ck_assert_msg(strlen(err) < 200 && strstr(err, "aaa...: cannot open: File name too long"),
		      "%s", err);
	ck_assert_ptr_null(mc_budget_load("/nonexistent/copy", "b.budget", err, sizeof err));
	ck_assert_str_eq(err, "b.budget: cannot open its copy /nonexistent/copy: No such file or "
			 "directory");
	/* Not a file to read whole: /dev/zero never ends. */
	ck_assert_ptr_null(mc_budget_load("/dev/zero", NULL, err, sizeof err));
	ck_assert_str_eq(err, "/dev/zero: larger than 16 MiB: not a budget file?");
	/* A FIFO no process writes: refused at once, never read as an empty
	 * budget (harden43); one with a writer read to its end, the writer
	 * waited for by the CLI's load. */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_ptr_null(mc_budget_load(path, NULL, err, sizeof err));
	snprintf(want, sizeof want, "%s: a FIFO no process has open for writing: expected a "
		 "budget file (memcheck-budget(5)); not waited for", path);
	ck_assert_str_eq(err, want);
	for (int waiting = 0; waiting < 2; waiting++) {
		/* not waiting: a writer that has written nothing yet (a reader
		 * of the test's own holds the FIFO open meanwhile), whose
		 * text the reads wait for; waiting: a writer that opens the
		 * FIFO after the load has begun to wait */
		int rfd = -1, wfd = -1;
		if (!waiting) {
			rfd = open(path, O_RDONLY | O_NONBLOCK);
			wfd = open(path, O_WRONLY);
			ck_assert_int_ge(wfd, 0);
		}
		pid_t w = fork();
		ck_assert_int_ge(w, 0);
		if (w == 0) {
			usleep(200 * 1000);
			int fd2 = wfd >= 0 ? wfd : open(path, O_WRONLY);
			_exit(fd2 >= 0 && write(fd2, "[x]\nallocs <= 2\n", 16) == 16 ? 0 : 1);
		}
		if (wfd >= 0)
			close(wfd);
		struct mc_buf copy = { 0 };
		b = waiting ? mc_budget_load_waiting(path, &copy, err, sizeof err)
			    : mc_budget_load(path, NULL, err, sizeof err);
		ck_assert_msg(b != NULL, "%s", err);
		struct memcheck_result three = result();
		three.allocs = 3;
		ck_assert_int_eq(mc_budget_check(b, "x", "glibc", &three, NULL, out, sizeof out), 1);
		if (waiting)
			ck_assert_str_eq(copy.s, "[x]\nallocs <= 2\n");
		mc_buf_free(&copy);
		mc_budget_free(b);
		if (rfd >= 0)
			close(rfd);
		int st;
		ck_assert_int_eq(waitpid(w, &st, 0), w);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	unlink(path);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("budget", 30);
	tcase_add_test(tc, keys_cover_the_result);
	tcase_add_test(tc, keys_are_documented);
	tcase_add_test(tc, every_kind_of_good_line);
	tcase_add_test(tc, every_kind_of_bad_line);
	tcase_add_test(tc, bad_lines_need_their_context);
	tcase_add_test(tc, all_errors_at_once);
	tcase_add_test(tc, absolute_limits);
	tcase_add_test(tc, units);
	tcase_add_test(tc, globs_and_allocator_sections);
	tcase_add_test(tc, relative_limits);
	tcase_add_test(tc, unknown_figures_never_pass);
	tcase_add_test(tc, messages_append_and_fit);
	tcase_add_test(tc, byte_order_mark_read_past);
	tcase_add_test(tc, load_files);
	return h_run_suite(NULL);
}
