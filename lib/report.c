/*
 * report.c - the two views of a region's result: a text report on stderr
 * in the spirit of valgrind's HEAP SUMMARY, and one JSON object per line
 * appended to MEMCHECK_REPORT (memcheck-report(5)).  Both are written
 * from the same struct memcheck_result; stacks are symbolized only here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static const char *bytes_h(uint64_t v, char buf[32])
{
	if (v == MEMCHECK_UNKNOWN)
		return "unknown";
	if (v < 10 * 1024)
		snprintf(buf, 32, "%llu B", (unsigned long long)v);
	else if (v < 10 * 1024 * 1024)
		snprintf(buf, 32, "%.1f KiB", (double)v / 1024);
	else if (v < 10ull * 1024 * 1024 * 1024)
		snprintf(buf, 32, "%.1f MiB", (double)v / (1024 * 1024));
	else
		snprintf(buf, 32, "%.1f GiB", (double)v / (1024.0 * 1024 * 1024));
	return buf;
}

/* A count with thousands separators, or "unknown" where not measured. */
static const char *num(uint64_t v, char buf[32])
{
	return v == MEMCHECK_UNKNOWN ? "unknown" : mc_commas(v, buf);
}

/* Reports show a stack up to main, as valgrind does
 * (--show-below-main=no): what lies below, the C library's start-up, is
 * every stack's.  fi: a frame's functions, innermost first, k of them. */
static bool is_main(const struct mc_frame_info *fi, int k)
{
	return strcmp(fi[k - 1].function, "main") == 0;
}

/* "   at 0x...: fn (file:line)" lines for a stack, as valgrind writes them. */
static void text_stack(struct mc_buf *b, const char *prefix, uint32_t id)
{
	const uintptr_t *f;
	int n = mc_stack_get_code(id, &f);
	if (n == 0) {
		mc_buf_printf(b, "%s   (no stack recorded: MEMCHECK_STACK_DEPTH=0)\n", prefix);
		return;
	}
	int lead = mc_allocfn_lead(f, n), at = 0;
	for (int i = 0; i < n; i++) {
		struct mc_frame_info fi[MC_MAX_INLINE];
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		for (int j = 0; j < k; j++, at++) {
			char fn[4 * sizeof fi[j].function], where[4 * sizeof fi[j].file];
			const char *mark = at < lead ? " [allocation function]" : "";
			mc_buf_printf(b, "%s   %s 0x%lx: %s", prefix, i || j ? "by" : "at",
				      (unsigned long)f[i],
				      mc_text_escape(fi[j].function, fn, sizeof fn));
			if (fi[j].file[0])
				mc_buf_printf(b, " (%s:%d)%s%s\n",
					      mc_text_escape(fi[j].file, where, sizeof where),
					      fi[j].line, j + 1 < k ? " [inlined]" : "", mark);
			else
				mc_buf_printf(b, " (in %s)%s\n",
					      mc_text_escape(fi[j].object[0] ? fi[j].object : "?",
							     where, sizeof where), mark);
		}
		if (is_main(fi, k))
			break;
	}
}

static void json_stack(struct mc_buf *b, uint32_t id)
{
	const uintptr_t *f;
	int n = mc_stack_get_code(id, &f);
	int lead = mc_allocfn_lead(f, n), at = 0;
	mc_buf_puts(b, "[");
	for (int i = 0; i < n; i++) {
		struct mc_frame_info fi[MC_MAX_INLINE];
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		for (int j = 0; j < k; j++, at++) {
			mc_buf_printf(b, "%s{\"address\":\"0x%lx\",\"function\":",
				      i || j ? "," : "", (unsigned long)f[i]);
			mc_buf_json_str(b, fi[j].function);
			mc_buf_puts(b, ",\"file\":");
			if (fi[j].file[0])
				mc_buf_json_str(b, fi[j].file);
			else
				mc_buf_puts(b, "null");
			if (fi[j].line > 0)
				mc_buf_printf(b, ",\"line\":%d,\"object\":", fi[j].line);
			else
				mc_buf_puts(b, ",\"line\":null,\"object\":");
			mc_buf_json_str(b, fi[j].object);
			/* Inlined copies share the address of the function
			 * they were inlined into, which follows them. */
			mc_buf_printf(b, ",\"inlined\":%s%s}", j + 1 < k ? "true" : "false",
				      at < lead ? ",\"alloc_fn\":true" : "");
		}
		if (is_main(fi, k))
			break;
	}
	mc_buf_puts(b, "]");
}

