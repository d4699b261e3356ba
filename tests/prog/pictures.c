/*
 * pictures.c - nested regions whose peaks are known site by site, for
 * the peak snapshot across region begins and ends (tests/test_pictures.c).
 *
 *   pictures nested   "below" (an inner region that stays under the outer
 *                     region's peak, so the outer's snapshot must survive
 *                     the inner's) and "above" (an inner region that
 *                     raises the outer's peak, which must take the
 *                     inner's snapshot)
 *   pictures name     one region whose name is markup, for the escaping
 *                     of the HTML report
 *   pictures parse    region "parse": a recursive parser's leaf (LEAF_LINE)
 *                     reached by 40 stacks, 1,000 bytes each (40,000
 *                     bytes in 40 blocks), one line of a single 20,000
 *                     byte block (BIG_LINE), and 12 lines of a 1,500
 *                     byte block each (decoy_0 ... decoy_11): every
 *                     decoy stack is larger than each of the leaf's
 *                     stacks, so the 10 largest stacks would hold none
 *                     of the leaf's; the 10 largest lines are the leaf
 *                     with all 40, the big block, 8 decoys
 *
 * Sites: site_x 100 blocks of 1,000 bytes, site_y 20 of 1,000, site_z
 * 200 of 1,000, each freed before its function returns.
 */
#include <stdlib.h>
#include <string.h>

#include "memcheck/memcheck.h"

static __attribute__((noinline)) void make_and_free(int n)
{
	void *v[200];
	for (int i = 0; i < n; i++)
		memset(v[i] = malloc(1000), 1, 1000);
	for (int i = 0; i < n; i++)
		free(v[i]);
}

static __attribute__((noinline)) void site_x(void) { make_and_free(100); }
static __attribute__((noinline)) void site_y(void) { make_and_free(20); }
static __attribute__((noinline)) void site_z(void) { make_and_free(200); }

#define PATHS 40
#define LEVELS 6
static void *kept[PATHS + 1 + 12];
static int nkept;

static void descend(unsigned path, int level);

static __attribute__((noinline)) void leaf(void)
{
	kept[nkept++] = malloc(1000); /* LEAF_LINE */
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void left(unsigned path, int level)
{
	descend(path, level - 1);
	__asm__ volatile("" ::: "memory"); /* a call, not a jump: a frame of its own */
}

static __attribute__((noinline)) void right(unsigned path, int level)
{
	descend(path, level - 1);
	__asm__ volatile("" ::: "memory");
}

/* Each path's bits pick left or right at each level: 40 stacks of leaf. */
static __attribute__((noinline)) void descend(unsigned path, int level)
{
	if (level == 0)
		leaf();
	else if (path >> (level - 1) & 1)
		right(path, level);
	else
		left(path, level);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void big(void)
{
	kept[nkept++] = malloc(20000); /* BIG_LINE */
}

/* twelve lines, one block each */
#define DECOY(k) static __attribute__((noinline)) void decoy_##k(void) { kept[nkept++] = malloc(1500); }
DECOY(0)
DECOY(1)
DECOY(2)
DECOY(3)
DECOY(4)
DECOY(5)
DECOY(6)
DECOY(7)
DECOY(8)
DECOY(9)
DECOY(10)
DECOY(11)

static int parse(void)
{
	memcheck_begin("parse");
	for (unsigned p = 0; p < PATHS; p++)
		descend(p, LEVELS);
	big();
	void (*decoys[])(void) = { decoy_0, decoy_1, decoy_2, decoy_3, decoy_4, decoy_5,
				   decoy_6, decoy_7, decoy_8, decoy_9, decoy_10, decoy_11 };
	for (size_t k = 0; k < sizeof decoys / sizeof decoys[0]; k++)
		decoys[k]();
	for (int k = 0; k < nkept; k++)
		free(kept[k]);
	return memcheck_end(NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "parse") == 0)
		return parse();
	if (argc > 1 && strcmp(argv[1], "name") == 0) {
		memcheck_begin("<img src=x onerror=alert(1)>&\"'</td>");
		site_y();
		return memcheck_end(NULL);
	}
	int rc = 0;
	memcheck_begin("below");
	site_x();
	memcheck_begin("below.inner");
	site_y();
	rc |= memcheck_end(NULL);
	rc |= memcheck_end(NULL);
	memcheck_begin("above");
	site_x();
	memcheck_begin("above.inner");
	site_z();
	rc |= memcheck_end(NULL);
	rc |= memcheck_end(NULL);
	return rc;
}
