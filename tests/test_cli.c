/*
 * test_cli.c - the memcheck command (build/memcheck, tools/): exit status
 * for every outcome, the table, allocators skipped with their package,
 * --report read back by gate and compare, --junit checked by the
 * harness's strict XML reader, the command's output passed through, and
 * the CLI itself clean under valgrind.  The command under test is
 * tests/prog/cli_prog.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* ---- helpers --------------------------------------------------------- */

static const char *cli(void)
{
	static char *path;
	if (!path) {
		path = malloc(strlen(h_build()) + 16);
		sprintf(path, "%s/memcheck", h_build());
		ck_assert_msg(access(path, X_OK) == 0, "%s missing (make build/memcheck)", path);
	}
	return path;
}

static const char *prog(void)
{
	return h_prog("cli_prog");
}

static const char *const quiet[] = { "MEMCHECK_TEXT=none", NULL };

static const char *const *env_or_quiet(const char *const *env)
{
	return env ? env : quiet;
}

/* memcheck ARGS..., with env (NULL: quiet regions, MEMCHECK_TEXT=none). */
#define MC(r, env, ...)                                                        \
	do {                                                                   \
		const char *argv_[] = { cli(), __VA_ARGS__, NULL };            \
		ck_assert(h_run((r), argv_, env_or_quiet(env), 0, NULL) == 0); \
	} while (0)

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static const char *tmpfile_with(const char *tag, const char *text)
{
	const char *p = h_tmppath(tag);
	write_file(p, text);
	return p;
}

#define EXPECT_EXIT(r, code, what)                                             \
	ck_assert_msg((r)->exit_code == (code), "%s: %s, expected exit %d\nstdout:\n%s\nstderr:\n%s", \
		      (what), h_status(r), (code), (r)->out, (r)->err)

#define EXPECT_HAS(text, needle, what)                                         \
	ck_assert_msg(strstr((text), (needle)) != NULL, "%s: \"%s\" not in:\n%s", (what), \
		      (needle), (text))

/* An allocator other than glibc that is installed (its name), or NULL;
 * its soname in *soname. */
static const char *other_allocator_so(const char **soname)
{
	static const int others[] = { H_JEMALLOC, H_MIMALLOC, H_TCMALLOC };
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		if (h_allocator_so(h_allocators[others[i]].soname)) {
			if (soname)
				*soname = h_allocators[others[i]].soname;
			return h_allocators[others[i]].name;
		}
	printf("note: no allocator besides glibc installed; parts of test_cli skipped\n");
	return NULL;
}

static const char *other_allocator(void)
{
	return other_allocator_so(NULL);
}

/* Lines of the table in text that start with a program name, or carry
 * an allocator in the allocator column: rows naming label. */
