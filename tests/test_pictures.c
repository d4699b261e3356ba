/*
 * test_pictures.c - where the memory went: the peak snapshot, the
 * timeline and what is made of them (memcheck report: folded stacks,
 * massif's out-file, the HTML page; the table's sites under a failing
 * peak budget).
 *
 * tests/prog/plain_peak's peak is known site by site (keep_a 40,000
 * bytes in 40 blocks, burst_b 30,000 in 10): memcheck must give exactly
 * that under every allocator, and the same as valgrind's massif at its
 * peak; plain_peak_threads's joint peak of five threads has main's and
 * the threads' sites.  tests/prog/pictures nests regions so that an
 * outer region's snapshot must survive an inner region's, or be replaced
 * by it; its "parse" region is a recursive parser's peak, whose leaf line
 * (40 stacks of 1,000 bytes) is the largest though each of its stacks
 * is smaller than a dozen other lines': the report lists lines, each
 * with all of its stacks.  What memcheck writes for massif must be what
 * ms_print reads.
 * The headless browser's look at the demo's page is html-check
 * (tests/html_check.sh).
 *
 * A row a run, under every allocator where the figures are the
 * allocator's business: the program, and a callback for the snapshot's
 * sites, the timeline's samples, or what memcheck report and massif's
 * tools make of the run's report.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Site k of a record's peak snapshot (a line, with all of its stacks),
 * and its figures. */
static const struct h_json *site(const struct h_json *rec, size_t k)
{
	return h_json_at(h_json_get(h_json_get(rec, "peak_snapshot"), "lines"), k);
}

static const char *site_fn(const struct h_json *s, size_t frame)
{
	const struct h_json *f = h_json_at(h_json_get(s, "stack"), frame);
	const struct h_json *fn = h_json_get(f, "function");
	return fn && fn->type == HJ_STR ? fn->str : NULL;
}

/* The site whose frame `frame` is function fn, or NULL. */
static const struct h_json *site_of(const struct h_json *rec, size_t frame, const char *fn)
{
	for (size_t k = 0; site(rec, k); k++)
		if (site_fn(site(rec, k), frame) && !strcmp(site_fn(site(rec, k), frame), fn))
			return site(rec, k);
	return NULL;
}

static void expect_site(const struct h_json *rec, size_t frame, const char *fn, uint64_t bytes,
			uint64_t blocks, const char *under)
{
	const struct h_json *s = site_of(rec, frame, fn);
	ck_assert_msg(s, "%s: region \"%s\": no site %s at the peak", under, h_str(rec, "name"), fn);
	ck_assert_msg(h_u64(s, "bytes") == bytes && h_u64(s, "blocks") == blocks,
		      "%s: region \"%s\": site %s has %s bytes in %s blocks at the peak, expected "
		      "%llu in %llu", under, h_str(rec, "name"), fn, h_fmt(h_u64(s, "bytes")),
		      h_fmt(h_u64(s, "blocks")), (unsigned long long)bytes,
		      (unsigned long long)blocks);
	/* one stack each: the line's largest is all of it */
	ck_assert_msg(h_u64(s, "stacks") == 1 && h_u64(s, "stack_bytes") == bytes &&
		      h_u64(s, "stack_blocks") == blocks,
		      "%s: region \"%s\": site %s is %s stacks, its largest %s bytes in %s blocks",
		      under, h_str(rec, "name"), fn, h_fmt(h_u64(s, "stacks")),
		      h_fmt(h_u64(s, "stack_bytes")), h_fmt(h_u64(s, "stack_blocks")));
}

/* Where line s stands in rec's list (SIZE_MAX: not listed). */
static size_t rank_of(const struct h_json *rec, const struct h_json *s)
{
	for (size_t k = 0; site(rec, k); k++)
		if (site(rec, k) == s)
			return k;
	return SIZE_MAX;
}

/* Under key list of the peak snapshot, with the rest in key rest: the
 * entries, most bytes first, and the rest add up to the snapshot's
 * total.  "lines" and "lines_other" are the lines; "sites" and "other"
 * the largest stacks, as reports before lines listed them (their
 * readers read them still). */
