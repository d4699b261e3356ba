/*
 * test_cli.c - the memcheck command (build/memcheck, tools/): exit status
 * for every outcome, the table, allocators skipped with their package,
 * --report read back by gate and compare, --junit checked by the
 * harness's strict XML reader, the command's output passed through, and
 * the CLI itself clean under valgrind.  The command under test is
 * tests/prog/cli_prog.
 *
 * A command run once is a row (run.cli: the command and its options;
 * prog and args: the command it runs; file: a budget it reads): its exit
 * status, what stdout and stderr hold, a callback for the table's rows
 * and the records.  Runs that read what an earlier one wrote (run, then
 * gate and compare on its report), or that pick another installed
 * allocator, are tests calling H_EXEC with .cli.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* ---- helpers --------------------------------------------------------- */

static const char *cli(void)
{
	return h_env("%s/memcheck", h_build());
}

static const char *prog(void)
{
	return h_prog("cli_prog");
}

/* memcheck ARGS..., the words as given (MEMCHECK_TEXT=none). */
#define MC(x, ...) H_EXEC((x), .cli = H_LIST(__VA_ARGS__))

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

/* ---- one run each: rows --------------------------------------------- */

/* cli_prog's table rows under glibc: alloc_free and process. */
H_CHECK(two_glibc_rows)
{
	ck_assert_msg(table_rows(x->r.err, "glibc") == 2, "%s: expected rows for alloc_free and "
		      "process under glibc:\n%s", x->label, x->r.err);
}

/* The budget line that failed, by the file's path. */
H_CHECK(budget_line_3_failed)
{
	EXPECT_HAS(x->r.err, h_env("%s:3: peak_live_bytes 64.0 KiB > 16.0 KiB", x->file),
		   x->label);
}

/* Every bad line of the budget, and the command not run. */
H_CHECK(bad_budget_lines)
{
	EXPECT_HAS(x->r.err, h_env("%s:2: unknown key 'peak_rs' (did you mean peak_rss?)", x->file),
		   x->label);
	EXPECT_HAS(x->r.err, h_env("%s:4: unterminated section", x->file), x->label);
	ck_assert_msg(!strstr(x->r.out, "hello"), "%s: the command ran with a bad budget",
		      x->label);
}

/* Named allocators are looked for in MEMCHECK_ALLOCATOR_DIR: an empty
 * directory makes every one missing. */
H_SETUP(no_allocator_installed)
{
	static const char *env[2];
	const char *dir = h_tmppath("nolibs");
	ck_assert(mkdir(dir, 0700) == 0);
	env[0] = h_env("MEMCHECK_ALLOCATOR_DIR=%s", dir);
	run->env = env;
	return true;
}

H_CHECK(glibc_rows_alone)
{
	ck_assert_int_eq(table_rows(x->r.err, "glibc"), 2);
	ck_assert_int_eq(table_rows(x->r.err, "mimalloc"), 0);
}

/* Issue 14, item 12: an object that does not serve malloc made a column
 * of glibc's figures under its name, and exit 0.  Not a shared object
 * (ld.so ignores it), or one with no malloc (zlib). */
H_SETUP(zlib)
{
	static const char *words[4];
	const char *zlib = h_allocator_so("libz.so.1");
	if (!zlib) {
		printf("note: no libz.so.1; its case skipped\n");
		return false;
	}
	memcpy(words, (const char *const[]){ "run", "-a", h_env("glibc,%s", zlib), NULL },
	       sizeof words);
	run->cli = words;
	return true;
}

H_CHECK(no_column_for_the_object)
{
	const char *list = strstr(x->label, "glibc,");
	ck_assert(list != NULL);
	char object[256];
	ck_assert(sscanf(list + 6, "%255s", object) == 1);
	ck_assert_int_eq(table_rows(x->r.err, object), 0);
}

H_CHECK(each_allocator_once_or_thrice)
{
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *name = h_allocators[i].name, *soname = h_allocators[i].soname;
		bool installed = !soname || h_allocator_so(soname);
		int rows = table_rows(x->r.err, name);
		ck_assert_msg(rows == (installed ? 2 : 0), "%s: %d table rows, expected %d:\n%s",
			      name, rows, installed ? 2 : 0, x->r.err);
		/* run once, or three times when its records say it gives
		 * memory back on a timer (-n auto) */
		bool timed = false;
		for (size_t k = 0; k < x->rep.n; k++)
			if (!strcmp(h_str(x->rep.rec[k], "allocator"), name)) {
				uint64_t ms = h_u64(x->rep.rec[k], "timed_purge_ms");
				timed |= ms > 0 && ms != H_NULL && ms != H_MISSING;
			}
		char runs[64];
		snprintf(runs, sizeof runs, "  %-14s %s", name,
			 !installed ? "skipped" : timed ? "3 runs" : "1 run,");
		EXPECT_HAS(x->r.err, runs, "runs summary");
	}
}

H_CHECK(three_records_of_each)
{
	ck_assert_int_eq(table_rows(x->r.err, "glibc"), 2);
	ck_assert_uint_eq(h_record_count(&x->rep, "alloc_free"), 3);
	ck_assert_uint_eq(h_record_count(&x->rep, "process"), 3);
}

/* memcheck run -a glibc OPTIONS -- cli_prog ARGS */
#define RUN(...) .allocators = H_ONCE, .run = { .cli = H_LIST("run", "-a", "glibc", ##__VA_ARGS__)
/* memcheck WORDS, as they are */
#define WORDS(...) .allocators = H_ONCE, .run = { .cli = H_LIST(__VA_ARGS__), .no_report = true }
/* bad usage: exit 2, with a message that says memcheck's name and, where
 * given, why */
#define USAGE(...) WORDS(__VA_ARGS__), .exit = 2
#define SAYS(...) .err = H_LIST("memcheck", ##__VA_ARGS__)
#define ARGS(...) .prog = "cli_prog", .args = H_LIST(__VA_ARGS__) }
#define BIG_16K "[big]\npeak_live_bytes <= 16 KiB\n"

/* The leak suppressed by the row's file, which the record names by the
 * path the user gave (MEMCHECK_SUPPRESSIONS_NAMES), not by memcheck
 * run's copy. */
H_CHECK(supp_named_as_given)
{
	const struct h_json *last = x->rep.n ? x->rep.rec[x->rep.n - 1] : NULL;
	ck_assert_msg(last, "%s: no record", x->label);
	const struct h_json *used = h_json_at(h_json_get(last, "suppressions"), 0);
	const char *file = used ? h_str(used, "file") : NULL;
	ck_assert_msg(file && !strcmp(file, x->file), "%s: the suppression's file %s, expected %s",
		      x->label, file ? file : "(none)", x->file);
	ck_assert_msg(h_count(last, "suppressed", "blocks") >= 1, "%s: nothing suppressed", x->label);
}

