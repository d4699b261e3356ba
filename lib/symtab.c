/*
 * symtab.c - a module's symbol table searched as libdw searches it, for
 * the names suppressions match and reports print.  libdw's own search
 * (dwfl_module_addrname) walks the whole table through libelf for every
 * address: ~150 us a name in the C library's 8,000 symbols, most of a
 * short process's exit.  Here the table is read straight from the ELF
 * section libdw reads it from (getsym_info costs ~350 instructions a
 * symbol), its symbols with a size are sorted by address once per
 * module, 16 bytes each, and each name is a binary search among them;
 * the walk over a copy of the whole table in libdw's order (40 bytes a
 * symbol) remains where a size-0 symbol could be libdw's answer, or the
 * table cannot be read raw.  Every name is the one libdw gives but
 * where valgrind's rules differ (unit_symbolize compares them): of a
 * function's aliases valgrind's choice (valgrind_alias), and no name
 * where libdw would take a symbol of no size or no type (valgrind_type).
 * A table elfmod.c read from the object's files itself (mc_symtab_raw)
 * has no libdw behind it: what only libdw could answer there is said
 * (*ask) instead of asked.  Memory comes from mc_map, never malloc,
 * and every page of it is a page fault a short process pays:
 * the structures are as small as the search allows.
 */
#include <dlfcn.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "internal.h"
#include "symtab.h"

static struct {
	__typeof__(dwfl_module_addrname) *addrname;
	__typeof__(dwfl_module_getsymtab) *getsymtab;
	__typeof__(dwfl_module_getsymtab_first_global) *first_global;
	__typeof__(dwfl_module_getsym_info) *getsym_info;
	bool symtab;    /* false: every name from dwfl_module_addrname */
	__typeof__(elf_nextscn) *nextscn;
	__typeof__(elf_getscn) *getscn;
	__typeof__(elf_getdata) *getdata;
	__typeof__(gelf_getshdr) *getshdr;
	__typeof__(gelf_getehdr) *getehdr;
	bool raw;       /* false: each symbol through getsym_info */
} st;

#define ST_SYM(field, name) MC_DL_SYM(st.field, name)
static const struct mc_dl_sym symtab_syms[] = {
	ST_SYM(getsymtab, "dwfl_module_getsymtab"),
	ST_SYM(first_global, "dwfl_module_getsymtab_first_global"),
	ST_SYM(getsym_info, "dwfl_module_getsym_info"),
};
static const struct mc_dl_sym raw_syms[] = {
	ST_SYM(nextscn, "elf_nextscn"), ST_SYM(getscn, "elf_getscn"), ST_SYM(getdata, "elf_getdata"),
	ST_SYM(getshdr, "gelf_getshdr"), ST_SYM(getehdr, "gelf_getehdr"),
};
#undef ST_SYM

void mc_symtab_bind(void *libdw)
{
	st.addrname = dlsym(libdw, "dwfl_module_addrname");
	st.symtab = mc_dl_bind_group(libdw, symtab_syms, MC_ARRAY_SIZE(symtab_syms));
	st.raw = mc_dl_bind_group(libdw, raw_syms, MC_ARRAY_SIZE(raw_syms));
}


static unsigned char binding_value(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* The table libdw reads a module's symbols from, as raw ELF64 entries:
 * getsym_info costs ~350 instructions a symbol (the C library's 8,000:
 * 2.8 M, a quarter of a short process's exit), a read of the entry a
 * few.  The Elf is the one getsym_info names for symbol 1; its table is
 * the one whose entry count and first global are libdw's (so no
 * auxiliary table is merged in) and whose symbols 1, n/2 and n-1 have
 * libdw's very name pointers and values.  NULL where any of that fails:
 * then getsym_info reads each symbol. */
static bool raw_entry(const struct raw_syms *r, int i, GElf_Sym *sym, GElf_Addr *value,
		      GElf_Word *shndx, const char **name)
{
	const Elf64_Sym *e = &r->sym[i];
	if (e->st_shndx == SHN_XINDEX || e->st_name >= r->strsize)
		return false;
	*sym = (GElf_Sym){ e->st_name, e->st_info, e->st_other, e->st_shndx, e->st_value,
			   e->st_size };
	*shndx = e->st_shndx;
	*value = e->st_shndx != SHN_UNDEF && e->st_shndx < SHN_LORESERVE ?
		 e->st_value + r->bias : e->st_value;
	*name = r->str + e->st_name;
	return true;
}

static bool raw_symtab(Dwfl_Module *mod, int n, int first_global, struct raw_syms *r)
{
	GElf_Sym sym;
	GElf_Addr value;
	GElf_Word shndx;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	if (!st.raw || !st.getsym_info(mod, 1, &sym, &value, &shndx, &elf, &r->bias) || !elf ||
	    !st.getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type == ET_REL)
		return false;
	for (Elf_Scn *scn = NULL; (scn = st.nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!st.getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_size / sizeof(Elf64_Sym) != (size_t)n ||
		    sh.sh_info != (GElf_Word)first_global)
			continue;
		Elf_Data *d = st.getdata(scn, NULL);
		Elf_Scn *sscn = st.getscn(elf, sh.sh_link);
		Elf_Data *sd = sscn ? st.getdata(sscn, NULL) : NULL;
		if (!d || !sd || d->d_size < sh.sh_size || !d->d_buf || !sd->d_buf)
			continue;
		r->sym = d->d_buf;
		r->str = sd->d_buf;
		r->strsize = sd->d_size;
		bool same = true;
		const int probe[] = { 1, n / 2, n - 1 };
		for (size_t k = 0; k < MC_ARRAY_SIZE(probe) && same; k++) {
			GElf_Sym a, b;
			GElf_Addr va, vb;
			GElf_Word xa, xb;
			const char *na, *nb = st.getsym_info(mod, probe[k], &b, &vb, &xb, &elf, NULL);
			same = raw_entry(r, probe[k], &a, &va, &xa, &na) && na == nb && va == vb &&
			       xa == xb && a.st_size == b.st_size && a.st_info == b.st_info;
		}
		if (same)
			return true;
	}
	return false;
}

enum { SYM_SKIP, SYM_OK, SYM_ODD };

/* Of a table memcheck read itself: is y in a section the module does
 * not load (SYM_SKIP), one past the headers (SYM_ODD), or fine (SYM_OK)? */
static int raw_section(const struct raw_syms *r, const Elf64_Sym *y)
{
	if (!r->sh || y->st_shndx == SHN_UNDEF || y->st_shndx >= SHN_LORESERVE)
		return SYM_OK;
	if (y->st_shndx >= r->shnum)
		return SYM_ODD;
	return r->sh[y->st_shndx].sh_flags & SHF_ALLOC ? SYM_OK : SYM_SKIP;
}

/* The symbols valgrind names code by (its readelf.c, get_elf_symbol_info):
 * functions, objects and indirect functions; never a section's, a
 * file's, a thread-local's or one of no type (assembly's labels: the
 * dynamic loader's _dl_start_user, under every constructor's stack, is
 * "???" under valgrind).  Of these it takes only those with a size
 * (search): libdw's answer of a size-0 symbol is no name. */
static bool valgrind_type(unsigned char info)
{
	unsigned type = GELF_ST_TYPE(info);
	return type == STT_FUNC || type == STT_OBJECT || type == STT_GNU_IFUNC;
}

/* Symbol i of t's module as the search sees it: SYM_SKIP for one it
 * never chooses, SYM_ODD for one whose value is not st_value + bias
 * (function descriptors: the module is then left to libdw). */
static int sym_get(const struct mc_symtab *t, int i, struct sym_entry *e)
{
	GElf_Sym sym;
	GElf_Addr value;
	GElf_Word shndx;
	Elf *elf;
	Dwarf_Addr bias;
	const char *name;
	if (!t->raw_ok || !raw_entry(&t->raw, i, &sym, &value, &shndx, &name)) {
		if (!t->mod)    /* a table of mc_symtab_raw's: libdw decides */
			return SYM_ODD;
		name = st.getsym_info(t->mod, i, &sym, &value, &shndx, &elf, &bias);
	} else {
		int sec = raw_section(&t->raw, &t->raw.sym[i]);
		if (sec != SYM_OK)
			return sec;
		bias = t->raw.bias;
	}
	if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || !valgrind_type(sym.st_info))
		return SYM_SKIP;
	/* Resolved (function descriptors): libdw's way.  Absolute symbols
	 * keep their st_value. */
	if (shndx < SHN_LORESERVE && value != sym.st_value + bias)
		return SYM_ODD;
	*e = (struct sym_entry){ value, sym.st_size, name, shndx, binding_value(sym.st_info) };
	return SYM_OK;
}

