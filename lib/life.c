/*
 * life.c - the process's life: start-up, fork and exit, in one place.
 *
 * The top of the library's layers: it calls every module's init, fork
 * and exit functions, in the order below, and nothing calls it but the
 * one function every entry point may need first, mc_resolve.  The other
 * files hold no process-life orchestration: each exposes small init,
 * prefork and postfork functions and knows nothing of the others'.
 *
 * Traps that shaped it:
 * - Start-up cannot wait for the constructor.  The dynamic linker, or
 *   another library's constructor (libstdc++'s emergency pool), may call
 *   malloc first, and that call is counted: the first call into
 *   memcheck, whoever makes it, runs mc_resolve.  Until the forwarding
 *   table is filled calls are served by ownheap.c; until every module
 *   has started they are forwarded uncounted (mc_state, forward.c).
 * - Nothing in start-up may call the allocator: a block it served
 *   memcheck would change its layout for the whole run (mimalloc), and
 *   its own start (tcmalloc's page heap: megabytes) would count as
 *   memcheck's.  What start-up makes resident is memcheck's own
 *   (mc_own_work_begin).
 * - Does a malloc call reach memcheck at all?  Symbol lookup says so in
 *   most cases; valgrind redirects every object's malloc to its own.
 *   The constructor asks with one malloc that interpose.c answers itself
 *   (mc_probe_arm): the allocator never sees it.
 * - A program the programs rule leaves out (a test driver's shells and
 *   tools) should cost no more than loading the library: the rule is
 *   applied in mc_resolve, from the options and the executable's path,
 *   before any table, descriptor or handler exists, and such a process
 *   only forwards from then on.  The environment is not there yet when
 *   the dynamic linker's own malloc comes first; then everything starts
 *   and the constructor leaves the program out as it always did.
 * - Fork: one pthread_atfork registration, made where the first of the
 *   three it replaces was (fault.c's, then account.c's, then
 *   mappings.c's; nothing registers in between), so the handlers run in
 *   the same order as before.  A lock fork waits for may never be held
 *   across a call into the allocator, whose own fork handler may hold
 *   its locks by then; the ones that are so held are only tried (libdw's,
 *   region_lock).  A new lock a hook may hold goes into fork_prepare in
 *   its place, or a forked child deadlocks.
 * - Exit: an exit handler registered here (start.c's
 *   mc_start_exit_register), before the program's entry registers
 *   _dl_fini, runs after every object's destructor, gets the status,
 *   ends the process region there, and lets exitstatus.c change the
 *   status.  It takes no slot of the C library's lists: the program's
 *   start gives it _dl_fini's entry, from which it is registered at exit
 *   (start.c's head says how, and where it keeps its own slot).  The destructor (which _dl_fini
 *   runs) takes the figures that must not see the other objects' exit
 *   code (RSS, the allocator's statistics, the timeline), and ends the
 *   regions only where that handler is not registered, or ran already
 *   (registered after _dl_fini: libmemcheck.a's constructor runs from
 *   __libc_start_main).  A later destructor's _exit comes to the
 *   wrapper here, which ends them in the handler's place; so does a
 *   process's own _exit (report_at_exit says when).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MC_ON_VALGRIND RUNNING_ON_VALGRIND
#else
#define MC_ON_VALGRIND 0
#endif
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define MC_VG_DEFINED(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
#define MC_VG_DEFINED(p, n) ((void)0)
#endif

/* The C start files' one definition the library needs (it links
 * none, GNUmakefile says why): the C library's pthread_atfork passes it
 * on, naming the object whose handlers a dlclose would drop.  Weak:
 * linked from libmemcheck.a, the program's own crtbegin defines it. */
__attribute__((weak, visibility("hidden"))) void *__dso_handle = &__dso_handle;

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* ---- start-up -------------------------------------------------------- */

/* The C library's functions memcheck calls past its own wrappers: the
 * mmap family (mappings.c) and sigaction (sys.c), each the next
 * definition after libmemcheck, found in the forwarding table's walk of
 * the objects (mc_forward_resolve), where six dlsym(RTLD_NEXT) calls
 * each walked every object's hash tables; and __libc_start_main for
 * start.c. */
static const char *const next_names[] = { "mmap", "munmap", "mremap", "shmat", "shmdt",
					  "sbrk", "brk", "sigaction", "__libc_start_main", "_exit",
					  "__cxa_atexit", "on_exit", MC_FDKEEP_NAMES };
/* the first of fdkeep.c's, which end the list */
#define FDKEEP_AT (MC_ARRAY_SIZE(next_names) - MC_FDKEEP_N)
/* MC_HOT: written by every process at its start, a left-out one too,
 * where in .bss it was the one page of memcheck's .bss such a process
 * wrote (a page fault of its start-up). */
MC_HOT static void *next_found[MC_ARRAY_SIZE(next_names)];

/* name's index in next_names, -1 if it is not there. */
static int next_index(const char *name)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(next_names); i++)
		if (mc_str_eq(name, next_names[i]))
			return (int)i;
	return -1;
}

static void *next_symbol(const char *name)
{
	int i = next_index(name);
	return i >= 0 ? next_found[i] : mc_sym_next(name, NULL);
}

/* Whether this process gets the process region (programs.c), decided
 * once; -1 until then. */
MC_HOT static int verdict = -1;

/* Whether a report can show the RSS figures: the JSON report, the full
 * text, a budget that names one of them (mc_gate_budget_names_rss; a
 * baseline serves only a budget's relative limits).  mc_opts_full_report's
 * readers less a budget that names none: a failure's full text then shows
 * the figures its rules name, and the RSS is not one. */
static bool rss_shown(void)
{
	return mc_opt.report || mc_opt.text == MC_TEXT_FULL || mc_gate_budget_names_rss();
}

/* Every module's start, in order, once the forwarding table is there.
 * from_ctor: run by the constructor, which begins the process region
 * next (when the verdict says so) with none of the program's code in
 * between: start-up's window of memcheck's own work ends there, the
 * region's reads of the RSS and M serving both (footprint.c). */
