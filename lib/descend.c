/*
 * descend.c - a descendant's failure fails its measured ancestors.
 *
 * A test process whose region failed exits with MEMCHECK_EXITCODE
 * (exitstatus.c), but a test driver sees only the status of the
 * process it started.  Where that process runs the test in a child and
 * ignores the child's status, the leak is lost: Criterion's runner
 * (BoxFort) forgets a worker's status once the test reported its end,
 * and a program that forks a worker and does not look at how it ended
 * is common.  Measured (crit26, Criterion 2.4.1, a 3-test suite with
 * one leaking test): preloaded, and under `ctest -T memcheck` with
 * memcheck as the checker, the suite exited 0 (ctest: Passed, its one
 * defect counted but ctest's status 0); valgrind does the same there.
 * So a process whose region failed leaves a record for each of its
 * measured ancestors, and an ancestor about to exit 0 with no region of
 * its own failed exits with MEMCHECK_EXITCODE when it finds one.
 *
 * How, and the traps that shaped it:
 * - Nothing is set up at start-up, nothing added to the environment or
 *   to the descriptors: a program that prints its environment, counts
 *   its descriptors or execs a child with a clean environment behaves as
 *   without memcheck.  The failing process finds its ancestors itself,
 *   at its exit, through /proc/PID/stat's parent links.
 * - The walk goes up while the ancestors have libmemcheck in their
 *   mappings (/proc/PID/maps: asked of the kernel at libmemcheck's link
 *   address, then its code mapping by mapping where that does not
 *   settle it, not the whole file read), and ends at the first that has
 *   not.
 * - An ancestor is written to only where it will read: libmemcheck is
 *   in its mappings and the programs rule measures its
 *   executable (/proc/PID/exe; MEMCHECK_PROGRAMS as this process has it,
 *   inherited; the interpreter-running-a-script half of the default is
 *   this process's own to tell and is not applied).  A left-out shell
 *   or tool only forwards and would never read its record.
 * - The record: one line "STARTTIME PID REGIONS PROGRAM" appended
 *   (O_APPEND, one write: whole lines from processes writing at once)
 *   to memcheck-fail-ANCESTOR in $XDG_RUNTIME_DIR, else $TMPDIR, else
 *   /tmp; STARTTIME (stat's 22nd field) names the ancestor, not its
 *   pid alone, which the system may reuse.  Opened with O_NOFOLLOW and
 *   O_NONBLOCK (a FIFO another user put there would hold the exit), and
 *   taken only from a regular file of the process's own user.
 * - The reader's cost: one open(2) that fails, at the exit of every
 *   measured process (also one that exits non-zero: a check runner
 *   exits 1 after a forked test failed, and the record its test left
 *   must not stay behind); nothing where the status is the program's
 *   (MEMCHECK_EXITCODE=0, MEMCHECK_ANCESTORS=0).  The walk and the
 *   writes are a failing process's only.
 * - Not in secure execution (a setuid or setgid program): the directory
 *   comes from the environment its user sets.
 * - Not covered: an ancestor the programs rule leaves out (a shell
 *   script's test: the shell passes; `memcheck run` reads every
 *   process's records and fails it), a process that leaves by _exit
 *   from a forked child (no region ends there; a killed one's record
 *   does end its regions: exitstatus.c), a descendant that fails after its
 *   ancestor exited (a daemon: its record is removed again when the
 *   ancestor is gone; one written after the ancestor read its file but
 *   before it was gone stays until a process of that pid reads it), an
 *   ancestor in another pid namespace, an ancestor whose libmemcheck
 *   lies elsewhere while nothing lies at this one's link address (a
 *   build linked at another address).
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Parent links followed at most (a test tree is a few levels deep; a
 * loop is impossible, but /proc may change under the walk). */
#define MAX_DEPTH 64

/* s appended at *w, within end; false where it does not fit.  Loops of
 * memcheck's own, not strlen and memcpy: the reader's path, run at
 * every measured process's exit, binds no function of the C library's.
 * And no function the library did not import before (strtol, unlink):
 * each new import was ~370 instructions of symbol lookup at every
 * process's load (callgrind, ld.so's strcmp: +1,122 for three). */
static bool put(char **w, char *end, const char *s)
{
	for (; *s; s++) {
		if (*w + 1 >= end)
			return false;
		*(*w)++ = *s;
	}
	**w = 0;
	return true;
}

