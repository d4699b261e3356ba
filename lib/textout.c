/*
 * textout.c - where memcheck's text goes, and the files it writes to:
 * mc_write_all (SIGPIPE never raised, nor SIGXFSZ: mc_file_write too,
 * for memcheck's caches), the report, log and suppression files opened
 * for appending (no FIFO waited for, no planted symlink followed, one
 * record a write under an flock), MEMCHECK_LOG's file or
 * memcheck's own copy of standard error, each checked before a write
 * (mc_text_fd), and mc_log's lines.  The text itself is built in a
 * struct mc_buf (buf.c).  No stdio on the hooks' paths: system calls
 * into the caller's buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* How long a write to a file that can make it wait (a pipe, a FIFO, a
 * socket) may wait for room: until deadline (mc_now's), set at the
 * first wait to wait seconds from then (0: not yet); no_wait: only what
 * the file takes at once. */
struct bound {
	double deadline;
	int wait;
	bool no_wait;
};

/* The end's text and reports: MEMCHECK_TEXT_TIMEOUT's seconds in all
 * (mc_text_hold); no wait at all in the watchdog's salvage. */
static struct bound hold_bound;

/* Seconds left of b's wait, its deadline set at the first ask. */
static double bound_left(struct bound *b)
{
	if (b->deadline == 0)
		b->deadline = mc_now() + b->wait;
	return b->deadline - mc_now();
}

/* A write to fd that waits for room until b's deadline at most: poll
 * for room (the clock read only where there is none at once), then at
 * most PIPE_BUF bytes, which a pipe with room for any takes whole
 * without waiting (one page of its ring free), as a socket whose buffer
 * poll calls writable does; -1 and ETIMEDOUT where there was none by
 * then. */
static __attribute__((noinline, cold)) long wait_room(struct pollfd *p, struct bound *b)
{
	double left = bound_left(b);
	return left > 0 ? syscall(SYS_poll, p, 1, (int)(left * 1000) + 1) : 0;
}

static __attribute__((noinline, cold)) long write_by(int fd, const char *s, size_t n,
						      struct bound *b)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	long r = syscall(SYS_poll, &p, 1, 0);
	if (r == 0 && !b->no_wait)
		r = wait_room(&p, b); /* a stall: rare, its code apart */
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0)
		return -1;
	/* POLLERR, POLLHUP, POLLNVAL: the write says which */
	return mc_sys_write(fd, s, n < PIPE_BUF ? n : PIPE_BUF);
}

/* RLIMIT_FSIZE: a write past the soft limit raises SIGXFSZ, whose
 * default action dumps core.  A program that wrote less than its limit
 * was killed by memcheck's own text or record past it (its report file,
 * its standard error a file the program had filled to the limit), where
 * bare it exited as it chose.  So where the limit is finite, SIGXFSZ is
 * blocked around memcheck's writes as SIGPIPE is, and the one a write
 * raised taken back: the write fails with EFBIG (a record then counts
 * as dropped: mc_append_dropped).  The limit read at the process's
 * first write (one getrlimit), again after the program sets one
 * (limits.c's wrappers: mc_text_fsize_forget); one set by a raw
 * syscall(2) or by another process (prlimit(1)) is not seen. */
#define FSIZE_UNKNOWN 0
#define FSIZE_UNLIMITED 1
#define FSIZE_LIMITED 2
static _Atomic int fsize_state;
static uint64_t fsize_max; /* the soft limit, where FSIZE_LIMITED */

void mc_text_fsize_forget(void)
{
	atomic_store_explicit(&fsize_state, FSIZE_UNKNOWN, memory_order_relaxed);
}

static __attribute__((noinline, cold)) int fsize_read(void)
{
	/* Not read where a seccomp filter of the program's refuses the
	 * call (said once, as any call of memcheck's it refuses): taken for
	 * none, as before session 40, the records written. */
	int saved = errno;
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };
	syscall(SYS_getrlimit, RLIMIT_FSIZE, &r);
	fsize_max = (uint64_t)r.rlim_cur;
	int st = r.rlim_cur != RLIM_INFINITY ? FSIZE_LIMITED : FSIZE_UNLIMITED;
	errno = saved;
	atomic_store_explicit(&fsize_state, st, memory_order_release);
	return st;
}

static inline bool fsize_limited(void)
{
	int st = atomic_load_explicit(&fsize_state, memory_order_acquire);
	return (likely(st != FSIZE_UNKNOWN) ? st : fsize_read()) == FSIZE_LIMITED;
}

/* SIGPIPE (where pipe says a write can raise it) and SIGXFSZ (where the
 * file size is limited) blocked around memcheck's writes, and the one
 * a failed write raised (EPIPE's, EFBIG's) taken back, unless one was
 * pending already.  As the kernel's masks: bit sig - 1, in the first
 * word of the C library's sigset_t. */
struct held_sigs {
	sigset_t old;
	unsigned long mask, pending;
};

#define SIG_BIT(sig) (1ul << ((sig) - 1))

/* False: nothing to hold (no system call made). */
static inline __attribute__((always_inline)) bool sigs_hold(struct held_sigs *h, bool pipe)
{
	h->mask = (pipe ? SIG_BIT(SIGPIPE) : 0) | (fsize_limited() ? SIG_BIT(SIGXFSZ) : 0);
	if (!h->mask)
		return false;
	sigset_t set = { { h->mask } };
	h->pending = 0;
	pthread_sigmask(SIG_BLOCK, &set, &h->old);
	if (sigpending(&set) == 0)
		h->pending = set.__val[0] & h->mask;
	return true;
}

static inline __attribute__((always_inline)) void sigs_release(struct held_sigs *h, int err)
{
	unsigned long raised = err == EPIPE ? SIG_BIT(SIGPIPE) : err == EFBIG ? SIG_BIT(SIGXFSZ) : 0;
	if (raised & h->mask & ~h->pending) {
		sigset_t one = { { raised } };
		struct timespec now = { 0, 0 };
		sigtimedwait(&one, NULL, &now);
	}
	pthread_sigmask(SIG_SETMASK, &h->old, NULL);
}

/* SIGPIPE is blocked around the write: a pipe whose reader has gone
 * (prog 2>&1 | head -1) would otherwise kill the program at its exit
 * report, which it survived without memcheck; SIGXFSZ too where the
 * file size is limited (above).  bound: each write waits until its
 * deadline at most (write_by); NULL: as long as the file makes it. */
