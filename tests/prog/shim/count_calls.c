/*
 * count_calls.c - a preloaded shim (libcount_calls.so, after memcheck in
 * LD_PRELOAD) that logs every sbrk called from an object whose path
 * begins with $COUNT_CALLS_DIR (a list split at ':'; test_rss_self's
 * start_up_calls_no_sbrk), one line each ("sbrk OBJECT") appended to
 * $COUNT_CALLS_LOG; a call memcheck's own sbrk forwards is logged by its
 * caller's object, one frame up.  Calls go on to the C library's (RTLD_NEXT); the log
 * is written with the raw system calls, no stdio, no malloc.  (It logged
 * memcheck's opens, stats and geteuid calls too, for test_symcache,
 * until memcheck made those as system calls, lib/seccomp.c: strace
 * counts them there now.)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static void note(const char *what, const char *path)
{
	const char *dirs = getenv("COUNT_CALLS_DIR"), *log = getenv("COUNT_CALLS_LOG");
	if (!log)
		return;
	bool under = !path;
	for (const char *d = dirs; path && d && *d && !under;) {
		const char *colon = strchr(d, ':');
		size_t len = colon ? (size_t)(colon - d) : strlen(d);
		under = len && strncmp(path, d, len) == 0;
		d = colon ? colon + 1 : d + len;
	}
	if (!under)
		return;
	char line[4200];
	size_t n = strlen(what), p = path ? strlen(path) : 0;
	if (n + 1 + p + 1 > sizeof line)
		return;
	memcpy(line, what, n);
	if (path) {
		line[n++] = ' ';
		memcpy(line + n, path, p);
		n += p;
	}
	line[n++] = '\n';
	int fd = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			      0600);
	if (fd < 0)
		return;
	(void)syscall(SYS_write, fd, line, n);
	(void)syscall(SYS_close, fd);
}

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

EXPORT void *sbrk(intptr_t increment)
{
	Dl_info info; /* dladdr allocates nothing */
	const char *from = dladdr(__builtin_return_address(0), &info) ? info.dli_fname : NULL;
	/* from an object's own sbrk (memcheck's, which notes the program's
	 * and the allocator's break): the call it forwards, whose caller,
	 * one frame up (frame pointers), is the one that counts */
	if (from && info.dli_sname && strcmp(info.dli_sname, "sbrk") == 0) {
		void *const *up = *(void *const *const *)__builtin_frame_address(0);
		from = up && dladdr(up[1], &info) ? info.dli_fname : NULL;
	}
	if (from)
		note("sbrk", from);
	void *(*real)(intptr_t) = next("sbrk");
	return real(increment);
}
