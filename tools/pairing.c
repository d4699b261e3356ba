/*
 * pairing.c - which records are one region: across the runs of one
 * allocator (a series, whose measured figures are judged on their
 * median), and between an allocator's record and the baseline's (the
 * record its relative limits compare with, and the table's row, the
 * JUnit testcase and the HTML's region it is shown in: one pairing for
 * all of them).
 *
 * A region under one allocator goes with the same region under the
 * baseline by program basename, region name, the key of the process's
 * arguments ("args_hash") and occurrence: the k-th record of that
 * program, region and key in one run goes with the k-th in the other
 * (counted round where the baseline has fewer).  A suite whose forked
 * tests each end one region thus lines up test by test, a region a
 * program ends in a loop iteration by iteration, and a suite's runs of
 * one program on many inputs input by input, in whatever order a
 * parallel driver (ctest -j, make -j) ended them: by occurrence alone,
 * under ctest -j2, 194 of jansson's 196 json_process records were
 * paired with another input's (field41).  Where the baseline has no
 * record of that key (a report written before the key, arguments
 * naming a temporary file), the k-th of the program and region, counting
 * all of them.  Where a record has the key of its arguments' files too
 * ("args_files": what the files its arguments name hold, progname.c)
 * and the baseline has records of both keys, the k-th of both keys
 * first: one file name that a suite rewrites for each case (xz's
 * tmp_comp_<input>) then pairs case by case.  Only there: a file the
 * processes write themselves holds other bytes in each run.
 *
 * A record so paired by its rank among all is shown in its baseline
 * record's row: before field43 the table put it in a row of its own,
 * its "vs" column empty, while the budget judged it against a record
 * shown in another row.
 *
 * Everything is looked up in tables built once (strings numbered, then
 * each list of records that share a program, region, key and rank laid
 * out in one array): session 42's scans of every record for every
 * record took 3.4 s for 8,435 records, O(n^2), and a suite under four
 * allocators has tens of thousands (doc/costs.md, "Whole suites").
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- strings numbered ---------------------------------------------------- */

/* Each distinct string (a program's basename and a region's name, or an
 * arguments' key) gets a number from 1 on; the tables below compare
 * numbers. */
struct str_slot {
	char *s;
	size_t len;
	uint64_t h;
	uint32_t id;   /* 0: empty slot */
};
struct strtab {
	struct str_slot *slot;
	size_t cap, n;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* ---- open addressing ---------------------------------------------------- */

/* An open-addressing table's slots (each size bytes, *cap of them, a
 * power of two) grown to twice as many (first where there are none),
 * each used slot moved to its hash's place or the next free one after
 * it: the string table's and the tuple table's growth, one loop. */
static void *slots_grow(void *slots, size_t *cap, size_t size, size_t first,
			bool (*used)(const void *), uint64_t (*hash)(const void *))
{
	size_t n = *cap ? *cap * 2 : first;
	char *to = xcalloc(n, size);
	for (size_t i = 0; i < *cap; i++) {
		const char *from = (const char *)slots + i * size;
		if (!used(from))
			continue;
		size_t j = hash(from) & (n - 1);
		while (used(to + j * size))
			j = (j + 1) & (n - 1);
		memcpy(to + j * size, from, size);
	}
	free(slots);
	*cap = n;
	return to;
}

static bool str_used(const void *s)
{
	return ((const struct str_slot *)s)->id != 0;
}

static uint64_t str_hash(const void *s)
{
	return ((const struct str_slot *)s)->h;
}

/* The number of the len bytes at s, given one when add; 0 when absent. */
static uint32_t str_id(struct strtab *t, const char *s, size_t len, bool add)
{
	if (add && t->n * 2 >= t->cap)
		t->slot = slots_grow(t->slot, &t->cap, sizeof *t->slot, 64, str_used, str_hash);
	if (!t->cap)
		return 0;
	uint64_t h = mix(mc_fnv1a(s, len));
	size_t j = h & (t->cap - 1);
	for (; t->slot[j].id; j = (j + 1) & (t->cap - 1))
		if (t->slot[j].h == h && t->slot[j].len == len && !memcmp(t->slot[j].s, s, len))
			return t->slot[j].id;
	if (!add)
		return 0;
	char *copy = xmalloc(len + 1);
	memcpy(copy, s, len);
	copy[len] = 0;
	t->slot[j] = (struct str_slot){ copy, len, h, (uint32_t)++t->n };
	return t->slot[j].id;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slot[i].s);
	free(t->slot);
	memset(t, 0, sizeof *t);
}

