/*
 * elfmod.c - a loaded object's ELF files read by memcheck itself, for the
 * names suppression matching needs, so that a process whose leftovers
 * the shipped suppressions settle never loads libdw.  Loading libdw,
 * libelf, libz, liblzma and libbz2 at exit, reporting the process's
 * modules to libdwfl (it reads /proc/self/maps through stdio) and its
 * ELF handles were a third of a short process's exit (/bin/date: ~1.2 M
 * instructions and ~90 page faults before any name was found).
 *
 * The trap is that every answer must be libdw's: suppressions match the
 * names libdw gives, and reports print them.  So an object is read here
 * only where it is plain which table libdw would search and how it would
 * place it, and left to libdw (NULL) otherwise:
 *  - the object's file is the path /proc/self/maps shows for the address
 *    (libdwfl's module name and the file it opens), a regular file;
 *  - its symbol table is its own one SHT_SYMTAB; without one, the one in
 *    the debug file of its build ID under /usr/lib/debug/.build-id (where
 *    libdw's default path looks first) whose build ID is the object's and
 *    whose first PT_LOAD ends where the object's does (so libdw's bias for
 *    its symbols is the object's); without either, its SHT_DYNSYM, unless
 *    a file lies where memcheck's own callback looks for its
 *    .gnu_debuglink name, or it carries a .gnu_debugdata table (libdw
 *    merges it in);
 *  - ELF64, little-endian, ET_EXEC or ET_DYN, every offset in the file.
 * The search itself is symtab.c's, which answers as libdw's does or says
 * it cannot (the name is then libdw's).  The object's dynamic symbol
 * table, already in memory, is no stand-in for a build-ID debug file's
 * table, even where an exported function covers the address (the C
 * library's exported symbols are its full table's globals, one for one,
 * on Debian 12): a frame no exported symbol covers needs the full table,
 * and every main-thread stack has one (__libc_start_call_main), whose
 * name a shipped entry's '... fun:X' must be told apart from before the
 * entries after it are tried.  tests/unit_symbolize.c compares names,
 * objects and the debug information found with libdw's for every object
 * of its process.
 *
 * Files are mapped read-only (mc_sys_mmap: the pages read are the page
 * cache's, as libelf's mappings are) and forgotten with libdw's session,
 * at each report's end.  No malloc.  Called with symbolize.c's lock held.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "symtab.h"

struct elf_file {
	const unsigned char *p;   /* the whole file, NULL: none */
	size_t size;
	const Elf64_Shdr *sh;
	unsigned shnum;
	const char *shstr;
	size_t shstrsize;
	uint64_t sync;            /* the first PT_LOAD's end (libdw's address_sync) */
	const unsigned char *id;  /* its build ID */
	size_t idlen;
};

struct mc_elfmod {
	uintptr_t lo;             /* the object's first byte (_dl_find_object): the key */
	uintptr_t hi;             /* past its last (its mappings' reservation) */
	bool used, ok;
	bool link_probed;         /* pick_table looked for a .gnu_debuglink file */
	bool debug_tried;         /* and for the build-ID debug file (open_debug) */
	const char *link;         /* and its name, where one was looked for (in main) */
	uint64_t bias;
	int debuginfo;            /* MC_DI_* */
	struct elf_file main, debug;
	struct mc_symtab sym;
	char path[MC_ELFMOD_PATH];
};

static struct mc_elfmod mods[MC_ELFMOD_SLOTS];
static unsigned mods_next;

static void file_close(struct elf_file *f)
{
	if (f->p)
		mc_sys_munmap((void *)f->p, f->size);
	*f = (struct elf_file){ 0 };
}

static const char *sec_name(const struct elf_file *f, const Elf64_Shdr *s)
{
	return s->sh_name < f->shstrsize ? f->shstr + s->sh_name : NULL;
}

static const void *sec_data(const struct elf_file *f, const Elf64_Shdr *s)
{
	return s->sh_type != SHT_NOBITS && s->sh_offset <= f->size &&
	       s->sh_size <= f->size - s->sh_offset ? f->p + s->sh_offset : NULL;
}

/* The GNU build ID from the file's SHT_NOTE sections (libdw reads them
 * first too). */