static int write_all(int fd, const char *s, size_t n, bool may_pipe, struct bound *bound)
{
	int saved = errno, err = 0;
	struct held_sigs h;
	bool held = sigs_hold(&h, may_pipe);
	while (n > 0) {
		ssize_t w = unlikely(bound != NULL) ? write_by(fd, s, n, bound) : mc_sys_write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		s += w;
		n -= (size_t)w;
	}
	if (held)
		sigs_release(&h, err);
	errno = saved;
	return err;
}

/* One write(2) to a regular file of memcheck's own (its caches, the
 * file its measured ancestors read), SIGXFSZ held as write_all holds
 * it: what the write returns, errno EFBIG past the limit. */
long mc_file_write(int fd, const void *s, size_t n)
{
	struct held_sigs h;
	bool held = sigs_hold(&h, false);
	long w = mc_sys_write(fd, s, n);
	if (held) {
		int e = errno;
		sigs_release(&h, w < 0 ? e : 0);
		errno = e;
	}
	return w;
}

/* ---- the text of a process's end, held -------------------------------
 * A process's end (life.c: the exit, _exit, a fatal signal's record)
 * writes the text first, the JSON report after it, and the file its
 * measured ancestors read last (exitstatus.c).  Where standard error is
 * a pipe nobody reads (a parent that collects it only after the child
 * has ended, a full pipe) the text's first line blocks: an exit waited
 * for ever, where bare the program, its own writes done, had exited; a
 * killed process waited for the watchdog, which ended it with nothing
 * written.  So the writing thread's text is kept in memcheck's memory
 * meanwhile and written last, by mc_text_hold_end, for at most the
 * bound mc_text_hold was given (MEMCHECK_TEXT_TIMEOUT) where the file
 * can make a write wait (a pipe, a FIFO, a socket): what it has not
 * taken by then is dropped, and the rest of the process's text (the
 * exit status's line) waits no more: it goes only where the file has
 * room at once.  A regular file or a terminal is written as always.
 * Other threads write as always (the end's thread is the only one held:
 * a test of one word where nothing is held). */
static _Atomic pid_t hold_tid;
static struct mc_buf held_text;
/* Set while a piece is added or the text written (the watchdog's
 * salvage leaves the buffer alone then). */
static atomic_bool hold_busy;

struct held_write {
	int fd;
	bool may_pipe;
	size_t n;
};

void mc_text_hold(int wait_seconds)
{
	/* This thread's hold already: a killed process's record begun
	 * inside the exit's end (a SIGTERM owed to the guard's coming down
	 * there).  Freed, the exit's text, held until its report was
	 * written, died with the process unsaid (harden48): kept, and
	 * written by the record's mc_text_hold_end. */
	if (atomic_load(&hold_tid) == mc_tid())
		return;
	mc_buf_free(&held_text);
	hold_bound = (struct bound){ 0, wait_seconds, false };
	atomic_store(&hold_tid, mc_tid());
}

static int text_lost(int fd, int err);

/* The held pieces in order, until one waits past the bound: a piece to a
 * file that can make it wait written within the bound (write_all's),
 * else whole; MEMCHECK_LOG's file full, this piece and the rest on
 * standard error (text_lost). */
static void held_out(void)
{
	struct held_write h;
	int lost = -1, to = -1;
	for (size_t off = 0; off + sizeof h <= held_text.len; off += h.n) {
		memcpy(&h, held_text.s + off, sizeof h);
		off += sizeof h;
		if (h.n > held_text.len - off)
			return;
		int fd = h.fd == lost ? to : h.fd;
		bool may_pipe = h.fd == lost || h.may_pipe;
		int e = write_all(fd, held_text.s + off, h.n, may_pipe,
				  may_pipe ? &hold_bound : NULL);
		if (e == ETIMEDOUT)
			return;
		if (e && lost < 0 && (to = text_lost(fd, e)) >= 0) {
			lost = fd;
			write_all(to, held_text.s + off, h.n, true, &hold_bound);
		}
	}
}

/* What was held written (within the bound), the buffer emptied. */
static void held_flush(void)
{
	atomic_store(&hold_busy, true);
	held_out();
	mc_buf_free(&held_text);
	atomic_store(&hold_busy, false);
}

/* Kept for mc_text_hold_end: true; false where nothing is held by this
 * thread.  Where memory runs out, what was kept goes first, then the
 * piece, each within the bound. */
static __attribute__((noinline, cold)) bool hold_write(int fd, const char *s, size_t n,
							  bool may_pipe)
{
	pid_t t = atomic_load_explicit(&hold_tid, memory_order_relaxed);
	if (likely(t == 0) || t != mc_tid())
		return false;
	struct held_write h = { fd, may_pipe, n };
	atomic_store(&hold_busy, true);
	char *w = mc_buf_room(&held_text, sizeof h + n);
	if (w) {
		memcpy(w, &h, sizeof h);
		memcpy(w + sizeof h, s, n);
		mc_buf_end(&held_text, w + sizeof h + n);
	}
	atomic_store(&hold_busy, false);
	if (!w) {
		held_flush();
		write_all(fd, s, n, may_pipe, may_pipe ? &hold_bound : NULL);
	}
	return true;
}

void mc_text_hold_end(void)
{
	if (atomic_load(&hold_tid) != mc_tid())
		return;
	atomic_store(&hold_tid, 0);
	/* most processes' end says nothing: no clock read, no call */
	if (held_text.len)
		held_flush();
}

size_t mc_text_hold_mark(void)
{
	return atomic_load(&hold_tid) == mc_tid() ? held_text.len : 0;
}

void mc_text_hold_cut(size_t from, size_t to)
{
	if (atomic_load(&hold_tid) != mc_tid() || from >= to || to > held_text.len)
		return;
	atomic_store(&hold_busy, true);
	memmove(held_text.s + from, held_text.s + to, held_text.len - to);
	held_text.len -= to - from;
	atomic_store(&hold_busy, false);
}

/* The watchdog ends a record that took too long (fatal.c), in the
 * writing thread's signal handler: what the record held so far (its
 * "killed by signal" line first) is written where it cannot wait; the
 * rest is lost with the process. */
void mc_text_hold_salvage(void)
{
	if (atomic_load(&hold_tid) != mc_tid() || atomic_load(&hold_busy))
		return;
	atomic_store(&hold_tid, 0);
	hold_bound.no_wait = true;
	held_out();
}

