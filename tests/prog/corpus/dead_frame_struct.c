/* A struct on the stack in a dead frame: a function builds a request
 * on its stack, with pointers to three blocks, frees one and returns;
 * the other two are lost.  A deeper call later reserves the same stack
 * without writing it and calls exit from there. */
#include <unistd.h>
#include "corpus.h"

struct request {
	char *url, *body, *hdr;
	long flags[4];
};

__attribute__((noinline)) static void handle(void)
{
	volatile struct request rq = { 0 };
	rq.url = malloc(64);
	rq.body = malloc(128);
	rq.hdr = malloc(32);
	free(rq.hdr);
}

__attribute__((noinline)) static void finish(int n)
{
	char big[512];
	if (n)
		big[n] = 0;
	USE(big);
	exit(0);
}

int main(int argc, char **argv)
{
	(void)argv;
	handle();
	finish(argc > 5);
	return 0;
}