static void find_build_id(struct elf_file *f)
{
	for (unsigned i = 0; i < f->shnum && !f->id; i++) {
		const Elf64_Shdr *s = &f->sh[i];
		const unsigned char *n = s->sh_type == SHT_NOTE ? sec_data(f, s) : NULL;
		if (n)
			f->id = mc_note_build_id(n, s->sh_size, &f->idlen);
	}
}

/* The section headers' pages and their names' made resident in one call
 * each, the headers checked (file_open): each page was otherwise a page
 * fault (15-35 us here, a one-page populate ~3 us), as was the first
 * page, populated before the check reads it: two a file, six at a
 * measured /bin/date's exit (the program, the C library and its debug
 * file).  The section names lie on pages just before the headers in the
 * files of these systems: read after the first call, their header being
 * on its pages. */
static void headers_populate(const struct elf_file *f, const Elf64_Ehdr *eh)
{
	uint64_t lo = eh->e_shoff, page = lo & ~(uint64_t)4095;
	mc_populate_read(f->p + lo, (size_t)eh->e_shnum * sizeof(Elf64_Shdr));
	const Elf64_Shdr *str = (const Elf64_Shdr *)(f->p + lo) + eh->e_shstrndx;
	if (str->sh_offset < page && page - str->sh_offset <= 16384)
		mc_populate_read(f->p + str->sh_offset, page - str->sh_offset);
}

/* Map path and check the headers this file relies on. */
static bool file_open(struct elf_file *f, const char *path)
{
	*f = (struct elf_file){ 0 };
	/* a program that restricted its file access has its objects'
	 * files kept for this (sandbox.c) */
	int fd = mc_kept_open(path);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	void *map = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof(Elf64_Ehdr))
		map = mc_map_file((size_t)st.st_size, fd, 0); /* kept: apart from the program's */
	close(fd);
	if (map == MAP_FAILED)
		return false;
	f->p = map;
	f->size = (size_t)st.st_size;
	const Elf64_Ehdr *eh = map;
	mc_populate_read(f->p, f->size < 4096 ? f->size : 4096);
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !eh->e_shnum || eh->e_shoff > f->size ||
	    eh->e_shnum > (f->size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_phoff > f->size || eh->e_phnum > (f->size - eh->e_phoff) / sizeof(Elf64_Phdr) ||
	    eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= eh->e_shnum)
		goto bad;
	headers_populate(f, eh);
	f->sh = (const Elf64_Shdr *)(f->p + eh->e_shoff);
	f->shnum = eh->e_shnum;
	f->shstr = sec_data(f, &f->sh[eh->e_shstrndx]);
	f->shstrsize = f->shstr ? f->sh[eh->e_shstrndx].sh_size : 0;
	if (!f->shstr)
		goto bad;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(f->p + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			f->sync = ph[i].p_vaddr + ph[i].p_memsz;
			break;
		}
	find_build_id(f);
	return true;
bad:
	file_close(f);
	return false;
}

/* The file's sections of a type, counted; *first: the first of them. */
static int count_type(const struct elf_file *f, uint32_t type, const Elf64_Shdr **first)
{
	int n = 0;
	*first = NULL;
	for (unsigned i = 0; i < f->shnum; i++)
		if (f->sh[i].sh_type == type && f->sh[i].sh_entsize) {
			if (!n++)
				*first = &f->sh[i];
		}
	return n;
}

static const Elf64_Shdr *named(const struct elf_file *f, const char *name)
{
	for (unsigned i = 0; i < f->shnum; i++) {
		const char *s = sec_name(f, &f->sh[i]);
		if (s && strcmp(s, name) == 0)
			return &f->sh[i];
	}
	return NULL;
}

/* Has f debug information of any kind libdw could take for DWARF? */
static bool has_debug_sections(const struct elf_file *f)
{
	for (unsigned i = 0; i < f->shnum; i++) {
		const char *s = sec_name(f, &f->sh[i]);
		if (s && (strncmp(s, ".debug_", 7) == 0 || strncmp(s, ".zdebug_", 8) == 0))
			return true;
	}
	return false;
}

/* The debug file of main's build ID, as libdw's default path finds it. */
#define DEBUG_PREFIX "/usr/lib/debug/.build-id/"
#define DEBUG_PATH_MAX MC_DEBUG_PATH_MAX
_Static_assert(MC_DEBUG_PATH_MAX == sizeof DEBUG_PREFIX + 2 * 64 + 1 + sizeof ".debug",
	       "symtab.h's MC_DEBUG_PATH_MAX");

