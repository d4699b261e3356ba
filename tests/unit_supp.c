/*
 * unit_supp.c - lib/suppress.c on its own: files valgrind 3.19 reads are
 * read (entries for other kinds and tools counted apart), every kind of
 * bad entry is refused with its exact line and message, valgrind's
 * wildcards, '...', the leak-kinds filter, the virtual frame 0 that
 * stands for the allocation function, C++ linkage names, an entry
 * written by mc_supp_format read back and matching its own stack, and
 * matching on the quick view (one frame a return address, named by its
 * symbol table) answering as the frames do, on random stacks and files.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

static char err[1024];

static struct mc_supps *parse(const char *text)
{
	struct mc_supps *s = mc_supp_new();
	ck_assert_ptr_nonnull(s);
	if (!mc_supp_parse(s, text, strlen(text), "t.supp", err, sizeof err)) {
		mc_supp_free(s);
		return NULL;
	}
	return s;
}

static struct mc_supps *good(const char *text)
{
	struct mc_supps *s = parse(text);
	ck_assert_msg(s != NULL, "did not parse:\n%s\nerror: %s", text, err);
	ck_assert_str_eq(err, "");
	return s;
}

/* A stack: "fn@object@file:line" per frame, ';'-separated; a function
 * "C++name/linkage" has a short name and a linkage name. */
struct stack {
	struct mc_frame_info f[32];
	int n;
};

static const struct mc_frame_info *frame(void *arg, int i)
{
	struct stack *st = arg;
	return i < st->n ? &st->f[i] : NULL;
}

static struct stack *make(const char *desc)
{
	static struct stack st;
	memset(&st, 0, sizeof st);
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", desc);
	for (char *save = NULL, *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		struct mc_frame_info *f = &st.f[st.n++];
		char *obj = strchr(t, '@'), *file = NULL;
		if (obj) {
			*obj++ = 0;
			file = strchr(obj, '@');
			if (file) {
				*file++ = 0;
				char *colon = strrchr(file, ':');
				if (colon) {
					*colon = 0;
					f->line = atoi(colon + 1);
				}
				snprintf(f->file, sizeof f->file, "%s", file);
			}
			snprintf(f->object, sizeof f->object, "%s", obj);
		}
		char *slash = strchr(t, '/');
		if (slash)
			*slash++ = 0;
		snprintf(f->function, sizeof f->function, "%s", t);
		snprintf(f->linkage, sizeof f->linkage, "%s", slash ? slash : t);
	}
	return &st;
}

/* Index of the entry that matches stack desc for kind, -1 for none. */
static long match(const struct mc_supps *s, int kind, const char *desc)
{
	struct mc_supp_stack st = { .frame = frame, .arg = make(desc) };
	return mc_supp_match(s, kind, &st, "/opt/lib/libmemcheck.so.0");
}

static const char valgrind_file[] =
	"# what valgrind's own files hold\n"
	"\n"
	"{\n"
	"   cond in ld.so\n"
	"   Memcheck:Cond\n"
	"   obj:*/ld-linux*.so*\n"
	"}\n"
	"{\n"
	"   a param\n"
	"   Memcheck:Param\n"
	"   write(buf)\n"
	"   fun:write\n"
	"   ...\n"
	"}\n"
	"{\n"
	"   helgrind's\n"
	"   Helgrind:Race\n"
	"   anything at all: helgrind's own lines\n"
	"}\n"
	"  {  \n"
	"\t leak, any kind  \r\n"
	"   Memcheck,Addrcheck:Leak\n"
	"   # a comment inside\n"
	"   fun:malloc\n"
	"   fun:make_*\n"
	"}\n"
	"{\n"
	"   leak, definite\n"
	"   Memcheck:Leak\n"
	"   match-leak-kinds: definite,possible\n"
	"   ...\n"
	"   fun:grow\n"
	"   fun:main\n"
	"}\n";

START_TEST(reads_valgrinds_files)
{
	struct mc_supps *s = good(valgrind_file);
	ck_assert_uint_eq(mc_supp_count(s), 2);
	ck_assert_uint_eq(mc_supp_others(s), 3);
	const char *file;
	int line;
	ck_assert_str_eq(mc_supp_name(s, 0, &file, &line, NULL), "leak, any kind");
	ck_assert_str_eq(file, "t.supp");
	ck_assert_int_eq(line, 20);
	ck_assert_str_eq(mc_supp_name(s, 1, &file, &line, NULL), "leak, definite");
	ck_assert_int_eq(line, 27);
	/* kinds: the first takes all, the second definite and possible */
	ck_assert_int_eq(match(s, MC_KIND_REACHABLE, "make_list;main"), 0);
	ck_assert_int_eq(match(s, MC_KIND_DEFINITE, "grow;main"), 1);
	ck_assert_int_eq(match(s, MC_KIND_POSSIBLE, "grow;main"), 1);
	ck_assert_int_eq(match(s, MC_KIND_INDIRECT, "grow;main"), -1);
	ck_assert_int_eq(match(s, MC_KIND_REACHABLE, "grow;main"), -1);
	mc_supp_free(s);
	s = good("");
	ck_assert_uint_eq(mc_supp_count(s), 0);
	mc_supp_free(s);
	s = good("{\n n\n Memcheck:Leak\n match-leak-kinds: none\n fun:*\n}\n");
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(match(s, k, "a;b"), -1);
	mc_supp_free(s);
	s = good("{\n n\n Memcheck:Leak\n match-leak-kinds:all\n fun:*\n}\n");
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(match(s, k, "a;b"), 0);
	mc_supp_free(s);
}
END_TEST

/* text parsed with the marks of drop dropped, n entries applied */
static struct mc_supps *parsed_dropping(const char *text, unsigned drop, size_t n)
{
	struct mc_supps *s = mc_supp_new();
	ck_assert_ptr_nonnull(s);
	mc_supp_drop_freeres(s, drop);
	ck_assert_msg(mc_supp_parse(s, text, strlen(text), "t.supp", err, sizeof err), "%s", err);
	ck_assert_uint_eq(mc_supp_count(s), n);
	return s;
}

