/*
 * symsession.c - libdwfl's session: begun where a frame first needs
 * libdw, its modules reported one at a time as frames need them
 * (session_module), what is built for each module (mod_cache), and its
 * end at each report's end (end_session, which forgets what every
 * symbolize file kept for it), at exit and in a forked child.  Not what
 * is read through it (symname.c, symstr.c, symscopes.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"

static Dwfl *session;
static pid_t session_pid;
/* session_module's table of the modules to report (struct mod_run) */
static struct mc_buf mod_runs;
static bool mod_runs_read;

static struct mod_cache mod_caches[16];
static unsigned mod_caches_next; /* claims this session: the slots below it
				  * (all past 16) are the only ones touched,
				  * and the only ones walked: a session
				  * without libdw faults in none of their
				  * two pages */

static size_t mod_caches_used(void)
{
	return mod_caches_next < MC_ARRAY_SIZE(mod_caches) ? mod_caches_next
							   : MC_ARRAY_SIZE(mod_caches);
}

static void mod_cache_free(struct mod_cache *c)
{
	cu_table_free(&c->cu);
	mc_symtab_free(&c->sym);
	dstr_forget(&c->str);
	c->mod = NULL;
}

struct mod_cache *mod_cache(Dwfl_Module *mod)
{
	for (size_t i = 0; i < mod_caches_used(); i++)
		if (mod_caches[i].mod == mod)
			return &mod_caches[i];
	struct mod_cache *c = &mod_caches[mod_caches_next++ % MC_ARRAY_SIZE(mod_caches)];
	mod_cache_free(c);
	c->mod = mod;
	return c;
}

/* Has this process seen that the session is its own?  (Cleared with
 * the session and in a forked child: getpid is a system call, and
 * suppression matching asks for the session thousands of times.) */
static bool session_checked;

void end_session(bool unmap_files)
{
	if (session)
		dw.end(session);
	session = NULL;
	session_checked = false;
	for (size_t i = 0; i < mod_caches_used(); i++)
		mod_cache_free(&mod_caches[i]);
	mod_caches_next = 0;
	unit_fns_forget();
	dstr_memo_clear();
	dstr_filters_free(true);
	keys_forget(true);
	verdict_forget();
	mc_elfmod_forget(unmap_files);
	pc_cache_clear();
	if (unmap_files)
		mc_buf_free(&mod_runs);
	else
		mod_runs = (struct mc_buf){ 0 };
	mod_runs_read = false;
}

Dwfl *get_session(void)
{
	if (session && session_checked)
		return session;
	/* A forked child (check runs each test in one) inherits the parent's
	 * session, whose module list names the parent's pid. */
	pid_t pid = getpid();
	if (session && session_pid != pid)
		end_session(true);
	session_checked = true;
	if (session)
		return session;
	Dwfl *d = dw.begin(&dw_callbacks);
	if (!d)
		return NULL;
	/* the calling thread's maps: the process's, where /proc/PID's are
	 * empty once the main thread has exited (sys.c's mc_proc_open) */
	if ((!dw.lazy && dw.proc_report(d, mc_tid()) != 0) || dw.report_end(d, NULL, NULL) != 0) {
		dw.end(d);
		return NULL;
	}
	session = d;
	session_pid = pid;
	return session;
}

/* The modules dwfl_linux_proc_report would report, from one read of
 * /proc/self/maps made where the session first needs one (its start,
 * as before): each a record of its range, then its name and NUL, padded
 * to 8 bytes.  Reported to libdwfl one at a time, as a frame needs it:
 * the report of all of them read the maps through stdio and sscanf,
 * ~565,000 instructions (a process printing one leak with file:line:
 * 4.8 M in all), where a frame or two needs one module. */
struct mod_run {
	uint64_t lo, hi;
	uint64_t size;            /* the whole record's */
	uint64_t code;            /* one of its mappings is executable */
	char name[];              /* at sizeof(struct mod_run) */
};
struct runs_read {
	struct mc_buf *b;
	uintptr_t vdso;           /* AT_SYSINFO_EHDR */
	size_t open;              /* the run being extended, + 1; 0: none */
};

