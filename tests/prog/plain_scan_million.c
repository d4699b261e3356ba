/* A heap of a million live blocks for the scan's time (test_leakkinds):
 * half kept in an array a global points to, half lost in chains of 10. */
#include <stdlib.h>

void **volatile keep;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000000;
	keep = malloc((size_t)n / 2 * sizeof *keep);
	for (int i = 0; i < n / 2; i++) {
		void **x = malloc(16 * (size_t)(i % 4 + 1));
		x[0] = NULL;
		keep[i] = x;
	}
	for (int c = 0; c < n / 20; c++) {
		void **head = NULL;
		for (int i = 0; i < 10; i++) {
			void **x = malloc(32);
			x[0] = head;
			x[1] = NULL;
			head = x;
		}
	}
	return 0;
}
