/*
 * symcache.c - the frames mc_symbolize_frames gave for a pc, kept on disk
 * across processes (MEMCHECK_CACHE), so that the second and later runs
 * of a test program print the same file:line without loading libdw and
 * reading the module's DWARF again (~0.6-0.8 ms a process here, tens of
 * ms for a large C++ program).
 *
 * Only modules whose answers depend on their own file's bytes alone are
 * cached (symbolize.c decides: DWARF and symbol table in the file, no
 * link to another file), keyed by the file's GNU build ID, a pc by its
 * offset in the module (its link-time address) and the number of frames
 * asked for.  The object's path is never cached: the caller fills it.
 * The directory's name carries the format's version and memcheck's own
 * build ID, so that a memcheck that names frames differently never reads
 * an older one's answers.  The file format is memcheck-cache(5).
 * symbolize.c also keeps the objects' quick frames (symbol tables'
 * names) here, under a key of elfmod.c's (mc_elfmod_quick_key): this
 * file only stores what it is given under the bytes it is given, and,
 * for an object whose names hold only while its .gnu_debuglink name's
 * places hold no file, that name (a link record, one a file:
 * mc_symcache_link_put), which symbolize.c checks before it takes them.
 *
 * A file is read whole the first time one of its module's pcs is asked
 * for, and every well-formed record of it indexed; a record that is torn,
 * truncated or does not check is skipped, the parse resyncing on the
 * next magic.  New answers are appended at the session's end, one write
 * (O_APPEND) a module, while the file is under SC_FILE_MAX.  Every
 * failure means "no cache": the caller reads the DWARF as before.
 *
 * Called with symbolize.c's lock held.  No malloc (mmap'd buffers), no
 * file descriptor kept open, errno as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define SC_MAGIC 0x3153434dU         /* "MCS1", little-endian */
#define SC_FILE_MAX (1u << 20)       /* no appending past it, no reading past it */
#define SC_MODS 16
#define SC_ID_MAX 64

struct sc_ent {
	uint64_t off;
	uint32_t max;
	uint32_t at;                 /* 1 + payload offset; bit 31: in pending */
};

struct sc_mod {
	bool used, loaded;
	unsigned char id[SC_ID_MAX];
	size_t idlen;
	char *data;                  /* the file's bytes, mc_map_io'd */
	size_t len, maplen;
	struct sc_ent *tab;          /* open addressing, cap a power of 2 */
	size_t cap, n;
	struct mc_buf pending;       /* records this process found */
	size_t written;              /* how much of pending was appended */
	struct mc_buf names;         /* name answers this process found, */
	size_t names_written;        /* framed as one record at the flush */
	int names_n, names_n_written;
};

static struct sc_mod mods[SC_MODS];
static unsigned mods_next;
/* The cache's directory: 0 not looked for, 2 being looked for, 1 found
 * (dir, written before the state's release and never after), -1 none.
 * Two threads may ask at once (symbolize.c's lock held, and
 * supp_region.c's load under the region lock): one looks, the other
 * goes without the cache that once. */
static _Atomic int dir_state;
/* Mapped when found (mc_map_io: system calls read it), as long as it
 * is: a 4 KiB array of .bss was a page of its own that a measured
 * process's exit faulted in for its first bytes, where the exit's tail
 * (ownmap.c) packs it beside the exit's other buffers. */
#define SC_DIR_MAX 4096
static char *dir;

#define PENDING_BIT 0x80000000u
#define NAMES_BIT 0x40000000u        /* with PENDING_BIT: in names */

/* Fixed-size loads inlined: memcpy is a call here (-fno-builtin), and
 * a warm process's exit reads every record of its files. */
#define LOAD(dst, src, n) __builtin_memcpy(dst, src, n)

/* Eight bytes a step, not one (a warm libyaml run-parser's exit summed
 * its 3.8 KB of records byte by byte: 22 K of its 47 K parse); the
 * bytes after the last whole word one at a time. */
