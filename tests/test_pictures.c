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
 * by it.  What memcheck writes for massif must be what ms_print reads.
 * The headless browser's look at the demo's page is html-check
 * (tests/html_check.sh).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Run program (plain: preloaded) with args under allocator i, its report
 * loaded into *rep; false (a note) when the allocator is not installed. */
static bool run_under(int i, const char *const env_extra[], struct h_report *rep,
		      const char *prog, const char *arg)
{
	const char *so;
	if (!h_allocator(i, &so))
		return false;
	const char *report = h_tmppath("pictures.jsonl");
	const char *env[8] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none" };
	for (int k = 0; env_extra && env_extra[k]; k++)
		env[2 + k] = env_extra[k];
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog(prog), arg);
	ck_assert_msg(r.exit_code == 0, "%s %s under %s: %s; stderr:\n%s", prog, arg ? arg : "",
		      h_allocators[i].name, h_status(&r), r.err);
	h_run_free(&r);
	H_LOAD(rep, report);
	return true;
}

/* Site k of a record's peak snapshot, and its figures. */
static const struct h_json *site(const struct h_json *rec, size_t k)
{
	return h_json_at(h_json_get(h_json_get(rec, "peak_snapshot"), "sites"), k);
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
}

/* The sites and the rest add up to the snapshot's total. */
static void expect_sums(const struct h_json *rec, const char *under)
{
	const struct h_json *p = h_json_get(rec, "peak_snapshot");
	uint64_t bytes = h_u64(h_json_get(p, "other"), "bytes"), blocks =
		h_u64(h_json_get(p, "other"), "blocks");
	for (size_t k = 0; site(rec, k); k++) {
		bytes += h_u64(site(rec, k), "bytes");
		blocks += h_u64(site(rec, k), "blocks");
	}
	ck_assert_msg(bytes == h_u64(p, "live_bytes") && blocks == h_u64(p, "live_blocks"),
		      "%s: the sites of \"%s\" sum to %llu bytes in %llu blocks, the snapshot says "
		      "%s in %s", under, h_str(rec, "name"), (unsigned long long)bytes,
		      (unsigned long long)blocks, h_fmt(h_u64(p, "live_bytes")),
		      h_fmt(h_u64(p, "live_blocks")));
}

START_TEST(peak_sites_exact)
{
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_report rep;
		if (!run_under(i, NULL, &rep, "plain_peak", "200"))
			continue;
		const struct h_json *rec = h_record(&rep, "process", 0);
		ck_assert_msg(rec, "%s: no process record", h_allocators[i].name);
		expect_site(rec, 0, "keep_a", 40000, 40, h_allocators[i].name);
		expect_site(rec, 0, "burst_b", 30000, 10, h_allocators[i].name);
		ck_assert_msg(!site_of(rec, 0, "grow_c") && !site_of(rec, 0, "churn"),
			      "%s: grow_c or churn at the peak, which they never reach", h_allocators[i].name);
		expect_sums(rec, h_allocators[i].name);
		/* The process region counts from the process's start: its
		 * peak is the snapshot's, the program's 70,000 bytes and what
		 * was live before main (libstdc++'s pool under jemalloc and
		 * tcmalloc), all of it in the sites. */
		uint64_t total = h_u64(h_json_get(rec, "peak_snapshot"), "live_bytes");
		H_EXPECT_U64(rec, "peak_live_bytes", total);
		uint64_t before = 0;
		for (size_t k = 0; site(rec, k); k++)
			if (!site_of(rec, 0, "keep_a") || site(rec, k) != site_of(rec, 0, "keep_a"))
				if (site(rec, k) != site_of(rec, 0, "burst_b"))
					before += h_u64(site(rec, k), "bytes");
		ck_assert_msg(total == 70000 + before + h_u64(h_json_get(h_json_get(rec,
				"peak_snapshot"), "other"), "bytes"),
			      "%s: snapshot total %s is not 70,000 and the other sites' %llu",
			      h_allocators[i].name, h_fmt(total), (unsigned long long)before);
		h_report_free(&rep);
	}
}
END_TEST

/* A peak several threads make together: main's 8 MB, held while it
 * waits in pthread_join, and the four threads' 1 MB each, their site
 * counts kept by the block table's shared mode (atomic adds).  The
 * threads free at once after the barrier, and a save racing another
 * thread's free (snapshot.c's head) may leave their site a block or two
 * short, never above. */
