/*
 * suppress.c - valgrind-format suppression files (memcheck-suppressions(5)):
 * parsing, matching a leak record's stack, and writing an entry for one.
 *
 * The format is valgrind 3.19's own, so that one file serves both tools:
 *
 *   {
 *      name
 *      Memcheck:Leak
 *      match-leak-kinds: definite,possible
 *      fun:malloc
 *      fun:make_*
 *      ...
 *      obj:/usr/lib/x86_64-linux-gnu/libfoo.so*
 *   }
 *
 * Entries for other tools and other Memcheck kinds are parsed as
 * valgrind parses them and kept out of the set: memcheck applies leak
 * suppressions only.
 *
 * Matching reads frames with their debug information (inlined calls
 * expanded, as valgrind names them), which for a test program built
 * with -g cost most of a short process's exit: almost every entry ends
 * in '... fun:NAME', whose rejection reads the whole stack, the
 * program's frames too.  So where the library gives a quick view (one
 * frame a return address, symbol-table names), an entry is matched on
 * it first, as two automata at once (match_quick): one that proves a
 * match, one that proves there is none, reading a frame with debug
 * information as the k >= 1 frames it may become, named only by
 * strings that information holds.  Only what neither proves goes to
 * the frames; tests/unit_supp.c checks the answers are the frames'.
 * Before either, an entry meets the stack's names (anchors): most
 * entries name a function with no wildcard, and a stack with no frame of
 * that name is rejected by one hash probe, where the automaton read
 * every frame (/bin/date's exit, 25 records against 58 entries: 2.07 M
 * instructions of matching, 0.24 M with anchors).  Everything lives in mmap'd memory (an arena of
 * chunks), never malloc: the library uses this file inside the malloc
 * interposer.  The CLI, the unit test and the fuzz target use it too;
 * nothing here depends on the rest of the library but util.c's parts
 * (UTIL in GNUmakefile: buf.c, ownmap.c, sys.c...).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

enum { SF_FUN, SF_OBJ, SF_SRC, SF_DOTS };

struct supp_frame {
	const char *pat;
	const char *lit;          /* its longest plain run (literal_run), or NULL */
	int line;                 /* src: line, 0 for any */
	uint8_t litlen;           /* at most 128 (parse_frame's buffer) */
	uint8_t kind;
	bool plain;               /* no wildcard: the pattern is its literal run */
	/* Whether a virtual frame takes it (match_v), once known: 0 not
	 * asked, else V_NO or V_YES; for obj:, the part that does not
	 * depend on self (valgrind's objects).  /bin/date's exit asked 21
	 * globs of it for each record an entry was tried on: 36 K of its
	 * 198 K instructions of matching. */
	uint8_t vknown;
};
enum { V_NO = 1, V_YES };

static size_t literal_run(const char *pat, char *buf, size_t cap);
static bool alloc_fn_n(const char *name, size_t n);
static bool match_v_fixed(const struct supp_frame *p);

/* An entry's anchors: its fun: lines without wildcards that no virtual
 * frame takes (no allocation function's name).  Every stack it matches
 * has a frame of each name (match_one's names: the symbol's, the
 * function's, a clone's base), so a stack none of whose frames bears
 * the name is rejected by one probe of its name set (names_of). */
#define ANCHORS 4

struct mc_supp {
	const char *name, *file;
	int line;                 /* of its '{' */
	uint8_t kinds;            /* 1 << enum mc_kind */
	uint8_t nanchors;
	uint8_t freeres;          /* its "# freeres:" marks (mc_supp_freeres) */
	uint8_t name_after;       /* its name's line after the '{' one (valgrind's
				   * used_suppression names that line), at most 255 */
	uint32_t dots;            /* bit p: frame p is '...' (the automaton's) */
	uint8_t anchor[ANCHORS];  /* indexes into frames */
	uint32_t anchor_hash[ANCHORS];
	int nframes;
	/* In the arena, nframes of them: with the room for valgrind's 24
	 * in each entry, an entry was 816 bytes, the shipped files' 32
	 * entries 13 pages populated and written at every exit that read
	 * them, where they now take 1 and a part of the arena's first. */
	struct supp_frame *frames;
};

struct chunk {
	struct chunk *next;
	size_t size, used;
};

struct mc_supps {
	struct mc_supp *v;        /* mmap'd, grown by copying */
	size_t n, cap;
	size_t other;             /* entries parsed and not applied */
	size_t pools;             /* libmemcheck:Pool entries, among the n */
	struct chunk *chunks;
	/* Taken from an image (mc_supp_image_take): v and every string in
	 * it, unmapped (mc_unmap_io) with the set */
	void *image;
	size_t image_len;
	bool own_image;           /* false: the caller's (a fuzz target's) */
	int lines;                /* mc_supp_read_lines */
	unsigned drop_freeres;    /* mc_supp_drop_freeres */
};

/* ---- memory ---------------------------------------------------------- */

static bool in_image(const struct mc_supps *s, const void *p)
{
	return s->image && (const char *)p >= (const char *)s->image &&
	       (const char *)p < (const char *)s->image + s->image_len;
}