static inline uint64_t words_fold(const char *p, size_t n, unsigned shift)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		LOAD(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> shift;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

uint32_t mc_symcache_sum(const char *p, size_t n)
{
	uint64_t h = words_fold(p, n, 32);
	h ^= h >> 32;
	return (uint32_t)h;
}

uint64_t mc_symcache_hash(const char *p, size_t n)
{
	return words_fold(p, n, 29);
}

static uint32_t rd32(const char *p)
{
	uint32_t v;
	LOAD(&v, p, 4);
	return v;
}

/* A string of at most cap - 1 bytes and its NUL at p[*at, end): copied
 * to dst (may be NULL), *at past it; false if it is not there. */
static bool take_str(const char *p, size_t end, size_t *at, char *dst, size_t cap)
{
	size_t room = end - *at;
	const char *nul = memchr(p + *at, 0, room < cap ? room : cap);
	if (!nul)
		return false;
	size_t n = (size_t)(nul - (p + *at));
	if (dst)
		memcpy(dst, p + *at, n + 1);
	*at += n + 1;
	return true;
}

int mc_symcache_decode(const char *p, size_t size, uint64_t *off, int *max,
		       struct mc_frame_info *out, int cap)
{
	if (size < 12)
		return 0;
	uint16_t m, n;
	LOAD(off, p, 8);
	LOAD(&m, p + 8, 2);
	LOAD(&n, p + 10, 2);
	if (m == MC_SYMCACHE_NAME) {
		/* the answers' own (no frames into out) */
		int k = *off == 0 ? mc_symcache_names_each(p, size, NULL, NULL) : 0;
		*max = m;
		return k;
	}
	if (!n || n > m || m > MC_SYMCACHE_QUICK || (m == MC_SYMCACHE_QUICK && n != 1))
		return 0;
	size_t at = 12;
	for (int i = 0; i < n; i++) {
		struct mc_frame_info *f = out && i < cap ? &out[i] : NULL;
		int32_t line;
		if (size - at < 4)
			return 0;
		LOAD(&line, p + at, 4);
		at += 4;
		if (line < 0 ||
		    !take_str(p, size, &at, f ? f->function : NULL, sizeof f->function) ||
		    !take_str(p, size, &at, f ? f->linkage : NULL, sizeof f->linkage) ||
		    !take_str(p, size, &at, f ? f->file : NULL, sizeof f->file))
			return 0;
		if (f)
			f->line = line;
	}
	if (at != size)
		return 0;
	*max = m;
	return n;
}

/* A payload's head (12 bytes: offset, max, n) as decode checks it, and
 * a name record whole; a frame record's strings are left to decode at
 * the look-up that reads them (a record the checksum took was written
 * by encode, which wrote them whole).  Checking every string of every
 * record here was 7.9 K of a warm measured /bin/date's 14 K parse of
 * 30 records, each of which a process reads once at most. */
static bool head_ok(const char *p, size_t size, uint64_t *off, int *max)
{
	uint16_t m, n;
	if (size < 12)
		return false;
	LOAD(off, p, 8);
	LOAD(&m, p + 8, 2);
	LOAD(&n, p + 10, 2);
	*max = m;
	if (m == MC_SYMCACHE_NAME)
		return *off == 0 && mc_symcache_names_each(p, size, NULL, NULL) > 0;
	if (m == MC_SYMCACHE_LINK)
		return mc_symcache_link_view(p, size) != NULL;
	/* a frame: its line and three NULs at least */
	return n && n <= m && m <= MC_SYMCACHE_QUICK && (m != MC_SYMCACHE_QUICK || n == 1) &&
	       size - 12 >= (size_t)n * 7;
}

size_t mc_symcache_parse(const char *p, size_t len,
			 void (*fn)(void *arg, uint64_t off, int max, size_t at, size_t size),
			 void *arg)
{
	size_t good = 0;
	for (size_t i = 0; i + 12 <= len;) {
		if (rd32(p + i) != SC_MAGIC) {
			i++;
			continue;
		}
		uint32_t size = rd32(p + i + 4), sum = rd32(p + i + 8);
		uint64_t off;
		int max;
		if (size > len - i - 12 || mc_symcache_sum(p + i + 12, size) != sum ||
		    !head_ok(p + i + 12, size, &off, &max)) {
			i++;  /* torn or damaged: resync on the next magic */
			continue;
		}
		if (fn)
			fn(arg, off, max, i + 12, size);
		good++;
		i += 12 + (size_t)size;
	}
	return good;
}

size_t mc_symcache_encode(char *dst, size_t cap, uint64_t off, int max,
			  const struct mc_frame_info *f, int n)
{
	if (n < 1 || n > max || max > MC_SYMCACHE_QUICK || (max == MC_SYMCACHE_QUICK && n != 1) ||
	    cap < 24)
		return 0;
	size_t at = 12;
	uint16_t m = (uint16_t)max, nn = (uint16_t)n;
	memcpy(dst + at, &off, 8);
	memcpy(dst + at + 8, &m, 2);
	memcpy(dst + at + 10, &nn, 2);
	at += 12;
	for (int i = 0; i < n; i++) {
		const char *s[3] = { f[i].function, f[i].linkage, f[i].file };
		size_t cap_of[3] = { sizeof f->function, sizeof f->linkage, sizeof f->file };
		int32_t line = f[i].line;
		if (line < 0 || cap - at < 4)
			return 0;
		memcpy(dst + at, &line, 4);
		at += 4;
		for (int k = 0; k < 3; k++) {
			size_t l = strnlen(s[k], cap_of[k]);
			if (l == cap_of[k] || cap - at < l + 1)
				return 0;
			memcpy(dst + at, s[k], l + 1);
			at += l + 1;
		}
	}
	uint32_t magic = SC_MAGIC, size = (uint32_t)(at - 12);
	uint32_t sum = mc_symcache_sum(dst + 12, size);
	memcpy(dst, &magic, 4);
	memcpy(dst + 4, &size, 4);
	memcpy(dst + 8, &sum, 4);
	return at;
}

/* A name record's payload: offset 0, max MC_SYMCACHE_NAME, n answers,
 * each its offset (8 bytes), the answer (1 byte, 0 or 1), the string's
 * length (1 byte, 1 to MC_SYMCACHE_NAME_LEN) and its bytes. */
int mc_symcache_names_each(const char *p, size_t size,
			   void (*fn)(void *arg, uint64_t off, bool found, const char *s,
				      size_t len, size_t at),
			   void *arg)
{
	uint16_t m, n;
	uint64_t off;
	if (size < 12)
		return 0;
	LOAD(&off, p, 8);
	LOAD(&m, p + 8, 2);
	LOAD(&n, p + 10, 2);
	if (off || m != MC_SYMCACHE_NAME || !n)
		return 0;
	size_t at = 12;
	for (int i = 0; i < n; i++) {
		if (size - at < 10)
			return 0;
		unsigned char found = (unsigned char)p[at + 8], len = (unsigned char)p[at + 9];
		if (found > 1 || !len || size - at - 10 < len)
			return 0;
		at += 10 + len;
	}
	if (at != size)
		return 0;
	if (fn)
		for (size_t i = 0, e = 12; i < n; i++) {
			unsigned char len = (unsigned char)p[e + 9];
			LOAD(&off, p + e, 8);
			fn(arg, off, p[e + 8], p + e + 10, len, e);
			e += 10 + len;
		}
	return n;
}

size_t mc_symcache_names_encode(char *dst, size_t cap, const char *ent, size_t len, int n)
{
	if (n < 1 || n > UINT16_MAX || cap < 24 || len > cap - 24 || len > UINT32_MAX - 12)
		return 0;
	uint64_t off = 0;
	uint16_t m = MC_SYMCACHE_NAME, nn = (uint16_t)n;
	memcpy(dst + 12, &off, 8);
	memcpy(dst + 20, &m, 2);
	memcpy(dst + 22, &nn, 2);
	memmove(dst + 24, ent, len);   /* may be in place (names_frame) */
	uint32_t magic = SC_MAGIC, size = (uint32_t)(12 + len);
	if (mc_symcache_names_each(dst + 12, size, NULL, NULL) != n)
		return 0;
	uint32_t sum = mc_symcache_sum(dst + 12, size);
	memcpy(dst, &magic, 4);
	memcpy(dst + 4, &size, 4);
	memcpy(dst + 8, &sum, 4);
	return 12 + (size_t)size;
}

/* A link record's payload: offset 0, max MC_SYMCACHE_LINK, n 1, the
 * name and its NUL, nothing after. */
const char *mc_symcache_link_view(const char *p, size_t size)
{
	uint16_t m, n;
	uint64_t off;
	if (size < 14 || size - 13 > MC_SYMCACHE_LINK_LEN)
		return NULL;
	LOAD(&off, p, 8);
	LOAD(&m, p + 8, 2);
	LOAD(&n, p + 10, 2);
	const char *name = p + 12, *nul = memchr(name, 0, size - 12);
	if (off || m != MC_SYMCACHE_LINK || n != 1 || nul != p + size - 1 || memchr(name, '/', size - 13))
		return NULL;
	return name;
}

size_t mc_symcache_link_encode(char *dst, size_t cap, const char *link)
{
	size_t len = strnlen(link, MC_SYMCACHE_LINK_LEN + 1);
	if (!len || len > MC_SYMCACHE_LINK_LEN || memchr(link, '/', len) || cap < 24 + len + 1)
		return 0;
	uint64_t off = 0;
	uint16_t m = MC_SYMCACHE_LINK, n = 1;
	uint32_t magic = SC_MAGIC, size = (uint32_t)(12 + len + 1);
	memcpy(dst + 12, &off, 8);
	memcpy(dst + 20, &m, 2);
	memcpy(dst + 22, &n, 2);
	memcpy(dst + 24, link, len + 1);
	uint32_t sum = mc_symcache_sum(dst + 12, size);
	memcpy(dst, &magic, 4);
	memcpy(dst + 4, &size, 4);
	memcpy(dst + 8, &sum, 4);
	return 12 + (size_t)size;
}

/* ---- the directory ---- */

/* memcheck's own build ID, from its loaded image's PT_NOTE: no file read.
 * Its ELF header is the linker's __ehdr_start, its bias objects.c's:
 * dladdr1, asked before, looked for the nearest symbol too, a walk of
 * libmemcheck's dynamic symbols, and was bound at that first call (-z
 * lazy), at every measured process's first use of the cache. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

static bool own_id(unsigned char *id, size_t *idlen)
{
	int n;
	uintptr_t bias;
	mc_own_phdrs(&n, &bias);
	size_t len;
	const unsigned char *note = mc_image_build_id(__ehdr_start, bias, &len);
	if (!note || len > SC_ID_MAX)
		return false;
	memcpy(id, note, len);
	*idlen = len;
	return true;
}

/* dir: MEMCHECK_CACHE, $XDG_CACHE_HOME/memcheck or $HOME/.cache/memcheck,
 * then v1-<memcheck's build ID>; false: no cache. */
static bool dir_look(void);

static bool dir_name(void)
{
	int st = atomic_load_explicit(&dir_state, memory_order_acquire);
	if (st)
		return st == 1;
	if (!atomic_compare_exchange_strong_explicit(&dir_state, &st, 2, memory_order_acq_rel,
						     memory_order_acquire))
		return st == 1;
	bool found = dir_look();
	atomic_store_explicit(&dir_state, found ? 1 : -1, memory_order_release);
	return found;
}

static bool dir_look(void)
{
	/* A setuid or setgid program: HOME and XDG_CACHE_HOME are its
	 * caller's to choose, and its files would be created with its
	 * privileges there.  No cache. */
	if (getauxval(AT_SECURE))
		return false;
	const char *opt = mc_opt.cache, *base = opt, *tail = "";
	if (opt && strcmp(opt, "off") == 0)
		return false;
	if (!opt) {
		const char *x = mc_env_value("XDG_CACHE_HOME"), *h = mc_env_value("HOME");
		if (x && x[0] == '/') {
			base = x;
			tail = "/memcheck";
		} else if (h && h[0] == '/') {
			base = h;
			tail = "/.cache/memcheck";
		} else {
			return false;
		}
	}
	unsigned char id[SC_ID_MAX];
	size_t idlen;
	size_t bl = strlen(base), tl = strlen(tail);
	if (!own_id(id, &idlen) || bl + tl + 5 + 2 * idlen + 2 * SC_ID_MAX + 2 >= SC_DIR_MAX)
		return false;
	char *d = mc_map_io(bl + tl + 4 + 2 * idlen + 1); /* zeroed: its end */
	if (!d)
		return false;
	memcpy(d, base, bl);
	memcpy(d + bl, tail, tl);
	memcpy(d + bl + tl, "/v1-", 4);
	mc_hex(d + bl + tl + 4, id, idlen);
	dir = d;
	return true;
}

/* The effective user, asked once a process: a warm exit opened the
 * directory and three files, each checked with a geteuid of its own (6
 * calls in a measured /bin/date).  Premise: the program does not change
 * its effective user between two of memcheck's reports; if it does, a
 * file of the old user's is taken as ours, which it was when written. */
static uid_t own_uid(void)
{
	static _Atomic long uid = -1;
	long u = atomic_load_explicit(&uid, memory_order_relaxed);
	if (u < 0) {
		u = (long)geteuid();
		atomic_store_explicit(&uid, u, memory_order_relaxed);
	}
	return (uid_t)u;
}

static bool ours_st(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == own_uid() && !(st->st_mode & 022);
}

/* Ours alone: owned by the effective user, no one else may write it.
 * *st (may be NULL): its fstat, which the caller needs too. */
bool mc_symcache_ours(int fd, mode_t type, struct stat *st)
{
	struct stat own;
	if (!st)
		st = &own;
	return fstat(fd, st) == 0 && ours_st(st, type);
}

/* One line of /etc/passwd: the effective user's, with home as its
 * home directory (name:password:uid:gid:gecos:dir:shell)? */
static bool passwd_line_home(const char *line, size_t len, const char *home, size_t hlen)
{
	const char *f[7];
	size_t n = 0;
	f[n++] = line;
	for (size_t i = 0; i < len && n < 7; i++)
		if (line[i] == ':')
			f[n++] = line + i + 1;
	if (n < 7 || f[2] == f[3] - 1)
		return false;
	uintmax_t uid = 0;
	for (const char *c = f[2]; c < f[3] - 1; c++) {
		if (*c < '0' || *c > '9' || uid > UINT32_MAX)
			return false;
		uid = uid * 10 + (uintmax_t)(*c - '0');
	}
	size_t dl = (size_t)(f[6] - 1 - f[5]);
	while (dl > 1 && f[5][dl - 1] == '/')
		dl--;
	return uid == own_uid() && dl == hlen && memcmp(f[5], home, hlen) == 0;
}

/* HOME is the effective user's own home, as /etc/passwd gives it (read
 * here, not through getpwuid: the name service's modules would load
 * into the program and allocate); a user the file does not list (a
 * directory service's) is taken as not. */
static bool home_is_users(const char *home, size_t hlen)
{
	while (hlen > 1 && home[hlen - 1] == '/')
		hlen--;
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[1024];
	size_t have = 0;
	bool found = false, skip = false; /* skip: the rest of a line too long */
	for (bool end = false; !found && !end;) {
		ssize_t r = read(fd, buf + have, sizeof buf - have);
		end = r <= 0;
		have += end ? 0 : (size_t)r;
		size_t start = 0;
		for (size_t i = 0; i < have && !found; i++) {
			if (buf[i] != '\n' && !(end && i + 1 == have))
				continue;
			size_t len = i - start + (buf[i] != '\n');
			found = !skip && passwd_line_home(buf + start, len, home, hlen);
			skip = false;
			start = i + 1;
		}
		if (start == 0 && have == sizeof buf) { /* a line longer than buf */
			skip = true;
			start = have;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	close(fd);
	return found;
}

/* dir and its parents made.  A function of its own: its copy of the
 * path is on the stack only here, not in every open of a warm
 * process's exit, where the stack's depth is a page fault a page.
 * From HOME, only where $HOME/.cache exists or HOME is the user's own
 * home: a test that points HOME at a directory of its own (popt's
 * testit.sh at its build directory, git's at its trash directory) finds
 * no .cache made there by memcheck; its frames are named from the
 * debug information each time, the reports the same. */
static __attribute__((noinline)) void dir_make(void)
{
	/* dir_look's choice again, here where it costs no room of
	 * group 1t's (make place-check VERBOSE=1) */
	const char *x = mc_env_value("XDG_CACHE_HOME"), *h = mc_env_value("HOME");
	size_t home_len = !mc_opt.cache && !(x && x[0] == '/') && h && h[0] == '/' ? strlen(h) : 0;
	if (home_len) {
		char cache[home_len + sizeof "/.cache"];
		memcpy(cache, dir, sizeof cache - 1);
		cache[sizeof cache - 1] = 0;
		struct stat st;
		if (lstat(cache, &st) != 0 && !home_is_users(dir, home_len))
			return;
	}
	/* Each parent made in a copy: dir is read by other threads. */
	char path[strlen(dir) + 1];
	memcpy(path, dir, sizeof path);
	for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = 0;
		mkdir(path, 0700);  /* EEXIST or not ours: lstat's to say */
		if (!s)
			break;
		*s = '/';
	}
}

/* The directory found ours (an lstat: a directory, not a symlink, the
 * effective user's, no one else may write it), once a process; made
 * first where create says.  Its files are then opened by their paths,
 * each checked itself (mc_symcache_ours).  It was opened, fstat'ed and
 * closed around every file's open: a measured /bin/date's warm exit
 * opened it 4 times (16 system calls for 4 files, now 1 lstat).  A
 * directory that is absent or not ours is looked at again next time
 * (another process may make it meanwhile). */
static _Atomic bool dir_checked;

static bool dir_ready(bool create)
{
	if (!dir_name())
		return false;
	if (atomic_load_explicit(&dir_checked, memory_order_acquire))
		return true;
	struct stat st;
	int r = lstat(dir, &st);
	if (r != 0 && errno == ENOENT && create) {
		dir_make();
		r = lstat(dir, &st);
	}
	if (r != 0 || !ours_st(&st, S_IFDIR))
		return false;
	atomic_store_explicit(&dir_checked, true, memory_order_release);
	return true;
}

/* dir/name into path[0, cap); false: does not fit. */
static bool file_path(char *path, size_t cap, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	if (dl + 1 + nl + 1 > cap)
		return false;
	memcpy(path, dir, dl);
	path[dl] = '/';
	memcpy(path + dl + 1, name, nl + 1);
	return true;
}

/* A path on the stack as long as the directory's needs: not 4 KiB,
 * which a warm exit's deep stack would pay a page fault for. */
#define SC_NAME_MAX 160
#define WITH_PATH(path, name)                                                                  \
	char path[strlen(dir) + 2 + SC_NAME_MAX];                                             \
	if (!file_path(path, sizeof path, name))

/* What places or removes a file (a create, a rename, an unlink) goes
 * through the directory opened and checked itself, not its path: the
 * lstat above is once a process, and a directory swapped for a symlink
 * after it (by anyone who may write its parent) had those files made
 * in the symlink's target (O_NOFOLLOW guards the last component only).
 * Opened with O_PATH, O_DIRECTORY and O_NOFOLLOW (a symlink: ENOTDIR),
 * fstat'ed ours, and closed before memcheck returns: the program never
 * sees the descriptor.  Three calls more a create, rename or unlink (a
 * cold process's); a warm one only reads and appends to files that
 * exist, opened by their paths as before, each checked ours by its
 * caller (mc_symcache_ours), where a swapped directory can only lead
 * to a file of the user's own.  -1: no directory, or not ours. */
static int dir_open(bool create)
{
	if (!dir_name())
		return -1;
	const int how = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(dir, how);
	if (fd < 0 && errno == ENOENT && create) {
		dir_make();
		fd = open(dir, how);
	}
	if (fd >= 0 && !mc_symcache_ours(fd, S_IFDIR, NULL)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* close, errno as the call before it left it (O_EXCL's EEXIST) */
static void dir_close(int fd)
{
	int saved = errno;
	close(fd);
	errno = saved;
}

int mc_symcache_open(const char *name, int flags)
{
	if (flags & O_CREAT) {
		int d = dir_open(true);
		if (d < 0)
			return -1;
		int fd = openat(d, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
		dir_close(d);
		return fd;
	}
	if (!dir_ready(false))
		return -1;
	WITH_PATH(path, name)
		return -1;
	return open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
}

bool mc_symcache_rename(const char *from, const char *to)
{
	int d = dir_open(false);
	if (d < 0)
		return false;
	bool ok = renameat(d, from, d, to) == 0;
	dir_close(d);
	return ok;
}

void mc_symcache_unlink(const char *name)
{
	int d = dir_open(false);
	if (d < 0)
		return;
	unlinkat(d, name, 0);
	dir_close(d);
}

/* ---- the index ---- */

/* A name answer's key beside its offset, in the index's max: the kind,
 * and 24 bits of the string's sum above it (two strings sharing them:
 * the second is not kept, its answers asked anew). */
static uint32_t name_key(const char *s, size_t len)
{
	return MC_SYMCACHE_NAME | (mc_symcache_sum(s, len) << 8);
}

static size_t slot_of(uint64_t off, uint32_t max, size_t cap)
{
	/* a name answer's string sum (max's high bits) mixed in: its
	 * answers for every offset share one off */
	uint64_t h = (off ^ ((uint64_t)max << 56) ^ ((uint64_t)(max >> 8) << 24)) *
		     0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (cap - 1);
}

static struct sc_ent *find(struct sc_mod *m, uint64_t off, uint32_t max)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(off, max, m->cap);; i = (i + 1) & (m->cap - 1)) {
		struct sc_ent *e = &m->tab[i];
		if (!e->at || (e->off == off && e->max == max))
			return e;
	}
}

static bool index_add(struct sc_mod *m, uint64_t off, uint32_t max, uint32_t at)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct sc_ent *t = mc_map(cap * sizeof *t);
		if (!t)
			return false;
		/* in the exit's tail: a read of a fresh page (find) maps the
		 * zero page, its write then copies it; written first, one
		 * fault a page (suite_test 0's JSON exit: 4 -> 2) */
		mc_write_first(t, cap * sizeof *t);
		struct sc_ent *old = m->tab;
		size_t oldcap = m->cap;
		m->tab = t;
		m->cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].at)
				*find(m, old[i].off, old[i].max) = old[i];
		if (old)
			mc_unmap(old, oldcap * sizeof *old);
	}
	struct sc_ent *e = find(m, off, max);
	if (e->at)
		return true;   /* a record appended twice: the first is the same */
	*e = (struct sc_ent){ off, max, at };
	m->n++;
	return true;
}