START_TEST(peak_sites_threads)
{
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_report rep;
		if (!run_under(i, NULL, &rep, "plain_peak_threads", NULL))
			continue;
		const struct h_json *rec = h_record(&rep, "process", 0);
		ck_assert_msg(rec, "%s: no process record", h_allocators[i].name);
		expect_site(rec, 0, "main", 8000000, 1000, h_allocators[i].name);
		const struct h_json *w = site_of(rec, 0, "work");
		ck_assert_msg(w, "%s: no site work at the joint peak", h_allocators[i].name);
		uint64_t bytes = h_u64(w, "bytes");
		ck_assert_msg(bytes <= 4000000 && bytes >= 4000000 - 3 * 10000,
			      "%s: site work has %s bytes at the peak, expected 4,000,000",
			      h_allocators[i].name, h_fmt(bytes));
		expect_sums(rec, h_allocators[i].name);
		h_report_free(&rep);
	}
}
END_TEST

/* Frees of blocks another thread allocated, then a higher peak: the
 * threads' shares of work()'s site (in their shards) and main's (in the
 * depot's) must cancel out in the snapshot, which then holds main's 8 MB
 * and again()'s 13 MB, and no work(). */
START_TEST(peak_sites_threads_handoff)
{
	for (int i = 0; i < H_NALLOCATORS; i++) {
		struct h_report rep;
		if (!run_under(i, NULL, &rep, "plain_peak_threads", "handoff"))
			continue;
		const struct h_json *rec = h_record(&rep, "process", 0);
		ck_assert_msg(rec, "%s: no process record", h_allocators[i].name);
		expect_site(rec, 0, "main", 8000000, 1000, h_allocators[i].name);
		expect_site(rec, 0, "again", 13000000, 1300, h_allocators[i].name);
		ck_assert_msg(!site_of(rec, 0, "work"), "%s: site work at the second peak, "
			      "where none of its blocks is live", h_allocators[i].name);
		expect_sums(rec, h_allocators[i].name);
		h_report_free(&rep);
	}
}
END_TEST

/* massif's own peak: its heap tree's allocation points, "n1: 40000
 * 0x...: keep_a (plain_peak.c:24)", against memcheck's sites. */
START_TEST(peak_sites_as_massif)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping\n");
		return;
	}
	const char *out = h_tmppath("massif.out");
	struct h_run v;
	H_RUN(&v, 0, NULL, NULL, vg, "--tool=massif", "--peak-inaccuracy=0", "--threshold=0",
	      h_env("--massif-out-file=%s", out), h_prog("plain_peak"), "200");
	ck_assert_msg(v.exit_code == 0, "massif: %s\n%s", h_status(&v), v.err);
	h_run_free(&v);
	char *text = h_read_file(out, NULL);
	ck_assert_msg(text, "no %s", out);
	char *peak = strstr(text, "heap_tree=peak");
	ck_assert_msg(peak, "no peak snapshot in massif's file");
	struct h_report rep;
	ck_assert(run_under(0, NULL, &rep, "plain_peak", "200"));
	const struct h_json *rec = h_record(&rep, "process", 0);
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
	h_report_free(&rep);
	free(text);
}
END_TEST

/* An inner region below the outer's peak leaves the outer's snapshot as
 * it was; one above it gives the outer its own. */
START_TEST(peak_sites_nested)
{
	static const struct {
		const char *region, *fn;
		uint64_t bytes;
	} want[] = {
		{ "below", "site_x", 100000 }, { "below.inner", "site_y", 20000 },
		{ "above", "site_z", 200000 }, { "above.inner", "site_z", 200000 },
	};
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		const char *report = h_tmppath("nested.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, so, env, h_prog("pictures"), "nested");
		ck_assert_msg(r.exit_code == 0, "pictures nested under %s: %s\n%s", h_allocators[i].name,
			      h_status(&r), r.err);
		h_run_free(&r);
		struct h_report rep;
		H_LOAD(&rep, report);
		for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
			const struct h_json *rec = h_record(&rep, want[k].region, 0);
			ck_assert_msg(rec, "%s: no record %s", h_allocators[i].name, want[k].region);
			expect_site(rec, 1, want[k].fn, want[k].bytes, want[k].bytes / 1000,
				    h_allocators[i].name);
			expect_sums(rec, h_allocators[i].name);
		}
		h_report_free(&rep);
	}
}
END_TEST