static void start_all(bool from_ctor)
{
	mc_guard_enter();
	/* first: an inherited address-space limit leaves out what follows */
	mc_rlimits_inherited();
	mc_footprint_populate(mc_opt.track); /* before any is read */
	if (mc_opt.track)
		mc_map_carve_large_first(); /* the block table's 4 MiB comes */
	/* First: counts every mapping after it.  The RSS figures are
	 * measured from start-up where a report can show them, or where
	 * the program may begin regions of its own and read their
	 * figures (memcheck_end's struct): linked with libmemcheck, or
	 * calling memcheck_begin through a reference of its own (a weak
	 * one, preloaded).  Anything else that reaches memcheck_begin (a
	 * library's weak reference) starts them there (region.c), without
	 * start-up's residue: 64-270 KiB that its figures then include. */
	mc_footprint_init(rss_shown() || mc_linked_in() || mc_program_refers("memcheck_begin"));
	mc_own_work_begin(false);
	mc_options_say();
	/* Clearing blocks serves the scan alone, and would hide the
	 * program's reads of uninitialised bytes from valgrind. */
	if (!mc_opt.track || !mc_opt.scan || MC_ON_VALGRIND)
		mc_opt.scrub = 0;
	mc_cxx_resolve(mc_is_active ? mc_real.base : NULL); /* after the options */
	mc_fault_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	mc_blocks_init();
	mc_stacks_init();
	mc_blocks_init_small(); /* after the stacks' memo pool */
	mc_snapshot_init();
	mc_account_sampler_set(mc_timeline_sample);
	mc_account_init();
	mc_allocator_detect();
	if (from_ctor && (verdict == MC_PROCESS_MEASURED || verdict == MC_PROCESS_NO_EXE))
		mc_own_work_end_start();
	else
		mc_own_work_end();
	mc_guard_leave();
	/* Bypassed, nothing is counted: counting only the functions
	 * the allocator lacks would report their blocks as leaks. */
	if (mc_is_active) {
		atomic_store_explicit(&mc_state, MC_READY, memory_order_release);
		if (mc_opt.track)
			atomic_store_explicit(&mc_track_ready, mc_sites_on ? MC_TRACK_SITES : MC_TRACK_PLAIN,
					      memory_order_release);
	}
}

MC_HOT static int verdict_errno; /* why the executable could not be read */
/* A program left out that is only preloaded: memcheck forwards, as if
 * it were not there, and sets up nothing. */
MC_HOT static bool forward_only;

/* valgrind's --trace-children=no (memcheck's valgrind command line sets
 * MEMCHECK_VALGRIND_CHILDREN to the pid it execs the program in): the
 * program it starts is checked, no program exec'd after it is, in that
 * process or a descendant (a Criterion worker re-executing the test,
 * a test's helper tool), as valgrind runs it natively.  A forked child
 * is the same program and stays checked (no exec, no new verdict).  The
 * checked program's image marks the value consumed, in place, "0": an
 * image exec'd later in the same process (a wrapper script's exec) has
 * the same pid, and the environment it inherits is this one's strings,
 * whatever the program did with environ.  Past the pid, nothing there is
 * read.  Under --trace-children=yes the value is "PID+": every image is
 * checked, and the one PID's consumes it as well, the image whose
 * valgrind head the command line wrote (vgtext.c writes the others'). */
/* What the checked image's start does under the command line (one test
 * on every start's way, main's): 1 mc_valgrind_hide (the program it
 * runs, --trace-children=no), 2 valgrind's head (an image exec'd below
 * it, --trace-children=yes: vgtext.c) */
MC_HOT static unsigned char vg_start;

static __attribute__((noinline, cold)) void vg_start_slow(bool on)
{
	if ((vg_start & 2) && on)
		mc_vgtext_begin();
	if (vg_start & 1)
		mc_valgrind_hide();
}

static __attribute__((noinline)) bool exec_untraced_named(void)
{
	/* an entry of MEMCHECK_VALGRIND (options.c), ended by its separator,
	 * or the variable, found in one walk; consumed as "0" or "00...":
	 * pid 0 is no process's */
	char *v = NULL, *var = NULL;
	for (char **e = environ; e && *e; e++) {
		char *rest = (*e)[0] == 'M' ? (char *)mc_str_after(*e, "MEMCHECK_VALGRIND") : NULL;
		if (!rest)
			continue;
		if (*rest == '=' && !v)
			v = mc_valgrind_entry(rest + 1, "VALGRIND_CHILDREN");
		else if (!var && (rest = (char *)mc_str_after(rest, "_CHILDREN=")))
			var = rest;
	}
	bool combined = v != NULL;
	if (!v)
		v = var;
	if (!v || !*v || *v == MC_VALGRIND_SEP)
		return false;
	uint64_t pid = 0;
	char *d = v;
	while (*d >= '0' && *d <= '9' && pid < (1ull << 32))
		pid = pid * 10 + (uint64_t)(*d++ - '0');
	/* "PID+": --trace-children=yes, every program exec'd after it
	 * checked; PID's names the image whose head vgcompat.c wrote */
	bool traced = *d == '+';
	d += traced;
	bool mine = pid == (uint64_t)mc_pid();
	mc_vgtext_image = mine ? MC_VG_IMAGE_TOP : MC_VG_IMAGE_EXECD;
	if ((*d && *d != MC_VALGRIND_SEP) || !mine) {
		vg_start = traced ? 2 : 0;
		return !traced;
	}
	vg_start = combined && !traced;
	while (v < d - traced)
		*v++ = '0';
	return false;
}

/* Only valgrind's command line sets the variables exec_untraced_named
 * reads: every other process walks its environment for their common
 * prefix and no further, and that code (in lib/text-order.ld's group 7)
 * stays out of the blocks every start runs. */
static bool exec_untraced(void)
{
	for (char **e = environ; e && *e; e++)
		if ((*e)[0] == 'M' && mc_str_after(*e, "MEMCHECK_VALGRIND"))
			return exec_untraced_named();
	return false;
}

/* The verdict, and the exec'd programs valgrind's --trace-children=no
 * leaves unchecked: left out, whatever MEMCHECK_PROGRAMS says. */
static int image_verdict(void)
{
	int v = mc_process_verdict();
	int e = errno;
	if (exec_untraced())
		v = MC_PROCESS_LEFT_OUT;
	errno = e;
	return v;
}

/* Decided at start-up where the environment can be read yet: a program
 * the rule leaves out, and not linked with memcheck, then only forwards
 * from its first call on.  None of memcheck's tables is made, no
 * descriptor kept, no handler registered: a test driver's shells and
 * tools pay only for loading the library.  (The dynamic linker may call
 * malloc before the C library has set environ; the constructor decides
 * then, as it always did.) */
static bool leave_out_early(void)
{
	if (!environ)
		return false;
	verdict = image_verdict();
	verdict_errno = errno;
	/* Forwarding only, without the start-up probe: whoever serves the
	 * calls, nothing is counted and nothing said (process_begin). */
	forward_only = verdict == MC_PROCESS_LEFT_OUT && !mc_linked_in();
	return forward_only;
}

/* Fill the forwarding table, then start the rest of memcheck.  Safe to
 * call from any thread at any time; only the first call does work. */
MC_HOT static atomic_flag resolve_lock = ATOMIC_FLAG_INIT;