/* The text's writes: held in a killed process's record, else made. */
static inline __attribute__((always_inline)) int text_write(int fd, const char *s, size_t n,
							     bool may_pipe)
{
	if (unlikely(atomic_load_explicit(&hold_tid, memory_order_relaxed) != 0) &&
	    hold_write(fd, s, n, may_pipe))
		return 0;
	return write_all(fd, s, n, may_pipe, NULL);
}

/* The same, and where MEMCHECK_LOG's file cannot take it, on standard
 * error (text_lost): the log's lines and the text's pieces. */
static inline __attribute__((always_inline)) int text_write_kept(int fd, const char *s, size_t n,
								  bool may_pipe)
{
	int e = text_write(fd, s, n, may_pipe), to;
	if (unlikely(e != 0) && (to = text_lost(fd, e)) >= 0)
		e = write_all(to, s, n, true, NULL);
	return e;
}


/* ---- files memcheck writes to ------------------------------------------
 * Report, log and suppression files are named by the user, and written
 * by every process of a test run, children included.  Three traps.  A
 * FIFO nobody reads makes open(2) wait forever (at the program's exit):
 * it is opened without blocking, which fails there (ENXIO).  Records of
 * several processes written to one FIFO or pipe interleave once they are
 * longer than PIPE_BUF: a record is written under an flock of it.  And a
 * symlink planted in a shared directory would point memcheck's writes at
 * a file of the victim's: the last component of the path is followed
 * only where the kernel's protected_symlinks would follow it (not in a
 * sticky, world-writable directory such as /tmp, unless the link is the
 * process's own or the directory owner's), whether or not that is on.
 * Files are created 0644 before the umask. */

/* May a symlink at path be followed?  The rule of fs.protected_symlinks. */
static bool symlink_followable(const char *path)
{
	struct stat link, dir;
	if (lstat(path, &link) != 0 || !S_ISLNK(link.st_mode))
		return true; /* gone or replaced: the open decides */
	char parent[4096];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(parent, sizeof parent, ".");
	else if (slash == path)
		snprintf(parent, sizeof parent, "/");
	else
		snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
	if (stat(parent, &dir) != 0)
		return false;
	bool shared = (dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH);
	return !shared || link.st_uid == geteuid() || link.st_uid == dir.st_uid;
}

/* path opened to append, and its status in *st (st_mode 0 when fstat
 * fails).  O_NONBLOCK, which only the open of a FIFO needed, is taken
 * off again where it could matter: a regular file's writes never wait
 * for a reader (two fcntl calls fewer a JSON report). */
static int open_append(const char *path, struct stat *st)
{
	int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int fd = mc_sys_open(path, flags | O_NOFOLLOW, 0644);
	/* ELOOP: a symlink; some kernels (gVisor) say EACCES for one owned
	 * by another user in a sticky directory. */
	if (fd < 0 && (errno == ELOOP || errno == EACCES) && lstat(path, st) == 0 &&
	    S_ISLNK(st->st_mode)) {
		if (!symlink_followable(path)) {
			errno = EPERM;
			return -1;
		}
		fd = mc_sys_open(path, flags, 0644);
	}
	if (fd < 0)
		return -1;
	int saved = errno;
	if (mc_sys_fstat(fd, st) != 0)
		st->st_mode = 0;
	/* Writes block as usual once there is a reader. */
	if (!S_ISREG(st->st_mode))
		mc_sys_fcntl(fd, F_SETFL, mc_sys_fcntl(fd, F_GETFL, 0) & ~O_NONBLOCK);
	errno = saved;
	return fd;
}

int mc_open_append(const char *path)
{
	struct stat st;
	return open_append(path, &st);
}

/* A record's write that stalled (its reader took nothing within the
 * bound): the process's later records take only the room there is at
 * once, each region's end waiting no longer. */
static atomic_bool appends_stalled;

/* The FIFO's lock within b's bound: another process's record may hold
 * it while its own write waits (the same stalled reader). */
static __attribute__((noinline, cold)) int lock_by(int fd, struct bound *b)
{
	for (unsigned ms = 1;; ms = ms < 64 ? ms * 2 : ms) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return errno;
		if (b->no_wait)
			return ETIMEDOUT;
		if (bound_left(b) <= 0)
			return ETIMEDOUT;
		struct timespec t = { 0, (long)ms * 1000000 };
		nanosleep(&t, NULL);
	}
}

/* A record to a pipe or FIFO goes whole or not at all: written in
 * pieces as the reader takes them, a record cut by the bound left its
 * first part as a line of its own in the reader's stream, which the
 * next record (this process's or another's) then continued: two
 * records lost, one line no reader could read.  So the write begins
 * only once the pipe has room for all of it: its size (F_GETPIPE_SZ)
 * less what is unread (FIONREAD), counted in pages, one more for a page
 * the reader has begun and one for the record's pieces straddling
 * pages.  A record larger than the pipe grows it first (F_SETPIPE_SZ,
 * to the power of two pages that holds it: up to
 * /proc/sys/fs/pipe-max-size, 1 MiB, for a process without
 * CAP_SYS_RESOURCE), so that it too goes whole or not at all; the pipe
 * stays that size (the reader reads the same bytes, in fewer wake-ups;
 * its pages are the kernel's only as they fill).  0: room; E2BIG: a
 * record larger than the pipe can be made to hold (written in parts:
 * write_parts); ETIMEDOUT: none within b's bound, nothing written. */
static __attribute__((noinline, cold)) int room_whole(int fd, size_t n, struct bound *b)
{
	int cap = mc_sys_fcntl(fd, F_GETPIPE_SZ, 0), unread;
	/* the record's pages, one more for its pieces straddling pages;
	 * and with nothing unread, the page a reader has begun */
	size_t need = ((n + 4095) & ~(size_t)4095) + 4096, need_empty = need + 4096;
	if (cap <= 0)
		return 0;
	if (need_empty > (size_t)cap) {
		int grown = need_empty <= INT_MAX ? mc_sys_fcntl(fd, F_SETPIPE_SZ, (long)need_empty) : -1;
		if (grown <= 0 || need_empty > (size_t)grown)
			return E2BIG;
		cap = grown;
	}
	for (unsigned ms = 1;; ms = ms < 64 ? ms * 2 : ms) {
		if (mc_sys_ioctl(fd, FIONREAD, &unread) != 0 || unread < 0)
			return 0;
		if (((((size_t)unread + 4095) & ~(size_t)4095) + 4096) + need <= (size_t)cap)
			return 0;
		if (b->no_wait || bound_left(b) <= 0)
			return ETIMEDOUT;
		struct timespec t = { 0, (long)ms * 1000000 };
		nanosleep(&t, NULL);
	}
}

