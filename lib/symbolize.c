/*
 * symbolize.c - turn a return address into function, file:line and object
 * for the reports.  libdw is opened with dlopen only when the first report
 * needs it, so programs that never report do not pay for loading it and
 * the library has no link-time dependency on elfutils.  Without libdw (or
 * with MEMCHECK_SYMBOLIZE=0) dladdr gives what the dynamic symbol tables
 * know: exported function names and objects, no file:line.
 *
 * Names come from symtab.c's copy of each module's symbol table, the
 * names libdw would give, found without libdw's walk of the table; for
 * the objects elfmod.c can read as libdw would, without libdw at all: a
 * frame that needs no debug information (the quick view, an object
 * without DWARF, a system object's frame) never loads it, and neither
 * does the search of an object's debug strings (may_name).  So a process
 * whose leftovers the suppressions settle on names, or whose printed
 * frames have no DWARF, does not load libdw (/bin/date measured: ~90
 * page faults and ~1 M instructions of loading and reporting modules).
 *
 * Suppression matching asks first for the quick frame
 * (mc_symbolize_quick: the symbol table's name, no file:line, no
 * inlined frames, no DWARF read) and whether the debug information
 * could name something containing a string (mc_symbolize_may_name: a
 * search of the module's own .debug_str, .debug_line_str and
 * .debug_info bytes, which hold every name libdw can give, unless the
 * names may lie in another file); the full frames are read for what it
 * cannot decide, and for what is printed.
 *
 * A printed frame's inlined calls come from the scopes at its address:
 * libdw's getscopes (and getscopes_die, for the callers of inlined code)
 * walk the whole compile unit each time, ~1 M instructions a frame in a
 * large unit; scopes_at finds the same DIEs through a table of the
 * unit's top-level functions built once (tests/unit_symbolize.c checks
 * it against libdw over a program's code), leaving what it cannot
 * follow as libdw does to libdw.
 *
 * A full frame of an object whose DWARF and symbol table lie in its own
 * file, and a quick frame there that libdw must name, are kept across
 * processes by symcache.c (MEMCHECK_CACHE), keyed by the file's build
 * ID: the next run of the program prints them without loading libdw
 * (bench/suite_test 5, a leak printed: 1.80 M -> 1.24 M instructions of
 * the whole process).  So are the symbol tables' names of every object
 * elfmod.c reads (quick_get, quick_put), keyed by what decides its
 * table without opening it (mc_elfmod_quick_key): a warm process names
 * the C library's frames without opening it or scanning its table
 * (suite_test 1 with MEMCHECK_REPORT: 1.50 M -> 1.32 M).
 *
 * Runs with the recursion guard held, so libdw may allocate freely; this
 * file itself never calls malloc.
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

int mc_symbolize_frames(uintptr_t pc, struct mc_frame_info *out, int max)
{
	pthread_mutex_lock(&sym_lock);
	int n = pc_cache_get(pc, max, out);
	/* A quick frame that is not deep is the frame: no debug
	 * information to read there (mc_symbolize_quick). */
	if (!n && pc_cache_get(pc, QUICK_SHALLOW, out))
		n = 1;
	pthread_mutex_unlock(&sym_lock);
	if (n)
		return n;
	n = symbolize_frames(pc, out, max, false, NULL);
	pthread_mutex_lock(&sym_lock);
	pc_cache_put(pc, max, out, n);
	pthread_mutex_unlock(&sym_lock);
	return n;
}

void mc_symbolize_quick(uintptr_t pc, struct mc_frame_info *out, bool *deep)
{
	pthread_mutex_lock(&sym_lock);
	int n = pc_cache_get(pc, QUICK_SHALLOW, out);
	*deep = !n && pc_cache_get(pc, QUICK_DEEP, out);
	pthread_mutex_unlock(&sym_lock);
	if (n || *deep)
		return;
	symbolize_frames(pc, out, 1, true, deep);
	pthread_mutex_lock(&sym_lock);
	pc_cache_put(pc, *deep ? QUICK_DEEP : QUICK_SHALLOW, out, 1);
	pthread_mutex_unlock(&sym_lock);
}