static void run_add(struct runs_read *w, uintptr_t lo, uintptr_t hi, const char *name, bool code)
{
	size_t n = strlen(name) + 1;
	struct mod_run r = { lo, hi, (sizeof r + n + 7) & ~(size_t)7, code };
	static const char pad[8];
	size_t at = w->b->len;
	mc_buf_put(w->b, (const char *)&r, sizeof r);
	mc_buf_put(w->b, name, n);
	mc_buf_put(w->b, pad, r.size - sizeof r - n);
	w->open = w->b->oom ? 0 : at + 1;
}

/* libdwfl's proc_maps_report, line by line: a file's mappings one
 * module, from its first to its last before another file's (the
 * mappings of no file between them inside it); the vDSO a module of
 * its own, which ends the run before it. */
static bool note_mod_run(const struct mc_mapping *m, void *arg)
{
	struct runs_read *w = arg;
	if (m->lo == w->vdso && w->vdso) {
		char name[32];
		snprintf(name, sizeof name, "[vdso: %d]", (int)session_pid);
		run_add(w, m->lo, m->hi, name, true);
		w->open = 0;
		return !w->b->oom;
	}
	if (m->name[0] != '/')
		return true;
	struct mod_run *r = w->open ? (struct mod_run *)(w->b->s + w->open - 1) : NULL;
	if (r && strcmp(r->name, m->name) == 0) {
		r->hi = m->hi;
		r->code |= m->executable;
	} else {
		run_add(w, m->lo, m->hi, m->name, m->executable);
	}
	return !w->b->oom;
}

static Dwfl_Module *report_module(Dwfl *d, const char *name, uintptr_t lo, uintptr_t hi,
				  uintptr_t addr)
{
	dw.report_begin_add(d);
	dw.report_module(d, name, lo, hi);
	if (dw.report_end(d, NULL, NULL) != 0)
		return NULL;
	return dw.addrmodule(d, addr);
}

/* The module of addr in session d, reported now if it was not yet.  m:
 * elfmod.c's reading of addr's object, or NULL.  Its path is the name
 * of the mapping at its first byte, where its file's run begins: the
 * module is reported from it without a read of /proc/self/maps (59 K
 * instructions and four system calls of a leaking suite_test 0's
 * exit).  Its end is the end of the object's reservation, past the
 * run's last mapping where a .bss follows it: no return address lies
 * there. */
Dwfl_Module *session_module(Dwfl *d, uintptr_t addr, struct mc_elfmod *m)
{
	Dwfl_Module *mod = dw.addrmodule(d, addr);
	if (mod || !dw.lazy)
		return mod;
	uintptr_t lo, hi;
	if (m) {
		mc_elfmod_range(m, &lo, &hi);
		if (mc_elfmod_path(m)[0] == '/' && addr - lo < hi - lo)
			return report_module(d, mc_elfmod_path(m), lo, hi, addr);
	}
	if (!mod_runs_read) {
		mod_runs_read = true;
		struct runs_read w = { &mod_runs, (uintptr_t)getauxval(AT_SYSINFO_EHDR), 0 };
		if (!mc_maps_each(note_mod_run, &w) || mod_runs.oom)
			mc_buf_free(&mod_runs);
	}
	for (size_t at = 0; at + sizeof(struct mod_run) <= mod_runs.len;) {
		const struct mod_run *r = (const struct mod_run *)(mod_runs.s + at);
		/* a file's run with no code is no object's (memcheck's
		 * own read-only map of a file, elfmod.c's, may lie where a
		 * dlclose'd library's code was): its address is no one's,
		 * "???" as valgrind names code no longer loaded */
		if (r->code && addr - r->lo < r->hi - r->lo)
			return report_module(d, r->name, r->lo, r->hi, addr);
		at += r->size;
	}
	return NULL;
}

void mc_symbolize_end(void)
{
	pthread_mutex_lock(&sym_lock);
	mc_symcache_flush();
	end_session(true);
	pthread_mutex_unlock(&sym_lock);
}

/* The objects' files (the C library's debug file: 4 MiB) and their
 * tables left mapped: the process ends next, and an munmap of a file
 * mapping cost 80-400 us here (strace -T, a measured /bin/date's three:
 * the program, the C library and its debug file). */
void mc_symbolize_end_at_exit(void)
{
	pthread_mutex_lock(&sym_lock);
	mc_symcache_flush();
	end_session(false);
	pthread_mutex_unlock(&sym_lock);
}