/* "# freeres: libc" / "cxx" inside an entry (memcheck-suppressions(5)):
 * a comment to valgrind; with those bits dropped the entry is parsed and
 * not applied, otherwise it applies as any; other comments mark nothing,
 * and a mark stays with its own entry. */
START_TEST(freeres_marks)
{
	static const char text[] =
		"# freeres: libc\n"
		"{\n stdio\n Memcheck:Leak\n # freeres: libc\n match-leak-kinds: reachable\n"
		" ...\n fun:_IO_file_doallocate\n}\n"
		"{\n pool\n Memcheck:Leak\n ...\n #freeres:cxx\n obj:*/libstdc++.so.6*\n}\n"
		"{\n both\n Memcheck:Leak\n # freeres: libc, cxx\n fun:both\n}\n"
		"{\n not a mark\n Memcheck:Leak\n # freeres: libc maybe\n # freeres libc\n"
		" fun:kept\n}\n";
	static const struct {
		unsigned drop;
		size_t n;
		long stdio, both, kept;
	} rows[] = {
		{ 0, 4, 0, 2, 3 },
		{ MC_FREERES_LIBC, 2, -1, -1, 1 },
		{ MC_FREERES_CXX, 2, 0, -1, 1 },
		{ MC_FREERES_LIBC | MC_FREERES_CXX, 1, -1, -1, 0 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct mc_supps *s = parsed_dropping(text, rows[i].drop, rows[i].n);
		ck_assert_uint_eq(mc_supp_others(s), 4 - rows[i].n);
		ck_assert_int_eq(match(s, MC_KIND_REACHABLE, "_IO_file_doallocate;main"),
				 rows[i].stdio);
		ck_assert_int_eq(match(s, MC_KIND_DEFINITE, "both;main"), rows[i].both);
		ck_assert_int_eq(match(s, MC_KIND_DEFINITE, "kept;main"), rows[i].kept);
		mc_supp_free(s);
	}
}
END_TEST

/* "# valgrind: lists" (a running thread's DTV in glibc.supp): a comment
 * to valgrind, applied by memcheck's own reports, parsed and not applied
 * with MC_SUPP_VALGRIND_LISTS dropped (valgrind's command line), whatever
 * the freeres bits; "# valgrind: lists it" or "# valgrind lists" mark
 * nothing. */
START_TEST(valgrind_lists_marks)
{
	static const char text[] =
		"{\n running\n Memcheck:Leak\n # valgrind: lists\n match-leak-kinds: possible\n"
		" ...\n fun:allocate_dtv\n}\n"
		"{\n cached\n Memcheck:Leak\n # freeres: libc\n match-leak-kinds: definite\n"
		" ...\n fun:allocate_dtv\n}\n"
		"{\n not a mark\n Memcheck:Leak\n # valgrind: lists it\n # valgrind lists\n"
		" fun:kept\n}\n";
	static const struct {
		unsigned drop;
		size_t n;
		long running, cached, kept;
	} rows[] = {
		{ 0, 3, 0, 1, 2 },
		{ MC_SUPP_VALGRIND_LISTS, 2, -1, 0, 1 },
		{ MC_SUPP_VALGRIND_LISTS | MC_FREERES_LIBC, 1, -1, -1, 0 },
		{ MC_FREERES_LIBC, 2, 0, -1, 1 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct mc_supps *s = parsed_dropping(text, rows[i].drop, rows[i].n);
		ck_assert_int_eq(match(s, MC_KIND_POSSIBLE, "allocate_dtv;_dl_allocate_tls"),
				 rows[i].running);
		ck_assert_int_eq(match(s, MC_KIND_DEFINITE, "allocate_dtv;_dl_allocate_tls"),
				 rows[i].cached);
		ck_assert_int_eq(match(s, MC_KIND_DEFINITE, "kept;main"), rows[i].kept);
		mc_supp_free(s);
	}
}
END_TEST

/* libmemcheck:Pool, memcheck's own kind (valgrind skips the tool):
 * counted among the entries, matched by MC_SUPP_POOL alone, and kept as
 * such through the cache's image (suppcache.c). */
START_TEST(pool_entries)
{
	struct mc_supps *s = good("{\n pools\n libmemcheck:Pool\n ...\n fun:g_slice_alloc*\n}\n"
				  "{\n leaks\n Memcheck:Leak\n ...\n fun:main\n}\n");
	ck_assert_uint_eq(mc_supp_count(s), 2);
	ck_assert_uint_eq(mc_supp_pools(s), 1);
	ck_assert_int_eq(match(s, MC_SUPP_POOL, "posix_memalign;g_slice_alloc;main"), 0);
	ck_assert_int_eq(match(s, MC_SUPP_POOL, "malloc;g_malloc;main"), -1);
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(match(s, k, "posix_memalign;g_slice_alloc;f"), -1);
	ck_assert_int_eq(match(s, MC_KIND_POSSIBLE, "posix_memalign;g_slice_alloc;main"), 1);
	struct mc_buf b = { 0 };
	/* a bound its entries and frames pass: nothing built (harden46) */
	ck_assert(!mc_supp_image_put(s, &b, 64));
	ck_assert_uint_eq(b.len, 0);
	ck_assert(mc_supp_image_put(s, &b, SIZE_MAX));
	struct mc_supps *t = mc_supp_image_take(b.s, b.len, NULL, 0);
	ck_assert(t != NULL);
	ck_assert_uint_eq(mc_supp_pools(t), 1);
	ck_assert_int_eq(match(t, MC_SUPP_POOL, "posix_memalign;g_slice_alloc;main"), 0);
	ck_assert_int_eq(match(t, MC_KIND_DEFINITE, "posix_memalign;g_slice_alloc;f"), -1);
	mc_supp_free(t);
	mc_buf_free(&b);
	mc_supp_free(s);
}
END_TEST

static const struct {
	const char *text, *error;
} bad[] = {
	{ "{\n n\n libmemcheck:Leak\n fun:f\n}\n", "t.supp:3: unknown libmemcheck kind in "
	  "'libmemcheck:Leak': expected libmemcheck:Pool" },
	{ "{\n n\n Memcheck,libmemcheck:Pool\n fun:f\n}\n", "t.supp:3: expected "
	  "'libmemcheck:Pool' alone, without Memcheck (valgrind stops at a Memcheck kind it "
	  "does not know), found 'Memcheck,libmemcheck:Pool'" },
	{ "{\n n\n libmemcheck:Pool\n match-leak-kinds: all\n fun:f\n}\n",
	  "t.supp:4: expected a frame line (fun:PATTERN, obj:PATTERN, src:FILE[:LINE] or "
	  "...) or '}', found 'match-leak-kinds: all'" },
	{ "x\n", "t.supp:1: expected '{' to begin a suppression, found 'x'" },
	{ "\xef\xbb\xbf{\n n\n Memcheck:Leak\n fun:f\n}\n", "t.supp:1: expected '{' to begin a "
	  "suppression, found a UTF-8 byte order mark (EF BB BF) before '{': save the file "
	  "without it (valgrind refuses it too)" },
	{ "# c\n\n{\n", "t.supp:3: expected the suppression's name after '{' at line 3, "
	  "found the end of the file" },
	{ "{\n}\n", "t.supp:2: expected the suppression's name after '{' at line 1, found '}'" },
	{ "{\n n\n", "t.supp:2: expected 'Tool:Kind' (such as Memcheck:Leak) after the name, "
	  "found the end of the file" },
	{ "{\n n\n Memcheck\n}\n", "t.supp:3: expected 'Tool:Kind' (such as Memcheck:Leak) "
	  "after the name, found 'Memcheck'" },
	{ "{\n n\n Memcheck:\n}\n", "t.supp:3: expected 'Tool:Kind' (such as Memcheck:Leak) "
	  "after the name, found 'Memcheck:'" },
	{ "{\n n\n ,Memcheck:Leak\n}\n", "t.supp:3: expected tool names separated by commas "
	  "before ':', found ',Memcheck:Leak'" },
	{ "{\n n\n Memcheck:Lek\n fun:f\n}\n", "t.supp:3: unknown Memcheck suppression kind "
	  "'Lek': expected Leak, Cond, Value1..Value32, Addr1..Addr32, Param, Free, Jump, "
	  "Overlap, User or FishyValue" },
	{ "{\n n\n Memcheck:Param\n}\n", "t.supp:4: expected the line Memcheck:Param takes "
	  "(the parameter) before the frames" },
	{ "{\n n\n Memcheck:Leak\n match-leak-kinds: definite,lost\n fun:f\n}\n",
	  "t.supp:4: match-leak-kinds: unknown kind 'lost': expected a comma-separated list "
	  "of definite, indirect, possible, reachable, or all, or none" },
	{ "{\n n\n Memcheck:Leak\n match-leak-kinds:\n fun:f\n}\n",
	  "t.supp:4: match-leak-kinds: unknown kind '': expected a comma-separated list "
	  "of definite, indirect, possible, reachable, or all, or none" },
	{ "{\n n\n Memcheck:Cond\n match-leak-kinds: all\n fun:f\n}\n",
	  "t.supp:4: expected a frame line (fun:PATTERN, obj:PATTERN, src:FILE[:LINE] or "
	  "...) or '}', found 'match-leak-kinds: all'" },
	{ "{\n n\n Memcheck:Leak\n fun:\n}\n", "t.supp:4: expected a frame line "
	  "(fun:PATTERN, obj:PATTERN, src:FILE[:LINE] or ...) or '}', found 'fun:'" },
	{ "{\n n\n Memcheck:Leak\n fun:f\n", "t.supp:4: expected '}' to close the "
	  "suppression begun at line 1, found the end of the file" },
	{ "{\n n\n Helgrind:Race\n fun:f\n", "t.supp:4: expected '}' to close the "
	  "suppression begun at line 1, found the end of the file" },
	{ "{\n n\n Memcheck:Leak\n}\n", "t.supp:4: expected at least one frame line "
	  "(fun:, obj:, src: or ...) before '}'" },
	{ "{\n n\n Memcheck:Leak\n src:a.c:0\n}\n", "t.supp:4: src:a.c:0: expected "
	  "src:FILE or src:FILE:LINE with a line number from 1" },
	{ "{\n n\n Memcheck:Leak\n fun:f\n}\n}\n", "t.supp:6: expected '{' to begin a "
	  "suppression, found '}'" },
	{ "{\n n\n Memcheck:Leak\n fun:f\0\n}\n", NULL /* NUL: see below */ },
};

START_TEST(refuses_bad_entries)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(bad); i++) {
		if (!bad[i].error)
			continue;
		struct mc_supps *s = parse(bad[i].text);
		ck_assert_msg(s == NULL, "parsed:\n%s", bad[i].text);
		ck_assert_str_eq(err, bad[i].error);
	}
	/* A NUL byte */
	static const char nul[] = "{\n n\n Memcheck:Leak\n fun:f\0g\n}\n";
	struct mc_supps *s = mc_supp_new();
	ck_assert(!mc_supp_parse(s, nul, sizeof nul - 1, "t.supp", err, sizeof err));
	ck_assert_str_eq(err, "t.supp:4: a NUL byte: expected a text file");
	/* '...' alone, valgrind refuses ("at least one location line which
	 * is not ..."): it would match every stack (taken before harden42) */
	static const char dots[] = "{\n n\n Memcheck:Leak\n ...\n ...\n}\n";
	ck_assert(!mc_supp_parse(s, dots, sizeof dots - 1, "t.supp", err, sizeof err));
	ck_assert_str_eq(err, "t.supp:1: expected a frame line other than '...' in the "
			 "suppression: '...' alone would match every stack (valgrind refuses it too)");
	mc_supp_free(s);
	s = mc_supp_new();
	/* frame lines past the 24 memcheck keeps are skipped unread, as
	 * valgrind 3.19's loader skips those past --num-callers (it takes
	 * 25 and 10,000 alike; refused before harden42) */
	char text[2048] = "{\n n\n Memcheck:Leak\n";
	for (int i = 0; i < 24; i++)
		strcat(text, " fun:f\n");
	strcat(text, "}\n");
	ck_assert(mc_supp_parse(s, text, strlen(text), "t.supp", err, sizeof err));
	ck_assert_uint_eq(mc_supp_count(s), 1);
	strcpy(strrchr(text, '}'), " not a frame line\n}\n");
	ck_assert_msg(mc_supp_parse(s, text, strlen(text), "t.supp", err, sizeof err), "%s", err);
	ck_assert_uint_eq(mc_supp_count(s), 2);
	size_t big = 10000 * 7 + 64;
	char *many = malloc(big);
	strcpy(many, "{\n n\n Memcheck:Leak\n");
	char *at = many + strlen(many);
	for (int i = 0; i < 10000; i++)
		at = stpcpy(at, " fun:f\n");
	strcpy(at, "}\n");
	ck_assert_msg(mc_supp_parse(s, many, strlen(many), "t.supp", err, sizeof err), "%s", err);
	ck_assert_uint_eq(mc_supp_count(s), 3);
	/* unterminated: said at the end of the file */
	strcpy(strrchr(many, '}'), " fun:g\n");
	ck_assert(!mc_supp_parse(s, many, strlen(many), "t.supp", err, sizeof err));
	ck_assert_str_eq(err, "t.supp:10004: expected '}' to close the suppression begun at "
			 "line 1, found the end of the file");
	free(many);
	/* a file that fails adds nothing, not even its good entries */
	static const char half[] = "{\n a\n Memcheck:Leak\n fun:f\n}\n{\n";
	ck_assert(!mc_supp_parse(s, half, sizeof half - 1, "t.supp", err, sizeof err));
	ck_assert_uint_eq(mc_supp_count(s), 3);
	/* a short error buffer still holds a string */
	char tiny[12];
	ck_assert(!mc_supp_parse(s, "x", 1, "t.supp", tiny, sizeof tiny));
	ck_assert_str_eq(tiny, "t.supp:1: e");
	/* a good file leaves err empty; one whose entry lacks its name line
	 * is read (valgrind 3.19 skips such an entry as another tool's, its
	 * frame line taken for the tool), the entry skipped, the first such
	 * said in err, the file's other entries applied */
	ck_assert(mc_supp_parse(s, half, sizeof half - 3, "t.supp", err, sizeof err));
	ck_assert_str_eq(err, "");
	static const char nameless[] = "{\n Memcheck:Leak\n fun:f\n}\n{\n a\n Memcheck:Leak\n"
				       " fun:g\n}\n{\n Memcheck:Leak\n match-leak-kinds: all\n"
				       " fun:h\n}\n";
	ck_assert(mc_supp_parse(s, nameless, sizeof nameless - 1, "t.supp", err, sizeof err));
	ck_assert_uint_eq(mc_supp_count(s), 5);
	ck_assert_str_eq(err, "t.supp:2: the suppression begun at line 1 has no name line: "
			 "'Memcheck:Leak' is read as its name and 'fun:f' as its Tool:Kind, so "
			 "valgrind and memcheck skip it as another tool's (add a name line after "
			 "'{')");
	mc_supp_free(s);
}
END_TEST

