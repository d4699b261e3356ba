/*
 * harness.h - helpers for the whole-program tests (tests/test_*.c).
 *
 * A test runs a program (libmemcheck.so preloaded, or linked) under one
 * of the allocators of the one list, h_allocators[] (lib/allocators.def's),
 * or the memcheck command on it, and reads the JSON Lines report it
 * wrote: H_EXEC does both and labels the run for messages.  A test file
 * is mostly a table of struct h_case rows (what to run, under which
 * allocators, what it needs made first, what must show), which
 * H_ADD_CASES turns into one check a row and allocator.  A row's figures
 * are checked after its exit status, so that a crash is reported as a
 * crash, not as a missing record.
 *
 * The JSON reader is a small strict parser: a report line that is not
 * exactly one JSON value (trailing garbage, bad escapes, bad numbers)
 * fails the load.  harness_xml.c reads XML (JUnit files) as strictly.
 *
 * Every path the tests need comes from MEMCHECK_BUILD (the absolute path
 * of build/), set by `make prog-check`.
 */
#ifndef MEMCHECK_TESTS_HARNESS_H
#define MEMCHECK_TESTS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- paths ----------------------------------------------------------- */

/* $MEMCHECK_BUILD; aborts with a message when it is not set. */
const char *h_build(void);
/* build/libmemcheck.so */
const char *h_lib(void);
/* build/tests/prog/NAME (a fresh string, never freed: tests are short) */
const char *h_prog(const char *name);
/* /usr/lib/x86_64-linux-gnu/SONAME when it exists, else NULL. */
const char *h_allocator_so(const char *soname);

/* The one list of allocators the tests run under: lib/allocators.def's,
 * in its order, each at the index H_<id> of its id (H_GLIBC,
 * H_MIMALLOC, H_JEMALLOC, H_TCMALLOC, H_TCMALLOC_FULL).  The first
 * H_NALLOCATORS are those memcheck runs by default (MC_ALLOC_DEFAULT: the
 * C library's first, nothing more to preload, then mimalloc, jemalloc and
 * tcmalloc's minimal library); loops go over 0..H_NALLOCATORS.  The
 * others (the full tcmalloc) follow, for the tests that run them too
 * (0..H_NALLOCATORS_ALL). */
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) H_##id,
enum {
#include "allocators.def"
	H_NALLOCATORS_ALL
};
#undef MC_ALLOCATOR
#define MC_ALLOCATOR(name, soname, package, family, vgpattern, flags, note, id) \
	+((flags) & MC_ALLOC_DEFAULT ? 1 : 0)
enum { H_NALLOCATORS = 0
#include "allocators.def"
};
#undef MC_ALLOCATOR
struct h_allocator {
	const char *soname;   /* NULL for glibc */
	const char *name;     /* as memcheck names it in a record (its family) */
};
extern const struct h_allocator h_allocators[H_NALLOCATORS_ALL];
/* Allocator i's library in *so (NULL for the C library's; so may be
 * NULL); false, with "note: SONAME not installed; skipping it" on
 * stdout, when it is not installed.  Every test that loops over the
 * allocators starts with it. */
bool h_allocator(int i, const char **so);
/* Allocator i for messages: its soname, or "glibc". */
const char *h_allocator_name(int i);
/* Whether a child here may ask to be traced by its parent
 * (PTRACE_TRACEME, as gdb's run starts a program): a container's seccomp
 * filter or Yama's ptrace_scope 3 refuse it.  Asked once, of a child. */
bool h_can_ptrace(void);
/* Start argv with env (NULL: this process's environment) in a child whose
 * standard output and error go to /dev/null; where traced, the child asks
 * to be traced by this process (PTRACE_TRACEME) and stops at its exec.
 * Its pid; exit status 127 where argv[0] could not be run. */
pid_t h_spawn_quiet(char *const argv[], char *const env[], bool traced);
/* A fresh path (not yet created) in the test program's temporary
 * directory, which h_run_suite() makes and removes when the program exits,
 * files of failed tests included (H_KEEP=1 in the environment keeps it). */
const char *h_tmppath(const char *tag);

/* ---- running programs ------------------------------------------------ */