/* The quick frames of pcs (the n from i of an array sorted ascending)
 * that lie in m, named in one read of its table, into the cache, and
 * into symcache.c's file of q's object where m's names are its.
 * scratch: room for n addresses, names and flags. */
static void quick_batch(struct mc_elfmod *m, const uintptr_t *pcs, size_t n, struct mc_elfmod **mods,
			uint64_t *a, const char **name, bool *done, struct qkey *q)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (mods[i] == m) {
			a[k++] = pcs[i] - 1;
			mods[i] = NULL;
		}
	mc_elfmod_names(m, a, k, name, done);
	int di = mc_elfmod_debuginfo(m);
	/* One object's addresses: whether it is a system one asked once,
	 * not once an address (a measured /bin/date's exit: 45 calls, 14 K
	 * instructions), and not at all without debug information. */
	bool deep = k && di != MC_DI_NONE &&
		    (mc_opt.symbolize_system || !in_system_object(a[0]));
	for (size_t i = 0; i < k; i++) {
		if (!done[i])
			continue;    /* mc_symbolize_quick's, one at a time */
		struct mc_frame_info f;
		frame_clear(&f);
		set_function(&f, name[i]);
		quick_put(q, m, a[i], &f);
		copy(f.object, sizeof f.object, mc_elfmod_path(m));
		frame_finish(a[i], &f, 1);
		pc_cache_put(a[i] + 1, deep ? QUICK_DEEP : QUICK_SHALLOW, &f, 1);
	}
}

/* pc's quick frame from symcache.c's file of q's object, into the
 * cache; false: not there.  Its strings go from the file's bytes to the
 * cache's arena as they are (mc_symcache_quick_ref), where a decoding
 * into a frame, frame_finish and pc_cache_put's measuring of each string
 * cost ~1,000 instructions a frame (a measured /bin/date's exit named 39
 * so); quick_get's way where frame_finish would do more than name the
 * linkage by the function. */
static bool quick_cached(struct qkey *q, uintptr_t pc)
{
	struct mc_frame_info f;
	int di;
	uintptr_t addr = pc - 1;
	const struct mc_frame_info *const fi = NULL;
	enum { FN = sizeof fi->function, LK = sizeof fi->linkage, OB = sizeof fi->object };
	const char *str[4];
	size_t len[4];
	int32_t line = -1;
	if (q && q->k.path[0] && pc_arena.len <= UINT32_MAX / 2) {
		uint64_t off = addr - q->k.bias;
		bool key_first = key_file_first(q);
		for (int i = 0; i < 2 && line < 0; i++) {
			bool dbg = (i == 0) == key_first;
			if (!mc_symcache_quick_ref(q->k.key, dbg ? q->k.len : q->k.idlen, off,
						   &line, str, len) || len[2] ||
			    (dbg ? (line = quick_line(q, line)) < 0 : line != 0))
				line = -1;
			else
				di = dbg ? line : MC_DI_OWN;
		}
		/* function named (else frame_finish asks dladdr), within
		 * the fields (quick_get's copies) */
		if (line >= 0 && len[0] && len[0] < FN && len[1] < LK && pc_room()) {
			if (!len[1]) {         /* frame_finish: the function's */
				str[1] = str[0];
				len[1] = len[0];
			}
			str[3] = q->k.path;
			len[3] = strnlen(q->k.path, OB - 1);
			bool deep = di != MC_DI_NONE && !qkey_sys(q, addr);
			size_t at = pc_arena.len;
			pc_frame(0, str, len);
			pc_commit(pc, deep ? QUICK_DEEP : QUICK_SHALLOW, at, 1);
			return true;
		}
	}
	if (!quick_get(q, addr, &f, &di))
		return false;
	frame_finish(addr, &f, 1);
	bool deep = di != MC_DI_NONE && !qkey_sys(q, addr);
	pc_cache_put(pc, deep ? QUICK_DEEP : QUICK_SHALLOW, &f, 1);
	return true;
}

