/*
 * report.c - the two views of a region's result: a text report on stderr
 * in the spirit of valgrind's HEAP SUMMARY, and one JSON object per line
 * appended to MEMCHECK_REPORT (memcheck-report(5)).  Both are written
 * from the same struct memcheck_result; stacks are symbolized only here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* A string literal's bytes at w; the address past them.  Inline stores
 * (__builtin_memcpy of a constant size): a frame's ten pieces were ten
 * calls through mc_buf_puts, each a strlen, a reservation and a memcpy. */
#define PUT_LIT(w, lit) (__builtin_memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)
/* a string literal appended, without strlen: inline stores */
#define PUTL(b, lit)                                              \
	do {                                                      \
		char *w_ = mc_buf_room((b), sizeof(lit) - 1);     \
		if (w_)                                           \
			mc_buf_end((b), PUT_LIT(w_, lit));        \
	} while (0)

/* A size as "%llu B", "%.1f KiB", "%.1f MiB" or "%.1f GiB" write it,
 * the first three without vsnprintf (mc_buf_tenths: exact there). */
static void put_bytes(struct mc_buf *b, uint64_t v)
{
	if (v == MEMCHECK_UNKNOWN) {
		mc_buf_puts(b, "unknown");
	} else if (v < 10 * 1024) {
		mc_buf_u64(b, v);
		mc_buf_puts(b, " B");
	} else if (v < 10 * 1024 * 1024) {
		mc_buf_tenths(b, v, 10);
		mc_buf_puts(b, " KiB");
	} else if (v < 10ull * 1024 * 1024 * 1024) {
		mc_buf_tenths(b, v, 20);
		mc_buf_puts(b, " MiB");
	} else {
		mc_buf_printf(b, "%.1f GiB", (double)v / (1024.0 * 1024 * 1024));
	}
}

/* "%.3f" of a time in seconds (a double: left to snprintf, one short
 * format where the whole line's was parsed). */
static const char *secs(double v, char buf[32])
{
	snprintf(buf, 32, "%.3f", v);
	return buf;
}

/* A count with thousands separators, or "unknown" where not measured. */
static const char *num(uint64_t v, char buf[32])
{
	return v == MEMCHECK_UNKNOWN ? "unknown" : mc_commas(v, buf);
}

/* A report's frames, as json_stack wrote them: where in the buffer a
 * return address's entries (its inlined copies and itself) are, so that
 * the next stack through it copies those bytes instead of naming and
 * escaping them again.  The peak's sites are mostly the same few frames
 * (insert:39, main:81 ...), named once each.  Entries marked alloc_fn
 * depend on their place in the stack and are not kept. */
#define JSON_MEMO_SLOTS 64
/* Where the last frame's file and object were written in the buffer,
 * when written as they are (no byte escaped; len 0: none): the next
 * frame's, mostly the same, is compared with those bytes and copied
 * instead of tested again (a program's path of 40-60 bytes, every
 * frame). */
struct json_last {
	size_t file_off, file_len, obj_off, obj_len;
};
/* The stacks a record wrote whole: the peak's lines' largest stacks are
 * mostly among its largest stacks ("sites"), and a leak's may be one of
 * them too (run-parser: 20 stacks, 11 distinct); a stack met again is
 * copied, its frames neither fetched nor named again. */
#define JSON_MEMO_STACKS 32
struct json_memo {
	struct {
		uint32_t id;
		size_t off, len;
	} stack[JSON_MEMO_STACKS];
	unsigned nstacks;
	struct json_last last;
	struct {
		uintptr_t pc; /* 0: free */
		size_t off, len;
		bool main;
		bool plain0; /* its first entry was asked, and is not an
			      * allocation function's: it may end a lead */
	} slot[JSON_MEMO_SLOTS];
	unsigned used;
};

static unsigned memo_slot(const struct json_memo *m, uintptr_t pc)
{
	unsigned i = (unsigned)((pc * 0x9e3779b97f4a7c15ull) >> 58); /* 6 bits */
	while (m->slot[i].pc && m->slot[i].pc != pc)
		i = (i + 1) & (JSON_MEMO_SLOTS - 1);
	return i;
}


/* How many digits "%llu" writes for v (dec_len), and the digits at w,
 * written from the last (dec_at); the address past them. */
static size_t dec_len(uint64_t v)
{
	size_t n = 1;
	for (; v >= 10; v /= 10)
		n++;
	return n;
}