static void *arena(struct mc_supps *s, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct chunk *c = s->chunks;
	if (!c || c->size - c->used < n) {
		/* The first chunk 16 KiB: the shipped files' strings take
		 * under 8 KiB of it, where a first chunk of 64 KiB populated
		 * 12 pages no file wrote, at every exit that read them. */
		size_t size = c ? 64 * 1024 : 16 * 1024;
		while (size - sizeof *c < n)
			size *= 2;
		c = mc_map(size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = (sizeof *c + 15) & ~(size_t)15;
		c->next = s->chunks;
		s->chunks = c;
	}
	void *p = (char *)c + c->used;
	c->used += n;
	return p;
}

static const char *arena_str(struct mc_supps *s, const char *p, size_t n)
{
	char *d = arena(s, n + 1);
	if (d) {
		memcpy(d, p, n);
		d[n] = 0;
	}
	return d;
}

struct mc_supps *mc_supp_new(void)
{
	return mc_map(sizeof(struct mc_supps));
}

void mc_supp_free(struct mc_supps *s)
{
	if (!s)
		return;
	for (struct chunk *c = s->chunks, *next; c; c = next) {
		next = c->next;
		mc_unmap(c, c->size);
	}
	if (s->v && !in_image(s, s->v))
		mc_unmap(s->v, s->cap * sizeof *s->v);
	if (s->image && s->own_image)
		mc_unmap_io(s->image, s->image_len);
	mc_unmap(s, sizeof *s);
}

size_t mc_supp_count(const struct mc_supps *s)
{
	return s ? s->n : 0;
}

size_t mc_supp_pools(const struct mc_supps *s)
{
	return s ? s->pools : 0;
}

size_t mc_supp_others(const struct mc_supps *s)
{
	return s ? s->other : 0;
}

unsigned mc_supp_freeres(const struct mc_supps *s, size_t i)
{
	return s->v[i].freeres;
}

const char *mc_supp_name(const struct mc_supps *s, size_t i, const char **file, int *line,
			 int *name_line)
{
	if (file)
		*file = s->v[i].file;
	if (line)
		*line = s->v[i].line;
	if (name_line)
		*name_line = s->v[i].line + s->v[i].name_after;
	return s->v[i].name;
}

static struct mc_supp *push(struct mc_supps *s)
{
	if (s->n == s->cap) {
		/* 64 first: the shipped files' 58 entries in one array, not
		 * in three (16, 32, 64: three mmap calls and two copies) */
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct mc_supp *v = mc_map(cap * sizeof *v);
		if (!v)
			return NULL;
		if (s->v) {
			memcpy(v, s->v, s->n * sizeof *v);
			if (!in_image(s, s->v))
				mc_unmap(s->v, s->cap * sizeof *v);
		}
		s->v = v;
		s->cap = cap;
	}
	struct mc_supp *e = &s->v[s->n];
	memset(e, 0, sizeof *e);
	return e;
}

/* ---- parsing --------------------------------------------------------- */

struct reader {
	const char *p, *end;
	const char *nul;          /* the text's first NUL byte, or NULL */
	const char *name;         /* the file, in messages */
	int lineno;               /* of the line last returned */
	char *err;
	size_t errlen;
	bool failed;
	bool noted;               /* err holds a note (the file still parses) */
	unsigned freeres;         /* the entry's "# freeres:" and "# valgrind:" marks
				   * (comment_mark) */
};

static void fail(struct reader *r, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "name:line: " and the message, into err. */
static void put_err(struct reader *r, int line, const char *fmt, va_list ap)
{
	int n = snprintf(r->err, r->errlen, "%s:%d: ", r->name, line);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
}

static void fail(struct reader *r, int line, const char *fmt, ...)
{
	if (r->failed)
		return;
	r->failed = true;
	if (!r->errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	put_err(r, line, fmt, ap);
	va_end(ap);
}

/* A note on a file that parses: the first one kept in err, where a
 * failure's message would go (mc_supp_parse's callers say it when the
 * parse succeeds: err not empty). */
static void note(struct reader *r, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static __attribute__((noinline, cold)) void note(struct reader *r, int line, const char *fmt, ...)
{
	if (r->failed || r->noted || !r->errlen)
		return;
	r->noted = true;
	va_list ap;
	va_start(ap, fmt);
	put_err(r, line, fmt, ap);
	va_end(ap);
}

static bool space(char c)
{
	/* ' ', '\t', '\v', '\f', '\r' */
	return c == ' ' || ((unsigned char)(c - '\t') <= '\r' - '\t' && c != '\n');
}

/* A comment inside an entry that says what it stands for: blocks a
 * freeres function frees at exit, "# freeres: libc" (__libc_freeres),
 * "# freeres: cxx" (libstdc++'s __gnu_cxx::__freeres) or both joined
 * by a comma; or blocks valgrind itself reports, which only memcheck's
 * own reports take out, "# valgrind: lists" (a running thread's DTV)
 * (memcheck-suppressions(5)).  valgrind skips every comment line,
 * inside an entry too, so the file stays its.  The bits (MC_FREERES_*,
 * MC_SUPP_VALGRIND_LISTS) of a comment of that form, 0 for any other. */
static __attribute__((noinline)) unsigned comment_mark(const char *s, const char *e)
{
	static const char word[] = "freeres:", lists[] = "valgrind:";
	s++;
	while (s < e && space(*s))
		s++;
	if ((size_t)(e - s) >= sizeof lists - 1 && memcmp(s, lists, sizeof lists - 1) == 0) {
		s += sizeof lists - 1;
		while (s < e && space(*s))
			s++;
		return e - s == 5 && memcmp(s, "lists", 5) == 0 ? MC_SUPP_VALGRIND_LISTS : 0;
	}
	if ((size_t)(e - s) < sizeof word - 1 || memcmp(s, word, sizeof word - 1) != 0)
		return 0;
	s += sizeof word - 1;
	unsigned bits = 0;
	for (;;) {
		while (s < e && space(*s))
			s++;
		const char *w = s;
		while (s < e && *s != ',' && !space(*s))
			s++;
		if (s - w == 4 && memcmp(w, "libc", 4) == 0)
			bits |= MC_FREERES_LIBC;
		else if (s - w == 3 && memcmp(w, "cxx", 3) == 0)
			bits |= MC_FREERES_CXX;
		else
			return 0;
		while (s < e && space(*s))
			s++;
		if (s == e)
			return bits;
		if (*s++ != ',')
			return 0;
	}
}

/* The next line that is neither blank nor a comment, without the
 * whitespace around it; false at the end of the text.  The leading
 * whitespace is skipped before the line's end is looked for: a blank
 * line then ends where it starts, without a call of memchr.  The reader
 * in locals: through r, every step reloaded it after each call. */
static inline __attribute__((always_inline)) bool next_line(struct reader *r, const char **line,
							    size_t *len)
{
	if (r->failed)
		return false;
	const char *p = r->p, *end = r->end;
	int lineno = r->lineno;
	bool found = false;
	while (p < end) {
		const char *s = p;
		while (s < end && space(*s))
			s++;
		lineno++;
		if (s < end && *s == '\n') {
			p = s + 1;
			continue;
		}
		const char *nl = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
		const char *e = nl ? nl : end;
		p = nl ? nl + 1 : end;
		if (r->nul && r->nul < e) {  /* on this line: the lines before have none */
			r->lineno = lineno;
			fail(r, lineno, "a NUL byte: expected a text file");
			break;
		}
		if (s == e)
			continue;
		if (*s == '#') {
			r->freeres |= comment_mark(s, e);
			continue;
		}
		while (e > s && space(e[-1]))
			e--;
		*line = s;
		*len = (size_t)(e - s);
		found = true;
		break;
	}
	r->p = p;
	r->lineno = lineno;
	return found;
}

/* The first byte before strlen: the library is built with -fno-builtin,
 * so no word's length is known at compile time, and most words tried
 * (the 21 kinds for each entry's, '}' for each frame line) differ there. */
static bool is(const char *line, size_t len, const char *word)
{
	return len && line[0] == word[0] && len == strlen(word) && memcmp(line, word, len) == 0;
}

/* is() for a literal word, its length known here: no strlen, and no
 * memcmp for a one-byte word ('{', '}', each line of the files asks). */
static inline bool is_n(const char *line, size_t len, const char *word, size_t wlen)
{
	return len == wlen && line[0] == word[0] &&
	       (wlen == 1 || memcmp(line + 1, word + 1, wlen - 1) == 0);
}
#define IS(line, len, lit) is_n(line, len, lit, sizeof(lit) - 1)

/* At most 60 bytes of what was found, for messages. */
#define FOUND(line, len) (int)((len) > 60 ? 60 : (len)), (line)

/* Memcheck's error kinds (valgrind 3.19, mc_errors.c). */
static const char *const memcheck_kinds[] = {
	"Value0", "Value1", "Value2", "Value4", "Value8", "Value16", "Value32",
	"Cond", "Addr1", "Addr2", "Addr4", "Addr8", "Addr16", "Addr32",
	"Jump", "Param", "Free", "Overlap", "Leak", "User", "FishyValue",
};

static bool leak_kinds(struct reader *r, const char *s, size_t len, uint8_t *out)
{
	static const char *const words[] = { "definite", "indirect", "possible", "reachable" };
	static const uint8_t lens[] = { 8, 8, 8, 9 };
	*out = 0;
	while (len && space(*s))
		s++, len--;
	if (IS(s, len, "all")) {
		*out = 0xf;
		return true;
	}
	if (IS(s, len, "none"))
		return true;
	const char *end = s + len;
	for (;;) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *w = s, *we = comma ? comma : end;
		while (w < we && space(*w))
			w++;
		while (we > w && space(we[-1]))
			we--;
		size_t k = 0;
		while (k < MC_ARRAY_SIZE(words) && !is_n(w, (size_t)(we - w), words[k], lens[k]))
			k++;
		if (k == MC_ARRAY_SIZE(words)) {
			fail(r, r->lineno, "match-leak-kinds: unknown kind '%.*s': expected a "
			     "comma-separated list of definite, indirect, possible, reachable, "
			     "or all, or none", FOUND(w, (size_t)(we - w)));
			return false;
		}
		*out |= (uint8_t)(1u << k);
		if (!comma)
			return true;
		s = comma + 1;
	}
}

/* keep: false for an entry memcheck does not apply (another kind than
 * Leak), whose frame lines are checked as valgrind checks them and not
 * stored: the shipped files' 26 such entries took a copy and a literal
 * run of every pattern (a measured /bin/date's exit, every exit that
 * reads the files). */
static bool parse_frame(struct reader *r, struct mc_supps *s, struct supp_frame *f,
			const char *line, size_t len, bool keep)
{
	f->line = 0;
	f->plain = false;
	f->vknown = 0;
	if (IS(line, len, "...")) {
		f->kind = SF_DOTS;
		f->pat = "";
		return true;
	}
	/* the prefixes byte by byte: memcmp is a call here (-fno-builtin) */
	bool tag = len > 4 && line[3] == ':';
	if (tag && line[0] == 'f' && line[1] == 'u' && line[2] == 'n')
		f->kind = SF_FUN;
	else if (tag && line[0] == 'o' && line[1] == 'b' && line[2] == 'j')
		f->kind = SF_OBJ;
	else if (tag && line[0] == 's' && line[1] == 'r' && line[2] == 'c')
		f->kind = SF_SRC;
	else {
		fail(r, r->lineno, "expected a frame line (fun:PATTERN, obj:PATTERN, "
		     "src:FILE[:LINE] or ...) or '}', found '%.*s'", FOUND(line, len));
		return false;
	}
	line += 4;
	len -= 4;
	f->pat = "";
	f->lit = NULL;
	f->litlen = 0;
	if (f->kind == SF_SRC) {
		/* src:file.c:123 - a line number after the last colon */
		const char *colon = memrchr(line, ':', len);
		if (colon && colon + 1 < line + len) {
			const char *d = colon + 1;
			long v = 0;
			while (d < line + len && *d >= '0' && *d <= '9' && v < 100000000)
				v = v * 10 + (*d++ - '0');
			if (d == line + len) {
				if (v == 0 || colon == line) {
					fail(r, r->lineno, "src:%.*s: expected src:FILE or "
					     "src:FILE:LINE with a line number from 1",
					     FOUND(line, len));
					return false;
				}
				f->line = (int)v;
				len = (size_t)(colon - line);
			}
		}
	}
	if (!keep)
		return true;
	f->pat = arena_str(s, line, len);
	char lit[128];
	_Static_assert(sizeof lit <= UINT8_MAX, "a literal run's length fits litlen");
	/* Most patterns have no wildcard: their literal run is their start
	 * (the whole of one of up to 128 bytes), read where the pattern is,
	 * not copied (/bin/date's exit: 12 K instructions of literal_run
	 * and 4 K of copies for the shipped files). */
	f->plain = f->pat && !strpbrk(f->pat, "*?\\");
	size_t n = 0;
	if (f->plain) {
		n = len < sizeof lit ? len : sizeof lit;
		/* a versioned name's run is the name before the '@', which
		 * both names it matches hold (match_versioned_plain) */
		const char *at = f->kind == SF_FUN ? memchr(f->pat, '@', n) : NULL;
		if (at && at > f->pat)
			n = (size_t)(at - f->pat);
		f->lit = f->pat;
		f->litlen = (uint8_t)n;
	} else if (f->pat && (n = literal_run(f->pat, lit, sizeof lit))) {
		f->lit = arena_str(s, lit, n);
		f->litlen = (uint8_t)n;
	}
	if (!f->pat || (n && !f->lit)) {
		fail(r, r->lineno, "out of memory");
		return false;
	}
	return true;
}

/* Skip to the closing '}' of an entry memcheck does not apply. */
static bool skip_entry(struct reader *r, int open)
{
	const char *line;
	size_t len;
	while (next_line(r, &line, &len))
		if (IS(line, len, "}"))
			return true;
	fail(r, r->lineno, "expected '}' to close the suppression begun at line %d, found "
	     "the end of the file", open);
	return false;
}

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;  /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h ? h : 1;          /* 0: a free slot of a name set */
}

static void set_anchors(struct mc_supp *e)
{
	for (int p = 0; p < e->nframes && e->nanchors < ANCHORS; p++) {
		const struct supp_frame *f = &e->frames[p];
		/* a versioned name matches two names (match_versioned_plain):
		 * no one name's hash to look for */
		if (f->kind != SF_FUN || !f->plain || strchr(f->pat, '@'))
			continue;
		size_t n = strlen(f->pat);
		if (alloc_fn_n(f->pat, n))
			continue;
		e->anchor[e->nanchors] = (uint8_t)p;
		e->anchor_hash[e->nanchors++] = name_hash(f->pat, n);
	}
}

/* One entry from '{' to '}'; false on error (said). */
static bool parse_entry(struct reader *r, struct mc_supps *s, const char *file)
{
	const char *line;
	size_t len;
	int open = r->lineno;
	r->freeres = 0;
	if (!next_line(r, &line, &len)) {
		fail(r, r->lineno, "expected the suppression's name after '{' at line %d, "
		     "found the end of the file", open);
		return false;
	}
	if (IS(line, len, "}") || IS(line, len, "{")) {
		fail(r, r->lineno, "expected the suppression's name after '{' at line %d, "
		     "found '%.*s'", open, FOUND(line, len));
		return false;
	}
	const char *name = line;
	size_t name_len = len;
	int name_line = r->lineno;
	if (!next_line(r, &line, &len)) {
		fail(r, r->lineno, "expected 'Tool:Kind' (such as Memcheck:Leak) after the "
		     "name, found the end of the file");
		return false;
	}
	const char *colon = memchr(line, ':', len);
	if (!colon || colon == line || colon + 1 == line + len || IS(line, len, "}")) {
		fail(r, r->lineno, "expected 'Tool:Kind' (such as Memcheck:Leak) after the "
		     "name, found '%.*s'", FOUND(line, len));
		return false;
	}
	bool memcheck = false, own = false;
	for (const char *t = line; t < colon;) {
		const char *comma = memchr(t, ',', (size_t)(colon - t));
		const char *te = comma ? comma : colon;
		if (te == t) {
			fail(r, r->lineno, "expected tool names separated by commas before "
			     "':', found '%.*s'", FOUND(line, len));
			return false;
		}
		memcheck |= IS(t, (size_t)(te - t), "Memcheck");
		own |= IS(t, (size_t)(te - t), "libmemcheck");
		t = comma ? comma + 1 : colon;
	}
	if (!memcheck && !own) {
		/* No tool is named fun, obj or src: the entry's name line is
		 * missing, its Tool:Kind line taken for the name.  valgrind
		 * 3.19 skips such an entry without a word, as another tool's;
		 * memcheck skips it too (the same verdict), and says so. */
		size_t tl = (size_t)(colon - line);
		if (IS(line, tl, "fun") || IS(line, tl, "obj") || IS(line, tl, "src") ||
		    IS(line, tl, "match-leak-kinds"))
			note(r, open + 1, "the suppression begun at line %d has no name line: "
			     "'%.*s' is read as its name and '%.*s' as its Tool:Kind, so valgrind "
			     "and memcheck skip it as another tool's (add a name line after '{')",
			     open, FOUND(name, name_len), FOUND(line, len));
		s->other++;
		return skip_entry(r, open);
	}
	const char *kind = colon + 1;
	size_t klen = (size_t)(line + len - kind);
	/* libmemcheck's own kinds: valgrind skips a tool it is not (its
	 * tool names compare case and all), so one file still serves both;
	 * beside Memcheck it would stop at the unknown kind. */
	bool pool = own && IS(kind, klen, "Pool");
	if (own && (memcheck || !pool)) {
		fail(r, r->lineno, memcheck ? "expected 'libmemcheck:Pool' alone, without "
		     "Memcheck (valgrind stops at a Memcheck kind it does not know), found "
		     "'%.*s'" : "unknown libmemcheck kind in '%.*s': expected libmemcheck:Pool",
		     FOUND(line, len));
		return false;
	}
	/* Leak first: the kinds before it in the table are 18 compares */
	bool leak = IS(kind, klen, "Leak");
	size_t k = 0;
	while (!leak && !pool && k < MC_ARRAY_SIZE(memcheck_kinds) &&
	       !is(kind, klen, memcheck_kinds[k]))
		k++;
	if (k == MC_ARRAY_SIZE(memcheck_kinds)) {
		fail(r, r->lineno, "unknown Memcheck suppression kind '%.*s': expected Leak, "
		     "Cond, Value1..Value32, Addr1..Addr32, Param, Free, Jump, Overlap, User "
		     "or FishyValue", FOUND(kind, klen));
		return false;
	}
	if (IS(kind, klen, "Param") || IS(kind, klen, "FishyValue")) {
		/* one line more: the system call's parameter, the function */
		if (!next_line(r, &line, &len) || IS(line, len, "}")) {
			fail(r, r->lineno, "expected the line Memcheck:%.*s takes (the parameter) "
			     "before the frames", FOUND(kind, klen));
			return false;
		}
	}
	struct mc_supp e;
	struct supp_frame frames[MC_SUPP_MAX_FRAMES];
	memset(&e, 0, sizeof e);
	e.frames = frames;
	e.kinds = pool ? 1u << MC_SUPP_POOL : 0xf;
	e.line = open;
	e.name_after = (uint8_t)(name_line - open > 255 ? 255 : name_line - open);
	bool have = next_line(r, &line, &len);
	if (have && leak && len >= 17 && memcmp(line, "match-leak-kinds:", 17) == 0) {
		if (!leak_kinds(r, line + 17, len - 17, &e.kinds))
			return false;
		have = next_line(r, &line, &len);
	}
	for (; have; have = next_line(r, &line, &len)) {
		if (IS(line, len, "}"))
			break;
		/* valgrind's loader skips them unread: past --num-callers,
		 * and (valgrind 3.19 taking 25, 100 and 10,000 frame lines
		 * alike, harden42) past the MC_SUPP_MAX_FRAMES memcheck keeps,
		 * which refused the file before */
		if ((s->lines > 0 && e.nframes >= s->lines) || e.nframes == MC_SUPP_MAX_FRAMES)
			continue;
		if (!parse_frame(r, s, &e.frames[e.nframes], line, len, leak || pool))
			return false;
		e.nframes++;
	}
	if (r->failed)
		return false;
	if (!have) {
		fail(r, r->lineno, "expected '}' to close the suppression begun at line %d, "
		     "found the end of the file", open);
		return false;
	}
	if (!e.nframes) {
		fail(r, r->lineno, "expected at least one frame line (fun:, obj:, src: or ...) "
		     "before '}'");
		return false;
	}
	int plain = 0;
	for (int p = 0; p < e.nframes; p++)
		plain += frames[p].kind != SF_DOTS;
	if (!plain) {
		/* valgrind's loader refuses it ("suppression must contain
		 * at least one location line which is not ..."); memcheck
		 * took it before harden42, an entry that suppressed every
		 * leak of its kinds without a word */
		if (s->lines > 0)
			fail(r, open, "expected a frame line other than '...' among the first %d "
			     "of the suppression (valgrind's --num-callers reads no more)",
			     e.nframes);
		else
			fail(r, open, "expected a frame line other than '...' in the suppression: "
			     "'...' alone would match every stack (valgrind refuses it too)");
		return false;
	}
	/* what a freeres function frees, where it runs before the blocks
	 * are judged or where, as under valgrind with --run-libc-freeres=no,
	 * those blocks are in use at exit and not to be taken; what
	 * valgrind itself lists, under valgrind's command line */
	if ((!leak && !pool) || (r->freeres & s->drop_freeres)) {
		s->other++;
		return true;
	}
	s->pools += pool;
	e.freeres = (uint8_t)(r->freeres & (MC_FREERES_CXX | MC_FREERES_LIBC));
	set_anchors(&e);
	for (int p = 0; p < e.nframes; p++)
		e.dots |= (uint32_t)(frames[p].kind == SF_DOTS) << p;
	e.name = arena_str(s, name, name_len);
	e.file = file;
	e.frames = e.name ? arena(s, (size_t)e.nframes * sizeof *e.frames) : NULL;
	if (e.frames)
		memcpy(e.frames, frames, (size_t)e.nframes * sizeof *e.frames);
	struct mc_supp *slot = e.frames ? push(s) : NULL;
	if (!slot) {
		fail(r, r->lineno, "out of memory");
		return false;
	}
	*slot = e;
	s->n++;
	return true;
}

void mc_supp_read_lines(struct mc_supps *s, int lines)
{
	s->lines = lines;
}

void mc_supp_drop_freeres(struct mc_supps *s, unsigned bits)
{
	s->drop_freeres = bits;
}

bool mc_supp_parse(struct mc_supps *s, const char *text, size_t len, const char *name,
		   char *err, size_t errlen)
{
	/* The first NUL found once, not looked for on every line (688 calls
	 * of memchr for the shipped files) */
	struct reader r = { .p = text, .end = text + len, .nul = len ? memchr(text, 0, len) : NULL,
			    .name = name, .err = err, .errlen = errlen };
	if (errlen)
		err[0] = 0;
	/* A file that does not parse adds nothing. */
	size_t n0 = s->n, other0 = s->other, pools0 = s->pools;
	const char *file = arena_str(s, name, strlen(name));
	if (!file)
		fail(&r, 0, "out of memory");
	const char *line;
	size_t llen;
	while (!r.failed && next_line(&r, &line, &llen)) {
		if (!IS(line, llen, "{")) {
			/* an editor's UTF-8 byte order mark, invisible in the
			 * quoted line: named (valgrind refuses the file too) */
			if (r.lineno == 1 && llen >= 3 && !memcmp(line, "\xef\xbb\xbf", 3))
				fail(&r, 1, "expected '{' to begin a suppression, found a UTF-8 "
				     "byte order mark (EF BB BF) before '%.*s': save the file "
				     "without it (valgrind refuses it too)", FOUND(line + 3, llen - 3));
			else
				fail(&r, r.lineno, "expected '{' to begin a suppression, found '%.*s'",
				     FOUND(line, llen));
			break;
		}
		if (!parse_entry(&r, s, file))
			break;
	}
	if (r.failed) {
		s->n = n0;
		s->other = other0;
		s->pools = pools0;
		return false;
	}
	return true;
}

/* The file read into *io, which grows (mapped again) only for a file
 * larger than it: the shipped directory's eight files through one
 * buffer, cleared once, where a buffer a file cleared its kept pages
 * eight times (mc_map_io: 74 K instructions of /bin/date's exit). */
/* io->buf at least cap bytes long, what it holds kept; false: no memory. */
static bool io_reserve(struct mc_supp_io *io, size_t cap)
{
	if (cap <= io->cap)
		return true;
	/* two pages at least: every shipped file fits (glibc.supp, 7.3 KiB) */
	cap = cap < 8192 ? 8192 : cap;
	char *buf = mc_map_io(cap);
	if (!buf)
		return false;
	if (io->buf) {
		memcpy(buf, io->buf, io->cap);
		mc_unmap_io(io->buf, io->cap);
	}
	io->buf = buf;
	io->cap = cap;
	return true;
}

#define SUPP_FILE_MAX (16 * 1024 * 1024)

/* A file the caller knows is a regular one (a directory's DT_REG entry)
 * read without fstat: a read of a regular file is short only at its end,
 * so one read to the buffer's end takes a shipped file whole (an fstat
 * less a file: 8 system calls of the 36 that read the shipped
 * directory). */
static size_t read_regular(int fd, struct mc_supp_io *io, bool *big, bool *oom)
{
	size_t got = 0;
	for (;;) {
		if (got + 1 >= io->cap && !io_reserve(io, io->cap ? 2 * io->cap : 8192)) {
			*oom = true;
			return got;
		}
		size_t ask = io->cap - 1 - got;
		ssize_t n = read(fd, io->buf + got, ask);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		got += (size_t)n;
		if (got > SUPP_FILE_MAX) {
			*big = true;
			return got;
		}
		if ((size_t)n < ask)
			return got;
	}
}

bool mc_supp_load_io(struct mc_supps *s, const char *path, struct mc_supp_io *io,
		     char *err, size_t errlen)
{
	/* the user's name of a copy, in messages and entries */
	const char *name = io->name ? io->name : path;
	/* O_NONBLOCK: a FIFO is refused below, not waited for */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || (!io->regular && fstat(fd, &st) != 0)) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	size_t got = 0;
	bool big = false, oom = false;
	if (io->regular) {
		got = read_regular(fd, io, &big, &oom);
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", name);
		close(fd);
		return false;
	} else if (st.st_size > SUPP_FILE_MAX) {
		big = true;
	} else if (!io_reserve(io, (size_t)st.st_size + 1)) {
		oom = true;
	} else {
		size_t size = (size_t)st.st_size;
		while (got < size) {
			ssize_t n = read(fd, io->buf + got, size - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
	}
	close(fd);
	if (big) {
		snprintf(err, errlen, "%s: larger than 16 MiB: not a suppression file?", name);
		return false;
	}
	if (oom) {
		snprintf(err, errlen, "%s: out of memory", name);
		return false;
	}
	return mc_supp_parse(s, io->buf, got, name, err, errlen);
}

void mc_supp_io_free(struct mc_supp_io *io)
{
	if (io->buf)
		mc_unmap_io(io->buf, io->cap);
	io->buf = NULL;
	io->cap = 0;
}

bool mc_supp_load(struct mc_supps *s, const char *path, char *err, size_t errlen)
{
	struct mc_supp_io io = { 0 };
	bool ok = mc_supp_load_io(s, path, &io, err, errlen);
	mc_supp_io_free(&io);
	return ok;
}

/* ---- the parsed set as an image (suppcache.c) ------------------------- */

/* The set written as it lies in memory, every pointer an offset from the
 * image's start, so that a later process takes it with a check of each
 * offset instead of a parse (memcheck-cache(5)): a header, the entries,
 * their frames, then the strings, the last byte a NUL.  The layout is
 * this build's own (the cache's directory is named by memcheck's build
 * ID); the header's sizes check it all the same. */
#define IMG_MAGIC 0x49534d4dU        /* "MMSI" */
#define IMG_VERSION 3 /* 2 (never on main): versioned names cut; 3: an entry's freeres marks */
#define IMG_NONE UINT64_MAX          /* a NULL lit */

struct img_hdr {
	uint32_t magic, version, esize, fsize;
	uint64_t n, other, nframes, strings, len;
};

/* p, and at least its first min bytes (a frame's literal run, which the
 * matcher reads by its length: a parsed one is never longer than its
 * string, a taken one may be), then a NUL */
static size_t img_str(struct mc_buf *str, const char *p, size_t min)
{
	size_t at = str->len, n = strlen(p);
	mc_buf_put(str, p, n > min ? n : min);
	mc_buf_put(str, "", 1);
	return at;
}

bool mc_supp_image_put(const struct mc_supps *s, struct mc_buf *b, size_t max)
{
	size_t nf = 0;
	for (size_t i = 0; i < s->n; i++)
		nf += (size_t)s->v[i].nframes;
	size_t eoff = sizeof(struct img_hdr);
	size_t foff = eoff + s->n * sizeof(struct mc_supp);
	size_t soff = foff + nf * sizeof(struct supp_frame);
	/* a set the cache cannot keep, not built to be dropped: 200,000
	 * entries' image, 16% of a run's instructions, at every run */
	if (soff > max)
		return false;
	struct mc_buf str = { 0 };
	struct mc_buf ent = { 0 }, fr = { 0 };
	const char *last_file = NULL;
	size_t last_at = 0, k = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct mc_supp e = s->v[i];
		if (e.file != last_file) {        /* one string a file */
			last_file = e.file;
			last_at = img_str(&str, e.file, 0);
		}
		e.file = (const char *)(uintptr_t)(soff + last_at);
		e.name = (const char *)(uintptr_t)(soff + img_str(&str, e.name, 0));
		for (int p = 0; p < e.nframes; p++) {
			struct supp_frame f = s->v[i].frames[p];
			if (f.kind == SF_DOTS)      /* parse_frame left them unset */
				f.litlen = 0;
			size_t pat = soff + img_str(&str, f.pat, f.lit == f.pat ? f.litlen : 0);
			f.lit = f.kind == SF_DOTS || !f.lit ? (const char *)(uintptr_t)IMG_NONE :
				f.lit == f.pat ? (const char *)(uintptr_t)pat :
				(const char *)(uintptr_t)(soff + img_str(&str, f.lit, f.litlen));
			f.pat = (const char *)(uintptr_t)pat;
			/* match_v's fixed part, a function of the pattern and
			 * this build's tables (the cache's directory is this
			 * build's): asked here, not again in each process
			 * that takes the image (/bin/date's exit: ~6 K) */
			f.vknown = f.kind == SF_FUN || f.kind == SF_OBJ ?
				   (match_v_fixed(&s->v[i].frames[p]) ? V_YES : V_NO) : 0;
			mc_buf_put(&fr, (const char *)&f, sizeof f);
		}
		e.frames = (struct supp_frame *)(uintptr_t)(foff + k * sizeof(struct supp_frame));
		k += (size_t)e.nframes;
		mc_buf_put(&ent, (const char *)&e, sizeof e);
	}
	mc_buf_put(&str, "", 1);
	/* padded to 16: the cache's next image, or its end */
	while (str.len % 16)
		mc_buf_put(&str, "", 1);
	struct img_hdr h = { IMG_MAGIC, IMG_VERSION, sizeof(struct mc_supp),
			     sizeof(struct supp_frame), s->n, s->other, nf, soff,
			     soff + str.len };
	bool ok = !str.oom && !ent.oom && !fr.oom;
	if (ok) {
		mc_buf_put(b, (const char *)&h, sizeof h);
		mc_buf_put(b, ent.s, ent.len);
		mc_buf_put(b, fr.s, fr.len);
		mc_buf_put(b, str.s, str.len);
	}
	mc_buf_free(&str);
	mc_buf_free(&ent);
	mc_buf_free(&fr);
	return ok && !b->oom;
}

/* off a string of the image's: inside the strings, ended before their
 * end (the last byte is a NUL) */
static bool img_in(uint64_t off, const struct img_hdr *h)
{
	return off >= h->strings && off < h->len;
}

struct mc_supps *mc_supp_image_take(char *img, size_t len, void *map, size_t maplen)
{
	struct img_hdr h;
	if (len < sizeof h || ((uintptr_t)img & 15))
		return NULL;
	memcpy(&h, img, sizeof h);
	if (h.magic != IMG_MAGIC || h.version != IMG_VERSION ||
	    h.esize != sizeof(struct mc_supp) || h.fsize != sizeof(struct supp_frame) ||
	    h.len != len || h.n > len / sizeof(struct mc_supp) ||
	    h.nframes > len / sizeof(struct supp_frame))
		return NULL;
	size_t eoff = sizeof h, foff = eoff + h.n * sizeof(struct mc_supp);
	size_t send = foff + h.nframes * sizeof(struct supp_frame);
	if (h.strings != send || h.strings >= len || img[len - 1] != 0)
		return NULL;
	struct mc_supp *v = (struct mc_supp *)(img + eoff);
	struct supp_frame *fr = (struct supp_frame *)(img + foff);
	uint64_t k = 0;
	for (size_t i = 0; i < h.n; i++) {
		struct mc_supp *e = &v[i];
		uint64_t name = (uintptr_t)e->name, file = (uintptr_t)e->file;
		uint64_t frames = (uintptr_t)e->frames;
		/* the frames follow each other, entry after entry */
		if (!img_in(name, &h) || !img_in(file, &h) || e->nframes < 1 ||
		    e->nframes > MC_SUPP_MAX_FRAMES || frames != foff + k * sizeof *fr ||
		    h.nframes - k < (uint64_t)e->nframes || e->nanchors > ANCHORS)
			return NULL;
		e->name = img + name;
		e->file = img + file;
		e->frames = fr + k;
		k += (uint64_t)e->nframes;
		uint32_t dots = 0;
		for (int a = 0; a < e->nanchors; a++)
			if (e->anchor[a] >= e->nframes)
				return NULL;
		for (int p = 0; p < e->nframes; p++) {
			struct supp_frame *f = &e->frames[p];
			uint64_t pat = (uintptr_t)f->pat, lit = (uintptr_t)f->lit;
			/* plain read as a byte: any other value than 0 or 1 in a
			 * bool is undefined */
			if (f->kind > SF_DOTS || *(const unsigned char *)&f->plain > 1 ||
			    !img_in(pat, &h) || f->litlen > 128 ||
			    (lit != IMG_NONE && (!img_in(lit, &h) || len - lit < f->litlen)) ||
			    f->vknown > V_YES)
				return NULL;
			f->pat = img + pat;
			f->lit = lit == IMG_NONE ? NULL : img + lit;
			dots |= (uint32_t)(f->kind == SF_DOTS) << p;
		}
		if (dots != e->dots)
			return NULL;
	}
	if (k != h.nframes)
		return NULL;
	struct mc_supps *s = mc_supp_new();
	if (!s)
		return NULL;
	s->v = v;
	s->n = s->cap = (size_t)h.n;
	s->other = (size_t)h.other;
	for (size_t i = 0; i < s->n; i++)
		s->pools += (v[i].kinds >> MC_SUPP_POOL) & 1;
	s->image = map ? map : img;
	s->image_len = map ? maplen : len;
	s->own_image = map != NULL;
	return s;
}

/* ---- matching -------------------------------------------------------- */

/* valgrind's VG_(string_match): '*' any run of characters, '?' any one,
 * '\' takes the next character as it is.  Greedy with one backtracking
 * point, so it stays linear in practice, quadratic at worst. */
bool mc_supp_glob(const char *pat, const char *s)
{
	const char *star = NULL, *back = NULL;
	for (;;) {
		if (*pat == '*') {
			star = ++pat;
			back = s;
			continue;
		}
		if (*s) {
			const char *q = pat;
			char c = *q;
			if (c == '\\' && q[1])
				c = *++q;
			if (c && (c == *s || (*pat == '?'))) {
				pat = q + 1;
				s++;
				continue;
			}
		} else if (!*pat) {
			return true;
		}
		if (!star || !*back)
			return false;
		pat = star;
		s = ++back;
	}
}

/* What valgrind names its frame 0 of a leak: the allocation function.
 * memcheck's stacks start at its caller, so virtual frames stand for it
 * (memcheck-suppressions(5), FRAME 0). */
#define ALLOC_NAMES(X) \
	X("malloc") X("calloc") X("realloc") X("reallocarray") X("memalign") \
	X("posix_memalign") X("aligned_alloc") X("valloc") X("pvalloc") \
	/* operator new and new[]: plain, nothrow, aligned, aligned nothrow */ \
	X("_Znwm") X("_Znam") X("_ZnwmRKSt9nothrow_t") X("_ZnamRKSt9nothrow_t") \
	X("_ZnwmSt11align_val_t") X("_ZnamSt11align_val_t") \
	X("_ZnwmSt11align_val_tRKSt9nothrow_t") X("_ZnamSt11align_val_tRKSt9nothrow_t") \
	X("_Znwj") X("_Znaj") X("_ZnwjRKSt9nothrow_t") X("_ZnajRKSt9nothrow_t")
#define ALLOC_NAME(s) s,
#define ALLOC_LEN(s) sizeof(s) - 1,
static const char *const alloc_names[] = { ALLOC_NAMES(ALLOC_NAME) };
static const uint8_t alloc_lens[] = { ALLOC_NAMES(ALLOC_LEN) };
/* valgrind's own objects frame 0 lies in */
static const char *const vg_objects[] = {
	"/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so",
	"/usr/lib/x86_64-linux-gnu/valgrind/vgpreload_memcheck-amd64-linux.so",
	"/usr/local/libexec/valgrind/vgpreload_memcheck-amd64-linux.so",
};

/* The length and the first byte before memcmp: the shipped files' frame
 * lines called strcmp 247 times here, 11 K instructions of every exit
 * that read them. */
static bool alloc_fn_n(const char *name, size_t n)
{
	/* the names' first bytes, then of those that start with '_', all
	 * with "_Zn": most that start with '_' are glibc's internal ones
	 * (_dl_, _IO_, __) */
	switch (name[0]) {
	case 'm': case 'c': case 'r': case 'p': case 'a': case 'v':
		break;
	case '_':
		if (name[1] == 'Z' && name[2] == 'n')
			break;
		return false;
	default:
		return false;
	}
	for (size_t i = 0; i < MC_ARRAY_SIZE(alloc_names); i++)
		if (n == alloc_lens[i] && name[0] == alloc_names[i][0] &&
		    memcmp(name, alloc_names[i], n) == 0)
			return true;
	return false;
}

bool mc_supp_is_alloc_fn(const char *name)
{
	return alloc_fn_n(name, strlen(name));
}

static const char *base(const char *path)
{
	const char *sl = strrchr(path, '/');
	return sl ? sl + 1 : path;
}

/* Frame i of the stack being matched, behind nv virtual frames (NULL
 * frame, true). */
struct cursor {
	const struct mc_supp_stack *st;
	int nv;
	const char *self;
};

static bool frame_at(const struct cursor *c, int i, const struct mc_frame_info **f)
{
	*f = NULL;
	if (i < c->nv)
		return true;
	*f = c->st->frame(c->st->arg, i - c->nv);
	return *f != NULL;
}

static bool may_hold(const struct supp_frame *p, const char *s);

/* Does p take one of the names (n of them)?  A pattern that starts with
 * a plain character is tried only on the names that start with it. */
static bool match_any(const struct supp_frame *p, const char *const *names, size_t n)
{
	char c = p->pat[0];
	bool first = c != '*' && c != '?' && c != '\\';
	for (size_t i = 0; i < n; i++)
		if ((!first || names[i][0] == c) && may_hold(p, names[i]) &&
		    mc_supp_glob(p->pat, names[i]))
			return true;
	return false;
}

/* The fixed part of match_v, asked once a pattern frame (vknown): the
 * set is shared, read-only but for this, by threads whose regions end
 * at once, so the byte is written atomically (each writes the same). */
static bool match_v_fixed(const struct supp_frame *p)
{
	uint8_t *known = (uint8_t *)&p->vknown;  /* the arena's, not const */
	uint8_t v = __atomic_load_n(known, __ATOMIC_RELAXED);
	if (!v) {
		bool yes = p->kind == SF_FUN ?
			   (p->plain ? alloc_fn_n(p->pat, strlen(p->pat)) :
			    match_any(p, alloc_names, MC_ARRAY_SIZE(alloc_names))) :
			   match_any(p, vg_objects, MC_ARRAY_SIZE(vg_objects));
		v = yes ? V_YES : V_NO;
		__atomic_store_n(known, v, __ATOMIC_RELAXED);
	}
	return v == V_YES;
}

static bool match_v(const struct supp_frame *p, const char *self)
{
	switch (p->kind) {
	case SF_FUN:
		return match_v_fixed(p);
	case SF_OBJ:
		if (self && *self && may_hold(p, self) && mc_supp_glob(p->pat, self))
			return true;
		return match_v_fixed(p);
	default:
		return false;
	}
}

/* A symbol table names the pieces GCC splits a function into after it:
 * f.part.0, f.isra.0, f.constprop.0, f.cold, f.localalias.  Each is f to
 * an entry that names f (debug information names it f). */
static bool match_clone(const char *pat, const char *name)
{
	static const char *const suffix[] = { ".part.", ".isra.", ".constprop.", ".cold",
					       ".localalias" };
	const char *dot = strchr(name, '.');
	if (!dot || dot == name)
		return false;
	for (size_t i = 0; i < MC_ARRAY_SIZE(suffix); i++)
		if (strncmp(dot, suffix[i], strlen(suffix[i])) == 0) {
			char base_name[sizeof ((struct mc_frame_info *)0)->function];
			size_t n = (size_t)(dot - name);
			if (n >= sizeof base_name)
				return false;
			memcpy(base_name, name, n);
			base_name[n] = 0;
			return mc_supp_glob(pat, base_name);
		}
	return false;
}

/* match_clone for a pattern without wildcards: the base is the name. */
static bool match_clone_plain(const char *pat, const char *name)
{
	size_t n = strlen(pat);
	return strncmp(pat, name, n) == 0 && name[n] == '.' && n &&
	       match_clone(pat, name);
}

/* A versioned symbol ("pthread_create@@GLIBC_2.34"), as valgrind names
 * the C library's default version of a symbol it has two of (its
 * --gen-suppressions entries, and the suppressions users copy from
 * them), for a pattern without wildcards: memcheck names the C
 * library's functions from its dynamic symbols, whose versions are
 * apart from the names, so the name before the '@' is the function's
 * (tests/test_valgrind.c, running_threads_dtvs_as_valgrinds).  The
 * pattern is kept whole: a frame whose own name holds an '@' is
 * matched by the whole name, as memcheck's generated entry writes it
 * (fuzz/fuzz_supp.c's round trip). */
static bool match_versioned_plain(const char *pat, const char *name)
{
	const char *at = strchr(pat, '@');
	if (!at || at == pat || strchr(name, '@'))
		return false;
	size_t n = (size_t)(at - pat);
	return strncmp(pat, name, n) == 0 && name[n] == 0;
}

/* Does s hold p's longest plain run, as every string p matches does?
 * Asked only of a pattern that starts with '*', whose glob tries every
 * position of s (/bin/date's exit: 0.75 M instructions of globs); one
 * that starts with a plain character fails the glob at once, cheaper
 * than strstr's start (parson's exit: 10 M instructions of strstr when
 * every pattern asked). */
static bool may_hold(const struct supp_frame *p, const char *s)
{
	return !p->lit || p->pat[0] != '*' || strstr(s, p->lit);
}

static bool match_one(const struct supp_frame *p, const struct mc_frame_info *f,
		      const char *self)
{
	if (!f)
		return match_v(p, self);
	switch (p->kind) {
	case SF_FUN:
		/* a pattern without wildcards is a name: strcmp, not the glob
		 * (/bin/date's exit: 135 instructions a glob) */
		if (p->plain)
			return strcmp(p->pat, f->linkage[0] ? f->linkage : f->function) == 0 ||
			       (strcmp(f->linkage, f->function) != 0 &&
				strcmp(p->pat, f->function) == 0) ||
			       match_clone_plain(p->pat, f->function) ||
			       match_versioned_plain(p->pat, f->linkage[0] ? f->linkage : f->function) ||
			       (f->linkage[0] && strcmp(f->linkage, f->function) != 0 &&
				match_versioned_plain(p->pat, f->function));
		/* the clone's name is a prefix of the function's */
		if (!may_hold(p, f->linkage) && !may_hold(p, f->function))
			return false;
		return mc_supp_glob(p->pat, f->linkage[0] ? f->linkage : f->function) ||
		       (strcmp(f->linkage, f->function) != 0 && mc_supp_glob(p->pat, f->function)) ||
		       match_clone(p->pat, f->function);
	case SF_OBJ:
		return f->object[0] && may_hold(p, f->object) && mc_supp_glob(p->pat, f->object);
	case SF_SRC:
		/* the base name is a suffix of the file's */
		if (!f->file[0] || (p->line && p->line != f->line) || !may_hold(p, f->file))
			return false;
		return mc_supp_glob(p->pat, base(f->file)) || mc_supp_glob(p->pat, f->file);
	default:
		return false;
	}
}

/* The longest run of plain characters in a pattern, unescaped, into buf
 * (cap bytes at most): every name the pattern matches contains it.
 * Returns its length, 0 when the pattern has none. */
static size_t literal_run(const char *pat, char *buf, size_t cap)
{
	size_t best = 0, n = 0;
	char cur[128];
	for (const char *q = pat;; q++) {
		if (*q == '\\' && q[1]) {
			q++;    /* the next character as it is */
		} else if (!*q || *q == '*' || *q == '?' || *q == '\\') {
			if (n > best && n <= cap) {
				memcpy(buf, cur, n);
				best = n;
			}
			n = 0;
			if (!*q)
				return best;
			continue;
		}
		if (n < sizeof cur)  /* a longer run: its start is in every name too */
			cur[n++] = *q;
	}
}

/* The entry's frames against a prefix of the stack, '...' standing for
 * zero or more frames: the classic wildcard walk, each frame a letter,
 * with the pattern's end open (the stack may go on). */
static bool match_frames(const struct mc_supp *e, const struct cursor *c)
{
	int p = 0, i = 0, star = -1, star_i = 0;
	const struct mc_frame_info *f;
	for (;;) {
		if (p == e->nframes)
			return true;
		if (e->frames[p].kind == SF_DOTS) {
			star = ++p;
			star_i = i;
			continue;
		}
		if (frame_at(c, i, &f) && match_one(&e->frames[p], f, c->self)) {
			p++;
			i++;
			continue;
		}
		if (star < 0 || !frame_at(c, star_i, &f))
			return false;
		p = star;
		i = ++star_i;
	}
}

/* ---- matching on the quick view -------------------------------------- */

/* A quick frame that is deep stands for the k >= 1 frames its debug
 * information makes of it (inlined ones first), all in its object,
 * named by that information or, the outermost, by the symbol table as
 * the quick frame is.  Every name the debug information gives is in its
 * string data: a pattern whose longest plain run is not there matches
 * none of them (may_name).  Could p match one of the k? */
static bool deep_may_match(const struct supp_frame *p, const struct mc_supp_stack *st, int i,
			   const struct mc_frame_info *f, const char *self)
{
	if (match_one(p, f, self))
		return true;
	switch (p->kind) {
	case SF_OBJ:
		return false;   /* the object is f's for all k */
	case SF_FUN:
		return !p->lit || !st->may_name || st->may_name(st->arg, i, p->lit, p->litlen);
	default:
		return true;    /* src: the file:line is not known */
	}
}

/* The states '...' lets the automaton reach without taking a frame: a
 * run of them passed in as many rounds as it is long. */
static uint32_t dots_closure(const struct mc_supp *e, uint32_t states)
{
	for (uint32_t more; (more = (states & e->dots) << 1 & ~states);)
		states |= more;
	return states;
}

/* The states after one frame that patterns allow (bit p: pattern frame
 * p takes it; '...' takes any).  The state past the last frame (done)
 * is in no mask: it takes no frame. */
static uint32_t step(const struct mc_supp *e, uint32_t states, uint32_t allow)
{
	uint32_t frames = (1u << e->nframes) - 1;
	uint32_t next = (states & e->dots) | (states & ~e->dots & allow & frames) << 1;
	return dots_closure(e, next);
}

enum { NO, YES, UNSURE };

/* Into *allow, for each pattern frame of states not in *tried: does it
 * take frame f (i), exactly or, deep, maybe? */
static void ask(const struct mc_supp *e, uint32_t states, uint32_t *tried, uint32_t *allow,
		const struct mc_supp_stack *st, int i, const struct mc_frame_info *f, bool deep,
		const char *self)
{
	uint32_t todo = states & ~*tried & ~e->dots & ((1u << e->nframes) - 1);
	*tried |= todo;
	for (; todo; todo &= todo - 1) {
		int p = __builtin_ctz(todo);
		if (deep ? deep_may_match(&e->frames[p], st, i, f, self) :
		    match_one(&e->frames[p], f, self))
			*allow |= 1u << p;
	}
}

/* The entry against the quick view, as an automaton over its frames
 * (state p: the first p pattern frames matched; the pattern's end open),
 * the virtual frames before the stack 0, 1 or 2 of them, run twice at
 * once.  sure: a deep frame is taken by '...' alone, so a match found
 * so is one on the frames too, the '...' taking all k.  may: a deep
 * frame is read as k >= 1 frames any pattern deep_may_match allows
 * takes, so the frames match no way may does not.  YES, NO, or UNSURE
 * (ask the frames). */
static int match_quick(const struct mc_supp *e, const struct mc_supp_stack *st, const char *self)
{
	const uint32_t done = 1u << e->nframes; /* nframes <= 24 */
	uint32_t v = 0, vt = 0;  /* the patterns a virtual frame takes */
	uint32_t s0 = dots_closure(e, 1);
	ask(e, s0, &vt, &v, st, -1, NULL, false, self);
	uint32_t s1 = step(e, s0, v);
	ask(e, s1, &vt, &v, st, -1, NULL, false, self);
	uint32_t s2 = step(e, s1, v);
	uint32_t sure = s0 | s1 | s2, may = sure;
	bool may_done = false;
	for (int i = 0;; i++) {
		if (sure & done)
			return YES;
		may_done |= (may & done) != 0;
		if (!sure && (may_done || !may))
			return may_done ? UNSURE : NO;
		bool deep;
		const struct mc_frame_info *f = st->quick(st->arg, i, &deep);
		if (!f)
			return may_done ? UNSURE : NO;
		/* Which patterns take this frame (allow), each asked once, for
		 * the states that need it. */
		uint32_t allow = 0, tried = 0;
		if (!deep) {
			ask(e, sure | (may_done ? 0 : may), &tried, &allow, st, i, f, false, self);
			sure = step(e, sure, allow);
			may = step(e, may, allow);
			continue;
		}
		sure = step(e, sure, 0);  /* '...' alone */
		if (may_done)
			continue;
		uint32_t from = may, next = 0;
		while (from) {            /* k = 1, 2, ... copies */
			ask(e, from, &tried, &allow, st, i, f, true, self);
			uint32_t got = step(e, from, allow);
			from = got & ~next;
			next |= got;
		}
		may = next;
	}
}

/* ---- anchors: rejecting an entry by one probe ----------------------- */

/* The names of a stack's quick frames, as hashes (a collision only lets
 * an entry through to the matching), and which frames are deep.  At
 * most MC_MAX_DEPTH frames of three names: under 40% full. */
#define NAME_SLOTS 512
struct names {
	uint32_t slot[NAME_SLOTS];
	int deep[MC_MAX_DEPTH], ndeep;
	bool all;                 /* past MC_MAX_DEPTH frames: every name taken */
};

static void names_add(struct names *ns, uint32_t h)
{
	size_t i = h & (NAME_SLOTS - 1);
	while (ns->slot[i] && ns->slot[i] != h)
		i = (i + 1) & (NAME_SLOTS - 1);
	ns->slot[i] = h;
}

static bool names_have(const struct names *ns, uint32_t h)
{
	if (ns->all)
		return true;
	for (size_t i = h & (NAME_SLOTS - 1); ns->slot[i]; i = (i + 1) & (NAME_SLOTS - 1))
		if (ns->slot[i] == h)
			return true;
	return false;
}

/* Every name match_one compares a plain fun: pattern with: the symbol's
 * (the function's when there is none), the function's, and the base of
 * a clone's (match_clone); 0 for the ones a frame has not. */
static void frame_names(const struct mc_frame_info *f, uint32_t h[3])
{
	/* C code's frames and frames without debug information have one
	 * name in both (frame_finish): hashed once */
	h[0] = f->linkage[0] && strcmp(f->linkage, f->function) != 0 ?
	       name_hash(f->linkage, strlen(f->linkage)) : 0;
	h[1] = name_hash(f->function, strlen(f->function));
	const char *dot = strchr(f->function, '.');
	h[2] = dot && dot != f->function ? name_hash(f->function, (size_t)(dot - f->function)) : 0;
}

/* The names of the frames of the stacks matched so far, by return
 * address (st->names): the stacks of a region share most of theirs, and
 * a quick frame's names cost a copy of it out of symbolize.c's cache and
 * three hashes (/bin/date's exit: 226 frames of 25 records, ~60
 * addresses, 90 K of 178 K instructions of matching).  The slots index
 * the entries, which are filled in order: the few a short process needs
 * lie in the first page. */
#define NC_SLOTS 1024
struct names_cache {
	uint32_t n;
	uint16_t slot[NC_SLOTS];  /* 1 + an entry's index, 0 free */
	struct nc_entry {
		uintptr_t pc;
		uint32_t h[3];
		uint32_t deep;
	} e[];
};
#define NC_CAP ((MC_SUPP_NAMES_BYTES - offsetof(struct names_cache, e)) / \
		sizeof(struct nc_entry))
_Static_assert(NC_CAP >= NC_SLOTS / 2, "the slots at most half full");

static uint16_t *nc_slot(struct names_cache *c, uintptr_t pc)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 54) & (NC_SLOTS - 1);
	while (c->slot[i] && c->e[c->slot[i] - 1].pc != pc)
		i = (i + 1) & (NC_SLOTS - 1);
	return &c->slot[i];
}

