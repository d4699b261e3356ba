/* hold.c - a test that its driver times out: it holds N live blocks
 * (default 500,000), loses one, and waits for the driver's SIGTERM.
 * meson sends SIGKILL 0.5 s after it: memcheck writes the record first,
 * its scan given MEMCHECK_FATAL_SCAN_MS.  usage: t_hold [N] */
#include <stdlib.h>
#include <unistd.h>

static void **kept;
static void *volatile lost;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;
	kept = malloc((size_t)n * sizeof *kept);
	for (long i = 0; kept && i < n; i++)
		kept[i] = malloc(16 + (size_t)(i % 32));
	lost = malloc(40);
	lost = NULL;
	for (;;)
		pause();
}
