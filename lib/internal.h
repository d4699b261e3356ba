/*
 * internal.h - what the library's files share.  Nothing here is public.
 * Grouped by the file that defines it.
 */
#ifndef MEMCHECK_INTERNAL_H
#define MEMCHECK_INTERNAL_H

#include <sched.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
/* before the names seccomp.c redirects below are defined */
#include <fcntl.h>
#include <bits/types/siginfo_t.h>
#include <bits/types/sigset_t.h>
#include <bits/types/struct_timespec.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "memcheck/memcheck.h"

#define MC_API __attribute__((visibility("default")))
#define MC_TLS __thread __attribute__((tls_model("initial-exec")))
/* State every process with the library loaded touches, measured or not
 * (start-up's decision, the forwarding table, the forwarding path's
 * tests): kept in .data, whose one small page the dynamic linker writes
 * at load anyway (relocations, the zeroed tail before .bss).  In .bss
 * each of these variables sat on a page of its own between large arrays,
 * and each first touch was a page fault, ~25 us on these VMs: a program
 * left out touched six such pages. */
#define MC_HOT __attribute__((section(".data.mc_hot")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define MC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A default mutex fork left held, made free again in the child: the
 * initializer stored, not pthread_mutex_init, a call the parent never
 * makes, which every forked child bound lazily (the dynamic linker's
 * lookup, libmemcheck's PLT page and the C library's page of the call:
 * each a fault in the child, which fork gives no page tables of files;
 * tests/prog/plain_fork_faults). */
#define mc_mutex_reset(m) (*(m) = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER)

/* Everything declared from here on is the library's own: hidden, so a
 * variable another file defines is reached directly, not through the
 * global offset table (a load saved on every use, in the malloc path
 * too).  Exported names say MC_API. */
#pragma GCC visibility push(hidden)

#define MC_MAX_DEPTH 64 /* deepest stack memcheck records */

/* ---- options.c ------------------------------------------------------- */

/* MEMCHECK_TEXT; auto: summary where the text goes to MEMCHECK_LOG's
 * file, fail where it goes to the program's standard error (report.c) */
enum mc_text { MC_TEXT_NONE, MC_TEXT_FAIL, MC_TEXT_SUMMARY, MC_TEXT_FULL, MC_TEXT_AUTO };
/* MEMCHECK_VALGRIND_TEXT: valgrind's --leak-check, and all for
 * --show-leak-kinds=all (vgtext.c) */
enum mc_vgtext { MC_VGTEXT_NONE, MC_VGTEXT_SUMMARY, MC_VGTEXT_FULL, MC_VGTEXT_ALL };
enum mc_vglist { MC_VGLIST_HINT, MC_VGLIST_LIST, MC_VGLIST_NONE };
/* MEMCHECK_VALGRIND_RESOLUTION's words, in its order */
enum mc_vgres { MC_VGRES_LOW, MC_VGRES_MED, MC_VGRES_HIGH };
/* MEMCHECK_VALGRIND_FREERES's words, in its order */
#define MC_FREERES_CXX 1
#define MC_FREERES_LIBC 2
/* A shipped entry's "# valgrind: lists" mark beside those bits (suppress.c):
 * blocks valgrind itself reports, dropped under valgrind's text */
#define MC_SUPP_VALGRIND_LISTS 4
enum mc_unwinder { MC_UNWIND_FP, MC_UNWIND_LIBUNWIND, MC_UNWIND_GLIBC };
enum mc_tristate { MC_AUTO, MC_ON, MC_OFF };
/* MEMCHECK_GLIB_SLICES's words, in its order (gslice.c) */
enum mc_glib_slices { MC_SLICES_AUTO, MC_SLICES_BLOCKS, MC_SLICES_CHUNKS };

struct mc_options {
	const char *report;       /* MEMCHECK_REPORT, absolute, or NULL */
	int text;                 /* enum mc_text */
	int valgrind_text;        /* enum mc_vgtext */
	int valgrind_show;        /* 1 << enum mc_kind, each kind listed */
	int valgrind_errors;      /* 1 << enum mc_kind, each kind an error */
	int valgrind_freeres;     /* MC_FREERES_CXX | MC_FREERES_LIBC */
	int valgrind_child_silent; /* a forked child writes nothing (life.c) */
	int valgrind_list;         /* enum mc_vglist: -s's list, -s's hint (vgtext.c) */
	const char *valgrind_children; /* the pid whose program alone is checked (life.c) */
	const char *valgrind_fullpath; /* --fullpath-after's prefixes, each ended by ':' (vgtext.c) */
	int valgrind_resolution;  /* enum mc_vgres: --leak-resolution (vgtext.c) */
	const char *valgrind_xml; /* --xml-file's pattern or --xml-fd's number, and
				   * after a newline the vargv's words (vgxml.c) */
	int track;                /* keep the live-block table */
	int stack_depth;          /* 0..MC_MAX_DEPTH */
	int valgrind_deeper;      /* not an option: the frames stack_depth holds
				   * more than MEMCHECK_STACK_DEPTH said, under
				   * valgrind's text (options.c, vgtext.c's
				   * mc_vgtext_depth) */
	int unwinder;             /* enum mc_unwinder */
	int max_leaks;            /* leak records per region in reports */
	int peak_sites;           /* sites kept in a peak snapshot (snapshot.c) */
	int timeline;             /* samples kept per region (timeline.c) */
	int process_region;       /* enum mc_tristate */
	const char *programs;     /* MEMCHECK_PROGRAMS, or NULL: programs.c's rule */
	int exitcode;             /* MEMCHECK_EXITCODE: status for a failing run */
	int ancestors;            /* MEMCHECK_ANCESTORS: a failure fails them too */
	int fatal_timeout;        /* seconds for a killed process's record (fatal.c) */
	int fatal_scan_ms;        /* its scan's limit at a signal asking it to end */
	int symbolize;            /* resolve file:line with libdw */
	int symbolize_system;     /* ... also in /usr/lib and /lib */
	const char *cache;        /* MEMCHECK_CACHE, "off", or NULL: the default (symcache.c) */
	const char *budget;       /* MEMCHECK_BUDGET, or NULL */
	const char *budget_name;  /* MEMCHECK_BUDGET_NAME, or NULL: its name in messages */
	const char *baseline;     /* MEMCHECK_BASELINE, or NULL */
	int release;              /* call the allocator's release at region end */
	int scan;                 /* classify leftovers by a reachability scan */
	int leak_heuristics;      /* valgrind's interior-pointer heuristics (heuristics.c) */
	int scrub;                /* bytes of new blocks cleaned of addresses (account.c) */
	int glib_slices;          /* enum mc_glib_slices (gslice.c) */
	int fail_nth;             /* failure injection (fault.c) */
	int fail_persistent;
	const char *fail_region;
	const char *fail_site;
	const char *fail_probability;
	int fail_seed;
	int fail_count;
	const char *fail_log;
	const char *process_id;
	const char *suppressions; /* MEMCHECK_SUPPRESSIONS, FILE:FILE..., or NULL */
	const char *suppressions_names; /* MEMCHECK_SUPPRESSIONS_NAMES, or NULL */
	int default_suppressions; /* also the shipped files */
	const char *gen_suppressions; /* MEMCHECK_GEN_SUPPRESSIONS, or NULL */
	const char *log;        /* MEMCHECK_LOG, or NULL: standard error */
	const char *alloc_fn;   /* MEMCHECK_ALLOC_FN patterns, or NULL (allocfn.c) */
	int alloc_fn_auto;      /* thin wrappers found by their code */
	const char *valgrind;   /* MEMCHECK_VALGRIND: the valgrind command line's settings */
	int text_timeout;       /* seconds the end's text waits for its reader (textout.c) */
	int follow_exec;        /* checked here; execenv.c reads the first environment's */
	int valgrind_error_limit; /* --error-limit: valgrind's cutoffs of heap errors (vgtext.c) */
};
/* MEMCHECK_VALGRIND's entries are separated by this byte, and the whole
 * value is read up to this length (options.c; tools/vgcompat.c). */
#define MC_VALGRIND_SEP '\x1f'
#define MC_VALGRIND_MAX 65536
/* The value of the entry NAME (without MEMCHECK_) in settings, a
 * MEMCHECK_VALGRIND value in the environment's own string, ended by
 * MC_VALGRIND_SEP or NUL; NULL where there is none.  Writable in place
 * (life.c marks MEMCHECK_VALGRIND_CHILDREN consumed). */
char *mc_valgrind_entry(const char *settings, const char *name);
/* The value of MEMCHECK_VALGRIND's entry NAME=VALUE that is no option's
 * (the command line's words for vgtext.c: SUPP_NAMES), NUL-ended; NULL
 * where there is none. */
const char *mc_valgrind_word(const char *name);
/* The program valgrind's command line checks, after its options are
 * read: MEMCHECK_VALGRIND out of its environment, the library out of
 * its LD_PRELOAD (options.c). */
void mc_valgrind_hide(void);
/* Is pre the LD_PRELOAD value mc_valgrind_hide left (the library's
 * entries turned into colons)?  execenv.c then gives an exec'd program
 * the value without them, as valgrind's execve takes its objects out. */
bool mc_valgrind_hidden(const char *pre);
extern struct mc_options mc_opt;

/* A boolean option's value as the options read it: 1, 0, or -1 (not one). */
int mc_options_bool(const char *s);
/* Read every MEMCHECK_* variable, writing nothing and opening nothing. */
void mc_options_init(void);
/* Only MEMCHECK_PROCESS and MEMCHECK_PROGRAMS, the two the programs
 * rule reads (mc_process_verdict): all a left-out process parses. */
void mc_options_init_verdict(void);
/* Open memcheck's text (MEMCHECK_LOG) and complain there about the bad
 * values mc_options_init found. */
void mc_options_say(void);
/* Whether a report can show more of a region than the one-line
 * summary's counts: the JSON report (memcheck run, compare and gate read
 * it; the timeline is written only there), the full text, a budget (its
 * rules, and the full text that explains a failure; a baseline serves
 * only its relative limits).  Two things are measured only then: the peak
 * snapshot (snapshot.c) and the RSS figures (footprint.c, life.c; of a
 * budget, only one that names them), whose /proc reads were ~80 us of
 * every measured process.  A region begun
 * through the API is the one other reader of the RSS figures
 * (memcheck_end's struct): life.c and memcheck_begin start them.  Inline:
 * the unit tests that link snapshot.c define mc_opt without options.c. */
static inline bool mc_opts_full_report(void)
{
	return mc_opt.report || mc_opt.text == MC_TEXT_FULL || mc_opt.budget;
}

/* Print the option table as mdoc (for memcheck(7)) to fd. */
void mc_options_mdoc(int fd);

/* ---- sys.c ----------------------------------------------------------- */

/* memcheck's own mappings: the system call, never the program's mmap,
 * which memcheck wraps (mappings.c).  Their bytes (mc_own_vm) are
 * memcheck's, left out of the address-space limits the program sets:
 * the hook, once rlimits.c sets it, is called at every change. */
void *mc_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int mc_sys_munmap(void *addr, size_t len);
int64_t mc_own_vm(void);
void mc_own_vm_hook_set(void (*hook)(void));
/* The process's limit as the kernel keeps it (no wrapper of memcheck's:
 * limits.c's getrlimit answers with the program's view). */
struct rlimit;
int mc_sys_getrlimit(int resource, struct rlimit *rl);
/* mc_sys_open asks hook first where it is set (sandbox.c: the files kept
 * for a program that restricts its own file access). */
void mc_open_hook_set(int (*hook)(const char *path));
/* The hook's copy of path's file, or -1 (no hook, or none kept). */
int mc_kept_open(const char *path);
/* memcheck's own system calls (seccomp.c): none that the program's
 * seccomp filter would refuse is made (it fails with EPERM instead).
 * sandbox.c gives it the filters the program installs (mc_seccomp_add,
 * insn a copy of memcheck's), memory for where mmap is refused
 * (mc_seccomp_spare), the ids that cannot be asked then
 * (mc_seccomp_ids, before the install) and the line that says what
 * was refused (mc_seccomp_say_set). */
/* syscall(2) is exported (sandbox.c) for the program's calls;
 * memcheck's own are renamed to mc_sc_syscall (below), which asks the
 * filters: linked from libmemcheck.a no address tells the two apart. */
long mc_sc_syscall(long nr, ...);
/* syscall(2)'s six arguments from its va_list, as the C library's reads
 * them (those not passed are what the registers held) */
static inline __attribute__((always_inline)) void mc_syscall_args(va_list ap, long x[6])
{
	for (int i = 0; i < 6; i++)
		x[i] = va_arg(ap, long);
}
long mc_seccomp_raw(long nr, long a, long b, long c, long d, long e, long f);
void mc_seccomp_add(const void *insn, unsigned short len);
bool mc_seccomp_prog_allows(const void *insn, unsigned short len, long nr, const long args[6]);
void mc_seccomp_spare(void *lo, size_t size);
void mc_seccomp_ids(void);
void mc_seccomp_say_set(void (*fn)(const char *name, long nr, const char *what));
bool mc_seccomp_allows(long nr, long a0, long a1, long a2);
/* A filter inherited through the execve (/proc/self/status), seen once:
 * calls a fatal signal's record makes that start-up never did
 * (process_vm_readv/writev, rt_tgsigqueueinfo; not its timers) refused
 * from then on (EPERM).  Async-signal-safe. */
void mc_seccomp_inherited(void);
/* Whether the filter lets libdw's own calls through (opens, maps, reads). */
bool mc_seccomp_foreign_ok(void);
/* memcheck's own opens (mc_sys_open, the renamed open and openat) that
 * get EMFILE: fn releases a descriptor memcheck keeps and can reopen
 * when it needs it again, true where it did (scan.c: the scan's
 * /proc/self/maps); mc_emfile_retry(fd) whether an open that returned
 * fd is to be made once more (a hook released one). */
void mc_emfile_release_add(bool (*fn)(void));
bool mc_emfile_released(void);
static inline bool mc_emfile_retry(int fd)
{
	return unlikely(fd < 0) && errno == EMFILE && mc_emfile_released();
}
/* The C library's functions memcheck's exit calls, asked of the filter
 * the same way (seccomp.c; the C library makes the system call itself). */
int mc_sc_open(const char *path, int flags, ...);
int mc_sc_openat(int dir, const char *path, int flags, ...);
ssize_t mc_sc_read(int fd, void *buf, size_t n);
int mc_sc_close(int fd);
int mc_sc_stat(const char *restrict path, struct stat *restrict st);
int mc_sc_lstat(const char *restrict path, struct stat *restrict st);
int mc_sc_fstat(int fd, struct stat *st);
ssize_t mc_sc_readlink(const char *restrict path, char *restrict buf, size_t n);
int mc_sc_sigpending(sigset_t *set);
int mc_sc_pthread_sigmask(int how, const sigset_t *set, sigset_t *old);
int mc_sc_sigtimedwait(const sigset_t *restrict set, siginfo_t *restrict info,
		       const struct timespec *restrict timeout);
ssize_t mc_sc_write(int fd, const void *buf, size_t n);
pid_t mc_sc_getpid(void);
pid_t mc_sc_getppid(void);
pid_t mc_sc_gettid(void);
uid_t mc_sc_geteuid(void);
int mc_sc_getresuid(uid_t *r, uid_t *e, uid_t *s);
int mc_sc_getresgid(gid_t *r, gid_t *e, gid_t *s);
int mc_sc_access(const char *path, int mode);
int mc_sc_mkdir(const char *path, mode_t mode);
int mc_sc_renameat(int from_dir, const char *from, int to_dir, const char *to);
int mc_sc_unlinkat(int dir, const char *path, int flags);
int mc_sc_flock(int fd, int op);
int mc_sc_madvise(void *p, size_t len, int advice);
int mc_sc_mincore(void *p, size_t len, unsigned char *vec);
char *mc_sc_getcwd(char *buf, size_t size);
char *mc_sc_realpath(const char *restrict path, char *restrict out);
int mc_sc_nanosleep(const struct timespec *want, struct timespec *left);
int mc_sc_sched_yield(void);
/* In the library only (GNUmakefile's LIBFLAGS): the command, the man
 * page generator and the unit tests that compile lib/ files make their
 * calls plainly. */
#ifdef MC_SECCOMP_CALLS
#define open(...) mc_sc_open(__VA_ARGS__)
#define openat(...) mc_sc_openat(__VA_ARGS__)
#define read(...) mc_sc_read(__VA_ARGS__)
#define close(...) mc_sc_close(__VA_ARGS__)
#define stat(...) mc_sc_stat(__VA_ARGS__)
#define lstat(...) mc_sc_lstat(__VA_ARGS__)
#define fstat(...) mc_sc_fstat(__VA_ARGS__)
#define readlink(...) mc_sc_readlink(__VA_ARGS__)
#define sigpending(...) mc_sc_sigpending(__VA_ARGS__)
#define pthread_sigmask(...) mc_sc_pthread_sigmask(__VA_ARGS__)
#define sigtimedwait(...) mc_sc_sigtimedwait(__VA_ARGS__)
#define write(...) mc_sc_write(__VA_ARGS__)
#define getpid(...) mc_sc_getpid(__VA_ARGS__)
#define getppid(...) mc_sc_getppid(__VA_ARGS__)
#define gettid(...) mc_sc_gettid(__VA_ARGS__)
#define geteuid(...) mc_sc_geteuid(__VA_ARGS__)
#define getresuid(...) mc_sc_getresuid(__VA_ARGS__)
#define getresgid(...) mc_sc_getresgid(__VA_ARGS__)
#define access(...) mc_sc_access(__VA_ARGS__)
#define mkdir(...) mc_sc_mkdir(__VA_ARGS__)
#define renameat(...) mc_sc_renameat(__VA_ARGS__)
#define unlinkat(...) mc_sc_unlinkat(__VA_ARGS__)
#define flock(...) mc_sc_flock(__VA_ARGS__)
#define madvise(...) mc_sc_madvise(__VA_ARGS__)
#define mincore(...) mc_sc_mincore(__VA_ARGS__)
#define getcwd(...) mc_sc_getcwd(__VA_ARGS__)
#define realpath(...) mc_sc_realpath(__VA_ARGS__)
#define nanosleep(...) mc_sc_nanosleep(__VA_ARGS__)
#define sched_yield(...) mc_sc_sched_yield(__VA_ARGS__)
#define syscall(...) mc_sc_syscall(__VA_ARGS__)
#endif
/* The other system calls of memcheck's own start-up and figures (sys.c),
 * through syscall(2) as those: a C library wrapper called from
 * libmemcheck is bound at its first call in every process (~700
 * instructions in the dynamic linker each), and a program that defines
 * open or read itself never sees memcheck's.  errno as the wrappers set
 * it. */
struct stat;
struct sysinfo;
int mc_sys_open(const char *path, int flags, int mode);
/* The process's own /proc file tail ("maps", "statm"...) as the calling
 * thread sees it: /proc/self from the main thread, else /proc/thread-self
 * (the leader's go empty once it has exited). */
int mc_proc_open(const char *tail, int flags);
int mc_sys_close(int fd);
long mc_sys_read(int fd, void *buf, size_t n);
long mc_sys_pread(int fd, void *buf, size_t n, off_t off);
bool mc_pagemap_read(int fd, uintptr_t addr, uint64_t *e, size_t n);
long mc_sys_write(int fd, const void *buf, size_t n);
uintptr_t mc_program_break(void); /* the C library's __sbrk(0) */
int mc_sys_fstat(int fd, struct stat *st);
int mc_sys_fcntl(int fd, int cmd, long arg);
int mc_sys_mincore(void *p, size_t len, unsigned char *vec);
int mc_sys_ioctl(int fd, unsigned long request, void *arg);
int mc_sys_sysinfo(struct sysinfo *si);
/* The C library's sigaction (the next definition after memcheck's own,
 * signals.c), given at start-up (mc_sys_sigaction_set, life.c's one walk)
 * or else looked up with dlsym the first time, with the guard held.  -1
 * with ENOSYS when there is none. */
struct sigaction;
int mc_sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
void mc_sys_sigaction_set(int (*fn)(int, const struct sigaction *, struct sigaction *));
bool mc_sys_sigaction_resolve(void);
/* Does the processor have AVX2, the system keeping its registers?  The
 * C library's answer: no cpuid, a trap to a hypervisor. */
bool mc_cpu_avx2(void);
double mc_now(void);
size_t mc_page_size(void); /* the system's, from the auxiliary vector */
pid_t mc_pid(void); /* getpid(), asked once (again in a forked child) */

/* A lock of the rare paths that no fork handler takes (limits.c): the
 * word holds the pid of the process one of whose threads holds it.  A
 * forked child takes over one that a thread of its parent held at the
 * fork: that thread is not in the child, where a mutex waited for it
 * for ever (tests/test_forkheld.c).  What the holder was changing is
 * redone by the child's holder.  A vfork child (mc_pid is its parent's
 * there) waits for the parent's thread, which runs on. */
static inline void mc_plock_take(_Atomic pid_t *l)
{
	pid_t me = mc_pid();
	for (;;) {
		pid_t o = atomic_load_explicit(l, memory_order_relaxed);
		if (o == me)
			sched_yield(); /* a thread of this process has it */
		else if (atomic_compare_exchange_weak_explicit(l, &o, me, memory_order_acquire,
							       memory_order_relaxed))
			return; /* free, or its holder is not in this process */
	}
}

static inline void mc_plock_give(_Atomic pid_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}
pid_t mc_tid(void); /* gettid(), asked once a thread (again in a forked child) */
bool mc_membarrier_register(void); /* membarrier(2) registered, asked once */
void mc_pid_after_fork(void);

/* ---- ownmap.c -------------------------------------------------------- */

/* Memory for memcheck itself: mmap, never malloc.  mc_map's pages are
 * populated (resident at once, and counted as memcheck's by
 * footprint.c); mc_map_lazy's are touched as used and measured with
 * mincore; mc_map_reserve's are the caller's to count (mc_own_grow) as
 * it touches them. */
void *mc_map(size_t size);
void *mc_map_lazy(size_t size);
void *mc_map_reserve(size_t size);
/* Where memcheck's next own mapping of size bytes is asked for (a
 * hint: above libmemcheck, apart from the program's), NULL for the
 * kernel's choice. */
void *mc_own_place(size_t size);
/* The process's end has begun: from here on mc_map, mc_map_io and
 * mc_map_lazy cut their pieces from one lazily counted reservation,
 * packed, never given back ("the exit's tail"). */
void mc_map_tail_begin(void);
/* Start-up will cut a piece over 1 MiB (the block table's first arrays:
 * a tracking process): the first reservation is the large one
 * ("carved reservations"). */
void mc_map_carve_large_first(void);
/* An address-space limit memcheck may not move is in force (rlimits.c):
 * each reservation from here on a mapping of its own, no larger than
 * asked, and what can be mapped on demand is ("under a limit"). */
void mc_map_tight(void);
extern bool mc_own_tight; /* mc_map_tight's */
static inline bool mc_map_is_tight(void)
{
	return mc_own_tight;
}
/* In a forked child: the exit's tail's lock, which a thread of the
 * parent's may have held, free (life.c's fork_child). */
void mc_map_after_fork(void);
/* Under valgrind, at the process's end: every own mapping's address
 * errors enabled again (valgrind's exit warns of ranges left disabled). */
void mc_map_unhide_all(void);
/* A mapping was hidden (valgrind's memcheck runs the process: the
 * exit's test, no client request there); set by mc_map_unhide_all:
 * memcheck's own heap (ownheap.c) is no longer touched. */
extern bool mc_map_hid, mc_map_unhidden;
/* How footprint.c learns of each mapping (see there).  Unset, nothing
 * is counted. */
struct mc_map_hooks {
	bool (*before)(size_t bytes);
	void (*after)(bool folding, int64_t bytes);
	void (*lazy)(const void *p, size_t len);
	bool (*lazy_remove)(const void *p, size_t len);
};
void mc_map_hooks_set(const struct mc_map_hooks *h);
/* Pages of an mc_map_reserve mapping touched for the first time (or,
 * negative, given back): counted through the hooks. */
void mc_own_grow(int64_t bytes);
/* Is anyone counting (footprint.c started)? */
bool mc_own_hooked(void);
/* n bytes as whole 4 KiB pages: a mapping's length as the kernel maps
 * it, and the resident memory it can take. */
static inline size_t mc_page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}
/* A read-only private mapping of len bytes of the file open at fd from
 * off (a page's multiple), for memcheck's own reading, asked for where
 * memcheck's own mappings are, apart from the program's.  Asked with
 * NULL, the kernel put it just below the lowest mapping, where the
 * program's next mmap(NULL) would have gone: ownread.c's view of the C
 * library's call-frame segment (332 KiB), made at a measured process's
 * first capture through it, moved each later mapping of the program's
 * (its allocator's arenas and segments) 332 KiB lower than bare
 * (tests/prog/plain_mmap_where.c).  Counted by its caller (ownread.c's
 * views: footprint.c's measure), not here.  Inline: no function more in
 * a leaking exit's code (the cache's mapping, suppcache.c). */
static inline void *mc_map_file(size_t len, int fd, off_t off)
{
	return mc_sys_mmap(mc_own_place(mc_page_round(len)), len, PROT_READ, MAP_PRIVATE, fd, off);
}
/* Each page of [p, p + len) (fresh, zero, not yet seen by another
 * thread) written once: a hash table probed before it is written takes
 * two page faults a page where its memory is faulted in (the exit's
 * tail, ownmap.c), the read mapping the zero page and the write then
 * copying it; written first, one. */