static void names_of(struct names *ns, const struct mc_supp_stack *st)
{
	memset(ns->slot, 0, sizeof ns->slot);
	ns->ndeep = 0;
	ns->all = false;
	struct names_cache *c = st->pcs ? st->names : NULL;
	bool deep;
	const struct mc_frame_info *f;
	for (int i = 0;; i++) {
		const struct nc_entry *e = NULL;
		struct nc_entry tmp;
		uint16_t *slot = NULL;
		if (c && i < st->npcs) {
			slot = nc_slot(c, st->pcs[i]);
			e = *slot ? &c->e[*slot - 1] : NULL;
		}
		if (!e) {
			if (!(f = st->quick(st->arg, i, &deep)))
				return;
			frame_names(f, tmp.h);
			tmp.deep = deep;
			tmp.pc = 0;
			e = &tmp;
			if (slot && c->n < NC_SLOTS / 2) {
				tmp.pc = st->pcs[i];
				c->e[c->n] = tmp;
				*slot = (uint16_t)++c->n;
			}
		}
		if (i == MC_MAX_DEPTH) {
			ns->all = true;
			return;
		}
		if (e->deep)
			ns->deep[ns->ndeep++] = i;
		for (int k = 0; k < 3; k++)
			if (e->h[k])
				names_add(ns, e->h[k]);
	}
}

