/*
 * footprint.c - memcheck's own resident memory, and the program's RSS
 * figures with it taken out.
 *
 * memcheck never mallocs for itself, but the pages it maps are resident
 * like any other: with 1 M live blocks the block table alone is ~30 MB,
 * and the kernel's RSS and high-water mark (VmHWM) count it with the
 * program's.  So every RSS figure a region reports is the process's
 * minus M, memcheck's own resident bytes, which this file keeps:
 *
 *   known    mappings made with mc_map (populated when made, so resident
 *            from the start) and the extents other files report as
 *            touched (mc_own_grow: the stack depot, the free rings);
 *   lazy     mappings whose pages are touched in no order (the block
 *            table's first arrays, the stack index, the exit's tail):
 *            pagemap's present bits (mincore(2) where it cannot be
 *            read) say how much of them is resident, each time M is
 *            measured, as they do of libmemcheck's own writable and
 *            code pages;
 *   extra    what report-time work leaves resident that no mapping of
 *            memcheck's accounts for (libdw loaded with dlopen, debug
 *            information it maps): the RSS it added, measured around it.
 *
 * The peak is the hard part: VmHWM is the maximum of program + M over
 * time.  Between two moments where M changes, M is constant, so VmHWM
 * minus M is the program's own peak over that interval.  Each change of
 * M that matters is therefore bracketed: before it, the interval's peak
 * is folded into an accumulator (read VmHWM, subtract M); after it, M is
 * measured again, and the kernel's mark reset (/proc/self/clear_refs)
 * only where it could hide a later peak of the program's (restart_at:
 * M shrank, or a transient of memcheck's made the mark); left, a fold
 * takes only the mark's rise, which is the new interval's.
 * Changes too small to matter are summed in pending and folded with the
 * next that does: the figures are off by at most that sum (threshold()),
 * plus what lazily touched pages added since M was last measured.
 *
 * Inside memcheck's own work (the scan, symbolization: mc_own_work_*)
 * the mark is not folded at all: the interval is memcheck's.
 *
 * libmemcheck's own pages are the exception to "M constant between
 * changes": its code comes in 64 KiB blocks (fault-around) at the first
 * call of a function in each, in the program's time, unbracketed.  A
 * block first run after the program's peak (a wrapper the program first
 * calls late: on_exit from a destructor, prlimit, setuid; memcheck's
 * exit path before the exit's take) is in M at the fold and was not in
 * the mark: taken off with it, the peak read low by it.  So a fold takes
 * off only the pages present at the last read of the mark after a
 * measure (object_seen): those are in any mark made since.  The pages
 * since then are left in the mark where the RSS stands below it (when
 * they came is not known: the peak may read high by those that came
 * before it, never low by those after), and taken off where the RSS
 * stands at its mark (the mark is now, and holds them): code_since.
 * The first thread's start reads the mark after memcheck's thread code
 * first ran (mc_footprint_thread_observe), as every fold before a
 * growth of memcheck's tables does: both come as a program makes its
 * way to its peak.
 *
 * Every reset lowers the mark that the program and its parent read
 * (getrusage's ru_maxrss, wait4's, /usr/bin/time -v's, VmHWM): bare,
 * /tmp/a25a/hostile/h.c's `h large threads` read 66,876 kB of its own,
 * 12,232 kB under `memcheck run`.  So the mark each reset throws away is
 * kept (mark_lost_kb): the highest the kernel's mark stood at in the
 * program's time, read before each reset, never in a window of
 * memcheck's own work (its peaks are memcheck's, which bare has not).
 * rusage.c's getrusage gives the program at least that; at the
 * process's end (mc_footprint_mark_restore) the kernel's mark is raised
 * back to it, for the parent.  Both include M, as a plain preload's
 * mark, which is never reset, always did.  VmHWM in /proc/self/status
 * stays as the last reset left it: where the program begins no region
 * of its own, mostly never reset (restart_at).
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define PAGE 4096u
#define MAX_LAZY 32

struct range {
	uintptr_t lo, len;
};

static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct range lazy[MAX_LAZY];
static int nlazy;
static struct range object[8];  /* libmemcheck's own segments */
static int nobject;
static unsigned object_ro;      /* which of them are read-only (bits) */
static uint64_t object_bytes; /* their mapped bytes when last measured */
/* The file pages of M when last measured: libmemcheck's code and data
 * not yet written, and the pages of memcheck's own views of the
 * program's files that its reads made present (ownread.c); the rest of
 * M is anonymous. */
static uint64_t m_file;
/* /proc/self/pagemap, held open from start-up's first measure to its
 * window's end (as startup_statm), -1 otherwise. */
static int pagemap_fd = -1;
/* The same, held open by memcheck's destructor from its takes to the
 * end of its statistics' reading (mc_prog_peak_exit_open to
 * mc_prog_peak_exit_base): none of the program's code runs in between.
 * The descriptor plus one, 0 while none is held: in .bss, where a
 * variable of .data's moved the small variables a left-out process
 * touches off .data's last page, the one the dynamic linker writes
 * (test_shortexit's left_out_bss_untouched). */
static int exit_pagemap1;
static int64_t known;         /* resident by construction */
static int64_t extra;         /* left by memcheck's own work */
static uint64_t pending;      /* |changes| not yet folded */
static uint64_t m_start;      /* M when the kernel's mark was last reset */
/* object_bytes where the kernel's mark was last read after M was
 * measured (fold_seen, restart_at, mc_prog_peak_exit_base): the code
 * pages first run since are taken as not in the mark (code_since). */
static uint64_t object_seen;
static uint64_t acc;          /* the program's peak since the last take */
/* The kernel's mark where restart_at left it unreset (bytes), 0 where
 * it reset it: a fold takes only a rise above it (fold_seen). */
static uint64_t mark_kept;
/* The mark fold_seen read last (bytes): the restart that follows a fold
 * under the same hold of fp_lock decides from it, without a read more. */
static uint64_t mark_last_read;
static bool resettable = true;
/* The kernel's mark before memcheck's resets, the highest, in kB
 * (getrusage's unit): written under fp_lock, read without a lock by
 * getrusage (a signal handler may call it), 0 while nothing was lost. */
static _Atomic uint64_t mark_lost_kb;
static bool started;
/* Whether the RSS figures are measured at all: from start-up where a
 * report can show them or the program may begin regions of its own
 * (mc_footprint_init's wanted, life.c), else from the first region the
 * API begins (mc_footprint_want).  Until then no /proc file is read or
 * written: no pagemap, statm, status nor clear_refs, 19 system calls of
 * a measured process's start-up and exit (strace -f -c, default
 * options: bench/suite_test 1 96 -> 80, /bin/date 242 -> 226, a scan's
 * stat read added back; 68-76 us of CPU a process, medians of 2,000
 * runs by turns), and the kernel's peak mark is never reset, so the
 * program and its parent see VmHWM and ru_maxrss as the kernel keeps
 * them.  known, lazy and the object's segments are kept all the same
 * (no system call). */
static bool measuring;
/* A thread's start is still to read the mark (mc_footprint_thread_observe):
 * set at the first region's begin (take_restart_at), cleared by the
 * first thread that reads it. */
_Atomic bool mc_fp_thread_observe;
/* The open window of memcheck's own work began measured. */
static bool work_measured;
static bool final;            /* the process is ending: no more resets */
/* The exit's last stretch (see exit_read): armed by the take made once
 * final is set (memcheck's destructor's), disarmed by a window of
 * memcheck's own work after it; the program's RSS at that take, its RSS
 * less M after the destructor's own work (mc_prog_peak_exit_base), and
 * the kernel's mark then (bytes). */
static bool exit_armed;
static uint64_t exit_prog, exit_base, exit_mark;
/* The destructor's own work gave back the read-only pages it faulted
 * (mc_prog_peak_exit_note): the stretch's rise is read from the RSS too. */
static bool exit_gave_back;
/* A forked child's window ran (mc_own_work_begin_fork): see
 * mc_prog_peak_exit_note. */
static bool forked;
/* What the program reached in that stretch (bytes; 0: nothing above). */
static uint64_t exit_peak;
/* The program's RSS at the stretch's end, the on_exit handler's (bytes),
 * where exit_read read it (exit_end_read). */
static uint64_t exit_end;
static bool exit_end_read;
/* The process's page faults (mc_rss_faults) before the exit's last read
 * of status (the take's, exit_base's or exit_read's), and the mark that
 * read gave: see exit_status_read.  UINT64_MAX: none noted. */
static uint64_t exit_faults = UINT64_MAX, exit_faults_mark;
/* Whether a peak was ever taken or restarted (a region began): before
 * that, the interval's mark is nobody's, and the first region restarts it
 * anyway, so the end of start-up's window does not (one clear_refs write
 * and a mincore per lazy range fewer in every measured process). */
static bool peak_used;
/* A window of memcheck's own work ended after the process's end began,
 * and is not settled yet (mc_own_work_end). */
static bool settle_due;
/* That window is start-up's, to be settled with the process region's
 * begin (mc_own_work_end_start). */
static bool settle_at_region;
/* The RSS and M that the last mc_prog_peak_take read, for the window of
 * memcheck's own work that a region's end opens right after it
 * (mc_own_work_begin_taken): valid while no other call of this file came
 * in between (each clears it). */