/* A decimal number at *p, *p moved past it. */
static unsigned long long number(const char **p)
{
	unsigned long long v = 0;
	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + (unsigned)(**p - '0');
	return v;
}

static void remove_file(const char *path)
{
	syscall(SYS_unlink, path);
}

/* The record file of process pid: false where the path does not fit.
 * The directory: $XDG_RUNTIME_DIR, else $TMPDIR, else /tmp, found in one
 * walk of the environment. */
static bool record_path(char *path, size_t size, pid_t pid)
{
	/* A setuid or setgid program (secure execution) would create and
	 * remove files with its privileges in a directory its untrusting
	 * user names: none, as options.c reads no MEMCHECK_* there. */
	if (getauxval(AT_SECURE))
		return false;
	const char *xdg = NULL, *tmp = NULL;
	for (char **e = environ; e && *e; e++) {
		const char *v;
		if ((v = mc_str_after(*e, "XDG_RUNTIME_DIR=")))
			xdg = v;
		else if ((v = mc_str_after(*e, "TMPDIR=")))
			tmp = v;
	}
	const char *dir = xdg && xdg[0] == '/' ? xdg : tmp && tmp[0] == '/' ? tmp : "/tmp";
	/* in place: a copy of the directory's part in a buffer of its own
	 * was a stack page more at every measured process's exit */
	char *w = path, *end = path + size;
	return put(&w, end, dir) && put(&w, end, "/memcheck-fail-") &&
	       mc_path_id(w, (size_t)(end - w), "", (uint64_t)pid, "");
}

/* Process pid's parent and start time. */
static bool stat_of(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	static const int fields[] = { MC_STAT_PPID, MC_STAT_START_TIME };
	uint64_t v[2];
	if (!mc_proc_stat(pid, fields, v, 2))
		return false;
	*ppid = (pid_t)v[0];
	*start = v[1];
	return true;
}

static const char memcheck_name[] = "/libmemcheck";

/* Whether the maps file fd names libmemcheck among its objects' code,
 * asked of the kernel (PROCMAP_QUERY, Linux 6.11+) mapping by mapping,
 * the others skipped by the kernel itself: 1 or 0, -1 where it cannot
 * be asked (an older kernel; then the file is still unread).  A bare
 * shell, the usual parent, has five such mappings (itself, its
 * libraries, the dynamic linker) of some forty: reading its whole maps
 * had the kernel print each line, ~19 us of a measured /bin/date's
 * exit (short33's profile). */
static int names_memcheck_code(int fd)
{
	char name[4096];
	/* zeroed: under valgrind, which knows nothing of what the ioctl
	 * writes there, the name would be undefined */
	memset(name, 0, sizeof name);
	struct mc_mapping m;
	uintptr_t at = 0;
	int rc;
	while ((rc = mc_maps_query_code(fd, at, &m, name, sizeof name)) == 1) {
		if (strstr(name, memcheck_name))
			return 1;
		at = m.hi;
	}
	return rc;
}

/* The address libmemcheck is linked at (GNUmakefile's MC_LOAD_ADDR),
 * which the dynamic linker asks of mmap for it in every process that
 * loads it; 0 where it is linked at none (into the program, from
 * libmemcheck.a). */
static uintptr_t link_address(void)
{
	if (mc_own_is_program())
		return 0;
	int n;
	const ElfW(Phdr) *ph = mc_own_phdrs(&n, NULL);
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD)
			return (uintptr_t)(ph[i].p_vaddr - ph[i].p_offset);
	return 0;
}

/* Whether the maps file fd shows libmemcheck at its link address, asked
 * of the kernel for that one address: 1 there, 0 where nothing is
 * mapped there, -1 where the answer is not that plain (something else
 * lies there; no link address; an older kernel): then the code
 * mappings are walked.  libmemcheck is placed at its link address in
 * every process unless it was taken when the library loaded, which
 * nothing but the program itself can map first, 1 TiB below where the
 * kernel places mappings (under valgrind too): with nothing there, the
 * ancestor has no libmemcheck of this build's address.  A bare shell,
 * the usual parent, answered in one ioctl where its walk took eight
 * (PROCMAP_QUERY mapping by mapping: the program, its libraries, the
 * dynamic linker, and the query that finds none after them). */