enum {
	H_PRELOAD = 1,        /* LD_PRELOAD=libmemcheck.so [so] */
	H_PRELOAD_AFTER = 2,  /* LD_PRELOAD=so libmemcheck.so (wrong order) */
	H_EXITCODE = 4,       /* no MEMCHECK_EXITCODE=0: memcheck's default */
	H_TERMINAL = 8,       /* stdout and stderr are one new terminal (a
				 pty, its controlling one): out holds what
				 it showed, "\n" as "\r\n"; err is empty */
	H_LINKED = 16,        /* the program is linked with memcheck:
				 LD_PRELOAD=libmemcheck.so so only when there
				 is an allocator so to put behind it */
};

struct h_run {
	pid_t pid;            /* of the program started */
	int exit_code;        /* -1 when killed by a signal */
	int signal;           /* 0 unless killed by a signal */
	bool timed_out;       /* killed after its limit (h_run) */
	long maxrss_kib;      /* its peak resident set: getrusage of the child */
	char *out;            /* its stdout, NUL-terminated */
	char *err;            /* its stderr, NUL-terminated */
	size_t out_len, err_len;
};

/* Run argv[0] (an absolute path) with argv, in an environment that is the
 * caller's minus every MEMCHECK_* variable and LD_PRELOAD, plus env (a
 * NULL-terminated list of "NAME=value", may be NULL), plus
 * MEMCHECK_EXITCODE=0 unless env sets it or flags has H_EXITCODE: the
 * tests of other things see the program's own exit status; and
 * MEMCHECK_CACHE=$MEMCHECK_BUILD/tests/cache, never the real home's
 * (env's own wins).  flags as above;
 * so is an extra object for LD_PRELOAD (may be NULL).  Waits for the
 * program, at most $H_TIMEOUT seconds (default 20) times the load over the
 * processors when over 1 (h_load_stretch; then it is killed and timed_out
 * set).  Returns 0, or -1 when it could not be started. */
int h_run(struct h_run *r, const char *const argv[], const char *const env[],
	  unsigned flags, const char *so);
void h_run_free(struct h_run *r);
/* "exit 3" / "signal 11 (Segmentation fault)", for messages. */
const char *h_status(const struct h_run *r);

/* Number of lines of text that contain needle. */
int h_count_lines(const char *text, const char *needle);
/* Whole contents of a file (NUL-terminated), or NULL; *len if not NULL. */
char *h_read_file(const char *path, size_t *len);
/* The line of tests/prog/NAME that has the comment "SITE what" (the
 * leak's line a test expects named); fails the test where there is none. */
int h_site_line(const char *name, const char *what);

/* valgrind's "total heap usage: N allocs, M frees, B bytes allocated"
 * (commas allowed).  Returns true when the line was found. */
bool h_valgrind_heap_usage(const char *text, uint64_t *allocs, uint64_t *frees,
			   uint64_t *bytes);

/* /usr/bin/valgrind or /usr/local/bin/valgrind; NULL when not installed. */
const char *h_valgrind_path(void);

/* One process's leak figures in valgrind's output: its HEAP SUMMARY's
 * "in use at exit" and its LEAK SUMMARY, all zero after "All heap
 * blocks were freed". */
enum { HVG_DEF, HVG_IND, HVG_POS, HVG_REA, HVG_SUP, HVG_NKINDS };
struct h_vg_leaks {
	pid_t pid;
	uint64_t in_use_bytes, in_use_blocks;
	/* definitely, indirectly, possibly lost, still reachable, suppressed */
	uint64_t bytes[HVG_NKINDS], blocks[HVG_NKINDS];
};
/* The summaries of every process in text (forked children have their
 * own), in the order printed, into out[0..max).  Returns how many were
 * found, or -1 when a summary lacks a line or a figure. */
int h_valgrind_leaks(const char *text, struct h_vg_leaks *out, int max);

/* ---- JSON ------------------------------------------------------------ */

enum h_jtype { HJ_NULL, HJ_BOOL, HJ_NUM, HJ_STR, HJ_ARR, HJ_OBJ };

struct h_json {
	enum h_jtype type;
	bool b;
	double num;
	bool is_u64;          /* number written as a plain non-negative integer */
	uint64_t u64;
	char *str;            /* HJ_STR: decoded text */
	size_t n;             /* HJ_ARR / HJ_OBJ: elements */
	struct h_json **items;
	char **keys;          /* HJ_OBJ */
};

