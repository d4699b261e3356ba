/*
 * checkname.c - the name of the check test running in this process, so
 * that the process region of a test's forked child carries the test's
 * name rather than "process" (region.c).
 *
 * check (libcheck.github.io) runs each test in a forked child by default,
 * and its START_TEST macro begins every test function with
 * tcase_fn_start(), which sets what tcase_name() returns: in the child, at
 * exit, the test that ran.  Traps that shaped it:
 * - Debian ships check as a static library only: tcase_name() is then in
 *   the program's own symbol table (.symtab), not its dynamic one, and
 *   dlsym cannot find it.  The executable's file is read for it, without
 *   malloc (an mmap of the file, by the system call: memcheck's own,
 *   not the program's mmap that mappings.c wraps), once per process
 *   that asks.
 * - A program may have a function of that name that is not check's: it
 *   counts as check's only beside srunner_run_all, from the same place.
 * - The runner itself may have run tests too (CK_NOFORK): only a forked
 *   child asks, never the process that forked it.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

typedef const char *tcase_name_fn(void);

#if __SIZEOF_POINTER__ == 8
#define NATIVE_CLASS ELFCLASS64
#define SYM_TYPE ELF64_ST_TYPE
#else
#define NATIVE_CLASS ELFCLASS32
#define SYM_TYPE ELF32_ST_TYPE
#endif

/* The load address of the main program. */
static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;
}

/* tcase_name in the executable's own symbol table, beside
 * srunner_run_all; NULL when it has neither, or no symbol table. */
static tcase_name_fn *from_symtab(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *map = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(ElfW(Ehdr)))
		map = mc_sys_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	size_t size = (size_t)st.st_size;
	const unsigned char *file = map;
	const ElfW(Ehdr) *eh = map;
	uintptr_t name_at = 0;
	bool runner = false;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == NATIVE_CLASS &&
	    eh->e_shentsize == sizeof(ElfW(Shdr)) && eh->e_shoff < size &&
	    eh->e_shnum <= (size - eh->e_shoff) / sizeof(ElfW(Shdr))) {
		const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(file + eh->e_shoff);
		for (unsigned i = 0; i < eh->e_shnum; i++) {
			if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
				continue;
			const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
			if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
			    strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
				continue;
			const ElfW(Sym) *sym = (const ElfW(Sym) *)(file + sh[i].sh_offset);
			const char *names = (const char *)file + strs->sh_offset;
			size_t n = sh[i].sh_size / sizeof(ElfW(Sym));
			for (size_t k = 0; k < n; k++) {
				if (SYM_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
				    sym[k].st_name >= strs->sh_size)
					continue;
				const char *nm = names + sym[k].st_name;
				size_t room = strs->sh_size - sym[k].st_name;
				if (strnlen(nm, room) == room)
					continue;
				if (strcmp(nm, "tcase_name") == 0)
					name_at = sym[k].st_value;
				else if (strcmp(nm, "srunner_run_all") == 0)
					runner = true;
			}
		}
	}
	mc_sys_munmap(map, size);
	if (!name_at || !runner)
		return NULL;
	uintptr_t bias = 0;
	mc_walk_objects(first_object, &bias);
	return (tcase_name_fn *)(bias + name_at);
}

const char *mc_check_test_name(void)
{
	static tcase_name_fn *fn;
	static bool looked;
	if (!looked) {
		looked = true;
		/* A shared libcheck: its dynamic symbols.  Mostly absent: the
		 * failed dlsym's message not left for the program's
		 * dlerror(), nor the program's pending one taken (dlstate.c). */
		struct mc_dlerror e;
		mc_dlerror_save(&e);
		tcase_name_fn *dyn = (tcase_name_fn *)dlsym(RTLD_DEFAULT, "tcase_name");
		fn = dyn && dlsym(RTLD_DEFAULT, "srunner_run_all") ? dyn : from_symtab();
		mc_dlerror_restore(&e);
	}
	const char *name = fn ? fn() : NULL;
	return name && *name ? name : NULL;
}