static bool fresh;
static uint64_t fresh_rss, fresh_m;
/* A lazy range registered or removed since the take set fresh: the
 * pair still gives a difference (its present pages count in both), but
 * a later read of the RSS alone (mc_prog_peak_exit_base) does not pair
 * with the take's M.  A populated mapping moves both by its bytes
 * (mc_own_after keeps the pair as of now). */
static bool fresh_moved;
/* The RSS and M that mc_footprint_init read (in that order, as a
 * window's begin reads them), and nothing has changed M since: start-up's
 * window, which life.c begins right after, starts from them.  M was
 * measured three times in a row there (add_own_object, m_start, the
 * window's begin): two preads of pagemap fewer in every measured
 * process. */
static bool init_fresh;
static uint64_t init_rss, init_anon, init_m_file;
/* statm, held open from start-up's window's begin to its end (the first
 * window: no code of the program's runs in it), -1 otherwise. */
static int startup_statm = -1;
static bool startup_begun;
/* Start-up's window is open or about to be: the first window, whose
 * extra counts anonymous growth only (settle_read). */
static bool startup_open;


/* The resident bytes of ranges r[0..n), sorted by address: ranges that
 * meet (a mapping made right below the one before, as mmap places them;
 * an object's segments) are asked in one call.  A measured /bin/date
 * asked mincore 13 times in a counting run, 4 of them for libmemcheck's
 * four adjoining segments and 2 in each measure for the block table's
 * two first arrays, mapped one against the other.  Through pagemap (fd,
 * /proc/self/pagemap, when it is at hand) where it answers: a pread of
 * pagemap's entries for the block table's 392 first pages took ~2 us
 * here, mincore of the same range ~4.4 us (lazy ranges at a measured
 * process's start-up window's end and at its last region's end).  The
 * premise: every lazy range is memcheck's own private anonymous memory
 * (mc_map_lazy, the exit's tail), of which mincore and pagemap's present
 * bit say the same of every page (the zero page mapped by a read
 * included) but one in the swap cache and unmapped, which mincore calls
 * resident and the RSS does not count: pagemap answers as the RSS. */
static uint64_t resident_runs(const struct range *r, int n, int fd)
{
	uint64_t bytes = 0;
	for (int i = 0; i < n;) {
		uintptr_t lo = r[i].lo, hi = mc_page_round(r[i].lo + r[i].len);
		for (i++; i < n && r[i].lo == hi; i++)
			hi = mc_page_round(r[i].lo + r[i].len);
		int64_t mapped = fd >= 0 ? mc_mapped_bytes(fd, lo, hi) : -1;
		bytes += mapped >= 0 ? (uint64_t)mapped : mc_resident_bytes(lo, hi);
	}
	return bytes;
}

static uint64_t measure_object(int fd);

/* The bytes mapped now of memcheck's views of the program's files
 * (ownread.c: cfi.c reads the call-frame tables there), through pagemap
 * (fd; mincore where it is -1 or a read fails). */
static uint64_t views_bytes(int fd)
{
	struct mc_own_span v[MC_OWN_VIEWS];
	int n = mc_own_views(v, MC_OWN_VIEWS);
	uint64_t bytes = 0;
	for (int i = 0; i < n; i++) {
		int64_t b = fd >= 0 ? mc_mapped_bytes(fd, v[i].lo, v[i].hi) : -1;
		bytes += b >= 0 ? (uint64_t)b : mc_resident_bytes(v[i].lo, v[i].hi);
	}
	return bytes;
}

/* M now.  fp_lock held.  libmemcheck's own pages are measured each time
 * (measure_object): they grow as memcheck's code first runs, in its
 * windows (then not counted in extra) and in the program's time (the
 * malloc wrappers' first calls, a region's end: 100-170 KiB that were
 * counted as the program's when measured once at start).  pagemap, open
 * for them, answers for the lazy ranges too (resident_runs).  whole
 * false: the views and the lazy ranges as last measured (work that
 * touches neither: mc_prog_peak_exit_base). */
static uint64_t views_last, lazy_last;
static __attribute__((noinline)) uint64_t measure_part(bool whole)
{
	int saved = errno;
	int held = pagemap_fd >= 0 ? pagemap_fd : exit_pagemap1 - 1, fd = held;
	if (fd < 0 && nobject) /* linked into the program: no segment, mincore */
		fd = mc_proc_open("pagemap", O_RDONLY);
	uint64_t object_file = measure_object(fd);
	if (whole) {
		views_last = views_bytes(fd);
		lazy_last = resident_runs(lazy, nlazy, fd);
	}
	m_file = object_file + views_last;
	int64_t m = known + extra + (int64_t)(object_bytes + views_last + lazy_last);
	if (fd >= 0 && fd != held)
		mc_sys_close(fd);
	errno = saved;
	return m > 0 ? (uint64_t)m : 0;
}

static uint64_t measure(void)
{
	return measure_part(true);
}

/* libmemcheck's segments: the pages this process maps (pagemap, fd), not
 * mincore's, which counts every page of its code that is in the page
 * cache: the code memcheck's start-up then faulted in was counted twice,
 * here and in the window's extra (the program's figures 70-110 KiB low).
 * Adjoining segments in one pread; mincore where pagemap is unreadable
 * (fd -1, or a pread that failed).  Returns the file pages' bytes of
 * them (0 where mincore answered). */
static uint64_t measure_object(int fd)
{
	if (nobject == 0)
		return 0; /* linked into the program: its pages are the program's */
	int64_t bytes = 0, file = 0;
	for (int i = 0; fd >= 0 && i < nobject && bytes >= 0;) {
		uintptr_t lo = object[i].lo, hi = mc_page_round(object[i].lo + object[i].len);
		for (i++; i < nobject && object[i].lo == hi; i++)
			hi = mc_page_round(object[i].lo + object[i].len);
		/* The file pages only where start-up's window reads them
		 * (settle_read): counting them took ~4 instructions a page,
		 * 340 pages a measure (rss_self_cxx: measure's 13.7 K
		 * instructions 44.8 K, counted at every measure). */
		int64_t f = 0, b = mc_mapped_bytes_file(fd, lo, hi, startup_open ? &f : NULL);
		bytes = b < 0 ? -1 : bytes + b;
		file += f;
	}
	if (fd >= 0 && bytes >= 0) {
		object_bytes = (uint64_t)bytes;
		return (uint64_t)file;
	}
	object_bytes = resident_runs(object, nobject, -1);
	return 0;
}

/* Pending changes fold at this size: 256 KiB, or 1/32 of M when the
 * table is large (whose doublings would otherwise fold at every step). */
static uint64_t threshold(void)
{
	uint64_t t = m_start / 32;
	return t > 256 * 1024 ? t : 256 * 1024;
}

/* The program's peak over the interval since the last reset joins acc.
 * fp_lock held. */
static int work_depth;

/* The kernel's mark, kb, read in the program's time (outside memcheck's
 * windows): kept if it is the highest a reset may throw away.  After
 * final nothing resets the mark any more, and reads there may see
 * memcheck's exit work (a report's window before the next region's
 * take): not kept.  fp_lock held. */
static void mark_note(uint64_t kb)
{
	if (!final && kb > atomic_load_explicit(&mark_lost_kb, memory_order_relaxed))
		atomic_store_explicit(&mark_lost_kb, kb, memory_order_relaxed);
}

uint64_t mc_footprint_mark_lost_kb(void)
{
	return atomic_load_explicit(&mark_lost_kb, memory_order_relaxed);
}

/* mc_rss_peak, with faults, the process's page faults asked before it
 * (mc_rss_faults), noted for exit_status_read: UINT64_MAX, not asked,
 * before the process is ending, where a reset may lower the mark. */
static uint64_t status_read(uint64_t faults, unsigned *threads, uint64_t *rss)
{
	uint64_t hwm = mc_rss_peak(threads, rss);
	exit_faults = hwm ? faults : UINT64_MAX;
	exit_faults_mark = hwm;
	return hwm;
}

/* The kernel's mark and *rss in the exit's stretch (exit_base's and
 * exit_read's reads, which follow the take's within some tens of
 * microseconds: memcheck's own work and the other objects' exit code
 * between them).  Where the process took no page fault since the last
 * read of status once it was ending (getrusage, asked before that read:
 * a fault during the read moves the count), no page came in and the
 * mark stands as read (nothing resets it once final); the RSS, which
 * frees and the give-back may have lowered without a fault, is read
 * from statm, the same counter as status's VmRSS.  A status read costs
 * 10.3 us of CPU here, statm 4.3, getrusage 0.5 (loops of 3,000): a
 * passing measured process's exit read status three times, now once. */
static uint64_t exit_status_read(uint64_t *rss)
{
	uint64_t faults = mc_rss_faults();
	if (faults != UINT64_MAX && faults == exit_faults) {
		*rss = mc_rss_current();
		return exit_faults_mark;
	}
	return status_read(faults, NULL, rss);
}

