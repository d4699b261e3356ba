/*
 * test_wrapper.c - memcheck as the wrapper a test driver puts in front of
 * each test: valgrind's command line (tools/vgcompat.c, what CTest's
 * MEMORYCHECK_TYPE=Valgrind runs) and `memcheck run --quiet` (meson's
 * exe_wrapper, automake's LOG_COMPILER).  The statuses a driver reads
 * (0, 77 skip, 99 hard error, a leak's failure, a signal) come through as
 * the driver must see them, under every allocator.
 *
 * Each command line is a row, run once or under every allocator (the
 * allocator's object in LD_PRELOAD as a user would have it: memcheck puts
 * itself in front), MEMCHECK_TEXT unset and memcheck's own exit status
 * (H_EXITCODE) as a driver sees them.  valgrind's command lines are
 * made whole by the rows' setups: no "--" before the program (a row's
 * cli puts one there), and --log-file=PATH is one word with the path in
 * it, which H_FILE cannot stand for; the setup keeps the log's path for
 * the row's callback (setup, run and check share the row's process).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define MC_H_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The log the row's setup named: a path, or with %p a pattern. */
static const char *log_path;

/* valgrind's command line as a driver writes it, without the "--" a row
 * puts before its program: [--suppressions=SUPP] [--log-file=LOG], the
 * row's words, the program and its arguments, all in run->cli (a fresh
 * list, never freed). */
static bool vg_line(struct h_spec *run, const char *supp, const char *log)
{
	size_t nc = 0, na = 0;
	while (run->cli[nc])
		nc++;
	while (run->args && run->args[na])
		na++;
	const char **w = calloc(nc + na + 4, sizeof *w);
	ck_assert_ptr_nonnull(w);
	size_t n = 0;
	if (supp)
		w[n++] = h_env("--suppressions=%s", supp);
	if (log)
		w[n++] = h_env("--log-file=%s", log);
	memcpy(w + n, run->cli, nc * sizeof *w);
	n += nc;
	w[n++] = h_prog(run->prog);
	if (na)
		memcpy(w + n, run->args, na * sizeof *w);
	run->cli = w;
	run->prog = NULL;
	run->args = NULL;
	log_path = log;
	return true;
}

H_SETUP(vg)
{
	return vg_line(run, NULL, NULL);
}

H_SETUP(log_under_allocator)
{
	h_setup_allocator_preloaded(run, c);
	return vg_line(run, NULL, h_tmppath("MemoryChecker.1.log"));
}

H_SETUP(log_by_pid)
{
	return vg_line(run, NULL, h_tmppath("vg.%p.log"));
}

