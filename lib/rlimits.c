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
 * memcheck maps or unmaps (util.c's mc_sys_mmap and mc_sys_munmap,
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
 * it) are the kernel's as they are: nothing is moved at start-up, where
 * a parent under memcheck may already have moved them (its view is not
 * inherited).  An exec'd child inherits the kernel's values: the parent's
 * view plus the parent's own bytes, which a child under memcheck spends
 * on its own mappings, so that it too gets about the view; a child
 * memcheck leaves out gets that much more.  A limit set with a raw
 * syscall(2) or by another process is not seen.
 */
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "internal.h"

#define INF RLIM64_INFINITY
#define CAP_RESOURCE_BIT 24 /* CAP_SYS_RESOURCE */

enum { AS, DATA, NRES };

struct view {
	bool set;
	uint64_t cur, max;   /* what the program set */
	uint64_t kmax;       /* the kernel's hard limit as set here */
};

static struct view views[NRES];
static atomic_bool any_set;
static atomic_flag lock = ATOMIC_FLAG_INIT;
static atomic_bool dirty;
static uint64_t image[NRES];       /* libmemcheck.so's segments */
static atomic_bool image_known;

static int index_of(int resource)
{
	return resource == RLIMIT_AS ? AS : resource == RLIMIT_DATA ? DATA : -1;
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

static uint64_t own(int r)
{
	int64_t vm = mc_own_vm();
	return image[r] + (vm > 0 ? (uint64_t)vm : 0);
}

/* The kernel's soft limits from the views and what memcheck holds now;
 * lock held. */
static void apply_locked(void)
{
	for (int r = 0; r < NRES; r++) {
		struct view *v = &views[r];
		if (!v->set || v->cur == INF)
			continue;
		uint64_t soft = add_sat(v->cur, own(r));
		if (soft > v->kmax)
			soft = v->kmax;
		struct rlimit64 k = { soft, v->kmax };
		kernel_prlimit(r == AS ? RLIMIT_AS : RLIMIT_DATA, &k, NULL);
	}
}

/* Held by another call (another thread, or this one interrupted by a
 * signal whose handler maps): that call sees dirty and applies again. */
static void apply(void)
{
	int saved = errno;
	for (;;) {
		atomic_store(&dirty, true);
		if (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
			break;
		while (atomic_exchange(&dirty, false))
			apply_locked();
		atomic_flag_clear_explicit(&lock, memory_order_release);
		if (!atomic_load(&dirty))
			break;
	}
	errno = saved;
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
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		__builtin_ia32_pause();
}

void mc_rlimits_unlock(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
	if (atomic_load(&dirty))
		apply();
}

bool mc_rlimit_get(int resource, struct rlimit64 *out)
{
	int r = index_of(resource);
	if (r < 0 || !atomic_load(&any_set))
		return false;
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		__builtin_ia32_pause();
	bool set = views[r].set;
	if (set)
		*out = (struct rlimit64){ views[r].cur, views[r].max };
	atomic_flag_clear_explicit(&lock, memory_order_release);
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
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		__builtin_ia32_pause();
	struct view *v = &views[r];
	struct rlimit64 k;
	int rc = kernel_prlimit(resource, NULL, &k);
	if (rc == 0 && v->set && want->rlim_max > v->max && !may_raise_hard()) {
		errno = EPERM;
		rc = -1;
	}
	if (rc == 0) {
		/* room for memcheck's own: the asked hard limit doubled, at
		 * most what this process could set anyway */
		uint64_t ceiling = k.rlim_max > want->rlim_max ? k.rlim_max : want->rlim_max;
		uint64_t kmax = add_sat(want->rlim_max, want->rlim_max);
		if (kmax > ceiling)
			kmax = ceiling;
		uint64_t soft = want->rlim_cur == INF ? INF : add_sat(want->rlim_cur, own(r));
		if (soft > kmax)
			soft = kmax;
		rc = kernel_prlimit(resource, &(struct rlimit64){ soft, kmax }, NULL);
		if (rc == 0) {
			*v = (struct view){ true, want->rlim_cur, want->rlim_max, kmax };
			atomic_store(&any_set, true);
			mc_own_vm_hook_set(apply);
		}
	}
	int saved = errno;
	atomic_flag_clear_explicit(&lock, memory_order_release);
	if (atomic_load(&dirty))
		apply();
	errno = saved;
	return rc;
}
