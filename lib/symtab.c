/*
 * symtab.c - a module's symbol table searched as libdw searches it, for
 * the names suppressions match and reports print.  libdw's own search
 * (dwfl_module_addrname) walks the whole table through libelf for every
 * address: ~150 us a name in the C library's 8,000 symbols, most of a
 * short process's exit.  Here the table is read once per module, straight
 * from the ELF section where libdw's copy allows (getsym_info costs ~350
 * instructions a symbol), and each name is a binary search among the
 * symbols with a size; the walk remains where a size-0 symbol could be
 * libdw's answer.  Every name is the one libdw gives (unit_symbolize
 * compares them).  Memory from mc_map, never malloc: this runs inside
 * the hooks' guard but must not grow the program's heap.
 */
#include <dlfcn.h>
#include <string.h>

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

void mc_symtab_bind(void *libdw)
{
	st.addrname = dlsym(libdw, "dwfl_module_addrname");
	st.getsymtab = dlsym(libdw, "dwfl_module_getsymtab");
	st.first_global = dlsym(libdw, "dwfl_module_getsymtab_first_global");
	st.getsym_info = dlsym(libdw, "dwfl_module_getsym_info");
	st.symtab = st.getsymtab && st.first_global && st.getsym_info;
	st.nextscn = dlsym(libdw, "elf_nextscn");
	st.getscn = dlsym(libdw, "elf_getscn");
	st.getdata = dlsym(libdw, "elf_getdata");
	st.getshdr = dlsym(libdw, "gelf_getshdr");
	st.getehdr = dlsym(libdw, "gelf_getehdr");
	st.raw = st.nextscn && st.getscn && st.getdata && st.getshdr && st.getehdr;
}

/* Heapsort by start: in place, without malloc (qsort may call it). */
static void sift(struct mc_span *r, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && r[c + 1].start > r[c].start)
			c++;
		if (r[i].start >= r[c].start)
			return;
		struct mc_span t = r[i];
		r[i] = r[c];
		r[c] = t;
	}
}

/* By start, and each range's maxend.  An LSD radix sort of start less
 * the lowest start, 11 bits a pass, as many passes as the spread needs
 * (two for the C library's 2 MiB): a heapsort of its 8,000 symbols took
 * ~3 M instructions, more than all the names a process's exit looks up.
 * The heapsort remains for when there is no memory for the copy. */
void mc_spans_sort(struct mc_span *r, size_t n)
{
	Dwarf_Addr lo = n ? r[0].start : 0, spread = 0;
	for (size_t i = 1; i < n; i++)
		lo = r[i].start < lo ? r[i].start : lo;
	for (size_t i = 0; i < n; i++)
		spread |= r[i].start - lo;
	struct mc_span *tmp = n > 1 ? mc_map(n * sizeof *r) : NULL;
	if (tmp) {
		struct mc_span *from = r, *to = tmp;
		for (int shift = 0; shift < 64 && spread >> shift; shift += 11) {
			uint32_t at[2048] = { 0 };
			for (size_t i = 0; i < n; i++)
				at[(from[i].start - lo) >> shift & 2047]++;
			for (uint32_t d = 0, sum = 0; d < 2048; d++) {
				uint32_t c = at[d];
				at[d] = sum;
				sum += c;
			}
			for (size_t i = 0; i < n; i++)
				to[at[(from[i].start - lo) >> shift & 2047]++] = from[i];
			struct mc_span *x = from;
			from = to;
			to = x;
		}
		if (from != r)
			memcpy(r, from, n * sizeof *r);
		mc_unmap(tmp, n * sizeof *r);
	} else {
		for (size_t i = n / 2; i-- > 0;)
			sift(r, i, n);
		for (size_t i = n; i-- > 1;) {
			struct mc_span x = r[0];
			r[0] = r[i];
			r[i] = x;
			sift(r, 0, i);
		}
	}
	for (size_t i = 0; i < n; i++)
		r[i].maxend = i && r[i - 1].maxend > r[i].end ? r[i - 1].maxend : r[i].end;
}

/* The ranges that cover a, the latest start first, into out[0, max).
 * Returns how many; max + 1 when there are more than max or the walk
 * back takes more than `steps` ranges (the caller then asks otherwise). */
size_t mc_spans_covering(const struct mc_span *r, size_t n, Dwarf_Addr a,
			  const struct mc_span **out, size_t max, size_t steps)
{
	size_t lo = 0, hi = n, k = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && r[i].maxend > a;) {
		if (!steps--)
			return max + 1;
		if (r[i].end > a) {
			if (k == max)
				return max + 1;
			out[k++] = &r[i];
		}
	}
	return k;
}