/* A suppression file, as valgrind reads it, for plain_exit's leak. */
H_SETUP(leak_suppressed)
{
	const char *supp = h_tmppath("leak.supp");
	FILE *f = fopen(supp, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\n   plain_exit's leak\n   Memcheck:Leak\n   fun:malloc\n   fun:leak\n}\n", f);
	fclose(f);
	return vg_line(run, supp, h_tmppath("vg.%p.log"));
}

/* The log has valgrind's words for the leak, and nothing else.
 * Its number is the allocator's: tcmalloc's own two records, suppressed,
 * come first ("3 of 3", as valgrind numbers them under tcmalloc). */
H_CHECK(leak_in_log)
{
	char *text = h_read_file(log_path, NULL);
	ck_assert_msg(text && strstr(text, "== 40 bytes in 1 blocks are "
				     "definitely lost in loss record "),
		      "%s: the log has no valgrind-worded leak record:\n%s", x->label,
		      text ? text : "(no file)");
	/* valgrind -q's text: the records alone, nothing of memcheck's own
	 * after them (main wrote "memcheck: FAIL: 40 bytes in 1 blocks
	 * definitely lost (allocator NAME)") */
	ck_assert_msg(!strstr(text, "memcheck: FAIL") && !strstr(text, "ERROR SUMMARY"),
		      "%s: more than valgrind -q writes:\n%s", x->label, text);
	free(text);
}

/* The log exists though empty (CTest warns about every log file that
 * is missing). */
H_CHECK(empty_log)
{
	struct stat st;
	ck_assert_msg(stat(log_path, &st) == 0 && st.st_size == 0, "%s: expected an empty %s",
		      x->label, log_path);
}

/* %p is the program's pid: the exec'd program keeps memcheck's. */
H_CHECK(log_of_its_pid)
{
	const char *own = h_env("%.*s%d.log", (int)(strstr(log_path, "%p") - log_path), log_path,
				(int)x->r.pid);
	char *text = h_read_file(own, NULL);
	ck_assert_msg(text && strstr(text, "definitely lost in loss record"),
		      "%s: no log %s with the leak", x->label, own);
	free(text);
}

/* memcheck run -q -a ALLOC: the row's allocator named on the command
 * line, nothing in LD_PRELOAD */
H_SETUP(allocator_named)
{
	const char **cli = calloc(5, sizeof *cli);
	ck_assert_ptr_nonnull(cli);
	memcpy(cli, (const char *[]){ "run", "-q", "-a", h_allocators[run->alloc].name },
	       4 * sizeof *cli);
	run->cli = cli;
	return true;
}

/* One run, under the allocator named: one leak record, with its name. */
H_CHECK(one_run_under_it)
{
	const char *one = strstr(x->r.err, "definitely lost in loss record");
	ck_assert_msg(one && !strstr(one + 1, "definitely lost in loss record"),
		      "%s: expected one run's leak record:\n%s", x->label, x->r.err);
	ck_assert_msg(strstr(x->r.err, h_env("(allocator %s)", h_allocators[x->alloc].name)),
		      "%s: the program did not run under that allocator:\n%s", x->label,
		      x->r.err);
}

/* memcheck run -q -a ALLOC --report DIR/r.%p.jsonl: a driver running
 * tests in parallel, each under its own run, gets a file per run, named
 * by the run's pid (before session 46 one file "r.%p.jsonl" for all,
 * the last run's records in it). */
static const char *report_pattern;

H_SETUP(report_by_pid)
{
	report_pattern = h_tmppath("r.%p.jsonl");
	const char **cli = calloc(7, sizeof *cli);
	ck_assert_ptr_nonnull(cli);
	memcpy(cli, (const char *[]){ "run", "-q", "-a", h_allocators[run->alloc].name,
				      "--report", report_pattern },
	       6 * sizeof *cli);
	run->cli = cli;
	return true;
}

H_CHECK(report_of_its_pid)
{
	const char *own = h_env("%.*s%d.jsonl",
				(int)(strstr(report_pattern, "%p") - report_pattern),
				report_pattern, (int)x->r.pid);
	char *text = h_read_file(own, NULL);
	ck_assert_msg(text && strstr(text, "\"definitely_lost\":{\"blocks\":1,\"bytes\":40}") &&
			      strstr(text, h_env("\"allocator\":\"%s\"",
						 h_allocators[x->alloc].name)),
		      "%s: no report %s with the leak under that allocator:\n%s", x->label, own,
		      text ? text : "(no file)");
	free(text);
}

H_CHECK(nothing_on_stderr)
{
	ck_assert_msg(x->r.err_len == 0, "%s: stderr:\n%s", x->label, x->r.err);
}

H_CHECK(killed_by_sigsegv)
{
	ck_assert_msg(x->r.signal == SIGSEGV, "%s: %s", x->label, h_status(&x->r));
}

/* A shell runs plain_exit with its standard error sent to /dev/null, as
 * a test script or a death test's parent may: the library's text is
 * lost, and run -q names the failing record itself. */
H_SETUP(text_sent_away)
{
	static const char *args[4];
	args[0] = "-c";
	args[1] = "exec \"$0\" leak 2>/dev/null";
	args[2] = h_prog("plain_exit");
	args[3] = NULL;
	run->args = args;
	return true;
}

/* ---- valgrind's lines -------------------------------------------------- */

/* The allocator preloaded, the row's own variables kept (valgrind's run
 * has them: valgrind_text). */
static void under_allocator(struct h_spec *run, const struct h_case *c)
{
	h_setup_allocator_preloaded(run, c);
	size_t n = 0;
	while (c->run.env && c->run.env[n])
		n++;
	const char **env = calloc(n + 2, sizeof *env);
	ck_assert_ptr_nonnull(env);
	memcpy(env, c->run.env, n * sizeof *env);
	env[n] = run->env[0];
	run->env = env;
}

H_SETUP(vg_under_allocator)
{
	under_allocator(run, c);
	return vg_line(run, NULL, NULL);
}

/* The lines of text that scripts and drivers read in valgrind's output
 * ("==PID==" made "==P=="): HEAP SUMMARY's, the loss records' headings,
 * LEAK SUMMARY's, "All heap blocks were freed", valgrind's hints and
 * ERROR SUMMARY; the header, stacks, heap errors' own lines and
 * memcheck's verdict are not among them.  some: only the figures that do
 * not depend on what the allocator and the C library keep to the end
 * (an allocator's own start-up blocks and libstdc++'s pool, which
 * memcheck suppresses and valgrind's freeres frees; a free valgrind
 * counts of a double free; in a passing run the blocks the shipped
 * suppressions would match, left unmatched and still reachable): the
 * records without their numbers (the suppressed ones count there),
 * ERROR SUMMARY without its suppressed part, and the lost kinds' lines
 * that are not 0 bytes in 0 blocks. */
static char *read_lines(const char *text, bool some)
{
	static const char *const whole[] = { "HEAP SUMMARY:", "in use at exit:",
		"total heap usage:", "All heap blocks were freed", "LEAK SUMMARY:", "suppressed:",
		"still reachable:",
		"Rerun with", "Reachable blocks", "To see them", "For a detailed leak" };
	static const char *const kept[] = { "in loss record", "ERROR SUMMARY:", "lost:" };
	size_t cap = strlen(text) + 1, n = 0;
	char *out = calloc(cap, 1);
	ck_assert_ptr_nonnull(out);
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *rest = l + 2;
		while (l[0] == '=' && l[1] == '=' && rest < l + len && *rest >= '0' && *rest <= '9')
			rest++;
		bool take = false;
		if (l[0] == '=' && l[1] == '=' && rest + 3 <= l + len && !strncmp(rest, "== ", 3)) {
			char line[1024];
			snprintf(line, sizeof line, "%.*s", (int)(l + len - rest - 3), rest + 3);
			for (size_t i = 0; i < MC_H_SIZE(kept); i++)
				take |= strstr(line, kept[i]) != NULL;
			for (size_t i = 0; !some && i < MC_H_SIZE(whole); i++)
				take |= strstr(line, whole[i]) != NULL;
			if (some && strstr(line, ": 0 bytes in 0 blocks"))
				take = false;
			/* the allocator's own blocks' records, suppressed */
			if (some && strstr(line, " (suppressed: "))
				*strstr(line, " (suppressed: ") = 0;
			/* and numbered among the records, as valgrind numbers
			 * suppressed ones too */
			if (some && strstr(line, " in loss record "))
				strstr(line, " in loss record ")[15] = 0;
			if (take)
				n += (size_t)snprintf(out + n, cap - n, "==P== %s\n", line);
		}
		l += len + (e != NULL);
	}
	return out;
}

/* The suppression file a row's setup wrote, given to valgrind too. */
static const char *vg_supp;

/* valgrind's own output for the row's command line (its words, the
 * program and its arguments), once a row. */
static int valgrind_status; /* valgrind's exit status of the row valgrind_text ran */

static const char *valgrind_text(const struct h_case *c)
{
	static const struct h_case *row[32];
	static char *text[32];
	static int status[32];
	for (size_t i = 0; i < MC_H_SIZE(row) && row[i]; i++)
		if (row[i] == c) {
			valgrind_status = status[i];
			return text[i];
		}
	const char *argv[32];
	size_t n = 0;
	if (vg_supp)
		argv[n++] = h_env("--suppressions=%s", vg_supp);
	for (size_t i = 0; c->run.cli && c->run.cli[i]; i++)
		argv[n++] = c->run.cli[i];
	argv[n++] = h_prog(c->run.prog);
	for (size_t i = 0; c->run.args && c->run.args[i]; i++)
		argv[n++] = c->run.args[i];
	argv[n] = NULL;
	struct h_res v;
	H_EXEC(&v, .prog = h_valgrind_path(), .no_report = true, .text = "", .args = argv,
	       .env = c->run.env);
	size_t i = 0;
	while (i < MC_H_SIZE(row) - 1 && row[i])
		i++;
	row[i] = c;
	text[i] = strdup(v.r.err);
	status[i] = valgrind_status = v.r.signal ? 128 + v.r.signal : v.r.exit_code;
	h_res_free(&v);
	return text[i];
}

/* exitfn_linked, exitfn_static (plain_exitfn linked with libmemcheck
 * after libexitfn, or with libmemcheck.a), run as they are: the
 * record's heap totals and still reachable bytes are valgrind's of
 * plain_exitfn, the same program without memcheck, with the row's
 * arguments and environment. */