START_TEST(wildcards)
{
	ck_assert(mc_supp_glob("*", ""));
	ck_assert(mc_supp_glob("make_*", "make_list"));
	ck_assert(mc_supp_glob("*_list", "make_list"));
	ck_assert(mc_supp_glob("m?ke*l?st", "make_list"));
	ck_assert(mc_supp_glob("*a*b*c*", "xxaxxbxxcxx"));
	ck_assert(!mc_supp_glob("*a*b*c*", "xxaxxcxxbxx"));
	ck_assert(!mc_supp_glob("make_", "make_list"));
	ck_assert(!mc_supp_glob("?", ""));
	ck_assert(mc_supp_glob("a\\*b", "a*b"));
	ck_assert(!mc_supp_glob("a\\*b", "axb"));
	ck_assert(mc_supp_glob("a\\?", "a?"));
	ck_assert(!mc_supp_glob("a\\?", "ab"));
	ck_assert(mc_supp_glob("*/libc.so*", "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	/* No backtracking blow-up */
	char s[4096];
	memset(s, 'a', sizeof s - 1);
	s[sizeof s - 1] = 0;
	ck_assert(!mc_supp_glob("*a*a*a*a*a*a*a*a*b", s));
}
END_TEST

START_TEST(frames_and_dots)
{
	struct mc_supps *s = good(
		"{\n exact\n Memcheck:Leak\n fun:a\n fun:b\n}\n"
		"{\n dots in the middle\n Memcheck:Leak\n fun:x\n ...\n fun:z\n}\n"
		"{\n obj and src\n Memcheck:Leak\n obj:*/libfoo.so*\n src:foo.c:12\n}\n"
		"{\n src without line\n Memcheck:Leak\n src:bar.c\n fun:main\n}\n"
		"{\n dots last\n Memcheck:Leak\n fun:q\n ...\n}\n");
	ck_assert_int_eq(match(s, 0, "a;b"), 0);
	ck_assert_int_eq(match(s, 0, "a;b;c;main"), 0);   /* a prefix is enough */
	ck_assert_int_eq(match(s, 0, "a"), -1);           /* a stack too short */
	ck_assert_int_eq(match(s, 0, "b;a"), -1);
	ck_assert_int_eq(match(s, 0, "x;z"), 1);          /* ... is zero frames */
	ck_assert_int_eq(match(s, 0, "x;y;y;z;w"), 1);
	ck_assert_int_eq(match(s, 0, "x;y;y"), -1);
	ck_assert_int_eq(match(s, 0, "f@/lib/libfoo.so.1;g@/bin/p@/src/foo.c:12"), 2);
	ck_assert_int_eq(match(s, 0, "f@/lib/libfoo.so.1;g@/bin/p@/src/foo.c:13"), -1);
	ck_assert_int_eq(match(s, 0, "g@/bin/p@src/bar.c:99;main"), 3);
	ck_assert_int_eq(match(s, 0, "q"), 4);
	mc_supp_free(s);
	/* Symbol-table names of GCC's pieces of a function are the function:
	 * f.part.0, f.isra.0, f.constprop.0, f.cold, f.localalias. */
	s = good("{\n clones\n Memcheck:Leak\n fun:set_binding_values\n fun:main\n}\n");
	ck_assert_int_eq(match(s, 0, "set_binding_values.part.0;main"), 0);
	ck_assert_int_eq(match(s, 0, "set_binding_values.isra.0;main"), 0);
	ck_assert_int_eq(match(s, 0, "set_binding_values.constprop.1;main"), 0);
	ck_assert_int_eq(match(s, 0, "set_binding_values.cold;main"), 0);
	ck_assert_int_eq(match(s, 0, "set_binding_values.localalias;main"), 0);
	ck_assert_int_eq(match(s, 0, "set_binding_values_x;main"), -1);
	ck_assert_int_eq(match(s, 0, "set_binding_values.other;main"), -1);
	mc_supp_free(s);
}
END_TEST

/* memcheck's stacks begin at the allocation function's caller, valgrind's
 * at the allocation function: virtual frames stand for it. */
START_TEST(virtual_frame_zero)
{
	struct mc_supps *s = good(
		"{\n valgrind's malloc\n Memcheck:Leak\n fun:malloc\n fun:leak\n fun:main\n}\n"
		"{\n any alloc\n Memcheck:Leak\n fun:*alloc\n fun:grow\n}\n"
		"{\n in vgpreload\n Memcheck:Leak\n obj:*vgpreload_memcheck*\n fun:pre\n}\n"
		"{\n in libmemcheck\n Memcheck:Leak\n obj:*/libmemcheck.so*\n fun:self\n}\n"
		"{\n operator new\n Memcheck:Leak\n fun:_Znwm\n fun:_ZN2ns4makeEv\n}\n"
		"{\n not an allocation function\n Memcheck:Leak\n fun:strdup\n fun:dup\n}\n"
		"{\n src never\n Memcheck:Leak\n src:vg_replace_malloc.c\n fun:src0\n}\n");
	ck_assert_int_eq(match(s, 0, "leak;main"), 0);
	ck_assert_int_eq(match(s, 0, "malloc;leak;main"), 0); /* a frame for it, too */
	ck_assert_int_eq(match(s, 0, "main"), -1);
	ck_assert_int_eq(match(s, 0, "grow"), 1);
	ck_assert_int_eq(match(s, 0, "pre"), 2);
	ck_assert_int_eq(match(s, 0, "self"), 3);
	/* operator new is a real frame of memcheck's stack (libstdc++'s own
	 * calls malloc), and also what frame 0 stands for */
	ck_assert_int_eq(match(s, 0, "operator new/_Znwm@/usr/lib/libstdc++.so.6;"
			 "make/_ZN2ns4makeEv"), 4);
	ck_assert_int_eq(match(s, 0, "make/_ZN2ns4makeEv"), 4);
	/* by the short name too */
	ck_assert_int_eq(match(s, 0, "make/_ZN2ns4makeEv"), 4);
	ck_assert_int_eq(match(s, 0, "dup"), -1);
	ck_assert_int_eq(match(s, 0, "strdup;dup"), 5);
	ck_assert_int_eq(match(s, 0, "src0"), -1);
	mc_supp_free(s);
	/* valgrind's posix_memalign calls its memalign; under valgrind with
	 * memcheck preloaded, valgrind's malloc is called by memcheck's:
	 * two allocation frames, never three */
	s = good("{\n two\n Memcheck:Leak\n fun:memalign\n fun:posix_memalign\n fun:site\n}\n"
		 "{\n preloaded\n Memcheck:Leak\n fun:malloc\n obj:*/libmemcheck.so*\n"
		 " fun:other\n}\n"
		 "{\n three\n Memcheck:Leak\n fun:malloc\n fun:malloc\n fun:malloc\n"
		 " fun:third\n}\n");
	ck_assert_int_eq(match(s, 0, "site;main"), 0);
	ck_assert_int_eq(match(s, 0, "other;main"), 1);
	ck_assert_int_eq(match(s, 0, "third;main"), -1);
	mc_supp_free(s);
	s = good("{\n by short name\n Memcheck:Leak\n fun:malloc\n fun:make\n}\n");
	ck_assert_int_eq(match(s, 0, "make/_ZN2ns4makeEv"), 0);
	mc_supp_free(s);
	/* every malloc-family name */
	static const char *const names[] = { "malloc", "calloc", "realloc", "reallocarray",
		"memalign", "posix_memalign", "aligned_alloc", "valloc", "pvalloc", "_Znam" };
	for (size_t i = 0; i < MC_ARRAY_SIZE(names); i++) {
		char text[256];
		snprintf(text, sizeof text, "{\n n\n Memcheck:Leak\n fun:%s\n fun:site\n}\n",
			 names[i]);
		s = good(text);
		ck_assert_msg(match(s, 0, "site") == 0, "%s", names[i]);
		mc_supp_free(s);
	}
}
END_TEST

/* What mc_supp_format writes reads back and matches the stack it was
 * written for, and not another. */
START_TEST(generated_entries_read_back)
{
	static const char *const stacks[] = {
		"leak@/bin/p@p.c:6;main@/bin/p@p.c:13;__libc_start_call_main@/lib/libc.so.6",
		"operator new/_Znwm@/usr/lib/libstdc++.so.6;make/_ZN2ns4makeEv@/bin/p;main",
		"???@/lib/libweird.so;helper*?\\@/bin/p;main",
		"a;b;c;d;e;f;g;h;i;j;k;l;m;n;o;p;q",
		"operator new/_Znwm@/usr/lib/libstdc++.so.6",
		"",
		"???;__libc_start_call_main",
	};
	for (size_t i = 0; i < MC_ARRAY_SIZE(stacks); i++) {
		struct mc_buf b = { 0 };
		struct stack copy = *make(stacks[i]);
		struct mc_supp_stack st = { .frame = frame, .arg = &copy };
		mc_supp_format(&b, "memcheck-t-1", MC_KIND_POSSIBLE, &st);
		ck_assert(!b.oom);
		char text[4096];
		snprintf(text, sizeof text, "%.*s", (int)b.len, b.s);
		mc_buf_free(&b);
		struct mc_supps *s = good(text);
		if (i >= 4) {
			/* nothing past the allocation function: an entry
			 * would suppress every leak of the kind */
			ck_assert_uint_eq(mc_supp_count(s), 0);
			ck_assert_msg(strncmp(text, "# memcheck-t-1: no entry for this possible "
					      "leak record", 52) == 0, "%s", text);
			mc_supp_free(s);
			continue;
		}
		ck_assert_uint_eq(mc_supp_count(s), 1);
		ck_assert_msg(mc_supp_match(s, MC_KIND_POSSIBLE, &st, NULL) == 0, "%s", text);
		ck_assert_int_eq(mc_supp_match(s, MC_KIND_DEFINITE, &st, NULL), -1);
		mc_supp_free(s);
		if (i == 0) {
			ck_assert_str_eq(text, "{\n   memcheck-t-1\n   Memcheck:Leak\n"
					 "   match-leak-kinds: possible\n   ...\n   fun:leak\n"
					 "   fun:main\n}\n");
		} else if (i == 1) {
			ck_assert_str_eq(text, "{\n   memcheck-t-1\n   Memcheck:Leak\n"
					 "   match-leak-kinds: possible\n   fun:_Znwm\n"
					 "   fun:_ZN2ns4makeEv\n   fun:main\n}\n");
		} else if (i == 2) {
			/* '*' and '?' as they are, wildcards that match
			 * themselves, as valgrind (no escapes) writes them; a
			 * backslash as '?' */
			ck_assert_msg(strstr(text, "   obj:/lib/libweird.so\n   fun:helper*??\n"),
				      "%s", text);
		} else {
			/* valgrind keeps 12 frames: '...' and 11 */
			ck_assert_msg(strstr(text, "   fun:k\n}\n"), "%s", text);
		}
	}
}
END_TEST

static void write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	size_t n = strlen(text);
	ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
	close(fd);
}

/* mc_supp_load_io: the shipped directory's files read through one buffer
 * (supp_region.c's load_dir).  A smaller file reuses it, a larger one
 * grows it, and a file is read only to its own end, never into what a
 * longer file before it left in the buffer: every answer is the one
 * mc_supp_load gives the file alone.  Run twice: with fstat's size, and
 * as a directory's regular files are read (io.regular: read to the
 * buffer's end, which grows when a read fills it). */
START_TEST(files_through_one_buffer)
{
	/* closed by the bytes a longer file leaves behind it, if read past its end */
	static const char open_entry[] = "{\n   open\n   Memcheck:Leak\n   fun:f\n";
	char longer[] = "/tmp/unit_supp_XXXXXX", shorter[] = "/tmp/unit_supp_XXXXXX",
	     large[] = "/tmp/unit_supp_XXXXXX";
	char text[12000];
	snprintf(text, 4096, "%s}\n%s}\n%s}\n", open_entry, open_entry, open_entry);
	write_temp(longer, text);
	write_temp(shorter, open_entry);
	size_t used = strlen(valgrind_file);
	memcpy(text, valgrind_file, used);
	while (used < 10000) /* past the buffer's first two pages */
		text[used++] = '#', text[used++] = '\n';
	text[used] = 0;
	write_temp(large, text);

	struct mc_supps *s = mc_supp_new(), *alone = mc_supp_new();
	struct mc_supp_io io = { .regular = _i };
	char err_alone[1024];
	ck_assert_msg(mc_supp_load_io(s, longer, &io, err, sizeof err), "%s", err);
	ck_assert_uint_eq(mc_supp_count(s), 3);
	char *buf = io.buf;
	size_t cap = io.cap;
	ck_assert_ptr_nonnull(buf);
	ck_assert(!mc_supp_load_io(s, shorter, &io, err, sizeof err));
	ck_assert(!mc_supp_load(alone, shorter, err_alone, sizeof err_alone));
	ck_assert_str_eq(err, err_alone);
	ck_assert_msg(strstr(err, "found the end of the file"), "%s", err);
	ck_assert_ptr_eq(io.buf, buf);         /* the smaller file: the same buffer, */
	ck_assert_uint_eq(io.cap, cap);
	/* not cleared again: the longer file's '}' is still there behind it */
	ck_assert_int_eq(io.buf[sizeof open_entry - 1], '}');
	ck_assert_uint_eq(mc_supp_count(s), 3); /* a file that does not parse adds nothing */
	ck_assert_msg(mc_supp_load_io(s, large, &io, err, sizeof err), "%s", err);
	ck_assert_uint_gt(io.cap, used);         /* grown for the larger one */
	ck_assert_msg(mc_supp_load(alone, large, err_alone, sizeof err_alone), "%s", err_alone);
	ck_assert_uint_eq(mc_supp_count(s), 3 + mc_supp_count(alone));
	ck_assert_uint_eq(mc_supp_others(s), mc_supp_others(alone));
	for (size_t i = 0; i < mc_supp_count(alone); i++) {
		const char *f1, *f2;
		int l1, l2;
		ck_assert_str_eq(mc_supp_name(s, 3 + i, &f1, &l1, NULL),
				 mc_supp_name(alone, i, &f2, &l2, NULL));
		ck_assert_str_eq(f1, f2);
		ck_assert_int_eq(l1, l2);
	}
	mc_supp_io_free(&io);
	ck_assert_ptr_null(io.buf);
	ck_assert_uint_eq(io.cap, 0);
	mc_supp_io_free(&io);                  /* twice: nothing to unmap */
	/* A file that fills a fresh buffer to its last byte but one: the
	 * read asked for exactly that much, so the end is not yet seen (the
	 * regular read grows the buffer and reads again). */
	used = strlen(valgrind_file);
	memcpy(text, valgrind_file, used);
	while (used < 8191)
		text[used++] = '#';
	text[8190] = '\n';
	text[used] = 0;
	char full[] = "/tmp/unit_supp_XXXXXX";
	write_temp(full, text);
	struct mc_supps *edge = mc_supp_new(), *edge_alone = mc_supp_new();
	ck_assert_msg(mc_supp_load_io(edge, full, &io, err, sizeof err), "%s", err);
	ck_assert_msg(mc_supp_load(edge_alone, full, err_alone, sizeof err_alone), "%s", err_alone);
	ck_assert_uint_gt(mc_supp_count(edge), 0);
	ck_assert_uint_eq(mc_supp_count(edge), mc_supp_count(edge_alone));
	ck_assert_uint_eq(mc_supp_others(edge), mc_supp_others(edge_alone));
	mc_supp_io_free(&io);
	mc_supp_free(edge);
	mc_supp_free(edge_alone);
	unlink(full);
	mc_supp_free(s);
	mc_supp_free(alone);
	unlink(longer);
	unlink(shorter);
	unlink(large);
}
END_TEST

START_TEST(load_files)
{
	struct mc_supps *s = mc_supp_new();
	ck_assert(!mc_supp_load(s, "/nonexistent/x.supp", err, sizeof err));
	ck_assert_str_eq(err, "/nonexistent/x.supp: No such file or directory");
	ck_assert(!mc_supp_load(s, "/dev/zero", err, sizeof err));
	ck_assert_str_eq(err, "/dev/zero: not a regular file");
	char path[] = "/tmp/unit_supp_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, valgrind_file, sizeof valgrind_file - 1),
			 (ssize_t)(sizeof valgrind_file - 1));
	close(fd);
	ck_assert_msg(mc_supp_load(s, path, err, sizeof err), "%s", err);
	ck_assert(mc_supp_load(s, path, err, sizeof err));
	ck_assert_uint_eq(mc_supp_count(s), 4);
	const char *file;
	mc_supp_name(s, 3, &file, NULL, NULL);
	ck_assert_str_eq(file, path);
	unlink(path);
	/* valgrind's own file, every tool and kind in it */
	static const char vg_default[] = "/usr/libexec/valgrind/default.supp";
	if (access(vg_default, R_OK) == 0) {
		size_t before = mc_supp_count(s);
		ck_assert_msg(mc_supp_load(s, vg_default, err, sizeof err), "%s", err);
		ck_assert_uint_gt(mc_supp_others(s), 100);
		ck_assert_uint_gt(mc_supp_count(s), before);
	}
	mc_supp_free(s);
}
END_TEST

