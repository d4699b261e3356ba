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

int main(int argc, char **argv)
{
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