/* Parse exactly one JSON value from text[0..len) (whitespace around it
 * allowed, nothing else).  NULL on error, with a message in err. */
struct h_json *h_json_parse(const char *text, size_t len, char *err, size_t errlen);
void h_json_free(struct h_json *v);
/* Member of an object, or NULL. */
const struct h_json *h_json_get(const struct h_json *obj, const char *key);
/* Element of an array, or NULL. */
const struct h_json *h_json_at(const struct h_json *arr, size_t i);

/* A report file: every line one JSON object. */
struct h_report {
	size_t n;
	struct h_json **rec;
	char error[256];      /* why h_report_load failed */
};
/* 0 when every line parses as an object; -1 otherwise (error says which
 * line and why).  A missing file is an empty report. */
int h_report_load(const char *path, struct h_report *rep);
void h_report_free(struct h_report *rep);
/* First record with that name and (pid > 0) that pid, or NULL. */
const struct h_json *h_record(const struct h_report *rep, const char *name, pid_t pid);
/* Records with that name. */
size_t h_record_count(const struct h_report *rep, const char *name);

/* Getters on one record. */
#define H_NULL UINT64_MAX          /* the key's value is null */
#define H_MISSING (UINT64_MAX - 1) /* no such key, or not an integer */
uint64_t h_u64(const struct h_json *rec, const char *key);
/* rec[key][sub], sub "blocks" or "bytes" */
uint64_t h_count(const struct h_json *rec, const char *key, const char *sub);
/* String member (name, program, allocator, verdict), or NULL. */
const char *h_str(const struct h_json *rec, const char *key);
/* violations[]: count, and whether one contains needle. */
size_t h_nviolations(const struct h_json *rec);
bool h_violation_has(const struct h_json *rec, const char *needle);
/* leaks[]: count; leak i's blocks/bytes/kind; its stack depth; frame j's
 * "function" / "file" (NULL when null or missing) and "line" (-1). */
size_t h_nleaks(const struct h_json *rec);
uint64_t h_leak_u64(const struct h_json *rec, size_t i, const char *key);
size_t h_leak_depth(const struct h_json *rec, size_t i);
const char *h_frame_str(const struct h_json *rec, size_t leak, size_t frame,
			const char *key);
long h_frame_line(const struct h_json *rec, size_t leak, size_t frame);
/* Whether any frame of any loss record of rec is named fn. */
bool h_leaks_mention(const struct h_json *rec, const char *fn);

/* A figure for messages: the number, "null" or "missing" (a few
 * rotating static buffers). */
const char *h_fmt(uint64_t v);
/* "NAME=value" built with printf (never freed). */
const char *h_env(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- one run, its records (the call every whole-program test makes) -- */

/* What to run: designated initializers, e.g.
 *   H_EXEC(&x, .prog = "plain_family", .args = H_LIST("full"),
 *          .alloc = _i, .flags = H_PRELOAD, .env = H_LIST("MEMCHECK_TRACK=0"));
 * The program gets MEMCHECK_REPORT (a fresh file, loaded afterwards) and
 * MEMCHECK_TEXT=none unless env sets them (env comes first: getenv takes
 * the first).
 *
 * With cli, the memcheck command is what runs:
 *   H_EXEC(&x, .cli = H_LIST("run", "-a", "glibc"), .prog = "cli_prog",
 *          .args = H_LIST("pass"));
 * is build/memcheck run -a glibc --report FILE -- .../cli_prog pass: `run`
 * with a prog gets --report (its records loaded as the program's would
 * be; no MEMCHECK_REPORT); without prog, the cli words are the whole
 * command line (no "--" added, no records), as for the other commands. */
struct h_spec {
	const char *prog;             /* in build/tests/prog/, or a path with a '/' */
	const char *const *args;      /* NULL-terminated (H_LIST), may be NULL */
	const char *const *env;       /* NULL-terminated "NAME=value"s, may be NULL */
	const char *const *cli;       /* memcheck's command and options, or NULL */
	unsigned flags;               /* H_PRELOAD, H_PRELOAD_AFTER, H_EXITCODE, H_LINKED */
	int alloc;                    /* index in h_allocators: its library is so */
	const char *so;               /* a library of one's own instead (alloc unused) */
	const char *text;             /* MEMCHECK_TEXT when env has none ("none") */
	bool no_report;               /* no MEMCHECK_REPORT: nothing loaded */
	double timeout;               /* seconds before the run is killed, if more
				       * than $H_TIMEOUT's (default 20; stretched
				       * by the load alike): a run whose time
				       * the test checks itself */
};
#define H_LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct h_res {
	struct h_run r;               /* status, stdout, stderr, pid */
	struct h_report rep;          /* its MEMCHECK_REPORT, every line parsed */
	const char *report;           /* that file's path (NULL with no_report) */
	int alloc;                    /* the spec's allocator */
	const char *file;             /* a row's file (h_case.file), or NULL */
	char label[512];              /* "PROG ARGS under ALLOCATOR with ENV", for messages */
};

