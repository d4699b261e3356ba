/*
 * symstr.c - whether a module's debug information could name something
 * containing a string (mc_symbolize_may_name), answered from the bytes
 * of its own string sections and of the compile unit at the address
 * (.debug_aranges and the unit headers read by hand), with a filter of
 * the bytes' words and memos of the answers and the units.  Built from
 * libdw's reading of the module or elfmod.c's, whichever the caller has.
 * Not the names themselves (symname.c).
 */
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"

/* What dstr_has answered, for all modules: apart from mod_caches, whose
 * slots each lookup walks (every page of them is a page fault a short
 * process pays). */
#define DSTR_MEMO 128
#define DSTR_MEMO_LEN 48
#define DSTR_STRINGS (SIZE_MAX - 1)  /* cu: the string sections alone */
#define NO_UNIT (SIZE_MAX - 2)       /* unit_memo's off: the address lies in none */
static struct {
	const struct dstr *d;
	size_t cu;      /* the unit searched, SIZE_MAX: all, DSTR_STRINGS */
	uint8_t len;
	bool found;
	char s[DSTR_MEMO_LEN];
} dstr_memo[DSTR_MEMO];
static int dstr_nmemo;
/* The memo's entries by a hash of (d, cu, s), 1 + the index, 0 free:
 * the memo was searched entry by entry (a leaking bench/suite_test 0's
 * exit: 158 searches of up to 128 entries, 66 K instructions).  At most
 * half full; cleared with the memo (dstr_memo_clear). */
#define DSTR_MEMO_SLOTS (2 * DSTR_MEMO)
static uint8_t dstr_slot[DSTR_MEMO_SLOTS];
_Static_assert(DSTR_MEMO < 256, "a slot holds 1 + an index in a byte");

/* A module's string bytes as a filter (dstr_has): one bit, by a hash,
 * for each whole 4-byte word at a multiple of 4 into its .debug_info,
 * .debug_str and .debug_line_str, at least 4 bits a word.  A string
 * lying in those bytes covers whole words in one of four ways (its
 * offset modulo 4), each of them set; where no way has all its words
 * set, it lies in none of them, which is most of the names of other
 * objects' functions that suppressions hold.  A leaking
 * bench/suite_test 0's exit asked its program 30 such names, each a
 * search of its 3.5 KB (memmem 107 K instructions): 25 are answered by
 * the filter, built for ~7 K, about what one search of the same bytes
 * costs, so it is built at a module's first search.  Up to
 * DSTR_FILTER_MAX bytes (a 64 KiB map at most): past that a module's
 * searches are of one unit's bytes where they can be.  Mapped (not in
 * .bss): the filters' pages are touched only where one is built. */
#define DSTR_FILTER_MAX (256u << 10)
#define DSTR_FILTERS 4
static struct dstr_filter {
	const struct dstr *d;   /* its module, NULL: none */
	uint64_t *bit;          /* mc_map'd: 1 << shift bits */
	unsigned shift;
} dstr_filter[DSTR_FILTERS];
static unsigned dstr_filter_next;

/* The units addresses were found in, by range, a few: the addresses of
 * one stack lie in a few functions. */
#define UNIT_MEMO 16
static struct unit_memo {
	const struct dstr *d;
	uint64_t lo, hi;
	size_t off, n;  /* off SIZE_MAX: all of .debug_info; NO_UNIT: none */
} unit_memo[UNIT_MEMO];
static unsigned unit_next;

static uint32_t dstr_word_hash(const char *p, unsigned shift)
{
	uint32_t w;
	__builtin_memcpy(&w, p, sizeof w);  /* a load, not a call (-fno-builtin) */
	return (w * 0x9e3779b1u) >> (32 - shift);
}

/* The memos of answers, filters and units forgotten: a session's end, a
 * forked child. */
void dstr_memo_clear(void)
{
	if (dstr_nmemo)
		memset(dstr_slot, 0, sizeof dstr_slot);
	dstr_nmemo = 0;
	for (int i = 0; i < DSTR_FILTERS; i++)
		dstr_filter[i].d = NULL;
	memset(unit_memo, 0, sizeof unit_memo);
}

/* The filters' maps given back (a session's end), or forgotten (a
 * forked child, where another thread may have been building one). */
