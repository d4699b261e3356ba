/*
 * fuzz_supp.c - lib/suppress.c under libFuzzer (make fuzz, make
 * fuzz-check; FUZZ_TARGETS=supp for this one alone).  Each input is
 * parsed as a suppression file; when it parses, its entries are matched
 * against stacks made of fixed frames and of the input's own lines, in
 * every leak kind.  Besides what ASan and UBSan catch, it checks the
 * contract:
 *   - a file that does not parse has one error line, "NAME:LINE: ...",
 *     NUL-terminated within the buffer, and adds nothing to the set;
 *   - the verdict does not depend on the error buffer's size;
 *   - one that parses leaves the error empty, or a note in the same form
 *     (an entry without its name line: harden43), and parsing it again into
 *     the same set doubles the count;
 *   - an entry mc_supp_format writes for any stack, names taken from the
 *     input, parses and matches that stack, in its kind only; for a
 *     stack of allocation frames alone it writes one comment line.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.supp"

static void check_error(const char *err, size_t errlen)
{
	size_t len = strnlen(err, errlen);
	if (len == errlen || len == 0)
		abort();                          /* not a string, or empty */
	if (errlen > sizeof NAME + 2) {
		if (strncmp(err, NAME ":", sizeof NAME) != 0)
			abort();                  /* names the file */
		const char *p = err + sizeof NAME;
		if (*p < '0' || *p > '9')
			abort();                  /* then the line */
	}
	if (memchr(err, '\n', len))
		abort();                          /* one line */
}

struct stack {
	struct mc_frame_info f[MC_SUPP_MAX_FRAMES + 8];
	int n;
};

static const struct mc_frame_info *frame(void *arg, int i)
{
	struct stack *st = arg;
	return i < st->n ? &st->f[i] : NULL;
}

static void add(struct stack *st, const char *fn, const char *linkage, const char *obj,
		const char *file, int line)
{
	if (st->n == (int)MC_ARRAY_SIZE(st->f))
		return;
	struct mc_frame_info *f = &st->f[st->n++];
	memset(f, 0, sizeof *f);
	snprintf(f->function, sizeof f->function, "%s", fn);
	snprintf(f->linkage, sizeof f->linkage, "%s", linkage);
	snprintf(f->object, sizeof f->object, "%s", obj);
	snprintf(f->file, sizeof f->file, "%s", file);
	f->line = line;
}

/* Frames named after the input's lines (after their first ':', as in
 * "fun:NAME"), up to 40 bytes each. */
static void from_input(struct stack *st, const char *text, size_t size)
{
	st->n = 0;
	for (const char *p = text, *end = text + size; p < end && st->n < 20;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(e - p));
		const char *s = colon ? colon + 1 : p;
		char name[41];
		size_t n = (size_t)(e - s) < 40 ? (size_t)(e - s) : 40;
		memcpy(name, s, n);
		name[n] = 0;
		if (strlen(name) == n && n) /* no NUL inside */
			add(st, name, name, "/usr/lib/libx.so.1", "x.c", st->n + 1);
		p = nl ? nl + 1 : end;
	}
}

static void roundtrip(struct stack *st, int kind)
{
	struct mc_supp_stack ss = { .frame = frame, .arg = st };
	struct mc_buf b = { 0 };
	mc_supp_format(&b, st->n ? st->f[0].function : "", kind, &ss);
	if (b.oom)
		abort();
	struct mc_supps *s = mc_supp_new();
	char err[512];
	if (!mc_supp_parse(s, b.s, b.len, "gen.supp", err, sizeof err)) {
		fprintf(stderr, "%s\n%.*s", err, (int)b.len, b.s);
		abort();                          /* memcheck wrote a bad entry */
	}
	if (b.s[0] == '#') {
		/* no entry: the stack has nothing but allocation frames */
		if (mc_supp_count(s) != 0 || memchr(b.s, '\n', b.len) != b.s + b.len - 1)
			abort();
	} else {
		if (mc_supp_count(s) != 1 || mc_supp_match(s, kind, &ss, NULL) != 0)
			abort();                  /* it does not match its stack */
		if (mc_supp_match(s, (kind + 1) & 3, &ss, NULL) != -1)
			abort();                  /* nor only its kind */
	}
	mc_supp_free(s);
	mc_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char err[512 + 8], tiny[16 + 8];
	memset(err, 'Z', sizeof err);
	memset(tiny, 'Z', sizeof tiny);
	struct mc_supps *s = mc_supp_new(), *t = mc_supp_new();
	if (!s || !t)
		abort();
	bool ok = mc_supp_parse(s, text, size, NAME, err, 512);
	bool ok2 = mc_supp_parse(t, text, size, NAME, tiny, 16);
	if (err[512] != 'Z' || tiny[16] != 'Z')
		abort();                          /* wrote past the buffer */
	if (ok != ok2)
		abort();
	if (!ok) {
		check_error(err, 512);
		check_error(tiny, 16);
		if (mc_supp_count(s) || mc_supp_others(s))
			abort();                  /* a bad file adds nothing */
	} else {
		/* a note on a file that parses (an entry without its name
		 * line, skipped as valgrind skips it): said as an error is */
		if (!err[0] != !tiny[0])
			abort();
		if (err[0]) {
			check_error(err, 512);
			check_error(tiny, 16);
		}
		size_t n = mc_supp_count(s), o = mc_supp_others(s);
		if (!mc_supp_parse(s, text, size, NAME, err, 512) || mc_supp_count(s) != 2 * n ||
		    mc_supp_others(s) != 2 * o)
			abort();
		for (size_t i = 0; i < n; i++) {
			const char *file;
			int line, name_line;
			const char *name = mc_supp_name(s, i, &file, &line, &name_line);
			if (!name || strcmp(file, NAME) != 0 || line < 1 || name_line < line)
				abort();
		}
		struct stack st = { .n = 0 };
		add(&st, "leak", "leak", "/bin/prog", "/src/leak.c", 6);
		add(&st, "operator new", "_Znwm", "/usr/lib/libstdc++.so.6", "", 0);
		add(&st, "make", "_ZN2ns4makeEv", "/bin/prog", "make.cc", 12);
		add(&st, "main", "main", "/bin/prog", "/src/main.c", 3);
		struct mc_supp_stack ss = { .frame = frame, .arg = &st };
		for (int k = 0; k < 4; k++) {
			long m = mc_supp_match(s, k, &ss, "/usr/lib/libmemcheck.so.0");
			if (m < -1 || m >= (long)mc_supp_count(s))
				abort();
		}
		from_input(&st, text, size);
		for (int k = 0; k < 4; k++)
			(void)mc_supp_match(s, k, &ss, NULL);
	}
	mc_supp_free(s);
	mc_supp_free(t);

	/* Any input makes a stack an entry is written for. */
	struct stack st;
	from_input(&st, text, size);
	roundtrip(&st, (int)(size & 3));

	/* The first line as a pattern against the second. */
	char pat[128], str[128];
	const char *nl = memchr(text, '\n', size);
	size_t k = nl ? (size_t)(nl - text) : size;
	snprintf(pat, sizeof pat, "%.*s", (int)(k < 127 ? k : 127), text);
	size_t rest = nl ? size - k - 1 : 0;
	snprintf(str, sizeof str, "%.*s", (int)(rest < 127 ? rest : 127), nl ? nl + 1 : "");
	(void)mc_supp_glob(pat, str);
	return 0;
}
