/*
 * execenv.c - memcheck's settings carried across an exec that drops them.
 * A test started by a wrapper that clears the environment (`env -i
 * ./test`, a harness that passes only PATH, a program that builds its
 * helper's environment from nothing) loses LD_PRELOAD and memcheck's
 * MEMCHECK_* variables with it: the exec'd program ran unchecked, its
 * leaks failed nothing, under a plain preload and under memcheck run
 * (whose MEMCHECK_REPORT went too) alike.  valgrind's --trace-children
 * follows such an exec, its execve putting its own preload back into the
 * new environment; so does memcheck (MEMCHECK_FOLLOW_EXEC, on by default):
 * where the environment an exec is given has no LD_PRELOAD naming
 * libmemcheck (by its file name, or the one this copy was loaded from:
 * programs.c's mc_preloads_memcheck, the process verdict's), the
 * process's own first environment's LD_PRELOAD (the allocator behind
 * memcheck with it) goes in front of the new one's, and each of its
 * MEMCHECK_* variables the new environment does not set is added.  The
 * first environment decides, MEMCHECK_FOLLOW_EXEC among it: a program
 * left out (env, a shell) parses no options, and the environment it
 * execs with may have none.  An environment that keeps memcheck's
 * preload is passed on untouched (`env -u MEMCHECK_X` still unsets X),
 * and so is every exec where the first environment did not preload
 * libmemcheck (a program linked with it) or was started by memcheck's
 * valgrind command line
 * (MEMCHECK_VALGRIND: its --trace-children decides there).
 *
 * Traps that shaped it:
 * - The C library's exec functions call its execve inside the library,
 *   where no wrapper sees them (env -i's execvp among them), so each
 *   entry point that takes an environment or is how a wrapper clears it
 *   is wrapped: execve, execv, execvp, execvpe (env, shells, Python's
 *   subprocess), execl, execle, execlp, posix_spawn, posix_spawnp
 *   (Python, GLib, Rust).  Not fexecve nor execveat: each export grows
 *   the dynamic symbol tables in front of the default path's code (11 of
 *   them pushed group 1t 0xac bytes past its block in session 42; the
 *   execl family, system and popen took 0xc0 of its room in session 58),
 *   and these are rare.  system and popen spawn inside the C library
 *   with the environment as it is, which keeps the preload unless the
 *   program removed it: they are wrapped only for valgrind's command
 *   line's padded value (hidden_env_call).
 * - A vfork child shares its parent's memory, and an exec may fail: the
 *   new environment is built in memory of memcheck's own (mapped, never
 *   the program's heap), read from /proc/self/environ (the first
 *   environment, whatever the program did to environ since), and
 *   unmapped where the exec returns; the next definitions are found
 *   without the dynamic linker, which may allocate.
 * - Not on any default path: an exec is rare; the code lies in
 *   lib/text-order.ld's group 7.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define ENVIRON_MAX (4u << 20)

/* The new environment, where one was built: its vector and the first
 * environment's text its strings point into. */
struct carry {
	char *text;
	size_t text_size;
	char **envp;
	size_t envp_size;
};

/* The first environment, NUL-separated strings, into c->text; its
 * length, 0 where it cannot be read whole. */
static size_t first_environ(struct carry *c)
{
	for (size_t size = 64 << 10; size <= ENVIRON_MAX; size *= 4) {
		char *buf = mc_map(size);
		if (!buf)
			return 0;
		int fd = mc_sys_open("/proc/self/environ", O_RDONLY | O_CLOEXEC, 0);
		size_t len = 0;
		long r = 1;
		while (fd >= 0 && len < size - 1 && (r = mc_sys_read(fd, buf + len, size - 1 - len)) > 0)
			len += (size_t)r;
		if (fd >= 0)
			mc_sys_close(fd);
		if (fd < 0 || r < 0) {
			mc_unmap(buf, size);
			return 0;
		}
		if (len < size - 1) {
			buf[len] = 0;
			c->text = buf;
			c->text_size = size;
			return len;
		}
		mc_unmap(buf, size);
	}
	return 0;
}

static void carry_free(struct carry *c)
{
	int e = errno;
	if (c->envp)
		mc_unmap(c->envp, c->envp_size);
	if (c->text)
		mc_unmap(c->text, c->text_size);
	errno = e;
}

/* The program valgrind's command line checks under --trace-children=no
 * execs with the LD_PRELOAD options.c's mc_valgrind_hide left it (the
 * library's entries colons, the value as long as valgrind's): the
 * exec'd program gets the value without them, as valgrind's execve
 * takes its own objects out ("LD_PRELOAD=" where the caller had none,
 * else the caller's; sh -c env showed 106 colons).  envp itself where
 * memory cannot be had. */