/* Of M (m, just measured), what is not to be taken off the kernel's
 * mark hwm, read with the RSS rss just before m: libmemcheck's code and
 * data pages first touched since the mark was last read after a
 * measure (object_seen, moved to now), where the mark stands above the
 * RSS.  Fault-around maps the code in 64 KiB blocks at the first call
 * of a function in each, and a wrapper the program first calls after
 * its peak (on_exit from a destructor, close_range, setuid, prlimit...)
 * or memcheck's own exit path before the exit's take adds blocks to M
 * that were not resident when the mark was made.  Taken off the mark
 * with the rest of M, they read the program's peak low by as much
 * (test_rss_self's threads row under jemalloc: 15,932 KiB against the
 * program's own 16,356, one block of on_exit's; its late row, 16 MiB
 * freed and then five such calls: -224 KiB under glibc, -212 under
 * jemalloc).  When they came, before the mark or after, is not known;
 * what is: pages present at a read of the mark are in every mark made
 * after it (a rise past that read takes them off: fold_seen's base),
 * and where the RSS stands at its mark (rss == hwm, one read of status
 * gives both) the mark is now, with every page present now in it (the
 * late row under mimalloc and tcmalloc, which keep the 16 MiB: the late
 * blocks raised the mark).  Elsewhere the pages since the last read are
 * left in the mark, the program's: its peak may read high by code that
 * memcheck first ran between that read and the program's peak (a fold
 * at each growth of its tables reads it, as the program allocates
 * towards its peak), not low.  What stays: a program that freed less
 * than such blocks' bytes after its peak, which their faults then
 * raised the mark above, reads low by what it freed (less than the
 * blocks; the mark, one number, cannot tell it from a program that
 * freed nothing).  fp_lock held. */
static __attribute__((noinline)) uint64_t code_since(uint64_t m, uint64_t rss, uint64_t hwm)
{
	uint64_t since = object_bytes > object_seen ? object_bytes - object_seen : 0;
	object_seen = object_bytes;
	if (rss >= hwm)
		return 0;
	return since < m ? since : m;
}

/* *threads (if not NULL): the process's threads at the read, 0 when
 * none was made; *rss (if not NULL): the RSS the same read gave, or
 * false when none was made. */
/* *m: M, measured here after the read, so that libmemcheck's code the
 * read ran for the first time is in both (measured before it, a 64 KiB
 * block of rss.c's was in the RSS alone, the program's: rss_begin under
 * mimalloc, perf -e page-faults -d).  What M grew by since m_start is
 * taken as grown before the mark was reached: libmemcheck's code runs
 * first at the program's first calls into it, and its tables grow (by
 * changes too small to fold, pending) as the program allocates towards
 * its peak.  Not subtracted, /tmp/rssp2's peak under mimalloc was 88 KiB
 * of the stack depot's and the tables' pages high.  But libmemcheck's
 * own pages first touched since the mark was last read are not taken
 * off (code_since): present at the last read, they are in any rise. */
static bool fold_seen(unsigned *threads, uint64_t *rss, uint64_t *m)
{
	if (threads)
		*threads = 0;
	mark_last_read = 0; /* not read: a restart after reads it */
	if (work_depth) {
		*m = measure();
		return false; /* the mark since the window opened is memcheck's */
	}
	uint64_t rss_read;
	uint64_t hwm = status_read(final ? mc_rss_faults() : UINT64_MAX, threads, &rss_read);
	if (rss)
		*rss = rss_read;
	*m = measure();
	mark_last_read = hwm;
	mark_note(hwm / 1024);
	uint64_t at_mark = *m - code_since(*m, rss_read, hwm);
	uint64_t base = m_start + (at_mark > m_start ? at_mark - m_start : 0);
	/* Only a rise is this interval's where the last restart left the
	 * mark as it stood (mark_kept: restart_at). */
	if (hwm > mark_kept && hwm > base && hwm - base > acc)
		acc = hwm - base;
	return rss && *rss;
}

/* The same before a change of M: M measured now, as a take does.  With
 * m_start's M, what the program's calls had made resident of memcheck's
 * code and tables since (136 KiB in test_rss_self's C++ program under
 * mimalloc, folded before its first table's growth) was the program's:
 * its peak 136 KiB above its end, 264 KiB above its own peak (now 128,
 * as its end).  A pread of pagemap and a mincore a run more at each fold
 * (the C++ program: two folds, 297 -> 305 system calls under glibc). */
static void fold(void)
{
	if (work_depth)
		return; /* fold_seen's answer, without measuring */
	uint64_t m;
	fold_seen(NULL, NULL, &m);
}

/* A new interval: M is m (measured by the caller just before) or, where
 * m is 0, measured; from: the program's peak it starts with (acc after
 * a fold, the RSS now less M at a region's bound).  The kernel's mark is
 * reset only where, left as it stands, it could hide a peak of the
 * interval's: where it lies above from + M by more than MARK_SLACK
 * (memcheck's M shrank since the mark was made, a transient of its own
 * or of its work made it, the program was higher before a region
 * began).  Else it is left, and a fold takes only its rise over
 * mark_kept, made in this interval with this M: exact.  Every reset
 * lowers the mark the program reads of itself in /proc/self/status
 * (VmHWM, which no wrapper can mend: rusage.c mends getrusage), so a
 * process whose figures are measured and that never opens a region of
 * its own (memcheck run -q, MEMCHECK_REPORT) resets it only where
 * memcheck's own memory would otherwise hide the program's peak:
 * /tmp/fid27/hwm.c (48 MiB written and unmapped, then four threads of
 * 20,000 blocks: the block table and free rings grow) under run -q
 * made 17 resets and read VmHWM 11,888 kB, 50,104 kB bare; now 0 and
 * 50,8xx kB (memcheck's own pages in the mark, as a plain preload's).
 * read_mark: the mark read here is the program's (mark_note): false
 * where a fold read it just before (fold_seen) or where it is
 * memcheck's (a window's end).  fp_lock held. */
#define MARK_SLACK (64u << 10)
static void restart_at(uint64_t m, bool read_mark, uint64_t from, uint64_t mark)
{
	m_start = m ? m : measure();
	object_seen = object_bytes; /* the mark read or reset below */
	pending = 0;
	mark_last_read = 0; /* a later restart's mark is read anew */
	if (!resettable || final)
		return;
	if (!mark) { /* not read by a fold just before: one system call */
		mark = mc_rss_mark_kb() * 1024;
		if (read_mark && !work_depth)
			mark_note(mark / 1024);
	}
	if (mark && mark <= from + m_start + MARK_SLACK) {
		mark_kept = mark;
		return;
	}
	if (!mc_rss_reset_peak())
		resettable = false; /* the mark then covers the whole process */
	mark_kept = 0; /* every mark from here on is the interval's */
}

static void restart(void)
{
	restart_at(0, false, acc, mark_last_read); /* mc_own_before folded */
}

static void work_settle(void);
static void exit_read(void);

/* fp_lock taken, and a window's end settled if it is due (see
 * mc_own_work_end), for everything that reads or changes M after it. */
static void fp_enter(void)
{
	pthread_mutex_lock(&fp_lock);
	if (settle_due) {
		settle_due = false;
		settle_at_region = false;
		work_settle();
	}
}

/* fp_lock taken for a change of M (a mapping made or gone, a range
 * touched lazily): start-up's window end may wait for the process
 * region's begin still, since the RSS and M it reads move together
 * with such a change.  Another window's end is settled first. */
static void fp_enter_change(void)
{
	pthread_mutex_lock(&fp_lock);
	init_fresh = false;
	if (settle_due && !settle_at_region) {
		settle_due = false;
		fresh = false;
		work_settle();
	}
}

/* Where libmemcheck's small variables begin, after its large arrays, to
 * the end of its writable segment (lib/bss-layout.sh); 0 (a weak
 * reference) when the link did not lay .bss out so (libmemcheck.a). */
extern char mc_bss_small_lo[] __attribute__((weak, visibility("hidden")));

/* Register the writable and code segments of libmemcheck itself (or of
 * the program, when memcheck is linked in from libmemcheck.a: then its
 * pages are the program's, and nothing is added). */
static void add_segment(uintptr_t lo, uintptr_t hi, bool writable, void *arg)
{
	(void)arg;
	if (nobject < (int)MC_ARRAY_SIZE(object)) {
		if (!writable)
			object_ro |= 1u << nobject;
		object[nobject++] = (struct range){ lo, hi - lo };
	}
}

static void add_own_object(void)
{
	mc_own_image_each(add_segment, NULL);
}

static const struct mc_map_hooks hooks = {
	.before = mc_own_before,
	.after = mc_own_after,
	.lazy = mc_own_lazy,
	.lazy_remove = mc_own_lazy_remove,
};

/* The objects marked MC_START_TOUCHED, bounded by lib/bss-layout.sh's
 * linker script (weak: 0 when linked without it, libmemcheck.a). */
extern struct mc_start_span mc_start_spans_lo[] __attribute__((weak, visibility("hidden")));
extern struct mc_start_span mc_start_spans_hi[] __attribute__((weak, visibility("hidden")));

/* Where lib/bss-layout.sh put the block table's shards (from
 * mc_bss_run_lo, just before the small variables) and where the small
 * variables end (mc_bss_small_hi, where the arrays whose first slots
 * start-up writes follow): 0 (weak) when linked without it. */