/* A record's region (basename "\0" name) and arguments' key by number;
 * 0 for a region not numbered (when !add), and for no key. */
static void rec_ids(struct strtab *regions, struct strtab *args, const struct rec *r, bool add,
		    uint32_t *rid, uint32_t *aid, uint32_t *fid)
{
	const char *b = base_name(r->m.program);
	size_t bl = strlen(b), nl = strlen(r->m.r.name);
	char stack[512], *s = bl + nl + 1 <= sizeof stack ? stack : xmalloc(bl + nl + 1);
	memcpy(s, b, bl);
	s[bl] = 0;
	memcpy(s + bl + 1, r->m.r.name, nl);
	*rid = str_id(regions, s, bl + 1 + nl, add);
	if (s != stack)
		free(s);
	size_t al = strlen(r->m.args_hash), fl = strlen(r->m.args_files);
	*aid = al ? str_id(args, r->m.args_hash, al, add) : 0;
	/* the files' key numbered among the arguments' (another string) */
	*fid = al && fl ? str_id(args, r->m.args_files, fl, add) : 0;
}

/* ---- lists of records by a tuple ---------------------------------------- */

/* What a list is of: a region's records of one key and rank over the
 * runs (SER_*, a series), of one run (RUN_*, what a record is paired
 * among), or of one table row (ROW). */
enum kind {
	SER_KEYED = 1,   /* (region, key, rank among the key): records with a key */
	SER_BARE,        /* (region, rank among all): records without one */
	SER_ALL,         /* (region, rank among all): every record */
	RUN_ALL,         /* (region, run) */
	RUN_KEYED,       /* (region, key, run) */
	RUN_FILES,       /* (region, key, files' key, run) */
	ROW,             /* (row) */
	/* the rows' own look-up: the first row whose first record has this */
	ROW_KEYED,       /* (region, key, rank among the key), first with a key */
	ROW_BARE,        /* (region, rank), first without a key */
	ROW_ALL,         /* (region, rank), any first */
};

struct tup {
	uint32_t kind, rid, aid, fid;
	uint64_t k;
};

/* 32 bytes, where size_t start, count and fill and a flag made 56: a
 * suite's records each have a few lists of their own (a region's rank,
 * its row), and these slots were half the memory gate needed for 10^5
 * records (harden47).  A list never holds 2^32 records: each takes
 * hundreds of bytes.  Used: t.kind (never 0).  start is the filling's
 * cursor until tmap_filled. */
struct tslot {
	struct tup t;
	uint32_t start, count;
};

/* Tuples to lists: each list a run of positions in one array (list),
 * in the order they were added. */
struct tmap {
	struct tslot *slot;
	size_t cap, n;
	size_t *list;
};

static uint64_t tup_hash(const struct tup *t)
{
	return mix(((uint64_t)t->kind << 58 ^ (uint64_t)t->rid << 29 ^ t->aid) * 0x9e3779b97f4a7c15ULL ^
		   mix(t->k ^ (uint64_t)t->fid << 40));
}

static bool tslot_used(const void *s)
{
	return ((const struct tslot *)s)->t.kind != 0;
}

static uint64_t tslot_hash(const void *s)
{
	return tup_hash(&((const struct tslot *)s)->t);
}

static struct tslot *tmap_at(struct tmap *m, struct tup t, bool add)
{
	/* grown at three quarters full (half full took a third more) */
	if (add && m->n * 4 >= m->cap * 3)
		m->slot = slots_grow(m->slot, &m->cap, sizeof *m->slot, 16, tslot_used, tslot_hash);
	if (!m->cap)
		return NULL;
	size_t j = tup_hash(&t) & (m->cap - 1);
	for (; m->slot[j].t.kind; j = (j + 1) & (m->cap - 1))
		if (!memcmp(&m->slot[j].t, &t, sizeof t))
			return &m->slot[j];
	if (!add)
		return NULL;
	m->n++;
	m->slot[j] = (struct tslot){ .t = t };
	return &m->slot[j];
}

/* A tmap's lists laid out once every tuple has been counted (count):
 * each list's start, then tmap_fill adds the positions in order, and
 * tmap_filled sets each start back. */
static void tmap_layout(struct tmap *m)
{
	size_t at = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].t.kind) {
			m->slot[i].start = (uint32_t)at;
			at += m->slot[i].count;
		}
	m->list = xmalloc((at ? at : 1) * sizeof *m->list);
}

