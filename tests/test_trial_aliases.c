/*
 * test_trial_aliases.c - what lmdb's tools found (session 44's trial of
 * real suites): a C library function with two names at one address.
 *
 * glibc defines strdup, strndup, asprintf, tsearch, getdelim (and many
 * more) as __strdup ... with a weak alias of the public name, the two
 * of one address and size in its symbol tables.  valgrind names such a
 * frame by the shorter name (its storage.c's prefersym: the shortest up
 * to any '@', then a versioned one, then strcmp's order): mdb_load's
 * still reachable header copy was "strdup (strdup.c:42)" under valgrind
 * and "__strdup (in libc.so.6)" under memcheck, which took libdw's pick
 * (a global before a weak symbol).  So an entry valgrind's
 * --gen-suppressions wrote (fun:strdup) suppressed nothing under
 * memcheck, and one naming __strdup suppressed under memcheck what
 * valgrind reports.  symtab.c now takes valgrind's name of aliases for
 * C names too, as it did for C++'s.
 *
 * tests/prog/plain_trial44_aliases loses a block through each of five
 * such functions (155 bytes in 5 blocks, as valgrind counts them).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char *const public_names[] = { "strdup", "strndup", "asprintf", "tsearch",
					    "getdelim" };
static const char *const libdw_names[] = { "__strdup", "__strndup", "__asprintf",
					   "___asprintf", "__tsearch", "__getdelim" };

/* Each function's frame named as valgrind names it, none as libdw does. */
H_CHECK(named_as_valgrind)
{
	for (size_t i = 0; i < sizeof public_names / sizeof *public_names; i++)
		ck_assert_msg(h_leaks_mention(rec, public_names[i]), "%s: no frame named %s", x->label,
			      public_names[i]);
	for (size_t i = 0; i < sizeof libdw_names / sizeof *libdw_names; i++)
		ck_assert_msg(!h_leaks_mention(rec, libdw_names[i]), "%s: a frame named %s, valgrind says %s",
			      x->label, libdw_names[i], libdw_names[i] + strspn(libdw_names[i], "_"));
}

/* The entries valgrind 3.19's --gen-suppressions writes for the five
 * records (its names: the frames below the public one are the C
 * library's own, asprintf's __vasprintf_internal). */
static const char valgrind_entries[] =
	"{\n  vg-asprintf\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:__vasprintf_internal\n  fun:asprintf\n  fun:main\n}\n"
	"{\n  vg-strdup\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:strdup\n  fun:main\n}\n"
	"{\n  vg-strndup\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:strndup\n  fun:main\n}\n"
	"{\n  vg-tsearch\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:tsearch\n  fun:main\n}\n"
	"{\n  vg-getdelim\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:getdelim\n  fun:main\n}\n";

/* The same entries with libdw's names: valgrind suppresses nothing with
 * them. */
static const char libdw_entries[] =
	"{\n  dw-asprintf\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:__vasprintf_internal\n  fun:__asprintf\n  fun:main\n}\n"
	"{\n  dw-strdup\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:__strdup\n  fun:main\n}\n"
	"{\n  dw-strndup\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:__strndup\n  fun:main\n}\n"
	"{\n  dw-tsearch\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:__tsearch\n  fun:main\n}\n"
	"{\n  dw-getdelim\n  Memcheck:Leak\n  match-leak-kinds: definite\n  fun:malloc\n"
	"  fun:__getdelim\n  fun:main\n}\n";

/* MEMCHECK_SUPPRESSIONS= a file of text (the shipped files too: they
 * take tcmalloc's own start-up block) */