/* ---- a record in parts ------------------------------------------------
 * A record larger than the pipe can be made to hold (past
 * /proc/sys/fs/pipe-max-size, 1 MiB, for a process without
 * CAP_SYS_RESOURCE: plain_bigrecords 0 1024's is 4 MiB) cannot go
 * whole: written in pieces, one cut by the bound (a reader that stalls)
 * left its first part as a line that the next record, this process's or
 * another's, continued.  Such a record goes as parts, each a JSON line
 * of its own no longer than PIPE_BUF (one write(2), which a pipe takes
 * whole, never interleaved with another writer's):
 *   {"part":{"pid":P,"seq":S,"i":I,"n":N},"text":"..."}
 * I from 1 to N, the text the record's next bytes (its newline off) as a
 * JSON string, never a UTF-8 sequence cut; the readers glue them back
 * (tools/records.c) and say a part missing, repeated or out of order
 * with its file and line (memcheck-report(5)).  Still under the FIFO's
 * flock, so that they come one after another. */
static _Atomic uint64_t parts_seq;

/* What a byte of the record costs in a part's text: 1 as it is (printable
 * ASCII; and UTF-8, which memcheck's records are: its own strings
 * escaped with mc_buf_json_at), 2 for '"' and '\\', 6 for a control
 * byte (\u00XX), which a record, one line of JSON, never holds. */
static const uint8_t part_cost[256] = {
	[0 ... 0x1f] = 6, [0x20 ... 0x21] = 1, ['"'] = 2, [0x23 ... 0x5b] = 1, ['\\'] = 2,
	[0x5d ... 0xff] = 1,
};

/* Does s[0..n) hold a control byte?  8 bytes a step: a borrow starts
 * only at a byte below 0x20. */
static bool has_control(const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	size_t k = 0;
	for (uint64_t x; k + 8 <= n; k += 8) {
		__builtin_memcpy(&x, s + k, 8);
		if ((x - ones * 0x20) & ~x & high)
			return true;
	}
	for (; k < n; k++)
		if ((unsigned char)s[k] < 0x20)
			return true;
	return false;
}

/* Where the next part, from s[at] (of n), ends: take bytes of the
 * record (as many as its text holds escaped at the most each byte can
 * cost), fewer where the cut would fall inside a UTF-8 character.  Not
 * the escaped length byte by byte: counted in a first pass (each part
 * carries the count of parts) and again for each part, with
 * mc_buf_json_at's escaping, it cost 232 M instructions for a 4 MiB
 * record (callgrind, plain_bigrecords 0 1024), where the process's
 * whole run on main was 21 M; this way 59 M more (twice the parts,
 * each half full: 2,025 writes of at most 2.3 KB, not 1,030). */
static size_t part_end(const char *s, size_t at, size_t n, size_t take)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t k = n - at > take ? at + take : n, back = k;
	while (k < n && back > at + 1 && (u[back] & 0xc0) == 0x80)
		back--;
	return k < n ? back : k;
}

/* s[at..end) escaped as part_cost counts it, at w; past it. */
static char *part_text(char *w, const char *s, size_t at, size_t end)
{
	static const char hex[] = "0123456789abcdef";
	for (const unsigned char *u = (const unsigned char *)s + at, *e = (const unsigned char *)s + end;
	     u < e; u++) {
		if (part_cost[*u] == 1) {
			*w++ = (char)*u;
		} else if (part_cost[*u] == 2) {
			*w++ = '\\';
			*w++ = (char)*u;
		} else {
			__builtin_memcpy(w, "\\u00", 4);
			w[4] = hex[*u >> 4];
			w[5] = hex[*u & 15];
			w += 6;
		}
	}
	return w;
}

/* A part's head, {"part":{"pid":P,"seq":S,"i":I,"n":N},"text": at w;
 * the address past it. */
static char *part_head(char *w, uint64_t pid, uint64_t seq, uint64_t i, uint64_t nparts)
{
	static const char *const words[] = { "{\"part\":{\"pid\":", ",\"seq\":", ",\"i\":",
					     ",\"n\":" };
	const uint64_t v[] = { pid, seq, i, nparts };
	for (int k = 0; k < 4; k++) {
		size_t len = strlen(words[k]);
		memcpy(w, words[k], len);
		w = mc_utoa(w + len, v[k]);
	}
	memcpy(w, "},\"text\":", 9);
	return w + 9;
}

static __attribute__((noinline, cold)) int write_parts(int fd, const char *s, size_t n,
							struct bound *b)
{
	if (n && s[n - 1] == '\n')
		n--;
	uint64_t seq = atomic_fetch_add(&parts_seq, 1) + 1, pid = (uint64_t)mc_pid();
	char line[PIPE_BUF];
	/* the head's length where I and N have as many digits as n, which
	 * they never pass; the text's quotes, the '}' and the newline */
	size_t room = PIPE_BUF - (size_t)(part_head(line, pid, seq, n, n) - line) - 4;
	size_t take = room / (has_control(s, n) ? 6 : 2);
	uint64_t nparts = 0;
	for (size_t at = 0; at < n; nparts++)
		at = part_end(s, at, n, take);
	int err = 0;
	for (size_t at = 0, i = 1; !err && at < n; i++) {
		size_t e = part_end(s, at, n, take);
		char *w = part_head(line, pid, seq, i, nparts);
		*w++ = '"';
		w = part_text(w, s, at, e);
		memcpy(w, "\"}\n", 3);
		err = write_all(fd, line, (size_t)(w + 3 - line), true, b);
		at = e;
	}
	return err;
}

/* A record to fd, whose status is st: under an flock on a FIFO; SIGPIPE
 * blocked around the write only where it can be raised (not a regular
 * file: a sigpending and two sigprocmask calls fewer a JSON report).
 * Where the file can make the write wait (a pipe, a FIFO, a socket:
 * MEMCHECK_REPORT=/dev/fd/3, a FIFO a collector opened and reads only
 * once the test has ended), it waits wait seconds at most, or at a
 * process's end (a held text: life.c) what is left of the end's bound,
 * shared with the text: bare, the program would have exited.  A
 * regular file or a terminal is written as always (not at all where
 * the record would cross RLIMIT_FSIZE); a pipe or a FIFO whole or not
 * at all (room_whole). */