static char *dec_at(char *w, uint64_t v, size_t n)
{
	char *d = w + n;
	do {
		*--d = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return w + n;
}

/* The digits of v in decimal (int_len) and in hex (hex_len). */
static size_t int_len(int v)
{
	size_t n = v < 0 ? 2 : 1;
	for (unsigned u = v < 0 ? -(unsigned)v : (unsigned)v; u >= 10; u /= 10)
		n++;
	return n;
}

static size_t hex_len(uint64_t v)
{
	size_t n = 1;
	for (; v >= 16; v >>= 4)
		n++;
	return n;
}

/* s's n bytes as a JSON string at w (in b's room), copied from the bytes
 * at *off when those are the same string written as it is; the address
 * past them. */
static char *json_str_again(const struct mc_buf *b, char *w, const char *s, size_t n, size_t *off,
			    size_t *len)
{
	if (*len == n + 2 && memcmp(b->s + *off + 1, s, n) == 0) {
		memcpy(w, b->s + *off, n + 2);
		return w + n + 2;
	}
	char *end = mc_buf_json_at(w, s, n);
	if ((size_t)(end - w) == n + 2) { /* as it is: escapes are longer */
		*off = (size_t)(w - b->s);
		*len = n + 2;
	}
	return end;
}

/* One entry of a JSON stack: frame fi at return address pc, after
 * another entry when comma.  Written in place, into room reserved once
 * for the worst case of its strings where the buffer has it, else
 * exactly (the buffer then grows as piece-by-piece writes grew it). */
static void json_frame(struct mc_buf *b, bool comma, uintptr_t pc, const struct mc_frame_info *fi,
		       bool inlined, bool alloc_fn, struct json_last *last)
{
	char shown[MC_SHOWN_MAX];
	const char *fn = mc_frame_shown(fi, inlined, shown, sizeof shown);
	size_t nfn = strlen(fn), nfile = strlen(fi->file), nobj = strlen(fi->object);
	/* ,{"address":"0x..","function":..,"file":..,"line":..,"object":..,"inlined":false,"alloc_fn":true} */
	size_t fixed = 96 + 18 + 11;
	size_t need = fixed + 6 * (nfn + nfile + nobj) + 6;
	if (b->len + need + 1 > b->cap)
		need = (comma ? 1 : 0) + sizeof "{\"address\":\"" - 1 + 2 + hex_len(pc) +
		       sizeof "\",\"function\":" - 1 + mc_buf_json_len(fn, nfn) +
		       sizeof ",\"file\":" - 1 + (nfile ? mc_buf_json_len(fi->file, nfile) : 4) +
		       sizeof ",\"line\":" - 1 + (fi->line > 0 ? int_len(fi->line) : 4) +
		       sizeof ",\"object\":" - 1 + mc_buf_json_len(fi->object, nobj) +
		       (inlined ? sizeof ",\"inlined\":true" : sizeof ",\"inlined\":false") - 1 +
		       (alloc_fn ? sizeof ",\"alloc_fn\":true}" : sizeof "}") - 1;
	char *w = mc_buf_room(b, need);
	if (!w)
		return;
	if (comma)
		*w++ = ',';
	w = PUT_LIT(w, "{\"address\":\"");
	w = mc_buf_hex_at(w, pc);
	w = PUT_LIT(w, "\",\"function\":");
	w = mc_buf_json_at(w, fn, nfn);
	w = PUT_LIT(w, ",\"file\":");
	w = nfile ? json_str_again(b, w, fi->file, nfile, &last->file_off, &last->file_len)
		  : PUT_LIT(w, "null");
	w = PUT_LIT(w, ",\"line\":");
	w = fi->line > 0 ? dec_at(w, (uint64_t)fi->line, dec_len((uint64_t)fi->line))
			 : PUT_LIT(w, "null");
	w = PUT_LIT(w, ",\"object\":");
	w = json_str_again(b, w, fi->object, nobj, &last->obj_off, &last->obj_len);
	/* Inlined copies share the address of the function they were
	 * inlined into, which follows them. */
	w = inlined ? PUT_LIT(w, ",\"inlined\":true") : PUT_LIT(w, ",\"inlined\":false");
	w = alloc_fn ? PUT_LIT(w, ",\"alloc_fn\":true}") : PUT_LIT(w, "}");
	mc_buf_end(b, w);
}

/* A stack's entries, innermost first, up to main.  Whether allocation
 * functions lead (allocfn.c) is asked frame by frame as they are named,
 * as mc_allocfn_lead's walk asks it: that walk named the leading frames
 * a second time. */
static void json_stack_in(struct mc_buf *b, uint32_t id, struct json_memo *memo,
			  struct mc_frame_info *fi)
{
	size_t whole = b->len;
	const uintptr_t *f;
	int n = mc_stack_get_code(id, &f);
	bool leading = true; /* every entry so far an allocation function's */
	struct json_last local = { 0 }, *last = memo ? &memo->last : &local;
	PUTL(b, "[");
	for (int i = 0; i < n; i++) {
		unsigned ms = JSON_MEMO_SLOTS; /* not looked up */
		if (memo && f[i]) {
			ms = memo_slot(memo, f[i]);
			/* while allocation functions lead, only a frame known
			 * to end the lead (mc_allocfn_is depends on the
			 * return address alone) */
			if (memo->slot[ms].pc && leading && !memo->slot[ms].plain0)
				ms = JSON_MEMO_SLOTS;
			else if (memo->slot[ms].pc) {
				leading = false;
				if (i)
					PUTL(b, ",");
				mc_buf_repeat(b, memo->slot[ms].off, memo->slot[ms].len);
				if (memo->slot[ms].main)
					break;
				continue;
			}
		}
		size_t start = b->len + (i ? 1 : 0);
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		bool any_alloc = false, was_leading = leading;
		for (int j = 0; j < k; j++) {
			if (leading)
				leading = mc_allocfn_is(f, n, i, &fi[j], j + 1 < k);
			any_alloc |= leading;
			json_frame(b, i || j, f[i], &fi[j], j + 1 < k, leading, last);
		}
		bool main = mc_text_is_main(fi, k);
		if (ms < JSON_MEMO_SLOTS && memo && !any_alloc && f[i] && !b->oom &&
		    memo->used < JSON_MEMO_SLOTS * 3 / 4) {
			memo->slot[ms].pc = f[i];
			memo->slot[ms].off = start;
			memo->slot[ms].len = b->len - start;
			memo->slot[ms].main = main;
			/* not thin: a verdict of f[i] alone, not of its caller */
			memo->slot[ms].plain0 = was_leading && !mc_allocfn_thin(f[i]);
			memo->used++;
		}
		if (main)
			break;
	}
	PUTL(b, "]");
	if (memo && !b->oom && memo->nstacks < JSON_MEMO_STACKS) {
		memo->stack[memo->nstacks].id = id;
		memo->stack[memo->nstacks].off = whole;
		memo->stack[memo->nstacks++].len = b->len - whole;
	}
}

/* json_stack where the shared frames are taken: its own, on the stack */
static __attribute__((noinline)) void json_stack_aside(struct mc_buf *b, uint32_t id,
						       struct json_memo *memo)
{
	struct mc_frame_info fi[MC_MAX_INLINE];
	json_stack_in(b, id, memo, fi);
}

static void json_stack(struct mc_buf *b, uint32_t id, struct json_memo *memo)
{
	for (unsigned s = 0; memo && s < memo->nstacks; s++)
		if (memo->stack[s].id == id) {
			mc_buf_repeat(b, memo->stack[s].off, memo->stack[s].len);
			return;
		}
	struct mc_frame_info *fi = mc_symbolize_frames_borrow();
	if (!fi) {
		json_stack_aside(b, id, memo);
		return;
	}
	json_stack_in(b, id, memo, fi);
	mc_symbolize_frames_return();
}

/* "file.c:42 (fn)" for a site named by fi (site_key's frame, when found;
 * inlined: a function inlined there, named as a stack names it), or
 * "(no stack recorded)". */
static void site_name(struct mc_buf *b, bool found, const struct mc_frame_info *fi, bool inlined)
{
	char shown[MC_SHOWN_MAX];
	const char *fn = found ? mc_frame_shown(fi, inlined, shown, sizeof shown) : NULL;
	if (!found)
		mc_buf_puts(b, "(no stack recorded)");
	else if (fi->file[0])
		mc_buf_printf(b, "%s:%d (%s)", fi->file, fi->line, fn);
	else
		mc_buf_printf(b, "%s (in %s)", fn, fi->object[0] ? fi->object : "?");
}

/* Whether two sites print as one line. */
static bool same_site(bool fa, const struct mc_frame_info *a, bool fb, const struct mc_frame_info *b)
{
	if (fa != fb || !fa)
		return fa == fb;
	return a->line == b->line && !strcmp(a->file, b->file) &&
	       !strcmp(a->function, b->function) && !strcmp(a->object, b->object);
}

/* site_key's walk: mc_allocfn_lead's, stopped at its first frame that
 * is not an allocation function's: that frame is the key (a walk to
 * count the lead, then one to find its frame, named the frames twice);
 * fi, MC_MAX_INLINE frames to name them in. */
static bool site_key_walk(const uintptr_t *f, int n, uintptr_t *pc, int *depth, bool *lead0,
			  struct mc_frame_info *fi)
{
	for (int i = 0, at = 0; i < n; i++) {
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		for (int j = 0; j < k; j++, at++)
			if (!mc_allocfn_is(f, n, i, &fi[j], j + 1 < k)) {
				*pc = f[i];
				*depth = j;
				/* f[0]'s alone where it is not thin (a thin one's
				 * verdict is its caller's too) */
				*lead0 = at == 0 && !mc_allocfn_thin(f[i]);
				return true;
			}
		if (i == n - 1) { /* every frame an allocation function's */
			*pc = f[i];
			*depth = k - 1;
			*lead0 = false;
			return true;
		}
	}
	return false;
}

/* site_key_walk where the shared frames are taken: its own, on the stack */
static __attribute__((noinline)) bool site_key_aside(const uintptr_t *f, int n, uintptr_t *pc,
						     int *depth, bool *lead0)
{
	struct mc_frame_info fi[MC_MAX_INLINE];
	return site_key_walk(f, n, pc, depth, lead0, fi);
}

/* The frame a site is named by: the first of its stack past the
 * allocation functions (allocfn.c), inlined frames counted one by one;
 * the last when every frame is one.  Found without naming it: its
 * return address and which of its inlined frames (*depth, 0 the
 * innermost).  Names are asked only where allocation functions lead
 * (their inlined frames must be counted); the stacks of one line then
 * share a key, and a line is named once for all of them.  *lead0: no
 * allocation function leads, which depends on f[0] alone (its first
 * inlined frame's verdict): every stack from f[0] is then keyed
 * (f[0], 0) without asking again.  false without a stack (n = 0). */
static bool site_key(const uintptr_t *f, int n, uintptr_t *pc, int *depth, bool *lead0)
{
	if (!n)
		return false;
	/* Without MEMCHECK_ALLOC_FN's names, whether frame 0 is an
	 * allocation function is its code's verdict alone: a stack that
	 * leaves the allocator in the program's code needs no symbols of
	 * the module it came through (a C library's strdup would read the
	 * library's symbol table, 70 pages, for a line no report shows) */
	if ((!mc_opt.alloc_fn || !*mc_opt.alloc_fn) && !mc_allocfn_thin(f[0])) {
		*pc = f[0];
		*depth = 0;
		*lead0 = true;
		return true;
	}
	struct mc_frame_info *fi = mc_symbolize_frames_borrow();
	if (!fi)
		return site_key_aside(f, n, pc, depth, lead0);
	bool found = site_key_walk(f, n, pc, depth, lead0, fi);
	mc_symbolize_frames_return();
	return found;
}

/* The peak's lines: its stacks grouped by the line that names them
 * (site_key's frame: stacks that differ only below it, a recursive caller's
 * depths, are one line), the MEMCHECK_PEAK_SITES largest with all of
 * their stacks' bytes and blocks, the rest summed.  Chosen by line, not
 * by stack: a line many stacks reach (a parser's leaf) would otherwise
 * count only its stacks among the largest, and a smaller line could
 * show above it. */
struct peak_line {
	struct mc_frame_info fi;  /* what names it, when found */
	bool found;
	bool inlined;             /* fi a function inlined at its address */
	uint64_t bytes, blocks;
	uint64_t stacks;
	size_t top;               /* its largest stack, in the snapshot's all[] */
	uint64_t hash;
	uint32_t next;            /* the next line of its hash bucket, + 1 */
};
/* How many lines (and, in the JSON's "sites", stacks) a snapshot lists. */
static uint32_t peak_max(void)
{
	return mc_opt.peak_sites > MC_PEAK_SITES_MAX ? MC_PEAK_SITES_MAX
	       : mc_opt.peak_sites > 0 ? (uint32_t)mc_opt.peak_sites : 0;
}

/* Is snapshot stack a larger than b: more bytes, then more blocks? */
static bool site_larger(const struct mc_peak_site *a, const struct mc_peak_site *b)
{
	return a->bytes > b->bytes || (a->bytes == b->bytes && a->blocks > b->blocks);
}

struct peak_lines {
	struct peak_line *v;      /* the lines named, in the order named */
	size_t n, cap;
	uint32_t chosen[MC_PEAK_SITES_MAX], nchosen; /* the largest, largest first */
	uint64_t other_stacks, other_bytes, other_blocks;
};

/* The stacks of one key: one naming frame (a return address and which
 * of its inlined frames), so one line, not yet named. */
struct key_group {
	uintptr_t pc;             /* 0: the stacks without frames */
	int depth;
	uint64_t bytes, blocks, stacks;
	size_t top;               /* its largest stack, in all[] */
	uintptr_t module;         /* its code segment's start (0: none) */
};
struct key_slot {
	uintptr_t pc;             /* 0: empty */
	int depth;
	uint32_t group;           /* + 1; 0: none yet */
	bool lead0;               /* (pc, 0) of a stack from pc with no
				   * allocation function leading */
};

/* The keys met so far: an open-addressing table of nb slots (a power
 * of two), each 1 + the index of its key, the keys filled in order: a
 * table of the keys themselves (24 bytes a slot, four slots a stack,
 * probed before written) was 4 page faults of a JSON report's exit
 * (bench/suite_test 1) for its few dozen keys. */
struct key_table {
	uint32_t *slot;
	struct key_slot *e;       /* [nb / 2]: two keys a stack at most */
	size_t n;
};

/* The key (pc, depth), made if new. */
static struct key_slot *key_slot(struct key_table *t, size_t nb, uintptr_t pc, int depth)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20 ^ (uint64_t)depth) & (nb - 1);
	while (t->slot[i] && (t->e[t->slot[i] - 1].pc != pc || t->e[t->slot[i] - 1].depth != depth))
		i = (i + 1) & (nb - 1);
	if (!t->slot[i]) {
		t->e[t->n] = (struct key_slot){ pc, depth, 0, false };
		t->slot[i] = (uint32_t)++t->n;
	}
	return &t->e[t->slot[i] - 1];
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