static const struct h_case cases[] = {
	/* help and version */
	{ "--help", WORDS("--help"), .out = H_LIST("usage: memcheck COMMAND") },
	{ "help run", WORDS("help", "run"), .out = H_LIST("--allocators") },
	{ "run --help", WORDS("run", "--help"), .out = H_LIST("--allocators") },
	{ "help compare", WORDS("help", "compare"), .out = H_LIST("A.jsonl B.jsonl") },
	{ "compare --help", WORDS("compare", "--help"), .out = H_LIST("A.jsonl B.jsonl") },
	{ "help gate", WORDS("help", "gate"), .out = H_LIST("--baseline-file") },
	{ "gate --help", WORDS("gate", "--help"), .out = H_LIST("--baseline-file") },
	{ "--version", WORDS("--version"), .out = H_LIST("memcheck 0.") },
	/* valgrind's command line probed as valgrind answers (exit 2 for
	 * each before session 37): AX_VALGRIND_CHECK's configure asks
	 * --tool=memcheck --help, and enables only the tools that answer */
	{ "valgrind's probe of its memcheck tool", WORDS("--tool=memcheck", "--help"),
	  .out = H_LIST("usage: memcheck COMMAND") },
	{ "valgrind's probe of another tool", USAGE("--tool=helgrind", "--help"),
	  SAYS("--tool=helgrind: only valgrind's memcheck tool") },
	{ "valgrind's --version after an option", WORDS("-q", "--version"),
	  .out = H_LIST("valgrind-3.19.0 (memcheck 0.") },

	/* exit status */
	{ "clean run", RUN(), ARGS("pass"), .stdout_is = "", .check = two_glibc_rows,
	  .err = H_LIST("alloc_free", "memcheck: exit 0:") },
	{ "leaking run", RUN(), ARGS("pass", "leak"), .exit = 1,
	  .err = H_LIST("1000 bytes in 1 blocks definitely lost", "FAIL", "memcheck: exit 1:") },
	{ "over budget", RUN("--budget", H_FILE), ARGS("pass", "big", "64"), .exit = 1,
	  .file = "# regions named big\n" BIG_16K, .check = budget_line_3_failed },
	{ "within budget", RUN("--budget", H_FILE), ARGS("pass", "big", "8"),
	  .file = "# regions named big\n" BIG_16K },
	/* A test suite whose test fails because of a budget exits non-zero:
	 * that is the budget's failure, 1, not the command's, 3.  The
	 * program itself fails when memcheck_end says the region failed
	 * (needs the library's own budget check: MEMCHECK_BUDGET) ... */
	{ "a suite failing on its budget", RUN("--budget", H_FILE), ARGS("strict", "big", "64"),
	  .file = BIG_16K, .exit = 1 },
	/* ... or exits non-zero in the same run as a region over budget */
	{ "non-zero exit with a region over budget", RUN("--budget", H_FILE),
	  ARGS("big", "64", "exit", "5"), .file = BIG_16K, .exit = 1 },
	/* leaks count the same way */
	{ "a suite failing on a leak", RUN(), ARGS("strict", "leak"), .exit = 1 },
	{ "crash", RUN(), ARGS("pass", "crash"), .exit = 3,
	  .err = H_LIST("killed by signal 11 (SIGSEGV)") },
	/* a signal beats a leak and a budget */
	{ "crash after failing regions", RUN("--budget", H_FILE),
	  ARGS("leak", "big", "64", "crash"), .file = "peak_live_bytes <= 1 KiB\n", .exit = 3,
	  .err = H_LIST("SIGSEGV") },
	{ "command exits 4, memcheck content", RUN(), ARGS("pass", "exit", "4"), .exit = 3,
	  .err = H_LIST("exit status 4") },
	/* a run whose processes wrote no record is not "all clean" (main
	 * said "exit 0: 0 region records, all clean and within budget") */
	{ "nothing measured, nothing clean", RUN(), .prog = "/bin/true" },
	  .err = H_LIST("wrote no report", "exit 0: no region record: nothing was measured"),
	  .no_err = H_LIST("all clean") },
	/* a command that cannot be started is bad usage */
	{ "command not found", RUN(), .prog = "/nonexistent/command" }, .exit = 2,
	  .err = H_LIST("cannot run /nonexistent/command: No such file") },

	/* bad usage */
	{ "no command", USAGE(NULL), SAYS() },
	{ "unknown command", USAGE("frobnicate"), SAYS() },
	{ "run, nothing to run", USAGE("run"), SAYS() },
	{ "run --, nothing to run", USAGE("run", "--"), SAYS() },
	{ "run --bogus", USAGE("run", "--bogus", "--", "cli_prog"), SAYS() },
	{ "run --repeat 0", USAGE("run", "--repeat", "0", "--", "cli_prog"), SAYS() },
	{ "run --repeat x", USAGE("run", "--repeat", "x", "--", "cli_prog"), SAYS() },
	{ "run -a glibcc", USAGE("run", "-a", "glibcc", "--", "cli_prog"),
	  SAYS("unknown allocator 'glibcc'") },
	{ "run --budget without its file", USAGE("run", "-a", "glibc", "--budget"), SAYS() },
	{ "a budget against glibc, another baseline",
	  USAGE("run", "--baseline", "jemalloc", "--budget", H_FILE, "--", "cli_prog"),
	  .file = "baseline glibc\n", SAYS("compare with glibc") },
	{ "compare, one report", USAGE("compare", "one.jsonl"), SAYS() },
	{ "compare, three reports", USAGE("compare", "a", "b", "c"), SAYS() },
	{ "gate, no report", USAGE("gate"), SAYS() },
	{ "gate --bogus", USAGE("gate", "--bogus", "x.jsonl"), SAYS() },
	{ "help on no command", USAGE("help", "nope"), SAYS() },
	/* numbers past their type (harden46): report's --run 4294967297
	 * was cast to int first and taken as run 1; oom's seconds took inf
	 * and 1e400, a wait's timespec made from them (exit 0 or a run on
	 * main) */
	{ "report --run 2^32+1", USAGE("report", "--run", "4294967297", "--html", "x.html", "r"),
	  SAYS("--run 4294967297: expected a run from 1 to 1000") },
	{ "oom --run-timeout inf", USAGE("oom", "--run-timeout", "inf", "--", "/bin/true"),
	  SAYS("--run-timeout inf: expected seconds, more than 0 and at most") },
	{ "oom --timeout 1e400", USAGE("oom", "--timeout", "1e400", "--", "/bin/true"),
	  SAYS("--timeout 1e400: expected seconds") },
	/* The processes' budget is a copy the command owns (harden47): the
	 * user's file removed while they ran failed their regions with
	 * "cannot open" (exit 23) on main, while the command said "all
	 * clean".  Four allocators, each run after the file is gone. */
	{ "the budget file removed mid-run: the runs keep theirs", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-n", "1", "-a", "glibc,mimalloc,jemalloc,tcmalloc",
				 "--budget", H_FILE),
		   ARGS("rm", H_FILE, "big", "8", "pass"), .file = BIG_16K,
	  .err = H_LIST("memcheck: exit 0:", "all clean"),
	  .no_err = H_LIST("cannot open", "exit status 23", "not applied") },
	/* ... and a process that could not read its budget is never clean:
	 * its "cannot open" began with the budget's name, as a broken
	 * rule's message does, and the command took it out as one of the
	 * rules it checks again (exit 0, "all clean", on main) */
	{ "the processes' budget removed: not clean", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-n", "1", "-a", "glibc,mimalloc,jemalloc,tcmalloc",
				 "--budget", H_FILE),
		   ARGS("rm-budget", "big", "8", "pass"), .file = BIG_16K, .exit = 1,
	  .err = H_LIST("budget not applied: ", "cannot open its copy", "memcheck: exit 1:"),
	  .no_err = H_LIST("all clean") },
	/* the same for --suppressions: the processes read a copy the
	 * command owns (drivers48; the run failed, "suppression file not
	 * read", before), the records naming the user's file */
	{ "the suppressions removed mid-run: the runs keep theirs",
	  RUN("--suppressions", H_FILE), ARGS("rm", H_FILE, "leak"),
	  .file = "{\n   cli_prog's leak\n   Memcheck:Leak\n   fun:malloc\n   fun:leak\n}\n",
	  .err = H_LIST("memcheck: exit 0:", "all clean"), .no_err = H_LIST("not read"),
	  .check = supp_named_as_given },
	/* ... and a process that could not read its copy is never clean */
	{ "the processes' suppressions removed: not clean",
	  RUN("--suppressions", H_FILE), ARGS("rm-supp", "leak"), .exit = 1,
	  .file = "{\n   cli_prog's leak\n   Memcheck:Leak\n   fun:malloc\n   fun:leak\n}\n",
	  .err = H_LIST("suppression file not read", "memcheck: exit 1:"),
	  .no_err = H_LIST("all clean") },
	/* an output file that cannot be written, refused before any run
	 * (harden47: main ran every allocator, then said "cannot write") */
	{ "run --report a directory", USAGE("run", "--report", "/tmp", "--", "cli_prog", "pass"),
	  SAYS("--report /tmp: a directory: expected a file memcheck can write"),
	  .no_err = H_LIST("running under") },
	{ "run --junit in no directory",
	  USAGE("run", "--junit", "/nonexistent/no/such/dir/x.xml", "--", "cli_prog", "pass"),
	  SAYS("its directory does not exist: expected a file"), .no_err = H_LIST("running under") },
	{ "oom --report a directory", USAGE("oom", "--report", "/tmp", "--", "cli_prog", "pass"),
	  SAYS("--report /tmp: a directory: expected a file"),
	  .no_err = H_LIST("allocation calls") },
	{ "bad budget file", RUN("--budget", H_FILE), ARGS("out"), .exit = 2,
	  .file = "peak_live_bytes <= 1 KiB\npeak_rs <= 1 MiB\n\n[unterminated\n",
	  .check = bad_budget_lines },

	/* allocators */
	{ "a missing allocator path", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-a", "glibc,/nonexistent/libfoo.so"), ARGS("pass"),
	  .err = H_LIST("skipping /nonexistent/libfoo.so: No such file") },
	{ "every allocator but glibc missing", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-a", "glibc,mimalloc,jemalloc,tcmalloc,tcmalloc-full"),
		   .prog = "cli_prog", .args = H_LIST("pass") },
	  .setup = no_allocator_installed, .check = glibc_rows_alone,
	  .err = H_LIST("Debian package libmimalloc2.0", "Debian package libjemalloc2",
			"Debian package libtcmalloc-minimal4", "Debian package libgoogle-perftools4",
			"skipping mimalloc is not installed") },
	/* hostile input (harden41's sweep of every MEMCHECK_* variable):
	 * a budget file that never ends, read by the library at start-up,
	 * kept the program from starting at all (killed after the run's
	 * time on main before session 41); now said, with the file's name
	 * and what was wrong, every region failed as with any bad budget,
	 * the program's output and work as bare, under every allocator */
	{ "MEMCHECK_BUDGET a device that never ends: said, the program runs",
	  .run = { .prog = "cli_prog", .args = H_LIST("out", "pass"), .flags = H_PRELOAD | H_EXITCODE,
		   .env = H_LIST("MEMCHECK_BUDGET=/dev/zero") },
	  .exit = 23, .stdout_is = "hello stdout\n",
	  .err = H_LIST("hello stderr", "MEMCHECK_BUDGET: /dev/zero: larger than 16 MiB: not a budget file?") },
	/* harden42's sweep of the variables naming files: valgrind's XML
	 * written to a full disk (/dev/full) failed unsaid on main, where
	 * MEMCHECK_REPORT's and MEMCHECK_LOG's failures are said */
	{ "MEMCHECK_VALGRIND_XML on a full disk: said, the program runs",
	  .run = { .prog = "cli_prog", .args = H_LIST("out", "pass"), .flags = H_PRELOAD | H_EXITCODE,
		   .env = H_LIST("MEMCHECK_VALGRIND_XML=/dev/full") },
	  .exit = 0, .stdout_is = "hello stdout\n",
	  .err = H_LIST("hello stderr", "cannot write to MEMCHECK_VALGRIND_XML=/dev/full: No space "
			"left on device; this process's XML is not whole") },
	/* a missing baseline cannot be skipped */
	{ "missing baseline", RUN("--baseline", "mimalloc"), ARGS("pass"), .exit = 2,
	  .setup = no_allocator_installed, .err = H_LIST("libmimalloc2.0") },
	{ "not a shared object", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-a", "glibc,/etc/passwd"), .prog = "cli_prog",
		   .args = H_LIST("pass") },
	  .exit = 2, .err = H_LIST("/etc/passwd: not an ELF file: expected the path of an allocator's"),
	  .check = no_column_for_the_object },
	{ "a shared object without malloc", .allocators = H_ONCE,
	  .run = { .prog = "cli_prog", .args = H_LIST("pass") }, .setup = zlib,
	  .exit = 2, .err = H_LIST("does not serve malloc"), .check = no_column_for_the_object },
	/* the default: all four */
	{ "default allocators", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run"), .prog = "cli_prog", .args = H_LIST("pass") },
	  .err = H_LIST("vs glibc"), .check = each_allocator_once_or_thrice },
	{ "output passes through", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-a", "glibc,/nonexistent/x.so"), .prog = "cli_prog",
		   .args = H_LIST("out", "pass") },
	  /* nothing of memcheck's on stdout; the table on stderr */
	  .stdout_is = "hello stdout\n", .err = H_LIST("hello stderr\n", "alloc_free") },
	/* the child ended a region of its own: its process region is
	 * folded into it, not a row of its own */
	{ "children and repeated regions", RUN(), ARGS("iter", "3", "fork", "pass"),
	  .err = H_LIST("  iter #3  ", "  alloc_free #2  "), .no_err = H_LIST("  process #2  ") },
	/* a command that drops LD_PRELOAD: nothing measured, and said */
	{ "a command that drops LD_PRELOAD", RUN(), .prog = "/usr/bin/env",
	  .args = H_LIST("-u", "LD_PRELOAD", "/bin/true") }, .err = H_LIST("wrote no report") },
	{ "--repeat 3", RUN("--repeat", "3"), ARGS("pass"), .check = three_records_of_each,
	  .err = H_LIST("each figure is the median of an allocator's runs", "3 runs, wall ") },
};

