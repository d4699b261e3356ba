/*
 * limits.c - can a small allocation fail in this process?
 *
 * Count-only malloc counts a call before handing it to the allocator and
 * takes the count back if the allocator fails.  Looking at the result
 * means a call where a jump would do, and on a malloc-heavy program that
 * call is a third of what counting costs (bench/malloc_bench under glibc:
 * 1.089x the bare run with it, 1.066x without).  Where only a size too
 * large for the machine can make malloc fail, the wrapper jumps for every
 * size below mc_sure_below and never sees the result.
 *
 * A small allocation fails when the address space or the data segment is
 * limited (RLIMIT_AS, RLIMIT_DATA: how tests provoke out-of-memory
 * without memcheck's failure injection) or when the kernel does not
 * overcommit (vm.overcommit_memory = 2).  So mc_sure_below is 0 (every
 * result checked) when either holds, or when it cannot be told: the
 * policy and the limits are read at the MC_LIMITS_AFTER-th allocation
 * that count-only malloc or calloc counts (mc_limits_read; calloc's too
 * since session 50, which jumps likewise), the limits again after every
 * setrlimit or prlimit the program makes through the C library (below).
 * Until then every result is looked at, as where a small request can
 * fail: read at start-up, they were five system calls (the policy's file
 * opened, read and closed, two getrlimit: 6-10 us, measured in a loop)
 * in every count-only process, most of which make a few hundred calls,
 * for a saving of a fraction of a nanosecond a call (the figures above,
 * of a 7-10 ns step: ~0.2 ns) that pays for the read only past some
 * 30,000 calls.  At 8192 calls the wait costs a malloc-heavy process
 * ~2 us at most.
 * What is left is counted as made although it failed: an allocator that
 * runs out of mappings (vm.max_map_count) or is capped by its own options,
 * a limit the program sets with a raw syscall(2), and one another process
 * sets on it with prlimit(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

#define SURE_SIZE ((size_t)1 << 20) /* far below any machine's memory */
/* a power of two: the aligned family's test (interpose.c, aligned_sure)
 * compares size | (alignment - 1) with it once, for both */
_Static_assert((SURE_SIZE & (SURE_SIZE - 1)) == 0, "SURE_SIZE a power of two");

size_t mc_sure_below; /* 0: every count-only malloc looks at its result */
static bool strict;   /* the kernel does not overcommit, or unknown */
static _Atomic int asked; /* mc_limits_read has begun: the limits are followed */
/* The reads and mc_sure_below's store in one piece: of a setrlimit in one
 * thread and the first read in another, the later store is the later
 * read's.  No fork handler takes it: a forked child takes it over
 * (mc_plock_take), where a mutex held by another thread at the fork
 * hung the child's first setrlimit of RLIMIT_AS or RLIMIT_DATA. */
static _Atomic pid_t update_lock;

