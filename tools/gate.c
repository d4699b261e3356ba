/*
 * gate.c - `memcheck gate`: judge stored reports in CI, after the runs
 * (MEMCHECK_REPORT files, `memcheck run --report`).  A record fails when
 * its own verdict is fail or when the budget fails it; failing records
 * are listed on stdout, one line each, and the exit status is 1.
 *
 * Records are judged as `memcheck run` judges them (records.c's
 * evaluate): relative limits against the same region of the baseline
 * allocator, taken from the reports themselves or from --baseline-file;
 * measured figures of several runs on their medians.  A record's
 * message list is the library's, then the CLI's own ones that the
 * library did not already say: the library checked the same budget
 * when it was given MEMCHECK_BUDGET, and a violation said twice would
 * read as two.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct option gate_options[] = {
	{ "budget", required_argument, NULL, 'B' },
	{ "baseline", required_argument, NULL, 'b' },
	{ "baseline-file", required_argument, NULL, 'F' },
	{ "junit", required_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct gate_opts {
	const char *budget, *baseline, *baseline_file, *junit;
};

static int gate_option(void *opts, int c, char *arg)
{
	struct gate_opts *o = opts;
	switch (c) {
	case 'B': o->budget = arg; break;
	case 'b': o->baseline = arg; break;
	case 'F': o->baseline_file = arg; break;
	case 'j': o->junit = arg; break;
	}
	return 0;
}

/* "FAIL prog "region" #N (allocator, pid P): message; message"; a
 * failure not counted, of a process that exited non-zero on its own
 * (rec_own_end), "EXITED N prog ..." */
static void print_failure(const struct rec *r)
{
	char *prog = printable(base_name(r->m.program), 0);
	char *name = printable(r->m.r.name, 0);
	if (r->own_end)
		printf("EXITED %u %s \"%s\"", (unsigned)(r->m.exit_status & 0xff), prog, name);
	else
		printf("FAIL %s \"%s\"", prog, name);
	if (r->occ)
		printf(" #%zu", r->occ + 1);
	char *alloc = printable(r->m.allocator, 0);
	printf(" (%s, pid %d):", alloc, r->m.pid);
	free(alloc);
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
				/* escaped as the names are: one FAIL line a
				 * record, no escape reaching the terminal */
				char *shown = printable(short_path(one), 0);
				printf("%s%s", sep, shown);
				free(shown);
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

int cmd_gate(int argc, char **argv)
{
	struct gate_opts o = { 0 };
	int rc = parse_options("gate", argc, argv, ":b:h", gate_options, gate_option, &o,
			       "no report to judge");
	if (rc)
		return rc < 0 ? EXIT_PASS : rc;

	const char *bname;
	char *budget_abs = NULL;
	int status = EXIT_USAGE;
	struct mc_budget *budget = NULL;
	struct group *groups = NULL;
	size_t ng = 0;
	struct recs all = { 0 };
	if (o.budget && !(budget = load_budget(o.budget, &budget_abs, NULL)))
		goto out;
	if (pick_baseline("gate", o.baseline, budget, &bname))
		goto out;
	if (o.baseline_file) {
		groups = xcalloc(1, sizeof *groups);
		ng = 1;
		if (!read_baseline_file(&groups[0], o.baseline_file, bname))
			goto out;
	}
	if (!read_all(&all, argv + optind, argc - optind))
		goto out;
	group_by_allocator(&all, &groups, &ng, bname);

	size_t failed = evaluate(groups, ng, budget, budget_abs), total = 0, by_vg = 0;
	for (size_t i = 0; i < ng; i++) {
		const struct group *g = &groups[i];
		if (g->stored)
			continue;
		by_vg += recs_vg_exit(g->reps, (size_t)g->nreps);
		for (int rep = 0; rep < g->nreps; rep++)
		for (size_t k = 0; k < g->reps[rep].n; k++) {
			total++;
			if (g->reps[rep].v[k].fail)
				print_failure(&g->reps[rep].v[k]);
		}
	}
	size_t own = 0;
	for (size_t i = 0; i < ng; i++)
		for (int rep = 0; rep < groups[i].nreps && !groups[i].stored; rep++)
			for (size_t k = 0; k < groups[i].reps[rep].n; k++)
				own += groups[i].reps[rep].v[k].own_end;
	printf("memcheck gate: %zu record%s, %zu failed", total, total == 1 ? "" : "s", failed);
	if (own)
		printf(", %zu more in a process that exited non-zero on its own (not counted: "
		       "its status told its caller)", own);
	/* their figures unknown, not zero: a budget that names one fails
	 * ("not measured"), none passes them as clean */
	if (by_vg)
		printf(", %zu not measured (memcheck bypassed by valgrind's malloc: "
		       "valgrind's own exit judged %s)", by_vg, by_vg == 1 ? "it" : "them");
	printf("\n");
	char lim[16];
	uint64_t lim_bytes, lim_own;
	size_t short_n = limit_shortfalls(groups, ng, lim, &lim_bytes, &lim_own);
	if (short_n)
		printf("memcheck gate: %zu record%s: allocations failed under %s of %.1f MiB, which "
		       "counted memcheck's own mappings too (up to %.1f MiB; soft and hard limits "
		       "one): the program had less room than without memcheck (memcheck(7), "
		       "Limits)\n", short_n, short_n == 1 ? "" : "s", lim,
		       (double)lim_bytes / 1048576.0, (double)lim_own / 1048576.0);
	status = failed ? EXIT_GATE : EXIT_PASS;
	if (o.junit && !write_junit(o.junit, groups, ng, NULL))
		status = EXIT_USAGE;
out:
	recs_free(&all);
	groups_free(groups, ng);
	if (budget)
		mc_budget_free(budget);
	free(budget_abs);
	return status;
}
