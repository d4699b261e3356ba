/* textspan: one section header ".text" over all of libmemcheck.so's code.
 *
 * lib/text-order.ld lays the code out in output sections of their own
 * (.text.mc_first, .rodata.mc_first, .text.mc_soon, .rodata.mc_then,
 * .text.mc_then, .text.mc_last, then .text): the read-only data between
 * the groups must be output sections of their own, since the linker
 * merges equal strings within an output section, and one output section
 * holding them all would move strings (and every address after them).
 * But valgrind's debuginfo reader (coregrind/m_debuginfo/readelf.c)
 * takes the one section named ".text" as the object's code: a second
 * ".text" makes it drop the object's debug information, and an address
 * outside that section's range has no object (VG_(find_DebugInfo),
 * VG_(get_objname)) and no file or line (search_all_loctabs) in any of
 * valgrind's tools, only a symbol's name (its symbol search takes the
 * whole executable mapping).  So callgrind named most of libmemcheck
 * "???:rule_in [???]".
 *
 * The linked library is left as the linker made it but for its section
 * headers: the run from .text.mc_first to .text becomes one ".text"
 * header over the same bytes (read-only data between the groups lies in
 * it, as it lies in the one executable segment), the headers after it
 * renumbered, and the symbols' section indices (.symtab, .dynsym) with
 * them.  Not an address, not a byte of code or data moves: every byte
 * before the section header table is copied, and the table still ends
 * the file.  A library without .text.mc_first is copied unchanged.
 *
 * Usage: textspan LINKED OUT  (GNUmakefile; the static checks read
 * LINKED, whose sections name the groups). */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int fail(const char *what)
{
	fprintf(stderr, "textspan: %s\n", what);
	return 1;
}

/* a section index after the run first..last is folded into first */
static size_t first, gone;

static size_t remap(size_t i)
{
	if (i <= first)
		return i;
	return i <= first + gone ? first : i - gone;
}

static int fold(unsigned char *image, size_t size)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
	if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr))
		return fail("not a 64-bit ELF file");
	size_t n = eh->e_shnum;
	if (eh->e_shoff > size || n > (size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shoff + n * sizeof(Elf64_Shdr) != size || eh->e_shstrndx >= n)
		return fail("the section header table does not end the file");
	Elf64_Shdr *sh = (Elf64_Shdr *)(image + eh->e_shoff);
	const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
	if (strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
		return fail("bad section name table");
	const char *names = (const char *)image + strs->sh_offset;
	size_t last = 0;
	first = 0;
	for (size_t i = 1; i < n; i++) {
		if (sh[i].sh_name >= strs->sh_size)
			return fail("bad section name");
		if (strcmp(names + sh[i].sh_name, ".text.mc_first") == 0)
			first = i;
		else if (strcmp(names + sh[i].sh_name, ".text") == 0)
			last = i;
		else if (sh[i].sh_type == SHT_SYMTAB_SHNDX)
			return fail("extended section indices");
	}
	if (first == 0)
		return 0;
	if (last <= first)
		return fail(".text does not follow .text.mc_first");
	Elf64_Xword align = 1;
	for (size_t i = first; i <= last; i++) {
		if (sh[i].sh_type != SHT_PROGBITS || !(sh[i].sh_flags & SHF_ALLOC) ||
		    (sh[i].sh_flags & SHF_WRITE) ||
		    sh[i].sh_addr - sh[i].sh_offset != sh[first].sh_addr - sh[first].sh_offset ||
		    (i > first && sh[i].sh_addr < sh[i - 1].sh_addr + sh[i - 1].sh_size))
			return fail("the sections from .text.mc_first to .text are not one read-only run");
		if (sh[i].sh_addralign > align)
			align = sh[i].sh_addralign;
	}
	Elf64_Shdr text = sh[first];
	text.sh_name = sh[last].sh_name;
	text.sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	text.sh_size = sh[last].sh_addr + sh[last].sh_size - sh[first].sh_addr;
	text.sh_addralign = align;
	sh[first] = text;
	gone = last - first;
	memmove(&sh[first + 1], &sh[last + 1], (n - last - 1) * sizeof *sh);
	n -= gone;
	eh->e_shnum = (Elf64_Half)n;
	eh->e_shstrndx = (Elf64_Half)remap(eh->e_shstrndx);
	for (size_t i = 1; i < n; i++) {
		sh[i].sh_link = (Elf64_Word)remap(sh[i].sh_link);
		if (sh[i].sh_type == SHT_REL || sh[i].sh_type == SHT_RELA ||
		    (sh[i].sh_flags & SHF_INFO_LINK))
			sh[i].sh_info = (Elf64_Word)remap(sh[i].sh_info);
		if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)
			return fail("bad symbol table");
		Elf64_Sym *sym = (Elf64_Sym *)(image + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
			if (sym[k].st_shndx != SHN_UNDEF && sym[k].st_shndx < SHN_LORESERVE)
				sym[k].st_shndx = (Elf64_Section)remap(sym[k].st_shndx);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return fail("usage: textspan LINKED OUT");
	FILE *in = fopen(argv[1], "rb");
	struct stat st;
	if (in == NULL || fstat(fileno(in), &st) != 0 || fseek(in, 0, SEEK_END) != 0)
		return fail("cannot read the linked library");
	long size = ftell(in);
	unsigned char *image = size > 0 ? malloc((size_t)size) : NULL;
	if (image == NULL || fseek(in, 0, SEEK_SET) != 0 ||
	    fread(image, 1, (size_t)size, in) != (size_t)size)
		return fail("cannot read the linked library");
	fclose(in);
	if (fold(image, (size_t)size) != 0) {
		free(image);
		return 1;
	}
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	size_t out_size = eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr);
	FILE *out = fopen(argv[2], "wb");
	/* the linker's mode (0755 under the usual umask) */
	if (out == NULL || fchmod(fileno(out), st.st_mode & 07777) != 0 ||
	    fwrite(image, 1, out_size, out) != out_size || fclose(out) != 0) {
		remove(argv[2]);
		free(image);
		return fail("cannot write the library");
	}
	free(image);
	return 0;
}
