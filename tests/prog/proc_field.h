/*
 * proc_field.h - shared by tests/prog programs that read a figure of
 * their own from /proc without stdio or malloc (whose calls memcheck
 * would count).
 */
#ifndef PROC_FIELD_H
#define PROC_FIELD_H
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The number after key (e.g. "VmHWM:") in the file path (e.g.
 * "/proc/self/status"); -1 when the file cannot be read or has no key. */
static long long proc_field(const char *path, const char *key)
{
	char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *p = strstr(buf, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}
#endif