static void tmap_fill(struct tmap *m, struct tup t, size_t pos)
{
	struct tslot *s = tmap_at(m, t, false);
	m->list[s->start++] = pos;
}

static void tmap_filled(struct tmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].t.kind)
			m->slot[i].start -= m->slot[i].count;
}

static void tmap_free(struct tmap *m)
{
	free(m->slot);
	free(m->list);
	memset(m, 0, sizeof *m);
}

/* The list of t: its positions in *out, its length. */
static size_t tmap_get(const struct tmap *m, struct tup t, const size_t **out)
{
	struct tslot *s = tmap_at((struct tmap *)m, t, false);
	*out = s ? m->list + s->start : NULL;
	return s ? s->count : 0;
}

/* ---- numbering ------------------------------------------------------------ */

void recs_number(struct recs *rs)
{
	struct strtab regions = { 0 }, args = { 0 };
	struct tmap m = { 0 };
	for (size_t i = 0; i < rs->n; i++) {
		struct rec *r = &rs->v[i];
		uint32_t rid, aid, fid;
		rec_ids(&regions, &args, r, true, &rid, &aid, &fid);
		/* every record with the same (possibly empty) key: a record
		 * without one counts the others without one */
		r->occ = tmap_at(&m, (struct tup){ .kind = RUN_ALL, .rid = rid }, true)->count++;
		r->kocc = tmap_at(&m, (struct tup){ .kind = RUN_KEYED, .rid = rid, .aid = aid },
				  true)->count++;
		r->focc = fid ? tmap_at(&m, (struct tup){ .kind = RUN_FILES, .rid = rid, .aid = aid,
							  .fid = fid }, true)->count++ : 0;
	}
	tmap_free(&m);
	strtab_free(&regions);
	strtab_free(&args);
}

bool same_key(const struct rec *a, const struct rec *b)
{
	if (strcmp(a->m.r.name, b->m.r.name) != 0 ||
	    strcmp(base_name(a->m.program), base_name(b->m.program)) != 0)
		return false;
	if (a->m.args_hash[0] && b->m.args_hash[0])
		return a->kocc == b->kocc && strcmp(a->m.args_hash, b->m.args_hash) == 0;
	return a->occ == b->occ;
}

/* ---- the pairing ------------------------------------------------------- */

/* One group's records, by position: the runs one after another. */
struct gidx {
	const struct group *g;
	size_t n;
	size_t *off;               /* off[rep]: the position of its first record */
	const struct rec **at;
	uint32_t *rid, *aid, *fid;
	size_t *row;
	struct tmap lists;         /* SER_*, RUN_* */
	struct tmap cells;         /* ROW */
};

struct pairing {
	struct strtab regions, args;
	struct gidx *g;
	size_t ng, base;           /* base: the baseline group, or ng */
	struct key *keys;
	size_t nkeys;
};

static struct tup ser_keyed(uint32_t rid, uint32_t aid, size_t kocc)
{
	return (struct tup){ .kind = SER_KEYED, .rid = rid, .aid = aid, .k = kocc };
}

static struct tup by_rank(enum kind kind, uint32_t rid, size_t occ)
{
	return (struct tup){ .kind = kind, .rid = rid, .k = occ };
}

static struct tup run_keyed(uint32_t rid, uint32_t aid, int rep)
{
	return (struct tup){ .kind = RUN_KEYED, .rid = rid, .aid = aid, .k = (uint64_t)rep };
}

static struct tup run_files(uint32_t rid, uint32_t aid, uint32_t fid, int rep)
{
	return (struct tup){ .kind = RUN_FILES, .rid = rid, .aid = aid, .fid = fid,
			     .k = (uint64_t)rep };
}

/* The tuples of the lists a record is on (SER_* and RUN_*). */
static size_t lists_of(const struct gidx *x, size_t pos, int rep, struct tup t[5])
{
	const struct rec *r = x->at[pos];
	uint32_t rid = x->rid[pos], aid = x->aid[pos], fid = x->fid[pos];
	t[0] = aid ? ser_keyed(rid, aid, r->kocc) : by_rank(SER_BARE, rid, r->occ);
	t[1] = by_rank(SER_ALL, rid, r->occ);
	t[2] = by_rank(RUN_ALL, rid, (size_t)rep);
	t[3] = run_keyed(rid, aid, rep);
	t[4] = run_files(rid, aid, fid, rep);
	return fid ? 5 : 4;
}

