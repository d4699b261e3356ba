/*
 * objects.c - the loaded objects, as memcheck sees them without libdw:
 * libmemcheck's own ELF image (its program headers from __ehdr_start,
 * linked into the program or not) and the main program's (AT_PHDR),
 * the walks of every object (mc_walk_objects, under the lock fork waits
 * for), whether memcheck is linked in, the code segment that holds an
 * address, an object's base (_dl_find_object), a library's optional
 * symbols bound in groups (dlsym), and the GNU build ID of a loaded
 * image or a note section.  Reading an object's files (sections, symbol
 * tables, debug files) is elfmod.c's and symtab.c's.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include "internal.h"

extern const char __ehdr_start[] __attribute__((visibility("hidden")));

const void *mc_own_phdrs(int *n, uintptr_t *bias)
{
	const ElfW(Ehdr) *eh = (const void *)__ehdr_start;
	const ElfW(Phdr) *ph = (const void *)(__ehdr_start + eh->e_phoff);
	*n = eh->e_phnum;
	if (bias) {
		*bias = 0;
		for (int i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_LOAD) {
				*bias = (uintptr_t)__ehdr_start - (ph[i].p_vaddr - ph[i].p_offset);
				break;
			}
	}
	return ph;
}

bool mc_own_is_program(void)
{
	const ElfW(Ehdr) *eh = (const void *)__ehdr_start;
	return getauxval(AT_PHDR) == (uintptr_t)__ehdr_start + eh->e_phoff;
}

void mc_own_image_each(void (*fn)(uintptr_t lo, uintptr_t hi, bool writable, void *arg), void *arg)
{
	if (mc_own_is_program())
		return;
	int n;
	uintptr_t base;
	const ElfW(Phdr) *ph = mc_own_phdrs(&n, &base);
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD) {
			uintptr_t at = base + ph[i].p_vaddr;
			fn(at & ~(uintptr_t)4095, mc_page_round(at + ph[i].p_memsz),
			   (ph[i].p_flags & PF_W) != 0, arg);
		}
}

/* Asked of the auxiliary vector once: a forked child that captures a
 * stack through the program's call-frame tables (ownread.c's view of
 * it) ran getauxval again, and faulted its 64 KiB block of the C
 * library in, a block the bare child never maps (test_rss_self's fork
 * rows, perf record -e page-faults -g). */
const void *mc_main_phdrs(size_t *n, uintptr_t *bias)
{
	static const ElfW(Phdr) *main_ph;
	static size_t main_n;
	static bool asked;
	if (!asked) {
		main_ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
		main_n = main_ph ? (size_t)getauxval(AT_PHNUM) : 0;
		asked = true;
	}
	const ElfW(Phdr) *ph = main_ph;
	*n = main_n;
	for (size_t i = 0; i < *n; i++)
		if (ph[i].p_type == PT_PHDR) {
			*bias = (uintptr_t)ph - ph[i].p_vaddr;
			return ph;
		}
	return NULL;
}

/* Does this loaded object name a library whose name has lib among the
 * libraries it needs (DT_NEEDED)?  Inline: the constructor's
 * needs_memcheck stays one function of the start-up's blocks. */
static inline __attribute__((always_inline)) bool object_needs(const struct dl_phdr_info *info, const char *lib)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		uintptr_t strtab = 0;
		for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
			if (e->d_tag == DT_STRTAB)
				strtab = e->d_un.d_ptr;
		if (!strtab)
			return false;
		/* the dynamic linker has made it absolute, but where the
		 * section is read-only (the vDSO) */
		if (strtab < info->dlpi_addr)
			strtab += info->dlpi_addr;
		for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
			if (e->d_tag == DT_NEEDED && mc_str_has((const char *)strtab + e->d_un.d_val, lib))
				return true;
	}
	return false;
}

static int needs_memcheck(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name && mc_str_has(info->dlpi_name, "libmemcheck"))
		return 0; /* memcheck itself */
	return object_needs(info, "libmemcheck");
}

bool mc_linked_in(void)
{
	const char *name = NULL;
	if (mc_object_base((const void *)mc_linked_in, &name) && name && !name[0])
		return true; /* in the program itself: libmemcheck.a */
	return mc_walk_objects(needs_memcheck, NULL) != 0;
}

struct needed_by {
	const char *lib, *besides;
};