/* sym_get for the spans, from the raw table without its name: the
 * build then reads 24 bytes a symbol and never the string table (~100
 * instructions a symbol and its pages otherwise).  A symbol whose name
 * is empty, which sym_get skips, is taken: a search that meets it asks
 * sym_get, which sends that address to the walk, so the answer stays
 * libdw's. */
static int sym_quick(const struct mc_symtab *t, int i, struct sym_entry *e)
{
	const Elf64_Sym *y = t->raw_ok ? &t->raw.sym[i] : NULL;
	if (!y || y->st_shndx == SHN_XINDEX || y->st_name >= t->raw.strsize)
		return sym_get(t, i, e);
	if (!y->st_name || y->st_shndx == SHN_UNDEF || !valgrind_type(y->st_info))
		return SYM_SKIP;
	int sec = raw_section(&t->raw, y);
	if (sec != SYM_OK)
		return sec;
	GElf_Addr value = y->st_shndx < SHN_LORESERVE ? y->st_value + t->raw.bias : y->st_value;
	/* no name and no binding: the spans order by address alone */
	*e = (struct sym_entry){ value, y->st_size, NULL, y->st_shndx, 0 };
	return SYM_OK;
}

/* The table indexes of a pass: libdw searches the globals first (from 1
 * when first_global is 0), then, finding nothing, the locals. */
static void pass_bounds(const struct mc_symtab *t, int p, int *from, int *to)
{
	int gstart = t->first_global == 0 ? 1 : t->first_global;
	*from = p ? 1 : gstart;
	*to = p ? (t->first_global <= 1 ? 1 : gstart) : t->nsyms;
}

/* The copy of the whole table the walk reads; false: no memory, or a
 * symbol the walk cannot take (the module is then left to libdw). */
static bool walk_build(struct mc_symtab *t)
{
	t->walked = true;
	t->mapped = (size_t)t->nsyms * sizeof *t->v;
	t->v = mc_map(t->mapped);
	if (!t->v)
		return false;
	for (int p = 1; p >= 0; p--) {  /* locals first, as the table has them */
		int from, to;
		pass_bounds(t, p, &from, &to);
		for (int i = from; i < to; i++) {
			int got = sym_get(t, i, &t->v[t->n]);
			if (got == SYM_ODD)
				return false;
			t->n += got == SYM_OK;
		}
		if (p)
			t->nlocal = t->n;
	}
	return true;
}

/* A symbol with a size: its value less the table's lowest, and its index
 * in the table, in one sort key; the largest end of it and every symbol
 * before it in address order (before the sort, its own end). */
struct span {
	uint64_t key;
	GElf_Addr maxend;
};

static unsigned bit_width(uint64_t x)
{
	return x ? 64u - (unsigned)__builtin_clzll(x) : 0;
}

/* By key, where spans come in table order: an LSD radix sort of the
 * value bits alone (vbits of them), which is stable, so that equal
 * values keep the table's order the key's low bits hold; 11 bits a pass
 * (two for the C library's ~21 value bits), 8 for a table too small to
 * pay for 2,048 counters; tmp holds n more.  (A heapsort of the C
 * library's 8,000 symbols took ~3 M instructions; the earlier radix sort
 * of the whole key, 12 bits a pass, ~1 M.)  Then each maxend. */
