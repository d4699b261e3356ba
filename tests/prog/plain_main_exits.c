/* The main thread leaves by pthread_exit; the process ends when its other
 * thread returns (the C library then calls exit from that thread).  By
 * then the main thread is gone, and /proc/self (its directory) has no
 * memory: its maps read empty and its status has no VmRSS.  memcheck read
 * them there, and named no frame (the program's own were ???), said the
 * RSS at the end was unknown, and failed the process on blocks the
 * dynamic linker keeps (their stacks unnamed, no suppression matched).
 * Now each lost block is named, as valgrind names it. */
#include <pthread.h>
#include <unistd.h>

#include "plain_leak_common.h"

void *kept;

static void *worker(void *arg)
{
	(void)arg;
	usleep(20000); /* the main thread gone first */
	char *volatile lost = malloc(61);
	memset(lost, 0, 61);
	lost = NULL;
	kept = malloc(29);
	scrub();
	return NULL;
}

int main(void)
{
	pthread_t t;
	char *volatile lost = malloc(17);
	memset(lost, 0, 17);
	lost = NULL;
	pthread_create(&t, NULL, worker, NULL);
	pthread_exit(NULL);
}
