/*
 * test_vgmode.c - valgrind mode: `memcheck run --valgrind` runs
 * tests/prog/vgmode (a leaking region, a clean one) under valgrind with
 * glibc and with tcmalloc.  Every record says leak_check "valgrind"; its
 * leak figures are the changes valgrind's own leak check printed for the
 * region in the same run; memcheck still counts the region's calls.
 * Outside valgrind the records say "memcheck".  Skipped without valgrind.
 * valgrind without --soname-synonyms and memcheck preloaded (each
 * allocator): memcheck bypassed, the regions judged on valgrind's leak
 * figures, a clean program's exit status its own.
 *
 * A row a run: `memcheck run --valgrind` on one of vgmode's cases (the
 * row's setup picks tcmalloc when installed, glibc alone otherwise), or
 * the program on its own; each record's figures against valgrind's own
 * summary are the callbacks'.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static bool have_valgrind(void)
{
	if (access("/usr/bin/valgrind", X_OK) == 0 || access("/usr/local/bin/valgrind", X_OK) == 0)
		return true;
	printf("note: valgrind not installed; skipping\n");
	return false;
}

/* The change valgrind printed for one leak kind in the LEAK SUMMARY that
 * follows memcheck's line for the region's end ("**PID** memcheck: region
 * "NAME" ends"), in the output of the run under allocator label:
 * "definitely lost: 32 (+32) bytes in 1 (+1) blocks". */
static bool vg_delta(const char *err, const char *label, const char *region, const char *kind,
		     int64_t *bytes, int64_t *blocks)
{
	char run[128], mark[192], k[64];
	snprintf(run, sizeof run, "memcheck: running under %s in valgrind", label);
	snprintf(mark, sizeof mark, "memcheck: region \"%s\" ends", region);
	snprintf(k, sizeof k, "%s: ", kind);
	const char *s = strstr(err, run);
	if (!s || !(s = strstr(s, mark)) || !(s = strstr(s, "LEAK SUMMARY:")) ||
	    !(s = strstr(s, k)))
		return false;
	s += strlen(k);
	/* "32 (+32) bytes in 1 (+1) blocks", valgrind's commas allowed */
	char digits[4][32];
	int n = 0;
	for (; *s && *s != '\n' && n < 4; s++) {
		if ((*s >= '0' && *s <= '9') || *s == '-') {
			size_t len = 0;
			while (len < 31 && ((*s >= '0' && *s <= '9') || *s == ',' || *s == '-')) {
				if (*s != ',')
					digits[n][len++] = *s;
				s++;
			}
			digits[n++][len] = 0;
		}
	}
	if (n != 4)
		return false;
	*bytes = strtoll(digits[1], NULL, 10);
	*blocks = strtoll(digits[3], NULL, 10);
	return true;
}

static const struct h_json *find(const struct h_report *rep, const char *name,
				 const char *allocator)
{
	for (size_t i = 0; i < rep->n; i++) {
		const char *n = h_str(rep->rec[i], "name"), *a = h_str(rep->rec[i], "allocator");
		if (n && a && !strcmp(n, name) && !strcmp(a, allocator))
			return rep->rec[i];
	}
	return NULL;
}

/* rec[key] equals valgrind's change for kind, blocks and bytes. */
static void expect_kind(const struct h_json *rec, const char *err, const char *label,
			const char *key, const char *kind, const char *kind2)
{
	const char *region = h_str(rec, "name");
	int64_t bytes, blocks, b2 = 0, n2 = 0;
	ck_assert_msg(vg_delta(err, label, region, kind, &bytes, &blocks),
		      "%s, region %s: no \"%s\" in valgrind's summary at the region's end:\n%s",
		      label, region, kind, err);
	if (kind2)
		ck_assert(vg_delta(err, label, region, kind2, &b2, &n2));
	bytes += b2;
	blocks += n2;
	ck_assert_msg(bytes >= 0 && blocks >= 0, "%s: valgrind's %s went down", region, kind);
	H_EXPECT_COUNT(rec, key, "bytes", (uint64_t)bytes);
	H_EXPECT_COUNT(rec, key, "blocks", (uint64_t)blocks);
}