/* The frame a site is named by: the first of its stack past the
 * allocation functions (allocfn.c), inlined frames counted one by one;
 * the last when every frame is one.  Returns false without a stack. */
static bool site_frame(uint32_t id, struct mc_frame_info *out)
{
	const uintptr_t *f;
	int n = mc_stack_get_code(id, &f);
	if (!n)
		return false;
	int lead = mc_allocfn_lead(f, n), at = 0;
	for (int i = 0; i < n; i++) {
		struct mc_frame_info fi[MC_MAX_INLINE];
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		for (int j = 0; j < k; j++, at++)
			if (at >= lead || (i == n - 1 && j == k - 1)) {
				*out = fi[j];
				return true;
			}
	}
	return false;
}

/* "file.c:42 (fn)" for a site named by fi (site_frame's, when found),
 * or "(no stack recorded)". */
static void site_name(struct mc_buf *b, bool found, const struct mc_frame_info *fi)
{
	if (!found)
		mc_buf_puts(b, "(no stack recorded)");
	else if (fi->file[0])
		mc_buf_printf(b, "%s:%d (%s)", fi->file, fi->line, fi->function);
	else
		mc_buf_printf(b, "%s (in %s)", fi->function, fi->object[0] ? fi->object : "?");
}

/* Whether two sites print as one line. */
static bool same_site(bool fa, const struct mc_frame_info *a, bool fb, const struct mc_frame_info *b)
{
	if (fa != fb || !fa)
		return fa == fb;
	return a->line == b->line && !strcmp(a->file, b->file) &&
	       !strcmp(a->function, b->function) && !strcmp(a->object, b->object);
}

/* Where the memory was at the peak, site by site, file:line first. */
static void text_peak(struct mc_buf *b, const char *p, const struct mc_peak *pk)
{
	char c1[32], c2[32];
	mc_buf_printf(b, "%s   at the peak of live bytes, %s bytes in %s blocks were live "
		      "(the whole process's):\n", p, mc_commas(pk->bytes, c1),
		      mc_commas(pk->blocks, c2));
	/* The sites are the largest stacks; stacks that differ only below
	 * the frame that names them (a recursive caller's depth) print as
	 * one line with their sum and how many stacks it holds, the lines
	 * largest first. */
	struct line {
		uint64_t bytes, blocks;
		uint32_t first, stacks;
	} line[MC_PEAK_SITES_MAX];
	bool taken[MC_PEAK_SITES_MAX] = { false };
	struct mc_frame_info a, o;
	uint32_t lines = 0;
	for (uint32_t i = 0; i < pk->n; i++) {
		if (taken[i])
			continue;
		bool fa = site_frame(pk->top[i].stack, &a);
		struct line l = { pk->top[i].bytes, pk->top[i].blocks, i, 1 };
		for (uint32_t j = i + 1; j < pk->n; j++) {
			if (taken[j] || !same_site(fa, &a, site_frame(pk->top[j].stack, &o), &o))
				continue;
			taken[j] = true;
			l.bytes += pk->top[j].bytes;
			l.blocks += pk->top[j].blocks;
			l.stacks++;
		}
		uint32_t k = lines++;
		for (; k > 0 && line[k - 1].bytes < l.bytes; k--)
			line[k] = line[k - 1];
		line[k] = l;
	}
	for (uint32_t k = 0; k < lines; k++) {
		const struct line *l = &line[k];
		bool fa = site_frame(pk->top[l->first].stack, &a);
		mc_buf_printf(b, "%s     ", p);
		site_name(b, fa, &a);
		if (l->stacks > 1)
			mc_buf_printf(b, ", %u stacks", l->stacks);
		mc_buf_printf(b, ": %s bytes in %s blocks (%.1f%%)\n", mc_commas(l->bytes, c1),
			      mc_commas(l->blocks, c2),
			      pk->bytes ? 100.0 * (double)l->bytes / (double)pk->bytes : 0.0);
	}
	if (pk->other_sites)
		mc_buf_printf(b, "%s     %llu other sites: %s bytes in %s blocks\n", p,
			      (unsigned long long)pk->other_sites, mc_commas(pk->other_bytes, c1),
			      mc_commas(pk->other_blocks, c2));
}