static int needs_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const struct needed_by *n = arg;
	if (info->dlpi_name && info->dlpi_name[0] &&
	    (mc_str_has(info->dlpi_name, n->lib) ||
	     (n->besides && !strcmp(info->dlpi_name, n->besides))))
		return 0;
	return object_needs(info, n->lib);
}

bool mc_needed_besides(const char *lib, const char *besides)
{
	struct needed_by n = { lib, besides };
	return mc_walk_objects(needs_lib, &n) != 0;
}

const void *mc_object_map_start(const struct dl_phdr_info *info)
{
	const void *noted = mc_object_noted_start(info);
	if (noted)
		return noted;
	uintptr_t lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lo)
			lo = info->dlpi_phdr[i].p_vaddr;
	if (lo == UINTPTR_MAX)
		return NULL;
	/* getauxval, not mc_page_size, whose code lies in another block
	 * of libmemcheck's than a left-out process's (test_codeblocks) */
	uintptr_t pg = (uintptr_t)getauxval(AT_PAGESZ);
	if (!pg)
		pg = 4096;
	return (const void *)(info->dlpi_addr + (lo & ~(pg - 1)));
}

int mc_first_object_gen(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mc_objects_gen *g = arg;
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		return -1; /* no counts: nothing is kept */
	g->adds = info->dlpi_adds;
	g->subs = info->dlpi_subs;
	return 1;
}

/* dl_iterate_phdr holds the dynamic linker's lock while it calls fn, and
 * fork does not wait for that lock: a child forked meanwhile inherits it
 * held by a thread it does not have, and hangs in its first walk (the
 * scan at its region's end: tests/prog/forklocks' children hung so, the
 * lock's owner the parent's thread that was ending a region).  So
 * memcheck's walks hold walk_lock for reading and fork takes it for
 * writing, first of memcheck's locks (account.c): no walk of memcheck's
 * is under way when a child is made.  Readers go first (glibc's
 * default), so a walk never waits for a fork that only waits: one made
 * from inside the program's own walk (a malloc in its callback, with
 * MEMCHECK_FAIL_SITE) cannot deadlock with a walk of memcheck's that
 * waits for the program's, and a fork that finds walks going on for a
 * second goes on as it did before. */
MC_HOT static pthread_rwlock_t walk_lock = PTHREAD_RWLOCK_INITIALIZER;
static MC_TLS bool fork_has_walk_lock; /* per thread: see region.c's */

/* Whether walks take walk_lock: from a process's verdict on (life.c,
 * mc_walks_lock_from_now), never in one left out at start-up, which
 * registers no fork handler, so that no fork waits for the lock.  Until
 * then only the thread running start-up walks (mc_resolve holds the
 * others back), before the handlers exist: start-up's walks took the
 * lock for nothing, two lazy bindings and ~1.3 K instructions of a
 * left-out process. */
MC_HOT static bool walks_locked;

void mc_walks_lock_from_now(void)
{
	walks_locked = true;
}

int mc_walk_objects(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	/* fails (EDEADLK) only in the fork handlers, which hold it */
	bool locked = walks_locked && pthread_rwlock_rdlock(&walk_lock) == 0;
	int rc = dl_iterate_phdr(fn, arg);
	if (locked)
		pthread_rwlock_unlock(&walk_lock);
	return rc;
}

struct code_probe {
	uintptr_t pc, lo, hi;
};

