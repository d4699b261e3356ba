/*
 * test_cxxnames.c - C++ frames named as valgrind names them (lib/demangle.c):
 * a function really at its address by its symbol's name demangled, with
 * its parameters' types (`outer::inner::Box<long>::grow(int)`,
 * `(anonymous namespace)::anon_leak(unsigned long)`,
 * `main::{lambda(int)#1}::operator()(int) const`), an inlined one by its
 * DW_AT_name alone (`inl_leak`, `push_back`).  tests/prog/cxx_names.cc
 * leaks through those shapes, built with the test programs' flags and at
 * -O2; tests/prog/gtest/cxx_gtest.cc, where gtest is installed, leaks
 * from two gtest tests (gtest's frames; at -O2 its main, libgtest_main.a's
 * without debug information, lies after the test file's code, and libdw
 * gave it that file's last line).
 *
 * Where valgrind is installed, every frame valgrind prints for the
 * program (its own preload's allocator frames aside, which memcheck has
 * no counterpart of) must be in memcheck's valgrind text as the same
 * "NAME (FILE:LINE)", the file's directory aside (valgrind names the
 * file alone); without it, the program's own names that valgrind 3.19
 * printed.  Under each of the four allocators; the JSON report's frames
 * carry the same names.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* The frames of a stack dump in valgrind's layout, each "NAME (FILE:LINE)"
 * or "NAME (in OBJECT)" with FILE's directory and memcheck's marks
 * ([inlined], [allocation function]) taken off, one a line, in a string
 * of its own (malloc'd).  Lines of valgrind's own preload are left out. */
static char *frames_of(const char *text)
{
	size_t cap = strlen(text) + 2, n = 0;
	char *out = malloc(cap);
	ck_assert(out != NULL);
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[4096];
		if (len >= sizeof line)
			len = sizeof line - 1;
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (eol ? 1 : 0);
		char *at = strstr(line, "   at 0x");
		if (!at)
			at = strstr(line, "   by 0x");
		if (!at || strstr(line, "/valgrind/"))
			continue;
		char *name = strstr(at, ": ");
		if (!name)
			continue;
		name += 2;
		/* [inlined] comes first, then [allocation function] */
		char *m = strstr(name, " [");
		if (m)
			*m = 0;
		/* "(DIR/FILE:LINE)" at the end -> "(FILE:LINE)" */
		size_t nl = strlen(name);
		char *open = nl && name[nl - 1] == ')' ? strrchr(name, '(') : NULL;
		if (open && strncmp(open, "(in ", 4) != 0) {
			char *slash = strrchr(open, '/');
			if (slash)
				memmove(open + 1, slash + 1, strlen(slash + 1) + 1);
		}
		nl = strlen(name);
		memcpy(out + n, name, nl);
		n += nl;
		out[n++] = '\n';
	}
	out[n] = 0;
	return out;
}

/* Whether frames (frames_of's) holds the line want. */
static bool has_frame(const char *frames, const char *want)
{
	size_t wl = strlen(want);
	for (const char *p = frames; (p = strstr(p, want)) != NULL; p++)
		if ((p == frames || p[-1] == '\n') && p[wl] == '\n')
			return true;
	return false;
}

/* valgrind's text of prog, all leak kinds listed; NULL when valgrind is
 * not installed. */
static char *valgrind_frames(const char *prog)
{
	const char *vg = h_valgrind_path();
	if (!vg)
		return NULL;
	struct h_res v;
	H_EXEC(&v, .prog = vg,
	       .args = H_LIST("--leak-check=full", "--show-leak-kinds=all", h_prog(prog)),
	       .no_report = true, .text = "");
	h_expect_exit(&v, 0);
	char *f = frames_of(v.r.err);
	h_res_free(&v);
	return f;
}

/* The names valgrind 3.19 printed for the program's own functions under
 * the test programs' flags, for a machine without valgrind. */