static void spans_sort(struct span *s, struct span *tmp, size_t n, unsigned idx_bits,
		       unsigned vbits)
{
	struct span *from = s, *to = tmp;
	unsigned digit = n >= 1024 ? 11 : 8;
	uint64_t mask = ((uint64_t)1 << digit) - 1;
	for (unsigned shift = idx_bits; shift < idx_bits + vbits; shift += digit) {
		uint32_t at[1u << 11];
		memset(at, 0, sizeof at[0] << digit);
		for (size_t i = 0; i < n; i++)
			at[from[i].key >> shift & mask]++;
		for (uint32_t d = 0, sum = 0; d <= mask; d++) {
			uint32_t c = at[d];
			at[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[at[from[i].key >> shift & mask]++] = from[i];
		struct span *x = from;
		from = to;
		to = x;
	}
	if (from != s)
		memcpy(s, from, n * sizeof *s);
	for (size_t i = 1; i < n; i++)
		if (s[i].maxend < s[i - 1].maxend)
			s[i].maxend = s[i - 1].maxend;
}

enum { SYM_SPAN = SYM_ODD + 1 };

static void pass_begin(struct sym_pass *ps)
{
	ps->min_sizeless = ps->abs_lo = (GElf_Addr)-1;
	ps->abs_hi = 0;
	ps->nz = 0;
}

/* Symbol i as a pass reads it (sym_quick): SYM_ODD, SYM_SKIP, SYM_OK for
 * one noted in ps (absolute, or of no size), or SYM_SPAN for one with a
 * size the search finds by address (*e, t->lo set). */
static int pass_take(const struct mc_symtab *t, struct sym_pass *ps, int i, struct sym_entry *e)
{
	int got = sym_quick(t, i, e);
	if (got != SYM_OK)
		return got;
	if (!e->size && e->shndx >= SHN_LORESERVE) {
		ps->abs_lo = e->value < ps->abs_lo ? e->value : ps->abs_lo;
		ps->abs_hi = e->value > ps->abs_hi ? e->value : ps->abs_hi;
		return SYM_OK;
	}
	if (!e->size || e->value + e->size < e->value || e->value < t->lo) {
		/* A size that wraps the address space (libdw's test, addr -
		 * value < size, is no range), or a sized absolute symbol
		 * below the bias: the walk decides in that pass. */
		if (e->value < ps->min_sizeless)
			ps->min_sizeless = e->size ? 0 : e->value;
		return SYM_OK;
	}
	return SYM_SPAN;
}

/* Each pass's symbols with a size, sorted, from the raw table, in one
 * read of it.  A key is the value less the module's bias (no sized
 * symbol in a section lies below it), so it is known as the symbol is
 * read.  false: no memory, keys too wide, or a symbol the search cannot
 * take; the walk then serves every name. */
/* The first of ps's sorted spans that starts above a. */
static size_t first_above(const struct mc_symtab *t, const struct sym_pass *ps, GElf_Addr a)
{
	size_t lo = 0, hi = a < t->lo ? 0 : ps->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ps->s[mid].key >> t->idx_bits <= a - t->lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Over the passes [p0, p1]: the largest end of a symbol with a size that
 * starts at or below a (0: none), and the lowest start above a
 * (*next; -1: none). */
static GElf_Addr ends_at(const struct mc_symtab *t, int p0, int p1, GElf_Addr a, GElf_Addr *next)
{
	GElf_Addr end = 0;
	*next = (GElf_Addr)-1;
	for (int p = p0; p <= p1; p++) {
		const struct sym_pass *ps = &t->pass[p];
		size_t i = first_above(t, ps, a);
		if (i > 0 && ps->s[i - 1].maxend > end)
			end = ps->s[i - 1].maxend;
		if (i < ps->n && t->lo + (ps->s[i].key >> t->idx_bits) < *next)
			*next = t->lo + (ps->s[i].key >> t->idx_bits);
	}
	return end;
}

/* Where each of pass p's size-0 symbols in a section (z[0..n), sorted)
 * may be the search's answer.  The walk takes one only where no symbol
 * with a size covers addr and only if its value is at least min_label,
 * the largest end of every symbol visited at or below addr: a size-0
 * symbol below the end of a sized one that starts at or below it is
 * never the answer, nor one at or below addr where a sized symbol starts
 * between the two.  So symbol z may be, at most, for addr in [z, the
 * next start of a sized symbol), and only where no sized one starting at
 * or below z ends past it.  A global one counts against the globals
 * alone (a global size-0 symbol at addr itself spares the locals the
 * search); a local one against both passes, both searched by then.
 * Windows that touch are one; more than SYM_ZWIN: unknown (nz -1). */
static void zero_windows(struct mc_symtab *t, int p, const GElf_Addr *z, size_t n)
{
	struct sym_pass *ps = &t->pass[p];
	for (size_t i = 0; i < n && ps->nz >= 0; i++) {
		GElf_Addr next;
		if (ends_at(t, 0, p, z[i], &next) > z[i])
			continue;
		if (ps->nz > 0 && z[i] <= ps->zhi[ps->nz - 1]) {
			if (next > ps->zhi[ps->nz - 1])
				ps->zhi[ps->nz - 1] = next;
		} else if (ps->nz == SYM_ZWIN) {
			ps->nz = -1;
		} else {
			ps->zlo[ps->nz] = z[i];
			ps->zhi[ps->nz++] = next;
		}
	}
}

/* May a size-0 symbol of ps be the answer at addr? */
static bool zero_may(const struct sym_pass *ps, GElf_Addr addr)
{
	if (ps->min_sizeless > addr)
		return false;
	for (int i = 0; i < ps->nz; i++)
		if (addr >= ps->zlo[i] && addr < ps->zhi[i])
			return true;
	return ps->nz < 0;
}

static void zero_note(GElf_Addr *z, size_t *n, GElf_Addr v, int *nz)
{
	if (*n == 4 * SYM_ZWIN) {
		*nz = -1;
		return;
	}
	size_t j = (*n)++;
	for (; j > 0 && z[j - 1] > v; j--)
		z[j] = z[j - 1];
	z[j] = v;
}

static bool spans_build(struct mc_symtab *t)
{
	GElf_Addr zero[2][4 * SYM_ZWIN];
	size_t nzero[2] = { 0, 0 };
	t->idx_bits = (int)bit_width((uint64_t)t->nsyms);
	t->lo = t->raw.bias;
	t->spans_mapped = (size_t)t->nsyms * sizeof *t->spans;
	t->spans = mc_map(t->spans_mapped);
	if (!t->spans)
		return false;
	struct span *s = t->spans;
	uint64_t wide = 0;  /* every key's value bits, or'ed */
	for (int p = 0; p < 2; p++) {
		struct sym_pass *ps = &t->pass[p];
		pass_begin(ps);
		ps->s = s;
		int from, to;
		pass_bounds(t, p, &from, &to);
		for (int i = from; i < to; i++) {
			struct sym_entry e;
			int got = pass_take(t, ps, i, &e);
			if (got == SYM_ODD)
				return false;
			if (got == SYM_OK && e.size)
				ps->nz = -1; /* a size that wraps, or below the bias */
			else if (got == SYM_OK && e.shndx < SHN_LORESERVE && ps->nz >= 0)
				zero_note(zero[p], &nzero[p], e.value, &ps->nz);
			if (got == SYM_SPAN) {
				wide |= e.value - t->lo;
				*s++ = (struct span){ (e.value - t->lo) << t->idx_bits | (uint64_t)i,
						      e.value + e.size };
			}
		}
		ps->n = (size_t)(s - ps->s);
	}
	unsigned vbits = bit_width(wide);
	size_t count = (size_t)(s - t->spans);
	struct span *tmp = vbits + (unsigned)t->idx_bits <= 64 && count ?
			   mc_map(count * sizeof *tmp) : NULL;
	if (!tmp)
		return !count;
	for (int p = 0; p < 2; p++)
		spans_sort(t->pass[p].s, tmp, t->pass[p].n, (unsigned)t->idx_bits, vbits);
	mc_unmap(tmp, count * sizeof *tmp);
	for (int p = 0; p < 2; p++)
		zero_windows(t, p, zero[p], nzero[p]);
	return true;
}

static void table_build(struct mc_symtab *t, Dwfl_Module *mod)
{
	t->built = true;
	t->mod = mod;
	t->nsyms = st.getsymtab(mod);
	t->first_global = st.first_global(mod);
	if (t->nsyms <= 1 || t->first_global < 0)
		return;
	t->raw_ok = raw_symtab(mod, t->nsyms, t->first_global, &t->raw);
	t->usable = (t->raw_ok && spans_build(t)) || walk_build(t);
}

/* One search: libdw's struct search_state, less what only a section
 * lookup needs. */
struct sym_search {
	const struct mc_symtab *t;
	GElf_Addr addr;
	const struct sym_entry *closest, *sizeless;
	GElf_Addr min_label;
	bool ask_libdw;       /* a section lookup was needed */
};

/* The SHF_ALLOC section of the object's own file that a lies in (less
 * the bias), as libdw's lookup of the address's section finds it
 * (dwfl_module_addrname: a binary search of the sections sorted by
 * address, each end counted in): where exactly one holds a, its end
 * counted, and no other lies over its inside or at its start (.tbss
 * over the next sections: libdw's search may pass the one that holds
 * a).  0 where that is not plain, or the table is libdw's: libdw
 * decides. */
static size_t alloc_section(const struct mc_symtab *t, GElf_Addr a)
{
	const struct raw_syms *r = &t->raw;
	if (t->mod || !t->raw_ok || !r->msh)
		return 0;
	size_t found = 0;
	a -= r->bias;
	for (size_t i = 1; i < r->mshnum; i++) {
		const Elf64_Shdr *h = &r->msh[i];
		if ((h->sh_flags & SHF_ALLOC) && a >= h->sh_addr && a - h->sh_addr <= h->sh_size) {
			if (found)
				return 0;
			found = i;
		}
	}
	if (!found)
		return 0;
	GElf_Addr lo = r->msh[found].sh_addr, hi = lo + r->msh[found].sh_size;
	for (size_t i = 1; i < r->mshnum; i++) {
		const Elf64_Shdr *h = &r->msh[i];
		if (i != found && (h->sh_flags & SHF_ALLOC) && h->sh_addr < hi &&
		    h->sh_addr + h->sh_size >= lo && (h->sh_addr + h->sh_size > lo || !h->sh_size))
			return 0;
	}
	return found;
}

/* Is a size-0 symbol at value, of a section, in addr's section as
 * libdw sees it (each found as alloc_section does)?  -1: not plain. */
static int same_section(const struct sym_search *s, GElf_Addr value)
{
	size_t at = alloc_section(s->t, s->addr), v = alloc_section(s->t, value);
	return at && v ? at == v : -1;
}

/* valgrind names a function by one of the symbols at its address: of
 * aliases (one address and size), the one its storage.c's prefersym
 * keeps: PMPI_x before MPI_x, then the shortest name up to any '@',
 * then a versioned one, then the first in strcmp's order.  libdw takes
 * a global symbol before a weak one, so of glibc's weak_alias pairs it
 * named __strdup, __tsearch, __getdelim, __asprintf where valgrind says
 * strdup, tsearch, getdelim, asprintf; of GCC's constructors C1 and C2
 * the first in its table.  valgrind's suppressions match that name
 * alone and the entries it writes name it (an entry naming strdup
 * suppressed nothing under memcheck, one naming __strdup nothing under
 * valgrind), so memcheck takes the same.  valgrind's table holds the
 * locals beside the globals and merges them alike: of a C++ thread_local's
 * init function, the global _ZTH6tl_strB5cxx11 and GCC's local
 * __tls_init, it names __tls_init (session 46); glibc's local aliases
 * are its longer __GI_ names.  So a global chosen by libdw's first pass
 * is weighed against the locals too (local_alias where the passes are
 * searched apart).  c: the symbol chosen; e[n]: the others that may be
 * its aliases; the rule is symtab.h's mc_valgrind_prefers. */
static __attribute__((noinline)) const struct sym_entry *
valgrind_alias(const struct sym_entry *c, const struct sym_entry *e, size_t n)
{
	if (!c)
		return c;
	const struct sym_entry *best = c;
	for (size_t i = 0; i < n; i++) {
		if (e[i].value != c->value || e[i].size != c->size || &e[i] == best ||
		    !e[i].name || !e[i].name[0])
			continue;
		if (mc_valgrind_prefers(e[i].name, best->name))
			best = &e[i];
	}
	return best;
}

/* One symbol of the search, in the table's order. */
static void sym_visit(struct sym_search *s, const struct sym_entry *e)
{
	const struct sym_entry *c = s->closest;
	if (e->value > s->addr)
		return;
	if (e->value + e->size > s->min_label)
		s->min_label = e->value + e->size;
	if (e->size && s->addr - e->value >= e->size)
		return;
	if (!c || c->value < e->value || c->bind < e->bind) {
		if (e->size) {
			s->closest = e;
		} else if (!c && e->value >= s->min_label) {
			/* A size-0 symbol counts in the address's section
			 * only; absolute ones at the address only. */
			if (e->shndx < SHN_LORESERVE) {
				int same = same_section(s, e->value);
				if (same < 0)
					s->ask_libdw = true;
				else if (same)
					s->sizeless = e;
			} else if (e->value == s->addr) {
				s->sizeless = e;
			}
		}
	} else if (e->size && c->value == e->value &&
		   ((c->size > e->size && c->bind <= e->bind) ||
		    (c->size >= e->size && c->bind < e->bind))) {
		s->closest = e;
	}
}

static void sym_search(struct sym_search *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		sym_visit(s, &s->t->v[i]);
}

/* The name valgrind gives c, a symbol of the globals' pass named name
 * (valgrind_alias's choice among them), where the locals' sorted spans
 * may hold an alias of it: the one of them valgrind_alias prefers, if
 * it is preferred to name.  Out of line: a name a frame gets once. */
static __attribute__((noinline)) const char *
local_alias_at(const struct mc_symtab *t, int i, const char *name)
{
	struct sym_entry x;
	return sym_get(t, i, &x) == SYM_OK && mc_valgrind_prefers(x.name, name) ? x.name : name;
}

static __attribute__((noinline)) const char *
local_alias(const struct mc_symtab *t, const struct sym_entry *c, const char *name)
{
	const struct sym_pass *ps = &t->pass[1];
	uint64_t mask = ((uint64_t)1 << t->idx_bits) - 1;
	/* the spans sort by value: c's aliases are the last ones at or
	 * below its value that start there */
	for (size_t i = first_above(t, ps, c->value);
	     i-- > 0 && (ps->s[i].key >> t->idx_bits) == c->value - t->lo;) {
		struct sym_entry x;
		if (sym_get(t, (int)(ps->s[i].key & mask), &x) == SYM_OK && x.value == c->value &&
		    x.size == c->size)
			name = local_alias_at(t, (int)(ps->s[i].key & mask), name);
	}
	return name;
}

/* The walk's answer without the walk, where it depends only on the
 * symbols with a size that cover addr: a symbol that does not cover it
 * moves only min_label, which matters only to size-0 symbols, and a
 * size-0 one is chosen (or sends the search to libdw, whose answer is
 * then the same) only when no sized one covers addr.  So where sized
 * ones cover addr in a pass, they decide, visited in the table's order;
 * where none does and no size-0 symbol of the pass may be the answer
 * at addr (zero_may: none at or below it, or none outside the reach of
 * sized symbols), the pass finds nothing and the locals are searched
 * next, as libdw does.  Every frame of a program built by gcc is at or
 * above crtstuff's size-0 functions (deregister_tm_clones ...): with
 * the lowest of them as the test, every frame of yaml-cpp's gtest
 * binary outside an exported function took the walk, 1,247 walks of
 * its 15,000 symbols, 0.61 G of the 1.97 G instructions of its cold
 * run's exit.  false: a size-0 symbol may be chosen, or the covering
 * ones are too many to find cheaply; the walk decides. */
static bool sym_fast(const struct mc_symtab *t, GElf_Addr addr, const char **name)
{
	uint64_t mask = ((uint64_t)1 << t->idx_bits) - 1;
	for (int p = 0; p < 2; p++) {
		const struct sym_pass *ps = &t->pass[p];
		size_t lo = first_above(t, ps, addr);
		struct sym_entry e[8];
		uint64_t idx[8];
		size_t k = 0, steps = 0;
		for (size_t i = lo; i-- > 0 && ps->s[i].maxend > addr;) {
			struct sym_entry x;
			if (++steps > 64 || sym_get(t, (int)(ps->s[i].key & mask), &x) != SYM_OK)
				return false;
			if (x.value + x.size <= addr)
				continue;
			if (k == MC_ARRAY_SIZE(e))
				return false;
			/* into the table's order as they come */
			size_t j = k++;
			for (; j > 0 && idx[j - 1] > (ps->s[i].key & mask); j--) {
				idx[j] = idx[j - 1];
				e[j] = e[j - 1];
			}
			idx[j] = ps->s[i].key & mask;
			e[j] = x;
		}
		if (k) {
			struct sym_search s = { .t = t, .addr = addr };
			for (size_t i = 0; i < k; i++)
				sym_visit(&s, &e[i]);
			*name = valgrind_alias(s.closest, e, k)->name;
			if (p == 0 && s.closest)
				*name = local_alias(t, s.closest, *name);
			return true;
		}
		if (zero_may(ps, addr) || (ps->abs_lo <= addr && addr <= ps->abs_hi))
			return false;
	}
	*name = NULL;
	return true;
}

/* libdw's answer at addr through t, built; *ask where t cannot give it. */
static const char *search(struct mc_symtab *t, GElf_Addr addr, bool *ask)
{
	const char *name;
	*ask = false;
	if (t->usable && t->spans && sym_fast(t, addr, &name))
		return name;
	if (t->usable && !t->walked && !walk_build(t))
		t->usable = false;
	if (!t->usable || !t->v) {
		*ask = true;
		return NULL;
	}
	/* libdw's search but for its size-0 symbols, which valgrind never
	 * names code by (valgrind_type): where no symbol with a size covers
	 * addr the name is none, "???", as valgrind's. */
	struct sym_search s = { .t = t, .addr = addr };
	sym_search(&s, t->nlocal, t->n);
	if (!s.closest && t->nlocal)
		sym_search(&s, 0, t->nlocal);
	if (s.closest)
		s.closest = valgrind_alias(s.closest, t->v, t->n);
	return s.closest ? s.closest->name : NULL;
}

const char *mc_symtab_name(struct mc_symtab *t, Dwfl_Module *mod, GElf_Addr addr)
{
	if (!st.symtab)
		return st.addrname(mod, addr);
	if (!t->built)
		table_build(t, mod);
	bool ask;
	const char *name = search(t, addr, &ask);
	return ask ? st.addrname(mod, addr) : name;
}

void mc_symtab_raw(struct mc_symtab *t, const struct raw_syms *r, int nsyms, int first_global)
{
	*t = (struct mc_symtab){ .nsyms = nsyms, .first_global = first_global, .raw_ok = true,
				 .raw = *r, .lo = r->bias };
}

static void raw_build(struct mc_symtab *t)
{
	t->built = true;
	if (t->nsyms > 1 && t->first_global >= 0)
		t->usable = spans_build(t) || walk_build(t);
}

#define BATCH 256
enum { B_OPEN, B_DONE, B_LEFT };
/* The 4 KiB pages of st_value scan_near's map covers (16 MiB); the map
 * has NEAR_PAD bytes more, which scan_look_avx2's four-byte reads of
 * its last entries take in. */
#define PAGE_BITS 4096
#define NEAR_PAD 3

#if defined(__x86_64__)
/* The constants of scan_group, set once a batch (group_init). */
struct group_k {
	__m256i at, ones, nmax, one_hi, sec_max, page, two, two_up, type_mask, skip_types, xindex;
};
#endif

/* What batch's scan of a table needs to pass over a symbol unlooked at. */
struct scan {
	const Elf64_Sym *sym;
	const GElf_Addr *a;  /* the batch's addresses, ascending */
	size_t n;
	size_t strsize;
	uint64_t bias, lo_addr;
	unsigned in_sec;     /* st_shndx - 1 below it: a section index */
	/* The quick test (scan_near): bit k of near[q] is set where an
	 * address of the batch is in bytes [512 k, 512 k + 512) of page q
	 * of st_value (bias taken out, mod 4,096; near[PAGE_BITS] is
	 * near[0]): near[q] and near[q + 1], read as one word, say whether
	 * one is on page q or q + 1, and scan_look_avx2 tests the blocks a
	 * symbol lies on; quick: false for no quick test. */
	const unsigned char *near;
	bool quick;
	bool wide;           /* scan_look_avx2 passes over symbols */
#if defined(__x86_64__)
	struct group_k k;    /* where wide */
#endif
};

/* near for the batch's addresses, where the bias is whole pages and
 * leaves room above it: a symbol of 1 to 4,096 bytes starting on
 * st_value's page q lies on pages q and q + 1 at most, so clear near[q]
 * and near[q + 1] say it covers none of them, from st_value alone,
 * before the bias is added or the end computed. */
static bool scan_near(unsigned char *near, const GElf_Addr *a, size_t n, uint64_t bias,
		      uint64_t lo_addr)
{
	if (bias & 4095 || lo_addr != bias || bias > UINT64_MAX - ((uint64_t)PAGE_BITS << 13))
		return false;
	for (size_t j = 0; j < n; j++) {
		uint64_t q = ((a[j] >> 12) - (bias >> 12)) & (PAGE_BITS - 1);
		near[q] |= (unsigned char)(1u << (a[j] >> 9 & 7));
	}
	near[PAGE_BITS] = near[0];
	return true;
}

/* near[q] and near[q + 1], in one read. */
typedef uint16_t __attribute__((may_alias, aligned(1))) near_pair;

/* Must batch look at y by its kind alone (its value and size aside): an
 * extended section index, or a name, a section and a type sym_quick
 * does not skip (a section's, a file's, TLS). */
static inline __attribute__((always_inline)) bool kind_looked_at(const Elf64_Sym *y)
{
	const unsigned skip_types = 1u << STT_SECTION | 1u << STT_FILE | 1u << STT_TLS;
	return y->st_shndx == SHN_XINDEX ||
	       (y->st_name && y->st_shndx != SHN_UNDEF &&
		!(skip_types >> ELF64_ST_TYPE(y->st_info) & 1));
}

/* scan_quick's test of y: passed over without the full test. */
static inline __attribute__((always_inline)) bool quick_pass(const Elf64_Sym *y, size_t strsize,
								 unsigned in_sec,
								 const unsigned char *near)
{
	uint64_t q = y->st_value >> 12;
	/* q and size - 1 both below 4,096 (PAGE_BITS): one compare */
	bool plain = y->st_shndx - 1u < in_sec && (q | (y->st_size - 1)) < PAGE_BITS;
	if (__builtin_expect(y->st_name < strsize && plain && !*(const near_pair *)&near[q], 1))
		return true;
	if (y->st_name >= strsize || plain)
		return false;
	return !kind_looked_at(y);
}

/* The first symbol from y below end that scan_look must test in full:
 * one of 1 to 4,096 bytes in a section, whose page scan_near's bits
 * rule out, or one sym_quick skips by its name, section or type
 * whatever its value (a name in the table and no extended index), is
 * passed over.  A loop of its own, so that its six values stay in
 * registers (inside scan_look's, they were spilled). */
static __attribute__((noinline)) const Elf64_Sym *scan_quick(const struct scan *sc,
							     const Elf64_Sym *y,
							     const Elf64_Sym *end)
{
	const size_t strsize = sc->strsize;
	const unsigned in_sec = sc->quick ? sc->in_sec : 0;  /* 0: no symbol plain */
	const unsigned char *near = sc->near;
	for (; y < end && quick_pass(y, strsize, in_sec, near); y++)
		;
	return y;
}

/* The first of a[0, n), ascending, at or above v (n: none). */
static size_t first_at(const GElf_Addr *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does [v, e) hold an address of the batch? */
static bool covers(const struct scan *sc, uint64_t v, uint64_t e)
{
	size_t j = first_at(sc->a, sc->n, v);
	return j < sc->n && sc->a[j] < e;
}

/* Must batch look at y, which scan_quick did not pass over?  A plain
 * symbol with a size that covers no address of the batch changes
 * nothing, and one sym_quick skips (no name, undefined, a section's, a
 * file's, TLS) is nothing; a symbol on an address's page is tested by
 * the binary search batch's loop makes (of the C library's ~400 symbols
 * on the pages of a measured /bin/date's addresses, ~40 cover one: the
 * others cost batch's loop ~150 instructions each). */
static inline __attribute__((always_inline)) bool scan_full(const struct scan *sc,
							     const Elf64_Sym *y)
{
	uint64_t v = y->st_value + sc->bias, e = v + y->st_size;
	if (y->st_name >= sc->strsize)
		return true;
	/* e > v: a size, and no wrap (one test for both) */
	if (y->st_shndx - 1u < sc->in_sec && v >= sc->lo_addr && e > v)
		return covers(sc, v, e);
	return kind_looked_at(y);
}

/* The first symbol from y below end that batch must look at (end:
 * none): most are passed over by scan_quick, the rest tested in full. */
static __attribute__((noinline)) const Elf64_Sym *scan_look(const struct scan *sc,
							    const Elf64_Sym *y,
							    const Elf64_Sym *end)
{
	for (; (y = scan_quick(sc, y, end)) < end && !scan_full(sc, y); y++)
		;
	return y;
}

#if defined(__x86_64__)
/* Of the eight symbols from y, those scan_quick's test does not pass
 * over (not 0). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
scan_group(const struct group_k *k, const int *blocks, const Elf64_Sym *y)
{
	const int *b = (const int *)(const void *)y;
	__m256i name = _mm256_i32gather_epi32(b, k->at, 4);
	__m256i word = _mm256_i32gather_epi32(b + 1, k->at, 4);
	__m256i vlo = _mm256_i32gather_epi32(b + 2, k->at, 4);
	__m256i vhi = _mm256_i32gather_epi32(b + 3, k->at, 4);
	__m256i slo = _mm256_i32gather_epi32(b + 4, k->at, 4);
	__m256i shi = _mm256_i32gather_epi32(b + 5, k->at, 4);
	/* plain: st_value < 2^24 and 1 <= st_size <= 4,096 (q and size - 1
	 * below 4,096, the high halves 0), in a section */
	__m256i q = _mm256_srli_epi32(vlo, 12), size1 = _mm256_add_epi32(slo, k->ones);
	__m256i odd = _mm256_or_si256(vhi, shi);
	odd = _mm256_or_si256(odd, _mm256_srli_epi32(_mm256_or_si256(q, size1), 12));
	odd = _mm256_or_si256(odd, _mm256_subs_epu16(_mm256_sub_epi16(word, k->one_hi),
						     k->sec_max));
	__m256i plain = _mm256_cmpeq_epi32(odd, _mm256_setzero_si256());
	/* the 512-byte blocks of pages q and q + 1 it lies on, first to
	 * last (0 to 15), against the addresses' (near[q] and near[q + 1]
	 * in the low half of four bytes read at q; a symbol not plain,
	 * whose q may be out of the map, reads nothing) */
	__m256i off = _mm256_and_si256(vlo, k->page);
	__m256i first = _mm256_srli_epi32(off, 9);
	__m256i last = _mm256_srli_epi32(_mm256_add_epi32(off, size1), 9);
	__m256i span = _mm256_andnot_si256(_mm256_sllv_epi32(k->two_up, last),
					   _mm256_sllv_epi32(k->two, first));
	__m256i in = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), blocks, q, plain, 1);
	__m256i far = _mm256_or_si256(odd, _mm256_and_si256(in, span));
	/* or, not plain, skipped by its type (its bit of skip_types moved
	 * to the sign), no extended index */
	__m256i kind = _mm256_srai_epi32(
		_mm256_sllv_epi32(k->skip_types, _mm256_and_si256(word, k->type_mask)), 31);
	kind = _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_srli_epi32(word, 16), k->xindex),
				   kind);
	kind = _mm256_andnot_si256(plain, kind);
	/* and a name in the table (its min with strsize - 1 is itself) */
	return _mm256_or_si256(_mm256_andnot_si256(kind, far),
			       _mm256_xor_si256(_mm256_min_epu32(name, k->nmax), name));
}