static int memcheck_at_link_address(int fd)
{
	uintptr_t at = link_address();
	if (!at)
		return -1;
	char name[4096];
	/* zeroed: valgrind knows nothing of what the ioctl writes */
	memset(name, 0, sizeof name);
	struct mc_mapping m;
	int rc = mc_maps_query(fd, at, false, &m, name, sizeof name);
	if (rc == 0)
		return 0;
	return rc == 1 && strstr(name, memcheck_name) ? 1 : -1;
}

/* Does process pid have libmemcheck mapped?  Asked of the kernel where
 * it can answer (at its link address, else mapping by mapping), else
 * its maps read in pieces, the name looked for across each piece's
 * end. */
static bool has_memcheck(pid_t pid)
{
	char path[64];
	if (!mc_path_id(path, sizeof path, "/proc/", (uint64_t)pid, "/maps"))
		return false;
	int fd = mc_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	int asked = memcheck_at_link_address(fd);
	if (asked < 0)
		asked = names_memcheck_code(fd);
	if (asked >= 0) {
		mc_sys_close(fd);
		return asked == 1;
	}
	const size_t keep = sizeof memcheck_name - 2;
	char buf[4096];
	size_t have = 0;
	bool found = false;
	for (;;) {
		long n = mc_sys_read(fd, buf + have, sizeof buf - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		if (strstr(buf, memcheck_name)) {
			found = true;
			break;
		}
		if (have > keep) {
			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	mc_sys_close(fd);
	return found;
}

/* Will process pid, which has memcheck loaded, read a record: is its
 * program one the rule measures? */
static bool will_read(pid_t pid)
{
	char link[64], exe[4096];
	if (!mc_path_id(link, sizeof link, "/proc/", (uint64_t)pid, "/exe"))
		return false;
	ssize_t n = readlink(link, exe, sizeof exe - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	return mc_opt.programs ? mc_program_matches(mc_opt.programs, exe)
			       : !mc_program_installed(exe);
}

/* Append line to ancestor pid's record file, of this user's only; then
 * removed again if the ancestor is gone (it can no longer read it). */
static void record(pid_t pid, unsigned long long start, const char *line, size_t len)
{
	char path[4096];
	if (!record_path(path, sizeof path, pid))
		return;
	int fd = mc_sys_open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			     0600);
	if (fd < 0)
		return;
	struct stat st;
	if (mc_sys_fstat(fd, &st) == 0 && st.st_uid == geteuid() && S_ISREG(st.st_mode))
		(void)mc_file_write(fd, line, len);
	mc_sys_close(fd);
	pid_t pp;
	unsigned long long now;
	if (!stat_of(pid, &pp, &now) || now != start)
		remove_file(path);
}

/* Here, not in exitstatus.c: this file reads it, and exitstatus.c calls
 * this file (layers-check: no circle). */
int mc_exit_own = -1;

void mc_descend_fail(unsigned regions)
{
	/* a process that exits non-zero on its own keeps its failure: its
	 * status told its parent (exitstatus.c's head); one killed (-1:
	 * no exit) passes it on */
	if (!mc_opt.ancestors || mc_opt.exitcode == 0 || mc_exit_own > 0 ||
	    getauxval(AT_SECURE))
		return;
	int saved = errno;
	/* The program's path is named in a record only: asked at the first
	 * (a readlink fewer where no ancestor reads one, the usual case) */
	char exe[4096] = "";
	struct mc_buf line = { 0 };
	pid_t pid = (pid_t)syscall(SYS_getppid);
	for (int depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
		/* The walk ends at the first ancestor without memcheck: the
		 * preload comes down the tree through the environment, so
		 * above a process that has none (the shell that set
		 * LD_PRELOAD for one command, ctest, make started bare,
		 * `memcheck run` itself) no ancestor is the test's.  A
		 * measured /bin/date failing under bench/suite.sh walked to
		 * init, 53 system calls (strace -c: 251 against 198 with
		 * MEMCHECK_ANCESTORS=0); now its first ancestor ends it.
		 * Asked before the ancestor's stat, which only an ancestor
		 * with memcheck needs: a failing test whose driver runs bare
		 * opens, reads and closes no /proc/PID/stat (3 system calls,
		 * ~14 us). */
		if (!has_memcheck(pid))
			break;
		pid_t ppid = 0;
		unsigned long long start;
		if (!stat_of(pid, &ppid, &start))
			break;
		if (will_read(pid)) {
			if (!exe[0]) {
				ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
				exe[n > 0 ? n : 0] = 0;
				if (n <= 0)
					memcpy(exe, "?", 2);
			}
			line.len = 0;
			mc_buf_u64(&line, start);
			mc_buf_puts(&line, " ");
			mc_buf_int(&line, mc_pid());
			mc_buf_puts(&line, " ");
			mc_buf_u64(&line, regions);
			mc_buf_strs(&line, " ", exe, "\n", NULL);
			if (!line.oom)
				record(pid, start, line.s, line.len);
		}
		pid = ppid;
	}
	mc_buf_free(&line);
	errno = saved;
}

/* A record exists for this process's pid (open in fd): read, removed,
 * and, where say, said.  How many processes it names failed; the first's
 * "PID REGIONS PROGRAM" into *pid, *regions and program (size bytes, may
 * be 0).  Out of line, rare: its buffer, 8 KiB, lay in the reader's
 * frame, under which every measured process's exit then went two stack
 * pages deeper (test_codeblocks' shallow_exit: a passing plain_clean with
 * the defaults, 1-3 pages more than bare). */
static __attribute__((noinline)) unsigned record_read(int fd, const char *path, bool say,
						       unsigned long long *pid,
						       unsigned long long *regions, char *program,
						       size_t size)
{
	struct stat st;
	bool ours = mc_sys_fstat(fd, &st) == 0 && st.st_uid == geteuid() && S_ISREG(st.st_mode);
	char buf[8192];
	long len = ours ? mc_sys_read(fd, buf, sizeof buf - 1) : -1;
	mc_sys_close(fd);
	if (!ours)
		return 0;
	remove_file(path); /* read: a later process with this pid starts clean */
	buf[len > 0 ? len : 0] = 0;
	unsigned long long me = mc_stat_field(MC_STAT_START_TIME);
	unsigned processes = 0;
	const char *first = NULL;
	for (char *p = buf; *p;) {
		char *end = strchr(p, '\n');
		if (!end)
			break; /* a line cut by the buffer's end */
		*end = 0;
		const char *rest = p;
		if (number(&rest) == me && *rest == ' ') {
			if (!processes)
				first = rest + 1;
			processes++;
		}
		p = end + 1;
	}
	if (!processes)
		return 0;
	/* first: "PID REGIONS PROGRAM" */
	const char *r = first;
	*pid = number(&r);
	r += *r == ' ';
	*regions = number(&r);
	const char *prog = *r == ' ' ? r + 1 : "?";
	if (size) {
		size_t n = strlen(prog);
		n = n < size - 1 ? n : size - 1;
		memcpy(program, prog, n);
		program[n] = 0;
	}
	if (say && mc_opt.text != MC_TEXT_NONE)
		mc_log("exit status %d instead of 0: descendant process %llu (%s) failed %llu "
		       "region%s%s (MEMCHECK_ANCESTORS=0 leaves a descendant's failure to its "
		       "parent)",
		       mc_opt.exitcode, *pid, prog, *regions, *regions == 1 ? "" : "s",
		       processes > 1 ? ", and other descendants failed too" : "");
	return processes;
}

/* The records left for this process's pid, taken (record_read); errno
 * kept. */
static unsigned records_take(bool say, unsigned long long *pid, unsigned long long *regions,
			     char *program, size_t size)
{
	*pid = *regions = 0;
	if (size)
		program[0] = 0;
	if (!mc_opt.ancestors)
		return 0;
	char path[4096];
	if (!record_path(path, sizeof path, mc_pid()))
		return 0;
	int saved = errno;
	int fd = mc_sys_open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
	unsigned processes = fd < 0 ? 0 : record_read(fd, path, say, pid, regions, program, size);
	errno = saved;
	return processes;
}

unsigned mc_descend_take(unsigned long long *pid, unsigned long long *regions, char *program,
			 size_t size)
{
	return records_take(false, pid, regions, program, size);
}

bool mc_descend_failed(bool say)
{
	unsigned long long pid, regions;
	return records_take(say, &pid, &regions, NULL, 0) > 0;
}