H_CHECK(heap_as_plain_exitfns)
{
	if (!h_valgrind_path()) {
		printf("%s: valgrind is not installed: not compared\n", x->label);
		return;
	}
	struct h_case bare = *c;
	bare.run.prog = "plain_exitfn";
	bare.run.cli = H_LIST("--leak-check=full", "--show-leak-kinds=all");
	const char *text = valgrind_text(&bare);
	uint64_t allocs, frees, bytes, reachable = 0;
	ck_assert_msg(h_valgrind_heap_usage(text, &allocs, &frees, &bytes),
		      "no \"total heap usage\" from valgrind:\n%s", text);
	struct h_vg_leaks v;
	if (!strstr(text, "All heap blocks were freed")) {
		ck_assert_msg(h_valgrind_leaks(text, &v, 1) == 1, "no LEAK SUMMARY:\n%s", text);
		reachable = v.bytes[HVG_REA];
	}
	const struct h_json *pr = h_rec(x, "process");
	ck_assert_msg(h_u64(pr, "allocs") == allocs && h_u64(pr, "frees") == frees &&
		      h_u64(pr, "bytes_allocated") == bytes &&
		      h_count(pr, "still_reachable", "bytes") == reachable,
		      "%s: %s allocs, %s frees, %s bytes allocated, %s still reachable; valgrind "
		      "(plain_exitfn): %s, %s, %s, %s", x->label, h_fmt(h_u64(pr, "allocs")),
		      h_fmt(h_u64(pr, "frees")), h_fmt(h_u64(pr, "bytes_allocated")),
		      h_fmt(h_count(pr, "still_reachable", "bytes")), h_fmt(allocs), h_fmt(frees),
		      h_fmt(bytes), h_fmt(reachable));
}

static void same_lines(struct h_res *x, const struct h_case *c, bool some, bool status)
{
	if (!h_valgrind_path()) {
		printf("%s: valgrind is not installed: not compared\n", x->label);
		return;
	}
	char *vg = read_lines(valgrind_text(c), some), *mc = read_lines(x->r.err, some);
	/* valgrind's exit status: the program's, unless --error-exitcode
	 * and errors (a leak under --leak-check=full) */
	ck_assert_msg(!status || x->r.exit_code == valgrind_status,
		      "%s: exit status %d, valgrind's %d",
		      x->label, x->r.exit_code, valgrind_status);
	ck_assert_msg(strstr(vg, "ERROR SUMMARY:"), "%s: no ERROR SUMMARY from valgrind",
		      x->label);
	ck_assert_msg(!strcmp(vg, mc), "%s: valgrind's lines:\n%s\nmemcheck's:\n%s\n"
		      "memcheck's whole text:\n%s", x->label, vg, mc, x->r.err);
	free(vg);
	free(mc);
}

/* Every line scripts read is valgrind's under glibc; the figures that
 * do not depend on the allocator's own blocks under every allocator. */
H_CHECK(as_valgrind)
{
	same_lines(x, c, x->alloc != H_GLIBC, true);
}

/* The lines alone (the row's .exit is the status): still reachable
 * blocks of the C library's that valgrind's freeres frees and
 * memcheck's shipped suppressions take, counted apart. */
H_CHECK(lines_as_valgrind)
{
	same_lines(x, c, true, false);
}

/* freeres off: what it would free stays in use, as valgrind's HEAP and
 * LEAK SUMMARY say; the shipped entries for those blocks (glibc.supp's,
 * libstdcxx.supp's) take them as valgrind does every record a file's
 * entry matches (vgtext.c's mc_vgtext_all_kinds): still reachable and
 * suppressed together valgrind's still reachable. */
H_CHECK(freeres_off_as_valgrind)
{
	same_lines(x, c, true, true);
	if (!h_valgrind_path())
		return;
	struct h_vg_leaks v, m;
	ck_assert_msg(h_valgrind_leaks(valgrind_text(c), &v, 1) == 1 &&
		      h_valgrind_leaks(x->r.err, &m, 1) == 1, "%s: no summary:\n%s", x->label,
		      x->r.err);
	ck_assert_msg(x->alloc != H_GLIBC || (m.in_use_bytes == v.in_use_bytes &&
		      m.in_use_blocks == v.in_use_blocks), "%s: in use at exit %llu bytes, "
		      "valgrind's %llu", x->label, (unsigned long long)m.in_use_bytes,
		      (unsigned long long)v.in_use_bytes);
	ck_assert_msg(v.bytes[HVG_REA] > 0 && m.bytes[HVG_REA] + m.bytes[HVG_SUP] >=
		      v.bytes[HVG_REA] + v.bytes[HVG_SUP], "%s: still reachable %llu + suppressed "
		      "%llu bytes, valgrind's %llu + %llu", x->label,
		      (unsigned long long)m.bytes[HVG_REA], (unsigned long long)m.bytes[HVG_SUP],
		      (unsigned long long)v.bytes[HVG_REA], (unsigned long long)v.bytes[HVG_SUP]);
}

/* -q: valgrind's status, and the record (.err); its lines compared
 * without -q by the row before. */
H_CHECK(status_as_valgrind)
{
	if (h_valgrind_path()) {
		valgrind_text(c);
		ck_assert_msg(x->r.exit_code == valgrind_status, "%s: exit status %d, valgrind's %d",
			      x->label, x->r.exit_code, valgrind_status);
	}
}

/* A heap error: valgrind counts the bad free among the frees. */
H_CHECK(errors_as_valgrind)
{
	same_lines(x, c, true, true);
}

/* -q: the loss records valgrind lists (valgrind -q lists them, nothing
 * else, in a run that passes too: CTest counts each still reachable one
 * as a "Potential Memory Leak"), and its exit status; valgrind must list
 * one at least. */
H_CHECK(records_as_valgrind)
{
	if (!h_valgrind_path()) {
		printf("%s: valgrind is not installed: not compared\n", x->label);
		return;
	}
	char *vg = read_lines(valgrind_text(c), true), *mc = read_lines(x->r.err, true);
	ck_assert_msg(strstr(vg, "in loss record"), "%s: valgrind lists no record:\n%s", x->label,
		      valgrind_text(c));
	ck_assert_msg(x->r.exit_code == valgrind_status, "%s: exit status %d, valgrind's %d",
		      x->label, x->r.exit_code, valgrind_status);
	ck_assert_msg(!strcmp(vg, mc), "%s: valgrind's records:\n%s\nmemcheck's:\n%s\n"
		      "memcheck's whole text:\n%s", x->label, vg, mc, x->r.err);
	free(vg);
	free(mc);
}

/* ERROR SUMMARY's line whole, its suppressed errors and their contexts
 * with it: valgrind counts a suppressed loss record there only where it
 * would have been an error (--errors-for-leak-kinds). */
H_CHECK(error_summary_as_valgrind)
{
	if (!h_valgrind_path()) {
		printf("%s: valgrind is not installed: not compared\n", x->label);
		return;
	}
	const char *vg = strstr(valgrind_text(c), "== ERROR SUMMARY: ");
	const char *mc = strstr(x->r.err, "== ERROR SUMMARY: ");
	ck_assert_msg(vg && mc, "%s: no ERROR SUMMARY:\n%s", x->label, x->r.err);
	size_t n = strcspn(vg, "\n");
	ck_assert_msg(strcspn(mc, "\n") == n && !strncmp(vg, mc, n),
		      "%s: valgrind's %.*s, memcheck's %.*s", x->label, (int)n, vg,
		      (int)strcspn(mc, "\n"), mc);
}