static void entries_env(struct h_spec *run, const char *tag, const char *text)
{
	static const char *env[2];
	const char *path = h_tmppath(tag);
	FILE *f = fopen(path, "w");
	ck_assert_msg(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
	env[0] = h_env("MEMCHECK_SUPPRESSIONS=%s", path);
	env[1] = NULL;
	run->env = env;
}

/* Each of the five vg- entries used, for one block. */
H_CHECK(each_entry_used)
{
	const struct h_json *list = h_json_get(rec, "suppressions");
	int used = 0;
	for (size_t k = 0; list && k < list->n; k++) {
		const struct h_json *u = h_json_at(list, k);
		const char *name = h_str(u, "name");
		if (name && strncmp(name, "vg-", 3) == 0) {
			ck_assert_msg(h_u64(u, "blocks") == 1, "%s: %s took %s blocks, expected 1",
				      x->label, name, h_fmt(h_u64(u, "blocks")));
			used++;
		}
	}
	ck_assert_msg(used == 5, "%s: %d of the 5 entries used", x->label, used);
}

H_SETUP(valgrinds_file)
{
	entries_env(run, "vg.supp", valgrind_entries);
	return true;
}

H_SETUP(libdws_file)
{
	entries_env(run, "dw.supp", libdw_entries);
	return true;
}

/* Session 46: valgrind names code only by a function's (or object's)
 * symbol with a size; where none covers the address the frame is
 * "???" (its readelf.c).  The dynamic loader's _dl_start_user, an
 * assembly label of no size and no type, ends the stack of everything a
 * library's constructor allocates: memcheck named it, as libdw does. */
H_CHECK(startup_frames_as_valgrind)
{
	int seen = 0;
	for (size_t i = 0; i < h_nleaks(rec); i++)
		for (size_t j = 0; j < h_leak_depth(rec, i); j++) {
			const char *f = h_frame_str(rec, i, j, "function");
			ck_assert_msg(!f || strcmp(f, "_dl_start_user") != 0,
				      "%s: leak %zu frame %zu named _dl_start_user, valgrind says ???",
				      x->label, i, j);
			if (f && strcmp(f, "_dl_init") == 0 && j + 1 < h_leak_depth(rec, i)) {
				const char *next = h_frame_str(rec, i, j + 1, "function");
				const char *obj = h_frame_str(rec, i, j + 1, "object");
				ck_assert_msg(next && strcmp(next, "???") == 0 && obj &&
						      strstr(obj, "ld-linux"),
					      "%s: leak %zu: _dl_init's caller %s (%s), valgrind says ??? "
					      "(in ld-linux-x86-64.so.2)",
					      x->label, i, next ? next : "(none)", obj ? obj : "no object");
				seen++;
			}
		}
	ck_assert_msg(seen > 0, "%s: no record of GObject's start-up blocks", x->label);
}

/* Session 46: the cold part GCC splits out of a function (-O2) has a
 * symbol of its own, lose.cold; valgrind names its frames by it, where
 * memcheck took the DWARF subprogram's name, lose. */
H_CHECK(cold_part_as_valgrind)
{
	ck_assert_msg(h_leaks_mention(rec, "lose.cold"), "%s: no frame named lose.cold", x->label);
	ck_assert_msg(!h_leaks_mention(rec, "lose"), "%s: a frame named lose, valgrind says lose.cold",
		      x->label);
}

/* the corpus's program, by its path (a name with a '/' is taken as one) */
H_SETUP(cold_split_prog)
{
	run->prog = h_prog("corpus/cold_split");
	return true;
}

#define LOSES(...) .run = { .prog = "plain_trial44_aliases", .args = H_LIST("all"), .flags = H_PRELOAD }, \
		   .record = "process", __VA_ARGS__

/* Session 46: with the C library's debug information read
 * (MEMCHECK_SYMBOLIZE_SYSTEM=1), the function really at a frame's
 * address was shown by its DW_AT_name (__strdup, __getdelim; also
 * __re_compile_pattern), where valgrind, which names that function from
 * the symbol table, says strdup, getdelim (re_compile_pattern). */
H_SETUP(system_symbols)
{
	static const char *env[] = { "MEMCHECK_SYMBOLIZE_SYSTEM=1", NULL };
	run->env = env;
	return true;
}

/* Session 46: a C++ thread_local's initialisation function has two names
 * at one address and size, the global _ZTH6tl_ptr and GCC's local
 * __tls_init; valgrind names it __tls_init (it merges local and global
 * aliases alike), memcheck said "TLS init function for tl_ptr". */
H_CHECK(tls_init_as_valgrind)
{
	ck_assert_msg(h_leaks_mention(rec, "__tls_init"), "%s: no frame named __tls_init", x->label);
	ck_assert_msg(!h_leaks_mention(rec, "TLS init function for tl_ptr"),
		      "%s: a frame named \"TLS init function for tl_ptr\", valgrind says __tls_init",
		      x->label);
}

static const struct h_case cases[] = {
	{ "five frames of aliased functions, named as valgrind names them",
	  LOSES(.check = named_as_valgrind),
	  .want = { { "definitely_lost.blocks", 5 }, { "definitely_lost.bytes", 155 },
		    { "verdict", .str = "fail" } } },
	{ "valgrind's entries for them suppress the five",
	  LOSES(.setup = valgrinds_file, .check = each_entry_used),
	  .want = { { "definitely_lost.blocks", 0 }, { "verdict", .str = "pass" } } },
	{ "the C library's debug information read: the five named as valgrind names them",
	  LOSES(.setup = system_symbols, .check = named_as_valgrind),
	  .want = { { "definitely_lost.blocks", 5 }, { "definitely_lost.bytes", 155 },
		    { "verdict", .str = "fail" } } },
	{ "a thread_local's init function named __tls_init, as valgrind names it",
	  .run = { .prog = "cxx_tls_init", .flags = H_PRELOAD }, .record = "process",
	  .check = tls_init_as_valgrind,
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 48 },
		    { "verdict", .str = "fail" } } },
	{ "a library constructor's frames end at ??? in the dynamic loader, as valgrind's",
	  .run = { .prog = "plain_glib_ctor", .flags = H_PRELOAD }, .record = "process",
	  .check = startup_frames_as_valgrind,
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 5 },
		    { "verdict", .str = "fail" } } },
	{ "a function's cold part named by its own symbol, lose.cold, as valgrind names it",
	  .run = { .prog = "corpus/cold_split", .flags = H_PRELOAD }, .record = "process",
	  .setup = cold_split_prog, .check = cold_part_as_valgrind,
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 33 },
		    { "verdict", .str = "fail" } } },
	{ "entries naming libdw's __ names suppress nothing, as under valgrind",
	  LOSES(.setup = libdws_file),
	  .want = { { "definitely_lost.blocks", 5 }, { "definitely_lost.bytes", 155 },
		    { "verdict", .str = "fail" } } },
};

