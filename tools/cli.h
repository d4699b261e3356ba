/*
 * cli.h - what the files of the memcheck command share, grouped by the
 * file that defines each, from the bottom of the command's layers up
 * (tools/layers.txt; a file calls only its own layer's files and those
 * below, `make tools-layers-check`):
 *
 * helpers   helpers.c   say, die, allocation that cannot fail, paths
 *           usage.c     help texts, usage errors, the option loop
 * data      records.c   report files read back, budgets evaluated, medians
 *           pairing.c   records matched across runs and allocators: the
 *                       budget's baseline record and the table's row
 *           detail.c    a record's nested parts read back: leaks, peak
 *                       snapshot, timeline
 *           spawn.c     the command under test started, waited for, its
 *                       end told
 * output    views.c     the table, the JUnit XML, the report file
 *           html.c      the HTML report: tables, inline SVG charts
 *           export.c    folded stacks (flame graphs) and massif's out-file
 * setup     setup.c     known allocators (lib/allocators.def), the library
 *                       to preload, budget and baseline files
 *           vgrun.c     valgrind's command line for `run --valgrind`
 * commands  run.c       `memcheck run`: allocators, the runs, their exit
 *                       status
 *           compare.c   `memcheck compare`: two stored reports side by side
 *           gate.c      `memcheck gate`: stored reports judged
 *           oom.c       `memcheck oom`: every allocation failed in turn
 *           report.c    `memcheck report`: stored reports as HTML, folded
 *                       stacks, massif's out-file
 *           vgcompat.c  valgrind's command line, for drivers that know
 *                       valgrind
 * main      memcheck.c  main: the command argv names
 *
 * The CLI is an ordinary program: it allocates with malloc and exits on
 * out-of-memory.  It shares lib/json.c, lib/budget.c, lib/budget_check.c,
 * lib/suppress.c, util.c's parts (UTIL), lib/programs.c and lib/options.c with the
 * library, compiled apart and without interposition (tools/tools.mk):
 * the bottom layer, which calls nothing here.
 */
#ifndef MEMCHECK_TOOLS_CLI_H
#define MEMCHECK_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "internal.h"

/* Exit statuses (DESIGN.md, memcheck(1)). */
enum {
	EXIT_PASS = 0,     /* within budget, no leak verdict failed */
	EXIT_GATE = 1,     /* a budget or leak gate failed */
	EXIT_USAGE = 2,    /* bad usage or a bad input file */
	EXIT_COMMAND = 3,  /* the command under test failed or crashed */
};


/* ---- helpers.c ------------------------------------------------------- */

/* "memcheck: " and the message on stderr. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Out of memory and the like: say it and exit 2. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* item appended to the colon-separated *list (NULL: empty), reallocated. */
void join_colon(char **list, const char *item);
const char *base_name(const char *path);
/* Shorten "<cwd>/file:12: ..." to "file:12: ..." for display. */
const char *short_path(const char *s);

/* ---- usage.c --------------------------------------------------------- */

struct option;

/* The help text of cmd (NULL: memcheck's own) to f; false when there is
 * no command cmd. */
