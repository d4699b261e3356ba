/*
 * rlimits.c - the address-space limits the program sets, with
 * memcheck's own mappings left out of them.
 *
 * A test that lowers RLIMIT_AS or RLIMIT_DATA to provoke out-of-memory
 * counts on a number of bytes before malloc fails.  The kernel counts
 * every mapping of the process against the limit, memcheck's with the
 * program's: its block table's reservation, the free rings, the stack
 * depot, libmemcheck's own image; 9.6 MiB in a tracking process that
 * holds one block.  Under an allocator that maps in large units the loss
 * is a unit: /tmp's las.c, RLIMIT_AS of 200 MiB, 1 MiB blocks until
 * malloc fails, got 196/185/164/183 blocks bare under glibc/mimalloc/
 * jemalloc/tcmalloc and 186/154/155/173 under memcheck (mimalloc's 32 MiB
 * segments: one fewer fitted).
 *
 * So a limit the program sets through the C library (limits.c wraps
 * setrlimit, setrlimit64, prlimit and prlimit64 of the process itself)
 * is kept here as the program's view, and the kernel's soft limit is the
 * view's plus what memcheck holds of that resource now, moved whenever
 * memcheck maps or unmaps (sys.c's mc_sys_mmap and mc_sys_munmap,
 * which every mapping of memcheck's goes through, call apply once a
 * limit was set).  The kernel's hard limit leaves room for that: the
 * view's doubled, never above what the process could set itself (the
 * kernel's current hard limit, or the one asked for).  getrlimit and
 * prlimit's old values return the view (limits.c), so the program reads
 * back what it set, and the errors a call gets are the ones it would get
 * without memcheck: EINVAL for a soft limit above the hard one, EPERM
 * for raising the hard one without CAP_SYS_RESOURCE.
 *
 * What memcheck holds: the bytes of its own mappings (anonymous and
 * files; RLIMIT_DATA counts only private writable ones, and memcheck's
 * read-only file mappings exist while it symbolizes, at a report: they
 * are counted against both) and, where libmemcheck.so was preloaded
 * rather than linked into the program, its loaded segments (RLIMIT_DATA:
 * the writable ones).  Not left out: libraries memcheck loads itself
 * (libdw at a report, libunwind for code without frame pointers), a
 * thread's part of memcheck's thread-local storage.
 *
 * Limits the process starts with (`ulimit -v` in the shell that runs
 * it) become the program's view at start-up (mc_rlimits_inherited):
 * memcheck's start-up mappings (11.9 MiB of address space at main's
 * first line, every allocator) took from the program's room, where
 * tcmalloc at the edge aborted instead of returning NULL (harden43).
 * The kernel's soft limit can move up only where the hard one leaves
 * room (ulimit -Sv), or the process may raise that (CAP_SYS_RESOURCE:
 * to twice the view's, as for a set limit); soft and hard one and
 * unprivileged, nothing moves.  So that the view is what the process
 * inherited, an exec through memcheck's wrappers (execenv.c: execve,
 * execv, execvp, execvpe) puts the kernel's soft limits back to the
 * views first (mc_rlimits_exec; memcheck's room back where it fails):
 * the new program inherits them as without memcheck.  A child started
 * by posix_spawn (system, popen) or an exec the wrappers do not see
 * inherits the view plus the parent's own bytes, which its memcheck
 * takes as its view.  A limit set with a raw syscall(2) or by another
 * process is not seen.
 *
 * RLIMIT_NOFILE likewise, for the descriptors memcheck opens.  A test
 * that lowers it and opens files until EMFILE (libevent's regress:
 * listener/error_unlock, dns/bufferevent_connect_hostname_emfile; most
 * set soft and hard alike) left memcheck none at exit: /proc/self/maps
 * unread (the scan had no roots), libdw not loaded, and "cannot open
 * MEMCHECK_REPORT=...: Too many open files", on the program's stderr
 * under `memcheck run -q`: the records lost.  And the copy of standard
 * error memcheck keeps at 900 took one of the program's numbers under a
 * limit above it (tests/prog/plain_nofile at 1000: 995 files opened
 * bare, 994 under memcheck).  Here the kernel's soft limit is the
 * view's exactly, so the program gets EMFILE at the same count as
 * without memcheck, and its hard limit leaves FD_ROOM more (within what
 * the process could set): memcheck's own work that may open files (a
 * region's end, the exit, a heap error's report: mc_fds_room_begin and
 * _end) raises the soft limit by that much while it runs, and the
 * descriptors memcheck keeps are copied above the view's soft limit
 * (mc_fd_above, textout.c's mc_dup_high through its hook, and limits.c's
 * lift of those kept already).  What stays: while memcheck's work runs
 * in one thread, another thread of the program that opens a file at
 * its limit gets one where it would get EMFILE; an exec'd child
 * inherits the hard limit with the room in it; a limit the process
 * inherits (ulimit -n) is the kernel's, and the copy of standard error
 * takes one of its numbers where it is above 900 (this machine's
 * 20,000, which nothing can lift where soft and hard are equal).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "internal.h"

#define INF RLIM64_INFINITY
#define CAP_RESOURCE_BIT 24 /* CAP_SYS_RESOURCE */

