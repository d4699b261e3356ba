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
 * file renamed over it.  A load in which a file did not parse is never
 * kept: its messages are the parse's to give, every time.
 *
 * No malloc (mmap'd buffers), no file descriptor kept open, errno as it
 * was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define SP_MAGIC 0x4353434dU         /* "MCSC", little-endian */
#define SP_VERSION 1
#define SP_FILE_MAX (4u << 20)

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

typedef uint64_t __attribute__((may_alias)) u64a;

/* Over whole words (the file's length is a multiple of 8): a byte-wise
 * hash of the shipped set's ~20 KB was ~80 K instructions. */
uint64_t mc_suppcache_sum(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		h = (h ^ *(const u64a *)(p + i)) * 0x100000001b3ull;
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

static void file_name(char *name, const char *key, size_t keylen)
{
	uint64_t h = mc_fnv1a(key, keylen);
	static const char digits[] = "0123456789abcdef";
	memcpy(name, "supp-", 5);
	for (int i = 0; i < 16; i++)
		name[5 + i] = digits[(h >> (60 - 4 * i)) & 15];
	name[21] = 0;
}

static size_t up8(size_t n)
{
	return (n + 7) & ~(size_t)7;
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
	if (at > len || h.notes_len % 8 || img > len || len - img != h.image_len ||
	    mc_suppcache_sum(p + sizeof h, len - sizeof h) != h.sum ||
	    memcmp(p + sizeof h, key, keylen) != 0)
		return NULL;
	size_t end = at + (size_t)h.notes_len;
	for (uint32_t i = 0; i < h.nnotes; i++) {
		struct sp_note n;
		if (end - at < sizeof n)
			return NULL;
		memcpy(&n, p + at, sizeof n);
		at += sizeof n;
		if (n.pathlen >= 4096 || end - at < up8(n.pathlen) || n.absent > 1)
			return NULL;
		char path[4096];
		memcpy(path, p + at, n.pathlen);
		path[n.pathlen] = 0;
		at += up8(n.pathlen);
		if (!check)
			continue;
		int saved = errno;
		struct stat st;
		bool there = stat(path, &st) == 0;
		errno = saved;
		struct sp_note now = n;
		if (there)
			fill(&now, &st);
		if (there == (bool)n.absent || memcmp(&now, &n, sizeof n) != 0)
			return NULL;
	}
	if (at != end)
		return NULL;
	return mc_supp_image_take(p + img, (size_t)h.image_len, maplen ? p : NULL, maplen);
}

struct mc_supps *mc_suppcache_get(const char *key, size_t keylen)
{
	int saved = errno;
	struct mc_supps *s = NULL;
	int dfd = mc_symcache_dir_open(false);
	char name[32];
	file_name(name, key, keylen);
	int fd = dfd >= 0 ? openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	struct stat st;
	if (fd >= 0 && mc_symcache_ours(fd, S_IFREG, &st) && st.st_size > 0 &&
	    st.st_size <= SP_FILE_MAX) {
		size_t len = (size_t)st.st_size;
		char *p = mc_map_io(len);
		ssize_t got = -1;
		if (p) {
			do
				got = read(fd, p, len);
			while (got < 0 && errno == EINTR);
		}
		if (p && got == (ssize_t)len)
			s = mc_suppcache_decode(p, len, len, key, keylen, true);
		if (p && !s)
			mc_unmap_io(p, len);
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
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
	if (!mc_supp_image_put(s, &b) || b.len > SP_FILE_MAX || b.len % 8) {
		mc_buf_free(&b);
		errno = saved;
		return;
	}
	h.image_len = b.len - img;
	h.sum = 0;
	memcpy(b.s, &h, sizeof h);
	h.sum = mc_suppcache_sum(b.s + sizeof h, b.len - sizeof h);
	memcpy(b.s, &h, sizeof h);
	int dfd = mc_symcache_dir_open(true);
	char name[32], tmp[64];
	file_name(name, notes.s, key_len);
	/* not snprintf: no vfprintf in a reporting process's exit */
	memcpy(tmp, name, 21);
	memcpy(tmp + 21, ".tmp.", 5);
	mc_utoa(tmp + 26, (uint64_t)mc_pid());
	int fd = dfd >= 0 ? openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				   O_CLOEXEC, 0600) : -1;
	if (fd >= 0) {
		size_t done = 0;
		while (done < b.len) {
			ssize_t n = write(fd, b.s + done, b.len - done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		bool ok = done == b.len;
		ok &= close(fd) == 0;
		if (!ok || renameat(dfd, tmp, dfd, name) != 0)
			unlinkat(dfd, tmp, 0);
	}
	if (dfd >= 0)
		close(dfd);
	mc_buf_free(&b);
	errno = saved;
}