/* valgrind itself, where installed: the entries its --gen-suppressions
 * writes for the program suppress every one of its records under
 * memcheck. */
START_TEST(valgrinds_generated_entries)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; its entries not tried\n");
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = vg, .no_report = true, .text = "",
	       .args = H_LIST("--leak-check=full", "--gen-suppressions=all",
			      h_prog("plain_trial44_aliases"), "all"));
	h_expect_exit(&v, 0);
	const char *path = h_tmppath("gen.supp");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	int n = 0;
	for (char *line = v.r.err, *nl; (nl = strchr(line, '\n')); line = nl + 1)
		if (strncmp(line, "==", 2) != 0) {
			fprintf(f, "%.*s\n", (int)(nl - line), line);
			n += line[0] == '{';
		}
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(n == 5, "valgrind wrote %d entries, expected 5:\n%s", n, v.r.err);
	h_res_free(&v);
	struct h_res m;
	H_EXEC(&m, .prog = "plain_trial44_aliases", .args = H_LIST("all"), .alloc = _i,
	       .flags = H_PRELOAD,
	       .env = H_LIST(h_env("MEMCHECK_SUPPRESSIONS=%s", path)));
	const struct h_json *rec = h_rec(&m, "process");
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 0);
	H_EXPECT_STR(rec, "verdict", "pass");
	h_res_free(&m);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("trial_aliases", 120);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, valgrinds_generated_entries, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
