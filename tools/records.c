/*
 * records.c - report files read back, and records matched across
 * allocators.
 *
 * A region under one allocator is matched with the same region under the
 * baseline allocator by program basename, region name and occurrence: the
 * k-th record of that program and region in one run goes with the k-th in
 * the other.  A suite whose forked tests each end one region thus lines
 * up test by test, and a region a program ends in a loop lines up
 * iteration by iteration.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void recs_push(struct recs *out, const struct rec *r)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? out->cap * 2 : 16;
		out->v = xrealloc(out->v, out->cap * sizeof *out->v);
	}
	out->v[out->n++] = *r;
}

void recs_free(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].line);
	free(rs->v);
	rs->v = NULL;
	rs->n = rs->cap = 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

int recs_read(struct recs *out, const char *path, bool missing_ok)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		if (missing_ok && errno == ENOENT)
			return 0;
		say("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, bad = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		size_t len = (size_t)n;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		/* Blank lines carry nothing; JSON Lines readers skip them. */
		if (blank(line, len))
			continue;
		struct rec r;
		char err[256];
		memset(&r, 0, sizeof r);
		if (memchr(line, 0, len)) {
			fprintf(stderr, "%s:%d: column %zu: expected JSON text, got a NUL byte\n",
				path, lineno, (size_t)((char *)memchr(line, 0, len) - line) + 1);
			bad++;
			continue;
		}
		if (!mc_json_record(line, len, &r.m, err, sizeof err)) {
			fprintf(stderr, "%s:%d: %s\n", path, lineno, err);
			bad++;
			continue;
		}
		r.line = xstrdup(line);
		recs_push(out, &r);
	}
	if (ferror(f)) {
		say("cannot read %s: %s", path, strerror(errno));
		bad = -1;
	}
	free(line);
	fclose(f);
	return bad;
}

static bool same_region(const struct rec *a, const struct rec *b)
{
	return strcmp(a->m.r.name, b->m.r.name) == 0 &&
	       strcmp(base_name(a->m.program), base_name(b->m.program)) == 0;
}

void recs_number(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		rs->v[i].occ = 0;
		for (size_t j = 0; j < i; j++)
			if (same_region(&rs->v[j], &rs->v[i]))
				rs->v[i].occ++;
	}
}

/* With fewer occurrences in rs than r's, count round: a report of N
 * repetitions then matches a baseline of one repetition, each
 * repetition with it, and a baseline of N repetitions rep by rep. */
const struct rec *recs_match(const struct recs *rs, const struct rec *r)
{
	size_t m = 0;
	for (size_t i = 0; i < rs->n; i++)
		m += same_region(&rs->v[i], r);
	if (!m)
		return NULL;
	size_t want = r->occ % m;
	for (size_t i = 0; i < rs->n; i++)
		if (same_region(&rs->v[i], r) && want-- == 0)
			return &rs->v[i];
	return NULL;
}

static const struct group *baseline_of(const struct group *groups, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		if (groups[i].baseline)
			return &groups[i];
	return NULL;
}

size_t evaluate_rep(struct group *groups, size_t ng, struct group *g, int rep,
		    const struct mc_budget *b)
{
	const struct group *base = baseline_of(groups, ng);
	const struct recs *against = NULL;
	size_t failed = 0;
	if (base && base != g)
		against = base->stored ? &base->reps[0] :
			  rep < base->nreps ? &base->reps[rep] : NULL;
	for (size_t k = 0; k < g->reps[rep].n; k++) {
		struct rec *x = &g->reps[rep].v[k];
		x->cli[0] = 0;
		x->ncli = 0;
		if (b) {
			const struct rec *bl = against ? recs_match(against, x) : NULL;
			x->ncli = mc_budget_check(b, x->m.r.name, x->m.allocator, &x->m.r,
						  bl ? &bl->m.r : NULL, x->cli, sizeof x->cli);
		}
		x->fail = !x->m.r.pass || x->ncli > 0;
		failed += x->fail;
	}
	return failed;
}

size_t evaluate(struct group *groups, size_t ng, const struct mc_budget *b)
{
	size_t failed = 0;
	for (size_t i = 0; i < ng; i++)
		if (!groups[i].stored)
			for (int rep = 0; rep < groups[i].nreps; rep++)
				failed += evaluate_rep(groups, ng, &groups[i], rep, b);
	return failed;
}

void group_free(struct group *g)
{
	for (int i = 0; i < g->nreps; i++)
		recs_free(&g->reps[i]);
	free(g->reps);
	free(g->runs);
	free(g->label);
	free(g->object);
	free(g->skipped);
	memset(g, 0, sizeof *g);
}

const char *short_path(const char *s)
{
	static char cwd[4096];
	static size_t n;
	if (!n && getcwd(cwd, sizeof cwd - 1)) {
		n = strlen(cwd);
		if (n > 1)
			cwd[n++] = '/';
		else
			n = 0; /* "/": nothing worth cutting */
	}
	if (n && strncmp(s, cwd, n) == 0 && s[n])
		return s + n;
	return s;
}