static void json_peak(struct mc_buf *b, const struct mc_peak *pk)
{
	if (!pk) {
		mc_buf_puts(b, ",\"peak_snapshot\":null");
		return;
	}
	mc_buf_printf(b, ",\"peak_snapshot\":{\"live_bytes\":%llu,\"live_blocks\":%llu,\"sites\":[",
		      (unsigned long long)pk->bytes, (unsigned long long)pk->blocks);
	for (uint32_t i = 0; i < pk->n; i++) {
		mc_buf_printf(b, "%s{\"bytes\":%llu,\"blocks\":%llu,\"stack\":", i ? "," : "",
			      (unsigned long long)pk->top[i].bytes,
			      (unsigned long long)pk->top[i].blocks);
		json_stack(b, pk->top[i].stack);
		mc_buf_puts(b, "}");
	}
	mc_buf_printf(b, "],\"other\":{\"sites\":%llu,\"bytes\":%llu,\"blocks\":%llu}}",
		      (unsigned long long)pk->other_sites, (unsigned long long)pk->other_bytes,
		      (unsigned long long)pk->other_blocks);
}

/* Seconds as JSON without printf's %f, which follows the program's
 * locale (a decimal comma is not JSON). */
static void json_seconds(struct mc_buf *b, double s)
{
	unsigned long long us = s > 0 ? (unsigned long long)(s * 1e6 + 0.5) : 0;
	mc_buf_printf(b, "%llu.%06llu", us / 1000000, us % 1000000);
}

static void json_sample_u64(struct mc_buf *b, uint64_t v)
{
	if (v == MEMCHECK_UNKNOWN)
		mc_buf_puts(b, ",null");
	else
		mc_buf_printf(b, ",%llu", (unsigned long long)v);
}

static void json_timeline(struct mc_buf *b, const struct mc_timeline *tl)
{
	if (!tl) {
		mc_buf_puts(b, ",\"timeline\":null");
		return;
	}
	mc_buf_printf(b, ",\"timeline\":{\"step\":%llu,\"columns\":[\"seconds\",\"moved\","
		      "\"live_bytes\",\"rss\",\"retained_bytes\"],\"samples\":[",
		      (unsigned long long)tl->step);
	for (uint32_t i = 0; i < tl->n; i++) {
		const struct mc_sample *s = &tl->samples[i];
		mc_buf_puts(b, i ? ",[" : "[");
		json_seconds(b, s->seconds);
		json_sample_u64(b, s->moved);
		json_sample_u64(b, s->live);
		json_sample_u64(b, s->rss);
		json_sample_u64(b, s->retained);
		mc_buf_puts(b, "]");
	}
	mc_buf_puts(b, "]}");
}

static const char *const kind_key[] = { "definitely_lost", "indirectly_lost",
					 "possibly_lost", "still_reachable" };
static const char *const kind_text[] = { "definitely lost", "indirectly lost",
					  "possibly lost", "still reachable" };

static void json_u64(struct mc_buf *b, const char *key, uint64_t v)
{
	if (v == MEMCHECK_UNKNOWN)
		mc_buf_printf(b, ",\"%s\":null", key);
	else
		mc_buf_printf(b, ",\"%s\":%llu", key, (unsigned long long)v);
}

static void json_count(struct mc_buf *b, const char *key, const struct memcheck_count *c)
{
	if (c->blocks == MEMCHECK_UNKNOWN) /* valgrind mode's indirectly_lost */
		mc_buf_printf(b, ",\"%s\":null", key);
	else
		mc_buf_printf(b, ",\"%s\":{\"blocks\":%llu,\"bytes\":%llu}", key,
		      (unsigned long long)c->blocks, (unsigned long long)c->bytes);
}

