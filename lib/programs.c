/*
 * programs.c - which programs get the process region.  A test driver run
 * under the preload (ctest, make check, meson, a libtool wrapper script)
 * starts shells, interpreters and tools (sed, grep, expr, python) beside
 * the programs under test; their exit-time leftovers are theirs, not the
 * project's, and with MEMCHECK_EXITCODE they would fail the test that
 * ran them.  The default measures the programs under test only.
 *
 * How the default tells them apart, from what a process knows of itself
 * at start-up (no configuration, a few microseconds):
 * - A program installed on the system lies in the system's directories
 *   (/usr, /bin, /lib..., bin directories under /opt, /nix/store); a
 *   project's test programs lie in its build tree.  /usr/src and
 *   /usr/local/src are build trees (Docker images build there).
 * - A program installed elsewhere lies in the bin directory of a prefix
 *   laid out as one: lib, include and share beside bin (pyenv's and
 *   conda's pythons, Homebrew's, nvm's node, a CI tool cache).  A build
 *   tree has no include and share beside the directory its programs
 *   are in.  (libcork's ctest runs a pyenv python that leaks at exit.)
 * - An interpreter running a script (the kernel ran a file that begins
 *   with #!, AT_EXECFN) is not a compiled test program wherever it lies:
 *   a virtualenv's python, a libtool wrapper script's shell.
 * MEMCHECK_PROGRAMS replaces the rule with patterns ('*': every program).
 *
 * The verdict (mc_process_verdict) is reached at start-up before any of
 * memcheck's tables exist, from the options and the executable's path
 * alone: a program left out then sets nothing up at all (life.c), and
 * a test driver's shells and tools pay only for loading the library.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define ON_VALGRIND RUNNING_ON_VALGRIND
#else
#define ON_VALGRIND 0
#endif

#include "internal.h"

/* The verdict is reached before memcheck's start-up window opens
 * (footprint.c): a block of the C library's code that only memcheck
 * touches here lands in the program's own RSS.  strstr's and strcspn's
 * were two such (112 KiB of a small program's peak under mimalloc, the
 * kernel's fault-around mapping 16 pages around each), so the string
 * work below is memcheck's own small loops. */

/* Does path begin with directory dir ("/usr" matches "/usr/x", not
 * "/usrx")? */
static bool under(const char *path, const char *dir)
{
	const char *rest = mc_str_after(path, dir);
	return rest && *rest == '/';
}

/* Is some directory of path (below its first component) named one of
 * the bin directories? */
static bool in_bin_dir(const char *path)
{
	static const char *const bins[] = { "/bin/", "/sbin/", "/libexec/" };
	for (size_t i = 0; i < MC_ARRAY_SIZE(bins); i++)
		if (mc_str_has(path, bins[i]))
			return true;
	return false;
}

/* Is exe in a bin, sbin or libexec directory whose parent has lib,
 * include and share too: an installed prefix? */
static bool in_prefix_layout(const char *exe)
{
	const char *slash = mc_last_slash(exe);
	if (!slash || slash == exe)
		return false;
	const char *dir = slash;
	while (dir > exe && dir[-1] != '/')
		dir--;
	size_t dlen = (size_t)(slash - dir);
	if (!((dlen == 3 && mc_mem_eq(dir, "bin", 3)) || (dlen == 4 && mc_mem_eq(dir, "sbin", 4)) ||
	      (dlen == 7 && mc_mem_eq(dir, "libexec", 7))))
		return false;
	char path[4096];
	size_t plen = (size_t)(dir - exe);
	static const char *const beside[] = { "lib", "include", "share" };
	for (size_t i = 0; i < MC_ARRAY_SIZE(beside); i++) {
		if (plen + strlen(beside[i]) + 1 > sizeof path)
			return false;
		memcpy(path, exe, plen);
		strcpy(path + plen, beside[i]);
		if (access(path, F_OK) != 0)
			return false;
	}
	return true;
}

bool mc_program_installed(const char *exe)
{
	static const char *const system[] = {
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/snap", "/nix/store", "/gnu/store",
	};
	if (under(exe, "/usr/src") || under(exe, "/usr/local/src"))
		return false;
	for (size_t i = 0; i < MC_ARRAY_SIZE(system); i++)
		if (under(exe, system[i]))
			return true;
	return (under(exe, "/opt") && in_bin_dir(exe)) || in_prefix_layout(exe);
}