/* Can the entry match the stack at all: does each anchor name a quick
 * frame, or may a deep one's debug information give the name (what
 * deep_may_match asks of a fun: pattern)?  false: no match on the quick
 * view nor on the frames. */
static bool anchors_may_match(const struct mc_supp *e, const struct names *ns,
			      const struct mc_supp_stack *st)
{
	for (int a = 0; a < e->nanchors; a++) {
		if (names_have(ns, e->anchor_hash[a]))
			continue;
		const struct supp_frame *p = &e->frames[e->anchor[a]];
		bool may = false;
		for (int d = 0; d < ns->ndeep && !may; d++)
			may = !p->lit || !st->may_name ||
			      st->may_name(st->arg, ns->deep[d], p->lit, p->litlen);
		if (!may)
			return false;
	}
	return true;
}

long mc_supp_match(const struct mc_supps *s, int kind, const struct mc_supp_stack *st,
		   const char *self)
{
	struct names ns;
	bool named = false;
	for (size_t k = 0; s && k < s->n; k++) {
		const struct mc_supp *e = &s->v[k];
		if (!(e->kinds & (1u << (kind == MC_SUPP_POOL ? kind : kind & 3))))
			continue;
		if (e->nanchors && st->quick) {
			if (!named) {
				names_of(&ns, st);
				named = true;
			}
			if (!anchors_may_match(e, &ns, st))
				continue;
		}
		/* valgrind's stacks have one allocation frame, or two: its
		 * posix_memalign calls its memalign, and in a program with
		 * libmemcheck preloaded its malloc is called by memcheck's. */
		int quick = st->quick ? match_quick(e, st, self) : UNSURE;
		if (quick == YES)
			return (long)k;
		for (int nv = 0; nv <= 2 && quick == UNSURE; nv++) {
			struct cursor c = { st, nv, self };
			if (match_frames(e, &c))
				return (long)k;
		}
	}
	return -1;
}

