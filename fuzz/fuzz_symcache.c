/*
 * fuzz_symcache.c - lib/symcache.c's reading of cache files
 * (memcheck-cache(5)) under libFuzzer (make fuzz, make fuzz-check).
 * Another process, a full disk or a hostile hand may have written
 * anything there; the parse must take only well-formed records.  Each
 * input is parsed as a file; besides what ASan and UBSan catch, it
 * checks the format's contract:
 *   - every record the parse takes lies within the input, its
 *     checksum right, its head one decode accepts, and decodes to
 *     nothing (its strings are checked when it is read) or to 1..max
 *     frames whose strings end within their fields, or (max 10,
 *     may_name's answers) to answers
 *     each 0 or 1, of a string of 1 to 255 bytes, lying within it, or
 *     (max 11, a file's .gnu_debuglink name) to a name of 1 to 255
 *     bytes without '/', its NUL the record's last byte;
 *   - encoding what it decoded gives the record's bytes back;
 *   - a quick frame read in place (mc_symcache_quick_view, as a warm
 *     process names its stacks) is the one decode gives, and is read
 *     only where decode reads one;
 *   - a record taken is taken again wherever it lies: after a prefix of
 *     the input's own bytes, the parse finds at least as many.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	const char *p;
	size_t len, n;
};

/* A name record's answers: each within its payload, in order. */
struct names {
	const char *p;
	size_t size, next;
	int n;
};

static void check_name(void *arg, uint64_t off, bool found, const char *s, size_t len, size_t at)
{
	struct names *w = arg;
	uint64_t o;
	memcpy(&o, w->p + at, 8);
	if (at != w->next || o != off || (unsigned char)w->p[at + 8] != found || len < 1 ||
	    len > MC_SYMCACHE_NAME_LEN || s != w->p + at + 10 || at + 10 + len > w->size)
		abort();
	w->next = at + 10 + len;
	w->n++;
}

static void check(void *arg, uint64_t off, int max, size_t at, size_t size)
{
	struct walk *w = arg;
	if (at < 12 || at > w->len || size > w->len - at)
		abort();                          /* outside the input */
	uint32_t sum;
	memcpy(&sum, w->p + at - 4, 4);
	if (mc_symcache_sum(w->p + at, size) != sum)
		abort();                          /* taken with a wrong checksum */
	static struct mc_frame_info f[MC_SYMCACHE_QUICK];
	uint64_t o;
	int m;
	if (max == MC_SYMCACHE_NAME) {
		struct names nw = { w->p + at, size, 12, 0 };
		int n = mc_symcache_names_each(w->p + at, size, check_name, &nw);
		if (n < 1 || n != nw.n || nw.next != size || off != 0 ||
		    mc_symcache_decode(w->p + at, size, &o, &m, NULL, 0) != n || m != max)
			abort();
		char *nrec = malloc(size + 12);
		if (!nrec)
			return;
		size_t len = mc_symcache_names_encode(nrec, size + 12, w->p + at + 12, size - 12, n);
		if (len != size + 12 || memcmp(nrec, w->p + at - 12, len) != 0)
			abort();                  /* not what was written */
		free(nrec);
		w->n++;
		return;
	}
	if (max == MC_SYMCACHE_LINK) {
		const char *link = mc_symcache_link_view(w->p + at, size);
		static char lrec[24 + MC_SYMCACHE_LINK_LEN + 1];
		if (!link || off != 0 || link != w->p + at + 12 || strlen(link) != size - 13 ||
		    strchr(link, '/') || mc_symcache_decode(w->p + at, size, &o, &m, f, 1) != 0 ||
		    mc_symcache_link_encode(lrec, sizeof lrec, link) != size + 12 ||
		    memcmp(lrec, w->p + at - 12, size + 12) != 0)
			abort();
		w->n++;
		return;
	}
	int n = mc_symcache_decode(w->p + at, size, &o, &m, f, MC_SYMCACHE_QUICK);
	/* the quick frame in place: what decode gives, or nothing where
	 * decode gives nothing */
	int32_t line;
	const char *vs[3];
	size_t vl[3];
	bool view = mc_symcache_quick_view(w->p + at, size, &line, vs, vl);
	if (view != (max == MC_SYMCACHE_QUICK && n == 1))
		abort();
	if (view && (line != f[0].line || vl[0] != strlen(f[0].function) ||
		     memcmp(vs[0], f[0].function, vl[0] + 1) != 0 ||
		     vl[1] != strlen(f[0].linkage) || memcmp(vs[1], f[0].linkage, vl[1] + 1) != 0 ||
		     vl[2] != strlen(f[0].file) || memcmp(vs[2], f[0].file, vl[2] + 1) != 0))
		abort();
	uint16_t hm, hn;
	memcpy(&hm, w->p + at + 8, 2);
	memcpy(&hn, w->p + at + 10, 2);
	if (size < 12 || hm != max || !hn || hn > hm || max > MC_SYMCACHE_QUICK)
		abort();                          /* a head decode refuses */
	if (!n) {
		/* its strings damaged under a good checksum: the look-up
		 * that reads it decodes it and answers nothing */
		w->n++;
		return;
	}
	if (n > m || o != off || m != max)
		abort();
	for (int i = 0; i < n; i++)
		if (!memchr(f[i].function, 0, sizeof f[i].function) ||
		    !memchr(f[i].linkage, 0, sizeof f[i].linkage) ||
		    !memchr(f[i].file, 0, sizeof f[i].file) || f[i].line < 0)
			abort();                  /* a string past its field */
	static char rec[12 + 12 + MC_SYMCACHE_QUICK * (4 + 128 + 128 + 256)];
	size_t len = mc_symcache_encode(rec, sizeof rec, o, m, f, n);
	if (len != size + 12 || memcmp(rec, w->p + at - 12, len) != 0)
		abort();                          /* not what was written */
	w->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct walk w = { (const char *)data, size, 0 };
	size_t got = mc_symcache_parse(w.p, size, check, &w);
	if (got != w.n)
		abort();
	/* The same bytes after a prefix of 0..3 of the input's own bytes. */
	char *moved = malloc(size + 3);
	if (!moved)
		return 0;
	size_t pre = size ? data[0] % 4 : 0;
	memcpy(moved, data, pre < size ? pre : size);
	memcpy(moved + pre, data, size);
	struct walk w2 = { moved, size + pre, 0 };
	if (mc_symcache_parse(moved, size + pre, check, &w2) < got)
		abort();
	free(moved);
	return 0;
}