/* ---- several runs each: tests ---------------------------------------- */

/* Without --keep-going the first crash stops the rest; with it they
 * run. */
START_TEST(crash_stops_the_other_allocators)
{
	const char *other = other_allocator();
	if (!other)
		return;
	const char *list = h_env("glibc,%s", other);
	const char *j = h_tmppath("stop.xml");
	struct h_res x;
	MC(&x, "run", "-a", list, "--junit", j, "--", prog(), "pass", "crash-under", "glibc");
	h_expect_exit(&x, 3);
	ck_assert_int_eq(table_rows(x.r.err, other), 0);
	EXPECT_HAS(x.r.err, "not run", "runs summary");
	h_res_free(&x);
	struct h_xml *root = junit_load(j);
	const struct h_xml *s = junit_suite(root, other);
	ck_assert_msg(s && xcount(s, "skipped") == 1, "%s not skipped in JUnit", other);
	ck_assert_int_eq(xcount(junit_suite(root, "glibc"), "errors"), 1);
	h_xml_free(root);
	MC(&x, "run", "-k", "-a", list, "--", prog(), "pass", "crash-under", "glibc");
	h_expect_exit(&x, 3);
	ck_assert_msg(table_rows(x.r.err, other) == 2, "no %s rows with --keep-going:\n%s", other,
		      x.r.err);
	h_res_free(&x);
}
END_TEST

/* gate, with a bad budget file and one that cannot be read */
START_TEST(gate_bad_budget_exits_2)
{
	const char *b = tmpfile_with("bad.budget", "peak_live_bytes <= 1 KiB\n"
				     "peak_rs <= 1 MiB\n\n[unterminated\n");
	const char *rep = tmpfile_with("r.jsonl", "{\"name\":\"r\",\"pid\":1,\"program\":\"p\","
				       "\"allocator\":\"glibc\",\"verdict\":\"pass\"}\n");
	struct h_res x;
	MC(&x, "gate", "--budget", b, rep);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, h_env("%s:2: unknown key", b), "gate");
	h_res_free(&x);
	MC(&x, "gate", "--budget", "/nonexistent/x.budget", rep);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, "/nonexistent/x.budget", "gate, missing budget file");
	h_res_free(&x);
}
END_TEST

/* A failed record written at the exit of a process that exited non-zero
 * on its own (exit_status 3): listed as EXITED, not counted (gate exited
 * 1 before session 48); a failed one that exited 0 still fails. */
START_TEST(gate_own_exit_not_counted)
{
	const char *rep = tmpfile_with("own.jsonl",
				       "{\"name\":\"process\",\"pid\":7,\"program\":\"tool\","
				       "\"allocator\":\"glibc\",\"exit_status\":3,\"verdict\":\"fail\","
				       "\"violations\":[\"40 bytes in 1 blocks definitely lost\"]}\n"
				       "{\"name\":\"process\",\"pid\":6,\"program\":\"test\","
				       "\"allocator\":\"glibc\",\"exit_status\":0,\"verdict\":\"pass\"}\n");
	struct h_res x;
	MC(&x, "gate", rep);
	h_expect_exit(&x, 0);
	EXPECT_HAS(x.r.out, "EXITED 3 tool \"process\" (glibc, pid 7): 40 bytes", "gate");
	EXPECT_HAS(x.r.out, "2 records, 0 failed, 1 more in a process that exited non-zero on its own",
		   "gate");
	h_res_free(&x);
	const char *zero = tmpfile_with("zero.jsonl",
					"{\"name\":\"process\",\"pid\":7,\"program\":\"tool\","
					"\"allocator\":\"glibc\",\"exit_status\":0,\"verdict\":\"fail\"}\n");
	MC(&x, "gate", zero);
	h_expect_exit(&x, 1);
	EXPECT_HAS(x.r.out, "FAIL tool \"process\" (glibc, pid 7): verdict fail", "gate");
	h_res_free(&x);
}
END_TEST

/* The views agree with the exit status: a child that loses 40 bytes and
 * exits 3 on its own, its parent going on to exit 0 (a test expecting
 * a tool to fail): run exits 0, and its table shows the child's record
 * as "exited 3", --junit as a <skipped> that names the leak (not a
 * <failure>), --html as "exited 3" (on main all three said FAIL while
 * the run exited 0); gate --junit on a stored report the same. */