static void check_allocator(const struct h_report *rep, const char *err, const char *label)
{
	const struct h_json *leaky = find(rep, "leaky", label), *clean = find(rep, "clean", label);
	ck_assert_msg(leaky && clean, "%s: records of both regions expected, got %zu records",
		      label, rep->n);
	const struct h_json *recs[] = { leaky, clean };
	for (int i = 0; i < 2; i++) {
		const struct h_json *rec = recs[i];
		H_EXPECT_STR(rec, "leak_check", "valgrind");
		/* valgrind's leak check, memcheck's wrapper still counting */
		uint64_t allocs = h_u64(rec, "allocs");
		ck_assert_msg(allocs > 0 && allocs != H_NULL && allocs != H_MISSING,
			      "%s, %s: memcheck counted %s allocations under valgrind", label,
			      h_str(rec, "name"), h_fmt(allocs));
		/* definite + indirect: valgrind's COUNT_LEAKS gives their sum */
		expect_kind(rec, err, label, "definitely_lost", "definitely lost",
			    "indirectly lost");
		const struct h_json *ind = h_json_get(rec, "indirectly_lost");
		ck_assert_msg(ind && ind->type == HJ_NULL, "%s: indirectly_lost should be null",
			      label);
		expect_kind(rec, err, label, "possibly_lost", "possibly lost", NULL);
		expect_kind(rec, err, label, "still_reachable", "still reachable", NULL);
		expect_kind(rec, err, label, "suppressed", "suppressed", NULL);
	}
	/* the program leaks in "leaky": some of each kind it makes */
	ck_assert_msg(h_count(leaky, "definitely_lost", "blocks") >= 2 &&
		      h_count(leaky, "still_reachable", "blocks") >= 1,
		      "%s: leaky's leaks not seen", label);
	H_EXPECT_STR(leaky, "verdict", "fail");
	H_EXPECT_STR(clean, "verdict", "pass");
	H_EXPECT_COUNT(clean, "definitely_lost", "blocks", 0);
	H_EXPECT_COUNT(clean, "still_reachable", "blocks", 0);
	ck_assert_msg(h_u64(clean, "allocs") == h_u64(clean, "frees"),
		      "%s: clean region allocs %s, frees %s", label,
		      h_fmt(h_u64(clean, "allocs")), h_fmt(h_u64(clean, "frees")));
}

/* memcheck run --valgrind -a tcmalloc (glibc alone where tcmalloc is not
 * installed; the callbacks ask which); skipped without valgrind. */
static bool with_tcmalloc(void)
{
	return h_allocator_so(h_allocators[H_TCMALLOC].soname) != NULL;
}

H_SETUP(valgrind_mode)
{
	if (!have_valgrind())
		return false;
	static const char *words[5] = { "run", "--valgrind", "-a" };
	words[3] = with_tcmalloc() ? "tcmalloc" : "glibc";
	run->cli = words;
	return true;
}

H_CHECK(each_region_as_valgrind_saw_it)
{
	check_allocator(&x->rep, x->r.err, "glibc");
	if (with_tcmalloc())
		check_allocator(&x->rep, x->r.err, "tcmalloc");
	else
		printf("note: tcmalloc not installed; glibc only\n");
}

/* Nested regions: the inner one's leak is its own, the outer one's
 * includes it (as with memcheck's scan). */
H_CHECK(inner_leak_in_outer)
{
	const char *label = with_tcmalloc() ? "tcmalloc" : "glibc";
	const struct h_json *inner = find(&x->rep, "inner", label);
	const struct h_json *outer = find(&x->rep, "outer", label);
	ck_assert_msg(inner && outer, "%s: no record of region inner or outer", label);
	H_EXPECT_STR(inner, "leak_check", "valgrind");
	H_EXPECT_COUNT(inner, "definitely_lost", "blocks", 1);
	H_EXPECT_COUNT(inner, "definitely_lost", "bytes", 32);
	H_EXPECT_COUNT(outer, "definitely_lost", "blocks", 2);
	H_EXPECT_COUNT(outer, "definitely_lost", "bytes", 48);
}

/* Across fork: the child's region starts again there and sees the
 * child's leak; the parent's does not. */