static int table_rows(const char *text, const char *label)
{
	const char *t = strstr(text, "\nprogram ");
	if (!t)
		return 0;
	char pat[64];
	snprintf(pat, sizeof pat, "  %s  ", label);
	int n = 0;
	for (const char *line = strchr(t + 1, '\n'); line && line[1] && line[1] != '\n';
	     line = strchr(line + 1, '\n')) {
		const char *nl = strchr(line + 1, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[512];
		snprintf(buf, sizeof buf, "%.*s", (int)(len < 500 ? len : 500), line + 1);
		if (strstr(buf, pat))
			n++;
	}
	return n;
}

/* ---- JUnit, as the harness's XML reader gives it -------------------- */

static long xcount(const struct h_xml *e, const char *name)
{
	const char *v = h_xml_attr(e, name);
	ck_assert_msg(v != NULL, "<%s> has no %s", e->name, name);
	char *end;
	long n = strtol(v, &end, 10);
	ck_assert_msg(*v && !*end && n >= 0, "<%s %s=\"%s\">: not a count", e->name, name, v);
	return n;
}

static void check_time(const struct h_xml *e)
{
	const char *t = h_xml_attr(e, "time");
	ck_assert_msg(t != NULL, "<%s> has no time", e->name);
	char *end;
	double v = strtod(t, &end);
	ck_assert_msg(*t && !*end && v >= 0 && strspn(t, "0123456789.") == strlen(t),
		      "<%s time=\"%s\">: not a number of seconds", e->name, t);
}

/* JUnit's structure: <testsuites> of <testsuite>s of <testcase>s, every
 * count equal to the elements it counts. */
static struct h_xml *junit_load(const char *path)
{
	char *doc = h_read_file(path, NULL);
	ck_assert_msg(doc != NULL, "no JUnit file %s", path);
	char err[256];
	struct h_xml *root = h_xml_parse(doc, err, sizeof err);
	ck_assert_msg(root != NULL, "%s is not well-formed XML: %s\n%s", path, err, doc);
	ck_assert_str_eq(root->name, "testsuites");
	long sums[4] = { 0 };
	static const char *const what[4] = { "tests", "failures", "errors", "skipped" };
	for (int i = 0; i < root->nkids; i++) {
		const struct h_xml *s = root->kid[i];
		ck_assert_msg(!strcmp(s->name, "testsuite"), "<%s> in <testsuites>", s->name);
		ck_assert_msg(h_xml_attr(s, "name") != NULL, "testsuite without a name");
		check_time(s);
		long n[4] = { 0 };
		for (int k = 0; k < s->nkids; k++) {
			const struct h_xml *c = s->kid[k];
			if (!strcmp(c->name, "properties")) {
				ck_assert_msg(k == 0, "<properties> not first");
				for (int j = 0; j < c->nkids; j++)
					ck_assert(!strcmp(c->kid[j]->name, "property") &&
						  h_xml_attr(c->kid[j], "name") &&
						  h_xml_attr(c->kid[j], "value"));
				continue;
			}
			ck_assert_msg(!strcmp(c->name, "testcase"), "<%s> in <testsuite>", c->name);
			ck_assert_msg(h_xml_attr(c, "classname") && h_xml_attr(c, "name"),
				      "testcase without classname or name");
			check_time(c);
			n[0]++;
			int outcomes = 0;
			for (int j = 0; j < c->nkids; j++) {
				const char *kn = c->kid[j]->name;
				if (!strcmp(kn, "failure"))
					n[1]++, outcomes++;
				else if (!strcmp(kn, "error"))
					n[2]++, outcomes++;
				else if (!strcmp(kn, "skipped"))
					n[3]++, outcomes++;
				else
					ck_abort_msg("<%s> in <testcase>", kn);
				ck_assert_msg(h_xml_attr(c->kid[j], "message") != NULL,
					      "<%s> without a message", kn);
			}
			ck_assert_msg(outcomes <= 1, "testcase %s with %d outcomes",
				      h_xml_attr(c, "name"), outcomes);
		}
		for (int w = 0; w < 4; w++) {
			ck_assert_msg(xcount(s, what[w]) == n[w],
				      "testsuite %s: %s=\"%ld\", but %ld elements", h_xml_attr(s, "name"),
				      what[w], xcount(s, what[w]), n[w]);
			sums[w] += n[w];
		}
	}
	/* Jenkins' junit-10.xsd allows no "skipped" on <testsuites> */
	for (int w = 0; w < 3; w++)
		ck_assert_msg(xcount(root, what[w]) == sums[w], "testsuites %s=\"%ld\", sum %ld",
			      what[w], xcount(root, what[w]), sums[w]);
	ck_assert_msg(!h_xml_attr(root, "skipped"), "<testsuites skipped=...>: not in junit-10.xsd");
	free(doc);
	return root;
}

static const struct h_xml *junit_suite(const struct h_xml *root, const char *name)
{
	for (int i = 0; i < root->nkids; i++)
		if (!strcmp(h_xml_attr(root->kid[i], "name"), name))
			return root->kid[i];
	return NULL;
}

static const struct h_xml *junit_case(const struct h_xml *suite, const char *name)
{
	for (int i = 0; suite && i < suite->nkids; i++)
		if (h_xml_attr(suite->kid[i], "name") && !strcmp(h_xml_attr(suite->kid[i], "name"), name))
			return suite->kid[i];
	return NULL;
}

/* ---- exit status ----------------------------------------------------- */

START_TEST(help_and_version)
{
	struct h_run r;
	MC(&r, NULL, "--help");
	EXPECT_EXIT(&r, 0, "--help");
	EXPECT_HAS(r.out, "usage: memcheck COMMAND", "--help");
	h_run_free(&r);
	static const char *const cmds[][2] = { { "run", "--allocators" },
					       { "compare", "A.jsonl B.jsonl" },
					       { "gate", "--baseline-file" } };
	for (int i = 0; i < 3; i++) {
		MC(&r, NULL, "help", cmds[i][0]);
		EXPECT_EXIT(&r, 0, cmds[i][0]);
		EXPECT_HAS(r.out, cmds[i][1], cmds[i][0]);
		h_run_free(&r);
		MC(&r, NULL, cmds[i][0], "--help");
		EXPECT_EXIT(&r, 0, cmds[i][0]);
		EXPECT_HAS(r.out, cmds[i][1], cmds[i][0]);
		h_run_free(&r);
	}
	MC(&r, NULL, "--version");
	EXPECT_EXIT(&r, 0, "--version");
	EXPECT_HAS(r.out, "memcheck 0.", "--version");
	h_run_free(&r);
}
END_TEST

START_TEST(pass_exits_0)
{
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--", prog(), "pass");
	EXPECT_EXIT(&r, 0, "clean run");
	ck_assert_str_eq(r.out, "");
	EXPECT_HAS(r.err, "alloc_free", "table");
	ck_assert_msg(table_rows(r.err, "glibc") == 2, "expected rows for alloc_free and "
		      "process under glibc:\n%s", r.err);
	EXPECT_HAS(r.err, "memcheck: exit 0:", "verdict line");
	h_run_free(&r);
}
END_TEST

START_TEST(leak_exits_1)
{
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--", prog(), "pass", "leak");
	EXPECT_EXIT(&r, 1, "leaking run");
	EXPECT_HAS(r.err, "1000 bytes in 1 blocks definitely lost", "leak message");
	EXPECT_HAS(r.err, "FAIL", "verdict column");
	EXPECT_HAS(r.err, "memcheck: exit 1:", "verdict line");
	h_run_free(&r);
}
END_TEST

START_TEST(budget_exits_1)
{
	const char *b = tmpfile_with("cli.budget", "# regions named big\n[big]\n"
				     "peak_live_bytes <= 16 KiB\n");
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--budget", b, "--", prog(), "pass", "big", "64");
	EXPECT_EXIT(&r, 1, "over budget");
	char want[4200];
	snprintf(want, sizeof want, "%s:3: peak_live_bytes 64.0 KiB > 16.0 KiB", b);
	EXPECT_HAS(r.err, want, "the budget line that failed");
	h_run_free(&r);

	/* within budget */
	MC(&r, NULL, "run", "-a", "glibc", "--budget", b, "--", prog(), "pass", "big", "8");
	EXPECT_EXIT(&r, 0, "within budget");
	h_run_free(&r);
}
END_TEST

/* A test suite whose test fails because of a budget exits non-zero:
 * that is the budget's failure, 1, not the command's, 3. */
START_TEST(budget_failure_beats_command_exit)
{
	const char *b = tmpfile_with("cli.budget", "[big]\npeak_live_bytes <= 16 KiB\n");
	struct h_run r;
	/* the program itself fails when memcheck_end says the region failed
	 * (needs the library's own budget check: MEMCHECK_BUDGET) ... */
	MC(&r, NULL, "run", "-a", "glibc", "--budget", b, "--", prog(), "strict", "big", "64");
	EXPECT_EXIT(&r, 1, "a suite failing on its budget");
	h_run_free(&r);
	/* ... or exits non-zero in the same run as a region over budget */
	MC(&r, NULL, "run", "-a", "glibc", "--budget", b, "--", prog(), "big", "64", "exit", "5");
	EXPECT_EXIT(&r, 1, "non-zero exit with a region over budget");
	h_run_free(&r);
	/* leaks count the same way */
	MC(&r, NULL, "run", "-a", "glibc", "--", prog(), "strict", "leak");
	EXPECT_EXIT(&r, 1, "a suite failing on a leak");
	h_run_free(&r);
}
END_TEST

START_TEST(crash_exits_3)
{
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--", prog(), "pass", "crash");
	EXPECT_EXIT(&r, 3, "crash");
	EXPECT_HAS(r.err, "killed by signal 11 (SIGSEGV)", "crash message");
	h_run_free(&r);
	/* a signal beats a leak and a budget */
	const char *b = tmpfile_with("cli.budget", "peak_live_bytes <= 1 KiB\n");
	MC(&r, NULL, "run", "-a", "glibc", "--budget", b, "--", prog(), "leak", "big", "64",
	   "crash");
	EXPECT_EXIT(&r, 3, "crash after failing regions");
	EXPECT_HAS(r.err, "SIGSEGV", "crash message");
	h_run_free(&r);

	/* without --keep-going the first crash stops the rest; with it they run */
	const char *other = other_allocator();
	if (!other)
		return;
	char list[64];
	snprintf(list, sizeof list, "glibc,%s", other);
	const char *j = h_tmppath("stop.xml");
	MC(&r, NULL, "run", "-a", list, "--junit", j, "--", prog(), "pass", "crash-under", "glibc");
	EXPECT_EXIT(&r, 3, "baseline crash");
	ck_assert_int_eq(table_rows(r.err, other), 0);
	EXPECT_HAS(r.err, "not run", "runs summary");
	h_run_free(&r);
	struct h_xml *root = junit_load(j);
	const struct h_xml *s = junit_suite(root, other);
	ck_assert_msg(s && xcount(s, "skipped") == 1, "%s not skipped in JUnit", other);
	ck_assert_int_eq(xcount(junit_suite(root, "glibc"), "errors"), 1);
	h_xml_free(root);
	MC(&r, NULL, "run", "-k", "-a", list, "--", prog(), "pass", "crash-under", "glibc");
	EXPECT_EXIT(&r, 3, "baseline crash, --keep-going");
	ck_assert_msg(table_rows(r.err, other) == 2, "no %s rows with --keep-going:\n%s", other,
		      r.err);
	h_run_free(&r);
}
END_TEST

START_TEST(command_failure_exits_3)
{
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--", prog(), "pass", "exit", "4");
	EXPECT_EXIT(&r, 3, "command exits 4, memcheck content");
	EXPECT_HAS(r.err, "exit status 4", "message");
	h_run_free(&r);
	/* a command that cannot be started is bad usage */
	MC(&r, NULL, "run", "-a", "glibc", "--", "/nonexistent/command");
	EXPECT_EXIT(&r, 2, "command not found");
	EXPECT_HAS(r.err, "cannot run /nonexistent/command: No such file", "message");
	h_run_free(&r);
}
END_TEST

START_TEST(bad_usage_exits_2)
{
	const char *p = prog();
	const char *b = tmpfile_with("glibc.budget", "baseline glibc\n");
	const char *const cases[][10] = {
		{ NULL },
		{ "frobnicate", NULL },
		{ "run", NULL },
		{ "run", "--", NULL },
		{ "run", "--bogus", "--", p, NULL },
		{ "run", "--repeat", "0", "--", p, NULL },
		{ "run", "--repeat", "x", "--", p, NULL },
		{ "run", "-a", "glibcc", "--", p, NULL },
		{ "run", "-a", "glibc", "--budget", NULL },
		{ "run", "--baseline", "jemalloc", "--budget", b, "--", p, NULL },
		{ "compare", "one.jsonl", NULL },
		{ "compare", "a", "b", "c", NULL },
		{ "gate", NULL },
		{ "gate", "--bogus", "x.jsonl", NULL },
		{ "help", "nope", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *argv[12] = { cli() };
		size_t n = 1;
		for (size_t k = 0; cases[i][k]; k++)
			argv[n++] = cases[i][k];
		argv[n] = NULL;
		struct h_run r;
		ck_assert(h_run(&r, argv, quiet, 0, NULL) == 0);
		char what[128];
		snprintf(what, sizeof what, "case %zu (%s %s)", i, n > 1 ? argv[1] : "",
			 n > 2 ? argv[2] : "");
		EXPECT_EXIT(&r, 2, what);
		ck_assert_msg(strstr(r.err, "memcheck"), "%s: no message:\n%s", what, r.err);
		if (i == 7)
			EXPECT_HAS(r.err, "unknown allocator 'glibcc'", what);
		if (i == 9)
			EXPECT_HAS(r.err, "compare with glibc", what);
		h_run_free(&r);
	}
}
END_TEST

START_TEST(bad_budget_exits_2)
{
	const char *b = tmpfile_with("bad.budget", "peak_live_bytes <= 1 KiB\n"
				     "peak_rs <= 1 MiB\n\n[unterminated\n");
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--budget", b, "--", prog(), "out");
	EXPECT_EXIT(&r, 2, "bad budget file");
	char want[4200];
	snprintf(want, sizeof want, "%s:2: unknown key 'peak_rs' (did you mean peak_rss?)", b);
	EXPECT_HAS(r.err, want, "run");
	snprintf(want, sizeof want, "%s:4: unterminated section", b);
	EXPECT_HAS(r.err, want, "run, every bad line");
	ck_assert_msg(!strstr(r.out, "hello"), "the command ran with a bad budget");
	h_run_free(&r);

	/* gate too, and a budget that cannot be read */
	const char *rep = tmpfile_with("r.jsonl", "{\"name\":\"r\",\"pid\":1,\"program\":\"p\","
				       "\"allocator\":\"glibc\",\"verdict\":\"pass\"}\n");
	MC(&r, NULL, "gate", "--budget", b, rep);
	EXPECT_EXIT(&r, 2, "gate, bad budget file");
	snprintf(want, sizeof want, "%s:2: unknown key", b);
	EXPECT_HAS(r.err, want, "gate");
	h_run_free(&r);
	MC(&r, NULL, "gate", "--budget", "/nonexistent/x.budget", rep);
	EXPECT_EXIT(&r, 2, "gate, missing budget file");
	EXPECT_HAS(r.err, "/nonexistent/x.budget", "gate, missing budget file");
	h_run_free(&r);
}
END_TEST

START_TEST(bad_report_exits_2)
{
	static const char good[] = "{\"name\":\"r\",\"pid\":1,\"program\":\"p\","
				   "\"allocator\":\"glibc\",\"verdict\":\"pass\"}\n";
	const char *a = tmpfile_with("good.jsonl", good);
	char text[512];
	snprintf(text, sizeof text, "%s\n%s{\"name\":\"x\",\"pid\":\n%s", good, good, good);
	const char *bad = tmpfile_with("bad.jsonl", text);
	char want[4200];
	snprintf(want, sizeof want, "%s:4: column 19: expected an unsigned integer", bad);
	struct h_run r;
	MC(&r, NULL, "compare", a, bad);
	EXPECT_EXIT(&r, 2, "compare, malformed line");
	EXPECT_HAS(r.err, want, "compare");
	h_run_free(&r);
	MC(&r, NULL, "gate", bad);
	EXPECT_EXIT(&r, 2, "gate, malformed line");
	EXPECT_HAS(r.err, want, "gate");
	h_run_free(&r);
	const char *b = tmpfile_with("ok.budget", "allocs <= 10\n");
	MC(&r, NULL, "gate", "--budget", b, "--baseline-file", bad, a);
	EXPECT_EXIT(&r, 2, "gate, malformed baseline file");
	EXPECT_HAS(r.err, want, "gate --baseline-file");
	h_run_free(&r);
	MC(&r, NULL, "run", "-a", "glibc", "--baseline-file", bad, "--", prog(), "pass");
	EXPECT_EXIT(&r, 2, "run, malformed baseline file");
	h_run_free(&r);
	/* a report that is not there, or holds no record */
	MC(&r, NULL, "gate", "/nonexistent/r.jsonl");
	EXPECT_EXIT(&r, 2, "gate, missing report");
	EXPECT_HAS(r.err, "/nonexistent/r.jsonl", "gate, missing report");
	h_run_free(&r);
	const char *empty = tmpfile_with("empty.jsonl", "\n");
	MC(&r, NULL, "gate", empty);
	EXPECT_EXIT(&r, 2, "gate, empty report");
	EXPECT_HAS(r.err, "no memcheck records", "gate, empty report");
	h_run_free(&r);
	MC(&r, NULL, "compare", a, "/nonexistent/b.jsonl");
	EXPECT_EXIT(&r, 2, "compare, missing report");
	h_run_free(&r);
}
END_TEST

/* ---- allocators ------------------------------------------------------ */

START_TEST(missing_allocator_skipped)
{
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc,/nonexistent/libfoo.so", "--", prog(), "pass");
	EXPECT_EXIT(&r, 0, "a missing allocator path");
	EXPECT_HAS(r.err, "skipping /nonexistent/libfoo.so: No such file", "skip line");
	h_run_free(&r);

	/* Named allocators are looked for in MEMCHECK_ALLOCATOR_DIR: an
	 * empty directory makes every one missing. */
	const char *dir = h_tmppath("nolibs");
	ck_assert(mkdir(dir, 0700) == 0);
	const char *env[] = { "MEMCHECK_TEXT=none", h_env("MEMCHECK_ALLOCATOR_DIR=%s", dir), NULL };
	MC(&r, env, "run", "-a", "glibc,mimalloc,jemalloc,tcmalloc,tcmalloc-full", "--", prog(),
	   "pass");
	EXPECT_EXIT(&r, 0, "every allocator but glibc missing");
	static const char *const pkgs[] = { "Debian package libmimalloc2.0",
					    "Debian package libjemalloc2",
					    "Debian package libtcmalloc-minimal4",
					    "Debian package libgoogle-perftools4" };
	for (int i = 0; i < 4; i++)
		EXPECT_HAS(r.err, pkgs[i], "skip line");
	EXPECT_HAS(r.err, "skipping mimalloc is not installed", "skip line");
	ck_assert_int_eq(table_rows(r.err, "glibc"), 2);
	ck_assert_int_eq(table_rows(r.err, "mimalloc"), 0);
	h_run_free(&r);

	/* a missing baseline cannot be skipped */
	MC(&r, env, "run", "-a", "glibc", "--baseline", "mimalloc", "--", prog(), "pass");
	EXPECT_EXIT(&r, 2, "missing baseline");
	EXPECT_HAS(r.err, "libmimalloc2.0", "missing baseline");
	h_run_free(&r);
	rmdir(dir);
}
END_TEST

/* Issue 14, item 12: an object that does not serve malloc made a column
 * of glibc's figures under its name, and exit 0.  Not a shared object
 * (ld.so ignores it), or one with no malloc (zlib). */
START_TEST(object_that_does_not_serve_malloc_is_an_error)
{
	const char *zlib = h_allocator_so("libz.so.1");
	const char *const objects[] = { "/etc/passwd", zlib };
	for (size_t i = 0; i < 2 && objects[i]; i++) {
		struct h_run r;
		const char *list = h_env("glibc,%s", objects[i]);
		MC(&r, NULL, "run", "-a", list, "--", prog(), "pass");
		EXPECT_EXIT(&r, 2, "an object that does not serve malloc");
		EXPECT_HAS(r.err, "does not serve malloc", "the reason");
		ck_assert_int_eq(table_rows(r.err, objects[i]), 0);
		h_run_free(&r);
	}
}
END_TEST

START_TEST(table_shows_each_allocator)
{
	struct h_run r;
	const char *rep = h_tmppath("all.jsonl");
	MC(&r, NULL, "run", "--report", rep, "--", prog(), "pass");  /* the default: all four */
	EXPECT_EXIT(&r, 0, "default allocators");
	EXPECT_HAS(r.err, "vs glibc", "table header");
	struct h_report hr;
	H_LOAD(&hr, rep);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *name = h_allocators[i].name, *soname = h_allocators[i].soname;
		bool installed = !soname || h_allocator_so(soname);
		int rows = table_rows(r.err, name);
		ck_assert_msg(rows == (installed ? 2 : 0), "%s: %d table rows, expected %d:\n%s",
			      name, rows, installed ? 2 : 0, r.err);
		/* run once, or three times when its records say it gives
		 * memory back on a timer (-n auto) */
		bool timed = false;
		for (size_t k = 0; k < hr.n; k++)
			if (!strcmp(h_str(hr.rec[k], "allocator"), name)) {
				uint64_t ms = h_u64(hr.rec[k], "timed_purge_ms");
				timed |= ms > 0 && ms != H_NULL && ms != H_MISSING;
			}
		char runs[64];
		snprintf(runs, sizeof runs, "  %-14s %s", name,
			 !installed ? "skipped" : timed ? "3 runs" : "1 run,");
		EXPECT_HAS(r.err, runs, "runs summary");
	}
	h_report_free(&hr);
	h_run_free(&r);
}
END_TEST

/* The command gets memcheck, then the allocator, then the user's own
 * LD_PRELOAD; the budget as an absolute path; the baseline's report only
 * when it is not the baseline. */
START_TEST(environment_of_the_command)
{
	const char *soname = NULL, *other = other_allocator_so(&soname);
	char list[64];
	snprintf(list, sizeof list, "glibc%s%s", other ? "," : "", other ? other : "");
	const char *b = tmpfile_with("env.budget", "allocs <= 1000\n");
	const char *env[] = { "MEMCHECK_TEXT=none", "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libm.so.6",
			      NULL };
	struct h_run r;
	MC(&r, env, "run", "-a", list, "--budget", b, "--", prog(), "env");
	EXPECT_EXIT(&r, 0, "env");
	char want[8192];
	snprintf(want, sizeof want, "LD_PRELOAD=%s/libmemcheck.so "
		 "/usr/lib/x86_64-linux-gnu/libm.so.6\nMEMCHECK_BUDGET=%s\nMEMCHECK_BASELINE unset\n",
		 h_build(), b);
	ck_assert_msg(!strncmp(r.out, want, strlen(want)), "glibc run's environment:\n%s\n"
		      "expected:\n%s", r.out, want);
	if (other) {
		const char *second = r.out + strlen(want);
		snprintf(want, sizeof want, "LD_PRELOAD=%s/libmemcheck.so /usr/lib/x86_64-linux-gnu/%s "
			 "/usr/lib/x86_64-linux-gnu/libm.so.6\nMEMCHECK_BUDGET=%s\n"
			 "MEMCHECK_BASELINE=/", h_build(), soname, b);
		ck_assert_msg(!strncmp(second, want, strlen(want)), "%s run's environment:\n%s\n"
			      "expected:\n%s", other, second, want);
	}
	h_run_free(&r);
}
END_TEST

START_TEST(output_passes_through)
{
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc,/nonexistent/x.so", "--", prog(), "out", "pass");
	EXPECT_EXIT(&r, 0, "out");
	ck_assert_str_eq(r.out, "hello stdout\n");   /* nothing of memcheck's */
	EXPECT_HAS(r.err, "hello stderr\n", "the command's stderr");
	EXPECT_HAS(r.err, "alloc_free", "the table, on stderr");
	h_run_free(&r);
}
END_TEST

START_TEST(children_and_repeated_regions)
{
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--", prog(), "iter", "3", "fork", "pass");
	EXPECT_EXIT(&r, 0, "fork");
	EXPECT_HAS(r.err, "  iter #3  ", "third region of the same name");
	EXPECT_HAS(r.err, "  alloc_free #2  ", "the region in the parent, after the child's");
	/* the child ended a region of its own: its process region is
	 * folded into it, not a row of its own */
	ck_assert_msg(strstr(r.err, "  process #2  ") == NULL, "the child's process row:\n%s",
		      r.err);
	h_run_free(&r);
	/* a command that drops LD_PRELOAD: nothing measured, and said */
	MC(&r, NULL, "run", "-a", "glibc", "--", "/usr/bin/env", "-u", "LD_PRELOAD", "/bin/true");
	EXPECT_EXIT(&r, 0, "no report");
	EXPECT_HAS(r.err, "wrote no report", "no report");
	h_run_free(&r);
}
END_TEST

START_TEST(repeat_reports_medians)
{
	const char *rep = h_tmppath("rep.jsonl");
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--repeat", "3", "--report", rep, "--", prog(), "pass");
	EXPECT_EXIT(&r, 0, "--repeat 3");
	EXPECT_HAS(r.err, "each figure is the median of an allocator's runs", "table title");
	EXPECT_HAS(r.err, "3 runs, wall ", "runs summary");
	ck_assert_int_eq(table_rows(r.err, "glibc"), 2);
	struct h_report hr;
	H_LOAD(&hr, rep);
	ck_assert_uint_eq(h_record_count(&hr, "alloc_free"), 3);
	ck_assert_uint_eq(h_record_count(&hr, "process"), 3);
	h_report_free(&hr);
	h_run_free(&r);
}
END_TEST

/* ---- stored reports -------------------------------------------------- */

/* What `run` says about a budget, `gate` says again from --report. */
START_TEST(report_then_gate_agree)
{
	const char *fail_b = tmpfile_with("fail.budget", "[big]\npeak_live_bytes <= 16 KiB\n");
	const char *pass_b = tmpfile_with("pass.budget", "[big]\npeak_live_bytes <= 1 MiB\n");
	const char *rep = h_tmppath("run.jsonl");
	struct h_run r, g;
	MC(&r, NULL, "run", "-a", "glibc", "--budget", fail_b, "--report", rep, "--", prog(),
	   "pass", "big", "64");
	EXPECT_EXIT(&r, 1, "run over budget");
	MC(&g, NULL, "gate", "--budget", fail_b, rep);
	EXPECT_EXIT(&g, 1, "gate of the same records");
	EXPECT_HAS(g.out, "FAIL cli_prog \"big\" (glibc", "gate's failing record");
	EXPECT_HAS(g.out, "peak_live_bytes 64.0 KiB > 16.0 KiB", "gate's message");
	EXPECT_HAS(g.out, "memcheck gate: 3 records, 1 failed", "gate's summary");
	h_run_free(&g);
	MC(&g, NULL, "gate", "--budget", pass_b, rep);
	/* the record itself says fail when the library checked the budget
	 * (MEMCHECK_BUDGET); the CLI's check alone passes it */
	ck_assert_msg(g.exit_code == 0 || strstr(g.out, "fail.budget:2"),
		      "gate with a looser budget: %s\n%s", h_status(&g), g.out);
	h_run_free(&g);
	h_run_free(&r);

	MC(&r, NULL, "run", "-a", "glibc", "--budget", pass_b, "--report", rep, "--", prog(),
	   "pass", "big", "64");
	EXPECT_EXIT(&r, 0, "run within budget");
	MC(&g, NULL, "gate", "--budget", pass_b, rep);
	EXPECT_EXIT(&g, 0, "gate within budget");
	EXPECT_HAS(g.out, "memcheck gate: 3 records, 0 failed", "gate's summary");
	h_run_free(&g);
	MC(&g, NULL, "compare", rep, rep);
	EXPECT_EXIT(&g, 0, "compare a report with itself");
	/* both have glibc, and the same file name: A and B */
	EXPECT_HAS(g.out, "  B:glibc  ", "compare's labels");
	EXPECT_HAS(g.out, "vs A:glibc", "compare's labels");
	EXPECT_HAS(g.out, "+0.0%", "no change against itself");
	h_run_free(&g);
	h_run_free(&r);
}
END_TEST

/* Relative limits: the other allocator against glibc in the same run, in
 * a stored report, and against a stored baseline. */
START_TEST(relative_budget)
{
	const char *other = other_allocator();
	if (!other)
		return;
	char text[256], list[64];
	snprintf(text, sizeof text, "[* @%s]\npeak_rss <= 0.5x\n", other);
	const char *tight = tmpfile_with("tight.budget", text);
	snprintf(text, sizeof text, "[* @%s]\npeak_rss <= 100x\n", other);
	const char *loose = tmpfile_with("loose.budget", text);
	snprintf(list, sizeof list, "glibc,%s", other);
	const char *rep = h_tmppath("rel.jsonl"), *base = h_tmppath("base.jsonl");
	struct h_run r, g;

	MC(&r, NULL, "run", "-a", list, "--budget", tight, "--report", rep, "--", prog(), "pass");
	EXPECT_EXIT(&r, 1, "half glibc's peak RSS");
	EXPECT_HAS(r.err, "peak_rss", "the relative limit's message");
	EXPECT_HAS(r.err, "0.5x", "the relative limit's message");
	h_run_free(&r);
	MC(&g, NULL, "gate", "--budget", tight, rep);
	EXPECT_EXIT(&g, 1, "gate, relative limit");
	char want[64];
	snprintf(want, sizeof want, "(%s, pid", other);
	EXPECT_HAS(g.out, want, "gate names the other allocator's records");
	ck_assert_msg(!strstr(g.out, "(glibc, pid"), "glibc's records fail:\n%s", g.out);
	h_run_free(&g);

	MC(&r, NULL, "run", "-a", list, "--budget", loose, "--report", rep, "--", prog(), "pass");
	EXPECT_EXIT(&r, 0, "within 100x of glibc");
	h_run_free(&r);
	MC(&g, NULL, "gate", "--budget", loose, rep);
	EXPECT_EXIT(&g, 0, "gate within 100x");
	h_run_free(&g);

	/* the baseline from a stored report: run glibc alone, then the
	 * other allocator against it, in run and in gate */
	MC(&r, NULL, "run", "-a", "glibc", "--report", base, "--", prog(), "pass");
	EXPECT_EXIT(&r, 0, "baseline run");
	h_run_free(&r);
	MC(&r, NULL, "run", "-a", other, "--budget", tight, "--baseline-file", base, "--report",
	   rep, "--", prog(), "pass");
	EXPECT_EXIT(&r, 1, "against a stored baseline");
	ck_assert_msg(table_rows(r.err, "glibc") == 0, "glibc ran:\n%s", r.err);
	h_run_free(&r);
	MC(&g, NULL, "gate", "--budget", tight, "--baseline-file", base, rep);
	EXPECT_EXIT(&g, 1, "gate against a stored baseline");
	h_run_free(&g);
	/* within the loose budget, in run and in gate; the tight one fails
	 * the same records in gate (the CLI's own check: their verdicts,
	 * judged under the loose one, pass) */
	MC(&r, NULL, "run", "-a", other, "--budget", loose, "--baseline-file", base, "--report",
	   rep, "--", prog(), "pass");
	EXPECT_EXIT(&r, 0, "against a stored baseline, loose");
	h_run_free(&r);
	MC(&g, NULL, "gate", "--budget", loose, "--baseline-file", base, rep);
	EXPECT_EXIT(&g, 0, "gate against a stored baseline, loose");
	h_run_free(&g);
	MC(&g, NULL, "gate", "--budget", tight, "--baseline-file", base, rep);
	EXPECT_EXIT(&g, 1, "gate against a stored baseline, tight");
	EXPECT_HAS(g.out, "0.5x glibc's", "the CLI's own check");
	h_run_free(&g);
	/* no baseline at all: a relative limit never passes silently */
	MC(&g, NULL, "gate", "--budget", loose, rep);
	EXPECT_EXIT(&g, 1, "gate without a baseline");
	EXPECT_HAS(g.out, "no baseline", "gate without a baseline");
	h_run_free(&g);
	/* compare: the same table from two stored reports */
	MC(&g, NULL, "compare", base, rep);
	EXPECT_EXIT(&g, 0, "compare");
	snprintf(want, sizeof want, "vs glibc");
	EXPECT_HAS(g.out, want, "compare's header");
	ck_assert_int_eq(table_rows(g.out, "glibc"), 2);
	ck_assert_int_eq(table_rows(g.out, other), 2);
	h_run_free(&g);
}
END_TEST

START_TEST(junit_structure)
{
	const char *j = h_tmppath("junit.xml");
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc,/nonexistent/libx.so", "--junit", j, "--", prog(),
	   "pass", "leak", "xml");
	EXPECT_EXIT(&r, 1, "junit run");
	h_run_free(&r);
	struct h_xml *root = junit_load(j);
	const struct h_xml *s = junit_suite(root, "glibc");
	ck_assert(s != NULL);
	ck_assert_int_eq(xcount(s, "tests"), 5);    /* command + 4 regions */
	ck_assert_int_eq(xcount(s, "failures"), 2); /* leaky, process */
	ck_assert_int_eq(xcount(s, "errors"), 0);
	const struct h_xml *c = junit_case(s, "leaky");
	ck_assert(c && h_xml_kid(c, "failure"));
	EXPECT_HAS(h_xml_attr(h_xml_kid(c, "failure"), "message"), "1000 bytes in 1 blocks definitely lost",
		   "failure message");
	ck_assert_str_eq(h_xml_attr(c, "classname"), "cli_prog");
	ck_assert(junit_case(s, "alloc_free") && !junit_case(s, "alloc_free")->nkids);
	/* every character of the name survives, the one XML forbids as '?' */
	ck_assert_msg(junit_case(s, "x<&>\"'\t?\xc3\xa9]]>") != NULL, "escaped name lost");
	const struct h_xml *skipped = junit_suite(root, "/nonexistent/libx.so");
	ck_assert(skipped && xcount(skipped, "skipped") == 1 && xcount(skipped, "tests") == 1);
	h_xml_free(root);

	/* a crash is an error of the command's testcase */
	MC(&r, NULL, "run", "-a", "glibc", "--junit", j, "--", prog(), "pass", "crash");
	EXPECT_EXIT(&r, 3, "crash");
	h_run_free(&r);
	root = junit_load(j);
	s = junit_suite(root, "glibc");
	ck_assert_int_eq(xcount(s, "errors"), 1);
	c = junit_case(s, "command");
	ck_assert(c && h_xml_kid(c, "error"));
	EXPECT_HAS(h_xml_attr(h_xml_kid(c, "error"), "message"), "killed by signal 11 (SIGSEGV)",
		   "error");
	h_xml_free(root);

	/* gate writes the same from a stored report, without a command */
	const char *rep = h_tmppath("j.jsonl");
	MC(&r, NULL, "run", "-a", "glibc", "--report", rep, "--", prog(), "leak");
	h_run_free(&r);
	MC(&r, NULL, "gate", "--junit", j, rep);
	EXPECT_EXIT(&r, 1, "gate --junit");
	h_run_free(&r);
	root = junit_load(j);
	s = junit_suite(root, "glibc");
	ck_assert_int_eq(xcount(s, "tests"), 2);
	ck_assert_int_eq(xcount(s, "failures"), 2);
	h_xml_free(root);
}
END_TEST