/* The timeline: bounded, ordered, consistent with the region's figures,
 * under every allocator and in count-only mode. */
START_TEST(timeline_bounded)
{
	for (int i = 0; i < H_NALLOCATORS; i++) {
		for (int track = 1; track >= 0; track--) {
			const char *extra[] = { "MEMCHECK_TIMELINE=32",
						track ? "MEMCHECK_TRACK=1" : "MEMCHECK_TRACK=0", NULL };
			struct h_report rep;
			if (!run_under(i, extra, &rep, "plain_peak", "20000"))
				break;
			const struct h_json *rec = h_record(&rep, "process", 0);
			const struct h_json *tl = h_json_get(rec, "timeline");
			const struct h_json *v = h_json_get(tl, "samples");
			ck_assert_msg(v && v->type == HJ_ARR, "%s: no timeline", h_allocators[i].name);
			size_t n = v->n;
			ck_assert_msg(track ? n >= 3 && n <= 32 : n == 2,
				      "%s (track %d): %zu samples, expected %s", h_allocators[i].name, track,
				      n, track ? "3 to 32" : "2 (begin and end)");
			uint64_t peak_abs = track ? h_u64(h_json_get(rec, "peak_snapshot"),
							  "live_bytes") : 0;
			double t_prev = -1;
			uint64_t m_prev = 0;
			for (size_t k = 0; k < n; k++) {
				const struct h_json *s = h_json_at(v, k);
				double t = h_json_at(s, 0)->num;
				uint64_t moved = h_json_at(s, 1)->u64, live = h_json_at(s, 2)->u64;
				const struct h_json *lv = h_json_at(s, 2);
				ck_assert_msg(t >= t_prev && moved >= m_prev,
					      "%s: sample %zu goes back in time", h_allocators[i].name, k);
				/* the process region counts from the process's
				 * start: its first sample has what was moved
				 * before memcheck's start */
				ck_assert_msg(k || t == 0,
					      "%s: the first sample is not the region's begin",
					      h_allocators[i].name);
				if (track)
					ck_assert_msg(live <= peak_abs, "%s: sample %zu has %llu live "
						      "bytes, above the peak's %llu", h_allocators[i].name,
						      k, (unsigned long long)live,
						      (unsigned long long)peak_abs);
				else
					ck_assert_msg(lv->type == HJ_NULL, "%s: count-only sample %zu "
						      "has live bytes", h_allocators[i].name, k);
				ck_assert_msg(h_json_at(s, 3)->u64 > 0, "%s: sample %zu without RSS",
					      h_allocators[i].name, k);
				t_prev = t;
				m_prev = moved;
			}
			if (track)
				ck_assert_msg(m_prev >= 20000ull * 64 * 256 * 2,
					      "%s: the last sample has %llu bytes moved",
					      h_allocators[i].name, (unsigned long long)m_prev);
			h_report_free(&rep);
		}
	}
}
END_TEST

/* memcheck report on plain_peak's record under glibc, with its args. */
static struct h_run report_of(const char *jsonl, const char *a1, const char *a2, const char *a3,
			      const char *a4)
{
	char cli[4096];
	snprintf(cli, sizeof cli, "%s/memcheck", h_build());
	struct h_run r;
	H_RUN(&r, 0, NULL, NULL, cli, "report", a1, a2, a3, a4, jsonl);
	return r;
}

static const char *glibc_report(void)
{
	const char *report = h_tmppath("peak.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      "MEMCHECK_TIMELINE=64", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_peak"), "2000");
	ck_assert_msg(r.exit_code == 0, "plain_peak: %s", h_status(&r));
	h_run_free(&r);
	return report;
}

