/*
 * rss.c - the process's resident set size and its high-water mark, read
 * from /proc.  Called inside the hooks and at region boundaries, so it uses
 * only system calls and a stack buffer: no stdio, no malloc.  Each call
 * opens and closes its file because the program may close every fd (or
 * dup2 over ours), and it leaves errno as it found it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Read the start of the file open at fd into buf, NUL-terminated, and
 * close fd; length, or -1 (also for an fd < 0, a failed open).
 * statm and status are made whole by the kernel at the first read(2),
 * which hands over all of the text that fits: a shorter read that ends a
 * line is the end, and the read that would say so (0) is not made (one
 * system call fewer at each of the five to a dozen reads a measured
 * process makes). */
static ssize_t read_fd(int fd, char *buf, size_t cap)
{
	if (fd < 0)
		return -1;
	size_t len = 0;
	while (len < cap - 1) {
		size_t want = cap - 1 - len;
		ssize_t n = mc_sys_read(fd, buf + len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if ((size_t)n < want && buf[len - 1] == '\n')
			break;
	}
	mc_sys_close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}

static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	return read_fd(mc_sys_open(path, O_RDONLY | O_CLOEXEC, 0), buf, cap);
}

/* The process's own file tail under /proc (mc_proc_open). */
static ssize_t read_own(const char *tail, char *buf, size_t cap)
{
	return read_fd(mc_proc_open(tail, O_RDONLY), buf, cap);
}

/* Parse the decimal number at *p, skipping blanks before it. */
static uint64_t parse_u64(const char **p)
{
	const char *s = *p;
	uint64_t v = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	*p = s;
	return v;
}

/* statm's resident pages in bytes, from its text, and *anon (if not
 * NULL) the anonymous ones of them (resident less shared, which is the
 * file pages and shared memory: RssAnon); false where the text is not
 * statm's (seven numbers on one line). */
static bool statm_rss(const char *buf, uint64_t *rss, uint64_t *anon)
{
	const char *p = buf;
	uint64_t pages = 0, shared = 0;
	for (int i = 0; i < 7; i++) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return false;
		uint64_t v = parse_u64(&p);
		if (i == 1)
			pages = v;
		else if (i == 2)
			shared = v;
	}
	if (*p != '\n')
		return false;
	*rss = pages * (uint64_t)mc_page_size(); /* not sysconf: sys.c */
	if (anon)
		*anon = (pages > shared ? pages - shared : 0) * (uint64_t)mc_page_size();
	return true;
}

/* statm read through fd, from its start: a /proc file is made anew by a
 * read at offset 0. */