static void expect_sums_of(const struct h_json *rec, const char *list, const char *rest,
			   const char *under)
{
	const struct h_json *p = h_json_get(rec, "peak_snapshot");
	const struct h_json *v = h_json_get(p, list), *o = h_json_get(p, rest);
	ck_assert_msg(v && o, "%s: region \"%s\": no \"%s\" or \"%s\" in the snapshot", under,
		      h_str(rec, "name"), list, rest);
	uint64_t bytes = h_u64(o, "bytes"), blocks = h_u64(o, "blocks");
	for (size_t k = 0; h_json_at(v, k); k++) {
		bytes += h_u64(h_json_at(v, k), "bytes");
		blocks += h_u64(h_json_at(v, k), "blocks");
		ck_assert_msg(!k || h_u64(h_json_at(v, k - 1), "bytes") >=
					    h_u64(h_json_at(v, k), "bytes"),
			      "%s: region \"%s\": %s[%zu] has more bytes than the one before", under,
			      h_str(rec, "name"), list, k);
	}
	ck_assert_msg(bytes == h_u64(p, "live_bytes") && blocks == h_u64(p, "live_blocks"),
		      "%s: the %s of \"%s\" sum to %llu bytes in %llu blocks, the snapshot says "
		      "%s in %s", under, list, h_str(rec, "name"), (unsigned long long)bytes,
		      (unsigned long long)blocks, h_fmt(h_u64(p, "live_bytes")),
		      h_fmt(h_u64(p, "live_blocks")));
}

static void expect_sums(const struct h_json *rec, const char *under)
{
	expect_sums_of(rec, "lines", "lines_other", under);
	expect_sums_of(rec, "sites", "other", under);
}

H_CHECK(peak_sites_exact)
{
	const char *under = h_allocators[x->alloc].name;
	expect_site(rec, 0, "keep_a", 40000, 40, under);
	expect_site(rec, 0, "burst_b", 30000, 10, under);
	ck_assert_msg(!site_of(rec, 0, "grow_c") && !site_of(rec, 0, "churn"),
		      "%s: grow_c or churn at the peak, which they never reach", under);
	expect_sums(rec, under);
	/* The process region counts from the process's start: its peak is
	 * the snapshot's, the program's 70,000 bytes and what was live
	 * before main (libstdc++'s pool under jemalloc and tcmalloc), all
	 * of it in the sites. */
	uint64_t total = h_u64(h_json_get(rec, "peak_snapshot"), "live_bytes");
	H_EXPECT_U64(rec, "peak_live_bytes", total);
	uint64_t before = 0;
	for (size_t k = 0; site(rec, k); k++)
		if (!site_of(rec, 0, "keep_a") || site(rec, k) != site_of(rec, 0, "keep_a"))
			if (site(rec, k) != site_of(rec, 0, "burst_b"))
				before += h_u64(site(rec, k), "bytes");
	ck_assert_msg(total == 70000 + before + h_u64(h_json_get(h_json_get(rec,
			"peak_snapshot"), "lines_other"), "bytes"),
		      "%s: snapshot total %s is not 70,000 and the other sites' %llu", under,
		      h_fmt(total), (unsigned long long)before);
}

/* A peak several threads make together: main's 8 MB, held while it
 * waits in pthread_join, and the four threads' 1 MB each, their site
 * counts kept by the block table's shared mode (atomic adds).  The
 * threads free at once after the barrier, and a save racing another
 * thread's free (snapshot.c's head) may leave their site a block or two
 * short, never above. */
H_CHECK(peak_sites_threads)
{
	const char *under = h_allocators[x->alloc].name;
	expect_site(rec, 0, "main", 8000000, 1000, under);
	const struct h_json *w = site_of(rec, 0, "work");
	ck_assert_msg(w, "%s: no site work at the joint peak", under);
	uint64_t bytes = h_u64(w, "bytes");
	ck_assert_msg(bytes <= 4000000 && bytes >= 4000000 - 3 * 10000,
		      "%s: site work has %s bytes at the peak, expected 4,000,000", under,
		      h_fmt(bytes));
	expect_sums(rec, under);
}

