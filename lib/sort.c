/*
 * sort.c - mc_sort, a stable sort without malloc, for the leak records
 * and the ranges left out (qsort may call malloc: see below).
 */
#include <string.h>

#include "internal.h"

/* ---- a sort without malloc ----------------------------------------------
 * qsort may call malloc: glibc's merge sort takes its buffer from the
 * heap above 1 KiB of elements (region.c's leak records past 42), the
 * program's allocator called from inside memcheck's report, mid-run
 * under memcheck_end.  Stable, as glibc's merge sort is (region.c's
 * records tie where one stack left as many bytes in as many blocks of
 * two kinds: their order is the slots', as it was): insertion sort up to
 * SORT_RUN elements, else runs of SORT_RUN merged through a scratch copy
 * from mc_map (memcheck's own memory), or insertion sort throughout if
 * none can be had.  Any element size: one of up to 64 bytes is moved
 * into place through a copy on the stack, a larger one by swaps with its
 * neighbour (until session 26 a larger one was left unsorted, silently:
 * the callers' were 16 and 24 bytes). */
#define SORT_RUN 16
#define SORT_HELD 64

/* a and b's size bytes exchanged, SORT_HELD at a time. */
static void sort_swap(char *a, char *b, size_t size)
{
	char t[SORT_HELD];
	for (size_t o = 0; o < size; o += SORT_HELD) {
		size_t k = size - o < SORT_HELD ? size - o : SORT_HELD;
		memcpy(t, a + o, k);
		memcpy(a + o, b + o, k);
		memcpy(b + o, t, k);
	}
}

static void sort_insert(char *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char x[SORT_HELD];
	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		while (j && cmp(v + (j - 1) * size, v + i * size) > 0)
			j--;
		if (j == i)
			continue;
		if (size > SORT_HELD) {
			/* element i down to j by swaps: the elements between
			 * keep their order (stable) */
			for (size_t k = i; k > j; k--)
				sort_swap(v + (k - 1) * size, v + k * size, size);
			continue;
		}
		memcpy(x, v + i * size, size);
		memmove(v + (j + 1) * size, v + j * size, (i - j) * size);
		memcpy(v + j * size, x, size);
	}
}

void mc_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *v = base;
	if (n < 2 || !size)
		return;
	char *tmp = n > SORT_RUN ? mc_map(n * size) : NULL;
	if (!tmp) {
		sort_insert(v, n, size, cmp);
		return;
	}
	for (size_t i = 0; i < n; i += SORT_RUN)
		sort_insert(v + i * size, n - i < SORT_RUN ? n - i : SORT_RUN, size, cmp);
	char *src = v, *dst = tmp;
	for (size_t w = SORT_RUN; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, o = lo;
			/* the left run's element first where equal: stable */
			while (a < mid && b < hi)
				memcpy(dst + o++ * size,
				       cmp(src + a * size, src + b * size) <= 0 ? src + a++ * size :
										  src + b++ * size,
				       size);
			memcpy(dst + o * size, src + a * size, (mid - a) * size);
			o += mid - a;
			memcpy(dst + o * size, src + b * size, (hi - b) * size);
		}
		char *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * size);
	mc_unmap(tmp, n * size);
}