/* ---- writing an entry ------------------------------------------------ */

static const char *const kind_words[] = { "definite", "indirect", "possible", "reachable" };

/* valgrind's stacks stop at main (--show-below-main=no); these are the
 * frames below it, which valgrind names "(below main)" and where its
 * stacks stop when main has no name (a stripped program). */
bool mc_supp_below_main(const char *fn)
{
	/* one string of them, each ended by its NUL, the last by two: no
	 * table of pointers (relocated, in the data segment); what a
	 * leaking exit reads a frame, in .rodata.mc_then (text-order.ld) */
	static const char below_main_names[] = "__libc_start_call_main\0__libc_start_main\0"
				    "__libc_start_main_impl\0_start\0generic_start_main\0"
				    "(below main)\0";
	for (const char *n = below_main_names; *n; n += strlen(n) + 1)
		if (strcmp(fn, n) == 0)
			return true;
	return false;
}

/* A name as a pattern that matches it, in both tools: a '*' or '?' of
 * the name (C++'s _M_construct<char const*>) as it is, a wildcard that
 * matches itself, as valgrind writes it (valgrind 3.19 has no escapes:
 * "\\*" matched nothing there); characters a line cannot hold (controls,
 * whitespace at either end, which the parser strips) and a backslash
 * become '?', which matches them. */
