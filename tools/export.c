/*
 * export.c - a record's peak snapshot and timeline in the formats other
 * tools read: folded stacks (one "frame;frame;...;frame bytes" line per
 * stack, outermost frame first, as flamegraph.pl, inferno and speedscope
 * take them) and massif's out-file (ms_print, massif-visualizer).
 *
 * Traps of massif's format, as ms_print 3.19 reads it: '#' starts a
 * comment anywhere on a line, so no name may hold one; a tree node's
 * bytes may not exceed the snapshot's total (ms_print dies); a node line
 * is "nK: BYTES DETAILS" with K its number of children, each child after
 * it, one more space in.  Folded stacks: ';' separates frames and the
 * last space the count, so ';' and line breaks are replaced in names.
 *
 * The timeline's samples become massif's snapshots, its time unit "B"
 * (bytes allocated and freed, as massif's --time-unit=B counts them).
 * The peak snapshot becomes the detailed "peak" snapshot, put after the
 * sample with the most live bytes (the samples do not say when between
 * two of them the peak was), with the snapshot's own total.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A frame's name for others' formats: function, or its address and
 * object when it has none; bad characters replaced by '_' (bad: what
 * the format reserves, control characters). */
static void put_str(FILE *f, const char *s, const char *bad)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || strchr(bad, *s) ? '_' : *s, f);
}

static void put_name(FILE *f, const struct dframe *fr, const char *bad)
{
	const char *s = fr->function;
	if (!s[0] || !strcmp(s, "?") || !strcmp(s, "???"))
		s = fr->object[0] ? base_name(fr->object) : fr->address;
	put_str(f, s, bad);
}

/* ---- folded stacks ---------------------------------------------------- */

/* One line a site's largest stack, the record's "region (allocator)" as
 * its root frame (several records in one file stay apart); the site's
 * other stacks (a report lists a site's largest one) in one line under
 * the site's label. */
void export_folded(FILE *f, const struct rec *r, const struct detail *d)
{
	for (size_t i = 0; i < d->peak.n; i++) {
		const struct site *s = &d->peak.sites[i];
		put_str(f, r->m.r.name, ";\n");
		fprintf(f, " (%s)", r->m.allocator);
		for (size_t k = s->st.n; k-- > 0;) {
			fputc(';', f);
			put_name(f, &s->st.f[k], ";\n");
		}
		if (!s->st.n)
			fputs(";(no stack)", f);
		fprintf(f, " %llu\n", (unsigned long long)s->stack_bytes);
		if (s->bytes > s->stack_bytes && s->stacks > 1) {
			char *label = site_label(&s->st);
			put_str(f, r->m.r.name, ";\n");
			fprintf(f, " (%s);(%llu more stacks of ", r->m.allocator,
				(unsigned long long)(s->stacks - 1));
			put_str(f, label, ";\n");
			fprintf(f, ") %llu\n", (unsigned long long)(s->bytes - s->stack_bytes));
			free(label);
		}
	}
	if (d->peak.other_bytes && d->peak.other_bytes != MEMCHECK_UNKNOWN) {
		put_str(f, r->m.r.name, ";\n");
		if (d->peak.by_stack)
			fprintf(f, " (%s);(%llu other sites) %llu\n", r->m.allocator,
				(unsigned long long)d->peak.other_sites,
				(unsigned long long)d->peak.other_bytes);
		else
			fprintf(f, " (%s);(other sites, %llu stacks) %llu\n", r->m.allocator,
				(unsigned long long)d->peak.other_stacks,
				(unsigned long long)d->peak.other_bytes);
	}
}

/* ---- massif's out-file ------------------------------------------------ */

/* Whether a and b have frames [0, depth) alike: the same subtree of
 * massif's tree, which starts at the allocation point and grows towards
 * the callers. */
static bool same_prefix(const struct stack *a, const struct stack *b, size_t depth)
{
	if (a->n < depth || b->n < depth)
		return false;
	for (size_t k = 0; k < depth; k++)
		if (strcmp(a->f[k].address, b->f[k].address) || a->f[k].inlined != b->f[k].inlined ||
		    strcmp(a->f[k].function, b->f[k].function))
			return false;
	return true;
}

static void node_details(FILE *f, const struct dframe *fr)
{
	fprintf(f, " %s: ", fr->address[0] ? fr->address : "0x0");
	put_name(f, fr, "#\n");
	if (fr->file) {
		fputs(" (", f);
		put_str(f, base_name(fr->file), "#\n");
		fprintf(f, ":%ld)", fr->line);
	}
	fputc('\n', f);
}

static void massif_node(FILE *f, const struct site *const *v, size_t n, size_t depth);

/* The sites of v[] (all with frames [0, depth) alike) grouped by frame
 * depth: the number of groups, and when f is not NULL each group's node
 * written, largest first (v[] is largest first, so a group's first site
 * orders it). */
