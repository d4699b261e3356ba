/*
 * rss_self.h - shared by plain_rss_self.c and rss_self_cxx.cc: the
 * program's own resident set from /proc/self/status (VmRSS, VmHWM, in
 * KiB), read and printed without stdio or malloc, so that the reading
 * adds nothing to what it reads (test_rss_self.c compares these, from a
 * run without memcheck, with memcheck's figures for the same program).
 */
#ifndef RSS_SELF_H
#define RSS_SELF_H
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixed_layout.h"
#include "proc_field.h"

/* "name=N " appended at *at (N >= 0). */
static void rss_self_put(char **at, const char *name, long long v)
{
	char num[24];
	int n = 0;
	do
		num[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	size_t len = strlen(name);
	memcpy(*at, name, len);
	*at += len;
	*(*at)++ = '=';
	while (n)
		*(*at)++ = num[--n];
	*(*at)++ = ' ';
}

/* "HEAD NAME=N\n" on stdout, N the status file's KEY (head is 15
 * characters). */
static void rss_self_line(const char *head, const char *name, const char *key)
{
	char line[64], *at = line;
	memcpy(at, head, 15);
	at += 15;
	rss_self_put(&at, name, proc_field("/proc/self/status", key));
	at[-1] = '\n';
	if (write(1, line, (size_t)(at - line)) < 0)
		_exit(3);
}

/* "rss_self_exit: hwm=H\n" and "rss_self_exit: rss=R\n" on stdout at the
 * process's very end: VmHWM and VmRSS after every library's destructor
 * (the exit code's pages are the process's peak too: ru_maxrss, time -f
 * %M; and its RSS at the end, where memcheck's on_exit handler ends the
 * process region).  Registered by the program's own destructor, which
 * the dynamic linker's _dl_fini runs first of all (the main program is
 * finalized first); a handler registered while exit runs the handlers
 * runs next after the one that registered it, here _dl_fini, so after
 * every destructor, and before the handlers registered earlier
 * (memcheck's).  Not the parent's ru_maxrss: on this kernel (6.18) the
 * RSS counters the mark is kept from are per-CPU and folded lazily, and
 * wait4 gave 1,228 KiB where the program had read VmHWM 1,300 at main's
 * end (up to 188 KiB low). */
static void rss_self_exit_print(int status, void *arg)
{
	(void)status, (void)arg;
	rss_self_line("rss_self_exit: ", "hwm", "VmHWM:");
	rss_self_line("rss_self_exit: ", "rss", "VmRSS:");
}

__attribute__((destructor)) static void rss_self_exit_register(void)
{
	on_exit(rss_self_exit_print, NULL);
}

/* "rss_self_fini: rss=R\n" on stdout: VmRSS where memcheck's destructor
 * takes its exit figures, after the program's own finalization and
 * before any library's destructor (the dynamic linker finalizes the
 * program first, a preloaded libmemcheck next); shown beside the very
 * end's, where rss_end is read again.  A destructor of priority 101
 * runs after the program's other destructors and after crtbegin's
 * __do_global_dtors_aux, whose __cxa_finalize calls the C library's
 * __unregister_atfork: under glibc a 64 KiB block of its code that a
 * program which never forks faults in only there (gdb: the program's
 * __do_global_dtors_aux, then memcheck's mc_prog_peak_take), 64 KiB
 * between main's end and memcheck's take, bare too. */
__attribute__((destructor(101))) static void rss_self_fini_print(void)
{
	rss_self_line("rss_self_fini: ", "rss", "VmRSS:");
}

/* One line of /proc/self/maps (line, n bytes, no newline) to out: where
 * it maps a file, the line and its pages' present bits from pagemap
 * (pm), '#' present, '.' not, 64 to a line. */
static void rss_self_pages_of(int out, int pm, const char *line, size_t n)
{
	char *end;
	unsigned long long lo = strtoull(line, &end, 16), hi;
	if (*end != '-')
		return;
	hi = strtoull(end + 1, &end, 16);
	const char *path = (const char *)memchr(line, '/', n);
	if (!path || hi <= lo || write(out, line, n) < 0 || write(out, "\n", 1) < 0)
		return;
	char bits[65];
	unsigned long long e[64];
	for (unsigned long long a = lo; a < hi; a += 64 * 4096ull) {
		size_t k = (hi - a) / 4096 < 64 ? (size_t)((hi - a) / 4096) : 64;
		ssize_t got = pread(pm, e, k * 8, (off_t)(a / 4096 * 8));
		for (size_t i = 0; i < k; i++)
			bits[i] = got == (ssize_t)(k * 8) && e[i] >> 63 ? '#' : '.';
		bits[k] = '\n';
		if (write(out, bits, k + 1) < 0)
			return;
	}
}

/* RSS_SELF_PAGES=FILE: each file mapping's pages, present or not, as
 * they are at the program's figures (rss_self_pages_of): the files of a
 * run without memcheck and one under it, compared with diff, show page
 * by page which pages of which library one run holds and the other not
 * (how doc/costs.md's session 29 found libstdc++'s two blocks at
 * .eh_frame_hdr, present in both and counted as memcheck's). */
static void rss_self_pages(const char *to)
{
	int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[8192];
	size_t have = 0;
	ssize_t n;
	while (in >= 0 && pm >= 0 && out >= 0 &&
	       (n = read(in, buf + have, sizeof buf - have)) > 0) {
		have += (size_t)n;
		char *at = buf, *nl;
		while ((nl = (char *)memchr(at, '\n', have - (size_t)(at - buf)))) {
			rss_self_pages_of(out, pm, at, (size_t)(nl - at));
			at = nl + 1;
		}
		have -= (size_t)(at - buf);
		memmove(buf, at, have);
		if (have == sizeof buf)
			break; /* a line longer than the buffer: not maps' */
	}
	if (in >= 0)
		close(in);
	if (pm >= 0)
		close(pm);
	if (out >= 0)
		close(out);
}

/* "rss_self: start=S end=E hwm=H\n" on stdout: start, the VmRSS that
 * main read first; end and hwm, VmRSS and VmHWM now. */
static void rss_self_print(long long start)
{
	char line[128], *at = line;
	long long end = proc_field("/proc/self/status", "VmRSS:");
	long long hwm = proc_field("/proc/self/status", "VmHWM:");
	memcpy(at, "rss_self: ", 10);
	at += 10;
	rss_self_put(&at, "start", start);
	rss_self_put(&at, "end", end);
	rss_self_put(&at, "hwm", hwm);
	at[-1] = '\n';
	if (write(1, line, (size_t)(at - line)) < 0)
		_exit(3);
	/* RSS_SELF_SMAPS=FILE: /proc/self/smaps as it was at these figures,
	 * to compare a run under memcheck with one without, mapping by
	 * mapping (after the figures: it changes none of them); and
	 * RSS_SELF_PAGES=FILE, page by page. */
	const char *to = getenv("RSS_SELF_SMAPS");
	int in = to ? open("/proc/self/smaps", O_RDONLY | O_CLOEXEC) : -1;
	int out = in >= 0 ? open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
	char buf[16384];
	ssize_t n;
	while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	const char *pages = getenv("RSS_SELF_PAGES");
	if (pages)
		rss_self_pages(pages);
}
#endif
