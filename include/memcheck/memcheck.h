/*
 * memcheck.h - memory accounting and leak checking for C test suites.
 *
 * Link with -lmemcheck (pkg-config memcheck) or preload libmemcheck.so.
 * The library counts every call of the malloc family, tracks live blocks
 * with their allocation stacks, and reports per region what was allocated,
 * freed, peaked and left behind.  See memcheck(7) for the overview and the
 * MEMCHECK_* environment variables.
 */
#ifndef MEMCHECK_MEMCHECK_H
#define MEMCHECK_MEMCHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMCHECK_VERSION_MAJOR 0
#define MEMCHECK_VERSION_MINOR 1
#define MEMCHECK_VERSION_PATCH 0
#define MEMCHECK_VERSION "0.1.0"

/* ------------------------------------------------------------------------
 * Results
 * ---------------------------------------------------------------------- */

/* Blocks and bytes of one leak kind. */
struct memcheck_count {
	uint64_t blocks;
	uint64_t bytes;
};

/* Everything memcheck measured for one region.  The JSON report written to
 * MEMCHECK_REPORT is a view of this struct (memcheck-report(5)).  A figure
 * memcheck could not measure is MEMCHECK_UNKNOWN. */
#define MEMCHECK_UNKNOWN UINT64_MAX

struct memcheck_result {
	char name[128];            /* region name, truncated to fit */
	/* Heap usage, counted as valgrind's "total heap usage" line. */
	uint64_t allocs;           /* successful allocations */
	uint64_t frees;            /* frees of blocks memcheck counted */
	uint64_t reallocs;         /* realloc/reallocarray calls */
	uint64_t failed_allocs;    /* allocation calls that returned NULL */
	uint64_t injected;         /* of those, failures memcheck injected */
	uint64_t bytes_allocated;  /* bytes requested by successful allocations */
	uint64_t bytes_freed;      /* bytes of the blocks freed */
	/* What the region left behind: blocks it allocated, still live. */
	uint64_t live_blocks;
	uint64_t live_bytes;
	uint64_t peak_live_bytes;  /* high-water mark of live bytes */
	/* Leak kinds (valgrind's definitions), from a reachability scan at
	 * the region's end, and suppressed: what a suppression file matched
	 * (memcheck-suppressions(5)), taken out of its kind.  The five add up
	 * to live_blocks and live_bytes.  With MEMCHECK_SCAN=0 every block
	 * the region left is definitely lost. */
	struct memcheck_count definitely_lost;
	struct memcheck_count indirectly_lost;
	struct memcheck_count possibly_lost;
	struct memcheck_count still_reachable;
	struct memcheck_count suppressed;
	/* Heap errors seen while the region was open. */
	uint64_t double_frees;     /* frees of blocks already freed */
	uint64_t invalid_frees;    /* frees of pointers memcheck never saw,
				    * or inside a live block (which fail
				    * the region) */
	/* Memory the allocator holds that the program does not, at the end
	 * of the region; and after the allocator's own release call when
	 * MEMCHECK_RELEASE=1.  MEMCHECK_UNKNOWN where the allocator cannot
	 * tell. */
	uint64_t retained_bytes;
	uint64_t retained_after_release;
	/* Resident set size of the process, bytes. */
	uint64_t rss_begin;
	uint64_t rss_end;
	uint64_t peak_rss;         /* high-water mark while the region ran */
	int peak_rss_whole_process; /* 1: the kernel's mark could not be reset
				     * (/proc/self/clear_refs), so peak_rss is
				     * the whole process's peak so far */
	double seconds;            /* wall time of the region */
	int pass;                  /* 1 clean and within budget, 0 not */
	char violations[512];      /* why it failed, "; "-separated, or "" */
};

/* ------------------------------------------------------------------------
 * Regions
 * ---------------------------------------------------------------------- */

/* Start a region named NAME (NULL: "region").  Regions nest: an inner
 * region's figures are also part of every enclosing region's.  A region
 * sees the allocations of every thread. */
void memcheck_begin(const char *name);

/* End the innermost region: fill OUT (if not NULL), write the text report
 * to stderr and the JSON record to MEMCHECK_REPORT.  Returns 0 when the
 * region is clean (nothing left behind, no double free, no free of a
 * pointer inside a live block) and within
 * budget, 1 when it is not, -1 when no region is open.  Frees of pointers
 * memcheck never saw are counted but do not fail a region: they may come
 * from an allocator function memcheck does not wrap. */
int memcheck_end(struct memcheck_result *out);

/* A region that fails also fails the process: when it would exit with
 * status 0, it exits with MEMCHECK_EXITCODE (23) instead.  A caller that
 * deals with the failure of the region it just ended itself (a test that
 * expects it, a test framework that reports it) says so here: that
 * failure no longer changes the exit status, and what the region left
 * behind is let outlive every region, as memcheck_ignore() does, so that
 * an enclosing region does not report it again.  Returns 0, or -1 when
 * the region ended last passed or was handled already. */
int memcheck_handled(void);

/* A measured descendant of this process that failed (a region of its
 * failed: a death test's child that leaked before it died, a worker
 * whose exit status the program never reads) leaves a record for it,
 * which makes its exit 0 a failure (MEMCHECK_ANCESTORS).  A test
 * framework takes the records left since its last call here, to fail
 * the test that started the descendant instead: they no longer change
 * the exit status.  Returns how many descendant processes failed (0:
 * none), with the first's process id in *pid and its executable in
 * program (size bytes), each where not NULL. */
int memcheck_descendants_failed(long *pid, char *program, size_t size);