static void resolve(bool from_ctor)
{
	if (atomic_load_explicit(&mc_state, memory_order_acquire) >= MC_FORWARDING)
		return;
	int saved = errno;
	while (atomic_flag_test_and_set_explicit(&resolve_lock, memory_order_acquire))
		;
	if (atomic_load(&mc_state) == MC_NONE) {
		atomic_store(&mc_state, MC_RESOLVING);
		mc_resolving_here = 1;
		/* the mmap family and sigaction found in the same walk */
		const struct mc_sym_next_req next = { next_names, next_found,
						      MC_ARRAY_SIZE(next_names) };
		mc_forward_resolve((const void *)mc_self_malloc, &next);
		mc_mappings_resolve(next_symbol);
		mc_fdkeep_resolve(next_names + FDKEEP_AT, next_found + FDKEEP_AT);
		mc_sys_sigaction_set(next_symbol("sigaction"));
		/* start.c's, which looked it up with a walk of its own:
		 * ~1.8 K instructions of every process */
		mc_next_start_main = next_symbol("__libc_start_main");
		mc_next_cxa_atexit = next_symbol("__cxa_atexit");
		mc_next_on_exit = next_symbol("on_exit");
		mc_signals_init(); /* dlsym here, never in a signal handler */
		mc_resolving_here = 0;
		/* nothing opened or written yet; a left-out process parses
		 * only what the verdict reads */
		mc_options_init_verdict();
		if (leave_out_early()) {
			mc_is_active = 0; /* C++'s new and delete found when called */
			/* the wrappers' short way to the allocator (interpose.c) */
			atomic_store_explicit(&mc_pass, 1, memory_order_release);
		} else {
			mc_options_init();
			/* before any other thread goes on (FORWARDING) and
			 * before start_all registers the fork handlers */
			mc_walks_lock_from_now();
		}
		atomic_store_explicit(&mc_state, MC_FORWARDING, memory_order_release);
		if (!forward_only)
			start_all(from_ctor);
	}
	atomic_flag_clear_explicit(&resolve_lock, memory_order_release);
	errno = saved;
}

/* A left-out process has parsed two options (resolve).  The one path
 * there that may read the others: memcheck's own functions called
 * through a weak reference of the program's that the preload bound
 * (memcheck_begin and the rest call mc_resolve first).  They get every
 * option parsed, as before, once. */
static __attribute__((noinline, cold)) void options_complete(void)
{
	MC_HOT static _Atomic bool done;
	if (atomic_load_explicit(&done, memory_order_acquire))
		return;
	int saved = errno;
	while (atomic_flag_test_and_set_explicit(&resolve_lock, memory_order_acquire))
		;
	if (!atomic_load_explicit(&done, memory_order_relaxed)) {
		mc_options_init();
		atomic_store_explicit(&done, true, memory_order_release);
	}
	atomic_flag_clear_explicit(&resolve_lock, memory_order_release);
	errno = saved;
}

void mc_resolve(void)
{
	resolve(false);
	if (forward_only)
		options_complete();
}

void mc_resolve_calls(void)
{
	resolve(false);
}

/* The program's malloc calls do not reach memcheck (found out late, e.g.
 * under valgrind), or it is not measured: stop counting. */
static void bypass(void)
{
	mc_set_totals(NULL);
	mc_is_active = 0;
	atomic_store_explicit(&mc_track_ready, 0, memory_order_release);
	atomic_store_explicit(&mc_state, MC_FORWARDING, memory_order_release);
}

/* Does a malloc call from this process reach memcheck's malloc?
 * memcheck's malloc answers the probe itself (interpose.c). */
static bool calls_reach_us(void)
{
	mc_guard_enter();
	mc_probe_arm();
	void *volatile p = malloc(1);
	bool seen = mc_probe_seen();
	if (!seen)
		free(p); /* whoever served it takes it back */
	mc_guard_leave();
	return seen;
}

/* (Under valgrind, also the RSS figures off: valgrind's process's,
 * footprint.c's mc_footprint_off.) */
static void say_bypassed(void)
{
	if (MC_ON_VALGRIND) {
		mc_footprint_off();
		mc_log("running under valgrind, which replaces malloc in every object: "
		       "memcheck sees no allocations. Run valgrind with "
		       "--soname-synonyms=somalloc=nouserintercepts (glibc) or "
		       "somalloc=<pattern naming the allocator's object> to keep memcheck "
		       "counting");
		return;
	}
	mc_log("malloc is served by %s, which comes before libmemcheck in symbol "
	       "lookup: memcheck sees no allocations. Put libmemcheck first "
	       "(LD_PRELOAD=\"libmemcheck.so %s\", or -lmemcheck before the "
	       "allocator on the link line)",
	       mc_real.object ? mc_real.object : "another object",
	       mc_real.object ? mc_real.object : "liballocator.so");
}

static void at_exit(void *arg, int status);
/* at_exit's argument, which the C library stores as it is (only the
 * function is mangled): names memcheck's own entry among the others
 * (exit_lists_freed); and its DSO handle (start.c withdraws the entry
 * with __cxa_finalize of it) */
static char exit_mark;
static void fatal_record(void);

/* The on_exit handler is registered (process_begin), has run, and the
 * destructor left the regions' ends to it (deferred, in the process
 * deferred_pid names: a vfork child shares this memory). */
static bool watching;
static bool forked_child;     /* a fork since the last exec: its heap is a copy */
static atomic_bool exit_handler_ran;
static atomic_bool deferred;
static pid_t deferred_pid;

/* The process region, when this process gets one: MEMCHECK_PROCESS, and
 * MEMCHECK_PROGRAMS's rule (programs.c).  A program left out that is
 * only preloaded only forwards, as if memcheck were not there, not even
 * holding a copy of standard error (mc_resolve decides so before
 * anything is set up, where it can); one linked with memcheck keeps
 * counting for its own regions. */
static void process_begin(void)
{
	if (verdict < 0) {
		verdict = image_verdict();
		verdict_errno = errno;
	}
	bool on = verdict == MC_PROCESS_MEASURED || verdict == MC_PROCESS_NO_EXE;
	bool left_out = verdict == MC_PROCESS_LEFT_OUT;
	if (verdict == MC_PROCESS_NO_EXE)
		mc_log("MEMCHECK_PROGRAMS: cannot read /proc/self/exe (%s); "
		       "reporting this process as a program under test",
		       strerror(verdict_errno));
	bool only_forward = false;
	if (mc_is_active && !calls_reach_us()) {
		bypass();
		left_out = false; /* say so */
	} else if (left_out && mc_is_active && !mc_linked_in()) {
		bypass();
		mc_text_release_stderr();
		only_forward = true;
	}
	if (!only_forward && !watching)
		watching = mc_start_exit_register(at_exit, &exit_mark) == 0;
	/* a fatal signal's record: where there is one to write; and under
	 * valgrind bypassed, where the process region's record is still
	 * written and its end must still enable address errors again over
	 * memcheck's own mappings (VG_UNHIDE_ALL), or valgrind's exit
	 * after the signal warns of them */
	if (watching && (mc_is_active || mc_map_hid))
		mc_fatal_init(fatal_record);
	mc_guard_enter();
	if (!mc_is_active && !left_out)
		say_bypassed();
	if (on) {
		mc_regions_begin_process();
		mc_vgxml_begin();
	}
	if (vg_start)
		vg_start_slow(on);
	mc_guard_leave();
}

