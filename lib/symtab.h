/*
 * symtab.h - shared by symbolize.c and symtab.c only (it needs libdw's
 * types, which internal.h does not include): a module's symbol table,
 * searched as libdw searches it.
 */
#ifndef MC_SYMTAB_H
#define MC_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One symbol as the search sees it. */
struct sym_entry {
	GElf_Addr value;    /* st_value + its file's bias */
	GElf_Xword size;
	const char *name;   /* in libelf's copy of the string table */
	GElf_Word shndx;
	unsigned char bind; /* binding_value: global 3, weak 2, local 1, other 0 */
};

/* The ELF64 table libdw reads the module's symbols from (raw_symtab). */
struct raw_syms {
	const Elf64_Sym *sym;
	const char *str;
	size_t strsize;
	Dwarf_Addr bias;
};

/* One pass of the search (globals or locals): its symbols with a size,
 * sorted by address (struct span, in symtab.c); its lowest size-0
 * symbol in a section, and the span of its size-0 absolute ones (symbol
 * versions, at 0), which count only at their own address. */
struct sym_pass {
	struct span *s;
	size_t n;
	GElf_Addr min_sizeless;
	GElf_Addr abs_lo, abs_hi;
};

struct mc_symtab {
	bool built;
	bool usable;        /* false: ask dwfl_module_addrname */
	Dwfl_Module *mod;
	int nsyms, first_global;
	/* The walk: every symbol the search can choose, in libdw's order;
	 * made at first need where the table is read raw. */
	bool walked;        /* v was tried */
	struct sym_entry *v;
	size_t n, mapped;
	size_t nlocal;      /* v[0, nlocal): the locals, searched second */
	/* The search: where the table is read raw. */
	bool raw_ok;
	struct raw_syms raw;
	GElf_Addr lo;       /* the spans' origin: the raw table's bias */
	int idx_bits;       /* a span's key: (value - lo) << idx_bits | index */
	struct sym_pass pass[2]; /* [0] the globals, [1] the locals */
	struct span *spans;      /* both passes', in one mapping */
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