START_TEST(own_exit_views)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *j = h_tmppath("own.xml"), *html = h_tmppath("own.html");
	struct h_res x;
	MC(&x, "run", "-a", h_allocators[_i].name, "--junit", j, "--html", html, "--", prog(),
	   "pass", "child-lose", "3");
	h_expect_exit(&x, 0);
	const char *t = strstr(x.r.err, "\nprogram ");
	ck_assert_msg(t != NULL, "no table:\n%s", x.r.err);
	EXPECT_HAS(t, "  exited 3", "the child's row");
	ck_assert_msg(!strstr(t, "  FAIL"), "a row says FAIL while run exits 0:\n%s", t);
	EXPECT_HAS(t, "    40 bytes in 1 blocks definitely lost", "the child's violation");
	h_res_free(&x);
	struct h_xml *root = junit_load(j);
	const struct h_xml *s = junit_suite(root, h_allocators[_i].name);
	ck_assert(s != NULL);
	ck_assert_int_eq(xcount(s, "failures"), 0);
	ck_assert_int_eq(xcount(s, "errors"), 0);
	ck_assert_int_eq(xcount(s, "skipped"), 1);
	const struct h_xml *c = junit_case(s, "process"), *k = c ? h_xml_kid(c, "skipped") : NULL;
	ck_assert_msg(k != NULL, "the child's process record is not a <skipped>");
	EXPECT_HAS(h_xml_attr(k, "message"), "not counted: the process exited 3 on its own: ",
		   "skipped message");
	EXPECT_HAS(h_xml_attr(k, "message"), "40 bytes in 1 blocks definitely lost",
		   "skipped message");
	h_xml_free(root);
	char *page = h_read_file(html, NULL);
	ck_assert(page != NULL);
	EXPECT_HAS(page, "<tr class=\"exited\">", "html");
	EXPECT_HAS(page, "<td>exited 3", "html");
	ck_assert_msg(!strstr(page, "<tr class=\"fail\">"), "html: a FAIL row while run exits 0");
	free(page);

	const char *rep = tmpfile_with("own.jsonl",
				       "{\"name\":\"process\",\"pid\":7,\"program\":\"tool\","
				       "\"allocator\":\"glibc\",\"exit_status\":3,\"verdict\":\"fail\","
				       "\"violations\":[\"40 bytes in 1 blocks definitely lost\"]}\n");
	MC(&x, "gate", "--junit", j, rep);
	h_expect_exit(&x, 0);
	h_res_free(&x);
	root = junit_load(j);
	s = junit_suite(root, "glibc");
	ck_assert(s && xcount(s, "failures") == 0 && xcount(s, "skipped") == 1);
	h_xml_free(root);
}
END_TEST

/* memcheck run under `ulimit -v` (soft and hard one, as a CI job may set
 * it): the program's allocations failed under a limit that counted
 * memcheck's own mappings too, and run says so once, from the records'
 * limit_shortfall (nothing said on main); without a limit, nothing. */
START_TEST(limit_shortfall_said)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	struct h_res x;
	const char *cmd = h_env("ulimit -v 300000 && exec %s run -a %s -- %s inherited", cli(),
				h_allocators[_i].name, h_prog("plain_rlimit"));
	H_EXEC(&x, .prog = "/bin/sh", .args = H_LIST("-c", cmd), .no_report = true, .text = "");
	h_expect_exit(&x, 0);
	EXPECT_HAS(x.r.err, ": allocations failed under RLIMIT_AS of 293.0 MiB, which "
		   "counted memcheck's own mappings too", "run under ulimit -v");
	h_res_free(&x);
	MC(&x, "run", "-a", h_allocators[_i].name, "--", h_prog("plain_rlimit"), "none");
	h_expect_exit(&x, 0);
	ck_assert_msg(!strstr(x.r.err, "allocations failed under"), "said without a limit:\n%s",
		      x.r.err);
	h_res_free(&x);
	/* gate on a stored record says it too */
	const char *rep = tmpfile_with("short.jsonl",
				       "{\"name\":\"process\",\"pid\":7,\"program\":\"t\","
				       "\"allocator\":\"glibc\",\"failed_allocs\":3,\"limit_shortfall\":"
				       "{\"resource\":\"RLIMIT_DATA\",\"limit\":314572800,"
				       "\"memcheck_bytes\":12582912},\"verdict\":\"pass\"}\n");
	MC(&x, "gate", rep);
	h_expect_exit(&x, 0);
	EXPECT_HAS(x.r.out, "memcheck gate: 1 record: allocations failed under RLIMIT_DATA of "
		   "300.0 MiB, which counted memcheck's own mappings too (up to 12.0 MiB", "gate");
	h_res_free(&x);
}
END_TEST

/* A record its writer cut short (a pipe's bound, a process killed as
 * it wrote), and another process's record appended after it on the
 * same line: the readers say which line holds the cut record and read
 * the whole one (before session 38: a parse error at a column, the
 * whole record lost with it). */
START_TEST(cut_record_said)
{
	static const char good[] = "{\"name\":\"r\",\"pid\":1,\"program\":\"p\","
				   "\"allocator\":\"glibc\",\"suppressions\":[{\"name\":\"s\","
				   "\"file\":\"f\"}],\"verdict\":\"pass\"}\n";
	char text[1024];
	/* the cut record ends inside its suppressions' list */
	snprintf(text, sizeof text, "%s%.*s%s", good, 60, good, good);
	const char *f = tmpfile_with("cut.jsonl", text);
	struct h_res x;
	MC(&x, "gate", f);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, h_env("%s:2: column ", f), "gate");
	EXPECT_HAS(x.r.err, ": a record cut short after 60 bytes (its writer stopped", "gate");
	EXPECT_HAS(x.r.err, "; the record after it on the line is read", "gate");
	ck_assert_msg(!strstr(x.r.err, h_env("%s:3:", f)), "gate: %s", x.r.err);
	h_res_free(&x);
	/* cut at the file's end: said, nothing read after it */
	snprintf(text, sizeof text, "%s%.*s\n", good, 30, good);
	f = tmpfile_with("cut-end.jsonl", text);
	MC(&x, "compare", f, f);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, h_env("%s:2: column 31: ", f), "compare");
	EXPECT_HAS(x.r.err, ": a record cut short after 30 bytes", "compare");
	ck_assert_msg(!strstr(x.r.err, "the record after it"), "compare: %s", x.r.err);
	h_res_free(&x);
	/* a whole record, and after it on its line another writer's record
	 * or damage: the whole one is read, not called cut short (before
	 * session 44: "a record cut short after 75 bytes" of a whole record,
	 * and a line with damage after a record read as no record while the
	 * same file cut right after the record's brace read it:
	 * fuzz_records) */
	static const char one[] = "{\"name\":\"r\",\"pid\":1,\"program\":\"p\","
				  "\"allocator\":\"glibc\",\"verdict\":\"pass\"}";
	snprintf(text, sizeof text, "%s%s\n%sjunk\n", one, one, one);
	f = tmpfile_with("joined.jsonl", text);
	MC(&x, "gate", f);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, h_env("%s:1: column 72: expected the end of the line after the "
				  "object, got '{'; the record before it is read; the record after "
				  "it on the line is read\n", f), "gate");
	EXPECT_HAS(x.r.err, h_env("%s:2: column 72: expected the end of the line after the "
				  "object, got 'j'; the record before it is read\n", f), "gate");
	ck_assert_msg(!strstr(x.r.err, "cut short"), "gate: %s", x.r.err);
	h_res_free(&x);
	/* a NUL byte after a whole record (a crash's zeros where its line
	 * end was): the record before it read, and said so */
	char nul[256];
	int n = snprintf(nul, sizeof nul, "%s", one);
	memcpy(nul + n, "\0\0\n", 3);
	f = h_tmppath("nul.jsonl");
	FILE *w = fopen(f, "w");
	ck_assert(w && fwrite(nul, 1, (size_t)n + 3, w) == (size_t)n + 3 && fclose(w) == 0);
	MC(&x, "gate", f);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, h_env("%s:1: column 72: expected JSON text, got a NUL byte; the "
				  "line's records before it are read\n", f), "gate");
	h_res_free(&x);
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
	const char *want = h_env("%s:4: column 19: expected an unsigned integer", bad);
	struct h_res x;
	MC(&x, "compare", a, bad);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, want, "compare");
	h_res_free(&x);
	MC(&x, "gate", bad);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, want, "gate");
	h_res_free(&x);
	const char *b = tmpfile_with("ok.budget", "allocs <= 10\n");
	MC(&x, "gate", "--budget", b, "--baseline-file", bad, a);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, want, "gate --baseline-file");
	h_res_free(&x);
	MC(&x, "run", "-a", "glibc", "--baseline-file", bad, "--", prog(), "pass");
	h_expect_exit(&x, 2);
	h_res_free(&x);
	/* a report that is not there, or holds no record */
	MC(&x, "gate", "/nonexistent/r.jsonl");
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, "/nonexistent/r.jsonl", "gate, missing report");
	h_res_free(&x);
	const char *empty = tmpfile_with("empty.jsonl", "\n");
	MC(&x, "gate", empty);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, "no memcheck records", "gate, empty report");
	h_res_free(&x);
	MC(&x, "compare", a, "/nonexistent/b.jsonl");
	h_expect_exit(&x, 2);
	h_res_free(&x);
}
END_TEST

/* The dynamic loader splits LD_PRELOAD at spaces and colons: a
 * libmemcheck.so (or an allocator) whose path has one cannot be
 * preloaded, and the command says so instead of running the program
 * unmeasured (ld.so's complaint and "wrote no report" were all a user
 * saw).  A link to the build's library in a directory named with one. */
