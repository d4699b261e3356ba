/*
 * suppcache.c - the parsed suppression files kept across processes, in
 * MEMCHECK_CACHE's directory (symcache.c's), so that a reporting process
 * stats the files instead of reading and parsing them (~126 K
 * instructions and ~24 system calls for the shipped eight at every exit
 * that matched a record).  The file format is memcheck-cache(5).
 *
 * One file a set of inputs (the library's path, which names the shipped
 * directory's candidates, and MEMCHECK_SUPPRESSIONS), named by a hash of
 * them and holding them whole: what the load found at each path it
 * looked at (a directory candidate absent; the directory read, whose
 * mtime and ctime change with its entries; each file read), then the
 * set as suppress.c's image.  A later process with the same inputs
 * stats each path and takes the image if every one is as noted; any
 * mismatch, damage (a checksum over the file) or failure: the files are
 * parsed as before and the cache written again, whole, to a temporary
 * file renamed over it.  A load in which a file did not parse, or had
 * a note (an entry skipped, supp_region.c's load_note), is never kept:
 * its messages are the parse's to give, every time.
 *
 * No malloc (mmap'd buffers), no file descriptor kept open, errno as it
 * was.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define SP_MAGIC 0x4353434dU         /* "MCSC", little-endian */
#define SP_VERSION 2
#define SP_VMAGIC 0x5256434dU        /* "MCVR": a verdict record */
#define SP_SMAGIC 0x5356434dU        /* "MCVS": the set's notes and counts */
#define SP_NMAGIC 0x4e56434dU        /* "MCVN": an entry's name, file, line */
#define SP_FILE_MAX (4u << 20)
/* No verdict appended past this to a program's verdict file: a failing
 * process reads its program's file whole (its pages faulted in, ~4 KiB
 * a fault).  A record ~300 bytes: some 800 verdicts a program.  (One
 * file for every program, as before session 24, reached this at the
 * ~56th distinct leaking test binary of a suite, and the 45th's exit
 * paid +64.5 K instructions, +61 faults for the others' records.) */
#define SP_VERDICTS_MAX (256u << 10)

struct sp_hdr {
	uint32_t magic, version, keylen, nnotes;
	uint64_t notes_len, image_len, sum;
};

/* What a path was: absent, or this file or directory.  The path's
 * bytes follow, padded to 8. */
struct sp_note {
	uint32_t pathlen, absent;
	uint64_t dev, ino, size, mtime, ctime;
	uint32_t mode, pad;
};

static struct mc_buf notes;      /* the key, then the notes */
static size_t key_len;
static uint32_t nnotes;
static bool nokeep, recording;

/* Over whole words (the file's length is a multiple of 8): a byte-wise
 * hash of the shipped set's ~20 KB was ~80 K instructions.  Each word
 * read unaligned (a verdict record's links follow its key). */
