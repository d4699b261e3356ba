/*
 * options.c - the MEMCHECK_* environment variables, parsed from the one
 * table in options.def.  Bad values get one line on stderr naming the
 * variable, the value and what was expected; the default stays in force.
 *
 * Parsing and saying are two steps: start-up parses first, with nothing
 * open and nothing written, because the options decide whether this
 * process is measured at all (MEMCHECK_PROGRAMS, MEMCHECK_PROCESS); a
 * program left out only forwards and says nothing (life.c).  Only a
 * process that goes on opens its text (MEMCHECK_LOG) and hears about its
 * bad values (mc_options_say).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

MC_HOT struct mc_options mc_opt;

enum kind { STR, BOOL, INT, ENUM, SET };

/* The table's strings in one object, each named by its offset in it:
 * a table of pointers was 132 relocations that the dynamic linker
 * wrote in every process at load, a left-out one too, and 1.5 KiB of
 * relocated data (.data.rel.ro), which with the rest ran onto a third
 * page where two now hold it all: a page fault fewer (~20 us here).
 * The names, defaults and values, which every start reads, lie
 * together on a page or two; the docs (read by make man only) apart
 * (docs, below). */
struct option_strs {
#define MC_OPT(NAME, field, kind, def, values, doc)                              \
	char NAME##_name[sizeof("MEMCHECK_" #NAME)];                             \
	char NAME##_def[sizeof(def)];                                            \
	char NAME##_values[sizeof(values)];
#include "options.def"
#undef MC_OPT
};

static const struct option_strs strs = {
#define MC_OPT(NAME, field, kind, def, values, doc) "MEMCHECK_" #NAME, def, values,
#include "options.def"
#undef MC_OPT
};

/* The docs in an object of their own, in a section of their own that
 * no .rodata pattern matches (lib/text-order.ld lays it after all the
 * code a process runs): in strs
 * they were 14 KiB inside the first 64 KiB blocks of the file, and the
 * code and read-only data every measured process runs and reads ran
 * 9 KiB into a fourth block, one page fault more in each. */
struct option_docs {
#define MC_OPT(NAME, field, kind, def, values, doc) char NAME##_doc[sizeof(doc)];
#include "options.def"
#undef MC_OPT
};

__attribute__((section(".mc_docs"))) static const struct option_docs docs = {
#define MC_OPT(NAME, field, kind, def, values, doc) doc,
#include "options.def"
#undef MC_OPT
};

/* 12 bytes an option, not 24: the table lies with the code every
 * process runs at start-up (group 0 of lib/text-order.ld), ahead of the
 * code a threaded process adds, whose room before the fifth 64 KiB
 * block of the file it shares (0x294 bytes given back, session 52). */
struct option_def {
	uint16_t name, def, values;      /* offsets in strs */
	uint16_t doc;                    /* in docs */
	uint16_t offset;                 /* of the field in struct mc_options */
	uint8_t kind;                    /* enum kind */
};
_Static_assert(sizeof(struct option_strs) <= UINT16_MAX && sizeof(struct option_docs) <= UINT16_MAX &&
		       sizeof(struct mc_options) <= UINT16_MAX,
	       "struct option_def's offsets are 16 bits");