H_CHECK(child_leak_in_child_alone)
{
	const char *label = with_tcmalloc() ? "tcmalloc" : "glibc";
	size_t children = 0, parents = 0;
	for (size_t i = 0; i < x->rep.n; i++) {
		const struct h_json *r = x->rep.rec[i];
		const char *a = h_str(r, "allocator");
		if (strcmp(h_str(r, "name"), "parent") || !a || strcmp(a, label))
			continue;
		H_EXPECT_STR(r, "leak_check", "valgrind");
		uint64_t lost = h_count(r, "definitely_lost", "bytes");
		if (lost == 48) {
			H_EXPECT_COUNT(r, "definitely_lost", "blocks", 1);
			children++;
		} else {
			H_EXPECT_COUNT(r, "definitely_lost", "bytes", 0);
			parents++;
		}
	}
	ck_assert_msg(children == 1 && parents == 1, "fork: %zu child and %zu parent records",
		      children, parents);
}

/* The same program without valgrind: memcheck's own scan. */
H_CHECK(memcheck_classifies)
{
	ck_assert_msg(x->rep.n >= 2, "expected the regions' records, got %zu", x->rep.n);
	for (size_t i = 0; i < x->rep.n; i++)
		H_EXPECT_STR(x->rep.rec[i], "leak_check", "memcheck");
}

/* memcheck's counts under valgrind mode are valgrind's "total heap
 * usage" of the same program run under valgrind alone: the wrapper sees
 * every call, with glibc and with tcmalloc.  The process region also
 * counts what tcmalloc and the libstdc++ it loads allocate before main:
 * a program that does nothing (tests/prog/plain_empty.c) measures that
 * under each allocator, and it is taken off. */
H_CHECK(counts_equal_valgrind_alone)
{
	struct h_res v, b;
	H_EXEC(&v, .prog = "/usr/bin/env", .no_report = true, .text = "",
	       .args = H_LIST("valgrind", "--leak-check=no", h_prog("plain_mix"), "3000"));
	uint64_t va, vf, vb;
	ck_assert_msg(h_valgrind_heap_usage(v.r.err, &va, &vf, &vb),
		      "no \"total heap usage\" from valgrind alone:\n%s", v.r.err);
	ck_assert_msg(va > 1000, "valgrind alone counted %llu allocations", (unsigned long long)va);
	struct h_spec empty_spec = c->run;
	empty_spec.prog = "plain_empty";
	empty_spec.args = NULL;
	valgrind_mode(&empty_spec, c);
	h_exec(&b, &empty_spec);
	size_t seen = 0;
	for (size_t i = 0; i < x->rep.n; i++) {
		const struct h_json *r = x->rep.rec[i], *empty = NULL;
		H_EXPECT_STR(r, "name", "process");
		H_EXPECT_STR(r, "leak_check", "valgrind");
		for (size_t j = 0; j < b.rep.n && !empty; j++)
			if (!strcmp(h_str(b.rep.rec[j], "allocator"), h_str(r, "allocator")))
				empty = b.rep.rec[j];
		ck_assert_msg(empty != NULL, "plain_empty: no %s record", h_str(r, "allocator"));
		H_EXPECT_U64(r, "allocs", h_u64(empty, "allocs") + va);
		H_EXPECT_U64(r, "frees", h_u64(empty, "frees") + vf);
		H_EXPECT_U64(r, "bytes_allocated", h_u64(empty, "bytes_allocated") + vb);
		seen++;
	}
	ck_assert_msg(seen == (with_tcmalloc() ? 2u : 1u), "%zu records; stderr:\n%s", seen,
		      x->r.err);
	h_res_free(&b);
	h_res_free(&v);
}

/* somalloc=nouserintercepts under tcmalloc: valgrind serves no block.
 * memcheck says so and keeps its own scan. */
H_SETUP(valgrind_blind)
{
	static const char *args[3];
	if (!have_valgrind())
		return false;
	args[0] = "--soname-synonyms=somalloc=nouserintercepts";
	args[1] = h_prog("vgmode");
	run->args = args;
	return true;
}

/* valgrind with no --soname-synonyms, memcheck and the row's allocator
 * preloaded: valgrind's malloc serves every object, memcheck's own
 * included, and memcheck counts nothing.  The program ends as it does
 * under valgrind bare: the process region is valgrind's to judge at its
 * exit (every region failed as bypassed: status 23, nettle's side-channel
 * tests run under valgrind by its make check all failed under a preload;
 * a leak check of memcheck's asked before valgrind's freeres counted a
 * joined thread's kept stack among valgrind's errors), and a region the
 * program begins takes valgrind's leak figures.  The row's args: valgrind's
 * options, then the program's name (vgmode without any). */