static void put_pattern(struct mc_buf *b, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < ' ' || c == 0x7f || c == '\\' ||
		    ((i == 0 || i == n - 1) && space((char)c)))
			mc_buf_put(b, "?", 1);
		else
			mc_buf_put(b, s + i, 1);
	}
}

/* The frames an entry for this stack names: how many (at most max),
 * and whether one of them is more than an allocation function. */
static int frames_to_write(const struct mc_supp_stack *st, int max, bool *specific)
{
	const struct mc_frame_info *f;
	int n = 0;
	*specific = false;
	for (int i = 0; n < max && (f = st->frame(st->arg, i)); i++) {
		if (mc_supp_below_main(f->linkage) || mc_supp_below_main(f->function))
			break;
		n++;
		*specific |= !mc_supp_is_alloc_fn(f->linkage) &&
			     (strcmp(f->function, "???") != 0 || f->object[0]);
		if (strcmp(f->function, "main") == 0)
			break;
	}
	return n;
}

void mc_supp_format(struct mc_buf *b, const char *name, int kind,
		    const struct mc_supp_stack *st)
{
	/* valgrind 3.19 keeps --num-callers=12 frames by default; a longer
	 * entry would never match its shorter stacks.  Frame 0 is the
	 * allocation function, which memcheck does not record: '...' stands
	 * for it and for any allocator frames after it (libmemcheck's own
	 * wrapper, when valgrind runs a program memcheck is preloaded in).
	 * A stack that starts at operator new is valgrind's as it is. */
	const struct mc_frame_info *f = st->frame(st->arg, 0);
	bool dots = !f || !mc_supp_is_alloc_fn(f->linkage), specific;
	int n = frames_to_write(st, dots ? 11 : 12, &specific);
	const char *t = name;
	while (space(*t))
		t++;
	if (!specific) {
		/* An entry of nothing but '...' or operator new would
		 * suppress every leak of its kind: a comment says why there
		 * is none. */
		mc_buf_puts(b, "# ");
		for (const char *s = t; *s; s++)
			mc_buf_put(b, (unsigned char)*s < ' ' ? "_" : s, 1);
		mc_buf_printf(b, ": no entry for this %s leak record: its stack has no frame "
			      "past the allocation function (MEMCHECK_UNWINDER=libunwind, "
			      "MEMCHECK_STACK_DEPTH)\n", kind_words[kind & 3]);
		return;
	}
	mc_buf_puts(b, "{\n   ");
	/* a name line must not read as blank, a comment or a brace */
	if (!*t || *t == '#' || *t == '{' || *t == '}')
		mc_buf_puts(b, "memcheck-");
	for (const char *s = name; *s; s++)
		mc_buf_put(b, (unsigned char)*s < ' ' ? "_" : s, 1);
	mc_buf_printf(b, "\n   Memcheck:Leak\n   match-leak-kinds: %s\n", kind_words[kind & 3]);
	if (dots)
		mc_buf_puts(b, "   ...\n");
	for (int i = 0; i < n; i++) {
		f = st->frame(st->arg, i);
		const char *fn = f->linkage[0] ? f->linkage : f->function;
		if (fn[0] && strcmp(f->function, "???") != 0) {
			mc_buf_puts(b, "   fun:");
			put_pattern(b, fn);
		} else if (f->object[0]) {
			mc_buf_puts(b, "   obj:");
			put_pattern(b, f->object);
		} else {
			mc_buf_puts(b, "   obj:*");
		}
		mc_buf_puts(b, "\n");
	}
	mc_buf_puts(b, "}\n");
}