/* Frees of blocks another thread allocated, then a higher peak: the
 * threads' shares of work()'s site (in their shards) and main's (in the
 * depot's) must cancel out in the snapshot, which then holds main's 8 MB
 * and again()'s 13 MB, and no work(). */
H_CHECK(peak_sites_threads_handoff)
{
	const char *under = h_allocators[x->alloc].name;
	expect_site(rec, 0, "main", 8000000, 1000, under);
	expect_site(rec, 0, "again", 13000000, 1300, under);
	ck_assert_msg(!site_of(rec, 0, "work"), "%s: site work at the second peak, "
		      "where none of its blocks is live", under);
	expect_sums(rec, under);
}

H_SETUP(needs_valgrind)
{
	if (h_valgrind_path())
		return true;
	printf("note: valgrind not installed; skipping\n");
	return false;
}

/* massif's own peak: its heap tree's allocation points, "n1: 40000
 * 0x...: keep_a (plain_peak.c:24)", against memcheck's sites (the
 * row's). */
H_CHECK(peak_sites_as_massif)
{
	const char *out = h_tmppath("massif.out");
	struct h_res v;
	H_EXEC(&v, .prog = h_valgrind_path(), .no_report = true, .text = "",
	       .args = H_LIST("--tool=massif", "--peak-inaccuracy=0", "--threshold=0",
			      h_env("--massif-out-file=%s", out), h_prog("plain_peak"), "200"));
	h_expect_exit(&v, 0);
	h_res_free(&v);
	char *text = h_read_file(out, NULL);
	ck_assert_msg(text, "no %s", out);
	char *peak = strstr(text, "heap_tree=peak");
	ck_assert_msg(peak, "no peak snapshot in massif's file");
	int found = 0;
	for (char *line = strchr(peak, '\n') + 1; *line == ' ' || *line == 'n';) {
		unsigned long long bytes;
		char fn[64];
		/* allocation points are one space in */
		if (sscanf(line, " n%*u: %llu 0x%*x: %63s", &bytes, fn) == 2 && line[0] == ' ' &&
		    line[1] == 'n') {
			const struct h_json *s = site_of(rec, 0, fn);
			ck_assert_msg(s && h_u64(s, "bytes") == bytes,
				      "massif's peak has %s with %llu bytes; memcheck's %s", fn, bytes,
				      s ? h_fmt(h_u64(s, "bytes")) : "has no such site");
			found++;
		}
		char *nl = strchr(line, '\n');
		if (!nl)
			break;
		line = nl + 1;
	}
	ck_assert_msg(found == 2, "massif's peak tree has %d allocation points, expected keep_a "
		      "and burst_b", found);
	free(text);
}

/* An inner region below the outer's peak leaves the outer's snapshot as
 * it was; one above it gives the outer its own. */
H_CHECK(peak_sites_nested)
{
	static const struct {
		const char *region, *fn;
		uint64_t bytes;
	} want[] = {
		{ "below", "site_x", 100000 }, { "below.inner", "site_y", 20000 },
		{ "above", "site_z", 200000 }, { "above.inner", "site_z", 200000 },
	};
	const char *under = h_allocators[x->alloc].name;
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		const struct h_json *r = h_record(&x->rep, want[k].region, 0);
		ck_assert_msg(r, "%s: no record %s", under, want[k].region);
		expect_site(r, 1, want[k].fn, want[k].bytes, want[k].bytes / 1000, under);
		expect_sums(r, under);
	}
}

/* The lines at a recursive parser's peak (tests/prog/pictures parse),
 * the default 10 of them: the leaf's line first of the program's, with
 * all of its 40 stacks, though a dozen other lines each have a stack
 * larger than any of the leaf's (the 10 largest stacks held none of
 * it); then the big block's, then decoys; the rest summed, the sums
 * whole. */