enum { AS, DATA, NOFILE, NRES };
#define VM_DUE ((1u << AS) | (1u << DATA)) /* what memcheck's mappings move */
/* Room in the hard limit below which memcheck maps as little as it can
 * (ownmap.c's mc_map_tight): a tracking process's own mappings, 12 MiB
 * of address space at start-up, more for a table of many blocks, would
 * not fit beside the soft limit without taking from the program. */
#define TIGHT_ROOM ((uint64_t)64 << 20)
/* Descriptors memcheck may hold at once above the program's limit: the
 * report's and the log's, /proc files, libdw's dlopen and the objects it
 * opens.  tests/prog/plain_nofile at 20, its table full at exit, with
 * MEMCHECK_REPORT, MEMCHECK_LOG and a cold MEMCHECK_CACHE (libdw loaded,
 * its files opened): 20..23 used (strace -f). */
#define FD_ROOM 64

struct view {
	bool set;
	uint64_t cur, max;   /* what the program set */
	uint64_t kmax;       /* the kernel's hard limit as set here */
};

static struct view views[NRES];
static atomic_bool any_set;
static atomic_int lock;             /* mc_spin_lock's */
static _Atomic unsigned dirty;     /* resources whose kernel limit is due */
static uint64_t image[NRES];       /* libmemcheck.so's segments */
static atomic_bool image_known;
static atomic_int fd_users;        /* memcheck's own work that may open files */
static pid_t fork_pid;             /* fork_prepare's, where fd_users was not 0 */
static atomic_bool nofile_set;     /* views[NOFILE].set, read without the lock */

static void views_lock(void)
{
	mc_spin_lock(&lock);
}

static void views_unlock(void)
{
	atomic_store_explicit(&lock, 0, memory_order_release);
}

static int index_of(int resource)
{
	return resource == RLIMIT_AS ? AS : resource == RLIMIT_DATA ? DATA :
	       resource == RLIMIT_NOFILE ? NOFILE : -1;
}

static int resource_of(int r)
{
	return r == AS ? RLIMIT_AS : r == DATA ? RLIMIT_DATA : RLIMIT_NOFILE;
}

static int kernel_prlimit(int resource, const struct rlimit64 *set, struct rlimit64 *old)
{
	return (int)syscall(SYS_prlimit64, 0, resource, set, old);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > INF - b ? INF : a + b;
}

/* libmemcheck.so's loaded segments, where it was preloaded.  Linked
 * into the program (libmemcheck.a), they are the program's own, in every
 * run of it: nothing to leave out. */
static void image_add(uintptr_t lo, uintptr_t hi, bool writable, void *arg)
{
	uint64_t *sums = arg;
	sums[AS] += hi - lo;
	if (writable)
		sums[DATA] += hi - lo;
}

