/*
 * usage.c - every command's help text, said by `memcheck help CMD`, by
 * -h and --help, and pointed at by every usage error; and the option
 * loop the commands share (parse_options).
 *
 * The texts are memcheck(1)'s summary, kept here in one table so that
 * `help`, `CMD --help` and `CMD -h` cannot drift apart; the man page says
 * more and must agree with them (doc-check does not compare the two).
 * A usage error is said as "memcheck CMD: message" with a pointer to the
 * command's help, on stderr, and is exit status 2: a CI log shows what
 * to fix without the whole text.
 *
 * parse_options is getopt_long with what every command did the same way
 * around it: opterr off (the messages are memcheck's, not getopt's), a
 * leading ':' in the short options (a missing value is told apart from
 * an unknown option), -h and --help, and "no operand" said once.
 */
#include <getopt.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"

/* Where run's -a goes in its text: its lines are made from
 * lib/allocators.def (allocators_option), so that the names and the
 * default list are the ones the command takes. */
#define ALLOCATORS_OPTION "@allocators@\n"

static const struct help {
	const char *cmd, *text;
} helps[] = {
	{ NULL,
	  "usage: memcheck COMMAND [ARGS...]\n"
	  "       memcheck [VALGRIND OPTIONS] PROGRAM [ARGS...]\n"
	  "       memcheck --version\n"
	  "\n"
	  "Run a test suite under several allocators with memcheck preloaded, compare\n"
	  "what each costs in memory and time, and gate CI on leaks and budgets.\n"
	  "\n"
	  "commands:\n"
	  "  run [OPTIONS] [--] CMD [ARGS...]  run CMD under each allocator; print the table\n"
	  "  compare A.jsonl B.jsonl           the same table from two stored reports\n"
	  "  gate [OPTIONS] REPORT.jsonl...    judge stored reports against a budget\n"
	  "  report [OPTIONS] REPORT.jsonl...  stored reports as an HTML page, folded\n"
	  "                                    stacks or massif's out-file\n"
	  "  oom [OPTIONS] -- CMD [ARGS...]    fail each allocation of CMD in turn; prove\n"
	  "                                    its error paths free what they took\n"
	  "  help [COMMAND]                    this text, or a command's\n"
	  "\n"
	  "With valgrind's options first (--log-file=F, -q, --suppressions=F,\n"
	  "--error-exitcode=N, ...), memcheck runs PROGRAM with libmemcheck preloaded\n"
	  "as valgrind would run it: what CTest's MEMORYCHECK_TYPE=Valgrind does.\n"
	  "--version prints memcheck's version.\n"
	  "\n"
	  "exit status: 0 pass; 1 a budget or leak gate failed; 2 bad usage or a bad\n"
	  "input file; 3 the command under test failed or crashed.  See memcheck(1).\n" },
	{ "run",
	  "usage: memcheck run [OPTIONS] [--] CMD [ARGS...]\n"
	  "\n"
	  "Run CMD (execvp, no shell) once per allocator, the baseline first, with\n"
	  "libmemcheck preloaded in front of the allocator.  Every region of every\n"
	  "process is collected; a table per region and allocator goes to stderr after\n"
	  "the runs.  CMD's own stdout and stderr pass through untouched.\n"
	  "\n"
	  "options:\n"
	  ALLOCATORS_OPTION
	  "  -b, --baseline NAME      the allocator the others are compared with, run\n"
	  "                           first (default glibc)\n"
	  "      --budget FILE        budget file (memcheck-budget(5)): each region checks\n"
	  "                           it as it ends, and memcheck checks it again\n"
	  "      --baseline-file FILE take the baseline from a stored report (its records\n"
	  "                           of the baseline allocator) instead of running it\n"
	  "      --report FILE        write every record collected, as JSON Lines, with\n"
	  "                           its run and the spread over the runs added\n"
	  "      --junit FILE         write JUnit XML: a testsuite per allocator, a\n"
	  "                           testcase per region; in these files' names (and\n"
	  "                           --html's, --gen-suppressions') %p is this run's\n"
	  "                           pid, %q{VAR} VAR's value, %% a '%': a file per\n"
	  "                           test where a driver runs tests in parallel\n"
	  "  -n, --repeat N|auto      run N times per allocator; auto (the default): once,\n"
	  "                           three times if it gives memory back on a timer;\n"
	  "                           the table shows medians and their spread; leaks\n"
	  "                           fail in any run, measured figures (peak RSS,\n"
	  "                           retained, time) are gated on their median\n"
	  "  -k, --keep-going         go on after the command crashes or fails\n"
	  "      --suppressions FILE  valgrind-format suppression file\n"
	  "                           (memcheck-suppressions(5)), read besides the\n"
	  "                           shipped ones; repeatable; checked first: a bad\n"
	  "                           file is exit status 2\n"
	  "      --gen-suppressions FILE  write a suppression entry for each leak record\n"
	  "                           no suppression matched, in every run, to FILE\n"
	  "                           (emptied first)\n"
	  "      --valgrind           run CMD under valgrind too (default allocator glibc\n"
	  "                           alone): the leak figures are valgrind's, memcheck\n"
	  "                           still counts; it classifies leaks, it does not\n"
	  "                           compare allocators\n"
	  "      --valgrind-option OPT  pass OPT to valgrind (repeatable)\n"
	  "      --html FILE          write the HTML report (memcheck report --html)\n"
	  "      --timeline[=N]       sample each region's memory as it runs, up to N\n"
	  "                           samples (default 512): MEMCHECK_TIMELINE\n"
	  "      --alloc-fn PATTERN   functions that wrap the allocator (shell pattern,\n"
	  "                           repeatable; valgrind's --alloc-fn): sites are\n"
	  "                           named past them (MEMCHECK_ALLOC_FN); thin\n"
	  "                           wrappers are found without it\n"
	  "  -q, --quiet              a test driver's wrapper (meson's exe_wrapper,\n"
	  "                           automake's LOG_COMPILER): glibc alone unless -a\n"
	  "                           names others, nothing said unless a region fails,\n"
	  "                           and the command's own exit status (1 if it exited\n"
	  "                           0 while a region failed)\n"
	  "  -h, --help               this text\n"
	  "\n"
	  "exit status: 3 a run was killed by a signal, or exited non-zero while none\n"
	  "of its regions failed; else 2 a report could not be read or written; else\n"
	  "1 a region failed (leak, heap error, budget); else 0.  A run that exits\n"
	  "non-zero because a region failed (a test failing on memcheck) is 1.\n" },
	{ "oom",
	  "usage: memcheck oom [OPTIONS] [--] CMD [ARGS...]\n"
	  "\n"
	  "Run CMD once with libmemcheck preloaded to count the allocation calls of\n"
	  "each region (each test of a check suite, forked or not; the whole process\n"
	  "when CMD has no regions), then run it again once per allocation, failing\n"
	  "that one (or, --persistent, that one and every one after it in the region),\n"
	  "several runs at a time.  Each run is leaked (blocks lost, or more left behind\n"
	  "than in the first run though it exited as that one did), crashed, timed out\n"
	  "(killed by memcheck, still running after --run-timeout), test failed\n"
	  "(exits otherwise, nothing lost; a test that calls memcheck_expect_oom()\n"
	  "may), or handled.  The table by the failed call's file:line goes to stdout,\n"
	  "real bugs first; a region whose test fails at most failed calls and loses\n"
	  "nothing cannot handle OOM: one line, not a detail per site.  CMD's output\n"
	  "is discarded.  On a terminal, a progress line on stderr while it runs.\n"
	  "\n"
	  "options:\n"
	  "      --persistent         fail every allocation from the N-th on, not it alone\n"
	  "      --max N              sweep at most the first N allocations of each region\n"
	  "  -j, --jobs N             runs at a time (default: the number of CPUs)\n"
	  "      --timeout S          start no run after S seconds; say what was not reached\n"
	  "      --run-timeout S      kill a run still going after S seconds (default: 20\n"
	  "                           times the first run's time, plus 10 s)\n"
	  "      --report FILE        write the summary and every run as one JSON object\n"
	  "      --alloc-fn PATTERN   functions that wrap the allocator (shell pattern,\n"
	  "                           repeatable): a failed call is filed under the\n"
	  "                           first frame past them (MEMCHECK_ALLOC_FN); thin\n"
	  "                           wrappers are found without it\n"
	  "  -h, --help               this text\n"
	  "\n"
	  "exit status: 0 every failure handled; 1 a run leaked, crashed, timed out or\n"
	  "failed its test; 2 bad usage, or CMD cannot be started; 3 CMD failed or\n"
	  "crashed with no failure injected.\n" },
	{ "report",
	  "usage: memcheck report [OPTIONS] REPORT.jsonl...\n"
	  "\n"
	  "Write stored reports (MEMCHECK_REPORT, memcheck run --report) as pictures:\n"
	  "an HTML page of every region under every allocator (verdicts, bars of peak\n"
	  "RSS, peak live and retained bytes against the budget, timelines, the sites\n"
	  "at the peak, leaks with their stacks), one file with no network access;\n"
	  "the peak snapshots as folded stacks (flamegraph.pl, inferno, speedscope);\n"
	  "one record's timeline and peak snapshot as massif's out-file (ms_print,\n"
	  "massif-visualizer).\n"
	  "\n"
	  "options:\n"
	  "      --html FILE          the HTML report\n"
	  "      --folded FILE        the chosen records' peak snapshots, folded\n"
	  "      --massif FILE        the chosen record as massif's out-file (one record:\n"
	  "                           the candidates are listed when it is not one)\n"
	  "      --region GLOB        choose records by region name (exports)\n"
	  "      --allocator GLOB     choose records by allocator (exports)\n"
	  "      --run N              of a report of several runs, the N-th run's\n"
	  "                           records (exports; default 1)\n"
	  "      --budget FILE        judge the records by it, draw its limits\n"
	  "  -b, --baseline NAME      the baseline allocator (default glibc)\n"
	  "  -h, --help               this text\n"
	  "\n"
	  "exit status: 0 written; 2 bad usage, a bad budget file or report, a file that\n"
	  "cannot be written, or a --massif choice that is not one record.\n" },
	{ "compare",
	  "usage: memcheck compare A.jsonl B.jsonl\n"
	  "\n"
	  "Print the table of `memcheck run` from two stored reports (written by\n"
	  "MEMCHECK_REPORT or `memcheck run --report`), A as the baseline: each\n"
	  "region of B beside the same region of A (program basename, region name,\n"
	  "occurrence).  The table goes to stdout.\n"
	  "\n"
	  "exit status: 0, or 2 when a file cannot be read or has a malformed line.\n" },
	{ "gate",
	  "usage: memcheck gate [OPTIONS] REPORT.jsonl...\n"
	  "\n"
	  "Judge stored records: a record fails when its verdict is fail, or when it\n"
	  "is over the budget.  Relative limits compare each record with the same\n"
	  "region of the baseline allocator: records of the baseline allocator in\n"
	  "REPORT, or in --baseline-file.  Records of several runs (memcheck run\n"
	  "--report) are judged as run judges them: measured figures on their median.\n"
	  "Failing records are listed on stdout.\n"
	  "\n"
	  "options:\n"
	  "      --budget FILE        budget file (memcheck-budget(5))\n"
	  "  -b, --baseline NAME      the baseline allocator (default glibc)\n"
	  "      --baseline-file FILE take the baseline records from this report\n"
	  "      --junit FILE         write JUnit XML of the verdicts\n"
	  "  -h, --help               this text\n"
	  "\n"
	  "exit status: 0 every record passes; 1 one fails; 2 bad usage, a bad budget\n"
	  "file, or a report that cannot be read, has a malformed line or no records.\n" },
};