/* A line's bucket: of its function and line number only, which lines
 * that print as one share (same_site tells the rest apart): the file's
 * and the object's paths, ~100 bytes a line hashed byte by byte, were
 * most of it. */
static uint64_t site_hash(bool found, const struct mc_frame_info *fi)
{
	if (!found)
		return 1;
	uint64_t h = hash_str(0xcbf29ce484222325ull, fi->function);
	return (h ^ (uint64_t)(unsigned)fi->line) * 0x100000001b3ull;
}

/* The line named (found, fi) among ls's, made if new; (size_t)-1 when
 * memory runs out.  buckets: nb (a power of two) heads, line index + 1. */
static size_t line_of(struct peak_lines *ls, uint32_t *buckets, size_t nb, bool found,
		      const struct mc_frame_info *fi, bool inlined)
{
	uint64_t h = site_hash(found, fi);
	for (uint32_t i = buckets[h & (nb - 1)]; i; i = ls->v[i - 1].next)
		if (ls->v[i - 1].hash == h &&
		    same_site(ls->v[i - 1].found, &ls->v[i - 1].fi, found, fi))
			return i - 1;
	if (!mc_grow((void **)&ls->v, &ls->cap, ls->n, sizeof *ls->v, 16))
		return (size_t)-1;
	struct peak_line *l = &ls->v[ls->n];
	memset(l, 0, sizeof *l);
	l->found = found;
	if (found)
		l->fi = *fi;
	l->inlined = inlined;
	l->hash = h;
	l->next = buckets[h & (nb - 1)];
	buckets[h & (nb - 1)] = (uint32_t)++ls->n;
	return ls->n - 1;
}

/* Does line a go before line b (more bytes, then more blocks, then the
 * one met first)? */
static bool line_before(const struct peak_line *v, uint32_t a, uint32_t b)
{
	if (v[a].bytes != v[b].bytes)
		return v[a].bytes > v[b].bytes;
	if (v[a].blocks != v[b].blocks)
		return v[a].blocks > v[b].blocks;
	return a < b;
}

static void peak_lines_free(struct peak_lines *ls)
{
	if (ls->v)
		mc_unmap(ls->v, ls->cap * sizeof *ls->v);
	memset(ls, 0, sizeof *ls);
}

/* ls's k largest lines into ls->chosen, largest first. */
static void choose(struct peak_lines *ls, uint32_t k)
{
	ls->nchosen = 0;
	for (uint32_t i = 0; i < ls->n; i++) {
		uint32_t at = ls->nchosen;
		if (at == k) {
			if (!k || !line_before(ls->v, i, ls->chosen[k - 1]))
				continue;
			at--;
		} else {
			ls->nchosen++;
		}
		for (; at > 0 && line_before(ls->v, i, ls->chosen[at - 1]); at--)
			ls->chosen[at] = ls->chosen[at - 1];
		ls->chosen[at] = i;
	}
}

/* Stack s of pk into its key's group, made if new (none: the key of
 * stacks without frames); false when memory runs out. */
static bool group_stack(const struct mc_peak *pk, size_t s, struct key_table *keys, size_t nb,
			struct key_slot *none, struct key_group **g, size_t *ng, size_t *gcap)
{
	const struct mc_peak_site *st = &pk->all[s];
	/* frame 0, the call site, is always right: the rest is checked
	 * (mc_stack_get_code) only where it may name the site */
	const uintptr_t *f;
	int nf = mc_stack_get(st->stack, &f);
	uintptr_t pc = nf ? f[0] : 0;
	int depth = 0;
	bool lead0 = false;
	struct key_slot *k = none;    /* the stacks without frames' */
	if (nf) {
		/* most stacks: their first frame's key, seen before */
		k = key_slot(keys, nb, pc, 0);
		if (!k->lead0 && (nf = mc_stack_get_code(st->stack, &f)) > 0 &&
		    site_key(f, nf, &pc, &depth, &lead0)) {
			if (lead0)
				k->lead0 = true;
			else
				k = key_slot(keys, nb, pc, depth);
		}
	}
	if (!k->group) {
		if (!mc_grow((void **)g, gcap, *ng, sizeof **g, 64))
			return false;
		(*g)[*ng] = (struct key_group){ .pc = k == none ? 0 : pc, .depth = depth, .top = s };
		k->group = (uint32_t)++*ng;
	}
	struct key_group *gr = &(*g)[k->group - 1];
	const struct mc_peak_site *top = &pk->all[gr->top];
	if (site_larger(st, top))
		gr->top = s;
	gr->bytes += st->bytes;
	gr->blocks += st->blocks;
	gr->stacks++;
	return true;
}

/* Group gr named, into its line. */
static bool name_group_in(struct peak_lines *ls, uint32_t *heads, size_t nb,
			  const struct key_group *gr, struct mc_frame_info *fi, size_t *l)
{
	int k = gr->pc ? mc_symbolize_frames(gr->pc, fi, MC_MAX_INLINE) : 1;
	*l = line_of(ls, heads, nb, gr->pc != 0, &fi[gr->pc ? gr->depth : 0],
		     gr->pc && gr->depth + 1 < k);
	return *l != (size_t)-1;
}

/* name_group's naming where the shared frames are taken */
static __attribute__((noinline)) bool name_group_aside(struct peak_lines *ls, uint32_t *heads,
						       size_t nb, const struct key_group *gr,
						       size_t *l)
{
	struct mc_frame_info fi[MC_MAX_INLINE];
	return name_group_in(ls, heads, nb, gr, fi, l);
}

static bool name_group(struct peak_lines *ls, uint32_t *heads, size_t nb,
		       const struct mc_peak *pk, const struct key_group *gr)
{
	size_t l;
	struct mc_frame_info *fi = mc_symbolize_frames_borrow();
	bool named = fi ? name_group_in(ls, heads, nb, gr, fi, &l)
			: name_group_aside(ls, heads, nb, gr, &l);
	if (fi)
		mc_symbolize_frames_return();
	if (!named)
		return false;
	struct peak_line *line = &ls->v[l];
	const struct mc_peak_site *a = &pk->all[gr->top], *b = &pk->all[line->top];
	if (!line->stacks || site_larger(a, b))
		line->top = gr->top;
	line->bytes += gr->bytes;
	line->blocks += gr->blocks;
	line->stacks += gr->stacks;
	return true;
}

/* pk's lines into *ls (peak_lines_free after).  The stacks grouped by
 * key first (their naming frame's return address), in one pass, no
 * names asked but where allocation functions lead.  Then named module
 * by module (a line is of one object: its groups are of one code
 * segment), the modules with the most bytes first, until the lines
 * named hold the k largest: a line of a module not named has at most
 * its module's bytes, so once the k-th line named has more than the
 * next module, no line there can be among them.  A process's stacks
 * that pass through the C library (stdio's buffer, the locale) then
 * read no symbols of it unless one of its lines is listed. */