/* The build-ID debug file's path of id (2 to 64 bytes) into path
 * (DEBUG_PATH_MAX). */
static void debug_path(char *path, const unsigned char *id, size_t idlen)
{
	/* The hex digits by hand (mc_hex): a snprintf a byte was 21 calls
	 * for a 20-byte ID (28 K instructions of a measured /bin/date's exit
	 * for two objects). */
	char *w = path + sizeof DEBUG_PREFIX - 1;
	memcpy(path, DEBUG_PREFIX, sizeof DEBUG_PREFIX - 1);
	w = mc_hex(w, id, 1);
	*w++ = '/';
	w = mc_hex(w, id + 1, idlen - 1);
	memcpy(w, ".debug", sizeof ".debug");
}

/* Paths found without a file this session (until mc_elfmod_forget):
 * the build-ID debug file's, which mc_elfmod_quick_key stats and
 * open_debug then opens, and a .gnu_debuglink name's places, which
 * suppcache.c's verdicts (symkeys.c links_absent) and this file's
 * reading of the object each probe.  A measured /bin/date's warm exit
 * looked at its program's four twice: 4 system calls of its 221.
 * Premise: no debug file appears in the microseconds between the two
 * looks of one report; the next report (a session of its own) looks
 * again.  A path with a file is never kept: it is opened anyway. */
#define ABSENT_MEMO 64   /* tcmalloc's process: ~8 objects, 4 paths each */
static _Atomic uint64_t absent_memo[ABSENT_MEMO];   /* fnv1a of the path; 0 free */
static _Atomic unsigned absent_next;

static uint64_t path_hash(const char *path)
{
	uint64_t h = mc_fnv1a(path, strlen(path));
	return h ? h : 1;
}

static bool known_absent(const char *path)
{
	uint64_t h = path_hash(path);
	for (unsigned i = 0; i < ABSENT_MEMO; i++)
		if (atomic_load_explicit(&absent_memo[i], memory_order_relaxed) == h)
			return true;
	return false;
}

static void note_absent(const char *path)
{
	unsigned i = atomic_fetch_add_explicit(&absent_next, 1, memory_order_relaxed);
	atomic_store_explicit(&absent_memo[i % ABSENT_MEMO], path_hash(path), memory_order_relaxed);
}

static bool open_debug(struct mc_elfmod *m)
{
	const struct elf_file *f = &m->main;
	if (!f->id || f->idlen < 2 || f->idlen > 64)
		return false;
	char path[DEBUG_PATH_MAX];
	debug_path(path, f->id, f->idlen);
	if (known_absent(path) || !file_open(&m->debug, path))
		return false;
	if (m->debug.idlen != f->idlen || memcmp(m->debug.id, f->id, f->idlen) != 0) {
		file_close(&m->debug);   /* libdw drops a mismatch too */
		return false;
	}
	return true;
}

/* Built by copies, not snprintf (~950 instructions a place): a
 * verdict's check of a stripped program's links (suppcache.c) builds
 * its three places at every failing exit, and the names' lookup
 * (symdw.c find_debuginfo) again.  callgrind, a warm failing
 * /bin/date -u -d @0: mc_debuglink_found 8.3 K -> 5.1 K instructions,
 * the whole process 1,063.5 K -> 1,055.8 K. */
bool mc_debuglink_place(const char *file, const char *link, size_t i, char *path, size_t cap)
{
	static const char *const pre[] = { "", "", "/usr/lib/debug" };
	static const char *const mid[] = { "/", "/.debug/", "/" };
	if (i >= MC_ARRAY_SIZE(pre))
		return false;
	const char *slash = strrchr(file, '/');
	size_t dirlen = slash ? (size_t)(slash - file) : 0;
	size_t lp = strlen(pre[i]), lm = strlen(mid[i]), ll = strlen(link);
	path[0] = 0;
	if (lp + dirlen + lm + ll >= cap)
		return true;   /* too long: no place (snprintf's truncation was) */
	char *w = path;
	memcpy(w, pre[i], lp);
	w += lp;
	memcpy(w, file, dirlen);
	w += dirlen;
	memcpy(w, mid[i], lm);
	w += lm;
	memcpy(w, link, ll + 1);
	if (strcmp(path, file) == 0)
		path[0] = 0;
	return true;
}