START_TEST(massif_file_reads_in_ms_print)
{
	const char *report = glibc_report();
	const char *out = h_tmppath("memcheck.massif");
	struct h_run r = report_of(report, "--massif", out, "--allocator", "glibc");
	ck_assert_msg(r.exit_code == 0, "memcheck report --massif: %s\n%s", h_status(&r), r.err);
	h_run_free(&r);
	struct h_run m;
	H_RUN(&m, 0, NULL, NULL, "/usr/bin/ms_print", out);
	if (m.exit_code == -1 || (m.exit_code == 127 && !m.out_len)) {
		printf("note: ms_print not installed; skipping\n");
		h_run_free(&m);
		return;
	}
	ck_assert_msg(m.exit_code == 0, "ms_print: %s\n%s", h_status(&m), m.err);
	ck_assert_msg(strstr(m.out, "(peak)") && strstr(m.out, "(40,000B) ") &&
		      strstr(m.out, "keep_a (plain_peak.c:") && strstr(m.out, "(30,000B) ") &&
		      strstr(m.out, "burst_b (plain_peak.c:") &&
		      strstr(m.out, "100.00% (70,000B) (heap allocation functions)"),
		      "ms_print's output lacks the peak's tree:\n%s", m.out);
	h_run_free(&m);
}
END_TEST

START_TEST(folded_stacks)
{
	const char *report = glibc_report();
	const char *out = h_tmppath("peak.folded");
	struct h_run r = report_of(report, "--folded", out, "--region", "process");
	ck_assert_msg(r.exit_code == 0, "memcheck report --folded: %s\n%s", h_status(&r), r.err);
	h_run_free(&r);
	char *text = h_read_file(out, NULL);
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
END_TEST

/* Names from the program are text in the page, never markup; nothing is
 * loaded from elsewhere. */
START_TEST(html_escapes_and_stands_alone)
{
	const char *report = h_tmppath("name.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("pictures"), "name");
	h_run_free(&r);
	const char *html = h_tmppath("name.html");
	r = report_of(report, "--html", html, "--region", "*");
	ck_assert_msg(r.exit_code == 0, "memcheck report --html: %s\n%s", h_status(&r), r.err);
	h_run_free(&r);
	char *page = h_read_file(html, NULL);
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
END_TEST

/* Under a failing peak budget the table names the sites, file:line
 * first; so does the library's own text. */
START_TEST(failing_peak_budget_names_sites)
{
	const char *budget = h_tmppath("peak.budget");
	FILE *f = fopen(budget, "w");
	fputs("[*]\npeak_live_bytes <= 60000\n", f);
	fclose(f);
	char cli[4096];
	snprintf(cli, sizeof cli, "%s/memcheck", h_build());
	struct h_run r;
	H_RUN(&r, 0, NULL, NULL, cli, "run", "-a", "glibc", "--budget", budget, "--",
	      h_prog("plain_peak"));
	ck_assert_msg(r.exit_code == 1, "memcheck run: %s, expected exit 1\n%s", h_status(&r), r.err);
	const char *v = strstr(r.err, "peak_live_bytes 68.4 KiB > 58.6 KiB\n");
	ck_assert_msg(v, "no violation line in the table:\n%s", r.err);
	const char *a = strstr(v, "      at the peak of live bytes, 68.4 KiB in 50 blocks");
	const char *k = strstr(v, "        tests/prog/plain_peak.c:24 (keep_a): 39.1 KiB in 40 blocks");
	const char *b = strstr(v, "        tests/prog/plain_peak.c:30 (burst_b): 29.3 KiB in 10 blocks");
	ck_assert_msg(a && k && b && a < k && k < b, "the sites are not under the violation:\n%s",
		      r.err);
	/* the library's text report of the same region */
	ck_assert_msg(strstr(r.err, "tests/prog/plain_peak.c:24 (keep_a): 40,000 bytes in 40 "
			     "blocks (57.1%)"), "the text report does not name the sites:\n%s",
		      r.err);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("pictures", 120);
	tcase_add_test(tc, peak_sites_exact);
	tcase_add_test(tc, peak_sites_threads);
	tcase_add_test(tc, peak_sites_threads_handoff);
	tcase_add_test(tc, peak_sites_as_massif);
	tcase_add_test(tc, peak_sites_nested);
	tcase_add_test(tc, timeline_bounded);
	tcase_add_test(tc, massif_file_reads_in_ms_print);
	tcase_add_test(tc, folded_stacks);
	tcase_add_test(tc, html_escapes_and_stands_alone);
	tcase_add_test(tc, failing_peak_budget_names_sites);
	return h_run_suite(NULL);
}