static char *const *unpadded(char *const envp[], const char *pre, struct carry *c)
{
	size_t n = 0;
	while (envp[n])
		n++;
	while (*pre == ':')
		pre++;
	size_t len = strlen(pre);
	c->envp_size = (n + 1) * sizeof(char *) + 12 + len;
	if (!(c->envp = mc_map(c->envp_size)))
		return envp;
	char *p = (char *)(c->envp + n + 1);
	memcpy(p, "LD_PRELOAD=", 11);
	memcpy(p + 11, pre, len + 1);
	for (size_t i = 0; i < n; i++)
		c->envp[i] = strncmp(envp[i], "LD_PRELOAD=", 11) ? envp[i] : p;
	c->envp[n] = NULL;
	return c->envp;
}

/* envp with memcheck's settings put back, or envp itself where nothing
 * is to be carried (c then holds nothing). */
static char *const *carried(char *const envp[], struct carry *c)
{
	memset(c, 0, sizeof *c);
	const char *pre = mc_envp_value(envp, "LD_PRELOAD", 0);
	if (pre && mc_preloads_memcheck(pre))
		return envp;
	if (pre && *pre == ':' && mc_valgrind_hidden(pre)) {
		int e = errno;
		char *const *out = unpadded(envp, pre, c);
		errno = e;
		return out;
	}
	int e = errno;
	size_t len = first_environ(c);
	const char *first_pre = NULL;
	size_t carry_n = 0, carry_bytes = 0;
	bool skip = false; /* valgrind's command line, or carrying off */
	for (size_t at = 0; at < len; at += strlen(c->text + at) + 1) {
		const char *s = c->text + at;
		if (!strncmp(s, "LD_PRELOAD=", 11))
			first_pre = s + 11;
		else if (!strncmp(s, "MEMCHECK_VALGRIND=", 18))
			skip = true;
		else if (!strncmp(s, "MEMCHECK_FOLLOW_EXEC=", 21) && !mc_options_bool(s + 21))
			skip = true;
		else if (!strncmp(s, "MEMCHECK_", 9) && strchr(s, '='))
			carry_n++;
	}
	if (!first_pre || !mc_preloads_memcheck(first_pre) || skip) {
		carry_free(c);
		memset(c, 0, sizeof *c);
		errno = e;
		return envp;
	}
	size_t n = 0;
	while (envp && envp[n])
		n++;
	carry_bytes = 12 + strlen(first_pre) + (pre ? 1 + strlen(pre) : 0);
	c->envp_size = (n + carry_n + 2) * sizeof(char *) + carry_bytes;
	c->envp = mc_map(c->envp_size);
	if (!c->envp) {
		carry_free(c);
		memset(c, 0, sizeof *c);
		errno = e;
		return envp;
	}
	char **out = c->envp;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], "LD_PRELOAD=", 11))
			out[k++] = envp[i];
	for (size_t at = 0; at < len; at += strlen(c->text + at) + 1) {
		char *s = c->text + at;
		if (!strncmp(s, "MEMCHECK_", 9) && strchr(s, '=') && !mc_envp_value(envp, s, '='))
			out[k++] = s;
	}
	char *p = (char *)(out + n + carry_n + 2);
	out[k++] = p;
	memcpy(p, "LD_PRELOAD=", 11);
	p += 11;
	size_t first_len = strlen(first_pre);
	memcpy(p, first_pre, first_len + 1);
	if (pre && *pre) {
		p[first_len] = ' ';
		memcpy(p + first_len + 1, pre, strlen(pre) + 1);
	}
	out[k] = NULL;
	errno = e;
	return out;
}

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

static void *next_execve, *next_execvpe, *next_spawn, *next_spawnp;

/* The next definitions of execve and execvpe, found in the parent at
 * its first fork (life.c's fork_prepare, before fork takes the objects'
 * walk lock), not by each child that execs: each child's walk faulted
 * the header pages of every object before the C library's, which fork
 * gives no child (no page tables of files), and its tables' pages
 * (libssh's torture_config: ~7 page faults in each of its 12 fork+exec
 * children; tests/prog/plain_fork_faults exec).  Once a process: a
 * walk of the objects the parent has all present. */
static const char execve_name[] = "execve", execvpe_name[] = "execvpe"; /* text-order.ld */

void mc_exec_prefork(void)
{
	mc_sym_next_cached(execve_name, &next_execve);
	mc_sym_next_cached(execvpe_name, &next_execvpe);
}

/* execve, or execvpe where search (a file looked for in PATH), with envp
 * carried */