START_TEST(unpreloadable_paths_refused)
{
	static const char *const dirs[] = { "with space", "with:colon" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		const char *dir = h_tmppath(dirs[i]);
		mkdir(dir, 0700);
		const char *lib = h_env("%s/libmemcheck.so", dir);
		unlink(lib);
		ck_assert_msg(symlink(h_env("%s/libmemcheck.so", h_build()), lib) == 0,
			      "symlink %s", lib);
		const char *env = h_env("MEMCHECK_LIBRARY=%s", lib);
		const char *want = h_env("cannot preload %s: its path has a %s", lib,
					 i ? "colon" : "space");
		struct h_res x;
		H_EXEC(&x, .cli = H_LIST("run", "--", prog(), "pass"), .env = H_LIST(env));
		h_expect_exit(&x, 2);
		EXPECT_HAS(x.r.err, want, "memcheck run");
		h_res_free(&x);
		/* valgrind's command line (CTest's MEMORYCHECK_COMMAND) */
		H_EXEC(&x, .cli = H_LIST("--leak-check=full", prog(), "pass"), .env = H_LIST(env));
		h_expect_exit(&x, 2);
		EXPECT_HAS(x.r.err, want, "valgrind's command line");
		h_res_free(&x);
	}
	/* an allocator given by a path with a colon: skipped, said why */
	const char *dir = h_tmppath("alloc:colon");
	mkdir(dir, 0700);
	const char *so = h_env("%s/libnone.so", dir);
	unlink(so);
	ck_assert(symlink("/usr/lib/x86_64-linux-gnu/libm.so.6", so) == 0);
	struct h_res x;
	H_EXEC(&x, .cli = H_LIST("run", "-a", h_env("glibc,%s", so), "--", prog(), "pass"));
	h_expect_exit(&x, 0);
	EXPECT_HAS(x.r.err, h_env("%s: cannot be preloaded: its path has a colon", so),
		   "allocator path");
	h_res_free(&x);
}
END_TEST

/* An allocator given by the path of a file that is no shared object (a
 * text file, a directory, /dev/null, a relocatable object): the dynamic
 * loader ignored it in LD_PRELOAD and the C library's malloc served; a
 * command that wrote no record (/bin/true, left out) passed, exit 0
 * (before session 45: a command with records was refused after its run,
 * "does not serve malloc"); now bad usage before any run, said with the
 * path and what was expected.  A position-independent executable
 * (/bin/true: ET_DYN too, DF_1_PIE) ran under the C library's malloc
 * named /bin/true, exit 0, until harden46. */
START_TEST(allocator_not_a_shared_object)
{
	static const char *const why[] = { "not an ELF file", "not a regular file",
					   "not a regular file", "not a 64-bit ELF shared object",
					   "a position-independent executable (DF_1_PIE), which the "
					   "dynamic loader does not preload" };
	const char *paths[] = { tmpfile_with("liballoc.so", "not an object\n"), h_tmppath("adir"),
				"/dev/null", h_tmppath("liballoc.o"), "/bin/true" };
	mkdir(paths[1], 0700);
	/* a relocatable object: ELF, not ET_DYN */
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "printf 'int f(void){return 1;}' | cc -x c -c -o '%s' -",
		 paths[3]);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	for (size_t i = 0; i < sizeof why / sizeof why[0]; i++) {
		struct h_res x;
		H_EXEC(&x, .cli = H_LIST("run", "-a", h_env("glibc,%s", paths[i]), "--", "/bin/true"));
		h_expect_exit(&x, 2);
		EXPECT_HAS(x.r.err, h_env("allocator %s: %s: expected the path of an allocator's "
					  "shared object", paths[i], why[i]),
			   "allocator path");
		h_res_free(&x);
	}
}
END_TEST

/* The command gets memcheck, then the allocator, then the user's own
 * LD_PRELOAD; the budget as a copy in the run's own directory, named by
 * the user's file's absolute path; the baseline's report only when it is
 * not the baseline. */
START_TEST(environment_of_the_command)
{
	const char *soname = NULL, *other = other_allocator_so(&soname);
	const char *list = h_env("glibc%s%s", other ? "," : "", other ? other : "");
	const char *b = tmpfile_with("env.budget", "allocs <= 1000\n");
	struct h_res x;
	H_EXEC(&x, .cli = H_LIST("run", "-a", list, "--budget", b, "--", prog(), "env"),
	       .env = H_LIST("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libm.so.6"));
	h_expect_exit(&x, 0);
	char want[8192];
	snprintf(want, sizeof want, "LD_PRELOAD=%s/libmemcheck.so "
		 "/usr/lib/x86_64-linux-gnu/libm.so.6\nMEMCHECK_BUDGET_NAME=%s\nMEMCHECK_BASELINE "
		 "unset\nMEMCHECK_BUDGET=/", h_build(), b);
	ck_assert_msg(!strncmp(x.r.out, want, strlen(want)), "glibc run's environment:\n%s\n"
		      "expected:\n%s", x.r.out, want);
	const char *copy = x.r.out + strlen(want) - 1, *nl = strchr(copy, '\n');
	const char *dir = strstr(copy, "/memcheck-run-");
	ck_assert_msg(nl && dir && dir < nl && nl - copy > 7 && !strncmp(nl - 7, "/budget", 7),
		      "MEMCHECK_BUDGET: not the run's copy:\n%s", x.r.out);
	if (other) {
		const char *second = nl + 1;
		snprintf(want, sizeof want, "LD_PRELOAD=%s/libmemcheck.so /usr/lib/x86_64-linux-gnu/%s "
			 "/usr/lib/x86_64-linux-gnu/libm.so.6\nMEMCHECK_BUDGET_NAME=%s\n"
			 "MEMCHECK_BASELINE=/", h_build(), soname, b);
		ck_assert_msg(!strncmp(second, want, strlen(want)), "%s run's environment:\n%s\n"
			      "expected:\n%s", other, second, want);
	}
	h_res_free(&x);
}
END_TEST

/* ---- stored reports -------------------------------------------------- */

/* What `run` says about a budget, `gate` says again from --report. */
START_TEST(report_then_gate_agree)
{
	const char *fail_b = tmpfile_with("fail.budget", "[big]\npeak_live_bytes <= 16 KiB\n");
	const char *pass_b = tmpfile_with("pass.budget", "[big]\npeak_live_bytes <= 1 MiB\n");
	const char *rep = h_tmppath("run.jsonl");
	struct h_res r, g;
	MC(&r, "run", "-a", "glibc", "--budget", fail_b, "--report", rep, "--", prog(),
	   "pass", "big", "64");
	h_expect_exit(&r, 1);
	MC(&g, "gate", "--budget", fail_b, rep);
	h_expect_exit(&g, 1);
	EXPECT_HAS(g.r.out, "FAIL cli_prog \"big\" (glibc", "gate's failing record");
	EXPECT_HAS(g.r.out, "peak_live_bytes 64.0 KiB > 16.0 KiB", "gate's message");
	EXPECT_HAS(g.r.out, "memcheck gate: 3 records, 1 failed", "gate's summary");
	h_res_free(&g);
	MC(&g, "gate", "--budget", pass_b, rep);
	/* the record itself says fail when the library checked the budget
	 * (MEMCHECK_BUDGET); the CLI's check alone passes it */
	ck_assert_msg(g.r.exit_code == 0 || strstr(g.r.out, "fail.budget:2"),
		      "gate with a looser budget: %s\n%s", h_status(&g.r), g.r.out);
	h_res_free(&g);
	h_res_free(&r);

	MC(&r, "run", "-a", "glibc", "--budget", pass_b, "--report", rep, "--", prog(),
	   "pass", "big", "64");
	h_expect_exit(&r, 0);
	MC(&g, "gate", "--budget", pass_b, rep);
	h_expect_exit(&g, 0);
	EXPECT_HAS(g.r.out, "memcheck gate: 3 records, 0 failed", "gate's summary");
	h_res_free(&g);
	MC(&g, "compare", rep, rep);
	h_expect_exit(&g, 0);
	/* both have glibc, and the same file name: A and B */
	EXPECT_HAS(g.r.out, "  B:glibc  ", "compare's labels");
	EXPECT_HAS(g.r.out, "vs A:glibc", "compare's labels");
	EXPECT_HAS(g.r.out, "+0.0%", "no change against itself");
	h_res_free(&g);
	h_res_free(&r);
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
	struct h_res r, g;

	MC(&r, "run", "-a", list, "--budget", tight, "--report", rep, "--", prog(), "pass");
	h_expect_exit(&r, 1);
	EXPECT_HAS(r.r.err, "peak_rss", "the relative limit's message");
	EXPECT_HAS(r.r.err, "0.5x", "the relative limit's message");
	h_res_free(&r);
	MC(&g, "gate", "--budget", tight, rep);
	h_expect_exit(&g, 1);
	char want[64];
	snprintf(want, sizeof want, "(%s, pid", other);
	EXPECT_HAS(g.r.out, want, "gate names the other allocator's records");
	ck_assert_msg(!strstr(g.r.out, "(glibc, pid"), "glibc's records fail:\n%s", g.r.out);
	h_res_free(&g);

	MC(&r, "run", "-a", list, "--budget", loose, "--report", rep, "--", prog(), "pass");
	h_expect_exit(&r, 0);
	h_res_free(&r);
	MC(&g, "gate", "--budget", loose, rep);
	h_expect_exit(&g, 0);
	h_res_free(&g);

	/* the baseline from a stored report: run glibc alone, then the
	 * other allocator against it, in run and in gate */
	MC(&r, "run", "-a", "glibc", "--report", base, "--", prog(), "pass");
	h_expect_exit(&r, 0);
	h_res_free(&r);
	MC(&r, "run", "-a", other, "--budget", tight, "--baseline-file", base, "--report",
	   rep, "--", prog(), "pass");
	h_expect_exit(&r, 1);
	ck_assert_msg(table_rows(r.r.err, "glibc") == 0, "glibc ran:\n%s", r.r.err);
	h_res_free(&r);
	MC(&g, "gate", "--budget", tight, "--baseline-file", base, rep);
	h_expect_exit(&g, 1);
	h_res_free(&g);
	/* within the loose budget, in run and in gate; the tight one fails
	 * the same records in gate (the CLI's own check: their verdicts,
	 * judged under the loose one, pass) */
	MC(&r, "run", "-a", other, "--budget", loose, "--baseline-file", base, "--report",
	   rep, "--", prog(), "pass");
	h_expect_exit(&r, 0);
	h_res_free(&r);
	MC(&g, "gate", "--budget", loose, "--baseline-file", base, rep);
	h_expect_exit(&g, 0);
	h_res_free(&g);
	MC(&g, "gate", "--budget", tight, "--baseline-file", base, rep);
	h_expect_exit(&g, 1);
	EXPECT_HAS(g.r.out, "0.5x glibc's", "the CLI's own check");
	h_res_free(&g);
	/* no baseline at all: a relative limit never passes silently */
	MC(&g, "gate", "--budget", loose, rep);
	h_expect_exit(&g, 1);
	EXPECT_HAS(g.r.out, "no baseline", "gate without a baseline");
	h_res_free(&g);
	/* compare: the same table from two stored reports */
	MC(&g, "compare", base, rep);
	h_expect_exit(&g, 0);
	snprintf(want, sizeof want, "vs glibc");
	EXPECT_HAS(g.r.out, want, "compare's header");
	ck_assert_int_eq(table_rows(g.r.out, "glibc"), 2);
	ck_assert_int_eq(table_rows(g.r.out, other), 2);
	h_res_free(&g);
}
END_TEST