static const struct option_def options[] = {
#define MC_OPT(NAME, field, kind, def, values, doc)                              \
	{ offsetof(struct option_strs, NAME##_name), offsetof(struct option_strs, NAME##_def), \
	  offsetof(struct option_strs, NAME##_values), offsetof(struct option_docs, NAME##_doc), \
	  offsetof(struct mc_options, field), kind },
#include "options.def"
#undef MC_OPT
};

static inline const char *str_at(uint32_t off)
{
	return (const char *)&strs + off;
}

/* File options made absolute at start-up: the program may chdir later. */
static char paths[MC_ARRAY_SIZE(options)][4096];
/* The options whose value did not parse, said by mc_options_say; and,
 * in the last slot, MEMCHECK_VALGRIND too long to be the settings
 * (read_combined). */
#define LONG_SETTINGS MC_ARRAY_SIZE(options)
MC_HOT static bool bad_value[LONG_SETTINGS + 1];

static const char *absolute(size_t i, const char *path)
{
	char *buf = paths[i];
	if (!path || path[0] == '/' || strcmp(path, "-") == 0)
		return path;    /* "-": standard error, where a file allows it */
	if (!getcwd(buf, sizeof paths[i] - 1) ||
	    strlen(buf) + strlen(path) + 2 > sizeof paths[i])
		return path;
	strcat(buf, "/");
	strcat(buf, path);
	return buf;
}

/* Index of word in a "|"-separated list, or -1.  One pass over the
 * list, no call into the C library: every option's default is parsed
 * at every start (below). */
static int enum_index(const char *values, const char *word)
{
	int i = 0;
	for (const char *p = values;; i++) {
		const char *w = word;
		while (*p && *p != '|' && *p == *w)
			p++, w++;
		if ((*p == '|' || !*p) && !*w)
			return i;
		while (*p && *p != '|')
			p++;
		if (!*p)
			return -1;
		p++;
	}
}

/* A SET's value: words of the "|"-separated list joined by commas, each
 * its bit (the first word bit 0), or all or none alone, as valgrind's
 * --show-leak-kinds takes them; -1 when a word is not in the list. */
static int set_bits(const char *values, const char *val)
{
	if (mc_str_eq(val, "all") || mc_str_eq(val, "none")) {
		int n = 1;
		for (const char *p = values; *p; p++)
			n += *p == '|';
		return val[0] == 'a' ? (1 << n) - 1 : 0;
	}
	int bits = 0;
	for (const char *w = val;;) {
		char word[32];
		size_t n = 0;
		while (w[n] && w[n] != ',' && n + 1 < sizeof word) {
			word[n] = w[n];
			n++;
		}
		word[n] = 0;
		int i = n ? enum_index(values, word) : -1;
		if (i < 0 || (w[n] && w[n] != ','))
			return -1;
		bits |= 1 << i;
		if (!w[n])
			return bits;
		w += n + 1;
	}
}

/* The table's defaults are parsed at every start, in every process the
 * library is loaded into, a left-out one too: so the parsing here uses
 * no function of the C library that a short program would not touch
 * anyway.  strcasecmp, strtol and isspace's table cost a measured or a
 * left-out /bin/date four page faults of its own (~20 us each here). */

/* s equals word (lower case, ASCII) whatever the case of s's letters. */
static bool same_word(const char *s, const char *word)
{
	for (; *word; s++, word++) {
		char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
		if (c != *word)
			return false;
	}
	return *s == 0;
}

static int parse_bool(const char *s)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };
	for (size_t i = 0; i < MC_ARRAY_SIZE(yes); i++) {
		if (same_word(s, yes[i]))
			return 1;
		if (same_word(s, no[i]))
			return 0;
	}
	return -1;
}

int mc_options_bool(const char *s)
{
	return parse_bool(s);
}

/* A decimal number with an optional sign at s, to *end, as strtol takes
 * it but with no space before it; false when there is no digit or it
 * overflows a long. */
static bool decimal(const char *s, const char **end, long *out)
{
	bool neg = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	unsigned long v = 0, max = neg ? (unsigned long)LONG_MAX + 1 : LONG_MAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*end = s;
	*out = neg ? (long)(0 - v) : (long)v;
	return true;
}

/* The whole value is the number: no space before it and none after, one
 * rule (issue 14: " 1" was taken, "1 " refused). */