/* ---- the quick view against the frames -------------------------------- */

/* A stack of return addresses, each one frame or, in the program (which
 * has debug information), k of them: inlined ones named by the debug
 * information, the outermost by it and, as its linkage name, by the
 * symbol table.  The quick view has one frame a return address, named
 * by the symbol table alone; may_name looks in the debug strings of its
 * object (every name the debug information gives, and some more). */
struct qstack {
	struct mc_frame_info full[64], quick[16];
	int nfull, nq;
	bool deep[16];
	uintptr_t pcs[16];      /* a quick frame's identity: its names and depth */
	char strings[512];
};

static const struct mc_frame_info *q_frame(void *arg, int i)
{
	struct qstack *q = arg;
	return i < q->nfull ? &q->full[i] : NULL;
}

static const struct mc_frame_info *q_quick(void *arg, int i, bool *deep)
{
	struct qstack *q = arg;
	if (i >= q->nq)
		return NULL;
	*deep = q->deep[i];
	return &q->quick[i];
}

static bool q_may(void *arg, int i, const char *s, size_t len)
{
	struct qstack *q = arg;
	ck_assert(i < q->nq && q->deep[i]);
	return memmem(q->strings, strlen(q->strings), s, len) != NULL;
}

static unsigned rnd(unsigned long long *x, unsigned n)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(*x >> 33) % n;
}