bool mc_debuglink_found(const char *file, const char *link)
{
	char path[4096];
	int saved = errno;
	bool found = false;
	for (size_t i = 0; !found && mc_debuglink_place(file, link, i, path, sizeof path); i++) {
		if (!path[0] || known_absent(path))
			continue;
		found = access(path, F_OK) == 0;
		if (!found && errno == ENOENT)
			note_absent(path);
	}
	errno = saved;
	return found;
}

/* Is there a file where memcheck's find_debuginfo (symdw.c) looks
 * for main's .gnu_debuglink name once the build ID found none?  Debian's
 * stripped programs name one that is not installed: then libdw has no
 * debug file either. */
static bool debuglink_found(struct mc_elfmod *m)
{
	const Elf64_Shdr *s = named(&m->main, ".gnu_debuglink");
	const char *link = s ? sec_data(&m->main, s) : NULL;
	if (!link || !s->sh_size || !memchr(link, 0, s->sh_size) || !*link || strchr(link, '/'))
		return false;   /* none the callback looks for */
	m->link = link;
	return mc_debuglink_found(m->path, link);
}

/* The symbol table's pages, and its string table's where it lies beside
 * it and is no larger, mapped in one call: the names' first read goes
 * over the whole table (symtab.c's batch), and each 64 KiB of it was a
 * fault (the kernel maps 16 pages around one).  The C library's debug
 * file: 240 KiB of symbols and 132 KiB of names at its end, 7 of its 8
 * page faults at a measured /bin/date's exit, each 15-20 us here. */
static void table_populate(const struct elf_file *f, const Elf64_Shdr *sym,
			   const Elf64_Shdr *str)
{
	uint64_t lo = sym->sh_offset, hi = sym->sh_offset + sym->sh_size;
	uint64_t slo = str->sh_offset, shi = str->sh_offset + str->sh_size;
	if (str->sh_size <= sym->sh_size && (slo <= hi + 65536 && shi + 65536 >= lo)) {
		lo = slo < lo ? slo : lo;
		hi = shi > hi ? shi : hi;
	}
	/* A small program's tables lie on the first page, which file_open
	 * made resident (/bin/date's dynamic symbols): no second call. */
	if (hi <= 4096 && hi <= f->size)
		return;
	mc_populate_read((const char *)f->p + lo, hi - lo);
}

/* The table libdw searches, or false where it is not plain. */
static bool pick_table(struct mc_elfmod *m)
{
	const Elf64_Shdr *sym, *dyn;
	const struct elf_file *f = &m->main;
	int nsym = count_type(f, SHT_SYMTAB, &sym);
	bool own_info = named(f, ".debug_info") != NULL;
	bool debug = false;
	/* Some debug sections but no .debug_info (line tables alone, CFI):
	 * what libdw makes of them is its own. */
	if (nsym > 1 || (!own_info && has_debug_sections(f)))
		return false;
	if (!nsym || !own_info) {
		/* libdw looks for the debug file: for symbols, or for DWARF */
		debug = open_debug(m);
		m->debug_tried = true;
		m->link_probed = !debug && named(f, ".gnu_debuglink");
		if (!debug && debuglink_found(m))
			return false;
	}
	m->debuginfo = own_info ? MC_DI_OWN :
		       debug && has_debug_sections(&m->debug) ? MC_DI_ELSEWHERE : MC_DI_NONE;
	if (!nsym && debug) {
		f = &m->debug;
		if (count_type(f, SHT_SYMTAB, &sym) != 1 || m->debug.sync != m->main.sync)
			return false;
	}
	if (!sym) {
		if (named(f, ".gnu_debugdata") || count_type(f, SHT_DYNSYM, &dyn) != 1)
			return false;
		sym = dyn;
	}
	const void *syms = sec_data(f, sym);
	if (!syms || sym->sh_entsize != sizeof(Elf64_Sym) || sym->sh_link >= f->shnum ||
	    sym->sh_size / sizeof(Elf64_Sym) > INT32_MAX || sym->sh_info > INT32_MAX)
		return false;
	const Elf64_Shdr *str = &f->sh[sym->sh_link];
	const char *strs = sec_data(f, str);
	if (!strs)
		return false;
	table_populate(f, sym, str);
	struct raw_syms r = { syms, strs, str->sh_size, m->bias, f->sh, f->shnum, m->main.sh,
			      m->main.shnum };
	mc_symtab_raw(&m->sym, &r, (int)(sym->sh_size / sizeof(Elf64_Sym)), (int)sym->sh_info);
	return true;
}

