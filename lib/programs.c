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
 * - An interpreter running a script (the kernel ran a file that begins
 *   with #!, AT_EXECFN) is not a compiled test program wherever it lies:
 *   a virtualenv's python, a libtool wrapper script's shell.
 * MEMCHECK_PROGRAMS replaces the rule with patterns ('*': every program).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

/* Does path begin with directory dir ("/usr" matches "/usr/x", not
 * "/usrx")? */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Is some directory of path (below its first component) named one of
 * the bin directories? */
static bool in_bin_dir(const char *path)
{
	static const char *const bins[] = { "/bin/", "/sbin/", "/libexec/" };
	for (size_t i = 0; i < MC_ARRAY_SIZE(bins); i++)
		if (strstr(path, bins[i]))
			return true;
	return false;
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
	return under(exe, "/opt") && in_bin_dir(exe);
}

/* Did the kernel start this process to run a script: is the file named
 * to execve (AT_EXECFN) not the executable, and does it begin with #!? */
static bool runs_script(const char *exe)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	if (!fn || strcmp(fn, exe) == 0)
		return false;
	int fd = open(fn, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	char head[2];
	bool script = read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
	close(fd);
	return script;
}

bool mc_program_under_test(const char *exe)
{
	if (mc_opt.programs)
		return mc_program_matches(mc_opt.programs, exe);
	return !mc_program_installed(exe) && !runs_script(exe);
}
