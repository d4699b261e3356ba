/*
 * symtab.h - shared by symbolize.c's parts, symtab.c and elfmod.c only (it needs
 * libdw's types, which internal.h does not include): a module's symbol
 * table, searched as libdw searches it, and the objects' files elfmod.c
 * reads without libdw.
 */
#ifndef MC_SYMTAB_H
#define MC_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Of two symbols at one address and size, whether valgrind names the
 * function a rather than b (its storage.c's prefersym): PMPI_x before
 * MPI_x, then the shorter name up to any '@', then a versioned one,
 * then the first in strcmp's order.  symtab.c's choice among aliases;
 * tests/unit_symbolize.c's expectation of it. */
static inline bool mc_valgrind_prefers(const char *a, const char *b)
{
	if (strncmp(a, "PMPI_", 5) == 0 && strncmp(b, "MPI_", 4) == 0 && strcmp(a + 1, b) == 0)
		return true;
	if (strncmp(b, "PMPI_", 5) == 0 && strncmp(a, "MPI_", 4) == 0 && strcmp(b + 1, a) == 0)
		return false;
	const char *va = strchr(a, '@'), *vb = strchr(b, '@');
	size_t la = va ? (size_t)(va - a) : strlen(a), lb = vb ? (size_t)(vb - b) : strlen(b);
	if (la != lb)
		return la < lb;
	if (!va != !vb)
		return va != NULL;
	return strcmp(a, b) < 0;
}

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
	/* The file's section headers, where memcheck read the table itself
	 * (elfmod.c): a symbol of a section not loaded (SHF_ALLOC clear,
	 * .gnu.warning.*) is one libdw does not place in the module, and the
	 * search skips it.  NULL: libdw's table (raw_symtab). */
	const Elf64_Shdr *sh;
	size_t shnum;
	/* The object's own file's headers (the symbols' file's, or the
	 * stripped object beside its debug file), whose SHF_ALLOC sections
	 * libdw places an address in to take a symbol of no size. */
	const Elf64_Shdr *msh;
	size_t mshnum;
};

/* One pass of the search (globals or locals): its symbols with a size,
 * sorted by address (struct span, in symtab.c); its lowest size-0
 * symbol in a section, and the span of its size-0 absolute ones (symbol
 * versions, at 0), which count only at their own address. */
#define SYM_ZWIN 8
struct sym_pass {
	struct span *s;
	size_t n;
	GElf_Addr min_sizeless;
	GElf_Addr abs_lo, abs_hi;
	/* Where a size-0 symbol in a section may still be the answer
	 * (symtab.c's zero_windows): [zlo, zhi) each, nz of them; -1:
	 * unknown, every address at or above min_sizeless. */
	int nz;
	GElf_Addr zlo[SYM_ZWIN], zhi[SYM_ZWIN];
};