static size_t subtrees(FILE *f, const struct site *const *v, size_t n, size_t depth)
{
	bool *taken = xcalloc(n ? n : 1, sizeof *taken);
	const struct site **group = xcalloc(n ? n : 1, sizeof *group);
	size_t groups = 0;
	for (size_t i = 0; i < n; i++) {
		if (taken[i])
			continue;
		size_t ng = 0;
		for (size_t j = i; j < n; j++)
			if (!taken[j] && same_prefix(&v[i]->st, &v[j]->st, depth + 1)) {
				taken[j] = true;
				group[ng++] = v[j];
			}
		groups++;
		if (f)
			massif_node(f, group, ng, depth);
	}
	free(group);
	free(taken);
	return groups;
}

/* The node of frame `depth` shared by the n sites at v[], then its
 * children: the sites whose stacks go deeper, by their next frame. */
static void massif_node(FILE *f, const struct site *const *v, size_t n, size_t depth)
{
	uint64_t bytes = 0, more = 0, more_stacks = 0;
	const struct site **deeper = xcalloc(n, sizeof *deeper);
	size_t nd = 0;
	for (size_t i = 0; i < n; i++) {
		bytes += v[i]->stack_bytes;
		if (v[i]->st.n > depth + 1)
			deeper[nd++] = v[i];
		/* the frame that names a site: its other stacks (a report
		 * lists a site's largest) are a node under it */
		if ((size_t)(site_frame(&v[i]->st) - v[i]->st.f) == depth &&
		    v[i]->bytes > v[i]->stack_bytes) {
			more += v[i]->bytes - v[i]->stack_bytes;
			more_stacks += v[i]->stacks - 1;
		}
	}
	fprintf(f, "%*sn%zu: %llu", (int)depth + 1, "",
		subtrees(NULL, deeper, nd, depth + 1) + (more > 0),
		(unsigned long long)(bytes + more));
	node_details(f, &v[0]->st.f[depth]);
	subtrees(f, deeper, nd, depth + 1);
	if (more)
		fprintf(f, "%*sn0: %llu in %llu places, the site's other stacks\n", (int)depth + 2,
			"", (unsigned long long)more, (unsigned long long)more_stacks);
	free(deeper);
}

/* The peak snapshot's tree: the total, then one subtree per allocation
 * point (frame 0) of the sites' largest stacks (each site's other
 * stacks under its naming frame), then the sites beyond
 * MEMCHECK_PEAK_SITES in one node. */
static void massif_tree(FILE *f, const struct peak *pk)
{
	const struct site **v = xcalloc(pk->n ? pk->n : 1, sizeof *v);
	size_t nv = 0;
	uint64_t nostack = 0;
	for (size_t i = 0; i < pk->n; i++) {
		if (pk->sites[i].st.n)
			v[nv++] = &pk->sites[i];
		else
			nostack += pk->sites[i].bytes;
	}
	uint64_t rest = (pk->other_bytes == MEMCHECK_UNKNOWN ? 0 : pk->other_bytes) + nostack;
	fprintf(f, "n%zu: %llu (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n",
		subtrees(NULL, v, nv, 0) + (rest > 0), (unsigned long long)pk->bytes);
	subtrees(f, v, nv, 0);
	if (rest > 0)
		fprintf(f, " n0: %llu in %llu places, below MEMCHECK_PEAK_SITES or without a stack\n",
			(unsigned long long)rest,
			(unsigned long long)((pk->by_stack ? pk->other_sites : pk->other_stacks) +
					     (nostack > 0)));
	free(v);
}

static void massif_snapshot(FILE *f, size_t k, uint64_t time, uint64_t heap)
{
	fprintf(f, "#-----------\nsnapshot=%zu\n#-----------\ntime=%llu\nmem_heap_B=%llu\n"
		"mem_heap_extra_B=0\nmem_stacks_B=0\n", k, (unsigned long long)time,
		(unsigned long long)heap);
}

void export_massif(FILE *f, const struct rec *r, const struct detail *d)
{
	fputs("desc: memcheck ", f);
	put_str(f, r->m.r.name, "#\n");
	fprintf(f, " (%s)\ncmd: ", r->m.allocator);
	put_str(f, r->m.program, "#\n");
	fputs("\ntime_unit: B\n", f);
	/* The peak goes after the sample with the most live bytes. */
	size_t at = 0;
	for (size_t i = 0; i < d->tl.n; i++)
		if (d->tl.v[i].live != MEMCHECK_UNKNOWN &&
		    (d->tl.v[at].live == MEMCHECK_UNKNOWN || d->tl.v[i].live >= d->tl.v[at].live))
			at = i;
	size_t k = 0;
	uint64_t last = 0;
	for (size_t i = 0; i < d->tl.n; i++) {
		const struct sample *s = &d->tl.v[i];
		uint64_t t = s->moved == MEMCHECK_UNKNOWN ? last : s->moved;
		massif_snapshot(f, k++, t, s->live == MEMCHECK_UNKNOWN ? 0 : s->live);
		fputs("heap_tree=empty\n", f);
		last = t;
		if (i == at && d->peak.have) {
			massif_snapshot(f, k++, t, d->peak.bytes);
			fputs("heap_tree=peak\n", f);
			massif_tree(f, &d->peak);
		}
	}
	if (!d->tl.n && d->peak.have) {
		massif_snapshot(f, k++, 0, d->peak.bytes);
		fputs("heap_tree=peak\n", f);
		massif_tree(f, &d->peak);
	}
}