extern char mc_bss_run_lo[] __attribute__((weak, visibility("hidden")));
extern char mc_bss_small_hi[] __attribute__((weak, visibility("hidden")));

static void add_page_range(struct range *pages, int *n, int max, uintptr_t p, size_t len)
{
	if (*n >= max)
		return;
	uintptr_t lo = p & ~(uintptr_t)(PAGE - 1);
	struct range r = { lo, mc_page_round(p + len) - lo };
	int i = (*n)++;
	for (; i > 0 && pages[i - 1].lo > r.lo; i--)
		pages[i] = pages[i - 1];
	pages[i] = r;
}

/* libmemcheck's small variables, which a measured process nearly all
 * touches, the block table's shards where it tracks, and the pages of
 * the objects marked MC_START_TOUCHED (the first slots of fault.c's
 * levels, region.c's regions, vgmode.c's vg_regions and ownmap.c's
 * own-mapping list, each at the head of a large array of its own):
 * made resident before they are measured as memcheck's own, neighbours
 * in one call, not faulted in one by one (measured here: a fault 14 us,
 * a one-page MADV_POPULATE_WRITE 3 us, a page in a run of them 1.3 us).
 * lib/bss-layout.sh lays the shards, the small variables and two of the
 * arrays out together: three calls (the run, levels', own's). */
#define MC_BSS_SMALL_MAX (128u * 1024)
static void populate_small_bss(bool tracking)
{
	extern char _end[] __attribute__((visibility("hidden")));
	uintptr_t lo = (uintptr_t)mc_bss_small_lo;
	uintptr_t hi = mc_bss_small_hi ? (uintptr_t)mc_bss_small_hi : (uintptr_t)_end;
	/* The first thread's group of the block table's shards, where it
	 * will track and they lie just below (lib/bss-layout.sh). */
	if (tracking && mc_bss_run_lo && (uintptr_t)mc_bss_run_lo < lo)
		lo = (uintptr_t)mc_bss_run_lo;
	/* Bounded: objects built without -fdata-sections leave the large
	 * arrays among them, and all of .bss is 1 MiB.  The bound is
	 * lib/bss-layout.sh's MC_BSS_SMALL_MAX, which the link asserts: at
	 * 64 KiB here and unchecked there, the small variables and the
	 * shards grew to 64.1 KiB (f19e58e) and no measured process
	 * populated them any more, 17 page faults of ~14 us where one call
	 * made them present (perf trace -F all, a measured /bin/date). */
	if (!mc_bss_small_lo || !mc_text_len || lo >= hi || hi - lo > MC_BSS_SMALL_MAX)
		return;
	struct range pages[16];
	int n = 0;
	add_page_range(pages, &n, (int)MC_ARRAY_SIZE(pages), lo, hi - lo);
	for (struct mc_start_span *s = mc_start_spans_lo; s && s < mc_start_spans_hi; s++)
		add_page_range(pages, &n, (int)MC_ARRAY_SIZE(pages), (uintptr_t)s->p, s->len);
	/* Runs one page apart in one call, the page between them with them:
	 * a page of a populate costs less than a call (above).  The small
	 * variables had grown until vg_regions, just after them, spanned
	 * three pages, regions' first slot on the third (lib/bss-layout.sh):
	 * two calls where one was meant. */
	for (int i = 0; i < n;) {
		uintptr_t from = pages[i].lo, to = from + pages[i].len;
		for (i++; i < n && pages[i].lo <= to + PAGE; i++)
			if (pages[i].lo + pages[i].len > to)
				to = pages[i].lo + pages[i].len;
		mc_populate_static((void *)from, to - from);
	}
}

/* The very first of memcheck's start-up, before any of its small
 * variables is read (a read first maps the zero page, which the populate
 * then copies: a page fault more; the block table's reservation read one
 * in every tracking process).  tracking: the block table will be made
 * (its shards populated too). */
void mc_footprint_populate(bool tracking)
{
	populate_small_bss(tracking);
}

/* The heads of the large arrays a process that measures its RSS
 * figures writes (lib/bss-layout.sh's MEASURED: the pagemap entries,
 * the start pages' bits, the views, the lent frames' first page), in
 * one call: each was a page fault of its own (short43).  0 (weak) when
 * linked without the layout. */
extern char mc_bss_measured_lo[] __attribute__((weak, visibility("hidden")));
extern char mc_bss_measured_hi[] __attribute__((weak, visibility("hidden")));

static __attribute__((noinline)) void populate_measured_bss(void)
{
	uintptr_t lo = (uintptr_t)mc_bss_measured_lo, hi = (uintptr_t)mc_bss_measured_hi;
	if (lo && hi > lo && hi - lo <= 8 * PAGE)
		mc_populate_static((void *)lo, hi - lo);
}

/* First of memcheck's start-up after mc_footprint_populate: every
 * mapping after it is counted.  wanted: the RSS figures are measured
 * from here (see measuring). */
void mc_footprint_init(bool wanted)
{
	pthread_mutex_lock(&fp_lock);
	if (!started) {
		started = true;
		measuring = wanted;
		if (wanted)
			populate_measured_bss();
		if (wanted)
			mc_own_read_on(); /* ownread.c records from here */
		if (wanted && mc_text_len) /* libmemcheck's own pages to measure */
			pagemap_fd = mc_proc_open("pagemap", O_RDONLY);
		add_own_object();
		if (wanted)
			mc_start_pages_note(pagemap_fd, false);
		/* start-up's window's RSS (its statm kept open to its end) */
		if (wanted) {
			startup_begun = true;
			startup_open = true;
			/* M measured once before the first pair of reads:
			 * its code runs here first, and a block of it that
			 * came in between the RSS's read and M's was in one
			 * and not the other, where the window's end finds it
			 * in both (rss_begin 64 KiB low under glibc against
			 * the bare program's RSS at its entry point). */
			measure();
			init_rss = mc_rss_current_open(&startup_statm, &init_anon);
		}
		if (wanted) {
			m_start = measure();
			init_m_file = m_file;
			init_fresh = true;
		}
		mc_map_hooks_set(&hooks);
	}
	pthread_mutex_unlock(&fp_lock);
}

/* A region is begun through the API: its figures are measured, from now
 * on if they were not (a preloaded program that reaches memcheck_begin
 * without being linked with libmemcheck: a weak reference, dlsym).  M
 * is measured now (known and the lazy ranges were kept all along); what
 * start-up's window left outside memcheck's mappings (extra) was not
 * measured, and the program's figures are that much high: see
 * memcheck(7).  The region's take then restarts the kernel's mark. */
void mc_footprint_want(void)
{
	fp_enter();
	if (!measuring) {
		measuring = true;
		mc_own_read_on();
		/* Not started: a preloaded program the programs rule left
		 * out, which only forwards, reached memcheck_begin through a
		 * weak reference.  memcheck mapped nothing of its own, and
		 * its figures are the process's, as they always were. */
		if (started)
			m_start = measure();
		pending = 0;
	}
	pthread_mutex_unlock(&fp_lock);
}

/* The first thread's start (threadstart.c), after memcheck's code for
 * it ran: the interval's peak so far folded, with the mark read after
 * that code's pages came in (code_since).  A thread is where a program
 * often makes its peak, and its start runs libmemcheck's thread code
 * (group 1t, 36-88 KiB) for the first time: left to the exit's fold,
 * which leaves in the mark the pages first run since the last read (the
 * thread's start before the peak, its end and the exit after it), they
 * were the program's, test_rss_bare's "peak in a thread that exited"
 * 26,204 KiB under glibc, its exact peak 26,168 (main, which took them
 * all off: 26,116).  One status read and one pagemap read a threaded
 * measured process. */
void mc_footprint_thread_observe(void)
{
	if (!atomic_exchange_explicit(&mc_fp_thread_observe, false, memory_order_relaxed))
		return;
	fp_enter();
	if (measuring && !final) {
		fresh = false;
		fold();
		mark_last_read = 0; /* no restart follows */
	}
	pthread_mutex_unlock(&fp_lock);
}

/* ---- libmemcheck's code present before the program's peak ------------ */

/* The live bytes at which it is made so (see mc_footprint_heap_grown);
 * 0: not due (not measured, done, or not yet armed by the first
 * region's take). */
#define HEAP_AT (4u << 20)
uint64_t mc_fp_heap_at1;

/* The live heap has reached HEAP_AT (account.c, at a new peak of the
 * live bytes): the rest of libmemcheck's code and read-only data is
 * made present now, with the kernel's mark read just before (fold) and
 * M measured just after, so that no block of it comes in after the
 * program's peak.  A block that comes in after the peak (a wrapper the
 * program first calls late: prlimit, setuid, at_quick_exit; memcheck's
 * own exit path) is M that the mark made at the peak never held: where
 * the program gave back less than such blocks after its peak, their
 * faults raised the mark above it, to where the RSS stands, and the
 * exit's fold, which then takes them off with the rest of M (the mark
 * is now: code_since), read the peak low by what the program gave back
 * (plain_rss_self latelittle: 256 KiB unmapped, then late's calls).
 * Here nothing can move the figures: the fold before takes the
 * interval's peak as it stood; the pages then raise the RSS and M
 * alike, and the mark no more than to the RSS now, whose program part
 * the fold already holds; they are in every mark made after (object_seen
 * moved to them).  Once a process, where its live heap first passes
 * 4 MiB on its way to its peak: a process that small pays nothing.
 * Cost: see doc/costs.md (peak50).  The caller is an allocation's
 * countdown (account.c sample_due), inside memcheck's guard: a signal
 * handler's allocation that interrupts memcheck's own work, where
 * fp_lock may be held, is forwarded, never counted down (and
 * pthread_mutex_trylock was a 64 KiB block of the C library's that a
 * program under glibc never maps: rss_end +64 KiB). */
