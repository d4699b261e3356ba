/*
 * count_calls.c - a preloaded shim (libcount_calls.so, after memcheck in
 * LD_PRELOAD) that logs the calls memcheck makes to look at its cache
 * directory and the debug files' places (test_symcache's
 * dir_looked_at_once, link_places_looked_at_once): every open, openat,
 * stat, lstat and access of a path that begins with $COUNT_CALLS_DIR
 * (a list split at ':'), every
 * geteuid, and every sbrk called from an object whose path begins so
 * (test_rss_self's start_up_calls_no_sbrk), one
 * line each ("open PATH", "geteuid", "sbrk OBJECT") appended to
 * $COUNT_CALLS_LOG.  Calls go on to the C library's (RTLD_NEXT); the log
 * is written with the raw system calls, no stdio, no malloc.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	note("open", path);
	int (*real)(const char *, int, ...) = next("open");
	return real(path, flags, mode);
}

EXPORT int openat(int dfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	if (dfd == AT_FDCWD)
		note("openat", path);
	int (*real)(int, const char *, int, ...) = next("openat");
	return real(dfd, path, flags, mode);
}

EXPORT int stat(const char *path, struct stat *st)
{
	note("stat", path);
	int (*real)(const char *, struct stat *) = next("stat");
	return real(path, st);
}

EXPORT int lstat(const char *path, struct stat *st)
{
	note("lstat", path);
	int (*real)(const char *, struct stat *) = next("lstat");
	return real(path, st);
}

EXPORT int access(const char *path, int mode)
{
	note("access", path);
	int (*real)(const char *, int) = next("access");
	return real(path, mode);
}

EXPORT uid_t geteuid(void)
{
	note("geteuid", NULL);
	return (uid_t)syscall(SYS_geteuid);
}

EXPORT void *sbrk(intptr_t increment)
{
	Dl_info info; /* dladdr allocates nothing */
	if (dladdr(__builtin_return_address(0), &info) && info.dli_fname)
		note("sbrk", info.dli_fname);
	void *(*real)(intptr_t) = next("sbrk");
	return real(increment);
}
