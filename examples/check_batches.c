/*
 * check_batches.c - the allocator-swap demo: the same suite, the same
 * code, and one allocator that needs four times the memory.
 *
 * The code under test processes batches of records of one size each and
 * keeps a small sample of every batch (one record in every 64 KiB of
 * it), freeing the rest: think of a parser that interns a few strings
 * per document.  glibc coalesces the freed records and reuses the space
 * for the next batch, whatever its size.  Allocators that segregate
 * sizes into pages can reuse a page only for its own size, and only once
 * it is empty: one kept record pins it.  jemalloc's and tcmalloc's small
 * size classes live in 4-8 KiB slabs and spans, so most of them empty
 * out; mimalloc's live in 64 KiB pages, so nearly all stay pinned.
 * `make demo` runs this suite under all four allocators against
 * examples/memcheck.budget, whose relative limit catches exactly that.
 */
#include <stdlib.h>
#include <string.h>

#include <memcheck/check.h>

#define BATCH_BYTES (24u << 20)
#define SAMPLE_EVERY_BYTES (64u << 10)

struct sample {
	void **kept;
	size_t n;
};

/* Allocate a batch of records of one size, keep one per 64 KiB of them,
 * free the rest. */
static int run_batch(size_t size, struct sample *s)
{
	size_t n = BATCH_BYTES / size, every = SAMPLE_EVERY_BYTES / size;
	void **recs = malloc(n * sizeof *recs);
	s->kept = malloc((n / every + 1) * sizeof *s->kept);
	s->n = 0;
	if (!recs || !s->kept) {
		free(recs);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		recs[i] = malloc(size);
		if (!recs[i])
			return -1;
		memset(recs[i], (int)i, size);
	}
	for (size_t i = 0; i < n; i++) {
		if (i % every == 0)
			s->kept[s->n++] = recs[i];
		else
			free(recs[i]);
	}
	free(recs);
	return 0;
}

static void drop_sample(struct sample *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->kept[i]);
	free(s->kept);
}

START_TEST(keeps_a_sample_of_each_batch)
{
	static const size_t sizes[] = { 32, 48, 64, 96, 128, 192, 256 };
	struct sample samples[sizeof sizes / sizeof *sizes];
	int rc = 0;
	for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
		rc |= run_batch(sizes[b], &samples[b]);
	ck_assert_int_eq(rc, 0);
	for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
		drop_sample(&samples[b]);
}
END_TEST

/* One size only: every allocator reuses its own pages here. */
START_TEST(one_batch_size)
{
	struct sample s;
	ck_assert_int_eq(run_batch(64, &s), 0);
	drop_sample(&s);
}
END_TEST

static Suite *batches_suite(void)
{
	Suite *s = suite_create("batches");
	TCase *tc = tcase_create("core");
	memcheck_tcase(tc);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, keeps_a_sample_of_each_batch);
	tcase_add_test(tc, one_batch_size);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(batches_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
