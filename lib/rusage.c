/*
 * rusage.c - getrusage, wrapped: the program's own peak RSS as the
 * kernel would give it without memcheck's resets.
 *
 * Per-region peak RSS needs the kernel's high-water mark reset at
 * regions' bounds (footprint.c, /proc/self/clear_refs), and every reset
 * lowers the ru_maxrss the program reads of itself: /tmp/a25a/hostile/
 * h.c's `h large threads` (64 MiB touched and freed, then four threads)
 * read 66,876 kB bare, 12,232 kB under `memcheck run -q`, whose report
 * measures RSS.  footprint.c keeps the highest mark its resets threw
 * away (read before each, outside memcheck's own work); here the
 * program gets the greater of it and the kernel's answer.  Both include
 * memcheck's own resident memory, as a plain preload's mark (which is
 * never reset) always did, and as the parent's figure must (the kernel's
 * mark at exit, which footprint.c's mc_footprint_mark_restore raises
 * back): a program reads the same of itself as its parent then reads of
 * it (h.c: 67,412 kB under a plain preload, 536 kB above bare).
 *
 * RUSAGE_THREAD's ru_maxrss is the process's mark too (the kernel:
 * kernel/sys.c getrusage, the mm's mark for every who but
 * RUSAGE_CHILDREN); RUSAGE_CHILDREN's is the children's marks at their
 * exit, which their own memcheck raised back.
 *
 * The system call is made here, not the C library's getrusage, which
 * is the system call alone (glibc 2.36, sysdeps/unix/sysv/linux/
 * getrusage.c on 64-bit): finding the next definition walks the loaded
 * objects under the dynamic linker's lock, which a signal handler (it
 * may call getrusage: async-signal-safe by POSIX) must not take.  A
 * library preloaded after memcheck that defines getrusage itself is not
 * called.  The lost mark is one atomic load: no lock.  What stays: a
 * program that issues the system call itself (syscall(2)), or reads
 * VmHWM in /proc/self/status, sees the mark as the last reset left it.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

MC_API int getrusage(__rusage_who_t who, struct rusage *usage)
{
	long rc = syscall(SYS_getrusage, (int)who, usage);
	if (rc == 0 && (who == RUSAGE_SELF || who == RUSAGE_THREAD)) {
		uint64_t lost = mc_footprint_mark_lost_kb();
		if ((uint64_t)usage->ru_maxrss < lost)
			usage->ru_maxrss = (long)lost;
	}
	return (int)rc;
}