/* Budgets that are not regular files, read by the library (harden41's
 * sweep): one given as a pipe (a shell's <(...), here /dev/stdin) had
 * its bytes taken by the start-up look for an RSS key, and the region
 * passed with no rule at all before session 41; a FIFO nobody writes
 * kept the program from starting (open waited for a writer), then read
 * as an empty budget (refused since harden43); a suppression file that
 * is such a FIFO, refused.  Each allocator. */
START_TEST(budget_not_a_regular_file)
{
	const char *fifo = h_tmppath("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	for (int i = 0; i < H_NALLOCATORS; i++) {
		if (!h_allocator(i, NULL))
			continue;
		struct h_res x;
		H_EXEC(&x, .prog = "/bin/sh", .alloc = i, .flags = H_PRELOAD | H_EXITCODE,
		       .args = H_LIST("-c", h_env("printf '[alloc_free]\\npeak_live_bytes <= 1\\n' | "
						 "MEMCHECK_BUDGET=/dev/stdin exec %s pass",
						 prog())));
		const struct h_json *rec = NULL;
		for (size_t k = 0; k < x.rep.n; k++)
			if (strcmp(h_str(x.rep.rec[k], "name"), "alloc_free") == 0)
				rec = x.rep.rec[k];
		ck_assert_msg(rec && strcmp(h_str(rec, "verdict"), "fail") == 0,
			      "%s: the budget read from a pipe did not fail alloc_free; stderr:\n%s",
			      x.label, x.r.err);
		h_res_free(&x);
		/* refused, every region failing, where it read as an empty
		 * budget that passed them (exit 0) before harden43 */
		H_EXEC(&x, .prog = "cli_prog", .args = H_LIST("out", "pass"), .alloc = i,
		       .flags = H_PRELOAD | H_EXITCODE, .env = H_LIST(h_env("MEMCHECK_BUDGET=%s", fifo)));
		h_expect_exit(&x, 23);
		ck_assert_str_eq(x.r.out, "hello stdout\n");
		EXPECT_HAS(x.r.err, h_env("MEMCHECK_BUDGET: %s: a FIFO no process has open for "
					  "writing", fifo), "the library's refusal");
		h_res_free(&x);
		H_EXEC(&x, .prog = "cli_prog", .args = H_LIST("out", "pass"), .alloc = i,
		       .flags = H_PRELOAD | H_EXITCODE,
		       .env = H_LIST(h_env("MEMCHECK_SUPPRESSIONS=%s", fifo)));
		h_expect_exit(&x, 23);
		ck_assert_str_eq(x.r.out, "hello stdout\n");
		EXPECT_HAS(x.r.err, h_env("MEMCHECK_SUPPRESSIONS: suppressions not read: %s: not a "
					  "regular file", fifo), "a FIFO as suppressions");
		h_res_free(&x);
	}
}
END_TEST

/* A baseline report that is not a regular file (harden42's sweep): a
 * FIFO no process writes kept the program from reaching its first
 * region's end (open waited for a writer, killed after the run's time on
 * main); /dev/zero (size 0) and a directory went unnamed, the regions
 * failing "no baseline" with nothing saying why.  Now each is named with
 * what was expected, the program's output as bare, and under an
 * allocator other than the baseline its relative limits fail for want of
 * a baseline, as with a missing file.  Each allocator. */
START_TEST(baseline_not_a_regular_file)
{
	const char *fifo = h_tmppath("base.fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	/* A baseline of 48 MiB that holds no record (a log given by
	 * mistake): every process read all of it at its first relative
	 * limit, and nothing was said (harden46 measured 0.13 s a process
	 * at 200 MB).  Now its first line that cannot be a record stops the
	 * read, said with the file and line. */
	const char *log = h_tmppath("base.log");
	FILE *f = fopen(log, "w");
	ck_assert(f != NULL);
	for (int i = 0; i < (48 << 20) / 64; i++)
		fprintf(f, "%-63s\n", "2026-12-07 06:00:00 INFO a line of some other program's log");
	ck_assert(fclose(f) == 0);
	/* and JSON Lines of another tool: read whole on main too */
	const char *other = tmpfile_with("other.jsonl", "{\"ts\":1,\"msg\":\"x\"}\n{\"ts\":2}\n");
	const char *budget = tmpfile_with("loose.budget", "[*]\npeak_rss <= 100x\n");
	const struct {
		const char *file, *what;
	} bad[] = { { fifo, ": not a regular file: expected a JSON Lines report" },
		    { "/dev/zero", ": not a regular file: expected a JSON Lines report" },
		    { "/tmp", ": a directory: expected a JSON Lines report" },
		    { log, ":1: not a memcheck record (expected a JSON Lines report" },
		    { other, ":1: not a memcheck record (expected a JSON Lines report" } };
	for (int i = 0; i < H_NALLOCATORS; i++) {
		if (!h_allocator(i, NULL))
			continue;
		for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
			const char *file = bad[k].file;
			struct h_res x;
			H_EXEC(&x, .prog = "cli_prog", .args = H_LIST("out", "pass"), .alloc = i,
			       .flags = H_PRELOAD | H_EXITCODE,
			       .env = H_LIST(h_env("MEMCHECK_BUDGET=%s", budget),
					     h_env("MEMCHECK_BASELINE=%s", file)));
			h_expect_exit(&x, strcmp(h_allocators[i].name, "glibc") == 0 ? 0 : 23);
			ck_assert_str_eq(x.r.out, "hello stdout\n");
			EXPECT_HAS(x.r.err, h_env("MEMCHECK_BASELINE=%s%s", file, bad[k].what),
				   "the baseline's error");
			ck_assert_msg(h_count_lines(x.r.err, "MEMCHECK_BASELINE=") == 1,
				      "said once a process:\n%s", x.r.err);
			h_res_free(&x);
		}
	}
}
END_TEST

/* path's records rewritten at dst as memcheck writes a record too
 * long for a pipe (memcheck-report(5), "Records in parts"): each line
 * in parts of 200 bytes of its text; skip: a part number left out
 * (0: none). */