static int write_record(int fd, const struct stat *st, const char *s, size_t n, int wait,
			bool *none)
{
	bool fifo = S_ISFIFO(st->st_mode), may_pipe = !S_ISREG(st->st_mode);
	struct bound own = { 0, wait, atomic_load(&appends_stalled) }, *b = NULL;
	if (may_pipe && !S_ISCHR(st->st_mode)) {
		pid_t t = atomic_load(&hold_tid);
		b = t != 0 && t == mc_tid() ? &hold_bound : &own;
	}
	int saved = errno, err = 0;
	if (fifo && b)
		err = lock_by(fd, b);
	else if (fifo)
		while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
			;
	bool parts = false;
	if (!err && fifo && b && (err = room_whole(fd, n, b)) == E2BIG) {
		err = 0;
		parts = true;
	}
	/* a regular file whose size limit the record would cross: none of
	 * it written (past the limit the kernel takes what fits, and the
	 * file's last line would be a record cut short) */
	if (!err && S_ISREG(st->st_mode) && fsize_limited() &&
	    (uint64_t)st->st_size + n > fsize_max)
		err = EFBIG;
	*none = err != 0; /* nothing of it written */
	if (!err)
		err = parts ? write_parts(fd, s, n, b) : write_all(fd, s, n, may_pipe, b);
	if (fifo)
		flock(fd, LOCK_UN); /* none held after lock_by failed: no error */
	if (err == ETIMEDOUT)
		atomic_store(&appends_stalled, true);
	errno = saved;
	return err;
}

int mc_append(const char *path, const char *s, size_t n, const char *what, _Atomic int *said,
	      int wait)
{
	int saved = errno;
	struct stat st;
	int fd = open_append(path, &st);
	bool none = true;
	int err = fd < 0 ? errno : write_record(fd, &st, s, n, wait, &none);
	if (fd >= 0)
		mc_sys_close(fd);
	if (err == ETIMEDOUT && !atomic_exchange(said, 1))
		mc_log("%s=%s: its reader %s within %d s (MEMCHECK_TEXT_TIMEOUT): %s, and the "
		       "process's later records take only the room there is", what, path,
		       none ? "made no room for this process's record" :
			      "took no more of this process's record",
		       wait, none ? "the record is dropped whole" : "the rest is dropped");
	else if (err && !atomic_exchange(said, 1))
		mc_log("cannot %s %s=%s: %s; this process's records are not there", fd < 0 ?
		       "open" : "write to", what, path, mc_open_error(err));
	errno = saved;
	return err;
}

/* A record that mc_append's err says is not in its file: its reader
 * stalled (ETIMEDOUT), or the file is full (ENOSPC, EDQUOT, EFBIG, EIO:
 * a disk, a quota, RLIMIT_FSIZE).  Not where the file could not be
 * opened (a path the run named wrong: said in the text) or its reader
 * has gone (EPIPE). */
bool mc_append_dropped(int e)
{
	return e == ETIMEDOUT || e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO;
}

const char *mc_open_error(int err)
{
	switch (err) {
	case ENXIO:
		return "a FIFO no process has open for reading";
	case EPERM:
		return "a symlink in a shared directory that belongs to another user";
	default:
		return strerror(err);
	}
}

/* ---- where the text goes -------------------------------------------
 * MEMCHECK_LOG's file, or memcheck's own copy of the standard error the
 * process started with, as valgrind keeps one: programs close file
 * descriptor 2 and reuse the number for a data file (memcheck's report
 * then went into it), and coreutils close it in an exit handler (the
 * report was then lost to EBADF).  Both descriptors are held at a high
 * number and checked before each write: the program may close them too
 * (daemons close every descriptor, some test runners what they did not
 * open) and reuse the number for a file of its own, which memcheck must
 * never write to. */

static const char *text_pattern; /* MEMCHECK_LOG, NULL or "-": standard error */
static struct mc_kept_fd log_file = { -1, 0, 0, false };
static bool text_failed;          /* said so once; standard error from now on */
static atomic_flag text_busy = ATOMIC_FLAG_INIT;
static struct mc_kept_fd err = { -1, 0, 0, false }; /* the copy of standard error */
static bool err_known;            /* fd 2 was open at start: err's dev, ino */

bool mc_kept_ours(const struct mc_kept_fd *k, struct stat *st)
{
	struct stat status;
	if (!st)
		st = &status;
	if (k->sure && st == &status)
		return k->fd >= 0;
	return k->fd >= 0 && mc_sys_fstat(k->fd, st) == 0 && st->st_dev == k->dev &&
	       st->st_ino == k->ino;
}

/* rlimits.c's copy above the open-file limit the program set, where
 * its view leaves room (a hook: rlimits.c calls this file). */
static int (*_Atomic fd_hook)(int fd);

void mc_fd_hook_set(int (*hook)(int fd))
{
	atomic_store(&fd_hook, hook);
}

/* A copy of fd out of the way of the program's own descriptors: above
 * the open-file limit the program set, where rlimits.c leaves room
 * there; else from 900 up (a program that counts up from 3 does not
 * meet it), or near the descriptor limit where that is lower.  -1 when
 * there is no room. */
int mc_dup_high(int fd)
{
	int (*hook)(int) = atomic_load(&fd_hook);
	int high = hook ? hook(fd) : -1;
	if (high >= 0)
		return high;
	high = mc_sys_fcntl(fd, F_DUPFD_CLOEXEC, 900);
	struct rlimit rl;
	if (high < 0 && mc_sys_getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 128 &&
	    rl.rlim_cur < 900)
		high = mc_sys_fcntl(fd, F_DUPFD_CLOEXEC, (int)rl.rlim_cur - 64);
	return high;
}

/* Where standard error's text goes: memcheck's copy while it is still
 * that file; else descriptor 2 while it still is; else nowhere (-1). */
static int stderr_fd_of(struct stat *st)
{
	if (mc_kept_ours(&err, st))
		return err.fd;
	struct mc_kept_fd two = { 2, err.dev, err.ino, false };
	return err_known && mc_kept_ours(&two, st) ? 2 : -1;
}

static int stderr_fd(void)
{
	struct stat st;
	return stderr_fd_of(&st);
}

/* At start-up, before the program can have touched descriptor 2: which
 * file it is.  The copy waits for the program's first call that closes
 * or replaces it (fdkeep.c): until then memcheck holds none of the
 * program's descriptor numbers. */