static void peak_lines(const struct mc_peak *pk, struct peak_lines *ls)
{
	memset(ls, 0, sizeof *ls);
	size_t nb = 16;   /* two keys a stack at most: its first frame's and its own */
	while (nb < 4 * pk->n)
		nb *= 2;
	/* the keys' slots, the lines' heads (both probed before written),
	 * the keys */
	size_t slots_len = 2 * nb * sizeof(uint32_t), keys_len = nb / 2 * sizeof(struct key_slot);
	char *mem = pk->n ? mc_map(slots_len + keys_len) : NULL;
	if (mem)
		mc_write_first(mem, slots_len);
	struct key_table table = { 0 }, *keys = mem ? &table : NULL;
	uint32_t *heads = mem ? (uint32_t *)mem + nb : NULL;
	if (mem) {
		table.slot = (uint32_t *)mem;
		table.e = (struct key_slot *)(mem + slots_len);
	}
	struct key_group *g = NULL;
	struct key_slot none = { 0 };
	size_t ng = 0, gcap = 0;
	bool whole = keys || !pk->n;
	for (size_t s = 0; whole && s < pk->n; s++)
		whole = group_stack(pk, s, keys, nb, &none, &g, &ng, &gcap);
	/* each group's module; the modules' bytes, in place of the
	 * keys (no longer needed): module start, bytes */
	struct module {
		uintptr_t lo;
		uint64_t bytes;
		bool named;
	} *mods = mem ? (struct module *)table.e : NULL;
	size_t nmods = 0, most = keys_len / sizeof *mods;
	uintptr_t lo = 0, hi = 0;
	for (size_t i = 0; whole && i < ng; i++) {
		uintptr_t pc = g[i].pc;
		if (pc && !(pc - 1 >= lo && pc - 1 < hi) && !mc_code_segment(pc - 1, &lo, &hi))
			lo = hi = 0;
		g[i].module = pc && pc - 1 >= lo && pc - 1 < hi ? lo : 0;
		size_t m = 0;
		while (m < nmods && mods[m].lo != g[i].module)
			m++;
		if (m == nmods) {
			if (nmods == most) {
				whole = false;
				break;
			}
			mods[nmods++] = (struct module){ g[i].module, 0, false };
		}
		mods[m].bytes += g[i].bytes;
	}
	uint32_t k = peak_max();
	for (;;) {
		size_t next = nmods;
		for (size_t m = 0; whole && m < nmods; m++)
			if (!mods[m].named && (next == nmods || mods[m].bytes > mods[next].bytes))
				next = m;
		if (next == nmods)
			break;
		choose(ls, k);
		if (ls->nchosen == k &&
		    (!k || ls->v[ls->chosen[k - 1]].bytes > mods[next].bytes))
			break;
		mods[next].named = true;
		for (size_t i = 0; whole && i < ng; i++)
			if (g[i].module == mods[next].lo)
				whole = name_group(ls, heads, nb, pk, &g[i]);
	}
	if (!whole) /* memory ran out: the lines named are listed, whole or not */
		mc_log("out of memory choosing the peak's lines: some are not listed");
	choose(ls, k);
	if (g)
		mc_unmap(g, gcap * sizeof *g);
	if (mem)
		mc_unmap(mem, slots_len + keys_len);
	uint64_t lbytes = 0, lblocks = 0, lstacks = 0;
	for (uint32_t c = 0; c < ls->nchosen; c++) {
		lbytes += ls->v[ls->chosen[c]].bytes;
		lblocks += ls->v[ls->chosen[c]].blocks;
		lstacks += ls->v[ls->chosen[c]].stacks;
	}
	ls->other_stacks = pk->stacks - lstacks;
	ls->other_bytes = pk->bytes - lbytes;
	ls->other_blocks = pk->blocks - lblocks;
}

/* Where the memory was at the peak, line by line, file:line first. */
/* Not inlined: its names (2 KiB) were emit_text's frame in every
 * report, under each record's frames named (see text_head). */
static __attribute__((noinline)) void text_peak(struct mc_buf *b, const char *p,
						const struct mc_peak *pk,
						const struct peak_lines *ls)
{
	char c1[32], c2[32];
	mc_buf_printf(b, "%s   at the peak of live bytes, %s bytes in %s blocks were live "
		      "(the whole process's):\n", p, mc_commas(pk->bytes, c1),
		      mc_commas(pk->blocks, c2));
	for (uint32_t c = 0; c < ls->nchosen; c++) {
		const struct peak_line *l = &ls->v[ls->chosen[c]];
		mc_buf_printf(b, "%s     ", p);
		site_name(b, l->found, &l->fi, l->inlined);
		if (l->stacks > 1)
			mc_buf_printf(b, ", %llu stacks", (unsigned long long)l->stacks);
		mc_buf_printf(b, ": %s bytes in %s blocks (%.1f%%)\n", mc_commas(l->bytes, c1),
			      mc_commas(l->blocks, c2),
			      pk->bytes ? 100.0 * (double)l->bytes / (double)pk->bytes : 0.0);
	}
	if (ls->other_stacks)
		mc_buf_printf(b, "%s     other sites, %llu stacks: %s bytes in %s blocks\n", p,
			      (unsigned long long)ls->other_stacks, mc_commas(ls->other_bytes, c1),
			      mc_commas(ls->other_blocks, c2));
}

/* The largest stacks at the peak, most bytes first (then most blocks,
 * then the older stack): what "sites" held before lines, kept for
 * the readers of that key.  A selection into at most max places. */
static uint32_t top_stacks(const struct mc_peak *pk, uint32_t *top, uint32_t max)
{
	uint32_t n = 0;
	for (size_t i = 0; i < pk->n; i++) {
		const struct mc_peak_site *a = &pk->all[i];
		uint32_t at = n;
		while (at > 0) {
			const struct mc_peak_site *b = &pk->all[top[at - 1]];
			if (site_larger(b, a) || (!site_larger(a, b) && b->stack < a->stack))
				break;
			at--;
		}
		if (at >= max)
			continue;
		if (n < max)
			n++;
		memmove(&top[at + 1], &top[at], (n - 1 - at) * sizeof *top);
		top[at] = (uint32_t)i;
	}
	return n;
}

/* pre's n bytes, then v in decimal (null when MEMCHECK_UNKNOWN and
 * unknown_null): a record's numbers in one reservation each, the room
 * exact (the buffer grows where the bytes need it, as before).  Through
 * JSON_NUM and JSON_U64, with a string literal: three mc_buf_puts and an
 * mc_buf_u64 were ~330 instructions a number. */
static void json_num(struct mc_buf *b, const char *pre, size_t n, uint64_t v, bool unknown_null)
{
	bool null = unknown_null && v == MEMCHECK_UNKNOWN;
	size_t dn = null ? 4 : dec_len(v);
	char *w = mc_buf_room(b, n + dn);
	if (!w)
		return;
	memcpy(w, pre, n);
	mc_buf_end(b, null ? PUT_LIT(w + n, "null") : dec_at(w + n, v, dn));
}
#define JSON_NUM(b, lit, v) json_num((b), (lit), sizeof(lit) - 1, (v), false)
/* ,"key":v, or null where unknown */
#define JSON_U64(b, key, v) json_num((b), ",\"" key "\":", sizeof(",\"" key "\":") - 1, (v), true)

/* memcheck-report(5): "lines", a line each, with all of its bytes and
 * blocks, how many stacks they are, and its largest stack with that
 * stack's own figures, the rest in "lines_other"; and "sites", the
 * largest stacks as reports before lines listed them, the rest in
 * "other" (a reader of those keys reads what it always did). */
static void json_peak(struct mc_buf *b, const struct mc_peak *pk, const struct peak_lines *ls,
		      struct json_memo *memo)
{
	if (!pk) {
		PUTL(b, ",\"peak_snapshot\":null");
		return;
	}
	JSON_NUM(b, ",\"peak_snapshot\":{\"live_bytes\":", pk->bytes);
	JSON_NUM(b, ",\"live_blocks\":", pk->blocks);
	PUTL(b, ",\"lines\":[");
	for (uint32_t c = 0; c < ls->nchosen; c++) {
		const struct peak_line *l = &ls->v[ls->chosen[c]];
		const struct mc_peak_site *top = &pk->all[l->top];
		if (c)
			PUTL(b, ",");
		JSON_NUM(b, "{\"bytes\":", l->bytes);
		JSON_NUM(b, ",\"blocks\":", l->blocks);
		JSON_NUM(b, ",\"stacks\":", l->stacks);
		JSON_NUM(b, ",\"stack_bytes\":", top->bytes);
		JSON_NUM(b, ",\"stack_blocks\":", top->blocks);
		PUTL(b, ",\"stack\":");
		json_stack(b, top->stack, memo);
		PUTL(b, "}");
	}
	JSON_NUM(b, "],\"lines_other\":{\"stacks\":", ls->other_stacks);
	JSON_NUM(b, ",\"bytes\":", ls->other_bytes);
	JSON_NUM(b, ",\"blocks\":", ls->other_blocks);
	PUTL(b, "},\"sites\":[");
	uint32_t top[MC_PEAK_SITES_MAX];
	uint32_t n = top_stacks(pk, top, peak_max());
	uint64_t bytes = 0, blocks = 0;
	for (uint32_t c = 0; c < n; c++) {
		const struct mc_peak_site *t = &pk->all[top[c]];
		if (c)
			PUTL(b, ",");
		JSON_NUM(b, "{\"bytes\":", t->bytes);
		JSON_NUM(b, ",\"blocks\":", t->blocks);
		PUTL(b, ",\"stack\":");
		json_stack(b, t->stack, memo);
		PUTL(b, "}");
		bytes += t->bytes;
		blocks += t->blocks;
	}
	JSON_NUM(b, "],\"other\":{\"sites\":", pk->stacks - n);
	JSON_NUM(b, ",\"bytes\":", pk->bytes - bytes);
	JSON_NUM(b, ",\"blocks\":", pk->blocks - blocks);
	PUTL(b, "}}");
}

