/*
 * symname.c - a return address's frames: the symbol table's name
 * (elfmod.c's reading, or symtab.c's of libdw's module), libdw's
 * file:line and inlined calls (resolve_dwfl), another process's answer
 * from symcache.c's files (quick_get, and the build ID's full frames),
 * and what is kept there for the next process (quick_put, cache_put);
 * dladdr's names where nothing else gave one (frame_finish).  Not the
 * memo of this session's answers (symmemo.c) nor the public entry
 * points (symbolize.c).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"
#include "symtab.h"

/* The compile unit DIE of addr in mod, found through mod's table; NULL
 * when mod has no DWARF or no unit covers addr.  *bias: mod's. */
static Dwarf_Die *cu_by_walk(Dwfl_Module *mod, uintptr_t addr, Dwarf_Die *die, Dwarf_Addr *bias)
{
	Dwarf *dbg = dw.cu_walk ? dw.getdwarf(mod, bias) : NULL;
	if (!dbg)
		return NULL;
	struct cu_table *t = &mod_cache(mod)->cu;
	if (!t->built)
		cu_table_build(t, dbg);
	/* The last range starting at or before a, then back over those that
	 * may still reach past it (units' ranges rarely overlap). */
	Dwarf_Addr a = addr - *bias;
	const struct cu_range *r = (const struct cu_range *)t->buf.s;
	for (size_t i = ranges_upto(r, t->n, a); i-- > 0 && r[i].maxend > a;)
		if (r[i].end > a)
			return dw.offdie(dbg, r[i].die, die);
	return NULL;
}

/* full: file, line and inlined frames too; otherwise the symbol table's
 * name alone, which does not make libdw read the DWARF (tens of ms for
 * the C library's, where its debug information is installed). */
void set_function(struct mc_frame_info *out, const char *fn)
{
	if (!fn || !*fn)
		return;
	/* the linkage first, from the name itself: it has the room for a
	 * C++ symbol's whole name, which the shown name demangles */
	copy(out->linkage, sizeof out->linkage, fn);
	/* Debug symbol tables name versioned symbols dlopen@GLIBC_2.2.5;
	 * the program called dlopen. */
	char *at = strchr(out->linkage, '@');
	if (at && at != out->linkage)
		*at = 0;
	/* GCC's local alias of a global function is that function. */
	size_t len = strlen(out->linkage);
	if (len > 11 && strcmp(out->linkage + len - 11, ".localalias") == 0)
		out->linkage[len - 11] = 0;
	copy(out->function, sizeof out->function, out->linkage);
}

/* The symbol table's frame at addr from elfmod.c's reading of m: name
 * and object, as resolve_dwfl gives them without debug information;
 * false where libdw must name it. */
static bool own_frame(struct mc_elfmod *m, uintptr_t addr, struct mc_frame_info *out)
{
	bool ask;
	const char *fn = mc_elfmod_name(m, addr, &ask);
	if (ask)
		return false;
	set_function(out, fn);
	copy(out->object, sizeof out->object, mc_elfmod_path(m));
	return true;
}

/* Whether the row libdw's dwfl_module_getsrc gave for addr ends before
 * it: a row of no length at its sequence's end (GCC's view numbering
 * leaves one), which libdw's search for the last row at or before addr
 * can take instead of the end_sequence row at the same address.  Code
 * without debug information linked after such a sequence (libgtest_main.a's
 * main, -O2, in .text.startup after a test file's initializers) got that
 * unit's last line, "main (basic_string.h:795)", where valgrind, which
 * gives each row the addresses up to the next, gives none ("main (in
 * ./test)").  A row followed by a sequence that starts where it ends is
 * told apart by the unit's ranges, which hold the next sequence's code. */
