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
MC_TLS struct mc_thread mc_self; /* forward.c's, not linked here: the guard */

void mc_guard_drain(void)
{
}

static int resident_calls, rss_reads;
static uint64_t rss_now, rss_hwm;

uint64_t mc_resident_bytes(uintptr_t lo, uintptr_t hi)
{
	resident_calls++;
	return (hi - lo) / 2; /* half of each lazy range resident */
}

/* pagemap's, for libmemcheck's own segments: none here (mc_text_len 0). */
int64_t mc_mapped_bytes(int fd, uintptr_t lo, uintptr_t hi)
{
	(void)fd;
	ck_abort_msg("mc_mapped_bytes(%#lx, %#lx) with no segment of memcheck's own",
		     (unsigned long)lo, (unsigned long)hi);
	return -1;
}

int64_t mc_mapped_bytes_file(int fd, uintptr_t lo, uintptr_t hi, int64_t *file)
{
	(void)file;
	return mc_mapped_bytes(fd, lo, hi);
}

uint64_t mc_rss_current(void)
{
	rss_reads++;
	return rss_now;
}

/* statm held open for start-up's window: a descriptor no test opens. */
#define HELD_FD 1000
static int held_reads;

/* The file pages of rss_now: the rest is anonymous. */
static uint64_t rss_file;

uint64_t mc_rss_current_open(int *fd, uint64_t *anon)
{
	*fd = HELD_FD;
	if (anon)
		*anon = rss_now - rss_file;
	return mc_rss_current();
}

/* The window's end reads through what its begin held, once; any other
 * read asks anew (-1). */
uint64_t mc_rss_current_at(int fd, uint64_t *anon)
{
	ck_assert_msg(fd == HELD_FD || fd == -1, "a statm read through descriptor %d", fd);
	if (fd == HELD_FD)
		ck_assert_int_eq(++held_reads, 1);
	if (anon)
		*anon = rss_now - rss_file;
	return mc_rss_current();
}

static unsigned threads_now = 1;

static int status_reads;

uint64_t mc_rss_peak(unsigned *threads, uint64_t *rss)
{
	status_reads++;
	if (threads)
		*threads = threads_now;
	if (rss)
		*rss = rss_now;
	return rss_hwm;
}

static int resets;

bool mc_rss_reset_peak(void)
{
	resets++;
	rss_hwm = rss_now;
	return true;
}

/* getrusage's figure of the mark, kB. */
static int mark_reads;

uint64_t mc_rss_mark_kb(void)
{
	mark_reads++;
	return rss_hwm / 1024;
}

bool mc_memory_room(uint64_t *room)
{
	(void)room;
	return false;
}

/* The process's page faults, not known here: every read of the exit's
 * stretch asks status, as where getrusage fails (the skip where no fault
 * came is test_shortexit's exit_window_from_take). */
uint64_t mc_rss_faults(void)
{
	return UINT64_MAX;
}

#define KIB 1024u
#define NLAZY 4
#define LAZY_LEN (64 * KIB)
/* Twice as many as the lazy ranges: the even ones are apart (a range
 * between each two), the first NLAZY adjoin. */
static char lazy_ranges[2 * NLAZY][LAZY_LEN] __attribute__((aligned(4096)));

/* Start-up with NLAZY lazy ranges apart from each other, then the
 * process's region begins; M of those ranges. */
static uint64_t start_apart(void)
{
	mc_footprint_init(true);
	for (int i = 0; i < NLAZY; i++)
		mc_own_lazy(lazy_ranges[2 * i], LAZY_LEN);
	rss_now = 1024 * KIB;
	mc_prog_peak_restart(NULL, NULL);
	return NLAZY * LAZY_LEN / 2;
}

/* The end of a window of memcheck's own work (a region's end: the scan,
 * the report) measures M once: what the window left (extra) and the next
 * interval's start both come from it.  Measured twice, a process's last
 * report asked mincore of every lazy range twice.  The program's peak
 * after it is the mark less that M, exactly. */
START_TEST(work_end_measures_once)
{
	const uint64_t m_lazy = start_apart();
	mc_own_work_begin(false);
	rss_now += 64 * KIB; /* what the work left that no mapping explains */
	resident_calls = 0;
	mc_own_work_end();
	ck_assert_int_eq(resident_calls, NLAZY);
	ck_assert_uint_eq(mc_own_bytes(), m_lazy + 64 * KIB);
	rss_hwm = 4096 * KIB;
	ck_assert_uint_eq(mc_prog_peak_take(NULL, NULL, NULL), 4096 * KIB - m_lazy - 64 * KIB);
}
END_TEST