__attribute__((constructor)) static void mc_constructor(int argc, char **argv)
{
	mc_start_ctor_ran = true;
	mc_args_note(argc, argv); /* the C library passes its main's */
	/* Start-up ran already, from another object's initializer, and
	 * its window of memcheck's own work ended there: the work here is
	 * memcheck's too, in a window of its own like start-up's, that the
	 * process region's begin settles (footprint.c). */
	bool started = atomic_load_explicit(&mc_state, memory_order_acquire) >= MC_FORWARDING;
	resolve(true);
	if (forward_only)
		return;
	if (started)
		mc_own_work_begin_start();
	mc_guard_enter();
	mc_suppress_init();
	mc_roots_init();
	mc_fault_start();
	mc_guard_leave();
	if (started)
		mc_own_work_end_start();
	process_begin();
	/* the main thread's DTV grown by realloc, not malloc (account.c):
	 * after the probe, which leaves out a process valgrind runs */
	mc_account_dtv_main_take();
	/* Start-up's window ends here at the latest, when no process
	 * region ended it (nothing is read when one did). */
	mc_own_work_settle();
}

/* ---- exit ------------------------------------------------------------ */

/* Under valgrind, the last of memcheck's own work in the process: calls
 * only forwarded from here on (a forked child that leaves by _exit
 * without a report still counted them: valgrind's own __libc_freeres,
 * which it runs from its _exit, freed through the tracking path), then
 * the address errors over memcheck's own mappings enabled again
 * (ownmap.c), or valgrind's exit warns of the ranges left disabled, on
 * the program's standard error (5 lines the bare program does not
 * print).  Nothing of memcheck's reads those mappings after this but
 * the tracking path of a thread stopped inside it when the main thread
 * ended the process (valgrind runs one thread at a time: only where an
 * exit handler registered before memcheck's makes a system call that
 * lets it run on).  Rare: out of line, in group 7. */
__attribute__((cold, noinline)) static void vg_unhide_all(void)
{
	if (atomic_load_explicit(&mc_state, memory_order_acquire) == MC_READY) {
		mc_set_totals(NULL);
		atomic_store_explicit(&mc_track_ready, 0, memory_order_release);
		atomic_store_explicit(&mc_state, MC_FORWARDING, memory_order_release);
	}
	mc_map_unhide_all();
}
#define VG_UNHIDE_ALL()                                                        \
	do {                                                                   \
		if (unlikely(mc_map_hid))                                      \
			vg_unhide_all();                                       \
	} while (0)

/* Every open region ends, the process region last; then calls pass
 * straight through, uncounted and unchecked: what happens after the last
 * report (the C library's and other libraries' exit handlers freeing
 * what they allocated, some of it under memcheck's own guard while it
 * reported) can no longer be reported.  The program's stack is scanned
 * from this frame up (roots.c looks for exit's frame above it).
 * flush_stdout: the program's buffered stdout goes before the text, as
 * exit would write it (not after _exit, which drops it). */
static void stdio_exit_freed(bool by_exit);
static __attribute__((noinline)) void process_end(bool flush_stdout)
{
	struct mc_scan_from from;
	MC_SCAN_FROM(&from);
	/* a fatal signal's handler: the whole interrupted stack is the
	 * program's, no exit frame above */
	from.at_exit = mc_fatal_sig == 0;
	/* exit's stdio clean-up still to come (not after _exit) */
	from.by_exit = flush_stdout && from.at_exit;
	if (mc_fatal_sp)
		from.sp = mc_fatal_sp; /* the handler ran on memcheck's alternate stack */
	/* what that clean-up frees, counted freed (as at_exit's lists) */
	stdio_exit_freed(from.by_exit);
	mc_guard_enter();
	mc_fds_room_begin(); /* the program may have used its last descriptor */
	if (flush_stdout)
		mc_text_flush_stdout(mc_opt.text != MC_TEXT_NONE);
	mc_footprint_final();
	mc_regions_end_all(&from);
	mc_footprint_mark_restore(); /* after the last report: for the parent */
	mc_set_totals(NULL);
	atomic_store_explicit(&mc_track_ready, 0, memory_order_release);
	atomic_store_explicit(&mc_state, MC_FORWARDING, memory_order_release);
	mc_fds_room_end();
	mc_guard_leave();
}

/* The process's end with its text held (textout.c): the JSON report
 * and the ancestors' file written and the exit status decided first;
 * then the text, which a standard error nobody reads holds up for at
 * most MEMCHECK_TEXT_TIMEOUT seconds (bare, the program, its own writes
 * done, exits).  The status to exit with. */
static int end_held(int status, bool flush_stdout)
{
	mc_text_hold(mc_opt.text_timeout);
	mc_exit_own = status & 0xff; /* the records' "exit_status" */
	process_end(flush_stdout);
	int s = mc_exit_status(status);
	mc_text_hold_end();
	return s;
}

/* A program left out at start-up has no region to end: nothing is
 * touched (each page of memcheck's state read or written for the first
 * time at exit is a page fault of ~25 us on these VMs).
 *
 * When the on_exit handler is registered and has not run yet, it was
 * registered before the exit handler that is running this destructor
 * (_dl_fini, which __libc_start_main registers after ld.so ran the
 * preloaded and needed objects' constructors; exit handlers run in the
 * reverse order): it runs after every object's destructor, and ends
 * the regions there, as valgrind reports at the real exit.  audit24a:
 * libuv's destructor frees its uv_setup_args process title after
 * memcheck's destructor ran (ld.so finalizes a preloaded object before
 * the objects loaded after it), reported still reachable in ~110 of
 * libuv's records, where valgrind says freed.  What must not see the
 * other destructors is taken here (region.c's mc_regions_exit_take:
 * the RSS, the allocator's statistics, the timeline).  Premises: glibc
 * runs exit handlers last registered first, and registers _dl_fini in
 * __libc_start_main (2.34 and later: csu/libc-start.c), after ld.so
 * ran the constructors of the objects it loaded (libmemcheck.a's
 * constructor runs after, from __libc_start_main: its handler runs
 * first, and this destructor ends nothing more).  A later destructor
 * that calls _exit or _Exit gets the report from the wrapper below; one
 * that calls exit makes glibc run the handlers left, this one with its
 * status; one that crashes, or ends the process with the raw system
 * call, loses it. */
__attribute__((destructor)) static void mc_destructor(void)
{
	if (forward_only) {
		/* the program left out: start-up's lookups under valgrind
		 * may have taken memory of memcheck's own heap (jemalloc) */
		VG_UNHIDE_ALL();
		return;
	}
	if (mc_start_exit_lost)
		watching = false; /* not registered at exit after all (start.c) */
	if (watching && !atomic_load(&exit_handler_ran)) {
		mc_guard_enter();
		mc_fds_room_begin(); /* /proc's files, read at the program's limit */
		mc_footprint_final();
		mc_regions_exit_take();
		mc_fds_room_end();
		deferred_pid = mc_pid(); /* no system call: asked at start-up */
		atomic_store(&deferred, true);
		mc_guard_leave();
		return;
	}
	mc_text_hold(mc_opt.text_timeout);
	process_end(true);
	mc_text_hold_end();
	VG_UNHIDE_ALL();
}