static inline void mc_write_first(void *p, size_t len)
{
	for (uintptr_t a = (uintptr_t)p; a < (uintptr_t)p + len; a = (a | 4095) + 1)
		*(volatile char *)a = 0;
}
/* Make the pages of [p, p + len) resident now, in one system call,
 * where they would otherwise be faulted in one by one as first touched
 * (on these VMs a page costs ~2 us either way: one call for many pages
 * saves the faults' entries).  Only for memory that is about to be used
 * and counted as resident. */
void mc_populate(void *p, size_t len);
/* The same for libmemcheck's own static variables (footprint.c's
 * start-up populate), which no variable of ownmap.c is read for first. */
void mc_populate_static(void *p, size_t len);
/* How much more of an arena to count and populate ahead of its writes,
 * counted bytes counted so far: as much again, a page at least, most at
 * most (a short process's few pages, a long one's fewer calls). */
static inline size_t mc_ahead(size_t counted, size_t most)
{
	return counted < 4096 ? 4096 : counted < most ? counted : most;
}
/* The same for a file's pages memcheck maps to read (a symbol table):
 * made present from the page cache in one call, not faulted in 64 KiB
 * at a time. */
void mc_populate_read(const void *p, size_t len);
/* MC_START_TOUCHED(x): the bytes of x (a static object in .bss, the
 * first slot of a per-region array) are written by every measured
 * process, from its start-up on.  footprint.c populates them all at
 * start-up, neighbours merged, instead of a page fault each as first
 * touched (measured here: a fault 14 us, a one-page MADV_POPULATE_WRITE
 * 3 us, a page in a run of them 1.3 us).  The list is a section of its
 * own, which lib/bss-layout.sh's linker script bounds. */
struct mc_start_span {
	void *p;
	size_t len;
};
#define MC_START_CAT2(a, b) a##b
#define MC_START_CAT(a, b) MC_START_CAT2(a, b)
#define MC_START_TOUCHED(x)                                                              \
	static struct mc_start_span MC_START_CAT(mc_start_span_, __LINE__)               \
		__attribute__((used, section("mc_start_spans"), aligned(sizeof(void *)))) = \
			{ &(x), sizeof(x) }
/* The same for buffers read(2) fills or write(2) empties: visible to
 * valgrind (ownmap.c). */
void *mc_map_io(size_t size);
/* The same, not cleared where it is memory memcheck used before: for a
 * buffer written before it is read (an mc_buf's). */
void *mc_map_io_written(size_t size);
void mc_unmap_io(void *p, size_t size);
void mc_unmap(void *p, size_t size);
/* Room for one more element of elem bytes in the mmap'd array *v with
 * used elements of *cap: doubles it (first elements the first time);
 * false when memory runs out, the array as it was. */
bool mc_grow(void **v, size_t *cap, size_t used, size_t elem, size_t first);
/* The same for an array whose first storage, fixed, is part of a larger
 * mapping of the caller's: left alone when the array moves out of it. */
bool mc_grow_from(void **v, size_t *cap, size_t used, size_t elem, size_t first,
		  const void *fixed);
/* cb for each mapping mc_map and mc_map_io have made and not unmapped:
 * memcheck's own memory, never the allocator's.  False when some were
 * not listed (more at once than the list holds). */
bool mc_own_each(void (*cb)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);

/* ---- buf.c ----------------------------------------------------------- */

