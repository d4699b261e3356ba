/*
 * patch_libc.c - a preloaded shim (libpatch_libc.so, before memcheck in
 * LD_PRELOAD, so initialized after it) whose constructor writes a page
 * of the C library's code in place, as a library that patches code at
 * its start does (or a debugger's breakpoint): the page of
 * __register_atfork, one of those memcheck's start-up faults in and
 * gives back under glibc (startpages.c).  It writes the byte that is
 * there (mprotect to write, the same value, mprotect back): the code is
 * unchanged and the page is the process's own copy now, anonymous.
 * The page's address: patch_libc_page (0: nothing written).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT uintptr_t patch_libc_page;

__attribute__((constructor)) static void patch_libc(void)
{
	volatile unsigned char *f = dlsym(RTLD_DEFAULT, "__register_atfork");
	if (!f)
		return;
	uintptr_t page = (uintptr_t)f & ~(uintptr_t)4095;
	if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return;
	f[0] = f[0];
	mprotect((void *)page, 4096, PROT_READ | PROT_EXEC);
	patch_libc_page = page;
}