static int probe_code(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct code_probe *p = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && p->pc >= lo &&
		    p->pc < lo + ph->p_memsz) {
			p->lo = lo;
			p->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

bool mc_code_segment(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
	struct code_probe p = { .pc = pc };
	if (!mc_walk_objects(probe_code, &p))
		return false;
	*lo = p.lo;
	*hi = p.hi;
	return true;
}

void mc_walks_prefork(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	fork_has_walk_lock = pthread_rwlock_timedwrlock(&walk_lock, &until) == 0;
}

void mc_walks_postfork(bool child)
{
	if (!fork_has_walk_lock)
		return;
	fork_has_walk_lock = false;
	/* the initializer, not pthread_rwlock_init: a call the parent
	 * never makes, bound lazily in every child (the dynamic linker's
	 * lookup and a store to libmemcheck's .got.plt: 4 page faults a
	 * fork, tests/prog/plain_fork_faults) */
	if (child)
		walk_lock = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
	else
		pthread_rwlock_unlock(&walk_lock);
}

/* The load address of the object that contains addr, as dladdr's
 * dli_fbase, or NULL.  dladdr also looks for the nearest symbol, a walk
 * of the object's whole dynamic symbol table (~10 us for the C
 * library's, a dozen times at start-up); glibc's _dl_find_object (2.35)
 * finds the object alone (mc_find_object: in a measured forked child,
 * from its table, for the mmap wrapper's look-up of its caller among
 * others).  If the link map's name is wanted, *name gets it ("" for the
 * main program, where dladdr gives argv[0]). */

const void *mc_object_base(const void *addr, const char **name)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	if (mc_find_object(addr, &fo) == 0 && fo.dlfo_link_map) {
		if (name)
			*name = fo.dlfo_link_map->l_name;
		return fo.dlfo_map_start;
	}
#endif
	Dl_info info;
	if (!addr || !dladdr(addr, &info))
		return NULL;
	if (name)
		*name = info.dli_fname;
	return info.dli_fbase;
}

/* dlclose calls begun (dlclose.c's wrapper, mc_objects_closing). */
static _Atomic unsigned long objects_closes;

void mc_objects_closing(void)
{
	atomic_fetch_add_explicit(&objects_closes, 1, memory_order_seq_cst);
}

