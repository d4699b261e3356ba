/*
 * memcheck.c - the memcheck command: run a test suite under several
 * allocators with libmemcheck preloaded (run.c), compare two stored
 * reports, gate CI on stored reports, draw them (report.c).  See
 * memcheck(1).
 *
 * Output: `run` passes the command's stdout and stderr through untouched
 * and writes everything of its own (progress, the table, the verdict) to
 * stderr, so a suite whose stdout is parsed (TAP, diffs) still parses.
 * `compare` and `gate` have no command: their table and verdicts go to
 * stdout.  Messages about input files are "FILE:LINE: message".
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- small things ---------------------------------------------------- */

void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fflush(stdout);
	fputs("memcheck: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("memcheck: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_USAGE);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

/* ---- usage ----------------------------------------------------------- */

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
	  "  -a, --allocators LIST    comma-separated names: glibc, mimalloc, jemalloc,\n"
	  "                           tcmalloc (the minimal library), tcmalloc-full, or\n"
	  "                           paths of shared objects (default: glibc,mimalloc,\n"
	  "                           jemalloc,tcmalloc); ones not installed are skipped\n"
	  "  -b, --baseline NAME      the allocator the others are compared with, run\n"
	  "                           first (default glibc)\n"
	  "      --budget FILE        budget file (memcheck-budget(5)): each region checks\n"
	  "                           it as it ends, and memcheck checks it again\n"
	  "      --baseline-file FILE take the baseline from a stored report (its records\n"
	  "                           of the baseline allocator) instead of running it\n"
	  "      --report FILE        write every record collected, as JSON Lines, with\n"
	  "                           its run and the spread over the runs added\n"
	  "      --junit FILE         write JUnit XML: a testsuite per allocator, a\n"
	  "                           testcase per region\n"
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

void usage_of(const char *cmd, FILE *f)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(helps); i++)
		if ((!cmd && !helps[i].cmd) || (cmd && helps[i].cmd && strcmp(cmd, helps[i].cmd) == 0)) {
			fputs(helps[i].text, f);
			return;
		}
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

/* ---- gate ------------------------------------------------------------ */