/* libstdc++'s __gnu_cxx::__freeres (its emergency exception pool),
 * under valgrind's text, unless --run-cxx-freeres=no.  at_exit: from
 * _exit, where valgrind calls it too and memcheck leaves the C
 * library's alone (it flushes stdio, which _exit does not): there the
 * caller asks whether the process is down to its one thread (freeres
 * asked already).  A C program that leaves by _exit under jemalloc or
 * tcmalloc, which bring libstdc++ (dash), kept the pool in use where
 * valgrind freed it: one free fewer.  Rare: out of line, in group 7. */
__attribute__((noinline)) static void freeres_cxx(bool at_exit)
{
	if (at_exit && !(mc_freeres_alone = mc_never_threaded() || mc_threads_alone()))
		return;
	void (*cxx)(void) = (void (*)(void))mc_sym_first("_ZN9__gnu_cxx9__freeresEv", NULL);
	if (cxx && (mc_opt.valgrind_freeres & MC_FREERES_CXX)) {
		cxx();
		mc_freeres_ran |= MC_FREERES_CXX;
	}
}

/* valgrind's end of a process, for valgrind's text alone (its figures
 * are valgrind's): valgrind calls libstdc++'s __gnu_cxx::__freeres (the
 * emergency exception pool) and then glibc's __libc_freeres (stdio's
 * buffers, flushed first, the locale's data, the dynamic linker's
 * bits) from its exit path, after the program's exit handlers, and
 * counts what they free as freed.  Without them a C program that uses
 * stdio and setlocale left 139 blocks (16,100 bytes) in use at exit
 * where valgrind says "All heap blocks were freed" (206 allocs, 206
 * frees); a C++ program that threw, the pool's 76,800 bytes (2 blocks).
 * Called only where nothing of the program's can run after them: the
 * destructor ran first (deferred: this handler runs after _dl_fini,
 * every object's destructor done; not so for libmemcheck.a, whose
 * handler runs before _dl_fini) and the caller is the process's only
 * thread (valgrind kills the others first; memcheck leaves them be, and
 * their blocks counted).  In a forked child too, as valgrind runs them
 * at every process's exit: under valgrind's text the child's figures
 * count from the process's start (region.c), the parent's blocks
 * theirs (a stdout buffer the parent filled before the fork is freed
 * there, as valgrind's child says).  What runs after them is glibc's own: the
 * handlers registered before memcheck's constructor (a library's
 * initialised before it) and exit's stdio clean-up, which finds every
 * stream flushed and unbuffered (glibc leaves a FILE valid after
 * freeing its buffer) and the locale back to "C".  Premise: glibc's
 * __libc_freeres runs once (its own guard) and is meant for exactly
 * this call at the end (valgrind, mtrace). */
static void freeres(void)
{
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE || !atomic_load(&deferred))
		return;
	/* the answer kept: what is skipped here is counted freed by it
	 * (supp_region.c's freeres_unrun), not by a question of its own */
	if (!(mc_freeres_alone = mc_never_threaded() || mc_threads_alone()))
		return;
	freeres_cxx(false);
	void (*libc)(void) = (void (*)(void))mc_sym_first("__libc_freeres", NULL);
	/* --run-libc-freeres=no */
	if (libc && (mc_opt.valgrind_freeres & MC_FREERES_LIBC)) {
		libc();
		mc_freeres_ran |= MC_FREERES_LIBC;
	}
}

/* ---- the C library's exit-function lists ---------------------------- */

/* glibc keeps the atexit, on_exit and __cxa_atexit entries in lists of
 * 32 (stdlib/exit.h, the same layout since the lists were made): the
 * first list static, each further one calloc'd from the program's
 * allocator (memcheck's wrappers) and put at the head of the chain.
 * exit runs the head's entries from its index down, taking the index
 * down before each call, and frees each list but the last (the static
 * one) once its entries have run.  Where more than 32 handlers were
 * registered before memcheck's constructor (a library's constructor
 * the dynamic linker ran first, a big C++ program's statics: gdb has
 * two such lists), memcheck's own entry lies in a calloc'd list, and
 * so do those of the handlers that run after it; glibc frees those
 * lists after memcheck's handler, where valgrind, whose leak check
 * comes after, counts them freed: memcheck said 1,040 bytes still
 * reachable a list, one free fewer (stale45's exitfn repro, gdb -nx
 * -batch: 2 lists). */
struct exitfn_entry {
	long flavor;               /* ef_free 0, ef_us 1, ef_on 2, ef_at 3, ef_cxa 4 */
	uintptr_t fn, arg, dso;    /* fn mangled by the pointer guard */
};
#define EXITFN_PER_LIST 32
struct exitfn_list {
	uintptr_t next;            /* the older list, 0 at the static one */
	size_t idx;                /* entries in use; while one runs, its index */
	struct exitfn_entry fns[EXITFN_PER_LIST];
};
#define EXITFN_FREE 0
#define EXITFN_ON 2
#define EXITFN_CXA 4
#define EXITFN_LISTS 4096 /* the walk's bound: 131,072 handlers */

/* Whether a is a live block of a list's size (the static list is none). */
static bool exit_list_block(uintptr_t a)
{
	struct mc_block b;
	return mc_blocks_find(a, &b) && b.size == sizeof(struct exitfn_list);
}

/* The lists glibc frees after this handler, from ours, the list at l
 * (a live block of a list's size) if it holds memcheck's entry as the
 * one running (fns[idx]: exit took the index down before the call),
 * through each older one but the static last (the chain's head while
 * its entries run is ours: the lists of the handlers registered after
 * memcheck's constructor were freed before it ran): counted freed now,
 * as the allocator will see them freed (its frees after the report are
 * only passed on), out of the table, so that the scan neither lists
 * nor reads them.  The entries that have not run yet (below the index:
 * the running list's, every older list's) stay roots: what their
 * arguments point to is their handlers' to free, after the report, as
 * before.  false: l is not ours.  Rare: out of line, group 7. */
static __attribute__((noinline, cold)) bool exit_lists_count_freed(uintptr_t l)
{
	const struct exitfn_list *ours = (const struct exitfn_list *)l;
	if (ours->idx >= EXITFN_PER_LIST || ours->fns[ours->idx].flavor != EXITFN_FREE ||
	    ours->fns[ours->idx].arg != (uintptr_t)&exit_mark ||
	    ours->fns[ours->idx].dso != (uintptr_t)&exit_mark)
		return false;
	for (int n = 0; l && n < EXITFN_LISTS; n++) {
		const struct exitfn_list *list = (const struct exitfn_list *)l;
		uintptr_t next = list->next;
		size_t unrun = list->idx;
		if (!next || unrun > EXITFN_PER_LIST)
			break; /* the last one, which glibc keeps */
		/* a root where an entry not run yet has an argument (atexit's
		 * have none); where the registered roots have no room, this
		 * list and the older ones stay in use, as before */
		bool args = false;
		for (size_t i = 0; i < unrun; i++)
			args |= (list->fns[i].flavor == EXITFN_ON || list->fns[i].flavor == EXITFN_CXA) &&
				list->fns[i].arg;
		if (args && !mc_roots_user_add(list->fns, unrun * sizeof list->fns[0]))
			break;
		bool pass_on;
		mc_guard_enter();
		mc_account_free((void *)l, &pass_on, __builtin_frame_address(0));
		mc_guard_leave();
		/* the static list is no block: the walk ends with it */
		l = exit_list_block(next) ? next : 0;
	}
	return true;
}