/* The texts' columns: options' descriptions start at DESC, no line goes
 * past WIDTH. */
enum { DESC = 27, WIDTH = 79 };

/* The allocators of lib/allocators.def as `run -a` names them.  Read
 * here, not from setup.c's allocators[] (a layer above). */
static const struct {
	const char *name, *note;
	unsigned flags;
} names[] = {
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) \
	{ name, note, flags },
#include "allocators.def"
#undef MC_ALLOCATOR
};

/* first, then text wrapped as the options' descriptions are: at spaces,
 * and after a comma inside a word (a list of names). */
static void put_wrapped(FILE *f, const char *first, const char *text)
{
	fputs(first, f);
	size_t col = strlen(first);
	bool space = false;
	for (const char *s = text; *s;) {
		size_t n = strcspn(s, " ,");
		if (s[n] == ',')
			n++;
		if (col + space + n > WIDTH && col > DESC) {
			fprintf(f, "\n%*s", DESC, "");
			col = DESC;
			space = false;
		}
		if (space) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, n, f);
		col += n;
		s += n;
		space = *s == ' ';
		s += space;
	}
	fputc('\n', f);
}

/* run's -a: every name (with its note), then the default list. */
static void allocators_option(FILE *f)
{
	char text[1024];
	size_t len = (size_t)snprintf(text, sizeof text, "comma-separated names:");
	for (size_t i = 0; i < MC_ARRAY_SIZE(names) && len < sizeof text; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, " %s%s%s%s,", names[i].name,
					names[i].note ? " (" : "", names[i].note ? names[i].note : "",
					names[i].note ? ")" : "");
	len += (size_t)snprintf(text + len, len < sizeof text ? sizeof text - len : 0,
				" or paths of shared objects (default: ");
	for (size_t i = 0, n = 0; i < MC_ARRAY_SIZE(names) && len < sizeof text; i++)
		if (names[i].flags & MC_ALLOC_DEFAULT)
			len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", n++ ? "," : "",
						names[i].name);
	if (len < sizeof text)
		snprintf(text + len, sizeof text - len, "); ones not installed are skipped");
	put_wrapped(f, "  -a, --allocators LIST    ", text);
}