H_CHECK(peak_lines_of_a_parser)
{
	const char *under = h_allocators[x->alloc].name;
	const struct h_json *r = h_record(&x->rep, "parse", 0);
	ck_assert_msg(r, "%s: no record parse", under);
	const struct h_json *leaf = site_of(r, 0, "leaf"), *big = site_of(r, 0, "big");
	ck_assert_msg(leaf && big, "%s: the leaf's or the big block's line is not listed", under);
	ck_assert_msg(h_u64(leaf, "bytes") == 40000 && h_u64(leaf, "blocks") == 40 &&
		      h_u64(leaf, "stacks") == 40 && h_u64(leaf, "stack_bytes") == 1000 &&
		      h_u64(leaf, "stack_blocks") == 1,
		      "%s: the leaf's line has %s bytes in %s blocks, %s stacks (largest %s bytes in "
		      "%s blocks); expected 40,000 in 40, 40 stacks, 1,000 in 1", under,
		      h_fmt(h_u64(leaf, "bytes")), h_fmt(h_u64(leaf, "blocks")),
		      h_fmt(h_u64(leaf, "stacks")), h_fmt(h_u64(leaf, "stack_bytes")),
		      h_fmt(h_u64(leaf, "stack_blocks")));
	expect_site(r, 0, "big", 20000, 1, under);
	size_t decoys = 0, lines = 0;
	for (size_t k = 0; site(r, k); k++, lines++)
		if (site_fn(site(r, k), 0) && !strncmp(site_fn(site(r, k), 0), "decoy_", 6)) {
			decoys++;
			ck_assert_msg(h_u64(site(r, k), "bytes") == 1500 && k > rank_of(r, big),
				      "%s: decoy line %zu (%s bytes) before the big block's", under,
				      k, h_fmt(h_u64(site(r, k), "bytes")));
		}
	ck_assert_msg(rank_of(r, leaf) < rank_of(r, big) && lines == 10 && decoys >= 6,
		      "%s: the leaf's line is %zu, the big block's %zu, %zu lines, %zu decoys", under,
		      rank_of(r, leaf), rank_of(r, big), lines, decoys);
	const struct h_json *other = h_json_get(h_json_get(r, "peak_snapshot"), "lines_other");
	ck_assert_msg(h_u64(other, "stacks") >= 12 - decoys, "%s: other: %s stacks, %zu decoys "
		      "listed", under, h_fmt(h_u64(other, "stacks")), decoys);
	expect_sums(r, under);
}

/* The timeline: bounded, ordered, consistent with the region's figures,
 * under every allocator, tracking and in count-only mode. */
static void timeline_bounded(const struct h_res *x, const struct h_json *rec, bool track)
{
	const char *under = h_allocators[x->alloc].name;
	const struct h_json *tl = h_json_get(rec, "timeline");
	const struct h_json *v = h_json_get(tl, "samples");
	ck_assert_msg(v && v->type == HJ_ARR, "%s: no timeline", under);
	size_t n = v->n;
	ck_assert_msg(track ? n >= 3 && n <= 32 : n == 2, "%s (track %d): %zu samples, expected %s",
		      under, track, n, track ? "3 to 32" : "2 (begin and end)");
	uint64_t peak_abs = track ? h_u64(h_json_get(rec, "peak_snapshot"), "live_bytes") : 0;
	double t_prev = -1;
	uint64_t m_prev = 0;
	for (size_t k = 0; k < n; k++) {
		const struct h_json *s = h_json_at(v, k);
		double t = h_json_at(s, 0)->num;
		uint64_t moved = h_json_at(s, 1)->u64, live = h_json_at(s, 2)->u64;
		const struct h_json *lv = h_json_at(s, 2);
		ck_assert_msg(t >= t_prev && moved >= m_prev, "%s: sample %zu goes back in time",
			      under, k);
		/* the process region counts from the process's start: its
		 * first sample has what was moved before memcheck's start */
		ck_assert_msg(k || t == 0, "%s: the first sample is not the region's begin", under);
		if (track)
			ck_assert_msg(live <= peak_abs, "%s: sample %zu has %llu live bytes, above "
				      "the peak's %llu", under, k, (unsigned long long)live,
				      (unsigned long long)peak_abs);
		else
			ck_assert_msg(lv->type == HJ_NULL, "%s: count-only sample %zu has live bytes",
				      under, k);
		ck_assert_msg(h_json_at(s, 3)->u64 > 0, "%s: sample %zu without RSS", under, k);
		t_prev = t;
		m_prev = moved;
	}
	if (track)
		ck_assert_msg(m_prev >= 20000ull * 64 * 256 * 2, "%s: the last sample has %llu bytes "
			      "moved", under, (unsigned long long)m_prev);
}