/* Seconds as JSON without printf's %f, which follows the program's
 * locale (a decimal comma is not JSON). */
static void json_seconds(struct mc_buf *b, double s)
{
	unsigned long long us = s > 0 ? (unsigned long long)(s * 1e6 + 0.5) : 0;
	char frac[8] = { '.' };
	for (int i = 6, f = (int)(us % 1000000); i >= 1; i--, f /= 10)
		frac[i] = (char)('0' + f % 10);
	mc_buf_u64(b, us / 1000000);
	mc_buf_put(b, frac, 7);
}

static void json_sample_u64(struct mc_buf *b, uint64_t v)
{
	if (v == MEMCHECK_UNKNOWN)
		PUTL(b, ",null");
	else
		JSON_NUM(b, ",", v);
}

static void json_timeline(struct mc_buf *b, const struct mc_timeline *tl)
{
	if (!tl) {
		mc_buf_puts(b, ",\"timeline\":null");
		return;
	}
	mc_buf_printf(b, ",\"timeline\":{\"step\":%llu,\"columns\":[\"seconds\",\"moved\","
		      "\"live_bytes\",\"rss\",\"retained_bytes\"],\"samples\":[",
		      (unsigned long long)tl->step);
	for (uint32_t i = 0; i < tl->n; i++) {
		const struct mc_sample *s = &tl->samples[i];
		mc_buf_puts(b, i ? ",[" : "[");
		json_seconds(b, s->seconds);
		json_sample_u64(b, s->moved);
		json_sample_u64(b, s->live);
		json_sample_u64(b, s->rss);
		json_sample_u64(b, s->retained);
		mc_buf_puts(b, "]");
	}
	mc_buf_puts(b, "]}");
}

static const char *const kind_key[] = { "definitely_lost", "indirectly_lost",
					 "possibly_lost", "still_reachable" };
static const char *const kind_text[] = { "definitely lost", "indirectly lost",
					  "possibly lost", "still reachable" };

static void json_count_at(struct mc_buf *b, const char *key, size_t n,
			  const struct memcheck_count *c)
{
	mc_buf_put(b, key, n);
	if (c->blocks == MEMCHECK_UNKNOWN) { /* valgrind mode's indirectly_lost */
		PUTL(b, "null");
		return;
	}
	JSON_NUM(b, "{\"blocks\":", c->blocks);
	JSON_NUM(b, ",\"bytes\":", c->bytes);
	PUTL(b, "}");
}
/* ,"key":{"blocks":..,"bytes":..} */
#define JSON_COUNT(b, key, c) json_count_at((b), ",\"" key "\":", sizeof(",\"" key "\":") - 1, (c))

/* A killed process's scan given up (region.c): rare, apart (cold). */
static __attribute__((noinline, cold)) void leak_check_incomplete(struct mc_buf *b,
								 const struct mc_region_report *rr)
{
	if (rr->valgrind_exit)
		PUTL(b, ",\"leak_check\":\"valgrind_exit\"");
	else
		PUTL(b, ",\"leak_check\":\"incomplete\"");
}

static __attribute__((noinline, cold)) void text_incomplete(struct mc_buf *b, const char *p)
{
	mc_buf_strs(b, p, "    (reachability scan given up at the signal's deadline, "
		    "MEMCHECK_FATAL_SCAN_MS: the leak kinds are unknown)\n", NULL);
}

/* Failure injection: the region's id and allocation calls (null unless
 * counting was on), whether the test expects to fail on OOM, and the
 * stacks of the failures injected. */
static void json_fault(struct mc_buf *b, const struct mc_fault_info *f)
{
	if (f && f->counted) {
		PUTL(b, ",\"region_id\":");
		mc_buf_json_str(b, f->id);
		JSON_NUM(b, ",\"alloc_calls\":", f->calls);
	} else {
		PUTL(b, ",\"region_id\":null,\"alloc_calls\":null");
	}
	if (f && f->oom_expected)
		PUTL(b, ",\"oom_expected\":true,\"injected_stacks\":[");
	else
		PUTL(b, ",\"oom_expected\":false,\"injected_stacks\":[");
	for (size_t i = 0; f && i < f->nstacks; i++) {
		if (i)
			PUTL(b, ",");
		JSON_NUM(b, "{\"failures\":", f->stacks[i].count);
		PUTL(b, ",\"stack\":");
		json_stack(b, f->stacks[i].stack, NULL);
		PUTL(b, "}");
	}
	PUTL(b, "]");
}

/* One line to MEMCHECK_FAIL_LOG. */
static void append_line(const char *path, const struct mc_buf *b, const char *what)
{
	static _Atomic int said;
	mc_fds_room_begin(); /* room above the program's open-file limit */
	mc_append(path, b->s, b->len, what, &said, mc_opt.text_timeout);
	mc_fds_room_end();
}

void mc_report_injection(const char *region_id, const char *region, uint64_t index,
			 uint32_t stack)
{
	mc_own_work_begin(true);
	struct mc_buf b = { 0 };
	mc_buf_puts(&b, "{\"region_id\":");
	mc_buf_json_str(&b, region_id);
	mc_buf_puts(&b, ",\"region\":");
	mc_buf_json_str(&b, region);
	mc_buf_printf(&b, ",\"index\":%llu,\"pid\":%d,\"program\":",
		      (unsigned long long)index, (int)getpid());
	mc_buf_json_str(&b, mc_program());
	mc_buf_puts(&b, ",\"stack\":");
	json_stack(&b, stack, NULL);
	mc_buf_puts(&b, "}\n");
	if (!b.oom)
		append_line(mc_opt.fail_log, &b, "MEMCHECK_FAIL_LOG");
	mc_buf_free(&b);
	mc_own_work_end();
}

void mc_report_expect_oom(const char *region_id, const char *region)
{
	struct mc_buf b = { 0 };
	mc_buf_puts(&b, "{\"region_id\":");
	mc_buf_json_str(&b, region_id);
	mc_buf_puts(&b, ",\"region\":");
	mc_buf_json_str(&b, region);
	mc_buf_printf(&b, ",\"oom_expected\":true,\"pid\":%d}\n", (int)getpid());
	if (!b.oom)
		append_line(mc_opt.fail_log, &b, "MEMCHECK_FAIL_LOG");
	mc_buf_free(&b);
}

/* Where allocations failed under a limit memcheck's mappings count
 * against (below, after emit_text: a string both use is emit_text's,
 * in its group's read-only data) */
static void text_shortfall(struct mc_buf *b, const struct memcheck_result *r, const char *p);
static void json_shortfall(struct mc_buf *b, const struct memcheck_result *r);

/* The process's JSON line is written at exit into memory faulted in as
 * touched (ownmap.c's tail), and a leaking process's line is 5-20 KiB: a
 * buffer of 4 KiB that doubled copied it twice, into 8 and 16 KiB, where
 * one of JSON_EXIT_BUF takes only the pages the line fills (a leaking
 * bench/suite_test 1's exit: 4 page faults fewer).  Not cleared where
 * it reuses the tail's memory (mc_map_io_written): the line is written
 * before it is read, mc_buf's NUL after each piece. */
#define JSON_EXIT_BUF (16 * 1024)