struct path_find {
	uintptr_t lo;
	char *path;               /* MC_ELFMOD_PATH bytes */
};

/* A mapping's name (n bytes) that is a file to open: a path, of a file
 * not deleted since it was mapped. */
static inline __attribute__((always_inline)) bool file_to_open(const char *name, size_t n)
{
	return name[0] == '/' && !(n > 10 && strcmp(name + n - 10, " (deleted)") == 0);
}

static bool find_path(const struct mc_mapping *mp, void *arg)
{
	struct path_find *pf = arg;
	if (pf->lo < mp->lo || pf->lo >= mp->hi)
		return true;
	size_t n = strlen(mp->name);
	if (n < MC_ELFMOD_PATH && file_to_open(mp->name, n))
		memcpy(pf->path, mp->name, n + 1);
	return false;
}

/* Where each file's run of mappings begins, from one read of
 * /proc/self/maps: each object named at a region's end (the program's,
 * the C library's, ...) read the whole file before, 10-25 us and four
 * system calls each.  Within a region's end the read is the scan's
 * (lent: mc_elfmod_runs_lend), which the scan made anyway; a third of a
 * measured /bin/date's exit reads were these.  An object the table does
 * not know (mapped since) is looked for in a read of its own, as before.
 * The table is kept from one region's end to the next while no object
 * is loaded or unloaded (the dynamic linker's counts, runs_gen): read
 * at every region's end, it was two thirds of a region's end that
 * symbolizes its peak's stacks (tests/prog/cli_prog iter 500 under
 * callgrind: 86 M of 132 M instructions, a 307-line maps file walked
 * 501 times); an object's first mapping lies where it was loaded until
 * it is unloaded. */
static struct mc_buf runs;
static bool runs_read, runs_checked;   /* read; its counts checked this session */
static struct mc_objects_gen runs_gen;
static const struct mc_buf *lent;

void mc_elfmod_runs_lend(const struct mc_buf *r)
{
	lent = r;
}

static bool note_run(const struct mc_mapping *mp, void *arg)
{
	mc_maps_runs_note(arg, mp);
	return true;
}

/* The name of the mapping that starts at lo, if the session's table has
 * it; where the table asks the kernel, the name is written into buf (cap
 * bytes). */
/* The table checked at a session's first question, read where it is
 * not held for the objects loaded now; out of line (a later group of
 * the code, text-order.ld): at most once a session. */
static __attribute__((noinline, cold)) void runs_check(void)
{
	struct mc_objects_gen g;
	runs_checked = true;
	if (runs_read &&
	    (!mc_objects_gen(&g) || g.adds != runs_gen.adds || g.subs != runs_gen.subs)) {
		mc_buf_free(&runs);
		runs_read = false;
	}
	if (!runs_read) {
		runs_read = true;
		if (!mc_objects_gen(&runs_gen))
			runs_gen = (struct mc_objects_gen){ ~0ULL, ~0ULL }; /* read again */
		struct mc_maps_runs w = { .b = &runs };
		if (!mc_maps_each(note_run, &w) || runs.oom)
			mc_buf_free(&runs);
	}
}

/* Questions asked of the kernel one by one (mc_maps_name_at) before the
 * whole file is read and kept: where nothing is lent, the objects a
 * process names are few (a leaking exit under jemalloc or tcmalloc names
 * the allocator's after the scan's table is gone: its second matching,
 * of every kind, for the failing text), and each read of the file had
 * the kernel write out all of its mappings (open, three reads, close:
 * bench/proto/phases.sh, short46); a process that names more (a region
 * ended at each step, cli_prog) reads it once, as before. */
#define RUNS_ASKED_MAX 8
static unsigned runs_asked;

/* The table read where the kernel cannot be asked, or has been asked
 * RUNS_ASKED_MAX times: out of line, placed with group 2b (text-order.ld:
 * the room the exit's groups share is not taken). */
