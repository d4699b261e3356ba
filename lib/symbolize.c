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
 * This file holds the entry points; the parts they stand on, one
 * concern each, share symbolize.h: symname.c (a frame's names),
 * symsession.c (libdwfl's session), symverdict.c (suppcache.c's keys),
 * symkeys.c (the objects as the cache files key them), symmemo.c (the
 * frame memo), symscopes.c (inlined calls), symstr.c (the debug strings'
 * search), symunits.c (compile units' ranges), symdw.c (libdw's load).
 *
 * Runs with the recursion guard held, so libdw may allocate freely;
 * these files themselves never call malloc.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"

/* MC_MAX_INLINE frames for mc_symbolize_frames' answers, one array of
 * the library's lent to whoever names a stack (report.c's JSON and peak
 * lines, vgtext.c's text): each had them on the stack (10.3 KiB) under
 * the symbolizer's calls, which then ran 10 KiB deeper, a page fault for
 * each page of stack touched so (test_codeblocks' shallow_exit: a
 * passing plain_clean with a JSON report, 5-7 pages more than bare at
 * its exit before).  Most names fill the first frame alone: one page of
 * it is touched.  Lent by a flag, not a lock (a fatal signal's report
 * may come in while the thread holds it, and a failure injection's
 * record may name a stack while another thread's region ends): NULL
 * where it is out, and the caller names on its own stack, as before. */
static struct mc_frame_info lent_frames[MC_MAX_INLINE];
static atomic_flag frames_out = ATOMIC_FLAG_INIT;

struct mc_frame_info *mc_symbolize_frames_borrow(void)
{
	return atomic_flag_test_and_set_explicit(&frames_out, memory_order_acquire) ? NULL
										    : lent_frames;
}

void mc_symbolize_frames_return(void)
{
	atomic_flag_clear_explicit(&frames_out, memory_order_release);
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
			/* as quick_get: no key's file where the build ID's
			 * holds the object's frames */
			if (dbg && !key_first && mc_symcache_holds(q->k.key, q->k.idlen))
				break;
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
