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

/* Does this loaded object name libmemcheck among the libraries it needs? */
static int needs_memcheck(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name && mc_str_has(info->dlpi_name, "libmemcheck"))
		return 0; /* memcheck itself */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		uintptr_t strtab = 0;
		for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
			if (e->d_tag == DT_STRTAB)
				strtab = e->d_un.d_ptr;
		if (!strtab)
			return 0;
		/* the dynamic linker has made it absolute, but where the
		 * section is read-only (the vDSO) */
		if (strtab < info->dlpi_addr)
			strtab += info->dlpi_addr;
		for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
			if (e->d_tag == DT_NEEDED &&
			    mc_str_has((const char *)strtab + e->d_un.d_val, "libmemcheck"))
				return 1;
	}
	return 0;
}

bool mc_linked_in(void)
{
	const char *name = NULL;
	if (mc_object_base((const void *)mc_linked_in, &name) && name && !name[0])
		return true; /* in the program itself: libmemcheck.a */
	return mc_walk_objects(needs_memcheck, NULL) != 0;
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
	if (child)
		pthread_rwlock_init(&walk_lock, NULL);
	else
		pthread_rwlock_unlock(&walk_lock);
}

/* The load address of the object that contains addr, as dladdr's
 * dli_fbase, or NULL.  dladdr also looks for the nearest symbol, a walk
 * of the object's whole dynamic symbol table (~10 us for the C
 * library's, a dozen times at start-up); glibc's _dl_find_object (2.35)
 * finds the object alone.  If the link map's name is wanted, *name gets
 * it ("" for the main program, where dladdr gives argv[0]). */

const void *mc_object_base(const void *addr, const char **name)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	if (_dl_find_object((void *)addr, &fo) == 0 && fo.dlfo_link_map) {
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
