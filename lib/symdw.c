/*
 * symdw.c - libdw, loaded on first need: its entry points bound by
 * dlopen and dlsym (never linked: the library has no link-time
 * dependency on elfutils), the optional ones by the feature that needs
 * them, and the callback that finds a module's separate debug
 * information without debuginfod.  Also the lock that every symbolize
 * file's state is kept under, since libdwfl is not thread-safe.  Not
 * what is asked of libdw (the other sym*.c files, symbolize.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>

#include "internal.h"
#include "symbolize.h"

/* libdw's entry points (struct mc_dw, symbolize.h) */
struct mc_dw dw;

enum { DW_UNTRIED, DW_LOADED, DW_MISSING };
static int dw_state = DW_UNTRIED;

/* libdwfl keeps a pointer to its dw_callbacks for the session's lifetime. */
Dwfl_Callbacks dw_callbacks;
static char *debuginfo_path;
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name);

/* libdwfl is not thread-safe and two threads may report at once. */
pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;

/* The optional symbols, by the feature that needs them (inlined frames,
 * the walk of compile units, mc_symbolize_may_name's string search). */
#define DW_SYM(field, name) MC_DL_SYM(dw.field, name)
static const struct mc_dl_sym inline_syms[] = {
	DW_SYM(addrdie, "dwfl_module_addrdie"), DW_SYM(getscopes, "dwarf_getscopes"),
	DW_SYM(getscopes_die, "dwarf_getscopes_die"), DW_SYM(tag, "dwarf_tag"),
	DW_SYM(attr_integrate, "dwarf_attr_integrate"), DW_SYM(attr, "dwarf_attr"),
	DW_SYM(formstring, "dwarf_formstring"), DW_SYM(formudata, "dwarf_formudata"),
	DW_SYM(getsrcfiles, "dwarf_getsrcfiles"), DW_SYM(filesrc, "dwarf_filesrc"),
};
static const struct mc_dl_sym cu_walk_syms[] = {
	DW_SYM(getdwarf, "dwfl_module_getdwarf"), DW_SYM(nextcu, "dwarf_nextcu"),
	DW_SYM(offdie, "dwarf_offdie"), DW_SYM(ranges, "dwarf_ranges"),
	DW_SYM(getsrc_die, "dwarf_getsrc_die"), DW_SYM(linesrc, "dwarf_linesrc"),
	DW_SYM(lineno, "dwarf_lineno"),
};
static const struct mc_dl_sym line_end_syms[] = {
	DW_SYM(linecu, "dwfl_linecu"), DW_SYM(dwarf_line, "dwfl_dwarf_line"),
	DW_SYM(getsrclines, "dwarf_getsrclines"), DW_SYM(onesrcline, "dwarf_onesrcline"),
	DW_SYM(lineaddr, "dwarf_lineaddr"), DW_SYM(lineendsequence, "dwarf_lineendsequence"),
	DW_SYM(unit_haspc, "dwarf_haspc"),
};
static const struct mc_dl_sym fn_table_syms[] = {
	DW_SYM(child, "dwarf_child"), DW_SYM(siblingof, "dwarf_siblingof"),
	DW_SYM(haspc, "dwarf_haspc"), DW_SYM(dieoffset, "dwarf_dieoffset"),
};
static const struct mc_dl_sym string_syms[] = {
	DW_SYM(getelf, "dwfl_module_getelf"), DW_SYM(getshdrstrndx, "elf_getshdrstrndx"),
	DW_SYM(strptr, "elf_strptr"), DW_SYM(nextscn, "elf_nextscn"),
	DW_SYM(getshdr, "gelf_getshdr"), DW_SYM(getdata, "elf_getdata"),
};
static const struct mc_dl_sym fn_start_syms[] = {
	DW_SYM(addrinfo, "dwfl_module_addrinfo"),
};
static const struct mc_dl_sym lazy_syms[] = {
	DW_SYM(report_begin_add, "dwfl_report_begin_add"),
	DW_SYM(report_module, "dwfl_report_module"),
};
#undef DW_SYM