void mc_symbolize_quick_many(const uintptr_t *pcs, size_t n)
{
	size_t bytes = n * (sizeof(struct mc_elfmod *) + sizeof(struct qkey *) + sizeof(uint64_t) +
			    sizeof(char *) + 1);
	/* all of it written below: populated (mc_map), not a fault a page */
	char *mem = mc_opt.symbolize && n ? mc_map(bytes) : NULL;
	if (!mem)
		return;
	struct mc_elfmod **mods = (struct mc_elfmod **)mem;
	struct qkey **q = (struct qkey **)(mods + n);
	uint64_t *a = (uint64_t *)(q + n);
	const char **name = (const char **)(a + n);
	bool *done = (bool *)(name + n);
	struct mc_frame_info f;
	pthread_mutex_lock(&sym_lock);
	for (size_t i = 0; i < n; i++) {
		mods[i] = NULL;
		q[i] = NULL;
		if (!pcs[i] || pc_cache_get(pcs[i], QUICK_SHALLOW, &f) ||
		    pc_cache_get(pcs[i], QUICK_DEEP, &f))
			continue;
		/* Another process's names first: the object's file is
		 * then neither opened nor its table read. */
		q[i] = qkey_of(pcs[i] - 1);
		if (!quick_cached(q[i], pcs[i]))
			mods[i] = own_module(pcs[i] - 1);
	}
	for (size_t i = 0; i < n; i++)
		if (mods[i])
			quick_batch(mods[i], pcs, n, mods, a, name, done, q[i]);
	pthread_mutex_unlock(&sym_lock);
	mc_unmap(mem, bytes);
}

bool mc_symbolize_may_name(uintptr_t pc, const char *s, size_t len)
{
	uintptr_t addr = pc ? pc - 1 : 0;
	bool may = true;
	pthread_mutex_lock(&sym_lock);
	/* Another process's answer first: the object's file is then not
	 * opened.  Kept under its build ID alone, where its names are its
	 * file's alone (own_key), as its full frames are; not where a
	 * build-ID debug file is (its names may be that file's). */
	struct qkey *q = mc_opt.symbolize ? qkey_of(addr) : NULL;
	if (q && any_used && len && len <= ANY_LEN) {
		const struct any_memo *e = any_slot(q, s, len);
		if (e->q) {
			may = e->found;
			goto out;
		}
	}
	bool any = false;
	int kept = q && !q->k.debug ?
		mc_symcache_name_get(q->k.key, q->k.idlen, addr - q->k.bias, s, len, &any) : -1;
	struct mc_elfmod *m = mc_opt.symbolize && kept < 0 ? own_module(addr) : NULL;
	if (kept >= 0) {
		may = kept;
		if (any)
			any_put(q, s, len, may);
	} else if (m) {
		struct dstr *str = &own_str[mc_elfmod_slot(m)];
		if (!str->built)
			dstr_build_own(str, m);
		bool anywhere;
		may = dstr_has(str, addr, s, len, &anywhere);
		const struct own_key *key = q && !q->k.debug && mc_elfmod_quick_ok(m, &q->k, NULL) ?
			own_key(m) : NULL;
		if (key && key->idlen == q->k.idlen && memcmp(key->id, q->k.key, key->idlen) == 0)
			mc_symcache_name_put(key->id, key->idlen,
					     anywhere ? MC_SYMCACHE_ANY : addr - q->k.bias, s, len, may);
		if (anywhere)   /* q's range is m's: the object's answer */
			any_put(q, s, len, may);
	} else if (mc_opt.symbolize && load_libdw()) {
		Dwfl *d = get_session();
		Dwfl_Module *mod = d ? session_module(d, addr, NULL) : NULL;
		struct dstr *str = mod ? &mod_cache(mod)->str : NULL;
		if (str && !str->built)
			dstr_build(str, mod);
		bool anywhere;
		if (str)
			may = dstr_has(str, addr, s, len, &anywhere);
	}
out:
	pthread_mutex_unlock(&sym_lock);
	return may;
}

void mc_symbolize(uintptr_t pc, struct mc_frame_info *out)
{
	mc_symbolize_frames(pc, out, 1);
}

void mc_symbolize_maps_lend(const struct mc_buf *runs)
{
	pthread_mutex_lock(&sym_lock);
	mc_elfmod_runs_lend(runs);
	pthread_mutex_unlock(&sym_lock);
}