/* ---- valgrind -------------------------------------------------------- */

static const char *valgrind_path(void)
{
	return access("/usr/bin/valgrind", X_OK) == 0 ? "/usr/bin/valgrind" : NULL;
}

/* memcheck ARGS under valgrind: no error, no leak, the exit status it
 * would have anyway (99 is valgrind's, on an error). */
static void under_valgrind(int want, const char *const args[])
{
	const char *vg = valgrind_path();
	const char *argv[32] = { vg, "--leak-check=full", "--show-leak-kinds=all",
				 "--errors-for-leak-kinds=all", "--error-exitcode=99", cli() };
	size_t n = 6;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	struct h_run r;
	ck_assert(h_run(&r, argv, quiet, 0, NULL) == 0);
	EXPECT_EXIT(&r, want, args[0]);
	EXPECT_HAS(r.err, "ERROR SUMMARY: 0 errors", args[0]);
	EXPECT_HAS(r.err, "All heap blocks were freed -- no leaks are possible", args[0]);
	h_run_free(&r);
}

START_TEST(clean_under_valgrind)
{
	if (!valgrind_path()) {
		printf("note: valgrind not installed; skipping clean_under_valgrind\n");
		return;
	}
	const char *b = tmpfile_with("vg.budget", "[big]\npeak_live_bytes <= 16 KiB\n");
	const char *rep = h_tmppath("vg.jsonl"), *j = h_tmppath("vg.xml");
	const char *p = prog();
	const char *const run[] = { "run", "-a", "glibc,/nonexistent/x.so", "--budget", b,
				    "--repeat", "2", "--report", rep, "--junit", j, "--", p,
				    "pass", "leak", "big", "64", NULL };
	under_valgrind(1, run);
	const char *const gate[] = { "gate", "--budget", b, "--baseline-file", rep, "--junit", j,
				     rep, NULL };
	under_valgrind(1, gate);
	const char *const compare[] = { "compare", rep, rep, NULL };
	under_valgrind(0, compare);
	const char *const crash[] = { "run", "-a", "glibc", "--", p, "crash", NULL };
	under_valgrind(3, crash);
	const char *bad = tmpfile_with("vgbad.jsonl", "{\"name\":1}\n");
	const char *const badrep[] = { "compare", rep, bad, NULL };
	under_valgrind(2, badrep);
	const char *const usage[] = { "run", "-a", "nope", "--", p, NULL };
	under_valgrind(2, usage);
	/* Suppression files: read, passed on, generated; a bad one. */
	const char *supp = tmpfile_with("vg.supp", "{\n   mine\n   Memcheck:Leak\n"
					"   fun:no_such_function\n}\n");
	const char *gen = h_tmppath("vggen.supp");
	const char *const suppressed[] = { "run", "-a", "glibc", "--suppressions", supp,
					   "--gen-suppressions", gen, "--", p, "leak", NULL };
	under_valgrind(1, suppressed);
	const char *badsupp = tmpfile_with("vgbad.supp", "{\n   x\n   Memcheck:Leak\n");
	const char *const badsupps[] = { "run", "--suppressions", badsupp, "--", p, NULL };
	under_valgrind(2, badsupps);
	/* --valgrind: the CLI's own memory while it runs valgrind (which
	 * the outer valgrind does not follow). */
	const char *const vgmode[] = { "run", "--valgrind", "--", p, "leak", NULL };
	under_valgrind(1, vgmode);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("cli", 30);
	tcase_add_test(tc, help_and_version);
	tcase_add_test(tc, pass_exits_0);
	tcase_add_test(tc, leak_exits_1);
	tcase_add_test(tc, budget_exits_1);
	tcase_add_test(tc, budget_failure_beats_command_exit);
	tcase_add_test(tc, crash_exits_3);
	tcase_add_test(tc, command_failure_exits_3);
	tcase_add_test(tc, bad_usage_exits_2);
	tcase_add_test(tc, bad_budget_exits_2);
	tcase_add_test(tc, bad_report_exits_2);
	tcase_add_test(tc, missing_allocator_skipped);
	tcase_add_test(tc, object_that_does_not_serve_malloc_is_an_error);
	tcase_add_test(tc, table_shows_each_allocator);
	tcase_add_test(tc, environment_of_the_command);
	tcase_add_test(tc, output_passes_through);
	tcase_add_test(tc, children_and_repeated_regions);
	tcase_add_test(tc, repeat_reports_medians);
	tcase_add_test(tc, report_then_gate_agree);
	tcase_add_test(tc, relative_budget);
	tcase_add_test(tc, junit_structure);
	TCase *vg = h_tcase("valgrind", 120);
	tcase_add_test(vg, clean_under_valgrind);
	return h_run_suite(NULL);
}