static bool parse_int(const char *s, const char *range, int *out)
{
	const char *end;
	long lo, hi, v;
	if (!decimal(range, &end, &lo) || *end != ':' || !decimal(end + 1, &end, &hi))
		return false;
	if (!decimal(s, &end, &v) || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

/* Store the value of one option; false when it does not parse (the
 * field is left as it was). */
static bool set_option(const struct option_def *o, const char *val)
{
	void *field = (char *)&mc_opt + o->offset;
	int iv = -1;
	switch (o->kind) {
	case STR:
		*(const char **)field = *val ? val : NULL;
		return true;
	case BOOL:
		iv = parse_bool(val);
		break;
	case INT:
		if (!parse_int(val, str_at(o->values), &iv))
			return false;
		break;
	case ENUM:
		iv = enum_index(str_at(o->values), val);
		break;
	case SET:
		iv = set_bits(str_at(o->values), val);
		break;
	}
	if (iv < 0)
		return false;
	*(int *)field = iv;
	return true;
}

/* MEMCHECK_VALGRIND longer than MC_VALGRIND_MAX, ignored (read_combined). */
static __attribute__((noinline, cold)) void say_long_settings(void)
{
	const char *v = secure_getenv("MEMCHECK_VALGRIND");
	if (!v)
		v = "";
	mc_log("MEMCHECK_VALGRIND=%.*s%.*s: longer than %d bytes: expected the settings "
	       "memcheck's valgrind command line writes (memcheck(1), valgrind); ignored, "
	       "each MEMCHECK_* variable read as set", MC_CUT_VALUE(v), MC_VALGRIND_MAX - 1);
}

/* One line for a value that did not parse: the default stays.  A long
 * value is cut: the line (mc_log's, 1 KiB) kept a 3,000-byte value
 * whole and lost what was expected (harden46).  Out of line and cold:
 * its code and strings out of the blocks every start reads. */
static const char *value_read(size_t i);

static __attribute__((noinline, cold)) void say_bad(size_t i)
{
	if (i == LONG_SETTINGS) {
		say_long_settings();
		return;
	}
	const struct option_def *o = &options[i];
	const char *val = value_read(i);
	if (!val)
		val = "";    /* the variable gone from the environment since */
	if (o->kind == INT)
		mc_log("%s=%.*s%.*s: expected an integer from %.*s to %s; using %s", str_at(o->name),
		       MC_CUT_VALUE(val), (int)(strchr(str_at(o->values), ':') - str_at(o->values)),
		       str_at(o->values), strchr(str_at(o->values), ':') + 1, str_at(o->def));
	else if (o->kind == SET)
		mc_log("%s=%.*s%.*s: expected all, none or words of %s joined by commas; using %s",
		       str_at(o->name), MC_CUT_VALUE(val), str_at(o->values), str_at(o->def));
	else
		mc_log("%s=%.*s%.*s: expected %s %s; using %s", str_at(o->name), MC_CUT_VALUE(val),
		       o->kind == ENUM ? "one of" : "a boolean,", str_at(o->values), str_at(o->def));
}

/* A setuid or setgid program (secure execution, AT_SECURE) runs for a
 * user it does not trust, who sets its environment: a MEMCHECK_* file
 * would be read (MEMCHECK_SUPPRESSIONS=/etc/shadow printed its first
 * line in the parse error) or created (the report, the log, generated
 * suppressions, anywhere) with the program's privileges, and the other
 * variables change what it does.  There memcheck reads none of them
 * (secure_getenv) and says so once, naming them, never echoing their
 * values. */
/* The MEMCHECK_* variables' values, in one pass over the environment:
 * a secure_getenv for each of the table's options walked all of it 33
 * times, about 11 K instructions of every start (a left-out one too).
 * The first of a name wins, as getenv's; none in secure execution, as
 * secure_getenv's. */
static bool read_by_verdict(size_t i)
{
	return options[i].offset == offsetof(struct mc_options, process_region) ||
	       options[i].offset == offsetof(struct mc_options, programs);
}

/* MEMCHECK_VALGRIND: the valgrind command line's settings in one
 * variable (tools/vgcompat.c), so that a program copying its
 * environment allocates for one string more than bare, where it
 * allocated for eleven (dash: 59 blocks where valgrind's run has 52).
 * Its entries are copied, each ended by a NUL, into a buffer of the
 * library's (.bss: only the pages written are resident); the program's
 * string and its children's stay as they were.  An entry takes the
 * place of the variable of its name: the command line set it over the
 * caller's (it leaves out the entries whose caller's value it keeps). */
static char combined_buf[MC_VALGRIND_MAX];

/* Out of line: only valgrind's command line sets MEMCHECK_VALGRIND, and
 * this code lies in lib/text-order.ld's group 7, out of the blocks every
 * start runs. */
static __attribute__((noinline)) void read_combined(const char *combined, const char **vals,
						     bool verdict)
{
	size_t len = 0;
	while (combined[len] && len < sizeof combined_buf - 1)
		len++;
	if (combined[len]) {
		/* longer than the command line writes it (tools/vgcompat.c
		 * refuses more): not its settings, ignored, and said (it was
		 * ignored unsaid before session 47) */
		bad_value[LONG_SETTINGS] = true;
		return;
	}
	for (size_t k = 0; k <= len; k++)
		combined_buf[k] = combined[k] == MC_VALGRIND_SEP ? 0 : combined[k];
	for (const char *entry = combined_buf; entry < combined_buf + len;) {
		for (size_t i = 0; i < MC_ARRAY_SIZE(options); i++) {
			if (verdict && !read_by_verdict(i))
				continue;
			const char *val = mc_str_after(entry, str_at(options[i].name) + 9);
			if (val && *val == '=') {
				vals[i] = val + 1;
				break;
			}
		}
		while (*entry)
			entry++;
		entry++;
	}
}

/* The value option i was read from, for its complaint: its entry in
 * MEMCHECK_VALGRIND (as read_combined copied it) or its variable. */
static const char *value_read(size_t i)
{
	for (const char *entry = combined_buf; *entry;) {
		const char *val = mc_str_after(entry, str_at(options[i].name) + 9);
		if (val && *val == '=')
			return val + 1;
		while (*entry)
			entry++;
		entry++;
	}
	return secure_getenv(str_at(options[i].name));
}

const char *mc_valgrind_word(const char *name)
{
	for (const char *entry = combined_buf; *entry; entry += strlen(entry) + 1) {
		const char *val = mc_str_after(entry, name);
		if (val && *val == '=')
			return val + 1;
	}
	return NULL;
}

char *mc_valgrind_entry(const char *settings, const char *name)
{
	const char *v = settings;
	while (v && *v) {
		const char *val = mc_str_after(v, name);
		if (val && *val == '=')
			return (char *)val + 1;
		while (*v && *v != MC_VALGRIND_SEP)
			v++;
		if (*v)
			v++;
	}
	return NULL;
}

/* The program valgrind's command line checks under --trace-children=no
 * (life.c's exec_untraced): the settings have been read, and no program
 * it execs is checked, as valgrind's execve runs them natively with its
 * preload taken out of LD_PRELOAD.  So the program's environment loses
 * MEMCHECK_VALGRIND, and in its LD_PRELOAD each of the library's entries
 * (libmemcheck.so*) turns into as many colons, before its main: the
 * value keeps its length, which the command line made valgrind's
 * (tools/vgcompat.c: valgrind 3.19 shows the program
 * LD_PRELOAD=LIBDIR/vgpreload_core-amd64-linux.so:LIBDIR/vgpreload_
 * memcheck-amd64-linux.so, the caller's value after a colon), so a
 * program that copies or counts its environment allocates exactly as
 * under valgrind; whatever it execs, directly or through system, popen
 * or posix_spawn, runs without memcheck, the dynamic loader skipping
 * empty entries.  Nothing changes where LD_PRELOAD does not fit the
 * buffer: its programs would have the library without its settings. */
static char preload_buf[4096];

void mc_valgrind_hide(void)
{
	char **settings = NULL, **preload = NULL;
	for (char **e = environ; e && *e; e++) {
		if (!settings && mc_str_after(*e, "MEMCHECK_VALGRIND="))
			settings = e;
		else if (!preload && mc_str_after(*e, "LD_PRELOAD="))
			preload = e;
	}
	if (!settings || !preload)
		return;
	char *w = preload_buf, *end = preload_buf + sizeof preload_buf - 1;
	for (const char *p = *preload; *p; p++) {
		if (w == end)
			return;
		*w++ = *p;
	}
	*w = 0;
	for (char *p = preload_buf + 11; *p;) {
		char *q = p, *base = p;
		while (*q && *q != ' ' && *q != ':') {
			if (*q == '/')
				base = q + 1;
			q++;
		}
		if (mc_str_after(base, "libmemcheck.so"))
			while (p < q)
				*p++ = ':';
		p = *q ? q + 1 : q;
	}
	*preload = preload_buf;
	do
		settings[0] = settings[1];
	while (*settings++);
}

bool mc_valgrind_hidden(const char *pre)
{
	return preload_buf[0] && !strcmp(pre, preload_buf + 11);
}

/* verdict: only the two options read_by_verdict names (a suite's
 * MEMCHECK_CACHE and MEMCHECK_REPORT were each compared with every
 * option's name in every left-out process). */
static void read_environment(const char **vals, bool verdict)
{
	if (!environ || getauxval(AT_SECURE))
		return;
	const char *combined = NULL;
	for (char **e = environ; *e; e++) {
		const char *v = *e;
		if (v[0] != 'M' || !mc_str_after(v, "MEMCHECK_"))
			continue;
		if (!combined && (combined = mc_str_after(v + 9, "VALGRIND=")))
			continue;
		for (size_t i = 0; i < MC_ARRAY_SIZE(options); i++) {
			if (verdict && !read_by_verdict(i))
				continue;
			/* past "MEMCHECK_", which every name begins with */
			const char *val = mc_str_after(v + 9, str_at(options[i].name) + 9);
			if (val && *val == '=') {
				if (!vals[i])
					vals[i] = val + 1;
				break;
			}
		}
	}
	if (combined)
		read_combined(combined, vals, verdict);
}

static void init_one(size_t i, const char *v)
{
	const struct option_def *o = &options[i];
	set_option(o, str_at(o->def)); /* the table's defaults parse */
	bad_value[i] = v && !set_option(o, v);
	const char **field = (const char **)((char *)&mc_opt + o->offset);
	if (o->kind == STR && mc_str_eq(str_at(o->values), "FILE"))
		*field = absolute(i, *field);
}

static void say_ignored(void)
{
	char names[512];
	size_t n = 0;
	names[0] = 0;
	for (size_t i = 0; i < MC_ARRAY_SIZE(options); i++)
		if (mc_env_value(str_at(options[i].name)) && n < sizeof names)
			n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "",
					      str_at(options[i].name));
	if (n)
		mc_log("a setuid or setgid program: %s ignored; memcheck runs with its defaults, "
		       "and writes its text to standard error only", names);
}

/* A process the programs rule leaves out reads no other option: parsing
 * every option's default was ~6 K instructions of its start-up.
 * mc_options_init sets these two again, the same, in every other. */
void mc_options_init_verdict(void)
{
	const char *vals[MC_ARRAY_SIZE(options)] = { 0 };
	read_environment(vals, true);
	for (size_t i = 0; i < MC_ARRAY_SIZE(options); i++)
		if (read_by_verdict(i))
			init_one(i, vals[i]);
}

/* valgrind's text: up to MC_VG_DEEPER frames more than the N - 1
 * valgrind shows below its allocation function, for the blocks the
 * program's own operator new allocates (valgrind's frame 0 is that
 * operator, N - 1 of its callers below it, the functions it calls
 * before malloc never run); vgtext.c cuts each stack to valgrind's.  Out
 * of line: every process's start-up runs mc_options_init. */
static __attribute__((noinline)) void valgrind_deeper(void)
{
	if (mc_opt.stack_depth <= 0)
		return;
	int room = MC_MAX_DEPTH - mc_opt.stack_depth;
	mc_opt.valgrind_deeper = room < MC_VG_DEEPER ? room : MC_VG_DEEPER;
	mc_opt.stack_depth += mc_opt.valgrind_deeper;
}

void mc_options_init(void)
{
	const char *vals[MC_ARRAY_SIZE(options)] = { 0 };
	read_environment(vals, false);
	for (size_t i = 0; i < MC_ARRAY_SIZE(options); i++)
		init_one(i, vals[i]);
	if (mc_opt.unwinder == MC_UNWIND_FP && mc_opt.stack_depth > MC_MAX_DEPTH)
		mc_opt.stack_depth = MC_MAX_DEPTH;
	mc_opt.valgrind_deeper = 0;
	if (mc_opt.valgrind_text != MC_VGTEXT_NONE)
		valgrind_deeper();
}

void mc_options_say(void)
{
	/* MEMCHECK_LOG first: complaints about the others go where it says. */
	mc_text_open(mc_opt.log);
	for (size_t i = 0; i <= LONG_SETTINGS; i++)
		if (bad_value[i])
			say_bad(i);
	if (getauxval(AT_SECURE))
		say_ignored();
}

/* A doc string as mdoc text: one sentence per line, as mdoc wants. */
static void put_sentences(struct mc_buf *b, const char *s)
{
	for (const char *p = s; *p; p++) {
		if ((*p == '.' || *p == '?' || *p == '!') && p[1] == ' ' &&
		    p[2] >= 'A' && p[2] <= 'Z') {
			mc_buf_put(b, s, (size_t)(p + 1 - s));
			mc_buf_puts(b, "\n");
			s = p + 2;
		}
	}
	mc_buf_puts(b, s);
	mc_buf_puts(b, "\n");
}

/* The option list of memcheck(7), as mdoc, from the same table. */
void mc_options_mdoc(int fd)
{
	struct mc_buf b = { 0 };
	mc_buf_puts(&b, ".Bl -tag -width Ds\n");
	for (size_t i = 0; i < MC_ARRAY_SIZE(options); i++) {
		const struct option_def *o = &options[i];
		mc_buf_printf(&b, ".It Ev %s Ns = Ns Ar %s\n", str_at(o->name),
			      o->kind == STR ? str_at(o->values) :
			      o->kind == INT ? "N" : o->kind == SET ? "WORD[,WORD...]" :
			      str_at(o->values));
		put_sentences(&b, (const char *)&docs + o->doc);
		if (o->kind == INT)
			mc_buf_printf(&b, "Range %.*s to %s.\n",
				      (int)(strchr(str_at(o->values), ':') - str_at(o->values)),
				      str_at(o->values), strchr(str_at(o->values), ':') + 1);
		if (o->kind == SET)
			mc_buf_printf(&b, "Each WORD one of %s; or all, or none.\n", str_at(o->values));
		mc_buf_printf(&b, "Default: %s.\n", *str_at(o->def) ? str_at(o->def) : "unset");
	}
	mc_buf_puts(&b, ".El\n");
	mc_write_all(fd, b.s, b.len);
	mc_buf_free(&b);
}