static const char *const own_names[] = {
	"outer::inner::Box<long>::Box() (cxx_names.cc:21)",
	"outer::inner::Box<long>::grow(int) (cxx_names.cc:22)",
	"outer::inner::Box<long>::operator+=(int) (cxx_names.cc:25)",
	"(anonymous namespace)::anon_leak(unsigned long) (cxx_names.cc:35)",
	"Widget::Widget(int) (cxx_names.cc:41)",
	"Widget::make(int) (cxx_names.cc:46)",
	"main::{lambda(int)#1}::operator()(int) const (cxx_names.cc:68)",
	"main::{lambda(int)#2}::operator()(int) const (cxx_names.cc:70)",
	"inl_leak (cxx_names.cc:51)",
	"via_inline(unsigned long) (cxx_names.cc:55)",
	"main (cxx_names.cc:63)",
};

H_CHECK(names_are_valgrinds)
{
	const char *prog = c->run.prog;
	char *mine = frames_of(x->r.err);
	char *vg = valgrind_frames(prog);
	if (vg) {
		size_t checked = 0;
		for (const char *p = vg; *p; checked++) {
			const char *eol = strchr(p, '\n');
			char want[4096];
			size_t len = (size_t)(eol - p) < sizeof want ? (size_t)(eol - p)
								      : sizeof want - 1;
			memcpy(want, p, len);
			want[len] = 0;
			/* check's messages hold ~4 KB: memcheck's frames cut */
			ck_assert_msg(has_frame(mine, want),
				      "%s: valgrind's frame \"%.600s\" is not in memcheck's text:"
				      "\n%.2000s", x->label, want, mine);
			p = eol + 1;
		}
		ck_assert_msg(checked >= 20, "%s: only %zu frames in valgrind's output", x->label,
			      checked);
	} else if (strcmp(prog, "cxx_names") == 0) {
		printf("note: valgrind not installed; names checked against valgrind 3.19's\n");
		for (size_t i = 0; i < sizeof own_names / sizeof *own_names; i++)
			ck_assert_msg(has_frame(mine, own_names[i]),
				      "%s: \"%s\" is not in memcheck's text:\n%.2000s", x->label,
				      own_names[i], mine);
	}
	/* the JSON report's frames: the same names */
	const char *want = strcmp(prog, "cxx_gtest_o2") == 0 ? "FooTest_Bar_Test::TestBody()"
							    : "Widget::make(int)";
	bool found = false;
	for (size_t i = 0; i < h_nleaks(rec) && !found; i++)
		for (size_t j = 0; j < h_leak_depth(rec, i) && !found; j++)
			found = strcmp(h_frame_str(rec, i, j, "function"), want) == 0;
	ck_assert_msg(found, "%s: no frame of the report named \"%s\"", x->label, want);
	free(mine);
	free(vg);
}

/* The lines of valgrind's suppression entries in text ("{" to "}"), into
 * a file of the test's own; its path. */
static const char *entries_file(const char *text, const char *tag)
{
	const char *path = h_tmppath(tag);
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	bool in = false;
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
		if (*p == '{')
			in = true;
		if (in)
			fwrite(p, 1, len, f);
		if (*p == '}')
			in = false;
		p += len;
	}
	ck_assert(fclose(f) == 0);
	return path;
}

/* Suppression entries cross between the tools as valgrind's own do: the
 * entries valgrind writes for the program suppress every record under
 * memcheck, and those memcheck writes every record under valgrind (a
 * constructor goes by the alias valgrind names it by, C1, not the C2
 * libdw's table order gave). */
