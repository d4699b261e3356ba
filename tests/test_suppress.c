/*
 * test_suppress.c - suppression files (memcheck-suppressions(5)) on whole
 * programs: tests/prog/plain_supp under the preloaded library with
 * tests/supp/plain_supp.supp by MEMCHECK_SUPPRESSIONS (figures moved
 * into suppressed, the use counts in the JSON record and the text
 * report), a bad file (one message, verdict fail), the CLI (its own check
 * of the files, exit 2), generated entries read back by memcheck and by
 * valgrind, valgrind's own generated entries read by memcheck, and the
 * shipped files found beside the library and turned off.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* plain_supp's blocks (tests/prog/plain_supp.c): reachable from globals
 * keep_malloc 48, keep_calloc 128, keep_realloc 80, keep_memalign 192,
 * keep_twice 256; with "lost", definitely lost lose(64) twice from main
 * and lose(32) from lose_other. */
#define REACHABLE_BLOCKS 5
#define REACHABLE_BYTES (48 + 128 + 80 + 192 + 256)

static const char *supp_file(void)
{
	static char path[4096];
	const char *b = h_build();
	snprintf(path, sizeof path, "%.*s/tests/supp/plain_supp.supp",
		 (int)(strrchr(b, '/') - b), b);
	return path;
}