/* The frames of text's stacks, each "function (file:line)" or
 * "function (in object)", in order, without "at"/"by", the address and
 * valgrind's own allocator frames (its replacements "in
 * .../vgpreload_memcheck-...so", which memcheck's stacks begin above). */
static char *stack_lines(const char *text)
{
	size_t cap = strlen(text) + 1, n = 0;
	char *out = calloc(cap, 1);
	ck_assert_ptr_nonnull(out);
	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		const char *f = strstr(l, "==    ");
		if (f && f < l + len && (!strncmp(f + 6, "at 0x", 5) || !strncmp(f + 6, "by 0x", 5))) {
			const char *rest = strstr(f, ": ");
			char line[1024] = "";
			if (rest && rest < l + len)
				snprintf(line, sizeof line, "%.*s", (int)(l + len - rest), rest);
			if (line[0] && !strstr(line, "/vgpreload_"))
				n += (size_t)snprintf(out + n, cap - n, "%s\n", line);
		}
		l += len + (l[len] != 0);
	}
	return out;
}

/* Every stack frame valgrind shows of the program's, as valgrind shows
 * it: file names alone by default, or as --fullpath-after asks, and no
 * mark of memcheck's own. */
H_CHECK(stacks_as_valgrind)
{
	if (!h_valgrind_path()) {
		printf("%s: valgrind is not installed: not compared\n", x->label);
		return;
	}
	char *vg = stack_lines(valgrind_text(c)), *mc = stack_lines(x->r.err);
	ck_assert_msg(strstr(vg, "main ("), "%s: valgrind shows no stack:\n%s", x->label,
		      valgrind_text(c));
	ck_assert_msg(!strcmp(vg, mc), "%s: valgrind's frames:\n%s\nmemcheck's:\n%s\n"
		      "memcheck's whole text:\n%s", x->label, vg, mc, x->r.err);
	free(vg);
	free(mc);
}

/* -q and nothing to say: memcheck says nothing, valgrind neither, and
 * the exit status is valgrind's (an exec'd child valgrind does not
 * trace runs unchecked, its status its own). */
H_CHECK(silent_as_valgrind)
{
	ck_assert_msg(x->r.err_len == 0, "%s: stderr:\n%s", x->label, x->r.err);
	if (!h_valgrind_path()) {
		printf("%s: valgrind is not installed: not compared\n", x->label);
		return;
	}
	const char *vg = valgrind_text(c);
	ck_assert_msg(!*vg, "%s: valgrind said:\n%s", x->label, vg);
	ck_assert_msg(x->r.exit_code == valgrind_status, "%s: exit status %d, valgrind's %d",
		      x->label, x->r.exit_code, valgrind_status);
}

/* plain_supp's records: its still reachable ones (keep_*) or its
 * definitely lost ones (lose) suppressed, valgrind given the file too */
static bool supp_setup(struct h_spec *run, const struct h_case *c, const char *fun)
{
	vg_supp = h_tmppath("vg.supp");
	FILE *f = fopen(vg_supp, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\n   %s\n   Memcheck:Leak\n   ...\n   fun:%s\n}\n", fun, fun);
	fclose(f);
	under_allocator(run, c);
	return vg_line(run, vg_supp, NULL);
}

H_SETUP(kept_suppressed)
{
	return supp_setup(run, c, "keep_*");
}

H_SETUP(lost_suppressed)
{
	return supp_setup(run, c, "lose");
}

/* exit() while another thread runs: nothing freed under it (valgrind
 * kills it first; memcheck cannot), its blocks still in use at exit. */
H_CHECK(nothing_freed_under_a_thread)
{
	ck_assert_msg(strstr(x->r.err, "in use at exit: ") &&
		      !strstr(x->r.err, "in use at exit: 0 bytes"),
		      "%s: expected the C library's blocks in use:\n%s", x->label, x->r.err);
}

/* jq's shtest (tests/setup, tests/shtest): valgrind's command line with
 * --error-exitcode=1 --leak-check=full, its standard error kept in a
 * file, then grep '^==[0-9][0-9]*== ERROR SUMMARY: 0 errors' in it; the
 * script's status is grep's.  The row's args: plain_exit's case. */
H_SETUP(jq_script)
{
	const char *err = h_tmppath("jq.err");
	const char **args = calloc(3, sizeof *args);
	ck_assert_ptr_nonnull(args);
	args[0] = "-c";
	args[1] = h_env("'%s/memcheck' --error-exitcode=1 --leak-check=full '%s' %s > /dev/null "
			"2> '%s'; grep '^==[0-9][0-9]*== ERROR SUMMARY: 0 errors' '%s'",
			h_build(), h_prog("plain_exit"), run->args[0], err, err);
	run->args = args;
	run->prog = "/bin/sh";
	return true;
}

/* memcheck WORDS -- plain_exit CASE, MEMCHECK_TEXT unset, memcheck's own
 * exit status */
#define MC(...) .run = { .cli = H_LIST(__VA_ARGS__), .text = "", .flags = H_EXITCODE
#define EXIT(...) .prog = "plain_exit", .args = H_LIST(__VA_ARGS__) }
#define ONCE .allocators = H_ONCE
/* memcheck run -q -- plain_exit CASE under each allocator: stdout passed
 * through, the status as it is */
#define QUIET(...) MC("run", "-q"), .no_report = true, EXIT(__VA_ARGS__),                  \
	.setup = h_setup_allocator_preloaded, .stdout_is = "out"
#define LEAK_SAID .err = H_LIST("definitely lost in loss record")