H_CHECK(entries_cross)
{
	const char *prog = c->run.prog, *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; suppression entries not crossed\n");
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = vg,
	       .args = H_LIST("--leak-check=full", "--show-leak-kinds=all", "--gen-suppressions=all",
			      h_prog(prog)),
	       .no_report = true, .text = "");
	h_expect_exit(&v, 0);
	const char *theirs = entries_file(v.r.err, "vg.supp");
	h_res_free(&v);
	struct h_res m;
	H_EXEC(&m, .prog = prog, .alloc = x->alloc, .flags = H_PRELOAD,
	       .env = H_LIST(h_env("MEMCHECK_SUPPRESSIONS=%s", theirs)));
	h_expect_exit(&m, 0);
	const struct h_json *r = h_rec(&m, "process");
	ck_assert_msg(h_count(r, "definitely_lost", "blocks") == 0 &&
			      h_count(r, "indirectly_lost", "blocks") == 0 &&
			      h_count(r, "suppressed", "blocks") >= 10,
		      "%s: with valgrind's entries %llu blocks definitely lost, %llu indirectly, "
		      "%llu suppressed", m.label,
		      (unsigned long long)h_count(r, "definitely_lost", "blocks"),
		      (unsigned long long)h_count(r, "indirectly_lost", "blocks"),
		      (unsigned long long)h_count(r, "suppressed", "blocks"));
	h_res_free(&m);
	const char *mine = h_tmppath("mc.supp");
	H_EXEC(&m, .prog = prog, .alloc = x->alloc, .flags = H_PRELOAD,
	       .env = H_LIST(h_env("MEMCHECK_GEN_SUPPRESSIONS=%s", mine)));
	h_res_free(&m);
	H_EXEC(&v, .prog = vg,
	       .args = H_LIST("--leak-check=full", "--show-leak-kinds=all",
			      h_env("--suppressions=%s", mine), h_prog(prog)),
	       .no_report = true, .text = "");
	h_expect_exit(&v, 0);
	struct h_vg_leaks l;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &l, 1) == 1, "no leak summary:\n%.2000s", v.r.err);
	ck_assert_msg(l.blocks[HVG_DEF] == 0 && l.blocks[HVG_IND] == 0 && l.blocks[HVG_SUP] >= 10,
		      "%s: under valgrind with memcheck's entries %llu blocks definitely lost, "
		      "%llu indirectly, %llu suppressed:\n%.2000s", x->label,
		      (unsigned long long)l.blocks[HVG_DEF], (unsigned long long)l.blocks[HVG_IND],
		      (unsigned long long)l.blocks[HVG_SUP], v.r.err);
	h_res_free(&v);
}

/* memcheck_leak_site() names the site's function as the reports do
 * (it gave the debug information's "make"): cxx_names site prints it. */
H_CHECK(leak_site_named_as_reports)
{
	const char *want = "Widget::make(int) cxx_names.cc:";
	ck_assert_msg(strncmp(x->r.out, want, strlen(want)) == 0,
		      "%s: memcheck_leak_site gave \"%s\", expected \"%s<line>\"", x->label,
		      x->r.out, want);
}

/* The gtest program is built where gtest is installed (tests.mk). */
H_SETUP(gtest_built)
{
	if (access(h_prog(run->prog), X_OK) == 0)
		return true;
	printf("note: gtest not installed; %s not built, its row skipped\n", run->prog);
	return false;
}

#define NAMES(p)                                                                    \
	.run = { .prog = p, .flags = H_PRELOAD, .text = "summary",                  \
		 .env = H_LIST("MEMCHECK_VALGRIND_TEXT=all", "MEMCHECK_VALGRIND_ERRORS=") }, \
	.record = "process", .check = names_are_valgrinds
static const struct h_case cases[] = {
	{ "C++ names as valgrind's, test programs' flags", NAMES("cxx_names") },
	{ "C++ names as valgrind's, -O2 with inlined frames", NAMES("cxx_names_o2") },
	{ "C++ names as valgrind's, a gtest program at -O2", NAMES("cxx_gtest_o2"),
	  .setup = gtest_built },
	{ "memcheck_leak_site names the function as the reports",
	  .run = { .prog = "cxx_names", .args = H_LIST("site"), .flags = H_PRELOAD },
	  .records = 2, .check = leak_site_named_as_reports },
	{ "memcheck_leak_site names the function as the reports, -O2",
	  .run = { .prog = "cxx_names_o2", .args = H_LIST("site"), .flags = H_PRELOAD },
	  .records = 2, .check = leak_site_named_as_reports },
	{ "suppression entries cross as valgrind's", .run = { .prog = "cxx_names", .flags = H_PRELOAD },
	  .exit = H_EXIT_ANY, .check = entries_cross },
	{ "suppression entries cross as valgrind's, -O2",
	  .run = { .prog = "cxx_names_o2", .flags = H_PRELOAD }, .exit = H_EXIT_ANY,
	  .check = entries_cross },
};

int main(void)
{
	setenv("H_TIMEOUT", "60", 0); /* valgrind */
	TCase *tc = h_tcase("cxxnames", 240);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