/* Called from the on_exit handler, inside exit (never at _exit, a fatal
 * signal or a region's end): exit's frame, which called the handler,
 * holds the running list (__run_exit_handlers' cur, kept across the
 * call: in a callee-saved register, which this frame's prologue pushes
 * with the others, MC_SCAN_FROM, or in its own frame), so the words
 * from here up through its frame are the candidates, each looked up in
 * the table before it is read.  Where memcheck's entry lies in the
 * static list (most processes) none is a block of a list's size: a few
 * look-ups.  The words are copied first, and valgrind told that the
 * copy is defined: some of them are slots of exit's frame that nothing
 * wrote, which valgrind holds undefined, and a test of one was its
 * error (exit 99 under --error-exitcode, session 46's merge); the
 * program's own words keep what valgrind knows of them. */
#define EXIT_FRAME_WORDS 48
/* Under valgrind alone: out of line, in group 7. */
static __attribute__((noinline, cold)) void vg_defined(void *p, size_t n)
{
	MC_VG_DEFINED(p, n);
}

static __attribute__((noinline, no_sanitize_address)) void exit_lists_freed(void)
{
	struct mc_scan_from here;
	MC_SCAN_FROM(&here);
	uintptr_t w[EXIT_FRAME_WORDS];
	/* volatile: word by word, never a memcpy call (ASan's would check
	 * the frames' redzones) */
	const volatile uintptr_t *from = (const volatile uintptr_t *)here.sp;
	for (size_t i = 0; i < EXIT_FRAME_WORDS; i++)
		w[i] = from[i];
	if (MC_ON_VALGRIND)
		vg_defined(w, sizeof w);
	for (size_t i = 0; i < EXIT_FRAME_WORDS; i++) {
		/* not a small number, nor an address in this stack (the
		 * frames' own links and locals) */
		if (!(w[i] & 15) && w[i] >= 65536 && w[i] - (here.sp - 65536) > 2 * 65536 &&
		    exit_list_block(w[i]) && exit_lists_count_freed(w[i]))
			return;
	}
}

/* ---- exit's stdio clean-up ------------------------------------------ */

/* glibc's exit runs its stdio clean-up after every exit handler,
 * memcheck's report among them (_IO_cleanup's _IO_unbuffer_all; glibc
 * 2.36 as Debian ships it, with BZ #27821's fix): for each stream still
 * on _IO_list_all (one the program closed is off it, open_memstream's
 * never on it) it frees ungetc's backup area where the stream has one
 * (_IO_backup_base set: the area at _IO_save_base, or at _IO_read_base
 * while the stream reads it, _IO_IN_BACKUP, which that free clears),
 * then, for a wide-oriented stream (_mode > 0), its wide backup area
 * alike, and its wide buffer where the stream is not unbuffered and the
 * buffer glibc's (_IO_FLAGS2_USER_WBUF clear).  The byte buffers stay
 * allocated (noted for __libc_freeres).  valgrind's leak check comes
 * after that: each one counted freed, none listed, where memcheck said
 * still reachable (plain_stdio_exit: 128 bytes after ungetc on stdin,
 * 16,384 after fwprintf to stdout).  Counted freed here, before the
 * report, as the exit-function lists are (exit_lists_count_freed); a
 * block not in the table (allocated before memcheck's start) is left
 * alone.  Under valgrind's text with freeres, __libc_freeres ran that
 * clean-up already: nothing left to count. */
struct io_wide_data {          /* the head of glibc's struct _IO_wide_data */
	uintptr_t read_ptr, read_end, read_base, write_base, write_ptr, write_end;
	uintptr_t buf_base, buf_end, save_base, backup_base, save_end;
};
#define IO_FLAGS2_USER_WBUF 8

static void stdio_count_freed(uintptr_t p)
{
	struct mc_block b;
	if (!p || !mc_blocks_find(p, &b))
		return;
	bool pass_on;
	mc_guard_enter();
	mc_account_free((void *)p, &pass_on, __builtin_frame_address(0));
	mc_guard_leave();
}

/* A stream with a backup area or wide: rare, out of line, group 7.
 * Only where no other thread runs (glibc's flag, or the process's
 * tasks): a thread reading the stream frees its backup area itself
 * when it leaves it, which after this count was an invalid free
 * reported of the program's (a thread looping on fgetc and ungetc at
 * the exit: 15 runs of 20).  Where one runs, the blocks stay as they
 * are, still reachable (scan.c's stdio_cut then reads the stream's
 * save pointers). */
static __attribute__((noinline, cold)) void stdio_stream_freed(const FILE *f)
{
	if (!mc_never_threaded() && !mc_threads_alone())
		return;
	bool in_backup = f->_flags & MC_IO_IN_BACKUP;
	if (f->_IO_backup_base) {
		stdio_count_freed((uintptr_t)(in_backup ? f->_IO_read_base : f->_IO_save_base));
		in_backup = false;
	}
	const struct io_wide_data *w = (const struct io_wide_data *)f->_wide_data;
	if (f->_mode <= 0 || !w)
		return;
	if (w->backup_base)
		stdio_count_freed(in_backup ? w->read_base : w->save_base);
	if (!(f->_flags & MC_IO_UNBUFFERED) && !(f->_flags2 & IO_FLAGS2_USER_WBUF))
		stdio_count_freed(w->buf_base);
}

/* At every process end, by_exit inside exit() (process_end: its test
 * here, the call's branch in process_end was 0x5f bytes of group 1,
 * gcc's copy of the guard's entry): the C library's list, as
 * far as its exit walks it after the report (scan.c's stdio_cuts reads
 * it alike); a stream without glibc's magic ends the walk.  Counting
 * only, blocks are in no table; the guard up (a handler that
 * interrupted memcheck called exit), the table's locks may be this
 * thread's; bypassed, no block is memcheck's: nothing (as at_exit's
 * exit_lists_freed). */
static __attribute__((noinline)) void stdio_exit_freed(bool by_exit)
{
	if (!by_exit || !mc_opt.track || mc_in_hook || !mc_is_active)
		return;
	FILE *const *list = mc_roots_io_list();
	for (const FILE *f = list ? *list : NULL; f; f = f->_chain) {
		if (((unsigned)f->_flags & MC_IO_MAGIC_MASK) != MC_IO_MAGIC)
			return;
		if (f->_IO_backup_base || f->_mode > 0)
			stdio_stream_freed(f);
	}
}

