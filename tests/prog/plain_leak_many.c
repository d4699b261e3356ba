/* Many blocks: 20,000 lost in 2,000 chains of 10, and 20,000 kept in
 * an array a global points to. */
#include "plain_leak_common.h"

void **volatile keep;

__attribute__((noinline)) static void lose(int chains, int len)
{
	for (int c = 0; c < chains; c++) {
		void **head = NULL;
		for (int i = 0; i < len; i++) {
			void **x = malloc(32);
			x[0] = head;
			x[1] = NULL;
			head = x;
		}
	}
}

int main(void)
{
	lose(2000, 10);
	keep = malloc(20000 * sizeof *keep);
	for (int i = 0; i < 20000; i++)
		keep[i] = calloc(1, 16 * (i % 8 + 1));
	scrub();
	return 0;
}