static const struct h_case cases[] = {
	/* valgrind's options as CTest passes them: --log-file first, then
	 * its defaults; the log has valgrind's words for the leak, the
	 * status is the library's */
	{ "valgrind's command line, a leak",
	  MC("-q", "--tool=memcheck", "--leak-check=yes", "--show-reachable=yes", "--num-callers=50",
	     "--error-exitcode=23"),
	  EXIT("leak"), .setup = log_under_allocator, .exit = 23, .check = leak_in_log },
	/* without --error-exitcode, valgrind's status is the program's:
	 * CTest's own defaults count the leak as a defect only */
	{ "valgrind's command line, no --error-exitcode", ONCE,
	  MC("-q", "--tool=memcheck", "--leak-check=yes", "--show-reachable=yes", "--num-callers=50"),
	  EXIT("leak"), .setup = log_under_allocator, .check = leak_in_log },
	/* ... unless the caller's MEMCHECK_EXITCODE says otherwise */
	{ "valgrind's command line, MEMCHECK_EXITCODE set", ONCE,
	  MC("-q", "--leak-check=full"), .env = H_LIST("MEMCHECK_EXITCODE=7"), EXIT("leak"),
	  .setup = vg, .exit = 7 },
	{ "valgrind's command line, clean", MC("-q"), EXIT("clean"), .setup = log_under_allocator,
	  .check = empty_log },
	/* --error-exitcode; a status of the program's own kept */
	{ "--error-exitcode=5", ONCE, MC("--error-exitcode=5", "-q", "--leak-check=full"),
	  EXIT("leak"), .setup = vg, .exit = 5 },
	{ "exit 77 kept", ONCE, MC("-q"), EXIT("leak-status", "77"), .setup = vg, .exit = 77 },
	/* a suppression file, as valgrind reads it, makes the leak fine */
	{ "--suppressions", ONCE, MC(NULL), EXIT("leak"), .setup = leak_suppressed },
	{ "--log-file with %p", ONCE, MC("-q", "--leak-check=full"), EXIT("leak"), .setup = log_by_pid,
	  .check = log_of_its_pid },
	/* what memcheck cannot honour is refused, not ignored */
	{ "--tool=helgrind", ONCE, MC("--tool=helgrind"), EXIT("clean"), .setup = vg, .exit = 2,
	  .err = H_LIST("only valgrind's memcheck") },
	/* valgrind's XML needs a destination (test_valgrind: the XML itself) */
	{ "--xml=yes without a destination", ONCE, MC("--xml=yes"), EXIT("clean"), .setup = vg,
	  .exit = 2, .err = H_LIST("no XML output destination") },
	{ "--frobnicate", ONCE, MC("--frobnicate"), EXIT("clean"), .setup = vg, .exit = 2,
	  .err = H_LIST("unknown option --frobnicate") },
	/* valgrind's lines, against valgrind's own output for the same
	 * command line (stacks, header and heap errors' lines apart) */
#define VG(...) MC(__VA_ARGS__), .no_report = true
	{ "valgrind's lines, definitely lost", VG("--leak-check=full"),
	  .prog = "plain_leak_direct" }, .setup = vg_under_allocator,
	  .check = as_valgrind },
	/* cliques: a leader's record "N (D direct, I indirect) bytes",
	 * in valgrind's order of total bytes */
	{ "valgrind's lines, cliques", VG("--leak-check=full"), .prog = "plain_leak_cycle" },
	  .setup = vg_under_allocator, .check = as_valgrind },
	/* what valgrind's freeres frees at exit (stdio's buffers, the
	 * locale's data, libstdc++'s emergency pool) is freed here too */
	{ "valgrind's lines, stdio and locale", VG("--leak-check=full"),
	  .prog = "plain_stdio_locale", .env = H_LIST("LANG=C.UTF-8") },
	  .setup = vg_under_allocator, .check = as_valgrind },
	{ "valgrind's lines, a C++ exception", VG("--leak-check=full"), .prog = "cxx_throw" },
	  .setup = vg_under_allocator, .check = as_valgrind },
	{ "freeres not under a running thread", VG("--leak-check=full"),
	  .prog = "plain_exit_running", .env = H_LIST("LANG=C.UTF-8") }, .setup = vg_under_allocator,
	  .stdout_is = "done\n", .check = nothing_freed_under_a_thread },
	{ "valgrind's lines, every kind", VG("--leak-check=full", "--show-leak-kinds=all"),
	  .prog = "plain_leak_adjacent" }, .setup = vg_under_allocator,
	  .check = as_valgrind },
	/* summary: no leak is an error, --error-exitcode or not */
	{ "valgrind's lines, summary", VG("--error-exitcode=1"), .prog = "plain_leak_family" },
	  .setup = vg_under_allocator, .check = as_valgrind },
	/* valgrind's rules for errors and exit statuses (vgtext.c,
	 * exitstatus.c): --error-exitcode=N over the program's own status;
	 * --errors-for-leak-kinds decides which records are errors,
	 * --show-leak-kinds which are listed */
	{ "--error-exitcode over the program's status", VG("--leak-check=full",
	  "--error-exitcode=42"), .prog = "plain_exit", .args = H_LIST("leak-status", "3") },
	  .setup = vg_under_allocator, .stdout_is = "out", .exit = 42, .check = as_valgrind },
	{ "--errors-for-leak-kinds=none", VG("--leak-check=full", "--errors-for-leak-kinds=none",
	  "--error-exitcode=42"), .prog = "plain_exit", .args = H_LIST("leak") },
	  .setup = vg_under_allocator, .stdout_is = "out", .check = as_valgrind },
	{ "--errors-for-leak-kinds=none -q", VG("-q", "--leak-check=full",
	  "--errors-for-leak-kinds=none", "--error-exitcode=42"), .prog = "plain_exit",
	  .args = H_LIST("leak") }, .setup = vg_under_allocator, .stdout_is = "out",
	  .err = H_LIST("definitely lost in loss record "), .check = status_as_valgrind },
	{ "--errors-for-leak-kinds=reachable", VG("--leak-check=full",
	  "--errors-for-leak-kinds=reachable", "--error-exitcode=42"),
	  .prog = "plain_keep_strings" }, .setup = vg_under_allocator, .exit = 42,
	  .check = lines_as_valgrind },
	{ "--show-leak-kinds=none", VG("--leak-check=full", "--show-leak-kinds=none",
	  "--error-exitcode=42"), .prog = "plain_exit", .args = H_LIST("leak") },
	  .setup = vg_under_allocator, .stdout_is = "out", .exit = 42, .check = as_valgrind },
	/* --leak-check=no: the bytes in use at exit counted, no leak an
	 * error */
	{ "--leak-check=no", VG("--leak-check=no", "--error-exitcode=42"), .prog = "plain_exit",
	  .args = H_LIST("leak") }, .setup = vg_under_allocator, .stdout_is = "out",
	  .check = as_valgrind },
	/* what freeres would free stays in use, as under valgrind */
	{ "--run-libc-freeres=no", VG("--leak-check=full", "--run-libc-freeres=no"),
	  .prog = "plain_stdio_locale", .env = H_LIST("LANG=C.UTF-8") },
	  .setup = vg_under_allocator, .check = freeres_off_as_valgrind },
	{ "--run-cxx-freeres=no", VG("--leak-check=full", "--run-cxx-freeres=no"),
	  .prog = "cxx_throw" }, .setup = vg_under_allocator, .check = freeres_off_as_valgrind },
	{ "--run-libc-freeres=maybe", ONCE, MC("--run-libc-freeres=maybe"), EXIT("clean"),
	  .setup = vg, .exit = 2, .err = H_LIST("expected yes or no") },
	/* the library's own variable: said, and the default kept (the
	 * leak an error, the run failed) */
	{ "MEMCHECK_VALGRIND_ERRORS=lost", ONCE, .run = { .prog = "plain_exit",
	  .args = H_LIST("leak"), .no_report = true, .text = "", .flags = H_PRELOAD | H_EXITCODE,
	  .env = H_LIST("MEMCHECK_VALGRIND_TEXT=full", "MEMCHECK_VALGRIND_ERRORS=lost") },
	  .stdout_is = "out", .exit = 23, .err = H_LIST("MEMCHECK_VALGRIND_ERRORS=lost: expected all, none or words of "
	  "definite|indirect|possible|reachable joined by commas; using definite,possible",
	  "ERROR SUMMARY: 1 errors from 1 contexts") },
	{ "--errors-for-leak-kinds=lost", ONCE, MC("--errors-for-leak-kinds=lost"),
	  EXIT("clean"), .setup = vg, .exit = 2,
	  .err = H_LIST("--errors-for-leak-kinds=lost: expected all, none, or definite") },
	/* -q lists the records of the kinds shown in a run that passes
	 * too, as valgrind -q does: CTest's own options on a program that
	 * keeps blocks to its end (a "Potential Memory Leak" each for
	 * CTest), cliques' indirectly lost records where no kind is an
	 * error, and only the kinds asked for */
	{ "CTest's options, still reachable blocks", VG("-q", "--tool=memcheck",
	  "--leak-check=yes", "--show-reachable=yes", "--num-callers=50"),
	  .prog = "plain_keep_strings", .env = H_LIST("LC_ALL=C.UTF-8") },
	  .setup = vg_under_allocator, .check = records_as_valgrind },
	{ "-q --show-leak-kinds=all --errors-for-leak-kinds=none", VG("-q", "--leak-check=full",
	  "--show-leak-kinds=all", "--errors-for-leak-kinds=none", "--error-exitcode=42"),
	  .prog = "plain_leak_cycle" }, .setup = vg_under_allocator,
	  .check = records_as_valgrind },
	{ "-q --show-leak-kinds=reachable", VG("-q", "--leak-check=full",
	  "--show-leak-kinds=reachable", "--errors-for-leak-kinds=none", "--error-exitcode=42"),
	  .prog = "plain_supp", .args = H_LIST("lost") }, .setup = vg_under_allocator,
	  .check = records_as_valgrind },
	/* a forked child that leaves by _exit is reported as valgrind
	 * reports it, its status --error-exitcode's, the parent's its own
	 * (each process judged alone, as under valgrind) */
	{ "a forked child's _exit", VG("-q", "--leak-check=full", "--error-exitcode=42"),
	  .prog = "plain_exit", .args = H_LIST("fork-_exit") }, .setup = vg_under_allocator,
	  .stdout_is = "out child=42", .check = records_as_valgrind },
	/* a forked child's figures count from the process's start, as
	 * valgrind's child's: the parent's allocations in its total heap
	 * usage, the stdout buffer it inherited freed by freeres at its
	 * exit; the parent exits 0 as valgrind's does */
	{ "a forked child, valgrind's lines", VG("--leak-check=full", "--show-leak-kinds=all",
	  "--error-exitcode=42"), .prog = "plain_exit", .args = H_LIST("fork") },
	  .setup = vg_under_allocator, .stdout_is = "out child=42", .check = as_valgrind },
	/* --child-silent-after-fork=yes: the child says nothing, and still
	 * exits with --error-exitcode's status */
	{ "--child-silent-after-fork=yes", VG("--leak-check=full", "--child-silent-after-fork=yes",
	  "--error-exitcode=42"), .prog = "plain_exit", .args = H_LIST("fork") },
	  .setup = vg_under_allocator, .stdout_is = "out child=42", .check = as_valgrind },
	/* --trace-children=no, valgrind's default: a program exec'd by the
	 * checked one, in a forked child (Criterion's workers) or in place
	 * (a wrapper's exec), runs unchecked, silent, its status its own */
	{ "an exec'd child not traced", VG("-q", "--leak-check=full", "--error-exitcode=42"),
	  .prog = "plain_exit", .args = H_LIST("exec") }, .setup = vg_under_allocator,
	  .stdout_is = "outout child=0", .check = silent_as_valgrind },
	{ "a program exec'd in place not traced", VG("-q", "--leak-check=full",
	  "--error-exitcode=42"), .prog = "plain_exit", .args = H_LIST("exec-self") },
	  .setup = vg_under_allocator, .stdout_is = "outout", .check = silent_as_valgrind },
	/* --trace-children=yes: the exec'd child checked, as valgrind's */
	{ "--trace-children=yes", VG("-q", "--leak-check=full", "--error-exitcode=42",
	  "--trace-children=yes"), .prog = "plain_exit", .args = H_LIST("exec") },
	  .setup = vg_under_allocator, .stdout_is = "outout child=42",
	  .check = records_as_valgrind },
	{ "--trace-children=maybe", ONCE, MC("--trace-children=maybe"), EXIT("clean"),
	  .setup = vg, .exit = 2, .err = H_LIST("expected yes or no") },
	{ "--child-silent-after-fork=maybe", ONCE, MC("--child-silent-after-fork=maybe"),
	  EXIT("clean"), .setup = vg, .exit = 2, .err = H_LIST("expected yes or no") },
	/* suppressed records among ERROR SUMMARY's suppressed errors only
	 * where their kind is an error's.  Not under tcmalloc, whose own
	 * block memcheck's shipped suppressions take (valgrind does not see
	 * it): one suppressed error more there. */
	{ "suppressed still reachable records as errors", .allocators = H_ONLY(H_GLIBC) |
	  H_ONLY(H_JEMALLOC) | H_ONLY(H_MIMALLOC), VG("--leak-check=full",
	  "--errors-for-leak-kinds=all"), .prog = "plain_supp", .args = H_LIST("lost") },
	  .setup = kept_suppressed, .check = error_summary_as_valgrind },
	/* loss records numbered over all of them, the suppressed ones
	 * included, as valgrind numbers them (plain_supp's first still
	 * reachable record "2 of 8", where memcheck said "1 of 5") */
	{ "loss records numbered with the suppressed ones", .allocators = H_ONLY(H_GLIBC),
	  VG("--leak-check=full", "--show-leak-kinds=all"), .prog = "plain_supp",
	  .args = H_LIST("lost") }, .setup = lost_suppressed, .check = as_valgrind },
	/* a forked child's figures alone (MEMCHECK_ANCESTORS=0 keeps the
	 * parent's status its own in any case) */
	{ "a forked child's HEAP SUMMARY", .allocators = H_ONLY(H_GLIBC),
	  VG("--leak-check=full", "--error-exitcode=42"), .prog = "plain_exit",
	  .args = H_LIST("fork"), .env = H_LIST("MEMCHECK_ANCESTORS=0") },
	  .setup = vg_under_allocator, .stdout_is = "out child=42", .check = as_valgrind },
	{ "suppressed lost records not errors", .allocators = H_ONLY(H_GLIBC) |
	  H_ONLY(H_JEMALLOC) | H_ONLY(H_MIMALLOC), VG("--leak-check=full",
	  "--errors-for-leak-kinds=reachable"), .prog = "plain_supp", .args = H_LIST("lost") },
	  .setup = lost_suppressed, .check = error_summary_as_valgrind },
	/* stacks' frames as valgrind shows them: file names alone, or
	 * after the first --fullpath-after prefix found; inlined frames
	 * and allocation functions without memcheck's marks.  (The tests'
	 * programs are built with relative paths, which libdw gives
	 * without the compilation directory valgrind puts before them: a
	 * path shown whole differs.) */
	{ "valgrind's stacks", VG("--leak-check=full"), .prog = "plain_leak_family" },
	  .setup = vg_under_allocator, .check = stacks_as_valgrind },
	{ "valgrind's stacks, cliques", VG("--leak-check=full"), .prog = "plain_leak_cycle" },
	  .setup = vg_under_allocator, .check = stacks_as_valgrind },
	{ "valgrind's stacks, --fullpath-after=tests/", ONCE, VG("--leak-check=full",
	  "--fullpath-after=/nowhere/", "--fullpath-after=tests/"), .prog = "plain_leak_direct" },
	  .setup = vg_under_allocator, .check = stacks_as_valgrind },
	{ "--fullpath-after=a:b", ONCE, MC("--fullpath-after=a:b"), EXIT("clean"), .setup = vg,
	  .exit = 2, .err = H_LIST("a prefix without ':' expected") },
	/* glibc's exit-function lists: more than 32 handlers registered
	 * before memcheck's constructor (libexitfn.so's, a library the
	 * program links) put memcheck's own on_exit entry in a list glibc
	 * calloc'd and frees after memcheck's handler, as it frees every
	 * older list but its static one: freed, as valgrind counts them
	 * (main 12d30ba: 1,040 bytes in 1 blocks still reachable a list,
	 * one free fewer).  With handlers registered after memcheck's
	 * constructor (their lists freed before its handler); at _exit,
	 * where glibc frees none and valgrind lists them; after a region
	 * ended early (life.c's exit_lists_freed, at exit alone) */