/* One frame, through make()'s "fn/linkage@object@file:line". */
static void set_frame(struct mc_frame_info *f, const char *fn, const char *lk, const char *obj,
		      const char *file, int line)
{
	char desc[512];
	snprintf(desc, sizeof desc, "%s/%s@%s@%s:%d", fn, lk, obj, file, line);
	*f = make(desc)->f[0];
}

static const char *const lib_names[] = { "malloc", "strdup", "_IO_file_doallocate", "setlocale",
					 "__libc_start_main", "_nl_find_locale" };
static const char *const inl_names[] = { "store", "keep", "helper", "xalloc", "strdup_ish" };
/* symbol table name / debug information's name of the program's functions */
static const char *const prog_fns[][2] = { { "main", "main" }, { "keep.part.0", "keep" },
					   { "_Z4walkv", "walk" }, { "run_test", "run_test" },
					   { "xalloc", "xalloc" } };

static void random_stack(struct qstack *q, unsigned long long *x)
{
	memset(q, 0, sizeof *q);
	snprintf(q->strings, sizeof q->strings, "%s", "decl:strdup:printf:");
	int npcs = 1 + (int)rnd(x, 10);
	for (int i = 0; i < npcs && q->nfull < 56; i++) {
		struct mc_frame_info *f = &q->quick[q->nq];
		if (rnd(x, 2)) {
			unsigned li = rnd(x, MC_ARRAY_SIZE(lib_names));
			const char *n = lib_names[li];
			q->pcs[q->nq] = 0x1000 + li;
			set_frame(f, n, n, "/usr/lib/libc.so.6", "", 0);
			q->full[q->nfull++] = *f;
		} else {
			unsigned pi = rnd(x, MC_ARRAY_SIZE(prog_fns));
			const char *const *fn = prog_fns[pi];
			q->pcs[q->nq] = 0x2000 + pi;
			set_frame(f, fn[0], fn[0], "/build/prog", "", 0);
			q->deep[q->nq] = true;
			int k = (int)rnd(x, 3);
			for (int j = 0; j < k; j++) {
				const char *n = inl_names[rnd(x, MC_ARRAY_SIZE(inl_names))];
				set_frame(&q->full[q->nfull++], n, n, "/build/prog", "prog.c", 10 + j);
				strcat(q->strings, n);
				strcat(q->strings, ":");
			}
			set_frame(&q->full[q->nfull++], fn[1], fn[0], "/build/prog", "prog.c", 99);
			strcat(q->strings, fn[1]);
			strcat(q->strings, ":");
		}
		q->nq++;
	}
}

