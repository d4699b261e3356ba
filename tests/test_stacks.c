/*
 * test_stacks.c - allocation stacks taken with the default unwinder go
 * through the C library's functions built without frame pointers
 * (strdup, setlocale, fopen, a qsort comparison ...) to the program's
 * own frames, as valgrind's do, under every allocator.
 *
 * Each program runs under valgrind (memcheck's suppression files given
 * to it, glibc's blocks kept: --run-libc-freeres=no) and under memcheck,
 * preloaded in front of each allocator.  The leak records that neither
 * tool suppresses must be the same: kind, blocks, bytes, and the
 * program's frames (function and line, the program's source file only:
 * the two tools name the C library's own frames and its inlined
 * functions differently).  Where valgrind is not installed, memcheck's
 * records are checked against what the programs say of themselves.
 * plain_deep_stacks: stacks as deep as memcheck keeps, from more call
 * paths than a thread's cache holds, found again round after round.
 * plain_bigpage_stacks: frames without frame pointers in a program
 * linked with -z max-page-size=16384, unwound from its own tables.
 * plain_first_capture: the first capture of the main thread reads no
 * file (its stack's bounds; the headers ownread.c reads to view an
 * object's file aside).
 *
 * A row a program, under each allocator: its callback checks what the
 * program says of itself, then the records against the reference.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MAX_RECORDS 64
#define MAX_FRAMES 32

/* One leak record, reduced to what both tools must agree on. */
struct record {
	char kind[24];                  /* as memcheck's report names it */
	uint64_t blocks, bytes;
	int nframes;                    /* the program's frames */
	char fn[MAX_FRAMES][64];
	long line[MAX_FRAMES];
};

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static uint64_t number(const char *s)
{
	uint64_t v = 0;
	for (; *s == ',' || (*s >= '0' && *s <= '9'); s++)
		if (*s != ',')
			v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

/* valgrind's loss records in text, the frames in file src only. */
static int valgrind_records(const char *text, const char *src, struct record *out)
{
	static const char *const kinds[][2] = {
		{ "are definitely lost", "definitely_lost" },
		{ "are indirectly lost", "indirectly_lost" },
		{ "are possibly lost", "possibly_lost" },
		{ "are still reachable", "still_reachable" },
	};
	int n = 0;
	struct record *r = NULL;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
		line = nl ? nl + 1 : NULL;
		const char *s = strstr(buf, "== ");
		if (!s)
			continue;
		s += 3;
		while (*s == ' ')
			s++;
		if (strstr(s, " in loss record ")) {
			r = NULL;
			for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
				if (!strstr(s, kinds[k][0]) || n == MAX_RECORDS)
					continue;
				r = &out[n++];
				memset(r, 0, sizeof *r);
				snprintf(r->kind, sizeof r->kind, "%s", kinds[k][1]);
				r->bytes = number(s);
				const char *in = strstr(s, " bytes in ");
				ck_assert_msg(in && !strchr(s, '('), "a loss record not understood: %s", s);
				r->blocks = number(in + 10);
			}
			continue;
		}
		if (!r || (strncmp(s, "at 0x", 5) && strncmp(s, "by 0x", 5)))
			continue;
		const char *fn = strstr(s, ": "), *paren = strrchr(s, '(');
		if (!fn || !paren || paren < fn)
			continue;
		char file[256];
		long ln;
		if (sscanf(paren, "(%255[^:)]:%ld)", file, &ln) != 2 || strcmp(base(file), src) != 0)
			continue;
		if (r->nframes < MAX_FRAMES) {
			snprintf(r->fn[r->nframes], sizeof r->fn[0], "%.*s",
				 (int)(paren - 1 - (fn + 2)), fn + 2);
			r->line[r->nframes++] = ln;
		}
	}
	return n;
}