static int exec_with(bool search, const char *file, char *const argv[], char *const envp[])
{
	execve_fn *fn = mc_sym_next_cached(search ? execvpe_name : execve_name,
					   search ? &next_execvpe : &next_execve);
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	struct carry c;
	char *const *env = carried(envp, &c);
	/* the address-space limits as the program sees them (rlimits.c),
	 * after carried's mapping, which would move them again */
	bool moved = mc_rlimits_exec();
	int r = fn(file, argv, env);
	if (moved)
		mc_rlimits_exec_failed();
	carry_free(&c);
	return r;
}

MC_API int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_with(false, path, argv, envp);
}

MC_API int execv(const char *path, char *const argv[])
{
	return exec_with(false, path, argv, environ);
}

MC_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_with(true, file, argv, envp);
}

MC_API int execvp(const char *file, char *const argv[])
{
	return exec_with(true, file, argv, environ);
}

/* execl, execle, execlp: their arguments counted, then as execv, execve
 * and execvp (the C library's call its execve inside, where no wrapper
 * sees it).  E2BIG past INT_MAX arguments, as the C library's. */
#define EXEC_LIST(arg, argv, ap, envp_out)                                   \
	size_t n_ = 1;                                                       \
	va_list ap;                                                          \
	va_start(ap, arg);                                                   \
	while (va_arg(ap, char *))                                           \
		if (++n_ >= INT_MAX) {                                       \
			va_end(ap);                                          \
			errno = E2BIG;                                       \
			return -1;                                           \
		}                                                            \
	va_end(ap);                                                          \
	char *argv[n_ + 1];                                                  \
	argv[0] = (char *)(arg);                                             \
	va_start(ap, arg);                                                   \
	for (size_t i_ = 1; i_ <= n_; i_++)                                  \
		argv[i_] = va_arg(ap, char *);                               \
	envp_out;                                                            \
	va_end(ap)

MC_API int execl(const char *path, const char *arg, ...)
{
	EXEC_LIST(arg, argv, ap, (void)0);
	return exec_with(false, path, argv, environ);
}

MC_API int execlp(const char *file, const char *arg, ...)
{
	EXEC_LIST(arg, argv, ap, (void)0);
	return exec_with(true, file, argv, environ);
}

MC_API int execle(const char *path, const char *arg, ...)
{
	char *const *envp;
	EXEC_LIST(arg, argv, ap, envp = va_arg(ap, char *const *));
	return exec_with(false, path, argv, envp);
}

/* system and popen spawn inside the C library with environ as it is:
 * where it holds the LD_PRELOAD value mc_valgrind_hide padded, environ
 * is the vector unpadded builds for the call's length (the program's
 * other threads see the caller's value meanwhile, no colons), then the
 * program's again, unless the program replaced environ meanwhile (then
 * the vector stays mapped: the new one may hold its strings). */
typedef void *spawn_call(const char *, const char *);

static void *hidden_env_call(spawn_call *fn, const char *a, const char *b)
{
	const char *pre = mc_envp_value(environ, "LD_PRELOAD", 0);
	if (!pre || *pre != ':' || !mc_valgrind_hidden(pre))
		return fn(a, b);
	struct carry c;
	memset(&c, 0, sizeof c);
	char **saved = environ;
	int e = errno;
	environ = (char **)unpadded(saved, pre, &c);
	errno = e; /* a failed mapping's: the call's own errno is the program's */
	void *r = fn(a, b);
	if (environ == c.envp) {
		environ = saved;
		carry_free(&c);
	}
	return r;
}

static void *next_system, *next_popen;

static void *system_call(const char *command, const char *unused)
{
	(void)unused;
	int (*fn)(const char *) = mc_sym_next_cached("system", &next_system);
	return (void *)(intptr_t)(fn ? fn(command) : -1);
}

static void *popen_call(const char *command, const char *mode)
{
	FILE *(*fn)(const char *, const char *) = mc_sym_next_cached("popen", &next_popen);
	return fn ? fn(command, mode) : NULL;
}

MC_API int system(const char *command)
{
	return (int)(intptr_t)hidden_env_call(system_call, command, NULL);
}

MC_API FILE *popen(const char *command, const char *mode)
{
	return hidden_env_call(popen_call, command, mode);
}

static int spawn_with(bool search, pid_t *pid, const char *file,
		      const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		      char *const argv[], char *const envp[])
{
	spawn_fn *fn = mc_sym_next_cached(search ? "posix_spawnp" : "posix_spawn",
					  search ? &next_spawnp : &next_spawn);
	if (!fn)
		return ENOSYS;
	struct carry c;
	int r = fn(pid, file, fa, attr, argv, carried(envp, &c));
	carry_free(&c);
	return r;
}

MC_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_with(false, pid, path, fa, attr, argv, envp);
}

MC_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_with(true, pid, file, fa, attr, argv, envp);
}