static bool bind_libdw(void)
{
	if (dw_state != DW_UNTRIED)
		return dw_state == DW_LOADED;
	dw_state = DW_MISSING;
	/* RTLD_LOCAL: libdw's symbols must not satisfy the program's own
	 * lookups (it may link a different elfutils).  RTLD_LAZY: of the
	 * ~880 symbol lookups RTLD_NOW made for libdw, libelf and the
	 * compression libraries, a process printing a frame with file:line
	 * needs ~90 (callgrind, a leaking bench/suite_test 0's exit: dlopen
	 * 497 K -> 282 K instructions, + 88 K of lazy binding).  A lazy
	 * binding runs with this file's lock held, as libdw's calls do; it
	 * takes no lock and allocates nothing here (no STB_GNU_UNIQUE symbol
	 * in these libraries; their dependencies are the dlopen's own, so no
	 * dependency is added), and LD_BIND_NOW still binds them all. */
	void *h = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return false;
	/* A missing symbol means an elfutils too old or odd to trust.  It
	 * stays loaded: unloading a library with constructors is riskier
	 * than the memory. */
#define LOAD(field, name) \
	if (!(field = (__typeof__(field))dlsym(h, name))) \
		return false
	LOAD(dw.begin, "dwfl_begin");
	LOAD(dw.end, "dwfl_end");
	LOAD(dw.proc_report, "dwfl_linux_proc_report");
	LOAD(dw.report_end, "dwfl_report_end");
	LOAD(dw.addrmodule, "dwfl_addrmodule");
	LOAD(dw.addrname, "dwfl_module_addrname");
	LOAD(dw.getsrc, "dwfl_module_getsrc");
	LOAD(dw.lineinfo, "dwfl_lineinfo");
	LOAD(dw.module_info, "dwfl_module_info");
	LOAD(dw_callbacks.find_elf, "dwfl_linux_proc_find_elf");
	dw.inlines = mc_dl_bind_group(h, inline_syms, MC_ARRAY_SIZE(inline_syms));
	dw.cu_walk = mc_dl_bind_group(h, cu_walk_syms, MC_ARRAY_SIZE(cu_walk_syms));
	dw.strings = mc_dl_bind_group(h, string_syms, MC_ARRAY_SIZE(string_syms));
	dw.lazy = mc_dl_bind_group(h, lazy_syms, MC_ARRAY_SIZE(lazy_syms));
	dw.line_end = mc_dl_bind_group(h, line_end_syms, MC_ARRAY_SIZE(line_end_syms));
	dw.fn_start = mc_dl_bind_group(h, fn_start_syms, MC_ARRAY_SIZE(fn_start_syms));
	dw.fn_table = mc_dl_bind_group(h, fn_table_syms, MC_ARRAY_SIZE(fn_table_syms)) &&
		      dw.inlines && dw.cu_walk;
	mc_symtab_bind(h);
	LOAD(dw.build_id_find_debuginfo, "dwfl_build_id_find_debuginfo");
	dw_callbacks.find_debuginfo = find_debuginfo;
#undef LOAD
	dw_callbacks.debuginfo_path = &debuginfo_path;
	dw_state = DW_LOADED;
	return true;
}

/* bind_libdw, with the program's pending dlerror() message kept
 * (dlstate.c): the first symbolization may come inside an allocation
 * (MEMCHECK_FAIL_SITE) or a region's end, between a failed dlopen of
 * the program's and its dlerror(). */
bool load_libdw(void)
{
	/* libdw's opens and maps are its own: none past a seccomp filter
	 * that would refuse them (seccomp.c; not in the unit tests) */
#ifdef MC_SECCOMP_CALLS
	if (!mc_seccomp_foreign_ok())
		return false;
#endif
	if (dw_state != DW_UNTRIED)
		return dw_state == DW_LOADED;
	struct mc_dlerror e;
	mc_dlerror_save(&e);
	bool ok = bind_libdw();
	mc_dlerror_restore(&e);
	return ok;
}

/* Where libdwfl looks for a module's separate debug information: the
 * build-id tree (/usr/lib/debug/.build-id, where Debian's -dbgsym
 * packages put it), then the module's .gnu_debuglink name beside it, in
 * .debug/ beside it, and under /usr/lib/debug.  dwfl_standard_find_debuginfo
 * searches the same places and then asks debuginfod, which makes libdw
 * load libdebuginfod, libcurl, libssh2 and OpenSSL into the program --
 * at exit, after the program's own OpenSSL has cleaned up, that crashes
 * it.  memcheck never fetches debug information over the network. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	int fd = dw.build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					    crc, debuginfo_file_name);
	if (fd >= 0 || !file_name || !debuglink || !*debuglink || strchr(debuglink, '/'))
		return fd;
	char path[4096];
	for (size_t i = 0; mc_debuglink_place(file_name, debuglink, i, path, sizeof path); i++) {
		if (!path[0])
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			*debuginfo_file_name = strdup(path); /* libdwfl frees it */
			return fd;
		}
	}
	errno = 0; /* not found is not an error to libdwfl */
	return -1;
}