__attribute__((target("avx2"))) static void group_init(struct scan *sc)
{
	const uint32_t name_max = sc->strsize - 1 > UINT32_MAX ? UINT32_MAX :
				  (uint32_t)(sc->strsize - 1);
	/* st_shndx - 1 < in_sec, in the high half of the word at byte 4 (the
	 * low half, st_info and st_other, saturates to 0): x - 1 wraps 0 to
	 * 0xffff, and less in_sec - 1, saturated, is 0 where x is in range */
	sc->k = (struct group_k){
		.at = _mm256_setr_epi32(0, 6, 12, 18, 24, 30, 36, 42), /* 24 bytes apart */
		.ones = _mm256_set1_epi32(-1),
		.nmax = _mm256_set1_epi32((int)name_max),
		.one_hi = _mm256_set1_epi32(0x10000),
		.sec_max = _mm256_set1_epi32((int)((sc->in_sec - 1u) << 16 | 0xffffu)),
		.page = _mm256_set1_epi32(PAGE_BITS - 1),
		.two = _mm256_set1_epi32(0xffff),
		.two_up = _mm256_set1_epi32(0xfffe),
		.type_mask = _mm256_set1_epi32(0xf),
		.skip_types = _mm256_set1_epi32((int)(0x80000000u >> STT_SECTION |
						      0x80000000u >> STT_FILE |
						      0x80000000u >> STT_TLS)),
		.xindex = _mm256_set1_epi32(SHN_XINDEX),
	};
}

