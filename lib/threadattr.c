/*
 * threadattr.c - pthread_getattr_np, wrapped: the C library allocates
 * inside it with the thread's lock held.
 *
 * memcheck asks a thread's stack of pthread_getattr_np when the thread
 * first calls the malloc family (account.c's slot, for allocator.c's
 * figures) and at its first stack capture (stacks.c, to keep the walk
 * on the stack).  glibc's pthread_getattr_np (2.36, nptl/
 * pthread_getattr_np.c) takes the thread's own lock, fills the
 * attributes, then reallocs a CPU set until the kernel's affinity query
 * fits, and frees it, before it lets the lock go.  A thread whose first
 * allocation is that realloc, which the program made by asking about
 * itself first thing (libuv's test thread_stack_size; runtimes that
 * find their guard page at a thread's start), asked again from the hook
 * and waited on its own lock for ever, in count-only and tracking mode
 * alike (tests/prog/plain_getattr_self).
 *
 * So while the program is inside pthread_getattr_np on its own thread,
 * mc_self.in_getattr says so and memcheck does not ask
 * (mc_stack_bounds): the capture of that block gets its first frame,
 * the thread's next one learns the stack, and its slot takes the
 * bounds from the program's own answer when the call returns.  A call
 * about another thread takes that thread's lock, not the caller's: it
 * only passes through.  Premise: the lock is the thread's own (struct
 * pthread's lock), held only around that call's allocation; no other
 * function of the C library allocates while holding it (2.36: none
 * does).
 */
#include <pthread.h>

#include "internal.h"

MC_API int pthread_getattr_np(pthread_t th, pthread_attr_t *attr)
{
	if (!pthread_equal(th, pthread_self()))
		return mc_stack_getattr(th, attr);
	mc_self.in_getattr++;
	int rc = mc_stack_getattr(th, attr);
	mc_self.in_getattr--;
	void *addr;
	size_t size;
	if (rc == 0 && pthread_attr_getstack(attr, &addr, &size) == 0)
		mc_account_stack_known((uintptr_t)addr, (uintptr_t)addr + size);
	return rc;
}