void dstr_filters_free(bool unmap)
{
	for (int i = 0; i < DSTR_FILTERS; i++)
		if (unmap && dstr_filter[i].bit)
			mc_unmap(dstr_filter[i].bit, (size_t)1 << dstr_filter[i].shift >> 3);
	memset(dstr_filter, 0, sizeof dstr_filter);
	dstr_filter_next = 0;
}

/* d forgotten, and what the memos kept of it. */
void dstr_forget(struct dstr *d)
{
	for (int i = 0; i < dstr_nmemo; i++)
		if (dstr_memo[i].d == d)
			dstr_memo[i].d = NULL;
	for (int i = 0; i < UNIT_MEMO; i++)
		if (unit_memo[i].d == d)
			unit_memo[i].d = NULL;
	for (int i = 0; i < DSTR_FILTERS; i++)
		if (dstr_filter[i].d == d)
			dstr_filter[i].d = NULL;
	*d = (struct dstr){ 0 };
}

/* The sections a module's debug names are read from, checked once.
 * Not usable: no .debug_info of its own (libdw then looks for a
 * separate file), compressed sections (their bytes are not the
 * strings), dwz's shared file (.gnu_debugaltlink), a supplementary file
 * (.debug_sup), split DWARF (.debug_addr; DWARF 5 skeleton units):
 * names may then lie elsewhere. */
/* One section of a module's file, for dstr_build: each of want[]'s
 * bytes, and whether its names may lie elsewhere. */
struct dstr_scan {
	struct dstr *d;
	bool elsewhere, info;
};

static void dstr_take(const struct mc_elf_sec *sec, void *arg)
{
	static const char *const want[] = { ".debug_info", ".debug_str", ".debug_line_str",
					    ".debug_aranges", ".debug_abbrev" };
	struct dstr_scan *sc = arg;
	const char *name = sec->name;
	/* Every name below starts ".d", ".z" or ".g": the others (most of
	 * a file's sections) compared with none of them, not ten (a
	 * leaking bench/suite_test 0's exit: 39 sections, 13 K
	 * instructions). */
	if (name[0] != '.' || (name[1] != 'd' && name[1] != 'z' && name[1] != 'g'))
		return;
	/* (A stripped Debian binary keeps .gnu_debugaltlink: it counts
	 * only beside debug information.) */
	sc->elsewhere |= strncmp(name, ".zdebug", 7) == 0 ||
			 strcmp(name, ".gnu_debugaltlink") == 0 || strcmp(name, ".debug_sup") == 0 ||
			 strcmp(name, ".debug_addr") == 0 ||
			 (strncmp(name, ".debug_", 7) == 0 && (sec->flags & SHF_COMPRESSED));
	for (size_t k = 0; k < MC_ARRAY_SIZE(want); k++) {
		if (strcmp(name, want[k]) != 0)
			continue;
		sc->info |= k == 0;
		if (sec->data && sec->type != SHT_NOBITS) {
			sc->d->p[k] = sec->data;
			sc->d->n[k] = sec->size;
		}
	}
}

/* After every section: usable where the names lie in these bytes.
 * false: the file has no .debug_info of its own (is there DWARF
 * elsewhere is the caller's to say, into d->none). */
static bool dstr_check(struct dstr *d, const struct dstr_scan *sc)
{
	if (!sc->info)
		return false;
	if (sc->elsewhere || !d->p[0])
		return true;
	/* DWARF 5 unit headers: a skeleton or split unit's names are in a
	 * .dwo file. */
	const unsigned char *u = (const unsigned char *)d->p[0];
	for (size_t off = 0, n = d->n[0]; off + 11 < n;) {
		uint32_t len32;
		uint64_t len;
		uint16_t version;
		memcpy(&len32, u + off, 4);
		size_t head = 4;
		len = len32;
		if (len32 == 0xffffffffu) {
			memcpy(&len, u + off + 4, 8);
			head = 12;
		} else if (len32 >= 0xfffffff0u) {
			return true;
		}
		if (off + head + 3 > n || len > n - off - head)
			return true;
		memcpy(&version, u + off + head, 2);
		if (version >= 5 && (u[off + head + 2] == DW_UT_skeleton ||
				     u[off + head + 2] == DW_UT_split_compile ||
				     u[off + head + 2] == DW_UT_split_type))
			return true;
		off += head + (size_t)len;
	}
	d->usable = true;
	return true;
}