/* Of the symbols from y that look's bits name, the first scan_look
 * looks at (NULL: none). */
static inline __attribute__((always_inline)) const Elf64_Sym *
lanes_look(const struct scan *sc, const Elf64_Sym *y, unsigned look)
{
	for (; look; look &= look - 1) {
		const Elf64_Sym *s = y + __builtin_ctz(look);
		if (!quick_pass(s, sc->strsize, sc->in_sec, sc->near) && scan_full(sc, s))
			return s;
	}
	return NULL;
}

/* scan_look with scan_quick's test made eight symbols at a time, where
 * the CPU has AVX2, and a plain symbol's finer (the 512-byte blocks it
 * lies on against the addresses', not its page and the next): each field
 * of the eight read by one gather (the name, the word holding the type
 * and section index, both halves of st_value and of st_size) and
 * scan_quick's two tests of the eight made in a few vector instructions,
 * ~6 a symbol where the scalar loop takes ~21: a plain symbol off the
 * addresses' pages, and a file's, a section's or a TLS one (of the C
 * library's 10,000, 8,100 and 1,800).  A symbol either does not pass
 * (~1 in 70: on an address's page, another kind, a name out of the
 * table) goes to scan_quick alone, and then to the full test, as in
 * scan_look.  So every symbol passed over here is one scan_quick or the
 * full test passes over. */