void mc_footprint_heap_grown(void)
{
	fp_enter();
	mc_fp_heap_at1 = 0;
	if (measuring && !final && !work_depth && nobject) {
		fresh = false;
		fold();
		mark_last_read = 0; /* no restart follows */
		/* the segments start-up noted: asking the headers again
		 * (mc_own_image_each) ran getauxval, a 64 KiB block of the
		 * C library's that the program never mapped under glibc
		 * (test_rss_self's late rows: rss_end +64 KiB) */
		for (int i = 0; i < nobject; i++)
			if (object_ro & 1u << i)
				mc_populate_read((const void *)object[i].lo, object[i].len);
		measure();
		object_seen = object_bytes;
	}
	pthread_mutex_unlock(&fp_lock);
}

/* ---- the program's own releases -------------------------------------- */

/* Set from the first region's take of a measured process to its end
 * (final): mappings.c's munmap then tells of the program's releases
 * (mc_footprint_release). */
bool mc_fp_releases;

/* The program is about to unmap a mapping of its own (mappings.c's
 * munmap, before the system call): the RSS now less M joins the
 * interval's peak.  The kernel raises its mark (VmHWM) only at a
 * release, from RSS counters that are per CPU and read without folding
 * (get_mm_rss), so the mark it takes there may stand up to a batch a
 * counter a CPU below the RSS just before: statm sums them exactly.
 * plain_rss_self latelittle (16 MiB written and kept, 256 KiB of its own
 * mapping unmapped after the peak), address randomization off, under
 * jemalloc: VmRSS at the peak 21,520 KiB, the kernel's mark after the
 * unmap 21,408 (the bare run's alike: 20,476 against 20,380), so the
 * take's fold read the peak 112 KiB low (20,364 against the program's
 * 20,476; doc/costs.md, r-session58-foot58).  Once a release, where
 * the program releases at least RELEASE_MIN (a smaller one moves the
 * RSS by less than a fault-around block): a statm read and a measure
 * of M.  The allocators' own releases through this wrapper (a
 * mimalloc segment unmapped) are read the same; glibc's free unmaps
 * through the C library's internal call and madvise is not wrapped:
 * those marks stay the kernel's.  Nothing with the guard up (mc_in_hook):
 * memcheck's own work, which may hold fp_lock, raises it, and a
 * handler that interrupts it runs with it up. */
#define RELEASE_MIN (64u << 10)
/* The last release's read: its RSS, acc after it and the changes of M
 * told by then (m_told).  An RSS no higher than that read's, with acc
 * and the told changes the same, cannot raise acc: M only grows
 * untold (code and lazy pages faulted in), so the program's part is no
 * larger.  Then statm alone is read (3 system calls), not M measured
 * too (10: pagemap opened, five preads): a program that maps and
 * unmaps a 1 MiB buffer 20,000 times with its RSS measured took 2.0-3.8
 * s where it took 0.5-1.0 s without the release reads (doc/costs.md,
 * r-session58-foot58). */
static uint64_t rel_rss, rel_acc, rel_told, m_told;
void mc_footprint_release(size_t len)
{
	if (len < RELEASE_MIN || mc_in_hook)
		return;
	mc_guard_enter(); /* a signal handler's calls meanwhile are forwarded */
	fp_enter();
	if (measuring && !final && !work_depth && peak_used) {
		uint64_t rss = mc_rss_current();
		if (rss > rel_rss || acc != rel_acc || m_told != rel_told) {
			fresh = false;
			uint64_t m = measure();
			if (rss > m && rss - m > acc)
				acc = rss - m;
			rel_rss = rss;
			rel_acc = acc;
			rel_told = m_told;
		}
	}
	pthread_mutex_unlock(&fp_lock);
	mc_guard_leave();
}

bool mc_footprint_measuring(void)
{
	return measuring;
}

/* Under valgrind with memcheck bypassed (life.c: valgrind's malloc in
 * every object): the process's RSS is valgrind's, its heap and shadow
 * memory with the program's (rss_end 95 MB for plain_exit_churn, 2 MB
 * bare), not a figure of the program's, in a record whose other figures
 * are unknown.  None is read from here: each read of /proc at the exit
 * also handed valgrind's lock to the threads still running, the exiting
 * one waiting out their time slices (doc/costs.md, vg47). */
void mc_footprint_off(void)
{
	pthread_mutex_lock(&fp_lock);
	measuring = false;
	pthread_mutex_unlock(&fp_lock);
}

/* ---- changes of M ----------------------------------------------------- */

/* A change of M told here (a populated mapping of memcheck's made or
 * gone: resident by construction) moves the RSS by as much as M, so a
 * take's fresh RSS and M, each moved by it, still begin the window
 * (fresh): only a fold (its restart) or a settled window makes them
 * stale.  The peak's snapshot maps its array between the process
 * region's take and its window's begin (mc_peak_end): with a JSON
 * report, that window read statm and measured M again at every exit,
 * 10 system calls. */
bool mc_own_before(size_t bytes)
{
	fp_enter_change();
	/* Inside a window of memcheck's own work the mark is not folded,
	 * and the window's end measures everything again. */
	if (!measuring || work_depth || pending + mc_page_round(bytes) < threshold()) {
		pthread_mutex_unlock(&fp_lock);
		return false;
	}
	fresh = false;
	if (settle_due) { /* start-up's, before the fold */
		settle_due = settle_at_region = false;
		work_settle();
	}
	fold();
	return true; /* fp_lock stays held until mc_own_after */
}

void mc_own_after(bool folding, int64_t bytes)
{
	if (!folding)
		fp_enter_change();
	known += bytes;
	m_told++;
	if (folding) {
		fresh = false;
		restart();
	} else {
		/* resident by construction: the RSS moved by as much */
		fresh_rss += (uint64_t)bytes;
		fresh_m += (uint64_t)bytes;
		pending += (uint64_t)(bytes < 0 ? -bytes : bytes);
	}
	pthread_mutex_unlock(&fp_lock);
}

/* A lazy range's pages count in M as they count in the RSS, when
 * present (measure): neither its registration nor its removal moves
 * one without the other, and fresh holds; one counted whole (a bound,
 * past MAX_LAZY) moves M alone. */
void mc_own_lazy(const void *p, size_t len)
{
	fp_enter_change();
	fresh_moved = true;
	m_told++;
	if (nlazy < MAX_LAZY) {
		/* Kept sorted by address, for resident_runs. */
		int i = nlazy++;
		for (; i > 0 && lazy[i - 1].lo > (uintptr_t)p; i--)
			lazy[i] = lazy[i - 1];
		lazy[i] = (struct range){ (uintptr_t)p, len };
	} else {
		fresh = false;
		known += (int64_t)mc_page_round(len); /* counted whole: a bound */
	}
	pthread_mutex_unlock(&fp_lock);
}

bool mc_own_lazy_remove(const void *p, size_t len)
{
	bool found = false;
	fp_enter_change();
	m_told++;
	for (int i = 0; i < nlazy; i++) {
		if (lazy[i].lo == (uintptr_t)p) {
			memmove(&lazy[i], &lazy[i + 1], (size_t)(--nlazy - i) * sizeof lazy[0]);
			found = fresh_moved = true;
			break;
		}
	}
	pthread_mutex_unlock(&fp_lock);
	(void)len;
	return found;
}

/* ---- memcheck's own work ---------------------------------------------- */

/* One window for all threads' work: nested or overlapping calls (a
 * heap error reported while another thread ends a region) extend it. */
static uint64_t work_rss, work_m;
/* The window's anonymous RSS and M's file pages at its begin, and
 * whether it is start-up's (settle_read). */
static uint64_t work_anon, work_m_file;
static bool work_startup;
/* What start-up's window left in file pages (since startpages.c's
 * give-back, those of writable segments: the C library's data it read), not in
 * extra: the program's from the moment it
 * runs, but not yet at the process region's begin, which comes right
 * after the window with none of the program's code run (at main's
 * start, bare, those pages were not mapped: rss_begin 248 KiB high
 * under glibc with them, libc's code +184, its read-only data +64 by
 * smaps).  mc_prog_peak_restart's settled begin leaves them out. */
