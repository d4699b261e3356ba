/*
 * test_toolnames.c - valgrind's tools name memcheck's own functions with
 * their file and object, where a user profiles a test with the preload
 * (callgrind, as make bench-instr does).  valgrind takes the one section
 * named ".text" as an object's code (coregrind/m_debuginfo/readelf.c):
 * an address outside it gets a symbol's name but no file, line or
 * object, and lib/text-order.ld lays most of memcheck's code out in
 * sections of other names, so callgrind showed "???:rule_in [???]" for
 * them; lib/link/textspan.c gives the shipped library one ".text" header
 * over all of them (GNUmakefile).
 *
 * A leaking program measured under each allocator runs code of every
 * group (the start-up's, the exit's scan and report, the suppressions');
 * callgrind_annotate of the run must name no function without its
 * object ("???:NAME [???]", NAME one of libmemcheck's local functions)
 * and name each of libmemcheck's with its file, but pthread_atfork: the
 * C library's static part (libc_nonshared.a, linked in), built without
 * debug information.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* libmemcheck's own functions, "\nNAME\n" each: its local ones (nm's
 * "t"), which no other object defines, as the allocators' malloc or
 * tcmalloc's mmap (which valgrind names without their object too:
 * gperftools lays them in sections of other names). */
static char *own_functions(void)
{
	struct h_run r;
	const char *const argv[] = { "/usr/bin/nm", "--defined-only", h_lib(), NULL };
	ck_assert_int_eq(h_run(&r, argv, NULL, 0, NULL), 0);
	ck_assert_msg(r.exit_code == 0, "nm: %s\n%s", h_status(&r), r.err);
	char *names = calloc(1, r.out_len + 2);
	ck_assert_ptr_nonnull(names);
	names[0] = '\n';
	char addr[32], type[4], name[512];
	for (const char *line = r.out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (sscanf(line, "%31s %3s %511s", addr, type, name) == 3 && strcmp(type, "t") == 0)
			strcat(strcat(names, name), "\n");
	h_run_free(&r);
	return names;
}

/* Lines of callgrind_annotate's listing: "COST (PCT)  FILE:FN [OBJECT]". */
static void check_listing(const char *label, const char *text)
{
	char *names = own_functions();
	int own = 0, own_named = 0, nameless = 0;
	char *copy = strdup(text), *at = NULL;
	ck_assert_ptr_nonnull(copy);
	for (char *line = strtok_r(copy, "\n", &at); line; line = strtok_r(NULL, "\n", &at)) {
		const char *fn = strstr(line, ")  ");
		if (!fn)
			continue;
		fn += 3;
		const char *obj = strstr(fn, " [???]");
		if (obj && strncmp(fn, "???:", 4) == 0) {
			char key[600];
			snprintf(key, sizeof key, "\n%.*s\n", (int)(obj - fn - 4), fn + 4);
			if (strstr(names, key)) {
				nameless++;
				fprintf(stderr, "%s: no object: %s\n", label, fn);
			}
		}
		if (strstr(fn, "libmemcheck.so")) {
			own++;
			if ((strncmp(fn, "???:", 4) != 0 && strstr(fn, "lib/")) ||
			    strncmp(fn, "???:pthread_atfork ", 19) == 0)
				own_named++;
			else
				fprintf(stderr, "%s: no file: %s\n", label, fn);
		}
	}
	free(names);
	free(copy);
	ck_assert_msg(nameless == 0, "%s: %d of libmemcheck's functions named without their object", label, nameless);
	ck_assert_msg(own >= 20 && own_named == own, "%s: %d of libmemcheck's %d functions named with their file",
		      label, own_named, own);
}

START_TEST(callgrind_names_memchecks_files)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping\n");
		return;
	}
	const char *out = h_tmppath("callgrind.out");
	struct h_run r;
	const char *const argv[] = { vg, "--tool=callgrind", h_env("--callgrind-out-file=%s", out),
				     h_prog("plain_leak_direct"), NULL };
	const char *const env[] = { "MEMCHECK_PROGRAMS=*", h_env("MEMCHECK_REPORT=%s", h_tmppath("report")),
				    NULL };
	ck_assert_int_eq(h_run(&r, argv, env, H_PRELOAD, so), 0);
	ck_assert_msg(r.exit_code == 0, "%s: callgrind: %s\n%s", h_allocator_name(_i), h_status(&r), r.err);
	h_run_free(&r);
	const char *const ann[] = { "/usr/bin/callgrind_annotate", "--threshold=100", "--auto=no", out,
				    NULL };
	ck_assert_int_eq(h_run(&r, ann, NULL, 0, NULL), 0);
	ck_assert_msg(r.exit_code == 0, "callgrind_annotate: %s\n%s", h_status(&r), r.err);
	check_listing(h_allocator_name(_i), r.out);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("toolnames", 120);
	tcase_add_loop_test(tc, callgrind_names_memchecks_files, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