/* Failure injection: the region's id and allocation calls (null unless
 * counting was on), whether the test expects to fail on OOM, and the
 * stacks of the failures injected. */
static void json_fault(struct mc_buf *b, const struct mc_fault_info *f)
{
	if (f && f->counted) {
		mc_buf_puts(b, ",\"region_id\":");
		mc_buf_json_str(b, f->id);
		mc_buf_printf(b, ",\"alloc_calls\":%llu", (unsigned long long)f->calls);
	} else {
		mc_buf_puts(b, ",\"region_id\":null,\"alloc_calls\":null");
	}
	mc_buf_printf(b, ",\"oom_expected\":%s,\"injected_stacks\":[",
		      f && f->oom_expected ? "true" : "false");
	for (size_t i = 0; f && i < f->nstacks; i++) {
		mc_buf_printf(b, "%s{\"failures\":%llu,\"stack\":", i ? "," : "",
			      (unsigned long long)f->stacks[i].count);
		json_stack(b, f->stacks[i].stack);
		mc_buf_puts(b, "}");
	}
	mc_buf_puts(b, "]");
}

/* One line to MEMCHECK_FAIL_LOG. */
static void append_line(const char *path, const struct mc_buf *b, const char *what)
{
	static _Atomic int said;
	mc_append(path, b->s, b->len, what, &said);
}

void mc_report_injection(const char *region_id, const char *region, uint64_t index,
			 uint32_t stack)
{
	mc_own_work_begin(true);
	struct mc_buf b = { 0 };
	mc_buf_puts(&b, "{\"region_id\":");
	mc_buf_json_str(&b, region_id);
	mc_buf_puts(&b, ",\"region\":");
	mc_buf_json_str(&b, region);
	mc_buf_printf(&b, ",\"index\":%llu,\"pid\":%d,\"program\":",
		      (unsigned long long)index, (int)getpid());
	mc_buf_json_str(&b, mc_program());
	mc_buf_puts(&b, ",\"stack\":");
	json_stack(&b, stack);
	mc_buf_puts(&b, "}\n");
	if (!b.oom)
		append_line(mc_opt.fail_log, &b, "MEMCHECK_FAIL_LOG");
	mc_buf_free(&b);
	mc_own_work_end();
}

void mc_report_expect_oom(const char *region_id, const char *region)
{
	struct mc_buf b = { 0 };
	mc_buf_puts(&b, "{\"region_id\":");
	mc_buf_json_str(&b, region_id);
	mc_buf_puts(&b, ",\"region\":");
	mc_buf_json_str(&b, region);
	mc_buf_printf(&b, ",\"oom_expected\":true,\"pid\":%d}\n", (int)getpid());
	if (!b.oom)
		append_line(mc_opt.fail_log, &b, "MEMCHECK_FAIL_LOG");
	mc_buf_free(&b);
}