bool usage_of(const char *cmd, FILE *f)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(helps); i++)
		if ((!cmd && !helps[i].cmd) || (cmd && helps[i].cmd && strcmp(cmd, helps[i].cmd) == 0)) {
			const char *text = helps[i].text, *at = strstr(text, ALLOCATORS_OPTION);
			if (at) {
				fwrite(text, 1, (size_t)(at - text), f);
				allocators_option(f);
				text = at + strlen(ALLOCATORS_OPTION);
			}
			fputs(text, f);
			return true;
		}
	return false;
}

int bad_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fflush(stdout);
	fprintf(stderr, "memcheck%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n(see memcheck help%s%s)\n", cmd ? " " : "", cmd ? cmd : "");
	va_end(ap);
	return EXIT_USAGE;
}

int parse_options(const char *cmd, int argc, char **argv, const char *shorts,
		  const struct option *longs, int (*fn)(void *o, int c, char *arg), void *o,
		  const char *none)
{
	int c;
	/* a command parses once, from its own argv[1]: main's argv[1] is
	 * the command's name */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		int rc;
		switch (c) {
		case 'h':
			usage_of(cmd, stdout);
			return -1;
		case ':':
			return bad_usage(cmd, "%s needs a value", argv[optind - 1]);
		case '?':
			return bad_usage(cmd, "unknown option %s", argv[optind - 1]);
		default:
			if ((rc = fn(o, c, optarg)))
				return rc;
		}
	}
	if (none && optind >= argc)
		return bad_usage(cmd, "%s", none);
	return 0;
}
