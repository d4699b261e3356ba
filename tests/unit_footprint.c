/*
 * unit_footprint.c - lib/footprint.c on its own: memcheck's own resident
 * bytes (M) and the program's figures with them taken out.  The system's
 * figures come from the fakes below: mincore's (mc_resident_bytes, which
 * counts its calls), the process's RSS and its high-water mark.
 */
#include <check.h>
#include <stdint.h>

#include "internal.h"
#include "suite.h"

uintptr_t mc_text_lo, mc_text_len; /* 0: libmemcheck's own pages not measured */

static int resident_calls;
static uint64_t rss_now, rss_hwm;

uint64_t mc_resident_bytes(uintptr_t lo, uintptr_t hi)
{
	resident_calls++;
	return (hi - lo) / 2; /* half of each lazy range resident */
}

uint64_t mc_rss_current(void)
{
	return rss_now;
}

uint64_t mc_rss_peak(void)
{
	return rss_hwm;
}

bool mc_rss_reset_peak(void)
{
	rss_hwm = rss_now;
	return true;
}

#define KIB 1024u
#define NLAZY 4
#define LAZY_LEN (64 * KIB)
/* Twice as many as the lazy ranges: the even ones are apart (a range
 * between each two), the first NLAZY adjoin. */
static char lazy_ranges[2 * NLAZY][LAZY_LEN] __attribute__((aligned(4096)));

/* The end of a window of memcheck's own work (a region's end: the scan,
 * the report) measures M once: what the window left (extra) and the next
 * interval's start both come from it.  Measured twice, a process's last
 * report asked mincore of every lazy range twice.  The program's peak
 * after it is the mark less that M, exactly. */
START_TEST(work_end_measures_once)
{
	mc_footprint_init();
	for (int i = 0; i < NLAZY; i++)
		mc_own_lazy(lazy_ranges[2 * i], LAZY_LEN);
	const uint64_t m_lazy = NLAZY * LAZY_LEN / 2;
	rss_now = 1024 * KIB;
	mc_prog_peak_restart(NULL, NULL); /* the process's region begins */
	mc_own_work_begin(false);
	rss_now += 64 * KIB; /* what the work left that no mapping explains */
	resident_calls = 0;
	mc_own_work_end();
	ck_assert_int_eq(resident_calls, NLAZY);
	ck_assert_uint_eq(mc_own_bytes(), m_lazy + 64 * KIB);
	rss_hwm = 4096 * KIB;
	ck_assert_uint_eq(mc_prog_peak_take(NULL, NULL), 4096 * KIB - m_lazy - 64 * KIB);
}
END_TEST

/* Lazy ranges that adjoin (mmap places a new mapping right below the one
 * before) are measured in one mincore call, in whatever order they came
 * and after one of them is gone; M is the same sum. */
START_TEST(adjoining_ranges_one_call)
{
	mc_footprint_init();
	for (int i = NLAZY - 1; i >= 0; i--) /* from the top down, as mmap gives them */
		mc_own_lazy(lazy_ranges[i], LAZY_LEN);
	mc_own_lazy(lazy_ranges[NLAZY + 1], LAZY_LEN); /* apart from them */
	resident_calls = 0;
	ck_assert_uint_eq(mc_own_bytes(), (NLAZY + 1) * LAZY_LEN / 2);
	ck_assert_int_eq(resident_calls, 2);
	/* The second gone: the first alone, then the other two together. */
	ck_assert(mc_own_lazy_remove(lazy_ranges[1], LAZY_LEN));
	resident_calls = 0;
	ck_assert_uint_eq(mc_own_bytes(), NLAZY * LAZY_LEN / 2);
	ck_assert_int_eq(resident_calls, 3);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("footprint", 0);
	tcase_add_test(tc, work_end_measures_once);
	tcase_add_test(tc, adjoining_ranges_one_call);
	return h_run_suite(NULL);
}