static void emit_json(const struct mc_region_report *rr)
{
	const struct memcheck_result *r = rr->r;
	struct mc_buf b = { 0 };
	mc_buf_puts(&b, "{\"name\":");
	mc_buf_json_str(&b, r->name);
	mc_buf_printf(&b, ",\"pid\":%d,\"program\":", (int)getpid());
	mc_buf_json_str(&b, mc_program());
	mc_buf_puts(&b, ",\"allocator\":");
	mc_buf_json_str(&b, mc_allocator_name());
	mc_buf_printf(&b, ",\"implicit\":%s", rr->process ? "true" : "false");
	json_u64(&b, "allocs", r->allocs);
	json_u64(&b, "frees", r->frees);
	json_u64(&b, "reallocs", r->reallocs);
	json_u64(&b, "failed_allocs", r->failed_allocs);
	json_u64(&b, "injected", r->injected);
	json_u64(&b, "bytes_allocated", r->bytes_allocated);
	json_u64(&b, "bytes_freed", r->bytes_freed);
	json_u64(&b, "live_blocks", r->live_blocks);
	json_u64(&b, "live_bytes", r->live_bytes);
	json_u64(&b, "peak_live_bytes", r->peak_live_bytes);
	json_count(&b, "definitely_lost", &r->definitely_lost);
	json_count(&b, "indirectly_lost", &r->indirectly_lost);
	json_count(&b, "possibly_lost", &r->possibly_lost);
	json_count(&b, "still_reachable", &r->still_reachable);
	json_count(&b, "suppressed", &r->suppressed);
	mc_buf_printf(&b, ",\"leak_check\":\"%s\"", rr->valgrind ? "valgrind" : "memcheck");
	json_u64(&b, "double_frees", r->double_frees);
	json_u64(&b, "invalid_frees", r->invalid_frees);
	json_u64(&b, "retained_bytes", r->retained_bytes);
	json_u64(&b, "retained_after_release", r->retained_after_release);
	json_u64(&b, "timed_purge_ms", mc_allocator_timed_purge_ms());
	json_u64(&b, "rss_begin", r->rss_begin);
	json_u64(&b, "rss_end", r->rss_end);
	json_u64(&b, "peak_rss", r->peak_rss);
	mc_buf_printf(&b, ",\"peak_rss_scope\":\"%s\"",
		      r->peak_rss_whole_process ? "process" : "region");
	/* Not %f: the program may have set a locale whose decimal point is
	 * a comma, which is not JSON. */
	if (rr->scan_seconds >= 0) {
		mc_buf_puts(&b, ",\"scan_seconds\":");
		json_seconds(&b, rr->scan_seconds);
	} else {
		mc_buf_puts(&b, ",\"scan_seconds\":null");
	}
	mc_buf_puts(&b, ",\"seconds\":");
	json_seconds(&b, r->seconds);
	mc_buf_printf(&b, ",\"verdict\":\"%s\",\"violations\":[", r->pass ? "pass" : "fail");
	/* violations[] holds "; "-separated messages */
	const char *v = r->violations;
	for (int i = 0; *v; i++) {
		const char *end = strstr(v, "; ");
		size_t len = end ? (size_t)(end - v) : strlen(v);
		char one[sizeof r->violations];
		memcpy(one, v, len);
		one[len] = 0;
		if (i)
			mc_buf_puts(&b, ",");
		mc_buf_json_str(&b, one);
		v += len + (end ? 2 : 0);
	}
	mc_buf_puts(&b, "],\"leaks\":[");
	for (size_t i = 0; i < rr->nleaks; i++) {
		const struct mc_leak *l = &rr->leaks[i];
		mc_buf_printf(&b, "%s{\"kind\":\"%s\",\"blocks\":%llu,\"bytes\":%llu,\"stack\":",
			      i ? "," : "", kind_key[l->kind & 3], (unsigned long long)l->blocks,
			      (unsigned long long)l->bytes);
		json_stack(&b, l->stack);
		mc_buf_puts(&b, "}");
	}
	mc_buf_puts(&b, "],\"suppressions\":[");
	for (size_t i = 0; rr->supp && i < rr->supp->nused; i++) {
		const struct mc_supp_used *u = &rr->supp->used[i];
		mc_buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		mc_buf_json_str(&b, u->name);
		mc_buf_puts(&b, ",\"file\":");
		mc_buf_json_str(&b, u->file);
		mc_buf_printf(&b, ",\"line\":%d,\"records\":%llu,\"blocks\":%llu,\"bytes\":%llu}",
			      u->line, (unsigned long long)u->records,
			      (unsigned long long)u->blocks, (unsigned long long)u->bytes);
	}
	mc_buf_puts(&b, "]");
	json_fault(&b, rr->fault);
	json_peak(&b, rr->peak);
	json_timeline(&b, rr->timeline);
	mc_buf_puts(&b, "}\n");

	if (b.oom) {
		mc_log("out of memory writing the report of region \"%s\"", r->name);
	} else {
		static _Atomic int said; /* once per process, not per region */
		mc_append(mc_opt.report, b.s, b.len, "MEMCHECK_REPORT", &said);
	}
	mc_buf_free(&b);
}

