/*
 * plain_noisy.c - a program whose memory is not the same from one run to
 * the next, as under an allocator that gives memory back on a timer: the
 * n-th run allocates n times 2048 blocks of 4 KiB (8, 16, 24 MiB ...),
 * writes them and frees them, so its peak RSS, its retained memory and
 * its allocation count all grow with n.  Not linked to memcheck.
 *
 * usage: plain_noisy COUNTER_FILE
 *   COUNTER_FILE holds how many runs came before (absent: none); each
 *   run adds one.  Every third run starts again at 1, so runs 1-3 give
 *   8, 16 and 24 MiB whatever order a test reads them in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096
#define PER_STEP 2048

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int n = 0;
	FILE *f = fopen(argv[1], "r");
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", n + 1);
	fclose(f);
	size_t count = (size_t)(n % 3 + 1) * PER_STEP;
	void **v = malloc(count * sizeof *v);
	if (!v)
		return 2;
	for (size_t i = 0; i < count; i++) {
		v[i] = malloc(BLOCK);
		if (!v[i])
			return 2;
		memset(v[i], (int)i, BLOCK);
	}
	for (size_t i = 0; i < count; i++)
		free(v[i]);
	free(v);
	return 0;
}