/* A name record's answers are indexed each (at: of the answer). */
struct names_at {
	struct sc_mod *m;
	size_t at;
	uint32_t bits;
};

static void note_name(void *arg, uint64_t off, bool found, const char *s, size_t len, size_t at)
{
	(void)found;
	struct names_at *na = arg;
	index_add(na->m, off, name_key(s, len), ((uint32_t)(na->at + at) + 1) | na->bits);
}

static void note(void *arg, uint64_t off, int max, size_t at, size_t size)
{
	struct sc_mod *m = arg;
	if (max == MC_SYMCACHE_NAME) {
		struct names_at na = { m, at, 0 };
		mc_symcache_names_each(m->data + at, size, note_name, &na);
		return;
	}
	index_add(m, off, (uint32_t)max, (uint32_t)at + 1);
}

static void load(struct sc_mod *m)
{
	m->loaded = true;
	char name[2 * SC_ID_MAX + 1];
	mc_hex(name, m->id, m->idlen);
	int fd = mc_symcache_open(name, O_RDONLY);
	if (fd < 0)
		return;
	struct stat st;
	if (mc_symcache_ours(fd, S_IFREG, &st) && st.st_size > 0) {   /* one fstat for both */
		size_t want = st.st_size > SC_FILE_MAX ? SC_FILE_MAX : (size_t)st.st_size;
		/* Not page-rounded here: at the process's end the buffers
		 * of a few small files (and their indexes) share the exit
		 * tail's pages, where each took a page of its own, a fault
		 * at the read (mc_map_io rounds a mapping of its own). */
		m->maplen = want;
		m->data = mc_map_io(m->maplen);
		while (m->data && m->len < want) {
			ssize_t r = read(fd, m->data + m->len, want - m->len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			m->len += (size_t)r;
		}
		if (m->data)
			mc_symcache_parse(m->data, m->len, note, m);
	}
	close(fd);
}

static struct sc_mod *mod_of(const unsigned char *id, size_t idlen, bool add)
{
	if (!idlen || idlen > SC_ID_MAX)
		return NULL;
	for (unsigned i = 0; i < mods_next; i++)
		if (mods[i].idlen == idlen && memcmp(mods[i].id, id, idlen) == 0)
			return &mods[i];
	if (!add || mods_next == SC_MODS)
		return NULL;
	struct sc_mod *m = &mods[mods_next++];
	m->used = true;
	memcpy(m->id, id, idlen);
	m->idlen = idlen;
	return m;
}

int mc_symcache_get(const unsigned char *id, size_t idlen, uint64_t off, int max,
		    struct mc_frame_info *out)
{
	int saved = errno;
	int n = 0;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	if (m && !m->loaded)
		load(m);
	struct sc_ent *e = m ? find(m, off, (uint32_t)max) : NULL;
	if (e && e->at) {
		uint32_t at = (e->at - 1) & ~PENDING_BIT;
		const char *p = ((e->at - 1) & PENDING_BIT) ? m->pending.s : m->data;
		uint32_t size = rd32(p + at - 8);
		uint64_t o;
		int mx;
		n = mc_symcache_decode(p + at, size, &o, &mx, out, max);
		for (int i = 0; i < n; i++)
			out[i].object[0] = 0;
	}
	errno = saved;
	return n;
}

bool mc_symcache_holds(const unsigned char *id, size_t idlen)
{
	int saved = errno;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	if (m && !m->loaded)
		load(m);
	errno = saved;
	return m && m->len > 0;
}

bool mc_symcache_quick_view(const char *p, size_t size, int32_t *line, const char *str[3],
			    size_t len[3])
{
	/* as mc_symcache_decode reads a quick record: one frame */
	const struct mc_frame_info *const f = NULL;
	const size_t cap[3] = { sizeof f->function, sizeof f->linkage, sizeof f->file };
	uint16_t mx, n;
	size_t k = 16;
	if (size < 16)
		return false;
	LOAD(&mx, p + 8, 2);
	LOAD(&n, p + 10, 2);
	LOAD(line, p + 12, 4);
	if (mx != MC_SYMCACHE_QUICK || n != 1 || *line < 0)
		return false;
	for (int i = 0; i < 3; i++) {
		str[i] = p + k;
		if (!take_str(p, size, &k, NULL, cap[i]))
			return false;
		len[i] = (size_t)(p + k - 1 - str[i]);
	}
	return k == size;
}

bool mc_symcache_quick_ref(const unsigned char *id, size_t idlen, uint64_t off, int32_t *line,
			   const char *str[3], size_t len[3])
{
	int saved = errno;
	bool ok = false;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	if (m && !m->loaded)
		load(m);
	struct sc_ent *e = m ? find(m, off, MC_SYMCACHE_QUICK) : NULL;
	if (e && e->at) {
		uint32_t at = (e->at - 1) & ~PENDING_BIT;
		const char *p = (((e->at - 1) & PENDING_BIT) ? m->pending.s : m->data) + at;
		ok = mc_symcache_quick_view(p, rd32(p - 8), line, str, len);
	}
	errno = saved;
	return ok;
}

void mc_symcache_put(const unsigned char *id, size_t idlen, uint64_t off, int max,
		     const struct mc_frame_info *f, int n)
{
	int saved = errno;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	/* read first where no get did (quick_get leaves a key's file alone
	 * where the build ID's holds the object's frames): a record the
	 * file holds is not appended again, nor one past its size */
	if (m && !m->loaded)
		load(m);
	if (!m || m->pending.oom || (m->cap && find(m, off, (uint32_t)max)->at))
		return;
	char rec[12 + 12 + MC_MAX_INLINE * (4 + sizeof f->function + sizeof f->linkage +
					    sizeof f->file)];
	size_t len = mc_symcache_encode(rec, sizeof rec, off, max, f, n);
	if (!len || m->len + m->pending.len + len > SC_FILE_MAX)
		return;
	size_t at = m->pending.len + 12;
	mc_buf_put(&m->pending, rec, len);
	if (!m->pending.oom)
		index_add(m, off, (uint32_t)max, ((uint32_t)at + 1) | PENDING_BIT);
	errno = saved;   /* mmap's, where memory ran out */
}

const char *mc_symcache_link_get(const unsigned char *id, size_t idlen)
{
	int saved = errno;
	const char *link = NULL;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	if (m && !m->loaded)
		load(m);
	struct sc_ent *e = m ? find(m, 0, MC_SYMCACHE_LINK) : NULL;
	if (e && e->at) {
		uint32_t at = (e->at - 1) & ~PENDING_BIT;
		const char *p = ((e->at - 1) & PENDING_BIT) ? m->pending.s : m->data;
		link = mc_symcache_link_view(p + at, rd32(p + at - 8));
	}
	errno = saved;
	return link;
}

void mc_symcache_link_put(const unsigned char *id, size_t idlen, const char *link)
{
	int saved = errno;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	if (m && !m->loaded)
		load(m);    /* its link record, if it has one, found first */
	char rec[24 + MC_SYMCACHE_LINK_LEN + 1];
	size_t len = m && !m->pending.oom && !(m->cap && find(m, 0, MC_SYMCACHE_LINK)->at) ?
		mc_symcache_link_encode(rec, sizeof rec, link) : 0;
	if (len && m->len + m->pending.len + len <= SC_FILE_MAX) {
		size_t at = m->pending.len + 12;
		mc_buf_put(&m->pending, rec, len);
		if (!m->pending.oom)
			index_add(m, 0, MC_SYMCACHE_LINK, ((uint32_t)at + 1) | PENDING_BIT);
	}
	errno = saved;
}

int mc_symcache_name_get(const unsigned char *id, size_t idlen, uint64_t off, const char *s,
			 size_t len, bool *any)
{
	int saved = errno;
	int found = -1;
	*any = false;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	if (m && !m->loaded)
		load(m);
	const uint32_t key = name_key(s, len);
	for (int k = 0; m && m->cap && k < 2 && found < 0; k++) {
		struct sc_ent *e = find(m, k ? off : MC_SYMCACHE_ANY, key);
		if (!e->at)
			continue;
		uint32_t at = (e->at - 1) & ~(PENDING_BIT | NAMES_BIT);
		const char *p = !((e->at - 1) & PENDING_BIT) ? m->data
			      : ((e->at - 1) & NAMES_BIT) ? m->names.s : m->pending.s;
		/* the string itself compared: two strings may share a key */
		if ((unsigned char)p[at + 9] == len && memcmp(p + at + 10, s, len) == 0) {
			found = p[at + 8];
			*any = !k;
		}
	}
	errno = saved;
	return found;
}

void mc_symcache_name_put(const unsigned char *id, size_t idlen, uint64_t off, const char *s,
			  size_t len, bool found)
{
	int saved = errno;
	struct sc_mod *m = dir_name() ? mod_of(id, idlen, true) : NULL;
	const uint32_t key = name_key(s, len);
	if (!m || !len || len > MC_SYMCACHE_NAME_LEN || m->names.oom ||
	    m->names_n - m->names_n_written == UINT16_MAX || (m->cap && find(m, off, key)->at) ||
	    m->len + m->pending.len + 24 + m->names.len - m->names_written + 10 + len > SC_FILE_MAX)
		return;
	char ent[10 + MC_SYMCACHE_NAME_LEN];
	memcpy(ent, &off, 8);
	ent[8] = found;
	ent[9] = (char)len;
	memcpy(ent + 10, s, len);
	size_t at = m->names.len;
	mc_buf_put(&m->names, ent, 10 + len);
	if (!m->names.oom) {
		m->names_n++;
		index_add(m, off, key, ((uint32_t)at + 1) | PENDING_BIT | NAMES_BIT);
	}
	errno = saved;
}

/* m's name answers not yet written, framed as one record at the end of
 * its pending records. */
static void names_frame(struct sc_mod *m)
{
	size_t len = m->names.len - m->names_written;
	int n = m->names_n - m->names_n_written;
	if (!n || m->names.oom || m->pending.oom)
		return;
	char head[24] = { 0 };   /* framed below, once its answers follow */
	size_t at = m->pending.len;
	mc_buf_put(&m->pending, head, sizeof head);
	mc_buf_put(&m->pending, m->names.s + m->names_written, len);
	if (m->pending.oom)
		return;
	/* framed in place: its answers' bytes are already there */
	if (!mc_symcache_names_encode(m->pending.s + at, sizeof head + len,
				      m->pending.s + at + sizeof head, len, n))
		m->pending.len = at;
	m->names_written = m->names.len;
	m->names_n_written = m->names_n;
}

void mc_symcache_flush(void)
{
	int saved = errno;
	for (unsigned i = 0; i < mods_next; i++) {
		struct sc_mod *m = &mods[i];
		names_frame(m);
		if (m->written == m->pending.len || m->pending.oom)
			continue;
		char name[2 * SC_ID_MAX + 1];
		mc_hex(name, m->id, m->idlen);
		int fd = mc_symcache_open(name, O_WRONLY | O_APPEND | O_CREAT);
		struct stat st;
		if (fd >= 0 && mc_symcache_ours(fd, S_IFREG, &st) &&
		    (size_t)st.st_size + m->pending.len - m->written <= SC_FILE_MAX) {
			ssize_t w;
			do
				w = mc_file_write(fd, m->pending.s + m->written, m->pending.len - m->written);
			while (w < 0 && errno == EINTR);
		}
		if (fd >= 0)
			close(fd);
		/* Written or not, these are not tried again; the index
		 * keeps answering them from the buffer. */
		m->written = m->pending.len;
	}
	errno = saved;
}

/* A forked child's: only the modules used (those past mods_next are
 * zero), none where the parent used none; every child wrote mods' 3.4
 * KiB and mods_next, two pages copied from its parent's
 * (tests/prog/plain_fork_faults). */
void mc_symcache_forget(void)
{
	if (!mods_next)
		return;
	memset(mods, 0, mods_next * sizeof *mods);
	mods_next = 0;
}
