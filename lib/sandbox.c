/*
 * sandbox.c - a program that takes away its own right to open files
 * (Landlock, seccomp) still gets its end measured.
 *
 * xz 5.6's command line, decompressing or testing, restricts itself
 * with Landlock to no file access at all (src/xz/sandbox.c:
 * landlock_restrict_self through syscall(2), the C library has no
 * wrapper).  At its exit memcheck could then open nothing: not
 * /proc/self/maps, so the scan had no stack, thread or mapping for a
 * root and the dynamic linker's thread block (288 bytes) was
 * "definitely lost"; not the shipped suppressions, nor the report file.
 * Every `xz -t` of xz's own test_files.sh exited 23 and the test
 * failed, where it passes bare.
 *
 * Neither restriction can be had without no_new_privs set first (or
 * CAP_SYS_ADMIN): xz sets it, libseccomp's seccomp_load sets it by
 * default, through prctl(2), whose wrapper here sees PR_SET_NO_NEW_PRIVS
 * and PR_SET_SECCOMP.  Not syscall(2), which landlock_restrict_self and
 * seccomp themselves go through: memcheck's own system calls go through
 * it too, and a wrapper there would be in front of every one of them.
 * When no_new_privs is set, in a process memcheck measures, what the exit will open
 * is opened and kept, above the program's descriptors: the /proc files
 * of the scan and the RSS figures, and the report file; and the
 * suppression files are read.  mc_sys_open then hands out a copy of a
 * kept file for its path, rewound, without asking the kernel (a
 * seccomp filter may kill the process for an open it does not allow).
 * A forked child's kept /proc files are its parent's: it never uses
 * them, and keeps its own if it restricts itself in turn.
 * Landlock checks a file's access when it is opened, not when an open
 * file is read or written, so the copies work under it.  What is not
 * kept: the program's object files, which symbolize frames (records
 * then name their objects but not their functions), the files a
 * failing process writes for its parent (MEMCHECK_ANCESTORS), and any
 * system call a seccomp filter refuses at the exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "symtab.h"

#define NKEPT 64
#define NAMES_BYTES (64 * 1024)

static struct kept {
	const char *path;   /* the /proc names, mc_opt.report, or in names */
	int fd;
	pid_t pid;          /* the process that opened it */
} kept[NKEPT];
static int nkept;
static char *names;         /* the objects' paths, mapped at the first */
static size_t names_used;
static atomic_bool prepared;
static pid_t prepared_by;     /* the process whose files are kept */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void keep(const char *path, int flags)
{
	if (nkept == NKEPT)
		return;
	int fd = mc_sys_open(path, flags, 0644);
	if (fd < 0)
		return;
	int high = mc_dup_high(fd);
	mc_sys_close(fd);
	if (high >= 0)
		kept[nkept++] = (struct kept){ path, high, mc_pid() };
}

static int kept_open(const char *path);

/* path kept under a copy of its name in names (the paths elfmod.c
 * opens, compared there by their text); false where it was not. */
static bool keep_named(const char *path)
{
	size_t len = strlen(path) + 1;
	if (!names && !(names = mc_map(NAMES_BYTES)))
		return false;
	if (len > NAMES_BYTES - names_used)
		return false;
	int before = nkept;
	keep(memcpy(names + names_used, path, len), O_RDONLY | O_CLOEXEC);
	if (nkept == before)
		return false;
	names_used += len;
	return true;
}

/* A loaded object's file, as /proc/self/maps names it (the path elfmod.c
 * opens to read its symbol tables, which name the frames suppressions
 * match), once: its first mapping.  With it the debug file of its build
 * ID where installed (libc6-dbg: the C library's and the dynamic
 * linker's static functions, allocate_dtv among them, which shipped
 * suppressions name). */
static bool keep_object(const struct mc_mapping *m, void *arg)
{
	(void)arg;
	if (m->anonymous || m->name[0] != '/' || nkept == NKEPT)
		return nkept < NKEPT;
	for (int i = 0; i < nkept; i++)
		if (!strcmp(kept[i].path, m->name))
			return true;
	char debug[MC_DEBUG_PATH_MAX];
	if (keep_named(m->name) && mc_elfmod_debug_path_at(m->lo, debug))
		keep_named(debug);
	return true;
}

/* Before a restriction may come: once, and only where the exit has work. */
static void prepare(void)
{
	pid_t me = mc_pid();
	/* not before start-up has read the options (a library's
	 * constructor), nor in a process left out or past its end */
	if (atomic_load_explicit(&mc_state, memory_order_acquire) != MC_READY ||
	    atomic_load_explicit(&mc_pass, memory_order_acquire) ||
	    (atomic_load_explicit(&prepared, memory_order_acquire) && prepared_by == me))
		return;
	int saved = errno;
	pthread_mutex_lock(&lock);
	if (atomic_load_explicit(&prepared, memory_order_relaxed) && prepared_by != me) {
		/* a forked child restricting itself: its parent's files
		 * out, its own kept */
		atomic_store_explicit(&prepared, false, memory_order_release);
		for (int i = 0; i < nkept; i++)
			mc_sys_close(kept[i].fd);
		nkept = 0;
		names_used = 0;
	}
	if (!atomic_load_explicit(&prepared, memory_order_relaxed)) {
		prepared_by = me;
		static const char *const proc[] = { "/proc/self/maps", "/proc/self/statm",
						    "/proc/self/status", "/proc/self/pagemap" };
		for (size_t i = 0; i < MC_ARRAY_SIZE(proc); i++)
			keep(proc[i], O_RDONLY | O_CLOEXEC);
		if (mc_opt.report)
			keep(mc_opt.report, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
						    O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
		/* read now: the files, or the cache of their parse */
		mc_suppress_pools_any();
		mc_maps_each(keep_object, NULL);
		atomic_store_explicit(&prepared, true, memory_order_release);
		mc_open_hook_set(kept_open);
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
}

/* mc_sys_open's hook: a copy of the file kept for path, at its start;
 * -1 if none. */
static int kept_open(const char *path)
{
	if (!atomic_load_explicit(&prepared, memory_order_acquire))
		return -1;
	pid_t me = mc_pid();
	for (int i = 0; i < nkept; i++) {
		if (kept[i].pid != me || strcmp(kept[i].path, path) != 0)
			continue;
		int fd = mc_sys_fcntl(kept[i].fd, F_DUPFD_CLOEXEC, 0);
		/* a copy shares the offset: from the start, as an open's */
		if (fd >= 0)
			syscall(SYS_lseek, fd, 0L, SEEK_SET);
		return fd;
	}
	return -1;
}

MC_API int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long),
		      c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP || (option == PR_SET_NO_NEW_PRIVS && a))
		prepare();
	static void *real;
	int (*fn)(int, ...) = mc_sym_next_cached("prctl", &real);
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(option, a, b, c, d);
}