/* Lazy ranges that adjoin (mmap places a new mapping right below the one
 * before) are measured in one mincore call, in whatever order they came
 * and after one of them is gone; M is the same sum. */
START_TEST(adjoining_ranges_one_call)
{
	mc_footprint_init(true);
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

/* Once the process is ending (mc_footprint_final), the process region's
 * window ends reading nothing: after its report no figure is asked for.  One
 * asked for all the same (a region begun by a later exit handler) finds
 * the window settled first, as it would have been at its end. */
START_TEST(last_window_settled_when_asked)
{
	const uint64_t m_lazy = start_apart();
	mc_footprint_final();
	mc_own_work_begin(false);
	rss_now += 64 * KIB;
	resident_calls = rss_reads = 0;
	mc_own_work_end_process();
	ck_assert_int_eq(resident_calls, 0);
	ck_assert_int_eq(rss_reads, 0);
	ck_assert_uint_eq(mc_own_bytes(), m_lazy + 64 * KIB);
	ck_assert_int_eq(rss_reads, 1); /* settled once, then not again */
	ck_assert_uint_eq(mc_own_bytes(), m_lazy + 64 * KIB);
	ck_assert_int_eq(rss_reads, 1);
	/* Another region's window, even then, settles at once. */
	mc_own_work_begin(false);
	rss_reads = 0;
	mc_own_work_end();
	ck_assert_int_eq(rss_reads, 1);
}
END_TEST

/* Start-up's window, ended where the process region begins next: the
 * region's begin reads the RSS once and M once for both (a mapping made
 * in between waits with it: the two move together).  What start-up left
 * is memcheck's (extra); the region starts from the program's RSS. */
START_TEST(start_window_settled_by_the_process_region)
{
	rss_now = 1024 * KIB; /* start-up's window's RSS, read at init */
	mc_footprint_init(true);
	/* The window begins from init's reads: neither read again. */
	resident_calls = rss_reads = 0;
	mc_own_work_begin(false);
	ck_assert_int_eq(rss_reads, 0);
	ck_assert_int_eq(resident_calls, 0);
	for (int i = 0; i < NLAZY; i++)
		mc_own_lazy(lazy_ranges[2 * i], LAZY_LEN);
	/* the ranges' resident halves, and 64 KiB that no mapping explains */
	rss_now = 1024 * KIB + (NLAZY + 1) * LAZY_LEN / 2 + 64 * KIB;
	resident_calls = rss_reads = 0;
	mc_own_work_end_start();
	mc_own_lazy(lazy_ranges[1], LAZY_LEN); /* a change of M: nothing read */
	ck_assert_int_eq(resident_calls, 0);
	ck_assert_int_eq(rss_reads, 0);
	uint64_t begin = 0;
	bool whole = true;
	mc_prog_peak_restart(&whole, &begin);
	ck_assert_int_eq(rss_reads, 1);
	/* one measure: the first three ranges adjoin, the other two apart */
	ck_assert_int_eq(resident_calls, NLAZY - 1);
	ck_assert(!whole);
	const uint64_t m = (NLAZY + 1) * LAZY_LEN / 2 + 64 * KIB;
	ck_assert_uint_eq(begin, 1024 * KIB);
	ck_assert_uint_eq(mc_own_bytes(), m);
	/* Nothing more is due. */
	rss_reads = 0;
	mc_own_work_settle();
	ck_assert_int_eq(rss_reads, 0);
}
END_TEST

/* Start-up's window counts only what grew of the anonymous RSS as
 * memcheck's: the file pages it faulted in (the C library's code it ran
 * first, which the program runs too) are the program's from then on, but
 * not yet in the process region's rss_begin, taken before the program
 * ran any.  A later window (a region's end: libdw, its debug
 * information) counts its file pages as memcheck's. */
START_TEST(start_window_counts_anonymous_growth)
{
	rss_now = 1024 * KIB;
	rss_file = 512 * KIB;
	mc_footprint_init(true);
	mc_own_work_begin(false);
	mc_own_lazy(lazy_ranges[0], LAZY_LEN);
	/* the range's resident half, 64 KiB anonymous, 96 KiB of files */
	rss_now += LAZY_LEN / 2 + 64 * KIB + 96 * KIB;
	rss_file += 96 * KIB;
	mc_own_work_end_start();
	uint64_t begin = 0;
	mc_prog_peak_restart(NULL, &begin);
	ck_assert_uint_eq(begin, 1024 * KIB);
	ck_assert_uint_eq(mc_own_bytes(), LAZY_LEN / 2 + 64 * KIB);
	ck_assert_uint_eq(mc_prog_rss(), 1024 * KIB + 96 * KIB);
	/* a report's window: its 32 KiB of files are memcheck's */
	mc_own_work_begin(true);
	rss_now += 32 * KIB;
	rss_file += 32 * KIB;
	mc_own_work_end();
	ck_assert_uint_eq(mc_own_bytes(), LAZY_LEN / 2 + 96 * KIB);
	ck_assert_uint_eq(mc_prog_rss(), 1024 * KIB + 96 * KIB);
}
END_TEST

/* Where no process region begins, the constructor settles it at its
 * end: then as a window's end always was. */
START_TEST(start_window_settled_without_a_region)
{
	rss_now = 1024 * KIB; /* start-up's window's RSS, read at init */
	mc_footprint_init(true);
	mc_own_work_begin(false);
	mc_own_lazy(lazy_ranges[0], LAZY_LEN);
	rss_now = 1024 * KIB + LAZY_LEN / 2 + 64 * KIB;
	mc_own_work_end_start();
	rss_reads = 0;
	mc_own_work_settle();
	ck_assert_int_eq(rss_reads, 1);
	ck_assert_uint_eq(mc_own_bytes(), LAZY_LEN / 2 + 64 * KIB);
}
END_TEST

/* A region's end takes the peak from status, whose read gives the RSS
 * too: the new interval starts from that, with no statm read; inside a
 * window of memcheck's own work status is not read, and statm is. */
START_TEST(take_reads_status_alone)
{
	const uint64_t m_lazy = start_apart();
	rss_now = 1024 * KIB + 512 * KIB;
	rss_hwm = rss_now + 256 * KIB;
	rss_reads = status_reads = 0;
	uint64_t now = 0;
	bool whole = true, alone = false;
	mc_prog_peak_take(&whole, &now, &alone);
	ck_assert_int_eq(status_reads, 1);
	ck_assert_int_eq(rss_reads, 0);
	ck_assert(alone && !whole);
	ck_assert_uint_eq(now, rss_now - m_lazy);
	/* the same figures, as statm would have given them, from a take
	 * made inside a window: status unread, statm read */
	mc_own_work_begin(false);
	rss_reads = status_reads = 0;
	mc_prog_peak_take(&whole, &now, NULL);
	ck_assert_int_eq(status_reads, 0);
	ck_assert_int_eq(rss_reads, 1);
	ck_assert_uint_eq(now, rss_now - m_lazy);
	mc_own_work_end();
}
END_TEST

/* What M grew by in a region, by changes too small to fold (the stack
 * depot, the tables as the program allocates), is not in the program's
 * peak: the mark less M at the region's end, not M at its begin.  It
 * was, and a small program's peak under mimalloc was 88 KiB high. */
START_TEST(take_less_m_growth)
{
	const uint64_t m_lazy = start_apart();
	bool folding = mc_own_before(64 * KIB);
	ck_assert(!folding); /* below the threshold: pending */
	mc_own_after(folding, 64 * KIB);
	rss_now += 100 * KIB + 64 * KIB; /* the program's 100 KiB, memcheck's 64 */
	rss_hwm = rss_now;
	uint64_t now = 0;
	ck_assert_uint_eq(mc_prog_peak_take(NULL, &now, NULL), 1124 * KIB - m_lazy);
	ck_assert_uint_eq(now, 1124 * KIB - m_lazy);
}
END_TEST

/* The program's own release (munmap, mc_footprint_release): the RSS
 * read before it, less M, is the peak where the kernel's mark, raised
 * at the release from per-CPU counts, stands below it (plain_rss_self
 * latelittle under jemalloc: 112 KiB short).  A release under 64 KiB
 * reads nothing. */
START_TEST(release_reads_the_rss_before_it)
{
	const uint64_t m_lazy = start_apart();
	rss_now = 1024 * KIB + 2048 * KIB;
	rss_hwm = rss_now - 112 * KIB; /* the kernel's mark at the release */
	rss_reads = 0;
	mc_footprint_release(256 * KIB);
	ck_assert_int_eq(rss_reads, 1);
	rss_now -= 256 * KIB;
	mc_footprint_release(4 * KIB);
	ck_assert_int_eq(rss_reads, 1);
	ck_assert_uint_eq(mc_prog_peak_take(NULL, NULL, NULL), 3072 * KIB - m_lazy);
}
END_TEST

/* Where nothing reads the RSS figures (mc_footprint_init(false)), a
 * process's life makes none of the reads: start-up's window, the process
 * region's begin, a window of memcheck's own work, a change of M large
 * enough to fold, the region's end.  The kernel's mark is never reset;
 * the figures are unknown, and no peak is handed on. */
START_TEST(unwanted_reads_nothing)
{
	rss_now = 1024 * KIB;
	mc_footprint_init(false);
	mc_own_work_begin(false);
	mc_own_lazy(lazy_ranges[0], LAZY_LEN);
	mc_own_work_end_start();
	uint64_t now = 0;
	bool whole = true, alone = true;
	mc_prog_peak_restart(&whole, &now);
	ck_assert_uint_eq(now, MEMCHECK_UNKNOWN);
	ck_assert(!whole);
	mc_own_work_settle();
	mc_own_work_begin(true);
	mc_own_work_end();
	bool folding = mc_own_before(64 * 1024 * KIB);
	ck_assert(!folding);
	mc_own_after(folding, 64 * 1024 * KIB);
	rss_hwm = 8192 * KIB;
	ck_assert_uint_eq(mc_prog_peak_take(&whole, &now, &alone), 0);
	ck_assert_uint_eq(now, MEMCHECK_UNKNOWN);
	ck_assert(!whole && !alone);
	ck_assert_uint_eq(mc_prog_rss(), MEMCHECK_UNKNOWN);
	mc_own_work_begin_taken();
	mc_own_work_end_process();
	ck_assert_int_eq(rss_reads, 0);
	ck_assert_int_eq(status_reads, 0);
	ck_assert_int_eq(resident_calls, 0);
	ck_assert_int_eq(resets, 0);
	ck_assert_uint_eq(rss_hwm, 8192 * KIB); /* the mark as the kernel keeps it */
}
END_TEST

/* A region begun through the API where nothing wanted the figures at
 * start-up (mc_footprint_want): M is measured then, with every lazy
 * range and known mapping kept meanwhile, and the region's figures are
 * the RSS less that M, its peak the mark less it, as from start-up. */
START_TEST(wanted_late_measures_from_then)
{
	rss_now = 1024 * KIB;
	mc_footprint_init(false);
	for (int i = 0; i < NLAZY; i++)
		mc_own_lazy(lazy_ranges[2 * i], LAZY_LEN);
	const uint64_t m_lazy = NLAZY * LAZY_LEN / 2;
	mc_prog_peak_restart(NULL, NULL);
	rss_now = 2048 * KIB;
	rss_hwm = 4096 * KIB; /* start-up's, never reset */
	mc_footprint_want();
	uint64_t begin = 0;
	bool whole = true;
	mc_prog_peak_take(&whole, &begin, NULL); /* the API region's begin */
	ck_assert(!whole);
	ck_assert_int_eq(resets, 1);
	ck_assert_uint_eq(begin, 2048 * KIB - m_lazy);
	rss_now = 3072 * KIB;
	rss_hwm = 3584 * KIB;
	uint64_t end = 0;
	ck_assert_uint_eq(mc_prog_peak_take(&whole, &end, NULL), 3584 * KIB - m_lazy);
	ck_assert_uint_eq(end, 3072 * KIB - m_lazy);
}
END_TEST

/* The kernel's mark that a reset throws away is kept (rusage.c's
 * getrusage gives it, the process's end raises the mark back to it):
 * read before each reset that ends the program's time, by the fold
 * that reads status where one does (no read more), by getrusage's
 * figure where none does (an outermost region's begin); never the mark
 * of memcheck's own work, nor after the process's end began.  A forked
 * child's mark starts afresh, as bare. */
START_TEST(lost_mark_kept)
{
	start_apart();
	ck_assert_uint_eq(mc_footprint_mark_lost_kb(), 0);
	rss_hwm = 8192 * KIB; /* the program's peak, then a drop */
	rss_now = 2048 * KIB;
	mark_reads = 0;
	mc_prog_peak_take(NULL, NULL, NULL); /* an inner region begins */
	ck_assert_int_eq(mark_reads, 0);
	ck_assert_uint_eq(mc_footprint_mark_lost_kb(), 8192);
	ck_assert_uint_eq(rss_hwm, rss_now); /* reset */
	mc_own_work_begin(false);
	rss_hwm = 16384 * KIB; /* memcheck's own work */
	mc_own_work_end(); /* read to decide the reset, not kept */
	ck_assert_int_eq(mark_reads, 1);
	ck_assert_uint_eq(mc_footprint_mark_lost_kb(), 8192);
	rss_hwm = 12288 * KIB;
	mc_prog_peak_restart(NULL, NULL); /* an outermost region begins */
	ck_assert_int_eq(mark_reads, 2);
	ck_assert_uint_eq(mc_footprint_mark_lost_kb(), 12288);
	mc_footprint_final();
	rss_hwm = 20480 * KIB;
	mc_prog_peak_take(NULL, NULL, NULL);
	ck_assert_uint_eq(mc_footprint_mark_lost_kb(), 12288);
	mc_footprint_after_fork_child();
	ck_assert_uint_eq(mc_footprint_mark_lost_kb(), 0);
}
END_TEST

/* The kernel's mark is reset only where, left as it stands, it could
 * hide a peak of the interval that starts (restart_at): memcheck's
 * tables growing after the program's peak leave it, and a program that
 * reads VmHWM of itself reads it as the kernel keeps it; its rise over
 * where it was left is the program's, less the M of its interval.  A
 * region begun after a drop, and M shrunk below the mark's, reset it.
 * Before, every restart reset it: /tmp/fid27/hwm.c under run -q read
 * VmHWM 11,888 kB, bare 50,104. */
START_TEST(mark_reset_only_where_it_could_hide_a_peak)
{
	rss_hwm = 1024 * KIB;
	resets = 0;
	const uint64_t m_lazy = start_apart();
	ck_assert_int_eq(resets, 0); /* the mark is the RSS at the begin */
	rss_hwm = 8192 * KIB; /* the program's peak, then a drop */
	rss_now = 2048 * KIB;
	bool folding = mc_own_before(1024 * KIB); /* a table grows: folded */
	ck_assert(folding);
	rss_now += 1024 * KIB; /* mapped populated, then after's restart */
	mc_own_after(folding, 1024 * KIB);
	ck_assert_int_eq(resets, 0);
	ck_assert_uint_eq(rss_hwm, 8192 * KIB);
	rss_hwm += 1536 * KIB; /* 512 KiB above the peak, with 1 MiB more of M */
	ck_assert_uint_eq(mc_prog_peak_take(NULL, NULL, NULL), 8704 * KIB - m_lazy);
	ck_assert_int_eq(resets, 1); /* the next region begins 6 MiB below */
	folding = mc_own_before(1024 * KIB); /* the table gives 1 MiB back */
	ck_assert(folding);
	rss_now -= 1024 * KIB; /* unmapped, then after's restart */
	mc_own_after(folding, -(int64_t)(1024 * KIB));
	ck_assert_int_eq(resets, 2); /* the mark would hide 1 MiB */
	ck_assert_uint_eq(mc_prog_peak_take(NULL, NULL, NULL), 2048 * KIB - m_lazy);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("footprint", 0);
	tcase_add_test(tc, work_end_measures_once);
	tcase_add_test(tc, adjoining_ranges_one_call);
	tcase_add_test(tc, last_window_settled_when_asked);
	tcase_add_test(tc, start_window_settled_by_the_process_region);
	tcase_add_test(tc, start_window_counts_anonymous_growth);
	tcase_add_test(tc, start_window_settled_without_a_region);
	tcase_add_test(tc, take_reads_status_alone);
	tcase_add_test(tc, take_less_m_growth);
	tcase_add_test(tc, release_reads_the_rss_before_it);
	tcase_add_test(tc, unwanted_reads_nothing);
	tcase_add_test(tc, wanted_late_measures_from_then);
	tcase_add_test(tc, lost_mark_kept);
	tcase_add_test(tc, mark_reset_only_where_it_could_hide_a_peak);
	return h_run_suite(NULL);
}