static void write_in_parts(const char *path, const char *dst, int skip)
{
	char *text = h_read_file(path, NULL);
	FILE *out = fopen(dst, "w");
	ck_assert(text && out);
	int seq = 0;
	for (char *l = text, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
		size_t len = (size_t)(nl - l), n = (len + 199) / 200;
		seq++;
		for (size_t i = 1; i <= n; i++) {
			if ((int)i == skip)
				continue;
			fprintf(out, "{\"part\":{\"pid\":77,\"seq\":%d,\"i\":%zu,\"n\":%zu},\"text\":\"",
				seq, i, n);
			for (const char *c = l + (i - 1) * 200; c < l + len && c < l + i * 200; c++)
				fprintf(out, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
			fputs("\"}\n", out);
		}
	}
	fclose(out);
	free(text);
}

/* A baseline saved from a FIFO's stream holds its long records in parts
 * (harden43): the library's baseline reader glues them, and a region is
 * judged against its record (on main: no record of the program found,
 * the relative limit failed for want of a baseline); a part missing is
 * said with the file and line, that record not used. */
START_TEST(baseline_in_parts)
{
	if (!h_allocator(_i, NULL))
		return;
	const char *budget = tmpfile_with("rel.budget", "[*]\npeak_rss <= 100x\n");
	struct h_res b, x;
	H_EXEC(&b, .prog = "cli_prog", .args = H_LIST("out", "pass"), .alloc = _i,
	       .flags = H_PRELOAD);
	h_expect_exit(&b, 0);
	for (int skip = 0; skip < 3; skip += 2) {
		const char *parts = h_tmppath(skip ? "broken.jsonl" : "parts.jsonl");
		write_in_parts(b.report, parts, skip);
		H_EXEC(&x, .prog = "cli_prog", .args = H_LIST("out", "pass"), .alloc = _i,
		       .flags = H_PRELOAD | H_EXITCODE,
		       .env = H_LIST(h_env("MEMCHECK_BUDGET=%s", budget),
				     h_env("MEMCHECK_BASELINE=%s", parts)));
		ck_assert_str_eq(x.r.out, "hello stdout\n");
		if (!skip) {
			h_expect_exit(&x, 0);
			ck_assert_msg(!strstr(x.r.err, "baseline"), "%s", x.r.err);
		} else {
			/* (glibc's own regions are its baseline: no relative limit) */
			h_expect_exit(&x, strcmp(h_allocators[_i].name, "glibc") == 0 ? 0 : 23);
			EXPECT_HAS(x.r.err, h_env("%s:2: expected part 2 of a record written in parts "
						  "right after the one before it", parts), "the gap");
		}
		h_res_free(&x);
	}
	h_res_free(&b);
}
END_TEST

/* A budget that is a FIFO (harden43).  memcheck run reads it as cat
 * does, waiting for its writer (on main it was read at once as an empty
 * budget: a program over the budget's one rule passed, exit 0), and its
 * processes judge the same rules (a copy: they cannot read the FIFO
 * again, and refuse one no process writes: budget_not_a_regular_file). */
static pid_t write_fifo_later(const char *fifo, const char *text)
{
	pid_t w = fork();
	ck_assert_int_ge(w, 0);
	if (w == 0) {
		usleep(300 * 1000); /* after memcheck has opened it */
		FILE *f = fopen(fifo, "w");
		if (!f)
			_exit(1);
		fputs(text, f);
		_exit(fclose(f) == 0 ? 0 : 1);
	}
	return w;
}

START_TEST(budget_fifo)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *fifo = h_tmppath("budget.fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	static const char rule[] = "[*]\npeak_live_bytes <= 16\n";
	pid_t w = write_fifo_later(fifo, rule);
	struct h_res x;
	MC(&x, "run", "-a", h_allocators[_i].name, "--budget", fifo, "--", prog(), "out", "pass");
	int st;
	ck_assert_int_eq(waitpid(w, &st, 0), w);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the FIFO's writer failed");
	h_expect_exit(&x, 1);
	EXPECT_HAS(x.r.out, "hello stdout\n", "the program's output");
	EXPECT_HAS(x.r.err, h_env("%s:2: peak_live_bytes", fifo), "the FIFO's rule, named");
	ck_assert_msg(!strstr(x.r.err, "a FIFO no process"), "%s", x.r.err);
	h_res_free(&x);
	unlink(fifo);
}
END_TEST

/* Files the CLI reads or writes that are not what it expects
 * (harden42's sweep): a report that is a device never ending a line
 * (/dev/zero, /dev/full) was read until memory ran out, gate, compare
 * and run --baseline-file hanging meanwhile (killed after the run's
 * time on main); an output (--report, --junit, --html) that is a FIFO
 * no process reads held memcheck run after the command's runs for ever.
 * Now each is an error naming the file, exit 2, the command's output
 * passed through as before; a FIFO with a reader is written. */
START_TEST(cli_files_not_regular)
{
	const char *fifo = h_tmppath("out.fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	const char *rep = tmpfile_with("r.jsonl", "{\"name\":\"r\",\"pid\":1,\"program\":\"p\","
				       "\"allocator\":\"glibc\",\"verdict\":\"pass\"}\n");
	struct h_res x;
	MC(&x, "gate", "/dev/zero");
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, "/dev/zero:1: a NUL byte, and no line end in the MiB after it: not a "
		   "memcheck report?", "gate /dev/zero");
	h_res_free(&x);
	MC(&x, "compare", rep, "/dev/full");
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, "/dev/full:1: a NUL byte", "compare with /dev/full");
	h_res_free(&x);
	MC(&x, "run", "-a", "glibc", "--baseline-file", "/dev/zero", "--", prog(), "pass");
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, "/dev/zero:1: a NUL byte", "run --baseline-file /dev/zero");
	h_res_free(&x);
	static const char *const outputs[] = { "--report", "--junit", "--html" };
	for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
		MC(&x, "run", "-a", "glibc", outputs[i], fifo, "--", prog(), "out", "pass");
		h_expect_exit(&x, 2);
		ck_assert_str_eq(x.r.out, "hello stdout\n");
		EXPECT_HAS(x.r.err, h_env("cannot write %s: a FIFO no process has open for reading",
					  fifo), outputs[i]);
		h_res_free(&x);
	}
}
END_TEST

/* A report line that cannot hold a record, 128 MiB long (text that is no
 * report, given where one was expected): on main the whole line was read
 * into memory before the parser said what its first bytes already showed
 * (memcheck gate's peak RSS 294 MB for a 300 MB line); now said at the
 * line's first 64 KiB, the rest skipped, the reader's memory bounded
 * whatever the line's length.  The message is the one the whole line
 * gets (its column), from a FIFO whose writer goes on. */