static void image_measure(void)
{
	if (atomic_load(&image_known))
		return;
	uint64_t sums[NRES] = { 0 };
	mc_own_image_each(image_add, sums);
	image[AS] = sums[AS];
	image[DATA] = sums[DATA];
	atomic_store(&image_known, true);
}

/* What memcheck holds of r now, beyond the program's view: its bytes,
 * or the room for descriptors while its own work runs. */
static uint64_t own_of(int r, int64_t vm)
{
	if (r == NOFILE)
		return atomic_load(&fd_users) > 0 ? FD_ROOM : 0;
	return image[r] + (vm > 0 ? (uint64_t)vm : 0);
}

static uint64_t own(int r)
{
	return own_of(r, r == NOFILE ? 0 : mc_own_vm());
}

/* memcheck's mapped bytes (mc_own_vm) at the process's first failed
 * allocation, + 1 (0: none failed yet).  The image is added where it is
 * read (mc_rlimits_short): measuring it walks the loaded objects
 * (dl_iterate_phdr, the loader's lock), which an allocation that failed
 * inside dlopen would wait for. */
static _Atomic uint64_t vm_at_failure;

__attribute__((cold)) void mc_rlimits_failed(void)
{
	/* none under no limit (a failure of a huge request, say, long
	 * before one is set: a limit is then one the program set, any_set) */
	if (atomic_load_explicit(&vm_at_failure, memory_order_relaxed) ||
	    !(atomic_load(&any_set) || mc_map_is_tight()))
		return;
	int64_t vm = mc_own_vm();
	uint64_t none = 0;
	atomic_compare_exchange_strong(&vm_at_failure, &none, (uint64_t)(vm > 0 ? vm : 0) + 1);
}

/* The kernel's soft limit for a view of cur under a hard limit kmax. */
static uint64_t kernel_soft(int r, uint64_t cur, uint64_t kmax)
{
	uint64_t soft = cur == INF ? INF : add_sat(cur, own(r));
	return soft > kmax ? kmax : soft;
}

/* The kernel's soft limits of the resources in due (bits) from the views
 * and what memcheck holds now; lock held. */
static void apply_locked(unsigned due)
{
	for (int r = 0; r < NRES; r++) {
		struct view *v = &views[r];
		if (!(due & (1u << r)) || !v->set || v->cur == INF)
			continue;
		struct rlimit64 k = { kernel_soft(r, v->cur, v->kmax), v->kmax };
		kernel_prlimit(resource_of(r), &k, NULL);
	}
}

/* Held by another call (another thread, or this one interrupted by a
 * signal whose handler maps): that call sees dirty and applies again. */
static void apply_due(unsigned due)
{
	int saved = errno;
	for (;;) {
		atomic_fetch_or(&dirty, due);
		if (atomic_exchange_explicit(&lock, 1, memory_order_acquire))
			break;
		unsigned now;
		while ((now = atomic_exchange(&dirty, 0)))
			apply_locked(now);
		views_unlock();
		if (!atomic_load(&dirty))
			break;
		due = 0;
	}
	errno = saved;
}

/* sys.c's hook: memcheck's mappings changed */
static void apply(void)
{
	apply_due(VM_DUE);
}

static bool may_raise_hard(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	return d[CAP_RESOURCE_BIT / 32].effective & (1u << (CAP_RESOURCE_BIT % 32));
}

/* fork: the views are taken whole into the child (the lock last of
 * life.c's, a leaf: mc_sys_mmap takes it under every other). */
void mc_rlimits_lock(void)
{
	views_lock();
	/* Another thread's work holds the room: in the child, which has
	 * only the forking thread, nothing will end it (one getpid here
	 * and one after, only then). */
	fork_pid = atomic_load(&fd_users) ? (pid_t)syscall(SYS_getpid) : 0;
}

void mc_rlimits_unlock(void)
{
	if (fork_pid && (pid_t)syscall(SYS_getpid) != fork_pid) {
		atomic_store(&fd_users, 0);
		atomic_fetch_or(&dirty, 1u << NOFILE);
	}
	fork_pid = 0;
	views_unlock();
	if (atomic_load(&dirty))
		apply_due(0);
}

