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
 * and PR_SET_SECCOMP.  syscall(2), which landlock_restrict_self and
 * seccomp themselves go through, is memcheck's too (below): it copies a
 * seccomp filter installed through it; memcheck's own system calls
 * are not made through it (seccomp.c's mc_sc_syscall).
 * When no_new_privs is set, in a process memcheck measures, what the exit will open
 * is opened and kept, above the program's descriptors: the /proc files
 * of the scan and the RSS figures, and the report file; and the
 * suppression files are read, and the budget and baseline (gate.c,
 * with the process region's rank: its count file).  mc_sys_open then hands out a copy of a
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
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "symtab.h"

/* each one registered with textout.c (mc_fd_kept_add), whose table
 * holds MC_FD_KEPT_MAX */
#define NKEPT MC_FD_KEPT_MAX
#define NAMES_BYTES (64 * 1024)

static struct kept {
	const char *path;   /* the /proc names, mc_opt.report, or in names */
	struct mc_kept_fd file; /* passed over by the program's closes
				 * (textout.c's mc_fd_kept_add) */
	pid_t pid;          /* the process that opened it */
} kept[NKEPT];
static int nkept;
static char *names;         /* the objects' paths, mapped at the first */
static size_t names_used;
static atomic_bool prepared;
static pid_t prepared_by;     /* the process whose files are kept */
/* No fork handler takes it: a forked child takes it over (mc_plock_take)
 * from a thread of its parent's that was keeping the files at the fork,
 * where a mutex hung the child's own prctl (tests/test_forkheld.c), and
 * puts back what that thread had kept (prepare). */
static _Atomic pid_t lock;

static void keep(const char *path, int flags)
{
	if (nkept == NKEPT)
		return;
	int fd = mc_sys_open(path, flags, 0644);
	if (fd < 0)
		return;
	int high = mc_dup_high(fd);
	mc_sys_close(fd);
	struct stat st;
	if (high < 0)
		return;
	if (mc_sys_fstat(high, &st) != 0) {
		mc_sys_close(high);
		return;
	}
	kept[nkept] = (struct kept){ path, { high, st.st_dev, st.st_ino, false }, mc_pid() };
	mc_fd_kept_add(&kept[nkept++].file);
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

/* How the report file is kept: as the exit's open would open it, never
 * through a symlink, never waiting for a FIFO's reader. */
#define REPORT_FLAGS (O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW)

/* Whether the process has its files kept (prepare), or its report file
 * alone (mc_sandbox_keep_report), and which process kept it. */
static bool in_force(pid_t me)
{
	return atomic_load_explicit(&prepared, memory_order_acquire) && prepared_by == me;
}
static atomic_bool report_kept;
static pid_t report_kept_by;

/* Before a restriction may come: once, and only where the exit has work. */
static void prepare(void)
{
	pid_t me = mc_pid();
	/* not before start-up has read the options (a library's
	 * constructor), nor in a process left out or past its end */
	if (atomic_load_explicit(&mc_state, memory_order_acquire) != MC_READY ||
	    atomic_load_explicit(&mc_pass, memory_order_acquire) ||
	    in_force(me))
		return;
	int saved = errno;
	mc_plock_take(&lock);
	if ((atomic_load_explicit(&prepared, memory_order_relaxed) || nkept) && prepared_by != me) {
		/* a forked child restricting itself: its parent's files
		 * out, its own kept (some only, where the parent's thread
		 * was keeping them at the fork) */
		atomic_store_explicit(&prepared, false, memory_order_release);
		for (int i = 0; i < nkept; i++) {
			mc_fd_kept_forget(&kept[i].file);
			mc_sys_close(kept[i].file.fd);
		}
		nkept = 0;
		names_used = 0;
	}
	if (!atomic_load_explicit(&prepared, memory_order_relaxed)) {
		prepared_by = me;
		static const char *const proc[] = { "/proc/self/maps", "/proc/self/statm",
						    "/proc/self/status", "/proc/self/pagemap" };
		for (size_t i = 0; i < MC_ARRAY_SIZE(proc); i++)
			keep(proc[i], O_RDONLY | O_CLOEXEC);
		if (mc_opt.report) {
			keep(mc_opt.report, REPORT_FLAGS);
			/* what the arguments' files hold, for the records'
			 * key (progname.c), while they may be opened */
			mc_args_files_note();
		}
		/* the copy of standard error while F_DUPFD is allowed */
		mc_text_keep_stderr();
		/* read now: the files, or the cache of their parse */
		mc_suppress_pools_any();
		/* the budget and baseline files (gate.c) */
		mc_gate_prepare();
		mc_maps_each(keep_object, NULL);
		atomic_store_explicit(&prepared, true, memory_order_release);
		mc_open_hook_set(kept_open);
	}
	mc_plock_give(&lock);
	errno = saved;
}

/* mc_sys_open's hook: a copy of the file kept for path, at its start;
 * -1 if none. */
static int kept_open(const char *path)
{
	if (!atomic_load_explicit(&prepared, memory_order_acquire) &&
	    !atomic_load_explicit(&report_kept, memory_order_acquire))
		return -1;
	pid_t me = mc_pid();
	for (int i = 0; i < nkept; i++) {
		if (kept[i].pid != me || strcmp(kept[i].path, path) != 0)
			continue;
		int fd = mc_sys_fcntl(kept[i].file.fd, F_DUPFD_CLOEXEC, 0);
		/* a copy shares the offset: from the start, as an open's */
		if (fd >= 0)
			syscall(SYS_lseek, fd, 0L, SEEK_SET);
		return fd;
	}
	return -1;
}

/* A process with root's effective id about to change its ids (creds.c:
 * setuid, seteuid, setresuid... to a user who may not write where
 * MEMCHECK_REPORT names): the report file opened now and kept, as
 * prepare keeps it, which the exit's open then gets (kept_open).  A
 * test run as root whose program drops to nobody had its records lost
 * ("cannot open MEMCHECK_REPORT=...: Permission denied") where the
 * report's directory was root's alone.  Only the report: the /proc
 * files stay the process's own to read, and the suppression, budget and
 * baseline files are read as the user the program became, as the
 * program would read them. */
void mc_sandbox_keep_report(void)
{
	pid_t me = mc_pid();
	if (!mc_opt.report || atomic_load_explicit(&mc_state, memory_order_acquire) != MC_READY ||
	    atomic_load_explicit(&mc_pass, memory_order_acquire) || in_force(me) ||
	    (atomic_load_explicit(&report_kept, memory_order_acquire) && report_kept_by == me))
		return;
	int saved = errno;
	mc_plock_take(&lock);
	if (!atomic_load_explicit(&report_kept, memory_order_relaxed) || report_kept_by != me) {
		int before = nkept;
		keep(mc_opt.report, REPORT_FLAGS);
		if (nkept > before) {
			report_kept_by = me;
			atomic_store_explicit(&report_kept, true, memory_order_release);
			mc_open_hook_set(kept_open);
		}
	}
	mc_plock_give(&lock);
	errno = saved;
}

struct filter_copy {
	struct sock_filter *insn;
	size_t bytes;
	unsigned short len;
	void *spare;
	size_t spare_bytes;
};
static struct filter_copy filter_copy(const struct sock_fprog *prog);
static void filter_installed(struct filter_copy *f, bool ok);

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
	if (option != PR_SET_SECCOMP || a != SECCOMP_MODE_FILTER)
		return fn(option, a, b, c, d);
	struct filter_copy f = filter_copy((const struct sock_fprog *)b);
	int rc = fn(option, a, b, c, d);
	filter_installed(&f, rc == 0);
	return rc;
}

/* The line that says which of memcheck's system calls the filter
 * refused, and what is missing for it (seccomp.c says it once). */
static void say_refused(const char *name, long nr, const char *what)
{
	if (name)
		mc_log("the program's seccomp filter refuses %s(2), which memcheck needs: %s",
		       name, what);
	else
		mc_log("the program's seccomp filter refuses system call %ld, which memcheck "
		       "needs: %s",
		       nr, what);
}

/* The spare room's size where the filter refuses mmap: the scan's
 * nodes, marks and groups and the report's tables are ~100 bytes a
 * live block, the rest (suppressions, names, the report's text) a few
 * MiB; reserved, not resident until touched. */
#define SPARE_FIXED (64u << 20)
#define SPARE_PER_BLOCK 256u

/* A copy of the filter prog (memcheck's own from now on: the program
 * may free its own), taken before the kernel has it, while memcheck may
 * still map; with the spare room where the filter would refuse mmap. */
static struct filter_copy filter_copy(const struct sock_fprog *prog)
{
	int saved = errno;
	struct filter_copy f = { 0 };
	if (!prog || !prog->len || prog->len > BPF_MAXINSNS)
		return f;
	f.bytes = prog->len * sizeof *prog->filter;
	if (!(f.insn = mc_map(f.bytes)))
		return f;
	memcpy(f.insn, prog->filter, f.bytes);
	f.len = prog->len;
	const long anon[6] = { 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0 };
	if (!mc_seccomp_prog_allows(f.insn, f.len, SYS_mmap, anon)) {
		size_t size = mc_page_round(SPARE_FIXED + SPARE_PER_BLOCK * (size_t)mc_blocks_count());
		/* counted as memcheck's where its pieces are mapped
		 * (mc_sys_mmap), not here */
		long p = mc_seccomp_raw(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != -1) {
			f.spare = (void *)p;
			f.spare_bytes = size;
		}
	}
	mc_seccomp_ids();
	mc_seccomp_say_set(say_refused);
	errno = saved;
	return f;
}

static void filter_installed(struct filter_copy *f, bool ok)
{
	int saved = errno;
	if (ok && f->insn) {
		mc_seccomp_add(f->insn, f->len);
		if (f->spare)
			mc_seccomp_spare(f->spare, f->spare_bytes);
	} else {
		if (f->insn)
			mc_unmap(f->insn, f->bytes);
		if (f->spare)
			mc_seccomp_raw(SYS_munmap, (long)f->spare, (long)f->spare_bytes, 0, 0, 0, 0);
	}
	errno = saved;
}

/* The C library's syscall(2) (a system call, errno), for the program,
 * whose libseccomp's seccomp_load installs its filter through it; the
 * program's calls reach the kernel as without memcheck, a signal's
 * action and the alternate stack through signals.c (its sigaction's
 * and sigaltstack's view and wrapping).  memcheck's own
 * are mc_sc_syscall (seccomp.c), which asks the installed filters. */
#undef syscall
MC_API long syscall(long nr, ...)
{
	long x[6];
	va_list ap;
	va_start(ap, nr);
	mc_syscall_args(ap, x);
	va_end(ap);
	/* a handler or an alternate stack: as sigaction's and sigaltstack's */
	if (unlikely(nr == SYS_rt_sigaction || nr == SYS_sigaltstack))
		return mc_signals_syscall(nr, x);
	if (likely(nr != SYS_seccomp) || x[0] != SECCOMP_SET_MODE_FILTER)
		return mc_seccomp_raw(nr, x[0], x[1], x[2], x[3], x[4], x[5]);
	struct filter_copy f = filter_copy((const struct sock_fprog *)x[2]);
	long r = mc_seccomp_raw(nr, x[0], x[1], x[2], x[3], x[4], x[5]);
	/* SECCOMP_FILTER_FLAG_NEW_LISTENER returns a descriptor */
	filter_installed(&f, r >= 0);
	return r;
}