/* memcheck's leak records in rec, the frames in file src only. */
static int memcheck_records(const struct h_json *rec, const char *src, struct record *out)
{
	int n = 0;
	for (size_t i = 0; i < h_nleaks(rec) && n < MAX_RECORDS; i++) {
		struct record *r = &out[n++];
		memset(r, 0, sizeof *r);
		const struct h_json *l = h_json_at(h_json_get(rec, "leaks"), i);
		snprintf(r->kind, sizeof r->kind, "%s", h_str(l, "kind") ? h_str(l, "kind") : "?");
		r->blocks = h_leak_u64(rec, i, "blocks");
		r->bytes = h_leak_u64(rec, i, "bytes");
		for (size_t j = 0; j < h_leak_depth(rec, i) && r->nframes < MAX_FRAMES; j++) {
			const char *file = h_frame_str(rec, i, j, "file");
			if (!file || strcmp(base(file), src) != 0)
				continue;
			snprintf(r->fn[r->nframes], sizeof r->fn[0], "%s",
				 h_frame_str(rec, i, j, "function"));
			r->line[r->nframes++] = h_frame_line(rec, i, j);
		}
	}
	return n;
}

static const char *describe(const struct record *r)
{
	static char buf[2048];
	int len = snprintf(buf, sizeof buf, "%llu bytes in %llu blocks %s at",
			   (unsigned long long)r->bytes, (unsigned long long)r->blocks, r->kind);
	for (int j = 0; j < r->nframes && len < (int)sizeof buf - 80; j++)
		len += snprintf(buf + len, sizeof buf - (size_t)len, " %s:%ld", r->fn[j], r->line[j]);
	if (!r->nframes)
		snprintf(buf + len, sizeof buf - (size_t)len, " no frame of the program");
	return buf;
}

static bool same(const struct record *a, const struct record *b)
{
	if (strcmp(a->kind, b->kind) || a->blocks != b->blocks || a->bytes != b->bytes ||
	    a->nframes != b->nframes)
		return false;
	for (int j = 0; j < a->nframes; j++)
		if (strcmp(a->fn[j], b->fn[j]) || a->line[j] != b->line[j])
			return false;
	return true;
}

/* memcheck's records in rec of prog's own source file. */
static int records_of(const char *prog, const struct h_json *rec, struct record *out)
{
	return memcheck_records(rec, h_env("%s.c", prog), out);
}

/* prog under memcheck in front of allocator a (its defaults, the shipped
 * suppressions read): the rows' run. */
#define UNDER_MEMCHECK(program)                                                \
	.record = "process",                                                   \
	.run = { .prog = program, .flags = H_PRELOAD,                          \
		 .env = H_LIST("MEMCHECK_MAX_LEAKS=1000", "LC_ALL=C.UTF-8") }

/* valgrind's records for prog, or -1 where valgrind is not installed. */
static int run_valgrind(const char *prog, struct record *out)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; %s checked against itself only\n", prog);
		return -1;
	}
	const char *supp = h_env("--suppressions=%s/../suppressions/glibc.supp", h_build());
	struct h_res v;
	/* --num-callers: valgrind's malloc and memcheck's 16 frames (its
	 * default depth), so that stacks deeper than valgrind's 12 compare */
	H_EXEC(&v, .prog = vg, .no_report = true, .text = "", .env = H_LIST("LC_ALL=C.UTF-8"),
	       .args = H_LIST("--leak-check=full", "--show-leak-kinds=all", "--run-libc-freeres=no",
			      "--num-callers=17", supp, h_prog(prog)));
	h_expect_exit(&v, 0);
	int n = valgrind_records(v.r.err, h_env("%s.c", prog), out);
	h_res_free(&v);
	return n;
}