static void note_stderr(void)
{
	struct stat st;
	if (err_known || mc_sys_fstat(2, &st) != 0)
		return; /* closed from the start: the text has nowhere to go */
	err.dev = st.st_dev;
	err.ino = st.st_ino;
	err_known = true;
}

/* ---- descriptors kept across the program's code ---------------------
 * The program's calls that close or replace descriptors (fdkeep.c)
 * leave memcheck's own alone.  A program that closed every descriptor
 * (close_range(0, ~0U, 0), closefrom(0), a loop of close up to the
 * limit: daemons, test runners, spawn helpers) closed the copy of
 * standard error that its closing of descriptor 2 had made a moment
 * before: the text went nowhere, unsaid, while the exit status still
 * said a region failed.  The descriptors registered here (the copy of
 * standard error, MEMCHECK_LOG's file, sandbox.c's kept files) are
 * passed over by a range the program closes (mc_fds_kept_in: fdkeep.c
 * closes around them), and moved to another number before a close,
 * dup2 or dup3 of their own number (mc_fd_kept_move): the program's
 * call then does what it does bare, on a number that bare was not open
 * (close returns 0 where bare it fails with EBADF, for a number the
 * program found open, listing /proc/self/fd: systemd's safe_close
 * asserts on EBADF).  A registered descriptor whose number holds
 * another file now (closed by a raw system call, the number reused) is
 * the program's, and left to it. */
static struct mc_kept_fd *_Atomic kept_fds[MC_FD_KEPT_MAX]; /* this file's two apart */
/* No kept descriptor lies below it: fdkeep.c's one test, read by every
 * close (MC_HOT: the page loading writes, no fault of its own). */
MC_HOT int mc_fd_kept_low = INT_MAX;

/* Not a compare-and-swap loop: each caller makes its descriptor under
 * a lock or flag of its own (err_copy, text_busy, sandbox.c's lock), and
 * mc_text_keep_stderr, which every coreutils exit runs, stays small
 * (group 0, text-order.ld). */
static inline void kept_low_note(int fd)
{
	if (fd >= 0 && fd < __atomic_load_n(&mc_fd_kept_low, __ATOMIC_RELAXED))
		__atomic_store_n(&mc_fd_kept_low, fd, __ATOMIC_RELEASE);
}

void mc_fd_kept_add(struct mc_kept_fd *k)
{
	int free_slot = -1;
	for (int i = 0; i < MC_FD_KEPT_MAX; i++) {
		struct mc_kept_fd *at = atomic_load(&kept_fds[i]);
		if (at == k)
			free_slot = -2;
		else if (!at && free_slot == -1)
			free_slot = i;
	}
	if (free_slot >= 0)
		atomic_store(&kept_fds[free_slot], k);
	kept_low_note(k->fd);
}

void mc_fd_kept_forget(struct mc_kept_fd *k)
{
	for (int i = 0; i < MC_FD_KEPT_MAX; i++) {
		struct mc_kept_fd *at = k;
		atomic_compare_exchange_strong(&kept_fds[i], &at, NULL);
	}
}

/* The i-th kept descriptor (the copy of standard error, MEMCHECK_LOG's
 * file, then the registered ones), NULL where none. */
static struct mc_kept_fd *kept_nth(int i)
{
	return i == 0 ? &err : i == 1 ? &log_file : atomic_load(&kept_fds[i - 2]);
}

/* Not in a vfork'd child (its own descriptors, the parent's memory,
 * which would take the new number for its own): there the program's
 * call takes the number, as before. */
void mc_fd_kept_move(int fd)
{
	if (fd < 0)
		return;
	int saved = errno;
	for (int i = 0; i < MC_FD_KEPT_ALL; i++) {
		struct mc_kept_fd *k = kept_nth(i);
		if (!k || k->fd != fd || !mc_kept_ours(k, NULL) || getpid() != mc_pid())
			continue;
		int high = mc_dup_high(fd);
		if (high >= 0) {
			k->fd = high;
			kept_low_note(high);
		}
		break;
	}
	errno = saved;
}

int mc_fds_kept_in(unsigned first, unsigned last, int *out, int cap)
{
	int saved = errno, n = 0;
	for (int i = 0; i < MC_FD_KEPT_ALL; i++) {
		struct mc_kept_fd *k = kept_nth(i);
		int fd = k ? k->fd : -1;
		if (fd < 0 || (unsigned)fd < first || (unsigned)fd > last || !mc_kept_ours(k, NULL))
			continue;
		int j = n;
		while (j > 0 && out[j - 1] > fd)
			j--;
		if ((j > 0 && out[j - 1] == fd) || n == cap)
			continue;
		memmove(out + j + 1, out + j, (size_t)(n - j) * sizeof *out);
		out[j] = fd;
		n++;
	}
	errno = saved;
	return n;
}

/* 0 no copy yet, 1 being made, 2 made (or none to make: not the file) */
static _Atomic int err_copy;

void mc_text_keep_stderr(void)
{
	if (!err_known || atomic_load_explicit(&err_copy, memory_order_acquire) == 2)
		return;
	/* a vfork'd child: its descriptors are its own, this memory the
	 * parent's, which would take the copy for its own */
	if (getpid() != mc_pid())
		return;
	int none = 0;
	if (!atomic_compare_exchange_strong(&err_copy, &none, 1)) {
		/* another thread makes it: the close waits for the copy
		 * (bounded: a signal handler that interrupted the copy's
		 * own thread goes on without it) */
		for (int i = 0; i < 1000 && atomic_load_explicit(&err_copy, memory_order_acquire) != 2; i++)
			sched_yield();
		return;
	}
	struct mc_kept_fd two = { 2, err.dev, err.ino, false };
	if (mc_kept_ours(&two, NULL))
		err.fd = mc_dup_high(2);
	kept_low_note(err.fd);
	atomic_store_explicit(&err_copy, 2, memory_order_release);
}

/* The program set its open-file limit (limits.c): the descriptors kept
 * across its code (the copy of standard error, MEMCHECK_LOG's file)
 * move above it where they lie below, out of its count (rlimits.c).
 * Only tried while text is being found (another thread, or this one
 * interrupted by a handler that sets the limit): they stay. */