__attribute__((target("avx2"), noinline)) static const Elf64_Sym *
scan_look_avx2(const struct scan *sc, const Elf64_Sym *y, const Elf64_Sym *end)
{
	const struct group_k *k = &sc->k;
	const int *blocks = (const int *)(const void *)sc->near;
	const __m256i zero = _mm256_setzero_si256();
	const Elf64_Sym *s;
	/* sixteen at a time, one test of both eights (most often clear),
	 * then eight, then one by one */
	for (; end - y >= 16; y += 16) {
		__m256i lo = scan_group(k, blocks, y), hi = scan_group(k, blocks, y + 8);
		__m256i both = _mm256_or_si256(lo, hi);
		if (__builtin_expect(_mm256_testz_si256(both, both), 1))
			continue;
		unsigned look = ~((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
					  _mm256_cmpeq_epi32(lo, zero))) |
				  (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
					  _mm256_cmpeq_epi32(hi, zero))) << 8) & 0xffffu;
		if ((s = lanes_look(sc, y, look)))
			return s;
	}
	if (end - y >= 8) {
		unsigned look = ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
				_mm256_cmpeq_epi32(scan_group(k, blocks, y), zero))) & 0xffu;
		if ((s = lanes_look(sc, y, look)))
			return s;
		y += 8;
	}
	return scan_look(sc, y, end);
}
#endif