/* Every record of one run is a record of the other. */
static void expect_same_records(const char *prog, const char *alloc, const struct record *m,
				int nm, const struct record *v, int nv)
{
	for (int i = 0; i < nm; i++) {
		bool found = false;
		for (int k = 0; k < nv && !found; k++)
			found = same(&m[i], &v[k]);
		ck_assert_msg(found, "%s under %s: memcheck's record \"%s\" is not the "
			      "reference's (%d records; the first: %s)", prog, alloc,
			      describe(&m[i]), nv, nv ? describe(&v[0]) : "none");
	}
	ck_assert_msg(nm == nv, "%s under %s: memcheck has %d leak records, the reference %d",
		      prog, alloc, nm, nv);
}

/* The reference for the row's records m[0..nm): valgrind's, for glibc
 * (where valgrind is installed); memcheck's own under glibc, for the
 * others (so valgrind runs once a program). */
static void expect_as_the_reference(const struct h_res *x, const struct h_case *c,
				    const struct record *m, int nm)
{
	const char *prog = c->run.prog, *alloc = h_allocator_name(x->alloc);
	struct record v[MAX_RECORDS];
	int nv;
	if (x->alloc == H_GLIBC) {
		nv = run_valgrind(prog, v);
	} else {
		struct h_res g;
		struct h_spec spec = c->run;
		spec.alloc = H_GLIBC;
		h_exec(&g, &spec);
		h_expect_exit(&g, 0);
		nv = records_of(prog, h_rec(&g, "process"), v);
		h_res_free(&g);
	}
	if (nv >= 0)
		expect_same_records(prog, alloc, m, nm, v, nv);
}