unsigned long mc_objects_closes(void)
{
	return atomic_load_explicit(&objects_closes, memory_order_seq_cst);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
/* ---- a forked child's table of the loaded objects ----------------------
 *
 * fork copies no page table entry of a file mapping that has no
 * anonymous page: a forked child maps the C library's and the dynamic
 * linker's code afresh, page by page as it runs it.  Its first stack
 * captures look up the objects of return addresses the parent never
 * captured (cfi.c's mc_cfi_rule), footprint.c's measures check each
 * view of memcheck's (ownread.c's view_loaded) and the mmap wrapper
 * looks up its caller (mappings.c, mc_object_base: mimalloc maps in the
 * child), through _dl_find_object:
 * its 64 KiB block of the C library and 20 KiB of the dynamic linker's,
 * which the bare child never maps, faulted in the child's time and
 * counted as its own (test_rss_self's forked child: rss_end +68 to
 * +76 KiB over the bare child's; +4 to +12 now).  So the child's
 * fork handlers, in the window of memcheck's own work that gives back
 * the pages it faults (life.c fork_child, where the figures are
 * measured), note every object of the main namespace as _dl_find_object
 * answers for it, and the child's look-ups are answered from this
 * table while the dynamic linker's chain of link maps is the one noted
 * (no dlclose begun since, dlclose.c's wrapper, and as many objects in
 * the main namespace as then; read in memcheck's own copies, which fork
 * copied: no code of the C library's).  A dlclose since, an object of
 * another namespace, an address in none: _dl_find_object, as before.
 *
 * The check is two loads, no walk: session 38's compared the whole
 * chain of link maps (up to 48) with the one noted at every look-up,
 * and read them without the dynamic linker's lock, so that another
 * thread's dlclose could have it read a map being freed.  The wrapper
 * counts a dlclose before the dynamic linker begins it: a look-up that
 * loads the count after that answers from _dl_find_object, one that
 * loaded it before answers from the copies alone, as _dl_find_object
 * itself would have for a pc of an object then loaded.  The C
 * library's own unloads (its gconv modules, through no exported
 * dlclose) are seen in the namespace's count of loaded objects
 * (_ns_nloaded, the second field of the dynamic linker's _rtld_global,
 * whose first is the chain's head: both compared with the chain noted
 * before either is trusted); an unload and a load between two look-ups
 * that keep that count, of the C library's own alone, are not. */
#define FORK_OBJECTS 48
static struct dl_find_object fork_objects[FORK_OBJECTS];
/* The chain as noted, from its head (the note's walk alone reads it). */
static const struct link_map *fork_chain[FORK_OBJECTS];
static int nfork_chain;
/* The table's entries, 0 where there is none (the parent, a table that
 * no longer holds): written by the child's fork handler alone, while
 * it is the only thread, and set to 0 by any thread that finds the
 * objects changed. */
static _Atomic int nfork_objects;
/* dlclose's count when noted; the main namespace's count of loaded
 * objects (the dynamic linker's, NULL where its layout was not the one
 * expected) and its value then. */
static unsigned long fork_closes;
static const volatile unsigned *fork_nloaded;
static unsigned fork_nloaded_then;
/* The note's walk itself, every object as dl_iterate_phdr gave it and
 * its map start, for elfsym.c's look-ups (mc_walk_objects_noted); none
 * (nfork_walk 0) where the walk was not the main namespace's chain. */
static struct dl_phdr_info fork_walk[FORK_OBJECTS];
static const void *fork_walk_start[FORK_OBJECTS];
static size_t fork_walk_size;
static int nfork_walk;

/* Whether the objects are still those noted; if not, the table is
 * dropped. */
static bool fork_objects_hold(void)
{
	if (atomic_load_explicit(&objects_closes, memory_order_seq_cst) != fork_closes ||
	    (fork_nloaded && *fork_nloaded != fork_nloaded_then)) {
		atomic_store_explicit(&nfork_objects, 0, memory_order_relaxed);
		return false;
	}
	return true;
}

/* pc's object in the table: true and *fo, or false (not there, or the
 * table no longer holds: dropped). */
static __attribute__((noinline)) bool fork_objects_find(uintptr_t pc, struct dl_find_object *fo)
{
	int n = atomic_load_explicit(&nfork_objects, memory_order_acquire);
	if (!fork_objects_hold())
		return false;
	for (int i = 0; i < n; i++)
		if (pc - (uintptr_t)fork_objects[i].dlfo_map_start <
		    (uintptr_t)fork_objects[i].dlfo_map_end - (uintptr_t)fork_objects[i].dlfo_map_start) {
			*fo = fork_objects[i];
			return true;
		}
	return false;
}

int mc_find_object(const void *pc, struct dl_find_object *fo)
{
	if (atomic_load_explicit(&nfork_objects, memory_order_relaxed) &&
	    fork_objects_find((uintptr_t)pc, fo))
		return 0;
	return _dl_find_object((void *)pc, fo);
}

/* One object of the walk into the table, where it is in the chain: as
 * _dl_find_object answers for its first loaded segment it finds (the
 * main program's answer may cover its code alone: cfi.c). */
static int fork_objects_note_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *n = arg;
	if (nfork_walk < FORK_OBJECTS) {
		fork_walk_size = size < sizeof *info ? size : sizeof *info;
		memcpy(&fork_walk[nfork_walk], info, fork_walk_size);
		fork_walk_start[nfork_walk] = mc_object_map_start(info);
	}
	nfork_walk++;
	for (int i = 0; i < info->dlpi_phnum && *n < FORK_OBJECTS; i++) {
		struct dl_find_object fo;
		if (info->dlpi_phdr[i].p_type != PT_LOAD ||
		    _dl_find_object((void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr), &fo) != 0 ||
		    !fo.dlfo_link_map)
			continue;
		for (int k = 0; k < nfork_chain; k++)
			if (fork_chain[k] == fo.dlfo_link_map) {
				fork_objects[(*n)++] = fo;
				break;
			}
		break;
	}
	return 0;
}

void mc_fork_objects_note(const void *rtld_global)
{
	atomic_store_explicit(&nfork_objects, 0, memory_order_relaxed);
	nfork_chain = nfork_walk = 0;
	fork_closes = atomic_load_explicit(&objects_closes, memory_order_seq_cst);
	struct dl_find_object fo;
	if (_dl_find_object((void *)mc_fork_objects_note, &fo) != 0 || !fo.dlfo_link_map)
		return;
	const struct link_map *lm = fo.dlfo_link_map;
	while (lm->l_prev)
		lm = lm->l_prev;
	const struct link_map *head = lm;
	for (; lm; lm = lm->l_next) {
		if (nfork_chain == FORK_OBJECTS) {
			nfork_chain = 0; /* more than the table holds: none */
			return;
		}
		fork_chain[nfork_chain++] = lm;
	}
	/* _rtld_global's first fields (glibc's struct link_namespaces):
	 * the main namespace's head and its count, trusted only where they
	 * are the chain just walked. */
	const struct { const struct link_map *loaded; unsigned nloaded; } *ns = rtld_global;
	fork_nloaded = ns && ns->loaded == head && ns->nloaded == (unsigned)nfork_chain ?
			       &ns->nloaded : NULL;
	fork_nloaded_then = (unsigned)nfork_chain;
	int n = 0;
	mc_walk_objects(fork_objects_note_one, &n);
	/* another namespace's objects too, or too many; or no count of
	 * the namespace's objects to see a dlopen since by (a walk must
	 * find what it loads: the table's look-ups by address need not) */
	if (nfork_walk != nfork_chain || !fork_nloaded)
		nfork_walk = 0;
	atomic_store_explicit(&nfork_objects, n, memory_order_release);
}