/* Blocks freed through a call memcheck does not wrap, each counted freed
 * when its address comes back: memcheck's live bytes never go down, and
 * no sample may show them lower (every other sample did, between the
 * free's and the allocation's counting, before session 36). */
H_CHECK(timeline_never_between)
{
	const char *under = h_allocators[x->alloc].name;
	const struct h_json *v = h_json_get(h_json_get(rec, "timeline"), "samples");
	ck_assert_msg(v && v->type == HJ_ARR && v->n > 1000, "%s: %zu samples", under,
		      v ? v->n : 0);
	uint64_t prev = 0;
	for (size_t k = 0; k < v->n; k++) {
		uint64_t live = h_json_at(h_json_at(v, k), 2)->u64;
		ck_assert_msg(live >= prev, "%s: sample %zu has %llu live bytes, the one before "
			      "%llu", under, k, (unsigned long long)live,
			      (unsigned long long)prev);
		prev = live;
	}
}

H_CHECK(timeline_tracked)
{
	timeline_bounded(x, rec, true);
}

H_CHECK(timeline_counted)
{
	timeline_bounded(x, rec, false);
}

/* memcheck report on the row's report (plain_peak's record under
 * glibc), with its args. */
static void report_of(struct h_res *r, const struct h_res *x, const char *a1, const char *a2,
		      const char *a3, const char *a4)
{
	H_EXEC(r, .cli = H_LIST("report", a1, a2, a3, a4, x->report));
	h_expect_exit(r, 0);
}

/* The file memcheck report writes with flag (--html, --folded) for the
 * regions named, read whole (NULL when none was written). */
static char *report_file(const struct h_res *x, const char *flag, const char *name,
			 const char *regions)
{
	const char *path = h_tmppath(name);
	struct h_res r;
	report_of(&r, x, flag, path, "--region", regions);
	h_res_free(&r);
	return h_read_file(path, NULL);
}

H_CHECK(massif_file_reads_in_ms_print)
{
	const char *out = h_tmppath("memcheck.massif");
	struct h_res r, m;
	report_of(&r, x, "--massif", out, "--allocator", "glibc");
	h_res_free(&r);
	H_EXEC(&m, .prog = "/usr/bin/ms_print", .args = H_LIST(out), .no_report = true, .text = "");
	if (m.r.exit_code == -1 || (m.r.exit_code == 127 && !m.r.out_len)) {
		printf("note: ms_print not installed; skipping\n");
		h_res_free(&m);
		return;
	}
	h_expect_exit(&m, 0);
	ck_assert_msg(strstr(m.r.out, "(peak)") && strstr(m.r.out, "(40,000B) ") &&
		      strstr(m.r.out, "keep_a (plain_peak.c:") && strstr(m.r.out, "(30,000B) ") &&
		      strstr(m.r.out, "burst_b (plain_peak.c:") &&
		      strstr(m.r.out, "100.00% (70,000B) (heap allocation functions)"),
		      "ms_print's output lacks the peak's tree:\n%s", m.r.out);
	h_res_free(&m);
}