/* memcheck's own work that may open files begins (ends): the first
 * raises the kernel's soft RLIMIT_NOFILE above the program's view, the
 * last lowers it back.  Counted whether a view is set or not, so that
 * a set between the two finds the count right; a system call only where
 * one is. */
void mc_fds_room_begin(void)
{
	if (atomic_fetch_add(&fd_users, 1) == 0 && atomic_load(&nofile_set))
		apply_due(1u << NOFILE);
}

void mc_fds_room_end(void)
{
	if (atomic_fetch_sub(&fd_users, 1) == 1 && atomic_load(&nofile_set))
		apply_due(1u << NOFILE);
}

/* A copy of fd (close-on-exec) above the program's view of
 * RLIMIT_NOFILE, in the room the kernel's hard limit leaves, out of
 * the program's count; -1 where no view leaves room.  textout.c's
 * mc_dup_high asks here first (its hook). */
static int fd_above(int fd)
{
	views_lock();
	struct view v = views[NOFILE];
	views_unlock();
	if (!v.set || v.cur >= v.kmax || v.cur > INT_MAX)
		return -1;
	mc_fds_room_begin();
	int high = mc_sys_fcntl(fd, F_DUPFD_CLOEXEC, (int)v.cur);
	mc_fds_room_end();
	return high;
}

/* Start-up: a limit the process inherited (`ulimit -v`, `ulimit -d`,
 * prlimit(1), a driver's) becomes the program's view, with memcheck's
 * own mappings left out of it as of one it sets: the kernel's soft limit
 * its plus what memcheck holds, where the hard limit leaves room (a
 * soft limit below it, `ulimit -Sv`; or CAP_SYS_RESOURCE, which may
 * raise it: to twice the view's, as mc_rlimit_set).  Where soft and hard
 * are one and cannot be raised, nothing moves: memcheck's mappings take
 * from the program's room (README, Limits), so memcheck maps as little
 * as it can (ownmap.c's mc_map_tight; also where the hard limit leaves
 * under TIGHT_ROOM).  Two system calls where nothing is limited. */
static __attribute__((noinline, cold)) void inherited_take(int r, const struct rlimit64 *k)
{
	uint64_t kmax = k->rlim_max;
	if (kmax <= k->rlim_cur && may_raise_hard())
		kmax = add_sat(k->rlim_max, k->rlim_max);
	if (kmax - k->rlim_cur < TIGHT_ROOM)
		mc_map_tight(); /* memcheck's mappings take from the program's room */
	if (kmax <= k->rlim_cur)
		return;
	image_measure();
	views_lock();
	if (!views[r].set) {
		views[r] = (struct view){ true, k->rlim_cur, k->rlim_max, kmax };
		atomic_store(&any_set, true);
		mc_own_vm_hook_set(apply);
		atomic_fetch_or(&dirty, 1u << r);
	}
	views_unlock();
	apply_due(0);
}

void mc_rlimits_inherited(void)
{
	for (int r = AS; r <= DATA; r++) {
		struct rlimit64 k;
		if (kernel_prlimit(resource_of(r), NULL, &k) == 0 && k.rlim_cur != INF)
			inherited_take(r, &k);
	}
}

/* An exec of the process: the kernel's soft limits back to the views,
 * which the new program inherits as it would without memcheck (its own
 * memcheck then leaves its own mappings out again); true where moved,
 * for mc_rlimits_exec_failed to put memcheck's room back. */
bool mc_rlimits_exec(void)
{
	if (!atomic_load(&any_set))
		return false;
	views_lock();
	for (int r = AS; r <= DATA; r++) {
		struct view *v = &views[r];
		if (v->set && v->cur != INF)
			kernel_prlimit(resource_of(r), &(struct rlimit64){ v->cur, v->kmax }, NULL);
	}
	views_unlock();
	return true;
}

