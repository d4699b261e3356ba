/*
 * sys.c - the system, asked directly: the system calls memcheck makes for
 * itself (mc_sys_*, through syscall(2): no C library wrapper bound or
 * touched, and a program that defines open or read itself never sees
 * memcheck's), the C library's sigaction for memcheck's own handlers, and
 * the facts asked of the system once a process (the page size, the
 * process and thread ids, membarrier's registration, AVX2) or each time
 * (the clock).  Its own mappings' bytes are counted here for rlimits.c
 * (mc_own_vm); which mappings memcheck makes, and how they are counted
 * as its memory, is ownmap.c's.  Nothing here calls malloc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#if defined(__x86_64__)
#include <cpuid.h>
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif
#endif

/* memcheck's own mappings: the system call, never the program's mmap,
 * which memcheck wraps (mappings.c) under a lock mc_map's callers may
 * hold.  Their bytes are counted for rlimits.c, which leaves them out of
 * the address-space limits the program sets (its hook: set with the
 * first such limit). */
static _Atomic int64_t own_vm;
static void (*_Atomic vm_hook)(void);

int64_t mc_own_vm(void)
{
	return atomic_load_explicit(&own_vm, memory_order_relaxed);
}

void mc_own_vm_hook_set(void (*hook)(void))
{
	atomic_store(&vm_hook, hook);
}

static void vm_changed(int64_t bytes)
{
	atomic_fetch_add_explicit(&own_vm, bytes, memory_order_relaxed);
	void (*hook)(void) = atomic_load_explicit(&vm_hook, memory_order_acquire);
	if (hook)
		hook();
}

void *mc_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	/* syscall(2) returns -1 with errno set, as mmap(2) does: the
	 * kernel's -errno was turned into errno already (that value negated
	 * again was 1, EPERM, for every failure) */
	int64_t bytes = (int64_t)mc_page_round(len);
	vm_changed(bytes); /* first: the limit may need the room */
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (r == -1) {
		int saved = errno;
		vm_changed(-bytes);
		errno = saved;
	}
	return r == -1 ? MAP_FAILED : (void *)r;
}

int mc_sys_munmap(void *addr, size_t len)
{
	int rc = (int)syscall(SYS_munmap, addr, len);
	if (rc == 0)
		vm_changed(-(int64_t)mc_page_round(len));
	return rc;
}

int mc_sys_getrlimit(int resource, struct rlimit *rl)
{
	return (int)syscall(SYS_prlimit64, 0, resource, NULL, rl);
}

static int (*_Atomic open_hook)(const char *path);

void mc_open_hook_set(int (*hook)(const char *path))
{
	atomic_store(&open_hook, hook);
}

int mc_kept_open(const char *path)
{
	int (*hook)(const char *) = atomic_load_explicit(&open_hook, memory_order_acquire);
	return unlikely(hook != NULL) ? hook(path) : -1;
}

int mc_sys_open(const char *path, int flags, int mode)
{
	/* a program that restricted itself: the files kept for it first
	 * (sandbox.c) */
	int fd = mc_kept_open(path);
	if (fd >= 0)
		return fd;
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
#ifdef MC_SECCOMP_CALLS
	/* at the open-file limit: what memcheck keeps released, once more
	 * (the library's; the command keeps nothing) */
	if (mc_emfile_retry(fd))
		fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
#endif
	return fd;
}

/* The process's own file TAIL under /proc, as the calling thread sees
 * it.  /proc/self is the thread group's leader: once the main thread has
 * returned through pthread_exit and another thread ends the process, its
 * maps read empty and its status has no VmRSS or VmHWM (the leader has
 * no memory of its own any more).  /proc/thread-self is the calling
 * thread, whose memory is the process's: taken from any other thread
 * than the main one (the main thread's /proc/self costs one symlink
 * fewer to resolve). */
int mc_proc_open(const char *tail, int flags)
{
	char path[64];
	const char *dir = mc_tid() == mc_pid() ? "/proc/self/" : "/proc/thread-self/";
	size_t d = strlen(dir), t = strlen(tail);
	if (d + t >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, d);
	memcpy(path + d, tail, t + 1);
	return mc_sys_open(path, flags | O_CLOEXEC, 0);
}

int mc_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

long mc_sys_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

long mc_sys_pread(int fd, void *buf, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, buf, n, off);
}

/* n entries of /proc/self/pagemap (fd) from the page that holds addr
 * (8 bytes a page: bit 63 present, bit 61 a file's page); false where
 * the read came short: resident.c's RSS of memcheck's own ranges. */
bool mc_pagemap_read(int fd, uintptr_t addr, uint64_t *e, size_t n)
{
	long len = (long)(n * sizeof e[0]);
	return mc_sys_pread(fd, e, (size_t)len, (off_t)(addr / mc_page_size() * sizeof e[0])) == len;
}

/* The program break: the C library's own __sbrk(0), not sbrk(0), which
 * tcmalloc exports (hooks around the C library's) and memcheck's
 * start-up then ran, faulting in tcmalloc's code there (its sbrk's
 * 64 KiB block, /bin/true under tcmalloc: perf record -e page-faults).
 * Not brk(2) either: glibc's first sbrk sets its own break with one
 * brk(2), which its malloc then reuses (a system call more in every
 * process under glibc, strace -c). */
extern void *__sbrk(intptr_t increment);
uintptr_t mc_program_break(void)
{
	void *b = __sbrk(0);
	return b == (void *)-1 ? 0 : (uintptr_t)b;
}

long mc_sys_write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

int mc_sys_fstat(int fd, struct stat *st)
{
#ifdef SYS_newfstatat /* the kernel's struct stat is the C library's */
	return (int)syscall(SYS_newfstatat, fd, "", st, AT_EMPTY_PATH);
#else
	return fstat(fd, st);
#endif
}

