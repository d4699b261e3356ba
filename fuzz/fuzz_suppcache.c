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
 *     the same entries.
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
		int la, lb;
		const char *na = mc_supp_name(a, i, &fa, &la), *nb = mc_supp_name(b, i, &fb, &lb);
		if (strcmp(na, nb) != 0 || strcmp(fa, fb) != 0 || la != lb)
			abort();
	}
}

/* memcheck-cache(5)'s checksum, mended into most inputs (the low bit of
 * their sixth byte clear) so that the fuzzer reaches what lies behind it */
static void mend(char *p, size_t size)
{
	uint64_t h = mc_suppcache_sum(p + 40, size - 40);
	memcpy(p + 32, &h, 8);
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
	if (s && orig) {
		char name[8] = "malloc";
		struct mc_supp_stack st = { .frame = frame, .arg = name };
		for (int kind = 0; kind < 4; kind++)
			(void)mc_supp_match(s, kind, &st, "/lib/libmemcheck.so");
		for (size_t i = 0; i < mc_supp_count(s); i++) {
			const char *file;
			int line;
			const char *n = mc_supp_name(s, i, &file, &line);
			if (!n || !file || strlen(n) > size || strlen(file) > size)
				abort();
		}
		struct mc_buf b = { 0 };
		if (!mc_supp_image_put(s, &b))
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
