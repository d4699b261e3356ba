/*
 * seccomp.c - memcheck makes no system call the program's seccomp
 * filter would refuse.
 *
 * A program may install a filter that kills (or traps, or fails) a
 * system call it makes no more itself: openat, mmap, fcntl, everything
 * but write to its stdout.  Bare it lives; under memcheck its exit died
 * of SIGSYS on the first call the scan, the suppressions or the report
 * made (exit 159 where it exits 0).  The filter is classic BPF over
 * struct seccomp_data, which memcheck can run itself: it keeps a copy of
 * each filter the program installs, through prctl(PR_SET_SECCOMP) (the
 * wrapper in sandbox.c) or the seccomp system call through syscall(2)
 * (libseccomp's seccomp_load), and asks them before each of its own
 * system calls.  A call they would not let through is not made: it
 * fails with EPERM, as a refused open or read fails, and what needed it
 * is missing and said once (where the filter lets memcheck write).
 *
 * syscall(2) is exported for that: the program's calls are the C
 * library's (a system call and errno), with a look at SYS_seccomp.
 * memcheck's own are mc_sc_syscall (internal.h renames them), asked
 * first, at the cost of a load and a branch where no filter is
 * installed.
 *
 * Not seen: a filter installed by an inline system call (no wrapper),
 * or before an execve that started this process (the kernel keeps it,
 * memcheck's copies are gone); such a process still dies where its
 * filter refuses what memcheck makes.  Filters are treated as the whole
 * process's, though one without SECCOMP_FILTER_FLAG_TSYNC binds only
 * its thread: memcheck then avoids calls it could have made.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "internal.h"


#if defined(__x86_64__)
#define MC_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define MC_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define NFILTERS 32

static struct filter {
	const struct sock_filter *insn;
	unsigned short len;
} filters[NFILTERS];
static _Atomic int nfilters;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int said;
/* Ids cannot fail: where the filter refuses asking, the ones read when
 * it was installed (a forked child's would be its parent's; a thread's
 * own id the main thread's, which ends the process as a rule). */
static pid_t pid_then, ppid_then;

void mc_seccomp_ids(void)
{
	pid_then = getpid();
	ppid_then = getppid();
}