/* After the last exit handler registered after it: the process region
 * is reported by the destructor already (libmemcheck.a), or now; then
 * the status. */
static void at_exit(void *arg, int status)
{
	(void)arg;
	atomic_store(&exit_handler_ran, true);
	/* Nothing of the program's runs from here on: the exit's last
	 * reading of the peak (footprint.c), before memcheck's own exit
	 * work (freeres, which bare never runs; the report). */
	mc_footprint_final();
	freeres();
	/* counting only, blocks are in no table; the guard up (a handler
	 * that interrupted memcheck called exit), the table's locks may be
	 * this thread's; bypassed, no block is memcheck's (under valgrind
	 * too: exit_lists_freed reads exit's frame in a way valgrind takes
	 * as defined) */
	if (mc_opt.track && !mc_in_hook && mc_is_active)
		exit_lists_freed();
	atomic_store(&deferred, false);
	int s = end_held(status, true);
	VG_UNHIDE_ALL();
	/* the status changed by calling exit() again (exitstatus.c) */
	if (s != status)
		exit(s);
}

/* A process that leaves by _exit before its exit handlers (libsodium's
 * tests from a SIGABRT handler, a program that skips its clean-up) is
 * reported there, as valgrind reports at every exit, with exit's rule
 * for the status (a failing region turns 0 into MEMCHECK_EXITCODE).
 * Not reported: a child forked since the last exec (its heap is the
 * parent's copy; check's forked tests leave by _exit; valgrind has
 * --child-silent-after-fork for that noise) but under valgrind's text,
 * whose user asked for valgrind's reports, a vfork or clone child
 * (the parent's memory: it only forwards), a process left out, and a
 * handler that interrupted memcheck or, counting only, maybe the
 * allocator: the locks the interrupted code holds (a block table
 * shard's, the stack depot's, the allocator's, which a failing region's
 * statistics ask for) would deadlock the report; that is said, and the
 * status is the program's.  Premises: a wrapped call holds memcheck's
 * guard (mc_self.in_hook) from before its locks to after them and
 * around its call of the allocator while tracking; glibc runs no
 * pthread_atfork child handler in a vfork child, so mc_pid() is still
 * the parent's there. */
static bool may_report_at_exit(void)
{
	/* under valgrind's text a forked child too: valgrind reports every
	 * process at its exit, _exit included (plain_exit fork-_exit: the
	 * child's loss record, its status --error-exitcode's) */
	return watching && (!forked_child || mc_opt.valgrind_text != MC_VGTEXT_NONE) &&
	       !atomic_load(&exit_handler_ran);
}

static bool report_at_exit(pid_t self)
{
	if (!may_report_at_exit() || self != mc_pid())
		return false;
	if (mc_in_hook || (!mc_opt.track && mc_signal_handling())) {
		mc_log("_exit from a signal handler that interrupted memcheck%s: not "
		       "reported (the locks it holds would be needed)",
		       mc_opt.track ? "" : " or the allocator");
		return false;
	}
	return !atomic_exchange(&exit_handler_ran, true);
}

/* _exit and _Exit (one function in glibc): a destructor that runs after
 * memcheck's deferred the regions' ends (a library's, calling _exit)
 * ends the process before the on_exit handler can run.  The deferred
 * ends are made here, and the status decided, as the handler would;
 * the program's stdout is not flushed, as _exit does not.  A process
 * that never reached its exit handlers is reported here too
 * (report_at_exit says when not).  exit's own call of _exit is internal
 * to the C library and does not come here.  Not covered:
 * syscall(SYS_exit_group), which no wrapper sees. */