static bool line_past_end(Dwfl_Line *l, uintptr_t addr)
{
	Dwarf_Addr bias, at;
	Dwarf_Line *dl = dw.line_end ? dw.dwarf_line(l, &bias) : NULL;
	Dwarf_Die *cu = dl ? dw.linecu(l) : NULL;
	Dwarf_Lines *lines;
	size_t n;
	if (!cu || dw.lineaddr(dl, &at) != 0 || dw.getsrclines(cu, &lines, &n) != 0 ||
	    addr - bias == at)
		return false;
	/* the first row at `at' (libdw keeps them sorted by address) */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a;
		if (dw.lineaddr(dw.onesrcline(lines, mid), &a) == 0 && a < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	bool ends = false;
	for (size_t i = lo; i < n && !ends; i++) {
		Dwarf_Line *r = dw.onesrcline(lines, i);
		Dwarf_Addr a;
		if (!r || dw.lineaddr(r, &a) != 0 || a != at)
			break;
		dw.lineendsequence(r, &ends);
	}
	return ends && dw.unit_haspc(cu, addr - bias) <= 0;
}

/* m: elfmod.c's reading of addr's object, whose names are libdw's. */
static int resolve_dwfl(uintptr_t addr, struct mc_frame_info *out, int max, bool full,
			struct mc_elfmod *m)
{
	Dwfl *d = get_session();
	if (!d)
		return 1;
	Dwfl_Module *mod = session_module(d, addr, m);
	if (!mod)
		return 1;
	bool ask = true;
	const char *fn = m ? mc_elfmod_name(m, addr, &ask) : NULL;
	set_function(out, ask ? mc_symtab_name(&mod_cache(mod)->sym, mod, addr) : fn);
	Dwfl_Line *l = full ? dw.getsrc(mod, addr) : NULL;
	if (l && line_past_end(l, addr))
		l = NULL;
	Dwarf_Die cubuf, *cu = NULL;
	Dwarf_Addr bias = 0;
	const char *file = NULL;
	int line = 0;
	if (l) {
		file = dw.lineinfo(l, NULL, &line, NULL, NULL, NULL);
	} else if (full && (cu = cu_by_walk(mod, addr, &cubuf, &bias))) {
		Dwarf_Line *dl = dw.getsrc_die(cu, addr - bias);
		if (dl && dw.lineno(dl, &line) == 0)
			file = dw.linesrc(dl, NULL, NULL);
	}
	if (file && *file) {
		copy(out->file, sizeof out->file, file);
		out->line = line;
	}
	const char *mainfile = NULL;
	const char *name = dw.module_info(mod, NULL, NULL, NULL, NULL, NULL,
					  &mainfile, NULL);
	/* mainfile is set once the ELF file was opened (addrname did that);
	 * the module name is the path from /proc/self/maps otherwise. */
	if (mainfile && *mainfile)
		copy(out->object, sizeof out->object, mainfile);
	else if (name && name[0] == '/')
		copy(out->object, sizeof out->object, name);
	return full && max > 1 ? resolve_inlines(mod, addr, cu, bias, out, max) : 1;
}

/* libdw's frames at addr into symcache.c's file for m, where the object
 * of each is m's file (the one the cache's answers are given with). */
static void cache_put(const struct own_key *key, struct mc_elfmod *m, uintptr_t addr, int max,
		      const struct mc_frame_info *out, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(out[i].object, mc_elfmod_path(m)) != 0)
			return;
	mc_symcache_put(key->id, key->idlen, addr - mc_elfmod_bias(m), max, out, n);
}

/* The quick frame at addr (the symbol table's name) from symcache.c's
 * file of q's object into out (function and object, as own_frame gives
 * them), *di where its DWARF is; false: not there. */
bool quick_get(struct qkey *q, uintptr_t addr, struct mc_frame_info *out, int *di)
{
	if (!q)
		return false;
	/* An object whose full frames symcache.c keeps (own_key: its
	 * names and DWARF its file's alone, no debug file looked for) has
	 * its quick frames in the same file, its build ID's. */
	uint64_t off = addr - q->k.bias;
	/* The likelier file first (one file not there is ~5 system calls) */
	bool key_first = key_file_first(q);
	for (int i = 0; i < 2; i++) {
		if ((i == 0) == key_first) {
			int d;
			if (mc_symcache_get(q->k.key, q->k.len, off, MC_SYMCACHE_QUICK, out) == 1 &&
			    (d = quick_line(q, out->line)) >= 0 && !out->file[0]) {
				*di = d;
				break;
			}
		} else if (mc_symcache_get(q->k.key, q->k.idlen, off, MC_SYMCACHE_QUICK, out) == 1 &&
			   !out->line && !out->file[0]) {
			*di = MC_DI_OWN;
			break;
		} else if (!key_first && mc_symcache_holds(q->k.key, q->k.idlen)) {
			/* the build ID's file there: the object's quick
			 * frames are in it, none in its key's (a warm exit
			 * opened that absent file for each such object) */
			frame_clear(out);
			return false;
		}
		frame_clear(out);
		if (i == 1)
			return false;
	}
	out->line = 0;
	copy(out->object, sizeof out->object, q->k.path);
	return true;
}

/* own_frame's frame f at addr of m kept for the next process, where m's
 * names are q's key's. */
void quick_put(struct qkey *q, struct mc_elfmod *m, uintptr_t addr,
		      const struct mc_frame_info *f)
{
	const char *link;
	if (!q || !mc_elfmod_quick_ok(m, &q->k, &link))
		return;
	struct mc_frame_info r;
	frame_clear(&r);
	copy(r.function, sizeof r.function, f->function);
	copy(r.linkage, sizeof r.linkage, f->linkage);
	const struct own_key *key = own_key(m);
	if (key && key->idlen == q->k.idlen && memcmp(key->id, q->k.key, key->idlen) == 0) {
		/* beside its full frames (quick_get) */
		mc_symcache_put(key->id, key->idlen, addr - q->k.bias, MC_SYMCACHE_QUICK, &r, 1);
		return;
	}
	r.line = mc_elfmod_debuginfo(m);   /* the record's line: where the DWARF is */
	if (link) {
		/* the link record first: a record marked linked without
		 * it (a torn append) is never taken */
		mc_symcache_link_put(q->k.key, q->k.len, link);
		r.line |= QUICK_LINKED;
	}
	mc_symcache_put(q->k.key, q->k.len, addr - q->k.bias, MC_SYMCACHE_QUICK, &r, 1);
}