static void emit_text(const struct mc_region_report *rr)
{
	const struct memcheck_result *r = rr->r;
	bool fail = !r->pass;
	if (mc_opt.text == MC_TEXT_NONE || (mc_opt.text == MC_TEXT_FAIL && !fail))
		return;
	char p[32], c1[32], c2[32], c3[32], c4[32], h1[32], h2[32], h3[32];
	/* The program's names, escaped (mc_text_escape): a region name with
	 * a newline in it must not make a line of its own. */
	char name[4 * sizeof r->name], prog[1024], alloc[1024];
	mc_text_escape(r->name, name, sizeof name);
	mc_text_escape(mc_program(), prog, sizeof prog);
	mc_text_escape(mc_allocator_name(), alloc, sizeof alloc);
	snprintf(p, sizeof p, "==%d==", (int)mc_pid());
	struct mc_buf b = { 0 };
	if (!fail && mc_opt.text == MC_TEXT_SUMMARY) {
		mc_buf_printf(&b, "%s memcheck: \"%s\" in %s: %s allocs, %s frees, %s bytes "
			      "allocated, peak %s bytes live, no leaks (%s%s)\n", p, name,
			      prog, num(r->allocs, c1), num(r->frees, c2),
			      num(r->bytes_allocated, c3),
			      num(r->peak_live_bytes, c4), alloc,
			      rr->valgrind ? "; valgrind's leak check" : "");
		mc_text_write(b.s, b.len);
		mc_buf_free(&b);
		return;
	}
	mc_buf_printf(&b, "%s memcheck: region \"%s\" in %s (allocator %s)\n", p, name,
		      prog, alloc);
	mc_buf_printf(&b, "%s   in use at end: %s bytes in %s blocks\n", p,
		      num(r->live_bytes, c1), num(r->live_blocks, c2));
	mc_buf_printf(&b, "%s   total heap usage: %s allocs, %s frees, %s bytes allocated\n",
		      p, num(r->allocs, c1), num(r->frees, c2),
		      num(r->bytes_allocated, c3));
	mc_buf_printf(&b, "%s   reallocs: %s, failed allocations: %s, peak live: %s bytes\n",
		      p, num(r->reallocs, c1), num(r->failed_allocs, c2),
		      num(r->peak_live_bytes, c3));
	if (r->injected) {
		const struct mc_fault_info *f = rr->fault;
		char id[4 * sizeof f->id];
		mc_buf_printf(&b, "%s   injected failures: %s%s%s%s\n", p, num(r->injected, c1),
			      f && f->counted ? " (region id " : "",
			      f && f->counted ? mc_text_escape(f->id, id, sizeof id) : "",
			      f && f->counted ? ")" : "");
		for (size_t i = 0; f && i < f->nstacks; i++) {
			mc_buf_printf(&b, "%s   %s allocation failures injected at:\n", p,
				      num(f->stacks[i].count, c1));
			text_stack(&b, p, f->stacks[i].stack);
		}
	}
	mc_buf_printf(&b, "%s   RSS: %s at start, %s at end, peak %s%s; %.3f s\n", p,
		      bytes_h(r->rss_begin, h1), bytes_h(r->rss_end, h2),
		      bytes_h(r->peak_rss, h3),
		      r->peak_rss_whole_process ? " (the process's: clear_refs refused)" : "",
		      r->seconds);
	if (r->retained_bytes != MEMCHECK_UNKNOWN) {
		mc_buf_printf(&b, "%s   allocator retains %s not in use", p,
			      bytes_h(r->retained_bytes, h1));
		if (r->retained_after_release != MEMCHECK_UNKNOWN)
			mc_buf_printf(&b, ", %s after its release call",
				      bytes_h(r->retained_after_release, h2));
		mc_buf_puts(&b, "\n");
	}
	if (rr->peak && (mc_opt.text == MC_TEXT_FULL || mc_violations_name_peak(r->violations)))
		text_peak(&b, p, rr->peak);
	if (r->double_frees || r->invalid_frees)
		mc_buf_printf(&b, "%s   heap errors: %s double frees, %s frees of unknown pointers\n",
			      p, num(r->double_frees, c1), num(r->invalid_frees, c2));
	if (!mc_opt.track)
		mc_buf_printf(&b, "%s   (MEMCHECK_TRACK=0: calls and bytes allocated only; the "
			      "blocks in use are the net count)\n", p);
	for (size_t i = 0; i < rr->nleaks; i++) {
		const struct mc_leak *l = &rr->leaks[i];
		/* valgrind's words ("in loss record N of M"): tools that read
		 * valgrind's output, such as CTest, count these lines. */
		mc_buf_printf(&b, "%s\n%s %s bytes in %s blocks are %s in loss record %zu "
			      "of %zu in region \"%s\"\n", p, p, num(l->bytes, c1),
			      num(l->blocks, c2), kind_text[l->kind & 3], i + 1,
			      rr->nleak_groups, name);
		text_stack(&b, p, l->stack);
	}
	if (rr->nleak_groups > rr->nleaks)
		mc_buf_printf(&b, "%s\n%s (%zu more leak records not shown; MEMCHECK_MAX_LEAKS=%d)\n",
			      p, p, rr->nleak_groups - rr->nleaks, mc_opt.max_leaks);
	if (rr->valgrind) {
		mc_buf_printf(&b, "%s\n%s LEAK SUMMARY (valgrind's: its leak checks at the region's "
			      "begin and end, the differences; its loss records are in its "
			      "own output):\n", p, p);
		mc_buf_printf(&b, "%s    definitely lost (indirectly lost included): %s bytes in "
			      "%s blocks\n", p, num(r->definitely_lost.bytes, c1),
			      num(r->definitely_lost.blocks, c2));
		const struct memcheck_count *k[] = { &r->possibly_lost, &r->still_reachable,
						     &r->suppressed };
		static const char *const what[] = { "possibly lost", "still reachable",
						    "suppressed" };
		for (int i = 0; i < 3; i++)
			mc_buf_printf(&b, "%s    %s: %s bytes in %s blocks\n", p, what[i],
				      num(k[i]->bytes, c1), num(k[i]->blocks, c2));
	} else if (r->live_blocks && mc_opt.track) {
		const struct memcheck_count *k[] = { &r->definitely_lost, &r->indirectly_lost,
						     &r->possibly_lost, &r->still_reachable };
		mc_buf_printf(&b, "%s\n%s LEAK SUMMARY:\n", p, p);
		for (int i = 0; i < 4; i++)
			mc_buf_printf(&b, "%s    %s: %s bytes in %s blocks\n", p, kind_text[i],
				      num(k[i]->bytes, c1), num(k[i]->blocks, c2));
		mc_buf_printf(&b, "%s    suppressed: %s bytes in %s blocks\n", p,
			      num(r->suppressed.bytes, c1), num(r->suppressed.blocks, c2));
		if (rr->scan_seconds >= 0)
			mc_buf_printf(&b, "%s    (reachability scan: %.3f s)\n", p, rr->scan_seconds);
		else
			mc_buf_printf(&b, "%s    (no reachability scan, MEMCHECK_SCAN=0 or no memory "
				      "for it: every block left behind counts as definitely "
				      "lost)\n", p);
	}
	for (size_t i = 0; rr->supp && i < rr->supp->nused; i++) {
		const struct mc_supp_used *u = &rr->supp->used[i];
		char sname[1024], sfile[1024];
		if (i == 0)
			mc_buf_printf(&b, "%s\n", p);
		mc_buf_printf(&b, "%s used_suppression: %s %s %s:%d suppressed: %s bytes in "
			      "%s blocks\n", p, num(u->records, c1),
			      mc_text_escape(u->name, sname, sizeof sname),
			      mc_text_escape(u->file, sfile, sizeof sfile), u->line,
			      num(u->bytes, c2), num(u->blocks, c3));
	}
	char violations[4 * sizeof r->violations];
	mc_buf_printf(&b, "%s %s%s\n", p, fail ? "FAIL: " : "PASS",
		      fail ? mc_text_escape(r->violations, violations, sizeof violations) : "");
	mc_text_write(b.s, b.len);
	mc_buf_free(&b);
}