H_CHECK(folded_stacks)
{
	char *text = report_file(x, "--folded", "peak.folded", "process");
	ck_assert_msg(text && strstr(text, "process (glibc);main;keep_a 40000\n") &&
		      strstr(text, "process (glibc);main;burst_b 30000\n"),
		      "folded stacks:\n%s", text ? text : "(none)");
	/* frames;...;frames COUNT: one space, the last */
	for (char *l = text; *l;) {
		char *nl = strchr(l, '\n');
		ck_assert_msg(nl, "a line without its end");
		*nl = 0;
		char *sp = strrchr(l, ' ');
		ck_assert_msg(sp && strspn(sp + 1, "0123456789") == strlen(sp + 1) && sp[1],
			      "not a folded line: %s", l);
		l = nl + 1;
	}
	free(text);
}

/* The page of the run's regions has the sites table's cell want. */
static void page_has_cell(const struct h_res *x, const char *regions, const char *want)
{
	char *page = report_file(x, "--html", "sites.html", regions);
	ck_assert_msg(page && strstr(page, want), "the sites table has no %s:\n%.2000s", want,
		      page ? strstr(page, "class=\"sites\"") : "(no page)");
	free(page);
}

/* The page's row of a line that names several stacks sums them all:
 * plain_deep_stacks' 40 stacks of leaf(), 3 blocks each, all kept. */
H_CHECK(html_sums_a_lines_stacks)
{
	page_has_cell(x, "*", "<small>120 blocks, 40 stacks</small>");
}

/* The page's row of the parser's leaf: its whole line at the default
 * MEMCHECK_PEAK_SITES, 40 stacks of one block. */
H_CHECK(html_a_parsers_leaf_whole)
{
	page_has_cell(x, "parse", "<small>40 blocks, 40 stacks</small>");
}

/* Names from the program are text in the page, never markup; nothing is
 * loaded from elsewhere. */
H_CHECK(html_escapes_and_stands_alone)
{
	char *page = report_file(x, "--html", "name.html", "*");
	ck_assert_msg(page, "no page");
	ck_assert_msg(!strstr(page, "<img") && !strstr(page, "alert(1)></td>"),
		      "the region's name went into the page as markup");
	ck_assert_msg(strstr(page, "&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&apos;&lt;/td&gt;"),
		      "the region's name is not in the page, escaped");
	ck_assert_msg(!strstr(page, "http:") && !strstr(page, "https:") && !strstr(page, "<link") &&
		      !strstr(page, "<script src") && !strstr(page, "url("),
		      "the page refers to something outside it");
	ck_assert_msg(strstr(page, "<svg class=\"chart bars\""), "no bar chart");
	free(page);
}

/* Under a failing peak budget the table names the sites, file:line
 * first, under the violation; so does the library's own text. */
H_CHECK(sites_under_the_violation)
{
	const char *v = strstr(x->r.err, "peak_live_bytes 68.4 KiB > 58.6 KiB\n");
	ck_assert_msg(v, "no violation line in the table:\n%s", x->r.err);
	const char *a = strstr(v, "      at the peak of live bytes, 68.4 KiB in 50 blocks");
	const char *k = strstr(v, "        tests/prog/plain_peak.c:24 (keep_a): 39.1 KiB in 40 blocks");
	const char *b = strstr(v, "        tests/prog/plain_peak.c:30 (burst_b): 29.3 KiB in 10 blocks");
	ck_assert_msg(a && k && b && a < k && k < b, "the sites are not under the violation:\n%s",
		      x->r.err);
}

/* One record of an older memcheck's report: two stacks of leaf.c:5,
 * the largest two, listed apart ("sites"), one more summed. */
#define OLD_FRAME(addr, fn, ln)                                                            \
	"{\"address\":\"" addr "\",\"function\":\"" fn "\",\"file\":\"leaf.c\",\"line\":" ln \
	",\"object\":\"p\",\"inlined\":false}"