static const char *valgrind_path(void)
{
	static const char *const paths[] = { "/usr/bin/valgrind", "/usr/local/bin/valgrind" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

/* Run plain_supp (arg "lost" or NULL) under memcheck with env (NULL-
 * terminated, at most 6); return its process record, in *rep. */
static const struct h_json *run_prog(struct h_report *rep, struct h_run *m, const char *arg,
				     const char *const *env, const char *so_path)
{
	const char *report = h_tmppath("report.jsonl");
	unlink(report);
	const char *full[12] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=full" };
	size_t n = 2;
	if (so_path)
		full[n++] = h_env("LD_PRELOAD=%s", so_path);
	for (size_t i = 0; env && env[i] && n < 11; i++)
		full[n++] = env[i];
	full[n] = NULL;
	const char *argv[] = { h_prog("plain_supp"), arg, NULL };
	ck_assert(h_run(m, argv, full, so_path ? 0 : H_PRELOAD, NULL) == 0);
	ck_assert_msg(m->exit_code == 0 && !m->signal, "plain_supp: %s\n%s", h_status(m), m->err);
	H_LOAD(rep, report);
	const struct h_json *rec = h_record(rep, "process", m->pid);
	ck_assert_msg(rec != NULL, "no process record; stderr:\n%s", m->err);
	return rec;
}

static const struct h_json *supp_used(const struct h_json *rec, size_t i)
{
	return h_json_at(h_json_get(rec, "suppressions"), i);
}

START_TEST(test_env_suppresses_and_counts)
{
	const char *env[] = { h_env("MEMCHECK_SUPPRESSIONS=%s", supp_file()),
			      "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	struct h_report rep;
	struct h_run m;
	const struct h_json *rec = run_prog(&rep, &m, "lost", env, NULL);
	H_EXPECT_COUNT(rec, "suppressed", "blocks", 4);
	H_EXPECT_COUNT(rec, "suppressed", "bytes", 48 + 128 + 2 * 64);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 1);
	H_EXPECT_COUNT(rec, "definitely_lost", "bytes", 32);
	H_EXPECT_COUNT(rec, "still_reachable", "blocks", 3);
	H_EXPECT_COUNT(rec, "still_reachable", "bytes", 80 + 192 + 256);
	H_EXPECT_U64(rec, "live_bytes", REACHABLE_BYTES + 2 * 64 + 32);
	H_EXPECT_STR(rec, "verdict", "fail");   /* lose_other's block */
	ck_assert(h_violation_has(rec, "32 bytes in 1 blocks definitely lost"));
	/* suppressed records are not listed among the leaks */
	ck_assert_uint_eq(h_nleaks(rec), 4);
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		const char *f0 = h_frame_str(rec, i, 0, "function");
		ck_assert_msg(f0 && strcmp(f0, "keep_malloc") && strcmp(f0, "keep_calloc"),
			      "leak %zu at %s", i, f0 ? f0 : "?");
	}
	/* the use counts, in the file's order */
	static const struct {
		const char *name;
		uint64_t line, records, blocks, bytes;
	} want[] = {
		{ "valgrind-malloc", 5, 1, 1, 48 },
		{ "any-alloc", 15, 1, 1, 128 },
		{ "lost-from-main", 22, 2, 2, 128 },
	};
	ck_assert_uint_eq(h_json_get(rec, "suppressions")->n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct h_json *u = supp_used(rec, i);
		ck_assert_str_eq(h_str(u, "name"), want[i].name);
		ck_assert_str_eq(h_str(u, "file"), supp_file());
		ck_assert_uint_eq(h_u64(u, "line"), want[i].line);
		ck_assert_uint_eq(h_u64(u, "records"), want[i].records);
		ck_assert_uint_eq(h_u64(u, "blocks"), want[i].blocks);
		ck_assert_uint_eq(h_u64(u, "bytes"), want[i].bytes);
	}
	/* the text report, valgrind's words */
	ck_assert_msg(strstr(m.err, "suppressed: 304 bytes in 4 blocks"), "%s", m.err);
	char line[4200];
	snprintf(line, sizeof line, "used_suppression: 2 lost-from-main %s:22 suppressed: "
		 "128 bytes in 2 blocks", supp_file());
	ck_assert_msg(strstr(m.err, line), "no '%s' in:\n%s", line, m.err);
	h_report_free(&rep);
	h_run_free(&m);

	/* without the file: nothing suppressed, no suppressions listed */
	const char *none[] = { "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	rec = run_prog(&rep, &m, "lost", none, NULL);
	H_EXPECT_COUNT(rec, "suppressed", "blocks", 0);
	H_EXPECT_COUNT(rec, "definitely_lost", "bytes", 2 * 64 + 32);
	ck_assert_uint_eq(h_json_get(rec, "suppressions")->n, 0);
	h_report_free(&rep);
	h_run_free(&m);
}
END_TEST

static const char *write_tmp(const char *tag, const char *text)
{
	const char *p = h_tmppath(tag);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static const char bad_text[] = "{\n   n\n   Memcheck:Leek\n   fun:f\n}\n";

START_TEST(test_bad_file_fails_every_region)
{
	const char *bad = write_tmp("bad.supp", bad_text);
	const char *env[] = { h_env("MEMCHECK_SUPPRESSIONS=%s:%s", supp_file(), bad),
			      "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	struct h_report rep;
	struct h_run m;
	const struct h_json *rec = run_prog(&rep, &m, NULL, env, NULL);
	H_EXPECT_STR(rec, "verdict", "fail");
	char msg[4200];
	snprintf(msg, sizeof msg, "%s:3: unknown Memcheck suppression kind 'Leek'", bad);
	ck_assert_msg(h_violation_has(rec, msg), "no violation naming %s", msg);
	char said[4300];
	snprintf(said, sizeof said, "suppressions not read: %s", msg);
	ck_assert_msg(h_count_lines(m.err, "suppressions not read") == 1 &&
		      h_count_lines(m.err, said) == 1, "expected one line with '%s':\n%s", said,
		      m.err);
	/* the good file still applies */
	H_EXPECT_COUNT(rec, "suppressed", "blocks", 2);
	h_report_free(&rep);
	h_run_free(&m);

	/* A region that leaves nothing fails too: the library's own test
	 * program ends a clean region first. */
	const char *report = h_tmppath("clean.jsonl");
	unlink(report);
	/* MEMCHECK_PROGRAMS: /bin/true is installed on the system, which
	 * memcheck leaves out by default. */
	const char *env2[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			       h_env("MEMCHECK_SUPPRESSIONS=%s", bad), "MEMCHECK_PROGRAMS=*",
			       NULL };
	H_RUN(&m, H_PRELOAD, NULL, env2, "/bin/true");
	H_LOAD(&rep, report);
	rec = h_record(&rep, "process", m.pid);
	ck_assert_ptr_nonnull(rec);
	H_EXPECT_STR(rec, "verdict", "fail");
	ck_assert(h_violation_has(rec, bad));
	h_report_free(&rep);
	h_run_free(&m);
}
END_TEST

static const char *cli(void)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s/memcheck", h_build());
	return path;
}

/* Entries in a suppression file: its '{' lines. */
static int entries(const char *path)
{
	char *t = h_read_file(path, NULL);
	ck_assert_msg(t != NULL, "cannot read %s", path);
	int n = 0;
	for (char *p = t; (p = strstr(p, "\n{\n")) || (p == t && *t == '{'); p++)
		n++;
	if (*t == '{')
		n++;
	free(t);
	return n;
}

START_TEST(test_cli)
{
	const char *bad = write_tmp("bad.supp", bad_text);
	struct h_run r;
	H_RUN(&r, 0, NULL, NULL, cli(), "run", "-a", "glibc", "--suppressions", supp_file(),
	      "--suppressions", bad, "--", h_prog("plain_supp"));
	ck_assert_msg(r.exit_code == 2, "memcheck run with a bad file: %s", h_status(&r));
	char msg[4200];
	snprintf(msg, sizeof msg, "%s:3: unknown Memcheck suppression kind 'Leek'", bad);
	ck_assert_msg(strstr(r.err, msg), "no '%s' in:\n%s", msg, r.err);
	ck_assert_msg(!strstr(r.err, "running under"), "ran the command:\n%s", r.err);
	h_run_free(&r);

	/* Good files reach the child; --gen-suppressions writes the rest. */
	const char *report = h_tmppath("cli.jsonl"), *gen = h_tmppath("cli-gen.supp");
	const char *env[] = { "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	H_RUN(&r, 0, NULL, env, cli(), "run", "-a", "glibc", "--suppressions", supp_file(),
	      "--gen-suppressions", gen, "--report", report, "--", h_prog("plain_supp"), "lost");
	ck_assert_msg(r.exit_code == 1, "memcheck run: %s\n%s", h_status(&r), r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", 0);
	ck_assert_ptr_nonnull(rec);
	H_EXPECT_COUNT(rec, "suppressed", "bytes", 304);
	h_report_free(&rep);
	h_run_free(&r);
	ck_assert_int_eq(entries(gen), 4);  /* 3 reachable, lose_other's */
	H_RUN(&r, 0, NULL, env, cli(), "run", "-a", "glibc", "--suppressions", supp_file(),
	      "--suppressions", gen, "--", h_prog("plain_supp"), "lost");
	ck_assert_msg(r.exit_code == 0, "memcheck run with the generated file: %s\n%s",
		      h_status(&r), r.err);
	h_run_free(&r);
}
END_TEST

/* "suppressed: 704 bytes in 5 blocks" in valgrind's LEAK SUMMARY */
static bool vg_suppressed(const char *err, uint64_t *bytes, uint64_t *blocks)
{
	/* The summary at exit: memcheck's valgrind mode prints one per
	 * region before it. */
	const char *s = strstr(err, "HEAP SUMMARY:");
	s = s ? strstr(s, "LEAK SUMMARY:") : NULL;
	s = s ? strstr(s, "suppressed: ") : NULL;
	unsigned long long a, b;
	if (!s || sscanf(s, "suppressed: %llu bytes in %llu blocks", &a, &b) != 2)
		return false;   /* figures under 1,000: no commas */
	*bytes = a;
	*blocks = b;
	return true;
}

START_TEST(test_generated_round_trip)
{
	/* memcheck reads back what it wrote: everything suppressed */
	const char *gen = h_tmppath("gen.supp");
	unlink(gen);
	const char *env[] = { h_env("MEMCHECK_GEN_SUPPRESSIONS=%s", gen),
			      "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	struct h_report rep;
	struct h_run m;
	const struct h_json *rec = run_prog(&rep, &m, "lost", env, NULL);
	uint64_t live = h_u64(rec, "live_bytes"), blocks = h_u64(rec, "live_blocks");
	ck_assert_uint_eq(live, REACHABLE_BYTES + 2 * 64 + 32);
	ck_assert_int_eq(entries(gen), 8);     /* one per leak record */
	h_report_free(&rep);
	h_run_free(&m);
	const char *env2[] = { h_env("MEMCHECK_SUPPRESSIONS=%s", gen),
			       "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	rec = run_prog(&rep, &m, "lost", env2, NULL);
	H_EXPECT_COUNT(rec, "suppressed", "bytes", live);
	H_EXPECT_COUNT(rec, "suppressed", "blocks", blocks);
	H_EXPECT_STR(rec, "verdict", "pass");
	ck_assert_uint_eq(h_nleaks(rec), 0);
	h_report_free(&rep);
	h_run_free(&m);

	const char *vg = valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; generated entries checked with memcheck only\n");
		return;
	}
	/* valgrind reads the same entries and suppresses the same bytes,
	 * every kind (memcheck's own tables are hidden from valgrind's
	 * scan: lib/vgmode.c). */
	const char *venv[] = { h_env("LD_PRELOAD=%s", h_lib()), "MEMCHECK_TEXT=none",
			       "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	struct h_run v;
	H_RUN(&v, 0, NULL, venv, vg, "--leak-check=full", "--show-leak-kinds=all",
	      "--soname-synonyms=somalloc=nouserintercepts", h_env("--suppressions=%s", gen),
	      h_prog("plain_supp"), "lost");
	ck_assert_msg(v.exit_code == 0, "valgrind: %s\n%s", h_status(&v), v.err);
	uint64_t vb = 0, vn = 0;
	ck_assert_msg(vg_suppressed(v.err, &vb, &vn), "no suppressed line:\n%s", v.err);
	ck_assert_msg(vb == live && vn == blocks,
		      "valgrind suppressed %llu bytes in %llu blocks, memcheck %llu in %llu:\n%s",
		      (unsigned long long)vb, (unsigned long long)vn, (unsigned long long)live,
		      (unsigned long long)blocks, v.err);
	h_run_free(&v);
}
END_TEST

/* valgrind's own --gen-suppressions=all entries (frame 0 the allocation
 * function) suppress the same records under memcheck. */
START_TEST(test_valgrinds_entries)
{
	const char *vg = valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; its own entries not tried\n");
		return;
	}
	struct h_run v;
	H_RUN(&v, 0, NULL, NULL, vg, "--leak-check=full", "--show-leak-kinds=all",
	      "--gen-suppressions=all", h_prog("plain_supp"), "lost");
	ck_assert_msg(v.exit_code == 0, "valgrind: %s\n%s", h_status(&v), v.err);
	/* its entries: the lines that are not valgrind's "==pid==" ones */
	const char *path = h_tmppath("vg.supp");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	int n = 0;
	for (char *line = v.err, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		if (strncmp(line, "==", 2) != 0) {
			fprintf(f, "%.*s\n", (int)(nl - line), line);
			n += line[0] == '{';
		}
	}
	fclose(f);
	ck_assert_int_eq(n, 8);
	h_run_free(&v);
	const char *env[] = { h_env("MEMCHECK_SUPPRESSIONS=%s", path),
			      "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	struct h_report rep;
	struct h_run m;
	const struct h_json *rec = run_prog(&rep, &m, "lost", env, NULL);
	H_EXPECT_COUNT(rec, "suppressed", "bytes", REACHABLE_BYTES + 2 * 64 + 32);
	H_EXPECT_STR(rec, "verdict", "pass");
	h_report_free(&rep);
	h_run_free(&m);
}
END_TEST

/* The shipped files: every *.supp in ../suppressions from the library,
 * unless MEMCHECK_DEFAULT_SUPPRESSIONS=0.  A copy of the library in a
 * directory of its own, so that what the project ships does not count. */
START_TEST(test_default_files)
{
	const char *root = h_tmppath("tree");
	char lib[4096], dir[4096], cmd[8400];
	snprintf(lib, sizeof lib, "%s/lib", root);
	snprintf(dir, sizeof dir, "%s/suppressions", root);
	ck_assert_int_eq(mkdir(root, 0755), 0);
	ck_assert_int_eq(mkdir(lib, 0755), 0);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s/libmemcheck.so.0'", h_lib(), lib);
	ck_assert_int_eq(system(cmd), 0);
	char p[4200];
	snprintf(p, sizeof p, "%s/a.supp", dir);
	FILE *f = fopen(p, "w");
	fputs("{\n   shipped\n   Memcheck:Leak\n   fun:malloc\n   fun:keep_malloc\n}\n", f);
	fclose(f);
	snprintf(p, sizeof p, "%s/README", dir);  /* not a .supp: not read */
	f = fopen(p, "w");
	fputs("not a suppression file\n", f);
	fclose(f);
	char so[4200];
	snprintf(so, sizeof so, "%s/libmemcheck.so.0", lib);
	struct h_report rep;
	struct h_run m;
	const struct h_json *rec = run_prog(&rep, &m, NULL, NULL, so);
	H_EXPECT_COUNT(rec, "suppressed", "bytes", 48);
	H_EXPECT_STR(rec, "verdict", "pass");
	char where[4300];
	snprintf(where, sizeof where, "%s/a.supp", dir);
	ck_assert_str_eq(h_str(supp_used(rec, 0), "file"), where);
	h_report_free(&rep);
	h_run_free(&m);
	const char *off[] = { "MEMCHECK_DEFAULT_SUPPRESSIONS=0", NULL };
	rec = run_prog(&rep, &m, NULL, off, so);
	H_EXPECT_COUNT(rec, "suppressed", "bytes", 0);
	h_report_free(&rep);
	h_run_free(&m);
}
END_TEST

/* The shipped files on what glibc keeps (threads' DTVs, dlopen's lists,
 * locale and alias data): nothing lost, and what stays reachable only
 * strdup'd copies whose callers the frame-pointer walk cannot see past
 * glibc.  The same with MEMCHECK_SYMBOLIZE_SYSTEM=1, where glibc's frames
 * get file, line and inlined frames too, as with the default 0, where
 * they have their symbol tables' names only. */
START_TEST(test_shipped_files_on_glibc)
{
	uint64_t suppressed[2];
	for (int fast = 0; fast < 2; fast++) {
		const char *report = h_tmppath(fast ? "glibc-fast.jsonl" : "glibc.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      fast ? "MEMCHECK_SYMBOLIZE_SYSTEM=0" : "MEMCHECK_SYMBOLIZE_SYSTEM=1",
				      NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_clean"), "all");
		ck_assert_msg(r.exit_code == 0, "plain_clean all: %s\n%s", h_status(&r), r.err);
		struct h_report rep;
		H_LOAD(&rep, report);
		const struct h_json *rec = h_record(&rep, "process", r.pid);
		ck_assert_ptr_nonnull(rec);
		const char *how = fast ? "SYMBOLIZE_SYSTEM=0" : "SYMBOLIZE_SYSTEM=1";
		ck_assert_msg(h_count(rec, "definitely_lost", "bytes") == 0 &&
			      h_count(rec, "indirectly_lost", "bytes") == 0 &&
			      h_count(rec, "possibly_lost", "bytes") == 0,
			      "%s: glibc's memory reported lost", how);
		ck_assert_msg(h_count(rec, "still_reachable", "bytes") < 512,
			      "%s: %s bytes still reachable", how,
			      h_fmt(h_count(rec, "still_reachable", "bytes")));
		suppressed[fast] = h_count(rec, "suppressed", "bytes");
		ck_assert_msg(suppressed[fast] > 4096, "%s: only %s bytes suppressed", how,
			      h_fmt(suppressed[fast]));
		H_EXPECT_STR(rec, "verdict", "pass");
		h_report_free(&rep);
		h_run_free(&r);
	}
	ck_assert_uint_eq(suppressed[0], suppressed[1]);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("suppress", 120);
	tcase_add_test(tc, test_env_suppresses_and_counts);
	tcase_add_test(tc, test_bad_file_fails_every_region);
	tcase_add_test(tc, test_cli);
	tcase_add_test(tc, test_generated_round_trip);
	tcase_add_test(tc, test_valgrinds_entries);
	tcase_add_test(tc, test_default_files);
	tcase_add_test(tc, test_shipped_files_on_glibc);
	return h_run_suite(NULL);
}