/* Has path (relative, or past its first '/') no empty, "." or ".."
 * component? */
__attribute__((noinline)) static bool plain_components(const char *c)
{
	while (*c) {
		size_t len = 0;
		while (c[len] && c[len] != '/')
			len++;
		if (len == 0 || (c[0] == '.' && (len == 1 || (len == 2 && c[1] == '.'))))
			return false;
		c += len;
		if (*c)
			c++;
	}
	return true;
}

/* Is fn, a path relative to the working directory with no ".", ".."
 * or empty component, the path exe (the executable's, which the kernel
 * gives with every symbolic link resolved)?  Then the working
 * directory's path and fn make exe, as the kernel's own (getcwd(2),
 * also resolved) says: the file execve was named is the executable.
 * A test run as build/t/x asked that of the file itself, opened and its
 * first two bytes read (three system calls, where this is one).  False
 * where it cannot tell (a link on the way, a path too long): the
 * caller then reads the file. */
static bool relative_names_exe(const char *fn, const char *exe)
{
	while (fn[0] == '.' && fn[1] == '/')
		for (fn++; *fn == '/'; fn++)
			;
	size_t n = strlen(fn), e = strlen(exe);
	if (!n || n >= e || exe[e - n - 1] != '/' || strcmp(exe + e - n, fn) != 0 ||
	    !plain_components(fn))
		return false;
	/* The system call, not the C library's getcwd, whose answer to a
	 * path too long for the buffer opens directories (and mallocs). */
	char cwd[4096];
	long len = syscall(SYS_getcwd, cwd, sizeof cwd);
	if (len <= 1 || cwd[0] != '/')
		return false; /* unreachable ("(unreachable)/..."), or failed */
	size_t c = strlen(cwd);
	if (c == 1) /* "/" */
		return e - n == 1;
	return c == e - n - 1 && mc_mem_eq(cwd, exe, c);
}

/* Did the kernel start this process to run a script: is the file named
 * to execve (AT_EXECFN) not the executable, and does it begin with #!? */
static bool runs_script(const char *exe)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	if (!fn || strcmp(fn, exe) == 0)
		return false;
	if (fn[0] != '/' && relative_names_exe(fn, exe))
		return false;
	int fd = open(fn, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	char head[2];
	bool script = read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
	close(fd);
	return script;
}

/* Is the file rel names relative to the working directory, whose path
 * getcwd gives with its links resolved, installed?  -1 where the path
 * is too long for readlink's buffer in exe_verdict, which the caller
 * then reads.  A frame of its own: the 4 KiB buffer lies on the stack
 * only for a relative name (a page deeper than a process touches bare
 * was a page fault). */
__attribute__((noinline)) static int relative_installed(const char *rel, size_t rlen)
{
	char path[4096];
	long c = syscall(SYS_getcwd, path, sizeof path);
	if (c <= 1 || path[0] != '/')
		return -1;
	size_t len = strlen(path);
	if (len == 1)
		len = 0; /* "/" */
	if (len + 1 + rlen >= 4095)
		return -1;
	path[len] = '/';
	memcpy(path + len + 1, rel, rlen + 1);
	return mc_program_installed(path);
}

/* Is no directory on the walk of path (len bytes, no empty, "." or ".."
 * component) a symbolic link?  Each directory is asked with newfstatat
 * not following a link at its end, the system call the dynamic linker
 * made for every library it loaded into this process, where openat2's
 * RESOLVE_NO_SYMLINKS asked the kernel in one call.  A filter inherited
 * through the execve that started the process (systemd's
 * SystemCallFilter=, bubblewrap, firejail, minijail, a container
 * runtime's profile) is the kernel's alone: memcheck never saw it
 * installed (seccomp.c asks the ones the program installs) and cannot
 * read it, and one that kills or traps a call it does not list kills the
 * process there.  openat2 (Linux 5.6) is one such: libseccomp before 2.5
 * cannot even list it, and a left-out `echo` under such a filter died at
 * start-up under memcheck where it runs bare.  A newfstatat costs ~1.1
 * us here (CPU time, five of depths 1-5 in a loop), so the directories
 * of an absolute path that lie within the working directory are not
 * asked: getcwd gives its path with every link resolved (a test driver
 * runs its tests in or below it: a test in ./tests from the build tree,
 * one getcwd and one newfstatat of "tests", where the walk from / made
 * one for each directory).  False where it cannot tell (a path longer
 * than the buffer): the caller reads /proc.  Os: 318 bytes of group 0's
 * code (lib/text-order.ld), where O2 made 355 without the short-path
 * test: group 1t's room. */