/* Run spec and load its report; fails the test (check) when the program
 * cannot start or a report line is not a JSON object.  The allocator
 * must be installed (the caller asked h_allocator). */
void h_exec(struct h_res *x, const struct h_spec *spec);
#define H_EXEC(x, ...) h_exec((x), &(const struct h_spec){ __VA_ARGS__ })
void h_res_free(struct h_res *x);
/* The record name of x's own process (not a child's); fails the test
 * when there is none. */
const struct h_json *h_rec(const struct h_res *x, const char *name);
/* x exited with status want: fails the test, with its output, when not. */
void h_expect_exit(const struct h_res *x, int want);

/* ---- tests by table -------------------------------------------------- */

/* One figure a row expects of a record: key is a top-level key or
 * "key.sub" (definitely_lost.bytes); str, when set, a string's value. */
struct h_want {
	const char *key;
	uint64_t u64;
	const char *str;              /* h_its_allocator: the run's allocator's name */
	const char *rec;              /* the record; the row's own when NULL */
};

extern const char h_its_allocator[];
extern const char h_file[];
#define H_FILE h_file
#define H_ITS_ALLOCATOR { "allocator", .str = h_its_allocator }

/* The figures want[] (until a NULL key) of rec, x's record; fails the
 * test naming x and the first wrong one. */
void h_expect_wants(const struct h_res *x, const struct h_json *rec, const struct h_want *want);

#define H_NO_RECORDS (-1)         /* records: the report must be empty */
#define H_EXIT_ANY (-2)           /* exit: whatever it is, even a signal */
/* Allocator sets for h_case.allocators (0: all H_NALLOCATORS). */
#define H_ONLY(i) (1u << (i))
#define H_EVERY_ONE ((1u << H_NALLOCATORS_ALL) - 1)  /* the full tcmalloc too */
/* Once: the memcheck command's rows, whose command line names the
 * allocators (run.cli's -a), and rows about no allocator. */
#define H_ONCE H_ONLY(H_GLIBC)

/* A row: a program run under each allocator of the row's set, and what
 * every one of those runs must show. */
struct h_case {
	const char *name;             /* for messages */
	struct h_spec run;            /* alloc is set by the loop */
	unsigned allocators;          /* H_ONLY(..) | ...; 0: every one of the four */
	int exit;                     /* the exit status (0 unless set;
					 H_EXIT_ANY: the callback's to judge) */
	const char *record;           /* the record want[] reads ("process") */
	int records;                  /* how many records (0: not checked; H_NO_RECORDS) */
	const char *stdout_is;        /* stdout is exactly this */
	const char *const *out;       /* stdout contains each of these (H_LIST) */
	const char *const *err;       /* stderr contains each of these */
	const char *const *no_err;    /* stderr contains none of these */
	struct {
		const char *text;
		int n;
	} err_lines[4];               /* stderr has n lines that contain text */
	struct h_want want[24];       /* until a NULL key */
	/* what a row cannot say: called last, the run and its record */
	void (*check)(struct h_res *x, const struct h_json *rec, const struct h_case *c);
	/* a file of this text, made before the run: H_FILE, a word of
	 * run.cli or run.args, stands for its path (x->file) */
	const char *file;
	/* what the row's run needs made first (a copy of a program where it
	 * is to lie, a file it reads): called before the run, in the test's
	 * own process, with the row's spec to change (prog, env); false
	 * skips the row, which said why on stdout */
	bool (*setup)(struct h_spec *run, const struct h_case *c);
	/* called right after the run, before anything is checked: what
	 * must not outlive a failed check (a setuid copy) goes here */
	void (*teardown)(struct h_res *x, const struct h_case *c);
};