/* Where the leak that failed the region ended last was allocated (its
 * largest definitely or possibly lost record): the first frame of its
 * stack with a source file outside the system's libraries, the program's
 * own code, for a test framework to put its failure at.  Sets *file,
 * *line and *function (each may be NULL; the strings stay valid until
 * the next call) and returns 0, or returns -1 when that region failed
 * for no such leak, passed, or the frame has no file (no debug
 * information, MEMCHECK_SYMBOLIZE=0). */
int memcheck_leak_site(const char **file, int *line, const char **function);

/* End the innermost region without measuring or reporting it: for a test
 * framework whose test left its region open when it failed an assertion
 * of its own or skipped itself.  What the region left behind is let
 * outlive every region, as memcheck_ignore() does: no enclosing region
 * reports it either.  Returns 0, or -1 when no region is open. */
int memcheck_discard(void);

/* Begin a region named name for the rest of the process, as the process
 * region of a preloaded program is: at the process's exit, _exit or
 * fatal signal it is judged and reported as memcheck_end would, not as a
 * region left open ("region not ended").  For a process that ends inside
 * its test on purpose, where nothing else judges it: a death test's
 * child in a program linked with memcheck, not preloaded
 * (memcheck/gtest.h); its failure then fails the test that started it
 * (memcheck_descendants_failed).  Returns 0, 1 when the process has its
 * process region (nothing begun), -1 when regions nest too deep. */
int memcheck_begin_process(const char *name);

/* Rename the innermost open region (for fixtures that learn the test's
 * name only at its end).  Returns 0, or -1 when no region is open. */
int memcheck_rename(const char *name);

/* Let the live block at ptr outlive every region open now: it is not
 * reported as left behind (a cache a test fills on purpose, a framework's
 * own bookkeeping).  Returns 0, or -1 when ptr is not the start of a live
 * block memcheck tracks. */
int memcheck_ignore(const void *ptr);

/* Blocks the calling thread allocates from memcheck_disable() until the
 * matching memcheck_enable() are treated as memcheck_ignore() treats a
 * block: counted, never reported as left behind.  For allocations a test
 * knowingly keeps (a lazily built table, a cache).  Pairs nest.
 * memcheck_enable() returns 0, or -1 without a memcheck_disable() to
 * match. */
void memcheck_disable(void);
int memcheck_enable(void);

/* Make the SIZE bytes at PTR a root of the reachability scan: blocks
 * pointed to from there are reachable.  For memory memcheck does not
 * scan on its own, such as an anonymous mapping a program keeps its own
 * pointers in.  Up to 64 roots at a time.  Returns 0, or -1 when the
 * table of roots is full or size is 0. */
int memcheck_add_root(const void *ptr, size_t size);

/* Forget the root added at PTR.  Returns 0, or -1 when there is none. */
int memcheck_remove_root(const void *ptr);

/* Depth of region nesting: 0 when no region is open.  The implicit
 * "process" region of a preloaded program is not counted. */
int memcheck_depth(void);

/* ------------------------------------------------------------------------
 * Status
 * ---------------------------------------------------------------------- */

/* 1 when memcheck's malloc is the one the program calls, 0 when another
 * object that comes first in symbol lookup serves malloc (memcheck then
 * sees no allocations: put libmemcheck first in LD_PRELOAD or in the link
 * line). */
int memcheck_active(void);

/* Name of the allocator behind memcheck: "glibc", "mimalloc",
 * "jemalloc", "tcmalloc", or the path of the object that exports malloc. */
const char *memcheck_allocator(void);

/* Live bytes as memcheck counts them now, for the whole process (0 in
 * count-only mode, MEMCHECK_TRACK=0).  Cheap enough to call in a loop. */
uint64_t memcheck_live_bytes(void);

/* ------------------------------------------------------------------------
 * Failure injection
 * ---------------------------------------------------------------------- */

/* Make allocation calls fail as a real out-of-memory would: NULL with
 * errno ENOMEM (posix_memalign returns ENOMEM), counted in failed_allocs
 * and injected, their stacks in the report.  Every injected failure calls
 * memcheck_fault().  The same controls exist as MEMCHECK_FAIL_*
 * variables; `memcheck oom` sweeps a whole program with them.  See
 * memcheck_fault(3). */

/* Fail the Nth allocation call (1 for the first) of the innermost open
 * region, counted from its start among the calls made while it is the
 * innermost region (with no region open: of the process); persistent
 * non-zero fails every call after it too.  N 0 turns it off.  Returns 0. */
int memcheck_fail_nth(uint64_t n, int persistent);

/* Fail every allocation whose stack has a frame whose function, source
 * file or file name matches the shell pattern (fnmatch(3)).  NULL turns
 * it off.  Returns 0, or -1 when stacks are off (MEMCHECK_STACK_DEPTH=0). */
int memcheck_fail_site(const char *pattern);

/* Fail each allocation call with probability p (0 to 1), drawn from a
 * generator seeded with seed and the region: the same seed fails the same
 * calls.  p 0 turns it off.  Returns 0, or -1 for p outside 0..1. */
int memcheck_fail_random(double p, uint64_t seed);

/* Say that the innermost region (the running test) may fail when an
 * allocation fails: `memcheck oom` then counts its failure as handled.
 * Returns the number of failures injected in this region so far. */
uint64_t memcheck_expect_oom(void);

/* Called at every injected failure, and does nothing: a place for a
 * debugger's breakpoint (gdb: break memcheck_fault). */
void memcheck_fault(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMCHECK_MEMCHECK_H */
