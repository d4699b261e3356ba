/*
 * plain_field40_sizes.c - one program a suite runs many times on inputs
 * of different sizes, as libtiff's tests run tiff2rgba 21 times (2.4 to
 * 100 MB peak RSS): it takes and touches argv[1] MiB, then frees it.
 * tests/test_field.c runs it small and then large under glibc for a
 * baseline report, and again under another allocator with a relative
 * peak_rss limit: the large run is to be compared with the large one.
 */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	char *p = malloc(mib << 20);
	if (!p)
		return 1;
	memset(p, 1, mib << 20);
	int ret = p[(mib << 20) - 1] != 1;
	free(p);
	return ret;
}