static uint64_t startup_file;
static void work_begin(bool fold_first, bool taken)
{
	fp_enter();
	exit_armed = false; /* the mark from here on may be memcheck's */
	/* Folded before the window opens: inside it (work_depth), fold
	 * does nothing, and a heap error's report folded nothing so, the
	 * program's peak before it lost at the window's end's reset. */
	if (work_depth == 0 && measuring && fold_first)
		fold();
	if (work_depth++ == 0 && (work_measured = measuring)) {
		work_startup = startup_open;
		if (taken && fresh) {
			/* The take just read both: reading statm and
			 * mincore again gave the same figures, 15-20 us
			 * later. */
			work_rss = fresh_rss;
			work_m = fresh_m - (uint64_t)extra;
		} else if (init_fresh) {
			work_rss = init_rss;
			work_anon = init_anon;
			work_m = m_start - (uint64_t)extra;
			work_m_file = init_m_file;
		} else {
			if (!startup_begun) {
				startup_begun = true;
				work_startup = startup_open = true;
				work_rss = mc_rss_current_open(&startup_statm, &work_anon);
			} else
				work_rss = mc_rss_current_at(-1, &work_anon);
			work_m = measure() - (uint64_t)extra;
			work_m_file = m_file;
		}
	}
	fresh = false;
	init_fresh = false;
	pthread_mutex_unlock(&fp_lock);
}

void mc_own_work_begin(bool fold_first)
{
	work_begin(fold_first, false);
}

/* The same, right after mc_prog_peak_take (a region's end): its RSS and
 * M are the window's start. */
void mc_own_work_begin_taken(void)
{
	work_begin(false, true);
}

/* Start-up's window again: the constructor's own work (the suppressions'
 * and roots' set-up, on_exit, the signal stack) where start-up ran
 * before it, from another object's initializer that called into
 * memcheck first (mimalloc's close, libstdc++'s emergency pool's malloc
 * under jemalloc and tcmalloc), whose window ended there.  That work ran
 * in no window: the C library's pages it faulted were the program's
 * (perf -e page-faults -d, plain_rss_self under mimalloc: strstr's
 * 64 KiB block from mc_constructor, on_exit's from process_begin;
 * rss_begin 128 KiB above the bare program's RSS at its entry).  As
 * start-up's, the objects' read-only pages present now are noted and
 * the new ones given back at its end, and only its anonymous growth is
 * memcheck's (settle_read). */
void mc_own_work_begin_start(void)
{
	fp_enter();
	if (measuring && work_depth == 0 && pagemap_fd < 0) {
		if (mc_text_len)
			pagemap_fd = mc_proc_open("pagemap", O_RDONLY);
		mc_start_pages_note(pagemap_fd, false);
		startup_begun = false; /* work_begin: start-up's reads */
	}
	pthread_mutex_unlock(&fp_lock);
	work_begin(false, false);
}

/* A forked child's handlers' window (life.c fork_child), as start-up's:
 * the code and read-only data of the C library and the dynamic linker
 * that they run (pthread_mutex_init's lazy binding, snprintf, the
 * objects' walk) are not the child's, and fork copies none of those
 * pages, so each was faulted anew in the child and counted as its own:
 * a forked child's rss_begin, rss_end and peak_rss 136-488 KiB above
 * the bare child's (test_rss_self's fork rows).  All of them are given
 * back at the window's end (mc_start_pages_none), and only its
 * anonymous growth is memcheck's. */
bool mc_own_work_begin_fork(void)
{
	fp_enter();
	bool gives_back = false;
	if (measuring && work_depth == 0 && pagemap_fd < 0) {
		pagemap_fd = mc_proc_open("pagemap", O_RDONLY);
		gives_back = pagemap_fd >= 0;
		forked = true;
		if (gives_back)
			mc_start_pages_none();
		startup_begun = false; /* work_begin: start-up's reads */
	}
	pthread_mutex_unlock(&fp_lock);
	work_begin(false, false);
	return gives_back;
}

/* The end of the window: what it left (extra), from the RSS and M read
 * now (*rss, *m: M without extra).  fp_lock held. */
static void settle_read(uint64_t *rss_out, uint64_t *m_out)
{
	uint64_t anon = 0;
	if (work_startup)
		mc_start_pages_give_back(pagemap_fd);
	uint64_t rss = mc_rss_current_at(startup_statm, &anon); /* opened anew if -1 */
	startup_statm = -1;
	uint64_t m = measure() - (uint64_t)extra;
	if (pagemap_fd >= 0)
		mc_sys_close(pagemap_fd);
	pagemap_fd = -1;
	/* What the RSS grew by that memcheck's own mappings do not
	 * explain: libraries it loaded, files they mapped, the
	 * allocator's pages for what they allocated.  (Another thread
	 * of the program allocating meanwhile would be counted here
	 * too: see memcheck(7).)  In start-up's window, only what grew
	 * of the anonymous RSS (less M's anonymous part): the read-only
	 * file pages it faulted in there were given back just now
	 * (startpages.c), and the few left (a writable segment's
	 * pages read, not written) are the program's from its first run
	 * of that code; counted whole they took 64 KiB (glibc) to
	 * 140 KiB (tcmalloc) off the program's figures for the whole
	 * process.  Report windows count everything: the file pages
	 * there (libdw, the debug information it maps) are memcheck's
	 * alone. */
	int64_t all = ((int64_t)rss - (int64_t)work_rss) - ((int64_t)m - (int64_t)work_m);
	if (work_startup && anon && work_anon) {
		int64_t a = ((int64_t)anon - (int64_t)work_anon) -
			    (((int64_t)m - (int64_t)m_file) - ((int64_t)work_m - (int64_t)work_m_file));
		extra += a;
		startup_file = all > a ? (uint64_t)(all - a) : 0;
	} else
		extra += all;
	work_startup = startup_open = false;
	if (extra < 0)
		extra = 0;
	*rss_out = rss;
	*m_out = m;
}

/* The end of the window and the next interval's start.  fp_lock held. */
static void work_settle(void)
{
	uint64_t rss, m;
	settle_read(&rss, &m);
	/* M is m and the new extra: measuring it again, a few
	 * microseconds later, asked mincore of every lazy range
	 * once more (8 calls after a process's last report). */
	if (started && peak_used)
		restart_at(m + (uint64_t)extra, false, acc, 0);
}

static void work_end(bool last)
{
	pthread_mutex_lock(&fp_lock);
	fresh = false;
	if (--work_depth == 0 && work_measured) {
		if (last && final)
			settle_due = true;
		else
			work_settle();
	}
	pthread_mutex_unlock(&fp_lock);
}

void mc_own_work_end(void)
{
	work_end(false);
}

/* The end of start-up's window, where the process region begins next
 * with nothing of the program's run in between (life.c): settled at
 * the next call of this file, which is the region's mc_prog_peak_restart,
 * whose reads of the RSS and M then serve both (a statm read and a
 * mincore call fewer in every measured process).  What memcheck's own
 * start-up does meanwhile (the suppressions' and the roots' set-up) is
 * its own, as in the window. */
void mc_own_work_end_start(void)
{
	pthread_mutex_lock(&fp_lock);
	fresh = false;
	if (--work_depth == 0 && work_measured)
		settle_due = settle_at_region = true;
	pthread_mutex_unlock(&fp_lock);
}

/* The same at the end of the process region's report: once the process
 * is ending, the window's end is settled only if a figure is asked for
 * after it (a region begun by a later exit handler).  After the
 * process's last report none is, and its statm read and mincore calls
 * (4 system calls) went unused in every measured process. */
void mc_own_work_end_process(void)
{
	work_end(true);
}

/* A window's end that is due, settled now (start-up's, where no process
 * region began to settle it). */
void mc_own_work_settle(void)
{
	fp_enter();
	pthread_mutex_unlock(&fp_lock);
}

/* ---- the program's figures -------------------------------------------- */

uint64_t mc_prog_rss(void)
{
	fp_enter();
	fresh = false;
	if (!measuring) {
		pthread_mutex_unlock(&fp_lock);
		return MEMCHECK_UNKNOWN;
	}
	uint64_t rss = mc_rss_current();
	uint64_t m = measure();
	pthread_mutex_unlock(&fp_lock);
	return rss > m ? rss - m : 0;
}

/* Restart the interval: the kernel's mark, M, and acc from the RSS
 * now; where known (a window's end just read them: known_rss not NULL),
 * from those.  fp_lock held. */
static void take_restart_at(bool *whole_process, uint64_t *rss_now, const uint64_t *known_rss,
			    uint64_t known_m, bool read_mark, uint64_t mark)
{
	/* The new interval starts at the program's RSS now: a take that
	 * follows at once gives that, not 0.  The RSS read before M is
	 * measured, as fold_seen's. */
	uint64_t rss = known_rss ? *known_rss : mc_rss_current();
	uint64_t m = known_m ? known_m : measure();
	restart_at(m, read_mark, rss > m ? rss - m : 0, mark);
	if (!peak_used) { /* the first region: threads from here on */
		atomic_store_explicit(&mc_fp_thread_observe, true, memory_order_relaxed);
		mc_fp_releases = true;
		if (nobject)
			mc_fp_heap_at1 = HEAP_AT;
	}
	peak_used = true;
	acc = rss > m_start ? rss - m_start : 0;
	fresh_rss = rss;
	fresh_m = m_start;
	if (whole_process)
		*whole_process = !resettable;
	if (rss_now)
		*rss_now = acc;
}