static void index_group(struct pairing *p, struct gidx *x, const struct group *g)
{
	x->g = g;
	x->off = xcalloc((size_t)g->nreps + 1, sizeof *x->off);
	for (int rep = 0; rep < g->nreps; rep++)
		x->off[rep + 1] = x->off[rep] + g->reps[rep].n;
	x->n = x->off[g->nreps];
	size_t n1 = x->n ? x->n : 1;
	x->at = xmalloc(n1 * sizeof *x->at);
	x->rid = xmalloc(n1 * sizeof *x->rid);
	x->aid = xmalloc(n1 * sizeof *x->aid);
	x->fid = xmalloc(n1 * sizeof *x->fid);
	x->row = xmalloc(n1 * sizeof *x->row);
	for (int rep = 0; rep < g->nreps; rep++)
		for (size_t i = 0; i < g->reps[rep].n; i++) {
			size_t pos = x->off[rep] + i;
			x->at[pos] = &g->reps[rep].v[i];
			rec_ids(&p->regions, &p->args, x->at[pos], true, &x->rid[pos], &x->aid[pos],
				&x->fid[pos]);
		}
	struct tup t[5];
	for (int pass = 0; pass < 2; pass++) {
		for (int rep = 0; rep < g->nreps; rep++)
			for (size_t pos = x->off[rep]; pos < x->off[rep + 1]; pos++) {
				size_t nt = lists_of(x, pos, rep, t);
				for (size_t i = 0; i < nt; i++)
					if (pass)
						tmap_fill(&x->lists, t[i], pos);
					else
						tmap_at(&x->lists, t[i], true)->count++;
			}
		if (!pass)
			tmap_layout(&x->lists);
	}
	tmap_filled(&x->lists);
}

/* The position in the baseline group of the record r (of run rep of
 * group gi) is paired with, or SIZE_MAX. */
static size_t base_pos(const struct pairing *p, size_t gi, int rep, const struct rec *r)
{
	if (p->base == p->ng || gi == p->base)
		return SIZE_MAX;
	const struct gidx *b = &p->g[p->base];
	/* a stored baseline, or one run fewer: its first run */
	int brep = b->g->stored || rep >= b->g->nreps ? 0 : rep;
	if (brep >= b->g->nreps)
		return SIZE_MAX;
	uint32_t rid, aid, fid;
	rec_ids((struct strtab *)&p->regions, (struct strtab *)&p->args, r, false, &rid, &aid, &fid);
	if (!rid || (r->m.args_hash[0] && !aid))
		aid = UINT32_MAX;   /* a key no baseline record has */
	const size_t *all, *keyed, *filed;
	size_t m = rid ? tmap_get(&b->lists, by_rank(RUN_ALL, rid, (size_t)brep), &all) : 0;
	if (!m)
		return SIZE_MAX;
	size_t mf = fid ? tmap_get(&b->lists, run_files(rid, aid, fid, brep), &filed) : 0;
	if (mf)
		return filed[r->focc % mf];
	size_t mk = tmap_get(&b->lists, run_keyed(rid, aid, brep), &keyed);
	return mk ? keyed[r->kocc % mk] : all[r->occ % m];
}

const struct rec *pairing_base(const struct pairing *p, size_t gi, int rep, const struct rec *r)
{
	size_t pos = base_pos(p, gi, rep, r);
	return pos == SIZE_MAX ? NULL : p->g[p->base].at[pos];
}

size_t pairing_series(const struct pairing *p, size_t gi, const struct rec *like,
		      const struct rec ***out)
{
	const struct gidx *x = &p->g[gi];
	uint32_t rid, aid, fid;
	rec_ids((struct strtab *)&p->regions, (struct strtab *)&p->args, like, false, &rid, &aid, &fid);
	const size_t *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	if (rid && like->m.args_hash[0]) {
		/* same_key: of its key and rank among the key, or of its rank
		 * among all where the other has no key */
		na = aid ? tmap_get(&x->lists, ser_keyed(rid, aid, like->kocc), &a) : 0;
		nb = tmap_get(&x->lists, by_rank(SER_BARE, rid, like->occ), &b);
	} else if (rid) {
		na = tmap_get(&x->lists, by_rank(SER_ALL, rid, like->occ), &a);
	}
	const struct rec **v = xmalloc((na + nb ? na + nb : 1) * sizeof *v);
	size_t n = 0, i = 0, j = 0;
	while (i < na || j < nb)   /* both in order of position: merged */
		v[n++] = x->at[j >= nb || (i < na && a[i] < b[j]) ? a[i++] : b[j++]];
	*out = v;
	return n;
}