/* The sections a module's debug names are read from, checked once, by
 * libdw.  Not usable: no .debug_info of its own (libdw then looks for a
 * separate file), compressed sections (their bytes are not the
 * strings), dwz's shared file (.gnu_debugaltlink), a supplementary file
 * (.debug_sup), split DWARF (.debug_addr; DWARF 5 skeleton units):
 * names may then lie elsewhere. */
void dstr_build(struct dstr *d, Dwfl_Module *mod)
{
	d->built = true;
	Dwarf_Addr bias;
	Elf *elf = dw.strings ? dw.getelf(mod, &bias) : NULL;
	size_t shstrndx;
	if (!elf || dw.getshdrstrndx(elf, &shstrndx) != 0)
		return;
	d->bias = bias;
	struct dstr_scan sc = { d, false, false };
	for (Elf_Scn *scn = NULL; (scn = dw.nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name = dw.getshdr(scn, &sh) ? dw.strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (!name)
			return;
		Elf_Data *data = sh.sh_type == SHT_NOBITS ? NULL : dw.getdata(scn, NULL);
		bool whole = data && data->d_buf && data->d_size >= sh.sh_size;
		struct mc_elf_sec sec = { name, sh.sh_type, sh.sh_flags, whole ? data->d_buf : NULL,
					  whole ? data->d_size : 0 };
		dstr_take(&sec, &sc);
	}
	if (!dstr_check(d, &sc)) {
		/* libdw looks for a separate file: is there one? */
		Dwarf_Addr b;
		d->none = dw.getdwarf && !dw.getdwarf(mod, &b);
	}
}

/* The same from elfmod.c's reading of the module's file. */
void dstr_build_own(struct dstr *d, const struct mc_elfmod *m)
{
	d->built = true;
	d->bias = mc_elfmod_bias(m);
	struct dstr_scan sc = { d, false, false };
	if (mc_elfmod_sections(m, dstr_take, &sc) && !dstr_check(d, &sc))
		d->none = mc_elfmod_debuginfo(m) == MC_DI_NONE;
}

/* A little-endian reader over one section, failing past its end. */
struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t rd_u(struct rd *r, int n)
{
	uint64_t v = 0;
	if (r->end - r->p < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	for (int shift = 0; r->p < r->end && shift < 64; shift += 7) {
		unsigned char b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

/* An initial length: the size of the offsets that follow into *wide. */
static uint64_t rd_length(struct rd *r, bool *wide)
{
	uint64_t len = rd_u(r, 4);
	*wide = len == 0xffffffffu;
	if (*wide)
		len = rd_u(r, 8);
	else if (len >= 0xfffffff0u)
		r->bad = true;
	return len;
}

/* Does the abbreviation table at off name a form through which a unit's
 * entries can take attributes from outside the unit (another unit, a
 * type unit, another file) or whose form is given only in the entry? */
static bool abbrev_reaches_out(const struct dstr *d, uint64_t off)
{
	if (off >= d->n[4])
		return true;
	struct rd r = { (const unsigned char *)d->p[4] + off,
			(const unsigned char *)d->p[4] + d->n[4], false };
	while (rd_uleb(&r) && !r.bad) {    /* code; 0 ends the table */
		rd_uleb(&r);                /* tag */
		rd_u(&r, 1);                /* children */
		for (;;) {
			uint64_t at = rd_uleb(&r), form = rd_uleb(&r);
			if (r.bad)
				return true;
			if (!at && !form)
				break;
			if (form == DW_FORM_ref_addr || form == DW_FORM_ref_sig8 ||
			    form == DW_FORM_indirect || form == DW_FORM_ref_sup4 ||
			    form == DW_FORM_ref_sup8 || form == DW_FORM_strp_sup ||
			    form == DW_FORM_GNU_ref_alt || form == DW_FORM_GNU_strp_alt)
				return true;
			if (form == DW_FORM_implicit_const)
				rd_uleb(&r);        /* its value (signed: same length) */
		}
	}
	return r.bad;
}

/* Does .debug_aranges hold a set for every compile unit of .debug_info
 * (as many sets as units that can hold code)?  Then an address no set
 * holds lies in no unit: the debug information gives it no name (a
 * program's _start, from crt1.o, the first frame of every stack), where
 * otherwise its search is all of .debug_info (yaml-cpp's gtest binary,
 * a first run: 79 suppression names, each a search of its 37.9 MB,
 * 14% of the process's time).  A compiler that writes no sets for some
 * units (clang without -gdwarf-aranges) gives fewer: no.  The units'
 * headers alone are read, a jump from each to the next. */
static bool aranges_cover_all(struct dstr *d)
{
	if (d->aranges_all)
		return d->aranges_all > 0;
	d->aranges_all = -1;
	size_t sets = 0, units = 0;
	struct rd r = { (const unsigned char *)d->p[3], (const unsigned char *)d->p[3] + d->n[3],
			!d->p[3] };
	while (!r.bad && r.p < r.end) {
		bool wide;
		uint64_t setlen = rd_length(&r, &wide);
		if (r.bad || setlen > (uint64_t)(r.end - r.p))
			return false;
		r.p += setlen;
		sets++;
	}
	struct rd u = { (const unsigned char *)d->p[0], (const unsigned char *)d->p[0] + d->n[0],
			!d->p[0] };
	while (!u.bad && u.p < u.end) {
		bool wide;
		uint64_t ulen = rd_length(&u, &wide);
		const unsigned char *next = u.p + ulen;
		if (u.bad || ulen > (uint64_t)(u.end - u.p))
			return false;
		uint64_t version = rd_u(&u, 2);
		if (version == 5) {
			uint64_t type = rd_u(&u, 1);
			if (type == DW_UT_compile || type == DW_UT_partial)
				units++;
			else if (type != DW_UT_type)
				return false; /* skeleton and split units: names elsewhere */
		} else if (version >= 2 && version <= 4) {
			units++;
		} else {
			return false;
		}
		u.p = next;
	}
	if (r.bad || u.bad || !sets || sets != units)
		return false;
	d->aranges_all = 1;
	return true;
}

/* The bytes of the unit whose ranges hold addr (.debug_aranges), when
 * every name of its entries lies in them or in the string sections:
 * UNIT_WHOLE to search all of .debug_info, UNIT_NONE where no unit
 * holds addr (aranges_cover_all).  [*lo, *hi): the range found, which
 * gives every address in it the same answer (empty: none). */
enum { UNIT_NONE = -1, UNIT_WHOLE = 0, UNIT_FOUND = 1 };
static int unit_of(struct dstr *d, uint64_t addr, size_t *off, size_t *len, uint64_t *lo,
		   uint64_t *hi)
{
	*lo = *hi = 0;
	struct rd r = { (const unsigned char *)d->p[3], (const unsigned char *)d->p[3] + d->n[3],
			!d->p[3] };
	uint64_t cu = UINT64_MAX;
	while (!r.bad && r.p < r.end && cu == UINT64_MAX) {
		const unsigned char *set = r.p;
		bool wide;
		uint64_t setlen = rd_length(&r, &wide);
		const unsigned char *next = r.p + setlen;
		if (r.bad || setlen > (uint64_t)(r.end - r.p))
			return UNIT_WHOLE;
		uint64_t version = rd_u(&r, 2), info = rd_u(&r, wide ? 8 : 4);
		uint64_t asize = rd_u(&r, 1), ssize = rd_u(&r, 1);
		if (r.bad || version != 2 || asize != 8 || ssize != 0)
			return UNIT_WHOLE;
		r.p = set + ((size_t)(r.p - set) + 15) / 16 * 16;
		while (r.p + 16 <= next) {
			uint64_t a = rd_u(&r, 8), n = rd_u(&r, 8);
			if (!a && !n)
				break;
			if (addr - a < n) {
				cu = info;
				*lo = a;
				*hi = a + n;
			}
		}
		r.p = next;
	}
	if (cu == UINT64_MAX && !r.bad && aranges_cover_all(d))
		return UNIT_NONE;
	if (cu == UINT64_MAX || cu >= d->n[0])
		return UNIT_WHOLE;
	struct rd u = { (const unsigned char *)d->p[0] + cu,
			(const unsigned char *)d->p[0] + d->n[0], false };
	bool wide;
	uint64_t ulen = rd_length(&u, &wide);
	const unsigned char *body = u.p;
	uint64_t version = rd_u(&u, 2), abbrev;
	if (version == 5) {
		uint64_t type = rd_u(&u, 1);
		rd_u(&u, 1);                /* address size */
		abbrev = rd_u(&u, wide ? 8 : 4);
		if (type != DW_UT_compile && type != DW_UT_partial)
			return UNIT_WHOLE;
	} else if (version >= 2 && version <= 4) {
		abbrev = rd_u(&u, wide ? 8 : 4);
	} else {
		return UNIT_WHOLE;
	}
	/* A unit that is all of .debug_info is searched as all of it
	 * (dstr_has), reaching out or not: its abbreviations unread (a
	 * leaking bench/suite_test 0's exit read them four times, 10 K
	 * instructions). */
	if (u.bad || ulen > (uint64_t)(u.end - body) ||
	    (cu == 0 && ulen == (uint64_t)(u.end - body)) || abbrev_reaches_out(d, abbrev))
		return UNIT_WHOLE;
	*off = (size_t)cu;
	*len = (size_t)(body - ((const unsigned char *)d->p[0] + cu)) + (size_t)ulen;
	return UNIT_FOUND;
}

/* What dstr_has answered for s in unit cu of d: 1, 0, or -1 (not kept). */
static size_t dstr_hash(const struct dstr *d, size_t cu, const char *s, size_t len)
{
	uint64_t h = ((uintptr_t)d ^ cu * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (size_t)(h >> 40) & (DSTR_MEMO_SLOTS - 1);
}

/* The slot of (d, cu, s): its entry's, or the free one where it goes. */
static uint8_t *dstr_find(const struct dstr *d, size_t cu, const char *s, size_t len)
{
	size_t i = dstr_hash(d, cu, s, len);
	for (; dstr_slot[i]; i = (i + 1) & (DSTR_MEMO_SLOTS - 1)) {
		const int k = dstr_slot[i] - 1;
		if (dstr_memo[k].d == d && dstr_memo[k].cu == cu && dstr_memo[k].len == len &&
		    memcmp(dstr_memo[k].s, s, len) == 0)
			break;
	}
	return &dstr_slot[i];
}

static int dstr_memo_get(const struct dstr *d, size_t cu, const char *s, size_t len)
{
	if (len >= DSTR_MEMO_LEN)
		return -1;
	const uint8_t *slot = dstr_find(d, cu, s, len);
	return *slot ? dstr_memo[*slot - 1].found : -1;
}

static void dstr_memo_put(const struct dstr *d, size_t cu, const char *s, size_t len, bool found)
{
	if (dstr_nmemo < DSTR_MEMO && len < DSTR_MEMO_LEN) {
		uint8_t *slot = dstr_find(d, cu, s, len);
		if (*slot)
			return;
		*slot = (uint8_t)(dstr_nmemo + 1);
		dstr_memo[dstr_nmemo].d = d;
		dstr_memo[dstr_nmemo].cu = cu;
		dstr_memo[dstr_nmemo].len = (uint8_t)len;
		dstr_memo[dstr_nmemo].found = found;
		memcpy(dstr_memo[dstr_nmemo++].s, s, len);
	}
}

/* d's filter, built when d's string bytes are few enough: false when
 * there are too many (or no map). */
static bool dstr_filter_build(struct dstr *d)
{
	d->filtered = true;
	size_t bytes = d->n[0] + d->n[1] + d->n[2];
	if (bytes > DSTR_FILTER_MAX)
		return false;
	unsigned shift = 14;
	while (((size_t)1 << shift) < bytes + 16)  /* 4 bits a word at least */
		shift++;
	const unsigned k = dstr_filter_next++ % DSTR_FILTERS;
	struct dstr_filter *f = &dstr_filter[k];
	f->d = NULL;
	if (f->bit && f->shift == shift) {
		memset(f->bit, 0, (size_t)1 << shift >> 3);
	} else {
		if (f->bit)
			mc_unmap(f->bit, (size_t)1 << f->shift >> 3);
		f->bit = mc_map((size_t)1 << shift >> 3);
		if (!f->bit)
			return false;
		f->shift = shift;
	}
	for (int i = 0; i < 3; i++)
		for (size_t off = 0; d->p[i] && off + 4 <= d->n[i]; off += 4) {
			uint32_t h = dstr_word_hash(d->p[i] + off, shift);
			f->bit[h / 64] |= 1ull << (h % 64);
		}
	f->d = d;
	d->filter = (int)k + 1;
	return true;
}

/* false: the len bytes at s lie nowhere in d's string bytes (its
 * filter says so).  A string shorter than 7 bytes has a way that
 * covers no whole word: it may lie anywhere. */
static bool dstr_filter_may(const struct dstr *d, const char *s, size_t len)
{
	const int k = d->filter - 1;
	if (k < 0 || dstr_filter[k].d != d || len < 7)
		return true;
	const uint64_t *bit = dstr_filter[k].bit;
	const unsigned shift = dstr_filter[k].shift;
	for (size_t way = 0; way < 4; way++) {
		size_t j = way;
		for (; j + 4 <= len; j += 4) {
			uint32_t h = dstr_word_hash(s + j, shift);
			if (!(bit[h / 64] >> (h % 64) & 1))
				break;
		}
		if (j + 4 > len)
			return true;
	}
	return false;
}

/* Could a name the debug information gives at addr (the module's own
 * address, less its bias) contain the len bytes at s?  The string
 * sections are searched, and of .debug_info the unit that holds addr
 * (the inlined functions there and the entries they name all lie in
 * it, when no form reaches out of it) or else all of it.  d is built.
 * *anywhere: the answer is every address's of the module (no debug
 * information, or names that may lie elsewhere, the filter's no, a
 * string section's yes, all of .debug_info's no), so that symcache.c
 * keeps it once a string, not once an address. */
bool dstr_has(struct dstr *d, uint64_t addr, const char *s, size_t len, bool *anywhere)
{
	*anywhere = true;
	if (d->none)
		return false;
	if (!d->usable)
		return true;
	if (!dstr_filter_may(d, s, len))
		return false;
	size_t off = 0, n = d->n[0];
	addr -= d->bias;
	int u = 0;
	while (u < UNIT_MEMO && !(unit_memo[u].d == d && addr - unit_memo[u].lo <
				  unit_memo[u].hi - unit_memo[u].lo))
		u++;
	if (u < UNIT_MEMO) {
		off = unit_memo[u].off;
		n = unit_memo[u].n;
	} else {
		uint64_t lo, hi;
		/* A unit that is all of .debug_info (a program of one
		 * source file) is the search of all of it, whose answers
		 * an address in no unit (its _start) shares where the
		 * aranges may leave units out: suite_test 0's exit searched
		 * the same bytes again for 30 of its 100 questions. */
		int got = unit_of(d, addr, &off, &n, &lo, &hi);
		if (got == UNIT_NONE) {
			off = NO_UNIT;
			lo = addr;
			hi = addr + 1;
		} else if (got == UNIT_WHOLE || (off == 0 && n == d->n[0])) {
			off = SIZE_MAX;
			n = d->n[0];
		}
		if (lo < hi)
			unit_memo[unit_next++ % UNIT_MEMO] = (struct unit_memo){ d, lo, hi, off, n };
	}
	if (off == NO_UNIT) { /* no unit's entries name anything at addr */
		*anywhere = false;
		return false;
	}
	int found = dstr_memo_get(d, off, s, len), strings = -1;
	if (found < 0) {
		if (!d->filtered && dstr_filter_build(d) && !dstr_filter_may(d, s, len))
			return false;
		/* The string sections' answer is every unit's: asked once a
		 * name, not once a (unit, name) as before. */
		strings = dstr_memo_get(d, DSTR_STRINGS, s, len);
		if (strings < 0) {
			strings = (d->p[1] && memmem(d->p[1], d->n[1], s, len)) ||
				  (d->p[2] && memmem(d->p[2], d->n[2], s, len));
			dstr_memo_put(d, DSTR_STRINGS, s, len, strings);
		}
		found = strings || memmem(d->p[0] + (off == SIZE_MAX ? 0 : off), n, s, len);
		dstr_memo_put(d, off, s, len, found);
	} else if (found) {
		strings = dstr_memo_get(d, DSTR_STRINGS, s, len);
	}
	*anywhere = found ? strings == 1 : off == SIZE_MAX;
	return found;
}