#define OLD_REPORT                                                                         \
	"{\"name\":\"r\",\"pid\":1,\"program\":\"p\",\"allocator\":\"glibc\",\"verdict\":\"pass\","  \
	"\"peak_snapshot\":{\"live_bytes\":350,\"live_blocks\":4,\"sites\":["                      \
	"{\"bytes\":150,\"blocks\":2,\"stack\":[" OLD_FRAME("0x10", "leaf", "5") ","                \
	OLD_FRAME("0x20", "left", "9") "]},"                                                        \
	"{\"bytes\":100,\"blocks\":1,\"stack\":[" OLD_FRAME("0x10", "leaf", "5") ","                \
	OLD_FRAME("0x30", "right", "12") "]}],"                                                     \
	"\"other\":{\"sites\":1,\"bytes\":100,\"blocks\":1}}}\n"
/* The same heap as this memcheck reports it: leaf.c:5's line whole, its
 * largest stack, and the rest (another line) summed. */
#define NEW_REPORT                                                                         \
	"{\"name\":\"r\",\"pid\":1,\"program\":\"p\",\"allocator\":\"glibc\",\"verdict\":\"pass\","  \
	"\"peak_snapshot\":{\"live_bytes\":350,\"live_blocks\":4,\"lines\":["                      \
	"{\"bytes\":250,\"blocks\":3,\"stacks\":2,\"stack_bytes\":150,\"stack_blocks\":2,"           \
	"\"stack\":[" OLD_FRAME("0x10", "leaf", "5") "," OLD_FRAME("0x20", "left", "9") "]}],"       \
	"\"lines_other\":{\"stacks\":2,\"bytes\":100,\"blocks\":1}}}\n"

#define PRELOADED(program, ...)                                                \
	.record = "process", .run = { .prog = program, .flags = H_PRELOAD, __VA_ARGS__ }
/* plain_peak 2000 under glibc, sampled: what memcheck report reads */
#define PEAK_REPORT                                                            \
	.allocators = H_ONCE, PRELOADED("plain_peak", .args = H_LIST("2000"),   \
					 .env = H_LIST("MEMCHECK_TIMELINE=64"))

