/* A lost block that lies right after a reachable buffer, whose end
 * pointer (one past its last byte, as stdio's FILE and std::vector keep
 * one) therefore equals the lost block's start; and a lost block that
 * took the place of one just freed, whose address the allocator's
 * per-thread cache of freed blocks may still hold (jemalloc's tcache,
 * tcmalloc's and mimalloc's free lists).  valgrind keeps red zones
 * between blocks, so neither word points to the lost blocks there: both
 * are definitely lost, as they must be under every allocator.
 *
 * Under glibc no block starts where another's 256 bytes end (the chunk
 * header lies between): the first block simply stays lost.
 *
 * And what must stay reachable though it looks alike: a pair of pointers
 * to two blocks made one after the other (side by side under the other
 * allocators: the second's start is the first's end), and an array of
 * four such pointers. */
#include <unistd.h>

#include "plain_leak_common.h"

#define SIZE 256
#define TRIES 64

/* A buffer described the way stdio's FILE (_IO_buf_base, _IO_write_ptr,
 * _IO_buf_end) and libyaml's yaml_buffer_t describe theirs. */
struct buffer {
	char *start, *pointer, *last, *end;
};
struct buffer buf;
char *pair[2];
char *row[4];

/* One block of SIZE, kept nowhere: the one at buf.end if the allocator
 * hands one out there within TRIES, else the last tried.  The others are
 * freed. */
__attribute__((noinline)) static int lose_after_buffer(void)
{
	char *volatile tried[TRIES];
	int at = TRIES - 1;
	for (int i = 0; i < TRIES; i++) {
		tried[i] = malloc(SIZE);
		memset(tried[i], 1, SIZE);
		if (tried[i] == buf.end) {
			at = i;
			break;
		}
	}
	for (int i = 0; i < TRIES && i <= at; i++)
		if (i != at)
			free(tried[i]);
	memset((char *)tried, 0, sizeof tried);
	return at < TRIES - 1 || tried[0] == buf.end;
}

/* A block of 48 freed, and the next of its size lost. */
__attribute__((noinline)) static void lose_after_free(void)
{
	char *volatile a = malloc(48);
	memset(a, 2, 48);
	free(a);
	char *volatile b = malloc(48);
	memset(b, 3, 48);
	b = NULL;
	a = NULL;
}

int main(void)
{
	buf.start = malloc(SIZE);
	memset(buf.start, 0, SIZE);
	buf.pointer = buf.last = buf.start;
	buf.end = buf.start + SIZE;
	for (int i = 0; i < 2; i++)
		pair[i] = calloc(1, 64);
	for (int i = 0; i < 4; i++)
		row[i] = calloc(1, 64);
	int adjacent = lose_after_buffer();
	lose_after_free();
	scrub();
	/* what the test checks happened: under jemalloc, mimalloc and
	 * tcmalloc the blocks lie side by side */
	const char *say = adjacent ? "buffer: adjacent\n" : "buffer: apart\n";
	const char *pairs = pair[1] == pair[0] + 64 && row[3] == row[2] + 64 ? "pair: adjacent\n"
									   : "pair: apart\n";
	if (write(1, say, strlen(say)) < 0 || write(1, pairs, strlen(pairs)) < 0)
		return 1;
	return 0;
}