/* The line of a program's source that holds marker, or -1. */
static long marked_line(const char *prog, const char *marker)
{
	const char *path = h_env("%s/../tests/prog/%s.c", h_build(), prog);
	char *text = h_read_file(path, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	long line = 1, found = -1;
	for (const char *s = text; *s && found < 0; s++) {
		if (!strncmp(s, marker, strlen(marker)))
			found = line;
		line += *s == '\n';
	}
	free(text);
	return found;
}

/* jansson's test_dump in small: the program's 8 strings are its only
 * leak record, at keep_names; setlocale's copies are suppressed. */
H_CHECK(own_strings_apart_from_the_locale)
{
	const char *prog = c->run.prog, *alloc = h_allocator_name(x->alloc);
	long keep = marked_line(prog, "/* KEEP_LINE */");
	ck_assert_int_gt(keep, 0);
	struct record m[MAX_RECORDS];
	int nm = records_of(prog, rec, m);
	ck_assert_msg(nm == 1, "%s under %s: %d leak records, expected the program's one", prog,
		      alloc, nm);
	ck_assert_str_eq(m[0].kind, "still_reachable");
	ck_assert_uint_eq(m[0].blocks, 8);
	ck_assert_uint_eq(m[0].bytes, 46); /* "alpha" ... "theta", NULs included */
	ck_assert_msg(m[0].nframes == 2 && !strcmp(m[0].fn[0], "keep_names") &&
		      m[0].line[0] == keep && !strcmp(m[0].fn[1], "main"),
		      "%s under %s: the strings' record is %s, expected keep_names:%ld main", prog,
		      alloc, describe(&m[0]), keep);
	const char *f0 = h_frame_str(rec, 0, 0, "function");
	ck_assert_msg(f0 && strstr(f0, "strdup"), "frame 0 is %s, not strdup", f0 ? f0 : "null");
	/* the locale's strdup'd names, suppressed by the entry that names
	 * setlocale, which only a stack through __strdup can match */
	bool names = false;
	const struct h_json *used = h_json_get(rec, "suppressions");
	for (size_t i = 0; used && i < used->n; i++)
		names |= !strcmp(h_str(h_json_at(used, i), "name"), "glibc-2.36-setlocale-names") &&
			 h_u64(h_json_at(used, i), "blocks") > 0;
	ck_assert_msg(names, "%s under %s: glibc-2.36-setlocale-names suppressed nothing", prog,
		      alloc);
	expect_as_the_reference(x, c, m, nm);
}

/* Blocks from strdup, strndup, asprintf, getline, fopen, opendir,
 * realpath, a qsort comparison and a thread, each with the stack
 * valgrind gives it. */
H_CHECK(stacks_through_the_c_library)
{
	const char *prog = c->run.prog, *alloc = h_allocator_name(x->alloc);
	struct record m[MAX_RECORDS];
	int nm = records_of(prog, rec, m);
	/* what the program says of itself: 10 records (the qsort
	 * comparisons make 3 blocks from 2 stacks; getline's stdio buffer
	 * and the thread's DTV are glibc's, suppressed), each reaching main
	 * or the thread's function */
	ck_assert_msg(nm == 10, "%s under %s: %d leak records, expected 10", prog, alloc, nm);
	for (int i = 0; i < nm; i++) {
		ck_assert_msg(m[i].nframes >= 1, "%s under %s: record %s", prog, alloc,
			      describe(&m[i]));
		ck_assert_msg(!strcmp(m[i].fn[m[i].nframes - 1], "main") ||
			      !strcmp(m[i].fn[m[i].nframes - 1], "in_thread"),
			      "%s under %s: record %s does not reach main", prog, alloc,
			      describe(&m[i]));
	}
	expect_as_the_reference(x, c, m, nm);
}

/* prog's records into m (want of them) and its LEAF_LINE's line. */
static long leaf_records(const char *prog, const char *alloc, const struct h_json *rec,
			 struct record *m, int want)
{
	long leaf = marked_line(prog, "/* LEAF_LINE */");
	ck_assert_int_gt(leaf, 0);
	int nm = records_of(prog, rec, m);
	ck_assert_msg(nm == want, "%s under %s: %d leak records, expected %d", prog, alloc, nm,
		      want);
	return leaf;
}

/* 40 call paths through a recursion, 30 and 4 levels deep, each taken
 * three times in turn: three blocks a record, each record with its
 * path's 16 frames (cut) or its frames down to main, as valgrind has
 * them.  A stack found again by its frame-pointer walk alone (stacks.c's
 * capture_known, once the thread's cache has lost it) must be the one
 * the first, exact, walk stored: a record of 1 or 2 blocks would say it
 * was not. */
H_CHECK(deep_recursion_stacks)
{
	const char *prog = c->run.prog, *alloc = h_allocator_name(x->alloc);
	struct record m[MAX_RECORDS];
	int nm = 40;
	long leaf = leaf_records(prog, alloc, rec, m, nm);
	int deep = 0;
	for (int i = 0; i < nm; i++) {
		ck_assert_msg(!strcmp(m[i].kind, "still_reachable") && m[i].blocks == 3 &&
			      m[i].bytes == 120 && m[i].nframes >= 1 &&
			      !strcmp(m[i].fn[0], "leaf") && m[i].line[0] == leaf,
			      "%s under %s: record %s, expected 3 blocks of 40 bytes from leaf:%ld",
			      prog, alloc, describe(&m[i]), leaf);
		if (m[i].nframes == 16)
			deep++;
		else
			ck_assert_msg(m[i].nframes < 16 &&
				      !strcmp(m[i].fn[m[i].nframes - 1], "main"),
				      "%s under %s: record %s: not 16 frames, nor down to main",
				      prog, alloc, describe(&m[i]));
	}
	ck_assert_int_eq(deep, 24);
	expect_as_the_reference(x, c, m, nm);
}

/* Three calls without frame pointers in a program whose segments are
 * aligned to 16 KiB: one record of the three blocks, its stack leaf,
 * middle, outer, main, as valgrind has it (cfi.c finds the unwind table
 * outside the range _dl_find_object gives; the frame-pointer walk would
 * stop at leaf). */
H_CHECK(stacks_of_a_bigpage_program)
{
	const char *prog = c->run.prog, *alloc = h_allocator_name(x->alloc);
	struct record m[MAX_RECORDS];
	long leaf = leaf_records(prog, alloc, rec, m, 1);
	static const char *const fns[] = { "leaf", "middle", "outer", "main" };
	bool ok = m[0].blocks == 3 && m[0].bytes == 72 && m[0].nframes == 4 &&
		  m[0].line[0] == leaf;
	for (int j = 0; ok && j < 4; j++)
		ok = !strcmp(m[0].fn[j], fns[j]);
	ck_assert_msg(ok, "%s under %s: record %s, expected 3 blocks of 24 bytes at leaf:%ld, "
		      "middle, outer, main", prog, alloc, describe(&m[0]), leaf);
	expect_as_the_reference(x, c, m, 1);
}

static const struct h_case cases[] = {
	{ "own strings apart from the locale", UNDER_MEMCHECK("plain_keep_strings"),
	  .check = own_strings_apart_from_the_locale },
	{ "stacks through the C library", UNDER_MEMCHECK("plain_libc_stacks"),
	  .check = stacks_through_the_c_library },
	{ "deep recursion", UNDER_MEMCHECK("plain_deep_stacks"), .check = deep_recursion_stacks },
	{ "frames without frame pointers, 16 KiB segments", UNDER_MEMCHECK("plain_bigpage_stacks"),
	  .check = stacks_of_a_bigpage_program },
	/* The main thread's first capture learns its stack without reading
	 * /proc/self/maps (pthread_getattr_np read it, 3-4 read calls where
	 * the program's first malloc is the first capture) */
	{ "first capture reads nothing", .run = { .prog = "plain_first_capture",
						  .flags = H_PRELOAD, .no_report = true },
	  .stdout_is = "0\n" },
	/* Not preloaded: dlopen'd, which its initial-exec TLS must leave
	 * possible (the kept walks in TLS made PT_TLS 0x2730 bytes, and the
	 * load failed) */
	{ "the library loads with dlopen", .run = { .prog = "plain_dlopen_lib",
						    .no_report = true },
	  .stdout_is = "loaded\n" },
};

/* A library dlclose'd and another of its size dlopen'd at its address
 * between two regions' ends (regions_dlswap): each region's peak names
 * its own library's function and file.  The table of which file each
 * mapping is stays from one region's end to the next (lib/elfmod.c:
 * read at each, it was two thirds of a region's end's instructions);
 * with the dynamic linker's counts not checked, the second region's
 * frame was named swap_a_make, in libswap_a.so. */
START_TEST(frames_of_a_library_loaded_where_another_was)
{
	if (!h_allocator(_i, NULL))
		return;
	struct h_res x;
	H_EXEC(&x, .prog = "regions_dlswap", .alloc = _i, .flags = H_PRELOAD,
	       .args = H_LIST(h_prog("libswap_a.so"), h_prog("libswap_b.so")));
	h_expect_exit(&x, 0);
	ck_assert_uint_eq(h_record_count(&x.rep, "swap"), 2);
	size_t k = 0;
	for (size_t i = 0; i < x.rep.n; i++) {
		const struct h_json *rec = x.rep.rec[i];
		if (strcmp(h_str(rec, "name"), "swap") != 0)
			continue;
		const char *want = k++ ? "swap_b_make" : "swap_a_make";
		const struct h_json *lines = h_json_get(h_json_get(rec, "peak_snapshot"), "lines");
		bool found = false;
		for (size_t l = 0; lines && h_json_at(lines, l) && !found; l++) {
			const struct h_json *f = h_json_at(h_json_get(h_json_at(lines, l), "stack"), 0);
			const char *fn = f ? h_str(f, "function") : NULL, *obj = f ? h_str(f, "object") : NULL;
			found = fn && obj && !strcmp(fn, want) &&
				strstr(obj, k == 1 ? "libswap_a.so" : "libswap_b.so");
		}
		ck_assert_msg(found, "%s: region %zu's peak does not name %s in its own library",
			      x.label, k, want);
	}
	h_res_free(&x);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("stacks", 120);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, frames_of_a_library_loaded_where_another_was, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