#define EXITFN(name, before, ...)                                              \
	{ "glibc's exit-function lists, " name,                                 \
	  VG("--leak-check=full", "--show-leak-kinds=all"), .prog = "plain_exitfn", \
	  .args = H_LIST(__VA_ARGS__), .env = H_LIST("EXITFN_BEFORE=" #before) },  \
	  .setup = vg_under_allocator, .check = as_valgrind }
	/* memcheck's own exit handler takes no slot of the lists (start.c):
	 * a program whose handlers fill a list to its last slot has no list
	 * more than under valgrind (main 0c24e7b: 31 before, 30 before and
	 * 1 after, 62 before and 1 after, 31 after: 1 alloc, 1 free, 1,040
	 * bytes more) */
	EXITFN("30 handlers before memcheck's", 30, "exit"),
	EXITFN("31 handlers before memcheck's", 31, "exit"),
	EXITFN("32 handlers before memcheck's", 32, "exit"),
	EXITFN("30 before, 1 after", 30, "after", "1", "exit"),
	EXITFN("31 before, 1 after", 31, "after", "1", "exit"),
	EXITFN("62 before, 1 after", 62, "after", "1", "exit"),
	EXITFN("none before, 31 after", 0, "after", "31", "exit"),
	EXITFN("31 before, 32 after", 31, "after", "32", "exit"),
	EXITFN("33 handlers before memcheck's", 33, "exit"),
	/* linked with libmemcheck after libexitfn, whose constructor then
	 * runs after memcheck's: memcheck's handler keeps its own slot and
	 * runs after libexitfn's, whose last frees its argument (24 bytes
	 * freed, as valgrind says) */
#define EXITFN_RUN(name, prog_, ...)                                            \
	{ "glibc's exit-function lists, " name, .allocators = H_ONLY(H_GLIBC),   \
	  .run = { .prog = prog_, .args = H_LIST("exit"), .flags = H_LINKED,    \
		   .env = H_LIST("MEMCHECK_PROCESS=on", __VA_ARGS__) },         \
	  .check = heap_as_plain_exitfns }
	EXITFN_RUN("linked after libexitfn, 5 registered in its constructor", "exitfn_linked",
		   "EXITFN_BEFORE=5", "EXITFN_ARG=1"),
	EXITFN_RUN("linked after libexitfn, 40 registered in its constructor", "exitfn_linked",
		   "EXITFN_BEFORE=40", "EXITFN_ARG=1"),
	/* libmemcheck.a: memcheck's constructor runs inside the program's
	 * start, which registered _dl_fini first (main 0c24e7b: 31 before,
	 * 31 in the program's constructor: a list more than valgrind) */
	EXITFN_RUN("libmemcheck.a, 31 before", "exitfn_static", "EXITFN_BEFORE=31"),
	EXITFN_RUN("libmemcheck.a, 31 in the program's constructor", "exitfn_static",
		   "EXITFN_BEFORE=0", "EXITFN_CTOR=31"),
	EXITFN_RUN("libmemcheck.a, 40 in the program's constructor", "exitfn_static",
		   "EXITFN_BEFORE=0", "EXITFN_CTOR=40"),
	EXITFN("40 before, 5 after", 40, "after", "5", "exit"),
	EXITFN("70 before, 40 after", 70, "after", "40", "exit"),
	/* 93 lists: every one counted (a bound of 32 lists left 61 in use) */
	EXITFN("3000 before", 3000, "exit"),
	EXITFN("70 before, _exit", 70, "_exit"),
	EXITFN("40 before, a region ended first", 40, "region"),
	{ "valgrind's lines, clean", VG("--leak-check=full"), .prog = "plain_clean" },
	  .setup = vg_under_allocator, .check = as_valgrind },
	{ "valgrind's lines, a double free", VG("--leak-check=full"), .prog = "plain_errors",
	  .args = H_LIST("double") }, .setup = vg_under_allocator,
	  .check = errors_as_valgrind },
	/* a script that greps valgrind's ERROR SUMMARY, as jq's shtest */
	{ "jq's grep of ERROR SUMMARY, clean", ONCE, .run = { .prog = "plain_exit",
	  .args = H_LIST("clean"), .no_report = true, .text = "" }, .setup = jq_script },
	{ "jq's grep of ERROR SUMMARY, a leak", ONCE, .run = { .prog = "plain_exit",
	  .args = H_LIST("leak"), .no_report = true, .text = "" }, .setup = jq_script, .exit = 1 },
	/* options that tune valgrind's own instrumentation are accepted */
	{ "valgrind's tuning options", ONCE,
	  MC("--track-origins=yes", "--trace-children=yes", "--malloc-fill=0xAA"), EXIT("clean"),
	  .setup = vg },

	/* memcheck run --quiet: one allocator, nothing said when all is
	 * well, the command's status as it is */
	{ "run -q, clean", QUIET("clean"), .check = nothing_on_stderr },
	/* 99: a hard error to meson and automake whatever the test
	 * expects (should_fail, XFAIL_TESTS); 23 before session 48 made a
	 * leaking test expected to fail that exits 0 an expected failure */
	{ "run -q, a leak", QUIET("leak"), .exit = 99, LEAK_SAID },
	{ "run -q, a leak, MEMCHECK_EXITCODE set",
	  .run = { .cli = H_LIST("run", "-q"), .text = "", .flags = H_EXITCODE, .prog = "plain_exit",
		   .args = H_LIST("leak"), .env = H_LIST("MEMCHECK_EXITCODE=23"), .no_report = true },
	  ONCE, .stdout_is = "out", .exit = 23, LEAK_SAID },
	/* a tool that fails on purpose and leaks, in a test that expects
	 * the failure (wayland's scanner test): its status told its caller,
	 * its failure not counted (exit 1 before session 48, where preload
	 * and valgrind's --error-exitcode left the test passing) */
	{ "run -q, a child fails on purpose and leaks: the test passes",
	  MC("run", "-q"), .no_report = true, EXIT("expect-fail", "3"),
	  .setup = h_setup_allocator_preloaded, .stdout_is = "outout child=3", .exit = 0, LEAK_SAID,
	  .no_err = H_LIST("], region \"process\"") },
	/* the child expected to fail exits 0 leaking: 99, which the test
	 * takes for the failure it expects, and its leak fails the test */
	{ "run -q, a child expected to fail leaks and exits 0: the test fails",
	  MC("run", "-q"), .no_report = true, EXIT("expect-fail", "0"),
	  .setup = h_setup_allocator_preloaded, .stdout_is = "outout child=99", .exit = 99, LEAK_SAID },
	/* the command fails on purpose itself: its own status, kept */
	{ "run -q, exit 77", QUIET("leak-status", "77"), .exit = 77, LEAK_SAID },
	{ "run -q, exit 99", QUIET("leak-status", "99"), .exit = 99, LEAK_SAID },
	{ "run -q, exit 3", QUIET("leak-status", "3"), .exit = 3, LEAK_SAID },
	/* -q -a ALLOC runs the test once, under ALLOC: no baseline run of
	 * glibc's before it (its stdout twice, its stdin read by the first) */
	{ "run -q -a ALLOC, clean", MC(NULL), .no_report = true, EXIT("clean"),
	  .setup = allocator_named, .stdout_is = "out", .check = nothing_on_stderr },
	{ "run -q -a ALLOC, a leak", MC(NULL), .no_report = true, EXIT("leak"),
	  .setup = allocator_named, .stdout_is = "out", .exit = 99, .check = one_run_under_it },
	/* --report with %p: a file of this run's own */
	{ "run -q -a ALLOC --report r.%p.jsonl", MC(NULL), .no_report = true, EXIT("leak"),
	  .setup = report_by_pid, .stdout_is = "out", .exit = 99, .check = report_of_its_pid },
	/* another % in an output file's name: bad usage, said, nothing run */
	{ "run -q --report with %d", ONCE,
	  .run = { .cli = H_LIST("run", "-q", "--report", "/nonexistent/r.%d.jsonl"), .text = "", .no_report = true,
		   EXIT("leak"), .exit = 2, .stdout_is = "",
	  .err = H_LIST("memcheck run: --report /nonexistent/r.%d.jsonl: '%d' at character 16: expected %p") },
	/* %q{VAR} unset: bad usage, as valgrind's --log-file (one name for
	 * every run otherwise) */
	{ "run -q --junit with %q{VAR} unset", ONCE,
	  .run = { .cli = H_LIST("run", "-q", "--junit", "/nonexistent/j.%q{MEMCHECK_TEST_UNSET}.xml"),
		   .text = "", .no_report = true, EXIT("leak"), .exit = 2, .stdout_is = "",
	  .err = H_LIST("memcheck run: --junit /nonexistent/j.%q{MEMCHECK_TEST_UNSET}.xml: the "
			"environment variable 'MEMCHECK_TEST_UNSET' of %q{MEMCHECK_TEST_UNSET} is not set") },
	/* a leak with MEMCHECK_EXITCODE=0: the command exits 0, run says 1 */
	{ "run -q, MEMCHECK_EXITCODE=0", ONCE,
	  .run = { .cli = H_LIST("run", "-q"), .text = "", .no_report = true, EXIT("leak"),
	  .exit = 1, .err = H_LIST("exit 1: 1 of 1 region record failed") },
	/* the failing record named by run -q where the test's own stderr
	 * went elsewhere */
	{ "run -q, a leak whose text the test sent away", ONCE, MC("run", "-q"), .no_report = true,
	  .prog = "/bin/sh" }, .setup = text_sent_away, .exit = 99,
	  .err = H_LIST("memcheck: plain_exit[", "], region \"process\": 40 bytes in 1 blocks "
			"definitely lost at ", "plain_exit.c:") },
	/* killed by a signal: the same signal, so the driver says so */
	{ "run -q, a crash", ONCE, MC("run", "-q"), .no_report = true, .prog = "/bin/sh",
	  .args = H_LIST("-c", "kill -SEGV $$") }, .exit = H_EXIT_ANY, .check = killed_by_sigsegv },
	/* without --quiet: the child that failed on purpose, its failure
	 * said and not counted (exit 1 before session 48) */
	{ "run, a child fails on purpose and leaks", ONCE, MC("run", "-a", "glibc"),
	  .no_report = true, EXIT("expect-fail", "3"), .exit = 0,
	  .err = H_LIST("1 region record failed in a process that exited non-zero on its own: not "
			"counted", "exit 0: 2 region records: 1 clean and within budget, 1 failed") },
	/* without --quiet, 77 and 99 come through too; the table is still there */
	{ "run, exit 77", ONCE, MC("run", "-a", "glibc,jemalloc"), .no_report = true,
	  EXIT("leak-status", "77"), .exit = 77, .err = H_LIST("exit 77: the command exited 77") },
	{ "run, exit 99", ONCE, MC("run", "-a", "glibc,jemalloc"), .no_report = true,
	  EXIT("leak-status", "99"), .exit = 99, .err = H_LIST("exit 99: the command exited 99") },
};

int main(void)
{
	TCase *tc = h_tcase("wrapper", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