void mc_text_fds_lift(void)
{
	if (atomic_flag_test_and_set_explicit(&text_busy, memory_order_acquire))
		return;
	int saved = errno;
	struct rlimit rl;
	struct mc_kept_fd *held[] = { &err, &log_file };
	for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
		struct mc_kept_fd *k = held[i];
		if (!mc_kept_ours(k, NULL) || mc_sys_getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
		    (rlim_t)k->fd >= rl.rlim_cur)
			continue;
		int (*hook)(int) = atomic_load(&fd_hook);
		int high = hook ? hook(k->fd) : -1;
		if (high < 0)
			continue;
		mc_sys_close(k->fd);
		k->fd = high;
		kept_low_note(high);
	}
	errno = saved;
	atomic_flag_clear_explicit(&text_busy, memory_order_release);
}

void mc_text_release_stderr(void)
{
	if (err.fd >= 0)
		mc_sys_close(err.fd);
	err.fd = -1;
	atomic_store(&err_copy, 2); /* none made from now on */
}

/* Held only where it goes where the text goes (standard error, the copy
 * of it, MEMCHECK_LOG's file): a file opened for one write and closed
 * after it (MEMCHECK_VALGRIND_XML's) would be gone by the hold's end.
 * What MEMCHECK_LOG's file cannot take goes to standard error, as the
 * text's other pieces (text_write_kept): the suppressions
 * MEMCHECK_GEN_SUPPRESSIONS=- writes there were lost before session 40. */
int mc_write_all(int fd, const char *s, size_t n)
{
	if (fd == 2 || fd == err.fd || fd == log_file.fd)
		return text_write_kept(fd, s, n, true);
	return write_all(fd, s, n, true, NULL);
}

/* One line: the values in it escaped (mc_text_escape), so that a
 * newline in a region name, a path or a variable's value cannot make
 * another. */
/* may_pipe: as write_all's (text_fd says it of the text's file) */
#define LOG_LINE 2048

/* One of memcheck's lines, "memcheck[PID] PROGRAM: ...\n", into line
 * (LOG_LINE bytes); its length. */
static size_t log_line(char *line, const char *fmt, va_list ap)
{
	char raw[1024], msg[1536], prog[512];
	if (vsnprintf(raw, sizeof raw, fmt, ap) < 0)
		raw[0] = 0;
	mc_text_escape(raw, msg, sizeof msg);
	mc_text_escape(mc_program(), prog, sizeof prog);
	int n = snprintf(line, LOG_LINE - 1, "memcheck[%d] %s: %s", (int)mc_pid(), prog, msg);
	size_t len = n < 0 ? 0 : (size_t)n < LOG_LINE - 1 ? (size_t)n : LOG_LINE - 2;
	line[len++] = '\n';
	return len;
}

static void vlog_to(int fd, bool may_pipe, const char *fmt, va_list ap)
{
	char line[LOG_LINE];
	size_t len = log_line(line, fmt, ap);
	text_write_kept(fd, line, len, may_pipe);
}

/* A line written at once to fd, never held (text_lost's, which a held
 * text's flush may call). */
__attribute__((format(printf, 2, 3))) static void say_now(int fd, const char *fmt, ...)
{
	char line[LOG_LINE];
	va_list ap;
	va_start(ap, fmt);
	size_t len = log_line(line, fmt, ap);
	va_end(ap);
	write_all(fd, line, len, true, NULL);
}

__attribute__((format(printf, 1, 2))) static void say_on_stderr(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog_to(stderr_fd(), true, fmt, ap);
	va_end(ap);
}

int mc_text_path(const char *pattern, long pid, char *out, size_t cap, size_t *bad)
{
	size_t n = 0;
	for (const char *p = pattern; *p; p++) {
		char num[24];
		const char *piece = p;
		size_t len = 1;
		if (*p == '%') {
			if (p[1] == 'p') {
				len = (size_t)snprintf(num, sizeof num, "%ld", pid);
				piece = num;
			} else if (p[1] != '%') {
				*bad = (size_t)(p - pattern);
				return -1;
			}
			p++;
		}
		if (n + len >= cap) {
			*bad = SIZE_MAX;
			return -1;
		}
		memcpy(out + n, piece, len);
		n += len;
	}
	out[n] = 0;
	return (int)n;
}

/* Open MEMCHECK_LOG's file for this process; false, said once on
 * standard error, when it cannot be. */
static bool text_reopen(void)
{
	char path[4096];
	size_t bad;
	int saved = errno;
	log_file.fd = -1;
	if (mc_text_path(text_pattern, (long)mc_pid(), path, sizeof path, &bad) < 0) {
		if (bad == SIZE_MAX)
			say_on_stderr("MEMCHECK_LOG=%.*s%.*s: the file name is too long; writing to "
				      "standard error", MC_CUT_VALUE(text_pattern));
		else if (!text_pattern[bad + 1])
			say_on_stderr("MEMCHECK_LOG=%.*s%.*s: a %% at the end: expected %%p (the "
				      "process id) or %%%% (a percent sign); writing to standard "
				      "error", MC_CUT_VALUE(text_pattern));
		else
			say_on_stderr("MEMCHECK_LOG=%.*s%.*s: \"%%%c\" at character %zu: expected "
				      "%%p (the process id) or %%%% (a percent sign); writing to "
				      "standard error", MC_CUT_VALUE(text_pattern), text_pattern[bad + 1],
				      bad + 1);
		text_failed = true;
		errno = saved;
		return false;
	}
	int fd = mc_open_append(path);
	struct stat st;
	if (fd < 0 || mc_sys_fstat(fd, &st) != 0) {
		say_on_stderr("cannot open MEMCHECK_LOG=%s: %s; writing to standard error", path,
			      mc_open_error(errno));
		if (fd >= 0)
			mc_sys_close(fd);
		text_failed = true;
		errno = saved;
		return false;
	}
	int high = mc_dup_high(fd);
	if (high >= 0) {
		mc_sys_close(fd);
		fd = high;
	}
	log_file = (struct mc_kept_fd){ fd, st.st_dev, st.st_ino, false };
	kept_low_note(fd);
	errno = saved;
	return true;
}

static bool wants_file(void)
{
	return text_pattern && strcmp(text_pattern, "-") != 0 && !text_failed;
}

/* A write to MEMCHECK_LOG's file (fd) failed with err: where the file
 * cannot take it (a full disk, ENOSPC or EDQUOT; EFBIG; EIO), said once
 * on standard error, where the text goes from then on, the piece that
 * failed first (it went nowhere before session 39, unsaid); that
 * descriptor, or -1 where fd is not the log's or err is a reader's
 * (EPIPE, the bound's ETIMEDOUT: said and handled as before). */