__attribute__((noinline, optimize("Os"))) static bool no_link_on_walk(const char *path, size_t len)
{
	char dir[512];
	if (len >= sizeof dir)
		return false;
	size_t from = 1, c = 0, dirs = 0;
	for (size_t i = 1; i < len; i++)
		dirs += path[i] == '/';
	/* /usr/bin/x: two newfstatat, no getcwd */
	if (path[0] == '/' && dirs > 2 && syscall(SYS_getcwd, dir, sizeof dir) > 1) {
		while (dir[c] && dir[c] == path[c])
			c++;
		if (!dir[c] && path[c] == '/') /* "/" stops at 1: path[1] is no '/' */
			from = c + 1;
	}
	memcpy(dir, path, len + 1);
	const char *name = from > 1 ? dir + from : dir; /* within it: relative */
	for (size_t i = from; i < len; i++) {
		if (dir[i] != '/')
			continue;
		struct stat st;
		dir[i] = 0;
		long r = syscall(SYS_newfstatat, AT_FDCWD, name, &st, AT_SYMLINK_NOFOLLOW);
		dir[i] = '/';
		if (r != 0 || S_ISLNK(st.st_mode))
			return false;
	}
	return true;
}

/* The default rule's verdict from the file the kernel was asked to run
 * (AT_EXECFN), without /proc: a process's first look into /proc costs
 * the kernel its /proc/PID entries (readlink of /proc/self/exe 11-13 us
 * in a fresh process here, against 4.5-5 us for an openat2, a read and
 * the close of a file the kernel has just read; a newfstatat more for
 * each directory on the path).  -1 where it cannot
 * show that the answer is the one the executable's path gives; the
 * caller then reads /proc/self/exe.  The path is the executable's where
 * - the path named (made absolute with the working directory) has no
 *   empty, "." or ".." component and the walk crosses no symbolic link
 *   (no_link_on_walk, then O_NOFOLLOW: /bin/sh on a merged /usr is a
 *   link, and falls back), as the kernel's path of the executable
 *   resolves them all;
 * - the file is an ELF whose program headers are the running
 *   program's (AT_PHDR), and the kernel mapped an interpreter (AT_BASE):
 *   `ld.so ./t` gives AT_EXECFN and AT_PHDR the program's, while
 *   /proc/self/exe is ld.so.
 * The executable renamed or removed since the exec (/proc's path then
 * ends in " (deleted)") gives the default rule the same verdict: its
 * directories are the path's, and runs_script reads this same file.  A
 * file that begins with #! is a script whatever the executable, as
 * runs_script finds.  Not under valgrind, where the verdict stays
 * /proc/self/exe's, as it was while this asked openat2 (which 3.19 does
 * not know; the walk below has not been tried there).  System calls:
 * only those the dynamic linker made to load the process (newfstatat,
 * openat, read, close) and getcwd, the fallback's own. */
