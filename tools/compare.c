/*
 * compare.c - `memcheck compare A.jsonl B.jsonl`: the table of `memcheck
 * run` from two stored reports, A as the baseline; no command runs and
 * nothing is judged against a budget, so the table goes to stdout.
 *
 * The two files are often two reports of one allocator (before and
 * after a change) or one report per allocator: the columns are labelled
 * by what tells them apart (below), never by a label two columns share,
 * or the table would put two groups under one name.  Only "-h",
 * "--help" and "--" are options: anything else starting with '-' is a
 * mistake, not a file name.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_compare(int argc, char **argv)
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
	groups_free(groups, ng);
	return status;
}