static __attribute__((noinline, cold)) int text_lost(int fd, int e)
{
	if (e == EPIPE || e == ETIMEDOUT || e == EAGAIN || !wants_file() || fd < 0 ||
	    fd != log_file.fd)
		return -1;
	int saved = errno, to = stderr_fd();
	errno = saved;
	if (to < 0 || to == fd)
		return -1;
	text_failed = true;
	char path[4096];
	size_t bad;
	say_now(to, "cannot write to MEMCHECK_LOG=%s: %s; writing to standard error",
		mc_text_path(text_pattern, (long)mc_pid(), path, sizeof path, &bad) < 0 ?
			text_pattern : path, strerror(e));
	return to;
}

/* The file is made at the first write, not here: a process with nothing
 * to say (a program left out by MEMCHECK_PROGRAMS, a clean one with
 * MEMCHECK_TEXT=fail) leaves no empty file behind. */
void mc_text_open(const char *pattern)
{
	text_pattern = pattern;
	int saved = errno;
	note_stderr();
	errno = saved;
}

/* mc_text_fd, and whether a write to it can raise SIGPIPE (a pipe, a
 * FIFO, a socket; or not known): the status its check just read says. */
static int text_fd(bool *may_pipe)
{
	struct stat st;
	int fd;
	*may_pipe = true;
	if (!wants_file()) {
		int saved = errno;
		fd = stderr_fd_of(&st);
		errno = saved;
	} else {
		while (atomic_flag_test_and_set_explicit(&text_busy, memory_order_acquire))
			;
		int saved = errno;
		bool ours = mc_kept_ours(&log_file, &st);
		/* Not ours (not opened yet, or the number is the program's now): a
		 * new descriptor, the old number left alone.  Ours but gone from
		 * its directory (a test cleaned up): closed, and a new file. */
		if (ours && st.st_nlink == 0)
			mc_sys_close(log_file.fd);
		bool known = ours && st.st_nlink != 0;
		if (!known) {
			text_reopen();
			known = log_file.fd >= 0 && mc_sys_fstat(log_file.fd, &st) == 0;
		}
		bool logged = log_file.fd >= 0;
		fd = logged ? log_file.fd : stderr_fd_of(&st);
		errno = saved;
		atomic_flag_clear_explicit(&text_busy, memory_order_release);
		if (logged && !known)
			return fd; /* its kind not known: may be a pipe */
	}
	if (fd >= 0)
		*may_pipe = !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode);
	return fd;
}

int mc_text_fd(void)
{
	bool may_pipe;
	return text_fd(&may_pipe);
}

/* A regular file or a character device (a terminal, /dev/null) cannot
 * raise SIGPIPE: SIGPIPE is then not blocked around the write (a
 * sigpending and two sigprocmask calls fewer a report). */
int mc_text_write(const char *s, size_t n)
{
	bool may_pipe;
	int fd = text_fd(&may_pipe);
	return text_write_kept(fd, s, n, may_pipe);
}

/* The program's standard output flushed before memcheck's text at the
 * process's end, where both go to one regular file or terminal (a test
 * script's `prog > out 2>&1`, compared with an expected file): stdio
 * flushes it only after the destructors and exit handlers, so the text
 * came first, or in the middle of a line once the buffer had been
 * written in part (json-c's tests: "js==15087== memcheck: ..." then
 * "on_object_get_type()"), where valgrind's text follows all of the
 * program's output.  The bytes and their order within stdout are the
 * ones exit would write a moment later.  Not through a pipe, a FIFO or
 * a socket: a write there may raise SIGPIPE, which exit would raise
 * only after memcheck's report.  Only tried (ftrylockfile): a thread
 * still inside stdout's lock is left alone.  No system call where the
 * buffer holds nothing (most processes).  text_on: some text may be
 * written (MEMCHECK_TEXT is not none; the caller's, as options.c is
 * above this file). */
void mc_text_flush_stdout(bool text_on)
{
	FILE *out = stdout;
	if (!out || !text_on || wants_file() ||
	    out->_IO_write_ptr <= out->_IO_write_base)
		return;
	int saved = errno;
	struct stat a, b;
	int fd = stderr_fd_of(&b);
	if (fd >= 0 && (S_ISREG(b.st_mode) || S_ISCHR(b.st_mode)) && ftrylockfile(out) == 0) {
		int ofd = fileno_unlocked(out);
		if (ofd >= 0 && mc_sys_fstat(ofd, &a) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			fflush_unlocked(out);
		funlockfile(out);
	}
	errno = saved;
}

/* A process with root's effective id about to change its ids (creds.c:
 * setuid, seteuid, setresuid... to a user who may not write where
 * MEMCHECK_LOG names): the file opened now (made, where it is not there
 * yet) and kept, as sandbox.c keeps the report file, where the first
 * write would open it after the change: "cannot open MEMCHECK_LOG=...:
 * Permission denied; writing to standard error", the text in the
 * stream a test that sets MEMCHECK_LOG compares.  The price: a process
 * that then says nothing leaves an empty file, as its report file
 * holds its record anyway.  A file the program closed or removed
 * meanwhile is opened again as the user it became, as before. */
void mc_text_keep_log(void)
{
	if (!wants_file())
		return;
	while (atomic_flag_test_and_set_explicit(&text_busy, memory_order_acquire))
		;
	int saved = errno;
	struct stat st;
	if (!mc_kept_ours(&log_file, &st) || st.st_nlink == 0)
		text_reopen();
	errno = saved;
	atomic_flag_clear_explicit(&text_busy, memory_order_release);
}

void mc_text_after_fork(void)
{
	atomic_flag_clear(&text_busy);
	if (!wants_file() || !strstr(text_pattern, "%p"))
		return; /* the parent's file, shared: appends do not overwrite */
	struct stat st;
	if (mc_kept_ours(&log_file, &st))
		mc_sys_close(log_file.fd); /* the child's copy of memcheck's own descriptor */
	log_file.fd = -1; /* its own file, at its first write */
}

void mc_log(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	/* to a file or a terminal, without SIGPIPE blocked (mc_text_write):
	 * a failing process's exit status line, 3 system calls fewer */
	bool may_pipe;
	int fd = text_fd(&may_pipe);
	vlog_to(fd, may_pipe, fmt, ap);
	va_end(ap);
	errno = saved;
}
