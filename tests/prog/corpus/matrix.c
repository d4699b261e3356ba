/* A 2-D array as an array of row pointers: one matrix kept (all
 * reachable), one lost (the row array definite, its 40 rows indirect). */
#include "corpus.h"

double **kept;

__attribute__((noinline)) static double **matrix(int rows, int cols)
{
	double **m = malloc(rows * sizeof *m);
	for (int i = 0; i < rows; i++)
		m[i] = calloc(cols, sizeof **m);
	return m;
}

int main(void)
{
	kept = matrix(20, 10);
	USE(matrix(40, 5));
	return 0;
}