static __attribute__((noinline)) void emit_json(const struct mc_region_report *rr,
						 const struct peak_lines *ls)
{
	const struct memcheck_result *r = rr->r;
	struct mc_buf b = { 0 };
	if (rr->process && (b.s = mc_map_io_written(JSON_EXIT_BUF)))
		b.cap = JSON_EXIT_BUF;
	struct json_memo memo = { 0 };
	PUTL(&b, "{\"name\":");
	mc_buf_json_str(&b, r->name);
	PUTL(&b, ",\"pid\":");
	mc_buf_int(&b, (int)getpid());
	PUTL(&b, ",\"program\":");
	mc_buf_json_str(&b, mc_program());
	mc_args_json(&b);
	PUTL(&b, ",\"allocator\":");
	mc_buf_json_str(&b, mc_allocator_name());
	if (rr->process)
		PUTL(&b, ",\"implicit\":true");
	else
		PUTL(&b, ",\"implicit\":false");
	JSON_U64(&b, "allocs", r->allocs);
	JSON_U64(&b, "frees", r->frees);
	JSON_U64(&b, "reallocs", r->reallocs);
	JSON_U64(&b, "failed_allocs", r->failed_allocs);
	JSON_U64(&b, "injected", r->injected);
	if (unlikely(r->failed_allocs))
		json_shortfall(&b, r);
	JSON_U64(&b, "bytes_allocated", r->bytes_allocated);
	JSON_U64(&b, "bytes_freed", r->bytes_freed);
	JSON_U64(&b, "live_blocks", r->live_blocks);
	JSON_U64(&b, "live_bytes", r->live_bytes);
	JSON_U64(&b, "peak_live_bytes", r->peak_live_bytes);
	JSON_COUNT(&b, "definitely_lost", &r->definitely_lost);
	JSON_COUNT(&b, "indirectly_lost", &r->indirectly_lost);
	JSON_COUNT(&b, "possibly_lost", &r->possibly_lost);
	JSON_COUNT(&b, "still_reachable", &r->still_reachable);
	JSON_COUNT(&b, "suppressed", &r->suppressed);
	if (rr->valgrind)
		PUTL(&b, ",\"leak_check\":\"valgrind\"");
	else if (unlikely(rr->incomplete || rr->valgrind_exit))
		leak_check_incomplete(&b, rr);
	else
		PUTL(&b, ",\"leak_check\":\"memcheck\"");
	JSON_U64(&b, "double_frees", r->double_frees);
	JSON_U64(&b, "invalid_frees", r->invalid_frees);
	JSON_U64(&b, "retained_bytes", r->retained_bytes);
	JSON_U64(&b, "retained_after_release", r->retained_after_release);
	JSON_U64(&b, "timed_purge_ms", mc_allocator_timed_purge_ms());
	JSON_U64(&b, "rss_begin", r->rss_begin);
	JSON_U64(&b, "rss_end", r->rss_end);
	JSON_U64(&b, "peak_rss", r->peak_rss);
	if (r->peak_rss_whole_process)
		PUTL(&b, ",\"peak_rss_scope\":\"process\"");
	else
		PUTL(&b, ",\"peak_rss_scope\":\"region\"");
	/* Not %f: the program may have set a locale whose decimal point is
	 * a comma, which is not JSON. */
	if (rr->scan_seconds >= 0) {
		PUTL(&b, ",\"scan_seconds\":");
		json_seconds(&b, rr->scan_seconds);
	} else {
		PUTL(&b, ",\"scan_seconds\":null");
	}
	PUTL(&b, ",\"seconds\":");
	json_seconds(&b, r->seconds);
	/* written at the process's exit: the status the program itself
	 * exits with, before memcheck's rule changes it (memcheck run does
	 * not count a failure of a process that exited non-zero on its
	 * own: exitstatus.c) */
	if (mc_exit_own >= 0)
		JSON_U64(&b, "exit_status", (uint64_t)mc_exit_own);
	/* ended by a fatal signal (fatal.c): the process dies of it next */
	if (mc_fatal_sig) {
		JSON_U64(&b, "signal", (uint64_t)mc_fatal_sig);
		PUTL(&b, ",\"signal_name\":");
		mc_buf_json_str(&b, mc_fatal_name(mc_fatal_sig));
	}
	if (r->pass)
		PUTL(&b, ",\"verdict\":\"pass\",\"violations\":[");
	else
		PUTL(&b, ",\"verdict\":\"fail\",\"violations\":[");
	/* violations[] holds "; "-separated messages */
	const char *v = r->violations;
	for (int i = 0; *v; i++) {
		const char *end = strstr(v, "; ");
		size_t len = end ? (size_t)(end - v) : strlen(v);
		char one[sizeof r->violations];
		memcpy(one, v, len);
		one[len] = 0;
		if (i)
			PUTL(&b, ",");
		mc_buf_json_str(&b, one);
		v += len + (end ? 2 : 0);
	}
	PUTL(&b, "],\"leaks\":[");
	for (size_t i = 0; i < rr->nleaks; i++) {
		const struct mc_leak *l = &rr->leaks[i];
		if (i)
			PUTL(&b, ",");
		PUTL(&b, "{\"kind\":\"");
		mc_buf_puts(&b, kind_key[l->kind & 3]);
		JSON_NUM(&b, "\",\"blocks\":", l->blocks);
		JSON_NUM(&b, ",\"bytes\":", l->bytes);
		PUTL(&b, ",\"stack\":");
		json_stack(&b, l->stack, &memo);
		PUTL(&b, "}");
	}
	PUTL(&b, "],\"suppressions\":[");
	for (size_t i = 0; rr->supp && i < rr->supp->nused; i++) {
		const struct mc_supp_used *u = &rr->supp->used[i];
		if (i)
			PUTL(&b, ",");
		PUTL(&b, "{\"name\":");
		mc_buf_json_str(&b, u->name);
		PUTL(&b, ",\"file\":");
		mc_buf_json_str(&b, u->file);
		PUTL(&b, ",\"line\":");
		mc_buf_int(&b, u->line);
		JSON_NUM(&b, ",\"records\":", u->records);
		JSON_NUM(&b, ",\"blocks\":", u->blocks);
		JSON_NUM(&b, ",\"bytes\":", u->bytes);
		PUTL(&b, "}");
	}
	PUTL(&b, "]");
	json_fault(&b, rr->fault);
	json_peak(&b, rr->peak, ls, &memo);
	json_timeline(&b, rr->timeline);
	mc_buf_puts(&b, "}\n");

	if (b.oom) {
		mc_log("out of memory writing the report of region \"%s\"", r->name);
	} else {
		static _Atomic int said; /* once per process, not per region */
		if (mc_append_dropped(mc_append(mc_opt.report, b.s, b.len, "MEMCHECK_REPORT",
						&said, mc_opt.text_timeout)))
			mc_exit_record_dropped();
	}
	mc_buf_free(&b);
}

/* MEMCHECK_TEXT=auto's answer for a passing region: its line where
 * memcheck's text goes to a file of its own (MEMCHECK_LOG), none where it
 * goes to the program's standard error.  A test script keeps or compares
 * what its programs write there (pcre2's RunGrepTest and xz's
 * test_scripts.sh diff 2>&1 against the expected; jq's shtest reads a
 * program's terminal through script(1), so a terminal tells nothing). */
static inline __attribute__((always_inline)) bool passing_line(void)
{
	if (mc_opt.text == MC_TEXT_AUTO)
		return mc_opt.log && mc_opt.log[0];
	return mc_opt.text == MC_TEXT_SUMMARY || mc_opt.text == MC_TEXT_FULL;
}

/* emit_text's first lines: the whole text of a region that passed
 * (true), else the heading and the blocks in use.  Functions of their
 * own, this and text_end: their names escaped (2 KiB each) are off the
 * stack while the records' frames are named and printed, a process's
 * exit's deepest path, where each 4 KiB deeper was a page fault. */
/* The process region that valgrind's exit judges (region.c's
 * judged_at_valgrind_exit): one line, whatever the text's detail, in
 * place of figures memcheck never counted. */
static __attribute__((noinline, cold)) void text_valgrind_exit(struct mc_buf *b, const char *p,
								const char *name,
								const char *prog,
								const char *alloc)
{
	mc_buf_strs(b, p, " memcheck: \"", name, "\" in ", prog, ": not measured (", alloc,
		    "): valgrind's malloc serves every object, memcheck's included; "
		    "valgrind's leak check at its exit judges the process\n", NULL);
}

static __attribute__((noinline)) bool text_head(struct mc_buf *b,
						const struct mc_region_report *rr,
						const char *p, const char *name, bool fail)
{
	const struct memcheck_result *r = rr->r;
	char c1[32], c2[32], c3[32], c4[32];
	/* The program's names, escaped: see emit_text's region name. */
	char prog[1024], alloc[1024];
	mc_text_escape(mc_program(), prog, sizeof prog);
	mc_text_escape(mc_allocator_name(), alloc, sizeof alloc);
	if (unlikely(rr->valgrind_exit)) {
		text_valgrind_exit(b, p, name, prog, alloc);
		return true;
	}
	if (!fail && mc_opt.text != MC_TEXT_FULL) {
		mc_buf_strs(b, p, " memcheck: \"", name, "\" in ", prog, ": ",
			    num(r->allocs, c1), " allocs, ", num(r->frees, c2), " frees, ",
			    num(r->bytes_allocated, c3), " bytes allocated, peak ",
			    num(r->peak_live_bytes, c4), " bytes live, no leaks (", alloc,
			    rr->valgrind ? "; valgrind's leak check" : "", ")\n", NULL);
		return true;
	}
	mc_buf_strs(b, p, " memcheck: region \"", name, "\" in ", prog, " (allocator ", alloc,
		    ")\n", p, "   in use at end: ", num(r->live_bytes, c1), " bytes in ",
		    num(r->live_blocks, c2), " blocks\n", NULL);
	return false;
}