static bool statm_at(int fd, uint64_t *rss, uint64_t *anon)
{
	char buf[256];
	ssize_t n;
	do
		n = mc_sys_pread(fd, buf, sizeof buf - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return statm_rss(buf, rss, anon);
}

static uint64_t current(uint64_t *anon)
{
	int saved = errno;
	char buf[256];
	uint64_t rss = 0;
	if (anon)
		*anon = 0;
	if (read_own("statm", buf, sizeof buf) > 0 && !statm_rss(buf, &rss, anon))
		rss = 0;
	errno = saved;
	return rss;
}

uint64_t mc_rss_current(void)
{
	return current(NULL);
}

uint64_t mc_rss_current_open(int *fd, uint64_t *anon)
{
	int saved = errno;
	uint64_t rss = 0;
	*fd = mc_proc_open("statm", O_RDONLY);
	if (*fd >= 0 && !statm_at(*fd, &rss, anon)) {
		mc_sys_close(*fd);
		*fd = -1;
	}
	errno = saved;
	return *fd >= 0 ? rss : current(anon);
}

uint64_t mc_rss_current_at(int fd, uint64_t *anon)
{
	if (fd < 0)
		return current(anon);
	int saved = errno;
	uint64_t rss = 0;
	bool ok = statm_at(fd, &rss, anon);
	mc_sys_close(fd);
	errno = saved;
	return ok ? rss : current(anon);
}

/* The start of the line after the one p is on, or end: the newline
 * looked for eight bytes at a time (a status text is ~1.4 kB, of which
 * the three keys read lie in the last two thirds: a byte at a time,
 * ~4,000 instructions of every region's end). */
static const char *next_line(const char *p, const char *end)
{
	const uint64_t ones = 0x0101010101010101ull, nl = 0x0a0a0a0a0a0a0a0aull;
	while (end - p >= 8) {
		uint64_t w;
		__builtin_memcpy(&w, p, 8);
		w ^= nl;
		if ((w - ones) & ~w & (ones << 7))
			break;
		p += 8;
	}
	while (p < end && *p != '\n')
		p++;
	return p < end ? p + 1 : end;
}

/* The number after the line that begins with key ("Name:"), searched
 * from the line at *at on, before end (the keys asked for in their
 * order in the file: each line is looked at once); 0 if there is none. */
static uint64_t status_field(const char **at, const char *end, const char *key)
{
	/* By hand: the lines' starts compared and their ends found with no
	 * C library call (strncmp and strchr ran ~25 times a read, and
	 * strchr was bound at its first call for this alone). */
	for (const char *p = *at; p < end; p = next_line(p, end)) {
		size_t i = 0;
		while (key[i] && p[i] == key[i])
			i++;
		if (!key[i]) {
			p += i;
			uint64_t v = parse_u64(&p);
			*at = p;
			return v;
		}
	}
	return 0;
}

uint64_t mc_rss_peak(unsigned *threads, uint64_t *rss)
{
	int saved = errno;
	/* VmHWM comes early in status (about 1 kB in), VmRSS on the line
	 * after it, Threads later; the buffer holds the whole text (1.4 kB)
	 * and what later kernels may add.  VmRSS is statm's second field
	 * in kB (the same counters): a caller that wants both reads one
	 * file, where the peak's take read status and then statm (three
	 * system calls fewer at every region's end). */
	char buf[4096];
	uint64_t peak = 0;
	if (threads)
		*threads = 0;
	if (rss)
		*rss = 0;
	ssize_t len = read_own("status", buf, sizeof buf);
	if (len > 0) {
		const char *at = buf, *end = buf + len;
		peak = status_field(&at, end, "VmHWM:") * 1024; /* kB */
		if (rss)
			*rss = status_field(&at, end, "VmRSS:") * 1024;
		if (threads)
			*threads = (unsigned)status_field(&at, end, "Threads:");
	}
	errno = saved;
	return peak;
}

bool mc_rss_reset_peak(void)
{
	int saved = errno;
	bool ok = false;
	/* "5" resets only the peak RSS; other values would clear the
	 * referenced/soft-dirty bits that other tools may be relying on. */
	int fd = mc_proc_open("clear_refs", O_WRONLY);
	if (fd >= 0) {
		ssize_t n;
		do
			n = mc_sys_write(fd, "5", 1);
		while (n < 0 && errno == EINTR);
		ok = n == 1;
		mc_sys_close(fd);
	}
	errno = saved;
	return ok;
}

uint64_t mc_rss_faults(void)
{
	int saved = errno;
	struct rusage ru;
	long rc = syscall(SYS_getrusage, RUSAGE_SELF, &ru);
	errno = saved;
	return rc == 0 ? (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt : UINT64_MAX;
}

uint64_t mc_rss_mark_kb(void)
{
	int saved = errno;
	struct rusage ru;
	long rc = syscall(SYS_getrusage, RUSAGE_SELF, &ru);
	errno = saved;
	return rc == 0 && ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss : 0;
}

/* ---- the memory cgroup's limit ----------------------------------------- */

/* The number in the file dir/name (appended in place: dir has room), or
 * false where it is missing or not a number (v2's "max"). */
static bool cgroup_number(char *dir, size_t len, const char *name, uint64_t *v)
{
	char buf[64];
	size_t n = strlen(name);
	if (len + n + 2 > PATH_MAX)
		return false;
	dir[len] = '/';
	memcpy(dir + len + 1, name, n + 1);
	ssize_t got = read_file(dir, buf, sizeof buf);
	dir[len] = 0;
	const char *p = buf;
	if (got <= 0 || *p < '0' || *p > '9')
		return false;
	*v = parse_u64(&p);
	return true;
}

/* The process's memory cgroup: v1's memory controller's line
 * ("N:...memory...:/path", where it is mounted the limits are there)
 * before v2's ("0::/path"); its directory under /sys/fs/cgroup into
 * dir, whose files are then named by *limit and *usage. */
static bool cgroup_dir(char *dir, size_t *rootlen, const char **limit, const char **usage)
{
	char buf[2048];
	ssize_t len = read_file("/proc/self/cgroup", buf, sizeof buf);
	const char *v2 = NULL, *v1 = NULL;
	for (const char *p = buf, *end = buf + (len > 0 ? len : 0); p < end; p = next_line(p, end)) {
		const char *c = p;
		while (c < end && *c != ':' && *c != '\n')
			c++;
		if (c == end || *c != ':')
			continue;
		const char *names = ++c;
		while (c < end && *c != ':' && *c != '\n')
			c++;
		if (c == end || *c != ':')
			continue;
		if (c == names && p[0] == '0' && p + 1 == names - 1)
			v2 = c + 1;
		for (const char *w = names; w + 6 <= c; w++)
			if (!memcmp(w, "memory", 6) && (w == names || w[-1] == ',') &&
			    (w + 6 == c || w[6] == ','))
				v1 = c + 1;
	}
	const char *path = v1 ? v1 : v2;
	if (!path)
		return false;
	const char *root = v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup";
	size_t rl = strlen(root), pl = 0;
	while (path[pl] && path[pl] != '\n')
		pl++;
	if (rl + pl + 1 > PATH_MAX / 2)
		return false;
	memcpy(dir, root, rl);
	memcpy(dir + rl, path, pl);
	dir[rl + pl] = 0;
	*rootlen = rl;
	*limit = v1 ? "memory.limit_in_bytes" : "memory.max";
	*usage = v1 ? "memory.usage_in_bytes" : "memory.current";
	return true;
}

/* The memory cgroup's room (limit less usage), the least of the
 * process's cgroup's and its ancestors'; false where none is limited. */
static bool cgroup_room(uint64_t *room)
{
	char dir[PATH_MAX];
	const char *limit, *usage;
	size_t root;
	bool limited = false;
	if (cgroup_dir(dir, &root, &limit, &usage)) {
		/* The cgroup and each ancestor up to the mount's root: a
		 * limit anywhere above charges this one's pages too.  v1
		 * says no limit with a number near 2^63, v2 with "max". */
		size_t len = strlen(dir);
		while (len > root && dir[len - 1] == '/')
			dir[--len] = 0;
		for (;;) {
			uint64_t max, cur;
			if (cgroup_number(dir, len, limit, &max) && max < ((uint64_t)1 << 62) &&
			    cgroup_number(dir, len, usage, &cur)) {
				uint64_t r = max > cur ? max - cur : 0;
				if (!limited || r < *room)
					*room = r;
				limited = true;
			}
			if (len <= root)
				break;
			while (len > root && dir[len - 1] != '/')
				len--;
			if (len > root)
				len--; /* the slash */
			dir[len] = 0;
		}
	}
	return limited;
}

bool mc_memory_room(uint64_t *room)
{
	int saved = errno;
	char buf[4096];
	bool known = cgroup_room(room);
	/* MemAvailable: what the kernel can give without swapping, page
	 * cache it would drop included (free memory alone is small on a
	 * machine whose cache is full). */
	ssize_t len = read_file("/proc/meminfo", buf, sizeof buf);
	if (len > 0) {
		const char *at = buf;
		uint64_t kb = status_field(&at, buf + len, "MemAvailable:");
		if (at != buf && (!known || kb * 1024 < *room)) {
			*room = kb * 1024;
			known = true;
		}
	}
	errno = saved;
	return known;
}

/* ---- the process's threads ------------------------------------------ */

bool mc_tasks_each(bool (*fn)(pid_t tid, void *arg), void *arg)
{
	int fd = mc_sys_open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	/* getdents64 rather than opendir, which would call malloc */
	size_t bufsize = 16 << 10;
	char *buf = mc_map_io(bufsize);
	bool ok = buf != NULL;
	while (ok) {
		long n = syscall(SYS_getdents64, fd, buf, bufsize);
		if (n <= 0) {
			ok = n == 0;
			break;
		}
		for (long off = 0; ok && off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			const char *p = d->d_name;
			uint64_t tid = parse_u64(&p);
			if (tid && !*p) /* not "." or ".." */
				ok = fn((pid_t)tid, arg);
		}
	}
	if (buf)
		mc_unmap_io(buf, bufsize);
	mc_sys_close(fd);
	return ok;
}

ssize_t mc_task_read(pid_t tid, const char *tail, char *buf, size_t size)
{
	char path[64];
	if (!mc_path_id(path, sizeof path, "/proc/self/task/", (uint64_t)tid, tail))
		return -1;
	return read_file(path, buf, size);
}

bool mc_task_blocked(pid_t tid, uintptr_t *sp, uintptr_t *pc)
{
	char buf[256];
	if (mc_task_read(tid, "/syscall", buf, sizeof buf) < 0 || !strncmp(buf, "running", 7))
		return false;
	char *f[10];
	int n = 0;
	for (char *s = buf; *s && n < 10;) {
		while (*s == ' ' || *s == '\n')
			s++;
		if (!*s)
			break;
		f[n++] = s;
		while (*s && *s != ' ' && *s != '\n')
			s++;
	}
	if (n != 9 && n != 3)
		return false;
	*sp = (uintptr_t)strtoull(f[n - 2], NULL, 16);
	*pc = (uintptr_t)strtoull(f[n - 1], NULL, 16);
	return *sp != 0;
}

/* PF_EXITING in a task's flags (field 9 of its stat): do_exit has
 * begun, the thread runs no more code of its own. */
#define MC_PF_EXITING 0x4u

/* Field n (from 3) of a stat text (/proc/.../stat), or NULL where it
 * has none.  The command name (field 2) may hold spaces and
 * parentheses: fields are counted from the last ')'. */
static const char *stat_field_at(const char *buf, int n)
{
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && *p && field < n; p++)
		if (*p == ' ')
			field++;
	return p && *p >= '0' && *p <= '9' ? p : NULL;
}

bool mc_proc_stat(pid_t pid, const int *fields, uint64_t *values, int n)
{
	char path[64] = "/proc/self/stat", buf[1024];
	if (pid && !mc_path_id(path, sizeof path, "/proc/", (uint64_t)pid, "/stat"))
		return false;
	if (read_file(path, buf, sizeof buf) <= 0)
		return false;
	for (int i = 0; i < n; i++) {
		const char *p = stat_field_at(buf, fields[i]);
		if (!p)
			return false;
		values[i] = parse_u64(&p);
	}
	return true;
}

uint64_t mc_stat_field(int n)
{
	int saved = errno;
	uint64_t v;
	bool ok = mc_proc_stat(0, &n, &v, 1);
	errno = saved;
	return ok ? v : 0;
}

bool mc_task_exiting(pid_t tid)
{
	char buf[1024];
	/* Gone since it was listed: the open fails, or (reaped between the
	 * open and the read) the read gives an error or nothing. */
	if (mc_task_read(tid, "/stat", buf, sizeof buf) <= 0)
		return true;
	const char *p = stat_field_at(buf, 9);
	return p && (parse_u64(&p) & MC_PF_EXITING);
}

static bool exiting(pid_t tid, void *self)
{
	return tid == *(pid_t *)self || mc_task_exiting(tid);
}

/* glibc's own flag (<sys/single_threaded.h>, 2.32 on): true while the
 * process has created no thread through the C library, in a forked
 * child too.  Weak: another C library leaves it out. */
extern char __libc_single_threaded __attribute__((weak));

bool mc_never_threaded(void)
{
	return &__libc_single_threaded && __libc_single_threaded;
}

bool mc_threads_alone(void)
{
	int saved = errno;
	pid_t self = mc_tid();
	bool alone = mc_tasks_each(exiting, &self);
	errno = saved;
	return alone;
}