/* quick: the symbol table's name alone wherever (mc_symbolize_quick);
 * *deep: whether the full resolution reads debug information at pc. */
int symbolize_frames(uintptr_t pc, struct mc_frame_info *out, int max, bool quick,
			    bool *deep)
{
	/* The call instruction ends just before the return address; pc-1
	 * lies inside it even when the call is a function's last one. */
	uintptr_t addr = pc ? pc - 1 : 0;
	int n = 1;

	frame_clear(out);
	bool full = false;
	pthread_mutex_lock(&sym_lock);
	if (mc_opt.symbolize) {
		struct qkey *q = qkey_of(addr);
		full = q ? !qkey_sys(q, addr) : mc_opt.symbolize_system || !in_system_object(addr);
		/* Without debug information to read, the frame is the symbol
		 * table's, which elfmod.c reads without libdw, or another
		 * process read (quick_get). */
		int di = MC_DI_NONE;
		if (quick_get(q, addr, out, &di) && (quick || !full || di == MC_DI_NONE)) {
			full = full && di != MC_DI_NONE;
			goto done;
		}
		frame_clear(out);
		/* Another process's full frames, where they were kept under
		 * the build ID alone (cache_put: own_key's object, whose
		 * names are its file's): the file is then not opened. */
		int kept = q && full && !quick && !q->k.debug ?
			mc_symcache_get(q->k.key, q->k.idlen, addr - q->k.bias, max, out) : 0;
		if (kept) {
			n = kept;
			for (int i = 0; i < n; i++)
				copy(out[i].object, sizeof out[i].object, q->k.path);
			goto done;
		}
		frame_clear(out);
		struct mc_elfmod *m = own_module(addr);
		di = m ? mc_elfmod_debuginfo(m) : MC_DI_NONE;
		const struct own_key *key = NULL;
		int hit = 0;
		if (m && (quick || !full || di == MC_DI_NONE) && own_frame(m, addr, out)) {
			quick_put(q, m, addr, out);
			full = full && di != MC_DI_NONE;
		} else if (m && (quick || full) && (key = own_key(m)) &&
			   (hit = mc_symcache_get(key->id, key->idlen, addr - mc_elfmod_bias(m),
						  quick ? MC_SYMCACHE_QUICK : max, out))) {
			/* Another process's answer: the object is this one's.
			 * (m's DWARF is its own: a quick frame is deep.) */
			n = hit;
			for (int i = 0; i < n; i++)
				copy(out[i].object, sizeof out[i].object, mc_elfmod_path(m));
		} else if (load_libdw()) {
			n = resolve_dwfl(addr, out, max, full && !quick, m);
			if (key)
				cache_put(key, m, addr, quick ? MC_SYMCACHE_QUICK : max, out, n);
			if (full && quick && !m) {
				/* An object without debug information
				 * anywhere: the full resolution is this
				 * frame. */
				Dwfl *d = get_session();
				Dwfl_Module *mod = d ? session_module(d, addr, NULL) : NULL;
				struct dstr *str = mod ? &mod_cache(mod)->str : NULL;
				if (str && !str->built)
					dstr_build(str, mod);
				full = !str || !str->none;
			} else if (full && m) {
				full = di != MC_DI_NONE;
			}
		} else {
			/* libdw not loaded (a program that took away its own
			 * file access, sandbox.c): the symbol table's name */
			if (m)
				own_frame(m, addr, out);
			full = false;
		}
	}
done:
	pthread_mutex_unlock(&sym_lock);
	if (deep)
		*deep = full;
	return frame_finish(addr, out, n);
}

/* What every frame gets last: dladdr fills what libdw could not (a
 * module reported after the session began, or a system without libdw),
 * "???", and one name for C code and frames without debug information. */
int frame_finish(uintptr_t addr, struct mc_frame_info *out, int n)
{
	if (!out->function[0] || !out->object[0]) {
		Dl_info info;
		if (addr && dladdr((void *)addr, &info)) {
			if (!out->function[0] && info.dli_sname && *info.dli_sname) {
				copy(out->function, sizeof out->function, info.dli_sname);
				copy(out->linkage, sizeof out->linkage, info.dli_sname);
			}
			if (!out->object[0] && info.dli_fname)
				copy(out->object, sizeof out->object, info.dli_fname);
		}
	}
	if (!out->function[0])
		copy(out->function, sizeof out->function, "???");
	/* C code and frames without debug information: one name. */
	for (int i = 0; i < n; i++)
		if (!out[i].linkage[0])
			copy(out[i].linkage, sizeof out[i].linkage, out[i].function);
	return n;
}