/* emit_text's injected failures (a function of its own: see text_head) */
static __attribute__((noinline)) void text_injected(struct mc_buf *b,
						    const struct mc_region_report *rr,
						    const char *p)
{
	const struct memcheck_result *r = rr->r;
	const struct mc_fault_info *f = rr->fault;
	char c1[32];
	char id[4 * sizeof f->id];
	mc_buf_printf(b, "%s   injected failures: %s%s%s%s\n", p, num(r->injected, c1),
		      f && f->counted ? " (region id " : "",
		      f && f->counted ? mc_text_escape(f->id, id, sizeof id) : "",
		      f && f->counted ? ")" : "");
	for (size_t i = 0; f && i < f->nstacks; i++) {
		mc_buf_printf(b, "%s   %s allocation failures injected at:\n", p,
			      num(f->stacks[i].count, c1));
		mc_text_stack(b, p, f->stacks[i].stack);
	}
}

/* emit_text's last lines: the suppressions used, the verdict. */
static __attribute__((noinline)) void text_end(struct mc_buf *b,
					       const struct mc_region_report *rr,
					       const char *p, bool fail)
{
	const struct memcheck_result *r = rr->r;
	char c1[32], c2[32], c3[32];
	/* A file's entries share its name (one string a file): escaped once
	 * for all of them, where each line escaped it again (a measured
	 * /bin/date's exit: ~1.6 K instructions an escape). */
	const char *escaped = NULL;
	char sfile[1024];
	for (size_t i = 0; rr->supp && i < rr->supp->nused; i++) {
		const struct mc_supp_used *u = &rr->supp->used[i];
		char sname[1024];
		if (i == 0)
			mc_buf_strs(b, p, "\n", NULL);
		if (u->file != escaped) {
			mc_text_escape(u->file, sfile, sizeof sfile);
			escaped = u->file;
		}
		mc_buf_strs(b, p, " used_suppression: ", num(u->records, c1), " ",
			    mc_text_escape(u->name, sname, sizeof sname), " ", sfile, ":", NULL);
		mc_buf_int(b, u->line);
		mc_buf_strs(b, " suppressed: ", num(u->bytes, c2), " bytes in ",
			    num(u->blocks, c3), " blocks\n", NULL);
	}
	char violations[4 * sizeof r->violations];
	mc_buf_strs(b, p, " ", fail ? "FAIL: " : "PASS",
		    fail ? mc_text_escape(r->violations, violations, sizeof violations) : "", "\n",
		    NULL);
}

static __attribute__((noinline)) void emit_text(const struct mc_region_report *rr,
						 const struct peak_lines *ls)
{
	const struct memcheck_result *r = rr->r;
	bool fail = !r->pass;
	if (mc_opt.text == MC_TEXT_NONE || (!fail && !passing_line()))
		return;
	/* The lines in pieces (mc_buf_strs, mc_commas, put_bytes), not
	 * through vsnprintf: a leaking process's report was ~45 K
	 * instructions of formats (callgrind, bench/suite_test 5). */
	char p[32], c1[32], c2[32], c3[32], t[32];
	/* The region's name, escaped (mc_text_escape): a region name with
	 * a newline in it must not make a line of its own. */
	char name[4 * sizeof r->name];
	mc_text_escape(r->name, name, sizeof name);
	mc_text_pid(p);
	struct mc_buf b = { 0 };
	if (text_head(&b, rr, p, name, fail)) {
		mc_text_write(b.s, b.len);
		mc_buf_free(&b);
		return;
	}
	mc_buf_strs(&b, p, "   total heap usage: ", num(r->allocs, c1), " allocs, ",
		    num(r->frees, c2), " frees, ", num(r->bytes_allocated, c3),
		    " bytes allocated\n", NULL);
	mc_buf_strs(&b, p, "   reallocs: ", num(r->reallocs, c1), ", failed allocations: ",
		    num(r->failed_allocs, c2), ", peak live: ", num(r->peak_live_bytes, c3),
		    " bytes\n", NULL);
	if (r->injected)
		text_injected(&b, rr, p);
	if (unlikely(r->failed_allocs))
		text_shortfall(&b, r, p);
	mc_buf_strs(&b, p, "   RSS: ", NULL);
	if (r->rss_begin == MEMCHECK_UNKNOWN && r->rss_end == MEMCHECK_UNKNOWN &&
	    r->peak_rss == MEMCHECK_UNKNOWN && rr->rss_asked) {
		mc_buf_puts(&b, "unknown (/proc/self/status and statm not read)");
	} else if (r->rss_begin == MEMCHECK_UNKNOWN && r->rss_end == MEMCHECK_UNKNOWN &&
		   r->peak_rss == MEMCHECK_UNKNOWN) {
		/* Measured only where a report can show it (footprint.c):
		 * the summary's failing region says how to have it. */
		mc_buf_puts(&b, "not measured (MEMCHECK_REPORT, MEMCHECK_TEXT=full or an RSS "
				"rule in MEMCHECK_BUDGET measure it)");
	} else {
		put_bytes(&b, r->rss_begin);
		mc_buf_puts(&b, " at start, ");
		put_bytes(&b, r->rss_end);
		mc_buf_puts(&b, " at end, peak ");
		put_bytes(&b, r->peak_rss);
	}
	mc_buf_strs(&b, r->peak_rss_whole_process ? " (the process's: clear_refs refused)" : "",
		    "; ", secs(r->seconds, t), " s\n", NULL);
	if (r->retained_bytes != MEMCHECK_UNKNOWN) {
		mc_buf_strs(&b, p, "   allocator retains ", NULL);
		put_bytes(&b, r->retained_bytes);
		mc_buf_puts(&b, " not in use");
		if (r->retained_after_release != MEMCHECK_UNKNOWN) {
			mc_buf_puts(&b, ", ");
			put_bytes(&b, r->retained_after_release);
			mc_buf_puts(&b, " after its release call");
		}
		mc_buf_puts(&b, "\n");
	}
	if (rr->peak && (mc_opt.text == MC_TEXT_FULL || mc_violations_name_peak(r->violations)))
		text_peak(&b, p, rr->peak, ls);
	if (r->double_frees || r->invalid_frees)
		mc_buf_strs(&b, p, "   heap errors: ", num(r->double_frees, c1), " double frees, ",
			    num(r->invalid_frees, c2), " frees of unknown pointers\n", NULL);
	if (!mc_opt.track)
		mc_buf_printf(&b, "%s   (MEMCHECK_TRACK=0: calls and bytes allocated only; the "
			      "blocks in use are the net count)\n", p);
	for (size_t i = 0; i < rr->nleaks; i++) {
		const struct mc_leak *l = &rr->leaks[i];
		/* valgrind's words ("in loss record N of M"): tools that read
		 * valgrind's output, such as CTest, count these lines. */
		mc_buf_strs(&b, p, "\n", p, " ", num(l->bytes, c1), " bytes in ",
			    num(l->blocks, c2), " blocks are ", kind_text[l->kind & 3],
			    " in loss record ", NULL);
		mc_buf_u64(&b, i + 1);
		mc_buf_puts(&b, " of ");
		mc_buf_u64(&b, rr->nleak_groups);
		mc_buf_strs(&b, " in region \"", name, "\"\n", NULL);
		mc_text_stack(&b, p, l->stack);
	}
	if (rr->nleak_groups > rr->nleaks)
		mc_buf_printf(&b, "%s\n%s (%zu more leak records not shown; MEMCHECK_MAX_LEAKS=%d)\n",
			      p, p, rr->nleak_groups - rr->nleaks, mc_opt.max_leaks);
	if (rr->valgrind) {
		mc_buf_printf(&b, "%s\n%s LEAK SUMMARY (valgrind's: its leak checks at the region's "
			      "begin and end, the differences; its loss records are in its "
			      "own output):\n", p, p);
		mc_buf_printf(&b, "%s    definitely lost (indirectly lost included): %s bytes in "
			      "%s blocks\n", p, num(r->definitely_lost.bytes, c1),
			      num(r->definitely_lost.blocks, c2));
		const struct memcheck_count *k[] = { &r->possibly_lost, &r->still_reachable,
						     &r->suppressed };
		static const char *const what[] = { "possibly lost", "still reachable",
						    "suppressed" };
		for (int i = 0; i < 3; i++)
			mc_buf_printf(&b, "%s    %s: %s bytes in %s blocks\n", p, what[i],
				      num(k[i]->bytes, c1), num(k[i]->blocks, c2));
	} else if (r->live_blocks && mc_opt.track) {
		const struct memcheck_count *k[] = { &r->definitely_lost, &r->indirectly_lost,
						     &r->possibly_lost, &r->still_reachable };
		mc_buf_printf(&b, "%s\n%s LEAK SUMMARY:\n", p, p);
		for (int i = 0; i < 4; i++)
			mc_buf_strs(&b, p, "    ", kind_text[i], ": ", num(k[i]->bytes, c1),
				    " bytes in ", num(k[i]->blocks, c2), " blocks\n", NULL);
		mc_buf_strs(&b, p, "    suppressed: ", num(r->suppressed.bytes, c1), " bytes in ",
			    num(r->suppressed.blocks, c2), " blocks\n", NULL);
		if (rr->scan_seconds >= 0)
			mc_buf_strs(&b, p, "    (reachability scan: ", secs(rr->scan_seconds, t),
				    " s)\n", NULL);
		else if (unlikely(rr->incomplete))
			text_incomplete(&b, p);
		else
			mc_buf_strs(&b, p, "    (no reachability scan, MEMCHECK_SCAN=0 or no "
				    "memory for it: every block left behind counts as "
				    "definitely lost)\n", NULL);
	}
	text_end(&b, rr, p, fail);
	mc_text_write(b.s, b.len);
	mc_buf_free(&b);
}

