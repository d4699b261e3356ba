/*
 * fuzz_options.c - the MEMCHECK_* variables' reader under libFuzzer (make
 * fuzz, make fuzz-check; FUZZ_TARGETS=options for this one alone):
 * lib/options.c's mc_options_init and mc_options_say, which every process
 * the library is loaded into runs on an environment anyone may have set,
 * and no other target read.  The input is an environment: strings
 * separated by NUL bytes (a value may hold a newline, an escape, bytes
 * that are not UTF-8), the seeds and the dictionary naming the options.
 * Besides what ASan and UBSan catch, it checks each option against a
 * model of the rules written here from the manual (memcheck(7)), not
 * from options.c:
 *   - which string sets an option: the first MEMCHECK_NAME= of the
 *     environment, unless the first MEMCHECK_VALGRIND= (the valgrind
 *     command line's settings, entries separated by 0x1f, read whole
 *     when shorter than 64 KiB) has an entry NAME=, its last one;
 *   - its value: a boolean (1/yes/on/true, 0/no/off/false, any case), an
 *     integer in its range (a sign, digits, nothing else), one word of
 *     its list, all, none or words of the list joined by commas, a string
 *     (empty: none; a file's relative path made absolute); anything else
 *     leaves the default, and then one line on stderr names the variable
 *     and what was expected, a value longer than 96 bytes cut: a line of
 *     at most 512 bytes;
 *   - no line for a value taken.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay).
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { K_STR, K_BOOL, K_INT, K_ENUM, K_SET };

static const struct opt {
	const char *name;   /* NAME, without MEMCHECK_ */
	size_t off;
	int kind;
	const char *def, *values;
} opts[] = {
#define MC_OPT(NAME, field, kind, def, values, doc) \
	{ #NAME, offsetof(struct mc_options, field), K_##kind, def, values },
#include "options.def"
#undef MC_OPT
};
#define NOPTS (sizeof opts / sizeof opts[0])

/* The index of word (n bytes) in the '|'-separated list, or -1. */
static int word_of(const char *list, const char *word, size_t n)
{
	int i = 0;
	for (const char *p = list;; i++) {
		size_t len = strcspn(p, "|");
		if (len == n && memcmp(p, word, n) == 0)
			return i;
		if (!p[len])
			return -1;
		p += len + 1;
	}
}

/* The model's value of o for s; false: refused. */
static bool model(const struct opt *o, const char *s, int *out)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };
	switch (o->kind) {
	case K_BOOL:
		for (int i = 0; i < 4; i++) {
			if (strcasecmp(s, yes[i]) == 0)
				return *out = 1, true;
			if (strcasecmp(s, no[i]) == 0)
				return *out = 0, true;
		}
		return false;
	case K_INT: {
		long lo = strtol(o->values, NULL, 10), hi = strtol(strchr(o->values, ':') + 1, NULL, 10);
		const char *d = s + (*s == '+' || *s == '-');
		if (*d < '0' || *d > '9' || d[strspn(d, "0123456789")])
			return false;
		long v = 0;
		for (; *d; d++) {
			if (v > (LONG_MAX - (*d - '0')) / 10)
				return false;   /* past a long's range either way */
			v = v * 10 + (*d - '0');
		}
		v = *s == '-' ? -v : v;
		if (v < lo || v > hi)
			return false;
		return *out = (int)v, true;
	}
	case K_ENUM:
		return (*out = word_of(o->values, s, strlen(s))) >= 0;
	case K_SET: {
		int words = 1;
		for (const char *p = o->values; *p; p++)
			words += *p == '|';
		if (strcmp(s, "all") == 0 || strcmp(s, "none") == 0)
			return *out = s[0] == 'a' ? (1 << words) - 1 : 0, true;
		int bits = 0;
		for (const char *p = s;; p++) {
			size_t n = strcspn(p, ",");
			int i = word_of(o->values, p, n);
			if (!n || i < 0)
				return false;
			bits |= 1 << i;
			p += n;
			if (!*p)
				return *out = bits, true;
		}
	}
	}
	return false;
}

/* The option named by the entry e ("NAME=value"), its value in *val. */
static const struct opt *named(const char *e, const char **val)
{
	for (size_t i = 0; i < NOPTS; i++) {
		size_t n = strlen(opts[i].name);
		if (strncmp(e, opts[i].name, n) == 0 && e[n] == '=') {
			*val = e + n + 1;
			return &opts[i];
		}
	}
	return NULL;
}