static __attribute__((noinline)) const char *run_asked(uintptr_t lo, char *buf, size_t cap)
{
	if (runs_asked < RUNS_ASKED_MAX) {
		bool asked;
		const char *name = mc_maps_name_at(lo, buf, cap, &asked);
		if (asked) {
			runs_asked++;
			return name;
		}
	}
	if (!runs_checked)
		runs_check();
	return mc_maps_run_at(&runs, lo, buf, cap);
}

static const char *run_at(uintptr_t lo, char *buf, size_t cap)
{
	if (lent)
		return mc_maps_run_at(lent, lo, buf, cap);
	if (!runs_read)
		return run_asked(lo, buf, cap);
	if (!runs_checked)
		runs_check();
	return mc_maps_run_at(&runs, lo, buf, cap);
}

/* The path of the object whose first byte is lo into path
 * (MC_ELFMOD_PATH bytes, zeroed); false: none to open. */
static bool path_at(uintptr_t lo, char *path)
{
	/* The first mapping of the object is its file's (the ELF header).
	 * Asked of the kernel, its name is written into path itself (a
	 * name path cannot hold is none): then taken as find_path takes
	 * one, or cleared. */
	struct path_find pf = { lo, path };
	const char *name = run_at(lo, path, MC_ELFMOD_PATH);
	if (name == path) {
		size_t n = strlen(path);
		if (!file_to_open(path, n))
			memset(path, 0, n);
		return path[0];
	}
	struct mc_mapping first = { .lo = lo, .hi = lo + 1, .name = name };
	return (name ? !find_path(&first, &pf) : mc_maps_each(find_path, &pf)) && path[0];
}

static void forget(struct mc_elfmod *m, bool unmap)
{
	if (unmap) {
		mc_symtab_free(&m->sym);
		file_close(&m->main);
		file_close(&m->debug);
	}
	*m = (struct mc_elfmod){ 0 };
}

/* The main program's first byte, where lo (its dl_find_object start)
 * lies in it, else lo.  glibc 2.36 gives the main program's
 * dlfo_map_start as its executable segment's start, not its first
 * PT_LOAD's, where the segments are aligned to more than a page:
 * libevent links with -z max-page-size=16384, and its regress's text
 * lies 0x14000 into it.  libdwfl, told the object starts there, read
 * every address 0x14000 too low: leaks printed with another unit's
 * functions, files and lines (libevent's regress: tinytest.c's
 * testcase_run_bare_ as regress_listener.c's regress_pick_a_port).
 * Premise: the kernel maps the main program's first PT_LOAD at its
 * page-aligned p_vaddr plus the bias AT_PHDR gives (its PT_PHDR), as
 * the ELF header's page. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
static uintptr_t main_first_byte(uintptr_t lo, uint64_t bias)
{
	size_t n;
	uintptr_t main_bias = 0, first = UINTPTR_MAX;
	bool holds_lo = false;
	const ElfW(Phdr) *ph = mc_main_phdrs(&n, &main_bias);
	if (!ph || main_bias != bias)
		return lo;
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		uintptr_t at = main_bias + ph[i].p_vaddr;
		if (lo - at < ph[i].p_memsz)
			holds_lo = true;
		if (ph[i].p_vaddr < first)
			first = ph[i].p_vaddr;
	}
	if (!holds_lo || first == UINTPTR_MAX)
		return lo;
	first = main_bias + (first & ~(uintptr_t)(mc_page_size() - 1));
	return first < lo ? first : lo;
}
#endif

struct mc_elfmod *mc_elfmod_find(uintptr_t addr, int *fresh)
{
	*fresh = -1;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	if (_dl_find_object((void *)addr, &fo) != 0 || !fo.dlfo_link_map)
		return NULL;
	uint64_t bias = fo.dlfo_link_map->l_addr;
	uintptr_t lo = main_first_byte((uintptr_t)fo.dlfo_map_start, bias);
	uintptr_t hi = (uintptr_t)fo.dlfo_map_end;
#else
	(void)addr;    /* no cheap way to the object: libdw decides */
	return NULL;
	uintptr_t lo = 0, hi = 0;
	uint64_t bias = 0;
