/*
 * report.c - `memcheck report`: stored reports as pictures.  The HTML
 * page of every region under every allocator (html.c), and a record's
 * peak snapshot and timeline in the formats of other tools (export.c):
 * folded stacks for flame graphs, massif's out-file for ms_print and
 * massif-visualizer.
 *
 * Records are grouped by allocator and judged as `memcheck gate` judges
 * them (with --budget, the budget's limits are also drawn); --region,
 * --allocator and --run (of a report of several runs, memcheck run
 * --report; the first by default) choose which records the exports take.  massif's format
 * holds one run of one program, so --massif wants exactly one record and
 * lists the candidates when the choice is not one.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct option report_options[] = {
	{ "html", required_argument, NULL, 'H' },
	{ "folded", required_argument, NULL, 'F' },
	{ "massif", required_argument, NULL, 'M' },
	{ "budget", required_argument, NULL, 'B' },
	{ "baseline", required_argument, NULL, 'b' },
	{ "region", required_argument, NULL, 'R' },
	{ "allocator", required_argument, NULL, 'A' },
	{ "run", required_argument, NULL, 'N' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct report_opts {
	const char *html, *folded, *massif, *budget, *baseline, *region, *allocator;
	int run;                 /* the repetition exports take, from 1 */
};

static bool chosen(const struct report_opts *o, const struct rec *r, int rep)
{
	return rep + 1 == o->run &&
	       (!o->region || fnmatch(o->region, r->m.r.name, 0) == 0) &&
	       (!o->allocator || fnmatch(o->allocator, r->m.allocator, 0) == 0);
}

/* Every chosen record of every group, in the groups' order. */
static size_t choose(const struct report_opts *o, struct group *groups, size_t ng,
		     const struct rec ***out)
{
	const struct rec **v = NULL;
	size_t n = 0;
	for (size_t gi = 0; gi < ng; gi++)
		for (int rep = 0; rep < groups[gi].nreps; rep++)
			for (size_t i = 0; i < groups[gi].reps[rep].n; i++) {
				const struct rec *r = &groups[gi].reps[rep].v[i];
				if (!chosen(o, r, rep))
					continue;
				v = xrealloc(v, (n + 1) * sizeof *v);
				v[n++] = r;
			}
	*out = v;
	return n;
}

static bool write_folded(const char *path, const struct rec *const *v, size_t n)
{
	FILE *f = open_written(path);
	if (!f)
		return false;
	for (size_t i = 0; i < n; i++) {
		struct detail d;
		detail_read(v[i], &d);
		export_folded(f, v[i], &d);
		detail_free(&d);
	}
	return close_written(f, path);
}

static bool write_massif(const char *path, const struct rec *const *v, size_t n)
{
	if (n != 1) {
		say("--massif writes one record, and %zu are chosen%s", n,
		    n ? "; choose one with --region and --allocator:" : "");
		for (size_t i = 0; i < n && i < 20; i++) {
			char *name = printable(v[i]->m.r.name, v[i]->occ);
			fprintf(stderr, "  --region '%s' --allocator %s   (%s, pid %d)\n", name,
				v[i]->m.allocator, base_name(v[i]->m.program), v[i]->m.pid);
			free(name);
		}
		return false;
	}
	FILE *f = open_written(path);
	if (!f)
		return false;
	struct detail d;
	detail_read(v[0], &d);
	if (!d.tl.have && !d.peak.have)
		say("%s: the record has neither a timeline (MEMCHECK_TIMELINE) nor a peak snapshot "
		    "(MEMCHECK_PEAK_SITES): the file has no snapshots", path);
	export_massif(f, v[0], &d);
	detail_free(&d);
	return close_written(f, path);
}

static int report_option(void *opts, int c, char *arg)
{
	struct report_opts *o = opts;
	char *end;
	switch (c) {
	case 'H': o->html = arg; break;
	case 'F': o->folded = arg; break;
	case 'M': o->massif = arg; break;
	case 'B': o->budget = arg; break;
	case 'b': o->baseline = arg; break;
	case 'R': o->region = arg; break;
	case 'A': o->allocator = arg; break;
	case 'N':
		/* checked as a long: 4294967297 cast first was run 1 (harden46) */
		errno = 0;
		long n = strtol(arg, &end, 10);
		if (errno || end == arg || *end || n < 1 || n > 1000 || isspace((unsigned char)*arg))
			return bad_usage("report", "--run %s: expected a run from 1 to 1000", arg);
		o->run = (int)n;
		break;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .run = 1 };
	int rc = parse_options("report", argc, argv, ":b:h", report_options, report_option, &o,
			       "no report to read");
	if (rc)
		return rc < 0 ? EXIT_PASS : rc;
	if (!o.html && !o.folded && !o.massif)
		return bad_usage("report", "nothing to write: give --html, --folded or --massif");

	int status = EXIT_USAGE;
	struct mc_budget *budget = NULL;
	char *budget_abs = NULL, *sources = NULL;
	const char *bname;
	struct group *groups = NULL;
	size_t ng = 0;
	struct recs all = { 0 };
	const struct rec **chosen_v = NULL;
	if (o.budget && !(budget = load_budget(o.budget, &budget_abs, NULL)))
		goto out;
	if (pick_baseline("report", o.baseline, budget, &bname))
		goto out;
	if (!read_all(&all, argv + optind, argc - optind))
		goto out;
	group_by_allocator(&all, &groups, &ng, bname);
	evaluate(groups, ng, budget, budget_abs);

	bool ok = true;
	size_t n = choose(&o, groups, ng, &chosen_v);
	if ((o.folded || o.massif) && !n && (o.region || o.allocator)) {
		say("no record matches --region %s --allocator %s", o.region ? o.region : "*",
		    o.allocator ? o.allocator : "*");
		goto out;
	}
	if (o.html) {
		sources = xstrdup("from");
		for (int i = optind; i < argc; i++) {
			char *s = xasprintf("%s %s", sources, argv[i]);
			free(sources);
			sources = s;
		}
		ok &= write_html(o.html, groups, ng, sources, budget);
	}
	if (o.folded)
		ok &= write_folded(o.folded, chosen_v, n);
	if (o.massif)
		ok &= write_massif(o.massif, chosen_v, n);
	status = ok ? EXIT_PASS : EXIT_USAGE;
out:
	free(chosen_v);
	free(sources);
	recs_free(&all);
	groups_free(groups, ng);
	if (budget)
		mc_budget_free(budget);
	free(budget_abs);
	return status;
}