static int err_fd = -1, saved_err = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (err_fd < 0) {
		err_fd = memfd_create("stderr", 0);
		saved_err = dup(2);
		if (err_fd < 0 || saved_err < 0)
			abort();
	}
	/* the environment: the input's strings, and an empty
	 * MEMCHECK_VALGRIND last (options.c keeps the settings it copies
	 * for the process's life: the last input's, reset) */
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	size_t n = 1;
	for (size_t i = 0; i < size; i++)
		n += text[i] == 0;
	char **env = calloc(n + 2, sizeof *env);
	size_t k = 0;
	for (size_t at = 0; at <= size; at += strlen(text + at) + 1)
		env[k++] = text + at;
	env[k++] = (char *)"MEMCHECK_VALGRIND=";
	env[k] = NULL;

	/* the model: the string each option is read from */
	const char *from[NOPTS] = { 0 };
	const char *combined = NULL;
	for (size_t i = 0; i < k; i++) {
		const char *val;
		if (strncmp(env[i], "MEMCHECK_", 9) != 0)
			continue;
		if (!combined && strncmp(env[i] + 9, "VALGRIND=", 9) == 0) {
			combined = env[i] + 18;
			continue;
		}
		const struct opt *o = named(env[i] + 9, &val);
		if (o && !from[o - opts])
			from[o - opts] = val;
	}
	char *entries = NULL;
	if (combined && strlen(combined) < MC_VALGRIND_MAX) {
		entries = strdup(combined);
		for (char *e = entries; e;) {
			char *sep = strchr(e, MC_VALGRIND_SEP);
			if (sep)
				*sep = 0;
			const char *val;
			const struct opt *o = named(e, &val);
			if (o)
				from[o - opts] = val;
			e = sep ? sep + 1 : NULL;
		}
	}

	char **saved_env = environ;
	environ = env;
	memset(&mc_opt, 0, sizeof mc_opt);
	mc_options_init();

	bool refused[NOPTS];
	size_t nrefused = 0;
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];
		const char *s = from[i];
		int want;
		refused[i] = false;
		if (o->kind == K_STR) {
			const char *got_s = *(const char **)((char *)&mc_opt + o->off);
			if (!s || !*s) {
				if (got_s)
					abort();        /* an empty or unset string taken */
				continue;
			}
			size_t a = strlen(got_s ? got_s : ""), b = strlen(s);
			if (!got_s || a < b || strcmp(got_s + a - b, s) != 0 ||
			    (a > b && got_s[a - b - 1] != '/'))
				abort();                /* not the string, nor its absolute path */
			continue;
		}
		if (!s || !model(o, s, &want)) {
			refused[i] = s != NULL;
			nrefused += refused[i];
			if (!model(o, o->def, &want))
				abort();                /* a default the model refuses */
		}
		if (o->off == offsetof(struct mc_options, stack_depth) &&
		    mc_opt.unwinder == MC_UNWIND_FP && want > MC_MAX_DEPTH)
			want = MC_MAX_DEPTH;
		int got = *(int *)((char *)&mc_opt + o->off);
		/* valgrind's text captures up to MC_VG_DEEPER frames more than
		 * the depth asked (options.c's valgrind_deeper), and only then */
		if (o->off == offsetof(struct mc_options, stack_depth)) {
			if (mc_opt.valgrind_deeper < 0 || mc_opt.valgrind_deeper > MC_VG_DEEPER ||
			    (mc_opt.valgrind_deeper && mc_opt.valgrind_text == MC_VGTEXT_NONE))
				abort();        /* deeper frames where the rules give none */
			got -= mc_opt.valgrind_deeper;
		}
		if (got != want)
			abort();                        /* not the value the rules give */
	}

	/* what is said: one line for each value refused, naming it */
	mc_opt.log = NULL;                      /* stderr, never a file */
	if (ftruncate(err_fd, 0) != 0 || lseek(err_fd, 0, SEEK_SET) != 0 || dup2(err_fd, 2) < 0)
		abort();
	mc_options_say();                       /* (it reads the values said again) */
	environ = saved_env;
	if (dup2(saved_err, 2) < 0)
		abort();
	off_t len = lseek(err_fd, 0, SEEK_END);
	char *said = malloc((size_t)len + 1);
	if (len < 0 || pread(err_fd, said, (size_t)len, 0) != len)
		abort();
	said[len] = 0;
	size_t lines = 0;
	bool told[NOPTS] = { 0 };
	for (char *l = said; *l;) {
		char *nl = strchr(l, '\n');
		if (!nl || nl - l > 1024)
			abort();                        /* a line unended or too long */
		*nl = 0;
		/* "memcheck[PID] PROG: MEMCHECK_NAME=VALUE: expected ...; using
		 * DEFAULT": the name a refused one's, said once, the line whole */
		char *at = strstr(l, ": MEMCHECK_"), *eq = at ? strchr(at, '=') : NULL;
		if (strncmp(l, "memcheck[", 9) != 0 || !eq)
			abort();
		size_t i = 0;
		while (i < NOPTS && (strlen(opts[i].name) != (size_t)(eq - at - 11) ||
				     strncmp(at + 11, opts[i].name, (size_t)(eq - at - 11)) != 0))
			i++;
		char tail[256];
		snprintf(tail, sizeof tail, "; using %s", opts[i < NOPTS ? i : 0].def);
		if (i == NOPTS || !refused[i] || told[i] || !strstr(eq, ": expected ") ||
		    strlen(l) < strlen(tail) || strcmp(l + strlen(l) - strlen(tail), tail) != 0)
			abort();                        /* a line for no refused value, or cut */
		told[i] = true;
		lines++;
		l = nl + 1;
	}
	if (lines != nrefused)
		abort();                                /* a refused value unsaid */
	free(said);
	free(entries);
	free(env);
	free(text);
	return 0;
}