/* Where memcheck's own mappings took from the program's room under
 * RLIMIT_AS or RLIMIT_DATA: an inherited limit whose soft and hard are
 * one and that this process may not raise (inherited_take moved
 * nothing), or one the program set at its hard limit; the kernel's soft
 * limit then lies less than memcheck's bytes above the program's view.
 * Its name, the program's limit and the bytes of memcheck's counted
 * against it; false where no limit lacks room.  A report's note, where
 * allocations failed (report.c): harden48's allocation until failure
 * under `ulimit -v 204800` got 185 MiB under memcheck, 196 bare (glibc)
 * and said nothing. */
__attribute__((cold)) bool mc_rlimits_short(const char **name, uint64_t *limit,
					    uint64_t *bytes)
{
	image_measure();
	for (int r = AS; r <= DATA; r++) {
		struct rlimit64 k;
		if (kernel_prlimit(resource_of(r), NULL, &k) != 0 || k.rlim_cur == INF)
			continue;
		/* not waited for: a fatal signal's report may have come
		 * while this thread held it (a set then in progress says
		 * nothing) */
		if (atomic_exchange_explicit(&lock, 1, memory_order_acquire))
			continue;
		uint64_t view = views[r].set ? views[r].cur : k.rlim_cur;
		views_unlock();
		/* as of the first failure, where one came */
		uint64_t failed = atomic_load(&vm_at_failure);
		uint64_t held = failed ? own_of(r, (int64_t)(failed - 1)) : own(r);
		uint64_t room = k.rlim_cur > view ? k.rlim_cur - view : 0;
		if (view == INF || room >= held)
			continue;
		*name = r == AS ? "RLIMIT_AS" : "RLIMIT_DATA";
		*limit = view;
		*bytes = held - room;
		return true;
	}
	return false;
}

void mc_rlimits_exec_failed(void)
{
	int saved = errno;
	apply();
	errno = saved;
}

bool mc_rlimit_get(int resource, struct rlimit64 *out)
{
	int r = index_of(resource);
	if (r < 0 || !atomic_load(&any_set))
		return false;
	views_lock();
	bool set = views[r].set;
	if (set)
		*out = (struct rlimit64){ views[r].cur, views[r].max };
	views_unlock();
	return set;
}

int mc_rlimit_set(int resource, const struct rlimit64 *want)
{
	int r = index_of(resource);
	if (r < 0)
		return kernel_prlimit(resource, want, NULL);
	if (want->rlim_cur > want->rlim_max) {
		errno = EINVAL;
		return -1;
	}
	image_measure();
	views_lock();
	struct view *v = &views[r];
	struct rlimit64 k;
	int rc = kernel_prlimit(resource, NULL, &k);
	if (rc == 0 && v->set && want->rlim_max > v->max && !may_raise_hard()) {
		errno = EPERM;
		rc = -1;
	}
	if (rc == 0) {
		/* room for memcheck's own: the asked hard limit doubled
		 * (descriptors: FD_ROOM more), at most what this process
		 * could set anyway */
		uint64_t ceiling = k.rlim_max > want->rlim_max ? k.rlim_max : want->rlim_max;
		uint64_t kmax = add_sat(want->rlim_max, r == NOFILE ? FD_ROOM : want->rlim_max);
		if (kmax > ceiling)
			kmax = ceiling;
		uint64_t soft = kernel_soft(r, want->rlim_cur, kmax);
		rc = kernel_prlimit(resource, &(struct rlimit64){ soft, kmax }, NULL);
		if (rc == 0) {
			*v = (struct view){ true, want->rlim_cur, want->rlim_max, kmax };
			atomic_store(&any_set, true);
			/* a hard limit the process could not move leaves no room:
			 * from here on memcheck maps as little as it can (what it
			 * holds already stays: a table's arrays in use) */
			if (r != NOFILE && kmax - want->rlim_cur < TIGHT_ROOM)
				mc_map_tight();
			if (r == NOFILE) {
				atomic_store(&nofile_set, true);
				mc_fd_hook_set(fd_above);
			} else {
				mc_own_vm_hook_set(apply);
			}
		}
	}
	int saved = errno;
	views_unlock();
	if (atomic_load(&dirty))
		apply_due(0);
	errno = saved;
	return rc;
}
