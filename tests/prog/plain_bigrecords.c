/*
 * plain_bigrecords.c - several processes whose report records are much
 * longer than PIPE_BUF, ending together (tests/test_output.c; issue 14,
 * item 9).  Not linked to memcheck.
 *
 * usage: plain_bigrecords N [PATHS]
 *   forks N children; every process (the parent too) leaks one 24-byte
 *   block from each of PATHS (256) distinct stacks (paths through two
 *   functions, eight calls deep, or as deep as PATHS's bits), so that
 *   with MEMCHECK_MAX_LEAKS=256 its process record lists 256 leaks: tens
 *   of kilobytes (PATHS 2048, MEMCHECK_MAX_LEAKS=2048: past 1 MiB).  The children wait for the
 *   parent's word, so that they all end at once, and the parent waits
 *   for them.  Exits 0.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stack_paths.h"

static void *volatile sink;

static void leak(void)
{
	sink = malloc(24);
	sink = NULL; /* lost: nothing points to it */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	unsigned paths = argc > 2 ? (unsigned)atoi(argv[2]) : 256;
	int depth = 8;
	while ((1u << depth) < paths)
		depth++;
	int go[2];
	if (pipe(go) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c < 0)
			return 2;
		if (c == 0) {
			close(go[1]);
			char x;
			if (read(go[0], &x, 1) < 0)
				_exit(2);
			for (unsigned path = 0; path < paths; path++)
				path_down(path, depth, leak);
			exit(0);
		}
	}
	close(go[0]);
	for (unsigned path = 0; path < paths; path++)
		path_down(path, depth, leak);
	close(go[1]); /* every child reads end-of-file at once */
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}
	return bad;
}
