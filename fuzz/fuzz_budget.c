/*
 * fuzz_budget.c - lib/budget.c and lib/budget_check.c under libFuzzer
 * (make fuzz, make fuzz-check).  The budget parser is written by hand
 * (budget.c says why); this is what keeps it honest.  Each input is parsed as a budget
 * file and, when it parses, checked against results at the edges of
 * every figure, under several region names and allocators, into output
 * buffers of several sizes.  Besides what ASan and UBSan catch, it
 * checks the parser's contract:
 *   - a budget that does not parse has an error, every line of it
 *     "NAME:" something, NUL-terminated within the buffer;
 *   - one that parses leaves the error empty;
 *   - the answer does not depend on the size of the error buffer;
 *   - mc_budget_check never writes past its buffer, keeps it a string,
 *     keeps what was there, and counts the same violations whatever the
 *     buffer's size.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay: the seed
 * corpus under any compiler, no libFuzzer needed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.budget"

static void check_error(const char *err, size_t errlen)
{
	size_t len = strnlen(err, errlen);
	if (len == errlen)
		abort();                          /* not NUL-terminated */
	if (errlen > sizeof NAME && strncmp(err, NAME, sizeof NAME - 1) != 0)
		abort();                          /* the first line names the file */
	for (const char *nl = strchr(err, '\n'); nl; nl = strchr(nl + 1, '\n'))
		if (strncmp(nl + 1, NAME, sizeof NAME - 1) != 0)
			abort();                  /* so does every other line */
}

static struct memcheck_result results[6];
static struct memcheck_result *baselines[4];

static void set_all(struct memcheck_result *r, uint64_t v, double s)
{
	struct memcheck_count c = { v, v };
	r->allocs = r->frees = r->reallocs = r->failed_allocs = v;
	r->bytes_allocated = r->bytes_freed = v;
	r->live_blocks = r->live_bytes = r->peak_live_bytes = v;
	r->definitely_lost = r->indirectly_lost = r->possibly_lost = c;
	r->still_reachable = r->suppressed = c;
	r->double_frees = r->invalid_frees = v;
	r->retained_bytes = r->retained_after_release = v;
	r->rss_begin = r->rss_end = r->peak_rss = v;
	r->seconds = s;
}

static void init(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	set_all(&results[0], 0, 0);
	set_all(&results[1], MEMCHECK_UNKNOWN, NAN);
	set_all(&results[2], MEMCHECK_UNKNOWN - 1, INFINITY);
	set_all(&results[3], 100u << 20, 1.5);
	set_all(&results[4], 1, -1);
	set_all(&results[5], 123456789, 1e-9);
	results[3].definitely_lost.blocks = 0;
	results[5].peak_rss = MEMCHECK_UNKNOWN;
	baselines[0] = NULL;
	baselines[1] = &results[3];
	baselines[2] = &results[1];
	baselines[3] = &results[0];
}

/* Every allocator with every result, and every baseline with some: speed
 * counts for a fuzzer. */
static void check_budget(const struct mc_budget *b, const char *region)
{
	static const char *const allocators[] = {
		"glibc", "mimalloc", "jemalloc", "tcmalloc", "/usr/lib/libhoard.so", NULL,
	};
	for (size_t a = 0; a < MC_ARRAY_SIZE(allocators); a++) {
		for (size_t r = 0; r < MC_ARRAY_SIZE(results); r++) {
			const struct memcheck_result *base =
				baselines[(a + r) % MC_ARRAY_SIZE(baselines)];
			char big[4096 + 8], small[40 + 8];
			memset(big, 'Z', sizeof big);
			memset(small, 'Z', sizeof small);
			big[0] = 0;
			strcpy(small, "prior");
			int n = mc_budget_check(b, region, allocators[a], &results[r], base,
						big, 4096);
			int m = mc_budget_check(b, region, allocators[a], &results[r], base,
						small, 40);
			if (n < 0 || n != m)
				abort();          /* the count depends on the buffer */
			if (!memchr(big, 0, 4096) || big[4096] != 'Z')
				abort();          /* not a string, or written past */
			if (!memchr(small, 0, 40) || small[40] != 'Z' ||
			    strncmp(small, "prior", 5) != 0)
				abort();          /* the same, or lost what was there */
			if ((n == 0) != (big[0] == 0))
				abort();          /* a violation without a message */
			if (mc_budget_check(b, region, allocators[a], &results[r], base,
					    NULL, 0) != n)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	init();
	const char *text = (const char *)data;
	char err[1024 + 8], tiny[16 + 8];
	memset(err, 'Z', sizeof err);
	memset(tiny, 'Z', sizeof tiny);
	struct mc_budget *b = mc_budget_parse(text, size, NAME, err, 1024);
	struct mc_budget *c = mc_budget_parse(text, size, NAME, tiny, 16);
	if (err[1024] != 'Z' || tiny[16] != 'Z')
		abort();                          /* wrote past the buffer */
	if (!b != !c)
		abort();
	if (b) {
		if (err[0] || tiny[0])
			abort();
		if (!mc_budget_baseline(b) || !mc_budget_baseline(b)[0])
			abort();
		/* Region names: fixed ones, and the input's first line. */
		char first[160];
		const char *nl = memchr(text, '\n', size);
		size_t n = nl ? (size_t)(nl - text) : size;
		if (n >= sizeof first)
			n = sizeof first - 1;
		memcpy(first, text, n);
		first[n] = 0;
		static const char *const regions[] = { "parse_url", "a/b", NULL };
		for (size_t i = 0; i < MC_ARRAY_SIZE(regions); i++)
			check_budget(b, regions[i]);
		check_budget(b, first);
	} else {
		if (!err[0] || !tiny[0])
			abort();
		check_error(err, 1024);
		check_error(tiny, 16);
	}
	mc_budget_free(b);
	mc_budget_free(c);

	/* The input's first line as a key. */
	char key[64];
	const char *nl = memchr(text, '\n', size);
	size_t k = nl ? (size_t)(nl - text) : size;
	if (k > sizeof key - 1)
		k = sizeof key - 1;
	memcpy(key, text, k);
	key[k] = 0;
	uint64_t v;
	(void)mc_result_field(&results[3], key, &v);
	return 0;
}