/* Nothing read the mark before (mc_prog_peak_restart): a region begun
 * in the program's time, after a peak of the program's. */
static void take_restart(bool *whole_process, uint64_t *rss_now)
{
	take_restart_at(whole_process, rss_now, NULL, 0, true, 0);
}

/* What a take or restart answers where the figures are not measured:
 * the RSS unknown, no peak, nothing said of the threads. */
static uint64_t not_measured(bool *whole_process, uint64_t *rss_now, bool *alone)
{
	if (whole_process)
		*whole_process = false;
	if (rss_now)
		*rss_now = MEMCHECK_UNKNOWN;
	if (alone)
		*alone = false;
	return 0;
}

uint64_t mc_prog_peak_take(bool *whole_process, uint64_t *rss_now, bool *alone)
{
	fp_enter();
	if (!measuring) {
		pthread_mutex_unlock(&fp_lock);
		return not_measured(whole_process, rss_now, alone);
	}
	unsigned threads;
	uint64_t rss;
	/* The RSS that status gave with the mark serves the new interval:
	 * the mark's reset and mincore, all that come between, change
	 * neither (a statm read fewer at every region's end). */
	uint64_t m; /* M's growth for the fold */
	bool have_rss = fold_seen(&threads, &rss, &m);
	/* The calling thread was the only one: no other can start before
	 * it starts one itself (a region's end does not). */
	if (alone)
		*alone = threads == 1;
	uint64_t peak = acc;
	uint64_t mark = mark_last_read; /* the restart clears it */
	take_restart_at(whole_process, rss_now, have_rss ? &rss : NULL, m, false, mark_last_read);
	if (final && mark) {
		exit_armed = true;
		exit_prog = exit_base = acc;
		exit_mark = mark;

	}
	fresh = true;
	fresh_moved = false;
	pthread_mutex_unlock(&fp_lock);
	return peak;
}

/* The peak before is not folded: /proc/self/status, which fold reads,
 * is the dearest of the /proc files (10-20 us on these VMs, the first
 * time in a process more), and the outermost region's begin, which
 * every measured process makes at start-up, has no use for it. */
void mc_prog_peak_restart(bool *whole_process, uint64_t *rss_now)
{
	pthread_mutex_lock(&fp_lock);
	if (!measuring) {
		pthread_mutex_unlock(&fp_lock);
		not_measured(whole_process, rss_now, NULL);
		return;
	}
	if (settle_due) {
		/* A window's end is due (start-up's): one read of the RSS
		 * and of M serves its end and the new interval's start. */
		settle_due = settle_at_region = false;
		uint64_t rss, m;
		settle_read(&rss, &m);
		take_restart_at(whole_process, rss_now, &rss, m + (uint64_t)extra, false, 0);
		if (rss_now)
			*rss_now = *rss_now > startup_file ? *rss_now - startup_file : 0;
	} else
		take_restart(whole_process, rss_now);
	fresh = false;
	pthread_mutex_unlock(&fp_lock);
}

uint64_t mc_own_bytes(void)
{
	fp_enter();
	fresh = false;
	uint64_t m = measure();
	pthread_mutex_unlock(&fp_lock);
	return m;
}

/* The process is ending: the kernel's mark stays as it is from here on.
 * It is what the parent reads as the process's ru_maxrss (wait4,
 * time -v, a test runner's memory figure): reset at the last region's
 * end, a program that had freed its memory by then read the RSS of its
 * end (3.9 MB for a program whose peak is 87 MB under glibc) instead of
 * its peak.  The last figures are taken all the same; memcheck's own
 * work after them (the scan, reports) may raise the mark. */
void mc_footprint_final(void)
{
	pthread_mutex_lock(&fp_lock);
	if (final && exit_armed)
		exit_read();
	final = true;
	mc_fp_releases = false;
	pthread_mutex_unlock(&fp_lock);
}

/* The exit's last stretch: memcheck's destructor takes the figures
 * (region.c mc_regions_exit_take), but ld.so finalizes the objects
 * loaded after libmemcheck after it (libstdc++, GLib, the allocator, the
 * program's own libraries), and their destructors and exit code run
 * before memcheck's on_exit handler ends the regions.  The pages they
 * touch are the process's peak as bare: VmHWM at a bare run's very end
 * (an on_exit handler registered in _dl_fini, tests/prog/rss_self.h)
 * was 120-220 KiB above main's end in test_rss_self's C++ rows, 140-170
 * in its jemalloc and tcmalloc rows (smaps between the destructor's take
 * and the handler: libstdc++'s code +104 KiB, libm's +32, libgcc_s's +28
 * under tcmalloc), and peak_rss, taken at the destructor alone, was
 * that much low.  So the handler's first call of mc_footprint_final
 * reads the mark again (VmHWM: getrusage's ru_maxrss, a system call
 * instead of a /proc read, also holds the image's before exec, the
 * forked copy of the parent: 35 MB under gdb); where it rose since the
 * take, the rise is the program's exit code's, with M measured again
 * (memcheck's free wrappers ran meanwhile) and less what memcheck's
 * destructor itself left (exit_base).  Nothing is read where a window
 * of memcheck's own work came in between (a heap error's report: its
 * peak is memcheck's), nor in a process whose destructor did not defer
 * the ends (libmemcheck.a: nothing of the program's runs between its
 * take and its report).  The same read's RSS, less M and the
 * destructor's own leavings, is rss_end (mc_prog_rss_exit): the region
 * ends here, and the bare process's last VmRSS holds those libraries'
 * exit pages too (taken at the destructor, rss_end read 100-700 KiB
 * under it in test_rss_self's jemalloc and tcmalloc rows, 21 of 40 more
 * than 64 KiB).  Cost: a status read, and a measure where the
 * mark rose, at the end of a measured process, a status read more where
 * the destructor read the allocator's statistics (strace -f -c, a C++
 * program with MEMCHECK_REPORT: 291 -> 304 system calls under jemalloc,
 * 226 -> 238 under glibc; /bin/date unmeasured 127 both).  fp_lock
 * held. */
static void exit_read(void)
{
	exit_armed = false;
	uint64_t rss = 0, hwm = exit_status_read(&rss);
	/* Where the destructor gave back pages, the mark may still hold
	 * them, above the stretch's own rise: the RSS now, which the exit
	 * code's pages (read-only, kept once faulted) raised, stands for
	 * it. */
	uint64_t top = hwm > exit_mark ? hwm : exit_gave_back ? rss : 0;
	if (!rss)
		return; /* status unread: the take's figures stand */
	/* M measured again only where the mark rose (the rise below):
	 * else the take's, as mc_prog_peak_exit_base's base (what the
	 * exit's frees run of memcheck's is resident since the program's
	 * first frees; measured here at every exit, it was 7 system calls
	 * more, pagemap's, for the same rss_end in test_rss_self's rows). */
	bool rose = top > exit_base + m_start;
	uint64_t m = rose ? measure() : m_start;
	/* The region's end is here, where the handler ends it: its RSS,
	 * less M and less what the destructor's own work left (exit_base
	 * over exit_prog), as the rise below. */
	uint64_t prog = (rss > m ? rss - m : 0) + exit_prog;
	exit_end = prog > exit_base ? prog - exit_base : 0;
	exit_end_read = true;
	if (!rose)
		return; /* nothing above the take */
	/* the code first run in the stretch may have come after its mark */
	m -= code_since(m, rss, hwm);
	uint64_t rise = top > m + exit_base ? top - m - exit_base : 0;
	exit_peak = exit_prog + rise;
}

/* Before memcheck's destructor's own work that runs the allocator's
 * code (its statistics, region.c mc_regions_exit_take): the loaded
 * objects' read-only pages present now noted (startpages.c), so that
 * mc_prog_peak_exit_base gives back those the work faulted.  Left
 * present, they were pages the exit code then found mapped where bare
 * it faults them: jemalloc's statistics fault 496 KiB of its code in a
 * forked child (fork copies none), much of it what the child's own exit
 * then runs, and its peak_rss read 116 KiB under the bare child's VmHWM
 * (tcmalloc 92; now -44 and +4).  Only in a forked child, where none of
 * the objects' pages was present at the fork, their header blocks
 * neither (asked of pagemap before the walk reads them): elsewhere the
 * allocator's code that the program ran is present and the statistics
 * fault a block or two, and giving them back moved plain_rss_exit's
 * peak under jemalloc from +4 to +68 KiB over the bare one's (the
 * status file's RSS, from per-CPU counters folded lazily, is no finer),
 * for 10-30 more system calls at every measured exit.  A forked child
 * pays them (pagemap's reads of its objects, the give-back's madvise
 * calls): plain_rss_self fork with a report, strace -f -c, 474/566/
 * 802/812 -> 490/585/842/842 under glibc/mimalloc/jemalloc/tcmalloc. */
void mc_prog_peak_exit_note(void)
{
	fp_enter();
	if (exit_armed && measuring && forked && pagemap_fd < 0) {
		/* the takes' pagemap serves (mc_prog_peak_exit_open) */
		pagemap_fd = exit_pagemap1 ? exit_pagemap1 - 1 : mc_proc_open("pagemap", O_RDONLY);
		exit_pagemap1 = 0;
		if (pagemap_fd >= 0)
			mc_start_pages_note(pagemap_fd, true);
	}
	pthread_mutex_unlock(&fp_lock);
}