/* memcheck_leak_site(): the stack of the last region's failing leak,
 * symbolized only when asked (a test framework's failure). */
static _Atomic uint32_t last_leak;

void mc_report_last_leak(bool pass, const struct mc_leak *leaks, size_t n)
{
	uint32_t stack = 0;
	for (size_t i = 0; i < n && !pass && !stack; i++)
		if (leaks[i].kind == MC_KIND_DEFINITE || leaks[i].kind == MC_KIND_POSSIBLE)
			stack = leaks[i].stack;
	atomic_store(&last_leak, stack);
}

/* Past the allocation functions (allocfn.c): the first frame with a
 * source file outside the system's libraries (the program's code, not
 * strdup's or the C++ runtime's), else the first with a source file. */
MC_API int memcheck_leak_site(const char **file, int *line, const char **function)
{
	static struct mc_frame_info site;
	uint32_t stack = atomic_load(&last_leak);
	if (!stack)
		return -1;
	mc_guard_enter();
	const uintptr_t *f;
	int nf = mc_stack_get_code(stack, &f);
	int lead = mc_allocfn_lead(f, nf);
	bool found = false;
	for (int pass = 0; pass < 2 && !found; pass++)
		for (int i = 0, at = 0; i < nf && !found; i++) {
			struct mc_frame_info fi[MC_MAX_INLINE];
			int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
			for (int j = 0; j < k && !found; j++, at++)
				if (fi[j].file[0] && (at >= lead || pass) &&
				    (pass || !mc_program_installed(fi[j].object))) {
					site = fi[j];
					found = true;
				}
		}
	mc_symbolize_end();
	mc_guard_leave();
	if (!found)
		return -1;
	if (file)
		*file = site.file;
	if (line)
		*line = site.line;
	if (function)
		*function = site.function;
	return 0;
}