static _Noreturn void exit_now(int status)
{
	/* The process's own id asked, not mc_pid's: a vfork child shares
	 * the parent's copy of it. */
	bool was_deferred = atomic_load_explicit(&deferred, memory_order_acquire);
	/* the system call only where a report may follow: a process left
	 * out (a shell's _exit) makes none */
	pid_t self = was_deferred || may_report_at_exit() ? (pid_t)syscall(SYS_getpid) : 0;
	if (was_deferred && self == deferred_pid && atomic_exchange(&deferred, false)) {
		atomic_store(&exit_handler_ran, true);
		if (mc_opt.valgrind_text != MC_VGTEXT_NONE)
			freeres_cxx(true);
		status = end_held(status, false);
	} else if (!was_deferred && self && report_at_exit(self)) {
		if (mc_opt.valgrind_text != MC_VGTEXT_NONE)
			freeres_cxx(true);
		status = end_held(status, false);
	}
	/* found in start-up's walk (a left-out shell, dash, leaves by
	 * _exit: a walk of its own there was ~1.8 K instructions and code
	 * pages of its own); none before it, where the dynamic linker's
	 * own start-up fails */
	VG_UNHIDE_ALL();
	void (*real)(int) = (void (*)(int))next_found[next_index("_exit")];
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

MC_API void _exit(int status)
{
	exit_now(status);
}

MC_API void _Exit(int status)
{
	exit_now(status);
}

/* quick_exit(3) runs the handlers at_quick_exit registered, last first,
 * then the C library's own _exit, an internal call the wrapper above
 * never sees: a program that left by quick_exit was not reported at all
 * (no text, no record; `memcheck run` said "wrote no report", its
 * status its own), where valgrind reports it as any exit.  So memcheck
 * registers a handler of its own in front of the program's first
 * registration (__cxa_at_quick_exit, which at_quick_exit and C++'s
 * std::at_quick_exit call): it runs after all of the program's, as
 * valgrind's report comes after them, and ends the process as _exit
 * would (exit_now: the report where one is due, exit's rule for the
 * status).  A program that registered none is ended so at once.  Its
 * cost: one slot of the C library's quick_exit list (32 in its static
 * part; a program's 32nd registration allocates where bare its 33rd
 * would).  Rare: group 7. */
/* the C library's, declared by no header */
MC_API int __cxa_at_quick_exit(void (*fn)(void *), void *dso);
static void *quick_exit_next, *at_quick_exit_next;
static atomic_bool quick_exit_ours;   /* memcheck's handler registered */
static _Atomic int quick_exit_status;

static void quick_exit_last(void *arg)
{
	(void)arg;
	exit_now(atomic_load(&quick_exit_status));
}

MC_API int __cxa_at_quick_exit(void (*fn)(void *), void *dso)
{
	int (*real)(void (*)(void *), void *) =
		(int (*)(void (*)(void *), void *))mc_sym_next_cached("__cxa_at_quick_exit",
									&at_quick_exit_next);
	if (!real)
		return -1;
	if (!atomic_load(&quick_exit_ours) && real(quick_exit_last, NULL) == 0)
		atomic_store(&quick_exit_ours, true);
	return real(fn, dso);
}

MC_API void quick_exit(int status)
{
	atomic_store(&quick_exit_status, status);
	void (*real)(int) = (void (*)(int))mc_sym_next_cached("quick_exit", &quick_exit_next);
	if (real && atomic_load(&quick_exit_ours))
		real(status);
	exit_now(status);
}

/* A fatal signal's default action is about to end the process
 * (fatal.c): its record as at exit, where _exit would write one (a
 * forked child's too, as exit writes it), or the regions' ends the
 * destructor deferred.  Not the status: the process dies of its signal
 * whatever its regions say; nor stdout, which bare loses; nor freeres,
 * which valgrind does not run at a fatal signal either. */
static void fatal_record(void)
{
	/* the text after the report and the ancestors' file: a stalled
	 * standard error then loses only the text (textout.c) */
	mc_text_hold(mc_opt.text_timeout);
	if (atomic_load(&deferred)) {
		if (deferred_pid == mc_pid() && atomic_exchange(&deferred, false)) {
			atomic_store(&exit_handler_ran, true);
			process_end(false);
			mc_exit_killed();
		}
	} else if (watching && !atomic_exchange(&exit_handler_ran, true)) {
		size_t from = mc_text_hold_mark(), to = from;
		if (mc_opt.text != MC_TEXT_NONE && mc_opt.valgrind_text == MC_VGTEXT_NONE) {
			mc_log("killed by signal %d (%s): the record is the process's at the signal",
			       mc_fatal_sig, mc_fatal_name(mc_fatal_sig));
			to = mc_text_hold_mark();
		}
		process_end(false);
		/* The line heads the record's text: where only failing
		 * regions are written (MEMCHECK_TEXT=fail, memcheck run -q,
		 * auto on standard error) and none failed, there is none to
		 * head (a death test's child, meant to die), and a passing
		 * process says nothing, as at exit. */
		bool passing_said = mc_opt.text == MC_TEXT_SUMMARY || mc_opt.text == MC_TEXT_FULL ||
				    (mc_opt.text == MC_TEXT_AUTO && mc_opt.log && mc_opt.log[0]);
		if (!passing_said && mc_exit_failed_regions() == 0)
			mc_text_hold_cut(from, to);
		mc_exit_killed();
	}
	mc_text_hold_end();
	VG_UNHIDE_ALL();
}

/* ---- fork ------------------------------------------------------------ */

/* Every lock taken here is one nothing holds while calling the allocator
 * (region.c says why); the ones that are so held are only tried.  The
 * order: the mappings table (which the allocator's own mmap calls
 * change, its lock held: they queue their change, mappings.c); objects.c's walk lock (first of the rest: a
 * walk's callback takes mc_map's lock); libdw's (tried); region_lock
 * (tried) and the region stack; the registered roots; the thread slots;
 * the stack depot; every shard of the block table; ownheap.c's and
 * footprint.c's (taken by mc_map inside all of the above); the fault
 * lock last. */
/* A fork from a signal handler that interrupted memcheck in this
 * thread (its guard up below the handler's frame: a group's busy mark
 * or a lock of its own maybe held there): the prepare handler waited for
 * this thread's own marks and locks for ever, where bare mimalloc forks
 * (tests/test_forkheld.c; glibc's, jemalloc's and tcmalloc's own fork
 * handlers wait for the lock of theirs that such a handler interrupted,
 * bare too).  Nothing is taken then and nothing given back in the
 * parent, whose interrupted code goes on with what it holds; the child
 * makes memcheck's locks free as always, the one thread it has being
 * this one.  Told apart by the guard's depth alone: 1 in fork_parent
 * after a fork that took the locks, more after one that did not. */
static void fork_prepare(void)
{
	/* the guard raised over the interrupted code's, as mc_guard_enter
	 * would (mc_self.fast is NULL under it already) */
	if (unlikely(mc_in_hook)) {
		mc_in_hook++;
		return;
	}
	mc_mappings_prefork();
	mc_guard_enter();
	if (mc_exec_prefork)
		mc_exec_prefork();
	mc_walks_prefork();
	mc_symbolize_prefork();
	mc_regions_lock();
	mc_roots_prefork();
	mc_account_prefork();
	mc_stacks_lock();
	mc_blocks_lock_all();
	mc_ownheap_lock();
	mc_footprint_lock();
	mc_fault_prefork();
	mc_rlimits_lock();
}

static void fork_parent(void)
{
	if (unlikely(mc_in_hook > 1)) {
		mc_in_hook--; /* never to 0: the interrupted code's guard */
		return;
	}
	mc_rlimits_unlock();
	mc_fault_postfork_parent();
	mc_footprint_unlock();
	mc_ownheap_unlock();
	mc_blocks_unlock_all();
	mc_stacks_unlock();
	mc_account_postfork_parent();
	mc_roots_postfork(false);
	mc_regions_unlock();
	mc_symbolize_postfork(false);
	mc_walks_postfork(false);
	mc_guard_leave();
	mc_mappings_postfork(false);
}

/* The child has one thread and the parent's counters and blocks.  Its
 * figures are its own: every open region starts again here, last, after
 * a window of memcheck's own work around the rest, whose end gives back
 * the C library's and the dynamic linker's pages that the handlers
 * faulted in (footprint.c mc_own_work_begin_fork).  The window opens as
 * soon as the objects can be walked and footprint.c's lock taken. */
static void fork_child(void)
{
	mc_rlimits_unlock();
	/* First: what runs below may allocate, served by ownheap.c under
	 * the guard; its lock, held across the fork, was then taken again
	 * by the child for ever (harden43: fault.c's level_reset matching
	 * MEMCHECK_FAIL_REGION with fnmatch, which allocates in a UTF-8
	 * locale: every forked child of such a program hung) */
	mc_ownheap_after_fork_child();
	forked_child = true;
	mc_pid_after_fork();
	mc_walks_postfork(true);
	mc_footprint_after_fork_child();
	bool gives_back = mc_own_work_begin_fork();
	/* What the child's first stack capture asks the auxiliary vector
	 * (ownread.c's view of the main program's headers), asked here if
	 * the parent never did: getauxval's 64 KiB block of the C library,
	 * which the bare child never maps, faulted in the window and given
	 * back at its end, not after it as the child's own.  Only where the
	 * figures are measured: elsewhere nothing is given back, and the
	 * call ran a block of libmemcheck's code more in every forked child
	 * (test_codeblocks). */
	if (gives_back) {
		size_t main_phnum;
		uintptr_t main_bias;
		(void)mc_main_phdrs(&main_phnum, &main_bias);
		/* and the objects, for its captures' look-ups (objects.c) */
		mc_fork_objects_note(mc_sym_first("_rtld_global", NULL));
	}
	mc_fault_postfork_child();
	mc_map_after_fork();
	mc_text_after_fork();
	mc_fatal_after_fork_child();
	mc_symbolize_postfork(true);
	mc_roots_postfork(true);
	mc_blocks_after_fork_child();
	mc_stacks_after_fork_child();
	mc_account_postfork_child();
	mc_regions_after_fork_child();
	mc_mappings_postfork(true);
	mc_own_work_end_start();
	mc_regions_restart_after_fork();
	mc_guard_leave();
}