/* Before memcheck's destructor's takes, where its own work that may
 * fault pages in follows them (the allocator's statistics): pagemap
 * opened for the takes' measures of M and kept to
 * mc_prog_peak_exit_base, which measures M through it again.  That work
 * changes M too: libmemcheck's code it runs for the first time
 * (allocator.c's statistics; under jemalloc a page of its .bss), the
 * mapping the statistics' sort makes (known: mc_own_after moves fresh's
 * pair, not m_start).  exit_base, the RSS then less the take's M, held
 * those pages as the program's, and exit_read's M measured afresh took
 * them off a second time: rss_end and peak_rss 4-16 KiB under the bare
 * program's VmRSS in every jemalloc row of test_rss_bare (4-8 KiB of M,
 * an empty main's M 704 -> 708 KiB at exit_base), and under tcmalloc
 * the same 8 KiB hid as much of the preload's own traces (the dynamic
 * linker's heap, the stack).  The cost: a pread of pagemap for
 * libmemcheck's segments at the exit of a measured process (the takes'
 * measure opened and closed pagemap: now it stays open to here; a whole
 * measure there, views and lazy ranges too, was 3-6 preads more, for
 * the same figures): plain_empty with a report, strace -f -c, preads
 * 20/38/72/73 -> 21/39/73/74 under glibc/mimalloc/jemalloc/tcmalloc. */
void mc_prog_peak_exit_open(void)
{
	pthread_mutex_lock(&fp_lock); /* a window's end due is the take's */
	if (measuring && nobject && pagemap_fd < 0 && !exit_pagemap1)
		exit_pagemap1 = mc_proc_open("pagemap", O_RDONLY) + 1;
	pthread_mutex_unlock(&fp_lock);
}

/* After memcheck's destructor's own work that may have faulted pages
 * in (the allocator's statistics: jemalloc's code, 64 KiB more than
 * bare at exit by smaps, which bare never runs): the program's RSS less
 * M again, the base of the stretch's rise, with M measured again
 * through the pagemap mc_prog_peak_exit_open kept (with the take's M,
 * what the work made of memcheck's own was taken off twice: see
 * there).  The RSS and M read here stay fresh for the window the
 * process region's end
 * opens (mc_own_work_begin_taken), as the take's do where no statistics
 * are read: that window's begin read statm and measured M again (10
 * system calls at every exit with a JSON report or the full text), for
 * an end settled only where a region begins after the last report.
 * A populated mapping of memcheck's meanwhile (the statistics' sort
 * under jemalloc) moved the take's pair with it (mc_own_after); where a
 * lazy range came or went (fresh_moved), this RSS would not pair with
 * the take's M: then they are read at the window's begin as before. */
void mc_prog_peak_exit_base(void)
{
	fp_enter();
	/* M's growth where the takes' pagemap is at hand (exit_open):
	 * libmemcheck's own pages measured again, the mappings made since
	 * (known); the lazy ranges and the views, which the work does not
	 * touch (it runs under the guard: no block is tracked), as the
	 * take measured them.  What the work made of memcheck's own is in
	 * the RSS read below. */
	bool held = pagemap_fd >= 0 || exit_pagemap1;
	uint64_t m = exit_armed && held ? measure_part(false) : 0;
	if (exit_pagemap1)
		mc_sys_close(exit_pagemap1 - 1);
	exit_pagemap1 = 0;
	if (exit_armed && pagemap_fd >= 0) {
		mc_start_pages_give_back(pagemap_fd);
		mc_sys_close(pagemap_fd);
		pagemap_fd = -1;
		exit_gave_back = true;
	}
	uint64_t rss = 0, hwm = exit_armed ? exit_status_read(&rss) : 0;
	if (hwm && rss) {
		/* M from here on is the one measured now: exit_read
		 * takes only its growth since off the RSS it reads, and a
		 * window the process region's end opens starts from it */
		if (m) {
			fresh_m = m_start = m;
			object_seen = object_bytes; /* measured before hwm */
		}
		exit_base = rss > m_start ? rss - m_start : 0;
		exit_mark = hwm;
	}
	if (hwm && rss && !fresh_moved)
		fresh_rss = rss;
	else
		fresh = false;
	pthread_mutex_unlock(&fp_lock);
}

/* rss_end of a region the destructor took (end: its take's) where the
 * handler read the RSS again: the region ends there, after the exit
 * code of the libraries finalized after libmemcheck (libstdc++'s, the
 * allocator's), whose pages are the bare process's at its end too. */
uint64_t mc_prog_rss_exit(uint64_t end)
{
	pthread_mutex_lock(&fp_lock);
	if (exit_end_read)
		end = exit_end;
	pthread_mutex_unlock(&fp_lock);
	return end;
}

uint64_t mc_prog_peak_exit(uint64_t peak)
{
	pthread_mutex_lock(&fp_lock);
	if (exit_peak > peak)
		peak = exit_peak;
	pthread_mutex_unlock(&fp_lock);
	return peak;
}

/* The process's very end, after its last report (life.c): where a reset
 * threw away a higher mark than the kernel's now, the RSS is taken back
 * up to it for a moment, so that the mark the parent reads when the
 * process ends (wait4's ru_maxrss, getrusage(RUSAGE_CHILDREN), time -v:
 * the kernel keeps the greater of the mark and the RSS, and the last
 * thread's exit hands it on) is what the program reached, as bare.  The
 * pages are fresh anonymous ones, populated in one mmap (MAP_POPULATE:
 * no fault taken in user space) and unmapped at once: the kernel's mark
 * is raised at the unmap, the RSS falls back.  Never above what the
 * process reached before (the lost mark, M included, as a plain
 * preload's); skipped where the mapping fails (RLIMIT_AS, RLIMIT_DATA,
 * the kernel not overcommitting), and where the machine or the memory
 * cgroup has not room for it twice over (mc_memory_room: other
 * processes may have taken what the program had, and a charge past a
 * cgroup's limit, or past what the machine has, reclaims, swaps or
 * kills).  The cost is the kernel's zeroing of the pages: 0.13 ms a MiB
 * (1 MiB mapped populated and unmapped, best of 200 here; no page fault
 * taken in user space: perf stat counted 58 for 55 MiB, the program's
 * own).  Below MARK_RESTORE_MIN (the mark's or the RSS's difference
 * from the lost mark) the difference is within a bare
 * run's own noise (h.c's `h large threads`: 66,792-66,932 kB over 8
 * bare runs; the whole h.c: 67,272-67,556) and not worth the pages. */
#define MARK_RESTORE_MIN (64u << 10)
void mc_footprint_mark_restore(void)
{
	uint64_t lost = atomic_load_explicit(&mark_lost_kb, memory_order_relaxed) * 1024;
	if (!lost)
		return; /* nothing reset, or nothing higher thrown away */
	int saved = errno;
	uint64_t rss = 0, room = 0;
	/* Both differences at least MARK_RESTORE_MIN: a mark just under
	 * the lost one with the RSS far below it would cost the zeroing of
	 * the whole drop to raise the mark a few pages. */
	if (mc_rss_mark_kb() * 1024 + MARK_RESTORE_MIN <= lost && (rss = mc_rss_current()) &&
	    rss + MARK_RESTORE_MIN <= lost) {
		size_t len = mc_page_round(lost - rss);
		if (!mc_memory_room(&room) || room / 2 >= len) {
			void *p = mc_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE,
					      -1, 0);
			if (p != MAP_FAILED)
				mc_sys_munmap(p, len);
		}
	}
	errno = saved;
}

/* ---- fork -------------------------------------------------------------- */

void mc_footprint_lock(void)
{
	pthread_mutex_lock(&fp_lock);
}

void mc_footprint_unlock(void)
{
	pthread_mutex_unlock(&fp_lock);
}

void mc_footprint_after_fork_child(void)
{
	mc_mutex_reset(&fp_lock);
	/* A fork in start-up's window (another thread's): the parent's. */
	if (startup_statm >= 0)
		mc_sys_close(startup_statm);
	startup_statm = -1;
	if (pagemap_fd >= 0)
		mc_sys_close(pagemap_fd);
	pagemap_fd = -1;
	if (exit_pagemap1)
		mc_sys_close(exit_pagemap1 - 1);
	exit_pagemap1 = 0;
	mc_start_pages_forget();
	/* The child's mark starts afresh at fork (its own mm), bare too:
	 * the parent's lost mark is not the child's. */
	atomic_store_explicit(&mark_lost_kb, 0, memory_order_relaxed);
	exit_faults = UINT64_MAX; /* the child's count is its own */
	/* Armed again (mc_footprint_heap_grown): fork gives the child no
	 * page tables of libmemcheck's code, so what the parent made
	 * present there the child faults anew as it runs it, its late
	 * calls and its exit after its own peak (plain_rss_self
	 * forklittle, whose parent passed 4 MiB before the fork: 64 pages
	 * of code at the child's peak, 128 at its end). */
	if (nobject && peak_used)
		mc_fp_heap_at1 = HEAP_AT;
}