#endif
	for (size_t i = 0; i < MC_ARRAY_SIZE(mods) && i < mods_next; i++)
		if (mods[i].used && mods[i].lo == lo)
			return mods[i].ok ? &mods[i] : NULL;
	struct mc_elfmod *m = &mods[mods_next++ % MC_ARRAY_SIZE(mods)];
	/* A slot on a page no slot used yet: the page populated, not
	 * faulted in (15-35 us here; a measured /bin/date's exit took one);
	 * only from the end of those made resident before (a slot that
	 * straddles it asked again for the page it began on: pop57). */
	static uintptr_t populated;   /* the end of the slots' pages made resident */
	if ((uintptr_t)(m + 1) > populated) {
		uintptr_t from = (uintptr_t)m > populated ? (uintptr_t)m : populated;
		mc_populate((void *)from, (uintptr_t)(m + 1) - from);
		populated = ((uintptr_t)(m + 1) + 4095) & ~(uintptr_t)4095;
	}
	forget(m, true);
	*fresh = (int)(m - mods);
	m->used = true;
	m->lo = lo;
	m->hi = hi;
	m->bias = bias;
	m->ok = path_at(lo, m->path) && file_open(&m->main, m->path) && pick_table(m);
	return m->ok ? m : NULL;
}

int mc_elfmod_slot(const struct mc_elfmod *m)
{
	return (int)(m - mods);
}

const char *mc_elfmod_path(const struct mc_elfmod *m)
{
	return m->path;
}

int mc_elfmod_debuginfo(const struct mc_elfmod *m)
{
	return m->debuginfo;
}

const unsigned char *mc_elfmod_build_id(const struct mc_elfmod *m, size_t *len)
{
	*len = m->main.idlen;
	return m->main.id;
}

uint64_t mc_elfmod_bias(const struct mc_elfmod *m)
{
	return m->bias;
}

void mc_elfmod_range(const struct mc_elfmod *m, uintptr_t *lo, uintptr_t *hi)
{
	*lo = m->lo;
	*hi = m->hi;
}

const struct mc_symtab *mc_elfmod_symtab(const struct mc_elfmod *m)
{
	return &m->sym;
}

const char *mc_elfmod_name(struct mc_elfmod *m, uintptr_t addr, bool *ask)
{
	return mc_symtab_name_raw(&m->sym, addr, ask);
}

void mc_elfmod_names(struct mc_elfmod *m, const uint64_t *addr, size_t n, const char **name,
		     bool *done)
{
	mc_symtab_names_raw(&m->sym, addr, n, name, done);
}

bool mc_elfmod_sections(const struct mc_elfmod *m, void (*fn)(const struct mc_elf_sec *, void *),
			void *arg)
{
	const struct elf_file *f = &m->main;
	for (unsigned i = 0; i < f->shnum; i++) {
		const Elf64_Shdr *s = &f->sh[i];
		struct mc_elf_sec sec = { sec_name(f, s), s->sh_type, s->sh_flags, sec_data(f, s),
					  s->sh_size };
		if (!sec.name)
			return false;
		fn(&sec, arg);
	}
	return true;
}

/* The GNU build ID in the PT_NOTE segments of the image whose ELF header
 * is at lo (its first mapping), loaded at bias; false: none. */
static bool image_id(uintptr_t lo, uint64_t bias, struct mc_quick_key *k)
{
	size_t len;
	const unsigned char *id = mc_image_build_id((const void *)lo, bias, &len);
	/* room for the debug file's state after it */
	if (!id || len < 8 || len > sizeof k->key - 9)
		return false;
	memcpy(k->key, id, len);
	k->idlen = len;
	return true;
}

bool mc_elfmod_debug_path_at(uintptr_t addr, char path[MC_DEBUG_PATH_MAX])
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	struct mc_quick_key k;
	if (_dl_find_object((void *)addr, &fo) != 0 || !fo.dlfo_link_map ||
	    !image_id((uintptr_t)fo.dlfo_map_start, fo.dlfo_link_map->l_addr, &k))
		return false;
	debug_path(path, k.key, k.idlen);
	return true;
#else
	(void)addr;
	(void)path;
	return false;
#endif
}