__attribute__((noinline)) static int execfn_verdict(void)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	if (!fn || !getauxval(AT_BASE) || ON_VALGRIND)
		return -1;
	const char *rel = fn + 1;
	if (fn[0] != '/')
		for (rel = fn; rel[0] == '.' && rel[1] == '/';)
			for (rel++; *rel == '/'; rel++)
				;
	size_t rlen = strlen(rel);
	if (!rlen || rlen >= 4094 || !plain_components(rel))
		return -1;
	bool abs = fn[0] == '/';
	if (!no_link_on_walk(abs ? fn : rel, abs ? rlen + 1 : rlen))
		return -1;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, fn,
			      O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	union {
		ElfW(Ehdr) eh;
		uintptr_t w[128];
	} head;
	/* syscall (mc_sc_syscall), whose code lies with this: read's and
	 * close's lie with the exit's (lib/text-order.ld), a 64 KiB block
	 * of the file a left-out process faulted in for them */
	ssize_t got = syscall(SYS_read, fd, head.w, sizeof head.w);
	syscall(SYS_close, fd);
	const unsigned char *id = head.eh.e_ident;
	if (got >= 2 && id[0] == '#' && id[1] == '!')
		return MC_PROCESS_LEFT_OUT;
	size_t phnum = getauxval(AT_PHNUM), off = head.eh.e_phoff;
	const uintptr_t *phdr = (const uintptr_t *)getauxval(AT_PHDR);
	size_t words = phnum * sizeof(ElfW(Phdr)) / sizeof(uintptr_t);
	if (got < (ssize_t)sizeof head.eh || id[0] != ELFMAG0 || id[1] != ELFMAG1 ||
	    id[2] != ELFMAG2 || id[3] != ELFMAG3 || head.eh.e_phentsize != sizeof(ElfW(Phdr)) ||
	    head.eh.e_phnum != phnum || !phdr || off % sizeof(uintptr_t) ||
	    off / sizeof(uintptr_t) + words > (size_t)got / sizeof(uintptr_t) ||
	    !mc_words_eq(head.w + off / sizeof(uintptr_t), phdr, words))
		return -1;
	int installed = abs ? mc_program_installed(fn) : relative_installed(rel, rlen);
	if (installed < 0)
		return -1;
	return installed ? MC_PROCESS_LEFT_OUT : MC_PROCESS_MEASURED;
}

/* The verdict from /proc/self/exe, the executable's path with every link
 * resolved; a frame of its own, on the stack only where read. */
__attribute__((noinline)) static int exe_verdict(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return MC_PROCESS_NO_EXE;
	exe[n] = 0;
	return mc_program_under_test(exe) ? MC_PROCESS_MEASURED : MC_PROCESS_LEFT_OUT;
}

bool mc_program_under_test(const char *exe)
{
	if (mc_opt.programs)
		return mc_program_matches(mc_opt.programs, exe);
	return !mc_program_installed(exe) && !runs_script(exe);
}

/* Is some word of LD_PRELOAD's value pre (split at spaces and colons, as
 * the dynamic linker splits it: ld.so(8)) a file whose base name is name,
 * or begins with it where prefix? */
static bool preload_word(const char *pre, const char *name, bool prefix)
{
	for (const char *p = pre; *p;) {
		const char *b = p;
		for (; *p && *p != ' ' && *p != ':'; p++)
			if (*p == '/')
				b = p + 1;
		const char *q = name;
		while (b < p && *q && *b == *q)
			b++, q++;
		if (!*q && q != name && (prefix || b == p))
			return true;
		if (*p)
			p++;
	}
	return false;
}

/* Is this object, libmemcheck, among LD_PRELOAD's entries (pre, its
 * value)?  As installed and as `memcheck run` sets it, its file's name
 * begins with "libmemcheck"; a copy preloaded under another file name
 * (a CI that ships it as lib-main.so) is found by the base name of the
 * file the dynamic linker loaded it from.  Before, such a copy measured
 * nothing: no report, a leaking program exited 0, without a word.  The
 * process verdict asks it at start-up, execenv.c at an exec (does the
 * new environment still preload memcheck, did the first one).  Loops of
 * its own: no import the common case does not need (-z lazy binds each
 * at its first call). */
bool mc_preloads_memcheck(const char *pre)
{
	if (preload_word(pre, "libmemcheck", true))
		return true;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	if (_dl_find_object((void *)mc_preloads_memcheck, &fo) != 0 || !fo.dlfo_link_map)
		return false;
	const char *name = fo.dlfo_link_map->l_name;
	if (!name || !*name)
		return false; /* the main program: linked in, not preloaded */
	const char *slash = mc_last_slash(name);
	return preload_word(pre, slash ? slash + 1 : name, false);
#else
	return false;
#endif
}

int mc_process_verdict(void)
{
	bool on = mc_opt.process_region == MC_ON;
	if (mc_opt.process_region == MC_AUTO) {
		const char *pre = mc_env_value("LD_PRELOAD");
		on = pre && mc_preloads_memcheck(pre);
	}
	if (!on)
		return MC_PROCESS_NONE;
	/* MEMCHECK_PROGRAMS='*' needs no path: /proc/self/exe, the
	 * process's first look into /proc, was 13 us of its start-up. */
	if (mc_opt.programs && mc_programs_every(mc_opt.programs))
		return MC_PROCESS_MEASURED;
	int v = mc_opt.programs ? -1 : execfn_verdict();
	return v >= 0 ? v : exe_verdict();
}