/* The index of scan_look's answer from i below to. */
static int scan_next(const struct scan *sc, int i, int to)
{
	const Elf64_Sym *y = sc->sym + i, *const end = sc->sym + to;
#if defined(__x86_64__)
	if (sc->wide)
		y = scan_look_avx2(sc, y, end);
	else
#endif
		y = scan_look(sc, y, end);
	return y < end ? (int)(y - sc->sym) : to;
}

/* sc for a read of t for the n addresses a, near zeroed by the caller;
 * how: enum mc_scan_how. */
static void scan_init(struct scan *sc, const struct mc_symtab *t, const GElf_Addr *a, size_t n,
		      unsigned char *near, int how)
{
	const size_t shnum = t->raw.sh ? t->raw.shnum : SHN_LORESERVE;
	const unsigned secs = (unsigned)(shnum < SHN_LORESERVE ? shnum : SHN_LORESERVE);
	/* field by field: k, where wide, is group_init's */
	sc->sym = t->raw.sym;
	sc->a = a;
	sc->n = n;
	sc->strsize = t->raw.strsize;
	sc->bias = t->raw.bias;
	sc->lo_addr = t->lo;
	sc->in_sec = secs ? secs - 1u : 0u;
	sc->near = near;
	sc->quick = how != MC_SCAN_FULL && scan_near(near, a, n, t->raw.bias, t->lo);
	/* mc_cpu_avx2: the C library's answer (sys.c), no cpuid trap */
	sc->wide = how == MC_SCAN_BEST && sc->quick && sc->in_sec && sc->strsize && mc_cpu_avx2();
#if defined(__x86_64__)
	if (sc->wide)
		group_init(sc);
#endif
}