struct mc_symtab {
	bool built;
	bool usable;        /* false: ask dwfl_module_addrname */
	unsigned scanned;   /* mc_symtab_name_raw's asks answered unbuilt */
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
 * symdw.c dlopened libdw.so.1 with (libelf is its dependency). */
void mc_symtab_bind(void *libdw);
/* The name libdw's dwfl_module_addrname gives addr in mod, through t,
 * mod's table, built on first use. */
const char *mc_symtab_name(struct mc_symtab *t, Dwfl_Module *mod, GElf_Addr addr);
void mc_symtab_free(struct mc_symtab *t);
/* t over a table memcheck read itself (elfmod.c), with no libdw module:
 * usable is false where the search could not take it. */
void mc_symtab_raw(struct mc_symtab *t, const struct raw_syms *r, int nsyms, int first_global);
/* The name libdw would give addr through t, a table of mc_symtab_raw's
 * (its first few asks each a read of the table, as mc_symtab_names_raw's
 * batch; built, sorted, past them); *ask: only libdw's own search can
 * say (t has no module to ask). */
const char *mc_symtab_name_raw(struct mc_symtab *t, GElf_Addr addr, bool *ask);
/* The same for n addresses, ascending: name[i], where done[i]; those not
 * done are mc_symtab_name_raw's to answer.  Before t is built, one read
 * of the table answers most of them without building it: a short
 * process's exit names a few dozen addresses of the C library, whose
 * 10,000 symbols the build sorts (~1 M instructions, 320 KiB). */
void mc_symtab_names_raw(struct mc_symtab *t, const GElf_Addr *a, size_t n, const char **name,
			 bool *done);
/* How mc_symtab_scan_next passes over symbols: MC_SCAN_FULL tests each in
 * full, MC_SCAN_SCALAR as a batch does without AVX2, MC_SCAN_BEST as a
 * batch does here. */
enum mc_scan_how { MC_SCAN_FULL, MC_SCAN_SCALAR, MC_SCAN_BEST };
/* For unit_symbolize: the first symbol of t's raw table from i below to
 * that a batch of the n addresses a (ascending) looks at (to: none),
 * found as how says; every way must find the same. */
int mc_symtab_scan_next(const struct mc_symtab *t, const GElf_Addr *a, size_t n, int i, int to,
			int how);

/* ---- elfmod.c: a loaded object's ELF files read without libdw ---- */

#define MC_ELFMOD_SLOTS 16
#define MC_ELFMOD_PATH (sizeof ((struct mc_frame_info *)0)->object)
/* Where the object's DWARF is: none anywhere, its own file's, a separate
 * file's. */
enum { MC_DI_NONE, MC_DI_OWN, MC_DI_ELSEWHERE };
/* One section of the object's own file (data NULL: not in the file). */
struct mc_elf_sec {
	const char *name;
	uint32_t type;
	uint64_t flags;
	const void *data;
	size_t size;
};
struct mc_elfmod;
/* The object holding addr, its files read once, if libdw's reading of
 * them is plain (elfmod.c's head); NULL otherwise.  *fresh: the slot
 * [0, MC_ELFMOD_SLOTS) this call filled, whose earlier object is gone
 * (what the caller kept for it is stale), or -1. */
struct mc_elfmod *mc_elfmod_find(uintptr_t addr, int *fresh);
int mc_elfmod_slot(const struct mc_elfmod *m);
const char *mc_elfmod_path(const struct mc_elfmod *m);
int mc_elfmod_debuginfo(const struct mc_elfmod *m);
/* The GNU build ID of the object's own file (NULL: none), *len bytes. */
const unsigned char *mc_elfmod_build_id(const struct mc_elfmod *m, size_t *len);
uint64_t mc_elfmod_bias(const struct mc_elfmod *m);
/* [*lo, *hi): the object's mappings, from its first byte (the first
 * mapping of its file) to the end of what the dynamic linker reserved. */
void mc_elfmod_range(const struct mc_elfmod *m, uintptr_t *lo, uintptr_t *hi);
/* The symbol table names come from (its raw entries and their count). */
const struct mc_symtab *mc_elfmod_symtab(const struct mc_elfmod *m);
/* dwfl_module_addrname's answer at addr; *ask: libdw must say. */
const char *mc_elfmod_name(struct mc_elfmod *m, uintptr_t addr, bool *ask);
/* The same for n addresses of m, ascending (mc_symtab_names_raw). */
void mc_elfmod_names(struct mc_elfmod *m, const uint64_t *addr, size_t n, const char **name,
		     bool *done);
/* The sections of the object's own file, in order, to fn; false when a
 * section has no name. */
bool mc_elfmod_sections(const struct mc_elfmod *m, void (*fn)(const struct mc_elf_sec *, void *),
			void *arg);
/* The i-th place memcheck looks for a .gnu_debuglink name link of the
 * object at file (beside it, in .debug/ beside it, under /usr/lib/debug),
 * into path (empty: skipped, too long or file itself); false past the
 * last. */
bool mc_debuglink_place(const char *file, const char *link, size_t i, char *path, size_t cap);
/* Whether one of those places holds a file (access(2), errno kept). */
bool mc_debuglink_found(const char *file, const char *link);
/* The key of a loaded object's quick names in symcache.c's files: its
 * build ID from the loaded image's PT_NOTE (no file read) and the state
 * of its build-ID debug file's path (absent, or which file), the one
 * thing outside its own bytes that decides the table pick_table takes
 * once a .gnu_debuglink file is not looked for (mc_elfmod_quick_ok). */
struct mc_quick_key {
	uintptr_t lo, hi;         /* the object's first byte, past its last */
	uint64_t bias;
	unsigned char key[64];
	size_t len, idlen;        /* key's bytes; the build ID's, first */
	bool debug;               /* a file at the build-ID debug file's path */
	char path[MC_ELFMOD_PATH];   /* its file, as mc_elfmod_path gives it */
};
/* addr's object's key into *k (one stat); false: none (no build ID, not
 * a plain file, no _dl_find_object). */
bool mc_elfmod_quick_key(uintptr_t addr, struct mc_quick_key *k);
/* The path of the build-ID debug file of the object loaded at addr, the
 * one this file opens (its build ID from the loaded image); false: no
 * object there, no build ID, or no _dl_find_object. */
#define MC_DEBUG_PATH_MAX (sizeof "/usr/lib/debug/.build-id/" + 2 * 64 + 1 + sizeof ".debug")
bool mc_elfmod_debug_path_at(uintptr_t addr, char path[MC_DEBUG_PATH_MAX]);
/* Are m's names those of k's key: the build ID is its file's and no
 * .gnu_debuglink file was looked for (places the key does not check)?
 * With link (may be NULL), one was also where *link names it (its
 * places held no file: else m is NULL), NULL where none was: the
 * names then hold while those places hold none (the caller keeps the
 * name beside them, symcache.c's link record). */
bool mc_elfmod_quick_ok(const struct mc_elfmod *m, const struct mc_quick_key *k,
			const char **link);
/* False where an object this process read (k's) took its names in
 * another state of its build-ID debug file than k holds (elfmod.c
 * debug_unlike): what they decided is not k's to keep. */
bool mc_elfmod_names_keyed(const struct mc_quick_key *k);
/* The .gnu_debuglink name whose places m's reading found without a
 * file (m's names hold while they stay so), NULL: none looked for (a
 * build-ID debug file was found, or both a symbol table and DWARF are
 * the object's own). */
const char *mc_elfmod_link(const struct mc_elfmod *m);
/* The table of mc_maps_runs_note's records that the objects' paths are
 * taken from (NULL: a read of /proc/self/maps of elfmod.c's own), lent
 * by the scan (mc_symbolize_maps_lend). */
void mc_elfmod_runs_lend(const struct mc_buf *runs);
/* Every object forgotten (unmap: its files and tables released; false in
 * a forked child, where another thread may have been reading them). */
void mc_elfmod_forget(bool unmap);

#endif