static const struct option gate_options[] = {
	{ "budget", required_argument, NULL, 'B' },
	{ "baseline", required_argument, NULL, 'b' },
	{ "baseline-file", required_argument, NULL, 'F' },
	{ "junit", required_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int cmd_gate(int argc, char **argv)
{
	const char *budget_path = NULL, *given = NULL, *bname, *baseline_file = NULL;
	const char *junit = NULL;
	char *budget_abs = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:h", gate_options, NULL)) != -1) {
		switch (c) {
		case 'B': budget_path = optarg; break;
		case 'b': given = optarg; break;
		case 'F': baseline_file = optarg; break;
		case 'j': junit = optarg; break;
		case 'h': usage_of("gate", stdout); return EXIT_PASS;
		case ':': return bad_usage("gate", "%s needs a value", argv[optind - 1]);
		default: return bad_usage("gate", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return bad_usage("gate", "no report to judge");

	int status = EXIT_USAGE;
	struct mc_budget *budget = NULL;
	struct group *groups = NULL;
	size_t ng = 0;
	struct recs all = { 0 };
	if (budget_path && !(budget = load_budget(budget_path, &budget_abs)))
		goto out;
	if (pick_baseline("gate", given, budget, &bname))
		goto out;
	if (baseline_file) {
		groups = xcalloc(1, sizeof *groups);
		ng = 1;
		if (!read_baseline_file(&groups[0], baseline_file, bname))
			goto out;
	}
	if (!read_all(&all, argv + optind, argc - optind))
		goto out;
	/* one group per allocator, in the order they appear */
	for (size_t i = 0; i < all.n; i++)
		group_add(group_for(&groups, &ng, all.v[i].m.allocator), &all.v[i]);
	free(all.v);
	all.v = NULL;
	all.n = 0;
	for (size_t i = 0; i < ng; i++) {
		if (!baseline_file && strcmp(groups[i].label, bname) == 0)
			groups[i].baseline = true;
		group_number(&groups[i]);
	}

	size_t failed = evaluate(groups, ng, budget, budget_abs), total = 0;
	for (size_t i = 0; i < ng; i++) {
		const struct group *g = &groups[i];
		if (g->stored)
			continue;
		for (int rep = 0; rep < g->nreps; rep++)
		for (size_t k = 0; k < g->reps[rep].n; k++) {
			const struct rec *r = &g->reps[rep].v[k];
			total++;
			if (!r->fail)
				continue;
			char *prog = printable(base_name(r->m.program), 0);
			char *name = printable(r->m.r.name, 0);
			printf("FAIL %s \"%s\"", prog, name);
			if (r->occ)
				printf(" #%zu", r->occ + 1);
			printf(" (%s, pid %d):", r->m.allocator, r->m.pid);
			free(prog);
			free(name);
			/* the library's messages, then the CLI's that are new */
			const char *sep = " ";
			for (int which = 0; which < 2; which++) {
				const char *v = which ? r->cli : r->m.r.violations;
				while (*v) {
					const char *end = strstr(v, "; ");
					size_t len = end ? (size_t)(end - v) : strlen(v);
					char *one = xasprintf("%.*s", (int)len, v);
					if (!which || !strstr(r->m.r.violations, one)) {
						printf("%s%s", sep, short_path(one));
						sep = "; ";
					}
					free(one);
					v += len + (end ? 2 : 0);
				}
			}
			if (!strcmp(sep, " "))
				printf(" verdict fail");
			printf("\n");
		}
	}
	printf("memcheck gate: %zu record%s, %zu failed\n", total, total == 1 ? "" : "s", failed);
	status = failed ? EXIT_GATE : EXIT_PASS;
	if (junit && !write_junit(junit, groups, ng, NULL))
		status = EXIT_USAGE;
out:
	recs_free(&all);
	for (size_t i = 0; i < ng; i++)
		group_free(&groups[i]);
	free(groups);
	if (budget)
		mc_budget_free(budget);
	free(budget_abs);
	return status;
}

/* ---- compare --------------------------------------------------------- */

static int cmd_compare(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage_of("compare", stdout);
		return EXIT_PASS;
	}
	int first = argc > 1 && !strcmp(argv[1], "--") ? 2 : 1;
	if (argc - first != 2)
		return bad_usage("compare", "expected two reports, A (the baseline) and B");
	for (int i = first; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return bad_usage("compare", "unknown option %s", argv[i]);

	struct recs in[2] = { { 0 } };
	struct group *groups = NULL;
	size_t ng = 0;
	int status = EXIT_USAGE;
	bool ok = true;
	for (int f = 0; f < 2; f++)
		ok &= read_all(&in[f], argv + first + f, 1);
	if (!ok)
		goto out;
	/* A group per file and allocator; labelled by the allocator alone
	 * when no allocator is in both files (glibc.jsonl vs mimalloc.jsonl),
	 * else by file too (before.jsonl:glibc vs after.jsonl:glibc), and
	 * by A and B when the files have the same name. */
	bool shared = false;
	for (size_t i = 0; i < in[0].n && !shared; i++)
		for (size_t j = 0; j < in[1].n && !shared; j++)
			shared = !strcmp(in[0].v[i].m.allocator, in[1].v[j].m.allocator);
	const char *fname[2] = { base_name(argv[first]), base_name(argv[first + 1]) };
	if (!strcmp(fname[0], fname[1]))
		fname[0] = "A", fname[1] = "B";
	for (int f = 0; f < 2; f++) {
		size_t from = ng;   /* this file's groups */
		for (size_t i = 0; i < in[f].n; i++) {
			char *label = shared ? xasprintf("%s:%s", fname[f], in[f].v[i].m.allocator)
					     : xstrdup(in[f].v[i].m.allocator);
			size_t g = from;
			while (g < ng && strcmp(groups[g].label, label))
				g++;
			if (g == ng)
				group_new(&groups, &ng, label);
			free(label);
			group_add(&groups[g], &in[f].v[i]);
		}
		free(in[f].v);
		in[f].v = NULL;
		in[f].n = 0;
	}
	groups[0].baseline = true;
	for (size_t i = 0; i < ng; i++)
		group_number(&groups[i]);
	evaluate(groups, ng, NULL, NULL);
	char *title = xasprintf("memcheck compare: %s (baseline) and %s", argv[first],
				argv[first + 1]);
	print_table(stdout, groups, ng, title);
	free(title);
	status = EXIT_PASS;
out:
	for (int f = 0; f < 2; f++)
		recs_free(&in[f]);
	for (size_t i = 0; i < ng; i++)
		group_free(&groups[i]);
	free(groups);
	return status;
}

/* ---- main ------------------------------------------------------------ */

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage_of(NULL, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage_of(NULL, stdout);
		return EXIT_PASS;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("memcheck %s\n", MEMCHECK_VERSION);
		return EXIT_PASS;
	}
	if (cmd[0] == '-')
		return cmd_vgcompat(argc, argv);
	if (!strcmp(cmd, "help")) {
		if (argc == 2) {
			usage_of(NULL, stdout);
			return EXIT_PASS;
		}
		for (size_t i = 0; i < MC_ARRAY_SIZE(helps); i++)
			if (helps[i].cmd && !strcmp(helps[i].cmd, argv[2])) {
				usage_of(argv[2], stdout);
				return EXIT_PASS;
			}
		return bad_usage(NULL, "no command '%s' (commands: run, compare, gate, oom, report)", argv[2]);
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(cmd, "gate"))
		return cmd_gate(argc - 1, argv + 1);
	if (!strcmp(cmd, "oom"))
		return cmd_oom(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	return bad_usage(NULL, "unknown command '%s' (commands: run, compare, gate, oom, report)", cmd);
}