/* The walk as the note's walk saw it (the objects, in their order, with
 * the note's dl_phdr_info), while the table holds: no code of the C
 * library's or the dynamic linker's runs, so none of their blocks is
 * faulted in the child (dl_iterate_phdr's, with _dl_find_object, 64 KiB
 * of the C library's that the bare child never maps).  The check is the
 * table's, made before the walk: a dlclose that another thread of the
 * child begins during the walk is not seen (objects before the C library
 * in the walk's order are never unloaded, and a next definition is
 * found there; see fork_objects_find for the rest).  -2 where the table
 * does not hold (the caller walks with mc_walk_objects). */
static __attribute__((noinline)) int fork_walk_noted(int (*fn)(struct dl_phdr_info *, size_t, void *),
							void *arg)
{
	int n = nfork_walk;
	if (!n || !fork_objects_hold())
		return -2;
	for (int i = 0; i < n; i++) {
		int rc = fn(&fork_walk[i], fork_walk_size, arg);
		if (rc)
			return rc;
	}
	return 0;
}

/* every process's start-up comes here: the walk itself lies apart */
int mc_walk_objects_noted(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	if (!atomic_load_explicit(&nfork_objects, memory_order_acquire))
		return -2;
	return fork_walk_noted(fn, arg);
}

const void *mc_object_noted_start(const struct dl_phdr_info *info)
{
	if (info < fork_walk || info >= fork_walk + FORK_OBJECTS)
		return NULL;
	return fork_walk_start[info - fork_walk];
}
#else
void mc_fork_objects_note(const void *rtld_global)
{
	(void)rtld_global;
}

int mc_walk_objects_noted(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	(void)fn;
	(void)arg;
	return -2;
}

const void *mc_object_noted_start(const struct dl_phdr_info *info)
{
	(void)info;
	return NULL;
}
#endif

bool mc_dl_bind_group(void *handle, const struct mc_dl_sym *group, size_t n)
{
	bool all = true;
	for (size_t i = 0; i < n; i++)
		all &= (*group[i].slot = dlsym(handle, group[i].name)) != NULL;
	return all;
}

const unsigned char *mc_note_build_id(const unsigned char *n, size_t size, size_t *len)
{
	for (size_t off = 0; off + 12 <= size;) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, n + off, 4);
		memcpy(&descsz, n + off + 4, 4);
		memcpy(&type, n + off + 8, 4);
		size_t desc = off + 12 + ((namesz + 3u) & ~3u);
		if (desc > size || descsz > size - desc)
			return NULL;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(n + off + 12, "GNU", 4) == 0 &&
		    descsz) {
			*len = descsz;
			return n + desc;
		}
		off = desc + ((descsz + 3u) & ~3u);
	}
	return NULL;
}

const unsigned char *mc_image_build_id(const void *ehdr, uintptr_t bias, size_t *len)
{
	const Elf64_Ehdr *eh = ehdr;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > 256 ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > 4096)
		return NULL;   /* the headers beyond the first page: maybe not mapped */
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		bool mapped = false;   /* inside a readable PT_LOAD's file bytes */
		for (unsigned j = 0; j < eh->e_phnum && !mapped; j++)
			mapped = ph[j].p_type == PT_LOAD && (ph[j].p_flags & PF_R) &&
				 ph[i].p_vaddr >= ph[j].p_vaddr &&
				 ph[i].p_memsz <= ph[j].p_filesz &&
				 ph[i].p_vaddr - ph[j].p_vaddr <= ph[j].p_filesz - ph[i].p_memsz;
		const unsigned char *id = mapped ?
			mc_note_build_id((const unsigned char *)(bias + ph[i].p_vaddr), ph[i].p_memsz, len) :
			NULL;
		if (id)
			return id;
	}
	return NULL;
}
