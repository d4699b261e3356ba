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
 * allocators: the second's start is the first's end), an array of
 * four such pointers, and a set laid out as GLib's hash table keeps one
 * (keys, hashes, values == keys; keys and hashes made one after the
 * other, upwards under jemalloc and mimalloc, downwards under tcmalloc):
 * memcheck took the middle word, or the first, for the end of the
 * block before it and said hashes, or keys, was definitely lost. */
#include <stdint.h>
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

/* GLib 2.74's GHashTable: counts, then keys, hashes, values. */
struct set {
	int size, mod;
	unsigned mask, nnodes, noccupied, flags;
	void *keys;
	unsigned *hashes;
	void *values;
};
struct set set;

/* keys and hashes of 8 entries side by side, either way round, if the
 * allocator hands two out so within TRIES; the others tried are freed. */
__attribute__((noinline)) static int set_new(void)
{
	void *tried[2 * TRIES];
	int n = 0, adjacent = 0;
	while (n < 2 * TRIES) {
		tried[n] = calloc(8, sizeof(unsigned));
		tried[n + 1] = calloc(8, sizeof(unsigned));
		n += 2;
		uintptr_t k = (uintptr_t)tried[n - 2], h = (uintptr_t)tried[n - 1];
		if ((adjacent = k + 32 == h || h + 32 == k))
			break;
	}
	for (int i = 0; i < n - 2; i++)
		free(tried[i]);
	set.size = 8;
	set.mod = 7;
	set.mask = 7;
	set.keys = set.values = tried[n - 2];
	set.hashes = tried[n - 1];
	return adjacent;
}

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
	int set_adjacent = set_new();
	int adjacent = lose_after_buffer();
	lose_after_free();
	scrub();
	/* what the test checks happened: under jemalloc, mimalloc and
	 * tcmalloc the blocks lie side by side */
	const char *say = adjacent ? "buffer: adjacent\n" : "buffer: apart\n";
	const char *pairs = pair[1] == pair[0] + 64 && row[3] == row[2] + 64 ? "pair: adjacent\n"
									   : "pair: apart\n";
	const char *sets = set_adjacent ? "set: adjacent\n" : "set: apart\n";
	if (write(1, say, strlen(say)) < 0 || write(1, pairs, strlen(pairs)) < 0 ||
	    write(1, sets, strlen(sets)) < 0)
		return 1;
	return 0;
}