bool mc_elfmod_quick_key(uintptr_t addr, struct mc_quick_key *k)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	if (_dl_find_object((void *)addr, &fo) != 0 || !fo.dlfo_link_map)
		return false;
	*k = (struct mc_quick_key){ .lo = (uintptr_t)fo.dlfo_map_start,
				    .hi = (uintptr_t)fo.dlfo_map_end,
				    .bias = fo.dlfo_link_map->l_addr };
	if (!image_id(k->lo, k->bias, k) || !path_at(k->lo, k->path))
		return false;
	/* The debug file's path: absent (with why), or which file it is,
	 * as of now: a debug package installed, removed or upgraded
	 * since gives another key, and its names are found afresh. */
	char path[DEBUG_PATH_MAX];
	debug_path(path, k->key, k->idlen);
	struct stat st;
	int64_t v[8] = { 0 };
	/* and which file of that build ID the object is: a stripped copy
	 * (strip, objcopy --add-gnu-debuglink) keeps the ID but not the
	 * sections, and the names its frames lack are not the unstripped
	 * program's (test_wrapper named none of plain_leak_direct's frames
	 * after test_debuginfo's stripped copy of it had run) */
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)k->lo;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0) {
		v[6] = (int64_t)eh->e_shoff;
		v[7] = (int64_t)eh->e_shnum;
	}
	int saved = errno;
	if (stat(path, &st) == 0) {
		k->debug = true;
		v[0] = (int64_t)st.st_dev;
		v[1] = (int64_t)st.st_ino;
		v[2] = (int64_t)st.st_size;
		v[3] = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		v[4] = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
		v[5] = (int64_t)st.st_mode;
	} else {
		v[0] = -errno;
		if (errno == ENOENT)
			note_absent(path);
	}
	errno = saved;
	uint64_t h = mc_fnv1a(v, sizeof v);
	k->key[k->idlen] = 'Q';
	memcpy(k->key + k->idlen + 1, &h, 8);
	k->len = k->idlen + 9;
	return true;
#else
	(void)addr;
	(void)k;
	return false;
#endif
}

/* m's names were read in another state of the build-ID debug file than
 * k says (k->debug: a file stat found at its path): one that open_debug
 * could not open or map (EACCES where a seccomp filter or Landlock
 * allows stat and not open, ENFILE, an address-space limit), whose
 * frames then had the dynamic table's names alone (the dynamic linker's
 * call_init "???"), or one that appeared since the stat.  Kept under
 * k, those names were every later process's: a process whose open of
 * ld.so's debug file failed once left test_valgrind's
 * running_threads_dtvs_as_valgrinds (libstdc++'s pool, fun:call_init)
 * failing under tcmalloc in every run after it that shared the cache
 * (strace -P DEBUGFILE -e inject=openat:error=EACCES). */
static bool debug_unlike(const struct mc_elfmod *m, const struct mc_quick_key *k)
{
	return m->debug_tried && (m->debug.p != NULL) != k->debug;
}

bool mc_elfmod_names_keyed(const struct mc_quick_key *k)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(mods) && i < mods_next; i++)
		if (mods[i].used && mods[i].ok && mods[i].lo == k->lo && debug_unlike(&mods[i], k))
			return false;
	return true;
}

bool mc_elfmod_quick_ok(const struct mc_elfmod *m, const struct mc_quick_key *k,
			const char **link)
{
	if (link)
		*link = m->link_probed ? m->link : NULL;
	return (!m->link_probed || (link && *link)) && !debug_unlike(m, k) && m->lo == k->lo &&
	       m->main.idlen == k->idlen && memcmp(m->main.id, k->key, k->idlen) == 0 &&
	       strcmp(m->path, k->path) == 0;
}

const char *mc_elfmod_link(const struct mc_elfmod *m)
{
	return m->link_probed ? m->link : NULL;
}

/* Only the slots claimed since the last forget: the others were never
 * written, and a walk of all sixteen (three pages) faulted in the ones
 * a short process never used. */
void mc_elfmod_forget(bool unmap)
{
	size_t used = mods_next < MC_ARRAY_SIZE(mods) ? mods_next : MC_ARRAY_SIZE(mods);
	for (size_t i = 0; i < used; i++)
		forget(&mods[i], unmap);
	mods_next = 0;
	for (unsigned i = 0; i < ABSENT_MEMO; i++)
		atomic_store_explicit(&absent_memo[i], 0, memory_order_relaxed);
	/* the table kept for the next session, which checks it first */
	runs_checked = false;
	if (!unmap) {
		/* a forked child's (another thread may have been using it)
		 * or the exit's: not freed */
		runs = (struct mc_buf){ 0 };
		runs_read = false;
	}
}