START_TEST(hopeless_line_not_held)
{
	static const struct {
		const char *head, *want;
	} rows[] = {
		{ "", "column 1: expected '{' (a report line is one JSON object), got 'x'" },
		{ "{\"x\":1,", "column 8: expected a key (a string), got 'x'" },
		{ "[", "column 1: expected '{' (a report line is one JSON object), got '['" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const char *fifo = h_tmppath(h_env("long%zu.fifo", i));
		unlink(fifo);
		ck_assert_int_eq(mkfifo(fifo, 0600), 0);
		pid_t w = fork();
		ck_assert_int_ge(w, 0);
		if (w == 0) {
			FILE *f = fopen(fifo, "w");
			static char x[1 << 16];
			memset(x, 'x', sizeof x);
			if (!f || fputs(rows[i].head, f) < 0)
				_exit(1);
			for (int k = 0; k < 2048; k++)   /* 128 MiB */
				if (fwrite(x, 1, sizeof x, f) != sizeof x)
					_exit(1);
			fputs("\n{\"name\":\"r\",\"pid\":1,\"program\":\"p\",\"allocator\":"
			      "\"glibc\",\"verdict\":\"pass\"}\n", f);
			_exit(fclose(f) == 0 ? 0 : 1);
		}
		struct h_res x;
		MC(&x, "gate", fifo);
		int st;
		ck_assert_int_eq(waitpid(w, &st, 0), w);
		h_expect_exit(&x, 2);
		EXPECT_HAS(x.r.err, h_env("%s:1: %s\n", fifo, rows[i].want), "gate");
		ck_assert_msg(!strstr(x.r.err, ":2:"), "the record after it said: %s", x.r.err);
		ck_assert_msg(x.r.maxrss_kib < 32 * 1024, "memcheck gate's peak RSS %ld KiB reading "
			      "a 128 MiB line that holds no record", x.r.maxrss_kib);
		h_res_free(&x);
	}
}
END_TEST

/* memcheck gate on n minimal records, each of allocator "glibc" or,
 * with own, of an allocator of its own: all pass, and gate's peak RSS
 * stays under 150 MB. */
static void gate_minimal_records(int n, bool own)
{
	const char *rep = h_tmppath("many.jsonl");
	FILE *f = fopen(rep, "w");
	ck_assert(f != NULL);
	for (int i = 1; i <= n; i++)
		fprintf(f, "{\"name\":\"r\",\"pid\":%d,\"program\":\"p\",\"allocator\":\"%s%d\","
			"\"allocs\":1,\"frees\":1,\"verdict\":\"pass\"}\n", i, own ? "a" : "glibc",
			own ? i : 0);
	ck_assert(fclose(f) == 0);
	struct h_res x;
	MC(&x, "gate", rep);
	h_expect_exit(&x, 0);
	EXPECT_HAS(x.r.out, h_env("memcheck gate: %d records, 0 failed", n), "gate's count");
	ck_assert_msg(x.r.maxrss_kib < 150 * 1000, "memcheck gate's peak RSS %ld KiB for %d "
		      "records%s", x.r.maxrss_kib, n, own ? " each of its own allocator" : "");
	h_res_free(&x);
	unlink(rep);
}

/* 10^5 minimal records (98-byte lines, 9.8 MB, one program and region,
 * each its own rank: the pairing's worst case): memcheck gate's peak
 * RSS was 376 MB on main, a record 3.8 KB (a whole struct mc_record and
 * a 512-byte message array in each, copied into its group by doubling;
 * harden46 left it); 107 MB since harden47.  Bound: 1.5 KB a record.
 * And 20,000 records each of its own allocator: 706 MB and 2.1 s on
 * main (a scan of the groups for each record, 16 KB of pairing tables
 * a group), 44 MB since harden47. */
START_TEST(gate_records_kept_compactly)
{
	gate_minimal_records(100000, false);
	gate_minimal_records(20000, true);
}
END_TEST

/* A command named with a newline and a terminal's escape: the table's
 * names were escaped, but the command's own lines ("memcheck: ... under
 * glibc: exit status", the table's title) printed it raw on main, one
 * line made two and the escape sent to the terminal (harden46). */
START_TEST(command_name_escaped)
{
	const char *dir = h_tmppath("names");
	mkdir(dir, 0700);
	const char *name = h_env("%s/ev\nil\033[31m", dir);
	ck_assert_msg(symlink(prog(), name) == 0, "symlink %s", name);
	struct h_res x;
	MC(&x, "run", "-a", "glibc", "--", name, "exit", "4");
	h_expect_exit(&x, 3);
	EXPECT_HAS(x.r.err, h_env("memcheck: %s/ev\\nil\\x1b[31m under glibc: exit status 4",
				  dir), "the run's line");
	EXPECT_HAS(x.r.err, h_env("memcheck run: %s/ev\\nil\\x1b[31m\n", dir), "the title");
	ck_assert_msg(!strchr(x.r.err, '\033'), "an escape byte on stderr:\n%s", x.r.err);
	h_res_free(&x);
	/* a report's "path:line:" messages name it escaped too (harden46
	 * left them raw: the line split in two, the escape reaching the
	 * terminal) */
	const char *rep = h_env("%s/r\nep\033[31m.jsonl", dir);
	FILE *f = fopen(rep, "w");
	ck_assert(f && fputs("not a record\n", f) >= 0 && fclose(f) == 0);
	MC(&x, "gate", rep);
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, h_env("%s/r\\nep\\x1b[31m.jsonl:1: ", dir), "the report's line");
	ck_assert_msg(!strchr(x.r.err, '\033'), "an escape byte on stderr:\n%s", x.r.err);
	h_res_free(&x);
	/* a record's allocator and violations escaped as its names are, in
	 * gate's FAIL line and compare's table (harden47: raw, a FAIL line
	 * split in two and the escape sent to the terminal) */
	f = fopen(rep, "w");
	ck_assert(f && fputs("{\"name\":\"r\",\"pid\":1,\"program\":\"p\",\"allocator\":"
			     "\"gl\\u001bibc\",\"allocs\":1,\"frees\":1,\"verdict\":\"fail\","
			     "\"violations\":[\"bad\\nline \\u001b[31mred\"]}\n", f) >= 0 &&
		  fclose(f) == 0);
	MC(&x, "gate", rep);
	h_expect_exit(&x, 1);
	EXPECT_HAS(x.r.out, "FAIL p \"r\" (gl\\x1bibc, pid 1): bad\\nline \\x1b[31mred\n",
		   "gate's FAIL line");
	ck_assert_msg(!strchr(x.r.out, '\033'), "an escape byte on stdout:\n%s", x.r.out);
	h_res_free(&x);
	MC(&x, "compare", rep, rep);
	EXPECT_HAS(x.r.out, "    bad\\nline \\x1b[31mred\n", "compare's violation");
	ck_assert_msg(!strchr(x.r.out, '\033'), "an escape byte on stdout:\n%s", x.r.out);
	h_res_free(&x);
}
END_TEST

/* Suppression files as valgrind 3.19 reads them (harden42's sweep of
 * malformed entries against valgrind's messages): an entry of more than
 * 24 frame lines, which valgrind takes (25, 100, 10,000 alike, the lines
 * past --num-callers skipped), made memcheck run refuse the whole file,
 * exit 2, on main; an entry of '...' alone, which valgrind refuses ("at
 * least one location line which is not ..."), was taken and suppressed
 * every leak, cli_prog's leak passing.  Now the first is read (its first
 * 24 lines kept) and the second refused naming the file and line. */
START_TEST(suppressions_as_valgrind_reads_them)
{
	char text[4096] = "{\n   leaky, deep\n   Memcheck:Leak\n   fun:malloc\n   fun:leak\n";
	for (int i = 0; i < 40; i++)
		strcat(text, "   ...\n");
	strcat(text, "}\n");
	const char *deep = tmpfile_with("deep.supp", text);
	const char *dots = tmpfile_with("dots.supp", "{\n   everything\n   Memcheck:Leak\n"
					"   ...\n}\n");
	struct h_res x;
	MC(&x, "run", "-a", "glibc", "--suppressions", deep, "--", prog(), "leak");
	h_expect_exit(&x, 0);
	h_res_free(&x);
	MC(&x, "run", "-a", "glibc", "--suppressions", dots, "--", prog(), "leak");
	h_expect_exit(&x, 2);
	EXPECT_HAS(x.r.err, h_env("%s:1: expected a frame line other than '...' in the "
				  "suppression", dots), "'...' alone");
	h_res_free(&x);
}
END_TEST

START_TEST(junit_structure)
{
	const char *j = h_tmppath("junit.xml");
	struct h_res r;
	MC(&r, "run", "-a", "glibc,/nonexistent/libx.so", "--junit", j, "--", prog(),
	   "pass", "leak", "xml");
	h_expect_exit(&r, 1);
	h_res_free(&r);
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
	MC(&r, "run", "-a", "glibc", "--junit", j, "--", prog(), "pass", "crash");
	h_expect_exit(&r, 3);
	h_res_free(&r);
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
	MC(&r, "run", "-a", "glibc", "--report", rep, "--", prog(), "leak");
	h_res_free(&r);
	MC(&r, "gate", "--junit", j, rep);
	h_expect_exit(&r, 1);
	h_res_free(&r);
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
	const char *argv[32] = { "--leak-check=full", "--show-leak-kinds=all",
				 "--errors-for-leak-kinds=all", "--error-exitcode=99", cli() };
	size_t n = 5;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	struct h_res x;
	H_EXEC(&x, .prog = valgrind_path(), .args = argv, .no_report = true);
	h_expect_exit(&x, want);
	EXPECT_HAS(x.r.err, "ERROR SUMMARY: 0 errors", args[0]);
	EXPECT_HAS(x.r.err, "All heap blocks were freed -- no leaks are possible", args[0]);
	h_res_free(&x);
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
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, crash_stops_the_other_allocators);
	tcase_add_test(tc, gate_bad_budget_exits_2);
	tcase_add_test(tc, gate_own_exit_not_counted);
	tcase_add_loop_test(tc, own_exit_views, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, limit_shortfall_said, 0, H_NALLOCATORS);
	tcase_add_test(tc, bad_report_exits_2);
	tcase_add_test(tc, cut_record_said);
	tcase_add_test(tc, environment_of_the_command);
	tcase_add_test(tc, unpreloadable_paths_refused);
	tcase_add_test(tc, allocator_not_a_shared_object);
	tcase_add_test(tc, report_then_gate_agree);
	tcase_add_test(tc, relative_budget);
	tcase_add_test(tc, junit_structure);
	tcase_add_test(tc, budget_not_a_regular_file);
	tcase_add_test(tc, baseline_not_a_regular_file);
	tcase_add_loop_test(tc, budget_fifo, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, baseline_in_parts, 0, H_NALLOCATORS);
	tcase_add_test(tc, cli_files_not_regular);
	tcase_add_test(tc, hopeless_line_not_held);
	tcase_add_test(tc, command_name_escaped);
	tcase_add_test(tc, gate_records_kept_compactly);
	tcase_add_test(tc, suppressions_as_valgrind_reads_them);
	TCase *vg = h_tcase("valgrind", 120);
	tcase_add_test(vg, clean_under_valgrind);
	return h_run_suite(NULL);
}