uint64_t mc_suppcache_sum(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		__builtin_memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

static uint64_t ns(struct timespec t)
{
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void fill(struct sp_note *n, const struct stat *st)
{
	n->dev = st->st_dev;
	n->ino = st->st_ino;
	n->size = (uint64_t)st->st_size;
	n->mtime = ns(st->st_mtim);
	n->ctime = ns(st->st_ctim);
	n->mode = st->st_mode;
}

void mc_suppcache_begin(const char *key, size_t len)
{
	mc_buf_free(&notes);
	nnotes = 0;
	nokeep = false;
	recording = true;
	key_len = len;
	mc_buf_put(&notes, key, len);
}

void mc_suppcache_note(const char *path, bool opened)
{
	if (!recording)
		return;
	int saved = errno;
	struct sp_note n = { .pathlen = (uint32_t)strlen(path) };
	struct stat st;
	bool there = stat(path, &st) == 0;
	errno = saved;
	/* open and stat disagree (a directory we may not read): a later
	 * stat could not tell what the open would do */
	if (there != opened || n.pathlen >= 4096) {
		nokeep = true;
		return;
	}
	if (there)
		fill(&n, &st);
	else
		n.absent = 1;
	mc_buf_put(&notes, (const char *)&n, sizeof n);
	mc_buf_put(&notes, path, n.pathlen);
	static const char zero[8];
	mc_buf_put(&notes, zero, (8 - n.pathlen % 8) % 8);
	nnotes++;
}

static size_t up8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* A directory noted (not absent) is held open (O_PATH) while the notes
 * after it are checked, and a file noted in it is stat'ed by its name
 * from there, not by its whole path from the root.  The shipped set is
 * one directory and its nine files: a stat by such a path took 2.7-4.3
 * us here against 2.0-2.9 us by name from the directory, and a set's
 * stats 31-49 us against 25-45 us this way, its open and close counted
 * (doc/costs.md, r-session57-exit57).  The directory's own note is
 * checked by fstat of what was opened: the files are stat'ed in the
 * directory whose note held, not in one put at its path since. */
struct note_dir {
	int fd;                   /* -1: none held */
	const char *path;         /* the note's path, len bytes */
	size_t len;
};

/* stat of the note's path p[0, len) (len < 4096), dir its kind (d then
 * holds it where it opens).  The path's copy on the stack as short as
 * the path, where notes_hold's 4 KiB was a warm exit's deepest frame,
 * each 4 KiB deeper a page fault.  Out of line: inlined, notes_hold
 * took 244 bytes more of the exit's code (place-check's group 1t room
 * 0x899 -> 0x7a5). */
static __attribute__((noinline)) bool note_stat(struct note_dir *d, const char *p, size_t len,
						 bool dir, struct stat *st)
{
	char path[len + 1];
	memcpy(path, p, len);
	path[len] = 0;
	long at = AT_FDCWD, flags = 0;
	const char *name = path;
	size_t dl = d->len;
	if (dir) {
		if (d->fd >= 0)
			close(d->fd);
		d->fd = mc_sys_open(path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		d->path = p;
		d->len = len;
		if (d->fd >= 0) {
			at = d->fd;
			name = path + len;        /* "" */
			flags = AT_EMPTY_PATH;
		}
	} else if (d->fd >= 0 && len > dl + 1 && p[dl] == '/' && !memcmp(p, d->path, dl)) {
		at = d->fd;
		name = path + dl + 1;
	}
	/* syscall, not fstatat: mc_sc_syscall (internal.h) asks a filter the
	 * program installed, and no C library wrapper is bound for it */
	return syscall(SYS_newfstatat, at, name, st, flags) == 0;
}

/* The count notes p[0, len) whole, each path as it was noted where
 * check says (stat'ed again); false: damaged, or a path changed. */
static bool notes_hold(const char *p, size_t len, uint32_t count, bool check)
{
	int saved = errno;
	size_t at = 0;
	struct note_dir dir = { .fd = -1 };
	bool ok = false;
	for (uint32_t i = 0; i < count; i++) {
		struct sp_note n;
		if (len - at < sizeof n)
			goto out;
		memcpy(&n, p + at, sizeof n);
		at += sizeof n;
		if (n.pathlen >= 4096 || len - at < up8(n.pathlen) || n.absent > 1)
			goto out;
		const char *path = p + at;
		at += up8(n.pathlen);
		if (!check)
			continue;
		struct stat st;
		bool there = note_stat(&dir, path, n.pathlen, !n.absent && S_ISDIR(n.mode), &st);
		struct sp_note now = n;
		if (there)
			fill(&now, &st);
		if (there == (bool)n.absent || memcmp(&now, &n, sizeof n) != 0)
			goto out;
	}
	ok = at == len;
out:
	if (dir.fd >= 0)
		close(dir.fd);
	errno = saved;
	return ok;
}

static void file_name_of(char *name, uint64_t h)
{
	static const char digits[] = "0123456789abcdef";
	memcpy(name, "supp-", 5);
	for (int i = 0; i < 16; i++)
		name[5 + i] = digits[(h >> (60 - 4 * i)) & 15];
	name[21] = 0;
}

static void file_name(char *name, const char *key, size_t keylen)
{
	file_name_of(name, mc_fnv1a(key, keylen));
}

/* ---- verdicts: which entry a leak record's stack matched ----------------
 *
 * A record appended after the set (memcheck-cache(5)): the stack's key
 * (the record's kind, each frame as its object and offset, each object's
 * quick key and path: symbolize.c's mc_symbolize_verdict_key), the
 * .gnu_debuglink names whose places held no file when it was written,
 * the entry (or -1: none), stamped with the set's sum and the file's
 * inode.  A reporting process whose stacks were all matched before then
 * neither names their frames nor matches them (/bin/date's exit).
 *
 * Sound on symcache.c's premise: a build ID names an object's bytes, and
 * its names follow from those bytes and the states its key holds (the
 * build-ID debug file's, the link places', MEMCHECK_SYMBOLIZE_SYSTEM);
 * the writer keeps no verdict of an object whose names may come from
 * elsewhere (mc_symbolize_verdict_key).  The set is the file's: a record
 * of another set or another file (one renamed over this between a read
 * and an append) is skipped, as are torn and damaged ones. */

struct sp_vrec {
	uint32_t magic, len;      /* len: the whole record, a multiple of 8 */
	uint64_t set, ino;        /* the set's sum, the file's inode */
	uint64_t hash;            /* of the key's bytes */
	uint32_t keylen, linkslen;
	int32_t verdict;
	uint32_t pad;
	uint64_t check;           /* mc_suppcache_sum of the record, check 0 */
};
_Static_assert(sizeof(struct sp_vrec) == 56, "memcheck-cache(5): a record's head");

static struct {
	const char *p;            /* the records read, in the set's mapping */
	size_t len;
	uint64_t set, ino;
	size_t nset;
	bool file;                /* set, ino: a file's */
	bool indexed;
	uint32_t *tab;            /* 1 + a record's offset in p; 0 free */
	size_t cap, mapped;
	char *vmap;               /* the program's verdict file, read */
	size_t vmapped;
	bool vfile;               /* vmap maps the file (verdicts_read) */
	struct mc_buf mine;       /* this process's records */
	size_t flushed;           /* mine[0, flushed) written */
	char name[48];            /* the program's verdict file */
	const struct mc_supps *s; /* the set, for the names written */
	const char *notes;        /* its notes, for the summary written */
	size_t notes_len;
	uint32_t nnotes;
	bool summed;              /* the file has this set's summary */
	bool light;               /* the set's file not read (mc_suppcache_light) */
	bool same;                /* the set's file is the summary's (its sum, inode) */
	uint32_t *names;          /* entry i's name record in p: 1 + its offset; 0 none */
	size_t names_n, names_mapped;
	size_t name_last, name_last_i; /* the name found last: 1 + its offset, its entry */
	uint64_t names_set, names_ino; /* what those were found for */
	bool names_tried;
} vc;

static void verdicts_from(const char *p, size_t len, uint64_t set, const struct mc_supps *s)
{
	/* the summary's set after all (light_region asked what its records
	 * did not answer): its verdicts as read and indexed */
	if (vc.light && vc.same && s && set == vc.set) {
		vc.s = s;
		vc.nset = mc_supp_count(s);
		vc.light = vc.same = false;
		return;
	}
	if (vc.tab)
		mc_unmap(vc.tab, vc.mapped);
	if (vc.names)
		mc_unmap(vc.names, vc.names_mapped);
	if (vc.vmap && !vc.vfile)
		mc_unmap_io(vc.vmap, vc.vmapped);
	mc_buf_free(&vc.mine);
	vc = (typeof(vc)){ .p = p, .len = len, .set = set, .nset = mc_supp_count(s), .s = s };
}

void mc_suppcache_verdicts_forget(void)
{
	vc = (typeof(vc)){ 0 };
}

/* What names the program: the main executable's GNU build ID, read in
 * memory from its PT_NOTE segments (AT_PHDR: the kernel maps the
 * program headers with the program); without one, the path it was run
 * by (AT_EXECFN).  Only which file its verdicts go to: each record
 * holds its whole stack key (objects' quick keys and offsets), checked
 * when read, so two programs sharing a name share a file and nothing
 * else. */
static uint64_t program_hash(void)
{
	size_t phnum;
	uintptr_t bias = 0, lo = UINTPTR_MAX;
	const ElfW(Phdr) *ph = mc_main_phdrs(&phnum, &bias);
	for (size_t i = 0; ph && i < phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0 && ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
	if (ph && lo != UINTPTR_MAX) {
		size_t len = 0;
		const unsigned char *id = mc_image_build_id((const void *)(bias + lo), bias, &len);
		if (id && len)
			return mc_fnv1a(id, len);
	}
	const char *fn = (const char *)getauxval(AT_EXECFN);
	return fn ? mc_fnv1a(fn, strlen(fn)) ^ 1 : 0;
}

static void hex16(char *w, uint64_t h)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++)
		w[i] = digits[(h >> (60 - 4 * i)) & 15];
}

/* The set's file is name (supp-HASH); the program's verdicts go to
 * supp-HASH-PROG.v beside it (memcheck-cache(5)), stamped with the
 * set's sum and the set file's inode as they were when they followed
 * the set in its file. */
static void set_file(const char *name, const struct stat *st)
{
	vc.ino = st->st_ino;
	vc.file = true;
	memcpy(vc.name, name, 21);
	vc.name[21] = '-';
	hex16(vc.name + 22, program_hash());
	memcpy(vc.name + 38, ".v", 3);
}

/* The cache's file name, ours and regular, of 1 to max bytes, read
 * whole into a mc_map_io'd buffer of *len bytes (its stat in *st); NULL:
 * none.  errno as it was.  *mapped (NULL: never): the file mapped
 * instead, read-only, where the mmap succeeds (the caller's premise,
 * verdicts_read's), and then true. */
static char *read_whole(const char *name, size_t max, size_t *len, struct stat *st,
			bool *mapped)
{
	int saved = errno;
	char *p = NULL;
	int fd = mc_symcache_open(name, O_RDONLY);
	if (mapped)
		*mapped = false;
	if (fd >= 0 && mc_symcache_ours(fd, S_IFREG, st) && st->st_size > 0 &&
	    (uint64_t)st->st_size <= max) {
		*len = (size_t)st->st_size;
		ssize_t got = -1;
		void *m = mapped ? mc_map_file(*len, fd, 0) : MAP_FAILED; /* kept: apart */
		if (m != MAP_FAILED) {
			p = m;
			got = (ssize_t)*len;
			*mapped = true;
		} else if ((p = mc_map_io(*len))) {
			do
				got = read(fd, p, *len);
			while (got < 0 && errno == EINTR);
		}
		if (p && got != (ssize_t)*len) {
			mc_unmap_io(p, *len);
			p = NULL;
		}
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
	return p;
}

/* The program's verdict file read whole into vc.p, vc.len (none, empty,
 * not ours or torn by a shorter read: no records; a torn last record
 * is skipped by the walk).
 *
 * At the process's end at exit (mc_suppcache_light) where the RSS
 * figures are not measured, the file is mapped, not read: read(2)
 * copied it into fresh pages of the exit's tail, three for a measured
 * /bin/date's 11 KB, each a first touch (10-15 us on these VMs), where
 * one fault maps the page cache's pages (the kernel's fault-around).
 * Never unmapped (verdicts_from): the exit takes it, as the tail's
 * pieces, and a munmap costs more than it saves.  Where the figures are
 * measured, read as before: the mapping's resident pages would count
 * as the program's (footprint.c counts the tail's and ownread.c's views
 * as memcheck's, not this).  Premise: the cache's files are never
 * truncated in place (memcheck appends to a verdict file and replaces
 * the others by rename): a truncation under the mapping would make its
 * later pages fault with SIGBUS, where a read only came short. */
static void verdicts_read(bool at_exit)
{
	struct stat st;
	size_t len;
	bool mapped = false;
	char *p = read_whole(vc.name, SP_VERDICTS_MAX, &len, &st,
			     at_exit && !mc_own_read_recording() ? &mapped : NULL);
	if (p) {
		vc.vmap = p;
		vc.vmapped = len;
		vc.vfile = mapped;
		vc.p = p;
		vc.len = len;
	}
}

/* A record's checksum: its head (the checksum 0) and its links.  Not
 * a verdict's key, which a reader compares byte for byte with the one
 * it made: a damaged key is one that is never found.  A summary's or a
 * name's body (its "key") is summed: it is taken as it reads. */
static uint64_t vrec_sum(const char *p, const struct sp_vrec *r)
{
	struct sp_vrec h = *r;
	h.check = 0;
	uint64_t sum = mc_symcache_hash((const char *)&h, sizeof h) ^
		       mc_symcache_hash(p + sizeof h + r->keylen, r->linkslen) * 31;
	if (r->magic != SP_VMAGIC)
		sum ^= mc_symcache_hash(p + sizeof h, r->keylen) * 17;
	return sum;
}

/* The record at p[0, len)'s length if it is whole, else 0 (the walk
 * stops); *valid: it is of kind magic, its set and file are the set's,
 * its parts inside it, and (where check says) its checksum holds. */
static size_t vrec_at(const char *p, size_t len, uint64_t set, uint64_t ino, bool check,
		      uint32_t magic, bool *valid)
{
	struct sp_vrec r;
	*valid = false;
	if (len < sizeof r)
		return 0;
	__builtin_memcpy(&r, p, sizeof r);
	if ((r.magic != SP_VMAGIC && r.magic != SP_SMAGIC && r.magic != SP_NMAGIC) || r.len % 8 ||
	    r.len < sizeof r || r.len > len)
		return 0;
	*valid = r.magic == magic && r.set == set && r.ino == ino &&
		 r.keylen <= r.len - sizeof r && r.linkslen <= r.len - sizeof r - r.keylen &&
		 r.verdict >= (magic == SP_VMAGIC ? -1 : 0);
	if (*valid && check)
		*valid = r.check == vrec_sum(p, &r);
	return r.len;
}

size_t mc_suppcache_verdicts_count(const char *p, size_t len, uint64_t set, uint64_t ino)
{
	size_t n = 0, at = 0, l;
	bool valid;
	while ((l = vrec_at(p + at, len - at, set, ino, true, SP_VMAGIC, &valid)) != 0) {
		n += valid;
		at += l;
	}
	return n;
}

static void index_build(void)
{
	vc.indexed = true;
	if (!vc.file)
		return;
	if (!vc.vmap)   /* mc_suppcache_light read it */
		verdicts_read(false);
	if (vc.len > UINT32_MAX / 2)
		return;
	/* at most this many: the walk below checks no sums (a record's is
	 * checked when its key is found, vrec_verdict) */
	size_t n = vc.len / sizeof(struct sp_vrec);
	if (!n)
		return;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	if (!(vc.tab = mc_map(cap * sizeof *vc.tab)))
		return;
	vc.cap = cap;
	vc.mapped = cap * sizeof *vc.tab;
	size_t at = 0, l;
	bool valid;
	while ((l = vrec_at(vc.p + at, vc.len - at, vc.set, vc.ino, false, SP_VMAGIC, &valid)) != 0) {
		if (valid) {
			struct sp_vrec r;
			__builtin_memcpy(&r, vc.p + at, sizeof r);
			size_t i = (size_t)(r.hash * 0x9e3779b97f4a7c15ull >> 32) & (cap - 1);
			while (vc.tab[i])
				i = (i + 1) & (cap - 1);
			vc.tab[i] = (uint32_t)at + 1;
		} else if (!vc.summed) {
			vrec_at(vc.p + at, l, vc.set, vc.ino, true, SP_SMAGIC, &vc.summed);
		}
		at += l;
	}
}

/* The verdict of the record at r if its key is s's, its sum holds and
 * its link places still hold no file; -2: not. */
static long vrec_verdict(const char *r, const struct mc_verdict_stack *s)
{
	struct sp_vrec v;
	bool valid;
	__builtin_memcpy(&v, r, sizeof v);
	if (v.hash != s->hash || v.keylen != s->len || v.verdict >= (long)vc.nset ||
	    !vrec_at(r, v.len, vc.set, vc.ino, true, SP_VMAGIC, &valid) || !valid ||
	    !mc_symbolize_verdict_holds(s, r + sizeof v, v.keylen, r + sizeof v + v.keylen,
					v.linkslen))
		return -2;
	return v.verdict;
}

/* The key of a kind's stack pcs[0, n) into a (and the writer's link
 * names into links); false: not to be cached. */
static bool verdict_key(int kind, const uintptr_t *pcs, int n, struct mc_buf *a,
			struct mc_buf *links)
{
	char *w = mc_buf_room(a, 1);
	if (!w)
		return false;
	*w = (char)(kind & 7); /* a leak kind or MC_SUPP_POOL */
	mc_buf_end(a, w + 1);
	return mc_symbolize_verdict_key(pcs, n, a, links);
}

long mc_suppcache_verdict(int kind, const uintptr_t *pcs, int n)
{
	if (!vc.file || mc_opt.gen_suppressions)
		return -2;
	if (!vc.indexed)
		index_build();
	/* this process's own records only of the regions before this one:
	 * a region's records are distinct stacks and kinds */
	if (!vc.cap && !vc.flushed)
		return -2;
	struct mc_verdict_stack s;
	if (!mc_symbolize_verdict_stack(kind, pcs, n, &s))
		return -2;
	long v = -2;
	uint64_t h = s.hash;
	for (size_t i = vc.cap ? (size_t)(h * 0x9e3779b97f4a7c15ull >> 32) & (vc.cap - 1) : 0;
	     vc.cap && vc.tab[i] && v == -2; i = (i + 1) & (vc.cap - 1))
		v = vrec_verdict(vc.p + vc.tab[i] - 1, &s);
	for (size_t at = 0; at < vc.flushed && v == -2;) {
		struct sp_vrec r;
		__builtin_memcpy(&r, vc.mine.s + at, sizeof r);
		v = vrec_verdict(vc.mine.s + at, &s);
		at += r.len;
	}
	return v;
}

bool mc_suppcache_verdict_key(int kind, const uintptr_t *pcs, int n, struct mc_buf *key,
			      struct mc_buf *links)
{
	return vc.file && !mc_opt.gen_suppressions && vc.mine.len < (256u << 10) &&
	       verdict_key(kind, pcs, n, key, links);
}

/* A record of kind magic (its head, a then b, padded to 8) appended to
 * this process's records: a verdict (its stack's key and links), a
 * summary or a name. */
static void append(uint32_t magic, uint64_t hash, int32_t v, uint32_t pad, const char *a,
		   size_t alen, const char *b, size_t blen)
{
	struct sp_vrec r = { .magic = magic, .set = vc.set, .ino = vc.ino, .hash = hash,
			     .keylen = (uint32_t)alen, .linkslen = (uint32_t)blen, .verdict = v,
			     .pad = pad };
	size_t body = alen + blen;
	r.len = (uint32_t)(sizeof r + up8(body));
	char *w = mc_buf_room(&vc.mine, r.len);
	if (!w)
		return;
	memcpy(w + sizeof r, a, alen);
	memcpy(w + sizeof r + alen, b, blen);
	memset(w + sizeof r + body, 0, up8(body) - body);
	r.check = vrec_sum(w, &r);
	memcpy(w, &r, sizeof r);
	mc_buf_end(&vc.mine, w + r.len);
}

void mc_suppcache_verdict_put(const struct mc_buf *key, const struct mc_buf *links, long verdict)
{
	if (key->oom || links->oom || key->len + links->len > (64u << 10))
		return;
	append(SP_VMAGIC, mc_symbolize_verdict_hash(key->s, key->len), (int32_t)verdict, 0, key->s,
	       key->len, links->s, links->len);
}

/* ---- the set's file not read: a summary and names beside the verdicts --
 *
 * A reporting process whose every record has a verdict needs of the set
 * only its entry count and the names of the entries it used (the
 * report's used_suppression lines); a warm /bin/date's exit read the
 * whole set (11.7 KB into three fresh pages: an open, fstat, read and
 * close) for those.  So the program's file also holds, from the first
 * process that appended to it, the set's summary (MCVS: the set's
 * notes, as its file holds them, and its entry count) and a name record
 * (MCVN) for each entry a process of the program used; a later process
 * takes the last summary whose notes all stat as noted (the files are
 * those the set was parsed from: the same set, by the same library, as
 * the cache directory is the library's) and reads the set's file only
 * where a record lacks a verdict or an entry used lacks its name. */

/* The name record at p[at, len) if it is one of this set's, whole, its
 * sum holding where check says (its length into *l, 0: the walk ends
 * there): its entry in *i. */
static const char *name_rec(const char *p, size_t len, size_t at, bool check, size_t *l,
			    size_t *i, const char **file, int *line)
{
	bool valid;
	if (!(*l = vrec_at(p + at, len - at, vc.set, vc.ino, check, SP_NMAGIC, &valid)) || !valid)
		return NULL;
	struct sp_vrec r;
	__builtin_memcpy(&r, p + at, sizeof r);
	const char *name = p + at + sizeof r, *f = name + r.keylen;
	if (r.verdict < 0 || !r.keylen || !r.linkslen || name[r.keylen - 1] || f[r.linkslen - 1])
		return NULL;
	*i = (size_t)r.verdict;
	*file = f;
	*line = (int)r.pad;
	return name;
}

/* The name record of entry i for this set, in p[0, len), or NULL: the
 * first one, as a walk from the start finds it. */
static const char *name_walk(const char *p, size_t len, size_t i, const char **file, int *line,
			     size_t *found)
{
	size_t at = 0, l, e;
	const char *f, *name;
	int n;
	for (; at < len; at += l) {
		name = name_rec(p, len, at, true, &l, &e, &f, &n);
		if (!l)
			break;
		if (name && e == i) {
			*file = f;
			*line = n;
			*found = at;
			return name;
		}
	}
	return NULL;
}

/* Each entry's first name record in the file read (vc.p), found in one
 * walk: a used_suppression line each asked it, and each walked the
 * records from the start, every name record's sum again (a warm
 * /bin/date's exit: 33 walks, 95 K instructions of its ~450 K). */
static void names_index(void)
{
	if (vc.names_tried && vc.names_set == vc.set && vc.names_ino == vc.ino)
		return;
	if (vc.names)
		mc_unmap(vc.names, vc.names_mapped);
	vc.names = NULL;
	vc.names_n = vc.names_mapped = vc.name_last = 0;
	vc.names_tried = true;
	vc.names_set = vc.set;
	vc.names_ino = vc.ino;
	/* a table of entries, 4 bytes each: a set past 64 Ki entries (none
	 * known) walks the records for each name as before */
	if (!vc.nset || vc.nset > (1u << 16) || vc.len > UINT32_MAX / 2)
		return;
	size_t bytes = vc.nset * sizeof *vc.names;
	if (!(vc.names = mc_map(bytes)))
		return;
	vc.names_mapped = bytes;
	vc.names_n = vc.nset;
	size_t at = 0, l, e;
	const char *f;
	int n;
	for (; at < vc.len; at += l) {
		const char *name = name_rec(vc.p, vc.len, at, true, &l, &e, &f, &n);
		if (!l)
			break;
		if (name && e < vc.names_n && !vc.names[e])
			vc.names[e] = (uint32_t)at + 1;
	}
}

/* Entry i's name record in the file read (vc.p), or NULL. */
static const char *name_read(size_t i, const char **file, int *line)
{
	if (!vc.p)
		return NULL;
	size_t l, e, at;
	bool same = vc.names_set == vc.set && vc.names_ino == vc.ino;
	/* the entry found last asked again (light_region's check of a
	 * record's verdict, then its used_suppression line): its record as
	 * found, its sum held then and the buffer not written since */
	if (same && vc.name_last && vc.name_last_i == i)
		return name_rec(vc.p, vc.len, vc.name_last - 1, false, &l, &e, file, line);
	/* another entry's: the table (an mc_map and a walk of the whole
	 * file) pays from the second entry asked; one (a suite's leaking
	 * test, one entry used) walks as far as its record */
	if (vc.name_last || vc.names_tried)
		names_index();
	if (vc.names && i < vc.names_n)
		return vc.names[i] ? name_rec(vc.p, vc.len, vc.names[i] - 1, false, &l, &e, file, line)
				   : NULL;
	const char *name = name_walk(vc.p, vc.len, i, file, line, &at);
	if (name && !vc.names_tried) {
		vc.name_last = at + 1;
		vc.name_last_i = i;
		vc.names_set = vc.set;
		vc.names_ino = vc.ino;
	}
	return name;
}

bool mc_suppcache_light(uint64_t keysum, size_t *nset)
{
	if (mc_opt.gen_suppressions)
		return false;
	int saved = errno;
	verdicts_from(NULL, 0, 0, NULL);
	char name[32];
	file_name_of(name, keysum);
	memcpy(vc.name, name, 21);
	vc.name[21] = '-';
	hex16(vc.name + 22, program_hash());
	memcpy(vc.name + 38, ".v", 3);
	verdicts_read(true);
	/* the last summary whole, its sum holding */
	size_t at = 0, l, last = SIZE_MAX;
	struct sp_vrec r;
	while (vc.p && at + sizeof r <= vc.len) {
		__builtin_memcpy(&r, vc.p + at, sizeof r);
		bool valid;
		if (!(l = vrec_at(vc.p + at, vc.len - at, r.set, r.ino, true, SP_SMAGIC, &valid)))
			break;
		if (valid)
			last = at;
		at += l;
	}
	bool ok = last != SIZE_MAX;
	if (ok) {
		__builtin_memcpy(&r, vc.p + last, sizeof r);
		ok = r.hash <= UINT32_MAX &&
		     notes_hold(vc.p + last + sizeof r, r.keylen, (uint32_t)r.hash, true);
	}
	if (ok) {
		vc.set = r.set;
		vc.ino = r.ino;
		vc.nset = (size_t)r.verdict;
		vc.file = vc.light = vc.summed = true;
		*nset = vc.nset;
	} else {
		verdicts_from(NULL, 0, 0, NULL);
	}
	errno = saved;
	return ok;
}

const char *mc_suppcache_light_name(size_t i, const char **file, int *line)
{
	return vc.light ? name_read(i, file, line) : NULL;
}

void mc_suppcache_name_keep(size_t i, const char *name, const char *file, int line)
{
	const char *f;
	int n;
	size_t at;
	if (!vc.file || vc.light || !vc.indexed || !name || !file || line < 0 ||
	    name_read(i, &f, &n) || name_walk(vc.mine.s, vc.mine.len, i, &f, &n, &at))
		return;
	size_t a = strlen(name) + 1, b = strlen(file) + 1;
	if (a + b <= 8192)
		append(SP_NMAGIC, 0, (int32_t)i, (uint32_t)line, name, a, file, b);
}

void mc_suppcache_verdicts_flush(void)
{
	if (!vc.file || vc.flushed >= vc.mine.len)
		return;
	/* the summary with the first records a file takes of this set */
	if (!vc.summed && vc.indexed && vc.notes && vc.notes_len <= (64u << 10))
		append(SP_SMAGIC, vc.nnotes, (int32_t)vc.nset, 0, vc.notes, vc.notes_len, "", 0);
	vc.summed = true;
	int saved = errno;
	/* created only where absent: a create goes through the directory
	 * opened and checked (symcache.c's dir_open), 3 more system calls */
	int fd = mc_symcache_open(vc.name, O_WRONLY | O_APPEND);
	if (fd < 0 && errno == ENOENT)
		fd = mc_symcache_open(vc.name, O_WRONLY | O_APPEND | O_CREAT);
	struct stat st;
	size_t n = vc.mine.len - vc.flushed;
	/* whole records in one write(2), which O_APPEND keeps from
	 * interleaving with another process's; a record names the set file
	 * it follows by inode, so one of a set renamed over since is
	 * skipped by its readers */
	if (fd >= 0 && mc_symcache_ours(fd, S_IFREG, &st) &&
	    (uint64_t)st.st_size + n <= SP_VERDICTS_MAX) {
		ssize_t w;
		do
			w = mc_file_write(fd, vc.mine.s + vc.flushed, n);
		while (w < 0 && errno == EINTR);
	}
	vc.flushed = vc.mine.len;   /* tried once */
	if (fd >= 0)
		close(fd);
	errno = saved;
}

struct mc_supps *mc_suppcache_decode(char *p, size_t len, size_t maplen, const char *key,
				     size_t keylen, bool check)
{
	struct sp_hdr h;
	if (len < sizeof h || len % 8 || ((uintptr_t)p & 15))
		return NULL;
	memcpy(&h, p, sizeof h);
	if (h.magic != SP_MAGIC || h.version != SP_VERSION || h.keylen != keylen ||
	    h.notes_len > len || h.image_len > len || h.keylen > len)
		return NULL;
	size_t at = sizeof h + up8(keylen);
	size_t img = (at + (size_t)h.notes_len + 15) & ~(size_t)15;
	/* the set; anything after it (the verdicts a version before session
	 * 24 appended there) is not read: a program's are in its own file */
	if (at > len || h.notes_len % 8 || img > len || len - img < h.image_len ||
	    h.image_len % 8 ||
	    mc_suppcache_sum(p + sizeof h, img + (size_t)h.image_len - sizeof h) != h.sum ||
	    memcmp(p + sizeof h, key, keylen) != 0)
		return NULL;
	if (!notes_hold(p + at, (size_t)h.notes_len, h.nnotes, check))
		return NULL;
	struct mc_supps *s = mc_supp_image_take(p + img, (size_t)h.image_len, maplen ? p : NULL,
						maplen);
	if (s) {
		verdicts_from(NULL, 0, h.sum, s);
		vc.notes = p + at;
		vc.notes_len = (size_t)h.notes_len;
		vc.nnotes = h.nnotes;
	}
	return s;
}

struct mc_supps *mc_suppcache_get(const char *key, size_t keylen)
{
	int saved = errno;
	struct mc_supps *s = NULL;
	char name[32];
	file_name(name, key, keylen);
	struct stat st;
	size_t len;
	char *p = read_whole(name, SP_FILE_MAX, &len, &st, NULL);
	/* the file of the summary whose notes mc_suppcache_light stat'ed
	 * a moment ago: not stat'ed again */
	uint64_t sum;
	vc.same = vc.light && p && len >= sizeof(struct sp_hdr) && st.st_ino == vc.ino &&
		  (__builtin_memcpy(&sum, p + offsetof(struct sp_hdr, sum), sizeof sum), sum == vc.set);
	if (p)
		s = mc_suppcache_decode(p, len, len, key, keylen, !vc.same);
	vc.same = false;
	if (s)
		set_file(name, &st);   /* getauxval's ENOENT: errno restored */
	if (p && !s)
		mc_unmap_io(p, len);
	errno = saved;
	return s;
}

void mc_suppcache_put(const struct mc_supps *s)
{
	bool was = recording;
	recording = false;
	if (!was || nokeep || notes.oom || notes.len < 1)
		return;
	int saved = errno;
	struct mc_buf b = { 0 };
	/* notes holds the key, then the notes */
	const char *key = notes.s;
	struct sp_hdr h = { .magic = SP_MAGIC, .version = SP_VERSION, .nnotes = nnotes };
	h.keylen = (uint32_t)key_len;
	h.notes_len = notes.len - key_len;
	static const char zero[16];
	mc_buf_put(&b, (const char *)&h, sizeof h);
	mc_buf_put(&b, key, key_len);
	mc_buf_put(&b, zero, up8(key_len) - key_len);
	mc_buf_put(&b, notes.s + key_len, notes.len - key_len);
	mc_buf_put(&b, zero, (16 - b.len % 16) % 16);
	size_t img = b.len;
	if (!mc_supp_image_put(s, &b, SP_FILE_MAX) || b.len > SP_FILE_MAX || b.len % 8) {
		mc_buf_free(&b);
		errno = saved;
		return;
	}
	h.image_len = b.len - img;
	h.sum = 0;
	memcpy(b.s, &h, sizeof h);
	h.sum = mc_suppcache_sum(b.s + sizeof h, b.len - sizeof h);
	memcpy(b.s, &h, sizeof h);
	char name[32], tmp[64];
	file_name(name, notes.s, key_len);
	/* not snprintf: no vfprintf in a reporting process's exit */
	memcpy(tmp, name, 21);
	memcpy(tmp + 21, ".tmp.", 5);
	mc_utoa(tmp + 26, (uint64_t)mc_pid());
	int fd = mc_symcache_open(tmp, O_WRONLY | O_CREAT | O_EXCL);
	if (fd >= 0) {
		size_t done = 0;
		while (done < b.len) {
			ssize_t n = mc_file_write(fd, b.s + done, b.len - done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		bool ok = done == b.len;
		struct stat st;
		bool known = ok && fstat(fd, &st) == 0;
		ok &= close(fd) == 0;
		if (!ok || !mc_symcache_rename(tmp, name)) {
			mc_symcache_unlink(tmp);
		} else if (known) {
			/* this process's verdicts follow the set it wrote */
			verdicts_from(NULL, 0, h.sum, s);
			set_file(name, &st);
			vc.notes = notes.s + key_len;
			vc.notes_len = notes.len - key_len;
			vc.nnotes = nnotes;
		}
	}
	mc_buf_free(&b);
	errno = saved;
}