/* A growable string in mmap'd memory. */
struct mc_buf {
	char *s;
	size_t len, cap;
	bool oom;
};
void mc_buf_put(struct mc_buf *b, const char *s, size_t n);
void mc_buf_puts(struct mc_buf *b, const char *s);
void mc_buf_repeat(struct mc_buf *b, size_t off, size_t n);
void mc_buf_printf(struct mc_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mc_buf_json_str(struct mc_buf *b, const char *s);
/* Writing in place: room for n more bytes at b's end (the address to
 * write them at; NULL when memory runs out, b->oom then set), and
 * mc_buf_end with the address past the last byte written there.  One
 * reservation for a record's many small pieces, each a store instead of
 * a call. */
char *mc_buf_room_grow(struct mc_buf *b, size_t n);
static inline char *mc_buf_room(struct mc_buf *b, size_t n)
{
	return !b->oom && b->len + n + 1 <= b->cap ? b->s + b->len : mc_buf_room_grow(b, n);
}
static inline void mc_buf_end(struct mc_buf *b, char *end)
{
	b->len = (size_t)(end - b->s);
	b->s[b->len] = 0;
}
/* s's n bytes as mc_buf_json_str writes them, at w (room for 6 * n + 2
 * bytes); the address past them. */
char *mc_buf_json_at(char *w, const char *s, size_t n);
/* How many bytes mc_buf_json_at writes for s's n bytes. */
size_t mc_buf_json_len(const char *s, size_t n);
/* v as "0x%lx" writes it, at w (room for 18 bytes); the address past it. */
char *mc_buf_hex_at(char *w, uint64_t v);
/* v in decimal at w (room for 21 bytes), NUL-terminated, as "%llu"
 * writes it, without vsnprintf; the NUL's address. */
char *mc_utoa(char *w, uint64_t v);
/* HEAD, ID in decimal, TAIL into out, NUL-terminated (/proc/PID/stat):
 * false where it does not fit in size bytes. */
bool mc_path_id(char *out, size_t size, const char *head, uint64_t id, const char *tail);
/* Numbers as "%llu", "%d" and "0x%lx" write them, without vsnprintf. */
void mc_buf_u64(struct mc_buf *b, uint64_t v);
void mc_buf_int(struct mc_buf *b, int v);
void mc_buf_hex(struct mc_buf *b, uint64_t v);
/* Strings up to a NULL, one after another. */
void mc_buf_strs(struct mc_buf *b, ...) __attribute__((sentinel));
/* v / 2^shift as "%.1f" writes it (v * 10 below 2^64, shift 1..40). */
void mc_buf_tenths(struct mc_buf *b, uint64_t v, unsigned shift);
void mc_buf_free(struct mc_buf *b);
/* Length of the valid UTF-8 sequence at p (ending before end), 0 if none. */
size_t mc_utf8_len(const unsigned char *p, const unsigned char *end);
/* s with everything but printable UTF-8 escaped (\n, \xNN, ...), for
 * memcheck's text, into out[cap]; returns out. */
const char *mc_text_escape(const char *s, char *out, size_t cap);
/* Copy src into dst[size], NUL-padded, cut at a UTF-8 character boundary. */
void mc_copy_name(char *dst, size_t size, const char *src);
/* 64-bit FNV-1a of n bytes: a name for a cache file's key, not a checksum. */
uint64_t mc_fnv1a(const void *p, size_t n);
/* n bytes as 2n lowercase hex digits at w, NUL-terminated (no
 * snprintf: a call a byte); the NUL's address. */
char *mc_hex(char *w, const unsigned char *bytes, size_t n);
/* Group a number with commas, as valgrind does: 1,234,567. */
const char *mc_commas(uint64_t v, char buf[32]);
/* The first line of valgrind's preamble where memcheck's valgrind
 * command line writes its text and XML: memcheck names itself. */
#define MC_VG_PREAMBLE                                                                         \
	"memcheck " MEMCHECK_VERSION ": valgrind's command line, the program run with "      \
	"libmemcheck preloaded (leaks and heap errors)"
/* The MEMCHECK_LOG memcheck's valgrind command line sets for
 * --log-fd=N: this, then N (a descriptor, not a file: no "Parent PID:"
 * and no file of a child's own, vgtext.c) */
#define MC_VG_LOG_FD "/proc/self/fd/"
/* valgrind's head in its text, as valgrind 3.19 writes it at a process's
 * start: "==PID== " lines, the preamble, "Command:" with the words
 * (words: n bytes, each word ended by a NUL; exe, where not NULL, in
 * the first's place) written as valgrind writes them, "Parent PID:"
 * where ppid >= 0 (valgrind writes it where its text goes to a
 * --log-file), and an empty line. */
void mc_buf_vg_head(struct mc_buf *b, long pid, long ppid, const char *exe, const char *words,
		    size_t n);

/* ---- textout.c ------------------------------------------------------- */

/* Write all of s to fd, retrying short writes and EINTR, never raising
 * SIGPIPE; 0, or the error that stopped it (errno is left alone). */
int mc_write_all(int fd, const char *s, size_t n);
/* Open a file memcheck appends to (report, log, suppressions written):
 * created 0644, never waiting for a FIFO's reader (ENXIO), a symlink
 * followed only where protected_symlinks would (EPERM); -1 with errno. */
int mc_open_append(const char *path);
/* mc_open_append's errors said plainly. */
const char *mc_open_error(int err);
/* Append one record (n bytes at s) to path; what names the variable in
 * the one complaint per process and per *said (a static flag).  To a
 * pipe, a FIFO or a socket it waits wait seconds at most for room (at a
 * process's end what is left of mc_text_hold's bound), the rest dropped
 * (ETIMEDOUT).  0, or the error that stopped it. */
int mc_append(const char *path, const char *s, size_t n, const char *what, _Atomic int *said,
	      int wait);
/* Is the record mc_append returned err for not in its file (a stalled
 * reader, a full file)?  exitstatus.c's exit status counts it. */
bool mc_append_dropped(int err);

/* One line of memcheck's text (mc_text_fd), prefixed "memcheck[pid] program: ". */
void mc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A value a user set, in a line that says what was wrong with it and
 * what was expected: "%.*s%.*s" with MC_CUT_VALUE(v), its first 64 bytes
 * and "..." where it is longer than 96.  A line is cut at 1 KiB: a value
 * of 4 KiB whole left no room for the rest (harden46).  Inline: no code
 * placed in text-order.ld for it.  No "" literal: the linker merged a
 * hot function's "" into a cold copy (make place-check). */
static inline int mc_cut_value_len(const char *v)
{
	size_t n = strnlen(v, 97);
	return n > 96 ? 64 : (int)n;
}
#define MC_CUT_VALUE(v) mc_cut_value_len(v), (v), strnlen((v), 97) > 96 ? 3 : 0, "..."

/* Where memcheck's text goes: MEMCHECK_LOG's file, or standard error.
 * mc_text_open() takes MEMCHECK_LOG's value; mc_text_fd() opens the file
 * at the first write and checks before each later one that the
 * descriptor still names that file (the program may have closed it and
 * reused the number), opening it again if not; mc_text_after_fork()
 * makes a child of a %p pattern open its own. */
void mc_text_open(const char *pattern);
int mc_text_fd(void);     /* -1: nowhere (standard error was closed, or is
			   * another file than at start-up) */
void mc_text_after_fork(void);
/* A process with root's effective id is about to change its ids
 * (creds.c): MEMCHECK_LOG's file opened now and kept, as the report's. */
void mc_text_keep_log(void);
/* mc_write_all to mc_text_fd(): SIGPIPE blocked only where the file
 * can raise it. */
int mc_text_write(const char *s, size_t n);
/* A process memcheck only forwards for has no text: its copy of
 * standard error is closed. */
void mc_text_release_stderr(void);
/* A process's end (life.c: exit, _exit, a fatal signal's record): from
 * mc_text_hold on, the calling thread's text (mc_log, mc_text_write,
 * mc_write_all) is kept in memory, and written by mc_text_hold_end,
 * after the report's file and the ancestors' have been written and the
 * exit status decided: a reader that stalls (standard error a pipe
 * nobody reads) then holds up only the text, for at most wait_seconds
 * (MEMCHECK_TEXT_TIMEOUT), after which what it did not take is dropped. */
void mc_text_hold(int wait_seconds);
void mc_text_hold_end(void);
/* Where the held text ends now (0 where this thread holds none), and
 * the text held between two such marks taken back (a line that turned
 * out to have nothing to head: life.c's killed process's). */
size_t mc_text_hold_mark(void);
void mc_text_hold_cut(size_t from, size_t to);
/* The watchdog's: what is held written where that cannot wait. */
void mc_text_hold_salvage(void);
/* Descriptor 2 is about to be closed or replaced (fdkeep.c): the copy
 * of it memcheck writes to is made now, where it is still the file the
 * process started with. */
void mc_text_keep_stderr(void);
/* fdkeep.c's wrappers: the C library's functions they pass on to,
 * found[i] the definition after libmemcheck's of name[i], in this order
 * (life.c's walk finds them with the forwarding table). */
#define MC_FDKEEP_NAMES "close", "dup2", "dup3", "close_range", "closefrom", "fclose", \
		"freopen", "freopen64", "daemon"
#define MC_FDKEEP_N 9 /* the names above */
void mc_fdkeep_resolve(const char *const *name, void *const *found);
/* Descriptors memcheck keeps across the program's code (the copy of
 * standard error, MEMCHECK_LOG's file, sandbox.c's), which the program's
 * closes pass over (fdkeep.c): k registered (its fd may change later:
 * mc_fd_kept_low follows it) or forgotten; fd, where kept, moved to
 * another number before the program's call takes it; the kept ones in
 * [first, last] (at most cap, ascending) into out, their count. */
struct mc_kept_fd;
/* How many: MC_FD_KEPT_MAX registered (sandbox.c's kept files, each
 * registered once, are the most there are) and textout.c's own two
 * (the copy of standard error, MEMCHECK_LOG's file) beside them; a
 * range mc_fds_kept_in fills holds at most MC_FD_KEPT_ALL. */
#define MC_FD_KEPT_MAX 64
#define MC_FD_KEPT_ALL (MC_FD_KEPT_MAX + 2)
extern int mc_fd_kept_low; /* none below it (INT_MAX: none) */
void mc_fd_kept_add(struct mc_kept_fd *k);
void mc_fd_kept_forget(struct mc_kept_fd *k);
void mc_fd_kept_move(int fd);
int mc_fds_kept_in(unsigned first, unsigned last, int *out, int cap);
/* The program set RLIMIT_NOFILE: memcheck's kept descriptors moved above
 * its view where they lie below it (through rlimits.c's hook). */
void mc_text_fds_lift(void);
/* textout.c: the program set RLIMIT_FSIZE (limits.c): read it again */
void mc_text_fsize_forget(void);
/* textout.c: one write(2) to a regular file of memcheck's, SIGXFSZ held */
long mc_file_write(int fd, const void *s, size_t n);
/* stdout flushed first where it shares the text's file (process end) */
void mc_text_flush_stdout(bool text_on);
/* MEMCHECK_LOG's pattern with %p as pid and %% as %, into out[cap].
 * -1 when the pattern has another % (*bad: its offset) or the result
 * does not fit (*bad: SIZE_MAX); else the length. */
int mc_text_path(const char *pattern, long pid, char *out, size_t cap, size_t *bad);
/* rlimits.c's hook for mc_dup_high (see rlimits.c's section). */
void mc_fd_hook_set(int (*hook)(int fd));

/* ---- objects.c ------------------------------------------------------- */

/* A library's optional symbols, by the feature that needs them all
 * (symbolize.c and symtab.c's use of libdw): each slot a function
 * pointer of the caller's, written as dlsym's POSIX rationale writes
 * them.  mc_dl_bind_group binds every one and says whether all are
 * there: a feature whose group lacks one is off (an elfutils too old for
 * it). */
struct mc_dl_sym {
	void **slot;
	const char *name;
};
#define MC_DL_SYM(lvalue, name) { (void **)&(lvalue), name }
bool mc_dl_bind_group(void *handle, const struct mc_dl_sym *group, size_t n);
/* libmemcheck's own program headers (ElfW(Phdr)), *n of them, from the
 * linker's __ehdr_start: its ELF header, mapped at the start of its
 * first segment (linked from libmemcheck.a, the program's).  *bias (if
 * asked): the address less the link address of its first PT_LOAD, 0
 * where it lies at the address it was linked at. */
const void *mc_own_phdrs(int *n, uintptr_t *bias);
/* Is libmemcheck linked into the main program (libmemcheck.a) rather
 * than an object of its own?  The kernel's AT_PHDR is then its own
 * program headers.  Premise: the program headers lie in the first
 * PT_LOAD (PT_PHDR), as every linker lays an executable out. */
bool mc_own_is_program(void);
/* fn for each of libmemcheck's PT_LOAD segments where they are mapped,
 * [lo, hi) rounded out to whole pages, and whether it is writable;
 * none where libmemcheck is linked into the program (its pages are the
 * program's). */
void mc_own_image_each(void (*fn)(uintptr_t lo, uintptr_t hi, bool writable, void *arg),
		       void *arg);
/* The main program's program headers (ElfW(Phdr)), *n of them, from the
 * kernel's AT_PHDR, and *bias, the address less the link address, from
 * its PT_PHDR; NULL where it has none (no bias can be told). */
const void *mc_main_phdrs(size_t *n, uintptr_t *bias);
/* The GNU build ID among the ELF notes at n (size bytes: a SHT_NOTE
 * section's or a PT_NOTE segment's): its bytes (in n) and *len, or NULL. */
const unsigned char *mc_note_build_id(const unsigned char *n, size_t size, size_t *len);
/* The same from a loaded object's PT_NOTE segments, read in memory (no
 * file): eh its ELF header, bias its load bias; only notes inside a
 * readable PT_LOAD's file bytes, the program headers on the first page. */
const unsigned char *mc_image_build_id(const void *eh, uintptr_t bias, size_t *len);
/* Is memcheck part of the program, not only preloaded: linked from
 * libmemcheck.a, or a library some loaded object needs?  Only such a
 * program can call memcheck's functions. */
bool mc_linked_in(void);
/* Does a loaded object other than the one at path besides (and than lib
 * itself) need a library whose name has lib (DT_NEEDED)? */
bool mc_needed_besides(const char *lib, const char *besides);
const void *mc_object_base(const void *addr, const char **name);
/* dl_iterate_phdr, for memcheck's own walks: never under way while the
 * process forks (mc_walks_prefork and _postfork, in the fork handlers). */
struct dl_phdr_info;
int mc_walk_objects(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);
/* The dynamic linker's counts of the objects it loaded and unloaded
 * (dlpi_adds, dlpi_subs), read from the first object alone (~400
 * instructions): what memcheck keeps of the loaded objects (depot.c's
 * code segments, elfmod.c's table of the files' mappings) holds while
 * they are the same.  False where the C library gives none. */
struct mc_objects_gen {
	unsigned long long adds, subs;
};
int mc_first_object_gen(struct dl_phdr_info *info, size_t size, void *arg);
static inline bool mc_objects_gen(struct mc_objects_gen *g)
{
	return mc_walk_objects(mc_first_object_gen, g) == 1;
}
/* The executable PT_LOAD segment of a loaded object that holds pc, in
 * [*lo, *hi); false when pc is in no object's code. */
bool mc_code_segment(uintptr_t pc, uintptr_t *lo, uintptr_t *hi);
/* _dl_find_object, answered in a forked child from the table its fork
 * handlers noted while the loaded objects are those (glibc 2.35 and
 * later; mc_fork_objects_note, in the window that gives back what it
 * faults). */
struct dl_find_object;
int mc_find_object(const void *pc, struct dl_find_object *fo);
/* rtld_global: the dynamic linker's _rtld_global, or NULL. */
void mc_fork_objects_note(const void *rtld_global);
/* In a forked child, the objects as that note's walk saw them, while its
 * table holds, with no code of the C library's run (elfsym.c's look-ups
 * after the fork's window); -2 where it does not hold. */
int mc_walk_objects_noted(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);
/* The start of an object's lowest mapping, as _dl_find_object and dladdr
 * give it (mc_object_base): a non-PIE program's is not its load bias;
 * the noted one for an object of mc_walk_objects_noted (its program
 * headers not read: the vDSO's page, which the bare child never maps). */
const void *mc_object_map_start(const struct dl_phdr_info *info);
const void *mc_object_noted_start(const struct dl_phdr_info *info);
/* A dlclose begins (dlclose.c): the forked child's table no longer
 * answers. */
void mc_objects_closing(void);
/* How many have begun: what cfi.c's rows of recent FDEs hold while it
 * is the same. */
unsigned long mc_objects_closes(void);
/* Walks take the lock fork waits for from now on: before the fork
 * handlers are registered (life.c), never in a process left out. */
void mc_walks_lock_from_now(void);
void mc_walks_prefork(void);
void mc_walks_postfork(bool child);

/* ---- progname.c ------------------------------------------------------ */

const char *mc_program(void);
/* The program's arguments after argv[0] as the constructor found them
 * (life.c): the first's and the last's strings, which the kernel lays
 * out one after another; NULL without arguments. */
extern const char *mc_args_first, *mc_args_last;
static inline void mc_args_note(int argc, char **argv)
{
	if (argc > 1 && argv) {
		mc_args_first = argv[1];
		mc_args_last = argv[argc - 1];
	}
}
/* The key as 16 hex digits and a NUL at w (17 bytes); the NUL's
 * address. */
char *mc_args_key_at(char *w);
/* The arguments' files' key (what the regular files the arguments name
 * hold; "0000000000000000" with none) alike: paired on only where the
 * other report has a record of both keys. */
char *mc_args_files_at(char *w);
/* When the process region began, on mc_now's clock; 0 before (region.c;
 * weak: the command links progname.c without region.c) */
double mc_process_t0(void) __attribute__((weak));
/* Standard input is about to be closed or replaced (fdkeep.c, where
 * the process writes a report): its part of the key taken now. */
void mc_args_stdin_note(void);
/* The program is about to take away its own right to open files
 * (sandbox.c, gate.c, where a record or a baseline needs the key): its
 * arguments' files' key taken now. */
void mc_args_files_note(void);
/* ,"args_hash":"<16 hex digits>": the key of the arguments that pairs a
 * process's records with the baseline's of the same command; and
 * ,"args_files":"<16 hex digits>" where an argument names a file. */
void mc_args_json(struct mc_buf *b);
/* Does the executable at path (absolute) match one of MEMCHECK_PROGRAMS's
 * ':'-separated patterns?  A pattern with a '/' is matched against path,
 * one without against its last component. */
bool mc_program_matches(const char *patterns, const char *path);
/* fnmatch(pat, s, 0) == 0 in the C locale, pat the len bytes at pat (no
 * NUL needed), in memcheck's own code (progname.c says why). */
bool mc_glob_match(const char *pat, size_t len, const char *s);
/* Is one of the patterns '*' alone, which every program matches (no path
 * needed)? */
bool mc_programs_every(const char *patterns);
/* The last '/' of s, or NULL: strrchr in a loop of memcheck's own, for
 * the process verdict, which runs before start-up's window opens
 * (footprint.c: a block of C library code only memcheck touched there
 * would count as the program's). */
const char *mc_last_slash(const char *s);
/* The value of the first "name=" in environ, or NULL: getenv's answer
 * for a non-empty name (getenv is gslice.c's, above this layer). */
const char *mc_env_value(const char *name);
/* A left-out process's start-up compares strings in these loops of its
 * own, not the C library's: each C library function called there is a
 * lazy binding (~700 instructions) and may fault in a 64 KiB block of
 * the C library's code that the program itself never touches. */
static inline bool mc_str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* memcmp(a, b, n) == 0, for the same reason, and in the program's time
 * too: the C library's memcmp, which a program may never call, lies in
 * a 64 KiB block of its string functions that memcheck's first stack
 * capture (ownread.c's header checks) and the depot's lookups faulted in
 * and the program's RSS held (perf trace -F all, plain_rss_exit under
 * glibc: +64 KiB at its end). */
static inline bool mc_mem_eq(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	/* eight bytes a step (ownread.c's program headers: a byte a step
	 * was 10.6 K instructions more in a measured /bin/date, callgrind) */
	for (; n >= 8; x += 8, y += 8, n -= 8) {
		uint64_t u, v;
		__builtin_memcpy(&u, x, 8);
		__builtin_memcpy(&v, y, 8);
		if (u != v)
			return false;
	}
	while (n && *x == *y)
		x++, y++, n--;
	return n == 0;
}

/* The same for n words (stacks' frames): a word at a time, as fast as
 * memcmp's call for the depot's 1-64 frames. */
static inline bool mc_words_eq(const uintptr_t *a, const uintptr_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Does s contain word? */
static inline bool mc_str_has(const char *s, const char *word)
{
	for (; *s; s++) {
		size_t i = 0;
		while (word[i] && s[i] == word[i])
			i++;
		if (!word[i])
			return true;
	}
	return false;
}

/* s past prefix, or NULL when s does not begin with it. */
static inline const char *mc_str_after(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return NULL;
	return s;
}

/* A walk over envp (may be NULL): the value of its first entry named
 * name, which ends at its NUL or at end ('=': an entry of another
 * environment, as execenv.c asks it of the environment an exec is
 * given); an empty name has none.  An entry is rejected on its first
 * byte, the name's held in a register (doc/costs.md env53: the name
 * reloaded at each entry took 2.3x the C library's getenv over 41
 * entries; check reads CK_MAX_MSG_SIZE at every message).  Inline:
 * mc_env_value's call of an out-of-line walk took 0x40 bytes of group
 * 1t's room (text-order.ld). */
static inline const char *mc_envp_value(char *const *envp, const char *name, char end)
{
	const char c0 = name[0];
	if (!envp || !c0 || c0 == end)
		return NULL;
	for (char *const *e = envp; *e; e++) {
		if (**e != c0)
			continue;
		const char *s = *e + 1, *n = name + 1;
		while (*n && *n != end)
			if (*s++ != *n++)
				goto next;
		if (*s == '=')
			return s + 1;
	next:;
	}
	return NULL;
}

/* ---- sort.c ---------------------------------------------------------- */

/* base[0, n) of size-byte elements (at most 64) sorted by cmp, stably, in
 * place, without malloc (qsort may call it). */
void mc_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* ---- rlimits.c ------------------------------------------------------- */

/* rlimits.c: the program's RLIMIT_AS and RLIMIT_DATA without memcheck's
 * own mappings.  mc_rlimit_set/get: the process's own limit set or read
 * as the program sees it (get: false where the program set none of that
 * resource, the kernel's is its view). */
struct rlimit64;
int mc_rlimit_set(int resource, const struct rlimit64 *want);
bool mc_rlimit_get(int resource, struct rlimit64 *out);
void mc_rlimits_lock(void);
void mc_rlimits_unlock(void);
/* Start-up: an inherited RLIMIT_AS/RLIMIT_DATA taken as the program's
 * view (memcheck's own mappings left out where the hard limit allows);
 * an exec: the kernel's soft limits back to the views (true: moved; the
 * exec failed: mc_rlimits_exec_failed). */
void mc_rlimits_inherited(void);
bool mc_rlimits_exec(void);
void mc_rlimits_exec_failed(void);
/* Where memcheck's own mappings took from the program's RLIMIT_AS or
 * RLIMIT_DATA (soft = hard, not raisable): the limit's name, the
 * program's limit and memcheck's bytes counted against it. */
bool mc_rlimits_short(const char **name, uint64_t *limit, uint64_t *bytes);
/* An allocation failed (account.c): the first's moment is the one
 * mc_rlimits_short's bytes are taken at. */
void mc_rlimits_failed(void);
/* RLIMIT_NOFILE too: memcheck's own work that may open files (a region's
 * end, the exit, a heap error's report) runs between these two, which
 * give it room above the program's view (rlimits.c); textout.c's
 * mc_dup_high copies a descriptor into that room through the hook. */
void mc_fds_room_begin(void);
void mc_fds_room_end(void);

/* ---- programs.c ------------------------------------------------------ */

/* Does the program whose executable is exe (absolute, symbolic links
 * resolved) get the process region: MEMCHECK_PROGRAMS's patterns, or
 * by default every program not installed on the system and not an
 * interpreter running a script? */
bool mc_program_under_test(const char *exe);
/* Does exe lie in the system's program directories (the default's
 * first half)? */
bool mc_program_installed(const char *exe);
/* Does this process get the process region (MEMCHECK_PROCESS: on, or
 * auto and preloaded), and is its program one under test?  NO_EXE: it
 * does, the executable could not be read (errno says why).  Needs the
 * options and the environment only. */
/* Does LD_PRELOAD's value pre name this libmemcheck: a word whose file
 * name begins with "libmemcheck", or is the one this copy was loaded
 * from? */
bool mc_preloads_memcheck(const char *pre);
enum { MC_PROCESS_NONE, MC_PROCESS_MEASURED, MC_PROCESS_LEFT_OUT, MC_PROCESS_NO_EXE };
int mc_process_verdict(void);

/* ---- exitstatus.c ---------------------------------------------------- */

/* Change the exit status at exit when a region failed: _region_ended at
 * every region's end (region.c), _handled for memcheck_handled() (false:
 * the last region did not fail).  _region_incomplete instead where a
 * region failed only because a killed process's scan was given up
 * (MEMCHECK_FATAL_SCAN_MS): not a failure the ancestors take. */
void mc_exit_region_ended(bool pass);
void mc_exit_region_incomplete(void);
/* The status to exit with (life.c's on_exit handler calls exit() again
 * with it where it differs; its _exit gives it to the real _exit). */
int mc_exit_status(int status);
/* After a fatal signal's record (life.c): its failure to the ancestors. */
void mc_exit_killed(void);
/* A JSON report record dropped, its reader stalled (report.c): a
 * process about to exit 0 exits with MEMCHECK_EXITCODE, said. */
void mc_exit_record_dropped(void);
/* Regions failed in this process and not handled (memcheck_handled). */
unsigned mc_exit_failed_regions(void);
bool mc_exit_handled(void);
void mc_exit_after_fork_child(void);

/* ---- descend.c ------------------------------------------------------- */

/* The status the program exits with, its own (before mc_exit_status),
 * set by life.c just before the regions' ends at exit and _exit: the
 * records written there say it (report.c's "exit_status"), and a
 * process that chose it non-zero fails no ancestor (mc_descend_fail);
 * -1 before (a killed process's record). */
extern int mc_exit_own;
/* At the exit of a process whose regions failed: a record for each
 * measured ancestor (MEMCHECK_ANCESTORS). */
void mc_descend_fail(unsigned regions);
/* At a process's exit: did a descendant leave a record for it (read,
 * removed; said where say)? */
bool mc_descend_failed(bool say);
/* The same, taken for memcheck_descendants_failed: how many descendant
 * processes failed, the first's pid, regions failed and program (in
 * program, size bytes). */
unsigned mc_descend_take(unsigned long long *pid, unsigned long long *regions, char *program,
			 size_t size);

/* ---- footprint.c ----------------------------------------------------- */

/* memcheck's own resident memory (M), kept out of every RSS figure a
 * region reports.  A change of M is bracketed: mc_own_before(bytes)
 * before it (true: the program's peak so far was folded and the lock is
 * held), mc_own_after(that, signed bytes) after it: ownmap.c's mc_map
 * and mc_own_grow call them through struct mc_map_hooks. */
void mc_footprint_populate(bool tracking); /* tracking: mc_opt.track */
/* wanted: the RSS figures are measured from start-up (life.c); else
 * none of footprint.c's /proc reads is made until mc_footprint_want, and
 * the figures are MEMCHECK_UNKNOWN (*rss_now of the take and restart
 * below, which then read and reset nothing). */
void mc_footprint_init(bool wanted);
/* A region begun through the API: its figures are measured (region.c). */
void mc_footprint_want(void);
/* Are the RSS figures measured (from start-up, or since mc_footprint_want)? */
bool mc_footprint_measuring(void);
/* A thread's start reads the kernel's mark (footprint.c): the first
 * one, where mc_fp_thread_observe is set (tested inline at every
 * thread's start, threadstart.c). */
extern _Atomic bool mc_fp_thread_observe;
void mc_footprint_thread_observe(void);
/* The live bytes at which libmemcheck's code is made present, before
 * the program's peak (footprint.c mc_footprint_heap_grown); 0 while none
 * is due (the test subtracts one: one compare, never true at 0):
 * account.c tests it at each new peak of the live bytes. */
extern uint64_t mc_fp_heap_at1;
void mc_footprint_heap_grown(void);
/* The program unmaps len bytes (mappings.c's munmap, before the system
 * call), where mc_fp_releases is set (a measured process, from its
 * first region's take to its end): the RSS before the release, summed
 * exactly, joins the peak (footprint.c). */
extern bool mc_fp_releases;
void mc_footprint_release(size_t len);
#define MC_FP_HEAP_DUE(peak) \
	(__builtin_expect((uint64_t)(peak) > mc_fp_heap_at1 - 1, 0))
/* No RSS figure read from here on: memcheck bypassed under valgrind,
 * whose process's RSS it would be (life.c). */
void mc_footprint_off(void);
/* blocks.c: the block table's MIN_CAP arrays reserved, after
 * mc_stacks_init (the lazy ranges before it carved together). */
void mc_blocks_init_small(void);
bool mc_own_before(size_t bytes);
void mc_own_after(bool folding, int64_t bytes);
/* A lazily touched mapping, measured with mincore; _remove: false if p
 * was not one. */
void mc_own_lazy(const void *p, size_t len);
bool mc_own_lazy_remove(const void *p, size_t len);
/* Around memcheck's own work (start-up, a region's scan and report,
 * symbolization): what the RSS grows by meanwhile is memcheck's, and the
 * high-water mark meanwhile is not the program's.  fold_first: set aside
 * the program's peak since the last take first (false right after one:
 * a region's end, which took it; start-up, before any region). */
void mc_own_work_begin(bool fold_first);
/* mc_own_work_begin(false) right after mc_prog_peak_take, whose RSS and
 * M reading it reuses (a region's end). */
void mc_own_work_begin_taken(void);
/* start-up's window again, for the constructor's work where start-up ran
 * before it (another object's initializer called memcheck first): its
 * objects' read-only pages given back at its end (footprint.c) */
void mc_own_work_begin_start(void);
/* a forked child's handlers' window, as start-up's: every read-only
 * page of the objects present at its end given back (footprint.c);
 * true where it will be (the figures measured) */
bool mc_own_work_begin_fork(void);
void mc_own_work_end(void);
void mc_own_work_end_process(void); /* the process region's: see footprint.c */
/* start-up's, where the process region begins next: settled by its
 * mc_prog_peak_restart with the same reads (footprint.c) */
void mc_own_work_end_start(void);
void mc_own_work_settle(void); /* a due window's end settled now */
/* The program's RSS now, and its peak RSS since the last take (the
 * whole process's when the kernel's mark cannot be reset: *whole_process
 * then says so), which restarts it; *rss_now: the RSS now, as
 * mc_prog_rss.  Both without memcheck's own memory. */
uint64_t mc_prog_rss(void);
/* *alone (if not NULL): the status read for the peak said the calling
 * thread was the process's only thread (false when no read was made). */
uint64_t mc_prog_peak_take(bool *whole_process, uint64_t *rss_now, bool *alone);
/* The same where nothing would take the peak (the outermost region
 * begins): the mark restarts, *rss_now as above, and the peak before is
 * not read. */
void mc_prog_peak_restart(bool *whole_process, uint64_t *rss_now);
uint64_t mc_own_bytes(void);
void mc_footprint_lock(void);
void mc_footprint_unlock(void);
void mc_footprint_after_fork_child(void);
/* At exit: the kernel's high-water mark is no longer reset, so the
 * process's max RSS as its parent reads it stays its own. */
void mc_footprint_final(void);
/* memcheck's destructor's own work after its take is done: what it left
 * is not the program's exit code's (footprint.c's exit stretch). */
void mc_prog_peak_exit_base(void);
/* Before that work: the objects' read-only pages present noted, those
 * it faults given back at mc_prog_peak_exit_base. */
void mc_prog_peak_exit_note(void);
/* Before the destructor's takes, where that work follows them: M's
 * growth in it measured at mc_prog_peak_exit_base. */
void mc_prog_peak_exit_open(void);
/* peak raised to what the program reached after the destructor's take,
 * in the exit code that ran before the on_exit handler (footprint.c). */
uint64_t mc_prog_peak_exit(uint64_t peak);
/* end replaced by the program's RSS where the on_exit handler read it
 * (footprint.c exit_read), the process's very end. */
uint64_t mc_prog_rss_exit(uint64_t end);
/* The highest kernel mark memcheck's resets threw away, in kB (0: none);
 * lock-free, for getrusage (rusage.c), which a signal handler may call. */
uint64_t mc_footprint_mark_lost_kb(void);
/* startpages.c: the loaded objects' read-only pages present at
 * footprint.c's first measure noted (fd: pagemap), those start-up's
 * window made present given back at its end; a forked child's
 * forgotten. */
void mc_start_pages_note(int fd, bool headers);
void mc_start_pages_give_back(int fd);
void mc_start_pages_none(void);
void mc_start_pages_forget(void);
/* start-up's give-back's runs (mc_start_given of them, 0 where none
 * was given back) given back again, those pages of them still the
 * file's own (start.c, after the program's start withdrew memcheck's
 * constructor exit entry) */
extern int mc_start_given;
void mc_start_pages_again(void);
/* After the process's last report: the kernel's mark raised back to the
 * lost one, for the parent (footprint.c). */
void mc_footprint_mark_restore(void);

/* ---- ownread.c ------------------------------------------------------- */

/* memcheck's own read-only mapping ("view") of the part of an object's
 * file that holds its call-frame tables, which cfi.c reads there rather
 * than in the program's mapping (see ownread.c). */
struct mc_own_view {
	uintptr_t lo, hi; /* the segment viewed, at the program's addresses */
	uintptr_t delta;  /* the view's address of a byte less the program's */
};
struct link_map;
/* The view of the object with link map lm, whose .eh_frame_hdr the
 * program maps at hdr and its ELF header at image (_dl_find_object's
 * dlfo_map_start), made at its first call; false where it has none (cfi.c
 * then reads the program's mapping). */
bool mc_own_view(uintptr_t hdr, uintptr_t image, const struct link_map *lm,
		 struct mc_own_view *v);
/* Whether lo is in one of the views: /proc/self/maps names a view by
 * its object's file, and what reads it for the objects' mappings
 * (resident.c's mc_maps_each: sandbox.c's files kept, elfmod.c's and
 * symbolize.c's runs) would take it for the object's. */
bool mc_own_view_at(uintptr_t lo);
/* n bytes at the program's address at, in an object's segment of the
 * part that has a view (its .rodata, where the linker puts it there),
 * copied to out from memcheck's view where the RSS figures are
 * measured, so the program's mapping faults nothing; elsewhere, or
 * without a view, from the program's mapping. */
void mc_own_read(const void *at, void *out, size_t n);
/* Views are made from now on (footprint.c, once the RSS figures are
 * measured: until then cfi.c reads the program's mapping, and a read
 * costs no system call); whether they are. */
void mc_own_read_on(void);
bool mc_own_read_recording(void);
/* The views mapped now, at most cap of them into out (how many), those
 * of objects unloaded since unmapped first (footprint.c counts their
 * pages in M). */
#define MC_OWN_VIEWS 64
struct mc_own_span {
	uintptr_t lo, hi;
};
int mc_own_views(struct mc_own_span *out, int cap);

/* ---- dlstate.c ------------------------------------------------------- */

/* The program's pending dlerror() message kept across memcheck's own
 * dlopen and dlsym: save before them, restore after (in the same
 * thread; brackets nest). */
struct mc_dlerror {
	void **slot;
	void *saved;
};
void mc_dlerror_save(struct mc_dlerror *s);
void mc_dlerror_restore(struct mc_dlerror *s);

/* ---- elfsym.c -------------------------------------------------------- */

/* Symbol lookup without the dynamic linker's help: it never allocates and
 * never takes an executable's canonical PLT entry for a definition.
 * Objects are named by where their mapping starts (mc_object_base). */
/* name's definition in the object at base, or NULL. */
void *mc_sym_in(const void *base, const char *name);
/* The same, and *size its symbol's size (0 when not found): what
 * dladdr1(RTLD_DL_SYMENT) tells, without its walk of every symbol. */
void *mc_sym_in_sized(const void *base, const char *name, size_t *size);
/* found[i]: names[i]'s definition in the object at base, or NULL; one
 * walk of the objects for all n. */
void mc_sym_in_each(const void *base, const char *const *names, void **found, size_t n);
/* The program (the executable) refers to name, undefined in its dynamic
 * symbol table (weak or not). */
bool mc_program_refers(const char *name);
/* The first definition of name in any object (as RTLD_DEFAULT finds it,
 * less canonical PLT entries), or NULL; *where (when not NULL) gets the
 * start of the defining object. */
void *mc_sym_first(const char *name, const void **where);
/* The same in the objects loaded after libmemcheck (as RTLD_NEXT). */
void *mc_sym_next(const char *name, const void **where);
/* mc_sym_next(name), found once and kept in *cache (NULL until then):
 * for a wrapper's next definition, from any thread, allocating nothing. */
void *mc_sym_next_cached(const char *name, void **cache);
/* found[i]: mc_sym_next(names[i]), for up to MC_SYM_EACH_MAX names. */
#define MC_SYM_EACH_MAX 20
struct mc_sym_next_req {
	const char *const *names;
	void **found;
	size_t n;
};
/* name's first definition, or, when that is skip, the next one after
 * it; *first the first, *where the start of the returned one's object,
 * in which names[i] are looked up too (found[i]); and next (when not
 * NULL) answered.  One walk. */
void *mc_sym_first_but(const char *name, const void *skip, void **first, const void **where,
		       const char *const *names, void **found, size_t n,
		       const struct mc_sym_next_req *next);

/* ---- ownheap.c ------------------------------------------------------- */

/* The heap for the malloc calls memcheck's own work makes (guard held,
 * or before the allocator is known): never the program's allocator.
 * Its memory is a static arena, then a range [mc_ownheap_lo, +
 * mc_ownheap_len) reserved once that is used up; a pointer inside
 * either is one of its blocks. */
extern char mc_ownheap_static[256 * 1024];
extern uintptr_t mc_ownheap_lo, mc_ownheap_len;
static inline bool mc_ownheap_has(const void *p)
{
	return (uintptr_t)p - (uintptr_t)mc_ownheap_static < sizeof mc_ownheap_static ||
	       (uintptr_t)p - mc_ownheap_lo < mc_ownheap_len;
}
/* One range holding both (and whatever lies between them): the
 * count-only free's one test (interpose.c), where a pointer inside it
 * takes the slow path, which asks mc_ownheap_has.  Premise, for speed
 * only: the reserved range lies near the static arena (memcheck's own
 * mappings above its library); a program block between them is freed
 * the slow way, counted the same. */
extern uintptr_t mc_ownheap_span_lo, mc_ownheap_span_len;
/* NULL with errno ENOMEM: no such block; NULL with errno 0: this heap
 * cannot serve (no range, or full): use the allocator. */
void *mc_ownheap_alloc(size_t align, size_t n, bool zero);
void mc_ownheap_free(void *p);
void *mc_ownheap_realloc(void *p, size_t n);
size_t mc_ownheap_size(const void *p);
void mc_ownheap_lock(void);
void mc_ownheap_unlock(void);
void mc_ownheap_after_fork_child(void);

/* ---- forward.c ------------------------------------------------------ */

/* The allocator memcheck forwards to.  Functions the allocator lacks are
 * built from the ones it has, never taken from another allocator. */
struct mc_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	size_t (*usable_size)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	const char *object;       /* path of the object that exports malloc */
	const void *base;         /* where that object starts (mc_object_base) */
};
extern struct mc_real mc_real;
/* The C library's __libc_start_main, which start.c's calls: found in
 * start-up's walk of the objects (life.c), NULL until then. */
extern void *mc_next_start_main;
/* start.c: the C library's __cxa_atexit and on_exit, which its wrappers
 * call, set in start-up's walk (life.c); memcheck's exit handler
 * registered (life.c's constructor: 0 or the C library's failure), taken out of the exit-function lists' slots where it can
 * be (start.c's head); mc_start_ctor_ran: life.c's constructor ran (not
 * yet at the start of a program linked with libmemcheck.a);
 * mc_start_exit_lost: its registration at exit failed (the destructor
 * ends the regions) */
extern void *mc_next_cxa_atexit, *mc_next_on_exit;
extern bool mc_start_ctor_ran, mc_start_exit_lost;
int mc_start_exit_register(void (*fn)(void *, int), void *mark);
/* Fill mc_real and find libmemcheck's own code (mc_text_lo): life.c, at
 * start-up.  self_malloc: memcheck's own malloc (interpose.c's); next:
 * more names to find as mc_sym_next does, in the same walk. */
void mc_forward_resolve(const void *self_malloc, const struct mc_sym_next_req *next);
/* A block memcheck's own work got from malloc with the guard held
 * (libdw's), freed where it came from: ownheap.c or the allocator. */
void mc_forward_free(void *p);

/* blocks.h's: a thread's groups of the block table, and the last unit it
 * found a group of its own in, with that group's first shard. */
struct shard;
struct mc_blocks_here {
	unsigned mine;          /* bit g: this thread owns group g */
	uintptr_t unit;         /* the unit's last byte (ptr | UNIT_LAST); 0:
				 * none, so that a new thread's zeroed one
				 * matches no unit */
	struct shard *group;    /* its group's first shard */
};

/* Recursion guard: while set, this thread's calls pass straight through
 * uncounted.  Used around everything memcheck itself does. */
/* What the wrappers read on every call, in one place: one thread-local
 * address to compute instead of two. */
struct mc_thread {
	int in_hook;                 /* the recursion guard */
	int sig_pending;             /* signals.c has calls to record (1), or
				      * threads.c a stop owed (MC_STOP_PENDING) */
	struct mc_totals *totals;    /* account.c: the thread's own counters,
				      * in count-only mode */
	struct mc_totals *fast;      /* totals while the guard is down, else
				      * NULL: the count-only path's one test */
	int in_real;                 /* inside a call to the allocator made
				      * with the guard held: a malloc it makes
				      * through the public names (glibc's
				      * reallocarray calls realloc) is the
				      * program's, not memcheck's (ownheap.c) */
	uintptr_t *cxx_frame;        /* cxxnew.c, tracking: the frame of the
				      * program's call to an operator new or
				      * delete being forwarded, or NULL */
	uintptr_t cxx_ret;           /* its return address when it was set */
	/* account.c's, here so that its tracking paths find them from the
	 * one thread-local address they compute for the guard anyway (each
	 * thread-local variable of its own cost a load of its offset) */
	struct mc_slot *slot;        /* the thread's counters, or NULL */
	struct mc_slot *own_slot;    /* slot where it is the thread's own,
				      * else NULL (not the shared slot): the
				      * tracking paths' one test */
	int disabled;                /* memcheck_disable() depth */
	struct mc_blocks_here blocks; /* blocks.h's */
	int in_getattr;              /* threadattr.c: inside the program's
				      * pthread_getattr_np on this thread,
				      * which holds the thread's lock while it
				      * allocates (mc_stack_bounds) */
	/* threads.c: a scan's stop that came with the guard up, owed when
	 * it comes down (the scan it was for, 0: none), and the scan whose
	 * stop was put off so once already */
	uint32_t stop_owed, stop_put_off;
	int dtv_window;              /* account.c's mc_account_dtv_begin:
				      * inside the C library's pthread_create
				      * from memcheck's, whose DTV has an
				      * entry of memcheck's (count it so);
				      * here, where table_wait had padding */
	uintptr_t table_wait;        /* blocks.c: waiting to enter a shard,
				      * before any change to the table (not
				      * 0): lock_slow's frame pointer; or,
				      * spinning for one of the locks a scan
				      * holds (mc_spin_wait), the stack pointer
				      * there | 1, the callee-saved registers
				      * spilled above it: what a scan reads of
				      * a thread no signal stops (roots.c's
				      * table_wait_sp) */
	int own_frames;              /* threadstart.c: inside the C library's
				      * pthread_create from memcheck's, whose
				      * frame lies under what it allocates
				      * (depot.c stores the stack without it);
				      * signals.c: a handler run from its
				      * trampoline */
	void *moved_uc;              /* fatal.c: a handler moved off memcheck's
				      * alternate stack runs (mc_fatal_beside):
				      * the kernel's ucontext, whose registers
				      * go on under it (stacks.c's walk) */
};
/* A call to the allocator made with the guard held. */
#define MC_REAL(call)                                                          \
	({                                                                     \
		mc_self.in_real++;                                             \
		__typeof__(call) mc_real_r_ = (call);                          \
		mc_self.in_real--;                                             \
		mc_real_r_;                                                    \
	})
extern MC_TLS struct mc_thread mc_self;
#define mc_in_hook (mc_self.in_hook)
static inline void mc_guard_enter(void)
{
	mc_self.in_hook++;
	mc_self.fast = NULL;
}
/* The guard came down with calls a signal handler made meanwhile: the
 * hook signals.c sets (mc_guard_drain_set) records them. */
void mc_guard_drain(void);
void mc_guard_drain_set(void (*fn)(void));
/* threads.c's stop, put off while the guard was up (mc_self.stop_owed):
 * made first when the guard comes down. */
void mc_guard_stop_set(void (*fn)(void));
/* That stop made now, where the caller knows the table unchanged. */
void mc_guard_stop_owed(void);
#define MC_STOP_PENDING 2
static inline void mc_guard_leave(void)
{
	if (--mc_self.in_hook == 0) {
		mc_self.fast = mc_self.totals;
		/* A signal handler that ran while the guard was up left calls
		 * to record (signals.c); the fence keeps the test after the
		 * guard is down. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (unlikely(mc_self.sig_pending))
			mc_guard_drain();
	}
}
static inline void mc_set_totals(struct mc_totals *t)
{
	mc_self.totals = t;
	mc_self.fast = mc_self.in_hook ? NULL : t;
}

/* A thread's own counter: only its thread writes it; region ends read it
 * from others with relaxed loads.  On x86-64 one add to memory does it (a
 * single instruction cannot be seen half done, and it needs no lock
 * prefix: nobody else writes); elsewhere a relaxed load and store. */
static inline void mc_add_own(uint64_t *c, uint64_t v)
{
#if defined(__x86_64__)
	if (__builtin_constant_p(v) && v == 1)
		__asm__("incq %0" : "+m"(*c));
	else
		__asm__("addq %1, %0" : "+m"(*c) : "er"(v));
#else
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
#endif
}

/* v < *bound and v - *lo < *len, each bound read once, relaxed, by the
 * compare itself: gcc folds no atomic (nor volatile) load into an
 * operand, and the count-only wrappers' tests are most of what they add
 * to a call (a mov each: 3 of the 24.5 instructions of a malloc_bench
 * step).  An aligned 8-byte operand is read whole on x86-64. */
static inline bool mc_below_relaxed(size_t v, const size_t *bound)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool below;
	__asm__("cmpq %2, %1" : "=@ccb"(below) : "r"(v), "m"(*bound));
	return below;
#else
	return v < __atomic_load_n(bound, __ATOMIC_RELAXED);
#endif
}

static inline bool mc_in_range_relaxed(uintptr_t v, const uintptr_t *lo, const uintptr_t *len)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool in;
	__asm__("subq %2, %0\n\tcmpq %3, %0" : "+r"(v), "=@ccb"(in) : "m"(*lo), "m"(*len));
	return in;
#else
	return v - __atomic_load_n(lo, __ATOMIC_RELAXED) < __atomic_load_n(len, __ATOMIC_RELAXED);
#endif
}

/* A spin lock for short critical sections that never call out: pause,
 * then yield (two cores and four threads: the holder may be off the CPU). */
static inline void mc_spin_lock(atomic_int *l)
{
	for (int spins = 0;; spins++) {
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		if (spins > 64)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
}

/* mc_spin_lock for the locks a scan holds (the block table's shards,
 * the live bytes'), its wait past the first 64 spins in blocks.c's
 * mc_spin_wait: it yields until the lock is free, its stack pointer | 1
 * in mc_self.table_wait meanwhile, the callee-saved registers spilled
 * above it.  A thread that blocks every signal (userspace-rcu's
 * call_rcu worker) and calls free while a scan holds those locks waits
 * there, running, where no system call shows its stack pointer:
 * roots.c reads it from there up (table_wait_sp), not whole. */
void mc_spin_wait(atomic_int *l);
static inline void mc_spin_lock_noted(atomic_int *l)
{
	for (int spins = 0; spins <= 64; spins++) {
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		__builtin_ia32_pause();
	}
	mc_spin_wait(l);
}

/* How far start-up has come (life.c moves it on; the wrappers test it):
 * NONE -> RESOLVING -> FORWARDING (calls pass through uncounted while
 * the rest of memcheck starts) -> READY; back to FORWARDING when
 * bypassed or after the last report. */
enum { MC_NONE, MC_RESOLVING, MC_FORWARDING, MC_READY };
extern _Atomic int mc_state;
/* READY with tracking on: the wrappers may jump to mc_track_*.  Count-only
 * mode without a thread's counters yet goes the slow way, whose guard
 * functions then open the count-only path (mc_self.fast). */
extern _Atomic int mc_track_ready;
/* mc_track_ready's values but 0: tracking, the sites (snapshot.c's
 * mc_sites_on, fixed before) counted or not: the wrappers call the hot
 * paths built for the one or the other (account.c) */
#define MC_TRACK_PLAIN 1
#define MC_TRACK_SITES (-1) /* by its sign: the wrappers' one test tells 0, 1, -1 */
/* A program left out at start-up that only forwards (life.c): set once,
 * before mc_state leaves RESOLVING, never cleared.  The wrappers then
 * jump straight to the allocator, tested after the measured paths'
 * own tests so that those pay nothing for it. */
extern _Atomic int mc_pass;
/* This thread is filling the forwarding table (its calls are memcheck's). */
extern MC_TLS int mc_resolving_here;
/* 1 when the program's malloc calls reach memcheck. */
extern int mc_is_active;
/* Calls are counted: memcheck is ready, not bypassed, not done. */
bool mc_counting(void);

/* libmemcheck's own code, [lo, lo + len): found at start-up. */
extern uintptr_t mc_text_lo, mc_text_len;

/* The frame of the program's call into the malloc family, from the frame
 * of the memcheck function that asks.  Wrappers reach the functions that
 * record by jumps, so at -O2 that frame is already the call's (its return
 * address is in the program); a build that makes calls instead (-O0)
 * leaves wrapper frames below it, skipped here. */
static inline void *mc_call_frame(void *fp)
{
	uintptr_t *f = fp;
	/* the bounds read by the compare (two movs fewer each tracked
	 * malloc and free: gcc kept them in registers across the call) */
	while (unlikely(mc_in_range_relaxed(f[1], &mc_text_lo, &mc_text_len)))
		f = (uintptr_t *)f[0];
	return f;
}

/* The frame of the program's call, in a function the wrapper reached by a
 * jump (MC_FRAMELESS); where the compiler called instead (clang at -O0)
 * the wrapper's frame lies below and is skipped. */
#define MC_CALL_FRAME() mc_call_frame(__builtin_frame_address(0))

/* Wrappers with a short path of their own need no frame pointer (the
 * library is built with them for its stack walks): the slow paths keep
 * theirs.  Saves a push, a move and a restore per call under gcc.  That
 * is only right while the wrappers jump, never call, to the functions
 * that record (see mc_call_frame), so they are always optimized, sibling
 * calls included, whatever the rest of the build (-O0, -O1). */
#if defined(__GNUC__) && !defined(__clang__)
#define MC_FRAMELESS \
	__attribute__((optimize("O2", "omit-frame-pointer", "optimize-sibling-calls")))
#else
#define MC_FRAMELESS
#endif

/* ---- life.c ---------------------------------------------------------- */

/* Make sure start-up has run: the forwarding table filled, every module
 * started.  Safe to call from any thread at any time; only the first
 * call does work.  The one call up the layers every entry point makes:
 * memcheck may be called before its constructor runs. */
void mc_resolve(void);
/* mc_resolve as the wrappers of the malloc family and operator new call
 * it: a process left out at start-up keeps the two options it parsed
 * there, where mc_resolve (the memcheck_* API's) parses the rest once. */
void mc_resolve_calls(void);

/* ---- interpose.c ----------------------------------------------------- */

/* memcheck's own malloc, whatever the global symbol resolves to. */
extern __typeof__(void *(size_t)) mc_self_malloc;
/* True when a call made now must pass straight through, uncounted:
 * during start-up, inside memcheck's own work (the guard), bypassed. */
bool mc_uncounted(void);
/* life.c's start-up probe: the next malloc call on this thread, if it
 * reaches memcheck, is answered by memcheck alone; seen says whether it
 * did.  Call with the guard held. */
void mc_probe_arm(void);
bool mc_probe_seen(void);

/* ---- cxxnew.c -------------------------------------------------------- */

/* Find the next definition of each operator new and delete; allocator:
 * the object whose own ones memcheck counts (NULL: forward only). */
void mc_cxx_resolve(const void *allocator);

/* ---- signals.c ------------------------------------------------------- */

/* Handlers the program installs run in a trampoline that notes where the
 * guard was; a call from one that interrupted memcheck is made at once
 * and recorded when the guard comes down (signals.c's drain, which
 * mc_signals_init hands to mc_guard_leave's hook).  site: the call's
 * return address. */
bool mc_signals_init(void);
bool mc_signal_nested(void);
/* This thread is running a handler memcheck wrapped (life.c's _exit). */
bool mc_signal_handling(void);
void *mc_signal_alloc(void *p, size_t size, uintptr_t site); /* returns p */
void mc_signal_free(void *p, uintptr_t site);
void *mc_signal_realloc(void *old, size_t n, uintptr_t site);
/* The program's syscall(2) of SYS_rt_sigaction or SYS_sigaltstack
 * (sandbox.c), x its arguments: as its sigaction and sigaltstack. */
long mc_signals_syscall(long nr, const long x[6]);
/* An action as the kernel's rt_sigaction reads and writes it. */
struct mc_k_sigaction {
	uintptr_t handler;
	unsigned long flags;
	uintptr_t restorer;
	uint64_t mask;
};

/* ---- fatal.c --------------------------------------------------------- */

/* A process killed by a fatal signal still gets its record: handlers at
 * start-up where the default action was inherited (record: life.c's
 * exit work), hidden from the program's view (signals.c). */
void mc_fatal_init(void (*record)(void));
bool mc_fatal_default(int sig, const struct sigaction *act, struct sigaction *mine);
void mc_fatal_defaulted(int sig, const struct sigaction *act);
void mc_fatal_view(int sig, struct sigaction *old);
/* SA_RESETHAND kept by memcheck (signals.c's trampoline resets), and
 * the main thread's alternate stack hidden from the program. */
bool mc_fatal_resets(int sig);
void mc_fatal_reset(int sig, bool info);
void mc_fatal_deliver(int sig, siginfo_t *si, void *uc);
bool mc_fatal_altstack_is(const void *sp);
void mc_fatal_altstack_back(void);
/* A thread's alternate stack: armed as pthread_create starts it
 * (threadstart.c) or at its first slot (account.c), disarmed at its
 * end. */
void mc_fatal_thread_arm(void);
void mc_fatal_thread_start(void);
bool mc_fatal_threads_armed(void);
void mc_fatal_thread_done(void);
void mc_fatal_after_fork_child(void);
/* A handler of the program's whose action has SA_ONSTACK (fn, with the
 * trampoline's arguments): run on the interrupted stack where the kernel
 * put it on memcheck's alternate stack, which bare has not (true: it
 * ran); false where it is to run where it is. */
bool mc_fatal_beside(uintptr_t fn, bool info, int sig, siginfo_t *si, void *uc);
/* An alternate stack the kernel disarms while a handler runs on it
 * (Linux 4.7; the C library's header may not have it yet). */
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
/* The signal the record is written for (0 at a normal end), its
 * si_code and address, the faulting stack (0: none), whether the main
 * thread took it. */
extern int mc_fatal_sig;
extern int mc_fatal_code;
extern uintptr_t mc_fatal_addr;
extern uint32_t mc_fatal_stack;
extern bool mc_fatal_main_thread;
/* The signal came inside the allocator (a frame of its object on the
 * interrupted stack), or a question of the record's to it outlasted its
 * bound: the record asks it nothing (more) (allocator.c). */
extern bool mc_fatal_in_allocator;
/* fn(arg), a question of a killed process's record to the allocator,
 * given up (false) where it outlasts its bound (a lock held for good). */
bool mc_fatal_bounded(void (*fn)(void *), void *arg);
/* Where the scan starts when the handler ran on memcheck's alternate
 * stack (0: from the handler's own frame, on the interrupted stack). */
extern uintptr_t mc_fatal_sp;
/* When the record's scan gives up (mc_now's clock, in nanoseconds; 0:
 * never): set at a signal that asks the process to end
 * (MEMCHECK_FATAL_SCAN_MS). */
extern uint64_t mc_fatal_deadline_ns;
/* the signal that set it (an exit's scan cut by one owed meanwhile:
 * mc_fatal_sig is 0 there) */
extern int mc_fatal_deadline_sig;
const char *mc_fatal_name(int sig);
unsigned long mc_fatal_stack_limit(void);
/* A signal asking the process to end that came while memcheck was at
 * work in this thread, owed to the guard's coming down: its handler
 * now (signals.c's drain; nothing where none is owed here). */
void mc_fatal_owed(void);

/* ---- stacks.c -------------------------------------------------------- */

/* The frame a stack starts from, for a call that an operator new or
 * delete memcheck forwarded makes (libstdc++'s calls malloc): the
 * program's call to operator new, when one is in flight on this thread
 * (mc_self.cxx_frame), else f.  mc_stack_capture asks it. */
void *mc_cxx_call_frame(uintptr_t *f);

/* Capture the calling stack, starting at the return address in frame fp
 * (the frame of the malloc-family function the program called), and
 * intern it; returns its id, 0 when stacks are off. */
uint32_t mc_stack_capture(void *fp);
/* Object i (0, 1) of those that allocate for themselves is [lo, hi):
 * the dynamic loader (TLS vectors, its object lists), and the
 * allocator's own object when that is not the C library (allocator.c
 * says, at detection).  A call from them gets a stack at
 * MEMCHECK_STACK_DEPTH=0. */
void mc_stacks_runtime_object(int i, uintptr_t lo, uintptr_t hi);
/* Intern frames directly (tests use this). */
uint32_t mc_stack_intern(const uintptr_t *frames, int depth);
void mc_stacks_init(void);
/* Every lock of stack capture and the depot, for fork. */
void mc_stacks_lock(void);
void mc_stacks_unlock(void);
void mc_stacks_after_fork_child(void);
/* The C library's pthread_getattr_np (threadattr.c wraps the name). */
int mc_stack_getattr(pthread_t th, pthread_attr_t *attr);
/* The calling thread's stack [lo, hi) as pthread_getattr_np gives it;
 * false when unknown, or not to be asked now (mc_self.in_getattr). */
bool mc_stack_bounds(uintptr_t *lo, uintptr_t *hi);
/* Where an address a refused free was given lies on the calling
 * thread's stack, as valgrind describes it ("Address 0x... is on thread
 * 1's stack", "in frame #2, created by outer (f.c:6)"): valgrind's number
 * of the thread (0: not on its stack), the frame holding the address in
 * valgrind's numbering (its frame #0 is its own free: memcheck's first
 * frame is #1; -1: none of the first ones) and that frame's return
 * address.  fp as mc_stack_capture's; frames walked: MEMCHECK_STACK_DEPTH
 * less one, as valgrind's --num-callers leaves room for. */
struct mc_stack_place {
	int thread, frame;
	uintptr_t pc;
};
void mc_stack_place(void *fp, uintptr_t a, struct mc_stack_place *on);

/* ---- depot.c --------------------------------------------------------- */

/* The live figures of one stack's blocks, kept by the depot in its array
 * of sites by stack id (only where sites are counted: mc_sites_on) and
 * changed by the block table (blocks.c) as blocks come and go; gen and
 * the saved_ pair keep the figures as they were at the newest snapshot
 * (snapshot.c). */
struct mc_site {
	int64_t bytes, saved_bytes;
	uint32_t blocks, saved_blocks;  /* mod 2^32: the table holds fewer */
	uint32_t gen;                   /* mc_snap_gen when saved_ was taken */
	uint32_t spare;
};
#define MC_DEPOT_UNIT 32
#define MC_DEPOT_SEG0_BITS 11
#define MC_DEPOT_NSEGS (28 - MC_DEPOT_SEG0_BITS)
/* What a lookup reads of each stack, in the depot's array by stack id,
 * two stacks a line: the low half of the key it was marked walked under
 * (its then entries hold the top half), where its entry starts in the
 * arena (depot.c's unit), and the stacks looked up after it (its then).
 * The sites (struct mc_site) are an array of their own by id beside it,
 * mapped only where they are counted (doc/costs.md, depot58). */
struct mc_depot_id {
	uint32_t key_lo, unit;
	uint64_t then[3];
} __attribute__((aligned(32)));
extern char *_Atomic mc_depot_segs[MC_DEPOT_NSEGS];                /* the arena, by unit */
extern struct mc_depot_id *_Atomic mc_depot_ids[MC_DEPOT_NSEGS];   /* by id */
extern struct mc_site *_Atomic mc_depot_sites[MC_DEPOT_NSEGS];     /* by id, where counted */
extern struct mc_site mc_site_none;     /* blocks without a stack (id 0) */
/* Sites are counted (snapshot.c's mc_sites_on, through
 * mc_depot_sites_on): only then does the depot map its array of sites. */
extern bool mc_depot_with_sites;
bool mc_depot_sites_on(void);
static inline unsigned mc_depot_seg_of(uint32_t id)
{
	return id < 1u << MC_DEPOT_SEG0_BITS ? 0 :
	       (unsigned)(31 - __builtin_clz(id)) - (MC_DEPOT_SEG0_BITS - 1);
}
static inline uint32_t mc_depot_seg_base(unsigned k)
{
	return k ? 1u << (MC_DEPOT_SEG0_BITS - 1 + k) : 0;
}
/* By the top bit of an id: its segment's mc_depot_ids[k] (or
 * mc_depot_sites[k]) less the segment's first id's offset (seg_base(k)
 * elements of 32 bytes), so that id's element is at bias[31 - clz(id)]
 * + id * 32 (bits 0 to SEG0_BITS - 1 all segment 0's, bit SEG0_BITS - 1
 * + k segment k's).  Set with the segment, before any id in it is
 * handed out. */
extern _Atomic uintptr_t mc_depot_id_bias[32], mc_depot_site_bias[32];
/* The element of id (not 0) in the array of 32-byte elements whose bias
 * table is bias: a bsr, a load, a shift and an add (was ~13 instructions
 * from ids above 2,047, a branch and two shifts by the segment: on every
 * malloc and free's site, and twice in a lookup of a stack the thread's
 * cache lost). */
static inline uintptr_t mc_depot_elem(const _Atomic uintptr_t *bias, uint32_t id)
{
	uint64_t top; /* 31 - clz(id), which gcc sign-extends after its bsr */
	__asm__("bsr %1, %0" : "=r"(top) : "r"((uint64_t)id) : "cc");
	return atomic_load_explicit(&bias[top], memory_order_relaxed) + (uintptr_t)id * 32;
}
static inline struct mc_depot_id *mc_depot_id_of(uint32_t id)
{
	_Static_assert(sizeof(struct mc_depot_id) == 32, "two ids a line");
	return (struct mc_depot_id *)mc_depot_elem(mc_depot_id_bias, id);
}
/* The site of stack id: inline, for the block table's hot paths (only
 * where sites are counted). */
static inline struct mc_site *mc_site_of(uint32_t id)
{
	_Static_assert(sizeof(struct mc_site) == 32, "a site is 32 bytes");
	if (unlikely(!id))
		return &mc_site_none;
	return (struct mc_site *)mc_depot_elem(mc_depot_site_bias, id);
}
/* fn for every stored stack and its site (the depot locked: fn must not
 * store stacks). */
void mc_depot_each(void (*fn)(uint32_t id, struct mc_site *site, void *arg), void *arg);

/* The id of the n frames f, whose hash (stacks.c's) is h, stored if new;
 * 0 when n is 0 or the depot is full. */
uint32_t mc_depot_intern(uint64_t h, const uintptr_t *f, int n);
/* Stacks stacks.c's capture can name from its frame-pointer walk: the
 * stored stack id with its walked mark (stacks.c's capture_known),
 * indexed by key (a hash) by mc_depot_set_walked; mc_depot_known gives
 * the id of key h and its mark in *walked, 0 if not indexed. */
void mc_depot_set_walked(uint32_t id, uint64_t h, int walked, uint32_t after);
uint32_t mc_depot_known(uint64_t h, uint32_t after, int *walked);
/* mc_depot_known's second look, the index, where the first (below) found
 * nothing: the stack found put in after's then. */
uint32_t mc_depot_known_index(uint64_t h, uint32_t after, int *walked);
/* Whether mc_depot_known looks in the then first: only once the index
 * is larger than caches hold (4,096 slots, 64 KiB), where its probe is a
 * cache miss and the then's line one the block table has just read.  A
 * smaller index answers in one probe of a few instructions, and a new
 * stack (every lookup a short process makes, nearly) then costs no
 * compares of the then's three entries (~30 instructions). */
extern _Atomic bool mc_depot_then_first;
/* mc_depot_known's first look, inline for stacks.c's capture of a stack
 * its cache lost: the entry of stack after's then (depot.c: each key's
 * top half | walked << 27 | id) whose stack was marked under key h (the
 * entry's top half and the stack's key_lo), moved first; 0 where none
 * is (the index may still know h).  h and after not 0. */
static inline uint64_t mc_depot_then_find(uint64_t h, uint32_t after)
{
	_Atomic uint64_t *a = (_Atomic uint64_t *)mc_depot_id_of(after)->then;
	for (int i = 0; i < 3; i++) {
		uint64_t e = atomic_load_explicit(&a[i], memory_order_acquire);
		uint32_t id = (uint32_t)e & 0x7ffffff; /* MC_STACK_ID_MAX (depot.c asserts it) */
		if ((e ^ h) >> 32 || !id ||
		    __atomic_load_n(&mc_depot_id_of(id)->key_lo, __ATOMIC_ACQUIRE) != (uint32_t)h)
			continue;
		for (int j = i; j > 0; j--) /* (i: 0 mostly; no store then) */
			atomic_store_explicit(&a[j],
					      atomic_load_explicit(&a[j - 1], memory_order_relaxed),
					      memory_order_relaxed);
		if (i)
			atomic_store_explicit(&a[0], e, memory_order_release);
		return e;
	}
	return 0;
}
/* mc_depot_intern, then mc_depot_set_walked(id, wkey, walked, after), a
 * new stack marked as it is stored; absent: mc_depot_known(h) has just
 * found no stack of key h (the first lookup by frames is not made). */
uint32_t mc_depot_intern_walked(uint64_t h, const uintptr_t *f, int n, bool absent,
				uint64_t wkey, int walked, uint32_t after);
/* Frames of an interned stack: returns the depth, *frames points into
 * the depot. */
int mc_stack_get(uint32_t id, const uintptr_t **frames);
/* How many walks this thread keeps (stacks.c's kept walks; for the tests). */
int mc_stack_kept_walks(void);
/* The id the depot hands out next: every stack stored so far has a lower one. */
uint32_t mc_depot_next_id(void);
/* The same, up to the first frame outside every loaded object's code
 * (what a frame-pointer guess through code without CFI may find): the
 * frames reports and suppressions use. */
int mc_stack_get_code(uint32_t id, const uintptr_t **frames);
void mc_depot_lock(void);
void mc_depot_unlock(void);
void mc_depot_after_fork_child(void);
/* A fork's prepare handler (stacks.c's mc_stacks_lock, under the
 * depot's lock): from the first fork on, new stacks' slots go to the
 * index's young page (depot.c), so that a parent writes few pages of it
 * between forks. */
void mc_depot_prefork(void);

/* ---- cfi.c ----------------------------------------------------------- */

/* How the walk steps from a function to its caller at a return address
 * (the x86-64 registers the walk follows: rsp, rbp, and the return
 * address at CFA-8). */
enum mc_cfi_kind {
	MC_CFI_UNKNOWN, /* no CFI, or a rule the walk cannot follow */
	MC_CFI_FP,      /* a frame-pointer frame: CFA = rbp + 16, rbp at CFA-16 */
	MC_CFI_SP,      /* CFA = rsp + cfa_off */
	MC_CFI_BP,      /* CFA = rbp + cfa_off */
	MC_CFI_END,     /* no caller: the return address is undefined */
	MC_CFI_SIGNAL,  /* a signal frame: the interrupted rsp at rsp + cfa_off,
			 * its rip at rsp + cfa_off + 8, its rbp at rsp + rbp_off */
};
#define MC_CFI_SIGNAL_MAX 4096 /* a signal frame's offsets, at most */
struct mc_cfi_rule {
	int kind;
	int32_t cfa_off;
	int32_t rbp_off;   /* the caller's rbp saved at CFA + rbp_off; 0: unchanged */
};
/* The rule at return address ret, from its object's .eh_frame. */
void mc_cfi_rule(uintptr_t ret, struct mc_cfi_rule *out);
/* The same from the .eh_frame_hdr at hdr, of an object mapped in
 * [lo, hi) (fuzz/fuzz_cfi.c feeds it bytes). */
void mc_cfi_rule_in(uintptr_t ret, const void *hdr, uintptr_t lo, uintptr_t hi,
		    struct mc_cfi_rule *out);
/* The same read by the general interpreter alone, for unit_stacks to
 * compare: 1, or 0 where there is no CFI reading (not x86-64 glibc). */
int mc_cfi_rule_in_general(uintptr_t ret, const void *hdr, uintptr_t lo, uintptr_t hi,
			   struct mc_cfi_rule *out);

/* ---- snapshot.c ------------------------------------------------------ */

/* The newest snapshot's generation: bumped at each new peak of live
 * bytes (account.c's peak_update), so that a site changed afterwards
 * first saves its figures as they were then (mc_site_change). */
extern _Atomic uint32_t mc_snap_gen;
/* Sites are counted: tracking, and MEMCHECK_PEAK_SITES > 0. */
extern int mc_sites_on;
void mc_snapshot_init(void);

/* A thread's shard of the sites, so that threads allocating from one
 * call site do not share its counters (four threads cost +55% CPU
 * time so): a struct mc_site for each of the first MC_SHARD_IDS stack
 * ids (the first 65,535 stacks stored), touched as used.  NULL: the depot's
 * own sites, where the first thread counts (a process of one thread
 * maps nothing more), and threads past the shards, and every thread for
 * the stacks past MC_SHARD_IDS. */
#define MC_SHARD_IDS (1u << 16) /* 2 MiB of address space a shard */
extern MC_TLS struct mc_site *mc_my_sites;
/* The thread that has account.c's slot index slot (-1: none) counts in
 * its shard from now on. */
void mc_sites_thread(int slot);

/* A block of bytes (negative: leaving) came or went at stack's site, in
 * the thread's shard.  shared: other threads run (the block table is
 * locked, not owned by one thread); then a change to the depot's own
 * sites, which every thread without a shard writes, is an atomic add.
 * A shard is its thread's alone (snapshot.c: one slot each), so its
 * adds need no lock prefix: two locked adds a call were a third of the
 * table's time with four threads (perf annotate, remove_any).  The save
 * is never atomic, and may mix a concurrent change into the snapshot. */
static inline void mc_site_change_on(uint32_t stack, int64_t bytes, int32_t blocks, bool shared);

static inline void mc_site_change(uint32_t stack, int64_t bytes, int32_t blocks, bool shared)
{
	if (mc_sites_on)
		mc_site_change_on(stack, bytes, blocks, shared);
}

/* mc_site_change where mc_sites_on is known (account.c's hot paths built
 * for it, which run only then: mc_track_ready is MC_TRACK_SITES). */
static inline void mc_site_change_on(uint32_t stack, int64_t bytes, int32_t blocks, bool shared)
{
	struct mc_site *s = mc_my_sites;
	if (likely(s == NULL) || !stack || stack >= MC_SHARD_IDS)
		s = mc_site_of(stack);
	else {
		s += stack;
		shared = false;
	}
	uint32_t g = atomic_load_explicit(&mc_snap_gen, memory_order_relaxed);
	if (__atomic_load_n(&s->gen, __ATOMIC_RELAXED) != g) {
		__atomic_store_n(&s->saved_bytes, __atomic_load_n(&s->bytes, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&s->saved_blocks, __atomic_load_n(&s->blocks, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&s->gen, g, __ATOMIC_RELAXED);
	}
	if (shared) {
		__atomic_fetch_add(&s->bytes, bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->blocks, (uint32_t)blocks, __ATOMIC_RELAXED);
	} else {
		s->bytes += bytes;
		s->blocks += (uint32_t)blocks;
	}
}

/* A new peak: the sites as they are now are the newest snapshot.  Not
 * a locked add: two threads that reach new peaks at once may make one
 * generation of them (the later peak's snapshot then has some of its
 * sites as at the earlier one), which costs precision, not counts. */
static inline void mc_snap_bump(void)
{
	uint32_t g = atomic_load_explicit(&mc_snap_gen, memory_order_relaxed);
	atomic_store_explicit(&mc_snap_gen, g + 1, memory_order_relaxed);
}

/* A region's snapshot at its peak of live bytes: the live bytes and
 * blocks of every stack that had any at that moment, in the depot's
 * order.  Every live block of the process counts, the region's own and
 * older ones: it is the heap as it was at that moment.  Which of them
 * a report lists is the report's choice (report.c: the
 * MEMCHECK_PEAK_SITES largest lines, each with all of its stacks), as
 * naming a stack's line takes symbols, and a snapshot is taken where
 * no report may follow (a covered region, a budget kept). */
#define MC_PEAK_SITES_MAX 100
struct mc_peak_site {
	uint32_t stack, blocks;
	uint64_t bytes;
};
struct mc_peak {
	uint8_t state;           /* snapshot.c's */
	uint32_t mark;           /* mc_snap_gen when the region last became
				  * the innermost */
	uint64_t bytes, blocks;  /* every site's, at the snapshot */
	size_t stacks;           /* the stacks with live blocks */
	size_t n, cap;           /* all[]'s stacks (fewer than stacks when
				  * memory ran out), its room */
	/* mmap'd (mc_grow), kept with the region's slot for its next
	 * region: a slot's snapshots reuse it */
	struct mc_peak_site *all;
};
/* Region life (region.c, region lock held): a region begins (innermost);
 * another begins inside it (cover), ends inside it (uncover: raised when
 * the inner region's peak is above the outer's so far); it ends
 * (end: the snapshot is taken, *p then holds it; taken is false when
 * there is none, nothing having risen above the level at its begin). */
void mc_peak_begin(struct mc_peak *p, bool from_start);
void mc_peak_cover(struct mc_peak *outer);
void mc_peak_uncover(struct mc_peak *outer, bool raised);
bool mc_peak_end(struct mc_peak *p);

/* ---- timeline.c ------------------------------------------------------ */

/* One sample of a region's memory; sizes in bytes, MEMCHECK_UNKNOWN
 * where not measured. */
struct mc_sample {
	double seconds;      /* since the region began */
	uint64_t moved;      /* bytes allocated and freed since it began */
	uint64_t live;       /* the process's live bytes */
	uint64_t rss;        /* the program's resident set (footprint.c) */
	uint64_t retained;   /* the allocator's retained bytes, read rarely */
};
struct mc_timeline {
	const struct mc_sample *samples;   /* valid until the next region at
					    * the same depth begins */
	uint32_t n;
	uint64_t step;                     /* bytes moved between samples, last */
};
/* A region at depth (0: the outermost) begins and ends (region lock
 * held); end fills *out, false when there is no timeline.  from_start:
 * the region counts from the process's start (bytes moved from 0). */
void mc_timeline_begin(int depth, bool from_start, uint64_t live, uint64_t rss, double t0);
bool mc_timeline_end(int depth, uint64_t live, uint64_t rss, uint64_t retained,
		     struct mc_timeline *out);
/* Bytes moved between a region's first samples. */
#define MC_TIMELINE_FIRST_STEP 4096
/* A thread's countdown ran out (account.c, through the hook life.c
 * sets): sample the regions that are due. */
void mc_timeline_sample(void);
void mc_timeline_after_fork_child(void);

/* ---- blocks.c -------------------------------------------------------- */

enum mc_insert { MC_NEW, MC_REPLACED_LIVE };
enum mc_remove { MC_REMOVED, MC_UNKNOWN };

struct mc_block {
	uintptr_t ptr;
	uint64_t size;
	uint32_t stack;      /* allocation stack */
	uint32_t aux;        /* region epoch when allocated */
};

/* The newest region epoch (blocks.c): a block carries the epoch current
 * when it was allocated.  Kept at or below MC_EPOCH_MAX by renumbering. */
extern _Atomic uint32_t mc_epoch;
/* Times mc_blocks_renumber has run: an epoch noted before a change of
 * this count names nothing now (roots.c's alternate stacks). */
extern _Atomic unsigned mc_epochs_renumbered;
#define MC_EPOCH_MAX 0xffffu
#define MC_EPOCH_NOW UINT32_MAX     /* mc_blocks_insert: the current epoch */
#define MC_STACK_ID_MAX ((1u << 27) - 1)

void mc_blocks_init(void);
/* Record a new live block.  *old receives what was at that address: a
 * live block the program freed behind memcheck's back (MC_REPLACED_LIVE). */
enum mc_insert mc_blocks_insert(uintptr_t ptr, uint64_t size, uint32_t stack,
				uint32_t epoch, struct mc_block *old);
/* Delete a live block; *out receives it as it was. */
enum mc_remove mc_blocks_remove(uintptr_t ptr, struct mc_block *out);
/* Change the epoch of a live block; false when ptr is not one. */
bool mc_blocks_set_epoch(uintptr_t ptr, uint32_t epoch);
/* Look a live block up without changing it. */
bool mc_blocks_find(uintptr_t ptr, struct mc_block *out);
/* The live block ptr points inside of (not at its start); slow. */
bool mc_blocks_containing(uintptr_t ptr, struct mc_block *out);
/* Renumber every block's epoch e to the count of open[] (ascending, no 0)
 * at or below e, and mc_epoch likewise: comparisons with the open
 * regions keep their answers.  Takes every lock. */
void mc_blocks_renumber(const uint32_t *open, int n);
/* Call fn for every live block with epoch >= min_epoch. */
void mc_blocks_each_live(uint32_t min_epoch,
			 void (*fn)(const struct mc_block *, void *), void *arg);
/* Is any block of epoch >= min_epoch live?  (Stops at the first.) */
bool mc_blocks_any_live(uint32_t min_epoch);
/* The same for every live block, with the table held by mc_blocks_lock_all
 * or read by the process's only thread (scan.c: from->alone). */
void mc_blocks_each_live_locked(void (*fn)(const struct mc_block *, void *), void *arg);
size_t mc_blocks_bytes(void);    /* memory the table uses */
uint64_t mc_blocks_count(void);  /* live blocks in the table */
/* Shard groups every thread locks (another thread came to their owner's):
 * tests' window on the owners' protocol. */
unsigned mc_blocks_groups_locked(void);
void mc_blocks_lock_all(void);
void mc_blocks_unlock_all(void);
void mc_blocks_after_fork_child(void);

/* ---- scan.c --------------------------------------------------------- */

/* Leak kinds, valgrind's: what the scan found for each block. */
enum mc_kind { MC_KIND_DEFINITE, MC_KIND_INDIRECT, MC_KIND_POSSIBLE, MC_KIND_REACHABLE };
/* valgrind's interior-pointer heuristics, in the order it tries them
 * (heuristics.c). */
enum { MC_HEUR_NONE, MC_HEUR_STDSTRING, MC_HEUR_LENGTH64, MC_HEUR_NEWARRAY, MC_HEUR_MULTIPLE,
       MC_HEUR_N };
/* Every live block, classified (mmap'd arrays). */
/* Room for the table of where each file's mappings begin
 * (mc_maps_runs_note) that a scan's read keeps: a C test program's
 * ~20 runs take ~1 KiB, python3's 29 2 KiB.  A larger table is dropped
 * (its user reads /proc/self/maps again); none is mapped, so none cost
 * an mmap and an munmap of its own. */
#define MC_RUNS_FIXED 3072
struct mc_scan {
	void *v;                /* the blocks, by address */
	uint8_t *state;         /* enum mc_kind of each */
	size_t n, cap;
	bool joined;            /* both in one mapping at v (scan.c) */
	uint64_t *credit;       /* [cap] a clique leader's indirect bytes, or NULL */
	uint8_t *heur;          /* [cap] the heuristic (MC_HEUR_*) that reached
				 * each, or NULL: none did */
	double seconds;         /* the scan's own time */
	/* The files' runs of its mappings (mc_maps_runs_note), lent to
	 * elfmod.c until mc_scan_free: over runs_copy (len 0: none) */
	struct mc_buf runs;
	char runs_copy[MC_RUNS_FIXED];
};
/* Where the program's stack begins, taken where it calls memcheck
 * (memcheck_end, the library destructor): memcheck's own frames below
 * it hold stale copies of block addresses from its malloc hooks and must
 * not be roots.  MC_SCAN_FROM spills the callee-saved registers, which
 * may hold the program's pointers, into the entry point's frame, and the
 * stack is scanned from the lowest of them: on x86-64, with the frame
 * pointer (the library is built with it, make fp-check), the prologue
 * pushes rbx and r12-r15 right below the saved rbp (lib/scanfrom.awk
 * checks it in the linked library, -O0's too), and the entry point's
 * locals lie below them.  Those locals are not the program's:
 * a slot not yet written when the scan runs holds whatever the
 * program's dead frames left there (an -O2 memcheck_end has 14 such
 * bytes, an -O0 one more), and a stale copy of a lost block's address
 * there kept it still reachable (examples/check_kvparse's key under an
 * -O0 libmemcheck in about one run of three; tests/prog/stale_end). */
struct mc_scan_from {
	uintptr_t sp;
	bool at_exit;   /* the process is exiting: the stack is scanned from
			 * the frame that called exit() (roots.c) */
	bool alone;     /* the caller is the process's only thread, as read
			 * at this region's end (mc_prog_peak_take): no other
			 * thread to list and stop (threads.c) */
	bool by_exit;   /* inside exit(), whose stdio clean-up comes after
			 * the scan (scan.c's stdio_cuts) */
};
#if defined(__x86_64__)
#define MC_SCAN_FROM(f)                                                        \
	do {                                                                   \
		__builtin_unwind_init();                                       \
		(f)->sp = (uintptr_t)__builtin_frame_address(0) -              \
			  5 * sizeof(void *);                                  \
		(f)->at_exit = false;                                          \
		(f)->alone = false;                                            \
		(f)->by_exit = false;                                          \
	} while (0)
#else
#define MC_SCAN_FROM(f)                                                        \
	do {                                                                   \
		__builtin_unwind_init();                                       \
		(f)->sp = (uintptr_t)(f);                                      \
		(f)->at_exit = false;                                          \
		(f)->alone = false;                                            \
		(f)->by_exit = false;                                          \
	} while (0)
#endif
/* Scan the roots and the heap; false (nothing to free) when memory for
 * the scan could not be mapped.  Call with the guard held.  from: where
 * the program's stack begins, or NULL (the caller's frames). */
bool mc_scan(struct mc_scan *out, const struct mc_scan_from *from);
/* The last mc_scan gave up at mc_fatal_deadline_ns (fatal.c). */
bool mc_scan_cut(void);
/* Call fn for each scanned block with epoch >= min_epoch, its kind and
 * its credit: a definitely lost block's, the bytes of the blocks its
 * clique took (valgrind's indirect_szB of a clique leader); else 0. */
void mc_scan_each(const struct mc_scan *s, uint32_t min_epoch,
		  void (*fn)(const struct mc_block *, int kind, uint64_t credit, void *),
		  void *arg);
void mc_scan_free(struct mc_scan *s);
/* The blocks with epoch >= min_epoch that valgrind's heuristics reached,
 * bytes and blocks by heuristic (out[MC_HEUR_*]; [0] unused). */
void mc_scan_heuristics(const struct mc_scan *s, uint32_t min_epoch,
			struct memcheck_count out[MC_HEUR_N]);
/* mc_scan's one pass into out (cleared before as mc_scan says; own: no
 * from was given): [regs, regs + nregs), the callers' registers, a root;
 * pool[0, npool), ascending, the stacks of the blocks that are pools
 * (scanpool.c). */
/* The stacks (ascending) whose blocks the next pass does not read: the
 * freeres functions' (scanpool.c); NULL, 0: none. */
void mc_scan_freed(const uint64_t *ids, size_t n);
bool mc_scan_pass(struct mc_scan *out, const struct mc_scan_from *from, bool own,
		  const void *regs, size_t nregs, const uint64_t *pool, size_t npool);
/* ids[0, n) sorted ascending, in place, without malloc. */
void mc_scan_sort_ids(uint64_t *ids, size_t n);
/* The counters as the last pass read its blocks: the table held, the
 * other threads stopped (scan.c's moment_take); false where its caller
 * was the process's only thread, whose counters nothing moved. */
struct mc_totals;
bool mc_scan_totals(struct mc_totals *t);
/* The counters (*t) and the live blocks with epoch >= min_epoch (fn
 * called for each, under the table's locks: it must not allocate) at
 * one moment, the table held (stop: the other threads stopped too, as
 * for a scan); returns how many blocks. */
size_t mc_scan_moment(uint32_t min_epoch, void (*fn)(const struct mc_block *, void *),
		      void *arg, struct mc_totals *t, bool stop);

/* ---- roots.c --------------------------------------------------------- */

/* The roots of one scan, in mmap'd memory. */
enum mc_root_kind {
	MC_ROOT_PLAIN,
	MC_ROOT_GLIBC,  /* the C library's data, where its allocator keeps
			 * pointers to chunk headers (scan.c) */
	MC_ROOT_ALLOCATOR, /* another allocator's data: its caches keep
			    * addresses of blocks it took back (scan.c) */
};
struct mc_root {
	uintptr_t lo, hi;
	int kind;       /* enum mc_root_kind */
};
struct mc_roots;
/* At start-up, on the main thread: its thread pointer. */
void mc_roots_init(void);
/* memcheck_add_root's, for memcheck's own use (life.c); false: no room */
bool mc_roots_user_add(const void *ptr, size_t size);
/* The roots memcheck_add_root registered, held across fork. */
void mc_roots_prefork(void);
void mc_roots_postfork(bool child);
/* The roots that need locks (the loaded objects', the registered ones, a
 * copy of the program's mappings): before the block table is locked.
 * NULL when memory for them cannot be mapped. */
struct mc_roots *mc_roots_begin(void);
void mc_roots_add(struct mc_roots *r, uintptr_t lo, uintptr_t hi);
void mc_roots_pending_starts(const void *lo, size_t size);
/* With the block table locked: stop every other thread and add the
 * loaded objects' resident data.  Then, where a block is left unreached
 * by the roots so far, mc_roots_rest adds those of every thread and of
 * the program's mappings.  is_block(p) says whether p starts a live
 * block. */
void mc_roots_stop(struct mc_roots *r, const struct mc_scan_from *from);
void mc_roots_rest(struct mc_roots *r, const struct mc_scan_from *from,
		   bool (*is_block)(uintptr_t p, void *arg), void *arg);
/* [lo, hi) out of every root listed so far (a FILE's words, scan.c). */
void mc_roots_cut(struct mc_roots *r, uintptr_t lo, uintptr_t hi);
/* Is [p, p + size) inside a loaded object's writable segment? */
bool mc_roots_in_data(const struct mc_roots *r, uintptr_t p, size_t size);
/* The C library's list of stdio streams (_IO_list_all), NULL where not
 * found; found with the roots' other facts (mc_roots_begin). */
extern struct _IO_FILE *const *mc_io_list_all;
/* The same, found now where no scan has found it yet (life.c, at exit). */
struct _IO_FILE *const *mc_roots_io_list(void);
/* glibc's FILE flags (libio.h) that exit's stdio clean-up reads
 * (scan.c's stdio_cuts, life.c's stdio_exit_freed). */
#define MC_IO_MAGIC_MASK 0xFFFF0000u
#define MC_IO_MAGIC 0xFBAD0000u     /* _IO_MAGIC */
#define MC_IO_USER_BUF 0x0001       /* the buffer is the program's */
#define MC_IO_UNBUFFERED 0x0002
#define MC_IO_IN_BACKUP 0x0100      /* reading ungetc's backup area */
size_t mc_roots_count(const struct mc_roots *r);
const struct mc_root *mc_roots_at(const struct mc_roots *r, size_t i);
/* Let the other threads go on; free r.  runs (if not NULL, over
 * MC_RUNS_FIXED bytes of the caller's) takes the files' runs of the read
 * of /proc/self/maps the roots were cut by (len 0: none). */
void mc_roots_end(struct mc_roots *r, struct mc_buf *runs);
/* The program's alternate stack [lo, lo + size) set by the calling
 * thread (signals.c's sigaltstack), noted with the block b that starts
 * at lo and the mc_epochs_renumbered count b's epoch is of; b NULL:
 * the thread's stack is no block's (or none), forgotten. */
void mc_roots_altstack_note(uintptr_t lo, size_t size, const struct mc_block *b,
			    unsigned renumbered);
/* A dead alternate stack of mc_roots_stop's that lies in the block that
 * held it when it was set, as it was then (its start, size, stack and
 * epoch), while no renumbering came between: the scan reads that block
 * without the stack's range where it is that very block (scan.c). */
struct mc_heap_stack {
	uintptr_t lo, hi;
	struct mc_block b;
};
#define MC_HEAP_STACKS 8 /* at most this many cut at one scan */
size_t mc_roots_heap_stacks(const struct mc_roots *r, struct mc_heap_stack *out);

static inline uintptr_t mc_thread_pointer(void)
{
#if defined(__x86_64__)
	uintptr_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
#else
	return (uintptr_t)__builtin_thread_pointer();
#endif
}

/* ---- threads.c ------------------------------------------------------- */

#if defined(__x86_64__)
#define MC_NREGS 16     /* ucontext's general registers, r8 .. rsp */
#define MC_REG_SP 15
#else
#define MC_NREGS 1
#define MC_REG_SP 0
#endif
struct mc_other_thread {
	pid_t tid;
	bool answered;          /* stopped in memcheck's handler: all known */
	bool skip;              /* not waited for any longer */
	bool exiting;           /* in its exit: dead, no roots (mc_task_exiting) */
	bool put_off;           /* its stop owed till its guard comes down */
	bool again;             /* signalled again since */
	double put_off_at;      /* when the put-off was first seen */
	uintptr_t sp;           /* its stack pointer, or 0: not known */
	uintptr_t whole_lo, whole_hi; /* sp not known: its whole stack, if known, */
	uintptr_t whole_tp;     /* and its thread pointer */
	uintptr_t tp;           /* its thread pointer (descriptor), if answered */
	uintptr_t regs[MC_NREGS];
	uintptr_t alt_lo, alt_hi; /* its dead alternate stack, if answered
				   * (mc_threads_dead_altstack), or 0, 0 */
};
struct mc_threads {
	struct mc_other_thread *v;   /* mmap'd */
	size_t n, cap;
	uint32_t gen;
};
/* Every thread but the caller, stopped where a signal can stop it;
 * false when they cannot be listed.  alone: the caller is known to be
 * the only thread (struct mc_scan_from), nothing is listed; else
 * account.c's slot lock is held (mc_account_threads_lock). */
bool mc_threads_stop(struct mc_threads *t, bool alone);
/* The program has set an alternate signal stack of its own (signals.c's
 * sigaltstack sets it) */
extern _Atomic bool mc_program_altstack;
/* The calling thread's alternate stack where the program set one, a
 * handler of the program's ran on it and none runs on it now ([*lo,
 * *hi): frames of handlers that returned, no root, as valgrind, which
 * finds them undefined), else false (each thread stopped answers it;
 * roots.c asks it of the caller). */
bool mc_threads_dead_altstack(uintptr_t *lo, uintptr_t *hi);
/* The alternate stack a handler of the program's last ran on, on this
 * thread (signals.c's trampoline): [lo, hi), or 0, 0 */
extern MC_TLS uintptr_t mc_altstack_ran_lo, mc_altstack_ran_hi;
void mc_threads_resume(struct mc_threads *t);

/* ---- maps.c ---------------------------------------------------------- */

enum mc_vma_kind { MC_VMA_ANON, MC_VMA_FILE, MC_VMA_STACK, MC_VMA_SPECIAL, MC_VMA_DEVICE };
struct mc_vma {
	uintptr_t lo, hi;
	int prot;               /* PROT_READ | PROT_WRITE | PROT_EXEC */
	bool shared;
	uint8_t kind;           /* enum mc_vma_kind */
};
/* A descriptor memcheck keeps, and the file it names: a thread of the
 * program may close the number and open a file of its own under it,
 * which memcheck must never use or close. */
struct mc_kept_fd {
	int fd;          /* -1: none */
	dev_t dev;
	ino_t ino;
	bool sure;       /* no code of the program's runs while it is open:
			  * ours without asking (st not wanted) */
};
struct stat;
/* Does k still name its file?  *st (NULL: not wanted): its status. */
bool mc_kept_ours(const struct mc_kept_fd *k, struct stat *st);
/* /proc/self/maps, by address (mmap'd), and from the same read where
 * each file's run of mappings begins (mc_maps_run_at): runs, over
 * runs_fixed (len 0: did not fit). */
struct mc_vmas {
	struct mc_vma *v;
	size_t n, cap;
	bool asking;                  /* asked mapping by mapping through
				       * file (PROCMAP_QUERY), v a cache of
				       * those asked, n of them, the next
				       * into v[next % cap]; a zeroed table
				       * owns no fd (0 is the program's) */
	struct mc_kept_fd file;       /* closed only while it still is */
	size_t next;
	struct mc_vma *fixed;         /* v's first storage, the caller's */
	struct mc_buf runs;
	char runs_fixed[MC_RUNS_FIXED];
};
bool mc_vmas_read(struct mc_vmas *out);
/* The same, the first cap entries in first (the caller's, part of a
 * mapping of its own: no mapping made for a process of fewer); few: the
 * mappings asked one by one as needed where the kernel can (few will be
 * needed), else the whole file read now. */
bool mc_vmas_read_into(struct mc_vmas *out, struct mc_vma *first, size_t cap, bool few);
/* The same where the caller is the process's only thread and frees out
 * before any code of the program's runs (a region's end, roots.c): the
 * file asked through is not moved out of the way of the program's
 * descriptors nor checked at each use. */
bool mc_vmas_read_sole(struct mc_vmas *out, struct mc_vma *first, size_t cap, bool few);
void mc_vmas_free(struct mc_vmas *m);
/* The mapping covering addr; the first at or after it (NULL: none).
 * Valid until the next call. */
const struct mc_vma *mc_vmas_find(struct mc_vmas *m, uintptr_t addr);
const struct mc_vma *mc_vmas_next(struct mc_vmas *m, uintptr_t addr);
/* Every mapping in v[0, n) by address: the whole file read if it was
 * being asked mapping by mapping. */
bool mc_vmas_full(struct mc_vmas *m);

/* ---- mappings.c ------------------------------------------------------ */

/* The mappings the program made itself (mmap, mremap, shmat), which
 * memcheck wraps: roots of the scan. */
struct mc_prog_map {
	uintptr_t lo, hi;
	uintptr_t object;       /* load address of the object whose code
				 * made the mapping */
};
struct mc_prog_maps {
	struct mc_prog_map *v;     /* mmap'd, by address */
	size_t n, cap;
};
/* A handler ran on the alternate stack [lo, hi): noted where it lies
 * in a mapping of the program's, until the mapping changes
 * (mappings.c; from signals.c's trampoline, async-signal-safe). */
void mc_mappings_stack_ran(uintptr_t lo, uintptr_t hi);
/* Those noted, up to max into out (the lock only tried: a thread the
 * scan stopped may hold it; busy, none). */
size_t mc_mappings_stacks_ran(struct mc_prog_map *out, size_t max);
/* The program's mappings (the allocator's object's left out, now that
 * it is known), copied. */
bool mc_mappings_copy(struct mc_prog_maps *out);
void mc_prog_maps_free(struct mc_prog_maps *r);
/* The readable, writable, resident parts of r's ranges that m shows,
 * device mappings left out, to fn (maps.c). */
void mc_vmas_roots(struct mc_vmas *m, const struct mc_prog_maps *r,
		   void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* The resident pages of [lo, hi) (mincore, cap pages a call into the
 * caller's vec), in runs cut to [lo, hi), to fn; a chunk mincore cannot
 * answer for whole (maps.c; scan.c's large blocks).  Asks nothing of
 * swap: the caller does (mc_swap_configured). */
void mc_resident_runs(uintptr_t lo, uintptr_t hi, unsigned char *vec, size_t cap,
		      void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* The resident pages of each range v[i] (mincore), in runs cut to the
 * range, to fn with the range's index; every page where the system has
 * swap (maps.c). */
void mc_resident_each(const struct mc_root *v, size_t n,
		      void (*fn)(size_t i, uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* Whether the system has swap, where a page the program wrote may be
 * out of memory: mincore then cannot tell it from one never written
 * (maps.c; sysinfo; scan.c's large blocks ask it too). */
bool mc_swap_configured(void);
/* The C library's mmap family, looked up by lookup (life.c's). */
void mc_mappings_resolve(void *(*lookup)(const char *));
/* Around fork (life.c's handlers): the table's lock; changes made while a
 * fork holds it are queued and applied by the postfork, in parent and child. */
void mc_mappings_prefork(void);
void mc_mappings_postfork(bool child);

/* ---- account.c ------------------------------------------------------- */

/* MEMCHECK_SCRUB: in the bytes [from, n) of a new block p, within its
 * first mc_opt.scrub (from: what realloc kept), each aligned word that
 * holds an address is cleared. */
void mc_scrub_words(void *p, size_t from, size_t n);
static inline void mc_scrub(void *p, size_t from, size_t n)
{
	if (unlikely(from < (size_t)mc_opt.scrub) && p)
		mc_scrub_words(p, from, n);
}
/* The part a realloc of a tracked block added, [from, n).  Not once the
 * program has asked malloc_usable_size (interpose.c sets
 * mc_usable_asked to a size no scrub reaches): the bytes past the size
 * it asked for, up to the usable size, are then the program's
 * (malloc_usable_size(3)), every allocator's realloc keeps them, and
 * memcheck cannot tell them from the allocator's leftovers.  QuickJS
 * fills the slack of its arrays (pointers among the elements) and grows
 * them with realloc: scrubbed, its test_builtin crashed under mimalloc,
 * jemalloc and tcmalloc (tests/prog/plain_scrub_usable).  An or, not a
 * call: the realloc paths lie in the first blocks (text-order.ld). */
extern size_t mc_usable_asked;
static inline void mc_scrub_grown(void *p, size_t from, size_t n)
{
	mc_scrub(p, from | __atomic_load_n(&mc_usable_asked, __ATOMIC_RELAXED), n);
}

/* Monotonic counters; a region's figures are the difference of two sums. */
struct mc_totals {
	uint64_t allocs, frees, reallocs, failed;
	uint64_t bytes_allocated, bytes_freed;
	uint64_t double_frees, invalid_frees;
	uint64_t interior_frees;  /* of invalid_frees: pointers inside live blocks */
};

/* malloc and free while tracking, entered by a jump from the wrappers
 * (the guard not held): the allocator's call and the bookkeeping in one
 * frame. */
void *mc_track_malloc(size_t n);
void *mc_track_calloc(size_t nmemb, size_t size);
void mc_track_free(void *p);
/* The same where the sites are counted (mc_track_ready MC_TRACK_SITES) */
void *mc_track_malloc_sites(size_t n);
void *mc_track_calloc_sites(size_t nmemb, size_t size);
void mc_track_free_sites(void *p);
void *mc_track_realloc(void *old, size_t n);

/* A call signals.c deferred, recorded with the guard held. */
enum mc_deferred {
	MC_DEFER_ALLOC,      /* p of size was allocated */
	MC_DEFER_FAILED,     /* an allocation failed */
	MC_DEFER_REALLOC,    /* a realloc call (its blocks come apart) */
	MC_DEFER_FREE,       /* free p, passed on to the allocator here */
	MC_DEFER_FORGET,     /* p was freed already (by a realloc) */
};
void mc_account_deferred(int op, void *p, size_t size, uintptr_t site);
/* Hooks called by interpose.c with the guard held.  fp is the frame of
 * the malloc-family function the program called: stacks start above it. */
void mc_account_alloc(void *p, size_t size, void *fp);
void mc_account_free(void *p, bool *pass_on, void *fp);
void mc_account_failed(void);
/* threadstart.c's window around the C library's pthread_create: the
 * DTV the dynamic linker allocates in there counted without the entry
 * for libmemcheck's own TLS module. */
void mc_account_dtv_begin(void);
void mc_account_dtv_end(void);
/* Blocks recorded shorter than they are (that DTV), which the scan reads
 * whole: where the live block at ptr has this size and stack, extra
 * bytes more.  Call with the threads' lock held (or alone). */
struct mc_tail {
	uintptr_t ptr;
	uint64_t size;
	uint32_t stack, extra;
};
size_t mc_account_tails(const struct mc_tail **out);
/* Is a calloc of nmemb 16-byte entries a DTV made outside memcheck's
 * pthread_create (as many as a DTV the dynamic linker makes now may
 * have, below, and not in the window)?  Its caller is asked later
 * (account.c's dtv_counted). */
bool mc_account_dtv_outside(size_t nmemb);
#define MC_DTV_ENTRY (2 * sizeof(void *)) /* dtv_t: a counter, or val and to_free */
/* The dynamic linker's mapping, [lo, lo + len), where its allocate_dtv
 * calls calloc from: told at start-up (mc_stacks_runtime_object, from
 * allocator.c), empty before and where it was not found. */
extern uintptr_t mc_loader_lo, mc_loader_len;
/* The calling thread's DTV's entries with its two heads (its length, its
 * generation): the thread pointer's second word points one entry into
 * the array (x86-64's tcbhead_t); SIZE_MAX where it has none. */
static inline size_t mc_dtv_own(void)
{
#if defined(__x86_64__)
	const uintptr_t *dtv;
	__asm__ volatile("mov %%fs:8, %0" : "=r"(dtv));
	return dtv ? dtv[-2] + 2 : SIZE_MAX;
#else
	return SIZE_MAX;
#endif
}
/* A calloc of nmemb 16-byte entries from ret that may be a DTV the
 * dynamic linker makes now: as many entries as the calling thread's own
 * DTV has, or a call from the dynamic linker's mapping, which makes it
 * with more where a library with thread-local storage was loaded since
 * that DTV was made (each takes a module id, and a DTV made now has room
 * for them all: a SIGEV_THREAD timer's helper thread made after such a
 * dlopen). */
static inline bool mc_dtv_entries(size_t nmemb, uintptr_t ret)
{
#if defined(__x86_64__)
	const uintptr_t *dtv;
	__asm__ volatile("mov %%fs:8, %0" : "=r"(dtv));
	return dtv && (dtv[-2] + 2 == nmemb || ret - mc_loader_lo < mc_loader_len);
#else
	(void)nmemb, (void)ret;
	return false;
#endif
}
/* Is p the calling thread's own DTV, the block the dynamic linker
 * reallocs to grow it (realloc's old pointer: one entry before the
 * array the thread pointer's second word points into)? */
static inline bool mc_dtv_block(const void *p)
{
#if defined(__x86_64__)
	const char *dtv;
	__asm__ volatile("mov %%fs:8, %0" : "=r"(dtv));
	return (const char *)p + MC_DTV_ENTRY == dtv;
#else
	(void)p;
	return false;
#endif
}
/* The main thread's DTV moved to memcheck's own memory at start-up
 * (life.c's constructor, after the probe), so that the dynamic linker
 * grows it with realloc, not malloc; realloc's DTV path (interpose.c's
 * realloc_dtv) asks mc_account_dtv_main whether old is it, and grows it
 * with mc_account_dtv_main_grow (fp: the call's frame; count: calls are
 * counted). */
void mc_account_dtv_main_take(void);
extern const void *mc_account_main_dtv;
static inline bool mc_account_dtv_main(const void *old)
{
	return unlikely(old == mc_account_main_dtv) && old;
}
void *mc_account_dtv_main_grow(void *old, size_t n, void *fp, bool count);
extern size_t mc_account_ntails; /* 0: none (the scan asks nothing) */
/* This thread's allocations and failed allocations counted so far. */
uint64_t mc_account_thread_events(void);
void mc_account_realloc_call(void);
/* A realloc refused (a freed block's, a pointer inside a block: it
 * returned NULL), and how many and of how many bytes in the process:
 * valgrind's HEAP SUMMARY counts each as an allocation of its new size
 * (vgtext.c); counted only under valgrind's text. */
void mc_account_realloc_refused(size_t n);
uint64_t mc_account_refused_reallocs(uint64_t *bytes);
/* Before the allocator's realloc: 1 the block is live (now marked freed,
 * *prev holds it), 0 memcheck never saw it, -1 it was freed already (the
 * call must not reach the allocator). */
int mc_account_realloc_begin(void *old, struct mc_block *prev, void *fp);
/* After it: p is the result (NULL: failed, or freed for size 0). */
void mc_account_realloc_end(void *old, void *p, size_t size, int st,
			    const struct mc_block *prev, void *fp);

/* The calling thread's own counters once it has a slot, else NULL: the
 * count-only fast path in interpose.c adds to them directly.  Set with
 * mc_set_totals(). */
#define mc_my_totals (mc_self.totals)

void mc_account_init(void);
/* Around fork (life.c's handlers): the slot lock; in the child the
 * other threads' slots retired. */
void mc_account_prefork(void);
void mc_account_postfork_parent(void);
void mc_account_postfork_child(void);
/* The timeline's countdown: the innermost region's step (timeline.c
 * sets it: 0, none open) and what runs when a thread's runs out (life.c
 * hands it mc_timeline_sample). */
void mc_account_step_set(int64_t step);
void mc_account_sampler_set(void (*fn)(void));
void mc_account_sum(struct mc_totals *t);
void mc_account_sum_held(struct mc_totals *t); /* slot_lock held */
/* Live bytes counted for the whole process, and the high-water mark. */
int64_t mc_account_live(void);
/* Restart this thread's timeline countdown (a region began). */
void mc_account_countdown(void);
/* The live-byte peak for region.c: _begin restarts it from the live
 * bytes now (*live) and returns the peak so far; _end returns the peak
 * since, and makes the greater of it and saved_peak the peak again. */
int64_t mc_account_peak_begin(int64_t *live);
int64_t mc_account_peak_end(int64_t saved_peak);

/* Other threads' stack mappings (their static TLS inside): threads that
 * have allocated, the main thread excepted.  Ranges allocator.c knows
 * are not the allocator's memory; stale once a thread has ended (a slot
 * lives until its thread's key destructor or its reaping), so never to
 * be read.  Between mc_account_threads_lock and _unlock. */
void mc_account_threads_lock(void);
void mc_account_threads_unlock(void);
int mc_account_other_stacks(uintptr_t (*out)[2], int max);
/* Thread tid's stack mapping and thread pointer, where it has allocated
 * (its slot's): the scan's last resort for a thread it could not stop
 * (threads.c), cut to what is mapped before it is read.  Slot lock held. */
bool mc_account_thread_stack_held(pid_t tid, uintptr_t *lo, uintptr_t *hi, uintptr_t *tp);
/* The size of the block freed last at p, where a thread's ring of
 * recent frees still holds it (scan.c's end_of_freed); false where none
 * does.  With the other threads held still, or none running. */
bool mc_account_freed_size(uintptr_t p, uint64_t *size);
/* The calling thread's stack, from the program's own pthread_getattr_np
 * on it (threadattr.c), where its slot could not ask (mc_stack_bounds). */
void mc_account_stack_known(uintptr_t lo, uintptr_t hi);


/* ---- region.c -------------------------------------------------------- */

/* The process region: begun at start-up, and every open region ended at
 * exit (life.c; from: where the program's stack begins). */
void mc_regions_begin_process(void);
struct mc_scan_from;
void mc_regions_end_all(const struct mc_scan_from *from);
/* At exit, before other objects' destructors run: the open regions'
 * RSS, allocator and timeline figures, for the mc_regions_end_all that
 * follows after them (life.c's destructor and on_exit handler). */
void mc_regions_exit_take(void);

/* life.c's fork handlers: the region stack held around fork, and in
 * the child every open region begun again. */
void mc_regions_lock(void);
void mc_regions_unlock(void);
void mc_regions_after_fork_child(void);
void mc_regions_restart_after_fork(void);
/* What region ends keep, forgotten in a child forked during one. */
void mc_report_state_forget(void);
/* A new epoch (signals.c's note of an alternate stack in a block,
 * roots.c); 0 where a region's begin or end holds the locks. */
uint32_t mc_region_epoch_mark(void);

/* ---- fault.c -------------------------------------------------------- */

/* Set while any failure-injection control or allocation counting is on:
 * the wrappers test it, and only it, before calling the allocator. */
extern int mc_fault_on;

/* ---- execenv.c ------------------------------------------------------- */
/* fork's prepare handler (life.c): the next execve and execvpe found in
 * the parent, once, for every child that execs after fork.  Weak: the
 * static archive has no execenv.o (GNUmakefile), and no exec to carry. */
void mc_exec_prefork(void) __attribute__((weak));

/* ---- sandbox.c ------------------------------------------------------- */

/* A process with root's effective id is about to change its ids
 * (creds.c): its report file opened now and kept for the exit. */
void mc_sandbox_keep_report(void);

/* ---- limits.c -------------------------------------------------------- */

/* Count-only malloc does not look at the result of a call for fewer
 * bytes: 0 while an address-space or data limit is set, or the kernel
 * does not overcommit, and until the limits are read.  Set by
 * mc_limits_read, which count-only malloc calls at every
 * MC_LIMITS_AFTER-th counted allocation while it is 0 (once it reads,
 * later calls return at once), and by the program's setrlimit/prlimit
 * calls, which limits.c wraps. */
#define MC_LIMITS_AFTER 8192u
extern size_t mc_sure_below; /* 0 or a power of two (limits.c) */
void mc_limits_read(void);
/* mc_fault_on was set: mc_sure_below is 0 from now on (interpose.c's
 * count-only malloc tests only it). */
void mc_limits_fault_on(void);

/* Called by the wrappers when mc_fault_on is set, before the allocator:
 * counts the call in the innermost region and decides.  True: the call
 * must fail (counted as failed, stack recorded, memcheck_fault() called,
 * errno ENOMEM set).  fp as for the account.c hooks; is_realloc counts
 * a realloc call too. */
bool mc_fault_check(void *fp, bool is_realloc);

void mc_fault_init(void);
/* Around fork (life.c's handlers): the fault lock; the child's regions
 * get ids of their own. */
void mc_fault_prefork(void);
void mc_fault_postfork_parent(void);
void mc_fault_postfork_child(void);
/* From memcheck's constructor on, failures may be injected. */
void mc_fault_start(void);
/* Region stack, kept in step with region.c's (region lock held). */
void mc_fault_region_begin(const char *name);
void mc_fault_region_rename(const char *name);
/* What failure injection saw in the innermost region; pops it. */
struct mc_fault_info {
	bool counted;               /* calls and id are meaningful */
	char id[64];                /* region_id */
	uint64_t calls;             /* allocation calls while innermost */
	uint64_t injected;
	bool oom_expected;
	size_t nstacks;
	struct { uint32_t stack; uint64_t count; } stacks[16];
};
void mc_fault_region_end(struct mc_fault_info *out);
/* In a forked child, region.c's stack reordered: the level of the
 * region at from[i] (0: the outermost) goes to i, for i < n. */
void mc_fault_region_reorder(const int *from, int n);

/* ---- checkname.c ----------------------------------------------------- */

/* The name of the check test running in this process (check's
 * tcase_name(), found in the program even when check is linked
 * statically), or NULL when there is none.  Guard held: dlsym may
 * allocate. */
const char *mc_check_test_name(void);

/* ---- resident.c ------------------------------------------------------ */

/* Bytes of [lo, hi) in memory now (mincore), pages rounded outward. */
uint64_t mc_resident_bytes(uintptr_t lo, uintptr_t hi);
/* Bytes of [lo, hi) mapped in this process (pagemap's present bit,
 * through fd: /proc/self/pagemap), pages rounded outward; -1 if
 * unreadable. */
int64_t mc_mapped_bytes(int fd, uintptr_t lo, uintptr_t hi);
/* The same, and *file (if not NULL) the bytes of them that are a file's
 * pages (pagemap's bit 61). */
int64_t mc_mapped_bytes_file(int fd, uintptr_t lo, uintptr_t hi, int64_t *file);
/* One line of /proc/self/maps. */
struct mc_mapping {
	uintptr_t lo, hi;
	bool readable, writable, shared;
	bool executable;            /* code may run there: an object's text */
	bool anonymous;             /* no file behind it ([heap] included) */
	const char *name;           /* the path or [name]; "" for none */
};
/* cb for each mapping, in address order, until it returns false; false
 * when /proc/self/maps cannot be read.  No malloc. */
bool mc_maps_each(bool (*cb)(const struct mc_mapping *m, void *arg), void *arg);
/* Where each file's run of mappings begins, noted mapping by mapping in
 * address order into a table of records (the start, 8 bytes, then the
 * name and its NUL); names as long as a frame's object name or longer
 * are left out. */
struct mc_maps_runs {
	struct mc_buf *b;
	bool fixed;             /* b never grows: past its cap, b->oom */
	char prev[256];         /* the last mapping's name */
	bool prev_ok;
};
void mc_maps_runs_note(struct mc_maps_runs *w, const struct mc_mapping *m);
/* The name of the run that starts at lo in such a table, or NULL; in a
 * table made by mc_maps_runs_query, of the mapping that starts at lo,
 * asked into name (cap bytes: a longer name is none). */
const char *mc_maps_run_at(const struct mc_buf *runs, uintptr_t lo, char *name, size_t cap);
/* The same asked of the kernel alone (PROCMAP_QUERY), through a maps
 * file opened for the question and closed: three system calls in a
 * process that never started a thread (five in one that did), where a
 * read of the whole file has the kernel write out every mapping.
 * *asked: false where it cannot ask (no such ioctl, the file not opened,
 * the queries off), and the caller reads the file. */
const char *mc_maps_name_at(uintptr_t lo, char *name, size_t cap, bool *asked);
/* PROCMAP_QUERY (Linux 6.11+): /proc/self/maps opened to ask by address
 * (-1: cannot, or the kernel had no such ioctl); the mapping covering
 * addr (or_next: or the first after it) into m, its name into name
 * (cap bytes; NULL: none asked): 1, 0 for none, -1 when the ioctl
 * failed (read the file instead).  No malloc. */
bool mc_maps_query_open(struct mc_kept_fd *f);
/* The same for mc_vmas_read_sole's caller: sure (see mc_kept_fd). */
bool mc_maps_query_open_sole(struct mc_kept_fd *f);
int mc_maps_query(int fd, uintptr_t addr, bool or_next, struct mc_mapping *m, char *name,
		  size_t cap);
/* The same for the first mapping at or after addr that has a file
 * behind it and may run code (an object's text), in a maps file of any
 * process: the kernel skips the others.  -1 also where a test turned
 * the queries off (mc_maps_query_set). */
int mc_maps_query_code(int fd, uintptr_t addr, struct mc_mapping *m, char *name, size_t cap);
/* cb for each private, readable and writable mapping with no file
 * behind it ("" or [heap]: the allocators' memory), in address order,
 * until it returns false; false when /proc/self/maps cannot be read.
 * Asked (PROCMAP_QUERY) where the kernel can, else read.  No malloc. */
bool mc_maps_anonymous_each(bool (*cb)(const struct mc_mapping *m, void *arg), void *arg);
/* Off (false): every reader reads the whole file, as on kernels before
 * 6.11 (the unit tests cover both ways). */
void mc_maps_query_set(bool on);
/* A copy of fd (close-on-exec) out of the way of the program's own
 * descriptors: from 900 up, or near the limit where that is lower; -1
 * when there is no room (textout.c). */
int mc_dup_high(int fd);
/* A table of runs that names no run but the open file fd, to ask
 * (mc_maps_run_at), with the file's identity.  The fd such a table
 * holds, if it is still that file, else -1; *query: the table is such
 * a table (NULL: not asked). */
void mc_maps_runs_query(struct mc_buf *b, const struct mc_kept_fd *f);
int mc_maps_runs_fd(const struct mc_buf *runs, bool *query);
/* Close such a table's file, if it still is that file. */
void mc_maps_runs_close(const struct mc_buf *runs);
/* The same, and runs asks through a copy opened per question from now
 * on (the number may be another file's next): the descriptor given back
 * where memcheck's own open met the open-file limit.  true where one
 * was closed. */
bool mc_maps_runs_release(struct mc_buf *runs);
/* Close fd if it still is the file it was when opened (dev, ino): a
 * thread of the program may have closed it and opened another under its
 * number since, which is the program's to close. */
void mc_maps_query_close(const struct mc_kept_fd *f);
/* Address ranges, in memory the caller gives (v, cap). */
struct mc_ranges {
	uintptr_t (*v)[2];
	int n, cap;
	bool overflow;              /* some did not fit */
};
void mc_ranges_add(struct mc_ranges *r, uintptr_t lo, uintptr_t hi);
void mc_ranges_sort(struct mc_ranges *r);
/* cb for each part of [lo, hi) that no range of r (sorted) covers. */
void mc_gaps_each(uintptr_t lo, uintptr_t hi, const struct mc_ranges *r,
		  void (*cb)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* The resident bytes of those parts. */
uint64_t mc_resident_outside(uintptr_t lo, uintptr_t hi, const struct mc_ranges *r);

/* ---- allocator.c ----------------------------------------------------- */

/* Name the live allocator from the object that serves malloc. */
const char *mc_allocator_name(void);
void mc_allocator_detect(void);
/* The load address of the C library when its malloc is the allocator,
 * else NULL (roots.c: its arena's pointers to chunk headers). */
const void *mc_allocator_glibc_base(void);
/* glibcarena.c: the C library's main arena (struct malloc_state) where it
 * lies in [lo, hi) (the C library's writable data), found by its shape:
 * the allocator's words, none of them a root. */
bool mc_glibc_arena(uintptr_t lo, uintptr_t hi, uintptr_t *alo, uintptr_t *ahi);
/* heuristics.c: which of valgrind's interior-pointer heuristics
 * (MEMCHECK_LEAK_HEURISTICS) keeps the live block [lo, lo + size)
 * reachable through w, a pointer into it but not at its start, or
 * MC_HEUR_NONE (enum above, by mc_kind). */
int mc_heuristic_reaches(uintptr_t lo, uint64_t size, uintptr_t w);
/* Is pc in the allocator's own object, when that is not the C library
 * and its extent is known (_dl_find_object, glibc 2.35+)?  roots.c and
 * scan.c: its data is a root only for the blocks it asked for itself. */
bool mc_allocator_own_code(uintptr_t pc);

/* The allocator's memory now: its own count of the bytes in use, read
 * through dlsym without linking to it, and how much of the memory it has
 * mapped is resident, measured page by page.  A figure that cannot be
 * had is MEMCHECK_UNKNOWN. */
struct mc_alloc_stats {
	uint64_t allocated;  /* bytes in blocks the program holds, as the
			      * allocator counts them (usable sizes) */
	uint64_t resident;   /* resident bytes of the memory the allocator
			      * serves blocks from (memcheck(7)) */
	uint64_t retained;   /* resident - allocated: kept, not used */
};
/* Fill *out; false when this allocator has no statistics memcheck can
 * read (every figure is then MEMCHECK_UNKNOWN).  Call with the guard
 * held: the allocator's statistics calls may allocate. */
bool mc_allocator_stats(struct mc_alloc_stats *out);
/* How long, at most, the allocator waits before it gives memory the
 * program freed back to the system on a timer (jemalloc's decay times,
 * mimalloc's decommit delays): its resident figures then depend on
 * timing.  0 when it does that by amounts or not at all (glibc,
 * tcmalloc; jemalloc with decay -1 or 0); MEMCHECK_UNKNOWN when it
 * cannot be told.  Guard held, as for mc_allocator_stats. */
uint64_t mc_allocator_timed_purge_ms(void);
/* The allocator's own call to give free memory back to the system
 * (malloc_trim(0), mi_collect(true), jemalloc's arena purge,
 * MallocExtension_ReleaseFreeMemory); false when it has none. */
bool mc_allocator_release(void);
/* In a fork child whose parent was ending a region on another thread. */
void mc_allocator_forget(void);

/* ---- budget.c -------------------------------------------------------- */

/* A parsed budget file (memcheck-budget(5)), in mmap'd memory. */
struct mc_budget;

/* Read and parse path.  NULL on error, with "name:line: message" in err
 * (name: path where NULL; the name the rules' messages give the file).
 * A FIFO no process writes is refused, not waited for. */
struct mc_budget *mc_budget_load(const char *path, const char *name, char *err, size_t errlen);
/* The same for the CLI: a FIFO's writer waited for, as cat(1) waits;
 * the file's text left in text (mc_buf_free), whatever the outcome. */
struct mc_budget *mc_budget_load_waiting(const char *path, struct mc_buf *text, char *err,
					 size_t errlen);
/* Parse text (len bytes) named name in messages; the same contract. */
struct mc_budget *mc_budget_parse(const char *text, size_t len, const char *name,
				  char *err, size_t errlen);
void mc_budget_free(struct mc_budget *b);
/* How a region's violations begin the message of a budget that could
 * not be read or parsed (gate.c), which a check of the budget's rules
 * again (tools/records.c) must keep. */
#define MC_BUDGET_NOT_APPLIED "budget not applied: "

/* The keys mc_result_field knows, NULL-terminated (for messages and docs). */
extern const char *const mc_result_keys[];

/* For budget_check.c: the same keys with where each figure is in a
 * result, and a parsed budget's layout. */
enum mc_key_kind { MC_KEY_COUNT, MC_KEY_BYTES, MC_KEY_SECONDS };
struct mc_key {
	const char *name;
	size_t off;              /* in struct memcheck_result */
	unsigned char kind;      /* enum mc_key_kind */
	unsigned char measured;  /* by the allocator or the system, not counted */
};
extern const struct mc_key mc_keys[];   /* in mc_result_keys' order */
/* The key named by the n bytes at s, or NULL. */
const struct mc_key *mc_key_find(const char *s, size_t n);

enum mc_rule_op { MC_OP_LE, MC_OP_LT, MC_OP_EQ };
enum mc_rule_form { MC_FORM_ABS, MC_FORM_PCT, MC_FORM_RATIO };

struct mc_rule {
	uint32_t line;
	uint32_t section;        /* index into sections */
	uint8_t key;             /* index into mc_keys[] */
	uint8_t op;              /* enum mc_rule_op */
	uint8_t form;            /* enum mc_rule_form */
	uint8_t si;              /* limit written in KB/MB/GB/TB: say so back */
	uint8_t inexact;         /* the byte limit had a fraction, cut off */
	uint64_t lim;            /* absolute: count or bytes */
	double f;                /* absolute: seconds; the percentage; the ratio */
};

/* "[glob... @alloc...]": nglob region globs then nalloc allocator
 * patterns, NUL-terminated one after the other in the pool at str. */
struct mc_section {
	uint32_t line;
	uint32_t nglob, nalloc;
	uint32_t str;
};

struct mc_budget {
	struct mc_buf pool;      /* strings: name, baseline, section patterns */
	struct mc_buf rules;     /* struct mc_rule[] */
	struct mc_buf sections;  /* struct mc_section[]; [0] is the implicit [*] */
	uint32_t nrules, nsections;
	uint32_t name;           /* pool offset of the file name */
	uint32_t baseline;       /* pool offset, or 0: "glibc" */
	uint32_t baseline_line;
	bool relative;
};

/* ---- budget_check.c -------------------------------------------------- */

/* The allocator relative limits compare against: the file's "baseline"
 * line, or "glibc" (also for b == NULL). */
const char *mc_budget_baseline(const struct mc_budget *b);
/* The file's name as its messages give it ("NAME:LINE: ..."). */
const char *mc_budget_name(const struct mc_budget *b);
/* True when some rule has a relative limit (+10%, 1.25x): the baseline
 * allocator's figures are needed. */
bool mc_budget_relative(const struct mc_budget *b);

/* Check a region's figures against every rule whose section matches the
 * region name and allocator.  baseline is the same region measured under
 * the baseline allocator, or NULL.  Each violated rule appends one
 * message ("memcheck.budget:12: peak_rss 70.1 MiB > 64.0 MiB") to out,
 * "; "-separated after what out already holds.  Returns the number of
 * violated rules. */
int mc_budget_check(const struct mc_budget *b, const char *region, const char *allocator,
		    const struct memcheck_result *r, const struct memcheck_result *baseline,
		    char *out, size_t outlen);

/* A numeric figure of a result by its report key: "allocs", "peak_rss",
 * "definitely_lost.bytes", "definitely_lost.blocks" ("definitely_lost"
 * alone means bytes).  False for an unknown key; *v is MEMCHECK_UNKNOWN
 * for a figure that was not measured. */
bool mc_result_field(const struct memcheck_result *r, const char *key, uint64_t *v);

/* The lowest limit the budget sets on key (a count or bytes key) for
 * region under allocator, relative ones computed from baseline (may be
 * NULL: they are left out); false when no rule applies. */
bool mc_budget_limit(const struct mc_budget *b, const char *region, const char *allocator,
		     const char *key, const struct memcheck_result *baseline, uint64_t *lim);

/* Whether one of the "; "-separated budget messages in violations is
 * about a peak (peak_rss, peak_live_bytes): the report then shows where
 * the memory was at the peak. */
bool mc_violations_name_peak(const char *violations);

/* ---- gate.c ---------------------------------------------------------- */

/* Judge a region's result against MEMCHECK_BUDGET (with MEMCHECK_BASELINE
 * for relative limits): violations are appended and pass cleared. */
void mc_gate_region(struct memcheck_result *res);
void mc_gate_forget(void);   /* as mc_allocator_forget */
/* The budget and baseline files read now: the program is about to
 * restrict its own opens (sandbox.c). */
void mc_gate_prepare(void);
/* Does the budget read a figure that matching indirectly lost and still
 * reachable records changes (their own, suppressed), or fail every region
 * (a file that does not parse)?  Reads the files if not read yet. */
bool mc_gate_reads_kept(void);
/* Does MEMCHECK_BUDGET's file name an RSS figure anywhere (or cannot it
 * be read)?  Read at once, nothing mapped: start-up asks (life.c). */
bool mc_gate_budget_names_rss(void);

/* ---- json.c ---------------------------------------------------------- */

/* One record of a JSON Lines report, as read back. */
struct mc_record {
	struct memcheck_result r;
	char program[256];
	char allocator[128];
	int pid;
	uint64_t timed_purge_ms;    /* MEMCHECK_UNKNOWN when absent */
	uint64_t run, runs;         /* memcheck run's repetition, of how
				     * many; MEMCHECK_UNKNOWN when absent */
	char args_hash[17];         /* the arguments' key; "" when absent */
	char args_files[17];        /* their files' key; "" when absent */
	uint64_t exit_status;       /* the program's own status at the exit
				     * the record was written at; read by
				     * the command only: MEMCHECK_UNKNOWN */
};
/* Parse one line of a report.  False on malformed JSON or a record that
 * is not memcheck's, with a message (column and what was expected) in
 * err. */
bool mc_json_record(const char *line, size_t len, struct mc_record *out,
		    char *err, size_t errlen);
/* The first leak record of a kind that fails a region (definitely or
 * possibly lost): its kind ("" when there is none), size, the top
 * frames of its stack, one "function (file:line)" a line, and the first
 * frame in a program's own code as "file:line" ("" when none has one),
 * for a CI reporter to link (the CLI's JUnit). */
#define MC_JSON_FRAMES 6
struct mc_json_leak {
	char kind[24];
	uint64_t blocks, bytes;
	char site[192];
	char stack[MC_JSON_FRAMES * 160];
	int nframes;
};
/* mc_json_record that also fills *leak (may be NULL). */
bool mc_json_record_leak(const char *line, size_t len, struct mc_record *out,
			 struct mc_json_leak *leak, char *err, size_t errlen);

/* A value inside a report line, as a span [p, end) of it: the CLI reads
 * the nested keys (leaks, peak_snapshot, timeline) this way, nothing
 * allocated.  open: for an iterator, '[' or '{' once started, else 0. */
struct mc_jv {
	const char *p, *end;
	char open;
};
/* The line's one value (a record: an object).  False when malformed. */
bool mc_jv_line(const char *line, size_t len, struct mc_jv *out);
/* The member key of an object. */
bool mc_jv_get(struct mc_jv obj, const char *key, struct mc_jv *out);
/* Elements of an array, members of an object (*key: their key), in
 * order: *it starts as the array or object (open 0) and moves on. */
bool mc_jv_next(struct mc_jv *it, struct mc_jv *key, struct mc_jv *val);
bool mc_jv_null(struct mc_jv v);
bool mc_jv_bool(struct mc_jv v);
bool mc_jv_u64(struct mc_jv v, uint64_t *out);     /* null: MEMCHECK_UNKNOWN */
bool mc_jv_real(struct mc_jv v, double *out);      /* null: NaN */
/* A string, decoded into dst[size], cut at a character when too long. */
bool mc_jv_str(struct mc_jv v, char *dst, size_t size);

/* ---- vgmode.c ------------------------------------------------------ */

/* Under valgrind with memcheck's wrapper reached, or with memcheck
 * bypassed by valgrind's own malloc, a region's leak figures are
 * valgrind's: leak checks at its begin and end, the differences of
 * valgrind's totals.  index is the region's place on the region stack;
 * bypassed, the process region is left to valgrind's own exit. */
bool mc_vg_mode(void);
void mc_vg_region_begin(int index, const char *name, bool process);
/* Fill res's leak kinds and suppressed from valgrind; false (res
 * untouched) when the region did not begin in valgrind mode. */
bool mc_vg_region_end(int index, struct memcheck_result *res);
/* Forget region index's baseline: the region was discarded. */
void mc_vg_region_drop(int index);

/* ---- rss.c ----------------------------------------------------------- */


uint64_t mc_rss_current(void);       /* bytes, 0 if unreadable */
/* The same, statm left open in *fd (-1 where it could not be) for one
 * more read, mc_rss_current_at's, which closes it: the two reads of
 * start-up's window (footprint.c), with none of the program's code
 * between them, are four system calls where they were six.  Where fd
 * is -1, or its read fails or is not statm's, the file is opened anew.
 * *anon (if not NULL): the anonymous bytes of the RSS (statm's resident
 * less shared), which start-up's window counts (footprint.c). */
uint64_t mc_rss_current_open(int *fd, uint64_t *anon);
uint64_t mc_rss_current_at(int fd, uint64_t *anon);
/* VmHWM, bytes; *threads (if not NULL): the process's threads then
 * (status's Threads:), *rss (if not NULL): the RSS then (VmRSS, bytes,
 * as mc_rss_current gives it); each 0 if unreadable. */
uint64_t mc_rss_peak(unsigned *threads, uint64_t *rss);
/* Reset the high-water mark to the current RSS; false if not permitted. */
bool mc_rss_reset_peak(void);
/* The process's page faults so far, every thread's (getrusage's minor
 * and major ones: a page made present by a populate or a mapping's
 * MAP_POPULATE counts too), through the system call; UINT64_MAX if
 * unreadable.  Where it has not moved between two reads of status, the
 * mark cannot have risen: no page came in. */
uint64_t mc_rss_faults(void);
/* The kernel's mark as getrusage(RUSAGE_SELF) gives it, kB, through the
 * system call (not the wrapper, rusage.c): the greater of the mark and
 * what the process's image before an exec reached; 0 if unreadable. */
uint64_t mc_rss_mark_kb(void);
/* The memory the process may take without reclaim or swap: the least
 * of the system's available memory (/proc/meminfo's MemAvailable) and
 * its memory cgroup's room (limit less usage, of its cgroup and each
 * ancestor: cgroup v2, or v1's memory controller), bytes; false where
 * none of them can be read. */
bool mc_memory_room(uint64_t *room);
/* fn for each of the process's threads (/proc/self/task), the caller
 * included, until it returns false; false then or when they cannot be
 * listed.  No malloc. */
bool mc_tasks_each(bool (*fn)(pid_t tid, void *arg), void *arg);
/* /proc/self/task/TID followed by tail ("/status") into buf,
 * NUL-terminated; its length or -1. */
ssize_t mc_task_read(pid_t tid, const char *tail, char *buf, size_t size);
/* The stack pointer and pc the kernel shows for thread tid blocked in a
 * system call (/proc/self/task/TID/syscall: "NR args... sp pc", or "-1
 * sp pc"); false where it runs or cannot be read. */
bool mc_task_blocked(pid_t tid, uintptr_t *sp, uintptr_t *pc);
/* The numeric fields fields[0..n) (each from 3) of /proc/PID/stat
 * (pid 0: /proc/self/stat), read once, into values: false where the
 * file cannot be read or a field is not a number. */
bool mc_proc_stat(pid_t pid, const int *fields, uint64_t *values, int n);
/* Is the caller the only thread that still runs code of its own?  The
 * others /proc/self/task lists must all be in the kernel's exit:
 * pthread_join returns as the kernel clears the thread's id, before it
 * leaves the count /proc/self/stat and status give.  false when the
 * threads cannot be listed or read. */
bool mc_threads_alone(void);
/* No thread was ever created through the C library (glibc's
 * __libc_single_threaded): the process is alone without a look at
 * /proc.  Premise: a thread made by a raw clone(CLONE_THREAD), which
 * the C library does not see, is not there (one would break the C
 * library's own single-thread shortcuts too).  false when unknown. */
bool mc_never_threaded(void);
/* Has thread tid begun its exit (PF_EXITING: it runs no more code of
 * its own, its stack and TLS are dead), or gone altogether? */
bool mc_task_exiting(pid_t tid);
/* Field n (from 3) of /proc/self/stat, a number; 0 when unreadable.
 * The fields memcheck reads (proc(5)): */
#define MC_STAT_PPID 4         /* the parent's pid */
#define MC_STAT_NUM_THREADS 20 /* the process's threads */
#define MC_STAT_START_TIME 22  /* clock ticks from boot to its start */
#define MC_STAT_START_BRK 47   /* where the heap (brk) began */
uint64_t mc_stat_field(int n);

/* ---- symbolize.c ----------------------------------------------------- */

struct mc_frame_info {
	/* Room for C++'s names, which valgrind prints whole: a template's
	 * member inlined from a standard container runs past 128 characters,
	 * its mangled symbol past 255 (a std::map's insertion, 276). */
	char function[256];        /* as the debug information names it */
	char linkage[512];         /* the symbol's name (mangled for C++), as
				    * valgrind's suppressions name it */
	char file[256];
	int line;
	char object[256];
};
/* The runs of files that the scan's read of /proc/self/maps found
 * (struct mc_vmas), lent to elfmod.c for the objects' paths that the
 * region's suppressions need, or taken back (NULL) before they are
 * freed: a region's end then reads the file once, not once for the scan
 * and once for the names.  Takes symbolize.c's lock: another thread may
 * be naming frames (a heap error). */
void mc_symbolize_maps_lend(const struct mc_buf *runs);
/* Resolve a return address (pc is a return address: the call is pc-1). */
void mc_symbolize(uintptr_t pc, struct mc_frame_info *out);
/* The same with inlined functions expanded: out[0] is the innermost
 * (inlined) function at pc, each next one the function it was inlined
 * into, with the call's file:line.  Returns the frames written (>= 1). */
#define MC_MAX_INLINE 8
int mc_symbolize_frames(uintptr_t pc, struct mc_frame_info *out, int max);
/* MC_MAX_INLINE frames of the library's to name a stack in, or NULL where
 * another caller has them (name on the stack then); given back after. */
struct mc_frame_info *mc_symbolize_frames_borrow(void);
void mc_symbolize_frames_return(void);
/* The line where the function holding pc (a return address) begins: the
 * line table's at its symbol's start, as valgrind names a stack frame's
 * creator ("created by FN (FILE:LINE)"); 0 where unknown (symsession.c). */
int mc_symbolize_fn_line(uintptr_t pc);
/* The data symbol (an object's) holding addr, its name in out's function
 * and linkage, and addr's offset in it: valgrind's "N bytes inside data
 * symbol" (symsession.c). */
bool mc_symbolize_data(uintptr_t addr, struct mc_frame_info *out, uint64_t *off);
/* The compile directory of pc's unit (symsession.c), for valgrind's XML. */
bool mc_symbolize_comp_dir(uintptr_t pc, char *out, size_t cap);
/* The frame pc's symbol table names, one, with no file:line and no
 * inlined frames: what mc_symbolize_frames gives where it reads no debug
 * information (the system's libraries), without reading any.  *deep:
 * mc_symbolize_frames reads the debug information at pc (it may give
 * other names, inlined frames, a file:line). */
void mc_symbolize_quick(uintptr_t pc, struct mc_frame_info *out, bool *deep);
/* The quick frames of n pcs (ascending) made ahead, each object's table
 * read once for all of its pcs: what mc_symbolize_quick then gives. */
void mc_symbolize_quick_many(const uintptr_t *pcs, size_t n);
/* Could the debug information mc_symbolize_frames reads at pc name a
 * function (inlined or not) whose name contains the len bytes at s?
 * false only when its string data (the object's own .debug_str,
 * .debug_line_str and .debug_info, uncompressed, no other file) holds
 * no such bytes. */
bool mc_symbolize_may_name(uintptr_t pc, const char *s, size_t len);

/* ---- symverdict.c ---------------------------------------------------- */

/* For suppcache.c's verdicts: the key of the stack pcs[0, n) appended
 * to a (each frame as its object and offset, MEMCHECK_SYMBOLIZE_SYSTEM,
 * each object's quick key and path); with links (the writer's), each
 * object's looked-for .gnu_debuglink name appended there, and false
 * unless every object's names follow from what the key holds; false
 * also where an object has no key. */
bool mc_symbolize_verdict_key(const uintptr_t *pcs, int n, struct mc_buf *a, struct mc_buf *links);
/* After the match a writer's key was taken for: false where an object
 * of pcs[0, n) was named in another state of its build-ID debug file
 * than its key holds (elfmod.c's debug_unlike: the file there could not
 * be opened): its verdict is not to be kept. */
bool mc_symbolize_verdict_sound(const uintptr_t *pcs, int n);
/* The hash a record of that key (the kind's byte first) is found by
 * (memcheck-cache(5)). */
uint64_t mc_symbolize_verdict_hash(const char *key, size_t len);
/* A reader's stack, for the look-up: its key's frames part, its
 * objects, the whole key's length and its hash (each object's part
 * hashed once a session, not copied); false: no key (as above). */
#define MC_VERDICT_OBJS 8
struct mc_verdict_stack {
	uint64_t hash;
	size_t len, flen;
	int nobj;
	void *objs[MC_VERDICT_OBJS];
	char frames[1 + 2 + MC_MAX_DEPTH * 9 + 1];
};
bool mc_symbolize_verdict_stack(int kind, const uintptr_t *pcs, int n,
				struct mc_verdict_stack *s);
/* Is key[0, len) s's key, and does each of links' names' places (the
 * writer's links) still hold no file? */
bool mc_symbolize_verdict_holds(const struct mc_verdict_stack *s, const char *key, size_t len,
				const char *links, size_t llen);

/* ---- symsession.c ---------------------------------------------------- */

void mc_symbolize_end(void);
/* The same at the process's last report: the objects' files and their
 * tables are forgotten, not unmapped (the exit drops them). */
void mc_symbolize_end_at_exit(void);
/* Around fork (life.c's handlers): the lock libdw is used under is
 * only tried (its holder may be waiting for the allocator); a child
 * whose parent was using libdw on another thread forgets that session. */
void mc_symbolize_prefork(void);
void mc_symbolize_postfork(bool child);

/* ---- demangle.c ------------------------------------------------------ */

/* Room for a shown name: valgrind prints C++ names whole, and a
 * container's member's runs to ~1500 characters. */
#define MC_SHOWN_MAX 2048
/* fi's symbol's name demangled into buf (cut at cap), or fi->function
 * where it cannot be. */
const char *mc_frame_demangled(const struct mc_frame_info *fi, char *buf, size_t cap);
/* The name a report shows for fi, as valgrind prints it: a frame's own
 * function (inlined false: the last of mc_symbolize_frames's) by its
 * symbol's name demangled, an inlined one by fi->function, as is any
 * name that is no C++ one.  The test inline: a C program's frames call
 * nothing more (no function of demangle.c's, blocks away from the exit's
 * code in text-order.ld's layout, is run). */
static inline bool mc_frame_demangles(const struct mc_frame_info *fi, bool inlined)
{
	/* valgrind demangles Itanium ABI names alone (_Z...): a C
	 * function's name, GCC's clones of one (foo.constprop.0) and the C
	 * library's versioned names stay as they are */
	return !inlined && fi->linkage[0] == '_' && fi->linkage[1] == 'Z';
}
static inline const char *mc_frame_shown(const struct mc_frame_info *fi, bool inlined, char *buf,
					 size_t cap)
{
	return mc_frame_demangles(fi, inlined) ? mc_frame_demangled(fi, buf, cap) : fi->function;
}

/* ---- symcache.c: mc_symbolize_frames's answers kept across processes
 * (MEMCHECK_CACHE; memcheck-cache(5)); with symbolize.c's lock held ---- */

/* The n frames cached for (a module's build ID, a pc's offset in it, max)
 * into out (object left empty), or 0.  max MC_SYMCACHE_QUICK: the quick
 * frame (mc_symbolize_quick's: the symbol table's name, one frame). */
#define MC_SYMCACHE_QUICK (MC_MAX_INLINE + 1)
int mc_symcache_get(const unsigned char *id, size_t idlen, uint64_t off, int max,
		    struct mc_frame_info *out);
/* mc_symcache_get's quick frame (max MC_SYMCACHE_QUICK) in place: its
 * line and its function's, linkage's and file's bytes (str[i], len[i]
 * of them and a NUL: the record's own, read before the next put of the
 * cache); false: none, or the record does not decode. */
bool mc_symcache_quick_ref(const unsigned char *id, size_t idlen, uint64_t off, int32_t *line,
			   const char *str[3], size_t len[3]);
/* Whether the cache's file of id holds records (read at the first ask
 * for id, as mc_symcache_get reads it): a build ID's file is written
 * only for an object whose names and DWARF are its file's alone
 * (symkeys.c's own_key), whose quick frames lie in it too. */
bool mc_symcache_holds(const unsigned char *id, size_t idlen);
/* The same of a record's payload p[0..size) (the fuzz target's). */
bool mc_symcache_quick_view(const char *p, size_t size, int32_t *line, const char *str[3],
			    size_t len[3]);
/* max MC_SYMCACHE_NAME: a record of mc_symbolize_may_name's answers,
 * each for (an offset, or MC_SYMCACHE_ANY for every offset, a string of
 * 1 to MC_SYMCACHE_NAME_LEN bytes): one record a module a process. */
#define MC_SYMCACHE_NAME (MC_SYMCACHE_QUICK + 1)
#define MC_SYMCACHE_ANY UINT64_MAX
#define MC_SYMCACHE_NAME_LEN 255
/* max MC_SYMCACHE_LINK: a file's link record, the .gnu_debuglink name
 * (1 to 255 bytes, no '/') whose places held no file when the file's
 * quick records marked linked (symbolize.c) were written: they hold
 * while its places hold none, which the reader checks beside its own
 * object's path.  One a file; a process appends it before its first
 * linked record. */
#define MC_SYMCACHE_LINK (MC_SYMCACHE_NAME + 1)
#define MC_SYMCACHE_LINK_LEN 255
/* The file's link name (NUL-terminated, the record's own bytes, read
 * before the next put of the cache), NULL: none. */
const char *mc_symcache_link_get(const unsigned char *id, size_t idlen);
/* Keep link as the file's link record where it has none yet. */
void mc_symcache_link_put(const unsigned char *id, size_t idlen, const char *link);
/* A link record's payload p[0..size): its name, NULL where it is not
 * one; link framed as a record into dst (its length, 0: not valid or
 * does not fit). */
const char *mc_symcache_link_view(const char *p, size_t size);
size_t mc_symcache_link_encode(char *dst, size_t cap, const char *link);
/* That answer for (id, off, s[0..len)), or the one kept for every
 * offset (then *any true): 1, 0, or -1 (not kept). */
int mc_symcache_name_get(const unsigned char *id, size_t idlen, uint64_t off, const char *s,
			 size_t len, bool *any);
/* Keep it, under off or MC_SYMCACHE_ANY; written at mc_symcache_flush. */
void mc_symcache_name_put(const unsigned char *id, size_t idlen, uint64_t off, const char *s,
			  size_t len, bool found);
/* Keep f[0..n) as that answer; written at mc_symcache_flush. */
void mc_symcache_put(const unsigned char *id, size_t idlen, uint64_t off, int max,
		     const struct mc_frame_info *f, int n);
/* Append what was put since the last flush, one write a module. */
void mc_symcache_flush(void);
/* In a forked child: everything forgotten (not unmapped), nothing the
 * parent will write written twice. */
void mc_symcache_forget(void);
/* A file of the cache's directory opened by its path (flags: open(2)'s,
 * O_NOFOLLOW and O_CLOEXEC added, mode 0600; the directory made first
 * where they hold O_CREAT), or -1: the directory checked ours once a
 * process.  Renamed, unlinked in it: for suppcache.c's file beside the
 * modules' */
int mc_symcache_open(const char *name, int flags);
bool mc_symcache_rename(const char *from, const char *to);
void mc_symcache_unlink(const char *name);
/* fd is of type (S_IFREG, S_IFDIR), owned by the effective user, and no
 * one else may write it: a cache file or directory memcheck may trust.
 * *st (may be NULL): its fstat. */
bool mc_symcache_ours(int fd, mode_t type, struct stat *st);
/* The file format, for the fuzz target: a record's checksum; one record
 * of n frames encoded into dst (its length, 0: does not fit or not
 * valid); a payload decoded (frames into out[0..cap), out may be NULL;
 * n, or 0 if malformed); fn called for each record of p[0..len) whose
 * frame and checksum hold and whose head decode accepts (its payload at
 * p + at; a frame record's strings are decode's to check when it is
 * read), skipping damaged bytes; how many. */
uint32_t mc_symcache_sum(const char *p, size_t n);
/* The 64-bit hash of memcheck-cache(5)'s suppression files: their sum's
 * steps (mc_suppcache_sum), then each byte after the last whole word. */
uint64_t mc_symcache_hash(const char *p, size_t n);
size_t mc_symcache_encode(char *dst, size_t cap, uint64_t off, int max,
			  const struct mc_frame_info *f, int n);
int mc_symcache_decode(const char *p, size_t size, uint64_t *off, int *max,
		       struct mc_frame_info *out, int cap);
/* A name record (max MC_SYMCACHE_NAME): its n answers' bytes ent[0..len)
 * (memcheck-cache(5)) framed into dst; its length, 0: not valid or does
 * not fit.  fn (may be NULL) called for each answer of a record's
 * payload p[0..size) (the answer's bytes at p + at); how many, 0: not a
 * well-formed name record. */
size_t mc_symcache_names_encode(char *dst, size_t cap, const char *ent, size_t len, int n);
int mc_symcache_names_each(const char *p, size_t size,
			   void (*fn)(void *arg, uint64_t off, bool found, const char *s,
				      size_t len, size_t at),
			   void *arg);
size_t mc_symcache_parse(const char *p, size_t len,
			 void (*fn)(void *arg, uint64_t off, int max, size_t at, size_t size),
			 void *arg);

/* ---- allocfn.c ------------------------------------------------------- */

/* Allocation functions (MEMCHECK_ALLOC_FN, and thin wrappers found by
 * their code): the frames at the start of a stack that a site is named
 * past.  Judged at report time, never per malloc. */
/* Does frame fi's function match a MEMCHECK_ALLOC_FN pattern? */
bool mc_allocfn_named(const struct mc_frame_info *fi);
/* Does the code at return address pc hand the block it got back to its
 * caller and do nothing else (MEMCHECK_ALLOC_FN_AUTO)? */
bool mc_allocfn_thin(uintptr_t pc);
/* Either, for frame f[i] of a stack f[0..n): fi is one of the
 * functions at f[i] (inlined ones first: inlined, not its own function).
 * A thin function's own frame counts only where its caller takes the
 * value (the code at f[i+1], or a caller it returns it to). */
bool mc_allocfn_is(const uintptr_t *f, int n, int i, const struct mc_frame_info *fi,
		   bool inlined);
/* How many frames at the start of f[0..n), inlined ones expanded as
 * mc_symbolize_frames expands them, are allocation functions; fi: the
 * caller's MC_MAX_INLINE frames to name them in (6 KiB: the report's
 * stack walks lend their own, so that the exit's stack stays a page or
 * two shallower, each page of it a page fault). */
int mc_allocfn_lead(const uintptr_t *f, int n, struct mc_frame_info *fi);

/* ---- suppress.c ------------------------------------------------------ */

/* valgrind-format suppression files (memcheck-suppressions(5)), parsed
 * into mmap'd memory.  Only Memcheck:Leak entries are kept; the others
 * are parsed (errors in them are errors) and counted. */
#define MC_SUPP_MAX_FRAMES 24   /* valgrind's VG_MAX_SUPP_CALLERS */
struct mc_supps;
struct mc_supps *mc_supp_new(void);
void mc_supp_free(struct mc_supps *s);
/* Parse text (len bytes) named name and add its entries to s.  False on
 * error, with "name:line: what was expected" in err; s is then as it
 * was.  True with err not empty: a note on a file that parses (an entry
 * skipped as valgrind skips it, whose author meant otherwise: its name
 * line missing), for the caller to say.  mc_supp_load reads the file at
 * path first. */
bool mc_supp_parse(struct mc_supps *s, const char *text, size_t len, const char *name,
		   char *err, size_t errlen);
bool mc_supp_load(struct mc_supps *s, const char *path, char *err, size_t errlen);
/* fn is one of the C library's start-up functions below main, which
 * valgrind shows as "(below main)" and where its stacks stop. */
bool mc_supp_below_main(const char *fn);
/* Of each entry of the files parsed into s from now on, only the first
 * lines frame lines, the rest skipped unread, as valgrind's loader reads
 * a file under --num-callers=lines (0: every line). */
void mc_supp_read_lines(struct mc_supps *s, int lines);
/* Entries parsed from now on that carry a "# freeres:" mark of one of
 * bits (MC_FREERES_*) are parsed and not applied, as another tool's:
 * the shipped files' entries for what valgrind's freeres frees, under
 * valgrind's command line with that freeres off; so too, with the bit
 * MC_SUPP_VALGRIND_LISTS, those marked "# valgrind: lists" (0: all
 * applied). */
void mc_supp_drop_freeres(struct mc_supps *s, unsigned bits);
/* The freeres functions memcheck ran at the exit (life.c sets it,
 * supp_region.c drops their entries then) */
extern unsigned mc_freeres_ran;
/* Whether the process was down to its one thread where life.c decided
 * whether to run them at the exit (1 alone, 0 not: they were skipped),
 * -1 where it did not ask: supp_region.c counts what they would free
 * freed by that one answer, not by asking again */
extern int mc_freeres_alone;
/* mc_supp_load with the file read into io's buffer, kept for the next
 * file (grown for a larger one); mc_supp_io_free unmaps it. */
struct mc_supp_io {
	char *buf;
	size_t cap;
	bool regular;   /* the caller knows the file is a regular one: no fstat */
	const char *name; /* the file's name in messages and entries, where
			   * path is a copy of it (MEMCHECK_SUPPRESSIONS_NAMES);
			   * NULL: path */
};
bool mc_supp_load_io(struct mc_supps *s, const char *path, struct mc_supp_io *io,
		     char *err, size_t errlen);
void mc_supp_io_free(struct mc_supp_io *io);
size_t mc_supp_count(const struct mc_supps *s);   /* leak entries */
size_t mc_supp_others(const struct mc_supps *s);  /* other entries */
/* libmemcheck:Pool entries (among the leak entries' count): a block
 * allocated along a stack one matches is a pool the program carves
 * smaller objects from, and a pointer into it counts as one to its start
 * (scan.c).  mc_supp_match with kind MC_SUPP_POOL matches only them,
 * with a leak kind never them. */
size_t mc_supp_pools(const struct mc_supps *s);
#define MC_SUPP_POOL 4
/* Entry i's "# freeres:" marks: MC_FREERES_CXX, MC_FREERES_LIBC. */
unsigned mc_supp_freeres(const struct mc_supps *s, size_t i);
/* Entry i's name, and the file and line of its '{'. */
/* an entry's name, file, line of its '{' and of its name */
const char *mc_supp_name(const struct mc_supps *s, size_t i, const char **file, int *line,
			 int *name_line);
/* The frames of one stack, inlined calls expanded, innermost first:
 * frame(arg, i) is frame i, or NULL past the last.
 *
 * Optionally a quicker view of the same stack, one frame a return
 * address as its symbol table names it: quick(arg, i, &deep), NULL past
 * the last; deep when frame() reads debug information there, which may
 * expand it into inlined frames, name it otherwise and give it a
 * file:line.  may_name(arg, i, s, len): could that debug information
 * name something containing those bytes?  (s lies in the suppression
 * set: one pointer a pattern, which the caller may key answers on.)
 * With them an entry is
 * matched on the quick view, and on frame() only where the quick view
 * cannot tell what frame() would answer. */
struct mc_supp_stack {
	const struct mc_frame_info *(*frame)(void *arg, int i);
	void *arg;
	const struct mc_frame_info *(*quick)(void *arg, int i, bool *deep);
	bool (*may_name)(void *arg, int i, const char *s, size_t len);
	/* Optional, with quick: the return addresses of its npcs frames
	 * and a cache of their names for the stacks matched after this one
	 * (MC_SUPP_NAMES_BYTES, zeroed, the caller's: valid while the
	 * addresses name the same code, one region's end). */
	const uintptr_t *pcs;
	int npcs;
	void *names;
};
#define MC_SUPP_NAMES_BYTES (16 * 1024)
/* The first leak entry whose kinds include kind (enum mc_kind) and whose
 * frames match a prefix of the stack, alone or behind one or two virtual
 * frames standing for valgrind's allocation frames; -1 if none.  self:
 * the path of libmemcheck, which obj: patterns for them may name. */
long mc_supp_match(const struct mc_supps *s, int kind, const struct mc_supp_stack *st,
		   const char *self);
/* valgrind's wildcards: '*', '?', '\' escaping the next character. */
bool mc_supp_glob(const char *pat, const char *s);
/* malloc, calloc, ..., operator new and new[] (mangled). */
bool mc_supp_is_alloc_fn(const char *name);
/* Append the entry valgrind's --gen-suppressions=all would write for a
 * leak record of kind with this stack, named name. */
void mc_supp_format(struct mc_buf *b, const char *name, int kind,
		    const struct mc_supp_stack *st);

struct mc_leak;

/* The set as an image a later process takes without parsing
 * (memcheck-cache(5)): appended to b; false: no memory, or its entries
 * and frames alone take more than max bytes (nothing built then). */
bool mc_supp_image_put(const struct mc_supps *s, struct mc_buf *b, size_t max);
/* The set in img[0, len) (16-aligned, written over: offsets made
 * pointers), which lies in map (mc_map_io'd, maplen bytes, the set's to
 * unmap from now on; NULL: img stays the caller's, to free after the
 * set); NULL if the image is not one mc_supp_image_put of this build
 * wrote (map still the caller's). */
struct mc_supps *mc_supp_image_take(char *img, size_t len, void *map, size_t maplen);

/* ---- suppcache.c: the parsed suppression files kept across processes
 * in MEMCHECK_CACHE's directory (memcheck-cache(5)) ---- */

/* Start recording the files a load reads, for the set of inputs named
 * by key (the library's path, the user's list): a later process with
 * the same key takes the set if every file stats the same. */
void mc_suppcache_begin(const char *key, size_t keylen);
/* path stat'ed as the load found it: opened (true) or not (absent) */
void mc_suppcache_note(const char *path, bool opened);
/* The set the cache holds for key, every file noted then unchanged;
 * NULL: parse the files. */
struct mc_supps *mc_suppcache_get(const char *key, size_t keylen);
/* Write s as the set of the files noted since mc_suppcache_begin (not
 * if a note said it cannot be kept). */
void mc_suppcache_put(const struct mc_supps *s);
/* the cache file's bytes checked and taken (the fuzz target's entry):
 * p, 16-aligned, is the set's if it is returned (mc_map_io'd, maplen
 * bytes; maplen 0: the caller's); its notes' paths stat'ed only where
 * check says */
struct mc_supps *mc_suppcache_decode(char *p, size_t len, size_t maplen, const char *key,
				     size_t keylen, bool check);
/* The file's checksum (memcheck-cache(5)): over the n bytes after its
 * header, a whole 8-byte word at a time. */
uint64_t mc_suppcache_sum(const char *p, size_t n);
/* Verdicts kept beside the set (memcheck-cache(5)): the entry a kind's
 * stack pcs[0, n) matched (-1: none) if a process kept it, -2 if not. */
long mc_suppcache_verdict(int kind, const uintptr_t *pcs, int n);
/* The stack's key and link names (before it is matched); false: not to
 * be kept.  Then _put with the match's verdict, kept for this process
 * and appended to the file by _flush (once a region's end). */
bool mc_suppcache_verdict_key(int kind, const uintptr_t *pcs, int n, struct mc_buf *key,
			      struct mc_buf *links);
void mc_suppcache_verdict_put(const struct mc_buf *key, const struct mc_buf *links, long verdict);
void mc_suppcache_verdicts_flush(void);
/* In a child forked while another thread was matching: the verdicts
 * forgotten with the set (mc_suppress_forget), not unmapped; the next
 * load's set brings its own. */
void mc_suppcache_verdicts_forget(void);
/* A region's end at exit without the set's file (memcheck-cache(5)):
 * the program's verdict file read, its last summary's notes all as
 * noted; *nset, the set's entry count.  Then _verdict answers from it
 * and _light_name names a used entry (NULL: not kept).  A load of the
 * set after it (mc_suppcache_get) keeps its verdicts where the set's
 * file is the summary's, its notes then not stat'ed again. */
bool mc_suppcache_light(uint64_t keysum, size_t *nset); /* keysum: mc_fnv1a of the key */
const char *mc_suppcache_light_name(size_t i, const char **file, int *line);
/* Entry i's name kept in the program's file (appended with the verdicts)
 * if it has none yet. */
void mc_suppcache_name_keep(size_t i, const char *name, const char *file, int line);
/* The valid verdict records of the records p[0, len) of the set whose
 * sum is set, in the file of inode ino (the fuzz target's entry). */
size_t mc_suppcache_verdicts_count(const char *p, size_t len, uint64_t set, uint64_t ino);

/* ---- supp_region.c --------------------------------------------------- */

/* The suppressions one region used. */
struct mc_supp_used {
	const char *name, *file;
	int line;                       /* of its '{' */
	int name_line;                  /* of its name (valgrind's used_suppression) */
	uint64_t records, blocks, bytes;
};
struct mc_supp_report {
	struct mc_supp_used *used;      /* mmap'd */
	size_t nused, mapped;
	struct mc_supp_used *count;     /* each entry's, over the calls; mmap'd */
	size_t cmapped;
	void *frames, *memo;            /* matching's, kept for the next call */
	size_t nmemo;
	unsigned done;                  /* kinds matched so far (1 << enum mc_kind) */
	bool at_exit;                   /* the process ends next: nothing unmapped */
	size_t freed_errors;            /* records of valgrind's error kinds counted
					 * freed, not suppressed (supp_region.c) */
	char violation[256];            /* a file that did not parse, or "" */
};
/* The kinds whose records make violations (region.c: definitely and
 * possibly lost), matched at every region's end; the rest only when
 * something reads the figures matching them changes (region.c). */
#define MC_SUPP_LOST ((1u << MC_KIND_DEFINITE) | (1u << MC_KIND_POSSIBLE))
#define MC_SUPP_ALL 15u
/* At start-up: note where libmemcheck is, to find the shipped files. */
void mc_suppress_init(void);
/* At a region's end, out zeroed before the first call: load the
 * suppression files the first time records of the kinds asked need
 * matching (the files MEMCHECK_SUPPRESSIONS names at the first call
 * whatever it asks), then move the blocks and bytes of each record of
 * those kinds (not matched by an earlier call) that a suppression matches
 * out of its kind into res->suppressed and out of groups[] (*n shrinks;
 * the order stays); write an entry for each other record to
 * MEMCHECK_GEN_SUPPRESSIONS.  out says what was used, over all the
 * calls. */
void mc_suppress_region(struct memcheck_result *res, struct mc_leak *groups, size_t *n,
			struct mc_supp_report *out, unsigned kinds);
/* Unmaps out's buffers, but at the process's exit (out->at_exit: the
 * exit ends every mapping, where an munmap cost 7-80 us here). */
void mc_suppress_report_free(struct mc_supp_report *out);
void mc_suppress_forget(void);   /* as mc_allocator_forget */
/* Which of the n stacks (the depot's ids) a libmemcheck:Pool entry
 * matches, reading the files as mc_suppress_region would (once): those
 * kept at the front of stacks, in their order; how many.  0 without
 * touching a frame where the files hold no such entry. */
size_t mc_suppress_pools(uint32_t *stacks, size_t n);
bool mc_suppress_pools_any(void); /* the files read, as above: any such entry? */
/* At the exit under valgrind's text with another thread running: the
 * stacks[0..n) (still reachable blocks') that entries marked "# freeres:"
 * match, at the front; how many (0 elsewhere). */
size_t mc_suppress_freeres(uint32_t *stacks, size_t n);

/* ---- report.c -------------------------------------------------------- */

struct mc_leak {
	uint32_t stack;
	uint32_t kind;                  /* enum mc_kind */
	uint64_t blocks, bytes;
	uint64_t indirect;              /* the cliques' bytes its blocks lead */
	uintptr_t first;                /* its lowest block's address (valgrind's
					 * --leak-resolution: vgtext.c); once
					 * mc_vgtext_regroup merged the groups, the
					 * first stored of the stacks its record
					 * merged (valgrind's order) */
};
struct mc_region_report {
	const struct memcheck_result *r;
	const struct mc_leak *leaks;    /* largest first */
	size_t nleaks;                  /* groups in leaks[] */
	size_t nleak_groups;            /* groups in all */
	bool process;                   /* the implicit whole-process region */
	const struct mc_fault_info *fault;
	double scan_seconds;            /* the reachability scan's time, or < 0: none */
	const struct mc_supp_report *supp; /* suppressions used, or NULL */
	bool valgrind;                  /* leak figures from valgrind (vgmode.c) */
	const struct mc_peak *peak;     /* the sites at its peak, or NULL */
	const struct mc_timeline *timeline; /* its samples, or NULL */
	size_t errors_suppressed;       /* records of valgrind's error kinds suppressed */
	bool rss_asked;                 /* RSS measured: an unknown figure was unread */
	bool incomplete;                /* the scan given up at a killed process's
					 * deadline: no leak kinds (fatal.c) */
	bool valgrind_exit;             /* the process region under valgrind's
					 * malloc in every object (memcheck
					 * bypassed): counted nothing, valgrind's
					 * exit judges it (region.c) */
};
void mc_report_emit(const struct mc_region_report *rr);

/* ---- vgtext.c -------------------------------------------------------- */

/* "==pid==", the prefix of valgrind's lines, without snprintf. */
const char *mc_text_pid(char p[32]);
/* "   at 0x...: fn (file:line)" lines for a stack, as valgrind writes
 * them, each after prefix, up to main. */
void mc_text_stack(struct mc_buf *b, const char *prefix, uint32_t id);
/* A frame's functions (innermost first, k of them) end in main: reports
 * stop there, as valgrind does (--show-below-main=no). */
bool mc_text_is_main(const struct mc_frame_info *fi, int k);
/* A heap error shown (report.c): its context (kind 0..3, stack) noted
 * for ERROR SUMMARY's count, by valgrind's rules (vgtext.c); its slot
 * (-1: past the table's room, -2: past valgrind's cutoff, neither
 * written nor counted), and *fresh where the context is new.  The
 * table holds valgrind's 1000 contexts (its --error-limit's) and more:
 * 1024, so that each array of 4 bytes a slot is a large one for
 * bss-layout.sh (4 KiB), away from the small variables start-up
 * populates; the slots claimed so far: mc_vgtext_contexts_used(). */
#define MC_VG_CONTEXTS 1024
int mc_vgtext_error(unsigned kind, uint32_t stack, bool *fresh);
int mc_vgtext_contexts_used(void);
void mc_vgtext_after_fork_child(void);
/* The process region's loss records before the suppressions take any
 * (region.c): valgrind numbers its records over all of them. */
void mc_vgtext_records(const struct mc_leak *g, size_t n);
/* One of them counted freed (supp_region.c): numbered with none. */
void mc_vgtext_record_freed(const struct mc_leak *l);
/* The process region's blocks that valgrind's heuristics reached, bytes
 * and blocks by heuristic (mc_scan_heuristics; NULL: none), which its
 * LEAK SUMMARY counts apart. */
void mc_vgtext_heuristics(const struct memcheck_count by[MC_HEUR_N]);
/* A forked child under --child-silent-after-fork=yes: it writes nothing
 * (report.c's heap errors ask; its regions' text is MEMCHECK_TEXT=none). */
bool mc_vgtext_silent(void);
/* A child forked since the last exec (vgxml.c). */
bool mc_vgtext_forked(void);
/* "Address 0x... is ..." as valgrind says where a refused free's
 * address lies (freed: in a block freed before; block: the live block
 * it lies inside, or 0; on: a pointer in none under valgrind's text,
 * where on the thread's stack, or NULL), its second line after the words
 * between where it has one (valgrind's "in frame #N, created by FN
 * (FILE:LINE)"); xml: the names in it escaped as XML text. */
void mc_vgtext_address(struct mc_buf *b, uintptr_t ptr, uint64_t size, bool freed,
		       uintptr_t block, const struct mc_stack_place *on, const char *between,
		       bool xml);
/* A heap error in valgrind's text (report.c), where MEMCHECK_VALGRIND_TEXT
 * is set: true, said or counted (a context's repeat, fresh false). */
bool mc_vgtext_heap_error(int slot, bool fresh, uintptr_t ptr, uint64_t size, uint32_t alloc_stack,
			  uint32_t free_stack, uint32_t now_stack, uintptr_t block,
			  const struct mc_stack_place *on);
/* Which image this is under memcheck's valgrind command line (life.c
 * sets it from MEMCHECK_VALGRIND_CHILDREN): none (not under it: no head
 * is written), the program it exec'd (whose head it wrote), or one
 * exec'd below that program (--trace-children=yes). */
enum { MC_VG_IMAGE_NONE, MC_VG_IMAGE_TOP, MC_VG_IMAGE_EXECD };
extern int mc_vgtext_image;
/* The image's words for valgrind's "Command:", each ended by a NUL, into
 * c; the name valgrind writes in the first's place (an exec'd image's
 * execve file name), or NULL. */
const char *mc_vgtext_words(struct mc_buf *c);
/* Whether valgrind's text lists the process's records, each shown one
 * with its MEMCHECK_GEN_SUPPRESSIONS entry after it (supp_region.c then
 * writes none of the process region's). */
bool mc_vgtext_gen_listed(void);
/* valgrind's --gen-suppressions=all entry for a loss record, as its text
 * writes it (its first frames valgrind's allocation function's). */
void mc_vgtext_gen_entry(struct mc_buf *b, const struct mc_leak *l);
/* A checked program's start, one exec'd below the program memcheck's
 * valgrind command line runs: valgrind's head in its text (life.c). */
void mc_vgtext_begin(void);
/* The process region's end in valgrind's layout (MEMCHECK_VALGRIND_TEXT). */
void mc_vgtext_emit(const struct mc_region_report *rr);
/* Does a leak of kind (enum mc_kind) fail a region: valgrind's rule for
 * the process under MEMCHECK_VALGRIND_TEXT, memcheck's otherwise. */
bool mc_vgtext_leak_fails(bool process, uint32_t kind);
/* The groups among n whose kinds valgrind's text counts as errors
 * (--errors-for-leak-kinds): under MEMCHECK_VALGRIND_TEXT only. */
size_t mc_vgtext_error_groups(const struct mc_leak *g, size_t n);
/* Must the process's unlost kinds be matched against suppressions? */
bool mc_vgtext_all_kinds(bool process);
/* The frame lines of each suppression entry of the user's files that
 * valgrind reads under its command line (--num-callers:
 * MEMCHECK_STACK_DEPTH + 1), 0 otherwise (mc_supp_read_lines). */
int mc_vgtext_supp_lines(void);
/* The frames a stack holds past what valgrind's text shows, at most
 * (options.c): room for the functions the program's own operator new
 * calls before malloc. */
#define MC_VG_DEEPER 4
/* Which of a stack's n frames f valgrind's stack of the same call holds
 * under its --num-callers (MEMCHECK_STACK_DEPTH + 1): from the first of
 * f[0..MC_VG_DEEPER) in a function of the program's own that valgrind
 * replaces (its operator new; *skip its index), MEMCHECK_STACK_DEPTH + 1
 * frames, else MEMCHECK_STACK_DEPTH from f[0] (*skip 0); returns how
 * many.  n and 0 outside valgrind's text. */
int mc_vgtext_depth(const uintptr_t *f, int n, int *skip);
/* The process region's n groups merged where valgrind's loss records
 * are one (same kind, their stacks cut at mc_vgtext_depth alike in
 * --leak-resolution's first frames), under valgrind's text; returns how
 * many are left, in no order. */
size_t mc_vgtext_regroup(struct mc_leak *g, size_t n);
/* The process's records in valgrind's order, mmap'd (*bytes), or NULL. */
struct mc_leak *mc_vgtext_sorted(const struct mc_region_report *rr, size_t *bytes);
/* Is a record of kind listed (--show-leak-kinds, --leak-check)? */
bool mc_vgtext_shown(uint32_t kind);
/* "N bytes in B blocks are KIND in loss record K of M": the i-th of n
 * sorted records' heading, without prefix or newline; returns K. */
size_t mc_vgtext_heading(struct mc_buf *b, const struct mc_leak *l, size_t i, size_t n);

/* At each region's end: the first record of leaks[0..n) that fails a
 * region (none for a region that passed), for memcheck_leak_site(). */
void mc_report_last_leak(bool pass, const struct mc_leak *leaks, size_t n);
/* One injected failure, as it happens, to MEMCHECK_FAIL_LOG. */
void mc_report_injection(const char *region_id, const char *region, uint64_t index,
			 uint32_t stack);
/* memcheck_expect_oom() in a region, to MEMCHECK_FAIL_LOG. */
void mc_report_expect_oom(const char *region_id, const char *region);
/* A heap error as it happens: double free, free of an unknown pointer,
 * of a pointer inside the live block at block (0: none; size and
 * alloc_stack are that block's). */
void mc_report_heap_error(const char *what, uintptr_t ptr, uint64_t size,
			  uint32_t alloc_stack, uint32_t free_stack,
			  uint32_t now_stack, uintptr_t block, const struct mc_stack_place *on);

/* ---- vgxml.c --------------------------------------------------------- */

/* A heap error (report.c's arguments) as an <error> of valgrind's XML
 * where MEMCHECK_VALGRIND_XML asks (true: then not in the text); slot:
 * its context's (mc_vgtext_error), fresh: the context's first. */
bool mc_vgxml_heap_error(int slot, bool fresh, uintptr_t ptr, uint64_t size,
			 uint32_t alloc_stack, uint32_t free_stack, uint32_t now_stack,
			 uintptr_t block, const struct mc_stack_place *on);
/* The process's end in valgrind's layout (report.c): its XML, to
 * MEMCHECK_VALGRIND_XML, else its text (mc_vgtext_emit). */
void mc_vgxml_emit(const struct mc_region_report *rr);
/* A checked program's start: valgrind's XML head, under
 * MEMCHECK_VALGRIND_XML alone (the test inline: every process's
 * start-up runs it, and its code lies in the caller's block). */
void mc_vgxml_begin_slow(void);
static inline __attribute__((always_inline)) void mc_vgxml_begin(void)
{
	if (__builtin_expect(mc_opt.valgrind_xml && *mc_opt.valgrind_xml, 0))
		mc_vgxml_begin_slow();
}

#pragma GCC visibility pop

#endif /* MEMCHECK_INTERNAL_H */