void mc_symtab_free(struct mc_symtab *t)
{
	if (t->v)
		mc_unmap(t->v, t->mapped);
	if (t->spans)
		mc_unmap(t->spans, t->spans_mapped);
	*t = (struct mc_symtab){ 0 };
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

/* Each pass's symbols with a size, sorted (the search in sym_fast);
 * without the memory, every name takes the walk of the whole table. */
static void sym_passes_build(struct mc_symtab *t)
{
	t->spans_mapped = t->n * sizeof *t->spans;
	t->spans = t->n ? mc_map(t->spans_mapped) : NULL;
	if (!t->spans)
		return;
	size_t k = 0;
	for (int p = 0; p < 2; p++) {
		struct sym_pass *ps = &t->pass[p];
		size_t from = p ? 0 : t->nlocal, to = p ? t->nlocal : t->n;
		ps->r = t->spans + k;
		ps->min_sizeless = ps->abs_lo = (GElf_Addr)-1;
		ps->abs_hi = 0;
		for (size_t i = from; i < to; i++) {
			const struct sym_entry *e = &t->v[i];
			if (!e->size && e->shndx >= SHN_LORESERVE) {
				ps->abs_lo = e->value < ps->abs_lo ? e->value : ps->abs_lo;
				ps->abs_hi = e->value > ps->abs_hi ? e->value : ps->abs_hi;
				continue;
			}
			/* A size that wraps the address space: libdw's test
			 * (addr - value < size) is no range; walk that pass. */
			if (!e->size || e->value + e->size < e->value) {
				if (e->value < ps->min_sizeless)
					ps->min_sizeless = e->size ? 0 : e->value;
				continue;
			}
			t->spans[k++] = (struct mc_span){ e->value, e->value + e->size, 0, i };
		}
		ps->n = (size_t)(t->spans + k - ps->r);
		mc_spans_sort(ps->r, ps->n);
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
struct raw_syms {
	const Elf64_Sym *sym;
	const char *str;
	size_t strsize;
	Dwarf_Addr bias;
};

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

static void sym_table_build(struct mc_symtab *t, Dwfl_Module *mod)
{
	int n = st.getsymtab(mod), first_global = st.first_global(mod);
	t->built = true;
	if (n <= 1 || first_global < 0)
		return;
	t->mapped = (size_t)n * sizeof *t->v;
	t->v = mc_map(t->mapped);
	if (!t->v)
		return;
	/* libdw searches the globals first (from 1 when first_global is 0),
	 * then, finding nothing, the locals. */
	int gstart = first_global == 0 ? 1 : first_global;
	struct raw_syms raw;
	bool use_raw = raw_symtab(mod, n, first_global, &raw);
	for (int pass = 0; pass < 2; pass++) {
		int from = pass ? gstart : 1, to = pass ? n : gstart;
		if (!pass && first_global <= 1)
			continue;
		for (int i = from; i < to; i++) {
			GElf_Sym sym;
			GElf_Addr value;
			GElf_Word shndx;
			Elf *elf;
			Dwarf_Addr bias;
			const char *name;
			if (!use_raw || !raw_entry(&raw, i, &sym, &value, &shndx, &name))
				name = st.getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias);
			else
				bias = raw.bias;
			if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
			    GELF_ST_TYPE(sym.st_info) == STT_FILE ||
			    GELF_ST_TYPE(sym.st_info) == STT_TLS)
				continue;
			/* Resolved (function descriptors): libdw's way.
			 * Absolute symbols keep their st_value. */
			if (shndx < SHN_LORESERVE && value != sym.st_value + bias)
				return;
			t->v[t->n++] = (struct sym_entry){ value, sym.st_size, name, shndx,
							   binding_value(sym.st_info) };
		}
		if (!pass)
			t->nlocal = t->n;
	}
	t->usable = true;
	sym_passes_build(t);
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
			if (e->shndx < SHN_LORESERVE)
				s->ask_libdw = true;
			else if (e->value == s->addr)
				s->sizeless = e;
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

/* sym_search's answer without the walk, where it depends only on the
 * symbols with a size that cover addr: a symbol that does not cover it
 * moves only min_label, which matters only to size-0 symbols, and a
 * size-0 one is chosen (or sends the search to libdw, whose answer is
 * then the same) only when no sized one covers addr.  So where sized
 * ones cover addr in a pass, they decide, visited in the table's order;
 * where none does and the pass has no size-0 symbol at or below addr,
 * the pass finds nothing and the locals are searched next, as libdw
 * does.  false: a size-0 symbol may be chosen, or the covering ones are
 * too many to find cheaply; the walk decides. */
static bool sym_fast(struct sym_search *s)
{
	const struct mc_symtab *t = s->t;
	for (int p = 0; p < 2; p++) {
		const struct sym_pass *ps = &t->pass[p];
		const struct mc_span *c[8];
		size_t k = mc_spans_covering(ps->r, ps->n, s->addr, c, MC_ARRAY_SIZE(c), 64);
		if (k > MC_ARRAY_SIZE(c))
			return false;
		for (size_t i = 1; i < k; i++)  /* back into the table's order */
			for (size_t j = i; j > 0 && c[j - 1]->what > c[j]->what; j--) {
				const struct mc_span *x = c[j];
				c[j] = c[j - 1];
				c[j - 1] = x;
			}
		for (size_t i = 0; i < k; i++)
			sym_visit(s, &t->v[c[i]->what]);
		if (k)
			return true;
		if (ps->min_sizeless <= s->addr ||
		    (ps->abs_lo <= s->addr && s->addr <= ps->abs_hi))
			return false;
	}
	return true;
}

const char *mc_symtab_name(struct mc_symtab *t, Dwfl_Module *mod, GElf_Addr addr)
{
	if (!st.symtab)
		return st.addrname(mod, addr);
	if (!t->built)
		sym_table_build(t, mod);
	if (!t->usable)
		return st.addrname(mod, addr);
	struct sym_search s = { .t = t, .addr = addr };
	if (t->spans && sym_fast(&s))
		return s.closest ? s.closest->name : NULL;
	sym_search(&s, t->nlocal, t->n);
	if (!s.closest && t->nlocal && (!s.sizeless || s.sizeless->value != addr))
		sym_search(&s, 0, t->nlocal);
	if (s.ask_libdw)
		return st.addrname(mod, addr);
	if (!s.closest && s.sizeless && s.sizeless->value >= s.min_label)
		s.closest = s.sizeless;
	return s.closest ? s.closest->name : NULL;
}