/* The system call itself, as the C library's syscall(2) makes it. */
static inline __attribute__((always_inline)) long sc_raw(long nr, long a, long b, long c,
						       long d, long e, long f)
{
	long r;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
			  x2 __asm__("x2") = c, x3 __asm__("x3") = d, x4 __asm__("x4") = e,
			  x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	r = x0;
#else
#error "seccomp.c: the system call instruction of this architecture"
#endif
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* One filter's verdict (SECCOMP_RET_*) on d, run as the kernel runs it;
 * the kernel checked the program when it took it. */
static uint32_t bpf_run(const struct filter *f, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	for (unsigned pc = 0; pc < f->len; pc++) {
		const struct sock_filter *i = &f->insn[pc];
		uint32_t k = i->k, src = BPF_SRC(i->code) == BPF_X ? x : k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			switch (BPF_MODE(i->code)) {
			case BPF_ABS:
				if (k > sizeof *d - 4 || k % 4)
					return SECCOMP_RET_KILL_PROCESS;
				memcpy(&a, (const char *)d + k, 4);
				break;
			case BPF_IMM: a = k; break;
			case BPF_MEM: a = mem[k % BPF_MEMWORDS]; break;
			case BPF_LEN: a = sizeof *d; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_LDX:
			switch (BPF_MODE(i->code)) {
			case BPF_IMM: x = k; break;
			case BPF_MEM: x = mem[k % BPF_MEMWORDS]; break;
			case BPF_LEN: x = sizeof *d; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_ST: mem[k % BPF_MEMWORDS] = a; break;
		case BPF_STX: mem[k % BPF_MEMWORDS] = x; break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: a = src ? a / src : 0; break;
			case BPF_MOD: a = src ? a % src : 0; break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_JMP: {
			bool t;
			switch (BPF_OP(i->code)) {
			case BPF_JA: pc += k; continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			pc += t ? i->jt : i->jf;
			break;
		}
		case BPF_RET: return BPF_RVAL(i->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default: return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS;
}

/* Whether the installed filters let system call nr with args through,
 * taking, as the kernel does, the most severe verdict of all; a call
 * they let fail with an errno counts as refused (memcheck's own wants
 * its result). */
static bool allowed(long nr, const long args[6])
{
	struct seccomp_data d = { .nr = (int)nr, .arch = MC_AUDIT_ARCH,
				  .instruction_pointer = (uintptr_t)mc_sc_syscall };
	for (int i = 0; i < 6; i++)
		d.args[i] = (uint64_t)args[i];
	int n = atomic_load_explicit(&nfilters, memory_order_acquire);
	for (int i = 0; i < n; i++) {
		uint32_t action = bpf_run(&filters[i], &d) & SECCOMP_RET_ACTION_FULL;
		if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG)
			return false;
	}
	return true;
}

/* A filter the kernel took, copied by the caller (sandbox.c) before it
 * did: asked from now on. */
void mc_seccomp_add(const void *insn, unsigned short len)
{
	pthread_mutex_lock(&lock);
	int n = atomic_load_explicit(&nfilters, memory_order_relaxed);
	if (n < NFILTERS) {
		filters[n] = (struct filter){ insn, len };
		atomic_store_explicit(&nfilters, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&lock);
}

/* ---- a filter inherited through the execve ---------------------------
 *
 * A filter installed before the execve that started the process (a
 * sandbox launcher's, systemd's SystemCallFilter=) cannot be read, only
 * seen to be there: /proc/self/status's Seccomp (2: filters bind it) and
 * Seccomp_filters (Linux 5.9: how many), more than the copies held here.
 * Start-up proved only the calls it made; a fatal signal's record makes
 * calls it never did, in groups a filter leaves out (systemd's @ipc,
 * @process, @timer): killed, the process died of SIGSYS where it dies
 * of its own signal bare (load58).  Where such a filter is seen, the
 * reads of memory through the kernel and the signal sent again with its
 * siginfo are refused as a filter of the program's refuses them (EPERM):
 * the record reads the memory itself, and the signal goes again with
 * tgkill, the call the C library's raise and abort make.  Its timers
 * are kept: every container runtime's filter is such a filter, and
 * without the deadline a record that waits (a full pipe, a lock another
 * thread holds) would hang a process that dies bare. */
#define LDNR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
/* the call k to the refusal, jt instructions on */
#define NO(k, jt) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (jt), 0)
static const struct sock_filter inherited_insn[] = {
	LDNR,
	NO(SYS_process_vm_readv, 3),
	NO(SYS_process_vm_writev, 2),
	NO(SYS_rt_tgsigqueueinfo, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};

/* n in "\nkey\tn" of text, or -1 */
static long status_field(const char *text, const char *key)
{
	const char *at = strstr(text, key);
	if (!at)
		return -1;
	at += strlen(key);
	long n = 0;
	for (; *at >= '0' && *at <= '9'; at++)
		n = n * 10 + (*at - '0');
	return n;
}

void mc_seccomp_inherited(void)
{
	static _Atomic bool asked;
	if (atomic_exchange(&asked, true))
		return;
	char text[4096];
	size_t got = 0;
	int fd = (int)mc_sc_syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (long r; got < sizeof text - 1 &&
		     (r = mc_sc_syscall(SYS_read, fd, text + got, sizeof text - 1 - got)) > 0;)
		got += (size_t)r;
	mc_sc_syscall(SYS_close, fd);
	text[got] = 0;
	long mode = status_field(text, "\nSeccomp:\t"),
	     count = status_field(text, "\nSeccomp_filters:\t");
	int held = atomic_load(&nfilters);
	if (mode != SECCOMP_MODE_FILTER || (count >= 0 ? count <= held : held > 0))
		return;
	/* a signal handler's: no wait for the lock an install holds */
	if (pthread_mutex_trylock(&lock) != 0)
		return;
	int n = atomic_load_explicit(&nfilters, memory_order_relaxed);
	if (n < NFILTERS) {
		filters[n] = (struct filter){ inherited_insn, sizeof inherited_insn /
								      sizeof inherited_insn[0] };
		atomic_store_explicit(&nfilters, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&lock);
}

/* Whether filter insn[len], not installed yet, lets nr with args through. */
bool mc_seccomp_prog_allows(const void *insn, unsigned short len, long nr, const long args[6])
{
	struct filter f = { insn, len };
	struct seccomp_data d = { .nr = (int)nr, .arch = MC_AUDIT_ARCH,
				  .instruction_pointer = (uintptr_t)mc_sc_syscall };
	for (int i = 0; i < 6; i++)
		d.args[i] = (uint64_t)args[i];
	uint32_t action = bpf_run(&f, &d) & SECCOMP_RET_ACTION_FULL;
	return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG;
}

/* Memory for memcheck where the filter refuses mmap: its scan, its
 * report and their tables are mapped at the exit.  The caller reserves
 * it before the filter that would refuse mmap is installed; a refused
 * anonymous mmap of memcheck's is cut from it, a munmap of a piece of
 * it is let be. */
static _Atomic uintptr_t spare_at, spare_hi;
static _Atomic uintptr_t spare_lo;

void mc_seccomp_spare(void *lo, size_t size)
{
	if (atomic_load(&spare_lo))
		return;
	atomic_store(&spare_at, (uintptr_t)lo);
	atomic_store(&spare_hi, (uintptr_t)lo + size);
	atomic_store(&spare_lo, (uintptr_t)lo);
}

static long spare_take(const long a[6])
{
	/* a hint (memcheck's own mappings ask for addresses above its
	 * code) is a hint; a fixed address is not for the spare room */
	if (!atomic_load(&spare_lo) || (int)a[4] != -1 || !(a[3] & MAP_ANONYMOUS) ||
	    (a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
		return -1;
	uintptr_t len = mc_page_round((size_t)a[1]);
	uintptr_t at = atomic_fetch_add(&spare_at, len);
	if (at + len > atomic_load(&spare_hi) || at + len < at)
		return -1;
	return (long)at;
}

static bool in_spare(uintptr_t p)
{
	uintptr_t lo = atomic_load(&spare_lo);
	return lo && p >= lo && p < atomic_load(&spare_hi);
}

static void (*_Atomic say)(const char *name, long nr, const char *what);

void mc_seccomp_say_set(void (*fn)(const char *name, long nr, const char *what))
{
	atomic_store(&say, fn);
}

static const char *name_of(long nr)
{
	switch (nr) {
	case SYS_openat: return "openat";
	case SYS_read: return "read";
	case SYS_pread64: return "pread64";
	case SYS_write: return "write";
	case SYS_close: return "close";
	case SYS_mmap: return "mmap";
	case SYS_munmap: return "munmap";
	case SYS_madvise: return "madvise";
	case SYS_fcntl: return "fcntl";
	case SYS_lseek: return "lseek";
	case SYS_newfstatat: return "newfstatat";
	case SYS_readlinkat: return "readlinkat";
	case SYS_rt_sigprocmask: return "rt_sigprocmask";
	case SYS_rt_sigpending: return "rt_sigpending";
	case SYS_mincore: return "mincore";
	default: return NULL;
	}
}

/* What memcheck does not do, said once: the first refused call names
 * itself and what it was for (what needs it is then missing from the
 * report or said there to be unread). */
static void refused(long nr, const char *what)
{
	void (*fn)(const char *, long, const char *) = atomic_load(&say);
	if (fn && !atomic_exchange(&said, 1))
		fn(name_of(nr), nr, what);
}

#define NOT_MEASURED "what needs it is not measured"

/* Whether libdw may be used: its own calls (it opens, maps and reads
 * the objects and their debug files, /proc/self/maps) are the C
 * library's, which memcheck cannot ask the filter before each. */
bool mc_seccomp_foreign_ok(void)
{
	if (likely(atomic_load_explicit(&nfilters, memory_order_relaxed) == 0))
		return true;
	static const long calls[][6] = {
		{ SYS_openat, AT_FDCWD, 0, O_RDONLY | O_CLOEXEC },
		{ SYS_read },
		{ SYS_pread64 },
		{ SYS_newfstatat, 0, 0, 0, AT_EMPTY_PATH },
		{ SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE },
		{ SYS_munmap },
		{ SYS_close },
		{ SYS_fcntl, 0, F_GETFL }, /* libelf's elf_begin */
		{ SYS_lseek },
	};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (!allowed(calls[i][0], calls[i] + 1)) {
			refused(calls[i][0], "frames have no file and line");
			return false;
		}
	return true;
}

/* memcheck's own system call where a filter is installed */
static __attribute__((noinline, cold)) long sc_refusable(long nr, long a, long b, long c, long d,
							  long e, long f)
{
	const long args[6] = { a, b, c, d, e, f };
	if (allowed(nr, args))
		return sc_raw(nr, a, b, c, d, e, f);
	if (nr == SYS_mmap) {
		long p = spare_take(args);
		if (p != -1)
			return p;
	} else if (nr == SYS_munmap && in_spare((uintptr_t)a)) {
		return 0;
	}
	refused(nr, NOT_MEASURED);
	errno = EPERM;
	return -1;
}

/* memcheck's own syscall(2) (internal.h renames its calls): asked of
 * the installed filters first.  Told apart from the program's at compile
 * time, not by where the call comes from: linked from libmemcheck.a,
 * memcheck's code and the program's are one object, and the program's
 * own syscall(2) must reach the kernel as without memcheck. */
long mc_sc_syscall(long nr, ...)
{
	long x[6];
	va_list ap;
	va_start(ap, nr);
	mc_syscall_args(ap, x);
	va_end(ap);
	if (unlikely(atomic_load_explicit(&nfilters, memory_order_relaxed) != 0))
		return sc_refusable(nr, x[0], x[1], x[2], x[3], x[4], x[5]);
	return sc_raw(nr, x[0], x[1], x[2], x[3], x[4], x[5]);
}

bool mc_seccomp_allows(long nr, long a0, long a1, long a2)
{
	if (likely(atomic_load_explicit(&nfilters, memory_order_relaxed) == 0))
		return true;
	const long args[6] = { a0, a1, a2, 0, 0, 0 };
	return allowed(nr, args);
}

long mc_seccomp_raw(long nr, long a, long b, long c, long d, long e, long f)
{
	return sc_raw(nr, a, b, c, d, e, f);
}

/* The C library's functions memcheck calls at its exit, each asked of
 * the filter as its system call (internal.h renames memcheck's calls),
 * and made as that system call (SC) where the C library's function is
 * nothing more: its first call from libmemcheck (linked -z lazy) had the
 * dynamic linker look it up, 700-900 instructions each, seven of them
 * at a measured /bin/date's exit (LD_DEBUG=bindings), and the call made
 * is the one the filter was asked about (the C library's access,
 * readlink and mkdir make access, readlink and mkdir, not the *at calls
 * asked).  Left to the C library: pthread_sigmask and sigtimedwait (it
 * keeps its own signals out of the set), getcwd, realpath, nanosleep. */
#define SC(nr, a, b, c, d) mc_seccomp_raw(nr, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

#undef open
#undef openat
#undef read
#undef close
#undef stat
#undef lstat
#undef fstat
#undef readlink
#undef sigpending
#undef pthread_sigmask
#undef sigtimedwait
#undef write
#undef getpid
#undef getppid
#undef gettid
#undef geteuid
#undef getresuid
#undef getresgid
#undef access
#undef mkdir
#undef renameat
#undef unlinkat
#undef flock
#undef madvise
#undef mincore
#undef getcwd
#undef realpath
#undef nanosleep
#undef sched_yield

static __attribute__((noinline, cold)) bool sc_may_ask(long nr, long a0, long a1, long a2)
{
	const long args[6] = { a0, a1, a2, 0, 0, 0 };
	if (allowed(nr, args))
		return true;
	refused(nr, NOT_MEASURED);
	errno = EPERM;
	return false;
}

/* false, with errno EPERM, where the filter refuses nr; inline: the
 * wrappers lie where their callers' code does (text-order.ld) */
static inline __attribute__((always_inline)) bool sc_may(long nr, long a0, long a1, long a2)
{
	if (likely(atomic_load_explicit(&nfilters, memory_order_relaxed) == 0))
		return true;
	return sc_may_ask(nr, a0, a1, a2);
}

/* ---- memcheck's own opens at the open-file limit ---------------------
 *
 * A program that lowers its limit to the descriptors it holds and one
 * more (or inherits such a limit, which memcheck cannot lift) leaves
 * memcheck one number: the scan's /proc/self/maps, lent to the
 * symbolizer until the report is done, took it, and the suppression
 * files then failed with EMFILE (the stdio buffer listed, the verdict
 * another).  An own open that gets EMFILE has the files memcheck keeps
 * and can reopen released (hooks: the scan's file, scan.c) and is made
 * once more. */
#define NRELEASE 4
static bool (*_Atomic release_hooks[NRELEASE])(void);

void mc_emfile_release_add(bool (*fn)(void))
{
	for (int i = 0; i < NRELEASE; i++) {
		bool (*was)(void) = NULL;
		if (atomic_load(&release_hooks[i]) == fn ||
		    atomic_compare_exchange_strong(&release_hooks[i], &was, fn))
			return;
	}
}

/* whether a hook released a descriptor; errno as it was */
__attribute__((noinline, cold)) bool mc_emfile_released(void)
{
	int saved = errno;
	bool any = false;
	for (int i = 0; i < NRELEASE; i++) {
		bool (*fn)(void) = atomic_load(&release_hooks[i]);
		if (fn && fn())
			any = true;
	}
	errno = saved;
	return any;
}

int mc_sc_openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = va_arg(ap, int);
	va_end(ap);
	if (!sc_may(SYS_openat, dir, (long)path, flags))
		return -1;
	int fd = (int)SC(SYS_openat, dir, path, flags, mode);
	return mc_emfile_retry(fd) ? (int)SC(SYS_openat, dir, path, flags, mode) : fd;
}

/* open is openat from the working directory (the C library's makes that
 * system call too) */
int mc_sc_open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = va_arg(ap, int);
	va_end(ap);
	return mc_sc_openat(AT_FDCWD, path, flags, mode);
}

ssize_t mc_sc_read(int fd, void *buf, size_t n)
{
	return sc_may(SYS_read, fd, (long)buf, (long)n) ? SC(SYS_read, fd, buf, n, 0) : -1;
}

/* The system call itself: the library's close is the program's
 * (fdkeep.c's wrapper), and memcheck's own closes are none of its. */
int mc_sc_close(int fd)
{
	return sc_may(SYS_close, fd, 0, 0) ? (int)sc_raw(SYS_close, fd, 0, 0, 0, 0, 0) : -1;
}

/* the C library makes each of stat, lstat, fstat with newfstatat too */
int mc_sc_stat(const char *restrict path, struct stat *restrict st)
{
	return sc_may(SYS_newfstatat, AT_FDCWD, (long)path, (long)st)
		       ? (int)SC(SYS_newfstatat, AT_FDCWD, path, st, 0)
		       : -1;
}

int mc_sc_lstat(const char *restrict path, struct stat *restrict st)
{
	return sc_may(SYS_newfstatat, AT_FDCWD, (long)path, (long)st)
		       ? (int)SC(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW)
		       : -1;
}

/* The empty path on the stack: a literal "" is merged by the linker into
 * the end of another object's string, blocks away from this code (a
 * page the kernel read at every measured exit, test_codeblocks). */
int mc_sc_fstat(int fd, struct stat *st)
{
	char empty = 0;
	return sc_may(SYS_newfstatat, fd, (long)&empty, (long)st)
		       ? (int)SC(SYS_newfstatat, fd, &empty, st, AT_EMPTY_PATH)
		       : -1;
}

ssize_t mc_sc_readlink(const char *restrict path, char *restrict buf, size_t n)
{
	return sc_may(SYS_readlinkat, AT_FDCWD, (long)path, (long)buf)
		       ? SC(SYS_readlinkat, AT_FDCWD, path, buf, n)
		       : -1;
}

int mc_sc_sigpending(sigset_t *set)
{
	return sc_may(SYS_rt_sigpending, (long)set, 8, 0) ? (int)SC(SYS_rt_sigpending, set, 8, 0, 0)
							 : -1;
}

/* an error number, not -1 */
int mc_sc_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return sc_may(SYS_rt_sigprocmask, how, (long)set, (long)old) ? pthread_sigmask(how, set, old)
								   : EPERM;
}

int mc_sc_sigtimedwait(const sigset_t *restrict set, siginfo_t *restrict info,
		       const struct timespec *restrict timeout)
{
	return sc_may(SYS_rt_sigtimedwait, (long)set, (long)info, (long)timeout)
		       ? sigtimedwait(set, info, timeout)
		       : -1;
}

ssize_t mc_sc_write(int fd, const void *buf, size_t n)
{
	return sc_may(SYS_write, fd, (long)buf, (long)n) ? SC(SYS_write, fd, buf, n, 0) : -1;
}

/* The C library's still: tests/prog/signals.c defines getpid to raise
 * a signal inside memcheck (test_errors), its one way in with the guard
 * up.  Made as the system call, a measured process's start would bind
 * nothing for it and fault no block of the C library's code (rss_begin
 * under glibc 64 KiB lower, the program's own at main's start). */
pid_t mc_sc_getpid(void)
{
	return sc_may(SYS_getpid, 0, 0, 0) ? getpid() : pid_then;
}

pid_t mc_sc_getppid(void)
{
	return sc_may(SYS_getppid, 0, 0, 0) ? (pid_t)SC(SYS_getppid, 0, 0, 0, 0) : ppid_then;
}

pid_t mc_sc_gettid(void)
{
	return sc_may(SYS_gettid, 0, 0, 0) ? (pid_t)SC(SYS_gettid, 0, 0, 0, 0) : pid_then;
}

uid_t mc_sc_geteuid(void)
{
	return sc_may(SYS_geteuid, 0, 0, 0) ? (uid_t)SC(SYS_geteuid, 0, 0, 0, 0) : (uid_t)-1;
}

int mc_sc_getresuid(uid_t *r, uid_t *e, uid_t *s)
{
	return sc_may(SYS_getresuid, (long)r, (long)e, (long)s)
		       ? (int)SC(SYS_getresuid, r, e, s, 0)
		       : -1;
}

int mc_sc_getresgid(gid_t *r, gid_t *e, gid_t *s)
{
	return sc_may(SYS_getresgid, (long)r, (long)e, (long)s)
		       ? (int)SC(SYS_getresgid, r, e, s, 0)
		       : -1;
}

int mc_sc_access(const char *path, int mode)
{
	return sc_may(SYS_faccessat, AT_FDCWD, (long)path, mode)
		       ? (int)SC(SYS_faccessat, AT_FDCWD, path, mode, 0)
		       : -1;
}

int mc_sc_mkdir(const char *path, mode_t mode)
{
	return sc_may(SYS_mkdirat, AT_FDCWD, (long)path, mode)
		       ? (int)SC(SYS_mkdirat, AT_FDCWD, path, mode, 0)
		       : -1;
}

int mc_sc_renameat(int from_dir, const char *from, int to_dir, const char *to)
{
	return sc_may(SYS_renameat, from_dir, (long)from, to_dir) &&
			       sc_may(SYS_renameat2, from_dir, (long)from, to_dir)
		       ? (int)SC(SYS_renameat, from_dir, from, to_dir, to)
		       : -1;
}

int mc_sc_unlinkat(int dir, const char *path, int flags)
{
	return sc_may(SYS_unlinkat, dir, (long)path, flags)
		       ? (int)SC(SYS_unlinkat, dir, path, flags, 0)
		       : -1;
}

int mc_sc_flock(int fd, int op)
{
	return sc_may(SYS_flock, fd, op, 0) ? (int)SC(SYS_flock, fd, op, 0, 0) : -1;
}

int mc_sc_madvise(void *p, size_t len, int advice)
{
	return sc_may(SYS_madvise, (long)p, (long)len, advice)
		       ? (int)SC(SYS_madvise, p, len, advice, 0)
		       : -1;
}

int mc_sc_mincore(void *p, size_t len, unsigned char *vec)
{
	return sc_may(SYS_mincore, (long)p, (long)len, (long)vec)
		       ? (int)SC(SYS_mincore, p, len, vec, 0)
		       : -1;
}

char *mc_sc_getcwd(char *buf, size_t size)
{
	return sc_may(SYS_getcwd, (long)buf, (long)size, 0) ? getcwd(buf, size) : NULL;
}

/* the C library resolves a path with readlink and newfstatat */
char *mc_sc_realpath(const char *restrict path, char *restrict out)
{
	return sc_may(SYS_readlinkat, AT_FDCWD, (long)path, 0) &&
			       sc_may(SYS_newfstatat, AT_FDCWD, (long)path, 0) &&
			       sc_may(SYS_getcwd, 0, 0, 0)
		       ? realpath(path, out)
		       : NULL;
}

int mc_sc_nanosleep(const struct timespec *want, struct timespec *left)
{
	return sc_may(SYS_nanosleep, (long)want, (long)left, 0) &&
			       sc_may(SYS_clock_nanosleep, CLOCK_REALTIME, 0, (long)want)
		       ? nanosleep(want, left)
		       : -1;
}

int mc_sc_sched_yield(void)
{
	return sc_may(SYS_sched_yield, 0, 0, 0) ? (int)SC(SYS_sched_yield, 0, 0, 0, 0) : 0;
}