int mc_sys_fcntl(int fd, int cmd, long arg)
{
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

int mc_sys_mincore(void *p, size_t len, unsigned char *vec)
{
	return (int)syscall(SYS_mincore, p, len, vec);
}

int mc_sys_ioctl(int fd, unsigned long request, void *arg)
{
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

int mc_sys_sysinfo(struct sysinfo *si)
{
	return (int)syscall(SYS_sysinfo, si);
}

/* The C library's sigaction, never the program's (memcheck wraps it:
 * signals.c), for memcheck's own handlers (threads.c) and the wrapped
 * ones.  dlsym allocates: resolved at start-up (life.c), where that
 * block is memcheck's, never in a signal handler. */
MC_HOT static int (*_Atomic next_sigaction)(int, const struct sigaction *, struct sigaction *);

/* Found at start-up with the mmap family (life.c); dlsym only where
 * that found none. */
void mc_sys_sigaction_set(int (*fn)(int, const struct sigaction *, struct sigaction *))
{
	if (fn && !atomic_load_explicit(&next_sigaction, memory_order_acquire))
		atomic_store_explicit(&next_sigaction, fn, memory_order_release);
}

bool mc_sys_sigaction_resolve(void)
{
	if (!atomic_load_explicit(&next_sigaction, memory_order_acquire))
		atomic_store_explicit(&next_sigaction,
				      (int (*)(int, const struct sigaction *, struct sigaction *))
					      dlsym(RTLD_NEXT, "sigaction"),
				      memory_order_release);
	return atomic_load_explicit(&next_sigaction, memory_order_acquire) != NULL;
}

int mc_sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	mc_sys_sigaction_resolve();
	int (*fn)(int, const struct sigaction *, struct sigaction *) =
		atomic_load_explicit(&next_sigaction, memory_order_acquire);
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(sig, act, old);
}

/* From the auxiliary vector, as sysconf takes it: getauxval's page of
 * the C library start-up touches anyway, sysconf's two (its code and its
 * jump table) a measured process would fault in for memcheck alone
 * (resident.c, rss.c, forward.c's memalign-based functions). */
size_t mc_page_size(void)
{
	static size_t pg;
	if (!pg) {
		unsigned long p = getauxval(AT_PAGESZ);
		pg = p ? (size_t)p : 4096;
	}
	return pg;
}

/* membarrier(2)'s registration, which blocks.c and account.c both
 * need at start-up: made once (a forked child's blocks.c registers its
 * own). */
bool mc_membarrier_register(void)
{
	static _Atomic int state; /* 0: not asked; 1: registered; -1: no */
	int st = atomic_load_explicit(&state, memory_order_relaxed);
	if (!st) {
		int saved = errno;
		st = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
			     ? 1 : -1;
		errno = saved;
		atomic_store_explicit(&state, st, memory_order_relaxed);
	}
	return st > 0;
}

/* The process id, asked of the system once: the C library no longer
 * caches it, and memcheck asked at start-up, at the first thread slot
 * and in every line of text (mc_log).  The system call, not getpid:
 * the C library's getpid lies among its fork and exec functions, a
 * 64 KiB block of code a measured process's start-up faulted in
 * (footprint.c's first measure asks the pid) and the program's figures
 * then held (perf trace -F all, tests/prog/plain_rss_exit under glibc).  A forked child asks again
 * (mc_pid_after_fork, from life.c's fork_child); a child made without
 * fork's handlers (a raw clone) would see the parent's, where it only
 * makes memcheck take a slower path (stacks.c) or print the parent's
 * number. */
static _Atomic pid_t pid_cached;

pid_t mc_pid(void)
{
	pid_t p = atomic_load_explicit(&pid_cached, memory_order_relaxed);
	if (!p) {
		p = (pid_t)syscall(SYS_getpid);
		atomic_store_explicit(&pid_cached, p, memory_order_relaxed);
	}
	return p;
}

/* The calling thread's id, asked of the system once per thread: the
 * constructor asked it to tell the main thread, the first thread slot
 * to name its owner, the first stack capture to find the main stack
 * (three gettid calls in every measured process).  The forking thread's
 * is asked again in the child (mc_pid_after_fork); a raw clone sharing
 * the memory sees its parent thread's, as it does the process id. */
static MC_TLS pid_t tid_cached;

pid_t mc_tid(void)
{
	pid_t t = tid_cached;
	if (!t)
		t = tid_cached = (pid_t)syscall(SYS_gettid);
	return t;
}

void mc_pid_after_fork(void)
{
	atomic_store_explicit(&pid_cached, 0, memory_order_relaxed);
	tid_cached = 0;
}

/* The system call, not the vDSO: a region's clock is read a few times
 * in a process (its begin and end, the scan's), and the vDSO's first
 * read faults in its two data pages ([vvar], [vvar_vclock]: ~40 us on
 * these VMs) in every measured process, most of which never read a clock
 * themselves; the call costs 1-2 us each time. */
double mc_now(void)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether the processor has AVX2 and the system keeps its registers
 * (account.c's scrub, scan.c's range test).  Asked of the C library,
 * which asked the CPU as it started: each cpuid instruction is a trap to
 * the hypervisor on a virtual machine (4-5 us each here), and the four
 * of the question asked again were 18-21 us of every measured process's
 * start-up. */
bool mc_cpu_avx2(void)
{
#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
	return CPU_FEATURE_ACTIVE(AVX2);
#elif defined(__x86_64__)
	unsigned a, b, c, d, lo, hi;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return false;
	__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6) /* the kernel saves the YMM registers */
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
#else
	return false;
#endif
}