/* A row's callback, as START_TEST declares a test: the run x, the row's
 * record rec (NULL when it names none and wants nothing), the row c. */
#define H_CHECK(name)                                                          \
	static void name(struct h_res *x __attribute__((unused)),               \
			 const struct h_json *rec __attribute__((unused)),      \
			 const struct h_case *c __attribute__((unused)))

/* A row's setup and teardown, declared the same way. */
#define H_SETUP(name)                                                          \
	static bool name(struct h_spec *run __attribute__((unused)),            \
			 const struct h_case *c __attribute__((unused)))
#define H_TEARDOWN(name)                                                       \
	static void name(struct h_res *x __attribute__((unused)),               \
			 const struct h_case *c __attribute__((unused)))

/* A row's setup for the memcheck command under each allocator: the row's
 * allocator's object in LD_PRELOAD (run->env, which must have been
 * NULL), as a user would have it; memcheck puts itself in front. */
bool h_setup_allocator_preloaded(struct h_spec *run, const struct h_case *c);
/* A row's setup's last step: the row's run (run->prog, run->args) made
 * strace -f's, each of calls (strace's trace= list) written to a fresh
 * file; its path, or NULL (said on stdout: skip the row) where strace is
 * missing or ptrace is refused.  The run's environment passes to the
 * traced program (strace itself is left out by MEMCHECK_PROGRAMS's
 * default). */
const char *h_setup_strace(struct h_spec *run, const struct h_case *c, const char *calls);
/* The row's program and arguments without memcheck, under x's allocator
 * (preloaded; MEMCHECK_TEXT unset, no report), which must exit 0: the
 * figures a row compares its own with. */
void h_exec_bare(struct h_res *b, const struct h_res *x, const struct h_case *c);
/* c's program run bare by the test itself, under its ptrace (stopped
 * at the exec, before the dynamic linker ran: a waitpid sees the stop),
 * address randomization off, its standard output to /dev/null; its
 * environment the test's own without LD_PRELOAD and memcheck's
 * variables, allocator alloc preloaded, then extra's (NULL-terminated,
 * or NULL).  Its pid. */
pid_t h_spawn_traced(const struct h_case *c, int alloc, const char *const *extra);

/* ---- stepping a traced child ------------------------------------------ */

/* What stopped the traced task (h_trace's callback). */
enum h_trace_stop {
	H_TRACE_CALL_ENTRY,   /* a system call's entry (H_TRACE_CALLS) */
	H_TRACE_CALL_EXIT,    /* its return */
	H_TRACE_EXIT,         /* the task's exit, its memory still there (H_TRACE_EXITS) */
};
enum {
	H_TRACE_CALLS = 1,    /* stop at every system call of pid (PTRACE_SYSCALL) */
	H_TRACE_EXITS = 2,    /* stop at each traced task's exit (PTRACE_O_TRACEEXIT) */
	H_TRACE_FORKS = 4,    /* the processes pid forks traced too (their exits) */
	H_TRACE_THREADS = 8,  /* pid's threads stepped as pid (not with H_TRACE_FORKS) */
};
struct h_trace {
	pid_t root;           /* the child h_trace was given */
	pid_t pid;            /* the stopped task (root, a forked one, a thread) */
	enum h_trace_stop stop;
	void *arg;            /* h_trace's */
};
/* The callback's answer: go on, or let pid run untraced from here
 * (PTRACE_DETACH; h_trace then waits for its end). */
enum { H_TRACE_ON, H_TRACE_DETACH };
/* Step pid, a child that asked to be traced (PTRACE_TRACEME: h_spawn_quiet
 * with traced, h_spawn_traced) and is stopped at its exec, through the
 * stops flags asks for, calling cb at each (signals passed on, the
 * exec's and the forks' own stops not); killed if the test dies first
 * (PTRACE_O_EXITKILL).  pid's wait status at its end. */
int h_trace(pid_t pid, unsigned flags, int (*cb)(const struct h_trace *t), void *arg);

/* Register cases[0..n) x their allocators as one loop test of tc. */
struct TCase;
/* H_ROWS=TEXT in the environment: only the rows whose name contains
 * TEXT are added (a table's rows picked while working on them). */