static MC_TLS bool fork_has_lock; /* per thread: see region.c's */

void mc_symbolize_prefork(void)
{
	fork_has_lock = pthread_mutex_trylock(&sym_lock) == 0;
}

/* In a child forked while another thread was inside libdw, the session
 * and the tables built from it may be half changed: forgotten, not
 * freed (dwfl_end would walk them).  A new session is begun when one is
 * needed, as it is anyway for a child (get_session). */
void mc_symbolize_postfork(bool child)
{
	if (!child) {
		if (fork_has_lock)
			pthread_mutex_unlock(&sym_lock);
		return;
	}
	mc_mutex_reset(&sym_lock);
	session_checked = false;
	mc_elfmod_runs_lend(NULL);   /* the scan that lent it is the parent's */
	/* The parent appends what it found; the cache's buffers may have
	 * been changing in another thread. */
	mc_symcache_forget();
	if (!fork_has_lock) {
		session = NULL;
		memset(mod_caches, 0, sizeof mod_caches);
		mod_caches_next = 0;
		scopes_drop();
		keys_forget(false);
		verdict_forget();
		mc_elfmod_forget(false);
		mod_runs = (struct mc_buf){ 0 };
		mod_runs_read = false;
		dstr_memo_clear();
		dstr_filters_free(false);
		pc_cache_drop();
	}
}

/* The compile directory of the unit pc's call lies in (valgrind's XML
 * gives a frame's directory joined to it where the line table's is
 * relative), into out; false where no debug information says.  Asked
 * only for valgrind's XML (vgxml.c), which libdw's session then serves. */
/* The symbol libdw's table gives addr, addr's offset in it, its module;
 * NULL where none.  sym_lock held. */
static const char *symbol_at(uintptr_t addr, Dwfl_Module **mod, GElf_Off *off, GElf_Sym *sym)
{
	Dwfl *d = load_libdw() && dw.fn_start ? get_session() : NULL;
	*mod = d ? session_module(d, addr, NULL) : NULL;
	return *mod ? dw.addrinfo(*mod, addr, off, sym, NULL, NULL, NULL) : NULL;
}

int mc_symbolize_fn_line(uintptr_t pc)
{
	int line = 0;
	uintptr_t addr = pc ? pc - 1 : 0;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Module *mod;
	pthread_mutex_lock(&sym_lock);
	Dwfl_Line *l = symbol_at(addr, &mod, &off, &sym) ? dw.getsrc(mod, addr - off) : NULL;
	if (l)
		dw.lineinfo(l, NULL, &line, NULL, NULL, NULL);
	pthread_mutex_unlock(&sym_lock);
	return line;
}

bool mc_symbolize_data(uintptr_t addr, struct mc_frame_info *out, uint64_t *off)
{
	GElf_Off o = 0;
	GElf_Sym sym;
	Dwfl_Module *mod;
	pthread_mutex_lock(&sym_lock);
	const char *name = symbol_at(addr, &mod, &o, &sym);
	bool found = name && GELF_ST_TYPE(sym.st_info) == STT_OBJECT && o < sym.st_size;
	if (found) {
		frame_clear(out);
		copy(out->linkage, sizeof out->linkage, name);
		copy(out->function, sizeof out->function, name);
		*off = o;
	}
	pthread_mutex_unlock(&sym_lock);
	return found;
}

bool mc_symbolize_comp_dir(uintptr_t pc, char *out, size_t cap)
{
	bool found = false;
	uintptr_t addr = pc ? pc - 1 : 0;
	pthread_mutex_lock(&sym_lock);
	Dwfl *d = load_libdw() && dw.inlines ? get_session() : NULL;
	Dwfl_Module *mod = d ? session_module(d, addr, NULL) : NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = mod ? dw.addrdie(mod, addr, &bias) : NULL;
	Dwarf_Attribute at;
	const char *dir = cu && dw.attr(cu, DW_AT_comp_dir, &at) ? dw.formstring(&at) : NULL;
	if (dir && *dir && strlen(dir) < cap) {
		memcpy(out, dir, strlen(dir) + 1);
		found = true;
	}
	pthread_mutex_unlock(&sym_lock);
	return found;
}