static const char *const patterns[] = {
	"fun:malloc", "fun:*strdup", "fun:strdup*", "fun:store", "fun:keep", "fun:keep*",
	"fun:walk", "fun:_Z4walkv", "fun:main", "fun:*", "fun:m?in", "fun:_nl_find_locale",
	"fun:setlocale", "fun:xalloc", "fun:run_*", "fun:*part*", "fun:printf", "fun:helper",
	"obj:/build/prog", "obj:*libc*", "obj:*", "src:prog.c", "src:prog.c:99", "...", "...",
	"...",
};

START_TEST(quick_view_answers_as_frames)
{
	unsigned long long x = 12345;
	int sure = 0, matched = 0;
	for (int round = 0; round < 200; round++) {
		char text[8192];
		size_t len = 0;
		for (int e = 0; e < 12; e++) {
			len += (size_t)snprintf(text + len, sizeof text - len,
						"{\n e%d\n Memcheck:Leak\n", e);
			int n = 1 + (int)rnd(&x, 5);
			bool plain = false;
			for (int k = 0; k < n; k++) {
				const char *p = patterns[rnd(&x, MC_ARRAY_SIZE(patterns))];
				/* '...' alone is refused (valgrind's rule): one
				 * frame line of another kind last then */
				if (k == n - 1 && !plain && strcmp(p, "...") == 0)
					p = "fun:*";
				plain |= strcmp(p, "...") != 0;
				len += (size_t)snprintf(text + len, sizeof text - len, " %s\n", p);
			}
			len += (size_t)snprintf(text + len, sizeof text - len, "}\n");
		}
		struct mc_supps *s = good(text);
		/* the names of the quick frames kept by address across the
		 * round's stacks, as a region's end keeps them */
		void *names = mc_map_lazy(MC_SUPP_NAMES_BYTES);
		ck_assert_ptr_nonnull(names);
		for (int t = 0; t < 50; t++) {
			static struct qstack q;
			random_stack(&q, &x);
			struct mc_supp_stack frames = { .frame = q_frame, .arg = &q };
			struct mc_supp_stack both = { .frame = q_frame, .arg = &q, .quick = q_quick,
						     .may_name = q_may };
			struct mc_supp_stack cached = both;
			cached.pcs = q.pcs;
			cached.npcs = q.nq;
			cached.names = names;
			long want = mc_supp_match(s, 3, &frames, NULL);
			long got = mc_supp_match(s, 3, &both, NULL);
			ck_assert_int_eq(mc_supp_match(s, 3, &cached, NULL), got);
			if (got != want) {
				for (int i = 0; i < q.nfull; i++)
					fprintf(stderr, "full %d: %s/%s %s %s:%d\n", i, q.full[i].function, q.full[i].linkage, q.full[i].object, q.full[i].file, q.full[i].line);
				for (int i = 0; i < q.nq; i++)
					fprintf(stderr, "quick %d: %s deep %d\n", i, q.quick[i].function, q.deep[i]);
				fprintf(stderr, "strings %s\n", q.strings);
			}
			ck_assert_msg(got == want, "round %d stack %d: quick view %ld, frames %ld\n%s",
				      round, t, got, want, text);
			matched += want >= 0;
			sure++;
		}
		mc_unmap(names, MC_SUPP_NAMES_BYTES);
		mc_supp_free(s);
	}
	ck_assert_int_gt(matched, sure / 10);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("supp", 30);
	tcase_add_test(tc, reads_valgrinds_files);
	tcase_add_test(tc, refuses_bad_entries);
	tcase_add_test(tc, pool_entries);
	tcase_add_test(tc, freeres_marks);
	tcase_add_test(tc, valgrind_lists_marks);
	tcase_add_test(tc, wildcards);
	tcase_add_test(tc, frames_and_dots);
	tcase_add_test(tc, virtual_frame_zero);
	tcase_add_test(tc, generated_entries_read_back);
	tcase_add_test(tc, load_files);
	tcase_add_loop_test(tc, files_through_one_buffer, 0, 2);
	tcase_add_test(tc, quick_view_answers_as_frames);
	return h_run_suite(NULL);
}