void mc_report_emit(const struct mc_region_report *rr)
{
	emit_text(rr);
	if (mc_opt.report)
		emit_json(rr);
	/* The process region ends last, as the process exits. */
	if (rr->process)
		mc_symbolize_end_at_exit();
	else
		mc_symbolize_end();
}

void mc_report_heap_error(const char *what, uintptr_t ptr, uint64_t size,
			  uint32_t alloc_stack, uint32_t free_stack, uint32_t now_stack,
			  uintptr_t block)
{
	char p[32], c1[32], c2[32];
	mc_own_work_begin(true);
	snprintf(p, sizeof p, "==%d==", (int)mc_pid());
	struct mc_buf b = { 0 };
	/* A block memcheck knows of, freed again or freed through a pointer
	 * inside it: valgrind's heading, which tools that read valgrind's
	 * output (CTest) count. */
	char prog[1024];
	mc_buf_printf(&b, "%s memcheck: %s%s in %s: 0x%lx", p,
		      free_stack || block ? "Invalid free() / delete / delete[] / realloc(): " : "",
		      what, mc_text_escape(mc_program(), prog, sizeof prog), (unsigned long)ptr);
	if (block)
		mc_buf_printf(&b, ", %s bytes inside a block of %s bytes at 0x%lx",
			      mc_commas(ptr - block, c1), mc_commas(size, c2),
			      (unsigned long)block);
	else if (alloc_stack || size)
		mc_buf_printf(&b, " (%s bytes)", mc_commas(size, c1));
	mc_buf_puts(&b, "\n");
	text_stack(&b, p, now_stack);
	if (free_stack) {
		mc_buf_printf(&b, "%s  Block was freed at:\n", p);
		text_stack(&b, p, free_stack);
	}
	if (alloc_stack) {
		mc_buf_printf(&b, "%s  Block was allocated at:\n", p);
		text_stack(&b, p, alloc_stack);
	}
	if (!alloc_stack && !free_stack && !block)
		mc_buf_printf(&b, "%s  (passed on to the allocator: it may come from an "
			      "allocator function memcheck does not wrap)\n", p);
	else
		mc_buf_printf(&b, "%s  (not passed on to the allocator; the program continues)\n", p);
	mc_text_write(b.s, b.len);
	mc_buf_free(&b);
	mc_symbolize_end();
	mc_own_work_end();
}