H_SETUP(valgrind_replaces_all)
{
	static const char *args[8];
	if (!have_valgrind())
		return false;
	size_t n = 0;
	for (; run->args && run->args[n] && n + 2 < sizeof args / sizeof args[0]; n++)
		args[n] = run->args[n];
	if (n == 0 || args[n - 1][0] == '-')
		args[n++] = "vgmode";
	if (args[n - 1][0] != '/')
		args[n - 1] = h_prog(args[n - 1]);
	args[n] = NULL;
	run->args = args;
	return true;
}

/* valgrind -q on a program, bare (the allocator alone preloaded) and
 * with memcheck preloaded too: valgrind's standard error the same, line
 * for line, but memcheck's own (its notice that valgrind bypasses it,
 * "memcheck[PID] ...", and valgrind mode's "**PID** memcheck: region"
 * markers), the pids and addresses aside; the same exit status.  Before
 * session 46 every such run ended with valgrind's warning that 5 lines
 * long named memcheck's own mappings ("WARNING: exiting program has the
 * following client-requested address error disablement range(s) still
 * in force"), which the bare run does not print.  The row's args:
 * valgrind's options, "SYN" for --soname-synonyms with the allocator's
 * pattern (valgrind mode proper: memcheck's wrapper still reached),
 * "@NAME" for a program of tests/prog, then its arguments. */
static const char *vg_args[16];

static const char *const vg_patterns[H_NALLOCATORS_ALL] = {
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) \
	[H_##id] = vgpattern,
#include "allocators.def"
#undef MC_ALLOCATOR
};

H_SETUP(valgrind_quiet)
{
	if (!have_valgrind())
		return false;
	size_t n = 0;
	for (; c->run.args[n] && n + 1 < sizeof vg_args / sizeof vg_args[0]; n++) {
		const char *a = c->run.args[n];
		if (!strcmp(a, "SYN"))
			a = h_env("--soname-synonyms=somalloc=%s", vg_patterns[run->alloc]);
		else if (a[0] == '@')
			a = h_prog(a + 1);
		vg_args[n] = a;
	}
	vg_args[n] = NULL;
	run->args = vg_args;
	return true;
}

/* valgrind's text with its pids, addresses and memcheck's own lines
 * left out (a copy, the caller's to free). */
static char *vg_norm(const char *err)
{
	char *out = malloc(strlen(err) + 1), *o = out;
	ck_assert(out != NULL);
	for (const char *line = err; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line + 1) : strlen(line);
		const char *body = line;
		if (*body == '=' || *body == '*') { /* ==PID== or **PID** */
			char mark = *body;
			const char *q = body + 2;
			while (*q >= '0' && *q <= '9')
				q++;
			if (q[0] == mark && q[1] == mark)
				body = q + 2;
		}
		bool own = !strncmp(line, "memcheck[", 9) ||
			   (body != line && *line == '*' && !strncmp(body, " memcheck: ", 11));
		if (!own) {
			for (const char *p = body; p < line + len;) {
				if (p[0] == '0' && p[1] == 'x') {
					memcpy(o, "0xA", 3);
					o += 3;
					p += 2;
					while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
					       (*p >= 'A' && *p <= 'F'))
						p++;
				} else
					*o++ = *p++;
			}
		}
		line += len;
	}
	*o = 0;
	return out;
}

H_CHECK(stderr_as_bare)
{
	struct h_res b;
	struct h_spec bare = { .prog = "/usr/bin/valgrind", .args = vg_args, .alloc = x->alloc,
			       .no_report = true, .text = "" };
	h_setup_allocator_preloaded(&bare, c);
	h_exec(&b, &bare);
	char *want = vg_norm(b.r.err), *got = vg_norm(x->r.err);
	if (strcmp(want, got)) {
		/* the first line that differs (check's messages are short) */
		const char *w = want, *g = got;
		for (const char *p = want, *q = got; *p && *p == *q; p++, q++)
			if (*p == '\n')
				w = p + 1, g = q + 1;
		ck_abort_msg("%s: valgrind's standard error differs from the bare run's at\n"
			     "bare:          %.200s\nwith memcheck: %.200s\n(stderr with memcheck:\n%.1500s)",
			     x->label, w, g, x->r.err);
	}
	ck_assert_msg(b.r.exit_code == x->r.exit_code, "%s: exit status %d, bare %d", x->label,
		      x->r.exit_code, b.r.exit_code);
	free(want);
	free(got);
	h_res_free(&b);
}