static bool unlimited(int resource)
{
	struct rlimit rl;
	return getrlimit(resource, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY;
}

/* The limits may have changed. */
static void update(void)
{
	mc_plock_take(&update_lock);
	/* 0 too while fault injection is on: count-only malloc's and
	 * calloc's test then stands for fault.c's (interpose.c) */
	bool sure = !strict && unlimited(RLIMIT_AS) && unlimited(RLIMIT_DATA) &&
		    !__atomic_load_n(&mc_fault_on, __ATOMIC_RELAXED);
	__atomic_store_n(&mc_sure_below, sure ? SURE_SIZE : 0, __ATOMIC_RELAXED);
	mc_plock_give(&update_lock);
}

/* Fault injection came on (fault.c, which set mc_fault_on first): no
 * size is sure from now on; under the lock, so that an update racing
 * with this stores 0 too. */
void mc_limits_fault_on(void)
{
	mc_plock_take(&update_lock);
	__atomic_store_n(&mc_sure_below, 0, __ATOMIC_RELAXED);
	mc_plock_give(&update_lock);
}

void mc_limits_read(void)
{
	if (atomic_exchange(&asked, 1))
		return; /* read, or being read by another thread */
	int saved = errno;
	char c = 0;
	mc_plock_take(&update_lock);
	int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
	strict = fd < 0 || read(fd, &c, 1) != 1 || (c != '0' && c != '1');
	if (fd >= 0)
		close(fd);
	mc_plock_give(&update_lock);
	update();
	errno = saved;
}

/* ---- the program changes its limits --------------------------------- */

static int after(int rc, int resource)
{
	/* Before the first read nothing is followed: that read is later. */
	if ((resource == RLIMIT_AS || resource == RLIMIT_DATA) && atomic_load(&asked)) {
		int saved = errno;
		update();
		errno = saved;
	}
	/* memcheck's kept descriptors out of the program's new count */
	if (resource == RLIMIT_NOFILE && rc == 0)
		mc_text_fds_lift();
	/* whether memcheck's writes may raise SIGXFSZ (textout.c) */
	if (resource == RLIMIT_FSIZE && rc == 0)
		mc_text_fsize_forget();
	return rc;
}

/* The address-space limits and the open-file limit go to rlimits.c,
 * which leaves memcheck's own mappings and descriptors out of them
 * (struct rlimit is struct rlimit64 on the 64-bit systems memcheck
 * builds for); the others to the C library. */
_Static_assert(sizeof(struct rlimit) == sizeof(struct rlimit64), "64-bit limits");

static bool own_resource(int resource)
{
	return resource == RLIMIT_AS || resource == RLIMIT_DATA || resource == RLIMIT_NOFILE;
}

/* The C library declares the pointers nonnull; a program that passes
 * NULL gets EFAULT from the kernel without memcheck, and so with it:
 * the test must stay. */
static inline bool given(const void *p)
{
	__asm__("" : "+r"(p));
	return p != NULL;
}

#define SET(name, type)                                                             \
	MC_API int name(__rlimit_resource_t resource, const type *rl)              \
	{                                                                           \
		static void *real;                                                  \
		if (given(rl) && own_resource((int)resource))                       \
			return after(mc_rlimit_set((int)resource,                   \
						   (const struct rlimit64 *)rl),    \
				     (int)resource);                                \
		int (*f)(__rlimit_resource_t, const type *) =                       \
			mc_sym_next_cached(#name, &real);                           \
		if (!f) {                                                           \
			errno = ENOSYS;                                             \
			return -1;                                                  \
		}                                                                   \
		return after(f(resource, rl), (int)resource);                       \
	}

#define GET(name, type)                                                             \
	MC_API int name(__rlimit_resource_t resource, type *rl)                    \
	{                                                                           \
		static void *real;                                                  \
		if (given(rl) && mc_rlimit_get((int)resource, (struct rlimit64 *)rl)) \
			return 0;                                                   \
		int (*f)(__rlimit_resource_t, type *) =                             \
			mc_sym_next_cached(#name, &real);                           \
		if (!f) {                                                           \
			errno = ENOSYS;                                             \
			return -1;                                                  \
		}                                                                   \
		return f(resource, rl);                                             \
	}

#define PRLIMIT(name, type)                                                         \
	MC_API int name(pid_t pid, __rlimit_resource_t resource, const type *rl,   \
			type *old)                                                  \
	{                                                                           \
		static void *real;                                                  \
		int (*f)(pid_t, __rlimit_resource_t, const type *, type *) =        \
			mc_sym_next_cached(#name, &real);                           \
		if (!f) {                                                           \
			errno = ENOSYS;                                             \
			return -1;                                                  \
		}                                                                   \
		bool self = pid == 0 || pid == getpid();                            \
		if (!self || !own_resource((int)resource))                          \
			return f(pid, resource, rl, old);                           \
		struct rlimit64 was;                                                \
		if (old) {                                                          \
			int rc = mc_rlimit_get((int)resource, &was) ? 0 :           \
				 f(pid, resource, NULL, (type *)&was);              \
			if (rc != 0)                                                \
				return rc;                                          \
		}                                                                   \
		if (rl && mc_rlimit_set((int)resource,                              \
					(const struct rlimit64 *)rl) != 0)          \
			return after(-1, (int)resource);                            \
		if (old)                                                            \
			memcpy(old, &was, sizeof *old);                             \
		return rl ? after(0, (int)resource) : 0;                            \
	}

SET(setrlimit, struct rlimit)
SET(setrlimit64, struct rlimit64)
PRLIMIT(prlimit, struct rlimit)
PRLIMIT(prlimit64, struct rlimit64)
GET(getrlimit, struct rlimit)
GET(getrlimit64, struct rlimit64)
