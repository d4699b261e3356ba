/*
 * test_audit26.c - what real suites under memcheck found (session 26's
 * audit: yaml-cpp, libevent, oniguruma).
 *
 * A program linked with -z max-page-size=16384 (libevent's programs;
 * tests/prog/plain_audit26_pagealign): glibc's dl_find_object starts
 * the main program at its text segment, 0x4000 into the file, and
 * memcheck reported the object to libdwfl from there.  Every frame in
 * the program was then read 0x4000 too low: libevent's regress printed
 * tinytest.c's testcase_run_bare_ as regress_listener.c's
 * regress_pick_a_port, and this program's frames had no file and line.
 * The leak's stack must be valgrind's: audit26_leaker at line 18 of the
 * program's file, called by main.
 */
#include <check.h>
#include <string.h>

#include "harness.h"

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

H_CHECK(frames_have_their_lines)
{
	const char *file = "tests/prog/plain_audit26_pagealign.c";
	size_t lost = h_nleaks(rec);
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		const char *kind = h_str(h_json_at(h_json_get(rec, "leaks"), i), "kind");
		if (kind && strcmp(kind, "definitely_lost") == 0)
			lost = i;
	}
	ck_assert_msg(lost < h_nleaks(rec), "%s: no definitely lost record", x->label);
	H_EXPECT_FRAME(rec, lost, 0, "audit26_leaker");
	H_EXPECT_FRAME(rec, lost, 1, "main");
	for (size_t j = 0; j < 2; j++) {
		const char *f = h_frame_str(rec, lost, j, "file");
		ck_assert_msg(ends_with(f, file), "%s: frame %zu's file %s, expected %s", x->label, j,
			      f ? f : "(none)", file);
	}
	ck_assert_msg(h_frame_line(rec, lost, 0) == 18, "%s: frame 0's line %ld, expected 18",
		      x->label, h_frame_line(rec, lost, 0));
}

static const struct h_case cases[] = {
	{ "16 KiB-aligned program: its frames' files and lines",
	  .run = { .prog = "plain_audit26_pagealign", .flags = H_PRELOAD },
	  .record = "process",
	  .want = { { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 48 },
		    { "still_reachable.bytes", 16 } },
	  .check = frames_have_their_lines },
};

int main(void)
{
	TCase *tc = h_tcase("audit26", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