#define VG_QUIET(...) H_LIST("-q", __VA_ARGS__)
/* tcmalloc under valgrind differs bare (its start-up's mismatched free
 * is reported there, not with memcheck's operator new in front) */
#define VG_THREE (H_ONLY(H_GLIBC) | H_ONLY(H_MIMALLOC) | H_ONLY(H_JEMALLOC))
#define VG_ROW(title, a, ...)                                                     \
	{ title, .allocators = (a), .setup = valgrind_quiet,                       \
	  .run = { .prog = "/usr/bin/valgrind", .args = VG_QUIET(__VA_ARGS__),      \
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none" },               \
	  .exit = H_EXIT_ANY, .check = stderr_as_bare,                              \
	  .no_err = H_LIST("address error disablement range") }

/* The process region valgrind's exit judges (memcheck bypassed): its
 * record says so (leak_check "valgrind_exit"), its figures are null,
 * not zero, and the command reads it so: memcheck run's verdict
 * "valgrind" and "not measured" (not "all clean"); memcheck gate the
 * same, and a budget that names a figure fails as not measured.
 * Before session 46: leak_check "memcheck", every count 0, verdict
 * pass, "all clean and within budget", and the budget passed.  The RSS
 * figures null too (session 47): they were valgrind's process's. */
H_CHECK(judged_at_valgrind_exit)
{
	ck_assert_msg(strstr(x->r.err, "valgrind's own exit judged") &&
			      strstr(x->r.err, "not measured"),
		      "%s: memcheck run does not say valgrind judged the process:\n%s", x->label,
		      x->r.err);
	ck_assert_msg(!strstr(x->r.err, "all clean"), "%s: said clean:\n%s", x->label, x->r.err);
	/* valgrind's child's records (the baseline's, glibc, too) */
	ck_assert_msg(x->rep.n > 0, "%s: no record", x->label);
	for (size_t i = 0; i < x->rep.n; i++) {
		const struct h_json *p = x->rep.rec[i];
		H_EXPECT_STR(p, "name", "process");
		H_EXPECT_STR(p, "leak_check", "valgrind_exit");
		H_EXPECT_STR(p, "verdict", "pass");
		H_EXPECT_U64(p, "allocs", H_NULL);
		H_EXPECT_U64(p, "frees", H_NULL);
		H_EXPECT_U64(p, "definitely_lost", H_NULL);
		H_EXPECT_U64(p, "still_reachable", H_NULL);
		/* valgrind's process's RSS, not the program's: not read
		 * (session 47; main 0c24e7b: rss_end 50-95 MB here) */
		H_EXPECT_U64(p, "rss_begin", H_NULL);
		H_EXPECT_U64(p, "rss_end", H_NULL);
		H_EXPECT_U64(p, "peak_rss", H_NULL);
	}
	struct h_res g;
	H_EXEC(&g, .cli = H_LIST("gate", x->report));
	h_expect_exit(&g, 0);
	ck_assert_msg(strstr(g.r.out, h_env("%zu not measured", x->rep.n)), "gate:\n%s", g.r.out);
	h_res_free(&g);
	const char *budget = h_tmppath("allocs.budget");
	FILE *f = fopen(budget, "w");
	ck_assert(f != NULL);
	fputs("allocs < 100\n", f);
	fclose(f);
	H_EXEC(&g, .cli = H_LIST("gate", "--budget", budget, x->report));
	h_expect_exit(&g, 1);
	ck_assert_msg(strstr(g.r.out, "allocs not measured") || strstr(g.r.err, "allocs not measured"),
		      "gate with a budget on allocs:\n%s%s", g.r.out, g.r.err);
	h_res_free(&g);
}

H_SETUP(run_valgrind_quiet)
{
	static const char *words[4] = { "run", "-a" };
	words[2] = h_allocators[run->alloc].name;
	run->cli = words;
	return valgrind_quiet(run, c);
}

/* Without valgrind in PATH: a clear message, exit 2. */
H_SETUP(no_valgrind_in_path)
{
	static const char *args[7];
	memcpy(args, (const char *const[]){ "PATH=/nonexistent", h_env("%s/memcheck", h_build()),
					     "run", "--valgrind", "--", h_prog("vgmode"), NULL },
	       sizeof args);
	run->args = args;
	return true;
}

static const struct h_case cases[] = {
	/* the leaky region fails; the text report says whose figures
	 * they are */
	{ "memcheck run --valgrind", .allocators = H_ONCE, .setup = valgrind_mode,
	  .run = { .prog = "vgmode", .text = "summary" }, .exit = 1, .check = each_region_as_valgrind_saw_it,
	  .err = H_LIST("LEAK SUMMARY (valgrind's", "no leaks (glibc; valgrind's leak check)"),
	  .no_err = H_LIST("address error disablement range") },
	{ "nested regions", .allocators = H_ONCE, .setup = valgrind_mode,
	  .run = { .prog = "vgmode", .args = H_LIST("nested"), .text = "" }, .exit = 1,
	  .check = inner_leak_in_outer },
	{ "fork", .allocators = H_ONCE, .setup = valgrind_mode,
	  .run = { .prog = "vgmode", .args = H_LIST("fork"), .text = "" }, .exit = 1,
	  .check = child_leak_in_child_alone, .no_err = H_LIST("address error disablement range") },
	{ "outside valgrind", .allocators = H_ONCE, .run = { .prog = "vgmode", .flags = H_PRELOAD },
	  .want = { { "indirectly_lost.blocks", 1, .rec = "leaky" } }, .check = memcheck_classifies },
	{ "counts equal valgrind alone's", .allocators = H_ONCE, .setup = valgrind_mode,
	  .run = { .prog = "plain_mix", .args = H_LIST("3000"), .text = "" }, .exit = H_EXIT_ANY,
	  .check = counts_equal_valgrind_alone },
	{ "valgrind blind to tcmalloc", .allocators = H_ONLY(H_TCMALLOC), .setup = valgrind_blind,
	  .run = { .prog = "/usr/bin/valgrind", .flags = H_PRELOAD }, .exit = H_EXIT_ANY,
	  .err = H_LIST("does not serve the allocator's blocks"),
	  .want = { { "leak_check", .str = "memcheck", .rec = "leaky" },
		    { "indirectly_lost.blocks", 1, .rec = "leaky" } } },
	{ "valgrind's malloc everywhere: a clean program's status as bare",
	  .setup = valgrind_replaces_all,
	  .run = { .prog = "/usr/bin/valgrind", .args = H_LIST("plain_empty"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "" },
	  .want = { { "verdict", .str = "pass" } } },
	/* valgrind's own status bare: 0, but 1 under tcmalloc, whose
	 * start-up loses 8 bytes to valgrind (MallocExtension::Register) */
	{ "valgrind's malloc everywhere: joined threads, valgrind's --error-exitcode as bare",
	  .allocators = H_ONLY(H_GLIBC) | H_ONLY(H_MIMALLOC) | H_ONLY(H_JEMALLOC),
	  .setup = valgrind_replaces_all,
	  .run = { .prog = "/usr/bin/valgrind",
		   .args = H_LIST("--leak-check=full", "--error-exitcode=1", "plain_thread_rounds"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "" },
	  .want = { { "verdict", .str = "pass" } } },
	{ "valgrind's malloc everywhere: tcmalloc's start-up, valgrind's --error-exitcode as bare",
	  .allocators = H_ONLY(H_TCMALLOC), .setup = valgrind_replaces_all,
	  .run = { .prog = "/usr/bin/valgrind",
		   .args = H_LIST("--leak-check=full", "--error-exitcode=1", "plain_thread_rounds"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "" },
	  .exit = 1, .err = H_LIST("MallocExtension::Register"),
	  .want = { { "verdict", .str = "pass" } } },
	{ "valgrind's malloc everywhere: valgrind's leak figures", .setup = valgrind_replaces_all,
	  .run = { .prog = "/usr/bin/valgrind", .flags = H_PRELOAD | H_EXITCODE, .text = "" },
	  .exit = 23,
	  .want = { { "verdict", .str = "pass", .rec = "clean" },
		    { "leak_check", .str = "valgrind", .rec = "leaky" },
		    { "definitely_lost.blocks", 2, .rec = "leaky" },
		    { "definitely_lost.bytes", 64, .rec = "leaky" },
		    { "still_reachable.blocks", 1, .rec = "leaky" },
		    { "still_reachable.bytes", 96, .rec = "leaky" } } },
	/* bypassed (valgrind's malloc in every object): stdio's buffers
	 * and the locale freed by valgrind's freeres; each loss record
	 * and its kind as bare */
	VG_ROW("valgrind -q bypassed: stdio and locale, as bare", VG_THREE, "--leak-check=full",
	       "--show-leak-kinds=all", "@plain_stdio_locale"),
	/* a fatal signal: valgrind's exit after SIGABRT */
	VG_ROW("valgrind -q bypassed: killed by SIGABRT, as bare", VG_THREE, "--leak-check=full",
	       "--show-leak-kinds=all", "@plain_stdio_locale", "abort"),
	/* forked children, leaving by exit and by _exit; a leak each */
	VG_ROW("valgrind -q bypassed: forked child's leak, exit, as bare", VG_THREE,
	       "--leak-check=full", "@plain_exit", "fork"),
	VG_ROW("valgrind -q bypassed: forked child's leak, _exit, as bare", VG_THREE,
	       "--leak-check=full", "@plain_exit", "fork-_exit"),
	VG_ROW("valgrind -q bypassed: _exit with a leak, as bare", VG_THREE, "--leak-check=full",
	       "@plain_exit", "leak-_exit"),
	/* an exec'd child, valgrind following it (memcheck in it too) */
	VG_ROW("valgrind -q bypassed: exec'd child traced, as bare", VG_THREE,
	       "--trace-children=yes", "--leak-check=full", "@plain_exit", "exec"),
	/* a program the programs rule leaves out (only forwards) */
	VG_ROW("valgrind -q bypassed: a program left out, as bare", VG_THREE, "/bin/true"),
	/* threads still running at exit, the record written (the harness's
	 * MEMCHECK_REPORT): no RSS read at the exit, whose /proc reads each
	 * handed valgrind's lock to the running threads (doc/costs.md,
	 * vg47: 8 threads 6.05 s on main, 4.09 s; session 46 saw over 60 s
	 * at a load of 11-13, not seen again); glibc alone (with mimalloc
	 * or jemalloc too each run took 35-100 s in session 46) */
	VG_ROW("valgrind -q bypassed: threads still running at exit, as bare", H_ONLY(H_GLIBC),
	       "--leak-check=no", "@plain_exit_churn"),
	/* valgrind mode proper: memcheck's wrapper reached, valgrind's
	 * malloc behind it (programs without a leak or a thread: the
	 * process region's end asks valgrind for the loss records added,
	 * which it prints then, by design) */
	VG_ROW("valgrind -q, memcheck counting: stdio and locale, as bare", VG_THREE, "SYN",
	       "--leak-check=full", "@plain_stdio_locale"),
	VG_ROW("valgrind -q, memcheck counting: killed by SIGABRT, as bare", VG_THREE, "SYN",
	       "--leak-check=full", "@plain_stdio_locale", "abort"),
	VG_ROW("valgrind -q, memcheck counting: a program left out, as bare", VG_THREE, "SYN",
	       "/bin/true"),
	{ "valgrind -q bypassed under tcmalloc: no warning of memcheck's ranges",
	  .allocators = H_ONLY(H_TCMALLOC), .setup = valgrind_quiet,
	  .run = { .prog = "/usr/bin/valgrind",
		   .args = VG_QUIET("--trace-children=yes", "@plain_exit", "fork-_exit"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "none" },
	  .no_err = H_LIST("address error disablement range") },
	{ "valgrind's malloc everywhere: the process judged at valgrind's exit, not measured",
	  .allocators = VG_THREE, .setup = run_valgrind_quiet,
	  .run = { .prog = "/usr/bin/valgrind", .args = VG_QUIET("@plain_empty"), .text = "" },
	  .check = judged_at_valgrind_exit },
	{ "valgrind not installed", .allocators = H_ONCE, .setup = no_valgrind_in_path,
	  .run = { .prog = "/usr/bin/env", .no_report = true, .text = "" }, .exit = 2,
	  .err = H_LIST("valgrind is not installed") },
};

int main(void)
{
	TCase *tc = h_tcase("vgmode", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
