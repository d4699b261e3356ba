/*
 * symtab.h - shared by symbolize.c and symtab.c only (it needs libdw's
 * types, which internal.h does not include): sorted address ranges, and
 * a module's symbol table searched as libdw searches it.
 */
#ifndef MC_SYMTAB_H
#define MC_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Address ranges sorted by start, each with the largest end up to it,
 * so that those covering an address are found by a binary search and a
 * short walk back (ranges rarely overlap): compile units and symbols. */
struct mc_span {
	Dwarf_Addr start, end;
	Dwarf_Addr maxend;  /* the largest end of this and every earlier range */
	uint64_t what;      /* a unit's DIE offset; a symbol's index */
};

void mc_spans_sort(struct mc_span *r, size_t n);
size_t mc_spans_covering(const struct mc_span *r, size_t n, Dwarf_Addr a,
			  const struct mc_span **out, size_t max, size_t steps);

/* dwfl_module_addrname walks the module's whole symbol table through
 * libelf for every address: ~8,000 symbols for the C library's (its
 * debug file's .symtab), ~150 us a name, most of the cost of matching
 * suppressions at a process's exit.  mc_symtab reads the table once
 * into a flat array of the symbols that search can choose, in libdw's
 * order, and mc_symtab_name makes libdw's choice over it (libdwfl's
 * __libdwfl_addrsym, step for step: globals first; the closest symbol
 * below the address whose size covers it, among equals the better
 * binding, then the smaller size, then the first; a size-0 symbol in
 * the address's section as the fallback) -- the same name for every
 * address.  A module whose values are not plain st_value + bias
 * (function descriptors) is left to dwfl_module_addrname. */
struct sym_entry {
	GElf_Addr value;    /* st_value + its file's bias */
	GElf_Xword size;
	const char *name;   /* in libelf's copy of the string table */
	GElf_Word shndx;
	unsigned char bind; /* binding_value: global 3, weak 2, local 1, other 0 */
};

/* One pass of the search (globals or locals): its symbols with a size
 * as ranges (what: the index in v); its lowest size-0 symbol in a
 * section, and the span of its size-0 absolute ones (symbol versions,
 * at 0), which count only at their own address. */
struct sym_pass {
	struct mc_span *r;
	size_t n;
	GElf_Addr min_sizeless;
	GElf_Addr abs_lo, abs_hi;
};

struct mc_symtab {
	bool built;
	struct sym_entry *v;
	size_t n, mapped;
	size_t nlocal;      /* v[0, nlocal): the locals, searched second */
	bool usable;        /* false: ask dwfl_module_addrname */
	struct sym_pass pass[2]; /* [0] the globals, [1] the locals */
	struct mc_span *spans;     /* both passes' r, in one mapping */
	size_t spans_mapped;
};

/* libdw's and libelf's entry points that symtab.c calls, from the handle
 * symbolize.c dlopened libdw.so.1 with (libelf is its dependency). */
void mc_symtab_bind(void *libdw);
/* The name libdw's dwfl_module_addrname gives addr in mod, through t,
 * mod's table, built on first use. */
const char *mc_symtab_name(struct mc_symtab *t, Dwfl_Module *mod, GElf_Addr addr);
void mc_symtab_free(struct mc_symtab *t);

#endif