bool usage_of(const char *cmd, FILE *f);
/* "memcheck CMD: message" and where to read more, on stderr: EXIT_USAGE. */
int bad_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Command cmd's options in argv (getopt_long: shorts starts with ':',
 * after a '+' for a command that runs one, and has 'h'), each but
 * -h/--help handed to fn(o, its letter, its value), which returns 0 or
 * an exit status (said).  Returns 0 with optind at the first operand;
 * -1 after -h/--help (cmd's help on stdout); else the exit status: fn's,
 * or EXIT_USAGE for a missing value, an unknown option, or no operand
 * when none (the message) is not NULL. */
int parse_options(const char *cmd, int argc, char **argv, const char *shorts,
		  const struct option *longs, int (*fn)(void *o, int c, char *arg), void *o,
		  const char *none);

/* ---- records.c ------------------------------------------------------- */

/* A record's region figures, compactly: struct memcheck_result's bytes
 * from allocs up to violations, each at its offset there less
 * REC_FIGS_AT (rec_fig, REC_FIG), so that mc_keys[].off reads them; its
 * name and violations as strings of their own.  A struct mc_record in
 * each record (1,336 bytes, its strings in fixed arrays) and the CLI's
 * messages in a 512-byte array made a record of a 97-byte line 3.8 KB
 * of memory in gate (10^5 records: 376 MB at its peak; harden47). */
#define REC_FIGS_AT offsetof(struct memcheck_result, allocs)
#define REC_FIGS_END offsetof(struct memcheck_result, violations)
struct rec_result {
	uint64_t figs[(REC_FIGS_END - REC_FIGS_AT + 7) / 8];
	const char *name;        /* interned (rec_intern) */
	char *violations;        /* its own copy, or rec_none when "" */
};

/* What the report line says besides its nested parts, as struct
 * mc_record does (lib/json.c reads into that), compactly. */
struct rec_head {
	struct rec_result r;
	const char *program, *allocator;   /* interned */
	int pid;
	uint64_t timed_purge_ms;    /* MEMCHECK_UNKNOWN when absent */
	uint64_t run, runs;         /* MEMCHECK_UNKNOWN when absent */
	char args_hash[17];         /* "" when absent */
	char args_files[17];
	uint64_t exit_status;       /* MEMCHECK_UNKNOWN when absent (a region
				     * ended before the exit) */
};

/* One record of a report, as read. */
struct rec {
	struct rec_head m;
	char *line;              /* the line as read, without its newline */
	int lineno;              /* of its file (a record in parts: its last
				  * part's) */
	size_t occ;              /* earlier records of the same program
				  * basename and region in its repetition */
	size_t kocc;             /* and of the same arguments' key */
	size_t focc;             /* and of the same arguments' files' key */
	char *cli;               /* violations the CLI's budget check found:
				  * its own copy, or rec_none */
	int ncli;
	bool fail;               /* verdict fail, or ncli > 0 */
	bool own_end;            /* failed, written at an exit with a status
				  * the program chose non-zero: its status
				  * told its caller; not counted (evaluate) */
	bool vg_exit;            /* leak_check "valgrind_exit": memcheck was
				  * bypassed under valgrind, counted nothing
				  * (its figures null), and valgrind's exit
				  * judged the process: neither clean nor a
				  * figure (rec_vg_exit) */
	struct mc_json_leak *leak; /* its first failing leak record's stack, or
				    * NULL: allocated only then (1,200 bytes in
				    * every record was 39% of a record's 3,096,
				    * a 64-byte line's 48 times over: harden46) */
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

/* The empty string of a record's violations and cli when it has none. */
extern char rec_none[1];
/* The figure at offset off of struct memcheck_result (allocs to pass)
 * in x; REC_FIG(x, field) the same by its name, as an lvalue. */
#define rec_fig(x, off) ((const void *)((const char *)(x)->m.r.figs + (off) - REC_FIGS_AT))
#define REC_FIG(x, f)                                                              \
	(*(__typeof__(((struct memcheck_result *)0)->f) *)((char *)(x)->m.r.figs +     \
							    offsetof(struct memcheck_result, f) - \
							    REC_FIGS_AT))
/* x's figures, name and violations as a whole struct memcheck_result. */
void rec_result(const struct rec *x, struct memcheck_result *out);
/* One copy of each string s the records name (never freed). */
const char *rec_intern(const char *s);
/* What record x owns freed (its line, violations, messages, leak). */
void rec_free(struct rec *x);

/* How the command under test ended (spawn.c fills it in). */
struct ending {
	double wall;             /* seconds from start to end */
	int exit_code;           /* -1 when killed */
	int sig;                 /* the signal that killed it, or 0 */
	bool core;
	bool timed_out;          /* killed by spawn_timeout() */
	int exec_errno;          /* it could not be started (with
				  * spawn.exec_error): execvp's errno */
};

/* Why a run ended (run.c fills it in). */
struct runinfo {
	bool done;               /* it ran (or was attempted) */
	struct ending end;
	bool explained;          /* non-zero exit, but a record failed */
};

/* One allocator's records: one column of the comparison. */
struct group {
	char *label;             /* "glibc", "mimalloc", a path, a file name */
	char *object;            /* shared object preloaded, NULL for glibc */
	char *skipped;           /* why it was not run, or NULL */
	const char *bad;         /* why object is no allocator (run.c), or NULL */
	bool baseline;           /* the others are compared with it */
	bool stored;             /* read from a file, not run now: its
				  * verdicts are not judged */
	int nreps;
	struct recs *reps;       /* records of each repetition */
	struct runinfo *runs;    /* of each repetition (run only) */
	uint64_t timed_ms;       /* > 0: its records said it gives memory
				  * back on a timer, and -n auto ran it
				  * more than once */
};

/* Read a JSON Lines report into out; every malformed line is said as
 * "path:line: message".  Returns the number of malformed lines, or -1
 * (said) when the file cannot be read.  A missing file is empty when
 * missing_ok. */
int recs_read(struct recs *out, const char *path, bool missing_ok);
/* A line this long (then each doubling) that can hold no record is
 * said and the rest of it skipped, not held (64 KiB; fuzz_records sets
 * it low to check that the skip reads what a whole line's read does). */
extern size_t recs_probe_bytes;
/* The fatal signal a record was written at (its "signal" key: memcheck
 * writes a killed process's record before it dies), its name into name
 * (cap bytes; NULL: not wanted); 0 for a region that ended. */
int rec_signal(const char *line, size_t len, char *name, size_t cap);
void recs_push(struct recs *out, const struct rec *r);
/* Records of rs[0..n) that valgrind's exit judged (struct rec's vg_exit). */
size_t recs_vg_exit(const struct recs *rs, size_t n);
void recs_free(struct recs *rs);
/* A figure over several records: the measured values (unknown ones left
 * out); u* for integers, exact. */
struct spread {
	size_t n;
	double min, median, max;
	uint64_t umin, umedian, umax;
};
/* The figure at offset off of struct memcheck_result (a double when
 * seconds) over v[]; false when no record has it. */
bool spread_of(const struct rec *const *v, size_t n, size_t off, bool seconds,
	       struct spread *out);
/* r with each measured figure (mc_keys[].measured) set to its median
 * over v[]. */
void with_medians(const struct rec *const *v, size_t n, struct memcheck_result *r);

/* Judge every record of groups[] that is not stored: its own verdict,
 * less the violations of the budget at budget_abs (the library's, from
 * MEMCHECK_BUDGET), and the CLI's check of budget b (may be NULL)
 * against the matching record of the baseline group, counted figures as
 * they are and measured figures on their medians over the runs.  The
 * baseline group's own records are checked without a baseline, as the
 * library checks them.  Returns the number of records that fail and
 * count: not those of a process that exited non-zero on its own
 * (rec_own_end, marked own_end), which are said, not counted. */
bool rec_own_end(const struct rec *x);
size_t evaluate(struct group *groups, size_t ng, const struct mc_budget *b,
		const char *budget_abs);
/* Add a record read from a report to g: to the repetition its "run" key
 * names (memcheck run --report), else to the first. */
void group_add(struct group *g, const struct rec *r);
/* A new group labelled label in groups[]: one repetition, no run. */
struct group *group_new(struct group **groups, size_t *ng, const char *label);
/* Read files[] into one list; false (every bad line said) when any is
 * malformed, cannot be read or holds no record. */
bool read_all(struct recs *all, char **files, int n);
/* all's records (taken: all is left empty) added to groups[], one group
 * per allocator in the order they first appear, numbered; the one
 * labelled baseline is the baseline unless groups[0] already is (a
 * stored baseline, --baseline-file). */
void group_by_allocator(struct recs *all, struct group **groups, size_t *ng,
			const char *baseline);
/* recs_number for each repetition of g. */
void group_number(struct group *g);
void group_free(struct group *g);
/* group_free for each, and the array. */
void groups_free(struct group *groups, size_t ng);

/* ---- pairing.c ------------------------------------------------------- */

/* Number the records of a repetition: occ and kocc of each record. */
void recs_number(struct recs *rs);
/* The same region: program basename, name, arguments' key and
 * occurrence among that key (occurrence alone where one has no key). */
bool same_key(const struct rec *a, const struct rec *b);

/* A table row: a region's identity across allocators, its first record
 * (program, name) and occurrence. */
struct key {
	const struct rec *first;
	size_t occ;
};
/* Which records of groups[] (numbered) are one region, built once:
 * lookups in O(1) where a scan of every record was O(n) (field43). */
struct pairing;
struct pairing *pairing_new(const struct group *groups, size_t ng);
void pairing_free(struct pairing *p);
/* The baseline group's record that record r of repetition rep of
 * groups[gi] is judged against: of r's program basename and region, the
 * kocc-th of r's arguments' key where the baseline's run has records of
 * that key, else the occ-th (counted round where it has fewer); from the
 * baseline's run rep, or its first when stored or with fewer runs.  NULL
 * without one (or for the baseline's own records). */
const struct rec *pairing_base(const struct pairing *p, size_t gi, int rep, const struct rec *r);
/* Every record of groups[gi] of the same region as like (same_key), over
 * its repetitions in order, in *out (free it); their number. */
size_t pairing_series(const struct pairing *p, size_t gi, const struct rec *like,
		      const struct rec ***out);
/* The rows: each region of the baseline (same_key), in the order they
 * first appear, then those of the other groups' records that have no
 * baseline record; a record with one is in its baseline record's row. */
const struct key *pairing_rows(const struct pairing *p, size_t *nkeys);
/* The records of groups[gi] in row row, over its repetitions in order, in
 * *out (free it); their number. */
size_t pairing_cell(const struct pairing *p, size_t row, size_t gi, const struct rec ***out);

/* ---- detail.c -------------------------------------------------------- */

struct dframe {
	char *function, *file, *object, *address;  /* file NULL when unknown */
	long line;                                 /* 0 when unknown */
	bool inlined;
	bool alloc_fn;                             /* an allocation function's */
};
struct stack {
	struct dframe *f;         /* innermost first: f[0] called malloc */
	size_t n;
};
/* A line at the peak (memcheck-report(5)'s "lines"): all of its bytes
 * and blocks, how many stacks, its largest stack with that stack's
 * own.  An older report's "sites" entry is one stack: a line of one
 * stack here, its figures the stack's. */
struct site {
	uint64_t bytes, blocks;
	uint64_t stacks, stack_bytes, stack_blocks;
	struct stack st;
};
struct peak {
	bool have;
	bool by_stack;            /* an older report: the largest stacks, not lines */
	uint64_t bytes, blocks;   /* every live block's, at the peak */
	struct site *sites;       /* the largest, largest first */
	size_t n;
	/* beyond sites[]: an older report's stacks (other_sites, 0 in a
	 * newer one, whose rest is counted in stacks alone) */
	uint64_t other_sites, other_stacks, other_bytes, other_blocks;
};
struct sample {
	double seconds;
	uint64_t moved, live, rss, retained;  /* MEMCHECK_UNKNOWN: not measured */
};
struct timeline {
	bool have;
	uint64_t step;
	struct sample *v;
	size_t n;
};
struct leak {
	char kind[32];
	uint64_t bytes, blocks;
	struct stack st;
};
struct detail {
	struct peak peak;
	struct timeline tl;
	struct leak *leaks;
	size_t nleaks;
};
/* Read r's nested parts; missing ones are empty. */
void detail_read(const struct rec *r, struct detail *d);
void detail_free(struct detail *d);
/* Records of groups (not stored ones) whose allocations failed under an
 * address-space limit that counted memcheck's own mappings (their
 * "limit_shortfall"), and that limit: the first's resource name (in
 * name[16]) and limit, the most bytes of memcheck's any of them saw. */
size_t limit_shortfalls(const struct group *groups, size_t ng, char name[16], uint64_t *limit,
			uint64_t *bytes);
/* The frame that names a site (the hook for allocation wrappers), NULL
 * for an empty stack; "file:line (function)" of it, to free. */
const struct dframe *site_frame(const struct stack *st);
char *site_label(const struct stack *st);

/* ---- spawn.c --------------------------------------------------------- */

/* One variable of the command's environment: set to value, or unset
 * when value is NULL.  A variable not listed is inherited. */
struct env_var {
	const char *name, *value;
};

/* How to start the command under test. */
struct spawn {
	char *const *argv;       /* run with execvp: no shell */
	const char *preload;     /* LD_PRELOAD (spawn_preload()) */
	const char *report;      /* MEMCHECK_REPORT */
	const struct env_var *env;  /* then these, in order */
	size_t nenv;
	const char *output;      /* stdout and stderr to this file, stdin
				  * from /dev/null; NULL: memcheck's own */
	bool own_group;          /* a process group of its own, so that
				  * spawn_kill() reaches what it starts */
	bool unblock_signals;    /* an empty signal mask, whatever the
				  * caller blocks (SIGCHLD, to wait for it) */
	bool exec_error;         /* a pipe tells spawn_wait() why it could
				  * not be started (ending.exec_errno);
				  * without it the child just exits 127 */
};

/* A command started. */
struct child {
	pid_t pid;
	double start;            /* mc_now() before the fork */
	int errfd;               /* the exec error pipe, or -1 */
	bool own_group, timed_out;
};

/* LD_PRELOAD for the command: libmemcheck first, then the allocator's
 * object (NULL: none), then, when keep_user, the LD_PRELOAD memcheck was
 * given.  Free it. */
char *spawn_preload(const char *lib, const char *object, bool keep_user);
/* Fork and exec sp->argv as sp says (dies when it cannot fork). */
void spawn_start(const struct spawn *sp, struct child *c);
/* Reap c: wait until it ends (block), or only look whether it has.
 * True when it has ended, with *e filled in. */
bool spawn_wait(struct child *c, bool block, struct ending *e);
/* Catch SIGINT, SIGTERM and SIGHUP with handler (on), or put back what
 * memcheck was started with (off); one that was ignored stays ignored. */
void spawn_catch_signals(bool on, void (*handler)(int));
/* Send sig to c (its process group when it has its own). */
void spawn_kill(const struct child *c, int sig);
/* Kill c (SIGKILL) for taking too long: its ending says timed_out. */
void spawn_timeout(struct child *c);
/* "SEGV" for SIGSEGV; NULL for 0 or a signal without a name. */
const char *sig_name(int sig);
/* "killed by signal 11 (SIGSEGV)[, core dumped]" or "exit status N". */
void describe_end(const struct ending *e, char *buf, size_t size);

/* ---- views.c --------------------------------------------------------- */

/* name for a terminal: control characters as C escapes, and " #N" for
 * the N-th occurrence (occ + 1) when occ > 0.  Free it. */
char *printable(const char *name, size_t occ);
/* A file to write whole, or NULL (said); closed by close_written,
 * false (said) when writing it failed. */
FILE *open_written(const char *path);
int open_output(const char *path, int flags);
/* Whether --opt path (of command cmd) can be written later (said as bad
 * usage when not): asked before the runs, nothing created. */
bool writable_later(const char *cmd, const char *opt, const char *path);
bool close_written(FILE *f, const char *path);
/* Markup-escaped text for XML and HTML (control characters as '?'). */
void xml_text(FILE *f, const char *s);
/* The comparison table, per region and group. */
void print_table(FILE *f, struct group *groups, size_t ng, const char *title);
/* For a group of several runs, a line: how far its peak RSS and retained
 * bytes varied between them, at the region where they varied most. */
void print_spread(FILE *f, const struct group *g);
/* JUnit XML; false (said) when the file cannot be written.  command
 * (NULL for stored reports) gets a testcase of its own per allocator:
 * an error when it crashed or failed. */
bool write_junit(const char *path, struct group *groups, size_t ng, const char *command);
/* Every record of the groups that are not stored, as read; with runs,
 * each with the keys "run", "runs" and "spread" added
 * (memcheck-report(5)). */
bool write_report(const char *path, struct group *groups, size_t ng, bool runs);

/* ---- export.c -------------------------------------------------------- */

/* r's peak snapshot as folded stacks, root frame "REGION (ALLOCATOR)". */
void export_folded(FILE *f, const struct rec *r, const struct detail *d);
/* r's timeline and peak snapshot as massif's out-file. */
void export_massif(FILE *f, const struct rec *r, const struct detail *d);

/* ---- html.c ---------------------------------------------------------- */

/* The HTML report of groups (evaluated): one self-contained page.
 * sources: what it was made from, for its head; b: the budget (may be
 * NULL), for the limits drawn in the charts.  False (said) when the
 * file cannot be written. */
bool write_html(const char *path, struct group *groups, size_t ng, const char *sources,
		const struct mc_budget *b);

/* ---- setup.c --------------------------------------------------------- */

/* lib/allocators.def read for its flags (MC_ALLOC_*) alone. */
#define MC_ALLOCATOR(...)
#include "allocators.def"
#undef MC_ALLOCATOR

/* An allocator memcheck knows by name: one line of lib/allocators.def,
 * which says what each field is. */
struct allocator_info {
	const char *name, *soname, *package, *family, *vgpattern;
	unsigned flags;          /* MC_ALLOC_DEFAULT, MC_ALLOC_CXX */
};
extern const struct allocator_info allocators[];
extern const size_t nallocators;
/* The one named name (`run -a`), or NULL. */
const struct allocator_info *allocator_named(const char *name);
/* The names of those with every one of flags (0: all), joined by sep,
 * in buf (cut at size). */
void allocator_names(char *buf, size_t size, const char *sep, unsigned flags);

/* path against the working directory, to free. */
char *absolute(const char *path);
/* err (lines) on stderr with every "abs" in it said as "given": the path
 * the user typed, in messages about a file the library was given. */
void say_path_error(const char *err, const char *abs, const char *given);
/* The first of rel[] (relative to this program's directory) that
 * access(2) allows with mode, or NULL. */
char *beside_exe(const char *const rel[], size_t nrel, int mode);
/* libmemcheck.so to preload (said when not found: NULL).  Free it. */
char *find_library(void);
/* NULL where path can be preloaded (LD_PRELOAD), else why not. */
const char *unpreloadable(const char *path);
/* --alloc-fn PATTERN (run, oom, valgrind's command line): added to
 * MEMCHECK_ALLOC_FN in the environment every run inherits. */
void add_alloc_fn(const char *pattern);
/* Load a budget file given as path; its rules are named by the absolute
 * path (*abs, when not NULL), as the library names them; errors are said
 * with path as given.  NULL on error.  A FIFO's writer is waited for;
 * stream (or NULL): a file that is not a regular one leaves its text
 * there (stream->s not NULL), for the processes run starts. */
struct mc_budget *load_budget(const char *path, char **abs, struct mc_buf *stream);
/* That text written to DIR/budget, for MEMCHECK_BUDGET; its path, or
 * NULL (said, "--budget given"); stream emptied. */
/* text[len] written to a new file dir/file, its path (free it); NULL
 * when it cannot be, said naming option and the user's file given. */
char *write_copy(const char *text, size_t len, const char *dir, const char *file,
		 const char *option, const char *given);
char *write_budget_copy(struct mc_buf *stream, const char *dir, const char *given);
/* g becomes the stored baseline group: the records of path whose
 * allocator is name, or all of them when none is.  False (said) when
 * path cannot be read or has a malformed line. */
bool read_baseline_file(struct group *g, const char *path, const char *name);
/* The baseline allocator's name from --baseline (given, may be NULL) and
 * the budget file (may be NULL); 0, or 2 (said) when they disagree. */
int pick_baseline(const char *cmd, const char *given, const struct mc_budget *b,
		  const char **out);

/* ---- vgrun.c --------------------------------------------------------- */

/* `memcheck run --valgrind`.  The valgrind program in PATH, or NULL; the
 * argv that runs cmd under it for the allocator named label (object: its
 * shared object, NULL for glibc), user's options last. */
char *vg_find(void);
char **vg_argv(const char *valgrind, const char *label, const char *object,
	       char *const *user, size_t nuser, char *const *cmd);
void vg_argv_free(char **v);

/* ---- the commands: run.c, compare.c, gate.c, oom.c, report.c --------- */

/* Each takes its own argv: argv[0] is the command's name. */
int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_oom(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* ---- vgcompat.c ------------------------------------------------------ */

/* `memcheck [VALGRIND OPTIONS] PROGRAM [ARGS]`: argv[1] is the first
 * option.  Execs PROGRAM; returns only on error, or after --help or
 * --version among the options (valgrind's probes). */
int cmd_vgcompat(int argc, char **argv);
/* valgrind's --version line, as memcheck answers it under valgrind's
 * name or among valgrind's options: the valgrind whose command line
 * vgcompat.c speaks, then memcheck's version. */
void vgcompat_version(void);

#endif /* MEMCHECK_TOOLS_CLI_H */