/* ---- rows -------------------------------------------------------------- */

/* A record's row where it has no baseline record: the first row whose
 * first record is of the same region (same_key), else a new one. */
static size_t row_by_key(struct pairing *p, struct tmap *rows, const struct gidx *x, size_t pos)
{
	const struct rec *r = x->at[pos];
	uint32_t rid = x->rid[pos], aid = x->aid[pos];
	size_t row = SIZE_MAX;
	struct tslot *s;
	struct tup keyed = { .kind = ROW_KEYED, .rid = rid, .aid = aid, .k = r->kocc };
	if (aid) {
		if ((s = tmap_at(rows, keyed, false)))
			row = s->start;
		s = tmap_at(rows, by_rank(ROW_BARE, rid, r->occ), false);
		if (s && s->start < row)
			row = s->start;
	} else if ((s = tmap_at(rows, by_rank(ROW_ALL, rid, r->occ), false))) {
		row = s->start;
	}
	if (row != SIZE_MAX)
		return row;
	row = p->nkeys++;
	p->keys = xrealloc(p->keys, p->nkeys * sizeof *p->keys);
	p->keys[row] = (struct key){ r, r->occ };
	struct tup t[2] = { by_rank(ROW_ALL, rid, r->occ),
			    aid ? keyed : by_rank(ROW_BARE, rid, r->occ) };
	for (int i = 0; i < 2; i++) {
		s = tmap_at(rows, t[i], true);
		if (!s->count++)
			s->start = (uint32_t)row;
	}
	return row;
}

/* Every record's row: the baseline's by region (same_key), in the order
 * they first appear; another allocator's, its baseline record's row
 * where it has one, else as the baseline's.  Then each group's cells. */
static void assign_rows(struct pairing *p)
{
	struct tmap rows = { 0 };
	for (int pass = 0; pass < 2; pass++)
		for (size_t gi = 0; gi < p->ng; gi++) {
			struct gidx *x = &p->g[gi];
			if (x->g->baseline != (pass == 0))
				continue;
			for (int rep = 0; rep < x->g->nreps; rep++)
				for (size_t pos = x->off[rep]; pos < x->off[rep + 1]; pos++) {
					size_t b = base_pos(p, gi, rep, x->at[pos]);
					x->row[pos] = b != SIZE_MAX ? p->g[p->base].row[b] :
								      row_by_key(p, &rows, x, pos);
				}
		}
	tmap_free(&rows);
	for (size_t gi = 0; gi < p->ng; gi++) {
		struct gidx *x = &p->g[gi];
		for (size_t pos = 0; pos < x->n; pos++)
			tmap_at(&x->cells, by_rank(ROW, 0, x->row[pos]), true)->count++;
		tmap_layout(&x->cells);
		for (size_t pos = 0; pos < x->n; pos++)
			tmap_fill(&x->cells, by_rank(ROW, 0, x->row[pos]), pos);
		tmap_filled(&x->cells);
	}
}

struct pairing *pairing_new(const struct group *groups, size_t ng)
{
	struct pairing *p = xcalloc(1, sizeof *p);
	p->ng = p->base = ng;
	p->g = xcalloc(ng ? ng : 1, sizeof *p->g);
	for (size_t gi = 0; gi < ng; gi++) {
		if (groups[gi].baseline && p->base == ng)
			p->base = gi;
		index_group(p, &p->g[gi], &groups[gi]);
	}
	assign_rows(p);
	return p;
}

void pairing_free(struct pairing *p)
{
	if (!p)
		return;
	for (size_t gi = 0; gi < p->ng; gi++) {
		struct gidx *x = &p->g[gi];
		free(x->off);
		free(x->at);
		free(x->rid);
		free(x->aid);
		free(x->fid);
		free(x->row);
		tmap_free(&x->lists);
		tmap_free(&x->cells);
	}
	free(p->g);
	free(p->keys);
	strtab_free(&p->regions);
	strtab_free(&p->args);
	free(p);
}

const struct key *pairing_rows(const struct pairing *p, size_t *nkeys)
{
	*nkeys = p->nkeys;
	return p->keys;
}

size_t pairing_cell(const struct pairing *p, size_t row, size_t gi, const struct rec ***out)
{
	const struct gidx *x = &p->g[gi];
	const size_t *l;
	size_t n = tmap_get(&x->cells, by_rank(ROW, 0, row), &l);
	const struct rec **v = xmalloc((n ? n : 1) * sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = x->at[l[i]];
	*out = v;
	return n;
}