/* memcheck_leak_site(): the stack of the last region's failing leak,
 * symbolized only when asked (a test framework's failure). */
static _Atomic uint32_t last_leak;

void mc_report_last_leak(bool pass, const struct mc_leak *leaks, size_t n)
{
	uint32_t stack = 0;
	for (size_t i = 0; i < n && !pass && !stack; i++)
		if (leaks[i].kind == MC_KIND_DEFINITE || leaks[i].kind == MC_KIND_POSSIBLE)
			stack = leaks[i].stack;
	atomic_store(&last_leak, stack);
}

/* Allocations failed, not injected, in a process where memcheck's own
 * mappings counted against the program's RLIMIT_AS or RLIMIT_DATA (one
 * whose soft and hard limits are one, which it may not raise:
 * rlimits.c's mc_rlimits_short): the program had that much less room
 * than without memcheck, and a failure it saw may be memcheck's doing.
 * Said in the text and the record (limit_shortfall), where a test that
 * runs until malloc fails got fewer blocks and nothing said why. */
struct shortfall {
	const char *name;
	uint64_t limit, bytes;
};

static __attribute__((noinline, cold)) bool shortfall_of(const struct memcheck_result *r,
							  struct shortfall *s)
{
	uint64_t injected = r->injected == MEMCHECK_UNKNOWN ? 0 : r->injected;
	return r->failed_allocs != MEMCHECK_UNKNOWN && r->failed_allocs > injected &&
	       mc_rlimits_short(&s->name, &s->limit, &s->bytes);
}

static __attribute__((noinline, cold)) void text_shortfall(struct mc_buf *b,
							    const struct memcheck_result *r,
							    const char *p)
{
	struct shortfall s;
	if (!shortfall_of(r, &s))
		return;
	/* one format: a literal of its own (" of " alone was emit_text's,
	 * which then read it from this function's, later, section) */
	mc_buf_printf(b, "%s   note: allocations failed under %s of %.1f MiB, which counts "
		      "memcheck's own mappings too (%.1f MiB of them at this report; soft and "
		      "hard limits one, which memcheck may not raise): without memcheck the "
		      "program has up to that much more room (memcheck(7), Limits)\n", p, s.name,
		      (double)s.limit / 1048576.0, (double)s.bytes / 1048576.0);
}

static __attribute__((noinline, cold)) void json_shortfall(struct mc_buf *b,
							    const struct memcheck_result *r)
{
	struct shortfall s;
	if (!shortfall_of(r, &s))
		return;
	PUTL(b, ",\"limit_shortfall\":{\"resource\":\"");
	mc_buf_puts(b, s.name);
	JSON_NUM(b, "\",\"limit\":", s.limit);
	JSON_NUM(b, ",\"memcheck_bytes\":", s.bytes);
	PUTL(b, "}");
}

/* Past the allocation functions (allocfn.c): the first frame with a
 * source file outside the system's libraries (the program's code, not
 * strdup's or the C++ runtime's), else the first with a source file. */
MC_API int memcheck_leak_site(const char **file, int *line, const char **function)
{
	static struct mc_frame_info site;
	static char shown[MC_SHOWN_MAX]; /* the name as the reports show it */
	const char *name = NULL;
	uint32_t stack = atomic_load(&last_leak);
	if (!stack)
		return -1;
	mc_guard_enter();
	const uintptr_t *f;
	int nf = mc_stack_get_code(stack, &f);
	struct mc_frame_info fi[MC_MAX_INLINE];
	int lead = mc_allocfn_lead(f, nf, fi);
	bool found = false;
	for (int pass = 0; pass < 2 && !found; pass++)
		for (int i = 0, at = 0; i < nf && !found; i++) {
			int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
			for (int j = 0; j < k && !found; j++, at++)
				if (fi[j].file[0] && (at >= lead || pass) &&
				    (pass || !mc_program_installed(fi[j].object))) {
					site = fi[j];
					/* a frame's own function is the last k gave */
					name = mc_frame_shown(&site, j + 1 < k, shown, sizeof shown);
					found = true;
				}
		}
	mc_symbolize_end();
	mc_guard_leave();
	if (!found)
		return -1;
	if (file)
		*file = site.file;
	if (line)
		*line = site.line;
	if (function)
		*function = name;
	return 0;
}

void mc_report_emit(const struct mc_region_report *rr)
{
	/* the peak's lines are named only when a report shows them */
	const struct memcheck_result *r = rr->r;
	bool text_shows = mc_opt.text != MC_TEXT_NONE &&
			  (r->pass ? mc_opt.text == MC_TEXT_FULL
				   : mc_opt.text == MC_TEXT_FULL || mc_violations_name_peak(r->violations));
	struct peak_lines ls = { 0 };
	if (rr->peak && (mc_opt.report || text_shows))
		peak_lines(rr->peak, &ls);
	/* The process in valgrind's words (vgtext.c): after memcheck's own
	 * full text, where MEMCHECK_TEXT=full asks for it too. */
	bool vg_text = rr->process && mc_opt.valgrind_text && mc_opt.text != MC_TEXT_NONE;
	if (!vg_text || mc_opt.text == MC_TEXT_FULL)
		emit_text(rr, &ls);
	if (vg_text)
		mc_vgxml_emit(rr);
	if (mc_opt.report)
		emit_json(rr, &ls);
	peak_lines_free(&ls);
	/* The process region ends last, as the process exits. */
	if (rr->process)
		mc_symbolize_end_at_exit();
	else
		mc_symbolize_end();
}

void mc_report_heap_error(const char *what, uintptr_t ptr, uint64_t size,
			  uint32_t alloc_stack, uint32_t free_stack, uint32_t now_stack,
			  uintptr_t block, const struct mc_stack_place *on)
{
	char p[32], c1[32], c2[32];
	mc_own_work_begin(true);
	mc_fds_room_begin(); /* the log's file, libdw: above the program's limit */
	bool fresh;
	int slot = mc_vgtext_error(free_stack ? 1 : block ? 2 : 3, now_stack, &fresh);
	if (mc_vgtext_silent() || /* counted, not said */
	    mc_vgxml_heap_error(slot, fresh, ptr, size, alloc_stack, free_stack, now_stack, block,
				on) ||
	    mc_vgtext_heap_error(slot, fresh, ptr, size, alloc_stack, free_stack, now_stack, block, on)) {
		mc_fds_room_end();
		mc_own_work_end();
		return;
	}
	mc_text_pid(p);
	struct mc_buf b = { 0 };
	/* A block memcheck knows of, freed again or freed through a pointer
	 * inside it: valgrind's heading, which tools that read valgrind's
	 * output (CTest) count. */
	char prog[1024];
	mc_buf_printf(&b, "%s memcheck: %s%s in %s: 0x%lx", p,
		      free_stack || block ? "Invalid free() / delete / delete[] / realloc(): " : "",
		      what, mc_text_escape(mc_program(), prog, sizeof prog), (unsigned long)ptr);
	if (block)
		mc_buf_printf(&b, ", %s bytes inside a block of %s bytes at 0x%lx",
			      mc_commas(ptr - block, c1), mc_commas(size, c2),
			      (unsigned long)block);
	else if (alloc_stack || size)
		mc_buf_printf(&b, " (%s bytes)", mc_commas(size, c1));
	mc_buf_puts(&b, "\n");
	mc_text_stack(&b, p, now_stack);
	if (free_stack) {
		mc_buf_printf(&b, "%s  Block was freed at:\n", p);
		mc_text_stack(&b, p, free_stack);
	}
	if (alloc_stack) {
		mc_buf_printf(&b, "%s  Block was allocated at:\n", p);
		mc_text_stack(&b, p, alloc_stack);
	}
	if (!alloc_stack && !free_stack && !block)
		mc_buf_printf(&b, "%s  (passed on to the allocator: it may come from an "
			      "allocator function memcheck does not wrap)\n", p);
	else
		mc_buf_printf(&b, "%s  (not passed on to the allocator; the program continues)\n", p);
	mc_text_write(b.s, b.len);
	mc_buf_free(&b);
	mc_symbolize_end();
	mc_fds_room_end();
	mc_own_work_end();
}
