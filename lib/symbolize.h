/*
 * symbolize.h - shared by the files that turn a return address into
 * frames (symbolize.c, the public entry points, and the sym*.c files it
 * stands on: symdw.c, symunits.c, symstr.c, symscopes.c, symmemo.c,
 * symkeys.c, symverdict.c, symsession.c, symname.c), and by nothing
 * else: it needs libdw's types, which internal.h does not include.  Its
 * functions keep the names they had as statics of one symbolize.c
 * (text-order.ld and the comments elsewhere name them); the library's
 * symbols are hidden, and every one of these is called with sym_lock
 * held.  Grouped by the file that defines them, from the bottom up.
 */
#ifndef MC_SYMBOLIZE_H
#define MC_SYMBOLIZE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symtab.h"

static inline void copy(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strlen(src) : 0;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src ? src : "", n);
	dst[n] = 0;
}

/* ---- symdw.c ---------------------------------------------------------- */

/* Entry points of libdw, typed from its header but never linked. */
struct mc_dw {
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_linux_proc_report) *proc_report;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_addrmodule) *addrmodule;
	__typeof__(dwfl_module_addrname) *addrname;
	__typeof__(dwfl_module_getsrc) *getsrc;
	__typeof__(dwfl_lineinfo) *lineinfo;
	__typeof__(dwfl_module_info) *module_info;
	__typeof__(dwfl_build_id_find_debuginfo) *build_id_find_debuginfo;
	/* For inlined frames; optional: without them each address is one
	 * frame, named after the function it was inlined into. */
	__typeof__(dwfl_module_addrdie) *addrdie;
	__typeof__(dwarf_getscopes) *getscopes;
	__typeof__(dwarf_getscopes_die) *getscopes_die;
	__typeof__(dwarf_tag) *tag;
	__typeof__(dwarf_attr_integrate) *attr_integrate;
	__typeof__(dwarf_attr) *attr;
	__typeof__(dwarf_formstring) *formstring;
	__typeof__(dwarf_formudata) *formudata;
	__typeof__(dwarf_getsrcfiles) *getsrcfiles;
	__typeof__(dwarf_filesrc) *filesrc;
	bool inlines;
	/* For the scopes at an address without dwarf_getscopes (scopes_at);
	 * optional, with cu_walk's: without them getscopes is asked. */
	__typeof__(dwarf_child) *child;
	__typeof__(dwarf_siblingof) *siblingof;
	__typeof__(dwarf_haspc) *haspc;
	__typeof__(dwarf_dieoffset) *dieoffset;
	bool fn_table;
	/* For modules without .debug_aranges (cu_by_walk); optional: without
	 * them their frames have no file:line. */
	__typeof__(dwfl_module_getdwarf) *getdwarf;
	__typeof__(dwarf_nextcu) *nextcu;
	__typeof__(dwarf_offdie) *offdie;
	__typeof__(dwarf_ranges) *ranges;
	__typeof__(dwarf_getsrc_die) *getsrc_die;
	__typeof__(dwarf_linesrc) *linesrc;
	__typeof__(dwarf_lineno) *lineno;
	bool cu_walk;
	/* For a line libdw gives past its sequence's end (line_past_end);
	 * optional: without them the line is taken. */
	__typeof__(dwfl_linecu) *linecu;
	__typeof__(dwfl_dwarf_line) *dwarf_line;
	__typeof__(dwarf_getsrclines) *getsrclines;
	__typeof__(dwarf_onesrcline) *onesrcline;
	__typeof__(dwarf_lineaddr) *lineaddr;
	__typeof__(dwarf_lineendsequence) *lineendsequence;
	__typeof__(dwarf_haspc) *unit_haspc;
	bool line_end;
	/* For mc_symbolize_may_name; optional: without them every name
	 * may be there. */
	__typeof__(dwfl_module_getelf) *getelf;
	__typeof__(elf_getshdrstrndx) *getshdrstrndx;
	__typeof__(elf_strptr) *strptr;
	__typeof__(elf_nextscn) *nextscn;
	__typeof__(gelf_getshdr) *getshdr;
	__typeof__(elf_getdata) *getdata;
	bool strings;
	/* For a session that reports its modules as they are asked for
	 * (session_module); optional: without them, every module at the
	 * session's start (dwfl_linux_proc_report). */
	__typeof__(dwfl_report_begin_add) *report_begin_add;
	__typeof__(dwfl_report_module) *report_module;
	bool lazy;
	/* For mc_symbolize_fn_line; optional: without it no line. */
	__typeof__(dwfl_module_addrinfo) *addrinfo;
	bool fn_start;
};
extern struct mc_dw dw;
/* libdwfl keeps a pointer to its callbacks for the session's lifetime. */
extern Dwfl_Callbacks dw_callbacks;
/* libdwfl is not thread-safe and two threads may report at once: every
 * symbolize file's state is kept under it. */