/* mc_symtab_names_raw for at most BATCH addresses, the table not built:
 * one read of it, each symbol with a size placed among the addresses by
 * a binary search, then sym_fast's rule for each address. */
static void batch(const struct mc_symtab *t, const GElf_Addr *a, size_t n, const char **name,
		  bool *done)
{
	uint32_t cand[BATCH][8];
	uint8_t k[BATCH], state[BATCH];
	GElf_Addr at[BATCH], size[BATCH];   /* a global chosen: its symbol's */
	memset(state, B_OPEN, n);
	if (t->nsyms <= 1 || t->first_global < 0)
		return;
	unsigned char near[PAGE_BITS + NEAR_PAD] = { 0 };
	struct scan sc;
	scan_init(&sc, t, a, n, near, MC_SCAN_BEST);
	for (int p = 0; p < 2; p++) {
		struct sym_pass ps;
		pass_begin(&ps);
		memset(k, 0, n);
		int from, to;
		pass_bounds(t, p, &from, &to);
		for (int i = scan_next(&sc, from, to); i < to; i = scan_next(&sc, i + 1, to)) {
			struct sym_entry e;
			int got = pass_take(t, &ps, i, &e);
			if (got == SYM_ODD)
				return;
			if (got != SYM_SPAN)
				continue;
			for (size_t j = first_at(a, n, e.value); j < n && a[j] - e.value < e.size; j++) {
				if (state[j] == B_DONE && p && e.value == at[j] && e.size == size[j])
					name[j] = local_alias_at(t, i, name[j]);
				else if (state[j] == B_OPEN && k[j] == 8)
					state[j] = B_LEFT;
				else if (state[j] == B_OPEN)
					cand[j][k[j]++] = (uint32_t)i;
			}
		}
		for (size_t j = 0; j < n; j++) {
			if (state[j] != B_OPEN)
				continue;
			if (!k[j]) {
				if (ps.min_sizeless <= a[j] || (ps.abs_lo <= a[j] && a[j] <= ps.abs_hi))
					state[j] = B_LEFT;
				continue;
			}
			/* the covering symbols, in the table's order */
			struct sym_entry e[8];
			struct sym_search s = { .t = t, .addr = a[j] };
			state[j] = B_DONE;
			for (int q = 0; q < k[j] && state[j] == B_DONE; q++)
				if (sym_get(t, (int)cand[j][q], &e[q]) != SYM_OK)
					state[j] = B_LEFT;
			for (int q = 0; q < k[j] && state[j] == B_DONE; q++)
				sym_visit(&s, &e[q]);
			if (state[j] == B_DONE) {
				name[j] = valgrind_alias(s.closest, e, (size_t)k[j])->name;
				at[j] = s.closest ? s.closest->value : 0;
				size[j] = s.closest ? s.closest->size : 0;
			}
		}
	}
	for (size_t j = 0; j < n; j++) {
		if (state[j] == B_OPEN)
			name[j] = NULL;  /* no symbol in either pass */
		done[j] = state[j] != B_LEFT;
	}
}

/* The asks of one address each that a module's table answers with a read
 * of it (batch) before it is built: a report names a few sites, and a
 * read of the C library's table costs ~45 K instructions (callgrind,
 * bench/suite_test 1) where building it costs ~1 M; past this many, the
 * build pays (and a read that cannot say, B_LEFT, builds at once). */
#define SCAN_ASKS 8

const char *mc_symtab_name_raw(struct mc_symtab *t, GElf_Addr addr, bool *ask)
{
	if (!t->built && t->scanned < SCAN_ASKS) {
		const char *name = NULL;
		bool done = false;
		t->scanned++;
		batch(t, &addr, 1, &name, &done);
		if (done) {
			*ask = false;
			return name;
		}
	}
	if (!t->built)
		raw_build(t);
	return search(t, addr, ask);
}

void mc_symtab_names_raw(struct mc_symtab *t, const GElf_Addr *a, size_t n, const char **name,
			 bool *done)
{
	memset(done, 0, n * sizeof *done);
	if (t->built) {
		for (size_t j = 0; j < n; j++) {
			bool ask;
			name[j] = search(t, a[j], &ask);
			done[j] = !ask;
		}
		return;
	}
	for (size_t c = 0; c < n; c += BATCH)
		batch(t, a + c, n - c < BATCH ? n - c : BATCH, name + c, done + c);
}

int mc_symtab_scan_next(const struct mc_symtab *t, const GElf_Addr *a, size_t n, int i, int to,
			int how)
{
	unsigned char near[PAGE_BITS + NEAR_PAD] = { 0 };
	struct scan sc;
	scan_init(&sc, t, a, n, near, how);
	return scan_next(&sc, i, to);
}

void mc_symtab_free(struct mc_symtab *t)
{
	if (t->v)
		mc_unmap(t->v, t->mapped);
	if (t->spans)
		mc_unmap(t->spans, t->spans_mapped);
	*t = (struct mc_symtab){ 0 };
}
