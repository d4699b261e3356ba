/*
 * fuzz_suppcache.c - lib/suppcache.c's reading of the cache's
 * suppression file (memcheck-cache(5), supp-HASH) and suppress.c's
 * taking of the parsed entries' image, under libFuzzer (make fuzz, make
 * fuzz-check).  Another process, a full disk or a hostile hand may have
 * written anything there; a file that is taken must give a set whose
 * every entry, frame and string lies within the input.  Each input is
 * read as a whole file, its key taken from itself (the key a process
 * would compare), its checksum mended in most, its notes not stat'ed;
 * besides what ASan and UBSan
 * catch, it checks the contract:
 *   - every entry of a set taken names a string, a file and a line,
 *     and the set matches a stack without a fault;
 *   - the set written again (mc_supp_image_put) and taken again gives
 *     the same entries;
 *   - the verdict records after the set are walked (each within the
 *     input, its checksum checked) without a fault, and no more of
 *     them are valid than fit.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* one frame, named after the input's first bytes */
static const struct mc_frame_info *frame(void *arg, int i)
{
	static struct mc_frame_info f;
	if (i > 0)
		return NULL;
	memset(&f, 0, sizeof f);
	memcpy(f.function, arg, 8);
	memcpy(f.linkage, arg, 8);
	return &f;
}

static void same(const struct mc_supps *a, const struct mc_supps *b)
{
	if (mc_supp_count(a) != mc_supp_count(b) || mc_supp_others(a) != mc_supp_others(b))
		abort();
	for (size_t i = 0; i < mc_supp_count(a); i++) {
		const char *fa, *fb;
		int la, lb, nla, nlb;
		const char *na = mc_supp_name(a, i, &fa, &la, &nla),
			   *nb = mc_supp_name(b, i, &fb, &lb, &nlb);
		/* the name's line too: valgrind's used_suppression line names it */
		if (strcmp(na, nb) != 0 || strcmp(fa, fb) != 0 || la != lb || nla != nlb)
			abort();
	}
}

/* Where the set ends and the verdict records begin (memcheck-cache(5)),
 * or 0 past the input. */
static size_t set_end(const char *p, size_t size)
{
	uint32_t keylen;
	uint64_t notes, image;
	memcpy(&keylen, p + 8, 4);
	memcpy(&notes, p + 16, 8);
	memcpy(&image, p + 24, 8);
	if (notes > size || image > size)
		return 0;
	size_t img = (40 + (((size_t)keylen + 7) & ~(size_t)7) + notes + 15) & ~(size_t)15;
	return img <= size && image <= size - img ? img + image : 0;
}

/* memcheck-cache(5)'s checksum (over the set), mended into most inputs
 * (the low bit of their sixth byte clear) so that the fuzzer reaches
 * what lies behind it */
static void mend(char *p, size_t size)
{
	size_t end = set_end(p, size);
	uint64_t h = mc_suppcache_sum(p + 40, (end ? end : size) - 40);
	memcpy(p + 32, &h, 8);
}

/* suppcache.c's look-ups of verdicts name their stacks through
 * symbolize.c, which this target does not link: the file's decoding
 * never asks. */
bool mc_symbolize_verdict_key(const uintptr_t *pcs, int n, struct mc_buf *a, struct mc_buf *links)
{
	(void)pcs;
	(void)n;
	(void)a;
	(void)links;
	abort();
}

uint64_t mc_symbolize_verdict_hash(const char *key, size_t len)
{
	(void)key;
	(void)len;
	abort();
}

bool mc_symbolize_verdict_stack(int kind, const uintptr_t *pcs, int n,
				struct mc_verdict_stack *s)
{
	(void)kind;
	(void)pcs;
	(void)n;
	(void)s;
	abort();
}

bool mc_symbolize_verdict_holds(const struct mc_verdict_stack *s, const char *key, size_t len,
				const char *links, size_t llen)
{
	(void)s;
	(void)key;
	(void)len;
	(void)links;
	(void)llen;
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 40 || size > (1u << 20))
		return 0;
	uint32_t keylen;
	memcpy(&keylen, data + 8, 4);
	if (keylen > size - 40)
		return 0;
	/* an exact-size, 16-aligned copy: ASan sees reads past the input */
	char *p = aligned_alloc(16, (size + 15) & ~(size_t)15);
	char *key = malloc(keylen + 1);
	if (!p || !key) {
		free(p);
		free(key);
		return 0;
	}
	memcpy(p, data, size);
	if (!(data[5] & 1))
		mend(p, size);
	memcpy(key, data + 40, keylen);
	char *orig = malloc(size);
	if (orig)
		memcpy(orig, data, size);
	struct mc_supps *s = mc_suppcache_decode(p, size, 0, key, keylen, false);
	size_t end = set_end(p, size);
	if (end && end % 8 == 0) {
		/* stamped as the first record says: its sum is then checked */
		uint64_t set, ino = 0;
		memcpy(&set, p + 32, 8);
		if (size - end >= 24)
			memcpy(&ino, p + end + 16, 8);
		size_t n = mc_suppcache_verdicts_count(p + end, size - end, set, ino);
		if (n > (size - end) / 56)   /* a record: its 56-byte head at least */
			abort();
	}
	if (s && orig) {
		char name[8] = "malloc";
		struct mc_supp_stack st = { .frame = frame, .arg = name };
		for (int kind = 0; kind < 4; kind++)
			(void)mc_supp_match(s, kind, &st, "/lib/libmemcheck.so");
		for (size_t i = 0; i < mc_supp_count(s); i++) {
			const char *file;
			int line;
			const char *n = mc_supp_name(s, i, &file, &line, NULL);
			if (!n || !file || strlen(n) > size || strlen(file) > size)
				abort();
		}
		struct mc_buf b = { 0 };
		if (!mc_supp_image_put(s, &b, SIZE_MAX))
			abort();
		char *again = aligned_alloc(16, (b.len + 15) & ~(size_t)15);
		if (again) {
			memcpy(again, b.s, b.len);
			struct mc_supps *t = mc_supp_image_take(again, b.len, NULL, 0);
			if (!t)
				abort();           /* what it wrote, not taken */
			same(s, t);
			mc_supp_free(t);
			free(again);
		}
		mc_buf_free(&b);
	}
	mc_supp_free(s);
	free(orig);
	free(key);
	free(p);
	return 0;
}