extern pthread_mutex_t sym_lock;
/* libdw bound, at its first call (the program's pending dlerror()
 * kept); false where it is missing or may not be loaded. */
bool load_libdw(void);

/* ---- symunits.c ------------------------------------------------------- */

/* libdw 0.188 finds the compile unit of an address only through
 * .debug_aranges, which clang does not write (without -gdwarf-aranges):
 * dwfl_module_getsrc and dwfl_module_addrdie then find nothing although
 * the line tables are there.  For such a module the address ranges of
 * its compile units are read once, the first time its lookup fails, into
 * a table sorted by start address (mmap'd, through mc_buf).  An address
 * in no unit at all (code built without -g) costs a search in it. */
struct cu_range {
	Dwarf_Addr start, end;
	Dwarf_Addr maxend;  /* the largest end of this and every earlier range */
	Dwarf_Off die;      /* the unit's DIE */
};

struct cu_table {
	bool built;
	struct mc_buf buf;  /* struct cu_range[n] */
	size_t n;
};
void cu_table_free(struct cu_table *t);
size_t ranges_sort(struct mc_buf *b);
void cu_table_build(struct cu_table *t, Dwarf *dbg);
/* How many of the sorted ranges start at or before a. */
static inline size_t ranges_upto(const struct cu_range *r, size_t n, Dwarf_Addr a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- symstr.c --------------------------------------------------------- */

/* The string data of a module's debug information, for
 * mc_symbolize_may_name: every name libdw can read from it (DW_AT_name,
 * DW_AT_linkage_name) lies in .debug_str, .debug_line_str or, inline,
 * in .debug_info, all in the module's own file.  Where names may come
 * from elsewhere (a separate debug file, dwz's shared file, split DWARF,
 * compressed sections) it is not usable and every name may be there.
 * What it answered is kept, a few lookups a module. */
struct dstr {
	bool built, usable;
	bool none;              /* no debug information at all, here or elsewhere */
	const char *p[5];       /* .debug_info, .debug_str, .debug_line_str, */
	size_t n[5];            /* .debug_aranges, .debug_abbrev */
	Dwarf_Addr bias;
	bool filtered;          /* dstr_filter_build was asked */
	int filter;             /* 1 + its dstr_filter slot, 0: none */
	int8_t aranges_all;     /* aranges_cover_all: 0 not asked, 1 yes, -1 no */
};
void dstr_memo_clear(void);
void dstr_filters_free(bool unmap);
void dstr_forget(struct dstr *d);
void dstr_build(struct dstr *d, Dwfl_Module *mod);
void dstr_build_own(struct dstr *d, const struct mc_elfmod *m);
bool dstr_has(struct dstr *d, uint64_t addr, const char *s, size_t len, bool *anywhere);

/* ---- symscopes.c ------------------------------------------------------ */

void unit_fns_forget(void);
void scopes_drop(void);
int resolve_inlines(Dwfl_Module *mod, uintptr_t addr, Dwarf_Die *cu, Dwarf_Addr bias,
		    struct mc_frame_info *out, int max);

/* ---- symmemo.c -------------------------------------------------------- */

/* Cached beside the full frames under two keys mc_symbolize_frames
 * never asks for (its max is at most MC_MAX_INLINE): the quick frame of
 * a pc whose full resolution reads no debug information, and of one
 * whose does. */
enum { QUICK_SHALLOW = 0, QUICK_DEEP = UINT16_MAX };
extern struct mc_buf pc_arena;
void pc_cache_clear(void);
void pc_cache_drop(void);
int pc_cache_get(uintptr_t pc, int max, struct mc_frame_info *out);
bool pc_room(void);
void pc_frame(int line, const char *const str[4], const size_t len[4]);
void pc_commit(uintptr_t pc, int max, size_t off, int n);
void pc_cache_put(uintptr_t pc, int max, const struct mc_frame_info *f, int n);

/* ---- symkeys.c -------------------------------------------------------- */

/* Whether an elfmod.c object's full frames may be kept in symcache.c's
 * files, by slot: only where they depend on its file's bytes alone, so
 * that the build ID names them (installing debug packages later cannot
 * change them): its own .debug_info and .debug_line, its own one symbol
 * table, no part of its DWARF in another file (dwz's .gnu_debugaltlink,
 * .debug_sup, split DWARF's .debug_addr and .dwo sections). */
struct own_key {
	bool checked, ok;
	bool info, line, elsewhere;
	int symtabs;
	unsigned char id[64];
	size_t idlen;
};

/* The keys of the objects' quick names in symcache.c's files (their
 * symbol tables' names: mc_elfmod_quick_key), found once an object a
 * session (a short process's: the program, the C library, a few more):
 * its build ID from its loaded image and one stat of its build-ID debug
 * file's path, no file opened.  Forgotten with elfmod.c's objects. */
struct qkey {
	struct mc_quick_key k;
	bool ok;                  /* k is a key; else k's range alone is known */
	int sys;                  /* -1: not asked yet (in_system_object) */
	int keep;                 /* vobj_keep's answer, -1: not asked yet */
	int linked;               /* linked_ok's answer, -1: not asked yet */
	char link[256];           /* and its link name */
	uint16_t absent_len;      /* a link name whose places hold no file */
	char absent[256];         /* (mc_symbolize_verdict_holds), 0: none */
	/* Its part of a verdict key (its key's length and bytes, its
	 * path's length and bytes: vpart_len of them) hashed once a
	 * session, where every look-up copied and hashed it again. */
	bool vpart;               /* oid and vpart_len made */
	uint16_t plen;            /* strnlen(k.path) */
	uint32_t vpart_len;
	uint64_t oid;
};
#define QKEYS 8
_Static_assert(QKEYS == MC_VERDICT_OBJS, "a verdict stack's objects are qkeys");

/* A quick record's line in the file of q's key (not its build ID's):
 * where the object's DWARF is (MC_DI_*), and QUICK_LINKED where its
 * table was picked after a .gnu_debuglink name's places were found
 * without a file (a stripped program whose debug package is not
 * installed: /bin/date).  Such names hold while those places hold no
 * file, which the key (the build ID and the build-ID debug file's
 * state) does not say: the file's link record names the link, and
 * linked_ok looks at its places beside this process's object, once a
 * session (elfmod.c's memo of paths without a file, which the
 * verdicts' check of the same places shares).  Before, such an
 * object's names were never kept, and a warm /bin/date opened, mapped
 * and read its own file at every exit to find its dynamic table's
 * names again (openat, fstat, mmap, close, 3 madvise; its cache file
 * is now read instead: fstat, read, close; perf stat -r 50, 3 rounds
 * by turns: 195-197 -> 192-193 page faults). */
#define QUICK_LINKED 0x100

#define ANY_SLOTS 64
#define ANY_LEN 46
struct any_memo {
	uint8_t q;               /* 1 + the qkey's index; 0: free */
	uint8_t len;
	bool found;
	char s[ANY_LEN];
};
extern unsigned any_used;
/* The debug strings of elfmod.c's objects, by slot. */
extern struct dstr own_str[MC_ELFMOD_SLOTS];

struct mc_elfmod *own_module(uintptr_t addr);
const struct own_key *own_key(const struct mc_elfmod *m);
bool in_system_object(uintptr_t addr);
struct qkey *qkey_of(uintptr_t addr);
bool linked_ok(struct qkey *q);
int quick_line(struct qkey *q, int32_t line);
bool key_file_first(const struct qkey *q);
struct any_memo *any_slot(const struct qkey *q, const char *s, size_t len);
void any_put(const struct qkey *q, const char *s, size_t len, bool found);
void any_clear(void);
bool links_absent(const char *path, const char *link);
void keys_forget(bool links);
/* Is q's object a system one whose DWARF is left alone? */
static inline bool qkey_sys(struct qkey *q, uintptr_t addr)
{
	if (q->sys < 0)
		q->sys = !mc_opt.symbolize_system && in_system_object(addr);
	return q->sys;
}

/* ---- symverdict.c ----------------------------------------------------- */

void verdict_forget(void);

/* ---- symsession.c ----------------------------------------------------- */

/* What is built for a module once, on first need; a few modules at a
 * time (the program and the libraries it leaks from), the oldest
 * replaced. */
struct mod_cache {
	Dwfl_Module *mod;       /* NULL: a free slot */
	struct cu_table cu;     /* its compile units, where libdw finds none */
	struct mc_symtab sym;   /* its symbols, for names */
	struct dstr str;        /* its debug information's strings */
};
void end_session(bool unmap_files);
Dwfl *get_session(void);
Dwfl_Module *session_module(Dwfl *d, uintptr_t addr, struct mc_elfmod *m);
struct mod_cache *mod_cache(Dwfl_Module *mod);

/* ---- symname.c -------------------------------------------------------- */

static inline void frame_clear(struct mc_frame_info *out)
{
	out->function[0] = 0;
	out->linkage[0] = 0;
	out->file[0] = 0;
	out->line = 0;
	out->object[0] = 0;
}
void set_function(struct mc_frame_info *out, const char *fn);
int frame_finish(uintptr_t addr, struct mc_frame_info *out, int n);
bool quick_get(struct qkey *q, uintptr_t addr, struct mc_frame_info *out, int *di);
void quick_put(struct qkey *q, struct mc_elfmod *m, uintptr_t addr,
	       const struct mc_frame_info *f);
int symbolize_frames(uintptr_t pc, struct mc_frame_info *out, int max, bool quick, bool *deep);

#endif