void h_add_cases(struct TCase *tc, const struct h_case *cases, size_t n);
#define H_ADD_CASES(tc, cases) h_add_cases((tc), (cases), sizeof(cases) / sizeof((cases)[0]))

/* ---- XML (harness_xml.c) -------------------------------------------- */

/* A strict little XML reader, for the JUnit files memcheck writes: a
 * document it would refuse a JUnit consumer would too. */
struct h_xml_attr {
	char *name, *value;
};

struct h_xml {
	char *name;
	struct h_xml_attr attr[16];
	int nattr;
	struct h_xml *kid[512];
	int nkids;
	char *text;           /* character data directly inside, decoded */
};

/* The root element of doc, or NULL with "offset N: why" in err. */
struct h_xml *h_xml_parse(const char *doc, char *err, size_t errlen);
void h_xml_free(struct h_xml *e);
/* The value of attribute name of e, or NULL. */
const char *h_xml_attr(const struct h_xml *e, const char *name);
/* The first child of e named name, or NULL. */
const struct h_xml *h_xml_kid(const struct h_xml *e, const char *name);

/* ---- suite ----------------------------------------------------------- */

/* h_tcase and h_run_suite: suite.h.  The suite's process makes the
 * temporary directory (h_suite_begin) and removes it at exit. */
#include "suite.h"

/* ---- assertions (for test files, which include <check.h>) ------------ */

/* Run a program: H_RUN(&r, flags, so, env, path, args...). */
#define H_RUN(r, flags, so, env, ...)                                          \
	do {                                                                   \
		const char *h_argv_[] = { __VA_ARGS__, NULL };                 \
		ck_assert_msg(h_run((r), h_argv_, (env), (flags), (so)) == 0,  \
			      "cannot start %s", h_argv_[0]);                  \
	} while (0)

/* Load a report and fail the test when any line is not a JSON object. */
#define H_LOAD(rep, path)                                                      \
	ck_assert_msg(h_report_load((path), (rep)) == 0, "bad report: %s",     \
		      (rep)->error)

/* rec[key] == want, saying which record and figure when not. */
#define H_EXPECT_U64(rec, key, want)                                           \
	do {                                                                   \
		uint64_t h_got_ = h_u64((rec), (key)), h_want_ = (want);       \
		ck_assert_msg(h_got_ == h_want_,                               \
			      "record \"%s\" (pid %s): %s = %s, expected %llu", \
			      h_str((rec), "name"), h_fmt(h_u64((rec), "pid")),  \
			      (key), h_fmt(h_got_), (unsigned long long)h_want_);  \
	} while (0)

/* rec[key][sub] == want */
#define H_EXPECT_COUNT(rec, key, sub, want)                                    \
	do {                                                                   \
		uint64_t h_got_ = h_count((rec), (key), (sub)), h_want_ = (want); \
		ck_assert_msg(h_got_ == h_want_,                               \
			      "record \"%s\" (pid %s): %s.%s = %s, expected %llu", \
			      h_str((rec), "name"), h_fmt(h_u64((rec), "pid")),  \
			      (key), (sub), h_fmt(h_got_),                       \
			      (unsigned long long)h_want_);                      \
	} while (0)

/* rec[key] is the string want */
#define H_EXPECT_STR(rec, key, want)                                           \
	do {                                                                   \
		const char *h_got_ = h_str((rec), (key)), *h_want_ = (want);   \
		ck_assert_msg(h_got_ && strcmp(h_got_, h_want_) == 0,          \
			      "record \"%s\": %s = \"%s\", expected \"%s\"",     \
			      h_str((rec), "name"), (key),                       \
			      h_got_ ? h_got_ : "(missing)", h_want_);           \
	} while (0)

/* Leak i's stack frame j is function fn. */
#define H_EXPECT_FRAME(rec, i, j, fn)                                          \
	do {                                                                   \
		const char *h_got_ = h_frame_str((rec), (i), (j), "function"); \
		ck_assert_msg(h_got_ && strcmp(h_got_, (fn)) == 0,             \
			      "record \"%s\": leaks[%d].stack[%d].function = \"%s\", " \
			      "expected \"%s\"", h_str((rec), "name"), (int)(i),    \
			      (int)(j), h_got_ ? h_got_ : "(missing)", (fn));     \
	} while (0)

#endif /* MEMCHECK_TESTS_HARNESS_H */