static const struct h_case cases[] = {
	{ "peak sites exact", PRELOADED("plain_peak", .args = H_LIST("200")),
	  .check = peak_sites_exact },
	{ "peak sites of threads", PRELOADED("plain_peak_threads"), .check = peak_sites_threads },
	{ "peak sites, frees handed off", PRELOADED("plain_peak_threads", .args = H_LIST("handoff")),
	  .check = peak_sites_threads_handoff },
	{ "peak sites as massif's", .allocators = H_ONCE, .setup = needs_valgrind,
	  PRELOADED("plain_peak", .args = H_LIST("200")), .check = peak_sites_as_massif },
	{ "nested regions' peaks", .run = { .prog = "pictures", .args = H_LIST("nested"),
					    .flags = H_PRELOAD },
	  .check = peak_sites_nested },
	{ "timeline, tracking",
	  PRELOADED("plain_peak", .args = H_LIST("20000"),
		    .env = H_LIST("MEMCHECK_TIMELINE=32", "MEMCHECK_TRACK=1")),
	  .check = timeline_tracked },
	{ "timeline, counting",
	  PRELOADED("plain_peak", .args = H_LIST("20000"),
		    .env = H_LIST("MEMCHECK_TIMELINE=32", "MEMCHECK_TRACK=0")),
	  .check = timeline_counted },
	{ "timeline, frees memcheck does not see",
	  PRELOADED("plain_unseen_free", .env = H_LIST("MEMCHECK_TIMELINE=100000")),
	  .check = timeline_never_between },
	{ "massif's out-file read by ms_print", PEAK_REPORT, .check = massif_file_reads_in_ms_print },
	{ "folded stacks", PEAK_REPORT, .check = folded_stacks },
	{ "HTML escapes and stands alone", .allocators = H_ONCE,
	  .run = { .prog = "pictures", .args = H_LIST("name") }, .exit = H_EXIT_ANY,
	  .check = html_escapes_and_stands_alone },
	/* 40 stacks that differ only above leaf(), each 3 blocks of 40 bytes:
	 * the text prints them as the one line that names them all. */
	{ "stacks named by one line print as one",
	  PRELOADED("plain_deep_stacks", .text = "full", .env = H_LIST("MEMCHECK_PEAK_SITES=100")),
	  .err = H_LIST("tests/prog/plain_deep_stacks.c:35 (leaf), 40 stacks: 4,800 bytes in 120 blocks") },
	{ "the page sums a line's stacks",
	  PRELOADED("plain_deep_stacks", .env = H_LIST("MEMCHECK_PEAK_SITES=100")),
	  .check = html_sums_a_lines_stacks },
	/* at the default MEMCHECK_PEAK_SITES (10): the line with all of its
	 * 40 stacks, not the 10 largest stacks */
	{ "stacks named by one line print as one, all of them",
	  PRELOADED("plain_deep_stacks", .text = "full"),
	  .err = H_LIST("tests/prog/plain_deep_stacks.c:35 (leaf), 40 stacks: 4,800 bytes in 120 blocks") },
	{ "a failing peak budget's table prints them as one too", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-a", "glibc", "--budget", H_FILE),
		   .prog = "plain_deep_stacks", .text = "" },
	  .file = "[*]\npeak_live_bytes <= 1000\n", .exit = 1,
	  .err = H_LIST("tests/prog/plain_deep_stacks.c:35 (leaf), 40 stacks: 4.7 KiB in 120 blocks (100.0%)") },
	{ "a parser's peak: the largest lines, each whole",
	  .run = { .prog = "pictures", .args = H_LIST("parse"), .flags = H_PRELOAD,
		   .text = "full" },
	  .err = H_LIST("tests/prog/pictures.c:52 (leaf), 40 stacks: 40,000 bytes in 40 blocks ("),
	  .check = peak_lines_of_a_parser },
	/* a report of an older memcheck (its largest stacks as "sites"):
	 * still read, its stacks summed by line, said to be partial */
	{ "an older report's sites, folded", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("report", "--folded", "/dev/stdout", "--region", "r", H_FILE) },
	  .file = OLD_REPORT,
	  .stdout_is = "r (glibc);left;leaf 150\nr (glibc);right;leaf 100\n"
		       "r (glibc);(1 other sites) 100\n" },
	{ "an older report's sites, in the page", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("report", "--html", "/dev/stdout", H_FILE) }, .file = OLD_REPORT,
	  .out = H_LIST("<small>3 blocks, 2 stacks</small>",
			"A report of an older memcheck lists the largest stacks") },
	/* a line's largest stack and, apart, the rest of the line */
	{ "a line's other stacks, folded", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("report", "--folded", "/dev/stdout", "--region", "r", H_FILE) },
	  .file = NEW_REPORT,
	  .stdout_is = "r (glibc);left;leaf 150\nr (glibc);(1 more stacks of leaf.c:5 (leaf)) 100\n"
		       "r (glibc);(other sites, 2 stacks) 100\n" },
	{ "a line's other stacks, in massif's tree", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("report", "--massif", "/dev/stdout", "--region", "r", H_FILE) },
	  .file = NEW_REPORT,
	  .out = H_LIST("n2: 350 (heap allocation functions)",
			"\n n2: 250 0x10: leaf (leaf.c:5)\n  n0: 150 0x20: left (leaf.c:9)\n"
			"  n0: 100 in 1 places, the site's other stacks\n") },
	{ "the page has a parser's leaf whole", .allocators = H_ONCE,
	  .run = { .prog = "pictures", .args = H_LIST("parse"), .flags = H_PRELOAD },
	  .check = html_a_parsers_leaf_whole },
	{ "a failing peak budget names the sites", .allocators = H_ONCE,
	  .run = { .cli = H_LIST("run", "-a", "glibc", "--budget", H_FILE), .prog = "plain_peak",
		   .text = "" },
	  .file = "[*]\npeak_live_bytes <= 60000\n", .exit = 1, .check = sites_under_the_violation,
	  /* the library's text report of the same region */
	  .err = H_LIST("tests/prog/plain_peak.c:24 (keep_a): 40,000 bytes in 40 blocks (57.1%)") },
};

int main(void)
{
	TCase *tc = h_tcase("pictures", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
